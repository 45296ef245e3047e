/* SPDX-License-Identifier: MIT */
/*
 * Differential core: random cases (dirfd, path, open flags, mode, resolve
 * bits) for a tree, and their symbolic description for reports.
 */
#include "config.h"

#include "diffcore-internal.h"

#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "safeopen.h"

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
		dc_appendf(buf, size, "/");
	else if (dc_chance(r, 5))
		dc_appendf(buf, size, "../");
	char comps[DC_REL_MAX];
	memcpy(comps, rel, strlen(rel) + 1);
	bool first = true;
	for (char *save = NULL, *tok = strtok_r(comps, "/", &save); tok;
	     tok = strtok_r(NULL, "/", &save)) {
		if (!first)
			dc_appendf(buf, size, dc_chance(r, 5) ? "//" : "/");
		first = false;
		if (dc_chance(r, 6))
			dc_appendf(buf, size, "./");
		if (dc_chance(r, 6) && t->nnames)
			dc_appendf(buf, size, "%s/../", t->names[dc_below(r, (uint32_t)t->nnames)]);
		dc_appendf(buf, size, "%s", tok);
	}
	uint32_t tail = dc_below(r, 100);
	if (tail < 10)
		dc_appendf(buf, size, "/");
	else if (tail < 14)
		dc_appendf(buf, size, "/.");
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
			dc_appendf(buf, size, "a/");
		return;
	}
	if (special == 2) {
		/* a component longer than NAME_MAX */
		for (int i = 0; i < NAME_MAX + 1; i++)
			dc_appendf(buf, size, "n");
		return;
	}
	if (special == 3) {
		/* many components, still below PATH_MAX */
		for (int i = 0; i < 300; i++)
			dc_appendf(buf, size, "%s", dc_chance(r, 50) ? "./" : "d/../");
		dc_appendf(buf, size, "%s",
			t->nnames ? t->names[dc_below(r, (uint32_t)t->nnames)] : "a");
		return;
	}
	if (dc_chance(r, 12))
		dc_appendf(buf, size, dc_chance(r, 80) ? "/" : "//");
	int n = 1 + (int)dc_below(r, 6);
	for (int i = 0; i < n; i++) {
		if (i)
			dc_appendf(buf, size, dc_chance(r, 6) ? "//" : "/");
		uint32_t k = dc_below(r, 100);
		if (k < 62 && t->nnames)
			dc_appendf(buf, size, "%s", t->names[dc_below(r, (uint32_t)t->nnames)]);
		else if (k < 80)
			dc_appendf(buf, size, "..");
		else if (k < 90)
			dc_appendf(buf, size, ".");
		else if (k < 95)
			dc_appendf(buf, size, "zz");
		else
			dc_appendf(buf, size, "root");
	}
	uint32_t tail = dc_below(r, 100);
	if (tail < 12)
		dc_appendf(buf, size, "/");
	else if (tail < 16)
		dc_appendf(buf, size, "/.");
	else if (tail < 18)
		dc_appendf(buf, size, "//");
	else if (tail < 20)
		dc_appendf(buf, size, "/..");
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
		dc_appendf(buf, size, "fd/%d", fd);
		break;
	case 1:
		dc_appendf(buf, size, "fd/%d/%s", fd,
			t->nnames ? t->names[dc_below(r, (uint32_t)t->nnames)] : "a");
		break;
	case 2:
		dc_appendf(buf, size, "task/%d/fd/%d", getpid(), fd);
		break;
	default:
		dc_appendf(buf, size, "%s", fixed[dc_below(r, sizeof(fixed) / sizeof(fixed[0]))]);
		break;
	}
	if (dc_chance(r, 10))
		dc_appendf(buf, size, "/");
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
		dc_appendf(buf, size, "O_RDONLY");
		break;
	case O_WRONLY:
		dc_appendf(buf, size, "O_WRONLY");
		break;
	default:
		dc_appendf(buf, size, "O_RDWR");
		break;
	}
	uint64_t rest = f & ~(uint64_t)O_ACCMODE;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (rest & names[i].bit) {
			dc_appendf(buf, size, "|%s", names[i].name);
			rest &= ~names[i].bit;
		}
	}
	if (rest)
		dc_appendf(buf, size, "|0x%llx", (unsigned long long)rest);
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
			dc_appendf(buf, size, "%s%s", buf[0] ? "|" : "", names[i].name);
			res &= ~names[i].bit;
		}
	}
	if (res)
		dc_appendf(buf, size, "%s0x%llx", buf[0] ? "|" : "", (unsigned long long)res);
	if (!buf[0])
		dc_appendf(buf, size, "0");
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
		dc_appendf(buf, size, "<%zu bytes: \"%.40s...\">", len, s);
		return;
	}
	dc_appendf(buf, size, "\"");
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (*p < 0x20 || *p >= 0x7f || *p == '"' || *p == '\\')
			dc_appendf(buf, size, "\\x%02x", *p);
		else
			dc_appendf(buf, size, "%c", *p);
	}
	dc_appendf(buf, size, "\"");
}

void dc_describe_case(const struct dc_case *c, char *buf, size_t size)
{
	char fl[256], res[256], q[1200];
	describe_flags(c->flags, fl, sizeof(fl));
	describe_resolve(c->resolve, res, sizeof(res));
	quote(c->path, q, sizeof(q));
	buf[0] = '\0';
	dc_appendf(buf, size, "dirfd=%s path=%s flags=%s mode=0%llo resolve=%s",
		dirsel_name(c->dirsel), q, fl, (unsigned long long)c->mode, res);
}
