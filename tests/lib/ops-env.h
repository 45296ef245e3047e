/* SPDX-License-Identifier: MIT */
/*
 * The environment of the operations suites (test_ops, test_rmtree,
 * test_realpath): a fresh temporary directory with two siblings, "root" (the
 * dirfd handed to the library, holding an adversarial tree) and "outside"
 * (what must never be touched: snapshots of it are compared before and
 * after); and the attacker thread of their races.
 */
#ifndef SAFEOPEN_TESTS_OPS_ENV_H
#define SAFEOPEN_TESTS_OPS_ENV_H

#include <limits.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <sys/types.h>

#include "safeopen.h"

#ifndef RENAME_EXCHANGE
#define RENAME_EXCHANGE (1 << 1)
#endif

/* Loop tests: bit 0 of the index = the userspace walker, else the fast path. */
#define MODE(i) (((i) & 1) ? SAFE_RESOLVE_USERSPACE : 0)

struct ops_env {
	char *base;
	char root[PATH_MAX];
	char outside[PATH_MAX];
	int rootfd;
	int outfd;
};
extern struct ops_env E;

/* The adversarial tree beneath E.root, the victims in E.outside; and its removal. */
void env_open(void);
void env_close(void);
/* out = a + "/" + b (out has PATH_MAX bytes). */
void pj(char *out, const char *a, const char *b);
/* A symlink name -> target (target an absolute path). */
void build_link(int dirfd, const char *name, const char *target);
bool exists_at(int dirfd, const char *path);
/* The mode of path (not followed); the case fails when it does not exist. */
mode_t lmode(int dirfd, const char *path);

/* The environment with a second root: E's, plus base/r2 (A2) with the
 * adversarial shape of the main root's part (links up, abs, deep,
 * link_dir, ...), and two more links to outside in E's root (up_victim,
 * up_new). For rename/link across two roots, the mknod oracle, the scopes. */
struct root2 {
	char path[PATH_MAX];
	int fd;
};
extern struct root2 A2;
void two_roots_open(void);
void two_roots_close(void);

/* Paths that escape E's root (or A2's) under BENEATH; under IN_ROOT the
 * same paths stay inside and name nothing. */
#define N_OPS_ESCAPES 8
extern const char *const ops_escapes[N_OPS_ESCAPES];

struct swapper {
	int dirfd;          /* directory holding both names */
	const char *a, *b;  /* swapped with RENAME_EXCHANGE */
	atomic_bool stop;
	atomic_long swaps;
};

/* Swaps a and b of a struct swapper with RENAME_EXCHANGE until stop. */
void *swap_thread(void *arg);

/* Loop tests: how the index's bit 0 resolves, for messages. */
#define WAY(m) ((m) ? "walker" : "fast path")
#define N_ROWS(rows) (sizeof(rows) / sizeof((rows)[0]))

/*
 * The one runner of the refusal tables: for each row k of n, try(k, m, &t)
 * makes the library's call (t.e: its errno, 0 if it succeeded) and, where
 * the row asks it, the oracle's (t.asked, t.ke), and names the row (t.name);
 * each row must hold (refusal_holds(): both errnos the row's, the tree under
 * `tree` unchanged). The first that does not fails the case: the tree is no
 * longer the one the next rows expect. A row may be skipped (t.skip).
 */
struct refusal_try {
	int e, ke, want;
	bool asked, skip;
	const char *oracle;
	char name[PATH_MAX];
};
typedef void (*refusal_fn)(size_t k, uint64_t m, struct refusal_try *t);

void run_refusals(const char *tree, size_t n, uint64_t m, refusal_fn try);

#endif
