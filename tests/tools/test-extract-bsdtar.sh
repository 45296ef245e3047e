#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/tools/test-extract-bsdtar.sh: safeopen extract gives bsdtar's tree and
# exit status on a corpus built here (tests/tools/extract-vs-bsdtar.py: names
# beyond ASCII in zip, pax, GNU tar and bsdtar's own formats, in the C locale
# and C.UTF-8; data after a compressed stream; links given only by pax
# records; pax hard links with data; PEP 706's shapes), or refuses exactly
# the entries named there. `make check-long` (SAFEOPEN_CHECK_LONG=1) adds
# bsdtar's other formats and a bigger tree. SKIPs without bsdtar.
set -u
LONG=${SAFEOPEN_CHECK_LONG:-}
[ "$LONG" = 0 ] && LONG=
. "${top_srcdir:-.}/tests/tools/extract-env.sh"
extract_env test-extract-bsdtar
command -v bsdtar >/dev/null || skip_all "test-extract-bsdtar: bsdtar (the reference) not installed"
T=$(mktemp -d "${TMPDIR:-/tmp}/test-extract-bsdtar.XXXXXX") || exit 99
trap 'chmod -R u+rwx "$T" 2>/dev/null; rm -rf "$T"' EXIT
umask 022
# its TAP lines, then the plan (tests/harness/partial.sh)
"$PYTHON" "$top_srcdir/tests/tools/extract-vs-bsdtar.py" "$SAFEOPEN" "$T/w" ${LONG:+--long} >"$T/tap"
rc=$?
# passed through, counted by the shell
n=0 failed=0
while IFS= read -r l; do
	printf '%s\n' "$l"
	case $l in
	'not ok '[0-9]*) n=$((n + 1)) failed=$((failed + 1)) ;;
	'ok '[0-9]*) n=$((n + 1)) ;;
	esac
done <"$T/tap"
[ $rc -eq 0 ] || [ "$failed" -ne 0 ] || failed=1
tap_end test-extract-bsdtar
