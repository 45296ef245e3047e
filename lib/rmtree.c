/* SPDX-License-Identifier: MIT */
/*
 * safe_rmtree_beneath(): rm -r beneath a root.
 *
 * Safety argument:
 *  - The parent of the tree is opened by the resolver (so_resolve_parent), so
 *    it is beneath the root; the tree's top is opened from it by its single
 *    name with O_NOFOLLOW|O_DIRECTORY.
 *  - Every further step is relative to an fd of the directory being emptied:
 *    a subdirectory is entered with openat(cur, name, O_NOFOLLOW|O_DIRECTORY)
 *    (a symlink is never followed: it is an entry to unlink), every removal is
 *    unlinkat(cur, name) (which never follows its last component), and no path
 *    string is ever built up from the root.
 *  - A mount point is not entered unless SAFE_RMTREE_XDEV: openat2's
 *    RESOLVE_NO_XDEV shows it (5.6+), else another mount id than its parent
 *    (statx, file handle or procfs fdinfo: so_ident_at()). A mount id that
 *    cannot be learnt counts as another mount, never st_dev (which a bind
 *    mount shares); out of descriptors while learning one, a held level is
 *    given back and the step retried, else the directory is not entered and
 *    the error (EMFILE) reported.
 *  - Going back up never uses the kernel's "..": the walk returns to the
 *    directory it descended from, through the descriptor it holds for it
 *    (the deepest RMTREE_HELD levels and the top are held) or, deeper, by
 *    descending again from the top by the recorded child names (climb()).
 *    An open directory cannot be freed, so no directory elsewhere can take
 *    its place by reusing its inode number; a re-descent only opens single
 *    names. So every directory rmtree acts in was reached from the top by
 *    single-name lookups.
 *  - Limit: a directory moved out of the tree while it is being emptied
 *    keeps being emptied until its end; entries removed from it were entries
 *    of that directory (which was inside the tree when entered).
 *
 * Cost: O(depth) memory (one small record per level: identity, resume
 * offset, child name), at most RMTREE_HELD + 6 descriptors (the held levels
 * including the current one, the top's fresh description, the parent, the
 * top, one being opened, two for a moment in so_procfs_mnt_id()); under
 * EMFILE the oldest held level is given back.
 * One getdents buffer. A tree deeper than RMTREE_HELD costs one re-descent
 * of d opens per RMTREE_HELD levels climbed at depth d.
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
/* Times the whole removal is retried when the tree's top is replaced or
 * refilled concurrently. */
#define RMTREE_TOP_RETRIES 4

/* Descriptors of the deepest levels held (besides the top's). */
#define RMTREE_HELD 64

struct level {
	struct so_ident id;       /* this directory */
	int fd;                   /* O_RDONLY|O_DIRECTORY, or -1 when not held */
	off_t resume;             /* getdents offset after the child being emptied */
	unsigned int pass;        /* passes completed over this directory */
	bool progress;            /* something was removed in this pass */
	char child[NAME_MAX + 1]; /* the subdirectory being emptied */
};

struct walk {
	struct level *lv;
	size_t depth, cap;
	size_t lo; /* levels lo..depth (lo >= 1) and level 0 are held */
	int err; /* the first error */
	bool xdev;
};

static void note(struct walk *w, int err)
{
	if (!w->err)
		w->err = err;
}

static void level_init(struct level *lv, const struct so_ident *id, int fd)
{
	lv->id = *id;
	lv->fd = fd;
	lv->resume = 0;
	lv->pass = 0;
	lv->progress = false;
	lv->child[0] = '\0';
}

/* Descend into fd (owned: closed on failure), the child lv[depth].child.
 * The oldest held level above the top goes when RMTREE_HELD are held. */
