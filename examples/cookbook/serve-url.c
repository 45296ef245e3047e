/* SPDX-License-Identifier: MIT */
/*
 * Cookbook: serve files from a URL path.
 *
 *   serve-url ROOT URL-PATH
 *
 * Prints "200 <size>" and the file, or "403" / "404" / "400", as a web
 * server would answer GET URL-PATH with ROOT as its document root. The URL
 * path is percent-decoded and then handed to the library unchanged: no
 * string checks for "..", because the resolution itself cannot leave ROOT.
 * ROOT acts as "/" (SAFE_RESOLVE_IN_ROOT), as it does for the client.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <safeopen.h>

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* Decode %XX escapes up to '?' or '#'. A NUL byte (%00) would silently
 * truncate the path: refuse it. */
static int url_decode(const char *in, char *out, size_t size)
{
	size_t o = 0;
	for (const char *p = in; *p && *p != '?' && *p != '#'; p++) {
		int c = (unsigned char)*p;
		if (c == '%') {
			int h = hexval(p[1]), l = h < 0 ? -1 : hexval(p[2]);
			if (l < 0)
				return -1;
			c = h * 16 + l;
			p += 2;
		}
		if (c == 0 || o + 1 >= size)
			return -1;
		out[o++] = (char)c;
	}
	out[o] = '\0';
	return 0;
}

/* The HTTP status for a failed call: the library's one rule, README's
 * http_status() (also libsafeopen(7), safe-httpd, safeopen.http_status() in
 * Python). An escape is refused, not missing: 403. Under IN_ROOT most
 * climbing paths name something inside the root that does not exist (404);
 * EXDEV and ELOOP come from magic links and link loops. */
static int http_status(int err)
{
	switch (err) {
	case ENOENT:
	case ENOTDIR:
		return 404;
	case EXDEV:
	case ELOOP:
	case EACCES:
	case EPERM:
	case EBUSY:
		return 403;
	case ENAMETOOLONG:
		return 414;
	case EINVAL:
		return 400;
	case EISDIR:
	case EEXIST:
	case ENOTEMPTY:
		return 409;
	case ENOSPC:
	case EDQUOT:
		return 507;
	case EAGAIN:
	case EMFILE:
	case ENFILE:
	case ENOMEM:
		return 503;
	default:
		return 500;
	}
}

static int send_file(int fd)
{
	struct stat st;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		puts("403");
		return 1;
	}
	printf("200 %lld\n", (long long)st.st_size);
	fflush(stdout);
	char buf[65536];
	ssize_t n;
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		if (write(STDOUT_FILENO, buf, (size_t)n) != n)
			return 1;
	return n < 0;
}

int main(int argc, char *argv[])
{
	if (argc != 3) {
		fprintf(stderr, "usage: %s ROOT URL-PATH\n", argv[0]);
		return 2;
	}
	int root = open(argv[1], O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (root < 0) {
		perror(argv[1]);
		return 2;
	}
	char path[PATH_MAX];
	if (url_decode(argv[2], path, sizeof(path)) < 0 || path[0] != '/') {
		puts("400");
		close(root);
		return 1;
	}
	/* ROOT is the client's "/" (IN_ROOT, no magic links). O_NONBLOCK: a
	 * FIFO planted in the tree must not hang the server (it is then
	 * refused by the S_ISREG check). Open, then fstat the descriptor: one
	 * lookup, and what is checked is what is sent. */
	const int oflags = O_RDONLY | O_NOCTTY | O_NONBLOCK;
	int fd = safe_openat_in_root(root, path, oflags, 0);
	if (fd >= 0) {
		struct stat st;
		if (fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
			/* A directory: serve its index.html, resolved from
			 * ROOT again, so that its symlinks mean what they
			 * mean to the client. */
			char idx[PATH_MAX + 16];
			(void)snprintf(idx, sizeof(idx), "%s/index.html", path);
			close(fd);
			fd = safe_openat_in_root(root, idx, oflags, 0);
		}
	}
	int rc;
	if (fd < 0) {
		printf("%d\n", http_status(errno));
		rc = 1;
	} else {
		rc = send_file(fd);
		close(fd);
	}
	close(root);
	return rc;
}
