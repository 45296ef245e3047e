/* SPDX-License-Identifier: MIT */
/*
 * safe_realpath_beneath(): the canonical path of an object relative to the
 * root, computed from descriptors (by climbing; procfs only as a fallback).
 *
 * Method and safety argument:
 *  1. The object is opened by the resolver (O_PATH, a trailing symlink
 *     followed as safe_openat2() would) before anything else is looked at,
 *     so it is beneath the root and every error is the resolver's, in its
 *     order.
 *  2. A directory's name is found by climbing: open ".." from it (fd-relative)
 *     and scan that directory for the entry with the child's identity (d_ino
 *     first, then a stat of each directory entry, for mount points whose
 *     d_ino is the covered inode), until the root's identity is reached. The
 *     climb can only stop at the root or at the filesystem root ("..", of
 *     itself); the latter means the object left the root meanwhile.
 *  3. A non-directory cannot be climbed from: the directory holding the name
 *     the path reached is found by resolving the path's parent (and, when the
 *     last component is a symlink, the parent of its target, at most 40
 *     times), checking that the entry is the object itself; then 2. applies.
 *  4. The result is resolved again, scoped and with SAFE_RESOLVE_NO_SYMLINKS,
 *     and must lead to the same object; if the tree changed in between, all
 *     of it is retried a bounded number of times, then EAGAIN.
 *  5. Climbing needs search permission from the object up and read
 *     permission above it. If it is refused (EACCES), the kernel's names of
 *     the object's and the root's descriptors are read from a verified procfs
 *     (procfs_name()); the object's name minus the root's is a candidate that
 *     goes through the same verification as 4. (a mismatch retries; no
 *     verified procfs, or a name not under the root's: EACCES).
 *  6. Inode-number reuse: every identity this file compares belongs to an
 *     object held open while it is compared (the root by the caller's dirfd,
 *     the object by `obj`, the directory being named by `cur` in dir_path()),
 *     and a live inode's number cannot be handed to another object, so an
 *     equal (st_dev, st_ino) is that very object. The climb itself follows
 *     the kernel's ".." wherever it leads (it only reads names there); what
 *     is returned is only what step 4 resolved from the root to the object.
 * Memory: the caller's buffer, a few PATH_MAX buffers and one getdents
 * buffer on the stack; descriptors: O(1).
 */
#include "internal.h"

#include <dirent.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#define REALPATH_RETRIES 16

/* The path is built backwards at the end of the caller's buffer. */
struct out {
	char *buf;
	size_t size, pos; /* the path is buf[pos .. size-1), NUL at size-1 */
};

static int prepend(struct out *o, const char *name)
{
	size_t n = strlen(name);
	bool slash = o->pos < o->size - 1; /* something follows */
	if (n + slash > o->pos)
		return so_fail(ERANGE);
	if (slash)
		o->buf[--o->pos] = '/';
	o->pos -= n;
	memcpy(o->buf + o->pos, name, n);
	return 0;
}

/* Find the name of the directory `child` in its parent `pfd` (readable). */
static int find_name(int pfd, const struct so_ident *child, char name[NAME_MAX + 1])
{
	union {
		struct dirent64 d;
		char b[4096];
	} buf;
	for (int scan = 0; scan < 2; scan++) {
		if (lseek(pfd, 0, SEEK_SET) < 0)
			return -1;
		ssize_t n;
		while ((n = getdents64(pfd, buf.b, sizeof(buf.b))) > 0) {
			for (ssize_t off = 0; off < n;) {
				struct dirent64 *d = (struct dirent64 *)(void *)(buf.b + off);
				off += d->d_reclen;
				const char *s = d->d_name;
				if (so_is_dot_or_dotdot(s))
					continue;
				/* Scan 0: by d_ino. Scan 1: every directory, by
				 * stat (a mount point's d_ino is the covered one). */
				if (scan == 0 ? d->d_ino != child->ino
					      : d->d_type != DT_DIR && d->d_type != DT_UNKNOWN)
					continue;
				struct so_ident id;
				if (so_ident_at(pfd, s, &id) == 0 && so_same_inode(&id, child)) {
					memcpy(name, s, strlen(s) + 1);
					return 0;
				}
			}
		}
		if (n < 0)
			return -1;
	}
	return so_fail(EAGAIN); /* moved away meanwhile */
}

