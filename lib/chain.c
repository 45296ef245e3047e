/* SPDX-License-Identifier: MIT */
/*
 * The held chain of directories a descent stands in (struct so_chain):
 * level 0 (the top) .. depth (cur), each recorded by its single name in its
 * parent. A descriptor is held for level 0, for a ring of the deepest levels
 * (cur among them), for sparse checkpoints above the ring and, for a moment,
 * for levels left by ".." (retired: closed in one batch later); every other
 * level is reopened from the nearest held level above it by its recorded
 * names, never by the kernel's "..". Two clients:
 *  - the resolver (resolve.c): O_PATH levels reached by single names, level
 *    0 the caller's (lent), no identities (premise below), a ring that sheds
 *    its older half at once (cl.halves), ".." by so_chain_up() (the level
 *    left is retired and may be taken back: so_chain_take_back()), IN_ROOT
 *    jumps (so_chain_jump()), client bits per level (searched, crossed);
 *  - the tree walk (walk.c, and rmtree.c through it): readable levels with
 *    their getdents state (the client's, by level), identities recorded and
 *    checked on every re-descent (cl.ident), a ring that slides one level at
 *    a time, going up by so_chain_pop() and so_chain_hold() (with openat2
 *    hops of names).
 *
 * Invariants (asserted by chain_check(), after every complete change):
 *  C1 level 0 is held once set (the client's when lent); cur is held unless
 *     its re-descent failed (so_chain_hold(): the client then ends its
 *     listing there; a client going up by so_chain_up() always holds it);
 *  C2 the ring is levels lo..depth, 1 <= lo <= depth + 1 (empty at depth 0),
 *     all held (but cur, C1), at most `ring` of them, 2 <= ring <=
 *     SO_CHAIN_RING (ring shrinks under EMFILE and stays so), level l in
 *     slot[l % SO_CHAIN_RING];
 *  C3 checkpoints are held levels below lo, strictly ascending, at most
 *     ckmax <= SO_CHAIN_CKPT (ckmax shrinks under EMFILE); no other level
 *     is held;
 *  C4 at most SO_CHAIN_RETIRED retired descriptors, none of them a level
 *     (so_chain_take_back() takes the newest back out of them first);
 *  C5 so the chain holds at most SO_FD_BATCH_MAX descriptors, and one batch
 *     closes them all (the static assertions below);
 *  C6 the names of levels 1..depth are names[0..nlen), each NUL-terminated,
 *     in order; a held level records where its name ends (nend), so the
 *     names below a held level are read on from there.
 *
 * Safety argument of a re-descent: a level is reopened only from a held
 * level of the chain, by the recorded names below it: one name at a time by
 * the client's open (O_NOFOLLOW|O_DIRECTORY: the object is a child of the
 * held directory, or a mount on it, and never reached through a link), or,
 * with openat2 (5.6+), several names in one open with
 * RESOLVE_BENEATH|RESOLVE_NO_SYMLINKS|RESOLVE_NO_MAGICLINKS (the kernel
 * keeps the result beneath the held level and follows no link: the same
 * confinement as one name at a time, at one system call per hop). So the
 * level reached was reached from level 0 by descending only. A client with
 * identities (cl.ident) also requires every level reopened to show the
 * identity recorded when it was first entered, else the re-descent stops
 * there (EAGAIN): it never goes on in a directory that is not the one it
 * listed (mutation CHAIN_IDENTITY, caught by test_walk replaced_level).
 * Premise of that check: the identity is compared while the level is open
 * (reach()), so its inode number cannot be handed out again meanwhile. A
 * client without identities (the resolver) states its premise instead: its
 * answer is a directory reached by single names from a held level, which is
 * what the kernel's lookup of those names gives at that moment (it compares
 * with nothing it recorded earlier, so there is nothing to reuse).
 *
 * Cost: each level is opened once on the way down. The resolver's ".." onto
 * a level not held re-descends by single names from the deepest checkpoint
 * (so_chain_up()); the walk's re-descents refill the ring below the target
 * and add the checkpoints wanted on the way, and with openat2 the levels
 * skipped between two held ones cost one open (per PATH_MAX bytes of names),
 * so climbing back costs O(1) system calls per level even when only level 0
 * and cur can be held (5 free descriptors); without openat2 the skipped
 * levels are opened one by one and the checkpoints bound that to O(log4
 * depth) opens per level while they can be held. Descriptors leave in
 * batches (so_fd_batch: mostly one close_range()). Under EMFILE/ENFILE
 * (so_chain_give_back()) the retired ones go first, then the ring's
 * shallowest level (one per call, down to cur and its parent; the ring
 * keeps the length it is left with), then the shallowest checkpoints, then
 * cur's parent; a walk's re-descent that still lacks one (the table full
 * when it opens the first level of its new ring, or a hop of more than
 * PATH_MAX bytes of names, which needs the level it reached and the next at
 * once) gives cur back too and reopens it from its parent at the end
 * (checked like every level reopened; levels given back meanwhile move the
 * ring's start).
 */
