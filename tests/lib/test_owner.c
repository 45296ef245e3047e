/* SPDX-License-Identifier: MIT */
/*
 * Suite "owner": SAFE_RESOLVE_SYMLINKS_OWNER_MATCH, a symlink followed only
 * when its owner is the owner of what it resolves to (issue 42).
 *
 * As root, in a temporary tree whose parts belong to root and two other uids
 * (T_A, T_B: lchown), a table of rows: link owner against target owner,
 * root-owned links, middle and trailing links, links in a link body, chains,
 * bodies ending in "..", O_CREAT through a dangling link, O_NOFOLLOW, the
 * interaction with NO_SYMLINKS; each row under BENEATH and IN_ROOT, by the
 * default path (openat2 first) and by the walker alone
 * (SAFE_RESOLVE_USERSPACE). A refused row must leave every file as it was
 * (O_TRUNC, O_CREAT). Then the operations (fstatat, mkdir, realpath) that
 * take the bit, and the race: a process of uid T_A swaps its link between
 * its own file and T_B's while the suite opens it in a loop: T_B's file must
 * never be opened, and the attacker must have swapped (counted). Without
 * root every case is a SKIP.
 */
#define _GNU_SOURCE
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fixture.h"
#include "safeopen.h"

#define T_A 1001
#define T_B 1002
#define OWNER SAFE_RESOLVE_SYMLINKS_OWNER_MATCH

/*
 * The tree (owner in brackets; links shown as name -> body):
 *   a/ [A]  f [A], d/ [A] (g [A], bg [B]), sub/ [A]
 *           own -> f [A]              same owner, trailing
 *           foreign -> ../b/f [A]     A's link to B's file
 *           owndir -> d [A]           same owner, middle
 *           bdir -> ../b [A]          A's link to B's directory
 *           up -> sub/.. [A]          body ending in "..": resolves to a [A]
 *           top -> .. [A]             resolves to the root [root]
 *           absown -> /a/f [A]        absolute (IN_ROOT: a/f)
 *           absb -> /b/f [A]          absolute (IN_ROOT: b/f)
 *           c1 -> c2, c2 -> f [A]     a chain, all A
 *           c3 -> c4, c4 -> ../b/f [A] a chain ending at B's file
 *           tob -> ../b/bl [A]        through B's own link to B's file
 *           inbody -> owndir/g [A]    a link in a body, all A
 *           inbody2 -> owndir/bg [A]  the inner link passes, the outer not
 *           inbody3 -> bdir/f [A]     the inner link refused
 *           dang -> new [A]           dangling: O_CREAT would create root's
 *           fifo -> ../b/p [A]        B's FIFO (must not block)
 *           ar -> ../r/f [A]          A's link to root's file
 *   b/ [B]  f [B], p FIFO [B], bl -> f [B], tofa -> ../a/f [B]
 *   r/ [root] f [root], rl -> f [root], ra -> ../a/f [root],
 *           rdang -> newr [root]
 */
static const char *const tree_spec[] = {
	"d a", "f a/f a-file", "d a/d", "f a/d/g a-g", "f a/d/bg b-g", "d a/sub",
	"l a/own f", "l a/foreign ../b/f", "l a/owndir d", "l a/bdir ../b", "l a/up sub/..",
	"l a/top ..", "l a/absown /a/f", "l a/absb /b/f", "l a/c1 c2", "l a/c2 f",
	"l a/c3 c4", "l a/c4 ../b/f", "l a/tob ../b/bl", "l a/inbody owndir/g",
	"l a/inbody2 owndir/bg", "l a/inbody3 bdir/f", "l a/dang new", "l a/fifo ../b/p",
	"l a/ar ../r/f",
	"d b", "f b/f b-file", "p b/p", "l b/bl f", "l b/tofa ../a/f",
	"d r", "f r/f r-file", "l r/rl f", "l r/ra ../a/f", "l r/rdang newr",
	NULL,
};

