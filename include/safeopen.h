/* SPDX-License-Identifier: MIT */
/** @file safeopen.h
 * @brief libsafeopen: open untrusted paths without leaving the directory you meant.
 * @details Summaries: conventions, guarantees and shared errors are in libsafeopen(7), each
 * function's reference is the man page its comment names. */
#ifndef SAFEOPEN_H
#define SAFEOPEN_H

#include <dirent.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__) && __GNUC__ >= 4
#define SAFEOPEN_PUBLIC __attribute__((visibility("default")))
#define SAFEOPEN_NODISCARD __attribute__((warn_unused_result))
#else
#define SAFEOPEN_PUBLIC
#define SAFEOPEN_NODISCARD
#endif

/* Used only through pointers: strict C99 needs no feature macro for them. */
struct timespec;
struct statx;

/** @defgroup safeopen_resolve Scoped path resolution: safe_openat2() and its simple forms
 * @{ */

/** @brief How to open: the twin of the kernel's struct open_how, extensible as it is. */
struct safe_open_how {
	uint64_t flags;   /**< open(2) flags; @c O_CLOEXEC is always added. */
	uint64_t mode;    /**< Mode for @c O_CREAT or @c O_TMPFILE, else 0. */
	uint64_t resolve; /**< @c SAFE_RESOLVE_* bits: exactly one scope. */
};

/** Size of the first published version of struct safe_open_how. */
#define SAFE_OPEN_HOW_SIZE_VER0 24
/** Size of struct safe_open_how as this header knows it. */
#define SAFE_OPEN_HOW_SIZE_LATEST SAFE_OPEN_HOW_SIZE_VER0

/** Fail with @c EXDEV on a mount crossing (RESOLVE_NO_XDEV). */
#define SAFE_RESOLVE_NO_XDEV 0x01ULL
/** Fail with @c ELOOP on a procfs magic link (RESOLVE_NO_MAGICLINKS). */
#define SAFE_RESOLVE_NO_MAGICLINKS 0x02ULL
/** Fail with @c ELOOP on any symbolic link (RESOLVE_NO_SYMLINKS). */
#define SAFE_RESOLVE_NO_SYMLINKS 0x04ULL
/** Scope: the path must stay beneath the directory (RESOLVE_BENEATH). */
#define SAFE_RESOLVE_BENEATH 0x08ULL
/** Scope: the directory acts as "/" (RESOLVE_IN_ROOT). */
#define SAFE_RESOLVE_IN_ROOT 0x10ULL
/** Fail with @c EAGAIN unless the kernel's caches serve the lookup (RESOLVE_CACHED). */
#define SAFE_RESOLVE_CACHED 0x20ULL
/** Any ".." fails with @c EXDEV, even one that stays beneath (the library's own rule). */
#define SAFE_RESOLVE_NO_DOTDOT (1ULL << 32)
/** Never call openat2(): always the library's own walker, with the same results. */
#define SAFE_RESOLVE_USERSPACE (1ULL << 33)
/** With #SAFE_RESOLVE_IN_ROOT: a ".." at the root fails with @c EXDEV instead of staying. */
#define SAFE_RESOLVE_REPORT_ESCAPE (1ULL << 34)
/** Follow a symlink only when its owner owns what it resolves to (@c ELOOP otherwise). */
#define SAFE_RESOLVE_SYMLINKS_OWNER_MATCH (1ULL << 35)

/* The published sizes; the kernel's values of the bits if <linux/openat2.h> came first. */
#if defined(__cplusplus) && __cplusplus >= 201103L
#define SAFEOPEN_STATIC_ASSERT_(cond, msg) static_assert(cond, msg)
#elif defined(__STDC_VERSION__) && __STDC_VERSION__ >= 201112L
#define SAFEOPEN_STATIC_ASSERT_(cond, msg) _Static_assert(cond, msg)
#endif
#ifdef SAFEOPEN_STATIC_ASSERT_
SAFEOPEN_STATIC_ASSERT_(sizeof(struct safe_open_how) == SAFE_OPEN_HOW_SIZE_VER0,
                        "struct safe_open_how is SAFE_OPEN_HOW_SIZE_VER0 bytes");
#ifdef RESOLVE_NO_XDEV
SAFEOPEN_STATIC_ASSERT_(SAFE_RESOLVE_NO_XDEV == RESOLVE_NO_XDEV, "RESOLVE_NO_XDEV");
SAFEOPEN_STATIC_ASSERT_(SAFE_RESOLVE_NO_MAGICLINKS == RESOLVE_NO_MAGICLINKS,
                        "RESOLVE_NO_MAGICLINKS");
