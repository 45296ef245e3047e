# Sourced first by a check that is one TAP row (the checks of the manual and
# the header, the benchmark's smoke test), which `make check` runs directly
# under Automake's TAP driver, as it runs the tests that print a line per
# check (tests/harness/partial.sh). From here the script's output goes to
# stderr, which the driver copies into the test's log without reading it (a
# message "ok: ..." is no result); when the script exits, its row and the plan
# go to the TAP stream:
#   exit 0                    ok 1 - NAME
#   row_skip REASON (77)      ok 1 - NAME # SKIP REASON
#   any other status          not ok 1 - NAME (exit status N), that status
# row_cleanup: a command run at the exit (the script sets no EXIT trap).
# row_unchanged STAMP SIG INPUT... is true when STAMP, a file of the build
# tree that row_passed STAMP SIG wrote when the check last passed, holds SIG
# (the compiler, the source tree...) and is newer than the script and every
# INPUT: nothing the check reads has changed since, and it need not run
# again (as make keeps an object whose sources did not change).
# A skip exits with $SAFEOPEN_SKIP_STATUS: 77 (Automake's SKIP) when the
# script is run by hand; make check sets 0, since the TAP driver takes the
# skip from the row and counts any other status as an ERROR.
row_name=${0##*/}
case $0 in /*) row_self=$0 ;; *) row_self=$PWD/$0 ;; esac
row_why=
row_cleanup=:
exec 8>&1 1>&2
row_skip() { row_why=$1; exit 77; }
row_end() {
	row_rc=$?
	trap - EXIT
	eval "$row_cleanup" || :
	case $row_rc in
	0) echo "ok 1 - $row_name" >&8 ;;
	77) echo "ok 1 - $row_name # SKIP $row_why" >&8; row_rc=${SAFEOPEN_SKIP_STATUS:-77} ;;
	*) echo "not ok 1 - $row_name (exit status $row_rc)" >&8 ;;
	esac
	echo "1..1" >&8
	exit "$row_rc"
}
trap row_end EXIT
row_unchanged() {
	ru_stamp=$1 ru_sig=$2
	shift 2
	[ -f "$ru_stamp" ] && [ "$ru_stamp" -nt "$row_self" ] || return 1
	for ru_in; do [ "$ru_stamp" -nt "$ru_in" ] || return 1; done
	IFS= read -r ru_old <"$ru_stamp" && [ "$ru_old" = "$ru_sig" ]
}
row_passed() { { [ -d "${1%/*}" ] || mkdir -p "${1%/*}"; } && printf '%s\n' "$2" >"$1" || :; }
