/* SPDX-License-Identifier: MIT */
/*
 * Private declarations shared by the library's modules. Nothing here is
 * exported: the build uses -fvisibility=hidden and lib/libsafeopen.sym lists
 * the public API.
 */
#ifndef SAFEOPEN_INTERNAL_H
#define SAFEOPEN_INTERNAL_H

#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "compat.h"
#include "safeopen.h"

/* ------------------------------------------------------------------ fd discipline */

/* close() that never clobbers errno and ignores negative fds. */
static inline void so_close(int fd)
{
	if (fd >= 0) {
		int saved = errno;
		(void)close(fd);
		errno = saved;
	}
}

static inline void so_closep(int *fdp)
{
	so_close(*fdp);
	*fdp = -1;
}

/* An fd variable closed automatically when it goes out of scope:
 *     _cleanup_fd_ int fd = -1;
 * Use take_fd() to hand ownership out. */
#define _cleanup_fd_ __attribute__((cleanup(so_closep)))

static inline int take_fd(int *fdp)
{
	int fd = *fdp;
	*fdp = -1;
	return fd;
}

/* Fail with errno set; for "return fail(EINVAL);" in functions returning int. */
static inline int so_fail(int err)
{
	errno = err;
	return -1;
}

/* Check a path argument as every path-taking call does: NULL is EFAULT,
 * "" is ENOENT, PATH_MAX bytes or more is ENAMETOOLONG. Returns 0 with its
 * length in *len, or -1 with errno. (util.c) */
int so_path_len(const char *path, size_t *len);

#define SO_UNUSED __attribute__((unused))

/* ------------------------------------------------------------------ flag masks */

/* Resolve bits the kernel knows (same values as <linux/openat2.h>). */
#define SO_RESOLVE_KERNEL_MASK                                                     \
	(SAFE_RESOLVE_NO_XDEV | SAFE_RESOLVE_NO_MAGICLINKS | SAFE_RESOLVE_NO_SYMLINKS | \
	 SAFE_RESOLVE_BENEATH | SAFE_RESOLVE_IN_ROOT)
/* Every resolve bit this library accepts. */
#define SO_RESOLVE_ALL_MASK                                                    \
	(SO_RESOLVE_KERNEL_MASK | SAFE_RESOLVE_NO_DOTDOT | SAFE_RESOLVE_USERSPACE | \
	 SAFE_RESOLVE_REPORT_ESCAPE | SAFE_RESOLVE_SYMLINKS_OWNER_MATCH)

/* SAFE_RESOLVE_CACHED: accepted by safe_openat2() only, as openat2() does
 * (EAGAIN with O_CREAT/O_TRUNC/O_TMPFILE); the walker cannot promise a
 * cache-only lookup and answers EAGAIN. */
#define SO_RESOLVE_CACHED SAFE_RESOLVE_CACHED

/* Maximum number of symlinks followed in one resolution (the kernel's MAXSYMLINKS). */
#define SO_MAXSYMLINKS 40
/* The descriptors of its own that each algorithm holds at most, whatever the
 * depth: the resolver's walker, the tree walk, rmtree. The code that holds
 * them asserts its own sum against these; the pages quote them once each
 * (safe_openat2(3), safe_walk_open(3), safe_rmtree_beneath(3)) and
 * tests/docs/check-numbers.sh compares. */
#define SO_RESOLVE_MAX_FDS 69
#define SO_WALK_MAX_FDS 59
#define SO_RMTREE_MAX_FDS 59
/* Internal resolve bit (never accepted from a caller: validation is done
 * before it is set): the fast path's openat2 answered ELOOP, and the walker
 * runs only to confirm it (open.c). */
#define SO_RESOLVE_KERNEL_ELOOP (1ULL << 62)
/* The kernel counts the links of one open across its attempts (RCU walk,
 * ref walk, LOOKUP_REVAL: total_link_count lives in the nameidata), so a
 * walk with n links may be counted up to 3n: its ELOOP can be spurious only
 * when 3n > SO_MAXSYMLINKS. With at most this many links it is the answer. */
