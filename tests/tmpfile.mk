# Suite for the tmpfile module (see its issue). Append to check_PROGRAMS, TESTS, VALGRIND_TESTS.
