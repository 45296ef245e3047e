/* SPDX-License-Identifier: MIT */
/*
 * Suite "fuzz": differential random testing of safe_openat2() against the
 * kernel's openat2(2).
 *
 * A seeded generator builds random trees (directories with assorted modes,
 * files, a FIFO, hard links, relative / absolute / dangling / looping symlinks,
 * links climbing with "..", link chains around the 40-link limit), random
 * paths (tree names, ".", "..", "//", trailing slashes, absolute paths, over
 * long paths) and random flag sets (every scope with every combination of
 * NO_XDEV / NO_MAGICLINKS / NO_SYMLINKS, O_CREAT / O_EXCL / O_TRUNC / O_PATH /
 * O_NOFOLLOW / O_DIRECTORY / O_TMPFILE, invalid combinations), and checks that
 * safe_openat2() - default path and SAFE_RESOLVE_USERSPACE walker - returns
 * what raw openat2 returns: the same object (st_dev/st_ino, access mode) or
 * the same errno; creations are compared by name and mode and undone, so each
 * case starts from the same tree.
 *
 * Variants: as root in this process; unprivileged (euid 65534, so directory
 * modes matter) in a child; with a tmpfs and a bind mount inside the tree in
 * a child with its own mount namespace (NO_XDEV, ".." across mounts); and on
 * the fixed adversarial tree of the libFuzzer target.
 *
 * Environment: SAFEOPEN_FUZZ_SEED (default: from the clock, printed),
 * SAFEOPEN_FUZZ_CASES (total cases, default 40000), SAFEOPEN_FUZZ_TIME (time
 * budget in seconds, default 60; the suite stops early and says how many
 * cases ran), SAFEOPEN_FUZZ_STATS (set: print
 * the distribution of the kernel's answers), SAFEOPEN_FUZZ_REPORTS (mismatches
 * printed before a variant stops, default 5), SAFEOPEN_FUZZ_IMPL (a list of
 * "default", "walker", "fstatat", "realpath", "opendir", "readlink": compare
 * only those library functions; default all). safe_opendir_beneath() joins
 * for O_RDONLY|O_DIRECTORY cases, safe_readlinkat_beneath() for
 * O_PATH|O_NOFOLLOW cases outside procfs (the body of the link openat2 opens,
 * EINVAL for anything else), safe_fstatat_beneath() joins the comparison
 * for O_PATH and O_PATH|O_NOFOLLOW cases (it must stat the object those
 * open) and safe_realpath_beneath() for O_PATH cases without NO_SYMLINKS and
 * outside procfs (a canonical path, re-resolved without following anything,
 * must reach the same object). Under valgrind the case count is divided by 8.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <inttypes.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "diffcore.h"
#include "fixture.h"
#include "safeopen.h"
#include "sandbox.h"

#define CASES_PER_TREE 150
static int max_reports = 5;

static uint64_t seed;
static long total_cases;
static double total_time;
static int min_percent;
static int impls =
	DC_IMPL_DEFAULT | DC_IMPL_WALKER | DC_IMPL_FSTATAT | DC_IMPL_REALPATH | DC_IMPL_OPENDIR |
	DC_IMPL_READLINK;

static void read_env(void)
{
	const char *s = getenv("SAFEOPEN_FUZZ_SEED");
	if (s && *s)
		seed = strtoull(s, NULL, 0);
	else
		seed = (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 32);
	s = getenv("SAFEOPEN_FUZZ_CASES");
	total_cases = s && *s ? strtol(s, NULL, 0) : fx_long() ? 40000 : 4000;
	total_cases = fx_scale(total_cases, 8);
	/* The floor: the time budget never cuts a run below it (a slow machine
	 * runs longer rather than checking less). */
	s = getenv("SAFEOPEN_FUZZ_MIN_PERCENT");
	min_percent = s && *s ? atoi(s) : 50;
	s = getenv("SAFEOPEN_FUZZ_TIME");
	total_time = s && *s ? strtod(s, NULL) : fx_long() ? 60.0 : 20.0;
	s = getenv("SAFEOPEN_FUZZ_REPORTS");
	if (s && *s)
		max_reports = atoi(s) > 0 ? atoi(s) : 1;
	/* For narrowing a failure down: compare only one library path. */
	s = getenv("SAFEOPEN_FUZZ_IMPL");
	if (s && *s) {
		impls = 0;
		if (strstr(s, "default"))
			impls |= DC_IMPL_DEFAULT;
		if (strstr(s, "walker"))
			impls |= DC_IMPL_WALKER;
		if (strstr(s, "fstatat"))
			impls |= DC_IMPL_FSTATAT;
		if (strstr(s, "realpath"))
			impls |= DC_IMPL_REALPATH;
		if (strstr(s, "opendir"))
			impls |= DC_IMPL_OPENDIR;
		if (strstr(s, "readlink"))
			impls |= DC_IMPL_READLINK;
	}
}

