/* SPDX-License-Identifier: MIT */
/*
 * Suite "resolve": safe_openat2() / safe_openat_beneath() against the kernel.
 *
 * The heart is a table of cases over an adversarial tree. Every row states
 * its expected result under RESOLVE_BENEATH and under RESOLVE_IN_ROOT (the
 * path, relative to the root, of the object that must be opened, or an
 * errno), and every case runs three ways: raw openat2(2) (the oracle; not for
 * SAFE_RESOLVE_NO_DOTDOT rows, which the kernel lacks, nor under valgrind,
 * which does not know the syscall), safe_openat2() as is (the fast path where
 * the kernel has openat2), and safe_openat2() with SAFE_RESOLVE_USERSPACE (the
 * walker). Each also runs with NO_XDEV and with NO_MAGICLINKS added, which
 * must not change anything in a tree without mounts or procfs.
 *
 * Around the table: validation and error order, path and link-body lengths,
 * magic links through a real procfs, the kernel's own selftest tree, and
 * seccomp children without openat2 (ENOSYS, EPERM). The "bits" cases: the
 * resolve bits every operation takes (CACHED, the default scope, the short
 * forms, REPORT_ESCAPE, an escape told from a mount crossing, the operations
 * without openat2), on the operations' tree (tests/lib/ops-env.c). The cases that depend on
 * the system around the tree (a sysctl, mounts, privileges, a racing
 * attacker) are the suite "resolve_system" (test_resolve_system.c); both use
 * tests/lib/resolve-env.c.
 */

#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/inotify.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "fixture.h"
#include "safeopen.h"
#include "sandbox.h"
#include "resolve-env.h"
#include "ops-env.h"

/* ------------------------------------------------------------------ the case table */

enum { OPT_CREATES = 1, OPT_TMPFILE = 2, OPT_NOKERNEL = 4 };

struct row {
	const char *path;
	uint64_t flags;
	uint64_t res; /* resolve bits besides the scope */
	uint64_t mode;
	const char *b_obj; /* BENEATH: object that must be opened, or NULL and b_err */
	int b_err;
	const char *i_obj; /* IN_ROOT */
	int i_err;
	unsigned opt;
};

#define OBJ(p) (p), 0
#define ERR(e) NULL, (e)
#define ROW(path, flags, res, b, i) { (path), (flags), (res), 0, b, i, 0 }
#define ROWX(path, flags, res, mode, b, i, opt) { (path), (flags), (res), (mode), b, i, (opt) }

#define CR (O_CREAT | O_WRONLY)
/* Names of NAME_MAX (255) and NAME_MAX + 1 bytes. */
#define N16 "nnnnnnnnnnnnnnnn"
#define N240 N16 N16 N16 N16 N16 N16 N16 N16 N16 N16 N16 N16 N16 N16 N16
#define NAME255 N240 "nnnnnnnnnnnnnnn"
#define NAME256 N240 N16
#define CRX (O_CREAT | O_EXCL | O_WRONLY)
#define TMP (O_TMPFILE | O_RDWR)