#define SO_ELOOP_TRUSTED (SO_MAXSYMLINKS / 3)
/* Bounded retries when the walker or an operation detects a race (EAGAIN). */
#define SO_RACE_RETRIES 128
/* openat2 fails a lookup with ".." with EAGAIN whenever anything is renamed
 * anywhere in the system meanwhile. The fast path retries that many times,
 * then the walker (whose ".." does not depend on other renames) resolves the
 * path: about the cost of one walk, so a rename storm costs at most ~2x,
 * never an error (design.md, "Fast path"). */
#define SO_FAST_EAGAIN_RETRIES 8

/* ------------------------------------------------------------------ feature probes (probe.c) */

/* What this kernel and sandbox can do: one process-wide relaxed atomic per
 * feature, the library's only globals. The table in probe.c says what each
 * state means, who sets it, and why a per-thread seccomp filter is safe. */
enum so_feature {
	SO_FEAT_OPENAT2,         /* openat2(): the fast path */
	SO_FEAT_EMPTY_PATH_LINK, /* linkat(AT_EMPTY_PATH) of an unnamed file */
	SO_FEAT_RENAMEAT2,       /* renameat2() */
	SO_FEAT_FCHMODAT2,       /* fchmodat2() */
	SO_FEAT_XATTRAT,         /* getxattrat() and the other *xattrat() */
	SO_FEAT_FACCESSAT2,      /* faccessat2() */
	SO_FEAT_CLOSE_RANGE,     /* close_range() */
	SO_FEAT_COUNT
};

enum so_probe_state { SO_PROBE_UNKNOWN = 0, SO_PROBE_HAVE = 1, SO_PROBE_MISSING = 2 };

extern atomic_int so_features[SO_FEAT_COUNT];

static inline int so_feature(enum so_feature f)
{
	return atomic_load_explicit(&so_features[f], memory_order_relaxed);
}

static inline void so_feature_set(enum so_feature f, enum so_probe_state state)
{
	atomic_store_explicit(&so_features[f], (int)state, memory_order_relaxed);
}

/* True once the feature is known to be missing: take the fallback at once. */
static inline bool so_lacks(enum so_feature f)
{
	return so_feature(f) == SO_PROBE_MISSING;
}

/* True when openat2() is usable in this process (probed once). */
bool so_have_openat2(void);

/* Whether openat2 itself is refused in this process right now (seccomp EPERM
 * or ENOSYS): asked again when a real call fails with EPERM, which openat2
 * also returns for ordinary reasons (O_NOATIME, immutable files). */
bool so_openat2_blocked(void);

/* renameat2(2) with the library's one fallback rule: no flags is renameat();
 * with flags, -1 with ENOSYS when the
 * call is missing (the kernel or a sandbox said ENOSYS: remembered) or the
 * filesystem refuses a flag (EINVAL with flags set: per call); the caller then
 * emulates it. Any other result is the kernel's. */
int so_renameat2(int olddirfd, const char *oldname, int newdirfd, const char *newname,
		 unsigned int flags);

/* RENAME_NOREPLACE where so_renameat2() said ENOSYS, the one emulation:
 * link(2), which never replaces (EEXIST) and is as atomic, then unlink(2) of
 * the old name. Should the unlink fail, the new name is removed again while
 * it still leads to the old name's inode, so a failure leaves the names as
 * they were. The caller's premise: the old name is no directory (link(2)
 * refuses one with EPERM), and neither name ends in '/'. 0 or -1 with errno. */
int so_rename_by_link(int olddirfd, const char *oldname, int newdirfd, const char *newname);

/* ------------------------------------------------------------------ resolver (open.c, openat2.c, resolve.c) */

/* The entry points (open.c) validate and dispatch; the fast path (openat2.c)
 * and the walker (resolve.c) sit below them and never call back. */

/* openat2 fast path. Returns a new fd, or -1 with errno; errno ENOSYS means
 * "no usable openat2 here, use the walker" (the probe result is cached). */
int so_openat2_fast(int dirfd, const char *path, const struct safe_open_how *how);


/* The userspace walker: same contract as safe_openat2() for an already
 * validated how. */
int so_walk_open(int dirfd, const char *path, const struct safe_open_how *how);
/* The same, and the path the walk took to the object, relative to the root
 * ("." for the root itself, else "a/b/c": the names of the levels it
 * descended to and of the final component, no ".", ".." or symlink), in
 * buf (NUL-terminated, its length in *len); ERANGE if it does not fit in
 * size bytes (nothing is then returned open). */