/* Prepend the path of directory `dir` relative to the root. */
static int dir_path(int dir, const struct so_ident *rootid, struct out *o)
{
	struct so_ident cid;
	if (so_ident_at(dir, NULL, &cid) < 0)
		return -1;
	_cleanup_fd_ int cur = fcntl(dir, F_DUPFD_CLOEXEC, 0);
	if (cur < 0)
		return -1;
	while (!so_same_inode(&cid, rootid)) {
		_cleanup_fd_ int p = openat(cur, "..", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		struct so_ident pid;
		if (p < 0 || so_ident_at(p, NULL, &pid) < 0)
			return -1;
		if (so_same_inode(&pid, &cid))
			return so_fail(EAGAIN); /* the filesystem root: not beneath any more */
		char name[NAME_MAX + 1];
		if (find_name(p, &cid, name) < 0 || prepend(o, name) < 0)
			return -1;
		so_close(cur);
		cur = take_fd(&p);
		cid = pid;
	}
	return 0;
}

/* Prepend the path of the non-directory object `oid` reached by `path`. */
static int entry_path(int dirfd, const char *path, uint64_t resolve, const struct so_ident *oid,
		      const struct so_ident *rootid, struct out *o)
{
	char cur[PATH_MAX];
	size_t len = strnlen(path, PATH_MAX);
	if (len >= PATH_MAX)
		return so_fail(ENAMETOOLONG);
	memcpy(cur, path, len + 1);
	for (int links = 0; links <= SO_MAXSYMLINKS; links++) {
		struct so_last last;
		_cleanup_fd_ int pfd = so_resolve_parent(dirfd, cur, resolve, &last);
		if (pfd < 0)
			return -1;
		struct so_ident eid;
		struct stat st;
		if (so_ident_at(pfd, last.name, &eid) == 0 && so_same_inode(&eid, oid)) {
			if (prepend(o, last.name) < 0)
				return -1;
			return dir_path(pfd, rootid, o);
		}
		if (fstatat(pfd, last.name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISLNK(st.st_mode))
			return so_fail(EAGAIN);
		/* Follow the link as the resolver did: its body relative to the
		 * directory holding it, i.e. the path's own parent part. */
		char body[PATH_MAX];
		ssize_t bl = readlinkat(pfd, last.name, body, sizeof(body));
		if (bl < 0)
			return -1;
		if ((size_t)bl >= sizeof(body))
			return so_fail(ENAMETOOLONG);
		size_t start = strlen(cur);
		while (start > 0 && cur[start - 1] != '/')
			start--;
		if (body[0] == '/')
			start = 0;
		if (start + (size_t)bl >= PATH_MAX)
			return so_fail(ENAMETOOLONG);
		memcpy(cur + start, body, (size_t)bl);
		cur[start + (size_t)bl] = '\0';
	}
	return so_fail(EAGAIN);
}

/* Does `rel` (relative to the root) lead to the object `oid` now, resolved
 * scoped and without following any symlink? 0 yes; -1 with EAGAIN no (or not
 * at all), or with a resource errno (see so_resource_errno()) as it is. */
static int verify(int dirfd, const char *rel, uint64_t resolve, const struct so_ident *oid)
{
	_cleanup_fd_ int chk =
		so_op_open(dirfd, rel, resolve | SAFE_RESOLVE_NO_SYMLINKS, O_NOFOLLOW);
	struct so_ident cid;
	if (chk < 0 || so_ident_at(chk, NULL, &cid) < 0)
		return so_fail(so_resource_errno(errno) ? errno : EAGAIN);
	return so_same_inode(&cid, oid) ? 0 : so_fail(EAGAIN);
}

/* The target of fd's entry in the verified procfs fd directory, NUL-terminated. */
static int fd_link(int fddir, int fd, char out[PATH_MAX])
{
	char ent[SO_FD_NAME_SIZE];
	so_procfs_fd_name(fd, ent);
	ssize_t n = readlinkat(fddir, ent, out, PATH_MAX);
	if (n < 0)
		return -1;
	if ((size_t)n >= PATH_MAX)
		return so_fail(ENAMETOOLONG);
	out[n] = '\0';
	return 0;
}

/*
 * The fallback when climbing is refused (EACCES: a directory on the way that
 * cannot be searched or read). The kernel's name of each descriptor, read
 * from its entry in a procfs verified by so_procfs_fd_dir(), costs no
 * permission on the directories: the object's name minus the root's name is
 * a candidate, and nothing about it is trusted until verify() has resolved
 * it from the root, scoped and without following any symlink, to the very
 * object. Returns the length of the verified path written to buf; -1 with
 * EAGAIN for a well-formed candidate that did not verify (the tree changed,
 * or the names are not what they seem: retry); -1 with another errno when
 * procfs cannot name it (no verified procfs; a name that is not an absolute
 * path under the root's name, e.g. another mount namespace); ERANGE only
 * for a verified path that does not fit.
 */
static ssize_t procfs_name(int dirfd, int obj, uint64_t resolve, const struct so_ident *oid,
			   char *buf, size_t size)
{
	_cleanup_fd_ int fddir = so_procfs_fd_dir();
	if (fddir < 0)
		return -1;
	_cleanup_fd_ int cwd = -1;
	int rootfd = dirfd;
	if (dirfd == AT_FDCWD) {
		cwd = open(".", O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (cwd < 0)
			return -1;
		rootfd = cwd;
	}
	char rp[PATH_MAX], op[PATH_MAX];
	if (fd_link(fddir, rootfd, rp) < 0 || fd_link(fddir, obj, op) < 0)
		return -1;
	so_closep(&fddir); /* verify() needs descriptors of its own */
	so_closep(&cwd);
	if (rp[0] != '/' || op[0] != '/')
		return so_fail(ENXIO);
	size_t rl = strlen(rp);
	if (rl == 1) /* the root is "/" */
		rl = 0;
	if (strncmp(op, rp, rl) != 0 || (op[rl] != '/' && op[rl] != '\0'))
		return so_fail(ENXIO);
	const char *rel = op + rl;
	while (*rel == '/')
		rel++;
	if (!*rel)
		rel = ".";
	if (verify(dirfd, rel, resolve, oid) < 0) /* out of descriptors is no mismatch */
		return -1;
	size_t len = strlen(rel);
	if (len >= size)
		return so_fail(ERANGE);
	memcpy(buf, rel, len + 1);
	return (ssize_t)len;
}

ssize_t safe_realpath_beneath(int dirfd, const char *path, char *buf, size_t size, uint64_t flags)
{
	uint64_t resolve;
	if (so_op_resolve(flags, 0, &resolve) < 0)
		return -1;
	if (!path || !buf)
		return so_fail(EFAULT);
	if (size == 0)
		return so_fail(ERANGE);

	struct so_ident rootid;
	bool have_root = false;
	int denied = 0; /* the climbing error, when the procfs name did not verify */
	for (int tries = 0; tries < REALPATH_RETRIES; tries++) {
		/* The resolver first: its errors, in its order (an absolute path
		 * under BENEATH is EXDEV and an empty one ENOENT whatever dirfd). */
		_cleanup_fd_ int obj = so_op_open(dirfd, path, resolve, 0);
		if (obj < 0)
			return -1;
		if (!have_root) {
			if (so_ident_at(dirfd, NULL, &rootid) < 0)
				return -1;
			have_root = true;
		}
		struct so_ident oid;
		struct stat st;
		if (so_ident_at(obj, NULL, &oid) < 0 || fstat(obj, &st) < 0)
			return -1;
		struct out o = { .buf = buf, .size = size, .pos = size - 1 };
		buf[size - 1] = '\0';
		int r = S_ISDIR(st.st_mode) ? dir_path(obj, &rootid, &o)
					    : entry_path(dirfd, path, resolve, &oid, &rootid, &o);
		if (r < 0 && errno == EACCES) {
			ssize_t n = procfs_name(dirfd, obj, resolve, &oid, buf, size);
			if (n >= 0 || errno == ERANGE || so_resource_errno(errno))
				return n;
			if (errno != EAGAIN)
				return so_fail(EACCES);
			denied = EACCES;
			continue;
		}
		if (r < 0) {
			if (errno == EAGAIN)
				continue;
			return -1;
		}
		denied = 0;
		size_t len = size - 1 - o.pos;
		if (len == 0) {
			if (size < 2)
				return so_fail(ERANGE);
			memcpy(buf, ".", 2);
			len = 1;
		} else {
			memmove(buf, buf + o.pos, len + 1);
		}
		/* Verify: the canonical path must lead to the same object now. */
		if (len >= PATH_MAX)
			return so_fail(ENAMETOOLONG);
		if (verify(dirfd, buf, resolve, &oid) == 0)
			return (ssize_t)len;
		if (so_resource_errno(errno))
			return -1;
	}
	return so_fail(denied ? denied : EAGAIN);
}
