/* SPDX-License-Identifier: MIT */
/*
 * Files that appear under their name only once they carry their extended
 * attributes: safe_tmpfile_xattr() and the two-phase safe_tmpfile_open() /
 * safe_tmpfile_link() / safe_tmpfile_discard().
 *
 * Safety argument. The parent directory is opened by the resolver (fast path
 * or walker) with the caller's scope bits, so it lies beneath the root; every
 * later call acts relative to that O_PATH descriptor on a single name without
 * '/', so nothing can leave it. The file is filled in (xattrs, final mode,
 * optionally fsync) while it has no name, or only a hidden random name
 * created with O_CREAT|O_EXCL|O_NOFOLLOW, and reaches its final name in one
 * atomic step: linkat() of the unnamed inode (EEXIST if the name exists),
 * renameat2(RENAME_NOREPLACE), or rename() over the old file for REPLACE. No
 * process can therefore observe the final name without every xattr, and with
 * REPLACE the name never disappears (rename(2) is atomic with respect to
 * lookups of the new name). Each failure path removes the names this call
 * created itself (checked by inode before removal) and closes what it opened.
 * A hidden name never gives anyone but the owner access before the final
 * chmod right before the rename: it is created 0600 and the mode it must get
 * comes from an empty probe (probe_mode()).
 *
 * The two-phase handle lends the caller a dup of its own descriptor and acts
 * only on its own: that one keeps the inode allocated, so its (st_dev,
 * st_ino) cannot be reused, and user_fd_ok() can tell the lent number still
 * being this file (plus kcmp) from a closed or reused one before anything is
 * published or closed.
 *
 * The sweep of leftover hidden names is in sweep.c.
 */
#include "internal.h"

#include <assert.h>
#include <linux/fs.h> /* RENAME_NOREPLACE (musl's <stdio.h> has none) */
#include <linux/kcmp.h>
#include <linux/limits.h> /* XATTR_NAME_MAX, XATTR_SIZE_MAX */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/xattr.h>

/* The permission bits the file has while it is being filled in: the owner
 * must be able to write it (user.* xattrs follow the permission bits). */
#define WORK_MODE (S_IRUSR | S_IWUSR)

/* The operation bits safe_tmpfile_xattr() accepts besides the resolve bits. */
#define TMPFILE_OP_FLAGS (SAFE_TMPFILE_REPLACE | SAFE_TMPFILE_SYNC | SAFE_TMPFILE_PARENTS)

/* Internal: the named strategy only. Never a public bit: set from the
 * environment by tmp_strategy_env(), for tests and benchmarks. */
#define TMP_ONLY_NAMED (1ULL << 63)

/* Missing parents of SAFE_TMPFILE_PARENTS get this mode (umask applies). */
#define PARENTS_MODE 0755

/*
 * SAFEOPEN_NO_O_TMPFILE=1 in the environment makes every creation use the
 * named fallback, as on a filesystem without O_TMPFILE: the switch of the
 * tests and benchmarks, outside the ABI. Read at each creation (one getenv()
 * next to a dozen system calls) so that a test can compare both strategies in
 * one process; ignored in set-user-ID and set-group-ID programs
 * (secure_getenv). Either strategy gives the same result.
 */
static uint64_t tmp_strategy_env(void)
{
	const char *v = secure_getenv("SAFEOPEN_NO_O_TMPFILE");
	return v && *v && strcmp(v, "0") != 0 ? TMP_ONLY_NAMED : 0;
}

enum tmp_strategy {
	TMP_EMPTY_PATH = 1, /* unnamed inode, linkat(AT_EMPTY_PATH) */
	TMP_PROCFS,         /* unnamed inode, linkat through the verified procfs */
	TMP_NAMED,          /* hidden named temporary, renamed into place */
	TMP_SPENT,          /* published, then the directory sync failed */
	TMP_DEAD,           /* released after a misuse of the caller's descriptor */
};

/* The two-phase handle. Opaque to callers, so it can grow freely. */
struct safe_tmpfile {
	int fd;                         /* the file, O_RDWR|O_CLOEXEC: private */
	int userfd;                     /* two-phase: the caller's dup of fd, or -1 */
	struct so_ident id;             /* the file's identity, recorded at creation */
	int parentfd;                   /* O_PATH directory the file lives in */
	enum tmp_strategy strategy;
	mode_t mode;                    /* requested mode */
	mode_t created;                 /* mode bits as the kernel created the inode */
	mode_t now;                     /* mode bits now, while now_known */
	bool now_known;                 /* no one but us has had the fd since */
	bool from_cache;                /* strategy taken from the cached probe */
	bool stale;                     /* ... and no way to link was left */
	bool has_tmpname;               /* TMP_NAMED: tmpname exists in parentfd */
	char name[NAME_MAX + 1];        /* final name in parentfd */
	char tmpname[SO_HIDDEN_LEN + 1]; /* TMP_NAMED: the hidden name */
	struct so_made_dirs made;       /* SAFE_TMPFILE_PARENTS: what to undo */
	ssize_t failed_xattr;           /* the last publication failed on this xattr, or -1 */
};

