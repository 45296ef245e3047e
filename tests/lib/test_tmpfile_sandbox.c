/* SPDX-License-Identifier: MIT */
/*
 * Suite "tmpfile_sandbox": safe_tmpfile_xattr() in sandboxed children where
 * something is taken away or differs: another uid (and a drop box it may
 * only write to), no /proc or a fake one, no O_TMPFILE (seccomp), no
 * renameat2, failing syncs, a setgid directory owned by others, a filesystem
 * without user xattrs. The kernel stays the oracle (check_like_oracle).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <dirent.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

#include "fixture.h"
#include "safeopen.h"
#include "strategy.h"
#include "sandbox.h"
#include "tmpfile-env.h"

#ifndef RENAME_NOREPLACE
#define RENAME_NOREPLACE (1 << 0)
#endif

/* ---------------------------------------------------------------- sandboxed children */

struct child_args {
	int dirfd;            /* opened by the parent, writable by the dropped user */
	uint64_t flags;       /* strategy bits */
	bool unpriv;          /* sb_drop_privileges() */
	bool no_proc;         /* private mount namespace without /proc */
	bool no_empty_path;   /* linkat(AT_EMPTY_PATH) fails with ENOENT (kernels < 6.10) */
	int tmpfile_errno;    /* O_TMPFILE opens fail with this errno (0: allowed) */
	bool no_renameat2;    /* renameat2 with flags fails with ENOSYS */
	bool no_openat2;      /* openat2 fails with ENOSYS (kernels < 5.6) */
	bool no_statx_mount;  /* statx reports no mount id (kernels < 5.8: the
			       * library's SAFEOPEN_TEST_STATX_NO_MOUNT hook) */
	int spoof;            /* 1: a tmpfs over /proc; 2: another process's fd
			       * directory bind-mounted over ours */
	int expect_nlink;     /* -1: don't care; else st_nlink after safe_tmpfile_open */
};

static int child_setup(const struct child_args *a)
{
	if (a->no_proc) {
		CHILD_CHECK(fx_enter_mount_ns() == 0);
		CHILD_CHECK(mount(NULL, "/", NULL, MS_REC | MS_SLAVE, NULL) == 0);
		CHILD_CHECK(umount2("/proc", MNT_DETACH) == 0);
		CHILD_CHECK(access("/proc/self/fd", F_OK) == -1);
	}
	if (a->spoof) {
		CHILD_CHECK(fx_enter_mount_ns() == 0);
		CHILD_CHECK(mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) == 0);
		if (a->spoof == 1) {
			CHILD_CHECK(mount("none", "/proc", "tmpfs", 0, "mode=0755") == 0);
			CHILD_CHECK(mkdir("/proc/self", 0755) == 0 && mkdir("/proc/self/fd", 0755) == 0);
			CHILD_CHECK(symlink("self", "/proc/thread-self") == 0);
		} else {
			/* a helper whose fd table has an entry for every number
			 * this process will use, so a probe through its fd
			 * directory would succeed */
			int pfd[2], ready[2];
			CHILD_CHECK(pipe2(pfd, O_CLOEXEC) == 0 && pipe2(ready, O_CLOEXEC) == 0);
			pid_t helper = fork();
			CHILD_CHECK(helper >= 0);
			if (helper == 0) {
				close(pfd[1]);
				close(ready[0]);
				int nul = open("/dev/null", O_RDONLY);
				for (int fd = 3; fd < 128; fd++)
					if (fd != pfd[0] && fd != ready[1] && fd != nul)
						(void)dup2(nul, fd);
				char c = 'r';
				(void)prctl(PR_SET_PDEATHSIG, SIGKILL);
				if (write(ready[1], &c, 1) != 1 || read(pfd[0], &c, 1) < 0)
					_exit(1);
				_exit(0);
			}
			/* pfd[1] stays open until this child exits */
			close(pfd[0]);
			close(ready[1]);
			char c;
			CHILD_CHECK(read(ready[0], &c, 1) == 1);
			close(ready[0]);
			char src[64], dst[64];
			snprintf(src, sizeof(src), "/proc/%d/task/%d/fd", (int)helper, (int)helper);
			snprintf(dst, sizeof(dst), "/proc/%d/task/%d/fd", (int)getpid(),
				 (int)getpid());
			CHILD_CHECK(mount(src, dst, NULL, MS_BIND, NULL) == 0);
		}
	}
	if (a->unpriv)
		CHILD_CHECK(sb_drop_privileges() == 0);
	struct sb_rule rules[6];
	size_t n = 0;
	if (a->no_empty_path)
		rules[n++] = (struct sb_rule)SB_WHEN(SYS_linkat, ENOENT, 4, AT_EMPTY_PATH,
						     AT_EMPTY_PATH);
	if (a->tmpfile_errno) {
		rules[n++] = (struct sb_rule)SB_WHEN(SYS_openat, a->tmpfile_errno, 2, O_TMPFILE_BIT,
						     O_TMPFILE_BIT);
#ifdef SYS_open
		rules[n++] = (struct sb_rule)SB_WHEN(SYS_open, a->tmpfile_errno, 1, O_TMPFILE_BIT,
						     O_TMPFILE_BIT);
#endif
	}
	if (a->no_renameat2)
		rules[n++] = (struct sb_rule)SB_WHEN(SYS_renameat2, ENOSYS, 4, RENAME_NOREPLACE,
						     RENAME_NOREPLACE);
	if (a->no_openat2)
		rules[n++] = (struct sb_rule)SB_ALWAYS(SYS_openat2, ENOSYS);
	if (a->no_statx_mount)
		CHILD_CHECK(setenv("SAFEOPEN_TEST_STATX_NO_MOUNT", "1", 1) == 0);
	if (n)
		CHILD_CHECK(sb_seccomp(rules, n) == 0);
	return 0;
}

