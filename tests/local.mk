# tests/: the Check suites (one per module), the shell tests of the examples
# and the manual, and the test targets check-long, check-mutations,
# check-kernels and check-qemu. Without a Check that links with $(CC) (e.g.
# CC=musl-gcc on Debian) the suites of the resolver table, tmpfile and ops
# are built against tests/minicheck instead (see below).

# The slowest tests come first in TESTS (and in SUITES), so that `make -j2
# check` does not end with one of them running alone.
TESTS += tests/test-httpd.sh tests/test-extract.sh tests/test-extract-reader.sh tests/test-tree.sh

# The fixture, the sandbox and the environments of the operations, the
# tmpfile and the resolver suites.
TESTUTIL_SOURCES = tests/fixture.c tests/fixture.h tests/sandbox.c tests/sandbox.h \
	tests/ops-env.c tests/ops-env.h tests/tmpfile-env.c tests/tmpfile-env.h \
	tests/resolve-env.c tests/resolve-env.h

if HAVE_CHECK
# The Check suites, one per module (tests/NAME.c), all built alike: Check,
# the fixture and sandbox, and the differential core (build random trees and
# cases, run each case through raw openat2 and the library, compare; also
# compiled into the libFuzzer target, fuzz/local.mk):
#   test_tmpfile test_tmpfile_sandbox test_sweep test_parents (sharing
#   tests/tmpfile-env.c)
#   test_ops test_ops_attr test_rmtree test_realpath (sharing tests/ops-env.c)
#   test_base
#   test_resolve (the resolver table, each case three ways) test_resolve_system
#   (procfs, mounts, sysctls, privileges, the rename race; sharing
#   tests/resolve-env.c) test_fuzz (differential random testing against openat2)
#   test_fault (fault injection) test_limits test_concurrency test_api
#   test_reuse (".." and rmtree's climb under inode-number reuse) test_walk
# They are also what check-valgrind runs under memcheck and check-kernels
# under each seccomp profile.
SUITES = tests/test_ops tests/test_ops_attr tests/test_walk tests/test_limits tests/test_resolve \
	tests/test_resolve_system \
	tests/test_rmtree tests/test_api tests/test_tmpfile tests/test_realpath \
	tests/test_tmpfile_sandbox tests/test_concurrency tests/test_fault tests/test_sweep \
	tests/test_fuzz tests/test_parents tests/test_reuse tests/test_base
check_PROGRAMS += $(SUITES)
TESTS += $(SUITES) tests/check-symbols.sh
EXTRA_DIST += tests/check-symbols.sh tests/direct.sh tests/partial.sh tests/strategy.h
AM_CFLAGS += $(CHECK_CFLAGS)
LDADD = tests/libtestutil.a lib/libsafeopen.la $(CHECK_LIBS)
DIFFCORE_SOURCES = tests/diffcore.h tests/diffcore-internal.h tests/diffcore-util.c \
	tests/diffcore-treegen.c tests/diffcore-tree.c tests/diffcore-case.c tests/diffcore-oracle.c
check_LIBRARIES += tests/libtestutil.a
tests_libtestutil_a_SOURCES = $(TESTUTIL_SOURCES) $(DIFFCORE_SOURCES)

# The public header compiles on its own as C99 and as C++.
TESTS += tests/check-header.sh tests/check-header-cxx.sh
EXTRA_DIST += tests/check-header.sh tests/check-header-cxx.sh
AM_TESTS_ENVIRONMENT += HEADER_CC='$(CC)'; export HEADER_CC;

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
tests_kernel_profile_LDADD =
CLEANFILES += tests/kernel-profile$(EXEEXT)

KERNEL_PROFILES = full 4.18 5.4 5.10 5.15 6.1 openat2-eperm openat2-enosys
KERNEL_TESTS = $(SUITES) tests/test-cli.sh
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
# No usable Check. Why tests/minicheck exists: Debian's Check is built for
# glibc only (no package of it for musl), and the musl build (CC=musl-gcc, in
# .ci/run) must still run the suites that carry the resolver table, the
# tmpfile tests and the operations tests, where lib/compat.h replaces the
# wrappers musl lacks. They are built against tests/minicheck (the subset of
# Check's API they use, see its header), the kernel as the oracle as always,
# plus the symbol check and the shell tests below.
check_LIBRARIES += tests/libminicheck.a
tests_libminicheck_a_SOURCES = tests/minicheck/check.c tests/minicheck/check.h \
	tests/minicheck/libc-compat.h $(TESTUTIL_SOURCES)
