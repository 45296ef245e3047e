/* SPDX-License-Identifier: MIT */
/*
 * bench: libsafeopen side by side with plain openat(2), the realpath()
 * pattern and raw openat2(2). See bench/README.md.
 *
 * Every cell is first checked to open the right object (same st_dev and
 * st_ino as the object the path names, or the right errno); a cell that does
 * not prints WRONG and is never timed. Timing: per cell, a calibration run
 * (which doubles as warm-up) sizes a batch to about --batch-ms; then the
 * cells of one row are run in interleaved rounds (batch b of every method,
 * starting with a different method each round), so slow periods of a noisy
 * machine hit all methods of a row alike. A cell shows the median of the
 * batches and the largest distance of a batch from it; ratios are medians of
 * the per-round ratios. Heap allocations are counted by interposing malloc in
 * this binary; syscalls are counted by running each cell in a child under
 * strace(1) between two marker syscalls. Targets are reported, never
 * asserted; only --verify-only has a pass/fail exit status.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <linux/magic.h>
#include <linux/openat2.h>
#include <malloc.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

#include <safeopen.h>

/* ------------------------------------------------------------------ heap allocation counter */

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define BENCH_COUNT_ALLOCS 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || \
	__has_feature(memory_sanitizer)
#define BENCH_COUNT_ALLOCS 0
#endif
#endif
#ifndef BENCH_COUNT_ALLOCS
#define BENCH_COUNT_ALLOCS 1
#endif

static unsigned long alloc_calls;

#if BENCH_COUNT_ALLOCS
/* glibc's own entry points; defining malloc & co. here (the binary is linked
 * with --export-dynamic) interposes them for the whole process, the library
 * included. Only calls are counted; the memory is glibc's. */
extern void *__libc_malloc(size_t size);
extern void *__libc_calloc(size_t n, size_t size);
extern void *__libc_realloc(void *p, size_t size);
extern void *__libc_memalign(size_t align, size_t size);

static inline void count_alloc(void)
{
	__atomic_add_fetch(&alloc_calls, 1, __ATOMIC_RELAXED);
}

void *malloc(size_t size)
{
	count_alloc();
	return __libc_malloc(size);
}

void *calloc(size_t n, size_t size)
{
	count_alloc();
	return __libc_calloc(n, size);
}

void *realloc(void *p, size_t size)
{
	count_alloc();
	return __libc_realloc(p, size);
}

void *memalign(size_t align, size_t size)
{
	count_alloc();
	return __libc_memalign(align, size);
}

void *aligned_alloc(size_t align, size_t size)
{
	count_alloc();
	return __libc_memalign(align, size);
}

int posix_memalign(void **out, size_t align, size_t size)
{
	if (align < sizeof(void *) || (align & (align - 1)))
		return EINVAL;
	count_alloc();
	void *p = __libc_memalign(align, size);
	if (!p)
		return ENOMEM;
	*out = p;
	return 0;
}
#endif

static unsigned long allocs_now(void)
{
	return __atomic_load_n(&alloc_calls, __ATOMIC_RELAXED);
}

/* True when the counter sees allocations made inside a shared library (here
 * glibc's asprintf), i.e. the interposition works. */
static bool alloc_counter_works(void)
{
	if (!BENCH_COUNT_ALLOCS)
		return false;
	unsigned long a0 = allocs_now();
	char *s = NULL;
	if (asprintf(&s, "%lu", a0) < 0)
		return false;
	free(s);
	return allocs_now() > a0;
}

static bool counting_allocs;

/* ------------------------------------------------------------------ model */

enum method { M_OPENAT, M_REALPATH, M_O2_BENEATH, M_O2_INROOT, M_FAST, M_WALK, NR_M };
static const char *const m_key[NR_M] = { "openat",         "realpath",  "openat2-beneath",
					 "openat2-inroot", "safe-fast", "safe-walker" };
static const char *const m_head[NR_M] = { "openat",     "realpath+chk", "openat2 BEN",
					  "openat2 INR", "safe fast",    "safe walker" };

enum tmethod { T_SAFE, T_SAFE_FALLBACK, T_RAW, T_MKSTEMP, NR_T };
static const char *const t_key[NR_T] = { "safe-otmpfile", "safe-fallback", "raw-otmpfile",
					 "mkstemp-rename" };
static const char *const t_head[NR_T] = { "safe O_TMPFILE", "safe NO_OTMPF", "raw seq",
					  "mkstemp+ren" };

enum kind { K_OPEN, K_TMP };
enum { SEC_SHAPES = 1, SEC_TMPFILE = 2, SEC_DEPTH = 4, SEC_MKDIR = 8, SEC_ALL = 15 };
enum status { ST_OK, ST_WRONG, ST_NOSYS, ST_NA, ST_FAIL, ST_SKIP };

#define NR_MAIN 9
#define NR_DEPTH 9 /* 1, 2, 4, ... 256 components */
#define NR_SHAPES (NR_MAIN + NR_DEPTH)
#define MAX_DEPTH 256
#define TREE_DEPTH 320  /* levels of d/ in the tree */
#define DOTDOT_DEPTH 300 /* the dotdot shape: DOTDOT_DEPTH x "d/" + "../f" */
#define BIGDIR_ENTRIES 10000
#define MAX_BATCHES 101
#define CHUNK 256 /* creations timed between untimed clean-ups */
#define NR_XATTR_ROWS 3
static const int xattr_rows[NR_XATTR_ROWS] = { 0, 1, 4 };

struct shape {
	const char *key, *label;
	char path[2 * TREE_DEPTH + 16];
	const char *expect; /* symlink-free path of the object; NULL: ENOENT expected */
	char expbuf[2 * TREE_DEPTH + 16];
	int components;
	bool in_root; /* resolved IN_ROOT (absolute symlink) */
	bool create;  /* O_CREAT|O_EXCL of a new name under "new/" */
	dev_t dev;
	ino_t ino;
};

struct cell {
	enum kind kind;
	int method;
	struct shape *shape; /* K_OPEN */
	int nx;              /* K_TMP: number of xattrs */
	enum status st;
	bool expected_wrong; /* an unsafe method that cannot do IN_ROOT */
	char detail[200];
	long ops; /* per batch */
	int nb;
	double ns[MAX_BATCHES];
	double med, min, max;
	double allocs; /* per call; < 0 unknown */
	double sys;    /* per call; < 0 unknown */
	char sysdetail[160];
};

static struct {
	int rootfd;
	char root[PATH_MAX]; /* absolute, canonical path of the tree */
	size_t rootlen;
	unsigned seq; /* name counter for created files */
	bool quick, verify_only, allow_enosys, no_strace;
	int batches;
	double batch_ns;
	int cpu;
	unsigned only; /* sections to run: SEC_* bits */
	clockid_t clock; /* CLOCK_MONOTONIC, or CLOCK_THREAD_CPUTIME_ID (--clock cpu) */
	const char *dir, *csv;
	char exe[PATH_MAX];
} g = { .rootfd = -1, .only = SEC_ALL, .batches = 7, .batch_ns = 100e6, .cpu = -1, .clock = CLOCK_MONOTONIC,
	.dir = "." };

static volatile sig_atomic_t stop;

static struct shape shapes[NR_SHAPES];
static struct cell main_cells[NR_MAIN][NR_M];
static struct cell tmp_cells[NR_XATTR_ROWS][NR_T];
static struct cell depth_cells[NR_DEPTH][NR_M];

