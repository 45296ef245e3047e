/* SPDX-License-Identifier: MIT */
/* safe-httpd: parsing a request head; response heads and error responses. */
#define _GNU_SOURCE
#include "httpd.h"

/* Request records freed by this thread, kept for its next requests: a
 * connection per request would otherwise allocate and free 17 KiB each
 * time, and the allocator gives such memory back to the kernel
 * (madvise) only to fault it in again. */
#define RQ_POOL_MAX 64
static __thread struct request *rq_pool[RQ_POOL_MAX];
static __thread unsigned rq_pooled;

void request_free(struct request *rq)
{
	if (rq && rq_pooled < RQ_POOL_MAX)
		rq_pool[rq_pooled++] = rq;
	else
		free(rq);
}

/* Free the thread's pool (at the end of its loop). */
void request_pool_drain(void)
{
	while (rq_pooled)
		free(rq_pool[--rq_pooled]);
}

/* A new request record: zeroed up to its big strings, which are empty. */
struct request *request_new(void)
{
	struct request *rq = rq_pooled ? rq_pool[--rq_pooled] : malloc(sizeof(*rq));
	if (!rq)
		return NULL;
	memset(rq, 0, offsetof(struct request, target));
	rq->target[0] = rq->path[0] = rq->lpath[0] = rq->made[0] = '\0';
	rq->referer[0] = rq->agent[0] = '\0';
	return rq;
}

/* The access log: each loop thread gathers its lines and writes them with
 * one write(2) (O_APPEND, whole lines) before it waits for events again, or
 * when the buffer is full, so that a busy loop makes one system call for
 * many responses and an idle one never holds a line back. */
#define LOG_BUF 32768
static __thread char log_buf[LOG_BUF];
static __thread size_t log_len;

void log_flush(void)
{
	size_t off = 0;
	while (off < log_len) {
		/* whole lines, at most PIPE_BUF bytes a write: on a pipe (stderr)
		 * another loop's lines cannot land inside one of ours */
		size_t n0 = log_len - off;
		if (n0 > PIPE_BUF) {
			const char *nl = memrchr(log_buf + off, '\n', PIPE_BUF);
			n0 = nl ? (size_t)(nl - (log_buf + off)) + 1 : PIPE_BUF;
		}
		ssize_t n = write(fileno(access_log), log_buf + off, n0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break; /* a full disk or a closed stderr: the lines are lost */
		off += (size_t)n;
	}
	log_len = 0;
}

/* SIGHUP, SIGUSR1: the log file opened again by its name (logrotate moved
 * it away), in place of the old one under the same descriptor number, so
 * that the loops go on writing with no lock: dup3() swaps the file
 * atomically. 0, or -1 with errno and the old file kept. */
int log_reopen(const char *path)
{
	int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOCTTY, 0666);
	if (fd < 0)
		return -1;
	int r = dup3(fd, fileno(access_log), O_CLOEXEC);
	int err = errno;
	close(fd);
	errno = err;
	return r < 0 ? -1 : 0;
}

void log_request(const struct conn *c, const struct request *rq)
{
	if (!access_log)
		return;
	char bytes[24] = "-", host[INET6_ADDRSTRLEN] = "-", tail[1100] = "";
	const struct sockaddr_in *v4 = (const struct sockaddr_in *)&c->peer;
	if (v4->sin_family == AF_INET)
		inet_ntop(AF_INET, &v4->sin_addr, host, sizeof(host));
	else if (c->peer.sin6_family == AF_INET6)
		inet_ntop(AF_INET6, &c->peer.sin6_addr, host, sizeof(host));
	if (rq->sent)
		snprintf(bytes, sizeof(bytes), "%llu", rq->sent);
	if (cfg.log_format != LOG_COMMON) {
		/* combined: "Referer" "User-Agent"; timed: and the seconds from
		 * the complete head to the last byte handed to the kernel */
		char ref[sizeof(rq->referer) * 4], agent[sizeof(rq->agent) * 4];
		log_escape(ref, sizeof(ref), rq->referer[0] ? rq->referer : "-");
		log_escape(agent, sizeof(agent), rq->agent[0] ? rq->agent : "-");
		int n = snprintf(tail, sizeof(tail), " \"%s\" \"%s\"", ref, agent);
		if (cfg.log_format == LOG_TIMED && n > 0 && (size_t)n < sizeof(tail)) {
			int64_t ms = now_ms() - rq->started_ms;
			snprintf(tail + n, sizeof(tail) - (size_t)n, " %lld.%03lld",
				 (long long)(ms / 1000), (long long)(ms % 1000));
		}
	}
	for (int tries = 0; tries < 2; tries++) {
		size_t room = LOG_BUF - log_len;
		int n = snprintf(log_buf + log_len, room, "%s - %s [%s] \"%s\" %d %s%s\n", host,
				 rq->user[0] ? rq->user : "-", time_now(TF_LOG),
				 rq->line[0] ? rq->line : "-", rq->status, bytes, tail);
		if (n > 0 && (size_t)n < room) {
			log_len += (size_t)n;
			return;
		}
		log_flush(); /* full: out with what is there, then again */
	}
}

