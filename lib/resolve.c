/* SPDX-License-Identifier: MIT */
/*
 * The userspace walker: openat2(2) RESOLVE_BENEATH / RESOLVE_IN_ROOT semantics
 * rebuilt from openat(O_PATH|O_NOFOLLOW), fstat/statx, readlinkat and one
 * final openat of a single name.
 *
 * Safety argument (see also doc/design.md, "The resolver").
 *
 * Invariant: the walk's current directory `cur` is always either the root
 * (dirfd) or a directory the walk reached from the root by steps of the two
 * kinds below. The walk knows the level of cur (0: the root) and records the
 * identity (st_dev, st_ino) of every directory on its chain root -> cur that
 * a ".." may climb back to: from the lowest level a ".." of the path climbs
 * to, and from the level of the first symlink followed on (a body may bring
 * ".."). Other levels cost one openat(O_DIRECTORY) each; a ".." to an
 * unrecorded level restarts the walk with every level recorded.
 *
 *  1. Descending: a single name (never containing '/') is opened relative to
 *     cur with O_PATH|O_NOFOLLOW. Whatever the name is at that instant, the
 *     object is a child of cur (or the root of a mount on that child), so it
 *     is beneath whenever cur is. Symlinks are never followed by the kernel:
 *     the walker reads the body (readlinkat() of the single name relative to
 *     cur, or of the link's own O_PATH fd) and splices it in front of the
 *     rest of the path, so a body is resolved with exactly the same rules
 *     as the path (an absolute body is EXDEV under BENEATH and restarts at
 *     the root under IN_ROOT; its ".." are checked).
 *  2. Climbing: ".." at depth 0 is EXDEV (BENEATH) or a no-op (IN_ROOT) and
 *     touches nothing above the root. At depth d > 0 the walker opens ".."
 *     of cur and accepts it only if its identity equals the recorded one
 *     of level d-1, the directory the walk descended from. A concurrent rename that moved cur
 *     elsewhere makes ".." a different directory: that is reported as a
 *     race, the whole resolution restarts (bounded: SO_RACE_RETRIES), then
 *     EAGAIN. Hence ".." only ever lands on a directory the walk itself
 *     reached by descending from the root, and a walk with ".." can reach
 *     nothing that a walk without ".." could not; the root's own parent is
 *     never opened at all.
 *
 * Magic links (procfs links whose target is not a path: /proc/PID/fd/N, exe,
 * cwd, root, map_files/, ns/) are never followed: a symlink on a procfs whose
 * inode number is below the range of procfs' own static entries (0xF0000000,
 * where /proc/self, /proc/thread-self, /proc/mounts, /proc/net live) is a
 * magic link: ELOOP with NO_MAGICLINKS, else EXDEV, as the kernel.
 *
 * NO_XDEV: every object the walk visits must carry the root's mount id
 * (statx STATX_MNT_ID, else name_to_handle_at), which catches bind mounts on
 * the same filesystem and mounts crossed by "..".
 *
 * The final component is opened with the caller's real flags by one openat()
 * of a single name relative to the verified parent, always with O_NOFOLLOW:
 * the object it touches (truncates, creates, opens as a FIFO/device) is a
 * child of a directory known to be beneath. If that open reports a symlink
 * (ELOOP, or ENOTDIR with O_DIRECTORY) and the link is to be followed, the
 * link is re-opened O_PATH|O_NOFOLLOW, checked to be a symlink and followed by
 * the walker. With NO_XDEV the name is checked O_PATH first, so the real open
 * never crosses a mount that was there before it.
 *
 * The walker holds a constant number of fds of its own whatever the depth
 * (the pinned cwd for AT_FDCWD, cur, and at most three while examining the
 * last component), all O_CLOEXEC, closed on every path. It allocates no
 * memory for a path within PATH_MAX with link bodies that fit next to it
 * (8 KiB in all) and 256 recorded levels (unrecorded ones cost nothing);
 * beyond that it grows heap buffers rather than fail.
 */
#include "internal.h"

#include <fcntl.h>
#include <linux/magic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/fsuid.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>

#ifndef ST_NOSYMFOLLOW
#define ST_NOSYMFOLLOW 0x2000
#endif
#ifndef STATX_MNT_ID
#define STATX_MNT_ID 0x1000U
#endif

