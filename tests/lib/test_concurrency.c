/* SPDX-License-Identifier: MIT */
/*
 * Suite "concurrency": 8 threads resolve and create beneath a root while an
 * attacker thread moves a directory out of the root and back, swaps a symlink
 * between an inside and an outside target (RENAME_EXCHANGE), and swaps two
 * directories inside the root. At least 0.3 s and 5,000 operations (10 s and 20,000 under
 * check-long; 1 s and 200 under valgrind), at most 30 s more.
 *
 * Workers also try to unlink, rmtree and rename away names that exist only
 * outside the root (reached through the moving directory or the swapped link).
 *
 * Checked: no crash; no escape - every descriptor the library returns is
 * compared with the set of objects that are never beneath the root (the
 * outside directory and its contents, the base directory and all its
 * ancestors up to "/") and must be on the root's filesystem; nothing is
 * created outside (listings of the base and outside directories unchanged);
 * no descriptor leaked (fd fixture). Errors (EAGAIN, ENOENT, EXDEV, ...) are
 * all acceptable under attack; an escape never is.
 *
 * Also built with ThreadSanitizer by .ci/run (./configure --enable-tsan).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "fixture.h"
#include "safeopen.h"

#define WORKERS 8
#define MAX_OUTSIDE 256

struct ident {
	dev_t dev;
	ino_t ino;
};

static char *base_path;
static int basefd = -1, rootfd = -1, outfd = -1;
static dev_t root_dev;
static struct ident outside[MAX_OUTSIDE];
static size_t noutside;
static char *base_listing, *out_listing, *sdir_listing;

static atomic_bool stop;
static atomic_long n_ops, n_ok, n_escapes;
/* Proof that the attack happened: the attacker's successful moves and swaps,
 * and the naive control (plain openat, no library) reaching outside. */
static atomic_long n_moves, n_swaps, n_control, n_control_escapes;
static pthread_mutex_t escape_lock = PTHREAD_MUTEX_INITIALIZER;
static char escape_msg[1024];

static void add_outside(int dirfd, const char *path)
{
	struct stat st;
	ck_assert_msg(fstatat(dirfd, path, &st, AT_SYMLINK_NOFOLLOW) == 0, "stat %s", path);
	ck_assert_int_lt(noutside, MAX_OUTSIDE);
	outside[noutside++] = (struct ident){ st.st_dev, st.st_ino };
}

