/* SPDX-License-Identifier: MIT */
/* Suite "base": library identity and the shared test fixtures themselves. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fixture.h"
#include "safeopen.h"

START_TEST(version_matches_package)
{
	ck_assert_str_eq(safe_version(), PACKAGE_VERSION);
}
END_TEST

START_TEST(fd_fixture_detects_leaks)
{
	struct fx_fdset before, after;
	char msg[512];
	fx_fdset_take(&before);
	int fd = open("/", O_PATH | O_CLOEXEC);
	ck_assert_int_ge(fd, 0);
	fx_fdset_take(&after);
	ck_assert(!fx_fdset_equal(&before, &after, msg, sizeof(msg)));
	ck_assert_ptr_nonnull(strstr(msg, "leaked"));
	close(fd);
	fx_fdset_take(&after);
	ck_assert(fx_fdset_equal(&before, &after, msg, sizeof(msg)));
}
END_TEST

START_TEST(tree_builder_and_snapshot)
{
	char *root = fx_mkdtemp("base");
	int dfd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	ck_assert_int_ge(dfd, 0);
	static const char *const spec[] = {
		"d a", "f a/file hello world", "l a/link ../a/file", "p fifo", "h hard a/file", NULL,
	};
	fx_build(dfd, spec);
	char *s1 = fx_tree_snapshot(root);
	ck_assert_ptr_nonnull(strstr(s1, "a/link mode=120777"));
	ck_assert_ptr_nonnull(strstr(s1, "-> ../a/file"));
	char *ls = fx_dir_listing(dfd, ".");
	ck_assert_str_eq(ls, "a\nfifo\nhard\n");
	char *s2 = fx_tree_snapshot(root);
	ck_assert_str_eq(s1, s2);
	ck_assert_int_eq(unlinkat(dfd, "hard", 0), 0);
	char *s3 = fx_tree_snapshot(root);
	ck_assert_str_ne(s1, s3);
	free(s1);
	free(s2);
	free(s3);
	free(ls);
	close(dfd);
	ck_assert_int_eq(fx_rmtree(root), 0);
	ck_assert_int_eq(access(root, F_OK), -1);
	free(root);
}
END_TEST

static Suite *base_suite(void)
{
	Suite *s = suite_create("base");
	TCase *tc = tcase_create("core");
	tcase_add_checked_fixture(tc, fx_fd_setup, fx_fd_teardown);
	tcase_add_test(tc, version_matches_package);
	tcase_add_test(tc, fd_fixture_detects_leaks);
	tcase_add_test(tc, tree_builder_and_snapshot);
	suite_add_tcase(s, tc);
	return s;
}

FX_MAIN(base_suite)
