/* SPDX-License-Identifier: MIT */
/*
 * The tree commands of safeopen(1) on the library's confined walk
 * (safe_walk_open(3)): find, chown -R, chmod -R, du and cp -a. Every entry
 * is acted on through the descriptor of its parent that the walk lends and
 * its single name (or, for a directory, its own descriptor), never through a
 * path string and never through a symbolic link.
 */
#define _GNU_SOURCE /* O_PATH, copy_file_range, statx */
#include "tree.h"

#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <getopt.h>
#include <grp.h>
#include <limits.h>
#include <pwd.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#ifndef STATX_TYPE
#include <linux/stat.h> /* struct statx, STATX_*: a C library without statx (musl 1.2.3) */
#endif
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <safeopen.h>

enum { T_OK = 0, T_FAILED = 1, T_USAGE = 2 };


static int tfail(const char *what, int err)
{
	const char *msg = err == EXDEV ? "path escapes the root directory (EXDEV)" :
			  err == EAGAIN ? "directory moved or replaced during the walk (EAGAIN)" :
					  strerror(err);
	fprintf(stderr, "safeopen: %s: %s\n", what, msg);
	return T_FAILED;
}

/* The error of an entry, reported; the walk goes on. */
static int entry_fail(const struct safe_walk_entry *e, int err)
{
	return tfail(e->path, err);
}

/* ------------------------------------------------------------------ find */

int safeopen_find(int rootfd, uint64_t resolve, int argc, char **argv)
{
	const char *path = ".";
	int type = 0; /* S_IF* or 0 */
	const char *glob = NULL;
	bool print0 = false, xdev = false;
	int i = 1;
	if (i < argc && argv[i][0] != '-')
		path = argv[i++];
	for (; i < argc; i++) {
		const char *a = argv[i];
		if (!strcmp(a, "-type") && i + 1 < argc) {
			const char *t = argv[++i];
			if (!strcmp(t, "f"))
				type = S_IFREG;
			else if (!strcmp(t, "d"))
				type = S_IFDIR;
			else if (!strcmp(t, "l"))
				type = S_IFLNK;
			else
				usage_error("find: -type wants f, d or l, got '%s'", t);
		} else if (!strcmp(a, "-name") && i + 1 < argc) {
			glob = argv[++i];
		} else if (!strcmp(a, "-print0")) {
			print0 = true;
		} else if (!strcmp(a, "-print")) {
		} else if (!strcmp(a, "-xdev")) {
			xdev = true;
		} else {
			usage_error("find: unknown or incomplete expression '%s'", a);
		}
	}
	struct safe_walk *w;
	uint64_t flags = resolve | SAFE_WALK_NO_STAT | (xdev ? SAFE_WALK_XDEV : 0);
	if (safe_walk_open(rootfd, path, flags, &w) < 0)
		return tfail(path, errno);
	int ret = T_OK, r;
	struct safe_walk_entry e;
	while ((r = safe_walk_next(w, &e)) > 0) {
		if (e.error && e.visit != SAFE_WALK_LEAF)
			ret = entry_fail(&e, e.error);
		if (e.visit == SAFE_WALK_POST)
			continue;
		if (e.error && e.visit == SAFE_WALK_LEAF) {
			ret = entry_fail(&e, e.error);
			if (!e.stx->stx_mask)
				continue;
		}
		if (type && (e.stx->stx_mode & S_IFMT) != (unsigned int)type)
			continue;
		if (glob && fnmatch(glob, e.name, 0) != 0)
			continue;
		fputs(e.path, stdout);
		putchar(print0 ? '\0' : '\n');
	}
	if (r < 0)
		ret = tfail(path, errno);
	safe_walk_close(w);
	return ret;
}

/* ------------------------------------------------------------------ chown -R, chmod -R */

/* The change of one entry: 0, or -1 with errno (ENOENT: the entry went away
 * under the walk, not an error). */
typedef int (*apply_fn)(const struct safe_walk_entry *e, const void *how);

/* chown -R and chmod -R: walk PATH (a trailing link not followed) and apply
 * the change to every entry once, a directory before its entries; an entry
 * the walk could not look at is reported and the walk goes on. */