int so_walk_open_named(int dirfd, const char *path, const struct safe_open_how *how, char *buf,
		       size_t size, size_t *len);

/* Open with already validated flags, choosing fast path or walker (open.c). */
int so_open_validated(int dirfd, const char *path, const struct safe_open_how *how);

/* ------------------------------------------------------------------ shared primitive for operations (path.c) */

/* The components of a path: the one parser of '/'-separated names outside
 * the walker (path.c and its callers). A component is path[start, end). */
struct so_comp {
	size_t start, end;
};

/* The component after `c` in the NUL-terminated `path` (begin with c =
 * { 0, 0 }; repeated slashes are skipped): true with it in *c, false when
 * none is left. */
static inline bool so_comp_next(const char *path, struct so_comp *c)
{
	size_t s = c->end;
	while (path[s] == '/')
		s++;
	if (!path[s])
		return false;
	size_t e = s;
	while (path[e] && path[e] != '/')
		e++;
	c->start = s;
	c->end = e;
	return true;
}

/* 1 for a component ".", 2 for "..", 0 for any other. */
static inline int so_comp_dots(const char *path, const struct so_comp *c)
{
	size_t n = c->end - c->start;
	if (n == 0 || n > 2 || path[c->start] != '.' || (n == 2 && path[c->start + 1] != '.'))
		return 0;
	return (int)n;
}

/* How a path ends (so_path_end(), path.c). */
struct so_path_end {
	struct so_comp last; /* the last component; { 0, 0 }: the path is only slashes (or "") */
	bool trailing_slash; /* the path ends in '/' */
	bool is_root;        /* no component but "." ("." or "/" or "./." ...) */
};
void so_path_end(const char *path, struct so_path_end *pe);
/* Does the path end in a name that can be acted on in its parent: not in '/'
 * (the kernel follows a trailing symlink there), not in "." or ".."? */
bool so_path_ends_in_name(const char *path);

/* The last component of a path, split off by so_resolve_parent(). It may be
 * longer than NAME_MAX: whether such a name is ENAMETOOLONG or merely absent
 * (ENOENT on procfs) is the filesystem's answer, so it is passed on as it is. */
#define SO_LAST_MAX PATH_MAX
struct so_last {
	char name[SO_LAST_MAX]; /* the last component ("." / ".." possible) */
	bool trailing_slash;     /* the path ended in one or more '/' */
	bool is_root;            /* the path named the root itself ("." or "/" ...) */
	bool only_slashes;       /* the path was "/", "//" ...: name is "." */
};

/*
 * Normalise an operation's flag word: check unknown bits against
 * (SO_RESOLVE_ALL_MASK | allowed_op_bits), default the scope to BENEATH,
 * reject BENEATH|IN_ROOT. Returns 0 with the resolve bits in *resolve, or -1
 * with errno (EINVAL).
 */
int so_op_resolve(uint64_t flags, uint64_t allowed_op_bits, uint64_t *resolve);

/*
 * Resolve every component of `path` but the last beneath dirfd with `resolve`
 * and return an O_PATH|O_DIRECTORY|O_CLOEXEC fd of that parent directory
 * (always a new fd, even when the parent is dirfd itself). The last component
 * is copied into *last. Errors as safe_openat2(); ENOENT for an empty path,
 * a last component over NAME_MAX is left to the *at() call (see so_last).
 */
int so_resolve_parent(int dirfd, const char *path, uint64_t resolve, struct so_last *last);

/* ------------------------------------------------------------------ shared by the operations (path.c) */

/* "." or ".." */
static inline bool so_is_dot_or_dotdot(const char *name)
{
	return name[0] == '.' && (name[1] == '\0' || (name[1] == '.' && name[2] == '\0'));
}

/* Open the object `path` names beneath dirfd with the resolver, as
 * O_PATH|O_CLOEXEC plus `oflags` (O_NOFOLLOW, O_DIRECTORY). NULL path: EFAULT.
 * (path.c) */
int so_op_open(int dirfd, const char *path, uint64_t resolve, int oflags);

/* ------------------------------------------------------------------ tree walk (walk.c) */

/* A walk (safe_walk_open()) of the directory open as topfd (O_RDONLY),
 * which is `name` in the directory pfd, with SAFE_WALK_* flags: for a caller
 * that has resolved and checked its top itself (safe_rmtree_beneath()).
 * Both are borrowed and used as they are (no descriptor of its own for
 * them): the caller leaves them alone until safe_walk_close(); topfd's
 * position is rewound. */
