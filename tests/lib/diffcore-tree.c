/* SPDX-License-Identifier: MIT */
/*
 * Differential core: create a tree from its spec, index its objects
 * (st_dev/st_ino -> path), and tear it down again.
 */
#include "config.h"

#include "diffcore-internal.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

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
		dc_setf(abs, sizeof(abs), "%s/%s", t->base, path);
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
		dc_setf(from, sizeof(from), "%s/%s", t->base, path);
		dc_setf(to, sizeof(to), "%s/%s", t->base, rest);
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
		dc_setf(t->errbuf, sizeof(t->errbuf), "open %s: %s", t->base, strerror(errno));
		return -1;
	}
	for (size_t k = 0; k < t->nspec; k++) {
		size_t i = build_order(t, k);
		if (build_line(t, t->spec[i]) < 0) {
			dc_setf(t->errbuf, sizeof(t->errbuf), "building '%s': %s", t->spec[i],
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
		dc_setf(t->errbuf, sizeof(t->errbuf), "opening the tree's fds: %s", strerror(errno));
		return -1;
	}
	struct stat pst;
	t->proc_dev = fstat(t->procfd, &pst) == 0 ? pst.st_dev : 0;
	if (index_all(t) < 0) {
		dc_setf(t->errbuf, sizeof(t->errbuf), "indexing: %s", strerror(errno));
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

/* A directory without read or search permission (a case may leave one) is
 * only made readable when nftw() reaches it, and nftw() does not enter it
 * in that pass (FTW_DNR): each pass opens one more level of such nesting,
 * which matters without privilege (root reads and removes them anyway). */
int dc_rmtree_below(const char *dir)
{
	int r = -1;
	for (int pass = 0; pass < 16 && r != 0; pass++) {
		(void)nftw(dir, chmod_entry, 16, FTW_PHYS);
		r = nftw(dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
	}
	return r;
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
			dc_setf(abs, sizeof(abs), "%s/%s", t->base, line + 2);
		} else if (line[0] == 'b') {
			dc_setf(abs, sizeof(abs), "%s/%s", t->base, strchr(line + 2, ' ') + 1);
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
