/* SPDX-License-Identifier: MIT */
/*
 * safe-httpd: who may write (PUT and DELETE).
 *
 * Writes are off unless --writable. With --auth-file, a write needs an
 * Authorization field matching a line of that file: USER:PASSWORD or
 * USER:HASH for HTTP Basic, where HASH is a crypt(3) hash ("$y$", "$6$",
 * "$2y$"... as `htpasswd -B` or `mkpasswd` write them, verified with
 * crypt_r(), libxcrypt on Debian), or a line without a colon, a token for
 * "Bearer". The file must be a regular file owned by the user the server
 * runs as (after --user) with no group or other permission bits, so that
 * nobody else on the host can read the secrets. It is read at startup and
 * again on SIGHUP: a re-read that fails says why and keeps the credentials
 * in force. --writable on an address other than loopback without
 * --auth-file is refused at startup (main.c).
 */
#define _GNU_SOURCE
#include "config.h"
#ifdef HAVE_CRYPT_R
#include <crypt.h>
#endif
#include <pthread.h>

#include "httpd.h"

enum cred_kind { CRED_TOKEN, CRED_PLAIN, CRED_HASH };

struct credential {
	char *secret; /* the token, "user:password" or "user:hash" */
	size_t len;   /* of secret */
	size_t ulen;  /* Basic: of the user name, up to the colon */
	enum cred_kind kind;
};

struct credset {
	struct credential *v;
	size_t n;
	/* the hash verified when the user name matches no hashed line, so
	 * that a request takes one hash verification either way; NULL when
	 * the file has no hash */
	const char *dummy;
};

/* The credentials in force, replaced whole by auth_load() (SIGHUP) while
 * the loops read them. */
static struct credset *creds;
static pthread_rwlock_t creds_lock = PTHREAD_RWLOCK_INITIALIZER;
static atomic_bool configured;

bool auth_configured(void)
{
	return atomic_load(&configured);
}

static void credset_free(struct credset *set)
{
	if (!set)
		return;
	for (size_t i = 0; i < set->n; i++) {
		explicit_bzero(set->v[i].secret, set->v[i].len);
		free(set->v[i].secret);
	}
	free(set->v);
	free(set);
}

#ifdef HAVE_CRYPT_R
/* crypt_r()'s work area, per thread, in the thread's own storage (zero
 * before its first use, as crypt_r() wants it; nothing to free when a
 * thread ends). */
static struct crypt_data *crypt_area(void)
{
	static __thread struct crypt_data cd;
	return &cd;
}

/* Can crypt_r() here verify against hash? Hashing the empty password must
 * give a hash of the same method and length (an unknown or disabled method
 * gives NULL or a failure token starting with '*'). */
static bool hash_usable(const char *hash)
{
	struct crypt_data *cd = crypt_area();
	const char *out = cd ? crypt_r("", hash, cd) : NULL;
	return out && out[0] == '$' && strlen(out) == strlen(hash);
}
#else
/* Built without crypt_r(): no hash can be verified, so none is accepted. */
static bool hash_usable(const char *hash)
{
	(void)hash;
	return false;
}
#endif

#ifdef HAVE_CRYPT_R
#define HASHES_HERE "this build verifies them with crypt_r()"
#else
#define HASHES_HERE "this build has no crypt_r(): hashed passwords: not built"
#endif

/* One line of the file into *cr; 0, or -1 after a message. */
static int parse_credential(const char *path, unsigned lineno, const char *line, size_t n,
			    struct credential *cr, unsigned *plain_line)
{
	const char *colon = memchr(line, ':', n);
	cr->kind = CRED_TOKEN;
	cr->ulen = 0;
	if (colon) {
		const char *pw = colon + 1;
		cr->ulen = (size_t)(colon - line);
		cr->kind = pw[0] == '$' ? CRED_HASH : CRED_PLAIN;
		if (!strncmp(pw, "{SHA}", 5)) {
			fprintf(stderr, "safe-httpd: --auth-file %s: line %u: SHA-1 (htpasswd -s) is "
					"not accepted: use htpasswd -B\n", path, lineno);
			return -1;
		}
		if (cr->kind == CRED_HASH && !hash_usable(pw)) {
			fprintf(stderr, "safe-httpd: --auth-file %s: line %u: a hash crypt(3) cannot "
					"verify here (htpasswd -B, mkpasswd -m yescrypt or sha-512 "
					"write ones it can; %s)\n", path, lineno, HASHES_HERE);
			return -1;
		}
		if (cr->kind == CRED_PLAIN && !*plain_line)
			*plain_line = lineno;
	}
	cr->len = n;
	cr->secret = strndup(line, n);
	if (!cr->secret) {
		fprintf(stderr, "safe-httpd: --auth-file %s: %s\n", path, strerror(ENOMEM));
		return -1;
	}
	return 0;
}

/* Read the credentials of path, a file owned by owner. 0 when they are in
 * force; -1 after a message on standard error, the ones in force (if any)
 * kept. */
