/* SPDX-License-Identifier: MIT */
/*
 * Diagnostics: where the last failed resolution of this thread stopped
 * (safe_diag_enable(), safe_diag_get()) and the library's words for its
 * errnos (safe_strerror()).
 *
 * Nothing here takes part in a security decision: the resolver decides and
 * fails as it always does, and only then, when the thread asked for it, its
 * position is copied into a thread-local record. On the fast path the
 * kernel does not say where openat2() stopped, so a second, diagnostic walk
 * of the userspace walker (open.c: O_PATH, it opens, creates and truncates
 * nothing) finds the component; the errno recorded is still the kernel's.
 * That walk is a second look at a tree that may have changed in between:
 * its answer is a hint for a message, never a fact to act on. This file
 * calls nothing of the library: the walker (resolve.c) and the entry points
 * (open.c) call it.
 */
#include "internal.h"

#include <string.h>

struct diag_tls {
	bool on;
	struct safe_diag rec;
};

static __thread struct diag_tls diag_tls;

bool so_diag_on(void)
{
	return diag_tls.on;
}

int safe_diag_enable(int on)
{
	int was = diag_tls.on;
	diag_tls.on = on != 0;
	if (!diag_tls.on)
		memset(&diag_tls.rec, 0, sizeof(diag_tls.rec));
	return was;
}

int safe_diag_get(struct safe_diag *diag, size_t size)
{
	if (size < SAFE_DIAG_SIZE_VER0)
		return so_fail(EINVAL);
	if (!diag)
		return so_fail(EFAULT);
	if (size <= sizeof(diag_tls.rec)) {
		memcpy(diag, &diag_tls.rec, size);
		return 0;
	}
	memcpy(diag, &diag_tls.rec, sizeof(diag_tls.rec));
	memset((char *)diag + sizeof(diag_tls.rec), 0, size - sizeof(diag_tls.rec));
	return 0;
}

void so_diag_clear(void)
{
	memset(&diag_tls.rec, 0, sizeof(diag_tls.rec));
}

/* The record: the component `name` (n bytes) at `offset` in the caller's
 * path (link 0) or in the body of the link-th symlink followed. */
static void diag_set(int err, unsigned int where, size_t offset, const char *name, size_t n,
		     unsigned int link)
{
	struct safe_diag *r = &diag_tls.rec;
	r->err = err;
	r->where = where;
	r->offset = offset;
	r->length = n;
	r->link = link;
	size_t c = n < sizeof(r->name) - 1 ? n : sizeof(r->name) - 1;
	memcpy(r->name, name, c);
	r->name[c] = '\0';
}

void so_diag_walk_comp(struct so_diag_walk *d, const char *buf, size_t cap, const char *name,
		       size_t len)
{
	d->at_dist = (size_t)(buf + cap - name);
	d->at_len = len;
	size_t c = len < sizeof(d->name) ? len : sizeof(d->name);
	memcpy(d->name, name, c);
}

void so_diag_walk_body(struct so_diag_walk *d, size_t end_dist, size_t len)
{
	if (d->nbodies < SO_DIAG_BODIES) {
		d->bodies[d->nbodies].end_dist = end_dist;
		d->bodies[d->nbodies].len = len;
	}
	d->nbodies++;
}

/*
 * The walk failed with err while looking up the component recorded last.
 * The caller's path (path_len bytes) sits at the end of the walk's buffer
 * and keeps its distance from the end, and so does each link body from the
 * moment it is spliced in front of the rest: a component lies in the newest
 * body whose span holds it, else in the caller's path.
 */
void so_diag_walk_fail(const struct so_diag_walk *d, size_t path_len, int err)
{
	if (d->at_dist == 0) {
		diag_set(err, SAFE_DIAG_NONE, 0, "", 0, 0);
		return;
	}
	size_t dist = d->at_dist, n = d->at_len;
	size_t c = n < sizeof(d->name) ? n : sizeof(d->name);
	size_t nb = d->nbodies < SO_DIAG_BODIES ? d->nbodies : SO_DIAG_BODIES;
	for (size_t k = nb; k-- > 0;) {
		const struct so_diag_body *b = &d->bodies[k];
		if (dist > b->end_dist && dist <= b->end_dist + b->len) {
			diag_set(err, SAFE_DIAG_LINK, b->end_dist + b->len - dist, d->name, c,
				 (unsigned int)k + 1);
			return;
		}
	}
	if (dist <= path_len + 1)
		diag_set(err, SAFE_DIAG_PATH, path_len + 1 - dist, d->name, c, 0);
	else
		diag_set(err, SAFE_DIAG_NONE, 0, "", 0, 0);
}

void so_diag_path(const char *path, size_t offset, size_t n, int err)
{
	diag_set(err, SAFE_DIAG_PATH, offset, path + offset, n, 0);
}

void so_diag_err(int err)
{
	diag_tls.rec.err = err;
}

const char *safe_strerror(int err)
{
	switch (err) {
	case EXDEV:
		return "path escapes the root, or crosses a mount point";
	case ELOOP:
		return "too many symbolic links, or a link the flags forbid";
	case EAGAIN:
		return "a concurrent rename or mount raced the lookup; retrying is safe";
	case E2BIG:
		return "unknown nonzero fields in an extensible structure";
	case ENOTDIR:
		return "not a directory";
	case ENOENT:
		return "no such file or directory";
	case EEXIST:
		return "already exists";
	case EISDIR:
		return "is a directory";
	case EACCES:
		return "permission denied";
	case EINVAL:
		return "invalid argument or unknown flags";
	case ENAMETOOLONG:
		return "path or name too long";
	case 0:
		return "success";
	default:
		return strerror(err);
	}
}
