/* SPDX-License-Identifier: MIT */
/*
 * Object identity: what the library compares to tell whether a name or a
 * descriptor still leads to the object it checked (struct so_ident and the
 * one comparison, so_same_inode(), are in internal.h).
 *
 * Safety argument: an object held open (or a directory held open and the
 * name looked up in it again) keeps its inode allocated, so (st_dev, st_ino)
 * cannot be taken by another object while it is compared; the mount id, where
 * statx reports it, tells bind mounts of one filesystem apart.
 */
#include "internal.h"

int so_ident_at(int fd, const char *name, struct so_ident *id)
{
	struct statx stx;
	int atflags = AT_SYMLINK_NOFOLLOW | AT_NO_AUTOMOUNT;
	if (!name || !*name) {
		name = "";
		atflags |= AT_EMPTY_PATH;
	}
	if (statx(fd, name, atflags, STATX_TYPE | STATX_INO | STATX_MNT_ID, &stx) == 0) {
		*id = so_statx_ident(&stx);
		return 0;
	}
	if (errno != ENOSYS)
		return -1;
	struct stat st;
	if (fstatat(fd, name, &st, atflags) < 0)
		return -1;
	*id = so_stat_ident(&st);
	return 0;
}
