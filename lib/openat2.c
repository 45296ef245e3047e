/* SPDX-License-Identifier: MIT */
/*
 * The openat2(2) fast path, its one-time availability probe, and the public
 * entry points safe_openat2() / safe_openat_beneath().
 *
 * Both paths share one validation (so_copy_how, so_validate_how), so they
 * agree on every EINVAL/E2BIG/EFAULT; the walker (resolve.c) then reproduces
 * the kernel's resolution errors.
 */
#include "internal.h"

#include <linux/openat2.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/syscall.h>

/* The public constants are the kernel's (the header checks this too when the
 * uapi header comes first; here it always does), and the structures match. */
_Static_assert(SAFE_RESOLVE_NO_XDEV == RESOLVE_NO_XDEV, "RESOLVE_NO_XDEV");
_Static_assert(SAFE_RESOLVE_NO_MAGICLINKS == RESOLVE_NO_MAGICLINKS, "RESOLVE_NO_MAGICLINKS");
_Static_assert(SAFE_RESOLVE_NO_SYMLINKS == RESOLVE_NO_SYMLINKS, "RESOLVE_NO_SYMLINKS");
_Static_assert(SAFE_RESOLVE_BENEATH == RESOLVE_BENEATH, "RESOLVE_BENEATH");
_Static_assert(SAFE_RESOLVE_IN_ROOT == RESOLVE_IN_ROOT, "RESOLVE_IN_ROOT");
#ifdef RESOLVE_CACHED
_Static_assert(SAFE_RESOLVE_CACHED == RESOLVE_CACHED, "RESOLVE_CACHED");
#endif
_Static_assert(sizeof(struct safe_open_how) == sizeof(struct open_how), "struct open_how");
_Static_assert(sizeof(struct safe_open_how) == SAFE_OPEN_HOW_SIZE_VER0, "SAFE_OPEN_HOW_SIZE_VER0");

enum { PROBE_UNKNOWN = 0, PROBE_HAVE = 1, PROBE_MISSING = 2 };
static atomic_int openat2_state = PROBE_UNKNOWN;

static long sys_openat2(int dirfd, const char *path, struct open_how *how, size_t size)
{
	return syscall(SYS_openat2, dirfd, path, how, size);
}

bool so_have_openat2(void)
{
	int st = atomic_load_explicit(&openat2_state, memory_order_relaxed);
	if (SO_LIKELY(st != PROBE_UNKNOWN))
		return st == PROBE_HAVE;
	/* A size below OPEN_HOW_SIZE_VER0 is rejected with EINVAL before anything
	 * else is looked at, so this probe touches no file. ENOSYS (old kernel)
	 * and EPERM (seccomp profiles of some container runtimes) mean: walk. */
	int saved = errno;
	long r = sys_openat2(AT_FDCWD, NULL, NULL, 0);
	st = (r < 0 && (errno == ENOSYS || errno == EPERM)) ? PROBE_MISSING : PROBE_HAVE;
	errno = saved;
	atomic_store_explicit(&openat2_state, st, memory_order_relaxed);
	return st == PROBE_HAVE;
}

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
int so_copy_how(const struct safe_open_how *how, size_t size, struct safe_open_how *out)
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
int so_validate_how(const struct safe_open_how *how)
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

/* Whether openat2 itself is refused in this process (seccomp EPERM/ENOSYS):
 * the probe is repeated when a real call fails with EPERM, which openat2 can
 * also return for ordinary reasons (O_NOATIME, immutable files). */
static bool openat2_blocked(void)
{
	int saved = errno;
	long r = sys_openat2(AT_FDCWD, NULL, NULL, 0);
	bool blocked = r < 0 && (errno == ENOSYS || errno == EPERM);
	errno = saved;
	return blocked;
}

int so_openat2_fast(int dirfd, const char *path, const struct safe_open_how *how)
{
	struct open_how kh = {
		.flags = how->flags | O_CLOEXEC,
		.mode = how->mode,
		.resolve = how->resolve & (SO_RESOLVE_KERNEL_MASK | SO_RESOLVE_CACHED),
	};
	for (int i = 0; i < SO_RACE_RETRIES; i++) {
		long fd = sys_openat2(dirfd, path, &kh, sizeof(kh));
		if (fd >= 0)
			return (int)fd;
		if (errno == ENOSYS || (errno == EPERM && openat2_blocked())) {
			atomic_store_explicit(&openat2_state, PROBE_MISSING, memory_order_relaxed);
			return so_fail(ENOSYS);
		}
		if (errno != EAGAIN || (how->resolve & SO_RESOLVE_CACHED))
			return -1; /* RESOLVE_CACHED's EAGAIN is no race */
	}
	return so_fail(EAGAIN);
}

/*
 * Two kernel answers are handed to the walker:
 * - EAGAIN for ".." is global: a rename anywhere in the system during the
 *   lookup (rename_lock), or a mount anywhere (mount_lock), fails it. Under a
 *   steady stream of unrelated renames a path with ".." can fail every retry.
 *   The walker's ".." check is local to the directories it walked, so after
 *   the bounded retries the walker gets its turn (with its own bounded
 *   retries) before EAGAIN is returned. RESOLVE_CACHED's EAGAIN is final.
 * - ELOOP: the kernel counts the links followed in an abandoned RCU-walk
 *   attempt again in the ref-walk retry (total_link_count is per open, not
 *   per attempt). RCU walks are abandoned, e.g., at ".." in the root under
 *   BENEATH, so a walk with more than 20 links can get ELOOP where the
 *   answer is EXDEV (or, after a dcache miss, success). The walker counts
 *   each link once; it confirms every ELOOP (an error path: nothing was
 *   opened or created), so both paths give the same, deterministic answer.
 */
int so_open_validated(int dirfd, const char *path, const struct safe_open_how *how)
{
	bool walk_only = how->resolve & (SAFE_RESOLVE_USERSPACE | SAFE_RESOLVE_NO_DOTDOT);
	if (!walk_only && so_have_openat2()) {
		int fd = so_openat2_fast(dirfd, path, how);
		if (fd >= 0)
			return fd;
		if (errno == EAGAIN && (how->resolve & SO_RESOLVE_CACHED))
			return fd;
		if (errno != ENOSYS && errno != EAGAIN && errno != ELOOP)
			return fd;
	}
	/* Only the kernel can look a path up from its caches alone. */
	if (how->resolve & SO_RESOLVE_CACHED)
		return so_fail(EAGAIN);
	return so_walk_open(dirfd, path, how);
}

int safe_openat2(int dirfd, const char *path, const struct safe_open_how *how, size_t size)
{
	struct safe_open_how h;
	if (so_copy_how(how, size, &h) < 0)
		return -1;
	if (so_validate_how(&h) < 0)
		return -1;
	if (!path)
		return so_fail(EFAULT);
	return so_open_validated(dirfd, path, &h);
}

int safe_openat_beneath(int dirfd, const char *path, int flags, mode_t mode)
{
	struct safe_open_how h = {
		.flags = (uint64_t)(unsigned int)flags,
		.mode = mode,
		.resolve = SAFE_RESOLVE_BENEATH | SAFE_RESOLVE_NO_MAGICLINKS,
	};
	return safe_openat2(dirfd, path, &h, sizeof(h));
}
