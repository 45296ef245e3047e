#!/bin/sh
# SPDX-License-Identifier: MIT
# bench/extract-bench.sh: extraction time of `safeopen extract` (fast path
# and walker) next to GNU tar and bsdtar, on the release tarball and on a
# synthetic archive of 10,000 small files. Prints a Markdown table of the
# median wall time of RUNS runs (each into a fresh directory; the removal is
# not timed). A benchmark, never a test: `make bench-extract`.
#
#     extract-bench.sh [--runs N] [--dir DIR] [--files N] [TARBALL...]
#
# SAFEOPEN (environment) is the safeopen binary (default: examples/safeopen
# of the build directory, top_builddir).
set -u
: "${top_builddir:=.}"
SAFEOPEN=${SAFEOPEN:-"$top_builddir/examples/safeopen"}
RUNS=5
DIR=${TMPDIR:-/tmp}
NFILES=10000
while [ $# -gt 0 ]; do
	case $1 in
	--runs) RUNS=$2; shift 2 ;;
	--dir) DIR=$2; shift 2 ;;
	--files) NFILES=$2; shift 2 ;;
	--) shift; break ;;
	-*) echo "usage: extract-bench.sh [--runs N] [--dir DIR] [--files N] [TARBALL...]" >&2; exit 2 ;;
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
tar -C "$W/src" -cf "$W/small-files.tar" .
rm -rf "$W/src"

now() { date +%s%N; }
# time_ms CMD...: median of RUNS runs, in milliseconds (or "error")
time_ms() {
	: >"$W/times"
	i=0
	while [ $i -lt "$RUNS" ]; do
		rm -rf "$W/dest"; mkdir "$W/dest"
		sync
		t0=$(now)
		"$@" >/dev/null 2>"$W/err" || { echo error; return; }
		t1=$(now)
		echo $(((t1 - t0) / 1000)) >>"$W/times"
		i=$((i + 1))
	done
	sort -n "$W/times" | awk '{ a[NR] = $1 } END { m = a[int((NR + 1) / 2)]; printf "%.1f", m / 1000 }'
}

echo "Extraction time, median of $RUNS runs, milliseconds ($(nproc) CPUs, load $(cut -d' ' -f1 /proc/loadavg), $(df -T "$DIR" | awk 'NR==2 { print $2 }') at $DIR)"
echo
printf '| archive | entries | safeopen extract | safeopen --walker extract | GNU tar | bsdtar |\n'
printf '|---|---:|---:|---:|---:|---:|\n'
for arc in "$W/small-files.tar" "$@"; do
	[ -r "$arc" ] || { echo "extract-bench: $arc: not readable" >&2; continue; }
	entries=$(tar -tf "$arc" | wc -l)
	so=$(time_ms "$SAFEOPEN" "$W/dest" extract "$arc")
	sw=$(time_ms "$SAFEOPEN" --walker "$W/dest" extract "$arc")
	gt=$(time_ms tar -xf "$arc" -C "$W/dest")
	if command -v bsdtar >/dev/null; then bt=$(time_ms bsdtar -xf "$arc" -C "$W/dest"); else bt=n/a; fi
	printf '| %s | %s | %s | %s | %s | %s |\n' "${arc##*/}" "$entries" "$so" "$sw" "$gt" "$bt"
done