static void tmp_init(struct safe_tmpfile *t)
{
	memset(t, 0, sizeof(*t));
	t->fd = -1;
	t->userfd = -1;
	t->parentfd = -1;
	t->made.topfd = -1;
	t->failed_xattr = -1;
}

/* True if `name` in dirfd (not followed) is the inode open as fd. */
static bool name_is_fd(int dirfd, const char *name, int fd)
{
	struct stat a, b;
	if (fstat(fd, &a) < 0 || fstatat(dirfd, name, &b, AT_SYMLINK_NOFOLLOW) < 0)
		return false;
	struct so_ident ia = so_stat_ident(&a), ib = so_stat_ident(&b);
	return so_same_inode(&ia, &ib);
}

/* Remove a name this library created, but only while it still refers to our
 * inode: never delete what someone else put there. */
static int unlink_if_ours(int dirfd, const char *name, int fd)
{
	if (!name_is_fd(dirfd, name, fd))
		return 0;
	return unlinkat(dirfd, name, 0);
}

/* ------------------------------------------------------------------ validation */

static bool has_namespace_prefix(const char *name, size_t len)
{
	static const char *const prefixes[] = { "user.", "trusted.", "security.", "system." };
	for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++) {
		size_t plen = strlen(prefixes[i]);
		if (len > plen && !strncmp(name, prefixes[i], plen))
			return true;
	}
	return false;
}

/* Check the whole xattr array before anything is created. The first bad
 * entry decides the errno. */
static int check_xattrs(const struct safe_xattr *xattrs, size_t n)
{
	if (n && !xattrs)
		return so_fail(EFAULT);
	for (size_t i = 0; i < n; i++) {
		const struct safe_xattr *x = &xattrs[i];
		if (!x->name || (x->size && !x->value))
			return so_fail(EFAULT);
		size_t len = strnlen(x->name, XATTR_NAME_MAX + 1);
		if (len == 0 || len > XATTR_NAME_MAX || !has_namespace_prefix(x->name, len))
			return so_fail(EINVAL);
		if (x->size > XATTR_SIZE_MAX)
			return so_fail(E2BIG);
		for (size_t j = 0; j < i; j++)
			if (!strcmp(xattrs[j].name, x->name))
				return so_fail(EINVAL);
	}
	return 0;
}

/* The last component must be an ordinary name: "" is ENOENT (as every
 * path-taking call), ".", ".." or a trailing slash (including a path of only
 * slashes) are EINVAL: there is no file to create under such a name. */
static int check_final_name(const char *path)
{
	size_t len;
	if (so_path_len(path, &len) < 0)
		return -1;
	return so_path_ends_in_name(path) ? 0 : so_fail(EINVAL);
}

/* ------------------------------------------------------------------ creation */

/* O_TMPFILE is not available here: old kernel (EISDIR: the flag was taken for
 * O_DIRECTORY), filesystem without ->tmpfile (EOPNOTSUPP), or a sandbox that
 * refuses it (ENOSYS, EPERM, EINVAL). */
static bool tmpfile_unsupported(int err)
{
	return err == EOPNOTSUPP || err == EISDIR || err == EINVAL || err == ENOSYS ||
	       err == EPERM;
}

static int open_unnamed(int parentfd, mode_t mode)
{
	/* Raw syscall: the mode is always passed, whatever the libc wrapper
	 * does with O_TMPFILE. */
	return (int)syscall(SYS_openat, parentfd, ".", O_TMPFILE | O_RDWR | O_CLOEXEC,
			    (unsigned int)mode);
}

/*
 * Which way can the unnamed inode `fd` be linked into parentfd? Probed with
 * the new name ".", which the kernel refuses with EEXIST only after it has
 * accepted the old path, so the probe creates nothing. Returns the strategy,
 * 0 if neither way works, or -1 with errno on a hard error.
 */
/*
 * One probe attempt: link olddirfd/oldpath to the new name "." in parentfd and
 * return the resulting errno. The kernel looks the old path up (and checks the
 * caller may link it) before it finds that "." exists, so EEXIST means "this
 * way is allowed". Success is impossible ("." always exists); if it ever
 * happened, the old path was accepted all the same, hence EEXIST too.
 */
