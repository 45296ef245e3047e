/* SPDX-License-Identifier: MIT */
/*
 * libarchive, loaded when an archive first needs it (tools/safeopen/la.c).
 *
 * safeopen does not link libarchive: loading it and the sixteen libraries
 * it brings (ICU, libxml2, the compressors) would cost about 1.2 ms of every
 * safeopen command's start, and only `safeopen extract` needs it. extract
 * calls libarchive through the table `la`, whose members have libarchive's
 * names and types (la.archive_read_new(), ...).
 */
#ifndef SAFEOPEN_LA_H
#define SAFEOPEN_LA_H

#include <archive.h>
#include <archive_entry.h>

/* Every libarchive function safeopen calls. */
#define LA_FUNCS(X)                                                                    \
	X(archive_read_new) X(archive_read_free) X(archive_read_support_filter_all)     \
	X(archive_read_support_format_all) X(archive_read_open_fd)                      \
	X(archive_read_open_filename) X(archive_read_next_header)                       \
	X(archive_read_data_block) X(archive_error_string) X(archive_format)            \
	X(archive_entry_pathname) X(archive_entry_pathname_utf8)                        \
	X(archive_entry_hardlink) X(archive_entry_hardlink_utf8)                        \
	X(archive_entry_symlink) X(archive_entry_symlink_utf8) X(archive_entry_filetype) \
	X(archive_entry_mode) X(archive_entry_uid) X(archive_entry_gid)                 \
	X(archive_entry_size) X(archive_entry_size_is_set) X(archive_entry_mtime)       \
	X(archive_entry_mtime_nsec) X(archive_entry_mtime_is_set) X(archive_entry_atime) \
	X(archive_entry_atime_nsec) X(archive_entry_atime_is_set) X(archive_entry_rdev) \
	X(archive_entry_xattr_reset) X(archive_entry_xattr_next)

struct la_api {
#define LA_MEMBER(f) __typeof__(f) *f;
	LA_FUNCS(LA_MEMBER)
#undef LA_MEMBER
};

/* Filled by la_load(); read only after it returned 0. */
extern struct la_api la;

/* Load libarchive (once; later calls answer as the first). Returns 0, or -1
 * with a message in *why (dlerror()'s, or the missing symbol's). */
int la_load(const char **why);

/* Unload it (at the end of the extraction: what dlopen() allocated is
 * freed, which memory checkers count). */
void la_unload(void);

#endif
