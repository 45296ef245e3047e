/* SPDX-License-Identifier: MIT */
/*
 * Suite "ops_attr": the operations on a file's attributes beneath a root
 * (chmod, chown, utimens, the xattr calls) and reopen, in the environment
 * of the operations suites (ops-env.h: a fresh "root" holding an adversarial
 * tree and an "outside" that must never be touched). Loop tests run each
 * case with the openat2 fast path (i = 0) and with SAFE_RESOLVE_USERSPACE
 * (i = 1).
 *
 * Helpers that run in forked sandbox children return 0 or 1 (with a message
 * on stderr) instead of calling ck_assert.
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

/* ---------------------------------------------------------------- chmod, chown, utimens */

START_TEST(attribute_cases)
{
	env_open();
	uint64_t m = MODE(_i);
	struct stat st;
	ck_assert_int_eq(safe_fchmodat_beneath(E.rootfd, "link_dir/b/file", 0640, m), 0);
	ck_assert_int_eq(lmode(E.rootfd, "a/b/file"), S_IFREG | 0640);
	ck_fails(safe_fchmodat_beneath(E.rootfd, "chain", 0600, m), EOPNOTSUPP);
	ck_assert_int_eq(safe_fchmodat_beneath(E.rootfd, "chain", 0604, m | SAFE_FOLLOW), 0);
	ck_assert_int_eq(lmode(E.rootfd, "file"), S_IFREG | 0604);
	ck_assert_int_eq(safe_fchmodat_beneath(E.rootfd, "a/", 0711, m), 0);
	ck_assert_int_eq(lmode(E.rootfd, "a"), S_IFDIR | 0711);
	ck_assert_int_eq(safe_fchmodat_beneath(E.rootfd, "a/b/..", 0755, m), 0);
	ck_assert_int_eq(lmode(E.rootfd, "a"), S_IFDIR | 0755);

	if (fx_started_as_root()) {
	ck_assert_int_eq(safe_fchownat_beneath(E.rootfd, "chain", 123, 456, m), 0);
	ck_assert_int_eq(fstatat(E.rootfd, "chain", &st, AT_SYMLINK_NOFOLLOW), 0);
	ck_assert(st.st_uid == 123 && st.st_gid == 456);
	ck_assert_int_eq(fstatat(E.rootfd, "file", &st, AT_SYMLINK_NOFOLLOW), 0);
	ck_assert(st.st_uid == 0);
	ck_assert_int_eq(safe_fchownat_beneath(E.rootfd, "chain", 77, (gid_t)-1, m | SAFE_FOLLOW),
			 0);
	ck_assert_int_eq(fstatat(E.rootfd, "file", &st, AT_SYMLINK_NOFOLLOW), 0);
	ck_assert(st.st_uid == 77 && st.st_gid == 0);
	} else {
		/* Not root: giving a file away is refused (the kernel's EPERM
		 * comes through), and chown to oneself reaches the right object. */
		uid_t me = geteuid();
		gid_t mygid = getegid();
		ck_fails(safe_fchownat_beneath(E.rootfd, "chain", 123, 456, m), EPERM);
		ck_fails(safe_fchownat_beneath(E.rootfd, "chain", 77, (gid_t)-1, m | SAFE_FOLLOW),
			 EPERM);
		ck_assert_int_eq(safe_fchownat_beneath(E.rootfd, "chain", me, mygid, m), 0);
		ck_assert_int_eq(safe_fchownat_beneath(E.rootfd, "chain", me, (gid_t)-1,
						       m | SAFE_FOLLOW),
				 0);
		ck_assert_int_eq(fstatat(E.rootfd, "file", &st, AT_SYMLINK_NOFOLLOW), 0);
		ck_assert(st.st_uid == me && st.st_gid == mygid);
	}

	struct timespec ts[2] = { { 1000, 1 }, { 2000, 2 } };
	ck_assert_int_eq(safe_utimensat_beneath(E.rootfd, "chain", ts, m), 0);
	ck_assert_int_eq(fstatat(E.rootfd, "chain", &st, AT_SYMLINK_NOFOLLOW), 0);
	ck_assert(st.st_mtim.tv_sec == 2000 && st.st_mtim.tv_nsec == 2);
	ck_assert_int_eq(fstatat(E.rootfd, "file", &st, AT_SYMLINK_NOFOLLOW), 0);
	ck_assert(st.st_mtim.tv_sec != 2000);
	ck_assert_int_eq(safe_utimensat_beneath(E.rootfd, "chain", ts, m | SAFE_FOLLOW), 0);
	ck_assert_int_eq(fstatat(E.rootfd, "file", &st, AT_SYMLINK_NOFOLLOW), 0);
	ck_assert(st.st_mtim.tv_sec == 2000 && st.st_atim.tv_sec == 1000);
	struct timespec bad[2] = { { 0, 2000000000L }, { 0, 0 } };
	ck_fails(safe_utimensat_beneath(E.rootfd, "file", bad, m), EINVAL);
	ck_fails(safe_utimensat_beneath(E.rootfd, "file", bad, m | SAFE_FOLLOW), EINVAL);
	env_close();
}
END_TEST

