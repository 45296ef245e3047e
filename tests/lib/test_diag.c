/* SPDX-License-Identifier: MIT */
/*
 * Suite "diag": the thread's record of where a failed resolution stopped
 * (safe_diag_enable(), safe_diag_get()) and safe_strerror(). Each case runs
 * on the fast path (the kernel fails, a diagnostic walk finds where) and on
 * the forced walker.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fixture.h"
#include "safeopen.h"

#define D_MODE(i) (((i) & 1) ? SAFE_RESOLVE_USERSPACE : 0)

static const char *const tree[] = {
	"d a",
	"d a/b",
	"f file x",
	"l ln a/nope/x",
	"l a/up ../../x",
	"l abs /etc",
	"l a/chain ../ln",
	"f a/b/plain x",
	NULL,
};

struct row {
	const char *path;
	int oflags;
	uint64_t resolve;
	int err;
	unsigned int where;
	size_t offset, length;
	unsigned int link;
	const char *name;
};

static const struct row rows[] = {
	{ "a/b/missing/x", O_RDONLY, 0, ENOENT, SAFE_DIAG_PATH, 4, 7, 0, "missing" },
	{ "a/b/missing", O_RDONLY, 0, ENOENT, SAFE_DIAG_PATH, 4, 7, 0, "missing" },
	{ "file/x", O_RDONLY, 0, ENOTDIR, SAFE_DIAG_PATH, 0, 4, 0, "file" },
	{ "a//../../x", O_RDONLY, 0, EXDEV, SAFE_DIAG_PATH, 6, 2, 0, ".." },
	{ "/etc", O_RDONLY, 0, EXDEV, SAFE_DIAG_PATH, 0, 1, 0, "/" },
	{ "ln/y", O_RDONLY, 0, ENOENT, SAFE_DIAG_LINK, 2, 4, 1, "nope" },
	{ "a/up", O_RDONLY, 0, EXDEV, SAFE_DIAG_LINK, 3, 2, 1, ".." },
	{ "abs", O_RDONLY, 0, EXDEV, SAFE_DIAG_PATH, 0, 3, 0, "abs" }, /* an absolute body */
	{ "a/chain/z", O_RDONLY, 0, ENOENT, SAFE_DIAG_LINK, 2, 4, 2, "nope" },
	{ "a/b/ln", O_RDONLY, SAFE_RESOLVE_NO_SYMLINKS, ENOENT, SAFE_DIAG_PATH, 4, 2, 0, "ln" },
	{ "ln", O_RDONLY, SAFE_RESOLVE_NO_SYMLINKS, ELOOP, SAFE_DIAG_PATH, 0, 2, 0, "ln" },
	{ "file", O_WRONLY | O_CREAT | O_EXCL, 0, EEXIST, SAFE_DIAG_PATH, 0, 4, 0, "file" },
	{ "a/b/", O_WRONLY | O_CREAT, 0, EISDIR, SAFE_DIAG_PATH, 2, 1, 0, "b" },
};

