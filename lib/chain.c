/* SPDX-License-Identifier: MIT */
/*
 * The held chain of directories a descent stands in (struct so_chain):
 * level 0 (the top) .. depth (cur), each recorded with its single name in
 * its parent and its identity when first entered. A descriptor is held for
 * level 0, for a ring of the deepest levels (cur among them) and for sparse
 * checkpoints above the ring; every other level is reopened from the nearest
 * held level above it by its recorded names (so_chain_hold()), never by the
 * kernel's "..". Client: the tree walk (walk.c, and rmtree.c through it).
 * The resolver (resolve.c) keeps a chain of its own for now, sized by the
 * same SO_CHAIN_RING and SO_CHAIN_CKPT and spaced by the same
 * so_ckpt_keep(), but with O_PATH levels that record no identity, a ring
 * that sheds its older half at once, levels left by ".." retired to a
 * batched close, and per-level bits (design.md, "The chain").
 *
 * Invariants (asserted by chain_check(), after every change):
 *  I1 level 0 is held (once set); cur is held unless its re-descent
 *     failed (the client then ends its listing there);
 *  I2 the ring is levels lo..depth, 1 <= lo <= depth + 1 (empty at depth 0),
 *     all held (but cur, I1), at most `ring` of them, 2 <= ring <=
 *     SO_CHAIN_RING (ring shrinks under EMFILE and stays so);
 *  I3 checkpoints are held levels below lo, strictly ascending, at most
 *     ckmax <= SO_CHAIN_CKPT (ckmax shrinks under EMFILE); no other level
 *     is held;
 *  I4 so the chain holds at most SO_CHAIN_MAX_FDS descriptors (the static
 *     assertion below), whatever the depth;
 *  I5 level l's name is names[nstart(l) .. nend(l)), and level l + 1's
 *     starts one byte after it (the '/' between): the names of levels
 *     a + 1 .. b are one relative path, names[nstart(a + 1) .. nend(b)).
 *
 * Safety argument of a re-descent (so_chain_hold()): a level is reopened
 * only from a held level of the chain, by the recorded names below it:
 * either one name at a time by the client's open (O_NOFOLLOW|O_DIRECTORY:
 * the object is a child of the held directory, or a mount on it, and never
 * reached through a link), or, with openat2 (5.6+), several names in one
 * open with RESOLVE_BENEATH|RESOLVE_NO_SYMLINKS|RESOLVE_NO_MAGICLINKS (the
 * kernel keeps the result beneath the held level and follows no link: the
 * same confinement as one name at a time, at one system call per hop). The
 * level opened must show the identity recorded when it was first entered,
 * else the re-descent stops there (EAGAIN): a client never goes on in a
 * directory that is not the one it descended through (mutation
 * CHAIN_IDENTITY, caught by test_walk replaced_level: no entry is handed a
 * replaced level as its parent). Premise: the identity is compared while
 * the level is open (reach()), so its inode number cannot be handed out
 * again meanwhile.
 *
 * Cost: each level is opened once on the way down. Re-descents refill the
 * ring below the target and add the checkpoints so_ckpt_keep() wants on the
 * way; with openat2 the levels skipped between two held ones cost one open
 * (per PATH_MAX bytes of names), so climbing back costs O(1) system calls
 * per level even when only level 0 and cur can be held (5 free
 * descriptors); without openat2 the skipped levels are opened one by one and
 * the checkpoints bound that to O(log4 depth) opens per level while they can
 * be held. Under EMFILE/ENFILE (so_chain_give_back()) the ring shrinks
 * first (down to cur and its parent, and stays that small), then the
 * shallowest checkpoints go, then cur's parent; a re-descent that still
 * lacks one (a hop of more than PATH_MAX bytes of names needs the level it
 * reached and the next at once) gives cur back too and reopens it from its
 * parent at the end (checked like every level reopened).
 */
#include "internal.h"

#include <assert.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

_Static_assert(SO_CHAIN_RING >= 2, "the ring holds cur and its parent");
_Static_assert(SO_CHAIN_RING + SO_CHAIN_CKPT + 1 == SO_CHAIN_MAX_FDS, "the chain's descriptor bound (I4)");
_Static_assert(SO_CHAIN_MAX_FDS <= SO_FD_BATCH_MAX, "one batch closes a whole chain");

/* Levels that so_chain_hold() may skip with one openat2: at most this many
 * bytes of names (the kernel's PATH_MAX, NUL included). */
#define CHAIN_HOP_MAX PATH_MAX