#include "internal.h"

#include <assert.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

_Static_assert(SO_CHAIN_RING >= 2, "the ring holds cur and its parent");
_Static_assert(SO_CHAIN_RING + SO_CHAIN_CKPT + 1 == SO_CHAIN_MAX_FDS,
	       "the bound of a chain that retires nothing (C5)");
/* Equal today (SO_FD_BATCH_MAX is that sum); the assertion keeps it so. */
_Static_assert(SO_CHAIN_RING + SO_CHAIN_CKPT + SO_CHAIN_RETIRED + 1 <= /* NOLINT(misc-redundant-expression) */
		       SO_FD_BATCH_MAX,
	       "one batch closes a whole chain (C5)");

/* Levels that a re-descent may skip with one openat2: at most this many
 * bytes of names (the kernel's PATH_MAX, NUL included). */
#define CHAIN_HOP_MAX PATH_MAX
/* The first storage for names when the client gives none (it grows). */
#define CHAIN_NAMES_FIRST 256
/* ... and for identities. */
#define CHAIN_IDS_FIRST 16

static size_t slot(size_t level)
{
	return level % SO_CHAIN_RING;
}

static struct so_chain_slot *slot_of(struct so_chain *c, size_t level)
{
	return &c->slot[slot(level)];
}

/* Where the name ending at names[end - 1] starts. */
static size_t name_start(const struct so_chain *c, size_t end)
{
	assert(end > 0 && c->names[end - 1] == '\0');
	size_t i = end - 1;
	while (i > 0 && c->names[i - 1] != '\0')
		i--;
	return i;
}

static void chain_check(const struct so_chain *c)
{
#ifndef NDEBUG
	assert(c->depth == 0 || c->top >= 0 || c->top == AT_FDCWD);     /* C1 */
	assert(c->lo >= 1 && c->lo <= c->depth + 1);                     /* C2 */
	assert(c->ring >= 2 && c->ring <= SO_CHAIN_RING);                /* C2 */
	assert(c->depth + 1 - c->lo <= c->ring);                         /* C2 */
	for (size_t l = c->lo; l < c->depth; l++)
		assert(c->slot[slot(l)].fd >= 0);                        /* C2 */
	assert(c->ckmax <= SO_CHAIN_CKPT && c->nck <= c->ckmax);         /* C3 */
	for (size_t i = 0; i < c->nck; i++) {
		assert(c->ck[i].level >= 1 && c->ck[i].level < c->lo);   /* C3 */
		assert(i == 0 || c->ck[i - 1].level < c->ck[i].level);  /* C3 */
		assert(c->ck[i].fd >= 0 && c->ck[i].nend < c->nlen);     /* C3, C6 */
	}
	assert(c->nretired <= SO_CHAIN_RETIRED);                         /* C4 */
	for (size_t r = 0; r < c->nretired; r++) {
		for (size_t l = c->lo; l <= c->depth; l++)
			assert(c->retired[r] != c->slot[slot(l)].fd);    /* C4 */
		for (size_t i = 0; i < c->nck; i++)
			assert(c->retired[r] != c->ck[i].fd);            /* C4 */
	}
	assert((c->depth == 0) == (c->nlen == 0));                       /* C6 */
	assert(c->nlen == 0 || c->names[c->nlen - 1] == '\0');           /* C6 */
	if (c->lo <= c->depth)
		assert(c->slot[slot(c->depth)].nend == c->nlen);         /* C6 */
	for (size_t l = c->lo; l < c->depth; l++)
		assert(c->slot[slot(l + 1)].nend > c->slot[slot(l)].nend); /* C6 */
#else
	(void)c;
#endif
}

/*
 * Keep level `level` open as a checkpoint while cur is at `depth`? Yes when
 * it is a multiple of 4^j and less than 4^(j+1) levels above cur, for some
 * j: the last 4 levels, the multiples of 4 among the last 16, of 16 among
 * the last 64, and so on: about three per power of 4 of the depth (at most
 * SO_CHAIN_CKPT for any depth a resolver's path with SO_MAXSYMLINKS link
 * bodies can reach). Monotone: a level not worth keeping at one depth is not
 * worth keeping deeper, so checkpoints are only ever thinned while
 * descending. Climbing from depth d to the root then opens each level
 * O(log4 d) times in all (each re-descent fills the gap below it at the next
 * finer spacing), instead of re-descending from the root every
 * SO_CHAIN_RING levels (quadratic in d). See design.md, "The cost of '..'".
 */
static bool ck_keep(const struct so_chain *c, size_t level)
{
#ifdef SAFEOPEN_MUTATE_CHECKPOINTS
	if (!c->cl.ident)
		return false; /* mutation (tests only): the resolver re-descends from the root */
#endif
#ifdef SAFEOPEN_MUTATE_WALK_CHECKPOINTS
	if (c->cl.ident)
		return false; /* mutation (tests only): the walk re-descends from level 0 */
#endif
	assert(level <= c->depth);
	size_t dist = c->depth - level;
	for (size_t unit = 1; level % unit == 0; unit *= 4) {
		if (dist / 4 < unit)
			return true;
		if (unit > SIZE_MAX / 16)
			break;
	}
	return false;
}

