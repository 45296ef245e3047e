/* SPDX-License-Identifier: MIT */
/* safe-httpd: GET and HEAD. */
#define _GNU_SOURCE
#include <sys/xattr.h>

#include "httpd.h"

/* ------------------------------------------------------------------ GET and HEAD */

/* A stored MIME type is only used if it cannot break the response head. */
bool valid_mime(const char *s, size_t n)
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

/* One byte-range-spec ("a-b", "a-" or "-n", RFC 9110, 14.1.1) in [v, end):
 * 1 with *r set, 0 if it is unsatisfiable for a file of size bytes, -1 if
 * it is malformed. */
static int parse_spec(const char *v, const char *end, unsigned long long size,
		      struct byterange *r)
{
	const char *dash = memchr(v, '-', (size_t)(end - v));
	if (!dash)
		return -1;
	unsigned long long n[2] = { 0, 0 };
	const char *from[2] = { v, dash + 1 }, *to[2] = { dash, end };
	bool has[2] = { dash > v, dash + 1 < end };
	for (int i = 0; i < 2; i++) {
		if (!has[i])
			continue;
		if (to[i] - from[i] > 18 || strspn(from[i], "0123456789") < (size_t)(to[i] - from[i]))
			return -1;
		for (const char *p = from[i]; p < to[i]; p++)
			n[i] = n[i] * 10 + (unsigned long long)(*p - '0');
	}
	if (!has[0]) { /* suffix: the last n bytes */
		if (!has[1])
			return -1;
		if (n[1] == 0 || size == 0)
			return 0;
		r->first = n[1] >= size ? 0 : size - n[1];
		r->last = size - 1;
		return 1;
	}
	if (has[1] && n[1] < n[0])
		return -1;
	if (n[0] >= size)
		return 0;
	r->first = n[0];
	r->last = has[1] && n[1] < size ? n[1] : size - 1;
	return 1;
}

static bool ranges_overlap(const struct byterange *r, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		for (unsigned j = i + 1; j < n; j++)
			if (r[i].first <= r[j].last && r[j].first <= r[i].last)
				return true;
	return false;
}

/*
 * The ranges a Range field asks for, against a file of `size` bytes, in the
 * order asked: their number (r[] set), 0 to ignore the field and send the
 * whole file (not "bytes=", malformed, more than RANGES_MAX ranges, or
 * ranges that overlap: RFC 9110, 14.2 lets a server ignore Range, and
 * overlapping or many ranges are how a small request asks for a huge
 * answer), -1 when none is satisfiable (416).
 */
static int parse_ranges(const char *v, unsigned long long size, struct byterange *r)
{
	if (strncasecmp(v, "bytes=", 6))
		return 0;
	v += 6;
	unsigned n = 0, specs = 0;
	for (;;) {
		while (*v == ' ' || *v == '\t')
			v++;
		const char *end = v + strcspn(v, ",");
		const char *e = end;
		while (e > v && (e[-1] == ' ' || e[-1] == '\t'))
			e--;
		if (e > v) { /* empty elements of the list are allowed */
			if (++specs > RANGES_MAX)
				return 0;
			int k = parse_spec(v, e, size, &r[n]);
			if (k < 0)
				return 0;
			n += (unsigned)k;
		}
		if (!*end)
			break;
		v = end + 1;
	}
	if (!specs)
		return 0;
	if (!n)
		return -1;
	return ranges_overlap(r, n) ? 0 : (int)n;
}

/* The entity tag of a file: inode, size and modification time, so that a
 * replaced (PUT publishes a new inode) or rewritten file gets a new one. */
static void make_etag(const struct stat *st, char etag[ETAG_MAX])
{
	snprintf(etag, ETAG_MAX, "\"%llx-%llx-%llx\"", (unsigned long long)st->st_ino,
		 (unsigned long long)st->st_size,
		 (unsigned long long)st->st_mtim.tv_sec * 1000000000ULL +
			 (unsigned long long)st->st_mtim.tv_nsec);
}

/* If-None-Match: "*" or a list of entity tags, compared weakly (RFC 9110,
 * 13.1.2: a W/ prefix is ignored). */
