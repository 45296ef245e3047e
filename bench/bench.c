/* SPDX-License-Identifier: MIT */
/*
 * bench: libsafeopen side by side with plain openat(2), the realpath()
 * pattern and raw openat2(2). See bench/README.md.
 *
 * Every cell is first checked to open the right object (same st_dev and
 * st_ino as the object the path names, or the right errno); a cell that does
 * not prints WRONG and is never timed. Timing: per cell, a calibration run
 * (which doubles as warm-up) sizes a batch to about --batch-ms; then the
 * cells of one row are run in interleaved rounds (batch b of every method,
 * starting with a different method each round), so slow periods of a noisy
 * machine hit all methods of a row alike. A cell shows the median of the
 * batches and the largest distance of a batch from it; ratios are medians of
 * the per-round ratios. Heap allocations are counted by interposing malloc in
 * this binary; syscalls are counted by running each cell in a child under
 * strace(1) between two marker syscalls. Targets are reported, never
 * asserted; only --verify-only has a pass/fail exit status.
 *
 * The program: bench.h (the model and what the files share), alloc.c (the
 * allocation counter), shapes.c (shapes, test tree), methods.c (the open
 * methods, verification), tmpfile.c (the tmpfile methods), measure.c (timing,
 * syscall counting), report.c (tables, CSV), targets.c, mkdir.c (mkdir -p);
 * this file: the model's definitions, options and main().
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench.h"

/* ------------------------------------------------------------------ model (declared in bench.h) */

const char *const m_key[NR_M] = { "openat",         "realpath",  "openat2-beneath",
				  "openat2-inroot", "safe-fast", "safe-walker",
				  "safe-owner" };
const char *const m_head[NR_M] = { "openat",      "realpath+chk", "openat2 BEN",
				   "openat2 INR", "safe fast",    "safe walker",
				   "safe owner" };
const char *const t_key[NR_T] = { "safe-otmpfile", "safe-fallback", "raw-otmpfile",
				  "mkstemp-rename" };
const char *const t_head[NR_T] = { "safe O_TMPFILE", "safe NO_OTMPF", "raw seq",
				   "mkstemp+ren" };
const int xattr_rows[NR_XATTR_ROWS] = { 0, 1, 4 };

struct bench_opts g = { .rootfd = -1,
			.only = SEC_ALL,
			.batches = 7,
			.batch_ns = 100e6,
			.cpu = -1,
			.clock = CLOCK_MONOTONIC,
			.dir = "." };

volatile sig_atomic_t stop;

struct shape shapes[NR_SHAPES];
struct cell main_cells[NR_MAIN][NR_M];
struct cell tmp_cells[NR_XATTR_ROWS][NR_T];
struct cell depth_cells[NR_DEPTH][NR_M];

const char xattr_value[32] = "0123456789abcdef0123456789abcde";
struct safe_xattr xattrs[4];
char xattr_names[4][16];

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

double now_ns(void)
{
	struct timespec ts;
	clock_gettime(g.clock, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

const char *errname(int e)
{
	const char *n = strerrorname_np(e);
	return n ? n : "E?";
}

/* ------------------------------------------------------------------ main */

static void print_depth_section(void)
{
	printf("\nCost against depth: ns per open+close of d/d/.../f\n");
	print_open_header("components");
	for (int r = 0; r < NR_DEPTH && !stop; r++) {
		measure_row(depth_cells[r], NR_M);
		char label[16];
		snprintf(label, sizeof(label), "%d", shapes[NR_MAIN + r].components);
		print_open_row(label, depth_cells[r]);
	}
	if (!g.verify_only && !stop)
		print_linearity();
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: bench [--dir DIR] [--csv FILE] [--quick] [--verify-only] [--cpu N]\n"
		"             [--clock wall|cpu] [--batches N] [--batch-ms MS] [--no-strace]\n"
		"             [--only shapes|tmpfile|depth|mkdir] [--allow-enosys]\n"
		"  --dir DIR      build the test tree in DIR (default: the current directory;\n"
		"                 e.g. /dev/shm for tmpfs)\n"
		"  --csv FILE     write every figure (each batch, medians, allocations, syscalls)\n"
		"  --quick        short batches (2 ms): a smoke run, figures are rough\n"
		"  --verify-only  check that every method opens the right object; no timing;\n"
		"                 exit status 1 if a cell is wrong\n"
		"  --only S       run one section: shapes, tmpfile, depth or mkdir (mkdir -p)\n"
		"  --cpu N        pin to CPU N (sched_setaffinity)\n"
		"  --clock C      wall (default: CLOCK_MONOTONIC) or cpu (the thread's CPU time,\n"
		"                 user + system: leaves out the time other processes hold the\n"
		"                 CPU, and also I/O waits; for a busy machine)\n"
		"  --batches N    batches per cell (default 7, at least 7)\n"
		"  --batch-ms MS  length of a batch (default 100)\n"
		"  --no-strace    do not count syscalls with strace\n"
		"  --allow-enosys with --verify-only: a method not implemented yet is no failure\n");
}

static void init_cells(void)
{
	for (int r = 0; r < NR_MAIN + NR_DEPTH; r++) {
		struct cell *row = r < NR_MAIN ? main_cells[r] : depth_cells[r - NR_MAIN];
		for (int m = 0; m < NR_M; m++) {
			row[m] = (struct cell){ .kind = K_OPEN, .method = m, .shape = &shapes[r],
						.st = ST_SKIP, .allocs = -1, .sys = -1 };
			row[m].expected_wrong =
				shapes[r].in_root && (m == M_OPENAT || m == M_REALPATH);
		}
	}
	for (int r = 0; r < NR_XATTR_ROWS; r++)
		for (int m = 0; m < NR_T; m++)
			tmp_cells[r][m] = (struct cell){ .kind = K_TMP, .method = m,
							 .nx = xattr_rows[r], .st = ST_SKIP,
							 .allocs = -1, .sys = -1 };
}

static struct cell *probe_cell(int kind, int method, int row)
{
	if (kind == 0 && method < NR_M && row < NR_SHAPES)
		return row < NR_MAIN ? &main_cells[row][method] : &depth_cells[row - NR_MAIN][method];
	if (kind == 1 && method < NR_T && row < NR_XATTR_ROWS)
		return &tmp_cells[row][method];
	return NULL;
}

static int parse_int(const char *s, int min, int max, int *out)
{
	char *end;
	errno = 0;
	long v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < min || v > max)
		return -1;
	*out = (int)v;
	return 0;
}