static int walk_apply(int rootfd, const char *path, uint64_t flags, apply_fn apply,
		      const void *how)
{
	struct safe_walk *w;
	if (safe_walk_open(rootfd, path, flags, &w) < 0)
		return tfail(path, errno);
	int ret = T_OK, r;
	struct safe_walk_entry e;
	while ((r = safe_walk_next(w, &e)) > 0) {
		if (e.error && !(e.visit == SAFE_WALK_LEAF && e.stx->stx_mask))
			ret = entry_fail(&e, e.error);
		if (e.visit == SAFE_WALK_POST || (e.error && !e.stx->stx_mask))
			continue;
		if (apply(&e, how) < 0 && errno != ENOENT)
			ret = entry_fail(&e, errno);
	}
	if (r < 0)
		ret = tfail(path, errno);
	safe_walk_close(w);
	return ret;
}

struct owner {
	unsigned int uid, gid;
};

/* A directory through its own descriptor; anything else by its single name
 * in its parent, the name itself if it is a link. */
static int apply_owner(const struct safe_walk_entry *e, const void *how)
{
	const struct owner *o = how;
	return e->fd >= 0 ? fchown(e->fd, o->uid, o->gid) :
			    fchownat(e->dirfd, e->name, o->uid, o->gid, AT_SYMLINK_NOFOLLOW);
}

static bool parse_id(const char *s, bool group, unsigned int *id)
{
	char *end;
	errno = 0;
	unsigned long v = strtoul(s, &end, 10);
	if (*s && !*end && !errno && v < (unsigned int)-1) {
		*id = (unsigned int)v;
		return true;
	}
	if (group) {
		struct group *g = getgrnam(s);
		if (g)
			*id = g->gr_gid;
		return g != NULL;
	}
	struct passwd *p = getpwnam(s);
	if (p)
		*id = p->pw_uid;
	return p != NULL;
}

int safeopen_chown(int rootfd, uint64_t resolve, int argc, char **argv)
{
	if (argc != 4 || strcmp(argv[1], "-R"))
		usage_error("chown: usage: chown -R OWNER[:GROUP] PATH");
	char spec[256];
	snprintf(spec, sizeof(spec), "%s", argv[2]);
	char *colon = strchr(spec, ':');
	unsigned int uid = (unsigned int)-1, gid = (unsigned int)-1;
	if (colon)
		*colon = '\0';
	if (*spec && !parse_id(spec, false, &uid))
		usage_error("chown: invalid user '%s'", spec);
	if (colon && colon[1] && !parse_id(colon + 1, true, &gid))
		usage_error("chown: invalid group '%s'", colon + 1);
	const struct owner o = { uid, gid };
	return walk_apply(rootfd, argv[3], resolve | SAFE_WALK_NO_STAT, apply_owner, &o);
}

/* A mode: octal, or symbolic clauses [ugoa]*[+-=][rwxXst]* separated by ','. */
struct modespec {
	bool octal;
	mode_t value;
	const char *sym;
};

static bool check_symbolic(const char *s)
{
	for (;;) {
		while (*s && strchr("ugoa", *s))
			s++;
		if (!*s || !strchr("+-=", *s))
			return false;
		while (*s && strchr("+-=", *s)) {
			s++;
			while (*s && strchr("rwxXst", *s))
				s++;
		}
		if (!*s)
			return true;
		if (*s++ != ',')
			return false;
	}
}

static mode_t apply_mode(const struct modespec *m, mode_t old, bool dir)
{
	if (m->octal)
		return m->value;
	mode_t mode = old & 07777;
	const char *s = m->sym;
	while (*s) {
		mode_t who = 0;
		for (; *s && strchr("ugoa", *s); s++)
			who |= *s == 'u' ? 04700 : *s == 'g' ? 02070 : *s == 'o' ? 01007 : 07777;
		bool all = who == 0;
		if (all) {
			mode_t um = umask(0);
			umask(um);
			who = 07777 & ~um;
		}
		while (*s && strchr("+-=", *s)) {
			char op = *s++;
			mode_t bits = 0;
			for (; *s && strchr("rwxXst", *s); s++) {
				switch (*s) {
				case 'r': bits |= 0444; break;
				case 'w': bits |= 0222; break;
				case 'x': bits |= 0111; break;
				case 'X':
					if (dir || (old & 0111))
						bits |= 0111;
					break;
				case 's': bits |= 06000; break;
				case 't': bits |= 01000; break;
				}
			}
			bits &= who;
			if (op == '+')
				mode |= bits;
			else if (op == '-')
				mode &= ~bits;
			else
				mode = (mode & ~(who & 07777)) | bits;
		}
		if (*s == ',')
			s++;
	}
	return mode;
}

/* A directory through its own descriptor; anything else by its single name,
 * without following it if it became a link. A link has no mode of its own
 * and is never followed: left as it is. */
