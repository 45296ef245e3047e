/* SPDX-License-Identifier: MIT */
/*
 * safeopen DEST extract: unpack an untrusted archive beneath DEST.
 *
 * libarchive reads the archive (tar in all its dialects, cpio, zip, ...,
 * compressed or not); every entry is created beneath DEST by libsafeopen,
 * never by a path syscall on a name that came from the archive. That removes
 * "tar slip" / "zip slip" by construction instead of by string checks:
 *
 *  - the parent directory of each entry and its last name come from
 *    safe_open_parent_beneath(), which resolves the parent beneath DEST
 *    (absolute names, "..", and symlinks that leave DEST fail with EXDEV; a
 *    directory swapped for a symlink by a concurrent process is seen as that
 *    symlink); missing directories are created by the mkdir -p operation;
 *    the parent is held for the following entries of the same directory
 *    (parent_of() says why that is safe and when it is resolved again);
 *  - the entry itself is created in that parent under its plain last name,
 *    never following it: a new regular file with O_CREAT|O_EXCL (mode 0600
 *    until it is whole, removed if it cannot be completed), a file over an
 *    existing name with the tmpfile API (replaced atomically, with its
 *    xattrs), a symlink stored as it is (its body is data), a hard link whose
 *    target is resolved beneath DEST, a FIFO or (with --devices) a device
 *    node; what replaces or removes an existing name goes through the
 *    library's operations;
 *  - directory modes and times are applied at the end, deepest first, by
 *    resolving the names again (later entries change a directory's mtime,
 *    and a read-only directory would block its own contents).
 *
 * The defaults are tar's: an existing name is replaced (-k refuses it,
 * --skip-old-files leaves it), root restores owners and exact modes, other
 * users get the umask and no set-ID bits. A damaged archive yields every
 * complete entry before the damage (compressed files are decompressed by the
 * usual program in a child, see decomp_start()).
 *
 * A refused entry is reported with its name and the errno, the others are
 * extracted, and the exit status is 1 (--strict stops at the first).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <langinfo.h>
#include <limits.h>
#include <locale.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "extract.h"

static const char extract_usage[] =
	"Usage: safeopen [OPTIONS] DEST extract [EXTRACT-OPTIONS] [ARCHIVE|-]\n"
	"Unpack an untrusted archive beneath the directory DEST: tar (ustar, pax,\n"
	"GNU), cpio, zip and whatever else libarchive reads, compressed or not.\n"
	"Standard input when ARCHIVE is '-' or absent.\n"
	"\n"
	"Every entry is created beneath DEST by libsafeopen. An entry whose name\n"
	"leads outside DEST (an absolute name, \"..\", a path through a symbolic link\n"
	"that leads outside, from the archive or already in DEST, even one swapped\n"
	"in during the extraction), or a hard link to a file outside, is refused\n"
	"with a message naming it; the others are extracted. With the global option\n"
	"--in-root, absolute names and links start at DEST instead.\n"
	"\n"
	"A symbolic link is stored as it is, also one that points outside DEST, as\n"
	"tar and bsdtar store it: its body is data, and nothing is ever written\n"
	"through it to outside (Python's 'data' filter refuses such links instead;\n"
	"a program that later follows links in DEST should open with libsafeopen).\n"
	"Names are read in the user's locale (the C locale reads UTF-8).\n"
	"\n"
	"Options:\n"
	"  -v, --verbose           print the name of each entry as it is extracted\n"
	"      --strict            stop at the first entry that is refused or fails\n"
	"      --atomic            every file appears whole with its xattrs, even if\n"
	"                          the extraction is killed (default: new files are\n"
	"                          written in place, mode 0600 until whole, as tar)\n"
	"      --overwrite         replace existing files, symbolic links and special\n"
	"                          files, each atomically (the default)\n"
	"  -k, --keep-old-files    refuse an entry whose name exists (EEXIST, exit 1)\n"
	"      --skip-old-files    leave an existing name alone, silently\n"
	"      --same-owner        restore the numeric owner and group (default for\n"
	"                          root; other users cannot give files away)\n"
	"      --no-same-owner     files belong to the user who extracts; root then\n"
	"                          drops the set-ID bits of files (with a warning)\n"
	"  -p, --same-permissions  exact modes with set-ID and sticky bits, ignoring\n"
	"                          the umask (default for root)\n"
	"      --no-same-permissions\n"
	"                          apply the umask, drop set-ID and sticky bits\n"
	"                          (default for other users; a warning counts the\n"
	"                          entries that lost set-ID bits)\n"
	"      --devices           create device nodes (needs root; default: refuse)\n"
	"      --no-xattrs         do not restore extended attributes\n"
	"  -h, --help              show this help and exit\n"
	"\n"
	"Exit status (bsdtar's): 0 everything extracted, 1 an entry was refused or\n"
	"failed, libarchive warned about one, or the archive is damaged (every\n"
	"complete entry before the damage is extracted, the damaged one is not),\n"
	"2 usage error. Data after the end of a compressed stream is a warning.\n";

#ifndef HAVE_LIBARCHIVE

int safeopen_extract(int rootfd, uint64_t resolve, int argc, char **argv)
{
	(void)rootfd;
	(void)resolve;
	for (int i = 1; i < argc; i++)
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			fputs(extract_usage, stdout);
			puts("\nThis safeopen was built without libarchive: extract is not available.");
			return 0;
		}
	fputs("safeopen: extract: not built: this safeopen was configured without libarchive\n"
	      "(install libarchive-dev, then run configure --with-libarchive)\n",
	      stderr);
	return 1;
}

#else /* HAVE_LIBARCHIVE */

#include <signal.h>
#include <spawn.h>
#include <sys/random.h>
#include <sys/wait.h>
#include <sys/xattr.h>

#include <safeopen.h>

#include "la.h"

enum { EXIT_OK = 0, EXIT_FAILED = 1, EXIT_USAGE = 2 };

/* One archive entry as extract uses it (from_libarchive()); the strings are
 * libarchive's, valid until its next header. */
struct xentry {
	const char *path;     /* the name as stored (NULL: none) */
	const char *hardlink; /* a hard link's target, else NULL */
	const char *symlink;  /* a symbolic link's body, else NULL */
	mode_t type;          /* S_IFREG, S_IFDIR, ...; what a hard link stores (often 0) */
	mode_t perm;          /* the mode without the type bits */
	int64_t uid, gid;
	int64_t size;
	bool size_set;
	struct timespec mtime, atime;
	bool mtime_set, atime_set;
	dev_t rdev;
	bool warned;          /* libarchive read it with a warning */
	bool link_lost;       /* ... that its link target cannot be read */
	struct archive_entry *ae; /* libarchive's entry (its xattrs) */
};

/* What an entry does when its name exists (tar's three answers). A directory
 * entry always keeps an existing directory; nothing ever replaces one. */
enum old_files {
	OLD_REPLACE, /* --overwrite, the default (as tar and bsdtar): replaced atomically */
	OLD_KEEP,    /* -k, --keep-old-files: refused with EEXIST, exit 1 */
	OLD_SKIP,    /* --skip-old-files: left as it is, silently */
};

/* A directory whose mode, owner and times are applied at the end. */
struct dirmeta {
	char *path; /* normalized name, resolved again beneath DEST */
	size_t seq; /* position in the archive: the last duplicate wins */
	mode_t mode;
	uid_t uid;
	gid_t gid;
	struct timespec times[2];
};

/* A regular file this extraction created, by identity: only these may
 * receive the data of a later hard-link entry (cpio stores the data of a
 * multiply-linked file with one of its links, a pax hard link may carry
 * data). A set, open addressing on the inode number; ino 0 marks a free
 * slot (no file of a Linux filesystem has it). */
struct fileid {
	dev_t dev;
	ino_t ino;
};

struct xstate {
	int rootfd;
	uint64_t resolve;
	bool verbose, strict, same_owner, same_perms, devices, xattrs, atomic;
	enum old_files old;
	bool root;
	mode_t umask;
	struct archive *a;   /* the reader (la.h) */
	struct xentry xe;    /* the current entry */
	const char *file;    /* the archive's name, or "-" */
	struct dirmeta *dirs;
	size_t ndirs, capdirs;
	struct fileid *files;
	size_t nfiles, capfiles;
	struct safe_xattr *xa;
	size_t capxa;
	unsigned long bad;  /* entries refused or failed */
	unsigned long seq;  /* entries seen */
	unsigned long setid_dropped; /* entries whose set-ID bits were not restored */
	bool dropped;       /* ... this one (counted once per entry) */
	bool replaced;      /* this entry replaced or removed a name that existed */
	bool fatal;         /* the archive cannot be read further */
	int pfd;            /* the held directory (parent_of()), or -1 */
	size_t pkeylen;     /* the names of its entries start with pkey[0..pkeylen) */
	char pkey[PATH_MAX];
	char name[PATH_MAX]; /* the last component, as safe_open_parent_beneath() gave it */
};