/* Everything a caller does, in whatever sandbox the child set up. */
static int child_scenario(void *arg)
{
	const struct child_args *a = arg;
	if (child_setup(a))
		return 1;
	int dfd = a->dirfd;
	uint64_t fl = a->flags;
	if (create_and_check(dfd, "f", 0644, xa3, 3, fl) ||
	    create_and_check(dfd, "f", 0, xa3, 3, fl) ||
	    create_and_check(dfd, "f", 0444, xa3, 3, fl | SAFE_TMPFILE_SYNC))
		return 1;
	/* strategy seen from outside */
	struct safe_tmpfile *t;
	int fd = tmp_open(dfd, "two", 0640, fl, &t);
	CHILD_CHECK(fd >= 0);
	struct stat st;
	CHILD_CHECK(fstat(fd, &st) == 0);
	CHILD_CHECK(a->expect_nlink < 0 || (int)st.st_nlink == a->expect_nlink,
	      "st_nlink %d after safe_tmpfile_open, expected %d", (int)st.st_nlink,
	      a->expect_nlink);
	CHILD_CHECK(count_hidden(dfd) == (int)st.st_nlink);
	CHILD_CHECK(write(fd, "abc", 3) == 3);
	CHILD_CHECK(safe_tmpfile_link(t, xa3, 3, 0) == fd);
	if (check_fd(fd, dfd, "two") || check_xattrs(fd, xa3, 3) ||
	    check_like_oracle(fd, dfd, 0640))
		return 1;
	close(fd);
	/* replace, plain and synced */
	fd = safe_tmpfile_xattr(dfd, "two", 0600, xa3, 3, fl | SAFE_TMPFILE_REPLACE);
	CHILD_CHECK(fd >= 0 && check_fd(fd, dfd, "two") == 0);
	close(fd);
	fd = safe_tmpfile_xattr(dfd, "two", 0, xa3, 3,
				fl | SAFE_TMPFILE_REPLACE | SAFE_TMPFILE_SYNC);
	CHILD_CHECK(fd >= 0 && check_fd(fd, dfd, "two") == 0);
	close(fd);
	EXPECT_FAIL(dfd, EEXIST, safe_tmpfile_xattr(dfd, "two", 0644, xa3, 3, fl));
	CHILD_CHECK(unlinkat(dfd, "two", 0) == 0);
	/* discard */
	fd = tmp_open(dfd, "three", 0640, fl, &t);
	CHILD_CHECK(fd >= 0);
	CHILD_CHECK(safe_tmpfile_discard(t) == 0);
	char *ls = fx_dir_listing(dfd, ".");
	int empty = !strcmp(ls, "");
	free(ls);
	CHILD_CHECK(empty, "directory not empty at the end");
	if (a->unpriv) {
		struct safe_xattr tr[] = { { "user.a", "1", 1 }, { "trusted.label", "x", 1 } };
		EXPECT_FAIL(dfd, EPERM, safe_tmpfile_xattr(dfd, "t", 0644, tr, 2, fl));
		EXPECT_FAIL(dfd, EPERM,
			    safe_tmpfile_xattr(dfd, "t", 0644, tr, 2,
					       fl | SAFE_TMPFILE_REPLACE | SAFE_TMPFILE_SYNC));
		/* REPLACE that fails leaves the old file in place */
		int old = safe_tmpfile_xattr(dfd, "t", 0644, xa3, 3, fl);
		CHILD_CHECK(old >= 0);
		EXPECT_FAIL(dfd, EPERM,
			    safe_tmpfile_xattr(dfd, "t", 0644, tr, 2, fl | SAFE_TMPFILE_REPLACE));
		CHILD_CHECK(fx_same_object(old, dfd, "t"));
		close(old);
		CHILD_CHECK(unlinkat(dfd, "t", 0) == 0);
	}
	return 0;
}

