/* SPDX-License-Identifier: MIT */
/*
 * Private to the differential core (fuzz/diffcore-*.c): the helpers its files
 * share. Users of the core include diffcore.h only.
 */
#ifndef SAFEOPEN_DIFFCORE_INTERNAL_H
#define SAFEOPEN_DIFFCORE_INTERNAL_H

#include "diffcore.h"

/* Append printf output to the string in buf; truncates silently. */
void dc_appendf(char *buf, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* snprintf without the truncation warnings: truncation is fine here. */
void dc_setf(char *buf, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* True if s has a ".." path component. */
bool dc_has_dotdot_component(const char *s);

#endif