int so_chain_init(struct so_chain *c, const struct so_chain_client *cl)
{
	*c = (struct so_chain){ .cl = *cl, .top = -1, .back = -1 };
	c->lo = 1;
	c->ring = SO_CHAIN_RING;
	c->ckmax = SO_CHAIN_CKPT;
	for (size_t i = 0; i < SO_CHAIN_RING; i++)
		c->slot[i].fd = -1;
	c->names = cl->names;
	c->ncap = cl->ncap;
	if (!c->names) {
		c->ncap = CHAIN_NAMES_FIRST;
		c->names = malloc(c->ncap);
	}
	if (cl->ident) {
		c->idcap = CHAIN_IDS_FIRST;
		c->id = calloc(c->idcap, sizeof(*c->id));
	}
	if (!c->names || (cl->ident && !c->id)) {
		if (c->names != cl->names)
			free(c->names);
		free(c->id);
		c->names = NULL;
		c->id = NULL;
		return so_fail(ENOMEM);
	}
	return 0;
}

void so_chain_set_top(struct so_chain *c, int fd, const struct so_ident *id, bool lent)
{
	assert(c->depth == 0 && (id != NULL) == c->cl.ident);
	if (!c->top_lent)
		so_closep(&c->top);
	c->top = fd;
	c->top_lent = lent;
	if (id)
		c->id[0] = *id;
}

/* Add fd to the batch, keeping it sorted. Each descriptor of a chain is
 * held in exactly one place (level 0, a ring slot, a checkpoint or the
 * retired list: C4), so no number can come twice: so_fd_batch_close()
 * relies on it. */
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

/* Into the batch: the retired descriptors (none is the taken-back one any
 * more: so_chain_back() is for the next component only). */
static void batch_retired(struct so_chain *c, struct so_fd_batch *b)
{
	for (size_t r = 0; r < c->nretired; r++)
		so_fd_batch_add(b, c->retired[r]);
	c->nretired = 0;
	c->back = -1;
}

/* Into the batch: the ring levels from..depth (those held). */
static void batch_ring(struct so_chain *c, size_t from, struct so_fd_batch *b)
{
	for (size_t l = from; l <= c->depth; l++) {
		struct so_chain_slot *s = slot_of(c, l);
		if (s->fd >= 0)
			so_fd_batch_add(b, s->fd);
		s->fd = -1;
	}
}

/* Into the batch: the checkpoints at level `from` and deeper. */
static void batch_ck_from(struct so_chain *c, size_t from, struct so_fd_batch *b)
{
	while (c->nck > 0 && c->ck[c->nck - 1].level >= from)
		so_fd_batch_add(b, c->ck[--c->nck].fd);
}

/* Close the retired descriptors. */
static void close_retired(struct so_chain *c)
{
	struct so_fd_batch b = { .n = 0 };
	batch_retired(c, &b);
	so_fd_batch_close(&b);
}

void so_chain_free(struct so_chain *c)
{
	if (!c->names)
		return; /* never set up: nothing held */
	/* Every held descriptor in one batch (C5). */
	struct so_fd_batch b = { .n = 0 };
	if (c->depth >= c->lo)
		batch_ring(c, c->lo, &b);
	batch_ck_from(c, 0, &b);
	batch_retired(c, &b);
	if (c->top >= 0 && !c->top_lent)
		so_fd_batch_add(&b, c->top);
	c->top = -1;
	so_fd_batch_close(&b);
	if (c->names != c->cl.names)
		free(c->names);
	free(c->id);
	c->names = NULL;
	c->id = NULL;
}

/* The checkpoints ck_keep() no longer wants at this depth go (into the
 * batch). */
static void ck_thin(struct so_chain *c, struct so_fd_batch *b)
{
	size_t k = 0;
	for (size_t i = 0; i < c->nck; i++) {
		if (ck_keep(c, c->ck[i].level))
			c->ck[k++] = c->ck[i];
		else
			so_fd_batch_add(b, c->ck[i].fd);
	}
	c->nck = k;
}

/* Held level l leaves the ring (it is above it now): a checkpoint, or
 * closed (into the batch). With every checkpoint taken (and none given back
 * under EMFILE), the shallowest one goes instead. */
static void leave_ring(struct so_chain *c, size_t l, struct so_fd_batch *b)
{
	struct so_chain_slot *s = slot_of(c, l);
	int fd = s->fd;
	s->fd = -1;
	assert(l >= 1 && fd >= 0);
	if (!ck_keep(c, l) || (c->nck == c->ckmax && c->ckmax < SO_CHAIN_CKPT)) {
		so_fd_batch_add(b, fd);
		return;
	}
	if (c->nck == SO_CHAIN_CKPT) {
		so_fd_batch_add(b, c->ck[0].fd);
		memmove(c->ck, c->ck + 1, --c->nck * sizeof(c->ck[0]));
	}
	assert(c->nck == 0 || c->ck[c->nck - 1].level < l);
	c->ck[c->nck++] = (struct so_chain_ckpt){
		.level = l,
		.nend = s->nend,
		.fd = fd,
		.bits = s->bits & c->cl.keep_bits,
	};
}

