/* SPDX-License-Identifier: MIT */
/*
 * Suite "limits": resource exhaustion.
 *
 * - RLIMIT_NOFILE set so that exactly three descriptors are free: the
 *   userspace walker (which holds O(1) descriptors) still resolves paths of
 *   500 components (100 at the quick size, still over the 32 levels it
 *   holds); with 0..3 free descriptors every operation either works
 *   or fails with EMFILE, leaving the tree and the descriptor table as they
 *   were; with none free everything fails with EMFILE.
 * - A bind mount of an outside directory inside the tree, with mount ids
 *   learnable only from procfs fdinfo (or not at all): with 0..40 free
 *   descriptors rmtree and NO_XDEV opens never cross it, and fail with
 *   EMFILE (or EXDEV where nothing can tell), never on a guess; the tmpfile
 *   sweep removes nothing where no mount id can be learnt.
 * - A tmpfs of 8 KiB with 5 inodes, filled up (in a child with its own mount
 *   namespace): safe_tmpfile_xattr fails with ENOSPC (no inode; then no room
 *   for the xattr) and leaves nothing behind - proven by a final creation that
 *   needs all the space left.
 * - The cost of ".." (case "cost"): "a/" x d, "../" x d, "f" through the
 *   walker, counted in system calls by a ptrace()d child, stays within
 *   4 system calls per component for d = 100..800 (2.9 at d = 800 without
 *   close_range(), 1.7 with it) and grows linearly (the
 *   walker's checkpoints, design.md "The cost of '..'"); a link whose body is
 *   that d = 800 pattern, followed 10 times, too. And the walker's batched
 *   close never touches a descriptor of the caller that lies between its own.
 * Each scenario runs in a forked child (sb_run), so the limits and mounts go
 * away with it.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "fixture.h"
#include "safeopen.h"
#include "strategy.h"
#include "sandbox.h"

#define DEPTH 500 /* at the big size (check-long); deep_depth: the one in use */
static int deep_depth;

static char *root_path;
static int rootfd = -1;
static bool user_xattrs; /* on rootfd's filesystem (tmpfs: from Linux 6.6) */
/* "deep/d/d/.../d" (deep_depth times d) and the same with "/f" */
static char deep_dir[2 * DEPTH + 16];
static char deep_file[2 * DEPTH + 16];

/* mkdir `name` in `cur` (consumed), then in that, `depth` times; returns an
 * O_PATH descriptor of the deepest. */
static int make_chain(int cur, const char *name, int depth)
{
	for (int i = 0; i < depth; i++) {
		ck_assert_int_eq(mkdirat(cur, name, 0755), 0);
		int next = openat(cur, name, O_PATH | O_DIRECTORY | O_CLOEXEC);
		ck_assert_int_ge(next, 0);
		close(cur);
		cur = next;
	}
	return cur;
}

