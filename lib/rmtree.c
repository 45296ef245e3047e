/* SPDX-License-Identifier: MIT */
/*
 * safe_rmtree_beneath(): rm -r beneath a root, on the confined tree walk
 * (lib/walk.c: one home for the walk).
 *
 * Safety argument:
 *  - The parent of the tree is opened by the resolver (so_resolve_parent), so
 *    it is beneath the root; the tree's top is opened from it by its single
 *    name with O_NOFOLLOW|O_DIRECTORY (with openat2 and without
 *    SAFE_RMTREE_XDEV, RESOLVE_NO_XDEV: a mount point is EXDEV).
 *  - Below it, the walk (so_walk_from()) enters every directory by its
 *    single name with O_NOFOLLOW|O_DIRECTORY, never uses the kernel's "..",
 *    and gives up a directory moved away while it is inside it (walk.c's
 *    argument). Every removal is unlinkat(parent, name) on the (parent
 *    descriptor, single name) the walk reports: unlinkat never follows its
 *    last component, so a name swapped for a symlink is removed, never its
 *    target, and a directory is removed (AT_REMOVEDIR) only when empty.
 *  - A mount point is not entered unless SAFE_RMTREE_XDEV: the walk's
 *    SAFE_WALK_XDEV (openat2's RESOLVE_NO_XDEV on the open where it exists,
 *    else mount ids; one that cannot be learnt counts as another mount,
 *    never st_dev; out of descriptors while learning one, a held level is
 *    given back and the step retried, else that errno). It is reported as
 *    EXDEV and left alone.
 *  - Entries that appear concurrently, or a directory moved within the tree
 *    (given up by the walk), are removed by another pass over what is left
 *    (at most RMTREE_PASSES, only while a pass removed something).
 *
 * Cost: the walk's (SO_WALK_MAX_FDS descriptors, O(depth) memory), the
 * parent and the top among them (lent to the walk: SO_RMTREE_MAX_FDS in
 * all, and 5 free descriptors suffice); one unlinkat per entry.
 * The walk's SAFE_WALK_NO_STAT spares a statx per non-directory.
 */
#include "internal.h"

#include <assert.h>
#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* Passes over one directory (a pass repeats only if the previous one removed
 * something and entries remain: entries created concurrently, or offsets
 * that moved under deletions). */
#define RMTREE_PASSES 8
/* The walk's descriptors: the tree's parent and its top are its own (lent
 * to it by so_walk_from()). */
_Static_assert(SO_WALK_MAX_FDS == SO_RMTREE_MAX_FDS, "rmtree's descriptor bound");
/* Times the whole removal is retried when the tree's top is replaced or
 * refilled concurrently. */
#define RMTREE_TOP_RETRIES 4

static void note(int *err, int e)
{
	if (!*err)
		*err = e;
}

/*
 * Empty the directory open as top, which is `name` in pfd: walk it in
 * post-order and remove each entry by its (parent, name), a directory after
 * its entries. Passes go on while one removed something and left work
 * behind (entries added meanwhile, a directory that became non-empty or was
 * moved within the tree). Returns 0, or -1 with errno = the first error
 * (the walk goes on past failures).
 */
static int empty_dir(int pfd, const char *name, int top, bool xdev)
{
	int err = 0;
	uint64_t wflags = SAFE_WALK_POSTORDER | SAFE_WALK_NO_STAT | (xdev ? 0 : SAFE_WALK_XDEV);
	for (int pass = 0; pass < RMTREE_PASSES; pass++) {
		struct safe_walk *w;
		if (so_walk_from(pfd, name, top, wflags, &w) < 0) {
			note(&err, errno);
			break;
		}
		bool again = false;
		unsigned long removed = 0;
		struct safe_walk_entry e;
		int r;
		while ((r = safe_walk_next(w, &e)) > 0) {
			if (e.depth == 0) {
				if (e.visit == SAFE_WALK_POST && e.error == EAGAIN)
					again = true; /* the top moved meanwhile: the caller's rmdir says */
				else if (e.error)
					note(&err, e.error);
				continue; /* the caller removes the top */
			}
			if (e.visit == SAFE_WALK_PRE)
				continue;
			if (e.visit == SAFE_WALK_MOUNT) {
				note(&err, EXDEV); /* a mount point: left alone */
				continue;
			}
			if (e.dirfd < 0) {
				again = true; /* its parent was given up */
				continue;
			}
			bool dir = e.visit == SAFE_WALK_POST || S_ISDIR(e.stx->stx_mode);
			if (e.visit == SAFE_WALK_POST && e.error == EAGAIN)
				again = true; /* moved away or replaced while walked */
			else if (e.error && !(e.visit == SAFE_WALK_LEAF && dir))
				note(&err, e.error);
			if (e.visit == SAFE_WALK_LEAF && !dir && !(e.stx->stx_mask & STATX_TYPE))
				continue; /* nothing known about it */
			if (unlinkat(e.dirfd, e.name, dir ? AT_REMOVEDIR : 0) == 0) {
				removed++;
				continue;
			}
			if (e.visit == SAFE_WALK_LEAF && dir && e.error) {
				/* A directory the walk could not enter (EACCES,
				 * ELOOP, EMFILE) and not empty: the walk's reason. */
				if (errno != ENOENT)
					note(&err, e.error);
				continue;
			}
			switch (errno) {
			case ENOENT:
				break;
			case EISDIR: /* became a directory: the next pass */
			case ENOTEMPTY:
			case EEXIST: /* refilled meanwhile: the next pass */
				again = true;
				break;
			case ENOTDIR: /* became a non-directory */
				if (unlinkat(e.dirfd, e.name, 0) == 0)
					removed++;
				else if (errno != ENOENT)
					note(&err, errno);
				break;
			default:
				note(&err, errno);
			}
		}
		if (r < 0)
			note(&err, errno);
		safe_walk_close(w);
		if (!again || !removed)
			break;
	}
	return err ? so_fail(err) : 0;
}

