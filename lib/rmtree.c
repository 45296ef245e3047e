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
 *  - A mount point (another mount id than its parent, st_dev where the kernel
 *    does not report mount ids) is not entered unless SAFE_RMTREE_XDEV.
 *  - Going back up uses openat(cur, ".."), accepted only if it is the very
 *    directory (device and inode) recorded on the way down. If a directory was
 *    moved while being emptied, the walk restarts from the top (bounded), so a
 *    ".." never leads anywhere the walk did not come from.
 *  - Limit: a directory moved out of the tree while it is being emptied is
 *    noticed at the next ".." step; entries removed from it before that were
 *    entries of that directory (which was inside the tree when entered).
 *
 * Cost: O(depth) memory (one small record per level: identity, resume
 * offset, child name), O(1) descriptors (the parent, the top, the current
 * directory and one being opened: at most 4 at any time), one getdents buffer.
 */
#include "internal.h"

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

struct level {
	struct so_ident id;       /* this directory */
	off_t resume;             /* getdents offset after the child being emptied */
	unsigned int pass;        /* passes completed over this directory */
	bool progress;            /* something was removed in this pass */
	char child[NAME_MAX + 1]; /* the subdirectory being emptied */
};

struct walk {
	struct level *lv;
	size_t depth, cap;
	int err; /* the first error */
	bool xdev;
};

static void note(struct walk *w, int err)
{
	if (!w->err)
		w->err = err;
}

static void level_init(struct level *lv, const struct so_ident *id)
{
	lv->id = *id;
	lv->resume = 0;
	lv->pass = 0;
	lv->progress = false;
	lv->child[0] = '\0';
}

static int push(struct walk *w, const struct so_ident *id)
{
	if (w->depth + 1 >= w->cap) {
		size_t ncap = w->cap * 2;
		struct level *n = realloc(w->lv, ncap * sizeof(*n));
		if (!n)
			return so_fail(ENOMEM);
		w->lv = n;
		w->cap = ncap;
	}
	w->depth++;
	level_init(&w->lv[w->depth], id);
	return 0;
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
	int c = openat(cur, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (c < 0) {
		if (errno == ENOTDIR || errno == ELOOP) /* swapped for a non-directory */
			unlink_nondir(w, lv, cur, name);
		else if (errno != ENOENT)
			note(w, errno);
		return 0;
	}
	if (so_ident_at(c, NULL, cid) < 0) {
		note(w, errno);
		so_close(c);
		return 0;
	}
	if (!w->xdev && so_other_mount(&lv->id, cid)) {
		note(w, EXDEV);
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
	int restarts = 0, cur = -1;

	w.lv = malloc(w.cap * sizeof(*w.lv));
	if (!w.lv)
		return so_fail(ENOMEM);
restart:
	/* A fresh open file description: its own getdents position. */
	cur = openat(topfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (cur < 0) {
		note(&w, errno);
		goto out;
	}
	w.depth = 0;
	level_init(&w.lv[0], topid);
	for (;;) {
		struct level *lv = &w.lv[w.depth];
		ssize_t n = getdents64(cur, buf.b, sizeof(buf.b));
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
			struct so_ident pid;
			int p = openat(cur, "..", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
			if (p < 0 || so_ident_at(p, NULL, &pid) < 0 ||
			    !so_same_inode(&pid, &w.lv[w.depth - 1].id)) {
				so_close(p);
				so_closep(&cur);
				if (++restarts > SO_RACE_RETRIES) {
					note(&w, EAGAIN);
					goto out;
				}
				goto restart;
			}
			so_close(cur);
			cur = p;
			w.depth--;
			lv = &w.lv[w.depth];
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
			if (name[0] == '.' && (!name[1] || (name[1] == '.' && !name[2])))
				continue;
			int c = -1;
			struct so_ident cid;
			if (!handle_entry(&w, lv, cur, name, d->d_type, &c, &cid))
				continue;
			lv->resume = d->d_off;
			memcpy(lv->child, name, strlen(name) + 1);
			if (push(&w, &cid) < 0) {
				note(&w, errno);
				so_close(c);
				continue;
			}
			so_close(cur);
			cur = c;
			break; /* read the child from its start */
		}
	}
out:
	so_close(cur);
	free(w.lv);
	if (w.err)
		return so_fail(w.err);
	return 0;
}

int safe_rmtree_beneath(int dirfd, const char *path, uint64_t flags)
{
	uint64_t resolve = so_op_resolve(flags, SAFE_RMTREE_XDEV);
	if (resolve == (uint64_t)-1)
		return -1;
	if (!path)
		return so_fail(EFAULT);
	bool xdev = flags & SAFE_RMTREE_XDEV;
	struct so_last last;
	_cleanup_fd_ int pfd = so_resolve_parent(dirfd, path, resolve, &last);
	if (pfd < 0)
		return -1;
	struct so_ident rootid, pid, tid;
	if (so_ident_at(dirfd, NULL, &rootid) < 0)
		return -1;
	if (last.is_root)
		return so_fail(EBUSY);
	if (so_is_dot_or_dotdot(last.name)) {
		/* Like rmdir: refuse "." and ".."; EBUSY if they name the root. */
		_cleanup_fd_ int fd = so_op_open(dirfd, path, resolve, O_DIRECTORY);
		if (fd < 0 || so_ident_at(fd, NULL, &tid) < 0)
			return -1;
		return so_fail(so_same_inode(&tid, &rootid) ? EBUSY : EINVAL);
	}
	if (so_ident_at(pfd, NULL, &pid) < 0)
		return -1;

	for (int tries = 0; tries < RMTREE_TOP_RETRIES; tries++) {
		_cleanup_fd_ int top =
			openat(pfd, last.name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
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
		if (so_ident_at(top, NULL, &tid) < 0)
			return -1;
		if (so_same_inode(&tid, &rootid))
			return so_fail(EBUSY);
		/* The top is what the path names: SAFE_RESOLVE_NO_XDEV keeps it on
		 * its parent's mount even with SAFE_RMTREE_XDEV (which only
		 * concerns mount points below it). */
		if ((!xdev || (resolve & SAFE_RESOLVE_NO_XDEV)) && so_other_mount(&pid, &tid))
			return so_fail(EXDEV);
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
