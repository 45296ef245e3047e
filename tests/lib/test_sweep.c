/* SPDX-License-Identifier: MIT */
/*
 * Suite "sweep": the leftovers a killed writer leaves (the named fallback)
 * and safe_tmpfile_sweep_beneath(), which removes only the library's own
 * hidden names: by pattern, age and type, rechecked before the unlink, never
 * across a mount, as an unprivileged caller too.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <dirent.h>
#include <dlfcn.h>
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

/* ---------------------------------------------------------------- leftovers and the sweep */

/* A writer killed between safe_tmpfile_open() and the link (named fallback)
 * leaves its hidden name: complete content, mode 0600 whatever the mode
 * asked for. */
static int killed_writer_case(int dfd, uint64_t fl, mode_t mode)
{
	int pfd[2];
	CHILD_CHECK(pipe2(pfd, O_CLOEXEC) == 0);
	pid_t pid = fork();
	CHILD_CHECK(pid >= 0);
	if (pid == 0) {
		struct safe_tmpfile *t;
		if (safe_tmpfile_open(dfd, "f", mode, fl, &t) < 0)
			_exit(1);
		int fd = safe_tmpfile_fd(t);
		if (write(fd, "the content", 11) != 11 ||
		    fsetxattr(fd, "user.own", "1", 1, 0) < 0 || write(pfd[1], "k", 1) != 1)
			_exit(1);
		for (;;)
			pause();
	}
	close(pfd[1]);
	char c;
	ssize_t n = read(pfd[0], &c, 1);
	close(pfd[0]);
	kill(pid, SIGKILL);
	int status;
	CHILD_CHECK(waitpid(pid, &status, 0) == pid);
	CHILD_CHECK(n == 1, "the writer failed before the kill");
	CHILD_CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
	CHILD_CHECK(faccessat(dfd, "f", F_OK, AT_SYMLINK_NOFOLLOW) == -1);
	char *name = only_entry(dfd);
	CHILD_CHECK(name && !strncmp(name, ".safeopen-", 10) && strlen(name) == 26, "leftover %s",
	      name ? name : "(none or several)");
	struct stat st;
	CHILD_CHECK(fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0);
	CHILD_CHECK(S_ISREG(st.st_mode) && (st.st_mode & 07777) == 0600 && st.st_size == 11,
	      "leftover mode %o size %lld (mode %04o asked)", st.st_mode, (long long)st.st_size,
	      mode);
	free(name);
	/* young: kept; any age: removed */
	CHILD_CHECK(safe_tmpfile_sweep_beneath(dfd, ".", 3600, 0, NULL) == 0);
	CHILD_CHECK(count_hidden(dfd) == 1);
	CHILD_CHECK(safe_tmpfile_sweep_beneath(dfd, ".", 0, fl & SAFE_RESOLVE_USERSPACE, NULL) == 1);
	char *ls = fx_dir_listing(dfd, ".");
	int empty = !strcmp(ls, "");
	free(ls);
	CHILD_CHECK(empty, "not empty after the sweep");
	return 0;
}

START_TEST(killed_writer_leftover)
{
	uint64_t fl = strategies[_i] | T_NAMED;
	struct tdir d;
	tdir_make_xattrs(&d, "tmpfile");
	mode_t old = umask(0);
	int r = killed_writer_case(d.fd, fl, 0666) || killed_writer_case(d.fd, fl, 0644) ||
		killed_writer_case(d.fd, fl, 04755) || killed_writer_case(d.fd, fl, 0);
	umask(old);
	tdir_free(&d);
	ck_assert_msg(r == 0, "see stderr");
}
END_TEST

/*
 * The age rows without a wait: the library reads the time with
 * clock_gettime(CLOCK_REALTIME), and this program defines clock_gettime()
 * in front of libc's (the dynamic linker binds the library's call to the
 * executable's definition), adding clock_shift seconds to CLOCK_REALTIME
 * while a row sets it. A file's ctime cannot be set back, so without this
 * a row waits a real second. Where the library's call does not come here
 * (a static link, a time64 redirect of the name), clock_reads stays put and
 * the row waits for the real clock, as it always does under make
 * check-long.
 */
