/* SPDX-License-Identifier: MIT */
/*
 * Suite "realpath": safe_realpath_beneath() in the environment of the
 * operations suites (ops-env.h): the cases, mount points, failing exactly as
 * safe_openat2(O_PATH) does, an unprivileged caller that cannot search, and
 * attackers exchanging directories.
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

/* realpath while an attacker exchanges two directories: every answer names
 * the object at the time it was verified (one of the two names), or EAGAIN. */
START_TEST(realpath_race_exchange)
{
	env_open();
	uint64_t m = MODE(_i);
	static const char *const spec[] = { "d z", "d z/b", "f z/b/file other", NULL };
	fx_build(E.rootfd, spec);
	struct swapper s = { .dirfd = E.rootfd, .a = "a", .b = "z" };
	pthread_t th;
	ck_assert_int_eq(pthread_create(&th, NULL, swap_thread, &s), 0);
	/* the time, and at least 1000 calls (a slow machine runs longer) */
	double end = fx_now() + (fx_under_valgrind() ? 1.0 : fx_long() ? 0.3 : 0.05);
	long calls = 0, ok = 0;
	char buf[64];
	while (fx_now() < end || (calls < 1000 && !fx_under_valgrind())) {
		errno = 0;
		ssize_t n = safe_realpath_beneath(E.rootfd, "a/b/file", buf, sizeof(buf), m);
		int e = errno;
		calls++;
		if (n < 0) {
			ck_assert_msg(e == EAGAIN || e == ENOENT, "realpath: %s", strerror(e));
			continue;
		}
		ck_assert_msg(!strcmp(buf, "a/b/file") || !strcmp(buf, "z/b/file"), "got %s", buf);
		ck_assert_int_eq(n, 8);
		ok++;
	}
	atomic_store(&s.stop, true);
	pthread_join(th, NULL);
	ck_assert_int_gt(calls, 0);
	ck_assert_int_gt(atomic_load(&s.swaps), 0);
	env_close();
}
END_TEST

/*
 * realpath never reads a directory above its root: "above" holds the root
 * "above/r" and a directory "above/out"; an attacker exchanges r/a (which
 * holds the object, 7 levels down) with "out" over and over, so the object
 * keeps leaving the root. A climb that followed the kernel's ".." from there
 * (the method before the walker's own path) reached "above" and could list
 * it to find a name; inotify on "above"
 * (IN_ACCESS: getdents; IN_OPEN: an open for reading or listing, which
 * O_PATH is not) reports any such access to the directory itself.
 */
