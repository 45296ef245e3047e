/* SPDX-License-Identifier: MIT */
/*
 * Suite "api": the calls added or reshaped for the 1.0 API.
 *
 * - safe_mkdir_all_beneath(): mkdir -p returning an O_PATH directory fd,
 *   ".." only in the existing part, what a failure leaves, concurrent
 *   creators, a linear number of system calls.
 * - safe_mknodat_beneath() and safe_open_parent_beneath(), with the kernel's
 *   own mknodat() in a scratch directory as the oracle for the errnos.
 * - safe_renameat_beneath() / safe_linkat_beneath() across two roots: each
 *   path beneath its own dirfd, every escape on either side refused.
 * - SAFE_RESOLVE_CACHED and SAFE_RESOLVE_USERSPACE as documented.
 *
 * Each loop test runs with the openat2 fast path (bit 0 clear) and the
 * userspace walker (SAFE_RESOLVE_USERSPACE); bit 1 selects IN_ROOT where the
 * test uses it. The fd fixture fails any test that leaks a descriptor.
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
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "fixture.h"
#include "safeopen.h"
#include "sandbox.h"

#define MODE(i) (((i) & 1) ? SAFE_RESOLVE_USERSPACE : 0)
#define SCOPE(i) (((i) & 2) ? SAFE_RESOLVE_IN_ROOT : 0)

/* ---------------------------------------------------------------- environment */

/* base/r1 and base/r2: two roots; base/outside: must never change. */
static struct {
	char *base;
	char r1[PATH_MAX], r2[PATH_MAX], outside[PATH_MAX];
	int r1fd, r2fd, outfd;
} E;

static int open_dir(const char *path)
{
	int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	ck_assert_msg(fd >= 0, "open %s: %s", path, strerror(errno));
	return fd;
}

/* A symlink name -> absolute target. */
static void abs_link(int dirfd, const char *name, const char *dir, const char *leaf)
{
	char target[PATH_MAX];
	int n = snprintf(target, sizeof(target), "%s/%s", dir, leaf);
	ck_assert(n > 0 && (size_t)n < sizeof(target));
	ck_assert_int_eq(symlinkat(target, dirfd, name), 0);
}

static void env_open(void)
{
	E.base = fx_mkdtemp("api");
	snprintf(E.r1, sizeof(E.r1), "%s/r1", E.base);
	snprintf(E.r2, sizeof(E.r2), "%s/r2", E.base);
	snprintf(E.outside, sizeof(E.outside), "%s/outside", E.base);
	ck_assert_int_eq(mkdir(E.r1, 0755), 0);
	ck_assert_int_eq(mkdir(E.r2, 0755), 0);
	ck_assert_int_eq(mkdir(E.outside, 0755), 0);
	E.r1fd = open_dir(E.r1);
	E.r2fd = open_dir(E.r2);
	E.outfd = open_dir(E.outside);
	static const char *const out_spec[] = {
		"f victim secret", "d vdir", "f vdir/inner x", NULL,
	};
	fx_build(E.outfd, out_spec);
	/* The same adversarial shape in both roots. */
	static const char *const root_spec[] = {
		"d a",
		"d a/b",
		"f a/b/file hello",
		"f file content",
		"l link_dir a",
		"l link_file file",
		"l up ../outside",
		"l up_victim ../outside/victim",
		"l up_new ../outside/new",
		"l deep a/b/../../../outside",
		"l dangling_in nonexist",
		"d empty",
		NULL,
	};
	fx_build(E.r1fd, root_spec);
	fx_build(E.r2fd, root_spec);
	abs_link(E.r1fd, "abs", E.outside, "");
	abs_link(E.r2fd, "abs", E.outside, "");
	abs_link(E.r1fd, "abs_victim", E.outside, "victim");
	abs_link(E.r2fd, "abs_victim", E.outside, "victim");
}

static void env_close(void)
{
	close(E.r1fd);
	close(E.r2fd);
	close(E.outfd);
	ck_assert_int_eq(fx_rmtree(E.base), 0);
	free(E.base);
	E.base = NULL;
}

static bool exists_at(int dirfd, const char *path)
{
	struct stat st;
	return fstatat(dirfd, path, &st, AT_SYMLINK_NOFOLLOW) == 0;
}

static mode_t lmode(int dirfd, const char *path)
{
	struct stat st;
	ck_assert_msg(fstatat(dirfd, path, &st, AT_SYMLINK_NOFOLLOW) == 0, "lstat %s: %s", path,
		      strerror(errno));
	return st.st_mode;
}

/* ---------------------------------------------------------------- mkdir_all */

START_TEST(mkdir_all_creates_and_opens)
{
	env_open();
	uint64_t m = MODE(_i) | SCOPE(_i);
	mode_t old = umask(022);
	int fd = safe_mkdir_all_beneath(E.r1fd, "n/o/p", 0750, m);
	ck_assert_int_ge(fd, 0);
	ck_assert(fx_same_object(fd, E.r1fd, "n/o/p"));
	int fl = fcntl(fd, F_GETFL);
	ck_assert(fl & O_PATH);
	ck_assert(fl & O_DIRECTORY);
	ck_assert(fcntl(fd, F_GETFD) & FD_CLOEXEC);
	close(fd);
	ck_assert_int_eq(lmode(E.r1fd, "n"), S_IFDIR | 0750);
	ck_assert_int_eq(lmode(E.r1fd, "n/o/p"), S_IFDIR | 0750);
	/* A trailing "." or '/' does not move the caller's mode elsewhere. */
	fd = safe_mkdir_all_beneath(E.r1fd, "n2/o2/./", 0700, m);
	ck_assert_int_ge(fd, 0);
	close(fd);
	ck_assert_int_eq(lmode(E.r1fd, "n2"), S_IFDIR | 0700);
	ck_assert_int_eq(lmode(E.r1fd, "n2/o2"), S_IFDIR | 0700);
	/* Existing: the same directory again, also with "." and '/' noise and
	 * through a symlink inside the root. */
	fd = safe_mkdir_all_beneath(E.r1fd, "./n//o/./p/", 0700, m);
	ck_assert_int_ge(fd, 0);
	ck_assert(fx_same_object(fd, E.r1fd, "n/o/p"));
	close(fd);
	fd = safe_mkdir_all_beneath(E.r1fd, "link_dir/b/new/x", 0755, m);
	ck_assert_int_ge(fd, 0);
	ck_assert(fx_same_object(fd, E.r1fd, "a/b/new/x"));
	close(fd);
	/* ".." in the existing part is resolved; after it, creation goes on. */
	fd = safe_mkdir_all_beneath(E.r1fd, "a/b/../c/d", 0755, m);
	ck_assert_int_ge(fd, 0);
	ck_assert(fx_same_object(fd, E.r1fd, "a/c/d"));
	close(fd);
	/* The root itself. */
	fd = safe_mkdir_all_beneath(E.r1fd, ".", 0755, m);
	ck_assert_int_ge(fd, 0);
	ck_assert(fx_same_object(fd, E.r1fd, "."));
	close(fd);
	/* The new directories are usable as roots for further calls. */
	fd = safe_mkdir_all_beneath(E.r1fd, "q/r", 0755, m);
	ck_assert_int_ge(fd, 0);
	int f = safe_openat_beneath(fd, "file", O_WRONLY | O_CREAT | O_EXCL, 0644);
	ck_assert_int_ge(f, 0);
	close(f);
	close(fd);
	ck_assert(S_ISREG(lmode(E.r1fd, "q/r/file")));
	umask(old);
	env_close();
}
END_TEST

START_TEST(mkdir_all_errors_leave_nothing)
{
	env_open();
	uint64_t m = MODE(_i) | SCOPE(_i);
	bool in_root = _i & 2;
	char *before_out = fx_tree_snapshot(E.outside);
	char *before = fx_tree_snapshot(E.r1);
	ck_fails(safe_mkdir_all_beneath(E.r1fd, "file", 0755, m), EEXIST);
	ck_fails(safe_mkdir_all_beneath(E.r1fd, "file/", 0755, m), EEXIST);
	ck_fails(safe_mkdir_all_beneath(E.r1fd, "file/x/y", 0755, m), ENOTDIR);
	ck_fails(safe_mkdir_all_beneath(E.r1fd, "link_file/x", 0755, m), ENOTDIR);
	ck_fails(safe_mkdir_all_beneath(E.r1fd, "link_file", 0755, m), EEXIST);
	ck_fails(safe_mkdir_all_beneath(E.r1fd, "dangling_in", 0755, m), EEXIST);
	ck_fails(safe_mkdir_all_beneath(E.r1fd, "dangling_in/x", 0755, m), ENOENT);
	/* ".." after a missing component: refused, nothing created. */
	ck_fails(safe_mkdir_all_beneath(E.r1fd, "a/missing/../x", 0755, m), ENOENT);
	ck_fails(safe_mkdir_all_beneath(E.r1fd, "m1/m2/../../m3", 0755, m), ENOENT);
	ck_fails(safe_mkdir_all_beneath(E.r1fd, "link_dir/q", 0755, m | SAFE_RESOLVE_NO_SYMLINKS),
		 ELOOP);
	ck_fails(safe_mkdir_all_beneath(E.r1fd, "a", 0755, m | SAFE_RESOLVE_BENEATH |
							       SAFE_RESOLVE_IN_ROOT),
		 EINVAL);
	ck_fails(safe_mkdir_all_beneath(E.r1fd, "a", 0755, m | (1ULL << 63)), EINVAL);
	ck_fails(safe_mkdir_all_beneath(E.r1fd, "", 0755, m), ENOENT);
	ck_fails(safe_mkdir_all_beneath(E.r1fd, NULL, 0755, m), EFAULT);
	ck_fails(safe_mkdir_all_beneath(-1, "a", 0755, m), EBADF);
	/* Escapes: EXDEV under BENEATH; under IN_ROOT the same paths stay in
	 * the root and create there, which is checked separately. */
	if (!in_root) {
		ck_fails(safe_mkdir_all_beneath(E.r1fd, "../outside/new", 0755, m), EXDEV);
		ck_fails(safe_mkdir_all_beneath(E.r1fd, "up/new/x", 0755, m), EXDEV);
		ck_fails(safe_mkdir_all_beneath(E.r1fd, "deep/new", 0755, m), EXDEV);
		ck_fails(safe_mkdir_all_beneath(E.r1fd, "abs/new", 0755, m), EXDEV);
		ck_fails(safe_mkdir_all_beneath(E.r1fd, "a/../../outside/vdir/n", 0755, m), EXDEV);
		ck_fails(safe_mkdir_all_beneath(E.r1fd, "/tmp", 0755, m), EXDEV);
	}
	char *after = fx_tree_snapshot(E.r1);
	ck_assert_str_eq(before, after);
	free(after);
	if (in_root) {
		/* "up" dangles inside the root: not created through. */
		ck_fails(safe_mkdir_all_beneath(E.r1fd, "up/new/x", 0755, m), ENOENT);
		int fd = safe_mkdir_all_beneath(E.r1fd, "/../outside/new/x", 0755, m);
		ck_assert_int_ge(fd, 0);
		ck_assert(fx_same_object(fd, E.r1fd, "outside/new/x"));
		close(fd);
		fd = safe_mkdir_all_beneath(E.r1fd, "up/new/x", 0755, m);
		ck_assert_int_ge(fd, 0);
		ck_assert(fx_same_object(fd, E.r1fd, "outside/new/x"));
		close(fd);
		fd = safe_mkdir_all_beneath(E.r1fd, "../../n", 0755, m);
		ck_assert_int_ge(fd, 0);
		ck_assert(fx_same_object(fd, E.r1fd, "n"));
		close(fd);
	}
	after = fx_tree_snapshot(E.outside);
	ck_assert_str_eq(before_out, after);
	free(after);
	free(before);
	free(before_out);
	env_close();
}
END_TEST

