# Suite for the ops module (see its issue). Append to check_PROGRAMS, TESTS, VALGRIND_TESTS.
check_PROGRAMS += tests/test_ops
tests_test_ops_SOURCES = tests/test_ops.c
tests_test_ops_CFLAGS = $(TEST_CFLAGS)
tests_test_ops_LDADD = $(TEST_LDADD)
TESTS += tests/test_ops
VALGRIND_TESTS += tests/test_ops
