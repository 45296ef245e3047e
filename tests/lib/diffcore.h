/* SPDX-License-Identifier: MIT */
/*
 * Differential core shared by the random differential suite (tests/lib/test_fuzz.c)
 * and the libFuzzer target (fuzz/fuzz_resolve.c): build adversarial trees,
 * generate paths and flag sets, run one case through raw openat2(2),
 * safe_openat2() (default path) and safe_openat2() with SAFE_RESOLVE_USERSPACE
 * (the walker), and compare the results (same object, or same errno).
 *
 * This code uses plain syscalls and the public API only; it never aborts: a
 * mismatch is reported as text for the caller to fail with.
 */
#ifndef SAFEOPEN_DIFFCORE_H
#define SAFEOPEN_DIFFCORE_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* ---------------------------------------------------------------- PRNG */

struct dc_rng {
	uint64_t s;
};
uint64_t dc_mix(uint64_t a, uint64_t b);
uint64_t dc_next(struct dc_rng *r);
uint32_t dc_below(struct dc_rng *r, uint32_t n);
bool dc_chance(struct dc_rng *r, unsigned percent);

/* ---------------------------------------------------------------- trees */

#define DC_MAX_SPEC 192
#define DC_SPEC_LEN 600
#define DC_MAX_OBJS 512
#define DC_MAX_DIRS 160
#define DC_MAX_NAMES 96
#define DC_REL_MAX 512

struct dc_obj {
	dev_t dev;
	ino_t ino;
	char path[DC_REL_MAX]; /* relative to the base directory */
};

struct dc_dir {
	dev_t dev;
	char path[DC_REL_MAX];
};

/*
 * A test tree: <base>/root is the root the resolver is given, <base>/out and
 * <base>/top are outside it (escape targets). Spec lines (relative to base):
 *   "d PATH MODE", "f PATH", "l PATH TARGET", "h PATH EXISTING", "p PATH",
 *   "m PATH" (tmpfs mounted there, with f, d/, up -> ..),
 *   "b FROM PATH" (bind mount of FROM onto PATH).
 */
struct dc_tree {
	char base[PATH_MAX];
	int basefd, rootfd, subfd, filefd, procfd;
	char spec[DC_MAX_SPEC][DC_SPEC_LEN];
	size_t nspec;
	char names[DC_MAX_NAMES][64]; /* component pool for path generation */
	size_t nnames;
	bool dotdot_links; /* some symlink body has a ".." component */
	bool has_mounts;
	dev_t proc_dev;
	struct dc_obj objs[DC_MAX_OBJS];
	size_t nobjs;
	struct dc_dir dirs[DC_MAX_DIRS];
	size_t ndirs;
	char errbuf[512];
};

/* Generate a random tree spec into t (base must already be set). mounts: also
 * emit "m"/"b" lines (only for a process in its own mount namespace). */
void dc_tree_generate(struct dc_tree *t, struct dc_rng *r, bool mounts);
/* Use a fixed spec (NULL-terminated) instead. */
void dc_tree_set_spec(struct dc_tree *t, const char *const *spec);
/* Create base (must exist, empty) contents from the spec, open the fds, index
 * every object. Returns 0, or -1 with t->errbuf describing the failure. */
int dc_tree_build(struct dc_tree *t);
/* Close the fds, unmount, remove everything below base (base itself stays). */
void dc_tree_destroy(struct dc_tree *t);
/* Print the spec to stderr. */
void dc_tree_print(const struct dc_tree *t);

/* ---------------------------------------------------------------- cases */

enum { DC_DIR_ROOT, DC_DIR_SUB, DC_DIR_PROC, DC_DIR_FILE, DC_DIR_BAD };

struct dc_case {
	int dirsel;
	char path[PATH_MAX + 512];
	uint64_t flags, mode, resolve; /* resolve: SAFE_RESOLVE_* (may hold NO_DOTDOT) */
	bool expect_einval;	       /* scope bits invalid for the library on purpose */
};

void dc_case_generate(const struct dc_tree *t, struct dc_rng *r, struct dc_case *c);

/* Describe flags/resolve symbolically into buf. */
void dc_describe_case(const struct dc_case *c, char *buf, size_t size);

/*
 * Run the case through raw openat2, safe_openat2 and safe_openat2|USERSPACE
 * (which of the library paths: DC_IMPL_* bits), compare, and
 * undo any creation. Returns 0 when everything agrees, else 1 with a
 * description of the mismatch in out (which names the case and all results).
 */
#define DC_IMPL_DEFAULT 1
#define DC_IMPL_WALKER 2
#define DC_IMPL_FSTATAT 4  /* safe_fstatat_beneath, for O_PATH(|O_NOFOLLOW) cases */
#define DC_IMPL_REALPATH 8 /* safe_realpath_beneath, for O_PATH cases */
#define DC_IMPL_OPENDIR 16 /* safe_opendir_beneath, for O_RDONLY|O_DIRECTORY cases */
#define DC_IMPL_READLINK 32 /* safe_readlinkat_beneath, for O_PATH|O_NOFOLLOW cases */
int dc_run_case(struct dc_tree *t, const struct dc_case *c, int impls, char *out, size_t size);

/*
 * Run the case through one implementation only (0 raw openat2, 1 default
 * path, 2 walker), undo any creation, and describe the outcome canonically in
 * buf (equal strings = equal results). Returns 0, or 1 if the result was not
 * clean (something left behind, a descriptor without O_CLOEXEC).
 */
int dc_outcome(struct dc_tree *t, const struct dc_case *c, int impl, char *buf, size_t size);

/* Cases where the kernel's ELOOP came from its RCU-walk restart counting links
 * twice and the library's EXDEV was accepted (see diffcore-oracle.c). */
extern unsigned long dc_kernel_quirks;
/* Cases where raw openat2 kept failing with EAGAIN (a rename somewhere in the
 * system during each of 1000 tries): no oracle, only cleanliness checked. */
extern unsigned long dc_kernel_eagain;
/* Mismatches resolved by asking the kernel again: it gave the library's answer
 * itself (its answer for the same input changed, e.g. ELOOP after an RCU-walk
 * restart that counted a long link chain twice). */
extern unsigned long dc_kernel_unstable;

/* Two dc_outcome() strings for the same case agree (equal, or the kernel
 * double-counted-link ELOOP above). */
bool dc_outcome_equivalent(const struct dc_tree *t, const struct dc_case *c, const char *want,
			   const char *got);

/* True if the raw openat2 syscall works here (valgrind answers ENOSYS; then
 * dc_run_case() compares the default path with the walker instead). */
bool dc_kernel_has_openat2(void);

/* Print how often the oracle gave each outcome (this process, so far). */
void dc_stats_print(void);

/* The fixed adversarial tree used by the libFuzzer target (NULL-terminated). */
extern const char *const dc_fixed_spec[];

/* Remove everything below dir (not dir itself); no symlink is followed. */
int dc_rmtree_below(const char *dir);

#endif
