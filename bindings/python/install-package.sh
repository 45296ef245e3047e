#!/bin/sh
# SPDX-License-Identifier: MIT
# Install the safeopen package as one step for `make install`
# (bindings/python/local.mk):
#   install-package.sh DIR EXTENSION SUFFIX FILE...
# makes DIR/safeopen hold FILE... and EXTENSION as _safeopen$SUFFIX. The new
# package is assembled beside it (DIR/.safeopen.new.PID) and renamed into
# place, replacing an older one only then; on any failure nothing is left:
# not the new files, not a half-made safeopen/ (which Python would import as
# an empty namespace package), not the directories this script created.
set -eu
dir=$1 ext=$2 suffix=$3
shift 3
umask 022

# The directories of DIR that do not exist yet, deepest first, for the cleanup.
created=""
d=$dir
while [ ! -d "$d" ]; do
	created="$created $d"
	d=$(dirname "$d")
done
new="$dir/.safeopen.new.$$"
old="$dir/.safeopen.old.$$"
ok=0
cleanup() {
	[ $ok -eq 1 ] && return
	rm -rf "$new"
	[ -d "$old" ] && [ ! -e "$dir/safeopen" ] && mv "$old" "$dir/safeopen"
	for d in $created; do rmdir "$d" 2>/dev/null || break; done
	echo "install-package.sh: failed: nothing installed in $dir" >&2
}
trap cleanup EXIT
trap 'exit 1' HUP INT TERM

mkdir -p "$dir"
mkdir "$new"
for f in "$@"; do
	cp "$f" "$new/" && chmod 644 "$new/$(basename "$f")"
done
cp "$ext" "$new/_safeopen$suffix"
chmod 755 "$new/_safeopen$suffix"
if [ -e "$dir/safeopen" ]; then
	mv "$dir/safeopen" "$old"
fi
mv "$new" "$dir/safeopen"
ok=1
rm -rf "$old"
echo "install-package.sh: installed the safeopen package in $dir/safeopen"
