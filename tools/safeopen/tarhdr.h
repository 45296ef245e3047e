/* SPDX-License-Identifier: MIT */
/*
 * The tar header block, as tools/safeopen/tarfast.c reads it and tools/safeopen/tarbid.c
 * judges it: the field offsets, the plain octal numbers and the checksum.
 */
#ifndef SAFEOPEN_TARHDR_H
#define SAFEOPEN_TARHDR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define TAR_BLOCK 512

/* Offsets in a header block: POSIX ustar, and GNU's own fields where ustar
 * has its prefix. */
enum {
	H_NAME = 0, H_MODE = 100, H_UID = 108, H_GID = 116, H_SIZE = 124, H_MTIME = 136,
	H_CHKSUM = 148, H_TYPE = 156, H_LINK = 157, H_MAGIC = 257, H_DEVMAJOR = 329,
	H_DEVMINOR = 337, H_PREFIX = 345,
	H_GNU_ATIME = 345, H_GNU_CTIME = 357, H_GNU_SPARSE = 386, H_GNU_REALSIZE = 483,
};

/*
 * A numeric field as plain octal: optional leading blanks, digits, then
 * only NULs and blanks (an empty field is 0). libarchive reads the same
 * value from such a field (it skips blanks and stops at the first byte that
 * is no octal digit); anything else (base-256, a sign, a tab, garbage after
 * the digits) is false here and left to libarchive.
 */
static inline bool tar_octal(const unsigned char *f, size_t n, uint64_t *v)
{
	size_t i = 0;
	uint64_t x = 0;
	while (i < n && f[i] == ' ')
		i++;
	for (; i < n && f[i] >= '0' && f[i] <= '7'; i++)
		x = x << 3 | (uint64_t)(f[i] - '0');
	for (; i < n; i++)
		if (f[i] != '\0' && f[i] != ' ')
			return false;
	*v = x;
	return true;
}

/* The sum of a block's bytes: 0 only for a block of zeros (the end of an
 * archive). One branch-free pass, which the compiler vectorizes. */
static inline uint32_t tar_block_sum(const unsigned char *h)
{
	uint32_t sum = 0;
	for (size_t i = 0; i < TAR_BLOCK; i++)
		sum += h[i];
	return sum;
}

/* Does the checksum field (plain octal) hold the unsigned sum of the block
 * with its own eight bytes counted as blanks? (`sum`: tar_block_sum(h).)
 * libarchive also takes a signed sum: such a block is left to it. */
static inline bool tar_checksum_ok(const unsigned char *h, uint32_t sum)
{
	uint64_t want;
	if (!tar_octal(h + H_CHKSUM, 8, &want))
		return false;
	for (size_t i = H_CHKSUM; i < H_CHKSUM + 8; i++)
		sum -= h[i];
	return sum + 8 * ' ' == want;
}

/* The header's dialect, by its magic and version: POSIX ustar ("ustar\0"
 * "00", a prefix before the name), GNU ("ustar  \0", its own fields where
 * ustar has the prefix), v7 (no magic), or another (libarchive's guesses). */
enum tar_kind { TAR_OTHER, TAR_V7, TAR_USTAR, TAR_GNU };

static inline enum tar_kind tar_header_kind(const unsigned char *h)
{
	static const unsigned char none[8];
	if (!memcmp(h + H_MAGIC, "ustar\0" "00", 8))
		return TAR_USTAR;
	if (!memcmp(h + H_MAGIC, "ustar  \0", 8))
		return TAR_GNU;
	if (!memcmp(h + H_MAGIC, none, 8))
		return TAR_V7;
	return TAR_OTHER;
}

/* A GNU header with an old-style sparse map or a real size: libarchive
 * parses more for it (the real size becomes any entry's size), which
 * neither tarfast.c nor tarbid.c reproduces. */
static inline bool tar_gnu_sparse(const unsigned char *h)
{
	return h[H_GNU_SPARSE] != 0 || h[H_GNU_REALSIZE] != 0;
}

#endif