int safe_rmtree_beneath(int dirfd, const char *path, uint64_t flags)
{
	uint64_t resolve;
	if (so_op_resolve(flags, SAFE_RMTREE_XDEV, &resolve) < 0)
		return -1;
	if (!path)
		return so_fail(EFAULT);
	bool xdev = flags & SAFE_RMTREE_XDEV;
	struct so_last last;
	_cleanup_fd_ int pfd = so_resolve_parent(dirfd, path, resolve, &last);
	if (pfd < 0)
		return -1;
	struct so_ident rootid, pid, tid;
	if (so_inode_at(dirfd, NULL, &rootid) < 0)
		return -1;
	if (last.is_root)
		return so_fail(EBUSY);
	if (so_is_dot_or_dotdot(last.name)) {
		/* Like rmdir: refuse "." and ".."; EBUSY if they name the root. */
		_cleanup_fd_ int fd = so_op_open(dirfd, path, resolve, O_DIRECTORY);
		if (fd < 0 || so_inode_at(fd, NULL, &tid) < 0)
			return -1;
		return so_fail(so_same_inode(&tid, &rootid) ? EBUSY : EINVAL);
	}
	/* The top is what the path names: SAFE_RESOLVE_NO_XDEV keeps it on its
	 * parent's mount even with SAFE_RMTREE_XDEV (which only concerns mount
	 * points below it). */
	bool top_mount = !xdev || (resolve & SAFE_RESOLVE_NO_XDEV);

	for (int tries = 0; tries < RMTREE_TOP_RETRIES; tries++) {
		bool same;
		_cleanup_fd_ int top = so_open_subdir(pfd, last.name, top_mount, &same);
		if (top < 0 && errno == EXDEV) {
			/* A mount point: EXDEV for a directory; a non-directory
			 * is left to unlinkat() below (EBUSY), as without openat2. */
			top = openat(pfd, last.name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			if (top >= 0)
				return so_fail(EXDEV);
		}
		if (top < 0) {
			if (errno == ENOTDIR || errno == ELOOP) {
				/* A non-directory (a symlink is removed, never followed). */
				if (last.trailing_slash)
					return so_fail(ENOTDIR);
				if (unlinkat(pfd, last.name, 0) == 0)
					return 0;
				if (errno == EISDIR)
					continue;
				return -1;
			}
			if (errno == EACCES) /* unreadable: removable only if empty */
				return unlinkat(pfd, last.name, AT_REMOVEDIR);
			return -1;
		}
		/* Mount ids: for the check below, and for the children's when
		 * their opens cannot show their mount (no openat2). */
		bool need_mnt = top_mount && !same;
		if ((need_mnt ? so_ident_at(top, NULL, &tid) : so_inode_at(top, NULL, &tid)) < 0)
			return -1;
		if (so_same_inode(&tid, &rootid))
			return so_fail(EBUSY);
		if (need_mnt) {
			if (so_ident_at(pfd, NULL, &pid) < 0)
				return -1;
			if (so_other_mount(&pid, &tid))
				return so_fail(EXDEV);
		}
		int err = empty_dir(pfd, last.name, top, xdev) < 0 ? errno : 0;
		so_closep(&top);
		if (unlinkat(pfd, last.name, AT_REMOVEDIR) == 0)
			return err ? so_fail(err) : 0;
		if (err)
			return so_fail(err);
		if (errno != ENOTEMPTY && errno != EEXIST)
			return -1;
		/* Refilled concurrently: go again (bounded). */
	}
	return so_fail(ENOTEMPTY);
}
