/* SPDX-License-Identifier: MIT */
/*
 * Suite "tmpfile": safe_tmpfile_xattr() and the two-phase form (the sweep of
 * leftovers, SAFE_TMPFILE_PARENTS and the cases in sandboxed children have
 * their own suites, test_sweep, test_parents and test_tmpfile_sandbox; all
 * four use tmpfile-env.c).
 *
 * The kernel is the oracle for modes, owners and ACLs: every result is
 * compared with a file created by plain openat(O_CREAT, mode) in the same
 * directory. Strategies are told apart from the outside: after
 * safe_tmpfile_open() an unnamed O_TMPFILE inode has st_nlink 0 and leaves
 * the directory listing unchanged; the named fallback has st_nlink 1 and one
 * hidden entry.
 *
 * Helpers return 0 or 1 (with a message on stderr) instead of calling
 * ck_assert, so the same code runs in forked sandbox children.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <dirent.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

#include "fixture.h"
#include "safeopen.h"
#include "strategy.h"
#include "sandbox.h"
#include "tmpfile-env.h"

#ifndef RENAME_NOREPLACE
#define RENAME_NOREPLACE (1 << 0)
#endif

/* ---------------------------------------------------------------- functional */

/*
 * Creation as named rows: the path (in the test's directory, where "sub" is
 * a directory and "sub/up" a link to "../../.."), the mode, the xattrs, the
 * flags, and the expected errno or the name the file must have. A created
 * file is checked by create_row_check() (the fd, mode, owner and ACL like
 * open(2) O_CREAT's, the xattrs, a write, nothing hidden left); a refusal
 * must leave both directories and the fd count as they were, and the kernel
 * (openat2 O_CREAT with the same scope, which keeps it in the directory) must
 * refuse it with the same errno.
 */
struct create_row {
	const char *name;
	const char *path;
	mode_t mode;
	const struct safe_xattr *x;
	size_t n;
	uint64_t flags;
	int err;        /* expected errno, or 0 */
	const char *is; /* when err == 0: the name the file has */
};

#define IN_ROOT SAFE_RESOLVE_IN_ROOT
static const struct create_row create_rows[] = {
	{ "three xattrs", "upload.pdf", 0644, xa3, 3, 0, 0, "upload.pdf" },
	{ "no xattrs", "none", 0600, NULL, 0, 0, 0, "none" },
	{ "three xattrs, SYNC", "sync", 0640, xa3, 3, SAFE_TMPFILE_SYNC, 0, "sync" },
	{ "in a subdirectory", "sub/f", 0644, xa3, 3, 0, 0, "sub/f" },
	{ "an absolute path under IN_ROOT", "/sub/g", 0644, xa3, 3, IN_ROOT, 0, "sub/g" },
	{ "a link climbing out", "sub/up/h", 0644, xa3, 3, 0, EXDEV, NULL },
	{ "a link climbing out under IN_ROOT stops at the root", "sub/up/h", 0644, xa3, 3, IN_ROOT,
	  0, "h" },
};
#undef IN_ROOT

/* A created file against its row: 0 when it is the row's (details on
 * stderr otherwise); closes fd. */
static int create_row_check(int fd, int dfd, const struct create_row *r)
{
	int rc = check_fd(fd, dfd, r->is) || check_like_oracle(fd, dfd, r->mode);
	/* user.* xattrs follow the permission bits (see create_and_check) */
	if (!rc && geteuid() != 0 && fchmod(fd, 0600) < 0)
		rc = 1;
	rc = rc || check_xattrs(fd, r->x, r->n);
	if (!rc && write(fd, "data", 4) != 4)
		rc = 1;
	close(fd);
	return rc || count_hidden(dfd) != 0;
}

/* The kernel's errno for a row: openat2 O_CREAT with the row's scope; 0 when
 * it created the file (then removed), -1 when it cannot be asked. */
static int create_oracle(int dfd, const struct create_row *r, uint64_t fl)
{
	uint64_t scope = ((fl | r->flags) & SAFE_RESOLVE_IN_ROOT) ? SAFE_RESOLVE_IN_ROOT
								 : SAFE_RESOLVE_BENEATH;
	long fd = fx_openat2(dfd, r->path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, r->mode, scope);
	if (fd < 0)
		return errno == ENOSYS || errno == EPERM ? -1 : errno;
	close((int)fd);
	return 0;
}

