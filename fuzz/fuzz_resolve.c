/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: differential resolution of fuzzer-chosen paths and flags
 * over a fixed adversarial tree (dc_fixed_spec in diffcore.c), comparing raw
 * openat2(2) with safe_openat2() (default path and SAFE_RESOLVE_USERSPACE
 * walker), and where the flags allow, with safe_fstatat_beneath(),
 * safe_realpath_beneath(), safe_opendir_beneath() and
 * safe_readlinkat_beneath(). Any mismatch prints the
 * case and aborts, so libFuzzer saves the reproducing input (fuzz-smoke-crash-*
 * under make fuzz-smoke); rerun it with ./fuzz/fuzz_resolve FILE.
 *
 * Input layout:
 *   byte 0   dirfd selector (root, subdirectory, /proc/self, a file, bad fd)
 *   byte 1-2 open flags: bits 0-1 access mode, 2 O_CREAT, 3 O_EXCL, 4 O_TRUNC,
 *            5 O_PATH, 6 O_NOFOLLOW, 7 O_DIRECTORY, 8 O_TMPFILE, 9 O_APPEND,
 *            10 nonzero mode, 11 O_NONBLOCK with O_PATH, 12 unknown flag bit
 *   byte 3   resolve: bit 0 IN_ROOT (else BENEATH), 1 NO_XDEV,
 *            2 NO_MAGICLINKS, 3 NO_SYMLINKS, 4 NO_DOTDOT, 5 no scope at all
 *            (the library must say EINVAL), 6 unknown resolve bit
 *   rest     the path (up to the first NUL; at most PATH_MAX + 256 bytes)
 * O_NONBLOCK is always added to non-O_PATH opens: the tree has a FIFO.
 */
#include "config.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../tests/lib/diffcore.h"
#include "safeopen.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct dc_tree *tree;

static void cleanup(void)
{
	if (!tree)
		return;
	dc_tree_destroy(tree);
	(void)rmdir(tree->base);
	free(tree);
	tree = NULL;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	tree = calloc(1, sizeof(*tree));
	if (!tree)
		abort();
	const char *tmp = getenv("TMPDIR");
	snprintf(tree->base, sizeof(tree->base), "%s/safeopen-fuzz-XXXXXX",
		 tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(tree->base)) {
		perror("mkdtemp");
		abort();
	}
	dc_tree_set_spec(tree, dc_fixed_spec);
	if (dc_tree_build(tree) < 0) {
		fprintf(stderr, "fuzz_resolve: %s\n", tree->errbuf);
		abort();
	}
	atexit(cleanup);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct dc_case c;
	static char msg[8192];
	if (size < 4)
		return 0;
	memset(&c, 0, sizeof(c));
	static const int dirsels[] = { DC_DIR_ROOT, DC_DIR_ROOT, DC_DIR_ROOT, DC_DIR_ROOT,
				       DC_DIR_SUB,  DC_DIR_PROC, DC_DIR_FILE, DC_DIR_BAD };
	c.dirsel = dirsels[data[0] & 7];

	unsigned fb = (unsigned)data[1] | ((unsigned)data[2] << 8);
	static const uint64_t acc[] = { O_RDONLY, O_WRONLY, O_RDWR, O_RDWR };
	uint64_t f = acc[fb & 3];
	static const struct {
		unsigned bit;
		uint64_t flag;
	} map[] = {
		{ 1u << 2, O_CREAT },	{ 1u << 3, O_EXCL },	 { 1u << 4, O_TRUNC },
		{ 1u << 5, O_PATH },	{ 1u << 6, O_NOFOLLOW }, { 1u << 7, O_DIRECTORY },
		{ 1u << 8, O_TMPFILE }, { 1u << 9, O_APPEND },
	};
	for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++)
		if (fb & map[i].bit)
			f |= map[i].flag;
	if (!(f & O_PATH) || (fb & (1u << 11)))
		f |= O_NONBLOCK;
	if (fb & (1u << 12))
		f |= 1ULL << 40;
	c.flags = f;
	if ((f & O_CREAT) || (f & O_TMPFILE & ~O_DIRECTORY) || (fb & (1u << 10)))
		c.mode = (fb & (1u << 10)) ? 0644 : 0600;

	unsigned rb = data[3];
	uint64_t res = (rb & 1) ? SAFE_RESOLVE_IN_ROOT : SAFE_RESOLVE_BENEATH;
	if (rb & 2)
		res |= SAFE_RESOLVE_NO_XDEV;
	if (rb & 4)
		res |= SAFE_RESOLVE_NO_MAGICLINKS;
	if (rb & 8)
		res |= SAFE_RESOLVE_NO_SYMLINKS;
	if (rb & 16)
		res |= SAFE_RESOLVE_NO_DOTDOT;
	if (rb & 32) {
		res &= ~(SAFE_RESOLVE_BENEATH | SAFE_RESOLVE_IN_ROOT);
		c.expect_einval = true;
	}
	if (rb & 64)
		res |= 1ULL << 20;
	c.resolve = res;

	size_t plen = size - 4;
	if (plen > sizeof(c.path) - 1)
		plen = sizeof(c.path) - 1;
	memcpy(c.path, data + 4, plen);
	c.path[plen] = '\0';

	static const int impls = DC_IMPL_DEFAULT | DC_IMPL_WALKER | DC_IMPL_FSTATAT |
				 DC_IMPL_REALPATH | DC_IMPL_OPENDIR | DC_IMPL_READLINK;
	if (dc_run_case(tree, &c, impls, msg, sizeof(msg))) {
		fprintf(stderr, "fuzz_resolve: %s", msg);
		dc_tree_print(tree);
		abort();
	}
	return 0;
}
