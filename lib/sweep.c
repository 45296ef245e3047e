/* SPDX-License-Identifier: MIT */
/*
 * safe_tmpfile_sweep_beneath(): remove the hidden names (SO_HIDDEN_PREFIX
 * plus SO_HIDDEN_RANDOM characters, internal.h) that a process killed in the
 * middle of a tmpfile call or a SAFE_REPLACE operation left behind, once
 * they are old enough. Safety argument: at sweep_one().
 */
#include "internal.h"

#include <dirent.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>

/* Exactly the form so_hidden_name() produces. */
static bool is_hidden_name(const char *name)
{
	size_t plen = sizeof(SO_HIDDEN_PREFIX) - 1;
	if (strncmp(name, SO_HIDDEN_PREFIX, plen) != 0)
		return false;
#ifdef SAFEOPEN_MUTATE_SWEEP_PATTERN
	return true;
#endif
	for (size_t i = plen; i < SO_HIDDEN_LEN; i++) {
		char c = name[i]; /* a shorter name stops at its '\0' */
		if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')))
			return false;
	}
	return name[SO_HIDDEN_LEN] == '\0';
}

/* Was the file last changed (data or inode) at least min_age seconds ago?
 * A time in the future (clock steps, remote filesystems) is young. */
static bool old_enough(const struct stat *st, const struct timespec *now, unsigned int min_age)
{
#ifdef SAFEOPEN_MUTATE_SWEEP_AGE
	min_age = 0;
#endif
	if (min_age == 0)
		return true;
	struct timespec t = st->st_mtim;
	if (st->st_ctim.tv_sec > t.tv_sec ||
	    (st->st_ctim.tv_sec == t.tv_sec && st->st_ctim.tv_nsec > t.tv_nsec))
		t = st->st_ctim;
	if (t.tv_sec > now->tv_sec)
		return false;
	uint64_t age = (uint64_t)(now->tv_sec - t.tv_sec);
	return age > min_age || (age == min_age && now->tv_nsec >= t.tv_nsec);
}

/*
 * One candidate: 1 removed, 0 not ours to remove (or gone), -1 error.
 * Safety argument: the entry is pinned with O_PATH|O_NOFOLLOW (a symlink is
 * pinned itself, a mount point shows the mounted root, which is another
 * mount) and judged on that inode; unlinkat() then removes the name only if
 * it still leads to that inode, never following anything, always in dfd. The
 * remaining window between the last check and unlinkat() can only be used by
 * someone who may rename entries of dfd, which are the rights needed to
 * remove them (see the header).
 */
static int sweep_one(int dfd, const struct so_ident *dirid, const char *name,
		     const struct timespec *now, unsigned int min_age)
{
	(void)dirid; /* (unused only in a mutation build) */
	_cleanup_fd_ int fd = openat(dfd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? 0 : -1;
	struct stat st;
	struct so_ident id, again;
	if (fstat(fd, &st) < 0 || so_ident_at(fd, NULL, &id) < 0)
		return -1;
#ifndef SAFEOPEN_MUTATE_SWEEP_REGULAR
	if (!S_ISREG(st.st_mode))
		return 0;
#endif
#ifndef SAFEOPEN_MUTATE_SWEEP_XDEV
	if (so_other_mount(dirid, &id))
		return 0;
#endif
	if (!old_enough(&st, now, min_age))
		return 0;
#ifndef SAFEOPEN_MUTATE_SWEEP_RECHECK
	if (so_ident_at(dfd, name, &again) < 0)
		return errno == ENOENT ? 0 : -1;
	if (!so_same_inode(&id, &again))
		return 0;
#ifndef SAFEOPEN_MUTATE_SWEEP_XDEV
	if (so_other_mount(dirid, &again))
		return 0;
#endif
#else
	(void)again;
#endif
	if (unlinkat(dfd, name, 0) < 0)
		return errno == ENOENT ? 0 : -1;
	return 1;
}

int safe_tmpfile_sweep_beneath(int dirfd, const char *path, unsigned int min_age_seconds,
			       uint64_t flags, unsigned int *removedp)
{
	unsigned int dummy;
	if (!removedp)
		removedp = &dummy;
	*removedp = 0;
	uint64_t resolve;
	if (so_op_resolve(flags, 0, &resolve) < 0)
		return -1;
	if (!path)
		return so_fail(EFAULT);
	struct safe_open_how how = {
		.flags = O_RDONLY | O_DIRECTORY | O_CLOEXEC,
		.mode = 0,
		.resolve = resolve,
	};
	_cleanup_fd_ int dfd = so_open_validated(dirfd, path, &how);
	if (dfd < 0)
		return -1;
	struct so_ident dirid;
	if (so_ident_at(dfd, NULL, &dirid) < 0)
		return -1;
	struct timespec now;
	if (clock_gettime(CLOCK_REALTIME, &now) < 0)
		return -1;

	unsigned int removed = 0;
	int err = 0;
	_Alignas(struct dirent64) char buf[4096];
	for (;;) {
		long n = syscall(SYS_getdents64, dfd, buf, sizeof(buf));
		if (n < 0) {
			if (!err)
				err = errno;
			break;
		}
		if (n == 0)
			break;
		for (long off = 0; off < n;) {
			const struct dirent64 *de = (const void *)(buf + off);
			off += de->d_reclen;
#ifndef SAFEOPEN_MUTATE_SWEEP_REGULAR
			if (de->d_type != DT_REG && de->d_type != DT_UNKNOWN)
				continue;
#endif
			if (!is_hidden_name(de->d_name))
				continue;
			int r = sweep_one(dfd, &dirid, de->d_name, &now, min_age_seconds);
			if (r > 0 && removed < INT_MAX)
				*removedp = ++removed;
			else if (r < 0 && !err)
				err = errno;
		}
	}
	return err ? so_fail(err) : (int)removed;
}