static void run_child(struct child_args *a)
{
	struct tdir d;
	tdir_make_xattrs(&d, "tmpfile");
	ck_assert_int_eq(sb_chown_for_dropped(d.fd, "", AT_EMPTY_PATH), 0);
	a->dirfd = d.fd;
	int r = sb_run(child_scenario, a);
	char *ls = fx_dir_listing(d.fd, ".");
	ck_assert_str_eq(ls, "");
	free(ls);
	tdir_free(&d);
	ck_assert_msg(r == 0, "child failed with %d (see stderr)", r);
}

START_TEST(unprivileged)
{
	/* Any route that works for uid 65534 (AT_EMPTY_PATH since Linux 6.10,
	 * else procfs); the unnamed file in both cases. */
	struct child_args a = { .flags = strategies[_i], .unpriv = true, .expect_nlink = -1 };
	a.expect_nlink = (a.flags & T_NAMED) ? 1 : 0;
	run_child(&a);
}
END_TEST

START_TEST(unprivileged_procfs_route)
{
	/* AT_EMPTY_PATH refused as before Linux 6.10: the procfs link. */
	struct child_args a = { .flags = strategies[_i], .unpriv = true, .no_empty_path = true };
	a.expect_nlink = (a.flags & T_NAMED) ? 1 : 0;
	run_child(&a);
}
END_TEST

START_TEST(unprivileged_no_proc)
{
	FX_REQUIRE_ROOT("unmounts /proc in a mount namespace (a user namespace may not uncover it)");
	/* No procfs and no AT_EMPTY_PATH: an unnamed file could not be linked,
	 * so the named fallback must be chosen up front. */
	struct child_args a = { .flags = strategies[_i],
				.unpriv = true,
				.no_proc = true,
				.no_empty_path = true,
				.expect_nlink = 1 };
	run_child(&a);
	/* without the AT_EMPTY_PATH restriction: whatever this kernel allows */
	struct child_args b = { .flags = strategies[_i],
				.unpriv = true,
				.no_proc = true,
				.expect_nlink = -1 };
	run_child(&b);
}
END_TEST

