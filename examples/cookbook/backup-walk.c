/* SPDX-License-Identifier: MIT */
/*
 * backup-walk ROOT PATH: what a backup agent does with a user's tree: list
 * every entry beneath ROOT/PATH and read every regular file, printing
 * "f SIZE FNV-1a PATH", "l PATH -> BODY" or "d PATH". Links are recorded, never
 * followed; whatever the user renames or swaps meanwhile, nothing outside
 * ROOT is listed or read. Exit 1 if an entry failed (the others are done).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#ifndef STATX_TYPE
#include <linux/stat.h> /* struct statx: a C library without statx (musl 1.2.3) */
#endif
#include <unistd.h>

#include <safeopen.h>

/* Read the regular file (dirfd, name) whose statx the walk gave: opened by
 * its single name without following a link, and checked to be that file. */
static int read_file(int dirfd, const char *name, const struct statx *stx, uint64_t *hash)
{
	int fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	struct stat st;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_ino != stx->stx_ino) {
		close(fd);
		errno = EAGAIN; /* replaced since it was listed */
		return -1;
	}
	char buf[65536];
	ssize_t n;
	*hash = 1469598103934665603ULL;
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		for (ssize_t i = 0; i < n; i++)
			*hash = (*hash ^ (unsigned char)buf[i]) * 1099511628211ULL;
	close(fd);
	return n < 0 ? -1 : 0;
}

int main(int argc, char *argv[])
{
	if (argc != 3) {
		fprintf(stderr, "usage: %s ROOT PATH\n", argv[0]);
		return 2;
	}
	int root = open(argv[1], O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (root < 0) {
		perror(argv[1]);
		return 1;
	}
	struct safe_walk *w;
	if (safe_walk_open(root, argv[2], SAFE_WALK_XDEV, &w) < 0) {
		fprintf(stderr, "%s: %s\n", argv[2], strerror(errno));
		close(root);
		return 1;
	}
	struct safe_walk_entry e;
	int r, status = 0;
	while ((r = safe_walk_next(w, &e)) > 0) {
		if (e.error) {
			fprintf(stderr, "%s: %s\n", e.path, strerror(e.error));
			status = 1;
			continue;
		}
		mode_t type = e.stx->stx_mode & S_IFMT;
		if (type == S_IFDIR) {
			printf("d %s\n", e.path);
		} else if (type == S_IFLNK) {
			char body[PATH_MAX];
			ssize_t n = readlinkat(e.dirfd, e.name, body, sizeof(body) - 1);
			if (n < 0) {
				fprintf(stderr, "%s: %s\n", e.path, strerror(errno));
				status = 1;
				continue;
			}
			body[n] = '\0';
			printf("l %s -> %s\n", e.path, body);
		} else if (type == S_IFREG) {
			uint64_t hash;
			if (read_file(e.dirfd, e.name, e.stx, &hash) < 0) {
				fprintf(stderr, "%s: %s\n", e.path, strerror(errno));
				status = 1;
				continue;
			}
			printf("f %llu %016llx %s\n", (unsigned long long)e.stx->stx_size,
			       (unsigned long long)hash, e.path);
		}
	}
	if (r < 0) {
		perror("walk");
		status = 1;
	}
	safe_walk_close(w);
	close(root);
	return status;
}