static const struct row rows[] = {
	/* plain components */
	ROW("file", RD, 0, OBJ("file"), OBJ("file")),
	ROW("a/b/c/file", RD, 0, OBJ("a/b/c/file"), OBJ("a/b/c/file")),
	ROW("a//b///c/file", RD, 0, OBJ("a/b/c/file"), OBJ("a/b/c/file")),
	ROW("./a/./b/./c/./file", RD, 0, OBJ("a/b/c/file"), OBJ("a/b/c/file")),
	ROW("a/b/../b/c/file", RD, 0, OBJ("a/b/c/file"), OBJ("a/b/c/file")),
	/* ".." then the name it left: the walker takes that level back */
	ROW("a/b/../b/../b/c/file", RD, 0, OBJ("a/b/c/file"), OBJ("a/b/c/file")),
	ROW("a/b/c/../c/../../b/c/file", RD, 0, OBJ("a/b/c/file"), OBJ("a/b/c/file")),
	ROW("a/b/../b", P, 0, OBJ("a/b"), OBJ("a/b")),
	ROW("a/b/../c/file", RD, 0, ERR(ENOENT), ERR(ENOENT)),
	/* ".." then another name: x is not taken back (tb/x/f differs) */
	ROW("tb/x/../y/f", RD, 0, OBJ("tb/y/f"), OBJ("tb/y/f")),
	ROW("tb/x/ly", RD, 0, OBJ("tb/y/f"), OBJ("tb/y/f")),
	ROW("tb/x/lyd/f", RD, 0, OBJ("tb/y/f"), OBJ("tb/y/f")),
	ROW("a/b/lsame/file", RD, 0, OBJ("a/b/c/file"), OBJ("a/b/c/file")),
	ROW("a/b/lsame/../lsame/file", RD, 0, OBJ("a/b/c/file"), OBJ("a/b/c/file")),
	ROW("a/b/lsame/../../b/./c/file", RD, 0, OBJ("a/b/c/file"), OBJ("a/b/c/file")),
	ROW("a/b/c/../../../file", RD, 0, OBJ("file"), OBJ("file")),
	ROW("a/b/c/../../../../file", RD, 0, ERR(EXDEV), OBJ("file")),
	ROW("a/../../root/file", RD, 0, ERR(EXDEV), ERR(ENOENT)),
	ROW("..", RD, 0, ERR(EXDEV), OBJ(".")),
	ROW("../", RD, 0, ERR(EXDEV), OBJ(".")),
	ROW("../..", P, 0, ERR(EXDEV), OBJ(".")),
	ROW("a/../..", RD, 0, ERR(EXDEV), OBJ(".")),
	ROW("/file", RD, 0, ERR(EXDEV), OBJ("file")),
	ROW("/", RD, 0, ERR(EXDEV), OBJ(".")),
	ROW("//a/b", RD, 0, ERR(EXDEV), OBJ("a/b")),
	ROW("/../../a", P, 0, ERR(EXDEV), OBJ("a")),
	ROW(".", RD, 0, OBJ("."), OBJ(".")),
	ROW("./", RD, 0, OBJ("."), OBJ(".")),
	ROW(".//.//", P, 0, OBJ("."), OBJ(".")),
	ROW("", RD, 0, ERR(ENOENT), ERR(ENOENT)),
	ROW("missing", RD, 0, ERR(ENOENT), ERR(ENOENT)),
	ROW("missing/", RD, 0, ERR(ENOENT), ERR(ENOENT)),
	ROW("missing/..", RD, 0, ERR(ENOENT), ERR(ENOENT)),
	ROW("missing/../file", P, 0, ERR(ENOENT), ERR(ENOENT)),
	ROW("a/b/c/file/", RD, 0, ERR(ENOTDIR), ERR(ENOTDIR)),
	ROW("file/", P, 0, ERR(ENOTDIR), ERR(ENOTDIR)),
	ROW("file//", RD, 0, ERR(ENOTDIR), ERR(ENOTDIR)),
	ROW("file/.", RD, 0, ERR(ENOTDIR), ERR(ENOTDIR)),
	ROW("file/..", RD, 0, ERR(ENOTDIR), ERR(ENOTDIR)),
	ROW("a/file/../file", RD, 0, ERR(ENOTDIR), ERR(ENOTDIR)),
	ROW("dir/inner/", RD, 0, ERR(ENOTDIR), ERR(ENOTDIR)),
	ROW("...", RD, 0, OBJ("..."), OBJ("...")),
	ROW("..foo", RD, 0, OBJ("..foo"), OBJ("..foo")),
	ROW("dir/", RD, 0, OBJ("dir"), OBJ("dir")),
	ROW("dir//", P, 0, OBJ("dir"), OBJ("dir")),
	ROW("dir/.", RD, 0, OBJ("dir"), OBJ("dir")),
	ROW("dir/..", RD, 0, OBJ("."), OBJ(".")),
	ROW("dir/../", RD, 0, OBJ("."), OBJ(".")),
	ROW("empty/../dir/inner", RD, 0, OBJ("dir/inner"), OBJ("dir/inner")),
	/* relative and absolute symlinks */
	ROW("lrel/c/file", RD, 0, OBJ("a/b/c/file"), OBJ("a/b/c/file")),
	ROW("lrel", RD, 0, OBJ("a/b"), OBJ("a/b")),
	ROW("lrel", P, 0, OBJ("a/b"), OBJ("a/b")),
	ROW("lrel", PN, 0, OBJ("lrel"), OBJ("lrel")),
	ROW("lrel", O_NOFOLLOW, 0, ERR(ELOOP), ERR(ELOOP)),
	ROW("lrel", O_NOFOLLOW | O_DIRECTORY, 0, ERR(ENOTDIR), ERR(ENOTDIR)),
	ROW("lrel", PN | O_DIRECTORY, 0, ERR(ENOTDIR), ERR(ENOTDIR)),
	ROW("lrel/", O_NOFOLLOW, 0, OBJ("a/b"), OBJ("a/b")),
	ROW("lrel/", PN, 0, OBJ("a/b"), OBJ("a/b")),
	ROW("lrel/c/", RD, 0, OBJ("a/b/c"), OBJ("a/b/c")),
	ROW("lrel/..", RD, 0, OBJ("a"), OBJ("a")),
	ROW("lfile", RD, 0, OBJ("file"), OBJ("file")),
	ROW("lfile", PN, 0, OBJ("lfile"), OBJ("lfile")),
	ROW("lfile/", RD, 0, ERR(ENOTDIR), ERR(ENOTDIR)),
	ROW("lfile", O_DIRECTORY, 0, ERR(ENOTDIR), ERR(ENOTDIR)),
	ROW("ldir", O_DIRECTORY, 0, OBJ("dir"), OBJ("dir")),
	ROW("ldir", O_DIRECTORY | O_NOFOLLOW, 0, ERR(ENOTDIR), ERR(ENOTDIR)),
	ROW("ldir/inner", O_NOFOLLOW, 0, OBJ("dir/inner"), OBJ("dir/inner")),
	ROW("labs", RD, 0, ERR(EXDEV), OBJ("a/b")),
	ROW("labs", PN, 0, OBJ("labs"), OBJ("labs")),
	ROW("labs/c/file", RD, 0, ERR(EXDEV), OBJ("a/b/c/file")),
	ROW("labs/../../file", RD, 0, ERR(EXDEV), OBJ("file")),
	ROW("lroot", RD, 0, ERR(EXDEV), OBJ(".")),
	ROW("lroot/file", RD, 0, ERR(EXDEV), OBJ("file")),
	ROW("lroot/..", P, 0, ERR(EXDEV), OBJ(".")),
	ROW("ldot", RD, 0, OBJ("."), OBJ(".")),
	ROW("ldot/ldot/ldot/file", RD, 0, OBJ("file"), OBJ("file")),
	ROW("ldotdot", RD, 0, ERR(EXDEV), OBJ(".")),
	ROW("ldotdot/file", RD, 0, ERR(EXDEV), OBJ("file")),
	ROW("ldotdot/root/file", RD, 0, ERR(EXDEV), ERR(ENOENT)),
	ROW("a/lup/file", RD, 0, OBJ("file"), OBJ("file")),
	ROW("a/lup", RD, 0, OBJ("."), OBJ(".")),
	ROW("a/lup/..", RD, 0, ERR(EXDEV), OBJ(".")),
	ROW("a/lup/a/lup/a/file", RD, 0, OBJ("a/file"), OBJ("a/file")),
	ROW("a/b/up2/file", RD, 0, OBJ("file"), OBJ("file")),
	ROW("a/b/up3/file", RD, 0, ERR(EXDEV), OBJ("file")),
	ROW("a/b/up3", PN, 0, OBJ("a/b/up3"), OBJ("a/b/up3")),
	ROW("a/b/lupfile", RD, 0, OBJ("file"), OBJ("file")),
	ROW("lescape", RD, 0, ERR(EXDEV), ERR(ENOENT)),
	ROW("lescape_deep", RD, 0, ERR(EXDEV), ERR(ENOENT)),
	ROW("ldangling", RD, 0, ERR(ENOENT), ERR(ENOENT)),
	ROW("ldangling", PN, 0, OBJ("ldangling"), OBJ("ldangling")),
	ROW("ldangling/", RD, 0, ERR(ENOENT), ERR(ENOENT)),
	ROW("ldangling_abs", RD, 0, ERR(EXDEV), ERR(ENOENT)),
	ROW("lslash", RD, 0, OBJ("dir"), OBJ("dir")),
	ROW("lslash/inner", RD, 0, OBJ("dir/inner"), OBJ("dir/inner")),
	ROW("lslash", O_NOFOLLOW, 0, ERR(ELOOP), ERR(ELOOP)),
	ROW("ldoubleslash", RD, 0, ERR(EXDEV), OBJ("dir")),
	ROW("ldoubleslash/inner", RD, 0, ERR(EXDEV), OBJ("dir/inner")),
	ROW("lnested", RD, 0, OBJ("a/b/c"), OBJ("a/b/c")),
	ROW("lnested/file", RD, 0, OBJ("a/b/c/file"), OBJ("a/b/c/file")),
	ROW("lmid/file", RD, 0, OBJ("a/file"), OBJ("a/file")),
	ROW("lprocfd", RD, 0, ERR(EXDEV), ERR(ENOENT)),
	ROW("lprocexe", RD, 0, ERR(EXDEV), ERR(ENOENT)),
	/* an absolute jump, then a body climbing into levels walked after it */
	ROW("ljump/", PN, 0, ERR(EXDEV), OBJ(".")),
	ROW("ljump", O_RDWR, 0, ERR(EXDEV), ERR(EISDIR)),
	ROW("a/b/lupup3", P, 0, ERR(EXDEV), OBJ(".")),
	ROW("a/b/lupup3/a/b/lupup3/file", RD, 0, ERR(EXDEV), OBJ("file")),
	ROW("dir/../ljump/file", RD, 0, ERR(EXDEV), OBJ("file")),
	ROW("lfifo", O_RDONLY | O_NONBLOCK, 0, OBJ("fifo"), OBJ("fifo")),
	ROW("fifo", O_WRONLY | O_NONBLOCK, 0, ERR(ENXIO), ERR(ENXIO)),
	ROW("fifo", P, 0, OBJ("fifo"), OBJ("fifo")),
	/* loops and the 40-link limit, counted over the whole walk */
	ROW("lloop", RD, 0, ERR(ELOOP), ERR(ELOOP)),
	ROW("lloop", PN, 0, OBJ("lloop"), OBJ("lloop")),
	ROW("lloop/", PN, 0, ERR(ELOOP), ERR(ELOOP)),
	ROW("lloop_a/x", RD, 0, ERR(ELOOP), ERR(ELOOP)),
	ROW("ch40", RD, 0, OBJ("file"), OBJ("file")),
	ROW("ch41", RD, 0, ERR(ELOOP), ERR(ELOOP)),
	ROW("ch41", PN, 0, OBJ("ch41"), OBJ("ch41")),
	ROW("dch40/inner", RD, 0, OBJ("dir/inner"), OBJ("dir/inner")),
	ROW("dch41/inner", RD, 0, ERR(ELOOP), ERR(ELOOP)),
	ROW("dch40/", PN, 0, OBJ("dir"), OBJ("dir")),
	ROW("dch20/../dch20/inner", RD, 0, OBJ("dir/inner"), OBJ("dir/inner")),
	ROW("dch20/../dch21/inner", RD, 0, ERR(ELOOP), ERR(ELOOP)),
	ROW("dch39/../lfile", RD, 0, OBJ("file"), OBJ("file")),
	ROW("dch40/../lfile", RD, 0, ERR(ELOOP), ERR(ELOOP)),
	ROW("dch40/../lfile", PN, 0, OBJ("lfile"), OBJ("lfile")),
	ROW("llongdir/inner", RD, 0, OBJ("dir/inner"), OBJ("dir/inner")),
	/* A component over NAME_MAX: the answer of its lookup (the filesystem's
	 * ENAMETOOLONG here), only where the kernel looks it up. */
	ROW(NAME256, RD, 0, ERR(ENAMETOOLONG), ERR(ENAMETOOLONG)),
	ROW(NAME256, PN, NS, ERR(ENAMETOOLONG), ERR(ENAMETOOLONG)),
	ROW("a/" NAME256 "/file", RD, 0, ERR(ENAMETOOLONG), ERR(ENAMETOOLONG)),
	ROW(NAME256 "/..", P, 0, ERR(ENAMETOOLONG), ERR(ENAMETOOLONG)),
	ROW("lrel/" NAME256, RD, NX, ERR(ENAMETOOLONG), ERR(ENAMETOOLONG)),
	ROW("/" NAME256, RD, 0, ERR(EXDEV), ERR(ENAMETOOLONG)),
	ROW("../" NAME256, RD, 0, ERR(EXDEV), ERR(ENAMETOOLONG)),
	ROW("missing/" NAME256, RD, 0, ERR(ENOENT), ERR(ENOENT)),
	ROW("missing/" NAME256 "/..", RD, 0, ERR(ENOENT), ERR(ENOENT)),
	ROW("file/" NAME256, RD, 0, ERR(ENOTDIR), ERR(ENOTDIR)),
	ROW("lfile/" NAME256, RD, 0, ERR(ENOTDIR), ERR(ENOTDIR)),
	ROW(NAME255, RD, 0, ERR(ENOENT), ERR(ENOENT)),
	ROW(NAME255 "/" NAME256, RD, 0, ERR(ENOENT), ERR(ENOENT)),
	ROW("lgrowA/inner", RD, 0, OBJ("dir/inner"), OBJ("dir/inner")),
	/* NO_SYMLINKS */
	ROW("lrel/c/file", RD, NS, ERR(ELOOP), ERR(ELOOP)),
	ROW("a/b/c/file", RD, NS, OBJ("a/b/c/file"), OBJ("a/b/c/file")),
	ROW("lrel", PN, NS, OBJ("lrel"), OBJ("lrel")),
	ROW("lrel", P, NS, ERR(ELOOP), ERR(ELOOP)),
	ROW("lrel/", PN, NS, ERR(ELOOP), ERR(ELOOP)),
	ROW("lfile", O_NOFOLLOW, NS, ERR(ELOOP), ERR(ELOOP)),
	ROW("a/lup/file", RD, NS, ERR(ELOOP), ERR(ELOOP)),
	ROW("ldangling", RD, NS, ERR(ELOOP), ERR(ELOOP)),
	ROW("labs", RD, NS, ERR(ELOOP), ERR(ELOOP)),
	ROW("dch41/inner", RD, NS, ERR(ELOOP), ERR(ELOOP)),
	ROW("a/b/../../file", RD, NS, OBJ("file"), OBJ("file")),
	/* NO_MAGICLINKS / NO_XDEV on ordinary links (no change) */
	ROW("lnested/file", RD, NM, OBJ("a/b/c/file"), OBJ("a/b/c/file")),
	ROW("lroot/file", RD, NX, ERR(EXDEV), OBJ("file")),
	ROW("a/b/c/../../file", RD, NX | NM, OBJ("a/file"), OBJ("a/file")),
	/* O_DIRECTORY, O_PATH, access modes */
	ROW("dir", O_DIRECTORY, 0, OBJ("dir"), OBJ("dir")),
	ROW("file", O_DIRECTORY, 0, ERR(ENOTDIR), ERR(ENOTDIR)),
	ROW("file", O_PATH | O_DIRECTORY, 0, ERR(ENOTDIR), ERR(ENOTDIR)),
	ROW("dir", O_WRONLY, 0, ERR(EISDIR), ERR(EISDIR)),
	ROW("dir", O_RDWR, 0, ERR(EISDIR), ERR(EISDIR)),
	ROW(".", O_WRONLY, 0, ERR(EISDIR), ERR(EISDIR)),
	ROW("file", O_RDWR | O_APPEND, 0, OBJ("file"), OBJ("file")),
	ROW("lfile", O_PATH | O_NOFOLLOW | O_DIRECTORY, 0, ERR(ENOTDIR), ERR(ENOTDIR)),
	/* O_TRUNC */
	ROW("trunc_me", O_WRONLY | O_TRUNC, 0, OBJ("trunc_me"), OBJ("trunc_me")),
	ROW("ltrunc", O_RDWR | O_TRUNC, 0, OBJ("trunc_me"), OBJ("trunc_me")),
	ROW("ltrunc", O_RDWR | O_TRUNC | O_NOFOLLOW, 0, ERR(ELOOP), ERR(ELOOP)),
	ROW("dir", O_TRUNC, 0, ERR(EISDIR), ERR(EISDIR)),
	ROW("ldangling", O_WRONLY | O_TRUNC, 0, ERR(ENOENT), ERR(ENOENT)),
	/* O_CREAT / O_EXCL */
	ROWX("new", CR, 0, 0644, OBJ("new"), OBJ("new"), OPT_CREATES),
	ROWX("dir/new", CR, 0, 0600, OBJ("dir/new"), OBJ("dir/new"), OPT_CREATES),
	ROWX("new", CRX, 0, 0, OBJ("new"), OBJ("new"), OPT_CREATES),
	ROWX("a/../new", CR, 0, 0644, OBJ("new"), OBJ("new"), OPT_CREATES),
	ROWX("../new", CR, 0, 0644, ERR(EXDEV), OBJ("new"), OPT_CREATES),
	ROWX("/new", CR, 0, 0644, ERR(EXDEV), OBJ("new"), OPT_CREATES),
	ROWX("lroot/dir/new", CR, 0, 0644, ERR(EXDEV), OBJ("dir/new"), OPT_CREATES),
	ROWX("file", CRX, 0, 0644, ERR(EEXIST), ERR(EEXIST), OPT_CREATES),
	ROWX("lfile", CRX, 0, 0644, ERR(EEXIST), ERR(EEXIST), OPT_CREATES),
	ROWX("ldangling", CRX, 0, 0644, ERR(EEXIST), ERR(EEXIST), OPT_CREATES),
	ROWX("ldangling", CR, 0, 0644, OBJ("missing"), OBJ("missing"), OPT_CREATES),
	ROWX("ldangling", CR | O_NOFOLLOW, 0, 0644, ERR(ELOOP), ERR(ELOOP), OPT_CREATES),
	ROWX("ldangling", CR, NS, 0644, ERR(ELOOP), ERR(ELOOP), OPT_CREATES),
	ROWX("ldangling_sub", CR, 0, 0644, OBJ("dir/newfile"), OBJ("dir/newfile"), OPT_CREATES),
	ROWX("ldangling_abs", CR, 0, 0644, ERR(EXDEV), OBJ("created_abs"), OPT_CREATES),
	ROWX("ldangling_up", CR, 0, 0644, ERR(EXDEV), OBJ("outside_new"), OPT_CREATES),
	ROWX("lfile", CR, 0, 0644, OBJ("file"), OBJ("file"), OPT_CREATES),
	ROWX("ltrunc", CR | O_TRUNC, 0, 0644, OBJ("trunc_me"), OBJ("trunc_me"), OPT_CREATES),
	ROWX("dir", CR, 0, 0644, ERR(EISDIR), ERR(EISDIR), OPT_CREATES),
	ROWX("ldir", CR, 0, 0644, ERR(EISDIR), ERR(EISDIR), OPT_CREATES),
	ROWX("dir/", CR, 0, 0644, ERR(EISDIR), ERR(EISDIR), OPT_CREATES),
	ROWX("new/", CR, 0, 0644, ERR(EISDIR), ERR(EISDIR), OPT_CREATES),
	ROWX("file/", CR, 0, 0644, ERR(EISDIR), ERR(EISDIR), OPT_CREATES),
	ROWX("ldangling/", CR, 0, 0644, ERR(EISDIR), ERR(EISDIR), OPT_CREATES),
	ROWX(".", CR, 0, 0644, ERR(EISDIR), ERR(EISDIR), OPT_CREATES),
	ROWX(".", CRX, 0, 0644, ERR(EEXIST), ERR(EEXIST), OPT_CREATES),
	ROWX("..", CR, 0, 0644, ERR(EXDEV), ERR(EISDIR), OPT_CREATES),
	ROWX("/", CRX, 0, 0644, ERR(EXDEV), ERR(EEXIST), OPT_CREATES),
	ROWX("missing_dir/new", CR, 0, 0644, ERR(ENOENT), ERR(ENOENT), OPT_CREATES),
	ROWX("file/new", CR, 0, 0644, ERR(ENOTDIR), ERR(ENOTDIR), OPT_CREATES),
	ROWX("lescape", CR, 0, 0644, ERR(EXDEV), OBJ("outside_file"), OPT_CREATES),
	ROWX("dir/" NAME256, CR, 0, 0644, ERR(ENAMETOOLONG), ERR(ENAMETOOLONG), OPT_CREATES),
	ROWX(NAME256, CRX, 0, 0644, ERR(ENAMETOOLONG), ERR(ENAMETOOLONG), OPT_CREATES),
	ROWX(NAME256 "/", CR, 0, 0644, ERR(EISDIR), ERR(EISDIR), OPT_CREATES),
	ROWX("ldangling_sub/" NAME256, CR, 0, 0644, ERR(ENOENT), ERR(ENOENT), OPT_CREATES),
	/* O_TMPFILE: the path names the directory */
	ROWX("dir", TMP, 0, 0600, OBJ("dir"), OBJ("dir"), OPT_TMPFILE),
	ROWX(".", TMP, 0, 0600, OBJ("."), OBJ("."), OPT_TMPFILE),
	ROWX("ldir", TMP, 0, 0600, OBJ("dir"), OBJ("dir"), OPT_TMPFILE),
	ROWX("lrel/c/", TMP, 0, 0600, OBJ("a/b/c"), OBJ("a/b/c"), OPT_TMPFILE),
	ROWX("ldir", TMP | O_NOFOLLOW, 0, 0600, ERR(ENOTDIR), ERR(ENOTDIR), OPT_TMPFILE),
	ROWX("file", TMP, 0, 0600, ERR(ENOTDIR), ERR(ENOTDIR), OPT_TMPFILE),
	ROWX("missing", TMP, 0, 0600, ERR(ENOENT), ERR(ENOENT), OPT_TMPFILE),
	ROWX("..", TMP, 0, 0600, ERR(EXDEV), OBJ("."), OPT_TMPFILE),
	ROWX("lroot", TMP, 0, 0600, ERR(EXDEV), OBJ("."), OPT_TMPFILE),
	ROWX(NAME256, TMP, 0, 0600, ERR(ENAMETOOLONG), ERR(ENAMETOOLONG), OPT_TMPFILE),
	/* SAFE_RESOLVE_NO_DOTDOT: any ".." (path or followed body) is EXDEV */
	ROWX("a/../file", RD, ND, 0, ERR(EXDEV), ERR(EXDEV), OPT_NOKERNEL),
	ROWX("..", RD, ND, 0, ERR(EXDEV), ERR(EXDEV), OPT_NOKERNEL),
	ROWX("a/b/up2/file", RD, ND, 0, ERR(EXDEV), ERR(EXDEV), OPT_NOKERNEL),
	ROWX("a/lup", RD, ND, 0, ERR(EXDEV), ERR(EXDEV), OPT_NOKERNEL),
	ROWX("a/lup", PN, ND, 0, OBJ("a/lup"), OBJ("a/lup"), OPT_NOKERNEL),
	ROWX("file", RD, ND, 0, OBJ("file"), OBJ("file"), OPT_NOKERNEL),
	ROWX("lrel/c/file", RD, ND, 0, OBJ("a/b/c/file"), OBJ("a/b/c/file"), OPT_NOKERNEL),
	ROWX("...", RD, ND, 0, OBJ("..."), OBJ("..."), OPT_NOKERNEL),
	ROWX("..foo", RD, ND, 0, OBJ("..foo"), OBJ("..foo"), OPT_NOKERNEL),
	ROWX("missing/../file", RD, ND, 0, ERR(ENOENT), ERR(ENOENT), OPT_NOKERNEL),
	ROWX("dir/.", RD, ND, 0, OBJ("dir"), OBJ("dir"), OPT_NOKERNEL),
	ROWX("labs", RD, ND, 0, ERR(EXDEV), OBJ("a/b"), OPT_NOKERNEL),
	ROWX("../new", CR, ND, 0644, ERR(EXDEV), ERR(EXDEV), OPT_NOKERNEL | OPT_CREATES),
	ROWX("lrel", RD, ND | NS, 0, ERR(ELOOP), ERR(ELOOP), OPT_NOKERNEL),
};

