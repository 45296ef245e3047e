/* SPDX-License-Identifier: MIT */
/*
 * bench: the targets, reported (never asserted) with the figures they are
 * judged on.
 */
#include "config.h"

#include <stdarg.h>
#include <string.h>

#include "bench.h"


struct verdict {
	int met, missed, missing;
	int spread; /* of the met: above the limit by the median, not by the batches */
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

/*
 * One comparison: the median ratio q against the limit (q <= limit, or
 * q < limit). A median over the limit whose lowest batch ratio lo is within
 * it is not a difference the measurement can resolve: met "within batch
 * spread", and flagged as such in the figures and the verdict.
 */
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
	bool spread = !ok && (strict ? lo < limit : lo <= limit);
	if (ok || spread)
		v->met++;
	else
		v->missed++;
	v->spread += spread;
	fig_add(v, "%s%s %.3f", sep, what, q);
	if (spread)
		fig_add(v, " (within batch spread: lowest batch %.3f)", lo);
	else if (!ok)
		fig_add(v, " MISSED");
	fig_add(v, "%s", extra ? extra : "");
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
	char res[48];
	snprintf(res, sizeof(res), "%s",
		 v->missed ? "MISSED" : !v->met ? "not evaluated" : v->missing ? "incomplete" : "met");
	if (!v->missed && v->met && v->spread)
		snprintf(res, sizeof(res), "%s (%d within batch spread)",
			 v->missing ? "incomplete" : "met", v->spread);
	print_figures(what, res, v);
	if (v->missing)
		printf("      (-: a cell has no number, see \"Cells without a number\")\n");
}

void report_targets(void)
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

	/* 1b. the owner bit costs nothing on a path without links (issue 42):
	 * one openat2 with RESOLVE_NO_SYMLINKS, as the plain fast path makes
	 * one without it. A path with links goes to the walker (information). */
	memset(&v, 0, sizeof(v));
	for (int r = 0; r < NR_MAIN; r++) {
		const struct cell *row = main_cells[r];
		if (shapes[r].links)
			continue;
		bool have = ratio(&row[M_OWNER], &row[M_FAST], &q, &lo, NULL);
		extra[0] = '\0';
		if (row[M_OWNER].sys >= 0 && row[M_FAST].sys >= 0 &&
		    row[M_OWNER].sys != row[M_FAST].sys)
			snprintf(extra, sizeof(extra), " [%g vs %g syscalls]", row[M_OWNER].sys,
				 row[M_FAST].sys);
		judge(&v, shapes[r].key, have, q, lo, 1.05, false, extra);
	}
	target_line("owner bit / safe_openat2 <= 1.05, every shape without links", &v);
	memset(&v, 0, sizeof(v));
	for (int r = 0; r < NR_MAIN; r++) {
		const struct cell *row = main_cells[r];
		if (!shapes[r].links)
			continue;
		bool have = ratio(&row[M_OWNER], &row[M_WALK], &q, NULL, NULL);
		fig_add(&v, "%s%s ", v.used ? "; " : "", shapes[r].key);
		if (have)
			fig_add(&v, "%.2f", q);
		else
			fig_add(&v, "-");
		if (row[M_OWNER].sys >= 0 && row[M_WALK].sys >= 0)
			fig_add(&v, " [%g vs %g syscalls]", row[M_OWNER].sys, row[M_WALK].sys);
	}
	print_figures("owner bit / walker, shapes with links (information, no target)", "", &v);

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
		for (int m = M_FAST; m <= M_OWNER; m++) {
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
		fig_add(&v, "0 allocations in %d of %d cells (fast path, walker and owner bit, all "
			    "shapes and depths)", v.met, v.met + v.missing);
	else if (!v.used)
		fig_add(&v, "%s", BENCH_COUNT_ALLOCS ? "no cell counted"
						     : "not counted in a sanitizer build");
	target_line("zero heap allocations per safe_openat2 call", &v);
}
