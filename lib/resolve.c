/* SPDX-License-Identifier: MIT */
/*
 * The userspace walker: openat2(2) RESOLVE_BENEATH / RESOLVE_IN_ROOT semantics
 * rebuilt from single-name opens (openat, or openat2 where it exists),
 * readlinkat, fstatfs/statx where a link or NO_XDEV needs them, and one final
 * open of a single name with the caller's flags.
 *
 * Safety argument (the full one, with the costs: doc/design.md, "The
 * resolver"; this is its summary at the code).
 *
 * Invariant: the walk stands in a directory `cur` at level `depth` of a chain
 * root = level 0 -> level 1 -> ... -> level depth, in which every level was
 * reached from the one before it by opening a single name, and nothing else
 * (no ".." of the kernel, no path with '/'). The chain is lib/chain.c's
 * (struct so_chain, whose invariants are stated and asserted there): it
 * remembers the name of every level and holds O_PATH descriptors of some of
 * them: a ring of up to SO_CHAIN_RING (32) consecutive levels ending at cur
 * (the older half is given back when it is full), and up to SO_CHAIN_CKPT
 * (24) checkpoints above the ring, spaced more widely the farther they are
 * from cur.
 *
 *  1. Descending: a single name (never containing '/') is opened relative to
 *     cur with O_PATH|O_NOFOLLOW. Whatever the name is at that instant, the
 *     object is a child of cur (or the root of a mount on that child), so it
 *     is beneath whenever cur is. Symlinks are never followed by the kernel:
 *     the walker reads the body and splices it in front of the rest of the
 *     path, so a body is resolved with exactly the same rules as the path
 *     (an absolute body is EXDEV under BENEATH and restarts at the root under
 *     IN_ROOT; its ".." are checked).
 *  2. Climbing: ".." at depth 0 is EXDEV (BENEATH, and IN_ROOT with
 *     REPORT_ESCAPE) or a no-op (IN_ROOT) and touches nothing above the
 *     root. At depth d > 0 the kernel's ".." is
 *     never used: the walk goes back to level d-1 of its own chain, through
 *     the descriptor it holds for it or, whenever level d-1 is not held, by
 *     descending again by the recorded names from the deepest checkpoint
 *     above it (the root if none): so_chain_up(). A held level or checkpoint
 *     was reached from the root by single-name lookups and held open since,
 *     so ".." always lands on a directory reached that way; no identity is
 *     compared, so no inode number can be reused against it (an identity
 *     check by (st_dev, st_ino) of a directory not held open was defeated
 *     that way: rmdir + mkdir elsewhere). Without concurrent changes level
 *     d-1 is exactly the kernel's ".." of cur; under them the walk may use
 *     the level it came from where openat2 would see cur's new parent, an
 *     answer the walk could have got a moment earlier. The level a ".." left
 *     is itself taken back when the next component is its name again
 *     ("x/../x"), by the same argument (so_chain_take_back()).
 *
 * Links are judged by their own mount, as the kernel's pick_link() does:
 * on a nosymfollow mount no link is followed (ELOOP); a procfs link that the
 * heuristic of proc_link_magic() calls magic (inode number below procfs'
 * static entries, or a body that names an object) is refused (ELOOP with
 * NO_MAGICLINKS, else EXDEV); NO_XDEV counts the crossing into a link
 * that is a mount point. fstatfs() of cur learns its mount's facts once per
 * mount (cur_fs(): kept while the walk descends without crossing a mount,
 * which openat2's RESOLVE_NO_XDEV reports; without openat2 every descent
 * counts as a crossing; there the facts are also kept by the mount id statx
 * reports for a link, never by its device). A link is read by name
 * (readlinkat(cur, name)) and judged by cur's facts only when it is shown not
 * to be a mount point (link_on_cur_mount()); otherwise its own O_PATH
 * descriptor is opened and fstatfs()'d (the careful way, follow_link()).
 *
 * NO_XDEV: every object the walk visits must carry the root's mount id
 * (statx STATX_MNT_ID, else name_to_handle_at or procfs fdinfo: ident.c's
 * so_info_of()), which catches bind mounts on the same filesystem and mounts
 * crossed by ".."; where no mount id can be learnt the object is on another
 * mount (so_other_mount(): fail closed).
 *
 * The final component is opened with the caller's real flags by one call on
 * a single name relative to the verified parent that never follows a
 * symlink (openat2 RESOLVE_NO_SYMLINKS where it exists, else O_NOFOLLOW):
 * the object it touches (truncates, creates, opens as a FIFO/device) is a
 * child of a directory known to be beneath. If that open reports a symlink
 * (ELOOP, or ENOTDIR with O_DIRECTORY) and the link is to be followed, its
 * body is read by name (trailing_by_name(): not in a sticky world-writable
 * directory, where the link's owner decides, and not for a link that may be
 * a mount point), or through its own O_PATH descriptor, and spliced in.
 * With NO_XDEV the name is checked O_PATH first, so the real open never
 * crosses a mount that was there before it.
 *
 * The walker holds at most WALK_FDS + 5 (SO_RESOLVE_MAX_FDS) descriptors of
 * its own whatever the depth (the ring, cur among them; the checkpoints; up
 * to SO_CHAIN_RETIRED levels left by ".." or by an IN_ROOT jump that wait to
 * be closed in one batch; the pinned cwd for AT_FDCWD; at most WALK_LAST_FDS
 * = four while examining the last component), all O_CLOEXEC, closed on every
 * path. Under EMFILE/ENFILE the chain gives back the retired ones, then its
 * ring down to cur and its parent, its checkpoints, cur's parent, and the
 * open is retried, so it still works with 3 free descriptors. Its cost is
 * linear in the components walked, link bodies included: a ".." onto a
 * level that is not held re-descends from a checkpoint, each level being
 * opened O(log4 depth) times in all (design.md, "The cost of '..'"). It
 * allocates no memory for a path within PATH_MAX with link bodies that fit
 * next to it (8 KiB) and level names within PATH_MAX bytes; beyond that it
 * grows heap buffers rather than fail.
 */
#include "internal.h"

#include <assert.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/fsuid.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <stdatomic.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>

#ifndef ST_NOSYMFOLLOW
#define ST_NOSYMFOLLOW 0x2000
#endif
#ifndef STATX_MNT_ID
#define STATX_MNT_ID 0x1000U
#endif
#ifndef STATX_ATTR_MOUNT_ROOT
#define STATX_ATTR_MOUNT_ROOT 0x2000
#endif

/* procfs allocates the inode numbers of its static entries (proc_dir_entry:
 * /proc/self, /proc/thread-self, proc_symlink() links such as /proc/mounts)
 * from PROC_DYNAMIC_FIRST up; per-process entries (where every magic link
 * lives) get numbers from get_next_ino(), a 32-bit counter shared with every
 * pipe and socket, which is below it until that counter gets there. */
#define SO_PROC_DYNAMIC_FIRST 0xF0000000ULL

/*
 * Is the procfs link `in`, whose body is body[0..n), a magic link? A
 * heuristic (design.md, "Magic links"): the kernel marks magic links by how
 * their ->get_link() jumps, which userspace cannot see. Magic when EITHER
 *  - its inode number is below SO_PROC_DYNAMIC_FIRST (every static procfs
 *    link is numbered above; a per-process entry is above only while the
 *    shared get_next_ino() counter is, for ~268M allocations after each
 *    2^32), OR
 *  - its body is what the kernel prints for an object rather than a name:
 *    absolute (d_path() of a file, "/... (deleted)", "/memfd:..."), the
 *    "name:[...]" shape ("pipe:[N]", "socket:[N]", "net:[N]", the ns links)
 *    or "anon_inode:..." (some of which have no brackets).
 * Either test alone is enough to refuse a link, so a per-process link with a
 * high inode number is still refused by its body, and fails closed.
 * Known differences, from the body test: a static procfs link with an
 * absolute body (/proc/fs/xfs/stat -> /sys/fs/xfs/stats/stats while XFS is
 * loaded) is refused as magic where the kernel follows it as a plain link
 * (under IN_ROOT; ELOOP instead of EXDEV under BENEATH|NO_MAGICLINKS).
 * SAFEOPEN_TEST_PROC_INO_HIGH=1 (so_test_hook()) makes every procfs inode
 * look high, so that the tests run the body test alone.
 */
static bool proc_link_magic(const struct so_info *in, const char *body, size_t n)
{
	if (in->id.ino < SO_PROC_DYNAMIC_FIRST && !so_test_hook("SAFEOPEN_TEST_PROC_INO_HIGH"))
		return true;
#ifndef SAFEOPEN_MUTATE_MAGICLINK_BODY
	if (n > 0 && body[0] == '/')
		return true;
	static const char anon[] = "anon_inode:";
	if (n >= sizeof(anon) - 1 && memcmp(body, anon, sizeof(anon) - 1) == 0)
		return true;
	/* name:[...]: a name without '/', then ":[", then "]" at the end. */
	const char *colon = memchr(body, ':', n);
	if (colon && colon > body && !memchr(body, '/', (size_t)(colon - body)) &&
	    (size_t)(colon - body) + 2 < n && colon[1] == '[' && body[n - 1] == ']')
		return true;
#else
	(void)body;
	(void)n;
#endif
	return false;
}

