# A C library that Check is not built for (configure: "Check does not link",
# e.g. CC=musl-gcc on Debian): `make check` builds the suites that carry the
# resolver table, the tmpfile tests and the operations tests against
# tests/minicheck (the subset of Check's API they use, see its header), with
# the kernel as the oracle as always, plus the symbol check and the CLI and
# HTTP tests of examples/local.mk.
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
TESTS += tests/minicheck/test_resolve tests/minicheck/test_tmpfile tests/minicheck/test_ops \
	tests/check-symbols.sh