SAFEOPEN_STATIC_ASSERT_(SAFE_RESOLVE_NO_SYMLINKS == RESOLVE_NO_SYMLINKS, "RESOLVE_NO_SYMLINKS");
SAFEOPEN_STATIC_ASSERT_(SAFE_RESOLVE_BENEATH == RESOLVE_BENEATH, "RESOLVE_BENEATH");
SAFEOPEN_STATIC_ASSERT_(SAFE_RESOLVE_IN_ROOT == RESOLVE_IN_ROOT, "RESOLVE_IN_ROOT");
#endif
#ifdef RESOLVE_CACHED
SAFEOPEN_STATIC_ASSERT_(SAFE_RESOLVE_CACHED == RESOLVE_CACHED, "RESOLVE_CACHED");
#endif
#else
typedef char safe_open_how_size_check_[(sizeof(struct safe_open_how) ==
                                        SAFE_OPEN_HOW_SIZE_VER0) ? 1 : -1];
#endif

/**
 * @brief Open a path without ever leaving a directory (openat2 semantics).
 * @param dirfd The root, or @c AT_FDCWD (borrowed).
 * @param path  The untrusted path.
 * @param how   open(2) flags, mode and @c SAFE_RESOLVE_* bits (exactly one scope).
 * @param size  @c sizeof(*how) as the caller knows it.
 * @return A new @c O_CLOEXEC descriptor, or -1 with the errno of openat2(2).
 * @see safe_openat2(3)
 */
SAFEOPEN_PUBLIC SAFEOPEN_NODISCARD int safe_openat2(int dirfd, const char *path,
                                                    const struct safe_open_how *how, size_t size);

/**
 * @brief Open a path beneath a directory: the simple form.
 * @param dirfd The directory the path must stay beneath, or @c AT_FDCWD (borrowed).
 * @param path  The untrusted path.
 * @param flags open(2) flags.
 * @param mode  Mode for @c O_CREAT or @c O_TMPFILE (07777 at most); ignored otherwise.
 * @return A new @c O_CLOEXEC descriptor, or -1 with @c errno set (@c EXDEV: an escape).
 * @see safe_openat_beneath(3)
 */
SAFEOPEN_PUBLIC SAFEOPEN_NODISCARD int safe_openat_beneath(int dirfd, const char *path, int flags,
                                                           mode_t mode);

/**
 * @brief Open a path with a directory as its root: the simple form.
 * @param dirfd The root, or @c AT_FDCWD (borrowed).
 * @param path  The untrusted path, absolute or relative.
 * @param flags open(2) flags.
 * @param mode  Mode for @c O_CREAT or @c O_TMPFILE (07777 at most); ignored otherwise.
 * @return A new @c O_CLOEXEC descriptor, or -1 with @c errno set.
 * @see safe_openat_in_root(3)
 */
SAFEOPEN_PUBLIC SAFEOPEN_NODISCARD int safe_openat_in_root(int dirfd, const char *path, int flags,
                                                           mode_t mode);

/** @} */

/** @defgroup safeopen_tmpfile Files that appear complete, extended attributes included
 * @{ */

/** @brief One extended attribute to set on a new file. */
struct safe_xattr {
	const char *name;  /**< Full name with namespace, e.g. "user.mime_type". */
	const void *value; /**< The value (NULL only when @c size is 0). */
	size_t size;       /**< Length of @c value (at most 65536). */
};

/** Atomically replace an existing file at the final name. */
#define SAFE_TMPFILE_REPLACE (1ULL << 48)
/** fsync(2) the file and its directory before returning. */
#define SAFE_TMPFILE_SYNC (1ULL << 49)
/** Create the missing parent directories (removed again if nothing is published). */
#define SAFE_TMPFILE_PARENTS (1ULL << 51)

/**
 * @brief Create a file that appears with its extended attributes already set.
 * @param dirfd   The root, or @c AT_FDCWD (borrowed).
 * @param path    The final path of the file.
 * @param mode    Permission bits (07777 at most); the descriptor is writable regardless.
 * @param xattrs  Attributes to set (NULL when @p nxattrs is 0).
 * @param nxattrs Number of entries in @p xattrs.
 * @param flags   @c SAFE_RESOLVE_* bits and @c SAFE_TMPFILE_* bits.
 * @return A new @c O_RDWR|O_CLOEXEC descriptor of the published file, or -1 (nothing left).
 * @see safe_tmpfile_xattr(3)
 */
SAFEOPEN_PUBLIC SAFEOPEN_NODISCARD int safe_tmpfile_xattr(int dirfd, const char *path, mode_t mode,
                                                          const struct safe_xattr *xattrs,
                                                          size_t nxattrs, uint64_t flags);

/**
 * @brief Store a buffer as a file beneath a directory in one atomic step.
 * @param dirfd   The root, or @c AT_FDCWD (borrowed).
 * @param path    The file's final path.
 * @param data    The content (NULL when @p len is 0).
 * @param len     Its length in bytes.
 * @param mode    Permission bits (the umask applies).
 * @param xattrs  Attributes to set (NULL when @p nxattrs is 0).
 * @param nxattrs Number of entries in @p xattrs.
 * @param flags   As safe_tmpfile_xattr().
 * @return 0, or -1 with @c errno set (nothing left).
 * @see safe_write_atomic(3)
 */
SAFEOPEN_PUBLIC int safe_write_atomic(int dirfd, const char *path, const void *data, size_t len,
                                      mode_t mode, const struct safe_xattr *xattrs,
                                      size_t nxattrs, uint64_t flags);