/* Old kernels: no fchmodat2 (6.6), no *xattrat (6.13): the procfs routes. */
static int fallback_child(void *arg)
{
	uint64_t m = *(uint64_t *)arg;
	struct sb_rule rules[] = {
		SB_ALWAYS(452, ENOSYS), SB_ALWAYS(463, ENOSYS), SB_ALWAYS(464, ENOSYS),
		SB_ALWAYS(465, ENOSYS), SB_ALWAYS(466, ENOSYS),
	};
	CHILD_CHECK(sb_seccomp(rules, 5) == 0);
	struct stat st;
	CHILD_CHECK(safe_fchmodat_beneath(E.rootfd, "a/b/file", 0601, m) == 0);
	CHILD_CHECK(fstatat(E.rootfd, "a/b/file", &st, 0) == 0 && (st.st_mode & 07777) == 0601);
	errno = 0;
	CHILD_CHECK(safe_fchmodat_beneath(E.rootfd, "chain", 0600, m) == -1 && errno == EOPNOTSUPP);
	CHILD_CHECK(safe_fchmodat_beneath(E.rootfd, "chain", 0602, m | SAFE_FOLLOW) == 0);
	CHILD_CHECK(fstatat(E.rootfd, "file", &st, 0) == 0 && (st.st_mode & 07777) == 0602);
	errno = 0;
	CHILD_CHECK(safe_fchmodat_beneath(E.rootfd, "up/victim", 0600, m) == -1 && errno == EXDEV);

	char v[32];
	CHILD_CHECK(safe_setxattr_beneath(E.rootfd, "file", "user.k", "val", 3, 0, m) == 0);
	CHILD_CHECK(safe_getxattr_beneath(E.rootfd, "chain", "user.k", v, sizeof(v), m | SAFE_FOLLOW) == 3);
	CHILD_CHECK(!memcmp(v, "val", 3));
	CHILD_CHECK(getxattr(E.outside, "user.k", v, sizeof(v)) < 0);
	/* On the link itself: trusted.* (root) lands on the link, not the file. */
	if (fx_started_as_root()) {
	CHILD_CHECK(safe_setxattr_beneath(E.rootfd, "chain", "trusted.k", "L", 1, 0, m) == 0);
	char p[PATH_MAX];
	pj(p, E.root, "chain");
	CHILD_CHECK(lgetxattr(p, "trusted.k", v, sizeof(v)) == 1);
	pj(p, E.root, "file");
	CHILD_CHECK(getxattr(p, "trusted.k", v, sizeof(v)) < 0 && errno == ENODATA);
	} else {
		/* Not root: the kernel's EPERM comes through the fallback. */
		errno = 0;
		CHILD_CHECK(safe_setxattr_beneath(E.rootfd, "chain", "trusted.k", "L", 1, 0, m) == -1 &&
		   errno == EPERM);
	}
	ssize_t n = safe_listxattr_beneath(E.rootfd, "file", v, sizeof(v), m);
	CHILD_CHECK(n == 7 && !memcmp(v, "user.k", 7));
	CHILD_CHECK(safe_removexattr_beneath(E.rootfd, "link_file", "user.k", m | SAFE_FOLLOW) == 0);
	errno = 0;
	CHILD_CHECK(safe_getxattr_beneath(E.rootfd, "file", "user.k", v, sizeof(v), m) == -1 &&
	   errno == ENODATA);
	errno = 0;
	CHILD_CHECK(safe_getxattr_beneath(E.rootfd, "link_up_victim", "user.k", v, sizeof(v),
				 m | SAFE_FOLLOW) == -1 &&
	   errno == EXDEV);
	return 0;
}

