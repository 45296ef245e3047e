/* SPDX-License-Identifier: MIT */
/*
 * Suite "resolve": safe_openat2() / safe_openat_beneath() against the kernel.
 *
 * The heart is a table of cases over an adversarial tree. Every row states
 * its expected result under RESOLVE_BENEATH and under RESOLVE_IN_ROOT (the
 * path, relative to the root, of the object that must be opened, or an
 * errno), and every case runs three ways: raw openat2(2) (the oracle; not for
 * SAFE_RESOLVE_NO_DOTDOT rows, which the kernel lacks, nor under valgrind,
 * which does not know the syscall), safe_openat2() as is (the fast path where
 * the kernel has openat2), and safe_openat2() with SAFE_RESOLVE_USERSPACE (the
 * walker). Each also runs with NO_XDEV and with NO_MAGICLINKS added, which
 * must not change anything in a tree without mounts or procfs.
 *
 * Around the table: validation and error order, magic links through a real
 * procfs, mount crossings (NO_XDEV) in a private mount namespace, seccomp
 * children without openat2 (ENOSYS, EPERM), an unprivileged child facing a
 * mode-0 directory, and a rename race that must never open anything outside.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "fixture.h"
#include "safeopen.h"
#include "sandbox.h"

#ifndef MS_NOSYMFOLLOW
#define MS_NOSYMFOLLOW 256 /* Linux 5.10 */
#endif
#define B SAFE_RESOLVE_BENEATH
#define I SAFE_RESOLVE_IN_ROOT
#define NS SAFE_RESOLVE_NO_SYMLINKS
#define NM SAFE_RESOLVE_NO_MAGICLINKS
#define NX SAFE_RESOLVE_NO_XDEV
#define ND SAFE_RESOLVE_NO_DOTDOT
#define US SAFE_RESOLVE_USERSPACE

/* ------------------------------------------------------------------ helpers */

static long raw_openat2(int dirfd, const char *path, uint64_t flags, uint64_t mode,
			uint64_t resolve)
{
	struct open_how how = {
		.flags = flags | O_CLOEXEC,
		.mode = mode,
		.resolve = resolve,
	};
	/* EAGAIN means "try again" (any rename in the system during a ".."
	 * step causes it): the oracle's answer is the first other one. */
	long r;
	int tries = 0;
	do
		r = syscall(SYS_openat2, dirfd, path, &how, sizeof(how));
	while (r < 0 && errno == EAGAIN && !(resolve & 0x20) && ++tries < 100000);
	return r;
}

/* Whether the raw syscall exists here (valgrind 3.19 answers ENOSYS). */
static bool kernel_has_openat2(void)
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

static int lib_open(int dirfd, const char *path, uint64_t flags, uint64_t mode, uint64_t resolve)
{
	struct safe_open_how how = { .flags = flags, .mode = mode, .resolve = resolve };
	return safe_openat2(dirfd, path, &how, sizeof(how));
}

enum run_mode { RUN_KERNEL, RUN_DEFAULT, RUN_WALKER, RUN_MODES };
static const char *const mode_names[] = { "openat2", "safe_openat2", "walker" };

/* Open one of the three ways: the raw syscall, the library, the walker. */
static int open_way(int way, int dirfd, const char *path, uint64_t flags, uint64_t mode,
		    uint64_t resolve)
{
	if (way == RUN_KERNEL)
		return (int)raw_openat2(dirfd, path, flags, mode, resolve);
	return lib_open(dirfd, path, flags, mode, resolve | (way == RUN_WALKER ? US : 0));
}

static const char *errname(int e)
{
	const char *n = strerrorname_np(e);
	return n ? n : "?";
}

/* ------------------------------------------------------------------ the tree */

/*
 * top/                  (mode 0755, reachable by uid 65534)
 *   outside_file, outside_dir/secret      never reachable from root
 *   root/                                  the dirfd of every case
 */
struct env {
	char *top;
	int topfd;
	int rootfd;
	char *listing_top, *listing_root, *listing_dir;
};

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

static void build_chain(int rootfd, const char *prefix, const char *first, int n)
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
static void long_link(int rootfd, const char *name, const char *head, size_t len, const char *tail)
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

static void env_setup(struct env *e)
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
	e->listing_top = fx_dir_listing(e->topfd, ".");
	e->listing_root = fx_dir_listing(e->rootfd, ".");
	e->listing_dir = fx_dir_listing(e->rootfd, "dir");
}

