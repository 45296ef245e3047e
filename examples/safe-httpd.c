/* SPDX-License-Identifier: MIT */
/*
 * safe-httpd: a small HTTP/1.1 file server for untrusted URLs.
 *
 *     safe-httpd [OPTIONS] ROOT [PORT]
 *
 * Serves ROOT on 127.0.0.1:PORT (default 8080; 0 picks a free port): GET and
 * HEAD of files (Content-Type from the user.mime_type xattr or the extension,
 * Last-Modified; a single byte Range, If-Range by date, If-Modified-Since),
 * directory listings, PUT (the body is published atomically
 * with its Content-Type as user.mime_type, replacing any old file) and
 * DELETE.
 *
 * Security design: the URL path is percent-decoded exactly once and handed to
 * libsafeopen as it is; the server itself never looks for "..", "/" or links
 * in it. The library is the only thing keeping requests inside ROOT, which is
 * the point of this example: escapes come back as EXDEV or ELOOP (403), and
 * names that do not exist beneath ROOT as ENOENT (404).
 *
 * Robustness: a fixed pool of worker threads, a bounded accept queue (503
 * when full), a bounded request head (8 KiB, 64 header fields), a bounded
 * PUT body, timeouts on idle and slow connections, keep-alive with pipelining,
 * and a clean exit on SIGINT or SIGTERM.
 */
#define _GNU_SOURCE /* accept4, O_PATH, sendfile */
#include <arpa/inet.h>
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sendfile.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

#include <safeopen.h>

#define HEAD_MAX 8192          /* bytes in a request head (request line + fields) */
#define FIELDS_MAX 64          /* header fields per request */
#define REQUESTS_PER_CONN 100  /* then the connection is closed */
#define QUEUE_MAX 256          /* accepted connections waiting for a worker */
#define DISCARD_MAX (1 << 20)  /* largest unwanted body read and thrown away */
#define LISTING_MAX (8 << 20)  /* largest directory listing generated */
#define POLL_SLICE_MS 200      /* how often a waiting worker checks for shutdown */

/* ------------------------------------------------------------------ configuration */

static struct {
	uint64_t resolve;
	int threads;
	int timeout_ms;
	unsigned long long max_body;
	bool read_only;
	bool quiet;
} cfg = {
	.resolve = SAFE_RESOLVE_BENEATH | SAFE_RESOLVE_NO_MAGICLINKS,
	.threads = 8,
	.timeout_ms = 10000,
	.max_body = 64ULL << 20,
};

static int rootfd = -1;
static atomic_bool stopping;
static atomic_int queued; /* connections waiting for a worker */

static const char usage_text[] =
	"Usage: safe-httpd [OPTIONS] ROOT [PORT]\n"
	"Serve the directory ROOT over HTTP/1.1 on 127.0.0.1:PORT (default 8080;\n"
	"0 picks a free port). The address is printed as \"listening on 127.0.0.1:PORT\".\n"
	"\n"
	"  GET, HEAD     files (Content-Type from the user.mime_type xattr, else the\n"
	"                extension; one byte Range; If-Modified-Since) and directory\n"
	"                listings\n"
	"  PUT           store the body atomically, replacing any old file; the\n"
	"                Content-Type is saved as user.mime_type\n"
	"  DELETE        remove a file or an empty directory\n"
	"\n"
	"URL paths are percent-decoded once and resolved by libsafeopen beneath ROOT:\n"
	"escapes get 403, missing names 404.\n"
	"\n"
	"Options:\n"
	"      --in-root         treat ROOT as \"/\" (absolute links and \"..\" stay inside)\n"
	"                        instead of refusing them\n"
	"      --walker          use the library's userspace walker, not openat2(2)\n"
	"      --read-only       refuse PUT and DELETE (405)\n"
	"  -t, --threads N       worker threads (default 8)\n"
	"      --timeout SECS    idle and slow-client timeout (default 10)\n"
	"      --max-body BYTES  largest PUT body (default 67108864)\n"
	"  -q, --quiet           do not log requests on standard error\n"
	"  -h, --help            show this help and exit\n"
	"  -V, --version         show the version and exit\n"
	"\n"
	"SIGINT or SIGTERM: stop accepting, finish requests in progress, exit 0.\n"
	"Example: safe-httpd /srv/www 8080 & curl http://127.0.0.1:8080/index.html\n";

/* ------------------------------------------------------------------ small helpers */

static const char *reason(int status)
{
	switch (status) {
	case 100: return "Continue";
	case 200: return "OK";
	case 201: return "Created";
	case 204: return "No Content";
	case 206: return "Partial Content";
	case 301: return "Moved Permanently";
	case 304: return "Not Modified";
	case 400: return "Bad Request";
	case 403: return "Forbidden";
	case 404: return "Not Found";
	case 405: return "Method Not Allowed";
	case 408: return "Request Timeout";
	case 409: return "Conflict";
	case 411: return "Length Required";
	case 413: return "Content Too Large";
	case 414: return "URI Too Long";
	case 416: return "Range Not Satisfiable";
	case 417: return "Expectation Failed";
	case 431: return "Request Header Fields Too Large";
	case 500: return "Internal Server Error";
	case 501: return "Not Implemented";
	case 503: return "Service Unavailable";
	case 505: return "HTTP Version Not Supported";
	case 507: return "Insufficient Storage";
	default: return "Unknown";
	}
}

/* The HTTP status for a library errno. */
static int status_for(int err)
{
	switch (err) {
	case ENOENT:
	case ENOTDIR:
		return 404;
	case EXDEV: /* the path escapes ROOT */
	case ELOOP: /* forbidden or looping links */
	case EACCES:
	case EPERM:
	case EBUSY: /* ROOT itself */
		return 403;
	case ENAMETOOLONG:
		return 414;
	case EISDIR:
	case EEXIST:
	case ENOTEMPTY:
		return 409;
	case EINVAL:
		return 400;
	case ENOSPC:
	case EDQUOT:
		return 507;
	case EAGAIN:
	case EMFILE:
	case ENFILE:
	case ENOMEM:
		return 503;
	default:
		return 500;
	}
}

