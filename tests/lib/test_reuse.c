/* SPDX-License-Identifier: MIT */
/*
 * Suite "reuse": climbing ("..") must be immune to inode-number reuse.
 *
 * The attack (issue 11): while a walk stands in root/.../a/b, an attacker who
 * can write outside the root on the same filesystem does
 *     rename root/.../a/b -> X/stash     (b leaves the root)
 *     rmdir  root/.../a                  (frees a's inode number)
 *     mkdir  X/evil/c                    (ext4 hands out that number again)
 *     rename X/stash -> X/evil/c/b       (b's ".." is now c)
 * and a ".." from b accepted by (st_dev, st_ino) lands in c, outside.
 *
 * retired_design_open() below is that design, kept as the reference the
 * attack defeats (case retired_design_escapes).
 *
 * Deterministic reproducers: the victim thread installs a seccomp
 * user-notification filter on openat/openat2/unlinkat (for itself only), so
 * the main thread sees each of those calls before the kernel runs it and
 * performs the four steps at exactly the chosen call: the first one after
 * the walker opened "b" (the ".." step of a walker that opens ".."), or the
 * removal of the last entry of b (the moment before rmtree climbs out of
 * b). Each runs in a forked child with a private mount namespace on a fresh
 * 16 MiB ext4 image (loop mount), where a freed inode number goes to the next
 * mkdir. Needs root (mount, loop device) and mkfs.ext4: otherwise SKIP.
 * Checked: nothing outside is opened, created or removed; the attack ran.
 *
 * Also: the plain race (an attacker thread doing the four steps in a loop
 * against walker calls, plus a rename storm that sends the default path to
 * the walker), run to an asserted minimum of attack rounds and victim calls
 * (at least 0.2 s and 500 of each; 60 s and 5,000 with SAFEOPEN_CHECK_LONG=1); and
 * chains deeper than the walker's and rmtree's held descriptors, compared
 * with the kernel.
 */
#define _GNU_SOURCE
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <spawn.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "fixture.h"
#include "safeopen.h"
#include "sandbox.h"

#define SKIP 77
#define ESCAPED 1
#define NO_ATTACK 2
#define SETUP 3

/* ---------------------------------------------------------------- ext4 scratch */