/* procfs allocates the inode numbers of its static entries (proc_dir_entry:
 * /proc/self, /proc/thread-self, proc_symlink() links such as /proc/mounts)
 * from PROC_DYNAMIC_FIRST up; per-process entries (where every magic link
 * lives) get ordinary inode numbers below it. */
#define SO_PROC_DYNAMIC_FIRST 0xF0000000ULL

#define WALK_IDS 256
#define NO_LEVEL SIZE_MAX
#define WALK_BUF ((size_t)2 * PATH_MAX)
#define WALK_RACE (-2)     /* a race was detected: restart (bounded) */
#define WALK_NEED_IDS (-4) /* a ".." needs an identity that was not recorded */

struct walk_id {
	uint64_t dev;
	uint64_t ino;
};

struct walk {
	int rootfd;        /* borrowed dirfd, or AT_FDCWD */
	int oflags;        /* validated open flags */
	mode_t mode;
	uint64_t resolve;
	bool xdev;         /* SAFE_RESOLVE_NO_XDEV */
	uint64_t root_mnt; /* mount id of the root, with xdev */
	bool root_known;   /* root filled in (lazily) */
	struct walk_id root;
	/* Identities are recorded for the directories at levels >= known_from
	 * (ids[level - known_from]); NO_LEVEL: none (lean walk). known_init is
	 * where each attempt starts. */
	size_t known_from, known_init;

	int cur;           /* current directory: rootfd or own */
	int own;           /* our fd for cur, or -1 */
	size_t depth;      /* level of cur: 0 is the root */
	int links;         /* symlinks followed so far */

	struct walk_id *ids;
	size_t ids_cap;
	char *buf; /* the remaining path lives in buf[pos..cap-1], NUL at cap-1 */
	size_t cap;
	size_t pos;

	struct walk_id ids_local[WALK_IDS];
	char buf_local[WALK_BUF];
};

/* What get_info() reports about an fd. */
struct info {
	struct walk_id id;
	mode_t type;
	uid_t uid;
	uint64_t mnt;
};

static uint64_t mount_id_fallback(int fd, uint64_t dev)
{
	struct {
		struct file_handle fh;
		/* cppcheck-suppress unusedStructMember ; storage for fh.f_handle, never named */
		unsigned char pad[128];
	} h;
	int mnt = -1;
	h.fh.handle_bytes = 0;
	int saved = errno;
	/* With handle_bytes 0 the call fails with EOVERFLOW but reports the
	 * mount id; filesystems without file handles fail with EOPNOTSUPP. */
	if (name_to_handle_at(fd, "", &h.fh, &mnt, AT_EMPTY_PATH) == 0 || errno == EOVERFLOW) {
		errno = saved;
		return (uint64_t)(unsigned int)mnt;
	}
	errno = saved;
	/* Last resort (pre-5.8 kernel and a filesystem without handles): the
	 * device number, which misses bind mounts of the same filesystem. */
	return dev | (1ULL << 63);
}

/* Type, identity, owner and (with want_mnt) mount id of fd (or AT_FDCWD).
 * statx (4.11+) reports the mount id since 5.8; before that, or without
 * statx at all, name_to_handle_at() supplies it. */
static int info_of(int fd, bool want_mnt, struct info *in)
{
	if (want_mnt) {
		struct statx stx;
		unsigned int mask = STATX_TYPE | STATX_INO | STATX_UID | STATX_MNT_ID;
		if (statx(fd, "", AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW, mask, &stx) == 0) {
			in->uid = stx.stx_uid;
			in->id.dev = makedev(stx.stx_dev_major, stx.stx_dev_minor);
			in->id.ino = stx.stx_ino;
			in->type = stx.stx_mode & S_IFMT;
			if (stx.stx_mask & STATX_MNT_ID)
				in->mnt = stx.stx_mnt_id;
			else
				in->mnt = mount_id_fallback(fd, in->id.dev);
			return 0;
		}
		if (errno != ENOSYS)
			return -1;
	}
	struct stat st;
	if (fstatat(fd, "", &st, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) < 0)
		return -1;
	in->id.dev = st.st_dev;
	in->id.ino = st.st_ino;
	in->type = st.st_mode & S_IFMT;
	in->uid = st.st_uid;
	in->mnt = want_mnt ? mount_id_fallback(fd, st.st_dev) : 0;
	return 0;
}

static int get_info(const struct walk *w, int fd, struct info *in)
{
	return info_of(fd, w->xdev, in);
}