static int64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void http_date(time_t t, char *buf, size_t size)
{
	struct tm tm;
	gmtime_r(&t, &tm);
	strftime(buf, size, "%a, %d %b %Y %H:%M:%S GMT", &tm);
}

/* An IMF-fixdate ("Sun, 06 Nov 1994 08:49:37 GMT"), the only form this
 * server sends; the obsolete forms are accepted too, as RFC 9110 asks. */
static bool parse_http_date(const char *s, time_t *out)
{
	static const char *const forms[] = {
		"%a, %d %b %Y %H:%M:%S GMT", /* IMF-fixdate */
		"%A, %d-%b-%y %H:%M:%S GMT", /* RFC 850 */
		"%a %b %e %H:%M:%S %Y",      /* asctime */
	};
	for (size_t i = 0; i < sizeof(forms) / sizeof(forms[0]); i++) {
		struct tm tm;
		memset(&tm, 0, sizeof(tm));
		const char *end = strptime(s, forms[i], &tm);
		if (end && !*end) {
			*out = timegm(&tm);
			return *out != (time_t)-1;
		}
	}
	return false;
}

/* A growable byte buffer for listings. */
struct sbuf {
	char *p;
	size_t len, cap;
	bool failed;
};

static void sb_add(struct sbuf *b, const char *s, size_t n)
{
	if (b->failed)
		return;
	if (b->len + n + 1 > b->cap) {
		size_t cap = b->cap ? b->cap : 4096;
		while (cap < b->len + n + 1)
			cap *= 2;
		char *p = cap <= LISTING_MAX ? realloc(b->p, cap) : NULL;
		if (!p) {
			b->failed = true;
			return;
		}
		b->p = p;
		b->cap = cap;
	}
	memcpy(b->p + b->len, s, n);
	b->len += n;
	b->p[b->len] = '\0';
}

static void sb_str(struct sbuf *b, const char *s)
{
	sb_add(b, s, strlen(s));
}

static void sb_html(struct sbuf *b, const char *s)
{
	for (; *s; s++) {
		switch (*s) {
		case '&': sb_str(b, "&amp;"); break;
		case '<': sb_str(b, "&lt;"); break;
		case '>': sb_str(b, "&gt;"); break;
		case '"': sb_str(b, "&quot;"); break;
		case '\'': sb_str(b, "&#39;"); break;
		default: sb_add(b, s, 1);
		}
	}
}

/* Percent-encode everything but unreserved characters (for hrefs). */
static void sb_url(struct sbuf *b, const char *s)
{
	static const char hex[] = "0123456789ABCDEF";
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (isalnum(c) || c == '-' || c == '.' || c == '_' || c == '~') {
			sb_add(b, s, 1);
		} else {
			char e[3] = { '%', hex[c >> 4], hex[c & 15] };
			sb_add(b, e, 3);
		}
	}
}

/* ------------------------------------------------------------------ connections */

struct conn {
	int fd;
	char peer[32];
	char buf[HEAD_MAX + 1]; /* the request head, then body bytes and pipelined data */
	size_t len;             /* bytes in buf */
	size_t pos;             /* bytes of buf already consumed by the current request */
};

enum { READ_OK = 0, READ_CLOSE = -1 };

/* Wait until fd is readable or the deadline passes; returns 1 readable,
 * 0 timeout (or shutdown while idle), -1 error. */
static int wait_readable(int fd, int64_t deadline, bool idle)
{
	for (;;) {
		if (idle && atomic_load(&stopping))
			return 0;
		int64_t left = deadline - now_ms();
		if (left <= 0)
			return 0;
		struct pollfd p = { .fd = fd, .events = POLLIN };
		int r = poll(&p, 1, (int)(left < POLL_SLICE_MS ? left : POLL_SLICE_MS));
		if (r > 0)
			return 1;
		if (r < 0 && errno != EINTR)
			return -1;
	}
}

static bool send_all(int fd, const void *data, size_t len)
{
	const char *p = data;
	while (len) {
		ssize_t n = send(fd, p, len, MSG_NOSIGNAL);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return false; /* includes SO_SNDTIMEO expiry */
		p += n;
		len -= (size_t)n;
	}
	return true;
}

/* Receive at most n bytes into buf with the connection timeout. */
static ssize_t recv_some(struct conn *c, void *buf, size_t n)
{
	int w = wait_readable(c->fd, now_ms() + cfg.timeout_ms, false);
	if (w <= 0)
		return -1;
	ssize_t r;
	do
		r = recv(c->fd, buf, n, 0);
	while (r < 0 && errno == EINTR);
	return r;
}

/* Close a connection without losing the last response: closing a socket
 * with unread input makes the kernel send a reset, which can destroy the
 * response before the client reads it. So: stop sending, read and drop what
 * the client still sends until it closes (at most 1 s and 1 MiB), close. */
static void lingering_close(int fd)
{
	char sink[4096];
	size_t total = 0;
	int64_t deadline = now_ms() + 1000;
	shutdown(fd, SHUT_WR);
	while (total < DISCARD_MAX && wait_readable(fd, deadline, false) > 0) {
		ssize_t n = recv(fd, sink, sizeof(sink), 0);
		if (n <= 0)
			break;
		total += (size_t)n;
	}
	close(fd);
}

/* ------------------------------------------------------------------ requests */

