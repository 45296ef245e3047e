# Example programs: the attack demo (`make demo`), the safeopen command-line
# tool (installed, with its man page), the safe-httpd file server, and hello,
# the smallest consumer (also the pkg-config check of .ci/run).
bin_PROGRAMS += examples/safeopen
examples_safeopen_SOURCES = examples/safeopen.c examples/extract.c examples/extract.h
examples_safeopen_LDADD = lib/libsafeopen.la
# safeopen extract (examples/extract.c); without libarchive it says it is not
# built. (The per-target CPPFLAGS is set unconditionally: set only inside the
# conditional it would be empty, without AM_CPPFLAGS, in the other branch.)
examples_safeopen_CPPFLAGS = $(AM_CPPFLAGS) $(EXTRACT_CPPFLAGS)
EXTRACT_CPPFLAGS =
if HAVE_LIBARCHIVE
EXTRACT_CPPFLAGS += $(LIBARCHIVE_CFLAGS)
examples_safeopen_LDADD += $(LIBARCHIVE_LIBS)
endif
dist_man1_MANS += examples/safeopen.1

noinst_PROGRAMS += examples/hello examples/demo examples/safe-httpd
examples_hello_SOURCES = examples/hello.c
examples_hello_LDADD = lib/libsafeopen.la
examples_demo_SOURCES = examples/demo.c
examples_demo_LDADD = lib/libsafeopen.la
examples_safe_httpd_SOURCES = examples/safe-httpd.c
examples_safe_httpd_LDADD = lib/libsafeopen.la

# The attacker of tests/test-httpd.sh: swaps a directory and a symlink with
# renameat2(RENAME_EXCHANGE) as fast as it can, for a bounded time.
check_PROGRAMS += examples/race-swap
examples_race_swap_SOURCES = examples/race-swap.c

TESTS += tests/test-cli.sh tests/test-httpd.sh
EXTRA_DIST += tests/test-cli.sh tests/test-httpd.sh

# safeopen extract: hostile archives made by tests/gen-archives.py, a benign
# corpus compared with GNU tar (tests/tree-manifest.py), the swap attack
# (examples/race-swap). SKIPs when safeopen was built without libarchive.
TESTS += tests/test-extract.sh
EXTRA_DIST += tests/test-extract.sh tests/gen-archives.py tests/tree-manifest.py

demo: examples/demo
	@./examples/demo
PHONY_TARGETS += demo

# make bench-extract: safeopen extract (both paths) next to GNU tar and bsdtar
# on a synthetic archive of 10,000 small files and on the release tarball
# (made with dist-gzip when missing). BENCH_EXTRACT_ARGS="--runs 9 --dir /dev/shm"
BENCH_EXTRACT_ARGS =
bench-extract: examples/safeopen
	@test -f $(distdir).tar.gz || $(MAKE) $(AM_MAKEFLAGS) dist-gzip
	top_builddir='$(abs_top_builddir)' $(SHELL) $(srcdir)/bench/extract-bench.sh \
	  $(BENCH_EXTRACT_ARGS) $(distdir).tar.gz
PHONY_TARGETS += bench-extract
EXTRA_DIST += bench/extract-bench.sh doc/recipes/extract.md
