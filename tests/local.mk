# tests/: the Check suites (one per module), the shell tests of the examples
# and the manual, and the test targets check-long, check-mutations,
# check-kernels and check-qemu. Without a Check that links with $(CC) (e.g.
# CC=musl-gcc on Debian) the suites of the resolver table, tmpfile and ops
# are built against tests/harness/minicheck instead (see below).

# The slowest tests come first in TESTS, so that `make -j2 check` does not
# end with one of them running alone: parallel-tests starts them in this
# order. The order is the time each took in a `make -j2 check` on an idle
# 2-core machine (seconds of wall time, measured for #38, second run):
# test-httpd 3.7, the Python tests 2.4 (PYTHON_TESTS,
# bindings/python/local.mk), test-extract 2.6, test-tree-cost 1.5, then the
# slow suites (SLOW_SUITES, below: test_ops 2.3, test_walk 2.0, test_limits
# 1.3, test_resolve 1.4), test-tree 0.9 and test-extract-bsdtar 1.5,
# check-man-examples 0.7, test-cookbook 1.0, test-cli 0.6 and check-symbols
# (0.3; it rebuilds its lists when the library changed), then the other
# suites (test_tmpfile 2.1 first) and checks.
TESTS += tests/tools/test-httpd.sh $(PYTHON_TESTS) tests/tools/test-extract.sh \
	tests/tools/test-tree-cost.sh
if HAVE_CHECK
SLOW_SUITES = tests/lib/test_ops tests/lib/test_walk tests/lib/test_limits tests/lib/test_resolve
TESTS += $(SLOW_SUITES)
endif
TESTS += tests/tools/test-tree.sh tests/tools/test-extract-bsdtar.sh tests/docs/check-man-examples.sh \
	tests/docs/test-cookbook.sh tests/tools/test-cli.sh

# tests/lib/ the library's suites, tests/tools/ the programs' tests,
# tests/docs/ the checks of the manual, header and examples, tests/harness/
# what runs them (fixture, sandbox, minicheck, mutations, kernel profiles).
# The suites include the harness's and their own headers by name.
TESTS_CPPFLAGS = -I$(top_srcdir)/tests/harness -I$(top_srcdir)/tests/lib
AM_CPPFLAGS += $(TESTS_CPPFLAGS)

# The fixture, the sandbox and the environments of the operations, the
# tmpfile and the resolver suites.
TESTUTIL_SOURCES = tests/harness/fixture.c tests/harness/fixture.h tests/harness/sandbox.c tests/harness/sandbox.h \
	tests/lib/ops-env.c tests/lib/ops-env.h tests/lib/tmpfile-env.c tests/lib/tmpfile-env.h \
	tests/lib/resolve-env.c tests/lib/resolve-env.h

if HAVE_CHECK
# The Check suites, one per module (tests/NAME.c), all built alike: Check,
# the fixture and sandbox, and the differential core (build random trees and
# cases, run each case through raw openat2 and the library, compare; also
# compiled into the libFuzzer target, fuzz/local.mk):
#   test_tmpfile test_tmpfile_sandbox test_sweep test_parents (sharing
#   tests/lib/tmpfile-env.c)
#   test_ops test_ops_attr test_rmtree test_realpath (sharing tests/lib/ops-env.c)
#   test_base
#   test_resolve (the resolver table, each case three ways) test_resolve_system
#   (procfs, mounts, sysctls, privileges, the rename race; sharing
#   tests/lib/resolve-env.c) test_fuzz (differential random testing against openat2)
#   test_fault (fault injection) test_limits test_concurrency
#   test_reuse (".." and rmtree's climb under inode-number reuse) test_walk
#   test_owner (SAFE_RESOLVE_SYMLINKS_OWNER_MATCH: the rows as root, the race)
# They are also what check-valgrind runs under memcheck and check-kernels
# under each seccomp profile.
# (SLOW_SUITES, in TESTS above, first; then the others, slowest first.)
QUICK_SUITES = tests/lib/test_tmpfile tests/lib/test_reuse tests/lib/test_tmpfile_sandbox \
	tests/lib/test_concurrency tests/lib/test_resolve_system tests/lib/test_fault tests/lib/test_owner \
	tests/lib/test_rmtree tests/lib/test_parents tests/lib/test_realpath tests/lib/test_fuzz \
	tests/lib/test_sweep tests/lib/test_ops_attr tests/lib/test_base tests/lib/test_diag tests/lib/test_proc