/** @brief An unpublished file of the two-phase form (opaque; one thread at a time). */
struct safe_tmpfile;

/**
 * @brief Create a file to be written completely before its name appears.
 * @param dirfd The root, or @c AT_FDCWD (borrowed).
 * @param path  The path the file will be published under.
 * @param mode  Final permission bits (07777 at most), applied at publication.
 * @param flags @c SAFE_RESOLVE_* bits and #SAFE_TMPFILE_PARENTS.
 * @param[out] tmpp Receives the handle; untouched on failure.
 * @return 0, or -1 with @c errno set (nothing created, no descriptor left open).
 * @see safe_tmpfile_open(3)
 */
SAFEOPEN_PUBLIC SAFEOPEN_NODISCARD int safe_tmpfile_open(int dirfd, const char *path, mode_t mode,
                                                         uint64_t flags,
                                                         struct safe_tmpfile **tmpp);

/**
 * @brief The descriptor of an unpublished file, lent to the caller.
 * @param tmp The handle of safe_tmpfile_open().
 * @return The @c O_RDWR descriptor (the handle's: never close it), or -1 with @c errno set.
 * @see safe_tmpfile_open(3)
 */
SAFEOPEN_PUBLIC SAFEOPEN_NODISCARD int safe_tmpfile_fd(const struct safe_tmpfile *tmp);

/**
 * @brief Publish a file with its extended attributes and final mode.
 * @param tmp     The handle of safe_tmpfile_open(); freed on success only.
 * @param xattrs  Attributes to set (NULL when @p nxattrs is 0).
 * @param nxattrs Number of entries in @p xattrs.
 * @param flags   #SAFE_TMPFILE_REPLACE and/or #SAFE_TMPFILE_SYNC.
 * @return The descriptor of safe_tmpfile_fd(), now the caller's, or -1 (@c EBADF: it was closed).
 * @see safe_tmpfile_open(3)
 */
SAFEOPEN_PUBLIC SAFEOPEN_NODISCARD int safe_tmpfile_link(struct safe_tmpfile *tmp,
                                                         const struct safe_xattr *xattrs,
                                                         size_t nxattrs, uint64_t flags);

/**
 * @brief Which extended attribute made the last publication fail.
 * @param tmp The handle of safe_tmpfile_open().
 * @return Its index in the failed call's @p xattrs, or -1 (@c ENODATA: none failed).
 * @see safe_tmpfile_open(3)
 */
SAFEOPEN_PUBLIC ssize_t safe_tmpfile_failed_xattr(const struct safe_tmpfile *tmp);

/**
 * @brief Abandon an unpublished file.
 * @param tmp The handle of safe_tmpfile_open(), or NULL (ignored).
 * @return 0, or -1 with @c errno set; the handle is freed regardless.
 * @see safe_tmpfile_open(3)
 */
SAFEOPEN_PUBLIC int safe_tmpfile_discard(struct safe_tmpfile *tmp);

/**
 * @brief Remove the leftover hidden temporary files of this library from a directory.
 * @param dirfd The root, or @c AT_FDCWD (borrowed).
 * @param path  The directory to sweep ("." for @p dirfd itself).
 * @param min_age_seconds Minimum age of a leftover to remove (0: any).
 * @param flags @c SAFE_RESOLVE_* bits.
 * @param[out] removed If not NULL, the number removed, on failure too.
 * @return The number of names removed, or -1 with @c errno set to the first failure.
 * @see safe_tmpfile_sweep_beneath(3)
 */
SAFEOPEN_PUBLIC int safe_tmpfile_sweep_beneath(int dirfd, const char *path,
                                               unsigned int min_age_seconds, uint64_t flags,
                                               unsigned int *removed);

/** @} */

/** @defgroup safeopen_ops Operations beneath a root: the parent resolved, then the last name
 * @{ */

/** Follow a trailing symlink (still scoped to the root). */
#define SAFE_FOLLOW (1ULL << 40)
/** safe_unlinkat_beneath(): remove a directory (@c AT_REMOVEDIR). */
#define SAFE_REMOVEDIR (1ULL << 41)
/* Bits 42 and 50 were SAFE_MKDIR_PARENTS and SAFE_TMPFILE_NO_OTMPFILE before 1.0. */
/** safe_renameat_beneath(): fail with @c EEXIST if the new name exists. */
#define SAFE_RENAME_NOREPLACE (1ULL << 43)
/** safe_renameat_beneath(): atomically exchange the two names. */
#define SAFE_RENAME_EXCHANGE (1ULL << 44)
/** safe_rmtree_beneath(): also empty the mount points found in the tree. */
#define SAFE_RMTREE_XDEV (1ULL << 45)
/** safe_symlinkat_beneath(), safe_mknodat_beneath(): atomically replace a non-directory. */
#define SAFE_REPLACE (1ULL << 46)

