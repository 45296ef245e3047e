/* SPDX-License-Identifier: MIT */
/*
 * The built-in reader of plain tar streams for `safeopen extract`.
 *
 * Why: on an archive of many small files, libarchive's per-header work (its
 * generic entry handling, a wide-character copy of every file name, several
 * allocations) costs about as much CPU time as creating the files, and made
 * extraction slower than GNU tar. The headers that real archives consist of
 * (GNU tar's formats, ustar, v7, pax as GNU tar, bsdtar and git write it)
 * need only a few fields, read here straight from the stream buffer.
 *
 * What it reads, exactly as libarchive 3.6's tar reader does (compared entry
 * by entry with libarchive in tests/tools/test-extract-reader.sh and
 * fuzz/fuzz_tarfast.c): ustar ("ustar\0" "00", name joined to prefix), GNU
 * ("ustar  \0", with its atime field) and v7 (zero magic) headers whose
 * checksum is the unsigned sum and whose numbers are plain octal; regular
 * files ('0', '\0', '7'; a name ending in '/' with no data is a directory),
 * directories, symbolic links and hard links (with data only in a pax
 * archive, where libarchive reads it as data); before the header, a GNU long
 * name ('L') and long link ('K'), or pax global headers ('g', which
 * libarchive 3.6 ignores) and one pax extended header ('x') with the records
 * pax_parse() takes. Anything else (other pax keys such as xattrs, sparse
 * files, devices, base-256 numbers, a bad checksum, a truncated header, ...)
 * is not guessed at: the header group that starts with it, and the rest of
 * the stream, go to libarchive (TF_FALLBACK, tarfast_open_rest()), which
 * then reads as if it had read from the start. The bytes of a header group
 * stay in the buffer until the group is accepted, so nothing is lost to the
 * hand-over, even from a pipe.
 *
 * What libarchive's tar reader carries from one header to the next is reset
 * by the hand-over. Two such states can matter after headers this reader
 * accepted, both only in streams that no writer makes: the archive's pax
 * mode, when the group handed over is a ustar hard link with data that this
 * reader would have taken but for another field (libarchive then reads the
 * data as headers), and "a regular file was seen", when a pax header with
 * GNU.sparse keys comes before an entry of type '\0' (libarchive then stops:
 * "Non-regular file cannot be sparse", exit status 1). Either way the
 * entries are what libarchive makes of the rest of the stream read on its
 * own, and everything is still created beneath DEST.
 *
 * The reader only parses: every name it returns is an archive's name, which
 * extract.c resolves beneath DEST through libsafeopen like any other.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "la.h"
#include "tarbid.h"
#include "tarfast.h"
#include "tarhdr.h"

#define BLOCK TAR_BLOCK
#define CHUNK (128 * 1024)   /* one read(2) */
#define LONG_MAX_BODY 65536 /* a longer 'L' / 'K' body goes to libarchive */
#define BID_BYTES (64 * 1024) /* libarchive's bidders look at most this far (iso9660: 48 KiB) */

struct tarfast {
	int fd;
	unsigned char *buf;
	size_t cap, off, len; /* buf[off..len) is read, not consumed */
	bool eof;             /* read(2) said end of file */
	int err;              /* read(2) failed with this */
	bool started;         /* something was consumed */
	bool bid;             /* libarchive's bidding was asked (plain_tar()) */
	bool pax_mode;        /* libarchive's sticky "pax archive" (tarfast_next()) */
	uint64_t remaining;   /* data of the current entry not handed out */
	uint64_t padding;     /* then the rest of its last block */
	int64_t data_off;
	const char *msg;
	char msgbuf[96];
	char *name, *link;    /* the entry's names, NUL-terminated (LONG_MAX_BODY + 1) */
};

struct tarfast *tarfast_new(int fd)
{
	struct tarfast *t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	t->fd = fd;
	t->cap = CHUNK;
	t->buf = malloc(t->cap);
	t->name = malloc(LONG_MAX_BODY + 1);
	t->link = malloc(LONG_MAX_BODY + 1);
	if (!t->buf || !t->name || !t->link) {
		tarfast_free(t);
		return NULL;
	}
	return t;
}