static void chain_check(const struct so_chain *c)
{
#ifndef NDEBUG
	assert(c->lv[0].fd >= 0 || c->depth == 0);                   /* I1 */
	assert(c->lo >= 1 && c->lo <= c->depth + 1);                 /* I2 */
	assert(c->ring >= 2 && c->ring <= SO_CHAIN_RING);            /* I2 */
	assert(c->depth + 1 - c->lo <= c->ring);                     /* I2 */
	assert(c->ckmax <= SO_CHAIN_CKPT && c->nck <= c->ckmax);     /* I3 */
	for (size_t i = 0; i < c->nck; i++) {
		assert(c->ck[i] >= 1 && c->ck[i] < c->lo);           /* I3 */
		assert(i == 0 || c->ck[i - 1] < c->ck[i]);          /* I3 */
		assert(c->lv[c->ck[i]].fd >= 0);                     /* I3 */
	}
	for (size_t l = c->lo; l < c->depth; l++)
		assert(c->lv[l].fd >= 0);                            /* I2 */
	for (size_t l = 1; l < c->depth; l++)
		assert(c->lv[l + 1].nstart == c->lv[l].nend + 1);    /* I5 */
#else
	(void)c;
#endif
}

/* Keep level `level` open as a checkpoint while the chain stands at `depth`? */
static bool ck_keep(size_t level, size_t depth)
{
#ifdef SAFEOPEN_MUTATE_WALK_CHECKPOINTS
	return false; /* mutation (tests only): re-descend from level 0 */
#endif
	return so_ckpt_keep(level, depth);
}

int so_chain_init(struct so_chain *c, so_chain_open_fn open_level, so_chain_reopened_fn reopened,
		  void *ctx, int oflags)
{
	*c = (struct so_chain){ .open = open_level, .reopened = reopened, .ctx = ctx, .oflags = oflags };
	c->cap = 16;
	c->ncap = 256;
	c->lo = 1;
	c->ring = SO_CHAIN_RING;
	c->ckmax = SO_CHAIN_CKPT;
	c->lv = calloc(c->cap, sizeof(*c->lv));
	c->names = malloc(c->ncap);
	if (!c->lv || !c->names) {
		free(c->lv);
		free(c->names);
		c->lv = NULL;
		c->names = NULL;
		return so_fail(ENOMEM);
	}
	c->lv[0].fd = -1;
	return 0;
}

void so_chain_set_top(struct so_chain *c, int fd, const struct so_ident *id)
{
	assert(c->depth == 0);
	so_closep(&c->lv[0].fd);
	c->lv[0].fd = fd;
	c->lv[0].id = *id;
}

void so_chain_release_top(struct so_chain *c)
{
	if (c->lv)
		c->lv[0].fd = -1;
}

/* Add fd to the batch, keeping it sorted. Each descriptor of a chain is
 * held in exactly one place (a level, a checkpoint or the retired list), so
 * no number can come twice: so_fd_batch_close() relies on it. */
void so_fd_batch_add(struct so_fd_batch *b, int fd)
{
	assert(fd >= 0 && b->n < SO_FD_BATCH_MAX);
	size_t i = b->n++;
	for (; i > 0 && b->fd[i - 1] > fd; i--)
		b->fd[i] = b->fd[i - 1];
	assert(i == 0 || b->fd[i - 1] != fd);
	b->fd[i] = fd;
}

/*
 * Close the batch. Descriptors are mostly handed out in sequence (the lowest
 * free number), so sorted they form a few runs of consecutive numbers.
 * Premise of the shortcut: a run of k distinct descriptors of the chain is
 * exactly the k numbers lo..hi, so no other descriptor (the caller's) can
 * lie in it, and one close_range() (5.9+) closes it. A single descriptor,
 * or no close_range: close().
 */
void so_fd_batch_close(struct so_fd_batch *b)
{
	int *fds = b->fd;
	size_t n = b->n;
	b->n = 0;
	for (size_t i = 0; i < n;) {
		size_t j = i + 1;
#ifndef SAFEOPEN_MUTATE_CLOSE_RANGE_EXACT
		while (j < n && fds[j] == fds[j - 1] + 1)
			j++;
#else
		j = n; /* mutation (tests only): one range from the lowest to the highest */
#endif
		assert(j - i == (size_t)(fds[j - 1] - fds[i]) + 1 || j == n);
#ifdef SYS_close_range
		if (j - i > 1 && !so_lacks(SO_FEAT_CLOSE_RANGE)) {
			int saved = errno;
			long r = syscall(SYS_close_range, (unsigned int)fds[i], (unsigned int)fds[j - 1],
					 0U);
			errno = saved;
			if (r == 0) {
				i = j;
				continue;
			}
			so_feature_set(SO_FEAT_CLOSE_RANGE, SO_PROBE_MISSING);
		}
#endif
		for (; i < j; i++)
			so_close(fds[i]);
	}
}