START_TEST(procfs_verified)
{
	/* As root, with AT_EMPTY_PATH refused: the procfs link is used when
	 * /proc is genuine (through openat2 or the fallback walk), and a fake
	 * /proc or a bind-mounted foreign fd directory is detected, which
	 * leaves the named fallback. The third way is a kernel before 5.8 as
	 * well (no openat2, no mount id from statx): the bind mount is then
	 * only seen in the entry, which leads to another process's file. */
	uint64_t fl = strategies[_i];
	bool named = fl & T_NAMED;
	for (int no2 = 0; no2 < 3; no2++) {
		struct child_args a = { .flags = fl,
					.no_empty_path = true,
					.no_openat2 = no2 > 0,
					.no_statx_mount = no2 == 2,
					.expect_nlink = named ? 1 : 0 };
		run_child(&a);
		for (int sp = 1; sp <= 2; sp++) {
			a.spoof = sp;
			a.expect_nlink = 1;
			run_child(&a);
		}
	}
}
END_TEST

START_TEST(seccomp_no_otmpfile)
{
	/* O_TMPFILE refused by a sandbox (EOPNOTSUPP), or unknown to an old
	 * kernel (EISDIR: the flag reads as O_DIRECTORY): the fallback. */
	static const int errs[] = { EOPNOTSUPP, EISDIR, EINVAL };
	struct child_args a = { .flags = strategies[_i],
				.tmpfile_errno = errs[0],
				.expect_nlink = 1 };
	for (size_t i = 0; i < 3; i++) {
		a.tmpfile_errno = errs[i];
		run_child(&a);
	}
	a.unpriv = true;
	a.tmpfile_errno = EOPNOTSUPP;
	run_child(&a);
}
END_TEST

START_TEST(no_renameat2)
{
	/* renameat2(RENAME_NOREPLACE) missing: linkat + unlinkat. */
	struct child_args a = { .flags = strategies[_i] | T_NAMED,
				.no_renameat2 = true,
				.expect_nlink = 1 };
	run_child(&a);
	a.unpriv = true;
	run_child(&a);
}
END_TEST

static int dropbox_child(void *arg)
{
	/* A directory the caller may write and search but not read: the
	 * directory fsync of SYNC cannot open it and syncs the filesystem. */
	const struct child_args *a = arg;
	CHILD_CHECK(sb_drop_privileges() == 0);
	int fd = safe_tmpfile_xattr(a->dirfd, "f", 0644, xa3, 3, a->flags | SAFE_TMPFILE_SYNC);
	CHILD_CHECK(fd >= 0);
	CHILD_CHECK(check_xattrs(fd, xa3, 3) == 0);
	close(fd);
	fd = safe_tmpfile_xattr(a->dirfd, "f", 0644, xa3, 3,
				a->flags | SAFE_TMPFILE_SYNC | SAFE_TMPFILE_REPLACE);
	CHILD_CHECK(fd >= 0);
	close(fd);
	struct safe_xattr tr[] = { { "trusted.label", "x", 1 } };
	CHILD_CHECK(safe_tmpfile_xattr(a->dirfd, "g", 0644, tr, 1, a->flags | SAFE_TMPFILE_SYNC) == -1);
	CHILD_CHECK(errno == EPERM);
	/* and a directory the caller may not write at all */
	CHILD_CHECK(faccessat(a->dirfd, "ro", W_OK, 0) == -1);
	int ro = openat(a->dirfd, "ro", O_PATH | O_DIRECTORY | O_CLOEXEC);
	CHILD_CHECK(ro >= 0);
	errno = 0;
	CHILD_CHECK(safe_tmpfile_xattr(ro, "f", 0644, xa3, 3, a->flags) == -1 && errno == EACCES);
	close(ro);
	return 0;
}

START_TEST(unprivileged_dropbox)
{
	FX_REQUIRE_ROOT("a root-owned directory that uid 65534 may not write");
	struct tdir d;
	tdir_make_xattrs(&d, "tmpfile");
	ck_assert_int_eq(mkdirat(d.fd, "ro", 0755), 0);
	ck_assert_int_eq(fchmod(d.fd, 0733), 0);
	struct child_args a = { .dirfd = d.fd, .flags = strategies[_i] };
	int r = sb_run(dropbox_child, &a);
	char *ls = fx_dir_listing(d.fd, ".");
	ck_assert_str_eq(ls, "f\nro\n");
	free(ls);
	tdir_free(&d);
	ck_assert_msg(r == 0, "child failed with %d (see stderr)", r);
}
END_TEST