/* The ring is longer than `ring`: its oldest level (cl.halves: its older
 * half) leaves it, with the checkpoints no longer wanted, in one batch. A
 * sliding ring offers its level as a checkpoint before it thins them, so
 * that under EMFILE (ckmax reached) the new one waits for the next level
 * rather than replacing one thinned now: thinning first kept more
 * checkpoints and cost the walk re-descents (du -s of 4,000 levels with 16
 * free descriptors: 51,888 system calls instead of 47,880). */
static void shed(struct so_chain *c)
{
	struct so_fd_batch b = { .n = 0 };
	size_t n = c->cl.halves ? c->ring / 2 : 1;
	if (c->cl.halves)
		ck_thin(c, &b);
	for (size_t l = c->lo; l < c->lo + n; l++)
		leave_ring(c, l, &b);
	c->lo += n;
	if (!c->cl.halves)
		ck_thin(c, &b);
	so_fd_batch_close(&b);
}

/* Room for `need` bytes of names (the bytes past nlen are kept: the names
 * of levels left, which a take-back or a re-descent reads). */
static int names_reserve(struct so_chain *c, size_t need)
{
	if (need <= c->ncap)
		return 0;
	size_t ncap = c->ncap * 2;
	while (ncap < need)
		ncap *= 2;
	char *n;
	if (c->names == c->cl.names) {
		n = malloc(ncap);
		if (n)
			memcpy(n, c->names, c->ncap);
	} else {
		n = realloc(c->names, ncap);
	}
	if (!n)
		return so_fail(ENOMEM);
	c->names = n;
	c->ncap = ncap;
	return 0;
}

/* cur is level depth + 1 now: fd (owned), its name ending at names[nend - 1]. */
static void enter(struct so_chain *c, int fd, unsigned int bits, size_t nend)
{
	c->depth++;
	c->nlen = nend;
	if (c->depth + 1 - c->lo > c->ring) {
		shed(c);
	} else if (!c->cl.halves && c->nck > 0) {
		/* A ring that slides thins its checkpoints at every level (under
		 * EMFILE its ring is short, and a checkpoint no longer wanted
		 * would hold a descriptor it needs); one that sheds halves
		 * thins them with its next batch. */
		struct so_fd_batch b = { .n = 0 };
		ck_thin(c, &b);
		so_fd_batch_close(&b);
	}
	struct so_chain_slot *s = slot_of(c, c->depth);
	/* Premise of a client's bits: they are the level's that holds the slot
	 * now, never an older level's that held it (depth - SO_CHAIN_RING,
	 * shed since). */
#ifndef SAFEOPEN_MUTATE_SEARCHED_BITS
	s->bits = bits;
#else
	s->bits |= bits; /* mutation (tests only): the slot's old bits stay */
#endif
	s->fd = fd;
	s->nend = nend;
	chain_check(c);
}

int so_chain_push(struct so_chain *c, int fd, const char *name, const struct so_ident *id,
		  unsigned int bits)
{
	size_t n = strlen(name);
	assert(n >= 1 && n <= NAME_MAX && !strchr(name, '/'));
	assert((id != NULL) == c->cl.ident);
	if (names_reserve(c, c->nlen + n + 1) < 0)
		goto fail;
	if (id && c->depth + 1 >= c->idcap) {
		struct so_ident *ni = realloc(c->id, 2 * c->idcap * sizeof(*ni));
		if (!ni)
			goto nomem;
		c->id = ni;
		c->idcap *= 2;
	}
	memcpy(c->names + c->nlen, name, n + 1);
	if (id)
		c->id[c->depth + 1] = *id;
	enter(c, fd, bits, c->nlen + n + 1);
	return 0;
nomem:
	errno = ENOMEM;
fail:
	so_close(fd);
	return -1;
}

/* cur's parent is cur: depth - 1, its names end where cur's begins; the
 * ring is empty unless the parent is held (a checkpoint becomes a ring
 * level). */
static void leave_cur(struct so_chain *c)
{
	c->nlen = name_start(c, c->nlen);
	c->depth--;
	if (c->lo > c->depth) {
		if (c->nck > 0 && c->ck[c->nck - 1].level == c->depth) {
			const struct so_chain_ckpt *k = &c->ck[--c->nck];
			*slot_of(c, c->depth) =
				(struct so_chain_slot){ .fd = k->fd, .bits = k->bits, .nend = k->nend };
			c->lo = c->depth;
		} else {
			c->lo = c->depth + 1;
		}
	}
}

