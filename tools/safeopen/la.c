/* SPDX-License-Identifier: MIT */
/*
 * libarchive, loaded on demand (see la.h): dlopen() of its soname, every
 * function of LA_FUNCS looked up once. Not thread-safe: safeopen is one
 * thread.
 */
#include "config.h"

#include <dlfcn.h>
#include <stdio.h>

#include "la.h"

struct la_api la;

static void *handle;
static int state; /* 0 not tried, 1 loaded, -1 failed */
static char msg[256];

int la_load(const char **why)
{
	if (state) {
		*why = msg;
		return state > 0 ? 0 : -1;
	}
	state = -1;
	void *h = handle = dlopen(LIBARCHIVE_SONAME, RTLD_LAZY | RTLD_LOCAL);
	if (!h) {
		const char *e = dlerror();
		snprintf(msg, sizeof(msg), "%s", e ? e : "cannot load " LIBARCHIVE_SONAME);
		*why = msg;
		return -1;
	}
	/* dlsym() hands back void *; the table's members are function
	 * pointers of the declared types, so the cast is the documented way */
#define LA_LOOKUP(f)                                                                     \
	if (!(*(void **)&la.f = dlsym(h, #f))) {                                        \
		snprintf(msg, sizeof(msg), "%s: no symbol %s", LIBARCHIVE_SONAME, #f); \
		*why = msg;                                                             \
		return -1;                                                              \
	}
	LA_FUNCS(LA_LOOKUP)
#undef LA_LOOKUP
	state = 1;
	*why = msg;
	return 0;
}

void la_unload(void)
{
	if (handle)
		dlclose(handle);
	handle = NULL;
	state = 0;
}
