/* SPDX-License-Identifier: MIT */
/*
 * A fork-per-request server's cost, reduced to its core: the parent forks a
 * child per request, the child opens one file beneath a document root by its
 * URL path, fstat()s and reads it, and exits. Modes:
 *   openat  the plain openat() of the same file (the yardstick);
 *   cold    safe_openat_in_root() in a parent that never called the library;
 *   warm    the same after one call in the parent before forking (what the
 *           cookbook recommends: the children inherit every probe).
 * Prints, per mode, the median over rounds (modes interleaved) of the
 * children's CPU time and minor page faults per request (getrusage of the
 * reaped children: the parent's own work is not counted).
 *
 *   bench/fork-serve [REQUESTS [ROUNDS]]      (make bench-fork)
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <safeopen.h>

enum { M_OPENAT, M_COLD, M_WARM, NR_MODES };
static const char *const names[NR_MODES] = { "openat", "safe cold", "safe warm" };

static int child(int root, int mode)
{
	int fd = mode == M_OPENAT
			 ? openat(root, "docs/a.html", O_RDONLY | O_NONBLOCK | O_CLOEXEC)
			 : safe_openat_in_root(root, "/docs/a.html", O_RDONLY | O_NONBLOCK, 0);
	if (fd < 0)
		return 1;
	struct stat st;
	char buf[4096];
	int bad = fstat(fd, &st) < 0 || read(fd, buf, sizeof(buf)) != st.st_size;
	close(fd);
	return bad;
}

/* One round of n requests in a fresh process (so that "cold" is cold):
 * writes the children's CPU microseconds and page faults per request. */
static int round_in_process(const char *dir, int mode, int n, double out[2])
{
	int p[2];
	if (pipe(p) < 0)
		return -1;
	pid_t pid = fork();
	if (pid == 0) {
		close(p[0]);
		int root = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (root < 0)
			_exit(1);
		if (mode == M_WARM) {
			int fd = safe_openat_in_root(root, "/", O_PATH, 0);
			if (fd >= 0)
				close(fd);
		}
		for (int i = 0; i < n; i++) {
			pid_t c = fork();
			if (c == 0)
				_exit(child(root, mode));
			int st;
			if (c < 0 || waitpid(c, &st, 0) < 0 || st != 0)
				_exit(1);
		}
		struct rusage ru;
		getrusage(RUSAGE_CHILDREN, &ru);
		double r[2] = {
			(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e6 + ru.ru_utime.tv_usec +
				ru.ru_stime.tv_usec,
			(double)ru.ru_minflt,
		};
		r[0] /= n;
		r[1] /= n;
		_exit(write(p[1], r, sizeof(r)) == sizeof(r) ? 0 : 1);
	}
	close(p[1]);
	ssize_t got = read(p[0], out, 2 * sizeof(double));
	close(p[0]);
	int st;
	if (pid < 0 || waitpid(pid, &st, 0) < 0 || st != 0 || got != 2 * sizeof(double))
		return -1;
	return 0;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

int main(int argc, char *argv[])
{
	int n = argc > 1 ? atoi(argv[1]) : 2000;
	int rounds = argc > 2 ? atoi(argv[2]) : 7;
	if (n < 1 || rounds < 1 || rounds > 99) {
		fprintf(stderr, "usage: %s [REQUESTS [ROUNDS (1-99)]]\n", argv[0]);
		return 2;
	}
	const char *tmp = getenv("TMPDIR");
	char dir[4096], sub[4200], file[4300];
	snprintf(dir, sizeof(dir), "%s/fork-serve.XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	snprintf(sub, sizeof(sub), "%s/docs", dir);
	snprintf(file, sizeof(file), "%s/a.html", sub);
	int fd = -1, rc = 1;
	if (mkdir(sub, 0755) < 0 || (fd = open(file, O_WRONLY | O_CREAT | O_EXCL, 0644)) < 0) {
		perror(sub);
		goto out;
	}
	static char page[1024];
	memset(page, 'x', sizeof(page));
	if (write(fd, page, sizeof(page)) != (ssize_t)sizeof(page)) {
		perror(file);
		goto out;
	}
	double cpu[NR_MODES][99], flt[NR_MODES][99];
	for (int r = 0; r < rounds; r++)
		for (int m = 0; m < NR_MODES; m++) {
			double v[2];
			if (round_in_process(dir, m, n, v) < 0) {
				fprintf(stderr, "%s: a request failed\n", names[m]);
				goto out;
			}
			cpu[m][r] = v[0];
			flt[m][r] = v[1];
		}
	printf("fork per request, %d requests x %d rounds (median per request, children only)\n",
	       n, rounds);
	printf("%-10s %12s %8s %12s\n", "mode", "child us", "vs openat", "minor faults");
	qsort(cpu[M_OPENAT], (size_t)rounds, sizeof(double), cmp);
	for (int m = 0; m < NR_MODES; m++) {
		qsort(cpu[m], (size_t)rounds, sizeof(double), cmp);
		qsort(flt[m], (size_t)rounds, sizeof(double), cmp);
		printf("%-10s %12.1f %8.3f %12.1f\n", names[m], cpu[m][rounds / 2],
		       cpu[m][rounds / 2] / cpu[M_OPENAT][rounds / 2], flt[m][rounds / 2]);
	}
	rc = 0;
out:
	if (fd >= 0)
		close(fd);
	unlink(file);
	rmdir(sub);
	rmdir(dir);
	return rc;
}
