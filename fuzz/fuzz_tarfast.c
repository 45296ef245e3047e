/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: the built-in tar reader of `safeopen extract`
 * (tools/safeopen/tarfast.c) against libarchive on the same bytes. Every entry the
 * built-in reader returns before it hands over (TF_FALLBACK) must be the
 * entry libarchive returns at that place, reading the stream from its start
 * (every format and filter bidding, as extract's libarchive-only reading
 * does): name, mode and type, owner, size, times, link bodies and data; its
 * end of archive must be libarchive's, and a stream it finds damaged must be
 * damaged for libarchive at the same entry. And tarbid_plain_tar() (the
 * native answer to "is this plain tar to libarchive?") may say yes only where
 * libarchive's own bidding chooses tar without a filter and reads the first
 * header. A mismatch prints the entry and
 * aborts (libFuzzer keeps the input; rerun it with ./fuzz/fuzz_tarfast FILE).
 * The input is the archive itself; when its length is a multiple of 512,
 * every block's checksum is first set right (a mutated header would
 * otherwise almost never get past it), other lengths keep the bytes as they
 * are.
 */
#include "config.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <archive_entry.h>

#include "../tools/safeopen/tarbid.h"
#include "../tools/safeopen/tarfast.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_ENTRIES 4096

/* An entry's data as one digest: the bytes in order (FNV-1a), with a check
 * that the offsets follow each other (no sparse files in the subset). */
struct digest {
	uint64_t h, len;
	bool gap;
};

static void digest_add(struct digest *d, const void *buf, size_t len, int64_t off)
{
	if (off != (int64_t)d->len)
		d->gap = true;
	const unsigned char *p = buf;
	for (size_t i = 0; i < len; i++)
		d->h = (d->h ^ p[i]) * 0x100000001b3ULL;
	d->len += len;
}

static void fail(size_t i, const char *what, const char *a, const char *b)
{
	fprintf(stderr, "fuzz_tarfast: entry %zu: %s differs: built-in [%s], libarchive [%s]\n", i,
		what, a ? a : "(null)", b ? b : "(null)");
	abort();
}

static void same_str(size_t i, const char *what, const char *a, const char *b)
{
	if ((a == NULL) != (b == NULL) || (a && strcmp(a, b)))
		fail(i, what, a, b);
}

static void same_num(size_t i, const char *what, long long a, long long b)
{
	if (a != b) {
		char x[32], y[32];
		snprintf(x, sizeof(x), "%lld", a);
		snprintf(y, sizeof(y), "%lld", b);
		fail(i, what, x, y);
	}
}

/* Write the unsigned checksum of each nonzero block into its field. */
static void fix_checksums(unsigned char *p, size_t size)
{
	for (size_t at = 0; at + 512 <= size; at += 512) {
		unsigned char *h = p + at;
		unsigned sum = 0;
		memset(h + 148, ' ', 8);
		for (size_t i = 0; i < 512; i++)
			sum += h[i];
		if (sum == 8 * ' ')
			continue;
		char f[9];
		snprintf(f, sizeof(f), "%06o", sum & 0777777);
		memcpy(h + 148, f, 7); /* six digits, a NUL, the space stays */
	}
}

