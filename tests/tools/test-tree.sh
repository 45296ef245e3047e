#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/tools/test-tree.sh: the tree commands of safeopen (find, chown -R, chmod -R,
# du, cp -a) on the confined walk. On a quiet tree their results are those of
# GNU find, chown, chmod, du and cp -a; escapes are refused; and while an
# attacker exchanges a directory with a link to outside, moves a directory out
# of the root and back, or removes and recreates directories (inode numbers
# reused), nothing outside the root changes (mode, owner, change time of the
# victims) and no outside name is printed or copied. The attacker's rounds
# are counted and must be > 0.
set -u
: "${top_builddir:=.}"
SAFEOPEN=${SAFEOPEN:-"$top_builddir/tools/safeopen/safeopen"}
SWAP=${SWAP:-"$top_builddir/tests/tools/race-swap"}
# Each attacker runs while the commands run RUNS times (2 at the quick size,
# 20 under make check-long), then is stopped (SIGTERM; at most 30 s).
RUNS=2
[ -z "${SAFEOPEN_CHECK_LONG:-}" ] || RUNS=20
RACE_SECS=30
. "${top_srcdir:-.}/tests/harness/direct.sh"
. "${top_srcdir:-.}/tests/harness/partial.sh"
[ -x "$SAFEOPEN" ] || bail "test-tree: $SAFEOPEN not built"
direct_binary SAFEOPEN

T=$(mktemp -d "${TMPDIR:-/tmp}/test-tree.XXXXXX") || exit 99
pids=
trap 'for p in $pids; do kill "$p" 2>/dev/null; done; rm -rf "$T"' EXIT
umask 022
R=$T/root
O=$T/out

n=0
failed=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() { n=$((n + 1)); failed=$((failed + 1)); echo "not ok $n - $1"; }
check() { desc=$1; shift; if "$@"; then ok "$desc"; else not_ok "$desc"; fi; }
# Every process costs ~10 ms here: what the checks compare is read by the
# shell's builtins (no cmp, no grep), GNU find runs once for several
# expressions, and the outputs of a race are read once at its end.
# slurp FILE: s_all = FILE's text, exactly (no NUL bytes in it)
slurp() {
	s_all= s_l=
	while IFS= read -r s_l; do s_all="$s_all$s_l
"; done <"$1"
	s_all=$s_all$s_l
}
same() { # same DESC FILE1 FILE2
	slurp "$2"; s_want=$s_all; slurp "$3"
	if [ "$s_all" = "$s_want" ]; then ok "$1"; else
		not_ok "$1"; diff "$2" "$3" | head -10 | sed 's/^/#   /'; fi
}
# split FILE: FILE's lines "KEY|TEXT" into the files $T/want.KEY (TEXT lines)
split() {
	sp_keys=
	while IFS= read -r sp_l; do
		sp_k=${sp_l%%|*}
		case " $sp_keys " in *" $sp_k "*) ;; *) sp_keys="$sp_keys $sp_k"; : >"$T/want.$sp_k" ;; esac
		printf '%s\n' "${sp_l#*|}" >>"$T/want.$sp_k"
	done <"$1"
}
uid=$(id -u)

# ---------------------------------------------------------------- a quiet tree
mkdir -p "$R/t/a/b/c" "$R/t/e" "$R/t/s p a c e" "$O"
printf 'one\n' >"$R/t/a/f1"
head -c 70000 /dev/zero >"$R/t/a/b/big"
printf 'x\n' >"$R/t/a/b/c/x.log"
printf 'y\n' >"$R/t/e/y.log"
printf 'z\n' >"$R/t/s p a c e/z"
ln "$R/t/a/f1" "$R/t/a/b/hard"
ln -s ../../../out "$R/t/a/up"
ln -s /etc "$R/t/abs"
mkfifo "$R/t/fifo"
chmod 0750 "$R/t/e"
printf 'w\n' >"$R/t/e/w" # a mode the umask (022 here) would narrow: cp -a keeps it
chmod 0666 "$R/t/e/w"
touch -d '2001-02-03 04:05:06' "$R/t/a/f1" "$R/t/e"
printf 'victim\n' >"$O/victim"
# as root, a file of another owner: cp -a must set it (the others are
# root's already, which a directory of the copy gives without fchown)
[ "$uid" -ne 0 ] || chown 65534:65534 "$R/t/e/w"
setfattr -n user.k -v v "$R/t/a/f1" 2>/dev/null && xattrs=yes || xattrs=no

# GNU find once for the six expressions (one walk, the same order as six),
# each line tagged with the expression's number
(cd "$R" && find t -printf '0|%p\n' , \( -type f -printf '1|%p\n' \) , \( -type d -printf '2|%p\n' \) , \
	\( -type l -printf '3|%p\n' \) , \( -name '*.log' -printf '4|%p\n' \) , \
	\( -type f -name 'x*' -printf '5|%p\n' \)) >"$T/want.all"
