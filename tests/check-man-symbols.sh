#!/bin/sh
# Every function of the version script has a section 3 man page (directly or
# through a `.so` link) whose NAME line lists it, whose SYNOPSIS includes
# <safeopen.h> and declares it, and which has an ERRORS section. Every page
# listed in doc/local.mk exists, and no page in doc/man is left out of it.
set -eu
srcdir=${top_srcdir:-.}
man="$srcdir/doc/man"
status=0
n=0
fail() { echo "check-man-symbols: $*"; status=1; }

# The page a name resolves to (following one `.so man3/x.3` line).
target() {
	p="$man/man3/$1.3"
	[ -f "$p" ] || return 1
	so=$(sed -n '1s/^\.so[[:space:]]\{1,\}//p' "$p")
	if [ -n "$so" ]; then p="$man/$so"; [ -f "$p" ] || return 1; fi
	echo "$p"
}
# The text of section $2 of page $1 (from .SH $2 to the next .SH).
section() { awk -v s="$2" '/^\.SH/ { on = ($0 ~ "^\\.SH \"?" s "\"?$") ; next } on' "$1"; }

syms=$(sed -n 's/^[[:space:]]*\([a-z_][a-z0-9_]*\);$/\1/p' "$srcdir/lib/libsafeopen.sym")
for s in $syms; do
	n=$((n + 1))
	p=$(target "$s") || { fail "$s: no page doc/man/man3/$s.3 (or its .so target is missing)"; continue; }
	section "$p" NAME | grep -q "\\b$s\\b" || fail "$s: not named in the NAME section of ${p#$srcdir/}"
	syn=$(section "$p" SYNOPSIS)
	[ -n "$syn" ] || { fail "$s: ${p#$srcdir/} has no SYNOPSIS"; continue; }
	printf '%s\n' "$syn" | grep -q '#include <safeopen\.h>' || fail "$s: SYNOPSIS of ${p#$srcdir/} lacks #include <safeopen.h>"
	printf '%s\n' "$syn" | grep -q "\\b$s(" || fail "$s: SYNOPSIS of ${p#$srcdir/} does not declare $s()"
	[ -n "$(section "$p" ERRORS)" ] || fail "$s: ${p#$srcdir/} has no (or an empty) ERRORS section"
	[ -n "$(section "$p" "RETURN VALUE")" ] || fail "$s: ${p#$srcdir/} has no RETURN VALUE section"
	# The prototype in the page must match the header's declaration
	# (whitespace-insensitive): catches a page left behind by an API change.
	hdr=$(awk -v s="$s" 'BEGIN{on=0} /^SAFE_PUBLIC/ && $0 ~ "[ *]" s "\\(" {on=1} on {print} on && /;/ {exit}' \
		"$srcdir/include/safeopen.h" | sed 's/SAFE_PUBLIC//; s/SAFE_NODISCARD//' | tr -d ' \t\n')
	pg=$(printf '%s\n' "$syn" | sed -n '/^\.EX/,/^\.EE/p' | sed 's/\\e/\\/g; s/\\-/-/g; s/\\(aq/'"'"'/g' \
		| awk -v s="$s" '$0 ~ "[ *]" s "\\(" {on=1} on {print} on && /;/ {exit}' | tr -d ' \t\n')
	[ "$hdr" = "$pg" ] || fail "$s: prototype in ${p#$srcdir/} differs from include/safeopen.h:
   header: $hdr
   page:   $pg"
done

# doc/local.mk lists exactly the pages that exist (so all are installed).
listed=$(grep -o 'doc/man/man[0-9]/[A-Za-z0-9_.]*' "$srcdir/doc/local.mk" | sort -u)
present=$(cd "$srcdir" && ls doc/man/man[0-9]/* | sort -u)
if [ "$listed" != "$present" ]; then
	fail "doc/local.mk (<) and doc/man (>) differ:"
	printf '%s\n' "$listed" > "${TMPDIR:-/tmp}/cms.$$.a"; printf '%s\n' "$present" > "${TMPDIR:-/tmp}/cms.$$.b"
	diff "${TMPDIR:-/tmp}/cms.$$.a" "${TMPDIR:-/tmp}/cms.$$.b" || true
	rm -f "${TMPDIR:-/tmp}/cms.$$.a" "${TMPDIR:-/tmp}/cms.$$.b"
fi
[ $status -eq 0 ] && echo "check-man-symbols: $n symbols, each with a page with NAME, SYNOPSIS (matching the header), RETURN VALUE, ERRORS"
exit $status