/* s as the log shows it, into dst: printable ASCII, the rest and the quote
 * and backslash escaped, shortened with "..." past the buffer. */
void log_escape(char *dst, size_t size, const char *s)
{
	size_t o = 0, max = size - 8;
	for (; *s && o < max; s++) {
		unsigned char ch = (unsigned char)*s;
		if (ch == '"' || ch == '\\')
			o += (size_t)snprintf(dst + o, size - o, "\\%c", ch);
		else if (ch >= 0x20 && ch < 0x7f)
			dst[o++] = (char)ch;
		else
			o += (size_t)snprintf(dst + o, size - o, "\\x%02x", ch);
	}
	if (*s)
		o += (size_t)snprintf(dst + o, size - o, "...");
	dst[o] = '\0';
}

size_t head_end(const char *b, size_t len)
{
	for (size_t i = 0; i + 1 < len; i++) {
		if (b[i] != '\n')
			continue;
		if (b[i + 1] == '\n')
			return i + 2;
		if (b[i + 1] == '\r' && i + 2 < len && b[i + 2] == '\n')
			return i + 3;
	}
	return 0;
}

static bool is_tchar(unsigned char c)
{
	return isalnum(c) || (c && strchr("!#$%&'*+-.^_`|~", c));
}

static int hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c = tolower(c);
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

/* Turn the request target into a path: drop the scheme and authority of an
 * absolute-form target, the query and the fragment, then percent-decode once.
 * Nothing else: no "..", "/" or "\" is looked at here; that is the library's
 * job. Returns 0 or an HTTP status. */
static int decode_target(struct request *rq)
{
	const char *t = rq->target;
	if (!strncasecmp(t, "http://", 7) || !strncasecmp(t, "https://", 8)) {
		t = strchr(strstr(t, "//") + 2, '/');
		if (!t)
			t = "/";
	}
	if (t[0] != '/')
		return 400;
	size_t n = strcspn(t, "?#");
	size_t o = 0;
	for (size_t i = 0; i < n; i++) {
		int c = (unsigned char)t[i];
		if (c == '%') {
			int hi = i + 2 < n ? hexval(t[i + 1]) : -1;
			int lo = i + 2 < n ? hexval(t[i + 2]) : -1;
			if (hi < 0 || lo < 0)
				return 400;
			c = hi * 16 + lo;
			i += 2;
		}
		if (c == 0)
			return 400; /* a NUL cannot be part of a path */
		if (o >= PATH_MAX)
			return 414;
		rq->path[o++] = (char)c;
	}
	rq->path[o] = '\0';
	/* BENEATH refuses absolute paths, so the URL path "/a/b" becomes "./a/b"
	 * (a plain prefix, not a filter); IN_ROOT takes it as it is. */
	if (cfg.resolve & SAFE_RESOLVE_IN_ROOT)
		snprintf(rq->lpath, sizeof(rq->lpath), "%s", rq->path);
	else
		snprintf(rq->lpath, sizeof(rq->lpath), ".%s", rq->path);
	return 0;
}

/* A name nobody is served: the library's temporary names (".safeopen-"
 * followed by random characters, PUT's unpublished files where O_TMPFILE
 * is missing) always, other names starting with '.' unless --dotfiles.
 * "." and ".." are not names: they go to the library like the rest. */
static bool hidden_n(const char *name, size_t n)
{
	if (!n || name[0] != '.' || n == 1 || (n == 2 && name[1] == '.'))
		return false;
	return !cfg.dotfiles || (n >= 10 && !memcmp(name, ".safeopen-", 10));
}

bool name_hidden(const char *name)
{
	return hidden_n(name, strlen(name));
}

/* Does a component of the decoded URL path name something hidden? This is
 * about names, not about where they resolve: a symlink in the tree that
 * points at a dotfile serves it, as the operator who made it meant. */
bool path_hidden(const char *path)
{
	for (const char *p = path; *p;) {
		size_t n = strcspn(p, "/");
		if (hidden_n(p, n))
			return true;
		p += n;
		if (*p)
			p++;
	}
	return false;
}

/* Split the head in buf[0..head_len) into lines, in place, up to the blank
 * line: their number, or -431 (too many) or -400 (control characters). */
