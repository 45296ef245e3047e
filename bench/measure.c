/* SPDX-License-Identifier: MIT */
/*
 * bench: timing (calibrated batches run in interleaved rounds, medians and
 * ratios) and syscall counting (each cell in a child under strace(1)).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench.h"

/* ------------------------------------------------------------------ timing */

/* Run n operations; return the nanoseconds spent in the timed part, or -1
 * if an operation gave an unexpected result (detail filled in). Creations are
 * timed in chunks; the files are removed between chunks, untimed. */
static double time_ops(struct cell *c, long n)
{
	double total = 0;
	if (!cell_creates(c)) {
		const char *path = c->shape->path;
		bool want_fd = c->shape->expect != NULL;
		double t0 = now_ns();
		for (long i = 0; i < n; i++) {
			int fd = cell_op(c, path);
			if (fd >= 0)
				close(fd);
			if ((fd >= 0) != want_fd) {
				snprintf(c->detail, sizeof(c->detail), "unexpected %s while timing",
					 fd >= 0 ? "success" : errname(errno));
				return -1;
			}
		}
		return now_ns() - t0;
	}
	static char names[CHUNK][48];
	for (long done = 0; done < n && !stop;) {
		long k = n - done < CHUNK ? n - done : CHUNK;
		for (long i = 0; i < k; i++)
			fresh_name(c, names[i], sizeof(names[i]));
		long i = 0;
		double t0 = now_ns();
		for (; i < k; i++) {
			int fd = cell_op(c, names[i]);
			if (fd < 0)
				break;
			close(fd);
		}
		total += now_ns() - t0;
		int err = errno;
		for (long j = 0; j < i; j++)
			unlinkat(g.rootfd, names[j], 0);
		if (i < k) {
			snprintf(c->detail, sizeof(c->detail), "%s while timing", errname(err));
			return -1;
		}
		done += k;
	}
	return total;
}