static int push(struct walk *w, const struct so_ident *id, int fd)
{
	if (w->depth + 1 >= w->cap) {
		size_t ncap = w->cap * 2;
		struct level *n = realloc(w->lv, ncap * sizeof(*n));
		if (!n) {
			so_close(fd);
			return so_fail(ENOMEM);
		}
		w->lv = n;
		w->cap = ncap;
	}
	w->depth++;
	level_init(&w->lv[w->depth], id, fd);
	if (w->depth - w->lo >= RMTREE_HELD)
		so_closep(&w->lv[w->lo++].fd);
	assert(w->lo >= 1 && w->depth - w->lo < RMTREE_HELD);
	return 0;
}

/* Descriptor pressure: give back the oldest held level that is neither the
 * top nor the current one (a later climb re-descends to it). */
static bool make_room(struct walk *w, int err)
{
	if ((err != EMFILE && err != ENFILE) || w->lo >= w->depth)
		return false;
	so_closep(&w->lv[w->lo++].fd);
	return true;
}

/*
 * Open directory `name` of dfd for reading, never following a symlink (ELOOP
 * or ENOTDIR for anything but a directory). With `mount` (the caller refuses
 * other mounts) and openat2 (5.6+), the open itself keeps to dfd's mount
 * (RESOLVE_NO_XDEV: EXDEV for a mount point) and *same says so; otherwise
 * *same is false and the caller compares mount ids (so_other_mount()).
 */
static int open_dir(int dfd, const char *name, bool mount, bool *same)
{
	*same = false;
	if (mount && so_have_openat2()) {
		struct safe_open_how how = {
			.flags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC,
			.mode = 0,
			.resolve = SAFE_RESOLVE_BENEATH | SAFE_RESOLVE_NO_XDEV |
				   SAFE_RESOLVE_NO_SYMLINKS | SAFE_RESOLVE_NO_MAGICLINKS,
		};
#ifdef SAFEOPEN_MUTATE_RMTREE_OPEN_XDEV
		/* Mutation (tests only): the open may cross a mount unseen. */
		how.resolve &= ~(uint64_t)SAFE_RESOLVE_NO_XDEV;
#endif
		int fd = so_openat2_fast(dfd, name, &how);
		if (fd >= 0 || errno != ENOSYS) {
			*same = fd >= 0;
			return fd;
		}
	}
	return openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
}

static int open_child(struct walk *w, int dfd, const char *name, bool *same)
{
	for (;;) {
		int c = open_dir(dfd, name, !w->xdev, same);
		if (c >= 0 || !make_room(w, errno))
			return c;
	}
}

/*
 * The identity of the child open as c, and whether it is on the mount of its
 * parent (identity *pid), unless SAFE_RMTREE_XDEV. `same`: the open showed it
 * (open_dir()); else the mount ids are compared, and one that cannot be
 * learnt counts as another mount (so_other_mount()). A resource error while
 * learning them (the procfs fdinfo entry needs descriptors) gives back a held
 * level and tries again (make_room()), else fails with that errno: never a
 * weaker fact. Returns 0; -1 with EXDEV for another mount, or the error.
 */
static int child_ident(struct walk *w, const struct so_ident *pid, int c, bool same,
		       struct so_ident *cid)
{
	bool need_mnt = !w->xdev && !same;
	for (;;) {
		int r = need_mnt ? so_ident_at(c, NULL, cid) : so_inode_at(c, NULL, cid);
		if (r == 0)
			break;
		if (!make_room(w, errno))
			return -1;
	}
	if (need_mnt && so_other_mount(pid, cid))
		return so_fail(EXDEV);
	return 0;
}

/* Close every held level but the top. */
static void drop_held(struct walk *w)
{
	for (size_t l = w->lo; l <= w->depth; l++)
		so_closep(&w->lv[l].fd);
	w->lo = w->depth + 1;
}