void so_chain_pop(struct so_chain *c)
{
	assert(c->depth >= 1);
	if (c->lo <= c->depth)
		so_closep(&slot_of(c, c->depth)->fd);
	leave_cur(c);
	chain_check(c);
}

/* A level left by "..": its descriptor waits for the next batched close
 * (the retired ones and the chain at the end of a walk are mostly one run
 * of consecutive numbers: one close_range() for all). */
static void retire(struct so_chain *c, int fd)
{
	if (c->nretired == SO_CHAIN_RETIRED)
		close_retired(c);
	c->retired[c->nretired++] = fd;
}

/* Give one held descriptor back (EMFILE/ENFILE), never level 0, cur or
 * `keep`: the retired ones; the ring's shallowest while it is longer than
 * cur and its parent (the ring keeps the length it is left with); else the shallowest
 * checkpoint (fewer are kept from then on); else cur's parent. False when
 * nothing can go. */
static bool give_back(struct so_chain *c, int err, size_t keep)
{
	if (err != EMFILE && err != ENFILE)
		return false;
	if (c->nretired > 0) {
		close_retired(c);
		return true;
	}
	if (c->depth >= c->lo + 2 && c->lo != keep) {
		so_closep(&slot_of(c, c->lo++)->fd);
		c->ring = c->depth + 1 - c->lo;
		return true;
	}
	for (size_t i = 0; i < c->nck; i++) {
		if (c->ck[i].level == keep)
			continue;
		so_close(c->ck[i].fd);
		memmove(c->ck + i, c->ck + i + 1, (c->nck - i - 1) * sizeof(c->ck[0]));
		c->nck--;
		c->ckmax = c->nck;
		return true;
	}
	if (c->lo < c->depth && c->lo != keep) {
		/* Only cur and level 0 stay: no checkpoints from now on. */
		so_closep(&slot_of(c, c->lo++)->fd);
		c->ring = 2;
		c->ckmax = c->nck;
		return true;
	}
	return false;
}

bool so_chain_give_back(struct so_chain *c, int err)
{
	bool r = give_back(c, err, SIZE_MAX);
	chain_check(c);
	return r;
}

/* The client's open of one name of dfd, a held level given back for each
 * EMFILE/ENFILE (never level 0 or cur). */
static int open_level(struct so_chain *c, int dfd, const char *name, unsigned int *bits)
{
	for (;;) {
		*bits = 0;
		int fd = c->cl.open(c->cl.ctx, dfd, name, bits);
		if (fd >= 0 || !give_back(c, errno, SIZE_MAX))
			return fd;
	}
}

/*
 * ".." from cur, for a client that re-descends at once (the resolver): the
 * parent held (C2: the ring, or level 0) becomes cur without any lookup, and
 * cur is retired (so_chain_back()); else cur and the checkpoints below the
 * parent are closed with the retired ones, and the parent is reached again
 * from the deepest checkpoint above it (level 0 if none) by its recorded
 * names, one at a time by the client's open (which may also refuse a level:
 * then the chain stands where it got to). The levels reopened enter the
 * ring and the checkpoints as on the way down.
 */
int so_chain_up(struct so_chain *c, unsigned int *left_bits)
{
	assert(c->depth >= 1 && c->lo <= c->depth);
	struct so_chain_slot *s = slot_of(c, c->depth);
	assert(s->fd >= 0);
	*left_bits = s->bits;
	size_t up = c->depth - 1;
	if (up == 0 || up >= c->lo) {
		retire(c, s->fd);
		c->back = s->fd;
		c->back_bits = s->bits;
		s->fd = -1;
		leave_cur(c);
		chain_check(c);
		return 0;
	}
	assert(c->lo == c->depth);
	struct so_fd_batch b = { .n = 0 };
	batch_ring(c, c->lo, &b);
	batch_ck_from(c, up + 1, &b);
	batch_retired(c, &b);
	so_fd_batch_close(&b);
	size_t end = name_start(c, c->nlen);
	c->depth = 0;
	c->lo = 1;
	c->nlen = 0;
	if (c->nck > 0) {
		/* The deepest checkpoint: the only held level of the ring. */
		const struct so_chain_ckpt *k = &c->ck[--c->nck];
		assert(k->level <= up);
		c->depth = c->lo = k->level;
		c->nlen = k->nend;
		*slot_of(c, c->depth) =
			(struct so_chain_slot){ .fd = k->fd, .bits = k->bits, .nend = k->nend };
	}
	chain_check(c);
	while (c->depth < up) {
		const char *name = c->names + c->nlen;
		unsigned int bits;
		int fd = open_level(c, so_chain_cur(c), name, &bits);
		if (fd < 0) {
			chain_check(c);
			return -1;
		}
		enter(c, fd, bits, c->nlen + strlen(name) + 1);
	}
	assert(c->nlen == end);
	(void)end;
	return 1;
}

int so_chain_back(struct so_chain *c)
{
#ifndef SAFEOPEN_MUTATE_RETIRED_BACK
	int back = c->back;
#else /* mutation (tests only): the newest retired level, whatever retired it */
	int back = c->nretired > 0 ? c->retired[c->nretired - 1] : -1;
#endif
	c->back = -1;
	return back;
}

