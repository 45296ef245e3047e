/* SPDX-License-Identifier: MIT */
/*
 * Cookbook: an O_PATH root handed over a UNIX socket.
 *
 *   fdpass ROOT PATH
 *
 * A privileged broker opens the directory a worker may use and sends the
 * descriptor over a UNIX socket (SCM_RIGHTS); the worker, which cannot name
 * ROOT itself (think: another user, a chroot, a sandbox without the path in
 * its mount namespace), resolves untrusted paths beneath the descriptor it
 * received. Here both are one program: the parent is the broker, the child
 * the worker, and PATH is what the worker was asked to read.
 *
 * An O_PATH descriptor is the right thing to hand over: it grants no read
 * or write access to the directory by itself, only a place to resolve
 * from; what the worker can open is still decided by the permissions of
 * the objects beneath it. The worker checks that it got a directory.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <safeopen.h>

static int send_fd(int sock, int fd)
{
	char byte = 'R';
	struct iovec iov = { .iov_base = &byte, .iov_len = 1 };
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u;
	memset(&u, 0, sizeof(u));
	struct msghdr msg = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = u.buf, .msg_controllen = sizeof(u.buf),
	};
	struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &fd, sizeof(int));
	return sendmsg(sock, &msg, 0) == 1 ? 0 : -1;
}

/* Receive one descriptor; MSG_CMSG_CLOEXEC so that it is never inherited
 * by a program this process runs. Anything unexpected is an error. */
static int recv_fd(int sock)
{
	char byte;
	struct iovec iov = { .iov_base = &byte, .iov_len = 1 };
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u;
	struct msghdr msg = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = u.buf, .msg_controllen = sizeof(u.buf),
	};
	if (recvmsg(sock, &msg, MSG_CMSG_CLOEXEC) != 1)
		return -1;
	struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
	if (!c || c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS ||
	    c->cmsg_len != CMSG_LEN(sizeof(int)) || (msg.msg_flags & MSG_CTRUNC)) {
		errno = EBADMSG;
		return -1;
	}
	int fd;
	memcpy(&fd, CMSG_DATA(c), sizeof(int));
	return fd;
}

static int worker(int sock, const char *path)
{
	int root = recv_fd(sock);
	if (root < 0) {
		perror("worker: recv");
		return 1;
	}
	struct stat st;
	if (fstat(root, &st) < 0 || !S_ISDIR(st.st_mode)) {
		fprintf(stderr, "worker: the descriptor is not a directory\n");
		close(root);
		return 1;
	}
	int fd = safe_openat_beneath(root, path, O_RDONLY, 0);
	close(root);
	if (fd < 0) {
		printf("worker: %s: %s\n", path, strerror(errno));
		return 1;
	}
	char buf[4096];
	ssize_t n;
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		fwrite(buf, 1, (size_t)n, stdout);
	close(fd);
	return n < 0;
}

int main(int argc, char *argv[])
{
	if (argc != 3) {
		fprintf(stderr, "usage: %s ROOT PATH\n", argv[0]);
		return 2;
	}
	int sv[2];
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0) {
		perror("socketpair");
		return 2;
	}
	fflush(stdout);
	pid_t pid = fork();
	if (pid < 0) {
		perror("fork");
		return 2;
	}
	if (pid == 0) {
		close(sv[0]);
		int rc = worker(sv[1], argv[2]);
		fflush(stdout); /* _exit() does not flush stdio */
		_exit(rc);
	}
	close(sv[1]);
	/* The broker: O_PATH grants nothing but a place to resolve from. */
	int root = open(argv[1], O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (root < 0 || send_fd(sv[0], root) < 0)
		perror("broker");
	if (root >= 0)
		close(root);
	close(sv[0]);
	int status;
	if (waitpid(pid, &status, 0) < 0)
		return 2;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 2;
}
