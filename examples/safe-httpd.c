/* SPDX-License-Identifier: MIT */
/*
 * safe-httpd: a small HTTP/1.1 file server for untrusted URLs.
 *
 *     safe-httpd [OPTIONS] ROOT [PORT]
 *
 * Serves ROOT on 127.0.0.1:PORT (default 8080; 0 picks a free port): GET and
 * HEAD of files (Content-Type from the user.mime_type xattr or the extension,
 * Last-Modified; a single byte Range, If-Range by date, If-Modified-Since),
 * index.html or a listing for directories, PUT (the body is published
 * atomically with its Content-Type as user.mime_type, replacing any old file)
 * and DELETE.
 *
 * Security design: the URL path is percent-decoded exactly once and handed to
 * libsafeopen as it is; the server itself never looks for "..", "/" or links
 * in it. The library is the only thing keeping requests inside ROOT, which is
 * the point of this example: escapes come back as EXDEV or ELOOP (403), and
 * names that do not exist beneath ROOT as ENOENT (404).
 *
 * Connection model: an epoll(7) loop per thread (--threads, default one per
 * CPU up to 8), each with its own SO_REUSEPORT listening socket and its own
 * connections; every socket non-blocking and edge-triggered. A connection is a small state machine (reading a head,
 * reading a body, sending, lingering before the close) that runs until its
 * socket would block, so an idle or slow client costs a few KiB of memory and
 * never delays anybody else. Each state has one timeout, and each timeout
 * list is kept in deadline order (a deadline is always "now + the list's
 * limit"), so finding and expiring the next deadline is O(1):
 *   - request head: --head-timeout seconds for the whole head, counted from
 *     the connection's opening or from the first byte of a keep-alive
 *     request (slowloris cannot stretch it by trickling bytes);
 *   - keep-alive idle: --idle-timeout between requests;
 *   - body and response: --body-timeout without any progress;
 *   - lingering close: 1 s.
 * At --max-conns connections (all loops together), a new connection first
 * evicts the connection of its loop that has been idle longest between
 * requests; only when none is idle does it get a 503. File bodies go out with sendfile(2), small ones in the same
 * send(2) as the head. Filesystem calls are short and stay synchronous.
 */
#define _GNU_SOURCE /* accept4, O_PATH, sendfile, strcasestr */
#include <arpa/inet.h>
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/sendfile.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

#include <safeopen.h>

#define HEAD_MAX 8192           /* bytes in a request head (request line + fields) */
#define FIELDS_MAX 64           /* header fields per request */
#define CHUNK_LINE_MAX 256      /* a chunk-size line or a trailer field */
#define DISCARD_MAX (1 << 20)   /* largest unwanted body read and thrown away */
#define LISTING_MAX (8 << 20)   /* largest directory listing generated */
#define INLINE_MAX (16 << 10)   /* files up to this size go out with the head */
#define LINGER_MS 1000          /* lingering close: how long to drain the client */
#define REJECT_MAX 64           /* connections kept at a time just to say 503 */
#define BURST_MAX 16            /* requests served in a row before others' turn */
#define EVENTS_MAX 256

/* ------------------------------------------------------------------ configuration */

static struct {
	uint64_t resolve;
	int head_timeout_ms, idle_timeout_ms, body_timeout_ms;
	unsigned max_conns;
	unsigned long long max_body;
	bool read_only, no_listing, quiet;
} cfg = {
	.resolve = SAFE_RESOLVE_BENEATH | SAFE_RESOLVE_NO_MAGICLINKS,
	.head_timeout_ms = 10000,
	.idle_timeout_ms = 15000,
	.body_timeout_ms = 60000,
	.max_conns = 1024,
	.max_body = 64ULL << 20,
};

static int rootfd = -1;
static FILE *access_log; /* NULL with --quiet */
static atomic_bool stopping;
static atomic_uint total_conns; /* connections of all loops, not counting 503s */

static const char usage_text[] =
	"Usage: safe-httpd [OPTIONS] ROOT [PORT]\n"
	"Serve the directory ROOT over HTTP/1.1 on 127.0.0.1:PORT (default 8080;\n"
	"0 picks a free port). The address is printed as \"listening on 127.0.0.1:PORT\".\n"
	"\n"
	"  GET, HEAD     files (Content-Type from the user.mime_type xattr, else the\n"
	"                extension; one byte Range, If-Range by date;\n"
	"                If-Modified-Since); for a directory its index.html, else a\n"
	"                listing (a URL without the final \"/\" is redirected)\n"
	"  PUT           store the body atomically, replacing any old file; the\n"
	"                Content-Type is saved as user.mime_type (on a filesystem\n"
	"                without user xattrs the file is stored without it, and the\n"
	"                log says so)\n"
	"  DELETE        remove a file or an empty directory\n"
	"\n"
	"URL paths are percent-decoded once and resolved by libsafeopen beneath ROOT:\n"
	"escapes get 403, missing names 404.\n"
	"\n"
	"Options:\n"
	"      --in-root           treat ROOT as \"/\" (absolute links and \"..\" stay\n"
	"                          inside) instead of refusing them\n"
	"      --walker            use the library's userspace walker, not openat2(2)\n"
	"      --read-only         refuse PUT and DELETE (405)\n"
	"      --no-listing        no directory listings: a directory without\n"
	"                          index.html gets 403\n"
	"      --max-conns N       open connections at most (default 1024); when all\n"
	"                          are busy, the connection idle longest between\n"
	"                          requests (in the same loop) is closed for a new\n"
	"                          one, and only when none is idle does the new one\n"
	"                          get 503\n"
	"      --threads N         event loops, one thread each (default: one per\n"
	"                          CPU, at most 8); each loop serves any number of\n"
	"                          connections, so idle clients never hold a thread\n"
	"      --head-timeout S    a request head must arrive complete within S\n"
	"                          seconds of the connection's opening or of its first\n"
	"                          byte (default 10): 408, then close\n"
	"      --idle-timeout S    close a keep-alive connection idle for S seconds\n"
	"                          between requests (default 15)\n"
	"      --body-timeout S    close a connection whose request body or response\n"
	"                          makes no progress for S seconds (default 60)\n"
	"      --timeout S         set all three timeouts to S seconds\n"
	"      --max-body BYTES    largest PUT body (default 67108864): 413\n"
	"      --access-log FILE   append the access log to FILE instead of standard\n"
	"                          error\n"
	"  -q, --quiet             no access log\n"
	"  -h, --help              show this help and exit\n"
	"  -V, --version           show the version and exit\n"
	"\n"
	"Timeouts are whole seconds from 1 to 3600. The access log is in Common Log\n"
	"Format (host ident user [time] \"request line\" status bytes), one line per\n"
	"response; warnings go to standard error.\n"
	"\n"
	"SIGINT or SIGTERM: stop accepting, finish the requests in progress, close\n"
	"idle connections, exit 0.\n"
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