void tarfast_free(struct tarfast *t)
{
	if (t) {
		free(t->buf);
		free(t->name);
		free(t->link);
		free(t);
	}
}

const char *tarfast_error(const struct tarfast *t)
{
	return t->msg ? t->msg : "unknown error";
}

int tarfast_at_start(const struct tarfast *t)
{
	return !t->started;
}

/* At least `need` unconsumed bytes in the buffer (reading as needed; the
 * unconsumed bytes move to its start). false: the stream ended or failed
 * first (t->err). */
static bool fill(struct tarfast *t, size_t need)
{
	if (t->len - t->off >= need)
		return true;
	if (t->cap - t->off < need) {
		memmove(t->buf, t->buf + t->off, t->len - t->off);
		t->len -= t->off;
		t->off = 0;
		if (t->cap < need) {
			size_t cap = need + CHUNK;
			unsigned char *b = realloc(t->buf, cap);
			if (!b) {
				t->err = ENOMEM;
				return false;
			}
			t->buf = b;
			t->cap = cap;
		}
	}
	while (t->len - t->off < need && !t->eof) {
		ssize_t n = read(t->fd, t->buf + t->len, t->cap - t->len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			t->err = errno;
			return false;
		}
		if (n == 0)
			t->eof = true;
		t->len += (size_t)n;
	}
	return t->len - t->off >= need;
}

static enum tarfast_ret damaged(struct tarfast *t)
{
	t->msg = t->err ? strerror(t->err) : "Truncated tar archive";
	return TF_FATAL;
}

/* Consume n bytes (reading as needed); a stream that ends first is damaged,
 * in libarchive's words. */
static bool skip(struct tarfast *t, uint64_t n)
{
	uint64_t want = n;
	while (n) {
		if (t->off == t->len && !fill(t, 1)) {
			if (t->err) {
				t->msg = strerror(t->err);
			} else {
				snprintf(t->msgbuf, sizeof(t->msgbuf),
					 "Truncated input file (needed %ju bytes, only %ju available)",
					 (uintmax_t)want, (uintmax_t)(want - n));
				t->msg = t->msgbuf;
			}
			return false;
		}
		size_t take = t->len - t->off;
		if (take > n)
			take = (size_t)n;
		t->off += take;
		n -= take;
		t->started = true;
	}
	return true;
}

static size_t blocks(uint64_t size)
{
	return (size_t)((size + BLOCK - 1) / BLOCK * BLOCK);
}

/* A GNU long name or link body at buf[at..at+size): up to its first NUL. */
static size_t body_len(const struct tarfast *t, size_t at, uint64_t size)
{
	return strnlen((const char *)t->buf + t->off + at, (size_t)size);
}

/* Copy n bytes of a field (not terminated in the block) into dst as a C
 * string: the entry's names outlive the buffer, which moves as the data is
 * read. */
static const char *copy_str(char *dst, const unsigned char *src, size_t n)
{
	memcpy(dst, src, n);
	dst[n] = '\0';
	return dst;
}

/* The pax attributes this reader applies (pax_parse()). */
struct pax {
	const unsigned char *path, *link; /* non-empty values, else NULL */
	size_t plen, llen;
	bool has_size, has_uid, has_gid, has_mtime, has_atime;
	uint64_t size, uid, gid;
	struct timespec mtime, atime;
};

/* A decimal number of at most 18 digits filling v[0..n): false otherwise. */
static bool pax_decimal(const unsigned char *v, size_t n, uint64_t *out)
{
	if (n == 0 || n > 18)
		return false;
	uint64_t x = 0;
	for (size_t i = 0; i < n; i++) {
		if (v[i] < '0' || v[i] > '9')
			return false;
		x = x * 10 + (uint64_t)(v[i] - '0');
	}
	*out = x;
	return true;
}

/* A pax time: seconds, then optionally '.' and a fraction whose first nine
 * digits are the nanoseconds (libarchive's reading of the same text). */
