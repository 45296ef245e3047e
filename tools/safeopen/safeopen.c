/* SPDX-License-Identifier: MIT */
/*
 * safeopen: file operations on untrusted paths from the shell, every one of
 * them confined beneath a root directory by libsafeopen.
 *
 *     safeopen [OPTIONS] ROOT COMMAND [ARGS]
 *
 * The paths given to COMMAND are untrusted: they are resolved by the library
 * beneath ROOT (or with ROOT as "/", --in-root), so "..", absolute paths,
 * symlinks and concurrent renames cannot make safeopen read, create or remove
 * anything outside ROOT. ROOT itself is trusted and opened normally.
 *
 * Exit status: 0 success, 1 an operation failed (for commands taking several
 * paths: at least one failed; the others were still done), 2 usage error.
 * See safeopen(1).
 */
#define _GNU_SOURCE /* O_PATH */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include <safeopen.h>

#include "extract.h"
#include "tree.h"

enum { EXIT_OK = 0, EXIT_FAILED = 1, EXIT_USAGE = 2 };

static uint64_t resolve = SAFE_RESOLVE_BENEATH; /* SAFE_RESOLVE_* bits for every call */
static int rootfd = -1;

static const char usage_text[] =
	"Usage: safeopen [OPTIONS] ROOT COMMAND [ARGS]\n"
	"Run one file operation on untrusted paths, confined beneath the directory ROOT.\n"
	"\n"
	"Commands (PATH is untrusted and resolved beneath ROOT):\n"
	"  cat PATH...              write the files to standard output\n"
	"  stat PATH...             show type, size, mode, owner, times and xattrs\n"
	"                           (a symbolic link is described, not followed)\n"
	"  ls [-l] [-a] [PATH]      list a directory (default: ROOT itself)\n"
	"  resolve PATH...          print the canonical path of PATH relative to ROOT\n"
	"  mkdir [-p] [-m MODE] PATH...\n"
	"                           create directories (-p: with missing parents)\n"
	"  put PATH [--mode MODE] [--xattr NAME=VALUE]... [--replace] [--sync]\n"
	"                           store standard input as PATH; the file appears\n"
	"                           atomically, complete and with its xattrs\n"
	"  rm [-r] [-f] PATH...     remove files (-r: directories and their contents,\n"
	"                           never following symlinks; -f: ignore missing)\n"
	"  extract [OPTIONS] [ARCHIVE|-]\n"
	"                           unpack an untrusted archive beneath ROOT\n"
	"                           (see 'safeopen ROOT extract --help')\n"
	"  find [PATH] [-type f|d|l] [-name GLOB] [-xdev] [-print0]\n"
	"                           list the tree at PATH (default: ROOT), never\n"
	"                           following a symbolic link\n"
	"  chown -R OWNER[:GROUP] PATH\n"
	"  chmod -R MODE PATH       change owners or modes of a whole tree (MODE octal\n"
	"                           or symbolic); links are never followed\n"
	"  du [-s] PATH             disk usage in KiB of each directory (-s: total)\n"
	"  sweep [--age SECONDS] [DIR]\n"
	"                           remove the hidden temporaries (.safeopen-*) that\n"
	"                           interrupted writers left in DIR (default: ROOT)\n"
	"                           if unchanged for SECONDS (default 3600); prints\n"
	"                           how many were removed\n"
	"\n"
	"\n"
	"  safeopen [OPTIONS] cp -a SRCROOT SRC DSTROOT DST\n"
	"                           copy the tree SRC beneath SRCROOT to the new name\n"
	"                           DST beneath DSTROOT: modes, times, xattrs, owners\n"
	"                           (as root), links as links, hard links kept\n"
	"\n"
	"Options:\n"
	"      --beneath        PATH must stay beneath ROOT: absolute paths and links,\n"
	"                       and \"..\" above ROOT, are refused (EXDEV); the default\n"
	"      --in-root        ROOT acts as \"/\": absolute paths and links start at\n"
	"                       ROOT, \"..\" at ROOT stays there\n"
	"      --no-symlinks    refuse any symbolic link in PATH (ELOOP)\n"
	"      --symlinks-owner-match\n"
	"                       follow a symbolic link in PATH only when its owner\n"
	"                       owns what it leads to (else ELOOP)\n"
	"      --no-xdev        refuse to cross a mount point (EXDEV)\n"
	"      --no-magiclinks  refuse /proc magic links (ELOOP)\n"
	"      --walker         use the library's userspace walker, not openat2(2)\n"
	"  -h, --help           show this help and exit\n"
	"  -V, --version        show the version and exit\n"
	"\n"
	"Exit status: 0 success, 1 an operation failed, 2 usage error.\n"
	"Errors are reported on standard error as \"safeopen: PATH: message\".\n"
	"\n"
	"Example: cd /srv/www && find . -type f -print0 | xargs -0 safeopen /srv/www cat\n";