/* What a failure after some creations leaves: exactly the directories made
 * before the failing step (documented), no descriptor. */
START_TEST(mkdir_all_partial_failure)
{
	env_open();
	uint64_t m = MODE(_i);
	char path[PATH_MAX];
	char longname[NAME_MAX + 2];
	memset(longname, 'x', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = '\0';
	snprintf(path, sizeof(path), "k1/k2/%s/k4", longname);
	ck_fails(safe_mkdir_all_beneath(E.r1fd, path, 0755, m), ENAMETOOLONG);
	ck_assert(S_ISDIR(lmode(E.r1fd, "k1/k2")));
	char *list = fx_dir_listing(E.r1fd, "k1/k2");
	ck_assert_str_eq(list, "");
	free(list);
	env_close();
}
END_TEST

/* Concurrent creators of the same path all succeed with the same directory. */
struct mk_arg {
	int rootfd;
	uint64_t flags;
	const char *path;
	int ok;
	int err;
};

static void *mk_thread(void *p)
{
	struct mk_arg *a = p;
	for (int i = 0; i < 20; i++) {
		int fd = safe_mkdir_all_beneath(a->rootfd, a->path, 0755, a->flags);
		if (fd >= 0) {
			a->ok++;
			close(fd);
		} else {
			a->err = errno;
		}
	}
	return NULL;
}

START_TEST(mkdir_all_concurrent_creators)
{
	env_open();
	uint64_t m = MODE(_i);
	for (int round = 0; round < 10; round++) {
		char path[64];
		snprintf(path, sizeof(path), "c%d/d/e/f/g/h", round);
		struct mk_arg a[4];
		pthread_t th[4];
		for (int t = 0; t < 4; t++) {
			a[t] = (struct mk_arg){ .rootfd = E.r1fd, .flags = m, .path = path };
			ck_assert_int_eq(pthread_create(&th[t], NULL, mk_thread, &a[t]), 0);
		}
		for (int t = 0; t < 4; t++) {
			pthread_join(th[t], NULL);
			ck_assert_msg(a[t].ok == 20, "thread %d: %d ok, last error %s", t, a[t].ok,
				      strerror(a[t].err));
		}
		ck_assert(S_ISDIR(lmode(E.r1fd, path)));
	}
	env_close();
}
END_TEST

/*
 * An attacker keeps replacing a directory that mkdir_all is about to create
 * with a symlink to the outside (and removing it again). Whatever each call
 * returns, nothing is created outside, and a success is a real directory
 * beneath the root.
 */
struct planter {
	int dirfd;
	char target[PATH_MAX];
	atomic_bool stop;
	atomic_long plants;
};

static void *plant_thread(void *p)
{
	struct planter *s = p;
	bool throttle = fx_under_valgrind();
	while (!atomic_load(&s->stop)) {
		if (symlinkat(s->target, s->dirfd, "x") == 0)
			atomic_fetch_add(&s->plants, 1);
		sched_yield();
		(void)unlinkat(s->dirfd, "x", 0);
		(void)unlinkat(s->dirfd, "x", AT_REMOVEDIR);
		(void)unlinkat(s->dirfd, "x/y/z", AT_REMOVEDIR);
		if (throttle)
			usleep(50);
	}
	return NULL;
}

START_TEST(mkdir_all_race_planted_symlink)
{
	env_open();
	uint64_t m = MODE(_i) | SCOPE(_i);
	char *before = fx_tree_snapshot(E.outside);
	ck_ok(mkdirat(E.r1fd, "t", 0755));
	int tfd = open_dir(E.r1);
	close(tfd);
	tfd = openat(E.r1fd, "t", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	ck_assert_int_ge(tfd, 0);
	struct planter s = { .dirfd = tfd };
	int n = snprintf(s.target, sizeof(s.target), "%s/vdir", E.outside);
	ck_assert(n > 0 && (size_t)n < sizeof(s.target));
	pthread_t th;
	ck_assert_int_eq(pthread_create(&th, NULL, plant_thread, &s), 0);
	while (atomic_load(&s.plants) == 0)
		sched_yield();
	/* the time, and at least 200 calls (a slow machine runs longer) */
	double end = fx_now() + (fx_under_valgrind() ? 1.0 : fx_long() ? 0.4 : 0.1);
	long calls = 0, ok = 0;
	while (fx_now() < end || (calls < 200 && !fx_under_valgrind())) {
		int fd = safe_mkdir_all_beneath(E.r1fd, "t/x/y", 0755, m);
		calls++;
		if (fd >= 0) {
			struct stat st, rst;
			ck_assert_int_eq(fstat(fd, &st), 0);
			ck_assert(S_ISDIR(st.st_mode));
			/* Not the outside directory. */
			ck_assert_int_eq(fstatat(E.outfd, "vdir", &rst, 0), 0);
			ck_assert(st.st_ino != rst.st_ino || st.st_dev != rst.st_dev);
			ok++;
			close(fd);
		} else {
			int e = errno;
			ck_assert_msg(e == ENOTDIR || e == EEXIST || e == ENOENT || e == EXDEV ||
					      e == EAGAIN,
				      "unexpected %s", strerror(e));
		}
	}
	atomic_store(&s.stop, true);
	pthread_join(th, NULL);
	ck_assert_int_gt(atomic_load(&s.plants), 0);
	ck_assert_int_gt(calls, 0);
	char *after = fx_tree_snapshot(E.outside);
	ck_assert_str_eq(before, after);
	free(after);
	free(before);
	close(tfd);
	env_close();
}
END_TEST

/* 1,000 components: every directory created, one descriptor returned. */
START_TEST(mkdir_all_deep)
{
	env_open();
	uint64_t m = MODE(_i);
	/* far beyond the walker's 32 held levels; 1000 under check-long */
	int n = (int)fx_size(200, 1000, 1);
	size_t len = (size_t)n * 2;
	char *path = malloc(len + 1);
	ck_assert_ptr_nonnull(path);
	for (int i = 0; i < n; i++) {
		path[2 * i] = 'd';
		path[2 * i + 1] = '/';
	}
	path[len - 1] = '\0';
	int fd = safe_mkdir_all_beneath(E.r1fd, path, 0755, m);
	ck_assert_int_ge(fd, 0);
	ck_assert(fx_same_object(fd, E.r1fd, path));
	close(fd);
	/* Again: everything exists. */
	fd = safe_mkdir_all_beneath(E.r1fd, path, 0755, m);
	ck_assert_int_ge(fd, 0);
	close(fd);
	free(path);
	env_close();
}
END_TEST

/* ---------------------------------------------------------------- mknod */

/* The kernel's answer for mknodat() of `name` in a scratch copy. */
START_TEST(mknod_cases)
{
	env_open();
	uint64_t m = MODE(_i) | SCOPE(_i);
	mode_t old = umask(022);
	ck_ok(safe_mknodat_beneath(E.r1fd, "a/fifo", S_IFIFO | 0640, 0, m));
	ck_assert_int_eq(lmode(E.r1fd, "a/fifo"), S_IFIFO | 0640);
	ck_ok(safe_mknodat_beneath(E.r1fd, "link_dir/b/reg", 0600, 0, m));
	ck_assert_int_eq(lmode(E.r1fd, "a/b/reg"), S_IFREG | 0600);
	ck_ok(safe_mknodat_beneath(E.r1fd, "a/reg2", S_IFREG | 0644, 0, m));
	ck_assert_int_eq(lmode(E.r1fd, "a/reg2"), S_IFREG | 0644);
	ck_ok(safe_mknodat_beneath(E.r1fd, "sock", S_IFSOCK | 0666, 0, m));
	ck_assert_int_eq(lmode(E.r1fd, "sock"), S_IFSOCK | 0644);
	/* Devices: the kernel decides (CAP_MKNOD); compare with it. */
	errno = 0;
	int want = mknodat(E.r2fd, "null", S_IFCHR | 0666, makedev(1, 3)) == 0 ? 0 : errno;
	errno = 0;
	int got = safe_mknodat_beneath(E.r1fd, "null", S_IFCHR | 0666, makedev(1, 3), m) == 0
			  ? 0
			  : errno;
	ck_assert_int_eq(got, want);
	if (got == 0) {
		struct stat st;
		ck_assert_int_eq(fstatat(E.r1fd, "null", &st, AT_SYMLINK_NOFOLLOW), 0);
		ck_assert(S_ISCHR(st.st_mode));
		ck_assert(st.st_rdev == makedev(1, 3));
	}
	/* Errors as mknodat(2) says them in the same situation. */
	static const struct {
		const char *path;
		mode_t mode;
	} cases[] = {
		{ "file", S_IFIFO | 0644 },      { "link_file", S_IFIFO | 0644 },
		{ "dangling_in", S_IFIFO | 0644 }, { "a", S_IFIFO | 0644 },
		{ "new/", S_IFIFO | 0644 },      { "file/", S_IFIFO | 0644 },
		{ "a/.", S_IFIFO | 0644 },       { "a/..", S_IFIFO | 0644 },
		{ "nodir/x", S_IFIFO | 0644 },   { "file/x", S_IFIFO | 0644 },
		{ "dir", S_IFDIR | 0755 },       { "bad", 0170000 | 0644 },
		{ "bad2", 0110000 | 0644 },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		errno = 0;
		int kr = mknodat(E.r2fd, cases[i].path, cases[i].mode, 0);
		int ke = errno;
		ck_assert_msg(kr == -1, "oracle created %s", cases[i].path);
		errno = 0;
		int r = safe_mknodat_beneath(E.r1fd, cases[i].path, cases[i].mode, 0, m);
		int e = errno;
		ck_assert_msg(r == -1 && e == ke, "%s: got %d %s, kernel %s", cases[i].path, r,
			      strerror(e), strerror(ke));
	}
	/* Escapes. */
	char *before = fx_tree_snapshot(E.outside);
	if (!(_i & 2)) {
		ck_fails(safe_mknodat_beneath(E.r1fd, "../outside/f", S_IFIFO | 0644, 0, m), EXDEV);
		ck_fails(safe_mknodat_beneath(E.r1fd, "up/f", S_IFIFO | 0644, 0, m), EXDEV);
		ck_fails(safe_mknodat_beneath(E.r1fd, "abs/f", S_IFIFO | 0644, 0, m), EXDEV);
	} else {
		ck_fails(safe_mknodat_beneath(E.r1fd, "up/f", S_IFIFO | 0644, 0, m), ENOENT);
		ck_ok(safe_mknodat_beneath(E.r1fd, "../../a/f", S_IFIFO | 0644, 0, m));
		ck_assert(S_ISFIFO(lmode(E.r1fd, "a/f")));
	}
	/* The last component is never followed. */
	ck_fails(safe_mknodat_beneath(E.r1fd, "up_new", S_IFIFO | 0644, 0, m), EEXIST);
	ck_fails(safe_mknodat_beneath(E.r1fd, "x", S_IFIFO, 0, m | SAFE_FOLLOW), EINVAL);
	ck_fails(safe_mknodat_beneath(E.r1fd, NULL, S_IFIFO, 0, m), EFAULT);
	ck_fails(safe_mknodat_beneath(E.r1fd, "", S_IFIFO, 0, m), ENOENT);
	char *after = fx_tree_snapshot(E.outside);
	ck_assert_str_eq(before, after);
	free(after);
	free(before);
	umask(old);
	env_close();
}
END_TEST

/* ---------------------------------------------------------------- SAFE_REPLACE (issue 32) */

/* No hidden ".safeopen-" name left in dirfd. */
static bool no_hidden_names(int dirfd, const char *path)
{
	char *ls = fx_dir_listing(dirfd, path);
	bool ok = ls && !strstr(ls, ".safeopen-");
	free(ls);
	return ok;
}

START_TEST(replace_symlink_mknod)
{
	env_open();
	uint64_t m = MODE(_i) | SCOPE(_i);
	char *before = fx_tree_snapshot(E.outside);
	char body[64];
	ssize_t n;
	/* A new name: as without the flag. */
	ck_ok(safe_symlinkat_beneath("t1", E.r1fd, "a/s", m | SAFE_REPLACE));
	n = readlinkat(E.r1fd, "a/s", body, sizeof(body));
	ck_assert(n == 2 && !memcmp(body, "t1", 2));
	/* An existing symlink, a regular file, a FIFO: replaced, not followed. */
	ck_ok(safe_symlinkat_beneath("t2", E.r1fd, "a/s", m | SAFE_REPLACE));
	n = readlinkat(E.r1fd, "a/s", body, sizeof(body));
	ck_assert(n == 2 && !memcmp(body, "t2", 2));
	ck_ok(safe_symlinkat_beneath("t3", E.r1fd, "link_file", m | SAFE_REPLACE));
	ck_assert(S_ISLNK(lmode(E.r1fd, "link_file")));
	ck_assert(S_ISREG(lmode(E.r1fd, "file"))); /* the old target is untouched */
	ck_ok(safe_symlinkat_beneath("t4", E.r1fd, "a/b/file", m | SAFE_REPLACE));
	ck_assert(S_ISLNK(lmode(E.r1fd, "a/b/file")));
	ck_ok(safe_symlinkat_beneath("t5", E.r1fd, "up_victim", m | SAFE_REPLACE));
	ck_assert(S_ISLNK(lmode(E.r1fd, "up_victim")));
	mode_t old = umask(022);
	ck_ok(safe_mknodat_beneath(E.r1fd, "file", S_IFIFO | 0640, 0, m | SAFE_REPLACE));
	ck_assert_int_eq(lmode(E.r1fd, "file"), S_IFIFO | 0640);
	ck_ok(safe_mknodat_beneath(E.r1fd, "file", S_IFREG | 0600, 0, m | SAFE_REPLACE));
	ck_assert_int_eq(lmode(E.r1fd, "file"), S_IFREG | 0600);
	/* A dangling link to outside: the link is replaced, nothing appears
	 * outside. */
	ck_ok(safe_mknodat_beneath(E.r1fd, "up_new", S_IFIFO | 0600, 0, m | SAFE_REPLACE));
	ck_assert(S_ISFIFO(lmode(E.r1fd, "up_new")));
	umask(old);
	/* Never a directory, nor "." / ".." / a trailing slash. */
	ck_fails(safe_symlinkat_beneath("t", E.r1fd, "a", m | SAFE_REPLACE), EISDIR);
	ck_fails(safe_mknodat_beneath(E.r1fd, "empty", S_IFIFO | 0600, 0, m | SAFE_REPLACE), EISDIR);
	/* A symlink to a directory is a non-directory: replaced itself. */
	ck_ok(safe_symlinkat_beneath("a", E.r1fd, "link_dir", m | SAFE_REPLACE));
	ck_assert(S_ISLNK(lmode(E.r1fd, "link_dir")) && S_ISDIR(lmode(E.r1fd, "a")));
	ck_fails(safe_symlinkat_beneath("t", E.r1fd, "a/.", m | SAFE_REPLACE), EEXIST);
	ck_fails(safe_symlinkat_beneath("t", E.r1fd, "a/..", m | SAFE_REPLACE), EEXIST);
	ck_fails(safe_mknodat_beneath(E.r1fd, "a/..", S_IFIFO | 0600, 0, m | SAFE_REPLACE), EEXIST);
	ck_fails(safe_symlinkat_beneath("t", E.r1fd, "a/s/", m | SAFE_REPLACE), EEXIST);
	ck_assert(S_ISDIR(lmode(E.r1fd, "a")));
	ck_assert(S_ISDIR(lmode(E.r1fd, "empty")));
	/* Exact errnos for the bad inputs, nothing created. */
	ck_fails(safe_symlinkat_beneath("", E.r1fd, "a/new", m | SAFE_REPLACE), ENOENT);
	ck_fails(safe_symlinkat_beneath(NULL, E.r1fd, "a/new", m | SAFE_REPLACE), EFAULT);
	ck_fails(safe_symlinkat_beneath("t", E.r1fd, NULL, m | SAFE_REPLACE), EFAULT);
	ck_fails(safe_symlinkat_beneath("t", E.r1fd, "", m | SAFE_REPLACE), ENOENT);
	ck_fails(safe_mknodat_beneath(E.r1fd, "a/new", S_IFDIR | 0700, 0, m | SAFE_REPLACE), EPERM);
	ck_fails(safe_mknodat_beneath(E.r1fd, "a/new", 0170000 | 0600, 0, m | SAFE_REPLACE), EINVAL);
	ck_fails(safe_mknodat_beneath(E.r1fd, "nodir/x", S_IFIFO | 0600, 0, m | SAFE_REPLACE), ENOENT);
	ck_fails(safe_symlinkat_beneath("t", E.r1fd, "a/new", m | SAFE_REPLACE | SAFE_FOLLOW), EINVAL);
	ck_assert(!exists_at(E.r1fd, "a/new"));
	if (!(_i & 2)) {
		ck_fails(safe_symlinkat_beneath("t", E.r1fd, "up/victim", m | SAFE_REPLACE), EXDEV);
		ck_fails(safe_mknodat_beneath(E.r1fd, "abs/victim", S_IFIFO | 0600, 0, m | SAFE_REPLACE),
			 EXDEV);
		ck_fails(safe_symlinkat_beneath("t", E.r1fd, "../outside/victim", m | SAFE_REPLACE),
			 EXDEV);
	} else {
		ck_fails(safe_symlinkat_beneath("t", E.r1fd, "up/victim", m | SAFE_REPLACE), ENOENT);
	}
	ck_assert(no_hidden_names(E.r1fd, "."));
	ck_assert(no_hidden_names(E.r1fd, "a"));
	char *after = fx_tree_snapshot(E.outside);
	ck_assert_str_eq(before, after);
	free(before);
	free(after);
	env_close();
}
END_TEST

/* The name never disappears while it is replaced: a reader thread lstat()s
 * it throughout (and must have run while replacements happened). */
static struct {
	atomic_bool stop;
	atomic_long looks, missing;
	int dirfd;
} RP;

static void *replace_reader(void *arg)
{
	(void)arg;
	while (!atomic_load(&RP.stop)) {
		struct stat st;
		if (fstatat(RP.dirfd, "a/target", &st, AT_SYMLINK_NOFOLLOW) < 0 && errno == ENOENT)
			atomic_fetch_add(&RP.missing, 1);
		atomic_fetch_add(&RP.looks, 1);
	}
	return NULL;
}

START_TEST(replace_is_atomic)
{
	env_open();
	uint64_t m = MODE(_i);
	ck_ok(safe_symlinkat_beneath("first", E.r1fd, "a/target", m));
	RP.dirfd = E.r1fd;
	atomic_store(&RP.stop, false);
	atomic_store(&RP.looks, 0);
	atomic_store(&RP.missing, 0);
	pthread_t th;
	ck_assert_int_eq(pthread_create(&th, NULL, replace_reader, NULL), 0);
	long looks_during = 0, rounds = fx_size(500, 2000, 1);
	for (long i = 0; i < rounds; i++) {
		long l0 = atomic_load(&RP.looks);
		if (i & 1)
			ck_ok(safe_symlinkat_beneath(i & 2 ? "x" : "y", E.r1fd, "a/target",
						     m | SAFE_REPLACE));
		else
			ck_ok(safe_mknodat_beneath(E.r1fd, "a/target", S_IFIFO | 0600, 0,
						   m | SAFE_REPLACE));
		looks_during += atomic_load(&RP.looks) != l0;
	}
	atomic_store(&RP.stop, true);
	pthread_join(th, NULL);
	ck_assert_msg(looks_during > 0, "the reader never ran during a replacement");
	ck_assert_int_eq(atomic_load(&RP.missing), 0);
	ck_assert(no_hidden_names(E.r1fd, "a"));
	env_close();
}
END_TEST

/* ---------------------------------------------------------------- open_parent */

START_TEST(open_parent_cases)
{
	env_open();
	uint64_t m = MODE(_i) | SCOPE(_i);
	char name[NAME_MAX + 1];
	int fd = safe_open_parent_beneath(E.r1fd, "link_dir/b/file", m, name, sizeof(name));
	ck_assert_int_ge(fd, 0);
	ck_assert_str_eq(name, "file");
	ck_assert(fx_same_object(fd, E.r1fd, "a/b"));
	int fl = fcntl(fd, F_GETFL);
	ck_assert(fl & O_PATH);
	ck_assert(fl & O_DIRECTORY);
	ck_assert(fcntl(fd, F_GETFD) & FD_CLOEXEC);
	/* The intended use: a plain *at() call that does not follow. */
	struct stat st;
	ck_assert_int_eq(fstatat(fd, name, &st, AT_SYMLINK_NOFOLLOW), 0);
	ck_assert(S_ISREG(st.st_mode));
	close(fd);
	/* A single name: the root itself is the parent; the name need not exist;
	 * trailing slashes are dropped; a symlink is not followed. */
	fd = safe_open_parent_beneath(E.r1fd, "new//", m, name, sizeof(name));
	ck_assert_int_ge(fd, 0);
	ck_assert_str_eq(name, "new");
	ck_assert(fx_same_object(fd, E.r1fd, "."));
	close(fd);
	fd = safe_open_parent_beneath(E.r1fd, "up_victim", m, name, sizeof(name));
	ck_assert_int_ge(fd, 0);
	ck_assert_str_eq(name, "up_victim");
	close(fd);
	/* Buffer sizes: exactly enough, one too few, none. */
	fd = safe_open_parent_beneath(E.r1fd, "a/b/file", m, name, 5);
	ck_assert_int_ge(fd, 0);
	ck_assert_str_eq(name, "file");
	close(fd);
	memcpy(name, "keep", 5);
	ck_fails(safe_open_parent_beneath(E.r1fd, "a/b/file", m, name, 4), ERANGE);
	ck_assert_str_eq(name, "keep");
	ck_fails(safe_open_parent_beneath(E.r1fd, "a/b/file", m, NULL, 0), ERANGE);
	ck_fails(safe_open_parent_beneath(E.r1fd, "a/b/file", m, NULL, 8), EFAULT);
	/* No name in a parent. */
	static const char *const none[] = { ".", "./", "a/.", "a/..", "..", "a/b/../..", "//" };
	for (size_t i = 0; i < sizeof(none) / sizeof(none[0]); i++) {
		errno = 0;
		int r = safe_open_parent_beneath(E.r1fd, none[i], m, name, sizeof(name));
		int e = errno;
		/* The parent is resolved first: "/" is an escape under BENEATH. */
		int want = (!(_i & 2) && !strcmp(none[i], "//")) ? EXDEV : EINVAL;
		ck_assert_msg(r == -1 && e == want, "%s: got %d %s", none[i], r, strerror(e));
	}
	/* The parent must stay beneath the root. */
	if (!(_i & 2)) {
		ck_fails(safe_open_parent_beneath(E.r1fd, "up/victim", m, name, sizeof(name)), EXDEV);
		ck_fails(safe_open_parent_beneath(E.r1fd, "../outside/victim", m, name, sizeof(name)),
			 EXDEV);
		ck_fails(safe_open_parent_beneath(E.r1fd, "abs/victim", m, name, sizeof(name)), EXDEV);
		ck_fails(safe_open_parent_beneath(E.r1fd, "deep/victim", m, name, sizeof(name)), EXDEV);
	} else {
		ck_fails(safe_open_parent_beneath(E.r1fd, "up/victim", m, name, sizeof(name)), ENOENT);
		fd = safe_open_parent_beneath(E.r1fd, "/../a/b/file", m, name, sizeof(name));
		ck_assert_int_ge(fd, 0);
		ck_assert(fx_same_object(fd, E.r1fd, "a/b"));
		close(fd);
	}
	ck_fails(safe_open_parent_beneath(E.r1fd, "file/x", m, name, sizeof(name)), ENOTDIR);
	ck_fails(safe_open_parent_beneath(E.r1fd, "nodir/x", m, name, sizeof(name)), ENOENT);
	ck_fails(safe_open_parent_beneath(E.r1fd, "", m, name, sizeof(name)), ENOENT);
	ck_fails(safe_open_parent_beneath(E.r1fd, NULL, m, name, sizeof(name)), EFAULT);
	ck_fails(safe_open_parent_beneath(E.r1fd, "x", m | SAFE_FOLLOW, name, sizeof(name)), EINVAL);
	ck_fails(safe_open_parent_beneath(E.r1fd, "a/b/../x", m | SAFE_RESOLVE_NO_DOTDOT, name,
					  sizeof(name)),
		 EXDEV);
	ck_fails(safe_open_parent_beneath(E.r1fd, "link_dir/x", m | SAFE_RESOLVE_NO_SYMLINKS, name,
					  sizeof(name)),
		 ELOOP);
	env_close();
}
END_TEST

/* ---------------------------------------------------------------- rename / link across two roots */

/* Each escaping path, for either side, and what the call must say. Under
 * IN_ROOT the same paths stay inside the root: they name nothing there. */
static const char *const escapes[] = {
	"../outside/victim", "up/victim", "abs/victim", "deep/victim", "a/../../outside/victim",
	"/outside/victim", "link_dir/../../outside/victim", "up/vdir/inner",
};
static const char *const new_escapes[] = {
	"../outside/new", "up/new", "abs/new", "deep/new", "a/../../outside/new", "/new_abs",
	"link_dir/../../outside/new",
};

START_TEST(rename_link_two_roots)
{
	env_open();
	uint64_t m = MODE(_i) | SCOPE(_i);
	bool in_root = _i & 2;
	char *before_out = fx_tree_snapshot(E.outside);

	/* Moving and linking between the roots, each path in its own. */
	ck_ok(safe_renameat_beneath(E.r1fd, "a/b/file", E.r2fd, "link_dir/moved", m));
	ck_assert(!exists_at(E.r1fd, "a/b/file"));
	ck_assert(S_ISREG(lmode(E.r2fd, "a/moved")));
	ck_ok(safe_linkat_beneath(E.r2fd, "a/moved", E.r1fd, "link_dir/b/back", m));
	struct stat s1, s2;
	ck_assert_int_eq(fstatat(E.r1fd, "a/b/back", &s1, AT_SYMLINK_NOFOLLOW), 0);
	ck_assert_int_eq(fstatat(E.r2fd, "a/moved", &s2, AT_SYMLINK_NOFOLLOW), 0);
	ck_assert(s1.st_ino == s2.st_ino && s1.st_nlink == 2);
	/* A trailing symlink followed with SAFE_FOLLOW, linked itself without. */
	ck_ok(safe_linkat_beneath(E.r1fd, "link_file", E.r2fd, "lf_itself", m));
	ck_assert(S_ISLNK(lmode(E.r2fd, "lf_itself")));
	ck_ok(safe_linkat_beneath(E.r1fd, "link_file", E.r2fd, "lf_target", m | SAFE_FOLLOW));
	ck_assert(S_ISREG(lmode(E.r2fd, "lf_target")));
	/* The same dirfd twice: one root. */
	ck_ok(safe_renameat_beneath(E.r1fd, "file", E.r1fd, "a/renamed", m));
	ck_ok(safe_renameat_beneath(E.r1fd, "a/renamed", E.r1fd, "file",
				    m | SAFE_RENAME_NOREPLACE));
	ck_ok(safe_linkat_beneath(E.r1fd, "file", E.r1fd, "a/hard", m));
	ck_ok(safe_renameat_beneath(E.r1fd, "a/hard", E.r2fd, "file", m | SAFE_RENAME_EXCHANGE));
	/* AT_FDCWD on one side. */
	int cwd = open(".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	ck_assert_int_ge(cwd, 0);
	ck_assert_int_eq(fchdir(E.r2fd), 0);
	ck_ok(safe_renameat_beneath(AT_FDCWD, "lf_target", E.r1fd, "from_cwd", m));
	ck_assert_int_eq(fchdir(cwd), 0);
	close(cwd);
	ck_assert(S_ISREG(lmode(E.r1fd, "from_cwd")));

	/* Every escape, on the old side and on the new side, for both calls. */
	char *before1 = fx_tree_snapshot(E.r1), *before2 = fx_tree_snapshot(E.r2);
	for (size_t i = 0; i < sizeof(escapes) / sizeof(escapes[0]); i++) {
		const char *p = escapes[i];
		int want = in_root ? ENOENT : EXDEV;
		ck_fails(safe_renameat_beneath(E.r1fd, p, E.r2fd, "stolen", m), want);
		ck_fails(safe_renameat_beneath(E.r1fd, "file", E.r2fd, p, m), want);
		ck_fails(safe_renameat_beneath(E.r1fd, "file", E.r2fd, p, m | SAFE_RENAME_EXCHANGE),
			 want);
		ck_fails(safe_renameat_beneath(E.r2fd, p, E.r1fd, "stolen", m | SAFE_RENAME_NOREPLACE),
			 want);
		ck_fails(safe_linkat_beneath(E.r1fd, p, E.r2fd, "stolen", m), want);
		ck_fails(safe_linkat_beneath(E.r1fd, p, E.r2fd, "stolen", m | SAFE_FOLLOW), want);
		ck_fails(safe_linkat_beneath(E.r2fd, p, E.r2fd, "stolen", m), want);
	}
	for (size_t i = 0; i < sizeof(new_escapes) / sizeof(new_escapes[0]); i++) {
		const char *p = new_escapes[i];
		if (in_root) {
			/* Inside the root these are plain names in missing or
			 * existing directories: no escape possible, tested above. */
			continue;
		}
		ck_fails(safe_renameat_beneath(E.r1fd, "file", E.r2fd, p, m), EXDEV);
		ck_fails(safe_renameat_beneath(E.r2fd, "file", E.r1fd, p, m), EXDEV);
		ck_fails(safe_linkat_beneath(E.r1fd, "file", E.r2fd, p, m), EXDEV);
		ck_fails(safe_linkat_beneath(E.r2fd, "file", E.r1fd, p, m | SAFE_FOLLOW), EXDEV);
	}
	/* Trailing symlinks that point outside are renamed or linked
	 * themselves, never followed: the link moves, the victim stays. */
	ck_ok(safe_renameat_beneath(E.r1fd, "up_victim", E.r2fd, "moved_link", m));
	ck_assert(S_ISLNK(lmode(E.r2fd, "moved_link")));
	ck_ok(safe_renameat_beneath(E.r2fd, "moved_link", E.r1fd, "up_victim", m));
	ck_fails(safe_linkat_beneath(E.r1fd, "up_victim", E.r2fd, "x", m | SAFE_FOLLOW),
		 in_root ? ENOENT : EXDEV);
	/* Replacing a symlink to the outside replaces the link. */
	ck_ok(safe_linkat_beneath(E.r1fd, "file", E.r1fd, "f_copy", m));
	ck_ok(safe_renameat_beneath(E.r1fd, "f_copy", E.r2fd, "up_victim", m));
	ck_assert(S_ISREG(lmode(E.r2fd, "up_victim")));
	char *after = fx_tree_snapshot(E.outside);
	ck_assert_str_eq(before_out, after);
	free(after);
	free(before1);
	free(before2);
	free(before_out);
	env_close();
}
END_TEST

/* Flag and argument errors are the same whichever side is wrong. */
START_TEST(rename_link_arguments)
{
	env_open();
	uint64_t m = MODE(_i);
	ck_fails(safe_renameat_beneath(-1, "file", E.r2fd, "x", m), EBADF);
	ck_fails(safe_renameat_beneath(E.r1fd, "file", -1, "x", m), EBADF);
	ck_fails(safe_linkat_beneath(-1, "file", E.r2fd, "x", m), EBADF);
	ck_fails(safe_linkat_beneath(E.r1fd, "file", -1, "x", m), EBADF);
	ck_fails(safe_renameat_beneath(E.r1fd, NULL, E.r2fd, "x", m), EFAULT);
	ck_fails(safe_renameat_beneath(E.r1fd, "file", E.r2fd, NULL, m), EFAULT);
	ck_fails(safe_linkat_beneath(E.r1fd, NULL, E.r2fd, "x", m), EFAULT);
	ck_fails(safe_linkat_beneath(E.r1fd, "file", E.r2fd, NULL, m), EFAULT);
	ck_fails(safe_renameat_beneath(E.r1fd, "", E.r2fd, "x", m), ENOENT);
	ck_fails(safe_renameat_beneath(E.r1fd, "file", E.r2fd, "", m), ENOENT);
	ck_fails(safe_renameat_beneath(E.r1fd, "file", E.r2fd, "x",
				       m | SAFE_RENAME_NOREPLACE | SAFE_RENAME_EXCHANGE),
		 EINVAL);
	ck_fails(safe_renameat_beneath(E.r1fd, "file", E.r2fd, "x", m | SAFE_FOLLOW), EINVAL);
	ck_fails(safe_linkat_beneath(E.r1fd, "file", E.r2fd, "x", m | SAFE_RENAME_NOREPLACE),
		 EINVAL);
	ck_fails(safe_renameat_beneath(E.r1fd, "file", E.r2fd, "x",
				       m | SAFE_RESOLVE_BENEATH | SAFE_RESOLVE_IN_ROOT),
		 EINVAL);
	ck_fails(safe_renameat_beneath(E.r1fd, "a/.", E.r2fd, "x", m), EBUSY);
	ck_fails(safe_renameat_beneath(E.r1fd, "file", E.r2fd, "a/..", m), EBUSY);
	ck_fails(safe_linkat_beneath(E.r1fd, "a", E.r2fd, "x", m), EPERM);
	ck_fails(safe_linkat_beneath(E.r1fd, "file", E.r2fd, "file", m), EEXIST);
	ck_assert(S_ISREG(lmode(E.r1fd, "file")));
	env_close();
}
END_TEST

/* ---------------------------------------------------------------- resolve bits */

START_TEST(resolve_cached)
{
	env_open();
	struct safe_open_how how = {
		.flags = O_RDONLY,
		.resolve = SAFE_RESOLVE_BENEATH | SAFE_RESOLVE_CACHED,
	};
	/* Forced walker: it has no cache-only lookup, so it always says EAGAIN
	 * (the caller's documented retry without the bit). */
	how.resolve |= SAFE_RESOLVE_USERSPACE;
	ck_fails(safe_openat2(E.r1fd, "file", &how, sizeof(how)), EAGAIN);
	how.resolve &= ~SAFE_RESOLVE_USERSPACE;
	/* O_CREAT / O_TRUNC / O_TMPFILE: EAGAIN on both paths, as openat2. */
	how.flags = O_WRONLY | O_CREAT;
	how.mode = 0644;
	ck_fails(safe_openat2(E.r1fd, "newc", &how, sizeof(how)), EAGAIN);
	how.flags = O_WRONLY | O_TRUNC;
	how.mode = 0;
	ck_fails(safe_openat2(E.r1fd, "file", &how, sizeof(how)), EAGAIN);
	ck_assert(!exists_at(E.r1fd, "newc"));
	/* Fast path: a warm lookup succeeds or says EAGAIN (kernel's choice);
	 * never anything else. */
	how.flags = O_RDONLY;
	int fd = safe_openat2(E.r1fd, "a/b/file", &how, sizeof(how));
	if (fd >= 0)
		close(fd);
	else
		ck_assert_msg(errno == EAGAIN, "got %s", strerror(errno));
	/* The operations take no cache-only mode. */
	struct stat st;
	ck_fails(safe_fstatat_beneath(E.r1fd, "file", &st, SAFE_RESOLVE_CACHED), EINVAL);
	ck_fails(safe_mkdir_all_beneath(E.r1fd, "x", 0755, SAFE_RESOLVE_CACHED), EINVAL);
	env_close();
}
END_TEST

/* ---------------------------------------------------------------- without openat2 */

#ifndef CHILD_CHECK /* fixture.h may provide it */
#define CHILD_CHECK(cond, ...)                                         \
	do {                                                           \
		if (!(cond)) {                                         \
			fprintf(stderr, "%s:%d: ", __FILE__, __LINE__); \
			fprintf(stderr, __VA_ARGS__);                  \
			fprintf(stderr, "\n");                         \
			return 1;                                      \
		}                                                      \
	} while (0)
#endif

/* In a child where openat2 is ENOSYS (a kernel before 5.6, or a seccomp
 * profile): the walker does all the resolution, also the final opens. */
static int no_openat2_child(void *arg)
{
	uint64_t m = *(const uint64_t *)arg;
#ifdef SYS_openat2
	const struct sb_rule rules[] = { SB_ALWAYS(SYS_openat2, ENOSYS) };
	CHILD_CHECK(sb_seccomp(rules, 1) == 0, "seccomp: %s", strerror(errno));
	/* The filter is in force: this child has no openat2. */
	errno = 0;
	CHILD_CHECK(syscall(SYS_openat2, AT_FDCWD, ".", NULL, 0) == -1 && errno == ENOSYS,
		    "openat2 still answers: %s", strerror(errno));
#endif
	char *before = fx_tree_snapshot(E.outside);
	CHILD_CHECK(before, "snapshot");
	int fd = safe_mkdir_all_beneath(E.r1fd, "link_dir/n1/n2/n3", 0755, m);
	CHILD_CHECK(fd >= 0, "mkdir_all: %s", strerror(errno));
	CHILD_CHECK(fx_same_object(fd, E.r1fd, "a/n1/n2/n3"), "mkdir_all: wrong directory");
	close(fd);
	errno = 0;
	CHILD_CHECK(safe_mkdir_all_beneath(E.r1fd, "up/new", 0755, m) == -1 &&
			    errno == ((m & SAFE_RESOLVE_IN_ROOT) ? ENOENT : EXDEV),
		    "mkdir_all up/new: %s", strerror(errno));
	errno = 0;
	CHILD_CHECK(safe_mkdir_all_beneath(E.r1fd, "a/missing/../x", 0755, m) == -1 &&
			    errno == ENOENT,
		    "mkdir_all ..: %s", strerror(errno));
	char name[NAME_MAX + 1];
	fd = safe_open_parent_beneath(E.r1fd, "link_dir/b/file", m, name, sizeof(name));
	CHILD_CHECK(fd >= 0 && !strcmp(name, "file"), "open_parent: %s", strerror(errno));
	CHILD_CHECK(fx_same_object(fd, E.r1fd, "a/b"), "open_parent: wrong parent");
	close(fd);
	CHILD_CHECK(safe_mknodat_beneath(E.r1fd, "link_dir/fifo", S_IFIFO | 0600, 0, m) == 0,
		    "mknod: %s", strerror(errno));
	CHILD_CHECK(safe_renameat_beneath(E.r1fd, "a/fifo", E.r2fd, "link_dir/fifo", m) == 0,
		    "rename: %s", strerror(errno));
	CHILD_CHECK(safe_linkat_beneath(E.r2fd, "a/fifo", E.r1fd, "a/fifo2", m) == 0, "link: %s",
		    strerror(errno));
	for (size_t i = 0; i < sizeof(escapes) / sizeof(escapes[0]); i++) {
		int want = (m & SAFE_RESOLVE_IN_ROOT) ? ENOENT : EXDEV;
		errno = 0;
		CHILD_CHECK(safe_renameat_beneath(E.r1fd, escapes[i], E.r2fd, "x", m) == -1 &&
				    errno == want,
			    "rename %s: %s", escapes[i], strerror(errno));
		errno = 0;
		CHILD_CHECK(safe_linkat_beneath(E.r1fd, "file", E.r2fd, escapes[i], m) == -1 &&
				    errno == want,
			    "link to %s: %s", escapes[i], strerror(errno));
	}
	char *after = fx_tree_snapshot(E.outside);
	CHILD_CHECK(after && !strcmp(before, after), "outside changed");
	free(before);
	free(after);
	return 0;
}

static int short_forms_check(void *arg);
#ifdef SYS_openat2
static int short_forms_no_openat2(void *arg)
{
	const struct sb_rule rules[] = { SB_ALWAYS(SYS_openat2, ENOSYS) };
	CHILD_CHECK(sb_seccomp(rules, 1) == 0, "seccomp: %s", strerror(errno));
	return short_forms_check(arg);
}
#endif

START_TEST(without_openat2)
{
	env_open();
	uint64_t m = _i ? SAFE_RESOLVE_IN_ROOT : 0;
	ck_assert_int_eq(sb_run(no_openat2_child, &m), 0);
	env_close();
}
END_TEST

/* ---------------------------------------------------------------- the short forms (issue 32) */

/* safe_openat_beneath() and safe_openat_in_root() take openat()'s arguments
 * and keep its habit of ignoring the mode without O_CREAT/O_TMPFILE, where
 * safe_openat2() keeps openat2()'s EINVAL. Run directly (fast path) and in a
 * child without openat2 (walker): the short forms take no USERSPACE bit. */
static int short_forms_check(void *arg)
{
	(void)arg;
	int fd;
	/* The mode is ignored without O_CREAT/O_TMPFILE, as by openat(). */
	fd = safe_openat_beneath(E.r1fd, "file", O_RDONLY, 0644);
	CHILD_CHECK(fd >= 0, "beneath, mode 0644 without O_CREAT: %s", strerror(errno));
	close(fd);
	fd = safe_openat_in_root(E.r1fd, "/file", O_RDONLY, 0644);
	CHILD_CHECK(fd >= 0, "in_root, mode 0644 without O_CREAT: %s", strerror(errno));
	close(fd);
	/* ... even an invalid one, as openat() ignores it. */
	fd = safe_openat_beneath(E.r1fd, "file", O_RDONLY, 0177777);
	CHILD_CHECK(fd >= 0, "beneath, mode 0177777 without O_CREAT: %s", strerror(errno));
	close(fd);
	/* safe_openat2() keeps openat2()'s rule. */
	struct safe_open_how how = { .flags = O_RDONLY, .mode = 0644,
				     .resolve = SAFE_RESOLVE_BENEATH };
	errno = 0;
	CHILD_CHECK(safe_openat2(E.r1fd, "file", &how, sizeof(how)) == -1 && errno == EINVAL,
		    "openat2 with a mode without O_CREAT: %s", strerror(errno));
	/* With O_CREAT the mode is used, and checked. */
	mode_t old = umask(0);
	fd = safe_openat_beneath(E.r1fd, "a/created", O_WRONLY | O_CREAT | O_EXCL, 0604);
	CHILD_CHECK(fd >= 0, "O_CREAT: %s", strerror(errno));
	close(fd);
	umask(old);
	struct stat st;
	CHILD_CHECK(fstatat(E.r1fd, "a/created", &st, 0) == 0 && (st.st_mode & 07777) == 0604,
		    "O_CREAT mode %o", (unsigned)st.st_mode);
	CHILD_CHECK(unlinkat(E.r1fd, "a/created", 0) == 0, "unlink");
	errno = 0;
	CHILD_CHECK(safe_openat_beneath(E.r1fd, "a/c2", O_WRONLY | O_CREAT, 010644) == -1 &&
			    errno == EINVAL && !exists_at(E.r1fd, "a/c2"),
		    "O_CREAT with a bad mode: %s", strerror(errno));
	errno = 0;
	CHILD_CHECK(safe_openat_in_root(E.r1fd, "a/c2", O_WRONLY | O_CREAT, 010644) == -1 &&
			    errno == EINVAL && !exists_at(E.r1fd, "a/c2"),
		    "in_root O_CREAT with a bad mode: %s", strerror(errno));
	/* IN_ROOT: a URL path names the file; BENEATH refuses it. */
	static const char *const url_paths[] = { "/a/b/file", "a/b/file", "/../a/b/file",
						 "//a/./b/../b/file", "/link_dir/b/file" };
	for (size_t i = 0; i < sizeof(url_paths) / sizeof(url_paths[0]); i++) {
		fd = safe_openat_in_root(E.r1fd, url_paths[i], O_RDONLY, 0);
		CHILD_CHECK(fd >= 0 && fx_same_object(fd, E.r1fd, "a/b/file"), "in_root %s: %s",
			    url_paths[i], strerror(errno));
		close(fd);
	}
	errno = 0;
	CHILD_CHECK(safe_openat_beneath(E.r1fd, "/a/b/file", O_RDONLY, 0) == -1 && errno == EXDEV,
		    "beneath /a/b/file: %s", strerror(errno));
	/* Escapes stay inside: ENOENT under IN_ROOT, EXDEV under BENEATH. */
	for (size_t i = 0; i < sizeof(escapes) / sizeof(escapes[0]); i++) {
		errno = 0;
		CHILD_CHECK(safe_openat_in_root(E.r1fd, escapes[i], O_RDONLY, 0) == -1 &&
				    errno == ENOENT,
			    "in_root %s: %s", escapes[i], strerror(errno));
		errno = 0;
		CHILD_CHECK(safe_openat_beneath(E.r1fd, escapes[i], O_RDONLY, 0) == -1 &&
				    errno == EXDEV,
			    "beneath %s: %s", escapes[i], strerror(errno));
	}
	/* Argument errors, exact. */
	errno = 0;
	CHILD_CHECK(safe_openat_in_root(E.r1fd, NULL, O_RDONLY, 0) == -1 && errno == EFAULT,
		    "NULL: %s", strerror(errno));
	errno = 0;
	CHILD_CHECK(safe_openat_in_root(E.r1fd, "", O_RDONLY, 0) == -1 && errno == ENOENT,
		    "empty: %s", strerror(errno));
	errno = 0;
	CHILD_CHECK(safe_openat_in_root(-1, "file", O_RDONLY, 0) == -1 && errno == EBADF,
		    "bad fd: %s", strerror(errno));
	errno = 0;
	CHILD_CHECK(safe_openat_in_root(E.r1fd, "file", O_PATH | O_RDWR, 0) == -1 &&
			    errno == EINVAL,
		    "O_PATH|O_RDWR: %s", strerror(errno));
	errno = 0;
	CHILD_CHECK(safe_openat_in_root(E.r1fd, "link_file", O_RDONLY | O_NOFOLLOW, 0) == -1 &&
			    errno == ELOOP,
		    "O_NOFOLLOW on a link: %s", strerror(errno));
	return 0;
}

START_TEST(short_forms)
{
	env_open();
	char *before = fx_tree_snapshot(E.outside);
	if (_i == 0) {
		ck_assert_int_eq(short_forms_check(NULL), 0);
	} else {
#ifdef SYS_openat2
		ck_assert_int_eq(sb_run(short_forms_no_openat2, NULL), 0);
#else
		ck_assert_int_eq(short_forms_check(NULL), 0);
#endif
	}
	char *after = fx_tree_snapshot(E.outside);
	ck_assert_str_eq(before, after);
	free(before);
	free(after);
	env_close();
}
END_TEST

/* ---------------------------------------------------------------- one scope default (issue 32) */

/*
 * Every exported function that takes a path resolves with BENEATH when its
 * flags name no scope, except safe_openat2(), which stands in for openat2()
 * (a resolve without scope is an unscoped lookup there: EINVAL here). An
 * absolute path tells the two scopes apart: BENEATH says EXDEV, IN_ROOT
 * finds "/file" in the root. Each row runs with flags 0 (want EXDEV) and
 * with IN_ROOT (want anything but EXDEV), on the fast path and the walker.
 */
typedef int (*scope_fn)(uint64_t f);
static int sc_fstatat(uint64_t f) { struct stat st; return safe_fstatat_beneath(E.r1fd, "/file", &st, f); }
static int sc_statx(uint64_t f) { struct statx sx; return safe_statx_beneath(E.r1fd, "/file", f, STATX_BASIC_STATS, &sx); }
static int sc_opendir(uint64_t f)
{
	DIR *d = safe_opendir_beneath(E.r1fd, "/a", f);
	if (!d)
		return -1;
	closedir(d);
	return 0;
}
static int sc_mkdirat(uint64_t f) { return safe_mkdirat_beneath(E.r1fd, "/sc_dir", 0755, f); }
static int sc_mkdir_all(uint64_t f)
{
	int fd = safe_mkdir_all_beneath(E.r1fd, "/sc_all/x", 0755, f);
	if (fd >= 0)
		close(fd);
	return fd < 0 ? -1 : 0;
}
static int sc_mknodat(uint64_t f) { return safe_mknodat_beneath(E.r1fd, "/sc_fifo", S_IFIFO | 0600, 0, f); }
static int sc_open_parent(uint64_t f)
{
	char name[NAME_MAX + 1];
	int fd = safe_open_parent_beneath(E.r1fd, "/a/x", f, name, sizeof(name));
	if (fd >= 0)
		close(fd);
	return fd < 0 ? -1 : 0;
}
static int sc_unlinkat(uint64_t f) { return safe_unlinkat_beneath(E.r1fd, "/link_file", f); }
static int sc_rmtree(uint64_t f) { return safe_rmtree_beneath(E.r1fd, "/empty", f); }
static int sc_rename(uint64_t f) { return safe_renameat_beneath(E.r1fd, "/a/b/file", E.r2fd, "moved", f); }
static int sc_link(uint64_t f) { return safe_linkat_beneath(E.r1fd, "/file", E.r2fd, "linked", f); }
static int sc_symlink(uint64_t f) { return safe_symlinkat_beneath("t", E.r1fd, "/sc_link", f); }
static int sc_readlink(uint64_t f)
{
	char b[16];
	return safe_readlinkat_beneath(E.r1fd, "/dangling_in", b, sizeof(b), f) < 0 ? -1 : 0;
}
static int sc_chmod(uint64_t f) { return safe_fchmodat_beneath(E.r1fd, "/file", 0644, f); }
static int sc_chown(uint64_t f) { return safe_fchownat_beneath(E.r1fd, "/file", (uid_t)-1, (gid_t)-1, f); }
static int sc_utimens(uint64_t f) { return safe_utimensat_beneath(E.r1fd, "/file", NULL, f); }
static int sc_getxattr(uint64_t f)
{
	char b[8];
	ssize_t n = safe_getxattr_beneath(E.r1fd, "/file", "user.none", b, sizeof(b), f);
	return n < 0 && errno != ENODATA && errno != EOPNOTSUPP ? -1 : 0;
}
static int sc_setxattr(uint64_t f)
{
	int r = safe_setxattr_beneath(E.r1fd, "/file", "user.sc", "v", 1, 0, f);
	return r < 0 && errno != EOPNOTSUPP ? -1 : 0;
}
static int sc_listxattr(uint64_t f)
{
	char b[256];
	ssize_t n = safe_listxattr_beneath(E.r1fd, "/file", b, sizeof(b), f);
	return n < 0 && errno != EOPNOTSUPP ? -1 : 0;
}
static int sc_removexattr(uint64_t f)
{
	int r = safe_removexattr_beneath(E.r1fd, "/file", "user.none", f);
	return r < 0 && errno != ENODATA && errno != EOPNOTSUPP ? -1 : 0;
}
static int sc_realpath(uint64_t f)
{
	char b[PATH_MAX];
	return safe_realpath_beneath(E.r1fd, "/a/b", b, sizeof(b), f) < 0 ? -1 : 0;
}
static int sc_tmpfile_xattr(uint64_t f)
{
	int fd = safe_tmpfile_xattr(E.r1fd, "/sc_tmp", 0644, NULL, 0, f);
	if (fd >= 0)
		close(fd);
	return fd < 0 ? -1 : 0;
}
static int sc_tmpfile_open(uint64_t f)
{
	struct safe_tmpfile *t;
	if (safe_tmpfile_open(E.r1fd, "/sc_tmp2", 0644, f, &t) < 0)
		return -1;
	return safe_tmpfile_discard(t);
}
static int sc_sweep(uint64_t f) { return safe_tmpfile_sweep_beneath(E.r1fd, "/a", 0, f, NULL) < 0 ? -1 : 0; }

static const struct {
	const char *name;
	scope_fn fn;
} scope_rows[] = {
	{ "fstatat", sc_fstatat },     { "statx", sc_statx },
	{ "opendir", sc_opendir },     { "mkdirat", sc_mkdirat },
	{ "mkdir_all", sc_mkdir_all }, { "mknodat", sc_mknodat },
	{ "open_parent", sc_open_parent }, { "unlinkat", sc_unlinkat },
	{ "rmtree", sc_rmtree },       { "renameat", sc_rename },
	{ "linkat", sc_link },         { "symlinkat", sc_symlink },
	{ "readlinkat", sc_readlink }, { "fchmodat", sc_chmod },
	{ "fchownat", sc_chown },      { "utimensat", sc_utimens },
	{ "getxattr", sc_getxattr },   { "setxattr", sc_setxattr },
	{ "listxattr", sc_listxattr }, { "removexattr", sc_removexattr },
	{ "realpath", sc_realpath },   { "tmpfile_xattr", sc_tmpfile_xattr },
	{ "tmpfile_open", sc_tmpfile_open }, { "tmpfile_sweep", sc_sweep },
};

START_TEST(scope_default)
{
	env_open();
	uint64_t m = MODE(_i);
	for (size_t i = 0; i < sizeof(scope_rows) / sizeof(scope_rows[0]); i++) {
		errno = 0;
		int r = scope_rows[i].fn(m);
		ck_assert_msg(r == -1 && errno == EXDEV, "%s, no scope bit: %d %s (want EXDEV)",
			      scope_rows[i].name, r, strerror(errno));
		errno = 0;
		r = scope_rows[i].fn(m | SAFE_RESOLVE_BENEATH);
		ck_assert_msg(r == -1 && errno == EXDEV, "%s, BENEATH: %d %s (want EXDEV)",
			      scope_rows[i].name, r, strerror(errno));
		errno = 0;
		r = scope_rows[i].fn(m | SAFE_RESOLVE_IN_ROOT);
		ck_assert_msg(r == 0, "%s, IN_ROOT: %s (want success)", scope_rows[i].name,
			      strerror(errno));
	}
	/* The short forms say their scope in their name. */
	ck_fails(safe_openat_beneath(E.r1fd, "/file", O_RDONLY, 0), EXDEV);
	int fd = safe_openat_in_root(E.r1fd, "/file", O_RDONLY, 0);
	ck_ok(fd);
	close(fd);
	/* safe_openat2(): no scope bit is EINVAL (openat2's unscoped lookup). */
	struct safe_open_how how = { .flags = O_RDONLY, .mode = 0, .resolve = m };
	ck_fails(safe_openat2(E.r1fd, "file", &how, sizeof(how)), EINVAL);
	how.resolve = m | SAFE_RESOLVE_NO_SYMLINKS;
	ck_fails(safe_openat2(E.r1fd, "file", &how, sizeof(how)), EINVAL);
	env_close();
}
END_TEST

/* ---------------------------------------------------------------- EXDEV: escape or mount crossing */

/* The header's recipe: EXDEV under NO_XDEV, then the same call without it
 * says EXDEV again for an escape and anything else for a mount crossing; for
 * rename/link, both parents resolve (safe_open_parent_beneath) when the EXDEV
 * is the syscall's "different mounts". In a private mount namespace. */
/* Write `text` to a /proc/self file (uid_map, gid_map, setgroups). */
static int write_proc(const char *name, const char *text)
{
	int fd = open(name, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ssize_t n = write(fd, text, strlen(text));
	close(fd);
	return n == (ssize_t)strlen(text) ? 0 : -1;
}

/* A private mount namespace: as root directly, otherwise inside a new user
 * namespace where the caller is root (tmpfs can be mounted there). */
static int enter_mount_ns(void)
{
	if (geteuid() == 0)
		return unshare(CLONE_NEWNS);
	uid_t uid = geteuid();
	gid_t gid = getegid();
	if (unshare(CLONE_NEWUSER | CLONE_NEWNS) < 0)
		return -1;
	char map[64];
	snprintf(map, sizeof(map), "0 %u 1", (unsigned)uid);
	if (write_proc("/proc/self/uid_map", map) < 0)
		return -1;
	(void)write_proc("/proc/self/setgroups", "deny");
	snprintf(map, sizeof(map), "0 %u 1", (unsigned)gid);
	return write_proc("/proc/self/gid_map", map);
}

static int exdev_child(void *arg)
{
	uint64_t m = *(const uint64_t *)arg;
	CHILD_CHECK(enter_mount_ns() == 0, "mount namespace: %s", strerror(errno));
	CHILD_CHECK(mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) == 0, "private");
	CHILD_CHECK(mkdirat(E.r1fd, "mnt", 0755) == 0, "mkdir mnt");
	char p[PATH_MAX];
	int n = snprintf(p, sizeof(p), "%s/mnt", E.r1);
	CHILD_CHECK(n > 0 && (size_t)n < sizeof(p), "path");
	CHILD_CHECK(mount("tmpfs", p, "tmpfs", 0, "size=1m") == 0, "mount: %s", strerror(errno));
	int root = open(E.r1, O_PATH | O_DIRECTORY | O_CLOEXEC);
	CHILD_CHECK(root >= 0, "open root");
	struct safe_open_how how = {
		.flags = O_PATH,
		.resolve = SAFE_RESOLVE_BENEATH | SAFE_RESOLVE_NO_XDEV | m,
	};
	struct safe_open_how plain = how;
	plain.resolve &= ~SAFE_RESOLVE_NO_XDEV;
	/* A mount crossing: EXDEV, then success without NO_XDEV. */
	errno = 0;
	CHILD_CHECK(safe_openat2(root, "mnt", &how, sizeof(how)) == -1 && errno == EXDEV, "mnt");
	int fd = safe_openat2(root, "mnt", &plain, sizeof(plain));
	CHILD_CHECK(fd >= 0, "mnt without NO_XDEV: %s", strerror(errno));
	close(fd);
	/* An escape: EXDEV both times. */
	static const char *const esc[] = { "../outside", "up", "abs", "deep" };
	for (size_t i = 0; i < sizeof(esc) / sizeof(esc[0]); i++) {
		errno = 0;
		CHILD_CHECK(safe_openat2(root, esc[i], &how, sizeof(how)) == -1 && errno == EXDEV,
			    "%s", esc[i]);
		errno = 0;
		CHILD_CHECK(safe_openat2(root, esc[i], &plain, sizeof(plain)) == -1 &&
				    errno == EXDEV,
			    "%s without NO_XDEV", esc[i]);
	}
	/* rename/link: different mounts, both parents resolve. */
	char name[NAME_MAX + 1];
	errno = 0;
	CHILD_CHECK(safe_renameat_beneath(root, "file", root, "mnt/file", m) == -1 && errno == EXDEV,
		    "rename across mounts: %s", strerror(errno));
	errno = 0;
	CHILD_CHECK(safe_linkat_beneath(root, "file", root, "mnt/file", m) == -1 && errno == EXDEV,
		    "link across mounts: %s", strerror(errno));
	int a = safe_open_parent_beneath(root, "file", m, name, sizeof(name));
	int b = safe_open_parent_beneath(root, "mnt/file", m, name, sizeof(name));
	CHILD_CHECK(a >= 0 && b >= 0, "parents across mounts");
	close(a);
	close(b);
	/* rename: an escape, and a parent that does not resolve. */
	errno = 0;
	CHILD_CHECK(safe_renameat_beneath(root, "file", root, "up/file", m) == -1 && errno == EXDEV,
		    "rename escape");
	errno = 0;
	CHILD_CHECK(safe_open_parent_beneath(root, "up/file", m, name, sizeof(name)) == -1 &&
			    errno == EXDEV,
		    "parent of escape");
	close(root);
	return 0;
}

START_TEST(exdev_escape_or_mount)
{
	if (!sb_can_mount()) {
		fx_skip("needs a mount namespace (root or user namespaces)");
	}
	env_open();
	uint64_t m = MODE(_i);
	ck_assert_int_eq(sb_run(exdev_child, &m), 0);
	env_close();
}
END_TEST

/* ---------------------------------------------------------------- report escape */

/*
 * SAFE_RESOLVE_REPORT_ESCAPE under IN_ROOT: a ".." at the root (in the path
 * or in a link body) is EXDEV instead of a no-op; absolute paths and
 * absolute links still start at the root; ".." below the root climbs as
 * usual. Same answers on the default path and the walker (the flag always
 * walks), for safe_openat2() and an operation. Without the flag the same
 * paths stay inside (or are missing), which is what the flag reports.
 */
START_TEST(report_escape)
{
	env_open();
	uint64_t m = MODE(_i);
	static const char *const spec[] = { "l climb ../../file", "l absfile /file",
					    "l rel a/b/../../file", NULL };
	fx_build(E.r1fd, spec);
	static const struct {
		const char *path;
		int err;          /* with the flag: 0 = opens `obj` */
		const char *obj;  /* what it opens (with the flag, or without) */
		int plain_err;    /* without the flag */
	} rows[] = {
		{ "../file", EXDEV, "file", 0 },
		{ "/../file", EXDEV, "file", 0 },
		{ "a/../../file", EXDEV, "file", 0 },
		{ "climb", EXDEV, "file", 0 },
		{ "up_victim", EXDEV, NULL, ENOENT },
		{ "/file", 0, "file", 0 },
		{ "absfile", 0, "file", 0 },
		{ "a/b/../../file", 0, "file", 0 },
		{ "rel", 0, "file", 0 },
		{ "a/..", 0, ".", 0 },
		{ "..", EXDEV, ".", 0 },
		{ "abs_victim", 0, NULL, ENOENT },
	};
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		for (int flag = 0; flag < 2; flag++) {
			struct safe_open_how how = {
				.flags = O_PATH,
				.resolve = SAFE_RESOLVE_IN_ROOT | m |
					   (flag ? SAFE_RESOLVE_REPORT_ESCAPE : 0),
			};
			int want = flag ? rows[i].err : rows[i].plain_err;
			if (flag && !rows[i].err)
				want = rows[i].plain_err;
			errno = 0;
			int fd = safe_openat2(E.r1fd, rows[i].path, &how, sizeof(how));
			if (want) {
				ck_assert_msg(fd < 0 && errno == want, "%s (flag %d): %d %s, want %s",
					      rows[i].path, flag, fd, strerror(errno), strerror(want));
				continue;
			}
			ck_assert_msg(fd >= 0, "%s (flag %d): %s", rows[i].path, flag,
				      strerror(errno));
			ck_assert_msg(fx_same_object(fd, E.r1fd, rows[i].obj), "%s (flag %d): not %s",
				      rows[i].path, flag, rows[i].obj);
			close(fd);
		}
	}
	/* An operation takes the flag too (stat of "../file"). */
	struct stat st;
	ck_assert_int_eq(safe_fstatat_beneath(E.r1fd, "../file", &st,
					      SAFE_RESOLVE_IN_ROOT | SAFE_RESOLVE_REPORT_ESCAPE | m),
			 -1);
	ck_assert_int_eq(errno, EXDEV);
	ck_assert_int_eq(safe_fstatat_beneath(E.r1fd, "../file", &st, SAFE_RESOLVE_IN_ROOT | m), 0);
	/* With BENEATH it changes nothing: such a ".." is EXDEV already. */
	struct safe_open_how b = { .flags = O_PATH,
				   .resolve = SAFE_RESOLVE_BENEATH | SAFE_RESOLVE_REPORT_ESCAPE | m };
	errno = 0;
	ck_assert_int_eq(safe_openat2(E.r1fd, "a/../../file", &b, sizeof(b)), -1);
	ck_assert_int_eq(errno, EXDEV);
	int fd = safe_openat2(E.r1fd, "a/../file", &b, sizeof(b));
	ck_assert_int_ge(fd, 0);
	close(fd);
	env_close();
}
END_TEST

/* ---------------------------------------------------------------- suite */

static Suite *api_suite(void)
{
	Suite *s = suite_create("api");
	TCase *tc = tcase_create("core");
	tcase_set_timeout(tc, 120);
	tcase_add_checked_fixture(tc, fx_fd_setup, fx_fd_teardown);
	tcase_add_loop_test(tc, mkdir_all_creates_and_opens, 0, 4);
	tcase_add_loop_test(tc, mkdir_all_errors_leave_nothing, 0, 4);
	tcase_add_loop_test(tc, mkdir_all_partial_failure, 0, 2);
	tcase_add_loop_test(tc, mkdir_all_concurrent_creators, 0, 2);
	tcase_add_loop_test(tc, mkdir_all_deep, 0, 2);
	tcase_add_loop_test(tc, mknod_cases, 0, 4);
	tcase_add_loop_test(tc, open_parent_cases, 0, 4);
	tcase_add_loop_test(tc, replace_symlink_mknod, 0, 4);
	tcase_add_loop_test(tc, rename_link_two_roots, 0, 4);
	tcase_add_loop_test(tc, rename_link_arguments, 0, 2);
	tcase_add_test(tc, resolve_cached);
	tcase_add_loop_test(tc, scope_default, 0, 2);
	tcase_add_loop_test(tc, report_escape, 0, 2);
	suite_add_tcase(s, tc);

	TCase *sb = tcase_create("sandbox");
	tcase_set_timeout(sb, 120);
	tcase_add_checked_fixture(sb, fx_fd_setup, fx_fd_teardown);
	tcase_add_loop_test(sb, without_openat2, 0, 2);
	tcase_add_loop_test(sb, short_forms, 0, 2);
	tcase_add_loop_test(sb, exdev_escape_or_mount, 0, 2);
	suite_add_tcase(s, sb);

	TCase *race = tcase_create("race");
	tcase_set_timeout(race, 120);
	tcase_add_checked_fixture(race, fx_fd_setup, fx_fd_teardown);
	tcase_add_loop_test(race, mkdir_all_race_planted_symlink, 0, 4);
	tcase_add_loop_test(race, replace_is_atomic, 0, 2);
	suite_add_tcase(s, race);
	return s;
}

FX_MAIN(api_suite)
