/* SPDX-License-Identifier: MIT */
/* minicheck: see check.h. */
#include "check.h"

#include <errno.h>
#include <stdbool.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

struct fixture {
	SFun setup, teardown;
	struct fixture *next;
};
struct test_ent {
	const TTest *t;
	int start, end;
	struct test_ent *next;
};
struct TCase {
	const char *name;
	double timeout;
	struct fixture *checked, *unchecked;
	struct test_ent *tests, **tail;
	TCase *next;
};
struct Suite {
	const char *name;
	TCase *cases, **tail;
	Suite *next;
};
struct SRunner {
	Suite *suites, **tail;
	int run, failed, errors;
	char *tap; /* srunner_set_tap(): TAP written here, as Check does */
};

static void *xcalloc(size_t size)
{
	void *p = calloc(1, size);
	if (!p) {
		perror("minicheck");
		exit(EXIT_FAILURE);
	}
	return p;
}

Suite *suite_create(const char *name)
{
	Suite *s = xcalloc(sizeof(*s));
	s->name = name;
	s->tail = &s->cases;
	return s;
}

void suite_add_tcase(Suite *s, TCase *tc)
{
	*s->tail = tc;
	s->tail = &tc->next;
}

static double env_double(const char *name, double dflt)
{
	const char *v = getenv(name);
	char *end;
	double d = v && *v ? strtod(v, &end) : dflt;
	return v && *v && *end == '\0' && d > 0 ? d : dflt;
}

TCase *tcase_create(const char *name)
{
	TCase *tc = xcalloc(sizeof(*tc));
	tc->name = name;
	tc->timeout = env_double("CK_DEFAULT_TIMEOUT", 4.0);
	tc->tail = &tc->tests;
	return tc;
}

void tcase_set_timeout(TCase *tc, double seconds)
{
	tc->timeout = seconds;
}

static void add_fixture(struct fixture **list, SFun setup, SFun teardown)
{
	struct fixture *f = xcalloc(sizeof(*f)), **p = list;
	f->setup = setup;
	f->teardown = teardown;
	while (*p)
		p = &(*p)->next;
	*p = f;
}

void tcase_add_checked_fixture(TCase *tc, SFun setup, SFun teardown)
{
	add_fixture(&tc->checked, setup, teardown);
}

void tcase_add_unchecked_fixture(TCase *tc, SFun setup, SFun teardown)
{
	add_fixture(&tc->unchecked, setup, teardown);
}

void _tcase_add_test(TCase *tc, const TTest *t, int sig, int exitval, int start, int end)
{
	if (sig || exitval) {
		fprintf(stderr, "minicheck: %s: expected signals/exit values are not supported\n",
			t->name);
		exit(EXIT_FAILURE);
	}
	struct test_ent *e = xcalloc(sizeof(*e));
	e->t = t;
	e->start = start;
	e->end = end;
	*tc->tail = e;
	tc->tail = &e->next;
}

SRunner *srunner_create(Suite *s)
{
	SRunner *sr = xcalloc(sizeof(*sr));
	sr->tail = &sr->suites;
	if (s)
		srunner_add_suite(sr, s);
	return sr;
}

void srunner_add_suite(SRunner *sr, Suite *s)
{
	*sr->tail = s;
	sr->tail = &s->next;
}

/* Where the running test is, for its failure message. */
static const char *cur_file = "?";
static int cur_line;
static int result_fd = -1;

void _ck_mark(const char *file, int line)
{
	cur_file = file;
	cur_line = line;
}

#pragma GCC diagnostic ignored "-Wformat-nonliteral"
void _ck_failed(const char *file, int line, const char *expr, ...)
{
	char msg[4096];
	va_list ap;
	va_start(ap, expr);
	const char *fmt = va_arg(ap, const char *);
	if (fmt)
		vsnprintf(msg, sizeof(msg), fmt, ap);
	else
		snprintf(msg, sizeof(msg), "%s", expr);
	va_end(ap);
	char out[4200];
	int n = snprintf(out, sizeof(out), "%s:%d: %s", file, line, msg);
	if (result_fd >= 0 && n > 0) {
		ssize_t w = write(result_fd, out, (size_t)n < sizeof(out) ? (size_t)n : sizeof(out) - 1);
		(void)w;
	}
	_exit(1);
}

static bool selected(const char *env, const char *name)
{
	const char *v = getenv(env);
	return !v || !*v || strcmp(v, name) == 0;
}

