#!/bin/sh
# Extracts the program of every man page's EXAMPLES section (the .EX/.EE
# blocks after `.SH EXAMPLES`, with the groff escapes undone) and compiles it
# against the header and the built library with -Wall -Wextra -Werror, so an
# example cannot drift from the API. Then runs each program that has a
# `.\" test: COMMAND` line (a shell command run in a fresh temporary
# directory, naming the program $PROG) and requires exit 0.
#
# The compiled examples are kept in the build tree (tests/docs/man-examples/,
# removed by make clean), as make would keep them: an example is compiled
# again when its text, the header, the library or the compiler and its flags
# changed (a timestamp equal to the header's or the library's counts as
# changed), so that a second `make check` only runs them. One awk extracts
# every page.
set -eu
srcdir=${top_srcdir:-.}
. "$srcdir/tests/harness/row.sh"
builddir=${top_builddir:-.}
cc=${CC:-cc}
lib=${MAN_LIBS:-$builddir/lib/.libs/libsafeopen.so}
[ -f "$lib" ] || { echo "check-man-examples: library $lib not built"; exit 1; }
libdir=${lib%/*}
header=$srcdir/include/safeopen.h
tmp=$(mktemp -d)
row_cleanup='rm -rf "$tmp"'
cache=$builddir/tests/docs/man-examples
[ -d "$cache" ] || mkdir -p "$cache"
# The compiler and its flags: another set (CC=clang, a sanitizer build)
# starts the cache afresh.
sig="$cc|${TEST_LINK_FLAGS:-}|$srcdir|$libdir"
old=; [ -f "$cache/signature" ] && IFS= read -r old <"$cache/signature"
if [ "$old" != "$sig" ]; then
	rm -f "$cache"/*
	printf '%s\n' "$sig" >"$cache/signature"
fi
status=0
n=0
built=0
skipped=0

# Every page's example into $cache/NAME.c, written only when its text changed
# (its timestamp is then newer than its program's); its test line into
# $tmp/NAME.test; into $tmp/names, in order, one line per example: its name,
# whether it is a program (a line beginning "int main(") and whether it
# names statx.
awk -v cache="$cache" -v tmp="$tmp" '
function undo(s, from, to,   out, i) { # every "from" in s replaced by "to"
	out = ""
	while ((i = index(s, from)) > 0) { out = out substr(s, 1, i - 1) to; s = substr(s, i + length(from)) }
	return out s
}
function flush(   f, old, l) {
	if (name == "" || text == "") return
	f = cache "/" name ".c"
	old = ""
	while ((getline l < f) > 0) old = old l "\n"
	close(f)
	if (old != text) { printf "%s", text > f; close(f) }
	print name, (("\n" text) ~ /\nint main\(/ ? "program" : "fragment"), (text ~ /statx/ ? "statx" : "-") > (tmp "/names")
	if (test != "") { print test > (tmp "/" name ".test"); close(tmp "/" name ".test") }
}
FNR == 1 { flush(); name = FILENAME; sub(/.*\//, "", name); sub(/\.[0-9]$/, "", name); text = ""; test = ""; ex = on = 0 }
/^\.\\" test: / { test = substr($0, 11) }
/^\.SH/ { ex = ($0 == ".SH EXAMPLES"); next }
ex && /^\.EX/ { on = 1; next }
ex && /^\.EE/ { on = 0; next }
on {
	l = undo($0, "\\(aq", "\047"); l = undo(l, "\\(dq", "\""); l = undo(l, "\\-", "-")
	l = undo(l, "\\&", ""); l = undo(l, "\\e", "\\")
	text = text l "\n"
}
END { flush() }' "$srcdir"/doc/man/man3/*.3 "$srcdir"/doc/man/man7/*.7
[ -s "$tmp/names" ] || { echo "check-man-examples: no example found"; exit 1; }
# The directories the test lines run in, made by one mkdir.
set --
for t in "$tmp"/*.test; do
	[ -e "$t" ] || break
	t=${t##*/}
	set -- "$@" "$tmp/run.${t%.test}"
done
[ $# -eq 0 ] || mkdir "$@"

# musl 1.2.3 has no statx() wrapper nor struct statx: examples that use them
# cannot compile there (the library itself calls the system call). Probed
# once per cache.
if [ ! -f "$cache/have-statx" ]; then
	printf '#define _GNU_SOURCE 1\n#include <sys/stat.h>\nstruct statx x;\n' >"$tmp/statx.c"
	if $cc -c -o "$tmp/statx.o" "$tmp/statx.c" 2>/dev/null; then echo yes; else echo no; fi >"$cache/have-statx"
fi
read -r have_statx <"$cache/have-statx"

# fresh NAME: true when $cache/NAME is newer than the header, the library
# and its source
fresh() {
	[ -f "$cache/$1" ] && [ "$cache/$1" -nt "$cache/$2.c" ] && [ "$cache/$1" -nt "$header" ] &&
		{ [ "$3" = no ] || [ "$cache/$1" -nt "$lib" ]; }
}
while read -r name kind uses_statx; do
	src=$cache/$name.c
	if [ "$have_statx" = no ] && [ "$uses_statx" = statx ]; then
		echo "check-man-examples: $name: SKIP (the C library has no struct statx)"
		skipped=$((skipped + 1)); continue
	fi
	n=$((n + 1))
	# A fragment without main() is compiled only; a program is also linked.
	# Linker inputs go only to a link (clang -Werror rejects unused ones);
	# TEST_LINK_FLAGS: the build's sanitizer and linker flags (make check sets it).
	if [ "$kind" = program ]; then
		out=$name linked=yes link="${TEST_LINK_FLAGS:-} -o $cache/$name -L$libdir -lsafeopen -Wl,-rpath,$libdir"
	else
		out=$name.o linked=no link="-c -o $cache/$name.o"
	fi
	if ! fresh "$out" "$name" $linked; then
		rm -f "$cache/$out"
		built=$((built + 1))
		# shellcheck disable=SC2086
		if ! $cc -std=c11 -Wall -Wextra -Werror -I"$srcdir/include" "$src" $link 2>"$tmp/$name.err"; then
			echo "check-man-examples: the example of $name does not compile:"
			cat "$tmp/$name.err"; rm -f "$cache/$out"; status=1; continue
		fi
	fi
	if [ -f "$tmp/$name.test" ]; then
		IFS= read -r args <"$tmp/$name.test"
		T=$tmp/run.$name
		PROG="$cache/$name"
		export PROG
		if ! (cd "$T" && eval "$args") >"$tmp/$name.out" 2>&1; then
			echo "check-man-examples: the example of $name failed when run with: $args"
			cat "$tmp/$name.out"; status=1
		fi
	fi
done <"$tmp/names"
[ $n -gt 0 ] || { echo "check-man-examples: no example found"; exit 1; }
[ $status -eq 0 ] || exit $status
echo "check-man-examples: $n examples compile ($built compiled now, the others unchanged since they were), those with a test line run; $skipped skipped"
# An example that could not be compiled here is not a pass.
[ $skipped -eq 0 ] || row_skip "$skipped examples use struct statx, which the C library lacks"
