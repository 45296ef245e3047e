/* SPDX-License-Identifier: MIT */
/*
 * safeopen DEST extract: unpack an untrusted archive beneath DEST.
 *
 * libarchive reads the archive (tar in all its dialects, cpio, zip, ...,
 * compressed or not); every entry is created beneath DEST by libsafeopen,
 * never by a path syscall on a name that came from the archive. That removes
 * "tar slip" / "zip slip" by construction instead of by string checks:
 *
 *  - the parent directory of each entry is created or found with the mkdir -p
 *    operation, which resolves it beneath DEST (absolute names, "..", and
 *    symlinks that leave DEST fail with EXDEV; a directory swapped for a
 *    symlink by a concurrent process is seen as that symlink);
 *  - the entry itself is created in that parent with the library's
 *    single-name operations, which never follow a symlink in the last
 *    component: a regular file with the tmpfile API (published atomically,
 *    with its xattrs already set; --overwrite replaces atomically), a symlink
 *    stored as it is (its body is data), a hard link whose target is resolved
 *    beneath DEST, a FIFO or (with --devices) a device node;
 *  - directory modes and times are applied at the end, deepest first, by
 *    resolving the names again (later entries change a directory's mtime,
 *    and a read-only directory would block its own contents).
 *
 * A refused entry is reported with its name and the errno, the others are
 * extracted, and the exit status is 1 (--strict stops at the first).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
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
	"Every entry is created beneath DEST by libsafeopen. An entry whose name or\n"
	"link would lead outside DEST (an absolute name, \"..\", a symbolic link from\n"
	"the archive or already in DEST, even one swapped in during the extraction)\n"
	"is refused with a message naming it; the others are extracted. With the\n"
	"global option --in-root, absolute names and links start at DEST instead.\n"
	"\n"
	"Options:\n"
	"  -v, --verbose           print the name of each entry as it is extracted\n"
	"      --strict            stop at the first entry that is refused or fails\n"
	"      --overwrite         atomically replace existing files, symbolic links\n"
	"                          and special files (default: refuse them, EEXIST)\n"
	"      --same-owner        restore the numeric owner and group (root only)\n"
	"  -p, --same-permissions  exact modes with set-ID and sticky bits, ignoring\n"
	"                          the umask (default for root, who keeps the set-ID\n"
	"                          bits of files only with --same-owner)\n"
	"      --no-same-permissions\n"
	"                          apply the umask, drop set-ID and sticky bits\n"
	"                          (default for other users)\n"
	"      --devices           create device nodes (needs root; default: refuse)\n"
	"      --no-xattrs         do not restore extended attributes\n"
	"  -h, --help              show this help and exit\n"
	"\n"
	"Exit status: 0 everything extracted, 1 an entry was refused or failed or\n"
	"the archive is damaged, 2 usage error.\n";

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

#include <archive.h>
#include <archive_entry.h>
#include <sys/random.h>
#include <sys/xattr.h>

#include <safeopen.h>

enum { EXIT_OK = 0, EXIT_FAILED = 1, EXIT_USAGE = 2 };

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
 * multiply-linked file with one of its links). */
struct fileid {
	dev_t dev;
	ino_t ino;
};

struct xstate {
	int rootfd;
	uint64_t resolve;
	bool verbose, strict, overwrite, same_owner, same_perms, devices, xattrs;
	bool root;
	mode_t umask;
	struct archive *a;
	struct dirmeta *dirs;
	size_t ndirs, capdirs;
	struct fileid *files;
	size_t nfiles, capfiles;
	struct safe_xattr *xa;
	size_t capxa;
	unsigned long bad;  /* entries refused or failed */
	unsigned long seq;  /* entries seen */
	uint32_t tmprand;   /* per-run random part of temporary names */
	unsigned int tmpseq;
	bool fatal;         /* the archive cannot be read further */
};

/* ------------------------------------------------------------------ messages */

