/* SPDX-License-Identifier: MIT */
/* The environment of the operations suites: see ops-env.h. */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "fixture.h"
#include "ops-env.h"
#include "safeopen.h"
#include "sandbox.h"

struct ops_env E;

/* out = a + "/" + b (out has PATH_MAX bytes). */
void pj(char *out, const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	if (la + lb + 2 > PATH_MAX)
		abort();
	memcpy(out, a, la);
	out[la] = '/';
	memcpy(out + la + 1, b, lb + 1);
}

/* A symlink name -> target (target an absolute path). */
void build_link(int dirfd, const char *name, const char *target)
{
	char line[PATH_MAX + NAME_MAX + 8];
	size_t ln = strlen(name), lt = strlen(target);
	memcpy(line, "l ", 2);
	memcpy(line + 2, name, ln);
	line[2 + ln] = ' ';
	memcpy(line + 3 + ln, target, lt + 1);
	const char *spec[] = { line, NULL };
	fx_build(dirfd, spec);
}

/* The adversarial tree beneath root, and the victims outside. */
void env_open(void)
{
	E.base = fx_mkdtemp("ops");
	ck_assert_int_eq(chmod(E.base, 0755), 0);
	snprintf(E.root, sizeof(E.root), "%s/root", E.base);
	snprintf(E.outside, sizeof(E.outside), "%s/outside", E.base);
	ck_assert_int_eq(mkdir(E.root, 0777), 0);
	ck_assert_int_eq(chmod(E.root, 0777), 0);
	ck_assert_int_eq(mkdir(E.outside, 0755), 0);
	E.rootfd = open(E.root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	E.outfd = open(E.outside, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	ck_assert_int_ge(E.rootfd, 0);
	ck_assert_int_ge(E.outfd, 0);
	static const char *const out_spec[] = {
		"f victim secret", "d vdir", "f vdir/inner x", "d vdir/sub", "f vdir/sub/deep y",
		NULL,
	};
	fx_build(E.outfd, out_spec);
	static const char *const root_spec[] = {
		"d a",
		"d a/b",
		"f a/b/file hello",
		"f file content",
		"l link_file file",
		"l chain link_file",
		"l link_dir a",
		"l a/b/rel ../../file",
		"l up ../outside",
		"l deep a/b/../../../outside",
		"l dangling_out ../outside/newfile",
		"l link_up_victim ../outside/victim",
		"l dangling_in nonexist",
		"d empty",
		"p fifo",
		NULL,
	};
	fx_build(E.rootfd, root_spec);
	build_link(E.rootfd, "abs", E.outside);
	char tgt[PATH_MAX];
	pj(tgt, E.outside, "newfile");
	build_link(E.rootfd, "dangling_abs", tgt);
	pj(tgt, E.outside, "victim");
	build_link(E.rootfd, "abs_victim", tgt);
}

void env_close(void)
{
	close(E.rootfd);
	close(E.outfd);
	/* Undo any mode change a test made before removing the tree. */
	(void)chmod(E.root, 0777);
	ck_assert_int_eq(fx_rmtree(E.base), 0);
	free(E.base);
	E.base = NULL;
}

bool exists_at(int dirfd, const char *path)
{
	struct stat st;
	return fstatat(dirfd, path, &st, AT_SYMLINK_NOFOLLOW) == 0;
}

mode_t lmode(int dirfd, const char *path)
{
	struct stat st;
	ck_assert_int_eq(fstatat(dirfd, path, &st, AT_SYMLINK_NOFOLLOW), 0);
	return st.st_mode;
}


/*
 * Under valgrind only one thread runs at a time and a thread whose syscalls
 * never block can keep the big lock for as long as it likes: without a pause
 * the attacker starves the thread under test (seen: a CI run that never
 * ended). check-valgrind also passes --fair-sched=yes; this is the belt.
 */
void *swap_thread(void *arg)
{
	struct swapper *s = arg;
	bool throttle = fx_under_valgrind();
	while (!atomic_load(&s->stop)) {
		if (syscall(SYS_renameat2, s->dirfd, s->a, s->dirfd, s->b, RENAME_EXCHANGE) == 0)
			atomic_fetch_add(&s->swaps, 1);
		else
			sched_yield();
		if (throttle)
			usleep(50);
	}
	return NULL;
}

/*
 * The verdict on one refusal row: the library's errno `e` and, when the
 * oracle was asked, its errno `ke` must both be `want`, and the tree under
 * `tree` must still read as `before` (fx_tree_snapshot()). Otherwise the row
 * (described by fmt...) is printed with what each said, and false returned.
 */
static bool __attribute__((format(printf, 8, 9)))
refusal_holds(const char *tree, const char *before, int e, int want, const char *oracle,
	      bool asked, int ke, const char *fmt, ...)
{
	char *now = fx_tree_snapshot(tree);
	bool same = !strcmp(before, now);
	free(now);
	if (e == want && (!asked || ke == want) && same)
		return true;
	va_list ap;
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, ": got %s, want %s, %s %s%s\n", e ? strerrorname_np(e) : "0",
		strerrorname_np(want), oracle,
		!asked ? "not asked" : ke ? strerrorname_np(ke) : "0",
		same ? "" : "; the tree changed");
	return false;
}

void run_refusals(const char *tree, size_t n, uint64_t m, refusal_fn try)
{
	char *before = fx_tree_snapshot(tree);
	for (size_t k = 0; k < n; k++) {
		struct refusal_try t = { .oracle = "" };
		errno = 0;
		try(k, m, &t);
		if (t.skip)
			continue;
		if (!refusal_holds(tree, before, t.e, t.want, t.oracle, t.asked, t.ke, "%s (%s)",
				   t.name, WAY(m))) {
			free(before);
			ck_abort_msg("%s (%s) failed: see above", t.name, WAY(m));
		}
	}
	free(before);
}

struct root2 A2 = { .fd = -1 };

const char *const ops_escapes[N_OPS_ESCAPES] = {
	"../outside/victim", "up/victim", "abs/victim", "deep/victim", "a/../../outside/victim",
	"/outside/victim", "link_dir/../../outside/victim", "up/vdir/inner",
};

void two_roots_open(void)
{
	env_open();
	static const char *const extra[] = {
		"l up_victim ../outside/victim",
		"l up_new ../outside/new",
		NULL,
	};
	fx_build(E.rootfd, extra);
	pj(A2.path, E.base, "r2");
	ck_assert_int_eq(mkdir(A2.path, 0755), 0);
	A2.fd = open(A2.path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	ck_assert_int_ge(A2.fd, 0);
	static const char *const root_spec[] = {
		"d a",
		"d a/b",
		"f a/b/file hello",
		"f file content",
		"l link_dir a",
		"l link_file file",
		"l up ../outside",
		"l up_victim ../outside/victim",
		"l up_new ../outside/new",
		"l deep a/b/../../../outside",
		"l dangling_in nonexist",
		"d empty",
		NULL,
	};
	fx_build(A2.fd, root_spec);
	build_link(A2.fd, "abs", E.outside);
	char tgt[PATH_MAX];
	pj(tgt, E.outside, "victim");
	build_link(A2.fd, "abs_victim", tgt);
}

void two_roots_close(void)
{
	close(A2.fd);
	A2.fd = -1;
	env_close();
}