void so_chain_free(struct so_chain *c)
{
	if (c->lv) {
		/* Every held level in one batch (I4: at most SO_CHAIN_MAX_FDS). */
		struct so_fd_batch b = { .n = 0 };
		for (size_t l = 0; l <= c->depth; l++) {
			if (c->lv[l].fd >= 0)
				so_fd_batch_add(&b, c->lv[l].fd);
			c->lv[l].fd = -1;
		}
		so_fd_batch_close(&b);
	}
	free(c->lv);
	free(c->names);
	c->lv = NULL;
	c->names = NULL;
}

/* Drop the checkpoints so_ckpt_keep() no longer wants at this depth. */
static void ck_thin(struct so_chain *c)
{
	size_t k = 0;
	for (size_t i = 0; i < c->nck; i++) {
		size_t l = c->ck[i];
		if (ck_keep(l, c->depth))
			c->ck[k++] = l;
		else
			so_closep(&c->lv[l].fd);
	}
	c->nck = k;
}

/* Held level l (above the ring now) stays open as a checkpoint, or is closed. */
static void leave_ring(struct so_chain *c, size_t l)
{
	assert(l >= 1 && c->lv[l].fd >= 0);
	if (ck_keep(l, c->depth) && c->nck < c->ckmax) {
		assert(c->nck == 0 || c->ck[c->nck - 1] < l);
		c->ck[c->nck++] = l;
	} else {
		so_closep(&c->lv[l].fd);
	}
}

int so_chain_push(struct so_chain *c, int fd, const struct so_ident *id, const char *name)
{
	size_t n = strlen(name);
	assert(n >= 1 && n <= NAME_MAX && !strchr(name, '/'));
	size_t at = c->depth == 0 ? 0 : c->lv[c->depth].nend + 1;
	if (c->depth + 1 >= c->cap) {
		struct so_chain_level *nl = realloc(c->lv, 2 * c->cap * sizeof(*nl));
		if (!nl)
			goto nomem;
		c->lv = nl;
		c->cap *= 2;
	}
	if (at + n + 1 > c->ncap) {
		size_t ncap = c->ncap * 2;
		while (ncap < at + n + 1)
			ncap *= 2;
		char *nn = realloc(c->names, ncap);
		if (!nn)
			goto nomem;
		c->names = nn;
		c->ncap = ncap;
	}
	if (at > 0)
		c->names[at - 1] = '/';
	memcpy(c->names + at, name, n);
	size_t l = ++c->depth;
	c->lv[l] = (struct so_chain_level){ .fd = fd, .id = *id, .nstart = at, .nend = at + n };
	if (c->depth + 1 - c->lo > c->ring) {
		leave_ring(c, c->lo);
		c->lo++;
	}
	ck_thin(c);
	chain_check(c);
	return 0;
nomem:
	so_close(fd);
	return so_fail(ENOMEM);
}

void so_chain_pop(struct so_chain *c)
{
	assert(c->depth >= 1);
	so_closep(&c->lv[c->depth].fd);
	c->depth--;
	if (c->lo > c->depth)
		c->lo = c->depth >= 1 && c->lv[c->depth].fd >= 0 ? c->depth : c->depth + 1;
	/* A checkpoint inside the ring is an ordinary held level now. */
	while (c->nck > 0 && c->ck[c->nck - 1] >= c->lo)
		c->nck--;
	chain_check(c);
}

/* Give one held level back (EMFILE/ENFILE), never level 0, cur or `keep`:
 * the ring's shallowest while it is longer than cur and its parent (the
 * ring stays that short), else the shallowest checkpoint (fewer are kept
 * from then on), else cur's parent. False when nothing can go. */
static bool give_back(struct so_chain *c, int err, size_t keep)
{
	if (err != EMFILE && err != ENFILE)
		return false;
	if (c->depth >= c->lo + 2 && c->lo != keep) {
		so_closep(&c->lv[c->lo++].fd);
		c->ring = c->depth + 1 - c->lo;
		return true;
	}
	for (size_t i = 0; i < c->nck; i++) {
		if (c->ck[i] == keep)
			continue;
		so_closep(&c->lv[c->ck[i]].fd);
		memmove(c->ck + i, c->ck + i + 1, (c->nck - i - 1) * sizeof(c->ck[0]));
		c->nck--;
		c->ckmax = c->nck;
		return true;
	}
	if (c->lo < c->depth && c->lo != keep) {
		/* Only cur and level 0 stay: no checkpoints from now on. */
		so_closep(&c->lv[c->lo++].fd);
		c->ring = 2;
		c->ckmax = c->nck;
		return true;
	}
	return false;
}