int so_walk_from(int pfd, const char *name, int topfd, uint64_t flags, struct safe_walk **w);

/* The subdirectory `name` of dfd opened to be read, by that single name and
 * never through a link (O_RDONLY|O_DIRECTORY|O_NOFOLLOW). With `keep_mount`
 * and openat2 (5.6+) the open itself keeps to dfd's mount (RESOLVE_NO_XDEV:
 * EXDEV for a mount point) and *same says so; otherwise *same is false and
 * the caller compares mount ids (so_other_mount()). For the directories a
 * walk enters and rmtree's top. */
int so_open_subdir(int dfd, const char *name, bool keep_mount, bool *same);

/* ------------------------------------------------------------------ identity (ident.c) */

/* The identity of an object: device, inode and (when the kernel reports it)
 * mount id, which tells bind mounts of one filesystem apart. The one answer
 * to "is this the same object?" in the library: so_same_inode(). */
struct so_ident {
	dev_t dev;
	ino_t ino;
	uint64_t mnt;
	bool have_mnt;
};

/* Identity of fd (name NULL or "") or of name relative to fd, never following
 * a trailing symlink, with the mount id: statx's (5.8+), else so_mount_id()'s,
 * else (a name on a filesystem without file handles) the procfs fdinfo of
 * the name opened O_PATH|O_NOFOLLOW. have_mnt is false only when nothing can
 * tell (no statx mount id, no file handles, no procfs fdinfo). Returns 0, or
 * -1 with errno: a resource error (EMFILE, ENFILE, ENOMEM) met while learning
 * the mount id is passed on, never turned into "unknown". */
int so_ident_at(int fd, const char *name, struct so_ident *id);

/* The same without the mount-id fallbacks (statx's mount id if it reports
 * one): for comparisons of inodes only (so_same_inode()). */
int so_inode_at(int fd, const char *name, struct so_ident *id);

/* What the walker needs to know of a descriptor: its identity, type and
 * owner. */
struct so_info {
	struct so_ident id;
	mode_t type;
	uid_t uid;
};

/* Identity, type and owner of fd (or AT_FDCWD), never following it if it is
 * an O_PATH symlink; with want_mnt, the mount id as so_ident_at() learns it
 * (id.have_mnt false only when nothing can tell: then so_other_mount() says
 * "another mount"). One statx where the kernel reports the mount id (5.8+).
 * Returns 0, or -1 with errno (a resource error passed on as it is). */
int so_info_of(int fd, bool want_mnt, struct so_info *in);

/* The mount id of fd (name NULL or "") or of name relative to fd where statx
 * does not report it (before 5.8): the file handle's (name_to_handle_at,
 * filesystems with handles), else, for a descriptor, its procfs fdinfo
 * entry (2 descriptors for a moment). 1 with *mnt set; 0 when neither can
 * tell (no handles, no verified procfs or no mnt_id line); -1 with errno for
 * a resource error (EMFILE, ENFILE, ENOMEM) or a name that went away. Keeps
 * errno unless it fails. */
int so_mount_id(int fd, const char *name, uint64_t *mnt);

/* The identity in a struct stat (no mount id). */
static inline struct so_ident so_stat_ident(const struct stat *st)
{
	struct so_ident id = { .dev = st->st_dev, .ino = st->st_ino, .mnt = 0, .have_mnt = false };
	return id;
}

/* The identity in a struct statx (mount id when its mask says so). */
static inline struct so_ident so_statx_ident(const struct statx *stx)
{
	struct so_ident id = {
		.dev = makedev(stx->stx_dev_major, stx->stx_dev_minor),
		.ino = stx->stx_ino,
		.have_mnt = (stx->stx_mask & STATX_MNT_ID) != 0,
	};
	id.mnt = id.have_mnt ? stx->stx_mnt_id : 0;
	return id;
}

/* The same object: same device and inode. (An inode number is reused only
 * after the object is gone, so a comparison with an object held open, or
 * reached again from a held directory, is exact.) */
static inline bool so_same_inode(const struct so_ident *a, const struct so_ident *b)
{
	return a->dev == b->dev && a->ino == b->ino;
}