tests_libminicheck_a_CPPFLAGS = $(MINICHECK_CPPFLAGS)
MINICHECK_CPPFLAGS = -I$(top_srcdir)/tests/minicheck -I$(top_srcdir)/tests $(AM_CPPFLAGS) \
	-include $(top_srcdir)/tests/minicheck/libc-compat.h
LDADD = tests/libminicheck.a lib/libsafeopen.la

MINICHECK_SUITES = tests/minicheck/test_tmpfile tests/minicheck/test_tmpfile_sandbox \
	tests/minicheck/test_sweep \
	tests/minicheck/test_parents tests/minicheck/test_ops tests/minicheck/test_ops_attr \
	tests/minicheck/test_rmtree \
	tests/minicheck/test_realpath tests/minicheck/test_resolve \
	tests/minicheck/test_resolve_system
check_PROGRAMS += $(MINICHECK_SUITES)
tests_minicheck_test_resolve_SOURCES = tests/test_resolve.c
tests_minicheck_test_resolve_CPPFLAGS = $(MINICHECK_CPPFLAGS)
tests_minicheck_test_resolve_system_SOURCES = tests/test_resolve_system.c
tests_minicheck_test_resolve_system_CPPFLAGS = $(MINICHECK_CPPFLAGS)
tests_minicheck_test_tmpfile_SOURCES = tests/test_tmpfile.c
tests_minicheck_test_tmpfile_CPPFLAGS = $(MINICHECK_CPPFLAGS)
tests_minicheck_test_ops_SOURCES = tests/test_ops.c
tests_minicheck_test_ops_CPPFLAGS = $(MINICHECK_CPPFLAGS)
tests_minicheck_test_ops_attr_SOURCES = tests/test_ops_attr.c
tests_minicheck_test_ops_attr_CPPFLAGS = $(MINICHECK_CPPFLAGS)
tests_minicheck_test_tmpfile_sandbox_SOURCES = tests/test_tmpfile_sandbox.c
tests_minicheck_test_tmpfile_sandbox_CPPFLAGS = $(MINICHECK_CPPFLAGS)
tests_minicheck_test_sweep_SOURCES = tests/test_sweep.c
tests_minicheck_test_sweep_CPPFLAGS = $(MINICHECK_CPPFLAGS)
tests_minicheck_test_parents_SOURCES = tests/test_parents.c
tests_minicheck_test_parents_CPPFLAGS = $(MINICHECK_CPPFLAGS)
tests_minicheck_test_rmtree_SOURCES = tests/test_rmtree.c
tests_minicheck_test_rmtree_CPPFLAGS = $(MINICHECK_CPPFLAGS)
tests_minicheck_test_realpath_SOURCES = tests/test_realpath.c
tests_minicheck_test_realpath_CPPFLAGS = $(MINICHECK_CPPFLAGS)
TESTS += $(MINICHECK_SUITES) tests/check-symbols.sh
endif

# The command-line tool (examples/safeopen) and safe-httpd, the latter
# attacked by examples/race-swap during the requests.
TESTS += tests/test-cli.sh
EXTRA_DIST += tests/test-cli.sh tests/test-httpd.sh

# The tree commands (find, chown -R, chmod -R, du, cp -a) against the GNU
# tools on a quiet tree, and under three attackers (examples/race-swap, a
# mover, a remover).
EXTRA_DIST += tests/test-tree.sh

# safeopen extract: hostile archives made by tests/gen-archives.py, a benign
# corpus compared with GNU tar (tests/tree-manifest.py), the swap attack
# (examples/race-swap). SKIPs when safeopen was built without libarchive.
EXTRA_DIST += tests/test-extract.sh tests/gen-archives.py tests/tree-manifest.py \
	tests/valgrind-dlopen.supp tests/extract-env.sh

# safeopen extract's built-in tar reader (examples/tarfast.c) against
# libarchive alone (SAFEOPEN_EXTRACT_READER=libarchive): the archives of real
# writers, crafted header groups and damaged archives (tests/gen-tar-variants.py)
# must give the same tree and exit status. SKIPs without libarchive.
EXTRA_DIST += tests/test-extract-reader.sh tests/gen-tar-variants.py

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
