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
#include <stdint.h>
#include <errno.h>
#include <string.h>
#include <unistd.h>

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
/* The same of the directory open at fd (read from its start: the fd's offset
 * moves), three system calls where opening it by name is seven. */
char *fx_fd_listing(int fd);

/* True when running under valgrind (`make check-valgrind`): tests scale
 * iteration counts down, never skip assertions. */
bool fx_under_valgrind(void);

/* Iteration/time budget scaled for valgrind: returns n, or n/div under valgrind (at least 1). */
long fx_scale(long n, long valgrind_div);

/* Seconds since an arbitrary point (CLOCK_MONOTONIC). */
double fx_now(void);

/* Check-side assertions of a call's result, as the syscalls report it:
 * ck_fails(expr, err): expr returns -1 with errno err; ck_ok(expr): >= 0. */
#define ck_fails(expr, err)                                                                 \
	do {                                                                                \
		errno = 0;                                                                  \
		long r_ = (long)(expr);                                                     \
		int e_ = errno;                                                             \
		ck_assert_msg(r_ == -1 && e_ == (err), "%s: got %ld, errno %d (%s); want %s", \
			      #expr, r_, e_, strerror(e_), strerror(err));                  \
	} while (0)

#define ck_ok(expr)                                                                     \
	do {                                                                            \
		errno = 0;                                                              \
		long r_ = (long)(expr);                                                 \
		ck_assert_msg(r_ >= 0, "%s: got %ld (%s)", #expr, r_, strerror(errno)); \
	} while (0)

/*
 * ck_assert_msg() for loops of thousands: the same failure (file, line, the
 * condition, the printf-style message: required), but nothing when it holds.
 * A passing Check assertion writes its location to the runner (one write(2)
 * each: 45,000 in test_walk, a sixth of its system calls); FX_ASSERT only
 * loses that "last passed here" mark, which matters for a case that crashes.
 */
#ifdef SAFEOPEN_MINICHECK_H /* tests/harness/minicheck (the musl build) */
#define FX_FAILED_ _ck_failed
#else
#define FX_FAILED_ _ck_assert_failed
#endif
#define FX_ASSERT(expr, ...)                                                            \
	do {                                                                            \
		if (!(expr))                                                            \
			FX_FAILED_(__FILE__, __LINE__, "Assertion '" #expr "' failed",   \
				   __VA_ARGS__);                                         \
	} while (0)

/* ---------------------------------------------------------------- runner */

/*
 * The one main() of every suite: FX_MAIN(ops_suite). Runs every case (Check's
 * CK_FORK and CK_RUN_SUITE/CK_RUN_CASE apply) and prints TAP on stdout, one
 * line per case (Automake's tap-driver turns it into PASS / FAIL / SKIP
 * counts), then "# <suite>: N cases run, P passed, S skipped, F failed".
 * Returns 0 unless a case failed. As root, first enters a private mount
 * namespace in which "/" is read-only and only the build directory
 * (SAFEOPEN_TEST_DIR, else the current directory) and /tmp stay writable, so
 * that a harness bug cannot write to the host (see fx_isolation()).
 */
int fx_main(Suite *suite);
#define FX_MAIN(suite_fn)                      \
	int main(void)                         \
	{                                      \
		return fx_main(suite_fn());    \
	}

/* True if the test process started as root (stays true in a child that
 * entered a user namespace or dropped privileges). */
bool fx_started_as_root(void);

/* How the runner protected the host: "private mount namespace, / read-only",
 * "unprivileged", or why it could not. */
const char *fx_isolation(void);

/*
 * End the current case as SKIP (never PASS) with a reason that the TAP line
 * and the log show. Call it from the case itself (Check context), before the
 * case has done anything that needs cleaning up. Children run with sb_run()
 * use CHILD_SKIP() and the parent's fx_run_child() instead.
 */
__attribute__((noreturn, format(printf, 1, 2))) void fx_skip(const char *fmt, ...);

/* Do new files in the directory dfd take user.* xattrs? tmpfs has them only
 * from Linux 6.6 (a build tree on tmpfs, or /dev/shm, on an older kernel). */
bool fx_user_xattrs(int dfd);
#define FX_NO_USER_XATTRS                                                            \
	"no user xattrs on the test directory's filesystem (tmpfs has them from Linux " \
	"6.6; SAFEOPEN_TEST_DIR=a directory on ext4, xfs or btrfs runs these cases)"

/* The skip reasons everybody needs. */
#define FX_REQUIRE_ROOT(why)                                                               \
	do {                                                                               \
		if (geteuid() != 0)                                                        \
			fx_skip("needs root (uid %u): %s", (unsigned)geteuid(), (why));    \
	} while (0)

/*
 * Child-side assertion (in functions run by sb_run()/fx_run_child(): they
 * must not call Check): on failure prints file:line, the condition, errno and
 * the optional printf-style message on stderr and returns 1 from the child
 * function. The one name for what used to be CHILD_CHECK, CK and CKMSG.
 */
__attribute__((format(printf, 5, 6))) void fx_child_report(const char *file, int line,
							  const char *cond, int err,
							  const char *fmt, ...);
#define CHILD_CHECK(cond, ...)                                                              \
	do {                                                                                \
		if (!(cond)) {                                                              \
			fx_child_report(__FILE__, __LINE__, #cond, errno, " " __VA_ARGS__); \
			return 1;                                                           \
		}                                                                           \
	} while (0)

/* Child-side "cannot run here": records the reason for the parent and
 * returns FX_CHILD_SKIP from the child function. */
#define FX_CHILD_SKIP 77
__attribute__((format(printf, 1, 2))) void fx_child_skip_reason(const char *fmt, ...);
#define CHILD_SKIP(...)                              \
	do {                                         \
		fx_child_skip_reason(__VA_ARGS__);   \
		return FX_CHILD_SKIP;                \
	} while (0)

/*
 * Parent side: run fn(arg) in a child (sb_run). 0 passes; FX_CHILD_SKIP makes
 * the case SKIP with the child's reason; anything else fails the case naming
 * `what` (the child printed the details on stderr).
 */
void fx_run_child(int (*fn)(void *), void *arg, const char *what);

/*
 * Enter a private mount namespace in which this process may mount (for use
 * in a child): as root unshare(CLONE_NEWNS); otherwise a user namespace
 * mapping the caller to root plus a mount namespace. Mount propagation is
 * made private either way. Returns 0, or -1 with errno (then the caller
 * should CHILD_SKIP). The process must be single-threaded.
 */
int fx_enter_mount_ns(void);

/*
 * openat2(2) as a test's kernel oracle: the raw syscall, asked again while it
 * answers EAGAIN (any rename in the system during a ".." step makes it; other
 * tests run beside this one), at most 100,000 times; not under
 * RESOLVE_CACHED, whose EAGAIN is an answer. ENOSYS or EPERM (no openat2
 * here) is returned as it is.
 */
long fx_openat2(int dirfd, const char *path, uint64_t flags, uint64_t mode, uint64_t resolve);

/* ---------------------------------------------------------------- sizes */

/* True under `make check-long` (SAFEOPEN_CHECK_LONG=1): the big sizes. */
bool fx_long(void);
/* quick under `make check`, full under check-long (either divided by div
 * under valgrind, at least 1). */
long fx_size(long quick, long full, long valgrind_div);

#endif