/* Cases that store user xattrs in the tree: SKIP where it has none. */
static void env_open_xattrs(void)
{
	env_open();
	if (!fx_user_xattrs(E.rootfd)) {
		env_close();
		fx_skip(FX_NO_USER_XATTRS);
	}
}

START_TEST(attributes_old_kernel)
{
	env_open_xattrs();
	uint64_t m = MODE(_i);
	ck_assert_int_eq(sb_run(fallback_child, &m), 0);
	env_close();
}
END_TEST

START_TEST(xattr_cases)
{
	env_open_xattrs();
	uint64_t m = MODE(_i);
	char v[64];
	ck_assert_int_eq(safe_setxattr_beneath(E.rootfd, "link_dir/b/file", "user.a", "1234", 4,
					       XATTR_CREATE, m),
			 0);
	ck_fails(safe_setxattr_beneath(E.rootfd, "a/b/file", "user.a", "x", 1, XATTR_CREATE, m),
		 EEXIST);
	ck_fails(safe_setxattr_beneath(E.rootfd, "a/b/file", "user.b", "x", 1, XATTR_REPLACE, m),
		 ENODATA);
	ck_assert_int_eq(safe_getxattr_beneath(E.rootfd, "a/b/file", "user.a", v, sizeof(v), m), 4);
	ck_assert(!memcmp(v, "1234", 4));
	ck_assert_int_eq(safe_getxattr_beneath(E.rootfd, "a/b/file", "user.a", NULL, 0, m), 4);
	ck_fails(safe_getxattr_beneath(E.rootfd, "a/b/file", "user.a", v, 2, m), ERANGE);
	ck_fails(safe_getxattr_beneath(E.rootfd, "a/b/file", "user.zz", v, sizeof(v), m), ENODATA);
	/* A symlink: user.* is not allowed on the link itself; FOLLOW reaches the file. */
	ck_fails(safe_setxattr_beneath(E.rootfd, "a/b/rel", "user.a", "x", 1, 0, m), EPERM);
	ck_assert_int_eq(safe_setxattr_beneath(E.rootfd, "a/b/rel", "user.c", "zz", 2, 0,
					       m | SAFE_FOLLOW),
			 0);
	ck_assert_int_eq(safe_getxattr_beneath(E.rootfd, "file", "user.c", v, sizeof(v), m), 2);
	if (fx_started_as_root()) {
	ck_assert_int_eq(safe_setxattr_beneath(E.rootfd, "chain", "trusted.t", "T", 1, 0, m), 0);
	ck_assert_int_eq(safe_getxattr_beneath(E.rootfd, "chain", "trusted.t", v, sizeof(v), m), 1);
	ck_fails(safe_getxattr_beneath(E.rootfd, "chain", "trusted.t", v, sizeof(v),
				       m | SAFE_FOLLOW),
		 ENODATA);
	} else {
		/* trusted.* needs CAP_SYS_ADMIN: the kernel's EPERM comes through. */
		ck_fails(safe_setxattr_beneath(E.rootfd, "chain", "trusted.t", "T", 1, 0, m), EPERM);
		ck_fails(safe_getxattr_beneath(E.rootfd, "chain", "trusted.t", v, sizeof(v), m),
			 ENODATA);
	}
	ssize_t n = safe_listxattr_beneath(E.rootfd, "a/b/file", v, sizeof(v), m);
	ck_assert_int_eq(n, 7);
	ck_assert_int_eq(safe_listxattr_beneath(E.rootfd, "a/b/file", NULL, 0, m), 7);
	ck_fails(safe_listxattr_beneath(E.rootfd, "a/b/file", v, 3, m), ERANGE);
	/* Directories through ".", "..", trailing slashes. */
	ck_assert_int_eq(safe_setxattr_beneath(E.rootfd, "a/b/..", "user.d", "d", 1, 0, m), 0);
	ck_assert_int_eq(safe_getxattr_beneath(E.rootfd, "link_dir/", "user.d", v, sizeof(v), m),
			 1);
	ck_assert_int_eq(safe_removexattr_beneath(E.rootfd, "a/.", "user.d", m), 0);
	ck_fails(safe_removexattr_beneath(E.rootfd, "a", "user.d", m), ENODATA);
	ck_assert_int_eq(safe_removexattr_beneath(E.rootfd, "a/b/file", "user.a", m), 0);
	ck_fails(safe_getxattr_beneath(E.rootfd, "a/b/file", "user.a", v, sizeof(v), m), ENODATA);
	env_close();
}
END_TEST