static const char *errno_name(int err)
{
	static const struct {
		int err;
		const char *name;
	} names[] = {
		{ EXDEV, "EXDEV" },	    { ELOOP, "ELOOP" },	      { EEXIST, "EEXIST" },
		{ EISDIR, "EISDIR" },	    { ENOTDIR, "ENOTDIR" },   { ENOENT, "ENOENT" },
		{ EACCES, "EACCES" },	    { EPERM, "EPERM" },	      { EINVAL, "EINVAL" },
		{ ENAMETOOLONG, "ENAMETOOLONG" }, { EAGAIN, "EAGAIN" }, { ENOSPC, "ENOSPC" },
		{ EOPNOTSUPP, "EOPNOTSUPP" }, { E2BIG, "E2BIG" },     { EIO, "EIO" },
		{ ENOMEM, "ENOMEM" },	    { EMLINK, "EMLINK" },     { EROFS, "EROFS" },
		{ EBUSY, "EBUSY" },	    { ENOTEMPTY, "ENOTEMPTY" }, { EDQUOT, "EDQUOT" },
		{ EFBIG, "EFBIG" },	    { EMFILE, "EMFILE" },     { ENFILE, "ENFILE" },
		{ ENXIO, "ENXIO" },	    { ENODATA, "ENODATA" },   { ERANGE, "ERANGE" },
		{ EFAULT, "EFAULT" },	    { EBADF, "EBADF" },	      { ENOSYS, "ENOSYS" },
		{ ETXTBSY, "ETXTBSY" },
	};
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (names[i].err == err)
			return names[i].name;
	return NULL;
}

