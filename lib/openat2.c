/* SPDX-License-Identifier: MIT */
/*
 * The openat2(2) fast path and its one-time availability probe. It is given
 * an already validated how (open.c); the walker (resolve.c) uses it too, for
 * its last component.
 */
#include "internal.h"

#include <linux/openat2.h>
#include <stdatomic.h>
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
	for (int i = 0; i < SO_FAST_EAGAIN_RETRIES; i++) {
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
