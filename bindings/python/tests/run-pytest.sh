#!/bin/sh
# The pytest suite of the Python module (bindings/python/tests), run by `make check`
# with the interpreter configure built the module for ($PYTHON_BIN), under
# `-X dev` (debug hooks, ResourceWarning shown) with ResourceWarning and
# unraisable exceptions made errors (bindings/python/tests/pytest.ini), against the
# package in the build tree (bindings/python/build) and lib/.libs/libsafeopen.so.
# SKIP (77), with the reason, when the module is not built or pytest is missing.
set -u
: "${top_srcdir:?}" "${top_builddir:?}"
if [ -z "${PYTHON_BIN:-}" ]; then
	echo "SKIP: the Python module is not built: configure found no python3 with its headers (Debian: python3-dev; see 'python:' in configure's summary)"
	exit 77
fi
if ! "$PYTHON_BIN" -c 'import pytest' 2>/dev/null; then
	echo "SKIP: $PYTHON_BIN cannot import pytest (Debian: python3-pytest; scripts/install-deps)"
	exit 77
fi
case " ${SAFEOPEN_SAN_CFLAGS:-} " in
*" -fsanitize="*)
	echo "SKIP: a sanitizer build (${SAFEOPEN_SAN_CFLAGS}): $PYTHON_BIN is not built with the sanitizer runtime, so the module cannot be loaded; the plain build runs these tests"
	exit 77 ;;
esac
if [ ! -f "$top_builddir/bindings/python/build/.stamp" ]; then
	echo "FAIL: $top_builddir/bindings/python/build is not built (make)"
	exit 1
fi
# pytest writes nothing into the source tree (read-only under distcheck):
# no cache, no bytecode. Its temporary trees go under the build directory
# (or $SAFEOPEN_TEST_DIR, as the other tests'), removed afterwards.
base="${SAFEOPEN_TEST_DIR:-$top_builddir/bindings/python/tests}/pytest-tmp.$$"
mkdir -p "$base" || exit 1
trap 'rm -rf "$base"' EXIT
PYTHONPATH="$top_builddir/bindings/python/build" \
LD_LIBRARY_PATH="$top_builddir/lib/.libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
PYTHONDONTWRITEBYTECODE=1 SAFEOPEN_TEST_BUILD="$top_builddir/bindings/python/build" \
	"$PYTHON_BIN" -X dev -m pytest -p no:cacheprovider \
	-c "$top_srcdir/bindings/python/tests/pytest.ini" --rootdir="$top_srcdir/bindings/python/tests" \
	--basetemp="$base/t" -rs -s -v "$top_srcdir/bindings/python/tests"
