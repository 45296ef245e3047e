/* SPDX-License-Identifier: MIT */
/*
 * Differential core: random tree specs (dc_tree_generate) and the fixed
 * adversarial tree of the libFuzzer target (dc_fixed_spec). See the spec
 * syntax in diffcore.h; diffcore-tree.c turns a spec into files.
 */
#include "config.h"

#include "diffcore-internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* ---------------------------------------------------------------- tree generation */

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
		dc_appendf(buf, size, "../");
}

/* A random junk path of tree names, ".", "..", empty components. */
static void junk_path(const struct dc_tree *t, struct dc_rng *r, char *buf, size_t size)
{
	buf[0] = '\0';
	if (dc_chance(r, 10))
		dc_appendf(buf, size, "/");
	int n = 1 + (int)dc_below(r, 4);
	for (int i = 0; i < n; i++) {
		if (i)
			dc_appendf(buf, size, "/");
		uint32_t k = dc_below(r, 10);
		if (k < 6 && t->nnames)
			dc_appendf(buf, size, "%s", t->names[dc_below(r, (uint32_t)t->nnames)]);
		else if (k < 8)
			dc_appendf(buf, size, "..");
		else if (k < 9)
			dc_appendf(buf, size, ".");
		else
			dc_appendf(buf, size, "zz");
	}
	if (dc_chance(r, 10))
		dc_appendf(buf, size, "/");
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
		dc_appendf(buf, size, "%s%s", u, *e->path ? e->path : ".");
		if (e->type == 'd' && dc_chance(r, 20))
			dc_appendf(buf, size, "/");
		break;
	case 3: /* same directory name (may be itself: a loop) */
		dc_appendf(buf, size, "%s",
			strrchr(e->path, '/') ? strrchr(e->path, '/') + 1
					      : (*e->path ? e->path : "."));
		break;
	case 4:
	case 5: /* junk of tree names and dots */
		junk_path(t, r, buf, size);
		break;
	case 6: /* absolute, meaningful under IN_ROOT */
		dc_appendf(buf, size, "/%s", e->path);
		if (dc_chance(r, 20))
			dc_appendf(buf, size, "/..");
		break;
	case 7: { /* escape by climbing */
		static const char *const outside[] = { "out/a",	  "out/d",	 "out",	   "a",
						       "out/d/f", "root/../out", "out/up", "" };
		ups(u, sizeof(u), up + 1 + (int)dc_below(r, 2));
		dc_appendf(buf, size, "%s%s", u, outside[dc_below(r, 8)]);
		break;
	}
	case 8: /* absolute real path outside */
		dc_appendf(buf, size, "%s/%s", t->base, dc_chance(r, 50) ? "out/d" : "out/a");
		break;
	case 9: {
		static const char *const dots[] = { ".",	 "..",	"../..",  "./",
						    "..//.",	 "/",	"//..",	  "/..",
						    "/../../..", "./.", "../root" };
		dc_appendf(buf, size, "%s", dots[dc_below(r, 11)]);
		break;
	}
	case 10: { /* procfs magic links through an absolute path */
		static const char *const procs[] = { "/proc/self/root", "/proc/self/cwd",
						     "/proc/self/fd/0", "/proc/self/exe",
						     "/proc/self" };
		dc_appendf(buf, size, "%s", procs[dc_below(r, 5)]);
		break;
	}
	default: /* dangling */
		dc_appendf(buf, size, "%s%s", dc_chance(r, 50) ? "nonexist" : "d/nonexist",
			dc_chance(r, 30) ? "/" : "");
		break;
	}
	if (!buf[0])
		dc_appendf(buf, size, ".");
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
		if (dc_has_dotdot_component(tgt))
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
		if (line[0] == 'l' && dc_has_dotdot_component(strchr(line + 2, ' ') + 1))
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
