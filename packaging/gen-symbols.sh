#!/bin/sh
# Writes packaging/debian/libsafeopen1.symbols from lib/libsafeopen.sym: every
# symbol of the version script with the upstream version that introduced it.
# Symbols already in the file keep their version; new ones get the version of
# configure.ac's AC_INIT (or $1). Run after the API changes, and commit:
#     packaging/gen-symbols.sh
# debian/rules sets DPKG_GENSYMBOLS_CHECK_LEVEL=4: the package build fails if
# the library exports a symbol this file lacks or lacks one it lists.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
out="$top/packaging/debian/libsafeopen1.symbols"
ver=${1:-$(sed -n 's/^AC_INIT(\[libsafeopen\], \[\([^]]*\)\].*/\1/p' "$top/configure.ac")}
[ -n "$ver" ] || { echo "gen-symbols: no version in configure.ac" >&2; exit 1; }
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
{
	echo "libsafeopen.so.1 libsafeopen1 #MINVER#"
	echo "* Build-Depends-Package: libsafeopen-dev"
	# Version nodes, then their symbols, in version-script order.
	awk '/^[A-Z][A-Z0-9_.]* *{/ { node = $1; print "N " node " " node; next }
	     node != "" && /^[ \t]*[a-z_][a-z0-9_]*;/ { s = $1; sub(/;$/, "", s); print "S " s " " node }' \
		"$top/lib/libsafeopen.sym" | while read -r kind name node; do
		old=$(sed -n "s/^ $name@$node \(.*\)$/\1/p" "$out" 2>/dev/null | head -n 1)
		echo " $name@$node ${old:-$ver}"
	done
} > "$tmp"
mv "$tmp" "$out"
trap - EXIT
echo "gen-symbols: $(grep -c '@' "$out") symbols in $out"
