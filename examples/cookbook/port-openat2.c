/* SPDX-License-Identifier: MIT */
/*
 * Cookbook: porting from openat2() with a hand-written fallback.
 *
 *   port-openat2 [--no-openat2] ROOT PATH
 *
 * --no-openat2 first installs a seccomp filter that makes openat2 fail with
 * ENOSYS, as on a kernel before 5.6 or under a container profile that does
 * not know the call, so both fallbacks run.
 *
 * Code written for openat2(2) usually looks like open_old() below: the
 * raw system call (glibc has no wrapper), and for kernels or sandboxes
 * without it a fallback that is either missing or weaker (here: a plain
 * openat() after a string check for "..", which a symlink defeats).
 * safe_openat2() takes the same three fields and the same RESOLVE_* values
 * (SAFE_RESOLVE_* are equal to them), and its fallback is a walker with the
 * kernel's semantics, so the port is mechanical: rename the struct and the
 * flags, pass the size, drop the fallback.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#if defined(__has_include)
#if __has_include(<linux/openat2.h>)
#include <linux/openat2.h>
#define HAVE_OPENAT2_H 1
#endif
#endif
#ifndef HAVE_OPENAT2_H /* old kernel headers: the uapi definitions */
#include <stdint.h>
struct open_how {
	uint64_t flags, mode, resolve;
};
#define RESOLVE_NO_MAGICLINKS 0x02
#define RESOLVE_BENEATH 0x08
#endif
#ifndef SYS_openat2
#define SYS_openat2 437
#endif
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <sys/prctl.h>

#include <safeopen.h>

/* BEFORE */
static int open_old(int rootfd, const char *path)
{
	struct open_how how = {
		.flags = O_RDONLY | O_CLOEXEC,
		.resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS,
	};
	int fd = (int)syscall(SYS_openat2, rootfd, path, &how, sizeof(how));
	if (fd < 0 && (errno == ENOSYS || errno == EPERM)) {
		/* The usual "fallback": wrong under symlinks and races. */
		if (path[0] == '/' || strstr(path, "..")) {
			errno = EXDEV;
			return -1;
		}
		fd = openat(rootfd, path, O_RDONLY | O_CLOEXEC);
	}
	return fd;
}

/* AFTER: same fields, same values, same errno; the fallback is built in. */
static int open_new(int rootfd, const char *path)
{
	struct safe_open_how how = {
		.flags = O_RDONLY, /* O_CLOEXEC is always added */
		.resolve = SAFE_RESOLVE_BENEATH | SAFE_RESOLVE_NO_MAGICLINKS,
	};
	return safe_openat2(rootfd, path, &how, sizeof(how));
}

/* openat2 -> ENOSYS for this process (and its children). */
static int block_openat2(void)
{
	struct sock_filter prog[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_openat2, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOSYS),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog fprog = { .len = sizeof(prog) / sizeof(prog[0]), .filter = prog };
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return -1;
	return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &fprog, 0, 0);
}

int main(int argc, char *argv[])
{
	int a = 1;
	if (argc == 4 && strcmp(argv[1], "--no-openat2") == 0) {
		if (block_openat2() < 0) {
			perror("seccomp");
			return 2;
		}
		a = 2;
	}
	if (argc - a != 2) {
		fprintf(stderr, "usage: %s [--no-openat2] ROOT PATH\n", argv[0]);
		return 2;
	}
	int rootfd = open(argv[a], O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (rootfd < 0) {
		perror(argv[a]);
		return 2;
	}
	const char *path = argv[a + 1];
	int fd = open_old(rootfd, path);
	printf("openat2:      %s\n", fd >= 0 ? "opened" : strerror(errno));
	if (fd >= 0)
		close(fd);
	fd = open_new(rootfd, path);
	printf("safe_openat2: %s\n", fd >= 0 ? "opened" : strerror(errno));
	if (fd >= 0)
		close(fd);
	close(rootfd);
	return 0;
}