static int link_probe_errno(int olddirfd, const char *oldpath, int parentfd, int at_flags)
{
	if (linkat(olddirfd, oldpath, parentfd, ".", at_flags) == 0)
		return EEXIST;
	return errno;
}

static int probe_link(int fd, int parentfd)
{
	int err = link_probe_errno(fd, "", parentfd, AT_EMPTY_PATH);
	if (err == EEXIST) {
		so_feature_set(SO_FEAT_EMPTY_PATH_LINK, SO_PROBE_HAVE);
		return TMP_EMPTY_PATH;
	}
	if (err == ENOMEM) {
		errno = err;
		return -1;
	}

	char num[SO_FD_NAME_SIZE];
	_cleanup_fd_ int fddir = so_procfs_entry(fd, num);
	if (fddir < 0)
		return errno == ENXIO ? 0 : -1;
	/* The entry must lead to fd's inode. Where neither openat2's NO_XDEV nor
	 * a mount id (statx, 5.8) can show that the fd directory is this
	 * procfs's own, a bind mount of another process's fd directory on
	 * the same procfs passes procfs.c's checks; its entry is another
	 * object: no procfs way, the named fallback (link_unnamed() checks
	 * again at the link, for a descriptor swapped meanwhile). */
	struct stat a, b;
	if (fstat(fd, &a) < 0 || fstatat(fddir, num, &b, 0) < 0)
		return so_resource_errno(errno) ? -1 : 0;
	struct so_ident ia = so_stat_ident(&a), ib = so_stat_ident(&b);
#ifndef SAFEOPEN_MUTATE_PROCFS_PROBE_IDENTITY
	if (!so_same_inode(&ia, &ib))
		return 0;
#else
	(void)ia;
	(void)ib;
#endif
	err = link_probe_errno(fddir, num, parentfd, AT_SYMLINK_FOLLOW);
	if (err == EEXIST)
		return TMP_PROCFS;
	if (err == ENOMEM) {
		errno = err;
		return -1;
	}
	return 0;
}

/* Create a fresh hidden name in parentfd with O_CREAT|O_EXCL|O_NOFOLLOW and
 * `mode`; the name is written to name[]. Returns the fd or -1 (EEXIST after
 * SO_HIDDEN_TRIES collisions). */
static int create_hidden(int parentfd, mode_t mode, char name[SO_HIDDEN_LEN + 1])
{
	for (int i = 0; i < SO_HIDDEN_TRIES; i++) {
		so_hidden_name(name);
		int fd = openat(parentfd, name, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
				mode);
		if (fd >= 0 || errno != EEXIST)
			return fd;
	}
	return so_fail(EEXIST);
}

/*
 * What open(O_CREAT, cmode) gives in parentfd, without ever exposing the file
 * that will carry content: an empty probe file is created with cmode under a
 * hidden name of its own, its mode read and the probe removed at once. The
 * kernel alone applies the umask or the directory's default ACL and its
 * set-group-ID rules (filesystems may have their own), so asking it is the
 * only exact answer. Whoever opens the probe in that instant holds an empty,
 * unlinked file. Returns the permission bits or -1.
 */
static int probe_mode(int parentfd, mode_t cmode, mode_t *created)
{
	char name[SO_HIDDEN_LEN + 1];
	_cleanup_fd_ int fd = create_hidden(parentfd, cmode, name);
	if (fd < 0)
		return -1;
	struct stat st;
	int err = fstat(fd, &st) < 0 ? errno : 0;
	if (unlink_if_ours(parentfd, name, fd) < 0 && !err)
		err = errno;
	if (err)
		return so_fail(err);
	*created = st.st_mode & 07777;
	return 0;
}

/*
 * The named fallback. The file that gets the content is created with mode
 * 0600 (never more than owner read and write while it has a name other than
 * the final one: a crash leaves it private); the mode it must finally have
 * comes from probe_mode() unless the requested bits are 0600 anyway.
 */
static int create_named(struct safe_tmpfile *t, mode_t cmode)
{
	bool probed = cmode != WORK_MODE;
	if (probed && probe_mode(t->parentfd, cmode, &t->created) < 0)
		return -1;
	int fd = create_hidden(t->parentfd, WORK_MODE, t->tmpname);
	if (fd < 0)
		return -1;
	t->fd = fd;
	t->has_tmpname = true;
	t->strategy = TMP_NAMED;
	return probed ? 1 : 0;
}

