/* SPDX-License-Identifier: MIT */
/*
 * The public entry points safe_openat2(), safe_openat_beneath() and
 * safe_openat_in_root(): the validation of (how, size) and the choice between
 * the openat2 fast path (openat2.c) and the userspace walker (resolve.c). Both paths are given the
 * same validated how, so they agree on every EINVAL/E2BIG/EFAULT; each then
 * reproduces the kernel's resolution errors. Dependencies point one way:
 * this file calls both, neither calls back.
 */
#include "internal.h"

#include <string.h>

/*
 * The open(2) flags openat2() accepts (the kernel's VALID_OPEN_FLAGS). glibc
 * defines O_LARGEFILE as 0 on 64-bit targets; the kernel bit differs per
 * architecture.
 */
#if defined(__x86_64__) || defined(__i386__) || defined(__s390__) || defined(__riscv) || \
	defined(__loongarch__)
#define SO_KERNEL_O_LARGEFILE 0100000
#elif defined(__aarch64__) || defined(__arm__) || defined(__mips__)
#define SO_KERNEL_O_LARGEFILE ((O_DIRECTORY == 040000) ? 0400000 : 020000)
#elif defined(__powerpc__)
#define SO_KERNEL_O_LARGEFILE 0200000
#else
#define SO_KERNEL_O_LARGEFILE (O_LARGEFILE ? O_LARGEFILE : 0100000)
#endif
#define SO_VALID_OPEN_FLAGS                                                                  \
	((uint64_t)(O_ACCMODE | O_CREAT | O_EXCL | O_NOCTTY | O_TRUNC | O_APPEND | O_NONBLOCK | \
		    O_SYNC | O_DSYNC | O_ASYNC | O_DIRECT | SO_KERNEL_O_LARGEFILE | O_DIRECTORY |  \
		    O_NOFOLLOW | O_NOATIME | O_CLOEXEC | O_PATH | O_TMPFILE))
/* The only flags O_PATH may be combined with. */
#define SO_O_PATH_FLAGS ((uint64_t)(O_DIRECTORY | O_NOFOLLOW | O_PATH | O_CLOEXEC))
/* The bit that makes O_TMPFILE (glibc's O_TMPFILE includes O_DIRECTORY). */
#define SO_O_TMPFILE_BIT ((uint64_t)(O_TMPFILE & ~O_DIRECTORY))

/*
 * The kernel's copy_struct_from_user() rules for sys_openat2(), in its order:
 * a size below VER0 is EINVAL, a size above a page is E2BIG, then the struct is
 * read (EFAULT) and any nonzero byte past the known fields is E2BIG.
 */
static int copy_how(const struct safe_open_how *how, size_t size, struct safe_open_how *out)
{
	if (size < SAFE_OPEN_HOW_SIZE_VER0)
		return so_fail(EINVAL);
	if (size > sizeof(*out)) {
		long page = sysconf(_SC_PAGESIZE);
		if (size > (size_t)(page > 0 ? page : 4096))
			return so_fail(E2BIG);
	}
	if (!how)
		return so_fail(EFAULT);
	if (size > sizeof(*out)) {
		const unsigned char *tail = (const unsigned char *)how + sizeof(*out);
		for (size_t i = 0; i < size - sizeof(*out); i++)
			if (tail[i])
				return so_fail(E2BIG);
	}
	memcpy(out, how, sizeof(*out));
	return 0;
}

/*
 * build_open_flags() of the kernel (every failure there is EINVAL, so their
 * order does not matter), plus this library's rule that exactly one of
 * BENEATH and IN_ROOT is set. RESOLVE_CACHED is accepted like the kernel does;
 * its EAGAIN for O_CREAT/O_TRUNC/O_TMPFILE comes last, as in the kernel.
 */