struct request {
	char method[16];
	char target[HEAD_MAX + 1];
	size_t head_len;
	bool http11, keep_alive, expect_continue, has_length, chunked, has_host;
	unsigned long long length;
	char content_type[128]; /* empty: none, or too long to be a MIME type */
	/* conditional and partial GET (RFC 9110, 13.1.3, 13.1.5, 14.2) */
	char range[128];        /* the Range value; empty: none (or unusable) */
	bool has_ims, has_if_range, if_range_ok;
	time_t ims;             /* If-Modified-Since */
	time_t if_range;        /* If-Range (an HTTP-date; entity tags never match) */
	/* the URL path, percent-decoded once, and the path given to the library */
	char path[PATH_MAX + 2];
	char lpath[PATH_MAX + 3];
	const char *raw_path; /* target without scheme/authority, query or fragment */
	size_t raw_path_len;
	/* for the log */
	int status;
	unsigned long long sent;
};

/* Find the end of the head (blank line). Returns its length or 0. */
static size_t head_end(const char *b, size_t len)
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

/* Read a request head into c->buf. Returns READ_OK with *head_len set,
 * READ_CLOSE to close silently, or an HTTP status to answer and close. */
static int read_head(struct conn *c, size_t *head_len)
{
	int64_t deadline = now_ms() + cfg.timeout_ms;
	for (;;) {
		/* Tolerate empty lines before a request (RFC 9112, 2.2). */
		size_t skip = 0;
		while (skip < c->len && (c->buf[skip] == '\r' || c->buf[skip] == '\n'))
			skip++;
		if (skip) {
			memmove(c->buf, c->buf + skip, c->len - skip);
			c->len -= skip;
		}
		size_t end = head_end(c->buf, c->len);
		if (end) {
			*head_len = end;
			return READ_OK;
		}
		if (c->len >= HEAD_MAX)
			return 431;
		int w = wait_readable(c->fd, deadline, c->len == 0);
		if (w < 0)
			return READ_CLOSE;
		if (w == 0)
			return c->len ? 408 : READ_CLOSE; /* idle connections just close */
		ssize_t n = recv(c->fd, c->buf + c->len, HEAD_MAX - c->len, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return READ_CLOSE;
		c->len += (size_t)n;
	}
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
	rq->raw_path = t;
	rq->raw_path_len = n;
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

/* Parse the head in c->buf[0..head_len) in place. Returns 0 or a status. */
static int parse_head(struct conn *c, struct request *rq)
{
	char *p = c->buf, *end = c->buf + rq->head_len;
	char *lines[FIELDS_MAX + 2];
	int nlines = 0;
	while (p < end) {
		char *nl = memchr(p, '\n', (size_t)(end - p));
		*nl = '\0';
		if (nl > p && nl[-1] == '\r')
			nl[-1] = '\0';
		if (*p == '\0')
			break; /* the blank line */
		if (nlines == FIELDS_MAX + 1)
			return 431;
		lines[nlines++] = p;
		p = nl + 1;
	}
	for (int i = 0; i < nlines; i++)
		for (const unsigned char *s = (const unsigned char *)lines[i]; *s; s++)
			if ((*s < 0x20 && *s != '\t') || *s == 0x7f)
				return 400; /* bare CR, NUL and other controls */

	if (nlines == 0)
		return 400;
	/* request-line = method SP request-target SP HTTP-version */
	char *line = lines[0];
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
		} else if (!strcasecmp(name, "Content-Type")) {
			if (strlen(v) < sizeof(rq->content_type))
				memcpy(rq->content_type, v, strlen(v) + 1);
		} else if (!strcasecmp(name, "Range")) {
			if (strlen(v) < sizeof(rq->range))
				memcpy(rq->range, v, strlen(v) + 1);
		} else if (!strcasecmp(name, "If-Modified-Since")) {
			/* an invalid date is ignored (RFC 9110, 13.1.3) */
			rq->has_ims = parse_http_date(v, &rq->ims);
		} else if (!strcasecmp(name, "If-Range")) {
			rq->has_if_range = true;
			rq->if_range_ok = parse_http_date(v, &rq->if_range);
		} else if (!strcasecmp(name, "Host")) {
			if (rq->has_host)
				return 400;
			rq->has_host = true;
		}
	}
	if (rq->http11 && !rq->has_host)
		return 400;
	/* both framings at once is how requests are smuggled: refuse */
	if (rq->chunked && (rq->has_length || !rq->http11))
		return 400;
	return decode_target(rq);
}

/* ------------------------------------------------------------------ responses */

static bool send_head(struct conn *c, struct request *rq, int status, const char *ctype,
		      unsigned long long clen, const time_t *mtime, const char *extra)
{
	char buf[PATH_MAX + 1024], date[64], lm[96] = ""; /* extra may hold a Location */
	http_date(time(NULL), date, sizeof(date));
	if (mtime) {
		char d[48];
		http_date(*mtime, d, sizeof(d));
		snprintf(lm, sizeof(lm), "Last-Modified: %s\r\n", d);
	}
	char cl[48] = "";
	/* A 204 has no Content-Length; a 304 would have to repeat the 200's
	 * (RFC 9110, 8.6): neither sends one. */
	if (status != 204 && status != 304)
		snprintf(cl, sizeof(cl), "Content-Length: %llu\r\n", clen);
	int n = snprintf(buf, sizeof(buf),
			 "HTTP/1.1 %d %s\r\nServer: safe-httpd/%s\r\nDate: %s\r\n"
			 "%s%s%s%s%s%s%s\r\n",
			 status, reason(status), safe_version(), date,
			 ctype ? "Content-Type: " : "", ctype ? ctype : "", ctype ? "\r\n" : "",
			 lm, cl,
			 rq->keep_alive ? (rq->http11 ? "" : "Connection: keep-alive\r\n") :
					  "Connection: close\r\n",
			 extra ? extra : "");
	rq->status = status;
	if (n < 0 || (size_t)n >= sizeof(buf))
		return false;
	return send_all(c->fd, buf, (size_t)n);
}

