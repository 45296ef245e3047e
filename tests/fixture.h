/* SPDX-License-Identifier: MIT */
/*
 * Shared test helpers: the open-fd fixture, temporary trees built from a small
 * spec language, tree snapshots for "nothing outside changed" checks.
 * These helpers use plain syscalls, never the library under test.
 */
#ifndef SAFEOPEN_TEST_FIXTURE_H
#define SAFEOPEN_TEST_FIXTURE_H

#include <check.h>
#include <stdbool.h>
#include <stddef.h>

/* ---------------------------------------------------------------- fd accounting */

/* The set of open descriptors of this process (fds 0..FX_MAX_FD-1). */
#define FX_MAX_FD 4096
struct fx_fdset {
	unsigned char open[FX_MAX_FD / 8];
	int count;
};
void fx_fdset_take(struct fx_fdset *set);
/* Describe the difference ("leaked: 7 (/tmp/x) closed: 5") into buf; returns
 * true if the sets are equal. */
bool fx_fdset_equal(const struct fx_fdset *before, const struct fx_fdset *after, char *buf,
		    size_t size);
/* Number of open descriptors right now. */
int fx_fd_count(void);

/* Checked fixture: add with tcase_add_checked_fixture(tc, fx_fd_setup, fx_fd_teardown)
 * (after any fixture that opens fds it keeps for the whole test, so those are
 * counted as "before"). The teardown fails the test if the set of open fds
 * changed. */
void fx_fd_setup(void);
void fx_fd_teardown(void);

/* ---------------------------------------------------------------- temporary trees */

/* Create a fresh directory "<base>/safeopen-<tag>-XXXXXX" where base is
 * $SAFEOPEN_TEST_DIR, else the current directory (the build tree, so ext4 on
 * the CI machine). Returns a malloc'd absolute path; aborts the test on error. */
char *fx_mkdtemp(const char *tag);

/* Remove a tree recursively without following symlinks (nftw, FTW_PHYS).
 * Returns 0 or -1. Unmounts nothing: unmount before. */
int fx_rmtree(const char *path);

/*
 * Build entries relative to dirfd from a NULL-terminated spec array:
 *   "d NAME [MODE]"        directory (mode in octal, default 0755)
 *   "f NAME [CONTENT]"     regular file; CONTENT is the rest of the line
 *   "l NAME TARGET"        symlink NAME -> TARGET (TARGET is the rest of the line)
 *   "p NAME"               FIFO
 *   "h NAME EXISTING"      hard link NAME to EXISTING
 * Aborts the test (ck_abort_msg) naming the line on any failure.
 */
void fx_build(int dirfd, const char *const *spec);

/* Stat identity helpers: true if fd refers to the object at dirfd/path (lstat). */
bool fx_same_object(int fd, int dirfd, const char *path);

/*
 * A recursive listing of a tree with type, mode, size, mtime (ns), link
 * targets and file contents hash, one line per entry, sorted: compare two
 * snapshots with strcmp to prove nothing below `path` changed. malloc'd.
 */
char *fx_tree_snapshot(const char *path);

/* Names in a directory, sorted and joined with '\n' (no "." / ".."); malloc'd. */
char *fx_dir_listing(int dirfd, const char *path);

/* True when running under `make check-valgrind` (SAFEOPEN_TEST_VALGRIND=1):
 * tests scale iteration counts down, never skip assertions. */
bool fx_under_valgrind(void);

/* Iteration/time budget scaled for valgrind: returns n, or n/div under valgrind (at least 1). */
long fx_scale(long n, long valgrind_div);

/* Seconds since an arbitrary point (CLOCK_MONOTONIC). */
double fx_now(void);

#endif
