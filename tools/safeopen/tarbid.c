/* SPDX-License-Identifier: MIT */
/*
 * Is this stream a plain tar archive to libarchive 3.6.2? Answered without
 * libarchive, so that `safeopen extract` loads it only when it is needed.
 *
 * How libarchive decides, for a reader with every filter and format enabled
 * (facts established from the 3.6.2 source; the rules below rely on them):
 *
 *  - Filters come first. Every filter bidder looks at the raw stream; if any
 *    bids above 0, the highest is stacked (whether or not it can decode) and
 *    the bidding repeats on its output. Only when all bid 0 is the stream
 *    read as is. So for "no filter", every filter must bid 0.
 *  - Then each format bids once, in registration order (ar, cpio, empty,
 *    lha, mtree, tar, xar, warc, 7zip, cab, rar, rar5, iso9660, zip
 *    streamable, zip seekable); a later bid replaces the best only if it is
 *    strictly higher, so tar must beat the formats before it and at least
 *    tie the ones after it. Each bidder is told the best bid so far, and
 *    several give up (bid -1) when it is already above their maximum.
 *  - The tar bid on a header block: 10 for a block of zeros (whose read then
 *    reports the end of the archive, not an entry); else 0 unless the
 *    checksum matches (+48), the type flag is NUL, a digit or a letter (+2),
 *    and mode, uid, gid, mtime, size, devmajor and devminor each hold
 *    either a base-256 / empty marker (first byte 0x80, 0xff or 0) or
 *    blanks, octal digits, then only blanks and NULs; +56 for the magic
 *    "ustar\0" "00" (POSIX) or "ustar " " \0" (GNU). So: 106 for ustar and
 *    GNU headers, 50 for any other (v7) header.
 *
 * What this function accepts is a subset: a first header that the tar bid
 * scores at least 50, that no filter and no format can outbid (checked with
 * a necessary condition per bidder, below), and whose reading cannot fail
 * (plain octal size, a simple type flag, no GNU sparse map). All the checks
 * look at the first 512 bytes only, except one (a v7 header starting "MZ",
 * for cab).
 */
#include "config.h"

#include <stdint.h>
#include <string.h>

#include "tarbid.h"
#include "tarhdr.h"

#define BLOCK TAR_BLOCK

static bool starts(const unsigned char *h, const char *magic, size_t n)
{
	return memcmp(h, magic, n) == 0;
}

