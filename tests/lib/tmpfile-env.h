/* SPDX-License-Identifier: MIT */
/*
 * What the tmpfile suites (test_tmpfile, test_sweep) share: the strategy
 * variants each case runs with, a fresh directory per case, the hidden
 * names in a listing, and the check that a call fails with nothing left
 * behind.
 */
#ifndef SAFEOPEN_TESTS_TMPFILE_ENV_H
#define SAFEOPEN_TESTS_TMPFILE_ENV_H

#include <stdint.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "safeopen.h"

#define O_TMPFILE_BIT 020000000 /* __O_TMPFILE: O_TMPFILE without O_DIRECTORY */

/* A helper that returns 0 or 1 (with its message on stderr), as a Check assertion. */
#define RUN(expr) ck_assert_msg((expr) == 0, "%s failed (see stderr)", #expr)

/* Three xattrs, one of them empty. */
extern const struct safe_xattr xa3[3];

/* The fd carries exactly these values for these names. */
int check_xattrs(int fd, const struct safe_xattr *x, size_t n);

/* The strategy variants every functional test runs with (loop index):
 * O_TMPFILE, the named fallback (T_NAMED), each with the walker too. */
extern const uint64_t strategies[4];
#define N_STRATEGIES 4
#define N_KERNEL_STRATEGIES 2 /* without the walker */

struct tdir {
	char *path;
	int fd;
};

/* A fresh directory for one case, and its removal. */
void tdir_make(struct tdir *d, const char *tag);
/* The same for a case that stores user xattrs: SKIP where they do not work. */
void tdir_make_xattrs(struct tdir *d, const char *tag);
void tdir_free(struct tdir *d);

/* Names in the directory that look like this library's hidden temporaries. */
int count_hidden(int dirfd);
/* The only entry of dirfd, or NULL (malloc'd, without the newline). */
char *only_entry(int dirfd);

/* Run `call`, expect -1 with `err`, the listing of dirfd and the number of
 * open descriptors unchanged; on a mismatch print why and run `onfail`. */
#define EXPECT_FAIL_OR(dirfd, err, call, onfail)                                            \
	do {                                                                                \
		char *before_ = fx_dir_listing((dirfd), ".");                               \
		int nfd_ = fx_fd_count();                                                   \
		errno = 0;                                                                  \
		long r_ = (long)(call);                                                     \
		int e_ = errno;                                                             \
		char *after_ = fx_dir_listing((dirfd), ".");                                \
		int same_ = !strcmp(before_, after_);                                       \
		free(before_);                                                              \
		free(after_);                                                               \
		int nfd2_ = fx_fd_count();                                                  \
		if (r_ != -1 || e_ != (err) || !same_ || nfd_ != nfd2_) {                   \
			fprintf(stderr,                                                     \
				"%s:%d: %s: returned %ld errno %d (%s), want %s; listing %s; " \
				"fds %d -> %d\n",                                           \
				__FILE__, __LINE__, #call, r_, e_, strerror(e_),            \
				strerror(err), same_ ? "unchanged" : "CHANGED", nfd_, nfd2_); \
			onfail;                                                             \
		}                                                                           \
	} while (0)
#define EXPECT_FAIL(dirfd, err, call) EXPECT_FAIL_OR(dirfd, err, call, return 1)
#define EXPECT_FAIL_CK(dirfd, err, call) \
	EXPECT_FAIL_OR(dirfd, err, call, ck_abort_msg("%s failed (see stderr)", #call))

/* A child that mounts a filesystem at path and runs a case there. */
struct mount_args {
	const char *path;
	uint64_t flags;
	bool replace;
};

struct oracle {
	struct stat st;
	char acl[512];
	ssize_t acllen; /* -1: no access ACL */
};

/* An O_RDWR, O_CLOEXEC descriptor of the object at dirfd/name. */
int check_fd(int fd, int dirfd, const char *name);
/* What plain openat(O_CREAT, mode) gives in this directory right now. */
int oracle_create(int dirfd, mode_t mode, struct oracle *o);
/* The file open as fd has the mode, owner, group and access ACL that
 * open(O_CREAT, mode) gives in dirfd. */
int check_like_oracle(int fd, int dirfd, mode_t mode);
/* safe_tmpfile_open() and the descriptor the handle lends: fd or -1. */
int tmp_open(int dirfd, const char *path, mode_t mode, uint64_t flags, struct safe_tmpfile **t);
/* Create, check everything, remove. */
int create_and_check(int dirfd, const char *name, mode_t mode, const struct safe_xattr *x,
		     size_t n, uint64_t flags);

#endif