/*
 * Climb from the current level to its parent, `up` = depth - 1. The parent
 * is the directory the walk descended from, never the kernel's ".." (which
 * leads wherever cur has been moved to): its held descriptor, or, beyond
 * RMTREE_HELD levels, a new descent from the top by the recorded child names
 * (single names opened O_NOFOLLOW|O_DIRECTORY, each checked to stay on its
 * parent's mount unless SAFE_RMTREE_XDEV). Either way every directory rmtree
 * acts in was reached from the top by single-name lookups, whatever was
 * moved, deleted or recreated meanwhile: a directory outside can never take
 * the place of one it came from. Returns 0, or -1 with errno set when a
 * recorded name no longer leads to a directory on its parent's mount (EXDEV
 * for another mount): the caller restarts from the top; or -1 with a
 * resource errno (EMFILE, ENFILE, ENOMEM), which is no race: the caller
 * stops with it.
 */
static int climb(struct walk *w)
{
	size_t up = w->depth - 1;
#ifdef SAFEOPEN_MUTATE_RMTREE_CLIMB
	/* Mutation (tests only): trust the kernel's ".." of cur unchecked. */
	int p = openat(w->lv[w->depth].fd, "..", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (p < 0)
		return -1;
	so_closep(&w->lv[w->depth].fd);
	w->depth--;
	if (up >= w->lo || up == 0)
		so_close(w->lv[up].fd);
	else
		w->lo = up;
	w->lv[up].fd = p;
	return 0;
#else
	if (up == 0 || up >= w->lo) {
		so_closep(&w->lv[w->depth].fd);
		w->depth--;
		if (w->lo > w->depth + 1 || up == 0)
			w->lo = w->depth + 1;
		return 0;
	}
	drop_held(w);
	w->depth = 0;
	w->lo = 1;
	for (size_t l = 0; l < up; l++) {
		bool same;
		int c = open_child(w, w->lv[l].fd, w->lv[l].child, &same);
		if (c < 0)
			return -1;
		struct so_ident cid;
		/* EXDEV: the name leads to another mount now. */
		if (child_ident(w, &w->lv[l].id, c, same, &cid) < 0) {
			so_close(c);
			return -1;
		}
		/* Keeps lv[l + 1]'s resume offset, pass and child name. */
		w->depth++;
		w->lv[w->depth].id = cid;
		w->lv[w->depth].fd = c;
		if (w->depth - w->lo >= RMTREE_HELD)
			so_closep(&w->lv[w->lo++].fd);
	}
	assert(w->depth == up && w->lv[up].fd >= 0);
	return 0;
#endif
}

/* Remove a name that is (now) not a directory. */
static void unlink_nondir(struct walk *w, struct level *lv, int cur, const char *name)
{
	if (unlinkat(cur, name, 0) == 0 || errno == EISDIR)
		lv->progress = true; /* removed, or a directory again: next pass */
	else if (errno != ENOENT)
		note(w, errno);
}

/*
 * Deal with entry `name` of `cur`: unlink it, rmdir it if it is an empty
 * directory, or open it for descent. Returns 1 with *childp and *cid set when
 * the caller should descend into it, 0 otherwise (done, or error noted).
 */
static int handle_entry(struct walk *w, struct level *lv, int cur, const char *name,
			unsigned char type, int *childp, struct so_ident *cid)
{
	if (type != DT_DIR && type != DT_UNKNOWN) {
		if (unlinkat(cur, name, 0) == 0) {
			lv->progress = true;
			return 0;
		}
		if (errno == ENOENT)
			return 0;
		if (errno != EISDIR) {
			note(w, errno);
			return 0;
		}
		/* It became a directory meanwhile. */
	}
	/* An empty directory goes at once; rmdir never follows a symlink. */
	if (unlinkat(cur, name, AT_REMOVEDIR) == 0) {
		lv->progress = true;
		return 0;
	}
	switch (errno) {
	case ENOENT:
		return 0;
	case ENOTDIR: /* DT_UNKNOWN that is not a directory, or swapped */
		unlink_nondir(w, lv, cur, name);
		return 0;
	case ENOTEMPTY:
	case EEXIST:
	case EBUSY: /* a mount point: decided below */
		break;
	default:
		note(w, errno);
		return 0;
	}
	bool same;
	int c = open_child(w, cur, name, &same);
	if (c < 0) {
		if (errno == ENOTDIR || errno == ELOOP) /* swapped for a non-directory */
			unlink_nondir(w, lv, cur, name);
		else if (errno != ENOENT)
			note(w, errno); /* EXDEV: a mount point */
		return 0;
	}
	/* A mount point, or one that cannot be shown not to be: EXDEV, not
	 * entered; out of descriptors: that errno, not entered either. */
	if (child_ident(w, &lv->id, c, same, cid) < 0) {
		note(w, errno);
		so_close(c);
		return 0;
	}
	*childp = c;
	return 1;
}

/* Empty the directory open as topfd (identity *topid). Returns 0, or -1 with
 * errno = the first error met (the walk goes on past failures). */
static int empty_dir(int topfd, const struct so_ident *topid, bool xdev)
{
	struct walk w = { .cap = 16, .xdev = xdev };
	union {
		struct dirent64 d;
		char b[8192];
	} buf;
	int restarts = 0;

	w.lv = malloc(w.cap * sizeof(*w.lv));
	if (!w.lv)
		return so_fail(ENOMEM);
	w.depth = 0;
	w.lo = 1;
	level_init(&w.lv[0], topid, -1);
restart:
	drop_held(&w);
	so_closep(&w.lv[0].fd);
	/* A fresh open file description: its own getdents position. */
	w.depth = 0;
	w.lo = 1;
	level_init(&w.lv[0], topid, openat(topfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
	if (w.lv[0].fd < 0) {
		note(&w, errno);
		goto out;
	}
	for (;;) {
		struct level *lv = &w.lv[w.depth];
		int cur = lv->fd;
		ssize_t n = getdents64(cur, buf.b, sizeof(buf.b));
		if (n < 0 && errno == ENOENT) /* removed meanwhile: nothing left in it */
			n = 0;
		if (n < 0) {
			note(&w, errno);
			n = 0;
			lv->progress = false;
		}
		if (n == 0) {
			if (lv->progress && lv->pass + 1 < RMTREE_PASSES) {
				lv->pass++;
				lv->progress = false;
				if (lseek(cur, 0, SEEK_SET) == 0)
					continue;
				note(&w, errno);
			}
			if (w.depth == 0)
				break;
			/* Back up, only to the directory we came from. */
			if (climb(&w) < 0) {
				if (so_resource_errno(errno)) { /* no race: out of them */
					note(&w, errno);
					goto out;
				}
				if (++restarts > SO_RACE_RETRIES) {
					note(&w, EAGAIN);
					goto out;
				}
				goto restart;
			}
			lv = &w.lv[w.depth];
			cur = lv->fd;
			if (unlinkat(cur, lv->child, AT_REMOVEDIR) == 0)
				lv->progress = true;
			else if (errno != ENOENT)
				note(&w, errno);
			if (lseek(cur, lv->resume, SEEK_SET) < 0 && lseek(cur, 0, SEEK_SET) < 0)
				note(&w, errno);
			continue;
		}
		for (ssize_t off = 0; off < n;) {
			struct dirent64 *d = (struct dirent64 *)(void *)(buf.b + off);
			off += d->d_reclen;
			const char *name = d->d_name;
			if (so_is_dot_or_dotdot(name))
				continue;
			int c = -1;
			struct so_ident cid;
			if (!handle_entry(&w, lv, cur, name, d->d_type, &c, &cid))
				continue;
			lv->resume = d->d_off;
			memcpy(lv->child, name, strlen(name) + 1);
			if (push(&w, &cid, c) < 0) {
				note(&w, errno);
				continue;
			}
			break; /* read the child from its start */
		}
	}
out:
	drop_held(&w);
	so_closep(&w.lv[0].fd);
	free(w.lv);
	if (w.err)
		return so_fail(w.err);
	return 0;
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
		_cleanup_fd_ int top = open_dir(pfd, last.name, top_mount, &same);
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
		int err = empty_dir(top, &tid, xdev) < 0 ? errno : 0;
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
