# Suite for the ops module (see its issue). Append to check_PROGRAMS, TESTS, VALGRIND_TESTS.