static int apply_chmod(const struct safe_walk_entry *e, const void *how)
{
	mode_t type = e->stx->stx_mode & S_IFMT;
	if (type == S_IFLNK)
		return 0;
	mode_t mode = apply_mode(how, e->stx->stx_mode, type == S_IFDIR);
	return e->fd >= 0 ? fchmod(e->fd, mode) :
			    safe_fchmodat_beneath(e->dirfd, e->name, mode, SAFE_RESOLVE_BENEATH);
}

int safeopen_chmod(int rootfd, uint64_t resolve, int argc, char **argv)
{
	if (argc != 4 || strcmp(argv[1], "-R"))
		usage_error("chmod: usage: chmod -R MODE PATH");
	struct modespec m = { .octal = false, .sym = argv[2] };
	char *end;
	unsigned long v = strtoul(argv[2], &end, 8);
	if (argv[2][0] >= '0' && argv[2][0] <= '7' && !*end) {
		if (v > 07777)
			usage_error("chmod: invalid mode '%s'", argv[2]);
		m.octal = true;
		m.value = (mode_t)v;
	} else if (!check_symbolic(argv[2])) {
		usage_error("chmod: invalid mode '%s'", argv[2]);
	}
	/* Symbolic modes need the old mode of every entry. */
	return walk_apply(rootfd, argv[3], resolve | (m.octal ? SAFE_WALK_NO_STAT : 0), apply_chmod,
			  &m);
}

/* ------------------------------------------------------------------ du */

/* (dev, ino) of the files with several links already counted. */
struct seen {
	struct seen_id {
		dev_t dev;
		ino_t ino;
	} *v;
	size_t n, cap;
};

static int cmp_id(const void *a, const void *b)
{
	const struct seen_id *x = a, *y = b;
	if (x->dev != y->dev)
		return x->dev < y->dev ? -1 : 1;
	return x->ino < y->ino ? -1 : x->ino > y->ino;
}

/* Open-addressing hash set; true when (dev, ino) was new. */
static bool seen_add(struct seen *s, dev_t dev, ino_t ino)
{
	if (2 * (s->n + 1) > s->cap) {
		size_t ncap = s->cap ? 2 * s->cap : 1024;
		struct seen_id *nv = calloc(ncap, sizeof(*nv));
		if (!nv)
			return true;
		for (size_t i = 0; i < s->cap; i++) {
			if (!s->v[i].ino)
				continue;
			size_t h = (s->v[i].ino * 0x9E3779B97F4A7C15ULL ^ s->v[i].dev) & (ncap - 1);
			while (nv[h].ino)
				h = (h + 1) & (ncap - 1);
			nv[h] = s->v[i];
		}
		free(s->v);
		s->v = nv;
		s->cap = ncap;
	}
	struct seen_id id = { dev, ino ? ino : (ino_t)-1 };
	size_t h = (id.ino * 0x9E3779B97F4A7C15ULL ^ id.dev) & (s->cap - 1);
	while (s->v[h].ino) {
		if (!cmp_id(&s->v[h], &id))
			return false;
		h = (h + 1) & (s->cap - 1);
	}
	s->v[h] = id;
	s->n++;
	return true;
}

int safeopen_du(int rootfd, uint64_t resolve, int argc, char **argv)
{
	bool summary = false;
	int i = 1;
	if (i < argc && !strcmp(argv[i], "-s")) {
		summary = true;
		i++;
	}
	if (i + 1 != argc)
		usage_error("du: usage: du [-s] PATH");
	const char *path = argv[i];
	struct safe_walk *w;
	if (safe_walk_open(rootfd, path, resolve | SAFE_WALK_POSTORDER, &w) < 0)
		return tfail(path, errno);
	/* Bytes (in 512-byte blocks) of the directory at each depth so far. */
	unsigned long long *sum = NULL;
	size_t cap = 0;
	struct seen seen = { 0 };
	int ret = T_OK, r;
	struct safe_walk_entry e;
	while ((r = safe_walk_next(w, &e)) > 0) {
		if (e.error)
			ret = entry_fail(&e, e.error);
		if (e.depth + 2 > cap) {
			size_t ncap = cap ? 2 * cap : 64;
			while (ncap < e.depth + 2)
				ncap *= 2;
			unsigned long long *n = realloc(sum, ncap * sizeof(*n));
			if (!n) {
				ret = tfail(path, ENOMEM);
				break;
			}
			sum = n;
			cap = ncap;
		}
		const struct statx *s = e.stx;
		unsigned long long blocks = (s->stx_mask & STATX_BLOCKS) ? s->stx_blocks : 0;
		if (e.visit == SAFE_WALK_PRE) {
			sum[e.depth] = 0;
			continue;
		}
		if (e.visit != SAFE_WALK_POST && !S_ISDIR(s->stx_mode) && s->stx_nlink > 1 &&
		    !seen_add(&seen, makedev(s->stx_dev_major, s->stx_dev_minor), s->stx_ino))
			continue; /* a hard link counted already */
		if (e.visit == SAFE_WALK_POST) {
			blocks += sum[e.depth];
			if (!summary || e.depth == 0)
				printf("%llu\t%s\n", (blocks + 1) / 2, e.path);
		} else if (e.depth == 0) {
			printf("%llu\t%s\n", (blocks + 1) / 2, e.path);
		}
		if (e.depth > 0)
			sum[e.depth - 1] += blocks;
	}
	if (r < 0)
		ret = tfail(path, errno);
	free(sum);
	free(seen.v);
	safe_walk_close(w);
	return ret;
}

