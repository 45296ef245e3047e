/* SPDX-License-Identifier: MIT */
/*
 * The openat2(2) fast path, its one-time availability probe, and the public
 * entry points safe_openat2() / safe_openat_beneath().
 *
 * DRAFT: the resolver issue owns this file and completes flag validation.
 */
#include "internal.h"

#include <linux/openat2.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/syscall.h>

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

int so_copy_how(const struct safe_open_how *how, size_t size, struct safe_open_how *out)
{
	if (!how)
		return so_fail(EFAULT);
	if (size < SAFE_OPEN_HOW_SIZE_VER0)
		return so_fail(EINVAL);
	if (size > sizeof(*out)) {
		const unsigned char *tail = (const unsigned char *)how + sizeof(*out);
		for (size_t i = 0; i < size - sizeof(*out); i++)
			if (tail[i])
				return so_fail(E2BIG);
	}
	memcpy(out, how, sizeof(*out));
	return 0;
}

int so_validate_how(const struct safe_open_how *how)
{
	if (how->resolve & ~SO_RESOLVE_ALL_MASK)
		return so_fail(EINVAL);
	if (!(how->resolve & SAFE_RESOLVE_BENEATH) == !(how->resolve & SAFE_RESOLVE_IN_ROOT))
		return so_fail(EINVAL);
	return 0;
}

int so_openat2_fast(int dirfd, const char *path, const struct safe_open_how *how)
{
	struct open_how kh = {
		.flags = how->flags | O_CLOEXEC,
		.mode = how->mode,
		.resolve = how->resolve & SO_RESOLVE_KERNEL_MASK,
	};
	for (int i = 0; i < SO_RACE_RETRIES; i++) {
		long fd = sys_openat2(dirfd, path, &kh, sizeof(kh));
		if (fd >= 0)
			return (int)fd;
		if (errno == ENOSYS) {
			atomic_store_explicit(&openat2_state, PROBE_MISSING, memory_order_relaxed);
			return -1;
		}
		if (errno != EAGAIN)
			return -1;
	}
	return so_fail(EAGAIN);
}

int so_open_validated(int dirfd, const char *path, const struct safe_open_how *how)
{
	if (!(how->resolve & (SAFE_RESOLVE_USERSPACE | SAFE_RESOLVE_NO_DOTDOT)) && so_have_openat2()) {
		int fd = so_openat2_fast(dirfd, path, how);
		if (fd >= 0 || errno != ENOSYS)
			return fd;
	}
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