/* Every descriptor the walker's chain (lib/chain.c) may hold at once: the
 * ring, the checkpoints, the levels retired by ".." or an IN_ROOT jump (level
 * 0 is the caller's, lent). chain.c asserts that one batch closes them all. */
#define WALK_FDS (SO_CHAIN_RING + SO_CHAIN_CKPT + SO_CHAIN_RETIRED)
/* Besides the chain and the pinned cwd, while the last component is examined
 * (final_name()): two descriptors of the last name at once (the O_PATH look
 * NO_XDEV takes, held while the real open or the link is opened) and the two
 * that a helper holds at once meanwhile: reading a mount id from the procfs
 * fdinfo entry (so_info_of(), where neither statx nor a file handle reports
 * it: before 5.8, on a filesystem without file handles), or reading
 * fs.protected_symlinks (may_follow_trailing()). */
#define WALK_LAST_FDS 4
/* With the pinned cwd: the walker's documented bound. */
_Static_assert(WALK_FDS + 1 + WALK_LAST_FDS == SO_RESOLVE_MAX_FDS, "the walker's descriptor bound");
#define WALK_NAMES ((size_t)PATH_MAX)
/* The path buffer to start with: the caller's path (under PATH_MAX bytes)
 * and a link body (under PATH_MAX: the kernel's limit on a symlink's body)
 * read in front of it. */
#define WALK_BUF ((size_t)2 * PATH_MAX)
/* The most the remaining path in buf can hold: the caller's path with
 * SO_MAXSYMLINKS link bodies spliced in, each under PATH_MAX bytes; and what
 * grow_buf() may be asked to fit besides it: a body read in front of it and
 * PATH_MAX more (follow_link(): a read is only cut short when the free space
 * in front is smaller than the body). */
#define WALK_PATH_MOST ((size_t)PATH_MAX * (SO_MAXSYMLINKS + 1))
#define WALK_GROW_MOST (WALK_PATH_MOST + 2 * (size_t)PATH_MAX + 1)
/* grow_buf() doubles buf from WALK_BUF; the fifth doubling (64 * PATH_MAX)
 * is the first that holds WALK_GROW_MOST, so no resolution the kernel would
 * do needs more. Beyond it (only a body longer than any symlink can have):
 * ENAMETOOLONG. */
#define WALK_BUF_DOUBLINGS 5
#define WALK_BUF_MAX (WALK_BUF << WALK_BUF_DOUBLINGS)
_Static_assert(WALK_BUF_MAX >= WALK_GROW_MOST && WALK_BUF_MAX / 2 < WALK_GROW_MOST,
	       "grow_buf()'s bound: the first doubling of WALK_BUF that holds the longest path");

/* Where a name of cur is, as far as a lookup showed it (link_on_cur_mount()). */
enum mnt_rel {
	REL_UNKNOWN, /* no openat2 to tell */
	REL_SAME,    /* on cur's mount: not a mount point */
	REL_CROSS,   /* a mount point: the object is on another mount */
};

/* What a step of the walk returns: a descriptor (>= 0), or one of these. */
enum walk_code {
	WALK_FAIL = -1,     /* failed: errno says why */
	WALK_RACE = -2,     /* the tree changed under the step: walk again (bounded) */
	WALK_CONTINUE = -3, /* a trailing symlink was spliced in: walk on */
};

/* One component of the remaining path buf[pos..]: where it lies there, and a
 * NUL-terminated copy for the system calls that look it up. The path itself
 * is never written to (a link body is spliced in front of a name while the
 * name is still in use). A name longer than NAME_MAX is not copied (name is
 * ""): name_too_long() asks the kernel's answer to it. */
struct comp {
	size_t start; /* the name is buf[start..end) */
	size_t end;
	size_t len;
	bool last;  /* nothing but slashes follows */
	bool slash; /* last, and slashes follow: it must be a directory */
	char name[NAME_MAX + 1];
};

struct walk {
	int oflags;        /* validated open flags */
	mode_t mode;
	uint64_t resolve;
	bool xdev;         /* SAFE_RESOLVE_NO_XDEV */
	struct so_ident root_id; /* the root's identity and mount, with xdev */

	/* The chain root = level 0 -> ... -> level depth = cur (lib/chain.c:
	 * levels by their names, a ring, checkpoints, retired levels). */
	struct so_chain ch;
	/* What fstatfs() said about cur's mount (FS_*), or 0: not known. A
	 * descent that stays on the mount keeps it, ".." keeps it unless the
	 * level it leaves was entered across a mount (cur_fs()). */
	unsigned int fs;
	/* The facts (FS_*, or 0) of the mount with id mfs_mnt (mfs_dev: its
	 * device, only for a mutation switch), kept for the whole call: cur_fs(). */
	unsigned int mfs;
	uint64_t mfs_mnt;
	dev_t mfs_dev;
	int links;         /* symlinks followed so far */
	/* chain_open() could not learn a reopened level's mount (its errno is
	 * the answer, not a race): set for step_dotdot(). */
	bool open_failed;
	/* SAFE_RESOLVE_SYMLINKS_OWNER_MATCH: the links followed whose body the
	 * walk has not yet resolved, innermost last: each link's owner, and the
	 * length of the path after its body, counted from the end of buf (which
	 * grow_buf() keeps), so owed[].tail never decreases (owner_settle()). */
	struct owed {
		uid_t uid;
		size_t tail;
	} owed[SO_MAXSYMLINKS];
	size_t nowed;
	/* The final component the walk opened (in buf), or none (0): the walk
	 * opened cur itself. */
	const char *last;
	size_t last_len;

	char *buf; /* the remaining path lives in buf[pos..cap-1], NUL at cap-1 */
	size_t cap;
	size_t pos;

	char names_local[WALK_NAMES]; /* the chain's first storage for names */
	char buf_local[WALK_BUF];
	struct so_diag_walk diag; /* only while diag.on: where it stopped (diag.c) */
};

/* The walk runs to confirm a kernel ELOOP (SO_RESOLVE_KERNEL_ELOOP) and has
 * followed too few links for the kernel to have counted them more than
 * SO_MAXSYMLINKS times: the kernel's ELOOP is the answer. Asked before
 * every final open, so nothing the kernel refused is opened or created. */
static bool kernel_eloop_stands(const struct walk *w)
{
	return (w->resolve & SO_RESOLVE_KERNEL_ELOOP) && w->links <= SO_ELOOP_TRUSTED;
}

/* Identity, type and owner of fd; with NO_XDEV its mount id too (one
 * identity, one "no mount id" policy: ident.c). */
static int get_info(const struct walk *w, int fd, struct so_info *in)
{
	return so_info_of(fd, w->xdev, in);
}

/* Is the object (identity id, from get_info()) on another mount than the
 * root? Fail closed: without a mount id on both sides it is (so_other_mount()). */
static bool off_root_mount(const struct walk *w, const struct so_ident *id)
{
	return so_other_mount(&w->root_id, id);
}

/* ------------------------------------------------------------ the held chain */

/*
 * The walk's chain is lib/chain.c's (struct so_chain: its invariants C1-C6
 * are stated there and asserted after every change): level 0 is the root
 * (the caller's descriptor, lent), the levels are O_PATH descriptors reached
 * by single names, the ring sheds its older half at once, ".." is
 * so_chain_up() (the level left is retired and taken back by "x/../x"), and
 * an IN_ROOT jump is so_chain_jump(). Its premise instead of identities:
 * every level was reached from a held level by opening one name that is
 * not followed if it is a link (open_child(), chain_open()), so whatever
 * the name was at that moment, the level is beneath; the chain compares
 * nothing it recorded earlier, so no inode number can be reused against it.
 * cur is always held (chain.c C1: the walker goes up by so_chain_up()).
 * The walker's bits of a level (so_chain_bits()):
 */
#define LV_CROSSED 1U  /* entered across a mount boundary, or without knowing (no openat2) */
#define LV_SEARCHED 2U /* a name was looked up in it: the kernel's search check passed */

static int cur(const struct walk *w)
{
	int fd = so_chain_cur(&w->ch);
	assert(fd >= 0 || so_chain_depth(&w->ch) == 0);
	return fd;
}

static size_t w_depth(const struct walk *w)
{
	return so_chain_depth(&w->ch);
}

/* Every level closed; the walk stands at the root again, whose mount facts
 * are not known. */
static void drop_chain(struct walk *w)
{
	so_chain_drop(&w->ch);
	w->fs = 0;
}

/* An absolute symlink under IN_ROOT: back to the root (the held levels are
 * retired: so_chain_jump()). */
static void jump_root(struct walk *w)
{
	so_chain_jump(&w->ch);
	w->fs = 0;
}

/* Descriptor pressure (EMFILE/ENFILE): the chain gives back what costs
 * least (so_chain_give_back(): the retired levels, then the ring down to cur
 * and its parent, the checkpoints, cur's parent). Never cur. */
static bool make_room(struct walk *w, int err)
{
	return so_chain_give_back(&w->ch, err);
}