/* ------------------------------------------------------------------ cp -a */

/* Copy the extended attributes of the file open as sfd to the one open as
 * dfd. 0 or an errno (an attribute the destination refuses for lack of
 * privilege, trusted.* as an ordinary user, is left out as cp -a does). */
static int copy_xattrs(int sfd, int dfd)
{
	static char list[65536], val[65536];
	ssize_t n = flistxattr(sfd, list, sizeof(list));
	if (n < 0)
		return errno == ENOTSUP ? 0 : errno;
	for (ssize_t off = 0; off < n; off += (ssize_t)strlen(list + off) + 1) {
		const char *name = list + off;
		ssize_t v = fgetxattr(sfd, name, val, sizeof(val));
		if (v < 0)
			continue;
		if (fsetxattr(dfd, name, val, (size_t)v, 0) < 0 && errno != EPERM && errno != ENOTSUP)
			return errno;
	}
	return 0;
}

static void times_of(const struct statx *s, struct timespec t[2])
{
	t[0].tv_sec = s->stx_atime.tv_sec;
	t[0].tv_nsec = s->stx_atime.tv_nsec;
	t[1].tv_sec = s->stx_mtime.tv_sec;
	t[1].tv_nsec = s->stx_mtime.tv_nsec;
}

/* The destination's directories, by depth: the deepest `held` (at most
 * DST_HELD, fewer under a low RLIMIT_NOFILE) are open in a ring; a level
 * that is not is opened again from the nearest held level above it (or DST's
 * parent) by the names below it: paths of at most PATH_MAX bytes resolved
 * beneath that level, no link followed, never a path from DSTROOT, and the
 * ring is refilled on the way. Under EMFILE the shallowest held level is
 * given back. */
#define DST_HELD 48

struct dst {
	int parent;   /* DST's parent (level -1) */
	const char *last; /* DST's name in it */
	char *path;   /* the destination path of the current directory */
	size_t *ends; /* end of the path at each depth */
	bool *plain;  /* at each depth: a new file there is euid:egid already */
	int fds[DST_HELD];
	size_t lvl[DST_HELD]; /* the level whose descriptor fds[i] is */
	size_t held;
	size_t cap;
	size_t pin; /* the level the current entry is copied into: never given back */
};

/* Out of descriptors: close the shallowest held level but `keep`. */
static bool dst_room(struct dst *d, int err, size_t keep)
{
	if (err != EMFILE && err != ENFILE)
		return false;
	size_t best = DST_HELD;
	for (size_t i = 0; i < d->held; i++)
		if (d->fds[i] >= 0 && d->lvl[i] != keep && d->lvl[i] != d->pin &&
		    (best == DST_HELD || d->lvl[i] < d->lvl[best]))
			best = i;
	if (best == DST_HELD)
		return false;
	close(d->fds[best]);
	d->fds[best] = -1;
	return true;
}

/* Descriptors kept for copying an entry (the file and its copy, one the
 * library may need): held while the walk and the ring open theirs, so that
 * under a low RLIMIT_NOFILE they give theirs back first (EMFILE), and
 * closed to copy an entry. */
#define DST_RESERVE 3

static void reserve_take(int r[DST_RESERVE], int fd)
{
	for (int i = 0; i < DST_RESERVE; i++)
		if (r[i] < 0)
			r[i] = fcntl(fd, F_DUPFD_CLOEXEC, 0);
}

static void reserve_release(int r[DST_RESERVE])
{
	for (int i = 0; i < DST_RESERVE; i++)
		if (r[i] >= 0) {
			close(r[i]);
			r[i] = -1;
		}
}