int main(int argc, char **argv)
{
	int batch_ms = 100;
	bool batch_ms_set = false;

	init_shapes();
	init_cells();
	counting_allocs = alloc_counter_works();

	/* Child mode: --probe-mkdir N WALKER ROOT (under strace). */
	if (argc == 5 && !strcmp(argv[1], "--probe-mkdir")) {
		int n, walker;
		if (parse_int(argv[2], 1, 2000, &n) || parse_int(argv[3], 0, 1, &walker))
			return 2;
		snprintf(g.root, sizeof(g.root), "%s", argv[4]);
		g.rootfd = open(g.root, O_PATH | O_DIRECTORY | O_CLOEXEC);
		return g.rootfd < 0 ? 2 : mk_probe_child(n, walker);
	}

	/* Child mode: --probe KIND METHOD ROW ROOT (under strace). */
	if (argc == 6 && !strcmp(argv[1], "--probe")) {
		int kind, method, row;
		if (parse_int(argv[2], 0, 1, &kind) || parse_int(argv[3], 0, NR_M - 1, &method) ||
		    parse_int(argv[4], 0, NR_SHAPES - 1, &row))
			return 2;
		snprintf(g.root, sizeof(g.root), "%s", argv[5]);
		g.rootlen = strlen(g.root);
		g.seq = 90000000u;
		g.rootfd = open(g.root, O_PATH | O_DIRECTORY | O_CLOEXEC);
		struct cell *c = probe_cell(kind, method, row);
		if (g.rootfd < 0 || !c)
			return 2;
		return probe_child(c);
	}

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (!strcmp(a, "--quick")) {
			g.quick = true;
		} else if (!strcmp(a, "--verify-only")) {
			g.verify_only = true;
		} else if (!strcmp(a, "--allow-enosys")) {
			g.allow_enosys = true;
		} else if (!strcmp(a, "--no-strace")) {
			g.no_strace = true;
		} else if (!strcmp(a, "--dir") && v) {
			g.dir = v;
			i++;
		} else if (!strcmp(a, "--csv") && v) {
			g.csv = v;
			i++;
		} else if (!strcmp(a, "--cpu") && v && !parse_int(v, 0, CPU_SETSIZE - 1, &g.cpu)) {
			i++;
		} else if (!strcmp(a, "--only") && v) {
			g.only = !strcmp(v, "shapes")	 ? SEC_SHAPES
				 : !strcmp(v, "tmpfile") ? SEC_TMPFILE
				 : !strcmp(v, "depth")	 ? SEC_DEPTH
				 : !strcmp(v, "mkdir")	 ? SEC_MKDIR
							 : 0;
			if (!g.only) {
				usage(stderr);
				return 2;
			}
			i++;
		} else if (!strcmp(a, "--clock") && v && (!strcmp(v, "wall") || !strcmp(v, "cpu"))) {
			g.clock = !strcmp(v, "cpu") ? CLOCK_THREAD_CPUTIME_ID : CLOCK_MONOTONIC;
			i++;
		} else if (!strcmp(a, "--batches") && v &&
			   !parse_int(v, 7, MAX_BATCHES, &g.batches)) {
			i++;
		} else if (!strcmp(a, "--batch-ms") && v && !parse_int(v, 1, 10000, &batch_ms)) {
			batch_ms_set = true;
			i++;
		} else if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			usage(stdout);
			return 0;
		} else {
			usage(stderr);
			return 2;
		}
	}
	if (g.quick && !batch_ms_set)
		batch_ms = 2;
	g.batch_ns = batch_ms * 1e6;

	if (g.cpu >= 0) {
		cpu_set_t set;
		CPU_ZERO(&set);
		CPU_SET(g.cpu, &set);
		if (sched_setaffinity(0, sizeof(set), &set) < 0) {
			fprintf(stderr, "bench: --cpu %d: %s\n", g.cpu, strerror(errno));
			return 2;
		}
	}
	ssize_t el = readlink("/proc/self/exe", g.exe, sizeof(g.exe) - 1);
	if (el < 0)
		g.no_strace = true;
	else
		g.exe[el] = '\0';

	struct sigaction sa = { .sa_handler = on_signal };
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);

	char tmpl[PATH_MAX], canon[PATH_MAX];
	if (!realpath(g.dir, canon)) {
		fprintf(stderr, "bench: %s: %s\n", g.dir, strerror(errno));
		return 2;
	}
	int tl = snprintf(tmpl, sizeof(tmpl), "%s/safeopen-bench.XXXXXX", canon);
	if (tl >= (int)sizeof(tmpl) || !mkdtemp(tmpl) || !realpath(tmpl, g.root)) {
		if (tl >= (int)sizeof(tmpl))
			errno = ENAMETOOLONG;
		fprintf(stderr, "bench: cannot create a directory in %s: %s\n", canon,
			strerror(errno));
		return 2;
	}
	g.rootlen = strlen(g.root);
	g.rootfd = open(g.root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (g.rootfd < 0 || build_tree(g.rootfd) < 0) {
		fprintf(stderr, "bench: building the tree in %s: %s\n", g.root, strerror(errno));
		remove_tree();
		return 2;
	}
	for (int i = 0; i < NR_SHAPES; i++) {
		struct shape *s = &shapes[i];
		struct stat st;
		if (s->expect && fstatat(g.rootfd, s->expect, &st, AT_SYMLINK_NOFOLLOW) == 0) {
			s->dev = st.st_dev;
			s->ino = st.st_ino;
		}
	}

	double load[3] = { 0, 0, 0 };
	int nload = getloadavg(load, 3);
	printf("libsafeopen %s benchmark%s\n", safe_version(),
	       g.verify_only ? ": verification only (no timing)" : "");
	printf("tree: %s (%s)   cpu: %s%.0d   load average: %.2f%s\n", g.root,
	       fs_name(g.rootfd), g.cpu >= 0 ? "pinned to " : "not pinned", g.cpu >= 0 ? g.cpu : 0,
	       nload > 0 ? load[0] : -1.0, nload > 0 && load[0] > 1.0 ? " (busy machine: noisy)" : "");
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	if (!g.verify_only) {
		printf("cells: ns per open+close (%s), median of %d batches of ~%d ms after a "
		       "warm-up; ±: farthest batch from the median\nratios: medians of per-round "
		       "ratios (o2 = raw openat2 with the same scope as the library call)\n",
		       g.clock == CLOCK_MONOTONIC ? "wall clock" : "thread CPU time", g.batches,
		       batch_ms);
		if (nload > 0 && load[0] >= (double)ncpu && g.clock == CLOCK_MONOTONIC)
			printf("note: load average >= %ld CPUs: wall-clock figures include time spent "
			       "waiting for a CPU; --clock cpu leaves it out\n",
			       ncpu);
	}

	if (g.only & SEC_SHAPES) {
		printf("\n");
		print_open_header("shape");
	}
	for (int r = 0; r < NR_MAIN && !stop && (g.only & SEC_SHAPES); r++) {
		measure_row(main_cells[r], NR_M);
		print_open_row(shapes[r].label, main_cells[r]);
	}

	if (g.only & SEC_TMPFILE)
		print_tmpfile_section();
	if (g.only & SEC_DEPTH)
		print_depth_section();
	if ((g.only & SEC_MKDIR) && !g.verify_only)
		print_mkdir_all_section();

	print_allocs();
	if (!g.verify_only && !g.no_strace && !stop)
		run_syscall_counts();
	if (!g.verify_only && !stop)
		report_targets();
	print_details();

	int rc = 0;
	if (g.csv) {
		if (write_csv(g.csv) < 0) {
			fprintf(stderr, "bench: %s: %s\n", g.csv, strerror(errno));
			rc = 2;
		} else {
			printf("\nCSV: %s\n", g.csv);
		}
	}
	nload = getloadavg(load, 3);
	if (!g.verify_only && nload > 0)
		printf("load average at the end: %.2f\n", load[0]);
	remove_tree();
	if (stop)
		return 130;
	if (!raw_openat2_exists())
		printf("\noracle skipped: raw openat2 fails here (old kernel or seccomp profile): "
		       "its columns are not checked\n");
	if (g.verify_only) {
		int bad = count_failures();
		printf("\nverify-only: %s (%d cell%s wrong)\n", bad ? "FAILED" : "all methods open "
		       "the right object", bad, bad == 1 ? "" : "s");
		if (bad)
			rc = 1;
	}
	return rc;
}
