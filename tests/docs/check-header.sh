#!/bin/sh
# The public header on its own, as users compile it:
#  - a file that includes only <safeopen.h> builds as C99 and C11 with
#    -pedantic -Wall -Wextra -Werror (and as gnu89);
#  - with <linux/openat2.h> included first, the header's static assertions
#    compare every SAFE_RESOLVE_* bit with the kernel's RESOLVE_* value, and
#    they do fire on a wrong value (a header whose checks never run fails);
#  - every ```c block of README.md compiles as it stands, and those of
#    doc/cookbook.md as one file.
#  - its comments stay summaries (the man pages are the reference): at most
#    500 lines hold comment text.
# Each is compiled -fsyntax-only (the compiler's front end: every diagnostic
# these checks ask for, without the assembler run after it).
# C++ is checked by tests/docs/check-header-cxx.sh; the summaries against the
# man pages by tests/docs/check-man-symbols.sh.
set -eu
srcdir=${top_srcdir:-.}
. "$srcdir/tests/harness/row.sh"
# HEADER_CC may carry options (e.g. "clang -shared-libasan"): it is split
# into words on purpose where it is used.
cc=${HEADER_CC:-cc}
inc="$srcdir/include"
# The last pass holds while the header, README.md, doc/cookbook.md and the
# compiler are the same (tests/docs/check-header.passed).
passed=${top_builddir:-.}/tests/docs/check-header.passed
sig="$cc|$srcdir"
if row_unchanged "$passed" "$sig" "$inc/safeopen.h" "$srcdir/README.md" "$srcdir/doc/cookbook.md"; then
	echo "check-header: passed with this header, README.md, doc/cookbook.md and $cc ($passed): not compiled again"
	exit 0
fi
rm -f "$passed"
tmp=$(mktemp -d)
row_cleanup='rm -rf "$tmp"'
fail=0
try() { # name, then the compiler command line
	name=$1
	shift
	if "$@" >"$tmp/log" 2>&1; then
		echo "ok: $name"
	else
		echo "FAIL: $name"
		sed 's/^/    /' "$tmp/log"
		fail=1
	fi
}

printf '#include <safeopen.h>\nint main(void) { return safe_version() == 0; }\n' >"$tmp/only.c"
try "C99 -pedantic" $cc -std=c99 -pedantic -Wall -Wextra -Werror -I"$inc" -fsyntax-only "$tmp/only.c"
try "C11 -pedantic" $cc -std=c11 -pedantic -Wall -Wextra -Werror -I"$inc" -fsyntax-only "$tmp/only.c"
try "gnu89" $cc -std=gnu89 -Wall -Wextra -Werror -I"$inc" -fsyntax-only "$tmp/only.c"

printf '#include <linux/openat2.h>\n#include <safeopen.h>\nint main(void) { return 0; }\n' \
	>"$tmp/uapi.c"
try "C11 after <linux/openat2.h>" $cc -std=c11 -pedantic -Wall -Wextra -Werror -I"$inc" \
	-fsyntax-only "$tmp/uapi.c"
# The assertions must reject a wrong kernel value (here RESOLVE_BENEATH).
cat >"$tmp/wrong.c" <<'EOC'
#define RESOLVE_NO_XDEV 0x01
#define RESOLVE_NO_MAGICLINKS 0x02
#define RESOLVE_NO_SYMLINKS 0x04
#define RESOLVE_BENEATH 0x80
#define RESOLVE_IN_ROOT 0x10
#include <safeopen.h>
int main(void) { return 0; }
EOC
if $cc -std=c11 -I"$inc" -fsyntax-only "$tmp/wrong.c" >"$tmp/log" 2>&1; then
	echo "FAIL: a wrong RESOLVE_BENEATH compiles: the static assertions do not run"
	fail=1
elif grep -q 'RESOLVE_BENEATH' "$tmp/log"; then
	echo "ok: a wrong RESOLVE_BENEATH is rejected at compile time"
else
	echo "FAIL: a wrong RESOLVE_BENEATH fails for another reason:"
	sed 's/^/    /' "$tmp/log"
	fail=1
fi

# README.md: every C block, as shown.
n=0
awk -v dir="$tmp" '
	/^```c$/ { n++; f = sprintf("%s/readme%d.c", dir, n); inblock = 1; next }
	/^```/ { inblock = 0; next }
	inblock { print > f }
' "$srcdir/README.md"
for f in "$tmp"/readme*.c; do
	[ -e "$f" ] || break
	n=$((n + 1))
	try "README.md C block $n" $cc -std=c11 -Wall -Wextra -Werror -I"$inc" -fsyntax-only "$f"
done
if [ "$n" -eq 0 ]; then
	echo "FAIL: no C block found in README.md"
	fail=1
fi

# doc/cookbook.md: every C block, all in one file (the first block holds the
# includes and the helpers' declarations the others use).
awk '/^```c$/ { on = 1; next } /^```/ { on = 0; print ""; next } on' \
	"$srcdir/doc/cookbook.md" > "$tmp/cookbook.c"
nb=$(grep -c '^```c$' "$srcdir/doc/cookbook.md" || true)
if [ "$nb" -lt 2 ]; then
	echo "FAIL: doc/cookbook.md has $nb C blocks"
	fail=1
else
	try "doc/cookbook.md: its $nb C blocks" $cc -std=c11 -Wall -Wextra -Werror -I"$inc" \
		-fsyntax-only "$tmp/cookbook.c"
fi

# Lines holding comment text: inside a /* */ comment (its first and last
# lines included) or with a // comment.
# 500 since the one-manual rewrite (#38): a new declaration makes room in its
# neighbours' comments, the detail goes to the man page.
budget=500
nc=$(awk '{
	line = $0; has = incomment
	while (line != "") {
		if (incomment) {
			i = index(line, "*/")
			if (!i) break
			line = substr(line, i + 2); incomment = 0
		} else {
			i = index(line, "/*"); j = index(line, "//")
			if (j && (!i || j < i)) { has = 1; break }
			if (!i) break
			has = 1; incomment = 1; line = substr(line, i + 2)
		}
	}
	n += has
} END { print n + 0 }' "$inc/safeopen.h")
if [ "$nc" -le "$budget" ]; then
	echo "ok: include/safeopen.h has $nc comment lines (at most $budget)"
else
	echo "FAIL: include/safeopen.h has $nc comment lines, more than $budget: move the detail to the man page"
	fail=1
fi
[ $fail -ne 0 ] || row_passed "$passed" "$sig"
exit $fail
