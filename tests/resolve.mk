# Suite for the resolve module (see its issue). Append to check_PROGRAMS, TESTS, VALGRIND_TESTS.
check_PROGRAMS += tests/test_resolve
tests_test_resolve_SOURCES = tests/test_resolve.c
tests_test_resolve_CFLAGS = $(TEST_CFLAGS)
tests_test_resolve_LDADD = $(TEST_LDADD)
TESTS += tests/test_resolve
VALGRIND_TESTS += tests/test_resolve