/* ---------------------------------------------------------------- reopen */

/* safe_reopen() refusals as named rows, of an O_PATH descriptor of a
 * regular file (reopen_fd) unless the row names another descriptor. */
enum reopen_fd_kind { REOPEN_PATH_FD, REOPEN_MINUS_ONE, REOPEN_UNUSED };
struct reopen_row {
	const char *name;
	enum reopen_fd_kind fd;
	int flags;
	int err;
};

static const struct reopen_row reopen_refusals[] = {
	{ "O_DIRECTORY on a file", REOPEN_PATH_FD, O_RDONLY | O_DIRECTORY, ENOTDIR },
	{ "O_CREAT", REOPEN_PATH_FD, O_RDWR | O_CREAT, EINVAL },
	{ "O_EXCL", REOPEN_PATH_FD, O_RDWR | O_EXCL, EINVAL },
	{ "O_TMPFILE", REOPEN_PATH_FD, O_TMPFILE | O_RDWR, EINVAL },
	{ "an access mode of 3", REOPEN_PATH_FD, O_ACCMODE, EINVAL },
	{ "O_PATH with an access mode", REOPEN_PATH_FD, O_PATH | O_RDWR, EINVAL },
	{ "descriptor -1", REOPEN_MINUS_ONE, O_RDONLY, EBADF },
	{ "a descriptor not open", REOPEN_UNUSED, O_RDONLY, EBADF },
};

static int reopen_fd;

static void reopen_try(size_t k, uint64_t m, struct refusal_try *t)
{
	(void)m;
	const struct reopen_row *r = &reopen_refusals[k];
	int fd = r->fd == REOPEN_PATH_FD ? reopen_fd : r->fd == REOPEN_MINUS_ONE ? -1 : FX_MAX_FD - 1;
	int rfd = safe_reopen(fd, r->flags);
	t->e = rfd < 0 ? errno : 0;
	if (rfd >= 0)
		close(rfd);
	t->want = r->err;
	snprintf(t->name, sizeof(t->name), "reopen row \"%s\" (%#o)", r->name, (unsigned)r->flags);
}

