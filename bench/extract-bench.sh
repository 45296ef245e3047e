#!/bin/sh
# SPDX-License-Identifier: MIT
# bench/extract-bench.sh: extraction time and system calls of `safeopen
# extract` (fast path and walker) next to GNU tar and bsdtar, in one run, on
#  - a synthetic archive of 10,000 small files in 100 directories,
#  - plain tars of two large real trees, /usr/include and tzdata's
#    /usr/share/zoneinfo (each skipped if absent),
#  - the archives given as arguments (e.g. the release tarball).
# Prints Markdown tables: wall time and CPU time (user + system of the tool
# and its children, from wait4) in milliseconds, min and median of RUNS runs
# (the tools take turns, in an order rotating from run to run, each into a
# fresh directory; the removal is not timed), with safeopen's ratios to GNU
# tar and bsdtar (of the minima); and, with strace, the system calls per
# entry of each tool (strace -f -c, one run). On a shared machine the wall
# time also waits for a processor; the CPU time does not. A benchmark, never
# a test: `make bench-extract`.
#
#     extract-bench.sh [--runs N] [--dir DIR] [--files N] [--no-system] [TARBALL...]
#
# SAFEOPEN (environment) is the safeopen binary (default: tools/safeopen/safeopen
# of the build directory, top_builddir).
set -u
: "${top_builddir:=.}"
SAFEOPEN=${SAFEOPEN:-"$top_builddir/tools/safeopen/safeopen"}
RUNS=5
DIR=${TMPDIR:-/tmp}
NFILES=10000
SYSTEM=yes
while [ $# -gt 0 ]; do
	case $1 in
	--runs) RUNS=$2; shift 2 ;;
	--dir) DIR=$2; shift 2 ;;
	--files) NFILES=$2; shift 2 ;;
	--no-system) SYSTEM=; shift ;;
	--) shift; break ;;
	-*) echo "usage: extract-bench.sh [--runs N] [--dir DIR] [--files N] [--no-system] [TARBALL...]" >&2; exit 2 ;;
	*) break ;;
	esac