/* Everything below a/ is A's and below b/ B's, but for these. */
static const struct {
	const char *path;
	uid_t uid;
} owner_exceptions[] = {
	{ "a/d/bg", T_B },
};

static char *base;
static int rootfd = -1;

static void chown_tree(int dfd, const char *rel, uid_t uid)
{
	ck_assert_msg(fchownat(dfd, rel, uid, uid, AT_SYMLINK_NOFOLLOW) == 0, "lchown %s: %s", rel,
		      strerror(errno));
	struct stat st;
	ck_assert(fstatat(dfd, rel, &st, AT_SYMLINK_NOFOLLOW) == 0);
	if (!S_ISDIR(st.st_mode))
		return;
	int d = openat(dfd, rel, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	ck_assert(d >= 0);
	DIR *dir = fdopendir(d);
	ck_assert(dir != NULL);
	for (struct dirent *e; (e = readdir(dir));) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		chown_tree(d, e->d_name, uid);
	}
	closedir(dir);
}

static void tree_setup(void)
{
	if (geteuid() != 0)
		return; /* each case SKIPs */
	base = fx_mkdtemp("owner");
	rootfd = open(base, O_PATH | O_DIRECTORY | O_CLOEXEC);
	ck_assert(rootfd >= 0);
	ck_assert(chmod(base, 0755) == 0);
	fx_build(rootfd, tree_spec);
	chown_tree(rootfd, "a", T_A);
	chown_tree(rootfd, "b", T_B);
	for (size_t i = 0; i < sizeof(owner_exceptions) / sizeof(owner_exceptions[0]); i++)
		ck_assert(fchownat(rootfd, owner_exceptions[i].path, owner_exceptions[i].uid,
				   owner_exceptions[i].uid, AT_SYMLINK_NOFOLLOW) == 0);
}

static void tree_teardown(void)
{
	if (rootfd >= 0)
		close(rootfd);
	rootfd = -1;
	if (base) {
		fx_rmtree(base);
		free(base);
		base = NULL;
	}
}

/* ---------------------------------------------------------------- the rows */

#define OK 0
/* How a row is opened. */
#define RD O_RDONLY
#define TRUNC (O_WRONLY | O_TRUNC)
#define CREAT (O_WRONLY | O_CREAT)

struct row {
	const char *name;
	const char *path;
	int oflags;
	uint64_t extra;    /* resolve bits besides scope and OWNER */
	int beneath;       /* OK or the errno under BENEATH */
	int in_root;       /* OK or the errno under IN_ROOT */
	const char *obj;   /* on success: the object opened (relative, lstat) */
};