/* ------------------------------------------------------------------ messages */

/* "EXDEV" for EXDEV: the C library's name, or NULL where it has none. */
static const char *errno_name(int err)
{
#ifdef HAVE_STRERRORNAME_NP
	return strerrorname_np(err);
#else
	(void)err;
	return NULL;
#endif
}

static const char *reason(const struct xstate *st, int err)
{
	switch (err) {
	case EXDEV:
		return "leads outside the destination directory";
	case ELOOP:
		return "too many symbolic links, or a forbidden one";
	case EEXIST:
		return st->old == OLD_KEEP ? "already exists (--keep-old-files)"
					   : "exists and cannot be replaced by this kind of entry";
	case EAGAIN:
		return "the destination kept changing during resolution";
	default:
		return strerror(err);
	}
}

/* An archive's names are hostile: print them with every byte that is not
 * plain printable ASCII (and the backslash) escaped as \ooo. */
static void put_name(FILE *f, const char *s)
{
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (*p < 0x20 || *p >= 0x7f || *p == '\\')
			fprintf(f, "\\%03o", *p);
		else
			putc(*p, f);
	}
}

/* "safeopen: extract: NAME: WHAT: REASON (ENAME)"; counts a bad entry. */
static void report(struct xstate *st, const char *name, const char *what, int err)
{
	const char *en = errno_name(err);
	fputs("safeopen: extract: ", stderr);
	put_name(stderr, name);
	if (en)
		fprintf(stderr, ": %s: %s (%s)\n", what, reason(st, err), en);
	else
		fprintf(stderr, ": %s: %s (errno %d)\n", what, reason(st, err), err);
	st->bad++;
}

static void archive_problem(struct xstate *st, const char *name, int fatal)
{
	const char *msg = la.archive_error_string(st->a);
	fputs("safeopen: extract: ", stderr);
	if (name) {
		put_name(stderr, name);
		fputs(": ", stderr);
	}
	fprintf(stderr, "%s%s\n", fatal ? "archive error: " : "", msg ? msg : "unknown error");
	st->bad++; /* a warning too: bsdtar's exit status is then 1 */
	if (fatal)
		st->fatal = true;
}

/* ------------------------------------------------------------------ names */

/* Copy an archive member name into out[size]: empty and "." components and
 * trailing slashes dropped ("./a//b/" -> "a/b"), a leading '/' and ".."
 * components kept, since whether they stay beneath DEST is the library's
 * decision, not a string's. "" and "/"-free "." become ".". */
static bool normalize(const char *in, char *out, size_t size)
{
	size_t o = 0;
	if (size < 2)
		return false;
	if (*in == '/')
		out[o++] = '/';
	const char *p = in;
	while (*p) {
		while (*p == '/')
			p++;
		if (!*p)
			break;
		const char *end = strchrnul(p, '/');
		size_t len = (size_t)(end - p);
		if (!(len == 1 && *p == '.')) {
			bool sep = o && out[o - 1] != '/';
			if (o + sep + len + 1 > size)
				return false;
			if (sep)
				out[o++] = '/';
			memcpy(out + o, p, len);
			o += len;
		}
		p = end;
	}
	if (o == 0)
		out[o++] = '.';
	out[o] = '\0';
	return true;
}

/* A normalized path that names DEST itself ("." or, with --in-root, "/"). */
static bool names_root(const char *path)
{
	return !strcmp(path, ".") || !strcmp(path, "/");
}

/* A hidden name for the create-then-rename that replaces a symlink, a hard
 * link or a special file: the library's own pattern (".safeopen-" and 16
 * characters of [A-Za-z0-9], safe_tmpfile_sweep_beneath(3)), so that what a
 * killed extraction leaves is removed by "safeopen DEST sweep". */
