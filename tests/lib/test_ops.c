/* SPDX-License-Identifier: MIT */
/*
 * Suite "ops": the operations beneath a root (attributes and reopen, rmtree
 * and realpath have their own suites, test_ops_attr, test_rmtree and
 * test_realpath, in the same environment).
 *
 * Every test builds a fresh temporary directory with two siblings (ops-env.h):
 * "root" (the dirfd handed to the library, holding an adversarial tree) and
 * "outside" (what must never be touched: snapshots of it are compared before
 * and after). Loop tests run each case with the openat2 fast path (i = 0)
 * and with SAFE_RESOLVE_USERSPACE (i = 1); some also loop over the scope.
 *
 * The refusals are tables of named rows, each run by run_refusals() against
 * the kernel's own call where that is a fair oracle. The last part takes the
 * calls of the 1.0 API (mkdir -p, mknod, open_parent, replace, rename and
 * link across two roots, the resolve bits every operation takes).
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
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "fixture.h"
#include "safeopen.h"
#include "ops-env.h"
#include "sandbox.h"

/* ---------------------------------------------------------------- every operation, one shape */

struct op {
	const char *name;
	int (*fn)(int dirfd, const char *path, uint64_t flags);
	bool follows;     /* follows a trailing symlink: trailing escapes apply */
	bool inroot_ok;   /* under IN_ROOT the mirrored path may be created */
};

static int op_stat(int d, const char *p, uint64_t f)
{
	struct stat st;
	return safe_fstatat_beneath(d, p, &st, f);
}
static int op_stat_follow(int d, const char *p, uint64_t f)
{
	return op_stat(d, p, f | SAFE_FOLLOW);
}
static int op_statx(int d, const char *p, uint64_t f)
{
	struct statx stx;
	return safe_statx_beneath(d, p, f, STATX_BASIC_STATS, &stx);
}
static int op_statx_follow(int d, const char *p, uint64_t f)
{
	return op_statx(d, p, f | SAFE_FOLLOW);
}
static int op_opendir(int d, const char *p, uint64_t f)
{
	DIR *dir = safe_opendir_beneath(d, p, f);
	if (!dir)
		return -1;
	closedir(dir);
	return 0;
}
static int op_mkdir(int d, const char *p, uint64_t f)
{
	return safe_mkdirat_beneath(d, p, 0755, f);
}
static int op_mkdir_p(int d, const char *p, uint64_t f)
{
	int fd = safe_mkdir_all_beneath(d, p, 0755, f);
	if (fd >= 0)
		close(fd);
	return fd;
}
static int op_unlink(int d, const char *p, uint64_t f)
{
	return safe_unlinkat_beneath(d, p, f);
}
static int op_rmdir(int d, const char *p, uint64_t f)
{
	return safe_unlinkat_beneath(d, p, f | SAFE_REMOVEDIR);
}
static int op_rmtree(int d, const char *p, uint64_t f)
{
	return safe_rmtree_beneath(d, p, f);
}
static int op_rename_from(int d, const char *p, uint64_t f)
{
	return safe_renameat_beneath(d, p, d, "renamed", f);
}
static int op_rename_to(int d, const char *p, uint64_t f)
{
	return safe_renameat_beneath(d, "file", d, p, f);
}
static int op_rename_noreplace(int d, const char *p, uint64_t f)
{
	return safe_renameat_beneath(d, "file", d, p, f | SAFE_RENAME_NOREPLACE);
}
static int op_rename_exchange(int d, const char *p, uint64_t f)
{
	return safe_renameat_beneath(d, "file", d, p, f | SAFE_RENAME_EXCHANGE);
}
static int op_link_from(int d, const char *p, uint64_t f)
{
	return safe_linkat_beneath(d, p, d, "linked", f);
}
static int op_link_from_follow(int d, const char *p, uint64_t f)
{
	return safe_linkat_beneath(d, p, d, "linked", f | SAFE_FOLLOW);
}
static int op_link_to(int d, const char *p, uint64_t f)
{
	return safe_linkat_beneath(d, "file", d, p, f);
}
static int op_symlink(int d, const char *p, uint64_t f)
{
	return safe_symlinkat_beneath("file", d, p, f);
}
static int op_readlink(int d, const char *p, uint64_t f)
{
	char buf[64];
	return (int)safe_readlinkat_beneath(d, p, buf, sizeof(buf), f);
}
static int op_chmod(int d, const char *p, uint64_t f)
{
	return safe_fchmodat_beneath(d, p, 0600, f);
}
static int op_chmod_follow(int d, const char *p, uint64_t f)
{
	return safe_fchmodat_beneath(d, p, 0600, f | SAFE_FOLLOW);
}
static int op_chown(int d, const char *p, uint64_t f)
{
	return safe_fchownat_beneath(d, p, 65534, 65534, f);
}
static int op_chown_follow(int d, const char *p, uint64_t f)
{
	return safe_fchownat_beneath(d, p, 65534, 65534, f | SAFE_FOLLOW);
}
static int op_utimens(int d, const char *p, uint64_t f)
{
	return safe_utimensat_beneath(d, p, NULL, f);
}
static int op_utimens_follow(int d, const char *p, uint64_t f)
{
	return safe_utimensat_beneath(d, p, NULL, f | SAFE_FOLLOW);
}
static int op_getxattr(int d, const char *p, uint64_t f)
{
	char v[16];
	return (int)safe_getxattr_beneath(d, p, "user.x", v, sizeof(v), f);
}
static int op_getxattr_follow(int d, const char *p, uint64_t f)
{
	return op_getxattr(d, p, f | SAFE_FOLLOW);
}
static int op_setxattr(int d, const char *p, uint64_t f)
{
	return safe_setxattr_beneath(d, p, "user.x", "v", 1, 0, f);
}
static int op_setxattr_follow(int d, const char *p, uint64_t f)
{
	return op_setxattr(d, p, f | SAFE_FOLLOW);
}
static int op_listxattr(int d, const char *p, uint64_t f)
{
	char v[256];
	return (int)safe_listxattr_beneath(d, p, v, sizeof(v), f | SAFE_FOLLOW);
}
static int op_removexattr(int d, const char *p, uint64_t f)
{
	return safe_removexattr_beneath(d, p, "user.x", f | SAFE_FOLLOW);
}
static int op_mknod(int d, const char *p, uint64_t f)
{
	return safe_mknodat_beneath(d, p, S_IFIFO | 0644, 0, f);
}
static int op_open_parent(int d, const char *p, uint64_t f)
{
	char name[NAME_MAX + 1];
	int fd = safe_open_parent_beneath(d, p, f, name, sizeof(name));
	if (fd >= 0)
		close(fd);
	return fd;
}
static int op_realpath(int d, const char *p, uint64_t f)
{
	char buf[PATH_MAX];
	return (int)safe_realpath_beneath(d, p, buf, sizeof(buf), f);
}

static const struct op ops[] = {
	{ "stat", op_stat, false, false },
	{ "stat-follow", op_stat_follow, true, false },
	{ "statx", op_statx, false, false },
	{ "statx-follow", op_statx_follow, true, false },
	{ "opendir", op_opendir, true, false },
	{ "mkdir", op_mkdir, false, false },
	{ "mkdir-p", op_mkdir_p, true, true },
	{ "unlink", op_unlink, false, false },
	{ "rmdir", op_rmdir, false, false },
	{ "rmtree", op_rmtree, false, false },
	{ "rename-from", op_rename_from, false, false },
	{ "rename-to", op_rename_to, false, false },
	{ "rename-noreplace", op_rename_noreplace, false, false },
	{ "rename-exchange", op_rename_exchange, false, false },
	{ "link-from", op_link_from, false, false },
	{ "link-from-follow", op_link_from_follow, true, false },
	{ "link-to", op_link_to, false, false },
	{ "symlink", op_symlink, false, false },
	{ "readlink", op_readlink, false, false },
	{ "chmod", op_chmod, false, false },
	{ "chmod-follow", op_chmod_follow, true, false },
	{ "chown", op_chown, false, false },
	{ "chown-follow", op_chown_follow, true, false },
	{ "utimens", op_utimens, false, false },
	{ "utimens-follow", op_utimens_follow, true, false },
	{ "getxattr", op_getxattr, false, false },
	{ "getxattr-follow", op_getxattr_follow, true, false },
	{ "setxattr", op_setxattr, false, false },
	{ "setxattr-follow", op_setxattr_follow, true, false },
	{ "listxattr-follow", op_listxattr, true, false },
	{ "removexattr-follow", op_removexattr, true, false },
	{ "realpath", op_realpath, true, false },
	{ "mknod", op_mknod, false, false },
	{ "open-parent", op_open_parent, false, false },
};
#define N_OPS (int)(sizeof(ops) / sizeof(ops[0]))

/* Escapes through a non-final component: every operation must refuse them. */
static const char *const escape_prefixes[] = {
	"../outside/", "@/", "up/", "abs/", "deep/", "a/../../outside/", "link_dir/../../outside/",
	"a/b/../../../outside/",
};
/* Escapes through a trailing symlink: only for operations that follow it. */
static const char *const trailing_escapes[] = {
	"up", "abs", "deep", "link_up_victim", "abs_victim", "dangling_out", "dangling_abs",
};

/* Remove what an IN_ROOT mkdir -p may legitimately create beneath root. */
static void clean_mirrors(void)
{
	char p[PATH_MAX];
	pj(p, E.root, "outside");
	(void)fx_rmtree(p);
	char first[NAME_MAX + 1];
	size_t n = strcspn(E.base + 1, "/");
	memcpy(first, E.base + 1, n);
	first[n] = '\0';
	pj(p, E.root, first);
	(void)fx_rmtree(p);
}

/*
 * Loop index: bit 0 = walker, bit 1 = IN_ROOT. Under BENEATH every escape is
 * EXDEV; under IN_ROOT the same paths stay inside (".." stops at the root,
 * absolute paths restart there) and name nothing: ENOENT, except mkdir -p,
 * which creates the mirrored directories beneath the root. Either way the
 * outside tree and (for failures) the root tree are unchanged.
 */
START_TEST(escapes_touch_nothing)
{
	env_open();
	bool in_root = _i & 2;
	uint64_t scope = in_root ? SAFE_RESOLVE_IN_ROOT : SAFE_RESOLVE_BENEATH;
	uint64_t flags = scope | MODE(_i);
	for (int o = 0; o < N_OPS; o++) {
		const struct op *op = &ops[o];
		char *out_before = fx_tree_snapshot(E.outside);
		char *root_before = fx_tree_snapshot(E.root);
		bool created = false;
		for (size_t k = 0; k < sizeof(escape_prefixes) / sizeof(escape_prefixes[0]); k++) {
			for (int t = 0; t < 2; t++) {
				char path[PATH_MAX];
				const char *pre = escape_prefixes[k];
				const char *tgt = t ? "vdir" : "victim";
				if (pre[0] == '@') {
					pj(path, E.outside, tgt);
				} else {
					strcpy(path, pre);
					strcat(path, tgt);
				}
				errno = 0;
				int r = op->fn(E.rootfd, path, flags);
				int e = errno;
				if (in_root && op->inroot_ok && r >= 0) {
					created = true;
					continue;
				}
				int want = in_root ? ENOENT : EXDEV;
				FX_ASSERT(r == -1 && e == want, "%s(%s) %s: got %d errno %s",
					  op->name, path, in_root ? "IN_ROOT" : "BENEATH", r,
					  strerror(e));
			}
		}
		if (op->follows) {
			size_t nt = sizeof(trailing_escapes) / sizeof(trailing_escapes[0]);
			for (size_t k = 0; k < nt; k++) {
				const char *path = trailing_escapes[k];
				errno = 0;
				int r = op->fn(E.rootfd, path, flags);
				int e = errno;
				if (in_root && op->inroot_ok && r >= 0) {
					created = true;
					continue;
				}
				int want = in_root ? ENOENT : EXDEV;
				/* Under IN_ROOT the link resolves to nothing inside:
				 * for mkdir -p its name exists as a non-directory. */
				if (op->fn == op_mkdir_p && in_root)
					want = EEXIST;
				FX_ASSERT(r == -1 && e == want, "%s(%s) %s: got %d errno %s",
					  op->name, path, in_root ? "IN_ROOT" : "BENEATH", r,
					  strerror(e));
			}
		}
		char *out_after = fx_tree_snapshot(E.outside);
		ck_assert_msg(!strcmp(out_before, out_after), "%s changed outside:\n%s\nvs\n%s",
			      op->name, out_before, out_after);
		if (created) {
			clean_mirrors();
		} else {
			char *root_after = fx_tree_snapshot(E.root);
			ck_assert_msg(!strcmp(root_before, root_after), "%s changed the root",
				      op->name);
			free(root_after);
		}
		free(out_before);
		free(out_after);
		free(root_before);
	}
	env_close();
}
END_TEST

/* Magic links (/proc/self/fd/N) in the path: EXDEV when scoped, ELOOP with
 * NO_MAGICLINKS; the object behind (outside) is untouched. */
START_TEST(magic_links_refused)
{
	env_open();
	int procfd = open("/proc/self", O_PATH | O_DIRECTORY | O_CLOEXEC);
	ck_assert_int_ge(procfd, 0);
	for (int nm = 0; nm < 2; nm++) {
		uint64_t flags = (_i & 2 ? SAFE_RESOLVE_IN_ROOT : SAFE_RESOLVE_BENEATH) | MODE(_i) |
				 (nm ? SAFE_RESOLVE_NO_MAGICLINKS : 0);
		int want = nm ? ELOOP : EXDEV;
		for (int o = 0; o < N_OPS; o++) {
			char *before = fx_tree_snapshot(E.outside);
			char path[64];
			for (int t = 0; t < 3; t++) {
				if (t == 2 && !ops[o].follows)
					continue;
				if (t == 2)
					snprintf(path, sizeof(path), "fd/%d", E.outfd);
				else
					snprintf(path, sizeof(path), "fd/%d/%s", E.outfd,
						 t ? "vdir" : "victim");
				errno = 0;
				int r = ops[o].fn(procfd, path, flags);
				int e = errno;
				ck_assert_msg(r == -1 && e == want, "%s(%s): got %d errno %s",
					      ops[o].name, path, r, strerror(e));
			}
			char *after = fx_tree_snapshot(E.outside);
			ck_assert_str_eq(before, after);
			free(before);
			free(after);
		}
	}
	close(procfd);
	env_close();
}
END_TEST

/* Bad arguments: exact errno, nothing changed. */
/*
 * The arguments each call checks itself, as named rows: a flag that belongs
 * to another operation, a NULL buffer or second path, NO_DOTDOT on any "..",
 * the last component included. Each row is one call (argument_call()).
 */
struct argument_row {
	const char *name;
	int err;
};

