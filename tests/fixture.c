/* SPDX-License-Identifier: MIT */
#include "config.h"

#include "fixture.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <sys/wait.h>
#include <unistd.h>

void fx_fdset_take(struct fx_fdset *set)
{
	memset(set, 0, sizeof(*set));
	/* fcntl(F_GETFD) per fd: no directory stream, so taking the snapshot
	 * opens nothing itself. */
	for (int fd = 0; fd < FX_MAX_FD; fd++) {
		if (fcntl(fd, F_GETFD) != -1) {
			set->open[fd / 8] |= (unsigned char)(1u << (fd % 8));
			set->count++;
		}
	}
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

int fx_rmtree(const char *path)
{
	/* Make every directory writable and searchable first (tests create
	 * mode-000 directories); FTW_PHYS never follows symlinks. */
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

char *fx_dir_listing(int dirfd, const char *path)
{
	int fd = openat(dirfd, path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		ck_abort_msg("fx_dir_listing %s: %s", path, strerror(errno));
	DIR *d = fdopendir(fd);
	if (!d)
		ck_abort_msg("fdopendir: %s", strerror(errno));
	char **lines = NULL;
	size_t n = 0, cap = 0;
	struct dirent *de;
	while ((de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (n == cap) {
			cap = cap ? cap * 2 : 16;
			lines = realloc(lines, cap * sizeof(*lines));
			if (!lines)
				ck_abort_msg("out of memory");
		}
		lines[n++] = strdup(de->d_name);
	}
	closedir(d);
	return join_sorted(lines, n);
}

bool fx_under_valgrind(void)
{
	const char *v = getenv("SAFEOPEN_TEST_VALGRIND");
	return v && *v && strcmp(v, "0") != 0;
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
