/* SPDX-License-Identifier: MIT */
/*
 * Object identity: what the library compares to tell whether a name or a
 * descriptor still leads to the object it checked (struct so_ident and the
 * one comparison, so_same_inode(), are in internal.h).
 *
 * Safety argument: an object held open (or a directory held open and the
 * name looked up in it again) keeps its inode allocated, so (st_dev, st_ino)
 * cannot be taken by another object while it is compared; the mount id tells
 * bind mounts of one filesystem apart (statx from 5.8, before that the file
 * handle's mount id or the procfs fdinfo entry; only where none of them can
 * tell are devices compared).
 */
#include "internal.h"

bool so_mount_id(int fd, const char *name, uint64_t *mnt)
{
	int saved = errno;
	bool empty = !name || !*name;
	struct {
		struct file_handle fh;
		/* cppcheck-suppress unusedStructMember ; storage for fh.f_handle, never named */
		unsigned char pad[128];
	} h;
	int id = -1;
	h.fh.handle_bytes = 0;
	/* With handle_bytes 0 the call fails with EOVERFLOW but reports the
	 * mount id; filesystems without file handles fail with EOPNOTSUPP. */
	if (name_to_handle_at(fd, empty ? "" : name, &h.fh, &id, empty ? AT_EMPTY_PATH : 0) == 0 ||
	    errno == EOVERFLOW) {
		*mnt = (uint64_t)(unsigned int)id;
		errno = saved;
		return true;
	}
	bool ok = empty && so_procfs_mnt_id(fd, mnt) == 0;
	errno = saved;
	return ok;
}

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
	} else {
		if (errno != ENOSYS)
			return -1;
		struct stat st;
		if (fstatat(fd, name, &st, atflags) < 0)
			return -1;
		*id = so_stat_ident(&st);
	}
	if (!id->have_mnt)
		id->have_mnt = so_mount_id(fd, name, &id->mnt);
	return 0;
}
