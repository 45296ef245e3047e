/* SPDX-License-Identifier: MIT */
/*
 * One archive entry as `safeopen extract` uses it, whichever reader read it
 * (tools/safeopen/tarfast.c, or libarchive through tools/safeopen/la.h). The strings
 * stay valid until the reader's next header.
 */
#ifndef SAFEOPEN_XENTRY_H
#define SAFEOPEN_XENTRY_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

struct archive_entry;

struct xentry {
	const char *path;     /* the name as stored (NULL: none) */
	const char *hardlink; /* a hard link's target, else NULL */
	const char *symlink;  /* a symbolic link's body, else NULL */
	mode_t type;          /* S_IFREG, S_IFDIR, ...; what a hard link stores (often 0) */
	mode_t perm;          /* the mode without the type bits */
	int64_t uid, gid;
	int64_t size;
	bool size_set;
	struct timespec mtime, atime;
	bool mtime_set, atime_set;
	dev_t rdev;
	unsigned int nlink;
	struct archive_entry *ae; /* libarchive's entry (its xattrs), or NULL */
};

#endif
