#!/bin/sh
# SPDX-License-Identifier: MIT
# bench/extract-bench.sh: extraction time and system calls of `safeopen
# extract` (fast path and walker) next to GNU tar and bsdtar, in one run, on
#  - a synthetic archive of 10,000 small files in 100 directories,
#  - a plain tar of /usr/include (a large real tree; skipped if absent),
#  - the archives given as arguments (e.g. the release tarball).
# Prints two Markdown tables: wall time in milliseconds, min and median of
# RUNS runs (the tools take turns, in an order rotating from run to run, each
# into a fresh directory;
# the removal is not timed), with safeopen's ratios to GNU tar and bsdtar
# (of the minima); and, with strace, the system calls per entry of each tool
# (strace -f -c, one run). A benchmark, never a test: `make bench-extract`.
#
#     extract-bench.sh [--runs N] [--dir DIR] [--files N] [--no-system] [TARBALL...]
#
# SAFEOPEN (environment) is the safeopen binary (default: examples/safeopen
# of the build directory, top_builddir).
set -u
: "${top_builddir:=.}"
SAFEOPEN=${SAFEOPEN:-"$top_builddir/examples/safeopen"}
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

now() { date +%s%N; }
# measure ARCHIVE: RUNS rounds, each tool once per round; $W/t.TOOL gets the
# times in microseconds ("error" on failure)
measure() {
	for t in $TOOLS; do : >"$W/t.$t"; done
	i=0
	while [ $i -lt "$RUNS" ]; do
		# the order rotates from round to round: no tool always goes first
		order=$(echo $TOOLS $TOOLS | awk -v i=$i '{ n = NF / 2; s = i % n;
			for (k = 1; k <= n; k++) printf "%s ", $(s + k) }')
		for t in $order; do
			chmod -R u+rwx "$W/dest" 2>/dev/null; rm -rf "$W/dest"; mkdir "$W/dest"
			sync
			t0=$(now)
			$(tool_cmd $t "$1" "$W/dest") >/dev/null 2>"$W/err" || echo error >>"$W/t.$t"
			t1=$(now)
			echo $(((t1 - t0) / 1000)) >>"$W/t.$t"
		done
		i=$((i + 1))
	done
}
# stat TOOL: "min / median" in ms, or "error"
stat_ms() {
	grep -q error "$W/t.$1" && { echo error; return; }
	sort -n "$W/t.$1" | awk '{ a[NR] = $1 } END { printf "%.1f / %.1f", a[1] / 1000, a[int((NR + 1) / 2)] / 1000 }'
}
min_us() { sort -n "$W/t.$1" | head -1; }
ratio() { # ratio A B: min(A) / min(B)
	grep -q error "$W/t.$1" "$W/t.$2" && { echo n/a; return; }
	awk -v a="$(min_us "$1")" -v b="$(min_us "$2")" 'BEGIN { printf "%.2f", a / b }'
}

echo "Extraction time, milliseconds, min / median of $RUNS runs taken in turns ($(nproc) CPUs, load $(cut -d' ' -f1 /proc/loadavg), $(df -T "$DIR" | awk 'NR==2 { print $2 }') at $DIR)"
echo
printf '| archive | entries | safeopen extract | safeopen --walker extract | GNU tar | bsdtar | safeopen / GNU tar | safeopen / bsdtar |\n'
printf '|---|---:|---:|---:|---:|---:|---:|---:|\n'
for arc in "$@"; do
	[ -r "$arc" ] || { echo "extract-bench: $arc: not readable" >&2; continue; }
	entries=$(tar -tf "$arc" | wc -l)
	echo "$arc $entries" >>"$W/archives"
	measure "$arc"
	bt=n/a rb=n/a
	[ -n "$HAVE_BSDTAR" ] && { bt=$(stat_ms bt); rb=$(ratio so bt); }
	printf '| %s | %s | %s | %s | %s | %s | %s | %s |\n' "${arc##*/}" "$entries" \
		"$(stat_ms so)" "$(stat_ms sw)" "$(stat_ms gt)" "$bt" "$(ratio so gt)" "$rb"
done

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
