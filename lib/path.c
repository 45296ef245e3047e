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
 *
 * How a path ends (so_path_end(): its last component, a trailing slash, a
 * path that names the root) is read here with so_comp_next() (internal.h),
 * the one parser of components outside the walker, for the operations, mkdir
 * -p and the tmpfile calls alike.
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

void so_path_end(const char *path, struct so_path_end *pe)
{
	pe->last = (struct so_comp){ 0, 0 };
	pe->is_root = true;
	for (struct so_comp c = { 0, 0 }; so_comp_next(path, &c);) {
		pe->last = c;
		if (so_comp_dots(path, &c) != 1)
			pe->is_root = false;
	}
	pe->trailing_slash = path[pe->last.end] != '\0'; /* only slashes follow it */
}

bool so_path_ends_in_name(const char *path)
{
	struct so_path_end pe;
	so_path_end(path, &pe);
	return !pe.trailing_slash && !so_comp_dots(path, &pe.last);
}

int so_resolve_parent(int dirfd, const char *path, uint64_t resolve, struct so_last *last)
{
	size_t len;
	if (so_path_len(path, &len) < 0)
		return -1;

	struct so_path_end pe;
	so_path_end(path, &pe);
	last->is_root = pe.is_root;
	last->trailing_slash = pe.trailing_slash;
	last->only_slashes = pe.last.end == 0;

	char parent[PATH_MAX];
	if (last->only_slashes) {
		/* The path names the root ("/"), whose parent is resolved as "/"
		 * itself (EXDEV under BENEATH, the root under IN_ROOT) and whose
		 * "last component" is ".". */
		memcpy(parent, "/", 2);
		memcpy(last->name, ".", 2);
	} else {
		size_t start = pe.last.start, nlen = pe.last.end - start;
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