/**
 * @brief Create a directory beneath a directory.
 * @param dirfd The root, or @c AT_FDCWD (borrowed).
 * @param path  The directory to create.
 * @param mode  Permission bits (the umask or a default ACL applies).
 * @param flags @c SAFE_RESOLVE_* bits.
 * @return 0, or -1 with @c errno set.
 * @see safe_mkdirat_beneath(3)
 */
SAFEOPEN_PUBLIC int safe_mkdirat_beneath(int dirfd, const char *path, mode_t mode, uint64_t flags);

/**
 * @brief Create a directory and its missing parents beneath a directory (mkdir -p).
 * @param dirfd The root, or @c AT_FDCWD (borrowed).
 * @param path  The directory to create, with its missing parents.
 * @param mode  Permission bits of every directory it creates (the umask applies).
 * @param flags @c SAFE_RESOLVE_* bits.
 * @return A new @c O_PATH|O_DIRECTORY|O_CLOEXEC descriptor of it, or -1 (what was made remains).
 * @see safe_mkdir_all_beneath(3)
 */
SAFEOPEN_PUBLIC SAFEOPEN_NODISCARD int safe_mkdir_all_beneath(int dirfd, const char *path,
                                                              mode_t mode, uint64_t flags);

/**
 * @brief Open a file with O_CREAT beneath a directory, making its missing parents first.
 * @param dirfd    The root, or @c AT_FDCWD (borrowed).
 * @param path     The file to open or create.
 * @param oflags   open(2) flags with @c O_CREAT; @c O_CLOEXEC is added.
 * @param mode     Permission bits of a new file (the umask applies).
 * @param dir_mode Permission bits of every directory it creates (the umask applies).
 * @param flags    @c SAFE_RESOLVE_* bits.
 * @return A new descriptor, or -1 with @c errno set (nothing left).
 * @see safe_create_all_beneath(3)
 */
SAFEOPEN_PUBLIC SAFEOPEN_NODISCARD int safe_create_all_beneath(int dirfd, const char *path,
                                                               int oflags, mode_t mode,
                                                               mode_t dir_mode, uint64_t flags);

/**
 * @brief Create a FIFO, socket, device or empty file beneath a directory.
 * @param dirfd The root, or @c AT_FDCWD (borrowed).
 * @param path  The name to create.
 * @param mode  File type and permission bits, as mknodat(2).
 * @param dev   Device number for @c S_IFCHR and @c S_IFBLK, else ignored.
 * @param flags @c SAFE_RESOLVE_* bits and #SAFE_REPLACE.
 * @return 0, or -1 with @c errno set.
 * @see safe_mknodat_beneath(3)
 */
SAFEOPEN_PUBLIC int safe_mknodat_beneath(int dirfd, const char *path, mode_t mode, dev_t dev,
                                         uint64_t flags);

/**
 * @brief Resolve the parent of an untrusted path beneath a directory and return the last name.
 * @param dirfd The root, or @c AT_FDCWD (borrowed).
 * @param path  The untrusted path.
 * @param flags @c SAFE_RESOLVE_* bits.
 * @param[out] name Receives the last component, NUL-terminated (untouched on failure).
 * @param size  Size of @p name, the NUL included.
 * @return The parent's new @c O_PATH descriptor, or -1 (@c EINVAL: no last name; @c ERANGE).
 * @see safe_open_parent_beneath(3)
 */
SAFEOPEN_PUBLIC SAFEOPEN_NODISCARD int safe_open_parent_beneath(int dirfd, const char *path,
                                                                uint64_t flags, char *name,
                                                                size_t size);

/**
 * @brief Get file status beneath a directory.
 * @param dirfd The root, or @c AT_FDCWD (borrowed).
 * @param path  The object.
 * @param[out] st Receives the status.
 * @param flags @c SAFE_RESOLVE_* bits and #SAFE_FOLLOW.
 * @return 0, or -1 with @c errno set.
 * @see safe_fstatat_beneath(3)
 */
SAFEOPEN_PUBLIC int safe_fstatat_beneath(int dirfd, const char *path, struct stat *st,
                                         uint64_t flags);

/**
 * @brief Get extended file status (statx) beneath a directory.
 * @param dirfd The root, or @c AT_FDCWD (borrowed).
 * @param path  The object.
 * @param flags @c SAFE_RESOLVE_* bits and #SAFE_FOLLOW.
 * @param mask  The @c STATX_* fields wanted, as statx(2).
 * @param[out] stx Receives the status.
 * @return 0, or -1 with @c errno set.
 * @see safe_fstatat_beneath(3)
 */
SAFEOPEN_PUBLIC int safe_statx_beneath(int dirfd, const char *path, uint64_t flags,
                                       unsigned int mask, struct statx *stx);

/**
 * @brief Open a directory stream beneath a directory.
 * @param dirfd The root, or @c AT_FDCWD (borrowed).
 * @param path  The directory (a trailing symlink is followed, scoped).
 * @param flags @c SAFE_RESOLVE_* bits; #SAFE_FOLLOW is accepted and changes nothing.
 * @return A stream to close with closedir(3), or NULL with @c errno set.
 * @see safe_opendir_beneath(3)
 */