/* True unless b is shown to be on a's mount: equal mount ids. Without a mount
 * id on either side the answer is true even on one device (fail closed: a
 * bind mount shares the device of its source, so devices cannot show one
 * mount); callers treat "another mount" as the boundary they refuse. */
static inline bool so_other_mount(const struct so_ident *a, const struct so_ident *b)
{
	if (a->have_mnt && b->have_mnt)
		return a->mnt != b->mnt;
#ifdef SAFEOPEN_MUTATE_MOUNT_BY_DEV
	/* Mutation (tests only): decide by the devices, which bind mounts share. */
	return a->dev != b->dev;
#endif
	return true;
}

/* ------------------------------------------------------------------ held chain (chain.c) */

/* The held chain of directories a descent stands in (chain.c states its
 * invariants and its two clients: the resolver's O_PATH levels, the tree
 * walk's readable ones): level 0 (the top) .. depth (cur), each recorded by
 * its single name in its parent. Held: level 0, a ring of up to
 * SO_CHAIN_RING of the deepest levels, up to SO_CHAIN_CKPT checkpoints above
 * it, and up to SO_CHAIN_RETIRED levels left by ".." waiting for a batched
 * close; other levels are reopened from the nearest held one by their names.
 * The fields are the module's; clients go through the functions. */
#define SO_CHAIN_RING 32
#define SO_CHAIN_CKPT 24
/* Ring, checkpoints, level 0: a client that retires nothing (the walk). */
#define SO_CHAIN_MAX_FDS 57
/* Levels left by ".." (and by an IN_ROOT jump) that wait for the next batched
 * close: the resolver's (a client that lends level 0). */
#define SO_CHAIN_RETIRED 8
/* The most descriptors one batch closes: a whole chain (ring, checkpoints,
 * retired levels, level 0). */
#define SO_FD_BATCH_MAX (SO_CHAIN_RING + SO_CHAIN_CKPT + SO_CHAIN_RETIRED + 1)

/* Descriptors of a chain to close together (sorted, distinct): one
 * close_range() per run of consecutive numbers (chain.c). */
struct so_fd_batch {
	int fd[SO_FD_BATCH_MAX];
	size_t n;
};
/* Add fd (>= 0, held in exactly one place of the chain: never twice). */
void so_fd_batch_add(struct so_fd_batch *b, int fd);
/* Close the batch's descriptors (it is empty afterwards); errno kept. */
void so_fd_batch_close(struct so_fd_batch *b);

/* Opens the subdirectory `name` (one name) of dfd as a level: a new
 * descriptor, or -1 with errno; *bits: the client's bits for that level. */
typedef int (*so_chain_open_fn)(void *ctx, int dfd, const char *name, unsigned int *bits);
/* Level l was reopened (a new open file description). */
typedef void (*so_chain_reopened_fn)(void *ctx, size_t l);

/* What a client tells the chain once (so_chain_init()). */
struct so_chain_client {
	so_chain_open_fn open;
	so_chain_reopened_fn reopened; /* or NULL */
	void *ctx;
	int oflags;              /* O_RDONLY or O_PATH: how a hop of names opens a level */
	bool ident;              /* record each level's identity, checked on re-descent */
	bool halves;             /* a full ring sheds its older half at once (else one level) */
	unsigned int keep_bits;  /* client bits a level keeps as a checkpoint or taken back */
	char *names;             /* first storage for the names, or NULL */
	size_t ncap;             /* its size */
};

/* A held level of the ring, by slot (level % SO_CHAIN_RING). */
struct so_chain_slot {
	int fd; /* or -1 (cur whose re-descent failed; a slot not in the ring) */
	unsigned int bits; /* the client's */
	size_t nend; /* its name ends at names[nend - 1] ('\0') */
};

struct so_chain_ckpt {
	size_t level;
	size_t nend;
	int fd;
	unsigned int bits;
};

struct so_chain {
	struct so_chain_client cl;
	size_t depth;
	size_t lo;   /* the ring: lo..depth */
	size_t ring; /* its length at most */
	int top;     /* level 0 */
	bool top_lent;
	struct so_chain_slot slot[SO_CHAIN_RING];
	struct so_chain_ckpt ck[SO_CHAIN_CKPT];
	size_t nck, ckmax;
	int retired[SO_CHAIN_RETIRED];
	size_t nretired;
	int back; /* the level the last so_chain_up() left, or -1 */
	unsigned int back_bits;
	char *names; /* "n1\0n2\0...nd\0": levels 1..depth, nlen bytes */
	size_t nlen, ncap;
	struct so_ident *id; /* id[0..depth] with cl.ident, else NULL */
	size_t idcap;
};