static const char *reason(const struct xstate *st, int err)
{
	switch (err) {
	case EXDEV:
		return "leads outside the destination directory";
	case ELOOP:
		return "too many symbolic links, or a forbidden one";
	case EEXIST:
		return st->overwrite ? "exists and cannot be replaced by this kind of entry"
				     : "already exists (--overwrite replaces it)";
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
	const char *msg = archive_error_string(st->a);
	fputs("safeopen: extract: ", stderr);
	if (name) {
		put_name(stderr, name);
		fputs(": ", stderr);
	}
	fprintf(stderr, "%s%s\n", fatal ? "archive error: " : "", msg ? msg : "unknown error");
	if (fatal) {
		st->bad++;
		st->fatal = true;
	}
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

/* Split a normalized path into its parent (written to parent[size]) and a
 * pointer to its last component. */
static const char *split(const char *path, char *parent, size_t size)
{
	const char *slash = strrchr(path, '/');
	if (!slash) {
		snprintf(parent, size, ".");
		return path;
	}
	if (slash == path) {
		snprintf(parent, size, "/");
		return slash + 1;
	}
	snprintf(parent, size, "%.*s", (int)(slash - path), path);
	return slash + 1;
}

/* A hidden name for the create-then-rename of --overwrite. */
static void tmp_name(struct xstate *st, char *buf, size_t size)
{
	snprintf(buf, size, ".safeopen-extract.%08x.%u", (unsigned)st->tmprand, ++st->tmpseq);
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

static void entry_times(struct archive_entry *e, struct timespec ts[2])
{
	ts[0] = (struct timespec){ .tv_nsec = UTIME_OMIT };
	ts[1] = (struct timespec){ .tv_nsec = UTIME_OMIT };
	if (archive_entry_atime_is_set(e))
		ts[0] = (struct timespec){ archive_entry_atime(e), archive_entry_atime_nsec(e) };
	if (archive_entry_mtime_is_set(e))
		ts[1] = (struct timespec){ archive_entry_mtime(e), archive_entry_mtime_nsec(e) };
}

/* The permission bits an entry gets, as GNU tar: without --same-permissions
 * (the default for users other than root) the umask applies and the
 * set-user-ID, set-group-ID and sticky bits are dropped. One difference, for
 * safety: root keeps the set-ID bits of a non-directory only when its owner
 * is restored (--same-owner), never on a file that root now owns. */
static mode_t entry_perm(const struct xstate *st, struct archive_entry *e, bool dir)
{
	mode_t m = archive_entry_perm(e) & 07777;
	if (!st->same_perms)
		m &= 0777 & ~st->umask;
	if (!dir && st->root && !st->same_owner)
		m &= ~(mode_t)(S_ISUID | S_ISGID);
	return m;
}

static bool remember_dir(struct xstate *st, const char *path, struct archive_entry *e)
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
	d->uid = (uid_t)archive_entry_uid(e);
	d->gid = (gid_t)archive_entry_gid(e);
	entry_times(e, d->times);
	st->ndirs++;
	return true;
}

static void remember_file(struct xstate *st, int fd)
{
	struct stat sb;
	if (fstat(fd, &sb) < 0)
		return;
	if (st->nfiles == st->capfiles) {
		size_t cap = st->capfiles ? 2 * st->capfiles : 64;
		struct fileid *f = realloc(st->files, cap * sizeof(*f));
		if (!f)
			return; /* the data of a later link is then refused: safe */
		st->files = f;
		st->capfiles = cap;
	}
	st->files[st->nfiles++] = (struct fileid){ sb.st_dev, sb.st_ino };
}

static bool created_here(const struct xstate *st, const struct stat *sb)
{
	for (size_t i = 0; i < st->nfiles; i++)
		if (st->files[i].dev == sb->st_dev && st->files[i].ino == sb->st_ino)
			return true;
	return false;
}

/* The entry's extended attributes as an array (owned by st, valid until
 * the next entry). */
static size_t entry_xattrs(struct xstate *st, struct archive_entry *e)
{
	if (!st->xattrs)
		return 0;
	int count = archive_entry_xattr_reset(e);
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
	while (n < (size_t)count && archive_entry_xattr_next(e, &name, &value, &size) == ARCHIVE_OK)
		st->xa[n++] = (struct safe_xattr){ name, value, size };
	return n;
}

static bool xattr_errno(int err)
{
	return err == EPERM || err == EOPNOTSUPP || err == E2BIG || err == ENOSPC ||
	       err == EINVAL || err == EACCES || err == ERANGE || err == EDQUOT;
}

/* ------------------------------------------------------------------ entries */

/* Creation of one non-regular entry under a name in a resolved directory. */
struct maker {
	int (*make)(struct xstate *st, const struct maker *mk, int pfd, const char *name);
	const char *target;   /* symlink body, or hard link target (normalized) */
	mode_t mode;
	dev_t dev;
};

static int make_symlink(struct xstate *st, const struct maker *mk, int pfd, const char *name)
{
	return safe_symlinkat_beneath(mk->target, pfd, name, st->resolve);
}

static int make_node(struct xstate *st, const struct maker *mk, int pfd, const char *name)
{
	return safe_mknodat_beneath(pfd, name, mk->mode, mk->dev, st->resolve);
}

/* The target is resolved beneath DEST (not followed if it is a symlink: the
 * link is to the symlink itself, as tar does). */
static int make_link(struct xstate *st, const struct maker *mk, int pfd, const char *name)
{
	return safe_linkat_beneath(st->rootfd, mk->target, pfd, name, st->resolve);
}

/* Create the entry; if the name exists and --overwrite was given, create it
 * under a hidden name and rename that over the old one, so that the name
 * always shows either object (a directory is never replaced: EISDIR). */
static int create_replacing(struct xstate *st, const struct maker *mk, int pfd, const char *name)
{
	if (mk->make(st, mk, pfd, name) == 0)
		return 0;
	if (errno != EEXIST || !st->overwrite)
		return -1;
	char tmp[64];
	tmp_name(st, tmp, sizeof(tmp));
	if (mk->make(st, mk, pfd, tmp) < 0)
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

/* Owner and times of a non-regular, non-directory entry, on the name itself. */
static void finish_special(struct xstate *st, struct archive_entry *e, int pfd, const char *name,
			   const char *path, bool chmod_it)
{
	if (st->same_owner &&
	    safe_fchownat_beneath(pfd, name, (uid_t)archive_entry_uid(e),
				  (gid_t)archive_entry_gid(e), st->resolve) < 0)
		report(st, path, "owner not restored", errno);
	if (chmod_it && safe_fchmodat_beneath(pfd, name, entry_perm(st, e, false), st->resolve) < 0)
		report(st, path, "mode not restored", errno);
	struct timespec ts[2];
	entry_times(e, ts);
	if (safe_utimensat_beneath(pfd, name, ts, st->resolve) < 0)
		report(st, path, "times not restored", errno);
}

/* Publish the unpublished file with its xattrs. An attribute that this user
 * or this filesystem cannot take is reported and left out, the rest of the
 * file is still published. */
static int publish(struct xstate *st, struct safe_tmpfile *tmp, int fd, const char *path,
		   size_t nxa, uint64_t flags)
{
	int out = safe_tmpfile_link(tmp, st->xa, nxa, flags);
	if (out >= 0 || nxa == 0 || !xattr_errno(errno))
		return out;
	int err = errno;
	size_t good = 0;
	for (size_t i = 0; i < nxa; i++) {
		if (fsetxattr(fd, st->xa[i].name, st->xa[i].value, st->xa[i].size, 0) == 0) {
			st->xa[good++] = st->xa[i];
			continue;
		}
		char what[300];
		snprintf(what, sizeof(what), "extended attribute %s not restored", st->xa[i].name);
		report(st, path, what, errno);
	}
	if (good == nxa) {
		errno = err;
		return -1;
	}
	return safe_tmpfile_link(tmp, st->xa, good, flags);
}

static int extract_file(struct xstate *st, struct archive_entry *e, int pfd, const char *name,
			const char *path)
{
	mode_t perm = entry_perm(st, e, false);
	struct safe_tmpfile *tmp = NULL;
	if (safe_tmpfile_open(pfd, name, perm & 0777, st->resolve, &tmp) < 0) {
		report(st, path, "not extracted", errno);
		return -1;
	}
	int fd = safe_tmpfile_fd(tmp); /* lent by the handle: never closed here */
	const void *buf;
	size_t len;
	la_int64_t off, end = 0;
	int r;
	while ((r = archive_read_data_block(st->a, &buf, &len, &off)) == ARCHIVE_OK) {
		if (len && !pwrite_all(fd, buf, len, (off_t)off)) {
			report(st, path, "not extracted", errno);
			goto discard;
		}
		end = off + (la_int64_t)len;
	}
	if (r != ARCHIVE_EOF) {
		archive_problem(st, path, r == ARCHIVE_FATAL);
		if (r != ARCHIVE_FATAL)
			report(st, path, "not extracted", EIO);
		goto discard;
	}
	if (archive_entry_size_is_set(e) && archive_entry_size(e) > end &&
	    ftruncate(fd, (off_t)archive_entry_size(e)) < 0) { /* a trailing hole */
		report(st, path, "not extracted", errno);
		goto discard;
	}
	if (st->same_owner &&
	    fchown(fd, (uid_t)archive_entry_uid(e), (gid_t)archive_entry_gid(e)) < 0)
		report(st, path, "owner not restored", errno);

	size_t nxa = entry_xattrs(st, e);
	int out = publish(st, tmp, fd, path, nxa, st->overwrite ? SAFE_TMPFILE_REPLACE : 0);
	if (out < 0) {
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
	if (archive_entry_nlink(e) > 1)
		remember_file(st, out);
	close(out);
	return 0;
discard:
	safe_tmpfile_discard(tmp);
	return -1;
}

/* A hard link entry that carries data (cpio keeps the data of a linked file
 * with one of its links): the data goes into the linked inode, which must be
 * a regular file this extraction created itself; a file that was already in
 * DEST might be linked to anything. */
static int hardlink_data(struct xstate *st, int pfd, const char *name, const char *path)
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
	int ret = 0;
	const void *buf;
	size_t len;
	la_int64_t off;
	int r2;
	if (ftruncate(fd, 0) < 0) {
		report(st, path, "data of the hard link not written", errno);
		close(fd);
		return -1;
	}
	while ((r2 = archive_read_data_block(st->a, &buf, &len, &off)) == ARCHIVE_OK)
		if (len && !pwrite_all(fd, buf, len, (off_t)off)) {
			report(st, path, "data of the hard link not written", errno);
			ret = -1;
			break;
		}
	if (ret == 0 && r2 != ARCHIVE_EOF) {
		archive_problem(st, path, r2 == ARCHIVE_FATAL);
		ret = -1;
	}
	close(fd);
	return ret;
}

static int extract_dir(struct xstate *st, struct archive_entry *e, const char *path)
{
	struct stat sb;
	bool exists = false;
	if (safe_fstatat_beneath(st->rootfd, path, &sb, st->resolve) == 0) {
		/* an existing directory is kept; anything else in its place is
		 * never followed: refused, or replaced with --overwrite */
		if (S_ISDIR(sb.st_mode))
			exists = true;
		else if (!st->overwrite) {
			report(st, path, "not extracted", EEXIST);
			return -1;
		} else if (safe_unlinkat_beneath(st->rootfd, path, st->resolve) < 0) {
			report(st, path, "not extracted", errno);
			return -1;
		}
	} else if (errno != ENOENT) {
		report(st, path, "not extracted", errno);
		return -1;
	}
	if (!exists) {
		mode_t perm = entry_perm(st, e, true);
		int dfd = safe_mkdir_all_beneath(st->rootfd, path, (perm | S_IRWXU) & 0777, st->resolve);
		if (dfd < 0) {
			report(st, path, "not extracted", errno);
			return -1;
		}
		close(dfd);
	}
	size_t nxa = entry_xattrs(st, e);
	for (size_t i = 0; i < nxa; i++)
		if (safe_setxattr_beneath(st->rootfd, path, st->xa[i].name, st->xa[i].value,
					  st->xa[i].size, 0, st->resolve) < 0) {
			char what[300];
			snprintf(what, sizeof(what), "extended attribute %s not restored",
				 st->xa[i].name);
			report(st, path, what, errno);
		}
	if (!remember_dir(st, path, e)) {
		report(st, path, "mode and times not restored", ENOMEM);
		return -1;
	}
	return 0;
}

static int extract_entry(struct xstate *st, struct archive_entry *e)
{
	const char *raw = archive_entry_pathname(e);
	char path[PATH_MAX], parent[PATH_MAX], target[PATH_MAX];
	if (!raw || !*raw) {
		report(st, raw ? raw : "(no name)", "not extracted", raw ? ENOENT : EINVAL);
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

	const char *link = archive_entry_hardlink(e);
	mode_t type = archive_entry_filetype(e);
	if (!link && type == AE_IFDIR)
		return extract_dir(st, e, path);

	const char *name = split(path, parent, sizeof(parent));
	int pfd = st->rootfd;
	if (strcmp(parent, ".") != 0) {
		pfd = safe_mkdir_all_beneath(st->rootfd, parent, 0777, st->resolve);
		if (pfd < 0) {
			report(st, raw, "not extracted", errno);
			return -1;
		}
	}
	int ret = -1;
	struct maker mk = { 0 };
	if (link) {
		if (!*link || !normalize(link, target, sizeof(target))) {
			report(st, raw, "hard link not created", *link ? ENAMETOOLONG : ENOENT);
			goto out;
		}
		mk.make = make_link;
		mk.target = target;
		if (create_replacing(st, &mk, pfd, name) < 0) {
			report(st, raw, "hard link not created", errno);
			goto out;
		}
		ret = 0;
		if (archive_entry_size_is_set(e) && archive_entry_size(e) > 0)
			ret = hardlink_data(st, pfd, name, raw);
		goto out;
	}
	switch (type) {
	case AE_IFREG:
		ret = extract_file(st, e, pfd, name, raw);
		break;
	case AE_IFLNK: {
		const char *body = archive_entry_symlink(e);
		mk.make = make_symlink;
		mk.target = body ? body : "";
		if (create_replacing(st, &mk, pfd, name) < 0) {
			report(st, raw, "symbolic link not created", errno);
			break;
		}
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
		mk.dev = archive_entry_rdev(e);
		if (create_replacing(st, &mk, pfd, name) < 0) {
			report(st, raw, "not created", errno);
			break;
		}
		finish_special(st, e, pfd, name, raw, true);
		ret = 0;
		break;
	default:
		report(st, raw, "unknown kind of entry, not extracted", EINVAL);
		break;
	}
out:
	if (pfd != st->rootfd)
		close(pfd);
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

/* Owner, mode and times of the directories, deepest first (a name sorts
 * before every name below it, so reverse order visits children first) and
 * only the last entry of a duplicated name. Each name is resolved again
 * beneath DEST and not followed if it has become a symlink. */
static void finish_dirs(struct xstate *st)
{
	if (st->ndirs)
		qsort(st->dirs, st->ndirs, sizeof(*st->dirs), cmp_dirs);
	for (size_t i = st->ndirs; i-- > 0;) {
		struct dirmeta *d = &st->dirs[i];
		if (i + 1 < st->ndirs && !strcmp(d->path, st->dirs[i + 1].path))
			continue;
		if (st->same_owner &&
		    safe_fchownat_beneath(st->rootfd, d->path, d->uid, d->gid, st->resolve) < 0)
			report(st, d->path, "owner not restored", errno);
		if (safe_fchmodat_beneath(st->rootfd, d->path, d->mode, st->resolve) < 0)
			report(st, d->path, "mode not restored", errno);
		if (safe_utimensat_beneath(st->rootfd, d->path, d->times, st->resolve) < 0)
			report(st, d->path, "times not restored", errno);
	}
	for (size_t i = 0; i < st->ndirs; i++)
		free(st->dirs[i].path);
	free(st->dirs);
	st->dirs = NULL;
	st->ndirs = st->capdirs = 0;
}

/* ------------------------------------------------------------------ main */

int safeopen_extract(int rootfd, uint64_t resolve, int argc, char **argv)
{
	enum { OPT_STRICT = 256, OPT_OVERWRITE, OPT_SAME_OWNER, OPT_NO_SAME_OWNER,
	       OPT_NO_SAME_PERMS, OPT_DEVICES, OPT_NO_XATTRS };
	static const struct option opts[] = {
		{ "verbose", no_argument, NULL, 'v' },
		{ "strict", no_argument, NULL, OPT_STRICT },
		{ "overwrite", no_argument, NULL, OPT_OVERWRITE },
		{ "same-owner", no_argument, NULL, OPT_SAME_OWNER },
		{ "no-same-owner", no_argument, NULL, OPT_NO_SAME_OWNER },
		{ "same-permissions", no_argument, NULL, 'p' },
		{ "no-same-permissions", no_argument, NULL, OPT_NO_SAME_PERMS },
		{ "devices", no_argument, NULL, OPT_DEVICES },
		{ "no-xattrs", no_argument, NULL, OPT_NO_XATTRS },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct xstate st = { .rootfd = rootfd, .resolve = resolve, .xattrs = true };
	st.root = geteuid() == 0;
	st.same_perms = st.root;
	int c;
	optind = 0; /* full reinitialisation of GNU getopt */
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+vph", opts, NULL)) != -1) {
		switch (c) {
		case 'v': st.verbose = true; break;
		case OPT_STRICT: st.strict = true; break;
		case OPT_OVERWRITE: st.overwrite = true; break;
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
	if (getrandom(&st.tmprand, sizeof(st.tmprand), GRND_NONBLOCK) != sizeof(st.tmprand))
		st.tmprand = (uint32_t)getpid() * 2654435761u;

	st.a = archive_read_new();
	if (!st.a) {
		fputs("safeopen: extract: out of memory\n", stderr);
		return EXIT_FAILED;
	}
	archive_read_support_filter_all(st.a);
	archive_read_support_format_all(st.a);
	int r = strcmp(file, "-") ? archive_read_open_filename(st.a, file, 1 << 16)
				  : archive_read_open_fd(st.a, STDIN_FILENO, 1 << 16);
	if (r != ARCHIVE_OK) {
		fprintf(stderr, "safeopen: extract: %s: %s\n", strcmp(file, "-") ? file : "standard input",
			archive_error_string(st.a) ? archive_error_string(st.a) : "cannot open");
		archive_read_free(st.a);
		return EXIT_FAILED;
	}
	for (;;) {
		struct archive_entry *e;
		r = archive_read_next_header(st.a, &e);
		if (r == ARCHIVE_EOF)
			break;
		if (r == ARCHIVE_RETRY)
			continue;
		if (r == ARCHIVE_WARN)
			archive_problem(&st, archive_entry_pathname(e), 0);
		else if (r != ARCHIVE_OK) {
			archive_problem(&st, NULL, 1);
			if (r == ARCHIVE_FATAL || st.strict)
				break;
			st.fatal = false;
			continue;
		}
		st.seq++;
		int ret = extract_entry(&st, e);
		if (st.fatal || (ret < 0 && st.strict))
			break;
		if (st.bad && st.strict)
			break;
	}
	finish_dirs(&st);
	archive_read_free(st.a);
	free(st.files);
	free(st.xa);
	if (fflush(stdout) != 0) {
		perror("safeopen: extract: standard output");
		return EXIT_FAILED;
	}
	return st.bad ? EXIT_FAILED : EXIT_OK;
}

#endif /* HAVE_LIBARCHIVE */
