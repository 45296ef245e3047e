#!/bin/sh
# Extracts the program of every man page's EXAMPLES section (the .EX/.EE
# blocks after `.SH EXAMPLES`, with the groff escapes undone) and compiles it
# against the header and the built library with -Wall -Wextra -Werror, so an
# example cannot drift from the API. Then runs each program that has a
# `.\" test: COMMAND` line (a shell command run in a fresh temporary
# directory, naming the program $PROG) and requires exit 0.
set -eu
srcdir=${top_srcdir:-.}
builddir=${top_builddir:-.}
cc=${CC:-cc}
lib=${MAN_LIBS:-$builddir/lib/.libs/libsafeopen.so}
[ -f "$lib" ] || { echo "check-man-examples: library $lib not built"; exit 1; }
libdir=$(dirname "$lib")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
status=0
n=0
skipped=0
# musl 1.2.3 has no statx() wrapper nor struct statx: examples that use them
# cannot compile there (the library itself calls the system call).
printf '#define _GNU_SOURCE 1\n#include <sys/stat.h>\nstruct statx x;\n' > "$tmp/statx.c"
have_statx=yes
$cc -c -o "$tmp/statx.o" "$tmp/statx.c" 2>/dev/null || have_statx=no
for p in "$srcdir"/doc/man/man3/*.3 "$srcdir"/doc/man/man7/*.7; do
	grep -q '^\.SH EXAMPLES' "$p" || continue
	name=$(basename "$p"); name=${name%.*}
	awk '/^\.SH/ { ex = ($0 == ".SH EXAMPLES"); next }
	     ex && /^\.EX/ { on = 1; next }
	     ex && /^\.EE/ { on = 0; next }
	     on' "$p" \
		| sed -e 's/\\(aq/'"'"'/g' -e 's/\\(dq/"/g' -e 's/\\-/-/g' -e 's/\\&//g' -e 's/\\e/\\/g' \
		> "$tmp/$name.c"
	[ -s "$tmp/$name.c" ] || continue
	if [ $have_statx = no ] && grep -q 'statx' "$tmp/$name.c"; then
		echo "check-man-examples: $name: SKIP (the C library has no struct statx)"
		skipped=$((skipped + 1)); continue
	fi
	n=$((n + 1))
	# A fragment without main() is compiled only; a program is also linked.
	# Linker inputs go only to a link (clang -Werror rejects unused ones);
	# TEST_LINK_FLAGS: the build's sanitizer and linker flags (make check sets it).
	if grep -q '^int main(' "$tmp/$name.c"; then
		link="${TEST_LINK_FLAGS:-} -o $tmp/$name -L$libdir -lsafeopen -Wl,-rpath,$libdir"
	else
		link="-c -o $tmp/$name.o"
	fi
	# shellcheck disable=SC2086
	if ! $cc -std=c11 -Wall -Wextra -Werror -I"$srcdir/include" "$tmp/$name.c" \
		$link 2>"$tmp/$name.err"; then
		echo "check-man-examples: the example of $name does not compile:"
		cat "$tmp/$name.err"; status=1; continue
	fi
	args=$(sed -n 's/^\.\\" test: //p' "$p")
	if [ -n "$args" ]; then
		T=$(mktemp -d "$tmp/run.XXXXXX")
		PROG="$tmp/$name"
		export PROG
		if ! (cd "$T" && eval "$args") >"$tmp/$name.out" 2>&1; then
			echo "check-man-examples: the example of $name failed when run with: $args"
			cat "$tmp/$name.out"; status=1
		fi
	fi
done
[ $n -gt 0 ] || { echo "check-man-examples: no example found"; exit 1; }
[ $status -eq 0 ] || exit $status
echo "check-man-examples: $n examples compile (and those with a test line run), $skipped skipped"
# An example that could not be compiled here is not a pass.
[ $skipped -eq 0 ] || exit 77