/* An empty chain (depth 0, level 0 not set): 0, or -1 with ENOMEM. */
int so_chain_init(struct so_chain *c, const struct so_chain_client *cl);
/* Level 0 is fd, identity *id (NULL without cl.ident); lent: the client's,
 * never closed by the chain. */
void so_chain_set_top(struct so_chain *c, int fd, const struct so_ident *id, bool lent);
/* Level depth + 1: fd (owned; closed on failure), `name` in cur, identity
 * *id (NULL without cl.ident), client bits. 0, or -1 with ENOMEM. */
int so_chain_push(struct so_chain *c, int fd, const char *name, const struct so_ident *id,
		  unsigned int bits);
/* Close cur; its parent is cur (held or not: so_chain_hold()). */
void so_chain_pop(struct so_chain *c);
/* ".." from cur (held, depth >= 1): its parent, held or re-descended by
 * its names from the nearest held level, is cur. The level left is retired
 * (so_chain_back() takes it back) when the parent was held, closed with the
 * rest of the batch when it was re-descended. 0 (parent was held) or 1 (re-descended), -1 with errno;
 * *left_bits: the bits of the level left. */
int so_chain_up(struct so_chain *c, unsigned int *left_bits);
/* Level t (cur or its parent) held again if it is not: 0, or -1 with errno
 * and *failed the shallowest level given up (EAGAIN: not the level walked). */
int so_chain_hold(struct so_chain *c, size_t t, size_t *failed);
/* The level the last so_chain_up() left, for the component right after it
 * only (cleared), or -1. */
int so_chain_back(struct so_chain *c);
/* Descend into `back` (from so_chain_back()) again if `name` is its name:
 * true if it did. */
bool so_chain_take_back(struct so_chain *c, int back, const char *name);
/* Back to level 0; the levels held are retired (or closed). */
void so_chain_jump(struct so_chain *c);
/* Close every level but level 0; depth 0. */
void so_chain_drop(struct so_chain *c);
/* Under EMFILE/ENFILE give one held descriptor back (never level 0 or cur):
 * true if one was. */
bool so_chain_give_back(struct so_chain *c, int err);
/* The depth of cur. */
static inline size_t so_chain_depth(const struct so_chain *c)
{
	return c->depth;
}
/* cur's descriptor (level 0's at depth 0), or -1 when it is not held. */
static inline int so_chain_cur(const struct so_chain *c)
{
	return c->depth == 0 ? c->top : c->slot[c->depth % SO_CHAIN_RING].fd;
}
/* cur's client bits (depth >= 1, cur held). */
static inline unsigned int *so_chain_bits(struct so_chain *c)
{
	return &c->slot[c->depth % SO_CHAIN_RING].bits;
}
/* Level l's descriptor, or -1 when it is not held. */
int so_chain_fd(const struct so_chain *c, size_t l);
/* Level l's identity when first entered (cl.ident). */
static inline const struct so_ident *so_chain_id(const struct so_chain *c, size_t l)
{
	return &c->id[l];
}
/* Level l's name (l >= 1, held), NUL-terminated in buf. */
const char *so_chain_name(const struct so_chain *c, size_t l, char buf[NAME_MAX + 1]);
/* The names of levels 1..depth, each NUL-terminated: *len bytes. */
static inline const char *so_chain_names(const struct so_chain *c, size_t *len)
{
	*len = c->nlen;
	return c->names;
}
/* Close every level (level 0 unless lent) and free the chain. */
void so_chain_free(struct so_chain *c);
#if defined(SAFEOPEN_MUTATE_WALK_CLIMB) || defined(SAFEOPEN_MUTATE_RMTREE_CLIMB)
/* Mutation (tests only): held level l's descriptor is fd from now on. */
void so_chain_swap_fd(struct so_chain *c, size_t l, int fd);
#endif

/* ------------------------------------------------------------------ procfs (procfs.c) */

