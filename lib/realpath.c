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
 *  2. A directory's path is found in two steps (dir_path()). Climb: open
 *     ".." from it with O_PATH (which reads nothing), then from that, and
 *     record each identity until the root's; reaching the filesystem root
 *     instead ("..", of itself) means the object left the root meanwhile
 *     (EAGAIN: retry). Descend: from the root, find in each directory the
 *     entry with the next recorded identity (d_ino first, then a stat of
 *     each directory entry, for mount points whose d_ino is the covered
 *     inode) and open it by that single name, O_NOFOLLOW. So the only
 *     directories whose entries are read are the root and directories
 *     reached from it by single names: nothing above the root is read,
 *     whatever is moved meanwhile.
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
 *  6. Inode-number reuse: the root and the object are held open while
 *     compared (the caller's dirfd, `obj`), so an equal (st_dev, st_ino) is
 *     that very object. The identities the climb records are not held (that
 *     would take a descriptor per level): if one is freed and its number
 *     reused meanwhile, the descent may take another directory - one it
 *     reached from the root, so still nothing above the root is read - and
 *     the path it finds fails step 4, which is all that decides what is
 *     returned.
 * Memory: the caller's buffer, a few PATH_MAX buffers and one getdents
 * buffer on the stack, one identity per level climbed (heap, at most
 * PATH_MAX / 2 + 1 levels: a deeper directory's path cannot be verified);
 * descriptors: O(1).
 */
#include "internal.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
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
				if (so_inode_at(pfd, s, &id) == 0 && so_same_inode(&id, child)) {
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

/* Levels the climb records at most: each adds at least two bytes ("x/") to
 * a path that must stay below PATH_MAX to be verified. */
#define REALPATH_MAX_LEVELS (PATH_MAX / 2 + 1)

/* A path of that many bytes cannot be the answer: ERANGE where the caller's
 * buffer is too small for it anyway, else ENAMETOOLONG (as verify() would). */
static int too_long(const struct out *o)
{
	return so_fail(o->pos <= PATH_MAX ? ERANGE : ENAMETOOLONG);
}

/*
 * Prepend the path of directory `dir` relative to the root (rootfd, identity
 * *rootid), reading nothing above the root:
 *  1. Climb: open ".." of dir, then of that, ... with O_PATH (which opens
 *     nothing and reads nothing: open(2)) and record each directory's
 *     identity, until the root's. Reaching the filesystem root (".." of
 *     itself) instead means dir is not beneath the root (any more): EAGAIN,
 *     and nothing was read. No name, no entry of any directory is read here.
 *  2. Descend: from the root, find in each recorded directory's parent the
 *     entry with its identity (find_name()) and open it by that single name
 *     O_NOFOLLOW, checking it is that directory. Every directory whose
 *     entries are read was reached from the root by single names, i.e. is
 *     the root or beneath it, whatever was moved meanwhile.
 * A recorded identity may have been freed and reused meanwhile: the descent
 * then takes a wrong directory beneath the root, and verify() rejects the
 * path (see 6. above).
 */
static int dir_path(int rootfd, int dir, const struct so_ident *rootid, struct out *o)
{
	struct so_ident *ids = NULL, cid;
	size_t n = 0, cap = 0;
	int ret = -1;
	_cleanup_fd_ int cur = -1;
	if (so_inode_at(dir, NULL, &cid) < 0)
		return -1;
	while (!so_same_inode(&cid, rootid)) {
		if (n == REALPATH_MAX_LEVELS) {
			too_long(o);
			goto out;
		}
		if (n == cap) {
			size_t ncap = cap ? cap * 2 : 16;
			struct so_ident *g = realloc(ids, ncap * sizeof(*g));
			if (!g) {
				errno = ENOMEM;
				goto out;
			}
			ids = g;
			cap = ncap;
		}
		ids[n++] = cid;
#ifdef SAFEOPEN_MUTATE_REALPATH_READ_UP
		/* Mutation (tests only): read each parent while climbing, as the
		 * climb did (above the root when dir has been moved out). */
		{
			char nm[NAME_MAX + 1];
			_cleanup_fd_ int rd = openat(cur >= 0 ? cur : dir, "..",
						     O_RDONLY | O_DIRECTORY | O_CLOEXEC);
			if (rd >= 0)
				(void)find_name(rd, &cid, nm);
		}
#endif
		int p = openat(cur >= 0 ? cur : dir, "..", O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (p < 0)
			goto out;
		so_close(cur);
		cur = p;
		struct so_ident pid;
		if (so_inode_at(cur, NULL, &pid) < 0)
			goto out;
		if (so_same_inode(&pid, &cid)) {
			errno = EAGAIN; /* the filesystem root: not beneath any more */
			goto out;
		}
		cid = pid;
	}
	so_closep(&cur);
	if (n == 0)
		return 0;

	char path[PATH_MAX];
	size_t len = 0;
	struct so_ident got;
	cur = openat(rootfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (cur < 0 || so_inode_at(cur, NULL, &got) < 0)
		goto out;
	if (!so_same_inode(&got, rootid)) {
		errno = EAGAIN; /* AT_FDCWD, and the working directory changed */
		goto out;
	}
	for (size_t i = n; i-- > 0;) {
		char name[NAME_MAX + 1];
		if (find_name(cur, &ids[i], name) < 0)
			goto out;
		size_t nl = strlen(name);
		if (len + (len > 0) + nl >= sizeof(path)) {
			too_long(o);
			goto out;
		}
		if (len > 0)
			path[len++] = '/';
		memcpy(path + len, name, nl + 1);
		len += nl;
		if (i == 0)
			break;
		int next = openat(cur, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (next < 0) {
			if (errno == ENOENT || errno == ENOTDIR || errno == ELOOP)
				errno = EAGAIN; /* moved meanwhile */
			goto out;
		}
		so_close(cur);
		cur = next;
		if (so_inode_at(cur, NULL, &got) < 0)
			goto out;
		if (!so_same_inode(&got, &ids[i])) {
			errno = EAGAIN;
			goto out;
		}
	}
	ret = prepend(o, path);
out:
	free(ids);
	return ret;
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
		if (so_inode_at(pfd, last.name, &eid) == 0 && so_same_inode(&eid, oid)) {
			if (prepend(o, last.name) < 0)
				return -1;
			return dir_path(dirfd, pfd, rootid, o);
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
	if (chk < 0 || so_inode_at(chk, NULL, &cid) < 0)
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
			if (so_inode_at(dirfd, NULL, &rootid) < 0)
				return -1;
			have_root = true;
		}
		struct so_ident oid;
		struct stat st;
		if (so_inode_at(obj, NULL, &oid) < 0 || fstat(obj, &st) < 0)
			return -1;
		struct out o = { .buf = buf, .size = size, .pos = size - 1 };
		buf[size - 1] = '\0';
		int r = S_ISDIR(st.st_mode) ? dir_path(dirfd, obj, &rootid, &o)
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
