#!/bin/sh
# Builds the Debian packages from a release tarball, as Debian would:
#     packaging/build-deb.sh [TARBALL] [OUTDIR]
# TARBALL defaults to the newest libsafeopen-*.tar.gz of the current directory
# (`make dist`). The tarball is unpacked into a fresh directory, this
# directory's debian/ is copied in, and dpkg-buildpackage -us -uc -b runs with
# fakeroot (run it as a non-root user; `make check` runs during the build
# unless DEB_BUILD_OPTIONS contains nocheck). The .deb files land in OUTDIR
# (default: the current directory).
#
# Why packaging/debian and not debian/ at the top: upstream's packaging stays
# out of the way of a distribution's own debian/ directory (Debian's
# maintainers replace it), and the package is built from the same tarball
# users get, so a file missing from `make dist` breaks this build too.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
tarball=${1:-$(ls -t libsafeopen-*.tar.gz 2>/dev/null | head -n 1)}
out=$(cd "${2:-.}" && pwd)
[ -f "$tarball" ] || { echo "build-deb: no tarball (run make dist first)" >&2; exit 1; }
tarball=$(cd "$(dirname "$tarball")" && pwd)/$(basename "$tarball")
ver=$(basename "$tarball" .tar.gz | sed 's/^libsafeopen-//')
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp "$tarball" "$work/libsafeopen_$ver.orig.tar.gz"
tar -C "$work" -xzf "$tarball"
cp -r "$here/debian" "$work/libsafeopen-$ver/debian"
(cd "$work/libsafeopen-$ver" && dpkg-buildpackage -us -uc -b -rfakeroot)
cp "$work"/*.deb "$work"/*.buildinfo "$work"/*.changes "$out"/
ls -1 "$work"/*.deb | sed 's|.*/|build-deb: |'