/* The directory `sub` of the verified procfs (e.g. "sys/fs"), opened from its
 * root without crossing a mount and checked like the fd directory: an O_PATH
 * descriptor; -1 with ENXIO where no verified procfs is available, or a
 * resource error as it is. */
int so_procfs_dir(const char *sub);

/* The mount id of fd read from its entry in the verified procfs fdinfo
 * directory (3.15+, any filesystem): the fallback where statx (5.8+) and
 * name_to_handle_at (filesystems with file handles) cannot tell. 0, or -1
 * with errno (ENXIO: no verified procfs, or no mnt_id there). */
int so_procfs_mnt_id(int fd, uint64_t *mnt);

/* Out of descriptors or memory: a failure of this process right now, never
 * an answer about the system (no procfs, no permission) that a fallback or a
 * caller could act on for good. Such errnos are always passed on. */
static inline bool so_resource_errno(int err)
{
	return err == EMFILE || err == ENFILE || err == ENOMEM;
}

/* The name of fd's entry in a procfs fd directory: its decimal number
 * ("-2147483648" and the NUL fit). */
#define SO_FD_NAME_SIZE 16

/*
 * An O_PATH directory fd of this thread's fd table in a verified procfs
 * ("/proc/thread-self/fd", falling back to "/proc/self/fd"), and the name of
 * fd's entry in it written to name: what an operation follows to act on
 * exactly the object open as fd. /proc must be a procfs (PROC_SUPER_MAGIC) at
 * its root inode, and every step is checked to stay on it. Returns the
 * directory fd, or -1 with errno: ENXIO only when no verified procfs is
 * available; a resource error (see so_resource_errno()) as it is.
 */
int so_procfs_entry(int fd, char name[SO_FD_NAME_SIZE]);

/* A path string to fd's own magic link ("/proc/thread-self/fd/N" or
 * "/proc/self/fd/N"), for the calls that take only a path: given out after
 * the procfs is verified and the string is checked to lead to the inode open
 * as fd (the premise of its use: procfs.c). 0, or -1 with errno (ENXIO, or a
 * resource error as it is). */
#define SO_PROCFS_PATH_SIZE 64
int so_procfs_path(int fd, char path[SO_PROCFS_PATH_SIZE]);

/*
 * Reopen `fd` through the verified procfs with `flags` (O_CLOEXEC added),
 * checking that the result is the same inode as fd. Returns the new fd or -1.
 */
int so_procfs_reopen(int fd, int flags);

/* ------------------------------------------------------------------ mkdir -p with undo (mkdir_all.c) */

/* One directory below so_made_dirs.topfd, in the order the walk met them. */
struct so_made_step {
	size_t off;         /* its name: names + off */
	struct so_ident id; /* what it was when the walk opened it */
	bool ours;          /* created by this call (not by a concurrent creator) */
	int fd;             /* ours: an O_PATH fd of it, held until the record is
			     * freed so that its inode number cannot be given to
			     * another directory meanwhile (-1: could not be held,
			     * never removed) */
};

/* The directories one so_mkdir_all() call created, for undoing them. */
struct so_made_dirs {
	int topfd;                  /* O_PATH fd of the existing directory the first
				     * new one was made in, or -1: nothing made */
	size_t n;                   /* steps recorded below topfd */
	char *names;                /* their names, NUL-terminated, outermost first */
	struct so_made_step *steps;
};

#define SO_MADE_DIRS_INIT { .topfd = -1, .n = 0, .names = NULL, .steps = NULL }

/*
 * mkdir -p beneath dirfd (safe_mkdir_all_beneath() with its resolve bits
 * already normalised): the last directory gets `mode`, missing parents
 * `parent_mode`. With `made` (initialised with SO_MADE_DIRS_INIT) the
 * directories it creates are recorded, also when it fails: the caller then
 * calls so_made_dirs_undo() or so_made_dirs_free(). Returns an
 * O_PATH|O_DIRECTORY|O_CLOEXEC fd or -1 with errno.
 */
int so_mkdir_all(int dirfd, const char *path, mode_t mode, mode_t parent_mode, uint64_t resolve,
		 struct so_made_dirs *made);
/*
 * The missing parents of path's last name, each made with dir_mode (the
 * umask applies) and recorded in *made: an O_PATH fd of the directory part,
 * with *name the last component (a plain name) and *name_resolve the bits
 * that open that name in it (the caller's scope, BENEATH for IN_ROOT). -2: a
 * path of one component, nothing to make; -1 with errno.
 */