SAFEOPEN_PUBLIC SAFEOPEN_NODISCARD DIR *safe_opendir_beneath(int dirfd, const char *path,
                                                             uint64_t flags);

/**
 * @brief Remove a name beneath a directory.
 * @param dirfd The root, or @c AT_FDCWD (borrowed).
 * @param path  The name to remove (never followed).
 * @param flags @c SAFE_RESOLVE_* bits and #SAFE_REMOVEDIR.
 * @return 0, or -1 with @c errno set.
 * @see safe_unlinkat_beneath(3)
 */
SAFEOPEN_PUBLIC int safe_unlinkat_beneath(int dirfd, const char *path, uint64_t flags);

/**
 * @brief Remove a directory tree beneath a directory (rm -r).
 * @param dirfd The root, or @c AT_FDCWD (borrowed).
 * @param path  The tree to remove.
 * @param flags @c SAFE_RESOLVE_* bits and #SAFE_RMTREE_XDEV.
 * @return 0, or -1 with the first error (@c EXDEV: a mount point left alone).
 * @see safe_rmtree_beneath(3)
 */
SAFEOPEN_PUBLIC int safe_rmtree_beneath(int dirfd, const char *path, uint64_t flags);

/**
 * @brief Rename a file with each name beneath its own directory.
 * @param olddirfd The root of @p oldpath, or @c AT_FDCWD (borrowed).
 * @param oldpath  The existing name.
 * @param newdirfd The root of @p newpath, or @c AT_FDCWD (borrowed).
 * @param newpath  The new name.
 * @param flags    @c SAFE_RESOLVE_* bits, #SAFE_RENAME_NOREPLACE or #SAFE_RENAME_EXCHANGE.
 * @return 0, or -1 with @c errno set.
 * @see safe_renameat_beneath(3)
 */
SAFEOPEN_PUBLIC int safe_renameat_beneath(int olddirfd, const char *oldpath, int newdirfd,
                                          const char *newpath, uint64_t flags);

/**
 * @brief Make a hard link with each name beneath its own directory.
 * @param olddirfd The root of @p oldpath, or @c AT_FDCWD (borrowed).
 * @param oldpath  The existing object.
 * @param newdirfd The root of @p newpath, or @c AT_FDCWD (borrowed).
 * @param newpath  The new name.
 * @param flags    @c SAFE_RESOLVE_* bits and #SAFE_FOLLOW.
 * @return 0, or -1 with @c errno set.
 * @see safe_linkat_beneath(3)
 */
SAFEOPEN_PUBLIC int safe_linkat_beneath(int olddirfd, const char *oldpath, int newdirfd,
                                        const char *newpath, uint64_t flags);

/**
 * @brief Create a symbolic link beneath a directory.
 * @param target   The link body, stored as given.
 * @param dirfd    The root, or @c AT_FDCWD (borrowed).
 * @param linkpath The name of the new link.
 * @param flags    @c SAFE_RESOLVE_* bits and #SAFE_REPLACE.
 * @return 0, or -1 with @c errno set.
 * @see safe_symlinkat_beneath(3)
 */
SAFEOPEN_PUBLIC int safe_symlinkat_beneath(const char *target, int dirfd, const char *linkpath,
                                           uint64_t flags);

/**
 * @brief Read a symbolic link beneath a directory.
 * @param dirfd The root, or @c AT_FDCWD (borrowed).
 * @param path  The symlink.
 * @param[out] buf Receives the body, not NUL-terminated.
 * @param size  Size of @p buf.
 * @param flags @c SAFE_RESOLVE_* bits.
 * @return The number of bytes placed in @p buf, or -1 with @c errno set.
 * @see safe_readlinkat_beneath(3)
 */
SAFEOPEN_PUBLIC SAFEOPEN_NODISCARD ssize_t safe_readlinkat_beneath(int dirfd, const char *path,
                                                                   char *buf, size_t size,
                                                                   uint64_t flags);

/**
 * @brief Change the mode of a file beneath a directory.
 * @param dirfd The root, or @c AT_FDCWD (borrowed).
 * @param path  The object.
 * @param mode  The new permission bits.
 * @param flags @c SAFE_RESOLVE_* bits and #SAFE_FOLLOW.
 * @return 0, or -1 with @c errno set (@c ENXIO: no fchmodat2(2) and no verified procfs).
 * @see safe_fchmodat_beneath(3)
 */
SAFEOPEN_PUBLIC int safe_fchmodat_beneath(int dirfd, const char *path, mode_t mode,
                                          uint64_t flags);

/**
 * @brief Change the owner of a file beneath a directory.
 * @param dirfd The root, or @c AT_FDCWD (borrowed).
 * @param path  The object.
 * @param owner The new owner, or (uid_t)-1 to keep it.
 * @param group The new group, or (gid_t)-1 to keep it.
 * @param flags @c SAFE_RESOLVE_* bits and #SAFE_FOLLOW.
 * @return 0, or -1 with @c errno set.
 * @see safe_fchmodat_beneath(3)
 */
