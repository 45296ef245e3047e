/* SPDX-License-Identifier: MIT */
/*
 * Suite "proc": the public procfs API (safe_proc_handle(), safe_proc_open(),
 * safe_proc_readlink(), safe_proc_fd_path()). Each case runs on the fast
 * path and, in a child where openat2() is refused, on the walker. The
 * overmount cases bind /dev/null over /proc/self/attr/current and mount a
 * tmpfs with a fake "ostype" over /proc/sys/kernel in a private mount
 * namespace, with each kind of handle (fsopen, open_tree, the mounted
 * /proc), and show that the API reaches the real file or refuses (EXDEV).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "fixture.h"
#include "safeopen.h"
#include "sandbox.h"

#ifndef SYS_openat2
#define SYS_openat2 437
#endif
#ifndef SYS_fsopen
#define SYS_fsopen 430
#endif
#ifndef SYS_open_tree
#define SYS_open_tree 428
#endif

static bool on_procfs(int fd)
{
	struct statfs sfs;
	return fstatfs(fd, &sfs) == 0 && sfs.f_type == PROC_SUPER_MAGIC;
}

/* Read fd into buf (NUL-terminated); the length or -1. */
static ssize_t slurp(int fd, char *buf, size_t size)
{
	ssize_t n = read(fd, buf, size - 1);
	if (n >= 0)
		buf[n] = '\0';
	return n;
}