static int validate_how(const struct safe_open_how *how)
{
	uint64_t flags = how->flags & ~(uint64_t)O_CLOEXEC;
	if (flags & ~SO_VALID_OPEN_FLAGS)
		return so_fail(EINVAL);
	if (how->resolve & ~(SO_RESOLVE_ALL_MASK | SO_RESOLVE_CACHED))
		return so_fail(EINVAL);
	if (!(how->resolve & SAFE_RESOLVE_BENEATH) == !(how->resolve & SAFE_RESOLVE_IN_ROOT))
		return so_fail(EINVAL);
	if (flags & ((uint64_t)O_CREAT | SO_O_TMPFILE_BIT)) {
		if (how->mode & ~(uint64_t)07777)
			return so_fail(EINVAL);
	} else if (how->mode) {
		return so_fail(EINVAL);
	}
	if ((flags & (uint64_t)(O_DIRECTORY | O_CREAT)) == (uint64_t)(O_DIRECTORY | O_CREAT))
		return so_fail(EINVAL);
	if (flags & SO_O_TMPFILE_BIT) {
		if (!(flags & O_DIRECTORY))
			return so_fail(EINVAL);
		if ((flags & O_ACCMODE) == O_RDONLY)
			return so_fail(EINVAL);
	}
	if ((flags & O_PATH) && (flags & ~SO_O_PATH_FLAGS))
		return so_fail(EINVAL);
	uint64_t uncached = (uint64_t)(O_TRUNC | O_CREAT) | SO_O_TMPFILE_BIT;
	if ((how->resolve & SO_RESOLVE_CACHED) && (flags & uncached))
		return so_fail(EAGAIN);
	return 0;
}

/*
 * Two kernel answers are handed to the walker:
 * - EAGAIN for ".." is global: a rename anywhere in the system during the
 *   lookup (rename_lock), or a mount anywhere (mount_lock), fails it. Under a
 *   steady stream of unrelated renames a path with ".." can fail every retry.
 *   The walker's ".." does not depend on other renames (it returns to a level
 *   it holds), so after SO_FAST_EAGAIN_RETRIES the walker resolves the path
 *   (with its own bounded retries) before EAGAIN is returned: a rename storm
 *   is a slowdown, not an error. RESOLVE_CACHED's EAGAIN is final.
 * - ELOOP: the kernel counts the links followed in an abandoned RCU-walk
 *   attempt again in the ref-walk retry (total_link_count is per open, not
 *   per attempt). RCU walks are abandoned, e.g., at ".." in the root under
 *   BENEATH, so a walk with more than SO_ELOOP_TRUSTED links can get ELOOP
 *   where the answer is EXDEV (or, after a dcache miss, success). The walker
 *   counts each link once and overrides the kernel's ELOOP only in that case:
 *   a walk that follows at most SO_ELOOP_TRUSTED links keeps the kernel's
 *   ELOOP (NO_SYMLINKS, NO_MAGICLINKS, nosymfollow, O_NOFOLLOW are the
 *   kernel's to judge), and stops before its final open, so nothing the
 *   kernel refused is opened or created (SO_RESOLVE_KERNEL_ELOOP).
 */
/*
 * Diagnostics only (diag.c): openat2() failed with err; a walk of the
 * userspace walker that changes nothing (O_PATH, with the caller's
 * O_NOFOLLOW and O_DIRECTORY only) records where. If it gets through, the
 * open failed at the last component (O_EXCL, a permission, a type). The
 * result of that walk decides nothing; errno stays err.
 */
static void diag_fast(int dirfd, const char *path, const struct safe_open_how *how, int err)
{
	struct safe_open_how h = {
		.flags = O_PATH | O_CLOEXEC | (how->flags & (uint64_t)(O_NOFOLLOW | O_DIRECTORY)),
		.mode = 0,
		.resolve = (how->resolve & SO_RESOLVE_ALL_MASK) | SAFE_RESOLVE_USERSPACE,
	};
	int fd = so_walk_open(dirfd, path, &h);
	if (fd >= 0) {
		so_close(fd);
		struct so_path_end pe;
		so_path_end(path, &pe);
		so_diag_path(path, pe.last.start, pe.last.end - pe.last.start, err);
	}
	so_diag_err(err);
	errno = err;
}

/*
 * SAFE_RESOLVE_SYMLINKS_OWNER_MATCH has no kernel counterpart, but a path
 * without links needs none: the fast path asks openat2 with
 * RESOLVE_NO_SYMLINKS added (the same single call as without the bit), and
 * only its ELOOP (a link met, or a refusal the walker reproduces) hands the
 * path to the walker, which judges every link it follows. That ELOOP comes
 * from a walk that followed no link, so it is never the spurious kind above:
 * no SO_RESOLVE_KERNEL_ELOOP. With NO_SYMLINKS no link is followed at all,
 * so the owner rule has nothing to judge (the stricter bit wins).
 */
