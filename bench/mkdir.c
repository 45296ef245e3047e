/* SPDX-License-Identifier: MIT */
/*
 * bench: safe_mkdir_all_beneath() (mkdir -p) at several depths, on the
 * fast path and the walker.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench.h"


/*
 * safe_mkdir_all_beneath() of a new path of N components ("mkN/d/d/.../d"),
 * then of the same, now existing, path; on the openat2 fast path and on the
 * userspace walker (SAFE_RESOLVE_USERSPACE). Times are medians of a few runs
 * (the tree is removed, untimed, between runs); system calls are counted by
 * strace in a child (--probe-mkdir), between marker calls, and shown per
 * component: a constant figure across depths is the linear cost.
 */
enum { NR_MK_DEPTHS = 3, MK_RUNS = 7 };
static const int mk_depths[NR_MK_DEPTHS] = { 10, 100, 1000 };

struct mk_cell {
	double create_ms, exist_us; /* medians; < 0 unknown */
	long sys_create, sys_exist; /* totals for one call; < 0 unknown */
	int err;                    /* errno of a failed call, else 0 */
};
static struct mk_cell mk_cells[NR_MK_DEPTHS][2];

/* "mkN/d/.../d" with n components; malloc'd. */
static char *mk_path(int n)
{
	size_t len = 16 + (size_t)n * 2;
	char *p = malloc(len);
	if (!p)
		return NULL;
	int w = snprintf(p, len, "mk%d", n);
	for (int i = 1; i < n; i++) {
		p[w++] = '/';
		p[w++] = 'd';
	}
	p[w] = '\0';
	return p;
}

static int mk_call(const char *path, bool walker)
{
	int fd = safe_mkdir_all_beneath(g.rootfd, path, 0755, walker ? SAFE_RESOLVE_USERSPACE : 0);
	if (fd < 0)
		return errno;
	close(fd);
	return 0;
}

static void mk_remove(int n)
{
	char top[16];
	snprintf(top, sizeof(top), "mk%d", n);
	(void)safe_rmtree_beneath(g.rootfd, top, 0);
}

/* Child side (under strace): one creation and one call on the existing path,
 * each between markers, after a warm-up call (one-time probes, lazy binding). */
int mk_probe_child(int n, bool walker)
{
	char *path = mk_path(n);
	if (!path)
		return 2;
	(void)mk_call("mkwarm/d", walker);
	(void)safe_rmtree_beneath(g.rootfd, "mkwarm", 0);
	mk_remove(n);
	(void)access("/@safeopen-bench-mk-create", F_OK);
	int e1 = mk_call(path, walker);
	(void)access("/@safeopen-bench-mk-exist", F_OK);
	int e2 = mk_call(path, walker);
	(void)access("/@safeopen-bench-mk-end", F_OK);
	mk_remove(n);
	free(path);
	return e1 || e2 ? 1 : 0;
}

/* Parent side: the syscalls of each phase of mk_probe_child(). */
static void mk_count(struct mk_cell *c, int n, bool walker)
{
	char out[PATH_MAX], a_n[16];
	if (snprintf(out, sizeof(out), "%s/strace-mk.out", g.root) >= (int)sizeof(out))
		return;
	snprintf(a_n, sizeof(a_n), "%d", n);
	const char *const argv[] = { "--probe-mkdir", a_n, walker ? "1" : "0", g.root, NULL };
	FILE *f = strace_self(out, argv) ? fopen(out, "re") : NULL;
	if (!f) {
		unlink(out);
		return;
	}
	long count[2] = { 0, 0 };
	int phase = -1;
	char line[4096];
	while (fgets(line, sizeof(line), f)) {
		if (strstr(line, "@safeopen-bench-mk-create")) {
			phase = 0;
			continue;
		}
		if (strstr(line, "@safeopen-bench-mk-exist")) {
			phase = 1;
			continue;
		}
		if (strstr(line, "@safeopen-bench-mk-end"))
			break;
		size_t len;
		if (phase >= 0 && strace_syscall(line, &len))
			count[phase]++;
	}
	fclose(f);
	unlink(out);
	c->sys_create = count[0];
	c->sys_exist = count[1];
}

static void mk_measure(struct mk_cell *c, int n, bool walker)
{
	*c = (struct mk_cell){ .create_ms = -1, .exist_us = -1, .sys_create = -1, .sys_exist = -1 };
	char *path = mk_path(n);
	if (!path)
		return;
	int runs = g.quick ? 3 : MK_RUNS;
	double create[MK_RUNS], exist[MK_RUNS], lo, hi;
	mk_remove(n);
	for (int r = 0; r < runs && !stop; r++) {
		double t0 = now_ns();
		int e = mk_call(path, walker);
		double t1 = now_ns();
		int e2 = e ? e : mk_call(path, walker);
		double t2 = now_ns();
		mk_remove(n);
		if (e || e2) {
			c->err = e ? e : e2;
			free(path);
			return;
		}
		create[r] = (t1 - t0) / 1e6;
		exist[r] = (t2 - t1) / 1e3;
	}
	free(path);
	if (stop)
		return;
	c->create_ms = median(create, runs, &lo, &hi);
	c->exist_us = median(exist, runs, &lo, &hi);
	if (!g.no_strace)
		mk_count(c, n, walker);
}

void print_mkdir_all_section(void)
{
	printf("\nmkdir -p: safe_mkdir_all_beneath() of a new path of N components, then of the "
	       "same existing path\n(median of %d runs; syscalls counted by strace, per call and "
	       "per component)\n",
	       g.quick ? 3 : MK_RUNS);
	printf("%-6s %-8s %11s %12s %9s %8s %12s %9s %8s\n", "N", "path", "create ms",
	       "us/component", "syscalls", "per comp", "existing us", "syscalls", "per comp");
	for (int d = 0; d < NR_MK_DEPTHS && !stop; d++) {
		for (int w = 0; w < 2 && !stop; w++) {
			struct mk_cell *c = &mk_cells[d][w];
			int n = mk_depths[d];
			mk_measure(c, n, w);
			printf("%-6d %-8s ", n, w ? "walker" : "openat2");
			if (c->err) {
				printf("failed: %s\n", strerror(c->err));
				continue;
			}
			printf("%11.3f %12.2f ", c->create_ms, c->create_ms * 1e3 / n);
			if (c->sys_create >= 0)
				printf("%9ld %8.2f ", c->sys_create, (double)c->sys_create / n);
			else
				printf("%9s %8s ", "-", "-");
			printf("%12.1f ", c->exist_us);
			if (c->sys_exist >= 0)
				printf("%9ld %8.2f", c->sys_exist, (double)c->sys_exist / n);
			else
				printf("%9s %8s", "-", "-");
			printf("\n");
			fflush(stdout);
		}
	}
}
