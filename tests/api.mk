# Suite "api": the calls added or reshaped for the 1.0 API (mkdir_all, mknod,
# open_parent, rename/link across two roots, resolve bits), and the check that
# the public header compiles on its own as C99 and C++.
check_PROGRAMS += tests/test_api
tests_test_api_SOURCES = tests/test_api.c
tests_test_api_CFLAGS = $(TEST_CFLAGS)
tests_test_api_LDADD = $(TEST_LDADD)
TESTS += tests/test_api
VALGRIND_TESTS += tests/test_api

TESTS += tests/check-header.sh tests/check-header-cxx.sh
EXTRA_DIST += tests/check-header.sh tests/check-header-cxx.sh
AM_TESTS_ENVIRONMENT += HEADER_CC='$(CC)'; export HEADER_CC;
