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
 * The result is never cached: the library keeps no global fds.
 */
#include "internal.h"

#include <linux/magic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
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
	if (statx(fd, "", AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW, STATX_MNT_ID, &stx) < 0)
		return errno == ENOSYS ? 0 : -1;
	if (stx.stx_mask & STATX_MNT_ID)
		*mnt = stx.stx_mnt_id;
	return 0;
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