static bool inm_matches(const char *v, const char *etag)
{
	size_t elen = strlen(etag);
	for (;;) {
		while (*v == ' ' || *v == '\t' || *v == ',')
			v++;
		if (!*v)
			return false;
		if (*v == '*')
			return true;
		if (!strncmp(v, "W/", 2))
			v += 2;
		if (*v != '"')
			return false; /* malformed: no match */
		const char *close = strchr(v + 1, '"');
		if (!close)
			return false;
		if ((size_t)(close + 1 - v) == elen && !memcmp(v, etag, elen))
			return true;
		v = close + 1;
	}
}

/* If-Range (RFC 9110, 13.1.5): does the range apply to this file? An
 * entity tag must match strongly (no W/); a date must equal Last-Modified
 * exactly. */
static bool if_range_holds(const struct request *rq, const struct stat *st, const char *etag)
{
	if (!rq->has_if_range)
		return true;
	if (rq->if_range[0] == '"')
		return !strcmp(rq->if_range, etag);
	time_t t;
	return parse_http_date(rq->if_range, &t) && t == st->st_mtime;
}

/* The names of d that a listing shows, sorted; their number, names in
 * *out (the caller frees). Hidden names (name_hidden()) are left out. */
static size_t listing_names(DIR *d, char ***out)
{
	char **names = NULL;
	size_t n = 0, cap = 0;
	struct dirent *e;
	while ((e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..") || name_hidden(e->d_name))
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
	*out = names;
	return n;
}

/* What GET of the entry name of the directory dfd (the request's) would
 * serve, into *st: false when it would not be served (refused, missing,
 * or neither a regular file nor a directory). A symbolic link is resolved
 * from ROOT as a request for it would be, under the server's scope, so
 * that a link leading out of ROOT is not listed; any other entry is
 * looked at by its name in dfd, with no resolution at all. */
static bool entry_served(const struct request *rq, int dfd, const char *name, struct stat *st)
{
	if (fstatat(dfd, name, st, AT_SYMLINK_NOFOLLOW) < 0)
		return false;
	if (S_ISLNK(st->st_mode)) {
		char lpath[sizeof(rq->lpath) + NAME_MAX];
		int n = snprintf(lpath, sizeof(lpath), "%s%s", rq->lpath, name);
		struct safe_open_how how = { .flags = O_PATH, .resolve = cfg.resolve };
		int fd = n > 0 && n <= PATH_MAX ? safe_openat2(rootfd, lpath, &how, sizeof(how)) : -1;
		if (fd < 0)
			return false;
		int r = fstat(fd, st);
		close(fd);
		if (r < 0)
			return false;
	}
	return S_ISREG(st->st_mode) || S_ISDIR(st->st_mode);
}

/* One row: the name (a link), its modification time (UTC) and size in
 * bytes ("-" for a directory), of what the name serves. */
static void listing_row(struct sbuf *b, const char *name, const struct stat *st)
{
	bool dir = S_ISDIR(st->st_mode);
	char when[32], size[32] = "-";
	format_time(TF_LIST, st->st_mtime, when, sizeof(when));
	if (!dir)
		snprintf(size, sizeof(size), "%lld", (long long)st->st_size);
	sb_str(b, "<tr><td><a href=\"");
	sb_url(b, name, "");
	sb_str(b, dir ? "/\">" : "\">");
	sb_html(b, name);
	sb_str(b, dir ? "/</a></td><td>" : "</a></td><td>");
	sb_str(b, when);
	sb_str(b, "</td><td class=\"size\">");
	sb_str(b, size);
	sb_str(b, "</td></tr>\n");
}

/* The listing of the directory the request resolved to, open as dfd
 * (taken over): read through that descriptor, never opened again by name,
 * so that it lists what the request resolved to. */
static bool serve_listing(struct conn *c, int dfd, bool head)
{
	struct request *rq = c->rq;
	DIR *d = fdopendir(dfd);
	if (!d) {
		close(dfd);
		return respond_error(c, status_for(errno), NULL);
	}
	struct sbuf b = { 0 };
	char **names;
	size_t n = listing_names(d, &names);
	sb_str(&b, "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>Index of ");
	sb_html(&b, rq->path);
	sb_str(&b, "</title>\n<style>td{padding:0 1em 0 0}td.size{text-align:right}</style>"
		   "</head>\n<body><h1>Index of ");
	sb_html(&b, rq->path);
	sb_str(&b, "</h1>\n<table>\n<tr><th>Name</th><th>Last modified (UTC)</th><th>Size</th></tr>\n"
		   "<tr><td><a href=\"../\">../</a></td><td></td><td></td></tr>\n");
	for (size_t i = 0; i < n; i++) {
		struct stat st;
		if (entry_served(rq, dirfd(d), names[i], &st))
			listing_row(&b, names[i], &st);
		free(names[i]);
	}
	free(names);
	closedir(d);
	sb_str(&b, "</table></body></html>\n");
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

/* The head of part i of a multipart/byteranges body (i == nparts: the
 * closing delimiter) into buf; its length, or -1 if it does not fit. The
 * same text is formatted to count the Content-Length and to send. */
int part_head(const struct conn *c, unsigned i, char *buf, size_t size)
{
	int n;
	if (i == c->nparts)
		n = snprintf(buf, size, "\r\n--%s--\r\n", boundary);
	else
		n = snprintf(buf, size,
			     "\r\n--%s\r\nContent-Type: %s\r\nContent-Range: bytes %llu-%llu/%llu\r\n\r\n",
			     boundary, c->part_type, c->parts[i].first, c->parts[i].last,
			     c->file_size);
	return n < 0 || (size_t)n >= size ? -1 : n;
}

/* After a part is sent: queue the next part's head and its bytes, or the
 * closing delimiter. false when there is nothing more to send. */
bool next_part(struct conn *c)
{
	if (!c->nparts || c->next_part > c->nparts)
		return false;
	char h[512];
	unsigned i = c->next_part++;
	int n = part_head(c, i, h, sizeof(h));
	if (n < 0)
		return false;
	sb_reset(&c->out);
	c->out_off = 0;
	sb_add(&c->out, h, (size_t)n);
	c->rq->sent += (unsigned long long)n;
	if (i < c->nparts) {
		c->file_off = (off_t)c->parts[i].first;
		c->file_end = (off_t)c->parts[i].last + 1;
	}
	return !c->out.failed;
}

/* 206 with several parts: the body is made of part heads (c->out) and file
 * ranges (sendfile), queued one after the other by next_part(). */
static bool respond_multipart(struct conn *c, int fd, const struct stat *st, const char *ctype,
			      const char *extra, unsigned n, bool head)
{
	snprintf(c->part_type_buf, sizeof(c->part_type_buf), "%s", ctype);
	c->part_type = c->part_type_buf;
	c->file_size = (unsigned long long)st->st_size;
	c->nparts = n;
	unsigned long long len = 0;
	char h[512];
	for (unsigned i = 0; i <= n; i++) {
		int hl = part_head(c, i, h, sizeof(h));
		if (hl < 0)
			return false;
		len += (unsigned long long)hl;
		if (i < n)
			len += c->parts[i].last - c->parts[i].first + 1;
	}
	char type[64];
	snprintf(type, sizeof(type), "multipart/byteranges; boundary=%s", boundary);
	if (!respond_head(c, 206, type, len, &st->st_mtime, extra))
		return false;
	if (head) {
		c->nparts = 0;
		close(fd);
		return true;
	}
	c->file = fd;
	c->file_off = c->file_end = 0; /* step_send asks next_part() for the first */
	c->next_part = 0;
	return true;
}

/* Up to INLINE_MAX bytes of fd from first go out right after the head (one
 * send); false when out of memory. */
static bool inline_body(struct conn *c, int fd, unsigned long long first, unsigned long long len)
{
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
	c->out.len += got;
	c->rq->sent = got;
	/* A file that shrank under us cannot honour its Content-Length: send
	 * what there is and cut the connection. */
	if (got < len)
		c->close_after = true;
	return p != NULL;
}

/* A regular file, open as fd (taken over): 304, 416, 206 or 200 (RFC 9110,
 * 13.2.2 order: If-None-Match before If-Modified-Since, which it
 * replaces). A body up to INLINE_MAX goes out with the head; a bigger one,
 * and the parts of a multi-range answer, with sendfile(2). */
static bool serve_file(struct conn *c, int fd, const struct stat *st, const char *ctype,
		       bool head)
{
	struct request *rq = c->rq;
	unsigned long long size = (unsigned long long)st->st_size;
	char etag[ETAG_MAX], extra[256];
	make_etag(st, etag);
	int el = snprintf(extra, sizeof(extra), "Accept-Ranges: bytes\r\nETag: %s\r\n", etag);
	bool ok;
	/* an If-Modified-Since in the future is invalid and ignored (13.1.3) */
	if (rq->has_inm ? inm_matches(rq->inm, etag) :
			  rq->has_ims && rq->ims <= time(NULL) && st->st_mtime <= rq->ims) {
		ok = respond_head(c, 304, NULL, 0, &st->st_mtime, extra);
		goto out;
	}
	int r = 0;
	if (rq->range[0] && if_range_holds(rq, st, etag))
		r = parse_ranges(rq->range, size, c->parts);
	if (r < 0) {
		snprintf(extra, sizeof(extra), "Content-Range: bytes */%llu\r\n", size);
		ok = respond_error(c, 416, extra);
		goto out;
	}
	if (r > 1) { /* fd is taken over only on success */
		if (respond_multipart(c, fd, st, ctype, extra, (unsigned)r, head))
			return true;
		ok = false;
		goto out;
	}
	unsigned long long first = 0, len = size;
	if (r == 1) {
		first = c->parts[0].first;
		len = c->parts[0].last - first + 1;
		snprintf(extra + el, sizeof(extra) - (size_t)el,
			 "Content-Range: bytes %llu-%llu/%llu\r\n", first, c->parts[0].last, size);
	}
	ok = respond_head(c, r ? 206 : 200, ctype, len, &st->st_mtime, extra);
	if (!ok || head || !len)
		goto out;
	if (len <= INLINE_MAX) {
		ok = inline_body(c, fd, first, len);
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

/*
 * Open index.html of the directory the request resolved to, open as dfd:
 * a regular file's fd (>= 0), -1 to list the directory (no index.html, or
 * not a regular file), or -2 with errno (refused). Opened relative to dfd
 * with O_NOFOLLOW: a plain name in a directory already beneath ROOT, so no
 * second resolution from ROOT. A symbolic link there (ELOOP) is resolved
 * again, from ROOT, under the server's scope, like any request: its
 * target may lie elsewhere beneath ROOT, or outside (refused).
 */
static int open_index(const struct request *rq, int dfd, struct stat *st)
{
	int fd = openat(dfd, "index.html", O_RDONLY | O_NOCTTY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 && errno == ELOOP) {
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
		fd = safe_openat2(rootfd, ipath, &how, sizeof(how));
	}
	if (fd < 0)
		return errno == ENOENT ? -1 : -2;
	if (fstat(fd, st) < 0 || !S_ISREG(st->st_mode)) {
		close(fd);
		return -1;
	}
	return fd;
}

bool serve_get(struct conn *c, bool head)
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
	/* One resolution from ROOT: a directory's index.html and listing
	 * go through its descriptor. */
	if (S_ISDIR(st.st_mode)) {
		if (rq->path[strlen(rq->path) - 1] != '/') {
			close(fd);
			struct sbuf loc = { 0 };
			location_field(rq, "/", &loc);
			bool ok = loc.failed || loc.len > PATH_MAX + 64 ?
					  respond_error(c, 414, NULL) :
					  respond_error(c, 301, loc.p);
			free(loc.p);
			return ok;
		}
		int ifd = open_index(rq, fd, &st);
		if (ifd == -1 && !cfg.no_listing)
			return serve_listing(c, fd, head);
		int err = errno;
		close(fd);
		if (ifd < 0)
			return respond_error(c, ifd == -1 ? 403 : status_for(err), NULL);
		fd = ifd;
		name = "index.html";
	}
	if (!S_ISREG(st.st_mode)) {
		close(fd);
		return respond_error(c, 403, NULL);
	}
	char mime[128];
	const char *ctype = mime_type(name);
	ssize_t ml = fgetxattr(fd, "user.mime_type", mime, sizeof(mime) - 1);
	if (ml > 0 && valid_mime(mime, (size_t)ml)) {
		mime[ml] = '\0';
		ctype = mime;
	}
	return serve_file(c, fd, &st, ctype, head);
}