static int sync_fail_child(void *arg)
{
	const struct child_args *a = arg;
	int dfd = a->dirfd;
	uint64_t fl = a->flags;
	int old = safe_tmpfile_xattr(dfd, "old", 0644, xa3, 3, fl);
	CHILD_CHECK(old >= 0);
	CHILD_CHECK(sb_drop_privileges() == 0);
	/* the file's fsync fails: nothing is published */
	struct sb_rule r1[] = { SB_ALWAYS(SYS_fsync, EIO) };
	CHILD_CHECK(sb_seccomp(r1, 1) == 0);
	EXPECT_FAIL(dfd, EIO, safe_tmpfile_xattr(dfd, "f", 0644, xa3, 3, fl | SAFE_TMPFILE_SYNC));
	EXPECT_FAIL(dfd, EIO,
		    safe_tmpfile_xattr(dfd, "old", 0644, xa3, 3,
				       fl | SAFE_TMPFILE_SYNC | SAFE_TMPFILE_REPLACE));
	CHILD_CHECK(fx_same_object(old, dfd, "old"));
	CHILD_CHECK(count_hidden(dfd) == 0);
	/* without SYNC, nothing calls fsync */
	int fd = safe_tmpfile_xattr(dfd, "f", 0644, xa3, 3, fl);
	CHILD_CHECK(fd >= 0);
	close(fd);
	CHILD_CHECK(unlinkat(dfd, "f", 0) == 0);
	close(old);
	return 0;
}

/* The directory is not readable (a drop box), so its sync is a syncfs(),
 * which fails after publication: without REPLACE the name is taken back,
 * with REPLACE the new file stays. */
static int syncfs_fail_child(void *arg)
{
	const struct child_args *a = arg;
	int dfd = a->dirfd;
	uint64_t fl = a->flags;
	int old = safe_tmpfile_xattr(dfd, "old", 0644, xa3, 3, fl);
	CHILD_CHECK(old >= 0);
	CHILD_CHECK(sb_drop_privileges() == 0);
	struct sb_rule r[] = { SB_ALWAYS(SYS_syncfs, EIO) };
	CHILD_CHECK(sb_seccomp(r, 1) == 0);
	/* (the caller cannot list this directory: the parent checks the
	 * listing afterwards) */
	int nfd = fx_fd_count();
	errno = 0;
	CHILD_CHECK(safe_tmpfile_xattr(dfd, "f", 0644, xa3, 3, fl | SAFE_TMPFILE_SYNC) == -1 &&
	   errno == EIO);
	CHILD_CHECK(faccessat(dfd, "f", F_OK, AT_SYMLINK_NOFOLLOW) == -1 && errno == ENOENT);
	/* with REPLACE: -1, and the new file is in place */
	errno = 0;
	CHILD_CHECK(safe_tmpfile_xattr(dfd, "old", 0644, xa3, 3,
			      fl | SAFE_TMPFILE_SYNC | SAFE_TMPFILE_REPLACE) == -1 &&
	   errno == EIO);
	CHILD_CHECK(!fx_same_object(old, dfd, "old"));
	CHILD_CHECK(nfd == fx_fd_count());
	close(old);
	/* two-phase: the handle can then only be discarded */
	struct safe_tmpfile *t;
	int fd = tmp_open(dfd, "g", 0644, fl, &t);
	CHILD_CHECK(fd >= 0);
	CHILD_CHECK(safe_tmpfile_link(t, xa3, 3, SAFE_TMPFILE_SYNC) == -1 && errno == EIO);
	CHILD_CHECK(faccessat(dfd, "g", F_OK, AT_SYMLINK_NOFOLLOW) == -1 && errno == ENOENT);
	CHILD_CHECK(safe_tmpfile_link(t, xa3, 3, 0) == -1 && errno == EINVAL);
	CHILD_CHECK(safe_tmpfile_discard(t) == 0);
	return 0;
}