SAFEOPEN_PUBLIC int safe_fchownat_beneath(int dirfd, const char *path, uid_t owner, gid_t group,
                                          uint64_t flags);

/**
 * @brief Change the timestamps of a file beneath a directory.
 * @param dirfd The root, or @c AT_FDCWD (borrowed).
 * @param path  The object.
 * @param times Access then modification time, as utimensat(2); NULL: now.
 * @param flags @c SAFE_RESOLVE_* bits and #SAFE_FOLLOW.
 * @return 0, or -1 with @c errno set.
 * @see safe_fchmodat_beneath(3)
 */
SAFEOPEN_PUBLIC int safe_utimensat_beneath(int dirfd, const char *path,
                                           const struct timespec *times, uint64_t flags);

/**
 * @brief Get an extended attribute of a file beneath a directory.
 * @param dirfd The root, or @c AT_FDCWD (borrowed).
 * @param path  The object.
 * @param name  The attribute name.
 * @param[out] value Receives the value.
 * @param size  Size of @p value (0: return the size needed).
 * @param flags @c SAFE_RESOLVE_* bits and #SAFE_FOLLOW.
 * @return The length of the value, or -1 with @c errno set (@c ENXIO: no verified procfs).
 * @see safe_getxattr_beneath(3)
 */
SAFEOPEN_PUBLIC SAFEOPEN_NODISCARD ssize_t safe_getxattr_beneath(int dirfd, const char *path,
                                                                 const char *name, void *value,
                                                                 size_t size, uint64_t flags);

/**
 * @brief Set an extended attribute of a file beneath a directory.
 * @param dirfd The root, or @c AT_FDCWD (borrowed).
 * @param path  The object.
 * @param name  The attribute name.
 * @param value The value.
 * @param size  Length of @p value.
 * @param xattr_flags @c XATTR_CREATE, @c XATTR_REPLACE or 0, as setxattr(2).
 * @param flags @c SAFE_RESOLVE_* bits and #SAFE_FOLLOW.
 * @return 0, or -1 with @c errno set (@c ENXIO: no verified procfs).
 * @see safe_getxattr_beneath(3)
 */
SAFEOPEN_PUBLIC int safe_setxattr_beneath(int dirfd, const char *path, const char *name,
                                          const void *value, size_t size, int xattr_flags,
                                          uint64_t flags);

/**
 * @brief List the extended attributes of a file beneath a directory.
 * @param dirfd The root, or @c AT_FDCWD (borrowed).
 * @param path  The object.
 * @param[out] list Receives the NUL-terminated names.
 * @param size  Size of @p list (0: return the size needed).
 * @param flags @c SAFE_RESOLVE_* bits and #SAFE_FOLLOW.
 * @return The length of the list, or -1 with @c errno set (@c ENXIO: no verified procfs).
 * @see safe_getxattr_beneath(3)
 */
SAFEOPEN_PUBLIC SAFEOPEN_NODISCARD ssize_t safe_listxattr_beneath(int dirfd, const char *path,
                                                                  char *list, size_t size,
                                                                  uint64_t flags);

/**
 * @brief Remove an extended attribute of a file beneath a directory.
 * @param dirfd The root, or @c AT_FDCWD (borrowed).
 * @param path  The object.
 * @param name  The attribute name.
 * @param flags @c SAFE_RESOLVE_* bits and #SAFE_FOLLOW.
 * @return 0, or -1 with @c errno set (@c ENXIO: no verified procfs).
 * @see safe_getxattr_beneath(3)
 */
SAFEOPEN_PUBLIC int safe_removexattr_beneath(int dirfd, const char *path, const char *name,
                                             uint64_t flags);

/**
 * @brief Reopen a descriptor (typically O_PATH) with new flags.
 * @param fd    The descriptor to reopen (borrowed).
 * @param flags New open(2) flags; @c O_CLOEXEC is always added.
 * @return A new descriptor, or -1 (@c ENXIO: no verified procfs; @c EXDEV: another object).
 * @see safe_reopen(3)
 */
SAFEOPEN_PUBLIC SAFEOPEN_NODISCARD int safe_reopen(int fd, int flags);

/**
 * @brief Canonical path of an object, relative to a directory.
 * @param dirfd The root, or @c AT_FDCWD (borrowed).
 * @param path  The path to canonicalize.
 * @param[out] buf Receives the NUL-terminated path ("." for the root itself).
 * @param size  Size of @p buf.
 * @param flags @c SAFE_RESOLVE_* bits.
 * @return The length of the path, or -1 with @c errno set (@c ERANGE: @p buf too small).
 * @see safe_realpath_beneath(3)
 */
SAFEOPEN_PUBLIC SAFEOPEN_NODISCARD ssize_t safe_realpath_beneath(int dirfd, const char *path,
                                                                 char *buf, size_t size,
                                                                 uint64_t flags);

/** @} */

/** @defgroup safeopen_walk Confined tree walks: links never followed, bounded descriptors
 * @{ */

