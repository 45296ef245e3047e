/* SPDX-License-Identifier: MIT */
#include "config.h"

#include "fixture.h"
#include "sandbox.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/audit.h>
#include <linux/capability.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#if defined(__x86_64__)
#define SB_AUDIT_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define SB_AUDIT_ARCH AUDIT_ARCH_AARCH64
#else
#error "add the AUDIT_ARCH of this architecture"
#endif

#define SB_MAX_RULES 16

int sb_seccomp(const struct sb_rule *rules, size_t n)
{
	struct sock_filter prog[8 + SB_MAX_RULES * 6];
	size_t k = 0;

	if (n > SB_MAX_RULES) {
		errno = EINVAL;
		return -1;
	}
	/* Kill on a foreign architecture, so x32/i386 entry points cannot dodge
	 * the rules. */
	prog[k++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
						 offsetof(struct seccomp_data, arch));
	prog[k++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SB_AUDIT_ARCH, 1, 0);
	prog[k++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS);

	for (size_t i = 0; i < n; i++) {
		const struct sb_rule *r = &rules[i];
		uint32_t ret = SECCOMP_RET_ERRNO | ((uint32_t)r->err & SECCOMP_RET_DATA);
		/* A = nr; if (A != r->nr) skip this rule */
		prog[k++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
							 offsetof(struct seccomp_data, nr));
		if (r->arg < 0) {
			prog[k++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K,
								 (uint32_t)r->nr, 0, 1);
			prog[k++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, ret);
		} else {
			prog[k++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K,
								 (uint32_t)r->nr, 0, 4);
			/* low 32 bits of args[arg] (little endian) */
			prog[k++] = (struct sock_filter)BPF_STMT(
				BPF_LD | BPF_W | BPF_ABS,
				(uint32_t)(offsetof(struct seccomp_data, args) +
					   (size_t)r->arg * sizeof(uint64_t)));
			prog[k++] = (struct sock_filter)BPF_STMT(BPF_ALU | BPF_AND | BPF_K, r->mask);
			prog[k++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, r->value,
								 0, 1);
			prog[k++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, ret);
		}
	}
	prog[k++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);

	struct sock_fprog fprog = { .len = (unsigned short)k, .filter = prog };
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return -1;
	return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &fprog, 0, 0);
}

static int drop_capabilities(void)
{
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct d[_LINUX_CAPABILITY_U32S_3];
	memset(d, 0, sizeof(d));
	return (int)syscall(SYS_capset, &h, d);
}

int sb_drop_privileges(void)
{
	/* Already an unprivileged user (make check as a distribution builder
	 * or uid 65534): there is nothing to drop. */
	if (!fx_started_as_root()) {
		/* Root of a user namespace (to mount): keep the uid, whose files
		 * are the caller's own, but give up every capability, so that
		 * permissions apply as they do to the unprivileged caller. */
		if (geteuid() == 0)
			return drop_capabilities();
		return 0;
	}
	if (setgroups(0, NULL) < 0)
		return -1;
	if (setresgid(65534, 65534, 65534) < 0)
		return -1;
	if (setresuid(65534, 65534, 65534) < 0)
		return -1;
	return 0;
}

int sb_chown_for_dropped(int dirfd, const char *path, int flags)
{
	/* As in sb_drop_privileges(): a caller that did not start as root keeps
	 * its uid (inside a user namespace too, mapped to its own uid), so its
	 * files are already the dropped user's. */
	if (!fx_started_as_root())
		return 0;
	return fchownat(dirfd, path, 65534, 65534, flags);
}

int sb_run(int (*fn)(void *), void *arg)
{
	/* The child reports fn's result through a pipe rather than its exit
	 * status alone: under valgrind a forked child's exit status is replaced
	 * by --error-exitcode when it "leaks" the parent's heap, which it always
	 * does. A child that dies before writing is judged by its status. */
	int pfd[2];
	if (pipe2(pfd, O_CLOEXEC) < 0)
		return -1;
	pid_t pid = fork();
	if (pid < 0) {
		close(pfd[0]);
		close(pfd[1]);
		return -1;
	}
	if (pid == 0) {
		close(pfd[0]);
		unsigned char rc = (unsigned char)fn(arg);
		ssize_t w = write(pfd[1], &rc, 1);
		(void)w;
		_exit(rc);
	}
	close(pfd[1]);
	unsigned char rc;
	ssize_t got;
	do
		got = read(pfd[0], &rc, 1);
	while (got < 0 && errno == EINTR);
	close(pfd[0]);
	int status;
	while (waitpid(pid, &status, 0) < 0) {
		if (errno != EINTR)
			return -1;
	}
	if (got == 1)
		return rc;
	if (WIFEXITED(status))
		return WEXITSTATUS(status) ? WEXITSTATUS(status) : 255;
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return -1;
}

static int probe_mount(void *arg)
{
	const char *dir = arg;
	if (fx_enter_mount_ns() < 0)
		return 1;
	if (mount("sb-probe", dir, "tmpfs", 0, "size=64k") < 0)
		return 2;
	return 0;
}

bool sb_can_mount(void)
{
	static int cached = -1; /* probed once per process (and inherited) */
	if (geteuid() == 0)
		return true;
	if (cached < 0) {
		char dir[] = "/tmp/safeopen-mountprobe-XXXXXX";
		cached = 0;
		if (mkdtemp(dir)) {
			cached = sb_run(probe_mount, dir) == 0;
			rmdir(dir);
		}
	}
	return cached == 1;
}