bool so_chain_give_back(struct so_chain *c, int err)
{
	bool r = give_back(c, err, 0);
	chain_check(c);
	return r;
}

/* Open level `to` from the directory dfd, which is level `from` (several
 * names: to > from + 1), in one openat2 beneath it that follows no link:
 * the new descriptor, or -1 with errno (ENOSYS: no openat2). */
static int open_hop(struct so_chain *c, int dfd, size_t from, size_t to)
{
	assert(to > from + 1);
	size_t a = c->lv[from + 1].nstart, n = c->lv[to].nend - a;
	char path[CHAIN_HOP_MAX];
	if (n >= sizeof(path))
		return so_fail(ENAMETOOLONG);
	memcpy(path, c->names + a, n);
	path[n] = '\0';
	struct safe_open_how how = {
		.flags = (uint64_t)(c->oflags | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC),
		.resolve = SAFE_RESOLVE_BENEATH | SAFE_RESOLVE_NO_SYMLINKS |
			   SAFE_RESOLVE_NO_MAGICLINKS,
	};
	return so_openat2_fast(dfd, path, &how);
}

/* The deepest level in (from, want] whose names from `from` fit one hop. */
static size_t hop_end(const struct so_chain *c, size_t from, size_t want)
{
	size_t a = c->lv[from + 1].nstart;
	size_t to = want;
	while (to > from + 1 && c->lv[to].nend - a >= CHAIN_HOP_MAX)
		to--;
	return to;
}

/* A re-descent under way: levels newlo .. `base` reopened for the new ring
 * (lo is still the old ring's). */
struct hold {
	size_t newlo;
	size_t base;
	size_t t;
	bool cur_closed; /* cur given back meanwhile: reopened at the end */
};

/* Out of descriptors during a re-descent: the shallowest level reopened for
 * the new ring goes first (the new ring starts one deeper), else a held
 * level that is not the one the next open starts from. */
static bool hold_give_back(struct so_chain *c, struct hold *h, int err)
{
	if ((err == EMFILE || err == ENFILE) && h->newlo < h->base && c->lv[h->newlo].fd >= 0) {
		so_closep(&c->lv[h->newlo++].fd);
		return true;
	}
	if (give_back(c, err, h->base))
		return true;
	if ((err == EMFILE || err == ENFILE) && h->t < c->depth && c->lv[c->depth].fd >= 0) {
		/* Last resort (a hop longer than PATH_MAX with 5 free
		 * descriptors): cur too, opened again from t at the end. */
		so_closep(&c->lv[c->depth].fd);
		h->cur_closed = true;
		return true;
	}
	return false;
}

/*
 * Reopen level `to` (levels h->base + 1 .. to are not held) from held level
 * h->base into *fd, checking its identity; levels skipped are opened in hops
 * of names (openat2), or one at a time (held only until the next is open).
 * 0, or -1 with errno (EAGAIN: a name no longer leads to the level walked).
 */
static int reach(struct so_chain *c, struct hold *h, size_t to, bool hops, int *fd)
{
	size_t at = h->base;
	int tmp = -1; /* level `at` when it is not h->base: ours, not held */
	*fd = -1;
	while (at < to) {
		size_t next = hops ? hop_end(c, at, to) : at + 1;
		int f;
		for (;;) {
			int dfd = at == h->base ? c->lv[at].fd : tmp;
			if (next == at + 1) {
				char nm[NAME_MAX + 1];
				f = c->open(c->ctx, dfd, so_chain_name(c, next, nm));
			} else {
				f = open_hop(c, dfd, at, next);
			}
			if (f >= 0 || !hold_give_back(c, h, errno))
				break;
		}
		if (f < 0 && errno == ENOSYS && next > at + 1) {
			hops = false; /* no openat2 after all */
			continue;
		}
		if (f >= 0) {
			struct so_ident id;
			if (so_inode_at(f, NULL, &id) < 0) {
				so_closep(&f);
#ifndef SAFEOPEN_MUTATE_CHAIN_IDENTITY
			} else if (!so_same_inode(&id, &c->lv[next].id)) {
#else /* mutation (tests only): a level reopened is not compared */
			} else if (false) {
#endif
				/* Replaced: not the directory walked. */
				so_closep(&f);
				errno = EAGAIN;
			}
		}
		if (f < 0) {
			int err = errno;
			so_closep(&tmp);
			if (err == ENOENT || err == ENOTDIR || err == ELOOP || err == EXDEV)
				err = EAGAIN;
			return so_fail(err);
		}
		so_closep(&tmp);
		tmp = f;
		at = next;
	}
	*fd = tmp;
	return 0;
}

