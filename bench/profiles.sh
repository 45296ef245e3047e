#!/bin/sh
# bench/profiles.sh NATIVE_CSV PROFILE... [-- BENCH_ARGS...]
#
# The shapes of bench/bench under each kernel profile (tests/harness/kernel-profile:
# a seccomp filter that makes this kernel look like an older one, in force for
# the whole benchmark process, so every method pays it alike), then one table
# of walker / realpath per shape: the native run (NATIVE_CSV, written by the
# run before this one) and each profile. Called by `make bench` from the
# build directory (BENCH_PROFILES picks the profiles).
#
# A ratio is the median of the per-round ratios, as bench/bench reports it;
# "~" marks one over 1.00 whose lowest round is at or below 1.00 (within the
# batch spread: the issue counts it as met only when a second run agrees).
set -u
AWK=${AWK:-awk}
native=$1
shift
profiles=
while [ $# -gt 0 ] && [ "$1" != -- ]; do profiles="$profiles $1"; shift; done
[ $# -gt 0 ] && shift # the "--"
status=0
for p in $profiles; do
	echo
	echo "== shapes under tests/harness/kernel-profile $p (the filter applies to every method) =="
	if ! ./tests/harness/kernel-profile "$p" ./bench/bench --only shapes --csv "bench/results-$p.csv" "$@"; then
		echo "bench/profiles.sh: the run under $p failed" >&2
		status=1
	fi
done

# ratio CSV: "shape walker/realpath" lines, in the order of the shapes.
ratio() {
	[ -f "$1" ] || return 0
	$AWK -F, '
	$1 == "shape" && ($4 == "safe-walker" || $4 == "realpath") && $5 ~ /^batch[0-9]+$/ {
		if (!($2 in seen)) { seen[$2] = 1; order[++n] = $2 }
		v[$2, $4, substr($5, 6)] = $6; nb[$2] = substr($5, 6) + 1 > nb[$2] ? substr($5, 6) + 1 : nb[$2]
	}
	$1 == "shape" && ($4 == "safe-walker" || $4 == "realpath") && $5 == "status" && $6 != "ok" { bad[$2] = 1 }
	END {
		for (i = 1; i <= n; i++) {
			s = order[i]; k = 0
			for (b = 0; b < nb[s]; b++)
				if ((s, "safe-walker", b) in v && (s, "realpath", b) in v && v[s, "realpath", b] > 0)
					r[++k] = v[s, "safe-walker", b] / v[s, "realpath", b]
			if (k == 0 || bad[s]) { print s, "-"; continue }
			for (a = 1; a <= k; a++) for (b = a + 1; b <= k; b++) if (r[b] < r[a]) { t = r[a]; r[a] = r[b]; r[b] = t }
			m = k % 2 ? r[(k + 1) / 2] : (r[k / 2] + r[k / 2 + 1]) / 2
			printf "%s %.2f%s\n", s, m, (m > 1.0 && r[1] <= 1.0) ? "~" : ""
		}
	}' "$1"
}

echo
echo "walker / realpath pattern per shape (target <= 1.00; ~: over it by the median, within it by the lowest round)"
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
ratio "$native" > "$tmp/native"
cols="native"
for p in $profiles; do ratio "bench/results-$p.csv" > "$tmp/$p"; cols="$cols $p"; done
printf '%-12s' shape
for c in $cols; do printf ' %9s' "$c"; done
echo
$AWK '{ print $1 }' "$tmp/native" | while read -r s; do
	printf '%-12s' "$s"
	for c in $cols; do
		v=$($AWK -v s="$s" '$1 == s { print $2 }' "$tmp/$c")
		printf ' %9s' "${v:--}"
	done
	echo
done
exit $status