/* Check one result against the expectation. */
static bool check_result(const struct env *e, const struct row *r, const char *obj, int err,
			 int fd, int got_err, char *msg, size_t size)
{
	if (!obj) {
		if (fd >= 0) {
			snprintf(msg, size, "expected %s, got an fd", errname(err));
			return false;
		}
		if (got_err != err) {
			snprintf(msg, size, "expected %s, got %s", errname(err), errname(got_err));
			return false;
		}
		return true;
	}
	if (fd < 0) {
		snprintf(msg, size, "expected %s, got %s", obj, errname(got_err));
		return false;
	}
	struct stat got, want;
	if (fstat(fd, &got) < 0 || fstatat(e->rootfd, obj, &want, AT_SYMLINK_NOFOLLOW) < 0) {
		snprintf(msg, size, "stat: %s", strerror(errno));
		return false;
	}
	if (r->opt & OPT_TMPFILE) {
		if (!S_ISREG(got.st_mode) || got.st_nlink != 0 || got.st_dev != want.st_dev) {
			snprintf(msg, size, "expected an unnamed file in %s", obj);
			return false;
		}
		return true;
	}
	if (got.st_dev != want.st_dev || got.st_ino != want.st_ino) {
		snprintf(msg, size, "expected %s, opened another object (ino %lu)", obj,
			 (unsigned long)got.st_ino);
		return false;
	}
	int fl = fcntl(fd, F_GETFD);
	if (fl < 0 || !(fl & FD_CLOEXEC)) {
		snprintf(msg, size, "result is not O_CLOEXEC");
		return false;
	}
	return true;
}

/* Run one case one way. Returns true on success; msg explains a failure. */
static bool run_one(const struct env *e, const struct row *r, uint64_t scope, uint64_t extra,
		    enum run_mode m, char *msg, size_t size)
{
	uint64_t res = scope | r->res | extra;
	const char *obj = scope == B ? r->b_obj : r->i_obj;
	int err = scope == B ? r->b_err : r->i_err;
	int fd = open_way(m, e->rootfd, r->path, r->flags, r->mode, res);
	int got_err = fd < 0 ? errno : 0;
	bool ok = check_result(e, r, obj, err, fd, got_err, msg, size);
	if (fd >= 0)
		close(fd);
	if (r->opt & (OPT_CREATES | OPT_TMPFILE) || (r->flags & O_TRUNC)) {
		if (env_reset(e) < 0 && ok) {
			snprintf(msg, size, "cannot reset the tree: %s", strerror(errno));
			ok = false;
		}
	}
	if (ok && !env_unchanged(e, msg, size))
		ok = false;
	return ok;
}

/*
 * Run the whole table. `modes` is a bit mask of run_mode; the kernel is only
 * asked when it has openat2. Returns the number of failures (each printed).
 * Usable in sb_run children: it never calls ck_assert.
 */
static int run_table(const struct env *e, unsigned modes, bool variants, int *ncases)
{
	static const uint64_t extras[] = { 0, NX, NM };
	bool kernel = kernel_has_openat2();
	int failures = 0, cases = 0;
	char msg[512];
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		const struct row *r = &rows[i];
		for (int s = 0; s < 2; s++) {
			uint64_t scope = s ? I : B;
			cases++;
			for (size_t x = 0; x < (variants ? 3 : 1); x++) {
				for (int m = 0; m < RUN_MODES; m++) {
					if (!(modes & (1U << m)))
						continue;
					if (m == RUN_KERNEL && (!kernel || (r->opt & OPT_NOKERNEL)))
						continue;
					if (run_one(e, r, scope, extras[x], (enum run_mode)m, msg,
						    sizeof(msg)))
						continue;
					failures++;
					fprintf(stderr, "row %zu \"%.60s\" flags=%#llo "
						"resolve=%#llx via %s: %s\n", i, r->path,
						(unsigned long long)r->flags,
						(unsigned long long)(scope | r->res | extras[x]),
						mode_names[m], msg);
				}
			}
		}
	}
	if (ncases)
		*ncases = cases;
	return failures;
}

/*
 * The tree of the "core" cases that leave it as they found it, built once
 * in the runner (each case runs in a child of it, or one after the other
 * under valgrind), not once per case: the creating rows remove what they
 * made (env_reset()), and every row and case checks that nothing appeared
 * or vanished (env_unchanged()). deep_path_constant_fds and
 * kernel_link_double_count add to their tree: they build their own.
 */
static struct env core_env;

static void core_setup(void)
{
	env_setup(&core_env);
}

static void core_teardown(void)
{
	env_teardown(&core_env);
}

#define ALL_MODES ((1U << RUN_KERNEL) | (1U << RUN_DEFAULT) | (1U << RUN_WALKER))

START_TEST(case_table)
{
	struct env e = core_env;
	int cases = 0;
	int failures = run_table(&e, ALL_MODES, true, &cases);
	ck_assert_int_ge(cases, 150);
	ck_assert_msg(failures == 0, "%d failures over %d cases (see stderr)", failures, cases);
}
END_TEST

/* ------------------------------------------------------------------ validation */

struct vcase {
	const char *name;
	int dirfd; /* -1: the root; -2: a bad fd; -3: a regular file */
	const char *path;
	uint64_t flags, mode, resolve;
	size_t size;
	bool null_how;
	int err; /* expected errno (0: success) */
	bool lib_only; /* the library's own rule: the kernel accepts it */
};

static const struct vcase vcases[] = {
	{ "size 0", -1, "file", 0, 0, B, 0, false, EINVAL, false },
	{ "size 23", -1, "file", 0, 0, B, 23, false, EINVAL, false },
	{ "NULL how, size 0", -1, "file", 0, 0, B, 0, true, EINVAL, false },
	{ "NULL how", -1, "file", 0, 0, B, 24, true, EFAULT, false },
	{ "size over a page", -1, "file", 0, 0, B, 8192, false, E2BIG, false },
	{ "NULL how, size over a page", -1, "file", 0, 0, B, 8192, true, E2BIG, false },
	{ "size 32, zero tail", -1, "file", 0, 0, B, 32, false, 0, false },
	{ "size 4096, zero tail", -1, "file", 0, 0, B, 4096, false, 0, false },
	{ "unknown flag bit 2", -1, "file", 04, 0, B, 24, false, EINVAL, false },
	{ "unknown flag bit 23", -1, "file", 1U << 23, 0, B, 24, false, EINVAL, false },
	{ "unknown flag bit 31", -1, "file", 1U << 31, 0, B, 24, false, EINVAL, false },
	{ "unknown flag bit 40", -1, "file", 1ULL << 40, 0, B, 24, false, EINVAL, false },
	{ "unknown resolve bit", -1, "file", 0, 0, B | 0x40, 24, false, EINVAL, false },
	{ "unknown resolve bit 36", -1, "file", 0, 0, B | (1ULL << 36), 24, false, EINVAL, false },
	{ "BENEATH|IN_ROOT", -1, "file", 0, 0, B | I, 24, false, EINVAL, false },
	{ "no scope", -1, "file", 0, 0, 0, 24, false, EINVAL, true },
	{ "NO_XDEV without scope", -1, "file", 0, 0, NX, 24, false, EINVAL, true },
	{ "mode without O_CREAT", -1, "file", 0, 0644, B, 24, false, EINVAL, false },
	{ "mode 010000", -1, "new", O_CREAT | O_WRONLY, 010000, B, 24, false, EINVAL, false },
	{ "O_CREAT|O_DIRECTORY", -1, "new", O_CREAT | O_DIRECTORY, 0, B, 24, false, EINVAL,
	  false },
	{ "O_PATH|O_CREAT", -1, "new", O_PATH | O_CREAT, 0, B, 24, false, EINVAL, false },
	{ "O_PATH|O_EXCL", -1, "file", O_PATH | O_EXCL, 0, B, 24, false, EINVAL, false },
	{ "O_PATH|O_RDWR", -1, "file", O_PATH | O_RDWR, 0, B, 24, false, EINVAL, false },
	{ "O_PATH|O_NOCTTY", -1, "file", O_PATH | O_NOCTTY, 0, B, 24, false, EINVAL, false },
	{ "O_PATH|O_DIRECT", -1, "file", O_PATH | O_DIRECT, 0, B, 24, false, EINVAL, false },
	{ "O_PATH|kernel O_LARGEFILE", -1, "file", O_PATH | 0100000, 0, B, 24, false, EINVAL,
	  false },
	{ "kernel O_LARGEFILE", -1, "file", 0100000, 0, B, 24, false, 0, false },
	{ "O_PATH|O_CLOEXEC|O_NOFOLLOW|O_DIRECTORY", -1, "dir",
	  O_PATH | O_CLOEXEC | O_NOFOLLOW | O_DIRECTORY, 0, B, 24, false, 0, false },
	{ "O_TMPFILE read-only", -1, "dir", O_TMPFILE, 0600, B, 24, false, EINVAL, false },
	{ "O_TMPFILE|O_CREAT", -1, "dir", O_TMPFILE | O_CREAT | O_RDWR, 0600, B, 24, false,
	  EINVAL, false },
	{ "O_TMPFILE|O_PATH", -1, "dir", O_TMPFILE | O_PATH | O_RDWR, 0, B, 24, false, EINVAL,
	  false },
	{ "__O_TMPFILE without O_DIRECTORY", -1, "dir", (O_TMPFILE & ~O_DIRECTORY) | O_RDWR, 0600,
	  B, 24, false, EINVAL, false },
	{ "O_ACCMODE 3", -1, "file", 3, 0, B, 24, false, 0, false },
	{ "RESOLVE_CACHED", -1, "file", 0, 0, B | 0x20, 24, false, 0, false },
	{ "RESOLVE_CACHED|O_CREAT", -1, "new", O_CREAT | O_WRONLY, 0600, B | 0x20, 24, false,
	  EAGAIN, false },
	{ "empty path, bad flags", -1, "", 1ULL << 40, 0, B, 24, false, EINVAL, false },
	{ "NULL path, bad flags", -1, NULL, 1ULL << 40, 0, B, 24, false, EINVAL, false },
	{ "NULL path", -1, NULL, 0, 0, B, 24, false, EFAULT, false },
	{ "empty path, bad fd", -2, "", 0, 0, B, 24, false, ENOENT, false },
	{ "absolute, BENEATH, bad fd", -2, "/file", 0, 0, B, 24, false, EXDEV, false },
	{ "absolute, BENEATH, file fd", -3, "/file", 0, 0, B, 24, false, EXDEV, false },
	{ "absolute, IN_ROOT, bad fd", -2, "/file", 0, 0, I, 24, false, EBADF, false },
	{ "absolute, IN_ROOT, file fd", -3, "/file", 0, 0, I, 24, false, ENOTDIR, false },
	{ "\"/\", IN_ROOT, file fd", -3, "/", 0, 0, I, 24, false, ENOTDIR, false },
	{ "relative, bad fd", -2, "file", 0, 0, B, 24, false, EBADF, false },
	{ "relative, file fd", -3, "file", 0, 0, B, 24, false, ENOTDIR, false },
	{ "\".\", file fd", -3, ".", 0, 0, B, 24, false, ENOTDIR, false },
	{ "\"..\", bad fd", -2, "..", 0, 0, I, 24, false, EBADF, false },
	{ "NO_XDEV, bad fd", -2, "file", 0, 0, B | NX, 24, false, EBADF, false },
	{ "NO_XDEV, file fd", -3, "file", 0, 0, B | NX, 24, false, ENOTDIR, false },
};

