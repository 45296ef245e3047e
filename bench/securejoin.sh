#!/bin/sh
# SPDX-License-Identifier: MIT
# bench/securejoin.sh: the userspace walker against filepath-securejoin's
# SecureJoin(root, path) + open, shape by shape (issue 19: the walker below
# SecureJoin + open on every shape). A benchmark, never a test:
# `make bench-securejoin`.
#
#     securejoin.sh [BENCH_ARGS...]
#
# Builds bench/securejoin/main.go (GOPATH mode, offline, against Debian's
# packaged sources) into the build directory, runs `bench/bench --only shapes
# --clock cpu ARGS --csv ...` and then the Go program with the same ARGS (it
# takes bench/bench's options), and joins the two CSVs into one table. The
# two figures of a row come from two processes run one after the other:
# their ratio is noisier than bench/bench's in-process ratios.
#
# Environment: top_builddir, top_srcdir (default .), GO (default go),
# SECUREJOIN_GOPATH (default /usr/share/gocode).
set -u
: "${top_builddir:=.}"
: "${top_srcdir:=.}"
GO=${GO:-go}
SECUREJOIN_GOPATH=${SECUREJOIN_GOPATH:-/usr/share/gocode}
pkg=github.com/cyphar/filepath-securejoin
install_hint="apt-get install golang-go golang-github-cyphar-filepath-securejoin-dev"

if ! command -v "$GO" >/dev/null 2>&1; then
	echo "bench-securejoin: '$GO' not found: nothing measured."
	echo "  Install Go and the SecureJoin sources (Debian 12: $install_hint)."
	exit 0
fi
if [ ! -f "$SECUREJOIN_GOPATH/src/$pkg/join.go" ]; then
	echo "bench-securejoin: $pkg not found under $SECUREJOIN_GOPATH/src: nothing measured."
	echo "  Install it (Debian 12: $install_hint), or set SECUREJOIN_GOPATH to a GOPATH holding it."
	exit 0
fi

b=$top_builddir/bench
exe=$b/securejoin-bench
echo "building $exe ($("$GO" version))"
# GOPATH mode: no module download; the build cache stays in the build tree.
GO111MODULE=off GOPATH=$SECUREJOIN_GOPATH GOCACHE=$(cd "$b" && pwd)/.gocache GOFLAGS='' \
	"$GO" build -o "$exe" "$top_srcdir/bench/securejoin/main.go" || exit 1

walker_csv=$b/securejoin-walker.csv
go_csv=$b/securejoin-go.csv
rm -f "$walker_csv" "$go_csv"
echo
"$b/bench" --only shapes --clock cpu "$@" --csv "$walker_csv" || exit 1
echo
"$exe" --clock cpu "$@" --csv "$go_csv" || exit 1

echo
echo "Walker against SecureJoin + open: ns per call (median; thread CPU time unless BENCH_ARGS"
echo "says --clock wall), two processes one after the other; met~: the medians miss, but the"
echo "walker's fastest batch is below SecureJoin's median (within batch spread)"
"${AWK:-awk}" -F, '
FNR == 1 { file++; next }
$1 != "shape" { next }
file == 1 && $4 == "safe-walker" { w[$2, $5] = $6; if (!($2 in seen)) { seen[$2] = 1; order[n++] = $2 } }
file == 2 && $4 == "securejoin-open" { s[$2, $5] = $6 }
function num(v) { return v == "" ? "-" : sprintf("%.0f", v) }
END {
	printf "%-10s %12s %14s %8s %9s %9s  %s\n", "shape", "walker", "SecureJoin+op", "w/SJ",
	       "sys walk", "sys SJ", "walker below SecureJoin+open"
	met = missed = none = spread = 0
	for (i = 0; i < n; i++) {
		k = order[i]
		wm = w[k, "median"]; sm = s[k, "median"]
		if (w[k, "status"] != "ok" || s[k, "status"] != "ok" || wm == "" || sm == "") {
			v = "- (walker " (w[k, "status"] == "" ? "absent" : w[k, "status"]) \
			    ", SecureJoin " (s[k, "status"] == "" ? "absent" : s[k, "status"]) ")"
			q = "-"; none++
		} else {
			q = sprintf("%.2f", wm / sm)
			if (wm + 0 < sm + 0) { v = "met"; met++ }
			else if (w[k, "min"] + 0 < sm + 0) { v = "met~"; met++; spread++ }
			else { v = "MISSED"; missed++ }
		}
		printf "%-10s %12s %14s %8s %9s %9s  %s\n", k, num(wm), num(sm), q,
		       (w[k, "syscalls_per_call"] == "" ? "-" : w[k, "syscalls_per_call"]),
		       (s[k, "syscalls_per_call"] == "" ? "-" : s[k, "syscalls_per_call"]), v
	}
	printf "walker below SecureJoin+open: %d of %d shapes met (%d within batch spread), %d missed, " \
	       "%d not compared\n", met, n, spread, missed, none
}' "$walker_csv" "$go_csv"
echo "CSV: $walker_csv $go_csv"
