/* SPDX-License-Identifier: MIT */
/*
 * safe-httpd: PUT and DELETE, and who may use them.
 *
 * Writes are off unless --writable. With --auth-file, a write needs an
 * Authorization field matching a line of that file (read once at startup):
 * a line with a colon is a USER:PASSWORD for HTTP Basic, a line without one
 * a token for "Bearer". The file must be a regular file owned by the
 * server's user with no group or other permission bits, so that nobody
 * else on the host can read the secrets (the server refuses to start
 * otherwise). --writable on an address other than loopback without
 * --auth-file is refused at startup (main.c).
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



/* ------------------------------------------------------------------ auth */

struct credential {
	char *secret; /* "user:password" (Basic) or the token (Bearer) */
	size_t len;
	bool basic;
};
static struct credential *creds;
static size_t ncreds;

bool auth_configured(void)
{
	return ncreds > 0;
}

/* Read the credentials; on error a message on standard error and -1. */
int auth_load(const char *path)
{
	/* O_NONBLOCK: a FIFO in its place must not hang the startup */
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	FILE *f = fd >= 0 ? fdopen(fd, "r") : NULL;
	struct stat st;
	if (!f || fstat(fd, &st) < 0) {
		if (fd >= 0 && !f)
			close(fd);
		fprintf(stderr, "safe-httpd: --auth-file %s: %s\n", path, strerror(errno));
		goto fail;
	}
	if (!S_ISREG(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & 077)) {
		fprintf(stderr,
			"safe-httpd: --auth-file %s: must be a regular file owned by this user "
			"(uid %u) with no group or other permissions (chmod 600)\n",
			path, (unsigned)geteuid());
		goto fail;
	}
	char line[512];
	while (fgets(line, sizeof(line), f)) {
		size_t n = strcspn(line, "\r\n");
		line[n] = '\0';
		if (!n || line[0] == '#')
			continue;
		struct credential *nc = realloc(creds, (ncreds + 1) * sizeof(*creds));
		if (!nc || !(nc[ncreds].secret = strdup(line))) {
			fprintf(stderr, "safe-httpd: --auth-file %s: %s\n", path, strerror(ENOMEM));
			creds = nc ? nc : creds;
			goto fail;
		}
		creds = nc;
		creds[ncreds].len = n;
		creds[ncreds].basic = strchr(line, ':') != NULL;
		explicit_bzero(line, sizeof(line));
		ncreds++;
	}
	fclose(f);
	if (!ncreds) {
		fprintf(stderr, "safe-httpd: --auth-file %s: no credentials in it\n", path);
		return -1;
	}
	return 0;
fail:
	if (f)
		fclose(f);
	return -1;
}

/* Base64 (RFC 4648, with padding) into out; its length, or -1. */
static long base64_decode(const char *s, char *out, size_t size)
{
	static const char digits[] =
		"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	size_t len = strlen(s), o = 0;
	if (len % 4)
		return -1;
	for (size_t i = 0; i < len; i += 4) {
		unsigned v = 0;
		int pad = 0;
		for (int k = 0; k < 4; k++) {
			const char *d = s[i + k] ? strchr(digits, s[i + k]) : NULL;
			if (s[i + k] == '=' && i + 4 == len && k >= 2) {
				pad++;
			} else if (!d || pad) {
				return -1;
			}
			v = v << 6 | (d ? (unsigned)(d - digits) : 0);
		}
		for (int k = 0; k < 3 - pad; k++) {
			if (o >= size)
				return -1;
			out[o++] = (char)(v >> (16 - 8 * k));
		}
	}
	return (long)o;
}

/* Equal, in a time that depends on the lengths only. */
static bool same_secret(const char *a, size_t alen, const char *b, size_t blen)
{
	unsigned char diff = alen != blen;
	for (size_t i = 0; i < alen && i < blen; i++)
		diff |= (unsigned char)(a[i] ^ b[i]);
	return !diff;
}

/* The user name of a Basic credential, as the log shows it (no blanks or
 * control characters: the Common Log Format splits on spaces). */
static void note_user(struct request *rq, const struct credential *cr)
{
	size_t i = 0;
	for (const char *s = cr->secret; *s && *s != ':' && i + 1 < sizeof(rq->user); s++)
		rq->user[i++] = (*s > 0x20 && *s < 0x7f && *s != '"') ? *s : '?';
	rq->user[i] = '\0';
}

/* Does the Authorization field match a credential? Every credential is
 * compared, so the time taken does not tell which one came close. */
static bool auth_ok(struct request *rq)
{
	char given[sizeof(rq->auth)];
	long glen = -1;
	bool basic = !strncasecmp(rq->auth, "Basic ", 6);
	if (basic)
		glen = base64_decode(rq->auth + 6 + strspn(rq->auth + 6, " "), given,
				     sizeof(given));
	else if (!strncasecmp(rq->auth, "Bearer ", 7))
		glen = snprintf(given, sizeof(given), "%s", rq->auth + 7 + strspn(rq->auth + 7, " "));
	const struct credential *match = NULL;
	for (size_t i = 0; glen >= 0 && i < ncreds; i++)
		if (creds[i].basic == basic &&
		    same_secret(creds[i].secret, creds[i].len, given, (size_t)glen))
			match = &creds[i];
	explicit_bzero(given, sizeof(given));
	if (match && match->basic)
		note_user(rq, match);
	return match != NULL;
}

/* 0 when the request may write; else 405 (read-only server) or 401. */
int write_refusal(struct request *rq)
{
	if (!cfg.writable)
		return 405;
	if (auth_configured() && !auth_ok(rq))
		return 401;
	return 0;
}

/* A 401 or 405 for a write the server does not allow. */
bool respond_refusal(struct conn *c, int status)
{
	if (status == 401)
		return respond_error(c, 401,
				     "WWW-Authenticate: Basic realm=\"safe-httpd\", "
				     "Bearer realm=\"safe-httpd\"\r\n");
	if (status == 405)
		return respond_error(c, 405,
				     cfg.writable ? "Allow: GET, HEAD, PUT, DELETE\r\n" :
						    "Allow: GET, HEAD\r\n");
	return respond_error(c, status, NULL);
}
