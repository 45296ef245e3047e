#!/bin/sh
# Runs every program of the cookbook (doc/cookbook.md, examples/cookbook/)
# against a tree in its own temporary directory and checks what it prints,
# what it creates, and that nothing appears outside the directory it was
# given. Hostile links point into the temporary directory, never at system
# files, so a broken library could only write there.
set -eu
builddir=${top_builddir:-.}
cb="$builddir/examples/cookbook"
for p in serve-url upload extract port-realpath port-openat2 seccomp fdpass backup-walk container; do
	[ -x "$cb/$p" ] || { echo "test-cookbook: $cb/$p not built"; exit 1; }
done
top_builddir=$builddir
. "${top_srcdir:-.}/tests/harness/direct.sh"
. "${top_srcdir:-.}/tests/harness/partial.sh"
probe=$cb/serve-url
direct_binary probe
cb=${probe%/*}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
failed=0
n=0
check() { # check DESCRIPTION COMMAND...: the command must succeed (one TAP line)
	d=$1; shift
	n=$((n + 1))
	if "$@"; then echo "ok $n - $d"; else echo "not ok $n - $d"; failed=$((failed + 1)); fi
}
# Checks run in this shell (a "sh -c" per check cost a process start each):
has() { printf '%s\n' "$out" | grep -q -- "$1"; } # has BRE: a line of $out matches
fails() { ! "$@" >/dev/null 2>&1; }                # fails COMMAND...: it exits non-zero
# Outside of every root: must never change.
mkdir "$T/outside"
echo secret > "$T/outside/secret"
snapshot() { (cd "$T/outside" && find . | sort); }
before=$(snapshot)

# ---- serve files from a URL path
R="$T/www"
mkdir -p "$R/sub"
echo home > "$R/index.html"
echo subhome > "$R/sub/index.html"
echo aaa > "$R/sub/a.txt"
ln -s "$T/outside" "$R/abs"          # absolute: IN_ROOT makes it $R/$T/outside
ln -s ../../outside/secret "$R/up"   # relative, climbing: clamped at the root
mkfifo "$R/fifo"
get() { "$cb/serve-url" "$R" "$1" 2>&1 || true; }
check "serve / gives the index" test "$(get /)" = "$(printf '200 5\nhome')"
check "serve /sub/ gives its index" test "$(get /sub/)" = "$(printf '200 8\nsubhome')"
check "serve /sub/a.txt?q=1" test "$(get '/sub/a.txt?q=1')" = "$(printf '200 4\naaa')"
check "serve /%2e%2e/outside/secret is 404" test "$(get /%2e%2e/outside/secret)" = 404
check "serve /../../outside/secret is 404" test "$(get /../../outside/secret)" = 404
check "serve absolute symlink out is 404" test "$(get /abs/secret)" = 404
check "serve climbing symlink is 404" test "$(get /up)" = 404
check "serve a FIFO is 403 (and does not hang)" test "$(timeout 10 "$cb/serve-url" "$R" /fifo || true)" = 403
ln -s loop "$R/loop"
check "serve a symlink loop is 403 (ELOOP: refused, not missing)" test "$(get /loop)" = 403
check "serve %00 is 400" test "$(get /sub/a.txt%00.html)" = 400
check "serve a relative URL is 400" test "$(get sub/a.txt)" = 400

# ---- upload handler
U="$T/up"
mkdir "$U"
head -c 200000 /dev/urandom > "$T/data"
sum=$(sha256sum < "$T/data" | cut -d' ' -f1)
rc=0; "$cb/upload" "$U" "a/b/c/data.bin" < "$T/data" > "$T/up.out" 2>"$T/up.err" || rc=$?
check "upload stores the content" cmp -s "$T/data" "$U/a/b/c/data.bin"
check "upload prints the checksum" grep -q "^$sum  a/b/c/data.bin\$" "$T/up.out"
if [ $rc = 0 ]; then
	if command -v getfattr >/dev/null 2>&1; then
		x=$(getfattr --only-values -n user.sha256 "$U/a/b/c/data.bin" 2>/dev/null || true)
		check "upload sets user.sha256" test "$x" = "$sum"
	else
		skip "upload's user.sha256 read back: getfattr (package attr) not installed"
	fi
elif [ $rc = 3 ]; then
	# Only honest if this filesystem really refuses user xattrs: the CLI's
	# put says EOPNOTSUPP there (and leaves nothing).
	check "upload: exit 3 only without user xattrs" sh -c \
		"! '$builddir/tools/safeopen/safeopen' '$T' put xattr-probe --xattr user.t=1 </dev/null 2>'$T/probe.err' &&
		grep -qi 'not supported' '$T/probe.err'"
	check "upload: says it stored without the checksum" grep -q WITHOUT "$T/up.err"
	skip "upload's user.sha256: no user xattrs on ${TMPDIR:-/tmp}"
else
	check "upload exit status ($rc)" false
fi
printf 'v2' | "$cb/upload" "$U" a/b/c/data.bin >/dev/null 2>&1 || true
check "upload replaces atomically" test "$(cat "$U/a/b/c/data.bin")" = v2
check "upload ../x is refused" fails "$cb/upload" "$U" ../outside/x < "$T/data"
check "upload a/../../x is refused" fails "$cb/upload" "$U" a/../../outside/x < "$T/data"
ln -s "$T/outside" "$U/evil"
check "upload through a symlink out is refused" fails "$cb/upload" "$U" evil/x < "$T/data"
check "upload leaves no temporary name" test -z "$(find "$U" -name '.safeopen-*')"

# ---- extract an archive
if command -v tar >/dev/null 2>&1; then
	S="$T/stage"; X="$T/dest"
	mkdir -p "$S/d" "$X"
	echo hi > "$S/d/f"; echo evil > "$S/x"
	ln -s "$T/outside" "$S/evil"; ln -s ../.. "$S/climb"; ln "$S/d/f" "$S/hl"; mkfifo "$S/p"
	tt() { (cd "$S" && tar --format=ustar -P --no-recursion "$@" 2>/dev/null); }
	tt -cf "$T/a.tar" d d/f evil climb hl p
	for e in ../outside/dotdot evil/via-symlink climb/outside/via-climb "$T/outside/absolute" d/../../outside/dd; do
		tt -rf "$T/a.tar" --transform "s,^x\$,$e," x
	done
	rc=0; "$cb/extract" "$X" < "$T/a.tar" > "$T/x.out" 2>&1 || rc=$?
	check "extract exits 1 (some refused)" test $rc = 1
	check "extract: 6 entries ok" test "$(grep -c '^ok ' "$T/x.out")" = 6
	check "extract: 5 entries refused" test "$(grep -c '^refused ' "$T/x.out")" = 5
	check "extract: file content" test "$(cat "$X/d/f")" = hi
	check "extract: hard link" test "$X/hl" -ef "$X/d/f"
	check "extract: FIFO" test -p "$X/p"
	check "extract: symlinks stored as they are" test "$(readlink "$X/evil")" = "$T/outside"
	check "extract: nothing else in dest" test "$(cd "$X" && find . | sort | tr '\n' ' ')" = ". ./climb ./d ./d/f ./evil ./hl ./p "
else
	skip "the extract recipe: tar (builds its archive) not found"
fi

# strerror(EXDEV): glibc says "Invalid cross-device link", musl "Cross-device link".
EXDEV_MSG='\(Invalid c\|C\)ross-device link'
# ---- porting from realpath()
P="$T/port"
mkdir -p "$P/www" "$P/www-private"
echo s > "$P/www-private/secret"; echo ok > "$P/www/f"
out=$("$cb/port-realpath" "$P/www" ../www-private/secret)
check "realpath+prefix is fooled by a sibling prefix" has '^realpath+prefix: opened'
check "libsafeopen refuses it" has "^libsafeopen: *$EXDEV_MSG"
out=$("$cb/port-realpath" "$P/www" f)
check "both open an inside file" test "$(printf '%s\n' "$out" | grep -c opened)" = 2

# ---- porting from openat2() with a fallback
ln -s "$T/outside" "$P/www/out"
out=$("$cb/port-openat2" "$P/www" out/secret)
check "openat2 and safe_openat2 agree" test "$(printf '%s\n' "$out" | grep -c "$EXDEV_MSG")" = 2
out=$("$cb/port-openat2" --no-openat2 "$P/www" out/secret)
check "the hand-written fallback follows the symlink out" has '^openat2: *opened'
check "safe_openat2's fallback does not" has "^safe_openat2: *$EXDEV_MSG"

# ---- seccomp
for e in ENOSYS EPERM; do
	out=$("$cb/seccomp" $e "$P/www" f out/secret ../www-private/secret)
	check "seccomp $e: openat2 blocked" has '^raw openat2: .*\(implemented\|not permitted\)'
	check "seccomp $e: inside file opens" has '^f: opened'
	check "seccomp $e: symlink out refused" has "^out/secret: $EXDEV_MSG"
	check "seccomp $e: .. out refused" has "^../www-private/secret: $EXDEV_MSG"
done

# ---- O_PATH root over a UNIX socket
check "fdpass: the worker reads beneath the root it received" test "$("$cb/fdpass" "$P/www" f)" = ok
check "fdpass: the worker cannot leave it" fails "$cb/fdpass" "$P/www" out/secret

# ---- a backup agent's walk, and a copy between two roots
B="$T/home"
mkdir -p "$B/u/docs/deep"
echo report > "$B/u/docs/r.txt"
echo deep > "$B/u/docs/deep/d.txt"
ln -s "$T/outside" "$B/u/docs/out"
ln -s ../../../outside/secret "$B/u/rel"
out=$("$cb/backup-walk" "$B" u)
check "backup-walk: every file read" test "$(printf '%s\n' "$out" | grep -c '^f ')" = 2
check "backup-walk: links recorded, not followed" \
	test "$(printf '%s\n' "$out" | grep -c '^l ')" = 2
check "backup-walk: nothing outside read" fails has '^[fd] .*secret'
check "backup-walk: ../ refused" fails "$cb/backup-walk" "$B" u/../..
safeopen=$builddir/tools/safeopen/safeopen
direct_binary safeopen
mkdir "$T/host"
check "cp -a between two roots" "$safeopen" cp -a "$B" u/docs "$T/host" docs
check "cp -a: the links copied as links" test "$(readlink "$T/host/docs/out")" = "$T/outside"
check "cp -a: the files copied" test "$(cat "$T/host/docs/deep/d.txt")" = deep
check "cp -a: nothing copied from outside" test ! -e "$T/host/docs/out/secret.copy"

# ---- a container runtime's rootfs
C="$T/rootfs"
mkdir -p "$C/etc" "$C/dev"
echo host > "$C/etc/hostname"
ln -s "$T/outside" "$C/sys"          # absolute: IN_ROOT keeps it in the rootfs
ln -s ../../../outside "$C/run"      # climbing: clamped at the rootfs
mkdir -p "$C$T/outside" "$C/outside" # where those lead inside the rootfs
out=$("$cb/container" "$C" /etc/hostname/x 2>"$T/c.err") && rc=0 || rc=$?
check "container: the destinations made" test -d "$C/dev/shm" -a -d "$C/proc" -a -f "$C/etc/resolv.conf"
check "container: every directory made is 0755 under umask 0" \
	test "$(stat -c %a "$C/dev/shm")" = 755 -a "$(stat -c %a "$C$T/outside/fs")" = 755
check "container: links followed inside the rootfs only" test -d "$C$T/outside/fs/cgroup" -a -f "$C/outside/secrets/token"
check "container: a file in the way is named" grep -q "mkdir \`/etc/hostname/x': component \`hostname' (offset 5): not a directory" "$T/c.err"
check "container: /proc/self written through the verified procfs" \
	test "$(printf '%s\n' "$out" | grep -c '^proc oom_score_adj written')" = 1
check "container: exit 1 for the failed destination" test $rc = 1
if [ "$(id -u)" = 0 ] && mknod "$C/dev/null" c 1 3 2>/dev/null; then
	out=$("$cb/container" "$C") || true
	check "container: the real /dev/null accepted" has '^/dev/null ok'
	rm -f "$C/dev/null"
else
	skip "container: a real /dev/null in the rootfs needs mknod (root)"
fi
ln -s "$T/outside/secret" "$C/dev/null"
"$cb/container" "$C" >/dev/null 2>"$T/c.err" && rc=0 || rc=$?
check "container: a /dev/null symlink refused (exit 3)" test $rc = 3
check "container: ... and said so" grep -q "not the null device" "$T/c.err"
rm "$C/dev/null"
echo x > "$C/dev/null"
"$cb/container" "$C" >/dev/null 2>&1 && rc=0 || rc=$?
check "container: a /dev/null regular file refused (exit 3)" test $rc = 3

check "nothing changed outside the roots" test "$(snapshot)" = "$before"
tap_end test-cookbook
