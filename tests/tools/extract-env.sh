# SPDX-License-Identifier: MIT
# Sourced by the tests of `safeopen extract` (tests/tools/test-extract.sh):
# `extract_env NAME` sets SAFEOPEN (the binary itself, not the libtool
# wrapper) and PYTHON (generates the archives), or ends the test: bail out
# if safeopen is not built, skip_all with the reason if it was built
# without libarchive or no python3 is found.
: "${top_builddir:=.}"
: "${top_srcdir:=.}"
SAFEOPEN=${SAFEOPEN:-"$top_builddir/tools/safeopen/safeopen"}
. "$top_srcdir/tests/harness/direct.sh"
. "$top_srcdir/tests/harness/partial.sh"

extract_env() {
	[ -x "$SAFEOPEN" ] && direct_binary SAFEOPEN
	[ -x "$SAFEOPEN" ] || bail "$1: $SAFEOPEN not built"
	case $("$SAFEOPEN" . extract --help) in *'built without libarchive'*)
		skip_all "$1: safeopen was built without libarchive (configure --with-libarchive)" ;;
	esac
	# the system's python3 first: a version-manager shim (pyenv) costs ~0.3 s a start
	if [ -z "${PYTHON:-}" ] && [ -x /usr/bin/python3 ]; then PYTHON=/usr/bin/python3; fi
	PYTHON=${PYTHON:-$(command -v python3)}
	[ -n "$PYTHON" ] || skip_all "$1: python3 (generates the archives) not found"
}