/*
 * Phase one, shared by both entry points: resolve the parent, pick the
 * strategy, create the file. The unnamed inode is created with the requested
 * mode plus owner read/write, so the kernel applies the umask or the parent's
 * default ACL to exactly the requested bits; the result is recorded (for the
 * named fallback it comes from a probe, see create_named()) and the file is
 * then kept at owner read/write at least, and a named one at exactly 0600,
 * until publication. On failure nothing exists and t holds no fd.
 */
static int tmp_create(int dirfd, const char *path, mode_t mode, uint64_t flags, bool use_cache,
		      struct safe_tmpfile *t)
{
	struct so_last last;
	int parentfd = so_resolve_parent(dirfd, path, flags & SO_RESOLVE_ALL_MASK, &last);
	if (parentfd < 0)
		return -1;
	t->parentfd = parentfd;
	/* A name too long for any filesystem that can hold files: reported
	 * after the parent resolved, as a left-to-right walk would. */
	if (strlen(last.name) > NAME_MAX) {
		errno = ENAMETOOLONG;
		goto fail;
	}
	t->mode = mode;
	memcpy(t->name, last.name, sizeof(t->name));

	mode_t cmode = mode | WORK_MODE;
	if (!(flags & TMP_ONLY_NAMED)) {
		_cleanup_fd_ int fd = open_unnamed(parentfd, cmode);
		if (fd >= 0) {
			bool cached = use_cache &&
				      so_feature(SO_FEAT_EMPTY_PATH_LINK) == SO_PROBE_HAVE;
			int s = cached ? TMP_EMPTY_PATH : probe_link(fd, parentfd);
			t->from_cache = cached;
			if (s < 0)
				goto fail;
			if (s > 0) {
				t->strategy = (enum tmp_strategy)s;
				t->fd = take_fd(&fd);
			}
			/* s == 0: no way to link it; the unnamed inode goes
			 * away with its fd and the named fallback is used. */
		} else if (!tmpfile_unsupported(errno)) {
			goto fail;
		}
	}
	int probed = 0;
	if (t->fd < 0 && (probed = create_named(t, cmode)) < 0)
		goto fail;

	struct stat st;
	if (fstat(t->fd, &st) < 0)
		goto fail_file;
	t->id = so_stat_ident(&st);
	if (!probed)
		t->created = st.st_mode & 07777;
	t->now = st.st_mode & 07777;
	/* Owner read/write to work on it (a umask or ACL may have taken
	 * them); a named file never has more. */
	if (t->now != WORK_MODE &&
	    ((t->now & WORK_MODE) != WORK_MODE || t->strategy == TMP_NAMED)) {
		if (fchmod(t->fd, WORK_MODE) < 0)
			goto fail_file;
		t->now = WORK_MODE;
	}
	t->now_known = true;
	return 0;

fail_file:
	if (t->has_tmpname)
		(void)unlink_if_ours(t->parentfd, t->tmpname, t->fd);
	t->has_tmpname = false;
	so_closep(&t->fd);
fail:
	so_closep(&t->parentfd);
	return -1;
}

/* ------------------------------------------------------------------ publication */

static bool is_acl_xattr(const char *name)
{
	return !strcmp(name, "system.posix_acl_access") ||
	       !strcmp(name, "system.posix_acl_default");
}

/* Set the xattrs (the ACLs, or the others); on failure *failed is the index
 * of the one fsetxattr(2) refused. */
static int set_xattrs(int fd, const struct safe_xattr *xattrs, size_t n, bool acls,
		      ssize_t *failed)
{
	for (size_t i = 0; i < n; i++) {
		if (is_acl_xattr(xattrs[i].name) != acls)
			continue;
		if (fsetxattr(fd, xattrs[i].name, xattrs[i].size ? xattrs[i].value : "",
			      xattrs[i].size, 0) < 0) {
			*failed = (ssize_t)i;
			return -1;
		}
	}
	return 0;
}

/* Link the unnamed inode under `name`. If AT_EMPTY_PATH stopped working since
 * the probe (changed credentials), the verified procfs is tried too. */
