#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/tools/test-tree-cost.sh: the tree commands of safeopen cost O(depth)
# system calls whatever the descriptor budget. On a chain of directories
# t/d/d/.../d, `du -s`, `find`, `chmod -R`, `chown -R`, `rm -r` and `cp -a`
# (16 free descriptors and more; it also checks every level's mode, owner
# and times, and copies 2,500 levels, past PATH_MAX / 2) run under
# `ulimit -n` = 3 + 5, 16, 40 and 64 free descriptors, counted by
# `strace -f -c` (system calls, never time); 4 times the depth must cost at
# most 6 times the calls (1.5x linear). Depths 100 and 400 (du, rm -r,
# cp -a) here, 1,000 and 4,000 (every command) under make check-long
# (SAFEOPEN_CHECK_LONG=1); COST_DEPTHS="A B" chooses others. COST_TABLE=1
# prints every count (the table in the notes of issue 36).
set -u
: "${top_builddir:=.}"
SAFEOPEN=${SAFEOPEN:-"$top_builddir/tools/safeopen/safeopen"}
. "${top_srcdir:-.}/tests/harness/direct.sh"
. "${top_srcdir:-.}/tests/harness/partial.sh"
[ -x "$SAFEOPEN" ] || bail "test-tree-cost: $SAFEOPEN not built"
direct_binary SAFEOPEN
command -v strace >/dev/null 2>&1 || { echo "1..0 # SKIP strace is not installed"; exit 77; }
# the system's python3 first: a version-manager shim (pyenv) costs ~0.5 CPU-s
# a start, and the test starts python 27 times
PYTHON=$(command -v /usr/bin/python3 python3 | head -1)
[ -n "$PYTHON" ] || { echo "1..0 # SKIP python3 is not installed"; exit 77; }

