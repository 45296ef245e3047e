/* SPDX-License-Identifier: MIT */
/*
 * A native test that a stream is a plain (uncompressed) tar archive as
 * libarchive 3.6.2 would see it, so that `safeopen extract` need not load
 * libarchive just to ask (tools/safeopen/tarbid.c).
 */
#ifndef SAFEOPEN_TARBID_H
#define SAFEOPEN_TARBID_H

#include <stdbool.h>
#include <stddef.h>

/* 1: libarchive 3.6.2 with every filter and format enabled would certainly
 * choose "no filter" and the tar format for a stream starting with
 * buf[0..len) (len is min(stream length, 65536); eof: the stream ends at
 * len), and read its first header without error. 0: not certain (the caller
 * then asks libarchive itself). */
int tarbid_plain_tar(const unsigned char *buf, size_t len, bool eof);

#endif
