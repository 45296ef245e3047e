/* SPDX-License-Identifier: MIT */
/*
 * Operations beneath a root: stat, mkdir, mknod, the parent/name split,
 * opendir, unlink, rename, link, symlink, readlink, chmod, chown, utimes,
 * xattrs, reopen. mkdir -p lives in mkdir_all.c, rm -r in rmtree.c,
 * realpath in realpath.c; what they share is in path.c.
 *
 * Safety argument shared by every function here: nothing is ever looked up
 * by the kernel with a path of more than one component, except by the
 * resolver (safe_openat2's fast path or walker). Each operation either
 *  - asks so_resolve_parent() for an O_PATH fd of the parent directory (which
 *    the resolver opened beneath the root) and acts on the single last name
 *    with a *at() call that does not follow it (AT_SYMLINK_NOFOLLOW, or a
 *    call such as mkdirat/unlinkat/renameat2/symlinkat that never follows
 *    its last component), or
 *  - when the caller asked to follow (SAFE_FOLLOW), or when the last
 *    component is ".", ".." or followed by '/' (which the kernel would look up
 *    or follow by itself), asks the resolver for an O_PATH fd of the object
 *    and acts on that fd (AT_EMPTY_PATH, or the fd's own magic link in a
 *    verified procfs, which always leads to exactly that inode).
 * A "." or ".." last component is only passed to the kernel by name where the
 * syscall rejects it before any lookup (mkdirat, unlinkat, renameat2, the new
 * name of linkat/symlinkat).
 */
#include "internal.h"

#include <dirent.h>
#include <linux/fs.h> /* RENAME_NOREPLACE, RENAME_EXCHANGE (musl's <stdio.h> has none) */
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>

/* Argument block of getxattrat/setxattrat (struct xattr_args, Linux 6.13);
 * read by the kernel only. */
struct so_xattr_args {
	uint64_t value; /* cppcheck-suppress unusedStructMember */
	uint32_t size;  /* cppcheck-suppress unusedStructMember */
	uint32_t flags; /* cppcheck-suppress unusedStructMember */
};

/*
 * Where a non-creating operation acts. Without `follow`, and for an ordinary
 * last component, returns the parent's O_PATH fd and points *name at the last
 * component (act with AT_SYMLINK_NOFOLLOW). Otherwise returns an O_PATH fd
 * of the object itself, opened by the resolver, and *name = "" (act with
 * AT_EMPTY_PATH). The caller owns the fd; -1 with errno on failure.
 *
 * SAFE_RESOLVE_NO_XDEV covers the last component too, as in openat2: a
 * lookup of a mount point by name in its parent lands on the mounted root,
 * another mount. Under NO_XDEV the object is therefore always opened by the
 * resolver (O_PATH, plus O_NOFOLLOW without `follow`), which refuses that
 * step with EXDEV exactly as openat2 does, and the operation acts on that
 * descriptor: what was checked is what is acted on, whatever is mounted or
 * unmounted on the name afterwards.
 */
static int op_target(int dirfd, const char *path, uint64_t resolve, bool follow,
		     struct so_last *last, const char **name)
{
	if (!path)
		return so_fail(EFAULT);
	bool special = !so_path_ends_in_name(path);
	if (!follow && !special && !(resolve & SAFE_RESOLVE_NO_XDEV)) {
		int pfd = so_resolve_parent(dirfd, path, resolve, last);
		if (pfd >= 0)
			*name = last->name;
		return pfd;
	}
	*name = "";
	/* "." / ".." / "x/" are resolved (a trailing slash follows) as before. */
	return so_op_open(dirfd, path, resolve, follow || special ? 0 : O_NOFOLLOW);
}

static int at_flags(const char *name)
{
	return *name ? AT_SYMLINK_NOFOLLOW : AT_SYMLINK_NOFOLLOW | AT_EMPTY_PATH;
}

/* The fd of `name` in `fd` as O_PATH|O_NOFOLLOW, or a new fd of the object
 * itself when name is "": what the procfs fallbacks act on. */
