/* SPDX-License-Identifier: MIT */
/*
 * Cookbook: porting from realpath() + a prefix check.
 *
 *   port-realpath ROOT PATH
 *
 * Runs the common pattern and its replacement side by side and prints what
 * each decides. The old pattern has three flaws this program can show or
 * that the cookbook explains:
 *  1. the prefix test is a string test: ROOT "/srv/www" accepts
 *     "/srv/www-private/..." (shown here);
 *  2. between realpath() and open() anyone who can rename a directory or
 *     plant a symlink in the tree can redirect the open (a race; see
 *     tests/lib/test_concurrency.c for the attack);
 *  3. realpath() follows every symlink with the process's view of "/", so a
 *     tree that is a container's root resolves its absolute links against
 *     the host.
 * The replacement keeps the root as a descriptor and lets the resolution
 * itself stay beneath it: no string check, no window.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <safeopen.h>

/* BEFORE: the pattern found in many servers. Do not use. */
static int open_old(const char *root, const char *path)
{
	char joined[PATH_MAX * 2], real_root[PATH_MAX], real[PATH_MAX];
	(void)snprintf(joined, sizeof(joined), "%s/%s", root, path);
	if (!realpath(root, real_root) || !realpath(joined, real))
		return -1;
	if (strncmp(real, real_root, strlen(real_root)) != 0) { /* flaw 1 */
		errno = EXDEV;
		return -1;
	}
	return open(real, O_RDONLY | O_CLOEXEC); /* flaw 2: a window */
}

/* AFTER: one descriptor for the root (open it once, at startup), one call. */
static int open_new(int rootfd, const char *path)
{
	return safe_openat_beneath(rootfd, path, O_RDONLY, 0);
}

int main(int argc, char *argv[])
{
	if (argc != 3) {
		fprintf(stderr, "usage: %s ROOT PATH\n", argv[0]);
		return 2;
	}
	int rootfd = open(argv[1], O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (rootfd < 0) {
		perror(argv[1]);
		return 2;
	}
	int fd = open_old(argv[1], argv[2]);
	printf("realpath+prefix: %s\n", fd >= 0 ? "opened" : strerror(errno));
	if (fd >= 0)
		close(fd);
	fd = open_new(rootfd, argv[2]);
	printf("libsafeopen:     %s\n", fd >= 0 ? "opened" : strerror(errno));
	if (fd >= 0)
		close(fd);
	close(rootfd);
	return 0;
}
