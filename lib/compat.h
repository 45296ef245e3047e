/* SPDX-License-Identifier: MIT */
/*
 * What the C library may not provide, probed by configure: the statx() and
 * getdents64() wrappers (musl 1.2.3 has no statx and declares getdents64 with
 * a struct dirent * buffer), and the numbers of system calls newer than the
 * build's headers. The fallbacks enter the kernel through syscall() with the
 * <sys/syscall.h> numbers; on a kernel without the call they fail with ENOSYS
 * exactly as a libc wrapper would, and the callers' fallbacks take over.
 */
#ifndef SAFEOPEN_COMPAT_H
#define SAFEOPEN_COMPAT_H

#include <dirent.h> /* before the getdents64 macro below */
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <unistd.h>

#ifndef HAVE_STRUCT_STATX
#include <linux/stat.h> /* struct statx, STATX_* (the libc defines none) */
#endif

/* SYS_statx, SYS_renameat2 and SYS_getdents64 are taken from <sys/syscall.h>
 * as they are: every libc has named them for years, and a guessed number would
 * be wrong on some architecture (the x86-64 316 for renameat2 was). */

/* Since Linux 5.1 every architecture numbers new system calls alike (from
 * 424 up); only alpha adds 110. So a call the headers do not know yet has the
 * same number everywhere. */
#ifdef __alpha__
#define SO_SYSCALL_GENERIC(n) ((n) + 110)
#else
#define SO_SYSCALL_GENERIC(n) (n)
#endif
#ifndef SYS_open_tree
#define SYS_open_tree SO_SYSCALL_GENERIC(428) /* 5.2 */
#endif
#ifndef SYS_fsopen
#define SYS_fsopen SO_SYSCALL_GENERIC(430) /* 5.2 */
#endif
#ifndef SYS_fsconfig
#define SYS_fsconfig SO_SYSCALL_GENERIC(431) /* 5.2 */
#endif
#ifndef SYS_fsmount
#define SYS_fsmount SO_SYSCALL_GENERIC(432) /* 5.2 */
#endif
#ifndef SYS_openat2
#define SYS_openat2 SO_SYSCALL_GENERIC(437) /* 5.6 */
#endif
#ifndef SYS_fchmodat2
#define SYS_fchmodat2 SO_SYSCALL_GENERIC(452) /* 6.6 */
#endif
#ifndef SYS_setxattrat
#define SYS_setxattrat SO_SYSCALL_GENERIC(463) /* 6.13 */
#endif
#ifndef SYS_getxattrat
#define SYS_getxattrat SO_SYSCALL_GENERIC(464) /* 6.13 */
#endif
#ifndef SYS_listxattrat
#define SYS_listxattrat SO_SYSCALL_GENERIC(465) /* 6.13 */
#endif
#ifndef SYS_removexattrat
#define SYS_removexattrat SO_SYSCALL_GENERIC(466) /* 6.13 */
#endif

#ifndef HAVE_STATX
static inline int so_statx(int dirfd, const char *path, int flags, unsigned int mask,
			   struct statx *stx)
{
	return (int)syscall(SYS_statx, dirfd, path, flags, mask, stx);
}
/* Function-like, so that "struct statx" keeps its name. */
#define statx(dirfd, path, flags, mask, stx) so_statx(dirfd, path, flags, mask, stx)
#endif

#ifndef HAVE_GETDENTS64_VOIDP
/* The kernel's linux_dirent64 records, as glibc's getdents64() returns them. */
static inline ssize_t so_getdents64(int fd, void *buf, size_t size)
{
	return (ssize_t)syscall(SYS_getdents64, fd, buf, size);
}
#undef getdents64
#define getdents64(fd, buf, size) so_getdents64(fd, buf, size)
#endif

#endif
