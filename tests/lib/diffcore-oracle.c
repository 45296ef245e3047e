/* SPDX-License-Identifier: MIT */
/*
 * Differential core: run one case through the kernel's openat2(2) (the
 * oracle) and the library. The library's default path and its userspace
 * walker must return the same object (st_dev/st_ino, access mode,
 * O_PATH-ness) or the same errno, and a creating open must create the same
 * name with the same mode and leave nothing else behind.
 */
#include "config.h"

#include "diffcore-internal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "safeopen.h"

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
				dc_appendf(found, fsize, "%s/%s", d->path, de->d_name);
			else
				dc_appendf(leftover, lsize, "%s%s/%s", leftover[0] ? ", " : "",
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
		dc_setf(buf, size, "procfs object type 0%o", (unsigned)(st->st_mode & S_IFMT));
	else
		dc_setf(buf, size, "object dev %lu ino %lu", (unsigned long)st->st_dev,
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


/* The result names the tree's object st is, or describes an unknown one. */
static void classify(const struct dc_tree *t, const struct stat *st, struct dc_result *res)
{
	const struct dc_obj *o = find_obj(t, st->st_dev, st->st_ino);
	res->kind = o ? R_OBJ : R_UNKNOWN;
	if (o)
		dc_setf(res->what, sizeof(res->what), "%s", o->path);
	else
		describe_unknown(t, st, res->what, sizeof(res->what));
}
/* Open a canonical relative path one component at a time with
 * O_PATH|O_NOFOLLOW (no library, no openat2): fails if a non-final
 * component is a symlink or not a directory. */
static int open_plain(int dfd, const char *path)
{
	char comps[PATH_MAX];
	dc_setf(comps, sizeof(comps), "%s", path);
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
		dc_setf(res->what, sizeof(res->what), "link -> %s", body);
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
			classify(t, &st, res);
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
				   !dc_has_dotdot_component(buf) && strncmp(buf, "./", 2) &&
				   !strstr(buf, "/./") && (n < 2 || strcmp(buf + n - 2, "/."))));
		int fd = canonical ? open_plain(dfd, buf) : -1;
		struct stat st;
		if (fd < 0 || fstat(fd, &st) < 0) {
			dc_setf(res->what, sizeof(res->what), "non-canonical \"%.200s\" (%s)", buf,
			     canonical ? strerror(errno) : "syntax");
		} else {
			classify(t, &st, res);
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
		classify(t, &st, res);
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
		dc_setf(res->what, sizeof(res->what), "fstat failed: %s", strerror(errno));
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
		dc_setf(res->what, sizeof(res->what), "%s", o->path);
	} else if (S_ISREG(st.st_mode) && st.st_nlink == 0 &&
		   (c->flags & O_TMPFILE & ~O_DIRECTORY)) {
		/* The directory an unnamed file lives in: /proc/self/fd/N reads
		 * "<dir>/#<ino> (deleted)". */
		char link[64], target[PATH_MAX];
		dc_setf(link, sizeof(link), "/proc/self/fd/%d", fd);
		ssize_t n = readlink(link, target, sizeof(target) - 1);
		target[n > 0 ? n : 0] = '\0';
		char *slash = strrchr(target, '/');
		if (slash)
			*slash = '\0';
		size_t blen = strlen(t->base);
		const char *rel = !strncmp(target, t->base, blen) ? target + blen : target;
		res->kind = R_TMPFILE;
		dc_setf(res->what, sizeof(res->what), "unnamed file in %s mode 0%o", *rel ? rel : "/",
		     (unsigned)(st.st_mode & 07777));
	} else if (creating) {
		char found[DC_REL_MAX + 64] = "";
		scan_new(t, st.st_dev, st.st_ino, found, sizeof(found), res->leftover,
			 sizeof(res->leftover));
		res->kind = found[0] ? R_CREATED : R_UNKNOWN;
		dc_setf(res->what, sizeof(res->what), "created %s mode 0%o",
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
		dc_appendf(buf, size, "-1 %s (%s)",
			strerrorname_np(r->err) ? strerrorname_np(r->err) : "?", strerror(r->err));
	else
		dc_appendf(buf, size, "fd: %s [F_GETFL 0%o%s]", r->what, (unsigned)r->fl,
			r->cloexec ? "" : ", NOT O_CLOEXEC");
	if (r->leftover[0])
		dc_appendf(buf, size, "; LEFT BEHIND: %s", r->leftover);
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
		dc_setf(out->what, sizeof(out->what), "link -> %s", body);
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
	       (dc_has_dotdot_component(c->path) || t->dotdot_links);
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
	bool strict_dotdot = dotdot && !dc_has_dotdot_component(c->path) && !t->dotdot_links &&
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
		 * an answer it gives too is accepted (for every function whose
		 * answer is compared with the kernel's directly: realpath, stat
		 * and opendir, whose walks are the walker's or the fast path's,
		 * as well as both opens, and readlink, whose expectation follows
		 * from the kernel's open). A first answer of ELOOP is asked about
		 * up to 20 times: while other processes rename (a parallel make
		 * check does), the retry can be forced several times in a row. */
		if (!ok && kernel && !c->expect_einval && result_clean(r)) {
			int asks = want.kind == R_ERR && want.err == ELOOP ? 20 : 5;
			for (int k = 0; k < asks && !ok; k++) {
				struct dc_result again, rl;
				run_impl(t, c, 0, &again);
				if (i == 5)
					ok = same_object_or_errno(r, readlink_expectation(t, &again, &rl));
				else
					ok = i >= 2 ? same_object_or_errno(&again, r)
						    : same_result(&again, r);
				if (ok)
					dc_kernel_unstable++;
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
	dc_appendf(out, size, "MISMATCH %s\n", cs);
	describe_result(&raw, rs, sizeof(rs));
	dc_appendf(out, size, "    %s%s%s\n",
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
		dc_appendf(out, size, "    %s%s\n", label[i], rs);
		if (i == 5) {
			describe_result(readlink_expectation(t, &want, &rl_want), rs, sizeof(rs));
			dc_appendf(out, size, "      (expected from the object openat2 gave: %s)\n", rs);
		}
	}
	return 1;
}
