/* SPDX-License-Identifier: MIT */
/*
 * Access to this process's fd table through a procfs whose identity is
 * verified, for reopening O_PATH descriptors and for linking unnamed files.
 *
 * Safety argument: a path string such as "/proc/self/fd/3" trusts whatever is
 * mounted at /proc. Instead we open /proc itself with O_NOFOLLOW, require the
 * procfs magic (PROC_SUPER_MAGIC) and the procfs root inode, and walk from it
 * to thread-self/fd without crossing a mount (openat2 RESOLVE_NO_XDEV where
 * available, else a check that the result is on the same procfs device and,
 * where statx reports it, the same mount as /proc itself, which also catches
 * a bind mount of another procfs directory).
 * An attacker who can mount over /proc or its subdirectories (a tmpfs with a
 * fake fd/3 symlink, a bind mount of another process's fd directory) is then
 * detected, and the reopened object is compared with the original inode.
 * These internal uses open /proc each time.
 *
 * The public procfs API (safe_proc_*(), at the end) keeps one cached handle
 * per kind, the library's only global descriptors: a private procfs instance
 * where the kernel lets us make one (fsopen("proc"), with subset=pid for the
 * pid bases), else a clone of the /proc mount without what is mounted on
 * top of it (open_tree(OPEN_TREE_CLONE), not recursive), else /proc itself
 * verified as above. Every lookup from it runs with NO_XDEV|NO_MAGICLINKS
 * (the resolver: openat2 or the walker), so no component on another mount
 * (an overmount of a file or directory below /proc) and no magic link on
 * the way is ever used; a trailing magic link is followed only when asked,
 * after checking that its own entry is on the handle's mount. The handle is
 * checked at each use (procfs magic, root inode, its mount): a program that
 * closed its number is given a new one, never another file.
 */
#include "internal.h"

#include <linux/magic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <stdatomic.h>
#include <sys/syscall.h>

#define PROC_ROOT_INO 1

/* The mount id of fd in *mnt, 0 if statx cannot tell (before 5.8, or no
 * statx). Not so_ident_at(): its fallback for old kernels reads fdinfo
 * through here. Returns 0, or -1 with errno when statx fails otherwise (a
 * resource error is then passed on as it is, never read as "cannot tell"). */
static int mount_id(int fd, uint64_t *mnt)
{
	struct statx stx;
	*mnt = 0;
	if (so_statx_at(fd, NULL, STATX_MNT_ID, &stx) < 0)
		return -1; /* no statx at all: so_statx_at() gives the basic fields */
	if (stx.stx_mask & STATX_MNT_ID)
		*mnt = stx.stx_mnt_id;
	return 0;
}

/* The mount id of fd by every way the library knows: statx (5.8+), else
 * so_mount_id() (a file handle's, or the fdinfo entry's, as on 4.18 and
 * 5.4). *mnt 0 when nothing can tell; -1 with errno on a resource error. */
static int mount_id_known(int fd, uint64_t *mnt)
{
	if (mount_id(fd, mnt) < 0)
		return -1;
	if (*mnt)
		return 0;
	int r = so_mount_id(fd, NULL, mnt);
	if (r <= 0)
		*mnt = 0;
	return r < 0 ? -1 : 0;
}

/* Is fd a directory of the verified procfs (device dev, and mount mnt where
 * known)? 0 yes; -1 with ENXIO no, or with a resource errno as it is. */
static int check_procfs(int fd, dev_t dev, uint64_t mnt)
{
	struct statfs sfs;
	struct stat st;
	uint64_t m = 0;
	errno = 0;
	if (fstatfs(fd, &sfs) < 0 || sfs.f_type != PROC_SUPER_MAGIC ||
	    fstat(fd, &st) < 0 || st.st_dev != dev || !S_ISDIR(st.st_mode) ||
	    (mnt && (mount_id(fd, &m) < 0 || m != mnt)))
		return so_fail(so_resource_errno(errno) ? errno : ENXIO);
	return 0;
}

