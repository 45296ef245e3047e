/* SPDX-License-Identifier: MIT */
#include "config.h"

#include "fixture.h"
#include "safeopen.h"
#include "sandbox.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <stdarg.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <poll.h>
#include <linux/magic.h>
#include <stdint.h>
#include <sys/mount.h>
#include <sys/statfs.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <unistd.h>

static void fdset_mark(struct fx_fdset *set, int fd)
{
	set->open[fd / 8] |= (unsigned char)(1u << (fd % 8));
	set->count++;
}

struct linux_dirent64 {
	uint64_t d_ino;
	int64_t d_off;
	unsigned short d_reclen;
	unsigned char d_type;
	char d_name[];
};

/* The names in /proc/self/fd, without the directory's own descriptor: five
 * system calls where fcntl(F_GETFD) per number is 4096 (a tenth of a suite's
 * time on a virtual machine, where every system call traps). Raw getdents64
 * and a stack buffer: no allocation, so it is safe in a child forked from a
 * threaded test. False when there is no procfs here (a sandbox without
 * /proc, no descriptor left): the caller asks number by number. */
static bool fdset_from_proc(struct fx_fdset *set)
{
	int dfd = open("/proc/self/fd", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return false;
	struct statfs sf;
	bool ok = fstatfs(dfd, &sf) == 0 && sf.f_type == PROC_SUPER_MAGIC;
	_Alignas(8) char buf[4096];
	while (ok) {
		long n = syscall(SYS_getdents64, dfd, buf, sizeof(buf));
		if (n <= 0) {
			ok = n == 0;
			break;
		}
		for (long off = 0; off < n;) {
			const struct linux_dirent64 *d = (const void *)(buf + off);
			off += d->d_reclen;
			char *end;
			long fd = strtol(d->d_name, &end, 10);
			if (d->d_name[0] >= '0' && d->d_name[0] <= '9' && !*end && fd != dfd &&
			    fd < FX_MAX_FD)
				fdset_mark(set, (int)fd);
		}
	}
	close(dfd);
	return ok;
}

/* Without /proc (a sandbox hides it): one poll() of every number, a closed
 * one reports POLLNVAL, not FX_MAX_FD fcntl() calls. poll() takes no more
 * numbers than RLIMIT_NOFILE allows: the soft limit is raised for it and put
 * back. False where it cannot be (a hard limit below FX_MAX_FD). */
static bool fdset_by_poll(struct fx_fdset *set)
{
	struct rlimit saved, rl;
	if (getrlimit(RLIMIT_NOFILE, &saved) < 0 || saved.rlim_max < FX_MAX_FD)
		return false;
	rl = saved;
	if (rl.rlim_cur < FX_MAX_FD)
		rl.rlim_cur = FX_MAX_FD;
	if (setrlimit(RLIMIT_NOFILE, &rl) < 0)
		return false;
	/* mmap, not malloc: sandbox children call this after a raw clone() */
	struct pollfd *p = mmap(NULL, FX_MAX_FD * sizeof(*p), PROT_READ | PROT_WRITE,
				MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	bool ok = p != MAP_FAILED;
	if (ok) {
		for (int fd = 0; fd < FX_MAX_FD; fd++)
			p[fd] = (struct pollfd){ .fd = fd };
		ok = poll(p, FX_MAX_FD, 0) >= 0;
		for (int fd = 0; ok && fd < FX_MAX_FD; fd++)
			if (!(p[fd].revents & POLLNVAL))
				fdset_mark(set, fd);
		munmap(p, FX_MAX_FD * sizeof(*p));
	}
	if (setrlimit(RLIMIT_NOFILE, &saved) < 0)
		abort(); /* the test's own limit, which it may be testing */
	return ok;
}

void fx_fdset_take(struct fx_fdset *set)
{
	memset(set, 0, sizeof(*set));
	if (fdset_from_proc(set))
		return;
	memset(set, 0, sizeof(*set));
	if (fdset_by_poll(set))
		return;
	memset(set, 0, sizeof(*set));
	for (int fd = 0; fd < FX_MAX_FD; fd++)
		if (fcntl(fd, F_GETFD) != -1)
			fdset_mark(set, fd);
}

static void describe_fd(int fd, char *buf, size_t size)
{
	char link[64];
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	ssize_t n = readlink(link, buf, size - 1);
	if (n < 0)
		n = 0;
	buf[n] = '\0';
}

bool fx_fdset_equal(const struct fx_fdset *before, const struct fx_fdset *after, char *buf,
		    size_t size)
{
	bool equal = true;
	size_t off = 0;
	buf[0] = '\0';
	for (int fd = 0; fd < FX_MAX_FD; fd++) {
		bool b = before->open[fd / 8] & (1u << (fd % 8));
		bool a = after->open[fd / 8] & (1u << (fd % 8));
		if (a == b)
			continue;
		equal = false;
		char what[PATH_MAX] = "";
		if (a)
			describe_fd(fd, what, sizeof(what));
		if (off < size) {
			int w = snprintf(buf + off, size - off, "%s fd %d%s%s%s; ",
					 a ? "leaked" : "closed", fd, a ? " (" : "", what,
					 a ? ")" : "");
			if (w > 0)
				off += (size_t)w;
		}
	}
	return equal;
}

int fx_fd_count(void)
{
	struct fx_fdset s;
	fx_fdset_take(&s);
	return s.count;
}

static struct fx_fdset fixture_before;

void fx_fd_setup(void)
{
	fx_fdset_take(&fixture_before);
}

void fx_fd_teardown(void)
{
	struct fx_fdset after;
	char msg[2048];
	fx_fdset_take(&after);
	ck_assert_msg(fx_fdset_equal(&fixture_before, &after, msg, sizeof(msg)),
		      "open file descriptors changed during the test: %s", msg);
}

/* The directories fx_mkdtemp() made and fx_rmtree() has not removed, with
 * the process that made them: a case that skips (fx_skip() aborts it, and
 * Check then runs no checked teardown) removes its own before it goes. Only
 * a forked case does (a process of its own): what the runner made (an
 * unchecked fixture's, shared by the cases of a tcase) stays, and so does
 * everything when the cases run in the runner (CK_FORK=no, under valgrind). */
#define FX_OWN_DIRS 16
static struct {
	char path[PATH_MAX]; /* "": free (no heap: nothing for valgrind to count) */
	pid_t pid;
} own_dirs[FX_OWN_DIRS];
static pid_t runner_pid = -1;

static void own_dir(const char *path, bool add)
{
	if (strlen(path) >= PATH_MAX)
		return;
	for (int i = 0; i < FX_OWN_DIRS; i++) {
		if (add ? !own_dirs[i].path[0] : !strcmp(own_dirs[i].path, path)) {
			if (add)
				strcpy(own_dirs[i].path, path);
			else
				own_dirs[i].path[0] = '\0';
			own_dirs[i].pid = getpid();
			return;
		}
	}
}

char *fx_mkdtemp(const char *tag)
{
	const char *base = getenv("SAFEOPEN_TEST_DIR");
	char cwd[PATH_MAX];
	if (!base || !*base) {
		if (!getcwd(cwd, sizeof(cwd)))
			ck_abort_msg("getcwd: %s", strerror(errno));
		base = cwd;
	}
	char *path = NULL;
	if (asprintf(&path, "%s/safeopen-%s-XXXXXX", base, tag) < 0)
		ck_abort_msg("out of memory");
	if (!mkdtemp(path))
		ck_abort_msg("mkdtemp %s: %s", path, strerror(errno));
	own_dir(path, true);
	return path;
}

static int rm_entry(const char *fpath, const struct stat *sb, int typeflag, struct FTW *ftwbuf)
{
	(void)sb;
	(void)ftwbuf;
	if (typeflag == FTW_DP || typeflag == FTW_D)
		return rmdir(fpath) < 0 && errno != ENOENT ? -1 : 0;
	return unlink(fpath) < 0 && errno != ENOENT ? -1 : 0;
}

static int chmod_dirs(const char *fpath, const struct stat *sb, int typeflag, struct FTW *ftwbuf)
{
	(void)ftwbuf;
	if (typeflag == FTW_D || typeflag == FTW_DNR)
		(void)chmod(fpath, (sb->st_mode & 07777) | 0700);
	return 0;
}

static int rmtree(const char *path);

int fx_rmtree(const char *path)
{
	int r = rmtree(path);
	if (r == 0)
		own_dir(path, false);
	return r;
}

static int rmtree(const char *path)
{
	/* Most trees go in one pass. Tests also create mode-000 and
	 * read-only directories: when a pass fails, every directory is made
	 * writable and searchable and the next pass removes the rest (a
	 * chmod by path of every directory first would cost a deep tree
	 * O(depth^2) lookups for nothing). FTW_PHYS never follows symlinks. */
	if (nftw(path, rm_entry, 32, FTW_DEPTH | FTW_PHYS) == 0)
		return 0;
	(void)nftw(path, chmod_dirs, 32, FTW_PHYS);
	if (nftw(path, rm_entry, 32, FTW_DEPTH | FTW_PHYS) == 0)
		return 0;
	/* musl's nftw() stops at PATH_MAX, below which the deep-path tests
	 * go: rm(1) walks relative to each directory. */
	pid_t pid = fork();
	if (pid == 0) {
		execlp("rm", "rm", "-rf", "--", path, (char *)NULL);
		_exit(127);
	}
	int status;
	if (pid < 0 || waitpid(pid, &status, 0) != pid)
		return -1;
	return WIFEXITED(status) && WEXITSTATUS(status) == 0 && access(path, F_OK) < 0 ? 0 : -1;
}

void fx_build(int dirfd, const char *const *spec)
{
	for (; *spec; spec++) {
		const char *line = *spec;
		char kind = line[0];
		char name[PATH_MAX];
		const char *rest = line + 1;
		while (*rest == ' ')
			rest++;
		size_t n = strcspn(rest, " ");
		if (n == 0 || n >= sizeof(name))
			ck_abort_msg("fx_build: bad spec line '%s'", line);
		memcpy(name, rest, n);
		name[n] = '\0';
		rest += n;
		if (*rest == ' ')
			rest++;
		int r = 0;
		switch (kind) {
		case 'd': {
			mode_t mode = *rest ? (mode_t)strtoul(rest, NULL, 8) : 0755;
			r = mkdirat(dirfd, name, mode);
			if (r == 0 && *rest)
				r = fchmodat(dirfd, name, mode, 0);
			break;
		}
		case 'f': {
			int fd = openat(dirfd, name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW,
					0644);
			if (fd < 0) {
				r = -1;
				break;
			}
			size_t len = strlen(rest);
			if (len && write(fd, rest, len) != (ssize_t)len)
				r = -1;
			close(fd);
			break;
		}
		case 'l':
			r = symlinkat(rest, dirfd, name);
			break;
		case 'p':
			r = mknodat(dirfd, name, S_IFIFO | 0644, 0);
			break;
		case 'h':
			r = linkat(dirfd, rest, dirfd, name, 0);
			break;
		default:
			ck_abort_msg("fx_build: unknown kind in '%s'", line);
		}
		if (r < 0)
			ck_abort_msg("fx_build: '%s': %s", line, strerror(errno));
	}
}

bool fx_same_object(int fd, int dirfd, const char *path)
{
	struct stat a, b;
	if (fstat(fd, &a) < 0 || fstatat(dirfd, path, &b, AT_SYMLINK_NOFOLLOW) < 0)
		return false;
	return a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

/* ---------------------------------------------------------------- snapshots */

struct snap {
	char **lines;
	size_t n, cap;
	size_t prefix;
};
static struct snap *cur_snap;

static uint64_t hash_file(const char *path)
{
	uint64_t h = 1469598103934665603ull;
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return 0;
	unsigned char buf[4096];
	ssize_t r;
	while ((r = read(fd, buf, sizeof(buf))) > 0)
		for (ssize_t i = 0; i < r; i++)
			h = (h ^ buf[i]) * 1099511628211ull;
	close(fd);
	return h;
}

static int snap_entry(const char *fpath, const struct stat *sb, int typeflag, struct FTW *ftwbuf)
{
	(void)typeflag;
	(void)ftwbuf;
	struct snap *s = cur_snap;
	char extra[PATH_MAX + 32] = "";
	if (S_ISLNK(sb->st_mode)) {
		ssize_t n = readlink(fpath, extra + 4, PATH_MAX);
		if (n < 0)
			n = 0;
		memcpy(extra, " -> ", 4);
		extra[4 + n] = '\0';
	} else if (S_ISREG(sb->st_mode)) {
		snprintf(extra, sizeof(extra), " #%016llx", (unsigned long long)hash_file(fpath));
	}
	char *line = NULL;
	if (asprintf(&line, "%s mode=%o size=%lld mtime=%lld.%09ld nlink=%lu%s",
		     fpath[s->prefix] ? fpath + s->prefix : ".", (unsigned)sb->st_mode,
		     (long long)sb->st_size, (long long)sb->st_mtim.tv_sec, sb->st_mtim.tv_nsec,
		     (unsigned long)sb->st_nlink, extra) < 0)
		return -1;
	if (s->n == s->cap) {
		s->cap = s->cap ? s->cap * 2 : 64;
		char **nl = realloc(s->lines, s->cap * sizeof(*nl));
		if (!nl) {
			free(line);
			return -1;
		}
		s->lines = nl;
	}
	s->lines[s->n++] = line;
	return 0;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static char *join_sorted(char **lines, size_t n)
{
	if (n) /* qsort(NULL, 0) is undefined behaviour */
		qsort(lines, n, sizeof(*lines), cmp_str);
	size_t total = 1;
	for (size_t i = 0; i < n; i++)
		total += strlen(lines[i]) + 1;
	char *out = malloc(total);
	if (!out)
		ck_abort_msg("out of memory");
	size_t off = 0;
	for (size_t i = 0; i < n; i++) {
		size_t l = strlen(lines[i]);
		memcpy(out + off, lines[i], l);
		out[off + l] = '\n';
		off += l + 1;
		free(lines[i]);
	}
	out[off] = '\0';
	free(lines);
	return out;
}

char *fx_tree_snapshot(const char *path)
{
	struct snap s = { .prefix = strlen(path) };
	cur_snap = &s;
	if (nftw(path, snap_entry, 32, FTW_PHYS) < 0)
		ck_abort_msg("fx_tree_snapshot %s: %s", path, strerror(errno));
	cur_snap = NULL;
	return join_sorted(s.lines, s.n);
}

char *fx_fd_listing(int fd)
{
	if (lseek(fd, 0, SEEK_SET) < 0)
		ck_abort_msg("fx_fd_listing: lseek: %s", strerror(errno));
	char **lines = NULL;
	size_t n = 0, cap = 0;
	_Alignas(8) char buf[4096];
	long got;
	while ((got = syscall(SYS_getdents64, fd, buf, sizeof(buf))) > 0) {
		for (long off = 0; off < got;) {
			const struct linux_dirent64 *d = (const void *)(buf + off);
			off += d->d_reclen;
			if (!strcmp(d->d_name, ".") || !strcmp(d->d_name, ".."))
				continue;
			if (n == cap) {
				cap = cap ? cap * 2 : 16;
				lines = realloc(lines, cap * sizeof(*lines));
				if (!lines)
					ck_abort_msg("out of memory");
			}
			lines[n++] = strdup(d->d_name);
		}
	}
	if (got < 0)
		ck_abort_msg("fx_fd_listing: getdents64: %s", strerror(errno));
	return join_sorted(lines, n);
}

char *fx_dir_listing(int dirfd, const char *path)
{
	int fd = openat(dirfd, path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		ck_abort_msg("fx_dir_listing %s: %s", path, strerror(errno));
	char *ls = fx_fd_listing(fd);
	close(fd);
	return ls;
}

bool fx_user_xattrs(int dfd)
{
	static const char probe[] = ".user-xattr-probe";
	int fd = openat(dfd, probe, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0600);
	if (fd < 0)
		return true; /* the case itself reports what is wrong */
	bool ok = fsetxattr(fd, "user.probe", "1", 1, 0) == 0 || errno != EOPNOTSUPP;
	close(fd);
	(void)unlinkat(dfd, probe, 0);
	return ok;
}

/* valgrind's client request (a few no-op instructions when not under it);
 * a C library whose compiler does not search /usr/include (musl-gcc) has no
 * valgrind to run under. */
#if defined(__has_include)
#if __has_include(<valgrind/valgrind.h>)
#include <valgrind/valgrind.h>
#endif
#endif
#ifndef RUNNING_ON_VALGRIND
#define RUNNING_ON_VALGRIND 0
#endif

bool fx_under_valgrind(void)
{
	return RUNNING_ON_VALGRIND != 0;
}

long fx_scale(long n, long valgrind_div)
{
	if (!fx_under_valgrind())
		return n;
	long r = n / (valgrind_div > 0 ? valgrind_div : 1);
	return r > 0 ? r : 1;
}

double fx_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* ---------------------------------------------------------------- runner */

/* A failing Check assertion whose message starts with this marker is a
 * skip: the runner prints it as "ok N - ... # SKIP reason". */
#define FX_SKIP_MARKER "FX-SKIP: "
#define FX_REASON_MAX 512

/* Shared with forked children (Check's CK_FORK and sb_run): the reason a
 * child gave with CHILD_SKIP(). */
static char *child_reason;
static char isolation[PATH_MAX + 128] = "runner not started";

bool fx_long(void)
{
	const char *v = getenv("SAFEOPEN_CHECK_LONG");
	return v && *v && strcmp(v, "0") != 0;
}

long fx_size(long quick, long full, long valgrind_div)
{
	return fx_scale(fx_long() ? full : quick, valgrind_div);
}

static void one_line(char *s)
{
	for (; *s; s++)
		if (*s == '\n' || *s == '\r')
			*s = ' ';
}

void fx_skip(const char *fmt, ...)
{
	char reason[FX_REASON_MAX];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(reason, sizeof(reason), fmt, ap);
	va_end(ap);
	one_line(reason);
	fprintf(stderr, "SKIP: %s\n", reason);
	for (int i = 0; i < FX_OWN_DIRS && getpid() != runner_pid; i++)
		if (own_dirs[i].path[0] && own_dirs[i].pid == getpid() && rmtree(own_dirs[i].path) == 0)
			own_dirs[i].path[0] = '\0';
	ck_abort_msg("%s%s", FX_SKIP_MARKER, reason);
	__builtin_unreachable();
}

void fx_child_report(const char *file, int line, const char *cond, int err, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	fprintf(stderr, "%s:%d: child check failed: %s (errno %d: %s):%s\n", file, line, cond, err,
		strerror(err), msg);
}

void fx_child_skip_reason(const char *fmt, ...)
{
	char reason[FX_REASON_MAX];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(reason, sizeof(reason), fmt, ap);
	va_end(ap);
	one_line(reason);
	fprintf(stderr, "child cannot run here: %s\n", reason);
	if (child_reason)
		snprintf(child_reason, FX_REASON_MAX, "%s", reason);
}

void fx_run_child(int (*fn)(void *), void *arg, const char *what)
{
	if (child_reason)
		child_reason[0] = '\0';
	int rc = sb_run(fn, arg);
	if (rc == FX_CHILD_SKIP)
		fx_skip("%s: %s", what,
			child_reason && child_reason[0] ? child_reason : "(child gave no reason)");
	ck_assert_msg(rc == 0, "%s: child failed with %d (details on stderr)", what, rc);
}

static int write_file(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ssize_t n = write(fd, text, strlen(text));
	int saved = errno;
	close(fd);
	errno = saved;
	return n == (ssize_t)strlen(text) ? 0 : -1;
}

int fx_enter_mount_ns(void)
{
	if (geteuid() == 0) {
		if (unshare(CLONE_NEWNS) < 0)
			return -1;
	} else {
		char map[64];
		unsigned uid = (unsigned)geteuid(), gid = (unsigned)getegid();
		if (unshare(CLONE_NEWUSER | CLONE_NEWNS) < 0)
			return -1;
		if (write_file("/proc/self/setgroups", "deny") < 0 && errno != ENOENT)
			return -1;
		snprintf(map, sizeof(map), "0 %u 1", uid);
		if (write_file("/proc/self/uid_map", map) < 0)
			return -1;
		snprintf(map, sizeof(map), "0 %u 1", gid);
		if (write_file("/proc/self/gid_map", map) < 0)
			return -1;
	}
	return mount("none", "/", "none", MS_REC | MS_PRIVATE, NULL);
}

static int started_euid = -1;

bool fx_started_as_root(void)
{
	return started_euid >= 0 ? started_euid == 0 : geteuid() == 0;
}

const char *fx_isolation(void)
{
	return isolation;
}

/* Bind a writable directory onto itself so that it stays writable when "/"
 * is remounted read-only. */
/* (The source and type of these mounts are ignored by the kernel; "none"
 * rather than NULL keeps valgrind quiet.) */
static int keep_writable(const char *dir)
{
	struct stat st;
	if (stat(dir, &st) < 0 || !S_ISDIR(st.st_mode))
		return 0;
	return mount(dir, dir, "none", MS_BIND | MS_REC, NULL);
}

/*
 * As root: a private mount namespace for the whole test process in which
 * "/" is read-only; the test directory and /tmp are bind-mounted onto
 * themselves first, so they (and every other separate mount: /proc, /dev,
 * /sys, ...) keep their own flags. A test that wrongly resolves a path
 * against "/" gets EROFS instead of littering the host. Unprivileged, the
 * permissions already protect the host.
 */
static void isolate(void)
{
	if (geteuid() != 0) {
		snprintf(isolation, sizeof(isolation), "unprivileged (uid %u)", (unsigned)geteuid());
		return;
	}
	char base[PATH_MAX];
	const char *env = getenv("SAFEOPEN_TEST_DIR");
	if (env && *env)
		snprintf(base, sizeof(base), "%s", env);
	else if (!getcwd(base, sizeof(base)))
		base[0] = '\0';
	const char *step = "unshare(CLONE_NEWNS)";
	if (unshare(CLONE_NEWNS) < 0)
		goto fail;
	step = "make / private";
	if (mount("none", "/", "none", MS_REC | MS_PRIVATE, NULL) < 0)
		goto fail;
	step = "bind the test directory";
	if (!base[0] || strcmp(base, "/") == 0 || keep_writable(base) < 0)
		goto fail;
	step = "bind /tmp";
	if (keep_writable("/tmp") < 0)
		goto fail;
	step = "remount / read-only";
	if (mount("none", "/", "none", MS_REMOUNT | MS_BIND | MS_RDONLY, NULL) < 0)
		goto fail;
	snprintf(isolation, sizeof(isolation),
		 "root in a private mount namespace, / read-only, writable: %s and /tmp", base);
	return;
fail:
	snprintf(isolation, sizeof(isolation), "root, NOT isolated (%s: %s)", step, strerror(errno));
}

/* "ok 3 - tests/x.c:tcase:name: Passed" -> "ok 3 - tcase:name": the file
 * is where the last assertion was (fixture.c for a skip), not the case's. */
static void drop_file_name(char *line)
{
	char *dash = strstr(line, " - ");
	if (!dash || (strncmp(line, "ok ", 3) && strncmp(line, "not ok ", 7)))
		return;
	char *name = dash + 3, *colon = strchr(name, ':');
	if (colon && colon - name > 2 && !strncmp(colon - 2, ".c", 2))
		memmove(name, colon + 1, strlen(colon + 1) + 1);
	size_t n = strlen(line);
	if (n > 8 && !strcmp(line + n - 8, ": Passed"))
		line[n - 8] = '\0';
}

/* Whether the raw openat2 oracle exists in this process: a seccomp profile
 * (EPERM) or an old kernel / valgrind (ENOSYS) makes it unavailable, and the
 * suites then compare the library's paths with each other only. */
static const char *openat2_note(void)
{
	struct {
		unsigned long long flags, mode, resolve;
	} how = { O_PATH | O_CLOEXEC, 0, 0 };
	long fd = syscall(SYS_openat2, AT_FDCWD, ".", &how, sizeof(how));
	if (fd >= 0) {
		close((int)fd);
		return "raw openat2 available: the kernel is the oracle";
	}
	if (errno == EPERM || errno == ENOSYS)
		return errno == EPERM ? "raw openat2 refused (EPERM, seccomp?): oracle unavailable, "
					"the library's paths are compared with each other"
				      : "raw openat2 missing (ENOSYS): oracle unavailable, the "
					"library's paths are compared with each other";
	return "raw openat2 probe failed unexpectedly";
}

int fx_main(Suite *suite)
{
	const char *name = program_invocation_short_name;
	child_reason = mmap(NULL, FX_REASON_MAX, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
			    -1, 0);
	if (child_reason == MAP_FAILED)
		child_reason = NULL;
	started_euid = (int)geteuid();
	runner_pid = getpid();
	isolate();

	/* Check writes its own TAP (with the case names) to a scratch file;
	 * the runner rewrites skips and prints it. */
	char tap[] = "/tmp/safeopen-tap-XXXXXX";
	int tfd = mkstemp(tap);
	if (tfd < 0) {
		printf("Bail out! %s: mkstemp %s: %s\n", name, tap, strerror(errno));
		return 99;
	}
	close(tfd);
	printf("# %s: %s; %s sizes\n", name, isolation,
	       fx_long() ? "check-long" : "quick (SAFEOPEN_CHECK_LONG=1: the big)");
	printf("# %s: %s\n", name, openat2_note());
	fflush(stdout);

	/* Under valgrind the cases run in this one process, so that leaks and
	 * descriptors are counted across the whole suite. */
	if (fx_under_valgrind())
		setenv("CK_FORK", "no", 1);
	double t0 = fx_now();
	SRunner *sr = srunner_create(suite);
	srunner_set_tap(sr, tap);
	srunner_run_all(sr, getenv("CK_VERBOSITY") ? CK_ENV : CK_SILENT);
	srunner_free(sr);
	double secs = fx_now() - t0;

	FILE *f = fopen(tap, "re");
	unlink(tap);
	if (!f) {
		printf("Bail out! %s: cannot read its TAP output: %s\n", name, strerror(errno));
		return 99;
	}
	int run = 0, passed = 0, skipped = 0, failed = 0;
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;
	while ((len = getline(&line, &cap, f)) >= 0) {
		if (len > 0 && line[len - 1] == '\n')
			line[--len] = '\0';
		char *mark;
		drop_file_name(line);
		if (!strncmp(line, "not ok ", 7) && (mark = strstr(line, ": " FX_SKIP_MARKER))) {
			*mark = '\0';
			printf("ok %s # SKIP %s\n", line + 7, mark + 2 + strlen(FX_SKIP_MARKER));
			run++;
			skipped++;
		} else if (!strncmp(line, "not ok ", 7)) {
			printf("%s\n", line);
			run++;
			failed++;
		} else if (!strncmp(line, "ok ", 3)) {
			printf("%s\n", line);
			run++;
			passed++;
		} else if (!strncmp(line, "1..", 3)) {
			printf("%s\n", line);
		} else {
			/* continuation of a multi-line failure message */
			printf("#   %s\n", line);
		}
	}
	free(line);
	fclose(f);
	printf("# %s: %d cases run: %d passed, %d skipped, %d failed (%.1f s)\n", name, run,
	       passed, skipped, failed, secs);
	fflush(stdout);
	fprintf(stderr, "%s: %d cases run: %d passed, %d skipped, %d failed (%.1f s)\n", name, run,
		passed, skipped, failed, secs);
	if (child_reason)
		munmap(child_reason, FX_REASON_MAX);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

long fx_openat2(int dirfd, const char *path, uint64_t flags, uint64_t mode, uint64_t resolve)
{
	struct {
		uint64_t flags, mode, resolve;
	} how = { .flags = flags, .mode = mode, .resolve = resolve };
	long r;
	int tries = 0;
	do
		r = syscall(SYS_openat2, dirfd, path, &how, sizeof(how));
	while (r < 0 && errno == EAGAIN && !(resolve & SAFE_RESOLVE_CACHED) && ++tries < 100000);
	return r;
}