START_TEST(realpath_never_reads_above_root)
{
	env_open();
	uint64_t m = MODE(_i);
	static const char *const spec[] = { "d above", "d above/r", "d above/out", "d above/out/x",
					    "d above/r/a", NULL };
	fx_build(E.rootfd, spec);
	int afd = openat(E.rootfd, "above", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	ck_assert_int_ge(afd, 0);
	int rfd = openat(afd, "r", O_PATH | O_DIRECTORY | O_CLOEXEC);
	ck_assert_int_ge(rfd, 0);
	static const char obj[] = "a/b/c/d/e/f/g";
	for (size_t i = 1; i < sizeof(obj); i++) {
		if (obj[i] == '/' || obj[i] == '\0') {
			char part[sizeof(obj)];
			memcpy(part, obj, i);
			part[i] = '\0';
			ck_assert(mkdirat(rfd, part, 0755) == 0 || errno == EEXIST);
		}
	}
	char above[PATH_MAX];
	pj(above, E.root, "above");
	int ifd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	ck_assert_int_ge(ifd, 0);
	int wd = inotify_add_watch(ifd, above, IN_ACCESS | IN_OPEN | IN_ONLYDIR);
	ck_assert_int_ge(wd, 0);

	struct swapper s = { .dirfd = afd, .a = "r/a", .b = "out" };
	pthread_t th;
	ck_assert_int_eq(pthread_create(&th, NULL, swap_thread, &s), 0);
	while (atomic_load(&s.swaps) == 0) /* the attacker is running */
		sched_yield();
	double end = fx_now() + (fx_under_valgrind() ? 1.0 : fx_long() ? 0.5 : 0.1);
	long calls = 0, ok = 0, reads = 0;
	char buf[64];
	union {
		struct inotify_event ev;
		char b[4096];
	} ev;
	/* Until the attacker has disturbed a call too (a loaded machine may
	 * schedule it rarely), bounded: 10 s more at most. */
	long swaps0 = atomic_load(&s.swaps);
	while (fx_now() < end || (calls < 500 && !fx_under_valgrind()) ||
	       (ok == calls && fx_now() < end + 10)) {
		errno = 0;
		ssize_t n = safe_realpath_beneath(rfd, obj, buf, sizeof(buf), m);
		int e = errno;
		calls++;
		/* EXDEV: openat2's final check saw the object outside the root
		 * (it moved during the resolution). */
		if (n < 0)
			ck_assert_msg(e == EAGAIN || e == ENOENT || e == EXDEV, "realpath: %s",
				      strerror(e));
		else
			ck_assert_msg(!strcmp(buf, obj), "got %s", buf);
		ok += n >= 0;
		ssize_t got;
		while ((got = read(ifd, ev.b, sizeof(ev.b))) > 0) {
			for (ssize_t off = 0; off < got;) {
				struct inotify_event *x = (struct inotify_event *)(void *)(ev.b + off);
				off += (ssize_t)(sizeof(*x) + x->len);
				if (x->wd == wd && x->len == 0 && (x->mask & (IN_ACCESS | IN_OPEN)))
					reads++; /* "above" itself, not an entry of it */
			}
		}
		if (reads)
			break;
	}
	atomic_store(&s.stop, true);
	pthread_join(th, NULL);
	ck_assert_msg(reads == 0, "realpath opened or listed the directory above its root (%ld "
		      "events in %ld calls)", reads, calls);
	ck_assert_int_gt(atomic_load(&s.swaps), 0);
	long swaps = atomic_load(&s.swaps) - swaps0;
	close(ifd);
	close(rfd);
	close(afd);
	env_close();
	/* Undisturbed calls under a real attack: realpath did not see it. */
	ck_assert_msg(ok < calls || swaps < 100,
		      "%ld swaps during %ld calls and none disturbed one", swaps, calls);
	if (ok == calls)
		fx_skip("attacker starved: %ld swaps during %ld calls", swaps, calls);
}
END_TEST


/* ---------------------------------------------------------------- realpath */

static void ck_realpath(uint64_t flags, const char *path, const char *want)
{
	char buf[PATH_MAX];
	memset(buf, 'X', sizeof(buf));
	ssize_t n = safe_realpath_beneath(E.rootfd, path, buf, sizeof(buf), flags);
	ck_assert_msg(n >= 0, "realpath(%s): %s", path, strerror(errno));
	ck_assert_msg(!strcmp(buf, want), "realpath(%s) = '%s', want '%s'", path, buf, want);
	ck_assert_int_eq(n, (ssize_t)strlen(want));
}

/* The refusals, run by run_refusals() (tests/lib/ops-env.c) in realpath_cases:
 * buffer sizes, the resolution's own errors, and the error order: an
 * absolute path under BENEATH is EXDEV, an empty path ENOENT, before the
 * dirfd is looked at (BADFD: a number that is not open); IN_ROOT looks at it. */
#define BADFD 1000000
#define ROOTFD (-2) /* E.rootfd */
static const struct realpath_row {
	const char *name;
	int dirfd;
	const char *path;
	size_t size;
	uint64_t flags;
	int err;
} realpath_refusals[] = {
	{ "one byte short", ROOTFD, "link_dir/b/file", 8, 0, ERANGE },
	{ "\".\" in 1 byte", ROOTFD, ".", 1, 0, ERANGE },
	{ "size 0", ROOTFD, "a", 0, 0, ERANGE },
	{ "a link under NO_SYMLINKS", ROOTFD, "chain", 16, SAFE_RESOLVE_NO_SYMLINKS, ELOOP },
	{ "\"..\" escapes", ROOTFD, "..", 16, 0, EXDEV },
	{ "a dangling link", ROOTFD, "dangling_in", 16, 0, ENOENT },
	{ "absolute under BENEATH, bad dirfd", BADFD, "/n", 64, 0, EXDEV },
	{ "absolute with dots, bad dirfd", BADFD, "/./a/f/..x/", 64, 0, EXDEV },
	{ "empty, bad dirfd", BADFD, "", 64, 0, ENOENT },
	{ "empty, dirfd -1, IN_ROOT", -1, "", 64, SAFE_RESOLVE_IN_ROOT, ENOENT },
	{ "absolute under IN_ROOT, bad dirfd", BADFD, "/n", 64, SAFE_RESOLVE_IN_ROOT, EBADF },
	{ "relative, bad dirfd", BADFD, "a", 64, 0, EBADF },
};

static void realpath_try(size_t k, uint64_t m, struct refusal_try *t)
{
	const struct realpath_row *r = &realpath_refusals[k];
	char buf[64];
	ck_assert_uint_le(r->size, sizeof(buf));
	ssize_t n = safe_realpath_beneath(r->dirfd == ROOTFD ? E.rootfd : r->dirfd, r->path, buf,
					  r->size, m | r->flags);
	t->e = n < 0 ? errno : 0;
	t->want = r->err;
	snprintf(t->name, sizeof(t->name), "realpath row \"%s\" (%s, size %zu)", r->name, r->path,
		 r->size);
}

START_TEST(realpath_cases)
{
	env_open();
	uint64_t m = MODE(_i);
	ck_realpath(m, "a/b/file", "a/b/file");
	ck_realpath(m, "link_dir/b/../b/./file", "a/b/file");
	ck_realpath(m, ".", ".");
	ck_realpath(m, "a/..", ".");
	ck_realpath(m, "link_dir", "a");
	ck_realpath(m, "link_dir/", "a");
	ck_realpath(m, "chain", "file");
	ck_realpath(m, "a/b/rel", "file");
	ck_realpath(m, "a//b/", "a/b");
	ck_realpath(m, "fifo", "fifo");
	ck_realpath(m | SAFE_RESOLVE_IN_ROOT, "/a/b", "a/b");
	ck_realpath(m | SAFE_RESOLVE_IN_ROOT, "../../a/../link_dir/b", "a/b");
	ck_realpath(m | SAFE_RESOLVE_IN_ROOT, "/", ".");
	ck_assert_int_eq(symlinkat("/a/b/file", E.rootfd, "a/rootabs"), 0);
	ck_realpath(m | SAFE_RESOLVE_IN_ROOT, "link_dir/rootabs", "a/b/file");
	ck_assert_int_eq(linkat(E.rootfd, "file", E.rootfd, "a/hard", 0), 0);
	ck_realpath(m, "a/hard", "a/hard");
	ck_realpath(m, "file", "file");
	/* Buffer sizes: exact fit, one short. */
	char buf[16];
	ck_assert_int_eq(safe_realpath_beneath(E.rootfd, "link_dir/b/file", buf, 9, m), 8);
	ck_assert_str_eq(buf, "a/b/file");
	run_refusals(E.base, N_ROWS(realpath_refusals), m, realpath_try);
	/* A root that is not the top of the filesystem tree's mount. */
	int sub = openat(E.rootfd, "a", O_PATH | O_DIRECTORY | O_CLOEXEC);
	ck_assert_int_ge(sub, 0);
	ck_assert_int_eq(safe_realpath_beneath(sub, "../a/b", buf, sizeof(buf),
					       m | SAFE_RESOLVE_IN_ROOT),
			 -1);
	ck_assert_int_eq(errno, ENOENT);
	ck_assert_int_eq(safe_realpath_beneath(sub, "b/rel", buf, sizeof(buf), m), -1);
	ck_assert_int_eq(errno, EXDEV);
	ck_assert_int_eq(safe_realpath_beneath(sub, "b/../b", buf, sizeof(buf), m), 1);
	ck_assert_str_eq(buf, "b");
	close(sub);
	env_close();
}
END_TEST

/* Mount points on the way up: their d_ino is not the mounted root's. */
static int realpath_mount_child(void *arg)
{
	uint64_t m = *(uint64_t *)arg;
	CHILD_CHECK(fx_enter_mount_ns() == 0);
	CHILD_CHECK(mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) == 0);
	char p[PATH_MAX];
	pj(p, E.root, "a/b");
	CHILD_CHECK(mount("tmpfs", p, "tmpfs", 0, "size=1m") == 0);
	int root = open(E.root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	CHILD_CHECK(root >= 0);
	CHILD_CHECK(mkdirat(root, "a/b/in", 0755) == 0);
	char buf[64];
	CHILD_CHECK(safe_realpath_beneath(root, "link_dir/b/in", buf, sizeof(buf), m) == 6);
	CHILD_CHECK(!strcmp(buf, "a/b/in"));
	CHILD_CHECK(safe_realpath_beneath(root, "a/b", buf, sizeof(buf), m) == 3);
	CHILD_CHECK(!strcmp(buf, "a/b"));
	close(root);
	return 0;
}

START_TEST(realpath_mounts)
{
	env_open();
	uint64_t m = MODE(_i);
	ck_assert_int_eq(sb_run(realpath_mount_child, &m), 0);
	env_close();
}
END_TEST


/* ---------------------------------------------------------------- realpath fails as open does */

/* safe_realpath_beneath() succeeds exactly when safe_openat2(O_PATH) does,
 * with its errno, and names the object it opens. */
static void ck_realpath_like_open(int dirfd, const char *path, uint64_t flags)
{
	struct safe_open_how how = { .flags = O_PATH | O_CLOEXEC, .resolve = flags };
	char buf[PATH_MAX];
	errno = 0;
	int fd = safe_openat2(dirfd, path, &how, sizeof(how));
	int oe = errno;
	errno = 0;
	ssize_t n = safe_realpath_beneath(dirfd, path, buf, sizeof(buf), flags);
	int re = errno;
	if (fd < 0) {
		ck_assert_msg(n == -1 && re == oe, "realpath(%d, '%s', %#llx): %zd %s; open: %s",
			      dirfd, path, (unsigned long long)flags, n, strerror(re),
			      strerror(oe));
		return;
	}
	ck_assert_msg(n >= 0, "realpath(%d, '%s'): %s; open succeeds", dirfd, path, strerror(re));
	struct stat a, b;
	ck_assert_int_eq(fstat(fd, &a), 0);
	ck_assert_int_eq(fstatat(dirfd, buf, &b, AT_SYMLINK_NOFOLLOW), 0);
	ck_assert_msg(a.st_dev == b.st_dev && a.st_ino == b.st_ino, "realpath(%s) = %s", path,
		      buf);
	close(fd);
}

START_TEST(realpath_error_order)
{
	env_open();
	uint64_t m = MODE(_i);
	/* The error order before the dirfd is looked at: realpath_refusals. */
	int filefd = openat(E.rootfd, "file", O_PATH | O_CLOEXEC);
	ck_assert_int_ge(filefd, 0);
	static const char *const paths[] = {
		"", "/", "/n", "/a", ".", "..", "a", "a/b/file", "file/", "file/..", "nonexist",
		"nonexist/..", "link_dir/b", "chain", "up", "abs", "dangling_in", "a/b/rel", "fifo",
		"a//b/../../a", "..x",
	};
	int fds[] = { E.rootfd, 1000000, -1, filefd, AT_FDCWD };
	char cwd[PATH_MAX];
	ck_assert_ptr_nonnull(getcwd(cwd, sizeof(cwd)));
	ck_assert_int_eq(fchdir(E.rootfd), 0);
	for (size_t d = 0; d < sizeof(fds) / sizeof(fds[0]); d++)
		for (size_t k = 0; k < sizeof(paths) / sizeof(paths[0]); k++)
			for (int s = 0; s < 2; s++)
				ck_realpath_like_open(fds[d], paths[k],
						      m | (s ? SAFE_RESOLVE_IN_ROOT
							     : SAFE_RESOLVE_BENEATH));
	ck_assert_int_eq(chdir(cwd), 0);
	close(filefd);
	env_close();
}
END_TEST

/* Unprivileged: directories that can be searched but not read (or not even
 * searched, as the object): the name is the path the resolution took, so it
 * needs no read permission and no procfs (the climbing method needed one or
 * the other). */
static int realpath_unpriv_child(void *arg)
{
	uint64_t m = *(uint64_t *)arg;
	bool noproc = m & 2;
	m &= SAFE_RESOLVE_USERSPACE;
	static const char *const spec[] = {
		"d c", "d b", "d b/y", "f b/y/ab x", "d b/y/z", "f b/y/z/f x", "d n", "d n/m",
		"d n/k", "l lk b/y/ab", "l ly b/y/z", NULL,
	};
	fx_build(E.rootfd, spec);
	CHILD_CHECK(fchmodat(E.rootfd, "c", 0000, 0) == 0);
	CHILD_CHECK(fchmodat(E.rootfd, "b/y", 0751, 0) == 0);
	CHILD_CHECK(fchmodat(E.rootfd, "n", 0311, 0) == 0);
	CHILD_CHECK(fchmodat(E.rootfd, "n/m", 0000, 0) == 0);
	if (noproc) {
		CHILD_CHECK(fx_enter_mount_ns() == 0);
		CHILD_CHECK(mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) == 0);
		CHILD_CHECK(mount("tmpfs", "/proc", "tmpfs", 0, "size=1m") == 0);
	}
	CHILD_CHECK(sb_drop_privileges() == 0);
	/* climbs: every directory from the object up is searchable and every
	 * one above it readable (the old climbing method needed that, or a
	 * procfs; the walker's path needs neither, and every case succeeds). */
	static const struct {
		const char *path, *want;
		bool climbs;
	} cases[] = {
		{ "c", "c", false },		  { "n/m", "n/m", false },
		{ "b/y/z", "b/y/z", false },	  { "./b/y/z/f", "b/y/z/f", false },
		{ "ly/", "b/y/z", false },	  { "ly/../z/./f", "b/y/z/f", false },
		{ "./b/y/ab", "b/y/ab", true },	  { "b/y", "b/y", true },
		{ "n/k/../k", "n/k", false },	  { "n", "n", true },
		{ "lk", "b/y/ab", true },
	};
	for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
		char buf[64];
		errno = 0;
		ssize_t n = safe_realpath_beneath(E.rootfd, cases[k].path, buf, sizeof(buf), m);
		int e = errno;
		/* Reachable by openat2 (O_PATH needs search permission only). */
		struct safe_open_how how = { .flags = O_PATH | O_CLOEXEC,
					     .resolve = m | SAFE_RESOLVE_BENEATH };
		int fd = safe_openat2(E.rootfd, cases[k].path, &how, sizeof(how));
		if (fd < 0) {
			fprintf(stderr, "open(%s): %s\n", cases[k].path, strerror(errno));
			return 1;
		}
		close(fd);
		/* The name is the path the resolution took: nothing but what the
		 * open needs (search permission), with or without a procfs. */
		if (n != (ssize_t)strlen(cases[k].want) || strcmp(buf, cases[k].want)) {
			fprintf(stderr, "realpath(%s) = %zd '%s' (%s), want '%s'\n", cases[k].path,
				n, n >= 0 ? buf : "", strerror(e), cases[k].want);
			return 1;
		}
	}
	if (!noproc) {
		/* ERANGE still means too small; resolver errors stay its own. */
		char small[4];
		errno = 0;
		CHILD_CHECK(safe_realpath_beneath(E.rootfd, "b/y/z/f", small, sizeof(small), m) == -1 &&
		   errno == ERANGE);
		errno = 0;
		CHILD_CHECK(safe_realpath_beneath(E.rootfd, "c/x", small, sizeof(small), m) == -1 &&
		   errno == EACCES);
	}
	return 0;
}