static const struct row rows[] = {
	/* No link: the fast path's single openat2. */
	{ "nolink-own", "a/f", RD, 0, OK, OK, "a/f" },
	{ "nolink-dir", "b", RD | O_DIRECTORY, 0, OK, OK, "b" },
	/* Trailing links. */
	{ "trailing-same-owner", "a/own", RD, 0, OK, OK, "a/f" },
	{ "trailing-foreign", "a/foreign", RD, 0, ELOOP, ELOOP, NULL },
	{ "trailing-foreign-trunc", "a/foreign", TRUNC, 0, ELOOP, ELOOP, NULL },
	{ "trailing-foreign-fifo", "a/fifo", RD, 0, ELOOP, ELOOP, NULL },
	{ "trailing-foreign-path", "a/foreign", O_PATH, 0, ELOOP, ELOOP, NULL },
	{ "trailing-b-own", "b/bl", RD, 0, OK, OK, "b/f" },
	{ "trailing-b-to-a", "b/tofa", RD, 0, ELOOP, ELOOP, NULL },
	{ "trailing-foreign-dir", "a/bdir", RD | O_DIRECTORY, 0, ELOOP, ELOOP, NULL },
	{ "trailing-own-dir-slash", "a/owndir/", RD, 0, OK, OK, "a/d" },
	{ "trailing-foreign-slash", "a/bdir/", RD, 0, ELOOP, ELOOP, NULL },
	/* Middle links. */
	{ "middle-same-owner", "a/owndir/g", RD, 0, OK, OK, "a/d/g" },
	{ "middle-foreign", "a/bdir/f", RD, 0, ELOOP, ELOOP, NULL },
	{ "middle-foreign-dotdot", "a/bdir/../a/f", RD, 0, ELOOP, ELOOP, NULL },
	{ "middle-foreign-trunc", "a/bdir/f", TRUNC, 0, ELOOP, ELOOP, NULL },
	{ "middle-foreign-creat", "a/bdir/new", CREAT, 0, ELOOP, ELOOP, NULL },
	{ "middle-own-creat", "a/owndir/new", CREAT | O_EXCL, 0, OK, OK, "a/d/new" },
	/* Bodies ending in "..". */
	{ "body-dotdot-same", "a/up/f", RD, 0, OK, OK, "a/f" },
	{ "body-dotdot-trailing", "a/up", RD | O_DIRECTORY, 0, OK, OK, "a" },
	{ "body-dotdot-root", "a/top/r/f", RD, 0, ELOOP, ELOOP, NULL },
	{ "body-dotdot-root-trailing", "a/top", RD | O_DIRECTORY, 0, ELOOP, ELOOP, NULL },
	/* Absolute bodies. */
	{ "absolute-same", "a/absown", RD, 0, EXDEV, OK, "a/f" },
	{ "absolute-foreign", "a/absb", RD, 0, EXDEV, ELOOP, NULL },
	/* Chains: each link against what it resolves to. */
	{ "chain-same", "a/c1", RD, 0, OK, OK, "a/f" },
	{ "chain-foreign-end", "a/c3", RD, 0, ELOOP, ELOOP, NULL },
	{ "chain-through-b-link", "a/tob", RD, 0, ELOOP, ELOOP, NULL },
	/* Links in a link body. */
	{ "in-body-same", "a/inbody", RD, 0, OK, OK, "a/d/g" },
	{ "in-body-outer-foreign", "a/inbody2", RD, 0, ELOOP, ELOOP, NULL },
	{ "in-body-inner-foreign", "a/inbody3", RD, 0, ELOOP, ELOOP, NULL },
	/* Root-owned links: the same rule (no exception). */
	{ "root-link-root-file", "r/rl", RD, 0, OK, OK, "r/f" },
	{ "root-link-user-file", "r/ra", RD, 0, ELOOP, ELOOP, NULL },
	{ "user-link-root-file", "a/ar", RD, 0, ELOOP, ELOOP, NULL },
	/* O_CREAT through a dangling link: the caller (root) would own it. */
	{ "dangling-user-link-creat", "a/dang", CREAT, 0, ELOOP, ELOOP, NULL },
	{ "dangling-user-link-read", "a/dang", RD, 0, ENOENT, ENOENT, NULL },
	{ "dangling-root-link-creat", "r/rdang", CREAT, 0, OK, OK, "r/newr" },
	/* A trailing link not followed needs no check. */
	{ "nofollow-path", "a/foreign", O_PATH | O_NOFOLLOW, 0, OK, OK, "a/foreign" },
	{ "nofollow", "a/foreign", RD | O_NOFOLLOW, 0, ELOOP, ELOOP, NULL },
	{ "excl-on-link", "a/own", CREAT | O_EXCL, 0, EEXIST, EEXIST, NULL },
	/* NO_SYMLINKS is stricter: no link at all. */
	{ "no-symlinks-wins", "a/own", RD, SAFE_RESOLVE_NO_SYMLINKS, ELOOP, ELOOP, NULL },
	{ "no-symlinks-nolink", "a/f", RD, SAFE_RESOLVE_NO_SYMLINKS, OK, OK, "a/f" },
};

#define NROWS (sizeof(rows) / sizeof(rows[0]))

/* Files whose content a refused row must not change. */
static const char *const untouched[] = { "a/f", "b/f", "r/f", "a/d/bg" };

