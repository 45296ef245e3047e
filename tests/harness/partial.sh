# Sourced by the shell tests: they print TAP (version 13), one line per check,
# which Automake's TAP driver counts (make check runs them directly).
# The script defines ok/not_ok/check, counting in n and failed; from here it
# has:
#
# skip REASON: a part that cannot run here is one "ok N - PART # SKIP WHY"
#   line (REASON is "PART: WHY"); every other check still counts.
# skip_all REASON: nothing can run here: the plan "1..0 # SKIP REASON", exit
#   $SAFEOPEN_SKIP_STATUS (77 by hand, 0 under make check: tests/harness/row.sh).
# bail REASON: the test cannot start (a program not built): "Bail out!", exit 1.
# tap_end NAME: the plan; exit 0, or 1 when a check failed.
echo "TAP version 13"
skips=
skip() {
	n=$((n + 1)); skips="${skips:+$skips; }$1"
	echo "ok $n - ${1%%: *} # SKIP ${1#*: }"
}
skip_all() { echo "1..0 # SKIP $1"; exit "${SAFEOPEN_SKIP_STATUS:-77}"; }
bail() { echo "Bail out! $1"; exit 1; }
tap_end() {
	echo "1..$n"
	if [ "$failed" -ne 0 ]; then
		echo "# FAIL: $1: $failed of $n checks failed"
		exit 1
	fi
	echo "# PASS: $1: $n checks${skips:+ (skipped: $skips)}"
	exit 0
}
