/* SPDX-License-Identifier: MIT */
/*
 * safe_realpath_beneath(): the canonical path of an object relative to the
 * root: the path the walker took to it.
 *
 * Method and safety argument:
 *  1. The object is opened by the walker (O_PATH, a trailing symlink
 *     followed as safe_openat2() would), which also reports the path it
 *     took (so_walk_open_named()): the names of the levels it descended to,
 *     each opened as a single name relative to the one before, and of the
 *     final component. Links were followed by splicing their bodies, ".."
 *     went back to a level of the walk's own chain, so the path has no ".",
 *     ".." or symlink component, and every error is the resolver's, in its
 *     order. Nothing is opened, listed or read but what the resolution
 *     itself touches: never anything above the root, whatever is moved
 *     meanwhile, and no permission beyond the resolution's is needed.
 *  2. The path is resolved again, scoped and with SAFE_RESOLVE_NO_SYMLINKS,
 *     and must lead to the same object (the object is held open meanwhile,
 *     so an equal identity is that very object); if the tree changed in
 *     between (a level renamed after the walk went through it), all of it
 *     is retried a bounded number of times, then EAGAIN.
 * Memory: the caller's buffer; descriptors: those of one resolution.
 */
#include "internal.h"

#include <string.h>

#define REALPATH_RETRIES 16

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

ssize_t safe_realpath_beneath(int dirfd, const char *path, char *buf, size_t size, uint64_t flags)
{
	uint64_t resolve;
	if (so_op_resolve(flags, 0, &resolve) < 0)
		return -1;
	if (!path || !buf)
		return so_fail(EFAULT);
	if (size == 0)
		return so_fail(ERANGE);

	const struct safe_open_how how = {
		.flags = (uint64_t)(O_PATH | O_CLOEXEC),
		.resolve = resolve,
	};
	for (int tries = 0; tries < REALPATH_RETRIES; tries++) {
		size_t len;
		_cleanup_fd_ int obj = so_walk_open_named(dirfd, path, &how, buf, size, &len);
		if (obj < 0)
			return -1;
		if (len >= PATH_MAX)
			return so_fail(ENAMETOOLONG);
		struct so_ident oid;
		if (so_inode_at(obj, NULL, &oid) < 0)
			return -1;
		if (verify(dirfd, buf, resolve, &oid) == 0)
			return (ssize_t)len;
		if (so_resource_errno(errno))
			return -1;
	}
	return so_fail(EAGAIN);
}
