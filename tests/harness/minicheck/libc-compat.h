/* SPDX-License-Identifier: MIT */
/*
 * Forced into every test source built against minicheck (-include): the
 * library's own libc fallbacks (lib/compat.h: statx, getdents64, new syscall
 * numbers) and the headers that glibc's pull in implicitly but another C
 * library's do not (PATH_MAX and NAME_MAX from <limits.h>).
 */
#include "config.h"

#include <limits.h>

#include "../../lib/compat.h"

#ifndef HAVE_STRERRORNAME_NP
#include <errno.h>
#include <stddef.h>
/* glibc 2.32's strerrorname_np() for the errnos the suites name. */
static inline const char *so_test_errname(int e)
{
#define SO_E(x) case x: return #x
	switch (e) {
	SO_E(EPERM); SO_E(ENOENT); SO_E(ESRCH); SO_E(EINTR); SO_E(EIO); SO_E(ENXIO);
	SO_E(E2BIG); SO_E(EBADF); SO_E(EAGAIN); SO_E(ENOMEM); SO_E(EACCES); SO_E(EFAULT);
	SO_E(EBUSY); SO_E(EEXIST); SO_E(EXDEV); SO_E(ENODEV); SO_E(ENOTDIR); SO_E(EISDIR);
	SO_E(EINVAL); SO_E(ENFILE); SO_E(EMFILE); SO_E(ETXTBSY); SO_E(EFBIG); SO_E(ENOSPC);
	SO_E(ESPIPE); SO_E(EROFS); SO_E(EMLINK); SO_E(ERANGE); SO_E(ENAMETOOLONG);
	SO_E(ENOSYS); SO_E(ENOTEMPTY); SO_E(ELOOP); SO_E(ENODATA); SO_E(EOVERFLOW);
	SO_E(EOPNOTSUPP); SO_E(ESTALE); SO_E(EDQUOT); SO_E(ECHILD);
	default: return NULL;
	}
#undef SO_E
}
#define strerrorname_np(e) so_test_errname(e)
#endif
