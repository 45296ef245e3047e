/* SPDX-License-Identifier: MIT */
/*
 * safe_walk_open() / safe_walk_next() / safe_walk_skip() / safe_walk_close():
 * a tree walk (find, du, chown -R, cp -a) that stays beneath a root.
 *
 * Safety argument:
 *  - The start is resolved by the resolver: its parent with
 *    so_resolve_parent(), then its last name opened O_NOFOLLOW|O_DIRECTORY
 *    from that parent (a symlink is an entry, never followed). So level 0 is
 *    beneath the root.
 *  - Every directory below is entered by openat(level, name,
 *    O_RDONLY|O_DIRECTORY|O_NOFOLLOW) of a single name read from its parent's
 *    getdents: whatever the name is at that instant, the object opened is a
 *    child of a directory of the chain (or a mount on that child), and a
 *    symlink is never followed (ELOOP/ENOTDIR: it is reported as an entry).
 *    Every entry is reported as (parent descriptor, single name), so a
 *    caller's *at(dirfd, name, AT_SYMLINK_NOFOLLOW) acts on that child.
 *  - Going back up never uses the kernel's "..": the walk returns to the
 *    level it descended from, through the descriptor it holds for it (a ring
 *    of the SW_HELD deepest levels, level 0, and sparse checkpoints) or by
 *    descending again from the deepest held level above it by the recorded
 *    names (redescend()), single names opened as above. A held directory
 *    cannot be freed, so no other directory can take its place by reusing
 *    its inode number; a re-descended level must show the identity recorded
 *    when it was first entered, else the rest of it is given up (EAGAIN):
 *    the walk never continues in a directory it did not list from the start.
 *  - A directory moved away while the walk is inside it: after every batch
 *    of entries read from it, its recorded name in its parent (held) must
 *    still lead to it (in_place()); if not, the batch is dropped and the rest
 *    of the directory is given up (its post-order visit carries EAGAIN). So
 *    no entry is reported from a directory that had already left its place
 *    when the entry was read. Limit (documented in safe_walk_open(3)): a
 *    directory whose ancestor (not the directory itself) is moved out of the
 *    root is walked to its end, as its subtree was beneath the root when read
 *    and is reached only by single names from it.
 *  - Mounts: with SAFE_WALK_XDEV a directory on another mount (mount ids,
 *    which tell bind mounts apart) is reported and not entered. Without it a
 *    directory on another mount than its parent is entered unless it is one
 *    of its own ancestors (a bind mount loop: ELOOP).
 *
 * Cost: memory O(depth) (one record and the name of each level) plus one
 * getdents buffer per ring slot that is in use; descriptors at most
 * SO_CHAIN_MAX_FDS + 2 (SO_WALK_MAX_FDS) whatever the depth: the held chain
 * (chain.c: ring, checkpoints, level 0), the start's parent, and one being
 * opened (during a re-descent, one level between held ones and one being
 * opened, with a ring slot still free). Under EMFILE/ENFILE a held level is
 * given back (so_chain_give_back()) and the open retried. Going back up
 * costs O(1) system calls per level with openat2 at any descriptor budget
 * (chain.c, "Cost").
 */
#include "internal.h"

#include <assert.h>
#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* getdents buffers: one per ring slot (level l uses slot l % SW_HELD). */
#define SW_HELD SO_CHAIN_RING
/* The chain, the start's parent, one being opened: the walk's documented
 * bound. */
_Static_assert(SO_CHAIN_MAX_FDS + 2 == SO_WALK_MAX_FDS, "the walk's descriptor bound");
/* getdents buffer of one ring slot. */
#define SW_BATCH 32768
#define SW_NONE ((size_t)-1)

#define SW_ALL_FLAGS \
	(SAFE_WALK_XDEV | SAFE_WALK_POSTORDER | SAFE_WALK_NO_STAT | SAFE_WALK_STOP_ON_ERROR)

/* The walk's own record of a level (its descriptor and identity are the
 * chain's). */
struct sw_level {
	off_t resume;       /* getdents offset after the last entry taken */
	bool seek;          /* fd's position is not resume: lseek before reading */
	bool eof;           /* listed to its end */
	int err;            /* why its listing stopped early (0: it did not) */
	size_t nstart;      /* its path: path[0..nend), its name path[nstart..nend) */
	size_t nend;
};