static void check_row(const struct row *r, uint64_t scope, bool walker)
{
	uint64_t resolve = scope | OWNER | r->extra | (walker ? SAFE_RESOLVE_USERSPACE : 0);
	int want = scope == SAFE_RESOLVE_BENEATH ? r->beneath : r->in_root;
	const char *how = walker ? "walker" : "default";
	const char *sc = scope == SAFE_RESOLVE_BENEATH ? "BENEATH" : "IN_ROOT";
	struct safe_open_how h = {
		.flags = (uint64_t)(unsigned)(r->oflags | O_CLOEXEC),
		.mode = (r->oflags & O_CREAT) ? 0644 : 0,
		.resolve = resolve,
	};
	errno = 0;
	int fd = safe_openat2(rootfd, r->path, &h, sizeof(h));
	int err = errno;
	if (want != OK) {
		ck_assert_msg(fd == -1 && err == want, "%s (%s, %s): %s: got %d errno %s, want %s",
			      r->name, sc, how, r->path, fd, strerror(err), strerror(want));
	} else {
		ck_assert_msg(fd >= 0, "%s (%s, %s): %s: %s", r->name, sc, how, r->path,
			      strerror(err));
		ck_assert_msg(fx_same_object(fd, rootfd, r->obj), "%s (%s, %s): not %s", r->name,
			      sc, how, r->obj);
		close(fd);
		if (r->oflags & O_CREAT) /* the next run creates it again */
			ck_assert(unlinkat(rootfd, r->obj, 0) == 0);
	}
}

START_TEST(test_rows)
{
	FX_REQUIRE_ROOT("the rows need files of other owners (lchown)");
	const struct row *r = &rows[_i];
	char *before = fx_tree_snapshot(base);
	for (int w = 0; w < 2; w++) {
		check_row(r, SAFE_RESOLVE_BENEATH, w);
		check_row(r, SAFE_RESOLVE_IN_ROOT, w);
	}
	char *after = fx_tree_snapshot(base);
	/* A row that created (and removed) a file changed a directory's mtime. */
	bool created = (r->oflags & O_CREAT) && (r->beneath == OK || r->in_root == OK);
	ck_assert_msg(created || !strcmp(before, after), "%s: the tree changed", r->name);
	free(before);
	free(after);
	for (size_t i = 0; i < sizeof(untouched) / sizeof(untouched[0]); i++) {
		struct stat st;
		ck_assert(fstatat(rootfd, untouched[i], &st, 0) == 0 && st.st_size > 0);
	}
}
END_TEST

/* Without the bit every link in the table is followed (the tree is what the
 * rows say it is). */
START_TEST(test_rows_without_bit)
{
	FX_REQUIRE_ROOT("the rows need files of other owners (lchown)");
	static const char *const followed[] = { "a/foreign", "a/bdir/f", "a/inbody2", "a/tob",
						"r/ra", "a/ar", "a/c3" };
	for (size_t i = 0; i < sizeof(followed) / sizeof(followed[0]); i++) {
		int fd = safe_openat_beneath(rootfd, followed[i], O_RDONLY, 0);
		ck_assert_msg(fd >= 0, "%s: %s", followed[i], strerror(errno));
		close(fd);
	}
}
END_TEST

/* Unknown bits next to the new one are still refused. */
START_TEST(test_flags)
{
	struct safe_open_how h = { .flags = O_RDONLY,
				   .resolve = SAFE_RESOLVE_BENEATH | OWNER | (1ULL << 36) };
	ck_fails(safe_openat2(AT_FDCWD, ".", &h, sizeof(h)), EINVAL);
	struct stat st;
	ck_fails(safe_fstatat_beneath(AT_FDCWD, ".", &st, OWNER | (1ULL << 36)), EINVAL);
	h.resolve = SAFE_RESOLVE_BENEATH | OWNER;
	int fd = safe_openat2(AT_FDCWD, ".", &h, sizeof(h));
	ck_assert_msg(fd >= 0, "%s", strerror(errno));
	close(fd);
	ck_ok(safe_fstatat_beneath(AT_FDCWD, ".", &st, OWNER));
}
END_TEST