static void setup_deep(void)
{
	root_path = fx_mkdtemp("limits");
	rootfd = open(root_path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	ck_assert_int_ge(rootfd, 0);
	static const char *const spec[] = { "d deep", "f victim", "f a", NULL };
	fx_build(rootfd, spec);
	int cur = openat(rootfd, "deep", O_PATH | O_DIRECTORY | O_CLOEXEC);
	ck_assert_int_ge(cur, 0);
	deep_depth = (int)fx_size(100, DEPTH, 1);
	cur = make_chain(cur, "d", deep_depth);
	strcpy(deep_dir, "deep");
	for (int i = 0; i < deep_depth; i++)
		strcat(deep_dir, "/d");
	int f = openat(cur, "f", O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	ck_assert_int_ge(f, 0);
	close(f);
	close(cur);
	snprintf(deep_file, sizeof(deep_file), "%s/f", deep_dir);
	user_xattrs = fx_user_xattrs(rootfd);
}

static void teardown_deep(void)
{
	close(rootfd);
	rootfd = -1;
	ck_assert_int_eq(fx_rmtree(root_path), 0);
	free(root_path);
	root_path = NULL;
}

/* Set RLIMIT_NOFILE so that exactly `nfree` descriptor numbers are free below
 * it. Returns 0 or -1. */
static int limit_free_fds(int nfree)
{
	int lim = 0, free_below = 0;
	while (free_below < nfree || fcntl(lim, F_GETFD) != -1) {
		if (fcntl(lim, F_GETFD) == -1) {
			if (free_below == nfree)
				break;
			free_below++;
		}
		lim++;
	}
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
		return -1;
	rl.rlim_cur = (rlim_t)lim;
	return setrlimit(RLIMIT_NOFILE, &rl);
}

static int open_beneath(const char *path, uint64_t flags, uint64_t resolve)
{
	struct safe_open_how how = { .flags = flags, .resolve = resolve };
	return safe_openat2(rootfd, path, &how, sizeof(how));
}

static int child_deep_three_free(void *arg)
{
	(void)arg;
	CHILD_CHECK(limit_free_fds(3) == 0, "setrlimit: %s", strerror(errno));
	int fds = fx_fd_count();
	char abs_file[sizeof(deep_file) + 1];
	snprintf(abs_file, sizeof(abs_file), "/%s", deep_file);
	static const struct {
		const char *path;
		uint64_t flags, resolve;
	} cases[] = {
		{ deep_file, O_RDONLY, SAFE_RESOLVE_BENEATH | SAFE_RESOLVE_USERSPACE },
		{ deep_file, O_PATH, SAFE_RESOLVE_IN_ROOT | SAFE_RESOLVE_USERSPACE },
		{ deep_dir, O_RDONLY | O_DIRECTORY, SAFE_RESOLVE_BENEATH | SAFE_RESOLVE_USERSPACE },
		{ deep_file, O_RDONLY, SAFE_RESOLVE_BENEATH | SAFE_RESOLVE_NO_DOTDOT },
		{ deep_file, O_RDWR,
		  SAFE_RESOLVE_BENEATH | SAFE_RESOLVE_NO_SYMLINKS | SAFE_RESOLVE_NO_XDEV |
			  SAFE_RESOLVE_USERSPACE },
		{ deep_file, O_RDONLY, SAFE_RESOLVE_BENEATH },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int fd = open_beneath(cases[i].path, cases[i].flags, cases[i].resolve);
		CHILD_CHECK(fd >= 0, "case %zu (%d components, 3 free fds): %s", i, deep_depth + 1,
			    strerror(errno));
		CHILD_CHECK(fx_same_object(fd, rootfd, cases[i].path), "case %zu: wrong object", i);
		close(fd);
	}
	int fd = open_beneath(abs_file, O_RDONLY, SAFE_RESOLVE_IN_ROOT | SAFE_RESOLVE_USERSPACE);
	CHILD_CHECK(fd >= 0, "absolute deep path under IN_ROOT: %s", strerror(errno));
	CHILD_CHECK(fx_same_object(fd, rootfd, deep_file), "absolute deep path: wrong object");
	close(fd);
	struct stat st;
	CHILD_CHECK(safe_fstatat_beneath(rootfd, deep_file, &st, SAFE_RESOLVE_USERSPACE) == 0,
		    "safe_fstatat_beneath: %s", strerror(errno));
	CHILD_CHECK(fx_fd_count() == fds, "descriptors: %d before, %d after", fds, fx_fd_count());
	return 0;
}

START_TEST(deep_path_with_three_free_fds)
{
	ck_assert_int_eq(sb_run(child_deep_three_free, NULL), 0);
}
END_TEST

/* One operation under fd pressure: succeeds (its effect is checked and
 * undone) or fails with EMFILE; listings and fd count as before. */
static int op_under_pressure(int op, int nfree, bool *succeeded)
{
	char *ls_root = fx_dir_listing(rootfd, ".");
	char *ls_deep = fx_dir_listing(rootfd, deep_dir);
	int fds = fx_fd_count();
	char sub[sizeof(deep_dir) + 16], buf[PATH_MAX];
	int r = -1, err = 0;
	*succeeded = false;
	struct rlimit saved;
	CHILD_CHECK(getrlimit(RLIMIT_NOFILE, &saved) == 0, "getrlimit");
	CHILD_CHECK(limit_free_fds(nfree) == 0, "setrlimit: %s", strerror(errno));

	switch (op) {
	case 0:
	case 1: {
		int fd = open_beneath(deep_file, O_RDONLY,
				      SAFE_RESOLVE_BENEATH | (op ? SAFE_RESOLVE_USERSPACE : 0));
		err = errno;
		if (fd >= 0) {
			CHILD_CHECK(fx_same_object(fd, rootfd, deep_file), "op %d: wrong object",
				    op);
			close(fd);
			r = 0;
		}
		break;
	}
	case 2: {
		struct stat st;
		r = safe_fstatat_beneath(rootfd, deep_file, &st, SAFE_RESOLVE_USERSPACE);
		err = errno;
		break;
	}
	case 3:
		snprintf(sub, sizeof(sub), "%s/new", deep_dir);
		r = safe_mkdirat_beneath(rootfd, sub, 0755, 0);
		err = errno;
		if (r == 0)
			CHILD_CHECK(unlinkat(rootfd, sub, AT_REMOVEDIR) == 0, "rmdir: %s",
				    strerror(errno));
		break;
	case 4: {
		/* (without user xattrs on this filesystem: none, the descriptors
		 * are the point) */
		static const struct safe_xattr xa[] = { { "user.k", "v", 1 } };
		snprintf(sub, sizeof(sub), "%s/t", deep_dir);
		int fd = safe_tmpfile_xattr(rootfd, sub, 0640, xa, user_xattrs ? 1 : 0, 0);
		err = errno;
		if (fd >= 0) {
			close(fd);
			CHILD_CHECK(unlinkat(rootfd, sub, 0) == 0, "unlink: %s", strerror(errno));
			r = 0;
		}
		break;
	}
	case 5: {
		DIR *d = safe_opendir_beneath(rootfd, deep_dir, 0);
		err = errno;
		if (d) {
			closedir(d);
			r = 0;
		}
		break;
	}
	case 6:
		r = safe_unlinkat_beneath(rootfd, "victim", 0);
		err = errno;
		if (r == 0) {
			int fd = openat(rootfd, "victim", O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC,
					0644);
			CHILD_CHECK(fd >= 0, "recreate: %s", strerror(errno));
			close(fd);
		}
		break;
	case 7: {
		ssize_t n = safe_realpath_beneath(rootfd, deep_file, buf, sizeof(buf), 0);
		err = errno;
		if (n >= 0) {
			CHILD_CHECK(!strcmp(buf, deep_file), "realpath: %s", buf);
			r = 0;
		}
		break;
	}
	case 8:
		r = safe_renameat_beneath(rootfd, "a", rootfd, "b", SAFE_RENAME_NOREPLACE);
		err = errno;
		if (r == 0)
			CHILD_CHECK(renameat(rootfd, "b", rootfd, "a") == 0, "rename back: %s",
				    strerror(errno));
		break;
	default:
		return 1;
	}
	/* The listings below need descriptors of their own. */
	CHILD_CHECK(setrlimit(RLIMIT_NOFILE, &saved) == 0, "setrlimit: %s", strerror(errno));
	if (r == 0) {
		*succeeded = true;
	} else {
		CHILD_CHECK(err == EMFILE,
			    "op %d with %d free fds: %s (expected success or EMFILE)", op, nfree,
			    strerror(err));
	}
	char *ls_root2 = fx_dir_listing(rootfd, ".");
	char *ls_deep2 = fx_dir_listing(rootfd, deep_dir);
	CHILD_CHECK(!strcmp(ls_root, ls_root2) && !strcmp(ls_deep, ls_deep2),
		    "op %d with %d free fds changed the tree", op, nfree);
	free(ls_root);
	free(ls_root2);
	free(ls_deep);
	free(ls_deep2);
	CHILD_CHECK(fx_fd_count() == fds, "op %d with %d free fds: descriptors %d -> %d", op, nfree,
		    fds, fx_fd_count());
	return 0;
}

#define N_OPS 9

struct pressure_params {
	int nfree;
};

static int child_pressure(void *arg)
{
	const struct pressure_params *p = arg;
	int ok = 0;
	for (int op = 0; op < N_OPS; op++) {
		bool succeeded;
		if (op_under_pressure(op, p->nfree, &succeeded))
			return 1;
		ok += succeeded;
		/* nothing can work without a single descriptor */
		CHILD_CHECK(p->nfree > 0 || !succeeded, "op %d worked with no free descriptor", op);
	}
	/* with 3 free, the walker open (op 1) and fstatat (op 2) must work */
	if (p->nfree == 3)
		CHILD_CHECK(ok >= 2, "only %d operations worked with 3 free descriptors", ok);
	return 0;
}

START_TEST(operations_under_fd_pressure)
{
	for (int nfree = 0; nfree <= 3; nfree++) {
		struct pressure_params p = { nfree };
		ck_assert_msg(sb_run(child_pressure, &p) == 0, "with %d free descriptors", nfree);
	}
}
END_TEST

/* ---------------------------------------------------------------- procfs under fd pressure */

#ifndef SYS_fchmodat2
#define SYS_fchmodat2 452
#endif
#ifndef SYS_getxattrat
#define SYS_getxattrat 464
#endif

/*
 * Every path that needs the verified procfs (reopen, the tmpfile link through
 * /proc, the chmod, xattr and utimensat fallbacks), forced onto it by
 * seccomp, and realpath through a directory it may search but not read, with 0..PF_MAX_FREE free descriptors: it works
 * or fails with EMFILE, never ENXIO ("no usable procfs"), which a caller
 * could take as a permanent answer.
 */
#define PF_MAX_FREE 8
#define PF_OPS 6

static int procfs_op(int op, int objfd, int *err)
{
	static const struct safe_xattr xa[] = { { "user.k", "v", 1 } };
	char buf[PATH_MAX];
	int r = -1;
	errno = 0;
	switch (op) {
	case 0: {
		int fd = safe_reopen(objfd, O_RDONLY);
		if (fd >= 0) {
			close(fd);
			r = 0;
		}
		break;
	}
	case 1: {
		int fd = safe_tmpfile_xattr(rootfd, "t", 0640, xa, 1, 0);
		if (fd >= 0) {
			close(fd);
			r = unlinkat(rootfd, "t", 0);
		}
		break;
	}
	case 2:
		r = safe_fchmodat_beneath(rootfd, "victim", 0640, 0);
		break;
	case 3:
		r = safe_setxattr_beneath(rootfd, "victim", "user.k", "v", 1, 0, 0) < 0 ? -1 : 0;
		break;
	case 4:
		r = safe_utimensat_beneath(rootfd, ".", NULL, 0);
		break;
	case 5: /* unprivileged: "locked" cannot be read, which the name needs not */
		r = safe_realpath_beneath(rootfd, "locked/d", buf, sizeof(buf), 0) < 0 ? -1 : 0;
		if (r == 0 && strcmp(buf, "locked/d") != 0) {
			fprintf(stderr, "realpath gave %s\n", buf);
			return -2;
		}
		break;
	}
	*err = errno;
	return r;
}

static int child_procfs_pressure(void *arg)
{
	bool unpriv = arg != NULL;
	if (unpriv)
		CHILD_CHECK(sb_drop_privileges() == 0, "drop: %s", strerror(errno));
	struct sb_rule rules[] = {
		SB_WHEN(SYS_linkat, ENOENT, 4, AT_EMPTY_PATH, AT_EMPTY_PATH),
		SB_ALWAYS(SYS_fchmodat2, ENOSYS),
		SB_ALWAYS(SYS_getxattrat, ENOSYS),
		SB_ALWAYS(SYS_getxattrat + 1, ENOSYS), /* setxattrat */
		SB_WHEN(SYS_utimensat, EINVAL, 3, AT_EMPTY_PATH, AT_EMPTY_PATH),
	};
	CHILD_CHECK(sb_seccomp(rules, sizeof(rules) / sizeof(rules[0])) == 0, "seccomp: %s",
		    strerror(errno));
	int objfd = openat(rootfd, "victim", O_PATH | O_CLOEXEC);
	CHILD_CHECK(objfd >= 0, "open victim: %s", strerror(errno));
	int worked[PF_OPS] = { 0 }, emfile[PF_OPS] = { 0 };
	for (int op = unpriv ? 5 : 0; op < (unpriv ? PF_OPS : 5); op++) {
		for (int nfree = 0; nfree <= PF_MAX_FREE; nfree++) {
			char *ls = fx_dir_listing(rootfd, ".");
			int fds = fx_fd_count();
			struct rlimit saved;
			CHILD_CHECK(getrlimit(RLIMIT_NOFILE, &saved) == 0, "getrlimit");
			CHILD_CHECK(limit_free_fds(nfree) == 0, "setrlimit: %s", strerror(errno));
			int err = 0;
			int r = procfs_op(op, objfd, &err);
			CHILD_CHECK(setrlimit(RLIMIT_NOFILE, &saved) == 0, "setrlimit");
			CHILD_CHECK(r != -2, "op %d: wrong result", op);
			CHILD_CHECK(r == 0 || err == EMFILE,
				    "op %d with %d free fds: %s (expected success or EMFILE)", op,
				    nfree, strerror(err));
			worked[op] += r == 0;
			emfile[op] += r != 0;
			char *ls2 = fx_dir_listing(rootfd, ".");
			CHILD_CHECK(!strcmp(ls, ls2), "op %d with %d free fds changed the tree", op,
				    nfree);
			free(ls);
			free(ls2);
			CHILD_CHECK(fx_fd_count() == fds, "op %d with %d free fds: fds %d -> %d", op,
				    nfree, fds, fx_fd_count());
		}
	}
	/* each op met both outcomes: the limits did bite, and were enough */
	for (int op = unpriv ? 5 : 0; op < (unpriv ? PF_OPS : 5); op++)
		CHILD_CHECK(worked[op] && emfile[op], "op %d: %d worked, %d EMFILE", op,
			    worked[op], emfile[op]);
	close(objfd);
	return 0;
}

START_TEST(procfs_paths_under_fd_pressure)
{
	if (!fx_user_xattrs(rootfd)) /* op 3 sets one */
		fx_skip(FX_NO_USER_XATTRS);
	ck_assert_int_eq(sb_run(child_procfs_pressure, NULL), 0);
}
END_TEST

/* The same for realpath as uid 65534 through a directory it may search but
 * not read (root: it drops to 65534 in a sandbox child). */
START_TEST(procfs_realpath_under_fd_pressure)
{
	FX_REQUIRE_ROOT("the child drops to uid 65534 under a directory owned by root");
	ck_assert_int_eq(fchmod(rootfd, 0755), 0);
	ck_assert_int_eq(mkdirat(rootfd, "locked", 0711), 0);
	ck_assert_int_eq(mkdirat(rootfd, "locked/d", 0755), 0);
	int r = sb_run(child_procfs_pressure, (void *)1);
	ck_assert_int_eq(unlinkat(rootfd, "locked/d", AT_REMOVEDIR), 0);
	ck_assert_int_eq(unlinkat(rootfd, "locked", AT_REMOVEDIR), 0);
	ck_assert_int_eq(r, 0);
}
END_TEST

/* ---------------------------------------------------------------- mount ids under pressure */

/*
 * A bind mount, inside the tree, of a directory outside the root on the same
 * filesystem (one st_dev: only mount ids tell them apart). The kernel is made
 * to look like one where only the procfs fdinfo entry can tell a mount id
 * (statx ENOSYS as before 4.11, name_to_handle_at EOPNOTSUPP as on a
 * filesystem without file handles), with openat2 (MI_FDINFO_OPENAT2) or
 * without (MI_FDINFO: before 5.6), and then with /proc hidden too
 * (MI_NOTHING: nothing can tell). With 0..MI_MAX_FREE free descriptors:
 * safe_rmtree_beneath() without SAFE_RMTREE_XDEV and NO_XDEV opens (default
 * path and forced walker) never cross the bind mount (nothing outside
 * changes, nothing there opens); reading fdinfo needs 2 more descriptors, and out
 * of them the answer is EMFILE, never a guess: a tree without a mount is
 * removed or EMFILE, never EXDEV, except where nothing can tell (MI_NOTHING:
 * every mount check fails closed with EXDEV).
 */
#define MI_MAX_FREE 40
enum mi_profile { MI_FDINFO, MI_FDINFO_OPENAT2, MI_NOTHING };

/* Open descriptors below `below` (no /proc needed): one poll() of all the
 * numbers, a closed one reports POLLNVAL; number by number where poll()
 * refuses (`below` past RLIMIT_NOFILE, no memory). */
static int mi_fd_count(int below)
{
	int n = 0;
	struct pollfd *p = calloc((size_t)below, sizeof(*p));
	for (int fd = 0; p && fd < below; fd++)
		p[fd].fd = fd;
	if (p && poll(p, (nfds_t)below, 0) >= 0) {
		for (int fd = 0; fd < below; fd++)
			n += !(p[fd].revents & POLLNVAL);
	} else {
		for (int fd = 0; fd < below; fd++)
			n += fcntl(fd, F_GETFD) != -1;
	}
	free(p);
	return n;
}

/*
 * How far mi_fd_count() must look: every descriptor the library can make
 * while limit_free_fds(n) is in force is below that limit, and the limit is
 * at most (highest open number + 1) + n. So one scan of the first 1024
 * numbers before the rounds bounds every later count (41 rounds x 2 counts
 * x 1024 fcntl() calls were a tenth of the suite's system time).
 */
static int mi_fd_span(void)
{
	int top = 0;
	for (int fd = 0; fd < 1024; fd++)
		if (fcntl(fd, F_GETFD) != -1)
			top = fd + 1;
	return top + MI_MAX_FREE + 1;
}

static bool mi_err(int err, int a, int b)
{
	return err == a || err == b;
}

struct mi_tally {
	int ok, emfile, exdev;
};

static void mi_count(struct mi_tally *t, int r, int err)
{
	if (r >= 0)
		t->ok++;
	else if (err == EMFILE)
		t->emfile++;
	else if (err == EXDEV)
		t->exdev++;
}

static char *mi_dir; /* this case's own temporary directory */

static int child_mount_ids(void *arg)
{
	enum mi_profile prof = (enum mi_profile)(intptr_t)arg;
	if (fx_enter_mount_ns() < 0)
		CHILD_SKIP("no private mount namespace here: %s", strerror(errno));
	char base[PATH_MAX], outside[PATH_MAX + 16], p[PATH_MAX + 32];
	snprintf(base, sizeof(base), "%s/mi%d", mi_dir, (int)prof);
	snprintf(outside, sizeof(outside), "%s/outside", base);
	CHILD_CHECK(mkdir(base, 0755) == 0 && mkdir(outside, 0755) == 0, "mkdir: %s",
		    strerror(errno));
	int bfd = open(base, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	CHILD_CHECK(bfd >= 0);
	static const char *const outspec[] = {
		"f outside/o1 x", "d outside/od", "f outside/od/o2 y", "d root", "d root/keep",
		"d root/keep/a",  "f root/keep/a/f z", "d root/keep/b", NULL,
	};
	fx_build(bfd, outspec);
	snprintf(p, sizeof(p), "%s/root/keep/b", base);
	CHILD_CHECK(mount(outside, p, NULL, MS_BIND, NULL) == 0, "bind: %s", strerror(errno));
	/* Per number of free descriptors: m<n> with a bind mount, p<n> without. */
	for (int n = 0; n <= MI_MAX_FREE; n++) {
		char spec[8][32];
		const char *sp[9];
		snprintf(spec[0], 32, "d root/m%d", n);
		snprintf(spec[1], 32, "d root/m%d/a", n);
		snprintf(spec[2], 32, "f root/m%d/a/f z", n);
		snprintf(spec[3], 32, "d root/m%d/b", n);
		snprintf(spec[4], 32, "d root/m%d/c", n);
		snprintf(spec[5], 32, "d root/p%d", n);
		snprintf(spec[6], 32, "d root/p%d/a", n);
		snprintf(spec[7], 32, "f root/p%d/a/f z", n);
		for (int i = 0; i < 8; i++)
			sp[i] = spec[i];
		sp[8] = NULL;
		fx_build(bfd, sp);
		snprintf(p, sizeof(p), "%s/root/m%d/b", base, n);
		CHILD_CHECK(mount(outside, p, NULL, MS_BIND, NULL) == 0, "bind: %s", strerror(errno));
	}
	char *before = fx_tree_snapshot(outside);
	snprintf(p, sizeof(p), "%s/root", base);
	int root = open(p, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	CHILD_CHECK(root >= 0);
	struct stat st;
	CHILD_CHECK(fstatat(root, "m0/b/o1", &st, 0) == 0 && fstatat(root, "keep/b/o1", &st, 0) == 0,
		    "the bind mounts show o1");
	if (prof == MI_NOTHING &&
	    mount("safeopen-noproc", "/proc", "tmpfs", 0, "size=4k,mode=0755") < 0)
		CHILD_SKIP("cannot hide /proc: %s", strerror(errno));
	struct sb_rule rules[] = {
		SB_ALWAYS(SYS_statx, ENOSYS),
		SB_ALWAYS(SYS_name_to_handle_at, EOPNOTSUPP),
		SB_ALWAYS(SYS_openat2, ENOSYS),
	};
	CHILD_CHECK(sb_seccomp(rules, prof == MI_FDINFO_OPENAT2 ? 2 : 3) == 0, "seccomp: %s",
		    strerror(errno));

	struct mi_tally rm = { 0 }, rmp = { 0 }, op = { 0 };
	int span = mi_fd_span();
	for (int n = 0; n <= MI_MAX_FREE; n++) {
		char m[16], pl[16];
		snprintf(m, sizeof(m), "m%d", n);
		snprintf(pl, sizeof(pl), "p%d", n);
		int fds = mi_fd_count(span);
		struct rlimit saved;
		CHILD_CHECK(getrlimit(RLIMIT_NOFILE, &saved) == 0);
		CHILD_CHECK(limit_free_fds(n) == 0, "setrlimit: %s", strerror(errno));
		errno = 0;
		int r = safe_rmtree_beneath(root, m, 0);
		int err = errno;
		errno = 0;
		int rp = safe_rmtree_beneath(root, pl, 0);
		int errp = errno;
		/* NO_XDEV opens: through the bind mount, and beside it. */
		static const char *const across[] = { "b/o1", "b/od/o2", "b/od" };
		static const uint64_t ways[] = { 0, SAFE_RESOLVE_USERSPACE };
		int oerr[2][4], ofd[2][4];
		for (int w = 0; w < 2; w++) {
			for (int k = 0; k < 4; k++) {
				char path[64];
				snprintf(path, sizeof(path), "keep/%s", k < 3 ? across[k] : "a/f");
				struct safe_open_how how = {
					.flags = O_RDONLY | O_CLOEXEC,
					.resolve = SAFE_RESOLVE_BENEATH | SAFE_RESOLVE_NO_XDEV | ways[w],
				};
				errno = 0;
				ofd[w][k] = safe_openat2(root, path, &how, sizeof(how));
				oerr[w][k] = errno;
				if (ofd[w][k] >= 0)
					close(ofd[w][k]);
			}
		}
		CHILD_CHECK(setrlimit(RLIMIT_NOFILE, &saved) == 0, "setrlimit");
		CHILD_CHECK(mi_fd_count(span) == fds, "%d free: descriptors %d -> %d", n, fds,
			    mi_fd_count(span));

		char *after = fx_tree_snapshot(outside);
		CHILD_CHECK(!strcmp(before, after),
			    "profile %d, %d free descriptors: outside the mount changed: rmtree %d (%s)"
			    "\nbefore:\n%s\nafter:\n%s",
			    (int)prof, n, r, strerror(err), before, after);
		free(after);
		/* The tree with a mount: never removed; EXDEV for the mount,
		 * or out of descriptors. */
		CHILD_CHECK(r == -1 && mi_err(err, EXDEV, EMFILE), "profile %d, %d free: rmtree %s: %d %s",
			    (int)prof, n, m, r, strerror(err));
		/* The tree without one: removed or EMFILE; EXDEV only where no
		 * mount id can be learnt at all. */
		CHILD_CHECK(rp == 0 || errp == EMFILE || (prof == MI_NOTHING && errp == EXDEV),
			    "profile %d, %d free: rmtree %s: %d %s", (int)prof, n, pl, rp,
			    strerror(errp));
		if (rp < 0 && errp == EXDEV) { /* the top refused: nothing removed */
			char f[32];
			snprintf(f, sizeof(f), "%s/a/f", pl);
			CHILD_CHECK(faccessat(root, f, F_OK, AT_SYMLINK_NOFOLLOW) == 0,
				    "profile %d, %d free: EXDEV, but %s was removed", (int)prof, n, f);
		}
		mi_count(&rm, r, err);
		mi_count(&rmp, rp, errp);
		for (int w = 0; w < 2; w++) {
			for (int k = 0; k < 4; k++) {
				bool ok = k < 3 ? ofd[w][k] < 0 && mi_err(oerr[w][k], EXDEV, EMFILE)
						: prof == MI_NOTHING
							  ? ofd[w][k] < 0 && mi_err(oerr[w][k], EXDEV, EMFILE)
							  : ofd[w][k] >= 0 || oerr[w][k] == EMFILE;
				CHILD_CHECK(ok, "profile %d, %d free, %s, NO_XDEV open %d: %s",
					    (int)prof, n, w ? "walker" : "default", k,
					    ofd[w][k] >= 0 ? "opened" : strerror(oerr[w][k]));
				mi_count(&op, ofd[w][k], oerr[w][k]);
			}
		}
	}
	free(before);
	/* The tmpfile sweep removes a leftover only on the directory's own
	 * mount: where no mount id can be learnt, none. */
	static const char leftover[] = "keep/.safeopen-AAAAAAAAAAAAAAAA";
	int lf = openat(root, leftover, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0600);
	CHILD_CHECK(lf >= 0, "leftover: %s", strerror(errno));
	close(lf);
	errno = 0;
	int swept = safe_tmpfile_sweep_beneath(root, "keep", 0, 0, NULL);
	CHILD_CHECK(swept == (prof == MI_NOTHING ? 0 : 1), "profile %d: sweep %d (%s)", (int)prof,
		    swept, strerror(errno));
	CHILD_CHECK((faccessat(root, leftover, F_OK, AT_SYMLINK_NOFOLLOW) == 0) ==
			    (prof == MI_NOTHING),
		    "profile %d: leftover %s", (int)prof, prof == MI_NOTHING ? "removed" : "kept");
	/* The limits bit (EMFILE met) and were enough (the other answer met). */
	CHILD_CHECK(rm.emfile && rm.exdev, "rmtree with a mount: %d EMFILE, %d EXDEV", rm.emfile,
		    rm.exdev);
	CHILD_CHECK(rmp.emfile && (prof == MI_NOTHING ? rmp.exdev : rmp.ok),
		    "rmtree without a mount: %d EMFILE, %d removed, %d EXDEV", rmp.emfile, rmp.ok,
		    rmp.exdev);
	CHILD_CHECK(op.emfile && op.exdev && (prof == MI_NOTHING || op.ok),
		    "NO_XDEV opens: %d EMFILE, %d EXDEV, %d opened", op.emfile, op.exdev, op.ok);
	close(root);
	close(bfd);
	return 0;
}

START_TEST(mount_ids_under_fd_pressure)
{
	FX_REQUIRE_ROOT("bind mounts in a private mount namespace");
	static const char *const what[] = { "fdinfo only, no openat2", "fdinfo only, openat2",
					    "no mount id at all" };
	mi_dir = fx_mkdtemp("mountids");
	fx_run_child(child_mount_ids, (void *)(intptr_t)_i, what[_i]);
	ck_assert_int_eq(fx_rmtree(mi_dir), 0);
	free(mi_dir);
	mi_dir = NULL;
}
END_TEST

/* ---------------------------------------------------------------- full tmpfs */

static int tmpfile_enospc(int dirfd, const struct safe_xattr *xa, uint64_t flags)
{
	char *before = fx_dir_listing(dirfd, ".");
	int fds = fx_fd_count();
	int fd = safe_tmpfile_xattr(dirfd, "new", 0644, xa, 1, flags);
	int err = errno;
	if (fd >= 0)
		close(fd);
	CHILD_CHECK(fd < 0 && err == ENOSPC, "flags 0x%llx: expected ENOSPC, got %d (%s)",
		    (unsigned long long)flags, fd, fd < 0 ? strerror(err) : "success");
	char *after = fx_dir_listing(dirfd, ".");
	CHILD_CHECK(!strcmp(before, after), "left behind: before\n%s\nafter\n%s", before, after);
	free(before);
	free(after);
	CHILD_CHECK(fx_fd_count() == fds, "descriptors %d -> %d", fds, fx_fd_count());
	return 0;
}

/* Not root: become root of a new user namespace (which may mount a tmpfs). */
static int enter_userns(void)
{
	uid_t uid = geteuid();
	gid_t gid = getegid();
	char map[64];
	if (unshare(CLONE_NEWUSER | CLONE_NEWNS) < 0)
		return -1;
	static const char *const files[] = { "/proc/self/setgroups", "/proc/self/uid_map",
					     "/proc/self/gid_map" };
	for (int i = 0; i < 3; i++) {
		int n = i == 0 ? snprintf(map, sizeof(map), "deny")
			       : snprintf(map, sizeof(map), "0 %u 1",
					  i == 1 ? (unsigned)uid : (unsigned)gid);
		int fd = open(files[i], O_WRONLY | O_CLOEXEC);
		if (fd < 0)
			return -1;
		ssize_t w = write(fd, map, (size_t)n);
		close(fd);
		if (w != n)
			return -1;
	}
	return 0;
}

static int child_tmpfs(void *arg)
{
	const char *mnt = arg;
	if (geteuid() != 0) {
		if (enter_userns() < 0)
			CHILD_SKIP("no user namespace (%s)", strerror(errno));
	} else {
		CHILD_CHECK(fx_enter_mount_ns() == 0, "unshare: %s", strerror(errno));
	}
	CHILD_CHECK(mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) == 0, "private: %s",
		    strerror(errno));
	CHILD_CHECK(mount("safeopen-full", mnt, "tmpfs", 0, "size=8k,nr_inodes=5,mode=0755") == 0,
		    "mount: %s", strerror(errno));
	int dfd = open(mnt, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	CHILD_CHECK(dfd >= 0, "open: %s", strerror(errno));

	/* Fill the inodes, then the blocks. */
	int nfiles = 0;
	for (;; nfiles++) {
		char name[16];
		snprintf(name, sizeof(name), "fill%d", nfiles);
		int fd = openat(dfd, name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
		if (fd < 0) {
			CHILD_CHECK(errno == ENOSPC, "fill: %s", strerror(errno));
			break;
		}
		if (nfiles == 0) {
			static char block[1024];
			while (write(fd, block, sizeof(block)) > 0)
				;
		}
		close(fd);
	}
	CHILD_CHECK(nfiles >= 3, "only %d files fit", nfiles);
	static const struct safe_xattr small[] = { { "user.k", "v", 1 } };
	static char bigval[4000];
	static const struct safe_xattr big[] = { { "user.big", bigval, sizeof(bigval) } };

	/* No inode left. */
	if (tmpfile_enospc(dfd, small, 0) || tmpfile_enospc(dfd, small, T_NAMED))
		return 1;
	/* Two inodes free, but no room for a 4000-byte xattr (tmpfs charges
	 * xattrs to the same per-inode space budget). */
	CHILD_CHECK(unlinkat(dfd, "fill1", 0) == 0 && unlinkat(dfd, "fill2", 0) == 0, "unlink: %s",
		    strerror(errno));
	if (tmpfile_enospc(dfd, big, 0) || tmpfile_enospc(dfd, big, T_NAMED))
		return 1;
	/* Nothing leaked: a file with a small xattr needs both free slots
	 * (its inode and the xattr's space); one leaked temporary would
	 * make this fail with ENOSPC. */
	int fd = safe_tmpfile_xattr(dfd, "new", 0644, small, 1, 0);
	CHILD_CHECK(fd >= 0, "creation on the last inode: %s", strerror(errno));
	char v[4];
	CHILD_CHECK(fgetxattr(fd, "user.k", v, sizeof(v)) == 1 && v[0] == 'v', "xattr");
	close(fd);
	close(dfd);
	CHILD_CHECK(umount2(mnt, MNT_DETACH) == 0, "umount: %s", strerror(errno));
	return 0;
}

START_TEST(full_tmpfs_enospc)
{
	char *mnt = fx_mkdtemp("limits-tmpfs");
	int rc = sb_run(child_tmpfs, mnt);
	ck_assert_int_eq(rmdir(mnt), 0);
	free(mnt);
	if (rc == FX_CHILD_SKIP)
		fx_skip("tmpfs: no user namespace to mount one in");
	ck_assert_int_eq(rc, 0);
}
END_TEST

/* ------------------------------------------------------------------ cost of ".." */

#define COST_DEPTH 800

static char *cost_path;
static int cost_root = -1;

static void setup_cost(void)
{
	cost_path = fx_mkdtemp("limits-cost");
	cost_root = open(cost_path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	ck_assert_int_ge(cost_root, 0);
	int cur = dup(cost_root);
	ck_assert_int_ge(cur, 0);
	close(make_chain(cur, "a", COST_DEPTH));
	static const char *const spec[] = { "f f x", NULL };
	fx_build(cost_root, spec);
}

static void teardown_cost(void)
{
	close(cost_root);
	cost_root = -1;
	ck_assert_int_eq(fx_rmtree(cost_path), 0);
	free(cost_path);
	cost_path = NULL;
}

/* "a/" x d, "../" x d, then "f" (at most 4,001 bytes for d = 800). */
static char *updown(int d)
{
	char *p = malloc((size_t)d * 5 + 2);
	ck_assert_ptr_nonnull(p);
	char *q = p;
	for (int i = 0; i < d; i++)
		q = stpcpy(q, "a/");
	for (int i = 0; i < d; i++)
		q = stpcpy(q, "../");
	strcpy(q, "f");
	return p;
}

/* Open `path` beneath cost_root with the walker and check it is cost_root/f. */
static int open_f(void *arg)
{
	struct safe_open_how how = { .flags = O_RDONLY,
				     .resolve = SAFE_RESOLVE_BENEATH | SAFE_RESOLVE_USERSPACE };
	int fd = safe_openat2(cost_root, arg, &how, sizeof(how));
	if (fd < 0)
		return 2;
	bool same = fx_same_object(fd, cost_root, "f");
	close(fd);
	return same ? 0 : 3;
}

/* Run fn(arg) in a child traced from its first stop to its exit and count
 * the system calls it enters; -1 when it cannot be traced here (ptrace
 * refused: a sandbox, valgrind). *rc: the child's exit status. */
static long count_syscalls(int (*fn)(void *), void *arg, int *rc)
{
	pid_t pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		if (ptrace(PTRACE_TRACEME, 0, NULL, NULL) < 0)
			_exit(FX_CHILD_SKIP);
		raise(SIGSTOP);
		_exit(fn(arg));
	}
	int st;
	long stops = 0;
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	if (!WIFSTOPPED(st)) {
		*rc = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
		return -1;
	}
	if (ptrace(PTRACE_SETOPTIONS, pid, NULL, (void *)(long)PTRACE_O_TRACESYSGOOD) < 0) {
		kill(pid, SIGKILL);
		waitpid(pid, &st, 0);
		return -1;
	}
	int sig = 0;
	for (;;) {
		if (ptrace(PTRACE_SYSCALL, pid, NULL, (void *)(long)sig) < 0)
			break;
		sig = 0;
		ck_assert_int_eq(waitpid(pid, &st, 0), pid);
		if (WIFEXITED(st) || WIFSIGNALED(st))
			break;
		if (WSTOPSIG(st) == (SIGTRAP | 0x80))
			stops++;
		else if (WSTOPSIG(st) != SIGSTOP && WSTOPSIG(st) != SIGTRAP)
			sig = WSTOPSIG(st);
	}
	*rc = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
	return (stops + 1) / 2; /* an entry and an exit stop per call (exit_group: entry only) */
}

static long cost_of(const char *path)
{
	int rc;
	long n = count_syscalls(open_f, (void *)path, &rc);
	if (n < 0)
		fx_skip("the cost cases need ptrace() of a child (refused here)");
	ck_assert_msg(rc == 0, "%.40s...: the walker did not open root/f (child status %d)", path,
		      rc);
	return n;
}

START_TEST(dotdot_cost_linear)
{
	if (fx_under_valgrind())
		fx_skip("system calls are not counted under valgrind (its own calls would be)");
	long base = cost_of("f");
	long prev = 0;
	/* d = 100, 200, 400 (and 800 under check-long): without the
	 * checkpoints (the CHECKPOINTS mutation) d = 200 already costs more
	 * than 2.5 times d = 100 (902 system calls for 286). */
	const int max_d = (int)fx_size(COST_DEPTH / 2, COST_DEPTH, 1);
	for (int d = 100; d <= max_d; d *= 2) {
		char *p = updown(d);
		long n = cost_of(p) - base;
		long comps = 2L * d;
		fprintf(stderr, "# cost: d=%d, %ld components: %ld system calls (%.2f each)\n", d,
			comps, n, (double)n / (double)comps);
		ck_assert_msg(n <= 4 * comps, "d=%d: %ld system calls for %ld components", d, n,
			      comps);
		if (prev)
			ck_assert_msg(n <= prev * 5 / 2, "d=%d: %ld system calls, %ld at d/2: not linear",
				      d, n, prev);
		prev = n;
		free(p);
	}
}
END_TEST

START_TEST(dotdot_cost_link_bodies)
{
	if (fx_under_valgrind())
		fx_skip("system calls are not counted under valgrind (its own calls would be)");
	char *body = updown(COST_DEPTH);
	body[strlen(body) - 2] = '\0'; /* "a/" x 800, "../" x 800: back where it started */
	ck_assert_int_eq(symlinkat(body, cost_root, "L"), 0);
	free(body);
	/* 2 uses (10 under check-long): without the checkpoints (the
	 * CHECKPOINTS mutation) each use costs about twice the bound: 4 uses
	 * 47,733 calls for 6,404 components, 2 uses 23,879 for 3,202 */
	const int uses = (int)fx_size(2, 10, 1);
	char path[3 * 10 + 2] = "";
	for (int i = 0; i < uses; i++)
		strcat(path, "L/");
	strcat(path, "f");
	long n = cost_of(path) - cost_of("f");
	long comps = (long)uses * (2 * COST_DEPTH + 1);
	fprintf(stderr, "# cost: link body of %d components used %d times: %ld system calls\n",
		2 * COST_DEPTH, uses, n);
	ck_assert_msg(n <= 4 * comps, "%ld system calls for %ld components", n, comps);
	ck_assert_int_eq(unlinkat(cost_root, "L", 0), 0);
}
END_TEST

/* The walker's descriptors are closed in batches, runs of consecutive
 * numbers by one close_range(): a descriptor of the caller lying between
 * two of the walker's (a hole below it, filled by the walk) must survive. */
START_TEST(batched_close_spares_callers_fds)
{
	static const char *const spec[] = { "d b1", "d b1/b2", "d b1/b2/b3", "f b1/b2/b3/f x",
					    NULL };
	fx_build(cost_root, spec);
	/* Two free numbers, the lowest, and the caller's descriptor right
	 * after them: the resolver's descriptors take the holes and a batched
	 * close of a range would reach `keep`. Lower holes the process came
	 * with (descriptors a wrapper or make passed down) are filled first. */
	int fill[64], nfill = 0, hole1;
	for (;;) {
		hole1 = open("/dev/null", O_RDONLY | O_CLOEXEC);
		ck_assert_int_ge(hole1, 0);
		if (fcntl(hole1 + 1, F_GETFD) == -1 && fcntl(hole1 + 2, F_GETFD) == -1)
			break;
		ck_assert_int_lt(nfill, 64);
		fill[nfill++] = hole1;
	}
	int hole2 = open("/dev/null", O_RDONLY | O_CLOEXEC);
	int keep = open(cost_path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	ck_assert_int_eq(hole2, hole1 + 1);
	ck_assert_int_eq(keep, hole2 + 1);
	close(hole1);
	close(hole2);
	static const char *const paths[] = { "b1/b2/b3/f", "b1/b2/b3/../../b2/b3/f",
					     "b1/../b1/b2/../b2/b3/f" };
	for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
		struct safe_open_how how = { .flags = O_RDONLY,
					     .resolve = SAFE_RESOLVE_BENEATH |
							SAFE_RESOLVE_USERSPACE };
		int fd = safe_openat2(cost_root, paths[i], &how, sizeof(how));
		ck_assert_msg(fd >= 0, "%s: %s", paths[i], strerror(errno));
		close(fd);
		ck_assert_msg(fcntl(keep, F_GETFD) >= 0, "%s: the caller's descriptor %d was closed",
			      paths[i], keep);
	}
	struct stat a, b;
	ck_assert_int_eq(fstat(keep, &a), 0);
	ck_assert_int_eq(fstat(cost_root, &b), 0);
	ck_assert_msg(a.st_ino == b.st_ino, "descriptor %d now refers to something else", keep);
	close(keep);
	while (nfill > 0)
		close(fill[--nfill]);
}
END_TEST

static Suite *limits_suite(void)
{
	Suite *s = suite_create("limits");
	TCase *tc = tcase_create("nofile");
	tcase_add_checked_fixture(tc, setup_deep, teardown_deep);
	tcase_add_checked_fixture(tc, fx_fd_setup, fx_fd_teardown);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, deep_path_with_three_free_fds);
	tcase_add_test(tc, operations_under_fd_pressure);
	tcase_add_test(tc, procfs_paths_under_fd_pressure);
	tcase_add_test(tc, procfs_realpath_under_fd_pressure);
	suite_add_tcase(s, tc);

	/* The 800-level chain is built once for the three cases (each runs in
	 * a child of this process; none changes the chain: the link and the
	 * directories they add are their own names), not once per case. */
	tc = tcase_create("cost");
	tcase_add_unchecked_fixture(tc, setup_cost, teardown_cost);
	tcase_add_checked_fixture(tc, fx_fd_setup, fx_fd_teardown);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, dotdot_cost_linear);
	tcase_add_test(tc, dotdot_cost_link_bodies);
	tcase_add_test(tc, batched_close_spares_callers_fds);
	suite_add_tcase(s, tc);

	tc = tcase_create("mounts");
	tcase_add_checked_fixture(tc, fx_fd_setup, fx_fd_teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_loop_test(tc, mount_ids_under_fd_pressure, MI_FDINFO, MI_NOTHING + 1);
	suite_add_tcase(s, tc);

	tc = tcase_create("tmpfs");
	tcase_add_checked_fixture(tc, fx_fd_setup, fx_fd_teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, full_tmpfs_enospc);
	suite_add_tcase(s, tc);
	return s;
}

FX_MAIN(limits_suite)
