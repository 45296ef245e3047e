# tests/: the Check suites (one per module), the shell tests of the examples
# and the manual, and the test targets check-long, check-mutations,
# check-kernels and check-qemu. Without a Check that links with $(CC) (e.g.
# CC=musl-gcc on Debian) the suites of the resolver table, tmpfile and ops
# are built against tests/minicheck instead (see below).

# The slowest tests come first in TESTS, so that `make -j2 check` does not end
# with one of them running alone.
TESTS += tests/test-httpd.sh tests/test-extract.sh

if HAVE_CHECK
check_LIBRARIES += tests/libtestutil.a
tests_libtestutil_a_SOURCES = tests/fixture.c tests/fixture.h tests/sandbox.c tests/sandbox.h
tests_libtestutil_a_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)

TEST_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS) -I$(top_srcdir)/tests
TEST_LDADD = tests/libtestutil.a lib/libsafeopen.la $(CHECK_LIBS)
# -no-install: the suites are real binaries that find the library by their
# run path, not libtool wrapper scripts (a shell started before every suite
# and every valgrind or seccomp-profile run of it).
SUITE_LINK = $(AM_LDFLAGS) -no-install

# Suite "tmpfile".
check_PROGRAMS += tests/test_tmpfile
tests_test_tmpfile_SOURCES = tests/test_tmpfile.c
tests_test_tmpfile_CFLAGS = $(TEST_CFLAGS)
tests_test_tmpfile_LDADD = $(TEST_LDADD)
tests_test_tmpfile_LDFLAGS = $(SUITE_LINK)
TESTS += tests/test_tmpfile

# Suite "ops".
check_PROGRAMS += tests/test_ops
tests_test_ops_SOURCES = tests/test_ops.c
tests_test_ops_CFLAGS = $(TEST_CFLAGS)
tests_test_ops_LDADD = $(TEST_LDADD)
tests_test_ops_LDFLAGS = $(SUITE_LINK)
TESTS += tests/test_ops

# Suite "base" and the check of the exported symbols.
check_PROGRAMS += tests/test_base
tests_test_base_SOURCES = tests/test_base.c
tests_test_base_CFLAGS = $(TEST_CFLAGS)
tests_test_base_LDADD = $(TEST_LDADD)
tests_test_base_LDFLAGS = $(SUITE_LINK)
TESTS += tests/test_base tests/check-symbols.sh
EXTRA_DIST += tests/check-symbols.sh tests/direct.sh tests/partial.sh tests/strategy.h

# Suite "resolve": the resolver table, each case three ways.
check_PROGRAMS += tests/test_resolve
tests_test_resolve_SOURCES = tests/test_resolve.c
tests_test_resolve_CFLAGS = $(TEST_CFLAGS)
tests_test_resolve_LDADD = $(TEST_LDADD)
tests_test_resolve_LDFLAGS = $(SUITE_LINK)
TESTS += tests/test_resolve

# Attack and robustness: differential random testing against openat2 (with
# the differential core, fuzz/libdiffcore.a of fuzz/local.mk), fault
# injection, resource limits, concurrency.
check_PROGRAMS += tests/test_fuzz
tests_test_fuzz_SOURCES = tests/test_fuzz.c
tests_test_fuzz_CFLAGS = $(TEST_CFLAGS)
tests_test_fuzz_LDADD = fuzz/libdiffcore.a $(TEST_LDADD)
tests_test_fuzz_LDFLAGS = $(SUITE_LINK)
TESTS += tests/test_fuzz

check_PROGRAMS += tests/test_fault
tests_test_fault_SOURCES = tests/test_fault.c
tests_test_fault_CFLAGS = $(TEST_CFLAGS)
tests_test_fault_LDADD = fuzz/libdiffcore.a $(TEST_LDADD)
tests_test_fault_LDFLAGS = $(SUITE_LINK)
TESTS += tests/test_fault

check_PROGRAMS += tests/test_limits
tests_test_limits_SOURCES = tests/test_limits.c
tests_test_limits_CFLAGS = $(TEST_CFLAGS)
tests_test_limits_LDADD = $(TEST_LDADD)
tests_test_limits_LDFLAGS = $(SUITE_LINK)
TESTS += tests/test_limits

check_PROGRAMS += tests/test_concurrency
tests_test_concurrency_SOURCES = tests/test_concurrency.c
tests_test_concurrency_CFLAGS = $(TEST_CFLAGS)
tests_test_concurrency_LDADD = $(TEST_LDADD)
tests_test_concurrency_LDFLAGS = $(SUITE_LINK)
TESTS += tests/test_concurrency

