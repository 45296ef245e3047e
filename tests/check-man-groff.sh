#!/bin/sh
# Every man page renders with zero groff warnings at 80 columns (the
# pipeline of `man --warnings`, called directly: preconv, soelim, tbl,
# groff -mandoc -ww; a fifth of the time of man(1)), and no text line starts with a
# control character by accident (a line starting with ' or . that is not a
# known request is silently dropped by groff: that is how a paragraph of the
# old tmpfile page disappeared).
set -eu
srcdir=${top_srcdir:-.}
command -v groff >/dev/null 2>&1 || { echo "SKIP: groff not installed"; exit 77; }
status=0
n=0
cd "$srcdir/doc/man"
for p in man3/*.3 man7/*.7 ../../examples/safeopen.1; do
	n=$((n + 1))
	out=$(LC_ALL=C.UTF-8 groff -k -s -t -mandoc -Tutf8 -rLL=80n -rLT=80n -ww -z "$p" 2>&1) ||
		{ echo "check-man-groff: $p: groff failed"; status=1; }
	if [ -n "$out" ]; then echo "check-man-groff: $p:"; printf '%s\n' "$out"; status=1; fi
	# Lines starting with ' must be requests we use on purpose (none), and
	# lines starting with . must be known macros/requests.
	bad=$(grep -n "^'" "$p" || true)
	if [ -n "$bad" ]; then echo "check-man-groff: $p: line starts with an apostrophe (groff control character):"; printf '%s\n' "$bad"; status=1; fi
	bad=$(grep -n '^\.' "$p" | grep -v -E '^[0-9]+:\.(TH|SH|SS|PP|P|LP|TP|IP|HP|RS|RE|B|I|BR|BI|IB|RB|IR|RI|SM|SB|EX|EE|nf|fi|in|sp|br|ad|na|nh|nr|hy|so|UR|UE|MT|ME|TQ|ft|\\")( |$)' || true)
	if [ -n "$bad" ]; then echo "check-man-groff: $p: unknown request:"; printf '%s\n' "$bad"; status=1; fi
done
[ $status -eq 0 ] && echo "check-man-groff: $n pages, 0 groff warnings"
exit $status
