/* SPDX-License-Identifier: MIT */
/*
 * The shared primitive of every operation beneath a root: resolve all but the
 * last component with the resolver, hand back the parent directory and the
 * last name, and let the caller act on that name with a *at() call.
 *
 * Safety argument: the parent is opened by the resolver (fast path or walker)
 * with O_PATH|O_DIRECTORY and the caller's scope bits, so it is beneath the
 * root when this returns. The last component is a single name without '/',
 * so a *at() call relative to the parent fd with AT_SYMLINK_NOFOLLOW (or the
 * *at() call's own no-follow behaviour) cannot leave the parent. "." and ".."
 * are returned as they are for the caller to refuse or handle.
 */
#include "internal.h"

#include <string.h>

int so_op_resolve(uint64_t flags, uint64_t allowed_op_bits, uint64_t *resolvep)
{
	if (flags & ~(SO_RESOLVE_ALL_MASK | allowed_op_bits))
		return so_fail(EINVAL);
	uint64_t resolve = flags & SO_RESOLVE_ALL_MASK;
	bool beneath = resolve & SAFE_RESOLVE_BENEATH, in_root = resolve & SAFE_RESOLVE_IN_ROOT;
	if (beneath && in_root)
		return so_fail(EINVAL);
	if (!beneath && !in_root)
		resolve |= SAFE_RESOLVE_BENEATH;
	*resolvep = resolve;
	return 0;
}

int so_resolve_parent(int dirfd, const char *path, uint64_t resolve, struct so_last *last)
{
	size_t len;
	if (so_path_len(path, &len) < 0)
		return -1;

	/* The path names the root itself when it has no component other than
	 * "." (e.g. ".", "./", "/", "./."): the last component is then "." and
	 * its parent is the root (or "/" under IN_ROOT). */
	last->is_root = true;
	for (size_t i = 0; i < len; i++) {
		if (path[i] == '/' || (path[i] == '.' && (i == 0 || path[i - 1] == '/') &&
				       (i + 1 == len || path[i + 1] == '/')))
			continue;
		last->is_root = false;
		break;
	}

	/* Strip trailing slashes; remember that there were some. */
	size_t end = len;
	while (end > 0 && path[end - 1] == '/')
		end--;
	last->trailing_slash = end < len;

	char parent[PATH_MAX];
	if (end == 0) {
		/* The path is only slashes: it names the root ("/"), whose parent
		 * is resolved as "/" itself (EXDEV under BENEATH, the root under
		 * IN_ROOT) and whose "last component" is ".". */
		memcpy(parent, "/", 2);
		memcpy(last->name, ".", 2);
	} else {
		size_t start = end;
		while (start > 0 && path[start - 1] != '/')
			start--;
		size_t nlen = end - start;
		memcpy(last->name, path + start, nlen);
		last->name[nlen] = '\0';
		if (start == 0) {
			memcpy(parent, ".", 2);
		} else {
			memcpy(parent, path, start);
			parent[start] = '\0';
		}
	}

	struct safe_open_how how = {
		.flags = O_PATH | O_DIRECTORY | O_CLOEXEC,
		.mode = 0,
		.resolve = resolve,
	};
	int fd = so_open_validated(dirfd, parent, &how);
	/* NO_DOTDOT refuses every ".." component, the last one included (after
	 * the parent, as a left-to-right walk would). */
	if (fd >= 0 && (resolve & SAFE_RESOLVE_NO_DOTDOT) && !strcmp(last->name, "..")) {
		so_close(fd);
		return so_fail(EXDEV);
	}
	return fd;
}

int so_op_open(int dirfd, const char *path, uint64_t resolve, int oflags)
{
	if (!path)
		return so_fail(EFAULT);
	struct safe_open_how how = {
		.flags = (uint64_t)(unsigned int)(O_PATH | O_CLOEXEC | oflags),
		.mode = 0,
		.resolve = resolve,
	};
	return so_open_validated(dirfd, path, &how);
}