/* The Date field and the log's timestamp change once a second: formatted
 * once a second. */
static const char *date_now(void)
{
	static __thread time_t last = -1;
	static __thread char buf[48];
	time_t t = time(NULL);
	if (t != last) {
		struct tm tm;
		gmtime_r(&t, &tm);
		strftime(buf, sizeof(buf), "%a, %d %b %Y %H:%M:%S GMT", &tm);
		last = t;
	}
	return buf;
}

static const char *log_time_now(void)
{
	static __thread time_t last = -1;
	static __thread char buf[48];
	time_t t = time(NULL);
	if (t != last) {
		struct tm tm;
		localtime_r(&t, &tm);
		strftime(buf, sizeof(buf), "%d/%b/%Y:%H:%M:%S %z", &tm);
		last = t;
	}
	return buf;
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

/* Room for n more bytes at the end of b (not counted in b->len), or NULL. */
static char *sb_reserve(struct sbuf *b, size_t n)
{
	size_t len = b->len;
	char z = '\0';
	sb_add(b, &z, 0); /* allocate at least once */
	if (b->failed)
		return NULL;
	if (len + n + 1 > b->cap) {
		size_t cap = b->cap;
		while (cap < len + n + 1)
			cap *= 2;
		char *p = cap <= LISTING_MAX ? realloc(b->p, cap) : NULL;
		if (!p) {
			b->failed = true;
			return NULL;
		}
		b->p = p;
		b->cap = cap;
	}
	return b->p + len;
}

static void sb_reset(struct sbuf *b)
{
	if (b->cap > 64 * 1024) { /* do not keep a big listing's buffer */
		free(b->p);
		*b = (struct sbuf){ 0 };
	}
	b->len = 0;
	b->failed = false;
}

/* ------------------------------------------------------------------ connections */

struct request {
	char method[16];
	char target[HEAD_MAX + 1];
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
	/* for the log: the request line (escaped, maybe shortened), status, bytes */
	char line[320];
	int status;
	unsigned long long sent;
};

/* What a connection is doing; each state has its timer list. */
enum cstate {
	CS_HEAD,  /* waiting for (the rest of) a request head: TL_HEAD or TL_IDLE */
	CS_BODY,  /* reading a request body: TL_IO */
	CS_SEND,  /* sending a response: TL_IO */
	CS_LINGER /* response sent, write side shut, draining: TL_LINGER */
};

enum { TL_HEAD, TL_IDLE, TL_IO, TL_LINGER, TL_COUNT, TL_NONE = -1 };

/* Chunked request bodies (RFC 9112, 7.1): where the decoder is. */
enum chunk_phase { CH_SIZE, CH_DATA_END, CH_TRAILER };

struct conn {
	int fd;
	enum cstate state;
	int list;                 /* timer list, TL_NONE while on none */
	int64_t deadline;
	struct conn *prev, *next; /* in the timer list */
	struct conn *ready_next;  /* in the ready list (yielded after a burst) */
	bool ready, dead, rejected;
	char host[INET_ADDRSTRLEN];

	struct request *rq;       /* the request in progress, NULL between requests */
	bool close_after;         /* close once the response is out */
	bool body_next;           /* after the output (100 Continue): read the body */

	/* the request body */
	unsigned long long left;  /* bytes of the body or of the current chunk */
	bool chunked;
	enum chunk_phase phase;
	int trailers;
	unsigned long long total; /* body bytes received */
	bool store;               /* into tmp (PUT), else thrown away */
	struct safe_tmpfile *tmp;
	int tmpfd;
	int werr;                 /* first write error into tmp */

	/* the response: out (head, small bodies, listings), then file */
	struct sbuf out;
	size_t out_off;
	int file;
	off_t file_off, file_end;

	size_t len;               /* unconsumed input bytes at the start of buf */
	char buf[HEAD_MAX + 1];
};

/* Each loop thread has its own connections, timer lists and listening
 * socket (SO_REUSEPORT): nothing below is shared between loops. */
static __thread struct {
	struct conn *first, *last;
	int64_t limit_ms;
} timers[TL_COUNT];

static __thread int epfd = -1, lfd = -1;
static __thread unsigned nconns, nrejecting;
static __thread int64_t loop_now;            /* the loop's clock, read after each wait */
static __thread int64_t accept_paused_until; /* after EMFILE and friends */
static __thread struct conn *ready_first, *ready_last;
static __thread struct conn *dead_list;      /* closed, freed at the end of the round */
static __thread char scratch[65536];         /* body and drain reads */
static int wakefd = -1; /* eventfd: readable once the server stops */
/* epoll data of the two non-connection descriptors */
static char listen_tag, wake_tag;

static void timer_unlink(struct conn *c)
{
	if (c->list == TL_NONE)
		return;
	if (c->prev)
		c->prev->next = c->next;
	else
		timers[c->list].first = c->next;
	if (c->next)
		c->next->prev = c->prev;
	else
		timers[c->list].last = c->prev;
	c->prev = c->next = NULL;
	c->list = TL_NONE;
}

/* (Re)start c's timer on list l: deadline = now + the list's limit, which is
 * never earlier than the deadlines already there, so appending keeps every
 * list sorted. */
static void timer_set(struct conn *c, int l)
{
	timer_unlink(c);
	c->list = l;
	c->deadline = loop_now + timers[l].limit_ms;
	c->prev = timers[l].last;
	if (c->prev)
		c->prev->next = c;
	else
		timers[l].first = c;
	timers[l].last = c;
}

static void log_request(const struct conn *c, const struct request *rq)
{
	if (!access_log)
		return;
	char bytes[24] = "-";
	if (rq->sent)
		snprintf(bytes, sizeof(bytes), "%llu", rq->sent);
	fprintf(access_log, "%s - - [%s] \"%s\" %d %s\n", c->host, log_time_now(),
		rq->line[0] ? rq->line : "-", rq->status, bytes);
}

/* The request line as the log shows it: printable ASCII, the rest and the
 * quote and backslash escaped, shortened with "..." past the buffer. */
static void log_line(struct request *rq, const char *s)
{
	size_t o = 0, max = sizeof(rq->line) - 8;
	for (; *s && o < max; s++) {
		unsigned char ch = (unsigned char)*s;
		if (ch == '"' || ch == '\\')
			o += (size_t)snprintf(rq->line + o, sizeof(rq->line) - o, "\\%c", ch);
		else if (ch >= 0x20 && ch < 0x7f)
			rq->line[o++] = (char)ch;
		else
			o += (size_t)snprintf(rq->line + o, sizeof(rq->line) - o, "\\x%02x", ch);
	}
	if (*s)
		o += (size_t)snprintf(rq->line + o, sizeof(rq->line) - o, "...");
	rq->line[o] = '\0';
}

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

/* Parse the head in buf[0..head_len) in place. Returns 0 or a status. */
static int parse_head(char *buf, size_t head_len, struct request *rq)
{
	char *p = buf, *end = buf + head_len;
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
	log_line(rq, lines[0]);
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

/* Append a response head to c->out. The connection is closed after the
 * response unless the request allows keep-alive and the server is not
 * stopping. Returns false when out of memory (the caller closes). */
static bool respond_head(struct conn *c, int status, const char *ctype,
			 unsigned long long clen, const time_t *mtime, const char *extra)
{
	struct request *rq = c->rq;
	char lm[96] = "";
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
			 status, reason(status), safe_version(), date_now(),
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

/* A complete error (or redirect) response with a one-line text body. */
static bool respond_error(struct conn *c, int status, const char *extra)
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

static bool serve_listing(struct conn *c, bool head)
{
	struct request *rq = c->rq;
	/* The directory is opened by the library again, by name: a listing
	 * shows what is beneath ROOT now, or fails. */
	DIR *d = safe_opendir_beneath(rootfd, rq->lpath, cfg.resolve);
	if (!d)
		return respond_error(c, status_for(errno), NULL);
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
	if (b.failed) {
		ok = respond_error(c, 500, NULL);
	} else {
		ok = respond_head(c, 200, "text/html; charset=utf-8", b.len, NULL, NULL);
		if (ok && !head) {
			sb_add(&c->out, b.p, b.len);
			rq->sent = b.len;
			ok = !c->out.failed;
		}
	}
	free(b.p);
	return ok;
}

/* A regular file, open as fd (taken over): 304, 416, 206 or 200 (RFC 9110,
 * 13.2.2 order). A body up to INLINE_MAX is read into the output right after
 * the head (one send); a bigger one is left to sendfile(2). */
static bool serve_file(struct conn *c, int fd, const struct stat *st, const char *ctype,
		       bool head)
{
	struct request *rq = c->rq;
	unsigned long long size = (unsigned long long)st->st_size;
	bool ok;
	/* a date in the future is invalid and ignored (RFC 9110, 13.1.3) */
	if (rq->has_ims && rq->ims <= time(NULL) && st->st_mtime <= rq->ims) {
		ok = respond_head(c, 304, NULL, 0, &st->st_mtime, "Accept-Ranges: bytes\r\n");
		goto out;
	}

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
		ok = respond_error(c, 416, extra);
		goto out;
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
	ok = respond_head(c, status, ctype, len, &st->st_mtime, extra);
	if (!ok || head || !len)
		goto out;
	if (len <= INLINE_MAX) {
		char *p = sb_reserve(&c->out, (size_t)len);
		size_t got = 0;
		while (p && got < len) {
			ssize_t n = pread(fd, p + got, (size_t)len - got, (off_t)(first + got));
			if (n < 0 && errno == EINTR)
				continue;
			if (n <= 0)
				break;
			got += (size_t)n;
		}
		ok = p != NULL;
		c->out.len += got;
		rq->sent = got;
		/* A file that shrank under us cannot honour its Content-Length:
		 * send what there is and cut the connection. */
		if (got < len)
			c->close_after = true;
		goto out;
	}
	c->file = fd;
	c->file_off = (off_t)first;
	c->file_end = (off_t)(first + len);
	return true;
out:
	close(fd);
	return ok;
}

/* Open the directory's index.html: a regular file's fd (>= 0), -1 to list
 * the directory (no index.html, or not a regular file), or -2 with errno
 * (refused: for example a link out of ROOT). */
static int open_index(struct request *rq, struct stat *st)
{
	char ipath[sizeof(rq->lpath) + 16];
	int n = snprintf(ipath, sizeof(ipath), "%sindex.html", rq->lpath);
	if (n < 0 || (size_t)n >= sizeof(ipath) || n > PATH_MAX) {
		errno = ENAMETOOLONG;
		return -2;
	}
	struct safe_open_how how = {
		.flags = O_RDONLY | O_NOCTTY | O_NONBLOCK,
		.resolve = cfg.resolve,
	};
	int fd = safe_openat2(rootfd, ipath, &how, sizeof(how));
	if (fd < 0)
		return errno == ENOENT ? -1 : -2;
	if (fstat(fd, st) < 0 || !S_ISREG(st->st_mode)) {
		close(fd);
		return -1;
	}
	return fd;
}

static bool serve_get(struct conn *c, bool head)
{
	struct request *rq = c->rq;
	/* O_NONBLOCK: opening a FIFO someone left in the tree must not hang. */
	struct safe_open_how how = {
		.flags = O_RDONLY | O_NOCTTY | O_NONBLOCK,
		.resolve = cfg.resolve,
	};
	int fd = safe_openat2(rootfd, rq->lpath, &how, sizeof(how));
	if (fd < 0)
		return respond_error(c, status_for(errno), NULL);
	struct stat st;
	const char *name = rq->path;
	if (fstat(fd, &st) < 0) {
		close(fd);
		return respond_error(c, 500, NULL);
	}
	if (S_ISDIR(st.st_mode)) {
		close(fd);
		if (rq->path[strlen(rq->path) - 1] != '/') {
			char loc[PATH_MAX + 64];
			int n = snprintf(loc, sizeof(loc), "Location: %.*s/\r\n",
					 (int)rq->raw_path_len, rq->raw_path);
			if (n < 0 || (size_t)n >= sizeof(loc))
				return respond_error(c, 414, NULL);
			return respond_error(c, 301, loc);
		}
		fd = open_index(rq, &st);
		if (fd == -2)
			return respond_error(c, status_for(errno), NULL);
		if (fd == -1)
			return cfg.no_listing ? respond_error(c, 403, NULL) : serve_listing(c, head);
		name = "index.html";
	}
	if (!S_ISREG(st.st_mode)) {
		close(fd);
		return respond_error(c, 403, NULL);
	}
	char mime[128];
	const char *ctype = type_by_extension(name);
	ssize_t ml = fgetxattr(fd, "user.mime_type", mime, sizeof(mime) - 1);
	if (ml > 0 && valid_mime(mime, (size_t)ml)) {
		mime[ml] = '\0';
		ctype = mime;
	}
	return serve_file(c, fd, &st, ctype, head);
}

/* ------------------------------------------------------------------ PUT and DELETE */

static bool serve_delete(struct conn *c)
{
	struct request *rq = c->rq;
	int r = safe_unlinkat_beneath(rootfd, rq->lpath, cfg.resolve);
	if (r < 0 && errno == EISDIR)
		r = safe_unlinkat_beneath(rootfd, rq->lpath, cfg.resolve | SAFE_REMOVEDIR);
	if (r < 0)
		return respond_error(c, status_for(errno), NULL);
	return respond_head(c, 204, NULL, 0, NULL, NULL);
}

/* Phase one of a PUT, once its head is in: an unpublished file next to the
 * final name. Returns 1 to read the body (after c->out, a 100 Continue, is
 * sent), 0 with a response in c->out, -1 out of memory. */
static int put_begin(struct conn *c)
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
	if (safe_tmpfile_open(rootfd, rq->lpath, 0644, cfg.resolve, &c->tmp) < 0) {
		c->tmp = NULL;
		int st = status_for(errno);
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
static bool put_finish(struct conn *c)
{
	struct request *rq = c->rq;
	struct safe_tmpfile *tmp = c->tmp;
	c->tmp = NULL;
	if (c->werr) {
		safe_tmpfile_discard(tmp);
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
		safe_tmpfile_discard(tmp);
		return respond_error(c, status_for(err), NULL);
	}
	close(out);
	if (existed)
		return respond_head(c, 204, NULL, 0, NULL, NULL);
	char loc[PATH_MAX + 64];
	int len = snprintf(loc, sizeof(loc), "Location: %.*s\r\n", (int)rq->raw_path_len,
			   rq->raw_path);
	return respond_head(c, 201, NULL, 0, NULL,
			    len > 0 && (size_t)len < sizeof(loc) ? loc : NULL);
}


/* ------------------------------------------------------------------ connection states */

static void consume(struct conn *c, size_t n)
{
	memmove(c->buf, c->buf + n, c->len - n);
	c->len -= n;
}

/* Close now. The memory is freed at the end of the loop's round, since
 * events already collected may still point at it. */
static void conn_close(struct conn *c)
{
	if (c->dead)
		return;
	timer_unlink(c);
	close(c->fd); /* also leaves the epoll set: the descriptor is not shared */
	if (c->file >= 0)
		close(c->file);
	safe_tmpfile_discard(c->tmp);
	free(c->rq);
	free(c->out.p);
	c->dead = true;
	if (c->rejected) {
		nrejecting--;
	} else {
		nconns--;
		atomic_fetch_sub(&total_conns, 1);
	}
	if (!c->ready) { /* else the ready list frees it */
		c->next = dead_list;
		dead_list = c;
	}
}

/* Served BURST_MAX requests in a row: continue in the next round. */
static void make_ready(struct conn *c)
{
	if (c->ready) /* still queued from an earlier burst */
		return;
	c->ready = true;
	c->ready_next = NULL;
	if (ready_last)
		ready_last->ready_next = c;
	else
		ready_first = c;
	ready_last = c;
}

static void enter_send(struct conn *c)
{
	c->state = CS_SEND;
	c->out_off = 0;
	timer_set(c, TL_IO);
}

/* A response that needs no request (408, 431, 503 and the like): a new
 * request record for the log, the error, then close. */
static void start_error(struct conn *c, int status, const char *extra)
{
	if (!c->rq && !(c->rq = calloc(1, sizeof(*c->rq)))) {
		conn_close(c);
		return;
	}
	c->rq->keep_alive = false;
	if (!respond_error(c, status, extra)) {
		conn_close(c);
		return;
	}
	enter_send(c);
}

/* Shut our side and read until the client closes (at most LINGER_MS and
 * DISCARD_MAX): closing a socket with unread input makes the kernel send a
 * reset, which can destroy the response before the client has read it. */
static void start_linger(struct conn *c)
{
	shutdown(c->fd, SHUT_WR);
	c->state = CS_LINGER;
	c->total = 0;
	timer_set(c, TL_LINGER);
}

static void body_start(struct conn *c)
{
	c->chunked = c->rq->chunked;
	c->left = c->chunked ? 0 : c->rq->length;
	c->phase = CH_SIZE;
	c->trailers = 0;
	c->total = 0;
	c->werr = 0;
}

/* After the head and any unwanted body: GET, HEAD, DELETE, or a refusal. */
static void dispatch(struct conn *c)
{
	struct request *rq = c->rq;
	bool head = !strcmp(rq->method, "HEAD");
	bool put = !strcmp(rq->method, "PUT");
	bool del = !strcmp(rq->method, "DELETE");
	bool ok;
	if (head || !strcmp(rq->method, "GET")) {
		ok = serve_get(c, head);
	} else if ((put || del) && cfg.read_only) {
		if (put && (rq->length || rq->chunked))
			rq->keep_alive = false; /* the body is not read */
		ok = respond_error(c, 405, "Allow: GET, HEAD\r\n");
	} else if (del) {
		ok = serve_delete(c);
	} else {
		ok = respond_error(c, 405,
				   cfg.read_only ? "Allow: GET, HEAD\r\n" :
						   "Allow: GET, HEAD, PUT, DELETE\r\n");
	}
	if (!ok) {
		conn_close(c);
		return;
	}
	enter_send(c);
}

/* A complete head is in c->buf[0..end). */
static void start_request(struct conn *c, size_t end)
{
	struct request *rq = calloc(1, sizeof(*rq));
	if (!rq) {
		conn_close(c);
		return;
	}
	c->rq = rq;
	int st = parse_head(c->buf, end, rq);
	consume(c, end); /* what the request needs was copied out */
	if (st) {
		start_error(c, st, NULL);
		return;
	}
	bool put = !strcmp(rq->method, "PUT");
	if (put && !cfg.read_only) {
		int r = put_begin(c);
		if (r < 0) {
			conn_close(c);
		} else if (r == 0) {
			enter_send(c);
		} else {
			body_start(c);
			if (c->out.len) { /* 100 Continue first */
				c->body_next = true;
				enter_send(c);
			} else {
				c->state = CS_BODY;
				timer_set(c, TL_IO);
			}
		}
		return;
	}
	if (!put && (rq->length || rq->chunked)) {
		/* a body nobody asked for: read and thrown away first */
		c->store = false;
		body_start(c);
		c->state = CS_BODY;
		timer_set(c, TL_IO);
		return;
	}
	dispatch(c);
}

/* Returns true to run the state machine again, false to wait for an event
 * (or when the connection was closed). */
static bool step_head(struct conn *c, int *served)
{
	/* Tolerate empty lines before a request (RFC 9112, 2.2). */
	size_t skip = 0;
	while (skip < c->len && (c->buf[skip] == '\r' || c->buf[skip] == '\n'))
		skip++;
	if (skip)
		consume(c, skip);
	size_t end = head_end(c->buf, c->len);
	if (end) {
		if ((*served)++ == BURST_MAX) {
			make_ready(c);
			return false;
		}
		start_request(c, end);
		return true;
	}
	if (c->len >= HEAD_MAX) {
		start_error(c, 431, NULL);
		return true;
	}
	ssize_t n = recv(c->fd, c->buf + c->len, HEAD_MAX - c->len, 0);
	if (n > 0) {
		/* the head's time limit runs from its first byte */
		if (c->list != TL_HEAD)
			timer_set(c, TL_HEAD);
		c->len += (size_t)n;
		return true;
	}
	if (n < 0 && errno == EINTR)
		return true;
	if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
		return false;
	conn_close(c); /* EOF or error between requests: nothing to answer */
	return false;
}

enum { BODY_WAIT, BODY_DONE, BODY_EOF, BODY_BAD, BODY_BIG };

/* Receive body bytes: > 0, 0 if none yet, -1 on EOF or error. */
static ssize_t body_recv(struct conn *c, char *dst, size_t n)
{
	for (;;) {
		ssize_t r = recv(c->fd, dst, n, 0);
		if (r > 0) {
			timer_set(c, TL_IO); /* progress */
			return r;
		}
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return 0;
		return -1;
	}
}

/* Body bytes go to the unpublished file (PUT) or nowhere, within limits. */
static bool body_sink(struct conn *c, const char *p, size_t n)
{
	c->total += n;
	if (c->total > (c->store ? cfg.max_body : DISCARD_MAX))
		return false;
	/* after a write error keep reading: the body must be consumed */
	while (c->store && !c->werr && n) {
		ssize_t w = write(c->tmpfd, p, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			c->werr = w < 0 ? errno : EIO;
		else
			p += w, n -= (size_t)w;
	}
	return true;
}

/* Read what there is of the body: Content-Length bytes, or chunked framing
 * (size lines with extensions, data, CR LF, the last chunk and trailer
 * fields, which are skipped). Returns a BODY_ code. */
static int body_step(struct conn *c)
{
	for (;;) {
		if (c->left) {
			const char *p = c->buf;
			ssize_t n;
			if (c->len) {
				n = (ssize_t)(c->left < c->len ? c->left : c->len);
			} else {
				size_t want = c->left < sizeof(scratch) ? (size_t)c->left :
									  sizeof(scratch);
				n = body_recv(c, scratch, want);
				if (n <= 0)
					return n == 0 ? BODY_WAIT : BODY_EOF;
				p = scratch;
			}
			if (!body_sink(c, p, (size_t)n))
				return BODY_BIG;
			if (p == c->buf)
				consume(c, (size_t)n);
			c->left -= (unsigned long long)n;
			continue;
		}
		if (!c->chunked)
			return BODY_DONE;
		char *nl = memchr(c->buf, '\n', c->len);
		if (!nl) {
			if (c->len >= CHUNK_LINE_MAX)
				return BODY_BAD;
			ssize_t n = body_recv(c, c->buf + c->len, HEAD_MAX - c->len);
			if (n <= 0)
				return n == 0 ? BODY_WAIT : BODY_EOF;
			c->len += (size_t)n;
			continue;
		}
		size_t ll = (size_t)(nl - c->buf);
		if (ll >= CHUNK_LINE_MAX)
			return BODY_BAD;
		char line[CHUNK_LINE_MAX];
		memcpy(line, c->buf, ll);
		if (ll && line[ll - 1] == '\r')
			ll--;
		line[ll] = '\0';
		consume(c, (size_t)(nl - c->buf) + 1);
		if (c->phase == CH_DATA_END) { /* the CR LF after a chunk's data */
			if (line[0])
				return BODY_BAD;
			c->phase = CH_SIZE;
		} else if (c->phase == CH_SIZE) {
			char *end;
			errno = 0;
			unsigned long long size = strtoull(line, &end, 16);
			if (errno || end == line || !isxdigit((unsigned char)line[0]) ||
			    (*end && *end != ';' && *end != ' ' && *end != '\t'))
				return BODY_BAD;
			if (size) {
				c->left = size;
				c->phase = CH_DATA_END;
			} else {
				c->phase = CH_TRAILER;
			}
		} else { /* trailer fields up to the blank line */
			if (!line[0])
				return BODY_DONE;
			if (++c->trailers > FIELDS_MAX)
				return BODY_BAD;
		}
	}
}

static bool step_body(struct conn *c)
{
	int r = body_step(c);
	if (r == BODY_WAIT)
		return false;
	if (r == BODY_DONE) {
		if (!c->store) {
			dispatch(c);
			return true;
		}
		c->store = false;
		if (!put_finish(c)) {
			conn_close(c);
			return false;
		}
		enter_send(c);
		return true;
	}
	/* client gone, bad framing or too big: nothing is published */
	safe_tmpfile_discard(c->tmp);
	c->tmp = NULL;
	c->store = false;
	c->rq->keep_alive = false;
	if (!respond_error(c, r == BODY_BIG ? 413 : 400, NULL)) {
		conn_close(c);
		return false;
	}
	enter_send(c);
	return true;
}

static bool step_send(struct conn *c)
{
	while (c->out_off < c->out.len) {
		/* MSG_MORE: the head and the file's first bytes share a segment */
		int flags = MSG_NOSIGNAL | (c->file >= 0 ? MSG_MORE : 0);
		ssize_t n = send(c->fd, c->out.p + c->out_off, c->out.len - c->out_off, flags);
		if (n > 0) {
			c->out_off += (size_t)n;
			timer_set(c, TL_IO);
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return false;
		conn_close(c);
		return false;
	}
	while (c->file >= 0 && c->file_off < c->file_end) {
		ssize_t n = sendfile(c->fd, c->file, &c->file_off, (size_t)(c->file_end - c->file_off));
		if (n > 0) {
			c->rq->sent += (unsigned long long)n;
			timer_set(c, TL_IO);
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return false;
		/* an error, or a file that shrank under us and cannot honour
		 * its Content-Length: cut the connection */
		conn_close(c);
		return false;
	}
	if (c->file >= 0) {
		close(c->file);
		c->file = -1;
	}
	sb_reset(&c->out);
	c->out_off = 0;
	if (c->body_next) { /* the 100 Continue is out: now the body */
		c->body_next = false;
		c->state = CS_BODY;
		timer_set(c, TL_IO);
		return true;
	}
	log_request(c, c->rq);
	free(c->rq);
	c->rq = NULL;
	if (c->close_after || stopping) {
		start_linger(c);
		return true;
	}
	c->state = CS_HEAD;
	timer_set(c, c->len ? TL_HEAD : TL_IDLE);
	return true;
}

static bool step_linger(struct conn *c)
{
	for (;;) {
		ssize_t n = recv(c->fd, scratch, sizeof(scratch), 0);
		if (n > 0 && (c->total += (unsigned long long)n) <= DISCARD_MAX)
			continue;
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return false;
		conn_close(c); /* the client closed (or sent too much) */
		return false;
	}
}

/* Run c's state machine until it has to wait. */
static void advance(struct conn *c)
{
	int served = 0;
	bool more = true;
	while (more && !c->dead) {
		switch (c->state) {
		case CS_HEAD: more = step_head(c, &served); break;
		case CS_BODY: more = step_body(c); break;
		case CS_SEND: more = step_send(c); break;
		case CS_LINGER: more = step_linger(c); break;
		}
	}
}

/* c's deadline has passed. */
static void expire(struct conn *c)
{
	switch (c->list) {
	case TL_HEAD:
		if (!c->len) { /* never started a request: just close */
			conn_close(c);
			return;
		}
		start_error(c, 408, NULL); /* slowloris, or a lost client */
		break;
	case TL_IO:
		if (c->state != CS_BODY) { /* the client does not read */
			conn_close(c);
			return;
		}
		safe_tmpfile_discard(c->tmp);
		c->tmp = NULL;
		c->store = false;
		c->rq->keep_alive = false;
		if (!respond_error(c, 408, NULL)) {
			conn_close(c);
			return;
		}
		enter_send(c);
		break;
	default: /* idle keep-alive, lingering close */
		conn_close(c);
		return;
	}
	advance(c);
}

/* ------------------------------------------------------------------ the event loop */

static void accept_pause(bool pause)
{
	struct epoll_event ev = { .events = pause ? 0 : EPOLLIN, .data.ptr = &listen_tag };
	epoll_ctl(epfd, EPOLL_CTL_MOD, lfd, &ev);
	accept_paused_until = pause ? loop_now + 100 : 0;
}

static void accept_ready(void)
{
	for (int i = 0; i < 64; i++) {
		struct sockaddr_in peer;
		socklen_t plen = sizeof(peer);
		int fd = accept4(lfd, (struct sockaddr *)&peer, &plen, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0) {
			if (errno == EINTR || errno == ECONNABORTED)
				continue;
			if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS ||
			    errno == ENOMEM)
				accept_pause(true); /* out of resources: do not spin */
			return;
		}
		/* full: the connection idle longest between requests (in this
		 * loop) makes room */
		if (atomic_load(&total_conns) >= cfg.max_conns && timers[TL_IDLE].first)
			conn_close(timers[TL_IDLE].first);
		bool reject = atomic_load(&total_conns) >= cfg.max_conns;
		struct conn *c = reject && nrejecting >= REJECT_MAX ? NULL : calloc(1, sizeof(*c));
		if (!c) {
			close(fd);
			continue;
		}
		c->fd = fd;
		c->file = c->tmpfd = -1;
		c->list = TL_NONE;
		if (!inet_ntop(AF_INET, &peer.sin_addr, c->host, sizeof(c->host)))
			strcpy(c->host, "-");
		int one = 1;
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		struct epoll_event ev = { .events = EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLET,
					  .data.ptr = c };
		if (epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev) < 0) {
			close(fd);
			free(c);
			continue;
		}
		if (reject) {
			c->rejected = true;
			nrejecting++;
			start_error(c, 503, "Retry-After: 1\r\n");
		} else {
			nconns++;
			atomic_fetch_add(&total_conns, 1);
			c->state = CS_HEAD;
			timer_set(c, TL_HEAD);
		}
	}
}

/* SIGINT or SIGTERM: no new connections, idle ones closed now, the others
 * once their response is out. */
static void begin_stop(void)
{
	epoll_ctl(epfd, EPOLL_CTL_DEL, wakefd, NULL);
	close(lfd); /* leaves the epoll set */
	lfd = -1;
	while (timers[TL_IDLE].first)
		conn_close(timers[TL_IDLE].first);
	for (struct conn *c = timers[TL_HEAD].first, *next; c; c = next) {
		next = c->next;
		if (!c->len)
			conn_close(c);
	}
}

static int next_timeout(void)
{
	if (ready_first)
		return 0;
	int64_t next = -1;
	for (int l = 0; l < TL_COUNT; l++)
		if (timers[l].first && (next < 0 || timers[l].first->deadline < next))
			next = timers[l].first->deadline;
	if (accept_paused_until && (next < 0 || accept_paused_until < next))
		next = accept_paused_until;
	if (next < 0)
		return -1;
	return next <= loop_now ? 0 : (int)(next - loop_now);
}

static void run_loop(void)
{
	struct epoll_event evs[EVENTS_MAX];
	while (lfd >= 0 || nconns + nrejecting > 0) {
		int n = epoll_wait(epfd, evs, EVENTS_MAX, next_timeout());
		if (n < 0 && errno != EINTR) {
			perror("safe-httpd: epoll_wait");
			break;
		}
		loop_now = now_ms();
		for (int i = 0; i < n; i++) {
			void *p = evs[i].data.ptr;
			if (p == &listen_tag) {
				if (lfd >= 0)
					accept_ready();
			} else if (p == &wake_tag) {
				if (lfd >= 0)
					begin_stop();
			} else if (!((struct conn *)p)->dead) {
				advance(p);
			}
		}
		/* connections that yielded after a burst of pipelined requests */
		struct conn *r = ready_first;
		ready_first = ready_last = NULL;
		while (r) {
			struct conn *c = r;
			r = c->ready_next;
			c->ready = false;
			if (c->dead)
				free(c);
			else
				advance(c);
		}
		for (int l = 0; l < TL_COUNT; l++)
			while (timers[l].first && timers[l].first->deadline <= loop_now)
				expire(timers[l].first);
		if (accept_paused_until && loop_now >= accept_paused_until && lfd >= 0)
			accept_pause(false);
		while (dead_list) {
			struct conn *c = dead_list;
			dead_list = c->next;
			free(c);
		}
	}
}

/* One loop thread: its listening socket (taken over) in its own epoll set
 * with the shared wake-up eventfd; returns when the server stops and its
 * last connection is gone. */
static void *loop_main(void *arg)
{
	lfd = (int)(intptr_t)arg;
	timers[TL_HEAD].limit_ms = cfg.head_timeout_ms;
	timers[TL_IDLE].limit_ms = cfg.idle_timeout_ms;
	timers[TL_IO].limit_ms = cfg.body_timeout_ms;
	timers[TL_LINGER].limit_ms = LINGER_MS;
	loop_now = now_ms();
	struct epoll_event lev = { .events = EPOLLIN, .data.ptr = &listen_tag };
	struct epoll_event wev = { .events = EPOLLIN, .data.ptr = &wake_tag };
	epfd = epoll_create1(EPOLL_CLOEXEC);
	if (epfd < 0 || epoll_ctl(epfd, EPOLL_CTL_ADD, lfd, &lev) < 0 ||
	    epoll_ctl(epfd, EPOLL_CTL_ADD, wakefd, &wev) < 0) {
		perror("safe-httpd: epoll");
		exit(1);
	}
	run_loop();
	/* Normally every connection is gone by now; after a failed
	 * epoll_wait, close what is left. */
	for (int l = 0; l < TL_COUNT; l++)
		while (timers[l].first)
			conn_close(timers[l].first);
	while (ready_first) {
		struct conn *r = ready_first;
		ready_first = r->ready_next;
		if (!r->dead)
			conn_close(r);
		free(r);
	}
	while (dead_list) {
		struct conn *d = dead_list;
		dead_list = d->next;
		free(d);
	}
	if (lfd >= 0)
		close(lfd);
	close(epfd);
	return NULL;
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

static int parse_seconds(const char *s)
{
	int v = (int)parse_number(s, 3600, "invalid timeout");
	if (!v)
		usage_error("invalid timeout", s);
	return v * 1000;
}

/* Each connection may hold its socket and one file; raise the soft limit
 * on descriptors to that, or lower --max-conns to what the hard limit
 * allows. */
static void fit_descriptor_limit(int nloops)
{
	struct rlimit rl;
	rlim_t need = (rlim_t)cfg.max_conns * 2 + (rlim_t)nloops * (REJECT_MAX + 2) + 32;
	if (getrlimit(RLIMIT_NOFILE, &rl) < 0 || rl.rlim_cur >= need)
		return;
	rl.rlim_cur = rl.rlim_max == RLIM_INFINITY || rl.rlim_max > need ? need : rl.rlim_max;
	if (setrlimit(RLIMIT_NOFILE, &rl) < 0 && getrlimit(RLIMIT_NOFILE, &rl) < 0)
		return;
	if (rl.rlim_cur < need) {
		rlim_t fixed = (rlim_t)nloops * (REJECT_MAX + 2) + 32;
		unsigned max = rl.rlim_cur > fixed + 2 ? (unsigned)((rl.rlim_cur - fixed) / 2) : 1;
		fprintf(stderr, "safe-httpd: descriptor limit %llu: --max-conns lowered to %u\n",
			(unsigned long long)rl.rlim_cur, max);
		cfg.max_conns = max;
	}
}

int main(int argc, char **argv)
{
	enum {
		OPT_IN_ROOT = 256,
		OPT_WALKER,
		OPT_READ_ONLY,
		OPT_NO_LISTING,
		OPT_MAX_CONNS,
		OPT_HEAD_TIMEOUT,
		OPT_IDLE_TIMEOUT,
		OPT_BODY_TIMEOUT,
		OPT_TIMEOUT,
		OPT_MAX_BODY,
		OPT_ACCESS_LOG,
		OPT_THREADS,
	};
	static const struct option opts[] = {
		{ "in-root", no_argument, NULL, OPT_IN_ROOT },
		{ "walker", no_argument, NULL, OPT_WALKER },
		{ "read-only", no_argument, NULL, OPT_READ_ONLY },
		{ "no-listing", no_argument, NULL, OPT_NO_LISTING },
		{ "max-conns", required_argument, NULL, OPT_MAX_CONNS },
		{ "head-timeout", required_argument, NULL, OPT_HEAD_TIMEOUT },
		{ "idle-timeout", required_argument, NULL, OPT_IDLE_TIMEOUT },
		{ "body-timeout", required_argument, NULL, OPT_BODY_TIMEOUT },
		{ "timeout", required_argument, NULL, OPT_TIMEOUT },
		{ "max-body", required_argument, NULL, OPT_MAX_BODY },
		{ "access-log", required_argument, NULL, OPT_ACCESS_LOG },
		{ "threads", required_argument, NULL, OPT_THREADS },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	const char *log_path = NULL;
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	int nloops = ncpu < 1 ? 1 : ncpu > 8 ? 8 : (int)ncpu;
	int c;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+qhV", opts, NULL)) != -1) {
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
		case OPT_NO_LISTING:
			cfg.no_listing = true;
			break;
		case OPT_MAX_CONNS:
			cfg.max_conns = (unsigned)parse_number(optarg, 1000000, "invalid count");
			if (!cfg.max_conns)
				usage_error("invalid count", optarg);
			break;
		case OPT_HEAD_TIMEOUT:
			cfg.head_timeout_ms = parse_seconds(optarg);
			break;
		case OPT_IDLE_TIMEOUT:
			cfg.idle_timeout_ms = parse_seconds(optarg);
			break;
		case OPT_BODY_TIMEOUT:
			cfg.body_timeout_ms = parse_seconds(optarg);
			break;
		case OPT_TIMEOUT:
			cfg.head_timeout_ms = cfg.idle_timeout_ms = cfg.body_timeout_ms =
				parse_seconds(optarg);
			break;
		case OPT_MAX_BODY:
			cfg.max_body = parse_number(optarg, ULLONG_MAX >> 1, "invalid size");
			break;
		case OPT_ACCESS_LOG:
			log_path = optarg;
			break;
		case OPT_THREADS:
			nloops = (int)parse_number(optarg, 64, "invalid thread count");
			if (!nloops)
				usage_error("invalid thread count", optarg);
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
	if (!cfg.quiet) {
		access_log = stderr;
		if (log_path && !(access_log = fopen(log_path, "ae"))) {
			fprintf(stderr, "safe-httpd: %s: %s\n", log_path, strerror(errno));
			return 1;
		}
		setvbuf(access_log, NULL, _IOLBF, 0);
	}
	fit_descriptor_limit(nloops);

	/* SIGPIPE ignored (a client may vanish during sendfile); SIGINT and
	 * SIGTERM blocked in every thread and read from a signalfd here. */
	signal(SIGPIPE, SIG_IGN);
	sigset_t stop_set;
	sigemptyset(&stop_set);
	sigaddset(&stop_set, SIGINT);
	sigaddset(&stop_set, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &stop_set, NULL);
	int sfd = signalfd(-1, &stop_set, SFD_CLOEXEC);
	wakefd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);

	/* One listening socket per loop on the same port (SO_REUSEPORT: the
	 * kernel spreads new connections over them); port 0 is resolved by
	 * the first. */
	int *lfds = calloc((size_t)nloops, sizeof(*lfds));
	struct sockaddr_in addr = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
	addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	int one = 1;
	if (sfd < 0 || wakefd < 0 || !lfds) {
		fprintf(stderr, "safe-httpd: %s\n", strerror(errno));
		return 1;
	}
	for (int i = 0; i < nloops; i++) {
		socklen_t alen = sizeof(addr);
		lfds[i] = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
		if (lfds[i] < 0 ||
		    setsockopt(lfds[i], SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0 ||
		    (nloops > 1 &&
		     setsockopt(lfds[i], SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one)) < 0) ||
		    bind(lfds[i], (struct sockaddr *)&addr, sizeof(addr)) < 0 ||
		    listen(lfds[i], SOMAXCONN) < 0 ||
		    getsockname(lfds[i], (struct sockaddr *)&addr, &alen) < 0) {
			fprintf(stderr, "safe-httpd: 127.0.0.1:%u: %s\n", port, strerror(errno));
			return 1;
		}
	}
	pthread_t *threads = calloc((size_t)nloops, sizeof(*threads));
	if (!threads) {
		fprintf(stderr, "safe-httpd: %s\n", strerror(ENOMEM));
		return 1;
	}
	int started = 0;
	for (; started < nloops; started++)
		if (pthread_create(&threads[started], NULL, loop_main,
				   (void *)(intptr_t)lfds[started]) != 0)
			break;
	if (started < nloops) { /* their sockets would take connections nobody accepts */
		fprintf(stderr, "safe-httpd: cannot start %d loop threads\n", nloops);
		return 1;
	}
	free(lfds);
	printf("listening on 127.0.0.1:%u\n", ntohs(addr.sin_port));
	fflush(stdout);

	struct signalfd_siginfo si = { .ssi_signo = SIGTERM };
	while (read(sfd, &si, sizeof(si)) != (ssize_t)sizeof(si))
		if (errno != EINTR)
			break;
	fprintf(stderr, "safe-httpd: %s, shutting down\n", strsignal((int)si.ssi_signo));
	atomic_store(&stopping, true);
	uint64_t wake = 1;
	if (write(wakefd, &wake, sizeof(wake)) != (ssize_t)sizeof(wake))
		perror("safe-httpd: eventfd");
	for (int i = 0; i < started; i++)
		pthread_join(threads[i], NULL);
	free(threads);
	close(wakefd);
	close(sfd);
	close(rootfd);
	if (access_log && access_log != stderr)
		fclose(access_log);
	return 0;
}
