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

#endif
