/* SPDX-License-Identifier: MIT */
/*
 * kernel-profile PROFILE COMMAND [ARG...]
 *
 * Runs COMMAND (and everything it starts: the filter is inherited across
 * fork and exec) under a seccomp filter that makes this kernel look older:
 * every system call added after the profile's kernel version fails with
 * ENOSYS, as it does on that kernel. Two more profiles block only openat2,
 * with EPERM (what container runtimes' default profiles did for calls they did
 * not know) or ENOSYS. `kernel-profile --list` prints the profiles and the
 * calls each one removes. The profiles of kernels before 5.8 also set
 * SAFEOPEN_TEST_STATX_NO_MOUNT=1, the library's test hook that drops what
 * statx could not report there (the mount id, STATX_ATTR_MOUNT_ROOT);
 * SAFEOPEN_PROFILE_STATX_HOOK=0 leaves it out.
 *
 * Needs no privilege: PR_SET_NO_NEW_PRIVS first. Uses no part of the library.
 * The numbers come from <sys/syscall.h> where the headers know the call; calls
 * added since Linux 5.1 have one number on every architecture (alpha: +110),
 * which is what is used when the headers are older than the call.
 */
#include "config.h"

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#if defined(__x86_64__)
#define KP_AUDIT_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define KP_AUDIT_ARCH AUDIT_ARCH_AARCH64
#elif defined(__i386__)
#define KP_AUDIT_ARCH AUDIT_ARCH_I386
#else
#error "add the AUDIT_ARCH of this architecture"
#endif

#ifdef __alpha__
#define GENERIC(n) ((n) + 110)
#else
#define GENERIC(n) (n)
#endif

/* Version as major * 1000 + minor. */
#define V(a, b) ((a) * 1000 + (b))

struct call {
	const char *name;
	long nr;
	int since;
};

/* Calls with architecture-specific numbers: only where the headers name them. */
#define ARCH(sym, ver) { #sym, SYS_##sym, ver }

static const struct call calls[] = {
#ifdef SYS_io_pgetevents
	ARCH(io_pgetevents, V(4, 18)),
#endif
#ifdef SYS_rseq
	ARCH(rseq, V(4, 18)),
#endif
	{ "pidfd_send_signal", GENERIC(424), V(5, 1) },
	{ "io_uring_setup", GENERIC(425), V(5, 1) },
	{ "io_uring_enter", GENERIC(426), V(5, 1) },
	{ "io_uring_register", GENERIC(427), V(5, 1) },
	{ "open_tree", GENERIC(428), V(5, 2) },
	{ "move_mount", GENERIC(429), V(5, 2) },
	{ "fsopen", GENERIC(430), V(5, 2) },
	{ "fsconfig", GENERIC(431), V(5, 2) },
	{ "fsmount", GENERIC(432), V(5, 2) },
	{ "fspick", GENERIC(433), V(5, 2) },
	{ "pidfd_open", GENERIC(434), V(5, 3) },
	{ "clone3", GENERIC(435), V(5, 3) },
	{ "close_range", GENERIC(436), V(5, 9) },
	{ "openat2", GENERIC(437), V(5, 6) },
	{ "pidfd_getfd", GENERIC(438), V(5, 6) },
	{ "faccessat2", GENERIC(439), V(5, 8) },
	{ "process_madvise", GENERIC(440), V(5, 10) },
	{ "epoll_pwait2", GENERIC(441), V(5, 11) },
	{ "mount_setattr", GENERIC(442), V(5, 12) },
	{ "quotactl_fd", GENERIC(443), V(5, 14) },
	{ "landlock_create_ruleset", GENERIC(444), V(5, 13) },
	{ "landlock_add_rule", GENERIC(445), V(5, 13) },
	{ "landlock_restrict_self", GENERIC(446), V(5, 13) },
	{ "memfd_secret", GENERIC(447), V(5, 14) },
	{ "process_mrelease", GENERIC(448), V(5, 15) },
	{ "futex_waitv", GENERIC(449), V(5, 16) },
	{ "set_mempolicy_home_node", GENERIC(450), V(5, 17) },
	{ "cachestat", GENERIC(451), V(6, 5) },
	{ "fchmodat2", GENERIC(452), V(6, 6) },
	{ "map_shadow_stack", GENERIC(453), V(6, 6) },
	{ "futex_wake", GENERIC(454), V(6, 7) },
	{ "futex_wait", GENERIC(455), V(6, 7) },
	{ "futex_requeue", GENERIC(456), V(6, 7) },
	{ "statmount", GENERIC(457), V(6, 8) },
	{ "listmount", GENERIC(458), V(6, 8) },
	{ "lsm_get_self_attr", GENERIC(459), V(6, 8) },
	{ "lsm_set_self_attr", GENERIC(460), V(6, 8) },
	{ "lsm_list_modules", GENERIC(461), V(6, 8) },
	{ "mseal", GENERIC(462), V(6, 10) },
	{ "setxattrat", GENERIC(463), V(6, 13) },
	{ "getxattrat", GENERIC(464), V(6, 13) },
	{ "listxattrat", GENERIC(465), V(6, 13) },
	{ "removexattrat", GENERIC(466), V(6, 13) },
	{ "open_tree_attr", GENERIC(467), V(6, 15) },
	{ "file_getattr", GENERIC(468), V(6, 17) },
	{ "file_setattr", GENERIC(469), V(6, 17) },
};
#define NCALLS (sizeof(calls) / sizeof(calls[0]))
/* Every number above the table is newer than all profiles too. */
#define FIRST_UNKNOWN GENERIC(470)