/* openat() relative to a level of the walk, making room under EMFILE. */
static int walk_openat(struct walk *w, int dfd, const char *name, int flags, mode_t mode)
{
	for (;;) {
		int fd = openat(dfd, name, flags | O_CLOEXEC, mode);
		if (fd >= 0 || !make_room(w, errno))
			return fd;
	}
}

#ifndef NDEBUG
/* Is the name of cur a mount point, as far as statx tells (5.8+; false
 * where it cannot)? For an assertion only: keeps errno. */
static bool name_is_mount_root(int dfd, const char *name)
{
	int saved = errno;
	struct statx stx;
	bool root = so_statx_at(dfd, name, STATX_TYPE, &stx) == 0 &&
		    (stx.stx_attributes_mask & STATX_ATTR_MOUNT_ROOT) &&
		    (stx.stx_attributes & STATX_ATTR_MOUNT_ROOT);
	errno = saved;
	return root;
}
#endif

/*
 * Open the single name `name` of cur as a directory for the descent
 * (O_PATH|O_NOFOLLOW|O_DIRECTORY). Where openat2 exists, RESOLVE_NO_XDEV
 * also tells where the name is (*rel): on cur's mount (the open succeeded,
 * or failed with ENOTDIR), or a mount point (EXDEV: then opened across the
 * mount). Without openat2 it is not known (REL_UNKNOWN).
 */
static int open_child(struct walk *w, int dfd, const char *name, enum mnt_rel *rel)
{
	*rel = REL_UNKNOWN;
	if (so_have_openat2()) {
		static const struct safe_open_how how = {
			.flags = O_PATH | O_NOFOLLOW | O_DIRECTORY,
			.resolve = SAFE_RESOLVE_NO_XDEV,
		};
		int fd;
		do
			fd = so_openat2_fast(dfd, name, &how);
		while (fd < 0 && make_room(w, errno));
		if (fd >= 0 || errno == ENOTDIR) {
			/* ENOTDIR means "on cur's mount" too (middle_nondir() then
			 * reads a link by name and judges it by cur's mount facts).
			 * Premise: the lookup steps onto whatever is mounted on the
			 * name (RESOLVE_NO_XDEV: refused with EXDEV) before the
			 * O_DIRECTORY check looks at the type of what it reached, so
			 * ENOTDIR comes only for a name that is no mount point; and
			 * nothing is mounted on it before the name is read (mounting
			 * is outside the threat model, as for link_on_cur_mount()). */
			assert(fd >= 0 || !name_is_mount_root(dfd, name));
			*rel = REL_SAME;
			return fd;
		}
		if (errno == EXDEV)
			*rel = REL_CROSS;
		else if (errno != ENOSYS)
			return -1;
	}
	int fd = walk_openat(w, dfd, name, O_PATH | O_NOFOLLOW | O_DIRECTORY, 0);
#ifdef SAFEOPEN_MUTATE_ENOTDIR_MOUNT
	if (fd < 0 && errno == ENOTDIR)
		*rel = REL_SAME; /* mutation (tests only): any ENOTDIR taken as cur's mount */
#endif
	return fd;
}

/* The mount a link read by name was shown to be on (link_on_cur_mount()):
 * cur's, and, where statx reports it (5.8+), its mount id (the key of the
 * facts kept per mount, cur_fs()). */
struct link_mount {
	struct so_ident id; /* have_mnt: the mount id is known */
};

/*
 * May a symlink `name` of cur, read by name, be judged by cur's mount facts?
 * The kernel judges a link by its own mount (pick_link(): nosymfollow, and
 * procfs for magic links; NO_XDEV counts the crossing into it), and a symlink
 * can itself be a mount point (open_tree() + move_mount(), 5.2+), so only a
 * name shown to be on cur's mount may: by openat2's RESOLVE_NO_XDEV (*rel
 * from the lookup that found the link), else by statx's STATX_ATTR_MOUNT_ROOT
 * (5.8+), which also gives the link's mount id (*lm: the key under which
 * cur_fs() keeps the facts). Anything not shown (older kernels, a failing
 * statx) is false: the careful way opens the link itself and reads its own
 * mount's facts. Premise: nothing is mounted or unmounted on the name
 * between that answer and the read (mounting is outside the threat model,
 * design.md).
 */
static bool link_on_cur_mount(const struct walk *w, const char *name, enum mnt_rel rel,
			      struct link_mount *lm)
{
	lm->id.have_mnt = false;
#ifdef SAFEOPEN_MUTATE_LINK_OWN_MOUNT
	return true; /* mutation (tests only): a link is judged by its parent's mount */
#endif
	if (rel != REL_UNKNOWN)
		return rel == REL_SAME;
	struct statx stx;
	if (so_statx_at(cur(w), name, STATX_TYPE | STATX_MNT_ID, &stx) < 0)
		return false;
	if (!(stx.stx_attributes_mask & STATX_ATTR_MOUNT_ROOT) ||
	    (stx.stx_attributes & STATX_ATTR_MOUNT_ROOT))
		return false;
	lm->id = so_statx_ident(&stx);
	return true;
}

/* The fstatfs() facts about cur's mount that the walk needs. */
#define FS_KNOWN 1U
#define FS_PROC 2U        /* procfs: magic links live there */
#define FS_NOSYMFOLLOW 4U /* mounted nosymfollow: no link is followed */

/* Is `key` the mount whose facts the walk keeps (w->mfs)? By mount id only:
 * a bind mount shares its source's device and may be nosymfollow where the
 * source is not, so a device number never names a mount. */
static bool mfs_for(const struct walk *w, const struct so_ident *key)
{
	if (!(w->mfs & FS_KNOWN) || !key->have_mnt)
		return false;
#ifdef SAFEOPEN_MUTATE_FACTS_BY_DEV
	return w->mfs_dev == key->dev; /* mutation (tests only): facts per device */
#endif
	return w->mfs_mnt == key->mnt;
}

/* The facts the walk needs from an fstatfs() answer. */
static unsigned int fs_facts(const struct statfs *sfs)
{
	return FS_KNOWN | (sfs->f_type == PROC_SUPER_MAGIC ? FS_PROC : 0) |
	       ((sfs->f_flags & ST_NOSYMFOLLOW) ? FS_NOSYMFOLLOW : 0);
}

/* Keep `facts` as those of the mount `id` (w->mfs), if its id is known. */
static void mfs_keep(struct walk *w, const struct so_ident *id, unsigned int facts)
{
	if (!id->have_mnt)
		return;
	w->mfs = facts;
	w->mfs_mnt = id->mnt;
	w->mfs_dev = id->dev;
}

#ifndef NDEBUG
/* Are `facts` those of fd's mount now (or can fstatfs not tell)? For an
 * assertion only. */
static bool facts_hold(int fd, unsigned int facts)
{
	int saved = errno;
	struct statfs sfs;
	bool ok = fstatfs(fd, &sfs) < 0 || fs_facts(&sfs) == facts;
	errno = saved;
	return ok;
}
#endif

/*
 * cur's mount facts, learnt once per mount. Two caches, each with its
 * premise. w->fs is cur's: cleared whenever cur may be on another mount than
 * the one it was learnt on (entered(): a crossing or an unknown descent,
 * a ".." out of a level entered that way, every re-descent and jump).
 * w->mfs is one mount's, by mount id (lm, from link_on_cur_mount(): a link on
 * cur's mount whose mount id statx reported): where the walk cannot tell a
 * crossing (no openat2) a link in a new directory on the same mount costs no
 * fstatfs. Premise: a mount id names one mount while it is mounted, and
 * nothing is mounted, unmounted or remounted during the call (outside the
 * threat model, as for w->fs); a link whose mount id is not known is never
 * judged by it (fail closed: fstatfs of cur, shown to be the link's mount).
 */
static int cur_fs(struct walk *w, const struct link_mount *lm, unsigned int *fs)
{
	if (!(w->fs & FS_KNOWN) && lm && mfs_for(w, &lm->id)) {
		assert(lm->id.have_mnt && (w->mfs & FS_KNOWN));
		w->fs = w->mfs;
	}
	if (!(w->fs & FS_KNOWN)) {
		struct statfs sfs;
		if (fstatfs(cur(w), &sfs) < 0)
			return -1;
		w->fs = fs_facts(&sfs);
		if (lm)
			mfs_keep(w, &lm->id, w->fs);
	}
	*fs = w->fs;
	return 0;
}

static void mark_searched(struct walk *w)
{
	if (w_depth(w) > 0)
		*so_chain_bits(&w->ch) |= LV_SEARCHED;
}

static bool is_searched(struct walk *w)
{
	return w_depth(w) > 0 && (*so_chain_bits(&w->ch) & LV_SEARCHED);
}

/* The bits of a level cur is about to enter (down, or again), `same`: on
 * cur's mount. One entered across a mount (or not knowing) makes cur's
 * mount facts unknown. */
static unsigned int entered(struct walk *w, bool same)
{
#ifdef SAFEOPEN_MUTATE_LINK_FACTS
	same = true; /* mutation (tests only): a mount crossed keeps cur's link facts */
#endif
	if (same)
		return 0;
	w->fs = 0;
	return LV_CROSSED;
}

