#!/bin/sh
# Runs `make check` once per kernel profile (see tests/kernels.mk) and prints
# profile x suite x result. Called from the build directory by make.
set -u
MAKE=${MAKE:-make}
# The suites to run per profile (tests/kernels.mk: every Check suite and the
# CLI test; the other shell tests drive the same library calls).
KERNEL_TESTS=${KERNEL_TESTS:?}
out=tests/kernels
rm -rf "$out"; mkdir -p "$out"
status=0
for p in "$@"; do
	start=$(date +%s)
	rm -f tests/*.trs bench/*.trs test-suite.log
	if [ "$p" = full ]; then
		# shellcheck disable=SC2086
		$MAKE $AM_MAKEFLAGS check TESTS="$KERNEL_TESTS" > "$out/$p.out" 2>&1
	else
		# shellcheck disable=SC2086
		./tests/harness/kernel-profile "$p" $MAKE $AM_MAKEFLAGS check TESTS="$KERNEL_TESTS" > "$out/$p.out" 2>&1
	fi
	rc=$?
	mkdir -p "$out/$p"
	for trs in tests/*.trs tests/*/*.trs bench/*.trs; do
		[ -f "$trs" ] || continue
		t=${trs%.trs}
		# A TAP suite has one :test-result: per case; its verdict is global.
		r=$(sed -n 's/^:global-test-result: //p' "$trs" | head -n 1)
		[ -n "$r" ] || r=$(sed -n 's/^:test-result: //p' "$trs" | head -n 1)
		echo "$(basename "$t") $r" >> "$out/$p.results"
		# The raw-openat2 oracle column, skipped where the profile removes it.
		# (Some suites also skip it in children that install their own
		# filter: only more skips than in the unfiltered run count.)
		n=$(grep -c 'oracle skipped' "$t.log" 2>/dev/null || true)
		echo "$(basename "$t") ${n:-0}" >> "$out/$p.nooracle"
		cp "$t.log" "$out/$p/" 2>/dev/null
	done
	sort -o "$out/$p.results" "$out/$p.results" 2>/dev/null || : > "$out/$p.results"
	echo "check-kernels: $p: make check exit $rc in $(( $(date +%s) - start ))s"
	[ $rc -eq 0 ] || status=1
done

# The table: one row per suite, one column per profile.
{
	printf '%-22s' suite; for p in "$@"; do printf ' %-14s' "$p"; done; echo
	cat "$out"/*.results | awk '{ print $1 }' | sort -u | while read -r s; do
		printf '%-22s' "$s"
		for p in "$@"; do
			r=$(awk -v s="$s" '$1 == s { print $2 }' "$out/$p.results")
			n=$(awk -v s="$s" '$1 == s { print $2 }' "$out/$p.nooracle" 2>/dev/null)
			f=$(awk -v s="$s" '$1 == s { print $2 }' "$out/full.nooracle" 2>/dev/null)
			[ "${n:-0}" -gt "${f:-0}" ] && r="$r*"
			printf ' %-14s' "${r:--}"
		done
		echo
	done
	echo "*: the raw openat2 oracle is unavailable under the profile and was skipped (the log says so)"
} | tee tests/kernels.table

# Every profile gives the unfiltered run's results.
if [ -f "$out/full.results" ]; then
	for p in "$@"; do
		[ "$p" = full ] && continue
		if ! cmp -s "$out/full.results" "$out/$p.results"; then
			echo "check-kernels: $p differs from full:"; diff "$out/full.results" "$out/$p.results"
			status=1
		fi
	done
fi
[ $status -eq 0 ] && echo "check-kernels: all profiles agree with the full kernel" \
	|| echo "check-kernels: FAILED (logs in $out/PROFILE/ and $out/PROFILE.out)"
exit $status
