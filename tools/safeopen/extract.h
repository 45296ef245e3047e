/* SPDX-License-Identifier: MIT */
/*
 * The extract subcommand of safeopen(1): unpack an untrusted archive beneath
 * a directory (read by libarchive), creating every entry with libsafeopen.
 */
#ifndef SAFEOPEN_EXTRACT_H
#define SAFEOPEN_EXTRACT_H

#include <stdint.h>

/* Run "safeopen ROOT extract [OPTIONS] [ARCHIVE|-]". rootfd is the
 * destination (borrowed), resolve the SAFE_RESOLVE_* bits of the global
 * options; argv[0] is "extract". Returns the exit status: 0 every entry
 * extracted, 1 something refused or failed, 2 usage error. */
int safeopen_extract(int rootfd, uint64_t resolve, int argc, char **argv);

#endif