/*
 * The chain's open of a level it reaches again (so_chain_up(): ".." onto a
 * level no longer held, re-descended from the deepest checkpoint above it,
 * else the root, by the recorded names): exactly the first descent's, a
 * single name opened O_PATH|O_NOFOLLOW|O_DIRECTORY in the level before it
 * (open_child()), and under NO_XDEV on the root's mount. A name that no
 * longer leads to a directory (or leaves the root's mount) means the tree
 * changed: the caller of so_chain_up() takes it for a race.
 */
static int chain_open(void *ctx, int dfd, const char *name, unsigned int *bits)
{
	struct walk *w = ctx;
	enum mnt_rel rel;
	mark_searched(w); /* dfd is cur: a name is looked up in it */
	int fd = open_child(w, dfd, name, &rel);
	if (fd < 0)
		return -1;
	if (w->xdev) {
		struct so_info in;
		if (get_info(w, fd, &in) < 0) {
			w->open_failed = true;
			so_close(fd);
			return -1;
		}
		if (off_root_mount(w, &in.id)) {
			so_close(fd);
			return so_fail(EXDEV);
		}
	}
	*bits = entered(w, rel == REL_SAME);
	return fd;
}

/* Make room for at least `need` bytes in front of the remaining path (which
 * keeps its position relative to the end). Returns how far offsets moved. */
static ssize_t grow_buf(struct walk *w, size_t need)
{
	size_t used = w->cap - w->pos;
	size_t ncap = w->cap * 2;
	while (ncap < used + need + 1)
		ncap *= 2;
	if (ncap > WALK_BUF_MAX) {
		errno = ENAMETOOLONG;
		return -1;
	}
	char *n = malloc(ncap);
	if (!n) {
		errno = ENOMEM;
		return -1;
	}
	memcpy(n + ncap - used, w->buf + w->pos, used);
	if (w->buf != w->buf_local)
		free(w->buf);
	size_t shift = ncap - w->cap;
	w->buf = n;
	w->cap = ncap;
	w->pos += shift;
	return (ssize_t)shift;
}

/*
 * fs.protected_symlinks, read when it matters (rarely) from the verified
 * procfs (so_procfs_dir(): a /proc or /proc/sys/fs that is not procfs' own,
 * or is another mount, is not read). 1 on, 0 off, -1 with a resource errno
 * (EMFILE, ENFILE, ENOMEM: passed on, never guessed). Where it cannot be
 * read (no verified procfs, no such entry, /proc/sys a mount of its own as
 * in some containers): on, the answer that follows fewer links (fail closed).
 */
