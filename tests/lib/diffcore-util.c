/* SPDX-License-Identifier: MIT */
/*
 * Differential core: the seeded PRNG and the text helpers the other
 * diffcore-*.c files share (see diffcore-internal.h).
 */
#include "config.h"

#include "diffcore-internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* ---------------------------------------------------------------- PRNG (splitmix64) */

uint64_t dc_mix(uint64_t a, uint64_t b)
{
	uint64_t z = a ^ (b * 0x9e3779b97f4a7c15ULL) ^ 0x5851f42d4c957f2dULL;
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

uint64_t dc_next(struct dc_rng *r)
{
	uint64_t z = (r->s += 0x9e3779b97f4a7c15ULL);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

uint32_t dc_below(struct dc_rng *r, uint32_t n)
{
	return n ? (uint32_t)(dc_next(r) % n) : 0;
}

bool dc_chance(struct dc_rng *r, unsigned percent)
{
	return dc_below(r, 100) < percent;
}

/* ---------------------------------------------------------------- small helpers */

void dc_appendf(char *buf, size_t size, const char *fmt, ...)
{
	size_t off = strnlen(buf, size);
	if (off + 1 >= size)
		return;
	va_list ap;
	va_start(ap, fmt);
	(void)vsnprintf(buf + off, size - off, fmt, ap);
	va_end(ap);
}

void dc_setf(char *buf, size_t size, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	(void)vsnprintf(buf, size, fmt, ap);
	va_end(ap);
}

bool dc_has_dotdot_component(const char *s)
{
	for (const char *p = s; (p = strstr(p, "..")) != NULL; p += 2) {
		bool start = p == s || p[-1] == '/';
		bool end = p[2] == '\0' || p[2] == '/';
		if (start && end)
			return true;
	}
	return false;
}
