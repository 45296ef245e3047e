/* SPDX-License-Identifier: MIT */
/*
 * The tmpfile strategy a test asks for. The library has no public flag for
 * "never O_TMPFILE": its switch is the environment variable
 * SAFEOPEN_NO_O_TMPFILE, read at each creation. Tests keep choosing per call
 * with the test-only bit T_NAMED in the flags they pass; the wrappers below
 * turn it into the variable (written only when it changes, so threads of one
 * test that share a strategy never write the environment concurrently).
 * Include after <safeopen.h>.
 */
#ifndef SAFEOPEN_TEST_STRATEGY_H
#define SAFEOPEN_TEST_STRATEGY_H

#include <safeopen.h>
#include <stdint.h>
#include <stdlib.h>

/* Test-only: the named fallback, as on a filesystem without O_TMPFILE. Not a
 * library bit (the wrappers strip it before the call). */
#define T_NAMED (1ULL << 57)

static inline uint64_t t_strategy(uint64_t fl)
{
	const char *now = getenv("SAFEOPEN_NO_O_TMPFILE");
	if (fl & T_NAMED) {
		if (!now || now[0] != '1' || now[1])
			setenv("SAFEOPEN_NO_O_TMPFILE", "1", 1);
	} else if (now) {
		unsetenv("SAFEOPEN_NO_O_TMPFILE");
	}
	return fl & ~T_NAMED;
}

#define safe_tmpfile_xattr(d, p, m, x, n, f) safe_tmpfile_xattr((d), (p), (m), (x), (n), t_strategy(f))
#define safe_tmpfile_open(d, p, m, f, t) safe_tmpfile_open((d), (p), (m), t_strategy(f), (t))
#define safe_write_atomic(d, p, b, l, m, x, n, f) \
	safe_write_atomic((d), (p), (b), (l), (m), (x), (n), t_strategy(f))

#endif
