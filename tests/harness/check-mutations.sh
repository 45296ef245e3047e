#!/bin/sh
# make check-mutations: for every line of tests/harness/mutations.list, build the
# library with that defence disabled (-DSAFEOPEN_MUTATE_<NAME>) and require
# that at least one of the listed test binaries FAILS. Works in a private
# copy of the source (make distdir) under $top_builddir/mutations: the
# developer's build is never touched. The unmutated library must first pass
# every listed binary (else a failure would prove nothing). Prints the table
# "defence -> test that caught it" (the first listed binary that failed;
# MUTATION_ALL_TESTS=1 runs them all); exits 1 if a mutation survives or is
# not present in the source. MUTATIONS="NAME ..." checks only those.
set -u
: "${top_srcdir:?}" "${top_builddir:?}"
MAKE=${MAKE:-make}
JOBS=${MUTATION_JOBS:-2}
TIMEOUT=${MUTATION_TIMEOUT:-600}
list="$top_srcdir/tests/harness/mutations.list"
work="$top_builddir/mutations"
src="$work/src"
start=$(date +%s)

rm -rf "$work" && mkdir -p "$work" || exit 1
echo "check-mutations: copying the source (make distdir) to $src"
(cd "$top_builddir" && $MAKE -s distdir distdir="$src") >"$work/distdir.log" 2>&1 ||
	{ cat "$work/distdir.log"; exit 1; }
echo "check-mutations: configuring and building the test programs"
(cd "$src" && ./configure -q && $MAKE -s -j"$JOBS" all &&
	$MAKE -s -j"$JOBS" check TESTS= ) >"$work/build.log" 2>&1 ||
	{ tail -40 "$work/build.log"; exit 1; }

# The lines to check: all, or those named in $MUTATIONS (space-separated).
lines="$work/lines"
grep -v '^#' "$list" | sed '/^$/d' | while IFS='	' read -r name rest; do
	case " ${MUTATIONS:-$name} " in *" $name "*) printf '%s\t%s\n' "$name" "$rest" ;; esac
done >"$lines"

# Every test binary that those lines name, once.
all_tests=
for t in $(cut -f2 "$lines" | tr ',' '\n' | sed '/^$/d' | sort -u); do
	if [ -x "$src/$t" ]; then all_tests="$all_tests $t"; else echo "check-mutations: $t: not built"; fi
done

# rebuild_lib [CPPFLAGS]: recompile lib/ only (the test programs load the
# shared library from lib/.libs through their run path).
rebuild_lib() {
	(cd "$src" && rm -rf lib/*.lo lib/*.o lib/.libs lib/libsafeopen.la &&
		$MAKE -s -j"$JOBS" CPPFLAGS="$1" lib/libsafeopen.la) </dev/null >"$work/lib.log" 2>&1
}

# run_test NAME LOG: run one binary at the quick size; status 0 = passed.
# the safeopen CLI (tools/safeopen/), for a switch in its code: rebuilt with the
# mutation, then again without it
rebuild_cli() {
	(cd "$src" && rm -f tools/safeopen/*.o tools/safeopen/safeopen tools/safeopen/.libs/safeopen &&
		$MAKE -s -j"$JOBS" CPPFLAGS="$1" tools/safeopen/safeopen) </dev/null >"$work/cli.log" 2>&1
}

run_test() {
	(cd "$src" && top_srcdir="$src" top_builddir="$src" \
		timeout -k 10 "$TIMEOUT" "./$1") </dev/null >"$2" 2>&1
}

echo "check-mutations: control run (no mutation): every listed binary must pass"
rebuild_lib "" || { cat "$work/lib.log"; exit 1; }
for t in $all_tests; do
	log="$work/control-$(basename "$t").log"
	if ! run_test "$t" "$log"; then
		echo "check-mutations: $t FAILS without any mutation (see $log):"
		grep '^not ok' "$log" | head -5
		exit 1
	fi
done

fail=0
table="$work/table"
: >"$table"
: >"$work/verdicts"
while IFS='	' read -r name tests what; do
	t0=$(date +%s)
	in_cli=
	grep -qs "SAFEOPEN_MUTATE_$name\\b" "$src"/tools/safeopen/*.c && in_cli=yes
	if [ -z "$in_cli" ] && ! grep -rqs "SAFEOPEN_MUTATE_$name\\b" "$src/lib"; then
		printf '%-20s %-9s %s\n    -> not present in source (no SAFEOPEN_MUTATE_%s in lib/ or tools/safeopen/)\n' \
			"$name" "ABSENT" "$what" "$name" >>"$table"
		echo "ABSENT $name" >>"$work/verdicts"
		continue
	fi
	if ! rebuild_lib "-DSAFEOPEN_MUTATE_$name" ||
	   { [ -n "$in_cli" ] && ! rebuild_cli "-DSAFEOPEN_MUTATE_$name"; }; then
		cat "$work/lib.log" "$work/cli.log" 2>/dev/null
		echo "BUILD $name" >>"$work/verdicts"
		continue
	fi
	caught=
	for t in $(echo "$tests" | tr ',' ' '); do
		[ -x "$src/$t" ] || continue # not built (reported above)
		log="$work/$name-$(basename "$t").log"
		if run_test "$t" "$log"; then
			continue
		fi
		first=$(grep -m1 '^not ok' "$log" | sed 's/^not ok [0-9]* - //' | cut -c1-90)
		nfail=$(grep -c '^not ok' "$log")
		caught="$caught$(basename "$t"): $nfail failing, first: ${first:-exit status only}; "
		[ -n "${MUTATION_ALL_TESTS:-}" ] || break # one catch is enough (time)
	done
	if [ -n "$in_cli" ] && ! rebuild_cli ""; then
		cat "$work/cli.log"
		exit 1
	fi
	secs=$(( $(date +%s) - t0 ))
	if [ -n "$caught" ]; then
		printf '%-20s %-9s %s\n    -> caught by %s(%ss)\n' "$name" "CAUGHT" "$what" "$caught" \
			"$secs" >>"$table"
		echo "CAUGHT $name" >>"$work/verdicts"
	else
		printf '%-20s %-9s %s\n    -> SURVIVED: %s all passed (%ss)\n' "$name" "SURVIVED" \
			"$what" "$tests" "$secs" >>"$table"
		echo "SURVIVED $name" >>"$work/verdicts"
	fi
	echo "check-mutations: $name done (${secs}s)"
done <"$lines"

echo
echo "check-mutations: defence -> test that caught it"
cat "$table"
bad=$(grep -vc '^CAUGHT' "$work/verdicts")
total=$(wc -l <"$work/verdicts")
echo "check-mutations: $((total - bad)) of $total mutations caught ($(( $(date +%s) - start ))s)"
if [ "$bad" -ne 0 ]; then
	echo "check-mutations: FAILED: $(grep -v '^CAUGHT' "$work/verdicts" | tr '\n' ' ')"
	exit 1
fi
rm -rf "$src"
echo "check-mutations: all caught"