static void env_teardown(struct env *e)
{
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
static int env_reset(const struct env *e)
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
static bool env_unchanged(const struct env *e, char *msg, size_t size)
{
	char *t = fx_dir_listing(e->topfd, ".");
	char *r = fx_dir_listing(e->rootfd, ".");
	char *d = fx_dir_listing(e->rootfd, "dir");
	bool ok = !strcmp(t, e->listing_top) && !strcmp(r, e->listing_root) &&
		  !strcmp(d, e->listing_dir);
	if (!ok)
		snprintf(msg, size, "tree changed: top=[%s] root=[%s] dir=[%s]", t, r, d);
	free(t);
	free(r);
	free(d);
	return ok;
}

/* ------------------------------------------------------------------ the case table */

enum { OPT_CREATES = 1, OPT_TMPFILE = 2, OPT_NOKERNEL = 4 };

struct row {
	const char *path;
	uint64_t flags;
	uint64_t res; /* resolve bits besides the scope */
	uint64_t mode;
	const char *b_obj; /* BENEATH: object that must be opened, or NULL and b_err */
	int b_err;
	const char *i_obj; /* IN_ROOT */
	int i_err;
	unsigned opt;
};

#define OBJ(p) (p), 0
#define ERR(e) NULL, (e)
#define ROW(path, flags, res, b, i) { (path), (flags), (res), 0, b, i, 0 }
#define ROWX(path, flags, res, mode, b, i, opt) { (path), (flags), (res), (mode), b, i, (opt) }

#define RD O_RDONLY
#define P O_PATH
#define PN (O_PATH | O_NOFOLLOW)
#define CR (O_CREAT | O_WRONLY)
#define CRX (O_CREAT | O_EXCL | O_WRONLY)
#define TMP (O_TMPFILE | O_RDWR)

static const struct row rows[] = {
	/* plain components */
	ROW("file", RD, 0, OBJ("file"), OBJ("file")),
	ROW("a/b/c/file", RD, 0, OBJ("a/b/c/file"), OBJ("a/b/c/file")),
	ROW("a//b///c/file", RD, 0, OBJ("a/b/c/file"), OBJ("a/b/c/file")),
	ROW("./a/./b/./c/./file", RD, 0, OBJ("a/b/c/file"), OBJ("a/b/c/file")),
	ROW("a/b/../b/c/file", RD, 0, OBJ("a/b/c/file"), OBJ("a/b/c/file")),
	/* ".." then the name it left: the walker takes that level back */
	ROW("a/b/../b/../b/c/file", RD, 0, OBJ("a/b/c/file"), OBJ("a/b/c/file")),
	ROW("a/b/c/../c/../../b/c/file", RD, 0, OBJ("a/b/c/file"), OBJ("a/b/c/file")),
	ROW("a/b/../b", P, 0, OBJ("a/b"), OBJ("a/b")),
	ROW("a/b/../c/file", RD, 0, ERR(ENOENT), ERR(ENOENT)),
	/* ".." then another name: x is not taken back (tb/x/f differs) */
	ROW("tb/x/../y/f", RD, 0, OBJ("tb/y/f"), OBJ("tb/y/f")),
	ROW("tb/x/ly", RD, 0, OBJ("tb/y/f"), OBJ("tb/y/f")),
	ROW("tb/x/lyd/f", RD, 0, OBJ("tb/y/f"), OBJ("tb/y/f")),
	ROW("a/b/lsame/file", RD, 0, OBJ("a/b/c/file"), OBJ("a/b/c/file")),
	ROW("a/b/lsame/../lsame/file", RD, 0, OBJ("a/b/c/file"), OBJ("a/b/c/file")),
	ROW("a/b/lsame/../../b/./c/file", RD, 0, OBJ("a/b/c/file"), OBJ("a/b/c/file")),
	ROW("a/b/c/../../../file", RD, 0, OBJ("file"), OBJ("file")),
	ROW("a/b/c/../../../../file", RD, 0, ERR(EXDEV), OBJ("file")),
	ROW("a/../../root/file", RD, 0, ERR(EXDEV), ERR(ENOENT)),
	ROW("..", RD, 0, ERR(EXDEV), OBJ(".")),
	ROW("../", RD, 0, ERR(EXDEV), OBJ(".")),
	ROW("../..", P, 0, ERR(EXDEV), OBJ(".")),
	ROW("a/../..", RD, 0, ERR(EXDEV), OBJ(".")),
	ROW("/file", RD, 0, ERR(EXDEV), OBJ("file")),
	ROW("/", RD, 0, ERR(EXDEV), OBJ(".")),
	ROW("//a/b", RD, 0, ERR(EXDEV), OBJ("a/b")),
	ROW("/../../a", P, 0, ERR(EXDEV), OBJ("a")),
	ROW(".", RD, 0, OBJ("."), OBJ(".")),
	ROW("./", RD, 0, OBJ("."), OBJ(".")),
	ROW(".//.//", P, 0, OBJ("."), OBJ(".")),
	ROW("", RD, 0, ERR(ENOENT), ERR(ENOENT)),
	ROW("missing", RD, 0, ERR(ENOENT), ERR(ENOENT)),
	ROW("missing/", RD, 0, ERR(ENOENT), ERR(ENOENT)),
	ROW("missing/..", RD, 0, ERR(ENOENT), ERR(ENOENT)),
	ROW("missing/../file", P, 0, ERR(ENOENT), ERR(ENOENT)),
	ROW("a/b/c/file/", RD, 0, ERR(ENOTDIR), ERR(ENOTDIR)),
	ROW("file/", P, 0, ERR(ENOTDIR), ERR(ENOTDIR)),
	ROW("file//", RD, 0, ERR(ENOTDIR), ERR(ENOTDIR)),
	ROW("file/.", RD, 0, ERR(ENOTDIR), ERR(ENOTDIR)),
	ROW("file/..", RD, 0, ERR(ENOTDIR), ERR(ENOTDIR)),
	ROW("a/file/../file", RD, 0, ERR(ENOTDIR), ERR(ENOTDIR)),
	ROW("dir/inner/", RD, 0, ERR(ENOTDIR), ERR(ENOTDIR)),
	ROW("...", RD, 0, OBJ("..."), OBJ("...")),
	ROW("..foo", RD, 0, OBJ("..foo"), OBJ("..foo")),
	ROW("dir/", RD, 0, OBJ("dir"), OBJ("dir")),
	ROW("dir//", P, 0, OBJ("dir"), OBJ("dir")),
	ROW("dir/.", RD, 0, OBJ("dir"), OBJ("dir")),
	ROW("dir/..", RD, 0, OBJ("."), OBJ(".")),
	ROW("dir/../", RD, 0, OBJ("."), OBJ(".")),
	ROW("empty/../dir/inner", RD, 0, OBJ("dir/inner"), OBJ("dir/inner")),
	/* relative and absolute symlinks */
	ROW("lrel/c/file", RD, 0, OBJ("a/b/c/file"), OBJ("a/b/c/file")),
	ROW("lrel", RD, 0, OBJ("a/b"), OBJ("a/b")),
	ROW("lrel", P, 0, OBJ("a/b"), OBJ("a/b")),
	ROW("lrel", PN, 0, OBJ("lrel"), OBJ("lrel")),
	ROW("lrel", O_NOFOLLOW, 0, ERR(ELOOP), ERR(ELOOP)),
	ROW("lrel", O_NOFOLLOW | O_DIRECTORY, 0, ERR(ENOTDIR), ERR(ENOTDIR)),
	ROW("lrel", PN | O_DIRECTORY, 0, ERR(ENOTDIR), ERR(ENOTDIR)),
	ROW("lrel/", O_NOFOLLOW, 0, OBJ("a/b"), OBJ("a/b")),
	ROW("lrel/", PN, 0, OBJ("a/b"), OBJ("a/b")),
	ROW("lrel/c/", RD, 0, OBJ("a/b/c"), OBJ("a/b/c")),
	ROW("lrel/..", RD, 0, OBJ("a"), OBJ("a")),
	ROW("lfile", RD, 0, OBJ("file"), OBJ("file")),
	ROW("lfile", PN, 0, OBJ("lfile"), OBJ("lfile")),
	ROW("lfile/", RD, 0, ERR(ENOTDIR), ERR(ENOTDIR)),
	ROW("lfile", O_DIRECTORY, 0, ERR(ENOTDIR), ERR(ENOTDIR)),
	ROW("ldir", O_DIRECTORY, 0, OBJ("dir"), OBJ("dir")),
	ROW("ldir", O_DIRECTORY | O_NOFOLLOW, 0, ERR(ENOTDIR), ERR(ENOTDIR)),
	ROW("ldir/inner", O_NOFOLLOW, 0, OBJ("dir/inner"), OBJ("dir/inner")),
	ROW("labs", RD, 0, ERR(EXDEV), OBJ("a/b")),
	ROW("labs", PN, 0, OBJ("labs"), OBJ("labs")),
	ROW("labs/c/file", RD, 0, ERR(EXDEV), OBJ("a/b/c/file")),
	ROW("labs/../../file", RD, 0, ERR(EXDEV), OBJ("file")),
	ROW("lroot", RD, 0, ERR(EXDEV), OBJ(".")),
	ROW("lroot/file", RD, 0, ERR(EXDEV), OBJ("file")),
	ROW("lroot/..", P, 0, ERR(EXDEV), OBJ(".")),
	ROW("ldot", RD, 0, OBJ("."), OBJ(".")),
	ROW("ldot/ldot/ldot/file", RD, 0, OBJ("file"), OBJ("file")),
	ROW("ldotdot", RD, 0, ERR(EXDEV), OBJ(".")),
	ROW("ldotdot/file", RD, 0, ERR(EXDEV), OBJ("file")),
	ROW("ldotdot/root/file", RD, 0, ERR(EXDEV), ERR(ENOENT)),
	ROW("a/lup/file", RD, 0, OBJ("file"), OBJ("file")),
	ROW("a/lup", RD, 0, OBJ("."), OBJ(".")),
	ROW("a/lup/..", RD, 0, ERR(EXDEV), OBJ(".")),
	ROW("a/lup/a/lup/a/file", RD, 0, OBJ("a/file"), OBJ("a/file")),
	ROW("a/b/up2/file", RD, 0, OBJ("file"), OBJ("file")),
	ROW("a/b/up3/file", RD, 0, ERR(EXDEV), OBJ("file")),
	ROW("a/b/up3", PN, 0, OBJ("a/b/up3"), OBJ("a/b/up3")),
	ROW("a/b/lupfile", RD, 0, OBJ("file"), OBJ("file")),
	ROW("lescape", RD, 0, ERR(EXDEV), ERR(ENOENT)),
	ROW("lescape_deep", RD, 0, ERR(EXDEV), ERR(ENOENT)),
	ROW("ldangling", RD, 0, ERR(ENOENT), ERR(ENOENT)),
	ROW("ldangling", PN, 0, OBJ("ldangling"), OBJ("ldangling")),
	ROW("ldangling/", RD, 0, ERR(ENOENT), ERR(ENOENT)),
	ROW("ldangling_abs", RD, 0, ERR(EXDEV), ERR(ENOENT)),
	ROW("lslash", RD, 0, OBJ("dir"), OBJ("dir")),
	ROW("lslash/inner", RD, 0, OBJ("dir/inner"), OBJ("dir/inner")),
	ROW("lslash", O_NOFOLLOW, 0, ERR(ELOOP), ERR(ELOOP)),
	ROW("ldoubleslash", RD, 0, ERR(EXDEV), OBJ("dir")),
	ROW("ldoubleslash/inner", RD, 0, ERR(EXDEV), OBJ("dir/inner")),
	ROW("lnested", RD, 0, OBJ("a/b/c"), OBJ("a/b/c")),
	ROW("lnested/file", RD, 0, OBJ("a/b/c/file"), OBJ("a/b/c/file")),
	ROW("lmid/file", RD, 0, OBJ("a/file"), OBJ("a/file")),
	ROW("lprocfd", RD, 0, ERR(EXDEV), ERR(ENOENT)),
	ROW("lprocexe", RD, 0, ERR(EXDEV), ERR(ENOENT)),
	/* an absolute jump, then a body climbing into levels walked after it */
	ROW("ljump/", PN, 0, ERR(EXDEV), OBJ(".")),
	ROW("ljump", O_RDWR, 0, ERR(EXDEV), ERR(EISDIR)),
	ROW("a/b/lupup3", P, 0, ERR(EXDEV), OBJ(".")),
	ROW("a/b/lupup3/a/b/lupup3/file", RD, 0, ERR(EXDEV), OBJ("file")),
	ROW("dir/../ljump/file", RD, 0, ERR(EXDEV), OBJ("file")),
	ROW("lfifo", O_RDONLY | O_NONBLOCK, 0, OBJ("fifo"), OBJ("fifo")),
	ROW("fifo", O_WRONLY | O_NONBLOCK, 0, ERR(ENXIO), ERR(ENXIO)),
	ROW("fifo", P, 0, OBJ("fifo"), OBJ("fifo")),
	/* loops and the 40-link limit, counted over the whole walk */
	ROW("lloop", RD, 0, ERR(ELOOP), ERR(ELOOP)),
	ROW("lloop", PN, 0, OBJ("lloop"), OBJ("lloop")),
	ROW("lloop/", PN, 0, ERR(ELOOP), ERR(ELOOP)),
	ROW("lloop_a/x", RD, 0, ERR(ELOOP), ERR(ELOOP)),
	ROW("ch40", RD, 0, OBJ("file"), OBJ("file")),
	ROW("ch41", RD, 0, ERR(ELOOP), ERR(ELOOP)),
	ROW("ch41", PN, 0, OBJ("ch41"), OBJ("ch41")),
	ROW("dch40/inner", RD, 0, OBJ("dir/inner"), OBJ("dir/inner")),
	ROW("dch41/inner", RD, 0, ERR(ELOOP), ERR(ELOOP)),
	ROW("dch40/", PN, 0, OBJ("dir"), OBJ("dir")),
	ROW("dch20/../dch20/inner", RD, 0, OBJ("dir/inner"), OBJ("dir/inner")),
	ROW("dch20/../dch21/inner", RD, 0, ERR(ELOOP), ERR(ELOOP)),
	ROW("dch39/../lfile", RD, 0, OBJ("file"), OBJ("file")),
	ROW("dch40/../lfile", RD, 0, ERR(ELOOP), ERR(ELOOP)),
	ROW("dch40/../lfile", PN, 0, OBJ("lfile"), OBJ("lfile")),
	ROW("llongdir/inner", RD, 0, OBJ("dir/inner"), OBJ("dir/inner")),
	ROW("lgrowA/inner", RD, 0, OBJ("dir/inner"), OBJ("dir/inner")),
	/* NO_SYMLINKS */
	ROW("lrel/c/file", RD, NS, ERR(ELOOP), ERR(ELOOP)),
	ROW("a/b/c/file", RD, NS, OBJ("a/b/c/file"), OBJ("a/b/c/file")),
	ROW("lrel", PN, NS, OBJ("lrel"), OBJ("lrel")),
	ROW("lrel", P, NS, ERR(ELOOP), ERR(ELOOP)),
	ROW("lrel/", PN, NS, ERR(ELOOP), ERR(ELOOP)),
	ROW("lfile", O_NOFOLLOW, NS, ERR(ELOOP), ERR(ELOOP)),
	ROW("a/lup/file", RD, NS, ERR(ELOOP), ERR(ELOOP)),
	ROW("ldangling", RD, NS, ERR(ELOOP), ERR(ELOOP)),
	ROW("labs", RD, NS, ERR(ELOOP), ERR(ELOOP)),
	ROW("dch41/inner", RD, NS, ERR(ELOOP), ERR(ELOOP)),
	ROW("a/b/../../file", RD, NS, OBJ("file"), OBJ("file")),
	/* NO_MAGICLINKS / NO_XDEV on ordinary links (no change) */
	ROW("lnested/file", RD, NM, OBJ("a/b/c/file"), OBJ("a/b/c/file")),
	ROW("lroot/file", RD, NX, ERR(EXDEV), OBJ("file")),
	ROW("a/b/c/../../file", RD, NX | NM, OBJ("a/file"), OBJ("a/file")),
	/* O_DIRECTORY, O_PATH, access modes */
	ROW("dir", O_DIRECTORY, 0, OBJ("dir"), OBJ("dir")),
	ROW("file", O_DIRECTORY, 0, ERR(ENOTDIR), ERR(ENOTDIR)),
	ROW("file", O_PATH | O_DIRECTORY, 0, ERR(ENOTDIR), ERR(ENOTDIR)),
	ROW("dir", O_WRONLY, 0, ERR(EISDIR), ERR(EISDIR)),
	ROW("dir", O_RDWR, 0, ERR(EISDIR), ERR(EISDIR)),
	ROW(".", O_WRONLY, 0, ERR(EISDIR), ERR(EISDIR)),
	ROW("file", O_RDWR | O_APPEND, 0, OBJ("file"), OBJ("file")),
	ROW("lfile", O_PATH | O_NOFOLLOW | O_DIRECTORY, 0, ERR(ENOTDIR), ERR(ENOTDIR)),
	/* O_TRUNC */
	ROW("trunc_me", O_WRONLY | O_TRUNC, 0, OBJ("trunc_me"), OBJ("trunc_me")),
	ROW("ltrunc", O_RDWR | O_TRUNC, 0, OBJ("trunc_me"), OBJ("trunc_me")),
	ROW("ltrunc", O_RDWR | O_TRUNC | O_NOFOLLOW, 0, ERR(ELOOP), ERR(ELOOP)),
	ROW("dir", O_TRUNC, 0, ERR(EISDIR), ERR(EISDIR)),
	ROW("ldangling", O_WRONLY | O_TRUNC, 0, ERR(ENOENT), ERR(ENOENT)),
	/* O_CREAT / O_EXCL */
	ROWX("new", CR, 0, 0644, OBJ("new"), OBJ("new"), OPT_CREATES),
	ROWX("dir/new", CR, 0, 0600, OBJ("dir/new"), OBJ("dir/new"), OPT_CREATES),
	ROWX("new", CRX, 0, 0, OBJ("new"), OBJ("new"), OPT_CREATES),
	ROWX("a/../new", CR, 0, 0644, OBJ("new"), OBJ("new"), OPT_CREATES),
	ROWX("../new", CR, 0, 0644, ERR(EXDEV), OBJ("new"), OPT_CREATES),
	ROWX("/new", CR, 0, 0644, ERR(EXDEV), OBJ("new"), OPT_CREATES),
	ROWX("lroot/dir/new", CR, 0, 0644, ERR(EXDEV), OBJ("dir/new"), OPT_CREATES),
	ROWX("file", CRX, 0, 0644, ERR(EEXIST), ERR(EEXIST), OPT_CREATES),
	ROWX("lfile", CRX, 0, 0644, ERR(EEXIST), ERR(EEXIST), OPT_CREATES),
	ROWX("ldangling", CRX, 0, 0644, ERR(EEXIST), ERR(EEXIST), OPT_CREATES),
	ROWX("ldangling", CR, 0, 0644, OBJ("missing"), OBJ("missing"), OPT_CREATES),
	ROWX("ldangling", CR | O_NOFOLLOW, 0, 0644, ERR(ELOOP), ERR(ELOOP), OPT_CREATES),
	ROWX("ldangling", CR, NS, 0644, ERR(ELOOP), ERR(ELOOP), OPT_CREATES),
	ROWX("ldangling_sub", CR, 0, 0644, OBJ("dir/newfile"), OBJ("dir/newfile"), OPT_CREATES),
	ROWX("ldangling_abs", CR, 0, 0644, ERR(EXDEV), OBJ("created_abs"), OPT_CREATES),
	ROWX("ldangling_up", CR, 0, 0644, ERR(EXDEV), OBJ("outside_new"), OPT_CREATES),
	ROWX("lfile", CR, 0, 0644, OBJ("file"), OBJ("file"), OPT_CREATES),
	ROWX("ltrunc", CR | O_TRUNC, 0, 0644, OBJ("trunc_me"), OBJ("trunc_me"), OPT_CREATES),
	ROWX("dir", CR, 0, 0644, ERR(EISDIR), ERR(EISDIR), OPT_CREATES),
	ROWX("ldir", CR, 0, 0644, ERR(EISDIR), ERR(EISDIR), OPT_CREATES),
	ROWX("dir/", CR, 0, 0644, ERR(EISDIR), ERR(EISDIR), OPT_CREATES),
	ROWX("new/", CR, 0, 0644, ERR(EISDIR), ERR(EISDIR), OPT_CREATES),
	ROWX("file/", CR, 0, 0644, ERR(EISDIR), ERR(EISDIR), OPT_CREATES),
	ROWX("ldangling/", CR, 0, 0644, ERR(EISDIR), ERR(EISDIR), OPT_CREATES),
	ROWX(".", CR, 0, 0644, ERR(EISDIR), ERR(EISDIR), OPT_CREATES),
	ROWX(".", CRX, 0, 0644, ERR(EEXIST), ERR(EEXIST), OPT_CREATES),
	ROWX("..", CR, 0, 0644, ERR(EXDEV), ERR(EISDIR), OPT_CREATES),
	ROWX("/", CRX, 0, 0644, ERR(EXDEV), ERR(EEXIST), OPT_CREATES),
	ROWX("missing_dir/new", CR, 0, 0644, ERR(ENOENT), ERR(ENOENT), OPT_CREATES),
	ROWX("file/new", CR, 0, 0644, ERR(ENOTDIR), ERR(ENOTDIR), OPT_CREATES),
	ROWX("lescape", CR, 0, 0644, ERR(EXDEV), OBJ("outside_file"), OPT_CREATES),
	/* O_TMPFILE: the path names the directory */
	ROWX("dir", TMP, 0, 0600, OBJ("dir"), OBJ("dir"), OPT_TMPFILE),
	ROWX(".", TMP, 0, 0600, OBJ("."), OBJ("."), OPT_TMPFILE),
	ROWX("ldir", TMP, 0, 0600, OBJ("dir"), OBJ("dir"), OPT_TMPFILE),
	ROWX("lrel/c/", TMP, 0, 0600, OBJ("a/b/c"), OBJ("a/b/c"), OPT_TMPFILE),
	ROWX("ldir", TMP | O_NOFOLLOW, 0, 0600, ERR(ENOTDIR), ERR(ENOTDIR), OPT_TMPFILE),
	ROWX("file", TMP, 0, 0600, ERR(ENOTDIR), ERR(ENOTDIR), OPT_TMPFILE),
	ROWX("missing", TMP, 0, 0600, ERR(ENOENT), ERR(ENOENT), OPT_TMPFILE),
	ROWX("..", TMP, 0, 0600, ERR(EXDEV), OBJ("."), OPT_TMPFILE),
	ROWX("lroot", TMP, 0, 0600, ERR(EXDEV), OBJ("."), OPT_TMPFILE),
	/* SAFE_RESOLVE_NO_DOTDOT: any ".." (path or followed body) is EXDEV */
	ROWX("a/../file", RD, ND, 0, ERR(EXDEV), ERR(EXDEV), OPT_NOKERNEL),
	ROWX("..", RD, ND, 0, ERR(EXDEV), ERR(EXDEV), OPT_NOKERNEL),
	ROWX("a/b/up2/file", RD, ND, 0, ERR(EXDEV), ERR(EXDEV), OPT_NOKERNEL),
	ROWX("a/lup", RD, ND, 0, ERR(EXDEV), ERR(EXDEV), OPT_NOKERNEL),
	ROWX("a/lup", PN, ND, 0, OBJ("a/lup"), OBJ("a/lup"), OPT_NOKERNEL),
	ROWX("file", RD, ND, 0, OBJ("file"), OBJ("file"), OPT_NOKERNEL),
	ROWX("lrel/c/file", RD, ND, 0, OBJ("a/b/c/file"), OBJ("a/b/c/file"), OPT_NOKERNEL),
	ROWX("...", RD, ND, 0, OBJ("..."), OBJ("..."), OPT_NOKERNEL),
	ROWX("..foo", RD, ND, 0, OBJ("..foo"), OBJ("..foo"), OPT_NOKERNEL),
	ROWX("missing/../file", RD, ND, 0, ERR(ENOENT), ERR(ENOENT), OPT_NOKERNEL),
	ROWX("dir/.", RD, ND, 0, OBJ("dir"), OBJ("dir"), OPT_NOKERNEL),
	ROWX("labs", RD, ND, 0, ERR(EXDEV), OBJ("a/b"), OPT_NOKERNEL),
	ROWX("../new", CR, ND, 0644, ERR(EXDEV), ERR(EXDEV), OPT_NOKERNEL | OPT_CREATES),
	ROWX("lrel", RD, ND | NS, 0, ERR(ELOOP), ERR(ELOOP), OPT_NOKERNEL),
};

/* Check one result against the expectation. */
static bool check_result(const struct env *e, const struct row *r, const char *obj, int err,
			 int fd, int got_err, char *msg, size_t size)
{
	if (!obj) {
		if (fd >= 0) {
			snprintf(msg, size, "expected %s, got an fd", errname(err));
			return false;
		}
		if (got_err != err) {
			snprintf(msg, size, "expected %s, got %s", errname(err), errname(got_err));
			return false;
		}
		return true;
	}
	if (fd < 0) {
		snprintf(msg, size, "expected %s, got %s", obj, errname(got_err));
		return false;
	}
	struct stat got, want;
	if (fstat(fd, &got) < 0 || fstatat(e->rootfd, obj, &want, AT_SYMLINK_NOFOLLOW) < 0) {
		snprintf(msg, size, "stat: %s", strerror(errno));
		return false;
	}
	if (r->opt & OPT_TMPFILE) {
		if (!S_ISREG(got.st_mode) || got.st_nlink != 0 || got.st_dev != want.st_dev) {
			snprintf(msg, size, "expected an unnamed file in %s", obj);
			return false;
		}
		return true;
	}
	if (got.st_dev != want.st_dev || got.st_ino != want.st_ino) {
		snprintf(msg, size, "expected %s, opened another object (ino %lu)", obj,
			 (unsigned long)got.st_ino);
		return false;
	}
	int fl = fcntl(fd, F_GETFD);
	if (fl < 0 || !(fl & FD_CLOEXEC)) {
		snprintf(msg, size, "result is not O_CLOEXEC");
		return false;
	}
	return true;
}

/* Run one case one way. Returns true on success; msg explains a failure. */
static bool run_one(const struct env *e, const struct row *r, uint64_t scope, uint64_t extra,
		    enum run_mode m, char *msg, size_t size)
{
	uint64_t res = scope | r->res | extra;
	const char *obj = scope == B ? r->b_obj : r->i_obj;
	int err = scope == B ? r->b_err : r->i_err;
	int fd = open_way(m, e->rootfd, r->path, r->flags, r->mode, res);
	int got_err = fd < 0 ? errno : 0;
	bool ok = check_result(e, r, obj, err, fd, got_err, msg, size);
	if (fd >= 0)
		close(fd);
	if (r->opt & (OPT_CREATES | OPT_TMPFILE) || (r->flags & O_TRUNC)) {
		if (env_reset(e) < 0 && ok) {
			snprintf(msg, size, "cannot reset the tree: %s", strerror(errno));
			ok = false;
		}
	}
	if (ok && !env_unchanged(e, msg, size))
		ok = false;
	return ok;
}

/*
 * Run the whole table. `modes` is a bit mask of run_mode; the kernel is only
 * asked when it has openat2. Returns the number of failures (each printed).
 * Usable in sb_run children: it never calls ck_assert.
 */
static int run_table(const struct env *e, unsigned modes, bool variants, int *ncases)
{
	static const uint64_t extras[] = { 0, NX, NM };
	bool kernel = kernel_has_openat2();
	int failures = 0, cases = 0;
	char msg[512];
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		const struct row *r = &rows[i];
		for (int s = 0; s < 2; s++) {
			uint64_t scope = s ? I : B;
			cases++;
			for (size_t x = 0; x < (variants ? 3 : 1); x++) {
				for (int m = 0; m < RUN_MODES; m++) {
					if (!(modes & (1U << m)))
						continue;
					if (m == RUN_KERNEL && (!kernel || (r->opt & OPT_NOKERNEL)))
						continue;
					if (run_one(e, r, scope, extras[x], (enum run_mode)m, msg,
						    sizeof(msg)))
						continue;
					failures++;
					fprintf(stderr, "row %zu \"%.60s\" flags=%#llo "
						"resolve=%#llx via %s: %s\n", i, r->path,
						(unsigned long long)r->flags,
						(unsigned long long)(scope | r->res | extras[x]),
						mode_names[m], msg);
				}
			}
		}
	}
	if (ncases)
		*ncases = cases;
	return failures;
}