void usage_error(const char *fmt, ...)
{
	va_list ap;
	fputs("safeopen: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputs("\nTry 'safeopen --help' for more information.\n", stderr);
	exit(EXIT_USAGE);
}

/* The message for an errno, with the resolver's two security errors spelled
 * out: a bare "Invalid cross-device link" would leave the user guessing. */
static const char *describe(int err)
{
	switch (err) {
	case EXDEV:
		return (resolve & SAFE_RESOLVE_NO_XDEV) ?
			       "path escapes the root directory or crosses a mount point (EXDEV)" :
			       "path escapes the root directory (EXDEV)";
	case ELOOP:
		return (resolve & (SAFE_RESOLVE_NO_SYMLINKS | SAFE_RESOLVE_NO_MAGICLINKS |
				   SAFE_RESOLVE_SYMLINKS_OWNER_MATCH)) ?
			       "forbidden symbolic link, or too many levels of links (ELOOP)" :
			       "too many levels of symbolic links (ELOOP)";
	case EAGAIN:
		return "the tree kept changing during resolution; try again (EAGAIN)";
	default:
		return strerror(err);
	}
}

static int fail(const char *what, int err)
{
	fprintf(stderr, "safeopen: %s: %s\n", what, describe(err));
	return EXIT_FAILED;
}

static bool write_all(int fd, const char *buf, size_t len)
{
	while (len) {
		ssize_t n = write(fd, buf, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return false;
		buf += n;
		len -= (size_t)n;
	}
	return true;
}

/* Copy in to out. Returns 0, or the errno; *read_side tells which end failed. */
static int copy_fd(int in, int out, bool *read_side)
{
	static char buf[1 << 16];
	for (;;) {
		ssize_t n = read(in, buf, sizeof(buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			*read_side = true;
			return n < 0 ? errno : 0;
		}
		if (!write_all(out, buf, (size_t)n)) {
			*read_side = false;
			return errno;
		}
	}
}

/* Parse the options of a command with getopt; "+" stops at the first path
 * so that a path like "-x" can follow "--". Returns the index of the first
 * non-option argument. */
static int parse_flags(int argc, char **argv, const char *shortopts, bool *seen)
{
	int c;
	optind = 0; /* full reinitialisation of GNU getopt */
	opterr = 0;
	while ((c = getopt(argc, argv, shortopts)) != -1) {
		const char *p = strchr(shortopts, c);
		if (c == '?' || !p)
			usage_error("%s: invalid option -- '%c'", argv[0], optopt);
		seen[p - shortopts] = true;
	}
	return optind;
}

static mode_t parse_mode(const char *cmd, const char *s)
{
	char *end;
	errno = 0;
	unsigned long m = strtoul(s, &end, 8);
	if (errno || !*s || *end || m > 07777)
		usage_error("%s: invalid mode '%s' (expected octal, e.g. 0644)", cmd, s);
	return (mode_t)m;
}

/* ------------------------------------------------------------------ cat */

static int cmd_cat(int argc, char **argv)
{
	int ret = EXIT_OK;
	int first = (argc > 1 && !strcmp(argv[1], "--")) ? 2 : 1;
	if (first >= argc)
		usage_error("cat: missing PATH");
	for (int i = first; i < argc; i++) {
		struct safe_open_how how = { .flags = O_RDONLY | O_NOCTTY, .resolve = resolve };
		int fd = safe_openat2(rootfd, argv[i], &how, sizeof(how));
		if (fd < 0) {
			ret = fail(argv[i], errno);
			continue;
		}
		bool read_side;
		int err = copy_fd(fd, STDOUT_FILENO, &read_side);
		close(fd);
		if (err && !read_side) {
			fail("write error", err);
			return EXIT_FAILED;
		}
		if (err)
			ret = fail(argv[i], err);
	}
	return ret;
}

/* ------------------------------------------------------------------ stat */

static const char *type_name(mode_t m)
{
	switch (m & S_IFMT) {
	case S_IFREG: return "regular file";
	case S_IFDIR: return "directory";
	case S_IFLNK: return "symbolic link";
	case S_IFIFO: return "fifo";
	case S_IFSOCK: return "socket";
	case S_IFCHR: return "character device";
	case S_IFBLK: return "block device";
	default: return "unknown";
	}
}

static void mode_string(mode_t m, char out[11])
{
	static const char types[] = "?pc?d?b?-?l?s???";
	out[0] = types[(m >> 12) & 15];
	const char *rwx = "rwxrwxrwx";
	for (int i = 0; i < 9; i++)
		out[1 + i] = (m & (0400u >> i)) ? rwx[i] : '-';
	if (m & S_ISUID)
		out[3] = (m & S_IXUSR) ? 's' : 'S';
	if (m & S_ISGID)
		out[6] = (m & S_IXGRP) ? 's' : 'S';
	if (m & S_ISVTX)
		out[9] = (m & S_IXOTH) ? 't' : 'T';
	out[10] = '\0';
}

static void print_time(const char *label, const struct timespec *ts)
{
	struct tm tm;
	char buf[64];
	localtime_r(&ts->tv_sec, &tm);
	strftime(buf, sizeof(buf), "%Y-%m-%d %H:%M:%S", &tm);
	char zone[16];
	strftime(zone, sizeof(zone), "%z", &tm);
	printf("%6s: %s.%09ld %s\n", label, buf, ts->tv_nsec, zone);
}

/* Print bytes as a C-like quoted string (xattr values may be binary). */
static void print_quoted(const char *v, size_t n)
{
	putchar('"');
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)v[i];
		if (c == '"' || c == '\\')
			printf("\\%c", c);
		else if (c >= 0x20 && c < 0x7f)
			putchar(c);
		else
			printf("\\x%02x", c);
	}
	putchar('"');
}

static void print_xattrs(const char *path)
{
	char names[4096];
	ssize_t len = safe_listxattr_beneath(rootfd, path, names, sizeof(names), resolve);
	if (len <= 0)
		return;
	for (char *n = names; n < names + len; n += strlen(n) + 1) {
		char val[1024];
		ssize_t vl = safe_getxattr_beneath(rootfd, path, n, val, sizeof(val), resolve);
		printf(" Xattr: %s=", n);
		if (vl >= 0)
			print_quoted(val, (size_t)vl);
		else
			printf("(%s)", strerror(errno));
		putchar('\n');
	}
}

static int cmd_stat(int argc, char **argv)
{
	int ret = EXIT_OK;
	int first = (argc > 1 && !strcmp(argv[1], "--")) ? 2 : 1;
	if (first >= argc)
		usage_error("stat: missing PATH");
	for (int i = first; i < argc; i++) {
		struct stat st;
		if (safe_fstatat_beneath(rootfd, argv[i], &st, resolve) < 0) {
			ret = fail(argv[i], errno);
			continue;
		}
		char mode[11];
		mode_string(st.st_mode, mode);
		printf("  File: %s", argv[i]);
		if (S_ISLNK(st.st_mode)) {
			char target[PATH_MAX + 1];
			ssize_t n = safe_readlinkat_beneath(rootfd, argv[i], target,
							    sizeof(target) - 1, resolve);
			if (n >= 0) {
				target[n] = '\0';
				printf(" -> %s", target);
			}
		}
		printf("\n  Type: %s\n", type_name(st.st_mode));
		printf("  Size: %-12lld Blocks: %-9lld Links: %lu\n", (long long)st.st_size,
		       (long long)st.st_blocks, (unsigned long)st.st_nlink);
		printf("  Mode: %04o/%s   Uid: %u   Gid: %u\n", (unsigned)(st.st_mode & 07777),
		       mode, (unsigned)st.st_uid, (unsigned)st.st_gid);
		printf(" Inode: %-12llu Device: %u,%u\n", (unsigned long long)st.st_ino,
		       major(st.st_dev), minor(st.st_dev));
		print_time("Access", &st.st_atim);
		print_time("Modify", &st.st_mtim);
		print_time("Change", &st.st_ctim);
		print_xattrs(argv[i]);
	}
	return ret;
}

/* ------------------------------------------------------------------ ls */

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int cmd_ls(int argc, char **argv)
{
	bool seen[3] = { false };
	int first = parse_flags(argc, argv, "la", seen);
	bool longfmt = seen[0], all = seen[1];
	const char *path = first < argc ? argv[first] : ".";
	if (first + 1 < argc)
		usage_error("ls: only one PATH, got '%s' too", argv[first + 1]);

	DIR *d = safe_opendir_beneath(rootfd, path, resolve);
	if (!d) {
		struct stat st;
		/* ls FILE prints the name, as ls(1) does */
		if (errno == ENOTDIR && safe_fstatat_beneath(rootfd, path, &st, resolve) == 0) {
			printf("%s\n", path);
			return EXIT_OK;
		}
		return fail(path, errno);
	}
	char **names = NULL;
	size_t n = 0, cap = 0;
	struct dirent *e;
	int ret = EXIT_OK;
	errno = 0;
	while ((e = readdir(d))) {
		if (!all && e->d_name[0] == '.')
			continue;
		if (n == cap) {
			cap = cap ? 2 * cap : 64;
			char **nn = realloc(names, cap * sizeof(*names));
			if (!nn) {
				ret = fail(path, ENOMEM);
				goto out;
			}
			names = nn;
		}
		if (!(names[n] = strdup(e->d_name))) {
			ret = fail(path, ENOMEM);
			goto out;
		}
		n++;
		errno = 0;
	}
	if (errno) {
		ret = fail(path, errno);
		goto out;
	}
	if (n)
		qsort(names, n, sizeof(*names), cmp_names);
	for (size_t i = 0; i < n; i++) {
		struct stat st;
		char mode[11];
		if (!longfmt) {
			printf("%s\n", names[i]);
			continue;
		}
		/* Names straight from the directory stream, relative to its fd
		 * and never followed: no resolution involved. */
		if (fstatat(dirfd(d), names[i], &st, AT_SYMLINK_NOFOLLOW) < 0) {
			ret = fail(names[i], errno);
			continue;
		}
		mode_string(st.st_mode, mode);
		printf("%s %3lu %5u %5u %10lld %s", mode, (unsigned long)st.st_nlink,
		       (unsigned)st.st_uid, (unsigned)st.st_gid, (long long)st.st_size, names[i]);
		if (S_ISLNK(st.st_mode)) {
			char target[PATH_MAX + 1];
			ssize_t tl = readlinkat(dirfd(d), names[i], target, sizeof(target) - 1);
			if (tl >= 0) {
				target[tl] = '\0';
				printf(" -> %s", target);
			}
		}
		putchar('\n');
	}
out:
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
	closedir(d);
	return ret;
}

/* ------------------------------------------------------------------ resolve */

static int cmd_resolve(int argc, char **argv)
{
	int ret = EXIT_OK;
	int first = (argc > 1 && !strcmp(argv[1], "--")) ? 2 : 1;
	if (first >= argc)
		usage_error("resolve: missing PATH");
	for (int i = first; i < argc; i++) {
		char buf[PATH_MAX];
		if (safe_realpath_beneath(rootfd, argv[i], buf, sizeof(buf), resolve) < 0)
			ret = fail(argv[i], errno);
		else
			printf("%s\n", buf);
	}
	return ret;
}

/* ------------------------------------------------------------------ mkdir */

static int cmd_mkdir(int argc, char **argv)
{
	bool parents = false, have_mode = false;
	mode_t mode = 0777;
	int c;
	optind = 0; /* full reinitialisation of GNU getopt */
	opterr = 0;
	while ((c = getopt(argc, argv, "+pm:")) != -1) {
		if (c == 'p')
			parents = true;
		else if (c == 'm') {
			mode = parse_mode("mkdir", optarg);
			have_mode = true;
		} else if (optopt == 'm')
			usage_error("mkdir: option -m needs a MODE");
		else
			usage_error("mkdir: invalid option -- '%c'", optopt);
	}
	if (optind >= argc)
		usage_error("mkdir: missing PATH");
	int ret = EXIT_OK;
	for (int i = optind; i < argc; i++) {
		/* -p keeps mkdir(1)'s rule: the parents get 0777 minus the
		 * umask, -m MODE only the last directory (chmod below). */
		int r = parents ? safe_mkdir_all_beneath(rootfd, argv[i], 0777, resolve)
				: safe_mkdirat_beneath(rootfd, argv[i], mode, resolve);
		if (r < 0) {
			ret = fail(argv[i], errno);
			continue;
		}
		if (parents)
			close(r);
		/* -m gives the exact mode, whatever the umask (as mkdir(1)). */
		if (have_mode && safe_fchmodat_beneath(rootfd, argv[i], mode, resolve) < 0)
			ret = fail(argv[i], errno);
	}
	return ret;
}

/* ------------------------------------------------------------------ put */

static int cmd_put(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "mode", required_argument, NULL, 'm' },
		{ "xattr", required_argument, NULL, 'x' },
		{ "replace", no_argument, NULL, 'r' },
		{ "sync", no_argument, NULL, 's' },
		{ NULL, 0, NULL, 0 },
	};
	struct safe_xattr *xa = NULL;
	size_t nxa = 0;
	uint64_t link_flags = 0;
	mode_t mode = 0666;
	int c;
	optind = 0; /* full reinitialisation of GNU getopt */
	opterr = 0;
	while ((c = getopt_long(argc, argv, "m:x:", opts, NULL)) != -1) {
		switch (c) {
		case 'm':
			mode = parse_mode("put", optarg);
			break;
		case 'x': {
			char *eq = strchr(optarg, '=');
			if (!eq || eq == optarg)
				usage_error("put: --xattr wants NAME=VALUE, got '%s'", optarg);
			struct safe_xattr *nx = realloc(xa, (nxa + 1) * sizeof(*xa));
			if (!nx) {
				free(xa);
				return fail("put", ENOMEM);
			}
			xa = nx;
			*eq = '\0';
			xa[nxa++] = (struct safe_xattr){ optarg, eq + 1, strlen(eq + 1) };
			break;
		}
		case 'r':
			link_flags |= SAFE_TMPFILE_REPLACE;
			break;
		case 's':
			link_flags |= SAFE_TMPFILE_SYNC;
			break;
		default:
			free(xa);
			if (optopt)
				usage_error("put: invalid option or missing argument -- '%c'",
					    optopt);
			usage_error("put: invalid option '%s'", argv[optind - 1]);
		}
	}
	if (optind >= argc || optind + 1 < argc) {
		free(xa);
		usage_error(optind >= argc ? "put: missing PATH" :
					     "put: exactly one PATH expected");
	}
	const char *path = argv[optind];

	/* Phase one: an unpublished file in PATH's directory. Nobody sees it
	 * under PATH until safe_tmpfile_link(), which sets the xattrs first. */
	struct safe_tmpfile *tmp = NULL;
	if (safe_tmpfile_open(rootfd, path, mode, resolve, &tmp) < 0) {
		free(xa);
		return fail(path, errno);
	}
	int fd = safe_tmpfile_fd(tmp); /* borrowed: the handle closes it */
	bool read_side;
	int err = copy_fd(STDIN_FILENO, fd, &read_side);
	if (err) {
		safe_tmpfile_discard(tmp);
		free(xa);
		return fail(read_side ? "standard input" : path, err);
	}
	/* Phase two: xattrs, final mode, then the name, atomically. */
	int out = safe_tmpfile_link(tmp, xa, nxa, link_flags);
	if (out < 0) {
		err = errno;
		safe_tmpfile_discard(tmp);
		free(xa);
		return fail(path, err);
	}
	close(out);
	free(xa);
	return EXIT_OK;
}

