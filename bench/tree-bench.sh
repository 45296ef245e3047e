#!/bin/sh
# SPDX-License-Identifier: MIT
# bench/tree-bench.sh (make bench, make bench-tree): the tree commands of
# safeopen next to the GNU tools, one run, one tree of ENTRIES entries
# (default 100,000: 1,000 directories of 99 files, 3 levels): find,
# chown -R (as root; else chmod -R), du -s, cp -a. Prints the median wall
# time of RUNS runs (default 5, warm cache) of each, the ratio safeopen/GNU
# and the system calls per entry of each (strace -c -f, when strace exists).
# The two commands of a row run in turn (pairs), the ratio is the median of
# the pairs' ratios.
#   bench/tree-bench.sh [--entries N] [--runs N] [--dir DIR]
set -u
: "${top_builddir:=.}"
SAFEOPEN=${SAFEOPEN:-"$top_builddir/tools/safeopen/safeopen"}
. "${top_srcdir:-.}/tests/harness/direct.sh"
direct_binary SAFEOPEN
ENTRIES=100000
RUNS=5
DIR=${TMPDIR:-/tmp}
while [ $# -gt 0 ]; do
	case $1 in
	--entries) ENTRIES=$2; shift 2 ;;
	--runs) RUNS=$2; shift 2 ;;
	--dir) DIR=$2; shift 2 ;;
	*) echo "usage: $0 [--entries N] [--runs N] [--dir DIR]" >&2; exit 2 ;;
	esac
done
W=$(mktemp -d "$DIR/tree-bench.XXXXXX") || exit 1
trap 'rm -rf "$W"' EXIT
R=$W/root
mkdir -p "$R"

# The tree: 10 x 10 x 10 directories, files spread over them.
ndirs=1000
per=$(( (ENTRIES - ndirs - 111) / ndirs ))
[ "$per" -ge 0 ] || per=0
python3 - "$R/t" "$per" <<'EOF'
import os, sys
top, per = sys.argv[1], int(sys.argv[2])
os.mkdir(top)
for a in range(10):
    for b in range(10):
        for c in range(10):
            d = os.path.join(top, "a%d" % a, "b%d" % b, "c%d" % c)
            os.makedirs(d)
            for f in range(per):
                p = os.path.join(d, "f%03d" % f)
                with open(p, "wb") as fh:
                    fh.write(b"x" * (f % 7 * 100))
                if f % 50 == 1:
                    os.symlink("f000", p + ".lnk")
EOF
total=$(find "$R/t" | wc -l)
echo "tree-bench: $total entries in $R/t ($RUNS pairs of runs, GNU and safeopen in turn, median, warm cache)"

# once CMD: wall time in milliseconds of one run of the shell command CMD
# (PRE, if set, runs before it, untimed).
once() {
	[ -z "${PRE:-}" ] || eval "$PRE"
	s=$(date +%s%N)
	eval "$1" >/dev/null 2>&1
	e=$(date +%s%N)
	echo $(( (e - s) / 1000000 ))
}
median() { sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }
# calls CMD: system calls per entry of CMD (strace -c -f), or "-".
calls() {
	command -v strace >/dev/null 2>&1 || { echo -; return; }
	[ -z "${PRE:-}" ] || eval "$PRE"
	strace -f -c -o "$W/strace" sh -c "$1" >/dev/null 2>&1
	awk -v n="$total" '$NF == "total" { printf "%.2f", $(NF - 2) / n }' "$W/strace"
}
# row NAME GNU-CMD SAFEOPEN-CMD: RUNS pairs, the two commands in turn (the
# first of a pair alternates), so that a drift of the machine's speed (other
# jobs, writeback of the previous copy) falls on both; prints the median
# time of each and the median of the pairs' ratios.
row() {
	: >"$W/g"; : >"$W/s"; : >"$W/r"
	i=0
	while [ $i -lt "$RUNS" ]; do
		if [ $((i % 2)) -eq 0 ]; then
			g=$(once "$2"); s=$(once "$3")
		else
			s=$(once "$3"); g=$(once "$2")
		fi
		echo "$g" >>"$W/g"; echo "$s" >>"$W/s"
		awk -v a="$s" -v b="$g" 'BEGIN { if (b > 0) printf "%.4f\n", a / b; else print 0 }' >>"$W/r"
		i=$((i + 1))
	done
	gt=$(median <"$W/g"); st=$(median <"$W/s")
	ratio=$(sort -n "$W/r" | awk '{ a[NR] = $1 } END { printf "%.2f", a[int((NR + 1) / 2)] }')
	gc=$(calls "$2"); sc=$(calls "$3")
	printf '%-10s %8s %10s %7s %12s %12s\n' "$1" "$gt" "$st" "$ratio" "$gc" "$sc"
}
export R W SAFEOPEN
find "$R/t" >/dev/null; du -s "$R/t" >/dev/null
printf '%-10s %8s %10s %7s %12s %12s\n' command "GNU ms" "safeopen" ratio "GNU sc/ent" "so sc/ent"
row find 'find "$R/t"' '"$SAFEOPEN" "$R" find t'
if [ "$(id -u)" -eq 0 ]; then
	row "chown -R" 'chown -R 0:0 "$R/t"' '"$SAFEOPEN" "$R" chown -R 0:0 t'
else
	row "chmod -R" 'chmod -R u+w "$R/t"' '"$SAFEOPEN" "$R" chmod -R u+w t'
fi
row "du -s" 'du -s "$R/t"' '"$SAFEOPEN" "$R" du -s t'
PRE='rm -rf "$W/c1" "$W/c2"; mkdir "$W/c2"'
row "cp -a" 'cp -a "$R/t" "$W/c1"' '"$SAFEOPEN" cp -a "$R" t "$W/c2" c'
PRE=