#define ALL_MODES ((1U << RUN_KERNEL) | (1U << RUN_DEFAULT) | (1U << RUN_WALKER))

START_TEST(case_table)
{
	struct env e;
	env_setup(&e);
	int cases = 0;
	int failures = run_table(&e, ALL_MODES, true, &cases);
	ck_assert_int_ge(cases, 150);
	ck_assert_msg(failures == 0, "%d failures over %d cases (see stderr)", failures, cases);
	env_teardown(&e);
}
END_TEST

/* ------------------------------------------------------------------ validation */

struct vcase {
	const char *name;
	int dirfd; /* -1: the root; -2: a bad fd; -3: a regular file */
	const char *path;
	uint64_t flags, mode, resolve;
	size_t size;
	bool null_how;
	int err; /* expected errno (0: success) */
	bool lib_only; /* the library's own rule: the kernel accepts it */
};

static const struct vcase vcases[] = {
	{ "size 0", -1, "file", 0, 0, B, 0, false, EINVAL, false },
	{ "size 23", -1, "file", 0, 0, B, 23, false, EINVAL, false },
	{ "NULL how, size 0", -1, "file", 0, 0, B, 0, true, EINVAL, false },
	{ "NULL how", -1, "file", 0, 0, B, 24, true, EFAULT, false },
	{ "size over a page", -1, "file", 0, 0, B, 8192, false, E2BIG, false },
	{ "NULL how, size over a page", -1, "file", 0, 0, B, 8192, true, E2BIG, false },
	{ "size 32, zero tail", -1, "file", 0, 0, B, 32, false, 0, false },
	{ "size 4096, zero tail", -1, "file", 0, 0, B, 4096, false, 0, false },
	{ "unknown flag bit 2", -1, "file", 04, 0, B, 24, false, EINVAL, false },
	{ "unknown flag bit 23", -1, "file", 1U << 23, 0, B, 24, false, EINVAL, false },
	{ "unknown flag bit 31", -1, "file", 1U << 31, 0, B, 24, false, EINVAL, false },
	{ "unknown flag bit 40", -1, "file", 1ULL << 40, 0, B, 24, false, EINVAL, false },
	{ "unknown resolve bit", -1, "file", 0, 0, B | 0x40, 24, false, EINVAL, false },
	{ "unknown resolve bit 35", -1, "file", 0, 0, B | (1ULL << 35), 24, false, EINVAL, false },
	{ "BENEATH|IN_ROOT", -1, "file", 0, 0, B | I, 24, false, EINVAL, false },
	{ "no scope", -1, "file", 0, 0, 0, 24, false, EINVAL, true },
	{ "NO_XDEV without scope", -1, "file", 0, 0, NX, 24, false, EINVAL, true },
	{ "mode without O_CREAT", -1, "file", 0, 0644, B, 24, false, EINVAL, false },
	{ "mode 010000", -1, "new", O_CREAT | O_WRONLY, 010000, B, 24, false, EINVAL, false },
	{ "O_CREAT|O_DIRECTORY", -1, "new", O_CREAT | O_DIRECTORY, 0, B, 24, false, EINVAL,
	  false },
	{ "O_PATH|O_CREAT", -1, "new", O_PATH | O_CREAT, 0, B, 24, false, EINVAL, false },
	{ "O_PATH|O_EXCL", -1, "file", O_PATH | O_EXCL, 0, B, 24, false, EINVAL, false },
	{ "O_PATH|O_RDWR", -1, "file", O_PATH | O_RDWR, 0, B, 24, false, EINVAL, false },
	{ "O_PATH|O_NOCTTY", -1, "file", O_PATH | O_NOCTTY, 0, B, 24, false, EINVAL, false },
	{ "O_PATH|O_DIRECT", -1, "file", O_PATH | O_DIRECT, 0, B, 24, false, EINVAL, false },
	{ "O_PATH|kernel O_LARGEFILE", -1, "file", O_PATH | 0100000, 0, B, 24, false, EINVAL,
	  false },
	{ "kernel O_LARGEFILE", -1, "file", 0100000, 0, B, 24, false, 0, false },
	{ "O_PATH|O_CLOEXEC|O_NOFOLLOW|O_DIRECTORY", -1, "dir",
	  O_PATH | O_CLOEXEC | O_NOFOLLOW | O_DIRECTORY, 0, B, 24, false, 0, false },
	{ "O_TMPFILE read-only", -1, "dir", O_TMPFILE, 0600, B, 24, false, EINVAL, false },
	{ "O_TMPFILE|O_CREAT", -1, "dir", O_TMPFILE | O_CREAT | O_RDWR, 0600, B, 24, false,
	  EINVAL, false },
	{ "O_TMPFILE|O_PATH", -1, "dir", O_TMPFILE | O_PATH | O_RDWR, 0, B, 24, false, EINVAL,
	  false },
	{ "__O_TMPFILE without O_DIRECTORY", -1, "dir", (O_TMPFILE & ~O_DIRECTORY) | O_RDWR, 0600,
	  B, 24, false, EINVAL, false },
	{ "O_ACCMODE 3", -1, "file", 3, 0, B, 24, false, 0, false },
	{ "RESOLVE_CACHED", -1, "file", 0, 0, B | 0x20, 24, false, 0, false },
	{ "RESOLVE_CACHED|O_CREAT", -1, "new", O_CREAT | O_WRONLY, 0600, B | 0x20, 24, false,
	  EAGAIN, false },
	{ "empty path, bad flags", -1, "", 1ULL << 40, 0, B, 24, false, EINVAL, false },
	{ "NULL path, bad flags", -1, NULL, 1ULL << 40, 0, B, 24, false, EINVAL, false },
	{ "NULL path", -1, NULL, 0, 0, B, 24, false, EFAULT, false },
	{ "empty path, bad fd", -2, "", 0, 0, B, 24, false, ENOENT, false },
	{ "absolute, BENEATH, bad fd", -2, "/file", 0, 0, B, 24, false, EXDEV, false },
	{ "absolute, BENEATH, file fd", -3, "/file", 0, 0, B, 24, false, EXDEV, false },
	{ "absolute, IN_ROOT, bad fd", -2, "/file", 0, 0, I, 24, false, EBADF, false },
	{ "absolute, IN_ROOT, file fd", -3, "/file", 0, 0, I, 24, false, ENOTDIR, false },
	{ "\"/\", IN_ROOT, file fd", -3, "/", 0, 0, I, 24, false, ENOTDIR, false },
	{ "relative, bad fd", -2, "file", 0, 0, B, 24, false, EBADF, false },
	{ "relative, file fd", -3, "file", 0, 0, B, 24, false, ENOTDIR, false },
	{ "\".\", file fd", -3, ".", 0, 0, B, 24, false, ENOTDIR, false },
	{ "\"..\", bad fd", -2, "..", 0, 0, I, 24, false, EBADF, false },
	{ "NO_XDEV, bad fd", -2, "file", 0, 0, B | NX, 24, false, EBADF, false },
	{ "NO_XDEV, file fd", -3, "file", 0, 0, B | NX, 24, false, ENOTDIR, false },
};

static bool run_vcase(const struct env *e, int filefd, const struct vcase *v, int way,
		      char *msg, size_t size)
{
	int dirfd = v->dirfd == -1 ? e->rootfd : v->dirfd == -2 ? 9999 : filefd;
	unsigned char buf[8192];
	memset(buf, 0, sizeof(buf));
	struct safe_open_how *h = (struct safe_open_how *)buf;
	h->flags = v->flags;
	h->mode = v->mode;
	h->resolve = v->resolve;
	int fd;
	if (way == RUN_KERNEL) {
		struct open_how *kh = (struct open_how *)buf;
		fd = (int)syscall(SYS_openat2, dirfd, v->path, v->null_how ? NULL : kh, v->size);
	} else {
		if (way == RUN_WALKER)
			h->resolve |= US;
		fd = safe_openat2(dirfd, v->path, v->null_how ? NULL : h, v->size);
	}
	int err = fd < 0 ? errno : 0;
	if (fd >= 0)
		close(fd);
	(void)unlinkat(e->rootfd, "new", 0);
	/* SAFE_RESOLVE_CACHED: the walker cannot promise a cache-only lookup
	 * (also when it stands in for a missing openat2, e.g. under valgrind). */
	bool walks = way == RUN_WALKER || (way != RUN_KERNEL && !kernel_has_openat2());
	int want_err = (walks && (v->resolve & 0x20)) ? EAGAIN : v->err;
	bool want_ok = want_err == 0 || (way == RUN_KERNEL && v->lib_only);
	if (want_ok ? fd >= 0 : (fd < 0 && err == want_err))
		return true;
	snprintf(msg, size, "%s via %s: expected %s, got %s", v->name, mode_names[way],
		 want_ok ? "success" : errname(want_err), fd >= 0 ? "success" : errname(err));
	return false;
}

START_TEST(validation_and_error_order)
{
	struct env e;
	env_setup(&e);
	int filefd = openat(e.rootfd, "file", O_RDONLY | O_CLOEXEC);
	ck_assert_int_ge(filefd, 0);
	bool kernel = kernel_has_openat2();
	char msg[512];
	for (size_t i = 0; i < sizeof(vcases) / sizeof(vcases[0]); i++) {
		for (int way = 0; way < RUN_MODES; way++) {
			if (way == RUN_KERNEL && !kernel)
				continue;
			ck_assert_msg(run_vcase(&e, filefd, &vcases[i], way, msg, sizeof(msg)),
				      "%s", msg);
		}
	}
	close(filefd);
	env_teardown(&e);
}
END_TEST

START_TEST(path_length_limits)
{
	struct env e;
	env_setup(&e);
	char *p = malloc(PATH_MAX + 16);
	ck_assert_ptr_nonnull(p);
	bool kernel = kernel_has_openat2();
	/* A path of PATH_MAX bytes (with its NUL: too long) vs. PATH_MAX - 1. */
	for (int total = PATH_MAX - 1; total <= PATH_MAX; total++) {
		memset(p, 0, PATH_MAX + 16);
		size_t n = 0;
		while (n + 2 < (size_t)total - 4)
			memcpy(p + n, "./", 2), n += 2;
		while (n < (size_t)total - 4)
			p[n++] = '/';
		memcpy(p + n, "file", 4);
		ck_assert_uint_eq(strlen(p), (size_t)total);
		int want = total == PATH_MAX ? ENAMETOOLONG : 0;
		for (int way = 0; way < RUN_MODES; way++) {
			if (way == RUN_KERNEL && !kernel)
				continue;
			int fd = open_way(way, e.rootfd, p, 0, 0, B);
			if (want) {
				ck_assert_msg(fd < 0 && errno == want, "%s: len %d",
					      mode_names[way], total);
			} else {
				ck_assert_msg(fd >= 0, "%s: len %d: %s", mode_names[way], total,
					      strerror(errno));
				ck_assert(fx_same_object(fd, e.rootfd, "file"));
				close(fd);
			}
		}
	}
	/* A component over NAME_MAX: the filesystem's ENAMETOOLONG, also for
	 * O_CREAT, and nothing created. */
	memset(p, 'n', NAME_MAX + 1);
	p[NAME_MAX + 1] = '\0';
	for (int way = 0; way < RUN_MODES; way++) {
		if (way == RUN_KERNEL && !kernel)
			continue;
		int fd = open_way(way, e.rootfd, p, O_CREAT | O_WRONLY, 0600, B);
		ck_assert_msg(fd < 0 && errno == ENAMETOOLONG, "%s", mode_names[way]);
	}
	free(p);
	char msg[512];
	ck_assert_msg(env_unchanged(&e, msg, sizeof(msg)), "%s", msg);
	env_teardown(&e);
}
END_TEST

START_TEST(beneath_wrapper_and_cloexec)
{
	struct env e;
	env_setup(&e);
	int fd = safe_openat_beneath(e.rootfd, "lrel/c/file", O_RDONLY, 0);
	ck_assert_int_ge(fd, 0);
	ck_assert(fx_same_object(fd, e.rootfd, "a/b/c/file"));
	ck_assert_int_eq(fcntl(fd, F_GETFD) & FD_CLOEXEC, FD_CLOEXEC);
	close(fd);
	ck_assert_int_eq(safe_openat_beneath(e.rootfd, "labs", O_RDONLY, 0), -1);
	ck_assert_int_eq(errno, EXDEV);
	/* openat()'s habit: a mode without O_CREAT/O_TMPFILE is ignored (test_api
	 * has the cases; safe_openat2() keeps openat2()'s EINVAL). */
	fd = safe_openat_beneath(e.rootfd, "file", O_RDONLY, 0644);
	ck_assert_int_ge(fd, 0);
	close(fd);
	ck_assert_int_eq(safe_openat_beneath(e.rootfd, NULL, O_RDONLY, 0), -1);
	ck_assert_int_eq(errno, EFAULT);
	/* Negative int flags carry unknown high bits. */
	ck_assert_int_eq(safe_openat_beneath(e.rootfd, "file", (int)0x80000000u, 0), -1);
	ck_assert_int_eq(errno, EINVAL);
	/* AT_FDCWD as the root. */
	int cwd = open(".", O_PATH | O_DIRECTORY | O_CLOEXEC);
	ck_assert_int_ge(cwd, 0);
	ck_assert_int_eq(fchdir(e.rootfd), 0);
	for (int way = RUN_DEFAULT; way < RUN_MODES; way++) {
		uint64_t res = B | NM | (way == RUN_WALKER ? US : 0);
		fd = lib_open(AT_FDCWD, "a/b/up2/file", O_RDONLY, 0, res);
		ck_assert_int_ge(fd, 0);
		ck_assert(fx_same_object(fd, e.rootfd, "file"));
		close(fd);
		ck_assert_int_eq(lib_open(AT_FDCWD, "a/../..", O_RDONLY, 0, res), -1);
		ck_assert_int_eq(errno, EXDEV);
		fd = lib_open(AT_FDCWD, "/a/../../file", O_RDONLY, 0,
			      I | (way == RUN_WALKER ? US : 0));
		ck_assert_int_ge(fd, 0);
		ck_assert(fx_same_object(fd, e.rootfd, "file"));
		close(fd);
	}
	ck_assert_int_eq(fchdir(cwd), 0);
	close(cwd);
	env_teardown(&e);
}
END_TEST

