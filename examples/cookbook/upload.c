/* SPDX-License-Identifier: MIT */
/*
 * Cookbook: an upload handler.
 *
 *   upload ROOT PATH < DATA
 *
 * Stores standard input as ROOT/PATH: missing parent directories are
 * created (beneath ROOT only), the file is written completely before its
 * name appears, replaces an older version atomically, is durable when the
 * call returns, and carries its SHA-256 in the xattr user.sha256 from the
 * first instant. Filesystems without user xattrs (tmpfs before Linux 6.6,
 * some network filesystems) are handled honestly: the file is stored
 * without the xattr, and the program says so (exit status 3).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <safeopen.h>

/* ---- a compact SHA-256 (FIPS 180-4) ---- */
struct sha256 {
	uint32_t h[8];
	uint64_t len;
	unsigned char buf[64];
	size_t n;
};

static const uint32_t K[64] = {
	0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4,
	0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe,
	0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f,
	0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7,
	0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc,
	0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b,
	0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116,
	0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
	0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7,
	0xc67178f2,
};

static uint32_t ror(uint32_t x, int n)
{
	return (x >> n) | (x << (32 - n));
}

static void sha256_block(struct sha256 *s, const unsigned char *p)
{
	uint32_t w[64], v[8];
	for (int i = 0; i < 16; i++)
		w[i] = (uint32_t)p[4 * i] << 24 | (uint32_t)p[4 * i + 1] << 16 |
		       (uint32_t)p[4 * i + 2] << 8 | p[4 * i + 3];
	for (int i = 16; i < 64; i++) {
		uint32_t s0 = ror(w[i - 15], 7) ^ ror(w[i - 15], 18) ^ (w[i - 15] >> 3);
		uint32_t s1 = ror(w[i - 2], 17) ^ ror(w[i - 2], 19) ^ (w[i - 2] >> 10);
		w[i] = w[i - 16] + s0 + w[i - 7] + s1;
	}
	memcpy(v, s->h, sizeof(v));
	for (int i = 0; i < 64; i++) {
		uint32_t t1 = v[7] + (ror(v[4], 6) ^ ror(v[4], 11) ^ ror(v[4], 25)) +
			      ((v[4] & v[5]) ^ (~v[4] & v[6])) + K[i] + w[i];
		uint32_t t2 = (ror(v[0], 2) ^ ror(v[0], 13) ^ ror(v[0], 22)) +
			      ((v[0] & v[1]) ^ (v[0] & v[2]) ^ (v[1] & v[2]));
		memmove(v + 1, v, 7 * sizeof(v[0]));
		v[4] += t1;
		v[0] = t1 + t2;
	}
	for (int i = 0; i < 8; i++)
		s->h[i] += v[i];
}

static void sha256_init(struct sha256 *s)
{
	static const uint32_t h0[8] = { 0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
					0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19 };
	memcpy(s->h, h0, sizeof(h0));
	s->len = 0;
	s->n = 0;
}

static void sha256_update(struct sha256 *s, const unsigned char *p, size_t len)
{
	s->len += len;
	while (len > 0) {
		size_t k = 64 - s->n < len ? 64 - s->n : len;
		memcpy(s->buf + s->n, p, k);
		s->n += k;
		p += k;
		len -= k;
		if (s->n == 64) {
			sha256_block(s, s->buf);
			s->n = 0;
		}
	}
}

static void sha256_hex(struct sha256 *s, char out[65])
{
	uint64_t bits = s->len * 8;
	unsigned char pad[72] = { 0x80 };
	size_t padlen = (s->n < 56 ? 56 : 120) - s->n;
	for (int i = 0; i < 8; i++)
		pad[padlen + (size_t)i] = (unsigned char)(bits >> (56 - 8 * i));
	sha256_update(s, pad, padlen + 8);
	for (int i = 0; i < 8; i++)
		(void)snprintf(out + 8 * i, 9, "%08x", s->h[i]);
}

/* ---- the handler ---- */

int main(int argc, char *argv[])
{
	if (argc != 3) {
		fprintf(stderr, "usage: %s ROOT PATH < DATA\n", argv[0]);
		return 2;
	}
	int root = open(argv[1], O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (root < 0) {
		perror(argv[1]);
		return 2;
	}
	/* 1. An unpublished file for PATH beneath ROOT, its missing directories
	 *    created first (mkdir -p, beneath ROOT): if the file is not
	 *    published, they are removed again with it. */
	struct safe_tmpfile *tmp;
	if (safe_tmpfile_open(root, argv[2], 0644, SAFE_TMPFILE_PARENTS, &tmp) < 0) {
		fprintf(stderr, "%s: %s\n", argv[2], strerror(errno));
		close(root);
		return 1;
	}
	close(root);

	/* 2. Write the content and hash it on the way. */
	int fd = safe_tmpfile_fd(tmp); /* lent: never close it */
	struct sha256 h;
	sha256_init(&h);
	unsigned char buf[65536];
	ssize_t n;
	while ((n = read(STDIN_FILENO, buf, sizeof(buf))) > 0) {
		sha256_update(&h, buf, (size_t)n);
		if (write(fd, buf, (size_t)n) != n) {
			n = -1;
			break;
		}
	}
	if (n < 0) {
		perror("upload");
		safe_tmpfile_discard(tmp); /* nothing appears, nothing is left:
					    * not the file, not its new directories */
		return 1;
	}
	char hex[65];
	sha256_hex(&h, hex);

	/* 3. Publish with the checksum, replacing an older version atomically. */
	struct safe_xattr x = { "user.sha256", hex, 64 };
	const uint64_t pub = SAFE_TMPFILE_REPLACE | SAFE_TMPFILE_SYNC;
	int rc = 0;
	fd = safe_tmpfile_link(tmp, &x, 1, pub);
	if (fd < 0 && (errno == EOPNOTSUPP || errno == ENOTSUP)) {
		/* No user xattrs on this filesystem: store the file without
		 * the checksum and say so, rather than fail the upload or
		 * pretend the checksum is there. */
		fprintf(stderr, "%s: stored WITHOUT user.sha256: %s\n", argv[2], strerror(errno));
		rc = 3;
		fd = safe_tmpfile_link(tmp, NULL, 0, pub);
	}
	if (fd < 0) {
		fprintf(stderr, "%s: %s\n", argv[2], strerror(errno));
		safe_tmpfile_discard(tmp); /* a failed link leaves the handle ours */
		return 1;
	}
	close(fd); /* published: the descriptor is now ours */
	printf("%s  %s\n", hex, argv[2]);
	return rc;
}
