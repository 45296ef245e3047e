/* SPDX-License-Identifier: MIT */
/*
 * Suite "rmtree": safe_rmtree_beneath() in the environment of the
 * operations suites (ops-env.h): the cases against a plain syscall oracle,
 * constant descriptors at depth, an unprivileged caller, mount points, and
 * an attacker swapping a directory for a link to the outside.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "fixture.h"
#include "safeopen.h"
#include "ops-env.h"
#include "sandbox.h"

/* ---------------------------------------------------------------- rmtree */

/* safe_rmtree_beneath() refusals as named rows: the root itself in every
 * spelling, escapes, names that are not a directory. */
struct rmtree_row {
	const char *name;
	const char *path;
	uint64_t flags;
	int err;
};

static const struct rmtree_row rmtree_refusals[] = {
	{ "the root, \".\"", ".", 0, EBUSY },
	{ "the root, \"a/..\"", "a/..", 0, EBUSY },
	{ "the root, \"a/b/../..\"", "a/b/../..", 0, EBUSY },
	{ "the root, \"/\" under IN_ROOT", "/", SAFE_RESOLVE_IN_ROOT, EBUSY },
	{ "the root, \"..\" under IN_ROOT", "..", SAFE_RESOLVE_IN_ROOT, EBUSY },
	{ "\"..\" escapes", "..", 0, EXDEV },
	{ "a last component \".\"", "a/.", 0, EINVAL },
	{ "a missing name", "nonexist", 0, ENOENT },
	{ "a link to a directory with a trailing slash", "link_dir/", 0, ENOTDIR },
	{ "a file with a trailing slash", "file/", 0, ENOTDIR },
};

static void rmtree_try(size_t k, uint64_t m, struct refusal_try *t)
{
	const struct rmtree_row *r = &rmtree_refusals[k];
	t->e = safe_rmtree_beneath(E.rootfd, r->path, m | r->flags) < 0 ? errno : 0;
	t->want = r->err;
	snprintf(t->name, sizeof(t->name), "rmtree row \"%s\" (%s)", r->name, r->path);
}

START_TEST(rmtree_cases)
{
	env_open();
	uint64_t m = MODE(_i);
	static const char *const spec[] = {
		"d t",
		"d t/d1",
		"d t/d1/d2",
		"f t/d1/d2/f1 x",
		"f t/f0 y",
		"p t/d1/fifo",
		"l t/d1/esc ../../../outside",
		"l t/abs /",
		"h t/hard file",
		"d t/d1/e",
		"d t/d1/e/e2",
		"l t/d1/e/e2/v ../../../../../outside/victim",
		"d t/d3",
		"d t/d3/d4",
		NULL,
	};
	fx_build(E.rootfd, spec);
	char *out_before = fx_tree_snapshot(E.outside);
	ck_assert_int_eq(safe_rmtree_beneath(E.rootfd, "link_dir/../t", m), 0);
	ck_assert(!exists_at(E.rootfd, "t"));
	ck_assert(exists_at(E.rootfd, "file")); /* hard link target name stays */
	run_refusals(E.base, N_ROWS(rmtree_refusals), m, rmtree_try);
	/* A symlink to a directory: the link goes, never the target. */
	ck_assert_int_eq(safe_rmtree_beneath(E.rootfd, "link_dir", m), 0);
	ck_assert(!exists_at(E.rootfd, "link_dir") && exists_at(E.rootfd, "a/b/file"));
	ck_assert_int_eq(safe_rmtree_beneath(E.rootfd, "up", m), 0);
	ck_assert_int_eq(safe_rmtree_beneath(E.rootfd, "file", m), 0);
	ck_assert_int_eq(safe_rmtree_beneath(E.rootfd, "empty", m), 0);
	ck_assert(!exists_at(E.rootfd, "empty") && !exists_at(E.rootfd, "file"));
	char *out_after = fx_tree_snapshot(E.outside);
	ck_assert_str_eq(out_before, out_after);
	free(out_before);
	free(out_after);
	env_close();
}
END_TEST

