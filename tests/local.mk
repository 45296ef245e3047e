# Shared test infrastructure and the "base" suite. Each module's suite has its
# own fragment (tests/<module>.mk) included from Makefile.am.

check_LIBRARIES += tests/libtestutil.a
tests_libtestutil_a_SOURCES = tests/fixture.c tests/fixture.h tests/sandbox.c tests/sandbox.h
tests_libtestutil_a_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)

TEST_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS) -I$(top_srcdir)/tests
TEST_LDADD = tests/libtestutil.a lib/libsafeopen.la $(CHECK_LIBS)

check_PROGRAMS += tests/test_base
tests_test_base_SOURCES = tests/test_base.c
tests_test_base_CFLAGS = $(TEST_CFLAGS)
tests_test_base_LDADD = $(TEST_LDADD)
TESTS += tests/test_base tests/check-symbols.sh
VALGRIND_TESTS += tests/test_base

EXTRA_DIST += tests/check-symbols.sh