static bool pax_time(const unsigned char *v, size_t n, struct timespec *ts)
{
	const unsigned char *dot = memchr(v, '.', n);
	size_t ilen = dot ? (size_t)(dot - v) : n;
	uint64_t sec, ns = 0;
	if (!pax_decimal(v, ilen, &sec) || sec > INT64_MAX)
		return false;
	if (dot) {
		size_t flen = n - ilen - 1;
		if (flen == 0)
			return false;
		for (size_t i = 0; i < flen; i++) {
			unsigned char c = dot[1 + i];
			if (c < '0' || c > '9')
				return false;
			if (i < 9)
				ns = ns * 10 + (uint64_t)(c - '0');
		}
		for (size_t i = flen; i < 9; i++)
			ns *= 10;
	}
	*ts = (struct timespec){ (time_t)sec, (long)ns };
	return true;
}

/* A path, link, user or group name as libarchive takes it without a
 * warning in the C locale (safeopen never sets another): ASCII, no NUL. */
static bool pax_ascii(const unsigned char *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (v[i] == 0 || v[i] > 0x7f)
			return false;
	return true;
}

/*
 * The records "LEN KEY=VALUE\n" of a pax extended header body b[0..n), read
 * only where libarchive would read them without a warning and only with
 * the keys whose effect this reader reproduces: path and linkpath (a
 * non-empty value replaces the header's), size, uid, gid, mtime, atime
 * (they replace the header's), ctime (kept by libarchive, restored by
 * nobody), uname, gname (names extract does not use), comment and charset
 * (ignored by libarchive too). Any other key (xattrs, sparse files, device
 * numbers, a header charset, ...), a key twice, or a record out of form:
 * false, and libarchive reads the group.
 */
static bool pax_parse(const unsigned char *b, size_t n, struct pax *px)
{
	static const char *const keys[] = { "path", "linkpath", "size",  "uid",     "gid",
					    "mtime", "atime",   "ctime", "uname",   "gname",
					    "comment", "charset" };
	unsigned int seen = 0;
	*px = (struct pax){ 0 };
	size_t at = 0;
	while (at < n) {
		size_t i = at, len = 0;
		for (; i < n && b[i] >= '0' && b[i] <= '9' && i - at < 6; i++)
			len = len * 10 + (size_t)(b[i] - '0');
		if (i == at || i >= n || b[i] != ' ' || len > n - at || len < i - at + 4 ||
		    b[at + len - 1] != '\n')
			return false;
		const unsigned char *key = b + i + 1, *end = b + at + len - 1;
		const unsigned char *eq = memchr(key, '=', (size_t)(end - key));
		if (!eq || eq == key)
			return false;
		const unsigned char *v = eq + 1;
		size_t klen = (size_t)(eq - key), vlen = (size_t)(end - v);
		size_t which = 0;
		while (which < sizeof(keys) / sizeof(keys[0]) &&
		       (strlen(keys[which]) != klen || memcmp(keys[which], key, klen)))
			which++;
		if (which == sizeof(keys) / sizeof(keys[0]) || (seen & 1U << which))
			return false;
		seen |= 1U << which;
		bool ok = true;
		switch (which) {
		case 0: /* path */
		case 1: /* linkpath */
			ok = pax_ascii(v, vlen);
			if (ok && vlen) {
				*(which ? &px->link : &px->path) = v;
				*(which ? &px->llen : &px->plen) = vlen;
			}
			break;
		case 2: ok = px->has_size = pax_decimal(v, vlen, &px->size); break;
		case 3: ok = px->has_uid = pax_decimal(v, vlen, &px->uid); break;
		case 4: ok = px->has_gid = pax_decimal(v, vlen, &px->gid); break;
		case 5: ok = px->has_mtime = pax_time(v, vlen, &px->mtime); break;
		case 6: ok = px->has_atime = pax_time(v, vlen, &px->atime); break;
		case 7: {
			struct timespec ct;
			ok = pax_time(v, vlen, &ct);
			break;
		}
		case 8: /* uname */
		case 9: /* gname */
			ok = pax_ascii(v, vlen);
			break;
		default: /* comment, charset */
			break;
		}
		if (!ok)
			return false;
		at += len;
	}
	return true;
}

