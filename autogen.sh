#!/bin/sh
# Regenerate the build system (configure, Makefile.in, libtool glue).
set -e
cd "$(dirname "$0")"
mkdir -p m4 build-aux
autoreconf -fi
echo "Now run ./configure && make"
