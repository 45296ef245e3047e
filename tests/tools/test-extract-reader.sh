#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/tools/test-extract-reader.sh: the built-in tar reader of safeopen extract
# (tools/safeopen/tarfast.c) against libarchive alone. For every input the default
# reading (built-in reader, then libarchive from the first header group it
# does not accept) must give what SAFEOPEN_EXTRACT_READER=libarchive gives:
# the same exit status and the same tree (tests/tools/tree-manifest.py: types,
# modes, sizes, mtimes, link counts, link bodies, checksums, xattrs; owners
# and hard-link groups when run as root). The archives (tests/tools/gen-tar-variants.py
# and the tar writers installed):
#  1. real writers over one sample tree: GNU tar (gnu, oldgnu, ustar, v7,
#     posix, posix with a global header), python tarfile (GNU, ustar, pax,
#     pax with a global header), bsdtar (ustar, pax, gnutar, v7tar), gzip
#     (from the file and from a pipe), a plain tar from a pipe and from
#     redirected standard input. The formats that the built-in reader reads
#     whole are also extracted with SAFEOPEN_EXTRACT_READER=builtin (no
#     hand-over: it fails where it would hand over), which must succeed with
#     the same tree: the proof that the fast path ran from start to end;
#  2. crafted header groups (GNU long names, prefixes, numbers, checksums,
#     every type flag, links and directories with data, escapes, the end of
#     the archive, libarchive's bidding), each from the file and from a pipe,
#     and with the built-in reader alone: where that reads the archive
#     without a hand-over, it too must give libarchive's result;
#  3. a GNU archive of the sample tree cut at 24 offsets (from the file and
#     from a pipe) and 60 seeded variants with bytes changed in its header
#     blocks (44 and 400 under make check-long); one summary line, a not-ok
#     line for each disagreement.
# Nothing may be written outside DEST: the sentinel next to every DEST stays
# unchanged. Every run is under `timeout 10`: a hang is a failure.
# As root owners are compared too (--owners) and device nodes are created
# with --devices; another user gets the set-ID bits dropped, --devices
# refused, and reads an extracted tree with modes such as 0000 through
# gen-tar-variants.py (the same for both readers in every case).
set -u
. "${top_srcdir:-.}/tests/tools/extract-env.sh"
extract_env test-extract-reader
if ! tar --version 2>/dev/null | grep -q 'GNU tar'; then
	echo "SKIP: test-extract-reader: GNU tar (writes most of the archives) not found"
	exit 77