/* Size a batch to about g.batch_ns; these runs are the warm-up. */
static int calibrate(struct cell *c)
{
	long n = 1;
	double t;
	for (;;) {
		t = time_ops(c, n);
		if (t < 0)
			return -1;
		if (stop || t >= g.batch_ns / 4 || n >= (1L << 30))
			break;
		n *= t < g.batch_ns / 64 ? 8 : 2;
	}
	double ops = (double)n * g.batch_ns / (t > 0 ? t : 1);
	c->ops = ops < 1 ? 1 : (long)ops;
	return 0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

double median(const double *v, int n, double *min, double *max)
{
	double s[MAX_BATCHES];
	memcpy(s, v, (size_t)n * sizeof(*v));
	qsort(s, (size_t)n, sizeof(*s), cmp_double);
	if (min)
		*min = s[0];
	if (max)
		*max = s[n - 1];
	return n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
}

/* Verify and (unless --verify-only) time one row of cells, interleaved. */
void measure_row(struct cell *cells, int n)
{
	for (int m = 0; m < n; m++)
		verify_cell(&cells[m]);
	if (g.verify_only)
		return;
	for (int m = 0; m < n && !stop; m++)
		if (cells[m].st == ST_OK && calibrate(&cells[m]) < 0)
			cells[m].st = ST_FAIL;
	for (int b = 0; b < g.batches && !stop; b++) {
		for (int k = 0; k < n && !stop; k++) {
			struct cell *c = &cells[(b + k) % n];
			if (c->st != ST_OK)
				continue;
			double t = time_ops(c, c->ops);
			if (t < 0) {
				c->st = ST_FAIL;
				continue;
			}
			c->ns[c->nb++] = t / (double)c->ops;
		}
	}
	for (int m = 0; m < n; m++) {
		struct cell *c = &cells[m];
		if (c->st == ST_OK && c->nb > 0)
			c->med = median(c->ns, c->nb, &c->min, &c->max);
		else if (c->st == ST_OK)
			c->st = ST_FAIL;
	}
}

/* Median (and range) of the per-round ratios a/b; false if not comparable. */
bool ratio(const struct cell *a, const struct cell *b, double *r, double *lo, double *hi)
{
	if (a->st != ST_OK || b->st != ST_OK || a->nb == 0 || a->nb != b->nb)
		return false;
	double v[MAX_BATCHES] = { 0 };
	for (int i = 0; i < a->nb; i++)
		v[i] = a->ns[i] / b->ns[i];
	double mn, mx;
	*r = median(v, a->nb, &mn, &mx);
	if (lo)
		*lo = mn;
	if (hi)
		*hi = mx;
	return true;
}

/* ------------------------------------------------------------------ syscall counting (strace) */

struct sysname {
	char name[24];
	int n;
};

/* Child side: redo the cell's operation PROBE_CALLS times between two marker
 * syscalls, after two warm-up calls (the library's one-time probes, lazy
 * binding). */
int probe_child(struct cell *c)
{
	char names[PROBE_CALLS][48];
	char path[sizeof(shapes[0].path) + 16];
	for (int i = 0; i < 2; i++) {
		if (cell_creates(c))
			fresh_name(c, path, sizeof(path));
		else
			snprintf(path, sizeof(path), "%s", c->shape->path);
		int fd = cell_op(c, path);
		if (fd >= 0)
			close(fd);
		if (cell_creates(c))
			unlinkat(g.rootfd, path, 0);
	}
	for (int i = 0; i < PROBE_CALLS; i++) {
		if (cell_creates(c))
			fresh_name(c, names[i], sizeof(names[i]));
		else
			snprintf(names[i], sizeof(names[i]), "%s", "");
	}
	(void)access("/@safeopen-bench-begin", F_OK);
	for (int i = 0; i < PROBE_CALLS; i++) {
		int fd = cell_op(c, cell_creates(c) ? names[i] : c->shape->path);
		if (fd >= 0)
			close(fd);
	}
	(void)access("/@safeopen-bench-end", F_OK);
	if (cell_creates(c))
		for (int i = 0; i < PROBE_CALLS; i++)
			unlinkat(g.rootfd, names[i], 0);
	return 0;
}

/* Run this program in probe mode (argv: its options after the program
 * name, NULL-terminated) under `strace -f -o out`, quietly. True when strace
 * and the probe both exited 0; out then holds the trace. */
bool strace_self(const char *out, const char *const *argv)
{
	const char *args[16] = { "strace", "-f", "-qq", "-o", out, "--", g.exe };
	size_t n = 7;
	for (; *argv && n < sizeof(args) / sizeof(args[0]) - 1; argv++)
		args[n++] = *argv;
	args[n] = NULL;
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0)
		return false;
	if (pid == 0) {
		int devnull = open("/dev/null", O_WRONLY | O_CLOEXEC);
		if (devnull >= 0) {
			dup2(devnull, 1);
			dup2(devnull, 2);
		}
		execvp("strace", (char *const *)args);
		_exit(127);
	}
	int status;
	return waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

/* The syscall a line of strace output records ("PID name(args) = ..."),
 * its length in *len; NULL for other lines (resumptions, signals, exits). */
const char *strace_syscall(const char *line, size_t *len)
{
	const char *p = line;
	while (*p >= '0' && *p <= '9')
		p++;
	while (*p == ' ')
		p++;
	if (*p == '+' || *p == '-' || *p == '<')
		return NULL;
	*len = strspn(p, "abcdefghijklmnopqrstuvwxyz0123456789_");
	return *len > 0 && p[*len] == '(' ? p : NULL;
}

/* Parent side: run the child under strace, count the syscalls between the
 * markers. */
void count_syscalls(struct cell *c, int kind, int row)
{
	char out[PATH_MAX], a_kind[16], a_method[16], a_row[16];
	if (snprintf(out, sizeof(out), "%s/strace.out", g.root) >= (int)sizeof(out))
		return;
	snprintf(a_kind, sizeof(a_kind), "%d", kind);
	snprintf(a_method, sizeof(a_method), "%d", c->method);
	snprintf(a_row, sizeof(a_row), "%d", row);
	const char *const argv[] = { "--probe", a_kind, a_method, a_row, g.root, NULL };
	if (!strace_self(out, argv)) {
		snprintf(c->sysdetail, sizeof(c->sysdetail), "strace failed");
		unlink(out);
		return;
	}
	FILE *f = fopen(out, "re");
	if (!f)
		return;
	struct sysname tab[16];
	int ntab = 0, total = 0;
	bool in = false, done = false;
	char line[4096];
	while (!done && fgets(line, sizeof(line), f)) {
		if (strstr(line, "@safeopen-bench-begin")) {
			in = true;
			continue;
		}
		if (strstr(line, "@safeopen-bench-end")) {
			done = true;
			continue;
		}
		size_t len;
		const char *p = strace_syscall(line, &len);
		if (!in || !p)
			continue;
		total++;
		int i;
		for (i = 0; i < ntab; i++)
			if (strlen(tab[i].name) == len && !strncmp(tab[i].name, p, len))
				break;
		if (i == ntab && ntab < 16 && len < sizeof(tab[0].name)) {
			memcpy(tab[ntab].name, p, len);
			tab[ntab].name[len] = '\0';
			tab[ntab++].n = 0;
		}
		if (i < ntab)
			tab[i].n++;
	}
	fclose(f);
	unlink(out);
	if (!done)
		return;
	c->sys = (double)total / PROBE_CALLS;
	size_t used = 0;
	c->sysdetail[0] = '\0';
	for (int i = 0; i < ntab && used < sizeof(c->sysdetail); i++) {
		double per = (double)tab[i].n / PROBE_CALLS;
		int w = snprintf(c->sysdetail + used, sizeof(c->sysdetail) - used, "%s%s %g",
				 i ? ", " : "", tab[i].name, per);
		if (w < 0)
			break;
		used += (size_t)w;
	}
}