static int protected_symlinks(void)
{
	_cleanup_fd_ int dir = so_procfs_dir("sys/fs");
	if (dir < 0)
		return so_resource_errno(errno) ? -1 : 1;
	_cleanup_fd_ int fd = openat(dir, "protected_symlinks", O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return so_resource_errno(errno) ? -1 : 1;
	char c;
	if (read(fd, &c, 1) != 1)
		return 1;
	return c != '0';
}

/* Is cur sticky and world-writable (where fs.protected_symlinks applies)?
 * 1 yes, 0 no, -1 with errno; *owner (if not NULL) is its owner. */
static int cur_sticky_public(const struct walk *w, uid_t *owner)
{
	struct stat dst;
	if (fstatat(cur(w), "", &dst, AT_EMPTY_PATH) < 0)
		return -1;
	if (owner)
		*owner = dst.st_uid;
	return (dst.st_mode & (S_ISVTX | S_IWOTH)) == (S_ISVTX | S_IWOTH);
}

/*
 * The kernel's may_follow_link() for a trailing symlink: with
 * fs.protected_symlinks, a link in a sticky world-writable directory is only
 * followed by its owner or when the directory's owner owns it (EACCES).
 */
static int may_follow_trailing(const struct walk *w, const struct so_info *lin)
{
	uid_t downer;
	int sticky = cur_sticky_public(w, &downer);
	if (sticky <= 0)
		return sticky;
	if (lin->uid == downer || lin->uid == (uid_t)setfsuid((uid_t)-1))
		return 0;
	int on = protected_symlinks();
	if (on < 0)
		return -1;
	return on ? so_fail(EACCES) : 0;
}

/*
 * SAFE_RESOLVE_SYMLINKS_OWNER_MATCH: a link is followed only when its owner
 * is the owner of what it resolves to (design.md, "Links by owner"). Its
 * owner and body come from one O_PATH descriptor of the link (follow_link():
 * the by-name shortcuts are not taken), and what it resolves to is known
 * only once the walk has consumed its body: the directory the walk then
 * holds as cur (middle links: owner_settle() before the next component), or
 * the final object, looked at through its own O_PATH descriptor before
 * anything is opened for real (final_owned()). The answer is read from
 * descriptors the walk goes on with, so no swap of a name after the check
 * can change what the walk opens.
 */
static bool owner_match(const struct walk *w)
{
	return w->resolve & SAFE_RESOLVE_SYMLINKS_OWNER_MATCH;
}

/* The links whose body ends before buf[at] (every owed link for the final
 * object, at = cap - 1) resolve to an object owned by `uid`: each must be
 * owned by it too (ELOOP otherwise). */
static int owner_pay(struct walk *w, size_t at, uid_t uid)
{
	while (w->nowed > 0 && w->cap - at <= w->owed[w->nowed - 1].tail) {
		w->nowed--;
#ifndef SAFEOPEN_MUTATE_OWNER_MATCH
		if (w->owed[w->nowed].uid != uid)
			return so_fail(ELOOP);
#endif
	}
	return 0;
}

/* Before the component at buf[at]: the links whose body ended there resolve
 * to cur. */
static int owner_settle(struct walk *w, size_t at)
{
	if (w->nowed == 0 || w->cap - at > w->owed[w->nowed - 1].tail)
		return 0;
	struct stat st;
	if (fstat(cur(w), &st) < 0)
		return -1;
	return owner_pay(w, at, st.st_uid);
}

/* Put the body (read to buf[0..r)) in front of the rest of the path, which
 * starts at buf[rest]; an absolute body is EXDEV or a jump to the root. */
static int splice_body(struct walk *w, size_t r, size_t rest)
{
	if (r == 0)
		return so_fail(ENOENT);
	if (w->buf[0] == '/') {
#ifndef SAFEOPEN_MUTATE_ABS_SYMLINK
		if (w->resolve & SAFE_RESOLVE_BENEATH)
			return so_fail(EXDEV);
#endif
		/* IN_ROOT: the rest is walked from the root like a new path. */
#ifdef SAFEOPEN_MUTATE_IN_ROOT_JUMP
		if (w_depth(w) == 0) /* mutation (tests only): below it, from cur */
#endif
		jump_root(w);
	}
	memmove(w->buf + rest - r, w->buf, r);
	w->pos = rest - r;
	if (w->diag.on)
		so_diag_walk_body(&w->diag, w->cap - rest, r);
	return 0;
}

/*
 * The mount facts of the symlink open as lfd, whose identity *in is from its
 * own statx: those w->mfs keeps for its mount id, else its own fstatfs(),
 * then kept under that id. So a walk through links on one mount (the careful
 * way; every link under SAFE_RESOLVE_SYMLINKS_OWNER_MATCH) makes one
 * fstatfs, not one per link. Premise: cur_fs()'s (a mount id names one mount
 * while it is mounted, and nothing is mounted, unmounted or remounted during
 * the call); the id is the link's own, so a link that is a mount point is
 * judged by its own mount; without a mount id (before 5.8, or not reported)
 * every link is fstatfs()'d.
 */
static int link_fs(struct walk *w, int lfd, const struct so_info *in, unsigned int *fs)
{
#ifndef SAFEOPEN_MUTATE_LINK_FACTS_KEY
	if (mfs_for(w, &in->id)) {
#else
	if (w->mfs & FS_KNOWN) { /* mutation (tests only): the facts kept, whatever their mount */
#endif
		assert(facts_hold(lfd, w->mfs));
		*fs = w->mfs;
		return 0;
	}
	struct statfs sfs;
	if (fstatfs(lfd, &sfs) < 0)
		return -1;
	*fs = fs_facts(&sfs);
	mfs_keep(w, &in->id, *fs);
	return 0;
}

/*
 * Follow the symlink open as `lfd` (identity in *in) whose name ends at
 * buf[rest] (the rest of the path, possibly "" or "/...", follows it): the
 * checks of the kernel's pick_link()/nd_jump_link() in the same order, then
 * the body is spliced in front of the rest. Closes nothing.
 */
static int follow_link(struct walk *w, int lfd, const struct so_info *in, size_t rest, bool trailing)
{
	if (w->links >= SO_MAXSYMLINKS)
		return so_fail(ELOOP);
	w->links++;
	if (trailing && may_follow_trailing(w, in) < 0)
		return -1;
	if (w->resolve & SAFE_RESOLVE_NO_SYMLINKS)
		return so_fail(ELOOP);
	unsigned int fs;
	if (link_fs(w, lfd, in, &fs) < 0)
		return -1;
	if (fs & FS_NOSYMFOLLOW)
		return so_fail(ELOOP);

	ssize_t r;
	for (;;) {
		/* Read the body into the free space in front of the path. */
		r = readlinkat(lfd, "", w->buf, rest);
		if (r < 0)
			return -1;
		if ((size_t)r < rest)
			break;
		ssize_t shift = grow_buf(w, (size_t)r + PATH_MAX);
		if (shift < 0)
			return -1;
		rest += (size_t)shift;
	}
#ifndef SAFEOPEN_MUTATE_MAGICLINK
	if ((fs & FS_PROC) && proc_link_magic(in, w->buf, (size_t)r))
		return so_fail((w->resolve & SAFE_RESOLVE_NO_MAGICLINKS) ? ELOOP : EXDEV);
#endif
	if (owner_match(w)) {
		/* Owner and body from the one descriptor lfd. */
		assert(w->nowed < SO_MAXSYMLINKS);
		w->owed[w->nowed++] = (struct owed){ .uid = in->uid, .tail = w->cap - rest };
	}
	return splice_body(w, (size_t)r, rest);
}

/*
 * A symlink not on procfs whose body was read by name into buf[0..r) (a
 * failure to read takes the careful way, in order): pick_link()'s checks
 * after may_follow_link(), in the kernel's order, then the splice. cur's
 * mount facts are `fs`.
 */
static int follow_read_body(struct walk *w, const struct comp *c, unsigned int fs, size_t r)
{
	if (w->links >= SO_MAXSYMLINKS)
		return so_fail(ELOOP);
	w->links++;
	if (w->resolve & SAFE_RESOLVE_NO_SYMLINKS)
		return so_fail(ELOOP);
	if (fs & FS_NOSYMFOLLOW)
		return so_fail(ELOOP);
	return splice_body(w, r, c->end);
}

/*
 * A component in the middle of the path that is not a directory (its
 * O_DIRECTORY open said ENOTDIR; `rel`: where that lookup found it). Usually
 * a symlink: read it by name into the free space in front of the path, one
 * syscall instead of open + fstat + readlink + close. The name is a single
 * component of cur, so whatever it is at that instant is a child of a
 * directory beneath the root. Links not shown to be on cur's mount (a link
 * can be a mount point: link_on_cur_mount()), links on procfs
 * (proc_link_magic() needs the link's own inode), bodies that do not fit, and anything that
 * is not a symlink take the careful way through an O_PATH descriptor of the
 * name, whose own mount then supplies the facts (follow_link()).
 */
static int middle_nondir(struct walk *w, const struct comp *c, enum mnt_rel rel)
{
	struct link_mount lm;
	ssize_t r = !owner_match(w) && link_on_cur_mount(w, c->name, rel, &lm)
			    ? readlinkat(cur(w), c->name, w->buf, w->pos)
			    : -1;
	if (r >= 0 && (size_t)r < w->pos) {
		mark_searched(w);
		unsigned int fs;
		if (cur_fs(w, &lm, &fs) < 0)
			return -1;
		if (!(fs & FS_PROC))
			return follow_read_body(w, c, fs, (size_t)r);
	}
	_cleanup_fd_ int fd = walk_openat(w, cur(w), c->name, O_PATH | O_NOFOLLOW, 0);
	if (fd < 0)
		return errno == ENOENT ? WALK_RACE : -1; /* ENOTDIR a moment ago */
	struct so_info in;
	if (get_info(w, fd, &in) < 0)
		return -1;
	if (in.type == S_IFDIR)
		return WALK_RACE; /* ENOTDIR a moment ago */
	if (w->xdev && off_root_mount(w, &in.id))
		return so_fail(EXDEV);
	if (in.type != S_IFLNK)
		return so_fail(ENOTDIR);
	return follow_link(w, fd, &in, c->end, false);
}

/*
 * The kernel's search-permission check on a directory before a lookup in it
 * (may_lookup()): faccessat2(X_OK, AT_EACCESS) asks exactly that with the fs
 * credentials. Without faccessat2 (before 5.8, or filtered), "." is looked
 * up in it by readlinkat(): one call, no descriptor to close. Premise of that
 * shortcut: the lookup checks search permission on the directory before its
 * last component (link_path_walk() calls may_lookup() first), and "." is the
 * directory itself, never a symlink, so the call can only fail: EINVAL (not a
 * link: the check passed), or the lookup's error (EACCES, ENOTDIR for a
 * caller's dirfd that is no directory, a resource error), as the open of "."
 * it replaces would report it.
 */
static int check_search(struct walk *w)
{
#ifdef SYS_faccessat2
	/* Not at the root: the caller's dirfd may be no directory (ENOTDIR). */
	if (w_depth(w) > 0 && !so_lacks(SO_FEAT_FACCESSAT2)) {
		if (syscall(SYS_faccessat2, cur(w), "", X_OK, AT_EACCESS | AT_EMPTY_PATH) == 0)
			return 0;
		if (errno != ENOSYS && errno != EINVAL && errno != EPERM)
			return -1;
		if (errno != EPERM) /* EPERM: maybe a filter, maybe not; ask again next time */
			so_feature_set(SO_FEAT_FACCESSAT2, SO_PROBE_MISSING);
	}
#endif
#ifdef SAFEOPEN_MUTATE_SEARCH_CHECK
	return 0; /* mutation (tests only): no search-permission check without faccessat2 */
#endif
	char c;
	int saved = errno;
	ssize_t r = readlinkat(cur(w), ".", &c, 1);
	assert(r < 0); /* "." is never a symlink */
	if (r >= 0 || errno == EINVAL) {
		errno = saved;
		return 0;
	}
	return -1;
}

/*
 * A ".." step. At the root (depth 0), after the kernel's search-permission
 * check: EXDEV under BENEATH, and under IN_ROOT with REPORT_ESCAPE (the
 * caller wants the escape reported), else a no-op (plain IN_ROOT); the
 * root's parent is never opened. Below it: the result is the level the walk
 * descended from, never a directory found by the kernel's "..": the
 * descriptor held for that level (an open directory cannot be freed, so no
 * other directory can take its place or its inode number), or, when that
 * level is not held, a re-descent by the recorded names from the nearest
 * held level above it (the deepest checkpoint there, else the root):
 * so_chain_up(). Either way the walk stands in a directory it reached from the
 * root by single-name lookups only, whatever was renamed, deleted or
 * recreated meanwhile; without concurrent changes it is the kernel's ".."
 * (the parent of cur, across a mount root onto the mount point's parent).
 * The permission check is the kernel's, unless a lookup in cur already
 * passed it.
 */
static int step_dotdot(struct walk *w)
{
	if (w->resolve & SAFE_RESOLVE_NO_DOTDOT)
		return so_fail(EXDEV);
	if (!is_searched(w) && check_search(w) < 0)
		return -1;
	if (w_depth(w) == 0) {
#ifndef SAFEOPEN_MUTATE_DOTDOT_ROOT
		if (w->resolve & (SAFE_RESOLVE_BENEATH | SAFE_RESOLVE_REPORT_ESCAPE))
			return so_fail(EXDEV);
#endif
		return 0; /* IN_ROOT: ".." at the root stays there */
	}
	/* Level depth - 1 held open since the walk descended from it becomes
	 * cur again without any lookup of "..", so nothing renamed, freed or
	 * recreated meanwhile can stand in for it, and it is beneath the root
	 * because every level of the chain is; else it is reached again from
	 * the nearest held level above it (chain_open()). */
	unsigned int left;
	w->open_failed = false;
	int r = so_chain_up(&w->ch, &left);
	/* A level that cannot be reopened by its name changed (walk again);
	 * no descriptor or memory, or a mount that cannot be learnt, is the
	 * answer (fails closed). */
	if (r < 0)
		return w->open_failed || errno == EMFILE || errno == ENFILE || errno == ENOMEM
			       ? -1
			       : WALK_RACE;
	if (r > 0)
		w->fs = 0; /* reached again: cur's facts are learnt again */
#ifndef SAFEOPEN_MUTATE_LINK_FACTS
	if (left & LV_CROSSED)
		w->fs = 0; /* the level left was entered across a mount: cur may differ */
#endif
	return 0;
}

/* "x/../x": the level the ".." right before this component left (`back`,
 * so_chain_back()) is taken back when this component is its name
 * (so_chain_take_back(): safe for the same reason as step_dotdot()). True
 * when it was: cur is that level again, and a name was looked up in its
 * parent. */
static bool take_back(struct walk *w, const struct comp *c, int back)
{
	if (back < 0)
		return false;
	unsigned int *pb = w_depth(w) > 0 ? so_chain_bits(&w->ch) : NULL;
	unsigned int was = pb ? *pb : 0;
	mark_searched(w);
	if (!so_chain_take_back(&w->ch, back, c->name)) {
		if (pb)
			*pb = was;
		return false;
	}
	(void)entered(w, !(*so_chain_bits(&w->ch) & LV_CROSSED));
	return true;
}

/*
 * The final object is the current directory itself ("/", ".", "..", a link
 * to one of those): open it with the real flags, as "." of itself. When the
 * path named the root without any component ("/", an IN_ROOT jump to "/"),
 * the kernel looks nothing up in the root and needs no search permission on
 * it; for O_PATH the same descriptor comes from open_tree() (5.2+) without a
 * lookup. (Other flags on a readable but unsearchable root stay EACCES.)
 */
static int open_cur(struct walk *w, bool no_component)
{
	if (kernel_eloop_stands(w))
		return so_fail(ELOOP);
	int fd = walk_openat(w, cur(w), ".", w->oflags, w->mode);
	/* Premise of the open_tree() below: only the root is named without a
	 * component. */
	assert(!no_component || w_depth(w) == 0);
#ifdef SAFEOPEN_MUTATE_UNSEARCHABLE_ROOT
	no_component = true; /* mutation (tests only): open_tree() after any EACCES of O_PATH */
#endif
	if (fd >= 0 || !no_component || errno != EACCES || !(w->oflags & O_PATH))
		return fd;
	int saved = errno;
	long r = syscall(SYS_open_tree, cur(w), "", AT_EMPTY_PATH | O_CLOEXEC);
	if (r < 0) {
		errno = saved;
		return -1;
	}
	return (int)r;
}

/*
 * Open the last component of cur with the caller's flags so that a
 * trailing symlink is never followed by the kernel. Where openat2 exists the
 * single name, with its trailing slashes if any (the path from the name on:
 * only slashes follow it), is opened with RESOLVE_NO_SYMLINKS: the
 * descriptor then carries exactly the caller's flags, as openat2 would give
 * them (F_GETFL shows no O_NOFOLLOW or O_DIRECTORY the caller did not ask
 * for); a symlink is ELOOP.
 * Without openat2, openat() with O_NOFOLLOW (and O_DIRECTORY for a trailing
 * slash) does the same, those two bits aside. *checked is set when the open
 * itself refused symlinks (no O_PATH link can come back).
 */
#ifndef SAFEOPEN_MUTATE_LAST_NOFOLLOW
#define LAST_NO_SYMLINKS SAFE_RESOLVE_NO_SYMLINKS
#define LAST_NOFOLLOW O_NOFOLLOW
#else /* mutation check: the last component's open follows symlinks */
#define LAST_NO_SYMLINKS 0
#define LAST_NOFOLLOW 0
#endif
static int open_last(struct walk *w, const struct comp *c, bool *checked, enum mnt_rel *rel)
{
	*checked = false;
	*rel = REL_UNKNOWN;
	if (so_have_openat2()) {
		/* RESOLVE_NO_XDEV also when the caller did not ask for it: then
		 * an ELOOP is about a link on cur's mount (link_on_cur_mount()),
		 * and a mount point on the name (EXDEV, reported by the lookup
		 * before anything is opened or created) is opened again across
		 * the mount. */
		struct safe_open_how how = {
			.flags = (uint64_t)w->oflags,
			.mode = w->mode,
			.resolve = SAFE_RESOLVE_BENEATH | LAST_NO_SYMLINKS |
				   SAFE_RESOLVE_NO_MAGICLINKS | SAFE_RESOLVE_NO_XDEV,
		};
		const char *name = w->buf + c->start; /* "name" or "name/" */
		int fd;
		*rel = REL_SAME;
		for (;;) {
			fd = so_openat2_fast(cur(w), name, &how);
			if (fd >= 0)
				break;
			if (errno == EXDEV && !w->xdev && *rel == REL_SAME) {
				*rel = REL_CROSS;
				how.resolve &= ~SAFE_RESOLVE_NO_XDEV;
				continue;
			}
			if (!make_room(w, errno))
				break;
		}
		if (fd >= 0 || errno != ENOSYS) {
			*checked = true;
			return fd;
		}
		/* ENOSYS: openat2 is refused here after all (a sandbox installed
		 * since the probe); the fast path has recorded that. */
		*rel = REL_UNKNOWN;
	}
	int f = w->oflags | LAST_NOFOLLOW | O_CLOEXEC;
	if (c->slash)
		f |= O_DIRECTORY;
	return walk_openat(w, cur(w), c->name, f, w->mode);
}

/*
 * A trailing symlink (the last open said ELOOP), the common way: its body
 * read by name into the free space in front of the path, then the checks of
 * follow_link() in the same order, then the splice: three system calls
 * where the careful way takes six. As in middle_nondir(), the name is a
 * single component of cur, so whatever it is at that instant is a child of
 * a directory beneath the root. Not here (WALK_RACE: take the careful way
 * through an O_PATH descriptor): links not shown to be on cur's mount
 * (link_on_cur_mount(): the link's own mount has the facts), links on procfs
 * (proc_link_magic() needs the link's own inode), in a sticky world-writable
 * directory (the link's owner decides, fs.protected_symlinks), bodies that
 * do not fit, and names that are not a symlink (any more). Returns
 * WALK_CONTINUE, WALK_FAIL or WALK_RACE.
 */
static int trailing_by_name(struct walk *w, const struct comp *c, enum mnt_rel rel)
{
	struct link_mount lm;
	if (!link_on_cur_mount(w, c->name, rel, &lm))
		return WALK_RACE;
	ssize_t r = readlinkat(cur(w), c->name, w->buf, w->pos);
	if (r < 0 || (size_t)r >= w->pos)
		return WALK_RACE;
	unsigned int fs;
	if (cur_fs(w, &lm, &fs) < 0)
		return WALK_FAIL;
	int sticky = cur_sticky_public(w, NULL);
	if (sticky < 0)
		return WALK_FAIL;
#ifdef SAFEOPEN_MUTATE_TRAILING_STICKY
	sticky = 0;
#endif
	if ((fs & FS_PROC) || sticky)
		return WALK_RACE;
	mark_searched(w);
	/* may_follow_link() allows it: the directory is not sticky and
	 * world-writable. */
	if (follow_read_body(w, c, fs, (size_t)r) < 0)
		return WALK_FAIL;
	return WALK_CONTINUE;
}

/* A trailing symlink open as lfd (identity *in) is followed: its body is
 * spliced in front of what follows the name (only slashes), and the walk
 * goes on. */
static int follow_trailing(struct walk *w, const struct comp *c, int lfd, const struct so_info *in)
{
	if (follow_link(w, lfd, in, c->end, true) < 0)
		return WALK_FAIL;
	return WALK_CONTINUE;
}

/*
 * A component longer than NAME_MAX, where the kernel looks it up: its answer
 * is that lookup's in cur, EACCES without search permission, else the
 * filesystem's (ENAMETOOLONG where names are limited to NAME_MAX; procfs and
 * sysfs only compare names: ENOENT). The name does not fit a component's
 * buffer, so the walk asks with its first NAME_MAX + 1 bytes. Premise: the
 * answer to a name over NAME_MAX does not depend on the bytes after those (a
 * filesystem refuses it by its length, or finds it among none of its own
 * names). A name found anyway (a filesystem with longer names: FUSE allows
 * 1024 bytes) is not walked: ENAMETOOLONG (fail closed).
 */
static int name_too_long(struct walk *w, const struct comp *c)
{
	char probe[NAME_MAX + 2];
	assert(c->len > NAME_MAX && c->name[0] == '\0');
	memcpy(probe, w->buf + c->start, sizeof(probe) - 1);
	probe[sizeof(probe) - 1] = '\0';
	int fd = walk_openat(w, cur(w), probe, O_PATH | O_NOFOLLOW, 0);
	if (fd < 0)
		return WALK_FAIL;
	so_close(fd);
	return so_fail(ENAMETOOLONG);
}

/*
 * O_CREAT through links that owe their check (final_owned()) where the name
 * does not exist: the caller creates the object and owns it (its fsuid), so
 * each owed link must be the caller's. The name is created with O_EXCL added:
 * one that appeared since it was looked up is a race (walk again), never
 * opened unchecked.
 */
static int create_owned(struct walk *w, const struct comp *c)
{
	if (owner_pay(w, w->cap - 1, (uid_t)setfsuid((uid_t)-1)) < 0)
		return WALK_FAIL;
	int of = w->oflags;
	bool checked;
	enum mnt_rel rel;
	w->oflags = of | O_EXCL;
	_cleanup_fd_ int fd = open_last(w, c, &checked, &rel);
	w->oflags = of;
	if (fd < 0)
		return errno == EEXIST ? WALK_RACE : WALK_FAIL;
	if (w->xdev) {
		struct so_info in;
		if (get_info(w, fd, &in) < 0)
			return WALK_FAIL;
		if (off_root_mount(w, &in.id))
			return so_fail(EXDEV);
	}
	w->last = w->buf + c->start;
	w->last_len = c->len;
	return take_fd(&fd);
}

/*
 * The last component when links followed on the way resolve to it
 * (SAFE_RESOLVE_SYMLINKS_OWNER_MATCH, owed links): the object is opened
 * O_PATH|O_NOFOLLOW, its owner compared, and only then is it opened for
 * real, from that descriptor (a directory as its own ".", anything else by
 * so_procfs_reopen(): the very inode checked, never the name again), so
 * nothing is truncated, created or opened (a FIFO, a device) that the rule
 * refuses. Without a verified procfs a non-directory cannot be reopened:
 * the error of the procfs lookup (fail closed).
 */
static int final_owned(struct walk *w, const struct comp *c, bool follow)
{
	int of = w->oflags;
	_cleanup_fd_ int lfd = walk_openat(w, cur(w), c->name, O_PATH | O_NOFOLLOW, 0);
	if (lfd < 0 && errno == ENOENT && (of & O_CREAT))
		return create_owned(w, c);
	if (lfd < 0)
		return WALK_FAIL;
	struct so_info in;
	if (get_info(w, lfd, &in) < 0)
		return WALK_FAIL;
	if (w->xdev && off_root_mount(w, &in.id))
		return so_fail(EXDEV);
	if (in.type == S_IFLNK && follow)
		return follow_trailing(w, c, lfd, &in);
	if (owner_pay(w, w->cap - 1, in.uid) < 0)
		return WALK_FAIL;
	if ((of & O_CREAT) && (of & O_EXCL))
		return so_fail(EEXIST);
	if ((of & O_CREAT) && in.type == S_IFDIR)
		return so_fail(EISDIR);
	if (in.type == S_IFLNK && !(of & O_PATH))
		return so_fail(ELOOP); /* O_NOFOLLOW */
	if ((c->slash || (of & O_DIRECTORY)) && in.type != S_IFDIR)
		return so_fail(ENOTDIR);
	int fd;
	if (of & O_PATH)
		fd = take_fd(&lfd);
	else if (in.type == S_IFDIR)
		fd = walk_openat(w, lfd, ".", of & ~(O_CREAT | O_NOFOLLOW), w->mode);
	else
		fd = so_procfs_reopen(lfd, of & ~(O_CREAT | O_NOFOLLOW));
	if (fd < 0)
		return WALK_FAIL;
	w->last = w->buf + c->start;
	w->last_len = c->len;
	return fd;
}

/* O_CREAT on "name/": EISDIR whatever the name is, as the kernel answers
 * before it looks the name up, but after its search-permission check on
 * the parent. */
static int final_creat_slash(struct walk *w)
{
	int p = walk_openat(w, cur(w), ".", O_PATH | O_DIRECTORY, 0);
	if (p < 0)
		return WALK_FAIL;
	so_close(p);
	return so_fail(EISDIR);
}

/*
 * The look before the real open, where one is needed (an O_PATH|O_NOFOLLOW
 * open creates, truncates and blocks on nothing): with NO_XDEV, for the
 * name's mount before anything is opened for real; where the kernel's ELOOP
 * would stand (kernel_eloop_stands()), because the last name may itself be
 * the first link of the chain the kernel counted ("ch40" alone): a link is
 * followed (WALK_CONTINUE) and the walk judged again before its final open.
 * Otherwise 0, with the name's descriptor in *pre and its identity in *pin
 * (kept open: final_opened() compares the real open against it), or -1 in
 * *pre: no look, or no such name under O_CREAT. WALK_FAIL with errno.
 */
static int final_look(struct walk *w, const struct comp *c, bool follow, int *pre,
		      struct so_info *pin)
{
	*pre = -1;
	if (!w->xdev && !(follow && kernel_eloop_stands(w)))
		return 0;
	_cleanup_fd_ int fd = walk_openat(w, cur(w), c->name, O_PATH | O_NOFOLLOW, 0);
	if (fd < 0)
		return errno == ENOENT && (w->oflags & O_CREAT) ? 0 : WALK_FAIL;
	if (get_info(w, fd, pin) < 0)
		return WALK_FAIL;
	if (w->xdev && off_root_mount(w, &pin->id))
		return so_fail(EXDEV);
	if (pin->type == S_IFLNK && follow)
		return follow_trailing(w, c, fd, pin);
	*pre = take_fd(&fd);
	return 0;
}

/*
 * The real open gave fd (owned; `checked`: it refused symlinks itself). An
 * O_PATH open without O_NOFOLLOW where openat2 is missing opened a symlink
 * itself (openat(O_NOFOLLOW)): it is followed here. With NO_XDEV the object
 * must be the one final_look() saw (pre, held open since, so its inode
 * number cannot be reused; else the name changed: a race) and on the root's
 * mount. Returns the descriptor, WALK_CONTINUE, WALK_RACE or WALK_FAIL.
 */
static int final_opened(struct walk *w, const struct comp *c, bool follow, bool checked, int fd,
			int pre, const struct so_info *pin)
{
	_cleanup_fd_ int ofd = fd;
	int of = w->oflags;
	struct so_info in;
	if ((of & O_PATH) && follow && !c->slash && !checked) {
		if (get_info(w, ofd, &in) < 0)
			return WALK_FAIL;
		if (in.type == S_IFLNK)
			return follow_trailing(w, c, ofd, &in);
	}
	if (w->xdev) {
		if (get_info(w, ofd, &in) < 0)
			return WALK_FAIL;
		bool tmpfile = (of & O_TMPFILE) == O_TMPFILE;
		if (pre >= 0 && !tmpfile && !so_same_inode(&in.id, &pin->id))
			return WALK_RACE;
		if (off_root_mount(w, &in.id))
			return so_fail(EXDEV);
	}
	w->last = w->buf + c->start;
	w->last_len = c->len;
	return take_fd(&ofd);
}

/*
 * The real open failed with err. A symlink the open refused to follow
 * (ELOOP, or ENOTDIR for O_DIRECTORY; EACCES, see below) is followed: by
 * name where trailing_by_name() may, else through its own O_PATH descriptor
 * (the careful way). Any other error is the answer; so is one where the name
 * turns out not to be a symlink (ENOTDIR, EACCES), unless it changed under
 * the walk (WALK_RACE). Returns WALK_CONTINUE, WALK_RACE or WALK_FAIL.
 */
static int final_refused(struct walk *w, const struct comp *c, bool follow, int err,
			 bool checked, enum mnt_rel rel)
{
	/* Without openat2, O_CREAT|O_NOFOLLOW on a symlink in a sticky directory
	 * gets EACCES from the kernel's may_create_in_sticky() before ELOOP (it
	 * looks at the link, not its target); openat2 would follow the link,
	 * after may_follow_link(). So EACCES under O_CREAT is looked at too. */
	bool sticky_creat = (w->oflags & O_CREAT) && err == EACCES && !checked;
	if (!follow || (err != ELOOP && err != ENOTDIR && !sticky_creat))
		return so_fail(err);
	/* NO_XDEV: the link's mount is checked below; OWNER_MATCH: its owner. */
	if (err == ELOOP && !w->xdev && !owner_match(w)) {
		int r = trailing_by_name(w, c, rel);
		if (r != WALK_RACE)
			return r;
	}
	/* A symlink (or, for ENOTDIR, perhaps a non-directory): look at it. */
	_cleanup_fd_ int lfd = walk_openat(w, cur(w), c->name, O_PATH | O_NOFOLLOW, 0);
	if (lfd < 0 && errno == ENOENT && sticky_creat)
		return so_fail(EACCES); /* no such name: the EACCES was about creating it */
	if (lfd < 0)
		return errno == ENOENT ? WALK_RACE : WALK_FAIL; /* ENOENT: it just vanished */
	struct so_info in;
	if (get_info(w, lfd, &in) < 0)
		return WALK_FAIL;
	if (in.type == S_IFLNK) {
		if (w->xdev && off_root_mount(w, &in.id))
			return so_fail(EXDEV);
		return follow_trailing(w, c, lfd, &in);
	}
	if (err == ENOTDIR || err == EACCES)
		return so_fail(err);
	return WALK_RACE;
}

/*
 * The last component. The ways out, in the kernel's order: O_CREAT on
 * "name/" (final_creat_slash()); a name over NAME_MAX (name_too_long());
 * links owed an owner check (final_owned()); the look before the real open
 * (final_look(), which may follow a link); the kernel's ELOOP where it
 * stands; then the real open of the single name that never follows a
 * symlink (open_last()), which either gave the object (final_opened()) or
 * refused, perhaps for a trailing symlink to follow (final_refused()).
 * Returns the fd, WALK_FAIL, WALK_RACE, or WALK_CONTINUE after splicing a
 * trailing symlink.
 */
static int final_name(struct walk *w, const struct comp *c)
{
	int of = w->oflags;
	bool creat = of & O_CREAT;
	bool follow = c->slash || (!(of & O_NOFOLLOW) && !(creat && (of & O_EXCL)));

	if (creat && c->slash)
		return final_creat_slash(w);
	if (c->len > NAME_MAX)
		return name_too_long(w, c);
	if (w->nowed > 0)
		return final_owned(w, c, follow);

	_cleanup_fd_ int pre = -1;
	struct so_info pin;
	int r = final_look(w, c, follow, &pre, &pin);
	if (r != 0)
		return r;
	if (kernel_eloop_stands(w))
		return so_fail(ELOOP);
	bool checked;
	enum mnt_rel rel;
	int fd = open_last(w, c, &checked, &rel);
	if (fd >= 0)
		return final_opened(w, c, follow, checked, fd, pre, &pin);
	return final_refused(w, c, follow, errno, checked, rel);
}

/* Split the next component off the remaining path (slashes before it
 * skipped): fills *c (with the copy of the name) and returns the offset of
 * what follows it and its slashes; c->len is 0 at the end. */
static size_t next_comp(struct walk *w, struct comp *c)
{
	struct so_comp sc = { .start = w->pos, .end = w->pos };
	if (!so_comp_next(w->buf, &sc)) /* only slashes left: an empty name at the end */
		sc.start = sc.end = sc.end + strspn(w->buf + sc.end, "/");
	size_t n = sc.end + strspn(w->buf + sc.end, "/");
	c->start = sc.start;
	c->end = sc.end;
	c->len = sc.end - sc.start;
	c->last = !w->buf[n];
	c->slash = c->last && n != sc.end;
	size_t copy = c->len <= NAME_MAX ? c->len : 0;
	memcpy(c->name, w->buf + sc.start, copy);
	c->name[copy] = '\0';
	return n;
}

static bool is_dot(const struct comp *c)
{
	return c->len == 1 && c->name[0] == '.';
}

static bool is_dotdot(const struct comp *c)
{
	return c->len == 2 && c->name[0] == '.' && c->name[1] == '.';
}

/* A directory in the middle of the path, open as fd (owned): after the
 * NO_XDEV check it becomes the next level of the chain. */
static int descend(struct walk *w, const struct comp *c, int fd, bool same)
{
	_cleanup_fd_ int dfd = fd;
	if (w->xdev) {
		struct so_info in;
		if (get_info(w, dfd, &in) < 0)
			return WALK_FAIL;
#ifndef SAFEOPEN_MUTATE_XDEV
		if (off_root_mount(w, &in.id))
			return so_fail(EXDEV);
#endif
	}
	mark_searched(w);
	if (so_chain_push(&w->ch, take_fd(&dfd), c->name, NULL, entered(w, same)) < 0)
		return WALK_FAIL;
	return 0;
}

/* One resolution attempt. Returns an fd, WALK_FAIL (errno set) or WALK_RACE. */
static int walk_once(struct walk *w, const char *path, size_t len)
{
	drop_chain(w);
	w->links = 0;
	w->nowed = 0;
	w->last_len = 0;
	w->pos = w->cap - len - 1;
	memcpy(w->buf + w->pos, path, len + 1);
	w->diag.at_dist = w->diag.nbodies = 0;

	for (;;) {
		struct comp c;
		size_t next = next_comp(w, &c);
		if (w->diag.on)
			so_diag_walk_comp(&w->diag, w->buf, w->cap, w->buf + c.start, c.len);
		int back = so_chain_back(&w->ch); /* only for the component right after a ".." */
		if (owner_settle(w, c.start) < 0)
			return WALK_FAIL;
		if (c.len == 0)
			return open_cur(w, true); /* "" after slashes: the walk is there */
#ifndef SAFEOPEN_MUTATE_DOTDOT_IDENTITY
		if (is_dot(&c) || is_dotdot(&c)) {
#else /* mutation (tests only): below the root the kernel's ".." is looked up like a name */
		if (is_dot(&c) || (is_dotdot(&c) && w_depth(w) == 0)) {
#endif
			int r = is_dotdot(&c) ? step_dotdot(w) : 0;
			if (r < 0)
				return r;
			if (c.last && owner_settle(w, w->cap - 1) < 0)
				return WALK_FAIL;
			if (c.last)
				return open_cur(w, false);
			w->pos = next;
			continue;
		}

		int r;
		if (c.last) {
			r = final_name(w, &c);
			if (r != WALK_CONTINUE)
				return r;
			continue;
		}
		/* In the middle: a directory, or a symlink to follow. */
		if (c.len > NAME_MAX)
			return name_too_long(w, &c);
		if (take_back(w, &c, back)) {
			w->pos = next;
			continue;
		}
		enum mnt_rel rel;
		int fd = open_child(w, cur(w), c.name, &rel);
		if (fd < 0 && errno == ENOTDIR) {
			r = middle_nondir(w, &c, rel);
			if (r < 0)
				return r;
			continue;
		}
		r = fd < 0 ? WALK_FAIL : descend(w, &c, fd, rel == REL_SAME);
		if (r < 0)
			return r;
		w->pos = next;
	}
}

/*
 * The path the walk took to the object it just opened: the names of levels
 * 1..depth and of the final component, joined by '/' ("." for none). Each is
 * a name the walk opened as a single component, so the result has no ".",
 * ".." or symlink in it.
 */
static int walk_path(const struct walk *w, char *buf, size_t size, size_t *lenp)
{
	size_t nlen;
	const char *names = so_chain_names(&w->ch, &nlen);
	size_t len = nlen + w->last_len;
	if (w->last_len == 0 && len > 0)
		len--; /* no '/' after the last level's name */
	if (len == 0)
		len = 1; /* "." */
	if (len >= size)
		return so_fail(ERANGE);
	if (nlen == 0 && w->last_len == 0) {
		memcpy(buf, ".", 2);
	} else {
		memcpy(buf, names, nlen);
		for (size_t i = 0; i < nlen; i++)
			if (buf[i] == '\0')
				buf[i] = '/';
		if (w->last_len > 0)
			memcpy(buf + nlen, w->last, w->last_len);
		buf[len] = '\0';
	}
	*lenp = len;
	return 0;
}

static int walk_open(int dirfd, const char *path, const struct safe_open_how *how, char *named,
		     size_t size, size_t *named_len);

int so_walk_open(int dirfd, const char *path, const struct safe_open_how *how)
{
	return walk_open(dirfd, path, how, NULL, 0, NULL);
}

int so_walk_open_named(int dirfd, const char *path, const struct safe_open_how *how, char *buf,
		       size_t size, size_t *len)
{
	return walk_open(dirfd, path, how, buf, size, len);
}

/*
 * The walker's entry point (safety argument: top of this file). Path checks
 * in the kernel's order (EFAULT, ENOENT, ENAMETOOLONG, EXDEV for an absolute
 * path under BENEATH before the dirfd is looked at), then walk_once() until
 * it neither detects a race nor needs identities it did not record; races
 * are retried SO_RACE_RETRIES times, then EAGAIN. Everything the walk opened
 * is closed on every path; heap buffers, if any, are freed. With `named`,
 * the path the walk took is written there too (walk_path()).
 */
static int walk_open(int dirfd, const char *path, const struct safe_open_how *how, char *named,
		     size_t size, size_t *named_len)
{
	size_t len;
	if (so_path_len(path, &len) < 0)
		return -1;
	if (path[0] == '/' && (how->resolve & SAFE_RESOLVE_BENEATH)) {
		if (so_diag_on())
			so_diag_path(path, 0, 1, EXDEV);
		return so_fail(EXDEV);
	}

	struct walk wl;
	struct walk *w = &wl;
	w->diag.on = so_diag_on();

	w->oflags = (int)how->flags;
	w->mode = (mode_t)how->mode;
	w->resolve = how->resolve;
	w->xdev = how->resolve & SAFE_RESOLVE_NO_XDEV;
	w->buf = w->buf_local;
	w->cap = WALK_BUF;
	w->fs = 0;
	w->mfs = 0;
	w->open_failed = false;
	/* Cannot fail: the first storage for names is the walk's own, and no
	 * identities are recorded. */
	int ok = so_chain_init(&w->ch, &(const struct so_chain_client){ .open = chain_open,
									 .ctx = w,
									 .oflags = O_PATH,
									 .halves = true,
									 .keep_bits = LV_CROSSED,
									 .names = w->names_local,
									 .ncap = WALK_NAMES });
	assert(ok == 0);
	(void)ok;

	int ret = -1;
	/* Pin the current directory for the whole call, as the kernel does: a
	 * chdir() by another thread must not move the root under the walk. If
	 * "." cannot be opened (no search permission), the walk itself reports
	 * the kernel's error on AT_FDCWD. */
	_cleanup_fd_ int cwdfd = -1;
	if (dirfd == AT_FDCWD) {
		cwdfd = openat(AT_FDCWD, ".", O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (cwdfd >= 0)
			dirfd = cwdfd;
	}
	so_chain_set_top(&w->ch, dirfd, NULL, true);
	if (w->xdev) {
		struct so_info rin;
		if (so_info_of(dirfd, true, &rin) < 0)
			goto out;
		if (rin.type != S_IFDIR) {
			errno = ENOTDIR;
			goto out;
		}
		w->root_id = rin.id;
	}

	for (int i = 0; i < SO_RACE_RETRIES; i++) {
		ret = walk_once(w, path, len);
		if (ret >= 0 && named && walk_path(w, named, size, named_len) < 0) {
			so_close(ret);
			ret = WALK_FAIL;
		}
		drop_chain(w);
		if (ret == WALK_FAIL && kernel_eloop_stands(w))
			errno = ELOOP; /* the walk's own error is no better answer */
		if (ret != WALK_RACE)
			goto out;
		/* Buffers may have grown; keep them for the retry. */
	}
	errno = EAGAIN;
	ret = -1;
out:
	if (ret < 0 && w->diag.on)
		so_diag_walk_fail(&w->diag, len, errno); /* keeps errno */
	so_chain_free(&w->ch);
	if (w->buf != w->buf_local)
		free(w->buf);
	return ret;
}
