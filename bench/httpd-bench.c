/* SPDX-License-Identifier: MIT */
/*
 * httpd-bench: a small HTTP/1.1 load generator for bench/httpd-bench.sh.
 *
 *     httpd-bench PORT PATH CONNECTIONS SECONDS [close]
 *
 * Keeps CONNECTIONS connections to 127.0.0.1:PORT busy with "GET PATH" for
 * SECONDS (one request in flight per connection, keep-alive when the server
 * allows it, a new connection when it closes), then prints
 *
 *     requests/s  requests  errors  connections
 *
 * With "close", every request says "Connection: close": one connection per
 * request, what a client without keep-alive costs the server.
 *
 * A request counts when its response is a complete 200 with the expected
 * Content-Length framing; anything else is an error. One thread, epoll,
 * non-blocking sockets: the generator itself needs little CPU per request.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

struct client {
	int fd;
	bool sent;             /* the request is out */
	size_t have;           /* bytes of the current response received */
	size_t head_len;       /* 0 until the head is complete */
	long long body_len;    /* Content-Length, -1 if none */
	bool server_closes;    /* Connection: close or HTTP/1.0 without keep-alive */
	char head[8192];
};

static struct sockaddr_in addr;
static char request[1024];
static size_t request_len;
static unsigned long long done, errors, connects;
static int epfd;

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static bool open_conn(struct client *c)
{
	c->fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (c->fd < 0)
		return false;
	int one = 1;
	setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if (connect(c->fd, (struct sockaddr *)&addr, sizeof(addr)) < 0 && errno != EINPROGRESS) {
		close(c->fd);
		return false;
	}
	struct epoll_event ev = { .events = EPOLLIN | EPOLLOUT | EPOLLET, .data.ptr = c };
	epoll_ctl(epfd, EPOLL_CTL_ADD, c->fd, &ev);
	c->sent = false;
	c->have = c->head_len = 0;
	connects++;
	return true;
}

static void reopen(struct client *c)
{
	close(c->fd);
	if (!open_conn(c)) { /* the server is gone: no numbers */
		perror("httpd-bench: connect");
		exit(1);
	}
}

/* Parse the response head in c->head[0..head_len). */
static bool parse_head(struct client *c)
{
	c->head[c->head_len - 1] = '\0';
	if (strncmp(c->head, "HTTP/1.", 7) || strncmp(c->head + 8, " 200 ", 5))
		return false;
	bool http10 = c->head[7] == '0';
	c->body_len = -1;
	c->server_closes = http10;
	for (char *l = strstr(c->head, "\r\n"); l; l = strstr(l + 2, "\r\n")) {
		char *f = l + 2;
		if (!strncasecmp(f, "Content-Length:", 15))
			c->body_len = atoll(f + 15);
		else if (!strncasecmp(f, "Connection:", 11))
			c->server_closes = strcasestr(f, "close") ||
					   (http10 && !strcasestr(f, "keep-alive"));
	}
	return c->body_len >= 0;
}

/* Run one client until it would block. */
static void step(struct client *c)
{
	for (;;) {
		if (!c->sent) {
			ssize_t n = send(c->fd, request, request_len, MSG_NOSIGNAL);
			if (n < 0 && errno == EAGAIN)
				return;
			if (n != (ssize_t)request_len) {
				errors++;
				reopen(c);
				continue;
			}
			c->sent = true;
		}
		char buf[65536];
		ssize_t n = recv(c->fd, buf, sizeof(buf), 0);
		if (n < 0 && errno == EAGAIN)
			return;
		if (n <= 0) { /* closed before a complete response */
			errors++;
			reopen(c);
			continue;
		}
		size_t off = 0;
		while (!c->head_len && off < (size_t)n) {
			if (c->have >= sizeof(c->head)) {
				errors++;
				reopen(c);
				goto next;
			}
			c->head[c->have++] = buf[off++];
			if (c->have >= 4 && !memcmp(c->head + c->have - 4, "\r\n\r\n", 4)) {
				c->head_len = c->have;
				c->have = 0;
				if (!parse_head(c)) {
					errors++;
					reopen(c);
					goto next;
				}
			}
		}
		c->have += (size_t)n - off;
		if (c->head_len && (long long)c->have >= c->body_len) {
			if ((long long)c->have > c->body_len) { /* nothing was pipelined */
				errors++;
				reopen(c);
				continue;
			}
			done++;
			if (c->server_closes) {
				reopen(c);
			} else {
				c->sent = false;
				c->have = c->head_len = 0;
			}
		}
next:;
	}
}

int main(int argc, char **argv)
{
	bool close_each = argc == 6 && !strcmp(argv[5], "close");
	if (argc != 5 && !close_each) {
		fprintf(stderr, "usage: httpd-bench PORT PATH CONNECTIONS SECONDS [close]\n");
		return 2;
	}
	int port = atoi(argv[1]), nconn = atoi(argv[3]);
	double seconds = atof(argv[4]);
	if (port <= 0 || port > 65535 || nconn <= 0 || nconn > 10000 || seconds <= 0) {
		fprintf(stderr, "httpd-bench: invalid arguments\n");
		return 2;
	}
	addr.sin_family = AF_INET;
	addr.sin_port = htons((uint16_t)port);
	addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	int len = snprintf(request, sizeof(request),
			   "GET %s HTTP/1.1\r\nHost: 127.0.0.1\r\nUser-Agent: httpd-bench\r\n%s\r\n",
			   argv[2], close_each ? "Connection: close\r\n" : "");
	if (len < 0 || (size_t)len >= sizeof(request))
		return 2;
	request_len = (size_t)len;
	epfd = epoll_create1(EPOLL_CLOEXEC);
	struct client *cl = calloc((size_t)nconn, sizeof(*cl));
	if (epfd < 0 || !cl)
		return 1;
	for (int i = 0; i < nconn; i++)
		if (!open_conn(&cl[i])) {
			perror("httpd-bench: connect");
			return 1;
		}
	double start = now(), end = start + seconds;
	struct epoll_event evs[256];
	double t;
	while ((t = now()) < end) {
		int n = epoll_wait(epfd, evs, 256, (int)((end - t) * 1000) + 1);
		for (int i = 0; i < n; i++)
			step(evs[i].data.ptr);
	}
	double elapsed = now() - start;
	printf("%.0f %llu %llu %llu\n", (double)done / elapsed, done, errors, connects);
	for (int i = 0; i < nconn; i++)
		close(cl[i].fd);
	free(cl);
	close(epfd);
	return 0;
}