fi
case $top_srcdir in /*) SRCDIR=$top_srcdir ;; *) SRCDIR=$(pwd)/$top_srcdir ;; esac
GEN="$PYTHON $SRCDIR/tests/tools/gen-tar-variants.py"
unset SAFEOPEN_EXTRACT_READER

T=$(mktemp -d "${TMPDIR:-/tmp}/test-extract-reader.XXXXXX") || exit 99
T=$(cd "$T" && pwd -P)
trap 'chmod -R u+rwx "$T" 2>/dev/null; rm -rf "$T"' EXIT
umask 022
uid=$(id -u)
t0=$(date +%s%N)
# owners are restored only by root (a user's extraction owns everything)
MOWN=; [ "$uid" -eq 0 ] && MOWN=--owners

n=0
failed=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() { n=$((n + 1)); failed=$((failed + 1)); echo "not ok $n - $1"; }
check() { desc=$1; shift; if "$@"; then ok "$desc"; else not_ok "$desc"; fi; }
info() { echo "# $*"; }

# ---------------------------------------------------------------- layout
# W holds every DEST (W/NAME.READER) and, next to them, the sentinel: the
# tree "outside" and the file "x" (what "../outside/..." and "../x" from
# DEST reach). Every run's working directory is the sentinel.
W=$T/w
O=$W/outside
mkdir -p "$W" "$O/dir" "$T/a" "$T/m" "$T/e"
printf 'sentinel\n' >"$O/file"
printf 'inner\n' >"$O/dir/inner"
printf 'x\n' >"$W/x"
ln -s file "$O/link"
touch -h -d '2000-01-02 03:04:05' "$O/file" "$O/dir/inner" "$O/link" "$O/dir" "$O" "$W/x"
sentinel() { find "$O" "$W/x" "$W/evil" -printf '%p|%y|%m|%s|%T@|%C@|%i|%n|%l\n' 2>/dev/null | sort; }
sentinel >"$T/sentinel.before"
cd "$O" || exit 99

# xrun NAME READER SRC [OPTION...]: extract SRC into W/NAME.READER with the
# reader default (SAFEOPEN_EXTRACT_READER unset), libarchive or builtin;
# SRC "|FILE" is FILE through a pipe, "<FILE" standard input redirected
# from it. Records the exit status and the manifest to make.
# (The caller makes the directory. SAFEOPEN_EXTRACT_READER is unset in this
# script's environment: the default reading is a plain run.)
xrun() {
	xn=$1 xr=$2 xs=$3; shift 3
	D=$W/$xn.$xr
	if [ "$xr" = default ]; then
		case $xs in
		"|"*) cat "${xs#|}" | timeout 10 "$SAFEOPEN" "$D" extract "$@" - >/dev/null 2>"$T/e/$xn.$xr" ;;
		"<"*) timeout 10 "$SAFEOPEN" "$D" extract "$@" - <"${xs#<}" >/dev/null 2>"$T/e/$xn.$xr" ;;
		*) timeout 10 "$SAFEOPEN" "$D" extract "$@" "$xs" >/dev/null 2>"$T/e/$xn.$xr" ;;
		esac
	else
		case $xs in
		"|"*) cat "${xs#|}" | SAFEOPEN_EXTRACT_READER=$xr timeout 10 "$SAFEOPEN" "$D" extract "$@" - \
			>/dev/null 2>"$T/e/$xn.$xr" ;;
		"<"*) SAFEOPEN_EXTRACT_READER=$xr timeout 10 "$SAFEOPEN" "$D" extract "$@" - <"${xs#<}" \
			>/dev/null 2>"$T/e/$xn.$xr" ;;
		*) SAFEOPEN_EXTRACT_READER=$xr timeout 10 "$SAFEOPEN" "$D" extract "$@" "$xs" \
			>/dev/null 2>"$T/e/$xn.$xr" ;;
		esac
	fi
	echo $? >"$T/e/$xn.$xr.rc"
	echo "$T/m/$xn.$xr $D $MOPT $MOWN" >>"$T/mlist$PW"
}
# pair NAME SRC [OPTION...]: default and libarchive-only, to compare
pair() {
	p1=$1 p2=$2; shift 2
	mkdir "$W/$p1.default" "$W/$p1.libarchive"
	xrun "$p1" default "$p2" "$@"; xrun "$p1" libarchive "$p2" "$@"
	echo "$p1 same" >>"$T/pairs$PW"
}
# whole NAME SRC: also the built-in reader alone, which must read it whole
whole() { mkdir "$W/$1.builtin"; xrun "$1" builtin "$2"; echo "$1 whole" >>"$T/pairs$PW"; }
# ifwhole NAME SRC: the built-in reader alone; where it reads the archive
# without a hand-over, it must give what libarchive gives
ifwhole() { mkdir "$W/$1.builtin"; xrun "$1" builtin "$2"; echo "$1 ifwhole" >>"$T/pairs$PW"; }
PW=
# parallel FUNCTION FILE...: FUNCTION FILE for each FILE, in two processes
# (one per core; each with its own lists, joined in order after)
parallel() {
	pf=$1; shift
	for pw in 0 1; do
		(
			PW=.$pw pi=0
			for f in "$@"; do
				[ $((pi % 2)) -eq $pw ] && $pf "$f"
				pi=$((pi + 1))
			done
		) &
	done
	wait
	for pw in 0 1; do
		[ -f "$T/pairs.$pw" ] && cat "$T/pairs.$pw" >>"$T/pairs"
		[ -f "$T/mlist.$pw" ] && cat "$T/mlist.$pw" >>"$T/mlist"
		rm -f "$T/pairs.$pw" "$T/mlist.$pw"
	done
}
HANDOVER='(SAFEOPEN_EXTRACT_READER=builtin)$'

# compare each|summary: make the manifests listed, then one result per line
# of pairs (NAME same: default = libarchive; NAME whole: builtin exits 0 and
# = libarchive; NAME ifwhole: builtin = libarchive unless it handed over).
# ok lines only with "each"; every disagreement is a not-ok line with the
# difference. Sets agree, disagree, fast and handed (ifwhole).
compare() {
	agree=0 disagree=0 fast=0 handed=0 msgs=0
	# two processes, one per core
	sed -n 'p;n' "$T/mlist" >"$T/mlist.0"; sed -n 'n;p' "$T/mlist" >"$T/mlist.1"
	$GEN manifest "$T/mlist.0" "$SRCDIR/tests/tools/tree-manifest.py" "$t0" &
	$GEN manifest "$T/mlist.1" "$SRCDIR/tests/tools/tree-manifest.py" "$t0" &
	wait
	rm -f "$T/mlist.0" "$T/mlist.1"
	while read -r cn ck; do
		ca=$cn.default; [ "$ck" = same ] || ca=$cn.builtin
		read -r r1 <"$T/e/$ca.rc"; read -r r2 <"$T/e/$cn.libarchive.rc"
		why=
		if [ "$ck" = ifwhole ]; then
			if grep -q "$HANDOVER" "$T/e/$ca"; then handed=$((handed + 1)); continue; fi
			fast=$((fast + 1))
		fi
		if [ "$r1" -eq 124 ] || [ "$r2" -eq 124 ]; then
			why="timed out (exit $r1, $r2)"
		elif [ "$ck" = whole ] && [ "$r1" -ne 0 ]; then
			why="the built-in reader alone: exit $r1, expected 0"
		elif [ "$r1" -ne "$r2" ]; then
			why="exit $r1 (${ca#"$cn".}), $r2 (libarchive)"
		elif ! cmp -s "$T/m/$ca" "$T/m/$cn.libarchive"; then
			why="the trees differ"
		fi
		if [ -n "$why" ]; then
			disagree=$((disagree + 1))
			not_ok "$cn: ${ca#"$cn".} and libarchive disagree: $why"
			diff "$T/m/$cn.libarchive" "$T/m/$ca" | head -6 | cut -c1-160 | sed 's/^/#   /'
			for f in "$T/e/$ca" "$T/e/$cn.libarchive"; do
				head -3 "$f" | cut -c1-160 | sed "s|^|#   ${f##*.}: |"
			done
		else
			agree=$((agree + 1))
			[ "$1" = each ] && ok "$cn: ${ca#"$cn".}$(case $ck in ifwhole) echo " (no hand-over)" ;; esac) = libarchive (exit $r1, $(grep -vc '^atime ' "$T/m/$ca") objects)"
			# the messages are not part of the claim: counted, not checked
			cmp -s "$T/e/$ca" "$T/e/$cn.libarchive" || { msgs=$((msgs + 1)); echo "$cn" >>"$T/msgs"; }
		fi
	done <"$T/pairs"
	if [ "$msgs" -gt 0 ]; then
		info "stderr differs from libarchive's in $msgs agreeing runs, e.g. $(head -3 "$T/msgs" | tr '\n' ' ')"
		rm -f "$T/msgs"
	fi
	# the next section starts afresh (and the disk is freed)
	: >"$T/pairs"; : >"$T/mlist"
	find "$W" -mindepth 1 -maxdepth 1 ! -name outside ! -name x -exec chmod -R u+rwx {} + 2>/dev/null
	find "$W" -mindepth 1 -maxdepth 1 ! -name outside ! -name x -exec rm -rf {} +
}

# ---------------------------------------------------------------- 1. real writers
# The sample tree, in variants: FEATURES "long" (archive names of 101 to 300
# bytes, a symbolic link to a 150-byte name), "n100" (a name of exactly 100
# bytes), "split" (a name of 183 bytes, split into ustar's prefix and name),
# "fifo", "utf8" (a non-ASCII name).
seq 1 20000 >"$T/pattern"
$PYTHON -c 'print("".join(chr(97 + i % 26) for i in range(300)), end="")' >"$T/alpha"
mktree() {
	mt_d=$1 mt_f=" $2 "
	mkdir -p "$mt_d/dir/sub/deep" "$mt_d/empty" "$mt_d/sticky"
	for s in 0 1 100 511 512 513 10240 70000; do head -c $s "$T/pattern" >"$mt_d/dir/f$s"; done
	head -c 513 "$T/pattern" >"$mt_d/dir/sub/deep/f513"
	printf 'x\n' >"$mt_d/f0600"; chmod 0600 "$mt_d/f0600"
	printf '#!/bin/sh\n' >"$mt_d/exec"; chmod 0755 "$mt_d/exec"
	printf 'suid\n' >"$mt_d/setuid"; chmod 04755 "$mt_d/setuid"
	chmod 01777 "$mt_d/sticky"; printf 's\n' >"$mt_d/sticky/in"
	printf 'two\n' >"$mt_d/hl2a"; ln "$mt_d/hl2a" "$mt_d/dir/hl2b"
	printf 'three\n' >"$mt_d/hl3a"; ln "$mt_d/hl3a" "$mt_d/hl3b"; ln "$mt_d/hl3a" "$mt_d/dir/sub/hl3c"
	ln -s dir "$mt_d/dirlink"; ln -s dir/f100 "$mt_d/filelink"; ln -s nowhere "$mt_d/dangling"
	case $mt_f in *" utf8 "*) printf 'utf8\n' >"$mt_d/café-ünï-✓.txt" ;; esac
	case $mt_f in *" fifo "*) mkfifo "$mt_d/fifo" ;; esac
	# "./" and 98 bytes: a name of exactly 100 bytes in the archive
	case $mt_f in *" n100 "*) printf 'n100\n' >"$mt_d/$(head -c 98 "$T/alpha")" ;; esac
	# a name of 183 bytes that ustar splits into prefix and name
	case $mt_f in *" split "*) mt_l=$mt_d/$(head -c 90 "$T/alpha"); mkdir "$mt_l"
		printf 'split\n' >"$mt_l/$(head -c 90 "$T/alpha")" ;; esac
	case $mt_f in *" long "*)
		for len in 101 150 255; do printf '%s\n' $len >"$mt_d/$(head -c $((len - 2)) "$T/alpha")"; done
		mt_l=$mt_d/$(head -c 120 "$T/alpha"); mkdir "$mt_l"
		printf '256\n' >"$mt_l/$(head -c 133 "$T/alpha")"
		printf '300\n' >"$mt_l/$(head -c 177 "$T/alpha")"
		ln -s "$(head -c 150 "$T/alpha")" "$mt_d/longtarget" ;;
	esac
	find "$mt_d" -exec touch -h -d '2011-02-03 04:05:06' {} +
	# directories whose own mtimes must be restored
	touch -d '2009-01-01 00:00:01' "$mt_d/dir/sub" "$mt_d/sticky"
	touch -h -d '2012-12-12 12:12:12' "$mt_d/dirlink"
}
S=$T/s
mktree "$S/full" "long split n100 fifo utf8"
mktree "$S/full-nofifo" "long split n100 utf8"  # the built-in reader hands a FIFO ('6') over
mktree "$S/short" "split n100 fifo utf8"       # ustar: no names that cannot be split
mktree "$S/short-nofifo" "split n100 utf8"
mktree "$S/v7" "utf8"                    # v7: names up to 99 bytes, no FIFO
mktree "$S/ascii" "long split n100"       # pax: the built-in reader takes ASCII pax names

A=$T/a
MOPT=
gtar() { gt_f=$1 gt_t=$2 gt_o=$3; shift 3; tar --format="$gt_f" --sort=name "$@" -C "$S/$gt_t" -cf "$A/$gt_o.tar" . ||
	{ not_ok "GNU tar --format=$gt_f of the $gt_t tree failed"; }; }
gtar gnu full gnu
gtar gnu full-nofifo gnu-nofifo
gtar oldgnu full oldgnu
gtar oldgnu full-nofifo oldgnu-nofifo
gtar ustar short ustar
gtar ustar short-nofifo ustar-nofifo
gtar v7 v7 v7
gtar posix full posix --pax-option=delete=atime,delete=ctime
gtar posix full posix-global --pax-option=comment=4b825dc642cb6eb9a060e54bf8d69288fbee4904
# every entry with a pax header (mtime, atime, ctime; path and linkpath for
# the long names), one with a global header first: read whole by the
# built-in reader
gtar posix ascii posix-ascii
gtar posix ascii posix-ascii-global --pax-option=comment=4b825dc642cb6eb9a060e54bf8d69288fbee4904
for t in full full-nofifo short short-nofifo; do $GEN python "$S/$t" "$A" "$t"; done
for a in gnu oldgnu ustar v7 posix posix-global; do pair "gnutar-$a" "$A/$a.tar"; done
for a in posix-ascii posix-ascii-global; do pair "gnutar-$a" "$A/$a.tar"; whole "gnutar-$a" "$A/$a.tar"; done
for a in gnu oldgnu ustar; do pair "gnutar-$a-nofifo" "$A/$a-nofifo.tar"; whole "gnutar-$a-nofifo" "$A/$a-nofifo.tar"; done
whole gnutar-v7 "$A/v7.tar"
# python: GNU and ustar store the UTF-8 name as is (pax would add an 'x' header)
pair py-gnu "$A/full-py-gnu.tar"
pair py-gnu-nofifo "$A/full-nofifo-py-gnu.tar"; whole py-gnu-nofifo "$A/full-nofifo-py-gnu.tar"
pair py-ustar "$A/short-py-ustar.tar"
pair py-ustar-nofifo "$A/short-nofifo-py-ustar.tar"; whole py-ustar-nofifo "$A/short-nofifo-py-ustar.tar"
pair py-pax "$A/full-py-pax.tar"
pair py-pax-global "$A/full-py-pax-global.tar"
if command -v bsdtar >/dev/null 2>&1; then
	btar() { bsdtar --format "$1" -C "$S/$2" -cf "$A/bsd-$3.tar" . 2>"$T/bsdtar.err" ||
		{ not_ok "bsdtar --format $1 of the $2 tree failed"; sed 's/^/#   /' "$T/bsdtar.err"; }; }
	btar ustar short ustar; btar ustar short-nofifo ustar-nofifo
	btar pax full pax; btar pax ascii pax-ascii
	btar gnutar full gnutar; btar gnutar full-nofifo gnutar-nofifo
	btar v7tar v7 v7tar
	for a in ustar pax gnutar v7tar ustar-nofifo gnutar-nofifo; do pair "bsdtar-$a" "$A/bsd-$a.tar"; done
	# bsdtar writes no pax header in these formats
	for a in ustar-nofifo gnutar-nofifo v7tar; do whole "bsdtar-$a" "$A/bsd-$a.tar"; done
	# pax headers with path, linkpath and times
	pair bsdtar-pax-ascii "$A/bsd-pax-ascii.tar"; whole bsdtar-pax-ascii "$A/bsd-pax-ascii.tar"
else
	skip "bsdtar's archives (ustar, pax, gnutar, v7tar, pax of ASCII names): bsdtar not found"
fi
# compressed: gzip -dc's pipe from a file (the built-in reader reads it
# whole); through a pipe from cat libarchive decompresses (the default
# reading hands over at the start, with the bytes it took for its bid)
if command -v gzip >/dev/null 2>&1; then
	gzip -n -c "$A/gnu.tar" >"$A/gnu.tar.gz"
	gzip -n -c "$A/gnu-nofifo.tar" >"$A/gnu-nofifo.tar.gz"
	pair gz-file "$A/gnu.tar.gz"
	pair gz-nofifo-file "$A/gnu-nofifo.tar.gz"; whole gz-nofifo-file "$A/gnu-nofifo.tar.gz"
	pair gz-pipe "|$A/gnu.tar.gz"
	pair gz-stdin-file "<$A/gnu.tar.gz"
else
	skip "gzip-compressed archives: gzip not found"
fi
# plain tar from a pipe and from redirected standard input
pair gnutar-gnu-pipe "|$A/gnu.tar"
pair gnutar-gnu-nofifo-pipe "|$A/gnu-nofifo.tar"; whole gnutar-gnu-nofifo-pipe "|$A/gnu-nofifo.tar"
pair gnutar-gnu-stdin-file "<$A/gnu.tar"
pair gnutar-gnu-nofifo-stdin-file "<$A/gnu-nofifo.tar"; whole gnutar-gnu-nofifo-stdin-file "<$A/gnu-nofifo.tar"
pair gnutar-posix-pipe "|$A/posix.tar"
compare each
info "real writers: $agree agree, $disagree disagree"

# ---------------------------------------------------------------- 2. crafted header groups
C=$T/c
MOPT=--no-root  # the crafted archives have no "." entry: DEST is not theirs
$GEN crafted "$C" || { echo "FAIL: test-extract-reader: gen-tar-variants.py crafted failed"; exit 1; }
crafted_one() {
	b=${1##*/}; b=${b%.tar}
	pair "$b" "$1"
	pair "$b-pipe" "|$1"
	ifwhole "$b" "$1"
}
parallel crafted_one "$C"/*.tar
# devices: refused without --devices by both readers (above); with it, root
# creates them and another user is refused (EPERM) by both
for b in type-3-chr type-4-blk; do pair "$b-devices" "$C/$b.tar" --devices; done
compare each
info "crafted: $agree agree, $disagree disagree; the built-in reader alone read $fast archives without a hand-over (each = libarchive), handed $handed over"

# ---------------------------------------------------------------- 3. damage
# one GNU archive of the sample tree (43 headers), cut and with changed
# header bytes. Without the FIFO: the built-in reader reads it to the end
# when the damage is not where it hands over (with the FIFO, every damage
# after it would be libarchive's in both readings). Where it hands over at
# the damaged header, libarchive from there must read as from the start.
# make check: 24 cuts and 60 changed-header variants; make check-long
# (SAFEOPEN_CHECK_LONG=1): 44 and 400
V=$T/v
NCUT=24 NFLIP=60
case ${SAFEOPEN_CHECK_LONG:-0} in 0) ;; *) NCUT=44 NFLIP=400 ;; esac
$GEN damage "$A/gnu-nofifo.tar" "$V" 20260101 $NCUT $NFLIP || { echo "FAIL: test-extract-reader: gen-tar-variants.py damage failed"; exit 1; }
set -- "$V"/trunc-*.tar; nt=$#
set -- "$V"/flip-*.tar; nf=$#
# a cut archive also through a pipe: the hand-over of what was read, then EOF
damage_one() {
	b=${1##*/}; b=${b%.tar}
	pair "$b" "$1"
	case $b in trunc-*) pair "$b-pipe" "|$1" ;; esac
}
parallel damage_one "$V"/*.tar
compare summary
check "damage: $nt cut and $nf changed-header variants of a GNU archive (with pipes: $((agree + disagree)) inputs): $agree agree, $disagree disagree" \
	test "$disagree" -eq 0 -a "$agree" -gt 0

# ---------------------------------------------------------------- the sentinel
sentinel >"$T/sentinel.after"
check "nothing outside DEST changed (the sentinel, ../x, no ../evil)" cmp -s "$T/sentinel.before" "$T/sentinel.after"
cmp -s "$T/sentinel.before" "$T/sentinel.after" || diff "$T/sentinel.before" "$T/sentinel.after" | head -5 | sed 's/^/#   /'

info "run time: $((($(date +%s%N) - t0) / 1000000)) ms"
echo "test-extract-reader: $n checks, $failed failed"
if [ $failed -ne 0 ]; then echo "FAIL: test-extract-reader"; exit 1; fi
skips_exit test-extract-reader $n
echo "PASS: test-extract-reader"
exit 0