enum variant { V_ROOT, V_FIXED, V_UNPRIV, V_MOUNTS };
static const char *const variant_name[] = { "root", "fixed-tree", "unprivileged", "mounts" };
/* Share of the cases and of the time budget, in percent. */
static const int variant_share[] = { 55, 15, 15, 15 };

struct run {
	enum variant v;
	long cases;
	long min_cases; /* asserted: the budget does not stop the run before */
	double budget;
	const char *base;
	/* results */
	long ran;
	int failures;
	int setup_error;
};

static int run_trees(struct run *rn)
{
	struct dc_tree *t = calloc(1, sizeof(*t));
	if (!t)
		return 1;
	snprintf(t->base, sizeof(t->base), "%s", rn->base);
	double start = fx_now();
	char msg[8192];
	/* Not root: the whole run is unprivileged already, and mounts are out
	 * of reach. */
	bool unpriv = rn->v == V_UNPRIV && geteuid() == 0;
	bool mounts = rn->v == V_MOUNTS && sb_can_mount();

	for (uint64_t tree = 0; rn->ran < rn->cases; tree++) {
		if (fx_now() - start > rn->budget && rn->ran >= rn->min_cases)
			break;
		uint64_t tseed = dc_mix(dc_mix(seed, (uint64_t)rn->v + 1), tree);
		struct dc_rng r = { tseed };
		if (rn->v == V_FIXED)
			dc_tree_set_spec(t, dc_fixed_spec);
		else
			dc_tree_generate(t, &r, mounts);
		if (dc_tree_build(t) < 0) {
			fprintf(stderr, "test_fuzz[%s]: seed %" PRIu64 " tree %" PRIu64 ": %s\n",
				variant_name[rn->v], seed, tree, t->errbuf);
			dc_tree_print(t);
			dc_tree_destroy(t);
			rn->setup_error = 1;
			break;
		}
		if (unpriv && (setegid(65534) < 0 || seteuid(65534) < 0)) {
			rn->setup_error = 1;
			dc_tree_destroy(t);
			break;
		}
		for (int i = 0; i < CASES_PER_TREE && rn->ran < rn->cases; i++) {
			struct dc_case c;
			struct dc_rng cr = { dc_mix(tseed, (uint64_t)i + 1) };
			dc_case_generate(t, &cr, &c);
			rn->ran++;
			if (dc_run_case(t, &c, impls, msg, sizeof(msg))) {
				rn->failures++;
				if (rn->failures <= max_reports) {
					fprintf(stderr,
						"test_fuzz[%s]: SAFEOPEN_FUZZ_SEED=%" PRIu64
						" tree %" PRIu64 " case %d\n%s",
						variant_name[rn->v], seed, tree, i, msg);
					dc_tree_print(t);
				}
			}
		}
		if (unpriv && (seteuid(0) < 0 || setegid(0) < 0)) {
			rn->setup_error = 1;
			dc_tree_destroy(t);
			break;
		}
		dc_tree_destroy(t);
		if (rn->failures >= max_reports)
			break;
	}
	fprintf(stderr,
		"test_fuzz[%s]: seed %" PRIu64 ": %ld cases in %.1f s, %d mismatches "
		"(accepted: %lu kernel double-counted-link ELOOPs, %lu where the kernel changed "
		"its answer, %lu without an oracle: kernel EAGAIN)\n",
		variant_name[rn->v], seed, rn->ran, fx_now() - start, rn->failures,
		dc_kernel_quirks, dc_kernel_unstable, dc_kernel_eagain);
	if (getenv("SAFEOPEN_FUZZ_STATS"))
		dc_stats_print();
	free(t);
	if (!rn->failures && !rn->setup_error && rn->ran < rn->min_cases) {
		fprintf(stderr, "test_fuzz[%s]: only %ld cases, the floor is %ld\n",
			variant_name[rn->v], rn->ran, rn->min_cases);
		return 1;
	}
	return rn->failures || rn->setup_error ? 1 : 0;
}