int so_open_validated(int dirfd, const char *path, const struct safe_open_how *how)
{
	struct safe_open_how h = *how;
	if (h.resolve & SAFE_RESOLVE_NO_SYMLINKS)
		h.resolve &= ~SAFE_RESOLVE_SYMLINKS_OWNER_MATCH;
	bool owner = h.resolve & SAFE_RESOLVE_SYMLINKS_OWNER_MATCH;
	bool walk_only = h.resolve & (SAFE_RESOLVE_USERSPACE | SAFE_RESOLVE_NO_DOTDOT |
				      SAFE_RESOLVE_REPORT_ESCAPE);
	if (so_diag_on())
		so_diag_clear();
	if (!walk_only && so_have_openat2()) {
		struct safe_open_how fast = h;
		if (owner)
			fast.resolve |= SAFE_RESOLVE_NO_SYMLINKS;
		int fd = so_openat2_fast(dirfd, path, &fast);
		if (fd >= 0)
			return fd;
		if (errno == EAGAIN && (h.resolve & SO_RESOLVE_CACHED))
			return fd;
		if (errno != ENOSYS && errno != EAGAIN && errno != ELOOP) {
			if (so_diag_on())
				diag_fast(dirfd, path, &h, errno);
			return fd;
		}
		if (errno == ELOOP && !owner) {
#ifndef SAFEOPEN_MUTATE_ELOOP_RECHECK
			h.resolve |= SO_RESOLVE_KERNEL_ELOOP;
#endif
			return so_walk_open(dirfd, path, &h);
		}
	}
	/* Only the kernel can look a path up from its caches alone. */
	if (h.resolve & SO_RESOLVE_CACHED)
		return so_fail(EAGAIN);
	return so_walk_open(dirfd, path, &h);
}

/*
 * The openat2() probe runs once when the library is loaded, so that a
 * process that forks before its first call (a pre-forking or fork-per-request
 * server) hands the answer to every child instead of each child probing
 * again. It is one system call that touches no file (probe.c), and only a
 * hint like every probe state: a seccomp filter installed later is noticed by
 * the real call, which handles ENOSYS/EPERM exactly as the probe would.
 */
__attribute__((constructor)) static void probe_at_load(void)
{
	(void)so_have_openat2();
}

int safe_openat2(int dirfd, const char *path, const struct safe_open_how *how, size_t size)
{
	struct safe_open_how h;
	if (copy_how(how, size, &h) < 0)
		return -1;
	if (validate_how(&h) < 0)
		return -1;
	if (!path)
		return so_fail(EFAULT);
	return so_open_validated(dirfd, path, &h);
}

/*
 * The two short forms stand in for openat(2), so they keep its habit of
 * ignoring the mode unless O_CREAT or O_TMPFILE asks for one (openat2(2), and
 * so safe_openat2(), rejects such a mode with EINVAL). Only the mode is
 * relaxed: every other rule of safe_openat2() applies unchanged.
 */
static int open_short(int dirfd, const char *path, int flags, mode_t mode, uint64_t resolve)
{
	uint64_t f = (uint64_t)(unsigned int)flags;
	struct safe_open_how h = {
		.flags = f,
		.mode = (f & ((uint64_t)O_CREAT | SO_O_TMPFILE_BIT)) ? mode : 0,
		.resolve = resolve,
	};
	return safe_openat2(dirfd, path, &h, sizeof(h));
}

int safe_openat_beneath(int dirfd, const char *path, int flags, mode_t mode)
{
	return open_short(dirfd, path, flags, mode,
			  SAFE_RESOLVE_BENEATH | SAFE_RESOLVE_NO_MAGICLINKS);
}

int safe_openat_in_root(int dirfd, const char *path, int flags, mode_t mode)
{
	return open_short(dirfd, path, flags, mode,
			  SAFE_RESOLVE_IN_ROOT | SAFE_RESOLVE_NO_MAGICLINKS);
}