static bool run_vcase(const struct env *e, int filefd, const struct vcase *v, int way,
		      char *msg, size_t size)
{
	int dirfd = v->dirfd == -1 ? e->rootfd : v->dirfd == -2 ? 9999 : filefd;
	unsigned char buf[8192];
	memset(buf, 0, sizeof(buf));
	struct safe_open_how *h = (struct safe_open_how *)buf;
	h->flags = v->flags;
	h->mode = v->mode;
	h->resolve = v->resolve;
	int fd;
	if (way == RUN_KERNEL) {
		struct open_how *kh = (struct open_how *)buf;
		fd = (int)syscall(SYS_openat2, dirfd, v->path, v->null_how ? NULL : kh, v->size);
	} else {
		if (way == RUN_WALKER)
			h->resolve |= US;
		fd = safe_openat2(dirfd, v->path, v->null_how ? NULL : h, v->size);
	}
	int err = fd < 0 ? errno : 0;
	if (fd >= 0)
		close(fd);
	(void)unlinkat(e->rootfd, "new", 0);
	/* SAFE_RESOLVE_CACHED: the walker cannot promise a cache-only lookup
	 * (also when it stands in for a missing openat2, e.g. under valgrind). */
	bool walks = way == RUN_WALKER || (way != RUN_KERNEL && !kernel_has_openat2());
	int want_err = (walks && (v->resolve & 0x20)) ? EAGAIN : v->err;
	bool want_ok = want_err == 0 || (way == RUN_KERNEL && v->lib_only);
	if (want_ok ? fd >= 0 : (fd < 0 && err == want_err))
		return true;
	snprintf(msg, size, "%s via %s: expected %s, got %s", v->name, mode_names[way],
		 want_ok ? "success" : errname(want_err), fd >= 0 ? "success" : errname(err));
	return false;
}

START_TEST(validation_and_error_order)
{
	struct env e = core_env;
	int filefd = openat(e.rootfd, "file", O_RDONLY | O_CLOEXEC);
	ck_assert_int_ge(filefd, 0);
	bool kernel = kernel_has_openat2();
	char msg[512];
	for (size_t i = 0; i < sizeof(vcases) / sizeof(vcases[0]); i++) {
		for (int way = 0; way < RUN_MODES; way++) {
			if (way == RUN_KERNEL && !kernel)
				continue;
			ck_assert_msg(run_vcase(&e, filefd, &vcases[i], way, msg, sizeof(msg)),
				      "%s", msg);
		}
	}
	close(filefd);
}
END_TEST

START_TEST(path_length_limits)
{
	struct env e = core_env;
	char *p = malloc(PATH_MAX + 16);
	ck_assert_ptr_nonnull(p);
	bool kernel = kernel_has_openat2();
	/* A path of PATH_MAX bytes (with its NUL: too long) vs. PATH_MAX - 1. */
	for (int total = PATH_MAX - 1; total <= PATH_MAX; total++) {
		memset(p, 0, PATH_MAX + 16);
		size_t n = 0;
		while (n + 2 < (size_t)total - 4)
			memcpy(p + n, "./", 2), n += 2;
		while (n < (size_t)total - 4)
			p[n++] = '/';
		memcpy(p + n, "file", 4);
		ck_assert_uint_eq(strlen(p), (size_t)total);
		int want = total == PATH_MAX ? ENAMETOOLONG : 0;
		for (int way = 0; way < RUN_MODES; way++) {
			if (way == RUN_KERNEL && !kernel)
				continue;
			int fd = open_way(way, e.rootfd, p, 0, 0, B);
			if (want) {
				ck_assert_msg(fd < 0 && errno == want, "%s: len %d",
					      mode_names[way], total);
			} else {
				ck_assert_msg(fd >= 0, "%s: len %d: %s", mode_names[way], total,
					      strerror(errno));
				ck_assert(fx_same_object(fd, e.rootfd, "file"));
				close(fd);
			}
		}
	}
	/* A component over NAME_MAX: the filesystem's ENAMETOOLONG, also for
	 * O_CREAT, and nothing created. */
	memset(p, 'n', NAME_MAX + 1);
	p[NAME_MAX + 1] = '\0';
	for (int way = 0; way < RUN_MODES; way++) {
		if (way == RUN_KERNEL && !kernel)
			continue;
		int fd = open_way(way, e.rootfd, p, O_CREAT | O_WRONLY, 0600, B);
		ck_assert_msg(fd < 0 && errno == ENAMETOOLONG, "%s", mode_names[way]);
	}
	/* One of NAME_MAX bytes is an ordinary name (the walker's copy of a
	 * component holds it exactly). */
	p[NAME_MAX] = '\0';
	for (int way = 0; way < RUN_MODES; way++) {
		if (way == RUN_KERNEL && !kernel)
			continue;
		int fd = open_way(way, e.rootfd, p, O_CREAT | O_EXCL | O_WRONLY, 0600, B);
		ck_assert_msg(fd >= 0, "%s: %s", mode_names[way], strerror(errno));
		ck_assert(fx_same_object(fd, e.rootfd, p));
		close(fd);
		ck_assert_int_eq(unlinkat(e.rootfd, p, 0), 0);
	}
	free(p);
	char msg[512];
	ck_assert_msg(env_unchanged(&e, msg, sizeof(msg)), "%s", msg);
}
END_TEST

START_TEST(beneath_wrapper_and_cloexec)
{
	struct env e = core_env;
	int fd = safe_openat_beneath(e.rootfd, "lrel/c/file", O_RDONLY, 0);
	ck_assert_int_ge(fd, 0);
	ck_assert(fx_same_object(fd, e.rootfd, "a/b/c/file"));
	ck_assert_int_eq(fcntl(fd, F_GETFD) & FD_CLOEXEC, FD_CLOEXEC);
	close(fd);
	ck_assert_int_eq(safe_openat_beneath(e.rootfd, "labs", O_RDONLY, 0), -1);
	ck_assert_int_eq(errno, EXDEV);
	/* openat()'s habit: a mode without O_CREAT/O_TMPFILE is ignored (test_ops's
	 * short_forms has the cases; safe_openat2() keeps openat2()'s EINVAL). */
	fd = safe_openat_beneath(e.rootfd, "file", O_RDONLY, 0644);
	ck_assert_int_ge(fd, 0);
	close(fd);
	ck_assert_int_eq(safe_openat_beneath(e.rootfd, NULL, O_RDONLY, 0), -1);
	ck_assert_int_eq(errno, EFAULT);
	/* Negative int flags carry unknown high bits. */
	ck_assert_int_eq(safe_openat_beneath(e.rootfd, "file", (int)0x80000000u, 0), -1);
	ck_assert_int_eq(errno, EINVAL);
	/* AT_FDCWD as the root. */
	int cwd = open(".", O_PATH | O_DIRECTORY | O_CLOEXEC);
	ck_assert_int_ge(cwd, 0);
	ck_assert_int_eq(fchdir(e.rootfd), 0);
	for (int way = RUN_DEFAULT; way < RUN_MODES; way++) {
		uint64_t res = B | NM | (way == RUN_WALKER ? US : 0);
		fd = lib_open(AT_FDCWD, "a/b/up2/file", O_RDONLY, 0, res);
		ck_assert_int_ge(fd, 0);
		ck_assert(fx_same_object(fd, e.rootfd, "file"));
		close(fd);
		ck_assert_int_eq(lib_open(AT_FDCWD, "a/../..", O_RDONLY, 0, res), -1);
		ck_assert_int_eq(errno, EXDEV);
		fd = lib_open(AT_FDCWD, "/a/../../file", O_RDONLY, 0,
			      I | (way == RUN_WALKER ? US : 0));
		ck_assert_int_ge(fd, 0);
		ck_assert(fx_same_object(fd, e.rootfd, "file"));
		close(fd);
	}
	ck_assert_int_eq(fchdir(cwd), 0);
	close(cwd);
}
END_TEST

/* Deep paths: the walker holds O(1) descriptors however deep it goes. */
START_TEST(deep_path_constant_fds)
{
	struct env e;
	env_setup(&e);
	/* 600 levels "d/d/d/...": deeper than the walker's on-stack identity
	 * stack (256), within PATH_MAX. */
	char *p = malloc(PATH_MAX);
	ck_assert_ptr_nonnull(p);
	int dfd = openat(e.rootfd, ".", O_PATH | O_DIRECTORY | O_CLOEXEC);
	size_t n = 0;
	for (int i = 0; i < 600; i++) {
		ck_assert_int_eq(mkdirat(dfd, "d", 0755), 0);
		int nfd = openat(dfd, "d", O_PATH | O_DIRECTORY | O_CLOEXEC);
		ck_assert_int_ge(nfd, 0);
		close(dfd);
		dfd = nfd;
		memcpy(p + n, "d/", 2);
		n += 2;
	}
	ck_assert_int_eq(mkdirat(dfd, "x", 0755), 0);
	close(dfd);
	/* Down 600, then back up 600 with "..", then down again. */
	char *q = malloc(PATH_MAX * 2);
	ck_assert_ptr_nonnull(q);
	memcpy(q, p, n);
	size_t m = n;
	for (int i = 0; i < 600; i++)
		memcpy(q + m, "../", 3), m += 3;
	ck_assert_uint_lt(m + 10, PATH_MAX);
	memcpy(q + m, "file", 5);
	memcpy(p + n, "x", 2);
	bool kernel = kernel_has_openat2();
	for (int way = 0; way < RUN_MODES; way++) {
		if (way == RUN_KERNEL && !kernel)
			continue;
		int before = fx_fd_count();
		int fd = open_way(way, e.rootfd, q, 0, 0, B);
		ck_assert_msg(fd >= 0, "%s: %s", mode_names[way], strerror(errno));
		ck_assert(fx_same_object(fd, e.rootfd, "file"));
		ck_assert_int_eq(fx_fd_count(), before + 1);
		close(fd);
		fd = open_way(way, e.rootfd, p, O_PATH, 0, B);
		ck_assert_msg(fd >= 0, "%s: %s", mode_names[way], strerror(errno));
		close(fd);
	}
	free(p);
	free(q);
	env_teardown(&e);
}
END_TEST

/* Link bodies near PATH_MAX followed by a long rest of the path: the kernel
 * does not add them up against PATH_MAX, and the walker must grow its buffer
 * (lgrowA's body starts with lgrowB, whose body is long as well). */