static int link_unnamed(struct safe_tmpfile *t, const char *name)
{
	if (t->strategy == TMP_EMPTY_PATH) {
		if (linkat(t->fd, "", t->parentfd, name, AT_EMPTY_PATH) == 0)
			return 0;
		/* ENOENT: not privileged (any more); EPERM: a sandbox. */
		if (errno != ENOENT && errno != EPERM)
			return -1;
		so_feature_set(SO_FEAT_EMPTY_PATH_LINK, SO_PROBE_UNKNOWN);
	}
	char num[SO_FD_NAME_SIZE];
	_cleanup_fd_ int fddir = so_procfs_entry(t->fd, num);
	if (fddir < 0) {
		/* Neither way: if the cached probe chose AT_EMPTY_PATH, the
		 * caller starts over and probes (the named fallback). */
		t->stale = t->from_cache;
		/* keep AT_EMPTY_PATH's answer (ENOENT) if it was tried */
		if (t->strategy == TMP_EMPTY_PATH && errno == ENXIO)
			errno = ENOENT;
		return -1;
	}
	/* The entry must lead to our inode (it is our own fd table in a
	 * verified procfs; this also catches a descriptor swapped under us). */
	struct stat a, b;
	if (fstat(t->fd, &a) < 0 || fstatat(fddir, num, &b, 0) < 0)
		return -1;
	struct so_ident ia = so_stat_ident(&a), ib = so_stat_ident(&b);
	if (!so_same_inode(&ia, &ib))
		return so_fail(EXDEV);
	return linkat(fddir, num, t->parentfd, name, AT_SYMLINK_FOLLOW);
}

static int publish_unnamed(struct safe_tmpfile *t, bool replace)
{
	if (!replace)
		return link_unnamed(t, t->name);

	/* Link under a hidden name, then rename over the target. */
	char hidden[SO_HIDDEN_LEN + 1];
	int i;
	for (i = 0; i < SO_HIDDEN_TRIES; i++) {
		so_hidden_name(hidden);
		if (link_unnamed(t, hidden) == 0)
			break;
		if (errno != EEXIST)
			return -1;
	}
	if (i == SO_HIDDEN_TRIES)
		return so_fail(EEXIST);
	if (renameat(t->parentfd, hidden, t->parentfd, t->name) < 0) {
		int saved = errno;
		(void)unlink_if_ours(t->parentfd, hidden, t->fd);
		return so_fail(saved);
	}
	return 0;
}

static int publish_named(struct safe_tmpfile *t, bool replace)
{
	/* Never move something that is not ours onto the final name. */
	if (!name_is_fd(t->parentfd, t->tmpname, t->fd))
		return so_fail(ENOENT);
	if (replace) {
		if (renameat(t->parentfd, t->tmpname, t->parentfd, t->name) < 0)
			return -1;
	} else if (so_renameat2(t->parentfd, t->tmpname, t->parentfd, t->name,
				RENAME_NOREPLACE) < 0) {
		/* No renameat2 (kernel or filesystem): link + unlink; the
		 * hidden name is our regular file (checked above). */
		if (errno != ENOSYS || so_rename_by_link(t->parentfd, t->tmpname, t->parentfd,
							 t->name) < 0)
			return -1;
	}
	t->has_tmpname = false;
	return 0;
}

/* fsync(2) of the directory needs a real (not O_PATH) descriptor. A directory
 * we cannot read (a drop box: write and search only) is covered by syncfs of
 * the file's filesystem, which is the same filesystem. */
