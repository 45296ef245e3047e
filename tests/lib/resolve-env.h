/* SPDX-License-Identifier: MIT */
/*
 * The environment of the resolver suites (test_resolve, test_resolve_system):
 * the three ways to open a path (raw openat2(2), the oracle; the library;
 * the walker) and the adversarial tree every case runs in (resolve-env.c).
 */
#ifndef SAFEOPEN_TESTS_RESOLVE_ENV_H
#define SAFEOPEN_TESTS_RESOLVE_ENV_H

#include <fcntl.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "safeopen.h"

#ifndef MS_NOSYMFOLLOW
#define MS_NOSYMFOLLOW 256 /* Linux 5.10 */
#endif
#define B SAFE_RESOLVE_BENEATH
#define I SAFE_RESOLVE_IN_ROOT
#define NS SAFE_RESOLVE_NO_SYMLINKS
#define NM SAFE_RESOLVE_NO_MAGICLINKS
#define NX SAFE_RESOLVE_NO_XDEV
#define ND SAFE_RESOLVE_NO_DOTDOT
#define US SAFE_RESOLVE_USERSPACE
/* The open flags of the rows. */
#define RD O_RDONLY
#define P O_PATH
#define PN (O_PATH | O_NOFOLLOW)

/* Raw openat2(2) with O_CLOEXEC added, EAGAIN retried (the oracle). */
long raw_openat2(int dirfd, const char *path, uint64_t flags, uint64_t mode, uint64_t resolve);
/* Whether the raw syscall exists here (said once on stderr when not). */
bool kernel_has_openat2(void);
/* safe_openat2() with these fields. */
int lib_open(int dirfd, const char *path, uint64_t flags, uint64_t mode, uint64_t resolve);

enum run_mode { RUN_KERNEL, RUN_DEFAULT, RUN_WALKER, RUN_MODES };
extern const char *const mode_names[RUN_MODES];
/* Open one of the three ways: the raw syscall, the library, the walker. */
int open_way(int way, int dirfd, const char *path, uint64_t flags, uint64_t mode,
	     uint64_t resolve);
/* The errno's name, "?" when it has none. */
const char *errname(int e);

/*
 * top/                  (mode 0755, reachable by uid 65534)
 *   outside_file, outside_dir/secret      never reachable from root
 *   root/                                  the dirfd of every case
 */
struct env {
	char *top;
	int topfd;
	int rootfd;
	int dirfd; /* root/dir, listed by env_unchanged() while the name is still it */
	dev_t dir_dev;
	ino_t dir_ino;
	char *listing_top, *listing_root, *listing_dir;
};

/* prefixN for N in 1..n: N links to first (prefix1 -> first, prefix2 -> prefix1...). */
void build_chain(int rootfd, const char *prefix, const char *first, int n);
/* A link whose body is exactly len bytes: head, "./" repeated, tail. */
void long_link(int rootfd, const char *name, const char *head, size_t len, const char *tail);
/* The tree below a fresh temporary top; and its removal. */
void env_setup(struct env *e);
void env_teardown(struct env *e);
/* Undo what a case may have changed: 0, or -1 when the state was not restorable. */
int env_reset(const struct env *e);
/* Nothing appeared or vanished at the top, in the root or in dir (else msg says what). */
bool env_unchanged(const struct env *e, char *msg, size_t size);

#endif
