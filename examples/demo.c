/* SPDX-License-Identifier: MIT */
/*
 * demo: classic path attacks against three ways of opening a user-supplied
 * path beneath a directory, side by side.
 *
 *   openat()        openat(rootfd, path): what most code does
 *   realpath+check  realpath(root/path), check that the result starts with
 *                   "root/", then open() it: the usual "fix"
 *   safeopen        safe_openat_beneath(rootfd, path) (openat2 fast path)
 *   walker          the same through the library's own userspace walker
 *                   (SAFE_RESOLVE_USERSPACE), as on kernels without openat2
 *
 * It builds a hostile tree in a fresh temporary directory, rebuilds it before
 * every attempt, prints one row per attack, then shows safe_tmpfile_xattr()
 * publishing a file that a concurrent watcher never sees without its xattrs.
 * Exit status: 0 when libsafeopen never opened anything outside the root and
 * gave the right answer for the legitimate paths, 1 otherwise, 2 when the demo
 * itself could not run. It removes its temporary directory before exiting.
 *
 *     ./demo            (or: make demo)
 */
#define _GNU_SOURCE /* O_PATH, RENAME_EXCHANGE */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <time.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <safeopen.h>

/* renameat2(RENAME_EXCHANGE) through syscall(): not every C library has the
 * wrapper (musl 1.2.3 has none). */
#ifndef RENAME_EXCHANGE
#define RENAME_EXCHANGE (1 << 1)
#endif
static int exchange_names(int dfd, const char *a, const char *b)
{
	return (int)syscall(SYS_renameat2, dfd, a, dfd, b, RENAME_EXCHANGE);
}

#define RACE_SECONDS 0.3   /* per method */
#define RACE_MAX_TRIES 9999
#define XATTR_SECONDS 0.4  /* per publication method */
#define XATTR_MAX_ROUNDS 3000
#define SECRET "TOP SECRET: the attacker must never read this\n"
#define VICTIM "precious data outside the root: must never be truncated\n"
#define INSIDE "hello from inside the root\n"

/* ------------------------------------------------------------------ output */

static struct {
	const char *bad, *good, *warn, *dim, *bold, *off;
} C = { "", "", "", "", "", "" };

static void init_colour(void)
{
	const char *term = getenv("TERM");
	if (!isatty(STDOUT_FILENO) || getenv("NO_COLOR") || !term || !strcmp(term, "dumb"))
		return;
	C.bad = "\033[1;31m";
	C.good = "\033[32m";
	C.warn = "\033[33m";
	C.dim = "\033[2m";
	C.bold = "\033[1m";
	C.off = "\033[0m";
}

static const char *errname(int e)
{
	switch (e) {
	case EXDEV: return "EXDEV";
	case ELOOP: return "ELOOP";
	case ENOENT: return "ENOENT";
	case ENOTDIR: return "ENOTDIR";
	case EISDIR: return "EISDIR";
	case EEXIST: return "EEXIST";
	case EAGAIN: return "EAGAIN";
	case EACCES: return "EACCES";
	case EPERM: return "EPERM";
	case EINVAL: return "EINVAL";
	case ENOSYS: return "ENOSYS";
	case ENXIO: return "ENXIO";
	case ENAMETOOLONG: return "ENAMETOOLONG";
	case EOPNOTSUPP: return "EOPNOTSUPP";
	default: return "error";
	}
}

static void die(const char *what)
{
	fprintf(stderr, "demo: %s: %s\n", what, strerror(errno));
	exit(2);
}

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* ------------------------------------------------------------------ the hostile tree */

static char base[PATH_MAX];     /* the temporary directory (canonical) */
static char rootpath[PATH_MAX + 8]; /* base/root: the directory we mean to serve */
static int basefd = -1;
static int rootfd = -1;

