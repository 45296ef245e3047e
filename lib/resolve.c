/* SPDX-License-Identifier: MIT */
/*
 * The userspace walker. DRAFT: the resolver issue replaces this file.
 */
#include "internal.h"

int so_walk_open(int dirfd, const char *path, const struct safe_open_how *how)
{
	(void)dirfd;
	(void)path;
	(void)how;
	return so_fail(ENOSYS);
}
