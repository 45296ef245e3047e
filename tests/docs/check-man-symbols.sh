#!/bin/sh
# Every function of the version script has a section 3 man page (directly or
# through a `.so` link) whose NAME section gives it a summary line
# ("name \- summary") equal to the @brief of its declaration in
# include/safeopen.h, whose SYNOPSIS includes <safeopen.h> and declares it
# with the header's prototype, and which has RETURN VALUE and ERRORS
# sections; and the header's comment names that page (@see page(3)). Every page listed in doc/local.mk exists,
# and no page in doc/man is left out of it. (One awk pass per symbol reads
# its page: the test forks a few processes per symbol, not dozens.)
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
	read -r first <"$p" || first=
	case $first in
	.so\ *) p="$man/${first#.so }"; [ -f "$p" ] || return 1 ;;
	esac
	echo "$p"
}

# The declarations of the header, one per line: "name<TAB>prototype without
# blanks<TAB>summary<TAB>page", the prototype without SAFEOPEN_PUBLIC /
# SAFEOPEN_NODISCARD, the summary the @brief of the comment before it (its
# first letter lowered, Doxygen's @c / @p / # markup and a final period
# dropped, blanks collapsed), the page that comment's @see names.
protos=$(awk '
	/^\/\*\*/ { brief = ""; see = ""; inbrief = 0 }
	/^ \*\/|\*\// { inbrief = 0 }
	/^ \* @brief / { t = $0; sub(/^ \* @brief /, "", t); brief = t; inbrief = 1; next }
	inbrief && /^ \* *(@|$)/ { inbrief = 0 }
	inbrief && /^ \* / { t = $0; sub(/^ \* +/, "", t); brief = brief " " t }
	/^ \* @see / { see = $3 }
	/^SAFEOPEN_PUBLIC/ { on = 1; text = "" }
	on { text = text $0 }
	on && /;/ {
		on = 0
		gsub(/SAFEOPEN_PUBLIC|SAFEOPEN_NODISCARD/, "", text)
		name = text; sub(/\(.*/, "", name); sub(/.*[^A-Za-z0-9_]/, "", name)
		gsub(/[ \t]/, "", text)
		b = brief
		gsub(/@[cp] /, "", b); gsub(/#/, "", b); gsub(/[ \t]+/, " ", b)
		sub(/^ /, "", b); sub(/[ .]*$/, "", b)
		b = tolower(substr(b, 1, 1)) substr(b, 2)
		print name "\t" text "\t" b "\t" see
		brief = ""; see = ""
	}' "$srcdir/include/safeopen.h")

syms=$(sed -n 's/^[[:space:]]*\([a-z_][a-z0-9_]*\);$/\1/p' "$srcdir/lib/libsafeopen.sym")
for s in $syms; do
	n=$((n + 1))
	p=$(target "$s") || { fail "$s: no page doc/man/man3/$s.3 (or its .so target is missing)"; continue; }
	rel=${p#"$srcdir"/}
	# One pass over the page: which checks fail, and the page's prototype.
	out=$(awk -v s="$s" '
		function word(t) { return t ~ ("(^|[^A-Za-z0-9_])" s "([^A-Za-z0-9_]|$)") }
		/^\.SH/ { sec = $0; sub(/^\.SH[ \t]+/, "", sec); gsub(/"/, "", sec); next }
		sec == "NAME" && word($0) { name = 1 }
		sec == "NAME" && word($0) && / \\- / {
			t = $0; sub(/^.* \\- /, "", t); gsub(/\\-/, "-", t)
			gsub(/[ \t]+/, " ", t); sub(/[ .]*$/, "", t); summary = t
		}
		sec == "SYNOPSIS" { syn = 1 }
		sec == "SYNOPSIS" && /#include <safeopen\.h>/ { inc = 1 }
		sec == "SYNOPSIS" && $0 ~ ("(^|[^A-Za-z0-9_])" s "\\(") { decl = 1 }
		sec == "SYNOPSIS" && /^\.EX/ { ex = 1; next }
		sec == "SYNOPSIS" && /^\.EE/ { ex = 0; next }
		sec == "SYNOPSIS" && ex && !done && (grab || $0 ~ ("[ *]" s "\\(")) {
			grab = 1; t = $0
			gsub(/\\e/, "\\", t); gsub(/\\-/, "-", t); gsub(/\\\(aq/, "\047", t)
			proto = proto t
			if (t ~ /;/) { grab = 0; done = 1 }
		}
		sec == "ERRORS" && NF { errs = 1 }
		sec == "RETURN VALUE" && NF { ret = 1 }
		END {
			if (!name) print "name"
			if (!syn) print "nosyn"
			if (syn && !inc) print "include"
			if (syn && !decl) print "decl"
			if (!errs) print "errors"
			if (!ret) print "return"
			gsub(/[ \t]/, "", proto); print "proto\t" proto
			print "summary\t" summary
		}' "$p")
	case $out in *nosyn*) fail "$s: $rel has no SYNOPSIS"; continue ;; esac
	for k in $(printf '%s\n' "$out" | grep -v '^proto\|^summary' || true); do
		case $k in
		name) fail "$s: not named in the NAME section of $rel" ;;
		include) fail "$s: SYNOPSIS of $rel lacks #include <safeopen.h>" ;;
		decl) fail "$s: SYNOPSIS of $rel does not declare $s()" ;;
		errors) fail "$s: $rel has no (or an empty) ERRORS section" ;;
		return) fail "$s: $rel has no RETURN VALUE section" ;;
		esac
	done
	# The prototype in the page must match the header's declaration
	# (whitespace-insensitive): catches a page left behind by an API change.
	pg=$(printf '%s\n' "$out" | sed -n 's/^proto	//p')
	hdr=$(printf '%s\n' "$protos" | awk -F '\t' -v s="$s" '$1 == s { print $2; exit }')
	[ "$hdr" = "$pg" ] || fail "$s: prototype in $rel differs from include/safeopen.h:
   header: $hdr
   page:   $pg"
	# Its NAME summary must be the header's @brief, and the header's comment
	# must point at this page.
	ps=$(printf '%s\n' "$out" | sed -n 's/^summary	//p')
	hb=$(printf '%s\n' "$protos" | awk -F '\t' -v s="$s" '$1 == s { print $3; exit }')
	[ -n "$ps" ] || fail "$s: the NAME section of $rel has no \"$s \\- summary\" line"
	[ "$hb" = "$ps" ] || fail "$s: the NAME summary in $rel differs from the @brief in include/safeopen.h:
   header: $hb
   page:   $ps"
	pn=${rel##*/}; pn=${pn%.3}
	hs=$(printf '%s\n' "$protos" | awk -F '\t' -v s="$s" '$1 == s { print $4; exit }')
	[ "$hs" = "$pn(3)" ] || fail "$s: its comment in include/safeopen.h says @see '$hs', not $pn(3)"
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
[ $status -eq 0 ] && echo "check-man-symbols: $n symbols, each with a page with NAME (its summary the header's @brief), SYNOPSIS (matching the header), RETURN VALUE, ERRORS"
exit $status
