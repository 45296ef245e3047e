/* SPDX-License-Identifier: MIT */
/*
 * bench: the safe_tmpfile_xattr() methods (the library with and without
 * O_TMPFILE, a raw O_TMPFILE sequence, mkstemp + rename) and their section.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "bench.h"

/* The raw sequence: O_TMPFILE in the parent, fsetxattr, link the inode in. */
static int raw_tmpfile(const char *path, int nx)
{
	int fd = openat(g.rootfd, "tmp", O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	if (fd < 0)
		return -1;
	for (int i = 0; i < nx; i++)
		if (fsetxattr(fd, xattrs[i].name, xattrs[i].value, xattrs[i].size, 0) < 0)
			goto fail;
	if (linkat(fd, "", g.rootfd, path, AT_EMPTY_PATH) == 0)
		return fd;
	if (errno == ENOENT || errno == EPERM) {
		char proc[64];
		snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
		if (linkat(AT_FDCWD, proc, g.rootfd, path, AT_SYMLINK_FOLLOW) == 0)
			return fd;
	}
fail:
	close(fd);
	return -1;
}

/* The classic sequence: mkstemp beside the name, fsetxattr, rename. */
static int mkstemp_tmpfile(const char *path, int nx)
{
	char tmpl[PATH_MAX], final[PATH_MAX];
	if (snprintf(tmpl, sizeof(tmpl), "%s/tmp/.tmp.XXXXXX", g.root) >= (int)sizeof(tmpl) ||
	    snprintf(final, sizeof(final), "%s/%s", g.root, path) >= (int)sizeof(final)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	int fd = mkostemp(tmpl, O_CLOEXEC);
	if (fd < 0)
		return -1;
	for (int i = 0; i < nx; i++)
		if (fsetxattr(fd, xattrs[i].name, xattrs[i].value, xattrs[i].size, 0) < 0)
			goto fail;
	if (rename(tmpl, final) == 0)
		return fd;
fail:
	unlink(tmpl);
	close(fd);
	return -1;
}

int op_tmp(int m, int nx, const char *path)
{
	static int env_mode = -1; /* the library reads SAFEOPEN_NO_O_TMPFILE per creation */
	switch (m) {
	case T_SAFE:
	case T_SAFE_FALLBACK:
		if (env_mode != m) {
			if (m == T_SAFE_FALLBACK)
				setenv("SAFEOPEN_NO_O_TMPFILE", "1", 1);
			else
				unsetenv("SAFEOPEN_NO_O_TMPFILE");
			env_mode = m;
		}
		return safe_tmpfile_xattr(g.rootfd, path, 0600, nx ? xattrs : NULL, (size_t)nx, 0);
	case T_RAW:
		return raw_tmpfile(path, nx);
	default:
		return mkstemp_tmpfile(path, nx);
	}
}

void print_tmpfile_section(void)
{
	printf("\nsafe_tmpfile_xattr: ns per create+close of tmp/NAME (unlink untimed)\n");
	printf("%-16s", "xattrs");
	for (int m = 0; m < NR_T; m++)
		printf(" %15s", t_head[m]);
	if (!g.verify_only)
		printf(" %8s %8s %8s", "safe/raw", "safe/mks", "fb/mks");
	printf("\n");
	for (int r = 0; r < NR_XATTR_ROWS && !stop; r++) {
		const struct cell *row = tmp_cells[r];
		measure_row(tmp_cells[r], NR_T);
		printf("%-16d", xattr_rows[r]);
		for (int m = 0; m < NR_T; m++)
			print_cell(&row[m], 15);
		if (!g.verify_only) {
			print_ratio(&row[T_SAFE], &row[T_RAW], 8);
			print_ratio(&row[T_SAFE], &row[T_MKSTEMP], 8);
			print_ratio(&row[T_SAFE_FALLBACK], &row[T_MKSTEMP], 8);
		}
		printf("\n");
		fflush(stdout);
	}
}
