#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/tools/test-tree-cost.sh: the tree commands of safeopen cost O(depth)
# system calls whatever the descriptor budget. On a chain of directories
# t/d/d/.../d, `du -s`, `find`, `chmod -R`, `chown -R`, `rm -r` and `cp -a`
# (16 free descriptors and more; it also checks every level's mode, owner
# and times, and copies a chain whose path is longer than PATH_MAX: 400
# levels of 12-letter names here, 2,500 of "d" under check-long) run under
# `ulimit -n` = 3 + 5, 16 (and 40 and 64 under check-long) free descriptors, counted by
# `perf stat -e raw_syscalls:sys_enter` where perf may read that tracepoint
# (root; no ptrace stop per call: a third of strace's time), else by
# `strace -f -c` (system calls, never time); 4 times the depth must cost at
# most 6 times the calls (1.5x linear). Depths 50 and 200 here (du -s, rm -r
# and cp -a at 5 and 16 free descriptors), 1,000 and 4,000 (every command at
# every budget) under make check-long
# (SAFEOPEN_CHECK_LONG=1); COST_DEPTHS="A B" chooses others. COST_TABLE=1
# prints every count (the table in the notes of issue 36). At 50 and 200 the
# code before b30ad87 (its walk gave back its checkpoints first under EMFILE)
# fails du -s and rm -r at 5 free descriptors (EMFILE) and at 16 (x8.6 and
# x9.0: quadratic), and every cp -a check (at 64 too: 64 free descriptors
# run under check-long); at 25 and 100 it would pass at 16 with only x6.6 and
# x6.8.
set -u
# the system's python3 first: a version-manager shim (pyenv) costs ~0.5 CPU-s
# a start
PYTHON=$(command -v /usr/bin/python3 python3 | head -1)
[ -n "$PYTHON" ] || { echo "1..0 # SKIP python3 is not installed"; exit "${SAFEOPEN_SKIP_STATUS:-77}"; }
# Descriptors inherited (the test driver's, make's) are closed once: the
# script starts again without them, knowing whether openat2 works (without
# it, before 5.6 or refused by a seccomp profile, a level is reopened one
# name at a time: the checkpoints keep that near-linear only while they can
# be held (64 free descriptors); the other budgets are then measured, not
# asserted, and 5 free descriptors are one too few).
if [ -z "${TREE_COST_HAVE_OPENAT2:-}" ]; then
	exec "$PYTHON" -c '
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
how = (ctypes.c_uint64 * 3)(os.O_PATH, 0, 0)
fd = libc.syscall(437, -100, b".", how, 24)  # openat2: one number on every architecture but alpha
os.environ["TREE_COST_HAVE_OPENAT2"] = "1" if fd >= 0 else "0"
os.closerange(3, os.sysconf("SC_OPEN_MAX"))
os.execv("/bin/sh", ["/bin/sh"] + sys.argv[1:])
' "$0" "$@"
fi
: "${top_builddir:=.}"
SAFEOPEN=${SAFEOPEN:-"$top_builddir/tools/safeopen/safeopen"}
. "${top_srcdir:-.}/tests/harness/direct.sh"
. "${top_srcdir:-.}/tests/harness/partial.sh"
[ -x "$SAFEOPEN" ] || bail "test-tree-cost: $SAFEOPEN not built"
direct_binary SAFEOPEN
have_openat2=$TREE_COST_HAVE_OPENAT2

# Quick: the walk (du), the removal (rm -r, its own walk) and the copy (cp
# -a, which holds its destination too) at 5 and 16 free descriptors, where
# the old walk failed (at these depths 40 finds nothing that 16 does not: the
# old walk's ring held 40 levels; cp -a needs more than 5: a SKIP line); long:
# every tree command at 5, 16, 40 and 64. Each line: the budgets, then the
# command.
SMALL=50 BIG=200 DEEP=400 LEVEL=dddddddddddd BUDGETS="5 16"
CMDS='5 16:du -s
5 16:rm -r
5 16:cp -a'
[ -z "${SAFEOPEN_CHECK_LONG:-}" ] || { SMALL=1000 BIG=4000 DEEP=2500 LEVEL=d BUDGETS="5 16 40 64"; CMDS="$BUDGETS:du -s
$BUDGETS:find
$BUDGETS:chmod -R 755
$BUDGETS:chown -R $(id -u):$(id -g)
$BUDGETS:rm -r
$BUDGETS:cp -a"; }
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
# The counter: perf (its -x output on its standard error, like the
# program's: its -o file would stay open in the program, one descriptor
# fewer), else strace, which must be able to trace its child (a container
# may forbid ptrace).
counter=
perf stat -x, -e raw_syscalls:sys_enter true >/dev/null 2>"$T/probe"
while IFS= read -r c_line; do
	case $c_line in [0-9]*,raw_syscalls:sys_enter,*) counter=perf ;; esac