# Quick: the walk (du), the removal (rm -r, its own walk) and the copy
# (cp -a, which holds its destination too); long: every tree command.
SMALL=100 BIG=400
CMDS='du -s
rm -r
cp -a'
[ -z "${SAFEOPEN_CHECK_LONG:-}" ] || { SMALL=1000 BIG=4000; CMDS="du -s
find
chmod -R 755
chown -R $(id -u):$(id -g)
rm -r
cp -a"; }
[ -z "${COST_DEPTHS:-}" ] || set -- $COST_DEPTHS
[ $# -eq 0 ] || { SMALL=$1 BIG=$2; }

T=$(mktemp -d "${TMPDIR:-/tmp}/test-tree-cost.XXXXXX") || exit 99
trap 'rm -rf "$T"' EXIT
R=$T/root
mkdir "$R" || exit 99
# LeakSanitizer cannot run under ptrace (it stops the process to scan it):
# in a sanitizer build the leak check is left to the other tests, the counts
# stay the same walk's (ASan's own calls are a constant per run).
ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
export ASAN_OPTIONS
# strace must be able to trace its child (a container may forbid ptrace).
strace -f -c -o "$T/probe" true >/dev/null 2>&1 ||
	{ echo "1..0 # SKIP strace cannot trace here (ptrace refused)"; exit 77; }

# Without openat2 (before 5.6, or refused by a seccomp profile) a level is
# reopened one name at a time: the checkpoints keep that near-linear only
# while they can be held (64 free descriptors); the other budgets are then
# measured, not asserted, and 5 free descriptors are one too few.
have_openat2=$("$PYTHON" -c '
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
how = (ctypes.c_uint64 * 3)(os.O_PATH, 0, 0)
fd = libc.syscall(437, -100, b".", how, 24)  # openat2: one number on every architecture but alpha
print(1 if fd >= 0 else 0)
' 2>/dev/null) || have_openat2=0

n=0
failed=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() { n=$((n + 1)); failed=$((failed + 1)); echo "not ok $n - $1"; }

# chain DEPTH NAME...: ROOT/NAME/d/d/... DEPTH levels below each NAME (by
# descriptors: deeper than PATH_MAX), in one process.
chain() {
	"$PYTHON" - "$R" "$@" <<'EOF' || exit 99
import os, sys
root, depth = sys.argv[1], int(sys.argv[2])
for name in sys.argv[3:]:
    os.mkdir(os.path.join(root, name))
    fd = os.open(os.path.join(root, name), os.O_RDONLY | os.O_DIRECTORY)
    for i in range(depth):
        os.mkdir("d", dir_fd=fd)
        n = os.open("d", os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
        # Modes and times that differ from level to level (for cp -a).
        os.fchmod(fd, 0o700 | (i % 8) << 3)
        os.utime(fd, (1000000 + i, 2000000 + i))
        os.close(fd)
        fd = n
    os.close(fd)
EOF
}

# same_chain A B: ROOT/A and ROOT/B are chains of the same depth whose levels
# have the same mode, owner and modification time.
same_chain() {
	"$PYTHON" - "$R/$1" "$R/$2" <<'EOF'
import os, stat, sys
a = os.open(sys.argv[1], os.O_RDONLY | os.O_DIRECTORY)
b = os.open(sys.argv[2], os.O_RDONLY | os.O_DIRECTORY)
level = bad = 0
while True:
    sa, sb = os.fstat(a), os.fstat(b)
    fa = (stat.S_IMODE(sa.st_mode), sa.st_uid, sa.st_gid, sa.st_mtime_ns)
    fb = (stat.S_IMODE(sb.st_mode), sb.st_uid, sb.st_gid, sb.st_mtime_ns)
    if fa != fb:
        bad += 1
        if bad <= 3:
            print("#   level %d: %s, copy %s" % (level, fa, fb))
    try:
        na = os.open("d", os.O_RDONLY | os.O_DIRECTORY, dir_fd=a)
    except FileNotFoundError:
        na = -1
    try:
        nb = os.open("d", os.O_RDONLY | os.O_DIRECTORY, dir_fd=b)
    except FileNotFoundError:
        nb = -1
    os.close(a)
    os.close(b)
    if na < 0 or nb < 0:
        if na != nb:
            print("#   depth differs at level %d" % level)
            bad += 1
        break
    a, b, level = na, nb, level + 1
sys.exit(1 if bad else 0)
EOF
}

# calls FREE CMD...: the system calls of `safeopen ROOT CMD...` with FREE
# descriptors free beyond 0-2 (empty when it failed).
calls() {
	free=$1
	shift
	# Descriptors inherited (the test driver's, make's) are closed first.
	case $1 in cp) set -- "$@" ;; *) set -- "$R" "$@" ;; esac
	if "$PYTHON" -c '
import os, resource, sys
os.closerange(3, os.sysconf("SC_OPEN_MAX"))
n = int(sys.argv[1]) + 3
resource.setrlimit(resource.RLIMIT_NOFILE, (n, n))
os.execvp(sys.argv[2], sys.argv[2:])
' "$free" strace -f -c -o "$T/count" "$SAFEOPEN" "$@" </dev/null >/dev/null 2>"$T/err"; then
		awk '$NF == "total" { print $4 }' "$T/count"
	else
		cut -c1-160 "$T/err" | sed 's/^/#   /' | head -3
	fi
}

# s and b, and one of each per budget for rm -r.
chain "$SMALL" s s5 s16 s40 s64
chain "$BIG" b b5 b16 b40 b64
while read -r cmd; do
	for free in 5 16 40 64; do
		s=s b=b
		[ "$cmd" != "rm -r" ] || { s=s$free b=b$free; }
		if [ "$cmd" = "cp -a" ]; then
			if [ "$free" -lt 16 ]; then
				# Its two roots and the descriptors kept for a
				# file's copy come first.
				ok "cp -a with $free free descriptors # SKIP cp -a needs more than 5"
				continue
			fi
			rm -rf "$R/cs" "$R/cb"
			cs=$(calls "$free" cp -a "$R" s "$R" cs)
			cb=$(calls "$free" cp -a "$R" b "$R" cb)
			if same_chain s cs && same_chain b cb; then
				ok "cp -a, $free free descriptors: every level's mode, owner and times"
			else
				not_ok "cp -a, $free free descriptors: every level's mode, owner and times"
			fi
		else
			# shellcheck disable=SC2086 # the command's words
			cs=$(calls "$free" $cmd $s)
			# shellcheck disable=SC2086
			cb=$(calls "$free" $cmd $b)
		fi
		case $cs$cb in
		*[!0-9]* | '')
			if [ "$have_openat2" != 1 ] && [ "$free" -lt 6 ]; then
				# One name at a time needs one descriptor more.
				ok "$cmd with $free free descriptors # SKIP no openat2: needs 6"
				continue
			fi
			not_ok "$cmd with $free free descriptors: failed"
			printf '%s\n%s\n' "$cs" "$cb"
			continue ;;
		esac
		[ -z "${COST_TABLE:-}" ] ||
			echo "# $cmd | $free | $SMALL: $cs | $BIG: $cb | x$(awk "BEGIN { printf \"%.2f\", $cb / $cs }")"
		if [ "$have_openat2" != 1 ] && [ "$free" -lt 64 ]; then
			ok "$cmd, $free free descriptors: $cs -> $cb system calls # SKIP no openat2: not asserted"
		elif [ $((cb * 2 * SMALL)) -le $((cs * 3 * BIG)) ]; then
			ok "$cmd, $free free descriptors: $cs -> $cb system calls for x$((BIG / SMALL)) depth"
		else
			not_ok "$cmd, $free free descriptors: $cs -> $cb system calls for x$((BIG / SMALL)) depth (> x1.5 linear)"
		fi
	done
done <<EOF
$CMDS
EOF
# cp -a past PATH_MAX / 2 levels (the destination is held by descriptors,
# never reopened by its path from DSTROOT): every level's mode, owner and
# times.
# A file at level 2,400 has hard links at levels 2,450 and 2,500: the copy
# links them to one file (not by a path from DSTROOT: too long).
chain 2500 deep
links() { # links DIR: the levels and inode numbers of f, g, h below DIR
	"$PYTHON" - "$R/$1" "${2:-}" <<'EOF'
import os, sys
fd = os.open(sys.argv[1], os.O_RDONLY | os.O_DIRECTORY)
level, top, seen = 0, -1, []
while True:
    if sys.argv[2] == "make" and level == 2400:
        os.close(os.open("f", os.O_CREAT | os.O_WRONLY, 0o644, dir_fd=fd))
        top = os.open(".", os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
    if sys.argv[2] == "make" and level in (2450, 2500):
        os.link("f", "g" if level == 2450 else "h", src_dir_fd=top, dst_dir_fd=fd)
    for n in ("f", "g", "h"):
        try:
            seen.append((level, n, os.stat(n, dir_fd=fd, follow_symlinks=False).st_ino))
        except FileNotFoundError:
            pass
    try:
        nfd = os.open("d", os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
    except FileNotFoundError:
        break
    os.close(fd)
    fd, level = nfd, level + 1
print(" ".join("%d/%s" % (l, n) for l, n, _ in seen), len(set(i for _, _, i in seen)))
EOF
}
links deep make >/dev/null
rm -rf "$R/copy"
if "$SAFEOPEN" cp -a "$R" deep "$R" copy >"$T/out" 2>&1 && same_chain deep copy; then
	ok "cp -a of 2,500 levels: exit 0, every level's mode, owner and times"
else
	not_ok "cp -a of 2,500 levels: exit 0, every level's mode, owner and times"
	cut -c1-160 "$T/out" | sed 's/^/#   /' | head -3
fi
want="2400/f 2450/g 2500/h 1"
got=$(links copy)
if [ "$got" = "$want" ]; then
	ok "cp -a of 2,500 levels: hard links 100 levels apart, 2,400 deep, kept"
else
	not_ok "cp -a of 2,500 levels: hard links kept (got '$got', want '$want')"
fi
echo "1..$n"
[ "$failed" -eq 0 ]