static const char xattr_value[32] = "0123456789abcdef0123456789abcde";
static struct safe_xattr xattrs[4];
static char xattr_names[4][16];

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static double now_ns(void)
{
	struct timespec ts;
	clock_gettime(g.clock, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static const char *errname(int e)
{
	const char *n = strerrorname_np(e);
	return n ? n : "E?";
}

/* ------------------------------------------------------------------ shapes and tree */

static void init_shapes(void)
{
	static const struct {
		const char *key, *label, *path, *expect;
		int comps;
		bool in_root, create;
	} main_shapes[NR_MAIN] = {
		{ "one", "1 component", "f", "f", 1, false, false },
		{ "deep8", "8 dirs deep", "d/d/d/d/d/d/d/d/f", "d/d/d/d/d/d/d/d/f", 9, false, false },
		{ "symlinks3", "3 rel symlinks", "sym/la/lb/lc/file", "sym/ra/rb/rc/file", 5, false,
		  false },
		{ "abslink", "abs link INROOT", "abs/lnk", "abs/tgt/file", 2, true, false },
		{ "comp64", "64 components", NULL, NULL, 64, false, false },
		/* d/ x 300, then "../f": the walker tracks identities 300 deep */
		{ "dotdot300", "300 deep + ..", NULL, NULL, DOTDOT_DEPTH + 2, false, false },
		{ "bigdir", "10k-entry dir", "big/e05000", "big/e05000", 2, false, false },
		{ "enoent", "nonexistent", "d/d/d/missing", NULL, 4, false, false },
		{ "creat", "O_CREAT|O_EXCL", "new/", NULL, 2, false, true },
	};
	static const char *const depth_keys[NR_DEPTH] = { "depth1",  "depth2",  "depth4",
							  "depth8",  "depth16", "depth32",
							  "depth64", "depth128", "depth256" };
	for (int i = 0; i < NR_SHAPES; i++) {
		struct shape *s = &shapes[i];
		int comps;
		if (i < NR_MAIN) {
			s->key = main_shapes[i].key;
			s->label = main_shapes[i].label;
			s->in_root = main_shapes[i].in_root;
			s->create = main_shapes[i].create;
			comps = main_shapes[i].comps;
			if (main_shapes[i].path) {
				snprintf(s->path, sizeof(s->path), "%s", main_shapes[i].path);
				s->expect = main_shapes[i].expect;
				s->components = comps;
				continue;
			}
		} else {
			comps = 1 << (i - NR_MAIN);
			s->key = depth_keys[i - NR_MAIN];
			s->label = s->key;
		}
		/* (comps - 1) directories "d" and the file "f" in the last one. */
		size_t n = 0;
		bool dotdot = i < NR_MAIN && !strcmp(s->key, "dotdot300");
		for (int c = 1; c < (dotdot ? DOTDOT_DEPTH + 1 : comps); c++) {
			s->path[n++] = 'd';
			s->path[n++] = '/';
		}
		s->path[n++] = 'f';
		s->path[n] = '\0';
		s->expect = s->path;
		s->components = comps;
		if (dotdot) {
			/* DOTDOT_DEPTH x "d/" + "../f" names (DOTDOT_DEPTH - 1) x "d/" + "f" */
			snprintf(s->expbuf, sizeof(s->expbuf), "%.*sf", 2 * (DOTDOT_DEPTH - 1),
				 s->path);
			snprintf(s->path + 2 * DOTDOT_DEPTH, sizeof(s->path) - 2 * DOTDOT_DEPTH,
				 "../f");
			s->expect = s->expbuf;
		}
	}
	for (int i = 0; i < 4; i++) {
		snprintf(xattr_names[i], sizeof(xattr_names[i]), "user.bench%d", i);
		xattrs[i] = (struct safe_xattr){ xattr_names[i], xattr_value, sizeof(xattr_value) };
	}
}

static int touch(int dirfd, const char *name)
{
	int fd = openat(dirfd, name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (fd < 0)
		return -1;
	close(fd);
	return 0;
}

static int build_tree(int rootfd)
{
	int cur = openat(rootfd, ".", O_PATH | O_DIRECTORY | O_CLOEXEC);
	for (int level = 0; cur >= 0; level++) {
		if (touch(cur, "f") < 0)
			goto fail_cur;
		if (level == TREE_DEPTH - 1)
			break;
		if (mkdirat(cur, "d", 0755) < 0)
			goto fail_cur;
		int next = openat(cur, "d", O_PATH | O_DIRECTORY | O_CLOEXEC);
		close(cur);
		cur = next;
	}
	if (cur < 0)
		return -1;
	close(cur);

	static const char *const dirs[] = { "sym", "sym/ra", "sym/ra/rb", "sym/ra/rb/rc", "abs",
					    "abs/tgt", "big", "new", "tmp" };
	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++)
		if (mkdirat(rootfd, dirs[i], 0755) < 0)
			return -1;
	if (touch(rootfd, "sym/ra/rb/rc/file") < 0 || symlinkat("ra", rootfd, "sym/la") < 0 ||
	    symlinkat("rb", rootfd, "sym/ra/lb") < 0 ||
	    symlinkat("../rb/rc", rootfd, "sym/ra/rb/lc") < 0)
		return -1;
	if (touch(rootfd, "abs/tgt/file") < 0 || symlinkat("/abs/tgt/file", rootfd, "abs/lnk") < 0)
		return -1;
	/* The big directory: the target big/e05000 is a file of its own; the
	 * 9,999 other entries are hard links to one filler file outside it
	 * (a link is far cheaper to make than an inode, and the directory's
	 * size is what counts for the lookup). */
	if (touch(rootfd, "fill") < 0)
		return -1;
	int big = openat(rootfd, "big", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (big < 0)
		return -1;
	for (int i = 0; i < BIGDIR_ENTRIES && !stop; i++) {
		char name[16];
		snprintf(name, sizeof(name), "e%05d", i);
		if (i == BIGDIR_ENTRIES / 2 ? touch(big, name) < 0
					    : linkat(rootfd, "fill", big, name, 0) < 0) {
			close(big);
			return -1;
		}
	}
	close(big);
	return stop ? -1 : 0;
fail_cur:
	close(cur);
	return -1;
}

static int rm_entry(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	if (type == FTW_DP)
		return rmdir(path) < 0 ? -1 : 0;
	return unlink(path) < 0 ? -1 : 0;
}

static void remove_tree(void)
{
	if (g.rootfd >= 0) {
		close(g.rootfd);
		g.rootfd = -1;
	}
	if (g.root[0] && nftw(g.root, rm_entry, 32, FTW_DEPTH | FTW_PHYS | FTW_MOUNT) != 0)
		fprintf(stderr, "bench: could not remove %s: %s\n", g.root, strerror(errno));
}

static const char *fs_name(int fd)
{
	struct statfs sfs;
	if (fstatfs(fd, &sfs) < 0)
		return "?";
	switch ((unsigned long)sfs.f_type) {
	case EXT4_SUPER_MAGIC:
		return "ext4";
	case TMPFS_MAGIC:
		return "tmpfs";
	case BTRFS_SUPER_MAGIC:
		return "btrfs";
	case XFS_SUPER_MAGIC:
		return "xfs";
	case OVERLAYFS_SUPER_MAGIC:
		return "overlayfs";
	default:
		return "other";
	}
}

/* ------------------------------------------------------------------ the operations */

/* Raw openat2(2), retried on EAGAIN as openat2(2) asks of its callers (with
 * ".." in a path, any rename on the system can cause one) and as the library
 * does: on a machine where others are compiling it happens. */
static long raw_openat2(const char *path, int flags, mode_t mode, uint64_t resolve)
{
	struct open_how how = { .flags = (uint64_t)(unsigned int)flags, .mode = mode,
				.resolve = resolve };
	long fd;
	int tries = 0;
	do
		fd = syscall(SYS_openat2, g.rootfd, path, &how, sizeof(how));
	while (fd < 0 && errno == EAGAIN && ++tries < 128);
	return fd;
}

/* The common unsafe pattern: canonicalise with realpath(), check the prefix,
 * open the canonical name (racy: the tree can change between the two). For a
 * creation the parent is canonicalised. */
static int realpath_open(const char *path, int flags, mode_t mode, bool create)
{
	char full[PATH_MAX], res[PATH_MAX];
	size_t len = strlen(path), cut = len;
	if (create)
		while (cut > 0 && path[cut - 1] != '/')
			cut--;
	if (g.rootlen + len + 2 > sizeof(full)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	memcpy(full, g.root, g.rootlen);
	full[g.rootlen] = '/';
	memcpy(full + g.rootlen + 1, path, cut);
	full[g.rootlen + 1 + cut] = '\0';
	if (!realpath(full, res))
		return -1;
	if (strncmp(res, g.root, g.rootlen) != 0 ||
	    (res[g.rootlen] != '\0' && res[g.rootlen] != '/')) {
		errno = EXDEV;
		return -1;
	}
	if (create) {
		size_t rl = strlen(res);
		if (rl + 1 + (len - cut) + 1 > sizeof(res)) {
			errno = ENAMETOOLONG;
			return -1;
		}
		res[rl] = '/';
		memcpy(res + rl + 1, path + cut, len - cut + 1);
	}
	return open(res, flags, mode);
}

static int op_open(int m, const struct shape *s, const char *path)
{
	int flags = (s->create ? O_WRONLY | O_CREAT | O_EXCL : O_RDONLY) | O_CLOEXEC;
	mode_t mode = s->create ? 0600 : 0;
	switch (m) {
	case M_OPENAT:
		return openat(g.rootfd, path, flags, mode);
	case M_REALPATH:
		return realpath_open(path, flags, mode, s->create);
	case M_O2_BENEATH:
		return (int)raw_openat2(path, flags, mode, RESOLVE_BENEATH);
	case M_O2_INROOT:
		return (int)raw_openat2(path, flags, mode, RESOLVE_IN_ROOT);
	default: {
		struct safe_open_how how = {
			.flags = (uint64_t)(unsigned int)flags,
			.mode = mode,
			.resolve = (s->in_root ? SAFE_RESOLVE_IN_ROOT : SAFE_RESOLVE_BENEATH) |
				   (m == M_WALK ? SAFE_RESOLVE_USERSPACE : 0),
		};
		return safe_openat2(g.rootfd, path, &how, sizeof(how));
	}
	}
}

/* The raw sequence: O_TMPFILE in the parent, fsetxattr, link the inode in. */
static int raw_tmpfile(const char *path, int nx)
{
	int fd = openat(g.rootfd, "tmp", O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	if (fd < 0)
		return -1;
	for (int i = 0; i < nx; i++)
		if (fsetxattr(fd, xattrs[i].name, xattrs[i].value, xattrs[i].size, 0) < 0)
			goto fail;
	if (linkat(fd, "", g.rootfd, path, AT_EMPTY_PATH) == 0)
		return fd;
	if (errno == ENOENT || errno == EPERM) {
		char proc[64];
		snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
		if (linkat(AT_FDCWD, proc, g.rootfd, path, AT_SYMLINK_FOLLOW) == 0)
			return fd;
	}
fail:
	close(fd);
	return -1;
}

/* The classic sequence: mkstemp beside the name, fsetxattr, rename. */
static int mkstemp_tmpfile(const char *path, int nx)
{
	char tmpl[PATH_MAX], final[PATH_MAX];
	if (snprintf(tmpl, sizeof(tmpl), "%s/tmp/.tmp.XXXXXX", g.root) >= (int)sizeof(tmpl) ||
	    snprintf(final, sizeof(final), "%s/%s", g.root, path) >= (int)sizeof(final)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	int fd = mkostemp(tmpl, O_CLOEXEC);
	if (fd < 0)
		return -1;
	for (int i = 0; i < nx; i++)
		if (fsetxattr(fd, xattrs[i].name, xattrs[i].value, xattrs[i].size, 0) < 0)
			goto fail;
	if (rename(tmpl, final) == 0)
		return fd;
fail:
	unlink(tmpl);
	close(fd);
	return -1;
}

static int op_tmp(int m, int nx, const char *path)
{
	switch (m) {
	case T_SAFE:
	case T_SAFE_FALLBACK:
		return safe_tmpfile_xattr(g.rootfd, path, 0600, nx ? xattrs : NULL, (size_t)nx,
					  m == T_SAFE ? 0 : SAFE_TMPFILE_NO_OTMPFILE);
	case T_RAW:
		return raw_tmpfile(path, nx);
	default:
		return mkstemp_tmpfile(path, nx);
	}
}

static bool cell_creates(const struct cell *c)
{
	return c->kind == K_TMP || c->shape->create;
}

/* A fresh name for a creating cell ("new/n..." or "tmp/t..."). */
static void fresh_name(const struct cell *c, char *buf, size_t n)
{
	if (c->kind == K_TMP)
		snprintf(buf, n, "tmp/t%08u", g.seq++);
	else
		snprintf(buf, n, "%sn%08u", c->shape->path, g.seq++);
}

static int cell_op(const struct cell *c, const char *path)
{
	if (c->kind == K_TMP)
		return op_tmp(c->method, c->nx, path);
	return op_open(c->method, c->shape, path);
}

/* ------------------------------------------------------------------ verification */

static int count_entries(const char *dir)
{
	int fd = openat(g.rootfd, dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	DIR *d = fdopendir(fd);
	if (!d) {
		close(fd);
		return -1;
	}
	int n = 0;
	for (struct dirent *e; (e = readdir(d));)
		if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
			n++;
	closedir(d);
	return n;
}

/* Check one result: fd (or -1 with err) for `path`. Returns true when right;
 * otherwise describes the problem in c->detail. */
static bool check_result(struct cell *c, const char *path, int fd, int err)
{
	const struct shape *s = c->kind == K_OPEN ? c->shape : NULL;
	const char *want = s ? (s->create ? path : s->expect) : path;
	struct stat got, exp;

	if (!want) { /* ENOENT expected */
		if (fd < 0 && err == ENOENT)
			return true;
		if (fd >= 0)
			snprintf(c->detail, sizeof(c->detail), "opened an object, ENOENT expected");
		else
			snprintf(c->detail, sizeof(c->detail), "%s, ENOENT expected", errname(err));
		return false;
	}
	if (fd < 0) {
		snprintf(c->detail, sizeof(c->detail), "%s, expected %.60s", errname(err), want);
		return false;
	}
	if (fstat(fd, &got) < 0 || fstatat(g.rootfd, want, &exp, AT_SYMLINK_NOFOLLOW) < 0) {
		snprintf(c->detail, sizeof(c->detail), "%.60s: cannot stat (%s)", want,
			 errname(errno));
		return false;
	}
	if (got.st_dev != exp.st_dev || got.st_ino != exp.st_ino || !S_ISREG(got.st_mode)) {
		snprintf(c->detail, sizeof(c->detail), "opened another object than %.60s", want);
		return false;
	}
	if (s && !s->create && (got.st_dev != s->dev || got.st_ino != s->ino)) {
		snprintf(c->detail, sizeof(c->detail), "%.60s changed during the run", want);
		return false;
	}
	if (c->kind == K_TMP) {
		char v[64];
		for (int i = 0; i < c->nx; i++) {
			ssize_t n = fgetxattr(fd, xattrs[i].name, v, sizeof(v));
			if (n != (ssize_t)xattrs[i].size || memcmp(v, xattrs[i].value, xattrs[i].size)) {
				snprintf(c->detail, sizeof(c->detail), "xattr %s missing or wrong",
					 xattrs[i].name);
				return false;
			}
		}
		int n = count_entries("tmp");
		if (n != 1) {
			snprintf(c->detail, sizeof(c->detail),
				 "%d entries in tmp/ after one creation (1 expected)", n);
			return false;
		}
	}
	return true;
}

/* Run the operation 1 + 8 times, each result checked; count the heap
 * allocations of the last 8. */
static void verify_cell(struct cell *c)
{
	enum { CALLS = 9 };
	unsigned long allocs = 0;
	char path[sizeof(shapes[0].path) + 16];

	c->st = ST_OK;
	c->allocs = -1;
	c->sys = -1;
	for (int i = 0; i < CALLS; i++) {
		if (cell_creates(c))
			fresh_name(c, path, sizeof(path));
		else
			snprintf(path, sizeof(path), "%s", c->shape->path);
		unsigned long a0 = allocs_now();
		int fd = cell_op(c, path);
		int err = errno;
		unsigned long a1 = allocs_now();
		if (i > 0)
			allocs += a1 - a0;
		bool ok = check_result(c, path, fd, err);
		if (fd >= 0)
			close(fd);
		if (cell_creates(c))
			unlinkat(g.rootfd, path, 0);
		if (ok)
			continue;
		if (fd < 0 && err == ENOSYS) {
			c->st = ST_NOSYS;
			snprintf(c->detail, sizeof(c->detail), "not implemented yet (ENOSYS)");
		} else if (c->kind == K_OPEN && c->shape->in_root && c->method == M_O2_BENEATH &&
			   fd < 0 && err == EXDEV) {
			c->st = ST_NA;
			snprintf(c->detail, sizeof(c->detail),
				 "EXDEV, as it must: BENEATH refuses an absolute symlink");
		} else if ((c->method == M_O2_BENEATH || c->method == M_O2_INROOT) && fd < 0 &&
			   err == EAGAIN) {
			/* openat2's ".." check fails on any rename anywhere on the
			 * system; under a parallel `make check` 128 retries can all
			 * lose. That is the kernel's limit, not a wrong answer. */
			c->st = ST_NA;
			snprintf(c->detail, sizeof(c->detail),
				 "EAGAIN after 128 retries: renames elsewhere on the system");
		} else {
			c->st = ST_WRONG;
		}
		return;
	}
	if (counting_allocs)
		c->allocs = (double)allocs / (CALLS - 1);
}

/* ------------------------------------------------------------------ timing */

/* Run n operations; return the nanoseconds spent in the timed part, or -1
 * if an operation gave an unexpected result (detail filled in). Creations are
 * timed in chunks; the files are removed between chunks, untimed. */
static double time_ops(struct cell *c, long n)
{
	double total = 0;
	if (!cell_creates(c)) {
		const char *path = c->shape->path;
		bool want_fd = c->shape->expect != NULL;
		double t0 = now_ns();
		for (long i = 0; i < n; i++) {
			int fd = cell_op(c, path);
			if (fd >= 0)
				close(fd);
			if ((fd >= 0) != want_fd) {
				snprintf(c->detail, sizeof(c->detail), "unexpected %s while timing",
					 fd >= 0 ? "success" : errname(errno));
				return -1;
			}
		}
		return now_ns() - t0;
	}
	static char names[CHUNK][48];
	for (long done = 0; done < n && !stop;) {
		long k = n - done < CHUNK ? n - done : CHUNK;
		for (long i = 0; i < k; i++)
			fresh_name(c, names[i], sizeof(names[i]));
		long i = 0;
		double t0 = now_ns();
		for (; i < k; i++) {
			int fd = cell_op(c, names[i]);
			if (fd < 0)
				break;
			close(fd);
		}
		total += now_ns() - t0;
		int err = errno;
		for (long j = 0; j < i; j++)
			unlinkat(g.rootfd, names[j], 0);
		if (i < k) {
			snprintf(c->detail, sizeof(c->detail), "%s while timing", errname(err));
			return -1;
		}
		done += k;
	}
	return total;
}

/* Size a batch to about g.batch_ns; these runs are the warm-up. */
static int calibrate(struct cell *c)
{
	long n = 1;
	double t;
	for (;;) {
		t = time_ops(c, n);
		if (t < 0)
			return -1;
		if (stop || t >= g.batch_ns / 4 || n >= (1L << 30))
			break;
		n *= t < g.batch_ns / 64 ? 8 : 2;
	}
	double ops = (double)n * g.batch_ns / (t > 0 ? t : 1);
	c->ops = ops < 1 ? 1 : (long)ops;
	return 0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static double median(const double *v, int n, double *min, double *max)
{
	double s[MAX_BATCHES];
	memcpy(s, v, (size_t)n * sizeof(*v));
	qsort(s, (size_t)n, sizeof(*s), cmp_double);
	if (min)
		*min = s[0];
	if (max)
		*max = s[n - 1];
	return n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
}

/* Verify and (unless --verify-only) time one row of cells, interleaved. */
static void measure_row(struct cell *cells, int n)
{
	for (int m = 0; m < n; m++)
		verify_cell(&cells[m]);
	if (g.verify_only)
		return;
	for (int m = 0; m < n && !stop; m++)
		if (cells[m].st == ST_OK && calibrate(&cells[m]) < 0)
			cells[m].st = ST_FAIL;
	for (int b = 0; b < g.batches && !stop; b++) {
		for (int k = 0; k < n && !stop; k++) {
			struct cell *c = &cells[(b + k) % n];
			if (c->st != ST_OK)
				continue;
			double t = time_ops(c, c->ops);
			if (t < 0) {
				c->st = ST_FAIL;
				continue;
			}
			c->ns[c->nb++] = t / (double)c->ops;
		}
	}
	for (int m = 0; m < n; m++) {
		struct cell *c = &cells[m];
		if (c->st == ST_OK && c->nb > 0)
			c->med = median(c->ns, c->nb, &c->min, &c->max);
		else if (c->st == ST_OK)
			c->st = ST_FAIL;
	}
}

/* Median (and range) of the per-round ratios a/b; false if not comparable. */
static bool ratio(const struct cell *a, const struct cell *b, double *r, double *lo, double *hi)
{
	if (a->st != ST_OK || b->st != ST_OK || a->nb == 0 || a->nb != b->nb)
		return false;
	double v[MAX_BATCHES] = { 0 };
	for (int i = 0; i < a->nb; i++)
		v[i] = a->ns[i] / b->ns[i];
	double mn, mx;
	*r = median(v, a->nb, &mn, &mx);
	if (lo)
		*lo = mn;
	if (hi)
		*hi = mx;
	return true;
}

/* ------------------------------------------------------------------ syscall counting (strace) */

enum { PROBE_CALLS = 8 };

struct sysname {
	char name[24];
	int n;
};

/* Child side: redo the cell's operation PROBE_CALLS times between two marker
 * syscalls, after two warm-up calls (the library's one-time probes, lazy
 * binding). */
static int probe_child(struct cell *c)
{
	char names[PROBE_CALLS][48];
	char path[sizeof(shapes[0].path) + 16];
	for (int i = 0; i < 2; i++) {
		if (cell_creates(c))
			fresh_name(c, path, sizeof(path));
		else
			snprintf(path, sizeof(path), "%s", c->shape->path);
		int fd = cell_op(c, path);
		if (fd >= 0)
			close(fd);
		if (cell_creates(c))
			unlinkat(g.rootfd, path, 0);
	}
	for (int i = 0; i < PROBE_CALLS; i++) {
		if (cell_creates(c))
			fresh_name(c, names[i], sizeof(names[i]));
		else
			snprintf(names[i], sizeof(names[i]), "%s", "");
	}
	(void)access("/@safeopen-bench-begin", F_OK);
	for (int i = 0; i < PROBE_CALLS; i++) {
		int fd = cell_op(c, cell_creates(c) ? names[i] : c->shape->path);
		if (fd >= 0)
			close(fd);
	}
	(void)access("/@safeopen-bench-end", F_OK);
	if (cell_creates(c))
		for (int i = 0; i < PROBE_CALLS; i++)
			unlinkat(g.rootfd, names[i], 0);
	return 0;
}

/* Parent side: run the child under strace, count the syscalls between the
 * markers. */
static void count_syscalls(struct cell *c, int kind, int row)
{
	char out[PATH_MAX], a_kind[16], a_method[16], a_row[16];
	if (snprintf(out, sizeof(out), "%s/strace.out", g.root) >= (int)sizeof(out))
		return;
	snprintf(a_kind, sizeof(a_kind), "%d", kind);
	snprintf(a_method, sizeof(a_method), "%d", c->method);
	snprintf(a_row, sizeof(a_row), "%d", row);
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0)
		return;
	if (pid == 0) {
		int devnull = open("/dev/null", O_WRONLY | O_CLOEXEC);
		if (devnull >= 0) {
			dup2(devnull, 1);
			dup2(devnull, 2);
		}
		execlp("strace", "strace", "-f", "-qq", "-o", out, "--", g.exe, "--probe", a_kind,
		       a_method, a_row, g.root, (char *)NULL);
		_exit(127);
	}
	int status;
	if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		snprintf(c->sysdetail, sizeof(c->sysdetail), "strace failed");
		unlink(out);
		return;
	}
	FILE *f = fopen(out, "re");
	if (!f)
		return;
	struct sysname tab[16];
	int ntab = 0, total = 0;
	bool in = false, done = false;
	char line[4096];
	while (!done && fgets(line, sizeof(line), f)) {
		if (strstr(line, "@safeopen-bench-begin")) {
			in = true;
			continue;
		}
		if (strstr(line, "@safeopen-bench-end")) {
			done = true;
			continue;
		}
		const char *p = line;
		while (*p >= '0' && *p <= '9')
			p++;
		while (*p == ' ')
			p++;
		if (!in || *p == '+' || *p == '-' || *p == '<')
			continue;
		size_t len = strspn(p, "abcdefghijklmnopqrstuvwxyz0123456789_");
		if (len == 0 || p[len] != '(')
			continue;
		total++;
		int i;
		for (i = 0; i < ntab; i++)
			if (strlen(tab[i].name) == len && !strncmp(tab[i].name, p, len))
				break;
		if (i == ntab && ntab < 16 && len < sizeof(tab[0].name)) {
			memcpy(tab[ntab].name, p, len);
			tab[ntab].name[len] = '\0';
			tab[ntab++].n = 0;
		}
		if (i < ntab)
			tab[i].n++;
	}
	fclose(f);
	unlink(out);
	if (!done)
		return;
	c->sys = (double)total / PROBE_CALLS;
	size_t used = 0;
	c->sysdetail[0] = '\0';
	for (int i = 0; i < ntab && used < sizeof(c->sysdetail); i++) {
		double per = (double)tab[i].n / PROBE_CALLS;
		int w = snprintf(c->sysdetail + used, sizeof(c->sysdetail) - used, "%s%s %g",
				 i ? ", " : "", tab[i].name, per);
		if (w < 0)
			break;
		used += (size_t)w;
	}
}

/* ------------------------------------------------------------------ output */

static void cell_text(const struct cell *c, char *buf, size_t n)
{
	switch (c->st) {
	case ST_OK:
		if (g.verify_only || c->nb == 0) {
			snprintf(buf, n, "ok");
		} else {
			double d1 = c->med - c->min, d2 = c->max - c->med;
			double sp = 100 * (d1 > d2 ? d1 : d2) / c->med;
			snprintf(buf, n, "%.0f ±%.0f%%", c->med, sp);
		}
		return;
	case ST_WRONG:
		snprintf(buf, n, "WRONG");
		return;
	case ST_NOSYS:
		snprintf(buf, n, "ENOSYS");
		return;
	case ST_NA:
		snprintf(buf, n, "n/a");
		return;
	case ST_FAIL:
		snprintf(buf, n, "FAILED");
		return;
	case ST_SKIP:
		snprintf(buf, n, "-");
		return;
	}
}

/* printf("%-*s") pads by bytes; "±" is two bytes in UTF-8. */
static void print_cell(const struct cell *c, int width)
{
	char buf[64];
	cell_text(c, buf, sizeof(buf));
	int extra = strstr(buf, "±") ? 1 : 0;
	printf(" %*s", width + extra, buf);
}

static void print_ratio(const struct cell *a, const struct cell *b, int width)
{
	double r;
	if (ratio(a, b, &r, NULL, NULL))
		printf(" %*.2f", width, r);
	else
		printf(" %*s", width, "-");
}

/* The raw openat2 cell with the same scope as the library's cells. */
static const struct cell *o2_of(const struct cell *row)
{
	return &row[row[0].shape->in_root ? M_O2_INROOT : M_O2_BENEATH];
}

static void print_open_header(const char *first)
{
	printf("%-16s", first);
	for (int m = 0; m < NR_M; m++)
		printf(" %13s", m_head[m]);
	if (!g.verify_only)
		printf(" %7s %7s %7s", "fast/o2", "walk/o2", "walk/rp");
	printf("\n");
}

static void print_open_row(const char *label, const struct cell *row)
{
	printf("%-16s", label);
	for (int m = 0; m < NR_M; m++)
		print_cell(&row[m], 13);
	if (!g.verify_only) {
		print_ratio(&row[M_FAST], o2_of(row), 7);
		print_ratio(&row[M_WALK], o2_of(row), 7);
		print_ratio(&row[M_WALK], &row[M_REALPATH], 7);
	}
	printf("\n");
	fflush(stdout);
}

static void print_num(double v, int width)
{
	if (v < 0)
		printf(" %*s", width, "-");
	else
		printf(" %*g", width, v);
}

/* Every cell, in table order. */
#define NR_CELLS (NR_MAIN * NR_M + NR_XATTR_ROWS * NR_T + NR_DEPTH * NR_M)
static int all_cells(struct cell **all)
{
	int n = 0;
	for (int r = 0; r < NR_MAIN; r++)
		for (int m = 0; m < NR_M; m++)
			all[n++] = &main_cells[r][m];
	for (int r = 0; r < NR_XATTR_ROWS; r++)
		for (int m = 0; m < NR_T; m++)
			all[n++] = &tmp_cells[r][m];
	for (int r = 0; r < NR_DEPTH; r++)
		for (int m = 0; m < NR_M; m++)
			all[n++] = &depth_cells[r][m];
	return n;
}

static const char *cell_where(const struct cell *c, char *buf, size_t n)
{
	if (c->kind == K_TMP)
		snprintf(buf, n, "%d xattrs", c->nx);
	else
		snprintf(buf, n, "%s", c->shape->label);
	return buf;
}

static const char *cell_method(const struct cell *c)
{
	return c->kind == K_TMP ? t_key[c->method] : m_key[c->method];
}

static void print_details(void)
{
	struct cell *all[NR_CELLS];
	int n = all_cells(all);
	bool any = false;
	for (int i = 0; i < n; i++) {
		struct cell *c = all[i];
		if (c->st == ST_OK || c->st == ST_SKIP)
			continue;
		if (!any)
			printf("\nCells without a number:\n");
		any = true;
		char where[48], text[64];
		cell_text(c, text, sizeof(text));
		printf("  %-16s %-15s %-7s %s%s\n", cell_where(c, where, sizeof(where)),
		       cell_method(c), text, c->detail,
		       c->expected_wrong ? " (expected: an unsafe method cannot resolve IN_ROOT)"
					 : "");
	}
}

static int count_failures(void)
{
	struct cell *all[NR_CELLS];
	int n = all_cells(all), bad = 0;
	for (int i = 0; i < n; i++) {
		const struct cell *c = all[i];
		if ((c->st == ST_WRONG && !c->expected_wrong) || c->st == ST_FAIL ||
		    (c->st == ST_NOSYS && !g.allow_enosys))
			bad++;
	}
	return bad;
}

/* Least-squares line ns = a + b * components over the depth rows. */
static void print_linearity(void)
{
	printf("linear fit over depths 1..%d, ns = a + b * components:\n", MAX_DEPTH);
	for (int m = 0; m < NR_M; m++) {
		double sx = 0, sy = 0, sxx = 0, sxy = 0, syy = 0;
		int n = 0;
		for (int r = 0; r < NR_DEPTH; r++) {
			const struct cell *c = &depth_cells[r][m];
			if (c->st != ST_OK || c->nb == 0)
				continue;
			double x = shapes[NR_MAIN + r].components, y = c->med;
			sx += x;
			sy += y;
			sxx += x * x;
			sxy += x * y;
			syy += y * y;
			n++;
		}
		if (n < 3) {
			printf("  %-16s -\n", m_key[m]);
			continue;
		}
		double den = n * sxx - sx * sx, num = n * sxy - sx * sy;
		double b = num / den, a = (sy - b * sx) / n;
		double r2 = num * num / (den * (n * syy - sy * sy));
		printf("  %-16s a = %7.0f ns  b = %6.1f ns/component  R^2 = %.4f\n", m_key[m], a,
		       b, r2);
	}
	/* Linear means a constant marginal cost per added component. */
	printf("marginal cost per added component, (t(2n) - t(n)) / n, for n = 1, 2, 4, ... 128:\n");
	for (int m = 0; m < NR_M; m++) {
		printf("  %-16s", m_key[m]);
		for (int r = 1; r < NR_DEPTH; r++) {
			const struct cell *a = &depth_cells[r - 1][m], *b = &depth_cells[r][m];
			if (a->st != ST_OK || b->st != ST_OK || !a->nb || !b->nb) {
				printf(" %6s", "-");
				continue;
			}
			double n = shapes[NR_MAIN + r - 1].components;
			printf(" %6.0f", (b->med - a->med) / n);
		}
		printf("\n");
	}
}

static void print_allocs(void)
{
	printf("\nHeap allocations per call (malloc, calloc, realloc, memalign interposed;"
	       " 8 calls after 1 warm-up)%s\n",
	       counting_allocs     ? ""
	       : BENCH_COUNT_ALLOCS ? ": NOT COUNTED, the interposition does not work"
				    : ": not counted in a sanitizer build");
	if (!counting_allocs)
		return;
	printf("%-16s", "shape");
	for (int m = 0; m < NR_M; m++)
		printf(" %13s", m_head[m]);
	printf("\n");
	for (int r = 0; r < NR_MAIN; r++) {
		printf("%-16s", shapes[r].label);
		for (int m = 0; m < NR_M; m++)
			print_num(main_cells[r][m].allocs, 13);
		printf("\n");
	}
	printf("%-16s", "depth 1..256 max");
	for (int m = 0; m < NR_M; m++) {
		double mx = -1;
		for (int r = 0; r < NR_DEPTH; r++)
			if (depth_cells[r][m].allocs > mx)
				mx = depth_cells[r][m].allocs;
		print_num(mx, 13);
	}
	printf("\n%-16s", "tmpfile xattrs");
	for (int m = 0; m < NR_T; m++)
		printf(" %15s", t_head[m]);
	printf("\n");
	for (int r = 0; r < NR_XATTR_ROWS; r++) {
		printf("%-16d", xattr_rows[r]);
		for (int m = 0; m < NR_T; m++)
			print_num(tmp_cells[r][m].allocs, 15);
		printf("\n");
	}
}

static void run_syscall_counts(void)
{
	printf("\nSyscalls per call, close included (strace -f: %d calls between two marker "
	       "syscalls, after 2 warm-up calls)\n",
	       PROBE_CALLS);
	fflush(stdout);
	for (int r = 0; r < NR_SHAPES && !stop; r++) {
		struct cell *row = r < NR_MAIN ? main_cells[r] : depth_cells[r - NR_MAIN];
		for (int m = 0; m < NR_M && !stop; m++)
			if (row[m].st == ST_OK)
				count_syscalls(&row[m], 0, r);
	}
	for (int r = 0; r < NR_XATTR_ROWS && !stop; r++)
		for (int m = 0; m < NR_T && !stop; m++)
			if (tmp_cells[r][m].st == ST_OK)
				count_syscalls(&tmp_cells[r][m], 1, r);
	struct cell *all[NR_CELLS];
	int n = all_cells(all), counted = 0, tried = 0;
	const char *why = "no count";
	for (int i = 0; i < n; i++) {
		if (all[i]->st != ST_OK)
			continue;
		tried++;
		counted += all[i]->sys >= 0;
		if (all[i]->sysdetail[0] && all[i]->sys < 0)
			why = all[i]->sysdetail;
	}
	if (tried && !counted) {
		printf("  %s (is strace installed and ptrace allowed?)\n", why);
		return;
	}
	printf("%-16s", "shape");
	for (int m = 0; m < NR_M; m++)
		printf(" %13s", m_head[m]);
	printf("\n");
	for (int r = 0; r < NR_MAIN; r++) {
		printf("%-16s", shapes[r].label);
		for (int m = 0; m < NR_M; m++)
			print_num(main_cells[r][m].sys, 13);
		printf("\n");
	}
	printf("by syscall (walker; fast path only where its count differs from raw openat2):\n");
	for (int r = 0; r < NR_SHAPES; r++) {
		const struct cell *row = r < NR_MAIN ? main_cells[r] : depth_cells[r - NR_MAIN];
		for (int m = M_FAST; m <= M_WALK; m++) {
			const struct cell *c = &row[m];
			if (c->sys < 0 || (m == M_FAST && c->sys == o2_of(row)->sys))
				continue;
			printf("  %-16s %-12s %6g = %s\n", shapes[r].label, m_key[m], c->sys,
			       c->sysdetail);
		}
	}
	printf("tmpfile, by syscall:\n");
	for (int r = 0; r < NR_XATTR_ROWS; r++)
		for (int m = 0; m < NR_T; m++) {
			const struct cell *c = &tmp_cells[r][m];
			if (c->sys >= 0)
				printf("  %d xattrs %-15s %6g = %s\n", c->nx, t_key[m], c->sys,
				       c->sysdetail);
		}
}

/* ------------------------------------------------------------------ targets */

struct verdict {
	int met, missed, missing;
	size_t used;
	char fig[1400];
};

static void fig_add(struct verdict *v, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void fig_add(struct verdict *v, const char *fmt, ...)
{
	if (v->used >= sizeof(v->fig) - 1)
		return;
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(v->fig + v->used, sizeof(v->fig) - v->used, fmt, ap);
	va_end(ap);
	if (n > 0)
		v->used += (size_t)n;
	if (v->used > sizeof(v->fig) - 1)
		v->used = sizeof(v->fig) - 1;
}

/* One comparison: value q against the limit (q <= limit, or q < limit). */
static void judge(struct verdict *v, const char *what, bool have, double q, double lo,
		  double limit, bool strict, const char *extra)
{
	const char *sep = v->used ? "; " : "";
	if (!have) {
		v->missing++;
		fig_add(v, "%s%s -", sep, what);
		return;
	}
	bool ok = strict ? q < limit : q <= limit;
	if (ok)
		v->met++;
	else
		v->missed++;
	fig_add(v, "%s%s %.3f%s%s%s", sep, what, q, ok ? "" : " MISSED",
		!ok && lo <= limit ? " (within batch spread)" : "", extra ? extra : "");
}

static void print_figures(const char *what, const char *res, const struct verdict *v)
{
	printf("  %-58s %s\n", what, res);
	if (!v->used) {
		printf("      (nothing to compare)\n");
		return;
	}
	/* Wrap the figures at "; " to about 100 columns. */
	int col = 0;
	for (const char *p = v->fig; *p;) {
		const char *e = strstr(p, "; ");
		int len = e ? (int)(e - p) : (int)strlen(p);
		if (col && col + 2 + len > 94) {
			printf(";\n");
			col = 0;
		} else if (col) {
			printf("; ");
			col += 2;
		}
		if (!col)
			printf("      ");
		printf("%.*s", len, p);
		col += len;
		p += len + (e ? 2 : 0);
	}
	printf("\n");
}

static void target_line(const char *what, const struct verdict *v)
{
	const char *res = v->missed ? "MISSED"
			  : !v->met  ? "not evaluated"
			  : v->missing ? "incomplete"
				       : "met";
	print_figures(what, res, v);
	if (v->missing)
		printf("      (-: a cell has no number, see \"Cells without a number\")\n");
}

static void report_targets(void)
{
	struct verdict v;
	char extra[96];
	double q, lo;

	printf("\nTargets (reported, not asserted; ratio = median of per-round ratios):\n");

	/* 1. the fast path is one openat2 plus nothing */
	memset(&v, 0, sizeof(v));
	for (int r = 0; r < NR_MAIN; r++) {
		const struct cell *row = main_cells[r];
		bool have = ratio(&row[M_FAST], o2_of(row), &q, &lo, NULL);
		judge(&v, shapes[r].key, have, q, lo, 1.05, false, NULL);
	}
	target_line("safe_openat2 fast path / raw openat2 <= 1.05, every shape", &v);

	/* 2. the walker against the realpath pattern (where the pattern works) */
	memset(&v, 0, sizeof(v));
	for (int r = 0; r < NR_MAIN; r++) {
		const struct cell *row = main_cells[r];
		if (row[M_REALPATH].st != ST_OK)
			continue;
		bool have = ratio(&row[M_WALK], &row[M_REALPATH], &q, &lo, NULL);
		extra[0] = '\0';
		if (row[M_WALK].sys >= 0 && row[M_REALPATH].sys >= 0)
			snprintf(extra, sizeof(extra), " [%g vs %g syscalls]", row[M_WALK].sys,
				 row[M_REALPATH].sys);
		judge(&v, shapes[r].key, have, q, lo, 1.0, false, extra);
	}
	target_line("walker / realpath pattern <= 1.00, every shape it can do", &v);

	/* 2b. how far the walker is from openat2 (information, no limit) */
	memset(&v, 0, sizeof(v));
	for (int r = 0; r < NR_MAIN; r++) {
		const struct cell *row = main_cells[r];
		bool have = ratio(&row[M_WALK], o2_of(row), &q, NULL, NULL);
		fig_add(&v, "%s%s ", v.used ? "; " : "", shapes[r].key);
		if (have)
			fig_add(&v, "%.2f", q);
		else
			fig_add(&v, "-");
		if (row[M_WALK].sys >= 0 && o2_of(row)->sys >= 0)
			fig_add(&v, " [%g vs %g syscalls]", row[M_WALK].sys, o2_of(row)->sys);
	}
	print_figures("walker / raw openat2 (information, no target)", "", &v);

	/* 3. tmpfile: within 10% of the raw sequence; faster than mkstemp+rename */
	memset(&v, 0, sizeof(v));
	for (int r = 0; r < NR_XATTR_ROWS; r++) {
		const struct cell *row = tmp_cells[r];
		char what[32];
		snprintf(what, sizeof(what), "%d xattrs", xattr_rows[r]);
		bool have = ratio(&row[T_SAFE], &row[T_RAW], &q, &lo, NULL);
		extra[0] = '\0';
		if (row[T_SAFE].sys >= 0 && row[T_RAW].sys >= 0)
			snprintf(extra, sizeof(extra), " [%g vs %g syscalls]", row[T_SAFE].sys,
				 row[T_RAW].sys);
		judge(&v, what, have, q, lo, 1.10, false, extra);
	}
	target_line("safe_tmpfile_xattr (O_TMPFILE) / raw sequence <= 1.10", &v);
	memset(&v, 0, sizeof(v));
	for (int r = 0; r < NR_XATTR_ROWS; r++) {
		const struct cell *row = tmp_cells[r];
		for (int m = T_SAFE; m <= T_SAFE_FALLBACK; m++) {
			char what[48];
			snprintf(what, sizeof(what), "%d xattrs %s", xattr_rows[r],
				 m == T_SAFE ? "O_TMPFILE" : "fallback");
			bool have = ratio(&row[m], &row[T_MKSTEMP], &q, &lo, NULL);
			judge(&v, what, have, q, lo, 1.0, true, NULL);
		}
	}
	target_line("safe_tmpfile_xattr / mkstemp+fsetxattr+rename < 1.00", &v);

	/* 4. no heap allocation in the resolver */
	memset(&v, 0, sizeof(v));
	double worst = 0;
	for (int r = 0; r < NR_MAIN + NR_DEPTH; r++) {
		const struct cell *row = r < NR_MAIN ? main_cells[r] : depth_cells[r - NR_MAIN];
		for (int m = M_FAST; m <= M_WALK; m++) {
			const struct cell *c = &row[m];
			if (c->allocs < 0) {
				v.missing++;
				continue;
			}
			if (c->allocs > 0) {
				v.missed++;
				fig_add(&v, "%s%s %s %g per call", v.used ? "; " : "", shapes[r].key,
					m_key[m], c->allocs);
			} else {
				v.met++;
			}
			if (c->allocs > worst)
				worst = c->allocs;
		}
	}
	if (!v.used && v.met)
		fig_add(&v, "0 allocations in %d of %d cells (fast path and walker, all shapes and "
			    "depths)", v.met, v.met + v.missing);
	else if (!v.used)
		fig_add(&v, "%s", BENCH_COUNT_ALLOCS ? "no cell counted"
						     : "not counted in a sanitizer build");
	target_line("zero heap allocations per safe_openat2 call", &v);
}

/* ------------------------------------------------------------------ CSV */

static void csv_cell(FILE *f, const char *section, const char *shape, int comps,
		     const char *method, const struct cell *c)
{
	static const char *const stname[] = { "ok",	"WRONG",  "ENOSYS",
					      "n/a", "FAILED", "skipped" };
	const char *pre = section;
	fprintf(f, "%s,%s,%d,%s,status,%s\n", pre, shape, comps, method, stname[c->st]);
	for (int b = 0; b < c->nb; b++)
		fprintf(f, "%s,%s,%d,%s,batch%d,%.2f\n", pre, shape, comps, method, b, c->ns[b]);
	if (c->st == ST_OK && c->nb > 0) {
		fprintf(f, "%s,%s,%d,%s,median,%.2f\n", pre, shape, comps, method, c->med);
		fprintf(f, "%s,%s,%d,%s,min,%.2f\n", pre, shape, comps, method, c->min);
		fprintf(f, "%s,%s,%d,%s,max,%.2f\n", pre, shape, comps, method, c->max);
		fprintf(f, "%s,%s,%d,%s,ops_per_batch,%ld\n", pre, shape, comps, method, c->ops);
	}
	if (c->allocs >= 0)
		fprintf(f, "%s,%s,%d,%s,allocs_per_call,%g\n", pre, shape, comps, method, c->allocs);
	if (c->sys >= 0)
		fprintf(f, "%s,%s,%d,%s,syscalls_per_call,%g\n", pre, shape, comps, method, c->sys);
}

static int write_csv(const char *file)
{
	FILE *f = fopen(file, "we");
	if (!f)
		return -1;
	fprintf(f, "section,shape,components,method,stat,value\n");
	for (int r = 0; r < NR_MAIN; r++)
		for (int m = 0; m < NR_M; m++)
			csv_cell(f, "shape", shapes[r].key, shapes[r].components, m_key[m],
				 &main_cells[r][m]);
	for (int r = 0; r < NR_XATTR_ROWS; r++) {
		char key[16];
		snprintf(key, sizeof(key), "xattrs%d", xattr_rows[r]);
		for (int m = 0; m < NR_T; m++)
			csv_cell(f, "tmpfile", key, xattr_rows[r], t_key[m], &tmp_cells[r][m]);
	}
	for (int r = 0; r < NR_DEPTH; r++) {
		const struct shape *s = &shapes[NR_MAIN + r];
		for (int m = 0; m < NR_M; m++)
			csv_cell(f, "depth", s->key, s->components, m_key[m], &depth_cells[r][m]);
	}
	return fclose(f) == 0 ? 0 : -1;
}

/* ------------------------------------------------------------------ mkdir -p (safe_mkdir_all_beneath) */

/*
 * safe_mkdir_all_beneath() of a new path of N components ("mkN/d/d/.../d"),
 * then of the same, now existing, path; on the openat2 fast path and on the
 * userspace walker (SAFE_RESOLVE_USERSPACE). Times are medians of a few runs
 * (the tree is removed, untimed, between runs); system calls are counted by
 * strace in a child (--probe-mkdir), between marker calls, and shown per
 * component: a constant figure across depths is the linear cost.
 */
enum { NR_MK_DEPTHS = 3, MK_RUNS = 7 };
static const int mk_depths[NR_MK_DEPTHS] = { 10, 100, 1000 };

struct mk_cell {
	double create_ms, exist_us; /* medians; < 0 unknown */
	long sys_create, sys_exist; /* totals for one call; < 0 unknown */
	int err;                    /* errno of a failed call, else 0 */
};
static struct mk_cell mk_cells[NR_MK_DEPTHS][2];

/* "mkN/d/.../d" with n components; malloc'd. */
static char *mk_path(int n)
{
	size_t len = 16 + (size_t)n * 2;
	char *p = malloc(len);
	if (!p)
		return NULL;
	int w = snprintf(p, len, "mk%d", n);
	for (int i = 1; i < n; i++) {
		p[w++] = '/';
		p[w++] = 'd';
	}
	p[w] = '\0';
	return p;
}

static int mk_call(const char *path, bool walker)
{
	int fd = safe_mkdir_all_beneath(g.rootfd, path, 0755, walker ? SAFE_RESOLVE_USERSPACE : 0);
	if (fd < 0)
		return errno;
	close(fd);
	return 0;
}

static void mk_remove(int n)
{
	char top[16];
	snprintf(top, sizeof(top), "mk%d", n);
	(void)safe_rmtree_beneath(g.rootfd, top, 0);
}

/* Child side (under strace): one creation and one call on the existing path,
 * each between markers, after a warm-up call (one-time probes, lazy binding). */
static int mk_probe_child(int n, bool walker)
{
	char *path = mk_path(n);
	if (!path)
		return 2;
	(void)mk_call("mkwarm/d", walker);
	(void)safe_rmtree_beneath(g.rootfd, "mkwarm", 0);
	mk_remove(n);
	(void)access("/@safeopen-bench-mk-create", F_OK);
	int e1 = mk_call(path, walker);
	(void)access("/@safeopen-bench-mk-exist", F_OK);
	int e2 = mk_call(path, walker);
	(void)access("/@safeopen-bench-mk-end", F_OK);
	mk_remove(n);
	free(path);
	return e1 || e2 ? 1 : 0;
}

/* Parent side: the syscalls of each phase of mk_probe_child(). */
static void mk_count(struct mk_cell *c, int n, bool walker)
{
	char out[PATH_MAX], a_n[16];
	if (snprintf(out, sizeof(out), "%s/strace-mk.out", g.root) >= (int)sizeof(out))
		return;
	snprintf(a_n, sizeof(a_n), "%d", n);
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0)
		return;
	if (pid == 0) {
		int devnull = open("/dev/null", O_WRONLY | O_CLOEXEC);
		if (devnull >= 0) {
			dup2(devnull, 1);
			dup2(devnull, 2);
		}
		execlp("strace", "strace", "-f", "-qq", "-o", out, "--", g.exe, "--probe-mkdir", a_n,
		       walker ? "1" : "0", g.root, (char *)NULL);
		_exit(127);
	}
	int status;
	bool ok = waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0;
	FILE *f = ok ? fopen(out, "re") : NULL;
	if (!f) {
		unlink(out);
		return;
	}
	long count[2] = { 0, 0 };
	int phase = -1;
	char line[4096];
	while (fgets(line, sizeof(line), f)) {
		if (strstr(line, "@safeopen-bench-mk-create")) {
			phase = 0;
			continue;
		}
		if (strstr(line, "@safeopen-bench-mk-exist")) {
			phase = 1;
			continue;
		}
		if (strstr(line, "@safeopen-bench-mk-end"))
			break;
		const char *p = line;
		while (*p >= '0' && *p <= '9')
			p++;
		while (*p == ' ')
			p++;
		if (phase < 0 || *p == '+' || *p == '-' || *p == '<')
			continue;
		size_t len = strspn(p, "abcdefghijklmnopqrstuvwxyz0123456789_");
		if (len > 0 && p[len] == '(')
			count[phase]++;
	}
	fclose(f);
	unlink(out);
	c->sys_create = count[0];
	c->sys_exist = count[1];
}

static void mk_measure(struct mk_cell *c, int n, bool walker)
{
	*c = (struct mk_cell){ .create_ms = -1, .exist_us = -1, .sys_create = -1, .sys_exist = -1 };
	char *path = mk_path(n);
	if (!path)
		return;
	int runs = g.quick ? 3 : MK_RUNS;
	double create[MK_RUNS], exist[MK_RUNS], lo, hi;
	mk_remove(n);
	for (int r = 0; r < runs && !stop; r++) {
		double t0 = now_ns();
		int e = mk_call(path, walker);
		double t1 = now_ns();
		int e2 = e ? e : mk_call(path, walker);
		double t2 = now_ns();
		mk_remove(n);
		if (e || e2) {
			c->err = e ? e : e2;
			free(path);
			return;
		}
		create[r] = (t1 - t0) / 1e6;
		exist[r] = (t2 - t1) / 1e3;
	}
	free(path);
	if (stop)
		return;
	c->create_ms = median(create, runs, &lo, &hi);
	c->exist_us = median(exist, runs, &lo, &hi);
	if (!g.no_strace)
		mk_count(c, n, walker);
}

static void print_mkdir_all_section(void)
{
	printf("\nmkdir -p: safe_mkdir_all_beneath() of a new path of N components, then of the "
	       "same existing path\n(median of %d runs; syscalls counted by strace, per call and "
	       "per component)\n",
	       g.quick ? 3 : MK_RUNS);
	printf("%-6s %-8s %11s %12s %9s %8s %12s %9s %8s\n", "N", "path", "create ms",
	       "us/component", "syscalls", "per comp", "existing us", "syscalls", "per comp");
	for (int d = 0; d < NR_MK_DEPTHS && !stop; d++) {
		for (int w = 0; w < 2 && !stop; w++) {
			struct mk_cell *c = &mk_cells[d][w];
			int n = mk_depths[d];
			mk_measure(c, n, w);
			printf("%-6d %-8s ", n, w ? "walker" : "openat2");
			if (c->err) {
				printf("failed: %s\n", strerror(c->err));
				continue;
			}
			printf("%11.3f %12.2f ", c->create_ms, c->create_ms * 1e3 / n);
			if (c->sys_create >= 0)
				printf("%9ld %8.2f ", c->sys_create, (double)c->sys_create / n);
			else
				printf("%9s %8s ", "-", "-");
			printf("%12.1f ", c->exist_us);
			if (c->sys_exist >= 0)
				printf("%9ld %8.2f", c->sys_exist, (double)c->sys_exist / n);
			else
				printf("%9s %8s", "-", "-");
			printf("\n");
			fflush(stdout);
		}
	}
}

/* ------------------------------------------------------------------ main */

static void print_tmpfile_section(void)
{
	printf("\nsafe_tmpfile_xattr: ns per create+close of tmp/NAME (unlink untimed)\n");
	printf("%-16s", "xattrs");
	for (int m = 0; m < NR_T; m++)
		printf(" %15s", t_head[m]);
	if (!g.verify_only)
		printf(" %8s %8s %8s", "safe/raw", "safe/mks", "fb/mks");
	printf("\n");
	for (int r = 0; r < NR_XATTR_ROWS && !stop; r++) {
		const struct cell *row = tmp_cells[r];
		measure_row(tmp_cells[r], NR_T);
		printf("%-16d", xattr_rows[r]);
		for (int m = 0; m < NR_T; m++)
			print_cell(&row[m], 15);
		if (!g.verify_only) {
			print_ratio(&row[T_SAFE], &row[T_RAW], 8);
			print_ratio(&row[T_SAFE], &row[T_MKSTEMP], 8);
			print_ratio(&row[T_SAFE_FALLBACK], &row[T_MKSTEMP], 8);
		}
		printf("\n");
		fflush(stdout);
	}
}

static void print_depth_section(void)
{
	printf("\nCost against depth: ns per open+close of d/d/.../f\n");
	print_open_header("components");
	for (int r = 0; r < NR_DEPTH && !stop; r++) {
		measure_row(depth_cells[r], NR_M);
		char label[16];
		snprintf(label, sizeof(label), "%d", shapes[NR_MAIN + r].components);
		print_open_row(label, depth_cells[r]);
	}
	if (!g.verify_only && !stop)
		print_linearity();
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: bench [--dir DIR] [--csv FILE] [--quick] [--verify-only] [--cpu N]\n"
		"             [--clock wall|cpu] [--batches N] [--batch-ms MS] [--no-strace]\n"
		"             [--only shapes|tmpfile|depth|mkdir] [--allow-enosys]\n"
		"  --dir DIR      build the test tree in DIR (default: the current directory;\n"
		"                 e.g. /dev/shm for tmpfs)\n"
		"  --csv FILE     write every figure (each batch, medians, allocations, syscalls)\n"
		"  --quick        short batches (2 ms): a smoke run, figures are rough\n"
		"  --verify-only  check that every method opens the right object; no timing;\n"
		"                 exit status 1 if a cell is wrong\n"
		"  --only S       run one section: shapes, tmpfile, depth or mkdir (mkdir -p)\n"
		"  --cpu N        pin to CPU N (sched_setaffinity)\n"
		"  --clock C      wall (default: CLOCK_MONOTONIC) or cpu (the thread's CPU time,\n"
		"                 user + system: leaves out the time other processes hold the\n"
		"                 CPU, and also I/O waits; for a busy machine)\n"
		"  --batches N    batches per cell (default 7, at least 7)\n"
		"  --batch-ms MS  length of a batch (default 100)\n"
		"  --no-strace    do not count syscalls with strace\n"
		"  --allow-enosys with --verify-only: a method not implemented yet is no failure\n");
}

static void init_cells(void)
{
	for (int r = 0; r < NR_MAIN + NR_DEPTH; r++) {
		struct cell *row = r < NR_MAIN ? main_cells[r] : depth_cells[r - NR_MAIN];
		for (int m = 0; m < NR_M; m++) {
			row[m] = (struct cell){ .kind = K_OPEN, .method = m, .shape = &shapes[r],
						.st = ST_SKIP, .allocs = -1, .sys = -1 };
			row[m].expected_wrong =
				shapes[r].in_root && (m == M_OPENAT || m == M_REALPATH);
		}
	}
	for (int r = 0; r < NR_XATTR_ROWS; r++)
		for (int m = 0; m < NR_T; m++)
			tmp_cells[r][m] = (struct cell){ .kind = K_TMP, .method = m,
							 .nx = xattr_rows[r], .st = ST_SKIP,
							 .allocs = -1, .sys = -1 };
}

static struct cell *probe_cell(int kind, int method, int row)
{
	if (kind == 0 && method < NR_M && row < NR_SHAPES)
		return row < NR_MAIN ? &main_cells[row][method] : &depth_cells[row - NR_MAIN][method];
	if (kind == 1 && method < NR_T && row < NR_XATTR_ROWS)
		return &tmp_cells[row][method];
	return NULL;
}

static int parse_int(const char *s, int min, int max, int *out)
{
	char *end;
	errno = 0;
	long v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < min || v > max)
		return -1;
	*out = (int)v;
	return 0;
}

int main(int argc, char **argv)
{
	int batch_ms = 100;
	bool batch_ms_set = false;

	init_shapes();
	init_cells();
	counting_allocs = alloc_counter_works();

	/* Child mode: --probe-mkdir N WALKER ROOT (under strace). */
	if (argc == 5 && !strcmp(argv[1], "--probe-mkdir")) {
		int n, walker;
		if (parse_int(argv[2], 1, 2000, &n) || parse_int(argv[3], 0, 1, &walker))
			return 2;
		snprintf(g.root, sizeof(g.root), "%s", argv[4]);
		g.rootfd = open(g.root, O_PATH | O_DIRECTORY | O_CLOEXEC);
		return g.rootfd < 0 ? 2 : mk_probe_child(n, walker);
	}

	/* Child mode: --probe KIND METHOD ROW ROOT (under strace). */
	if (argc == 6 && !strcmp(argv[1], "--probe")) {
		int kind, method, row;
		if (parse_int(argv[2], 0, 1, &kind) || parse_int(argv[3], 0, NR_M - 1, &method) ||
		    parse_int(argv[4], 0, NR_SHAPES - 1, &row))
			return 2;
		snprintf(g.root, sizeof(g.root), "%s", argv[5]);
		g.rootlen = strlen(g.root);
		g.seq = 90000000u;
		g.rootfd = open(g.root, O_PATH | O_DIRECTORY | O_CLOEXEC);
		struct cell *c = probe_cell(kind, method, row);
		if (g.rootfd < 0 || !c)
			return 2;
		return probe_child(c);
	}

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (!strcmp(a, "--quick")) {
			g.quick = true;
		} else if (!strcmp(a, "--verify-only")) {
			g.verify_only = true;
		} else if (!strcmp(a, "--allow-enosys")) {
			g.allow_enosys = true;
		} else if (!strcmp(a, "--no-strace")) {
			g.no_strace = true;
		} else if (!strcmp(a, "--dir") && v) {
			g.dir = v;
			i++;
		} else if (!strcmp(a, "--csv") && v) {
			g.csv = v;
			i++;
		} else if (!strcmp(a, "--cpu") && v && !parse_int(v, 0, CPU_SETSIZE - 1, &g.cpu)) {
			i++;
		} else if (!strcmp(a, "--only") && v) {
			g.only = !strcmp(v, "shapes")	 ? SEC_SHAPES
				 : !strcmp(v, "tmpfile") ? SEC_TMPFILE
				 : !strcmp(v, "depth")	 ? SEC_DEPTH
				 : !strcmp(v, "mkdir")	 ? SEC_MKDIR
							 : 0;
			if (!g.only) {
				usage(stderr);
				return 2;
			}
			i++;
		} else if (!strcmp(a, "--clock") && v && (!strcmp(v, "wall") || !strcmp(v, "cpu"))) {
			g.clock = !strcmp(v, "cpu") ? CLOCK_THREAD_CPUTIME_ID : CLOCK_MONOTONIC;
			i++;
		} else if (!strcmp(a, "--batches") && v &&
			   !parse_int(v, 7, MAX_BATCHES, &g.batches)) {
			i++;
		} else if (!strcmp(a, "--batch-ms") && v && !parse_int(v, 1, 10000, &batch_ms)) {
			batch_ms_set = true;
			i++;
		} else if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			usage(stdout);
			return 0;
		} else {
			usage(stderr);
			return 2;
		}
	}
	if (g.quick && !batch_ms_set)
		batch_ms = 2;
	g.batch_ns = batch_ms * 1e6;

	if (g.cpu >= 0) {
		cpu_set_t set;
		CPU_ZERO(&set);
		CPU_SET(g.cpu, &set);
		if (sched_setaffinity(0, sizeof(set), &set) < 0) {
			fprintf(stderr, "bench: --cpu %d: %s\n", g.cpu, strerror(errno));
			return 2;
		}
	}
	ssize_t el = readlink("/proc/self/exe", g.exe, sizeof(g.exe) - 1);
	if (el < 0)
		g.no_strace = true;
	else
		g.exe[el] = '\0';

	struct sigaction sa = { .sa_handler = on_signal };
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);

	char tmpl[PATH_MAX], canon[PATH_MAX];
	if (!realpath(g.dir, canon)) {
		fprintf(stderr, "bench: %s: %s\n", g.dir, strerror(errno));
		return 2;
	}
	int tl = snprintf(tmpl, sizeof(tmpl), "%s/safeopen-bench.XXXXXX", canon);
	if (tl >= (int)sizeof(tmpl) || !mkdtemp(tmpl) || !realpath(tmpl, g.root)) {
		if (tl >= (int)sizeof(tmpl))
			errno = ENAMETOOLONG;
		fprintf(stderr, "bench: cannot create a directory in %s: %s\n", canon,
			strerror(errno));
		return 2;
	}
	g.rootlen = strlen(g.root);
	g.rootfd = open(g.root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (g.rootfd < 0 || build_tree(g.rootfd) < 0) {
		fprintf(stderr, "bench: building the tree in %s: %s\n", g.root, strerror(errno));
		remove_tree();
		return 2;
	}
	for (int i = 0; i < NR_SHAPES; i++) {
		struct shape *s = &shapes[i];
		struct stat st;
		if (s->expect && fstatat(g.rootfd, s->expect, &st, AT_SYMLINK_NOFOLLOW) == 0) {
			s->dev = st.st_dev;
			s->ino = st.st_ino;
		}
	}

	double load[3] = { 0, 0, 0 };
	int nload = getloadavg(load, 3);
	printf("libsafeopen %s benchmark%s\n", safe_version(),
	       g.verify_only ? ": verification only (no timing)" : "");
	printf("tree: %s (%s)   cpu: %s%.0d   load average: %.2f%s\n", g.root,
	       fs_name(g.rootfd), g.cpu >= 0 ? "pinned to " : "not pinned", g.cpu >= 0 ? g.cpu : 0,
	       nload > 0 ? load[0] : -1.0, nload > 0 && load[0] > 1.0 ? " (busy machine: noisy)" : "");
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	if (!g.verify_only) {
		printf("cells: ns per open+close (%s), median of %d batches of ~%d ms after a "
		       "warm-up; ±: farthest batch from the median\nratios: medians of per-round "
		       "ratios (o2 = raw openat2 with the same scope as the library call)\n",
		       g.clock == CLOCK_MONOTONIC ? "wall clock" : "thread CPU time", g.batches,
		       batch_ms);
		if (nload > 0 && load[0] >= (double)ncpu && g.clock == CLOCK_MONOTONIC)
			printf("note: load average >= %ld CPUs: wall-clock figures include time spent "
			       "waiting for a CPU; --clock cpu leaves it out\n",
			       ncpu);
	}

	if (g.only & SEC_SHAPES) {
		printf("\n");
		print_open_header("shape");
	}
	for (int r = 0; r < NR_MAIN && !stop && (g.only & SEC_SHAPES); r++) {
		measure_row(main_cells[r], NR_M);
		print_open_row(shapes[r].label, main_cells[r]);
	}

	if (g.only & SEC_TMPFILE)
		print_tmpfile_section();
	if (g.only & SEC_DEPTH)
		print_depth_section();
	if ((g.only & SEC_MKDIR) && !g.verify_only)
		print_mkdir_all_section();

	print_allocs();
	if (!g.verify_only && !g.no_strace && !stop)
		run_syscall_counts();
	if (!g.verify_only && !stop)
		report_targets();
	print_details();

	int rc = 0;
	if (g.csv) {
		if (write_csv(g.csv) < 0) {
			fprintf(stderr, "bench: %s: %s\n", g.csv, strerror(errno));
			rc = 2;
		} else {
			printf("\nCSV: %s\n", g.csv);
		}
	}
	nload = getloadavg(load, 3);
	if (!g.verify_only && nload > 0)
		printf("load average at the end: %.2f\n", load[0]);
	remove_tree();
	if (stop)
		return 130;
	if (g.verify_only) {
		int bad = count_failures();
		printf("\nverify-only: %s (%d cell%s wrong)\n", bad ? "FAILED" : "all methods open "
		       "the right object", bad, bad == 1 ? "" : "s");
		if (bad)
			rc = 1;
	}
	return rc;
}
