/* SPDX-License-Identifier: MIT */
/* What the tmpfile suites share: see tmpfile-env.h. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fixture.h"
#include "safeopen.h"
#include "sandbox.h"
#include "strategy.h"
#include "tmpfile-env.h"

const uint64_t strategies[4] = {
	0,
	T_NAMED,
	SAFE_RESOLVE_USERSPACE,
	SAFE_RESOLVE_USERSPACE | T_NAMED,
};

void tdir_free(struct tdir *d)
{
	close(d->fd);
	ck_assert_int_eq(fx_rmtree(d->path), 0);
	free(d->path);
}

/* A fresh directory for one case. */
void tdir_make(struct tdir *d, const char *tag)
{
	d->path = fx_mkdtemp(tag);
	d->fd = open(d->path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	ck_assert_int_ge(d->fd, 0);
}

/* The same for a case that stores user xattrs: SKIP where they do not work. */
void tdir_make_xattrs(struct tdir *d, const char *tag)
{
	tdir_make(d, tag);
	if (!fx_user_xattrs(d->fd)) {
		tdir_free(d);
		fx_skip(FX_NO_USER_XATTRS);
	}
}

/* Names in the directory that look like this library's hidden temporaries. */
int count_hidden(int dirfd)
{
	char *ls = fx_dir_listing(dirfd, ".");
	int n = 0;
	for (char *p = ls; (p = strstr(p, ".safeopen-")); p++)
		n++;
	free(ls);
	return n;
}

/* The only entry of dirfd, or NULL (malloc'd, without the newline). */
char *only_entry(int dirfd)
{
	char *ls = fx_dir_listing(dirfd, ".");
	char *nl = strchr(ls, '\n');
	if (!nl || nl[1]) {
		free(ls);
		return NULL;
	}
	*nl = '\0';
	return ls;
}

const struct safe_xattr xa3[3] = {
	{ "user.mime_type", "application/pdf", 15 },
	{ "user.checksum", "sha256:0123456789abcdef", 23 },
	{ "user.empty", NULL, 0 },
};

/* The fd carries exactly these values for these names. */
int check_xattrs(int fd, const struct safe_xattr *x, size_t n)
{
	char buf[65536 + 1];
	for (size_t i = 0; i < n; i++) {
		ssize_t r = fgetxattr(fd, x[i].name, buf, sizeof(buf));
		CHILD_CHECK(r >= 0, "fgetxattr %s: %s", x[i].name, strerror(errno));
		CHILD_CHECK((size_t)r == x[i].size && (!r || !memcmp(buf, x[i].value, x[i].size)),
		      "xattr %s has the wrong value", x[i].name);
	}
	return 0;
}

/* An O_RDWR, O_CLOEXEC descriptor of the object at dirfd/name. */
int check_fd(int fd, int dirfd, const char *name)
{
	CHILD_CHECK(fd >= 0);
	int fl = fcntl(fd, F_GETFL);
	CHILD_CHECK(fl >= 0 && (fl & O_ACCMODE) == O_RDWR);
	CHILD_CHECK(fcntl(fd, F_GETFD) & FD_CLOEXEC);
	CHILD_CHECK(fx_same_object(fd, dirfd, name), "fd is not the file at %s", name);
	struct stat st;
	CHILD_CHECK(fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_nlink == 1);
	return 0;
}


/* What plain openat(O_CREAT, mode) gives in this directory right now. */
int oracle_create(int dirfd, mode_t mode, struct oracle *o)
{
	int fd = openat(dirfd, ".oracle", O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
	CHILD_CHECK(fd >= 0);
	int r = fstat(fd, &o->st);
	o->acllen = fgetxattr(fd, "system.posix_acl_access", o->acl, sizeof(o->acl));
	int err = errno;
	close(fd);
	CHILD_CHECK(unlinkat(dirfd, ".oracle", 0) == 0);
	CHILD_CHECK(r == 0);
	CHILD_CHECK(o->acllen >= 0 || err == ENODATA || err == EOPNOTSUPP, "acl: %s", strerror(err));
	return 0;
}

/* The file open as fd has the mode, owner, group and access ACL that
 * open(O_CREAT, mode) gives in dirfd. */
int check_like_oracle(int fd, int dirfd, mode_t mode)
{
	struct oracle o;
	if (oracle_create(dirfd, mode, &o))
		return 1;
	struct stat st;
	CHILD_CHECK(fstat(fd, &st) == 0);
	CHILD_CHECK((st.st_mode & 07777) == (o.st.st_mode & 07777), "mode %04o, open(O_CREAT) gives %04o",
	      st.st_mode & 07777, o.st.st_mode & 07777);
	CHILD_CHECK(st.st_uid == o.st.st_uid && st.st_gid == o.st.st_gid, "owner %d:%d, expected %d:%d",
	      (int)st.st_uid, (int)st.st_gid, (int)o.st.st_uid, (int)o.st.st_gid);
	char acl[512];
	ssize_t n = fgetxattr(fd, "system.posix_acl_access", acl, sizeof(acl));
	CHILD_CHECK(n == o.acllen, "access ACL length %zd, expected %zd", n, o.acllen);
	CHILD_CHECK(n < 0 || !memcmp(acl, o.acl, (size_t)n), "access ACL differs");
	return 0;
}

/* safe_tmpfile_open() and the descriptor the handle lends: fd or -1. */
int tmp_open(int dirfd, const char *path, mode_t mode, uint64_t flags,
		    struct safe_tmpfile **t)
{
	if (safe_tmpfile_open(dirfd, path, mode, flags, t) < 0)
		return -1;
	return safe_tmpfile_fd(*t);
}

/* Create, check everything, remove. */
int create_and_check(int dirfd, const char *name, mode_t mode, const struct safe_xattr *x,
			    size_t n, uint64_t flags)
{
	int fd = safe_tmpfile_xattr(dirfd, name, mode, x, n, flags);
	CHILD_CHECK(fd >= 0, "safe_tmpfile_xattr(%s, %04o, %#llx): %s", name, mode,
	      (unsigned long long)flags, strerror(errno));
	int r = check_fd(fd, dirfd, name) || check_like_oracle(fd, dirfd, mode);
	/* user.* xattrs follow the permission bits: an unprivileged owner
	 * cannot read them back from a mode-0 file without a chmod first */
	if (!r && geteuid() != 0 && fchmod(fd, 0600) < 0)
		r = 1;
	r = r || check_xattrs(fd, x, n);
	if (!r && write(fd, "data", 4) != 4) {
		fprintf(stderr, "write to the returned fd (mode %04o): %s\n", mode,
			strerror(errno));
		r = 1;
	}
	close(fd);
	CHILD_CHECK(count_hidden(dirfd) == 0);
	CHILD_CHECK(unlinkat(dirfd, name, 0) == 0);
	return r;
}