static const struct argument_row argument_refusals[] = {
	{ "unlink: SAFE_FOLLOW is not its flag", EINVAL },
	{ "mkdir: SAFE_REMOVEDIR is not its flag", EINVAL },
	{ "symlink: SAFE_FOLLOW is not its flag", EINVAL },
	{ "readlink: SAFE_FOLLOW is not its flag", EINVAL },
	{ "opendir: SAFE_REMOVEDIR is not its flag", EINVAL },
	{ "opendir: SAFE_REPLACE is not its flag", EINVAL },
	{ "mkdir: SAFE_REPLACE is not its flag", EINVAL },
	{ "link: SAFE_REPLACE is not its flag", EINVAL },
	{ "rmtree: SAFE_REMOVEDIR is not its flag", EINVAL },
	{ "rename: NOREPLACE and EXCHANGE together", EINVAL },
	{ "realpath: SAFE_FOLLOW is not its flag", EINVAL },
	{ "fstatat: a NULL struct stat", EFAULT },
	{ "statx: a NULL struct statx", EFAULT },
	{ "rename: a NULL new path", EFAULT },
	{ "link: a NULL new path", EFAULT },
	{ "symlink: a NULL body", EFAULT },
	{ "readlink: a NULL buffer", EFAULT },
	{ "realpath: a NULL buffer", EFAULT },
	{ "getxattr: a NULL name", EFAULT },
	{ "getxattr: a NULL buffer with a size", EFAULT },
	{ "setxattr: a NULL name", EFAULT },
	{ "removexattr: a NULL name", EFAULT },
	{ "statx: a reserved mask bit", EINVAL },
	{ "mkdir: NO_DOTDOT, a last \"..\"", EXDEV },
	{ "rmdir: NO_DOTDOT, a last \"..\"", EXDEV },
	{ "rename: NO_DOTDOT, a last \"..\"", EXDEV },
	{ "fstatat: NO_DOTDOT, a last \"..\"", EXDEV },
	{ "rmtree: NO_DOTDOT, \"..\" in the middle", EXDEV },
	{ "mkdir -p: NO_DOTDOT, \"..\" in the middle", EXDEV },
	{ "realpath: NO_DOTDOT, a last \"..\"", EXDEV },
	{ "readlink: a buffer of size 0", EINVAL },
	{ "symlink: an empty body", ENOENT },
};

/* The call of argument_refusals[k]; -1 with errno, or 0. */
static int argument_call(size_t k, uint64_t m)
{
	int r = E.rootfd;
	uint64_t nd = m | SAFE_RESOLVE_BENEATH | SAFE_RESOLVE_NO_DOTDOT;
	char buf[8] = { 0 };
	struct stat st;
	struct statx sx;
	int fd;
	switch (k) {
	case 0: return safe_unlinkat_beneath(r, "file", m | SAFE_FOLLOW);
	case 1: return safe_mkdirat_beneath(r, "x", 0755, m | SAFE_REMOVEDIR);
	case 2: return safe_symlinkat_beneath("x", r, "y", m | SAFE_FOLLOW);
	case 3: return (int)safe_readlinkat_beneath(r, "chain", buf, 8, m | SAFE_FOLLOW);
	case 4: return safe_opendir_beneath(r, "a", m | SAFE_REMOVEDIR) ? 0 : -1;
	case 5: return safe_opendir_beneath(r, "a", m | SAFE_REPLACE) ? 0 : -1;
	case 6: return safe_mkdirat_beneath(r, "x", 0755, m | SAFE_REPLACE);
	case 7: return safe_linkat_beneath(r, "file", r, "x", m | SAFE_REPLACE);
	case 8: return safe_rmtree_beneath(r, "a", m | SAFE_REMOVEDIR);
	case 9:
		return safe_renameat_beneath(r, "file", r, "x",
					     m | SAFE_RENAME_NOREPLACE | SAFE_RENAME_EXCHANGE);
	case 10: return (int)safe_realpath_beneath(r, "file", buf, 8, m | SAFE_FOLLOW);
	case 11: return safe_fstatat_beneath(r, "file", NULL, m);
	case 12: return safe_statx_beneath(r, "file", m, STATX_BASIC_STATS, NULL);
	case 13: return safe_renameat_beneath(r, "file", r, NULL, m);
	case 14: return safe_linkat_beneath(r, "file", r, NULL, m);
	case 15: return safe_symlinkat_beneath(NULL, r, "x", m);
	case 16: return (int)safe_readlinkat_beneath(r, "chain", NULL, 8, m);
	case 17: return (int)safe_realpath_beneath(r, "file", NULL, 8, m);
	case 18: return (int)safe_getxattr_beneath(r, "file", NULL, NULL, 0, m);
	case 19: return (int)safe_getxattr_beneath(r, "file", "user.x", NULL, 8, m);
	case 20: return safe_setxattr_beneath(r, "file", NULL, "v", 1, 0, m);
	case 21: return safe_removexattr_beneath(r, "file", NULL, m);
	case 22: return safe_statx_beneath(r, "file", m, 0x80000000U, &sx);
	case 23: return safe_mkdirat_beneath(r, "a/..", 0755, nd);
	case 24: return safe_unlinkat_beneath(r, "a/..", nd | SAFE_REMOVEDIR);
	case 25: return safe_renameat_beneath(r, "a/b/..", r, "x", nd);
	case 26: return safe_fstatat_beneath(r, "a/..", &st, nd);
	case 27: return safe_rmtree_beneath(r, "a/b/../b", nd);
	case 28:
		fd = safe_mkdir_all_beneath(r, "a/../q", 0755, nd);
		if (fd >= 0)
			close(fd);
		return fd < 0 ? -1 : 0;
	case 29: return (int)safe_realpath_beneath(r, "a/..", buf, 8, nd);
	case 30: return (int)safe_readlinkat_beneath(r, "chain", buf, 0, m);
	case 31: return safe_symlinkat_beneath("", r, "x", m);
	}
	ck_abort_msg("argument row %zu has no call", k);
	return 0;
}

static void argument_try(size_t k, uint64_t m, struct refusal_try *t)
{
	t->e = argument_call(k, m) < 0 ? errno : 0;
	t->want = argument_refusals[k].err;
	snprintf(t->name, sizeof(t->name), "argument row \"%s\"", argument_refusals[k].name);
}

START_TEST(argument_errors)
{
	env_open();
	uint64_t m = MODE(_i);
	char *before = fx_tree_snapshot(E.base);
	for (int o = 0; o < N_OPS; o++) {
		const struct op *op = &ops[o];
		errno = 0;
		ck_assert_msg(op->fn(E.rootfd, "", m) == -1 && errno == ENOENT, "%s(\"\")",
			      op->name);
		errno = 0;
		ck_assert_msg(op->fn(E.rootfd, NULL, m) == -1 && errno == EFAULT, "%s(NULL)",
			      op->name);
		errno = 0;
		ck_assert_msg(op->fn(E.rootfd, "file", m | (1ULL << 62)) == -1 && errno == EINVAL,
			      "%s unknown flag", op->name);
		errno = 0;
		ck_assert_msg(op->fn(E.rootfd, "file",
				     m | SAFE_RESOLVE_BENEATH | SAFE_RESOLVE_IN_ROOT) == -1 &&
				      errno == EINVAL,
			      "%s BENEATH|IN_ROOT", op->name);
		errno = 0;
		ck_assert_msg(op->fn(-1, "file", m) == -1 && errno == EBADF, "%s bad dirfd",
			      op->name);
		errno = 0;
		ck_assert_msg(op->fn == op_mkdir_p || /* creates it: see mkdir_parents_cases */
				      (op->fn(E.rootfd, "nonexist/x", m) == -1 && errno == ENOENT),
			      "%s missing parent", op->name);
		errno = 0;
		ck_assert_msg(op->fn(E.rootfd, "file/x", m) == -1 && errno == ENOTDIR,
			      "%s file as parent", op->name);
		char longname[NAME_MAX + 2];
		memset(longname, 'n', sizeof(longname) - 1);
		longname[sizeof(longname) - 1] = '\0';
		errno = 0;
		/* open-parent does not look the name up: a NAME_MAX + 1 buffer is
		 * too small for it (ERANGE); see open_parent_cases. */
		int want = op->fn == op_open_parent ? ERANGE : ENAMETOOLONG;
		ck_assert_msg(op->fn(E.rootfd, longname, m) == -1 && errno == want,
			      "%s long name", op->name);
	}
	run_refusals(E.base, N_ROWS(argument_refusals), m, argument_try);
	char *after = fx_tree_snapshot(E.base);
	ck_assert_str_eq(before, after);
	free(before);
	free(after);
	env_close();
}
END_TEST


/* ---------------------------------------------------------------- stat, statx, opendir */

/*
 * safe_fstatat_beneath() as named rows: the path, the flags, the expected
 * type (or errno) and, where it matters, the name of the object it must be.
 * Each row is also asked of the kernel (openat2 with the same scope, O_PATH,
 * O_NOFOLLOW unless SAFE_FOLLOW, then fstat: the object fstatat would
 * report), and all answers must agree; every failure names its row.
 */
struct stat_row {
	const char *name;
	const char *path;
	uint64_t flags;    /* SAFE_FOLLOW and RESOLVE bits; BENEATH when no scope */
	int err;           /* expected errno, or 0 */
	mode_t type;       /* expected S_IFMT when err == 0 */
	const char *is;    /* when set: the same inode as this name (not followed) */
};

#define FOLLOW SAFE_FOLLOW
#define IN_ROOT SAFE_RESOLVE_IN_ROOT
#define NO_SYMLINKS SAFE_RESOLVE_NO_SYMLINKS
static const struct stat_row stat_rows[] = {
	{ "a regular file, two levels down", "a/b/file", 0, 0, S_IFREG, "a/b/file" },
	{ "a trailing link, not followed", "chain", 0, 0, S_IFLNK, "chain" },
	{ "a chain of two links, followed", "chain", FOLLOW, 0, S_IFREG, "file" },
	{ "a relative link climbing back, followed", "a/b/rel", FOLLOW, 0, S_IFREG, "file" },
	{ "a link to outside, not followed", "abs", 0, 0, S_IFLNK, "abs" },
	{ "a link to outside, followed", "abs", FOLLOW, EXDEV, 0, NULL },
	{ "a relative link out, followed", "up", FOLLOW, EXDEV, 0, NULL },
	{ "\".\" is the root", ".", 0, 0, S_IFDIR, "." },
	{ "a/b/../.. is the root", "a/b/../..", 0, 0, S_IFDIR, "." },
	{ "\"..\" escapes", "..", 0, EXDEV, 0, NULL },
	{ "\"..\" under IN_ROOT is the root", "..", IN_ROOT, 0, S_IFDIR, "." },
	{ "\"/\" under IN_ROOT is the root", "/", IN_ROOT, 0, S_IFDIR, "." },
	{ "\"/\" escapes", "/", 0, EXDEV, 0, NULL },
	{ "a trailing slash follows a link to a directory", "link_dir/", 0, 0, S_IFDIR, "a" },
	{ "... but not under NO_SYMLINKS", "link_dir/", NO_SYMLINKS, ELOOP, 0, NULL },
	{ "a trailing slash on a file", "file/", 0, ENOTDIR, 0, NULL },
	{ "a trailing slash on a link to a file", "link_file/", 0, ENOTDIR, 0, NULL },
	{ "a trailing slash on a link to outside", "up/", 0, EXDEV, 0, NULL },
	{ "a missing name", "nonexist", 0, ENOENT, 0, NULL },
	{ "a dangling link inside, followed", "dangling_in", FOLLOW, ENOENT, 0, NULL },
	{ "a dangling link inside, not followed", "dangling_in", 0, 0, S_IFLNK, "dangling_in" },
	{ "a link in the middle under NO_SYMLINKS", "link_dir/b", NO_SYMLINKS, ELOOP, 0, NULL },
	{ "a link in the middle", "link_dir/b/file", 0, 0, S_IFREG, "a/b/file" },
	{ "a FIFO is stat'ed, never opened", "fifo", 0, 0, S_IFIFO, "fifo" },
	{ "an absolute link under IN_ROOT restarts at the root", "rootabs", FOLLOW | IN_ROOT, 0,
	  S_IFREG, "a/b/file" },
	{ "an absolute link escapes under BENEATH", "rootabs", FOLLOW, EXDEV, 0, NULL },
};
#undef FOLLOW
#undef IN_ROOT
#undef NO_SYMLINKS

/* The kernel's resolve bits for a row's flags: its scope (BENEATH when it
 * names none, as the library does) and NO_SYMLINKS. */
static uint64_t kernel_scope(uint64_t flags)
{
	uint64_t scope = flags & (SAFE_RESOLVE_IN_ROOT | SAFE_RESOLVE_NO_SYMLINKS);
	return (scope & SAFE_RESOLVE_IN_ROOT) ? scope : scope | SAFE_RESOLVE_BENEATH;
}

/* The kernel's answer for a row: 0 with *st, or -1 with errno; 1 when it
 * cannot be asked (no openat2 here). */
static int stat_oracle(int rootfd, const struct stat_row *r, struct stat *st)
{
	uint64_t oflags = O_PATH | O_CLOEXEC | ((r->flags & SAFE_FOLLOW) ? 0 : O_NOFOLLOW);
	long fd = fx_openat2(rootfd, r->path, oflags, 0, kernel_scope(r->flags));
	if (fd < 0 && (errno == ENOSYS || errno == EPERM))
		return 1;
	if (fd < 0)
		return -1;
	int rc = fstat((int)fd, st);
	close((int)fd);
	return rc;
}

START_TEST(stat_cases)
{
	env_open();
	uint64_t m = MODE(_i);
	ck_ok(symlinkat("/a/b/file", E.rootfd, "rootabs"));
	int bad = 0;
	for (size_t k = 0; k < sizeof(stat_rows) / sizeof(stat_rows[0]); k++) {
		const struct stat_row *r = &stat_rows[k];
		struct stat st, want, kst;
		errno = 0;
		int rc = safe_fstatat_beneath(E.rootfd, r->path, &st, m | r->flags);
		int e = rc < 0 ? errno : 0;
		const char *why = NULL;
		if (e != r->err)
			why = "errno";
		else if (!e && (st.st_mode & S_IFMT) != r->type)
			why = "type";
		else if (!e && r->is &&
			 (fstatat(E.rootfd, r->is, &want, AT_SYMLINK_NOFOLLOW) < 0 ||
			  want.st_ino != st.st_ino || want.st_dev != st.st_dev))
			why = "object";
		int krc = stat_oracle(E.rootfd, r, &kst);
		int ke = krc < 0 ? errno : 0;
		if (!why && krc <= 0 && (ke != e || (!e && (kst.st_ino != st.st_ino ||
							    kst.st_dev != st.st_dev))))
			why = "kernel";
		if (why) {
			fprintf(stderr, "stat row \"%s\" (%s, %s): %s differs: got %s, want %s, "
					"kernel %s\n",
				r->name, r->path, WAY(m), why,
				e ? strerrorname_np(e) : "0", r->err ? strerrorname_np(r->err) : "0",
				krc > 0 ? "not asked" : ke ? strerrorname_np(ke) : "0");
			bad++;
		}
	}
	ck_assert_msg(bad == 0, "%d stat rows failed (named above)", bad);

	/* AT_FDCWD as the root. */
	struct stat st;
	char cwd[PATH_MAX];
	ck_assert_ptr_nonnull(getcwd(cwd, sizeof(cwd)));
	ck_assert_int_eq(fchdir(E.rootfd), 0);
	ck_ok(safe_fstatat_beneath(AT_FDCWD, "a/b/file", &st, m));
	ck_fails(safe_fstatat_beneath(AT_FDCWD, "../outside/victim", &st, m), EXDEV);
	ck_assert_int_eq(chdir(cwd), 0);

	/* statx: the same resolution, the fields asked for. */
	struct statx stx;
	ck_ok(safe_statx_beneath(E.rootfd, "chain", m, STATX_BASIC_STATS, &stx));
	ck_assert(S_ISLNK(stx.stx_mode));
	ck_ok(safe_statx_beneath(E.rootfd, "chain", m | SAFE_FOLLOW, STATX_BASIC_STATS, &stx));
	ck_assert(S_ISREG(stx.stx_mode) && stx.stx_size == 7);
	ck_ok(safe_statx_beneath(E.rootfd, "a/", m, STATX_BASIC_STATS, &stx));
	ck_assert(S_ISDIR(stx.stx_mode));
	env_close();
}
END_TEST

