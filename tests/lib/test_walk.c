/* SPDX-License-Identifier: MIT */
/*
 * Suite "walk": safe_walk_open/next/skip/close.
 *
 *  - rows: the walk against a plain fd-relative walk (openat O_NOFOLLOW,
 *    readdir) of a quiet tree: same entries, same order, same types, every
 *    (dirfd, name) naming the entry reported;
 *  - the API's errors, skip(), a start that is a link, a file, the root;
 *  - the defences, deterministically: a directory moved out of the root while
 *    the walk is inside it, a level replaced before the walk re-descends to
 *    it, a mount (private mount namespace);
 *  - 10,000 levels deep (descriptors bounded under RLIMIT_NOFILE, opens
 *    and names walked again linear), 10,000 wide (100,000 under check-long);
 *  - races: an attacker thread exchanging a directory with a link to
 *    outside, moving directories out of the root and back, removing and
 *    recreating directories (inode numbers reused) while walks chmod every
 *    entry: nothing outside changes, and the attacker's rounds are counted.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "fixture.h"
#include "safeopen.h"

#ifndef RENAME_EXCHANGE
#define RENAME_EXCHANGE (1 << 1)
#endif

/* ---------------------------------------------------------------- counting opens */

/* The library's openat() calls land here (the executable's definition
 * interposes on libc's): counted, then made as the system call. */
static atomic_long n_openat;

int openat(int dfd, const char *path, int flags, ...)
{
	mode_t mode = 0;
	if (flags & (O_CREAT | __O_TMPFILE)) {
		va_list ap;
		va_start(ap, flags);
		mode = va_arg(ap, mode_t);
		va_end(ap);
	}
	atomic_fetch_add(&n_openat, 1);
	return (int)syscall(SYS_openat, dfd, path, flags, mode);
}

/* The library's syscall() calls (openat2: so_openat2_fast()) land here too:
 * the openat2 calls and the names in their paths are counted (what a
 * re-descent's hop costs the kernel), then the call is made. */
static atomic_long n_openat2, n_hop_names;

