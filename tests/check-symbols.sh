#!/bin/sh
# Fails if the shared library exports anything that is not in the version
# script, anything unversioned, or anything the public header does not declare,
# or if a symbol of the version script is missing from the library.
set -eu
srcdir=${top_srcdir:-.}
builddir=${top_builddir:-.}
so=$(ls "$builddir"/lib/.libs/libsafeopen.so.*.*.* 2>/dev/null | head -n 1)
[ -n "$so" ] || { echo "check-symbols: no built libsafeopen.so under $builddir/lib/.libs"; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# Exported (defined, global) dynamic symbols with their versions.
readelf --dyn-syms --wide "$so" | awk '$5 == "GLOBAL" && $7 != "UND" && $8 != "" { print $8 }' \
	> "$tmp/exported-raw"
grep -v '^LIBSAFEOPEN_1.0$' "$tmp/exported-raw" | sed 's/@@*.*//' | sort -u > "$tmp/exported-bare" || true
sed -n 's/@@*LIBSAFEOPEN_1\.0$//p' "$tmp/exported-raw" | sort -u > "$tmp/exported"
unversioned=$(grep -v '@' "$tmp/exported-raw" | grep -v '^LIBSAFEOPEN_1.0$' || true)
sed -n 's/^[[:space:]]*\([a-z_][a-z0-9_]*\);$/\1/p' "$srcdir/lib/libsafeopen.sym" | sort -u > "$tmp/script"
# Declarations start with SAFE_PUBLIC and name the function on the same line.
grep '^SAFE_PUBLIC' "$srcdir/include/safeopen.h" | grep -o '\bsafe_[a-z0-9_]*(' | sed 's/($//' \
	| sort -u > "$tmp/header"

status=0
if [ -n "$unversioned" ]; then
	echo "check-symbols: unversioned exports:"; echo "$unversioned"; status=1
fi
if ! cmp -s "$tmp/exported" "$tmp/script"; then
	echo "check-symbols: exported (<) and version script (>) differ:"
	diff "$tmp/exported" "$tmp/script" || true
	status=1
fi
if ! cmp -s "$tmp/script" "$tmp/header"; then
	echo "check-symbols: version script (<) and header declarations (>) differ:"
	diff "$tmp/script" "$tmp/header" || true
	status=1
fi
[ $status -eq 0 ] && echo "check-symbols: $(wc -l < "$tmp/exported") symbols, all versioned LIBSAFEOPEN_1.0 and declared"
exit $status
