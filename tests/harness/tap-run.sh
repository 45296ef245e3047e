#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/harness/tap-run.sh TEST: how `make check` runs a shell test
# (SH_LOG_COMPILER; Automake's TAP driver reads the output). A test that
# prints TAP (its first line "TAP version 13", tests/harness/partial.sh) is
# passed through line by line; its exit status 77 (the plan "1..0 # SKIP") is
# 0 for the driver. Any other test is one row named after it: exit 0 ok, 77
# skip (the reason from its "SKIP: " line), else not ok; its output is kept in
# the log as TAP comments.
t=$1
rcf=$(mktemp "${TMPDIR:-/tmp}/tap-run.XXXXXX") || exit 99
trap 'rm -f "$rcf"' EXIT
{ "$@"; echo $? >"$rcf"; } | awk -v name="${t##*/}" -v rcf="$rcf" '
NR == 1 && $0 == "TAP version 13" { tap = 1 }
tap { print; fflush(); next }
{ print "# " $0; fflush(); if ($0 ~ /^SKIP: /) why = substr($0, 7) }
END {
	if ((getline rc < rcf) <= 0) rc = 99
	rc += 0
	if (tap) exit (rc == 77 ? 0 : rc)
	print "1..1"
	if (rc == 0) print "ok 1 - " name
	else if (rc == 77) print "ok 1 - " name " # SKIP " (why == "" ? "(no reason given)" : why)
	else print "not ok 1 - " name " (exit status " rc ")"
}'