static bool same_id(const struct walk_id *a, const struct walk_id *b)
{
	return a->dev == b->dev && a->ino == b->ino;
}

static void set_cur(struct walk *w, int fd)
{
	so_close(w->own);
	w->own = fd;
	w->cur = fd;
}

static void jump_root(struct walk *w)
{
	so_close(w->own);
	w->own = -1;
	w->cur = w->rootfd;
	w->depth = 0;
}

/* Make ids[] hold the identity of `level` (>= known_from). */
static int ids_reserve(struct walk *w, size_t level)
{
	size_t need = level - w->known_from + 1;
	if (need <= w->ids_cap)
		return 0;
	size_t ncap = w->ids_cap * 2;
	while (ncap < need)
		ncap *= 2;
	struct walk_id *n = malloc(ncap * sizeof(*n));
	if (!n)
		return so_fail(ENOMEM);
	memcpy(n, w->ids, w->ids_cap * sizeof(*n));
	if (w->ids != w->ids_local)
		free(w->ids);
	w->ids = n;
	w->ids_cap = ncap;
	return 0;
}

/* Descend one level; record the identity if that level is tracked. */
static int push_id(struct walk *w, const struct walk_id *id)
{
	size_t level = w->depth + 1;
	if (level >= w->known_from) {
		if (ids_reserve(w, level) < 0)
			return -1;
		w->ids[level - w->known_from] = *id;
	}
	w->depth = level;
	return 0;
}

/*
 * A symlink is about to be followed: its body may climb with ".." into the
 * directories walked so far, so from here on every level at or above the
 * current one is tracked (the current directory's identity is taken now).
 * Levels below stay untracked; a ".." to one of them restarts the walk with
 * everything tracked.
 */
static int track_from_here(struct walk *w)
{
	if (w->depth == 0) {
		if (w->known_from > 1) {
			w->known_from = 1;
		}
		return 0;
	}
	if (w->known_from <= w->depth)
		return 0;
	struct stat st;
	if (fstatat(w->cur, "", &st, AT_EMPTY_PATH) < 0)
		return -1;
	w->known_from = w->depth;
	if (ids_reserve(w, w->depth) < 0)
		return -1;
	w->ids[0].dev = st.st_dev;
	w->ids[0].ino = st.st_ino;
	return 0;
}

/* Make room for at least `need` bytes in front of the remaining path (which
 * keeps its position relative to the end). Returns how far offsets moved. */
static ssize_t grow_buf(struct walk *w, size_t need)
{
	size_t used = w->cap - w->pos;
	size_t ncap = w->cap * 2;
	while (ncap < used + need + 1)
		ncap *= 2;
	if (ncap > (size_t)64 * PATH_MAX * (SO_MAXSYMLINKS + 1)) {
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

/* The identity of the root, fetched when first needed (the root is pinned by
 * the caller's dirfd, so it cannot change under us). */
static int root_id(struct walk *w, struct walk_id *id)
{
	if (!w->root_known) {
		struct stat st;
		if (fstatat(w->rootfd, "", &st, AT_EMPTY_PATH) < 0)
			return -1;
		w->root.dev = st.st_dev;
		w->root.ino = st.st_ino;
		w->root_known = true;
	}
	*id = w->root;
	return 0;
}

/* fs.protected_symlinks, read when it matters (rarely); unreadable: on. */
static bool protected_symlinks(void)
{
	char c = '1';
	int fd = open("/proc/sys/fs/protected_symlinks", O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd >= 0) {
		if (read(fd, &c, 1) != 1)
			c = '1';
		so_close(fd);
	}
	return c != '0';
}

/*
 * The kernel's may_follow_link() for a trailing symlink: with
 * fs.protected_symlinks, a link in a sticky world-writable directory is only
 * followed by its owner or when the directory's owner owns it (EACCES).
 */
static int may_follow_trailing(const struct walk *w, const struct info *lin)
{
	struct stat dst;
	if (fstatat(w->cur, "", &dst, AT_EMPTY_PATH) < 0)
		return -1;
	if ((dst.st_mode & (S_ISVTX | S_IWOTH)) != (S_ISVTX | S_IWOTH))
		return 0;
	if (lin->uid == dst.st_uid || lin->uid == (uid_t)setfsuid((uid_t)-1))
		return 0;
	return protected_symlinks() ? so_fail(EACCES) : 0;
}

/* Put the body (read to buf[0..r)) in front of the rest of the path, which
 * starts at buf[rest]; an absolute body is EXDEV or a jump to the root. */
static size_t first_dotdot_level(const char *p);

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
		memmove(w->buf + rest - r, w->buf, r);
		w->pos = rest - r;
		jump_root(w);
		size_t lexical = first_dotdot_level(w->buf + w->pos);
		w->known_from = lexical < w->known_init ? lexical : w->known_init;
		return 0;
	}
	if (track_from_here(w) < 0)
		return -1;
	memmove(w->buf + rest - r, w->buf, r);
	w->pos = rest - r;
	return 0;
}