START_TEST(reopen_cases)
{
	env_open();
	struct safe_open_how how = {
		.flags = O_PATH, .resolve = SAFE_RESOLVE_BENEATH | MODE(_i),
	};
	int p = safe_openat2(E.rootfd, "link_dir/b/file", &how, sizeof(how));
	ck_assert_int_ge(p, 0);
	int fd = safe_reopen(p, O_RDONLY);
	ck_assert_int_ge(fd, 0);
	char buf[16] = { 0 };
	ck_assert_int_eq(read(fd, buf, sizeof(buf)), 5);
	ck_assert_str_eq(buf, "hello");
	ck_assert(fcntl(fd, F_GETFD) & FD_CLOEXEC);
	close(fd);
	fd = safe_reopen(p, O_WRONLY | O_APPEND);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, "!", 1), 1);
	close(fd);
	fd = safe_reopen(p, O_RDONLY | O_NOFOLLOW);
	ck_assert_int_ge(fd, 0);
	close(fd);
	reopen_fd = p;
	run_refusals(E.base, N_ROWS(reopen_refusals), 0, reopen_try);
	close(p);
	/* A directory and a symlink (O_PATH|O_NOFOLLOW). */
	how.flags = O_PATH | O_DIRECTORY;
	p = safe_openat2(E.rootfd, "a", &how, sizeof(how));
	ck_assert_int_ge(p, 0);
	fd = safe_reopen(p, O_RDONLY | O_DIRECTORY);
	ck_assert_int_ge(fd, 0);
	ck_assert(fx_same_object(fd, E.rootfd, "a"));
	close(fd);
	close(p);
	how.flags = O_PATH | O_NOFOLLOW;
	p = safe_openat2(E.rootfd, "chain", &how, sizeof(how));
	ck_assert_int_ge(p, 0);
	ck_fails(safe_reopen(p, O_RDONLY), ELOOP);
	fd = safe_reopen(p, O_PATH);
	ck_assert_int_ge(fd, 0);
	ck_assert(fx_same_object(fd, E.rootfd, "chain"));
	close(fd);
	close(p);
	env_close();
}
END_TEST

/* Without a usable procfs (something else mounted on /proc): ENXIO. */
static int reopen_noproc_child(void *arg)
{
	(void)arg;
	CHILD_CHECK(fx_enter_mount_ns() == 0);
	CHILD_CHECK(mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) == 0);
	int p = openat(E.rootfd, "file", O_PATH | O_CLOEXEC);
	CHILD_CHECK(p >= 0);
	CHILD_CHECK(mount("tmpfs", "/proc", "tmpfs", 0, "size=1m") == 0);
	errno = 0;
	CHILD_CHECK(safe_reopen(p, O_RDONLY) == -1 && errno == ENXIO);
	close(p);
	return 0;
}

START_TEST(reopen_without_procfs)
{
	env_open();
	ck_assert_int_eq(sb_run(reopen_noproc_child, NULL), 0);
	env_close();
}
END_TEST

/* ---------------------------------------------------------------- suite */

static Suite *ops_attr_suite(void)
{
	Suite *s = suite_create("ops_attr");
	TCase *tc = tcase_create("core");
	tcase_set_timeout(tc, 120);
	tcase_add_checked_fixture(tc, fx_fd_setup, fx_fd_teardown);
	tcase_add_loop_test(tc, attribute_cases, 0, 2);
	tcase_add_loop_test(tc, xattr_cases, 0, 2);
	tcase_add_loop_test(tc, reopen_cases, 0, 2);
	suite_add_tcase(s, tc);

	TCase *sb = tcase_create("sandbox");
	tcase_set_timeout(sb, 120);
	tcase_add_checked_fixture(sb, fx_fd_setup, fx_fd_teardown);
	tcase_add_loop_test(sb, attributes_old_kernel, 0, 2);
	tcase_add_test(sb, reopen_without_procfs);
	suite_add_tcase(s, sb);
	return s;
}

FX_MAIN(ops_attr_suite)
