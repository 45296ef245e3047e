/* SPDX-License-Identifier: MIT */
/*
 * bench: the shapes (the paths each row opens) and the test tree they
 * resolve in.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <linux/magic.h>
#include <string.h>
#include <sys/statfs.h>
#include <unistd.h>

#include "bench.h"


void init_shapes(void)
{
	static const struct {
		const char *key, *label, *path, *expect;
		int comps;
		bool in_root, create, links;
	} main_shapes[NR_MAIN] = {
		{ "one", "1 component", "f", "f", 1, false, false },
		{ "deep8", "8 dirs deep", "d/d/d/d/d/d/d/d/f", "d/d/d/d/d/d/d/d/f", 9, false, false },
		{ "symlinks3", "3 rel symlinks", "sym/la/lb/lc/file", "sym/ra/rb/rc/file", 5, false,
		  false, true },
		{ "abslink", "abs link INROOT", "abs/lnk", "abs/tgt/file", 2, true, false, true },
		{ "dotdots", "a/b/../b/c/../..", "a/b/../b/c/../../a/b/file", "a/a/b/file", 10,
		  false, false },
		{ "comp64", "64 components", NULL, NULL, 64, false, false },
		/* d/ x 300, then "../f": the walker holds only the deepest 32 levels */
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
			s->links = main_shapes[i].links;
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

int build_tree(int rootfd)
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
					    "abs/tgt", "big", "new", "tmp", "a", "a/b", "a/b/c",
					    "a/a", "a/a/b" };
	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++)
		if (mkdirat(rootfd, dirs[i], 0755) < 0)
			return -1;
	if (touch(rootfd, "sym/ra/rb/rc/file") < 0 || symlinkat("ra", rootfd, "sym/la") < 0 ||
	    symlinkat("rb", rootfd, "sym/ra/lb") < 0 ||
	    symlinkat("../rb/rc", rootfd, "sym/ra/rb/lc") < 0)
		return -1;
	if (touch(rootfd, "abs/tgt/file") < 0 || symlinkat("/abs/tgt/file", rootfd, "abs/lnk") < 0)
		return -1;
	if (touch(rootfd, "a/a/b/file") < 0)
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

void remove_tree(void)
{
	if (g.rootfd >= 0) {
		close(g.rootfd);
		g.rootfd = -1;
	}
	if (g.root[0] && nftw(g.root, rm_entry, 32, FTW_DEPTH | FTW_PHYS | FTW_MOUNT) != 0)
		fprintf(stderr, "bench: could not remove %s: %s\n", g.root, strerror(errno));
}

const char *fs_name(int fd)
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