static int op_object_fd(int fd, const char *name)
{
	if (*name)
		return openat(fd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	return fcntl(fd, F_DUPFD_CLOEXEC, 0);
}

/*
 * The prologues of the operations: the flag check (op_bits allowed besides
 * the resolve bits), then arg_err (the caller's own argument check: 0, or the
 * errno it found, e.g. EFAULT), then the resolution. op_parent() returns the
 * parent's O_PATH fd with the last name in *last (safety argument:
 * so_resolve_parent(), path.c); op_object() returns op_target()'s fd and
 * name, following when flags has SAFE_FOLLOW. The fd is the caller's; -1
 * with errno on failure.
 */
static int op_parent(int dirfd, const char *path, uint64_t flags, uint64_t op_bits, int arg_err,
		     struct so_last *last)
{
	uint64_t resolve;
	if (so_op_resolve(flags, op_bits, &resolve) < 0)
		return -1;
	if (arg_err)
		return so_fail(arg_err);
	return so_resolve_parent(dirfd, path, resolve, last);
}

static int op_object(int dirfd, const char *path, uint64_t flags, uint64_t op_bits, int arg_err,
		     struct so_last *last, const char **name)
{
	uint64_t resolve;
	if (so_op_resolve(flags, op_bits, &resolve) < 0)
		return -1;
	if (arg_err)
		return so_fail(arg_err);
	return op_target(dirfd, path, resolve, flags & SAFE_FOLLOW, last, name);
}

/* ------------------------------------------------------------------ stat */

int safe_fstatat_beneath(int dirfd, const char *path, struct stat *st, uint64_t flags)
{
	struct so_last last;
	const char *name;
	_cleanup_fd_ int fd =
		op_object(dirfd, path, flags, SAFE_FOLLOW, !path || !st ? EFAULT : 0, &last, &name);
	if (fd < 0)
		return -1;
	return fstatat(fd, name, st, at_flags(name));
}

int safe_statx_beneath(int dirfd, const char *path, uint64_t flags, unsigned int mask,
		       struct statx *stx)
{
	int arg_err = (mask & STATX__RESERVED) ? EINVAL : (!path || !stx) ? EFAULT : 0;
	struct so_last last;
	const char *name;
	_cleanup_fd_ int fd = op_object(dirfd, path, flags, SAFE_FOLLOW, arg_err, &last, &name);
	if (fd < 0)
		return -1;
	return statx(fd, name, at_flags(name), mask, stx);
}

/* ------------------------------------------------------------------ opendir */

DIR *safe_opendir_beneath(int dirfd, const char *path, uint64_t flags)
{
	uint64_t resolve;
	/* SAFE_FOLLOW is accepted for one convention across the calls that
	 * reach an object: a directory stream always follows a trailing link
	 * (scoped), as opendir(3) does, so the bit changes nothing. */
	if (so_op_resolve(flags, SAFE_FOLLOW, &resolve) < 0)
		return NULL;
	if (!path) {
		errno = EFAULT;
		return NULL;
	}
	struct safe_open_how how = {
		.flags = O_RDONLY | O_DIRECTORY | O_CLOEXEC,
		.mode = 0,
		.resolve = resolve,
	};
	int fd = so_open_validated(dirfd, path, &how);
	if (fd < 0)
		return NULL;
	DIR *d = fdopendir(fd); /* owns fd on success */
	if (!d)
		so_close(fd);
	return d;
}

/* ------------------------------------------------------------------ mkdir, mknod */

int safe_mkdirat_beneath(int dirfd, const char *path, mode_t mode, uint64_t flags)
{
	struct so_last last;
	_cleanup_fd_ int pfd = op_parent(dirfd, path, flags, 0, 0, &last);
	if (pfd < 0)
		return -1;
	/* mkdirat never follows its last component; "." and ".." are EEXIST;
	 * a trailing slash is allowed (the name is a directory to be). */
	return mkdirat(pfd, last.name, mode);
}

/* The last name as the *at() call should see it: with one trailing '/' kept
 * where the syscall gives it a meaning without following (unlinkat,
 * renameat2, mknodat, the new name of linkat/symlinkat). */
static const char *name_with_slash(const struct so_last *last, char buf[SO_LAST_MAX + 1])
{
	if (!last->trailing_slash || last->is_root)
		return last->name;
	size_t n = strlen(last->name);
	memcpy(buf, last->name, n);
	buf[n] = '/';
	buf[n + 1] = '\0';
	return buf;
}

/*
 * symlinkat/mknodat with SAFE_REPLACE. Safety argument: the node is created
 * under a fresh hidden name in pfd (a directory the resolver opened beneath
 * the root) by a call that never follows its name and fails on any existing
 * one (EEXIST: another name is drawn), then renamed onto the plain last name
 * in the same directory with rename(2), which never follows either and
 * replaces atomically: a lookup of the name sees the old object or the new
 * one, never nothing. rename(2) itself refuses to put a non-directory over a
 * directory (EISDIR) or a mount point (EBUSY). On failure the hidden name is
 * removed, only while it is still the node created here. "." / ".." / a
 * trailing slash have no name to replace: the plain call answers them.
 */
static int make_replacing(int pfd, const struct so_last *last, const char *target, mode_t mode,
			  dev_t dev)
{
	char tmp[SO_HIDDEN_LEN + 1];
	int r = -1;
	for (int i = 0; i < SO_HIDDEN_TRIES; i++) {
		so_hidden_name(tmp);
		r = target ? symlinkat(target, pfd, tmp) : mknodat(pfd, tmp, mode, dev);
		if (r == 0 || errno != EEXIST)
			break;
	}
	if (r < 0)
		return -1;
	struct so_ident made;
	if (so_ident_at(pfd, tmp, &made) < 0)
		goto fail;
	if (renameat(pfd, tmp, pfd, last->name) == 0)
		return 0;
fail:;
	int saved = errno;
	struct so_ident now;
	if (so_ident_at(pfd, tmp, &now) == 0 && so_same_inode(&now, &made))
		(void)unlinkat(pfd, tmp, 0);
	return so_fail(saved);
}

static bool replaceable(const struct so_last *last)
{
	return !last->is_root && !last->trailing_slash && !so_is_dot_or_dotdot(last->name);
}

int safe_mknodat_beneath(int dirfd, const char *path, mode_t mode, dev_t dev, uint64_t flags)
{
	struct so_last last;
	_cleanup_fd_ int pfd = op_parent(dirfd, path, flags, SAFE_REPLACE, 0, &last);
	if (pfd < 0)
		return -1;
	if ((flags & SAFE_REPLACE) && replaceable(&last))
		return make_replacing(pfd, &last, NULL, mode, dev);
	/* mknodat never follows its last component; "." and ".." are EEXIST,
	 * a trailing slash ENOENT (or EEXIST when the name exists), as the
	 * kernel says; the file type in mode is checked by the kernel. */
	char nb[SO_LAST_MAX + 1];
	return mknodat(pfd, name_with_slash(&last, nb), mode, dev);
}

/* ------------------------------------------------------------------ open_parent */

int safe_open_parent_beneath(int dirfd, const char *path, uint64_t flags, char *name,
			     size_t size)
{
	struct so_last last;
	_cleanup_fd_ int pfd = op_parent(dirfd, path, flags, 0, !path || (!name && size) ? EFAULT : 0, &last);
	if (pfd < 0)
		return -1;
	/* "." and ".." (and a path naming the root) are no entry of a parent:
	 * a plain *at() call on them would act on the parent or climb. */
	if (last.is_root || so_is_dot_or_dotdot(last.name))
		return so_fail(EINVAL);
	size_t n = strlen(last.name);
	if (n >= size)
		return so_fail(ERANGE);
	memcpy(name, last.name, n + 1);
	return take_fd(&pfd);
}

/* ------------------------------------------------------------------ unlink */

int safe_unlinkat_beneath(int dirfd, const char *path, uint64_t flags)
{
	struct so_last last;
	_cleanup_fd_ int pfd = op_parent(dirfd, path, flags, SAFE_REMOVEDIR, 0, &last);
	if (pfd < 0)
		return -1;
	/* unlinkat() looks its last component up without following it; "."
	 * and ".." are rejected before any lookup (EISDIR, or EINVAL and
	 * ENOTEMPTY with AT_REMOVEDIR), a trailing slash only adds ENOTDIR.
	 * A path of slashes only (IN_ROOT) is the kernel's LAST_ROOT. */
	if (last.only_slashes)
		return so_fail((flags & SAFE_REMOVEDIR) ? EBUSY : EISDIR);
	char nb[SO_LAST_MAX + 1];
	return unlinkat(pfd, name_with_slash(&last, nb),
			(flags & SAFE_REMOVEDIR) ? AT_REMOVEDIR : 0);
}

/* ------------------------------------------------------------------ rename */

/* RENAME_NOREPLACE or RENAME_EXCHANGE where so_renameat2() said ENOSYS (no
 * renameat2, or a filesystem without the flag; without flags it is plain
 * renameat()): NOREPLACE of a non-directory is emulated (so_rename_by_link(),
 * which never replaces); EXCHANGE and NOREPLACE of a directory cannot be:
 * EINVAL. */
static int rename_fallback(int ofd, const struct so_last *olast, int nfd,
			   const struct so_last *nlast, const char *nname, unsigned int rflags)
{
	if (so_is_dot_or_dotdot(olast->name) || so_is_dot_or_dotdot(nlast->name))
		return so_fail(EBUSY);
	if (rflags & RENAME_EXCHANGE)
		return so_fail(EINVAL);
	/* The bare name: with a trailing slash fstatat/linkat would follow. */
	struct stat st;
	if (fstatat(ofd, olast->name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return -1;
	if (S_ISDIR(st.st_mode))
		return so_fail(EINVAL);
	if (olast->trailing_slash || nlast->trailing_slash)
		return so_fail(ENOTDIR);
	return so_rename_by_link(ofd, olast->name, nfd, nname);
}

int safe_renameat_beneath(int olddirfd, const char *oldpath, int newdirfd, const char *newpath,
			  uint64_t flags)
{
	uint64_t resolve;
	if (so_op_resolve(flags, SAFE_RENAME_NOREPLACE | SAFE_RENAME_EXCHANGE, &resolve) < 0)
		return -1;
	if ((flags & SAFE_RENAME_NOREPLACE) && (flags & SAFE_RENAME_EXCHANGE))
		return so_fail(EINVAL);
	if (!oldpath || !newpath)
		return so_fail(EFAULT);
	unsigned int rflags = ((flags & SAFE_RENAME_NOREPLACE) ? RENAME_NOREPLACE : 0) |
			      ((flags & SAFE_RENAME_EXCHANGE) ? RENAME_EXCHANGE : 0);
	struct so_last olast, nlast;
	_cleanup_fd_ int ofd = so_resolve_parent(olddirfd, oldpath, resolve, &olast);
	if (ofd < 0)
		return -1;
	_cleanup_fd_ int nfd = so_resolve_parent(newdirfd, newpath, resolve, &nlast);
	if (nfd < 0)
		return -1;
	/* renameat2() follows neither last component; "." and ".." are EBUSY
	 * before any lookup; trailing slashes only require directories. */
	char ob[SO_LAST_MAX + 1], nb[SO_LAST_MAX + 1];
	const char *oname = name_with_slash(&olast, ob), *nname = name_with_slash(&nlast, nb);
	if (so_renameat2(ofd, oname, nfd, nname, rflags) == 0)
		return 0;
	if (errno != ENOSYS || !rflags) /* without flags: renameat()'s answer */
		return -1;
	return rename_fallback(ofd, &olast, nfd, &nlast, nname, rflags);
}

/* ------------------------------------------------------------------ link, symlink, readlink */

int safe_linkat_beneath(int olddirfd, const char *oldpath, int newdirfd, const char *newpath,
			uint64_t flags)
{
	uint64_t resolve;
	if (so_op_resolve(flags, SAFE_FOLLOW, &resolve) < 0)
		return -1;
	if (!oldpath || !newpath)
		return so_fail(EFAULT);
	struct so_last olast, nlast;
	const char *oname;
	_cleanup_fd_ int ofd = op_target(olddirfd, oldpath, resolve, flags & SAFE_FOLLOW, &olast,
					  &oname);
	if (ofd < 0)
		return -1;
	_cleanup_fd_ int nfd = so_resolve_parent(newdirfd, newpath, resolve, &nlast);
	if (nfd < 0)
		return -1;
	char nb[SO_LAST_MAX + 1];
	const char *nname = name_with_slash(&nlast, nb);
	if (*oname) /* linkat() without AT_SYMLINK_FOLLOW links a symlink itself */
		return linkat(ofd, oname, nfd, nname, 0);

	/* The resolved object: AT_EMPTY_PATH needs CAP_DAC_READ_SEARCH (ENOENT
	 * without it); else follow the fd's own magic link in a verified procfs. */
	if (linkat(ofd, "", nfd, nname, AT_EMPTY_PATH) == 0)
		return 0;
	if (errno != ENOENT && errno != EPERM && errno != EINVAL)
		return -1;
	int err = errno;
	char ent[SO_FD_NAME_SIZE];
	_cleanup_fd_ int fddir = so_procfs_entry(ofd, ent);
	if (fddir < 0)
		return so_fail(so_resource_errno(errno) ? errno : err);
	return linkat(fddir, ent, nfd, nname, AT_SYMLINK_FOLLOW);
}

int safe_symlinkat_beneath(const char *target, int dirfd, const char *linkpath, uint64_t flags)
{
	struct so_last last;
	_cleanup_fd_ int pfd = op_parent(dirfd, linkpath, flags, SAFE_REPLACE,
					 !target || !linkpath ? EFAULT : 0, &last);
	if (pfd < 0)
		return -1;
	if ((flags & SAFE_REPLACE) && replaceable(&last)) {
		if (!*target) /* symlinkat() would say ENOENT for the hidden name */
			return so_fail(ENOENT);
		return make_replacing(pfd, &last, target, 0, 0);
	}
	char nb[SO_LAST_MAX + 1];
	/* symlinkat() never follows its last component; "." / ".." are EEXIST;
	 * an empty target is ENOENT. The target is stored, not resolved. */
	return symlinkat(target, pfd, name_with_slash(&last, nb));
}

ssize_t safe_readlinkat_beneath(int dirfd, const char *path, char *buf, size_t size,
				uint64_t flags)
{
	int arg_err = (!path || !buf) ? EFAULT : size == 0 ? EINVAL : 0;
	struct so_last last;
	const char *name;
	_cleanup_fd_ int fd = op_object(dirfd, path, flags, 0, arg_err, &last, &name);
	if (fd < 0)
		return -1;
	if (*name)
		return readlinkat(fd, name, buf, size);
	if (!so_path_ends_in_name(path)) /* ".", "..", "x/": a directory (followed) */
		return so_fail(EINVAL);
	/* NO_XDEV: fd is the object itself (O_PATH|O_NOFOLLOW). readlinkat()
	 * of "" is ENOENT for a non-symlink; by name it would be EINVAL. */
	struct stat st;
	if (fstat(fd, &st) < 0)
		return -1;
	if (!S_ISLNK(st.st_mode))
		return so_fail(EINVAL);
	return readlinkat(fd, "", buf, size);
}

/* ------------------------------------------------------------------ chmod, chown, utimes */

int safe_fchmodat_beneath(int dirfd, const char *path, mode_t mode, uint64_t flags)
{
	struct so_last last;
	const char *name;
	_cleanup_fd_ int fd = op_object(dirfd, path, flags, SAFE_FOLLOW, 0, &last, &name);
	if (fd < 0)
		return -1;
	if (!so_lacks(SO_FEAT_FCHMODAT2)) {
		/* Linux 6.6: AT_SYMLINK_NOFOLLOW (EOPNOTSUPP on a symlink) and
		 * AT_EMPTY_PATH on an O_PATH fd. */
		long r = syscall(SYS_fchmodat2, fd, name, mode, at_flags(name));
		if (r == 0 || errno != ENOSYS)
			return (int)r;
		so_feature_set(SO_FEAT_FCHMODAT2, SO_PROBE_MISSING);
	}
	/* Older kernels: pin the object with O_PATH|O_NOFOLLOW, refuse a symlink
	 * (Linux has no symlink modes), chmod it through its own magic link. */
	_cleanup_fd_ int obj = op_object_fd(fd, name);
	if (obj < 0)
		return -1;
	struct stat st;
	if (fstat(obj, &st) < 0)
		return -1;
	if (S_ISLNK(st.st_mode))
		return so_fail(EOPNOTSUPP);
	char ent[SO_FD_NAME_SIZE];
	_cleanup_fd_ int fddir = so_procfs_entry(obj, ent);
	if (fddir < 0)
		return -1;
	return fchmodat(fddir, ent, mode, 0);
}

int safe_fchownat_beneath(int dirfd, const char *path, uid_t owner, gid_t group, uint64_t flags)
{
	struct so_last last;
	const char *name;
	_cleanup_fd_ int fd = op_object(dirfd, path, flags, SAFE_FOLLOW, 0, &last, &name);
	if (fd < 0)
		return -1;
	return fchownat(fd, name, owner, group, at_flags(name));
}

int safe_utimensat_beneath(int dirfd, const char *path, const struct timespec *times,
			   uint64_t flags)
{
	struct so_last last;
	const char *name;
	_cleanup_fd_ int fd = op_object(dirfd, path, flags, SAFE_FOLLOW, 0, &last, &name);
	if (fd < 0)
		return -1;
	if (utimensat(fd, name, times, at_flags(name)) == 0)
		return 0;
	if (*name || errno != EINVAL)
		return -1;
	/* Kernels before 5.8 refuse AT_EMPTY_PATH here (EINVAL; invalid times
	 * give EINVAL again below): go through the fd's magic link. */
	char ent[SO_FD_NAME_SIZE];
	_cleanup_fd_ int fddir = so_procfs_entry(fd, ent);
	if (fddir < 0)
		return so_fail(so_resource_errno(errno) ? errno : EINVAL);
	return utimensat(fddir, ent, times, 0);
}

/* ------------------------------------------------------------------ xattrs */

enum xop { XGET, XSET, XLIST, XREMOVE };

struct xreq {
	enum xop op;
	const char *name;
	void *out;      /* XGET, XLIST */
	const void *in; /* XSET */
	size_t size;
	int xflags;
};

/* One *xattrat() call (Linux 6.13) on (fd, name) with at-flags. */
static long xattrat(int fd, const char *name, int atf, const struct xreq *q)
{
	struct so_xattr_args args = {
		.value = (uint64_t)(uintptr_t)(q->op == XSET ? q->in : q->out),
		.size = (uint32_t)(q->size > UINT32_MAX ? UINT32_MAX : q->size),
		.flags = (uint32_t)q->xflags,
	};
	switch (q->op) {
	case XGET:
		return syscall(SYS_getxattrat, fd, name, atf, q->name, &args, sizeof(args));
	case XSET:
		return syscall(SYS_setxattrat, fd, name, atf, q->name, &args, sizeof(args));
	case XLIST:
		return syscall(SYS_listxattrat, fd, name, atf, q->out, q->size);
	case XREMOVE:
		return syscall(SYS_removexattrat, fd, name, atf, q->name);
	}
	return so_fail(EINVAL);
}

/* The path-based calls, on a procfs path that follows a magic link. */
static long xattr_path(const char *p, const struct xreq *q)
{
	switch (q->op) {
	case XGET:
		return getxattr(p, q->name, q->out, q->size);
	case XSET:
		return setxattr(p, q->name, q->in, q->size, q->xflags);
	case XLIST:
		return listxattr(p, q->out, q->size);
	case XREMOVE:
		return removexattr(p, q->name);
	}
	return so_fail(EINVAL);
}

/*
 * Act on the object of O_PATH fd `obj` through its own magic link in a
 * verified procfs: following /proc/thread-self/fd/N lands on exactly that
 * inode (a symlink itself for an O_NOFOLLOW fd; the jump is not followed
 * further). With *xattrat() this is fd-relative to the verified directory;
 * without it the path-based calls need a string: so_procfs_path()'s, checked
 * to lead to that inode (its premise: procfs.c).
 */
static long xattr_procfs(int obj, const struct xreq *q, bool have_at)
{
	if (have_at) {
		char ent[SO_FD_NAME_SIZE];
		_cleanup_fd_ int fddir = so_procfs_entry(obj, ent);
		if (fddir < 0)
			return -1;
		long r = xattrat(fddir, ent, 0, q);
		if (r >= 0 || errno != ENOSYS)
			return r;
		so_feature_set(SO_FEAT_XATTRAT, SO_PROBE_MISSING);
	}
	char p[SO_PROCFS_PATH_SIZE];
	if (so_procfs_path(obj, p) < 0)
		return -1;
	return xattr_path(p, q);
}

static long xattr_op(int dirfd, const char *path, uint64_t flags, const struct xreq *q)
{
	bool bad = !path || (q->op != XLIST && !q->name) ||
		   (q->size && !(q->op == XSET ? q->in : q->out));
	struct so_last last;
	const char *name;
	_cleanup_fd_ int fd =
		op_object(dirfd, path, flags, SAFE_FOLLOW, bad ? EFAULT : 0, &last, &name);
	if (fd < 0)
		return -1;
	bool have_at = !so_lacks(SO_FEAT_XATTRAT);
	if (*name && have_at) {
		/* The *xattrat() calls refuse AT_EMPTY_PATH on O_PATH fds, but
		 * take a name in an O_PATH directory. */
		long r = xattrat(fd, name, AT_SYMLINK_NOFOLLOW, q);
		if (r >= 0 || errno != ENOSYS)
			return r;
		so_feature_set(SO_FEAT_XATTRAT, SO_PROBE_MISSING);
		have_at = false;
	}
	_cleanup_fd_ int obj = op_object_fd(fd, name);
	if (obj < 0)
		return -1;
	return xattr_procfs(obj, q, have_at);
}

ssize_t safe_getxattr_beneath(int dirfd, const char *path, const char *name, void *value,
			      size_t size, uint64_t flags)
{
	struct xreq q = { .op = XGET, .name = name, .out = value, .size = size };
	return xattr_op(dirfd, path, flags, &q);
}

int safe_setxattr_beneath(int dirfd, const char *path, const char *name, const void *value,
			  size_t size, int xattr_flags, uint64_t flags)
{
	struct xreq q = {
		.op = XSET, .name = name, .in = value, .size = size, .xflags = xattr_flags,
	};
	return (int)xattr_op(dirfd, path, flags, &q);
}

/* NOLINTNEXTLINE(readability-non-const-parameter): the kernel writes *list */
ssize_t safe_listxattr_beneath(int dirfd, const char *path, char *list, size_t size,
			       uint64_t flags)
{
	struct xreq q = { .op = XLIST, .out = list, .size = size };
	return xattr_op(dirfd, path, flags, &q);
}

int safe_removexattr_beneath(int dirfd, const char *path, const char *name, uint64_t flags)
{
	struct xreq q = { .op = XREMOVE, .name = name };
	return (int)xattr_op(dirfd, path, flags, &q);
}

/* ------------------------------------------------------------------ reopen */

/* open(2) flags safe_reopen() accepts; O_CREAT, O_EXCL, O_TMPFILE make no
 * sense for an existing object. */
#define SO_REOPEN_FLAGS                                                                    \
	(O_ACCMODE | O_APPEND | O_NONBLOCK | O_SYNC | O_DSYNC | O_DIRECT | O_NOATIME |    \
	 O_LARGEFILE | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC | O_PATH | O_TRUNC | O_NOCTTY | \
	 O_ASYNC)

int safe_reopen(int fd, int flags)
{
	if (fd < 0 || fcntl(fd, F_GETFD) < 0)
		return so_fail(EBADF);
	if ((flags & ~SO_REOPEN_FLAGS) || (flags & O_ACCMODE) == O_ACCMODE)
		return so_fail(EINVAL);
	if ((flags & O_PATH) && (flags & ~(O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)))
		return so_fail(EINVAL);
	/* The object is already resolved: O_NOFOLLOW would only make the
	 * magic link itself fail (ELOOP) or be opened (O_PATH). */
	return so_procfs_reopen(fd, flags & ~O_NOFOLLOW);
}