/* Open "sub" (a path inside procfs) from the verified procfs root. */
static int procfs_open_sub(int procfd, dev_t dev, uint64_t mnt, const char *sub)
{
	int fd;
	if (so_have_openat2()) {
		struct safe_open_how how = {
			.flags = O_PATH | O_DIRECTORY | O_CLOEXEC,
			.mode = 0,
			.resolve = SAFE_RESOLVE_NO_XDEV | SAFE_RESOLVE_NO_MAGICLINKS |
				   SAFE_RESOLVE_BENEATH,
		};
		fd = so_openat2_fast(procfd, sub, &how);
		if (fd < 0 && errno != ENOSYS && errno != EPERM)
			return -1;
		if (fd >= 0)
			goto check;
	}
	/* No openat2: thread-self / self are plain procfs symlinks to "<pid>..."
	 * directories; follow them with openat and verify where we landed. */
	fd = openat(procfd, sub, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -1;
check:
	if (check_procfs(fd, dev, mnt) < 0) {
		so_close(fd); /* keeps errno */
		return -1;
	}
	return fd;
}

/* -1 with errno: the resource error as it is, anything else ENXIO. */
static int unusable(void)
{
#ifdef SAFEOPEN_MUTATE_PROCFS_ERRNO
	return so_fail(ENXIO);
#endif
	return so_fail(so_resource_errno(errno) ? errno : ENXIO);
}

/* fd's entry name in a procfs fd or fdinfo directory. */
static void fd_name(int fd, char name[SO_FD_NAME_SIZE])
{
	(void)snprintf(name, SO_FD_NAME_SIZE, "%d", fd);
}

/* The verified procfs root: /proc opened without following it, with the
 * procfs magic and root inode; its device in *dev, its mount id (0: statx
 * cannot tell) in *mnt. */
static int procfs_root(dev_t *dev, uint64_t *mnt)
{
	int procfd = open("/proc", O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (procfd < 0)
		return unusable();
	struct statfs sfs;
	struct stat st;
	int err = 0;
	if (fstatfs(procfd, &sfs) < 0 || fstat(procfd, &st) < 0 || mount_id(procfd, mnt) < 0)
		err = -1;
	else if (sfs.f_type != PROC_SUPER_MAGIC || st.st_ino != PROC_ROOT_INO)
		err = ENXIO;
	if (err) {
		int e = errno;
		so_close(procfd);
		errno = e;
		return err < 0 ? unusable() : so_fail(err);
	}
	*dev = st.st_dev;
	return procfd;
}

/* The verified directory "thread-self/<dir>" (or "self/<dir>"). */
static int procfs_thread_dir(const char *dir)
{
	dev_t dev;
	uint64_t mnt;
	_cleanup_fd_ int procfd = procfs_root(&dev, &mnt);
	if (procfd < 0)
		return -1;
	char sub[32];
	(void)snprintf(sub, sizeof(sub), "thread-self/%s", dir);
	int fd = procfs_open_sub(procfd, dev, mnt, sub);
	if (fd < 0 && errno == ENOENT) { /* kernels before 3.17 have no thread-self */
		(void)snprintf(sub, sizeof(sub), "self/%s", dir);
		fd = procfs_open_sub(procfd, dev, mnt, sub);
	}
	return fd < 0 ? unusable() : fd;
}

int so_procfs_dir(const char *sub)
{
	dev_t dev;
	uint64_t mnt;
	_cleanup_fd_ int procfd = procfs_root(&dev, &mnt);
	if (procfd < 0)
		return -1;
	int fd = procfs_open_sub(procfd, dev, mnt, sub);
	return fd < 0 ? unusable() : fd;
}

/*
 * The "mnt_id:" line of fd's entry in the verified fdinfo directory (Linux
 * 3.15+): the mount id that statx reports from 5.8 on, for any filesystem.
 * The directory is verified like the fd directory; the entry is a regular
 * procfs file read once.
 */
int so_procfs_mnt_id(int fd, uint64_t *mnt)
{
	_cleanup_fd_ int dir = procfs_thread_dir("fdinfo");
	if (dir < 0)
		return -1;
	char name[SO_FD_NAME_SIZE];
	fd_name(fd, name);
	_cleanup_fd_ int info = openat(dir, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (info < 0)
		return -1;
	char buf[512];
	ssize_t n = read(info, buf, sizeof(buf) - 1);
	if (n < 0)
		return -1;
	buf[n] = '\0';
	/* "pos:", "flags:", then "mnt_id:\t<decimal>", one per line */
	static const char key[] = "mnt_id:";
	for (const char *l = buf; l;) {
		if (!strncmp(l, key, sizeof(key) - 1)) {
			char *end;
			errno = 0;
			unsigned long long v = strtoull(l + sizeof(key) - 1, &end, 10);
			if (errno || end == l + sizeof(key) - 1 || (*end != '\n' && *end))
				break;
			*mnt = v;
			return 0;
		}
		l = strchr(l, '\n');
		if (l)
			l++;
	}
	return so_fail(ENXIO); /* before 3.15: no mnt_id line */
}

int so_procfs_entry(int fd, char name[SO_FD_NAME_SIZE])
{
	fd_name(fd, name);
	return procfs_thread_dir("fd");
}

int so_procfs_reopen(int fd, int flags)
{
	struct stat orig, now;
	if (fstat(fd, &orig) < 0)
		return -1;

	char name[SO_FD_NAME_SIZE];
	_cleanup_fd_ int fddir = so_procfs_entry(fd, name);
	if (fddir < 0)
		return -1;

	/* The entry must be the magic link of our own descriptor. */
	struct stat lst;
	if (fstatat(fddir, name, &lst, AT_SYMLINK_NOFOLLOW) < 0)
		return -1;
	if (!S_ISLNK(lst.st_mode))
		return so_fail(ENXIO);

	int nfd = openat(fddir, name, flags | O_CLOEXEC);
	if (nfd < 0)
		return -1;
	int err = 0;
	struct so_ident want = so_stat_ident(&orig), got;
	if (fstat(nfd, &now) < 0)
		err = errno;
	else if (got = so_stat_ident(&now), !so_same_inode(&got, &want))
		err = EXDEV;
	if (err) {
		so_close(nfd);
		return so_fail(err);
	}
	return nfd;
}

/*
 * The calls that take nothing but a path (getxattr(2) and the others before
 * Linux 6.13: no fd-relative form takes an O_PATH descriptor) reach fd's
 * object by this string. The procfs is verified first, as for every other
 * use, then the string is checked to lead to the very inode open as fd (the
 * object is held open, so an equal identity is that object). Premise, for
 * the moment between this check and the caller's call: nothing is mounted
 * on /proc meanwhile, which needs CAP_SYS_ADMIN over the caller's mount
 * namespace (outside the threat model, design.md).
 */
int so_procfs_path(int fd, char path[SO_PROCFS_PATH_SIZE])
{
	char ent[SO_FD_NAME_SIZE];
	_cleanup_fd_ int fddir = so_procfs_entry(fd, ent);
	if (fddir < 0)
		return -1;
	struct so_ident want;
	if (so_inode_at(fd, NULL, &want) < 0)
		return -1;
	struct stat st;
	(void)snprintf(path, SO_PROCFS_PATH_SIZE, "/proc/thread-self/fd/%s", ent);
	if (stat(path, &st) < 0) {
		(void)snprintf(path, SO_PROCFS_PATH_SIZE, "/proc/self/fd/%s", ent);
		if (stat(path, &st) < 0)
			return so_fail(so_resource_errno(errno) ? errno : ENXIO);
	}
	struct so_ident got = so_stat_ident(&st);
	return so_same_inode(&want, &got) ? 0 : so_fail(ENXIO);
}

/* ------------------------------------------------------------------ public API */

#ifndef FSOPEN_CLOEXEC
#define FSOPEN_CLOEXEC 0x00000001
#endif
#ifndef FSCONFIG_SET_STRING
#define FSCONFIG_SET_STRING 1
#endif
#ifndef FSCONFIG_CMD_CREATE
#define FSCONFIG_CMD_CREATE 6
#endif
#ifndef FSMOUNT_CLOEXEC
#define FSMOUNT_CLOEXEC 0x00000001
#endif
#ifndef MOUNT_ATTR_NOSUID
#define MOUNT_ATTR_NOSUID 0x00000002
#define MOUNT_ATTR_NODEV 0x00000004
#define MOUNT_ATTR_NOEXEC 0x00000008
#endif
#ifndef OPEN_TREE_CLONE
#define OPEN_TREE_CLONE 1
#endif

#define PROC_BASE_TAG (1ULL << 63)
#define PROC_OPEN_FLAGS SAFE_PROC_MAGICLINKS

/* The cached handles: [0] for the pid bases (subset=pid where possible),
 * [1] the full procfs (SAFE_PROC_ROOT, SAFE_PROC_FULL). */
static _Atomic int proc_cache[2] = { -1, -1 };
static _Atomic unsigned int proc_kind[2];
static _Atomic uint64_t proc_mnt[2];

/* A fresh private procfs instance (subset=pid when `subset`), detached. */
static int proc_fsopen(bool subset)
{
	_cleanup_fd_ int fsfd = (int)syscall(SYS_fsopen, "proc", FSOPEN_CLOEXEC);
	if (fsfd < 0)
		return -1;
	if (subset && syscall(SYS_fsconfig, fsfd, FSCONFIG_SET_STRING, "subset", "pid", 0) < 0)
		return -1;
	if (syscall(SYS_fsconfig, fsfd, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0)
		return -1;
	return (int)syscall(SYS_fsmount, fsfd, FSMOUNT_CLOEXEC,
			    MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC);
}

/* Is fd the root of a procfs, on mount mnt when mnt is not 0? */
static bool proc_root_ok(int fd, uint64_t mnt)
{
	struct statfs sfs;
	struct stat st;
	uint64_t m = 0;
	return fstatfs(fd, &sfs) == 0 && sfs.f_type == PROC_SUPER_MAGIC && fstat(fd, &st) == 0 &&
	       S_ISDIR(st.st_mode) && st.st_ino == PROC_ROOT_INO &&
	       (!mnt || (mount_id(fd, &m) == 0 && m == mnt));
}

/* A new handle of kind k (see proc_cache), its kind in *kind. */
static int proc_new_handle(int k, unsigned int *kind)
{
	int fd = -1;
	if (k == 0 && (fd = proc_fsopen(true)) >= 0)
		*kind = SAFE_PROC_KIND_FSOPEN_SUBSET;
	else if ((fd = proc_fsopen(false)) >= 0)
		*kind = SAFE_PROC_KIND_FSOPEN;
	else if ((fd = (int)syscall(SYS_open_tree, AT_FDCWD, "/proc",
				    OPEN_TREE_CLONE | O_CLOEXEC)) >= 0)
		*kind = SAFE_PROC_KIND_OPEN_TREE;
	if (fd >= 0 && !proc_root_ok(fd, 0)) {
		so_close(fd);
		fd = -1;
	}
	if (fd < 0) {
		dev_t dev;
		uint64_t mnt;
		fd = procfs_root(&dev, &mnt);
		if (fd < 0)
			return -1;
		*kind = SAFE_PROC_KIND_MOUNTED;
	}
	return fd;
}

/*
 * The cached handle of kind k, checked (a procfs root on the mount it had
 * when cached): borrowed, never closed by the caller. A number that no
 * longer passes (the program closed it and the number was reused) is
 * forgotten, never closed: it is not ours any more.
 */
static int proc_handle(int k, unsigned int *kind)
{
	for (;;) {
		int fd = atomic_load(&proc_cache[k]);
		if (fd >= 0 && proc_root_ok(fd, atomic_load(&proc_mnt[k]))) {
			*kind = atomic_load(&proc_kind[k]);
			return fd;
		}
		unsigned int kd = 0;
		int nfd = proc_new_handle(k, &kd);
		if (nfd < 0)
			return -1;
		uint64_t mnt = 0;
		if (mount_id(nfd, &mnt) < 0) {
			so_close(nfd);
			return -1;
		}
		if (!atomic_compare_exchange_strong(&proc_cache[k], &fd, nfd)) {
			/* Another thread cached one meanwhile: the caller closes
			 * nothing, so ours would leak: keep the winner (checked
			 * again on the next turn). */
			so_close(nfd);
			continue;
		}
		atomic_store(&proc_mnt[k], mnt);
		atomic_store(&proc_kind[k], kd);
		*kind = kd;
		return nfd;
	}
}

int safe_proc_handle(uint64_t flags, unsigned int *kind)
{
	if (flags & ~(uint64_t)SAFE_PROC_FULL)
		return so_fail(EINVAL);
	unsigned int kd;
	int h = proc_handle((flags & SAFE_PROC_FULL) ? 1 : 0, &kd);
	if (h < 0)
		return -1;
	int fd = fcntl(h, F_DUPFD_CLOEXEC, 0);
	if (fd >= 0 && kind)
		*kind = kd;
	return fd;
}

#define PROC_RESOLVE (SAFE_RESOLVE_BENEATH | SAFE_RESOLVE_NO_XDEV | SAFE_RESOLVE_NO_MAGICLINKS)

/* The directory of `base` (an O_PATH descriptor of it, opened from the
 * cached handle with PROC_RESOLVE: "self" and "thread-self" are procfs
 * symlinks, not magic ones). */
static int proc_base(uint64_t base)
{
	char sub[32];
	int k = 0;
	if (base == SAFE_PROC_ROOT) {
		k = 1;
		memcpy(sub, ".", 2);
	} else if (base == SAFE_PROC_SELF) {
		memcpy(sub, "self", 5);
	} else if (base == SAFE_PROC_THREAD_SELF) {
		memcpy(sub, "thread-self", 12);
	} else if (!(base & PROC_BASE_TAG) && base > 0 && base <= INT32_MAX) {
		(void)snprintf(sub, sizeof(sub), "%llu", (unsigned long long)base);
	} else {
		return so_fail(EINVAL);
	}
	unsigned int kind;
	int h = proc_handle(k, &kind);
	if (h < 0)
		return -1;
	struct safe_open_how how = {
		.flags = O_PATH | O_DIRECTORY | O_CLOEXEC,
		.mode = 0,
		.resolve = PROC_RESOLVE,
	};
	return so_open_validated(h, sub, &how);
}

/*
 * Safety argument: the handle is a procfs root (checked at each use); the
 * base directory and then the path below it are resolved by the library's
 * resolver with BENEATH (nothing above the base), NO_XDEV (every component
 * on the handle's own mount: an overmount anywhere below is EXDEV) and
 * NO_MAGICLINKS (no magic link on the way). A trailing magic link is
 * followed only with SAFE_PROC_MAGICLINKS: its parent is resolved as above,
 * the entry itself (not followed) must be a symlink on the parent's mount,
 * and then that one name is opened in the parent. Premise of that last step:
 * nothing is mounted on the entry between the check and the open, which
 * needs CAP_SYS_ADMIN over our mount namespace (outside the threat model,
 * design.md); with an fsopen or open_tree handle the mount is private to
 * this process and the premise holds by itself.
 */
int safe_proc_open(uint64_t base, const char *path, int oflags, uint64_t flags)
{
	if (flags & ~(uint64_t)PROC_OPEN_FLAGS)
		return so_fail(EINVAL);
	size_t len;
	if (so_path_len(path, &len) < 0)
		return -1;
	_cleanup_fd_ int bfd = proc_base(base);
	if (bfd < 0)
		return -1;
	struct safe_open_how how = {
		.flags = (uint64_t)(unsigned int)oflags | O_CLOEXEC,
		.mode = 0,
		.resolve = PROC_RESOLVE,
	};
	int fd = so_open_validated(bfd, path, &how);
	if (fd >= 0 || errno != ELOOP || !(flags & SAFE_PROC_MAGICLINKS) || (oflags & O_NOFOLLOW) ||
	    !so_path_ends_in_name(path))
		return fd;
	/* A link at the end, and the caller asked to follow a magic one. */
	char dir[PATH_MAX];
	struct so_path_end pe;
	so_path_end(path, &pe);
	memcpy(dir, path, pe.last.start);
	dir[pe.last.start] = '\0';
	const char *name = path + pe.last.start;
	struct safe_open_how ph = how;
	ph.flags = O_PATH | O_DIRECTORY | O_CLOEXEC;
	_cleanup_fd_ int parent = so_open_validated(bfd, pe.last.start ? dir : ".", &ph);
	if (parent < 0)
		return -1;
	_cleanup_fd_ int lfd = openat(parent, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	struct stat lst;
	uint64_t lm = 0, pm = 0;
	if (lfd < 0 || fstat(lfd, &lst) < 0 || mount_id_known(lfd, &lm) < 0 ||
	    mount_id_known(parent, &pm) < 0)
		return -1;
	if (!S_ISLNK(lst.st_mode))
		return so_fail(ELOOP); /* the ELOOP was about something else */
	if (!lm || !pm || lm != pm)
		return so_fail(EXDEV); /* cannot tell, or another mount: fail closed */
	return openat(parent, name, oflags | O_CLOEXEC);
}

ssize_t safe_proc_readlink(uint64_t base, const char *path, char *buf, size_t size)
{
	if (!size)
		return so_fail(EINVAL); /* as readlink(2) */
	if (!buf)
		return so_fail(EFAULT);
	size_t len;
	if (so_path_len(path, &len) < 0)
		return -1;
	_cleanup_fd_ int bfd = proc_base(base);
	if (bfd < 0)
		return -1;
	/* O_PATH|O_NOFOLLOW gives the link itself, magic or not. */
	struct safe_open_how how = {
		.flags = O_PATH | O_NOFOLLOW | O_CLOEXEC,
		.mode = 0,
		.resolve = PROC_RESOLVE,
	};
	_cleanup_fd_ int fd = so_open_validated(bfd, path, &how);
	if (fd < 0)
		return -1;
	struct stat st;
	if (fstat(fd, &st) < 0)
		return -1;
	if (!S_ISLNK(st.st_mode))
		return so_fail(EINVAL); /* as readlink(2); readlinkat(fd, "") says ENOENT */
	return readlinkat(fd, "", buf, size);
}

int safe_proc_fd_path(int fd, char *buf, size_t size)
{
	if (!buf)
		return so_fail(EFAULT);
	char path[SO_PROCFS_PATH_SIZE];
	if (so_procfs_path(fd, path) < 0)
		return -1;
	size_t n = strlen(path);
	if (n >= size)
		return so_fail(ERANGE);
	memcpy(buf, path, n + 1);
	return 0;
}