/*
 * Would libarchive read this stream as an uncompressed tar? Its own bidding
 * decides, on the first BID_BYTES (read first, as libarchive's own bidding
 * waits for as much from a pipe; or all of a shorter stream): every format and
 * filter bids, as in the libarchive-only reading, so an archive that starts
 * like something else (a polyglot, a compressed stream without a known
 * decompressor) is libarchive's from its first byte. Where the rules of
 * libarchive's bidders are known (tarbid.c: the version this was built
 * with), a first header that no other bidder can claim is answered here,
 * without loading libarchive; anything less certain asks libarchive
 * (tarfast_libarchive_says_tar()). A format that libarchive finds only
 * further in (a self-extracting executable's search) is not seen here;
 * such a stream still has to start with a tar header that the reader
 * accepts.
 */
bool tarfast_libarchive_says_tar(const unsigned char *buf, size_t len)
{
	const char *why;
	struct archive *a;
	if (la_load(&why) < 0 || !(a = la.archive_read_new()))
		return false; /* libarchive then says why it cannot read */
	bool tar = false;
	la.archive_read_support_filter_all(a);
	la.archive_read_support_format_all(a);
	struct archive_entry *e;
	if (la.archive_read_open_memory(a, buf, len) == ARCHIVE_OK) {
		int r = la.archive_read_next_header(a, &e);
		tar = (r == ARCHIVE_OK || r == ARCHIVE_WARN) && la.archive_filter_count(a) == 1 &&
		      la.archive_filter_code(a, 0) == ARCHIVE_FILTER_NONE &&
		      (la.archive_format(a) & ARCHIVE_FORMAT_BASE_MASK) == ARCHIVE_FORMAT_TAR;
	}
	la.archive_read_free(a);
	return tar;
}

static bool plain_tar(struct tarfast *t)
{
	/* up to BID_BYTES, or the whole stream; a read error is libarchive's
	 * to report when it reads again */
	if (!fill(t, BID_BYTES) && t->err)
		return false;
	size_t n = t->len - t->off < BID_BYTES ? t->len - t->off : BID_BYTES;
#ifdef SAFEOPEN_MUTATE_TARBID
	return true; /* mutation (tests only): every stream is taken for plain tar */
#endif
#ifdef LIBARCHIVE_BID_RULES
	if (tarbid_plain_tar(t->buf + t->off, n, t->eof && n == t->len - t->off))
		return true;
#endif
	return tarfast_libarchive_says_tar(t->buf + t->off, n);
}

enum tarfast_ret tarfast_next(struct tarfast *t, struct xentry *e)
{
	if (!t->bid) {
		t->bid = true;
		if (!plain_tar(t))
			return TF_FALLBACK;
	}
	if (!skip(t, t->remaining + t->padding))
		return TF_FATAL;
	t->remaining = t->padding = 0;

	/* The header group: pax global headers ('g', whose body libarchive 3.6
	 * reads and ignores), then one pax extended header ('x') or at most one
	 * 'L' and one 'K', then the entry's header; nothing is consumed before
	 * the whole group is accepted. */
	size_t k = 0, lname = 0, llink = 0, xbody = 0, nglobal = 0;
	uint64_t lname_size = 0, llink_size = 0, xsize = 0;
	bool pax_mode = t->pax_mode; /* after this group's 'g' and 'x' */
	const unsigned char *h;
	enum tar_kind kind;
	uint64_t size;
	for (;;) {
		if (!fill(t, k + BLOCK))
			return TF_FALLBACK; /* EOF or a short block: libarchive's words */
		h = t->buf + t->off + k;
		uint32_t sum = tar_block_sum(h);
		if (sum == 0) {
			if (k)
				return TF_FALLBACK;
			/* the end: as libarchive, one zero block ends the archive
			 * (and a second one is consumed with it) */
			t->off += BLOCK;
			t->started = true;
			if (fill(t, BLOCK) && tar_block_sum(t->buf + t->off) == 0)
				t->off += BLOCK;
			return TF_EOF;
		}
		kind = tar_header_kind(h);
		if (!tar_checksum_ok(h, sum) || kind == TAR_OTHER || !tar_octal(h + H_SIZE, 12, &size))
			return TF_FALLBACK;
		unsigned char type = h[H_TYPE];
		if (type == 'g' || type == 'x') {
			/* (libarchive warns after 32 nested special headers) */
			if (size > LONG_MAX_BODY || xbody || lname || llink || ++nglobal > 8 ||
			    !fill(t, k + BLOCK + blocks(size)))
				return TF_FALLBACK;
			if (type == 'x') {
				xbody = k + BLOCK;
				xsize = size;
			}
			pax_mode = true;
			k += BLOCK + blocks(size);
			continue;
		}
		if (type != 'L' && type != 'K')
			break;
		if (kind != TAR_GNU || size == 0 || size > LONG_MAX_BODY || xbody ||
		    (type == 'L' ? lname : llink))
			return TF_FALLBACK;
		if (!fill(t, k + BLOCK + blocks(size)))
			return TF_FALLBACK;
		if (type == 'L') {
			lname = k + BLOCK;
			lname_size = size;
		} else {
			llink = k + BLOCK;
			llink_size = size;
		}
		k += BLOCK + blocks(size);
	}
	h = t->buf + t->off + k;