SUITES = $(SLOW_SUITES) $(QUICK_SUITES)
check_PROGRAMS += $(SUITES)
TESTS += tests/docs/check-symbols.sh $(QUICK_SUITES)
EXTRA_DIST += tests/docs/check-symbols.sh tests/harness/direct.sh tests/harness/partial.sh tests/lib/strategy.h
AM_CFLAGS += $(CHECK_CFLAGS)
LDADD = tests/libtestutil.a lib/libsafeopen.la $(CHECK_LIBS)
tests_lib_test_sweep_LDADD = $(LDADD) $(DL_LIBS)
DIFFCORE_SOURCES = tests/lib/diffcore.h tests/lib/diffcore-internal.h tests/lib/diffcore-util.c \
	tests/lib/diffcore-treegen.c tests/lib/diffcore-tree.c tests/lib/diffcore-case.c tests/lib/diffcore-oracle.c
check_LIBRARIES += tests/libtestutil.a
tests_libtestutil_a_SOURCES = $(TESTUTIL_SOURCES) $(DIFFCORE_SOURCES)

# The public header compiles on its own as C99 and as C++.
TESTS += tests/docs/check-header.sh tests/docs/check-header-cxx.sh
EXTRA_DIST += tests/docs/check-header.sh tests/docs/check-header-cxx.sh
AM_TESTS_ENVIRONMENT += HEADER_CC='$(CC)'; export HEADER_CC;

#   make check-long       every suite at its big size (SAFEOPEN_CHECK_LONG=1)
#   make check-mutations  each defence disabled in turn must make a test fail
#                         (tests/harness/mutations.list, tests/harness/check-mutations.sh)
EXTRA_DIST += tests/harness/mutations.list tests/harness/check-mutations.sh

check-long:
	SAFEOPEN_CHECK_LONG=1 $(MAKE) $(AM_MAKEFLAGS) check

check-mutations: $(check_PROGRAMS) $(lib_LTLIBRARIES)
	top_srcdir='$(abs_top_srcdir)' top_builddir='$(abs_top_builddir)' MAKE='$(MAKE)' \
	  $(SHELL) $(srcdir)/tests/harness/check-mutations.sh

PHONY_TARGETS += check-long check-mutations

clean-mutations:
	rm -rf mutations
CLEAN_LOCAL_TARGETS += clean-mutations
PHONY_TARGETS += clean-mutations

# `make check-kernels`: every Check suite and the CLI test under seccomp profiles that
# make this kernel look like an older one (tests/harness/kernel-profile.c: each system
# call newer than the profile's kernel fails with ENOSYS, for the whole test
# process and its children) or that block openat2 (EPERM, ENOSYS). The table
# printed at the end is profile x suite x result; any profile whose results
# differ from the unfiltered run ("full") fails the target.
# (Built by check-kernels, not by every `make check`.)
EXTRA_PROGRAMS += tests/harness/kernel-profile
tests_harness_kernel_profile_LDADD =
CLEANFILES += tests/harness/kernel-profile$(EXEEXT)

KERNEL_PROFILES = full 4.18 5.4 5.10 5.15 6.1 openat2-eperm openat2-enosys
KERNEL_TESTS = $(SUITES) tests/tools/test-cli.sh
check-kernels: tests/harness/kernel-profile$(EXEEXT)
	@MAKE='$(MAKE)' AM_MAKEFLAGS='$(AM_MAKEFLAGS)' KERNEL_TESTS='$(KERNEL_TESTS)' \
	  $(SHELL) $(srcdir)/tests/harness/check-kernels.sh $(KERNEL_PROFILES)
PHONY_TARGETS += check-kernels
EXTRA_DIST += tests/harness/check-kernels.sh
CLEANFILES += tests/kernels.table

# `make check-qemu KERNEL=/path/to/vmlinuz`: the resolver table, tmpfile and
# ops suites on a real (older) kernel under qemu (tests/harness/check-qemu.sh).
check-qemu: $(check_PROGRAMS)
	@KERNEL='$(KERNEL)' QEMU_FS='$(QEMU_FS)' $(SHELL) $(srcdir)/tests/harness/check-qemu.sh
