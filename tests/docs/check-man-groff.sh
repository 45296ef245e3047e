#!/bin/sh
# Every man page renders with zero groff warnings at 80 columns (the
# pipeline of `man --warnings`, called directly: preconv, soelim, tbl,
# groff -mandoc -ww), and no text line starts with a control character by
# accident (a line starting with ' or . that is not a known request is
# silently dropped by groff: that is how a paragraph of the old tmpfile page
# disappeared).
#
# All pages go through one groff run (each .TH starts a page afresh; troff
# names the file and line of every warning), a tenth of the time of a run
# per page; only when that run complains are the pages rendered one by one,
# so that each complaint is reported under its own page.
set -eu
srcdir=${top_srcdir:-.}
. "$srcdir/tests/harness/row.sh"
command -v groff >/dev/null 2>&1 || row_skip "groff not installed"
passed=$(cd "${top_builddir:-.}" && pwd)/tests/docs/check-man-groff.passed
cd "$srcdir/doc/man"
set -- man3/*.3 man7/*.7 ../../tools/safeopen/safeopen.1 ../../tools/safe-httpd/safe-httpd.1
# The last pass holds while no page changed and groff is the same
# (tests/docs/check-man-groff.passed).
sig="$(command -v groff)|$srcdir|$#"
if row_unchanged "$passed" "$sig" "$@"; then
	echo "check-man-groff: $# pages, unchanged since they passed ($passed): not rendered again"
	exit 0
fi
rm -f "$passed"
status=0
render() { LC_ALL=C.UTF-8 groff -k -s -t -mandoc -Tutf8 -rLL=80n -rLT=80n -ww -z "$@" 2>&1; }
if ! out=$(render "$@") || [ -n "$out" ]; then
	for p in "$@"; do
		out=$(render "$p") || { echo "check-man-groff: $p: groff failed"; status=1; }
		if [ -n "$out" ]; then echo "check-man-groff: $p:"; printf '%s\n' "$out"; status=1; fi
	done
	[ $status -ne 0 ] || { echo "check-man-groff: the pages warn only when rendered together:"; \
		render "$@"; status=1; }
fi
# Lines starting with ' must be requests we use on purpose (none), and lines
# starting with . must be known macros/requests ("FILE:LINE:TEXT").
bad=$(grep -n "^'" "$@" || true)
if [ -n "$bad" ]; then
	echo "check-man-groff: lines start with an apostrophe (groff control character):"
	printf '%s\n' "$bad"; status=1
fi
bad=$(grep -n '^\.' "$@" | grep -v -E '^[^:]+:[0-9]+:\.(TH|SH|SS|PP|P|LP|TP|IP|HP|RS|RE|B|I|BR|BI|IB|RB|IR|RI|SM|SB|EX|EE|nf|fi|in|sp|br|ad|na|nh|nr|hy|so|UR|UE|MT|ME|TQ|ft|\\")( |$)' || true)
if [ -n "$bad" ]; then echo "check-man-groff: unknown requests:"; printf '%s\n' "$bad"; status=1; fi
[ $status -eq 0 ] && echo "check-man-groff: $# pages, 0 groff warnings" && row_passed "$passed" "$sig"
exit $status