/* tarbid_plain_tar() is sound: its yes is libarchive's. */
static void check_bid(const unsigned char *data, size_t size)
{
	size_t n = size < 65536 ? size : 65536;
	if (tarbid_plain_tar(data, n, n == size) && !tarfast_libarchive_says_tar(data, n)) {
		fprintf(stderr, "fuzz_tarfast: tarbid_plain_tar() said plain tar, libarchive did not\n");
		abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *input, size_t size)
{
	unsigned char *data = malloc(size ? size : 1);
	if (!data)
		abort();
	memcpy(data, input, size);
	if (size % 512 == 0)
		fix_checksums(data, size);
	check_bid(data, size);
	int fd = memfd_create("tarfast", MFD_CLOEXEC);
	if (fd < 0 || (size && write(fd, data, size) != (ssize_t)size) || lseek(fd, 0, SEEK_SET) < 0)
		abort();
	struct tarfast *t = tarfast_new(fd);
	struct xentry mine;
	struct archive *a = archive_read_new();
	if (!t || !a)
		abort();
	archive_read_support_filter_all(a);
	archive_read_support_format_all(a);
	bool opened = archive_read_open_memory(a, data, size) == ARCHIVE_OK;

	for (size_t i = 0; i < MAX_ENTRIES; i++) {
		enum tarfast_ret r = tarfast_next(t, &mine);
		if (r == TF_FALLBACK)
			break;
		if (!opened)
			fail(i, "opening", "read", archive_error_string(a));
		struct archive_entry *theirs;
		int lr = archive_read_next_header(a, &theirs);
		if (r == TF_EOF) {
			if (lr != ARCHIVE_EOF)
				fail(i, "end of archive", "end", archive_error_string(a));
			break;
		}
		if (r == TF_FATAL) {
			if (lr != ARCHIVE_FATAL)
				fail(i, "damage", tarfast_error(t), "read on");
			break;
		}
		if (lr != ARCHIVE_OK)
			fail(i, "header", mine.path, archive_error_string(a));
		same_str(i, "name", mine.path, archive_entry_pathname(theirs));
		same_str(i, "hard link", mine.hardlink, archive_entry_hardlink(theirs));
		same_str(i, "symlink", mine.symlink, archive_entry_symlink(theirs));
		same_num(i, "mode", mine.type | mine.perm, archive_entry_mode(theirs));
		same_num(i, "type", mine.type, archive_entry_filetype(theirs));
		same_num(i, "uid", mine.uid, archive_entry_uid(theirs));
		same_num(i, "gid", mine.gid, archive_entry_gid(theirs));
		same_num(i, "size", mine.size, archive_entry_size(theirs));
		same_num(i, "size set", mine.size_set, !!archive_entry_size_is_set(theirs));
		same_num(i, "mtime set", mine.mtime_set, !!archive_entry_mtime_is_set(theirs));
		same_num(i, "mtime", mine.mtime.tv_sec, archive_entry_mtime(theirs));
		same_num(i, "mtime ns", mine.mtime.tv_nsec, archive_entry_mtime_nsec(theirs));
		same_num(i, "atime set", mine.atime_set, !!archive_entry_atime_is_set(theirs));
		if (mine.atime_set) {
			same_num(i, "atime", mine.atime.tv_sec, archive_entry_atime(theirs));
			same_num(i, "atime ns", mine.atime.tv_nsec, archive_entry_atime_nsec(theirs));
		}
		same_num(i, "nlink", mine.nlink, archive_entry_nlink(theirs));
		same_num(i, "rdev", (long long)mine.rdev, (long long)archive_entry_rdev(theirs));
		same_num(i, "xattrs", 0, archive_entry_xattr_count(theirs));

		/* the data, both ways to its end or to the damage */
		struct digest dm = { 0xcbf29ce484222325ULL, 0, false }, dt = dm;
		const void *buf;
		size_t len;
		int64_t off;
		la_int64_t loff;
		while ((r = tarfast_data(t, &buf, &len, &off)) == TF_OK)
			digest_add(&dm, buf, len, off);
		while ((lr = archive_read_data_block(a, &buf, &len, &loff)) == ARCHIVE_OK)
			digest_add(&dt, buf, len, loff);
		same_num(i, "data length", (long long)dm.len, (long long)dt.len);
		same_num(i, "data", (long long)(dm.h >> 1), (long long)(dt.h >> 1));
		same_num(i, "data offsets", dm.gap, dt.gap);
		if (lr != ARCHIVE_EOF && lr != ARCHIVE_FATAL)
			fail(i, "data reading", "end or damage", archive_error_string(a));
		if ((r == TF_FATAL) != (lr == ARCHIVE_FATAL))
			fail(i, "end of data", r == TF_FATAL ? tarfast_error(t) : "whole",
			     lr == ARCHIVE_FATAL ? archive_error_string(a) : "whole");
		if (r == TF_FATAL)
			break;
	}
	archive_read_free(a);
	tarfast_free(t);
	close(fd);
	free(data);
	return 0;
}