/* Remove everything below dirfd/name without following any symlink. */
static void rmtree_at(int parent, const char *name)
{
	if (unlinkat(parent, name, 0) == 0 || errno == ENOENT)
		return;
	int fd = openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return;
	DIR *d = fdopendir(fd);
	if (!d) {
		close(fd);
		return;
	}
	struct dirent *e;
	while ((e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			rmtree_at(dirfd(d), e->d_name);
	closedir(d);
	unlinkat(parent, name, AT_REMOVEDIR);
}

static void put_file(int dirfd, const char *name, const char *content)
{
	int fd = openat(dirfd, name, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0 || write(fd, content, strlen(content)) != (ssize_t)strlen(content))
		die(name);
	close(fd);
}

static void put_link(int dirfd, const char *target, const char *name)
{
	if (symlinkat(target, dirfd, name) < 0)
		die(name);
}

static void put_dir(int dirfd, const char *name)
{
	if (mkdirat(dirfd, name, 0755) < 0)
		die(name);
}

/* "@" in a link target, path or note stands for the temporary directory. */
static const char *expand(const char *s, char *buf, size_t size)
{
	const char *at = strchr(s, '@');
	if (!at)
		return s;
	snprintf(buf, size, "%.*s%s%s", (int)(at - s), s, base, at + 1);
	return buf;
}

static const struct node {
	char type; /* d: directory, f: file with content, l: symlink to content */
	const char *name;
	const char *content;
} tree[] = {
	{ 'd', "outside", NULL },
	{ 'f', "outside/secret.txt", SECRET },
	{ 'f', "outside/victim.txt", VICTIM },
	{ 'f', "outside/report.txt", SECRET },
	{ 'd', "root", NULL },
	{ 'd', "root/public", NULL },
	{ 'f', "root/public/index.html", INSIDE },
	{ 'l', "root/public/shared", "../../outside" },
	{ 'l', "root/public/latest", "@/outside/secret.txt" },
	{ 'l', "root/public/status", "/proc/self/root@/outside/secret.txt" },
	{ 'd', "root/loop", NULL },
	{ 'l', "root/loop/a", "b" },
	{ 'l', "root/loop/b", "a" },
	{ 'd', "root/a", NULL },
	{ 'd', "root/a/b", NULL },
	{ 'd', "root/a/b/c", NULL },
	{ 'l', "root/a/b/c/up", "../../../../outside/secret.txt" },
	{ 'l', "root/a/b/c/home", "../../../public/index.html" },
	{ 'd', "root/tmp", NULL },
	{ 'l', "root/tmp/session.lock", "@/outside/pwned" },
	{ 'd', "root/logs", NULL },
	{ 'l', "root/logs/app.log", "../../outside/victim.txt" },
	{ 'd', "root/inbox", NULL },
	{ 'f', "root/inbox/report.txt", INSIDE },
	{ 'l', "root/.inbox-swap", "../outside" },
};

/* Throw the previous tree away and build a fresh one: every attempt starts
 * from the same state, whatever the previous attempt created or truncated. */
static void build_tree(void)
{
	char buf[PATH_MAX + 64];
	if (rootfd >= 0)
		close(rootfd);
	rmtree_at(basefd, "root");
	rmtree_at(basefd, "outside");
	for (size_t i = 0; i < sizeof(tree) / sizeof(tree[0]); i++) {
		const struct node *n = &tree[i];
		if (n->type == 'd')
			put_dir(basefd, n->name);
		else if (n->type == 'f')
			put_file(basefd, n->name, n->content);
		else
			put_link(basefd, expand(n->content, buf, sizeof(buf)), n->name);
	}
	/* The trusted root descriptor every method starts from. */
	rootfd = openat(basefd, "root", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (rootfd < 0)
		die("root");
}

/* Identity of a file. */
struct id {
	dev_t dev;
	ino_t ino;
	off_t size;
};

static bool id_of(int dirfd, const char *name, struct id *id)
{
	struct stat st;
	if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return false;
	*id = (struct id){ st.st_dev, st.st_ino, st.st_size };
	return true;
}

/* The files outside the root, to recognise an escape by inode. */
struct snapshot {
	struct id ids[16];
	char names[16][NAME_MAX + 1];
	int n;
};

static void snap_outside(struct snapshot *s)
{
	s->n = 0;
	int fd = openat(basefd, "outside", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		die("outside");
	DIR *d = fdopendir(fd);
	if (!d)
		die("outside");
	struct dirent *e;
	while ((e = readdir(d)) && s->n < 16) {
		if (!id_of(dirfd(d), e->d_name, &s->ids[s->n]))
			continue;
		snprintf(s->names[s->n], sizeof(s->names[0]), "%s", e->d_name);
		s->n++;
	}
	closedir(d);
}

/* ------------------------------------------------------------------ the methods */

enum method { M_OPENAT, M_REALPATH, M_SAFE, M_WALKER, M_COUNT };
static const char *const method_title[M_COUNT] = { "openat()", "realpath+check", "safeopen",
						   "walker" };

#define REFUSED_BY_CHECK (-2)

/* The usual "fix": canonicalise, compare prefixes, open the canonical name.
 * For a file that does not exist yet (O_CREAT), canonicalise its directory. */
static int open_realpath(const char *path, int flags)
{
	char joined[2 * PATH_MAX], resolved[PATH_MAX + NAME_MAX + 2];
	if ((size_t)snprintf(joined, sizeof(joined), "%s/%s", rootpath, path) >= sizeof(joined)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	if (!realpath(joined, resolved)) {
		if (errno != ENOENT || !(flags & O_CREAT))
			return -1;
		char *slash = strrchr(joined, '/');
		*slash = '\0';
		if (!realpath(joined, resolved))
			return -1;
		size_t len = strlen(resolved);
		snprintf(resolved + len, sizeof(resolved) - len, "/%s", slash + 1);
	}
	size_t rl = strlen(rootpath);
	if (strncmp(resolved, rootpath, rl) || (resolved[rl] != '/' && resolved[rl] != '\0'))
		return REFUSED_BY_CHECK;
	return open(resolved, flags | O_CLOEXEC, 0644);
}

static int open_with(enum method m, const char *path, int flags)
{
	struct safe_open_how how = {
		.flags = (uint64_t)flags,
		.mode = (flags & O_CREAT) ? 0644 : 0,
		.resolve = SAFE_RESOLVE_BENEATH | SAFE_RESOLVE_NO_MAGICLINKS |
			   SAFE_RESOLVE_USERSPACE,
	};
	switch (m) {
	case M_OPENAT:
		return openat(rootfd, path, flags | O_CLOEXEC, 0644);
	case M_REALPATH:
		return open_realpath(path, flags);
	case M_SAFE:
		return safe_openat_beneath(rootfd, path, flags, (flags & O_CREAT) ? 0644 : 0);
	case M_WALKER:
		return safe_openat2(rootfd, path, &how, sizeof(how));
	default:
		errno = EINVAL;
		return -1;
	}
}

/* ------------------------------------------------------------------ judging one attempt */

enum verdict { V_REFUSED, V_CHECK, V_RIGHT, V_OTHER_INSIDE, V_OUTSIDE, V_NOT_RUN };

struct result {
	enum verdict v;
	int err;           /* V_REFUSED: errno */
	const char *what;  /* V_OUTSIDE: OPENED, CREATED, TRUNCATED */
	unsigned long tries, escapes, inside; /* race rows */
};

/* Is fd beneath the root? Asked of the kernel through /proc/self/fd (this is
 * the demo's referee, not a defence), with an inode comparison against the
 * outside files as a fallback when /proc is unavailable. */
static bool fd_inside(int fd, const struct stat *st)
{
	char link[64], target[PATH_MAX];
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	ssize_t n = readlink(link, target, sizeof(target) - 1);
	if (n > 0) {
		target[n] = '\0';
		size_t rl = strlen(rootpath);
		return !strncmp(target, rootpath, rl) && (target[rl] == '/' || target[rl] == '\0');
	}
	struct snapshot s;
	snap_outside(&s);
	for (int i = 0; i < s.n; i++)
		if (s.ids[i].dev == st->st_dev && s.ids[i].ino == st->st_ino)
			return false;
	return true;
}

static struct result judge(int fd, int flags, const struct snapshot *before, const struct id *want)
{
	struct result r = { .v = V_OTHER_INSIDE };
	struct stat st;
	if (fstat(fd, &st) < 0)
		die("fstat");
	if (!fd_inside(fd, &st)) {
		const struct id *old = NULL;
		for (int i = 0; i < before->n; i++)
			if (before->ids[i].dev == st.st_dev && before->ids[i].ino == st.st_ino)
				old = &before->ids[i];
		r.v = V_OUTSIDE;
		r.what = "OPENED OUTSIDE";
		if (!old && (flags & O_CREAT))
			r.what = "CREATED OUTSIDE";
		else if (old && (flags & O_TRUNC) && old->size > 0 && st.st_size == 0)
			r.what = "TRUNCATED OUTSIDE";
	} else if (want && want->dev == st.st_dev && want->ino == st.st_ino) {
		r.v = V_RIGHT;
	}
	return r;
}

/* ------------------------------------------------------------------ the attacks */

enum kind { K_ONCE, K_RACE, K_OVERLONG };

static const struct attack {
	const char *title;
	const char *path;  /* relative to the root; "@" = the temporary directory */
	int flags;
	const char *right; /* the file the path means (below base), or NULL */
	bool refuse;       /* the correct answer is a refusal (as openat2 gives) */
	const char *note;  /* how the trap is laid */
	enum kind kind;
} attacks[] = {
	{ "legitimate file", "public/index.html", O_RDONLY, "root/public/index.html", false,
	  "the control: every method should open it", K_ONCE },
	{ "link using .. inside", "a/b/c/home", O_RDONLY, "root/public/index.html", false,
	  "a/b/c/home -> ../../../public/index.html, legitimate", K_ONCE },
	{ "../ traversal", "public/../../outside/secret.txt", O_RDONLY, NULL, true, NULL, K_ONCE },
	{ "absolute path", "@/outside/secret.txt", O_RDONLY, NULL, true, NULL, K_ONCE },
	{ "symlinked directory", "public/shared/secret.txt", O_RDONLY, NULL, true,
	  "public/shared -> ../../outside", K_ONCE },
	{ "absolute symlink", "public/latest", O_RDONLY, NULL, true,
	  "public/latest -> @/outside/secret.txt", K_ONCE },
	{ "/proc magic link", "public/status", O_RDONLY, NULL, true,
	  "public/status -> /proc/self/root@/outside/secret.txt", K_ONCE },
	{ "symlink loop", "loop/a", O_RDONLY, NULL, true, "loop/a -> b, loop/b -> a", K_ONCE },
	{ "link climbing out with ..", "a/b/c/up", O_RDONLY, NULL, true,
	  "a/b/c/up -> ../../../../outside/secret.txt", K_ONCE },
	{ "O_CREAT, dangling link", "tmp/session.lock", O_WRONLY | O_CREAT, NULL, true,
	  "tmp/session.lock -> @/outside/pwned, not there yet", K_ONCE },
	{ "O_TRUNC through a link", "logs/app.log", O_WRONLY | O_TRUNC, NULL, true,
	  "logs/app.log -> ../../outside/victim.txt", K_ONCE },
	{ "dir swapped for a link", "inbox/report.txt", O_RDONLY, "root/inbox/report.txt", false,
	  "a thread keeps swapping inbox/ with .inbox-swap -> ../outside", K_RACE },
	{ "overlong path", NULL, O_RDONLY, "root/public/index.html", true,
	  "longer than PATH_MAX", K_OVERLONG },
};
#define NATTACKS (sizeof(attacks) / sizeof(attacks[0]))

static volatile sig_atomic_t interrupted;

static void on_signal(int sig)
{
	(void)sig;
	interrupted = 1;
}

/* One attempt of a K_ONCE attack on a fresh tree. */
static struct result attempt_once(enum method m, const char *path, const struct attack *a)
{
	struct result r = { .v = V_REFUSED };
	struct snapshot before;
	struct id want;
	build_tree();
	snap_outside(&before);
	if (a->right && !id_of(basefd, a->right, &want))
		die(a->right);
	int fd = open_with(m, path, a->flags);
	if (fd == REFUSED_BY_CHECK) {
		r.v = V_CHECK;
	} else if (fd < 0) {
		r.err = errno;
	} else {
		r = judge(fd, a->flags, &before, a->right ? &want : NULL);
		close(fd);
	}
	return r;
}

/* The attacker of the race row: swap inbox/ (a directory) and .inbox-swap (a
 * symlink to ../outside) as fast as possible. */
static atomic_bool race_stop;
static atomic_ulong race_swaps;
static atomic_int race_err;

static void *swapper(void *arg)
{
	(void)arg;
	while (!atomic_load(&race_stop)) {
		if (exchange_names(rootfd, "inbox", ".inbox-swap") == 0) {
			atomic_fetch_add(&race_swaps, 1);
		} else {
			atomic_store(&race_err, errno);
			break;
		}
	}
	return NULL;
}

static struct result attempt_race(enum method m, const char *path, const struct attack *a)
{
	struct result r = { .v = V_RIGHT };
	struct id want;
	pthread_t t;
	build_tree();
	if (!id_of(basefd, a->right, &want))
		die(a->right);
	atomic_store(&race_stop, false);
	atomic_store(&race_err, 0);
	if (pthread_create(&t, NULL, swapper, NULL) != 0)
		die("pthread_create");
	double end = now() + RACE_SECONDS;
	while (r.tries < RACE_MAX_TRIES && now() < end && !interrupted) {
		r.tries++;
		int fd = open_with(m, path, a->flags);
		if (fd < 0) {
			r.err = errno;
			continue;
		}
		struct stat st;
		if (fstat(fd, &st) < 0)
			die("fstat");
		/* Anything but the file inside counts as an escape. */
		if (st.st_dev != want.dev || st.st_ino != want.ino)
			r.escapes++;
		else
			r.inside++;
		close(fd);
	}
	atomic_store(&race_stop, true);
	pthread_join(t, NULL);
	if (atomic_load(&race_err)) {
		r.v = V_NOT_RUN; /* the filesystem cannot swap the two names */
		r.err = atomic_load(&race_err);
		r.tries = 0;
	} else if (r.escapes) {
		r.v = V_OUTSIDE;
	} else if (!r.inside) {
		r.v = V_REFUSED; /* never opened the file at all: not a pass */
	}
	return r;
}

/* ------------------------------------------------------------------ printing */

static void print_cell(const struct result *r, bool last)
{
	char text[48];
	const char *colour = C.good;
	switch (r->v) {
	case V_REFUSED:
		if (r->tries == 0 && r->err && strlen(errname(r->err)) > 9)
			snprintf(text, sizeof(text), "%s", errname(r->err));
		else
			snprintf(text, sizeof(text), "refused %s", errname(r->err));
		break;
	case V_CHECK:
		snprintf(text, sizeof(text), "refused (check)");
		break;
	case V_RIGHT:
		if (r->tries)
			snprintf(text, sizeof(text), "0/%lu escaped", r->tries);
		else
			snprintf(text, sizeof(text), "opened inside");
		break;
	case V_OTHER_INSIDE:
		snprintf(text, sizeof(text), "wrong file inside");
		colour = C.warn;
		break;
	case V_NOT_RUN:
		snprintf(text, sizeof(text), "not run (%s)", errname(r->err));
		colour = C.warn;
		break;
	case V_OUTSIDE:
		if (r->tries)
			snprintf(text, sizeof(text), "OUTSIDE %lu/%lu", r->escapes, r->tries);
		else
			snprintf(text, sizeof(text), "%s", r->what);
		colour = C.bad;
		break;
	}
	if (last)
		printf(" %s%s%s", colour, text, C.off);
	else
		printf(" %s%-17s%s", colour, text, C.off);
}

/* The dim line under a row: the path given and how the trap is laid,
 * shortened to fit 100 columns. */
static void print_detail(const char *path, const char *note)
{
	char line[512], buf[PATH_MAX + 64];
	int n;
	if (strlen(path) > 60)
		n = snprintf(line, sizeof(line), "%.30s...%s (%zu bytes)", path,
			     path + strlen(path) - 10, strlen(path));
	else
		n = snprintf(line, sizeof(line), "%s", path);
	if (note && !strncmp(note, path, strlen(path)) && !strncmp(note + strlen(path), " -> ", 4))
		n = 0; /* the note starts with the path: show the note alone */
	if (note && n > 0 && (size_t)n < sizeof(line))
		snprintf(line + n, sizeof(line) - (size_t)n, "   (%.200s)",
			 expand(note, buf, sizeof(buf)));
	else if (note)
		snprintf(line, sizeof(line), "%.200s", expand(note, buf, sizeof(buf)));
	if (strlen(line) > 96)
		memcpy(line + 93, "...", 4);
	printf("   %s%s%s\n", C.dim, line, C.off);
}

/* ------------------------------------------------------------------ xattr section */

static const char photo[] = "public/photo.jpg";
static const char mime[] = "image/jpeg";
static const char origin[] = "uploaded through the libsafeopen demo";

static atomic_bool watch_stop;
static atomic_ulong watch_seen, watch_bare;

/* The watcher: opens the name over and over; every time it exists, both
 * attributes must already be on it. */
static void *watcher(void *arg)
{
	(void)arg;
	char v[64];
	while (!atomic_load(&watch_stop)) {
		int fd = openat(rootfd, photo, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0)
			continue;
		atomic_fetch_add(&watch_seen, 1);
		if (fgetxattr(fd, "user.mime_type", v, sizeof(v)) < 0 ||
		    fgetxattr(fd, "user.origin", v, sizeof(v)) < 0)
			atomic_fetch_add(&watch_bare, 1);
		close(fd);
	}
	return NULL;
}

struct pubstats {
	unsigned long rounds, seen, bare;
	int err; /* nonzero: publication failed with this errno */
};

static int publish_naive(void)
{
	int fd = openat(rootfd, photo, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (fd < 0)
		return -1;
	if (fsetxattr(fd, "user.mime_type", mime, strlen(mime), 0) < 0 ||
	    fsetxattr(fd, "user.origin", origin, strlen(origin), 0) < 0) {
		int e = errno;
		close(fd);
		errno = e;
		return -1;
	}
	return fd;
}

static int publish_safe(void)
{
	const struct safe_xattr xa[] = {
		{ "user.mime_type", mime, strlen(mime) },
		{ "user.origin", origin, strlen(origin) },
	};
	return safe_tmpfile_xattr(rootfd, photo, 0644, xa, 2, 0);
}

static struct pubstats race_publication(int (*publish)(void))
{
	struct pubstats s = { 0 };
	pthread_t t;
	atomic_store(&watch_stop, false);
	atomic_store(&watch_seen, 0);
	atomic_store(&watch_bare, 0);
	if (pthread_create(&t, NULL, watcher, NULL) != 0)
		die("pthread_create");
	double end = now() + XATTR_SECONDS;
	while (s.rounds < XATTR_MAX_ROUNDS && now() < end && !interrupted) {
		int fd = publish();
		if (fd < 0) {
			s.err = errno;
			break;
		}
		close(fd);
		s.rounds++;
		if (unlinkat(rootfd, photo, 0) < 0)
			die(photo);
	}
	atomic_store(&watch_stop, true);
	pthread_join(t, NULL);
	s.seen = atomic_load(&watch_seen);
	s.bare = atomic_load(&watch_bare);
	return s;
}

/* Returns false if libsafeopen misbehaved. */
static bool xattr_section(void)
{
	char path[PATH_MAX + 64], val[128];
	bool ok = true;
	build_tree();
	printf("\n%ssafe_tmpfile_xattr(): a new file that appears with its extended attributes%s\n",
	       C.bold, C.off);
	int fd = publish_safe();
	if (fd < 0) {
		int e = errno;
		printf("  %s%s: %s (%s)%s\n", e == EOPNOTSUPP ? C.warn : C.bad, photo, strerror(e),
		       errname(e), C.off);
		if (e == EOPNOTSUPP) {
			printf("  this filesystem has no user.* xattrs; "
			       "set TMPDIR to one that does\n");
			return true;
		}
		return false;
	}
	static const char jpeg[] = "\xff\xd8\xff\xe0 (not really a JPEG)";
	if (write(fd, jpeg, sizeof(jpeg) - 1) < 0)
		die(photo);
	close(fd);
	printf("  created %s (mode 0644); its attributes, read back by name with lgetxattr(2):\n",
	       photo);
	snprintf(path, sizeof(path), "%s/%s", rootpath, photo);
	static const char *const names[] = { "user.mime_type", "user.origin" };
	for (int i = 0; i < 2; i++) {
		ssize_t n = lgetxattr(path, names[i], val, sizeof(val) - 1);
		if (n < 0) {
			printf("    %-15s %smissing: %s%s\n", names[i], C.bad, strerror(errno),
			       C.off);
			ok = false;
			continue;
		}
		val[n] = '\0';
		printf("    %-15s %s\"%s\"%s\n", names[i], C.good, val, C.off);
	}
	if (unlinkat(rootfd, photo, 0) < 0)
		die(photo);

	printf("  A watcher thread opened %s in a loop while it was created and removed again:\n",
	       photo);
	struct pubstats safe = race_publication(publish_safe);
	struct pubstats naive = race_publication(publish_naive);
	const struct {
		const char *how;
		struct pubstats *s;
	} rows[] = { { "safe_tmpfile_xattr()", &safe }, { "open(O_CREAT) + fsetxattr()", &naive } };
	for (int i = 0; i < 2; i++) {
		struct pubstats *s = rows[i].s;
		printf("    %-28s %5lu files, name seen %6lu times: ", rows[i].how, s->rounds,
		       s->seen);
		if (s->err)
			printf("%sfailed: %s%s\n", C.bad, strerror(s->err), C.off);
		else if (s->bare)
			printf("%s%lu times WITHOUT xattrs%s\n", i == 0 ? C.bad : C.warn, s->bare,
			       C.off);
		else
			printf("%snever without xattrs%s\n", C.good, C.off);
	}
	if (safe.err || safe.bare || !safe.rounds)
		ok = false;
	if (!naive.err && !naive.bare)
		printf("  %s(the naive window is a few microseconds; the watcher missed it "
		       "this time)%s\n",
		       C.dim, C.off);
	return ok;
}

/* ------------------------------------------------------------------ main */

static void cleanup(void)
{
	if (rootfd >= 0)
		close(rootfd);
	rootfd = -1;
	if (basefd >= 0) {
		rmtree_at(basefd, "root");
		rmtree_at(basefd, "outside");
		close(basefd);
		basefd = -1;
		if (rmdir(base) < 0)
			fprintf(stderr, "demo: could not remove %s: %s\n", base, strerror(errno));
	}
}

int main(void)
{
	char tmpl[PATH_MAX];
	const char *tmpdir = getenv("TMPDIR");
	struct sigaction sa = { .sa_handler = on_signal };
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	setvbuf(stdout, NULL, _IOLBF, 0);
	init_colour();

	snprintf(tmpl, sizeof(tmpl), "%s/safeopen-demo.XXXXXX",
		 tmpdir && *tmpdir ? tmpdir : "/tmp");
	if (!mkdtemp(tmpl))
		die(tmpl);
	if (!realpath(tmpl, base)) {
		rmdir(tmpl);
		die(tmpl);
	}
	basefd = open(base, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (basefd < 0)
		die(base);
	snprintf(rootpath, sizeof(rootpath), "%s/root", base);
	atexit(cleanup);

	printf("%slibsafeopen %s: classic path attacks against four ways of opening a path%s\n",
	       C.bold, safe_version(), C.off);
	printf("A hostile tree was built in %s (removed at exit):\n", base);
	printf("  root/     what the program means to serve; every path below is given relative "
	       "to it\n");
	printf("  outside/  secret.txt, report.txt, victim.txt: what the attacker wants to read,\n"
	       "            create or truncate\n\n");
	printf("  %-15s openat(rootfd, path, flags)\n", method_title[M_OPENAT]);
	printf("  %-15s realpath(root/path), check it starts with root/, then open() the result\n",
	       method_title[M_REALPATH]);
	printf("  %-15s safe_openat_beneath(rootfd, path, flags, mode): the openat2(2) fast path\n",
	       method_title[M_SAFE]);
	printf("  %-15s safe_openat2() with SAFE_RESOLVE_USERSPACE: the library's own walker\n\n",
	       method_title[M_WALKER]);

	printf("%s%2s %-25s", C.bold, "#", "attack");
	for (int m = 0; m < M_COUNT; m++)
		printf(m == M_COUNT - 1 ? " %s" : " %-17s", method_title[m]);
	printf("%s\n", C.off);
	printf("%2s %-25s", "--", "-------------------------");
	for (int m = 0; m < M_COUNT; m++)
		printf(" %s", "-----------------");
	printf("\n");

	char longpath[PATH_MAX + 256];
	{
		size_t n = (size_t)snprintf(longpath, sizeof(longpath), "public/");
		while (n < PATH_MAX + 100)
			n += (size_t)snprintf(longpath + n, sizeof(longpath) - n, "./");
		snprintf(longpath + n, sizeof(longpath) - n, "index.html");
	}

	unsigned escaped[M_COUNT] = { 0 }, wrong = 0, attacks_run = 0;
	size_t rp_lost[NATTACKS], nrp_lost = 0;
	for (size_t i = 0; i < NATTACKS && !interrupted; i++) {
		const struct attack *a = &attacks[i];
		char pbuf[PATH_MAX + 64];
		const char *path = a->kind == K_OVERLONG ? longpath :
							   expand(a->path, pbuf, sizeof(pbuf));
		printf("%2zu %-25s", i, a->title);
		fflush(stdout);
		if (a->refuse || a->kind == K_RACE)
			attacks_run++;
		for (int m = 0; m < M_COUNT; m++) {
			struct result r = a->kind == K_RACE ? attempt_race(m, path, a) :
							      attempt_once(m, path, a);
			print_cell(&r, m == M_COUNT - 1);
			fflush(stdout);
			if (r.v == V_OUTSIDE) {
				escaped[m]++;
				if (m == M_REALPATH)
					rp_lost[nrp_lost++] = i;
			}
			if (m >= M_SAFE && r.v != V_OUTSIDE && r.v != V_NOT_RUN) {
				bool right = a->refuse ? r.v == V_REFUSED : r.v == V_RIGHT;
				wrong += !right;
			}
		}
		printf("\n");
		print_detail(path, a->note);
	}
	if (interrupted) {
		printf("\ninterrupted\n");
		return 130;
	}

	printf("\n%sopened inside%s      the right file, inside the root\n", C.good, C.off);
	printf("%srefused EXDEV%s ...  refused, with that errno\n",
	       C.good, C.off);
	printf("%sOPENED OUTSIDE%s     the attack worked (also CREATED, TRUNCATED OUTSIDE)\n", C.bad,
	       C.off);
	printf("%sn/N%s                the race: escapes out of N attempts in %.1f s per method\n\n",
	       C.bold, C.off, RACE_SECONDS);

	printf("%sEscapes%s in %u attacks:", C.bold, C.off, attacks_run);
	for (int m = 0; m < M_COUNT; m++)
		printf(" %s %s%u%s%s", method_title[m], escaped[m] ? C.bad : C.good, escaped[m],
		       C.off, m == M_COUNT - 1 ? "." : ",");
	printf("\n");
	if (nrp_lost) {
		printf("realpath+check validates one walk of the path and opens with another, "
		       "so it lost on\n");
		for (size_t k = 0; k < nrp_lost; k++)
			printf("%s\"%s\"", k == 0 ? "" : k + 1 < nrp_lost ? ", " : " and ",
			       attacks[rp_lost[k]].title);
		printf(".\n");
	}

	bool lib_ok = !escaped[M_SAFE] && !escaped[M_WALKER] && !wrong;
	if (wrong)
		printf("%slibsafeopen gave %u wrong answer(s) for legitimate paths or attacks "
		       "above.%s\n",
		       C.bad, wrong, C.off);
	if (!xattr_section())
		lib_ok = false;
	if (interrupted) {
		printf("\ninterrupted\n");
		return 130;
	}

	printf("\nThe same protection from the shell: tools/safeopen/safeopen --help; a file server "
	       "for\nuntrusted URLs built on it: safe-httpd --help.\n");
	printf("\n%s%s%s\n", lib_ok ? C.good : C.bad,
	       lib_ok ? "libsafeopen never opened anything outside the root." :
			escaped[M_SAFE] || escaped[M_WALKER] ?
			"FAILURE: libsafeopen opened something outside the root." :
			"FAILURE: libsafeopen misbehaved (see above).",
	       C.off);
	return lib_ok ? 0 : 1;
}