	uint64_t mode, uid, gid, mtime, atime = 0, ctime = 0;
	if (!tar_octal(h + H_MODE, 8, &mode) || !tar_octal(h + H_UID, 8, &uid) ||
	    !tar_octal(h + H_GID, 8, &gid) || !tar_octal(h + H_MTIME, 12, &mtime))
		return TF_FALLBACK;
	/* GNU: times kept where nonzero; an old-style sparse map or a real
	 * size (which libarchive applies to any entry) is libarchive's */
	if (kind == TAR_GNU &&
	    (!tar_octal(h + H_GNU_ATIME, 12, &atime) || !tar_octal(h + H_GNU_CTIME, 12, &ctime) ||
	     tar_gnu_sparse(h)))
		return TF_FALLBACK;

	/* libarchive's sticky format: a pax header makes the archive pax, and
	 * a ustar header keeps that; a GNU or v7 header ends it. It decides
	 * whether a hard link's size is data (pax) or ignored (then the body
	 * would be read as headers: libarchive's). */
	bool pax_entry = pax_mode && kind == TAR_USTAR;
	struct pax px = { 0 };
	if (xbody && !pax_parse(t->buf + t->off + xbody, (size_t)xsize, &px))
		return TF_FALLBACK;

	/* The name: a long name, or the name field (after the prefix in ustar) */
	const unsigned char *name = h + H_NAME, *link = h + H_LINK;
	size_t nlen = strnlen((const char *)name, 100), llen = strnlen((const char *)link, 100);
	size_t plen = 0; /* the prefix, with the '/' libarchive adds */
	if (lname) {
		name = t->buf + t->off + lname;
		nlen = body_len(t, lname, lname_size);
	} else if (kind == TAR_USTAR && h[H_PREFIX]) {
		plen = strnlen((const char *)h + H_PREFIX, 155);
		memcpy(t->name, h + H_PREFIX, plen);
		if (t->name[plen - 1] != '/')
			t->name[plen++] = '/';
	}
	if (llink) {
		link = t->buf + t->off + llink;
		llen = body_len(t, llink, llink_size);
	}
	if (px.path) {
		name = px.path;
		nlen = px.plen;
		plen = 0;
	}
	if (px.link) {
		link = px.link;
		llen = px.llen;
	}
	if (plen + nlen == 0)
		return TF_FALLBACK;
	copy_str(t->name + plen, name, nlen);
	nlen += plen;