START_TEST(sync_failures)
{
	FX_REQUIRE_ROOT("chown of the test directory to root");
	struct tdir d;
	tdir_make_xattrs(&d, "tmpfile");
	ck_assert_int_eq(fchown(d.fd, 65534, 65534), 0);
	struct child_args a = { .dirfd = d.fd, .flags = strategies[_i] };
	int r = sb_run(sync_fail_child, &a);
	ck_assert_msg(r == 0, "child failed with %d (see stderr)", r);
	char *ls = fx_dir_listing(d.fd, ".");
	ck_assert_str_eq(ls, "old\n");
	free(ls);
	/* a drop box: writable and searchable, not readable */
	ck_assert_int_eq(fchmod(d.fd, 0733), 0);
	ck_assert_int_eq(fchown(d.fd, 0, 0), 0);
	ck_assert_int_eq(unlinkat(d.fd, "old", 0), 0);
	r = sb_run(syncfs_fail_child, &a);
	ck_assert_msg(r == 0, "child failed with %d (see stderr)", r);
	ls = fx_dir_listing(d.fd, ".");
	ck_assert_str_eq(ls, "old\n");
	free(ls);
	tdir_free(&d);
}
END_TEST

static int unpriv_setgid_child(void *arg)
{
	const struct child_args *a = arg;
	CHILD_CHECK(sb_drop_privileges() == 0);
	/* not a member of the directory's group: S_ISGID is dropped, the group
	 * is still inherited */
	if (create_and_check(a->dirfd, "f", 02755, xa3, 3, a->flags) ||
	    create_and_check(a->dirfd, "f", 04755, xa3, 3, a->flags))
		return 1;
	int fd = safe_tmpfile_xattr(a->dirfd, "f", 02775, xa3, 3, a->flags);
	CHILD_CHECK(fd >= 0);
	struct stat st;
	CHILD_CHECK(fstat(fd, &st) == 0);
	CHILD_CHECK(st.st_gid == 4242 && !(st.st_mode & S_ISGID), "gid %d mode %o", (int)st.st_gid,
	      st.st_mode);
	close(fd);
	/* two-phase: content written before publication keeps S_ISUID */
	struct safe_tmpfile *t;
	fd = tmp_open(a->dirfd, "s", 04755, a->flags, &t);
	CHILD_CHECK(fd >= 0);
	CHILD_CHECK(write(fd, "#!/bin/true\n", 12) == 12);
	CHILD_CHECK(safe_tmpfile_link(t, xa3, 3, 0) == fd);
	CHILD_CHECK(fstat(fd, &st) == 0);
	mode_t um = umask(022);
	umask(um);
	CHILD_CHECK((st.st_mode & 07777) == (04755 & ~um), "mode %o", st.st_mode);
	close(fd);
	return 0;
}

START_TEST(unprivileged_setgid_directory)
{
	FX_REQUIRE_ROOT("chown of a directory to gid 4242");
	struct tdir d;
	tdir_make_xattrs(&d, "tmpfile");
	ck_assert_int_eq(fchown(d.fd, 65534, 4242), 0);
	ck_assert_int_eq(fchmod(d.fd, 02777), 0);
	struct child_args a = { .dirfd = d.fd, .flags = strategies[_i] };
	int r = sb_run(unpriv_setgid_child, &a);
	tdir_free(&d);
	ck_assert_msg(r == 0, "child failed with %d (see stderr)", r);
}
END_TEST