# Suite "api": mkdir_all, mknod, open_parent, rename/link across two roots,
# the resolve bits; and the check that the public header compiles on its own
# as C99 and as C++.
check_PROGRAMS += tests/test_api
tests_test_api_SOURCES = tests/test_api.c
tests_test_api_CFLAGS = $(TEST_CFLAGS)
tests_test_api_LDADD = $(TEST_LDADD)
tests_test_api_LDFLAGS = $(SUITE_LINK)
TESTS += tests/test_api

TESTS += tests/check-header.sh tests/check-header-cxx.sh
EXTRA_DIST += tests/check-header.sh tests/check-header-cxx.sh
AM_TESTS_ENVIRONMENT += HEADER_CC='$(CC)'; export HEADER_CC;

# Suite "reuse": ".." and rmtree's climb under inode-number reuse,
# deterministic reproducers on a loop-mounted ext4 (root only, else SKIP),
# the plain race with a rename storm, chains deeper than the held levels.
check_PROGRAMS += tests/test_reuse
tests_test_reuse_SOURCES = tests/test_reuse.c
tests_test_reuse_CFLAGS = $(TEST_CFLAGS)
tests_test_reuse_LDADD = $(TEST_LDADD) -lpthread
tests_test_reuse_LDFLAGS = $(SUITE_LINK)
TESTS += tests/test_reuse

# Suite "walk": the confined tree walk (safe_walk_*): rows against a plain
# fd-relative walk, the defences, deep and wide trees, races.
check_PROGRAMS += tests/test_walk
tests_test_walk_SOURCES = tests/test_walk.c
tests_test_walk_CFLAGS = $(TEST_CFLAGS)
tests_test_walk_LDADD = $(TEST_LDADD) -lpthread
tests_test_walk_LDFLAGS = $(SUITE_LINK)
TESTS += tests/test_walk

# The Check binaries that check-valgrind runs under memcheck (and
# check-kernels under each seccomp profile), in this order.
VALGRIND_TESTS += tests/test_base tests/test_resolve tests/test_tmpfile tests/test_ops \
	tests/test_fuzz tests/test_fault tests/test_limits tests/test_concurrency \
	tests/test_api tests/test_reuse tests/test_walk

#   make check-long       every suite at its big size (SAFEOPEN_CHECK_LONG=1)
#   make check-mutations  each defence disabled in turn must make a test fail
#                         (tests/mutations.list, tests/check-mutations.sh)
EXTRA_DIST += tests/mutations.list tests/check-mutations.sh

check-long:
	SAFEOPEN_CHECK_LONG=1 $(MAKE) $(AM_MAKEFLAGS) check

check-mutations: $(check_PROGRAMS) $(lib_LTLIBRARIES)
	top_srcdir='$(abs_top_srcdir)' top_builddir='$(abs_top_builddir)' MAKE='$(MAKE)' \
	  $(SHELL) $(srcdir)/tests/check-mutations.sh

PHONY_TARGETS += check-long check-mutations

clean-mutations:
	rm -rf mutations
CLEAN_LOCAL_TARGETS += clean-mutations
PHONY_TARGETS += clean-mutations

# `make check-kernels`: every Check suite and the CLI test under seccomp profiles that
# make this kernel look like an older one (tests/kernel-profile.c: each system
# call newer than the profile's kernel fails with ENOSYS, for the whole test
# process and its children) or that block openat2 (EPERM, ENOSYS). The table
# printed at the end is profile x suite x result; any profile whose results
# differ from the unfiltered run ("full") fails the target.
# (Built by check-kernels, not by every `make check`.)
EXTRA_PROGRAMS += tests/kernel-profile
tests_kernel_profile_SOURCES = tests/kernel-profile.c
CLEANFILES += tests/kernel-profile$(EXEEXT)

KERNEL_PROFILES = full 4.18 5.4 5.10 5.15 6.1 openat2-eperm openat2-enosys
KERNEL_TESTS = $(VALGRIND_TESTS) tests/test-cli.sh
check-kernels: tests/kernel-profile$(EXEEXT)
	@MAKE='$(MAKE)' AM_MAKEFLAGS='$(AM_MAKEFLAGS)' KERNEL_TESTS='$(KERNEL_TESTS)' \
	  $(SHELL) $(srcdir)/tests/check-kernels.sh $(KERNEL_PROFILES)
