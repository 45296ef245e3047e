#!/bin/sh
# The pytest suite of the Python module (bindings/python/tests), run by `make check`
# with the interpreter configure built the module for ($PYTHON_BIN), under
# `-X dev` (debug hooks, ResourceWarning shown) with ResourceWarning and
# unraisable exceptions made errors (bindings/python/tests/pytest.ini), against the
# package in the build tree (bindings/python/build) and lib/.libs/libsafeopen.so.
# Prints TAP, one line per test (the plugin tests/harness/tap_report.py; pytest's
# own report is kept in the log as comments); the plan "1..0 # SKIP" (exit
# $SAFEOPEN_SKIP_STATUS, tests/harness/row.sh), with the reason, when the
# module is not built or pytest is missing.
set -u
: "${top_srcdir:?}" "${top_builddir:?}"
echo "TAP version 13"
if [ -z "${PYTHON_BIN:-}" ]; then
	echo "1..0 # SKIP the Python module is not built: configure found no python3 with its headers (Debian: python3-dev; see 'python:' in configure's summary)"
	exit "${SAFEOPEN_SKIP_STATUS:-77}"
fi
if ! "$PYTHON_BIN" -c 'import pytest' 2>/dev/null; then
	echo "1..0 # SKIP $PYTHON_BIN cannot import pytest (Debian: python3-pytest; scripts/install-deps)"
	exit "${SAFEOPEN_SKIP_STATUS:-77}"
fi
case " ${SAFEOPEN_SAN_CFLAGS:-} " in
*" -fsanitize="*)
	echo "1..0 # SKIP a sanitizer build (${SAFEOPEN_SAN_CFLAGS}): $PYTHON_BIN is not built with the sanitizer runtime, so the module cannot be loaded; the plain build runs these tests"
	exit "${SAFEOPEN_SKIP_STATUS:-77}" ;;
esac
if [ ! -f "$top_builddir/bindings/python/build/.stamp" ]; then
	echo "Bail out! $top_builddir/bindings/python/build is not built (make)"
	exit 1
fi
# Only the plugins named here load (PYTEST_DISABLE_PLUGIN_AUTOLOAD): a pytest
# plugin installed on the machine (xdist, randomly, ...) neither changes the
# run nor costs its import and the scan of the installed packages' entry points.
# pytest writes nothing into the source tree (read-only under distcheck):
# no cache, no bytecode. Its temporary trees go in a directory of their own
# outside the directory it collects (in $SAFEOPEN_TEST_DIR, as the other
# tests', or $TMPDIR), removed afterwards: an interrupted run leaves nothing
# that the next collection would read.
base=$(mktemp -d "${SAFEOPEN_TEST_DIR:-${TMPDIR:-/tmp}}/safeopen-pytest.XXXXXX") || exit 99
trap 'rm -rf "$base"' EXIT
: >"$base/tap"
{
PYTHONPATH="$top_builddir/bindings/python/build:$top_srcdir/tests/harness" \
LD_LIBRARY_PATH="$top_builddir/lib/.libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
PYTHONDONTWRITEBYTECODE=1 PYTEST_DISABLE_PLUGIN_AUTOLOAD=1 SAFEOPEN_TEST_BUILD="$top_builddir/bindings/python/build" \
SAFEOPEN_TAP_OUT="$base/tap" \
	"$PYTHON_BIN" -X dev -m pytest -p no:cacheprovider -p tap_report \
	-c "$top_srcdir/bindings/python/tests/pytest.ini" --rootdir="$top_srcdir/bindings/python/tests" \
	--basetemp="$base/t" -rs -s -v "$top_srcdir/bindings/python/tests"
echo $? >"$base/rc"
} 2>&1 | sed 's/^/# /'
rc=$(cat "$base/rc")
cat "$base/tap"
# a run that collected nothing (an error in collection) is a failure, not "1..0"
case $rc in 0) ;; *) grep -q '^not ok' "$base/tap" || echo "Bail out! pytest exited with status $rc" ;; esac
exit "$rc"
