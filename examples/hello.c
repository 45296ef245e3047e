/* SPDX-License-Identifier: MIT */
/*
 * hello: the smallest useful libsafeopen program, and the pkg-config consumer
 * check. It opens a few hostile paths beneath a directory and says what
 * happened:
 *
 *     cc hello.c $(pkg-config --cflags --libs libsafeopen) -o hello
 *     ./hello [DIR]
 */
#define _GNU_SOURCE /* O_PATH */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <safeopen.h>

int main(int argc, char **argv)
{
	const char *root = argc > 1 ? argv[1] : ".";
	static const char *const paths[] = { ".", "../../../../etc/passwd", "/etc/passwd",
					     "./nonexistent", "" };
	int rootfd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (rootfd < 0) {
		fprintf(stderr, "hello: %s: %s\n", root, strerror(errno));
		return 2;
	}
	printf("libsafeopen %s: opening untrusted paths beneath %s\n", safe_version(), root);
	int escaped = 0;
	for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
		int fd = safe_openat_beneath(rootfd, paths[i], O_RDONLY, 0);
		if (fd >= 0) {
			printf("  %-26s opened (fd %d)\n", paths[i][0] ? paths[i] : "\"\"", fd);
			escaped += paths[i][0] == '/' || strncmp(paths[i], "..", 2) == 0;
			close(fd);
		} else {
			printf("  %-26s refused: %s\n", paths[i][0] ? paths[i] : "\"\"",
			       strerror(errno));
		}
	}
	close(rootfd);
	return escaped ? 1 : 0;
}
