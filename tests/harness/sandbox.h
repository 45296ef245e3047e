/* SPDX-License-Identifier: MIT */
/*
 * Test helpers that change the process: run a function in a forked child,
 * install a seccomp filter that makes chosen syscalls fail (simulating old
 * kernels and strict container profiles), drop to an unprivileged user.
 */
#ifndef SAFEOPEN_TEST_SANDBOX_H
#define SAFEOPEN_TEST_SANDBOX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* One rule: syscall `nr` fails with `err`; if `arg` >= 0, only when
 * (args[arg] & mask) == value (compared on the low 32 bits). */
struct sb_rule {
	long nr;
	int err;
	int arg;
	uint32_t mask;
	uint32_t value;
};
#define SB_ALWAYS(nr_, err_) { .nr = (nr_), .err = (err_), .arg = -1 }
#define SB_WHEN(nr_, err_, arg_, mask_, value_) \
	{ .nr = (nr_), .err = (err_), .arg = (arg_), .mask = (mask_), .value = (value_) }

/* Install the rules (sets no_new_privs). Returns 0 or -1 with errno. Only for
 * use in a child: it cannot be undone. */
int sb_seccomp(const struct sb_rule *rules, size_t n);

/* Drop to uid/gid 65534 (nobody/nogroup), clearing supplementary groups.
 * Returns 0 or -1 with errno. If the test process did not start as root it
 * is unprivileged already: nothing changes, except that the root of a user
 * namespace (fx_enter_mount_ns) gives up all its capabilities. */
int sb_drop_privileges(void);

/* Give dirfd/path (AT_EMPTY_PATH in flags: dirfd itself) to the user that
 * sb_drop_privileges() makes of this process, so that it may write there
 * afterwards: uid/gid 65534 when the test started as root; nothing to do
 * for an unprivileged caller (any uid), whose own files these are and who
 * keeps its uid. Never a chown that needs privilege the caller lacks.
 * Returns 0 or -1 with errno. */
int sb_chown_for_dropped(int dirfd, const char *path, int flags);

/*
 * Run fn(arg) in a forked child and return fn's result (0..255, 0 = pass),
 * 128+signal if the child was killed before reporting, 255 if it exited
 * without reporting, -1 if fork/wait failed. Works under valgrind (the
 * result travels through a pipe, not the exit status). The parent's open fds
 * are untouched.
 */
int sb_run(int (*fn)(void *), void *arg);

/* True if this process may mount in a private mount namespace: root, or an
 * unprivileged user who may create a user namespace (then children enter it
 * with fx_enter_mount_ns()). Probed once. */
bool sb_can_mount(void);

#endif