static atomic_long clock_shift, clock_reads;

int clock_gettime(clockid_t id, struct timespec *ts)
{
	typedef int clock_fn(clockid_t, struct timespec *);
	static clock_fn *_Atomic next;
	clock_fn *f = atomic_load(&next);
	if (!f) {
		void *sym = dlsym(RTLD_NEXT, "clock_gettime");
		if (!sym) {
			errno = ENOSYS;
			return -1;
		}
		memcpy(&f, &sym, sizeof(f)); /* object to function pointer */
		atomic_store(&next, f);
	}
	int r = f(id, ts);
	long shift = atomic_load(&clock_shift);
	if (r == 0 && id == CLOCK_REALTIME && shift) {
		ts->tv_sec += shift;
		atomic_fetch_add(&clock_reads, 1);
	}
	return r;
}

/* safe_tmpfile_sweep_beneath(dirfd, path, min_age) as if `shift` seconds
 * had passed: -2 when the library did not read the shifted clock. */
static int sweep_later(int dirfd, const char *path, unsigned int min_age, uint64_t rf, long shift)
{
	long reads = atomic_load(&clock_reads);
	atomic_store(&clock_shift, shift);
	int n = safe_tmpfile_sweep_beneath(dirfd, path, min_age, rf, NULL);
	int e = errno;
	atomic_store(&clock_shift, 0);
	errno = e;
	return atomic_load(&clock_reads) == reads ? -2 : n;
}

#define OWN1 ".safeopen-AbCdEfGhIjKlMn01"
#define OWN2 ".safeopen-ZZZZZZZZZZZZZZZ9"