START_TEST(creates_with_xattrs)
{
	uint64_t fl = strategies[_i];
	struct tdir d;
	tdir_make_xattrs(&d, "tmpfile");
	ck_assert_int_eq(mkdirat(d.fd, "sub", 0755), 0);
	ck_assert_int_eq(symlinkat("../../..", d.fd, "sub/up"), 0);
	int bad = 0;
	for (size_t k = 0; k < sizeof(create_rows) / sizeof(create_rows[0]); k++) {
		const struct create_row *r = &create_rows[k];
		char *top = fx_dir_listing(d.fd, "."), *sub = fx_dir_listing(d.fd, "sub");
		int nfd = fx_fd_count();
		errno = 0;
		int fd = safe_tmpfile_xattr(d.fd, r->path, r->mode, r->x, r->n, fl | r->flags);
		int e = fd < 0 ? errno : 0;
		const char *why = NULL;
		int ke = -1;
		if (fd >= 0) {
			if (e != r->err) {
				why = "errno";
				close(fd);
			} else if (create_row_check(fd, d.fd, r)) {
				why = "the file";
			} else if (unlinkat(d.fd, r->is, 0) < 0) {
				why = "its name";
			}
		} else {
			char *top2 = fx_dir_listing(d.fd, "."), *sub2 = fx_dir_listing(d.fd, "sub");
			bool same = !strcmp(top, top2) && !strcmp(sub, sub2);
			free(top2);
			free(sub2);
			int nfd2 = fx_fd_count();
			ke = create_oracle(d.fd, r, fl);
			if (e != r->err)
				why = "errno";
			else if (!same)
				why = "the tree";
			else if (nfd2 != nfd)
				why = "the fd count";
			else if (ke >= 0 && ke != e)
				why = "kernel";
		}
		free(top);
		free(sub);
		if (why) {
			fprintf(stderr, "tmpfile create row \"%s\" (%s, strategy %#llx): %s differs: "
					"got %s, want %s, kernel %s\n",
				r->name, r->path, (unsigned long long)fl, why,
				e ? strerrorname_np(e) : "0", r->err ? strerrorname_np(r->err) : "0",
				ke < 0 ? "not asked" : ke ? strerrorname_np(ke) : "0");
			bad++;
			break; /* the directory is no longer the one the next rows expect */
		}
	}
	ck_assert_msg(bad == 0, "a tmpfile create row failed (named above)");
	ck_assert_int_eq(unlinkat(d.fd, "sub/up", 0), 0);
	char *ls = fx_dir_listing(d.fd, "sub");
	ck_assert_str_eq(ls, "");
	free(ls);
	/* a value of the maximum size, a name of the maximum length */
	char *big = calloc(1, 65536);
	char name[256] = "user.";
	memset(name + 5, 'n', 250);
	struct safe_xattr xb[] = { { name, big, 65536 } };
	int fd = safe_tmpfile_xattr(d.fd, "big", 0644, xb, 1, fl);
	/* ext4 without ea_inode stores at most a block: the kernel's verdict
	 * for a plain file is the oracle. */
	int pf = openat(d.fd, "plain", O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	ck_assert_int_ge(pf, 0);
	int kr = fsetxattr(pf, name, big, 65536, 0);
	int kerr = errno;
	close(pf);
	ck_assert_int_eq(unlinkat(d.fd, "plain", 0), 0);
	if (kr == 0) {
		ck_assert_int_ge(fd, 0);
		close(fd);
		ck_assert_int_eq(unlinkat(d.fd, "big", 0), 0);
	} else {
		ck_assert_int_eq(fd, -1);
		ck_assert_int_eq(errno, kerr);
	}
	free(big);
	ls = fx_dir_listing(d.fd, ".");
	ck_assert_str_eq(ls, "sub\n");
	free(ls);
	tdir_free(&d);
}
END_TEST

/*
 * The mode of the file as named rows: the mode asked for, the umask, and the
 * mode the file must have (the umask clears permission bits, never setuid or
 * sticky). Each row is also asked of the kernel (open(2) O_CREAT of a plain
 * name in the test's directory, the same mode under the same umask), and
 * create_and_check() checks the rest (the name, owner and ACL like the
 * kernel's, the xattrs, a write, nothing hidden left).
 */
struct mode_row {
	const char *name;
	mode_t mode;
	mode_t umask;
	mode_t want;
};

static const struct mode_row mode_rows[] = {
	/* the usual umask, 0022 */
	{ "0000 (no permission bits) under umask 0022", 0, 0022, 0 },
	{ "0444 (read-only) under umask 0022", 0444, 0022, 0444 },
	{ "0200 (write-only for the owner) under umask 0022", 0200, 0022, 0200 },
	{ "0600 (private) under umask 0022", 0600, 0022, 0600 },
	{ "0644 (the usual file) under umask 0022", 0644, 0022, 0644 },
	{ "0666 (open to all) under umask 0022", 0666, 0022, 0644 },
	{ "0755 (executable) under umask 0022", 0755, 0022, 0755 },
	{ "0777 (all bits) under umask 0022", 0777, 0022, 0755 },
	{ "4755 (setuid) under umask 0022", 04755, 0022, 04755 },
	{ "1644 (sticky) under umask 0022", 01644, 0022, 01644 },
	/* a private umask, 0077 */
	{ "0000 (no permission bits) under umask 0077", 0, 0077, 0 },
	{ "0444 (read-only) under umask 0077", 0444, 0077, 0400 },
	{ "0200 (write-only for the owner) under umask 0077", 0200, 0077, 0200 },
	{ "0600 (private) under umask 0077", 0600, 0077, 0600 },
	{ "0644 (the usual file) under umask 0077", 0644, 0077, 0600 },
	{ "0666 (open to all) under umask 0077", 0666, 0077, 0600 },
	{ "0755 (executable) under umask 0077", 0755, 0077, 0700 },
	{ "0777 (all bits) under umask 0077", 0777, 0077, 0700 },
	{ "4755 (setuid) under umask 0077", 04755, 0077, 04700 },
	{ "1644 (sticky) under umask 0077", 01644, 0077, 01600 },
	/* no umask, 0000 */
	{ "0000 (no permission bits) under umask 0000", 0, 0, 0 },
	{ "0444 (read-only) under umask 0000", 0444, 0, 0444 },
	{ "0200 (write-only for the owner) under umask 0000", 0200, 0, 0200 },
	{ "0600 (private) under umask 0000", 0600, 0, 0600 },
	{ "0644 (the usual file) under umask 0000", 0644, 0, 0644 },
	{ "0666 (open to all) under umask 0000", 0666, 0, 0666 },
	{ "0755 (executable) under umask 0000", 0755, 0, 0755 },
	{ "0777 (all bits) under umask 0000", 0777, 0, 0777 },
	{ "4755 (setuid) under umask 0000", 04755, 0, 04755 },
	{ "1644 (sticky) under umask 0000", 01644, 0, 01644 },
	/* a umask leaving the owner read, 0277 */
	{ "0000 (no permission bits) under umask 0277", 0, 0277, 0 },
	{ "0444 (read-only) under umask 0277", 0444, 0277, 0400 },
	{ "0200 (write-only for the owner) under umask 0277", 0200, 0277, 0 },
	{ "0600 (private) under umask 0277", 0600, 0277, 0400 },
	{ "0644 (the usual file) under umask 0277", 0644, 0277, 0400 },
	{ "0666 (open to all) under umask 0277", 0666, 0277, 0400 },
	{ "0755 (executable) under umask 0277", 0755, 0277, 0500 },
	{ "0777 (all bits) under umask 0277", 0777, 0277, 0500 },
	{ "4755 (setuid) under umask 0277", 04755, 0277, 04500 },
	{ "1644 (sticky) under umask 0277", 01644, 0277, 01400 },
	/* a umask clearing every bit, 0777 */
	{ "0000 (no permission bits) under umask 0777", 0, 0777, 0 },
	{ "0444 (read-only) under umask 0777", 0444, 0777, 0 },
	{ "0200 (write-only for the owner) under umask 0777", 0200, 0777, 0 },
	{ "0600 (private) under umask 0777", 0600, 0777, 0 },
	{ "0644 (the usual file) under umask 0777", 0644, 0777, 0 },
	{ "0666 (open to all) under umask 0777", 0666, 0777, 0 },
	{ "0755 (executable) under umask 0777", 0755, 0777, 0 },
	{ "0777 (all bits) under umask 0777", 0777, 0777, 0 },
	{ "4755 (setuid) under umask 0777", 04755, 0777, 04000 },
	{ "1644 (sticky) under umask 0777", 01644, 0777, 01000 },
};

/* The mode a fresh file has: from safe_tmpfile_xattr(), or (kernel) from
 * open(2) O_CREAT; (mode_t)-1 with errno when it could not be created. */
static mode_t created_mode(int dfd, const char *name, mode_t mode, uint64_t fl, bool kernel)
{
	int fd = kernel ? openat(dfd, name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode)
			: safe_tmpfile_xattr(dfd, name, mode, xa3, 3, fl);
	if (fd < 0)
		return (mode_t)-1;
	struct stat st;
	int rc = fstat(fd, &st);
	close(fd);
	if (unlinkat(dfd, name, 0) < 0 || rc < 0)
		return (mode_t)-1;
	return st.st_mode & 07777;
}

START_TEST(modes_and_umask)
{
	uint64_t fl = strategies[_i];
	struct tdir d;
	tdir_make_xattrs(&d, "tmpfile");
	mode_t old = umask(0);
	int bad = 0;
	for (size_t k = 0; k < sizeof(mode_rows) / sizeof(mode_rows[0]); k++) {
		const struct mode_row *r = &mode_rows[k];
		umask(r->umask);
		mode_t got = created_mode(d.fd, "u", r->mode, fl, false);
		mode_t kern = created_mode(d.fd, "k", r->mode, fl, true);
		int checked = create_and_check(d.fd, "m", r->mode, xa3, 3, fl);
		if (got != r->want || kern != r->want || checked) {
			fprintf(stderr, "tmpfile mode row \"%s\" (strategy %#llx): got %04o, want %04o, "
					"open(2) %04o; create_and_check %s\n",
				r->name, (unsigned long long)fl, (unsigned)got, (unsigned)r->want,
				(unsigned)kern, checked ? "failed (see above)" : "passed");
			bad++;
			if (checked)
				break; /* it may have left "m" behind for the next rows */
		}
	}
	umask(old);
	tdir_free(&d);
	ck_assert_msg(bad == 0, "%d tmpfile mode rows failed (named above)", bad);
}
END_TEST

START_TEST(setgid_directory)
{
	FX_REQUIRE_ROOT("chown of a directory to gid 4242");
	uint64_t fl = strategies[_i];
	struct tdir d;
	tdir_make_xattrs(&d, "tmpfile");
	ck_assert_int_eq(mkdirat(d.fd, "sg", 0775), 0);
	ck_assert_int_eq(fchownat(d.fd, "sg", (uid_t)-1, 4242, 0), 0);
	ck_assert_int_eq(fchmodat(d.fd, "sg", 02775, 0), 0);
	int sg = openat(d.fd, "sg", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	ck_assert_int_ge(sg, 0);
	RUN(create_and_check(sg, "f", 02755, xa3, 3, fl));
	RUN(create_and_check(sg, "f", 0644, xa3, 3, fl));
	int fd = safe_tmpfile_xattr(sg, "f", 02750, xa3, 3, fl);
	ck_assert_int_ge(fd, 0);
	struct stat st;
	ck_assert_int_eq(fstat(fd, &st), 0);
	ck_assert_int_eq(st.st_gid, 4242);
	mode_t um = umask(022);
	umask(um);
	ck_assert_int_eq(st.st_mode & 07777, 02750 & ~um); /* root keeps S_ISGID */
	close(fd);
	close(sg);
	tdir_free(&d);
}
END_TEST

/* Build a POSIX ACL xattr value. Entries: {tag, perm, id}. */
struct acl_ent {
	unsigned short tag, perm;
	unsigned int id;
};
static size_t acl_value(char *buf, const struct acl_ent *e, size_t n)
{
	unsigned int v = 2; /* POSIX_ACL_XATTR_VERSION, little endian on the supported arches */
	memcpy(buf, &v, 4);
	for (size_t i = 0; i < n; i++)
		memcpy(buf + 4 + i * 8, &e[i], 8);
	return 4 + n * 8;
}
#define ACL_USER_OBJ 0x01
#define ACL_USER 0x02
#define ACL_GROUP_OBJ 0x04
#define ACL_MASK 0x10
#define ACL_OTHER 0x20
#define ACL_NOID 0xffffffffu

START_TEST(default_acl)
{
	uint64_t fl = strategies[_i];
	struct tdir d;
	tdir_make(&d, "tmpfile");
	mode_t old = umask(077);
	char buf[128];
	/* minimal default ACL u::rwx g::r-x o::--- replaces the umask */
	ck_assert_int_eq(mkdirat(d.fd, "min", 0755), 0);
	static const struct acl_ent amin[] = {
		{ ACL_USER_OBJ, 7, ACL_NOID },
		{ ACL_GROUP_OBJ, 5, ACL_NOID },
		{ ACL_OTHER, 0, ACL_NOID },
	};
	size_t len = acl_value(buf, amin, 3);
	int mfd = openat(d.fd, "min", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	ck_assert_int_ge(mfd, 0);
	if (fsetxattr(mfd, "system.posix_acl_default", buf, len, 0) < 0) {
		int err = errno;
		close(mfd);
		umask(old);
		tdir_free(&d);
		ck_assert_msg(err == EOPNOTSUPP, "setting a default ACL: %s", strerror(err));
		fx_skip("no ACL support on the test filesystem (EOPNOTSUPP)");
	}
	int fd = safe_tmpfile_xattr(mfd, "f", 0666, xa3, 3, fl);
	ck_assert_int_ge(fd, 0);
	struct stat st;
	ck_assert_int_eq(fstat(fd, &st), 0);
	ck_assert_int_eq(st.st_mode & 07777, 0640); /* the umask (077) would give 0600 */
	close(fd);
	ck_assert_int_eq(unlinkat(mfd, "f", 0), 0);
	static const mode_t modes[] = { 0, 0444, 0640, 0666, 0777 };
	for (size_t i = 0; i < 5; i++)
		RUN(create_and_check(mfd, "f", modes[i], xa3, 3, fl));
	close(mfd);

	/* extended default ACL: the new file gets an access ACL as well */
	ck_assert_int_eq(mkdirat(d.fd, "ext", 0755), 0);
	static const struct acl_ent aext[] = {
		{ ACL_USER_OBJ, 7, ACL_NOID },
		{ ACL_USER, 7, 1234 },
		{ ACL_GROUP_OBJ, 5, ACL_NOID },
		{ ACL_MASK, 7, ACL_NOID },     { ACL_OTHER, 5, ACL_NOID },
	};
	len = acl_value(buf, aext, 5);
	int efd = openat(d.fd, "ext", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	ck_assert_int_ge(efd, 0);
	ck_assert_int_eq(fsetxattr(efd, "system.posix_acl_default", buf, len, 0), 0);
	for (size_t i = 0; i < 5; i++)
		RUN(create_and_check(efd, "f", modes[i], xa3, 3, fl));
	fd = safe_tmpfile_xattr(efd, "f", 0640, xa3, 3, fl);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_gt(fgetxattr(fd, "system.posix_acl_access", buf, sizeof(buf)), 0);
	close(fd);
	close(efd);
	umask(old);
	tdir_free(&d);
}
END_TEST

START_TEST(acl_xattr_from_caller)
{
	/* A caller-supplied access ACL defines the permission bits itself: it
	 * is applied after the mode, so the result is the ACL. */
	uint64_t fl = strategies[_i];
	struct tdir d;
	tdir_make(&d, "tmpfile");
	char buf[128];
	static const struct acl_ent a[] = {
		{ ACL_USER_OBJ, 6, ACL_NOID },
		{ ACL_USER, 4, 1234 },
		{ ACL_GROUP_OBJ, 4, ACL_NOID },
		{ ACL_MASK, 4, ACL_NOID },     { ACL_OTHER, 0, ACL_NOID },
	};
	size_t len = acl_value(buf, a, 5);
	struct safe_xattr x[] = { { "system.posix_acl_access", buf, len }, { "user.a", "1", 1 } };
	int fd = safe_tmpfile_xattr(d.fd, "f", 0, x, 2, fl);
	if (fd < 0 && errno == EOPNOTSUPP) {
		tdir_free(&d);
		fx_skip("no POSIX ACLs on the test directory's filesystem (EOPNOTSUPP)");
	}
	ck_assert_int_ge(fd, 0);
	struct stat st;
	ck_assert_int_eq(fstat(fd, &st), 0);
	ck_assert_int_eq(st.st_mode & 0777, 0640);
	char got[128];
	ck_assert_int_eq(fgetxattr(fd, "system.posix_acl_access", got, sizeof(got)), (ssize_t)len);
	ck_assert_int_eq(memcmp(got, buf, len), 0);
	close(fd);
	tdir_free(&d);
}
END_TEST

static int replace_errors(int dfd, uint64_t fl)
{
	EXPECT_FAIL(dfd, EEXIST, safe_tmpfile_xattr(dfd, "target", 0644, xa3, 3, fl));
	EXPECT_FAIL(dfd, EEXIST, safe_tmpfile_xattr(dfd, "adir", 0644, xa3, 3, fl));
	EXPECT_FAIL(dfd, EEXIST, safe_tmpfile_xattr(dfd, "alink", 0644, xa3, 3, fl));
	/* a directory cannot be replaced by a file */
	EXPECT_FAIL(dfd, EISDIR,
		    safe_tmpfile_xattr(dfd, "adir", 0644, xa3, 3, fl | SAFE_TMPFILE_REPLACE));
	return 0;
}

/* A snapshot of everything below path, without the line of path itself
 * (whose mtime a failed call that created and removed a name may change). */
static char *snapshot_below(const char *path)
{
	char *s = fx_tree_snapshot(path);
	char *nl = strchr(s, '\n');
	ck_assert(nl && s[0] == '.' && s[1] == ' ');
	memmove(s, nl + 1, strlen(nl + 1) + 1);
	return s;
}

START_TEST(replaces)
{
	uint64_t fl = strategies[_i];
	struct tdir d;
	tdir_make_xattrs(&d, "tmpfile");
	static const char *const spec[] = {
		"f target old content", "d adir", "l alink target", NULL,
	};
	fx_build(d.fd, spec);
	int old = openat(d.fd, "target", O_RDONLY | O_CLOEXEC);
	ck_assert_int_ge(old, 0);
	char *snap = snapshot_below(d.path);

	RUN(replace_errors(d.fd, fl));
	char *snap2 = snapshot_below(d.path);
	ck_assert_str_eq(snap, snap2);
	free(snap2);

	int fd = safe_tmpfile_xattr(d.fd, "target", 0600, xa3, 3,
				    fl | SAFE_TMPFILE_REPLACE | SAFE_TMPFILE_SYNC);
	ck_assert_int_ge(fd, 0);
	RUN(check_fd(fd, d.fd, "target") || check_xattrs(fd, xa3, 3));
	close(fd);
	/* the old file is intact, just unnamed */
	char buf[32];
	ck_assert_int_eq(read(old, buf, sizeof(buf)), 11);
	ck_assert_int_eq(memcmp(buf, "old content", 11), 0);
	close(old);
	/* a symlink is replaced itself, not followed */
	fd = safe_tmpfile_xattr(d.fd, "alink", 0600, xa3, 3, fl | SAFE_TMPFILE_REPLACE);
	ck_assert_int_ge(fd, 0);
	RUN(check_fd(fd, d.fd, "alink"));
	ck_assert(!fx_same_object(fd, d.fd, "target"));
	close(fd);
	char *ls = fx_dir_listing(d.fd, ".");
	ck_assert_str_eq(ls, "adir\nalink\ntarget\n");
	free(ls);
	free(snap);
	tdir_free(&d);
}
END_TEST

/*
 * safe_tmpfile_xattr() refusals as named rows: the directory (the tree's top
 * or its "sub"), the path, the mode, the flags, the attributes and the errno.
 * After each row the directory's listing, the open-fd count and everything
 * below the tree (the old "file" included) are as they were; every failure
 * names its row. The kernel is no oracle here: a plain call would create.
 */
enum err_xattrs {
	X_ONE,          /* { "user.a", "v" } */
	X_NULL,         /* the array is NULL */
	X_NULL_NAME,    /* a NULL name */
	X_NULL_VALUE,   /* a NULL value */
	X_BAD_NAME,     /* the row's xname as the name */
	X_LONG_NAME,    /* "user." and 251 x: 256 bytes */
	X_HUGE,         /* a 65,537-byte value */
	X_TWICE,        /* "user.a" twice */
	X_AND_SECOND,   /* "user.a", then the row's xname = xvalue */
	X_DEFAULT_ACL,  /* "user.a", then a well-formed default ACL */
};

struct err_row {
	const char *name;
	bool in_sub;       /* the call's dirfd is "sub", else the tree's top */
	const char *path;  /* LONG_PATH: 256 'a' */
	mode_t mode;
	uint64_t flags;    /* or-ed with the strategy */
	enum err_xattrs x;
	const char *xname, *xvalue;
	int err;
};

#define LONG_PATH ((const char *)1)
#define REPL SAFE_TMPFILE_REPLACE
static const struct err_row err_rows[] = {
	/* flags and mode */
	{ "an unknown flag bit", false, "n", 0644, 1ULL << 60, X_ONE, NULL, NULL, EINVAL },
	{ "SAFE_FOLLOW", false, "n", 0644, SAFE_FOLLOW, X_ONE, NULL, NULL, EINVAL },
	{ "BENEATH and IN_ROOT together", false, "n", 0644,
	  SAFE_RESOLVE_BENEATH | SAFE_RESOLVE_IN_ROOT, X_ONE, NULL, NULL, EINVAL },
	{ "a file type in the mode", false, "n", S_IFREG | 0644, 0, X_ONE, NULL, NULL, EINVAL },
	/* the path */
	{ "a NULL path", false, NULL, 0644, 0, X_ONE, NULL, NULL, EFAULT },
	{ "an empty path", false, "", 0644, 0, X_ONE, NULL, NULL, ENOENT },
	{ "\".\" names no file", false, ".", 0644, 0, X_ONE, NULL, NULL, EINVAL },
	{ "\"..\" names no file", false, "..", 0644, 0, X_ONE, NULL, NULL, EINVAL },
	{ "\"sub/.\" names no file", false, "sub/.", 0644, 0, X_ONE, NULL, NULL, EINVAL },
	{ "\"sub/..\" names no file", false, "sub/..", 0644, 0, X_ONE, NULL, NULL, EINVAL },
	{ "a trailing slash", false, "n/", 0644, 0, X_ONE, NULL, NULL, EINVAL },
	{ "trailing slashes after a directory", false, "sub/n//", 0644, 0, X_ONE, NULL, NULL,
	  EINVAL },
	{ "\"/\" names no file", false, "/", 0644, 0, X_ONE, NULL, NULL, EINVAL },
	{ "a 256-byte last name", false, LONG_PATH, 0644, 0, X_ONE, NULL, NULL, ENAMETOOLONG },
	{ "a missing directory", false, "nodir/n", 0644, 0, X_ONE, NULL, NULL, ENOENT },
	{ "a file on the way", false, "file/n", 0644, 0, X_ONE, NULL, NULL, ENOTDIR },
	{ "\"..\" out of sub", true, "../n", 0644, 0, X_ONE, NULL, NULL, EXDEV },
	{ "an absolute path from sub", true, "/n", 0644, 0, X_ONE, NULL, NULL, EXDEV },
	{ "a link to an absolute directory", false, "abs/n", 0644, 0, X_ONE, NULL, NULL, EXDEV },
	{ "a link to \"..\"", false, "up/n", 0644, 0, X_ONE, NULL, NULL, EXDEV },
	{ "a link to \"..\", REPLACE", false, "up/n", 0644, REPL, X_ONE, NULL, NULL, EXDEV },
	{ "a link to \"..\", NO_SYMLINKS", false, "up/n", 0644, SAFE_RESOLVE_NO_SYMLINKS, X_ONE,
	  NULL, NULL, ELOOP },
	/* the attribute array */
	{ "a NULL array", false, "n", 0644, 0, X_NULL, NULL, NULL, EFAULT },
	{ "a NULL name", false, "n", 0644, 0, X_NULL_NAME, NULL, NULL, EFAULT },
	{ "a NULL value", false, "n", 0644, 0, X_NULL_VALUE, NULL, NULL, EFAULT },
	{ "an empty name", false, "n", 0644, 0, X_BAD_NAME, "", NULL, EINVAL },
	{ "a name without a namespace", false, "n", 0644, 0, X_BAD_NAME, "noprefix", NULL, EINVAL },
	{ "a namespace without a name", false, "n", 0644, 0, X_BAD_NAME, "user.", NULL, EINVAL },
	{ "a namespace without its dot", false, "n", 0644, 0, X_BAD_NAME, "user", NULL, EINVAL },
	{ "\"trusted.\" without a name", false, "n", 0644, 0, X_BAD_NAME, "trusted.", NULL,
	  EINVAL },
	{ "an unknown namespace", false, "n", 0644, 0, X_BAD_NAME, "foo.bar", NULL, EINVAL },
	{ "a namespace in capitals", false, "n", 0644, 0, X_BAD_NAME, "USER.a", NULL, EINVAL },
	{ "a leading dot", false, "n", 0644, 0, X_BAD_NAME, ".user.a", NULL, EINVAL },
	{ "a 256-byte name", false, "n", 0644, 0, X_LONG_NAME, NULL, NULL, EINVAL },
	{ "a 65,537-byte value", false, "n", 0644, 0, X_HUGE, NULL, NULL, E2BIG },
	{ "a name given twice", false, "n", 0644, 0, X_TWICE, NULL, NULL, EINVAL },
	/* attributes the kernel refuses, at each stage: a malformed capability
	 * (before the mode), a malformed ACL (after the mode) */
	{ "a malformed capability", false, "n", 0644, 0, X_AND_SECOND, "security.capability", "x",
	  EINVAL },
	{ "a malformed access ACL", false, "n", 0644, 0, X_AND_SECOND, "system.posix_acl_access",
	  "xx", EINVAL },
	{ "a malformed access ACL, REPLACE of \"file\"", false, "file", 0644, REPL, X_AND_SECOND,
	  "system.posix_acl_access", "xx", EINVAL },
	{ "a (well-formed) default ACL on a regular file", false, "n", 0644, 0, X_DEFAULT_ACL, NULL,
	  NULL, EACCES },
	/* an unknown attribute in a known namespace is the filesystem's call */
	{ "an unknown system. attribute", false, "n", 0644, 0, X_AND_SECOND, "system.nonexistent",
	  "x", EOPNOTSUPP },
	{ "an unknown system. attribute, REPLACE of \"file\"", false, "file", 0644, REPL,
	  X_AND_SECOND, "system.nonexistent", "x", EOPNOTSUPP },
};
#undef REPL

/* The attributes of a row in x[2]: their number, or -1 for a NULL array. */
static int err_row_xattrs(const struct err_row *r, struct safe_xattr x[2])
{
	static char longx[257], huge[65537], acl[64];
	static size_t acllen;
	if (!acllen) {
		static const struct acl_ent amin[] = {
			{ ACL_USER_OBJ, 7, ACL_NOID },
			{ ACL_GROUP_OBJ, 5, ACL_NOID },
			{ ACL_OTHER, 0, ACL_NOID },
		};
		memcpy(longx, "user.", 5);
		memset(longx + 5, 'x', 251);
		acllen = acl_value(acl, amin, 3);
	}
	x[0] = (struct safe_xattr){ "user.a", "v", 1 };
	switch (r->x) {
	case X_ONE: return 1;
	case X_NULL: return -1;
	case X_NULL_NAME: x[0].name = NULL; return 1;
	case X_NULL_VALUE: x[0].value = NULL; return 1;
	case X_BAD_NAME: x[0].name = r->xname; return 1;
	case X_LONG_NAME: x[0].name = longx; return 1;
	case X_HUGE: x[0] = (struct safe_xattr){ "user.a", huge, sizeof(huge) }; return 1;
	case X_TWICE: x[1] = (struct safe_xattr){ "user.a", "w", 1 }; return 2;
	case X_AND_SECOND:
		x[1] = (struct safe_xattr){ r->xname, r->xvalue, strlen(r->xvalue) };
		return 2;
	case X_DEFAULT_ACL:
		x[1] = (struct safe_xattr){ "system.posix_acl_default", acl, acllen };
		return 2;
	}
	return -1;
}

static int errors_case(struct tdir *d, uint64_t fl)
{
	int dfd = d->fd;
	static const char *const spec[] = { "d sub", "f file x", "l up ..", "l abs /tmp", NULL };
	fx_build(dfd, spec);
	int sub = openat(dfd, "sub", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	CHILD_CHECK(sub >= 0);
	char *snap = snapshot_below(d->path);
	char longname[257];
	memset(longname, 'a', 256);
	longname[256] = '\0';
	int bad = 0;
	for (size_t k = 0; k < sizeof(err_rows) / sizeof(err_rows[0]); k++) {
		const struct err_row *r = &err_rows[k];
		int at = r->in_sub ? sub : dfd;
		const char *path = r->path == LONG_PATH ? longname : r->path;
		struct safe_xattr x[2];
		int n = err_row_xattrs(r, x);
		char *ls = fx_dir_listing(at, ".");
		int nfd = fx_fd_count();
		errno = 0;
		int rc = safe_tmpfile_xattr(at, path, r->mode, n < 0 ? NULL : x, n < 0 ? 1 : (size_t)n,
					    fl | r->flags);
		int e = rc < 0 ? errno : 0;
		if (rc >= 0)
			close(rc);
		char *ls2 = fx_dir_listing(at, ".");
		int nfd2 = fx_fd_count();
		char *snap2 = snapshot_below(d->path);
		bool listed = !strcmp(ls, ls2), same = !strcmp(snap, snap2);
		free(ls);
		free(ls2);
		free(snap2);
		if (rc != -1 || e != r->err || !listed || !same || nfd != nfd2) {
			fprintf(stderr, "tmpfile error row \"%s\" (strategy %#llx): returned %d, "
					"got %s, want %s; listing %s; tree %s; fds %d -> %d\n",
				r->name, (unsigned long long)fl, rc, e ? strerrorname_np(e) : "0",
				strerrorname_np(r->err), listed ? "unchanged" : "CHANGED",
				same ? "unchanged" : "CHANGED", nfd, nfd2);
			bad++;
			if (!same || !listed)
				break; /* the tree is no longer the one the next rows expect */
		}
	}
	close(sub);
	free(snap);
	CHILD_CHECK(bad == 0, "%d tmpfile error rows failed (named above)", bad);
	return 0;
}
#undef LONG_PATH

START_TEST(errors_leave_nothing)
{
	struct tdir d;
	tdir_make_xattrs(&d, "tmpfile");
	int r = errors_case(&d, strategies[_i]);
	tdir_free(&d);
	ck_assert_msg(r == 0, "see stderr");
}
END_TEST

static int is_ext4(int fd)
{
	struct statfs sfs;
	return fstatfs(fd, &sfs) == 0 && sfs.f_type == EXT4_SUPER_MAGIC;
}

static int ext4_enospc(int dfd, uint64_t fl, const char *v, size_t vlen)
{
	struct safe_xattr big[] = { { "user.a", v, 100 }, { "user.big", v, vlen } };
	struct safe_xattr four[] = {
		{ "user.a", v, 1000 },
		{ "user.b", v, 1000 },
		{ "user.c", v, 1000 },
		{ "user.d", v, 1000 },
	};
	EXPECT_FAIL(dfd, ENOSPC, safe_tmpfile_xattr(dfd, "f", 0644, big, 2, fl));
	EXPECT_FAIL(dfd, ENOSPC, safe_tmpfile_xattr(dfd, "f", 0644, four, 4, fl));
	int fd = safe_tmpfile_xattr(dfd, "f", 0644, NULL, 0, fl);
	CHILD_CHECK(fd >= 0);
	close(fd);
	EXPECT_FAIL(dfd, ENOSPC,
		    safe_tmpfile_xattr(dfd, "f", 0644, big, 2, fl | SAFE_TMPFILE_REPLACE));
	CHILD_CHECK(unlinkat(dfd, "f", 0) == 0);
	return 0;
}

START_TEST(ext4_xattr_space)
{
	uint64_t fl = strategies[_i];
	struct tdir d;
	tdir_make(&d, "tmpfile");
	if (!is_ext4(d.fd)) {
		char why[PATH_MAX + 32];
		snprintf(why, sizeof(why), "%s is not ext4", d.path);
		tdir_free(&d);
		fx_skip("%s", why);
	}
	static char v[16384];
	memset(v, 'v', sizeof(v));
	struct safe_xattr fit[] = {
		{ "user.a", v, 1000 },
		{ "user.b", v, 1000 },
		{ "user.c", v, 1000 },
	};
	RUN(create_and_check(d.fd, "f", 0644, fit, 3, fl));
	/* the kernel's verdict on a plain file is the oracle (ENOSPC here,
	 * unless the filesystem has ea_inode) */
	int pf = openat(d.fd, "plain", O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	ck_assert_int_ge(pf, 0);
	int kr = fsetxattr(pf, "user.big", v, sizeof(v), 0);
	int kerr = errno;
	close(pf);
	ck_assert_int_eq(unlinkat(d.fd, "plain", 0), 0);
	if (kr == 0) {
		fprintf(stderr, "ext4_xattr_space: this ext4 stores 16 KiB values (ea_inode)\n");
	} else {
		ck_assert_int_eq(kerr, ENOSPC);
		RUN(ext4_enospc(d.fd, fl, v, sizeof(v)));
	}
	tdir_free(&d);
}
END_TEST

/* ---------------------------------------------------------------- two-phase */

START_TEST(two_phase)
{
	uint64_t fl = strategies[_i];
	bool named = fl & T_NAMED;
	struct tdir d;
	tdir_make_xattrs(&d, "tmpfile");
	struct safe_tmpfile *t = NULL;
	int fd = tmp_open(d.fd, "doc", 0444, fl, &t);
	ck_assert_int_ge(fd, 0);
	ck_assert_ptr_nonnull(t);
	struct stat st;
	ck_assert_int_eq(fstat(fd, &st), 0);
	ck_assert_int_eq(st.st_nlink, named ? 1 : 0);
	ck_assert_int_eq(count_hidden(d.fd), named ? 1 : 0);
	ck_assert_int_eq(faccessat(d.fd, "doc", F_OK, AT_SYMLINK_NOFOLLOW), -1);
	ck_assert_int_eq(write(fd, "payload", 7), 7);
	ck_assert_int_eq(fsetxattr(fd, "user.own", "mine", 4, 0), 0);
	int fd2 = safe_tmpfile_link(t, xa3, 3, SAFE_TMPFILE_SYNC);
	ck_assert_int_eq(fd2, fd);
	RUN(check_fd(fd, d.fd, "doc") || check_xattrs(fd, xa3, 3) ||
	    check_like_oracle(fd, d.fd, 0444));
	char buf[16];
	ck_assert_int_eq(fgetxattr(fd, "user.own", buf, sizeof(buf)), 4);
	ck_assert_int_eq(pread(fd, buf, sizeof(buf), 0), 7);
	ck_assert_int_eq(memcmp(buf, "payload", 7), 0);
	ck_assert_int_eq(write(fd, "!", 1), 1);
	close(fd);
	char *ls = fx_dir_listing(d.fd, ".");
	ck_assert_str_eq(ls, "doc\n");
	free(ls);

	/* discard leaves nothing */
	fd = tmp_open(d.fd, "gone", 0644, fl, &t);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, "x", 1), 1);
	ck_assert_int_eq(safe_tmpfile_discard(t), 0);
	ls = fx_dir_listing(d.fd, ".");
	ck_assert_str_eq(ls, "doc\n");
	free(ls);
	ck_assert_int_eq(safe_tmpfile_discard(NULL), 0);

	/* a failed link (EEXIST) leaves the handle usable */
	fd = tmp_open(d.fd, "doc", 0640, fl, &t);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, "new", 3), 3);
	int nfd = fx_fd_count();
	ck_assert_int_eq(safe_tmpfile_link(t, xa3, 3, 0), -1);
	ck_assert_int_eq(errno, EEXIST);
	ck_assert_int_eq(safe_tmpfile_link(t, xa3, 3, 1ULL << 60), -1);
	ck_assert_int_eq(errno, EINVAL);
	ck_assert_int_eq(safe_tmpfile_link(t, xa3, 3, SAFE_TMPFILE_PARENTS), -1);
	ck_assert_int_eq(errno, EINVAL);
	struct safe_xattr dup[] = { { "user.a", "", 0 }, { "user.a", "", 0 } };
	ck_assert_int_eq(safe_tmpfile_link(t, dup, 2, 0), -1);
	ck_assert_int_eq(errno, EINVAL);
	ck_assert_int_eq(nfd, fx_fd_count());
	ck_assert_int_eq(count_hidden(d.fd), named ? 1 : 0);
	ck_assert_int_eq(unlinkat(d.fd, "doc", 0), 0);
	fd2 = safe_tmpfile_link(t, xa3, 3, 0);
	ck_assert_int_eq(fd2, fd);
	RUN(check_fd(fd, d.fd, "doc") || check_xattrs(fd, xa3, 3) ||
	    check_like_oracle(fd, d.fd, 0640));
	close(fd);

	/* ... and REPLACE after a failed plain link */
	fd = tmp_open(d.fd, "doc", 0, fl, &t);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(safe_tmpfile_link(t, xa3, 3, 0), -1);
	ck_assert_int_eq(errno, EEXIST);
	fd2 = safe_tmpfile_link(t, xa3, 3, SAFE_TMPFILE_REPLACE);
	ck_assert_int_eq(fd2, fd);
	RUN(check_fd(fd, d.fd, "doc") || check_like_oracle(fd, d.fd, 0));
	close(fd);
	ls = fx_dir_listing(d.fd, ".");
	ck_assert_str_eq(ls, "doc\n");
	free(ls);
	tdir_free(&d);
}
END_TEST

START_TEST(two_phase_lost_parent)
{
	/* The directory goes away before publication (unnamed file), or the
	 * hidden name is removed by someone else (fallback): the link fails,
	 * the handle can still be discarded, nothing is left. */
	uint64_t fl = strategies[_i];
	struct tdir d;
	tdir_make_xattrs(&d, "tmpfile");
	struct safe_tmpfile *t;
	if (!(fl & T_NAMED)) {
		ck_assert_int_eq(mkdirat(d.fd, "sub", 0755), 0);
		int fd = tmp_open(d.fd, "sub/f", 0644, fl, &t);
		ck_assert_int_ge(fd, 0);
		ck_assert_int_eq(unlinkat(d.fd, "sub", AT_REMOVEDIR), 0);
		ck_assert_int_eq(safe_tmpfile_link(t, xa3, 3, 0), -1);
		ck_assert_int_eq(errno, ENOENT);
		ck_assert_int_eq(safe_tmpfile_link(t, xa3, 3, SAFE_TMPFILE_REPLACE), -1);
		ck_assert_int_eq(errno, ENOENT);
	} else {
		int fd = tmp_open(d.fd, "f", 0644, fl, &t);
		ck_assert_int_ge(fd, 0);
		char *ls = fx_dir_listing(d.fd, ".");
		ck_assert_int_eq(strncmp(ls, ".safeopen-", 10), 0);
		ls[strlen(ls) - 1] = '\0';
		/* someone swaps another file in under the hidden name */
		ck_assert_int_eq(unlinkat(d.fd, ls, 0), 0);
		int other = openat(d.fd, ls, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
		ck_assert_int_ge(other, 0);
		close(other);
		ck_assert_int_eq(safe_tmpfile_link(t, xa3, 3, 0), -1);
		ck_assert_int_eq(errno, ENOENT);
		ck_assert_int_eq(faccessat(d.fd, "f", F_OK, AT_SYMLINK_NOFOLLOW), -1);
		/* discard does not remove what is not its own */
		ck_assert_int_eq(safe_tmpfile_discard(t), 0);
		ck_assert_int_eq(faccessat(d.fd, ls, F_OK, AT_SYMLINK_NOFOLLOW), 0);
		ck_assert_int_eq(unlinkat(d.fd, ls, 0), 0);
		free(ls);
		t = NULL;
	}
	ck_assert_int_eq(safe_tmpfile_discard(t), 0);
	char *ls = fx_dir_listing(d.fd, ".");
	ck_assert_str_eq(ls, "");
	free(ls);
	tdir_free(&d);
}
END_TEST

/*
 * safe_tmpfile_open() refusals as named rows: the path, the flags, whether
 * the handle's out-parameter is given, the errno. After each row the
 * directory's listing and the open-fd count are as they were and the handle
 * pointer was not written; every failure names its row.
 */
struct tp_err_row {
	const char *name;
	const char *path;
	uint64_t flags;  /* or-ed with the strategy */
	bool no_handle;  /* the out-parameter is NULL */
	int err;
};

static const struct tp_err_row tp_err_rows[] = {
	{ "a NULL handle pointer", "n", 0, true, EFAULT },
	{ "a NULL path", NULL, 0, false, EFAULT },
	{ "REPLACE belongs to the link", "n", SAFE_TMPFILE_REPLACE, false, EINVAL },
	{ "SYNC belongs to the link", "n", SAFE_TMPFILE_SYNC, false, EINVAL },
	{ "an unknown flag bit", "n", 1ULL << 62, false, EINVAL },
	{ "\"..\" names no file", "..", 0, false, EINVAL },
	{ "a trailing slash", "n/", 0, false, EINVAL },
	{ "an empty path", "", 0, false, ENOENT },
	{ "\"..\" out of the directory", "../n", 0, false, EXDEV },
	{ "an absolute path", "/n", 0, false, EXDEV },
};

static int two_phase_errors_case(int dfd, uint64_t fl)
{
	int bad = 0;
	for (size_t k = 0; k < sizeof(tp_err_rows) / sizeof(tp_err_rows[0]); k++) {
		const struct tp_err_row *r = &tp_err_rows[k];
		struct safe_tmpfile *t = (struct safe_tmpfile *)&t;
		struct safe_tmpfile *const sentinel = t;
		char *ls = fx_dir_listing(dfd, ".");
		int nfd = fx_fd_count();
		errno = 0;
		int rc = safe_tmpfile_open(dfd, r->path, 0644, fl | r->flags, r->no_handle ? NULL : &t);
		int e = rc < 0 ? errno : 0;
		if (rc == 0 && t != sentinel)
			safe_tmpfile_discard(t);
		char *ls2 = fx_dir_listing(dfd, ".");
		int nfd2 = fx_fd_count();
		bool listed = !strcmp(ls, ls2);
		free(ls);
		free(ls2);
		if (rc != -1 || e != r->err || !listed || nfd != nfd2 || t != sentinel) {
			fprintf(stderr, "two-phase error row \"%s\" (strategy %#llx): returned %d, "
					"got %s, want %s; listing %s; fds %d -> %d; handle %s\n",
				r->name, (unsigned long long)fl, rc, e ? strerrorname_np(e) : "0",
				strerrorname_np(r->err), listed ? "unchanged" : "CHANGED", nfd, nfd2,
				t == sentinel ? "untouched" : "WRITTEN");
			bad++;
			if (!listed)
				break; /* the directory is no longer the one the next rows expect */
		}
	}
	CHILD_CHECK(bad == 0, "%d two-phase error rows failed (named above)", bad);
	EXPECT_FAIL(dfd, EFAULT, safe_tmpfile_link(NULL, NULL, 0, 0));
	return 0;
}

START_TEST(two_phase_errors)
{
	struct tdir d;
	tdir_make(&d, "tmpfile");
	int r = two_phase_errors_case(d.fd, strategies[_i]);
	tdir_free(&d);
	ck_assert_msg(r == 0, "see stderr");
}
END_TEST

/* ---------------------------------------------------------------- which xattr failed */

/*
 * safe_tmpfile_failed_xattr(): after a link that fsetxattr(2) refused, the
 * index of the refused attribute (a malformed ACL: EINVAL from the kernel,
 * or EOPNOTSUPP without ACLs); the handle stays usable and a second link
 * without that attribute publishes the file with the others. ENODATA before
 * any link and after a failure that was not an attribute's; EFAULT for NULL.
 */
START_TEST(failed_xattr_index)
{
	struct tdir d;
	tdir_make(&d, "tmpfile");
	bool user = fx_user_xattrs(d.fd);
	uint64_t fl = strategies[_i];
	errno = 0;
	ck_assert_int_eq(safe_tmpfile_failed_xattr(NULL), -1);
	ck_assert_int_eq(errno, EFAULT);
	ck_assert_int_eq(mkdirat(d.fd, "sub", 0755), 0);
	int ex = openat(d.fd, "sub/taken", O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0644);
	ck_assert_int_ge(ex, 0);
	close(ex);

	struct safe_tmpfile *t;
	ck_assert_int_eq(safe_tmpfile_open(d.fd, "sub/taken", 0644, fl, &t), 0);
	errno = 0;
	ck_assert_int_eq(safe_tmpfile_failed_xattr(t), -1);
	ck_assert_int_eq(errno, ENODATA); /* no link yet */
	errno = 0;
	ck_assert_int_eq(safe_tmpfile_link(t, NULL, 0, 0), -1);
	ck_assert_int_eq(errno, EEXIST);
	errno = 0;
	ck_assert_int_eq(safe_tmpfile_failed_xattr(t), -1);
	ck_assert_int_eq(errno, ENODATA); /* EEXIST is no attribute's */
	ck_assert_int_eq(safe_tmpfile_discard(t), 0);

	static const char bad_acl[] = "not an ACL";
	const struct safe_xattr with_user[] = {
		{ "user.a", "1", 1 },
		{ "system.posix_acl_access", bad_acl, sizeof(bad_acl) },
		{ "user.b", "22", 2 },
	};
	const struct safe_xattr acl_only[] = {
		{ "system.posix_acl_access", bad_acl, sizeof(bad_acl) },
	};
	const struct safe_xattr *x = user ? with_user : acl_only;
	size_t n = user ? 3 : 1;
	ssize_t want = user ? 1 : 0;
	ck_assert_int_eq(safe_tmpfile_open(d.fd, "sub/new", 0644, fl, &t), 0);
	errno = 0;
	ck_assert_int_eq(safe_tmpfile_link(t, x, n, 0), -1);
	int err = errno;
	ck_assert_msg(err == EINVAL || err == EOPNOTSUPP, "link: %s", strerror(err));
	ck_assert_int_eq(safe_tmpfile_failed_xattr(t), want);
	ck_assert_msg(faccessat(d.fd, "sub/new", F_OK, AT_SYMLINK_NOFOLLOW) < 0, "published");
	/* Without the refused one: published, with the others. */
	const struct safe_xattr rest[] = { { "user.a", "1", 1 }, { "user.b", "22", 2 } };
	int fd = safe_tmpfile_link(t, rest, user ? 2 : 0, 0);
	ck_assert_msg(fd >= 0, "second link: %s", strerror(errno));
	if (user)
		ck_assert_int_eq(check_xattrs(fd, rest, 2), 0);
	close(fd);
	tdir_free(&d);
}
END_TEST

/* ---------------------------------------------------------------- descriptor misuse */

/* The first hidden name in dirfd, or NULL (malloc'd). */
static char *hidden_entry(int dirfd)
{
	char *ls = fx_dir_listing(dirfd, ".");
	char *p = strstr(ls, ".safeopen-");
	char *r = NULL;
	if (p) {
		*strchrnul(p, '\n') = '\0';
		r = strdup(p);
	}
	free(ls);
	return r;
}

/* How the caller breaks the rule "never close the lent descriptor". */
enum misuse { CLOSED, REUSED, REOPENED_RDONLY };

static int misuse_case(int dfd, uint64_t fl, enum misuse how, bool via_link)
{
	bool named = fl & T_NAMED;
	int nfd = fx_fd_count();
	int victim = openat(dfd, "victim", O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	CHILD_CHECK(victim >= 0);
	CHILD_CHECK(write(victim, "victim", 6) == 6);
	close(victim);
	struct safe_tmpfile *t;
	CHILD_CHECK(safe_tmpfile_open(dfd, "f", 0644, fl, &t) == 0);
	int fd = safe_tmpfile_fd(t);
	CHILD_CHECK(fd >= 0 && safe_tmpfile_fd(t) == fd);
	CHILD_CHECK(fcntl(fd, F_GETFD) & FD_CLOEXEC);
	CHILD_CHECK((fcntl(fd, F_GETFL) & O_ACCMODE) == O_RDWR);
	CHILD_CHECK(write(fd, "secret", 6) == 6);
	char *hidden = named ? hidden_entry(dfd) : NULL;
	if (named)
		CHILD_CHECK(hidden && hidden[0] == '.');
	CHILD_CHECK(close(fd) == 0);
	int other = -1;
	if (how == REUSED) /* the lowest free number: the one just closed */
		other = openat(dfd, "victim", O_RDWR | O_CLOEXEC);
	else if (how == REOPENED_RDONLY)
		other = openat(dfd, hidden, O_RDONLY | O_CLOEXEC);
	if (how != CLOSED)
		CHILD_CHECK(other == fd, "reopened as %d, not %d", other, fd);
	errno = 0;
	if (via_link) {
		CHILD_CHECK(safe_tmpfile_link(t, xa3, 3, 0) == -1 && errno == EBADF);
		/* the handle is spent, not freed: link and fd say so too */
		errno = 0;
		CHILD_CHECK(safe_tmpfile_link(t, xa3, 3, SAFE_TMPFILE_REPLACE) == -1 && errno == EBADF);
		errno = 0;
		CHILD_CHECK(safe_tmpfile_fd(t) == -1 && errno == EBADF);
		CHILD_CHECK(safe_tmpfile_discard(t) == 0);
	} else {
		CHILD_CHECK(safe_tmpfile_discard(t) == -1 && errno == EBADF);
	}
	/* nothing published, no hidden name, the other file untouched and
	 * still open, no descriptor of the handle left */
	CHILD_CHECK(faccessat(dfd, "f", F_OK, AT_SYMLINK_NOFOLLOW) == -1 && errno == ENOENT);
	char *ls = fx_dir_listing(dfd, ".");
	int clean = !strcmp(ls, "victim\n");
	CHILD_CHECK(clean, "left: %s", ls);
	free(ls);
	free(hidden);
	if (other >= 0) {
		CHILD_CHECK(fcntl(other, F_GETFD) >= 0);
		char buf[8];
		if (how == REUSED)
			CHILD_CHECK(pread(other, buf, sizeof(buf), 0) == 6 && !memcmp(buf, "victim", 6));
		close(other);
	}
	CHILD_CHECK(unlinkat(dfd, "victim", 0) == 0);
	CHILD_CHECK(fx_fd_count() == nfd, "descriptors %d -> %d", nfd, fx_fd_count());
	return 0;
}

START_TEST(two_phase_fd_misuse)
{
	/* The caller closes the lent descriptor, or closes it and the number
	 * goes to another file: link and discard notice (EBADF), publish
	 * nothing, leave nothing, and never touch the other file. */
	uint64_t fl = strategies[_i];
	struct tdir d;
	tdir_make(&d, "tmpfile");
	for (int via_link = 0; via_link < 2; via_link++) {
		RUN(misuse_case(d.fd, fl, CLOSED, via_link));
		RUN(misuse_case(d.fd, fl, REUSED, via_link));
		if (fl & T_NAMED) /* the same inode, another open */
			RUN(misuse_case(d.fd, fl, REOPENED_RDONLY, via_link));
	}
	struct safe_tmpfile *t = NULL;
	errno = 0;
	ck_assert_int_eq(safe_tmpfile_fd(t), -1);
	ck_assert_int_eq(errno, EFAULT);
	tdir_free(&d);
}
END_TEST

START_TEST(named_stays_private)
{
	/* The fallback's hidden name is 0600 from its creation (whatever the
	 * mode asked for), and again after a link that failed once the final
	 * mode was applied (a malformed ACL is refused after the chmod); the
	 * probe that asked the kernel for the mode is gone. */
	uint64_t fl = strategies[_i] | T_NAMED;
	struct tdir d;
	tdir_make_xattrs(&d, "tmpfile");
	mode_t old = umask(0);
	static const mode_t modes[] = { 0666, 0644, 02755, 0444, 0 };
	for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++) {
		struct safe_tmpfile *t;
		ck_assert_int_eq(safe_tmpfile_open(d.fd, "f", modes[i], fl, &t), 0);
		char *h = hidden_entry(d.fd);
		ck_assert_ptr_nonnull(h);
		ck_assert_int_eq(count_hidden(d.fd), 1);
		struct stat st;
		ck_assert_int_eq(fstatat(d.fd, h, &st, AT_SYMLINK_NOFOLLOW), 0);
		ck_assert_int_eq(st.st_mode & 07777, 0600);
		ck_assert_int_eq(write(safe_tmpfile_fd(t), "data", 4), 4);
		struct safe_xattr bad[] = { { "user.a", "v", 1 }, { "system.posix_acl_access", "xx", 2 } };
		errno = 0;
		ck_assert_int_eq(safe_tmpfile_link(t, bad, 2, 0), -1);
		ck_assert_int_eq(errno, EINVAL);
		ck_assert_int_eq(fstatat(d.fd, h, &st, AT_SYMLINK_NOFOLLOW), 0);
		ck_assert_int_eq(st.st_mode & 07777, 0600);
		/* and the retry still gives what open(O_CREAT) gives */
		int fd = safe_tmpfile_link(t, xa3, 3, 0);
		ck_assert_int_ge(fd, 0);
		RUN(check_like_oracle(fd, d.fd, modes[i]));
		close(fd);
		ck_assert_int_eq(unlinkat(d.fd, "f", 0), 0);
		ck_assert_int_eq(count_hidden(d.fd), 0);
		free(h);
	}
	umask(old);
	tdir_free(&d);
}
END_TEST

/* ---------------------------------------------------------------- threads */

#define CT_THREADS 4
#define CT_NAMES 100 /* at the big size; 25 at the quick one */
struct ct_shared {
	int dirfd, names;
	uint64_t flags;
	atomic_int wins[CT_NAMES];
	atomic_int bad;
};

static void *ct_thread(void *arg)
{
	struct ct_shared *c = arg;
	char name[32];
	for (int i = 0; i < c->names; i++) {
		snprintf(name, sizeof(name), "c%d", i);
		int fd = safe_tmpfile_xattr(c->dirfd, name, 0644, xa3, 3, c->flags);
		if (fd >= 0) {
			atomic_fetch_add(&c->wins[i], 1);
			close(fd);
		} else if (errno != EEXIST) {
			atomic_fetch_add(&c->bad, 1);
		}
		fd = safe_tmpfile_xattr(c->dirfd, "shared", 0644, xa3, 3,
					c->flags | SAFE_TMPFILE_REPLACE);
		if (fd >= 0)
			close(fd);
		else
			atomic_fetch_add(&c->bad, 1);
	}
	return NULL;
}

START_TEST(concurrent_creators)
{
	/* Threads racing for the same names: exactly one wins each name, the
	 * others get EEXIST; concurrent REPLACEs all succeed; no hidden name
	 * survives. */
	struct tdir d;
	tdir_make_xattrs(&d, "tmpfile");
	struct ct_shared *c = calloc(1, sizeof(*c));
	ck_assert_ptr_nonnull(c);
	c->dirfd = d.fd;
	c->names = (int)fx_size(CT_NAMES / 4, CT_NAMES, 1);
	c->flags = strategies[_i];
	(void)t_strategy(c->flags); /* the environment is set here, before the
				     * threads: they only read it */
	pthread_t th[CT_THREADS];
	for (int i = 0; i < CT_THREADS; i++)
		ck_assert_int_eq(pthread_create(&th[i], NULL, ct_thread, c), 0);
	for (int i = 0; i < CT_THREADS; i++)
		ck_assert_int_eq(pthread_join(th[i], NULL), 0);
	ck_assert_int_eq(atomic_load(&c->bad), 0);
	for (int i = 0; i < c->names; i++)
		ck_assert_int_eq(atomic_load(&c->wins[i]), 1);
	ck_assert_int_eq(count_hidden(d.fd), 0);
	int fd = openat(d.fd, "shared", O_RDONLY | O_CLOEXEC);
	ck_assert_int_ge(fd, 0);
	RUN(check_xattrs(fd, xa3, 3));
	close(fd);
	free(c);
	tdir_free(&d);
}
END_TEST

/* ---------------------------------------------------------------- the watcher */

struct watch {
	atomic_int stop;
	atomic_long loops;
	atomic_long seen;
	atomic_long missing;
	atomic_long incomplete;
	atomic_long other;
	int other_errno;
};

static const struct safe_xattr race_x[] = {
	{ "user.mime_type", "text/plain", 10 },
	{ "user.sha256", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855", 64 },
	{ "user.owner", "uploader-42", 11 },
};

static void watcher(struct watch *w, const char *path)
{
	char buf[128];
	while (!atomic_load(&w->stop)) {
		size_t present = 0;
		for (size_t i = 0; i < 3; i++) {
			ssize_t r = lgetxattr(path, race_x[i].name, buf, sizeof(buf));
			if (r >= 0) {
				if ((size_t)r == race_x[i].size &&
				    !memcmp(buf, race_x[i].value, race_x[i].size))
					present++;
				else
					atomic_fetch_add(&w->incomplete, 1);
			} else if (errno == ENOENT) {
				atomic_fetch_add(&w->missing, 1);
			} else if (errno == ENODATA) {
				atomic_fetch_add(&w->incomplete, 1);
			} else {
				w->other_errno = errno;
				atomic_fetch_add(&w->other, 1);
			}
		}
		if (present == 3)
			atomic_fetch_add(&w->seen, 1);
		atomic_fetch_add(&w->loops, 1);
	}
}

/*
 * Create (or with REPLACE, replace) dir/target n times while a watcher
 * process polls its xattrs. After each publication the creator waits until
 * the watcher has completed a full poll, so every file is observed; without
 * REPLACE it then removes the name again.
 */
static int race_case(const char *dirpath, uint64_t fl, bool replace, long n)
{
	int dfd = open(dirpath, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	CHILD_CHECK(dfd >= 0);
	if (!fx_user_xattrs(dfd)) { /* the caller SKIPs (tmpfs before Linux 6.6) */
		close(dfd);
		return FX_CHILD_SKIP;
	}
	char target[4096];
	snprintf(target, sizeof(target), "%s/target", dirpath);
	if (replace) {
		int fd = safe_tmpfile_xattr(dfd, "target", 0644, race_x, 3, fl);
		CHILD_CHECK(fd >= 0);
		close(fd);
	}
	struct watch *w = mmap(NULL, sizeof(*w), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
			       -1, 0);
	CHILD_CHECK(w != MAP_FAILED);
	memset(w, 0, sizeof(*w));
	pid_t pid = fork();
	CHILD_CHECK(pid >= 0);
	if (pid == 0) {
		/* never outlive the creator (a test timeout kills it) */
		if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() == 1)
			_exit(1);
		watcher(w, target);
		_exit(0);
	}
	int r = 0;
	for (long i = 0; i < n && !r; i++) {
		int fd = safe_tmpfile_xattr(dfd, "target", 0644, race_x, 3,
					    fl | (replace ? SAFE_TMPFILE_REPLACE : 0));
		if (fd < 0) {
			fprintf(stderr, "race: creation %ld: %s\n", i, strerror(errno));
			r = 1;
			break;
		}
		close(fd);
		/* Two full watcher loops see this file. Sleep, not spin,
		 * while waiting: on a loaded machine a spinning creator takes
		 * the CPU the watcher needs. */
		long l0 = atomic_load(&w->loops);
		while (atomic_load(&w->loops) < l0 + 2) {
			if (waitpid(pid, NULL, WNOHANG) != 0) {
				fprintf(stderr, "race: the watcher died\n");
				r = 1;
				break;
			}
			usleep(20);
		}
		if (!replace && unlinkat(dfd, "target", 0) < 0) {
			fprintf(stderr, "race: unlink: %s\n", strerror(errno));
			r = 1;
		}
	}
	atomic_store(&w->stop, 1);
	while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
		;
	if (!r) {
		if (w->incomplete || (replace && w->missing) || w->other || w->seen < n) {
			fprintf(stderr,
				"race (%s, %s, flags %#llx): %ld polls, %ld complete, %ld "
				"incomplete, %ld missing, %ld other errors (last %s)\n",
				dirpath, replace ? "replace" : "create", (unsigned long long)fl,
				w->loops, w->seen, w->incomplete, w->missing, w->other,
				strerror(w->other_errno));
			r = 1;
		}
	}
	munmap(w, sizeof(*w));
	char *ls = fx_dir_listing(dfd, ".");
	if (strcmp(ls, replace ? "target\n" : "")) {
		fprintf(stderr, "race: left behind: %s\n", ls);
		r = 1;
	}
	free(ls);
	if (replace)
		(void)unlinkat(dfd, "target", 0);
	close(dfd);
	return r;
}

#define RACE_N 1000
static long race_n(void)
{
	return fx_size(RACE_N / 10, RACE_N, 10);
}

START_TEST(race_ext4)
{
	uint64_t fl = strategies[_i / 2];
	bool replace = _i % 2;
	char *dir = fx_mkdtemp("tmpfile-race");
	int r = race_case(dir, fl, replace, race_n());
	ck_assert_int_eq(fx_rmtree(dir), 0);
	free(dir);
	if (r == FX_CHILD_SKIP)
		fx_skip(FX_NO_USER_XATTRS);
	ck_assert_msg(r == 0, "see stderr");
}
END_TEST

#define TMPFS_NO_USER_XATTRS "tmpfs without user xattrs (they came in Linux 6.6)"

static int tmpfs_race_child(void *arg)
{
	const struct mount_args *a = arg;
	CHILD_CHECK(fx_enter_mount_ns() == 0);
	CHILD_CHECK(mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) == 0);
	CHILD_CHECK(mount("none", a->path, "tmpfs", 0, "mode=0755,size=16m") == 0);
	return race_case(a->path, a->flags, a->replace, race_n());
}

START_TEST(race_tmpfs)
{
	uint64_t fl = strategies[_i / 2];
	bool replace = _i % 2;
	struct statfs sfs;
	int r;
	if (statfs("/dev/shm", &sfs) == 0 && sfs.f_type == TMPFS_MAGIC &&
	    access("/dev/shm", W_OK) == 0) {
		char dir[] = "/dev/shm/safeopen-tmpfile-XXXXXX";
		ck_assert_ptr_nonnull(mkdtemp(dir));
		r = race_case(dir, fl, replace, race_n());
		ck_assert_int_eq(fx_rmtree(dir), 0);
	} else if (sb_can_mount()) {
		char *dir = fx_mkdtemp("tmpfile-race");
		struct mount_args a = { .path = dir, .flags = fl, .replace = replace };
		r = sb_run(tmpfs_race_child, &a);
		ck_assert_int_eq(fx_rmtree(dir), 0);
		free(dir);
	} else {
		fx_skip("no tmpfs: /dev/shm is not a writable tmpfs and mounting is not possible");
	}
	if (r == FX_CHILD_SKIP)
		fx_skip(TMPFS_NO_USER_XATTRS);
	ck_assert_msg(r == 0, "see stderr");
}
END_TEST

/* ---------------------------------------------------------------- safe_write_atomic (issue 39) */

/* The file at path holds exactly want[0..n) with this mode. */
static bool holds(int dirfd, const char *path, const void *want, size_t n, mode_t mode)
{
	int fd = openat(dirfd, path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return false;
	struct stat st;
	bool ok = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && (st.st_mode & 07777) == mode &&
		  (size_t)st.st_size == n;
	char *buf = malloc(n + 1);
	ok = ok && buf && read(fd, buf, n + 1) == (ssize_t)n && !memcmp(buf, want, n);
	free(buf);
	close(fd);
	return ok;
}

START_TEST(write_atomic)
{
	struct tdir d;
	tdir_make(&d, "store");
	uint64_t fl = strategies[_i];
	mode_t old = umask(022);
	static const char text[] = "content of the upload\n";
	ck_assert_int_eq(safe_write_atomic(d.fd, "f", text, sizeof(text) - 1, 0640, NULL, 0, fl), 0);
	ck_assert(holds(d.fd, "f", text, sizeof(text) - 1, 0640));
	ck_assert_int_eq(count_hidden(d.fd), 0);
	/* Not replacing: EEXIST, the old file whole. */
	EXPECT_FAIL_CK(d.fd, EEXIST, safe_write_atomic(d.fd, "f", "x", 1, 0600, NULL, 0, fl));
	ck_assert(holds(d.fd, "f", text, sizeof(text) - 1, 0640));
	/* Replacing, with sync: the new content and mode. */
	ck_assert_int_eq(safe_write_atomic(d.fd, "f", "new", 3, 0600, NULL, 0,
					   fl | SAFE_TMPFILE_REPLACE | SAFE_TMPFILE_SYNC), 0);
	ck_assert(holds(d.fd, "f", "new", 3, 0600));
	/* Empty content; a big one (many write(2) calls' worth). */
	ck_assert_int_eq(safe_write_atomic(d.fd, "empty", NULL, 0, 0644, NULL, 0, fl), 0);
	ck_assert(holds(d.fd, "empty", "", 0, 0644));
	size_t big = (size_t)4 << 20;
	char *b = malloc(big);
	ck_assert_ptr_nonnull(b);
	for (size_t i = 0; i < big; i++)
		b[i] = (char)(i * 131 + 7);
	ck_assert_int_eq(safe_write_atomic(d.fd, "big", b, big, 0644, NULL, 0, fl), 0);
	ck_assert(holds(d.fd, "big", b, big, 0644));
	free(b);
	/* Parents: made, and removed again when the store fails. */
	ck_assert_int_eq(safe_write_atomic(d.fd, "p/q/f", "x", 1, 0644, NULL, 0,
					   fl | SAFE_TMPFILE_PARENTS), 0);
	ck_assert(holds(d.fd, "p/q/f", "x", 1, 0644));
	char longp[NAME_MAX + 64];
	snprintf(longp, sizeof(longp), "n1/n2/%0*d", NAME_MAX + 1, 7);
	EXPECT_FAIL_CK(d.fd, ENAMETOOLONG, safe_write_atomic(d.fd, longp, "x", 1, 0644, NULL, 0,
							    fl | SAFE_TMPFILE_PARENTS));
	/* Bad inputs: the exact errno, nothing left. */
	EXPECT_FAIL_CK(d.fd, EFAULT, safe_write_atomic(d.fd, "g", NULL, 1, 0644, NULL, 0, fl));
	EXPECT_FAIL_CK(d.fd, EFAULT, safe_write_atomic(d.fd, NULL, "x", 1, 0644, NULL, 0, fl));
	EXPECT_FAIL_CK(d.fd, EINVAL, safe_write_atomic(d.fd, "g", "x", 1, 010644, NULL, 0, fl));
	EXPECT_FAIL_CK(d.fd, EINVAL, safe_write_atomic(d.fd, "g", "x", 1, 0644, NULL, 0, fl | (1ULL << 20)));
	EXPECT_FAIL_CK(d.fd, EXDEV, safe_write_atomic(d.fd, "../g", "x", 1, 0644, NULL, 0, fl));
	EXPECT_FAIL_CK(d.fd, EISDIR, safe_write_atomic(d.fd, "p", "x", 1, 0644, NULL, 0,
						       fl | SAFE_TMPFILE_REPLACE));
	umask(old);
	tdir_free(&d);
}
END_TEST

/* The xattrs come with the content (where user xattrs work). */
START_TEST(write_atomic_xattrs)
{
	struct tdir d;
	tdir_make_xattrs(&d, "storex");
	uint64_t fl = strategies[_i];
	ck_assert_int_eq(safe_write_atomic(d.fd, "f", "abc", 3, 0644, xa3, 3, fl), 0);
	int fd = openat(d.fd, "f", O_RDONLY | O_CLOEXEC);
	ck_assert_int_ge(fd, 0);
	RUN(check_xattrs(fd, xa3, 3));
	close(fd);
	ck_assert(holds(d.fd, "f", "abc", 3, 0644 & ~(mode_t)0));
	tdir_free(&d);
}
END_TEST

/* ---------------------------------------------------------------- suite */

static Suite *tmpfile_suite(void)
{
	Suite *s = suite_create("tmpfile");
	TCase *tc = tcase_create("core");
	tcase_add_checked_fixture(tc, fx_fd_setup, fx_fd_teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_loop_test(tc, creates_with_xattrs, 0, N_STRATEGIES);
	tcase_add_loop_test(tc, modes_and_umask, 0, N_STRATEGIES);
	tcase_add_loop_test(tc, setgid_directory, 0, N_KERNEL_STRATEGIES);
	tcase_add_loop_test(tc, default_acl, 0, N_KERNEL_STRATEGIES);
	tcase_add_loop_test(tc, acl_xattr_from_caller, 0, N_KERNEL_STRATEGIES);
	tcase_add_loop_test(tc, replaces, 0, N_STRATEGIES);
	tcase_add_loop_test(tc, errors_leave_nothing, 0, N_STRATEGIES);
	tcase_add_loop_test(tc, ext4_xattr_space, 0, N_KERNEL_STRATEGIES);
	tcase_add_loop_test(tc, two_phase, 0, N_STRATEGIES);
	tcase_add_loop_test(tc, two_phase_errors, 0, N_STRATEGIES);
	tcase_add_loop_test(tc, two_phase_lost_parent, 0, N_KERNEL_STRATEGIES);
	tcase_add_loop_test(tc, concurrent_creators, 0, N_STRATEGIES);
	tcase_add_loop_test(tc, two_phase_fd_misuse, 0, N_STRATEGIES);
	tcase_add_loop_test(tc, named_stays_private, 0, 2);
	tcase_add_loop_test(tc, failed_xattr_index, 0, N_STRATEGIES);
	tcase_add_loop_test(tc, write_atomic, 0, N_STRATEGIES);
	tcase_add_loop_test(tc, write_atomic_xattrs, 0, N_STRATEGIES);
	suite_add_tcase(s, tc);

	TCase *rc = tcase_create("race");
	tcase_add_checked_fixture(rc, fx_fd_setup, fx_fd_teardown);
	tcase_set_timeout(rc, 300);
	tcase_add_loop_test(rc, race_ext4, 0, 2 * N_KERNEL_STRATEGIES);
	tcase_add_loop_test(rc, race_tmpfs, 0, 2 * N_KERNEL_STRATEGIES);
	suite_add_tcase(s, rc);
	return s;
}

FX_MAIN(tmpfile_suite)
