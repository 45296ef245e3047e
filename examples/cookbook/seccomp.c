/* SPDX-License-Identifier: MIT */
/*
 * Cookbook: a process that may run under a seccomp profile.
 *
 *   seccomp {ENOSYS|EPERM|none} ROOT PATH...
 *
 * Installs a seccomp filter that makes openat2(2) fail with the given errno
 * (as a kernel before 5.6 does, or a container profile that predates the
 * call: older profiles answered EPERM for unknown calls, newer ones ENOSYS),
 * then opens each PATH beneath ROOT and prints the outcome. The library
 * probes openat2 once, notices the filter, and runs its own walker, which
 * gives the same answers: escapes are still EXDEV, and the same files open.
 * Nothing needs to be configured. A filter installed after the first call
 * is noticed too (ENOSYS at once; EPERM after the probe is repeated).
 *
 * What the walker itself needs from a profile: openat, readlinkat, fstat
 * or statx, fcntl, close (and, for a few operations, the calls listed in
 * the cookbook). Profiles that allow open(2)-style access allow these.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <safeopen.h>

#ifndef SYS_openat2
#define SYS_openat2 437
#endif

static int block_openat2(int err)
{
	struct sock_filter prog[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_openat2, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (unsigned int)err),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog fprog = { .len = sizeof(prog) / sizeof(prog[0]), .filter = prog };
	/* Unprivileged processes may install a filter once they promise not
	 * to gain privileges through execve. */
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return -1;
	return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &fprog, 0, 0);
}

int main(int argc, char *argv[])
{
	if (argc < 4) {
		fprintf(stderr, "usage: %s {ENOSYS|EPERM|none} ROOT PATH...\n", argv[0]);
		return 2;
	}
	int err = strcmp(argv[1], "ENOSYS") == 0 ? ENOSYS : strcmp(argv[1], "EPERM") == 0 ? EPERM : 0;
	if (err && block_openat2(err) < 0) {
		perror("seccomp");
		return 2;
	}
	int root = open(argv[2], O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (root < 0) {
		perror(argv[2]);
		return 2;
	}
	struct safe_open_how how = { .flags = O_RDONLY, .resolve = SAFE_RESOLVE_BENEATH };
	/* Show that the kernel call is really blocked. */
	long raw = syscall(SYS_openat2, root, ".", &how, sizeof(how));
	printf("raw openat2: %s\n", raw >= 0 ? "allowed" : strerror(errno));
	if (raw >= 0)
		close((int)raw);
	for (int i = 3; i < argc; i++) {
		int fd = safe_openat2(root, argv[i], &how, sizeof(how));
		printf("%s: %s\n", argv[i], fd >= 0 ? "opened" : strerror(errno));
		if (fd >= 0)
			close(fd);
	}
	close(root);
	return 0;
}
