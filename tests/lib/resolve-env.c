/* SPDX-License-Identifier: MIT */
/*
 * The environment of the resolver suites (test_resolve, test_resolve_system):
 * the three ways to open (raw openat2(2), the library, the walker) and the
 * adversarial tree every case runs in.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "fixture.h"
#include "safeopen.h"
#include "resolve-env.h"

/* ------------------------------------------------------------------ helpers */

long raw_openat2(int dirfd, const char *path, uint64_t flags, uint64_t mode, uint64_t resolve)
{
	/* EAGAIN is asked again by fx_openat2(). ELOOP may be the kernel's
	 * double count: a lookup that falls out of RCU mode (a rename or mount
	 * anywhere in the system, i.e. other tests running beside this one) is
	 * redone with the links of the first try still counted, so a chain of
	 * 40 links can fail with ELOOP on a busy machine and open on a quiet one
	 * (design.md, the kernel's ELOOP). The oracle's answer for it is what a
	 * few more tries give: an object if any try opens one (a chain over 40
	 * links never does). */
	long r;
	int eloops = 0;
	do
		r = fx_openat2(dirfd, path, flags | O_CLOEXEC, mode, resolve);
	while (r < 0 && errno == ELOOP && ++eloops < 20);
	return r;
}

/* Whether the raw syscall exists here (valgrind 3.19 answers ENOSYS). */
bool kernel_has_openat2(void)
{
	long r = syscall(SYS_openat2, AT_FDCWD, NULL, NULL, 0);
	if (r < 0 && (errno == ENOSYS || errno == EPERM)) {
		/* Said once per test process; `make check-kernels` counts it. */
		static bool said;
		if (!said)
			fprintf(stderr, "oracle skipped: raw openat2 fails with %s here "
					"(old kernel or seccomp profile): library vs walker only\n",
				errno == ENOSYS ? "ENOSYS" : "EPERM");
		said = true;
		return false;
	}
	return true;
}

int lib_open(int dirfd, const char *path, uint64_t flags, uint64_t mode, uint64_t resolve)
{
	struct safe_open_how how = { .flags = flags, .mode = mode, .resolve = resolve };
	return safe_openat2(dirfd, path, &how, sizeof(how));
}

const char *const mode_names[RUN_MODES] = { "openat2", "safe_openat2", "walker" };

/* Open one of the three ways: the raw syscall, the library, the walker. */
int open_way(int way, int dirfd, const char *path, uint64_t flags, uint64_t mode,
	     uint64_t resolve)
{
	if (way == RUN_KERNEL)
		return (int)raw_openat2(dirfd, path, flags, mode, resolve);
	return lib_open(dirfd, path, flags, mode, resolve | (way == RUN_WALKER ? US : 0));
}

const char *errname(int e)
{
	const char *n = strerrorname_np(e);
	return n ? n : "?";
}

/* ------------------------------------------------------------------ the tree */


static const char *const outside_spec[] = {
	"d root 0755",
	"f outside_file outside",
	"d outside_dir",
	"f outside_dir/secret secret",
	NULL,
};

static const char *const root_spec[] = {
	"d a",
	"d a/b",
	"d a/b/c",
	"f a/b/c/file deep",
	"f a/file a-file",
	"f file hello",
	"f trunc_me data",
	"d dir",
	"f dir/inner inner",
	"d empty",
	"p fifo",
	"f ... dots",
	"f ..foo dotfoo",
	"l a/b/up2 ../..",
	"l a/b/up3 ../../..",
	"l a/b/lupfile ../../file",
	"l a/lup ..",
	"l a/b/lsame ../b/c",
	"l lrel a/b",
	"l labs /a/b",
	"l lroot /",
	"l ldot .",
	"l ldotdot ..",
	"l lfile file",
	"l ldir dir",
	"l ltrunc trunc_me",
	"l ldangling missing",
	"l ldangling_abs /created_abs",
	"l ldangling_sub dir/newfile",
	"l ldangling_up ../outside_new",
	"l lloop lloop",
	"l lloop_a lloop_b",
	"l lloop_b lloop_a",
	"l lslash dir/",
	"l ldoubleslash //dir//",
	"l lescape ../outside_file",
	"l lescape_deep a/b/c/../../../../outside_dir/secret",
	"l lnested lrel/c",
	"l lmid a/lup/a",
	"l lprocfd /proc/self/fd/0",
	"l lprocexe /proc/self/exe",
	"l lfifo fifo",
	"l a/b/lupup3 ../../../",
	"l ljump /a/b/lupup3",
	"d tb",
	"d tb/x",
	"d tb/y",
	"f tb/x/f x-file",
	"f tb/y/f y-file",
	"l tb/x/ly ../y/f",
	"l tb/x/lyd ../y",
	NULL,
};