PHONY_TARGETS += check-qemu
EXTRA_DIST += tests/harness/check-qemu.sh
CLEANFILES += tests/qemu-console.log

else
# No usable Check. Why tests/harness/minicheck exists: Debian's Check is built for
# glibc only (no package of it for musl), and the musl build (CC=musl-gcc, in
# .ci/run) must still run the suites that carry the resolver table, the
# tmpfile tests and the operations tests, where lib/compat.h replaces the
# wrappers musl lacks. They are built against tests/harness/minicheck (the subset of
# Check's API they use, see its header), the kernel as the oracle as always,
# plus the symbol check and the shell tests below.
check_LIBRARIES += tests/libminicheck.a
tests_libminicheck_a_SOURCES = tests/harness/minicheck/check.c tests/harness/minicheck/check.h \
	tests/harness/minicheck/libc-compat.h $(TESTUTIL_SOURCES)
tests_libminicheck_a_CPPFLAGS = $(MINICHECK_CPPFLAGS)
MINICHECK_CPPFLAGS = -I$(top_srcdir)/tests/harness/minicheck $(TESTS_CPPFLAGS) $(AM_CPPFLAGS) \
	-include $(top_srcdir)/tests/harness/minicheck/libc-compat.h
LDADD = tests/libminicheck.a lib/libsafeopen.la

MINICHECK_SUITES = tests/harness/minicheck/test_tmpfile tests/harness/minicheck/test_tmpfile_sandbox \
	tests/harness/minicheck/test_sweep \
	tests/harness/minicheck/test_parents tests/harness/minicheck/test_ops tests/harness/minicheck/test_ops_attr \
	tests/harness/minicheck/test_rmtree \
	tests/harness/minicheck/test_realpath tests/harness/minicheck/test_resolve \
	tests/harness/minicheck/test_resolve_system
check_PROGRAMS += $(MINICHECK_SUITES)
tests_harness_minicheck_test_resolve_SOURCES = tests/lib/test_resolve.c
tests_harness_minicheck_test_resolve_CPPFLAGS = $(MINICHECK_CPPFLAGS)
tests_harness_minicheck_test_resolve_system_SOURCES = tests/lib/test_resolve_system.c
tests_harness_minicheck_test_resolve_system_CPPFLAGS = $(MINICHECK_CPPFLAGS)
tests_harness_minicheck_test_tmpfile_SOURCES = tests/lib/test_tmpfile.c
tests_harness_minicheck_test_tmpfile_CPPFLAGS = $(MINICHECK_CPPFLAGS)
tests_harness_minicheck_test_ops_SOURCES = tests/lib/test_ops.c
tests_harness_minicheck_test_ops_CPPFLAGS = $(MINICHECK_CPPFLAGS)
tests_harness_minicheck_test_ops_attr_SOURCES = tests/lib/test_ops_attr.c
tests_harness_minicheck_test_ops_attr_CPPFLAGS = $(MINICHECK_CPPFLAGS)
tests_harness_minicheck_test_tmpfile_sandbox_SOURCES = tests/lib/test_tmpfile_sandbox.c
tests_harness_minicheck_test_tmpfile_sandbox_CPPFLAGS = $(MINICHECK_CPPFLAGS)
tests_harness_minicheck_test_sweep_SOURCES = tests/lib/test_sweep.c
tests_harness_minicheck_test_sweep_CPPFLAGS = $(MINICHECK_CPPFLAGS)
tests_harness_minicheck_test_sweep_LDADD = $(LDADD) $(DL_LIBS)
tests_harness_minicheck_test_parents_SOURCES = tests/lib/test_parents.c
tests_harness_minicheck_test_parents_CPPFLAGS = $(MINICHECK_CPPFLAGS)
tests_harness_minicheck_test_rmtree_SOURCES = tests/lib/test_rmtree.c
tests_harness_minicheck_test_rmtree_CPPFLAGS = $(MINICHECK_CPPFLAGS)
tests_harness_minicheck_test_realpath_SOURCES = tests/lib/test_realpath.c
tests_harness_minicheck_test_realpath_CPPFLAGS = $(MINICHECK_CPPFLAGS)
TESTS += $(MINICHECK_SUITES) tests/docs/check-symbols.sh
endif