/* The operations take the bit: middle links in the parent, a followed
 * trailing link (SAFE_FOLLOW), realpath. */
START_TEST(test_operations)
{
	FX_REQUIRE_ROOT("needs files of other owners (lchown)");
	struct stat st;
	ck_fails(safe_fstatat_beneath(rootfd, "a/foreign", &st, OWNER | SAFE_FOLLOW), ELOOP);
	ck_ok(safe_fstatat_beneath(rootfd, "a/own", &st, OWNER | SAFE_FOLLOW));
	ck_assert_uint_eq(st.st_uid, T_A);
	ck_ok(safe_fstatat_beneath(rootfd, "a/foreign", &st, OWNER)); /* the link itself */
	ck_fails(safe_mkdirat_beneath(rootfd, "a/bdir/x", 0755, OWNER), ELOOP);
	ck_assert(faccessat(rootfd, "b/x", F_OK, AT_SYMLINK_NOFOLLOW) == -1 && errno == ENOENT);
	ck_ok(safe_mkdirat_beneath(rootfd, "a/owndir/x", 0755, OWNER));
	ck_assert(unlinkat(rootfd, "a/d/x", AT_REMOVEDIR) == 0);
	char buf[PATH_MAX];
	ck_fails(safe_realpath_beneath(rootfd, "a/inbody2", buf, sizeof(buf), OWNER), ELOOP);
	ck_ok(safe_realpath_beneath(rootfd, "a/inbody", buf, sizeof(buf), OWNER));
	ck_assert_str_eq(buf, "a/d/g");
	ck_fails(safe_open_parent_beneath(rootfd, "a/bdir/f", OWNER, buf, sizeof(buf)), ELOOP);
}
END_TEST

/* ---------------------------------------------------------------- the race */

struct race_stats {
	atomic_long swaps;
	atomic_int stop;
	atomic_int ready;
};

/* The attacker, uid T_A: replaces a/l (and a/m, a directory link) by
 * rename() of a fresh link, alternately to its own file (directory) and to
 * B's. */
static int attacker(int dfd, struct race_stats *s)
{
	if (setresgid(T_A, T_A, T_A) < 0 || setresuid(T_A, T_A, T_A) < 0)
		return 1;
	atomic_store(&s->ready, 1);
	for (long i = 0; !atomic_load(&s->stop); i++) {
		bool own = i & 1;
		if (symlinkat(own ? "f" : "../b/f", dfd, "a/l.tmp") < 0 ||
		    renameat(dfd, "a/l.tmp", dfd, "a/l") < 0)
			return 1;
		if (symlinkat(own ? "d" : "../b", dfd, "a/m.tmp") < 0 ||
		    renameat(dfd, "a/m.tmp", dfd, "a/m") < 0)
			return 1;
		atomic_fetch_add(&s->swaps, 1);
	}
	return 0;
}