	mode_t ftype;
	bool regular = false;
	switch (h[H_TYPE]) {
	case '0':
	case '\0':
	case '7':
		ftype = S_IFREG;
		regular = true;
		if (px.has_size)
			size = px.size;
		/* an old writer's directory: a file whose name ends in '/' */
		if (t->name[nlen - 1] == '/') {
			if (size)
				return TF_FALLBACK;
			ftype = S_IFDIR;
		}
		break;
	case '5':
		ftype = S_IFDIR;
		break;
	case '2':
		ftype = S_IFLNK;
		break;
	case '1':
		ftype = 0; /* tar does not say what a hard link's target is */
		break;
	default:
		return TF_FALLBACK;
	}
	/* a pax size on anything but a file, or a link path on anything but a
	 * link, has libarchive's own effects */
	if ((px.has_size && !regular) || (px.link && ftype != S_IFLNK && ftype != 0))
		return TF_FALLBACK;
	/* a hard link with data is a file in a pax archive */
	if (ftype == 0 && size && pax_entry)
		ftype = S_IFREG;
	else if (ftype != S_IFREG && size)
		return TF_FALLBACK; /* data on a link or a directory: libarchive's rules */
	bool is_link = h[H_TYPE] == '1' || h[H_TYPE] == '2';
	if (is_link ? llen == 0 : llink != 0)
		return TF_FALLBACK;

	/* As libarchive fills its entry: the mode as stored, its type bits
	 * replaced by the typeflag's (a hard link keeps the stored ones) */
	*e = (struct xentry){
		.path = t->name,
		.type = ftype ? ftype : (mode_t)mode & S_IFMT,
		.perm = (mode_t)mode & ~(mode_t)S_IFMT,
		.uid = (int64_t)uid,
		.gid = (int64_t)gid,
		.size = (int64_t)size,
		.size_set = true,
		.mtime = { (time_t)mtime, 0 },
		.mtime_set = true,
		.atime = { (time_t)atime, 0 },
		.atime_set = atime > 0,
	};
	(void)ctime; /* libarchive keeps it; nothing restores a ctime */
	if (px.has_uid)
		e->uid = (int64_t)px.uid;
	if (px.has_gid)
		e->gid = (int64_t)px.gid;
	if (px.has_mtime)
		e->mtime = px.mtime;
	if (px.has_atime) {
		e->atime = px.atime;
		e->atime_set = true;
	}
	if (h[H_TYPE] == '2')
		e->symlink = copy_str(t->link, link, llen);
	else if (h[H_TYPE] == '1')
		e->hardlink = copy_str(t->link, link, llen);

	t->pax_mode = kind == TAR_USTAR && pax_mode;
	t->off += k + BLOCK;
	t->started = true;
	t->remaining = ftype == S_IFREG ? size : 0;
	t->padding = ftype == S_IFREG ? blocks(size) - size : 0;
	t->data_off = 0;
	return TF_OK;
}

enum tarfast_ret tarfast_data(struct tarfast *t, const void **buf, size_t *len, int64_t *off)
{
	if (!t->remaining) {
		/* the padding too: a stream cut inside it is damaged, as libarchive
		 * reports it at the data's end */
		if (!skip(t, t->padding))
			return TF_FATAL;
		t->padding = 0;
		*buf = NULL;
		*len = 0;
		*off = t->data_off;
		return TF_EOF;
	}
	if (t->off == t->len && !fill(t, 1))
		return damaged(t);
	size_t n = t->len - t->off;
	if (n > t->remaining)
		n = (size_t)t->remaining;
	*buf = t->buf + t->off;
	*len = n;
	*off = t->data_off;
	t->off += n;
	t->data_off += (int64_t)n;
	t->remaining -= n;
	return TF_OK;
}

/* libarchive's read callback after the hand-over: the bytes held, then the
 * descriptor. */
static la_ssize_t rest_read(struct archive *a, void *data, const void **buffer)
{
	struct tarfast *t = data;
	if (t->off < t->len) {
		*buffer = t->buf + t->off;
		size_t n = t->len - t->off;
		t->off = t->len;
		return (la_ssize_t)n;
	}
	t->off = t->len = 0;
	for (;;) {
		ssize_t n = read(t->fd, t->buf, t->cap);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			la.archive_set_error(a, errno, "read error: %s", strerror(errno));
			return -1;
		}
		*buffer = t->buf;
		return n;
	}
}

int tarfast_open_rest(struct tarfast *t, struct archive *a)
{
	return la.archive_read_open(a, t, NULL, rest_read, NULL);
}