/* ------------------------------------------------------------------ rm */

static int cmd_rm(int argc, char **argv)
{
	bool seen[3] = { false };
	int first = parse_flags(argc, argv, "+rf", seen);
	bool recursive = seen[1], force = seen[2];
	if (first >= argc) {
		if (force)
			return EXIT_OK;
		usage_error("rm: missing PATH");
	}
	int ret = EXIT_OK;
	for (int i = first; i < argc; i++) {
		int r = recursive ? safe_rmtree_beneath(rootfd, argv[i], resolve) :
				    safe_unlinkat_beneath(rootfd, argv[i], resolve);
		if (r == 0 || (force && errno == ENOENT))
			continue;
		if (errno == EISDIR && !recursive) {
			fprintf(stderr, "safeopen: %s: Is a directory (use rm -r)\n", argv[i]);
			ret = EXIT_FAILED;
		} else {
			ret = fail(argv[i], errno);
		}
	}
	return ret;
}

/* ------------------------------------------------------------------ sweep */

/* Remove the hidden leftovers of writers that died (put, safe-httpd, any
 * program using safe_tmpfile_*) from one directory. */
static int cmd_sweep(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "age", required_argument, NULL, 'a' },
		{ NULL, 0, NULL, 0 },
	};
	unsigned long age = 3600;
	int c;
	optind = 0; /* full reinitialisation of GNU getopt */
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+", opts, NULL)) != -1) {
		if (c != 'a') {
			if (optopt == 'a')
				usage_error("sweep: option --age needs SECONDS");
			usage_error("sweep: invalid option '%s'", argv[optind - 1]);
		}
		char *end;
		errno = 0;
		age = strtoul(optarg, &end, 10);
		if (errno || end == optarg || *end || optarg[0] == '-' || age > UINT_MAX)
			usage_error("sweep: --age wants a number of seconds, got '%s'", optarg);
	}
	if (optind + 1 < argc)
		usage_error("sweep: at most one DIR expected");
	const char *dir = optind < argc ? argv[optind] : ".";
	unsigned int removed;
	int n = safe_tmpfile_sweep_beneath(rootfd, dir, (unsigned int)age, resolve, &removed);
	if (n < 0) {
		int err = errno;
		if (removed) /* the others were removed: say how many */
			printf("%u\n", removed);
		return fail(dir, err);
	}
	printf("%d\n", n);
	return EXIT_OK;
}