# The command-line tool (tools/safeopen/safeopen) and safe-httpd, the latter
# attacked by tests/tools/race-swap during the requests.
# (tests/tools/test-cli.sh is in TESTS above, with the slower tests.)
EXTRA_DIST += tests/tools/test-cli.sh tests/tools/test-httpd.sh tests/harness/row.sh tests/harness/tap_report.py

# The tree commands (find, chown -R, chmod -R, du, cp -a) against the GNU
# tools on a quiet tree, and under three attackers (tests/tools/race-swap, a
# mover, a remover). Their cost in system calls (strace -c) grows linearly with
# the depth at 5, 16, 40 and 64 free descriptors (test-tree-cost.sh).
EXTRA_DIST += tests/tools/test-tree.sh tests/tools/test-tree-cost.sh

# safeopen extract: hostile archives made by tests/tools/gen-archives.py, a benign
# corpus compared with GNU tar (tests/tools/tree-manifest.py), the swap attack
# (tests/tools/race-swap). SKIPs when safeopen was built without libarchive.
EXTRA_DIST += tests/tools/test-extract.sh tests/tools/gen-archives.py tests/tools/tree-manifest.py \
	tests/tools/valgrind-dlopen.supp tests/tools/extract-env.sh

# safeopen extract next to bsdtar (tests/tools/extract-vs-bsdtar.py): the same
# tree and exit status on a corpus built by the test (names beyond ASCII,
# compressed streams with data after them, pax-only links, PEP 706 shapes),
# or exactly the refusals it names. SKIPs without bsdtar or libarchive.
EXTRA_DIST += tests/tools/test-extract-bsdtar.sh tests/tools/extract-vs-bsdtar.py

# The manual: every symbol of the version script has a page with SYNOPSIS and
# ERRORS; every page renders without a groff warning; every EXAMPLES program
# compiles.
TESTS += tests/docs/check-man-symbols.sh tests/docs/check-man-groff.sh
EXTRA_DIST += tests/docs/check-man-symbols.sh tests/docs/check-man-groff.sh tests/docs/check-man-examples.sh
# check-man-examples.sh, test-readme.sh and check-symbols.sh keep the
# compiled examples (tests/docs/man-examples/, tests/docs/readme-example/,
# tests/docs/symbols-cache/) between runs, as make keeps objects, and
# check-header.sh, check-header-cxx.sh, check-man-groff.sh and
# check-numbers.sh their inputs' last pass
# (tests/docs/NAME.passed, tests/harness/row.sh).
clean-man-examples:
	rm -rf tests/docs/man-examples tests/docs/readme-example tests/docs/symbols-cache
	rm -f tests/docs/check-header.passed tests/docs/check-header-cxx.passed \
	  tests/docs/check-man-groff.passed tests/docs/check-numbers.passed
CLEAN_LOCAL_TARGETS += clean-man-examples
PHONY_TARGETS += clean-man-examples
AM_TESTS_ENVIRONMENT += MAN_CPPFLAGS='-I$(abs_top_srcdir)/include'; export MAN_CPPFLAGS; \
	MAN_LIBS='$(abs_top_builddir)/lib/.libs/libsafeopen.so'; export MAN_LIBS;
# The numbers the documents quote (descriptor bounds, limits) are the code's.
TESTS += tests/docs/check-numbers.sh
EXTRA_DIST += tests/docs/check-numbers.sh

# The cookbook's programs (examples/cookbook), run against a temp dir.
# (test-cookbook.sh is in TESTS above, with the slower tests.)
TESTS += tests/docs/test-readme.sh
EXTRA_DIST += tests/docs/test-cookbook.sh tests/docs/test-readme.sh

# The attacker of tests/tools/test-httpd.sh and tests/tools/test-extract.sh, usable
# against any server ("race-swap DIR NAME1 NAME2 SECONDS"): swaps a directory
# and a symlink with renameat2(RENAME_EXCHANGE) as fast as it can, for a
# bounded time.
noinst_PROGRAMS += tests/tools/race-swap
tests_tools_race_swap_LDADD =

# Every test's log waits for config.h first. Its rule always runs a command
# (automake's check that config.h exists), and a log whose program is built
# from sources that include it would otherwise wait for that command's turn
# with -j: GNU make then started every shell test before the first suite,
# whatever their order in TESTS. Checked once before the first test, it
# keeps TESTS' order.
$(TEST_LOGS): config.h
