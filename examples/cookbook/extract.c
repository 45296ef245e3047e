/* SPDX-License-Identifier: MIT */
/*
 * Cookbook: extract an archive entry by entry, safely.
 *
 *   extract DEST < ARCHIVE.tar
 *
 * Reads a POSIX ustar archive (regular files, directories, symlinks, hard
 * links, FIFOs) and creates each entry beneath DEST. The archive is hostile
 * by assumption: names with "..", absolute names, symlinks pointing out of
 * DEST followed by entries that go through them, hard links to files
 * outside, duplicate names. No name is checked as a string; every entry is
 * created through the library, so nothing can be created, overwritten or
 * linked outside DEST whatever the order of the entries. Entries that would
 * leave DEST are refused and reported; the others are extracted. Exit
 * status: 0 all entries extracted, 1 some refused, 2 unreadable archive.
 *
 * The safeopen command has a complete `extract` subcommand
 * (doc/recipes/extract.md); this program shows the library calls.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <safeopen.h>

struct ustar {
	char name[100], mode[8], uid[8], gid[8], size[12], mtime[12], chksum[8];
	char typeflag, linkname[100], magic[6], version[2], uname[32], gname[32];
	char devmajor[8], devminor[8], prefix[155], pad[12];
};

static unsigned long long octal(const char *p, size_t n)
{
	unsigned long long v = 0;
	for (size_t i = 0; i < n && p[i] >= '0' && p[i] <= '7'; i++)
		v = v * 8 + (unsigned long long)(p[i] - '0');
	return v;
}

static int read_full(void *buf, size_t n)
{
	size_t got = 0;
	while (got < n) {
		ssize_t r = read(STDIN_FILENO, (char *)buf + got, n - got);
		if (r <= 0)
			return -1;
		got += (size_t)r;
	}
	return 0;
}

/* Copy SIZE bytes of the archive (plus padding to 512) into fd, or skip
 * them when fd is -1. */
static int copy_data(int fd, unsigned long long size)
{
	char buf[512];
	for (unsigned long long left = size; left > 0;) {
		if (read_full(buf, sizeof(buf)) < 0)
			return -1;
		size_t k = left < sizeof(buf) ? (size_t)left : sizeof(buf);
		if (fd >= 0 && write(fd, buf, k) != (ssize_t)k)
			return -1;
		left -= k;
	}
	return 0;
}

/* A regular file: parent directories first (scoped mkdir -p), then the
 * file, written completely under no name and published with its mode. An
 * existing name is replaced atomically (a symlink planted there is replaced
 * itself, never followed). */
static int extract_file(int dest, const char *path, mode_t mode, unsigned long long size)
{
	/* "a/b/c" -> "a/b" + "c"; "c" -> "." + "c"; "/c" -> "/" + "c" (which
	 * the library refuses: an absolute path is not beneath DEST). */
	char dir[PATH_MAX];
	const char *slash = strrchr(path, '/');
	const char *name = slash ? slash + 1 : path;
	if (!slash)
		strcpy(dir, ".");
	else if (slash == path)
		strcpy(dir, "/");
	else
		(void)snprintf(dir, sizeof(dir), "%.*s", (int)(slash - path), path);
	int dfd = safe_mkdir_all_beneath(dest, dir, 0755, 0);
	if (dfd < 0)
		return copy_data(-1, size) < 0 ? -2 : -1;
	struct safe_tmpfile *tmp;
	int r = safe_tmpfile_open(dfd, name, mode, 0, &tmp);
	int err = errno;
	close(dfd);
	if (r < 0) {
		errno = err;
		return copy_data(-1, size) < 0 ? -2 : -1;
	}
	if (copy_data(safe_tmpfile_fd(tmp), size) < 0) {
		safe_tmpfile_discard(tmp);
		return -2;
	}
	int fd = safe_tmpfile_link(tmp, NULL, 0, SAFE_TMPFILE_REPLACE);
	if (fd < 0) {
		err = errno;
		safe_tmpfile_discard(tmp);
		errno = err;
		return -1;
	}
	close(fd);
	return 0;
}

int main(int argc, char *argv[])
{
	if (argc != 2) {
		fprintf(stderr, "usage: %s DEST < ARCHIVE.tar\n", argv[0]);
		return 2;
	}
	int dest = open(argv[1], O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (dest < 0) {
		perror(argv[1]);
		return 2;
	}
	int refused = 0;
	struct ustar h;
	while (read_full(&h, sizeof(h)) == 0 && h.name[0] != '\0') {
		if (memcmp(h.magic, "ustar", 5) != 0) {
			fprintf(stderr, "not a ustar archive\n");
			close(dest);
			return 2;
		}
		char path[256 + 1], link[100 + 1];
		if (h.prefix[0])
			(void)snprintf(path, sizeof(path), "%.155s/%.100s", h.prefix, h.name);
		else
			(void)snprintf(path, sizeof(path), "%.100s", h.name);
		(void)snprintf(link, sizeof(link), "%.100s", h.linkname);
		mode_t mode = (mode_t)octal(h.mode, sizeof(h.mode)) & 0777; /* no set-ID bits */
		unsigned long long size = octal(h.size, sizeof(h.size));
		int r;
		switch (h.typeflag) {
		case '0':
		case '\0':
			r = extract_file(dest, path, mode, size);
			if (r == -2) {
				fprintf(stderr, "%s: truncated archive\n", path);
				close(dest);
				return 2;
			}
			size = 0;
			break;
		case '5': { /* a directory: mkdir -p, scoped */
			int d = safe_mkdir_all_beneath(dest, path, mode | 0700, 0);
			r = d < 0 ? -1 : 0;
			if (d >= 0)
				close(d);
			break;
		}
		case '2': /* a symlink: stored as is; following it later is scoped */
			r = safe_symlinkat_beneath(link, dest, path, 0);
			break;
		case '1': /* a hard link: both names beneath DEST */
			r = safe_linkat_beneath(dest, link, dest, path, 0);
			break;
		case '6': /* a FIFO */
			r = safe_mknodat_beneath(dest, path, S_IFIFO | mode, 0, 0);
			break;
		default:
			errno = ENOTSUP;
			r = -1;
			break;
		}
		if (r < 0) {
			printf("refused %s: %s\n", path, strerror(errno));
			refused++;
		} else {
			printf("ok      %s\n", path);
		}
		if (size > 0 && copy_data(-1, size) < 0) {
			fprintf(stderr, "%s: truncated archive\n", path);
			close(dest);
			return 2;
		}
	}
	close(dest);
	return refused ? 1 : 0;
}
