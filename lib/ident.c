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
 * handle's mount id or the procfs fdinfo entry). Where none of them can tell,
 * the mount stays unknown and so_other_mount() answers "another mount": a
 * device number is never taken for a mount (a bind mount shares it). A
 * resource error on the way (the fdinfo entry needs 2 descriptors at once)
 * fails the call with its errno: an unknown that only means "out of
 * descriptors" must not be read as "nothing can tell".
 */
#include "internal.h"

/* The mount id in fd's procfs fdinfo entry: 1, 0 (no verified procfs, no
 * mnt_id line: nothing to learn there), -1 with a resource errno. */
static int fdinfo_mount_id(int fd, uint64_t *mnt)
{
	if (so_procfs_mnt_id(fd, mnt) == 0)
		return 1;
#ifdef SAFEOPEN_MUTATE_MOUNT_ID_ERRNO
	/* Mutation (tests only): out of descriptors reads as "cannot tell". */
	return 0;
#endif
	return so_resource_errno(errno) ? -1 : 0;
}

int so_mount_id(int fd, const char *name, uint64_t *mnt)
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
	 * mount id; filesystems without file handles fail with EOPNOTSUPP
	 * (ENOSYS, EPERM: the call is missing or refused by a sandbox). */
	if (name_to_handle_at(fd, empty ? "" : name, &h.fh, &id, empty ? AT_EMPTY_PATH : 0) == 0 ||
	    errno == EOVERFLOW) {
		*mnt = (uint64_t)(unsigned int)id;
		errno = saved;
		return 1;
	}
	if (errno != EOPNOTSUPP && errno != ENOSYS && errno != EPERM && errno != EINVAL)
		return -1; /* a resource error, or the name went away */
	int r = empty ? fdinfo_mount_id(fd, mnt) : 0;
	if (r >= 0)
		errno = saved;
	return r;
}

/* statx (4.11+; the mount id from 5.8) of fd or of name relative to fd,
 * never following a trailing symlink; without statx, fstatat (no mount id):
 * so_statx_at(). */
static int stat_at(int fd, const char *name, struct so_info *in)
{
	struct statx stx;
	if (so_statx_at(fd, name, STATX_TYPE | STATX_INO | STATX_UID | STATX_MNT_ID, &stx) < 0)
		return -1;
	in->id = so_statx_ident(&stx);
	in->type = stx.stx_mode & S_IFMT;
	in->uid = stx.stx_uid;
	return 0;
}

int so_inode_at(int fd, const char *name, struct so_ident *id)
{
	struct so_info in;
	if (stat_at(fd, name, &in) < 0)
		return -1;
	*id = in.id;
	return 0;
}

int so_info_of(int fd, bool want_mnt, struct so_info *in)
{
	if (stat_at(fd, NULL, in) < 0)
		return -1;
	if (!want_mnt || in->id.have_mnt)
		return 0;
	int r = so_mount_id(fd, NULL, &in->id.mnt);
	if (r < 0)
		return -1;
	in->id.have_mnt = r > 0;
	return 0;
}

/* so_inode_at() and, where statx did not report it, so_mount_id(). */
static int ident_mnt(int fd, const char *name, struct so_ident *id)
{
	if (!name || !*name) {
		struct so_info in;
		if (so_info_of(fd, true, &in) < 0)
			return -1;
		*id = in.id;
		return 0;
	}
	if (so_inode_at(fd, name, id) < 0)
		return -1;
	if (id->have_mnt)
		return 0;
	int r = so_mount_id(fd, name, &id->mnt);
	if (r < 0)
		return -1;
	id->have_mnt = r > 0;
	return 0;
}

int so_ident_at(int fd, const char *name, struct so_ident *id)
{
	if (ident_mnt(fd, name, id) < 0)
		return -1;
	if (id->have_mnt || !name || !*name)
		return 0;
	/* No file handles here: the fdinfo entry needs a descriptor of the
	 * object itself; its identity replaces the one above. */
	_cleanup_fd_ int o = openat(fd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (o < 0)
		return -1;
	return ident_mnt(o, NULL, id);
}