/*
 * "x/.." followed by "x" again (a link body like "../x/y" read in x, or a
 * path that climbs and comes back): the level ".." just left is still open
 * (retired, not yet closed), and its name is still recorded right after
 * the chain's names. When the component after the ".." is that name, the
 * client descends into the same descriptor again instead of opening the
 * name. Safe for the same reason as so_chain_up(): the level was reached
 * from level 0 by single-name lookups and held open since. Without
 * concurrent changes it is exactly what a lookup of the name in cur finds
 * (the same directory, or the root of the same mount on it); under them it
 * is what the name named when the client descended a moment earlier.
 */
bool so_chain_take_back(struct so_chain *c, int back, const char *name)
{
	/* Premise: `back` is the level the ".." right before this component
	 * left, still the newest retired descriptor (nothing retired or closed
	 * since: nothing is opened between a ".." and the next component), and
	 * its recorded name follows the chain's names. */
	if (back < 0)
		return false;
	assert(c->nretired > 0 && c->retired[c->nretired - 1] == back);
	size_t n = strlen(name);
#ifndef SAFEOPEN_MUTATE_TAKE_BACK_NAME
	if (strcmp(c->names + c->nlen, name) != 0)
		return false;
#endif
	/* The same bytes (no allocation), but under the mutation. */
	if (names_reserve(c, c->nlen + n + 1) < 0)
		return false;
	memcpy(c->names + c->nlen, name, n + 1);
	c->nretired--;
	enter(c, back, c->back_bits & c->cl.keep_bits, c->nlen + n + 1);
	return true;
}

/* Back to level 0 (an absolute symlink under IN_ROOT). The held levels (and
 * checkpoints) leave the chain for good: they join the retired ones where
 * they fit (closed with the rest, mostly by one close_range()), else they
 * are closed now. Premise: a retired descriptor is never a level again,
 * except the one the last ".." left, right after it (so_chain_take_back(),
 * which checks that it is the newest retired and the ".."'s). */
void so_chain_jump(struct so_chain *c)
{
	size_t n = (c->depth >= c->lo ? c->depth - c->lo + 1 : 0) + c->nck;
	if (c->nretired + n > SO_CHAIN_RETIRED) {
		so_chain_drop(c);
		return;
	}
	for (size_t i = 0; i < c->nck; i++)
		c->retired[c->nretired++] = c->ck[i].fd;
	c->nck = 0;
	for (size_t l = c->lo; l <= c->depth; l++) {
		c->retired[c->nretired++] = slot_of(c, l)->fd;
		slot_of(c, l)->fd = -1;
	}
	c->depth = c->nlen = 0;
	c->lo = 1;
	chain_check(c);
}

void so_chain_drop(struct so_chain *c)
{
	struct so_fd_batch b = { .n = 0 };
	if (c->depth >= c->lo)
		batch_ring(c, c->lo, &b);
	batch_ck_from(c, 0, &b);
	batch_retired(c, &b);
	so_fd_batch_close(&b);
	c->depth = c->nlen = 0;
	c->lo = 1;
	chain_check(c);
}

int so_chain_fd(const struct so_chain *c, size_t l)
{
	assert(l <= c->depth);
	if (l == 0)
		return c->top;
	if (l >= c->lo)
		return c->slot[slot(l)].fd;
	for (size_t i = 0; i < c->nck; i++)
		if (c->ck[i].level == l)
			return c->ck[i].fd;
	return -1;
}

/* Where the name of held level l ends (0 for level 0). */
static size_t nend_of(const struct so_chain *c, size_t l)
{
	if (l == 0)
		return 0;
	if (l >= c->lo)
		return c->slot[slot(l)].nend;
	for (size_t i = 0; i < c->nck; i++)
		if (c->ck[i].level == l)
			return c->ck[i].nend;
	assert(!"not a held level");
	return 0;
}

#if defined(SAFEOPEN_MUTATE_WALK_CLIMB) || defined(SAFEOPEN_MUTATE_RMTREE_CLIMB)
/* Mutation (tests only): the walk climbs by the kernel's "..", whose
 * descriptor replaces held level l's. */
void so_chain_swap_fd(struct so_chain *c, size_t l, int fd)
{
	int *held = &c->top;
	if (l >= c->lo)
		held = &slot_of(c, l)->fd;
	for (size_t i = 0; l > 0 && l < c->lo && i < c->nck; i++)
		if (c->ck[i].level == l)
			held = &c->ck[i].fd;
	assert(l == 0 || held != &c->top);
	so_close(*held);
	*held = fd;
}
#endif

const char *so_chain_name(const struct so_chain *c, size_t l, char buf[NAME_MAX + 1])
{
	assert(l >= 1 && l <= c->depth);
	size_t end = nend_of(c, l), start = name_start(c, end);
	assert(end - 1 - start <= NAME_MAX);
	memcpy(buf, c->names + start, end - start);
	return buf;
}