START_TEST(long_link_bodies)
{
	struct env e = core_env;
	static const char *const heads[] = { "llongdir/", "lgrowA/", "lgrowA/lgrowA/../" };
	char *p = malloc(PATH_MAX);
	ck_assert_ptr_nonnull(p);
	bool kernel = kernel_has_openat2();
	for (size_t h = 0; h < sizeof(heads) / sizeof(heads[0]); h++) {
		size_t n = strlen(heads[h]);
		memcpy(p, heads[h], n);
		while (n + 2 + 6 < PATH_MAX - 1)
			memcpy(p + n, "./", 2), n += 2;
		memcpy(p + n, "inner", 6);
		for (int way = 0; way < RUN_MODES; way++) {
			if (way == RUN_KERNEL && !kernel)
				continue;
			int fd = open_way(way, e.rootfd, p, O_RDONLY, 0, h == 2 ? I : B);
			if (h == 2) {
				/* lgrowA/lgrowA: "dir/lgrowA" does not exist */
				ck_assert_msg(fd < 0 && errno == ENOENT, "%s: %s", mode_names[way],
					      fd < 0 ? errname(errno) : "an fd");
				continue;
			}
			ck_assert_msg(fd >= 0, "%s %s: %s", heads[h], mode_names[way],
				      errname(errno));
			ck_assert(fx_same_object(fd, e.rootfd, "dir/inner"));
			close(fd);
		}
	}
	free(p);
}
END_TEST

/* The kernel counts the links of an abandoned RCU walk again in the ref-walk
 * retry; ".." in the root under BENEATH abandons the RCU walk. 21 links then
 * "..": the answer is EXDEV; openat2 often says ELOOP (accepted from the raw
 * syscall only); the library must say EXDEV both ways. */
START_TEST(kernel_link_double_count)
{
	struct env e;
	env_setup(&e);
	build_chain(e.rootfd, "rc", ".", 30); /* rcN: N links to the root */
	bool kernel = kernel_has_openat2();
	static const char *const paths[] = { "rc21/../file", "rc30/..", "dch30/../../x" };
	for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
		for (int way = 0; way < RUN_MODES; way++) {
			if (way == RUN_KERNEL && !kernel)
				continue;
			int fd = open_way(way, e.rootfd, paths[i], O_RDONLY, 0, B);
			int err = fd < 0 ? errno : 0;
			if (fd >= 0)
				close(fd);
			if (way == RUN_KERNEL) {
				ck_assert_msg(fd < 0 && (err == EXDEV || err == ELOOP), "%s: %s",
					      paths[i], errname(err));
				continue;
			}
			ck_assert_msg(fd < 0 && err == EXDEV, "%s via %s: %s", paths[i],
				      mode_names[way], fd >= 0 ? "an fd" : errname(err));
		}
	}
	env_teardown(&e);
}
END_TEST


/* ------------------------------------------------------------------ magic links through procfs */

struct prow {
	const char *path; /* relative to /proc; %d is replaced by an fd number */
	uint64_t flags;
	uint64_t res;
	const char *obj; /* expected object (path relative to /proc, stat follows
			    all but the last link), or NULL and err */
	int err;
};

static const struct prow prows[] = {
	{ "self/fd/%d", RD, B, NULL, EXDEV },
	{ "self/fd/%d", RD, I, NULL, EXDEV },
	{ "self/fd/%d", RD, B | NM, NULL, ELOOP },
	{ "self/fd/%d", RD, I | NM | NX, NULL, ELOOP },
	{ "self/fd/%d", RD, B | NX, NULL, EXDEV },
	{ "self/fd/%d", PN, B, "self/fd/%d", 0 },
	{ "self/fd/%d", PN, B | NM, "self/fd/%d", 0 },
	{ "self/fd/%d/", PN, B, NULL, EXDEV },
	{ "self/fd/%d/file", RD, B, NULL, EXDEV },
	{ "self/fd/%d/file", RD, B | NS, NULL, ELOOP },
	{ "thread-self/fd/%d", RD, B, NULL, EXDEV },
	{ "self/exe", RD, B, NULL, EXDEV },
	{ "self/exe", RD, I | NM, NULL, ELOOP },
	{ "self/cwd", P, B, NULL, EXDEV },
	{ "self/root/etc", P, B, NULL, EXDEV },
	{ "self/ns/net", RD, B, NULL, EXDEV },
	{ "self/ns/net", RD, B | NM, NULL, ELOOP },
	{ "self/task/../fd/%d", P, B | NM, NULL, ELOOP },
	/* ordinary procfs symlinks are followed */
	{ "self", P | O_DIRECTORY, B | NM, "self/.", 0 },
	{ "self/status", RD, B | NM, "self/status", 0 },
	{ "thread-self/status", RD, I | NM, "thread-self/status", 0 },
	{ "mounts", RD, B | NM, "self/mounts", 0 },
	{ "mounts", PN, B, "mounts", 0 },
	{ "net/unix", RD, B | NM, "self/net/unix", 0 },
	{ "self/fd", P, B | NM, "self/fd", 0 },
	{ "self", RD, B | NS, NULL, ELOOP },
	{ "self/..", P, B, ".", 0 },
	{ "self/../..", P, B, NULL, EXDEV },
	/* procfs has no limit of its own on a name's length: an over-long one
	 * is just not there (where the kernel looks it up) */
	{ NAME256, RD, B, NULL, ENOENT },
	{ "self/" NAME256, RD, I, NULL, ENOENT },
	{ "self/" NAME256 "/..", P, B | NX, NULL, ENOENT },
	{ NAME256 "/", RD | O_CREAT, B, NULL, EISDIR },
};

/* Copy src to dst replacing "%d" by fd (no format strings from tables). */
static void subst_fd(char *dst, size_t size, const char *src, int fd)
{
	const char *at = strstr(src, "%d");
	if (!at) {
		snprintf(dst, size, "%s", src);
		return;
	}
	snprintf(dst, size, "%.*s%d%s", (int)(at - src), src, fd, at + 2);
}

static int run_proc_rows(int procfd, int somefd, bool kernel)
{
	int failures = 0;
	char path[NAME_MAX + 64], obj[64];
	for (size_t i = 0; i < sizeof(prows) / sizeof(prows[0]); i++) {
		const struct prow *r = &prows[i];
		subst_fd(path, sizeof(path), r->path, somefd);
		if (r->obj)
			subst_fd(obj, sizeof(obj), r->obj, somefd);
		for (int way = 0; way < RUN_MODES; way++) {
			if (way == RUN_KERNEL && !kernel)
				continue;
			int fd = open_way(way, procfd, path, r->flags, 0, r->res);
			int err = fd < 0 ? errno : 0;
			bool ok;
			if (r->obj) {
				struct stat a, b;
				ok = fd >= 0 && fstat(fd, &a) == 0 &&
				     fstatat(procfd, obj, &b, AT_SYMLINK_NOFOLLOW) == 0 &&
				     a.st_dev == b.st_dev && a.st_ino == b.st_ino;
			} else {
				ok = fd < 0 && err == r->err;
			}
			if (!ok) {
				failures++;
				fprintf(stderr, "proc row \"%s\" resolve=%#llx via %s: "
					"expected %s, got %s\n", path, (unsigned long long)r->res,
					mode_names[way], r->obj ? obj : errname(r->err),
					fd >= 0 ? "an fd" : errname(err));
			}
			if (fd >= 0)
				close(fd);
		}
	}
	return failures;
}

/* Twice: as the system numbers procfs, and (_i 1) with every procfs inode
 * made to look high by the test hook, which leaves the body test of the
 * magic-link heuristic alone to give the kernel's answers (issue 36). */
START_TEST(magic_links)
{
	struct env e = core_env;
	if (_i == 1)
		ck_assert_int_eq(setenv("SAFEOPEN_TEST_PROC_INO_HIGH", "1", 1), 0);
	int procfd = open("/proc", O_PATH | O_DIRECTORY | O_CLOEXEC);
	ck_assert_int_ge(procfd, 0);
	int failures = run_proc_rows(procfd, e.rootfd, kernel_has_openat2());
	ck_assert_msg(failures == 0, "%d failures (see stderr)", failures);
	/* /proc/self as the root: its fd/, exe, cwd links are magic. */
	int selffd = openat(procfd, "self", O_PATH | O_DIRECTORY | O_CLOEXEC);
	ck_assert_int_ge(selffd, 0);
	char p[32];
	snprintf(p, sizeof(p), "fd/%d", e.rootfd);
	for (int way = RUN_DEFAULT; way < RUN_MODES; way++) {
		uint64_t us = way == RUN_WALKER ? US : 0;
		ck_assert_int_eq(lib_open(selffd, p, O_PATH, 0, I | us), -1);
		ck_assert_int_eq(errno, EXDEV);
		ck_assert_int_eq(lib_open(selffd, "exe", O_RDONLY, 0, B | NM | us), -1);
		ck_assert_int_eq(errno, ELOOP);
		ck_assert_int_eq(lib_open(selffd, "cwd/", O_PATH, 0, B | us), -1);
		ck_assert_int_eq(errno, EXDEV);
		int fd = lib_open(selffd, "fd", O_RDONLY | O_DIRECTORY, 0, B | NM | us);
		ck_assert_int_ge(fd, 0);
		close(fd);
	}
	/* Objects that have no name: "pipe:[N]", "anon_inode:[eventfd]",
	 * "anon_inode:inotify" (no brackets), "socket:[N]". */
	int pp[2];
	ck_assert_int_eq(pipe2(pp, O_CLOEXEC), 0);
	int objs[] = { pp[0], eventfd(0, EFD_CLOEXEC), inotify_init1(IN_CLOEXEC),
		       socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0) };
	for (size_t k = 0; k < sizeof(objs) / sizeof(objs[0]); k++) {
		ck_assert_int_ge(objs[k], 0);
		snprintf(p, sizeof(p), "self/fd/%d", objs[k]);
		for (int way = 0; way < RUN_MODES; way++) {
			if (way == RUN_KERNEL && !kernel_has_openat2())
				continue;
			ck_assert_int_eq(open_way(way, procfd, p, O_RDONLY, 0, I), -1);
			ck_assert_msg(errno == EXDEV, "%s via %s: %s", p, mode_names[way],
				      strerror(errno));
			ck_assert_int_eq(open_way(way, procfd, p, O_RDONLY, 0, B | NM), -1);
			ck_assert_msg(errno == ELOOP, "%s via %s: %s", p, mode_names[way],
				      strerror(errno));
		}
		if (objs[k] != pp[0])
			close(objs[k]);
	}
	close(pp[0]);
	close(pp[1]);
	close(selffd);
	close(procfd);
	unsetenv("SAFEOPEN_TEST_PROC_INO_HIGH");
}
END_TEST

/* ------------------------------------------------------------------ the kernel selftest's tree */

/*
 * The tree of the kernel's tools/testing/selftests/openat2/resolve_test (a
 * tmpfs mount, absolute, "cheeky" and "garbage" links, links into /proc),
 * rebuilt here, and every one of its paths tried from five directories
 * (the root, the mount, /proc, "/" and a subdirectory) under both scopes
 * with each extra flag set and four kinds of open: raw openat2, the library
 * and the walker must agree on every one. The selftest's own rows without a
 * scope are run with each scope added (the library requires one). Creating
 * opens only run from directories inside the tree; each way removes what it
 * created. In a child: it needs its own mount namespace.
 */
static const char *const kself_spec[] = {
	"l procexe /proc/self/exe",
	"l procroot /proc/self/root",
	"d root",
	"d etc",
	"f etc/passwd x",
	"l creatlink /newfile3",
	"l reletc etc/",
	"l relsym etc/passwd",
	"l absetc /etc/",
	"l abssym /etc/passwd",
	"l abscheeky /cheeky",
	"d cheeky",
	"l cheeky/absself /",
	"l cheeky/self ../../root/",
	"l cheeky/garbageself /../../root/",
	"l cheeky/passwd ../cheeky/../etc/../etc/passwd",
	"l cheeky/abspasswd /../cheeky/../etc/../etc/passwd",
	"l cheeky/dotdotlink ../../../../../../../../../../../../../../etc/passwd",
	"l cheeky/garbagelink /../../../../../../../../../../../../../../etc/passwd",
	NULL,
};

/* What a way gave, comparable across ways: the object, "created", or the errno. */
static void kself_result(int fd, int err, char *buf, size_t size)
{
	struct stat st;
	if (fd < 0)
		snprintf(buf, size, "%s", errname(err));
	else if (fstat(fd, &st) < 0)
		snprintf(buf, size, "fstat: %s", errname(errno));
	else if (S_ISREG(st.st_mode) && (st.st_mode & 0777) == 0700) /* made by this open */
		snprintf(buf, size, "created");
	else
		snprintf(buf, size, "%llx:%llu", (unsigned long long)st.st_dev,
			 (unsigned long long)st.st_ino);
}

/* Remove the file an O_CREAT way made (mode 0700), wherever the path led. */
static void kself_uncreate(int rootfd, int dfd, const char *path, int fd)
{
	struct stat st, at;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || (st.st_mode & 0777) != 0700)
		return;
	while (*path == '/') /* IN_ROOT: relative to dfd */
		path++;
	if (fstatat(dfd, path, &at, AT_SYMLINK_NOFOLLOW) == 0 && at.st_ino == st.st_ino)
		(void)unlinkat(dfd, path, 0);
	else if (fstatat(rootfd, "newfile3", &at, 0) == 0 && at.st_ino == st.st_ino)
		(void)unlinkat(rootfd, "newfile3", 0); /* through creatlink */
}