struct sw_slot {
	char *buf;
	size_t pos, len;
	size_t owner; /* the level whose batch it holds, or SW_NONE */
};

struct safe_walk {
	uint64_t flags;
	int pfd;         /* the start's parent (O_PATH), or -1 */
	bool lent;       /* pfd and level 0 are the caller's (so_walk_from()) */
	const char *start_name; /* the start's name in pfd, or "." */
	char last[NAME_MAX + 1];

	struct so_chain ch; /* the levels held (chain.c) */
	struct sw_level *lv; /* lv[0..depth], depth = so_chain_depth(&ch) */
	size_t depth, cap;
	struct sw_slot slot[SW_HELD];

	char *path;
	size_t pathcap;
	size_t prefix; /* length of the start's path */

	enum { SW_START, SW_RUN, SW_POP, SW_END, SW_DEAD } state;
	bool start_dir;
	bool pre_pending; /* the last entry was a PRE: skip() may prune it */
	struct statx stx;
	struct statx start_stx;
};

/* ------------------------------------------------------------------ helpers */

/* Descriptor pressure: the chain gives a held level back. */
static bool make_room(struct safe_walk *w, int err)
{
	return so_chain_give_back(&w->ch, err);
}

int so_open_subdir(int dfd, const char *name, bool keep_mount, bool *same)
{
	*same = false;
	if (keep_mount && so_have_openat2()) {
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
		int c = so_openat2_fast(dfd, name, &how);
		if (c >= 0 || errno != ENOSYS) {
			*same = c >= 0;
			return c;
		}
		/* no openat2 after all: the plain open */
	}
#ifdef SAFEOPEN_MUTATE_WALK_NOFOLLOW
	/* Mutation (tests only): a name swapped for a link is followed. */
	return openat(dfd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
#else
	return openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
#endif
}

/* so_open_subdir(), a held level given back for each EMFILE/ENFILE. */
static int open_dir(struct safe_walk *w, int dfd, const char *name, bool keep_mount, bool *same)
{
	for (;;) {
		int c = so_open_subdir(dfd, name, keep_mount, same);
		if (c >= 0 || !make_room(w, errno))
			return c;
	}
}

static int path_reserve(struct safe_walk *w, size_t need)
{
	if (need <= w->pathcap)
		return 0;
	size_t ncap = w->pathcap * 2;
	while (ncap < need)
		ncap *= 2;
	char *n = realloc(w->path, ncap);
	if (!n)
		return so_fail(ENOMEM);
	w->path = n;
	w->pathcap = ncap;
	return 0;
}

/* Write "/name" after level d's path; returns the name's offset, or
 * SW_NONE (ENOMEM). path is NUL-terminated after the name. */
static size_t path_append(struct safe_walk *w, size_t d, const char *name)
{
	size_t at = w->lv[d].nend;
	size_t n = strlen(name);
	if (path_reserve(w, at + n + 2) < 0)
		return SW_NONE;
	if (at == 0 || w->path[at - 1] != '/')
		w->path[at++] = '/';
	memcpy(w->path + at, name, n + 1);
	return at;
}

/* Level l's descriptor, or -1 when it is not held. */
static int lfd(const struct safe_walk *w, size_t l)
{
	return so_chain_fd(&w->ch, l);
}

/* The descriptor the entries of level l are reported against: its parent. */
static int parent_fd(const struct safe_walk *w, size_t l)
{
	return l == 0 ? (w->pfd >= 0 ? w->pfd : lfd(w, 0)) : lfd(w, l - 1);
}

/* ------------------------------------------------------------------ the chain */

/* The chain's open of a level it reopens: by its single name, never
 * through a link. */
static int chain_open(void *ctx, int dfd, const char *name, unsigned int *bits)
{
	(void)ctx;
	*bits = 0; /* the walk keeps no bits per level in the chain */
	bool same;
	return so_open_subdir(dfd, name, false, &same);
}

/* A reopened level is a new open file description: reading resumes where
 * it was, and its slot's batch (of the old description) is not its own. */
static void chain_reopened(void *ctx, size_t l)
{
	struct safe_walk *w = ctx;
	w->lv[l].seek = true;
	if (w->slot[l % SW_HELD].owner == l)
		w->slot[l % SW_HELD].owner = SW_NONE;
}

/* Push the directory open as fd (owned), named path[nstart..nend), with
 * identity *id, as level depth + 1. */
static int push(struct safe_walk *w, int fd, const struct so_ident *id, size_t nstart, size_t nend)
{
	if (w->depth + 1 >= w->cap) {
		size_t ncap = w->cap * 2;
		struct sw_level *n = realloc(w->lv, ncap * sizeof(*n));
		if (!n) {
			so_close(fd);
			return so_fail(ENOMEM);
		}
		w->lv = n;
		w->cap = ncap;
	}
	if (so_chain_push(&w->ch, fd, w->path + nstart, id, 0) < 0)
		return -1;
	size_t l = ++w->depth;
	assert(l == so_chain_depth(&w->ch));
	w->lv[l] = (struct sw_level){ .nstart = nstart, .nend = nend };
	struct sw_slot *s = &w->slot[l % SW_HELD];
	if (s->owner == l)
		s->owner = SW_NONE; /* an earlier directory at this level */
	return 0;
}

/* Pop level depth (closing it); the parent becomes cur. */
static void pop(struct safe_walk *w)
{
	assert(w->depth >= 1);
	size_t l = w->depth;
	if (w->slot[l % SW_HELD].owner == l)
		w->slot[l % SW_HELD].owner = SW_NONE;
	so_chain_pop(&w->ch);
	w->depth--;
}

/*
 * Make level t (< depth) held again, if it is not (so_chain_hold(): from
 * the nearest held level above it by the recorded names, each level
 * reopened checked against the identity recorded when it was first
 * entered). Returns 0, or -1 with errno (EAGAIN: a name no longer leads to
 * the directory walked; the listings of the levels given up end there).
 */
static int redescend(struct safe_walk *w, size_t t)
{
	if (lfd(w, t) >= 0)
		return 0;
	if (w->lv[t].err)
		return so_fail(w->lv[t].err);
	size_t failed = t;
	if (so_chain_hold(&w->ch, t, &failed) == 0)
		return 0;
	int err = errno;
	/* Levels failed..t are given up: their listings end here. */
	for (size_t k = failed; k <= t; k++)
		w->lv[k].err = err;
	return so_fail(err);
}

/* ------------------------------------------------------------------ reading */

/* Level l's name in its parent still leads to it (the start's: in the held
 * parent, if it has one). */
static bool in_place(struct safe_walk *w, size_t l)
{
#ifdef SAFEOPEN_MUTATE_WALK_IN_PLACE
	return true; /* mutation (tests only): a directory moved away is read on */
#endif
	if (l == 0 && w->pfd < 0)
		return true; /* the start has no parent beneath the root */
	/* The parent is held unless descriptors ran short: hold it again (a
	 * fact that cannot be learned is a failed check). */
	if (l > 0 && redescend(w, l - 1) < 0)
		return false;
	int pfd = l == 0 ? w->pfd : lfd(w, l - 1);
	char nm[NAME_MAX + 1];
	const char *name = l == 0 ? w->start_name : so_chain_name(&w->ch, l, nm);
	struct so_ident id;
	return so_inode_at(pfd, name, &id) == 0 && so_same_inode(&id, so_chain_id(&w->ch, l));
}

/* The next entry of cur (".", ".." skipped), or NULL at its end or on an
 * error (lv->err). */
static struct dirent64 *next_dirent(struct safe_walk *w)
{
	size_t l = w->depth;
	struct sw_level *lv = &w->lv[l];
	struct sw_slot *s = &w->slot[l % SW_HELD];
	for (;;) {
		if (lv->err)
			return NULL;
		if (s->owner == l) {
			while (s->pos < s->len) {
				struct dirent64 *d = (struct dirent64 *)(void *)(s->buf + s->pos);
				s->pos += d->d_reclen;
				lv->resume = d->d_off;
				if (!so_is_dot_or_dotdot(d->d_name))
					return d;
			}
		}
		if (lv->eof || lv->err)
			return NULL;
		if (s->owner != l) {
			if (s->owner != SW_NONE && s->owner <= w->depth)
				w->lv[s->owner].seek = true;
			s->owner = l;
			s->pos = s->len = 0;
		}
		if (!s->buf && !(s->buf = malloc(SW_BATCH))) {
			lv->err = ENOMEM;
			return NULL;
		}
		if (lv->seek) {
			if (lseek(lfd(w, l), lv->resume, SEEK_SET) < 0) {
				/* A directory removed meanwhile has nothing left
				 * (ext4 refuses its hash offsets then: EINVAL). */
				struct stat st;
				if (fstat(lfd(w, l), &st) == 0 && st.st_nlink == 0)
					lv->eof = true;
				else
					lv->err = errno;
				return NULL;
			}
			lv->seek = false;
		}
		ssize_t n = getdents64(lfd(w, l), s->buf, SW_BATCH);
		if (n <= 0) {
			if (n < 0 && errno != ENOENT) /* ENOENT: removed meanwhile */
				lv->err = errno;
			lv->eof = true;
			return NULL;
		}
		s->pos = 0;
		s->len = (size_t)n;
		if (!in_place(w, l)) {
			s->len = 0;
			lv->err = EAGAIN;
			return NULL;
		}
	}
}

/* ------------------------------------------------------------------ the API */

static void fill(struct safe_walk *w, struct safe_walk_entry *e, unsigned int visit, int err,
		 size_t depth, const char *name, int dirfd, int fd)
{
	e->path = w->path;
	e->name = name;
	e->dirfd = dirfd;
	e->fd = fd;
	e->visit = visit;
	e->error = err;
	e->depth = depth;
	e->stx = &w->stx;
}

static void walk_free(struct safe_walk *w)
{
	if (w->lent)
		w->pfd = -1; /* the caller's: not closed (level 0 is lent to the chain) */
	so_chain_free(&w->ch);
	so_closep(&w->pfd);
	for (size_t i = 0; i < SW_HELD; i++)
		free(w->slot[i].buf);
	free(w->lv);
	free(w->path);
	free(w);
}

/* A new walk with room for 16 levels and a path of pathcap bytes, nothing
 * held yet; NULL with ENOMEM. */
static struct safe_walk *walk_alloc(uint64_t flags, size_t pathcap)
{
	struct safe_walk *w = calloc(1, sizeof(*w));
	if (!w) {
		errno = ENOMEM;
		return NULL;
	}
	w->flags = flags;
	w->pfd = -1;
	w->cap = 16;
	w->pathcap = pathcap;
	w->lv = calloc(w->cap, sizeof(*w->lv));
	w->path = malloc(w->pathcap);
	for (size_t i = 0; i < SW_HELD; i++)
		w->slot[i].owner = SW_NONE;
	if (!w->lv || !w->path ||
	    so_chain_init(&w->ch, &(const struct so_chain_client){ .open = chain_open,
									 .reopened = chain_reopened,
									 .ctx = w,
									 .oflags = O_RDONLY,
									 .ident = true }) < 0) {
		walk_free(w);
		errno = ENOMEM;
		return NULL;
	}
	return w;
}

int safe_walk_open(int dirfd, const char *path, uint64_t flags, struct safe_walk **wp)
{
	uint64_t resolve;
	if (!wp)
		return so_fail(EFAULT);
	*wp = NULL;
	if (so_op_resolve(flags, SW_ALL_FLAGS, &resolve) < 0)
		return -1;
	if (!path)
		return so_fail(EFAULT);
	struct safe_walk *w = walk_alloc(flags & SW_ALL_FLAGS, 256);
	if (!w)
		return -1;

	/* The start's path as given, without trailing slashes (but "/"). */
	size_t len = strlen(path);
	while (len > 1 && path[len - 1] == '/')
		len--;
	if (path_reserve(w, len + 1) < 0)
		goto fail;
	memcpy(w->path, path, len);
	w->path[len] = '\0';
	w->prefix = len;
	w->lv[0].nstart = 0;
	w->lv[0].nend = len;

	struct so_last *last = malloc(sizeof(*last));
	if (!last)
		goto fail_nomem;
	w->pfd = so_resolve_parent(dirfd, path, resolve, last);
	if (w->pfd < 0) {
		free(last);
		goto fail;
	}
	bool has_parent = !last->is_root && !so_is_dot_or_dotdot(last->name);
	bool slash = last->trailing_slash;
	if (has_parent && strlen(last->name) > NAME_MAX) {
		free(last);
		errno = ENAMETOOLONG;
		goto fail;
	}
	if (has_parent)
		memcpy(w->last, last->name, strlen(last->name) + 1);
	free(last);
	int top;
	if (has_parent) {
		w->start_name = w->last;
		bool same;
		top = open_dir(w, w->pfd, w->last, false, &same);
		if (top < 0 && (errno == ENOTDIR || errno == ELOOP) && !slash) {
			/* Not a directory (a symlink is not followed): one entry. */
			if (so_statx_at(w->pfd, w->last, STATX_BASIC_STATS, &w->start_stx) < 0)
				goto fail;
			w->start_dir = false;
			w->state = SW_START;
			*wp = w;
			return 0;
		}
	} else {
		/* The root itself, or a path ending in "." / "..": no parent to
		 * report it against; the start is reported as "." of itself. */
		_cleanup_fd_ int p = so_op_open(dirfd, path, resolve, O_DIRECTORY);
		top = p < 0 ? -1 : openat(p, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		so_closep(&w->pfd);
		w->start_name = ".";
	}
	if (top < 0)
		goto fail;
	struct so_ident topid;
	if (so_statx_at(top, "", STATX_BASIC_STATS | STATX_MNT_ID, &w->start_stx) < 0 ||
	    so_ident_at(top, NULL, &topid) < 0) {
		so_close(top);
		goto fail;
	}
	so_chain_set_top(&w->ch, top, &topid, false);
	if (has_parent && (resolve & SAFE_RESOLVE_NO_XDEV)) {
		struct so_ident pid;
		if (so_ident_at(w->pfd, NULL, &pid) < 0)
			goto fail;
		if (so_other_mount(&pid, &topid)) {
			errno = EXDEV;
			goto fail;
		}
	}
	w->start_dir = true;
	w->state = SW_START;
	*wp = w;
	return 0;
fail_nomem:
	errno = ENOMEM;
fail:;
	int err = errno;
	walk_free(w);
	return so_fail(err);
}

int so_walk_from(int pfd, const char *name, int topfd, uint64_t flags, struct safe_walk **wp)
{
	*wp = NULL;
	size_t n = strlen(name);
	if (flags & ~(uint64_t)SW_ALL_FLAGS)
		return so_fail(EINVAL);
	if (n > NAME_MAX)
		return so_fail(ENAMETOOLONG);
	struct safe_walk *w = walk_alloc(flags, n + 256);
	if (!w)
		return -1;
	memcpy(w->last, name, n + 1);
	memcpy(w->path, name, n + 1);
	w->prefix = n;
	w->lv[0].nend = n;
	w->start_name = w->last;
	/* Both lent: no descriptor of the walk's own for them (so that a
	 * removal runs with 5 free descriptors). */
	w->lent = true;
	w->pfd = pfd;
	struct so_ident topid;
	if (so_statx_at(topfd, "", STATX_BASIC_STATS | STATX_MNT_ID, &w->start_stx) < 0 ||
	    so_ident_at(topfd, NULL, &topid) < 0) {
		int err = errno;
		walk_free(w);
		return so_fail(err);
	}
	so_chain_set_top(&w->ch, topfd, &topid, true);
	w->lv[0].seek = true; /* from its start: resume is 0 */
	w->start_dir = true;
	w->state = SW_START;
	*wp = w;
	return 0;
}

/* The walk ends with the caller's error (SAFE_WALK_STOP_ON_ERROR). */
static int stop(struct safe_walk *w, int err)
{
	w->state = SW_DEAD;
	return so_fail(err);
}

/* Report an entry: 1, or with SAFE_WALK_STOP_ON_ERROR and an error, -1. */
static int report(struct safe_walk *w, struct safe_walk_entry *e)
{
	if (e->error && (w->flags & SAFE_WALK_STOP_ON_ERROR))
		return stop(w, e->error);
	return 1;
}

/* The end of cur's listing: its post-order visit (with
 * SAFE_WALK_POSTORDER, or when the listing failed), else the climb. Returns
 * 1 with *e filled, or 0 when nothing is to be reported (climbed). */
static int end_of_dir(struct safe_walk *w, struct safe_walk_entry *e)
{
	size_t l = w->depth;
	struct sw_level *lv = &w->lv[l];
	/* The parent, held again if needed (if that fails, its own listing
	 * ends with the error: reported at its post-order visit). */
	if (l > 0)
		(void)redescend(w, l - 1);
#if defined(SAFEOPEN_MUTATE_WALK_CLIMB) || defined(SAFEOPEN_MUTATE_RMTREE_CLIMB)
	/* Mutation (tests only): go on in the parent the kernel's ".." shows
	 * (RMTREE_CLIMB: the same defence, as safe_rmtree_beneath() uses it). */
	if (l > 0 && lfd(w, l) >= 0) {
		int up = openat(lfd(w, l), "..", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (up >= 0) {
			so_chain_swap_fd(&w->ch, l - 1, up);
			w->lv[l - 1].seek = true;
			w->lv[l - 1].err = 0;
			if (w->slot[(l - 1) % SW_HELD].owner == l - 1)
				w->slot[(l - 1) % SW_HELD].owner = SW_NONE;
		}
	}
#endif
	int err = lv->err;
	if (!(w->flags & SAFE_WALK_POSTORDER) && !err) {
		if (l == 0) {
			w->state = SW_END;
			return 0;
		}
		pop(w);
		return 0;
	}
	w->path[lv->nend] = '\0';
	if (lfd(w, l) < 0 || so_statx_at(lfd(w, l), "", STATX_BASIC_STATS, &w->stx) < 0) {
		memset(&w->stx, 0, sizeof(w->stx));
		if (!err)
			err = errno;
	}
	/* A parent that could not be held again (its own listing ends with
	 * the error) is no descriptor to act in: the entry carries its error,
	 * never a clean entry with dirfd -1. */
	int pfd = parent_fd(w, l);
	if (pfd < 0 && !err)
		err = l > 0 && w->lv[l - 1].err ? w->lv[l - 1].err : EAGAIN;
	fill(w, e, SAFE_WALK_POST, err, l, l == 0 ? w->start_name : w->path + lv->nstart, pfd,
	     lfd(w, l));
	w->state = l == 0 ? SW_END : SW_POP;
	return 1;
}

/* The stat of entry `name` of cur (level w->depth) in w->stx: 0; -1 when it
 * is gone (ENOENT: not reported); 1 when it failed otherwise, reported in *e
 * as a leaf with that errno. */
static int entry_stat(struct safe_walk *w, struct safe_walk_entry *e, int cur, const char *name)
{
	if (so_statx_at(cur, name, STATX_BASIC_STATS, &w->stx) == 0)
		return 0;
	if (errno == ENOENT)
		return -1;
	memset(&w->stx, 0, sizeof(w->stx));
	fill(w, e, SAFE_WALK_LEAF, errno, w->depth + 1, name, cur, -1);
	return 1;
}

/* One entry of cur named d: fill *e. Returns 1 (reported), 0 (vanished). */
static int entry(struct safe_walk *w, struct dirent64 *d, struct safe_walk_entry *e)
{
	size_t l = w->depth;
	int cur = lfd(w, l);
	size_t at = path_append(w, l, d->d_name);
	if (at == SW_NONE) {
		fill(w, e, SAFE_WALK_LEAF, ENOMEM, l + 1, "", cur, -1);
		memset(&w->stx, 0, sizeof(w->stx));
		return 1;
	}
	const char *name = w->path + at;
	size_t nend = at + strlen(name);
	unsigned char type = d->d_type;
	if (type != DT_DIR) {
		if (type != DT_UNKNOWN && (w->flags & SAFE_WALK_NO_STAT)) {
			memset(&w->stx, 0, sizeof(w->stx));
			w->stx.stx_mask = STATX_TYPE | STATX_INO;
			w->stx.stx_mode = (uint16_t)DTTOIF(type);
			w->stx.stx_ino = d->d_ino;
			fill(w, e, SAFE_WALK_LEAF, 0, l + 1, name, cur, -1);
			return 1;
		}
		int r = entry_stat(w, e, cur, name);
		if (r != 0)
			return r > 0;
		if (!S_ISDIR(w->stx.stx_mode)) {
			fill(w, e, SAFE_WALK_LEAF, 0, l + 1, name, cur, -1);
			return 1;
		}
	}
	/* A directory: opened by its single name, never through a link. */
	bool same;
	int c = open_dir(w, cur, name, w->flags & SAFE_WALK_XDEV, &same);
	if (c < 0) {
		int err = errno;
		if (err == ENOENT)
			return 0;
		/* A mount point (XDEV with openat2), not a directory now
		 * (swapped for a link or a file), or not readable: reported
		 * with its own stat. */
		int r = entry_stat(w, e, cur, name);
		if (r != 0)
			return r > 0;
		if (err == EXDEV && S_ISDIR(w->stx.stx_mode)) {
			fill(w, e, SAFE_WALK_MOUNT, 0, l + 1, name, cur, -1);
			return 1;
		}
		bool swapped = (err == ENOTDIR || err == ELOOP || err == EXDEV) &&
			       !S_ISDIR(w->stx.stx_mode);
		fill(w, e, SAFE_WALK_LEAF, swapped ? 0 : err, l + 1, name, cur, -1);
		return 1;
	}
	struct so_ident cid;
	int ok;
	/* Its identity: with the mount id unless the open showed the mount
	 * (then it is the parent's). Out of descriptors while learning a
	 * mount id (procfs fdinfo), a held level is given back and it is
	 * asked again; never a weaker fact. */
	for (;;) {
		ok = so_statx_at(c, "", STATX_BASIC_STATS | STATX_MNT_ID, &w->stx);
		if (ok == 0 && same) {
			cid = so_statx_ident(&w->stx);
			cid.mnt = so_chain_id(&w->ch, l)->mnt;
			cid.have_mnt = so_chain_id(&w->ch, l)->have_mnt;
		} else if (ok == 0) {
			ok = so_ident_at(c, NULL, &cid);
		}
		if (ok == 0 || !make_room(w, errno))
			break;
	}
	if (ok != 0) {
		int err = errno;
		so_close(c);
		fill(w, e, SAFE_WALK_LEAF, err, l + 1, name, cur, -1);
		return 1;
	}
	if (so_other_mount(so_chain_id(&w->ch, l), &cid)) {
		if (w->flags & SAFE_WALK_XDEV) {
#ifndef SAFEOPEN_MUTATE_WALK_XDEV
			so_close(c);
			fill(w, e, SAFE_WALK_MOUNT, 0, l + 1, name, cur, -1);
			return 1;
#endif
		}
		/* A mount of one of its ancestors (bind mount loop) is not entered. */
		for (size_t k = 0; k <= l; k++) {
			if (so_same_inode(so_chain_id(&w->ch, k), &cid)) {
				so_close(c);
				fill(w, e, SAFE_WALK_LEAF, ELOOP, l + 1, name, cur, -1);
				return 1;
			}
		}
	}
	if (push(w, c, &cid, at, nend) < 0) {
		fill(w, e, SAFE_WALK_LEAF, errno, l + 1, name, cur, -1);
		return 1;
	}
	fill(w, e, SAFE_WALK_PRE, 0, l + 1, name, cur, c);
	w->pre_pending = true;
	return 1;
}

int safe_walk_next(struct safe_walk *w, struct safe_walk_entry *e)
{
	if (!w || !e)
		return so_fail(EFAULT);
	w->pre_pending = false;
	switch (w->state) {
	case SW_DEAD:
		return so_fail(EINVAL);
	case SW_END:
		return 0;
	case SW_START:
		w->state = SW_RUN;
		w->stx = w->start_stx;
		if (!w->start_dir) {
			w->state = SW_END;
			fill(w, e, SAFE_WALK_LEAF, 0, 0, w->start_name, w->pfd, -1);
			return 1;
		}
		fill(w, e, SAFE_WALK_PRE, 0, 0, w->start_name, parent_fd(w, 0), lfd(w, 0));
		w->pre_pending = true;
		return 1;
	case SW_POP:
		pop(w);
		w->state = SW_RUN;
		break;
	case SW_RUN:
		break;
	}
	for (;;) {
		struct dirent64 *d = next_dirent(w);
		if (!d) {
			int r = end_of_dir(w, e);
			if (r)
				return report(w, e);
			if (w->state == SW_END)
				return 0;
			continue;
		}
		if (entry(w, d, e))
			return report(w, e);
	}
}

int safe_walk_skip(struct safe_walk *w)
{
	if (!w)
		return so_fail(EFAULT);
	if (!w->pre_pending)
		return so_fail(EINVAL);
	w->pre_pending = false;
	/* Its listing is over before it began: with SAFE_WALK_POSTORDER its
	 * post-order visit still comes. */
	w->lv[w->depth].eof = true;
	return 0;
}

void safe_walk_close(struct safe_walk *w)
{
	if (w) {
		int saved = errno;
		walk_free(w);
		errno = saved;
	}
}