/** safe_walk_open(): do not enter a directory on another mount (find -xdev). */
#define SAFE_WALK_XDEV (1ULL << 56)
/** safe_walk_open(): also report each directory after its entries. */
#define SAFE_WALK_POSTORDER (1ULL << 57)
/** safe_walk_open(): do not stat non-directories whose type the listing tells. */
#define SAFE_WALK_NO_STAT (1ULL << 58)
/** safe_walk_open(): the first entry with an error ends the walk. */
#define SAFE_WALK_STOP_ON_ERROR (1ULL << 59)

/** A directory, before its entries. */
#define SAFE_WALK_PRE 1
/** A directory, after its entries. */
#define SAFE_WALK_POST 2
/** An entry that is not entered (not a directory, or one that could not be opened). */
#define SAFE_WALK_LEAF 3
/** A directory on another mount, not entered (#SAFE_WALK_XDEV). */
#define SAFE_WALK_MOUNT 4

/** @brief A walk in progress (opaque). */
struct safe_walk;

/** @brief One entry of a walk; valid until the next call on the walk. */
struct safe_walk_entry {
	const char *path;        /**< The start's path as given, then "/name" per level. */
	const char *name;        /**< Its name in @c dirfd ("." for a start without parent). */
	int dirfd;               /**< Its parent's descriptor (lent). */
	int fd;                  /**< A directory's own descriptor (lent), else -1. */
	unsigned int visit;      /**< #SAFE_WALK_PRE, _POST, _LEAF or _MOUNT. */
	int error;               /**< 0, or the errno of what failed for this entry. */
	size_t depth;            /**< 0 for the start. */
	const struct statx *stx; /**< Its statx (@c stx_mask says which fields). */
};

/**
 * @brief Start a walk of a directory tree without leaving a root.
 * @param dirfd The root, or @c AT_FDCWD (borrowed).
 * @param path  The start (a trailing symlink is not followed).
 * @param flags @c SAFE_RESOLVE_* bits and @c SAFE_WALK_* bits.
 * @param[out] w Receives the walk.
 * @return 0, or -1 with @c errno set.
 * @see safe_walk_open(3)
 */
SAFEOPEN_PUBLIC SAFEOPEN_NODISCARD int safe_walk_open(int dirfd, const char *path, uint64_t flags,
                                                      struct safe_walk **w);

/**
 * @brief The next entry of a confined tree walk.
 * @param w The walk.
 * @param[out] e Receives the entry.
 * @return 1 with @p e filled, 0 at the end, or -1 with @c errno set.
 * @see safe_walk_open(3)
 */
SAFEOPEN_PUBLIC SAFEOPEN_NODISCARD int safe_walk_next(struct safe_walk *w,
                                                      struct safe_walk_entry *e);

/**
 * @brief Do not enter the directory just reported.
 * @param w The walk.
 * @return 0, or -1 with @c errno set (@c EINVAL: the last entry was not #SAFE_WALK_PRE).
 * @see safe_walk_open(3)
 */
SAFEOPEN_PUBLIC int safe_walk_skip(struct safe_walk *w);

/**
 * @brief End a confined tree walk.
 * @param w The walk, or NULL (ignored).
 * @see safe_walk_open(3)
 */
SAFEOPEN_PUBLIC void safe_walk_close(struct safe_walk *w);

/** @} */

/** @defgroup safeopen_proc A verified procfs, never what is mounted over it (safe_proc_open(3))
 * @{ */

/** Base of safe_proc_open(): the procfs root (for "sys/...", "cpuinfo"). */
#define SAFE_PROC_ROOT ((1ULL << 63) | 0)
/** Base: this process ("self"). */
#define SAFE_PROC_SELF ((1ULL << 63) | 1)
/** Base: this thread ("thread-self"). */
#define SAFE_PROC_THREAD_SELF ((1ULL << 63) | 2)
/** Base: the process with this pid (1 to INT32_MAX). */
#define SAFE_PROC_PID(pid) ((uint64_t)(uint32_t)(pid))

/** safe_proc_open(): follow a magic link at the end of the path. */
#define SAFE_PROC_MAGICLINKS (1ULL << 36)
/** safe_proc_handle(): the full procfs (the one of #SAFE_PROC_ROOT). */
#define SAFE_PROC_FULL (1ULL << 37)

/** Handle kind: a private procfs instance with subset=pid (fsopen). */
#define SAFE_PROC_KIND_FSOPEN_SUBSET 1
/** Handle kind: a private procfs instance (fsopen). */
#define SAFE_PROC_KIND_FSOPEN 2
/** Handle kind: a clone of the /proc mount without its submounts (open_tree). */
#define SAFE_PROC_KIND_OPEN_TREE 3
/** Handle kind: /proc itself, verified (procfs magic, root inode, mount). */
#define SAFE_PROC_KIND_MOUNTED 4

/**
 * @brief A new descriptor of the library's cached procfs handle, and how it was made.
 * @param flags 0, or #SAFE_PROC_FULL (the handle of #SAFE_PROC_ROOT).
 * @param kind  If not NULL, gets the @c SAFE_PROC_KIND_* of the handle.
 * @return A new @c O_CLOEXEC descriptor, or -1 with @c errno set.
 * @see safe_proc_open(3)
 */