struct profile {
	const char *name;
	const char *what;
	int version;    /* remove calls newer than this; 0: see only */
	const char *only; /* remove just this call */
	int err;
};

static const struct profile profiles[] = {
	{ "4.18", "RHEL 8 (4.18): no openat2, open_tree, close_range, faccessat2, fchmodat2, *xattrat",
	  V(4, 18), NULL, ENOSYS },
	{ "5.4", "Ubuntu 20.04 GA (5.4): no openat2, close_range, faccessat2, fchmodat2, *xattrat",
	  V(5, 4), NULL, ENOSYS },
	{ "5.10", "Debian 11 (5.10): openat2, no fchmodat2, *xattrat", V(5, 10), NULL, ENOSYS },
	{ "5.15", "Ubuntu 22.04 (5.15): openat2, no fchmodat2, *xattrat", V(5, 15), NULL, ENOSYS },
	{ "6.1", "Debian 12 (6.1): no fchmodat2 (6.6), no *xattrat (6.13)", V(6, 1), NULL, ENOSYS },
	{ "openat2-eperm", "openat2 blocked with EPERM (a container's seccomp profile)", 0,
	  "openat2", EPERM },
	{ "openat2-enosys", "openat2 blocked with ENOSYS", 0, "openat2", ENOSYS },
};
#define NPROFILES (sizeof(profiles) / sizeof(profiles[0]))

static bool removes(const struct profile *p, const struct call *c)
{
	return p->only ? strcmp(p->only, c->name) == 0 : c->since > p->version;
}

static int install(const struct profile *p)
{
	struct sock_filter prog[8 + 2 * NCALLS];
	size_t k = 0;
	uint32_t deny = SECCOMP_RET_ERRNO | ((uint32_t)p->err & SECCOMP_RET_DATA);

	/* Other architectures' entry points (i386 on x86_64) would dodge the
	 * numbers below: deny them the same way. */
	prog[k++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
						 offsetof(struct seccomp_data, arch));
	prog[k++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, KP_AUDIT_ARCH, 1, 0);
	prog[k++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOSYS);
	prog[k++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
						 offsetof(struct seccomp_data, nr));
#ifdef __x86_64__
	/* x32 calls: same arch value, bit 30 set; none of ours use them. */
	prog[k++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, 0x40000000U, 0, 1);
	prog[k++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOSYS);
#endif
	if (!p->only) {
		prog[k++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K,
							 (uint32_t)FIRST_UNKNOWN, 0, 1);
		prog[k++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, deny);
	}
	for (size_t i = 0; i < NCALLS; i++) {
		if (!removes(p, &calls[i]))
			continue;
		prog[k++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K,
							 (uint32_t)calls[i].nr, 0, 1);
		prog[k++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, deny);
	}
	prog[k++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);

	struct sock_fprog fprog = { .len = (unsigned short)k, .filter = prog };
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return -1;
	return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &fprog, 0, 0);
}

static void list(void)
{
	for (size_t i = 0; i < NPROFILES; i++) {
		const struct profile *p = &profiles[i];
		printf("%-15s %s\n%15s %s:", p->name, p->what, "",
		       p->err == EPERM ? "EPERM" : "ENOSYS");
		for (size_t j = 0; j < NCALLS; j++)
			if (removes(p, &calls[j]))
				printf(" %s", calls[j].name);
		if (!p->only)
			printf(" (and every number from %ld)", (long)FIRST_UNKNOWN);
		if (p->version && p->version < V(5, 8))
			printf("; also statx without mount id"
			       " or STATX_ATTR_MOUNT_ROOT (SAFEOPEN_TEST_STATX_NO_MOUNT=1)");
		printf("\n");
	}
}

int main(int argc, char **argv)
{
	if (argc == 2 && strcmp(argv[1], "--list") == 0) {
		list();
		return 0;
	}
	if (argc < 3) {
		fprintf(stderr, "usage: kernel-profile PROFILE COMMAND [ARG...] | --list\n");
		return 2;
	}
	const struct profile *p = NULL;
	for (size_t i = 0; i < NPROFILES; i++)
		if (strcmp(profiles[i].name, argv[1]) == 0)
			p = &profiles[i];
	if (!p) {
		fprintf(stderr, "kernel-profile: unknown profile '%s' (--list)\n", argv[1]);
		return 2;
	}
	if (install(p) < 0) {
		perror("kernel-profile: seccomp");
		return 2;
	}
	if (setenv("SAFEOPEN_KERNEL_PROFILE", p->name, 1) < 0) {
		perror("kernel-profile: setenv");
		return 2;
	}
	/* Before 5.8 statx reports neither the mount id nor
	 * STATX_ATTR_MOUNT_ROOT, which no filter can take away: the library's
	 * test hook drops them, so every link takes the careful way there.
	 * SAFEOPEN_PROFILE_STATX_HOOK=0 leaves statx as the running kernel has
	 * it (to tell the hook's effect from the filter's). */
	const char *hook = getenv("SAFEOPEN_PROFILE_STATX_HOOK");
	if (!(hook && !strcmp(hook, "0")) && p->version && p->version < V(5, 8) &&
	    setenv("SAFEOPEN_TEST_STATX_NO_MOUNT", "1", 1) < 0) {
		perror("kernel-profile: setenv");
		return 2;
	}
	execvp(argv[2], argv + 2);
	fprintf(stderr, "kernel-profile: %s: %s\n", argv[2], strerror(errno));
	return 127;
}