/* Level l's descriptor if it is held, else -1. */
static int dst_held(const struct dst *d, size_t l)
{
	size_t i = l % d->held;
	return d->fds[i] >= 0 && d->lvl[i] == l ? d->fds[i] : -1;
}

/* Open the names path[from..to) (whole names, no leading '/') beneath dfd,
 * in pieces of at most PATH_MAX - 1 bytes. */
static int dst_open_below(struct dst *d, int dfd, size_t from, size_t to, size_t keep)
{
	int tmp = -1;
	while (from < to) {
		size_t end = to;
		if (end - from >= PATH_MAX) {
			end = from + PATH_MAX - 1;
			while (end > from && d->path[end] != '/')
				end--;
			if (end == from) {
				errno = ENAMETOOLONG;
				break;
			}
		}
		char save = d->path[end];
		d->path[end] = '\0';
		int fd;
		do
			fd = safe_openat_beneath(tmp >= 0 ? tmp : dfd, d->path + from,
						 O_RDONLY | O_DIRECTORY | O_NOFOLLOW,
						 SAFE_RESOLVE_BENEATH | SAFE_RESOLVE_NO_SYMLINKS);
		while (fd < 0 && dst_room(d, errno, keep));
		d->path[end] = save;
		if (tmp >= 0) {
			int e = errno;
			close(tmp);
			errno = e;
		}
		tmp = fd;
		if (fd < 0)
			return -1;
		from = end < to ? end + 1 : to;
	}
	return tmp;
}

static int dst_fd(struct dst *d, size_t depth)
{
	int fd = dst_held(d, depth);
	if (fd >= 0)
		return fd;
	/* The nearest held level above (SIZE_MAX: DST's parent). */
	size_t base = SIZE_MAX;
	for (size_t k = depth; k-- > 0;)
		if (dst_held(d, k) >= 0) {
			base = k;
			break;
		}
	size_t first = depth + 1 > d->held ? depth + 1 - d->held : 0;
	if (base != SIZE_MAX && first <= base)
		first = base + 1;
	for (size_t l = first; l <= depth; l++) {
		if (l == first) {
			/* From base: DST's name first when base is its parent. */
			size_t from = base == SIZE_MAX ? 0 : d->ends[base] + 1;
			if (base == SIZE_MAX) {
				int top;
				do
					top = safe_openat_beneath(d->parent, d->last,
								  O_RDONLY | O_DIRECTORY | O_NOFOLLOW,
								  SAFE_RESOLVE_BENEATH |
									  SAFE_RESOLVE_NO_SYMLINKS);
				while (top < 0 && dst_room(d, errno, SIZE_MAX));
				if (top < 0 || l == 0) {
					fd = top;
				} else {
					fd = dst_open_below(d, top, d->ends[0] + 1, d->ends[l], SIZE_MAX);
					close(top);
				}
			} else {
				fd = dst_open_below(d, dst_held(d, base), from, d->ends[l], base);
			}
		} else {
			fd = dst_open_below(d, dst_held(d, l - 1), d->ends[l - 1] + 1, d->ends[l], l - 1);
		}
		if (fd < 0)
			return -1;
		size_t i = l % d->held;
		if (d->fds[i] >= 0)
			close(d->fds[i]);
		d->fds[i] = fd;
		d->lvl[i] = l;
	}
	return dst_held(d, depth);
}

/* Level k's descriptor without touching the ring: the held one (*own
 * false), else a new one (*own true) opened from the deepest held level
 * above it, or DST's parent, by the names below. */
static int dst_peek(struct dst *d, size_t k, bool *own)
{
	*own = false;
	int fd = dst_held(d, k);
	if (fd >= 0)
		return fd;
	*own = true;
	for (size_t j = k; j-- > 0;)
		if (dst_held(d, j) >= 0)
			return dst_open_below(d, dst_held(d, j), d->ends[j] + 1, d->ends[k], j);
	int top = safe_openat_beneath(d->parent, d->last, O_RDONLY | O_DIRECTORY | O_NOFOLLOW,
				      SAFE_RESOLVE_BENEATH | SAFE_RESOLVE_NO_SYMLINKS);
	if (top < 0 || k == 0)
		return top;
	fd = dst_open_below(d, top, d->ends[0] + 1, d->ends[k], SIZE_MAX);
	int err = errno;
	close(top);
	errno = err;
	return fd;
}

/* Hard links: source (dev, ino) -> destination path of its first copy. */
struct hl {
	dev_t dev;
	ino_t ino;
	char *path;
};

