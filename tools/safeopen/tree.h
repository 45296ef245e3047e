/* SPDX-License-Identifier: MIT */
/* The tree commands of safeopen(1) (tools/safeopen/tree.c). Each returns the exit
 * status: 0 success, 1 some entry failed (the others were done), 2 usage. */
#ifndef SAFEOPEN_TREE_H
#define SAFEOPEN_TREE_H

#include <stdint.h>

int safeopen_find(int rootfd, uint64_t resolve, int argc, char **argv);
int safeopen_chown(int rootfd, uint64_t resolve, int argc, char **argv);
int safeopen_chmod(int rootfd, uint64_t resolve, int argc, char **argv);
int safeopen_du(int rootfd, uint64_t resolve, int argc, char **argv);
/* cp -a SRCROOT SRC DSTROOT DST: argv[0] is "cp"; no ROOT before it. */
int safeopen_cp(int argc, char **argv, uint64_t resolve);

/* "safeopen: " and the message on stderr, the --help hint, exit status 2
 * (tools/safeopen/safeopen.c: one wording for every command's usage errors). */
void usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

#endif