/*
 * Make level t held again (it is cur's parent, or cur after a failed
 * re-descent): from the deepest held level above it, reopen the levels of
 * the new ring down to t and, on the way, the checkpoints so_ckpt_keep()
 * wants; with openat2 the levels between are skipped in hops (safety
 * argument at the top). 0, or -1 with errno and *failed the shallowest
 * level given up (its listing and those below it end with that error).
 */
int so_chain_hold(struct so_chain *c, size_t t, size_t *failed)
{
	assert(t <= c->depth);
	if (c->lv[t].fd >= 0)
		return 0;
	assert(t >= 1 && t < c->lo && t + 2 >= c->lo);
	/* The deepest held level above t: the last checkpoint (all are above
	 * the ring, so above t), else level 0. */
	size_t from = c->nck > 0 ? c->ck[c->nck - 1] : 0;
	assert(from < t && c->lv[from].fd >= 0);
	struct hold h = { .base = from, .t = t };
	/* The new ring: newlo .. depth, at most `ring` levels. */
	h.newlo = c->depth + 1 > c->ring ? c->depth + 1 - c->ring : 1;
	if (h.newlo <= from)
		h.newlo = from + 1;
	if (h.newlo > t)
		h.newlo = t;
	bool hops = so_have_openat2();
	bool retried = false;
again:
	for (size_t l = from + 1; l <= t; l++) {
		bool ring = l >= h.newlo;
		/* Opened one by one without openat2; with it, only the ones to
		 * be held (the ring, the checkpoints wanted here while
		 * descriptors have not run short). */
		bool ck = !ring && ck_keep(l, c->depth) && c->nck < c->ckmax &&
			  c->ring == SO_CHAIN_RING;
		if (hops && !ring && !ck)
			continue;
		int fd;
		if (reach(c, &h, l, hops, &fd) < 0) {
			int err = errno;
			size_t at = h.base + 1;
			/* Back to the chain as it was: the levels reopened below
			 * `from` are given back. */
			for (size_t j = from + 1; j < l; j++)
				so_closep(&c->lv[j].fd);
			while (c->nck > 0 && c->ck[c->nck - 1] > from)
				c->nck--;
			if ((err == EMFILE || err == ENFILE) && !retried && c->ckmax > c->nck) {
				/* The checkpoints wanted on the way took the
				 * descriptors: once more without them. */
				retried = true;
				c->ckmax = c->nck;
				h.base = from;
				goto again;
			}
			*failed = at;
			chain_check(c);
			return so_fail(err);
		}
		c->lv[l].fd = fd;
		if (c->reopened)
			c->reopened(c->ctx, l);
		/* The previous one opened, if above the new ring and not
		 * `from`: a checkpoint, or closed. */
		size_t p = h.base;
		if (p > from && p < h.newlo && c->lv[p].fd >= 0) {
			if (ck_keep(p, c->depth) && c->nck < c->ckmax)
				c->ck[c->nck++] = p;
			else
				so_closep(&c->lv[p].fd);
		}
		h.base = l;
	}
	/* Levels given back while reopening (EMFILE) shortened the new ring. */
	while (h.newlo < t && c->lv[h.newlo].fd < 0)
		h.newlo++;
	c->lo = h.newlo;
	if (h.cur_closed) {
		/* cur = t + 1, from t, checked as every level reopened. */
		h.base = t;
		int fd;
		if (reach(c, &h, c->depth, false, &fd) < 0) {
			*failed = c->depth;
			chain_check(c);
			return -1;
		}
		c->lv[c->depth].fd = fd;
		if (c->reopened)
			c->reopened(c->ctx, c->depth);
	}
	chain_check(c);
	return 0;
}

int so_chain_fd(const struct so_chain *c, size_t l)
{
	assert(l <= c->depth);
	return c->lv[l].fd;
}

const char *so_chain_name(const struct so_chain *c, size_t l, char buf[NAME_MAX + 1])
{
	assert(l >= 1 && l <= c->depth);
	size_t n = c->lv[l].nend - c->lv[l].nstart;
	assert(n <= NAME_MAX);
	memcpy(buf, c->names + c->lv[l].nstart, n);
	buf[n] = '\0';
	return buf;
}
