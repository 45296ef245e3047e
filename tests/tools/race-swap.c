/* SPDX-License-Identifier: MIT */
/*
 * race-swap: the attacker of tests/tools/test-httpd.sh. Atomically exchanges two
 * names in a directory (typically a real directory and a symlink pointing
 * outside the served root) with renameat2(RENAME_EXCHANGE), as fast as it
 * can, until SECONDS have passed or it receives SIGTERM. Prints the number of
 * swaps. The names are back in their original places when it exits.
 *
 *     race-swap DIR NAME1 NAME2 SECONDS
 */
#define _GNU_SOURCE /* RENAME_EXCHANGE */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/* renameat2(RENAME_EXCHANGE) through syscall(): not every C library has the
 * wrapper (musl 1.2.3 has none). */
#ifndef RENAME_EXCHANGE
#define RENAME_EXCHANGE (1 << 1)
#endif
static int exchange_names(int dfd, const char *a, const char *b)
{
	return (int)syscall(SYS_renameat2, dfd, a, dfd, b, RENAME_EXCHANGE);
}

static volatile sig_atomic_t stop;

static void on_term(int sig)
{
	(void)sig;
	stop = 1;
}

int main(int argc, char **argv)
{
	if (argc != 5) {
		fprintf(stderr, "usage: race-swap DIR NAME1 NAME2 SECONDS\n");
		return 2;
	}
	int dfd = open(argv[1], O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0) {
		fprintf(stderr, "race-swap: %s: %s\n", argv[1], strerror(errno));
		return 1;
	}
	struct sigaction sa = { .sa_handler = on_term };
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	time_t end = time(NULL) + strtol(argv[4], NULL, 10);
	unsigned long swaps = 0;
	while (!stop && time(NULL) < end) {
		if (exchange_names(dfd, argv[2], argv[3]) < 0) {
			fprintf(stderr, "race-swap: %s <-> %s: %s\n", argv[2], argv[3],
				strerror(errno));
			return 1;
		}
		swaps++;
	}
	/* an odd number of swaps leaves them exchanged: put them back */
	if (swaps % 2 && exchange_names(dfd, argv[2], argv[3]) == 0)
		swaps++;
	printf("%lu\n", swaps);
	close(dfd);
	return 0;
}