static bool send_error(struct conn *c, struct request *rq, int status, const char *extra)
{
	char body[128];
	int n = snprintf(body, sizeof(body), "%d %s\n", status, reason(status));
	if (!send_head(c, rq, status, "text/plain; charset=utf-8", (unsigned long long)n, NULL,
		       extra))
		return false;
	if (!strcmp(rq->method, "HEAD"))
		return true;
	rq->sent = (unsigned long long)n;
	return send_all(c->fd, body, (size_t)n);
}

/* ------------------------------------------------------------------ GET and HEAD */

static const char *type_by_extension(const char *path)
{
	static const struct {
		const char *ext, *type;
	} types[] = {
		{ "html", "text/html; charset=utf-8" }, { "htm", "text/html; charset=utf-8" },
		{ "txt", "text/plain; charset=utf-8" }, { "css", "text/css" },
		{ "js", "text/javascript" },		{ "json", "application/json" },
		{ "png", "image/png" },			{ "jpg", "image/jpeg" },
		{ "jpeg", "image/jpeg" },		{ "gif", "image/gif" },
		{ "svg", "image/svg+xml" },		{ "webp", "image/webp" },
		{ "pdf", "application/pdf" },		{ "xml", "application/xml" },
		{ "gz", "application/gzip" },		{ "tar", "application/x-tar" },
		{ "zip", "application/zip" },		{ "wasm", "application/wasm" },
		{ "mp4", "video/mp4" },			{ "md", "text/markdown; charset=utf-8" },
	};
	const char *slash = strrchr(path, '/');
	const char *dot = strrchr(slash ? slash : path, '.');
	if (dot)
		for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++)
			if (!strcasecmp(dot + 1, types[i].ext))
				return types[i].type;
	return "application/octet-stream";
}