int so_make_parents(int dirfd, const char *path, mode_t dir_mode, uint64_t resolve,
		    struct so_made_dirs *made, const char **name, uint64_t *name_resolve);
/* Remove the recorded directories that are still where they were made, empty
 * and the same inode, deepest first; anything else stays. Frees the record.
 * Keeps errno. */
void so_made_dirs_undo(struct so_made_dirs *made);
/* Forget the record (the directories stay). */
void so_made_dirs_free(struct so_made_dirs *made);

/* ------------------------------------------------------------------ diagnostics (diag.c) */

/* Link bodies a walk remembers for the diagnostics: every one it may follow. */
#define SO_DIAG_BODIES (SO_MAXSYMLINKS + 1)
struct so_diag_body {
	size_t end_dist; /* distance of its end from the end of the walk's buffer */
	size_t len;
};
/* What a walk keeps for the diagnostics, only while so_diag_on(). */
struct so_diag_walk {
	bool on;
	size_t at_dist; /* the component looked up last: distance from the buffer's end, or 0 */
	size_t at_len;
	size_t nbodies;
	struct so_diag_body bodies[SO_DIAG_BODIES];
	char name[NAME_MAX + 1];
};
/* Did this thread ask for diagnostics (safe_diag_enable())? */
bool so_diag_on(void);
/* Forget the record (at the start of a resolution). */
void so_diag_clear(void);
/* The walk looks up `name` (len bytes, in buf of cap bytes). */
void so_diag_walk_comp(struct so_diag_walk *d, const char *buf, size_t cap, const char *name,
		       size_t len);
/* A link body of len bytes was spliced, ending end_dist bytes before the buffer's end. */
void so_diag_walk_body(struct so_diag_walk *d, size_t end_dist, size_t len);
/* The walk of a path of path_len bytes failed with err: record where. */
void so_diag_walk_fail(const struct so_diag_walk *d, size_t path_len, int err);
/* The failure is at path[offset..offset+n) (the path itself, or its last component). */
void so_diag_path(const char *path, size_t offset, size_t n, int err);
/* The record's errno is err (the kernel's, after a diagnostic walk). */
void so_diag_err(int err);

/* ------------------------------------------------------------------ misc (util.c) */

/* statx(2) of name in fd (NULL or "": fd itself), never following a link nor
 * triggering an automount; where statx is missing (before 4.11), the fields
 * struct stat has, with stx_mask STATX_BASIC_STATS. 0 or -1 with errno. */
int so_statx_at(int fd, const char *name, unsigned int mask, struct statx *stx);

/* A test hook: true when the environment variable `var` (SAFEOPEN_TEST_*)
 * is set and not "0". Outside the ABI, for the tests and benchmarks: each
 * hook only moves the library onto a path it takes on some real system (a
 * procfs numbering, an older kernel's statx), never off a check. Read at
 * each use (a test compares both ways in one process); ignored in set-user-ID
 * and set-group-ID programs (secure_getenv). */
bool so_test_hook(const char *var);

/* Fill buf with n random characters from [A-Za-z0-9] (getrandom, never
 * blocking; falls back to a time/pid mix only if getrandom is unavailable). */
void so_random_name(char *buf, size_t n);

/* The hidden names of the library's temporaries (tmpfile.c, the SAFE_REPLACE
 * operations of ops.c), and exactly what the sweep (sweep.c) removes:
 * SO_HIDDEN_PREFIX and SO_HIDDEN_RANDOM characters from [A-Za-z0-9]. A
 * creator draws a fresh name up to SO_HIDDEN_TRIES times (O_EXCL or its
 * equivalent), then gives up with EEXIST. */
#define SO_HIDDEN_PREFIX ".safeopen-"
#define SO_HIDDEN_RANDOM 16
#define SO_HIDDEN_LEN (sizeof(SO_HIDDEN_PREFIX) - 1 + SO_HIDDEN_RANDOM)
#define SO_HIDDEN_TRIES 32
/* A fresh hidden name in buf, NUL-terminated. */
void so_hidden_name(char buf[SO_HIDDEN_LEN + 1]);

#endif /* SAFEOPEN_INTERNAL_H */