long syscall(long nr, ...)
{
	va_list ap;
	va_start(ap, nr);
	long a[6];
	for (int i = 0; i < 6; i++)
		a[i] = va_arg(ap, long);
	va_end(ap);
	if (nr == SYS_openat2) {
		atomic_fetch_add(&n_openat2, 1);
		long names = 1;
		for (const char *p = (const char *)a[1]; p && *p; p++)
			names += *p == '/';
		atomic_fetch_add(&n_hop_names, names);
	}
	static long (*real)(long, ...);
	if (!real)
		real = (long (*)(long, ...))dlsym(RTLD_NEXT, "syscall");
	return real(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
}

/* ---------------------------------------------------------------- text buffers */

struct sbuf {
	char *s;
	size_t n, cap;
};

__attribute__((format(printf, 2, 3))) static void sb_add(struct sbuf *b, const char *fmt, ...)
{
	va_list ap;
	for (;;) {
		va_start(ap, fmt);
		int k = vsnprintf(b->s ? b->s + b->n : NULL, b->s ? b->cap - b->n : 0, fmt, ap);
		va_end(ap);
		FX_ASSERT(k >= 0, "vsnprintf %s", fmt);
		if (b->s && b->n + (size_t)k < b->cap) {
			b->n += (size_t)k;
			return;
		}
		b->cap = (b->cap + (size_t)k + 1) * 2;
		b->s = realloc(b->s, b->cap);
		ck_assert(b->s != NULL);
	}
}

static char type_char(unsigned int mode)
{
	switch (mode & S_IFMT) {
	case S_IFDIR: return 'd';
	case S_IFREG: return 'f';
	case S_IFLNK: return 'l';
	case S_IFIFO: return 'p';
	default: return '?';
	}
}

/* ---------------------------------------------------------------- the reference walk */

/* Pre-order, readdir order, "P"/"Q" (post) for directories, "L" otherwise. */
static void ref_walk(int dfd, const char *name, const char *path, bool post, struct sbuf *out)
{
	struct stat st;
	FX_ASSERT(fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0, "%s", path);
	if (!S_ISDIR(st.st_mode)) {
		sb_add(out, "L %c %s\n", type_char(st.st_mode), path);
		return;
	}
	sb_add(out, "P d %s\n", path);
	int fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	ck_assert(fd >= 0);
	DIR *d = fdopendir(fd);
	ck_assert(d != NULL);
	struct dirent *de;
	while ((de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		char *sub;
		FX_ASSERT(asprintf(&sub, "%s/%s", path, de->d_name) > 0, "out of memory");
		ref_walk(fd, de->d_name, sub, post, out);
		free(sub);
	}
	closedir(d);
	if (post)
		sb_add(out, "Q d %s\n", path);
}

/* The library's walk in the same format; checks each entry's (dirfd, name)
 * and fd on the way. Returns the number of entries. */
static long lib_walk(int root, const char *path, uint64_t flags, struct sbuf *out)
{
	struct safe_walk *w;
	ck_assert_msg(safe_walk_open(root, path, flags, &w) == 0, "%s: %s", path, strerror(errno));
	struct safe_walk_entry e;
	int r;
	long n = 0;
	while ((r = safe_walk_next(w, &e)) > 0) {
		n++;
		FX_ASSERT(e.error == 0, "%s: %s", e.path, strerror(e.error));
		char v = e.visit == SAFE_WALK_PRE ? 'P' : e.visit == SAFE_WALK_POST ? 'Q' : 'L';
		sb_add(out, "%c %c %s\n", v, type_char(e.stx->stx_mode), e.path);
		/* The entry is (dirfd, name). */
		struct stat st;
		FX_ASSERT(fstatat(e.dirfd, e.name, &st, AT_SYMLINK_NOFOLLOW) == 0, "%s", e.path);
		FX_ASSERT(st.st_ino == e.stx->stx_ino, "%s: dirfd/name is another object", e.path);
		if (e.visit != SAFE_WALK_LEAF) {
			struct stat fst;
			FX_ASSERT(fstat(e.fd, &fst) == 0 && fst.st_ino == st.st_ino, "%s", e.path);
		} else {
			FX_ASSERT(e.fd == -1, "%s: fd %d", e.path, e.fd);
		}
	}
	ck_assert_msg(r == 0, "next: %s", strerror(errno));
	safe_walk_close(w);
	return n;
}

static const char *const tree_spec[] = {
	"d a",        "f a/f1 one",  "f a/f2 two",     "d a/b",      "d a/b/c",
	"f a/b/c/x",  "d a/empty",   "l a/up ../..",   "l a/abs /etc", "l a/dir b",
	"p a/fifo",   "h a/hl a/f1", "d a/b/c/d",      "f a/b/c/d/y", "d e",
	"f top",      NULL,
};

START_TEST(data_rows)
{
	char *base = fx_mkdtemp("walk-rows");
	int root = open(base, O_PATH | O_DIRECTORY | O_CLOEXEC);
	ck_assert(root >= 0);
	fx_build(root, tree_spec);
	static const struct {
		const char *start;
		uint64_t flags;
	} rows[] = {
		{ ".", 0 },
		{ ".", SAFE_WALK_POSTORDER },
		{ ".", SAFE_WALK_NO_STAT },
		{ "a", SAFE_WALK_POSTORDER | SAFE_WALK_NO_STAT },
		{ "a/", SAFE_WALK_POSTORDER },
		{ "a/b/c", SAFE_RESOLVE_IN_ROOT },
		{ "a/dir", 0 },  /* a link: one entry, not followed */
		{ "top", 0 },    /* a file: one entry */
		{ "a/empty", SAFE_WALK_POSTORDER },
		{ "a/b/../b", SAFE_WALK_POSTORDER },
	};
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct sbuf want = { 0 }, got = { 0 };
		bool post = rows[i].flags & SAFE_WALK_POSTORDER;
		/* The reference starts from the start's parent and name. */
		const char *start = rows[i].start;
		char *copy = strdup(start);
		size_t len = strlen(copy);
		while (len > 1 && copy[len - 1] == '/')
			copy[--len] = '\0';
		char *slash = strrchr(copy, '/');
		int pfd = root;
		const char *name = copy;
		if (slash) {
			*slash = '\0';
			pfd = openat(root, copy, O_PATH | O_DIRECTORY | O_CLOEXEC);
			ck_assert(pfd >= 0);
			name = slash + 1;
			*slash = '/';
		}
		char *label = strdup(copy);
		if (slash)
			name = strrchr(copy, '/') + 1;
		ref_walk(pfd, name, label, post, &want);
		if (pfd != root)
			close(pfd);
		lib_walk(root, start, rows[i].flags, &got);
		ck_assert_msg(!strcmp(want.s, got.s), "row %zu (%s): want\n%s\ngot\n%s", i, start,
			      want.s, got.s);
		free(want.s);
		free(got.s);
		free(copy);
		free(label);
	}
	close(root);
	fx_rmtree(base);
	free(base);
}
END_TEST

/* safe_walk_open() refusals as named rows: each returns -1 with the errno
 * and sets *walk to NULL. */
struct walk_open_row {
	const char *name;
	const char *path;
	uint64_t flags;
	int err;
	bool no_out; /* walk (the out-parameter) NULL */
};

static const struct walk_open_row walk_open_refusals[] = {
	{ "an unknown flag bit", ".", 1ULL << 62, EINVAL, false },
	{ "BENEATH and IN_ROOT together", ".", SAFE_RESOLVE_BENEATH | SAFE_RESOLVE_IN_ROOT, EINVAL,
	  false },
	{ "a NULL path", NULL, 0, EFAULT, false },
	{ "a NULL out-parameter", ".", 0, EFAULT, true },
	{ "an empty path", "", 0, ENOENT, false },
	{ "a missing name", "nope", 0, ENOENT, false },
	{ "\"..\" escapes", "..", 0, EXDEV, false },
	{ "a link to outside on the way", "a/up/x", 0, EXDEV, false },
	{ "an absolute path", "/etc", 0, EXDEV, false },
	{ "a file with a trailing slash", "top/", 0, ENOTDIR, false },
	{ "a link to a directory: never followed", "a/dir/", 0, ENOTDIR, false },
};

START_TEST(api_errors)
{
	char *base = fx_mkdtemp("walk-api");
	int root = open(base, O_PATH | O_DIRECTORY | O_CLOEXEC);
	ck_assert(root >= 0);
	fx_build(root, tree_spec);
	struct safe_walk *w;
	for (size_t k = 0; k < sizeof(walk_open_refusals) / sizeof(walk_open_refusals[0]); k++) {
		const struct walk_open_row *r = &walk_open_refusals[k];
		w = (struct safe_walk *)1;
		errno = 0;
		int rc = safe_walk_open(root, r->path, r->flags, r->no_out ? NULL : &w);
		int e = errno;
		ck_assert_msg(rc == -1 && e == r->err && (r->no_out || w == NULL),
			      "walk_open row \"%s\" (%s): returned %d, got %s, want %s%s", r->name,
			      r->path ? r->path : "NULL", rc, strerrorname_np(e),
			      strerrorname_np(r->err),
			      !r->no_out && w ? ", *walk not NULL" : "");
	}
	ck_fails(safe_walk_next(NULL, NULL), EFAULT);
	ck_fails(safe_walk_skip(NULL), EFAULT);
	safe_walk_close(NULL);

	/* skip(): only right after a PRE; prunes it; with POSTORDER its POST
	 * still comes. */
	ck_ok(safe_walk_open(root, "a", SAFE_WALK_POSTORDER, &w));
	struct safe_walk_entry e;
	ck_fails(safe_walk_skip(w), EINVAL); /* nothing reported yet */
	int seen_b = 0, inside_b = 0, post_b = 0;
	while (safe_walk_next(w, &e) > 0) {
		if (!strcmp(e.path, "a/b") && e.visit == SAFE_WALK_PRE) {
			seen_b++;
			ck_ok(safe_walk_skip(w));
			ck_fails(safe_walk_skip(w), EINVAL);
		} else if (!strcmp(e.path, "a/b") && e.visit == SAFE_WALK_POST) {
			post_b++;
		} else if (!strncmp(e.path, "a/b/", 4)) {
			inside_b++;
		}
		if (e.visit == SAFE_WALK_LEAF)
			ck_fails(safe_walk_skip(w), EINVAL);
	}
	ck_assert_int_eq(seen_b, 1);
	ck_assert_int_eq(post_b, 1);
	ck_assert_int_eq(inside_b, 0);
	ck_assert_int_eq(safe_walk_next(w, &e), 0); /* the end stays the end */
	safe_walk_close(w);

	/* The root itself: reported as "." of itself. */
	ck_ok(safe_walk_open(root, ".", 0, &w));
	ck_assert_int_eq(safe_walk_next(w, &e), 1);
	ck_assert_str_eq(e.name, ".");
	ck_assert_uint_eq(e.visit, SAFE_WALK_PRE);
	ck_assert_uint_eq(e.depth, 0);
	safe_walk_close(w); /* closed in the middle */

	/* An unreadable directory: reported with EACCES, the walk goes on; with
	 * STOP_ON_ERROR it ends the walk. (Root reads it anyway.) */
	if (geteuid() != 0) {
		ck_ok(mkdirat(root, "locked", 0));
		int errs = 0, after = 0;
		ck_ok(safe_walk_open(root, ".", 0, &w));
		while (safe_walk_next(w, &e) > 0) {
			if (e.error) {
				ck_assert_int_eq(e.error, EACCES);
				ck_assert_str_eq(e.path, "./locked");
				ck_assert_uint_eq(e.visit, SAFE_WALK_LEAF);
				ck_assert(S_ISDIR(e.stx->stx_mode));
				errs++;
			} else if (errs) {
				after++;
			}
		}
		safe_walk_close(w);
		ck_assert_int_eq(errs, 1);
		ck_ok(safe_walk_open(root, ".", SAFE_WALK_STOP_ON_ERROR, &w));
		int r;
		while ((r = safe_walk_next(w, &e)) > 0)
			;
		ck_assert_int_eq(r, -1);
		ck_assert_int_eq(errno, EACCES);
		ck_fails(safe_walk_next(w, &e), EINVAL);
		safe_walk_close(w);
		ck_ok(unlinkat(root, "locked", AT_REMOVEDIR));
	}
	close(root);
	fx_rmtree(base);
	free(base);
}
END_TEST

/* ---------------------------------------------------------------- defences */

/* Walk until the entry `path` is reported; returns the walk. */
static struct safe_walk *walk_to(int root, const char *start, uint64_t flags, const char *path)
{
	struct safe_walk *w;
	ck_assert(safe_walk_open(root, start, flags, &w) == 0);
	struct safe_walk_entry e;
	while (safe_walk_next(w, &e) > 0)
		if (!strcmp(e.path, path))
			return w;
	ck_abort_msg("%s never reported", path);
	return NULL;
}

/* A directory moved out of the root while the walk is inside it: nothing
 * it contains after the move is reported, and the walk goes back to the
 * level it came from, not to the moved directory's new parent. */
START_TEST(moved_out)
{
	char *base = fx_mkdtemp("walk-moved");
	int b = open(base, O_PATH | O_DIRECTORY | O_CLOEXEC);
	static const char *const spec[] = {
		"d root",       "d root/t",         "d root/t/a",       "f root/t/a/inside",
		"f root/t/z1",  "f root/t/z2",      "d out",            "f out/victim",
		NULL,
	};
	fx_build(b, spec);
	/* Many names outside, so that a walk going on in out/ from t's
	 * position (hash order) would meet some of them; and in t, so that
	 * that position is not t's end. */
	for (int k = 0; k < 40; k++) {
		char z[64];
		snprintf(z, sizeof(z), "root/t/z%02d", k);
		int zf = openat(b, z, O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
		ck_assert(zf >= 0);
		close(zf);
	}
	for (int k = 0; k < 40; k++) {
		char f[64];
		snprintf(f, sizeof(f), "out/victim%02d", k);
		int v = openat(b, f, O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
		ck_assert(v >= 0);
		close(v);
	}
	int root = openat(b, "root", O_PATH | O_DIRECTORY | O_CLOEXEC);
	struct safe_walk *w = walk_to(root, "t", SAFE_WALK_POSTORDER, "t/a");
	ck_ok(renameat(b, "root/t/a", b, "out/a"));
	int fd = openat(b, "out/a/evil", O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
	ck_assert(fd >= 0);
	close(fd);
	struct safe_walk_entry e;
	int r, post_a = 0;
	while ((r = safe_walk_next(w, &e)) > 0) {
		ck_assert_msg(!strstr(e.path, "evil") && !strstr(e.path, "inside") &&
			      !strstr(e.path, "victim"),
			      "reported %s from outside the root", e.path);
		if (!strcmp(e.path, "t/a")) {
			ck_assert_uint_eq(e.visit, SAFE_WALK_POST);
			ck_assert_int_eq(e.error, EAGAIN);
			post_a++;
		}
	}
	ck_assert_int_eq(r, 0);
	ck_assert_int_eq(post_a, 1);
	safe_walk_close(w);
	close(root);
	close(b);
	fx_rmtree(base);
	free(base);
}
END_TEST

/* The path of d0/d1/.../d59 (deeper than the ring of held levels) in path,
 * each level made beneath root when `make`. */
static void level_chain(int root, char *path, size_t size, bool make)
{
	snprintf(path, size, "d0");
	for (int i = 0; i < 60; i++) {
		size_t n = strlen(path);
		if (i)
			snprintf(path + n, size - n, "/d%d", i);
		if (make)
			ck_ok(mkdirat(root, path, 0755));
	}
}

/* Level 3 replaced: renamed away, a new d3 made, the old d4 (and the rest
 * of the chain below it) moved into the new one. */
static int replace_level3(int root)
{
	if (renameat(root, "d0/d1/d2/d3", root, "old3") < 0 ||
	    mkdirat(root, "d0/d1/d2/d3", 0755) < 0)
		return -1;
	return renameat(root, "old3/d4", root, "d0/d1/d2/d3/d4");
}

/* A level the walk no longer holds is replaced (renamed away, a new one
 * with the same names made, the old level below it moved in): the walk does
 * not go on in the new one, and hands it to no entry as its parent (the
 * re-descent's identity check, lib/chain.c). */
START_TEST(replaced_level)
{
	char *base = fx_mkdtemp("walk-replaced");
	int root = open(base, O_PATH | O_DIRECTORY | O_CLOEXEC);
	char path[4096];
	level_chain(root, path, sizeof(path), true);
	/* Level 5 (d0/.../d5) gets files after its child, to be read later. */
	for (int k = 0; k < 30; k++) {
		char f[64];
		snprintf(f, sizeof(f), "d0/d1/d2/d3/d4/d5/later%02d", k);
		int fd = openat(root, f, O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
		close(fd);
	}
	/* The inode of each level, as first walked. */
	ino_t ino_at[61];
	{
		char p2[4096] = "d0";
		struct stat st;
		for (int i = 0; i < 60; i++) {
			ck_assert(fstatat(root, p2, &st, AT_SYMLINK_NOFOLLOW) == 0);
			ino_at[i] = st.st_ino;
			size_t n = strlen(p2);
			snprintf(p2 + n, sizeof(p2) - n, "/d%d", i + 1);
		}
	}
	struct safe_walk *w = walk_to(root, "d0", SAFE_WALK_POSTORDER, path);
	/* Replace level 3 by a new d3 that holds the old d4 (and the rest of
	 * the chain below it), and files of its own. */
	ck_ok(replace_level3(root));
	for (int k = 0; k < 30; k++) {
		char f[128];
		snprintf(f, sizeof(f), "d0/d1/d2/d3/new%02d", k);
		int fd = openat(root, f, O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
		close(fd);
	}
	struct safe_walk_entry e;
	int r, gaveup = 0, later = 0;
	while ((r = safe_walk_next(w, &e)) > 0) {
		ck_assert_msg(!strstr(e.path, "/new"), "reported %s of the replacement", e.path);
		/* A directory reported after its entries without an error is
		 * the one walked, not its replacement. */
		if (e.visit == SAFE_WALK_POST && !e.error) {
			struct stat st, old;
			ck_assert(fstat(e.fd, &st) == 0);
			ck_assert(fstatat(root, e.path, &old, AT_SYMLINK_NOFOLLOW) == 0 ||
				  errno == ENOENT);
			ck_assert_msg(st.st_ino == e.stx->stx_ino, "%s: fd and stat differ", e.path);
			ck_assert_msg(st.st_ino == ino_at[e.depth], "%s: reported the replacement",
				      e.path);
		}
		/* Nor is an entry reported without an error ever handed the
		 * replacement as its parent (the re-descent compares each level
		 * it reopens with the identity first walked: CHAIN_IDENTITY).
		 * An entry whose parent could not be held again (dirfd -1) carries
		 * an error, as the parent's own listing does. */
		ck_assert_msg(e.error || e.dirfd >= 0, "%s: no error and no dirfd", e.path);
		if (!e.error && e.depth > 0 && e.depth <= 60) {
			struct stat st;
			ck_assert(fstat(e.dirfd, &st) == 0);
			ck_assert_msg(st.st_ino == ino_at[e.depth - 1],
				      "%s: its dirfd is the replacement of its parent", e.path);
		}
		if (strstr(e.path, "/later"))
			later++;
		if (e.visit == SAFE_WALK_POST && e.error == EAGAIN)
			gaveup++;
	}
	ck_assert_int_eq(r, 0);
	ck_assert_msg(gaveup > 0, "no level was given up");
	(void)later; /* in old3 now: not reachable by its name */
	safe_walk_close(w);
	close(root);
	fx_rmtree(base);
	free(base);
}
END_TEST

static int max_fd(void);
static void make_chain(int root, const char *top, int depth, int file_every);

/* The same replacement with the fewest descriptors the walk works with: no
 * checkpoint can be held, so every climb re-descends from level 0 through
 * the replaced level 3 and fails there. An entry whose parent could not be
 * held again carries the error (its parent's listing ends with it too),
 * never a clean entry with dirfd -1. */
static int replaced_low_child(void *arg)
{
	int root = *(int *)arg;
	struct rlimit rl;
	rl.rlim_cur = rl.rlim_max = (rlim_t)(max_fd() + 6);
	if (!fx_under_valgrind())
		CHILD_CHECK(setrlimit(RLIMIT_NOFILE, &rl) == 0);
	char path[4096];
	level_chain(root, path, sizeof(path), false);
	struct safe_walk *w;
	CHILD_CHECK(safe_walk_open(root, "d0", SAFE_WALK_POSTORDER, &w) == 0);
	struct safe_walk_entry e;
	int r;
	while ((r = safe_walk_next(w, &e)) > 0 && strcmp(e.path, path))
		;
	CHILD_CHECK(r > 0, "%s never reported", path);
	CHILD_CHECK(replace_level3(root) == 0, "replace: %s", strerror(errno));
	int gaveup = 0, orphans = 0;
	while ((r = safe_walk_next(w, &e)) > 0) {
		CHILD_CHECK(e.error || e.dirfd >= 0, "%s: no error and no dirfd", e.path);
		orphans += e.dirfd < 0;
		gaveup += e.visit == SAFE_WALK_POST && e.error == EAGAIN;
	}
	CHILD_CHECK(r == 0, "next: %s", strerror(errno));
	CHILD_CHECK(gaveup > 0, "no level was given up");
	/* the case this checks happened: entries whose parent was not held */
	CHILD_CHECK(fx_under_valgrind() || orphans > 0, "every parent was held again");
	safe_walk_close(w);
	return 0;
}

START_TEST(replaced_level_low_fds)
{
	char *base = fx_mkdtemp("walk-replaced-low");
	int root = open(base, O_PATH | O_DIRECTORY | O_CLOEXEC);
	char path[4096];
	level_chain(root, path, sizeof(path), true);
	fx_run_child(replaced_low_child, &root, "walk of a replaced level under RLIMIT_NOFILE");
	close(root);
	fx_rmtree(base);
	free(base);
}
END_TEST

/* The re-hold of a ring with no descriptor to spare: a chain of 40 levels
 * (no checkpoint is kept that shallow), walked in post-order; at the post-order
 * visit of level 10 the descriptor table is filled, so the climb to level 9,
 * which holds levels 1..8 again, meets EMFILE on its first open and gives cur
 * back, then the level it just opened. Every entry is still reported, none with
 * an error, and the chain's invariants hold (asserted in the builds with
 * asserts on: the sanitizer builds aborted here when the ring's start did not
 * follow the levels given back while cur was reopened). */
static int rehold_child(void *arg)
{
	int root = *(int *)arg;
	struct rlimit rl;
	rl.rlim_cur = rl.rlim_max = (rlim_t)(max_fd() + 64);
	if (!fx_under_valgrind())
		CHILD_CHECK(setrlimit(RLIMIT_NOFILE, &rl) == 0);
	/* Under valgrind the limit is its own (it reserves descriptors above
	 * the one it reports): filled to that. */
	CHILD_CHECK(getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < 65536,
		    "a descriptor limit to fill: %s", strerror(errno));
	size_t room = (size_t)rl.rlim_cur + 1;
	int *held = malloc(room * sizeof(*held));
	CHILD_CHECK(held != NULL);
	struct safe_walk *w;
	CHILD_CHECK(safe_walk_open(root, "top", SAFE_WALK_POSTORDER, &w) == 0);
	struct safe_walk_entry e;
	size_t nheld = 0;
	int entries = 0, r;
	bool filled = false;
	while ((r = safe_walk_next(w, &e)) > 0) {
		entries++;
		CHILD_CHECK(!e.error, "%s: %s", e.path, strerror(e.error));
		while (nheld > 0)
			close(held[--nheld]);
		if (!filled && e.visit == SAFE_WALK_POST && e.depth == 10) {
			filled = true;
			int f;
			while (nheld < room && (f = dup(0)) >= 0)
				held[nheld++] = f;
			CHILD_CHECK(nheld < room && errno == EMFILE, "the table did not fill");
		}
	}
	while (nheld > 0)
		close(held[--nheld]);
	free(held);
	CHILD_CHECK(r == 0, "next: %s", strerror(errno));
	CHILD_CHECK(filled && entries == 2 * 41, "%d entries", entries);
	safe_walk_close(w);
	return 0;
}

/* A chain of `depth` levels below "top" (a file every `file_every`), walked
 * by `child` (given the root's descriptor) in a child process. */
static void on_chain(const char *tag, int depth, int file_every, int (*child)(void *),
		     const char *what)
{
	char *base = fx_mkdtemp(tag);
	int root = open(base, O_PATH | O_DIRECTORY | O_CLOEXEC);
	make_chain(root, "top", depth, file_every);
	fx_run_child(child, &root, what);
	close(root);
	fx_rmtree(base);
	free(base);
}

START_TEST(rehold_no_spare_fd)
{
	on_chain("walk-rehold", 40, 0, rehold_child, "re-hold with no spare descriptor");
}
END_TEST

/* Mounts, in a private mount namespace: with SAFE_WALK_XDEV a mount point is
 * reported and not entered; without, entered; a bind mount of an ancestor
 * below itself is not entered (ELOOP). */
static int xdev_child(void *arg)
{
	const char *base = arg;
	if (fx_enter_mount_ns() < 0)
		CHILD_SKIP("cannot enter a mount namespace: %s", strerror(errno));
	char m[4096], loop[4096];
	snprintf(m, sizeof(m), "%s/t/m", base);
	snprintf(loop, sizeof(loop), "%s/t/d/loop", base);
	if (mount("none", m, "tmpfs", 0, NULL) < 0)
		CHILD_SKIP("cannot mount tmpfs: %s", strerror(errno));
	int fd = open(m, O_RDONLY | O_DIRECTORY);
	CHILD_CHECK(fd >= 0);
	CHILD_CHECK(mkdirat(fd, "under", 0755) == 0);
	close(fd);
	char t[4096];
	snprintf(t, sizeof(t), "%s/t", base);
	CHILD_CHECK(mount(t, loop, NULL, MS_BIND, NULL) == 0);
	int root = open(base, O_PATH | O_DIRECTORY);
	CHILD_CHECK(root >= 0);
	for (int xdev = 0; xdev < 2; xdev++) {
		struct safe_walk *w;
		CHILD_CHECK(safe_walk_open(root, "t", xdev ? SAFE_WALK_XDEV : 0, &w) == 0);
		struct safe_walk_entry e;
		int mounts = 0, under = 0, loops = 0, r;
		while ((r = safe_walk_next(w, &e)) > 0) {
			if (e.visit == SAFE_WALK_MOUNT)
				mounts++;
			if (strstr(e.path, "/under"))
				under++;
			if (e.error == ELOOP)
				loops++;
			CHILD_CHECK(!strstr(e.path, "loop/d"), "%s: went round the loop", e.path);
		}
		CHILD_CHECK(r == 0);
		safe_walk_close(w);
		if (xdev) {
			CHILD_CHECK(mounts == 2 && under == 0, "xdev: %d mounts, %d under", mounts, under);
		} else {
			CHILD_CHECK(mounts == 0 && under == 1 && loops == 1,
				    "%d mounts, %d under, %d loops", mounts, under, loops);
		}
	}
	/* Without openat2 (ENOSYS, as before 5.6): the mount ids decide. */
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_openat2, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOSYS),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { .len = sizeof(f) / sizeof(f[0]), .filter = f };
	CHILD_CHECK(prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0);
	CHILD_CHECK(prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) == 0);
	struct safe_walk *w;
	CHILD_CHECK(safe_walk_open(root, "t", SAFE_WALK_XDEV, &w) == 0);
	struct safe_walk_entry e;
	int mounts = 0, under = 0, r;
	while ((r = safe_walk_next(w, &e)) > 0) {
		mounts += e.visit == SAFE_WALK_MOUNT;
		under += strstr(e.path, "/under") != NULL;
	}
	CHILD_CHECK(r == 0);
	safe_walk_close(w);
	CHILD_CHECK(mounts == 2 && under == 0, "xdev without openat2: %d mounts, %d under", mounts,
		    under);
	umount2(loop, MNT_DETACH);
	umount2(m, MNT_DETACH);
	return 0;
}

START_TEST(mounts)
{
	char *base = fx_mkdtemp("walk-mounts");
	int b = open(base, O_PATH | O_DIRECTORY | O_CLOEXEC);
	static const char *const spec[] = { "d t", "d t/m", "d t/d", "d t/d/loop", "f t/f", NULL };
	fx_build(b, spec);
	close(b);
	fx_run_child(xdev_child, base, "mounts");
	fx_rmtree(base);
	free(base);
}
END_TEST

/* ---------------------------------------------------------------- sizes */

static void make_chain(int root, const char *top, int depth, int file_every)
{
	int fd = openat(root, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	ck_ok(mkdirat(fd, top, 0755));
	int n = openat(fd, top, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	close(fd);
	fd = n;
	for (int i = 0; i < depth; i++) {
		FX_ASSERT(mkdirat(fd, "d", 0755) == 0, "level %d: %s", i, strerror(errno));
		if (file_every && i % file_every == 0) {
			int f = openat(fd, "f", O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
			ck_assert(f >= 0);
			close(f);
		}
		n = openat(fd, "d", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		FX_ASSERT(n >= 0, "level %d: %s", i, strerror(errno));
		close(fd);
		fd = n;
	}
	close(fd);
}

/* Highest descriptor number open now. */
static int max_fd(void)
{
	int m = -1;
	DIR *d = opendir("/proc/self/fd");
	if (!d)
		return -1;
	struct dirent *de;
	while ((de = readdir(d)))
		if (de->d_name[0] != '.' && atoi(de->d_name) != dirfd(d) && atoi(de->d_name) > m)
			m = atoi(de->d_name);
	closedir(d);
	return m;
}

/* 10,000 levels (1,500 at the quick size): every level and file reported
 * once, in order of depth;
 * at most 64 descriptors more than before whatever the depth; opens linear
 * in the levels (checkpoints). */
START_TEST(deep)
{
	char *base = fx_mkdtemp("walk-deep");
	int root = open(base, O_PATH | O_DIRECTORY | O_CLOEXEC);
	const int depth = (int)fx_size(1000, 10000, 1);
	make_chain(root, "top", depth, 100);
	int before = fx_fd_count();
	struct safe_walk *w;
	ck_ok(safe_walk_open(root, "top", SAFE_WALK_POSTORDER, &w));
	struct safe_walk_entry e;
	long pre = 0, post = 0, files = 0, n = 0;
	int peak = 0, r;
	atomic_store(&n_openat, 0);
	atomic_store(&n_openat2, 0);
	atomic_store(&n_hop_names, 0);
	size_t last_post_depth = (size_t)depth + 1;
	while ((r = safe_walk_next(w, &e)) > 0) {
		FX_ASSERT(e.error == 0, "%s: %s", e.path, strerror(e.error));
		if (e.visit == SAFE_WALK_PRE) {
			FX_ASSERT(e.depth == (size_t)pre, "pre %ld at depth %zu", pre, e.depth);
			pre++;
		}
		if (e.visit == SAFE_WALK_POST) {
			FX_ASSERT(e.depth == last_post_depth - 1, "post at depth %zu after %zu", e.depth,
				  last_post_depth);
			last_post_depth = e.depth;
			post++;
		}
		if (e.visit == SAFE_WALK_LEAF)
			files++;
		if (++n % 97 == 0) {
			int c = fx_fd_count() - before;
			if (c > peak)
				peak = c;
		}
	}
	long opens = atomic_load(&n_openat) + atomic_load(&n_openat2);
	long names = atomic_load(&n_openat) + atomic_load(&n_hop_names);
	ck_assert_int_eq(r, 0);
	safe_walk_close(w);
	ck_assert_int_eq(pre, depth + 1);
	ck_assert_int_eq(post, depth + 1);
	ck_assert_int_eq(files, depth / 100);
	ck_assert_msg(peak <= 64, "%d descriptors held", peak);
	/* One open per level on the way down; re-descents from checkpoints
	 * cost O(log4 depth) more per level, ~4.3 in all here (without
	 * checkpoints: ~depth^2/64, 16,000 at the quick size, 1.5 million
	 * at the big one). */
	ck_assert_msg(opens <= 6L * depth, "%ld opens for %d levels", opens, depth);
	/* The names the kernel walks for them (one per openat, those of the
	 * path of each openat2 hop): checkpoints keep the hops short, ~3.5
	 * per level in all here, 4.3 at the big size (without: ~depth^2/64,
	 * the WALK_CHECKPOINTS mutation: 16,600 at the quick size, twice the
	 * bound; at 600 levels only 6,091 for 4,800, so no smaller). */
	ck_assert_msg(names <= 8L * depth, "%ld names walked for %d levels", names, depth);
	fx_rmtree(base);
	close(root);
	free(base);
}
END_TEST

static int rlimit_child(void *arg)
{
	int root = *(int *)arg;
	/* The walk needs a handful of descriptors whatever the depth. */
	int low = max_fd() + 6;
	struct rlimit rl = { (rlim_t)low, (rlim_t)low };
	/* valgrind keeps its own descriptors under the limit: no limit there. */
	if (!fx_under_valgrind())
		CHILD_CHECK(setrlimit(RLIMIT_NOFILE, &rl) == 0);
	struct safe_walk *w;
	CHILD_CHECK(safe_walk_open(root, "top", SAFE_WALK_POSTORDER, &w) == 0);
	struct safe_walk_entry e;
	long pre = 0, post = 0;
	int r;
	while ((r = safe_walk_next(w, &e)) > 0) {
		CHILD_CHECK(e.error == 0, "%s: %s", e.path, strerror(e.error));
		pre += e.visit == SAFE_WALK_PRE;
		post += e.visit == SAFE_WALK_POST;
	}
	CHILD_CHECK(r == 0, "next: %s", strerror(errno));
	safe_walk_close(w);
	CHILD_CHECK(pre == 301 && post == 301, "%ld %ld", pre, post);
	return 0;
}

START_TEST(rlimit)
{
	on_chain("walk-rlimit", 300, 7, rlimit_child, "walk under RLIMIT_NOFILE");
}
END_TEST

START_TEST(wide)
{
	char *base = fx_mkdtemp("walk-wide");
	int root = open(base, O_PATH | O_DIRECTORY | O_CLOEXEC);
	long width = fx_size(3000, 100000, 10); /* 3 getdents batches at least */
	ck_ok(mkdirat(root, "w", 0755));
	int d = openat(root, "w", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	for (long i = 0; i < width; i++) {
		char name[32];
		snprintf(name, sizeof(name), "%s%06ld", i % 10 ? "f" : "d", i);
		if (i % 10)
			close(openat(d, name, O_CREAT | O_WRONLY | O_CLOEXEC, 0644));
		else
			ck_ok(mkdirat(d, name, 0755));
	}
	close(d);
	struct sbuf want = { 0 }, got = { 0 };
	ref_walk(root, "w", "w", true, &want);
	long n = lib_walk(root, "w", SAFE_WALK_POSTORDER | SAFE_WALK_NO_STAT, &got);
	ck_assert_int_eq(n, width + width / 10 + 2);
	ck_assert_msg(!strcmp(want.s, got.s), "wide: listings differ");
	free(want.s);
	free(got.s);
	close(root);
	fx_rmtree(base);
	free(base);
}
END_TEST

/* ---------------------------------------------------------------- races */

/* base/root/t/...: the tree walked; base/out: outside, with victims. */
struct race {
	int b;            /* base */
	atomic_bool stop;
	atomic_long rounds;
	int kind;
};

enum { RACE_SWAP, RACE_MOVE, RACE_REUSE };

static void *attacker(void *arg)
{
	struct race *r = arg;
	char name[64];
	while (!atomic_load(&r->stop)) {
		switch (r->kind) {
		case RACE_SWAP:
			/* root/t/s/dir <-> root/t/s/lnk (-> ../../../out) */
			if (syscall(SYS_renameat2, r->b, "root/t/s/dir", r->b, "root/t/s/lnk",
				    RENAME_EXCHANGE) == 0)
				atomic_fetch_add(&r->rounds, 1);
			break;
		case RACE_MOVE:
			/* root/t/m/a out into out/moved/, and back */
			if (renameat(r->b, "root/t/m/a", r->b, "out/moved/a") == 0) {
				atomic_fetch_add(&r->rounds, 1);
				(void)renameat(r->b, "out/moved/a", r->b, "root/t/m/a");
			}
			break;
		case RACE_REUSE:
			/* remove and recreate directories inside and outside, so
			 * that inode numbers are reused between them */
			for (int i = 0; i < 4; i++) {
				snprintf(name, sizeof(name), "root/t/r/x%d", i);
				if (unlinkat(r->b, name, AT_REMOVEDIR) == 0)
					atomic_fetch_add(&r->rounds, 1);
				(void)unlinkat(r->b, "out/reuse", AT_REMOVEDIR);
				(void)mkdirat(r->b, "out/reuse", 0777);
				(void)mkdirat(r->b, name, 0777);
			}
			break;
		}
	}
	return NULL;
}

static const char *const race_spec[] = {
	"d root",         "d root/t",        "d root/t/s",       "d root/t/s/dir",
	"f root/t/s/dir/mine", "l root/t/s/lnk ../../../out",    "d root/t/m",
	"d root/t/m/a",   "f root/t/m/a/mine", "d root/t/m/a/sub", "f root/t/m/a/sub/mine",
	"d root/t/r",     "d root/t/r/x0",   "d root/t/r/x1",    "d root/t/r/x2",
	"d root/t/r/x3",  "d out",           "f out/victim",     "d out/moved",
	"f out/moved/victim", "d out/sub",   "f out/sub/victim", "d out/reuse",
	NULL,
};

/* chmod every entry the way chmod -R does: a directory through its fd, any
 * other entry by its single name without following it. */
static long chmod_walk(int root)
{
	struct safe_walk *w;
	if (safe_walk_open(root, "t", 0, &w) < 0)
		return 0;
	struct safe_walk_entry e;
	long n = 0;
	while (safe_walk_next(w, &e) > 0) {
		if (e.error || S_ISLNK(e.stx->stx_mode))
			continue;
		if (e.fd >= 0)
			(void)fchmod(e.fd, 0700);
		else
			(void)safe_fchmodat_beneath(e.dirfd, e.name, 0600, 0);
		FX_ASSERT(!strstr(e.path, "victim"), "reached %s", e.path);
		n++;
	}
	safe_walk_close(w);
	return n;
}

/* Mode, owner and change time of the victims outside: any chmod, even to
 * the same mode, moves the change time. */
static char *victims(int b)
{
	static const char *const names[] = { "out/victim", "out/moved/victim", "out/sub",
					     "out/sub/victim" };
	struct sbuf s = { 0 };
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		struct stat st;
		ck_assert(fstatat(b, names[i], &st, AT_SYMLINK_NOFOLLOW) == 0);
		sb_add(&s, "%s %o %u:%u ctime=%lld.%09ld\n", names[i], (unsigned)st.st_mode,
		       (unsigned)st.st_uid, (unsigned)st.st_gid, (long long)st.st_ctim.tv_sec,
		       st.st_ctim.tv_nsec);
	}
	return s.s;
}

static void run_race(int kind)
{
	char *base = fx_mkdtemp("walk-race");
	int b = open(base, O_PATH | O_DIRECTORY | O_CLOEXEC);
	fx_build(b, race_spec);
	/* out/ and out/moved/ get and lose names from the attacker: their
	 * change times move by its renames, not by the walk. */
	char *before = victims(b);
	int root = openat(b, "root", O_PATH | O_DIRECTORY | O_CLOEXEC);
	struct race r = { .b = b, .kind = kind };
	pthread_t t;
	ck_assert(pthread_create(&t, NULL, attacker, &r) == 0);
	/* Under valgrind (one thread at a time) fewer rounds and walks. */
	bool vg = fx_under_valgrind();
	long min_rounds = vg ? 5 : 50, min_walks = vg ? 2 : 10;
	double end = fx_now() + (fx_long() ? 5.0 : 0.15);
	long walks = 0, entries = 0;
	while (fx_now() < end || atomic_load(&r.rounds) < min_rounds || walks < min_walks) {
		entries += chmod_walk(root);
		walks++;
		if (fx_now() > end + 60)
			break;
	}
	atomic_store(&r.stop, true);
	pthread_join(t, NULL);
	long rounds = atomic_load(&r.rounds);
	ck_assert_msg(rounds >= min_rounds, "the attacker ran %ld rounds only", rounds);
	ck_assert_msg(walks >= min_walks && entries > 0, "%ld walks, %ld entries", walks, entries);
	/* Put things back in place before comparing (a move may be halfway). */
	(void)renameat(b, "out/moved/a", b, "root/t/m/a");
	(void)mkdirat(b, "out/reuse", 0777);
	char *after = victims(b);
	ck_assert_msg(!strcmp(before, after), "outside changed:\n%s\n---\n%s", before, after);
	fprintf(stderr, "# race %d: %ld walks, %ld entries, %ld attacker rounds\n", kind, walks,
		entries, rounds);
	free(before);
	free(after);
	close(root);
	close(b);
	fx_rmtree(base);
	free(base);
}

START_TEST(race_swap_link)
{
	run_race(RACE_SWAP);
}
END_TEST

START_TEST(race_move_out)
{
	run_race(RACE_MOVE);
}
END_TEST

START_TEST(race_reuse)
{
	run_race(RACE_REUSE);
}
END_TEST

static Suite *walk_suite(void)
{
	Suite *s = suite_create("walk");
	TCase *tc = tcase_create("walk");
	tcase_set_timeout(tc, 300);
	tcase_add_checked_fixture(tc, fx_fd_setup, fx_fd_teardown);
	tcase_add_test(tc, data_rows);
	tcase_add_test(tc, api_errors);
	tcase_add_test(tc, moved_out);
	tcase_add_test(tc, replaced_level);
	tcase_add_test(tc, replaced_level_low_fds);
	tcase_add_test(tc, rehold_no_spare_fd);
	tcase_add_test(tc, mounts);
	tcase_add_test(tc, deep);
	tcase_add_test(tc, rlimit);
	tcase_add_test(tc, wide);
	tcase_add_test(tc, race_swap_link);
	tcase_add_test(tc, race_move_out);
	tcase_add_test(tc, race_reuse);
	suite_add_tcase(s, tc);
	return s;
}

FX_MAIN(walk_suite)
