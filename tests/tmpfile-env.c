/* SPDX-License-Identifier: MIT */
/* What the tmpfile suites share: see tmpfile-env.h. */
#include "config.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fixture.h"
#include "safeopen.h"
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