struct kself_case {
	int rootfd, dfd;
	const char *dir, *path;
	uint64_t flags, resolve;
};

/* One case, every way; false (and, if `say`, a line on stderr) if they disagree. */
static bool kself_one(const struct kself_case *c, bool kernel, bool say)
{
	uint64_t mode = (c->flags & O_CREAT) ? 0700 : 0;
	char got[RUN_MODES][64];
	int first = kernel ? RUN_KERNEL : RUN_DEFAULT;
	for (int way = first; way < RUN_MODES; way++) {
		int fd = open_way(way, c->dfd, c->path, c->flags, mode, c->resolve);
		kself_result(fd, errno, got[way], sizeof(got[way]));
		if (fd >= 0) {
			if (c->flags & O_CREAT)
				kself_uncreate(c->rootfd, c->dfd, c->path, fd);
			close(fd);
		}
	}
	bool same = true;
	for (int way = first + 1; way < RUN_MODES; way++) {
		if (!strcmp(got[first], got[way]))
			continue;
		same = false;
		if (say)
				fprintf(stderr, "kself: from %s, %s flags %#llo resolve %#llx: %s %s, %s %s\n",
				c->dir, c->path, (unsigned long long)c->flags,
				(unsigned long long)c->resolve, mode_names[first], got[first],
				mode_names[way], got[way]);
	}
	return same;
}