/* The reads, the links and the refusals; 0 or 1 (child-side checks). */
static int reads(void *arg)
{
	bool walker = arg != NULL;
	if (walker) {
		struct sb_rule r[] = { SB_ALWAYS(SYS_openat2, ENOSYS) };
		CHILD_CHECK(sb_seccomp(r, 1) == 0);
	}
	char buf[4096];
	unsigned int kind = 0;
	int h = safe_proc_handle(0, &kind);
	CHILD_CHECK(h >= 0 && on_procfs(h) && kind >= SAFE_PROC_KIND_FSOPEN_SUBSET &&
		    kind <= SAFE_PROC_KIND_MOUNTED, "kind %u", kind);
	close(h);
	int fd = safe_proc_open(SAFE_PROC_SELF, "status", O_RDONLY, 0);
	CHILD_CHECK(fd >= 0 && on_procfs(fd) && slurp(fd, buf, sizeof(buf)) > 0 &&
		    !strncmp(buf, "Name:", 5));
	close(fd);
	fd = safe_proc_open(SAFE_PROC_THREAD_SELF, "comm", O_RDONLY, 0);
	CHILD_CHECK(fd >= 0 && on_procfs(fd));
	close(fd);
	fd = safe_proc_open(SAFE_PROC_PID(getpid()), "stat", O_RDONLY, 0);
	char want[32];
	snprintf(want, sizeof(want), "%d ", (int)getpid());
	CHILD_CHECK(fd >= 0 && slurp(fd, buf, sizeof(buf)) > 0 && !strncmp(buf, want, strlen(want)));
	close(fd);
	fd = safe_proc_open(SAFE_PROC_ROOT, "sys/kernel/ostype", O_RDONLY, 0);
	CHILD_CHECK(fd >= 0 && slurp(fd, buf, sizeof(buf)) > 0 && !strcmp(buf, "Linux\n"));
	close(fd);
	/* Magic links: refused unless asked; readlink reads them. */
	errno = 0;
	CHILD_CHECK(safe_proc_open(SAFE_PROC_SELF, "exe", O_RDONLY, 0) == -1 && errno == ELOOP);
	CHILD_CHECK(safe_proc_open(SAFE_PROC_SELF, "fd/0/x", O_RDONLY, SAFE_PROC_MAGICLINKS) == -1 &&
		    errno == ELOOP);
	int me = open(".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	CHILD_CHECK(me >= 0);
	char ent[32];
	snprintf(ent, sizeof(ent), "fd/%d", me);
	fd = safe_proc_open(SAFE_PROC_THREAD_SELF, ent, O_RDONLY | O_DIRECTORY, SAFE_PROC_MAGICLINKS);
	struct stat a, b;
	CHILD_CHECK(fd >= 0 && fstat(fd, &a) == 0 && fstat(me, &b) == 0 && a.st_ino == b.st_ino &&
		    a.st_dev == b.st_dev);
	close(fd);
	char l1[PATH_MAX], l2[PATH_MAX];
	ssize_t n1 = safe_proc_readlink(SAFE_PROC_SELF, "exe", l1, sizeof(l1));
	ssize_t n2 = readlink("/proc/self/exe", l2, sizeof(l2));
	CHILD_CHECK(n1 > 0 && n1 == n2 && !memcmp(l1, l2, (size_t)n1));
	/* The path for an fd leads to it. */
	char p[64];
	CHILD_CHECK(safe_proc_fd_path(me, p, sizeof(p)) == 0 && stat(p, &a) == 0 &&
		    a.st_ino == b.st_ino);
	CHILD_CHECK(safe_proc_fd_path(me, p, 4) == -1 && errno == ERANGE);
	close(me);
	/* Nothing above the base, no unknown base or flag. */
	CHILD_CHECK(safe_proc_open(SAFE_PROC_SELF, "../self/status", O_RDONLY, 0) == -1 &&
		    errno == EXDEV);
	CHILD_CHECK(safe_proc_open(SAFE_PROC_SELF, "/etc/passwd", O_RDONLY, 0) == -1 &&
		    errno == EXDEV);
	CHILD_CHECK(safe_proc_open(SAFE_PROC_PID(0), "stat", O_RDONLY, 0) == -1 && errno == EINVAL);
	CHILD_CHECK(safe_proc_open((1ULL << 63) | 9, "stat", O_RDONLY, 0) == -1 && errno == EINVAL);
	CHILD_CHECK(safe_proc_open(SAFE_PROC_SELF, "stat", O_RDONLY, 1ULL << 20) == -1 &&
		    errno == EINVAL);
	CHILD_CHECK(safe_proc_handle(1, NULL) == -1 && errno == EINVAL);
	CHILD_CHECK(safe_proc_open(SAFE_PROC_SELF, NULL, O_RDONLY, 0) == -1 && errno == EFAULT);
	CHILD_CHECK(safe_proc_open(SAFE_PROC_SELF, "nonexistent", O_RDONLY, 0) == -1 &&
		    errno == ENOENT);
	/* A closed handle number is never reused as the handle. */
	h = safe_proc_handle(0, NULL);
	CHILD_CHECK(h >= 0);
	close(h);
	fd = safe_proc_open(SAFE_PROC_SELF, "status", O_RDONLY, 0);
	CHILD_CHECK(fd >= 0);
	close(fd);
	return 0;
}

/* valgrind implements neither fsopen(2), open_tree(2) nor openat2(2) (its
 * ENOSYS gives every handle the verified-/proc kind) and answers
 * /proc/self/exe for its client, so the kinds and links these cases compare
 * are valgrind's, not the kernel's. */
#define SKIP_UNDER_VALGRIND()                                                              \
	do {                                                                               \
		if (fx_under_valgrind())                                                   \
			fx_skip("valgrind has no fsopen/open_tree/openat2 and emulates "   \
				"/proc/self/exe: the kernel's procfs cannot be compared"); \
	} while (0)

START_TEST(proc_reads)
{
	SKIP_UNDER_VALGRIND();
	fx_run_child(reads, _i ? (void *)1 : NULL, _i ? "walker" : "fast path");
}
END_TEST

/* Variants of the overmount case: which ways to a handle are refused. */
enum { OM_ANY, OM_NO_FSOPEN, OM_MOUNTED, OM_MOUNTED_WALKER, OM_VARIANTS };

static int overmount(void *arg)
{
	int v = (int)(intptr_t)arg;
	if (fx_enter_mount_ns() < 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
		CHILD_SKIP("no private mount namespace: %s", strerror(errno));
	char self[64];
	snprintf(self, sizeof(self), "/proc/%d/attr/current", (int)getpid());
	if (mount("/dev/null", self, NULL, MS_BIND, NULL) < 0)
		CHILD_SKIP("cannot bind /dev/null over %s: %s", self, strerror(errno));
	if (mount("tmpfs", "/proc/sys/kernel", "tmpfs", 0, "size=16k") < 0)
		CHILD_SKIP("cannot mount a tmpfs over /proc/sys/kernel: %s", strerror(errno));
	int f = open("/proc/sys/kernel/ostype", O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
	CHILD_CHECK(f >= 0 && write(f, "FAKE\n", 5) == 5);
	close(f);
	/* The attack is in place for a plain open. */
	struct stat st;
	CHILD_CHECK(stat("/proc/self/attr/current", &st) == 0 && S_ISCHR(st.st_mode));
	/* Which ways to a handle this kernel (or kernel profile) has at all:
	 * the kind expected of each variant follows from them. */
	int pf = (int)syscall(SYS_fsopen, "proc", 1 /* FSOPEN_CLOEXEC */);
	bool has_fsopen = pf >= 0 || errno != ENOSYS;
	if (pf >= 0)
		close(pf);
	int pt = (int)syscall(SYS_open_tree, AT_FDCWD, "/proc", 1 /* OPEN_TREE_CLONE */ | O_CLOEXEC);
	bool has_tree = pt >= 0 || errno != ENOSYS;
	if (pt >= 0)
		close(pt);
	struct sb_rule rules[3];
	size_t n = 0;
	if (v >= OM_NO_FSOPEN)
		rules[n++] = (struct sb_rule)SB_ALWAYS(SYS_fsopen, ENOSYS);
	if (v >= OM_MOUNTED)
		rules[n++] = (struct sb_rule)SB_ALWAYS(SYS_open_tree, ENOSYS);
	if (v >= OM_MOUNTED_WALKER)
		rules[n++] = (struct sb_rule)SB_ALWAYS(SYS_openat2, ENOSYS);
	if (n)
		CHILD_CHECK(sb_seccomp(rules, n) == 0);
	unsigned int kind = 0, kfull = 0;
	int h = safe_proc_handle(0, &kind);
	CHILD_CHECK(h >= 0);
	close(h);
	h = safe_proc_handle(SAFE_PROC_FULL, &kfull);
	CHILD_CHECK(h >= 0);
	close(h);
	fprintf(stderr, "# variant %d: handle kinds %u (pid bases) and %u (root)\n", v, kind, kfull);
	if (v == OM_ANY && has_fsopen)
		CHILD_CHECK(kind == SAFE_PROC_KIND_FSOPEN_SUBSET && kfull == SAFE_PROC_KIND_FSOPEN,
			    "root in its own mount namespace can make a procfs instance");
	else if (v <= OM_NO_FSOPEN && has_tree)
		CHILD_CHECK(kind == SAFE_PROC_KIND_OPEN_TREE && kfull == SAFE_PROC_KIND_OPEN_TREE);
	else
		CHILD_CHECK(kind == SAFE_PROC_KIND_MOUNTED && kfull == SAFE_PROC_KIND_MOUNTED);
	bool mounted = kind == SAFE_PROC_KIND_MOUNTED;
	char buf[64];
	/* attr/current: the real procfs file, or EXDEV; never /dev/null. */
	int fd = safe_proc_open(SAFE_PROC_SELF, "attr/current", O_RDONLY, 0);
	if (mounted)
		CHILD_CHECK(fd == -1 && errno == EXDEV, "the overmounted file is refused");
	else
		CHILD_CHECK(fd >= 0 && on_procfs(fd), "the real attr/current");
	if (fd >= 0)
		close(fd);
	fd = safe_proc_open(SAFE_PROC_THREAD_SELF, "attr/current", O_WRONLY, 0);
	CHILD_CHECK(fd == -1 || on_procfs(fd));
	if (fd >= 0)
		close(fd);
	/* /proc/sys/kernel under a tmpfs: the real ostype, or EXDEV. */
	fd = safe_proc_open(SAFE_PROC_ROOT, "sys/kernel/ostype", O_RDONLY, 0);
	if (mounted) {
		CHILD_CHECK(fd == -1 && errno == EXDEV, "the overmounted directory is refused");
	} else {
		CHILD_CHECK(fd >= 0 && slurp(fd, buf, sizeof(buf)) > 0 && !strcmp(buf, "Linux\n"),
			    "the real ostype");
		close(fd);
	}
	char l[PATH_MAX];
	errno = 0;
	ssize_t r = safe_proc_readlink(SAFE_PROC_ROOT, "sys/kernel/ostype", l, sizeof(l));
	CHILD_CHECK(r == -1 && errno == (mounted ? EXDEV : EINVAL), "not a link");
	return 0;
}

START_TEST(proc_overmount)
{
	SKIP_UNDER_VALGRIND();
	FX_REQUIRE_ROOT("mounts over procfs files in a private mount namespace");
	fx_run_child(overmount, (void *)(intptr_t)_i, "overmount");
}
END_TEST

static Suite *proc_suite(void)
{
	Suite *s = suite_create("proc");
	TCase *tc = tcase_create("core");
	tcase_add_checked_fixture(tc, fx_fd_setup, fx_fd_teardown);
	tcase_add_loop_test(tc, proc_reads, 0, 2);
	tcase_add_loop_test(tc, proc_overmount, 0, OM_VARIANTS);
	suite_add_tcase(s, tc);
	return s;
}

FX_MAIN(proc_suite)
