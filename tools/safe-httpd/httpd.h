/* SPDX-License-Identifier: MIT */
/*
 * safe-httpd: what the files of tools/safe-httpd/ share. One file per concept:
 *   main.c     options, listening sockets, loop threads, signals
 *   conn.c     connections: the per-thread epoll loop and the state machine
 *   request.c  parsing a request head; response heads and error responses
 *   files.c    GET and HEAD: files, ranges, validators, listings
 *   upload.c   PUT and DELETE
 *   auth.c     who may write: the --auth-file credentials
 *   mime.c     Content-Type: /etc/mime.types and the built-in table
 *   util.c     statuses, dates, the growable output buffer
 * The design (threat model, connection model) is in main.c's opening
 * comment and in safe-httpd(1).
 */
#ifndef SAFE_HTTPD_H
#define SAFE_HTTPD_H

#include <arpa/inet.h>
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/types.h>
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
#define RANGE_FIELD_MAX 512     /* a longer Range field is ignored (200) */
#define RANGES_MAX 16           /* more ranges than this: the whole file (200) */
#define ETAG_MAX 64             /* an entity tag, quotes included */

/* ------------------------------------------------------------------ configuration */

enum log_format { LOG_COMMON, LOG_COMBINED, LOG_TIMED };

struct config {
	uint64_t resolve;
	enum log_format log_format;
	int head_timeout_ms, idle_timeout_ms, body_timeout_ms;
	unsigned max_conns;
	unsigned long long max_body;
	bool writable, no_listing, quiet;
	bool dotfiles;   /* serve and list names starting with '.' */
	bool mkdirs;     /* PUT creates missing parent directories (-D) */
};
extern struct config cfg;
extern int rootfd;
extern FILE *access_log; /* NULL with --quiet */
extern atomic_bool stopping;
extern atomic_uint total_conns; /* connections of all loops, not counting 503s */
extern int wakefd;              /* eventfd: readable once the server stops */
extern char boundary[24];       /* of multipart/byteranges, random per run */

struct sbuf {
	char *p;
	size_t len, cap;
	bool failed;
};


/* ------------------------------------------------------------------ connections */

struct request {
	char method[16];
	bool http11, keep_alive, expect_continue, has_length, chunked, has_host;
	bool client_close;      /* the client said it closes after this one */
	unsigned long long length;
	char content_type[128]; /* empty: none, or too long to be a MIME type */
	/* conditional and partial GET (RFC 9110, 13.1.3, 13.1.5, 14.2) */
	char range[RANGE_FIELD_MAX]; /* the Range value; empty: none (or unusable) */
	bool has_ims, has_inm, has_if_range;
	time_t ims;             /* If-Modified-Since */
	char inm[256];          /* If-None-Match; too long: matches nothing */
	char if_range[128];     /* If-Range: an entity tag or an HTTP-date */
	char auth[512];         /* Authorization; empty: none (or too long) */
	int refuse;             /* 0, or the status refusing it before any body */
	char user[64];          /* the Basic user who wrote, for the log; empty: none */
	/* for the log: the request line (escaped, maybe shortened), status, bytes */
	char line[320];
	int status;
	unsigned long long sent;
	int64_t started_ms;     /* --log-format timed: when the head was complete */
	/* From here on request_new() does not zero (16 KiB a request): each is
	 * a string written before it is read, empty until then. */
	char target[HEAD_MAX + 1];
	/* --log-format combined: Referer and User-Agent, shortened */
	char referer[256];
	char agent[256];
	/* the URL path, percent-decoded once, and the path given to the library */
	char path[PATH_MAX + 2];
	char lpath[PATH_MAX + 3];
	/* -D: the first directory this PUT created (a prefix of lpath), removed
	 * with the others it created if the upload fails; empty: none */
	char made[PATH_MAX + 3];
};

/* A byte range of a file, both ends included. */
struct byterange {
	unsigned long long first, last;
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
	struct sockaddr_in6 peer; /* or a sockaddr_in: the client's address */

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
	/* multipart/byteranges: the parts of file still to send after the
	 * current one, each after its part head; then the closing delimiter */
	struct byterange parts[RANGES_MAX];
	unsigned nparts, next_part;
	unsigned long long file_size;
	const char *part_type;
	char part_type_buf[128];

	size_t len;               /* unconsumed input bytes at the start of buf */
	char buf[HEAD_MAX + 1];
};

/* util.c */
const char *reason(int status);
int status_for(int err);
int64_t now_ms(void);
enum time_form { TF_HTTP, TF_LOG, TF_LIST, TF_KINDS };
void format_time(enum time_form k, time_t t, char *buf, size_t size);
const char *time_now(enum time_form k);
bool parse_http_date(const char *s, time_t *out);
void sb_add(struct sbuf *b, const char *s, size_t n);
void sb_str(struct sbuf *b, const char *s);
void sb_html(struct sbuf *b, const char *s);
void sb_url(struct sbuf *b, const char *s, const char *keep);
char *sb_reserve(struct sbuf *b, size_t n);
void sb_reset(struct sbuf *b);

/* request.c */
struct request *request_new(void);
void request_free(struct request *rq);
void request_pool_drain(void);
void log_request(const struct conn *c, const struct request *rq);
void log_flush(void);
int log_reopen(const char *path);
void log_escape(char *dst, size_t size, const char *s);
size_t head_end(const char *b, size_t len);
int parse_head(char *buf, size_t head_len, struct request *rq);
bool respond_head(struct conn *c, int status, const char *ctype, unsigned long long clen,
		  const time_t *mtime, const char *extra);
bool respond_error(struct conn *c, int status, const char *extra);
void location_field(const struct request *rq, const char *suffix, struct sbuf *b);

/* request.c */
bool path_hidden(const char *path);
bool name_hidden(const char *name);

/* files.c */
bool valid_mime(const char *s, size_t n);
bool serve_get(struct conn *c, bool head);
int part_head(const struct conn *c, unsigned i, char *buf, size_t size);
bool next_part(struct conn *c);

/* mime.c */
int mime_load(const char *path);
const char *mime_type(const char *name);

/* upload.c */
bool serve_delete(struct conn *c);
int put_begin(struct conn *c);
void put_abandon(struct conn *c, struct safe_tmpfile *tmp);
bool put_finish(struct conn *c);

/* auth.c */
bool auth_configured(void);
int auth_load(const char *path, uid_t owner);
int write_refusal(struct request *rq);
bool respond_refusal(struct conn *c, int status);

/* conn.c */
void *loop_main(void *arg);

#endif
