/* SPDX-License-Identifier: MIT */
/* safe-httpd: statuses, dates and the growable output buffer. */
#define _GNU_SOURCE
#include "httpd.h"

/* ------------------------------------------------------------------ small helpers */

const char *reason(int status)
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
	case 401: return "Unauthorized";
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
int status_for(int err)
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

int64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

#define IMF_FIXDATE "%a, %d %b %Y %H:%M:%S GMT"

/* The clocks the server shows, in one place: the Date field and
 * Last-Modified (UTC, IMF-fixdate), the access log's timestamp (local time,
 * as Common Log Format has it), a listing's modification times (UTC, in the
 * sortable ISO 8601 form directory listings use; its column head says UTC). */
void format_time(enum time_form k, time_t t, char *buf, size_t size)
{
	struct tm tm;
	size_t n;
	switch (k) {
	case TF_LOG:
		localtime_r(&t, &tm);
		n = strftime(buf, size, "%d/%b/%Y:%H:%M:%S %z", &tm);
		break;
	case TF_LIST:
		gmtime_r(&t, &tm);
		n = strftime(buf, size, "%Y-%m-%d %H:%M:%S", &tm);
		break;
	default:
		gmtime_r(&t, &tm);
		n = strftime(buf, size, IMF_FIXDATE, &tm);
		break;
	}
	if (n == 0 && size > 0)
		buf[0] = '\0';
}

/* Now, as format_time() writes it: each form changes once a second, so each
 * is formatted once a second (per thread). */
const char *time_now(enum time_form k)
{
	static __thread time_t last[TF_KINDS];
	static __thread char buf[TF_KINDS][48];
	time_t t = time(NULL);
	if (t != last[k] || !buf[k][0]) {
		format_time(k, t, buf[k], sizeof(buf[k]));
		last[k] = t;
	}
	return buf[k];
}

/* An IMF-fixdate ("Sun, 06 Nov 1994 08:49:37 GMT"), the only form this
 * server sends; the obsolete forms are accepted too, as RFC 9110 asks. */
bool parse_http_date(const char *s, time_t *out)
{
	static const char *const forms[] = {
		IMF_FIXDATE,                 /* IMF-fixdate */
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
void sb_add(struct sbuf *b, const char *s, size_t n)
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

void sb_str(struct sbuf *b, const char *s)
{
	sb_add(b, s, strlen(s));
}

void sb_html(struct sbuf *b, const char *s)
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

/* Percent-encode everything but unreserved characters and those of keep
 * (hrefs: ""; a path: "/"). */
void sb_url(struct sbuf *b, const char *s, const char *keep)
{
	static const char hex[] = "0123456789ABCDEF";
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (isalnum(c) || c == '-' || c == '.' || c == '_' || c == '~' ||
		    (c && strchr(keep, c))) {
			sb_add(b, s, 1);
		} else {
			char e[3] = { '%', hex[c >> 4], hex[c & 15] };
			sb_add(b, e, 3);
		}
	}
}

/* Room for n more bytes at the end of b (not counted in b->len), or NULL. */
char *sb_reserve(struct sbuf *b, size_t n)
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

void sb_reset(struct sbuf *b)
{
	if (b->cap > 64 * 1024) { /* do not keep a big listing's buffer */
		free(b->p);
		*b = (struct sbuf){ 0 };
	}
	b->len = 0;
	b->failed = false;
}
