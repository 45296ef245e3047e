/* SPDX-License-Identifier: MIT */
/*
 * The openat2(2) fast path (its availability probe is in probe.c). It is given
 * an already validated how (open.c); the walker (resolve.c) uses it too, for
 * its last component.
 */
#include "internal.h"

#include <linux/openat2.h>
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

static long sys_openat2(int dirfd, const char *path, struct open_how *how, size_t size)
{
	return syscall(SYS_openat2, dirfd, path, how, size);
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
		if (errno == ENOSYS || (errno == EPERM && so_openat2_blocked())) {
			so_feature_set(SO_FEAT_OPENAT2, SO_PROBE_MISSING);
			return so_fail(ENOSYS);
		}
		if (errno != EAGAIN || (how->resolve & SO_RESOLVE_CACHED))
			return -1; /* RESOLVE_CACHED's EAGAIN is no race */
	}
	return so_fail(EAGAIN);
}
