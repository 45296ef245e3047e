#!/bin/sh
# Turns the hand-written man pages into Doxygen input for `make doc`:
#   OUT/manpages.md  the "Manual pages" page, listing them;
#   OUT/man_NAME.md  one page per man page (the rendered text, 80 columns);
#   OUT/manlinks.dox for every function, a paragraph appended to its API
#                    documentation that links its man page (with EXAMPLES).
# The prototype of each @fn comes from the page's SYNOPSIS, which
# tests/docs/check-man-symbols.sh keeps identical to include/safeopen.h.
# usage: man2dox.sh SRCDIR OUTDIR
set -eu
src=$1
out=$2
mkdir -p "$out"
md="$out/manpages.md"
dox="$out/manlinks.dox"
command -v man >/dev/null 2>&1 || { echo "man2dox: man (man-db) is needed for make doc" >&2; exit 1; }

render() { (cd "$src/doc/man" && MANWIDTH=80 LC_ALL=C.UTF-8 man -l "$1" 2>/dev/null | col -bx); }

{
	echo "# Manual pages {#manpages}"
	echo
	echo "The reference manual: one page per function, installed by \`make install\` (\`man 3 safe_openat2\`)."
	echo "Functions that share a page are listed with it."
	echo
	for p in "$src"/doc/man/man7/*.7 "$src"/doc/man/man3/*.3; do
		head -n 1 "$p" | grep -q '^\.so ' && continue
		b=$(basename "$p"); n=${b%.*}; s=${b##*.}
		# The NAME section has one "names \- summary" line per summary.
		names=$(awk '/^\.SH/ { on = ($0 == ".SH NAME"); next }
			on && / \\- / { sub(/ \\-.*/, ""); out = out (out == "" ? "" : ", ") $0 }
			END { print out }' "$p")
		echo "- \\subpage man_$n \"$n($s)\": $names"
	done
} > "$md"
# One markdown file per page (Doxygen makes one page of each file).
for p in "$src"/doc/man/man7/*.7 "$src"/doc/man/man3/*.3; do
	head -n 1 "$p" | grep -q '^\.so ' && continue
	b=$(basename "$p"); n=${b%.*}; s=${b##*.}
	rel=${p#"$src"/doc/man/}
	{
		echo "# $n($s) {#man_$n}"
		echo
		echo '```'
		render "$rel"
		echo '```'
	} > "$out/man_$n.md"
done

: > "$dox"
for s in $(sed -n 's/^[[:space:]]*\([a-z_][a-z0-9_]*\);$/\1/p' "$src/lib/libsafeopen.sym"); do
	p="$src/doc/man/man3/$s.3"
	[ -f "$p" ] || continue
	so=$(sed -n '1s/^\.so man3\/\(.*\)\.3$/\1/p' "$p")
	page=${so:-$s}
	proto=$(sed -n '/^\.SH SYNOPSIS/,/^\.SH/p' "$src/doc/man/man3/$page.3" | sed -n '/^\.EX/,/^\.EE/p' \
		| sed 's/\\-/-/g' | awk -v s="$s" '$0 ~ "[ *]" s "\\(" {on=1} on {print} on && /;/ {exit}' \
		| tr '\n' ' ' | sed 's/;.*//; s/  */ /g')
	[ -n "$proto" ] || continue
	ex=""
	grep -q '^\.SH EXAMPLES' "$src/doc/man/man3/$page.3" && ex=", with a complete example program"
	cat >> "$dox" <<DOX
/**
@fn $proto
@par Manual page
@ref man_$page "$page(3)"$ex.
*/
DOX
done