START_TEST(realpath_unprivileged)
{
	FX_REQUIRE_ROOT("the tree must belong to another user than the resolving uid 65534 "
			"(as its owner, the modes it sets would not stop the climb)");
	env_open();
	uint64_t m = MODE(_i) | (uint64_t)(_i & 2);
	ck_assert_int_eq(sb_run(realpath_unpriv_child, &m), 0);
	env_close();
}
END_TEST


/* ---------------------------------------------------------------- suite */

static Suite *realpath_suite(void)
{
	Suite *s = suite_create("realpath");
	TCase *tc = tcase_create("core");
	tcase_set_timeout(tc, 120);
	tcase_add_checked_fixture(tc, fx_fd_setup, fx_fd_teardown);
	tcase_add_loop_test(tc, realpath_cases, 0, 2);
	tcase_add_loop_test(tc, realpath_error_order, 0, 2);
	suite_add_tcase(s, tc);

	TCase *sb = tcase_create("sandbox");
	tcase_set_timeout(sb, 120);
	tcase_add_checked_fixture(sb, fx_fd_setup, fx_fd_teardown);
	tcase_add_loop_test(sb, realpath_mounts, 0, 2);
	tcase_add_loop_test(sb, realpath_unprivileged, 0, 4);
	suite_add_tcase(s, sb);

	TCase *race = tcase_create("race");
	tcase_set_timeout(race, 120);
	tcase_add_checked_fixture(race, fx_fd_setup, fx_fd_teardown);
	tcase_add_loop_test(race, realpath_race_exchange, 0, 2);
	tcase_add_loop_test(race, realpath_never_reads_above_root, 0, 2);
	suite_add_tcase(s, race);
	return s;
}

FX_MAIN(realpath_suite)