/* Open the level whose name ends at names[to - 1] from the directory dfd,
 * whose names end at names[from] (several names), in one openat2 beneath
 * it that follows no link: the new descriptor, or -1 with errno (ENOSYS: no
 * openat2). */
static int open_hop(const struct so_chain *c, int dfd, size_t from, size_t to)
{
	size_t n = to - 1 - from;
	char path[CHAIN_HOP_MAX];
	if (n >= sizeof(path))
		return so_fail(ENAMETOOLONG);
	memcpy(path, c->names + from, n);
	for (size_t i = 0; i < n; i++)
		if (path[i] == '\0')
			path[i] = '/';
	path[n] = '\0';
	struct safe_open_how how = {
		.flags = (uint64_t)(c->cl.oflags | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC),
		.resolve = SAFE_RESOLVE_BENEATH | SAFE_RESOLVE_NO_SYMLINKS |
			   SAFE_RESOLVE_NO_MAGICLINKS,
	};
	return so_openat2_fast(dfd, path, &how);
}

/* A re-descent under way (so_chain_hold()): levels newlo .. `base` reopened
 * for the new ring (lo is still the old ring's). */
struct hold {
	size_t newlo;
	size_t base;   /* the level the next open starts from ... */
	int basefd;    /* ... its descriptor */
	bool pending;  /* base is above the new ring and not `from`: ours */
	size_t pos;    /* where base's name ends (nend) */
	size_t t;
	bool cur_closed; /* cur given back meanwhile: reopened at the end */
};

/* Out of descriptors during a re-descent: the shallowest level reopened for
 * the new ring goes first (the new ring starts one deeper), else a held
 * level that is not the one the next open starts from. */
static bool hold_give_back(struct so_chain *c, struct hold *h, int err)
{
	if ((err == EMFILE || err == ENFILE) && h->newlo < h->base &&
	    slot_of(c, h->newlo)->fd >= 0) {
		so_closep(&slot_of(c, h->newlo++)->fd);
		return true;
	}
	if (give_back(c, err, h->base))
		return true;
	if ((err == EMFILE || err == ENFILE) && h->t < c->depth && slot_of(c, c->depth)->fd >= 0) {
		/* Last resort (nothing else to give: the table full at the
		 * first level of the new ring, or a hop longer than PATH_MAX
		 * with 5 free descriptors): cur too, opened again from t at
		 * the end. */
		so_closep(&slot_of(c, c->depth)->fd);
		h->cur_closed = true;
		return true;
	}
	return false;
}

/* The deepest level in (at, want] whose names (from names[pos]) fit one
 * hop: *next, its names ending at names[*npos - 1]. */
static void hop_end(const struct so_chain *c, size_t at, size_t pos, size_t want, size_t *next,
		    size_t *npos)
{
	size_t l = at, p = pos;
	do {
		size_t e = p + strlen(c->names + p) + 1;
		if (l > at && e - 1 - pos >= CHAIN_HOP_MAX)
			break;
		l++;
		p = e;
	} while (l < want);
	*next = l;
	*npos = p;
}

/*
 * Reopen level `to` (levels h->base + 1 .. to are not held) from h->base
 * into *fd, its name ending at names[*nend - 1], checking its identity;
 * levels skipped are opened in hops of names (openat2), or one at a time
 * (held only until the next is open). 0, or -1 with errno (EAGAIN: a name
 * no longer leads to the level walked).
 */
