/* SPDX-License-Identifier: MIT */
/*
 * bench: the open methods (openat, the realpath pattern, raw openat2, the
 * library's fast path and walker, the fast path with the owner bit) and the check that each cell opens the
 * right object before it is timed.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "bench.h"

/* ------------------------------------------------------------------ the operations */

/* Raw openat2(2), retried on EAGAIN as openat2(2) asks of its callers (with
 * ".." in a path, any rename on the system can cause one) and as the library
 * does: on a machine where others are compiling it happens. */
static long raw_openat2(const char *path, int flags, mode_t mode, uint64_t resolve)
{
	struct open_how how = { .flags = (uint64_t)(unsigned int)flags, .mode = mode,
				.resolve = resolve };
	long fd;
	int tries = 0;
	do
		fd = syscall(SYS_openat2, g.rootfd, path, &how, sizeof(how));
	while (fd < 0 && errno == EAGAIN && ++tries < 128);
	return fd;
}

/* The common unsafe pattern: canonicalise with realpath(), check the prefix,
 * open the canonical name (racy: the tree can change between the two). For a
 * creation the parent is canonicalised. */
static int realpath_open(const char *path, int flags, mode_t mode, bool create)
{
	char full[PATH_MAX], res[PATH_MAX];
	size_t len = strlen(path), cut = len;
	if (create)
		while (cut > 0 && path[cut - 1] != '/')
			cut--;
	if (g.rootlen + len + 2 > sizeof(full)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	memcpy(full, g.root, g.rootlen);
	full[g.rootlen] = '/';
	memcpy(full + g.rootlen + 1, path, cut);
	full[g.rootlen + 1 + cut] = '\0';
	if (!realpath(full, res))
		return -1;
	if (strncmp(res, g.root, g.rootlen) != 0 ||
	    (res[g.rootlen] != '\0' && res[g.rootlen] != '/')) {
		errno = EXDEV;
		return -1;
	}
	if (create) {
		size_t rl = strlen(res);
		if (rl + 1 + (len - cut) + 1 > sizeof(res)) {
			errno = ENAMETOOLONG;
			return -1;
		}
		res[rl] = '/';
		memcpy(res + rl + 1, path + cut, len - cut + 1);
	}
	return open(res, flags, mode);
}

static int op_open(int m, const struct shape *s, const char *path)
{
	int flags = (s->create ? O_WRONLY | O_CREAT | O_EXCL : O_RDONLY) | O_CLOEXEC;
	mode_t mode = s->create ? 0600 : 0;
	switch (m) {
	case M_OPENAT:
		return openat(g.rootfd, path, flags, mode);
	case M_REALPATH:
		return realpath_open(path, flags, mode, s->create);
	case M_O2_BENEATH:
		return (int)raw_openat2(path, flags, mode, RESOLVE_BENEATH);
	case M_O2_INROOT:
		return (int)raw_openat2(path, flags, mode, RESOLVE_IN_ROOT);
	default: {
		struct safe_open_how how = {
			.flags = (uint64_t)(unsigned int)flags,
			.mode = mode,
			.resolve = (s->in_root ? SAFE_RESOLVE_IN_ROOT : SAFE_RESOLVE_BENEATH) |
				   (m == M_WALK ? SAFE_RESOLVE_USERSPACE : 0) |
				   (m == M_OWNER ? SAFE_RESOLVE_SYMLINKS_OWNER_MATCH : 0),
		};
		return safe_openat2(g.rootfd, path, &how, sizeof(how));
	}
	}
}

bool cell_creates(const struct cell *c)
{
	return c->kind == K_TMP || c->shape->create;
}

/* A fresh name for a creating cell ("new/n..." or "tmp/t..."). */
void fresh_name(const struct cell *c, char *buf, size_t n)
{
	if (c->kind == K_TMP)
		snprintf(buf, n, "tmp/t%08u", g.seq++);
	else
		snprintf(buf, n, "%sn%08u", c->shape->path, g.seq++);
}

int cell_op(const struct cell *c, const char *path)
{
	if (c->kind == K_TMP)
		return op_tmp(c->method, c->nx, path);
	return op_open(c->method, c->shape, path);
}

/* ------------------------------------------------------------------ verification */

static int count_entries(const char *dir)
{
	int fd = openat(g.rootfd, dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	DIR *d = fdopendir(fd);
	if (!d) {
		close(fd);
		return -1;
	}
	int n = 0;
	for (struct dirent *e; (e = readdir(d));)
		if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
			n++;
	closedir(d);
	return n;
}

/* Check one result: fd (or -1 with err) for `path`. Returns true when right;
 * otherwise describes the problem in c->detail. */
static bool check_result(struct cell *c, const char *path, int fd, int err)
{
	const struct shape *s = c->kind == K_OPEN ? c->shape : NULL;
	const char *want = s ? (s->create ? path : s->expect) : path;
	struct stat got, exp;

	if (!want) { /* ENOENT expected */
		if (fd < 0 && err == ENOENT)
			return true;
		if (fd >= 0)
			snprintf(c->detail, sizeof(c->detail), "opened an object, ENOENT expected");
		else
			snprintf(c->detail, sizeof(c->detail), "%s, ENOENT expected", errname(err));
		return false;
	}
	if (fd < 0) {
		snprintf(c->detail, sizeof(c->detail), "%s, expected %.60s", errname(err), want);
		return false;
	}
	if (fstat(fd, &got) < 0 || fstatat(g.rootfd, want, &exp, AT_SYMLINK_NOFOLLOW) < 0) {
		snprintf(c->detail, sizeof(c->detail), "%.60s: cannot stat (%s)", want,
			 errname(errno));
		return false;
	}
	if (got.st_dev != exp.st_dev || got.st_ino != exp.st_ino || !S_ISREG(got.st_mode)) {
		snprintf(c->detail, sizeof(c->detail), "opened another object than %.60s", want);
		return false;
	}
	if (s && !s->create && (got.st_dev != s->dev || got.st_ino != s->ino)) {
		snprintf(c->detail, sizeof(c->detail), "%.60s changed during the run", want);
		return false;
	}
	if (c->kind == K_TMP) {
		char v[64];
		for (int i = 0; i < c->nx; i++) {
			ssize_t n = fgetxattr(fd, xattrs[i].name, v, sizeof(v));
			if (n != (ssize_t)xattrs[i].size || memcmp(v, xattrs[i].value, xattrs[i].size)) {
				snprintf(c->detail, sizeof(c->detail), "xattr %s missing or wrong",
					 xattrs[i].name);
				return false;
			}
		}
		int n = count_entries("tmp");
		if (n != 1) {
			snprintf(c->detail, sizeof(c->detail),
				 "%d entries in tmp/ after one creation (1 expected)", n);
			return false;
		}
	}
	return true;
}

/* Run the operation 1 + 8 times, each result checked; count the heap
 * allocations of the last 8. */
/* Whether the raw openat2 system call is there (not an old kernel, not
 * blocked by a seccomp profile). */
bool raw_openat2_exists(void)
{
	int saved = errno;
	long r = syscall(SYS_openat2, AT_FDCWD, NULL, NULL, 0);
	bool have = !(r < 0 && (errno == ENOSYS || errno == EPERM));
	errno = saved;
	return have;
}

void verify_cell(struct cell *c)
{
	enum { CALLS = 9 };
	unsigned long allocs = 0;
	char path[sizeof(shapes[0].path) + 16];

	c->st = ST_OK;
	c->allocs = -1;
	c->sys = -1;
	for (int i = 0; i < CALLS; i++) {
		if (cell_creates(c))
			fresh_name(c, path, sizeof(path));
		else
			snprintf(path, sizeof(path), "%s", c->shape->path);
		unsigned long a0 = allocs_now();
		int fd = cell_op(c, path);
		int err = errno;
		unsigned long a1 = allocs_now();
		if (i > 0)
			allocs += a1 - a0;
		bool ok = check_result(c, path, fd, err);
		if (fd >= 0)
			close(fd);
		if (cell_creates(c))
			unlinkat(g.rootfd, path, 0);
		if (ok)
			continue;
		if ((c->method == M_O2_BENEATH || c->method == M_O2_INROOT) && fd < 0 &&
		    (err == ENOSYS || err == EPERM) && !raw_openat2_exists()) {
			/* An old kernel or a seccomp profile: the library runs its
			 * walker there, and the raw column has nothing to say. */
			c->st = ST_SKIP;
			snprintf(c->detail, sizeof(c->detail),
				 "oracle skipped: raw openat2 fails with %s here", strerrorname_np(err));
		} else if (fd < 0 && err == ENOSYS) {
			c->st = ST_NOSYS;
			snprintf(c->detail, sizeof(c->detail), "not implemented yet (ENOSYS)");
		} else if (c->kind == K_OPEN && c->shape->in_root && c->method == M_O2_BENEATH &&
			   fd < 0 && err == EXDEV) {
			c->st = ST_NA;
			snprintf(c->detail, sizeof(c->detail),
				 "EXDEV, as it must: BENEATH refuses an absolute symlink");
		} else if ((c->method == M_O2_BENEATH || c->method == M_O2_INROOT) && fd < 0 &&
			   err == EAGAIN) {
			/* openat2's ".." check fails on any rename anywhere on the
			 * system; under a parallel `make check` 128 retries can all
			 * lose. That is the kernel's limit, not a wrong answer. */
			c->st = ST_NA;
			snprintf(c->detail, sizeof(c->detail),
				 "EAGAIN after 128 retries: renames elsewhere on the system");
		} else {
			c->st = ST_WRONG;
		}
		return;
	}
	if (counting_allocs)
		c->allocs = (double)allocs / (CALLS - 1);
}
