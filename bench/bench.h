/* SPDX-License-Identifier: MIT */
/*
 * Private to the benchmark program bench/bench (the .c files of bench/ but
 * httpd-bench.c; see bench.c): its model (methods, shapes, cells), its
 * options and state, and the functions its files share.
 */
#ifndef SAFEOPEN_BENCH_H
#define SAFEOPEN_BENCH_H

#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>
#include <time.h>

#include <safeopen.h>

/* ------------------------------------------------------------------ model */

/* M_OWNER: safe_openat2 with SAFE_RESOLVE_SYMLINKS_OWNER_MATCH (its fast
 * path is one openat2 with RESOLVE_NO_SYMLINKS; a link sends it to the walker) */
enum method { M_OPENAT, M_REALPATH, M_O2_BENEATH, M_O2_INROOT, M_FAST, M_WALK, M_OWNER, NR_M };
extern const char *const m_key[NR_M];  /* CSV keys */
extern const char *const m_head[NR_M]; /* column heads */

enum tmethod { T_SAFE, T_SAFE_FALLBACK, T_RAW, T_MKSTEMP, NR_T };
extern const char *const t_key[NR_T];
extern const char *const t_head[NR_T];

enum kind { K_OPEN, K_TMP };
enum { SEC_SHAPES = 1, SEC_TMPFILE = 2, SEC_DEPTH = 4, SEC_MKDIR = 8, SEC_ALL = 15 };
enum status { ST_OK, ST_WRONG, ST_NOSYS, ST_NA, ST_FAIL, ST_SKIP };

#define NR_MAIN 10
#define NR_DEPTH 9 /* 1, 2, 4, ... 256 components */
#define NR_SHAPES (NR_MAIN + NR_DEPTH)
#define MAX_DEPTH 256
#define TREE_DEPTH 320  /* levels of d/ in the tree */
#define DOTDOT_DEPTH 300 /* the dotdot shape: DOTDOT_DEPTH x "d/" + "../f" */
#define BIGDIR_ENTRIES 10000
#define MAX_BATCHES 101
#define CHUNK 256 /* creations timed between untimed clean-ups */
#define NR_XATTR_ROWS 3
extern const int xattr_rows[NR_XATTR_ROWS]; /* xattrs per tmpfile row */

struct shape {
	const char *key, *label;
	char path[2 * TREE_DEPTH + 16];
	const char *expect; /* symlink-free path of the object; NULL: ENOENT expected */
	char expbuf[2 * TREE_DEPTH + 16];
	int components;
	bool in_root; /* resolved IN_ROOT (absolute symlink) */
	bool links;   /* the path meets a symbolic link */
	bool create;  /* O_CREAT|O_EXCL of a new name under "new/" */
	dev_t dev;
	ino_t ino;
};

struct cell {
	enum kind kind;
	int method;
	struct shape *shape; /* K_OPEN */
	int nx;              /* K_TMP: number of xattrs */
	enum status st;
	bool expected_wrong; /* an unsafe method that cannot do IN_ROOT */
	char detail[200];
	long ops; /* per batch */
	int nb;
	double ns[MAX_BATCHES];
	double med, min, max;
	double allocs; /* per call; < 0 unknown */
	double sys;    /* per call; < 0 unknown */
	char sysdetail[160];
};

/* Options and run state (bench.c). */
struct bench_opts {
	int rootfd;
	char root[PATH_MAX]; /* absolute, canonical path of the tree */
	size_t rootlen;
	unsigned seq; /* name counter for created files */
	bool quick, verify_only, allow_enosys, no_strace;
	int batches;
	double batch_ns;
	int cpu;
	unsigned only; /* sections to run: SEC_* bits */
	clockid_t clock; /* CLOCK_MONOTONIC, or CLOCK_THREAD_CPUTIME_ID (--clock cpu) */
	const char *dir, *csv;
	char exe[PATH_MAX];
};
extern struct bench_opts g;

extern volatile sig_atomic_t stop; /* set by SIGINT/SIGTERM: finish early */

extern struct shape shapes[NR_SHAPES];
extern struct cell main_cells[NR_MAIN][NR_M];
extern struct cell tmp_cells[NR_XATTR_ROWS][NR_T];
extern struct cell depth_cells[NR_DEPTH][NR_M];

extern const char xattr_value[32];
extern struct safe_xattr xattrs[4];
extern char xattr_names[4][16];

/* ------------------------------------------------------------------ bench.c */

double now_ns(void);
const char *errname(int e);

/* ------------------------------------------------------------------ alloc.c */

/* Allocation counting is off in sanitizer builds (they interpose malloc themselves). */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define BENCH_COUNT_ALLOCS 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || \
	__has_feature(memory_sanitizer)
#define BENCH_COUNT_ALLOCS 0
#endif
#endif
#ifndef BENCH_COUNT_ALLOCS
#define BENCH_COUNT_ALLOCS 1
#endif

unsigned long allocs_now(void);
bool alloc_counter_works(void);

/* Whether allocations are counted at all (alloc_counter_works() said yes). */
extern bool counting_allocs;

/* ------------------------------------------------------------------ shapes.c */

void init_shapes(void);
int build_tree(int rootfd);
void remove_tree(void);
const char *fs_name(int fd);

/* ------------------------------------------------------------------ methods.c */

bool cell_creates(const struct cell *c);
void fresh_name(const struct cell *c, char *buf, size_t n);
int cell_op(const struct cell *c, const char *path);
bool raw_openat2_exists(void);
void verify_cell(struct cell *c);

/* ------------------------------------------------------------------ tmpfile.c */

int op_tmp(int m, int nx, const char *path);
void print_tmpfile_section(void);

/* ------------------------------------------------------------------ measure.c */

enum { PROBE_CALLS = 8 }; /* calls counted per cell under strace */

double median(const double *v, int n, double *min, double *max);
void measure_row(struct cell *cells, int n);
bool ratio(const struct cell *a, const struct cell *b, double *r, double *lo, double *hi);
int probe_child(struct cell *c);
void count_syscalls(struct cell *c, int kind, int row);
bool strace_self(const char *out, const char *const *argv);
const char *strace_syscall(const char *line, size_t *len);

/* ------------------------------------------------------------------ report.c */

void print_cell(const struct cell *c, int width);
void print_ratio(const struct cell *a, const struct cell *b, int width);
const struct cell *o2_of(const struct cell *row);
void print_open_header(const char *first);
void print_open_row(const char *label, const struct cell *row);
void print_details(void);
int count_failures(void);
void print_linearity(void);
void print_allocs(void);
void run_syscall_counts(void);
int write_csv(const char *file);

/* ------------------------------------------------------------------ targets.c */

void report_targets(void);

/* ------------------------------------------------------------------ mkdir.c */

int mk_probe_child(int n, bool walker);
void print_mkdir_all_section(void);

#endif