split "$T/want.all"
: >>"$T/want.3" >>"$T/want.4" >>"$T/want.5"
"$SAFEOPEN" "$R" find t >"$T/got"; rc=$?
check "find: exit 0" [ "$rc" -eq 0 ]
same "find: the entries and order of GNU find" "$T/want.0" "$T/got"
set -f # the patterns are find's
k=0
for args in "-type f" "-type d" "-type l" "-name *.log" "-type f -name x*"; do
	k=$((k + 1))
	# shellcheck disable=SC2086
	"$SAFEOPEN" "$R" find t $args >"$T/got"
	same "find t $args: as GNU find" "$T/want.$k" "$T/got"
done
set +f
(cd "$R" && find . -print0) >"$T/want"
"$SAFEOPEN" "$R" find -print0 >"$T/got"
same "find -print0 of the root: as GNU find ." "$T/want" "$T/got"
"$SAFEOPEN" "$R" find ../out >"$T/got" 2>"$T/err"; rc=$?
check "find ../out: refused (EXDEV), exit 1" [ "$rc" -eq 1 ] && grep -q EXDEV "$T/err"
"$SAFEOPEN" "$R" find t/a/up >"$T/got"
slurp "$T/got"
check "find of a link: the link only" [ "$s_all" = "t/a/up
" ]

(cd "$R" && du t) >"$T/want"
"$SAFEOPEN" "$R" du t >"$T/got"
same "du: as GNU du (hard links once)" "$T/want" "$T/got"
(cd "$R" && du -s t/a) >"$T/want"
"$SAFEOPEN" "$R" du -s t/a >"$T/got"
same "du -s: as GNU du -s" "$T/want" "$T/got"

# chmod -R: against GNU chmod on a copy (links left alone), fresh copies for
# each mode (all removed with $T); the modes of the eight trees by one find
k=0 trees=
for m in 0700 go-rwx u+rwX,g=rX,o= a+t; do
	k=$((k + 1)); cp -a "$R/t" "$T/c1.$k"; cp -a "$R/t" "$T/c2.$k"
	chmod -R "$m" "$T/c1.$k" 2>/dev/null
	"$SAFEOPEN" "$T" chmod -R "$m" "c2.$k"; eval "rc_$k=\$?"
	trees="$trees c1.$k c2.$k"
done
# shellcheck disable=SC2086 # the names have no blanks
(cd "$T" && find $trees ! -type l -printf '%H|%P %m\n') | sort >"$T/modes"
split "$T/modes"
k=0
for m in 0700 go-rwx u+rwX,g=rX,o= a+t; do
	k=$((k + 1)); eval "rc=\$rc_$k"
	same "chmod -R $m: as GNU chmod -R (exit $rc)" "$T/want.c1.$k" "$T/want.c2.$k"
done
check "chmod -R: the link's target outside untouched" [ "$(stat -c %a "$O/victim")" = 644 ]
"$SAFEOPEN" "$R" chmod -R 0777 t/a/up; rc=$?
check "chmod -R of a link: nothing changes, exit 0" \
	[ "$rc" -eq 0 ] && [ "$(stat -c %a "$O")" = 755 ]

if [ "$uid" -eq 0 ]; then
	rm -rf "$T/c1" "$T/c2"; cp -a "$R/t" "$T/c1"; cp -a "$R/t" "$T/c2"
	chown -R -h 65534:65534 "$T/c1"
	"$SAFEOPEN" "$T" chown -R 65534:65534 c2
	(cd "$T" && find c1 c2 -printf '%H|./%P %u %g\n') | sort >"$T/owners"
	split "$T/owners"
	same "chown -R: as GNU chown -R -h" "$T/want.c1" "$T/want.c2"
	check "chown -R: the link's target outside untouched" [ "$(stat -c %u "$O")" = 0 ]
else
	skip "chown -R against GNU chown (needs root)"
fi

# cp -a: against GNU cp -a.
rm -rf "$T/dst"; mkdir "$T/dst"
cp -a "$R/t" "$T/dst/gnu"
"$SAFEOPEN" cp -a "$R" t "$T/dst" copy; rc=$?
check "cp -a: exit 0" [ "$rc" -eq 0 ]
(cd "$T/dst" && find gnu copy -printf '%H|./%P %y %m %s %n %U %G %T@ %l\n') | sort >"$T/manifests"
split "$T/manifests"
same "cp -a: types, modes, sizes, link counts, owners, times, link bodies as GNU cp -a" \
	"$T/want.gnu" "$T/want.copy"
check "cp -a: contents" cmp -s "$R/t/a/b/big" "$T/dst/copy/a/b/big"
check "cp -a: hard links kept" \
	[ "$(stat -c %i "$T/dst/copy/a/f1")" = "$(stat -c %i "$T/dst/copy/a/b/hard")" ]
if [ $xattrs = yes ]; then
	check "cp -a: xattrs" [ "$(getfattr --only-values -n user.k "$T/dst/copy/a/f1" 2>/dev/null)" = v ]
else
	skip "cp -a xattrs (no user xattrs on $T)"
fi
"$SAFEOPEN" cp -a "$R" t "$T/dst" copy 2>"$T/err"; rc=$?
check "cp -a onto an existing DST: exit 1" [ "$rc" -eq 1 ]
"$SAFEOPEN" cp -a "$R" t "$T/dst" ../escape 2>"$T/err"; rc=$?
check "cp -a to ../escape: refused, nothing created" [ "$rc" -eq 1 ] && [ ! -e "$T/escape" ]
"$SAFEOPEN" cp -a "$R" ../out "$T/dst" o2 2>"$T/err"; rc=$?
check "cp -a from ../out: refused" [ "$rc" -eq 1 ] && [ ! -e "$T/dst/o2" ]

# ---------------------------------------------------------------- races
# The victims outside: mode, owner and change time (a chmod or chown, even to
# the same value, moves the change time).
victims() { stat -c '%n %a %u %g %z' "$O/victim" "$O/sub" "$O/sub/victim" "$O/moved/victim"; }
mkdir -p "$O/sub" "$O/moved"
printf 'v\n' >"$O/sub/victim"; printf 'v\n' >"$O/moved/victim"
rm -rf "$R/t"
mkdir -p "$R/t/s/dir" "$R/t/m/a/deep" "$R/t/r/x"
printf 'mine\n' >"$R/t/s/dir/mine"; printf 'mine\n' >"$R/t/m/a/deep/mine"
ln -s ../../../out/sub "$R/t/s/lnk"
victims >"$T/before"
# run_cmds: each command once, with the outputs kept for the checks (cp -a
# into $T/cp.$nrace/$runs, made before the race).
run_cmds() {
	"$SAFEOPEN" "$R" find t >>"$T/found" 2>/dev/null
	"$SAFEOPEN" "$R" chmod -R 0700 t 2>/dev/null
	"$SAFEOPEN" "$R" chmod -R go-rwx t 2>/dev/null
	[ "$uid" -ne 0 ] || "$SAFEOPEN" "$R" chown -R 65534:65534 t 2>/dev/null
	"$SAFEOPEN" cp -a "$R" t "$T/cp.$nrace/$runs" c 2>/dev/null
}
nrace=0
# cpdirs: the destinations of the next race's copies (before its attacker starts)
cpdirs() {
	nrace=$((nrace + 1)) c_list= c_i=0
	while [ $c_i -lt $RUNS ]; do c_list="$c_list $T/cp.$nrace/$c_i"; c_i=$((c_i + 1)); done
	# shellcheck disable=SC2086 # the names have no blanks
	mkdir -p $c_list
}
race() { # race NAME: run the commands RUNS times under the attacker ($apid), then stop it
	: >"$T/found"; runs=0
	while [ $runs -lt $RUNS ] && kill -0 "$apid" 2>/dev/null; do run_cmds; runs=$((runs + 1)); done
	kill -TERM "$apid" 2>/dev/null; wait "$apid"; pids=
	rounds=0; read -r rounds <"$T/rounds" 2>/dev/null
	check "$1: the attacker ran ($rounds rounds, $runs runs of the commands)" \
		[ "${rounds:-0}" -gt 0 ] && [ "$runs" -gt 0 ]
	victims >"$T/after"
	same "$1: nothing outside changed" "$T/before" "$T/after"
	slurp "$T/found"
	case $s_all in *victim*) printed=yes ;; *) printed= ;; esac
	check "$1: no outside name printed by find" [ -z "$printed" ]
	find "$T/cp.$nrace" -name victim >"$T/copied"
	check "$1: no outside file copied by cp -a" [ ! -s "$T/copied" ]
}

