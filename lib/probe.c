/* SPDX-License-Identifier: MIT */
/*
 * What this kernel and sandbox can do. Every feature the library may have
 * to do without keeps one process-wide atomic here (so_features[], indexed by
 * enum so_feature): the library's only globals.
 *
 * feature          | states and who sets them          | without it
 * -----------------+-----------------------------------+------------------------------------
 * OPENAT2          | HAVE/MISSING by so_have_openat2() | the walker (resolve.c) resolves
 *                  | on first use (ENOSYS or seccomp   | every path; procfs.c steps with
 *                  | EPERM: MISSING); MISSING when a   | openat() and checks where it
 *                  | real call says ENOSYS, or EPERM   | landed
 *                  | that so_openat2_blocked() confirms|
 * EMPTY_PATH_LINK  | HAVE after a linkat(AT_EMPTY_PATH)| tmpfile.c probes each file (link
 *                  | of an unnamed file was accepted   | to "."), links through the
 *                  | (tmpfile.c); UNKNOWN again when it| verified procfs, or falls back to
 *                  | fails (credentials dropped)       | a hidden named file
 * RENAMEAT2        | MISSING on ENOSYS (so_renameat2)  | renameat() without flags;
 *                  |                                   | NOREPLACE of a non-directory as
 *                  |                                   | link + unlink (so_rename_by_link)
 * FCHMODAT2        | MISSING on ENOSYS (ops.c)         | chmod through the fd's magic link
 * XATTRAT          | MISSING on ENOSYS (ops.c)         | path calls on the magic link
 * FACCESSAT2       | MISSING on ENOSYS/EINVAL          | the walker looks "." up (readlinkat)
 *                  | (resolve.c; EPERM asks again)     |
 * CLOSE_RANGE      | MISSING on any failure (resolve.c)| close() each descriptor
 *
 * Not cached, because the answer is per object rather than per process:
 * statx's mount id (ident.c: each call reports it or not, and the walker
 * falls back to name_to_handle_at()), O_TMPFILE (per filesystem), a
 * filesystem's EINVAL for a renameat2 flag.
 *
 * UNKNOWN means "try the call". A state only ever moves towards the fallback,
 * except EMPTY_PATH_LINK, whose HAVE is a hint that every use re-checks.
 *
 * Per-thread seccomp: a filter applies to the thread that installed it and
 * its later children, but these states are process-wide. So a MISSING
 * learned by a filtered thread sends every thread to the fallback, which is
 * always correct, only slower; and a filtered thread that finds HAVE gets the
 * filter's ENOSYS (or EPERM for openat2) from the real call, which is handled
 * on that call exactly as in the probe. No state is ever trusted to skip a
 * check that protects the caller.
 *
 * Relaxed ordering is enough: each state is an independent hint that
 * publishes no other memory; a stale read costs one failing system call.
 */
#include "internal.h"

#include <stdio.h> /* renameat */
#include <sys/syscall.h>

atomic_int so_features[SO_FEAT_COUNT];

/* A size below OPEN_HOW_SIZE_VER0 is rejected with EINVAL before anything
 * else is looked at, so this probe touches no file. ENOSYS (old kernel) and
 * EPERM (seccomp profiles of some container runtimes) mean: blocked. */
bool so_openat2_blocked(void)
{
	int saved = errno;
	long r = syscall(SYS_openat2, AT_FDCWD, NULL, NULL, 0);
	bool blocked = r < 0 && (errno == ENOSYS || errno == EPERM);
	errno = saved;
	return blocked;
}

bool so_have_openat2(void)
{
	int st = so_feature(SO_FEAT_OPENAT2);
	if (st != SO_PROBE_UNKNOWN)
		return st == SO_PROBE_HAVE;
	enum so_probe_state now = so_openat2_blocked() ? SO_PROBE_MISSING : SO_PROBE_HAVE;
	so_feature_set(SO_FEAT_OPENAT2, now);
	return now == SO_PROBE_HAVE;
}

int so_renameat2(int olddirfd, const char *oldname, int newdirfd, const char *newname,
		 unsigned int flags)
{
	if (!flags) /* renameat() is the same call, wherever renameat2 is missing too */
		return renameat(olddirfd, oldname, newdirfd, newname);
	if (so_lacks(SO_FEAT_RENAMEAT2))
		return so_fail(ENOSYS);
	if (syscall(SYS_renameat2, olddirfd, oldname, newdirfd, newname, flags) == 0)
		return 0;
	if (errno == ENOSYS)
		so_feature_set(SO_FEAT_RENAMEAT2, SO_PROBE_MISSING);
	else if (errno == EINVAL && flags)
		errno = ENOSYS; /* a filesystem without the flag: emulate, this time */
	return -1;
}

int so_rename_by_link(int olddirfd, const char *oldname, int newdirfd, const char *newname)
{
	if (linkat(olddirfd, oldname, newdirfd, newname, 0) < 0)
		return -1;
	if (unlinkat(olddirfd, oldname, 0) == 0)
		return 0;
	int err = errno;
	if (err == ENOENT) /* the old name went away meanwhile: renamed all the same */
		return 0;
	/* Both names are there: take the new one back while it is still the
	 * link made here (the old name's inode), never someone else's. */
	struct stat o, n;
	if (fstatat(olddirfd, oldname, &o, AT_SYMLINK_NOFOLLOW) == 0 &&
	    fstatat(newdirfd, newname, &n, AT_SYMLINK_NOFOLLOW) == 0) {
		struct so_ident oid = so_stat_ident(&o), nid = so_stat_ident(&n);
		if (so_same_inode(&oid, &nid))
			(void)unlinkat(newdirfd, newname, 0);
	}
	return so_fail(err);
}