/* A tree far deeper than the descriptor limit: O(1) descriptors. */
static int rmtree_deep_child(void *arg)
{
	uint64_t m = *(uint64_t *)arg;
	int fd = openat(E.rootfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	CHILD_CHECK(fd >= 0);
	CHILD_CHECK(mkdirat(fd, "deep0", 0755) == 0);
	int cur = openat(fd, "deep0", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	for (int i = 0; i < 100; i++) { /* far more levels than descriptors */
		CHILD_CHECK(cur >= 0);
		CHILD_CHECK(mkdirat(cur, "d", 0755) == 0);
		int f = openat(cur, "f", O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
		CHILD_CHECK(f >= 0);
		close(f);
		int n = openat(cur, "d", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		close(cur);
		cur = n;
	}
	close(cur);
	close(fd);
	/* valgrind keeps its own descriptors under the limit: no limit there. */
	struct rlimit rl = { 32, 32 };
	if (!fx_under_valgrind())
		CHILD_CHECK(setrlimit(RLIMIT_NOFILE, &rl) == 0);
	CHILD_CHECK(safe_rmtree_beneath(E.rootfd, "deep0", m) == 0);
	CHILD_CHECK(faccessat(E.rootfd, "deep0", F_OK, AT_SYMLINK_NOFOLLOW) < 0 && errno == ENOENT);
	return 0;
}

START_TEST(rmtree_deep_constant_fds)
{
	env_open();
	uint64_t m = MODE(_i);
	ck_assert_int_eq(sb_run(rmtree_deep_child, &m), 0);
	env_close();
}
END_TEST

/* Unprivileged: what cannot be removed is reported (first error), the rest goes. */
static int rmtree_unpriv_child(void *arg)
{
	uint64_t m = *(uint64_t *)arg;
	static const char *const spec[] = {
		"d u", "d u/ro", "f u/ro/keep k", "d u/rw", "f u/rw/gone g", "f u/f z", NULL,
	};
	fx_build(E.rootfd, spec);
	CHILD_CHECK(sb_chown_for_dropped(E.rootfd, "u", 0) == 0);
	CHILD_CHECK(sb_chown_for_dropped(E.rootfd, "u/rw", 0) == 0);
	CHILD_CHECK(sb_chown_for_dropped(E.rootfd, "u/rw/gone", 0) == 0);
	CHILD_CHECK(fchmodat(E.rootfd, "u/ro", 0555, 0) == 0);
	CHILD_CHECK(sb_drop_privileges() == 0);
	errno = 0;
	CHILD_CHECK(safe_rmtree_beneath(E.rootfd, "u", m) == -1 && errno == EACCES);
	CHILD_CHECK(faccessat(E.rootfd, "u/ro/keep", F_OK, AT_SYMLINK_NOFOLLOW) == 0);
	CHILD_CHECK(faccessat(E.rootfd, "u/rw", F_OK, AT_SYMLINK_NOFOLLOW) < 0);
	CHILD_CHECK(faccessat(E.rootfd, "u/f", F_OK, AT_SYMLINK_NOFOLLOW) < 0);
	/* mkdir where nobody may write. */
	errno = 0;
	CHILD_CHECK(safe_mkdirat_beneath(E.rootfd, "u/ro/x", 0755, m) == -1 && errno == EACCES);
	errno = 0;
	CHILD_CHECK(safe_mkdir_all_beneath(E.rootfd, "u/ro/x/y", 0755, m) == -1 &&
	   errno == EACCES);
	return 0;
}

START_TEST(rmtree_unprivileged)
{
	env_open();
	uint64_t m = MODE(_i);
	ck_assert_int_eq(sb_run(rmtree_unpriv_child, &m), 0);
	env_close();
}
END_TEST

/* Mount points: not crossed unless SAFE_RMTREE_XDEV (bind mounts of the same
 * filesystem included: the mount id tells them apart, not st_dev). */
static int rmtree_mount_child(void *arg)
{
	uint64_t m = *(uint64_t *)arg;
	CHILD_CHECK(fx_enter_mount_ns() == 0);
	CHILD_CHECK(mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) == 0);
	int root = open(E.root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	CHILD_CHECK(root >= 0);
	static const char *const spec[] = {
		"d t", "d t/m", "d t/bind", "f t/plain p", "d t/mp", NULL,
	};
	fx_build(root, spec);
	char p[PATH_MAX];
	pj(p, E.root, "t/m");
	CHILD_CHECK(mount("tmpfs", p, "tmpfs", 0, "size=1m") == 0);
	int mfd = open(p, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	CHILD_CHECK(mfd >= 0);
	CHILD_CHECK(mkdirat(mfd, "in", 0755) == 0);
	int f = openat(mfd, "in/f", O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
	CHILD_CHECK(f >= 0);
	close(f);
	pj(p, E.root, "t/bind");
	CHILD_CHECK(mount(E.outside, p, NULL, MS_BIND, NULL) == 0);
	char *before = fx_tree_snapshot(E.outside);

	errno = 0;
	CHILD_CHECK(safe_rmtree_beneath(root, "t", m) == -1 && errno == EXDEV);
	CHILD_CHECK(faccessat(root, "t/plain", F_OK, AT_SYMLINK_NOFOLLOW) < 0); /* the rest went */
	CHILD_CHECK(faccessat(mfd, "in/f", F_OK, 0) == 0);
	char *after = fx_tree_snapshot(E.outside);
	CHILD_CHECK(strcmp(before, after) == 0);
	free(after);
	/* The mount point itself as the tree: EXDEV without XDEV. */
	errno = 0;
	CHILD_CHECK(safe_rmtree_beneath(root, "t/bind", m) == -1 && errno == EXDEV);
	pj(p, E.root, "t/bind");
	CHILD_CHECK(umount(p) == 0);
	/* With XDEV the mount's contents go; the mount point stays busy. */
	errno = 0;
	CHILD_CHECK(safe_rmtree_beneath(root, "t", m | SAFE_RMTREE_XDEV) == -1 && errno == EBUSY);
	CHILD_CHECK(faccessat(mfd, "in", F_OK, 0) < 0 && errno == ENOENT);
	after = fx_tree_snapshot(E.outside);
	CHILD_CHECK(strcmp(before, after) == 0);
	free(after);
	free(before);
	pj(p, E.root, "t/m");
	close(mfd);
	CHILD_CHECK(umount(p) == 0);
	CHILD_CHECK(safe_rmtree_beneath(root, "t", m) == 0);
	close(root);
	return 0;
}

START_TEST(rmtree_mounts)
{
	env_open();
	uint64_t m = MODE(_i);
	ck_assert_int_eq(sb_run(rmtree_mount_child, &m), 0);
	env_close();
}
END_TEST


/*
 * An attacker swaps a directory of the tree with a symlink to the outside
 * (rename-exchange, back and forth) while rmtree runs; the tree is rebuilt
 * each round. Nothing outside may be removed, whatever the rmtree result.
 */
START_TEST(rmtree_race_symlink_swap)
{
	env_open();
	uint64_t m = MODE(_i) | ((_i & 2) ? SAFE_RESOLVE_IN_ROOT : 0);
	char *before = fx_tree_snapshot(E.outside);
	ck_assert_int_eq(mkdirat(E.rootfd, "r", 0755), 0);
	int rfd = openat(E.rootfd, "r", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	ck_assert_int_ge(rfd, 0);
	char tgt[PATH_MAX], left[PATH_MAX];
	pj(tgt, E.outside, "vdir");
	pj(left, E.root, "r/t");
	struct swapper s = { .dirfd = rfd, .a = "t/d", .b = "t/l" };
	/* the time, and at least 6 rounds (a slow machine runs longer) */
	double end = fx_now() + (fx_under_valgrind() ? 1.0 : fx_long() ? 0.4 : 0.025);
	long rounds = 0;
	while (fx_now() < end || rounds < 6) {
		/* t/d holds a few directories of files; t/l -> outside/vdir. */
		ck_assert_int_eq(mkdirat(rfd, "t", 0755), 0);
		ck_assert_int_eq(mkdirat(rfd, "t/d", 0755), 0);
		for (int i = 0; i < 8; i++) {
			char p[64];
			snprintf(p, sizeof(p), "t/d/s%d", i);
			ck_assert_int_eq(mkdirat(rfd, p, 0755), 0);
			for (int j = 0; j < 4; j++) {
				snprintf(p, sizeof(p), "t/d/s%d/f%d", i, j);
				int f = openat(rfd, p, O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
				ck_assert_int_ge(f, 0);
				close(f);
			}
		}
		build_link(rfd, "t/l", tgt);
		atomic_store(&s.stop, false);
		pthread_t th;
		ck_assert_int_eq(pthread_create(&th, NULL, swap_thread, &s), 0);
		long s0 = atomic_load(&s.swaps);
		while (atomic_load(&s.swaps) == s0) /* the attacker is running */
			sched_yield();
		int r = safe_rmtree_beneath(E.rootfd, "r/t", m);
		int e = errno;
		atomic_store(&s.stop, true);
		pthread_join(th, NULL);
		/* Success, or an error of a tree that moved under it. */
		ck_assert_msg(r == 0 || e == ENOTEMPTY || e == EAGAIN || e == ENOENT ||
				      e == ENOTDIR || e == EISDIR,
			      "rmtree: %s", strerror(e));
		(void)fx_rmtree(left); /* what is left (test helper, no library) */
		char *after = fx_tree_snapshot(E.outside);
		ck_assert_msg(!strcmp(before, after), "round %ld: outside changed", rounds);
		free(after);
		rounds++;
	}
	ck_assert_int_gt(rounds, 0);
	ck_assert_int_gt(atomic_load(&s.swaps), 0);
	close(rfd);
	free(before);
	env_close();
}
END_TEST


/* ---------------------------------------------------------------- suite */

static Suite *rmtree_suite(void)
{
	Suite *s = suite_create("rmtree");
	TCase *tc = tcase_create("core");
	tcase_set_timeout(tc, 120);
	tcase_add_checked_fixture(tc, fx_fd_setup, fx_fd_teardown);
	tcase_add_loop_test(tc, rmtree_cases, 0, 2);
	suite_add_tcase(s, tc);

	TCase *sb = tcase_create("sandbox");
	tcase_set_timeout(sb, 120);
	tcase_add_checked_fixture(sb, fx_fd_setup, fx_fd_teardown);
	tcase_add_loop_test(sb, rmtree_deep_constant_fds, 0, 2);
	tcase_add_loop_test(sb, rmtree_unprivileged, 0, 2);
	tcase_add_loop_test(sb, rmtree_mounts, 0, 2);
	suite_add_tcase(s, sb);

	TCase *race = tcase_create("race");
	tcase_set_timeout(race, 120);
	tcase_add_checked_fixture(race, fx_fd_setup, fx_fd_teardown);
	tcase_add_loop_test(race, rmtree_race_symlink_swap, 0, 4);
	suite_add_tcase(s, race);
	return s;
}

FX_MAIN(rmtree_suite)