/*
 * safe_opendir_beneath() as named rows: the path, the flags, the expected
 * errno or the directory it must be (and names it must list). Each row is
 * also asked of the kernel (openat2 with the same scope, O_DIRECTORY: the
 * scope keeps the oracle in the root), and all answers must agree.
 */
struct opendir_row {
	const char *name;
	const char *path;
	uint64_t flags;      /* RESOLVE bits; BENEATH when no scope */
	int err;             /* expected errno, or 0 */
	const char *is;      /* when err == 0: the same directory as this name */
	const char *has[2];  /* when err == 0: names it must list once each */
};

#define IN_ROOT SAFE_RESOLVE_IN_ROOT
#define NO_SYMLINKS SAFE_RESOLVE_NO_SYMLINKS
static const struct opendir_row opendir_rows[] = {
	{ "a link in the middle", "link_dir/b", 0, 0, "a/b", { "file", "rel" } },
	{ "a trailing link to a directory is followed", "link_dir", 0, 0, "a", { "b", NULL } },
	{ "\"/\" under IN_ROOT is the root", "/", IN_ROOT, 0, ".", { "a", "fifo" } },
	{ "\"..\" under IN_ROOT is the root", "a/../..", IN_ROOT, 0, ".", { "empty", NULL } },
	{ "an empty directory", "empty/", 0, 0, "empty", { NULL, NULL } },
	{ "a file", "file", 0, ENOTDIR, NULL, { NULL, NULL } },
	{ "a link to a file", "chain", 0, ENOTDIR, NULL, { NULL, NULL } },
	{ "a FIFO is refused, never opened", "fifo", 0, ENOTDIR, NULL, { NULL, NULL } },
	{ "a trailing link under NO_SYMLINKS", "link_dir", NO_SYMLINKS, ELOOP, NULL, { NULL, NULL } },
	{ "a relative link to outside", "up", 0, EXDEV, NULL, { NULL, NULL } },
	{ "an absolute link to outside", "abs", 0, EXDEV, NULL, { NULL, NULL } },
	{ "\"..\" escapes", "..", 0, EXDEV, NULL, { NULL, NULL } },
	{ "\"/\" escapes", "/", 0, EXDEV, NULL, { NULL, NULL } },
	{ "a missing name", "nonexist", 0, ENOENT, NULL, { NULL, NULL } },
	{ "a dangling link inside", "dangling_in", 0, ENOENT, NULL, { NULL, NULL } },
};
#undef IN_ROOT
#undef NO_SYMLINKS

/* The kernel's answer for a row: an fd, or -1 with errno; -2 when it cannot
 * be asked (no openat2 here). */
static int opendir_oracle(int rootfd, const struct opendir_row *r)
{
	long fd = fx_openat2(rootfd, r->path, O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0,
			     kernel_scope(r->flags));
	if (fd < 0 && (errno == ENOSYS || errno == EPERM))
		return -2;
	return (int)fd;
}

/* Why an open directory is not the row's: NULL when it is. */
static const char *opendir_mismatch(DIR *d, const struct opendir_row *r)
{
	struct stat st, want;
	if (!(fcntl(dirfd(d), F_GETFD) & FD_CLOEXEC))
		return "O_CLOEXEC";
	if (fstat(dirfd(d), &st) < 0 || fstatat(E.rootfd, r->is, &want, 0) < 0 ||
	    st.st_ino != want.st_ino || st.st_dev != want.st_dev)
		return "object";
	int seen[2] = { 0, 0 };
	struct dirent *de;
	while ((de = readdir(d)))
		for (int j = 0; j < 2; j++)
			seen[j] += r->has[j] && strcmp(de->d_name, r->has[j]) == 0;
	for (int j = 0; j < 2; j++)
		if (r->has[j] && seen[j] != 1)
			return "entries";
	return NULL;
}

START_TEST(opendir_cases)
{
	env_open();
	uint64_t m = MODE(_i);
	int bad = 0;
	for (size_t k = 0; k < sizeof(opendir_rows) / sizeof(opendir_rows[0]); k++) {
		const struct opendir_row *r = &opendir_rows[k];
		errno = 0;
		DIR *d = safe_opendir_beneath(E.rootfd, r->path, m | r->flags);
		int e = d ? 0 : errno;
		const char *why = NULL;
		if (e != r->err)
			why = "errno";
		else if (d)
			why = opendir_mismatch(d, r);
		int kfd = opendir_oracle(E.rootfd, r);
		int ke = kfd == -1 ? errno : 0;
		if (!why && kfd != -2) {
			struct stat kst, st;
			if (ke != e)
				why = "kernel";
			else if (d && (fstat(kfd, &kst) < 0 || fstat(dirfd(d), &st) < 0 ||
				       kst.st_ino != st.st_ino || kst.st_dev != st.st_dev))
				why = "kernel";
		}
		if (kfd >= 0)
			close(kfd);
		if (d)
			closedir(d);
		if (why) {
			fprintf(stderr, "opendir row \"%s\" (%s, %s): %s differs: got %s, want %s, "
					"kernel %s\n",
				r->name, r->path, WAY(m), why,
				e ? strerrorname_np(e) : "0", r->err ? strerrorname_np(r->err) : "0",
				kfd == -2 ? "not asked" : ke ? strerrorname_np(ke) : "0");
			bad++;
		}
	}
	ck_assert_msg(bad == 0, "%d opendir rows failed (named above)", bad);
	env_close();
}
END_TEST

/* ---------------------------------------------------------------- mkdir */

/*
 * safe_mkdirat_beneath() refusals as named rows: each leaves the tree (the
 * root and the outside) as it was, with the errno the kernel's mkdirat(2)
 * gives for the same path where a plain call is a fair oracle (the path stays
 * in the root by its letters: no "..", no leading '/', no link crossed, none
 * to the outside as its last component).
 */
struct mkdir_row {
	const char *name;
	const char *path;
	int err;
	bool plain; /* ask mkdirat(2) in the root too */
};

static const struct mkdir_row mkdir_refusals[] = {
	{ "an existing directory", "n1", EEXIST, true },
	{ "\"a/.\"", "a/.", EEXIST, true },
	{ "\"a/..\" (the root)", "a/..", EEXIST, false },
	{ "\"..\" under BENEATH is the root's own name", "..", EEXIST, false },
	/* A dangling symlink is not created through (outside or inside). */
	{ "a dangling link to the outside", "dangling_out", EEXIST, false },
	{ "a dangling link inside", "dangling_in", EEXIST, true },
};

static void mkdir_try(size_t k, uint64_t m, struct refusal_try *t)
{
	const struct mkdir_row *r = &mkdir_refusals[k];
	t->e = safe_mkdirat_beneath(E.rootfd, r->path, 0755, m) < 0 ? errno : 0;
	t->asked = r->plain;
	if (r->plain)
		t->ke = mkdirat(E.rootfd, r->path, 0755) < 0 ? errno : 0;
	t->want = r->err;
	t->oracle = "mkdirat(2)";
	snprintf(t->name, sizeof(t->name), "mkdir row \"%s\" (%s)", r->name, r->path);
}

START_TEST(mkdir_cases)
{
	env_open();
	uint64_t m = MODE(_i);
	mode_t old = umask(022);
	ck_assert_int_eq(safe_mkdirat_beneath(E.rootfd, "n1", 0750, m), 0);
	ck_assert_int_eq(lmode(E.rootfd, "n1"), S_IFDIR | 0750);
	ck_assert_int_eq(safe_mkdirat_beneath(E.rootfd, "link_dir/n2/", 0700, m), 0);
	ck_assert(exists_at(E.rootfd, "a/n2"));
	run_refusals(E.base, N_ROWS(mkdir_refusals), m, mkdir_try);
	ck_assert(!exists_at(E.rootfd, "nonexist"));
	ck_assert(!exists_at(E.outfd, "newfile"));
	umask(old);
	env_close();
}
END_TEST

/*
 * safe_mkdir_all_beneath() refusals as named rows: each leaves the tree (the
 * root and the outside) as it was, with the errno the kernel's mkdirat(2)
 * gives for the same path where a plain call is a fair oracle (the path stays
 * in the root by its letters and crosses no link: only its last component
 * may be one, which mkdirat(2) does not follow).
 */
struct mkdir_all_row {
	const char *name;
	const char *path;
	uint64_t flags;
	int err;
	bool plain;    /* ask mkdirat(2) in the root too */
	bool beneath;  /* BENEATH only (an escape, or a scope of its own in flags); else IN_ROOT too */
	bool bad_fd;   /* the dirfd is -1 */
};

#define NS SAFE_RESOLVE_NO_SYMLINKS
static const struct mkdir_all_row mkdir_all_refusals[] = {
	{ "a file", "file", 0, EEXIST, true, false, false },
	{ "a file with a trailing slash", "file/", 0, EEXIST, false, false, false },
	{ "a file on the way", "file/x", 0, ENOTDIR, true, false, false },
	{ "a file two levels up", "file/x/y", 0, ENOTDIR, false, false, false },
	{ "a link to a file", "link_file", 0, EEXIST, true, false, false },
	{ "a link to a file on the way", "link_file/x", 0, ENOTDIR, false, false, false },
	{ "a dangling link inside", "dangling_in", 0, EEXIST, true, false, false },
	{ "a dangling link inside on the way", "dangling_in/x", 0, ENOENT, false, false, false },
	{ "\"..\" after a missing component", "a/missing/../x", 0, ENOENT, false, false, false },
	{ "\"..\" twice after missing components", "m1/m2/../../m3", 0, ENOENT, false, false,
	  false },
	{ "a link on the way under NO_SYMLINKS", "link_dir/q", NS, ELOOP, false, false, false },
	{ "BENEATH and IN_ROOT together", "a", SAFE_RESOLVE_BENEATH | SAFE_RESOLVE_IN_ROOT, EINVAL,
	  false, true, false },
	{ "an unknown flag bit", "a", 1ULL << 63, EINVAL, false, false, false },
	{ "an empty path", "", 0, ENOENT, false, false, false },
	{ "a NULL path", NULL, 0, EFAULT, false, false, false },
	{ "a bad dirfd", "a", 0, EBADF, false, false, true },
	{ "\"..\" to the outside", "../outside/new", 0, EXDEV, false, true, false },
	{ "a link to the outside on the way", "up/new/x", 0, EXDEV, false, true, false },
	{ "a link climbing out on the way", "deep/new", 0, EXDEV, false, true, false },
	{ "an absolute link on the way", "abs/new", 0, EXDEV, false, true, false },
	{ "\"..\" out and back into the outside", "a/../../outside/vdir/n", 0, EXDEV, false, true,
	  false },
	{ "an absolute path", "/tmp", 0, EXDEV, false, true, false },
};
#undef NS

/* Row k / 2, under BENEATH (k even) and IN_ROOT (k odd; not for the rows
 * marked beneath). */
static void mkdir_all_try(size_t k, uint64_t m, struct refusal_try *t)
{
	const struct mkdir_all_row *r = &mkdir_all_refusals[k / 2];
	bool in_root = k % 2;
	if (in_root && r->beneath) {
		t->skip = true;
		return;
	}
	uint64_t scope = in_root ? SAFE_RESOLVE_IN_ROOT : 0;
	int fd = safe_mkdir_all_beneath(r->bad_fd ? -1 : E.rootfd, r->path, 0755,
					m | scope | r->flags);
	t->e = fd < 0 ? errno : 0;
	if (fd >= 0)
		close(fd);
	t->asked = r->plain;
	if (r->plain)
		t->ke = mkdirat(E.rootfd, r->path, 0755) < 0 ? errno : 0;
	t->want = r->err;
	t->oracle = "mkdirat(2)";
	snprintf(t->name, sizeof(t->name), "mkdir -p row \"%s\" (%s%s)", r->name,
		 r->path ? r->path : "NULL", in_root ? ", IN_ROOT" : "");
}

START_TEST(mkdir_parents_cases)
{
	env_open();
	uint64_t m = MODE(_i);
	mode_t old = umask(022);
	int fd = safe_mkdir_all_beneath(E.rootfd, "p/q/r", 0700, m);
	ck_assert_int_ge(fd, 0);
	ck_assert(fx_same_object(fd, E.rootfd, "p/q/r"));
	int fl = fcntl(fd, F_GETFL);
	ck_assert(fl & O_PATH);
	ck_assert(fl & O_DIRECTORY);
	ck_assert(fcntl(fd, F_GETFD) & FD_CLOEXEC);
	close(fd);
	ck_assert_int_eq(lmode(E.rootfd, "p/q/r"), S_IFDIR | 0700);
	ck_assert_int_eq(lmode(E.rootfd, "p/q"), S_IFDIR | 0700); /* every level gets the mode */
	/* Existing: the fd of the directory; through a symlink inside; ".." */
	fd = safe_mkdir_all_beneath(E.rootfd, "p/q/r/", 0700, m);
	ck_assert_int_ge(fd, 0);
	close(fd);
	/* ".." only in the existing part: a missing "x" before it is ENOENT and
	 * nothing is created; once "x" exists the rest is created. */
	ck_fails(safe_mkdir_all_beneath(E.rootfd, "link_dir/x/../y//z", 0755, m), ENOENT);
	ck_assert(!exists_at(E.rootfd, "a/x"));
	ck_assert(!exists_at(E.rootfd, "a/y"));
	ck_ok(safe_mkdirat_beneath(E.rootfd, "a/x", 0755, m));
	fd = safe_mkdir_all_beneath(E.rootfd, "link_dir/x/../y//z", 0755, m);
	ck_assert_int_ge(fd, 0);
	ck_assert(fx_same_object(fd, E.rootfd, "a/y/z"));
	close(fd);
	fd = safe_mkdir_all_beneath(E.rootfd, "/s/t", 0755, m | SAFE_RESOLVE_IN_ROOT);
	ck_assert_int_ge(fd, 0);
	ck_assert(fx_same_object(fd, E.rootfd, "s/t"));
	close(fd);
	fd = safe_mkdir_all_beneath(E.rootfd, ".", 0755, m);
	ck_assert_int_ge(fd, 0);
	ck_assert(fx_same_object(fd, E.rootfd, "."));
	close(fd);
	run_refusals(E.base, 2 * N_ROWS(mkdir_all_refusals), m, mkdir_all_try);
	ck_assert(!exists_at(E.rootfd, "nonexist"));
	umask(old);
	env_close();
}
END_TEST

/* ---------------------------------------------------------------- unlink */

