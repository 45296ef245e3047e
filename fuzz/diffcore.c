/* SPDX-License-Identifier: MIT */
/*
 * Differential core: see diffcore.h. The kernel's openat2(2) is the oracle;
 * the library's default path and its userspace walker must return the same
 * object (st_dev/st_ino, access mode, O_PATH-ness) or the same errno, and a
 * creating open must create the same name with the same mode and leave
 * nothing else behind.
 */
#include "config.h"

#include "diffcore.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <linux/openat2.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "safeopen.h"

/* ---------------------------------------------------------------- PRNG (splitmix64) */

uint64_t dc_mix(uint64_t a, uint64_t b)
{
	uint64_t z = a ^ (b * 0x9e3779b97f4a7c15ULL) ^ 0x5851f42d4c957f2dULL;
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

uint64_t dc_next(struct dc_rng *r)
{
	uint64_t z = (r->s += 0x9e3779b97f4a7c15ULL);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

uint32_t dc_below(struct dc_rng *r, uint32_t n)
{
	return n ? (uint32_t)(dc_next(r) % n) : 0;
}

bool dc_chance(struct dc_rng *r, unsigned percent)
{
	return dc_below(r, 100) < percent;
}

/* ---------------------------------------------------------------- small helpers */

static void appendf(char *buf, size_t size, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void appendf(char *buf, size_t size, const char *fmt, ...)
{
	size_t off = strnlen(buf, size);
	if (off + 1 >= size)
		return;
	va_list ap;
	va_start(ap, fmt);
	(void)vsnprintf(buf + off, size - off, fmt, ap);
	va_end(ap);
}

/* snprintf without the truncation warnings: truncation is fine here. */
static void setf(char *buf, size_t size, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void setf(char *buf, size_t size, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	(void)vsnprintf(buf, size, fmt, ap);
	va_end(ap);
}

static void add_spec(struct dc_tree *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void add_spec(struct dc_tree *t, const char *fmt, ...)
{
	if (t->nspec >= DC_MAX_SPEC)
		return;
	va_list ap;
	va_start(ap, fmt);
	(void)vsnprintf(t->spec[t->nspec], DC_SPEC_LEN, fmt, ap);
	va_end(ap);
	t->nspec++;
}

static void add_name(struct dc_tree *t, const char *name)
{
	for (size_t i = 0; i < t->nnames; i++)
		if (!strcmp(t->names[i], name))
			return;
	if (t->nnames < DC_MAX_NAMES && strlen(name) < sizeof(t->names[0]))
		memcpy(t->names[t->nnames++], name, strlen(name) + 1);
}

static bool has_dotdot_component(const char *s)
{
	for (const char *p = s; (p = strstr(p, "..")) != NULL; p += 2) {
		bool start = p == s || p[-1] == '/';
		bool end = p[2] == '\0' || p[2] == '/';
		if (start && end)
			return true;
	}
	return false;
}

/* ---------------------------------------------------------------- tree generation */

/* Names for entries inside the root. Odd ones on purpose: "...", "..x", ".h". */
static const char *const inside_names[] = {
	"a", "b", "c", "d", "e", "f", "x", "y", "l", "m", "n", "...", "..x", ".h", "ab",
};
#define N_INSIDE_NAMES (sizeof(inside_names) / sizeof(inside_names[0]))

struct gen_ent {
	char path[200]; /* relative to root; "" is the root */
	char type;	/* 'd', 'f', 'l', 'p' */
	int depth;
};

struct gen {
	struct gen_ent ents[96];
	size_t n;
};

static bool gen_exists(const struct gen *g, const char *path)
{
	for (size_t i = 0; i < g->n; i++)
		if (!strcmp(g->ents[i].path, path))
			return true;
	return false;
}

/* A random directory entry (the root included) with depth < maxdepth. */
static const struct gen_ent *gen_pick_dir(const struct gen *g, struct dc_rng *r, int maxdepth)
{
	for (int tries = 0; tries < 32; tries++) {
		const struct gen_ent *e = &g->ents[dc_below(r, (uint32_t)g->n)];
		if (e->type == 'd' && e->depth < maxdepth)
			return e;
	}
	return &g->ents[0];
}

/* Add a new entry of type under a random directory; returns it or NULL. */
static struct gen_ent *gen_add(struct gen *g, struct dc_rng *r, char type)
{
	if (g->n >= sizeof(g->ents) / sizeof(g->ents[0]))
		return NULL;
	const struct gen_ent *parent = gen_pick_dir(g, r, 4);
	for (int tries = 0; tries < 8; tries++) {
		const char *name = inside_names[dc_below(r, N_INSIDE_NAMES)];
		char path[200];
		int w = snprintf(path, sizeof(path), "%s%s%s", parent->path,
				 *parent->path ? "/" : "", name);
		if (w < 0 || (size_t)w >= sizeof(path) || gen_exists(g, path))
			continue;
		struct gen_ent *e = &g->ents[g->n++];
		memcpy(e->path, path, (size_t)w + 1);
		e->type = type;
		e->depth = parent->depth + 1;
		return e;
	}
	return NULL;
}

static const char *const dir_modes[] = { "0755", "0755", "0755", "0777", "0711",
					 "0700", "0555", "0000", "0751" };

/* "../" repeated n times into buf. */
static void ups(char *buf, size_t size, int n)
{
	buf[0] = '\0';
	for (int i = 0; i < n; i++)
		appendf(buf, size, "../");
}

/* A random junk path of tree names, ".", "..", empty components. */
static void junk_path(const struct dc_tree *t, struct dc_rng *r, char *buf, size_t size)
{
	buf[0] = '\0';
	if (dc_chance(r, 10))
		appendf(buf, size, "/");
	int n = 1 + (int)dc_below(r, 4);
	for (int i = 0; i < n; i++) {
		if (i)
			appendf(buf, size, "/");
		uint32_t k = dc_below(r, 10);
		if (k < 6 && t->nnames)
			appendf(buf, size, "%s", t->names[dc_below(r, (uint32_t)t->nnames)]);
		else if (k < 8)
			appendf(buf, size, "..");
		else if (k < 9)
			appendf(buf, size, ".");
		else
			appendf(buf, size, "zz");
	}
	if (dc_chance(r, 10))
		appendf(buf, size, "/");
}

static void link_target(const struct dc_tree *t, const struct gen *g, struct dc_rng *r,
			const struct gen_ent *link, char *buf, size_t size)
{
	const struct gen_ent *e = &g->ents[dc_below(r, (uint32_t)g->n)];
	int up = link->depth - 1; /* how far the link's directory is below the root */
	char u[128];
	buf[0] = '\0';
	switch (dc_below(r, 12)) {
	case 0:
	case 1:
	case 2: /* relative, via the root, to an existing entry */
		ups(u, sizeof(u), up);
		appendf(buf, size, "%s%s", u, *e->path ? e->path : ".");
		if (e->type == 'd' && dc_chance(r, 20))
			appendf(buf, size, "/");
		break;
	case 3: /* same directory name (may be itself: a loop) */
		appendf(buf, size, "%s",
			strrchr(e->path, '/') ? strrchr(e->path, '/') + 1
					      : (*e->path ? e->path : "."));
		break;
	case 4:
	case 5: /* junk of tree names and dots */
		junk_path(t, r, buf, size);
		break;
	case 6: /* absolute, meaningful under IN_ROOT */
		appendf(buf, size, "/%s", e->path);
		if (dc_chance(r, 20))
			appendf(buf, size, "/..");
		break;
	case 7: { /* escape by climbing */
		static const char *const outside[] = { "out/a",	  "out/d",	 "out",	   "a",
						       "out/d/f", "root/../out", "out/up", "" };
		ups(u, sizeof(u), up + 1 + (int)dc_below(r, 2));
		appendf(buf, size, "%s%s", u, outside[dc_below(r, 8)]);
		break;
	}
	case 8: /* absolute real path outside */
		appendf(buf, size, "%s/%s", t->base, dc_chance(r, 50) ? "out/d" : "out/a");
		break;
	case 9: {
		static const char *const dots[] = { ".",	 "..",	"../..",  "./",
						    "..//.",	 "/",	"//..",	  "/..",
						    "/../../..", "./.", "../root" };
		appendf(buf, size, "%s", dots[dc_below(r, 11)]);
		break;
	}
	case 10: { /* procfs magic links through an absolute path */
		static const char *const procs[] = { "/proc/self/root", "/proc/self/cwd",
						     "/proc/self/fd/0", "/proc/self/exe",
						     "/proc/self" };
		appendf(buf, size, "%s", procs[dc_below(r, 5)]);
		break;
	}
	default: /* dangling */
		appendf(buf, size, "%s%s", dc_chance(r, 50) ? "nonexist" : "d/nonexist",
			dc_chance(r, 30) ? "/" : "");
		break;
	}
	if (!buf[0])
		appendf(buf, size, ".");
}

void dc_tree_generate(struct dc_tree *t, struct dc_rng *r, bool mounts)
{
	static struct gen g;
	char tgt[DC_SPEC_LEN - 220];

	t->nspec = 0;
	t->nnames = 0;
	t->dotdot_links = false;
	t->has_mounts = false;
	memset(&g, 0, sizeof(g));
	g.ents[0].type = 'd';
	g.n = 1;

	add_spec(t, "d root 0755");
	add_spec(t, "d out 0755");
	add_spec(t, "f out/a");
	add_spec(t, "d out/d 0755");
	add_spec(t, "f out/d/f");
	add_spec(t, "l out/up ../root");
	add_spec(t, "f a");
	for (size_t i = 0; i < N_INSIDE_NAMES; i++)
		if (dc_chance(r, 60))
			add_name(t, inside_names[i]);
	add_name(t, "a");
	add_name(t, "d");

	int ndirs = 1 + (int)dc_below(r, 7);
	int nfiles = 1 + (int)dc_below(r, 6);
	int nlinks = 2 + (int)dc_below(r, 10);
	char modes[96][8];
	for (int i = 0; i < ndirs; i++) {
		struct gen_ent *e = gen_add(&g, r, 'd');
		if (!e)
			continue;
		const char *mode = dc_chance(r, 75) ? "0755" : dir_modes[dc_below(r, 9)];
		memcpy(modes[e - g.ents], mode, strlen(mode) + 1);
	}
	for (int i = 0; i < nfiles; i++)
		(void)gen_add(&g, r, 'f');
	if (dc_chance(r, 15))
		(void)gen_add(&g, r, 'p');
	/* Directories first (created 0755, chmod'ed at the end), then files. */
	for (size_t i = 1; i < g.n; i++)
		if (g.ents[i].type == 'd')
			add_spec(t, "d root/%s 0755", g.ents[i].path);
	for (size_t i = 1; i < g.n; i++) {
		if (g.ents[i].type == 'f')
			add_spec(t, "f root/%s", g.ents[i].path);
		else if (g.ents[i].type == 'p')
			add_spec(t, "p root/%s", g.ents[i].path);
	}
	if (dc_chance(r, 20)) {
		const struct gen_ent *f = NULL;
		for (size_t i = 1; i < g.n; i++)
			if (g.ents[i].type == 'f')
				f = &g.ents[i];
		struct gen_ent *h = f ? gen_add(&g, r, 'f') : NULL;
		if (h)
			add_spec(t, "h root/%s root/%s", h->path, f->path);
	}
	for (int i = 0; i < nlinks; i++) {
		size_t before = g.n;
		struct gen_ent *l = gen_add(&g, r, 'l');
		if (!l)
			continue;
		g.n = before; /* targets are chosen among the entries made so far */
		link_target(t, &g, r, l, tgt, sizeof(tgt));
		g.n = before + 1;
		add_spec(t, "l root/%s %s", l->path, tgt);
		if (has_dotdot_component(tgt))
			t->dotdot_links = true;
	}
	if (dc_chance(r, 8)) {
		/* A chain of 38..42 links in the root: c0 -> c1 -> ... -> cN -> a
		 * target; the 41st followed link is ELOOP. */
		int len = 38 + (int)dc_below(r, 5);
		for (int i = 0; i < len; i++)
			add_spec(t, "l root/c%d c%d", i, i + 1);
		add_spec(t, "l root/c%d %s", len, dc_chance(r, 50) ? "." : "c0/c1");
		add_name(t, "c0");
		add_name(t, "c1");
	}
	for (size_t i = 1; i < g.n; i++)
		if (g.ents[i].type == 'd' && strcmp(modes[i], "0755"))
			add_spec(t, "c root/%s %s", g.ents[i].path, modes[i]);
	if (mounts && g.n > 1) {
		/* A tmpfs on one directory, a bind mount of out/d on another. */
		const struct gen_ent *m = NULL, *b = NULL;
		for (size_t i = 1; i < g.n; i++) {
			if (g.ents[i].type != 'd')
				continue;
			if (!m)
				m = &g.ents[i];
			else if (!b && strncmp(g.ents[i].path, m->path, strlen(m->path)))
				b = &g.ents[i];
		}
		if (m) {
			add_spec(t, "m root/%s", m->path);
			t->has_mounts = true;
			t->dotdot_links = true; /* the tmpfs holds "up -> .." */
			add_name(t, "up");
			add_name(t, "dd");
		}
		if (b) {
			add_spec(t, "b out/d root/%s", b->path);
			t->has_mounts = true;
		}
	}
	for (size_t i = 1; i < g.n; i++) {
		const char *slash = strrchr(g.ents[i].path, '/');
		add_name(t, slash ? slash + 1 : g.ents[i].path);
	}
}

void dc_tree_set_spec(struct dc_tree *t, const char *const *spec)
{
	t->nspec = 0;
	t->nnames = 0;
	t->dotdot_links = false;
	t->has_mounts = false;
	for (; *spec; spec++) {
		add_spec(t, "%s", *spec);
		const char *line = *spec;
		if (line[0] == 'm' || line[0] == 'b')
			t->has_mounts = true;
		if (line[0] == 'l' && has_dotdot_component(strchr(line + 2, ' ') + 1))
			t->dotdot_links = true;
		/* every path component of the entry joins the name pool */
		char p[256];
		size_t n = strcspn(line + 2, " ");
		if (n >= sizeof(p))
			continue;
		memcpy(p, line + 2, n);
		p[n] = '\0';
		for (char *save = NULL, *tok = strtok_r(p, "/", &save); tok;
		     tok = strtok_r(NULL, "/", &save))
			if (strcmp(tok, "root"))
				add_name(t, tok);
	}
}

/* ---------------------------------------------------------------- building and indexing */

static struct dc_tree *index_tree;

static int index_entry(const char *fpath, const struct stat *sb, int typeflag, struct FTW *ftw)
{
	(void)ftw;
	struct dc_tree *t = index_tree;
	size_t blen = strlen(t->base);
	const char *rel = fpath[blen] ? fpath + blen + 1 : ".";
	if (t->nobjs < DC_MAX_OBJS && strlen(rel) < DC_REL_MAX) {
		struct dc_obj *o = &t->objs[t->nobjs++];
		o->dev = sb->st_dev;
		o->ino = sb->st_ino;
		memcpy(o->path, rel, strlen(rel) + 1);
	}
	if ((typeflag == FTW_D || typeflag == FTW_DNR) && t->ndirs < DC_MAX_DIRS &&
	    strlen(rel) < DC_REL_MAX) {
		struct dc_dir *d = &t->dirs[t->ndirs++];
		d->dev = sb->st_dev;
		memcpy(d->path, rel, strlen(rel) + 1);
	}
	return 0;
}

static int index_all(struct dc_tree *t)
{
	t->nobjs = 0;
	t->ndirs = 0;
	index_tree = t;
	int r = nftw(t->base, index_entry, 16, FTW_PHYS);
	index_tree = NULL;
	return r;
}

static int build_line(struct dc_tree *t, const char *line)
{
	char path[DC_SPEC_LEN], rest[DC_SPEC_LEN];
	size_t n = strcspn(line + 2, " ");
	memcpy(path, line + 2, n);
	path[n] = '\0';
	const char *r = line + 2 + n;
	if (*r == ' ')
		r++;
	memcpy(rest, r, strlen(r) + 1);
	int fd = t->basefd;

	switch (line[0]) {
	case 'd':
		return mkdirat(fd, path, (mode_t)strtoul(rest, NULL, 8));
	case 'c':
		return fchmodat(fd, path, (mode_t)strtoul(rest, NULL, 8), 0);
	case 'f': {
		int f = openat(fd, path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
			       0644);
		if (f < 0)
			return -1;
		close(f);
		return 0;
	}
	case 'p':
		return mknodat(fd, path, S_IFIFO | 0644, 0);
	case 'l':
		return symlinkat(rest, fd, path);
	case 'h':
		return linkat(fd, rest, fd, path, 0);
	case 'm': {
		char abs[PATH_MAX];
		setf(abs, sizeof(abs), "%s/%s", t->base, path);
		if (mount("dcfs", abs, "tmpfs", MS_NOSUID | MS_NODEV, "size=64k,mode=0755") < 0)
			return -1;
		int m = openat(fd, path, O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (m < 0)
			return -1;
		int rc = 0;
		int f = openat(m, "f", O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
		if (f < 0)
			rc = -1;
		else
			close(f);
		if (rc == 0)
			rc = mkdirat(m, "d", 0755);
		if (rc == 0)
			rc = symlinkat("..", m, "up");
		if (rc == 0)
			rc = symlinkat("../..", m, "dd");
		close(m);
		return rc;
	}
	case 'b': {
		char from[PATH_MAX], to[PATH_MAX];
		setf(from, sizeof(from), "%s/%s", t->base, path);
		setf(to, sizeof(to), "%s/%s", t->base, rest);
		return mount(from, to, NULL, MS_BIND, NULL);
	}
	default:
		errno = EINVAL;
		return -1;
	}
}

/* Depth of a spec line's path (its number of '/'). */
static size_t spec_depth(const char *line)
{
	size_t d = 0;
	for (const char *p = line + 2; *p && *p != ' '; p++)
		d += *p == '/';
	return d;
}

/* Spec line number k of the tree in build order: the spec's order, except
 * that a run of consecutive mode changes ('c' lines) is applied deepest
 * first. A directory made unsearchable early in the run would stop an
 * unprivileged builder (root gets through anyway) from changing the modes
 * below it; the tree is the same either way. */
static size_t build_order(const struct dc_tree *t, size_t k)
{
	if (t->spec[k][0] != 'c')
		return k;
	size_t lo = k, hi = k;
	while (lo > 0 && t->spec[lo - 1][0] == 'c')
		lo--;
	while (hi + 1 < t->nspec && t->spec[hi + 1][0] == 'c')
		hi++;
	size_t want = k - lo, seen = 0;
	for (size_t depth = 64; depth-- > 0;)
		for (size_t i = lo; i <= hi; i++)
			if (spec_depth(t->spec[i]) == depth && seen++ == want)
				return i;
	return k; /* deeper than 64: spec order */
}

int dc_tree_build(struct dc_tree *t)
{
	t->basefd = t->rootfd = t->subfd = t->filefd = t->procfd = -1;
	t->errbuf[0] = '\0';
	t->basefd = open(t->base, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (t->basefd < 0) {
		setf(t->errbuf, sizeof(t->errbuf), "open %s: %s", t->base, strerror(errno));
		return -1;
	}
	for (size_t k = 0; k < t->nspec; k++) {
		size_t i = build_order(t, k);
		if (build_line(t, t->spec[i]) < 0) {
			setf(t->errbuf, sizeof(t->errbuf), "building '%s': %s", t->spec[i],
			     strerror(errno));
			return -1;
		}
	}
	t->rootfd = openat(t->basefd, "root", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	t->filefd = openat(t->basefd, "a", O_RDONLY | O_CLOEXEC);
	t->procfd = open("/proc/self", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	/* The sub-root: the first directory below root that we can open. */
	for (size_t i = 0; i < t->nspec && t->subfd < 0; i++)
		if (!strncmp(t->spec[i], "d root/", 7))
			t->subfd = openat(t->basefd, t->spec[i] + 2,
					  O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (t->subfd < 0)
		t->subfd = openat(t->basefd, "out", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (t->rootfd < 0 || t->filefd < 0 || t->procfd < 0 || t->subfd < 0) {
		setf(t->errbuf, sizeof(t->errbuf), "opening the tree's fds: %s", strerror(errno));
		return -1;
	}
	struct stat pst;
	t->proc_dev = fstat(t->procfd, &pst) == 0 ? pst.st_dev : 0;
	if (index_all(t) < 0) {
		setf(t->errbuf, sizeof(t->errbuf), "indexing: %s", strerror(errno));
		return -1;
	}
	return 0;
}

static int rm_entry(const char *fpath, const struct stat *sb, int typeflag, struct FTW *ftw)
{
	(void)sb;
	if (ftw->level == 0)
		return 0;
	if (typeflag == FTW_DP || typeflag == FTW_D || typeflag == FTW_DNR)
		return rmdir(fpath) < 0 && errno != ENOENT ? -1 : 0;
	return unlink(fpath) < 0 && errno != ENOENT ? -1 : 0;
}

static int chmod_entry(const char *fpath, const struct stat *sb, int typeflag, struct FTW *ftw)
{
	(void)ftw;
	if (typeflag == FTW_D || typeflag == FTW_DNR)
		(void)chmod(fpath, (sb->st_mode & 07777) | 0700);
	return 0;
}

int dc_rmtree_below(const char *dir)
{
	(void)nftw(dir, chmod_entry, 16, FTW_PHYS);
	return nftw(dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

void dc_tree_destroy(struct dc_tree *t)
{
	int *fds[] = { &t->basefd, &t->rootfd, &t->subfd, &t->filefd, &t->procfd };
	for (size_t i = 0; i < sizeof(fds) / sizeof(fds[0]); i++) {
		if (*fds[i] >= 0)
			close(*fds[i]);
		*fds[i] = -1;
	}
	/* Unmount in reverse order of the spec. */
	for (size_t i = t->nspec; i-- > 0;) {
		const char *line = t->spec[i];
		char abs[PATH_MAX];
		if (line[0] == 'm') {
			setf(abs, sizeof(abs), "%s/%s", t->base, line + 2);
		} else if (line[0] == 'b') {
			setf(abs, sizeof(abs), "%s/%s", t->base, strchr(line + 2, ' ') + 1);
		} else {
			continue;
		}
		(void)umount2(abs, MNT_DETACH);
	}
	(void)dc_rmtree_below(t->base);
}

void dc_tree_print(const struct dc_tree *t)
{
	fprintf(stderr, "  tree (relative to %s):\n", t->base);
	for (size_t i = 0; i < t->nspec; i++)
		fprintf(stderr, "    %s\n", t->spec[i]);
}

/* ---------------------------------------------------------------- case generation */

/* A path to an object that exists (from the index), perturbed with ".",
 * "name/..", "//", a leading "/" or "../", a trailing "/" or "/.". */
static void gen_real_path(const struct dc_tree *t, struct dc_rng *r, char *buf, size_t size)
{
	const char *rel = ".";
	for (int tries = 0; tries < 16 && t->nobjs; tries++) {
		const char *p = t->objs[dc_below(r, (uint32_t)t->nobjs)].path;
		if (!strncmp(p, "root/", 5)) {
			rel = p + 5;
			break;
		}
	}
	buf[0] = '\0';
	if (dc_chance(r, 15))
		appendf(buf, size, "/");
	else if (dc_chance(r, 5))
		appendf(buf, size, "../");
	char comps[DC_REL_MAX];
	memcpy(comps, rel, strlen(rel) + 1);
	bool first = true;
	for (char *save = NULL, *tok = strtok_r(comps, "/", &save); tok;
	     tok = strtok_r(NULL, "/", &save)) {
		if (!first)
			appendf(buf, size, dc_chance(r, 5) ? "//" : "/");
		first = false;
		if (dc_chance(r, 6))
			appendf(buf, size, "./");
		if (dc_chance(r, 6) && t->nnames)
			appendf(buf, size, "%s/../", t->names[dc_below(r, (uint32_t)t->nnames)]);
		appendf(buf, size, "%s", tok);
	}
	uint32_t tail = dc_below(r, 100);
	if (tail < 10)
		appendf(buf, size, "/");
	else if (tail < 14)
		appendf(buf, size, "/.");
}

static void gen_path(const struct dc_tree *t, struct dc_rng *r, char *buf, size_t size)
{
	buf[0] = '\0';
	if (dc_chance(r, 45)) {
		gen_real_path(t, r, buf, size);
		return;
	}
	uint32_t special = dc_below(r, 200);
	if (special == 0)
		return; /* empty path: ENOENT */
	if (special == 1) {
		/* longer than PATH_MAX: ENAMETOOLONG */
		while (strlen(buf) < PATH_MAX + 8)
			appendf(buf, size, "a/");
		return;
	}
	if (special == 2) {
		/* a component longer than NAME_MAX */
		for (int i = 0; i < NAME_MAX + 1; i++)
			appendf(buf, size, "n");
		return;
	}
	if (special == 3) {
		/* many components, still below PATH_MAX */
		for (int i = 0; i < 300; i++)
			appendf(buf, size, "%s", dc_chance(r, 50) ? "./" : "d/../");
		appendf(buf, size, "%s",
			t->nnames ? t->names[dc_below(r, (uint32_t)t->nnames)] : "a");
		return;
	}
	if (dc_chance(r, 12))
		appendf(buf, size, dc_chance(r, 80) ? "/" : "//");
	int n = 1 + (int)dc_below(r, 6);
	for (int i = 0; i < n; i++) {
		if (i)
			appendf(buf, size, dc_chance(r, 6) ? "//" : "/");
		uint32_t k = dc_below(r, 100);
		if (k < 62 && t->nnames)
			appendf(buf, size, "%s", t->names[dc_below(r, (uint32_t)t->nnames)]);
		else if (k < 80)
			appendf(buf, size, "..");
		else if (k < 90)
			appendf(buf, size, ".");
		else if (k < 95)
			appendf(buf, size, "zz");
		else
			appendf(buf, size, "root");
	}
	uint32_t tail = dc_below(r, 100);
	if (tail < 12)
		appendf(buf, size, "/");
	else if (tail < 16)
		appendf(buf, size, "/.");
	else if (tail < 18)
		appendf(buf, size, "//");
	else if (tail < 20)
		appendf(buf, size, "/..");
}

static void gen_proc_path(const struct dc_tree *t, struct dc_rng *r, char *buf, size_t size)
{
	static const char *const fixed[] = {
		"exe",
		"cwd",
		"root",
		"root/etc",
		"cwd/..",
		"fd",
		"status",
		"..",
		"ns/net",
		"ns",
		"map_files",
		".",
		"/proc/self/fd/0",
		"attr",
		"fdinfo",
		"task",
		"self",
		"comm",
		"fd/0/..",
		"root/..",
	};
	int fds[] = { t->rootfd, t->basefd, t->filefd, t->subfd, 0 };
	int fd = fds[dc_below(r, 5)];
	buf[0] = '\0';
	switch (dc_below(r, 4)) {
	case 0:
		appendf(buf, size, "fd/%d", fd);
		break;
	case 1:
		appendf(buf, size, "fd/%d/%s", fd,
			t->nnames ? t->names[dc_below(r, (uint32_t)t->nnames)] : "a");
		break;
	case 2:
		appendf(buf, size, "task/%d/fd/%d", getpid(), fd);
		break;
	default:
		appendf(buf, size, "%s", fixed[dc_below(r, sizeof(fixed) / sizeof(fixed[0]))]);
		break;
	}
	if (dc_chance(r, 10))
		appendf(buf, size, "/");
}

void dc_case_generate(const struct dc_tree *t, struct dc_rng *r, struct dc_case *c)
{
	memset(c, 0, sizeof(*c));
	uint32_t d = dc_below(r, 100);
	c->dirsel = d < 85   ? DC_DIR_ROOT
		    : d < 91 ? DC_DIR_SUB
		    : d < 97 ? DC_DIR_PROC
		    : d < 99 ? DC_DIR_FILE
			     : DC_DIR_BAD;
	if (c->dirsel == DC_DIR_PROC)
		gen_proc_path(t, r, c->path, sizeof(c->path));
	else
		gen_path(t, r, c->path, sizeof(c->path));

	uint64_t f;
	uint32_t acc = dc_below(r, 10);
	f = acc < 5 ? O_RDONLY : acc < 7 ? O_WRONLY : O_RDWR;
	if (dc_chance(r, 20)) {
		/* O_PATH and what it allows (and now and then what it does not) */
		f = O_PATH;
		if (dc_chance(r, 5))
			f |= (uint64_t)(dc_chance(r, 50) ? O_RDWR : O_CREAT);
	} else {
		if (dc_chance(r, 22))
			f |= O_CREAT;
		if (dc_chance(r, 10))
			f |= O_EXCL;
		if (dc_chance(r, 10))
			f |= O_TRUNC;
		if (dc_chance(r, 5))
			f |= O_APPEND;
		if (dc_chance(r, 3)) {
			f &= ~(uint64_t)O_CREAT;
			f |= (uint64_t)O_TMPFILE;
		}
		f |= O_NONBLOCK; /* FIFOs in the tree: never block */
	}
	if (dc_chance(r, 25))
		f |= O_NOFOLLOW;
	if (dc_chance(r, 18))
		f |= O_DIRECTORY;
	if (dc_chance(r, 1))
		f |= 1ULL << (33 + dc_below(r, 20)); /* unknown bit: EINVAL */
	c->flags = f;
	if (f & (O_CREAT | (uint64_t)(O_TMPFILE & ~O_DIRECTORY))) {
		static const uint64_t modes[] = { 0644, 0600, 0755, 07777, 0 };
		c->mode = modes[dc_below(r, 5)];
	} else if (dc_chance(r, 2)) {
		c->mode = 0644; /* mode without O_CREAT: EINVAL */
	}

	uint64_t res = dc_chance(r, 50) ? SAFE_RESOLVE_BENEATH : SAFE_RESOLVE_IN_ROOT;
	if (dc_chance(r, 25))
		res |= SAFE_RESOLVE_NO_XDEV;
	if (dc_chance(r, 25))
		res |= SAFE_RESOLVE_NO_MAGICLINKS;
	if (dc_chance(r, 20))
		res |= SAFE_RESOLVE_NO_SYMLINKS;
	if (dc_chance(r, 5))
		res |= SAFE_RESOLVE_NO_DOTDOT;
	if (dc_chance(r, 1))
		res |= 1ULL << (6 + dc_below(r, 20)); /* unknown resolve bit: EINVAL */
	if (dc_chance(r, 1)) {
		/* neither or both scopes: the library refuses (EINVAL) on purpose */
		res = dc_chance(r, 50) ? (res | SAFE_RESOLVE_BENEATH | SAFE_RESOLVE_IN_ROOT)
				       : (res & ~(SAFE_RESOLVE_BENEATH | SAFE_RESOLVE_IN_ROOT));
		c->expect_einval = true;
	}
	c->resolve = res;
}

/* ---------------------------------------------------------------- describing */

static void describe_flags(uint64_t f, char *buf, size_t size)
{
	static const struct {
		uint64_t bit;
		const char *name;
	} names[] = {
		{ O_CREAT, "O_CREAT" },
		{ O_EXCL, "O_EXCL" },
		{ O_TRUNC, "O_TRUNC" },
		{ O_APPEND, "O_APPEND" },
		{ O_NONBLOCK, "O_NONBLOCK" },
		{ O_PATH, "O_PATH" },
		{ O_NOFOLLOW, "O_NOFOLLOW" },
		{ O_DIRECTORY, "O_DIRECTORY" },
		{ O_TMPFILE & ~O_DIRECTORY, "__O_TMPFILE" },
	};
	buf[0] = '\0';
	switch (f & O_ACCMODE) {
	case O_RDONLY:
		appendf(buf, size, "O_RDONLY");
		break;
	case O_WRONLY:
		appendf(buf, size, "O_WRONLY");
		break;
	default:
		appendf(buf, size, "O_RDWR");
		break;
	}
	uint64_t rest = f & ~(uint64_t)O_ACCMODE;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (rest & names[i].bit) {
			appendf(buf, size, "|%s", names[i].name);
			rest &= ~names[i].bit;
		}
	}
	if (rest)
		appendf(buf, size, "|0x%llx", (unsigned long long)rest);
}

static void describe_resolve(uint64_t res, char *buf, size_t size)
{
	static const struct {
		uint64_t bit;
		const char *name;
	} names[] = {
		{ SAFE_RESOLVE_BENEATH, "BENEATH" },
		{ SAFE_RESOLVE_IN_ROOT, "IN_ROOT" },
		{ SAFE_RESOLVE_NO_XDEV, "NO_XDEV" },
		{ SAFE_RESOLVE_NO_MAGICLINKS, "NO_MAGICLINKS" },
		{ SAFE_RESOLVE_NO_SYMLINKS, "NO_SYMLINKS" },
		{ SAFE_RESOLVE_NO_DOTDOT, "NO_DOTDOT" },
	};
	buf[0] = '\0';
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (res & names[i].bit) {
			appendf(buf, size, "%s%s", buf[0] ? "|" : "", names[i].name);
			res &= ~names[i].bit;
		}
	}
	if (res)
		appendf(buf, size, "%s0x%llx", buf[0] ? "|" : "", (unsigned long long)res);
	if (!buf[0])
		appendf(buf, size, "0");
}

static const char *dirsel_name(int d)
{
	static const char *const n[] = { "root", "subdir", "/proc/self", "file fd", "bad fd" };
	return n[d];
}

static void quote(const char *s, char *buf, size_t size)
{
	buf[0] = '\0';
	size_t len = strlen(s);
	if (len > 300) {
		appendf(buf, size, "<%zu bytes: \"%.40s...\">", len, s);
		return;
	}
	appendf(buf, size, "\"");
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (*p < 0x20 || *p >= 0x7f || *p == '"' || *p == '\\')
			appendf(buf, size, "\\x%02x", *p);
		else
			appendf(buf, size, "%c", *p);
	}
	appendf(buf, size, "\"");
}

void dc_describe_case(const struct dc_case *c, char *buf, size_t size)
{
	char fl[256], res[256], q[1200];
	describe_flags(c->flags, fl, sizeof(fl));
	describe_resolve(c->resolve, res, sizeof(res));
	quote(c->path, q, sizeof(q));
	buf[0] = '\0';
	appendf(buf, size, "dirfd=%s path=%s flags=%s mode=0%llo resolve=%s",
		dirsel_name(c->dirsel), q, fl, (unsigned long long)c->mode, res);
}

/* ---------------------------------------------------------------- running */

enum { R_ERR, R_OBJ, R_CREATED, R_TMPFILE, R_UNKNOWN };

struct dc_result {
	int kind;
	int err;
	char what[DC_REL_MAX + 96];
	int fl;
	bool cloexec;
	char leftover[DC_REL_MAX + 64]; /* something left behind in the tree */
};

static const struct dc_obj *find_obj(const struct dc_tree *t, dev_t dev, ino_t ino)
{
	for (size_t i = 0; i < t->nobjs; i++)
		if (t->objs[i].dev == dev && t->objs[i].ino == ino)
			return &t->objs[i];
	return NULL;
}

/*
 * Look for entries of the tree that were not there when it was indexed.
 * If want_ino is nonzero, the entry with that inode is reported in found
 * (relative path) and removed; any other new entry is reported in leftover
 * and removed too (so that the next case starts from the same tree).
 */
static void scan_new(struct dc_tree *t, dev_t want_dev, ino_t want_ino, char *found, size_t fsize,
		     char *leftover, size_t lsize)
{
	for (size_t i = 0; i < t->ndirs; i++) {
		const struct dc_dir *d = &t->dirs[i];
		int dfd =
			openat(t->basefd, d->path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (dfd < 0)
			continue;
		DIR *dir = fdopendir(dfd);
		if (!dir) {
			close(dfd);
			continue;
		}
		struct dirent *de;
		char gone[8][NAME_MAX + 1];
		int ngone = 0;
		while ((de = readdir(dir)) != NULL) {
			if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
				continue;
			if (find_obj(t, d->dev, de->d_ino))
				continue;
			struct stat st;
			if (fstatat(dirfd(dir), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
				continue;
			if (find_obj(t, st.st_dev, st.st_ino))
				continue; /* a mount point */
			if (want_ino && st.st_dev == want_dev && st.st_ino == want_ino)
				appendf(found, fsize, "%s/%s", d->path, de->d_name);
			else
				appendf(leftover, lsize, "%s%s/%s", leftover[0] ? ", " : "",
					d->path, de->d_name);
			if (ngone < 8)
				memcpy(gone[ngone++], de->d_name, strlen(de->d_name) + 1);
		}
		for (int k = 0; k < ngone; k++)
			if (unlinkat(dirfd(dir), gone[k], 0) < 0 && errno == EISDIR)
				(void)unlinkat(dirfd(dir), gone[k], AT_REMOVEDIR);
		closedir(dir);
	}
}

/* An object outside the index (procfs, mostly): procfs numbers the inodes of
 * /proc/PID entries anew when their dentries are rebuilt, so there only the
 * device and the file type are compared. */
static void describe_unknown(const struct dc_tree *t, const struct stat *st, char *buf,
			     size_t size)
{
	if (st->st_dev == t->proc_dev)
		setf(buf, size, "procfs object type 0%o", (unsigned)(st->st_mode & S_IFMT));
	else
		setf(buf, size, "object dev %lu ino %lu", (unsigned long)st->st_dev,
		     (unsigned long)st->st_ino);
}

static int pick_dirfd(const struct dc_tree *t, int sel)
{
	switch (sel) {
	case DC_DIR_SUB:
		return t->subfd;
	case DC_DIR_PROC:
		return t->procfd;
	case DC_DIR_FILE:
		return t->filefd;
	case DC_DIR_BAD:
		return 1000000;
	default:
		return t->rootfd;
	}
}

static int call_impl(const struct dc_tree *t, const struct dc_case *c, int impl)
{
	int dfd = pick_dirfd(t, c->dirsel);
	if (impl == 0) {
		struct open_how kh = {
			.flags = c->flags | O_CLOEXEC,
			.mode = c->mode,
			.resolve = c->resolve & 0xffffffffULL,
		};
		/* Never unscoped: a case without a scope (the library must say
		 * EINVAL, the kernel's answer is not used) would otherwise let
		 * the oracle create or truncate any absolute path, as root. */
		if (!(kh.resolve & (RESOLVE_BENEATH | RESOLVE_IN_ROOT)))
			kh.resolve |= RESOLVE_BENEATH;
		long fd;
		int tries = 0;
		do
			fd = syscall(SYS_openat2, dfd, c->path, &kh, sizeof(kh));
		while (fd < 0 && errno == EAGAIN && ++tries < 1000);
		return (int)fd;
	}
	struct safe_open_how h = {
		.flags = c->flags,
		.mode = c->mode,
		.resolve = c->resolve | (impl == 2 ? SAFE_RESOLVE_USERSPACE : 0),
	};
	return safe_openat2(dfd, c->path, &h, sizeof(h));
}

/* Open a canonical relative path one component at a time with
 * O_PATH|O_NOFOLLOW (no library, no openat2): fails if a non-final
 * component is a symlink or not a directory. */
static int open_plain(int dfd, const char *path)
{
	char comps[PATH_MAX];
	setf(comps, sizeof(comps), "%s", path);
	int cur = openat(dfd, ".", O_PATH | O_DIRECTORY | O_CLOEXEC);
	for (char *save = NULL, *tok = strtok_r(comps, "/", &save); tok && cur >= 0;
	     tok = strtok_r(NULL, "/", &save)) {
		if (!strcmp(tok, "."))
			continue;
		int next = openat(cur, tok, O_PATH | O_NOFOLLOW | O_CLOEXEC);
		close(cur);
		cur = next;
		struct stat st;
		if (cur >= 0 && save && *save && (fstat(cur, &st) < 0 || !S_ISDIR(st.st_mode))) {
			close(cur);
			cur = -1;
			errno = ENOTDIR;
		}
	}
	return cur;
}

static void run_impl(struct dc_tree *t, const struct dc_case *c, int impl, struct dc_result *res)
{
	memset(res, 0, sizeof(*res));
	errno = 0;
	if (impl == 6) {
		/* safe_readlinkat_beneath(): the body of the link O_PATH|O_NOFOLLOW
		 * opens (see dc_run_case for the expectation) */
		char body[PATH_MAX];
		ssize_t n = safe_readlinkat_beneath(pick_dirfd(t, c->dirsel), c->path, body,
						    sizeof(body) - 1, c->resolve);
		if (n < 0) {
			res->kind = R_ERR;
			res->err = errno;
			return;
		}
		body[n] = '\0';
		res->kind = R_OBJ;
		res->fl = O_PATH;
		res->cloexec = true;
		setf(res->what, sizeof(res->what), "link -> %s", body);
		return;
	}
	if (impl == 5) {
		/* safe_opendir_beneath(): the directory O_RDONLY|O_DIRECTORY opens */
		DIR *d = safe_opendir_beneath(pick_dirfd(t, c->dirsel), c->path, c->resolve);
		struct stat st;
		if (!d) {
			res->kind = R_ERR;
			res->err = errno;
			return;
		}
		res->fl = O_RDONLY;
		res->cloexec = fcntl(dirfd(d), F_GETFD) & FD_CLOEXEC;
		res->kind = R_UNKNOWN;
		if (fstat(dirfd(d), &st) == 0) {
			const struct dc_obj *o = find_obj(t, st.st_dev, st.st_ino);
			res->kind = o ? R_OBJ : R_UNKNOWN;
			if (o)
				setf(res->what, sizeof(res->what), "%s", o->path);
			else
				describe_unknown(t, &st, res->what, sizeof(res->what));
		}
		closedir(d);
		return;
	}
	if (impl == 4) {
		/* safe_realpath_beneath(): a canonical path (no ".", "..", "//",
		 * symlinks) that leads, without following anything, to the object
		 * O_PATH opens. */
		char buf[PATH_MAX];
		int dfd = pick_dirfd(t, c->dirsel);
		ssize_t n = safe_realpath_beneath(dfd, c->path, buf, sizeof(buf), c->resolve);
		if (n < 0) {
			res->kind = R_ERR;
			res->err = errno;
			return;
		}
		res->fl = O_PATH;
		res->cloexec = true;
		res->kind = R_UNKNOWN;
		bool canonical = (size_t)n == strlen(buf) &&
				 (!strcmp(buf, ".") ||
				  (buf[0] != '/' && buf[n - 1] != '/' && !strstr(buf, "//") &&
				   !has_dotdot_component(buf) && strncmp(buf, "./", 2) &&
				   !strstr(buf, "/./") && (n < 2 || strcmp(buf + n - 2, "/."))));
		int fd = canonical ? open_plain(dfd, buf) : -1;
		struct stat st;
		if (fd < 0 || fstat(fd, &st) < 0) {
			setf(res->what, sizeof(res->what), "non-canonical \"%.200s\" (%s)", buf,
			     canonical ? strerror(errno) : "syntax");
		} else {
			const struct dc_obj *o = find_obj(t, st.st_dev, st.st_ino);
			res->kind = o ? R_OBJ : R_UNKNOWN;
			if (o)
				setf(res->what, sizeof(res->what), "%s", o->path);
			else
				describe_unknown(t, &st, res->what, sizeof(res->what));
		}
		if (fd >= 0)
			close(fd);
		return;
	}
	if (impl == 3) {
		/* safe_fstatat_beneath(): the object O_PATH(|O_NOFOLLOW) names */
		struct stat st;
		uint64_t fl = c->resolve | ((c->flags & O_NOFOLLOW) ? 0 : SAFE_FOLLOW);
		if (safe_fstatat_beneath(pick_dirfd(t, c->dirsel), c->path, &st, fl) < 0) {
			res->kind = R_ERR;
			res->err = errno;
			return;
		}
		const struct dc_obj *o = find_obj(t, st.st_dev, st.st_ino);
		res->kind = o ? R_OBJ : R_UNKNOWN;
		if (o)
			setf(res->what, sizeof(res->what), "%s", o->path);
		else
			describe_unknown(t, &st, res->what, sizeof(res->what));
		res->fl = O_PATH;
		res->cloexec = true;
		return;
	}
	int fd = call_impl(t, c, impl);
	bool creating = c->flags & (O_CREAT | (uint64_t)(O_TMPFILE & ~O_DIRECTORY));
	if (fd < 0) {
		res->kind = R_ERR;
		res->err = errno;
		if (creating)
			scan_new(t, 0, 0, NULL, 0, res->leftover, sizeof(res->leftover));
		return;
	}
	struct stat st;
	if (fstat(fd, &st) < 0) {
		res->kind = R_UNKNOWN;
		setf(res->what, sizeof(res->what), "fstat failed: %s", strerror(errno));
		close(fd);
		return;
	}
	res->fl = fcntl(fd, F_GETFL) &
		  (O_ACCMODE | O_PATH | O_APPEND | O_NONBLOCK | O_NOFOLLOW | O_DIRECTORY);
	/* Without openat2 in this process (old kernel, seccomp, valgrind) the
	 * walker can only open the last component with O_NOFOLLOW (and
	 * O_DIRECTORY for a trailing slash), and the descriptor shows them: a
	 * documented difference, not compared then. With openat2 it must not. */
	if (impl != 0 && !dc_kernel_has_openat2())
		res->fl = (res->fl & ~(O_NOFOLLOW | O_DIRECTORY)) |
			  (int)(c->flags & (O_NOFOLLOW | O_DIRECTORY));
	res->cloexec = fcntl(fd, F_GETFD) & FD_CLOEXEC;
	const struct dc_obj *o = find_obj(t, st.st_dev, st.st_ino);
	if (o) {
		res->kind = R_OBJ;
		setf(res->what, sizeof(res->what), "%s", o->path);
	} else if (S_ISREG(st.st_mode) && st.st_nlink == 0 &&
		   (c->flags & O_TMPFILE & ~O_DIRECTORY)) {
		/* The directory an unnamed file lives in: /proc/self/fd/N reads
		 * "<dir>/#<ino> (deleted)". */
		char link[64], target[PATH_MAX];
		setf(link, sizeof(link), "/proc/self/fd/%d", fd);
		ssize_t n = readlink(link, target, sizeof(target) - 1);
		target[n > 0 ? n : 0] = '\0';
		char *slash = strrchr(target, '/');
		if (slash)
			*slash = '\0';
		size_t blen = strlen(t->base);
		const char *rel = !strncmp(target, t->base, blen) ? target + blen : target;
		res->kind = R_TMPFILE;
		setf(res->what, sizeof(res->what), "unnamed file in %s mode 0%o", *rel ? rel : "/",
		     (unsigned)(st.st_mode & 07777));
	} else if (creating) {
		char found[DC_REL_MAX + 64] = "";
		scan_new(t, st.st_dev, st.st_ino, found, sizeof(found), res->leftover,
			 sizeof(res->leftover));
		res->kind = found[0] ? R_CREATED : R_UNKNOWN;
		setf(res->what, sizeof(res->what), "created %s mode 0%o",
		     found[0] ? found : "<not found in the tree>", (unsigned)(st.st_mode & 07777));
	} else {
		res->kind = R_UNKNOWN;
		describe_unknown(t, &st, res->what, sizeof(res->what));
	}
	if (creating && res->kind != R_CREATED)
		scan_new(t, 0, 0, NULL, 0, res->leftover, sizeof(res->leftover));
	close(fd);
}

static void describe_result(const struct dc_result *r, char *buf, size_t size)
{
	buf[0] = '\0';
	if (r->kind == R_ERR)
		appendf(buf, size, "-1 %s (%s)",
			strerrorname_np(r->err) ? strerrorname_np(r->err) : "?", strerror(r->err));
	else
		appendf(buf, size, "fd: %s [F_GETFL 0%o%s]", r->what, (unsigned)r->fl,
			r->cloexec ? "" : ", NOT O_CLOEXEC");
	if (r->leftover[0])
		appendf(buf, size, "; LEFT BEHIND: %s", r->leftover);
}

static bool same_result(const struct dc_result *a, const struct dc_result *b)
{
	if (a->kind != b->kind)
		return false;
	if (a->kind == R_ERR)
		return a->err == b->err;
	return !strcmp(a->what, b->what) && a->fl == b->fl;
}

/* What readlink of the object O_PATH|O_NOFOLLOW gave must return: its body if
 * it is a symlink, EINVAL if it is anything else, the same errno otherwise. */
static const struct dc_result *readlink_expectation(const struct dc_tree *t,
						    const struct dc_result *want,
						    struct dc_result *out)
{
	*out = *want;
	if (want->kind != R_OBJ)
		return out;
	struct stat st;
	char body[PATH_MAX];
	ssize_t n = -1;
	if (fstatat(t->basefd, want->what, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode))
		n = readlinkat(t->basefd, want->what, body, sizeof(body) - 1);
	if (n < 0) {
		out->kind = R_ERR;
		out->err = EINVAL;
	} else {
		body[n] = '\0';
		setf(out->what, sizeof(out->what), "link -> %s", body);
	}
	return out;
}

static bool same_object_or_errno(const struct dc_result *a, const struct dc_result *b)
{
	if (a->kind != b->kind)
		return false;
	return a->kind == R_ERR ? a->err == b->err : !strcmp(a->what, b->what);
}

static bool result_clean(const struct dc_result *r)
{
	return !r->leftover[0] && (r->kind == R_ERR || r->cloexec);
}

int dc_outcome(struct dc_tree *t, const struct dc_case *c, int impl, char *buf, size_t size)
{
	struct dc_result r;
	run_impl(t, c, impl, &r);
	describe_result(&r, buf, size);
	return result_clean(&r) ? 0 : 1;
}

unsigned long dc_kernel_quirks, dc_kernel_eagain, dc_kernel_unstable;

/*
 * The kernel counts the links it followed during an abandoned RCU-walk
 * attempt again in the ref-walk retry (nameidata.total_link_count is set once
 * per open, not per attempt), and an RCU walk is abandoned (-ECHILD) at ".."
 * in the root under RESOLVE_BENEATH - exactly where the answer is EXDEV. So a
 * walk that followed more than 20 links before such a ".." gets ELOOP from
 * openat2 (nearly always; on a cold dcache sometimes EXDEV) where a walk that
 * counts each link once - the library's walker - says EXDEV. Observed on
 * 6.18: chain c1 -> ... -> c30 -> ".", path "c1/../d/x", BENEATH: openat2
 * ELOOP in 48 of 50 calls. Accepted only in that exact shape: kernel ELOOP,
 * library EXDEV, BENEATH, and a ".." in the path or in a link body.
 */
static bool kernel_restart_eloop(const struct dc_tree *t, const struct dc_case *c,
				 const struct dc_result *want, const struct dc_result *got,
				 bool got_from_kernel)
{
	if (want->kind != R_ERR || got->kind != R_ERR || got->leftover[0])
		return false;
	/* The walker counts each link once: EXDEV where the kernel said ELOOP.
	 * The default path is the kernel again, whose answer depends on the
	 * dcache: ELOOP where the first call said EXDEV, or the other way. */
	bool shape = (want->err == ELOOP && got->err == EXDEV) ||
		     (got_from_kernel && want->err == EXDEV && got->err == ELOOP);
	return shape && (c->resolve & SAFE_RESOLVE_BENEATH) &&
	       (has_dotdot_component(c->path) || t->dotdot_links);
}

bool dc_outcome_equivalent(const struct dc_tree *t, const struct dc_case *c, const char *want,
			   const char *got)
{
	if (!strcmp(want, got))
		return true;
	struct dc_result w = { .kind = R_ERR, .err = ELOOP }, g = { .kind = R_ERR, .err = EXDEV };
	char ws[64], gs[64];
	describe_result(&w, ws, sizeof(ws));
	describe_result(&g, gs, sizeof(gs));
	if (!strcmp(want, ws) && !strcmp(got, gs) && kernel_restart_eloop(t, c, &w, &g, false)) {
		dc_kernel_quirks++;
		return true;
	}
	struct dc_result a = { .kind = R_ERR, .err = EAGAIN };
	describe_result(&a, ws, sizeof(ws));
	if (!strcmp(want, ws)) {
		dc_kernel_eagain++; /* no oracle (see dc_run_case) */
		return true;
	}
	return false;
}

/* Outcomes of the oracle, for dc_stats_print(): errno values, then kinds. */
static unsigned long stats_err[134], stats_kind[5];

void dc_stats_print(void)
{
	static const char *const kinds[] = { "error", "existing object", "created", "unnamed",
					     "other object" };
	for (int k = 0; k < 5; k++)
		if (stats_kind[k])
			fprintf(stderr, "    %-16s %lu\n", kinds[k], stats_kind[k]);
	for (int e = 0; e < 134; e++)
		if (stats_err[e])
			fprintf(stderr, "      %-14s %lu\n",
				strerrorname_np(e) ? strerrorname_np(e) : "?", stats_err[e]);
}

bool dc_kernel_has_openat2(void)
{
	int saved = errno;
	long r = syscall(SYS_openat2, AT_FDCWD, NULL, NULL, 0);
	bool have = !(r < 0 && (errno == ENOSYS || errno == EPERM));
	errno = saved;
	return have;
}

int dc_run_case(struct dc_tree *t, const struct dc_case *c, int impls, char *out, size_t size)
{
	struct dc_result raw, lib[6];
	bool bad = false;
	struct dc_result rl_want;
	/* safe_fstatat_beneath() joins in for O_PATH and O_PATH|O_NOFOLLOW: it
	 * must stat the object those open. */
	uint64_t plain = c->flags & ~(uint64_t)O_CLOEXEC;
	if ((impls & DC_IMPL_FSTATAT) &&
	    !((plain == O_PATH || plain == (O_PATH | O_NOFOLLOW)) && !c->mode && !c->expect_einval))
		impls &= ~DC_IMPL_FSTATAT;
	/* safe_realpath_beneath() for O_PATH (trailing link followed), outside
	 * procfs (magic links have no path) and without NO_SYMLINKS. */
	if ((impls & DC_IMPL_REALPATH) &&
	    !(plain == O_PATH && !c->mode && !c->expect_einval && c->dirsel != DC_DIR_PROC &&
	      !(c->resolve & SAFE_RESOLVE_NO_SYMLINKS)))
		impls &= ~DC_IMPL_REALPATH;
	/* safe_opendir_beneath() for O_RDONLY|O_DIRECTORY */
	if ((impls & DC_IMPL_OPENDIR) &&
	    !((plain & ~(uint64_t)O_NONBLOCK) == (O_RDONLY | O_DIRECTORY) && !c->mode &&
	      !c->expect_einval))
		impls &= ~DC_IMPL_OPENDIR;
	/* safe_readlinkat_beneath() for O_PATH|O_NOFOLLOW outside procfs */
	if ((impls & DC_IMPL_READLINK) && !(plain == (O_PATH | O_NOFOLLOW) && !c->mode &&
					    !c->expect_einval && c->dirsel != DC_DIR_PROC))
		impls &= ~DC_IMPL_READLINK;
	/* Without openat2 (valgrind does not know it) the walker is the
	 * reference: the default path must agree with it, and both must be
	 * clean. */
	static int kernel = -1;
	if (kernel < 0)
		kernel = dc_kernel_has_openat2();
	run_impl(t, c, kernel ? 0 : 2, &raw);
	if (!kernel)
		impls &= ~DC_IMPL_WALKER;
	if (kernel) {
		stats_kind[raw.kind]++;
		if (raw.kind == R_ERR && raw.err >= 0 && raw.err < 134)
			stats_err[raw.err]++;
	}

	/* The oracle for this case: the kernel, except where the library is
	 * deliberately stricter (no scope: EINVAL). */
	struct dc_result want = raw;
	if (c->expect_einval) {
		memset(&want, 0, sizeof(want));
		want.kind = R_ERR;
		want.err = EINVAL;
	}
	bool dotdot = c->resolve & SAFE_RESOLVE_NO_DOTDOT;
	bool strict_dotdot = dotdot && !has_dotdot_component(c->path) && !t->dotdot_links &&
			     c->dirsel != DC_DIR_PROC;

	for (int i = 0; i < 6; i++) {
		if (!(impls & (1 << i)))
			continue;
		run_impl(t, c, i + 1, &lib[i]);
		struct dc_result *r = &lib[i];
		bool ok = i >= 2 ? same_object_or_errno(r, &want) : same_result(r, &want);
		if (i == 5)
			ok = same_object_or_errno(r, readlink_expectation(t, &want, &rl_want));
		if (!ok && dotdot && !strict_dotdot && !c->expect_einval)
			ok = r->kind == R_ERR && r->err == EXDEV;
		if (!ok && kernel_restart_eloop(t, c, &want, r, i == 0)) {
			ok = true;
			dc_kernel_quirks++;
		}
		/* The kernel fails a ".." step with EAGAIN on any rename anywhere
		 * in the system; on a busy machine a path with a hundred ".."
		 * may never get through. Then there is no oracle: the result only
		 * has to be clean. */
		if (!ok && kernel && want.kind == R_ERR && want.err == EAGAIN && result_clean(r)) {
			ok = true;
			dc_kernel_eagain++;
		}
		/* The kernel's answer is not always stable: a walk that had to
		 * leave RCU mode (a dentry changed, memory pressure, ...) is
		 * redone with the links of the first attempt still counted, so
		 * long link chains give ELOOP now and then. Ask the kernel again:
		 * an answer it gives too is accepted. */
		if (!ok && kernel && !c->expect_einval && result_clean(r) &&
		    (i < 2 || i == 4)) {
			for (int k = 0; k < 5 && !ok; k++) {
				struct dc_result again;
				run_impl(t, c, 0, &again);
				if (same_result(&again, r)) {
					ok = true;
					dc_kernel_unstable++;
				}
			}
		}
		if (!result_clean(r) || (!kernel && !result_clean(&raw)))
			ok = false;
		if (!ok)
			bad = true;
	}
	if (!bad)
		return 0;

	char cs[2048], rs[DC_REL_MAX * 2 + 200];
	dc_describe_case(c, cs, sizeof(cs));
	out[0] = '\0';
	appendf(out, size, "MISMATCH %s\n", cs);
	describe_result(&raw, rs, sizeof(rs));
	appendf(out, size, "    %s%s%s\n",
		kernel ? "raw openat2:           " : "walker (no openat2):   ", rs,
		c->expect_einval ? " (library must say EINVAL)"
		: dotdot	 ? (strict_dotdot ? " (NO_DOTDOT: no '..' anywhere, must match)"
						  : " (NO_DOTDOT: this or EXDEV)")
				 : "");
	static const char *const label[] = {
		"safe_openat2 default:  ", "safe_openat2 walker:   ", "safe_fstatat_beneath:  ",
		"safe_realpath_beneath: ", "safe_opendir_beneath:  ", "safe_readlinkat_beneath:",
	};
	for (int i = 0; i < 6; i++) {
		if (!(impls & (1 << i)))
			continue;
		describe_result(&lib[i], rs, sizeof(rs));
		appendf(out, size, "    %s%s\n", label[i], rs);
		if (i == 5) {
			describe_result(readlink_expectation(t, &want, &rl_want), rs, sizeof(rs));
			appendf(out, size, "      (expected from the object openat2 gave: %s)\n", rs);
		}
	}
	return 1;
}

/* ---------------------------------------------------------------- the fixed adversarial tree */

const char *const dc_fixed_spec[] = {
	"d root 0755",
	"d out 0755",
	"f out/a",
	"d out/d 0755",
	"f out/d/f",
	"l out/up ../root",
	"f a",
	"d root/a 0755",
	"d root/a/b 0755",
	"d root/a/b/c 0755",
	"d root/d 0755",
	"d root/... 0755",
	"d root/ro 0555",
	"d root/closed 0000",
	"f root/f",
	"f root/a/f",
	"f root/a/b/f",
	"f root/a/b/c/f",
	"f root/..x",
	"p root/fifo",
	"h root/hard root/a/f",
	"l root/up ..",
	"l root/upup ../..",
	"l root/esc ../out/a",
	"l root/escd ../out/d",
	"l root/a/b/c/top ../../../..",
	"l root/a/b/back ../../a/b",
	"l root/abs /a/b",
	"l root/absf /f",
	"l root/absesc /../../out/a",
	"l root/slash /",
	"l root/dot .",
	"l root/self self",
	"l root/loop1 loop2",
	"l root/loop2 loop1",
	"l root/dangle nonexist",
	"l root/dangled d/nonexist",
	"l root/danglex ../nonexist",
	"l root/dangleabs /nonexist",
	"l root/tofile f",
	"l root/tofileslash f/",
	"l root/todir a/b",
	"l root/todirslash a/b/",
	"l root/tofifo fifo",
	"l root/proc /proc/self/root",
	"l root/procfd /proc/self/fd/0",
	"l root/a/rel ../f",
	"l root/a/b/deep ../../../a/b/c/f",
	"l root/d/mid ../a/../d/../a/b",
	"l root/c0 c1",
	"l root/c1 c2",
	"l root/c2 c3",
	"l root/c3 c4",
	"l root/c4 c5",
	"l root/c5 c6",
	"l root/c6 c7",
	"l root/c7 c8",
	"l root/c8 c9",
	"l root/c9 c10",
	"l root/c10 c11",
	"l root/c11 c12",
	"l root/c12 c13",
	"l root/c13 c14",
	"l root/c14 c15",
	"l root/c15 c16",
	"l root/c16 c17",
	"l root/c17 c18",
	"l root/c18 c19",
	"l root/c19 c20",
	"l root/c20 c21",
	"l root/c21 c22",
	"l root/c22 c23",
	"l root/c23 c24",
	"l root/c24 c25",
	"l root/c25 c26",
	"l root/c26 c27",
	"l root/c27 c28",
	"l root/c28 c29",
	"l root/c29 c30",
	"l root/c30 c31",
	"l root/c31 c32",
	"l root/c32 c33",
	"l root/c33 c34",
	"l root/c34 c35",
	"l root/c35 c36",
	"l root/c36 c37",
	"l root/c37 c38",
	"l root/c38 c39",
	"l root/c39 f",
	"l root/c40 c0",
	NULL,
};