/* Deep paths: the walker holds O(1) descriptors however deep it goes. */
START_TEST(deep_path_constant_fds)
{
	struct env e;
	env_setup(&e);
	/* 600 levels "d/d/d/...": deeper than the walker's on-stack identity
	 * stack (256), within PATH_MAX. */
	char *p = malloc(PATH_MAX);
	ck_assert_ptr_nonnull(p);
	int dfd = openat(e.rootfd, ".", O_PATH | O_DIRECTORY | O_CLOEXEC);
	size_t n = 0;
	for (int i = 0; i < 600; i++) {
		ck_assert_int_eq(mkdirat(dfd, "d", 0755), 0);
		int nfd = openat(dfd, "d", O_PATH | O_DIRECTORY | O_CLOEXEC);
		ck_assert_int_ge(nfd, 0);
		close(dfd);
		dfd = nfd;
		memcpy(p + n, "d/", 2);
		n += 2;
	}
	ck_assert_int_eq(mkdirat(dfd, "x", 0755), 0);
	close(dfd);
	/* Down 600, then back up 600 with "..", then down again. */
	char *q = malloc(PATH_MAX * 2);
	ck_assert_ptr_nonnull(q);
	memcpy(q, p, n);
	size_t m = n;
	for (int i = 0; i < 600; i++)
		memcpy(q + m, "../", 3), m += 3;
	ck_assert_uint_lt(m + 10, PATH_MAX);
	memcpy(q + m, "file", 5);
	memcpy(p + n, "x", 2);
	bool kernel = kernel_has_openat2();
	for (int way = 0; way < RUN_MODES; way++) {
		if (way == RUN_KERNEL && !kernel)
			continue;
		int before = fx_fd_count();
		int fd = open_way(way, e.rootfd, q, 0, 0, B);
		ck_assert_msg(fd >= 0, "%s: %s", mode_names[way], strerror(errno));
		ck_assert(fx_same_object(fd, e.rootfd, "file"));
		ck_assert_int_eq(fx_fd_count(), before + 1);
		close(fd);
		fd = open_way(way, e.rootfd, p, O_PATH, 0, B);
		ck_assert_msg(fd >= 0, "%s: %s", mode_names[way], strerror(errno));
		close(fd);
	}
	free(p);
	free(q);
	env_teardown(&e);
}
END_TEST

/* Link bodies near PATH_MAX followed by a long rest of the path: the kernel
 * does not add them up against PATH_MAX, and the walker must grow its buffer
 * (lgrowA's body starts with lgrowB, whose body is long as well). */
START_TEST(long_link_bodies)
{
	struct env e;
	env_setup(&e);
	static const char *const heads[] = { "llongdir/", "lgrowA/", "lgrowA/lgrowA/../" };
	char *p = malloc(PATH_MAX);
	ck_assert_ptr_nonnull(p);
	bool kernel = kernel_has_openat2();
	for (size_t h = 0; h < sizeof(heads) / sizeof(heads[0]); h++) {
		size_t n = strlen(heads[h]);
		memcpy(p, heads[h], n);
		while (n + 2 + 6 < PATH_MAX - 1)
			memcpy(p + n, "./", 2), n += 2;
		memcpy(p + n, "inner", 6);
		for (int way = 0; way < RUN_MODES; way++) {
			if (way == RUN_KERNEL && !kernel)
				continue;
			int fd = open_way(way, e.rootfd, p, O_RDONLY, 0, h == 2 ? I : B);
			if (h == 2) {
				/* lgrowA/lgrowA: "dir/lgrowA" does not exist */
				ck_assert_msg(fd < 0 && errno == ENOENT, "%s: %s", mode_names[way],
					      fd < 0 ? errname(errno) : "an fd");
				continue;
			}
			ck_assert_msg(fd >= 0, "%s %s: %s", heads[h], mode_names[way],
				      errname(errno));
			ck_assert(fx_same_object(fd, e.rootfd, "dir/inner"));
			close(fd);
		}
	}
	free(p);
	env_teardown(&e);
}
END_TEST

/* fs.protected_symlinks: a trailing symlink in a sticky world-writable
 * directory, owned by neither the follower nor the directory's owner, is
 * refused (EACCES) when the sysctl is on; a link in the middle of the path is
 * always followed. Checked with the sysctl as it is and, when this process may
 * write it (root), with the other value too (then restored). */
static int protected_symlinks_get(void)
{
	int on = 1;
	FILE *f = fopen("/proc/sys/fs/protected_symlinks", "re");
	if (f) {
		if (fscanf(f, "%d", &on) != 1)
			on = 1;
		fclose(f);
	}
	return on;
}

static bool protected_symlinks_set(int on)
{
	FILE *f = fopen("/proc/sys/fs/protected_symlinks", "we");
	if (!f)
		return false;
	bool ok = fprintf(f, "%d\n", on) > 0;
	return fclose(f) == 0 && ok && protected_symlinks_get() == on;
}

/* The value to put back even if a check fails (Check exits the test
 * process, or longjmps out of it with CK_FORK=no: atexit covers both). */
static int protected_symlinks_saved = -1;

static void protected_symlinks_restore(void)
{
	if (protected_symlinks_saved >= 0)
		(void)protected_symlinks_set(protected_symlinks_saved);
}

static void protected_symlinks_check(int rootfd, int on)
{
	bool kernel = kernel_has_openat2();
	for (int way = 0; way < RUN_MODES; way++) {
		if (way == RUN_KERNEL && !kernel)
			continue;
		int fd = open_way(way, rootfd, "sticky/l", O_RDONLY, 0, B);
		if (on) {
			ck_assert_msg(fd < 0 && errno == EACCES, "sysctl %d: %s: %s", on,
				      mode_names[way], fd < 0 ? errname(errno) : "opened");
		} else {
			ck_assert_msg(fd >= 0, "sysctl 0: %s: %s", mode_names[way], errname(errno));
			ck_assert(fx_same_object(fd, rootfd, "file"));
			close(fd);
		}
		fd = open_way(way, rootfd, "sticky/ld/inner", O_RDONLY, 0, I);
		ck_assert_msg(fd >= 0, "sysctl %d: %s: %s", on, mode_names[way], errname(errno));
		ck_assert(fx_same_object(fd, rootfd, "dir/inner"));
		close(fd);
		fd = open_way(way, rootfd, "sticky/l", O_PATH | O_NOFOLLOW, 0, B);
		ck_assert_msg(fd >= 0, "sysctl %d: %s: %s", on, mode_names[way], errname(errno));
		close(fd);
		/* O_CREAT without O_EXCL follows the link as openat2 does (the
		 * sticky-directory check on creating does not apply to it). */
		fd = open_way(way, rootfd, "sticky/l", O_WRONLY | O_CREAT, 0644, B);
		if (on) {
			ck_assert_msg(fd < 0 && errno == EACCES, "O_CREAT sysctl 1: %s: %s",
				      mode_names[way], fd < 0 ? errname(errno) : "opened");
		} else {
			ck_assert_msg(fd >= 0, "O_CREAT sysctl 0: %s: %s", mode_names[way],
				      errname(errno));
			ck_assert(fx_same_object(fd, rootfd, "file"));
			close(fd);
		}
		fd = open_way(way, rootfd, "sticky/l", O_WRONLY | O_CREAT, 0644, B | NS);
		ck_assert_msg(fd < 0 && errno == (on ? EACCES : ELOOP), "O_CREAT NO_SYMLINKS: %s: %s",
			      mode_names[way], fd < 0 ? errname(errno) : "opened");
	}
}

/* The same without openat2 (seccomp ENOSYS in a child): the walker's last
 * open is then openat(O_NOFOLLOW), where the kernel's sticky check comes
 * first. Returns 0 or the line that failed. */
struct sticky_arg {
	int rootfd, on;
};

static int sticky_no_openat2_child(void *arg)
{
	const struct sticky_arg *a = arg;
	const struct sb_rule rules[] = { SB_ALWAYS(SYS_openat2, ENOSYS) };
	if (sb_seccomp(rules, 1) < 0)
		return 2;
	for (int way = RUN_DEFAULT; way < RUN_MODES; way++) {
		/* A plain open reaches the walker's read-by-name shortcut for a
		 * trailing link, which must leave sticky directories to the
		 * careful path. */
		int fd = open_way(way, a->rootfd, "sticky/l", O_RDONLY, 0, B);
		if (a->on ? !(fd < 0 && errno == EACCES) : !(fd >= 0 && fx_same_object(fd, a->rootfd, "file")))
			return 50 + way;
		if (fd >= 0)
			close(fd);
		fd = open_way(way, a->rootfd, "sticky/ld/inner", O_RDONLY, 0, I);
		if (!(fd >= 0 && fx_same_object(fd, a->rootfd, "dir/inner")))
			return 60 + way;
		close(fd);
		fd = open_way(way, a->rootfd, "sticky/l", O_WRONLY | O_CREAT, 0644, B);
		if (a->on ? !(fd < 0 && errno == EACCES) : !(fd >= 0 && fx_same_object(fd, a->rootfd, "file")))
			return 10 + way;
		if (fd >= 0)
			close(fd);
		fd = open_way(way, a->rootfd, "sticky/l", O_WRONLY | O_CREAT, 0644, B | NS);
		if (!(fd < 0 && errno == (a->on ? EACCES : ELOOP)))
			return 20 + way;
		fd = open_way(way, a->rootfd, "sticky/nonexistent", O_WRONLY | O_CREAT, 0644, B);
		if (fd < 0)
			return 30 + way;
		close(fd);
		if (unlinkat(a->rootfd, "sticky/nonexistent", 0) < 0)
			return 40 + way;
	}
	return 0;
}

static void protected_symlinks_check_no_openat2(int rootfd, int on)
{
	struct sticky_arg a = { rootfd, on };
	int rc = sb_run(sticky_no_openat2_child, &a);
	ck_assert_msg(rc == 0, "without openat2, sysctl %d: check %d failed", on, rc);
}

START_TEST(protected_symlinks_sticky)
{
	FX_REQUIRE_ROOT("symlinks owned by uid 1000 in a sticky directory (chown)");
	struct env e;
	env_setup(&e);
	static const char *const spec[] = {
		"d sticky 01777", "l sticky/l ../file", "l sticky/ld ../dir", NULL,
	};
	fx_build(e.rootfd, spec);
	ck_assert_int_eq(fchmodat(e.rootfd, "sticky", 01777, 0), 0);
	ck_assert_int_eq(fchownat(e.rootfd, "sticky/l", 1000, 1000, AT_SYMLINK_NOFOLLOW), 0);
	ck_assert_int_eq(fchownat(e.rootfd, "sticky/ld", 1000, 1000, AT_SYMLINK_NOFOLLOW), 0);
	int on = protected_symlinks_get() != 0;
	protected_symlinks_check(e.rootfd, on);
	protected_symlinks_check_no_openat2(e.rootfd, on);
	protected_symlinks_saved = on;
	(void)atexit(protected_symlinks_restore);
	if (protected_symlinks_set(!on)) {
		protected_symlinks_check(e.rootfd, !on);
		protected_symlinks_check_no_openat2(e.rootfd, !on);
		ck_assert(protected_symlinks_set(on));
	} else {
		fprintf(stderr, "protected_symlinks_sticky: sysctl %d only (not writable)\n", on);
	}
	env_teardown(&e);
}
END_TEST

/* The kernel counts the links of an abandoned RCU walk again in the ref-walk
 * retry; ".." in the root under BENEATH abandons the RCU walk. 21 links then
 * "..": the answer is EXDEV; openat2 often says ELOOP (accepted from the raw
 * syscall only); the library must say EXDEV both ways. */
START_TEST(kernel_link_double_count)
{
	struct env e;
	env_setup(&e);
	build_chain(e.rootfd, "rc", ".", 30); /* rcN: N links to the root */
	bool kernel = kernel_has_openat2();
	static const char *const paths[] = { "rc21/../file", "rc30/..", "dch30/../../x" };
	for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
		for (int way = 0; way < RUN_MODES; way++) {
			if (way == RUN_KERNEL && !kernel)
				continue;
			int fd = open_way(way, e.rootfd, paths[i], O_RDONLY, 0, B);
			int err = fd < 0 ? errno : 0;
			if (fd >= 0)
				close(fd);
			if (way == RUN_KERNEL) {
				ck_assert_msg(fd < 0 && (err == EXDEV || err == ELOOP), "%s: %s",
					      paths[i], errname(err));
				continue;
			}
			ck_assert_msg(fd < 0 && err == EXDEV, "%s via %s: %s", paths[i],
				      mode_names[way], fd >= 0 ? "an fd" : errname(err));
		}
	}
	env_teardown(&e);
}
END_TEST

/* ------------------------------------------------------------------ magic links through procfs */

struct prow {
	const char *path; /* relative to /proc; %d is replaced by an fd number */
	uint64_t flags;
	uint64_t res;
	const char *obj; /* expected object (path relative to /proc, stat follows
			    all but the last link), or NULL and err */
	int err;
};

static const struct prow prows[] = {
	{ "self/fd/%d", RD, B, NULL, EXDEV },
	{ "self/fd/%d", RD, I, NULL, EXDEV },
	{ "self/fd/%d", RD, B | NM, NULL, ELOOP },
	{ "self/fd/%d", RD, I | NM | NX, NULL, ELOOP },
	{ "self/fd/%d", RD, B | NX, NULL, EXDEV },
	{ "self/fd/%d", PN, B, "self/fd/%d", 0 },
	{ "self/fd/%d", PN, B | NM, "self/fd/%d", 0 },
	{ "self/fd/%d/", PN, B, NULL, EXDEV },
	{ "self/fd/%d/file", RD, B, NULL, EXDEV },
	{ "self/fd/%d/file", RD, B | NS, NULL, ELOOP },
	{ "thread-self/fd/%d", RD, B, NULL, EXDEV },
	{ "self/exe", RD, B, NULL, EXDEV },
	{ "self/exe", RD, I | NM, NULL, ELOOP },
	{ "self/cwd", P, B, NULL, EXDEV },
	{ "self/root/etc", P, B, NULL, EXDEV },
	{ "self/ns/net", RD, B, NULL, EXDEV },
	{ "self/ns/net", RD, B | NM, NULL, ELOOP },
	{ "self/task/../fd/%d", P, B | NM, NULL, ELOOP },
	/* ordinary procfs symlinks are followed */
	{ "self", P | O_DIRECTORY, B | NM, "self/.", 0 },
	{ "self/status", RD, B | NM, "self/status", 0 },
	{ "thread-self/status", RD, I | NM, "thread-self/status", 0 },
	{ "mounts", RD, B | NM, "self/mounts", 0 },
	{ "mounts", PN, B, "mounts", 0 },
	{ "net/unix", RD, B | NM, "self/net/unix", 0 },
	{ "self/fd", P, B | NM, "self/fd", 0 },
	{ "self", RD, B | NS, NULL, ELOOP },
	{ "self/..", P, B, ".", 0 },
	{ "self/../..", P, B, NULL, EXDEV },
};

/* Copy src to dst replacing "%d" by fd (no format strings from tables). */
static void subst_fd(char *dst, size_t size, const char *src, int fd)
{
	const char *at = strstr(src, "%d");
	if (!at) {
		snprintf(dst, size, "%s", src);
		return;
	}
	snprintf(dst, size, "%.*s%d%s", (int)(at - src), src, fd, at + 2);
}

