/* SPDX-License-Identifier: MIT */
/*
 * safe-httpd: PUT and DELETE. Who may use them is auth.c's question
 * (write_refusal()).
 */
#define _GNU_SOURCE
#include "httpd.h"

/* ------------------------------------------------------------------ PUT and DELETE */

bool serve_delete(struct conn *c)
{
	struct request *rq = c->rq;
	int r = safe_unlinkat_beneath(rootfd, rq->lpath, cfg.resolve);
	if (r < 0 && errno == EISDIR)
		r = safe_unlinkat_beneath(rootfd, rq->lpath, cfg.resolve | SAFE_REMOVEDIR);
	if (r < 0)
		return respond_error(c, status_for(errno), NULL);
	return respond_head(c, 204, NULL, 0, NULL, NULL);
}

/* -D: create the missing directories above rq->lpath, beneath ROOT, and
 * note the first of them in rq->made (see put_abandon()). 0, or -1 with
 * errno. */
static int make_parents(struct request *rq)
{
	const char *slash = strrchr(rq->lpath, '/');
	if (!slash || slash == rq->lpath) {
		errno = ENOENT;
		return -1;
	}
	size_t plen = (size_t)(slash - rq->lpath);
	char parent[sizeof(rq->lpath)];
	memcpy(parent, rq->lpath, plen);
	parent[plen] = '\0';
	/* the first prefix that does not exist is the first directory made */
	for (size_t i = 1; i <= plen; i++) {
		if (i < plen && parent[i] != '/')
			continue;
		struct stat st;
		char saved = parent[i];
		parent[i] = '\0';
		bool missing = safe_fstatat_beneath(rootfd, parent, &st, cfg.resolve) < 0 &&
			       errno == ENOENT;
		if (missing)
			memcpy(rq->made, parent, i + 1);
		parent[i] = saved;
		if (missing)
			break;
	}
	int fd = safe_mkdir_all_beneath(rootfd, parent, 0755, cfg.resolve);
	if (fd < 0) {
		rq->made[0] = '\0'; /* nothing was made past a failure we could undo */
		return -1;
	}
	close(fd);
	return 0;
}

/*
 * A PUT that will not be published: its unpublished file goes, and so do
 * the directories -D made for it, deepest first, while they are empty. An
 * rmdir that fails (a directory someone filled meanwhile) leaves that one
 * and its parents. Premise: they are paths free of ".." past rq->made,
 * since safe_mkdir_all_beneath() refuses ".." after a missing component;
 * each removal is resolved beneath ROOT like any other.
 */
void put_abandon(struct conn *c, struct safe_tmpfile *tmp)
{
	safe_tmpfile_discard(tmp);
	struct request *rq = c->rq;
	if (!rq || !rq->made[0])
		return;
	size_t made_len = strlen(rq->made);
	char p[sizeof(rq->lpath)];
	snprintf(p, sizeof(p), "%s", rq->lpath);
	for (char *slash; (slash = strrchr(p, '/')) && (size_t)(slash - p) >= made_len;) {
		*slash = '\0';
		if (safe_unlinkat_beneath(rootfd, p, cfg.resolve | SAFE_REMOVEDIR) < 0 &&
		    errno != ENOENT)
			break;
	}
	rq->made[0] = '\0';
}

/* Phase one of a PUT, once its head is in: an unpublished file next to the
 * final name. Returns 1 to read the body (after c->out, a 100 Continue, is
 * sent), 0 with a response in c->out, -1 out of memory. */
int put_begin(struct conn *c)
{
	struct request *rq = c->rq;
	if (!rq->has_length && !rq->chunked) {
		rq->keep_alive = false;
		return respond_error(c, 411, NULL) ? 0 : -1;
	}
	if (rq->length > cfg.max_body) {
		rq->keep_alive = false; /* the body is not read */
		return respond_error(c, 413, NULL) ? 0 : -1;
	}
	/* Phase one: an unpublished file next to the final name. */
	int r = safe_tmpfile_open(rootfd, rq->lpath, 0644, cfg.resolve, &c->tmp);
	if (r < 0 && errno == ENOENT && cfg.mkdirs && make_parents(rq) == 0)
		r = safe_tmpfile_open(rootfd, rq->lpath, 0644, cfg.resolve, &c->tmp);
	if (r < 0) {
		c->tmp = NULL;
		int st = status_for(errno);
		put_abandon(c, NULL);
		if (rq->length || rq->chunked)
			rq->keep_alive = false; /* the body is not read */
		return respond_error(c, st, NULL) ? 0 : -1;
	}
	c->tmpfd = safe_tmpfile_fd(c->tmp); /* lent: link returns it, discard closes it */
	c->store = true;
	/* The client waits for this before sending the body, unless it
	 * already started. */
	if (rq->expect_continue && !c->len)
		sb_str(&c->out, "HTTP/1.1 100 Continue\r\n\r\n");
	return c->out.failed ? -1 : 1;
}

/* Phase two: the whole body is in the unpublished file. The Content-Type
 * becomes user.mime_type, then the name appears with it, atomically. On a
 * filesystem without user xattrs the file is published without it. */
bool put_finish(struct conn *c)
{
	struct request *rq = c->rq;
	struct safe_tmpfile *tmp = c->tmp;
	c->tmp = NULL;
	if (c->werr) {
		put_abandon(c, tmp);
		return respond_error(c, status_for(c->werr), NULL);
	}
	struct safe_xattr xa = { "user.mime_type", rq->content_type, strlen(rq->content_type) };
	size_t nxa = valid_mime(rq->content_type, xa.size) ? 1 : 0;
	struct stat old;
	bool existed = safe_fstatat_beneath(rootfd, rq->lpath, &old, cfg.resolve) == 0;
	int out = safe_tmpfile_link(tmp, &xa, nxa, SAFE_TMPFILE_REPLACE);
	if (out < 0 && nxa && (errno == ENOTSUP || errno == EOPNOTSUPP)) {
		/* The handle is still valid and unpublished after a failed link. */
		fprintf(stderr,
			"safe-httpd: PUT %s: user xattrs not supported here (%s): "
			"stored without user.mime_type\n",
			rq->line, strerror(errno));
		out = safe_tmpfile_link(tmp, NULL, 0, SAFE_TMPFILE_REPLACE);
	}
	if (out < 0) {
		int err = errno;
		put_abandon(c, tmp);
		return respond_error(c, status_for(err), NULL);
	}
	close(out);
	rq->made[0] = '\0'; /* published: the directories stay */
	if (existed)
		return respond_head(c, 204, NULL, 0, NULL, NULL);
	struct sbuf loc = { 0 };
	location_field(rq, "", &loc);
	bool ok = respond_head(c, 201, NULL, 0, NULL,
			       !loc.failed && loc.len <= PATH_MAX + 64 ? loc.p : NULL);
	free(loc.p);
	return ok;
}
