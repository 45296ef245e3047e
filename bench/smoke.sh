#!/bin/sh
# Smoke test of the benchmark, for correctness only: every method of every
# cell must open the right object (or fail with the right errno). No timing.
# The tree is built in the current directory (the build directory) and removed.
. "${top_srcdir:-.}/tests/harness/row.sh"
bench="${top_builddir:-.}/bench/bench"
test -x "$bench" || { echo "smoke.sh: $bench not built"; exit 99; }
"$bench" --verify-only --quick