static int run_quiet(char *const argv[])
{
	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
	posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
	pid_t pid;
	int rc = posix_spawnp(&pid, argv[0], &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	if (rc != 0)
		return -1;
	int st;
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/*
 * In a forked child: a private mount namespace, a tmpfs "cage" on dir/cage
 * that becomes the child's root (chroot), and a fresh ext4 on /mnt inside
 * it. Returns an O_DIRECTORY fd of the ext4, or -SKIP / -SETUP.
 *
 * The cage is what keeps a failing test harmless: with a defence disabled
 * (make check-mutations) a walk or an rmtree climbs out of the ext4 by "..",
 * and it then lands in the empty tmpfs, whose ".." is itself (the root of
 * the process): no ".." and no path can reach the host's files.
 */
static int ext4_scratch(const char *dir)
{
	if (unshare(CLONE_NEWNS) < 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0) {
		fprintf(stderr, "test_reuse: no mount namespace (%s)\n", strerror(errno));
		return -SKIP;
	}
	char img[PATH_MAX], cage[PATH_MAX], mnt[PATH_MAX];
	(void)snprintf(img, sizeof(img), "%s/ext4.img", dir);
	(void)snprintf(cage, sizeof(cage), "%s/cage", dir);
	(void)snprintf(mnt, sizeof(mnt), "%s/cage/mnt", dir);
	if (mkdir(cage, 0755) < 0 ||
	    mount("cage", cage, "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, "size=1m,mode=0755") < 0) {
		fprintf(stderr, "test_reuse: cannot mount the tmpfs cage (%s)\n", strerror(errno));
		return -SKIP;
	}
	int fd = open(img, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0 || ftruncate(fd, 16 << 20) < 0 || mkdir(mnt, 0755) < 0) {
		perror("test_reuse: image");
		return -SETUP;
	}
	close(fd);
	char a0[] = "mkfs.ext4", a1[] = "-q", a2[] = "-F", a3[] = "-m", a4[] = "0";
	char *mkfs[] = { a0, a1, a2, a3, a4, img, NULL };
	if (run_quiet(mkfs) != 0) {
		fprintf(stderr, "test_reuse: mkfs.ext4 failed or missing\n");
		return -SKIP;
	}
	char b0[] = "mount", b1[] = "-t", b2[] = "ext4", b3[] = "-o", b4[] = "loop";
	char *mnt_argv[] = { b0, b1, b2, b3, b4, img, mnt, NULL };
	if (run_quiet(mnt_argv) != 0) {
		fprintf(stderr, "test_reuse: cannot loop-mount an ext4 image\n");
		return -SKIP;
	}
	if (chroot(cage) < 0 || chdir("/") < 0) {
		fprintf(stderr, "test_reuse: cannot enter the cage (%s)\n", strerror(errno));
		return -SETUP;
	}
	int m = open("/mnt", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (m < 0)
		return -SETUP;
	return m;
}

/* The child's mounts go with its mount namespace; the cage stays its root. */
static void ext4_release(int m)
{
	close(m);
	(void)umount2("/mnt", MNT_DETACH);
}

static int mkdirs(int m, const char *const *dirs)
{
	for (; *dirs; dirs++)
		if (mkdirat(m, *dirs, 0755) < 0)
			return -1;
	return 0;
}

static int put_file(int m, const char *path, const char *content)
{
	int fd = openat(m, path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return -1;
	ssize_t n = write(fd, content, strlen(content));
	close(fd);
	return n == (ssize_t)strlen(content) ? 0 : -1;
}

static bool exists(int m, const char *path)
{
	struct stat st;
	return fstatat(m, path, &st, AT_SYMLINK_NOFOLLOW) == 0;
}

static ino_t ino_of(int m, const char *path)
{
	struct stat st;
	return fstatat(m, path, &st, AT_SYMLINK_NOFOLLOW) == 0 ? st.st_ino : 0;
}

/* ---------------------------------------------------------------- the attack */

struct attack {
	const char *moved;  /* "root/a/b": the directory the walk stands in */
	const char *level;  /* "root/a": the level it climbs to */
	const char *inside; /* name of `moved` under X/evil/c */
	ino_t level_ino;    /* a's inode number before the attack */
	bool reused;        /* c got a's number */
	bool done;
};

/* The four steps, plus the bait in c. Returns 0 or -1. */
static int dance(int m, struct attack *a)
{
	char dst[PATH_MAX];
	a->level_ino = ino_of(m, a->level);
	if (renameat(m, a->moved, m, "X/stash") < 0)
		return -1;
	if (unlinkat(m, a->level, AT_REMOVEDIR) < 0)
		return -1;
	if (mkdirat(m, "X/evil/c", 0755) < 0)
		return -1;
	a->reused = ino_of(m, "X/evil/c") == a->level_ino;
	if (put_file(m, "X/evil/c/target", "outside\n") < 0 ||
	    put_file(m, "X/evil/c/precious", "outside\n") < 0)
		return -1;
	(void)snprintf(dst, sizeof(dst), "X/evil/c/%s", a->inside);
	if (renameat(m, "X/stash", m, dst) < 0)
		return -1;
	a->done = true;
	return 0;
}

/* ---------------------------------------------------------------- paused victim */

enum op { OP_OPEN, OP_CREAT, OP_UNLINK, OP_RMTREE, OP_OPEN_DEFAULT, OP_RETIRED };

/* ------------------------------------------------------- the retired design */

/*
 * The walker's ".." before the held chain (issue 11), kept here as the
 * reference the attack defeats (case retired_design_escapes): the walk
 * descends by single names (O_PATH|O_NOFOLLOW|O_DIRECTORY), records each
 * level's (st_dev, st_ino), and for ".." opens the kernel's ".." of cur and
 * accepts it when its identity is the one recorded for the level above.
 * The recorded level is not held open, so its inode number can be freed
 * and handed out again: that is the hole. Plain paths only (no symlinks,
 * no absolute paths): enough for "a/b/../target". Opens the last name
 * O_RDONLY|O_NOFOLLOW; returns the fd or -1 with errno (EAGAIN: ".." was
 * not the level recorded).
 */
#define RETIRED_LEVELS 64
static int retired_design_open(int rootfd, const char *path)
{
	struct {
		dev_t dev;
		ino_t ino;
	} id[RETIRED_LEVELS];
	struct stat st;
	int cur = fcntl(rootfd, F_DUPFD_CLOEXEC, 0);
	if (cur < 0 || fstat(cur, &st) < 0)
		goto fail;
	id[0].dev = st.st_dev;
	id[0].ino = st.st_ino;
	size_t depth = 0;
	char name[NAME_MAX + 1];
	for (const char *p = path;;) {
		size_t n = strcspn(p, "/");
		if (n == 0 || n > NAME_MAX) {
			errno = ENOENT;
			goto fail;
		}
		memcpy(name, p, n);
		name[n] = '\0';
		p += n + strspn(p + n, "/");
		if (*p == '\0') {
			int fd = openat(cur, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
			int err = errno;
			close(cur);
			errno = err;
			return fd;
		}
		if (strcmp(name, ".") == 0)
			continue;
		int next;
		if (strcmp(name, "..") == 0) {
			if (depth == 0) {
				errno = EXDEV;
				goto fail;
			}
			next = openat(cur, "..", O_PATH | O_DIRECTORY | O_CLOEXEC);
			if (next < 0 || fstat(next, &st) < 0)
				goto fail_next;
			if (st.st_dev != id[depth - 1].dev || st.st_ino != id[depth - 1].ino) {
				errno = EAGAIN; /* not the level recorded */
				goto fail_next;
			}
			depth--;
		} else {
			next = openat(cur, name, O_PATH | O_NOFOLLOW | O_DIRECTORY | O_CLOEXEC);
			if (next < 0 || fstat(next, &st) < 0 || depth + 1 == RETIRED_LEVELS)
				goto fail_next;
			depth++;
			id[depth].dev = st.st_dev;
			id[depth].ino = st.st_ino;
		}
		close(cur);
		cur = next;
		continue;
	fail_next:;
		int err = errno;
		if (next >= 0)
			close(next);
		errno = err;
		goto fail;
	}
fail:;
	int err = errno;
	if (cur >= 0)
		close(cur);
	errno = err;
	return -1;
}

struct victim {
	enum op op;
	const char *path;  /* relative to root */
	uint64_t resolve;
	int rootfd;
	_Atomic int listener;
	atomic_bool finished;
	int ret, err;
};

static int install_notify_filter(void)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_openat, 3, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_openat2, 2, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_unlinkat, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_USER_NOTIF),
	};
	struct sock_fprog prog = { .len = sizeof(f) / sizeof(f[0]), .filter = f };
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return -1;
	return (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER,
			    &prog);
}

static void *victim_main(void *arg)
{
	struct victim *v = arg;
	int l = install_notify_filter();
	if (l < 0) {
		v->err = errno;
		atomic_store(&v->listener, -2);
		atomic_store(&v->finished, true);
		return NULL;
	}
	atomic_store(&v->listener, l);
	struct safe_open_how how = { .resolve = SAFE_RESOLVE_BENEATH | v->resolve };
	switch (v->op) {
	case OP_OPEN:
	case OP_OPEN_DEFAULT:
		how.flags = O_RDONLY;
		v->ret = safe_openat2(v->rootfd, v->path, &how, sizeof(how));
		break;
	case OP_CREAT:
		how.flags = O_WRONLY | O_CREAT;
		how.mode = 0644;
		v->ret = safe_openat2(v->rootfd, v->path, &how, sizeof(how));
		break;
	case OP_UNLINK:
		v->ret = safe_unlinkat_beneath(v->rootfd, v->path, v->resolve);
		break;
	case OP_RETIRED:
		v->ret = retired_design_open(v->rootfd, v->path);
		break;
	case OP_RMTREE:
		v->ret = safe_rmtree_beneath(v->rootfd, v->path, v->resolve);
		break;
	}
	v->err = errno;
	atomic_store(&v->finished, true);
	return NULL;
}

struct pause_rule {
	long nr;             /* syscall to watch for the trigger */
	const char *trigger; /* its path argument */
	int nth;             /* the trigger is its nth occurrence (0 or 1: the first) */
	bool after;          /* attack at the next watched call, not at the trigger */
	bool storm;          /* answer EAGAIN to openat2 of paths with ".." */
};

/*
 * Run the victim and serve its notifications: every call is let through
 * (SECCOMP_USER_NOTIF_FLAG_CONTINUE) except that the attack is performed
 * before the chosen one, and under `storm` openat2 of a path with ".." fails
 * with EAGAIN as it does when renames happen anywhere in the system.
 */
static int run_paused(int m, struct victim *v, const struct pause_rule *r, struct attack *a)
{
	pthread_t t;
	atomic_store(&v->listener, -1);
	atomic_store(&v->finished, false);
	if (pthread_create(&t, NULL, victim_main, v) != 0)
		return SETUP;
	int l;
	while ((l = atomic_load(&v->listener)) == -1)
		sched_yield();
	if (l < 0) {
		pthread_join(t, NULL);
		fprintf(stderr, "test_reuse: no seccomp user notification (%s)\n", strerror(v->err));
		return SKIP;
	}
	struct seccomp_notif_sizes sz;
	if (syscall(SYS_seccomp, SECCOMP_GET_NOTIF_SIZES, 0, &sz) < 0)
		return SETUP;
	struct seccomp_notif *req = calloc(1, sz.seccomp_notif);
	struct seccomp_notif_resp *resp = calloc(1, sz.seccomp_notif_resp);
	bool seen = false;
	int hits = 0;
	/* Until the victim thread has exited, not only finished: its exit may
	 * still make a notified call (glibc trims the thread's malloc arena and
	 * reads /proc/sys/vm/overcommit_memory with openat the first time),
	 * which nobody would answer after the loop. */
	while (!atomic_load(&v->finished) || pthread_tryjoin_np(t, NULL) != 0) {
		struct pollfd p = { .fd = l, .events = POLLIN };
		if (poll(&p, 1, 50) <= 0 || !(p.revents & POLLIN))
			continue;
		memset(req, 0, sz.seccomp_notif);
		if (ioctl(l, SECCOMP_IOCTL_NOTIF_RECV, req) < 0)
			continue;
		/* Same address space: the victim's path is readable as it is. */
		const char *path = (const char *)(uintptr_t)req->data.args[1];
		int nr = req->data.nr;
		if (!a->done) {
			/* The walker descends with openat, or with openat2 where
			 * it exists (RESOLVE_NO_XDEV tells it the mount). */
			bool same_nr = nr == r->nr || (r->nr == SYS_openat && nr == SYS_openat2);
			bool hit = same_nr && path && !strcmp(path, r->trigger) && ++hits >= r->nth;
			if (r->after && seen && (nr == SYS_openat || nr == SYS_openat2))
				(void)dance(m, a);
			else if (hit && !r->after)
				(void)dance(m, a);
			if (hit)
				seen = true;
		}
		memset(resp, 0, sz.seccomp_notif_resp);
		resp->id = req->id;
		if (r->storm && nr == SYS_openat2 && path && strstr(path, "..")) {
			resp->error = -EAGAIN;
		} else {
			resp->flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
		}
		(void)ioctl(l, SECCOMP_IOCTL_NOTIF_SEND, resp);
	}
	close(l);
	free(req);
	free(resp);
	return 0;
}

/* ---------------------------------------------------------------- scenarios */

struct scenario {
	const char *name;
	enum op op;
	uint64_t resolve;
	const char *const *dirs; /* created under the mount */
	const char *const *files;
	const char *path;
	struct pause_rule rule;
	struct attack attack;
	const char *base; /* scratch directory (parent process) */
};

static const char *const tree_ab[] = { "root", "root/a", "root/a/b", "X", "X/evil", NULL };
static const char *const tree_rm[] = { "root", "root/top", "root/top/a", "root/top/a/b",
				       "X", "X/evil", NULL };
static const char *const files_none[] = { NULL };
static const char *const files_rm[] = { "root/top/a/b/f", NULL };

#define DEEP 40
#define DEEP_UP 32

static int build_deep(int m)
{
	char p[PATH_MAX] = "root";
	if (mkdirat(m, "root", 0755) < 0 || mkdirat(m, "X", 0755) < 0 ||
	    mkdirat(m, "X/evil", 0755) < 0)
		return -1;
	for (int i = 1; i <= DEEP; i++) {
		size_t n = strlen(p);
		(void)snprintf(p + n, sizeof(p) - n, "/d%d", i);
		if (mkdirat(m, p, 0755) < 0)
			return -1;
	}
	return 0;
}

static char deep_path[PATH_MAX], deep_moved[PATH_MAX], deep_level[PATH_MAX], deep_inside[16];

static void make_deep_names(void)
{
	/* d1/.../d40 then 32 ".." to level 8, then "target": the attack makes
	 * level 8 (not held: deeper than the walker's 32 held levels) reused. */
	deep_path[0] = '\0';
	for (int i = 1; i <= DEEP; i++) {
		size_t n = strlen(deep_path);
		(void)snprintf(deep_path + n, sizeof(deep_path) - n, "d%d/", i);
	}
	for (int i = 0; i < DEEP_UP; i++)
		strcat(deep_path, "../");
	strcat(deep_path, "target");
	int lvl = DEEP - DEEP_UP;
	strcpy(deep_level, "root");
	for (int i = 1; i <= lvl; i++) {
		size_t n = strlen(deep_level);
		(void)snprintf(deep_level + n, sizeof(deep_level) - n, "/d%d", i);
	}
	(void)snprintf(deep_moved, sizeof(deep_moved), "%s/d%d", deep_level, lvl + 1);
	(void)snprintf(deep_inside, sizeof(deep_inside), "d%d", lvl + 1);
}

static int scenario_child(void *arg)
{
	struct scenario *sc = arg;
	int m = ext4_scratch(sc->base);
	if (m < 0)
		return -m;
	int rc = SETUP;
	if (sc->dirs ? mkdirs(m, sc->dirs) < 0 : build_deep(m) < 0)
		goto out;
	for (const char *const *f = sc->files; *f; f++)
		if (put_file(m, *f, "inside\n") < 0)
			goto out;
	int rootfd = openat(m, "root", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (rootfd < 0)
		goto out;
	struct victim v = { .op = sc->op, .path = sc->path, .resolve = sc->resolve,
			    .rootfd = rootfd };
	rc = run_paused(m, &v, &sc->rule, &sc->attack);
	if (rc != 0) {
		close(rootfd);
		goto out;
	}
	bool escaped = false;
	switch (sc->op) {
	case OP_OPEN:
	case OP_OPEN_DEFAULT:
	case OP_RETIRED:
		if (v.ret >= 0) {
			struct stat st;
			escaped = fstat(v.ret, &st) == 0 && st.st_ino == ino_of(m, "X/evil/c/target");
			close(v.ret);
		}
		break;
	case OP_CREAT:
		if (v.ret >= 0)
			close(v.ret);
		escaped = exists(m, "X/evil/c/new");
		break;
	case OP_UNLINK:
		escaped = !exists(m, "X/evil/c/target");
		break;
	case OP_RMTREE: {
		char moved[PATH_MAX + 16];
		(void)snprintf(moved, sizeof(moved), "X/evil/c/%s", sc->attack.inside);
		escaped = !exists(m, "X/evil/c/precious") || !exists(m, moved);
		break;
	}
	}
	close(rootfd);
	fprintf(stderr,
		"test_reuse[%s]: attack %s, inode number %s, victim returned %d (%s): %s\n",
		sc->name, sc->attack.done ? "done" : "NOT done",
		sc->attack.reused ? "reused" : "not reused (the level was held)", v.ret,
		v.ret < 0 ? strerror(v.err) : "ok", escaped ? "ESCAPE" : "no escape");
	rc = escaped ? ESCAPED : sc->attack.done ? 0 : NO_ATTACK;
out:
	ext4_release(m);
	return rc;
}

static int run_scenario_rc(struct scenario *sc)
{
	char *base = fx_mkdtemp("reuse");
	sc->base = base;
	int rc = sb_run(scenario_child, sc);
	ck_assert_int_eq(fx_rmtree(base), 0);
	free(base);
	ck_assert_msg(rc != SKIP, "%s: could not set up (see stderr)", sc->name);
	return rc;
}

static void run_scenario(struct scenario *sc)
{
	int rc = run_scenario_rc(sc);
	ck_assert_msg(rc != ESCAPED, "%s: the walk acted outside the root (inode reuse)",
		      sc->name);
	ck_assert_msg(rc != NO_ATTACK, "%s: the attack never ran (trigger not seen)", sc->name);
	ck_assert_msg(rc == 0, "%s: setup failed (rc %d)", sc->name, rc);
}

#define AFTER_B { .nr = SYS_openat, .trigger = "b", .after = true }
#define ATTACK_AB { .moved = "root/a/b", .level = "root/a", .inside = "b" }

/* Whether the attack scenarios can run (decided once in main(), before the
 * runner forks the cases) and, if not, why: the cases then report SKIP. */
static bool g_attacks;
static char g_attack_why[256];
#define ATTACK_GATE()                                     \
	do {                                              \
		if (!g_attacks)                           \
			fx_skip("%s", g_attack_why);      \
	} while (0)

START_TEST(walker_open)
{
	ATTACK_GATE();
	struct scenario sc = { "walker open", OP_OPEN, SAFE_RESOLVE_USERSPACE, tree_ab,
			       files_none, "a/b/../target", AFTER_B, ATTACK_AB, NULL };
	run_scenario(&sc);
}
END_TEST

/* The attack is real: the retired design (kernel ".." checked by a recorded
 * identity, retired_design_open()) opens X/evil/c/target, outside. */
START_TEST(retired_design_escapes)
{
	ATTACK_GATE();
	struct scenario sc = { "retired design", OP_RETIRED, 0, tree_ab, files_none,
			       "a/b/../target", AFTER_B, ATTACK_AB, NULL };
	int rc = run_scenario_rc(&sc);
	ck_assert_msg(rc == ESCAPED, "%s: the attack did not defeat the retired design (rc %d): "
		      "it no longer shows what the other cases would catch", sc.name, rc);
}
END_TEST

START_TEST(walker_creat)
{
	ATTACK_GATE();
	struct scenario sc = { "walker O_CREAT", OP_CREAT, SAFE_RESOLVE_USERSPACE, tree_ab,
			       files_none, "a/b/../new", AFTER_B, ATTACK_AB, NULL };
	run_scenario(&sc);
}
END_TEST

START_TEST(walker_unlink)
{
	ATTACK_GATE();
	struct scenario sc = { "walker unlink", OP_UNLINK, SAFE_RESOLVE_USERSPACE, tree_ab,
			       files_none, "a/b/../target", AFTER_B, ATTACK_AB, NULL };
	run_scenario(&sc);
}
END_TEST

START_TEST(default_path_under_rename_storm)
{
	ATTACK_GATE();
	/* No SAFE_RESOLVE_USERSPACE: openat2 keeps failing with EAGAIN (as under
	 * a rename storm anywhere in the system), the default path walks. */
	struct scenario sc = { "default path, rename storm", OP_OPEN_DEFAULT, 0, tree_ab,
			       files_none, "a/b/../target",
			       { .nr = SYS_openat, .trigger = "b", .after = true, .storm = true },
			       ATTACK_AB, NULL };
	run_scenario(&sc);
}
END_TEST

START_TEST(walker_deep_beyond_held)
{
	ATTACK_GATE();
	make_deep_names();
	struct scenario sc = { "walker, 40 levels, .. beyond the held ones", OP_OPEN,
			       SAFE_RESOLVE_USERSPACE, NULL, files_none, deep_path,
			       { .nr = SYS_openat, .trigger = "d40", .after = true },
			       { .moved = deep_moved, .level = deep_level, .inside = deep_inside },
			       NULL };
	run_scenario(&sc);
}
END_TEST

START_TEST(rmtree_climb)
{
	ATTACK_GATE();
	/* Paused when rmtree removes b's last entry, just before it climbs. */
	struct scenario sc = { "rmtree climb", OP_RMTREE, 0, tree_rm, files_rm, "top",
			       { .nr = SYS_unlinkat, .trigger = "f" },
			       { .moved = "root/top/a/b", .level = "root/top/a", .inside = "b" },
			       NULL };
	run_scenario(&sc);
}
END_TEST

/* The old rmtree held the top and its 64 deepest levels; rmtree on the walk
 * (lib/walk.c) holds 32 and checkpoints, and refills them when it climbs
 * past them: the scenario keeps the old numbers, the attack is the same. */
#define RM_HELD 64
#define RM_DEEP 70
static char rm_deep_dirs_buf[RM_DEEP + 1][512];
static const char *rm_deep_dirs[RM_DEEP + 8];
static char rm_trigger[16], rm_inside[16];

START_TEST(rmtree_climb_beyond_held)
{
	ATTACK_GATE();
	/* root/top/d1/.../d70/f. Paused when d8 is removed from d7 after d8
	 * was emptied (rmtree's only unlinkat of "d8", at its post-order
	 * visit), just before the walk climbs from d7 to d6. */
	int lo = RM_DEEP - RM_HELD + 1;
	size_t k = 0;
	rm_deep_dirs[k++] = "root";
	rm_deep_dirs[k++] = "X";
	rm_deep_dirs[k++] = "X/evil";
	strcpy(rm_deep_dirs_buf[0], "root/top");
	rm_deep_dirs[k++] = rm_deep_dirs_buf[0];
	for (int i = 1; i <= RM_DEEP; i++) {
		(void)snprintf(rm_deep_dirs_buf[i], sizeof(rm_deep_dirs_buf[i]), "%.400s/d%d",
			       rm_deep_dirs_buf[i - 1], i);
		rm_deep_dirs[k++] = rm_deep_dirs_buf[i];
	}
	rm_deep_dirs[k] = NULL;
	static char file[sizeof(rm_deep_dirs_buf[0]) + 8];
	(void)snprintf(file, sizeof(file), "%s/f", rm_deep_dirs_buf[RM_DEEP]);
	(void)snprintf(rm_trigger, sizeof(rm_trigger), "d%d", lo + 1);
	(void)snprintf(rm_inside, sizeof(rm_inside), "d%d", lo);
	const char *files[] = { file, NULL };
	struct scenario sc = { "rmtree climb, 70 levels", OP_RMTREE, 0, rm_deep_dirs, files,
			       "top", { .nr = SYS_unlinkat, .trigger = rm_trigger, .nth = 1 },
			       { .moved = rm_deep_dirs_buf[lo], .level = rm_deep_dirs_buf[lo - 1],
				 .inside = rm_inside },
			       NULL };
	run_scenario(&sc);
}
END_TEST

/* ---------------------------------------------------------------- deep chains vs the kernel */

static int kernel_open(int dirfd, const char *path)
{
	struct safe_open_how how = { .flags = O_PATH, .resolve = SAFE_RESOLVE_BENEATH };
	/* The raw syscall (same struct layout as struct open_how). */
	return (int)syscall(SYS_openat2, dirfd, path, &how, sizeof(how));
}

START_TEST(deep_dotdot_matches_kernel)
{
	/* Chains deeper than the walker's held levels, climbed by every count. */
	char *base = fx_mkdtemp("reuse-deep");
	int b = open(base, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	ck_assert_int_ge(b, 0);
	char p[PATH_MAX] = "";
	for (int i = 1; i <= 70; i++) {
		size_t n = strlen(p);
		(void)snprintf(p + n, sizeof(p) - n, "%sd%d", i > 1 ? "/" : "", i);
		ck_assert_int_eq(mkdirat(b, p, 0755), 0);
		char f[PATH_MAX];
		(void)snprintf(f, sizeof(f), "%s/f", p);
		ck_assert_int_eq(put_file(b, f, "x"), 0);
	}
	for (int depth = 30; depth <= 70; depth += 10) {
		for (int up = 0; up <= depth + 1; up += (up < 40 ? 1 : 7)) {
			char q[PATH_MAX] = "";
			for (int i = 1; i <= depth; i++) {
				size_t n = strlen(q);
				(void)snprintf(q + n, sizeof(q) - n, "d%d/", i);
			}
			for (int i = 0; i < up; i++)
				strcat(q, "../");
			strcat(q, "f");
			struct safe_open_how how = { .flags = O_PATH,
						     .resolve = SAFE_RESOLVE_BENEATH |
								SAFE_RESOLVE_USERSPACE };
			int w = safe_openat2(b, q, &how, sizeof(how));
			int werr = errno;
			/* openat2 fails a ".." lookup with EAGAIN whenever a rename
			 * happens anywhere in the system: ask again (bounded). */
			int k, kerr, tries = 0;
			do {
				k = kernel_open(b, q);
				kerr = errno;
				if (k < 0 && kerr == EAGAIN && tries % 100 == 99)
					usleep(1000); /* let a burst of renames pass */
			} while (k < 0 && kerr == EAGAIN && ++tries < 2000);
			if (k < 0 && (kerr == ENOSYS || kerr == EPERM || kerr == EAGAIN)) {
				/* No openat2 (valgrind, a seccomp profile that says
				 * ENOSYS or EPERM), or no answer from it under a
				 * sustained rename storm elsewhere on the machine:
				 * compare with the lexical answer (every d<i> holds
				 * an f, the base does not). */
				bool ok = up > depth    ? w < 0 && werr == EXDEV
					  : up == depth ? w < 0 && werr == ENOENT
							: w >= 0 && fx_same_object(w, b, q);
				ck_assert_msg(ok, "depth %d up %d", depth, up);
			} else if (k < 0 || w < 0) {
				ck_assert_msg(k < 0 && w < 0 && kerr == werr,
					      "depth %d up %d: kernel %d/%d walker %d/%d", depth, up,
					      k, kerr, w, werr);
			} else {
				struct stat ks, ws;
				ck_assert_int_eq(fstat(k, &ks), 0);
				ck_assert_int_eq(fstat(w, &ws), 0);
				ck_assert_msg(ks.st_ino == ws.st_ino, "depth %d up %d", depth, up);
			}
			if (k >= 0)
				close(k);
			if (w >= 0)
				close(w);
		}
	}
	close(b);
	ck_assert_int_eq(fx_rmtree(base), 0);
	free(base);
}
END_TEST

START_TEST(deep_rmtree)
{
	/* rmtree below the held levels: 100 levels, a file and a subdirectory on
	 * each, removed completely. */
	char *base = fx_mkdtemp("reuse-rm");
	int b = open(base, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	ck_assert_int_ge(b, 0);
	char p[PATH_MAX] = "t";
	ck_assert_int_eq(mkdirat(b, p, 0755), 0);
	for (int i = 1; i <= 100; i++) {
		char f[PATH_MAX];
		(void)snprintf(f, sizeof(f), "%s/f", p);
		ck_assert_int_eq(put_file(b, f, "x"), 0);
		(void)snprintf(f, sizeof(f), "%s/e", p);
		ck_assert_int_eq(mkdirat(b, f, 0755), 0);
		size_t n = strlen(p);
		(void)snprintf(p + n, sizeof(p) - n, "/%d", i);
		ck_assert_int_eq(mkdirat(b, p, 0755), 0);
	}
	ck_assert_int_eq(safe_rmtree_beneath(b, "t", 0), 0);
	ck_assert(!exists(b, "t"));
	close(b);
	ck_assert_int_eq(fx_rmtree(base), 0);
	free(base);
}
END_TEST

/* ---------------------------------------------------------------- plain race */

struct race {
	int m, rootfd;
	atomic_bool stop;
	atomic_long rounds, storm, calls, escapes, reused;
};

static void *race_attacker(void *arg)
{
	struct race *r = arg;
	while (!atomic_load(&r->stop)) {
		struct attack a = ATTACK_AB;
		if (dance(r->m, &a) == 0) {
			atomic_fetch_add(&r->rounds, 1);
			if (a.reused)
				atomic_fetch_add(&r->reused, 1);
		}
		/* Put b back under a fresh root/a; clear c. */
		(void)renameat(r->m, "X/evil/c/b", r->m, "X/stash");
		(void)unlinkat(r->m, "X/evil/c/target", 0);
		(void)unlinkat(r->m, "X/evil/c/precious", 0);
		(void)unlinkat(r->m, "X/evil/c/new", 0);
		(void)unlinkat(r->m, "X/evil/c", AT_REMOVEDIR);
		(void)mkdirat(r->m, "root/a", 0755);
		(void)renameat(r->m, "X/stash", r->m, "root/a/b");
	}
	return NULL;
}

static void *race_storm(void *arg)
{
	struct race *r = arg;
	while (!atomic_load(&r->stop)) {
		(void)renameat(r->m, "X/s1", r->m, "X/s2");
		(void)renameat(r->m, "X/s2", r->m, "X/s1");
		atomic_fetch_add(&r->storm, 2);
	}
	return NULL;
}

static void *race_victim(void *arg)
{
	struct race *r = arg;
	for (long i = 0; !atomic_load(&r->stop); i++) {
		struct safe_open_how how = { .resolve = SAFE_RESOLVE_BENEATH };
		if (i & 1)
			how.resolve |= SAFE_RESOLVE_USERSPACE;
		how.flags = O_RDONLY;
		int fd = safe_openat2(r->rootfd, "a/b/../target", &how, sizeof(how));
		if (fd >= 0) {
			atomic_fetch_add(&r->escapes, 1); /* root/a/target never exists */
			close(fd);
		}
		how.flags = O_WRONLY | O_CREAT;
		how.mode = 0600;
		fd = safe_openat2(r->rootfd, "a/b/../new", &how, sizeof(how));
		if (fd >= 0)
			close(fd);
		(void)unlinkat(r->m, "root/a/new", 0);
		if (safe_unlinkat_beneath(r->rootfd, "a/b/../precious",
					  (i & 1) ? SAFE_RESOLVE_USERSPACE : 0) == 0)
			atomic_fetch_add(&r->escapes, 1);
		atomic_fetch_add(&r->calls, 3);
	}
	return NULL;
}

static int race_child(void *arg)
{
	const char *dir = arg;
	int m = ext4_scratch(dir);
	if (m < 0)
		return -m;
	static const char *const dirs[] = { "root", "root/a", "root/a/b", "X", "X/evil", NULL };
	int rc = SETUP;
	if (mkdirs(m, dirs) < 0 || put_file(m, "X/s1", "s") < 0)
		goto out;
	struct race r = { .m = m };
	r.rootfd = openat(m, "root", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (r.rootfd < 0)
		goto out;
	pthread_t ta, ts, tv[2];
	pthread_create(&ta, NULL, race_attacker, &r);
	pthread_create(&ts, NULL, race_storm, &r);
	for (int i = 0; i < 2; i++)
		pthread_create(&tv[i], NULL, race_victim, &r);
	/* At least `seconds` and on until the floors (a slow machine runs
	 * longer rather than checking less), at most 60 s more. Quick: 0.1 s
	 * and 500 rounds and calls; SAFEOPEN_CHECK_LONG=1 (make check-long):
	 * 60 s and 5,000. */
	bool long_run = fx_long() && !fx_under_valgrind();
	double seconds = fx_under_valgrind() ? 1.0 : long_run ? 60.0 : 0.1;
	long min_rounds = fx_under_valgrind() ? 50 : long_run ? 5000 : 500;
	double t0 = fx_now();
	while (fx_now() - t0 < seconds + 60.0 &&
	       (fx_now() - t0 < seconds || atomic_load(&r.rounds) < min_rounds ||
		atomic_load(&r.calls) < min_rounds))
		usleep(10000);
	atomic_store(&r.stop, true);
	pthread_join(ta, NULL);
	pthread_join(ts, NULL);
	for (int i = 0; i < 2; i++)
		pthread_join(tv[i], NULL);
	close(r.rootfd);
	long escapes = atomic_load(&r.escapes);
	bool outside_ok = !exists(m, "X/evil/c") ||
			  (!exists(m, "X/evil/c/new"));
	fprintf(stderr,
		"test_reuse[race]: %ld attack rounds (%ld with the inode number reused), %ld "
		"storm renames, %ld victim calls: %ld escapes\n",
		atomic_load(&r.rounds), atomic_load(&r.reused), atomic_load(&r.storm),
		atomic_load(&r.calls), escapes);
	if (escapes || !outside_ok)
		rc = ESCAPED;
	else if (atomic_load(&r.rounds) < min_rounds || atomic_load(&r.calls) < min_rounds)
		rc = NO_ATTACK;
	else
		rc = 0;
out:
	ext4_release(m);
	return rc;
}

START_TEST(plain_race_with_storm)
{
	ATTACK_GATE();
	char *base = fx_mkdtemp("reuse-race");
	int rc = sb_run(race_child, base);
	ck_assert_int_eq(fx_rmtree(base), 0);
	free(base);
	ck_assert_msg(rc != SKIP, "could not set up (see stderr)");
	ck_assert_msg(rc != ESCAPED, "the race reached outside the root");
	ck_assert_msg(rc != NO_ATTACK, "too few attack rounds or calls");
	ck_assert_int_eq(rc, 0);
}
END_TEST

static int probe_child(void *arg)
{
	const char *dir = arg;
	int m = ext4_scratch(dir);
	if (m < 0)
		return -m;
	ext4_release(m);
	return 0;
}

/* Whether the attack scenarios can run here: root, a mount namespace, a
 * loop-mounted ext4, seccomp user notification (checked when used). */
static bool can_attack(void)
{
	if (fx_under_valgrind()) {
		/* A victim blocked in a notified syscall can hold valgrind's big
		 * lock, so the supervisor thread would never run. The reproducers
		 * run in plain `make check`; here only the memory/fd discipline of
		 * the deep-chain cases is checked. */
		snprintf(g_attack_why, sizeof(g_attack_why),
			 "under valgrind a victim stopped in a notified syscall can starve the supervisor");
		return false;
	}
	if (!sb_can_mount()) {
		snprintf(g_attack_why, sizeof(g_attack_why),
			 "cannot mount here (needs root for a loop-mounted ext4)");
		return false;
	}
	char *base = fx_mkdtemp("reuse-probe");
	int rc = sb_run(probe_child, base);
	(void)fx_rmtree(base);
	free(base);
	if (rc != 0)
		snprintf(g_attack_why, sizeof(g_attack_why),
			 "no loop-mounted ext4 in a private mount namespace (rc %d)", rc);
	return rc == 0;
}

static Suite *reuse_suite(void)
{
	Suite *s = suite_create("reuse");
	TCase *tc = tcase_create("reuse");
	tcase_add_checked_fixture(tc, fx_fd_setup, fx_fd_teardown);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, walker_open);
	tcase_add_test(tc, retired_design_escapes);
	tcase_add_test(tc, walker_creat);
	tcase_add_test(tc, walker_unlink);
	tcase_add_test(tc, default_path_under_rename_storm);
	tcase_add_test(tc, walker_deep_beyond_held);
	tcase_add_test(tc, rmtree_climb);
	tcase_add_test(tc, rmtree_climb_beyond_held);
	tcase_add_test(tc, plain_race_with_storm);
	tcase_add_test(tc, deep_dotdot_matches_kernel);
	tcase_add_test(tc, deep_rmtree);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	g_attacks = can_attack();
	return fx_main(reuse_suite());
}