done
# the libtool wrapper would add a shell to every run: use the binary itself
if [ -x "${SAFEOPEN%/*}/.libs/safeopen" ] && [ -d "$top_builddir/lib/.libs" ]; then
	SAFEOPEN=${SAFEOPEN%/*}/.libs/safeopen
	LD_LIBRARY_PATH=$(cd "$top_builddir/lib/.libs" && pwd)${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
	export LD_LIBRARY_PATH
fi
"$SAFEOPEN" . extract --help | grep -q 'built without libarchive' &&
	{ echo "extract-bench: safeopen was built without libarchive" >&2; exit 1; }

W=$(mktemp -d "$DIR/extract-bench.XXXXXX") || exit 1
trap 'rm -rf "$W"' EXIT

# the synthetic archive: NFILES files of 100 bytes in 100 directories
mkdir "$W/src"
PYTHON=${PYTHON:-$(command -v /usr/bin/python3 python3 | head -1)}
"$PYTHON" - "$W/src" "$NFILES" <<'EOF'
import os, sys
root, n = sys.argv[1], int(sys.argv[2])
for i in range(n):
    d = os.path.join(root, "d%03d" % (i % 100))
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "f%05d" % i), "w") as f:
        f.write(("%05d " % i) * 16 + "\n"[:100 - 96])
EOF
# sorted by name, as a tree archived directory by directory is
tar -C "$W/src" --sort=name -cf "$W/small-files.tar" .
rm -rf "$W/src"
set -- "$W/small-files.tar" "$@"
if [ -n "$SYSTEM" ] && [ -d /usr/include ]; then
	tar -C /usr -cf "$W/usr-include.tar" include 2>/dev/null && set -- "$@" "$W/usr-include.tar"
fi
if [ -n "$SYSTEM" ] && [ -d /usr/share/zoneinfo ]; then
	tar -C /usr/share -cf "$W/tzdata.tar" zoneinfo 2>/dev/null && set -- "$@" "$W/tzdata.tar"
fi

HAVE_BSDTAR=; command -v bsdtar >/dev/null && HAVE_BSDTAR=yes
# the tools: safeopen, safeopen --walker, GNU tar, bsdtar
tool_cmd() { # tool_cmd TOOL ARCHIVE DEST: the command line
	case $1 in
	so) echo "$SAFEOPEN $3 extract $2" ;;
	sw) echo "$SAFEOPEN --walker $3 extract $2" ;;
	gt) echo "tar -xf $2 -C $3" ;;
	bt) echo "bsdtar -xf $2 -C $3" ;;
	esac
}
TOOLS="so sw gt"; [ -n "$HAVE_BSDTAR" ] && TOOLS="$TOOLS bt"

# measure ARCHIVE: RUNS rounds, each tool once per round, in an order that
# rotates from round to round (no tool always goes first); $W/t.TOOL gets one
# line per run, "WALL_US CPU_US", and "error" if the tool failed. Timed by a
# helper that spawns the tool and reaps it with wait4 (its own start-up and
# the removal of the previous tree are outside the interval).
measure() {
	for t in $TOOLS; do echo "$t $(tool_cmd $t "$1" "$W/dest")"; done >"$W/cmds"
	"$PYTHON" -c '
import os, shutil, subprocess, sys, time
w, runs = sys.argv[1], int(sys.argv[2])
cmds = {}
for line in open(os.path.join(w, "cmds")):
    t, *argv = line.split()
    cmds[t] = argv
tools = list(cmds)
out = {t: open(os.path.join(w, "t." + t), "w") for t in tools}
dest = os.path.join(w, "dest")
null = os.open(os.devnull, os.O_WRONLY)
err = os.open(os.path.join(w, "err"), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
for i in range(runs):
    for t in tools[i % len(tools):] + tools[:i % len(tools)]:
        if os.path.lexists(dest):
            subprocess.run(["chmod", "-R", "u+rwx", dest], stderr=subprocess.DEVNULL)
            shutil.rmtree(dest)
        os.mkdir(dest)
        os.sync()
        t0 = time.perf_counter_ns()
        pid = os.posix_spawnp(cmds[t][0], cmds[t], os.environ,
                              file_actions=[(os.POSIX_SPAWN_DUP2, null, 1),
                                            (os.POSIX_SPAWN_DUP2, err, 2)])
        _, status, ru = os.wait4(pid, 0)
        t1 = time.perf_counter_ns()
        if os.waitstatus_to_exitcode(status) != 0:
            out[t].write("error\n")
        out[t].write("%d %d\n" % ((t1 - t0) // 1000, (ru.ru_utime + ru.ru_stime) * 1e6))
' "$W" "$RUNS" || exit 1
}
# stat_ms TOOL COLUMN (1 wall, 2 CPU): "min / median" in ms, or "error"
stat_ms() {
	grep -q error "$W/t.$1" && { echo error; return; }
	awk -v c="$2" '{ print $c }' "$W/t.$1" | sort -n |
		awk '{ a[NR] = $1 } END { printf "%.1f / %.1f", a[1] / 1000, a[int((NR + 1) / 2)] / 1000 }'
}
min_us() { awk -v c="$2" '{ print $c }' "$W/t.$1" | sort -n | head -1; }
ratio() { # ratio A B COLUMN: min(A) / min(B)
	grep -q error "$W/t.$1" "$W/t.$2" && { echo n/a; return; }
	awk -v a="$(min_us "$1" "$3")" -v b="$(min_us "$2" "$3")" 'BEGIN { printf "%.2f", a / b }'
}

echo "Extraction time, milliseconds, min / median of $RUNS runs taken in turns ($(nproc) CPUs, load $(cut -d' ' -f1 /proc/loadavg), $(df -T "$DIR" | awk 'NR==2 { print $2 }') at $DIR); ratios of the minima"
echo
printf '| archive | entries | time | safeopen extract | safeopen --walker extract | GNU tar | bsdtar | safeopen / GNU tar | safeopen / bsdtar |\n'
printf '|---|---:|---|---:|---:|---:|---:|---:|---:|\n'
for arc in "$@"; do
	[ -r "$arc" ] || { echo "extract-bench: $arc: not readable" >&2; continue; }
	entries=$(tar -tf "$arc" | wc -l)
	echo "$arc $entries" >>"$W/archives"
	measure "$arc"
	for col in 1 2; do
		what=wall; [ $col = 2 ] && what=CPU
		bt=n/a rb=n/a
		[ -n "$HAVE_BSDTAR" ] && { bt=$(stat_ms bt $col); rb=$(ratio so bt $col); }
		printf '| %s | %s | %s | %s | %s | %s | %s | %s | %s |\n' "${arc##*/}" "$entries" "$what" \
			"$(stat_ms so $col)" "$(stat_ms sw $col)" "$(stat_ms gt $col)" "$bt" \
			"$(ratio so gt $col)" "$rb"
	done
done
echo
echo "(load at the end: $(cut -d' ' -f1-3 /proc/loadavg))"

command -v strace >/dev/null || { echo; echo "(no strace: system calls not counted)"; exit 0; }
echo
echo "System calls per entry (strace -f -c, one run; in parentheses the calls that failed)"
echo
printf '| archive | entries | safeopen extract | safeopen --walker extract | GNU tar | bsdtar |\n'
printf '|---|---:|---:|---:|---:|---:|\n'
while read -r arc entries; do
	row="| ${arc##*/} | $entries |"
	for t in so sw gt bt; do
		case " $TOOLS " in *" $t "*) ;; *) row="$row n/a |"; continue ;; esac
		chmod -R u+rwx "$W/dest" 2>/dev/null; rm -rf "$W/dest"; mkdir "$W/dest"
		strace -f -c -o "$W/strace" $(tool_cmd $t "$arc" "$W/dest") >/dev/null 2>&1
		row="$row $(awk -v n="$entries" '$NF == "total" { e = (NF == 6) ? $(NF - 1) : 0;
			printf "%.2f (%.2f)", $4 / n, e / n }' "$W/strace") |"
	done
	echo "$row"
done <"$W/archives"