done <"$T/probe"
if [ -z "$counter" ]; then
	command -v strace >/dev/null 2>&1 ||
		{ echo "1..0 # SKIP neither perf (raw_syscalls:sys_enter) nor strace can count here"; exit "${SAFEOPEN_SKIP_STATUS:-77}"; }
	strace -f -c -o "$T/probe" true >/dev/null 2>&1 ||
		{ echo "1..0 # SKIP strace cannot trace here (ptrace refused), perf cannot count"; exit "${SAFEOPEN_SKIP_STATUS:-77}"; }
	counter=strace
fi

n=0
failed=0
echo "# system calls counted by $counter"
ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() { n=$((n + 1)); failed=$((failed + 1)); echo "not ok $n - $1"; }

# chain NAME:DEPTH:LEVEL[:links]...: ROOT/NAME/LEVEL/LEVEL/... DEPTH levels
# below each NAME (by descriptors: deeper than PATH_MAX), in one process;
# "links": a file f at level DEPTH - 100 with hard links g and h at levels
# DEPTH - 50 and DEPTH.
chain() {
	"$PYTHON" - "$R" "$@" <<'EOF' || exit 99
import os, sys
root = sys.argv[1]
for arg in sys.argv[2:]:
    name, depth, level, links = (arg.split(":") + [""])[:4]
    depth = int(depth)
    os.mkdir(os.path.join(root, name))
    fd = os.open(os.path.join(root, name), os.O_RDONLY | os.O_DIRECTORY)
    for i in range(depth):
        if links and i == depth - 100:
            os.close(os.open("f", os.O_CREAT | os.O_WRONLY, 0o644, dir_fd=fd))
            top = os.dup(fd)
        if links and i == depth - 50:
            os.link("f", "g", src_dir_fd=top, dst_dir_fd=fd)
        os.mkdir(level, dir_fd=fd)
        n = os.open(level, os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
        # Modes and times that differ from level to level (for cp -a).
        os.fchmod(fd, 0o700 | (i % 8) << 3)
        os.utime(fd, (1000000 + i, 2000000 + i))
        os.close(fd)
        fd = n
    if links:
        os.link("f", "h", src_dir_fd=top, dst_dir_fd=fd)
        os.close(top)
    os.close(fd)
EOF
}

# verdicts SPEC...: one Python for the checks of the copies, in order; for
# each SPEC its "#" lines, then "= ok" or "= bad" (same) or "= LIST" (links):
# same:LEVEL:A:B  ROOT/A and ROOT/B are chains of the same depth whose
#                 levels have the same mode, owner and modification time;
# links:DIR       the levels and inode numbers of f, g, h below ROOT/DIR
#                 ("L/NAME ..." and the number of distinct inodes).
verdicts() {
	"$PYTHON" - "$R" "$LEVEL" "$@" <<'EOF'
import os, stat, sys
root, chain_name = sys.argv[1], sys.argv[2]


def same(name, x, y):
    a = os.open(os.path.join(root, x), os.O_RDONLY | os.O_DIRECTORY)
    b = os.open(os.path.join(root, y), os.O_RDONLY | os.O_DIRECTORY)
    level, bad = 0, 0
    while True:
        sa, sb = os.fstat(a), os.fstat(b)
        fa = (stat.S_IMODE(sa.st_mode), sa.st_uid, sa.st_gid, sa.st_mtime_ns)
        fb = (stat.S_IMODE(sb.st_mode), sb.st_uid, sb.st_gid, sb.st_mtime_ns)
        if fa != fb:
            bad += 1
            if bad <= 3:
                print("#   %s level %d: %s, copy %s" % (x, level, fa, fb))
        try:
            na = os.open(name, os.O_RDONLY | os.O_DIRECTORY, dir_fd=a)
        except FileNotFoundError:
            na = -1
        try:
            nb = os.open(name, os.O_RDONLY | os.O_DIRECTORY, dir_fd=b)
        except FileNotFoundError:
            nb = -1
        os.close(a)
        os.close(b)
        if na < 0 or nb < 0:
            if na != nb:
                print("#   %s: depth differs at level %d" % (x, level))
                bad += 1
            break
        a, b, level = na, nb, level + 1
    return "bad" if bad else "ok"


def links(d):
    fd = os.open(os.path.join(root, d), os.O_RDONLY | os.O_DIRECTORY)
    level, seen = 0, []
    while True:
        for n in ("f", "g", "h"):
            try:
                seen.append((level, n, os.stat(n, dir_fd=fd, follow_symlinks=False).st_ino))
            except FileNotFoundError:
                pass
        try:
            nfd = os.open(chain_name, os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
        except FileNotFoundError:
            break
        os.close(fd)
        fd, level = nfd, level + 1
    return "%s %d" % (" ".join("%d/%s" % (l, n) for l, n, _ in seen),
                      len(set(i for _, _, i in seen)))


for spec in sys.argv[3:]:
    kind, args = spec.split(":", 1)
    try:
        print("= " + (same(*args.split(":")) if kind == "same" else links(args)))
    except OSError as e:
        print("#   %s: %s" % (spec, e))
        print("= bad")
EOF
}

# calls FREE CMD...: the system calls of `safeopen ROOT CMD...` (as counted by
# $counter) with FREE
# descriptors free beyond 0-2 (empty when it failed).
calls() {
	free=$1
	shift
	case $1 in cp) ;; *) set -- "$R" "$@" ;; esac
	if [ $counter = perf ]; then
		set -- perf stat -x, -e raw_syscalls:sys_enter "$SAFEOPEN" "$@"
	else
		set -- strace -f -c -o "$T/count" "$SAFEOPEN" "$@"
	fi
	if (ulimit -n $((free + 3)) && exec "$@") </dev/null >/dev/null 2>"$T/err"; then
		if [ $counter = perf ]; then
			# "COUNT,,raw_syscalls:sys_enter,..."
			while IFS= read -r c_line; do
				case $c_line in *,raw_syscalls:sys_enter,*) echo "${c_line%%,*}" ;; esac
			done <"$T/err"
		else
			# the calls column of the last line (errors may be blank)
			while read -r c_pct c_sec c_usec c_calls c_rest; do
				case $c_rest in total | *' 'total) echo "$c_calls" ;; esac
			done <"$T/count"
		fi
	else
		cut -c1-160 "$T/err" | sed 's/^/#   /' | head -3
	fi
}