/* Runs one test (one loop index) in a child; returns 0 pass, 1 fail, 2 error. */
static int run_one(TCase *tc, const TTest *t, int i, char *why, size_t size)
{
	int pfd[2];
	if (pipe(pfd) < 0)
		return snprintf(why, size, "pipe: %s", strerror(errno)), 2;
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0)
		return snprintf(why, size, "fork: %s", strerror(errno)), 2;
	if (pid == 0) {
		close(pfd[0]);
		result_fd = pfd[1];
		setpgid(0, 0);
		_ck_mark(t->file, t->line);
		for (struct fixture *f = tc->checked; f; f = f->next)
			if (f->setup)
				f->setup();
		t->fn(i);
		/* Teardowns in reverse order of registration, as Check. */
		int n = 0;
		for (struct fixture *f = tc->checked; f; f = f->next)
			n++;
		for (int k = n - 1; k >= 0; k--) {
			struct fixture *f = tc->checked;
			for (int j = 0; j < k; j++)
				f = f->next;
			if (f->teardown)
				f->teardown();
		}
		fflush(NULL);
		_exit(0);
	}
	close(pfd[1]);
	double timeout = tc->timeout * env_double("CK_TIMEOUT_MULTIPLIER", 1.0);
	struct timespec start;
	clock_gettime(CLOCK_MONOTONIC, &start);
	int status = 0;
	bool timed_out = false;
	for (;;) {
		pid_t r = waitpid(pid, &status, WNOHANG);
		if (r == pid)
			break;
		if (r < 0 && errno != EINTR) {
			close(pfd[0]);
			return snprintf(why, size, "waitpid: %s", strerror(errno)), 2;
		}
		struct timespec now;
		clock_gettime(CLOCK_MONOTONIC, &now);
		double el = (double)(now.tv_sec - start.tv_sec) + (double)(now.tv_nsec - start.tv_nsec) / 1e9;
		if (timeout > 0 && el > timeout && !timed_out) {
			kill(-pid, SIGKILL);
			kill(pid, SIGKILL);
			timed_out = true;
		}
		struct timespec d = { 0, 2000000 };
		nanosleep(&d, NULL);
	}
	ssize_t got = read(pfd[0], why, size - 1);
	close(pfd[0]);
	why[got > 0 ? got : 0] = '\0';
	if (timed_out)
		return snprintf(why, size, "%s:%d: test timeout expired", cur_file, t->line), 2;
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
		return 0;
	if (got > 0)
		return 1;
	if (WIFSIGNALED(status))
		snprintf(why, size, "%s:%d: received signal %d (%s)", t->file, t->line,
			 WTERMSIG(status), strsignal(WTERMSIG(status)));
	else
		snprintf(why, size, "%s:%d: exited early with %d", t->file, t->line,
			 WEXITSTATUS(status));
	return 2;
}

void srunner_set_tap(SRunner *sr, const char *fname)
{
	free(sr->tap);
	sr->tap = fname ? strdup(fname) : NULL;
}

void srunner_run_all(SRunner *sr, enum print_output mode)
{
	FILE *tap = sr->tap ? fopen(sr->tap, "we") : NULL;
	int tap_n = 0;
	const char *v = getenv("CK_VERBOSITY");
	bool verbose = mode == CK_VERBOSE || (mode == CK_ENV && v && strcmp(v, "verbose") == 0);
	for (Suite *s = sr->suites; s; s = s->next) {
		if (!selected("CK_RUN_SUITE", s->name))
			continue;
		printf("Running suite(s): %s\n", s->name);
		int run = 0, failed = 0, errors = 0;
		for (TCase *tc = s->cases; tc; tc = tc->next) {
			if (!selected("CK_RUN_CASE", tc->name))
				continue;
			for (struct fixture *f = tc->unchecked; f; f = f->next)
				if (f->setup)
					f->setup();
			for (struct test_ent *e = tc->tests; e; e = e->next) {
				for (int i = e->start; i < e->end; i++) {
					char why[4200];
					int r = run_one(tc, e->t, i, why, sizeof(why));
					run++;
					if (tap && r)
						fprintf(tap, "not ok %d - %s:%s:%d: %s\n", ++tap_n, tc->name,
							e->t->name, i, why);
					else if (tap)
						fprintf(tap, "ok %d - %s:%s:%d: Passed\n", ++tap_n, tc->name,
							e->t->name, i);
					if (r) {
						failed++;
						errors += r == 2;
						printf("%s:%s:%s:%d: %s\n", r == 1 ? "F" : "E", tc->name,
						       e->t->name, i, why);
					} else if (verbose) {
						printf("%s:%d:P:%s:%s:%d: Passed\n", e->t->file, e->t->line,
						       tc->name, e->t->name, i);
					}
				}
			}
			for (struct fixture *f = tc->unchecked; f; f = f->next)
				if (f->teardown)
					f->teardown();
		}
		printf("%d%%: Checks: %d, Failures: %d, Errors: %d\n",
		       run ? 100 * (run - failed) / run : 100, run, failed - errors, errors);
		sr->run += run;
		sr->failed += failed;
	}
	if (tap) {
		fprintf(tap, "1..%d\n", tap_n);
		fclose(tap);
	}
	fflush(stdout);
}

int srunner_ntests_failed(SRunner *sr)
{
	return sr->failed;
}

int srunner_ntests_run(SRunner *sr)
{
	return sr->run;
}

static void free_fixtures(struct fixture *f)
{
	while (f) {
		struct fixture *next = f->next;
		free(f);
		f = next;
	}
}

void srunner_free(SRunner *sr)
{
	free(sr->tap);
	for (Suite *s = sr->suites, *sn; s; s = sn) {
		sn = s->next;
		for (TCase *tc = s->cases, *tn; tc; tc = tn) {
			tn = tc->next;
			for (struct test_ent *e = tc->tests, *en; e; e = en) {
				en = e->next;
				free(e);
			}
			free_fixtures(tc->checked);
			free_fixtures(tc->unchecked);
			free(tc);
		}
		free(s);
	}
	free(sr);
}