PHONY_TARGETS += check-kernels
EXTRA_DIST += tests/check-kernels.sh
CLEANFILES += tests/kernels.table

# `make check-qemu KERNEL=/path/to/vmlinuz`: the resolver table, tmpfile and
# ops suites on a real (older) kernel under qemu (tests/check-qemu.sh).
check-qemu: $(check_PROGRAMS)
	@KERNEL='$(KERNEL)' QEMU_FS='$(QEMU_FS)' $(SHELL) $(srcdir)/tests/check-qemu.sh
PHONY_TARGETS += check-qemu
EXTRA_DIST += tests/check-qemu.sh
CLEANFILES += tests/qemu-console.log

else
# No usable Check: the suites that carry the resolver table, the tmpfile tests
# and the operations tests are built against tests/minicheck (the subset of
# Check's API they use, see its header), with the kernel as the oracle as
# always, plus the symbol check and the shell tests below.
check_LIBRARIES += tests/libminicheck.a
tests_libminicheck_a_SOURCES = tests/minicheck/check.c tests/minicheck/check.h \
	tests/minicheck/libc-compat.h \
	tests/fixture.c tests/fixture.h tests/sandbox.c tests/sandbox.h
tests_libminicheck_a_CPPFLAGS = $(MINICHECK_CPPFLAGS)
MINICHECK_CPPFLAGS = -I$(top_srcdir)/tests/minicheck -I$(top_srcdir)/tests $(AM_CPPFLAGS) \
	-include $(top_srcdir)/tests/minicheck/libc-compat.h
MINICHECK_LDADD = tests/libminicheck.a lib/libsafeopen.la

check_PROGRAMS += tests/minicheck/test_resolve tests/minicheck/test_tmpfile tests/minicheck/test_ops
tests_minicheck_test_resolve_SOURCES = tests/test_resolve.c
tests_minicheck_test_resolve_CPPFLAGS = $(MINICHECK_CPPFLAGS)
tests_minicheck_test_resolve_LDADD = $(MINICHECK_LDADD)
tests_minicheck_test_tmpfile_SOURCES = tests/test_tmpfile.c
tests_minicheck_test_tmpfile_CPPFLAGS = $(MINICHECK_CPPFLAGS)
tests_minicheck_test_tmpfile_LDADD = $(MINICHECK_LDADD)
tests_minicheck_test_ops_SOURCES = tests/test_ops.c
tests_minicheck_test_ops_CPPFLAGS = $(MINICHECK_CPPFLAGS)
tests_minicheck_test_ops_LDADD = $(MINICHECK_LDADD)
TESTS += tests/minicheck/test_tmpfile tests/minicheck/test_ops tests/minicheck/test_resolve \
	tests/check-symbols.sh
endif

# The command-line tool (examples/safeopen) and safe-httpd, the latter
# attacked by examples/race-swap during the requests.
TESTS += tests/test-cli.sh
EXTRA_DIST += tests/test-cli.sh tests/test-httpd.sh

# The tree commands (find, chown -R, chmod -R, du, cp -a) against the GNU
# tools on a quiet tree, and under three attackers (examples/race-swap, a
# mover, a remover).
TESTS += tests/test-tree.sh
EXTRA_DIST += tests/test-tree.sh

# safeopen extract: hostile archives made by tests/gen-archives.py, a benign
# corpus compared with GNU tar (tests/tree-manifest.py), the swap attack
# (examples/race-swap). SKIPs when safeopen was built without libarchive.
EXTRA_DIST += tests/test-extract.sh tests/gen-archives.py tests/tree-manifest.py

# The manual: every symbol of the version script has a page with SYNOPSIS and
# ERRORS; every page renders without a groff warning; every EXAMPLES program
# compiles.
TESTS += tests/check-man-symbols.sh tests/check-man-groff.sh tests/check-man-examples.sh
EXTRA_DIST += tests/check-man-symbols.sh tests/check-man-groff.sh tests/check-man-examples.sh
AM_TESTS_ENVIRONMENT += MAN_CPPFLAGS='-I$(abs_top_srcdir)/include'; export MAN_CPPFLAGS; \
	MAN_LIBS='$(abs_top_builddir)/lib/.libs/libsafeopen.so'; export MAN_LIBS;

# The cookbook's programs (examples/cookbook), run against a temp dir.
TESTS += tests/test-cookbook.sh tests/test-readme.sh
EXTRA_DIST += tests/test-cookbook.sh tests/test-readme.sh