/*
 * Follow the symlink open as `lfd` (identity in *in) whose name ends at
 * buf[rest] (the rest of the path, possibly "" or "/...", follows it): the
 * checks of the kernel's pick_link()/nd_jump_link() in the same order, then
 * the body is spliced in front of the rest. Closes nothing.
 */
static int follow_link(struct walk *w, int lfd, const struct info *in, size_t rest, bool trailing)
{
	if (w->links >= SO_MAXSYMLINKS)
		return so_fail(ELOOP);
	w->links++;
	if (trailing && may_follow_trailing(w, in) < 0)
		return -1;
	if (w->resolve & SAFE_RESOLVE_NO_SYMLINKS)
		return so_fail(ELOOP);
	struct statfs sfs;
	if (fstatfs(lfd, &sfs) < 0)
		return -1;
	if (sfs.f_flags & ST_NOSYMFOLLOW)
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
	if (sfs.f_type == PROC_SUPER_MAGIC && in->id.ino < SO_PROC_DYNAMIC_FIRST)
		return so_fail((w->resolve & SAFE_RESOLVE_NO_MAGICLINKS) ? ELOOP : EXDEV);
#endif
	return splice_body(w, (size_t)r, rest);
}

/*
 * A component in the middle of the path that is not a directory (its
 * O_DIRECTORY open said ENOTDIR), NUL-terminated in place at buf[end] where
 * `saved` belongs. Usually a symlink: read it by name into the free space in
 * front of the path, one syscall instead of open + fstat + readlink + close.
 * The name is a single component of cur, so whatever it is at that instant
 * is a child of a directory beneath the root. Links on procfs (magic links
 * are told apart by their inode), bodies that do not fit, and anything that
 * is not a symlink take the careful way through an O_PATH descriptor.
 */