int auth_load(const char *path, uid_t owner)
{
	struct credset *set = calloc(1, sizeof(*set));
	/* O_NONBLOCK: a FIFO in its place must not hang the server */
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	FILE *f = fd >= 0 ? fdopen(fd, "r") : NULL;
	struct stat st;
	unsigned lineno = 0, plain_line = 0;
	size_t nplain = 0;
	if (!set || !f || fstat(fd, &st) < 0) {
		if (fd >= 0 && !f)
			close(fd);
		fprintf(stderr, "safe-httpd: --auth-file %s: %s\n", path, strerror(errno));
		goto fail;
	}
	if (!S_ISREG(st.st_mode) || st.st_uid != owner || (st.st_mode & 077)) {
		fprintf(stderr,
			"safe-httpd: --auth-file %s: must be a regular file owned by the server's "
			"user (uid %u) with no group or other permissions (chmod 600)\n",
			path, (unsigned)owner);
		goto fail;
	}
	char line[512];
	while (fgets(line, sizeof(line), f)) {
		lineno++;
		size_t n = strcspn(line, "\r\n");
		line[n] = '\0';
		if (!n || line[0] == '#')
			continue;
		struct credential *nv = realloc(set->v, (set->n + 1) * sizeof(*nv));
		if (!nv) {
			fprintf(stderr, "safe-httpd: --auth-file %s: %s\n", path, strerror(ENOMEM));
			goto fail;
		}
		set->v = nv;
		int r = parse_credential(path, lineno, line, n, &nv[set->n], &plain_line);
		explicit_bzero(line, sizeof(line));
		if (r < 0)
			goto fail;
		nplain += nv[set->n].kind == CRED_PLAIN;
		set->n++;
	}
	fclose(f);
	f = NULL;
	if (!set->n) {
		fprintf(stderr, "safe-httpd: --auth-file %s: no credentials in it\n", path);
		goto fail;
	}
	for (size_t i = 0; i < set->n && !set->dummy; i++)
		if (set->v[i].kind == CRED_HASH)
			set->dummy = set->v[i].secret + set->v[i].ulen + 1;
	if (nplain)
		fprintf(stderr, "safe-httpd: warning: --auth-file %s: %zu plain-text password%s "
				"(line %u%s): store hashes instead (htpasswd -B, mkpasswd)\n",
			path, nplain, nplain > 1 ? "s" : "", plain_line, nplain > 1 ? " first" : "");
	pthread_rwlock_wrlock(&creds_lock);
	struct credset *old = creds;
	creds = set;
	pthread_rwlock_unlock(&creds_lock);
	credset_free(old);
	atomic_store(&configured, true);
	return 0;
fail:
	if (f)
		fclose(f);
	credset_free(set);
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

/*
 * Does the Authorization field match a credential? Every credential is
 * compared, so the time taken does not tell which one came close; a Basic
 * request against a file with hashes verifies exactly one hash: the one
 * of its user, else the file's first (set->dummy), so a user name that is
 * not in the file costs what one that is costs (as long as the hashes
 * share a method and cost, which the man page asks).
 */
static bool auth_ok(struct request *rq)
{
	char given[sizeof(rq->auth)];
	long glen = -1;
	bool basic = !strncasecmp(rq->auth, "Basic ", 6);
	if (basic)
		glen = base64_decode(rq->auth + 6 + strspn(rq->auth + 6, " "), given,
				     sizeof(given) - 1);
	else if (!strncasecmp(rq->auth, "Bearer ", 7))
		glen = snprintf(given, sizeof(given), "%s", rq->auth + 7 + strspn(rq->auth + 7, " "));
	if (glen >= 0)
		given[glen] = '\0';
	/* Basic: "user:password"; without a colon it matches no user */
	size_t gulen = basic && glen >= 0 ? strcspn(given, ":") : 0;
	bool has_colon = basic && glen >= 0 && gulen < (size_t)glen;
	pthread_rwlock_rdlock(&creds_lock);
	const struct credset *set = creds;
	const struct credential *match = NULL, *user = NULL;
	for (size_t i = 0; glen >= 0 && i < set->n; i++) {
		const struct credential *cr = &set->v[i];
		if ((cr->kind != CRED_TOKEN) != basic)
			continue;
		if (cr->kind == CRED_HASH) {
			if (has_colon && same_secret(cr->secret, cr->ulen, given, gulen))
				user = cr;
		} else if (same_secret(cr->secret, cr->len, given, (size_t)glen)) {
			match = cr;
		}
	}
#ifdef HAVE_CRYPT_R
	if (basic && glen >= 0 && set->dummy) {
		const char *hash = user ? user->secret + user->ulen + 1 : set->dummy;
		struct crypt_data *cd = crypt_area();
		const char *out = cd ? crypt_r(has_colon ? given + gulen + 1 : "", hash, cd) : NULL;
		if (out && same_secret(out, strlen(out), hash, strlen(hash)) && user)
			match = user;
		if (cd)
			explicit_bzero(cd, sizeof(*cd));
	}
#else
	(void)user; /* no hash credential exists without crypt_r() */
#endif
	if (match && match->kind != CRED_TOKEN)
		note_user(rq, match);
	pthread_rwlock_unlock(&creds_lock);
	explicit_bzero(given, sizeof(given));
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