static int copy_data(int in, int out)
{
	for (;;) {
		ssize_t n = copy_file_range(in, NULL, out, NULL, 1 << 30, 0);
		if (n == 0)
			return 0;
		if (n > 0)
			continue;
		if (errno != EXDEV && errno != ENOSYS && errno != EINVAL && errno != EOPNOTSUPP)
			return errno;
		break;
	}
	static char buf[1 << 17];
	for (;;) {
		ssize_t n = read(in, buf, sizeof(buf));
		if (n == 0)
			return 0;
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return errno;
		}
		for (ssize_t o = 0; o < n;) {
			ssize_t k = write(out, buf + o, (size_t)(n - o));
			if (k < 0) {
				if (errno == EINTR)
					continue;
				return errno;
			}
			o += k;
		}
	}
}

/*
 * Copy the regular file (sdir, name) to (ddir, name), published whole: with
 * its data, owner, extended attributes, final mode and times before it has a
 * name (safe_tmpfile_link() publishes it in one linkat). `chown`: the owner
 * must be set (see dir_plain() for when it need not).
 */
static int copy_file(int sdir, const char *name, const struct statx *s, int ddir, bool chown)
{
	int in = openat(sdir, name, O_RDONLY | O_NOFOLLOW | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
	if (in < 0)
		return errno;
	struct stat st;
	if (fstat(in, &st) < 0 || !S_ISREG(st.st_mode) || st.st_ino != s->stx_ino) {
		close(in);
		return EAGAIN; /* swapped since it was listed */
	}
	struct safe_tmpfile *tmp;
	if (safe_tmpfile_open(ddir, name, s->stx_mode & 07777, SAFE_RESOLVE_BENEATH, &tmp) < 0) {
		int err = errno;
		close(in);
		return err;
	}
	int fd = safe_tmpfile_fd(tmp);
	int err = copy_data(in, fd);
	if (!err && chown && fchown(fd, s->stx_uid, s->stx_gid) < 0)
		err = errno;
	if (!err)
		err = copy_xattrs(in, fd);
	close(in);
	/* The times last before the link, which changes only the ctime. */
	struct timespec t[2];
	times_of(s, t);
	if (!err && futimens(fd, t) < 0)
		err = errno;
	if (err) {
		safe_tmpfile_discard(tmp);
		return err;
	}
	fd = safe_tmpfile_link(tmp, NULL, 0, 0);
	if (fd < 0) {
		err = errno;
		safe_tmpfile_discard(tmp);
		return err;
	}
	close(fd);
	return 0;
}

/*
 * Does a file created in the directory open as fd (one this copy created)
 * belong to euid:egid without an fchown? Its owner is the creator's fsuid
 * and its group the creator's fsgid, or the directory's group where the
 * directory is set-group-ID or the mount says so (grpid): all of them are
 * euid:egid when the directory itself shows euid:egid (a filesystem that
 * maps owners, vfat's uid=, shows something else and gets the fchown).
 */
static bool dir_plain(int fd, uid_t euid, gid_t egid)
{
	struct stat st;
	return fstat(fd, &st) == 0 && st.st_uid == euid && st.st_gid == egid;
}

int safeopen_cp(int argc, char **argv, uint64_t resolve)
{
	if (argc != 6 || strcmp(argv[1], "-a"))
		usage_error("cp: usage: cp -a SRCROOT SRC DSTROOT DST");
	int sroot = open(argv[2], O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (sroot < 0)
		return tfail(argv[2], errno);
	int droot = open(argv[4], O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (droot < 0) {
		close(sroot);
		return tfail(argv[4], errno);
	}
	const char *src = argv[3], *dstpath = argv[5];
	uid_t euid = geteuid();
	gid_t egid = getegid();
	bool owners = euid == 0;
	struct dst d = { .parent = -1, .cap = 64, .held = DST_HELD, .pin = SIZE_MAX };
	/* The ring leaves the walk and the copy of a file their descriptors
	 * under a low limit (the walk itself gives its own back). */
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < 3 + 12 + DST_HELD)
		d.held = rl.rlim_cur < 3 + 12 + 2 ? 2 : (size_t)rl.rlim_cur - 3 - 12;
	int rsv[DST_RESERVE] = { -1, -1, -1 };
	reserve_take(rsv, droot);
	/* Modes are the source's, not filtered by the umask (as cp -a): the
	 * files, devices and FIFOs get them at creation (directories are
	 * created 0700 and get theirs once filled). */
	umask(0);
	for (size_t i = 0; i < DST_HELD; i++)
		d.fds[i] = -1;
	size_t plen = strlen(dstpath);
	size_t pcap = plen + 256;
	d.path = malloc(pcap);
	d.ends = malloc(d.cap * sizeof(*d.ends));
	d.plain = malloc(d.cap * sizeof(*d.plain));
	struct hl *hl = NULL;
	size_t nhl = 0, hlcap = 0;
	int ret = T_OK, r;
	struct safe_walk *w = NULL;
	if (!d.path || !d.ends || !d.plain) {
		ret = tfail("cp", ENOMEM);
		goto out;
	}
	if (safe_walk_open(sroot, src, resolve | SAFE_WALK_POSTORDER, &w) < 0) {
		ret = tfail(src, errno);
		goto out;
	}
	/* The destination's parent, resolved beneath DSTROOT; DST is created. */
	char last[NAME_MAX + 1];
	while (plen > 1 && dstpath[plen - 1] == '/')
		plen--;
	memcpy(d.path, dstpath, plen);
	d.path[plen] = '\0';
	int dparent = safe_open_parent_beneath(droot, d.path, SAFE_RESOLVE_BENEATH, last,
					       sizeof(last));
	d.parent = dparent;
	d.last = last;
	if (dparent < 0) {
		ret = tfail(dstpath, errno);
		goto out;
	}
	struct safe_walk_entry e;
	while ((r = (reserve_take(rsv, droot), safe_walk_next(w, &e))) > 0) {
		if (e.error && e.visit != SAFE_WALK_MOUNT) {
			ret = entry_fail(&e, e.error);
			if (e.visit == SAFE_WALK_LEAF)
				continue;
		}
		const struct statx *s = e.stx;
		size_t depth = e.depth;
		const char *name = depth == 0 ? last : e.name;
		/* The destination directory of this entry (its parent). */
		int ddir;
		if (depth == 0) {
			ddir = dparent;
			d.pin = SIZE_MAX;
		} else {
			d.pin = SIZE_MAX;
			ddir = dst_fd(&d, depth - 1);
			d.pin = depth - 1;
			if (ddir < 0) {
				ret = entry_fail(&e, errno);
				if (e.visit == SAFE_WALK_PRE)
					(void)safe_walk_skip(w);
				continue;
			}
		}
		/* Its destination path: the parent's, then "/name". */
		size_t at = depth == 0 ? 0 : d.ends[depth - 1];
		size_t need = at + strlen(name) + 2;
		if (need > pcap) {
			while (pcap < need)
				pcap *= 2;
			char *np = realloc(d.path, pcap);
			if (!np) {
				ret = tfail("cp", ENOMEM);
				break;
			}
			d.path = np;
		}
		if (depth > 0) {
			d.path[at++] = '/';
			strcpy(d.path + at, name);
		} else {
			strcpy(d.path, dstpath);
			d.path[plen] = '\0';
		}
		size_t end = depth == 0 ? plen : at + strlen(name);
		if (e.visit == SAFE_WALK_PRE) {
			if (depth + 1 > d.cap) {
				size_t *ne = realloc(d.ends, 2 * d.cap * sizeof(*ne));
				if (ne)
					d.ends = ne;
				bool *np = ne ? realloc(d.plain, 2 * d.cap * sizeof(*np)) : NULL;
				if (!np) {
					ret = tfail("cp", ENOMEM);
					break;
				}
				d.plain = np;
				d.cap *= 2;
			}
			d.ends[depth] = end;
			int *slot = &d.fds[depth % d.held];
			if (*slot >= 0)
				close(*slot);
			*slot = -1;
			d.lvl[depth % d.held] = depth;
			if (mkdirat(ddir, name, 0700) < 0) {
				ret = entry_fail(&e, errno);
				(void)safe_walk_skip(w);
				continue;
			}
			do
				*slot = openat(ddir, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			while (*slot < 0 && dst_room(&d, errno, depth == 0 ? SIZE_MAX : depth - 1));
			if (*slot < 0) {
				ret = entry_fail(&e, errno);
				(void)safe_walk_skip(w);
				continue;
			}
			d.plain[depth] = owners && dir_plain(*slot, euid, egid);
			continue;
		}
		if (e.visit == SAFE_WALK_POST) {
			/* Owner, mode, xattrs and times once the contents are in. */
			int dfd = dst_fd(&d, depth);
			if (dfd < 0)
				continue; /* reported at its PRE */
			int err = 0;
			if (owners && fchown(dfd, s->stx_uid, s->stx_gid) < 0)
				err = errno;
			if (!err && e.fd >= 0)
				err = copy_xattrs(e.fd, dfd);
			if (!err && fchmod(dfd, s->stx_mode & 07777) < 0)
				err = errno;
			struct timespec t[2];
			times_of(s, t);
			if (!err && futimens(dfd, t) < 0)
				err = errno;
			if (err)
				ret = entry_fail(&e, err);
			close(dfd);
			d.fds[depth % d.held] = -1;
			continue;
		}
		if (e.visit == SAFE_WALK_MOUNT)
			continue;
		reserve_release(rsv);
		/* A hard link of a file copied already becomes a link to its copy. */
		mode_t type = s->stx_mode & S_IFMT;
		if (type != S_IFDIR && s->stx_nlink > 1) {
			dev_t dev = makedev(s->stx_dev_major, s->stx_dev_minor);
			struct hl *found = NULL;
			for (size_t k = 0; k < nhl && !found; k++)
				if (hl[k].dev == dev && hl[k].ino == s->stx_ino)
					found = &hl[k];
			if (found) {
				/* From the deepest level of this entry's parent
				 * chain on the first copy's path (never a path
				 * from DSTROOT; the ring is left as it is). */
				int afd = dparent;
				bool own = false;
				const char *rel = found->path + (plen - strlen(last));
				size_t same = 0;
				while (found->path[same] && found->path[same] == d.path[same])
					same++;
				for (size_t k = depth; k-- > 0;) {
					size_t n = d.ends[k];
					if (n <= same && found->path[n] == '/') {
						afd = dst_peek(&d, k, &own);
						rel = found->path + n + 1;
						break;
					}
				}
				if (afd < 0 || safe_linkat_beneath(afd, rel, ddir, name,
								   SAFE_RESOLVE_BENEATH) < 0)
					ret = entry_fail(&e, errno);
				if (own && afd >= 0)
					close(afd);
				continue;
			}
			if (nhl == hlcap) {
				hlcap = hlcap ? 2 * hlcap : 64;
				struct hl *n = realloc(hl, hlcap * sizeof(*n));
				if (!n) {
					ret = tfail("cp", ENOMEM);
					break;
				}
				hl = n;
			}
			hl[nhl++] = (struct hl){ dev, s->stx_ino, strdup(d.path) };
		}
		int err = 0;
		if (type == S_IFREG) {
			/* A file created in a plain directory is euid:egid. */
			bool plain = depth > 0 && d.plain[depth - 1] && s->stx_uid == euid &&
				     s->stx_gid == egid;
			err = copy_file(e.dirfd, e.name, s, ddir, owners && !plain);
		} else if (type == S_IFLNK) {
			char body[PATH_MAX + 1];
			ssize_t n = readlinkat(e.dirfd, e.name, body, PATH_MAX);
			if (n < 0) {
				err = errno;
			} else {
				body[n] = '\0';
				struct timespec t[2];
				times_of(s, t);
				if (symlinkat(body, ddir, name) < 0 ||
				    (owners && fchownat(ddir, name, s->stx_uid, s->stx_gid,
							AT_SYMLINK_NOFOLLOW) < 0) ||
				    utimensat(ddir, name, t, AT_SYMLINK_NOFOLLOW) < 0)
					err = errno;
			}
		} else if (type == S_IFIFO || type == S_IFCHR || type == S_IFBLK || type == S_IFSOCK) {
			dev_t rdev = makedev(s->stx_rdev_major, s->stx_rdev_minor);
			struct timespec t[2];
			times_of(s, t);
			if (mknodat(ddir, name, s->stx_mode & (S_IFMT | 07777), rdev) < 0 ||
			    (owners && fchownat(ddir, name, s->stx_uid, s->stx_gid,
						AT_SYMLINK_NOFOLLOW) < 0) ||
			    safe_fchmodat_beneath(ddir, name, s->stx_mode & 07777,
						  SAFE_RESOLVE_BENEATH) < 0 ||
			    utimensat(ddir, name, t, AT_SYMLINK_NOFOLLOW) < 0)
				err = errno;
		}
		if (err)
			ret = entry_fail(&e, err);
	}
	if (r < 0)
		ret = tfail(src, errno);
	close(dparent);
out:
	reserve_release(rsv);
	safe_walk_close(w);
	for (size_t i = 0; i < DST_HELD; i++)
		if (d.fds[i] >= 0)
			close(d.fds[i]);
	for (size_t k = 0; k < nhl; k++)
		free(hl[k].path);
	free(hl);
	free(d.path);
	free(d.ends);
	free(d.plain);
	close(sroot);
	close(droot);
	return ret;
}