START_TEST(test_race)
{
	FX_REQUIRE_ROOT("the attacker runs as another uid");
	ck_assert(chmod(base, 0755) == 0);
	/* B's directory gets an "f" of its own under d's name too. */
	int bd = openat(rootfd, "b", O_PATH | O_DIRECTORY | O_CLOEXEC);
	ck_assert(bd >= 0);
	int gf = openat(rootfd, "b/g", O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	ck_assert(gf >= 0 && fchown(gf, T_B, T_B) == 0);
	close(gf);
	close(bd);
	ck_assert(symlinkat("f", rootfd, "a/l") == 0 && symlinkat("d", rootfd, "a/m") == 0);
	ck_assert(fchownat(rootfd, "a/l", T_A, T_A, AT_SYMLINK_NOFOLLOW) == 0);
	ck_assert(fchownat(rootfd, "a/m", T_A, T_A, AT_SYMLINK_NOFOLLOW) == 0);

	struct race_stats *s = mmap(NULL, sizeof(*s), PROT_READ | PROT_WRITE,
				    MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ck_assert(s != MAP_FAILED);
	atomic_init(&s->swaps, 0);
	atomic_init(&s->stop, 0);
	atomic_init(&s->ready, 0);
	pid_t pid = fork();
	ck_assert(pid >= 0);
	if (pid == 0)
		_exit(attacker(rootfd, s));
	while (!atomic_load(&s->ready)) {
		int st;
		ck_assert_msg(waitpid(pid, &st, WNOHANG) == 0, "the attacker could not start");
		usleep(100);
	}

	/* 2,500 attempts (200,000 under check-long), and on until the attack
	 * has shown (100 swaps, an own file opened and a link refused), at most
	 * 20 times as many. */
	long attempts = fx_size(2500, 200000, 10), most = 20 * attempts, i;
	long foreign = 0, own = 0, refused = 0, other = 0;
	long swaps_at_start = atomic_load(&s->swaps);
	for (i = 0; i < most && (i < attempts || own == 0 || refused == 0 ||
				 atomic_load(&s->swaps) - swaps_at_start < 100);
	     i++) {
		uint64_t scope = (i & 2) ? SAFE_RESOLVE_IN_ROOT : SAFE_RESOLVE_BENEATH;
		struct safe_open_how h = {
			.flags = O_RDONLY | O_CLOEXEC,
			.resolve = scope | OWNER | ((i & 4) ? SAFE_RESOLVE_USERSPACE : 0),
		};
		int fd = safe_openat2(rootfd, (i & 1) ? "a/m/g" : "a/l", &h, sizeof(h));
		if (fd < 0) {
			if (errno == ELOOP)
				refused++;
			else
				other++; /* ENOENT: between symlinkat and rename there is no
				          * a/m/g in d ... or EAGAIN */
			continue;
		}
		struct stat st;
		ck_assert(fstat(fd, &st) == 0);
		close(fd);
		if (st.st_uid == T_B)
			foreign++;
		else
			own++;
	}
	long swaps = atomic_load(&s->swaps) - swaps_at_start;
	atomic_store(&s->stop, 1);
	int st;
	ck_assert(waitpid(pid, &st, 0) == pid);
	munmap(s, sizeof(*s));
	fprintf(stderr,
		"# owner race: %ld attempts, %ld swaps: %ld opened own file, %ld refused (ELOOP), "
		"%ld other errors, %ld opened the other user's file\n",
		i, swaps, own, refused, other, foreign);
	/* Under valgrind the attacker child's exit status is valgrind's, not
	 * the attacker's (it changes uid under the tool); its swaps, counted
	 * below, still prove that it ran. */
	ck_assert_msg(fx_under_valgrind() || (WIFEXITED(st) && WEXITSTATUS(st) == 0),
		      "the attacker failed");
	ck_assert_msg(foreign == 0, "%ld opens of the other user's file", foreign);
	ck_assert_msg(swaps >= 100, "the attacker swapped only %ld times", swaps);
	ck_assert_msg(own > 0 && refused > 0, "the swaps did not show: %ld own, %ld refused", own,
		      refused);
}
END_TEST

static Suite *owner_suite(void)
{
	Suite *s = suite_create("owner");
	TCase *tc = tcase_create("rows");
	tcase_add_checked_fixture(tc, tree_setup, tree_teardown);
	tcase_add_checked_fixture(tc, fx_fd_setup, fx_fd_teardown);
	tcase_add_loop_test(tc, test_rows, 0, (int)NROWS);
	tcase_add_test(tc, test_rows_without_bit);
	tcase_add_test(tc, test_flags);
	tcase_add_test(tc, test_operations);
	suite_add_tcase(s, tc);
	TCase *race = tcase_create("race");
	tcase_set_timeout(race, 600);
	tcase_add_checked_fixture(race, tree_setup, tree_teardown);
	tcase_add_checked_fixture(race, fx_fd_setup, fx_fd_teardown);
	tcase_add_test(race, test_race);
	suite_add_tcase(s, race);
	return s;
}

FX_MAIN(owner_suite)