static int split_lines(char *buf, size_t head_len, char *lines[FIELDS_MAX + 2])
{
	char *p = buf, *end = buf + head_len;
	int nlines = 0;
	while (p < end) {
		char *nl = memchr(p, '\n', (size_t)(end - p));
		*nl = '\0';
		if (nl > p && nl[-1] == '\r')
			nl[-1] = '\0';
		if (*p == '\0')
			break; /* the blank line */
		if (nlines == FIELDS_MAX + 1)
			return -431;
		lines[nlines++] = p;
		p = nl + 1;
	}
	for (int i = 0; i < nlines; i++)
		for (const unsigned char *s = (const unsigned char *)lines[i]; *s; s++)
			if ((*s < 0x20 && *s != '\t') || *s == 0x7f)
				return -400; /* bare CR, NUL and other controls */
	return nlines;
}

/* request-line = method SP request-target SP HTTP-version. 0 or a status. */
static int parse_request_line(char *line, struct request *rq)
{
	log_escape(rq->line, sizeof(rq->line), line);
	char *sp1 = strchr(line, ' ');
	char *sp2 = sp1 ? strchr(sp1 + 1, ' ') : NULL;
	if (!sp1 || !sp2 || strchr(sp2 + 1, ' ') || sp1 == line || sp2 == sp1 + 1)
		return 400;
	*sp1 = *sp2 = '\0';
	const char *version = sp2 + 1;
	for (const char *m = line; *m; m++)
		if (!is_tchar((unsigned char)*m))
			return 400;
	if (strlen(line) >= sizeof(rq->method))
		return 501; /* no method that long here */
	/* copies: the buffer holding the head is reused for the body */
	memcpy(rq->method, line, strlen(line) + 1);
	memcpy(rq->target, sp1 + 1, strlen(sp1 + 1) + 1);
	if (!strcmp(version, "HTTP/1.1"))
		rq->http11 = true;
	else if (strcmp(version, "HTTP/1.0"))
		return (!strncmp(version, "HTTP/", 5) && isdigit((unsigned char)version[5])) ? 505 :
											   400;
	rq->keep_alive = rq->http11;
	return 0;
}

/* A value kept only whole: one too long for dst leaves it empty. */
#define KEEP(dst, v)                                   \
	do {                                           \
		if (strlen(v) < sizeof(dst))           \
			memcpy(dst, v, strlen(v) + 1); \
	} while (0)

/* One header field, name and value split and trimmed. 0 or a status. */
static int parse_field(const char *name, const char *v, struct request *rq)
{
	if (!strcasecmp(name, "Content-Length")) {
		if (!*v || strspn(v, "0123456789") != strlen(v) || strlen(v) > 18)
			return 400;
		unsigned long long len = strtoull(v, NULL, 10);
		if (rq->has_length && len != rq->length)
			return 400;
		rq->has_length = true;
		rq->length = len;
	} else if (!strcasecmp(name, "Transfer-Encoding")) {
		/* only "chunked"; anything else leaves the framing unknown */
		if (strcasecmp(v, "chunked"))
			return 501;
		rq->chunked = true;
	} else if (!strcasecmp(name, "Connection")) {
		if (strcasestr(v, "close"))
			rq->keep_alive = false;
		else if (strcasestr(v, "keep-alive"))
			rq->keep_alive = true;
	} else if (!strcasecmp(name, "Expect")) {
		if (strcasecmp(v, "100-continue"))
			return 417;
		rq->expect_continue = true;
	} else if (!strcasecmp(name, "Host")) {
		if (rq->has_host)
			return 400;
		rq->has_host = true;
	} else if (!strcasecmp(name, "If-Modified-Since")) {
		/* an invalid date is ignored (RFC 9110, 13.1.3) */
		rq->has_ims = parse_http_date(v, &rq->ims);
	} else if (!strcasecmp(name, "If-Range")) {
		rq->has_if_range = true; /* too long for either form: matches nothing */
		KEEP(rq->if_range, v);
	} else if (!strcasecmp(name, "If-None-Match")) {
		rq->has_inm = true; /* too long: matches nothing */
		KEEP(rq->inm, v);
	} else if (!strcasecmp(name, "Content-Type")) {
		KEEP(rq->content_type, v);
	} else if (!strcasecmp(name, "Range")) {
		KEEP(rq->range, v);
	} else if (!strcasecmp(name, "Authorization")) {
		KEEP(rq->auth, v);
	} else if (cfg.log_format != LOG_COMMON && !strcasecmp(name, "Referer")) {
		snprintf(rq->referer, sizeof(rq->referer), "%s", v);
	} else if (cfg.log_format != LOG_COMMON && !strcasecmp(name, "User-Agent")) {
		snprintf(rq->agent, sizeof(rq->agent), "%s", v);
	}
	return 0;
}

