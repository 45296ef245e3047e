/* SPDX-License-Identifier: MIT */
/*
 * The built-in reader of plain tar streams that `safeopen extract` uses
 * before libarchive (tools/safeopen/tarfast.c): the common headers only, handed to
 * libarchive, from the header it cannot read on, for everything else.
 */
#ifndef SAFEOPEN_TARFAST_H
#define SAFEOPEN_TARFAST_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include <archive.h>

#include "xentry.h"

struct tarfast;

/* What tarfast_next() and tarfast_data() answer. */
enum tarfast_ret {
	TF_OK,       /* an entry (next) or a chunk of its data (data) */
	TF_EOF,      /* the end-of-archive block (next); the entry's data ends (data) */
	TF_FALLBACK, /* next: libarchive must read on, from tarfast_source() */
	TF_FATAL,    /* the stream is damaged or unreadable: tarfast_error() */
};

/* A reader of the stream on fd (borrowed, read from its current offset). */
struct tarfast *tarfast_new(int fd);
void tarfast_free(struct tarfast *t);

/* The next entry into e (its strings valid until the next call), the data of
 * the one before skipped if unread. */
enum tarfast_ret tarfast_next(struct tarfast *t, struct xentry *e);

/* The next chunk of the entry's data (*buf valid until the next call), at
 * offset *off of the file. */
enum tarfast_ret tarfast_data(struct tarfast *t, const void **buf, size_t *len, int64_t *off);

const char *tarfast_error(const struct tarfast *t);

/* libarchive's own answer (its bidding with every filter and format, then
 * its first header) to "is a stream that starts with buf[0..len) an
 * uncompressed tar?"; false also where libarchive cannot be loaded. */
bool tarfast_libarchive_says_tar(const unsigned char *buf, size_t len);

/* Nothing of the stream consumed yet (the first header was not read). */
int tarfast_at_start(const struct tarfast *t);

/* After TF_FALLBACK: open `a` on the rest of the stream, from the first
 * byte of the header group tarfast_next() did not read (the bytes it holds,
 * then the descriptor). The caller sets up `a`'s formats first; libarchive
 * is loaded (la_load()). */
int tarfast_open_rest(struct tarfast *t, struct archive *a);

#endif