/*
 * safe_unlinkat_beneath() refusals as named rows: each leaves the tree as it
 * was, with the errno the kernel's unlinkat(2) gives for the same path where
 * a plain call is a fair oracle (the path stays in the root by its letters:
 * no "..", no leading '/', no link crossed before its last component).
 */
struct unlink_row {
	const char *name;
	const char *path;
	uint64_t flags;
	int err;
	bool plain; /* ask unlinkat(2) in the root too */
};

#define RMDIR SAFE_REMOVEDIR
static const struct unlink_row unlink_refusals[] = {
	{ "a directory without REMOVEDIR", "a", 0, EISDIR, true },
	{ "a file with REMOVEDIR", "file", RMDIR, ENOTDIR, true },
	{ "a directory that is not empty", "a", RMDIR, ENOTEMPTY, true },
	{ "\"a/.\" without REMOVEDIR", "a/.", 0, EISDIR, true },
	{ "\"a/.\" with REMOVEDIR", "a/.", RMDIR, EINVAL, true },
	{ "\"a/..\" (the root, not empty)", "a/..", RMDIR, ENOTEMPTY, false },
	{ "\"..\" under BENEATH is the root's own name", "..", RMDIR, ENOTEMPTY, false },
	{ "\".\"", ".", RMDIR, EINVAL, true },
	{ "\"/\" escapes", "/", RMDIR, EXDEV, false },
	{ "\"/\" under IN_ROOT is the root: busy", "/", RMDIR | SAFE_RESOLVE_IN_ROOT, EBUSY, false },
	{ "a trailing slash on a file", "file/", 0, ENOTDIR, true },
	{ "a trailing slash does not follow a link", "link_dir/", RMDIR, ENOTDIR, true },
	{ "a missing name", "nonexist", 0, ENOENT, true },
	{ "a missing directory on the way", "nonexist/x", 0, ENOENT, true },
	{ "a file on the way", "file/x", 0, ENOTDIR, true },
};
#undef RMDIR

static void unlink_try(size_t k, uint64_t m, struct refusal_try *t)
{
	const struct unlink_row *r = &unlink_refusals[k];
	t->e = safe_unlinkat_beneath(E.rootfd, r->path, m | r->flags) < 0 ? errno : 0;
	t->asked = r->plain;
	if (r->plain) {
		int at = (r->flags & SAFE_REMOVEDIR) ? AT_REMOVEDIR : 0;
		t->ke = unlinkat(E.rootfd, r->path, at) < 0 ? errno : 0;
	}
	t->want = r->err;
	t->oracle = "unlinkat(2)";
	snprintf(t->name, sizeof(t->name), "unlink row \"%s\" (%s)", r->name, r->path);
}

START_TEST(unlink_cases)
{
	env_open();
	uint64_t m = MODE(_i);
	run_refusals(E.root, N_ROWS(unlink_refusals), m, unlink_try);

	ck_assert_int_eq(safe_unlinkat_beneath(E.rootfd, "link_dir/b/file", m), 0);
	ck_assert(!exists_at(E.rootfd, "a/b/file"));
	/* Symlinks are removed themselves, their targets stay. */
	ck_assert_int_eq(safe_unlinkat_beneath(E.rootfd, "link_up_victim", m), 0);
	ck_assert_int_eq(safe_unlinkat_beneath(E.rootfd, "link_dir", m), 0);
	ck_assert(!exists_at(E.rootfd, "link_dir") && exists_at(E.rootfd, "a/b"));
	ck_assert(exists_at(E.outfd, "victim"));
	ck_assert_int_eq(safe_unlinkat_beneath(E.rootfd, "empty/", m | SAFE_REMOVEDIR), 0);
	ck_assert_int_eq(safe_unlinkat_beneath(E.rootfd, "fifo", m), 0);
	ck_assert(!exists_at(E.rootfd, "empty") && !exists_at(E.rootfd, "fifo"));
	env_close();
}
END_TEST

