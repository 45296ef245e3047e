/* SPDX-License-Identifier: MIT */
/*
 * bench: the heap allocation counter. malloc & co. defined here interpose
 * glibc's for the whole process (the binary is linked with --export-dynamic),
 * so that allocations made inside the library are counted too.
 */
#include "config.h"

#include <errno.h>
#include <malloc.h>
#include <stdlib.h>

#include "bench.h"


static unsigned long alloc_calls;

#if BENCH_COUNT_ALLOCS
/* glibc's own entry points; defining malloc & co. here (the binary is linked
 * with --export-dynamic) interposes them for the whole process, the library
 * included. Only calls are counted; the memory is glibc's. */
extern void *__libc_malloc(size_t size);
extern void *__libc_calloc(size_t n, size_t size);
extern void *__libc_realloc(void *p, size_t size);
extern void *__libc_memalign(size_t align, size_t size);

static inline void count_alloc(void)
{
	__atomic_add_fetch(&alloc_calls, 1, __ATOMIC_RELAXED);
}

void *malloc(size_t size)
{
	count_alloc();
	return __libc_malloc(size);
}

void *calloc(size_t n, size_t size)
{
	count_alloc();
	return __libc_calloc(n, size);
}

void *realloc(void *p, size_t size)
{
	count_alloc();
	return __libc_realloc(p, size);
}

void *memalign(size_t align, size_t size)
{
	count_alloc();
	return __libc_memalign(align, size);
}

void *aligned_alloc(size_t align, size_t size)
{
	count_alloc();
	return __libc_memalign(align, size);
}

int posix_memalign(void **out, size_t align, size_t size)
{
	if (align < sizeof(void *) || (align & (align - 1)))
		return EINVAL;
	count_alloc();
	void *p = __libc_memalign(align, size);
	if (!p)
		return ENOMEM;
	*out = p;
	return 0;
}
#endif

unsigned long allocs_now(void)
{
	return __atomic_load_n(&alloc_calls, __ATOMIC_RELAXED);
}

/* True when the counter sees allocations made inside a shared library (here
 * glibc's asprintf), i.e. the interposition works. */
bool alloc_counter_works(void)
{
	if (!BENCH_COUNT_ALLOCS)
		return false;
	unsigned long a0 = allocs_now();
	char *s = NULL;
	if (asprintf(&s, "%lu", a0) < 0)
		return false;
	free(s);
	return allocs_now() > a0;
}

bool counting_allocs;