static int run_proc_rows(int procfd, int somefd, bool kernel)
{
	int failures = 0;
	char path[64], obj[64];
	for (size_t i = 0; i < sizeof(prows) / sizeof(prows[0]); i++) {
		const struct prow *r = &prows[i];
		subst_fd(path, sizeof(path), r->path, somefd);
		if (r->obj)
			subst_fd(obj, sizeof(obj), r->obj, somefd);
		for (int way = 0; way < RUN_MODES; way++) {
			if (way == RUN_KERNEL && !kernel)
				continue;
			int fd = open_way(way, procfd, path, r->flags, 0, r->res);
			int err = fd < 0 ? errno : 0;
			bool ok;
			if (r->obj) {
				struct stat a, b;
				ok = fd >= 0 && fstat(fd, &a) == 0 &&
				     fstatat(procfd, obj, &b, AT_SYMLINK_NOFOLLOW) == 0 &&
				     a.st_dev == b.st_dev && a.st_ino == b.st_ino;
			} else {
				ok = fd < 0 && err == r->err;
			}
			if (!ok) {
				failures++;
				fprintf(stderr, "proc row \"%s\" resolve=%#llx via %s: "
					"expected %s, got %s\n", path, (unsigned long long)r->res,
					mode_names[way], r->obj ? obj : errname(r->err),
					fd >= 0 ? "an fd" : errname(err));
			}
			if (fd >= 0)
				close(fd);
		}
	}
	return failures;
}

START_TEST(magic_links)
{
	struct env e;
	env_setup(&e);
	int procfd = open("/proc", O_PATH | O_DIRECTORY | O_CLOEXEC);
	ck_assert_int_ge(procfd, 0);
	int failures = run_proc_rows(procfd, e.rootfd, kernel_has_openat2());
	ck_assert_msg(failures == 0, "%d failures (see stderr)", failures);
	/* /proc/self as the root: its fd/, exe, cwd links are magic. */
	int selffd = openat(procfd, "self", O_PATH | O_DIRECTORY | O_CLOEXEC);
	ck_assert_int_ge(selffd, 0);
	char p[32];
	snprintf(p, sizeof(p), "fd/%d", e.rootfd);
	for (int way = RUN_DEFAULT; way < RUN_MODES; way++) {
		uint64_t us = way == RUN_WALKER ? US : 0;
		ck_assert_int_eq(lib_open(selffd, p, O_PATH, 0, I | us), -1);
		ck_assert_int_eq(errno, EXDEV);
		ck_assert_int_eq(lib_open(selffd, "exe", O_RDONLY, 0, B | NM | us), -1);
		ck_assert_int_eq(errno, ELOOP);
		ck_assert_int_eq(lib_open(selffd, "cwd/", O_PATH, 0, B | us), -1);
		ck_assert_int_eq(errno, EXDEV);
		int fd = lib_open(selffd, "fd", O_RDONLY | O_DIRECTORY, 0, B | NM | us);
		ck_assert_int_ge(fd, 0);
		close(fd);
	}
	close(selffd);
	close(procfd);
	env_teardown(&e);
}
END_TEST

/* ------------------------------------------------------------------ mounts (NO_XDEV) */

struct mrow {
	const char *path;
	uint64_t flags;
	uint64_t res;
	const char *obj; /* relative to the root, or NULL and err */
	int err;
	bool proc; /* (link facts) needs root/pr */
};

static const struct mrow mrows[] = {
	{ "mnt_tmpfs", P, B | NX, NULL, EXDEV },
	{ "mnt_tmpfs", P, B, "mnt_tmpfs", 0 },
	{ "mnt_tmpfs/x", RD, B | NX, NULL, EXDEV },
	{ "mnt_tmpfs/x", RD, I, "mnt_tmpfs/x", 0 },
	{ "mnt_tmpfs/", P, I | NX, NULL, EXDEV },
	{ "mnt_tmpfs/..", P, B | NX, NULL, EXDEV },
	{ "mnt_tmpfs/..", P, B, ".", 0 },
	{ "mnt_bind", P, B | NX, NULL, EXDEV },
	{ "mnt_bind/b/c/file", RD, B | NX, NULL, EXDEV },
	{ "mnt_bind/b/c/file", RD, B, "a/b/c/file", 0 },
	{ "mnt_bind/b/../..", P, B, ".", 0 },
	{ "mnt_bind/..", P, I, ".", 0 },
	{ "fbind", RD, B | NX, NULL, EXDEV },
	{ "fbind", PN, B | NX, NULL, EXDEV },
	{ "fbind", RD, B, "fbind", 0 },
	{ "fbind", O_CREAT | O_WRONLY, B | NX, NULL, EXDEV },
	{ "lmnt", RD, B | NX, NULL, EXDEV },
	{ "lmnt", RD, B, "mnt_tmpfs/x", 0 },
	{ "lmnt", PN, B | NX, "lmnt", 0 },
	{ "lbind", P, I | NX, NULL, EXDEV },
	{ "a/b/c/file", RD, B | NX, "a/b/c/file", 0 },
	{ "a/lup/lrel", P, B | NX, "a/b", 0 },
	{ "lroot/a", P, I | NX, "a", 0 },
	{ "dir/new", O_CREAT | O_WRONLY, B | NX, "dir/new", 0 },
	{ "mnt_tmpfs/new", O_CREAT | O_WRONLY, B | NX, NULL, EXDEV },
};

struct mount_arg {
	const struct env *e;
	bool no_statx; /* make statx ENOSYS: the mount id comes from elsewhere */
};

/* Compare the result of one row run one way (fd, or -1 with err) with what
 * the row expects: the object `obj` (relative to the root) or the errno
 * `want`. Prints a failure, closes fd; returns 1 on failure, else 0. */
static int row_verdict(const char *kind, int rootfd, const char *path, uint64_t res, int way,
		       const char *obj, int want, int fd, int err)
{
	bool ok;
	if (obj) {
		struct stat a, b;
		ok = fd >= 0 && fstat(fd, &a) == 0 &&
		     fstatat(rootfd, obj, &b, AT_SYMLINK_NOFOLLOW) == 0 && a.st_dev == b.st_dev &&
		     a.st_ino == b.st_ino;
	} else {
		ok = fd < 0 && err == want;
	}
	if (!ok)
		fprintf(stderr, "%s row \"%s\" resolve=%#llx via %s: expected %s, got %s\n", kind,
			path, (unsigned long long)res, mode_names[way], obj ? obj : errname(want),
			fd >= 0 ? "an fd" : errname(err));
	if (fd >= 0)
		close(fd);
	return ok ? 0 : 1;
}