static int ramfs_case(int dfd, uint64_t fl)
{
	struct statfs sfs;
	CHILD_CHECK(fstatfs(dfd, &sfs) == 0 && sfs.f_type == RAMFS_MAGIC);
	struct safe_xattr x1[] = { { "user.a", "v", 1 } };
	EXPECT_FAIL(dfd, EOPNOTSUPP, safe_tmpfile_xattr(dfd, "f", 0644, x1, 1, fl));
	EXPECT_FAIL(dfd, EOPNOTSUPP,
		    safe_tmpfile_xattr(dfd, "f", 0644, xa3, 3,
				       fl | SAFE_TMPFILE_REPLACE | SAFE_TMPFILE_SYNC));
	struct safe_tmpfile *t;
	int fd = tmp_open(dfd, "g", 0644, fl, &t);
	CHILD_CHECK(fd >= 0);
	CHILD_CHECK(safe_tmpfile_link(t, x1, 1, 0) == -1 && errno == EOPNOTSUPP);
	CHILD_CHECK(safe_tmpfile_discard(t) == 0);
	/* without xattrs it works */
	fd = safe_tmpfile_xattr(dfd, "plain", 0644, NULL, 0, fl);
	CHILD_CHECK(fd >= 0 && check_fd(fd, dfd, "plain") == 0);
	close(fd);
	EXPECT_FAIL(dfd, EOPNOTSUPP,
		    safe_tmpfile_xattr(dfd, "plain", 0644, x1, 1, fl | SAFE_TMPFILE_REPLACE));
	CHILD_CHECK(unlinkat(dfd, "plain", 0) == 0);
	char *ls = fx_dir_listing(dfd, ".");
	int empty = !strcmp(ls, "");
	free(ls);
	CHILD_CHECK(empty, "ramfs not empty");
	return 0;
}

static int ramfs_child(void *arg)
{
	const struct mount_args *a = arg;
	CHILD_CHECK(fx_enter_mount_ns() == 0);
	CHILD_CHECK(mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) == 0);
	CHILD_CHECK(mount("none", a->path, "ramfs", 0, "mode=0755") == 0);
	int dfd = open(a->path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	CHILD_CHECK(dfd >= 0);
	int r = ramfs_case(dfd, a->flags);
	close(dfd);
	return r;
}

START_TEST(ramfs_no_user_xattrs)
{
	if (!sb_can_mount()) {
		fx_skip("cannot mount here (not root, no user namespace)");
	}
	char *dir = fx_mkdtemp("tmpfile-ramfs");
	struct mount_args a = { .path = dir, .flags = strategies[_i] };
	int r = sb_run(ramfs_child, &a);
	char *ls = fx_dir_listing(AT_FDCWD, dir);
	ck_assert_str_eq(ls, "");
	free(ls);
	ck_assert_int_eq(fx_rmtree(dir), 0);
	free(dir);
	ck_assert_msg(r == 0, "child failed with %d (see stderr)", r);
}
END_TEST

/* ---------------------------------------------------------------- suite */

static Suite *tmpfile_sandbox_suite(void)
{
	Suite *s = suite_create("tmpfile_sandbox");
	TCase *sb = tcase_create("sandbox");
	tcase_add_checked_fixture(sb, fx_fd_setup, fx_fd_teardown);
	tcase_set_timeout(sb, 60);
	tcase_add_loop_test(sb, unprivileged, 0, N_STRATEGIES);
	tcase_add_loop_test(sb, unprivileged_procfs_route, 0, N_KERNEL_STRATEGIES);
	tcase_add_loop_test(sb, unprivileged_no_proc, 0, N_KERNEL_STRATEGIES);
	tcase_add_loop_test(sb, seccomp_no_otmpfile, 0, N_KERNEL_STRATEGIES);
	tcase_add_loop_test(sb, procfs_verified, 0, N_KERNEL_STRATEGIES);
	tcase_add_loop_test(sb, no_renameat2, 0, 1);
	tcase_add_loop_test(sb, unprivileged_dropbox, 0, N_KERNEL_STRATEGIES);
	tcase_add_loop_test(sb, unprivileged_setgid_directory, 0, N_KERNEL_STRATEGIES);
	tcase_add_loop_test(sb, sync_failures, 0, N_KERNEL_STRATEGIES);
	tcase_add_loop_test(sb, ramfs_no_user_xattrs, 0, N_KERNEL_STRATEGIES);
	suite_add_tcase(s, sb);
	return s;
}

FX_MAIN(tmpfile_sandbox_suite)