# s and b, and one of each per budget for rm -r; the deep chain (below).
chains="s:$SMALL:d b:$BIG:d"
for free in $(printf '%s\n' "$CMDS" | sed -n 's/:rm -r$//p'); do
	chains="$chains s$free:$SMALL:d b$free:$BIG:d"
done
# shellcheck disable=SC2086 # the names have no blanks
chain $chains deep:$DEEP:$LEVEL:links
copies=
while IFS=: read -r budgets cmd; do
	for free in $budgets; do
		s=s b=b
		[ "$cmd" != "rm -r" ] || { s=s$free b=b$free; }
		if [ "$cmd" = "cp -a" ]; then
			if [ "$free" -lt 16 ]; then
				# Its two roots and the descriptors kept for a
				# file's copy come first.
				ok "cp -a with $free free descriptors # SKIP cp -a needs more than 5"
				continue
			fi
			# the copies checked at the end (verdicts)
			cs=$(calls "$free" cp -a "$R" s "$R" cs$free)
			cb=$(calls "$free" cp -a "$R" b "$R" cb$free)
			copies="$copies $free"
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
# cp -a of a chain whose path is longer than PATH_MAX ($DEEP levels named
# $LEVEL: the destination is held by descriptors, never reopened by its path
# from DSTROOT): every level's mode, owner and times.
# A file at level DEEP - 100 has hard links at levels DEEP - 50 and DEEP: the
# copy links them to one file (not by a path from DSTROOT: too long).
what="cp -a of $DEEP levels, a path of $((DEEP * (${#LEVEL} + 1))) bytes"
"$SAFEOPEN" cp -a "$R" deep "$R" copy >"$T/out" 2>&1; rc=$?
specs=
for free in $copies; do specs="$specs same:d:s:cs$free same:d:b:cb$free"; done
# shellcheck disable=SC2086 # the names have no blanks
verdicts $specs "same:$LEVEL:deep:copy" links:copy >"$T/verdicts"
# verdict: the next result of $T/verdicts in v, its "#" lines in v_notes
exec 4<"$T/verdicts"
verdict() {
	v_notes=
	while IFS= read -r v <&4; do
		case $v in '= '*) v=${v#= }; return ;; esac
		v_notes="$v_notes$v
"
	done
	v=missing
}
for free in $copies; do
	verdict; v1=$v n1=$v_notes; verdict
	if [ "$v1 $v" = "ok ok" ]; then
		ok "cp -a, $free free descriptors: every level's mode, owner and times"
	else
		not_ok "cp -a, $free free descriptors: every level's mode, owner and times"
		printf '%s' "$n1$v_notes"
	fi
done
verdict
if [ $rc -eq 0 ] && [ "$v" = ok ]; then
	ok "$what: exit 0, every level's mode, owner and times"
else
	not_ok "$what: exit 0, every level's mode, owner and times"
	printf '%s' "$v_notes"
	cut -c1-160 "$T/out" | sed 's/^/#   /' | head -3
fi
want="$((DEEP - 100))/f $((DEEP - 50))/g $DEEP/h 1"
verdict; got=$v
if [ "$got" = "$want" ]; then
	ok "$what: hard links 50 and 100 levels apart, $((DEEP - 100)) deep, kept"
else
	not_ok "$what: hard links kept (got '$got', want '$want')"
fi
exec 4<&-
echo "1..$n"
[ "$failed" -eq 0 ]