static uint32_t le32(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* The tar bid's test of a numeric field (see above). */
static bool number_field_ok(const unsigned char *p, size_t n)
{
	if (p[0] == 0 || p[0] == 0x80 || p[0] == 0xff)
		return true;
	size_t i = 0;
	while (i < n && p[i] == ' ')
		i++;
	while (i < n && p[i] >= '0' && p[i] <= '7')
		i++;
	for (; i < n; i++)
		if (p[i] != ' ' && p[i] != 0)
			return false;
	return true;
}

/* A filter bids above 0 only if the stream starts with its magic (or, for
 * lzma and uu, the patterns noted); each test here is such a necessary
 * condition, so "false" means every filter bids 0. */
static bool maybe_filtered(const unsigned char *h)
{
	/* bzip2: "BZh" and a digit 1-9 (then a block or end marker, not
	 * checked here). */
	if (starts(h, "BZh", 3) && h[3] >= '1' && h[3] <= '9')
		return true;
	/* compress (.Z): 1f 9d, then a byte with bits 0x20 and 0x40 clear.
	 * gzip: 1f 8b 08 (its further flag checks are not relied on). */
	if (h[0] == 0x1f && ((h[1] == 0x9d && !(h[2] & 0x60)) || (h[1] == 0x8b && h[2] == 0x08)))
		return true;
	/* lzip: "LZIP", version 0 or 1, then a byte whose low 5 bits (log2 of
	 * the dictionary size) are 12..29. */
	if (starts(h, "LZIP", 4) && h[4] <= 1 && (h[5] & 0x1f) >= 12 && (h[5] & 0x1f) <= 29)
		return true;
	/* lrzip: "LRZI", major version 0, minor version 6..10. */
	if (starts(h, "LRZI", 4) && h[4] == 0 && h[5] >= 6 && h[5] <= 10)
		return true;
	/* xz: fd "7zXZ" 00. */
	if (starts(h, "\xfd" "7zXZ\0", 6))
		return true;
	/* rpm lead: ed ab ee db, major version 3 or 4, then a 16-bit type
	 * 0 or 1 (big-endian). */
	if (starts(h, "\xed\xab\xee\xdb", 4) && (h[4] == 3 || h[4] == 4) && h[6] == 0 && h[7] <= 1)
		return true;
	/* lzop: the 9 bytes 89 "LZO" 00 0d 0a 1a 0a. */
	if (starts(h, "\x89LZO\0\r\n\x1a\n", 9))
		return true;
	/* grzip: the 12 bytes "GRZipII" 00 02 04 ":)". */
	if (starts(h, "GRZipII\0\x02\x04:)", 12))
		return true;
	/* lz4: little-endian 0x184d2204 (frame) or 0x184c2102 (legacy). */
	uint32_t w = le32(h);
	if (w == 0x184d2204u || w == 0x184c2102u)
		return true;
	/* zstd: little-endian 0xfd2fb528, or a skippable frame 0x184d2a5?. */
	if (w == 0xfd2fb528u || (w & 0xfffffff0u) == 0x184d2a50u)
		return true;
	/* lzma (raw .lzma, no magic): first byte at most 224 and the
	 * little-endian dictionary size in bytes 1..4 either a power of two
	 * from 4 KiB to 128 MiB, or a multiple of 1 MiB from 3 MiB to 63 MiB
	 * (the latter only with more conditions, ignored here). */
	uint32_t dict = le32(h + 1);
	if (h[0] <= 224 && ((dict >= 0x1000u && dict <= 0x8000000u && (dict & (dict - 1)) == 0) ||
	                    (dict >= 0x300000u && dict <= 0x3f00000u && (dict & 0xfffffu) == 0)))
		return true;
	/* uu: it reads the stream line by line (a line ends at LF or CR) and
	 * gives up, bidding 0, at the first byte that is neither printable
	 * ASCII (0x20..0x7e) nor CR/LF, unless an earlier complete line began
	 * "begin " or "begin-base64 ". So with no CR or LF before that first
	 * byte, it bids 0. No such byte in the block: not ruled out. */
	for (size_t i = 0; i < BLOCK; i++) {
		if (h[i] == '\n' || h[i] == '\r')
			return true;
		if (h[i] < 0x20 || h[i] > 0x7e)
			return false;
	}
	return true;
}

/* Could a format other than tar bid above `tar` (50 or 106)? tar's slot
 * comes after ar, cpio, empty, lha and mtree, which must bid lower, and
 * before the others, which must not bid higher. */
static bool maybe_other_format(const unsigned char *h, int tar, bool no_mscf)
{
	/* ar: "!<arch>\n" at 0, bid 64. */
	if (starts(h, "!<arch>\n", 8))
		return true;
	/* cpio: "070707", "070727", "070701", "070702" (48) or a binary
	 * magic (16): never above 48 < 50. */
	/* empty: bids only on a stream with no data. */
	/* lha: at most 30 (also for "MZ" self-extractors). */
	/* mtree: "#mtree" at 0 scores 48; its text heuristic 32. */
	/* xar: "xar!" at 0, then big-endian header size 28 and version 1, and
	 * a checksum type 0..2 at 24; up to 96. */
	if (starts(h, "xar!\0\x1c\0\x01", 8) && h[24] == 0 && h[25] == 0 && h[26] == 0 && h[27] <= 2)
		return true;
	/* warc: "WARC/" at 0 and a version, 64. */
	if (starts(h, "WARC/", 5))
		return true;
	/* 7zip: gives up when the best bid so far is above 32 (else at most
	 * 48, also for "MZ" / ELF self-extractors). */
	/* cab: gives up above 64; else 64 for "MSCF\0\0\0\0" at 0, or for an
	 * "MZ" start with "MSCF\0\0\0\0" somewhere in its first 132 KiB, else
	 * 0. no_mscf: the whole stream is known and has no "MSCF". */
	if (tar <= 64 && (starts(h, "MSCF\0\0\0\0", 8) || (starts(h, "MZ", 2) && !no_mscf)))
		return true;
	/* rar, rar5: give up above 30 (at most 30). iso9660 ("CD001" at
	 * 32769): gives up above 48. zip streamable: "PK" and a record type,
	 * 29 at most. zip seekable: gives up above 32. */
	return false;
}

int tarbid_plain_tar(const unsigned char *buf, size_t len, bool eof)
{
	/* The tar bid and header read need one whole block (shorter: -1 and a
	 * truncation error). */
	if (!buf || len < BLOCK)
		return 0;
	const unsigned char *h = buf;

	/* A first block of zeros scores 10 but reads as the end of the
	 * archive: no entry. */
	uint32_t sum = tar_block_sum(h);
	if (sum == 0)
		return 0;

	/* Checksum: the field holds only blanks, NULs and octal digits; its
	 * value is the unsigned byte sum of the block with the field counted
	 * as 8 blanks (libarchive also accepts a signed sum; not here). */
	if (!tar_checksum_ok(h, sum))
		return 0;

	/* Type flag: regular files, links, devices, directories, FIFOs. The
	 * others read further blocks (pax 'x'/'g', GNU 'L'/'K', ...) or carry
	 * GNU specials: left to libarchive. */
	unsigned char type = h[H_TYPE];
	if (type != 0 && (type < '0' || type > '7'))
		return 0;

	/* The numeric fields as the tar bid checks them; size as plain octal
	 * (a base-256 size can be negative or overflow, a read error). */
	static const struct { unsigned short off, len; } fields[] = {
		{H_MODE, 8}, {H_UID, 8}, {H_GID, 8}, {H_MTIME, 12}, {H_SIZE, 12},
		{H_DEVMAJOR, 8}, {H_DEVMINOR, 8},
	};
	for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++)
		if (!number_field_ok(h + fields[i].off, fields[i].len))
			return 0;
	uint64_t size;
	if (!tar_octal(h + H_SIZE, 12, &size))
		return 0;

	enum tar_kind kind = tar_header_kind(h);
	int tar = kind == TAR_USTAR || kind == TAR_GNU ? 106 : 50;
	/* A GNU header with an old-style sparse map (or real size) makes the
	 * reader parse more: left to libarchive. */
	if (kind == TAR_GNU && tar_gnu_sparse(h))
		return 0;

	bool no_mscf = false;
	if (eof && tar <= 64 && starts(h, "MZ", 2)) {
		no_mscf = true;
		for (size_t i = 0; i + 4 <= len && no_mscf; i++)
			no_mscf = !starts(buf + i, "MSCF", 4);
	}
	if (maybe_filtered(h) || maybe_other_format(h, tar, no_mscf))
		return 0;
	return 1;
}