static int kself_child(void *arg)
{
	const char *top = arg;
	if (fx_enter_mount_ns() < 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0) {
		fprintf(stderr, "kself: mount namespace: %s\n", strerror(errno));
		return 1;
	}
	int topfd = open(top, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (topfd < 0 || mkdirat(topfd, "kroot", 0755) < 0)
		return 1;
	int rootfd = openat(topfd, "kroot", O_PATH | O_DIRECTORY | O_CLOEXEC);
	close(topfd);
	if (rootfd < 0 || mkdirat(rootfd, "mnt", 0755) < 0)
		return 1;
	char mnt[PATH_MAX];
	snprintf(mnt, sizeof(mnt), "%s/kroot/mnt", top);
	if (mount("tmpfs", mnt, "tmpfs", MS_NOSUID | MS_NODEV, "size=1m") < 0) {
		fprintf(stderr, "kself: tmpfs: %s\n", strerror(errno));
		return 1;
	}
	static const char *const mnt_spec[] = { "l mnt/self ../mnt/", "l mnt/absself /mnt/", NULL };
	fx_build(rootfd, kself_spec);
	fx_build(rootfd, mnt_spec);
	int nullfd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	char fdlink[32];
	snprintf(fdlink, sizeof(fdlink), "self/fd/%d", nullfd);

	const char *const paths[] = {
		"/", "cheeky/absself", "abscheeky/absself", "..", "../root/", "cheeky/self",
		"abscheeky/self", "cheeky/garbageself", "abscheeky/garbageself", "root", "etc",
		"etc/passwd", "relsym", "cheeky/passwd", "abscheeky/passwd", "abssym", "/etc/passwd",
		"cheeky/abspasswd", "abscheeky/abspasswd", "cheeky/dotdotlink", "abscheeky/dotdotlink",
		"cheeky/garbagelink", "abscheeky/garbagelink", "/../../../../abscheeky/dotdotlink",
		"/../../../../abscheeky/garbagelink", "mnt", "mnt/", "mnt/.", "/proc/1", "/tmp",
		"procexe", "/proc/self/exe", "procroot/etc", "/proc/self/root/etc", ".",
		"reletc/passwd", "absetc/passwd", "reletc", "self", "absself", "self/self", "newfile1",
		"/newfile2", "/creatlink", fdlink,
	};
	static const char *const dirs[] = { ".", "mnt", "/proc", "/", "cheeky" };
	static const uint64_t extra[] = {
		0, RESOLVE_NO_XDEV, RESOLVE_NO_MAGICLINKS, RESOLVE_NO_SYMLINKS,
		RESOLVE_NO_XDEV | RESOLVE_NO_SYMLINKS,
	};
	static const uint64_t opens[] = { O_PATH, O_PATH | O_NOFOLLOW, O_RDONLY | O_DIRECTORY,
					  O_CREAT | O_RDONLY };
	bool kernel = kernel_has_openat2();
	long cases = 0;
	int failures = 0;
	for (size_t d = 0; d < sizeof(dirs) / sizeof(dirs[0]); d++) {
		bool inside = dirs[d][0] != '/';
		int dfd = openat(inside ? rootfd : AT_FDCWD, dirs[d],
				 O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (dfd < 0)
			return 1;
		for (size_t p = 0; p < sizeof(paths) / sizeof(paths[0]); p++) {
			for (size_t k = 0; k < 2 * sizeof(extra) / sizeof(extra[0]); k++) {
				uint64_t res = ((k & 1) ? RESOLVE_IN_ROOT : RESOLVE_BENEATH) |
					       extra[k / 2];
				for (size_t o = 0; o < sizeof(opens) / sizeof(opens[0]); o++) {
					if ((opens[o] & O_CREAT) && !inside)
						continue; /* never create outside the tree */
					const struct kself_case c = { rootfd, dfd, dirs[d], paths[p],
								      opens[o], res };
					cases++;
					if (!kself_one(&c, kernel, failures < 20))
						failures++;
				}
			}
		}
		close(dfd);
	}
	close(nullfd);
	close(rootfd);
	fprintf(stderr, "kself: %ld cases from the kernel selftest's tree, %d disagreements\n", cases,
		failures);
	return failures ? 1 : 0;
}

START_TEST(kernel_selftest_tree)
{
	if (!sb_can_mount()) {
		fx_skip("cannot mount here (not root, no user namespace)");
	}
	char *top = fx_mkdtemp("kself");
	ck_assert_int_eq(sb_run(kself_child, top), 0);
	ck_assert_int_eq(fx_rmtree(top), 0);
	free(top);
}
END_TEST

/* ------------------------------------------------------------------ no openat2 (seccomp) */

struct seccomp_arg {
	const struct env *e;
	int err;
};

static int seccomp_child(void *arg)
{
	const struct seccomp_arg *a = arg;
	struct sb_rule rule = SB_ALWAYS(SYS_openat2, a->err);
	bool kernel = kernel_has_openat2(); /* valgrind answers ENOSYS itself */
	if (sb_seccomp(&rule, 1) < 0) {
		perror("sb_seccomp");
		return 2;
	}
	/* The filter must really be in place. */
	if (kernel && (syscall(SYS_openat2, AT_FDCWD, NULL, NULL, 0) != -1 || errno != a->err)) {
		fprintf(stderr, "seccomp filter not effective\n");
		return 2;
	}
	int failures = run_table(a->e, 1U << RUN_DEFAULT, false, NULL);
	int procfd = open("/proc", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (procfd < 0)
		return 2;
	failures += run_proc_rows(procfd, a->e->rootfd, false);
	close(procfd);
	return failures ? 1 : 0;
}

START_TEST(without_openat2_enosys)
{
	struct env e = core_env;
	struct seccomp_arg a = { &e, ENOSYS };
	ck_assert_int_eq(sb_run(seccomp_child, &a), 0);
}
END_TEST

START_TEST(without_openat2_eperm)
{
	struct env e = core_env;
	struct seccomp_arg a = { &e, EPERM };
	ck_assert_int_eq(sb_run(seccomp_child, &a), 0);
}
END_TEST

/* ================================================================ the resolve bits every call takes
 * SAFE_RESOLVE_CACHED, the default scope of the operations, the short forms,
 * the forced walker and a kernel without openat2, REPORT_ESCAPE, and telling
 * an escape from a mount crossing: on the operations' tree (tests/lib/ops-env.c,
 * with the second root A2), fast path and walker (MODE(_i), bit 0 of the index). */

/* ---------------------------------------------------------------- SAFE_RESOLVE_CACHED */

START_TEST(resolve_cached)
{
	two_roots_open();
	struct safe_open_how how = {
		.flags = O_RDONLY,
		.resolve = SAFE_RESOLVE_BENEATH | SAFE_RESOLVE_CACHED,
	};
	/* Forced walker: it has no cache-only lookup, so it always says EAGAIN
	 * (the caller's documented retry without the bit). */
	how.resolve |= SAFE_RESOLVE_USERSPACE;
	ck_fails(safe_openat2(E.rootfd, "file", &how, sizeof(how)), EAGAIN);
	how.resolve &= ~SAFE_RESOLVE_USERSPACE;
	/* O_CREAT / O_TRUNC / O_TMPFILE: EAGAIN on both paths, as openat2. */
	how.flags = O_WRONLY | O_CREAT;
	how.mode = 0644;
	ck_fails(safe_openat2(E.rootfd, "newc", &how, sizeof(how)), EAGAIN);
	how.flags = O_WRONLY | O_TRUNC;
	how.mode = 0;
	ck_fails(safe_openat2(E.rootfd, "file", &how, sizeof(how)), EAGAIN);
	ck_assert(!exists_at(E.rootfd, "newc"));
	/* Fast path: a warm lookup succeeds or says EAGAIN (kernel's choice);
	 * never anything else. */
	how.flags = O_RDONLY;
	int fd = safe_openat2(E.rootfd, "a/b/file", &how, sizeof(how));
	if (fd >= 0)
		close(fd);
	else
		ck_assert_msg(errno == EAGAIN, "got %s", strerror(errno));
	/* The operations take no cache-only mode. */
	struct stat st;
	ck_fails(safe_fstatat_beneath(E.rootfd, "file", &st, SAFE_RESOLVE_CACHED), EINVAL);
	ck_fails(safe_mkdir_all_beneath(E.rootfd, "x", 0755, SAFE_RESOLVE_CACHED), EINVAL);
	two_roots_close();
}
END_TEST

/* ---------------------------------------------------------------- without openat2 */

/* In a child where openat2 is ENOSYS (a kernel before 5.6, or a seccomp
 * profile): the walker does all the resolution, also the final opens. */
static int no_openat2_child(void *arg)
{
	uint64_t m = *(const uint64_t *)arg;
#ifdef SYS_openat2
	const struct sb_rule rules[] = { SB_ALWAYS(SYS_openat2, ENOSYS) };
	CHILD_CHECK(sb_seccomp(rules, 1) == 0, "seccomp: %s", strerror(errno));
	/* The filter is in force: this child has no openat2. */
	errno = 0;
	CHILD_CHECK(syscall(SYS_openat2, AT_FDCWD, ".", NULL, 0) == -1 && errno == ENOSYS,
		    "openat2 still answers: %s", strerror(errno));
#endif
	char *before = fx_tree_snapshot(E.outside);
	CHILD_CHECK(before, "snapshot");
	int fd = safe_mkdir_all_beneath(E.rootfd, "link_dir/n1/n2/n3", 0755, m);
	CHILD_CHECK(fd >= 0, "mkdir_all: %s", strerror(errno));
	CHILD_CHECK(fx_same_object(fd, E.rootfd, "a/n1/n2/n3"), "mkdir_all: wrong directory");
	close(fd);
	errno = 0;
	CHILD_CHECK(safe_mkdir_all_beneath(E.rootfd, "up/new", 0755, m) == -1 &&
			    errno == ((m & SAFE_RESOLVE_IN_ROOT) ? ENOENT : EXDEV),
		    "mkdir_all up/new: %s", strerror(errno));
	errno = 0;
	CHILD_CHECK(safe_mkdir_all_beneath(E.rootfd, "a/missing/../x", 0755, m) == -1 &&
			    errno == ENOENT,
		    "mkdir_all ..: %s", strerror(errno));
	char name[NAME_MAX + 1];
	fd = safe_open_parent_beneath(E.rootfd, "link_dir/b/file", m, name, sizeof(name));
	CHILD_CHECK(fd >= 0 && !strcmp(name, "file"), "open_parent: %s", strerror(errno));
	CHILD_CHECK(fx_same_object(fd, E.rootfd, "a/b"), "open_parent: wrong parent");
	close(fd);
	CHILD_CHECK(safe_mknodat_beneath(E.rootfd, "link_dir/fifo", S_IFIFO | 0600, 0, m) == 0,
		    "mknod: %s", strerror(errno));
	CHILD_CHECK(safe_renameat_beneath(E.rootfd, "a/fifo", A2.fd, "link_dir/fifo", m) == 0,
		    "rename: %s", strerror(errno));
	CHILD_CHECK(safe_linkat_beneath(A2.fd, "a/fifo", E.rootfd, "a/fifo2", m) == 0, "link: %s",
		    strerror(errno));
	for (size_t i = 0; i < sizeof(ops_escapes) / sizeof(ops_escapes[0]); i++) {
		int want = (m & SAFE_RESOLVE_IN_ROOT) ? ENOENT : EXDEV;
		errno = 0;
		CHILD_CHECK(safe_renameat_beneath(E.rootfd, ops_escapes[i], A2.fd, "x", m) == -1 &&
				    errno == want,
			    "rename %s: %s", ops_escapes[i], strerror(errno));
		errno = 0;
		CHILD_CHECK(safe_linkat_beneath(E.rootfd, "file", A2.fd, ops_escapes[i], m) == -1 &&
				    errno == want,
			    "link to %s: %s", ops_escapes[i], strerror(errno));
	}
	char *after = fx_tree_snapshot(E.outside);
	CHILD_CHECK(after && !strcmp(before, after), "outside changed");
	free(before);
	free(after);
	return 0;
}

static int short_forms_check(void *arg);
#ifdef SYS_openat2
static int short_forms_no_openat2(void *arg)
{
	const struct sb_rule rules[] = { SB_ALWAYS(SYS_openat2, ENOSYS) };
	CHILD_CHECK(sb_seccomp(rules, 1) == 0, "seccomp: %s", strerror(errno));
	return short_forms_check(arg);
}
#endif

START_TEST(without_openat2)
{
	two_roots_open();
	uint64_t m = _i ? SAFE_RESOLVE_IN_ROOT : 0;
	ck_assert_int_eq(sb_run(no_openat2_child, &m), 0);
	two_roots_close();
}
END_TEST

/* ---------------------------------------------------------------- the short forms (issue 32) */

/* safe_openat_beneath() and safe_openat_in_root() take openat()'s arguments
 * and keep its habit of ignoring the mode without O_CREAT/O_TMPFILE, where
 * safe_openat2() keeps openat2()'s EINVAL. Run directly (fast path) and in a
 * child without openat2 (walker): the short forms take no USERSPACE bit. */
static int short_forms_check(void *arg)
{
	(void)arg;
	int fd;
	/* The mode is ignored without O_CREAT/O_TMPFILE, as by openat(). */
	fd = safe_openat_beneath(E.rootfd, "file", O_RDONLY, 0644);
	CHILD_CHECK(fd >= 0, "beneath, mode 0644 without O_CREAT: %s", strerror(errno));
	close(fd);
	fd = safe_openat_in_root(E.rootfd, "/file", O_RDONLY, 0644);
	CHILD_CHECK(fd >= 0, "in_root, mode 0644 without O_CREAT: %s", strerror(errno));
	close(fd);
	/* ... even an invalid one, as openat() ignores it. */
	fd = safe_openat_beneath(E.rootfd, "file", O_RDONLY, 0177777);
	CHILD_CHECK(fd >= 0, "beneath, mode 0177777 without O_CREAT: %s", strerror(errno));
	close(fd);
	/* safe_openat2() keeps openat2()'s rule. */
	struct safe_open_how how = { .flags = O_RDONLY, .mode = 0644,
				     .resolve = SAFE_RESOLVE_BENEATH };
	errno = 0;
	CHILD_CHECK(safe_openat2(E.rootfd, "file", &how, sizeof(how)) == -1 && errno == EINVAL,
		    "openat2 with a mode without O_CREAT: %s", strerror(errno));
	/* With O_CREAT the mode is used, and checked. */
	mode_t old = umask(0);
	fd = safe_openat_beneath(E.rootfd, "a/created", O_WRONLY | O_CREAT | O_EXCL, 0604);
	CHILD_CHECK(fd >= 0, "O_CREAT: %s", strerror(errno));
	close(fd);
	umask(old);
	struct stat st;
	CHILD_CHECK(fstatat(E.rootfd, "a/created", &st, 0) == 0 && (st.st_mode & 07777) == 0604,
		    "O_CREAT mode %o", (unsigned)st.st_mode);
	CHILD_CHECK(unlinkat(E.rootfd, "a/created", 0) == 0, "unlink");
	errno = 0;
	CHILD_CHECK(safe_openat_beneath(E.rootfd, "a/c2", O_WRONLY | O_CREAT, 010644) == -1 &&
			    errno == EINVAL && !exists_at(E.rootfd, "a/c2"),
		    "O_CREAT with a bad mode: %s", strerror(errno));
	errno = 0;
	CHILD_CHECK(safe_openat_in_root(E.rootfd, "a/c2", O_WRONLY | O_CREAT, 010644) == -1 &&
			    errno == EINVAL && !exists_at(E.rootfd, "a/c2"),
		    "in_root O_CREAT with a bad mode: %s", strerror(errno));
	/* IN_ROOT: a URL path names the file; BENEATH refuses it. */
	static const char *const url_paths[] = { "/a/b/file", "a/b/file", "/../a/b/file",
						 "//a/./b/../b/file", "/link_dir/b/file" };
	for (size_t i = 0; i < sizeof(url_paths) / sizeof(url_paths[0]); i++) {
		fd = safe_openat_in_root(E.rootfd, url_paths[i], O_RDONLY, 0);
		CHILD_CHECK(fd >= 0 && fx_same_object(fd, E.rootfd, "a/b/file"), "in_root %s: %s",
			    url_paths[i], strerror(errno));
		close(fd);
	}
	errno = 0;
	CHILD_CHECK(safe_openat_beneath(E.rootfd, "/a/b/file", O_RDONLY, 0) == -1 && errno == EXDEV,
		    "beneath /a/b/file: %s", strerror(errno));
	/* Escapes stay inside: ENOENT under IN_ROOT, EXDEV under BENEATH. */
	for (size_t i = 0; i < sizeof(ops_escapes) / sizeof(ops_escapes[0]); i++) {
		errno = 0;
		CHILD_CHECK(safe_openat_in_root(E.rootfd, ops_escapes[i], O_RDONLY, 0) == -1 &&
				    errno == ENOENT,
			    "in_root %s: %s", ops_escapes[i], strerror(errno));
		errno = 0;
		CHILD_CHECK(safe_openat_beneath(E.rootfd, ops_escapes[i], O_RDONLY, 0) == -1 &&
				    errno == EXDEV,
			    "beneath %s: %s", ops_escapes[i], strerror(errno));
	}
	/* Argument errors, exact. */
	errno = 0;
	CHILD_CHECK(safe_openat_in_root(E.rootfd, NULL, O_RDONLY, 0) == -1 && errno == EFAULT,
		    "NULL: %s", strerror(errno));
	errno = 0;
	CHILD_CHECK(safe_openat_in_root(E.rootfd, "", O_RDONLY, 0) == -1 && errno == ENOENT,
		    "empty: %s", strerror(errno));
	errno = 0;
	CHILD_CHECK(safe_openat_in_root(-1, "file", O_RDONLY, 0) == -1 && errno == EBADF,
		    "bad fd: %s", strerror(errno));
	errno = 0;
	CHILD_CHECK(safe_openat_in_root(E.rootfd, "file", O_PATH | O_RDWR, 0) == -1 &&
			    errno == EINVAL,
		    "O_PATH|O_RDWR: %s", strerror(errno));
	errno = 0;
	CHILD_CHECK(safe_openat_in_root(E.rootfd, "link_file", O_RDONLY | O_NOFOLLOW, 0) == -1 &&
			    errno == ELOOP,
		    "O_NOFOLLOW on a link: %s", strerror(errno));
	return 0;
}

START_TEST(short_forms)
{
	two_roots_open();
	char *before = fx_tree_snapshot(E.outside);
	if (_i == 0) {
		ck_assert_int_eq(short_forms_check(NULL), 0);
	} else {
#ifdef SYS_openat2
		ck_assert_int_eq(sb_run(short_forms_no_openat2, NULL), 0);
#else
		ck_assert_int_eq(short_forms_check(NULL), 0);
#endif
	}
	char *after = fx_tree_snapshot(E.outside);
	ck_assert_str_eq(before, after);
	free(before);
	free(after);
	two_roots_close();
}
END_TEST

/* ---------------------------------------------------------------- one scope default (issue 32) */

/*
 * Every exported function that takes a path resolves with BENEATH when its
 * flags name no scope, except safe_openat2(), which stands in for openat2()
 * (a resolve without scope is an unscoped lookup there: EINVAL here). An
 * absolute path tells the two scopes apart: BENEATH says EXDEV, IN_ROOT
 * finds "/file" in the root. Each row runs with flags 0 (want EXDEV) and
 * with IN_ROOT (want anything but EXDEV), on the fast path and the walker.
 */
typedef int (*scope_fn)(uint64_t f);
static int sc_fstatat(uint64_t f) { struct stat st; return safe_fstatat_beneath(E.rootfd, "/file", &st, f); }
static int sc_statx(uint64_t f) { struct statx sx; return safe_statx_beneath(E.rootfd, "/file", f, STATX_BASIC_STATS, &sx); }
static int sc_opendir(uint64_t f)
{
	DIR *d = safe_opendir_beneath(E.rootfd, "/a", f);
	if (!d)
		return -1;
	closedir(d);
	return 0;
}
static int sc_mkdirat(uint64_t f) { return safe_mkdirat_beneath(E.rootfd, "/sc_dir", 0755, f); }
static int sc_mkdir_all(uint64_t f)
{
	int fd = safe_mkdir_all_beneath(E.rootfd, "/sc_all/x", 0755, f);
	if (fd >= 0)
		close(fd);
	return fd < 0 ? -1 : 0;
}
static int sc_mknodat(uint64_t f) { return safe_mknodat_beneath(E.rootfd, "/sc_fifo", S_IFIFO | 0600, 0, f); }
static int sc_open_parent(uint64_t f)
{
	char name[NAME_MAX + 1];
	int fd = safe_open_parent_beneath(E.rootfd, "/a/x", f, name, sizeof(name));
	if (fd >= 0)
		close(fd);
	return fd < 0 ? -1 : 0;
}
static int sc_unlinkat(uint64_t f) { return safe_unlinkat_beneath(E.rootfd, "/link_file", f); }
static int sc_rmtree(uint64_t f) { return safe_rmtree_beneath(E.rootfd, "/empty", f); }
static int sc_rename(uint64_t f) { return safe_renameat_beneath(E.rootfd, "/a/b/file", A2.fd, "moved", f); }
static int sc_link(uint64_t f) { return safe_linkat_beneath(E.rootfd, "/file", A2.fd, "linked", f); }
static int sc_symlink(uint64_t f) { return safe_symlinkat_beneath("t", E.rootfd, "/sc_link", f); }
static int sc_readlink(uint64_t f)
{
	char b[16];
	return safe_readlinkat_beneath(E.rootfd, "/dangling_in", b, sizeof(b), f) < 0 ? -1 : 0;
}
static int sc_chmod(uint64_t f) { return safe_fchmodat_beneath(E.rootfd, "/file", 0644, f); }
static int sc_chown(uint64_t f) { return safe_fchownat_beneath(E.rootfd, "/file", (uid_t)-1, (gid_t)-1, f); }
static int sc_utimens(uint64_t f) { return safe_utimensat_beneath(E.rootfd, "/file", NULL, f); }
static int sc_getxattr(uint64_t f)
{
	char b[8];
	ssize_t n = safe_getxattr_beneath(E.rootfd, "/file", "user.none", b, sizeof(b), f);
	return n < 0 && errno != ENODATA && errno != EOPNOTSUPP ? -1 : 0;
}
static int sc_setxattr(uint64_t f)
{
	int r = safe_setxattr_beneath(E.rootfd, "/file", "user.sc", "v", 1, 0, f);
	return r < 0 && errno != EOPNOTSUPP ? -1 : 0;
}
static int sc_listxattr(uint64_t f)
{
	char b[256];
	ssize_t n = safe_listxattr_beneath(E.rootfd, "/file", b, sizeof(b), f);
	return n < 0 && errno != EOPNOTSUPP ? -1 : 0;
}
static int sc_removexattr(uint64_t f)
{
	int r = safe_removexattr_beneath(E.rootfd, "/file", "user.none", f);
	return r < 0 && errno != ENODATA && errno != EOPNOTSUPP ? -1 : 0;
}
static int sc_realpath(uint64_t f)
{
	char b[PATH_MAX];
	return safe_realpath_beneath(E.rootfd, "/a/b", b, sizeof(b), f) < 0 ? -1 : 0;
}
static int sc_tmpfile_xattr(uint64_t f)
{
	int fd = safe_tmpfile_xattr(E.rootfd, "/sc_tmp", 0644, NULL, 0, f);
	if (fd >= 0)
		close(fd);
	return fd < 0 ? -1 : 0;
}
static int sc_tmpfile_open(uint64_t f)
{
	struct safe_tmpfile *t;
	if (safe_tmpfile_open(E.rootfd, "/sc_tmp2", 0644, f, &t) < 0)
		return -1;
	return safe_tmpfile_discard(t);
}
static int sc_sweep(uint64_t f) { return safe_tmpfile_sweep_beneath(E.rootfd, "/a", 0, f, NULL) < 0 ? -1 : 0; }

static const struct {
	const char *name;
	scope_fn fn;
} scope_rows[] = {
	{ "fstatat", sc_fstatat },     { "statx", sc_statx },
	{ "opendir", sc_opendir },     { "mkdirat", sc_mkdirat },
	{ "mkdir_all", sc_mkdir_all }, { "mknodat", sc_mknodat },
	{ "open_parent", sc_open_parent }, { "unlinkat", sc_unlinkat },
	{ "rmtree", sc_rmtree },       { "renameat", sc_rename },
	{ "linkat", sc_link },         { "symlinkat", sc_symlink },
	{ "readlinkat", sc_readlink }, { "fchmodat", sc_chmod },
	{ "fchownat", sc_chown },      { "utimensat", sc_utimens },
	{ "getxattr", sc_getxattr },   { "setxattr", sc_setxattr },
	{ "listxattr", sc_listxattr }, { "removexattr", sc_removexattr },
	{ "realpath", sc_realpath },   { "tmpfile_xattr", sc_tmpfile_xattr },
	{ "tmpfile_open", sc_tmpfile_open }, { "tmpfile_sweep", sc_sweep },
};

START_TEST(scope_default)
{
	two_roots_open();
	uint64_t m = MODE(_i);
	for (size_t i = 0; i < sizeof(scope_rows) / sizeof(scope_rows[0]); i++) {
		errno = 0;
		int r = scope_rows[i].fn(m);
		ck_assert_msg(r == -1 && errno == EXDEV, "%s, no scope bit: %d %s (want EXDEV)",
			      scope_rows[i].name, r, strerror(errno));
		errno = 0;
		r = scope_rows[i].fn(m | SAFE_RESOLVE_BENEATH);
		ck_assert_msg(r == -1 && errno == EXDEV, "%s, BENEATH: %d %s (want EXDEV)",
			      scope_rows[i].name, r, strerror(errno));
		errno = 0;
		r = scope_rows[i].fn(m | SAFE_RESOLVE_IN_ROOT);
		ck_assert_msg(r == 0, "%s, IN_ROOT: %s (want success)", scope_rows[i].name,
			      strerror(errno));
	}
	/* The short forms say their scope in their name. */
	ck_fails(safe_openat_beneath(E.rootfd, "/file", O_RDONLY, 0), EXDEV);
	int fd = safe_openat_in_root(E.rootfd, "/file", O_RDONLY, 0);
	ck_ok(fd);
	close(fd);
	/* safe_openat2(): no scope bit is EINVAL (openat2's unscoped lookup). */
	struct safe_open_how how = { .flags = O_RDONLY, .mode = 0, .resolve = m };
	ck_fails(safe_openat2(E.rootfd, "file", &how, sizeof(how)), EINVAL);
	how.resolve = m | SAFE_RESOLVE_NO_SYMLINKS;
	ck_fails(safe_openat2(E.rootfd, "file", &how, sizeof(how)), EINVAL);
	two_roots_close();
}
END_TEST

/* ---------------------------------------------------------------- EXDEV: escape or mount crossing */

/* The header's recipe: EXDEV under NO_XDEV, then the same call without it
 * says EXDEV again for an escape and anything else for a mount crossing; for
 * rename/link, both parents resolve (safe_open_parent_beneath) when the EXDEV
 * is the syscall's "different mounts". In a private mount namespace. */
static int exdev_child(void *arg)
{
	uint64_t m = *(const uint64_t *)arg;
	CHILD_CHECK(fx_enter_mount_ns() == 0, "mount namespace: %s", strerror(errno));
	CHILD_CHECK(mkdirat(E.rootfd, "mnt", 0755) == 0, "mkdir mnt");
	char p[PATH_MAX];
	int n = snprintf(p, sizeof(p), "%s/mnt", E.root);
	CHILD_CHECK(n > 0 && (size_t)n < sizeof(p), "path");
	CHILD_CHECK(mount("tmpfs", p, "tmpfs", 0, "size=1m") == 0, "mount: %s", strerror(errno));
	int root = open(E.root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	CHILD_CHECK(root >= 0, "open root");
	struct safe_open_how how = {
		.flags = O_PATH,
		.resolve = SAFE_RESOLVE_BENEATH | SAFE_RESOLVE_NO_XDEV | m,
	};
	struct safe_open_how plain = how;
	plain.resolve &= ~SAFE_RESOLVE_NO_XDEV;
	/* A mount crossing: EXDEV, then success without NO_XDEV. */
	errno = 0;
	CHILD_CHECK(safe_openat2(root, "mnt", &how, sizeof(how)) == -1 && errno == EXDEV, "mnt");
	int fd = safe_openat2(root, "mnt", &plain, sizeof(plain));
	CHILD_CHECK(fd >= 0, "mnt without NO_XDEV: %s", strerror(errno));
	close(fd);
	/* An escape: EXDEV both times. */
	static const char *const esc[] = { "../outside", "up", "abs", "deep" };
	for (size_t i = 0; i < sizeof(esc) / sizeof(esc[0]); i++) {
		errno = 0;
		CHILD_CHECK(safe_openat2(root, esc[i], &how, sizeof(how)) == -1 && errno == EXDEV,
			    "%s", esc[i]);
		errno = 0;
		CHILD_CHECK(safe_openat2(root, esc[i], &plain, sizeof(plain)) == -1 &&
				    errno == EXDEV,
			    "%s without NO_XDEV", esc[i]);
	}
	/* rename/link: different mounts, both parents resolve. */
	char name[NAME_MAX + 1];
	errno = 0;
	CHILD_CHECK(safe_renameat_beneath(root, "file", root, "mnt/file", m) == -1 && errno == EXDEV,
		    "rename across mounts: %s", strerror(errno));
	errno = 0;
	CHILD_CHECK(safe_linkat_beneath(root, "file", root, "mnt/file", m) == -1 && errno == EXDEV,
		    "link across mounts: %s", strerror(errno));
	int a = safe_open_parent_beneath(root, "file", m, name, sizeof(name));
	int b = safe_open_parent_beneath(root, "mnt/file", m, name, sizeof(name));
	CHILD_CHECK(a >= 0 && b >= 0, "parents across mounts");
	close(a);
	close(b);
	/* rename: an escape, and a parent that does not resolve. */
	errno = 0;
	CHILD_CHECK(safe_renameat_beneath(root, "file", root, "up/file", m) == -1 && errno == EXDEV,
		    "rename escape");
	errno = 0;
	CHILD_CHECK(safe_open_parent_beneath(root, "up/file", m, name, sizeof(name)) == -1 &&
			    errno == EXDEV,
		    "parent of escape");
	close(root);
	return 0;
}

START_TEST(exdev_escape_or_mount)
{
	if (!sb_can_mount()) {
		fx_skip("needs a mount namespace (root or user namespaces)");
	}
	two_roots_open();
	uint64_t m = MODE(_i);
	ck_assert_int_eq(sb_run(exdev_child, &m), 0);
	two_roots_close();
}
END_TEST

/* ---------------------------------------------------------------- report escape */

/*
 * SAFE_RESOLVE_REPORT_ESCAPE under IN_ROOT: a ".." at the root (in the path
 * or in a link body) is EXDEV instead of a no-op; absolute paths and
 * absolute links still start at the root; ".." below the root climbs as
 * usual. Same answers on the default path and the walker (the flag always
 * walks), for safe_openat2() and an operation. Without the flag the same
 * paths stay inside (or are missing), which is what the flag reports.
 */
START_TEST(report_escape)
{
	two_roots_open();
	uint64_t m = MODE(_i);
	static const char *const spec[] = { "l climb ../../file", "l absfile /file",
					    "l rel a/b/../../file", NULL };
	fx_build(E.rootfd, spec);
	static const struct {
		const char *path;
		int err;          /* with the flag: 0 = opens `obj` */
		const char *obj;  /* what it opens (with the flag, or without) */
		int plain_err;    /* without the flag */
	} escape_rows[] = {
		{ "../file", EXDEV, "file", 0 },
		{ "/../file", EXDEV, "file", 0 },
		{ "a/../../file", EXDEV, "file", 0 },
		{ "climb", EXDEV, "file", 0 },
		{ "up_victim", EXDEV, NULL, ENOENT },
		{ "/file", 0, "file", 0 },
		{ "absfile", 0, "file", 0 },
		{ "a/b/../../file", 0, "file", 0 },
		{ "rel", 0, "file", 0 },
		{ "a/..", 0, ".", 0 },
		{ "..", EXDEV, ".", 0 },
		{ "abs_victim", 0, NULL, ENOENT },
	};
	for (size_t i = 0; i < N_ROWS(escape_rows); i++) {
		for (int flag = 0; flag < 2; flag++) {
			struct safe_open_how how = {
				.flags = O_PATH,
				.resolve = SAFE_RESOLVE_IN_ROOT | m |
					   (flag ? SAFE_RESOLVE_REPORT_ESCAPE : 0),
			};
			int want = flag ? escape_rows[i].err : escape_rows[i].plain_err;
			if (flag && !escape_rows[i].err)
				want = escape_rows[i].plain_err;
			errno = 0;
			int fd = safe_openat2(E.rootfd, escape_rows[i].path, &how, sizeof(how));
			if (want) {
				ck_assert_msg(fd < 0 && errno == want, "%s (flag %d): %d %s, want %s",
					      escape_rows[i].path, flag, fd, strerror(errno), strerror(want));
				continue;
			}
			ck_assert_msg(fd >= 0, "%s (flag %d): %s", escape_rows[i].path, flag,
				      strerror(errno));
			ck_assert_msg(fx_same_object(fd, E.rootfd, escape_rows[i].obj), "%s (flag %d): not %s",
				      escape_rows[i].path, flag, escape_rows[i].obj);
			close(fd);
		}
	}
	/* An operation takes the flag too (stat of "../file"). */
	struct stat st;
	ck_assert_int_eq(safe_fstatat_beneath(E.rootfd, "../file", &st,
					      SAFE_RESOLVE_IN_ROOT | SAFE_RESOLVE_REPORT_ESCAPE | m),
			 -1);
	ck_assert_int_eq(errno, EXDEV);
	ck_assert_int_eq(safe_fstatat_beneath(E.rootfd, "../file", &st, SAFE_RESOLVE_IN_ROOT | m), 0);
	/* With BENEATH it changes nothing: such a ".." is EXDEV already. */
	struct safe_open_how b = { .flags = O_PATH,
				   .resolve = SAFE_RESOLVE_BENEATH | SAFE_RESOLVE_REPORT_ESCAPE | m };
	errno = 0;
	ck_assert_int_eq(safe_openat2(E.rootfd, "a/../../file", &b, sizeof(b)), -1);
	ck_assert_int_eq(errno, EXDEV);
	int fd = safe_openat2(E.rootfd, "a/../file", &b, sizeof(b));
	ck_assert_int_ge(fd, 0);
	close(fd);
	two_roots_close();
}
END_TEST

/* ------------------------------------------------------------------ suite */

static Suite *resolve_suite(void)
{
	Suite *s = suite_create("resolve");
	TCase *tc = tcase_create("core");
	tcase_add_unchecked_fixture(tc, core_setup, core_teardown);
	tcase_add_checked_fixture(tc, fx_fd_setup, fx_fd_teardown);
	tcase_set_timeout(tc, 600);
	tcase_add_test(tc, case_table);
	tcase_add_test(tc, validation_and_error_order);
	tcase_add_test(tc, path_length_limits);
	tcase_add_test(tc, beneath_wrapper_and_cloexec);
	tcase_add_test(tc, deep_path_constant_fds);
	tcase_add_test(tc, long_link_bodies);
	tcase_add_test(tc, kernel_link_double_count);
	tcase_add_loop_test(tc, magic_links, 0, 2);
	tcase_add_test(tc, kernel_selftest_tree);
	tcase_add_test(tc, without_openat2_enosys);
	tcase_add_test(tc, without_openat2_eperm);
	suite_add_tcase(s, tc);

	TCase *bits = tcase_create("bits");
	tcase_add_checked_fixture(bits, fx_fd_setup, fx_fd_teardown);
	tcase_set_timeout(bits, 120);
	tcase_add_test(bits, resolve_cached);
	tcase_add_loop_test(bits, scope_default, 0, 2);
	tcase_add_loop_test(bits, report_escape, 0, 2);
	tcase_add_loop_test(bits, without_openat2, 0, 2);
	tcase_add_loop_test(bits, short_forms, 0, 2);
	tcase_add_loop_test(bits, exdev_escape_or_mount, 0, 2);
	suite_add_tcase(s, bits);
	return s;
}

FX_MAIN(resolve_suite)