if [ -x "$SWAP" ]; then
	cpdirs
	"$SWAP" "$R/t/s" dir lnk $RACE_SECS >"$T/rounds" & apid=$!; pids=$apid
	race "link swap"
else
	skip "link swap race: tests/tools/race-swap not built"
fi

# The two attackers below are shell loops (a process per mv, rmdir,
# mkdir): at most $SHELL_ROUNDS rounds (about RACE_SECS seconds) unless
# stopped.
SHELL_ROUNDS=$((RACE_SECS * 50))
# Move R/t/m/a out into O/moved and back.
cpdirs
(trap 'stop=1' TERM; i=0 j=0 stop=
 while [ -z "$stop" ] && [ $j -lt $SHELL_ROUNDS ]; do
	j=$((j + 1))
	mv "$R/t/m/a" "$O/moved/a" 2>/dev/null && i=$((i + 1))
	mv "$O/moved/a" "$R/t/m/a" 2>/dev/null
 done; echo $i >"$T/rounds") & apid=$!; pids=$apid
race "move out"

# Remove and recreate directories inside and outside (inode numbers reused).
cpdirs
(trap 'stop=1' TERM; i=0 j=0 stop=
 while [ -z "$stop" ] && [ $j -lt $SHELL_ROUNDS ]; do
	j=$((j + 1))
	rmdir "$R/t/r/x" 2>/dev/null && i=$((i + 1))
	rmdir "$O/reuse" 2>/dev/null; mkdir "$O/reuse" "$R/t/r/x" 2>/dev/null
 done; echo $i >"$T/rounds") & apid=$!; pids=$apid
race "inode reuse"

tap_end test-tree