/* ------------------------------------------------------------------ extract */

/* tools/safeopen/extract.c */
static int cmd_extract(int argc, char **argv)
{
	return safeopen_extract(rootfd, resolve, argc, argv);
}

/* ------------------------------------------------------------------ tree commands */

/* tools/safeopen/tree.c */
static int cmd_find(int argc, char **argv)
{
	return safeopen_find(rootfd, resolve, argc, argv);
}

static int cmd_chown(int argc, char **argv)
{
	return safeopen_chown(rootfd, resolve, argc, argv);
}

static int cmd_chmod(int argc, char **argv)
{
	return safeopen_chmod(rootfd, resolve, argc, argv);
}

static int cmd_du(int argc, char **argv)
{
	return safeopen_du(rootfd, resolve, argc, argv);
}

/* ------------------------------------------------------------------ main */

static const struct command {
	const char *name;
	int (*run)(int argc, char **argv);
} commands[] = {
	{ "cat", cmd_cat },	{ "stat", cmd_stat }, { "ls", cmd_ls },	{ "resolve", cmd_resolve },
	{ "mkdir", cmd_mkdir }, { "put", cmd_put },   { "rm", cmd_rm },
	{ "extract", cmd_extract },
	{ "sweep", cmd_sweep },
	{ "find", cmd_find },	{ "chown", cmd_chown }, { "chmod", cmd_chmod },
	{ "du", cmd_du },
};