static int mount_child(void *arg)
{
	const struct mount_arg *ma = arg;
	const struct env *e = ma->e;
	if (fx_enter_mount_ns() < 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0) {
		perror("unshare/mount");
		return 2;
	}
	char p1[PATH_MAX], p2[PATH_MAX + 16];
	snprintf(p1, sizeof(p1), "%s/root/mnt_tmpfs", e->top);
	if (mount("tmpfs", p1, "tmpfs", 0, "size=64k") < 0) {
		perror("mount tmpfs");
		return 2;
	}
	snprintf(p2, sizeof(p2), "%s/x", p1);
	int t = open(p2, O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
	if (t < 0)
		return 2;
	close(t);
	snprintf(p1, sizeof(p1), "%s/root/a", e->top);
	snprintf(p2, sizeof(p2), "%s/root/mnt_bind", e->top);
	if (mount(p1, p2, NULL, MS_BIND, NULL) < 0) {
		perror("bind dir");
		return 2;
	}
	snprintf(p1, sizeof(p1), "%s/root/file", e->top);
	snprintf(p2, sizeof(p2), "%s/root/fbind", e->top);
	if (mount(p1, p2, NULL, MS_BIND, NULL) < 0) {
		perror("bind file");
		return 2;
	}
	if (ma->no_statx) {
		struct sb_rule rule = SB_ALWAYS(SYS_statx, ENOSYS);
		if (sb_seccomp(&rule, 1) < 0) {
			perror("sb_seccomp");
			return 2;
		}
	}
	/* Open the root only now: an fd opened before unshare() walks the old
	 * mount table. */
	int rootfd = open(e->top, O_PATH | O_DIRECTORY | O_CLOEXEC);
	int r = openat(rootfd, "root", O_PATH | O_DIRECTORY | O_CLOEXEC);
	close(rootfd);
	rootfd = r;
	if (rootfd < 0)
		return 2;
	bool kernel = kernel_has_openat2();
	int failures = 0;
	for (size_t i = 0; i < sizeof(mrows) / sizeof(mrows[0]); i++) {
		const struct mrow *m = &mrows[i];
		uint64_t mode = (m->flags & O_CREAT) ? 0600 : 0;
		for (int way = 0; way < RUN_MODES; way++) {
			if (way == RUN_KERNEL && !kernel)
				continue;
			int fd = open_way(way, rootfd, m->path, m->flags, mode, m->res);
			failures += row_verdict("mount", rootfd, m->path, m->res, way, m->obj, m->err,
						fd, fd < 0 ? errno : 0);
			(void)unlinkat(rootfd, "dir/new", 0);
			(void)unlinkat(rootfd, "mnt_tmpfs/new", 0);
		}
	}
	close(rootfd);
	return failures ? 1 : 0;
}

START_TEST(no_xdev_mounts)
{
	if (!sb_can_mount()) {
		fx_skip("cannot mount here (not root, no user namespace): mount rows not run");
	}
	struct env e;
	env_setup(&e);
	static const char *const spec[] = {
		"d mnt_tmpfs", "d mnt_bind", "f fbind", "l lmnt mnt_tmpfs/x", "l lbind mnt_bind",
		NULL,
	};
	fx_build(e.rootfd, spec);
	struct mount_arg ma = { &e, false };
	ck_assert_int_eq(sb_run(mount_child, &ma), 0);
	/* Kernels before 5.8 (no STATX_MNT_ID) or 4.11 (no statx). */
	ma.no_statx = true;
	ck_assert_int_eq(sb_run(mount_child, &ma), 0);
	env_teardown(&e);
}
END_TEST

/*
 * A bind mount inside a filesystem without file handles (ramfs), on a kernel
 * whose statx reports no mount id (before 5.8; statx blocked here): the
 * walker's mount id comes from the procfs fdinfo entry, and NO_XDEV still
 * refuses the bind mount of the same filesystem (devices alone cannot tell).
 */
static int bind_no_handles_child(void *arg)
{
	const char *dir = arg;
	CHILD_CHECK(fx_enter_mount_ns() == 0);
	CHILD_CHECK(mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) == 0);
	if (mount("none", dir, "ramfs", 0, NULL) < 0)
		CHILD_SKIP("cannot mount a ramfs here: %s", strerror(errno));
	int rootfd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	CHILD_CHECK(rootfd >= 0);
	CHILD_CHECK(mkdirat(rootfd, "d1", 0755) == 0 && mkdirat(rootfd, "d2", 0755) == 0);
	int f = openat(rootfd, "d1/x", O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
	CHILD_CHECK(f >= 0);
	close(f);
	char src[PATH_MAX], dst[PATH_MAX];
	snprintf(src, sizeof(src), "%s/d1", dir);
	snprintf(dst, sizeof(dst), "%s/d2", dir);
	CHILD_CHECK(mount(src, dst, NULL, MS_BIND, NULL) == 0);
	struct sb_rule rule = SB_ALWAYS(SYS_statx, ENOSYS);
	CHILD_CHECK(sb_seccomp(&rule, 1) == 0);
	struct stat st;
	CHILD_CHECK(fstatat(rootfd, "d2/x", &st, 0) == 0, "the bind mount shows d1's file");
	for (int way = 0; way < RUN_MODES; way++) {
		if (way == RUN_KERNEL && !kernel_has_openat2())
			continue;
		int fd = open_way(way, rootfd, "d2/x", O_RDONLY, 0, B | NX);
		int e = errno;
		if (fd >= 0)
			close(fd);
		CHILD_CHECK(fd < 0 && e == EXDEV, "%s: d2/x across the bind mount: %s",
			    mode_names[way], fd < 0 ? strerror(e) : "opened");
		fd = open_way(way, rootfd, "d1/x", O_RDONLY, 0, B | NX);
		CHILD_CHECK(fd >= 0, "%s: d1/x on the root's mount", mode_names[way]);
		close(fd);
	}
	close(rootfd);
	return 0;
}

START_TEST(no_xdev_bind_without_handles)
{
	if (!sb_can_mount())
		fx_skip("cannot mount here (not root, no user namespace)");
	char *dir = fx_mkdtemp("resolve-ramfs");
	fx_run_child(bind_no_handles_child, dir, "NO_XDEV over a bind mount on ramfs");
	ck_assert_int_eq(fx_rmtree(dir), 0);
	free(dir);
}
END_TEST

/* ------------------------------------------------------------------ link facts per mount */

/*
 * Whether a link may be followed depends on the mount it lives on: none on a
 * nosymfollow mount (ELOOP), magic links on procfs (EXDEV / ELOOP). The
 * walker learns those facts once per mount and keeps them while it descends
 * on the same mount (lib/resolve.c, cur_fs()); these rows move between
 * mounts in every direction (down across a mount, up out of one by "..",
 * through a link) and compare each answer with the kernel's. The tree:
 * root/l -> d, root/d/f; a nosymfollow tmpfs on root/ns holding d/f and
 * l -> d; a plain tmpfs on root/ns/plain holding f, l -> f, d/ and ld -> d
 * (a link followed there, then ".." up into ns: ns's facts again); /proc bound
 * on root/pr; root/d bound on root/nb and remounted nosymfollow (the same
 * device as the root's mount, another mount id: the walker's facts per mount
 * id must not take nb for the root's mount, FACTS_BY_DEV). The rows run again
 * with openat2 refused (ENOSYS), where the walker cannot tell a crossing from
 * its descent and keeps the facts by the mount ids statx reports.
 */
static const struct mrow lrows[] = {
	{ "l/f", RD, B, "d/f", 0, false },
	{ "ns/l/f", RD, B, NULL, ELOOP, false },
	{ "ns/l", RD, I, NULL, ELOOP, false },
	{ "ns/d/f", RD, B, "ns/d/f", 0, false },
	{ "l/../ns/l/f", RD, B, NULL, ELOOP, false },
	{ "ns/d/../l/f", RD, B, NULL, ELOOP, false },
	{ "ns/d/../../l/f", RD, B, "d/f", 0, false },
	{ "ns/../l/f", RD, I, "d/f", 0, false },
	{ "ns/plain/l", RD, B, "ns/plain/f", 0, false },
	{ "ns/plain/../l/f", RD, B, NULL, ELOOP, false },
	{ "ns/plain/../../l/f", RD, B, "d/f", 0, false },
	{ "ns/plain/ld/../../l/f", RD, B, NULL, ELOOP, false },
	{ "ns/plain/ld/../../d/f", RD, B, "ns/d/f", 0, false },
	{ "ns/l2/f", RD, B, NULL, ELOOP, false },
	{ "l/../pr/self/cwd", P, I, NULL, EXDEV, true },
	{ "l/../pr/self/cwd", P, B | NM, NULL, ELOOP, true },
	{ "pr/self/../../l/f", RD, B, "d/f", 0, true },
	{ "pr/../ns/l/f", RD, B, NULL, ELOOP, true },
	{ "d/m", RD, B, "d/f", 0, false },
	{ "nb/m", RD, B, NULL, ELOOP, false },
	{ "l/../nb/m", RD, B, NULL, ELOOP, false },
	{ "l/../nb/ld/f", RD, B, NULL, ELOOP, false },
	{ "d/ld/../nb/ld/f", RD, B, NULL, ELOOP, false },
	{ "nb/../l/m", RD, B, "d/f", 0, false },
};

static int link_facts_child(void *arg)
{
	const struct env *e = arg;
	if (fx_enter_mount_ns() < 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0) {
		perror("unshare/mount");
		return 2;
	}
	char p[PATH_MAX], q[PATH_MAX + 32];
	snprintf(p, sizeof(p), "%s/root/ns", e->top);
	if (mount("tmpfs", p, "tmpfs", MS_NOSYMFOLLOW, "size=64k") < 0) {
		/* MS_NOSYMFOLLOW is Linux 5.10 */
		fprintf(stderr, "link facts: no nosymfollow mount (%s)\n", strerror(errno));
		return 3;
	}
	static const char *const ns_spec[] = { "d d", "f d/f x", "l l d", "l l2 ../l", "d plain",
					       NULL };
	int nsfd = open(p, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (nsfd < 0)
		return 2;
	fx_build(nsfd, ns_spec);
	close(nsfd);
	snprintf(q, sizeof(q), "%s/plain", p);
	if (mount("tmpfs", q, "tmpfs", 0, "size=64k") < 0) {
		perror("mount plain tmpfs");
		return 2;
	}
	static const char *const plain_spec[] = { "f f x", "l l f", "d d", "l ld d", NULL };
	int plfd = open(q, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (plfd < 0)
		return 2;
	fx_build(plfd, plain_spec);
	close(plfd);
	snprintf(p, sizeof(p), "%s/root/d", e->top);
	snprintf(q, sizeof(q), "%s/root/nb", e->top);
	/* The remount keeps the flags the mount has (in a user namespace those
	 * of an inherited mount are locked: EPERM if one were cleared). */
	struct statvfs sv;
	if (mount(p, q, NULL, MS_BIND, NULL) < 0 || statvfs(q, &sv) < 0) {
		perror("bind mount");
		return 2;
	}
	static const struct {
		unsigned long st, ms;
	} keep[] = { { ST_RDONLY, MS_RDONLY },	   { ST_NOSUID, MS_NOSUID },
		     { ST_NODEV, MS_NODEV },	   { ST_NOEXEC, MS_NOEXEC },
		     { ST_NOATIME, MS_NOATIME },   { ST_NODIRATIME, MS_NODIRATIME },
		     { ST_RELATIME, MS_RELATIME } };
	unsigned long mf = MS_REMOUNT | MS_BIND | MS_NOSYMFOLLOW;
	for (size_t i = 0; i < sizeof(keep) / sizeof(keep[0]); i++)
		if (sv.f_flag & keep[i].st)
			mf |= keep[i].ms;
	if (mount(NULL, q, NULL, mf, NULL) < 0) {
		perror("nosymfollow remount of a bind mount");
		return 2;
	}
	snprintf(p, sizeof(p), "%s/root/pr", e->top);
	bool proc = mount("/proc", p, NULL, MS_BIND | MS_REC, NULL) == 0;
	if (!proc)
		fprintf(stderr, "link facts: /proc cannot be bound here (%s)\n", strerror(errno));
	int topfd = open(e->top, O_PATH | O_DIRECTORY | O_CLOEXEC);
	int rootfd = topfd < 0 ? -1 : openat(topfd, "root", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (topfd >= 0)
		close(topfd);
	if (rootfd < 0)
		return 2;
	bool kernel = kernel_has_openat2();
	int failures = 0, runs = 0;
	for (int pass = 0; pass < 2; pass++) {
		if (pass == 1) {
#ifdef SYS_openat2
			/* Again without openat2 (as before 5.6): statx's mount ids. */
			const struct sb_rule rules[] = { SB_ALWAYS(SYS_openat2, ENOSYS) };
			if (sb_seccomp(rules, 1) < 0) {
				perror("seccomp");
				return 2;
			}
			kernel = false;
#else
			break;
#endif
		}
		for (size_t i = 0; i < sizeof(lrows) / sizeof(lrows[0]); i++) {
			const struct mrow *r = &lrows[i];
			if (r->proc && !proc)
				continue;
			for (int way = 0; way < RUN_MODES; way++) {
				if (way == RUN_KERNEL && !kernel)
					continue;
				int fd = open_way(way, rootfd, r->path, r->flags, 0, r->res);
				failures += row_verdict(pass ? "link-facts, no openat2" : "link-facts",
							rootfd, r->path, r->res, way, r->obj, r->err,
							fd, fd < 0 ? errno : 0);
				runs++;
			}
		}
	}
	close(rootfd);
	fprintf(stderr, "link facts: %d resolutions compared, %d failures\n", runs, failures);
	if (failures)
		return 1;
	return proc ? 0 : 4; /* 4: the procfs rows could not run (SKIP, not PASS) */
}

START_TEST(link_facts_per_mount)
{
	if (!sb_can_mount())
		fx_skip("cannot mount here (not root, no user namespace): link-fact rows not run");
	struct env e;
	env_setup(&e);
	static const char *const spec[] = { "d ns", "d pr", "d nb", "d d",	"f d/f x",
					    "l l d", "l d/m f",	 "l d/ld .", NULL };
	fx_build(e.rootfd, spec);
	int rc = sb_run(link_facts_child, &e);
	env_teardown(&e);
	if (rc == 3)
		fx_skip("the kernel has no nosymfollow mounts (MS_NOSYMFOLLOW, Linux 5.10)");
	if (rc == 4)
		fx_skip("/proc cannot be bound here: the procfs rows were not run (the other rows "
			"agreed)");
	ck_assert_int_eq(rc, 0);
}
END_TEST

/* ------------------------------------------------------------------ links that are mount points */

/*
 * A symlink can itself be a mount point (open_tree() of a link, move_mount()
 * onto a link's name), and the kernel judges a link by its own mount
 * (fs/namei.c, pick_link() after the mount is traversed): the body it
 * follows is the mounted link's, nosymfollow is the mounted link's mount's,
 * a magic link is magic because the mounted link is procfs's, and reaching
 * the link is already a mount crossing (NO_XDEV: EXDEV). The tree, rebuilt
 * in a private mount namespace (d/ is on the root's filesystem):
 *   d/x/f, d/y/f   two different files
 *   d/l  -> x      covered by a mounted link "y"     (the kernel follows "y")
 *   d/la -> x      covered by a mounted link "/d/y"  (absolute: BENEATH EXDEV)
 *   d/n  -> x      covered by a link "y" from a nosymfollow tmpfs (ELOOP)
 *   d/n2           a regular file covered by that same link
 *   d/m  -> x      covered by the magic link /proc/self/cwd (the child's
 *                  cwd is "/": a walker that reads its text as an ordinary
 *                  body lands on the root under IN_ROOT, and finds root/f)
 * Each row gives the kernel's answer (taken from openat2 on Linux 6.18)
 * under BENEATH and under IN_ROOT, each with nothing, NO_XDEV,
 * NO_MAGICLINKS and NO_SYMLINKS added; every answer is checked three ways,
 * and the number of resolutions run is checked too. A setup this kernel
 * cannot build (nosymfollow is 5.10) leaves its rows out and makes the case
 * a SKIP, not a PASS, unless another row failed.
 */
enum { LM_LINK, LM_NOSYMFOLLOW, LM_MAGIC, LM_SETS };
static const char *const lm_set_names[] = {
	"a link mounted on a link",
	"a link from a nosymfollow mount",
	"a procfs magic link mounted into the tree",
};

struct lm_want {
	const char *obj; /* relative to the root, or NULL and err */
	int err;
};

struct lmrow {
	const char *path;
	uint64_t flags;
	int set; /* LM_*: the setup the row needs */
	struct lm_want b[4], i[4]; /* BENEATH, IN_ROOT; each + 0, NX, NM, NS */
};

static const uint64_t lm_extra[4] = { 0, NX, NM, NS };

#define Y(o) { (o), 0 }
#define EX { NULL, EXDEV }
#define LP { NULL, ELOOP }
#define NOTDIR { NULL, ENOTDIR }
#define OD O_DIRECTORY
static const struct lmrow lmrows[] = {
	/* (a) the body followed is the mounted link's ("y", not "x") */
	{ "d/l/f", RD, LM_LINK, { Y("d/y/f"), EX, Y("d/y/f"), LP },
	  { Y("d/y/f"), EX, Y("d/y/f"), LP } },
	{ "d/l/f", PN, LM_LINK, { Y("d/y/f"), EX, Y("d/y/f"), LP },
	  { Y("d/y/f"), EX, Y("d/y/f"), LP } },
	{ "d/l/f", OD, LM_LINK, { NOTDIR, EX, NOTDIR, LP }, { NOTDIR, EX, NOTDIR, LP } },
	{ "d/l", P, LM_LINK, { Y("d/y"), EX, Y("d/y"), LP }, { Y("d/y"), EX, Y("d/y"), LP } },
	{ "d/l", PN, LM_LINK, { Y("d/l"), EX, Y("d/l"), Y("d/l") },
	  { Y("d/l"), EX, Y("d/l"), Y("d/l") } },
	{ "d/l", RD, LM_LINK, { Y("d/y"), EX, Y("d/y"), LP }, { Y("d/y"), EX, Y("d/y"), LP } },
	{ "d/l", OD, LM_LINK, { Y("d/y"), EX, Y("d/y"), LP }, { Y("d/y"), EX, Y("d/y"), LP } },
	{ "d/la/f", RD, LM_LINK, { EX, EX, EX, LP }, { Y("d/y/f"), EX, Y("d/y/f"), LP } },
	{ "d/la/f", PN, LM_LINK, { EX, EX, EX, LP }, { Y("d/y/f"), EX, Y("d/y/f"), LP } },
	{ "d/la", P, LM_LINK, { EX, EX, EX, LP }, { Y("d/y"), EX, Y("d/y"), LP } },
	{ "d/la", PN, LM_LINK, { Y("d/la"), EX, Y("d/la"), Y("d/la") },
	  { Y("d/la"), EX, Y("d/la"), Y("d/la") } },
	{ "d/la", OD, LM_LINK, { EX, EX, EX, LP }, { Y("d/y"), EX, Y("d/y"), LP } },
	/* (b) the mounted link's mount is nosymfollow: ELOOP, though d/ is not */
	{ "d/n/f", RD, LM_NOSYMFOLLOW, { LP, EX, LP, LP }, { LP, EX, LP, LP } },
	{ "d/n/f", PN, LM_NOSYMFOLLOW, { LP, EX, LP, LP }, { LP, EX, LP, LP } },
	{ "d/n", P, LM_NOSYMFOLLOW, { LP, EX, LP, LP }, { LP, EX, LP, LP } },
	{ "d/n", PN, LM_NOSYMFOLLOW, { Y("d/n"), EX, Y("d/n"), Y("d/n") },
	  { Y("d/n"), EX, Y("d/n"), Y("d/n") } },
	{ "d/n", RD, LM_NOSYMFOLLOW, { LP, EX, LP, LP }, { LP, EX, LP, LP } },
	{ "d/n", OD, LM_NOSYMFOLLOW, { LP, EX, LP, LP }, { LP, EX, LP, LP } },
	{ "d/n2/f", RD, LM_NOSYMFOLLOW, { LP, EX, LP, LP }, { LP, EX, LP, LP } },
	{ "d/n2", P, LM_NOSYMFOLLOW, { LP, EX, LP, LP }, { LP, EX, LP, LP } },
	{ "d/n2", PN, LM_NOSYMFOLLOW, { Y("d/n2"), EX, Y("d/n2"), Y("d/n2") },
	  { Y("d/n2"), EX, Y("d/n2"), Y("d/n2") } },
	{ "d/n2", RD, LM_NOSYMFOLLOW, { LP, EX, LP, LP }, { LP, EX, LP, LP } },
	/* (c) a magic link, wherever it is mounted: EXDEV under a scope, ELOOP
	 * with NO_MAGICLINKS (or NO_SYMLINKS) */
	{ "d/m/f", RD, LM_MAGIC, { EX, EX, LP, LP }, { EX, EX, LP, LP } },
	{ "d/m/f", PN, LM_MAGIC, { EX, EX, LP, LP }, { EX, EX, LP, LP } },
	{ "d/m", P, LM_MAGIC, { EX, EX, LP, LP }, { EX, EX, LP, LP } },
	{ "d/m", PN, LM_MAGIC, { Y("d/m"), EX, Y("d/m"), Y("d/m") },
	  { Y("d/m"), EX, Y("d/m"), Y("d/m") } },
	{ "d/m", RD, LM_MAGIC, { EX, EX, LP, LP }, { EX, EX, LP, LP } },
	{ "d/m", OD, LM_MAGIC, { EX, EX, LP, LP }, { EX, EX, LP, LP } },
	/* reached after "..", left by "..", and the tree around them */
	{ "d/l/../x/f", RD, LM_LINK, { Y("d/x/f"), EX, Y("d/x/f"), LP },
	  { Y("d/x/f"), EX, Y("d/x/f"), LP } },
	{ "d/x/../l/f", RD, LM_LINK, { Y("d/y/f"), EX, Y("d/y/f"), LP },
	  { Y("d/y/f"), EX, Y("d/y/f"), LP } },
	{ "d/x/../n/f", RD, LM_NOSYMFOLLOW, { LP, EX, LP, LP }, { LP, EX, LP, LP } },
	{ "d/y/../m/f", RD, LM_MAGIC, { EX, EX, LP, LP }, { EX, EX, LP, LP } },
	{ "d/x/../y/f", RD, LM_LINK, { Y("d/y/f"), Y("d/y/f"), Y("d/y/f"), Y("d/y/f") },
	  { Y("d/y/f"), Y("d/y/f"), Y("d/y/f"), Y("d/y/f") } },
};
#undef Y
#undef EX
#undef LP
#undef NOTDIR
#undef OD

#ifndef OPEN_TREE_CLONE
#define OPEN_TREE_CLONE 1 /* Linux 5.2, <linux/mount.h> */
#endif
#ifndef MOVE_MOUNT_F_EMPTY_PATH
#define MOVE_MOUNT_F_EMPTY_PATH 0x00000004
#endif
#ifndef OPEN_TREE_CLOEXEC
#define OPEN_TREE_CLOEXEC O_CLOEXEC
#endif
#ifndef SYS_move_mount
#ifdef __alpha__
#define SYS_move_mount 539 /* 5.2; alpha adds 110 to the common numbers */
#else
#define SYS_move_mount 429 /* 5.2 */
#endif
#endif

/* Mount the link src (itself, not what it names) on dst (not followed:
 * without MOVE_MOUNT_T_SYMLINKS a link at dst is covered). 0, or -1 with
 * errno. */
static int lm_mount_link(int srcdir, const char *src, int dstdir, const char *dst)
{
	long t = syscall(SYS_open_tree, srcdir, src,
			 OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_SYMLINK_NOFOLLOW);
	if (t < 0)
		return -1;
	long r = syscall(SYS_move_mount, (int)t, "", dstdir, dst, MOVE_MOUNT_F_EMPTY_PATH);
	int saved = errno;
	close((int)t);
	errno = saved;
	return r < 0 ? -1 : 0;
}

/* A tmpfs on top/name holding the link `link` -> `body`; its directory, or -1. */
static int lm_tmpfs(const char *top, const char *name, unsigned long mflags, const char *link,
		    const char *body)
{
	char p[PATH_MAX];
	snprintf(p, sizeof(p), "%s/%s", top, name);
	if (mount("tmpfs", p, "tmpfs", mflags, "size=64k") < 0)
		return -1;
	int fd = open(p, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (fd >= 0 && symlinkat(body, fd, link) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

#define LM_REASON_MAX 512
struct lm_arg {
	const struct env *e;
	char *skip; /* shared with the parent (LM_REASON_MAX): why the child skipped */
};

/* The child cannot run (some of) the rows: say why, return FX_CHILD_SKIP. */
#define LM_SKIP(a, ...)                                                 \
	do {                                                            \
		snprintf((a)->skip, LM_REASON_MAX, __VA_ARGS__);        \
		fprintf(stderr, "link mounts: skip: %s\n", (a)->skip); \
		return FX_CHILD_SKIP;                                   \
	} while (0)

static int link_mounts_child(void *arg)
{
	struct lm_arg *a = arg;
	const struct env *e = a->e;
	if (fx_enter_mount_ns() < 0)
		LM_SKIP(a, "no private mount namespace: %s", strerror(errno));
	/* The magic link names the child's cwd: "/", outside the root. */
	CHILD_CHECK(chdir("/") == 0);
	bool have[LM_SETS];
	char why[LM_SETS][128];
	int src = lm_tmpfs(e->top, "lmsrc", 0, "ly", "y");
	CHILD_CHECK(src >= 0, "tmpfs with the links to mount");
	CHILD_CHECK(symlinkat("/d/y", src, "lay") == 0);
	/* Opened only now: a descriptor from before unshare() is on the old
	 * mount table (move_mount() would refuse it). */
	char rp[PATH_MAX];
	snprintf(rp, sizeof(rp), "%s/root", e->top);
	int rootfd = open(rp, O_PATH | O_DIRECTORY | O_CLOEXEC);
	CHILD_CHECK(rootfd >= 0);
	if (lm_mount_link(src, "ly", rootfd, "d/l") < 0) {
		int err = errno;
		close(src);
		close(rootfd);
		if (err == ENOSYS || err == EPERM)
			LM_SKIP(a, "no open_tree()/move_mount() here (Linux 5.2; valgrind "
				   "does not know them): %s",
				errname(err));
		errno = err;
		CHILD_CHECK(false, "mounting a link on d/l");
	}
	CHILD_CHECK(lm_mount_link(src, "lay", rootfd, "d/la") == 0);
	close(src);
	have[LM_LINK] = true;
	/* MS_NOSYMFOLLOW is Linux 5.10: EINVAL before. */
	int nsf = lm_tmpfs(e->top, "lmnsf", MS_NOSYMFOLLOW, "s", "y");
	have[LM_NOSYMFOLLOW] = nsf >= 0;
	if (nsf < 0) {
		snprintf(why[LM_NOSYMFOLLOW], sizeof(why[0]),
			 "no nosymfollow mount (Linux 5.10): %s", errname(errno));
	} else {
		CHILD_CHECK(lm_mount_link(nsf, "s", rootfd, "d/n") == 0);
		CHILD_CHECK(lm_mount_link(nsf, "s", rootfd, "d/n2") == 0);
		close(nsf);
	}
	have[LM_MAGIC] = lm_mount_link(AT_FDCWD, "/proc/self/cwd", rootfd, "d/m") == 0;
	if (!have[LM_MAGIC])
		snprintf(why[LM_MAGIC], sizeof(why[0]), "/proc/self/cwd cannot be mounted here: %s",
			 errname(errno));
	struct stat st;
	CHILD_CHECK(fstatat(rootfd, "d/l", &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode));
	bool kernel = kernel_has_openat2();
	int ways = kernel ? RUN_MODES : RUN_MODES - 1;
	int failures = 0, runs = 0, want_runs = 0;
	for (size_t k = 0; k < sizeof(lmrows) / sizeof(lmrows[0]); k++) {
		const struct lmrow *r = &lmrows[k];
		if (!have[r->set])
			continue;
		want_runs += 2 * 4 * ways;
		char kind[48];
		snprintf(kind, sizeof(kind), "link-mount (flags %#llo)",
			 (unsigned long long)r->flags);
		for (int s = 0; s < 2; s++) {
			for (int x = 0; x < 4; x++) {
				const struct lm_want *w = s ? &r->i[x] : &r->b[x];
				uint64_t res = (s ? I : B) | lm_extra[x];
				for (int way = 0; way < RUN_MODES; way++) {
					if (way == RUN_KERNEL && !kernel)
						continue;
					int fd = open_way(way, rootfd, r->path, r->flags, 0, res);
					failures += row_verdict(kind, rootfd, r->path, res,
								way, w->obj, w->err, fd,
								fd < 0 ? errno : 0);
					runs++;
				}
			}
		}
	}
	close(rootfd);
	fprintf(stderr, "link mounts: %d resolutions compared, %d failures\n", runs, failures);
	CHILD_CHECK(runs == want_runs && runs > 0, "ran %d of %d resolutions", runs, want_runs);
	if (failures)
		return 1;
	for (int s = 0; s < LM_SETS; s++)
		if (!have[s])
			LM_SKIP(a, "the rows of %s were not run (%s); the others agreed",
				lm_set_names[s], why[s]);
	return 0;
}

START_TEST(link_mount_points)
{
	if (!sb_can_mount())
		fx_skip("cannot mount here (not root, no user namespace): link mount-point "
			"rows not run");
	struct env e;
	env_setup(&e);
	static const char *const top_spec[] = { "d lmsrc", "d lmnsf", NULL };
	static const char *const spec[] = {
		"d d",	   "d d/x",	     "d d/y",	"f d/x/f x-file", "f d/y/f y-file",
		"l d/l x", "l d/la x", "l d/n x", "f d/n2 covered", "l d/m x",
		"f f root-f", /* what taking d/m's text "/" as a body finds under IN_ROOT */
		NULL,
	};
	fx_build(e.topfd, top_spec);
	fx_build(e.rootfd, spec);
	/* Not fx_run_child(): a SKIP must not leave the tree behind. */
	struct lm_arg a = { &e, mmap(NULL, LM_REASON_MAX, PROT_READ | PROT_WRITE,
				     MAP_SHARED | MAP_ANONYMOUS, -1, 0) };
	ck_assert_ptr_ne(a.skip, MAP_FAILED);
	a.skip[0] = '\0';
	int rc = sb_run(link_mounts_child, &a);
	char skip[LM_REASON_MAX];
	snprintf(skip, sizeof(skip), "%s", a.skip[0] ? a.skip : "(the child gave no reason)");
	munmap(a.skip, LM_REASON_MAX);
	env_teardown(&e);
	if (rc == FX_CHILD_SKIP)
		fx_skip("links that are mount points: %s", skip);
	ck_assert_msg(rc == 0, "links that are mount points: the child failed with %d (details "
		      "on stderr)", rc);
}
END_TEST

/* ------------------------------------------------------------------ the kernel selftest's tree */

/*
 * The tree of the kernel's tools/testing/selftests/openat2/resolve_test (a
 * tmpfs mount, absolute, "cheeky" and "garbage" links, links into /proc),
 * rebuilt here, and every one of its paths tried from five directories
 * (the root, the mount, /proc, "/" and a subdirectory) under both scopes
 * with each extra flag set and four kinds of open: raw openat2, the library
 * and the walker must agree on every one. The selftest's own rows without a
 * scope are run with each scope added (the library requires one). Creating
 * opens only run from directories inside the tree; each way removes what it
 * created. In a child: it needs its own mount namespace.
 */
static const char *const kself_spec[] = {
	"l procexe /proc/self/exe",
	"l procroot /proc/self/root",
	"d root",
	"d etc",
	"f etc/passwd x",
	"l creatlink /newfile3",
	"l reletc etc/",
	"l relsym etc/passwd",
	"l absetc /etc/",
	"l abssym /etc/passwd",
	"l abscheeky /cheeky",
	"d cheeky",
	"l cheeky/absself /",
	"l cheeky/self ../../root/",
	"l cheeky/garbageself /../../root/",
	"l cheeky/passwd ../cheeky/../etc/../etc/passwd",
	"l cheeky/abspasswd /../cheeky/../etc/../etc/passwd",
	"l cheeky/dotdotlink ../../../../../../../../../../../../../../etc/passwd",
	"l cheeky/garbagelink /../../../../../../../../../../../../../../etc/passwd",
	NULL,
};

/* What a way gave, comparable across ways: the object, "created", or the errno. */
static void kself_result(int fd, int err, char *buf, size_t size)
{
	struct stat st;
	if (fd < 0)
		snprintf(buf, size, "%s", errname(err));
	else if (fstat(fd, &st) < 0)
		snprintf(buf, size, "fstat: %s", errname(errno));
	else if (S_ISREG(st.st_mode) && (st.st_mode & 0777) == 0700) /* made by this open */
		snprintf(buf, size, "created");
	else
		snprintf(buf, size, "%llx:%llu", (unsigned long long)st.st_dev,
			 (unsigned long long)st.st_ino);
}

/* Remove the file an O_CREAT way made (mode 0700), wherever the path led. */
static void kself_uncreate(int rootfd, int dfd, const char *path, int fd)
{
	struct stat st, at;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || (st.st_mode & 0777) != 0700)
		return;
	while (*path == '/') /* IN_ROOT: relative to dfd */
		path++;
	if (fstatat(dfd, path, &at, AT_SYMLINK_NOFOLLOW) == 0 && at.st_ino == st.st_ino)
		(void)unlinkat(dfd, path, 0);
	else if (fstatat(rootfd, "newfile3", &at, 0) == 0 && at.st_ino == st.st_ino)
		(void)unlinkat(rootfd, "newfile3", 0); /* through creatlink */
}

struct kself_case {
	int rootfd, dfd;
	const char *dir, *path;
	uint64_t flags, resolve;
};

/* One case, every way; false (and, if `say`, a line on stderr) if they disagree. */
static bool kself_one(const struct kself_case *c, bool kernel, bool say)
{
	uint64_t mode = (c->flags & O_CREAT) ? 0700 : 0;
	char got[RUN_MODES][64];
	int first = kernel ? RUN_KERNEL : RUN_DEFAULT;
	for (int way = first; way < RUN_MODES; way++) {
		int fd = open_way(way, c->dfd, c->path, c->flags, mode, c->resolve);
		kself_result(fd, errno, got[way], sizeof(got[way]));
		if (fd >= 0) {
			if (c->flags & O_CREAT)
				kself_uncreate(c->rootfd, c->dfd, c->path, fd);
			close(fd);
		}
	}
	bool same = true;
	for (int way = first + 1; way < RUN_MODES; way++) {
		if (!strcmp(got[first], got[way]))
			continue;
		same = false;
		if (say)
				fprintf(stderr, "kself: from %s, %s flags %#llo resolve %#llx: %s %s, %s %s\n",
				c->dir, c->path, (unsigned long long)c->flags,
				(unsigned long long)c->resolve, mode_names[first], got[first],
				mode_names[way], got[way]);
	}
	return same;
}

static int kself_child(void *arg)
{
	const char *top = arg;
	if (fx_enter_mount_ns() < 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0) {
		fprintf(stderr, "kself: mount namespace: %s\n", strerror(errno));
		return 1;
	}
	int topfd = open(top, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (topfd < 0 || mkdirat(topfd, "kroot", 0755) < 0)
		return 1;
	int rootfd = openat(topfd, "kroot", O_PATH | O_DIRECTORY | O_CLOEXEC);
	close(topfd);
	if (rootfd < 0 || mkdirat(rootfd, "mnt", 0755) < 0)
		return 1;
	char mnt[PATH_MAX];
	snprintf(mnt, sizeof(mnt), "%s/kroot/mnt", top);
	if (mount("tmpfs", mnt, "tmpfs", MS_NOSUID | MS_NODEV, "size=1m") < 0) {
		fprintf(stderr, "kself: tmpfs: %s\n", strerror(errno));
		return 1;
	}
	static const char *const mnt_spec[] = { "l mnt/self ../mnt/", "l mnt/absself /mnt/", NULL };
	fx_build(rootfd, kself_spec);
	fx_build(rootfd, mnt_spec);
	int nullfd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	char fdlink[32];
	snprintf(fdlink, sizeof(fdlink), "self/fd/%d", nullfd);

	const char *const paths[] = {
		"/", "cheeky/absself", "abscheeky/absself", "..", "../root/", "cheeky/self",
		"abscheeky/self", "cheeky/garbageself", "abscheeky/garbageself", "root", "etc",
		"etc/passwd", "relsym", "cheeky/passwd", "abscheeky/passwd", "abssym", "/etc/passwd",
		"cheeky/abspasswd", "abscheeky/abspasswd", "cheeky/dotdotlink", "abscheeky/dotdotlink",
		"cheeky/garbagelink", "abscheeky/garbagelink", "/../../../../abscheeky/dotdotlink",
		"/../../../../abscheeky/garbagelink", "mnt", "mnt/", "mnt/.", "/proc/1", "/tmp",
		"procexe", "/proc/self/exe", "procroot/etc", "/proc/self/root/etc", ".",
		"reletc/passwd", "absetc/passwd", "reletc", "self", "absself", "self/self", "newfile1",
		"/newfile2", "/creatlink", fdlink,
	};
	static const char *const dirs[] = { ".", "mnt", "/proc", "/", "cheeky" };
	static const uint64_t extra[] = {
		0, RESOLVE_NO_XDEV, RESOLVE_NO_MAGICLINKS, RESOLVE_NO_SYMLINKS,
		RESOLVE_NO_XDEV | RESOLVE_NO_SYMLINKS,
	};
	static const uint64_t opens[] = { O_PATH, O_PATH | O_NOFOLLOW, O_RDONLY | O_DIRECTORY,
					  O_CREAT | O_RDONLY };
	bool kernel = kernel_has_openat2();
	long cases = 0;
	int failures = 0;
	for (size_t d = 0; d < sizeof(dirs) / sizeof(dirs[0]); d++) {
		bool inside = dirs[d][0] != '/';
		int dfd = openat(inside ? rootfd : AT_FDCWD, dirs[d],
				 O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (dfd < 0)
			return 1;
		for (size_t p = 0; p < sizeof(paths) / sizeof(paths[0]); p++) {
			for (size_t k = 0; k < 2 * sizeof(extra) / sizeof(extra[0]); k++) {
				uint64_t res = ((k & 1) ? RESOLVE_IN_ROOT : RESOLVE_BENEATH) |
					       extra[k / 2];
				for (size_t o = 0; o < sizeof(opens) / sizeof(opens[0]); o++) {
					if ((opens[o] & O_CREAT) && !inside)
						continue; /* never create outside the tree */
					const struct kself_case c = { rootfd, dfd, dirs[d], paths[p],
								      opens[o], res };
					cases++;
					if (!kself_one(&c, kernel, failures < 20))
						failures++;
				}
			}
		}
		close(dfd);
	}
	close(nullfd);
	close(rootfd);
	fprintf(stderr, "kself: %ld cases from the kernel selftest's tree, %d disagreements\n", cases,
		failures);
	return failures ? 1 : 0;
}

START_TEST(kernel_selftest_tree)
{
	if (!sb_can_mount()) {
		fx_skip("cannot mount here (not root, no user namespace)");
	}
	char *top = fx_mkdtemp("kself");
	ck_assert_int_eq(sb_run(kself_child, top), 0);
	ck_assert_int_eq(fx_rmtree(top), 0);
	free(top);
}
END_TEST

/* ------------------------------------------------------------------ no openat2 (seccomp) */

struct seccomp_arg {
	const struct env *e;
	int err;
};

static int seccomp_child(void *arg)
{
	const struct seccomp_arg *a = arg;
	struct sb_rule rule = SB_ALWAYS(SYS_openat2, a->err);
	bool kernel = kernel_has_openat2(); /* valgrind answers ENOSYS itself */
	if (sb_seccomp(&rule, 1) < 0) {
		perror("sb_seccomp");
		return 2;
	}
	/* The filter must really be in place. */
	if (kernel && (syscall(SYS_openat2, AT_FDCWD, NULL, NULL, 0) != -1 || errno != a->err)) {
		fprintf(stderr, "seccomp filter not effective\n");
		return 2;
	}
	int failures = run_table(a->e, 1U << RUN_DEFAULT, false, NULL);
	int procfd = open("/proc", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (procfd < 0)
		return 2;
	failures += run_proc_rows(procfd, a->e->rootfd, false);
	close(procfd);
	return failures ? 1 : 0;
}

START_TEST(without_openat2_enosys)
{
	struct env e;
	env_setup(&e);
	struct seccomp_arg a = { &e, ENOSYS };
	ck_assert_int_eq(sb_run(seccomp_child, &a), 0);
	env_teardown(&e);
}
END_TEST

START_TEST(without_openat2_eperm)
{
	struct env e;
	env_setup(&e);
	struct seccomp_arg a = { &e, EPERM };
	ck_assert_int_eq(sb_run(seccomp_child, &a), 0);
	env_teardown(&e);
}
END_TEST

/* ------------------------------------------------------------------ unprivileged: EACCES */

static const char *const eacces_paths[] = {
	"a/noperm/x",      "a/noperm/x/",     "a/noperm/.",      "a/noperm/..",
	"a/noperm/./",     "a/noperm/../b",   "a/noperm/x/../..", "a/lnoperm/x",
	"a/noperm/lself",  "a/noperm/missing", "a/lnoperm/..",   "a/noperm/../../file",
	NULL,
};

/* One EACCES expectation, three ways. Returns the number of failures. */
static int eacces_one(int rootfd, const char *path, uint64_t fl, uint64_t res, bool kernel)
{
	uint64_t mode = ((fl & O_CREAT) || (fl & O_TMPFILE) == O_TMPFILE) ? 0600 : 0;
	int failures = 0;
	for (int way = 0; way < RUN_MODES; way++) {
		if (way == RUN_KERNEL && !kernel)
			continue;
		int fd = open_way(way, rootfd, path, fl, mode, res);
		int err = fd < 0 ? errno : 0;
		/* "x/" with O_CREAT is EISDIR only after the search permission
		 * check, so EACCES everywhere. */
		if (fd >= 0 || err != EACCES) {
			failures++;
			fprintf(stderr, "eacces \"%s\" flags=%#llo resolve=%#llx via %s: got %s\n",
				path, (unsigned long long)fl, (unsigned long long)res,
				mode_names[way], fd >= 0 ? "an fd" : errname(err));
		}
		if (fd >= 0)
			close(fd);
	}
	return failures;
}

static int eacces_child(void *arg)
{
	const struct env *e = arg;
	if (sb_drop_privileges() < 0) {
		perror("sb_drop_privileges");
		return 2;
	}
	bool kernel = kernel_has_openat2();
	int failures = 0;
	static const uint64_t flagsets[] = { O_RDONLY,	       O_PATH,
					     O_PATH | O_NOFOLLOW,  O_CREAT | O_WRONLY,
					     O_TMPFILE | O_RDWR,   O_DIRECTORY };
	for (const char *const *p = eacces_paths; *p; p++)
		for (size_t f = 0; f < sizeof(flagsets) / sizeof(flagsets[0]); f++)
			for (int s = 0; s < 2; s++)
				failures += eacces_one(e->rootfd, *p, flagsets[f], s ? I : B,
						       kernel);
	/* As the root, "/" names it without a lookup in it: O_PATH works
	 * without search permission, O_RDONLY needs read permission. */
	int nfd = openat(e->rootfd, "a/noperm", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (nfd < 0)
		return 2;
	static const struct {
		const char *path;
		uint64_t flags, res;
		int err;
	} at_root[] = {
		{ "/", O_PATH, I, 0 },         { "//", O_PATH | O_DIRECTORY, I, 0 },
		{ "/", O_RDONLY, I, EACCES },  { "/", O_PATH, B, EXDEV },
		{ ".", O_PATH, I, EACCES },    { "..", O_PATH, I, EACCES },
	};
	/* Without open_tree() (before 5.2; valgrind does not know it) the
	 * walker's documented answer for "/" is EACCES. */
	long ot = syscall(SYS_open_tree, nfd, "", AT_EMPTY_PATH | O_CLOEXEC);
	bool open_tree_ok = ot >= 0;
	if (ot >= 0)
		close((int)ot);
	for (size_t i = 0; i < sizeof(at_root) / sizeof(at_root[0]); i++) {
		for (int way = 0; way < RUN_MODES; way++) {
			if (way == RUN_KERNEL && !kernel)
				continue;
			int fd = open_way(way, nfd, at_root[i].path, at_root[i].flags, 0,
					  at_root[i].res);
			int err = fd < 0 ? errno : 0;
			if (fd >= 0)
				close(fd);
			int want = at_root[i].err;
			if (!want && way != RUN_KERNEL && !kernel && !open_tree_ok)
				want = EACCES;
			if (err != want) {
				failures++;
				fprintf(stderr, "unsearchable root \"%s\" via %s: got %s\n",
					at_root[i].path, mode_names[way],
					err ? errname(err) : "an fd");
			}
		}
	}
	close(nfd);
	/* The directory itself may still be opened O_PATH (no search needed). */
	for (int way = RUN_DEFAULT; way < RUN_MODES; way++) {
		int fd = open_way(way, e->rootfd, "a/noperm", O_PATH, 0, B);
		if (fd < 0) {
			failures++;
			fprintf(stderr, "a/noperm O_PATH via %s: %s\n", mode_names[way],
				errname(errno));
		} else {
			close(fd);
		}
	}
#ifdef SYS_faccessat2
	/* Again without faccessat2 (before 5.8): the walker's search check on
	 * a directory left by ".." is then a lookup of "." in it (SEARCH_CHECK). */
	const struct sb_rule rules[] = { SB_ALWAYS(SYS_faccessat2, ENOSYS) };
	if (sb_seccomp(rules, 1) < 0) {
		perror("seccomp");
		return 2;
	}
	for (const char *const *p = eacces_paths; *p; p++)
		for (size_t f = 0; f < sizeof(flagsets) / sizeof(flagsets[0]); f++)
			for (int s = 0; s < 2; s++)
				failures += eacces_one(e->rootfd, *p, flagsets[f], s ? I : B,
						       kernel);
#endif
	return failures ? 1 : 0;
}

START_TEST(unprivileged_eacces)
{
	struct env e;
	env_setup(&e);
	static const char *const spec[] = {
		"d a/noperm 0755", "d a/noperm/x", "l a/noperm/lself .", "l a/lnoperm noperm", NULL,
	};
	fx_build(e.rootfd, spec);
	ck_assert_int_eq(fchmodat(e.rootfd, "a/noperm", 0, 0), 0);
	ck_assert_int_eq(sb_run(eacces_child, &e), 0);
	ck_assert_int_eq(fchmodat(e.rootfd, "a/noperm", 0755, 0), 0);
	env_teardown(&e);
}
END_TEST

/* ------------------------------------------------------------------ the rename race */

/*
 * top/secret exists; root/a/b/c exists while the attacker moves root/a/b to
 * top/b and back. "a/b/c/.../c/" then one ".." more than the c levels names
 * root/a/secret (absent: ENOENT); a resolver that let ".." follow the moved
 * directory would climb to top and open top/secret. Any success is an escape
 * and fails the test; EAGAIN is counted (allowed).
 */
struct race {
	int topfd, rootfd;
	atomic_bool stop;
	uint64_t resolve;
	bool control; /* plain openat(): shows that the attack works */
	char paths[2][256];
	bool throttle;
	long attempts; /* per resolver thread */
	atomic_long escapes, eagain, other, enoent, renames;
	struct stat secret;
	atomic_int unexpected_errno;
};

static void *attacker(void *arg)
{
	struct race *r = arg;
	while (!atomic_load(&r->stop)) {
		if (renameat(r->rootfd, "a/b", r->topfd, "b") == 0)
			atomic_fetch_add(&r->renames, 1);
		if (renameat(r->topfd, "b", r->rootfd, "a/b") == 0)
			atomic_fetch_add(&r->renames, 1);
		if (r->throttle)
			usleep(50); /* valgrind runs one thread at a time */
	}
	return NULL;
}

static void *resolver(void *arg)
{
	struct race *r = arg;
	for (long i = 0; i < r->attempts; i++) {
		const char *p = r->paths[i & 1];
		uint64_t scope = (i & 2) ? I : B;
		int fd = r->control ? openat(r->rootfd, p, O_RDONLY | O_CLOEXEC)
				    : lib_open(r->rootfd, p, O_RDONLY, 0, scope | r->resolve);
		if (fd >= 0) {
			struct stat st;
			if (fstat(fd, &st) == 0 && st.st_ino == r->secret.st_ino &&
			    st.st_dev == r->secret.st_dev)
				atomic_fetch_add(&r->escapes, 1);
			else
				atomic_fetch_add(&r->other, 1);
			close(fd);
		} else if (errno == EAGAIN) {
			atomic_fetch_add(&r->eagain, 1);
		} else if (errno == ENOENT || (errno == EXDEV && (i & 3) == 1)) {
			atomic_fetch_add(&r->enoent, 1);
		} else {
			atomic_store(&r->unexpected_errno, errno);
		}
	}
	return NULL;
}

/* Returns the number of escapes (asserted 0 unless this is the control),
 * or -1 if the attacker starved (fewer renames than the floor). */
static long run_race(uint64_t resolve, const char *what, bool control)
{
	char *top = fx_mkdtemp("race");
	struct race r = { .resolve = resolve, .control = control, .throttle = fx_under_valgrind() };
	r.topfd = open(top, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	ck_assert_int_ge(r.topfd, 0);
	static const char *const spec[] = { "d root", "d root/a", "d root/a/b", "f secret secret",
					    NULL };
	fx_build(r.topfd, spec);
	/* root/a/b/c/c/.../c (RACE_DEPTH levels below b): the longer the walk
	 * stays below b, the wider the window for the attacker. */
	enum { RACE_DEPTH = 8 };
	char deep[128] = "root/a/b";
	for (int i = 0; i < RACE_DEPTH; i++) {
		strcat(deep, "/c");
		ck_assert_int_eq(mkdirat(r.topfd, deep, 0755), 0);
	}
	/* Down to the bottom, then up to b's parent: root/a legitimately
	 * (no "secret" there: ENOENT), top after an undetected move of b. */
	char *p0 = r.paths[0], *p1 = r.paths[1];
	strcpy(p0, deep + strlen("root/"));
	strcat(p0, "/");
	for (int i = 0; i <= RACE_DEPTH; i++)
		strcat(p0, "../");
	strcpy(p1, p0);
	strcat(p0, "secret");
	strcat(p1, "../a/../secret"); /* BENEATH: EXDEV; IN_ROOT: ENOENT */
	r.rootfd = openat(r.topfd, "root", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	ck_assert_int_ge(r.rootfd, 0);
	ck_assert_int_eq(fstatat(r.topfd, "secret", &r.secret, 0), 0);
	long total = fx_size(20000, 100000, 100);
	enum { NRES = 2 };
	r.attempts = total / NRES;
	pthread_t att, res[NRES];
	ck_assert_int_eq(pthread_create(&att, NULL, attacker, &r), 0);
	double t0 = fx_now();
	for (int i = 0; i < NRES; i++)
		ck_assert_int_eq(pthread_create(&res[i], NULL, resolver, &r), 0);
	for (int i = 0; i < NRES; i++)
		pthread_join(res[i], NULL);
	atomic_store(&r.stop, true);
	pthread_join(att, NULL);
	fprintf(stderr,
		"race %s: %ld attempts in %.2fs, %ld renames: %ld refused, %ld EAGAIN, "
		"%ld escapes, %ld other\n",
		what, r.attempts * NRES, fx_now() - t0, atomic_load(&r.renames),
		atomic_load(&r.enoent), atomic_load(&r.eagain), atomic_load(&r.escapes),
		atomic_load(&r.other));
	if (!control) {
		ck_assert_int_eq(atomic_load(&r.escapes), 0);
		ck_assert_int_eq(atomic_load(&r.other), 0);
		ck_assert_msg(atomic_load(&r.unexpected_errno) == 0, "unexpected errno %s",
			      errname(atomic_load(&r.unexpected_errno)));
	}
	/* Put b back if the attacker left it outside. */
	(void)renameat(r.topfd, "b", r.rootfd, "a/b");
	close(r.rootfd);
	close(r.topfd);
	ck_assert_int_eq(fx_rmtree(top), 0);
	free(top);
	/* The attack happened: the attacker moved b while the resolvers ran. */
	long min_renames = fx_under_valgrind() ? 10 : 100;
	if (atomic_load(&r.renames) < min_renames) {
		fprintf(stderr, "race %s: attacker starved: %ld renames (floor %ld)\n", what,
			atomic_load(&r.renames), min_renames);
		return -1;
	}
	return atomic_load(&r.escapes);
}

/* The naive control in the same case: plain openat() under the same attack
 * must escape at least once (up to RACE_CONTROL_RUNS runs: on a loaded
 * machine the window is hit less often), and the attacker must have
 * renamed in the library's run too; else the attack was not real here and
 * the case SKIPs ("attacker starved") instead of passing. The library's run
 * happens (and its escapes are asserted) either way, so that valgrind still
 * checks it. */
#define RACE_CONTROL_RUNS 25
static void race_with_control(uint64_t resolve, const char *what)
{
	long control = 0;
	int k = 0;
	while (k < RACE_CONTROL_RUNS && control <= 0) {
		control = run_race(0, "control, plain openat", true);
		k++;
	}
	long lib = run_race(resolve, what, false);
	if (control <= 0)
		fx_skip("attacker starved: plain openat() never escaped in %d control runs "
			"(%s: no escape)",
			k, what);
	if (lib < 0)
		fx_skip("attacker starved during the %s run (no escape)", what);
}

START_TEST(rename_race_fast_path)
{
	race_with_control(0, "fast path");
}
END_TEST

START_TEST(rename_race_walker)
{
	race_with_control(US, "walker");
}
END_TEST

/* ------------------------------------------------------------------ suite */

static Suite *resolve_suite(void)
{
	Suite *s = suite_create("resolve");
	TCase *tc = tcase_create("core");
	tcase_add_checked_fixture(tc, fx_fd_setup, fx_fd_teardown);
	tcase_set_timeout(tc, 600);
	tcase_add_test(tc, case_table);
	tcase_add_test(tc, validation_and_error_order);
	tcase_add_test(tc, path_length_limits);
	tcase_add_test(tc, beneath_wrapper_and_cloexec);
	tcase_add_test(tc, deep_path_constant_fds);
	tcase_add_test(tc, long_link_bodies);
	tcase_add_test(tc, protected_symlinks_sticky);
	tcase_add_test(tc, kernel_link_double_count);
	tcase_add_test(tc, magic_links);
	tcase_add_test(tc, no_xdev_mounts);
	tcase_add_test(tc, no_xdev_bind_without_handles);
	tcase_add_test(tc, link_facts_per_mount);
	tcase_add_test(tc, link_mount_points);
	tcase_add_test(tc, kernel_selftest_tree);
	tcase_add_test(tc, without_openat2_enosys);
	tcase_add_test(tc, without_openat2_eperm);
	tcase_add_test(tc, unprivileged_eacces);
	tcase_add_test(tc, rename_race_fast_path);
	tcase_add_test(tc, rename_race_walker);
	suite_add_tcase(s, tc);
	return s;
}

FX_MAIN(resolve_suite)
