#!/bin/sh
# The public header compiles as C++11 on its own (-Wall -Wextra -Werror
# -pedantic), and its static_assert against <linux/openat2.h> holds there
# too. A SKIP when no C++ compiler is installed.
set -eu
srcdir=${top_srcdir:-.}
. "$srcdir/tests/harness/row.sh"
cxx=${CXX:-g++}
if ! command -v "$cxx" >/dev/null 2>&1; then
	row_skip "no C++ compiler ($cxx) installed: the C++ build of the header is not checked"
fi
# The last pass holds while the header and the compiler are the same
# (tests/docs/check-header-cxx.passed, tests/harness/row.sh).
passed=${top_builddir:-.}/tests/docs/check-header-cxx.passed
sig="$cxx|$srcdir"
if row_unchanged "$passed" "$sig" "$srcdir/include/safeopen.h"; then
	echo "check-header-cxx: passed with this header and $cxx ($passed): not compiled again"
	exit 0
fi
rm -f "$passed"
tmp=$(mktemp -d)
row_cleanup='rm -rf "$tmp"'
printf '#include <safeopen.h>\nint main() { return safe_version() == nullptr; }\n' >"$tmp/only.cc"
printf '#include <linux/openat2.h>\n#include <safeopen.h>\nint main() { return 0; }\n' >"$tmp/uapi.cc"
fail=0
for f in only uapi; do
	if "$cxx" -std=c++11 -pedantic -Wall -Wextra -Werror -I"$srcdir/include" -fsyntax-only \
		"$tmp/$f.cc" >"$tmp/log" 2>&1; then
		echo "ok: C++11 $f"
	else
		echo "FAIL: C++11 $f"
		sed 's/^/    /' "$tmp/log"
		fail=1
	fi
done
[ $fail -ne 0 ] || row_passed "$passed" "$sig"
exit $fail
