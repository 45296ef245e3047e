#!/bin/sh
# Every function of the version script has a section 3 man page (directly or
# through a `.so` link) whose NAME section gives it a summary line
# ("name \- summary") equal to the @brief of its declaration in
# include/safeopen.h, whose SYNOPSIS includes <safeopen.h> and declares it
# with the header's prototype, and which has RETURN VALUE and ERRORS
# sections; and the header's comment names that page (@see page(3)). Every page listed in doc/local.mk exists,
# and no page in doc/man is left out of it. (One awk program reads the
# header, the version script and the pages: no process per symbol.)
set -eu
srcdir=${top_srcdir:-.}
. "$srcdir/tests/harness/row.sh"
man="$srcdir/doc/man"
status=0

# The header's declarations: the prototype without blanks, SAFEOPEN_PUBLIC
# and SAFEOPEN_NODISCARD; the summary is the @brief of the comment before
# it (its first letter lowered, Doxygen's @c / @p / # markup and a final
# period dropped, blanks collapsed); the page that comment's @see names.
# Then, per symbol of the version script, one pass over its page: which
# checks fail, the page's prototype and its NAME summary.
out=$(awk -v man="$man" -v srcdir="$srcdir" '
	function target(s,    p, first) {
		p = man "/man3/" s ".3"
		first = ""
		if ((getline first < p) < 0) return ""
		close(p)
		if (first ~ /^\.so /) {
			p = man "/" substr(first, 5)
			if ((getline first < p) < 0) return ""
			close(p)
		}
		return p
	}
	function fail(msg) { print "check-man-symbols: " msg; bad = 1 }
	function word(t, s) { return t ~ ("(^|[^A-Za-z0-9_])" s "([^A-Za-z0-9_]|$)") }
	function page(s, p, rel,    line, sec, name, summary, syn, inc, decl, ex, done, grab, proto, errs, ret, t, pn) {
		sec = ""; name = 0; summary = ""; syn = inc = decl = ex = done = grab = errs = ret = 0; proto = ""
		while ((getline line < p) > 0) {
			if (line ~ /^\.SH/) {
				sec = line; sub(/^\.SH[ \t]+/, "", sec); gsub(/"/, "", sec); continue
			}
			if (sec == "NAME" && word(line, s)) {
				name = 1
				if (line ~ / \\- /) {
					t = line; sub(/^.* \\- /, "", t); gsub(/\\-/, "-", t)
					gsub(/[ \t]+/, " ", t); sub(/[ .]*$/, "", t); summary = t
				}
			}
			if (sec == "SYNOPSIS") {
				syn = 1
				if (line ~ /#include <safeopen\.h>/) inc = 1
				if (line ~ ("(^|[^A-Za-z0-9_])" s "\\(")) decl = 1
				if (line ~ /^\.EX/) { ex = 1; continue }
				if (line ~ /^\.EE/) { ex = 0; continue }
				if (ex && !done && (grab || line ~ ("[ *]" s "\\("))) {
					grab = 1; t = line
					gsub(/\\e/, "\\", t); gsub(/\\-/, "-", t); gsub(/\\\(aq/, "\047", t)
					proto = proto t
					if (t ~ /;/) { grab = 0; done = 1 }
				}
			}
			if (sec == "ERRORS" && line ~ /[^ \t]/) errs = 1
			if (sec == "RETURN VALUE" && line ~ /[^ \t]/) ret = 1
		}
		close(p)
		if (!syn) { fail(s ": " rel " has no SYNOPSIS"); return }
		if (!name) fail(s ": not named in the NAME section of " rel)
		if (!inc) fail(s ": SYNOPSIS of " rel " lacks #include <safeopen.h>")
		if (!decl) fail(s ": SYNOPSIS of " rel " does not declare " s "()")
		if (!errs) fail(s ": " rel " has no (or an empty) ERRORS section")
		if (!ret) fail(s ": " rel " has no RETURN VALUE section")
		# The prototype in the page must match the header (whitespace-insensitive):
		# catches a page left behind by an API change.
		gsub(/[ \t]/, "", proto)
		if (hproto[s] != proto)
			fail(s ": prototype in " rel " differs from include/safeopen.h:\n   header: " hproto[s] "\n   page:   " proto)
		# Its NAME summary must be the @brief, and the comment must point at this page.
		if (summary == "")
			fail(s ": the NAME section of " rel " has no \"" s " \\- summary\" line")
		if (hbrief[s] != summary)
			fail(s ": the NAME summary in " rel " differs from the @brief in include/safeopen.h:\n   header: " hbrief[s] "\n   page:   " summary)
		pn = rel; sub(/.*\//, "", pn); sub(/\.3$/, "", pn)
		if (hsee[s] != pn "(3)")
			fail(s ": its comment in include/safeopen.h says @see \047" hsee[s] "\047, not " pn "(3)")
	}
	FNR == 1 { file++ }
	file == 1 && /^\/\*\*/ { brief = ""; see = ""; inbrief = 0 }
	file == 1 && /^ \*\/|\*\// { inbrief = 0 }
	file == 1 && /^ \* @brief / { t = $0; sub(/^ \* @brief /, "", t); brief = t; inbrief = 1; next }
	file == 1 && inbrief && /^ \* *(@|$)/ { inbrief = 0 }
	file == 1 && inbrief && /^ \* / { t = $0; sub(/^ \* +/, "", t); brief = brief " " t }
	file == 1 && /^ \* @see / { see = $3 }
	file == 1 && /^SAFEOPEN_PUBLIC/ { on = 1; text = "" }
	file == 1 && on { text = text $0 }
	file == 1 && on && /;/ {
		on = 0
		gsub(/SAFEOPEN_PUBLIC|SAFEOPEN_NODISCARD/, "", text)
		nm = text; sub(/\(.*/, "", nm); sub(/.*[^A-Za-z0-9_]/, "", nm)
		gsub(/[ \t]/, "", text)
		b = brief
		gsub(/@[cp] /, "", b); gsub(/#/, "", b); gsub(/[ \t]+/, " ", b)
		sub(/^ /, "", b); sub(/[ .]*$/, "", b)
		hproto[nm] = text; hbrief[nm] = tolower(substr(b, 1, 1)) substr(b, 2); hsee[nm] = see
		brief = ""; see = ""
	}
	file == 2 && /^[ \t]*[a-z_][a-z0-9_]*;$/ { s = $0; gsub(/[ \t;]/, "", s); syms[++n] = s }
	END {
		for (i = 1; i <= n; i++) {
			p = target(syms[i])
			if (p == "") {
				fail(syms[i] ": no page doc/man/man3/" syms[i] ".3 (or its .so target is missing)")
				continue
			}
			rel = p; sub("^" srcdir "/", "", rel)
			page(syms[i], p, rel)
		}
		print "symbols " n
		exit bad
	}' "$srcdir/include/safeopen.h" "$srcdir/lib/libsafeopen.sym") || status=1
printf '%s\n' "$out" | grep -v '^symbols ' || true
n=$(printf '%s\n' "$out" | sed -n 's/^symbols //p')

# doc/local.mk lists exactly the pages that exist (so all are installed).
listed=$(grep -o 'doc/man/man[0-9]/[A-Za-z0-9_.]*' "$srcdir/doc/local.mk" | sort -u)
present=$(cd "$srcdir" && ls doc/man/man[0-9]/* | sort -u)
if [ "$listed" != "$present" ]; then
	status=1
	echo "check-man-symbols: doc/local.mk (<) and doc/man (>) differ:"
	printf '%s\n' "$listed" > "${TMPDIR:-/tmp}/cms.$$.a"; printf '%s\n' "$present" > "${TMPDIR:-/tmp}/cms.$$.b"
	diff "${TMPDIR:-/tmp}/cms.$$.a" "${TMPDIR:-/tmp}/cms.$$.b" || true
	rm -f "${TMPDIR:-/tmp}/cms.$$.a" "${TMPDIR:-/tmp}/cms.$$.b"
fi
[ -n "$n" ] && [ "$n" -gt 0 ] || { echo "check-man-symbols: no symbol found in lib/libsafeopen.sym"; status=1; }
[ $status -eq 0 ] && echo "check-man-symbols: $n symbols, each with a page with NAME (its summary the header's @brief), SYNOPSIS (matching the header), RETURN VALUE, ERRORS"
exit $status