SAFEOPEN_PUBLIC SAFEOPEN_NODISCARD int safe_proc_handle(uint64_t flags, unsigned int *kind);

/**
 * @brief Open a file of a verified procfs, never across a mount or a magic link.
 * @param base   #SAFE_PROC_ROOT, #SAFE_PROC_SELF, #SAFE_PROC_THREAD_SELF or SAFE_PROC_PID(pid).
 * @param path   Path below the base ("attr/current", "sys/kernel/ostype").
 * @param oflags open(2) flags; @c O_CLOEXEC is added.
 * @param flags  0, or #SAFE_PROC_MAGICLINKS.
 * @return A new descriptor, or -1 with @c errno set.
 * @see safe_proc_open(3)
 */
SAFEOPEN_PUBLIC SAFEOPEN_NODISCARD int safe_proc_open(uint64_t base, const char *path, int oflags,
                                                      uint64_t flags);

/**
 * @brief Read a link of a verified procfs, magic links included.
 * @param base As safe_proc_open().
 * @param path Path of the link below the base ("exe", "fd/3").
 * @param buf  Where to store the body (not NUL-terminated).
 * @param size Size of @p buf.
 * @return The length of the body, or -1 with @c errno set.
 * @see safe_proc_open(3)
 */
SAFEOPEN_PUBLIC SAFEOPEN_NODISCARD ssize_t safe_proc_readlink(uint64_t base, const char *path,
                                                              char *buf, size_t size);

/**
 * @brief The checked /proc/thread-self/fd/N string of a descriptor, for path-only calls.
 * @param fd   An open descriptor (borrowed).
 * @param buf  Where to store the NUL-terminated path.
 * @param size Size of @p buf (64 is always enough).
 * @return 0, or -1 with @c errno set (@c ERANGE: @p buf too small).
 * @see safe_proc_open(3)
 */
SAFEOPEN_PUBLIC int safe_proc_fd_path(int fd, char *buf, size_t size);

/** @} */

/** @defgroup safeopen_diag Diagnostics, never a security decision (safe_diag_get(3))
 * @{ */

/** safe_diag::where: nothing recorded (or the failure was not a lookup). */
#define SAFE_DIAG_NONE 0
/** safe_diag::where: the component is in the caller's path. */
#define SAFE_DIAG_PATH 1
/** safe_diag::where: the component is in the body of a symlink followed. */
#define SAFE_DIAG_LINK 2

/** Where the last failed resolution of this thread stopped. */
struct safe_diag {
	/** The errno of that failure; 0: nothing recorded. */
	int32_t err;
	/** #SAFE_DIAG_NONE, #SAFE_DIAG_PATH or #SAFE_DIAG_LINK. */
	uint32_t where;
	/** Byte offset of the component in the caller's path, or in the link body. */
	uint64_t offset;
	/** Its length in bytes (0: the end of the path). */
	uint64_t length;
	/** #SAFE_DIAG_LINK: which symlink's body, 1 for the first one followed. */
	uint32_t link;
	/** Padding, 0. */
	uint32_t reserved;
	/** The component, NUL-terminated (cut at 255 bytes). */
	char name[256];
};

/** Size of the first version of struct safe_diag. */
#define SAFE_DIAG_SIZE_VER0 288
#ifdef SAFEOPEN_STATIC_ASSERT_
SAFEOPEN_STATIC_ASSERT_(sizeof(struct safe_diag) == SAFE_DIAG_SIZE_VER0,
                        "struct safe_diag is SAFE_DIAG_SIZE_VER0 bytes");
#undef SAFEOPEN_STATIC_ASSERT_
#else
typedef char safe_diag_size_check_[(sizeof(struct safe_diag) == SAFE_DIAG_SIZE_VER0) ? 1 : -1];
#endif

/**
 * @brief Turn on or off the record of where this thread's failed resolutions stop.
 * @param on Nonzero: record every failed resolution of this thread from now on.
 * @return The previous setting (0 or 1).
 * @see safe_diag_get(3)
 */
SAFEOPEN_PUBLIC int safe_diag_enable(int on);

/**
 * @brief Where the last failed resolution of this thread stopped.
 * @param diag Where to copy the record.
 * @param size sizeof(*diag); a larger size gets zeros past the known fields.
 * @return 0, or -1 with @c errno set.
 * @see safe_diag_get(3)
 */
SAFEOPEN_PUBLIC int safe_diag_get(struct safe_diag *diag, size_t size);

/**
 * @brief The library's words for an errno.
 * @param err An errno value.
 * @return A static string ("path escapes the root, ..." for @c EXDEV).
 * @see safe_diag_get(3)
 */
SAFEOPEN_PUBLIC const char *safe_strerror(int err);

/** @} */

/**
 * @brief The version of the library.
 * @return A static string such as "1.0.0".
 * @see safe_version(3)
 */
SAFEOPEN_PUBLIC const char *safe_version(void);

#ifdef __cplusplus
}
#endif

#endif /* SAFEOPEN_H */