/* Parse the head in buf[0..head_len) in place. Returns 0 or a status. */
int parse_head(char *buf, size_t head_len, struct request *rq)
{
	char *lines[FIELDS_MAX + 2];
	int nlines = split_lines(buf, head_len, lines);
	if (nlines <= 0)
		return nlines < 0 ? -nlines : 400;
	int st = parse_request_line(lines[0], rq);
	if (st)
		return st;
	for (int i = 1; i < nlines; i++) {
		char *name = lines[i], *colon = strchr(name, ':');
		if (!colon || colon == name)
			return 400;
		for (char *s = name; s < colon; s++)
			if (!is_tchar((unsigned char)*s))
				return 400; /* includes whitespace before the colon, obs-fold */
		*colon = '\0';
		char *v = colon + 1;
		while (*v == ' ' || *v == '\t')
			v++;
		char *ve = v + strlen(v);
		while (ve > v && (ve[-1] == ' ' || ve[-1] == '\t'))
			*--ve = '\0';
		if ((st = parse_field(name, v, rq)))
			return st;
	}
	rq->client_close = !rq->keep_alive;
	if (rq->http11 && !rq->has_host)
		return 400;
	/* both framings at once is how requests are smuggled: refuse */
	if (rq->chunked && (rq->has_length || !rq->http11))
		return 400;
	return decode_target(rq);
}

/* ------------------------------------------------------------------ responses */

/* Append a response head to c->out. The connection is closed after the
 * response unless the request allows keep-alive and the server is not
 * stopping. Returns false when out of memory (the caller closes). */
bool respond_head(struct conn *c, int status, const char *ctype,
			 unsigned long long clen, const time_t *mtime, const char *extra)
{
	struct request *rq = c->rq;
	char lm[96] = "";
	if (mtime) {
		char d[48];
		format_time(TF_HTTP, *mtime, d, sizeof(d));
		snprintf(lm, sizeof(lm), "Last-Modified: %s\r\n", d);
	}
	char cl[48] = "";
	/* A 204 has no Content-Length; a 304 would have to repeat the 200's
	 * (RFC 9110, 8.6): neither sends one. */
	if (status != 204 && status != 304)
		snprintf(cl, sizeof(cl), "Content-Length: %llu\r\n", clen);
	if (stopping || c->rejected)
		rq->keep_alive = false;
	c->close_after = !rq->keep_alive;
	size_t room = PATH_MAX + 1024; /* extra may hold a Location */
	char *p = sb_reserve(&c->out, room);
	if (!p)
		return false;
	int n = snprintf(p, room,
			 "HTTP/1.1 %d %s\r\nServer: safe-httpd/%s\r\nDate: %s\r\n"
			 "%s%s%s%s%s%s%s\r\n",
			 status, reason(status), safe_version(), time_now(TF_HTTP),
			 ctype ? "Content-Type: " : "", ctype ? ctype : "", ctype ? "\r\n" : "",
			 lm, cl,
			 rq->keep_alive ? (rq->http11 ? "" : "Connection: keep-alive\r\n") :
					  "Connection: close\r\n",
			 extra ? extra : "");
	rq->status = status;
	if (n < 0 || (size_t)n >= room)
		return false;
	c->out.len += (size_t)n;
	return true;
}

/*
 * A Location field for the request's path followed by suffix ("/" to
 * redirect a directory, "" for a new file), into *b (the caller frees).
 * Built from the decoded path, never the raw target: leading slashes
 * collapsed into one and everything but unreserved characters and "/"
 * percent-encoded, so that it is always a path on this server. "//host/"
 * or "/\host/" would be a URL a browser takes to another host.
 */
void location_field(const struct request *rq, const char *suffix, struct sbuf *b)
{
	const char *p = rq->path;
	while (p[0] == '/' && p[1] == '/')
		p++;
	sb_str(b, "Location: ");
	sb_url(b, p, "/");
	sb_str(b, suffix);
	sb_str(b, "\r\n");
}

/* A complete error (or redirect) response with a one-line text body. */
bool respond_error(struct conn *c, int status, const char *extra)
{
	char body[128];
	int n = snprintf(body, sizeof(body), "%d %s\n", status, reason(status));
	if (!respond_head(c, status, "text/plain; charset=utf-8", (unsigned long long)n, NULL,
			  extra))
		return false;
	if (!strcmp(c->rq->method, "HEAD"))
		return true;
	sb_add(&c->out, body, (size_t)n);
	c->rq->sent = (unsigned long long)n;
	return !c->out.failed;
}