static int reach(struct so_chain *c, struct hold *h, size_t to, bool hops, int *fd, size_t *nend)
{
	size_t at = h->base, pos = h->pos;
	int tmp = -1; /* level `at` when it is not h->base: ours, not held */
	*fd = -1;
	while (at < to) {
		size_t next = at + 1, npos = pos + strlen(c->names + pos) + 1;
		if (hops)
			hop_end(c, at, pos, to, &next, &npos);
		int f;
		for (;;) {
			int dfd = at == h->base ? h->basefd : tmp;
			if (next == at + 1) {
				unsigned int bits = 0;
				f = c->cl.open(c->cl.ctx, dfd, c->names + pos, &bits);
			} else {
				f = open_hop(c, dfd, pos, npos);
			}
			if (f >= 0 || !hold_give_back(c, h, errno))
				break;
		}
		if (f < 0 && errno == ENOSYS && next > at + 1) {
			hops = false; /* no openat2 after all */
			continue;
		}
		if (f >= 0 && c->cl.ident) {
			struct so_ident id;
			if (so_inode_at(f, NULL, &id) < 0) {
				so_closep(&f);
#ifndef SAFEOPEN_MUTATE_CHAIN_IDENTITY
			} else if (!so_same_inode(&id, &c->id[next])) {
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
		pos = npos;
	}
	*fd = tmp;
	*nend = pos;
	return 0;
}

/*
 * Make level t held again (it is cur's parent, or cur after a failed
 * re-descent), for a client that goes up by so_chain_pop() (the walk): from
 * the deepest held level above it, reopen the levels of the new ring down to
 * t and, on the way, the checkpoints ck_keep() wants; with openat2 the
 * levels between are skipped in hops (safety argument at the top). 0, or -1
 * with errno and *failed the shallowest level given up (its listing and
 * those below it end with that error).
 */
int so_chain_hold(struct so_chain *c, size_t t, size_t *failed)
{
	assert(t <= c->depth);
	if (so_chain_fd(c, t) >= 0)
		return 0;
	assert(t >= 1 && t < c->lo && t + 2 >= c->lo);
	/* The deepest held level above t: the last checkpoint (all are above
	 * the ring, so above t), else level 0. */
	size_t from = c->nck > 0 ? c->ck[c->nck - 1].level : 0;
	assert(from < t && so_chain_fd(c, from) >= 0);
	struct hold h = { .t = t };
	/* The new ring: newlo .. depth, at most `ring` levels (their slots are
	 * none of the old ring's, which is deeper). */
	h.newlo = c->depth + 1 > c->ring ? c->depth + 1 - c->ring : 1;
	if (h.newlo <= from)
		h.newlo = from + 1;
	if (h.newlo > t)
		h.newlo = t;
	size_t newlo0 = h.newlo;
	for (size_t l = h.newlo; l <= t; l++)
		slot_of(c, l)->fd = -1;
	bool hops = so_have_openat2();
	bool retried = false;
again:
	h.base = from;
	h.basefd = so_chain_fd(c, from);
	h.pending = false;
	h.pos = nend_of(c, from);
	for (size_t l = from + 1; l <= t; l++) {
		bool ring = l >= h.newlo;
		/* Opened one by one without openat2; with it, only the ones to
		 * be held (the ring, the checkpoints wanted here while
		 * descriptors have not run short). */
		bool ck = !ring && ck_keep(c, l) && c->nck < c->ckmax && c->ring == SO_CHAIN_RING;
		if (hops && !ring && !ck)
			continue;
		int fd;
		size_t nend;
		if (reach(c, &h, l, hops, &fd, &nend) < 0) {
			int err = errno;
			size_t at = h.base + 1;
			/* Back to the chain as it was: the levels reopened below
			 * `from` are given back. */
			if (h.pending)
				so_close(h.basefd);
			for (size_t j = newlo0; j < l; j++)
				so_closep(&slot_of(c, j)->fd);
			while (c->nck > 0 && c->ck[c->nck - 1].level > from)
				so_close(c->ck[--c->nck].fd);
			if ((err == EMFILE || err == ENFILE) && !retried && c->ckmax > c->nck) {
				/* The checkpoints wanted on the way took the
				 * descriptors: once more without them. */
				retried = true;
				c->ckmax = c->nck;
				goto again;
			}
			*failed = at;
			chain_check(c);
			return so_fail(err);
		}
		if (ring)
			*slot_of(c, l) = (struct so_chain_slot){ .fd = fd, .nend = nend };
		if (c->cl.reopened)
			c->cl.reopened(c->cl.ctx, l);
		/* The previous one opened, if above the new ring and not
		 * `from`: a checkpoint, or closed. */
		if (h.pending) {
			if (ck_keep(c, h.base) && c->nck < c->ckmax)
				c->ck[c->nck++] = (struct so_chain_ckpt){ .level = h.base,
									  .nend = h.pos,
									  .fd = h.basefd };
			else
				so_close(h.basefd);
		}
		h.base = l;
		h.basefd = fd;
		h.pending = !ring;
		h.pos = nend;
	}
	assert(!h.pending);
	/* Levels given back while reopening (EMFILE) shortened the new ring. */
	while (h.newlo < t && slot_of(c, h.newlo)->fd < 0)
		h.newlo++;
	if (c->lo > c->depth && t < c->depth) {
		/* cur (not held: its re-descent failed) joins the new ring. */
		*slot_of(c, c->depth) = (struct so_chain_slot){ .fd = -1, .nend = c->nlen };
	}
	c->lo = h.newlo;
	if (h.cur_closed) {
		/* cur = t + 1, from t, checked as every level reopened. */
		h.base = t;
		h.basefd = slot_of(c, t)->fd;
		h.pos = slot_of(c, t)->nend;
		int fd;
		size_t nend;
		int r = reach(c, &h, c->depth, false, &fd, &nend);
		/* An EMFILE in that reopen gave back the new ring's shallowest
		 * levels: hold_give_back() moved h.newlo, give_back() c->lo.
		 * The ring starts at the deeper of the two (C2). */
		if (h.newlo > c->lo)
			c->lo = h.newlo;
		if (r < 0) {
			*failed = c->depth;
			chain_check(c);
			return -1;
		}
		assert(nend == c->nlen);
		slot_of(c, c->depth)->fd = fd;
		if (c->cl.reopened)
			c->cl.reopened(c->cl.ctx, c->depth);
	}
	chain_check(c);
	return 0;
}