int main(int argc, char **argv)
{
	enum {
		OPT_IN_ROOT = 256,
		OPT_BENEATH,
		OPT_NO_SYMLINKS,
		OPT_OWNER_MATCH,
		OPT_NO_XDEV,
		OPT_NO_MAGIC,
		OPT_WALKER,
	};
	static const struct option opts[] = {
		{ "in-root", no_argument, NULL, OPT_IN_ROOT },
		{ "beneath", no_argument, NULL, OPT_BENEATH },
		{ "no-symlinks", no_argument, NULL, OPT_NO_SYMLINKS },
		{ "symlinks-owner-match", no_argument, NULL, OPT_OWNER_MATCH },
		{ "no-xdev", no_argument, NULL, OPT_NO_XDEV },
		{ "no-magiclinks", no_argument, NULL, OPT_NO_MAGIC },
		{ "walker", no_argument, NULL, OPT_WALKER },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	uint64_t extra = 0;
	int c;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+hV", opts, NULL)) != -1) {
		switch (c) {
		case OPT_IN_ROOT:
			resolve = SAFE_RESOLVE_IN_ROOT;
			break;
		case OPT_BENEATH:
			resolve = SAFE_RESOLVE_BENEATH;
			break;
		case OPT_NO_SYMLINKS:
			extra |= SAFE_RESOLVE_NO_SYMLINKS;
			break;
		case OPT_OWNER_MATCH:
			extra |= SAFE_RESOLVE_SYMLINKS_OWNER_MATCH;
			break;
		case OPT_NO_XDEV:
			extra |= SAFE_RESOLVE_NO_XDEV;
			break;
		case OPT_NO_MAGIC:
			extra |= SAFE_RESOLVE_NO_MAGICLINKS;
			break;
		case OPT_WALKER:
			extra |= SAFE_RESOLVE_USERSPACE;
			break;
		case 'h':
			fputs(usage_text, stdout);
			return EXIT_OK;
		case 'V':
			printf("safeopen (libsafeopen) %s\n", safe_version());
			return EXIT_OK;
		default:
			if (optopt)
				usage_error("invalid option -- '%c'", optopt);
			usage_error("unrecognized option '%s'", argv[optind - 1]);
		}
	}
	resolve |= extra;
	/* cp takes two roots: "safeopen cp -a SRCROOT SRC DSTROOT DST" (a ROOT
	 * named "cp" is written ./cp). */
	if (optind < argc && !strcmp(argv[optind], "cp")) {
		int ret = safeopen_cp(argc - optind, argv + optind, resolve);
		if (fflush(stdout) != 0 || ferror(stdout))
			return fail("write error", errno ? errno : EIO);
		return ret;
	}
	if (optind >= argc)
		usage_error("missing ROOT");
	if (optind + 1 >= argc)
		usage_error("missing COMMAND after ROOT");
	const char *root = argv[optind];
	const char *name = argv[optind + 1];
	const struct command *cmd = NULL;
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (!strcmp(name, commands[i].name))
			cmd = &commands[i];
	if (!cmd && name[0] == '-')
		usage_error("unknown command '%s' (options go before ROOT)", name);
	if (!cmd)
		usage_error("unknown command '%s'", name);

	/* ROOT is trusted: open it normally, following links. */
	rootfd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (rootfd < 0)
		return fail(root, errno);
	int ret = cmd->run(argc - optind - 1, argv + optind + 1);
	close(rootfd);
	if (fflush(stdout) != 0 || ferror(stdout))
		return fail("write error", errno ? errno : EIO);
	return ret;
}