/* A stored MIME type is only used if it cannot break the response head. */
static bool valid_mime(const char *s, size_t n)
{
	if (n == 0 || !memchr(s, '/', n))
		return false;
	for (size_t i = 0; i < n; i++)
		if (s[i] < 0x20 || s[i] > 0x7e)
			return false;
	return true;
}

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static bool serve_listing(struct conn *c, struct request *rq, bool head)
{
	/* The directory is opened by the library again, by name: a listing
	 * shows what is beneath ROOT now, or fails. */
	DIR *d = safe_opendir_beneath(rootfd, rq->lpath, cfg.resolve);
	if (!d)
		return send_error(c, rq, status_for(errno), NULL);
	struct sbuf b = { 0 };
	char **names = NULL;
	size_t n = 0, cap = 0;
	struct dirent *e;
	while ((e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		if (n == cap) {
			cap = cap ? 2 * cap : 64;
			char **nn = cap <= 65536 ? realloc(names, cap * sizeof(*names)) : NULL;
			if (!nn)
				break;
			names = nn;
		}
		if (!(names[n] = strdup(e->d_name)))
			break;
		n++;
	}
	if (n)
		qsort(names, n, sizeof(*names), cmp_names);
	sb_str(&b, "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>Index of ");
	sb_html(&b, rq->path);
	sb_str(&b, "</title></head>\n<body><h1>Index of ");
	sb_html(&b, rq->path);
	sb_str(&b, "</h1>\n<ul>\n<li><a href=\"../\">../</a></li>\n");
	for (size_t i = 0; i < n; i++) {
		struct stat st;
		/* a name in the stream, not followed: no resolution here */
		bool dir = fstatat(dirfd(d), names[i], &st, AT_SYMLINK_NOFOLLOW) == 0 &&
			   S_ISDIR(st.st_mode);
		sb_str(&b, "<li><a href=\"");
		sb_url(&b, names[i]);
		sb_str(&b, dir ? "/\">" : "\">");
		sb_html(&b, names[i]);
		sb_str(&b, dir ? "/</a></li>\n" : "</a></li>\n");
		free(names[i]);
	}
	free(names);
	closedir(d);
	sb_str(&b, "</ul></body></html>\n");
	bool ok;
	if (b.failed)
		ok = send_error(c, rq, 500, NULL);
	else if (!(ok = send_head(c, rq, 200, "text/html; charset=utf-8", b.len, NULL, NULL)))
		;
	else if (!head && (ok = send_all(c->fd, b.p, b.len)))
		rq->sent = b.len;
	free(b.p);
	return ok;
}

/*
 * The byte range a Range field asks for, against a file of `size` bytes: 1
 * with [*first, *last] set, 0 to ignore the field (absent, not "bytes=",
 * malformed, or several ranges: a server may always answer 200), -1 if it is
 * unsatisfiable (416).
 */
static int parse_range(const char *v, unsigned long long size, unsigned long long *first,
		       unsigned long long *last)
{
	if (strncasecmp(v, "bytes=", 6))
		return 0;
	v += 6;
	while (*v == ' ')
		v++;
	const char *dash = strchr(v, '-');
	if (!dash || strchr(v, ','))
		return 0;
	bool has_a = dash > v, has_b = dash[1] != '\0';
	if (!has_a && !has_b)
		return 0;
	unsigned long long a = 0, b = 0;
	char *e;
	if (has_a) {
		if (!isdigit((unsigned char)*v))
			return 0;
		errno = 0;
		a = strtoull(v, &e, 10);
		if (e != dash || errno)
			return 0;
	}
	if (has_b) {
		if (!isdigit((unsigned char)dash[1]))
			return 0;
		errno = 0;
		b = strtoull(dash + 1, &e, 10);
		if (*e || errno)
			return 0;
	}
	if (!has_a) { /* suffix: the last b bytes */
		if (b == 0 || size == 0)
			return -1;
		*first = b >= size ? 0 : size - b;
		*last = size - 1;
		return 1;
	}
	if (has_b && b < a)
		return 0; /* invalid: ignored */
	if (a >= size)
		return -1;
	*first = a;
	*last = has_b && b < size ? b : size - 1;
	return 1;
}

/* A regular file, open as fd: 304, 416, 206 or 200 (RFC 9110, 13.2.2 order). */
static bool serve_file(struct conn *c, struct request *rq, int fd, const struct stat *st,
		       const char *ctype, bool head)
{
	unsigned long long size = (unsigned long long)st->st_size;
	/* a date in the future is invalid and ignored (RFC 9110, 13.1.3) */
	if (rq->has_ims && rq->ims <= time(NULL) && st->st_mtime <= rq->ims)
		return send_head(c, rq, 304, NULL, 0, &st->st_mtime, "Accept-Ranges: bytes\r\n");

	unsigned long long first = 0, last = size ? size - 1 : 0;
	int r = 0;
	/* If-Range: the range only applies to the representation it names;
	 * a date must equal Last-Modified exactly (a weak validator otherwise). */
	bool range_applies = rq->range[0] && (!rq->has_if_range ||
					      (rq->if_range_ok && rq->if_range == st->st_mtime));
	if (range_applies)
		r = parse_range(rq->range, size, &first, &last);
	char extra[128];
	if (r < 0) {
		snprintf(extra, sizeof(extra), "Content-Range: bytes */%llu\r\n", size);
		return send_error(c, rq, 416, extra);
	}
	int status = 200;
	unsigned long long len = size;
	if (r > 0) {
		status = 206;
		len = last - first + 1;
		snprintf(extra, sizeof(extra),
			 "Accept-Ranges: bytes\r\nContent-Range: bytes %llu-%llu/%llu\r\n", first,
			 last, size);
	} else {
		snprintf(extra, sizeof(extra), "Accept-Ranges: bytes\r\n");
	}
	bool ok = send_head(c, rq, status, ctype, len, &st->st_mtime, extra);
	off_t off = (off_t)first;
	off_t end = (off_t)(first + len);
	while (ok && !head && off < end) {
		ssize_t n = sendfile(c->fd, fd, &off, (size_t)(end - off));
		if (n < 0 && errno == EINTR)
			continue;
		/* A file that shrank under us cannot honour its
		 * Content-Length: cut the connection. */
		if (n <= 0)
			ok = false;
	}
	rq->sent = head ? 0 : (unsigned long long)(off - (off_t)first);
	return ok;
}

static bool serve_get(struct conn *c, struct request *rq, bool head)
{
	/* O_NONBLOCK: opening a FIFO someone left in the tree must not hang. */
	struct safe_open_how how = {
		.flags = O_RDONLY | O_NOCTTY | O_NONBLOCK,
		.resolve = cfg.resolve,
	};
	int fd = safe_openat2(rootfd, rq->lpath, &how, sizeof(how));
	if (fd < 0)
		return send_error(c, rq, status_for(errno), NULL);
	struct stat st;
	bool ok;
	if (fstat(fd, &st) < 0) {
		ok = send_error(c, rq, 500, NULL);
	} else if (S_ISDIR(st.st_mode)) {
		close(fd);
		if (rq->path[strlen(rq->path) - 1] != '/') {
			char loc[PATH_MAX + 64];
			int n = snprintf(loc, sizeof(loc), "Location: %.*s/\r\n",
					 (int)rq->raw_path_len, rq->raw_path);
			if (n < 0 || (size_t)n >= sizeof(loc))
				return send_error(c, rq, 414, NULL);
			return send_error(c, rq, 301, loc);
		}
		return serve_listing(c, rq, head);
	} else if (!S_ISREG(st.st_mode)) {
		ok = send_error(c, rq, 403, NULL);
	} else {
		char mime[128];
		const char *ctype = type_by_extension(rq->path);
		ssize_t ml = fgetxattr(fd, "user.mime_type", mime, sizeof(mime) - 1);
		if (ml > 0 && valid_mime(mime, (size_t)ml)) {
			mime[ml] = '\0';
			ctype = mime;
		}
		(void)fcntl(fd, F_SETFL, 0); /* back to blocking reads */
		ok = serve_file(c, rq, fd, &st, ctype, head);
	}
	if (fd >= 0)
		close(fd);
	return ok;
}

/* ------------------------------------------------------------------ PUT and DELETE */

/* The next bytes of the connection: what is left in the buffer, else the
 * socket (with the timeout). Returns > 0, or -1 on EOF, error or timeout. */
static ssize_t conn_read(struct conn *c, void *dst, size_t n)
{
	if (c->pos < c->len) {
		size_t k = c->len - c->pos < n ? c->len - c->pos : n;
		memcpy(dst, c->buf + c->pos, k);
		c->pos += k;
		return (ssize_t)k;
	}
	ssize_t r = recv_some(c, dst, n);
	return r > 0 ? r : -1;
}

/* One line of chunked framing (size line or trailer), without its CR LF. */
static int read_line(struct conn *c, char *line, size_t size)
{
	size_t n = 0;
	for (;;) {
		if (c->pos == c->len) {
			/* the head has been copied out: the buffer is free */
			c->pos = c->len = 0;
			ssize_t r = recv_some(c, c->buf, HEAD_MAX);
			if (r <= 0)
				return -1;
			c->len = (size_t)r;
		}
		char ch = c->buf[c->pos++];
		if (ch == '\n')
			break;
		if (n + 1 >= size)
			return -1;
		line[n++] = ch;
	}
	if (n && line[n - 1] == '\r')
		n--;
	line[n] = '\0';
	return 0;
}

/* A request body, Content-Length or chunked. */
struct body {
	unsigned long long left; /* bytes left in the body or the current chunk */
	bool chunked, in_chunk, done;
};

static void body_init(struct body *b, const struct request *rq)
{
	*b = (struct body){ .left = rq->length, .chunked = rq->chunked };
}

/* Read body bytes. Returns > 0, 0 at the end of the body, -1 on a framing
 * error, EOF or timeout (then the connection must be closed). */
static ssize_t body_read(struct conn *c, struct body *b, void *dst, size_t n)
{
	char line[256];
	if (b->done)
		return 0;
	if (b->chunked && !b->left) {
		if (b->in_chunk && (read_line(c, line, sizeof(line)) < 0 || line[0]))
			return -1; /* the CR LF after a chunk's data */
		if (read_line(c, line, sizeof(line)) < 0)
			return -1;
		char *end;
		errno = 0;
		unsigned long long size = strtoull(line, &end, 16);
		if (errno || end == line || !isxdigit((unsigned char)line[0]) ||
		    (*end && *end != ';' && *end != ' ' && *end != '\t'))
			return -1;
		if (!size) {
			/* last chunk: skip the trailer fields up to the blank line */
			for (int i = 0; i <= FIELDS_MAX; i++) {
				if (read_line(c, line, sizeof(line)) < 0)
					return -1;
				if (!line[0]) {
					b->done = true;
					return 0;
				}
			}
			return -1;
		}
		b->left = size;
		b->in_chunk = true;
	}
	if (!b->left) {
		b->done = true;
		return 0;
	}
	ssize_t r = conn_read(c, dst, b->left < n ? (size_t)b->left : n);
	if (r > 0)
		b->left -= (unsigned long long)r;
	return r;
}

/* Read and throw away a request body we do not want (bounded). */
static bool discard_body(struct conn *c, struct request *rq)
{
	struct body b;
	char tmp[4096];
	size_t total = 0;
	ssize_t n;
	body_init(&b, rq);
	while ((n = body_read(c, &b, tmp, sizeof(tmp))) > 0)
		if ((total += (size_t)n) > DISCARD_MAX)
			return false;
	return n == 0;
}

static bool serve_put(struct conn *c, struct request *rq)
{
	if (!rq->has_length && !rq->chunked) {
		rq->keep_alive = false;
		return send_error(c, rq, 411, NULL);
	}
	if (rq->length > cfg.max_body) {
		rq->keep_alive = false;
		return send_error(c, rq, 413, NULL);
	}
	/* Phase one: an unpublished file next to the final name. */
	struct safe_tmpfile *tmp = NULL;
	if (safe_tmpfile_open(rootfd, rq->lpath, 0644, cfg.resolve, &tmp) < 0) {
		int st = status_for(errno);
		if (rq->length || rq->chunked)
			rq->keep_alive = false; /* the body was not read */
		return send_error(c, rq, st, NULL);
	}
	int fd = safe_tmpfile_fd(tmp); /* borrowed: the handle closes it */
	/* The client waits for this before sending the body, unless it
	 * already started. */
	if (rq->expect_continue && c->pos == c->len) {
		static const char cont[] = "HTTP/1.1 100 Continue\r\n\r\n";
		if (!send_all(c->fd, cont, sizeof(cont) - 1)) {
			safe_tmpfile_discard(tmp);
			return false;
		}
	}
	struct body b;
	char buf[65536];
	unsigned long long total = 0;
	ssize_t n;
	int werr = 0;
	body_init(&b, rq);
	while ((n = body_read(c, &b, buf, sizeof(buf))) > 0) {
		total += (unsigned long long)n;
		if (total > cfg.max_body) {
			safe_tmpfile_discard(tmp);
			rq->keep_alive = false;
			return send_error(c, rq, 413, NULL);
		}
		if (!werr && write(fd, buf, (size_t)n) != n)
			werr = errno ? errno : EIO; /* keep reading: the body must be consumed */
	}
	if (n < 0) {
		/* client gone, too slow, or bad chunking: nothing is published */
		safe_tmpfile_discard(tmp);
		rq->keep_alive = false;
		send_error(c, rq, 400, NULL);
		return false;
	}
	if (werr) {
		safe_tmpfile_discard(tmp);
		return send_error(c, rq, status_for(werr), NULL);
	}
	/* Phase two: the Content-Type as user.mime_type, then the name. */
	struct safe_xattr xa = { "user.mime_type", rq->content_type, strlen(rq->content_type) };
	size_t nxa = valid_mime(rq->content_type, xa.size) ? 1 : 0;
	struct stat old;
	bool existed = safe_fstatat_beneath(rootfd, rq->lpath, &old, cfg.resolve) == 0;
	int out = safe_tmpfile_link(tmp, &xa, nxa, SAFE_TMPFILE_REPLACE);
	if (out < 0) {
		int err = errno;
		safe_tmpfile_discard(tmp);
		return send_error(c, rq, status_for(err), NULL);
	}
	close(out);
	if (existed)
		return send_head(c, rq, 204, NULL, 0, NULL, NULL);
	char loc[PATH_MAX + 64];
	int len = snprintf(loc, sizeof(loc), "Location: %.*s\r\n", (int)rq->raw_path_len,
			   rq->raw_path);
	return send_head(c, rq, 201, NULL, 0, NULL,
			 len > 0 && (size_t)len < sizeof(loc) ? loc : NULL);
}

static bool serve_delete(struct conn *c, struct request *rq)
{
	int r = safe_unlinkat_beneath(rootfd, rq->lpath, cfg.resolve);
	if (r < 0 && errno == EISDIR)
		r = safe_unlinkat_beneath(rootfd, rq->lpath, cfg.resolve | SAFE_REMOVEDIR);
	if (r < 0)
		return send_error(c, rq, status_for(errno), NULL);
	return send_head(c, rq, 204, NULL, 0, NULL, NULL);
}

/* ------------------------------------------------------------------ one connection */

static void log_request(const struct conn *c, const struct request *rq)
{
	if (cfg.quiet)
		return;
	char target[256];
	size_t o = 0;
	const char *t = rq->target[0] ? rq->target : "-";
	/* never write control characters from the client to the log */
	for (; *t && o + 5 < sizeof(target); t++) {
		unsigned char ch = (unsigned char)*t;
		if (ch >= 0x20 && ch < 0x7f)
			target[o++] = (char)ch;
		else
			o += (size_t)snprintf(target + o, sizeof(target) - o, "\\x%02x", ch);
	}
	target[o] = '\0';
	fprintf(stderr, "%s %s %s %d %llu\n", c->peer, rq->method[0] ? rq->method : "-", target,
		rq->status, rq->sent);
}

static void serve_connection(int fd, const struct sockaddr_in *peer)
{
	struct conn *c = calloc(1, sizeof(*c));
	if (!c) {
		close(fd);
		return;
	}
	c->fd = fd;
	char ip[INET_ADDRSTRLEN] = "?";
	inet_ntop(AF_INET, &peer->sin_addr, ip, sizeof(ip));
	snprintf(c->peer, sizeof(c->peer), "%s:%u", ip, ntohs(peer->sin_port));
	for (int nreq = 0; nreq < REQUESTS_PER_CONN; nreq++) {
		struct request *rq = calloc(1, sizeof(*rq));
		if (!rq)
			break;
		int st = read_head(c, &rq->head_len);
		if (st == READ_OK)
			st = parse_head(c, rq);
		c->pos = rq->head_len; /* the head is consumed (and copied out) */
		if (st == READ_CLOSE) {
			free(rq);
			break;
		}
		bool keep;
		if (st) {
			rq->keep_alive = false;
			send_error(c, rq, st, NULL);
			keep = false;
		} else {
			bool head = !strcmp(rq->method, "HEAD");
			bool put = !strcmp(rq->method, "PUT");
			bool del = !strcmp(rq->method, "DELETE");
			/* Free the worker after this response when the server
			 * stops or others wait for a worker. */
			if (nreq + 1 == REQUESTS_PER_CONN || atomic_load(&stopping) ||
			    atomic_load(&queued) > 0)
				rq->keep_alive = false;
			if (!put && (rq->length || rq->chunked) && !discard_body(c, rq)) {
				rq->keep_alive = false;
				send_error(c, rq, 413, NULL);
				keep = false;
			} else if (head || !strcmp(rq->method, "GET")) {
				keep = serve_get(c, rq, head);
			} else if ((put || del) && cfg.read_only) {
				if (put && (rq->length || rq->chunked))
					rq->keep_alive = false; /* the body was not read */
				keep = send_error(c, rq, 405, "Allow: GET, HEAD\r\n");
			} else if (put) {
				keep = serve_put(c, rq);
			} else if (del) {
				keep = serve_delete(c, rq);
			} else {
				keep = send_error(c, rq, 405,
						  cfg.read_only ?
							  "Allow: GET, HEAD\r\n" :
							  "Allow: GET, HEAD, PUT, DELETE\r\n");
			}
			keep = keep && rq->keep_alive;
		}
		log_request(c, rq);
		if (keep) {
			/* keep what the client pipelined after this request */
			memmove(c->buf, c->buf + c->pos, c->len - c->pos);
			c->len -= c->pos;
			c->pos = 0;
		}
		free(rq);
		if (!keep)
			break;
	}
	lingering_close(c->fd);
	free(c);
}

/* ------------------------------------------------------------------ the worker pool */

static struct {
	pthread_mutex_t lock;
	pthread_cond_t nonempty;
	struct item {
		int fd;
		struct sockaddr_in peer;
	} items[QUEUE_MAX];
	size_t head, count;
} queue = { .lock = PTHREAD_MUTEX_INITIALIZER, .nonempty = PTHREAD_COND_INITIALIZER };

static bool queue_push(int fd, const struct sockaddr_in *peer)
{
	bool ok = false;
	pthread_mutex_lock(&queue.lock);
	if (queue.count < QUEUE_MAX) {
		queue.items[(queue.head + queue.count) % QUEUE_MAX] = (struct item){ fd, *peer };
		queue.count++;
		atomic_store(&queued, (int)queue.count);
		ok = true;
		pthread_cond_signal(&queue.nonempty);
	}
	pthread_mutex_unlock(&queue.lock);
	return ok;
}

static void *worker(void *arg)
{
	(void)arg;
	for (;;) {
		pthread_mutex_lock(&queue.lock);
		while (!queue.count && !atomic_load(&stopping))
			pthread_cond_wait(&queue.nonempty, &queue.lock);
		if (!queue.count) {
			pthread_mutex_unlock(&queue.lock);
			return NULL;
		}
		struct item it = queue.items[queue.head];
		queue.head = (queue.head + 1) % QUEUE_MAX;
		queue.count--;
		atomic_store(&queued, (int)queue.count);
		pthread_mutex_unlock(&queue.lock);
		serve_connection(it.fd, &it.peer);
	}
}

/* ------------------------------------------------------------------ main */

static void usage_error(const char *msg, const char *arg)
{
	fprintf(stderr, "safe-httpd: %s%s%s\nTry 'safe-httpd --help' for more information.\n",
		msg, arg ? ": " : "", arg ? arg : "");
	exit(2);
}

static unsigned long long parse_number(const char *s, unsigned long long max, const char *what)
{
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	if (errno || !*s || *end || *s == '-' || v > max)
		usage_error(what, s);
	return v;
}

int main(int argc, char **argv)
{
	enum { OPT_IN_ROOT = 256, OPT_WALKER, OPT_READ_ONLY, OPT_TIMEOUT, OPT_MAX_BODY };
	static const struct option opts[] = {
		{ "in-root", no_argument, NULL, OPT_IN_ROOT },
		{ "walker", no_argument, NULL, OPT_WALKER },
		{ "read-only", no_argument, NULL, OPT_READ_ONLY },
		{ "threads", required_argument, NULL, 't' },
		{ "timeout", required_argument, NULL, OPT_TIMEOUT },
		{ "max-body", required_argument, NULL, OPT_MAX_BODY },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	int c;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+t:qhV", opts, NULL)) != -1) {
		switch (c) {
		case OPT_IN_ROOT:
			cfg.resolve = (cfg.resolve & ~SAFE_RESOLVE_BENEATH) | SAFE_RESOLVE_IN_ROOT;
			break;
		case OPT_WALKER:
			cfg.resolve |= SAFE_RESOLVE_USERSPACE;
			break;
		case OPT_READ_ONLY:
			cfg.read_only = true;
			break;
		case 't':
			cfg.threads = (int)parse_number(optarg, 256, "invalid thread count");
			if (!cfg.threads)
				usage_error("invalid thread count", optarg);
			break;
		case OPT_TIMEOUT:
			cfg.timeout_ms = 1000 * (int)parse_number(optarg, 3600, "invalid timeout");
			if (!cfg.timeout_ms)
				usage_error("invalid timeout", optarg);
			break;
		case OPT_MAX_BODY:
			cfg.max_body = parse_number(optarg, ULLONG_MAX >> 1, "invalid size");
			break;
		case 'q':
			cfg.quiet = true;
			break;
		case 'h':
			fputs(usage_text, stdout);
			return 0;
		case 'V':
			printf("safe-httpd (libsafeopen) %s\n", safe_version());
			return 0;
		default:
			usage_error(optopt ? "invalid option or missing argument" :
					     "invalid option",
				    argv[optind - 1]);
		}
	}
	if (optind >= argc)
		usage_error("missing ROOT", NULL);
	if (argc - optind > 2)
		usage_error("too many arguments", argv[optind + 2]);
	const char *root = argv[optind];
	unsigned port = optind + 1 < argc ?
				(unsigned)parse_number(argv[optind + 1], 65535, "invalid port") :
				8080;

	/* ROOT is trusted: opened normally. Everything below it is not. */
	rootfd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (rootfd < 0) {
		fprintf(stderr, "safe-httpd: %s: %s\n", root, strerror(errno));
		return 1;
	}

	/* Signals: SIGPIPE ignored (a client may vanish during sendfile);
	 * SIGINT and SIGTERM blocked in every thread and read by the main loop
	 * through a signalfd. */
	signal(SIGPIPE, SIG_IGN);
	sigset_t stop_set;
	sigemptyset(&stop_set);
	sigaddset(&stop_set, SIGINT);
	sigaddset(&stop_set, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &stop_set, NULL);
	int sfd = signalfd(-1, &stop_set, SFD_CLOEXEC);

	int lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct sockaddr_in addr = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
	addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	socklen_t alen = sizeof(addr);
	int one = 1;
	if (sfd < 0 || lfd < 0 ||
	    setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0 ||
	    bind(lfd, (struct sockaddr *)&addr, sizeof(addr)) < 0 || listen(lfd, 128) < 0 ||
	    getsockname(lfd, (struct sockaddr *)&addr, &alen) < 0) {
		fprintf(stderr, "safe-httpd: 127.0.0.1:%u: %s\n", port, strerror(errno));
		return 1;
	}
	printf("listening on 127.0.0.1:%u\n", ntohs(addr.sin_port));
	fflush(stdout);

	pthread_t *threads = calloc((size_t)cfg.threads, sizeof(*threads));
	if (!threads) {
		fprintf(stderr, "safe-httpd: %s\n", strerror(ENOMEM));
		return 1;
	}
	int started = 0;
	for (; started < cfg.threads; started++)
		if (pthread_create(&threads[started], NULL, worker, NULL) != 0)
			break;
	if (!started) {
		fprintf(stderr, "safe-httpd: cannot start worker threads\n");
		free(threads);
		return 1;
	}

	struct timeval tv = { .tv_sec = cfg.timeout_ms / 1000 };
	for (;;) {
		struct pollfd p[2] = { { .fd = lfd, .events = POLLIN },
				       { .fd = sfd, .events = POLLIN } };
		if (poll(p, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			perror("safe-httpd: poll");
			break;
		}
		if (p[1].revents) {
			struct signalfd_siginfo si;
			if (read(sfd, &si, sizeof(si)) == (ssize_t)sizeof(si) && !cfg.quiet)
				fprintf(stderr, "safe-httpd: %s, shutting down\n",
					strsignal((int)si.ssi_signo));
			break;
		}
		if (!p[0].revents)
			continue;
		struct sockaddr_in peer;
		socklen_t plen = sizeof(peer);
		int cfd = accept4(lfd, (struct sockaddr *)&peer, &plen, SOCK_CLOEXEC);
		if (cfd < 0) {
			if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS ||
			    errno == ENOMEM)
				poll(NULL, 0, 100); /* out of resources: do not spin */
			continue;
		}
		/* a bound on how long a send may block (slow readers) */
		setsockopt(cfd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
		if (!queue_push(cfd, &peer)) {
			static const char busy[] = "HTTP/1.1 503 Service Unavailable\r\n"
						   "Content-Length: 0\r\nConnection: close\r\n"
						   "Retry-After: 1\r\n\r\n";
			(void)send(cfd, busy, sizeof(busy) - 1, MSG_NOSIGNAL | MSG_DONTWAIT);
			close(cfd);
		}
	}

	/* Shutdown: no new connections; workers finish the request in hand,
	 * drop idle keep-alive connections, serve what is queued, and exit. */
	close(lfd);
	pthread_mutex_lock(&queue.lock);
	atomic_store(&stopping, true);
	pthread_cond_broadcast(&queue.nonempty);
	pthread_mutex_unlock(&queue.lock);
	for (int i = 0; i < started; i++)
		pthread_join(threads[i], NULL);
	free(threads);
	close(sfd);
	close(rootfd);
	return 0;
}