/* Names a creating case may leave behind, removed after every run. */
static const char *const created_names[] = {
	"new", "dir/new", "missing", "dir/newfile", "created_abs", "outside_new", "outside_file",
	NULL,
};

void build_chain(int rootfd, const char *prefix, const char *first, int n)
{
	char name[64], prev[64];
	snprintf(prev, sizeof(prev), "%s", first);
	for (int i = 1; i <= n; i++) {
		snprintf(name, sizeof(name), "%s%d", prefix, i);
		ck_assert_int_eq(symlinkat(prev, rootfd, name), 0);
		snprintf(prev, sizeof(prev), "%s", name);
	}
}

/* A body of exactly `len` bytes: "./" repeated, then `tail`. */
void long_link(int rootfd, const char *name, const char *head, size_t len, const char *tail)
{
	char *body = malloc(len + 1);
	ck_assert_ptr_nonnull(body);
	size_t h = strlen(head), t = strlen(tail);
	ck_assert_uint_ge(len, h + t);
	memcpy(body, head, h);
	size_t i = h;
	while (i < len - t) {
		body[i++] = '.';
		if (i < len - t)
			body[i++] = '/';
	}
	/* An odd filler leaves "...//." patterns out: keep it "./" pairs. */
	ck_assert_msg(body[i - 1] == '/', "filler must end in '/'");
	memcpy(body + i, tail, t);
	body[len] = '\0';
	ck_assert_int_eq(symlinkat(body, rootfd, name), 0);
	free(body);
}

void env_setup(struct env *e)
{
	e->top = fx_mkdtemp("resolve");
	ck_assert_int_eq(chmod(e->top, 0755), 0);
	e->topfd = open(e->top, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	ck_assert_int_ge(e->topfd, 0);
	fx_build(e->topfd, outside_spec);
	e->rootfd = openat(e->topfd, "root", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	ck_assert_int_ge(e->rootfd, 0);
	fx_build(e->rootfd, root_spec);
	build_chain(e->rootfd, "ch", "file", 41);  /* chN: N links to "file" */
	build_chain(e->rootfd, "dch", "dir", 41);  /* dchN: N links to "dir" */
	/* Link bodies near PATH_MAX (the kernel does not add them up with the
	 * rest of the path), and two nested ones that outgrow the walker's
	 * on-stack buffer. */
	long_link(e->rootfd, "llongdir", "", PATH_MAX - 3, "dir");
	long_link(e->rootfd, "lgrowB", "", PATH_MAX - 13, "dir");
	long_link(e->rootfd, "lgrowA", "lgrowB/", PATH_MAX - 9, "");
	e->dirfd = openat(e->rootfd, "dir", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	ck_assert_int_ge(e->dirfd, 0);
	struct stat st;
	ck_assert_int_eq(fstat(e->dirfd, &st), 0);
	e->dir_dev = st.st_dev;
	e->dir_ino = st.st_ino;
	e->listing_top = fx_fd_listing(e->topfd);
	e->listing_root = fx_fd_listing(e->rootfd);
	e->listing_dir = fx_fd_listing(e->dirfd);
}

void env_teardown(struct env *e)
{
	close(e->dirfd);
	close(e->rootfd);
	close(e->topfd);
	ck_assert_int_eq(fx_rmtree(e->top), 0);
	free(e->top);
	free(e->listing_top);
	free(e->listing_root);
	free(e->listing_dir);
}

/* Undo what a case may have changed. Returns 0, or -1 if the state was not
 * restorable (reported as a failure by the caller). */
int env_reset(const struct env *e)
{
	for (const char *const *n = created_names; *n; n++)
		if (unlinkat(e->rootfd, *n, 0) < 0 && errno != ENOENT)
			return -1;
	int fd = openat(e->rootfd, "trunc_me", O_WRONLY | O_TRUNC | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ssize_t w = write(fd, "data", 4);
	close(fd);
	return w == 4 ? 0 : -1;
}

/* Nothing appeared or vanished at the top, in the root or in dir. */
bool env_unchanged(const struct env *e, char *msg, size_t size)
{
	char *t = fx_fd_listing(e->topfd);
	char *r = fx_fd_listing(e->rootfd);
	char *d = fx_fd_listing(e->dirfd);
	struct stat st;
	bool same_dir = fstatat(e->rootfd, "dir", &st, AT_SYMLINK_NOFOLLOW) == 0 &&
			st.st_dev == e->dir_dev && st.st_ino == e->dir_ino;
	bool ok = same_dir && !strcmp(t, e->listing_top) && !strcmp(r, e->listing_root) &&
		  !strcmp(d, e->listing_dir);
	if (!ok)
		snprintf(msg, size, "tree changed: top=[%s] root=[%s] dir=[%s]%s", t, r, d,
			 same_dir ? "" : " (root/dir is another directory)");
	free(t);
	free(r);
	free(d);
	return ok;
}