static int child_unpriv(void *arg)
{
	if (geteuid() == 0 && setgroups(0, NULL) < 0)
		return 2;
	return run_trees(arg);
}

static int child_mounts(void *arg)
{
	struct run *rn = arg;
	if (fx_enter_mount_ns() < 0)
		CHILD_SKIP("no mount namespace (%s): the mounts variant cannot run",
			   strerror(errno));
	return run_trees(rn);
}

static void run_variant(enum variant v)
{
	struct run rn = {
		.v = v,
		.cases = total_cases * variant_share[v] / 100,
		.budget = total_time * variant_share[v] / 100,
	};
	if (rn.cases < 1)
		rn.cases = 1;
	rn.min_cases = rn.cases * min_percent / 100;
	if (v == V_MOUNTS && !sb_can_mount())
		fx_skip("the mounts variant needs root or a user namespace");
	char *base = fx_mkdtemp("fuzz");
	ck_assert_int_eq(chmod(base, 0755), 0);
	rn.base = base;
	int rc;
	if (v == V_UNPRIV)
		rc = sb_run(child_unpriv, &rn);
	else if (v == V_MOUNTS && sb_can_mount())
		rc = sb_run(child_mounts, &rn);
	else
		rc = run_trees(&rn);
	ck_assert_int_eq(fx_rmtree(base), 0);
	free(base);
	if (rc == FX_CHILD_SKIP)
		fx_skip("variant %s: the child could not enter a mount namespace (see stderr)",
			variant_name[v]);
	ck_assert_msg(rc == 0,
		      "differential mismatches or setup failure in variant %s "
		      "(reproduce with SAFEOPEN_FUZZ_SEED=%" PRIu64 "; details on stderr), rc %d",
		      variant_name[v], seed, rc);
}

START_TEST(differential_root)
{
	run_variant(V_ROOT);
}
END_TEST

START_TEST(differential_fixed_tree)
{
	run_variant(V_FIXED);
}
END_TEST

START_TEST(differential_unprivileged)
{
	run_variant(V_UNPRIV);
}
END_TEST

START_TEST(differential_mounts)
{
	run_variant(V_MOUNTS);
}
END_TEST

static Suite *fuzz_suite(void)
{
	Suite *s = suite_create("fuzz");
	TCase *tc = tcase_create("differential");
	tcase_add_checked_fixture(tc, fx_fd_setup, fx_fd_teardown);
	tcase_set_timeout(tc, total_time * 2 + 120);
	tcase_add_test(tc, differential_root);
	tcase_add_test(tc, differential_fixed_tree);
	tcase_add_test(tc, differential_unprivileged);
	tcase_add_test(tc, differential_mounts);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	read_env();
	fprintf(stderr, "test_fuzz: SAFEOPEN_FUZZ_SEED=%" PRIu64 " cases=%ld budget=%.0fs\n", seed,
		total_cases, total_time);
	if (!dc_kernel_has_openat2())
		fprintf(stderr, "test_fuzz: oracle skipped: no openat2 here (valgrind, old kernel, seccomp): the default path is "
				"compared with the walker, not with the kernel\n");
	return fx_main(fuzz_suite());
}
