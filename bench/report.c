/* SPDX-License-Identifier: MIT */
/*
 * bench: the tables, details, linearity, allocation and syscall figures,
 * and the CSV file.
 */
#include "config.h"

#include <string.h>
#include <unistd.h>

#include "bench.h"

/* ------------------------------------------------------------------ output */

static void cell_text(const struct cell *c, char *buf, size_t n)
{
	static const char *const text[] = {
		[ST_OK] = "ok",        [ST_WRONG] = "WRONG", [ST_NOSYS] = "ENOSYS",
		[ST_NA] = "n/a",       [ST_FAIL] = "FAILED", [ST_SKIP] = "-",
	};
	if (c->st == ST_OK && !g.verify_only && c->nb > 0) {
		double d1 = c->med - c->min, d2 = c->max - c->med;
		double sp = 100 * (d1 > d2 ? d1 : d2) / c->med;
		snprintf(buf, n, "%.0f ±%.0f%%", c->med, sp);
	} else {
		snprintf(buf, n, "%s", text[c->st]);
	}
}

/* printf("%-*s") pads by bytes; "±" is two bytes in UTF-8. */
void print_cell(const struct cell *c, int width)
{
	char buf[64];
	cell_text(c, buf, sizeof(buf));
	int extra = strstr(buf, "±") ? 1 : 0;
	printf(" %*s", width + extra, buf);
}

void print_ratio(const struct cell *a, const struct cell *b, int width)
{
	double r;
	if (ratio(a, b, &r, NULL, NULL))
		printf(" %*.2f", width, r);
	else
		printf(" %*s", width, "-");
}

/* The raw openat2 cell with the same scope as the library's cells. */
const struct cell *o2_of(const struct cell *row)
{
	return &row[row[0].shape->in_root ? M_O2_INROOT : M_O2_BENEATH];
}

void print_open_header(const char *first)
{
	printf("%-16s", first);
	for (int m = 0; m < NR_M; m++)
		printf(" %13s", m_head[m]);
	if (!g.verify_only)
		printf(" %7s %7s %7s %7s", "fast/o2", "walk/o2", "walk/rp", "own/fst");
	printf("\n");
}

void print_open_row(const char *label, const struct cell *row)
{
	printf("%-16s", label);
	for (int m = 0; m < NR_M; m++)
		print_cell(&row[m], 13);
	if (!g.verify_only) {
		print_ratio(&row[M_FAST], o2_of(row), 7);
		print_ratio(&row[M_WALK], o2_of(row), 7);
		print_ratio(&row[M_WALK], &row[M_REALPATH], 7);
		print_ratio(&row[M_OWNER], &row[M_FAST], 7);
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

void print_details(void)
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

int count_failures(void)
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
void print_linearity(void)
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

void print_allocs(void)
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

void run_syscall_counts(void)
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
	printf("per component (syscalls per call / components of the shape):\n");
	for (int r = 0; r < NR_MAIN; r++) {
		printf("%-16s", shapes[r].label);
		for (int m = 0; m < NR_M; m++) {
			double v = main_cells[r][m].sys;
			if (v < 0)
				printf(" %13s", "-");
			else
				printf(" %13.2f", v / shapes[r].components);
		}
		printf("\n");
	}
	printf("walker vs realpath (time ratio, median of rounds; met~: over 1.00 by the median,\n"
	       "within it by the lowest batch; syscalls):\n");
	for (int r = 0; r < NR_MAIN; r++) {
		const struct cell *w = &main_cells[r][M_WALK], *rp = &main_cells[r][M_REALPATH];
		double q, lo;
		printf("  %-16s", shapes[r].label);
		if (ratio(w, rp, &q, &lo, NULL))
			printf(" walker/realpath %5.2f  %s", q,
			       q <= 1.0 ? "met   " : lo <= 1.0 ? "met~  " : "MISSED");
		else
			printf(" walker/realpath     -        ");
		if (w->sys >= 0 && rp->sys >= 0)
			printf("  [%g vs %g syscalls]", w->sys, rp->sys);
		printf("\n");
	}
	printf("by syscall (walker; fast path and owner bit only where their count differs from\n"
	       "raw openat2):\n");
	for (int r = 0; r < NR_SHAPES; r++) {
		const struct cell *row = r < NR_MAIN ? main_cells[r] : depth_cells[r - NR_MAIN];
		for (int m = M_FAST; m <= M_OWNER; m++) {
			const struct cell *c = &row[m];
			if (c->sys < 0 || (m != M_WALK && c->sys == o2_of(row)->sys))
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

int write_csv(const char *file)
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
