# Suite "reuse" (issue 11): ".." and rmtree's climb under inode-number reuse,
# deterministic reproducers on a loop-mounted ext4 (root only, else SKIP),
# the plain race with a rename storm, chains deeper than the held levels.
check_PROGRAMS += tests/test_reuse
tests_test_reuse_SOURCES = tests/test_reuse.c
tests_test_reuse_CFLAGS = $(TEST_CFLAGS)
tests_test_reuse_LDADD = $(TEST_LDADD) -lpthread
TESTS += tests/test_reuse
VALGRIND_TESTS += tests/test_reuse
