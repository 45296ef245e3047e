/* SPDX-License-Identifier: MIT */
/* safe-httpd: connections, their state machine and the per-thread event loop. */
#define _GNU_SOURCE
#include <sys/epoll.h>
#include <sys/sendfile.h>

#include "httpd.h"

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
/* epoll data of the two non-connection descriptors */
static char listen_tag, wake_tag;

/* Connection records of this thread, kept for its next connections (see
 * request_free()). */
#define CONN_POOL_MAX 64
static __thread struct conn *conn_pool[CONN_POOL_MAX];
static __thread unsigned conns_pooled;

static struct conn *conn_alloc(void)
{
	return conns_pooled ? conn_pool[--conns_pooled] : malloc(sizeof(struct conn));
}

static void conn_free(struct conn *c)
{
	if (conns_pooled < CONN_POOL_MAX)
		conn_pool[conns_pooled++] = c;
	else
		free(c);
}

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
	put_abandon(c, c->tmp);
	request_free(c->rq);
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
	if (!c->rq && !(c->rq = request_new())) {
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
	bool del = !strcmp(rq->method, "DELETE");
	bool ok;
	if (rq->refuse) {
		if (rq->length || rq->chunked)
			rq->keep_alive = false; /* the body is not read */
		ok = respond_refusal(c, rq->refuse);
	} else if (head || !strcmp(rq->method, "GET")) {
		ok = serve_get(c, head);
	} else if (del) {
		ok = serve_delete(c);
	} else {
		ok = respond_refusal(c, 405);
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
	struct request *rq = request_new();
	if (!rq) {
		conn_close(c);
		return;
	}
	c->rq = rq;
	if (cfg.log_format == LOG_TIMED)
		rq->started_ms = now_ms();
	int st = parse_head(c->buf, end, rq);
	consume(c, end); /* what the request needs was copied out */
	if (st) {
		start_error(c, st, NULL);
		return;
	}
	bool put = !strcmp(rq->method, "PUT");
	/* refused before any body is read: no write without --writable and
	 * the credentials, no hidden name for anybody */
	if (put || !strcmp(rq->method, "DELETE"))
		rq->refuse = write_refusal(rq);
	if (!rq->refuse && path_hidden(rq->path))
		rq->refuse = 404;
	if (put && !rq->refuse) {
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
	if (!put && !rq->refuse && (rq->length || rq->chunked)) {
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

/* One line of the chunked framing (CR LF gone): BODY_WAIT to go on, or
 * BODY_DONE or BODY_BAD. */
static int chunk_line(struct conn *c, const char *line)
{
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
	return BODY_WAIT;
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
		int r = chunk_line(c, line);
		if (r != BODY_WAIT)
			return r;
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
	put_abandon(c, c->tmp);
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

/* Send c->out: 1 when all of it is out, 0 when the socket would block, -1
 * when the connection was closed. */
static int send_out(struct conn *c)
{
	/* MSG_MORE while file bytes follow: the head and the file's first
	 * bytes share a segment */
	bool more = c->file >= 0 &&
		    (c->file_off < c->file_end || (c->nparts && c->next_part <= c->nparts));
	while (c->out_off < c->out.len) {
		int flags = MSG_NOSIGNAL | (more ? MSG_MORE : 0);
		ssize_t n = send(c->fd, c->out.p + c->out_off, c->out.len - c->out_off, flags);
		if (n > 0) {
			c->out_off += (size_t)n;
			timer_set(c, TL_IO);
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return 0;
		conn_close(c);
		return -1;
	}
	return 1;
}

/* Send the file's bytes [file_off, file_end): as send_out(). */
static int send_file(struct conn *c)
{
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
			return 0;
		/* an error, or a file that shrank under us and cannot honour
		 * its Content-Length: cut the connection */
		conn_close(c);
		return -1;
	}
	return 1;
}

/*
 * Can the connection be closed now, without a lingering close? A lingering
 * close protects a response from the reset that closing a socket with
 * unread input causes. Premise: nothing more will come from a client that
 * said "Connection: close" (or spoke HTTP/1.0 without keep-alive), sent a
 * request without a body, and has no further bytes in our buffer: RFC
 * 9112, 9.6 forbids it to send anything after that request. Any other
 * close (an error, a body left unread, a server stopping) lingers.
 */
static bool closes_cleanly(const struct conn *c)
{
	const struct request *rq = c->rq;
	return rq->client_close && !c->len && !rq->chunked && !(rq->has_length && rq->length);
}

static bool step_send(struct conn *c)
{
	do {
		if (send_out(c) <= 0 || send_file(c) <= 0)
			return false;
	} while (next_part(c));
	c->nparts = 0;
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
	bool quick_close = closes_cleanly(c);
	request_free(c->rq);
	c->rq = NULL;
	if (quick_close) {
		conn_close(c);
		return false;
	}
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
		put_abandon(c, c->tmp);
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
		struct sockaddr_in6 peer; /* room for either family */
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
		struct conn *c = reject && nrejecting >= REJECT_MAX ? NULL : conn_alloc();
		if (!c) {
			close(fd);
			continue;
		}
		memset(c, 0, offsetof(struct conn, buf)); /* buf: c->len bytes used */
		c->fd = fd;
		c->file = c->tmpfd = -1;
		c->list = TL_NONE;
		memcpy(&c->peer, &peer, sizeof(c->peer)); /* formatted for the log only */
		struct epoll_event ev = { .events = EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLET,
					  .data.ptr = c };
		if (epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev) < 0) {
			close(fd);
			conn_free(c);
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
			/* the request is usually there already: no need to wait
			 * for the event that says so */
			advance(c);
		}
	}
}

/* SIGINT or SIGTERM: no new connections, idle ones closed now, the others
 * once their response is out. */
static void begin_stop(void)
{
	epoll_ctl(epfd, EPOLL_CTL_DEL, wakefd, NULL);
	/* out of the epoll set first: a socket from systemd is shared (other
	 * descriptors of it stay open in other loops), and closing one
	 * descriptor of a shared socket would leave it registered here */
	epoll_ctl(epfd, EPOLL_CTL_DEL, lfd, NULL);
	close(lfd);
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
		int timeout = next_timeout();
		if (timeout != 0 && access_log)
			log_flush(); /* before waiting: no line is held back */
		int n = epoll_wait(epfd, evs, EVENTS_MAX, timeout);
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
				conn_free(c);
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
			conn_free(c);
		}
	}
}

/* One loop thread: its listening socket (taken over) in its own epoll set
 * with the shared wake-up eventfd; returns when the server stops and its
 * last connection is gone. */
void *loop_main(void *arg)
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
		conn_free(r);
	}
	while (dead_list) {
		struct conn *d = dead_list;
		dead_list = d->next;
		conn_free(d);
	}
	if (lfd >= 0)
		close(lfd);
	if (access_log)
		log_flush();
	while (conns_pooled)
		free(conn_pool[--conns_pooled]);
	request_pool_drain();
	close(epfd);
	return NULL;
}