static void setup(void)
{
	base_path = fx_mkdtemp("concurrency");
	basefd = open(base_path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	ck_assert_int_ge(basefd, 0);
	static const char *const spec[] = {
		"d root",
		"d out",
		"f out/secret s",
		"d out/sdir",
		"f out/sdir/f s",
		"l out/up ../root",
		"d root/a",
		"d root/a/b",
		"d root/a/b/c",
		"f root/a/f",
		"f root/a/b/c/f",
		"d root/mv",
		"d root/mv/x",
		"f root/mv/x/f",
		"l root/mv/x/up ../..",
		"l root/link a",
		"l root/link.alt ../out",
		"d root/s1",
		"d root/s2",
		"f root/s1/f",
		"f root/s2/g",
		"d root/work",
		NULL,
	};
	fx_build(basefd, spec);
	rootfd = openat(basefd, "root", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	outfd = openat(basefd, "out", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	ck_assert_int_ge(rootfd, 0);
	ck_assert_int_ge(outfd, 0);
	struct stat st;
	ck_assert_int_eq(fstat(rootfd, &st), 0);
	root_dev = st.st_dev;
	for (int i = 0; i < WORKERS; i++) {
		char name[32];
		snprintf(name, sizeof(name), "work/t%d", i);
		ck_assert_int_eq(mkdirat(rootfd, name, 0755), 0);
	}

	/* Never beneath the root: out/ and what it holds now, the base
	 * directory and every ancestor up to "/". */
	noutside = 0;
	add_outside(basefd, "out");
	add_outside(basefd, "out/secret");
	add_outside(basefd, "out/sdir");
	add_outside(basefd, "out/sdir/f");
	add_outside(basefd, "out/up");
	int cur = dup(basefd);
	ck_assert_int_ge(cur, 0);
	for (int depth = 0; depth < 64; depth++) {
		struct stat a, b;
		ck_assert_int_eq(fstat(cur, &a), 0);
		add_outside(cur, ".");
		int up = openat(cur, "..", O_PATH | O_DIRECTORY | O_CLOEXEC);
		ck_assert_int_ge(up, 0);
		ck_assert_int_eq(fstat(up, &b), 0);
		close(cur);
		cur = up;
		if (a.st_dev == b.st_dev && a.st_ino == b.st_ino)
			break;
	}
	close(cur);
	base_listing = fx_dir_listing(basefd, ".");
	out_listing = fx_dir_listing(basefd, "out");
	sdir_listing = fx_dir_listing(basefd, "out/sdir");
	atomic_store(&stop, false);
	atomic_store(&n_ops, 0);
	atomic_store(&n_ok, 0);
	atomic_store(&n_escapes, 0);
	atomic_store(&n_moves, 0);
	atomic_store(&n_swaps, 0);
	atomic_store(&n_control, 0);
	atomic_store(&n_control_escapes, 0);
	escape_msg[0] = '\0';
}

static void teardown(void)
{
	close(rootfd);
	close(outfd);
	close(basefd);
	rootfd = outfd = basefd = -1;
	free(base_listing);
	free(out_listing);
	free(sdir_listing);
	ck_assert_int_eq(fx_rmtree(base_path), 0);
	free(base_path);
}

/* ---------------------------------------------------------------- checking results */

static void record_escape(const char *what, const char *path, uint64_t resolve, int fd)
{
	atomic_fetch_add(&n_escapes, 1);
	pthread_mutex_lock(&escape_lock);
	if (!escape_msg[0]) {
		char link[64], target[512] = "";
		snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
		ssize_t n = fd >= 0 ? readlink(link, target, sizeof(target) - 1) : -1;
		target[n > 0 ? n : 0] = '\0';
		snprintf(escape_msg, sizeof(escape_msg), "%s: path \"%s\" resolve 0x%llx -> %s",
			 what, path, (unsigned long long)resolve, target);
	}
	pthread_mutex_unlock(&escape_lock);
}

/* The object of fd must not be one that is never beneath the root. */
static void check_inside(int fd, const char *what, const char *path, uint64_t resolve)
{
	struct stat st;
	if (fstat(fd, &st) < 0) {
		record_escape("fstat failed", path, resolve, fd);
		return;
	}
	if (st.st_dev != root_dev) {
		record_escape(what, path, resolve, fd);
		return;
	}
	for (size_t i = 0; i < noutside; i++) {
		if (outside[i].dev == st.st_dev && outside[i].ino == st.st_ino) {
			record_escape(what, path, resolve, fd);
			return;
		}
	}
}

/* ---------------------------------------------------------------- threads */

static const char *const attack_paths[] = {
	"mv/x/f",
	"mv/x/../../a/f",
	"mv/x/../..",
	"mv/x/../../..",
	"mv/x/../../../out/secret",
	"mv/x/../../secret",
	"mv/x/../../sdir/f",
	"mv/x/../../up/a/f",
	"mv/x/up",
	"mv/x/up/a/f",
	"mv/x/up/../out",
	"mv/..",
	"mv/../..",
	"link",
	"link/f",
	"link/secret",
	"link/sdir/f",
	"link/../out/secret",
	"a/b/c/../../../mv/x/f",
	"s1/f",
	"s1/../s2/g",
	"s1/..",
	"/mv/x/../../../out",
	"mv/x/up/mv/x/up/mv/x/../../..",
	"mv/x/../x/f",          /* ".." then the name it left (taken back) */
	"mv/../mv/x/../../secret",
	"mv/x/../x/../../a/f",
	".",
	"..",
};
#define N_ATTACK_PATHS (sizeof(attack_paths) / sizeof(attack_paths[0]))

static uint64_t xorshift(uint64_t *s)
{
	uint64_t x = *s;
	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return *s = x;
}

/* valgrind runs one thread at a time: give the others (and the main thread's
 * clock) a chance. */
static bool throttle;

static void *worker(void *arg)
{
	int id = (int)(intptr_t)arg;
	uint64_t rng = 0x9e3779b97f4a7c15ULL * (uint64_t)(id + 1);
	static const struct safe_xattr xa[] = { { "user.w", "1", 1 } };
	char path[256];
	long k = 0;

	while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
		uint64_t r = xorshift(&rng);
		uint64_t resolve = (r & 1) ? SAFE_RESOLVE_BENEATH : SAFE_RESOLVE_IN_ROOT;
		if (r & 2)
			resolve |= SAFE_RESOLVE_USERSPACE;
		int kind = (int)((r >> 8) % 12);
		int fd = -1;
		k++;
		atomic_fetch_add_explicit(&n_ops, 1, memory_order_relaxed);
		if (kind < 6) {
			const char *p = attack_paths[(r >> 16) % N_ATTACK_PATHS];
			static const uint64_t oflags[] = { O_PATH, O_RDONLY, O_RDONLY | O_DIRECTORY,
							   O_PATH | O_NOFOLLOW };
			struct safe_open_how how = { .flags = oflags[(r >> 24) % 4],
						     .resolve = resolve };
			fd = safe_openat2(rootfd, p, &how, sizeof(how));
			if (fd >= 0)
				check_inside(fd, "open", p, resolve);
			snprintf(path, sizeof(path), "%s", p);
		} else if (kind < 8) {
			/* create through the moving directory and directly; while
			 * mv is outside, "mv/x/../../sdir" is out/sdir */
			static const char *const prefix[] = { "work/t", "mv/x/../../work/t",
							      "mv/x/../../sdir/t",
							      "mv/x/up/../sdir/t" };
			snprintf(path, sizeof(path), "%s%d%sf%ld", prefix[(r >> 20) % 4], id,
				 (r >> 20) % 4 < 2 ? "/" : "-", k);
			struct safe_open_how how = { .flags = O_WRONLY | O_CREAT | O_EXCL,
						     .mode = 0644,
						     .resolve = resolve };
			fd = safe_openat2(rootfd, path, &how, sizeof(how));
			if (fd >= 0)
				check_inside(fd, "create", path, resolve);
		} else if (kind < 9) {
			snprintf(path, sizeof(path), "%swork/t%d/d%ld",
				 (r >> 20) & 1 ? "link/../" : "", id, k);
			fd = safe_mkdir_all_beneath(rootfd, path, 0755, resolve);
			if (fd >= 0)
				check_inside(fd, "mkdir -p", path, resolve);
		} else if (kind < 10) {
			snprintf(path, sizeof(path), "mv/x/../../work/t%d/x%ld", id, k);
			fd = safe_tmpfile_xattr(rootfd, path, 0644, xa, 1, resolve);
			if (fd >= 0)
				check_inside(fd, "tmpfile", path, resolve);
		} else {
			/* Destructive operations on names that exist only outside
			 * (while mv is out, "mv/x/../.." is out/): any success is an
			 * escape, and the listings at the end would show it too. */
			static const char *const victims[] = { "mv/x/../../sdir/f", "mv/x/up/secret",
							       "mv/x/../../sdir", "link/secret" };
			const char *v = victims[(r >> 20) % 4];
			int rc;
			switch ((r >> 24) % 3) {
			case 0:
				rc = safe_unlinkat_beneath(rootfd, v, resolve);
				break;
			case 1:
				rc = safe_rmtree_beneath(rootfd, v, resolve);
				break;
			default:
				snprintf(path, sizeof(path), "work/t%d/stolen%ld", id, k);
				rc = safe_renameat_beneath(rootfd, v, rootfd, path, resolve);
				break;
			}
			if (rc == 0)
				record_escape("destructive operation succeeded", v, resolve, -1);
		}
		if (fd >= 0) {
			atomic_fetch_add_explicit(&n_ok, 1, memory_order_relaxed);
			close(fd);
		}
		if (throttle)
			usleep(100);
	}
	return NULL;
}

static void *attacker(void *arg)
{
	(void)arg;
	bool out = false;
	while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
		/* move mv out of the root and back */
		if (!out && renameat(rootfd, "mv", outfd, "mv") == 0) {
			out = true;
			atomic_fetch_add(&n_moves, 1);
		} else if (out && renameat(outfd, "mv", rootfd, "mv") == 0) {
			out = false;
			atomic_fetch_add(&n_moves, 1);
		}
		/* swap link (-> a) with link.alt (-> ../out) */
		if (syscall(SYS_renameat2, rootfd, "link", rootfd, "link.alt", RENAME_EXCHANGE) == 0)
			atomic_fetch_add(&n_swaps, 1);
		/* swap two directories inside */
		if (syscall(SYS_renameat2, rootfd, "s1", rootfd, "s2", RENAME_EXCHANGE) == 0)
			atomic_fetch_add(&n_swaps, 1);
		if (throttle)
			usleep(50);
	}
	if (out)
		(void)renameat(outfd, "mv", rootfd, "mv");
	return NULL;
}

/* The naive control: plain openat() of paths through the moving directory
 * and the swapped link under the same attack; reaching out/sdir/f or
 * out/secret shows that the attack is real. */
static void *control(void *arg)
{
	const struct stat *victims = arg;
	static const char *const paths[] = { "mv/x/../../sdir/f", "link/secret" };
	for (unsigned i = 0; !atomic_load_explicit(&stop, memory_order_relaxed); i++) {
		const struct stat *v = &victims[i & 1];
		int fd = openat(rootfd, paths[i & 1], O_PATH | O_CLOEXEC);
		atomic_fetch_add(&n_control, 1);
		if (fd >= 0) {
			struct stat st;
			if (fstat(fd, &st) == 0 && st.st_ino == v->st_ino && st.st_dev == v->st_dev)
				atomic_fetch_add(&n_control_escapes, 1);
			close(fd);
		}
		if (throttle)
			usleep(100);
	}
	return NULL;
}

START_TEST(attacker_renames_and_swaps)
{
	/* At least `seconds`, and on until the floors are reached (a slow
	 * machine runs longer rather than checking less), at most `cap`. */
	double seconds = fx_under_valgrind() ? 1.0 : fx_long() ? 10.0 : 0.15;
	double cap = fx_under_valgrind() ? 60.0 : 30.0 + seconds;
	const long min_ops = fx_under_valgrind() ? 200 : fx_long() ? 20000 : 5000, min_moves = 20;
	throttle = fx_under_valgrind();
	struct stat victim[2];
	ck_assert_int_eq(fstatat(basefd, "out/sdir/f", &victim[0], AT_SYMLINK_NOFOLLOW), 0);
	ck_assert_int_eq(fstatat(basefd, "out/secret", &victim[1], AT_SYMLINK_NOFOLLOW), 0);
	pthread_t w[WORKERS], a, c;
	ck_assert_int_eq(pthread_create(&a, NULL, attacker, NULL), 0);
	ck_assert_int_eq(pthread_create(&c, NULL, control, victim), 0);
	for (int i = 0; i < WORKERS; i++)
		ck_assert_int_eq(pthread_create(&w[i], NULL, worker, (void *)(intptr_t)i), 0);
	double start = fx_now();
	while (fx_now() - start < cap &&
	       (fx_now() - start < seconds || atomic_load(&n_ops) < min_ops ||
		atomic_load(&n_moves) < min_moves || atomic_load(&n_control_escapes) == 0))
		usleep(20000);
	double took = fx_now() - start;
	atomic_store(&stop, true);
	for (int i = 0; i < WORKERS; i++)
		ck_assert_int_eq(pthread_join(w[i], NULL), 0);
	ck_assert_int_eq(pthread_join(a, NULL), 0);
	ck_assert_int_eq(pthread_join(c, NULL), 0);

	fprintf(stderr,
		"concurrency: %.1f s: %ld operations, %ld succeeded, %ld escapes; attacker: %ld "
		"moves, %ld swaps; control (plain openat): %ld escapes in %ld opens\n",
		took, atomic_load(&n_ops), atomic_load(&n_ok), atomic_load(&n_escapes),
		atomic_load(&n_moves), atomic_load(&n_swaps), atomic_load(&n_control_escapes),
		atomic_load(&n_control));
	ck_assert_msg(atomic_load(&n_escapes) == 0, "%ld escapes; first: %s",
		      atomic_load(&n_escapes), escape_msg);
	ck_assert_msg(atomic_load(&n_ops) >= min_ops, "only %ld operations in %.1f s (floor %ld)",
		      atomic_load(&n_ops), took, min_ops);
	if (atomic_load(&n_moves) < min_moves || atomic_load(&n_control_escapes) == 0)
		fx_skip("attacker starved: %ld moves (floor %ld), plain openat escaped %ld times "
			"in %.1f s",
			atomic_load(&n_moves), min_moves, atomic_load(&n_control_escapes), took);

	/* mv is back inside; nothing was created outside */
	ck_assert_int_eq(faccessat(rootfd, "mv/x/f", F_OK, AT_SYMLINK_NOFOLLOW), 0);
	char *bl = fx_dir_listing(basefd, ".");
	char *ol = fx_dir_listing(basefd, "out");
	ck_assert_str_eq(bl, base_listing);
	ck_assert_str_eq(ol, out_listing);
	char *sl = fx_dir_listing(basefd, "out/sdir");
	ck_assert_str_eq(sl, sdir_listing);
	free(bl);
	free(ol);
	free(sl);
}
END_TEST

static Suite *concurrency_suite(void)
{
	Suite *s = suite_create("concurrency");
	TCase *tc = tcase_create("attack");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_checked_fixture(tc, fx_fd_setup, fx_fd_teardown);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, attacker_renames_and_swaps);
	suite_add_tcase(s, tc);
	return s;
}

FX_MAIN(concurrency_suite)