START_TEST(where_it_stopped)
{
	char *root = fx_mkdtemp("diag");
	int dfd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	ck_assert_int_ge(dfd, 0);
	fx_build(dfd, tree);
	ck_assert_int_eq(safe_diag_enable(1), 0);
	for (size_t k = 0; k < sizeof(rows) / sizeof(rows[0]); k++) {
		const struct row *r = &rows[k];
		struct safe_open_how how = {
			.flags = (uint64_t)r->oflags,
			.mode = (r->oflags & O_CREAT) ? 0600 : 0,
			.resolve = SAFE_RESOLVE_BENEATH | r->resolve | D_MODE(_i),
		};
		errno = 0;
		ck_assert_int_eq(safe_openat2(dfd, r->path, &how, sizeof(how)), -1);
		int e = errno;
		struct safe_diag d;
		memset(&d, 0x55, sizeof(d));
		ck_assert_int_eq(safe_diag_get(&d, sizeof(d)), 0);
		ck_assert_int_eq(errno, e); /* reading the record keeps errno */
		ck_assert_msg(e == r->err && d.err == r->err && d.where == r->where &&
				      d.offset == r->offset && d.length == r->length &&
				      d.link == r->link && !strcmp(d.name, r->name),
			      "row %zu (%s): errno %d, record err %d where %u offset %llu length %llu "
			      "link %u name \"%s\"",
			      k, r->path, e, d.err, d.where, (unsigned long long)d.offset,
			      (unsigned long long)d.length, d.link, d.name);
	}
	/* A failure that is no lookup leaves the record of the last one: its
	 * err tells it from this one. A resolution that succeeds clears it. */
	struct safe_open_how bad = { .flags = O_RDONLY, .mode = 0, .resolve = SAFE_RESOLVE_BENEATH };
	ck_assert_int_eq(safe_openat2(dfd, "a", &bad, 3), -1);
	ck_assert_int_eq(errno, EINVAL);
	struct safe_diag d;
	ck_assert_int_eq(safe_diag_get(&d, sizeof(d)), 0);
	ck_assert_int_ne(d.err, EINVAL);
	int fd = safe_openat_beneath(dfd, "a/b", O_PATH, 0);
	ck_assert_int_ge(fd, 0);
	close(fd);
	ck_assert_int_eq(safe_diag_get(&d, sizeof(d)), 0);
	ck_assert(d.err == 0 && d.where == SAFE_DIAG_NONE);
	/* The operations resolve through the same resolver. */
	ck_assert_int_eq(safe_unlinkat_beneath(dfd, "a/b/missing/x", 0), -1);
	ck_assert_int_eq(safe_diag_get(&d, sizeof(d)), 0);
	ck_assert(d.err == ENOENT && d.where == SAFE_DIAG_PATH && d.offset == 4 &&
		  !strcmp(d.name, "missing"));
	/* mkdir -p and create-with-parents name the component in the way. */
	errno = 0;
	ck_assert_int_eq(safe_mkdir_all_beneath(dfd, "a/b/plain/x", 0755, D_MODE(_i)), -1);
	ck_assert_int_eq(errno, ENOTDIR);
	ck_assert_int_eq(safe_diag_get(&d, sizeof(d)), 0);
	ck_assert_msg(d.err == ENOTDIR && d.where == SAFE_DIAG_PATH && d.offset == 4 &&
			      d.length == 5 && !strcmp(d.name, "plain"),
		      "mkdir_all: err %d where %u offset %llu name %s", d.err, d.where,
		      (unsigned long long)d.offset, d.name);
	ck_assert_int_eq(safe_create_all_beneath(dfd, "a/b/plain/y/f", O_WRONLY | O_CREAT, 0600, 0700,
						 D_MODE(_i)),
			 -1);
	ck_assert_int_eq(safe_diag_get(&d, sizeof(d)), 0);
	ck_assert(d.err == ENOTDIR && d.offset == 4 && !strcmp(d.name, "plain"));
	/* Off: nothing is recorded, and what was is forgotten. */
	ck_assert_int_eq(safe_diag_enable(0), 1);
	ck_assert_int_eq(safe_openat_beneath(dfd, "file/x", O_RDONLY, 0), -1);
	ck_assert_int_eq(safe_diag_get(&d, sizeof(d)), 0);
	ck_assert(d.err == 0 && d.where == SAFE_DIAG_NONE && d.name[0] == '\0');
	close(dfd);
	ck_assert_int_eq(fx_rmtree(root), 0);
	free(root);
}
END_TEST

/* The record is the calling thread's own. */
static void *other_thread(void *arg)
{
	struct safe_diag d;
	(void)arg;
	if (safe_diag_get(&d, sizeof(d)) != 0 || d.err != 0 || safe_diag_enable(0) != 0)
		return (void *)1;
	return NULL;
}

START_TEST(record_interface)
{
	struct safe_diag d;
	ck_assert_int_eq(safe_diag_get(NULL, sizeof(d)), -1);
	ck_assert_int_eq(errno, EFAULT);
	ck_assert_int_eq(safe_diag_get(&d, SAFE_DIAG_SIZE_VER0 - 1), -1);
	ck_assert_int_eq(errno, EINVAL);
	/* A larger caller struct gets zeros past the fields this version knows. */
	unsigned char big[SAFE_DIAG_SIZE_VER0 + 16];
	memset(big, 0xaa, sizeof(big));
	ck_assert_int_eq(safe_diag_get((struct safe_diag *)(void *)big, sizeof(big)), 0);
	for (size_t i = SAFE_DIAG_SIZE_VER0; i < sizeof(big); i++)
		ck_assert_int_eq(big[i], 0);
	safe_diag_enable(1);
	ck_assert_int_eq(safe_openat_beneath(AT_FDCWD, "/x", O_RDONLY, 0), -1);
	pthread_t th;
	void *ret;
	ck_assert_int_eq(pthread_create(&th, NULL, other_thread, NULL), 0);
	ck_assert_int_eq(pthread_join(th, &ret), 0);
	ck_assert_ptr_null(ret);
	ck_assert_int_eq(safe_diag_get(&d, sizeof(d)), 0);
	ck_assert_int_eq(d.err, EXDEV);
	safe_diag_enable(0);
}
END_TEST

START_TEST(error_text)
{
	ck_assert_str_eq(safe_strerror(EXDEV), "path escapes the root, or crosses a mount point");
	ck_assert_ptr_nonnull(strstr(safe_strerror(ELOOP), "symbolic links"));
	ck_assert_ptr_nonnull(strstr(safe_strerror(EAGAIN), "retrying is safe"));
	ck_assert_str_eq(safe_strerror(ENOSPC), strerror(ENOSPC));
}
END_TEST

static Suite *diag_suite(void)
{
	Suite *s = suite_create("diag");
	TCase *tc = tcase_create("core");
	tcase_add_checked_fixture(tc, fx_fd_setup, fx_fd_teardown);
	tcase_add_loop_test(tc, where_it_stopped, 0, 2);
	tcase_add_test(tc, record_interface);
	tcase_add_test(tc, error_text);
	suite_add_tcase(s, tc);
	return s;
}

FX_MAIN(diag_suite)