static int middle_nondir(struct walk *w, const char *name, size_t end, char saved)
{
	ssize_t r = readlinkat(w->cur, name, w->buf, w->pos);
	if (r >= 0 && (size_t)r < w->pos) {
		struct statfs sfs;
		if (fstatfs(w->cur, &sfs) < 0)
			return -1;
		if (sfs.f_type != PROC_SUPER_MAGIC) {
			/* pick_link()'s checks; the body is already read (a
			 * failure to read takes the careful way, in order). */
			w->buf[end] = saved;
			if (w->links >= SO_MAXSYMLINKS)
				return so_fail(ELOOP);
			w->links++;
			if (w->resolve & SAFE_RESOLVE_NO_SYMLINKS)
				return so_fail(ELOOP);
			if (sfs.f_flags & ST_NOSYMFOLLOW)
				return so_fail(ELOOP);
			return splice_body(w, (size_t)r, end);
		}
	}
	_cleanup_fd_ int fd = openat(w->cur, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	w->buf[end] = saved;
	if (fd < 0)
		return errno == ENOENT ? WALK_RACE : -1; /* ENOTDIR a moment ago */
	struct info in;
	if (get_info(w, fd, &in) < 0)
		return -1;
	if (in.type == S_IFDIR)
		return WALK_RACE; /* ENOTDIR a moment ago */
	if (w->xdev && in.mnt != w->root_mnt)
		return so_fail(EXDEV);
	if (in.type != S_IFLNK)
		return so_fail(ENOTDIR);
	return follow_link(w, fd, &in, end, false);
}

/* A ".." step: see the safety argument at the top. */
static int step_dotdot(struct walk *w)
{
	if (w->resolve & SAFE_RESOLVE_NO_DOTDOT)
		return so_fail(EXDEV);
	if (w->depth == 0) {
		/* The kernel checks search permission on the directory before
		 * looking at any component, ".." at the root included. */
		int p = openat(w->cur, ".", O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (p < 0)
			return -1;
		so_close(p);
#ifndef SAFEOPEN_MUTATE_DOTDOT_ROOT
		if (w->resolve & SAFE_RESOLVE_BENEATH)
			return so_fail(EXDEV);
#endif
		return 0; /* IN_ROOT: ".." at the root stays there */
	}
	size_t up = w->depth - 1;
	if (up > 0 && up < w->known_from)
		return WALK_NEED_IDS;
	_cleanup_fd_ int fd = openat(w->cur, "..", O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -1;
	struct info in;
	struct walk_id want;
	if (get_info(w, fd, &in) < 0)
		return -1;
	if (up == 0) {
		if (root_id(w, &want) < 0)
			return -1;
	} else {
		want = w->ids[up - w->known_from];
	}
	if (!same_id(&in.id, &want))
		return WALK_RACE;
	if (w->xdev && in.mnt != w->root_mnt)
		return so_fail(EXDEV);
	w->depth--;
	set_cur(w, take_fd(&fd));
	return 0;
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
	int fd = openat(w->cur, ".", w->oflags | O_CLOEXEC, w->mode);
	if (fd >= 0 || !no_component || errno != EACCES || !(w->oflags & O_PATH))
		return fd;
	int saved = errno;
	long r = syscall(SYS_open_tree, w->cur, "", AT_EMPTY_PATH | O_CLOEXEC);
	if (r < 0) {
		errno = saved;
		return -1;
	}
	return (int)r;
}

/*
 * Open the last component `name` of cur with the caller's flags so that a
 * trailing symlink is never followed by the kernel. Where openat2 exists the
 * single name (with its trailing slash, if any: buf[end] holds `saved`
 * meanwhile) is opened with RESOLVE_NO_SYMLINKS: the descriptor then carries
 * exactly the caller's flags, as openat2 would give them (F_GETFL shows no
 * O_NOFOLLOW or O_DIRECTORY the caller did not ask for); a symlink is ELOOP.
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
static int open_last(struct walk *w, char *name, size_t end, bool slash, char saved,
		     bool *checked)
{
	*checked = false;
	if (so_have_openat2()) {
		const struct safe_open_how how = {
			.flags = (uint64_t)w->oflags,
			.mode = w->mode,
			.resolve = SAFE_RESOLVE_BENEATH | LAST_NO_SYMLINKS |
				   SAFE_RESOLVE_NO_MAGICLINKS | (w->xdev ? SAFE_RESOLVE_NO_XDEV : 0),
		};
		w->buf[end] = saved; /* "name" or "name/" (only slashes follow) */
		int fd = so_openat2_fast(w->cur, name, &how);
		int err = errno;
		w->buf[end] = '\0';
		if (fd >= 0 || err != ENOSYS) {
			*checked = true;
			errno = err;
			return fd;
		}
		/* ENOSYS: openat2 is refused here after all (a sandbox installed
		 * since the probe); the fast path has recorded that. */
	}
	int f = w->oflags | LAST_NOFOLLOW | O_CLOEXEC;
	if (slash)
		f |= O_DIRECTORY;
	return openat(w->cur, name, f, w->mode);
}

/* Result codes of final_name() besides an fd / -1. */
#define WALK_CONTINUE (-3)

/*
 * The last component `name` (NUL-terminated in place at buf[end], where the
 * character `saved` - NUL or the first trailing slash - belongs). Returns
 * the fd, -1, WALK_RACE, or WALK_CONTINUE after splicing a trailing symlink.
 */
static int final_name(struct walk *w, char *name, size_t end, bool slash, char saved)
{
	int of = w->oflags;
	bool creat = of & O_CREAT;
	bool follow = slash || (!(of & O_NOFOLLOW) && !(creat && (of & O_EXCL)));
	struct info in;

	if (creat && slash) {
		/* EISDIR, but after the search-permission check on the parent. */
		int p = openat(w->cur, ".", O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (p < 0)
			return -1;
		so_close(p);
		return so_fail(EISDIR);
	}

	_cleanup_fd_ int pre = -1;
	bool have_pre = false;
	struct info pin;
	if (w->xdev) {
		pre = openat(w->cur, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
		if (pre < 0) {
			if (errno != ENOENT || !(of & O_CREAT))
				return -1;
		} else {
			if (get_info(w, pre, &pin) < 0)
				return -1;
			if (pin.mnt != w->root_mnt)
				return so_fail(EXDEV);
			have_pre = true;
			if (pin.type == S_IFLNK && follow) {
				w->buf[end] = saved;
				if (follow_link(w, pre, &pin, end, true) < 0)
					return -1;
				return WALK_CONTINUE;
			}
		}
	}

	bool checked;
	_cleanup_fd_ int fd = open_last(w, name, end, slash, saved, &checked);
	if (fd >= 0) {
		/* O_PATH without O_NOFOLLOW opens a symlink itself through
		 * openat(O_NOFOLLOW): follow it here. */
		if ((of & O_PATH) && follow && !slash && !checked) {
			if (get_info(w, fd, &in) < 0)
				return -1;
			if (in.type == S_IFLNK) {
				w->buf[end] = saved;
				if (follow_link(w, fd, &in, end, true) < 0)
					return -1;
				return WALK_CONTINUE;
			}
		}
		if (w->xdev) {
			if (get_info(w, fd, &in) < 0)
				return -1;
			bool tmpfile = (of & O_TMPFILE) == O_TMPFILE;
			if (have_pre && !tmpfile && !same_id(&in.id, &pin.id))
				return WALK_RACE;
			if (in.mnt != w->root_mnt)
				return so_fail(EXDEV);
		}
		return take_fd(&fd);
	}
	int err = errno;
	if (!follow || (err != ELOOP && err != ENOTDIR))
		return -1;
	/* A symlink (or, for ENOTDIR, perhaps a non-directory): look at it. */
	_cleanup_fd_ int lfd = openat(w->cur, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (lfd < 0)
		return errno == ENOENT ? WALK_RACE : -1; /* ENOENT: it just vanished */
	if (get_info(w, lfd, &in) < 0)
		return -1;
	if (in.type == S_IFLNK) {
		if (w->xdev && in.mnt != w->root_mnt)
			return so_fail(EXDEV);
		w->buf[end] = saved;
		if (follow_link(w, lfd, &in, end, true) < 0)
			return -1;
		return WALK_CONTINUE;
	}
	if (err == ENOTDIR)
		return so_fail(ENOTDIR);
	return WALK_RACE;
}

/* One resolution attempt. Returns an fd, -1 with errno, or WALK_RACE. */
static int walk_once(struct walk *w, const char *path, size_t len)
{
	w->cur = w->rootfd;
	w->own = -1;
	w->depth = 0;
	w->links = 0;
	w->known_from = w->known_init;
	w->pos = w->cap - len - 1;
	memcpy(w->buf + w->pos, path, len + 1);

	for (;;) {
		char *s = w->buf + w->pos;
		while (*s == '/')
			s++;
		if (!*s)
			return open_cur(w, true);
		char *e = s;
		while (*e && *e != '/')
			e++;
		char *n = e;
		while (*n == '/')
			n++;
		bool last = !*n;
		bool slash = last && n != e;
		size_t clen = (size_t)(e - s);
		size_t end = (size_t)(e - w->buf);

		if (clen == 1 && s[0] == '.') {
			if (last)
				return open_cur(w, false);
			w->pos = (size_t)(n - w->buf);
			continue;
		}
		if (clen == 2 && s[0] == '.' && s[1] == '.') {
			int r = step_dotdot(w);
			if (r < 0)
				return r;
			if (last)
				return open_cur(w, false);
			w->pos = (size_t)(n - w->buf);
			continue;
		}

		char saved = *e;
		*e = '\0';
		if (last) {
			/* final_name() puts `saved` back before splicing. */
			int r = final_name(w, s, end, slash, saved);
			if (r != WALK_CONTINUE)
				return r;
			continue;
		}

		/* In the middle: a directory, or a symlink to follow. */
		int dflags = O_PATH | O_NOFOLLOW | O_DIRECTORY | O_CLOEXEC;
		_cleanup_fd_ int fd = openat(w->cur, s, dflags);
		if (fd < 0) {
			if (errno != ENOTDIR) {
				*e = saved;
				return -1;
			}
			int r = middle_nondir(w, s, end, saved);
			if (r < 0)
				return r;
			continue;
		}
		*e = saved;
		if (w->xdev || w->depth + 1 >= w->known_from) {
			/* A level a ".." may climb back to: record it. */
			struct info in;
			if (get_info(w, fd, &in) < 0)
				return -1;
#ifndef SAFEOPEN_MUTATE_XDEV
			if (w->xdev && in.mnt != w->root_mnt)
				return so_fail(EXDEV);
#endif
			if (push_id(w, &in.id) < 0)
				return -1;
		} else {
			w->depth++;
		}
		set_cur(w, take_fd(&fd));
		w->pos = (size_t)(n - w->buf);
	}
}

/*
 * The lowest level above the root that a ".." of the path itself climbs to
 * (NO_LEVEL if none): only directories from that level on need their
 * identity recorded, until a symlink body may bring other "..".
 */
static size_t first_dotdot_level(const char *p)
{
	size_t level = 0, min = NO_LEVEL;
	while (*p) {
		while (*p == '/')
			p++;
		const char *e = p;
		while (*e && *e != '/')
			e++;
		size_t n = (size_t)(e - p);
		if (n == 2 && p[0] == '.' && p[1] == '.') {
			if (level > 0 && --level > 0 && level < min)
				min = level;
		} else if (n > 0 && !(n == 1 && p[0] == '.')) {
			level++;
		}
		p = e;
	}
	return min;
}

/*
 * The walker's entry point (safety argument: top of this file). Path checks
 * in the kernel's order (EFAULT, ENOENT, ENAMETOOLONG, EXDEV for an absolute
 * path under BENEATH before the dirfd is looked at), then walk_once() until
 * it neither detects a race nor needs identities it did not record; races
 * are retried SO_RACE_RETRIES times, then EAGAIN. Everything the walk opened
 * is closed on every path; heap buffers, if any, are freed.
 */
int so_walk_open(int dirfd, const char *path, const struct safe_open_how *how)
{
	size_t len = so_path_len(path);
	if (len == (size_t)-1)
		return -1;
	if (path[0] == '/' && (how->resolve & SAFE_RESOLVE_BENEATH))
		return so_fail(EXDEV);

	struct walk *w = NULL;
	struct walk wl;
	w = &wl;
	w->rootfd = dirfd;
	w->oflags = (int)how->flags;
	w->mode = (mode_t)how->mode;
	w->resolve = how->resolve;
	w->xdev = how->resolve & SAFE_RESOLVE_NO_XDEV;
	w->root_known = false;
	w->ids = w->ids_local;
	w->ids_cap = WALK_IDS;
	w->buf = w->buf_local;
	w->cap = WALK_BUF;
	w->own = -1;

	int ret = -1;
	/* Pin the current directory for the whole call, as the kernel does: a
	 * chdir() by another thread must not move the root under the walk. If
	 * "." cannot be opened (no search permission), the walk itself reports
	 * the kernel's error on AT_FDCWD. */
	_cleanup_fd_ int cwdfd = -1;
	if (dirfd == AT_FDCWD) {
		cwdfd = openat(AT_FDCWD, ".", O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (cwdfd >= 0)
			w->rootfd = dirfd = cwdfd;
	}
	if (w->xdev) {
		struct info rin;
		if (info_of(dirfd, true, &rin) < 0)
			goto out;
		if (rin.type != S_IFDIR) {
			errno = ENOTDIR;
			goto out;
		}
		w->root = rin.id;
		w->root_known = true;
		w->root_mnt = rin.mnt;
	}

	/* Identities are only needed for "..": record them from the lowest
	 * level a ".." of the path climbs to (all with NO_XDEV, which stats
	 * every step anyway); a symlink extends that (track_from_here). */
	w->known_init = w->xdev ? 1 : first_dotdot_level(path);
	for (int i = 0; i < SO_RACE_RETRIES; i++) {
		ret = walk_once(w, path, len);
		so_closep(&w->own);
		if (ret == WALK_NEED_IDS && w->known_init > 1) {
			/* Not a race: walk again recording every level. */
			w->known_init = 1;
			i--;
			continue;
		}
		if (ret == WALK_NEED_IDS) { /* cannot happen: every level recorded */
			errno = EAGAIN;
			ret = -1;
		}
		if (ret != WALK_RACE)
			goto out;
		/* Buffers may have grown; keep them for the retry. */
	}
	errno = EAGAIN;
	ret = -1;
out:
	if (w->ids != w->ids_local)
		free(w->ids);
	if (w->buf != w->buf_local)
		free(w->buf);
	return ret;
}
