# Suite for the tmpfile module (see its issue). Append to check_PROGRAMS, TESTS, VALGRIND_TESTS.
check_PROGRAMS += tests/test_tmpfile
tests_test_tmpfile_SOURCES = tests/test_tmpfile.c
tests_test_tmpfile_CFLAGS = $(TEST_CFLAGS)
tests_test_tmpfile_LDADD = $(TEST_LDADD)
TESTS += tests/test_tmpfile
VALGRIND_TESTS += tests/test_tmpfile