static void make_file(int dirfd, const char *name, mode_t mode)
{
	int fd = openat(dirfd, name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
	ck_assert_msg(fd >= 0, "create %s: %s", name, strerror(errno));
	ck_assert_int_eq(write(fd, "x", 1), 1);
	close(fd);
}

START_TEST(sweep_only_own_leftovers)
{
	/* Only regular files with exactly the library's hidden-name pattern,
	 * old enough, in that very directory: never a foreign name, a
	 * symlink (nor its target), a directory, a FIFO, a young file,
	 * anything in a subdirectory or outside. */
	uint64_t rf = strategies[_i] & SAFE_RESOLVE_USERSPACE;
	struct tdir d;
	tdir_make(&d, "tmpfile");
	static const char *const spec[] = {
		"d in",
		"d in/sub",
		"f in/sub/.safeopen-SUBSUBSUBSUBSUB1 x",
		"f .safeopen-OUTSIDEOUTSIDE12 x",
		"f target x",
		"l in/.safeopen-SYMLINKSYMLINK1 ../target",
		"l in/.safeopen-DANGLINGDANGLIN ../nowhere",
		"d in/.safeopen-DIRDIRDIRDIRDIR1",
		"p in/.safeopen-FIFOFIFOFIFOFIF",
		"f in/.safeopen-short x",
		"f in/.safeopen-AAAAAAAAAAAAAAA! x",
		"f in/.safeopen-AAAAAAAAAAAAAAAAB x",
		"f in/.safeopen-AAAAAAAAAAAAAAA x",
		"f in/safeopen-AAAAAAAAAAAAAAAA x",
		"f in/.Safeopen-AAAAAAAAAAAAAAAA x",
		"f in/x.safeopen-AAAAAAAAAAAAAAA x",
		"f in/keep x",
		"l in/up ..",
		NULL,
	};
	fx_build(d.fd, spec);
	int in = openat(d.fd, "in", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	ck_assert_int_ge(in, 0);
	make_file(in, OWN1, 0600);
	make_file(in, OWN2, 0644);
	char *snap = fx_tree_snapshot(d.path);
	/* all young */
	ck_assert_int_eq(safe_tmpfile_sweep_beneath(d.fd, "in", 3600, rf, NULL), 0);
	char *snap2 = fx_tree_snapshot(d.path);
	ck_assert_str_eq(snap, snap2);
	free(snap2);
	/* The age is that of the last change, data or inode: a file whose
	 * mtime was set back an hour is still young by its ctime. */
	struct timespec back[2] = { { .tv_nsec = UTIME_OMIT }, { .tv_sec = time(NULL) - 7200 } };
	ck_assert_int_eq(utimensat(in, OWN1, back, AT_SYMLINK_NOFOLLOW), 0);
	ck_assert_int_eq(safe_tmpfile_sweep_beneath(d.fd, "in", 3600, rf, NULL), 0);
	if (_i == 0) {
		/* A second later, with a minimum age of 1 s: the two own names;
		 * a second later with 3 s, none. The age test does not depend on
		 * how "in" is resolved, so only the first strategy runs it. */
		int later = fx_long() ? -2 : sweep_later(d.fd, "in", 3, rf, 1);
		if (later != -2) {
			ck_assert_int_eq(later, 0);
			ck_assert_int_eq(sweep_later(d.fd, "in", 1, rf, 2), 2);
		} else {
			usleep(1100 * 1000);
			ck_assert_int_eq(safe_tmpfile_sweep_beneath(d.fd, "in", 3, rf, NULL), 0);
			ck_assert_int_eq(safe_tmpfile_sweep_beneath(d.fd, "in", 1, rf, NULL), 2);
		}
	} else {
		ck_assert_int_eq(safe_tmpfile_sweep_beneath(d.fd, "in", 0, rf, NULL), 2);
	}
	ck_assert_int_eq(faccessat(in, OWN1, F_OK, AT_SYMLINK_NOFOLLOW), -1);
	ck_assert_int_eq(faccessat(in, OWN2, F_OK, AT_SYMLINK_NOFOLLOW), -1);
	ck_assert_int_eq(safe_tmpfile_sweep_beneath(in, ".", 0, rf, NULL), 0);
	ck_assert_int_eq(safe_tmpfile_sweep_beneath(d.fd, "in/up/in", 0, rf, NULL), 0);
	/* everything else as it was */
	make_file(in, OWN1, 0600);
	make_file(in, OWN2, 0644);
	snap2 = fx_tree_snapshot(d.path);
	/* (the directory's own line changed with the names) */
	unsigned int cnt = 99;
	ck_assert_int_eq(safe_tmpfile_sweep_beneath(d.fd, "in", 0, rf, &cnt), 2);
	ck_assert_uint_eq(cnt, 2);
	cnt = 99;
	ck_assert_int_eq(safe_tmpfile_sweep_beneath(d.fd, "nope", 0, rf, &cnt), -1);
	ck_assert_int_eq(errno, ENOENT);
	ck_assert_uint_eq(cnt, 0);
	char *snap3 = fx_tree_snapshot(d.path);
	ck_assert_int_eq(unlinkat(d.fd, "in/keep", 0), 0);
	make_file(in, "keep", 0644);
	free(snap2);
	free(snap3);
	char *ls = fx_dir_listing(d.fd, "in");
	ck_assert_str_eq(ls, ".Safeopen-AAAAAAAAAAAAAAAA\n"
			     ".safeopen-AAAAAAAAAAAAAAA\n"
			     ".safeopen-AAAAAAAAAAAAAAA!\n"
			     ".safeopen-AAAAAAAAAAAAAAAAB\n"
			     ".safeopen-DANGLINGDANGLIN\n"
			     ".safeopen-DIRDIRDIRDIRDIR1\n"
			     ".safeopen-FIFOFIFOFIFOFIF\n"
			     ".safeopen-SYMLINKSYMLINK1\n"
			     ".safeopen-short\n"
			     "keep\n"
			     "safeopen-AAAAAAAAAAAAAAAA\n"
			     "sub\n"
			     "up\n"
			     "x.safeopen-AAAAAAAAAAAAAAA\n");
	free(ls);
	ck_assert_int_eq(faccessat(d.fd, "target", F_OK, 0), 0);
	ck_assert_int_eq(faccessat(d.fd, ".safeopen-OUTSIDEOUTSIDE12", F_OK, 0), 0);
	ck_assert_int_eq(faccessat(d.fd, "in/sub/.safeopen-SUBSUBSUBSUBSUB1", F_OK, 0), 0);
	/* outside the root, bad arguments: errors, nothing removed */
	ck_assert_int_eq(symlinkat("..", d.fd, "in/sub/out"), 0);
	EXPECT_FAIL_CK(d.fd, EXDEV, safe_tmpfile_sweep_beneath(in, "..", 0, rf, NULL));
	EXPECT_FAIL_CK(d.fd, EXDEV, safe_tmpfile_sweep_beneath(in, "sub/out/..", 0, rf, NULL));
	EXPECT_FAIL_CK(d.fd, EXDEV, safe_tmpfile_sweep_beneath(in, "/", 0, rf, NULL));
	EXPECT_FAIL_CK(d.fd, ENOTDIR, safe_tmpfile_sweep_beneath(in, "keep", 0, rf, NULL));
	EXPECT_FAIL_CK(d.fd, ENOENT, safe_tmpfile_sweep_beneath(in, "nope", 0, rf, NULL));
	EXPECT_FAIL_CK(d.fd, ENOENT, safe_tmpfile_sweep_beneath(in, "", 0, rf, NULL));
	EXPECT_FAIL_CK(d.fd, EFAULT, safe_tmpfile_sweep_beneath(in, NULL, 0, rf, NULL));
	EXPECT_FAIL_CK(d.fd, EINVAL, safe_tmpfile_sweep_beneath(in, ".", 0, 1ULL << 60, NULL));
	EXPECT_FAIL_CK(d.fd, EINVAL,
		       safe_tmpfile_sweep_beneath(in, ".", 0, SAFE_TMPFILE_PARENTS, NULL));
	EXPECT_FAIL_CK(d.fd, EINVAL,
		       safe_tmpfile_sweep_beneath(in, ".", 0,
						  SAFE_RESOLVE_BENEATH | SAFE_RESOLVE_IN_ROOT, NULL));
	/* IN_ROOT: ".." at the root stays there */
	make_file(in, OWN1, 0600);
	ck_assert_int_eq(safe_tmpfile_sweep_beneath(in, "sub/out/..",
						     0, rf | SAFE_RESOLVE_IN_ROOT, NULL), 1);
	close(in);
	free(snap);
	tdir_free(&d);
}
END_TEST

/* A statx() of this executable pre-empts libc's for the library (as the
 * fsetxattr interposer of test_fault): when armed, the first statx() of a
 * descriptor of the inode swap_ino (the sweep pinning a leftover) renames
 * "decoy" onto swap_name right after, the way an attacker would between the
 * sweep's judgement and its unlinkat(). */
static atomic_int swap_armed, swap_done;
static int swap_dirfd = -1;
static const char *swap_name;
static ino_t swap_ino;

#ifndef statx /* lib/compat.h makes statx a macro where the libc has no wrapper */
int statx(int dirfd, const char *restrict path, int flags, unsigned int mask,
	  struct statx *restrict buf)
{
	int r = (int)syscall(SYS_statx, dirfd, path, flags, mask, buf);
	struct stat st;
	if (atomic_load(&swap_armed) && (flags & AT_EMPTY_PATH) && !*path &&
	    fstat(dirfd, &st) == 0 && st.st_ino == swap_ino && atomic_exchange(&swap_armed, 0)) {
		int saved = errno;
		if (renameat(swap_dirfd, "decoy", swap_dirfd, swap_name) == 0)
			atomic_fetch_add(&swap_done, 1);
		errno = saved;
	}
	return r;
}
#endif

START_TEST(sweep_swapped_name)
{
#ifdef statx
	fx_skip("the C library has no statx() for the test to interpose (the library "
		"calls the system call directly)");
#endif
	/* The leftover is pinned and judged, then another file is renamed
	 * onto its name before the removal: the sweep sees another inode
	 * under the name and keeps it. */
	uint64_t rf = strategies[_i] & SAFE_RESOLVE_USERSPACE;
	struct tdir d;
	tdir_make(&d, "tmpfile");
	make_file(d.fd, OWN1, 0600);
	static const char *const spec[] = { "f decoy precious", NULL };
	fx_build(d.fd, spec);
	struct stat lst;
	ck_assert_int_eq(fstatat(d.fd, OWN1, &lst, AT_SYMLINK_NOFOLLOW), 0);
	swap_ino = lst.st_ino;
	swap_dirfd = d.fd;
	swap_name = OWN1;
	atomic_store(&swap_done, 0);
	atomic_store(&swap_armed, 1);
	int n = safe_tmpfile_sweep_beneath(d.fd, ".", 0, rf, NULL);
	atomic_store(&swap_armed, 0);
	ck_assert_int_eq(atomic_load(&swap_done), 1); /* the "attacker" ran */
	ck_assert_int_eq(n, 0);
	int fd = openat(d.fd, OWN1, O_RDONLY | O_CLOEXEC);
	ck_assert_int_ge(fd, 0);
	char buf[16];
	ck_assert_int_eq(read(fd, buf, sizeof(buf)), 8);
	ck_assert_int_eq(memcmp(buf, "precious", 8), 0);
	close(fd);
	tdir_free(&d);
}
END_TEST

struct sweep_args {
	int dirfd;
	const char *path;
};

static int sweep_unpriv_child(void *arg)
{
	const struct sweep_args *a = arg;
	CHILD_CHECK(sb_drop_privileges() == 0);
	/* a killed unprivileged writer, in its own directory */
	int u = openat(a->dirfd, "u", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	CHILD_CHECK(u >= 0);
	mode_t old = umask(022);
	int r = killed_writer_case(u, T_NAMED, 0644);
	umask(old);
	close(u);
	if (r)
		return 1;
	/* a sticky directory: its own leftover goes, root's stays (EPERM) */
	int fd = openat(a->dirfd, OWN2, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	CHILD_CHECK(fd >= 0);
	close(fd);
	errno = 0;
	unsigned int removed = 99;
	CHILD_CHECK(safe_tmpfile_sweep_beneath(a->dirfd, ".", 0, 0, &removed) == -1 &&
		    errno == EPERM);
	/* the count survives the failure: its own leftover was removed */
	CHILD_CHECK(removed == 1);
	CHILD_CHECK(faccessat(a->dirfd, OWN2, F_OK, AT_SYMLINK_NOFOLLOW) == -1 && errno == ENOENT);
	CHILD_CHECK(faccessat(a->dirfd, OWN1, F_OK, AT_SYMLINK_NOFOLLOW) == 0);
	return 0;
}

START_TEST(sweep_unprivileged)
{
	FX_REQUIRE_ROOT("chown of a directory to uid 65534");
	struct tdir d;
	tdir_make_xattrs(&d, "tmpfile");
	ck_assert_int_eq(fchmod(d.fd, 01777), 0);
	ck_assert_int_eq(mkdirat(d.fd, "u", 0755), 0);
	ck_assert_int_eq(fchownat(d.fd, "u", 65534, 65534, 0), 0);
	make_file(d.fd, OWN1, 0600);
	struct sweep_args a = { .dirfd = d.fd };
	int r = sb_run(sweep_unpriv_child, &a);
	char *ls = fx_dir_listing(d.fd, ".");
	ck_assert_str_eq(ls, OWN1 "\nu\n");
	free(ls);
	tdir_free(&d);
	ck_assert_msg(r == 0, "child failed with %d (see stderr)", r);
}
END_TEST

static int sweep_mount_child(void *arg)
{
	const struct sweep_args *a = arg;
	/* as root a mount namespace, unprivileged a user namespace too */
	CHILD_CHECK(fx_enter_mount_ns() == 0);
	char src[4096], dst[4096];
	snprintf(src, sizeof(src), "%s/src", a->path);
	snprintf(dst, sizeof(dst), "%s/in/%s", a->path, OWN1);
	CHILD_CHECK(mount(src, dst, NULL, MS_BIND, NULL) == 0);
	/* a file mounted over a leftover's name: neither entered nor removed
	 * (and no EBUSY). The root is opened again: a descriptor from before
	 * unshare() would resolve in the old namespace, without the mount. */
	int root = open(a->path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	CHILD_CHECK(root >= 0);
	int in = openat(root, "in", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	CHILD_CHECK(in >= 0);
	int n = safe_tmpfile_sweep_beneath(root, "in", 0, 0, NULL);
	close(root);
	int n2 = safe_tmpfile_sweep_beneath(in, ".", 0, SAFE_RESOLVE_USERSPACE, NULL);
	close(in);
	CHILD_CHECK(n == 1 && n2 == 0, "sweep: %d then %d (%s)", n, n2, strerror(errno));
	CHILD_CHECK(faccessat(a->dirfd, "in/" OWN1, F_OK, AT_SYMLINK_NOFOLLOW) == 0);
	CHILD_CHECK(faccessat(a->dirfd, "in/" OWN2, F_OK, AT_SYMLINK_NOFOLLOW) == -1);
	CHILD_CHECK(umount2(dst, MNT_DETACH) == 0);
	return 0;
}

START_TEST(sweep_never_crosses_mounts)
{
	if (!sb_can_mount()) {
		fx_skip("cannot mount here (no root, no user namespace)");
	}
	struct tdir d;
	tdir_make(&d, "tmpfile");
	ck_assert_int_eq(mkdirat(d.fd, "in", 0755), 0);
	make_file(d.fd, "src", 0600);
	int in = openat(d.fd, "in", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	ck_assert_int_ge(in, 0);
	make_file(in, OWN1, 0600);
	make_file(in, OWN2, 0600);
	close(in);
	struct sweep_args a = { .dirfd = d.fd, .path = d.path };
	int r = sb_run(sweep_mount_child, &a);
	char *ls = fx_dir_listing(d.fd, ".");
	ck_assert_str_eq(ls, "in\nsrc\n");
	free(ls);
	ls = fx_dir_listing(d.fd, "in");
	ck_assert_str_eq(ls, OWN1 "\n");
	free(ls);
	tdir_free(&d);
	ck_assert_msg(r == 0, "child failed with %d (see stderr)", r);
}
END_TEST

/* ---------------------------------------------------------------- suite */

static Suite *sweep_suite(void)
{
	Suite *s = suite_create("sweep");
	TCase *tc = tcase_create("core");
	tcase_add_checked_fixture(tc, fx_fd_setup, fx_fd_teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_loop_test(tc, killed_writer_leftover, 0, 2);
	tcase_add_loop_test(tc, sweep_only_own_leftovers, 0, N_STRATEGIES);
	tcase_add_loop_test(tc, sweep_swapped_name, 0, N_STRATEGIES);
	suite_add_tcase(s, tc);

	TCase *sb = tcase_create("sandbox");
	tcase_add_checked_fixture(sb, fx_fd_setup, fx_fd_teardown);
	tcase_set_timeout(sb, 60);
	tcase_add_test(sb, sweep_unprivileged);
	tcase_add_test(sb, sweep_never_crosses_mounts);
	suite_add_tcase(s, sb);
	return s;
}

FX_MAIN(sweep_suite)