/* The same attacker against mkdir -p: nothing may appear outside. */
START_TEST(mkdir_parents_race_symlink_swap)
{
	env_open();
	uint64_t m = MODE(_i) | ((_i & 2) ? SAFE_RESOLVE_IN_ROOT : 0);
	char *before = fx_tree_snapshot(E.outside);
	ck_assert_int_eq(mkdirat(E.rootfd, "t", 0755), 0);
	ck_assert_int_eq(mkdirat(E.rootfd, "t/d", 0755), 0);
	build_link(E.rootfd, "t/l", E.outside);
	int tfd = openat(E.rootfd, "t", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	ck_assert_int_ge(tfd, 0);
	struct swapper s = { .dirfd = tfd, .a = "d", .b = "l" };
	pthread_t th;
	ck_assert_int_eq(pthread_create(&th, NULL, swap_thread, &s), 0);
	while (atomic_load(&s.swaps) == 0) /* the attacker is running */
		sched_yield();
	double end = fx_now() + (fx_under_valgrind() ? 1.0 : fx_long() ? 0.4 : 0.05);
	long ok = 0, calls = 0;
	/* the time, and at least 100 calls (a slow machine runs longer) */
	while (fx_now() < end || calls < 100) {
		int fd = safe_mkdir_all_beneath(E.rootfd, "t/d/n1/n2", 0755, m);
		calls++;
		if (fd >= 0) {
			struct stat st;
			ck_assert_int_eq(fstat(fd, &st), 0);
			ck_assert(S_ISDIR(st.st_mode));
			ok++;
			close(fd);
		}
		if (calls % 16 == 0) {
			char *after = fx_tree_snapshot(E.outside);
			ck_assert_msg(!strcmp(before, after), "outside changed");
			free(after);
		}
	}
	atomic_store(&s.stop, true);
	pthread_join(th, NULL);
	char *after = fx_tree_snapshot(E.outside);
	ck_assert_str_eq(before, after);
	free(after);
	free(before);
	ck_assert_int_gt(calls, 0);
	ck_assert_int_gt(atomic_load(&s.swaps), 0);
	close(tfd);
	env_close();
}
END_TEST

/*
 * Every operation while an attacker exchanges a directory of the tree with a
 * symlink to the outside directory that has the same contents (vdir/inner,
 * vdir/sub/deep): whatever each call returns, nothing outside changes.
 */
START_TEST(ops_race_symlink_swap)
{
	env_open();
	uint64_t m = MODE(_i) | ((_i & 2) ? SAFE_RESOLVE_IN_ROOT : 0);
	char *before = fx_tree_snapshot(E.outside);
	static const char *const spec[] = {
		"d t", "d t/d", "f t/d/inner x", "d t/d/sub", "f t/d/sub/deep y", NULL,
	};
	fx_build(E.rootfd, spec);
	char tgt[PATH_MAX];
	pj(tgt, E.outside, "vdir");
	build_link(E.rootfd, "t/l", tgt);
	int tfd = openat(E.rootfd, "t", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	ck_assert_int_ge(tfd, 0);
	struct swapper s = { .dirfd = tfd, .a = "d", .b = "l" };
	pthread_t th;
	ck_assert_int_eq(pthread_create(&th, NULL, swap_thread, &s), 0);
	static const char *const paths[] = { "t/d/inner", "t/d/sub", "t/d/sub/", "t/d/sub/deep",
					     "t/d/sub/..", "t/d/new" };
	/* Each operation gets its share of a bounded time (every one runs at least once). */
	double share = (fx_under_valgrind() ? 2.0 : fx_long() ? 0.6 : 0.04) / N_OPS;
	for (int o = 0; o < N_OPS; o++) {
		double end = fx_now() + share;
		int rounds = 0; /* at least 5 rounds per operation */
		do {
			for (size_t k = 0; k < sizeof(paths) / sizeof(paths[0]); k++)
				(void)ops[o].fn(E.rootfd, paths[k], m);
		} while (fx_now() < end || ++rounds < 5);
	}
	atomic_store(&s.stop, true);
	pthread_join(th, NULL);
	char *after = fx_tree_snapshot(E.outside);
	ck_assert_str_eq(before, after);
	ck_assert_int_gt(atomic_load(&s.swaps), 0);
	free(before);
	free(after);
	close(tfd);
	env_close();
}
END_TEST

/* ---------------------------------------------------------------- rename, link, (read)link */

/*
 * safe_renameat_beneath() refusals as named rows (within the root, the tree
 * rename_cases leaves): each leaves the tree (the root and the outside) as it
 * was, with the errno of the kernel's renameat(2) where a plain call is a
 * fair oracle (both paths stay in the root by their letters: no "..", no
 * leading '/', no link crossed, none to the outside as a last component).
 */
struct rename_row {
	const char *name;
	const char *from, *to;
	int err;
	bool plain; /* ask renameat(2) in the root too */
};

static const struct rename_row rename_refusals[] = {
	{ "\"a/.\" is busy", "a/.", "x", EBUSY, true },
	{ "onto \"a/..\" (the root) is busy", "a", "a/..", EBUSY, false },
	/* "dangling_out" is a regular file by then: the link was replaced */
	{ "a trailing slash on a file", "dangling_out/", "x", ENOTDIR, true },
	{ "a missing name", "nonexist", "x", ENOENT, true },
};

static void rename_try(size_t k, uint64_t m, struct refusal_try *t)
{
	const struct rename_row *r = &rename_refusals[k];
	t->e = safe_renameat_beneath(E.rootfd, r->from, E.rootfd, r->to, m) < 0 ? errno : 0;
	t->asked = r->plain;
	if (r->plain)
		t->ke = renameat(E.rootfd, r->from, E.rootfd, r->to) < 0 ? errno : 0;
	t->want = r->err;
	t->oracle = "renameat(2)";
	snprintf(t->name, sizeof(t->name), "rename row \"%s\" (%s -> %s)", r->name, r->from,
		 r->to);
}

START_TEST(rename_cases)
{
	env_open();
	uint64_t m = MODE(_i);
	struct stat st, st2;
	ck_assert_int_eq(fstatat(E.rootfd, "file", &st, 0), 0);
	ck_assert_int_eq(safe_renameat_beneath(E.rootfd, "file", E.rootfd, "link_dir/b/moved", m), 0);
	ck_assert_int_eq(fstatat(E.rootfd, "a/b/moved", &st2, 0), 0);
	ck_assert(st.st_ino == st2.st_ino);
	ck_fails(safe_renameat_beneath(E.rootfd, "a/b/moved", E.rootfd, "a/b/file",
				       m | SAFE_RENAME_NOREPLACE),
		 EEXIST);
	ck_assert_int_eq(safe_renameat_beneath(E.rootfd, "a/b/moved", E.rootfd, "a/b/file",
					       m | SAFE_RENAME_EXCHANGE),
			 0);
	ck_assert_int_eq(fstatat(E.rootfd, "a/b/file", &st2, 0), 0);
	ck_assert(st.st_ino == st2.st_ino);
	ck_assert(exists_at(E.rootfd, "a/b/moved"));
	/* Symlinks are renamed themselves; replacing a dangling link to the
	 * outside replaces the link, not its target. */
	ck_assert_int_eq(safe_renameat_beneath(E.rootfd, "a/b/moved", E.rootfd, "dangling_out", m), 0);
	ck_assert(S_ISREG(lmode(E.rootfd, "dangling_out")));
	ck_assert(!exists_at(E.outfd, "newfile"));
	ck_assert_int_eq(safe_renameat_beneath(E.rootfd, "link_dir", E.rootfd, "ld2", m), 0);
	ck_assert(S_ISLNK(lmode(E.rootfd, "ld2")));
	run_refusals(E.base, N_ROWS(rename_refusals), m, rename_try);
	ck_assert_int_eq(safe_renameat_beneath(E.rootfd, "empty/", E.rootfd, "empty2/", m), 0);
	ck_assert(S_ISDIR(lmode(E.rootfd, "empty2")));
	env_close();
}
END_TEST

/* renameat2 missing (old kernels; seccomp ENOSYS): flags 0 via renameat,
 * NOREPLACE of a non-directory via link + unlink, else EINVAL. */
static int rename_fallback_child(void *arg)
{
	uint64_t m = *(uint64_t *)arg;
	struct sb_rule rules[] = { SB_ALWAYS(SYS_renameat2, ENOSYS) };
	CHILD_CHECK(sb_seccomp(rules, 1) == 0);
	CHILD_CHECK(safe_renameat_beneath(E.rootfd, "file", E.rootfd, "f2", m) == 0);
	CHILD_CHECK(safe_renameat_beneath(E.rootfd, "f2", E.rootfd, "f3", m | SAFE_RENAME_NOREPLACE) == 0);
	CHILD_CHECK(faccessat(E.rootfd, "f2", F_OK, AT_SYMLINK_NOFOLLOW) < 0);
	CHILD_CHECK(faccessat(E.rootfd, "f3", F_OK, AT_SYMLINK_NOFOLLOW) == 0);
	errno = 0;
	CHILD_CHECK(safe_renameat_beneath(E.rootfd, "f3", E.rootfd, "a/b/file", m | SAFE_RENAME_NOREPLACE) == -1 &&
	   errno == EEXIST);
	CHILD_CHECK(faccessat(E.rootfd, "f3", F_OK, AT_SYMLINK_NOFOLLOW) == 0);
	errno = 0;
	CHILD_CHECK(safe_renameat_beneath(E.rootfd, "empty", E.rootfd, "e2", m | SAFE_RENAME_NOREPLACE) == -1 &&
	   errno == EINVAL);
	errno = 0;
	CHILD_CHECK(safe_renameat_beneath(E.rootfd, "f3", E.rootfd, "a/b/file", m | SAFE_RENAME_EXCHANGE) == -1 &&
	   errno == EINVAL);
	errno = 0;
	CHILD_CHECK(safe_renameat_beneath(E.rootfd, "f3", E.rootfd, "up/victim", m | SAFE_RENAME_NOREPLACE) == -1 &&
	   errno == EXDEV);
	/* A trailing slash does not make the fallback follow "up" outside. */
	errno = 0;
	CHILD_CHECK(safe_renameat_beneath(E.rootfd, "up/", E.rootfd, "u2", m | SAFE_RENAME_NOREPLACE) == -1 &&
	   errno == ENOTDIR);
	errno = 0;
	CHILD_CHECK(safe_renameat_beneath(E.rootfd, "f3", E.rootfd, "a/..", m | SAFE_RENAME_NOREPLACE) == -1 &&
	   errno == EBUSY);
	CHILD_CHECK(faccessat(E.rootfd, "up", F_OK, AT_SYMLINK_NOFOLLOW) == 0);
	return 0;
}

START_TEST(rename_without_renameat2)
{
	env_open();
	uint64_t m = MODE(_i);
	ck_assert_int_eq(sb_run(rename_fallback_child, &m), 0);
	env_close();
}
END_TEST

/*
 * The refusals of safe_linkat_beneath(), safe_symlinkat_beneath() and
 * safe_readlinkat_beneath() as named rows, asked in the tree
 * link_symlink_readlink_cases builds: each leaves the tree (the root and the
 * outside) as it was, with the errno of the kernel's linkat(2), symlinkat(2)
 * or readlinkat(2) where a plain call is a fair oracle (the paths stay in the
 * root by their letters: no "..", no leading '/', no link crossed but one
 * inside as the last component, none to the outside).
 */
enum lsr_op { LSR_LINK, LSR_SYMLINK, LSR_READLINK };
static const char *const lsr_names[] = { "link", "symlink", "readlink" };

struct lsr_row {
	const char *name;
	enum lsr_op op;
	const char *a; /* link: the old path; symlink: the body; readlink: the path */
	const char *b; /* link: the new path; symlink: the path */
	int err;
	bool plain; /* ask the plain call in the root too */
};

static const struct lsr_row lsr_refusals[] = {
	{ "onto an existing name", LSR_LINK, "file", "h1", EEXIST, true },
	{ "onto a dangling link to the outside", LSR_LINK, "file", "dangling_out", EEXIST, false },
	{ "a directory", LSR_LINK, "a", "h5", EPERM, true },
	{ "a directory through a link and a trailing slash", LSR_LINK, "link_dir/", "h5", EPERM,
	  true },
	{ "a trailing slash on a file", LSR_LINK, "file/", "h5", ENOTDIR, true },
	{ "\"..\" escapes", LSR_LINK, "..", "h5", EXDEV, false },
	{ "onto \"a/.\"", LSR_LINK, "file", "a/.", EEXIST, true },
	{ "onto an existing link", LSR_SYMLINK, "x", "a/s1", EEXIST, true },
	{ "onto a dangling link to the outside", LSR_SYMLINK, "x", "dangling_out", EEXIST, false },
	{ "onto \"a/..\" (the root)", LSR_SYMLINK, "x", "a/..", EEXIST, false },
	{ "a file", LSR_READLINK, "file", NULL, EINVAL, true },
	{ "\".\"", LSR_READLINK, ".", NULL, EINVAL, true },
	{ "a trailing slash follows the link to a directory", LSR_READLINK, "link_dir/", NULL,
	  EINVAL, true },
	{ "\"..\" escapes", LSR_READLINK, "..", NULL, EXDEV, false },
};

/* A row asked of the library (flags m) or, when plain, of the kernel. */
static int lsr_call(const struct lsr_row *r, uint64_t m, bool plain)
{
	char buf[64];
	switch (r->op) {
	case LSR_LINK:
		return plain ? linkat(E.rootfd, r->a, E.rootfd, r->b, 0)
			     : safe_linkat_beneath(E.rootfd, r->a, E.rootfd, r->b, m);
	case LSR_SYMLINK:
		return plain ? symlinkat(r->a, E.rootfd, r->b)
			     : safe_symlinkat_beneath(r->a, E.rootfd, r->b, m);
	case LSR_READLINK:
		return (int)(plain ? readlinkat(E.rootfd, r->a, buf, sizeof(buf))
				   : safe_readlinkat_beneath(E.rootfd, r->a, buf, sizeof(buf), m));
	}
	errno = EINVAL;
	return -1;
}

static void lsr_try(size_t k, uint64_t m, struct refusal_try *t)
{
	static const char *const oracles[] = { "linkat(2)", "symlinkat(2)", "readlinkat(2)" };
	const struct lsr_row *r = &lsr_refusals[k];
	t->e = lsr_call(r, m, false) < 0 ? errno : 0;
	t->asked = r->plain;
	if (r->plain)
		t->ke = lsr_call(r, m, true) < 0 ? errno : 0;
	t->want = r->err;
	t->oracle = oracles[r->op];
	snprintf(t->name, sizeof(t->name), "%s row \"%s\" (%s, %s)", lsr_names[r->op], r->name,
		 r->a, r->b ? r->b : "-");
}

START_TEST(link_symlink_readlink_cases)
{
	env_open();
	uint64_t m = MODE(_i);
	struct stat st, st2;
	ck_assert_int_eq(safe_linkat_beneath(E.rootfd, "link_dir/b/file", E.rootfd, "h1", m), 0);
	ck_assert_int_eq(fstatat(E.rootfd, "h1", &st, 0), 0);
	ck_assert_int_eq(fstatat(E.rootfd, "a/b/file", &st2, 0), 0);
	ck_assert(st.st_ino == st2.st_ino);
	/* Without FOLLOW a symlink is linked itself, with FOLLOW its target. */
	ck_assert_int_eq(safe_linkat_beneath(E.rootfd, "chain", E.rootfd, "h2", m), 0);
	ck_assert(S_ISLNK(lmode(E.rootfd, "h2")));
	ck_assert_int_eq(safe_linkat_beneath(E.rootfd, "chain", E.rootfd, "h3", m | SAFE_FOLLOW), 0);
	ck_assert_int_eq(fstatat(E.rootfd, "h3", &st, AT_SYMLINK_NOFOLLOW), 0);
	ck_assert_int_eq(fstatat(E.rootfd, "file", &st2, 0), 0);
	ck_assert(S_ISREG(st.st_mode) && st.st_ino == st2.st_ino);
	ck_assert_int_eq(safe_linkat_beneath(E.rootfd, "abs_victim", E.rootfd, "h4", m), 0);
	ck_assert(S_ISLNK(lmode(E.rootfd, "h4")));

	ck_assert_int_eq(safe_symlinkat_beneath("../../anything/../at all", E.rootfd, "a/s1", m),
			 0);
	char buf[64];
	ssize_t n = safe_readlinkat_beneath(E.rootfd, "link_dir/s1", buf, sizeof(buf), m);
	ck_assert_int_eq(n, 24);
	ck_assert(!memcmp(buf, "../../anything/../at all", 24));
	/* The body is stored as given; following it later is scoped. */
	ck_assert_int_eq(safe_symlinkat_beneath(E.outside, E.rootfd, "s2", m), 0);
	ck_fails(safe_fstatat_beneath(E.rootfd, "s2", &st, m | SAFE_FOLLOW), EXDEV);

	n = safe_readlinkat_beneath(E.rootfd, "a/b/rel", buf, sizeof(buf), m);
	ck_assert_int_eq(n, 10);
	ck_assert(!memcmp(buf, "../../file", 10));
	n = safe_readlinkat_beneath(E.rootfd, "a/b/rel", buf, 4, m); /* truncated, as readlink */
	ck_assert_int_eq(n, 4);
	ck_assert(!memcmp(buf, "../.", 4));
	n = safe_readlinkat_beneath(E.rootfd, "abs", buf, sizeof(buf), m);
	ck_assert_int_eq(n, (ssize_t)strlen(E.outside) < 64 ? (ssize_t)strlen(E.outside) : 64);

	run_refusals(E.base, N_ROWS(lsr_refusals), m, lsr_try);
	ck_assert(!exists_at(E.outfd, "newfile"));
	env_close();
}
END_TEST

/* Unprivileged link with FOLLOW: no CAP_DAC_READ_SEARCH for AT_EMPTY_PATH,
 * so the verified procfs route is taken. */
static int link_unpriv_child(void *arg)
{
	uint64_t m = *(uint64_t *)arg;
	CHILD_CHECK(sb_chown_for_dropped(E.rootfd, "a", 0) == 0);
	CHILD_CHECK(sb_chown_for_dropped(E.rootfd, "file", 0) == 0);
	CHILD_CHECK(sb_chown_for_dropped(E.rootfd, "link_file", AT_SYMLINK_NOFOLLOW) == 0);
	CHILD_CHECK(sb_drop_privileges() == 0);
	CHILD_CHECK(safe_linkat_beneath(E.rootfd, "chain", E.rootfd, "a/h", m | SAFE_FOLLOW) == 0);
	struct stat st, st2;
	CHILD_CHECK(fstatat(E.rootfd, "a/h", &st, AT_SYMLINK_NOFOLLOW) == 0);
	CHILD_CHECK(fstatat(E.rootfd, "file", &st2, 0) == 0);
	CHILD_CHECK(st.st_ino == st2.st_ino);
	errno = 0;
	CHILD_CHECK(safe_linkat_beneath(E.rootfd, "link_up_victim", E.rootfd, "a/h2", m | SAFE_FOLLOW) == -1 &&
	   errno == EXDEV);
	/* NO_XDEV: the old name's O_PATH|O_NOFOLLOW descriptor is linked through
	 * the procfs; a symlink is linked itself, not its target. */
	CHILD_CHECK(safe_linkat_beneath(E.rootfd, "link_file", E.rootfd, "a/h3", m | SAFE_RESOLVE_NO_XDEV) == 0);
	CHILD_CHECK(fstatat(E.rootfd, "a/h3", &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode));
	CHILD_CHECK(safe_linkat_beneath(E.rootfd, "file", E.rootfd, "a/h4", m | SAFE_RESOLVE_NO_XDEV) == 0);
	CHILD_CHECK(fstatat(E.rootfd, "a/h4", &st, AT_SYMLINK_NOFOLLOW) == 0 && st.st_ino == st2.st_ino);
	return 0;
}

START_TEST(link_follow_unprivileged)
{
	env_open();
	uint64_t m = MODE(_i);
	ck_assert_int_eq(sb_run(link_unpriv_child, &m), 0);
	env_close();
}
END_TEST

/* ---------------------------------------------------------------- NO_XDEV on the last component */

/* What an operation must answer under NO_XDEV when the last component is a
 * mount point: EXDEV wherever it would reach the object (as openat2 with
 * O_PATH|O_NOFOLLOW); the kernel's own answer where it only handles the name
 * in its parent (it never acts on the mounted object: EBUSY, or EEXIST for a
 * creation, EISDIR / ENOTDIR where the kind is wrong first). */
static int xdev_expect(const struct op *op, bool dir)
{
	static const struct {
		const char *name;
		int dir, nondir;
	} by_name[] = {
		{ "mkdir", EEXIST, EEXIST },	       { "link-to", EEXIST, EEXIST },
		{ "symlink", EEXIST, EEXIST },	       { "rename-noreplace", EEXIST, EEXIST },
		{ "unlink", EISDIR, EBUSY },	       { "rmdir", EBUSY, ENOTDIR },
		{ "rename-from", EBUSY, EBUSY },       { "rename-to", EISDIR, EBUSY },
		{ "rename-exchange", EBUSY, EBUSY }, { "rmtree", EXDEV, EBUSY },
		{ "mknod", EEXIST, EEXIST },
		/* The name is handed out, not looked up: success (0). */
		{ "open-parent", 0, 0 },
	};
	for (size_t k = 0; k < sizeof(by_name) / sizeof(by_name[0]); k++)
		if (!strcmp(op->name, by_name[k].name))
			return dir ? by_name[k].dir : by_name[k].nondir;
	return EXDEV;
}

/* Mount points as the last component under NO_XDEV: a tmpfs, a bind mount of
 * the outside directory, a bind mount of an outside file; every operation,
 * both scopes; nothing outside or in the mounts changes. */
static int xdev_mount_child(void *arg)
{
	uint64_t m = *(uint64_t *)arg;
	CHILD_CHECK(fx_enter_mount_ns() == 0);
	CHILD_CHECK(mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) == 0);
	static const char *const spec[] = {
		"d xm", "d xb", "f xf z", "d sub", "d sub/xm", "l lxm xm", NULL,
	};
	fx_build(E.rootfd, spec);
	char p[PATH_MAX], q[PATH_MAX];
	pj(p, E.root, "xm");
	CHILD_CHECK(mount("tmpfs", p, "tmpfs", 0, "size=1m") == 0);
	pj(p, E.root, "sub/xm");
	CHILD_CHECK(mount("tmpfs", p, "tmpfs", 0, "size=1m") == 0);
	pj(p, E.root, "xb");
	CHILD_CHECK(mount(E.outside, p, NULL, MS_BIND, NULL) == 0);
	pj(p, E.root, "xf");
	pj(q, E.outside, "victim");
	CHILD_CHECK(mount(q, p, NULL, MS_BIND, NULL) == 0);
	/* Opened after the unshare: it walks the new mount table. */
	int root = open(E.root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	CHILD_CHECK(root >= 0);
	char *before = fx_tree_snapshot(E.outside);
	char *rbefore = fx_tree_snapshot(E.root);
	struct stat st, ref;

	/* The mounts are there: without NO_XDEV the names reach them. */
	CHILD_CHECK(safe_fstatat_beneath(root, "xb", &st, m) == 0);
	CHILD_CHECK(fstat(E.outfd, &ref) == 0 && st.st_ino == ref.st_ino && st.st_dev == ref.st_dev);

	static const char *const names[] = { "xm", "xb", "xf", "sub/xm" };
	for (int s = 0; s < 2; s++) {
		uint64_t f = m | SAFE_RESOLVE_NO_XDEV |
			     (s ? SAFE_RESOLVE_IN_ROOT : SAFE_RESOLVE_BENEATH);
		for (size_t k = 0; k < sizeof(names) / sizeof(names[0]); k++) {
			bool dir = strcmp(names[k], "xf") != 0;
			for (int o = 0; o < N_OPS; o++) {
				int want = xdev_expect(&ops[o], dir);
				errno = 0;
				int r = ops[o].fn(root, names[k], f);
				if (want ? r != -1 || errno != want : r < 0) {
					fprintf(stderr, "%s(%s) NO_XDEV%s: got %d %s, want %s\n",
						ops[o].name, names[k], s ? " IN_ROOT" : "", r,
						strerror(errno), want ? strerror(want) : "success");
					return 1;
				}
			}
			char buf[16];
			errno = 0;
			CHILD_CHECK(safe_listxattr_beneath(root, names[k], buf, sizeof(buf), f) == -1 &&
			   errno == EXDEV);
			errno = 0;
			CHILD_CHECK(safe_removexattr_beneath(root, names[k], "user.x", f) == -1 &&
			   errno == EXDEV);
			/* SAFE_RMTREE_XDEV concerns mount points below the top only. */
			errno = 0;
			CHILD_CHECK(safe_rmtree_beneath(root, names[k], f | SAFE_RMTREE_XDEV) == -1 &&
			   errno == (dir ? EXDEV : EBUSY));
		}
		/* A symlink to a mount point is on the root's mount; following it
		 * crosses. */
		CHILD_CHECK(safe_fstatat_beneath(root, "lxm", &st, f) == 0 && S_ISLNK(st.st_mode));
		char body[16];
		CHILD_CHECK(safe_readlinkat_beneath(root, "lxm", body, sizeof(body), f) == 2);
		CHILD_CHECK(!memcmp(body, "xm", 2));
		errno = 0;
		CHILD_CHECK(safe_fstatat_beneath(root, "lxm", &st, f | SAFE_FOLLOW) == -1 && errno == EXDEV);
		CHILD_CHECK(safe_fstatat_beneath(root, "sub", &st, f) == 0 && S_ISDIR(st.st_mode));
	}
	char *after = fx_tree_snapshot(E.outside);
	char *rafter = fx_tree_snapshot(E.root);
	CHILD_CHECK(!strcmp(before, after));
	CHILD_CHECK(!strcmp(rbefore, rafter));
	free(before);
	free(after);
	free(rbefore);
	free(rafter);
	/* Still mounted. */
	CHILD_CHECK(fstatat(root, "xb", &st, 0) == 0 && st.st_ino == ref.st_ino);
	close(root);
	return 0;
}

START_TEST(no_xdev_mount_points)
{
	env_open();
	uint64_t m = MODE(_i);
	ck_assert_int_eq(sb_run(xdev_mount_child, &m), 0);
	env_close();
}
END_TEST

/* Without mounts NO_XDEV changes nothing: the operations take the object's
 * descriptor instead of its name, with the same results and errors. */
/* The directories no_xdev_plain_names may chmod to 0600 (".", "a/..", "a",
 * "a/", "link_dir"): their modes, put back after every call, so that a
 * non-root user can still search them (root would not notice). */
static const char *const searchable[] = { "", "a", "a/b" };
static mode_t searchable_mode[3];

static void searchable_save(void)
{
	for (int i = 0; i < 3; i++) {
		struct stat st;
		char p[PATH_MAX];
		pj(p, E.root, searchable[i]);
		ck_assert_int_eq(stat(p, &st), 0);
		searchable_mode[i] = st.st_mode & 07777;
	}
}

static void searchable_restore(void)
{
	for (int i = 0; i < 3; i++) {
		char p[PATH_MAX];
		pj(p, E.root, searchable[i]);
		FX_ASSERT(chmod(p, searchable_mode[i]) == 0, "%s: %s", p, strerror(errno));
	}
}

START_TEST(no_xdev_plain_names)
{
	env_open();
	searchable_save();
	uint64_t m = MODE(_i);
	static const char *const names[] = {
		"file",	 "link_file", "chain", "a",	"a/b/file", "link_dir",
		"fifo",	 "nonexist",  "a/",    "a/..",	".",	    "file/",
		"abs",	 "up",	      "a/b/rel", "dangling_in",
	};
	static int (*const idem[])(int, const char *, uint64_t) = {
		op_stat,       op_stat_follow,	  op_statx,	 op_statx_follow,
		op_opendir,    op_readlink,	  op_chmod,	 op_chmod_follow,
		op_chown,      op_chown_follow,	  op_utimens,	 op_utimens_follow,
		op_setxattr,   op_setxattr_follow, op_getxattr,	 op_getxattr_follow,
		op_listxattr,  op_realpath,
	};
	for (size_t k = 0; k < sizeof(names) / sizeof(names[0]); k++) {
		for (size_t o = 0; o < sizeof(idem) / sizeof(idem[0]); o++) {
			errno = 0;
			int r1 = idem[o](E.rootfd, names[k], m);
			int e1 = r1 < 0 ? errno : 0;
			searchable_restore();
			errno = 0;
			int r2 = idem[o](E.rootfd, names[k], m | SAFE_RESOLVE_NO_XDEV);
			int e2 = r2 < 0 ? errno : 0;
			searchable_restore();
			ck_assert_msg(r1 == r2 && e1 == e2, "op %zu(%s): %d %s, NO_XDEV %d %s", o,
				      names[k], r1, strerror(e1), r2, strerror(e2));
		}
	}
	/* What the descriptor route acts on is the link itself. */
	char body[16];
	ck_assert_int_eq(safe_readlinkat_beneath(E.rootfd, "link_file", body, sizeof(body),
						 m | SAFE_RESOLVE_NO_XDEV),
			 4);
	ck_assert(!memcmp(body, "file", 4));
	ck_fails(safe_readlinkat_beneath(E.rootfd, "file", body, sizeof(body),
					 m | SAFE_RESOLVE_NO_XDEV),
		 EINVAL);
	ck_fails(safe_fchmodat_beneath(E.rootfd, "link_file", 0600, m | SAFE_RESOLVE_NO_XDEV),
		 EOPNOTSUPP);
	ck_ok(safe_linkat_beneath(E.rootfd, "link_file", E.rootfd, "hl", m | SAFE_RESOLVE_NO_XDEV));
	ck_assert(S_ISLNK(lmode(E.rootfd, "hl")));
	ck_ok(safe_linkat_beneath(E.rootfd, "file", E.rootfd, "hf", m | SAFE_RESOLVE_NO_XDEV));
	struct stat a, b;
	ck_assert_int_eq(fstatat(E.rootfd, "hf", &a, AT_SYMLINK_NOFOLLOW), 0);
	ck_assert_int_eq(fstatat(E.rootfd, "file", &b, AT_SYMLINK_NOFOLLOW), 0);
	ck_assert(a.st_ino == b.st_ino && a.st_nlink == 2);
	ck_fails(safe_linkat_beneath(E.rootfd, "file", E.rootfd, "hf", m | SAFE_RESOLVE_NO_XDEV), EEXIST);
	ck_fails(safe_linkat_beneath(E.rootfd, "up", E.rootfd, "hu", m | SAFE_RESOLVE_NO_XDEV |
							     SAFE_FOLLOW),
		 EXDEV);
	env_close();
}
END_TEST

/*
 * A last component over NAME_MAX is not ENAMETOOLONG by itself: that is the
 * filesystem's answer (ext4, tmpfs), and procfs simply has no such entry
 * (ENOENT). The operations must give the kernel's answer, as openat2 does
 * (found by fuzz_resolve: /proc/self and "cwd" + 300 bytes).
 */
START_TEST(long_last_name_on_procfs)
{
	uint64_t m = MODE(_i);
	int procfd = open("/proc/self", O_PATH | O_DIRECTORY | O_CLOEXEC);
	ck_assert_int_ge(procfd, 0);
	char name[304] = "cwd";
	memset(name + 3, '1', 300);
	name[303] = '\0';
	struct safe_open_how how = { .flags = O_PATH | O_NOFOLLOW,
				     .resolve = SAFE_RESOLVE_BENEATH | m };
	errno = 0;
	ck_assert_int_eq(safe_openat2(procfd, name, &how, sizeof(how)), -1);
	int want = errno;
#ifdef SYS_openat2
	struct { uint64_t flags, mode, resolve; } raw = { O_PATH | O_NOFOLLOW, 0, 0x08 };
	long r = syscall(SYS_openat2, procfd, name, &raw, sizeof(raw));
	int raw_err = errno;
	/* An old kernel (ENOSYS) or a seccomp profile (EPERM or ENOSYS) has no
	 * oracle to ask; an invalid call tells them apart from an answer. */
	bool blocked = syscall(SYS_openat2, AT_FDCWD, NULL, NULL, 0) < 0 &&
		       (errno == ENOSYS || errno == EPERM);
	if (blocked) {
		fprintf(stderr, "oracle skipped: raw openat2 unavailable here\n");
	} else {
		ck_assert_int_eq(r, -1);
		ck_assert_int_eq(raw_err, want);
	}
#endif
	struct stat st;
	ck_fails(safe_fstatat_beneath(procfd, name, &st, m), want);
	char buf[16];
	ck_fails(safe_readlinkat_beneath(procfd, name, buf, sizeof(buf), m), want);
	ck_fails(safe_realpath_beneath(procfd, name, buf, sizeof(buf), m), want);
	close(procfd);
	/* On the test tree's filesystem the name itself is refused. */
	env_open();
	char longname[NAME_MAX + 2];
	memset(longname, 'n', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = '\0';
	ck_fails(safe_fstatat_beneath(E.rootfd, longname, &st, m), ENAMETOOLONG);
	ck_fails(safe_tmpfile_xattr(E.rootfd, longname, 0644, NULL, 0, m), ENAMETOOLONG);
	env_close();
}
END_TEST

/* ================================================================ the 1.0 calls
 * safe_mkdir_all_beneath() (mkdir -p returning an O_PATH directory fd, ".."
 * only in the existing part, what a failure leaves, concurrent creators),
 * safe_mknodat_beneath() and safe_open_parent_beneath() with the kernel's own
 * mknodat() in a second root as the oracle, replacing a name atomically,
 * safe_renameat_beneath() / safe_linkat_beneath() across two roots (each
 * path beneath its own dirfd, every escape on either side refused), in the
 * environment with a second root (two_roots_open(), tests/lib/ops-env.c; the
 * resolve bits every operation takes are test_resolve's "bits" cases). Bit 1
 * of a loop index selects IN_ROOT where the case uses it.
 */
#define SCOPE(i) (((i) & 2) ? SAFE_RESOLVE_IN_ROOT : 0)

/* ---------------------------------------------------------------- mkdir_all */

START_TEST(mkdir_all_creates_and_opens)
{
	two_roots_open();
	uint64_t m = MODE(_i) | SCOPE(_i);
	mode_t old = umask(022);
	int fd = safe_mkdir_all_beneath(E.rootfd, "n/o/p", 0750, m);
	ck_assert_int_ge(fd, 0);
	ck_assert(fx_same_object(fd, E.rootfd, "n/o/p")); /* an O_PATH fd: mkdir_parents_cases */
	close(fd);
	ck_assert_int_eq(lmode(E.rootfd, "n"), S_IFDIR | 0750);
	ck_assert_int_eq(lmode(E.rootfd, "n/o/p"), S_IFDIR | 0750);
	/* A trailing "." or '/' does not move the caller's mode elsewhere. */
	fd = safe_mkdir_all_beneath(E.rootfd, "n2/o2/./", 0700, m);
	ck_assert_int_ge(fd, 0);
	close(fd);
	ck_assert_int_eq(lmode(E.rootfd, "n2"), S_IFDIR | 0700);
	ck_assert_int_eq(lmode(E.rootfd, "n2/o2"), S_IFDIR | 0700);
	/* Existing: the same directory again, also with "." and '/' noise and
	 * through a symlink inside the root. */
	fd = safe_mkdir_all_beneath(E.rootfd, "./n//o/./p/", 0700, m);
	ck_assert_int_ge(fd, 0);
	ck_assert(fx_same_object(fd, E.rootfd, "n/o/p"));
	close(fd);
	fd = safe_mkdir_all_beneath(E.rootfd, "link_dir/b/new/x", 0755, m);
	ck_assert_int_ge(fd, 0);
	ck_assert(fx_same_object(fd, E.rootfd, "a/b/new/x"));
	close(fd);
	/* ".." in the existing part is resolved; after it, creation goes on. */
	fd = safe_mkdir_all_beneath(E.rootfd, "a/b/../c/d", 0755, m);
	ck_assert_int_ge(fd, 0);
	ck_assert(fx_same_object(fd, E.rootfd, "a/c/d"));
	close(fd);
	/* The new directories are usable as roots for further calls. */
	fd = safe_mkdir_all_beneath(E.rootfd, "q/r", 0755, m);
	ck_assert_int_ge(fd, 0);
	int f = safe_openat_beneath(fd, "file", O_WRONLY | O_CREAT | O_EXCL, 0644);
	ck_assert_int_ge(f, 0);
	close(f);
	close(fd);
	ck_assert(S_ISREG(lmode(E.rootfd, "q/r/file")));
	umask(old);
	two_roots_close();
}
END_TEST

/* Under IN_ROOT the escapes of mkdir -p's refusal rows stay in the root and
 * create there; the outside is untouched. */
START_TEST(mkdir_all_in_root_stays_inside)
{
	two_roots_open();
	uint64_t m = MODE(_i) | SAFE_RESOLVE_IN_ROOT;
	char *before_out = fx_tree_snapshot(E.outside);
	/* "up" dangles inside the root: not created through. */
	ck_fails(safe_mkdir_all_beneath(E.rootfd, "up/new/x", 0755, m), ENOENT);
	int fd = safe_mkdir_all_beneath(E.rootfd, "/../outside/new/x", 0755, m);
	ck_assert_int_ge(fd, 0);
	ck_assert(fx_same_object(fd, E.rootfd, "outside/new/x"));
	close(fd);
	fd = safe_mkdir_all_beneath(E.rootfd, "up/new/x", 0755, m);
	ck_assert_int_ge(fd, 0);
	ck_assert(fx_same_object(fd, E.rootfd, "outside/new/x"));
	close(fd);
	fd = safe_mkdir_all_beneath(E.rootfd, "../../n", 0755, m);
	ck_assert_int_ge(fd, 0);
	ck_assert(fx_same_object(fd, E.rootfd, "n"));
	close(fd);
	char *after = fx_tree_snapshot(E.outside);
	ck_assert_str_eq(before_out, after);
	free(after);
	free(before_out);
	two_roots_close();
}
END_TEST

/* What a failure after some creations leaves: exactly the directories made
 * before the failing step (documented), no descriptor. */
START_TEST(mkdir_all_partial_failure)
{
	two_roots_open();
	uint64_t m = MODE(_i);
	char path[PATH_MAX];
	char longname[NAME_MAX + 2];
	memset(longname, 'x', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = '\0';
	snprintf(path, sizeof(path), "k1/k2/%s/k4", longname);
	ck_fails(safe_mkdir_all_beneath(E.rootfd, path, 0755, m), ENAMETOOLONG);
	ck_assert(S_ISDIR(lmode(E.rootfd, "k1/k2")));
	char *list = fx_dir_listing(E.rootfd, "k1/k2");
	ck_assert_str_eq(list, "");
	free(list);
	two_roots_close();
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
	two_roots_open();
	uint64_t m = MODE(_i);
	for (int round = 0; round < 10; round++) {
		char path[64];
		snprintf(path, sizeof(path), "c%d/d/e/f/g/h", round);
		struct mk_arg a[4];
		pthread_t th[4];
		for (int t = 0; t < 4; t++) {
			a[t] = (struct mk_arg){ .rootfd = E.rootfd, .flags = m, .path = path };
			ck_assert_int_eq(pthread_create(&th[t], NULL, mk_thread, &a[t]), 0);
		}
		for (int t = 0; t < 4; t++) {
			pthread_join(th[t], NULL);
			ck_assert_msg(a[t].ok == 20, "thread %d: %d ok, last error %s", t, a[t].ok,
				      strerror(a[t].err));
		}
		ck_assert(S_ISDIR(lmode(E.rootfd, path)));
	}
	two_roots_close();
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
	two_roots_open();
	uint64_t m = MODE(_i) | SCOPE(_i);
	char *before = fx_tree_snapshot(E.outside);
	ck_ok(mkdirat(E.rootfd, "t", 0755));
	int tfd = openat(E.rootfd, "t", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	ck_assert_int_ge(tfd, 0);
	struct planter s = { .dirfd = tfd };
	int n = snprintf(s.target, sizeof(s.target), "%s/vdir", E.outside);
	ck_assert(n > 0 && (size_t)n < sizeof(s.target));
	pthread_t th;
	ck_assert_int_eq(pthread_create(&th, NULL, plant_thread, &s), 0);
	while (atomic_load(&s.plants) == 0)
		sched_yield();
	/* the time, and at least 200 calls (a slow machine runs longer) */
	double end = fx_now() + (fx_under_valgrind() ? 1.0 : fx_long() ? 0.4 : 0.05);
	long calls = 0, ok = 0;
	while (fx_now() < end || (calls < 200 && !fx_under_valgrind())) {
		int fd = safe_mkdir_all_beneath(E.rootfd, "t/x/y", 0755, m);
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
	two_roots_close();
}
END_TEST

/* 1,000 components: every directory created, one descriptor returned. */
START_TEST(mkdir_all_deep)
{
	two_roots_open();
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
	int fd = safe_mkdir_all_beneath(E.rootfd, path, 0755, m);
	ck_assert_int_ge(fd, 0);
	ck_assert(fx_same_object(fd, E.rootfd, path));
	close(fd);
	/* Again: everything exists. */
	fd = safe_mkdir_all_beneath(E.rootfd, path, 0755, m);
	ck_assert_int_ge(fd, 0);
	close(fd);
	free(path);
	two_roots_close();
}
END_TEST

/* ---------------------------------------------------------------- mknod */

/* The kernel's answer for mknodat() of `name` in a scratch copy. */
START_TEST(mknod_cases)
{
	two_roots_open();
	uint64_t m = MODE(_i) | SCOPE(_i);
	mode_t old = umask(022);
	ck_ok(safe_mknodat_beneath(E.rootfd, "a/fifo", S_IFIFO | 0640, 0, m));
	ck_assert_int_eq(lmode(E.rootfd, "a/fifo"), S_IFIFO | 0640);
	ck_ok(safe_mknodat_beneath(E.rootfd, "link_dir/b/reg", 0600, 0, m));
	ck_assert_int_eq(lmode(E.rootfd, "a/b/reg"), S_IFREG | 0600);
	ck_ok(safe_mknodat_beneath(E.rootfd, "a/reg2", S_IFREG | 0644, 0, m));
	ck_assert_int_eq(lmode(E.rootfd, "a/reg2"), S_IFREG | 0644);
	ck_ok(safe_mknodat_beneath(E.rootfd, "sock", S_IFSOCK | 0666, 0, m));
	ck_assert_int_eq(lmode(E.rootfd, "sock"), S_IFSOCK | 0644);
	/* Devices: the kernel decides (CAP_MKNOD); compare with it. */
	errno = 0;
	int want = mknodat(A2.fd, "null", S_IFCHR | 0666, makedev(1, 3)) == 0 ? 0 : errno;
	errno = 0;
	int got = safe_mknodat_beneath(E.rootfd, "null", S_IFCHR | 0666, makedev(1, 3), m) == 0
			  ? 0
			  : errno;
	ck_assert_int_eq(got, want);
	if (got == 0) {
		struct stat st;
		ck_assert_int_eq(fstatat(E.rootfd, "null", &st, AT_SYMLINK_NOFOLLOW), 0);
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
		int kr = mknodat(A2.fd, cases[i].path, cases[i].mode, 0);
		int ke = errno;
		ck_assert_msg(kr == -1, "oracle created %s", cases[i].path);
		errno = 0;
		int r = safe_mknodat_beneath(E.rootfd, cases[i].path, cases[i].mode, 0, m);
		int e = errno;
		ck_assert_msg(r == -1 && e == ke, "%s: got %d %s, kernel %s", cases[i].path, r,
			      strerror(e), strerror(ke));
	}
	/* Escapes. */
	char *before = fx_tree_snapshot(E.outside);
	if (!(_i & 2)) {
		ck_fails(safe_mknodat_beneath(E.rootfd, "../outside/f", S_IFIFO | 0644, 0, m), EXDEV);
		ck_fails(safe_mknodat_beneath(E.rootfd, "up/f", S_IFIFO | 0644, 0, m), EXDEV);
		ck_fails(safe_mknodat_beneath(E.rootfd, "abs/f", S_IFIFO | 0644, 0, m), EXDEV);
	} else {
		ck_fails(safe_mknodat_beneath(E.rootfd, "up/f", S_IFIFO | 0644, 0, m), ENOENT);
		ck_ok(safe_mknodat_beneath(E.rootfd, "../../a/f", S_IFIFO | 0644, 0, m));
		ck_assert(S_ISFIFO(lmode(E.rootfd, "a/f")));
	}
	/* The last component is never followed. */
	ck_fails(safe_mknodat_beneath(E.rootfd, "up_new", S_IFIFO | 0644, 0, m), EEXIST);
	ck_fails(safe_mknodat_beneath(E.rootfd, "x", S_IFIFO, 0, m | SAFE_FOLLOW), EINVAL);
	ck_fails(safe_mknodat_beneath(E.rootfd, NULL, S_IFIFO, 0, m), EFAULT);
	ck_fails(safe_mknodat_beneath(E.rootfd, "", S_IFIFO, 0, m), ENOENT);
	char *after = fx_tree_snapshot(E.outside);
	ck_assert_str_eq(before, after);
	free(after);
	free(before);
	umask(old);
	two_roots_close();
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

/* SAFE_REPLACE refusals as named rows, under BENEATH and IN_ROOT (err_in_root
 * 0: not a refusal there): never a directory, nor "." / ".." / a trailing
 * slash; the exact errnos of bad inputs; escapes. */
enum replace_op { RP_SYMLINK, RP_MKNOD };
struct replace_row {
	const char *name;
	enum replace_op op;
	const char *body; /* symlink */
	const char *path;
	mode_t mode;      /* mknod */
	uint64_t flags;
	int err, err_in_root;
};

#define SL RP_SYMLINK
#define MN RP_MKNOD
#define FIFO (S_IFIFO | 0600)
static const struct replace_row replace_refusals[] = {
	{ "symlink over a directory", SL, "t", "a", 0, 0, EISDIR, EISDIR },
	{ "mknod over a directory", MN, NULL, "empty", FIFO, 0, EISDIR, EISDIR },
	{ "symlink over \"a/.\"", SL, "t", "a/.", 0, 0, EEXIST, EEXIST },
	{ "symlink over \"a/..\"", SL, "t", "a/..", 0, 0, EEXIST, EEXIST },
	{ "mknod over \"a/..\"", MN, NULL, "a/..", FIFO, 0, EEXIST, EEXIST },
	{ "symlink with a trailing slash", SL, "t", "a/s/", 0, 0, EEXIST, EEXIST },
	{ "symlink: an empty body", SL, "", "a/new", 0, 0, ENOENT, ENOENT },
	{ "symlink: a NULL body", SL, NULL, "a/new", 0, 0, EFAULT, EFAULT },
	{ "symlink: a NULL path", SL, "t", NULL, 0, 0, EFAULT, EFAULT },
	{ "symlink: an empty path", SL, "t", "", 0, 0, ENOENT, ENOENT },
	{ "mknod: a directory mode", MN, NULL, "a/new", S_IFDIR | 0700, 0, EPERM, EPERM },
	{ "mknod: an unknown type", MN, NULL, "a/new", 0170000 | 0600, 0, EINVAL, EINVAL },
	{ "mknod: a missing parent", MN, NULL, "nodir/x", FIFO, 0, ENOENT, ENOENT },
	{ "symlink: SAFE_FOLLOW is not its flag", SL, "t", "a/new", 0, SAFE_FOLLOW, EINVAL, EINVAL },
	{ "symlink through a link to outside", SL, "t", "up/victim", 0, 0, EXDEV, ENOENT },
	{ "mknod through an absolute link", MN, NULL, "abs/victim", FIFO, 0, EXDEV, 0 },
	{ "symlink through \"..\" to outside", SL, "t", "../outside/victim", 0, 0, EXDEV, 0 },
};
#undef SL
#undef MN
#undef FIFO

static bool rp_in_root;

static void replace_try(size_t k, uint64_t m, struct refusal_try *t)
{
	const struct replace_row *r = &replace_refusals[k];
	t->want = rp_in_root ? r->err_in_root : r->err;
	if (!t->want) {
		t->skip = true;
		return;
	}
	uint64_t f = m | (rp_in_root ? SAFE_RESOLVE_IN_ROOT : 0) | SAFE_REPLACE | r->flags;
	int rc = r->op == RP_SYMLINK ? safe_symlinkat_beneath(r->body, E.rootfd, r->path, f)
				     : safe_mknodat_beneath(E.rootfd, r->path, r->mode, 0, f);
	t->e = rc < 0 ? errno : 0;
	snprintf(t->name, sizeof(t->name), "replace row \"%s\" (%s%s)", r->name,
		 r->path ? r->path : "NULL", rp_in_root ? ", IN_ROOT" : "");
}

START_TEST(replace_symlink_mknod)
{
	two_roots_open();
	uint64_t m = MODE(_i) | SCOPE(_i);
	char *before = fx_tree_snapshot(E.outside);
	char body[64];
	ssize_t n;
	/* A new name: as without the flag. */
	ck_ok(safe_symlinkat_beneath("t1", E.rootfd, "a/s", m | SAFE_REPLACE));
	n = readlinkat(E.rootfd, "a/s", body, sizeof(body));
	ck_assert(n == 2 && !memcmp(body, "t1", 2));
	/* An existing symlink, a regular file, a FIFO: replaced, not followed. */
	ck_ok(safe_symlinkat_beneath("t2", E.rootfd, "a/s", m | SAFE_REPLACE));
	n = readlinkat(E.rootfd, "a/s", body, sizeof(body));
	ck_assert(n == 2 && !memcmp(body, "t2", 2));
	ck_ok(safe_symlinkat_beneath("t3", E.rootfd, "link_file", m | SAFE_REPLACE));
	ck_assert(S_ISLNK(lmode(E.rootfd, "link_file")));
	ck_assert(S_ISREG(lmode(E.rootfd, "file"))); /* the old target is untouched */
	ck_ok(safe_symlinkat_beneath("t4", E.rootfd, "a/b/file", m | SAFE_REPLACE));
	ck_assert(S_ISLNK(lmode(E.rootfd, "a/b/file")));
	ck_ok(safe_symlinkat_beneath("t5", E.rootfd, "up_victim", m | SAFE_REPLACE));
	ck_assert(S_ISLNK(lmode(E.rootfd, "up_victim")));
	mode_t old = umask(022);
	ck_ok(safe_mknodat_beneath(E.rootfd, "file", S_IFIFO | 0640, 0, m | SAFE_REPLACE));
	ck_assert_int_eq(lmode(E.rootfd, "file"), S_IFIFO | 0640);
	ck_ok(safe_mknodat_beneath(E.rootfd, "file", S_IFREG | 0600, 0, m | SAFE_REPLACE));
	ck_assert_int_eq(lmode(E.rootfd, "file"), S_IFREG | 0600);
	/* A dangling link to outside: the link is replaced, nothing appears
	 * outside. */
	ck_ok(safe_mknodat_beneath(E.rootfd, "up_new", S_IFIFO | 0600, 0, m | SAFE_REPLACE));
	ck_assert(S_ISFIFO(lmode(E.rootfd, "up_new")));
	umask(old);
	/* A symlink to a directory is a non-directory: replaced itself. */
	ck_ok(safe_symlinkat_beneath("a", E.rootfd, "link_dir", m | SAFE_REPLACE));
	ck_assert(S_ISLNK(lmode(E.rootfd, "link_dir")) && S_ISDIR(lmode(E.rootfd, "a")));
	rp_in_root = _i & 2;
	/* the outside is the tree that must not change: a refused replacement
	 * made and removed its temporary name in the root (its mtime moved) */
	run_refusals(E.outside, N_ROWS(replace_refusals), MODE(_i), replace_try);
	ck_assert(!exists_at(E.rootfd, "a/new"));
	ck_assert(S_ISDIR(lmode(E.rootfd, "a")) && S_ISDIR(lmode(E.rootfd, "empty")));
	ck_assert(no_hidden_names(E.rootfd, "."));
	ck_assert(no_hidden_names(E.rootfd, "a"));
	char *after = fx_tree_snapshot(E.outside);
	ck_assert_str_eq(before, after);
	free(before);
	free(after);
	two_roots_close();
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
	two_roots_open();
	uint64_t m = MODE(_i);
	ck_ok(safe_symlinkat_beneath("first", E.rootfd, "a/target", m));
	RP.dirfd = E.rootfd;
	atomic_store(&RP.stop, false);
	atomic_store(&RP.looks, 0);
	atomic_store(&RP.missing, 0);
	pthread_t th;
	ck_assert_int_eq(pthread_create(&th, NULL, replace_reader, NULL), 0);
	while (atomic_load(&RP.looks) == 0) /* the reader is running */
		sched_yield();
	/* 500 replacements (2,000 under check-long), and on until the reader
	 * looked during one (a loaded machine runs longer: once it never did
	 * in 500), for at most 60 s. */
	long looks_during = 0, rounds = fx_size(500, 2000, 1);
	double cap = fx_now() + 60.0;
	for (long i = 0; i < rounds || (looks_during == 0 && fx_now() < cap); i++) {
		long l0 = atomic_load(&RP.looks);
		if (i & 1)
			ck_ok(safe_symlinkat_beneath(i & 2 ? "x" : "y", E.rootfd, "a/target",
						     m | SAFE_REPLACE));
		else
			ck_ok(safe_mknodat_beneath(E.rootfd, "a/target", S_IFIFO | 0600, 0,
						   m | SAFE_REPLACE));
		looks_during += atomic_load(&RP.looks) != l0;
	}
	atomic_store(&RP.stop, true);
	pthread_join(th, NULL);
	ck_assert_msg(looks_during > 0, "the reader never ran during a replacement");
	ck_assert_int_eq(atomic_load(&RP.missing), 0);
	ck_assert(no_hidden_names(E.rootfd, "a"));
	two_roots_close();
}
END_TEST

/* ---------------------------------------------------------------- open_parent */

/* safe_open_parent_beneath() refusals as named rows, under BENEATH and under
 * IN_ROOT (where the errno differs, or 0: not a refusal there). The parent
 * is resolved first: "/" is an escape under BENEATH. */
struct open_parent_row {
	const char *name;
	const char *path;
	uint64_t flags;
	int err, err_in_root;
};

static const struct open_parent_row open_parent_refusals[] = {
	{ "no name: \".\"", ".", 0, EINVAL, EINVAL },
	{ "no name: \"./\"", "./", 0, EINVAL, EINVAL },
	{ "no name: \"a/.\"", "a/.", 0, EINVAL, EINVAL },
	{ "no name: \"a/..\"", "a/..", 0, EINVAL, EINVAL },
	{ "no name: \"..\"", "..", 0, EINVAL, EINVAL },
	{ "no name: \"a/b/../..\"", "a/b/../..", 0, EINVAL, EINVAL },
	{ "no name: \"//\"", "//", 0, EXDEV, EINVAL },
	{ "a parent through a link to outside", "up/victim", 0, EXDEV, ENOENT },
	{ "a parent through \"..\" to outside", "../outside/victim", 0, EXDEV, 0 },
	{ "a parent through an absolute link", "abs/victim", 0, EXDEV, 0 },
	{ "a parent through a link climbing out", "deep/victim", 0, EXDEV, 0 },
	{ "a file as the parent", "file/x", 0, ENOTDIR, ENOTDIR },
	{ "a missing parent", "nodir/x", 0, ENOENT, ENOENT },
	{ "an empty path", "", 0, ENOENT, ENOENT },
	{ "a NULL path", NULL, 0, EFAULT, EFAULT },
	{ "SAFE_FOLLOW is not its flag", "x", SAFE_FOLLOW, EINVAL, EINVAL },
	{ "NO_DOTDOT with \"..\" in the parent", "a/b/../x", SAFE_RESOLVE_NO_DOTDOT, EXDEV, EXDEV },
	{ "NO_SYMLINKS with a link in the parent", "link_dir/x", SAFE_RESOLVE_NO_SYMLINKS, ELOOP,
	  ELOOP },
};

static bool op_in_root;

static void open_parent_try(size_t k, uint64_t m, struct refusal_try *t)
{
	const struct open_parent_row *r = &open_parent_refusals[k];
	t->want = op_in_root ? r->err_in_root : r->err;
	if (!t->want) {
		t->skip = true;
		return;
	}
	char name[NAME_MAX + 1];
	uint64_t scope = op_in_root ? SAFE_RESOLVE_IN_ROOT : 0;
	int fd = safe_open_parent_beneath(E.rootfd, r->path, m | scope | r->flags, name, sizeof(name));
	t->e = fd < 0 ? errno : 0;
	if (fd >= 0)
		close(fd);
	snprintf(t->name, sizeof(t->name), "open_parent row \"%s\" (%s%s)", r->name,
		 r->path ? r->path : "NULL", op_in_root ? ", IN_ROOT" : "");
}

START_TEST(open_parent_cases)
{
	two_roots_open();
	uint64_t m = MODE(_i) | SCOPE(_i);
	char name[NAME_MAX + 1];
	int fd = safe_open_parent_beneath(E.rootfd, "link_dir/b/file", m, name, sizeof(name));
	ck_assert_int_ge(fd, 0);
	ck_assert_str_eq(name, "file");
	ck_assert(fx_same_object(fd, E.rootfd, "a/b"));
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
	fd = safe_open_parent_beneath(E.rootfd, "new//", m, name, sizeof(name));
	ck_assert_int_ge(fd, 0);
	ck_assert_str_eq(name, "new");
	ck_assert(fx_same_object(fd, E.rootfd, "."));
	close(fd);
	fd = safe_open_parent_beneath(E.rootfd, "up_victim", m, name, sizeof(name));
	ck_assert_int_ge(fd, 0);
	ck_assert_str_eq(name, "up_victim");
	close(fd);
	/* Buffer sizes: exactly enough, one too few, none. */
	fd = safe_open_parent_beneath(E.rootfd, "a/b/file", m, name, 5);
	ck_assert_int_ge(fd, 0);
	ck_assert_str_eq(name, "file");
	close(fd);
	memcpy(name, "keep", 5);
	ck_fails(safe_open_parent_beneath(E.rootfd, "a/b/file", m, name, 4), ERANGE);
	ck_assert_str_eq(name, "keep");
	ck_fails(safe_open_parent_beneath(E.rootfd, "a/b/file", m, NULL, 0), ERANGE);
	ck_fails(safe_open_parent_beneath(E.rootfd, "a/b/file", m, NULL, 8), EFAULT);
	/* The refusals: no name in a parent, a parent not beneath the root. */
	op_in_root = _i & 2;
	run_refusals(E.base, N_ROWS(open_parent_refusals), MODE(_i), open_parent_try);
	if (_i & 2) {
		fd = safe_open_parent_beneath(E.rootfd, "/../a/b/file", m, name, sizeof(name));
		ck_assert_int_ge(fd, 0);
		ck_assert(fx_same_object(fd, E.rootfd, "a/b"));
		close(fd);
	}
	two_roots_close();
}
END_TEST

/* ---------------------------------------------------------------- rename / link across two roots */

/* The escaping paths of the existing side are ops_escapes (ops-env.h);
 * those of the new side: */
static const char *const new_escapes[] = {
	"../outside/new", "up/new", "abs/new", "deep/new", "a/../../outside/new", "/new_abs",
	"link_dir/../../outside/new",
};

START_TEST(rename_link_two_roots)
{
	two_roots_open();
	uint64_t m = MODE(_i) | SCOPE(_i);
	bool in_root = _i & 2;
	char *before_out = fx_tree_snapshot(E.outside);

	/* Moving and linking between the roots, each path in its own. */
	ck_ok(safe_renameat_beneath(E.rootfd, "a/b/file", A2.fd, "link_dir/moved", m));
	ck_assert(!exists_at(E.rootfd, "a/b/file"));
	ck_assert(S_ISREG(lmode(A2.fd, "a/moved")));
	ck_ok(safe_linkat_beneath(A2.fd, "a/moved", E.rootfd, "link_dir/b/back", m));
	struct stat s1, s2;
	ck_assert_int_eq(fstatat(E.rootfd, "a/b/back", &s1, AT_SYMLINK_NOFOLLOW), 0);
	ck_assert_int_eq(fstatat(A2.fd, "a/moved", &s2, AT_SYMLINK_NOFOLLOW), 0);
	ck_assert(s1.st_ino == s2.st_ino && s1.st_nlink == 2);
	/* A trailing symlink followed with SAFE_FOLLOW, linked itself without. */
	ck_ok(safe_linkat_beneath(E.rootfd, "link_file", A2.fd, "lf_itself", m));
	ck_assert(S_ISLNK(lmode(A2.fd, "lf_itself")));
	ck_ok(safe_linkat_beneath(E.rootfd, "link_file", A2.fd, "lf_target", m | SAFE_FOLLOW));
	ck_assert(S_ISREG(lmode(A2.fd, "lf_target")));
	/* The same dirfd twice: one root. */
	ck_ok(safe_renameat_beneath(E.rootfd, "file", E.rootfd, "a/renamed", m));
	ck_ok(safe_renameat_beneath(E.rootfd, "a/renamed", E.rootfd, "file",
				    m | SAFE_RENAME_NOREPLACE));
	ck_ok(safe_linkat_beneath(E.rootfd, "file", E.rootfd, "a/hard", m));
	ck_ok(safe_renameat_beneath(E.rootfd, "a/hard", A2.fd, "file", m | SAFE_RENAME_EXCHANGE));
	/* AT_FDCWD on one side. */
	int cwd = open(".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	ck_assert_int_ge(cwd, 0);
	ck_assert_int_eq(fchdir(A2.fd), 0);
	ck_ok(safe_renameat_beneath(AT_FDCWD, "lf_target", E.rootfd, "from_cwd", m));
	ck_assert_int_eq(fchdir(cwd), 0);
	close(cwd);
	ck_assert(S_ISREG(lmode(E.rootfd, "from_cwd")));

	/* Every escape, on the old side and on the new side, for both calls. */
	char *before1 = fx_tree_snapshot(E.root), *before2 = fx_tree_snapshot(A2.path);
	for (size_t i = 0; i < sizeof(ops_escapes) / sizeof(ops_escapes[0]); i++) {
		const char *p = ops_escapes[i];
		int want = in_root ? ENOENT : EXDEV;
		ck_fails(safe_renameat_beneath(E.rootfd, p, A2.fd, "stolen", m), want);
		ck_fails(safe_renameat_beneath(E.rootfd, "file", A2.fd, p, m), want);
		ck_fails(safe_renameat_beneath(E.rootfd, "file", A2.fd, p, m | SAFE_RENAME_EXCHANGE),
			 want);
		ck_fails(safe_renameat_beneath(A2.fd, p, E.rootfd, "stolen", m | SAFE_RENAME_NOREPLACE),
			 want);
		ck_fails(safe_linkat_beneath(E.rootfd, p, A2.fd, "stolen", m), want);
		ck_fails(safe_linkat_beneath(E.rootfd, p, A2.fd, "stolen", m | SAFE_FOLLOW), want);
		ck_fails(safe_linkat_beneath(A2.fd, p, A2.fd, "stolen", m), want);
	}
	for (size_t i = 0; i < sizeof(new_escapes) / sizeof(new_escapes[0]); i++) {
		const char *p = new_escapes[i];
		if (in_root) {
			/* Inside the root these are plain names in missing or
			 * existing directories: no escape possible, tested above. */
			continue;
		}
		ck_fails(safe_renameat_beneath(E.rootfd, "file", A2.fd, p, m), EXDEV);
		ck_fails(safe_renameat_beneath(A2.fd, "file", E.rootfd, p, m), EXDEV);
		ck_fails(safe_linkat_beneath(E.rootfd, "file", A2.fd, p, m), EXDEV);
		ck_fails(safe_linkat_beneath(A2.fd, "file", E.rootfd, p, m | SAFE_FOLLOW), EXDEV);
	}
	/* Trailing symlinks that point outside are renamed or linked
	 * themselves, never followed: the link moves, the victim stays. */
	ck_ok(safe_renameat_beneath(E.rootfd, "up_victim", A2.fd, "moved_link", m));
	ck_assert(S_ISLNK(lmode(A2.fd, "moved_link")));
	ck_ok(safe_renameat_beneath(A2.fd, "moved_link", E.rootfd, "up_victim", m));
	ck_fails(safe_linkat_beneath(E.rootfd, "up_victim", A2.fd, "x", m | SAFE_FOLLOW),
		 in_root ? ENOENT : EXDEV);
	/* Replacing a symlink to the outside replaces the link. */
	ck_ok(safe_linkat_beneath(E.rootfd, "file", E.rootfd, "f_copy", m));
	ck_ok(safe_renameat_beneath(E.rootfd, "f_copy", A2.fd, "up_victim", m));
	ck_assert(S_ISREG(lmode(A2.fd, "up_victim")));
	char *after = fx_tree_snapshot(E.outside);
	ck_assert_str_eq(before_out, after);
	free(after);
	free(before1);
	free(before2);
	free(before_out);
	two_roots_close();
}
END_TEST

/* Flag and argument errors are the same whichever side is wrong. */
/* rename and link across two roots: the arguments each checks, as named rows
 * (the from side in the main root, the to side in the second, A2). */
enum two_root_op { TR_RENAME, TR_LINK };
struct two_root_row {
	const char *name;
	enum two_root_op op;
	bool bad_from, bad_to; /* that dirfd is -1 */
	const char *from, *to;
	uint64_t flags;
	int err;
};

#define RN TR_RENAME
#define LN TR_LINK
static const struct two_root_row two_root_refusals[] = {
	{ "rename: a bad old dirfd", RN, true, false, "file", "x", 0, EBADF },
	{ "rename: a bad new dirfd", RN, false, true, "file", "x", 0, EBADF },
	{ "link: a bad old dirfd", LN, true, false, "file", "x", 0, EBADF },
	{ "link: a bad new dirfd", LN, false, true, "file", "x", 0, EBADF },
	{ "rename: a NULL old path", RN, false, false, NULL, "x", 0, EFAULT },
	{ "rename: a NULL new path", RN, false, false, "file", NULL, 0, EFAULT },
	{ "link: a NULL old path", LN, false, false, NULL, "x", 0, EFAULT },
	{ "link: a NULL new path", LN, false, false, "file", NULL, 0, EFAULT },
	{ "rename: an empty old path", RN, false, false, "", "x", 0, ENOENT },
	{ "rename: an empty new path", RN, false, false, "file", "", 0, ENOENT },
	{ "rename: NOREPLACE and EXCHANGE together", RN, false, false, "file", "x",
	  SAFE_RENAME_NOREPLACE | SAFE_RENAME_EXCHANGE, EINVAL },
	{ "rename: SAFE_FOLLOW is not its flag", RN, false, false, "file", "x", SAFE_FOLLOW, EINVAL },
	{ "link: NOREPLACE is not its flag", LN, false, false, "file", "x", SAFE_RENAME_NOREPLACE,
	  EINVAL },
	{ "rename: BENEATH and IN_ROOT together", RN, false, false, "file", "x",
	  SAFE_RESOLVE_BENEATH | SAFE_RESOLVE_IN_ROOT, EINVAL },
	{ "rename: an old path ending in \".\"", RN, false, false, "a/.", "x", 0, EBUSY },
	{ "rename: a new path ending in \"..\"", RN, false, false, "file", "a/..", 0, EBUSY },
	{ "link: a directory", LN, false, false, "a", "x", 0, EPERM },
	{ "link: onto an existing name", LN, false, false, "file", "file", 0, EEXIST },
};
#undef RN
#undef LN

static void two_root_try(size_t k, uint64_t m, struct refusal_try *t)
{
	const struct two_root_row *r = &two_root_refusals[k];
	int from = r->bad_from ? -1 : E.rootfd, to = r->bad_to ? -1 : A2.fd;
	int rc = r->op == TR_RENAME ? safe_renameat_beneath(from, r->from, to, r->to, m | r->flags)
				    : safe_linkat_beneath(from, r->from, to, r->to, m | r->flags);
	t->e = rc < 0 ? errno : 0;
	t->want = r->err;
	snprintf(t->name, sizeof(t->name), "two-root row \"%s\" (%s -> %s)", r->name,
		 r->from ? r->from : "NULL", r->to ? r->to : "NULL");
}

START_TEST(rename_link_arguments)
{
	two_roots_open();
	run_refusals(E.base, N_ROWS(two_root_refusals), MODE(_i), two_root_try);
	ck_assert(S_ISREG(lmode(E.rootfd, "file")));
	two_roots_close();
}
END_TEST

/* ---------------------------------------------------------------- suite */

static Suite *ops_suite(void)
{
	Suite *s = suite_create("ops");
	TCase *tc = tcase_create("core");
	tcase_set_timeout(tc, 120);
	tcase_add_checked_fixture(tc, fx_fd_setup, fx_fd_teardown);
	/* _i: bit 0 = userspace walker, bit 1 = IN_ROOT (where used). */
	tcase_add_loop_test(tc, escapes_touch_nothing, 0, 4);
	tcase_add_loop_test(tc, magic_links_refused, 0, 4);
	tcase_add_loop_test(tc, argument_errors, 0, 2);
	tcase_add_loop_test(tc, stat_cases, 0, 2);
	tcase_add_loop_test(tc, opendir_cases, 0, 2);
	tcase_add_loop_test(tc, mkdir_cases, 0, 2);
	tcase_add_loop_test(tc, mkdir_parents_cases, 0, 2);
	tcase_add_loop_test(tc, unlink_cases, 0, 2);
	tcase_add_loop_test(tc, rename_cases, 0, 2);
	tcase_add_loop_test(tc, link_symlink_readlink_cases, 0, 2);
	tcase_add_loop_test(tc, no_xdev_plain_names, 0, 2);
	tcase_add_loop_test(tc, long_last_name_on_procfs, 0, 2);
	tcase_add_loop_test(tc, mkdir_all_creates_and_opens, 0, 4);
	tcase_add_loop_test(tc, mkdir_all_in_root_stays_inside, 0, 2);
	tcase_add_loop_test(tc, mkdir_all_partial_failure, 0, 2);
	tcase_add_loop_test(tc, mkdir_all_concurrent_creators, 0, 2);
	tcase_add_loop_test(tc, mkdir_all_deep, 0, 2);
	tcase_add_loop_test(tc, mknod_cases, 0, 4);
	tcase_add_loop_test(tc, open_parent_cases, 0, 4);
	tcase_add_loop_test(tc, replace_symlink_mknod, 0, 4);
	tcase_add_loop_test(tc, rename_link_two_roots, 0, 4);
	tcase_add_loop_test(tc, rename_link_arguments, 0, 2);
	suite_add_tcase(s, tc);

	TCase *sb = tcase_create("sandbox");
	tcase_set_timeout(sb, 120);
	tcase_add_checked_fixture(sb, fx_fd_setup, fx_fd_teardown);
	tcase_add_loop_test(sb, rename_without_renameat2, 0, 2);
	tcase_add_loop_test(sb, link_follow_unprivileged, 0, 2);
	tcase_add_loop_test(sb, no_xdev_mount_points, 0, 2);
	suite_add_tcase(s, sb);

	TCase *race = tcase_create("race");
	tcase_set_timeout(race, 120);
	tcase_add_checked_fixture(race, fx_fd_setup, fx_fd_teardown);
	tcase_add_loop_test(race, mkdir_parents_race_symlink_swap, 0, 4);
	tcase_add_loop_test(race, ops_race_symlink_swap, 0, 4);
	tcase_add_loop_test(race, mkdir_all_race_planted_symlink, 0, 4);
	tcase_add_loop_test(race, replace_is_atomic, 0, 2);
	suite_add_tcase(s, race);
	return s;
}

FX_MAIN(ops_suite)