static int tmp_name(char *buf, size_t size)
{
	static const char set[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
	unsigned char r[16];
	if (size < sizeof(".safeopen-") + sizeof(r) ||
	    getrandom(r, sizeof(r), 0) != (ssize_t)sizeof(r))
		return -1;
	size_t o = (size_t)snprintf(buf, size, ".safeopen-");
	for (size_t i = 0; i < sizeof(r); i++)
		buf[o++] = set[r[i] % (sizeof(set) - 1)];
	buf[o] = '\0';
	return 0;
}

/* ------------------------------------------------------------------ helpers */

static bool pwrite_all(int fd, const char *buf, size_t len, off_t off)
{
	while (len) {
		ssize_t n = pwrite(fd, buf, len, off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return false;
		buf += n;
		len -= (size_t)n;
		off += n;
	}
	return true;
}

static void entry_times(const struct xentry *e, struct timespec ts[2])
{
	ts[0] = (struct timespec){ .tv_nsec = UTIME_OMIT };
	ts[1] = (struct timespec){ .tv_nsec = UTIME_OMIT };
	if (e->atime_set)
		ts[0] = e->atime;
	if (e->mtime_set)
		ts[1] = e->mtime;
}

/* The permission bits an entry gets, as GNU tar: without --same-permissions
 * (the default for users other than root) the umask applies and the
 * set-user-ID, set-group-ID and sticky bits are dropped. One difference, for
 * safety: root keeps the set-ID bits of a non-directory only when its owner
 * is restored (--same-owner, root's default), never on a file that root now
 * owns. Dropped set-ID bits are counted (one warning at the end). */
static mode_t entry_perm(struct xstate *st, const struct xentry *e, bool dir)
{
	mode_t want = e->perm & 07777;
	mode_t m = want;
	if (!st->same_perms)
		m &= 0777 & ~st->umask;
	if (!dir && st->root && !st->same_owner)
		m &= ~(mode_t)(S_ISUID | S_ISGID);
	if (want & ~m & (S_ISUID | S_ISGID))
		st->dropped = true;
	return m;
}

static bool remember_dir(struct xstate *st, const char *path, const struct xentry *e)
{
	if (st->ndirs == st->capdirs) {
		size_t cap = st->capdirs ? 2 * st->capdirs : 64;
		struct dirmeta *d = realloc(st->dirs, cap * sizeof(*d));
		if (!d)
			return false;
		st->dirs = d;
		st->capdirs = cap;
	}
	struct dirmeta *d = &st->dirs[st->ndirs];
	if (!(d->path = strdup(path)))
		return false;
	d->seq = st->seq;
	d->mode = entry_perm(st, e, true);
	d->uid = (uid_t)e->uid;
	d->gid = (gid_t)e->gid;
	entry_times(e, d->times);
	st->ndirs++;
	return true;
}

/* The slot of (dev, ino) in the set of capacity cap (a power of two): its
 * own, or the free one where it would go. */
static struct fileid *file_slot(struct fileid *set, size_t cap, dev_t dev, ino_t ino)
{
	size_t i = (size_t)((ino ^ dev) * 0x9e3779b97f4a7c15ull) & (cap - 1);
	while (set[i].ino && !(set[i].ino == ino && set[i].dev == dev))
		i = (i + 1) & (cap - 1);
	return &set[i];
}

/* Every regular file this extraction creates is remembered by its
 * identity sb (a later hard link with data may name it). Memory exhaustion
 * forgets it: the data of such a link is then refused, which is safe. */
static void remember_id(struct xstate *st, const struct stat *sbp)
{
	struct stat sb = *sbp;
	if (sb.st_ino == 0)
		return;
	if (2 * (st->nfiles + 1) > st->capfiles) {
		size_t cap = st->capfiles ? 2 * st->capfiles : 256;
		struct fileid *set = calloc(cap, sizeof(*set));
		if (!set)
			return;
		for (size_t i = 0; i < st->capfiles; i++)
			if (st->files[i].ino)
				*file_slot(set, cap, st->files[i].dev, st->files[i].ino) = st->files[i];
		free(st->files);
		st->files = set;
		st->capfiles = cap;
	}
	struct fileid *f = file_slot(st->files, st->capfiles, sb.st_dev, sb.st_ino);
	if (!f->ino)
		st->nfiles++;
	*f = (struct fileid){ sb.st_dev, sb.st_ino };
}

static void remember_file(struct xstate *st, int fd)
{
	struct stat sb;
	if (fstat(fd, &sb) == 0)
		remember_id(st, &sb);
}

static bool created_here(const struct xstate *st, const struct stat *sb)
{
	return st->capfiles && sb->st_ino &&
	       file_slot(st->files, st->capfiles, sb->st_dev, sb->st_ino)->ino;
}

static bool is_acl(const char *name)
{
	return !strncmp(name, "system.posix_acl_", 17);
}

/* The entry's extended attributes as an array (owned by st, valid until
 * the next entry): the others first, then the POSIX ACLs, which define
 * permission bits themselves and so come after the mode (*nplain is the
 * number of the others). */
static size_t entry_xattrs(struct xstate *st, const struct xentry *e, size_t *nplain)
{
	*nplain = 0;
	if (!st->xattrs)
		return 0;
	int count = e->ae ? la.archive_entry_xattr_reset(e->ae) : 0;
	if (count <= 0)
		return 0;
	if ((size_t)count > st->capxa) {
		struct safe_xattr *x = realloc(st->xa, (size_t)count * sizeof(*x));
		if (!x)
			return 0;
		st->xa = x;
		st->capxa = (size_t)count;
	}
	size_t n = 0;
	const char *name;
	const void *value;
	size_t size;
	while (n < (size_t)count &&
	       la.archive_entry_xattr_next(e->ae, &name, &value, &size) == ARCHIVE_OK)
		st->xa[n++] = (struct safe_xattr){ name, value, size };
	size_t p = 0; /* stable partition: each ACL moves behind the others */
	for (size_t i = 0; i < n; i++)
		if (!is_acl(st->xa[i].name)) {
			struct safe_xattr x = st->xa[i];
			memmove(&st->xa[p + 1], &st->xa[p], (i - p) * sizeof(x));
			st->xa[p++] = x;
		}
	*nplain = p;
	return n;
}

/*
 * Extended attributes, one rule for every kind of object: an attribute that
 * this user or this filesystem cannot take (EPERM, EOPNOTSUPP, ...: see
 * xattr_errno()) is reported by name and left out, and the others are set;
 * any other failure fails the entry. Each way of setting them is a `try`
 * over the array that answers as safe_tmpfile_link() and
 * safe_tmpfile_failed_xattr() do: success, or -1 with errno and the index
 * of the attribute refused (-1 if the failure was not an attribute's).
 * set_xattrs() reports that one, removes it and tries again with the rest.
 */
struct xattr_target {
	int fd;                  /* an open file (try_fd) */
	int pfd;                 /* or a name in a directory (try_name) */
	const char *name;
	struct safe_tmpfile *tmp; /* or a file to publish (try_publish) */
	uint64_t flags;          /* try_publish: SAFE_TMPFILE_REPLACE or 0 */
	size_t from;             /* try_fd, try_name: the attributes before are set */
};
typedef int (*xattr_try)(struct xstate *st, struct xattr_target *t, const struct safe_xattr *xa,
			 size_t n, ssize_t *failed);

static bool xattr_errno(int err)
{
	return err == EPERM || err == EOPNOTSUPP || err == E2BIG || err == ENOSPC ||
	       err == EINVAL || err == EACCES || err == ERANGE || err == EDQUOT;
}

static int set_xattrs(struct xstate *st, const char *path, struct safe_xattr *xa, size_t n,
		      xattr_try try, struct xattr_target *t)
{
	for (;;) {
		ssize_t bad = -1;
		int r = try(st, t, xa, n, &bad);
		if (r >= 0 || bad < 0 || (size_t)bad >= n || !xattr_errno(errno))
			return r;
		int err = errno;
		char what[300];
		snprintf(what, sizeof(what), "extended attribute %s not restored", xa[bad].name);
		report(st, path, what, err);
		memmove(&xa[bad], &xa[bad + 1], (n - (size_t)bad - 1) * sizeof(*xa));
		n--;
	}
}

/* On a file this extraction has open (written in place). */
static int try_fd(struct xstate *st, struct xattr_target *t, const struct safe_xattr *xa, size_t n,
		  ssize_t *failed)
{
	(void)st;
	for (; t->from < n; t->from++)
		if (fsetxattr(t->fd, xa[t->from].name, xa[t->from].value, xa[t->from].size, 0) < 0) {
			*failed = (ssize_t)t->from;
			return -1;
		}
	return 0;
}

/* On a directory by its name in its parent, through the library. */
static int try_name(struct xstate *st, struct xattr_target *t, const struct safe_xattr *xa,
		    size_t n, ssize_t *failed)
{
	for (; t->from < n; t->from++)
		if (safe_setxattr_beneath(t->pfd, t->name, xa[t->from].name, xa[t->from].value,
					  xa[t->from].size, 0, st->resolve) < 0) {
			*failed = (ssize_t)t->from;
			return -1;
		}
	return 0;
}

/* Publishing a tmpfile: the library sets them (in its order, ACLs after the
 * mode) and says which one it could not set. Returns the published file's
 * descriptor. */
static int try_publish(struct xstate *st, struct xattr_target *t, const struct safe_xattr *xa,
		       size_t n, ssize_t *failed)
{
	(void)st;
	int fd = safe_tmpfile_link(t->tmp, xa, n, t->flags);
	if (fd < 0) {
		int err = errno;
		*failed = safe_tmpfile_failed_xattr(t->tmp);
		errno = err;
	}
	return fd;
}

/* ------------------------------------------------------------------ parents */

static void drop_parent(struct xstate *st)
{
	if (st->pfd >= 0)
		close(st->pfd);
	st->pfd = -1;
	st->pkeylen = 0;
}

/* Hold fd (taken) as the directory whose entries are named key[0..keylen)
 * followed by one component ("" for DEST's own entries, "a/b/" for those of
 * a/b). NO_KEY (or a key too long to keep) holds it for the current entry
 * only: no later name matches it. */
#define NO_KEY SIZE_MAX
static void hold_parent(struct xstate *st, const char *key, size_t keylen, int fd)
{
	drop_parent(st);
	st->pfd = fd;
	if (keylen >= sizeof(st->pkey)) {
		st->pkeylen = NO_KEY;
		return;
	}
	memcpy(st->pkey, key, keylen);
	st->pkey[keylen] = '\0';
	st->pkeylen = keylen;
}

/* One plain component: not empty, no '/', not "." or "..". */
static bool plain_name(const char *s)
{
	return *s && !strchr(s, '/') && strcmp(s, ".") != 0 && strcmp(s, "..") != 0;
}

/* The library resolves an entry's parent but creates none: when it is
 * missing, mkdir -p of the directory part of the path (all before its last
 * '/'), resolved beneath DEST by the library like every name. The one place
 * where extract cuts a name itself, and only to hand the library a
 * directory to create. */
static int make_parents(struct xstate *st, const char *path)
{
	const char *slash = strrchr(path, '/');
	if (!slash) {
		errno = ENOENT; /* DEST itself is the parent: it vanished */
		return -1;
	}
	char dir[PATH_MAX];
	size_t n = slash == path ? 1 : (size_t)(slash - path);
	memcpy(dir, path, n);
	dir[n] = '\0';
	int fd = safe_mkdir_all_beneath(st->rootfd, dir, 0777, st->resolve);
	if (fd < 0)
		return -1;
	close(fd);
	return 0;
}

/*
 * The directory the entry `path` (normalized) goes into, resolved beneath
 * DEST by the library with safe_open_parent_beneath() (missing directories
 * created, make_parents()), and its last component in *name, one plain name
 * that the callers create or change without following it (the guarantee of
 * safe_open_parent_beneath(3): such calls cannot leave the directory).
 * The directory is held for the entries that follow in it (an archive lists
 * a directory's files together: one resolution per directory instead of one
 * per entry): an entry is recognised as one of its names when its path is
 * the held key followed by one plain component. Returns a borrowed
 * descriptor, or -1 with errno (EINVAL: the path names DEST itself or ends
 * in "..").
 *
 * Safety: the held descriptor is a directory that was beneath DEST when the
 * library resolved it (or that this extraction created in such a directory),
 * and every entry is then created in it under one plain name without
 * following it, which cannot leave it. What holding it can miss is a later
 * change of what its path resolves to:
 *  - by this extraction: an entry that only creates a name cannot change how
 *    a path that already resolved resolves (each of its components existed),
 *    so only an entry that replaced or removed a name (st->replaced) could,
 *    and the held directory is dropped after such an entry (and after any
 *    failure): the next one resolves again, as without the cache;
 *  - by a concurrent process in DEST: a directory it swaps for a symlink is
 *    not followed (the descriptor is the directory, wherever it now is); it
 *    can move the held directory only where it may write itself, and it could
 *    move the files created there just as well. The swap-attack test of
 *    tests/tools/test-extract.sh runs this race.
 */
static int parent_of(struct xstate *st, const char *path, const char **name)
{
	size_t k = st->pkeylen;
	if (st->pfd >= 0 && k != NO_KEY && !strncmp(path, st->pkey, k) && plain_name(path + k)) {
		*name = path + k;
		return st->pfd;
	}
	int fd = safe_open_parent_beneath(st->rootfd, path, st->resolve, st->name, sizeof(st->name));
	if (fd < 0 && errno == ENOENT && make_parents(st, path) == 0)
		fd = safe_open_parent_beneath(st->rootfd, path, st->resolve, st->name,
					      sizeof(st->name));
	if (fd < 0)
		return -1;
	/* a normalized path ends in its last component: the key is the rest */
	size_t len = strlen(path), nlen = strlen(st->name);
	bool suffix = nlen <= len && !strcmp(path + len - nlen, st->name);
	hold_parent(st, path, suffix ? len - nlen : NO_KEY, fd);
	*name = st->name;
	return fd;
}

/* ------------------------------------------------------------------ entries */

/* Creation of one non-regular entry under a plain name in a directory from
 * parent_of(); `flags` is 0 (a new name: the plain *at() call, which never
 * follows it) or SAFE_REPLACE (symlinks and nodes: the library replaces an
 * existing name atomically). */
struct maker {
	int (*make)(struct xstate *st, const struct maker *mk, int pfd, const char *name,
		    uint64_t flags);
	const char *target;   /* symlink body, or hard link target (normalized) */
	mode_t mode;
	dev_t dev;
};

static int make_symlink(struct xstate *st, const struct maker *mk, int pfd, const char *name,
			uint64_t flags)
{
	if (!flags)
		return symlinkat(mk->target, pfd, name);
	return safe_symlinkat_beneath(mk->target, pfd, name, st->resolve | flags);
}

static int make_node(struct xstate *st, const struct maker *mk, int pfd, const char *name,
		     uint64_t flags)
{
	if (!flags)
		return mknodat(pfd, name, mk->mode, mk->dev);
	return safe_mknodat_beneath(pfd, name, mk->mode, mk->dev, st->resolve | flags);
}

/* The target is resolved beneath DEST (not followed if it is a symlink: the
 * link is to the symlink itself, as tar does). */
static int make_link(struct xstate *st, const struct maker *mk, int pfd, const char *name,
		     uint64_t flags)
{
	(void)flags; /* linkat(2) never replaces: create_replacing() renames */
	return safe_linkat_beneath(st->rootfd, mk->target, pfd, name, st->resolve);
}

/* Create the entry. If the name exists: --keep-old-files fails (EEXIST),
 * --skip-old-files returns 1 and leaves it, and the default replaces it so
 * that the name always shows either object (a directory is never replaced:
 * EISDIR): the library's SAFE_REPLACE for a symlink or a node, and for a
 * hard link the same create-under-a-hidden-name-then-rename done here.
 * Returns 0 created, 1 skipped, -1 failed (errno). */
static int create_replacing(struct xstate *st, const struct maker *mk, int pfd, const char *name)
{
	if (mk->make(st, mk, pfd, name, 0) == 0)
		return 0;
	if (errno != EEXIST || st->old == OLD_KEEP)
		return -1;
	if (st->old == OLD_SKIP)
		return 1;
	st->replaced = true;
	if (mk->make != make_link)
		return mk->make(st, mk, pfd, name, SAFE_REPLACE);
	char tmp[32];
	if (tmp_name(tmp, sizeof(tmp)) < 0 || mk->make(st, mk, pfd, tmp, 0) < 0)
		return -1;
	if (safe_renameat_beneath(pfd, tmp, pfd, name, st->resolve) < 0) {
		int err = errno;
		if (safe_unlinkat_beneath(pfd, tmp, st->resolve) < 0)
			report(st, tmp, "temporary name not removed", errno);
		errno = err;
		return -1;
	}
	/* rename(2) of two links to one inode does nothing and keeps both */
	if (safe_unlinkat_beneath(pfd, tmp, st->resolve) < 0 && errno != ENOENT)
		report(st, tmp, "temporary name not removed", errno);
	return 0;
}

/* Owner and times of a non-regular, non-directory entry, on the name itself
 * (never followed: AT_SYMLINK_NOFOLLOW; chmod has no such flag, so the mode
 * of a node goes through the library, which does not follow either). */
static void finish_special(struct xstate *st, const struct xentry *e, int pfd, const char *name,
			   const char *path, bool chmod_it)
{
	if (st->same_owner && fchownat(pfd, name, (uid_t)e->uid,
				       (gid_t)e->gid, AT_SYMLINK_NOFOLLOW) < 0)
		report(st, path, "owner not restored", errno);
	if (chmod_it && safe_fchmodat_beneath(pfd, name, entry_perm(st, e, false), st->resolve) < 0)
		report(st, path, "mode not restored", errno);
	struct timespec ts[2];
	entry_times(e, ts);
	if (utimensat(pfd, name, ts, AT_SYMLINK_NOFOLLOW) < 0)
		report(st, path, "times not restored", errno);
}

/* ------------------------------------------------------------------ reading */

/*
 * Names in any locale. As bsdtar, the user's locale (setlocale(LC_ALL, "")):
 * libarchive converts the names that an archive declares in a character set
 * (UTF-8 in pax headers and flagged zip entries, UTF-16 in rar, 7z, lha,
 * iso9660 Joliet, ...) into the locale's, and passes the bytes of the others
 * unchanged. The C (POSIX) locale's character set is ASCII, where every such
 * non-ASCII name would be lost ("Pathname cannot be converted"): there,
 * the character type is C.UTF-8's instead, as Python does (PEP 538); the
 * bytes of undeclared names still pass unchanged.
 */
static void names_locale(void)
{
	setlocale(LC_ALL, "");
	const char *cs = nl_langinfo(CODESET);
	if (!strcmp(cs, "ANSI_X3.4-1968") || !strcmp(cs, "ASCII"))
		if (!setlocale(LC_CTYPE, "C.UTF-8"))
			setlocale(LC_CTYPE, "C.utf8");
}

/* A name in this locale's form, else in UTF-8 (where the locale cannot
 * hold it, libarchive may still give it so), else NULL. */
#define ENTRY_NAME(ae, field) \
	(la.archive_entry_##field(ae) ?: la.archive_entry_##field##_utf8(ae))

/* libarchive's entry as extract's (its strings stay libarchive's). */
static void from_libarchive(struct xentry *x, struct archive_entry *ae)
{
	*x = (struct xentry){
		.path = ENTRY_NAME(ae, pathname),
		.hardlink = ENTRY_NAME(ae, hardlink),
		.symlink = ENTRY_NAME(ae, symlink),
		.type = la.archive_entry_filetype(ae),
		.perm = la.archive_entry_mode(ae) & ~(mode_t)AE_IFMT,
		.uid = la.archive_entry_uid(ae),
		.gid = la.archive_entry_gid(ae),
		.size = la.archive_entry_size(ae),
		.size_set = la.archive_entry_size_is_set(ae),
		.mtime = { la.archive_entry_mtime(ae), la.archive_entry_mtime_nsec(ae) },
		.atime = { la.archive_entry_atime(ae), la.archive_entry_atime_nsec(ae) },
		.mtime_set = la.archive_entry_mtime_is_set(ae),
		.atime_set = la.archive_entry_atime_is_set(ae),
		.rdev = la.archive_entry_rdev(ae),
		.ae = ae,
	};
}

/* The next entry into st->xe: ARCHIVE_OK, ARCHIVE_WARN (an entry, with a
 * message), or no entry (ARCHIVE_EOF, ARCHIVE_RETRY, ARCHIVE_FATAL). */
static int rd_next(struct xstate *st)
{
	struct archive_entry *ae;
	int r = la.archive_read_next_header(st->a, &ae);
	if (r == ARCHIVE_OK || r == ARCHIVE_WARN)
		from_libarchive(&st->xe, ae);
	/* a link target that cannot be converted is left unset, with a
	 * warning naming it ("Linkname ..."): the entry then looks like an
	 * empty regular file, which it is not */
	if (r == ARCHIVE_WARN) {
		const char *msg = la.archive_error_string(st->a);
		st->xe.warned = true;
		st->xe.link_lost = !st->xe.hardlink && !st->xe.symlink && msg &&
				   strcasestr(msg, "link");
	}
	return r;
}

/* Copy the entry's data into fd. Returns 0 when the file is whole, -1 (the
 * failure reported) otherwise. A tar entry whose last data byte arrived but
 * whose block padding was cut off reads as ARCHIVE_FATAL after the data: the
 * file is whole, so it is kept and the damage behind it reported (exit 1;
 * nothing after it can be read). */
static int copy_data(struct xstate *st, const struct xentry *e, int fd, const char *path,
		     const char *what)
{
	const void *buf;
	size_t len;
	la_int64_t off, end = 0;
	int r;
	while ((r = la.archive_read_data_block(st->a, &buf, &len, &off)) == ARCHIVE_OK) {
		if (len && !pwrite_all(fd, buf, len, (off_t)off)) {
			report(st, path, what, errno);
			return -1;
		}
		if (off + (la_int64_t)len > end)
			end = off + (la_int64_t)len;
	}
	bool sized = e->size_set;
	la_int64_t size = sized ? e->size : 0;
	if (r != ARCHIVE_EOF) {
		if (r == ARCHIVE_FATAL && sized && end >= size && end > 0) {
			const char *msg = la.archive_error_string(st->a);
			fputs("safeopen: extract: ", stderr);
			put_name(stderr, path);
			fprintf(stderr, ": extracted whole, but the archive is damaged after it: %s\n",
				msg ? msg : "unknown error");
			st->bad++;
			st->fatal = true;
			return 0;
		}
		archive_problem(st, path, r == ARCHIVE_FATAL);
		if (r != ARCHIVE_FATAL)
			report(st, path, what, EIO);
		return -1;
	}
	if (sized && size > end && ftruncate(fd, (off_t)size) < 0) { /* a trailing hole */
		report(st, path, what, errno);
		return -1;
	}
	return 0;
}

/* Owner, xattrs, mode and times of a regular file, through its descriptor,
 * in the order that keeps each: fchown(2) clears the set-ID bits and
 * security.capability, the file is mode 0600 until the mode is set (no one
 * else can open it before it is whole and has its xattrs), and the ACL
 * xattrs, which define permission bits themselves, come after the mode.
 * Returns 0, or -1 (reported) when an xattr failed for a reason other than
 * the attribute itself (set_xattrs()): the file is then not complete. */
static int finish_file(struct xstate *st, const struct xentry *e, int fd, const char *path,
			mode_t perm, const struct stat *made)
{
	/* a file just made by this process (made: its fstat() then, mode
	 * 0600, no set-ID bits nor xattrs yet) that already has the owner
	 * and group is not chowned: the call would change nothing */
	bool owned = made && made->st_uid == (uid_t)e->uid && made->st_gid == (gid_t)e->gid;
	if (st->same_owner && !owned &&
	    fchown(fd, (uid_t)e->uid, (gid_t)e->gid) < 0) {
		report(st, path, "owner not restored", errno);
		if (perm & (S_ISUID | S_ISGID)) { /* never set-ID for the wrong owner */
			perm &= ~(mode_t)(S_ISUID | S_ISGID);
			st->dropped = true;
		}
	}
	size_t nplain, nxa = entry_xattrs(st, e, &nplain);
	struct xattr_target plain = { .fd = fd }, acl = { .fd = fd };
	if (nplain && set_xattrs(st, path, st->xa, nplain, try_fd, &plain) < 0) {
		report(st, path, "not extracted", errno);
		return -1;
	}
	if (fchmod(fd, perm) < 0)
		report(st, path, "mode not restored", errno);
	if (nxa > nplain && set_xattrs(st, path, st->xa + nplain, nxa - nplain, try_fd, &acl) < 0) {
		report(st, path, "not extracted", errno);
		return -1;
	}
	struct timespec ts[2];
	entry_times(e, ts);
	if (futimens(fd, ts) < 0)
		report(st, path, "times not restored", errno);
	return 0;
}

/* Remove the name of a file this entry created and could not complete, if
 * the name still leads to it (so that no partial file is left). */
static void remove_partial(struct xstate *st, int pfd, const char *name, int fd, const char *path)
{
	struct stat mine, now;
	if (fstat(fd, &mine) < 0 || safe_fstatat_beneath(pfd, name, &now, st->resolve) < 0 ||
	    mine.st_dev != now.st_dev || mine.st_ino != now.st_ino)
		return;
	if (safe_unlinkat_beneath(pfd, name, st->resolve) < 0)
		report(st, path, "partial file not removed", errno);
}

/* A regular file written unpublished with the tmpfile API: it appears under
 * its name whole, with its xattrs, and nothing is left if it cannot be
 * completed or the process is killed. Used over an existing name (replace:
 * renamed over it, so that the name shows the whole old or the whole new
 * file) and, with --atomic, for every file. */
static int extract_file_atomic(struct xstate *st, const struct xentry *e, int pfd,
			       const char *name, const char *path, bool replace)
{
	mode_t perm = entry_perm(st, e, false);
	struct safe_tmpfile *tmp = NULL;
	int ret = -1;
	if (safe_tmpfile_open(pfd, name, perm & 0777, st->resolve, &tmp) < 0) {
		report(st, path, "not extracted", errno);
		return -1;
	}
	int fd = safe_tmpfile_fd(tmp); /* lent by the handle: never closed here */
	if (copy_data(st, e, fd, path, "not extracted") < 0)
		goto discard;
	if (st->same_owner &&
	    fchown(fd, (uid_t)e->uid, (gid_t)e->gid) < 0) {
		report(st, path, "owner not restored", errno);
		if (perm & (S_ISUID | S_ISGID)) {
			perm &= ~(mode_t)(S_ISUID | S_ISGID);
			st->dropped = true;
		}
	}
	size_t nplain, nxa = entry_xattrs(st, e, &nplain);
	if (replace)
		st->replaced = true;
	struct xattr_target pub = { .tmp = tmp, .flags = replace ? SAFE_TMPFILE_REPLACE : 0 };
	int out = set_xattrs(st, path, st->xa, nxa, try_publish, &pub);
	if (out < 0) {
		if (errno == EEXIST && st->old == OLD_SKIP) { /* created meanwhile */
			ret = 0;
			goto discard;
		}
		report(st, path, "not extracted", errno);
		goto discard;
	}
	/* published: the mode without the umask, the set-ID bits, the times */
	if (fchmod(out, perm) < 0)
		report(st, path, "mode not restored", errno);
	struct timespec ts[2];
	entry_times(e, ts);
	if (futimens(out, ts) < 0)
		report(st, path, "times not restored", errno);
	remember_file(st, out);
	close(out);
	return 0;
discard:
	safe_tmpfile_discard(tmp);
	return ret;
}

/*
 * A regular file under a new name: created by the library in the held
 * parent with O_CREAT|O_EXCL|O_NOFOLLOW (a name that exists, a symlink
 * included, is EEXIST, never followed), mode 0600 while it is written, then
 * owner, xattrs, mode and times through the descriptor: the system calls of
 * GNU tar, no more. The name exists while the data is written (as with tar);
 * a file that cannot be completed is removed. An existing name goes to
 * extract_file_atomic() (default), is refused (-k) or skipped.
 */
static int extract_file(struct xstate *st, const struct xentry *e, int pfd, const char *name,
			const char *path)
{
	if (st->atomic) {
		struct stat sb;
		bool exists = safe_fstatat_beneath(pfd, name, &sb, st->resolve) == 0;
		if (!exists && errno != ENOENT) {
			report(st, path, "not extracted", errno);
			return -1;
		}
		if (exists && st->old == OLD_SKIP)
			return 0;
		if (exists && st->old == OLD_KEEP) {
			report(st, path, "not extracted", EEXIST);
			return -1;
		}
		return extract_file_atomic(st, e, pfd, name, path, exists);
	}
	struct safe_open_how how = {
		.flags = O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC,
		.mode = 0600,
		.resolve = st->resolve,
	};
	int fd = safe_openat2(pfd, name, &how, sizeof(how));
	if (fd < 0) {
		if (errno == EEXIST && st->old == OLD_REPLACE)
			return extract_file_atomic(st, e, pfd, name, path, true);
		if (errno == EEXIST && st->old == OLD_SKIP)
			return 0;
		report(st, path, "not extracted", errno);
		return -1;
	}
	mode_t perm = entry_perm(st, e, false);
	/* its identity, for remember_id() and finish_file() (one fstat()
	 * that saves the fchown() of a file already of the right owner) */
	struct stat made;
	bool known = fstat(fd, &made) == 0;
	if (copy_data(st, e, fd, path, "not extracted") < 0) {
		remove_partial(st, pfd, name, fd, path);
		close(fd);
		return -1;
	}
	if (finish_file(st, e, fd, path, perm, known ? &made : NULL) < 0) {
		remove_partial(st, pfd, name, fd, path);
		close(fd);
		return -1;
	}
	if (known)
		remember_id(st, &made);
	close(fd);
	return 0;
}

/* A hard link entry that carries data (cpio keeps the data of a linked file
 * with one of its links, the last): the data goes into the linked inode,
 * which must be a regular file this extraction created itself (a file that
 * was already in DEST might be linked to anything). Its owner, xattrs, mode
 * and times are then this entry's: writing moved the mtime. */
static int hardlink_data(struct xstate *st, const struct xentry *e, int pfd, const char *name,
			 const char *path)
{
	struct safe_open_how how = { .flags = O_WRONLY | O_NOFOLLOW | O_NOCTTY | O_NONBLOCK | O_CLOEXEC,
				     .resolve = st->resolve };
	int fd = safe_openat2(pfd, name, &how, sizeof(how));
	if (fd < 0) {
		report(st, path, "data of the hard link not written", errno);
		return -1;
	}
	struct stat sb;
	if (fstat(fd, &sb) < 0 || !S_ISREG(sb.st_mode) || !created_here(st, &sb)) {
		close(fd);
		report(st, path, "data of the hard link not written (the file was not created by "
				 "this extraction)", EPERM);
		return -1;
	}
	if (ftruncate(fd, 0) < 0) {
		report(st, path, "data of the hard link not written", errno);
		close(fd);
		return -1;
	}
	int ret = copy_data(st, e, fd, path, "data of the hard link not written");
	if (ret == 0)
		ret = finish_file(st, e, fd, path, entry_perm(st, e, false), NULL);
	close(fd);
	return ret;
}

/* A directory entry whose name is DEST itself ("." or, with --in-root, "/"):
 * it is not created, only its xattrs and (at the end) its metadata. */
static int extract_top_dir(struct xstate *st, const struct xentry *e, const char *path)
{
	struct stat sb;
	if (safe_fstatat_beneath(st->rootfd, path, &sb, st->resolve) < 0) {
		report(st, path, "not extracted", errno);
		return -1;
	}
	if (!S_ISDIR(sb.st_mode)) {
		report(st, path, "not extracted", ENOTDIR);
		return -1;
	}
	size_t nplain, nxa = entry_xattrs(st, e, &nplain);
	struct xattr_target t = { .pfd = st->rootfd, .name = path };
	if (nxa && set_xattrs(st, path, st->xa, nxa, try_name, &t) < 0)
		report(st, path, "extended attributes not restored", errno);
	if (!remember_dir(st, path, e)) {
		report(st, path, "mode and times not restored", ENOMEM);
		return -1;
	}
	return 0;
}

/* A directory: created in its held parent (owner-writable until the end),
 * or an existing directory kept; anything else in its place is never
 * followed: replaced (default), refused (-k) or left (--skip-old-files).
 * The new directory becomes the held parent of the entries that follow. */
static int extract_dir(struct xstate *st, const struct xentry *e, const char *path)
{
	if (names_root(path))
		return extract_top_dir(st, e, path);
	const char *name;
	int pfd = parent_of(st, path, &name);
	if (pfd < 0) {
		report(st, path, "not extracted", errno);
		return -1;
	}
	mode_t perm = entry_perm(st, e, true);
	if (mkdirat(pfd, name, (perm | S_IRWXU) & 0777) < 0) {
		struct stat sb;
		if (errno != EEXIST || safe_fstatat_beneath(pfd, name, &sb, st->resolve) < 0) {
			report(st, path, "not extracted", errno);
			return -1;
		}
		if (!S_ISDIR(sb.st_mode)) {
			if (st->old == OLD_SKIP)
				return 0;
			if (st->old == OLD_KEEP) {
				report(st, path, "not extracted", EEXIST);
				return -1;
			}
			st->replaced = true;
			if (safe_unlinkat_beneath(pfd, name, st->resolve) < 0 ||
			    safe_mkdirat_beneath(pfd, name, (perm | S_IRWXU) & 0777, st->resolve) < 0) {
				report(st, path, "not extracted", errno);
				return -1;
			}
		}
	}
	size_t nplain, nxa = entry_xattrs(st, e, &nplain);
	struct xattr_target t = { .pfd = pfd, .name = name };
	if (nxa && set_xattrs(st, path, st->xa, nxa, try_name, &t) < 0)
		report(st, path, "extended attributes not restored", errno);
	if (!remember_dir(st, path, e)) {
		report(st, path, "mode and times not restored", ENOMEM);
		return -1;
	}
	struct safe_open_how how = { .flags = O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC,
				     .resolve = st->resolve };
	int dfd = safe_openat2(pfd, name, &how, sizeof(how));
	if (dfd >= 0) { /* held for the entries "PATH/NAME" (pfd may be closed now) */
		char key[PATH_MAX];
		size_t len = strlen(path);
		if (len + 1 < sizeof(key)) {
			memcpy(key, path, len);
			key[len] = '/';
			hold_parent(st, key, len + 1, dfd);
		} else {
			hold_parent(st, "", NO_KEY, dfd);
		}
	}
	return 0;
}

/* Why a link entry without a usable target is refused (with *err), before
 * anything is made for it; NULL for every other entry. A link is never
 * turned into something else (an empty regular file). */
static const char *lost_link(const struct xstate *st, const struct xentry *e, int *err)
{
	*err = ENOENT;
	if (e->link_lost) {
		*err = EILSEQ;
		return "link not created: libarchive cannot read its target";
	}
	if (e->hardlink)
		return *e->hardlink ? NULL : "hard link not created: its target is empty";
	if (e->type == AE_IFLNK && e->symlink && !*e->symlink)
		return "symbolic link not created: its target is empty";
	/* libarchive 3.6 gives a tar link whose target is only in a pax
	 * linkpath record (the ustar link name empty) no target: a symlink
	 * then, or a hard link without a type (bsdtar makes empty files) */
	*err = EINVAL;
	if (e->type == AE_IFLNK && !e->symlink)
		return "symbolic link not created: libarchive reads no target for it";
	if (e->type == 0 && (la.archive_format(st->a) & ARCHIVE_FORMAT_BASE_MASK) == ARCHIVE_FORMAT_TAR)
		return "hard link not created: libarchive reads no target for it (a pax linkpath "
		       "record with an empty ustar link name)";
	return NULL;
}

static int extract_entry(struct xstate *st, const struct xentry *e)
{
	const char *raw = e->path;
	char path[PATH_MAX], target[PATH_MAX];
	if (!raw) { /* no name, or one that libarchive cannot convert (warned) */
		char label[64];
		snprintf(label, sizeof(label), "(entry %lu)", st->seq);
		report(st, label, "not extracted: no name that can be read", e->warned ? EILSEQ : EINVAL);
		return -1;
	}
	if (!*raw) {
		report(st, raw, "not extracted", ENOENT);
		return -1;
	}
	if (!normalize(raw, path, sizeof(path))) {
		report(st, raw, "not extracted", ENAMETOOLONG);
		return -1;
	}
	if (st->verbose) {
		put_name(stdout, raw);
		putchar('\n');
	}
	int err;
	const char *lost = lost_link(st, e, &err);
	if (lost) {
		report(st, raw, lost, err);
		return -1;
	}

	const char *link = e->hardlink;
	mode_t type = e->type;
	if (!link && type == AE_IFDIR)
		return extract_dir(st, e, path);

	const char *name;
	int pfd = parent_of(st, path, &name);
	if (pfd < 0) {
		report(st, raw, "not extracted", errno);
		return -1;
	}
	int ret = -1, made;
	struct maker mk = { 0 };
	if (link) {
		if (!normalize(link, target, sizeof(target))) {
			report(st, raw, "hard link not created", ENAMETOOLONG);
			return -1;
		}
		mk.make = make_link;
		mk.target = target;
		if ((made = create_replacing(st, &mk, pfd, name)) < 0) {
			report(st, raw, "hard link not created", errno);
			return -1;
		}
		if (made == 0 && e->size_set && e->size > 0)
			return hardlink_data(st, e, pfd, name, raw);
		return 0;
	}
	switch (type) {
	case AE_IFREG:
		ret = extract_file(st, e, pfd, name, raw);
		break;
	case AE_IFLNK: {
		const char *body = e->symlink;
		mk.make = make_symlink;
		mk.target = body;
		if ((made = create_replacing(st, &mk, pfd, name)) < 0) {
			report(st, raw, "symbolic link not created", errno);
			break;
		}
		if (made == 0)
			finish_special(st, e, pfd, name, raw, false);
		ret = 0;
		break;
	}
	case AE_IFCHR:
	case AE_IFBLK:
		if (!st->devices) {
			report(st, raw, "device node not created (use --devices, as root)", EPERM);
			break;
		}
		__attribute__((fallthrough)); /* a permitted device is made like a FIFO */
	case AE_IFIFO:
	case AE_IFSOCK:
		mk.make = make_node;
		mk.mode = type | (entry_perm(st, e, false) & 0777);
		mk.dev = e->rdev;
		if ((made = create_replacing(st, &mk, pfd, name)) < 0) {
			report(st, raw, "not created", errno);
			break;
		}
		if (made == 0)
			finish_special(st, e, pfd, name, raw, true);
		ret = 0;
		break;
	default:
		report(st, raw, "unknown kind of entry, not extracted", EINVAL);
		break;
	}
	return ret;
}

/* ------------------------------------------------------------------ directories */

static int cmp_dirs(const void *a, const void *b)
{
	const struct dirmeta *x = a, *y = b;
	int c = strcmp(x->path, y->path);
	if (c)
		return c;
	return (x->seq > y->seq) - (x->seq < y->seq);
}

/* Owner, mode and times of one directory, resolved again beneath DEST (not
 * followed if it has become a symlink): through one descriptor opened by the
 * library, or name by name where the directory cannot be opened. */
static void finish_dir(struct xstate *st, const struct dirmeta *d)
{
	struct safe_open_how how = { .flags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC,
				     .resolve = st->resolve };
	int fd = safe_openat2(st->rootfd, d->path, &how, sizeof(how));
	if (fd < 0 && errno != EACCES) {
		report(st, d->path, "mode and times not restored", errno);
		return;
	}
	if (st->same_owner &&
	    (fd >= 0 ? fchown(fd, d->uid, d->gid)
		     : safe_fchownat_beneath(st->rootfd, d->path, d->uid, d->gid, st->resolve)) < 0)
		report(st, d->path, "owner not restored", errno);
	if ((fd >= 0 ? fchmod(fd, d->mode)
		     : safe_fchmodat_beneath(st->rootfd, d->path, d->mode, st->resolve)) < 0)
		report(st, d->path, "mode not restored", errno);
	if ((fd >= 0 ? futimens(fd, d->times)
		     : safe_utimensat_beneath(st->rootfd, d->path, d->times, st->resolve)) < 0)
		report(st, d->path, "times not restored", errno);
	if (fd >= 0)
		close(fd);
}

/* The directories' metadata, deepest first (a name sorts before every name
 * below it, so reverse order visits children first), only the last entry of
 * a duplicated name. */
static void finish_dirs(struct xstate *st)
{
	if (st->ndirs)
		qsort(st->dirs, st->ndirs, sizeof(*st->dirs), cmp_dirs);
	for (size_t i = st->ndirs; i-- > 0;) {
		struct dirmeta *d = &st->dirs[i];
		if (i + 1 < st->ndirs && !strcmp(d->path, st->dirs[i + 1].path))
			continue;
		finish_dir(st, d);
	}
	for (size_t i = 0; i < st->ndirs; i++)
		free(st->dirs[i].path);
	free(st->dirs);
	st->dirs = NULL;
	st->ndirs = st->capdirs = 0;
}

/* ------------------------------------------------------------------ decompressors */

/* The archive as messages name it. */
static const char *input_name(const struct xstate *st)
{
	return strcmp(st->file, "-") ? st->file : "standard input";
}

/* A compressed archive file is decompressed by the usual program in a child
 * process, as GNU tar does: such a program writes out every byte it can
 * decode before damage, where libarchive's own filters drop the partly
 * decoded last block (up to 64 KiB of entries: a truncated .tar.xz lost
 * complete files). Where the program is not installed, or the archive comes
 * from a pipe, libarchive's filters decompress. */
struct decompressor {
	unsigned char magic[6];
	size_t len;
	const char *prog;
	int trailing; /* its exit status for data after a whole stream, or 0 */
};

struct decomp {
	pid_t pid;     /* the child, or 0 */
	int fd;        /* the read end of its output */
	const struct decompressor *dz;
};

/* Data after the end of a whole compressed stream is not damage but a
 * warning (bsdtar, whose libarchive filters stop at the stream's end,
 * extracts and exits 0): gzip says so with its warning status 2 ("trailing
 * garbage ignored"), lz4 1.9 with status 1 ("stream followed by undecodable
 * data"; a cut stream is its status 68). bzip2 ignores it itself (status 0);
 * xz and zstd fail as libarchive does (bsdtar exits 1 there too). */
static const struct decompressor *decompressor(const unsigned char *m, size_t n)
{
	static const struct decompressor known[] = {
		{ { 0x1f, 0x8b }, 2, "gzip", 2 },
		{ { 'B', 'Z', 'h' }, 3, "bzip2", 0 },
		{ { 0xfd, '7', 'z', 'X', 'Z', 0 }, 6, "xz", 0 },
		{ { 0x28, 0xb5, 0x2f, 0xfd }, 4, "zstd", 0 },
		{ { 0x04, 0x22, 0x4d, 0x18 }, 4, "lz4", 1 },
	};
	for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++)
		if (n >= known[i].len && !memcmp(m, known[i].magic, known[i].len))
			return &known[i];
	return NULL;
}

/* Start "PROG -dc" on the archive if it is a compressed regular file (named,
 * or standard input redirected from one: read from its current offset) and
 * PROG is installed. Returns 1 started (d filled), 0 not (libarchive reads
 * the archive). A FIFO, a socket or a terminal is never opened or read
 * here: what is read of it would be lost to libarchive. */
static int decomp_start(const char *file, struct decomp *d)
{
	struct stat sb;
	int fd;
	if (!strcmp(file, "-"))
		fd = fcntl(STDIN_FILENO, F_DUPFD_CLOEXEC, 3); /* shares the offset */
	else if (stat(file, &sb) < 0 || !S_ISREG(sb.st_mode))
		return 0;
	else
		fd = open(file, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return 0;
	unsigned char m[6];
	off_t at = -1;
	ssize_t n = -1;
	if (fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode) && (at = lseek(fd, 0, SEEK_CUR)) >= 0)
		n = pread(fd, m, sizeof(m), at);
	const struct decompressor *dz = n > 0 ? decompressor(m, (size_t)n) : NULL;
	int p[2] = { -1, -1 };
	posix_spawn_file_actions_t fa;
	int started = 0;
	if (!dz || pipe2(p, O_CLOEXEC) < 0)
		goto out;
	if (posix_spawn_file_actions_init(&fa) == 0) {
		char *argv[] = { (char *)dz->prog, (char *)"-dc", NULL };
		if (posix_spawn_file_actions_adddup2(&fa, fd, STDIN_FILENO) == 0 &&
		    posix_spawn_file_actions_adddup2(&fa, p[1], STDOUT_FILENO) == 0 &&
		    posix_spawnp(&d->pid, dz->prog, &fa, NULL, argv, environ) == 0)
			started = 1;
		posix_spawn_file_actions_destroy(&fa);
	}
	close(p[1]);
	if (started) {
		d->fd = p[0];
		d->dz = dz;
	} else {
		close(p[0]);
	}
out:
	close(fd);
	return started;
}

/* Wait for the decompressor; its failure (a damaged or truncated stream,
 * which it has reported on standard error) is a failure of the extraction,
 * unless the extraction stopped reading first (--strict, an unreadable
 * entry): then it is only told to stop. After the archive's end marker the
 * rest of its output (a tar's record padding) is read and thrown away, so
 * that it checks the stream to its end instead of dying of SIGPIPE. */
static void decomp_finish(struct xstate *st, struct decomp *d, bool stopped)
{
	if (!d->pid)
		return;
	if (stopped) {
		kill(d->pid, SIGTERM);
	} else {
		char buf[1 << 14];
		ssize_t n;
		while ((n = read(d->fd, buf, sizeof(buf))) > 0 || (n < 0 && errno == EINTR))
			;
	}
	close(d->fd);
	int status;
	while (waitpid(d->pid, &status, 0) < 0)
		if (errno != EINTR)
			return;
	if (stopped || (WIFEXITED(status) && WEXITSTATUS(status) == 0))
		return;
	fputs("safeopen: extract: ", stderr);
	put_name(stderr, input_name(st));
	if (WIFEXITED(status) && d->dz->trailing && WEXITSTATUS(status) == d->dz->trailing) {
		fprintf(stderr, ": warning: %s -dc: exit status %d: data after the end of the "
				"compressed stream ignored\n",
			d->dz->prog, WEXITSTATUS(status));
		return;
	}
	if (WIFEXITED(status))
		fprintf(stderr, ": %s -dc: exit status %d: the archive is damaged\n", d->dz->prog,
			WEXITSTATUS(status));
	else
		fprintf(stderr, ": %s -dc: killed by signal %d\n", d->dz->prog, WTERMSIG(status));
	st->bad++;
}

/* ------------------------------------------------------------------ input */

/* What libarchive reads at a time from a descriptor or a file. */
#define READ_BLOCK (1 << 16)

/* libarchive (loaded first: la.h) with every format and filter it has, on
 * the decompressor's output, standard input, or the named file (by name:
 * libarchive then seeks in it, which zip needs for its central directory).
 * Returns 0, or -1 reported. */
static int open_input(struct xstate *st, const struct decomp *dc)
{
	const char *why;
	if (la_load(&why) < 0) {
		fprintf(stderr, "safeopen: extract: %s: libarchive is needed and cannot be loaded: %s\n",
			input_name(st), why);
		return -1;
	}
	if (!(st->a = la.archive_read_new())) {
		fputs("safeopen: extract: out of memory\n", stderr);
		return -1;
	}
	la.archive_read_support_filter_all(st->a);
	la.archive_read_support_format_all(st->a);
	int r;
	if (dc->pid)
		r = la.archive_read_open_fd(st->a, dc->fd, READ_BLOCK);
	else if (!strcmp(st->file, "-"))
		r = la.archive_read_open_fd(st->a, STDIN_FILENO, READ_BLOCK);
	else
		r = la.archive_read_open_filename(st->a, st->file, READ_BLOCK);
	if (r != ARCHIVE_OK) {
		const char *msg = la.archive_error_string(st->a);
		fputs("safeopen: extract: ", stderr);
		put_name(stderr, input_name(st));
		fprintf(stderr, ": %s\n", msg ? msg : "cannot open");
		return -1;
	}
	return 0;
}

static void close_input(struct xstate *st)
{
	if (st->a)
		la.archive_read_free(st->a);
	st->a = NULL;
	la_unload();
}

/* ------------------------------------------------------------------ main */

int safeopen_extract(int rootfd, uint64_t resolve, int argc, char **argv)
{
	enum { OPT_STRICT = 256, OPT_ATOMIC, OPT_OVERWRITE, OPT_SKIP_OLD, OPT_SAME_OWNER, OPT_NO_SAME_OWNER,
	       OPT_NO_SAME_PERMS, OPT_DEVICES, OPT_NO_XATTRS };
	static const struct option opts[] = {
		{ "verbose", no_argument, NULL, 'v' },
		{ "strict", no_argument, NULL, OPT_STRICT },
		{ "atomic", no_argument, NULL, OPT_ATOMIC },
		{ "overwrite", no_argument, NULL, OPT_OVERWRITE },
		{ "keep-old-files", no_argument, NULL, 'k' },
		{ "skip-old-files", no_argument, NULL, OPT_SKIP_OLD },
		{ "same-owner", no_argument, NULL, OPT_SAME_OWNER },
		{ "no-same-owner", no_argument, NULL, OPT_NO_SAME_OWNER },
		{ "same-permissions", no_argument, NULL, 'p' },
		{ "no-same-permissions", no_argument, NULL, OPT_NO_SAME_PERMS },
		{ "devices", no_argument, NULL, OPT_DEVICES },
		{ "no-xattrs", no_argument, NULL, OPT_NO_XATTRS },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct xstate st = { .rootfd = rootfd, .resolve = resolve, .xattrs = true, .pfd = -1 };
	st.root = geteuid() == 0;
	/* tar's defaults: root restores owners and exact modes */
	st.same_owner = st.root;
	st.same_perms = st.root;
	st.old = OLD_REPLACE;
	int c;
	optind = 0; /* full reinitialisation of GNU getopt */
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+vpkh", opts, NULL)) != -1) {
		switch (c) {
		case 'v': st.verbose = true; break;
		case OPT_STRICT: st.strict = true; break;
		case OPT_ATOMIC: st.atomic = true; break;
		case OPT_OVERWRITE: st.old = OLD_REPLACE; break;
		case 'k': st.old = OLD_KEEP; break;
		case OPT_SKIP_OLD: st.old = OLD_SKIP; break;
		case OPT_SAME_OWNER: st.same_owner = true; break;
		case OPT_NO_SAME_OWNER: st.same_owner = false; break;
		case 'p': st.same_perms = true; break;
		case OPT_NO_SAME_PERMS: st.same_perms = false; break;
		case OPT_DEVICES: st.devices = true; break;
		case OPT_NO_XATTRS: st.xattrs = false; break;
		case 'h':
			fputs(extract_usage, stdout);
			return EXIT_OK;
		default:
			if (optopt)
				fprintf(stderr, "safeopen: extract: invalid option -- '%c'\n", optopt);
			else
				fprintf(stderr, "safeopen: extract: unrecognized option '%s'\n",
					argv[optind - 1]);
			fputs("Try 'safeopen DEST extract --help' for more information.\n", stderr);
			return EXIT_USAGE;
		}
	}
	if (optind + 1 < argc) {
		fprintf(stderr, "safeopen: extract: one ARCHIVE expected, got '%s' too\n"
				"Try 'safeopen DEST extract --help' for more information.\n",
			argv[optind + 1]);
		return EXIT_USAGE;
	}
	const char *file = optind < argc ? argv[optind] : "-";
	st.umask = umask(0);
	umask(st.umask);
	names_locale();

	struct decomp dc = { .pid = 0, .fd = -1 };
	decomp_start(file, &dc);
	st.file = file;
	if (open_input(&st, &dc) < 0) {
		close_input(&st);
		st.bad++;
		decomp_finish(&st, &dc, false);
		return EXIT_FAILED;
	}
	bool stopped = false;
	for (;;) {
		const struct xentry *e = &st.xe;
		int r = rd_next(&st);
		if (r == ARCHIVE_EOF)
			break;
		if (r == ARCHIVE_RETRY)
			continue;
		if (r == ARCHIVE_WARN)
			archive_problem(&st, e->path, 0);
		else if (r != ARCHIVE_OK) {
			archive_problem(&st, NULL, 1);
			if (r == ARCHIVE_FATAL || st.strict) {
				stopped = r != ARCHIVE_FATAL;
				break;
			}
			st.fatal = false;
			continue;
		}
		st.seq++;
		st.dropped = st.replaced = false;
		int ret = extract_entry(&st, e);
		if (st.dropped)
			st.setid_dropped++;
		/* the premise of the held parent (parent_of()): only new names
		 * since it was resolved; a replaced name may be on its own path
		 * (a symlink "a/s" -> "." replaced by the entry "a/s/s") */
#ifndef SAFEOPEN_MUTATE_EXTRACT_HELD_PARENT
		if (st.replaced || ret < 0)
			drop_parent(&st);
#endif
		if (st.fatal || (ret < 0 && st.strict) || (st.bad && st.strict)) {
			stopped = !st.fatal;
			break;
		}
	}
	drop_parent(&st);
	finish_dirs(&st);
	if (st.setid_dropped)
		fprintf(stderr,
			"safeopen: extract: warning: set-user-ID or set-group-ID bits not restored "
			"on %lu %s (%s)\n",
			st.setid_dropped, st.setid_dropped == 1 ? "entry" : "entries",
			st.root ? "root keeps them only with --same-owner"
				: "-p keeps them on the files of this user");
	close_input(&st);
	decomp_finish(&st, &dc, stopped);
	free(st.files);
	free(st.xa);
	if (fflush(stdout) != 0) {
		perror("safeopen: extract: standard output");
		return EXIT_FAILED;
	}
	return st.bad ? EXIT_FAILED : EXIT_OK;
}

#endif /* HAVE_LIBARCHIVE */