static int sync_dir(struct safe_tmpfile *t)
{
	_cleanup_fd_ int dfd = openat(t->parentfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return errno == EACCES ? syncfs(t->fd) : -1;
	return fsync(dfd);
}

/*
 * Phase two: xattrs, final mode, optional fsync, atomic publication. Returns
 * the fd (now the caller's; t no longer holds it nor the parent) or -1 with t
 * unchanged apart from the file's xattrs, so it can be retried or discarded.
 * The order follows what the kernel strips: write() and fchown() (done by the
 * caller in phase one) drop security.capability and the set-id bits, so
 * xattrs come after them and the mode last; set-id bits are restored from the
 * mode the inode was created with. POSIX ACL xattrs are set after the mode,
 * because they define the permission bits themselves.
 *
 * A file that has a hidden name (the named fallback) stays at mode 0600 until
 * the last moment: with SYNC its data is made durable first (fdatasync), then
 * the final mode and ACLs are applied and made durable (fsync, metadata only
 * by then) right before the rename; a failure in between narrows it to 0600
 * again. An unnamed file gets everything before any name: with REPLACE its
 * hidden name then exists only between linkat() and rename().
 */
static int tmp_publish(struct safe_tmpfile *t, const struct safe_xattr *xattrs, size_t n,
		       uint64_t flags)
{
	if (t->strategy == TMP_SPENT)
		return so_fail(EINVAL);
	t->failed_xattr = -1;

	mode_t cur = t->now;
	if (!t->now_known) {
		/* The caller has had the fd (two-phase form) or a try failed. */
		struct stat st;
		if (fstat(t->fd, &st) < 0)
			return -1;
		cur = st.st_mode & 07777;
	}
	t->now_known = false;
	bool named = t->strategy == TMP_NAMED;
	if ((cur & WORK_MODE) != WORK_MODE) {
		/* A retry after a failed link, or the caller changed it. */
		if (fchmod(t->fd, WORK_MODE) < 0)
			return -1;
		cur = WORK_MODE;
	}
#ifndef SAFEOPEN_MUTATE_TMPFILE_XATTR_ORDER
	if (set_xattrs(t->fd, xattrs, n, false, &t->failed_xattr) < 0)
		return -1;
#endif
	bool sync = flags & SAFE_TMPFILE_SYNC;
	if (sync && named && fdatasync(t->fd) < 0)
		return -1;
	/* What open(O_CREAT, mode) gives: the kernel's result for mode|0600
	 * (umask or default ACL applied, set-gid rules), minus the owner bits
	 * that were added only to work on the file. Both the umask and an ACL
	 * act bit by bit, so removing those bits afterwards is exact. */
	mode_t final = t->created & ~(WORK_MODE & ~t->mode);
	if (cur != final && fchmod(t->fd, final) < 0)
		return -1;
	if (set_xattrs(t->fd, xattrs, n, true, &t->failed_xattr) < 0 || (sync && fsync(t->fd) < 0))
		goto narrow;

	bool replace = flags & SAFE_TMPFILE_REPLACE;
	int r = named ? publish_named(t, replace) : publish_unnamed(t, replace);
	if (r < 0)
		goto narrow;
#ifdef SAFEOPEN_MUTATE_TMPFILE_XATTR_ORDER
	/* Mutation check only: the xattrs after the link (visible without). */
	if (set_xattrs(t->fd, xattrs, n, false, &t->failed_xattr) < 0)
		return -1;
#endif

	if (sync && sync_dir(t) < 0) {
		/* Published but not durable. Without REPLACE take the name
		 * back, so that failure still means "nothing there"; with
		 * REPLACE the old file is gone and the new one stays. */
		int saved = errno;
		if (!replace)
			(void)unlink_if_ours(t->parentfd, t->name, t->fd);
		t->strategy = TMP_SPENT;
		return so_fail(saved);
	}
	so_closep(&t->parentfd);
	if (t->userfd >= 0) {
		/* two-phase: the caller keeps the number it has been using */
		so_closep(&t->fd);
		return take_fd(&t->userfd);
	}
	return take_fd(&t->fd);

narrow:
	/* A hidden name must not keep the final mode while it waits for a
	 * retry or a discard (or a crash). */
#ifndef SAFEOPEN_MUTATE_TMPFILE_NARROW
	if (named && final != WORK_MODE) {
		int saved = errno;
		(void)fchmod(t->fd, WORK_MODE);
		errno = saved;
	}
#endif
	return -1;
}

/* Close everything and remove the hidden name, if any; the caller's
 * descriptor too when close_user (it is still ours). */
static int tmp_release(struct safe_tmpfile *t, bool close_user)
{
	int r = 0;
	if (t->has_tmpname && unlink_if_ours(t->parentfd, t->tmpname, t->fd) < 0)
		r = -1;
	t->has_tmpname = false;
	so_closep(&t->fd);
	so_closep(&t->parentfd);
	if (close_user)
		so_closep(&t->userfd);
	t->userfd = -1;
	return r;
}

/* ------------------------------------------------------------------ public API */

static int check_mode(mode_t mode)
{
	return (mode & ~(mode_t)07777) ? so_fail(EINVAL) : 0;
}

/*
 * SAFE_TMPFILE_PARENTS: mkdir -p of the directory part of path beneath dirfd
 * (so_make_parents()), leaving in *cflags the flags that resolve the last
 * plain name in the returned directory. -2: one component, nothing to make.
 */
static int make_parents(int dirfd, const char *path, uint64_t *cflags, struct so_made_dirs *made,
			const char **name)
{
	uint64_t resolve = *cflags & SO_RESOLVE_ALL_MASK, name_resolve;
	int fd = so_make_parents(dirfd, path, PARENTS_MODE, resolve, made, name, &name_resolve);
	if (fd >= 0)
		*cflags = (*cflags & ~(SO_RESOLVE_ALL_MASK | SAFE_TMPFILE_PARENTS)) | name_resolve;
	return fd;
}

/* All of data[0..len) into fd, whatever write(2) takes at a time. */
static int write_all(int fd, const void *data, size_t len)
{
	const char *p = data;
	while (len > 0) {
		ssize_t n = write(fd, p, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -1;
		if (n == 0)
			return so_fail(ENOSPC); /* a regular file that takes nothing */
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/*
 * safe_tmpfile_xattr() and safe_write_atomic(): create the unpublished file,
 * write data into it while it has no name (or only its hidden one), then
 * publish it with its xattrs. The content is part of what appears in one
 * step: no reader ever sees the name with less than all of it.
 */
static int store(int dirfd, const char *path, mode_t mode, const void *data, size_t len,
		 const struct safe_xattr *xattrs, size_t nxattrs, uint64_t flags)
{
	uint64_t resolve;
	if (so_op_resolve(flags, TMPFILE_OP_FLAGS, &resolve) < 0)
		return -1;
	flags = (flags & TMPFILE_OP_FLAGS) | resolve | tmp_strategy_env();
	if (check_mode(mode) < 0 || check_final_name(path) < 0 || check_xattrs(xattrs, nxattrs) < 0)
		return -1;
	if (!data && len > 0)
		return so_fail(EFAULT);

	struct so_made_dirs made = SO_MADE_DIRS_INIT;
	_cleanup_fd_ int pdir = -1;
	if (flags & SAFE_TMPFILE_PARENTS) {
		pdir = make_parents(dirfd, path, &flags, &made, &path);
		if (pdir == -1) {
			so_made_dirs_undo(&made);
			return -1;
		}
		if (pdir >= 0)
			dirfd = pdir;
	}
	/* A second round only when the cached link probe proved stale. */
	for (bool use_cache = true;; use_cache = false) {
		struct safe_tmpfile t;
		tmp_init(&t);
		if (tmp_create(dirfd, path, mode, flags, use_cache, &t) < 0)
			break;
		int fd = len > 0 && write_all(t.fd, data, len) < 0
				 ? -1
				 : tmp_publish(&t, xattrs, nxattrs, flags);
		if (fd >= 0) {
			so_made_dirs_free(&made);
			return fd;
		}
		int saved = errno;
		bool stale = t.stale;
		(void)tmp_release(&t, false);
		errno = saved;
		if (!stale || !use_cache)
			break;
	}
	so_made_dirs_undo(&made); /* keeps errno */
	return -1;
}

int safe_tmpfile_xattr(int dirfd, const char *path, mode_t mode, const struct safe_xattr *xattrs,
		       size_t nxattrs, uint64_t flags)
{
	return store(dirfd, path, mode, NULL, 0, xattrs, nxattrs, flags);
}

int safe_write_atomic(int dirfd, const char *path, const void *data, size_t len, mode_t mode,
		      const struct safe_xattr *xattrs, size_t nxattrs, uint64_t flags)
{
	int fd = store(dirfd, path, mode, data, len, xattrs, nxattrs, flags);
	if (fd < 0)
		return -1;
	so_close(fd);
	return 0;
}

int safe_tmpfile_open(int dirfd, const char *path, mode_t mode, uint64_t flags,
		      struct safe_tmpfile **tmpp)
{
	uint64_t resolve;
	if (so_op_resolve(flags, SAFE_TMPFILE_PARENTS, &resolve) < 0)
		return -1;
	flags = (flags & SAFE_TMPFILE_PARENTS) | resolve | tmp_strategy_env();
	if (!tmpp)
		return so_fail(EFAULT);
	if (check_mode(mode) < 0 || check_final_name(path) < 0)
		return -1;

	struct safe_tmpfile *t = malloc(sizeof(*t));
	if (!t)
		return so_fail(ENOMEM);
	tmp_init(t);
	_cleanup_fd_ int pdir = -1;
	if (flags & SAFE_TMPFILE_PARENTS) {
		pdir = make_parents(dirfd, path, &flags, &t->made, &path);
		if (pdir == -1)
			goto fail;
		if (pdir >= 0)
			dirfd = pdir;
	}
	if (tmp_create(dirfd, path, mode, flags, false, t) < 0)
		goto fail;
	/* The caller works on a descriptor of its own number; the handle keeps
	 * the original, which also keeps the inode (and so its number) alive
	 * for the identity check of user_fd_ok(). */
	t->userfd = fcntl(t->fd, F_DUPFD_CLOEXEC, 0);
	if (t->userfd < 0) {
		int saved = errno;
		(void)tmp_release(t, false);
		errno = saved;
		goto fail;
	}
	t->now_known = false; /* the caller may change the mode */
	*tmpp = t;
	return 0;

fail:;
	int saved = errno;
	so_made_dirs_undo(&t->made);
	free(t);
	return so_fail(saved);
}

int safe_tmpfile_fd(const struct safe_tmpfile *tmp)
{
	if (!tmp)
		return so_fail(EFAULT);
	if (tmp->userfd < 0)
		return so_fail(EBADF);
	return tmp->userfd;
}

/*
 * Is the caller's descriptor still the one safe_tmpfile_open() handed out?
 * kcmp(KCMP_FILE) against the handle's own descriptor decides alone where
 * the kernel offers it. Premise: 0 means both numbers name one open file
 * description, and the handle's is the file it created, open O_RDWR, that
 * nobody else ever had; so the lent number is that file, with its inode and
 * access mode, and an fstat() identity check would add nothing (asserted in
 * the debug builds). Anything else is EBADF: a closed number (EBADF from
 * kcmp), or another open file description, be it another file that reused
 * the number or another open of the same inode (the hidden name of the
 * fallback). Where kcmp is missing (ENOSYS, no CONFIG_KCMP) or filtered
 * (EPERM, a sandbox), the weaker check: the number shows the file's (st_dev,
 * st_ino), which no other file can carry meanwhile because the handle's own
 * descriptor keeps the inode allocated, and it is open O_RDWR (publishing
 * the same inode is still right). 0 or -1 with EBADF.
 */
static int user_fd_ok(const struct safe_tmpfile *t)
{
#ifdef SAFEOPEN_MUTATE_TMPFILE_FD_CHECK
	return t->userfd >= 0 ? 0 : so_fail(EBADF);
#endif
	if (t->userfd < 0)
		return so_fail(EBADF);
	struct stat st;
#ifdef SYS_kcmp
	pid_t pid = getpid();
	long r = syscall(SYS_kcmp, pid, pid, KCMP_FILE, t->fd, t->userfd);
#ifdef SAFEOPEN_MUTATE_TMPFILE_KCMP
	/* Mutation check only: any open number passes kcmp. */
	if (r > 0)
		r = 0;
#endif
	if (r == 0) {
#ifndef NDEBUG
		struct stat mine;
		assert(fstat(t->userfd, &st) == 0 && fstat(t->fd, &mine) == 0 &&
		       st.st_dev == mine.st_dev && st.st_ino == mine.st_ino);
#endif
		return 0;
	}
	if (r > 0 || errno == EBADF)
		return so_fail(EBADF);
	/* ENOSYS, EPERM: the weaker check below */
#endif
	if (fstat(t->userfd, &st) < 0)
		return so_fail(EBADF);
	struct so_ident now = so_stat_ident(&st);
	if (!so_same_inode(&now, &t->id))
		return so_fail(EBADF);
	int fl = fcntl(t->userfd, F_GETFL);
	if (fl < 0 || (fl & (O_ACCMODE | O_PATH)) != O_RDWR)
		return so_fail(EBADF);
	return 0;
}

/* A misused handle gives up everything it still holds (not the caller's
 * descriptor number, which is now someone else's or nobody's) and stays
 * allocated for safe_tmpfile_discard(). */
static int tmp_kill(struct safe_tmpfile *t)
{
	(void)tmp_release(t, false);
	t->strategy = TMP_DEAD;
	return so_fail(EBADF);
}

int safe_tmpfile_link(struct safe_tmpfile *tmp, const struct safe_xattr *xattrs, size_t nxattrs,
		      uint64_t flags)
{
	if (flags & ~(SAFE_TMPFILE_REPLACE | SAFE_TMPFILE_SYNC))
		return so_fail(EINVAL);
	if (!tmp)
		return so_fail(EFAULT);
	if (check_xattrs(xattrs, nxattrs) < 0)
		return -1;
	if (tmp->strategy == TMP_DEAD)
		return so_fail(EBADF);
	if (user_fd_ok(tmp) < 0)
		return tmp_kill(tmp);
	int fd = tmp_publish(tmp, xattrs, nxattrs, flags);
	if (fd >= 0) {
		so_made_dirs_free(&tmp->made); /* published: the directories stay */
		free(tmp);
	}
	return fd;
}

ssize_t safe_tmpfile_failed_xattr(const struct safe_tmpfile *tmp)
{
	if (!tmp)
		return so_fail(EFAULT);
	if (tmp->failed_xattr < 0)
		return so_fail(ENODATA);
	return tmp->failed_xattr;
}

int safe_tmpfile_discard(struct safe_tmpfile *tmp)
{
	if (!tmp)
		return 0;
	int err = 0;
	if (tmp->strategy != TMP_DEAD) {
		bool ours = user_fd_ok(tmp) == 0;
		if (!ours)
			err = EBADF;
		if (tmp_release(tmp, ours) < 0 && !err)
			err = errno;
	}
	/* After the file's hidden name is gone: the directories of
	 * SAFE_TMPFILE_PARENTS that are still empty and still ours. */
	so_made_dirs_undo(&tmp->made);
	free(tmp);
	return err ? so_fail(err) : 0;
}
