/* SPDX-License-Identifier: MIT */
/**
 * @file safeopen.h
 * @brief libsafeopen: open untrusted paths without leaving the directory you meant.
 *
 * Every function resolves a caller-supplied path relative to a directory file
 * descriptor (the "root") so that the resolution can never reach an object
 * outside that directory: not through "..", absolute paths, absolute or
 * relative symbolic links, procfs magic links, or a concurrent attacker who
 * renames directories while the walk is in progress.
 *
 * The semantics mirror Linux openat2(2) with its RESOLVE_* flags: for any
 * input the kernel accepts, the same object is opened, and for any input it
 * rejects, the same errno is returned, with the exceptions listed below.
 * Where the kernel offers openat2() the library uses it (the fast path);
 * elsewhere (kernels before 5.6, seccomp profiles that block the syscall) it
 * runs its own component-by-component, descriptor-relative walker with the
 * same results.
 *
 * This header needs nothing but itself: it compiles as C99 (and later) with
 * @c -pedantic and as C++11. The @c O_* and @c AT_* constants the functions
 * take come from <fcntl.h>; @c O_PATH and @c O_TMPFILE need @c _GNU_SOURCE
 * defined before the first system header.
 *
 * @par Conventions
 * - Return values follow the system call each function stands in for: a new
 *   file descriptor (or 0) on success, -1 with @c errno set on failure.
 * - Input descriptors are borrowed and never closed or modified; returned
 *   descriptors are owned by the caller and are always @c O_CLOEXEC.
 * - Flag words are @c uint64_t bit masks; unknown bits are rejected with
 *   @c EINVAL.
 * - The library keeps no per-root state; all functions are thread-safe.
 * - Scope: the operations, the tmpfile functions and the sweep take the
 *   @c SAFE_RESOLVE_* bits in their @c flags word and resolve with
 *   #SAFE_RESOLVE_BENEATH when neither BENEATH nor IN_ROOT is given (0 is the
 *   common case and the safe one). safe_openat2() is the exception: it
 *   stands in for openat2(2), where a @c resolve without a scope bit means an
 *   unscoped lookup, which this library never does, so it fails with
 *   @c EINVAL rather than give those bits another meaning.
 *   safe_openat_beneath() is BENEATH, safe_openat_in_root() IN_ROOT.
 * - Functions that return a resource (a descriptor, a @c DIR*) or the length
 *   of data that is not NUL-terminated (readlink, getxattr, listxattr,
 *   realpath) are declared @c warn_unused_result. The plain 0/-1 calls are
 *   not, as their system calls in glibc: their result can be ignored or cast
 *   to @c void.
 *
 * @par Threads, signals, fork
 * - Every function is thread-safe (no per-root state, no locks held across
 *   calls); a safe_tmpfile handle is used by one thread at a time.
 * - No function is async-signal-safe: they allocate (the walker's levels,
 *   the tmpfile handle, directory streams) and may call other non-signal-safe
 *   C library functions. Do not call them from a signal handler, nor in the
 *   child of a multi-threaded process between fork(2) and execve(2).
 * - What the kernel and the sandbox offer (openat2(), renameat2(),
 *   fchmodat2(), the *xattrat() calls, close_range(), linking an unnamed
 *   file) is probed on first use and cached for the process, in relaxed
 *   atomics: a failed probe moves a feature to its fallback, never the other
 *   way. A child made by fork(2) inherits what its parent learnt. A
 *   pre-forking server warms the cache before it forks by calling what its
 *   children will call, once, in the parent: for instance
 *   <tt>safe_openat_beneath(root, ".", O_PATH, 0)</tt> (the openat2() probe)
 *   and, if the children publish files, one safe_tmpfile_xattr() (the link
 *   probe, which depends on the credentials: warm it as the user the
 *   children run as). Without that, each child repeats the probes (one or
 *   two extra system calls per feature).
 *
 * @par What a failed call leaves behind
 * No descriptor, no temporary name, no half-created name, and no change at
 * all, except in these cases, where the syscall it stands for or the nature
 * of the operation makes it impossible:
 * - safe_mkdir_all_beneath(): the directories it created before the failing
 *   step remain (as with mkdir -p). #SAFE_TMPFILE_PARENTS removes the ones
 *   it created when the file is not published.
 * - safe_rmtree_beneath(): what it removed before the failure stays removed.
 * - safe_tmpfile_xattr() and safe_tmpfile_link() with #SAFE_TMPFILE_SYNC |
 *   #SAFE_TMPFILE_REPLACE: if only the final fsync of the directory fails,
 *   the new, complete file is already in place (the old one cannot come
 *   back) and -1 is returned with the errno of fsync(2): the name is right,
 *   its durability is not guaranteed. Without REPLACE the new name is
 *   removed again.
 * - safe_renameat_beneath() on kernels without renameat2(2) (before 3.15),
 *   #SAFE_RENAME_NOREPLACE of a non-directory: done as link + unlink, so
 *   both names exist for a moment; on failure the new name is removed again.
 * A crash (rather than a failed call) in the tmpfile functions can leave a
 * hidden ".safeopen-" name of the fallback strategy, never a partial file
 * under the final name.
 *
 * @par Same errno as the kernel: the documented differences
 * - @c O_CLOEXEC is always set on the descriptors the library returns.
 * - Without a usable openat2() the last component is opened with openat(2)
 *   plus @c O_NOFOLLOW (and @c O_DIRECTORY for a trailing '/'), so
 *   fcntl(@c F_GETFL) can show those two bits although the caller did not
 *   ask for them. Where openat2() exists (also with #SAFE_RESOLVE_USERSPACE)
 *   the flags are exactly the caller's.
 * - @c EXDEV means an escape and also, under #SAFE_RESOLVE_NO_XDEV, a mount
 *   crossing, as in the kernel; see "Escape or mount crossing" below.
 * - @c EAGAIN: openat2() fails a ".." step when anything is renamed anywhere
 *   on the system meanwhile. The library retries a bounded number of times
 *   and then lets the walker, whose ".." check is local to the directories it
 *   walked, decide: @c EAGAIN is rarer than with openat2() and means that the
 *   directories of this walk kept moving.
 * - @c ELOOP: for a path of more than 13 links the kernel may count some
 *   links more than once; the library then counts each once (40 at most).
 *   Every other @c ELOOP is the kernel's (safe_openat2(3)).
 * - #SAFE_RESOLVE_CACHED is always @c EAGAIN when the walker does the work.
 * - The library's own rules: exactly one of #SAFE_RESOLVE_BENEATH and
 *   #SAFE_RESOLVE_IN_ROOT (@c EINVAL otherwise), #SAFE_RESOLVE_NO_DOTDOT, and
 *   the argument checks each function lists under "Errors" (for example the
 *   @c ERANGE of a buffer that is too small).
 *
 * @par Escape or mount crossing?
 * Both are @c EXDEV, as in openat2(2). A mount crossing can only be the
 * reason when #SAFE_RESOLVE_NO_XDEV was given (the operations' own syscalls
 * also say @c EXDEV when rename or link names lie on two mounts). To tell
 * them apart, repeat the call without #SAFE_RESOLVE_NO_XDEV: @c EXDEV again
 * is an escape, anything else means the path stays beneath the root but
 * crosses a mount (the second call is a new resolution: if the tree can change
 * in between, use only its result, and only if crossing mounts is acceptable).
 * For safe_renameat_beneath() and safe_linkat_beneath(), resolve each parent
 * with safe_open_parent_beneath(): if both succeed, the @c EXDEV of the call
 * is the syscall's "different mounts".
 *
 * @code
 * fd = safe_openat2(root, path, &how, sizeof(how));   // how.resolve has NO_XDEV
 * if (fd < 0 && errno == EXDEV) {
 *         struct safe_open_how h2 = how;
 *         h2.resolve &= ~SAFE_RESOLVE_NO_XDEV;
 *         int probe = safe_openat2(root, path, &h2, sizeof(h2));
 *         bool escape = probe < 0 && errno == EXDEV;
 *         if (probe >= 0)
 *                 close(probe);
 * }
 * @endcode
 */
#ifndef SAFEOPEN_H
#define SAFEOPEN_H

#include <dirent.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>

#ifdef __cplusplus
extern "C" {
#endif

/** @cond INTERNAL */
#if defined(__GNUC__) && __GNUC__ >= 4
#define SAFE_PUBLIC __attribute__((visibility("default")))
#define SAFE_NODISCARD __attribute__((warn_unused_result))
#else
#define SAFE_PUBLIC
#define SAFE_NODISCARD
#endif
/** @endcond */

/* Declared by <time.h> (POSIX) and <sys/stat.h> (Linux, statx); used here
 * only through pointers, so strict C99 needs no feature macro. */
struct timespec;
struct statx;

/**
 * @defgroup safeopen_resolve Scoped path resolution
 * @brief safe_openat2() and safe_openat_beneath(): the heart of the library.
 * @{
 */

/**
 * @brief How to open a path: the userspace twin of the kernel's
 *        <tt>struct open_how</tt>.
 *
 * The structure is extensible in the same way as the kernel's: callers pass
 * its size, a smaller size than #SAFE_OPEN_HOW_SIZE_VER0 is rejected with
 * @c EINVAL, and a larger one is accepted only if every byte past the fields
 * this version knows is zero (otherwise @c E2BIG).
 */
struct safe_open_how {
	/** open(2) flags (@c O_RDONLY, @c O_CREAT, @c O_PATH, ...). @c O_CLOEXEC
	 *  is always added to the returned descriptor. */
	uint64_t flags;
	/** File mode for @c O_CREAT or @c O_TMPFILE; must be 0 otherwise. */
	uint64_t mode;
	/** A mask of @c SAFE_RESOLVE_* bits. Exactly one of
	 *  #SAFE_RESOLVE_BENEATH and #SAFE_RESOLVE_IN_ROOT must be set. */
	uint64_t resolve;
};

/** Size of the first published version of struct safe_open_how. */
#define SAFE_OPEN_HOW_SIZE_VER0 24
/** Size of struct safe_open_how as this header knows it. */
#define SAFE_OPEN_HOW_SIZE_LATEST SAFE_OPEN_HOW_SIZE_VER0

/** Fail with @c EXDEV when the walk would cross a mount point (bind mounts
 *  included, also when climbing with ".."). Same value as RESOLVE_NO_XDEV. */
#define SAFE_RESOLVE_NO_XDEV 0x01ULL
/** Fail with @c ELOOP on any procfs magic link (/proc/PID/fd/N, exe, cwd,
 *  root, ns/...). Same value as RESOLVE_NO_MAGICLINKS. */
#define SAFE_RESOLVE_NO_MAGICLINKS 0x02ULL
/** Fail with @c ELOOP on any symbolic link, except a trailing one opened with
 *  @c O_PATH|O_NOFOLLOW (which yields the link itself). Same value as
 *  RESOLVE_NO_SYMLINKS. */
#define SAFE_RESOLVE_NO_SYMLINKS 0x04ULL
/** The path must stay beneath the directory: absolute paths, absolute
 *  symlinks, and ".." that would climb above it fail with @c EXDEV; magic
 *  links fail with @c EXDEV. Same value as RESOLVE_BENEATH. */
#define SAFE_RESOLVE_BENEATH 0x08ULL
/** The directory acts as the root "/": absolute paths and absolute symlink
 *  targets restart at it, ".." at it stays there; magic links fail with
 *  @c EXDEV. Same value as RESOLVE_IN_ROOT. */
#define SAFE_RESOLVE_IN_ROOT 0x10ULL
/** Fail with @c EAGAIN unless the whole lookup can be done from the kernel's
 *  caches, without I/O or revalidation: for callers that must not block (an
 *  event loop that retries the open without this bit in a worker thread).
 *  As with openat2(2) it is also @c EAGAIN with @c O_CREAT, @c O_TRUNC or
 *  @c O_TMPFILE. Only the kernel can promise a cache-only lookup: whenever
 *  the userspace walker would do the work (no usable openat2(),
 *  #SAFE_RESOLVE_USERSPACE, #SAFE_RESOLVE_NO_DOTDOT) the answer is @c EAGAIN.
 *  Accepted by safe_openat2() only (the operations beneath a root reject it
 *  with @c EINVAL). Same value as RESOLVE_CACHED (Linux 5.12; kernels with an
 *  older openat2() answer @c EINVAL). */
#define SAFE_RESOLVE_CACHED 0x20ULL
/** The original (2014) O_BENEATH rule, which the kernel never merged: any
 *  ".." component, in the path or in the body of a followed symlink, fails
 *  with @c EXDEV, even one that would stay beneath. Combine with
 *  #SAFE_RESOLVE_BENEATH or #SAFE_RESOLVE_IN_ROOT. The kernel has no such
 *  rule, so resolutions with this bit always run the userspace walker. */
#define SAFE_RESOLVE_NO_DOTDOT (1ULL << 32)
/** Never call openat2(): always resolve with the library's own walker. A
 *  supported, deterministic switch: the object opened and the errno are those
 *  of the fast path (except where the kernel itself is not deterministic:
 *  see @c EAGAIN and @c ELOOP in the file description), and the behaviour is
 *  the same on every kernel and under every seccomp profile. Use it to get
 *  the behaviour of kernels without openat2() on any kernel (tests, bug
 *  reports), or to avoid openat2()'s system-wide @c EAGAIN on "..". Cost:
 *  about two system calls per path component instead of one call. */
#define SAFE_RESOLVE_USERSPACE (1ULL << 33)
/** With #SAFE_RESOLVE_IN_ROOT: report a climb above the root instead of
 *  hiding it. A ".." at the root, in the path or in a followed symlink, fails
 *  with @c EXDEV instead of staying at the root; an absolute path or an
 *  absolute symlink still starts at the root (that is no climb). For a server
 *  that wants to log "/../../etc/passwd" as an attack rather than answer 404
 *  for ROOT/etc/passwd. The kernel cannot report it, so such resolutions run
 *  the userspace walker. No effect with #SAFE_RESOLVE_BENEATH, where such a
 *  ".." is @c EXDEV anyway. */
#define SAFE_RESOLVE_REPORT_ESCAPE (1ULL << 34)

/** @cond INTERNAL */
/* Compile-time checks: the structure has its published size, and where the
 * kernel's uapi header has been included before this one, every bit the
 * kernel knows has the kernel's value. (The library's own build always
 * includes <linux/openat2.h> and checks.) */
#if defined(__cplusplus) && __cplusplus >= 201103L
#define SAFE_STATIC_ASSERT_(cond, msg) static_assert(cond, msg)
#elif defined(__STDC_VERSION__) && __STDC_VERSION__ >= 201112L
#define SAFE_STATIC_ASSERT_(cond, msg) _Static_assert(cond, msg)
#endif
#ifdef SAFE_STATIC_ASSERT_
SAFE_STATIC_ASSERT_(sizeof(struct safe_open_how) == SAFE_OPEN_HOW_SIZE_VER0,
                    "struct safe_open_how is SAFE_OPEN_HOW_SIZE_VER0 bytes");
#ifdef RESOLVE_NO_XDEV
SAFE_STATIC_ASSERT_(SAFE_RESOLVE_NO_XDEV == RESOLVE_NO_XDEV, "RESOLVE_NO_XDEV");
SAFE_STATIC_ASSERT_(SAFE_RESOLVE_NO_MAGICLINKS == RESOLVE_NO_MAGICLINKS,
                    "RESOLVE_NO_MAGICLINKS");
SAFE_STATIC_ASSERT_(SAFE_RESOLVE_NO_SYMLINKS == RESOLVE_NO_SYMLINKS, "RESOLVE_NO_SYMLINKS");
SAFE_STATIC_ASSERT_(SAFE_RESOLVE_BENEATH == RESOLVE_BENEATH, "RESOLVE_BENEATH");
SAFE_STATIC_ASSERT_(SAFE_RESOLVE_IN_ROOT == RESOLVE_IN_ROOT, "RESOLVE_IN_ROOT");
#endif
#ifdef RESOLVE_CACHED
SAFE_STATIC_ASSERT_(SAFE_RESOLVE_CACHED == RESOLVE_CACHED, "RESOLVE_CACHED");
#endif
#undef SAFE_STATIC_ASSERT_
#else
/* C99: a negative array size if the structure has another size. */
typedef char safe_open_how_size_check_[(sizeof(struct safe_open_how) ==
                                        SAFE_OPEN_HOW_SIZE_VER0) ? 1 : -1];
#endif
/** @endcond */

/**
 * @brief Open @p path relative to @p dirfd without ever leaving @p dirfd.
 *
 * The userspace equivalent of openat2(2), restricted to scoped resolution:
 * @p how->resolve must contain exactly one of #SAFE_RESOLVE_BENEATH and
 * #SAFE_RESOLVE_IN_ROOT. Results (the object opened, or the errno) are those
 * of openat2() with the same arguments, whether the kernel's openat2() or the
 * library's own walker does the work (see the file description for the
 * documented differences).
 *
 * @par Guarantee
 * The returned descriptor refers to an object that was beneath @p dirfd when
 * it was opened, and the open with the caller's real flags (@c O_CREAT,
 * @c O_TRUNC, the open of a FIFO or device) only ever happens on such an
 * object.
 *
 * @param dirfd  Directory the path is resolved in (the root), or
 *               @c AT_FDCWD. Borrowed.
 * @param path   The untrusted path.
 * @param how    Open flags, mode and resolve flags.
 * @param size   @c sizeof(*how) as the caller knows it.
 * @return A new @c O_CLOEXEC file descriptor, or -1 with @c errno set.
 *
 * @par Errors
 * - @c EINVAL: unknown bits in @p how->flags or @p how->resolve; neither or
 *   both of BENEATH and IN_ROOT; a nonzero mode without @c O_CREAT or
 *   @c O_TMPFILE; @c O_PATH with flags other than @c O_DIRECTORY,
 *   @c O_NOFOLLOW, @c O_CLOEXEC; @c O_TMPFILE without write access or with
 *   @c O_CREAT; @c O_CREAT|O_DIRECTORY; @p size smaller than
 *   #SAFE_OPEN_HOW_SIZE_VER0.
 * - @c E2BIG: @p size is larger than this version knows and the extra bytes
 *   are not all zero (or larger than a page).
 * - @c EFAULT: @p path or @p how is NULL.
 * - @c ENOENT: @p path is empty, or a component does not exist.
 * - @c EBADF: @p dirfd is not an open descriptor (and the path is relative,
 *   or absolute under IN_ROOT).
 * - @c ENOTDIR: @p dirfd, or a non-final component, is not a directory; a
 *   trailing slash names a non-directory.
 * - @c EXDEV: the path would escape @p dirfd (absolute path or symlink under
 *   BENEATH, ".." above the root, a magic link, any ".." with
 *   #SAFE_RESOLVE_NO_DOTDOT), or cross a mount under #SAFE_RESOLVE_NO_XDEV.
 * - @c ELOOP: more than 40 symbolic links followed; a symlink with
 *   #SAFE_RESOLVE_NO_SYMLINKS; a magic link with
 *   #SAFE_RESOLVE_NO_MAGICLINKS; a trailing symlink with @c O_NOFOLLOW
 *   (without @c O_PATH).
 * - @c EAGAIN: a concurrent rename or mount raced a ".." step and the bounded
 *   retries did not settle (retrying is safe); #SAFE_RESOLVE_CACHED and the
 *   lookup needs I/O, or @c O_CREAT / @c O_TRUNC / @c O_TMPFILE.
 * - @c ENAMETOOLONG: @p path is @c PATH_MAX bytes or longer, or a component
 *   is longer than the filesystem allows.
 * - @c EEXIST: @c O_CREAT|O_EXCL and the name exists (a symlink included).
 * - @c EISDIR: write access or @c O_CREAT on a directory; @c O_CREAT with a
 *   trailing slash.
 * - @c EACCES: a directory on the way is not searchable; a trailing symlink
 *   in a sticky world-writable directory refused by @c fs.protected_symlinks;
 *   the final open is not permitted.
 * - Any other error of openat(2) for the final open (@c EMFILE, @c ENOSPC,
 *   @c EROFS, @c ENXIO, @c ETXTBSY, ...).
 */
SAFE_PUBLIC SAFE_NODISCARD int safe_openat2(int dirfd, const char *path,
                                            const struct safe_open_how *how, size_t size);

/**
 * @brief Open @p path beneath @p dirfd: the simple form, with openat(2)'s
 *        arguments.
 *
 * safe_openat2() with
 * <tt>resolve = SAFE_RESOLVE_BENEATH | SAFE_RESOLVE_NO_MAGICLINKS</tt>, with
 * one habit of openat(2) that openat2(2) does not have: @p mode is ignored
 * unless @p flags has @c O_CREAT or @c O_TMPFILE (safe_openat2(), like
 * openat2(2), fails with @c EINVAL for a nonzero mode without them), so a
 * call ported from openat() keeps working unchanged.
 *
 * BENEATH refuses absolute paths with @c EXDEV: for a path whose '/' means
 * the root (a URL path, a path inside a container image) use
 * safe_openat_in_root().
 *
 * @par Guarantee
 * As safe_openat2(): the object opened was beneath @p dirfd.
 *
 * @code
 * int fd = safe_openat_beneath(rootfd, archive_member, O_RDONLY, 0);
 * if (fd < 0 && errno == EXDEV)
 *         return refuse("tries to leave the root");
 * @endcode
 *
 * @param dirfd Directory the path must stay beneath, or @c AT_FDCWD.
 * @param path  The untrusted path.
 * @param flags open(2) flags.
 * @param mode  Mode for @c O_CREAT / @c O_TMPFILE (07777 at most); ignored
 *              otherwise.
 * @return A new @c O_CLOEXEC file descriptor, or -1 with @c errno set.
 *
 * @par Errors
 * - @c EXDEV: the path would escape @p dirfd (".." above it, an absolute path
 *   or symlink, a magic link).
 * - @c ELOOP: too many symlinks, or a trailing symlink with @c O_NOFOLLOW.
 * - @c EINVAL: invalid @p flags (as safe_openat2()); a mode outside 07777
 *   with @c O_CREAT or @c O_TMPFILE.
 * - @c EFAULT: @p path is NULL.
 * - @c ENOENT: @p path is empty or a component does not exist.
 * - Every other error as safe_openat2().
 */
SAFE_PUBLIC SAFE_NODISCARD int safe_openat_beneath(int dirfd, const char *path, int flags,
                                                   mode_t mode);

/**
 * @brief Open @p path with @p dirfd as its "/": the simple form for URL
 *        paths and container trees.
 *
 * safe_openat2() with
 * <tt>resolve = SAFE_RESOLVE_IN_ROOT | SAFE_RESOLVE_NO_MAGICLINKS</tt>, and
 * openat(2)'s habit for @p mode as safe_openat_beneath(). A leading '/',
 * absolute symlinks and ".." at the top all stay at @p dirfd, so
 * "/docs/a.html", "docs/a.html" and "/../docs/a.html" name the same file, as
 * a web server's client means them. A path that tries to climb above the root
 * therefore does not fail with @c EXDEV: it names something inside, which
 * usually does not exist (@c ENOENT).
 *
 * @par Guarantee
 * As safe_openat2(): the object opened was beneath @p dirfd.
 *
 * @code
 * int fd = safe_openat_in_root(docroot, url_path, O_RDONLY | O_NONBLOCK, 0);
 * struct stat st;
 * if (fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode))
 *         send_file(fd, st.st_size);      // what was checked is what is sent
 * @endcode
 *
 * @param dirfd The root, or @c AT_FDCWD. Borrowed.
 * @param path  The untrusted path, absolute or relative.
 * @param flags open(2) flags.
 * @param mode  Mode for @c O_CREAT / @c O_TMPFILE (07777 at most); ignored
 *              otherwise.
 * @return A new @c O_CLOEXEC file descriptor, or -1 with @c errno set.
 *
 * @par Errors
 * - @c ENOENT: @p path is empty or a component does not exist (also what a
 *   path climbing above the root usually gets).
 * - @c EXDEV: a magic link (/proc/self/fd/N and the like).
 * - @c ELOOP: too many symlinks, or a trailing symlink with @c O_NOFOLLOW.
 * - @c EINVAL: invalid @p flags (as safe_openat2()); a mode outside 07777
 *   with @c O_CREAT or @c O_TMPFILE.
 * - @c EFAULT: @p path is NULL.
 * - Every other error as safe_openat2().
 */
SAFE_PUBLIC SAFE_NODISCARD int safe_openat_in_root(int dirfd, const char *path, int flags,
                                                   mode_t mode);

/** @} */

/**
 * @defgroup safeopen_tmpfile Files that appear with their extended attributes
 * @brief Create a file that no other process ever sees under its name
 *        without its xattrs.
 *
 * @par Guarantees
 * - Whoever looks up the final name sees either nothing (or, with
 *   #SAFE_TMPFILE_REPLACE, the complete old file) or the complete new file
 *   with every requested xattr and its final mode: never a file without its
 *   xattrs, and with REPLACE never a missing name.
 * - On failure, and after a crash at any point, nothing exists under the
 *   final name that was not there before. A failed call removes every name it
 *   created; a process killed at the wrong moment can leave at most one
 *   hidden temporary name (see "Leftovers" below), never a half-made file
 *   under the final name.
 * - The result is the same whichever strategy is used: the mode is what
 *   open(@c O_CREAT, mode) would give in that directory (umask, or the
 *   directory's default ACL instead of the umask, set-group-ID directories,
 *   and the kernel's rules for dropping @c S_ISGID), the owner and group are
 *   those of a file the caller creates there, and the xattrs are exactly the
 *   requested ones (plus whatever the kernel or an LSM adds to every new file,
 *   such as an inherited access ACL or an SELinux label).
 *
 * @par Strategy 1: an unnamed file (preferred)
 * An @c O_TMPFILE|O_RDWR inode is created in the parent directory (the mode
 * is always passed to the kernel), then, in this order: the caller's content
 * and owner changes (two-phase form), the xattrs, the final mode, the fsync of
 * #SAFE_TMPFILE_SYNC, and only then a link under the final name:
 * linkat(@c AT_EMPTY_PATH) where the kernel permits it (@c CAP_DAC_READ_SEARCH,
 * or since Linux 6.10 a descriptor opened with the caller's own credentials),
 * else linkat(@c AT_SYMLINK_FOLLOW) of the descriptor's entry in
 * /proc/thread-self/fd, after checking that /proc is a real procfs. Which link
 * is possible is probed right after creation, before anything is written: an
 * unnamed file cannot switch to the fallback later. With
 * #SAFE_TMPFILE_REPLACE the file is linked under a hidden random name and
 * renamed over the target.
 *
 * @par Strategy 2: a hidden named temporary (fallback)
 * Used when the filesystem or kernel has no @c O_TMPFILE (@c EOPNOTSUPP,
 * @c EISDIR on kernels before 3.11, or a sandbox refusing it), when an unnamed
 * file could be linked neither way (no privilege for @c AT_EMPTY_PATH and no
 * procfs), or when the environment variable @c SAFEOPEN_NO_O_TMPFILE is set
 * to a value other than "0" (tests and benchmarks; ignored in set-user-ID
 * programs). A file named
 * ".safeopen-" followed by 16 random characters from [A-Za-z0-9] is created
 * with @c O_CREAT|O_EXCL|O_NOFOLLOW and mode 0600 in the same directory,
 * filled in as above, and moved onto the final name with
 * renameat2(@c RENAME_NOREPLACE) (rename(2) for REPLACE); where renameat2 is
 * unsupported, linkat(2) followed by unlinkat(2) of the hidden name. It keeps
 * mode 0600 until the last steps before the rename (final mode, ACLs, and
 * with #SAFE_TMPFILE_SYNC an fsync of the metadata, the data having been
 * synced while it was still 0600). The final mode comes from the kernel: when
 * the requested bits are not 0600, an empty probe file is created with them
 * under another hidden name, its mode read and the probe removed at once.
 *
 * @par Leftovers
 * A hidden name is visible in directory listings while it exists, and a
 * process killed meanwhile leaves it behind: the named fallback has it for
 * the whole call (two-phase: from safe_tmpfile_open() to the link), mode 0600
 * (an empty probe file with the requested mode for the instant of its
 * creation; the complete file with its final mode only between the final
 * chmod and the rename); #SAFE_TMPFILE_REPLACE of an unnamed file has it only
 * between linkat(2) and rename(2), the complete file with its final mode.
 * REPLACE cannot do without it: linkat(2) never replaces a name and
 * rename(2) needs a name to move. An unnamed file that was never linked
 * disappears with the process. safe_tmpfile_sweep_beneath() (CLI:
 * <tt>safeopen ROOT sweep</tt>) removes such leftovers once they are old
 * enough.
 *
 * @par Limit of invisibility
 * "Never visible" refers to the final name. Before publication an unnamed
 * file can still be reached through /proc/PID/fd by processes running as the
 * same user and by root. The fallback's hidden name can be seen by anyone who
 * may list the directory, but opened only by its owner (mode 0600) until the
 * final chmod right before the rename. Processes that
 * may write the directory can always create, rename or remove names in it
 * (the fallback checks that the hidden name is still its file before
 * publishing it); with a sticky directory they cannot touch the caller's
 * files.
 *
 * @par Order of the steps
 * write(2) and fchown(2) clear @c security.capability and the set-ID bits,
 * and an unprivileged owner cannot set @c user.* xattrs on a file without
 * owner write permission, so the file is created owner-readable and writable
 * (the kernel computes the umask or ACL result for the requested bits plus
 * those), content and owner come first, then the xattrs, then the final mode
 * (the kernel's result minus the owner bits added only for the work).
 * @c system.posix_acl_access and @c system.posix_acl_default, which define
 * the permission bits themselves, are set after the final mode.
 * @{
 */

/** @brief One extended attribute to set on a new file. */
struct safe_xattr {
	const char *name;  /**< Full name with namespace, e.g. "user.mime_type". */
	const void *value; /**< The value (may be NULL only when @c size is 0). */
	size_t size;       /**< Length of @c value in bytes (at most 65536). */
};

/** Atomically replace an existing file at the final name: the name always
 *  resolves to the complete old file or the complete new one. Without it, an
 *  existing name is @c EEXIST and nothing changes. A directory cannot be
 *  replaced (@c EISDIR); a symlink is replaced itself, never followed. */
#define SAFE_TMPFILE_REPLACE (1ULL << 48)
/** Make the data and the directory entry durable before returning: fsync(2)
 *  of the file before it is published, then fsync(2) of the directory (of an
 *  @c O_RDONLY descriptor; a directory the caller may not read is covered by
 *  syncfs(2) of the filesystem). Without it the file appears atomically but
 *  a crash may lose it or its data. */
#define SAFE_TMPFILE_SYNC (1ULL << 49)
/* (1ULL << 50) was SAFE_TMPFILE_NO_OTMPFILE before 1.0: the environment
 * variable SAFEOPEN_NO_O_TMPFILE does it for tests and benchmarks. */
/** safe_tmpfile_xattr() and safe_tmpfile_open(): create the missing
 *  directories of the path beneath the root first (mkdir -p, as
 *  safe_mkdir_all_beneath(), mode 0755 minus the umask). If the file is not
 *  published (a failed call, or safe_tmpfile_discard()), the directories this
 *  call created are removed again, deepest first, each only while it is
 *  empty and still the directory it created at the same place: one that
 *  someone else filled, moved or replaced meanwhile is left alone. */
#define SAFE_TMPFILE_PARENTS (1ULL << 51)

/**
 * @brief Create @p path beneath @p dirfd as a new, empty regular file that
 *        already carries @p xattrs when its name appears.
 *
 * The parent directory of @p path is resolved with the resolver; the
 * @c SAFE_RESOLVE_* bits in @p flags apply to it (#SAFE_RESOLVE_BENEATH when
 * neither BENEATH nor IN_ROOT is given). The last component must be an
 * ordinary name. The final mode is what open(@c O_CREAT, @p mode) would give
 * (umask or default ACL applied); owner and group follow the usual rules
 * (setgid directories respected). Everything is validated before anything is
 * created. See the group description for the strategies and the guarantees.
 *
 * If #SAFE_TMPFILE_SYNC is given and only the final directory sync fails,
 * the name is removed again (without REPLACE) or the new file stays in place
 * (with REPLACE: the old one cannot come back), and -1 is returned with the
 * errno of fsync(2).
 *
 * @param dirfd   Root directory, or @c AT_FDCWD. Borrowed.
 * @param path    Final path of the file, beneath @p dirfd.
 * @param mode    Permission bits, 07777 at most (0 and 0444 work; the
 *                returned descriptor is writable regardless).
 * @param xattrs  Attributes to set (may be NULL when @p nxattrs is 0).
 * @param nxattrs Number of entries in @p xattrs.
 * @param flags   @c SAFE_RESOLVE_* bits, #SAFE_TMPFILE_REPLACE,
 *                #SAFE_TMPFILE_SYNC, #SAFE_TMPFILE_PARENTS.
 * @return A new @c O_RDWR|O_CLOEXEC descriptor of the published file, owned
 *         by the caller, or -1 with @c errno set; on failure nothing exists
 *         under @p path (or the old file is untouched), no temporary name is
 *         left, no directory #SAFE_TMPFILE_PARENTS created, and no
 *         descriptor is leaked.
 * @par Errors
 * - @c EINVAL: unknown flag bits, or both BENEATH and IN_ROOT; @p mode
 *   outside 07777; an invalid xattr name (no "user.", "trusted.",
 *   "security." or "system." prefix followed by at least one character, or
 *   longer than 255 bytes: the library checks this itself, where the kernel
 *   would say @c ERANGE or @c EOPNOTSUPP) or a name given twice; a last
 *   component of "." or "..", or a path ending in '/' (including "/"); a
 *   value the kernel rejects (a malformed ACL or capability).
 * - @c E2BIG: an xattr value larger than 65536 bytes (as setxattr(2)).
 * - @c EFAULT: @p path is NULL, or @p xattrs is NULL with @p nxattrs > 0, or
 *   an entry has a NULL name or a NULL value with a nonzero size.
 * - @c ENOENT: @p path is empty, or a directory on the way does not exist
 *   (without #SAFE_TMPFILE_PARENTS; with it, a dangling symlink on the way).
 * - @c ENOTDIR: a component on the way is not a directory (with
 *   #SAFE_TMPFILE_PARENTS also one created concurrently as a non-directory).
 * - @c EEXIST: the name exists and #SAFE_TMPFILE_REPLACE was not given.
 * - @c EISDIR: #SAFE_TMPFILE_REPLACE and the name is a directory.
 * - @c EXDEV: the parent directory escapes @p dirfd.
 * - @c EACCES: the caller may not create files in the parent directory;
 *   @c system.posix_acl_default given for a regular file.
 * - @c EOPNOTSUPP: the filesystem does not support the xattr namespace or
 *   attribute (e.g. any @c user.* xattr on ramfs).
 * - @c ENOSPC: no room for the file or its xattrs (ext4 keeps the xattrs of
 *   an inode in about one block unless it has @c ea_inode).
 * - @c EPERM: the caller may not set an xattr (e.g. trusted.* unprivileged).
 * - Any other error of the resolver for the parent (@c ELOOP, @c ENOTDIR,
 *   @c ENAMETOOLONG, ...), of openat(2), fsetxattr(2), fchmod(2), linkat(2),
 *   renameat2(2), fsync(2).
 */
SAFE_PUBLIC SAFE_NODISCARD int safe_tmpfile_xattr(int dirfd, const char *path, mode_t mode,
                                                  const struct safe_xattr *xattrs, size_t nxattrs,
                                                  uint64_t flags);

/**
 * @brief An unpublished file of the two-phase form (opaque).
 *
 * Created by safe_tmpfile_open(), consumed by safe_tmpfile_link() on success
 * or by safe_tmpfile_discard(). It owns the file's descriptors (the one
 * safe_tmpfile_fd() lends to the caller and a private one), the parent
 * directory's descriptor, the strategy and (fallback) the hidden name until
 * then. Its layout is private, so it can grow without an ABI change. A handle
 * is not thread-safe: use it from one thread at a time.
 */
struct safe_tmpfile;

/**
 * @brief Phase one: create an unpublished file destined for @p path.
 *
 * Resolves the parent of @p path beneath @p dirfd and creates the file in it
 * with one of the two strategies (chosen now: an unnamed file cannot switch
 * strategy later). The caller gets the file's descriptor from
 * safe_tmpfile_fd(), writes content through it, may fchown(2) it and set
 * xattrs of its own on it, then calls safe_tmpfile_link() or
 * safe_tmpfile_discard(). Until then the file has no name (strategy 1:
 * fstat(2) shows @c st_nlink 0) or only its hidden name (strategy 2), and
 * mode 0600 (at least owner read and write for strategy 1).
 *
 * @code
 * struct safe_tmpfile *tmp;
 * if (safe_tmpfile_open(root, "uploads/report.pdf", 0644, 0, &tmp) < 0)
 *         return -1;
 * int fd = safe_tmpfile_fd(tmp);            // borrowed: never close it
 * if (write_all(fd, data, len) < 0) {
 *         safe_tmpfile_discard(tmp);
 *         return -1;
 * }
 * fd = safe_tmpfile_link(tmp, xattrs, nxattrs, 0);
 * if (fd < 0) {                            // the handle is still ours
 *         safe_tmpfile_discard(tmp);
 *         return -1;
 * }
 * close(fd);                               // now the caller's
 * @endcode
 *
 * @param dirfd Root directory, or @c AT_FDCWD. Borrowed.
 * @param path  Final path the file will be published under.
 * @param mode  Final permission bits (07777 at most), applied at publication
 *              as open(@c O_CREAT) would have applied them at creation.
 * @param flags @c SAFE_RESOLVE_* bits and #SAFE_TMPFILE_PARENTS (the
 *              directories it creates are removed again by
 *              safe_tmpfile_discard(), and kept by a successful
 *              safe_tmpfile_link()).
 * @param[out] tmpp Receives the handle on success; untouched on failure.
 * @return 0, or -1 with @c errno set (then nothing was created and no
 *         descriptor is left open).
 * @par Errors
 * - @c EINVAL: unknown flag bits (#SAFE_TMPFILE_REPLACE and
 *   #SAFE_TMPFILE_SYNC belong to safe_tmpfile_link()), or both BENEATH and
 *   IN_ROOT; @p mode outside 07777; a last component of ".", ".." or a path
 *   ending in '/'.
 * - @c EFAULT: @p path or @p tmpp is NULL.
 * - @c ENOMEM: the handle could not be allocated.
 * - @c EMFILE, @c ENFILE: no descriptor left (the handle needs three while
 *   it exists: the file twice and its directory; four with
 *   #SAFE_TMPFILE_PARENTS when it created a directory).
 * - Any other error of safe_tmpfile_xattr() for the parent and the creation
 *   (@c ENOENT, @c ENOTDIR, @c EXDEV, @c ELOOP, @c EACCES, @c ENOSPC, ...).
 */
SAFE_PUBLIC SAFE_NODISCARD int safe_tmpfile_open(int dirfd, const char *path, mode_t mode,
                                                 uint64_t flags, struct safe_tmpfile **tmpp);

/**
 * @brief The descriptor of a handle's file, lent to the caller.
 *
 * An @c O_RDWR|O_CLOEXEC descriptor of the unpublished file, the same number
 * on every call. It stays the handle's: do not close it (nor dup2(2) over
 * it). safe_tmpfile_link() makes this very number the caller's on success;
 * safe_tmpfile_discard() closes it. A caller that closed it anyway, or whose
 * number now belongs to another open file, is detected by both: they fail
 * with @c EBADF, publish nothing and remove the hidden name.
 *
 * @param tmp Handle from safe_tmpfile_open().
 * @return The descriptor, or -1 with @c errno set.
 * @par Errors
 * - @c EFAULT: @p tmp is NULL.
 * - @c EBADF: the handle no longer holds a file (safe_tmpfile_link()
 *   detected a misuse and released it).
 */
SAFE_PUBLIC SAFE_NODISCARD int safe_tmpfile_fd(const struct safe_tmpfile *tmp);

/**
 * @brief Phase two: set @p xattrs, apply the final mode, and publish.
 *
 * On success the handle is freed and the returned descriptor (the number
 * safe_tmpfile_fd() lent) belongs to the caller. On failure the handle stays
 * allocated and unpublished: the caller may retry (for example with
 * #SAFE_TMPFILE_REPLACE after @c EEXIST) or call safe_tmpfile_discard(), which
 * is always needed to free it. The xattrs a failed call managed to set stay
 * on the unpublished file (mode 0600 again for the named fallback). After a
 * failure of the final directory sync of #SAFE_TMPFILE_SYNC (see
 * safe_tmpfile_xattr()) another safe_tmpfile_link() fails with @c EINVAL; after
 * @c EBADF it fails with @c EBADF: only safe_tmpfile_discard() remains.
 *
 * Before anything else it checks that the caller's descriptor is still the
 * one it lent (open, same inode, same open file description where kcmp(2)
 * can tell): if not, it publishes nothing, removes the hidden name (if it is
 * still the file's), closes its own descriptors (never the caller's number,
 * which may now be another file's) and fails with @c EBADF.
 *
 * @param tmp     Handle from safe_tmpfile_open().
 * @param xattrs  Attributes to set before publication (may be NULL if 0).
 * @param nxattrs Number of entries in @p xattrs.
 * @param flags   #SAFE_TMPFILE_REPLACE and/or #SAFE_TMPFILE_SYNC.
 * @return The @c O_RDWR|O_CLOEXEC descriptor of the published file (the
 *         number safe_tmpfile_fd() returned), or -1 with @c errno set.
 * @par Errors
 * - @c EINVAL: unknown flag bits or an invalid xattr (see
 *   safe_tmpfile_xattr()); the handle is spent after a failed directory sync.
 * - @c EFAULT: @p tmp is NULL, or as safe_tmpfile_xattr() for @p xattrs.
 * - @c EBADF: the descriptor of safe_tmpfile_fd() was closed or its number
 *   reused (see above).
 * - @c EEXIST: the name exists and #SAFE_TMPFILE_REPLACE was not given.
 * - @c ENOENT: the parent directory was removed; fallback strategy: the
 *   hidden name no longer refers to the file (someone removed or replaced
 *   it). Nothing is published.
 * - Any other error of safe_tmpfile_xattr() for the xattrs, the mode, the
 *   fsync and the publication.
 */
SAFE_PUBLIC SAFE_NODISCARD int safe_tmpfile_link(struct safe_tmpfile *tmp,
                                                 const struct safe_xattr *xattrs, size_t nxattrs,
                                                 uint64_t flags);

/**
 * @brief Which xattr made the last safe_tmpfile_link() of @p tmp fail.
 *
 * After a safe_tmpfile_link() that failed (the handle stays usable), the
 * index in the @c xattrs array it was given of the attribute that
 * fsetxattr(2) refused (its errno is the one safe_tmpfile_link() reported),
 * so that a caller can report that attribute by name and try again without
 * it. safe_tmpfile_failed_xattr(3).
 *
 * @param tmp Handle from safe_tmpfile_open().
 * @return The index (0 or more), or -1 with @c errno set.
 * @par Errors
 * - @c ENODATA: the last safe_tmpfile_link() did not fail on an xattr (it
 *   succeeded, failed for another reason, or was never called).
 * - @c EFAULT: @p tmp is NULL.
 */
SAFE_PUBLIC ssize_t safe_tmpfile_failed_xattr(const struct safe_tmpfile *tmp);

/**
 * @brief Abandon an unpublished file: close it, remove any temporary name,
 *        free the handle. NULL is accepted and ignored.
 *
 * An unnamed file disappears with its descriptors. A hidden name is removed
 * only while it still refers to this file. The directories of
 * #SAFE_TMPFILE_PARENTS are removed as safe_tmpfile_xattr() does on failure. The descriptor of
 * safe_tmpfile_fd() is closed only if it is still the one lent (see
 * safe_tmpfile_link()); otherwise it is left alone and @c EBADF reported.
 *
 * @param tmp Handle from safe_tmpfile_open(), or NULL.
 * @return 0, or -1 with @c errno set; the handle is freed and its own
 *         descriptors are closed regardless.
 * @par Errors
 * - @c EBADF: the caller closed the descriptor of safe_tmpfile_fd() or its
 *   number was reused (the file is still discarded).
 * - Any error of unlinkat(2) if the hidden name could not be removed.
 */
SAFE_PUBLIC int safe_tmpfile_discard(struct safe_tmpfile *tmp);

/**
 * @brief Remove the leftover hidden names of this library from one directory.
 *
 * Resolves the directory @p path beneath @p dirfd (@c SAFE_RESOLVE_* bits as
 * for every operation; "." is @p dirfd itself) and removes every entry of it
 * that
 * - is named exactly ".safeopen-" followed by 16 characters from
 *   [A-Za-z0-9] (the names of safe_tmpfile_xattr() and
 *   safe_tmpfile_open()),
 * - is a regular file (never a symlink, which is not followed, a directory,
 *   or anything else), on the same mount as the directory (a mount point is
 *   never entered nor removed),
 * - and whose last change (the later of @c st_mtime and @c st_ctime) is at
 *   least @p min_age_seconds old (0: any age).
 *
 * Subdirectories are not visited. Each candidate is pinned first
 * (@c O_PATH|O_NOFOLLOW) and examined through that descriptor; right before
 * unlinkat(2) the name must still lead to the same inode. A process that may
 * rename entries of the directory can still swap another file in between
 * those two calls (Linux has no "unlink if this inode" call), but renaming a
 * file onto the name needs the same rights as removing it (write access to
 * the directory, and the sticky-bit ownership rule), so the swap gains it
 * nothing it could not do itself.
 *
 * Choose @p min_age_seconds longer than any write may take: a live writer's
 * hidden name that is removed makes its safe_tmpfile_link() fail with
 * @c ENOENT (nothing is published), and an unnamed file linked under a
 * hidden name for REPLACE lives there for two system calls.
 *
 * @param dirfd Root directory, or @c AT_FDCWD. Borrowed.
 * @param path  The directory to sweep, beneath @p dirfd ("." for itself).
 * @param min_age_seconds Minimum age of a leftover to remove.
 * @param flags @c SAFE_RESOLVE_* bits (no others).
 * @param[out] removed If not NULL, receives the number of names removed, on
 *         success and on failure alike (0 when nothing was).
 * @return The number of names removed (0 or more), or -1 with @c errno set
 *         to the first failure. When some leftovers could not be removed, the
 *         others still are: their count is in @p removed.
 * @par Errors
 * - @c EINVAL: unknown flag bits, or both BENEATH and IN_ROOT.
 * - @c EFAULT: @p path is NULL.
 * - @c ENOENT, @c ENOTDIR, @c EXDEV, @c ELOOP, @c ENAMETOOLONG, @c EAGAIN:
 *   as safe_opendir_beneath() for @p path.
 * - @c EACCES: the directory cannot be read, or a leftover cannot be removed
 *   (no write or search permission on the directory).
 * - @c EPERM: a leftover in a sticky directory belongs to someone else, or
 *   is immutable.
 * - @c EROFS, @c EBUSY, @c EIO: from unlinkat(2).
 * - @c EMFILE, @c ENFILE, @c ENOMEM: out of descriptors or memory.
 */
SAFE_PUBLIC int safe_tmpfile_sweep_beneath(int dirfd, const char *path,
                                           unsigned int min_age_seconds, uint64_t flags,
                                           unsigned int *removed);

/** @} */

/**
 * @defgroup safeopen_ops Operations beneath a root
 * @brief The rest of what a server does with untrusted paths.
 *
 * Each takes the same @c SAFE_RESOLVE_* bits as safe_openat2() in its
 * @c flags word (#SAFE_RESOLVE_BENEATH when neither BENEATH nor IN_ROOT is
 * given; both is @c EINVAL; #SAFE_RESOLVE_CACHED is @c EINVAL) plus its own
 * @c SAFE_* bits below; a bit that belongs to another operation is
 * @c EINVAL. All resolve the parent of the last component with the resolver
 * (fast path or walker, same results) and then act on the last component
 * with a *at() call that does not follow a trailing symlink unless
 * #SAFE_FOLLOW is given. With #SAFE_FOLLOW, and for a last component of "."
 * or ".." or a path ending in '/' (which the kernel resolves or follows by
 * itself), the whole path is resolved by the resolver and the operation acts
 * on the object's descriptor. safe_open_parent_beneath() gives callers the
 * same split for their own *at() calls.
 *
 * @par Guarantee (all operations)
 * Nothing outside the root is ever created, changed, removed or followed:
 * every object acted on was reached beneath the root by the resolver.
 *
 * #SAFE_RESOLVE_NO_XDEV covers the last component too, as in openat2(2): an
 * operation that reaches the object itself (stat, statx, opendir, readlink,
 * chmod, chown, utimens, the xattr functions, the old name of link,
 * realpath, the top of rmtree, the directories of mkdir_all) fails with
 * @c EXDEV when the last component is a mount point (a mount other than its
 * parent's: a tmpfs, a bind mount). Under #SAFE_RESOLVE_NO_XDEV these
 * operations always open the object with the resolver (@c O_PATH, plus
 * @c O_NOFOLLOW unless they follow) and act on that descriptor, so what was
 * checked is what is acted on; the xattr functions then take the verified
 * procfs route (see safe_getxattr_beneath()). Operations that only handle
 * the name in its parent (unlink, rmdir, rename, the new name of link and
 * symlink, mkdir, mknod, open_parent) never reach a mounted object and
 * answer as the kernel does for a mount point: @c EBUSY (@c EEXIST for a
 * creation; @c EISDIR / @c ENOTDIR where the object's kind is wrong first).
 *
 * Errors common to all, not repeated below: @c ENOENT for an empty path,
 * @c EFAULT for a NULL path or buffer, @c EINVAL for unknown flag bits or
 * both BENEATH and IN_ROOT, @c EBADF for a bad @p dirfd, and every error of
 * safe_openat2() for the resolution (@c EXDEV for an escape, @c ELOOP for
 * forbidden or too many links, @c ENOENT, @c ENOTDIR, @c EACCES,
 * @c ENAMETOOLONG, @c EAGAIN, @c EMFILE). The operation's own errors follow
 * its system call.
 * @{
 */

/** Follow a trailing symlink (still scoped to the root). Without it, the
 *  operation acts on the link itself (like @c AT_SYMLINK_NOFOLLOW). */
#define SAFE_FOLLOW (1ULL << 40)
/** safe_unlinkat_beneath(): remove a directory (like @c AT_REMOVEDIR). */
#define SAFE_REMOVEDIR (1ULL << 41)
/* (1ULL << 42) was SAFE_MKDIR_PARENTS before 1.0: use safe_mkdir_all_beneath(). */
/** safe_renameat_beneath(): fail with @c EEXIST if the new name exists. */
#define SAFE_RENAME_NOREPLACE (1ULL << 43)
/** safe_renameat_beneath(): atomically exchange the two names. */
#define SAFE_RENAME_EXCHANGE (1ULL << 44)
/** safe_rmtree_beneath(): also descend into and empty mount points found in
 *  the tree (by default they are left alone and the removal fails with
 *  @c EXDEV for them). */
#define SAFE_RMTREE_XDEV (1ULL << 45)
/** safe_symlinkat_beneath(), safe_mknodat_beneath(): atomically replace an
 *  existing non-directory at the name (a symlink is replaced itself, never
 *  followed): the new node is made under a hidden ".safeopen-" name in the
 *  same directory and renamed over the name, so a lookup sees the old object
 *  or the new one, never nothing. A directory is not replaced (@c EISDIR), a
 *  mount point neither (@c EBUSY). A crash between the two steps can leave
 *  the hidden name (safe_tmpfile_sweep_beneath() removes only regular
 *  files). */
#define SAFE_REPLACE (1ULL << 46)

/**
 * @brief mkdirat(2) beneath a root.
 *
 * The parent of @p path is resolved with the resolver; the last component is
 * created with mkdirat(2), which never follows it: a symlink there, dangling
 * or not, is @c EEXIST and nothing is created through it. A trailing '/' is
 * allowed, as in mkdir(2). To create missing parents too, use
 * safe_mkdir_all_beneath().
 *
 * @par Guarantee
 * The new directory, if any, is a new entry of a directory beneath @p dirfd.
 *
 * @param dirfd Root directory, or @c AT_FDCWD. Borrowed.
 * @param path  Directory to create.
 * @param mode  Permission bits (the umask or a default ACL applies).
 * @param flags @c SAFE_RESOLVE_* bits.
 * @return 0, or -1 with @c errno set.
 *
 * @par Errors
 * - @c EEXIST: the name exists (a symlink included; also "." and "..").
 * - @c ENOENT: a parent directory does not exist.
 * - Resolution errors of the parent (see the group); any other error of
 *   mkdirat(2) (@c EACCES, @c EROFS, @c ENOSPC, @c EDQUOT, @c EMLINK).
 */
SAFE_PUBLIC int safe_mkdirat_beneath(int dirfd, const char *path, mode_t mode, uint64_t flags);

/**
 * @brief mkdir -p beneath a root: create every missing directory of @p path
 *        and return a descriptor of the last one.
 *
 * Existing components are resolved with the resolver, with the scope given in
 * @p flags (symlinks among them are followed, scoped, unless
 * #SAFE_RESOLVE_NO_SYMLINKS). Each missing component is then created with
 * mkdirat(2) in the directory opened just before it and opened with
 * @c O_PATH|O_NOFOLLOW|O_DIRECTORY: a new component is never followed. A
 * directory created concurrently by someone else (@c EEXIST that opens as a
 * directory) is accepted; a symlink or non-directory created concurrently is
 * not followed. ".." may only appear in the part of @p path that already
 * exists. Every directory it creates gets @p mode (minus the umask, as
 * mkdir(2) applies it), parents included. Cost: one resolution of the path,
 * then about three system calls per missing component (mkdirat, openat,
 * close), on the fast path and on the walker alike.
 *
 * @par Guarantee
 * The returned descriptor is a directory beneath @p dirfd that @p path names,
 * and no directory is ever created outside @p dirfd.
 *
 * What a failure leaves: the directories this call created before the
 * failing step remain (as with mkdir -p); nothing else changes. A caller that
 * must undo them removes them with safe_unlinkat_beneath(#SAFE_REMOVEDIR),
 * deepest first, or safe_rmtree_beneath() of the first missing component.
 *
 * @code
 * int dir = safe_mkdir_all_beneath(rootfd, "users/alice/2024/06", 0750, 0);
 * if (dir < 0)
 *         return -1;
 * int fd = safe_openat_beneath(dir, "photo.jpg", O_WRONLY | O_CREAT | O_EXCL, 0640);
 * close(dir);
 * @endcode
 *
 * @param dirfd Root directory, or @c AT_FDCWD. Borrowed.
 * @param path  Directory to create, with its missing parents.
 * @param mode  Permission bits of every directory created (umask applies).
 * @param flags @c SAFE_RESOLVE_* bits.
 * @return A new @c O_PATH|O_DIRECTORY|O_CLOEXEC descriptor of the last
 *         directory (created or already there), or -1 with @c errno set.
 *
 * @par Errors
 * - @c EEXIST: the last component exists and is not a directory (nor a
 *   symlink to one), or was created concurrently as a non-directory.
 * - @c ENOTDIR: an intermediate component is not a directory (nor a symlink
 *   to one), or was created concurrently as a non-directory or a symlink.
 * - @c ENOENT: an intermediate component is a dangling symlink; a component
 *   before a ".." does not exist (nothing is created).
 * - @c EXDEV: the path escapes the root, or (#SAFE_RESOLVE_NO_XDEV) crosses a
 *   mount, the new components' parents included.
 * - @c EAGAIN: a component kept being removed between its creation and its
 *   open; or as safe_openat2().
 * - Resolution errors (see the group); any error of mkdirat(2) (@c EACCES,
 *   @c EROFS, @c ENOSPC, @c ENAMETOOLONG, @c EMLINK, ...).
 */
SAFE_PUBLIC SAFE_NODISCARD int safe_mkdir_all_beneath(int dirfd, const char *path, mode_t mode,
                                                      uint64_t flags);

/**
 * @brief open(2) with @c O_CREAT beneath a root, making the missing parents
 *        first (each with @p dir_mode), removed again if the open fails.
 *
 * @param dirfd    Root directory, or @c AT_FDCWD. Borrowed.
 * @param path     File to open or create.
 * @param oflags   open(2) flags with @c O_CREAT (@c O_CLOEXEC is added).
 * @param mode     Permission bits of a new file (umask applies).
 * @param dir_mode Permission bits of every directory created (umask applies).
 * @param flags    @c SAFE_RESOLVE_* bits.
 * @return A new descriptor, or -1 with @c errno set.
 *
 * @par Errors
 * - @c EINVAL: @p oflags without @c O_CREAT, or with @c O_DIRECTORY,
 *   @c O_PATH or @c O_TMPFILE; bits beyond 07777 in @p dir_mode.
 * - The errors of safe_mkdir_all_beneath() and safe_openat_beneath().
 *
 * See safe_create_all_beneath(3).
 */
SAFE_PUBLIC SAFE_NODISCARD int safe_create_all_beneath(int dirfd, const char *path, int oflags,
                                                       mode_t mode, mode_t dir_mode,
                                                       uint64_t flags);

/**
 * @brief mknodat(2) beneath a root: FIFOs, sockets, regular files and, where
 *        permitted, devices.
 *
 * The parent is resolved with the resolver; mknodat(2) creates the last
 * component and never follows it.
 *
 * @par Guarantee
 * The new node, if any, is a new entry of a directory beneath @p dirfd.
 *
 * @param dirfd Root directory, or @c AT_FDCWD. Borrowed.
 * @param path  Name to create.
 * @param mode  File type (@c S_IFIFO, @c S_IFREG or 0, @c S_IFSOCK,
 *              @c S_IFCHR, @c S_IFBLK) and permission bits (umask applies).
 * @param dev   Device number for @c S_IFCHR / @c S_IFBLK (see makedev(3)),
 *              else ignored.
 * @param flags @c SAFE_RESOLVE_* bits and #SAFE_REPLACE.
 * @return 0, or -1 with @c errno set.
 *
 * @par Errors
 * - @c EEXIST: the name exists (a symlink included; also "." and "..",
 *   and a name ending in '/', even with #SAFE_REPLACE).
 * - @c EISDIR: #SAFE_REPLACE and the name is a directory.
 * - @c EBUSY: #SAFE_REPLACE and the name is a mount point.
 * - @c EPERM: a device without @c CAP_MKNOD, or @c S_IFDIR in @p mode (use
 *   safe_mkdirat_beneath()).
 * - @c EINVAL: an unknown file type in @p mode.
 * - @c ENOENT: a parent does not exist; a trailing '/' on a missing name.
 * - Resolution errors of the parent (see the group); any other error of
 *   mknodat(2) (@c EACCES, @c EROFS, @c ENOSPC, ...).
 */
SAFE_PUBLIC int safe_mknodat_beneath(int dirfd, const char *path, mode_t mode, dev_t dev,
                                     uint64_t flags);

/**
 * @brief Split an untrusted path into a directory beneath the root and the
 *        last name, for callers who then use plain *at() system calls.
 *
 * Every component but the last is resolved with the resolver (so ".." and
 * symlinks keep the root's scope); the last one is copied into @p name
 * without its trailing slashes and is not looked up.
 *
 * @par Guarantee
 * The descriptor is a directory beneath @p dirfd and @p name is one plain
 * component (no '/', never "." or ".."), so a call relative to the descriptor
 * that does not follow @p name stays beneath @p dirfd: @c O_NOFOLLOW,
 * @c AT_SYMLINK_NOFOLLOW, or a call that never follows its last component
 * (mkdirat, mknodat, unlinkat, renameat2, symlinkat, linkat without
 * @c AT_SYMLINK_FOLLOW). A call that follows @p name can leave the root
 * through a symlink: use safe_openat2() for that.
 *
 * Since the name is copied without its trailing slashes, a caller for whom
 * "x/" must mean a directory checks the path itself.
 *
 * @code
 * char name[NAME_MAX + 1];
 * int dir = safe_open_parent_beneath(rootfd, untrusted, 0, name, sizeof(name));
 * if (dir < 0)
 *         return -1;
 * int r = fchownat(dir, name, uid, gid, AT_SYMLINK_NOFOLLOW);
 * close(dir);
 * @endcode
 *
 * @param dirfd Root directory, or @c AT_FDCWD. Borrowed.
 * @param path  The untrusted path.
 * @param flags @c SAFE_RESOLVE_* bits (#SAFE_RESOLVE_NO_XDEV applies to the
 *              parent; the last name is not looked up).
 * @param[out] name Receives the NUL-terminated last component (untouched on
 *              failure).
 * @param size  Size of @p name in bytes, the NUL included. The name is not
 *              checked against @c NAME_MAX: whether a longer name exists is
 *              the filesystem's answer.
 * @return A new @c O_PATH|O_DIRECTORY|O_CLOEXEC descriptor of the parent, or
 *         -1 with @c errno set.
 *
 * @par Errors
 * - @c EINVAL: the last component is "." or "..", or @p path names the root
 *   ("/" under IN_ROOT, "."): there is no name in a parent to act on.
 * - @c ERANGE: @p size is too small for the last component and its NUL
 *   (@p size 0 included), as getcwd(3).
 * - @c EFAULT: @p path is NULL, or @p name is NULL with a nonzero @p size.
 * - Resolution errors of the parent (see the group).
 */
SAFE_PUBLIC SAFE_NODISCARD int safe_open_parent_beneath(int dirfd, const char *path,
                                                        uint64_t flags, char *name, size_t size);

/**
 * @brief fstatat(2) beneath a root; does not follow a trailing symlink
 *        unless #SAFE_FOLLOW.
 *
 * @par Guarantee
 * The status is that of an object beneath @p dirfd.
 *
 * @param dirfd Root directory, or @c AT_FDCWD.
 * @param path  Object to stat.
 * @param[out] st Receives the status.
 * @param flags @c SAFE_RESOLVE_* bits and #SAFE_FOLLOW.
 * @return 0, or -1 with @c errno set.
 *
 * @par Errors
 * - @c EFAULT: @p path or @p st is NULL.
 * - @c ENOTDIR: @p path ends in '/' and does not name a directory.
 * - Resolution errors (see the group); any other error of fstatat(2).
 */
SAFE_PUBLIC int safe_fstatat_beneath(int dirfd, const char *path, struct stat *st, uint64_t flags);

/**
 * @brief statx(2) beneath a root; does not follow a trailing symlink unless
 *        #SAFE_FOLLOW.
 *
 * @par Guarantee
 * The status is that of an object beneath @p dirfd.
 *
 * @param dirfd Root directory, or @c AT_FDCWD.
 * @param path  Object to stat.
 * @param flags @c SAFE_RESOLVE_* bits and #SAFE_FOLLOW.
 * @param mask  @c STATX_* fields wanted, as statx(2).
 * @param[out] stx Receives the status.
 * @return 0, or -1 with @c errno set.
 *
 * @par Errors
 * - @c EFAULT: @p path or @p stx is NULL.
 * - @c EINVAL: @c STATX__RESERVED in @p mask.
 * - Resolution errors (see the group); any other error of statx(2).
 */
SAFE_PUBLIC int safe_statx_beneath(int dirfd, const char *path, uint64_t flags, unsigned int mask,
                                   struct statx *stx);

/**
 * @brief opendir(3) beneath a root.
 *
 * @par Guarantee
 * The stream lists a directory beneath @p dirfd.
 *
 * @param dirfd Root directory, or @c AT_FDCWD.
 * @param path  Directory to open (a trailing symlink is followed, scoped,
 *              unless #SAFE_RESOLVE_NO_SYMLINKS).
 * @param flags @c SAFE_RESOLVE_* bits; #SAFE_FOLLOW is accepted and changes
 *              nothing (a directory stream always follows, as opendir(3)),
 *              so one flag word with #SAFE_FOLLOW serves stat and opendir.
 * @return A directory stream (close with closedir(3)), or NULL with @c errno.
 *
 * @par Errors
 * - @c ENOTDIR: @p path is not a directory.
 * - @c EINVAL: an unknown bit.
 * - Resolution errors (see the group); any error of fdopendir(3)
 *   (@c ENOMEM).
 */
SAFE_PUBLIC SAFE_NODISCARD DIR *safe_opendir_beneath(int dirfd, const char *path, uint64_t flags);

/**
 * @brief unlinkat(2) beneath a root; never follows the last component.
 *
 * A symlink is removed itself, even with a trailing slash (which only
 * requires a directory, as unlinkat(2)).
 *
 * @par Guarantee
 * The name removed is an entry of a directory beneath @p dirfd.
 *
 * @param dirfd Root directory, or @c AT_FDCWD.
 * @param path  Name to remove.
 * @param flags @c SAFE_RESOLVE_* bits and #SAFE_REMOVEDIR.
 * @return 0, or -1 with @c errno set.
 *
 * @par Errors
 * - @c EISDIR: a directory without #SAFE_REMOVEDIR (also "." and "..").
 * - @c ENOTDIR: a non-directory with #SAFE_REMOVEDIR, or a trailing slash on
 *   a non-directory.
 * - @c ENOTEMPTY: the directory is not empty; a last component ".." with
 *   #SAFE_REMOVEDIR (as rmdir(2)).
 * - @c EINVAL: a last component "." with #SAFE_REMOVEDIR.
 * - @c EBUSY: @p path is "/" under #SAFE_RESOLVE_IN_ROOT with
 *   #SAFE_REMOVEDIR (the root itself), or a mount point.
 * - Resolution errors of the parent (see the group); any other error of
 *   unlinkat(2) (@c EACCES, @c EPERM, @c EROFS).
 */
SAFE_PUBLIC int safe_unlinkat_beneath(int dirfd, const char *path, uint64_t flags);

/**
 * @brief rm -r beneath a root.
 *
 * Removes @p path and, if it is a directory, everything below it, acting
 * only on single names relative to descriptors of directories it reached
 * from the top by single names (never the kernel's ".."): the walk of
 * safe_walk_open(3) in post-order. Never follows a symlink; never enters
 * another mount (bind mounts included; where a mount cannot be told, it
 * counts as one: @c EXDEV) unless #SAFE_RMTREE_XDEV. Bounded descriptors
 * (at most 62), memory O(depth). The reference, with
 * what a directory moved out during the call means: safe_rmtree_beneath(3).
 *
 * @par Guarantee
 * Only entries beneath @p dirfd are removed, and entries of directories
 * that were beneath it when entered (see the man page).
 *
 * @param dirfd Root directory, or @c AT_FDCWD.
 * @param path  Tree to remove.
 * @param flags @c SAFE_RESOLVE_* bits and #SAFE_RMTREE_XDEV.
 * @return 0, or -1 with @c errno set to the first error met (the removal
 *         goes on past entries it cannot remove; what was removed stays
 *         removed): @c EXDEV (a mount point, not entered), @c EBUSY,
 *         @c EINVAL, @c ENOTDIR, @c ENOTEMPTY, @c EMFILE,
 *         @c ENOMEM, resolution errors, errors of unlinkat(2) (see the man
 *         page).
 */
SAFE_PUBLIC int safe_rmtree_beneath(int dirfd, const char *path, uint64_t flags);

/**
 * @brief renameat2(2) with each name beneath its own root.
 *
 * @p oldpath is resolved beneath @p olddirfd and @p newpath beneath
 * @p newdirfd, each with the @c SAFE_RESOLVE_* bits of @p flags (pass the
 * same descriptor twice for one root). Neither last component is followed:
 * a symlink is renamed or replaced itself. Both names must be on the same
 * mount (@c EXDEV otherwise, from renameat2(2)).
 *
 * Where renameat2(2) does not exist (@c ENOSYS, Linux before 3.15): without
 * flags renameat(2); #SAFE_RENAME_NOREPLACE of a non-directory as linkat(2) +
 * unlinkat(2) (never replaces; both names exist for a moment);
 * #SAFE_RENAME_NOREPLACE of a directory and #SAFE_RENAME_EXCHANGE fail with
 * @c EINVAL.
 *
 * @par Guarantee
 * Both names are entries of directories beneath their own roots.
 *
 * @code
 * // Move a finished upload from the spool into the store (two roots).
 * if (safe_renameat_beneath(spoolfd, tmpname, storefd, "objects/ab/cdef",
 *                           SAFE_RENAME_NOREPLACE) < 0)
 *         return -1;
 * @endcode
 *
 * @param olddirfd Root of @p oldpath, or @c AT_FDCWD. Borrowed.
 * @param oldpath  Existing name.
 * @param newdirfd Root of @p newpath, or @c AT_FDCWD. Borrowed.
 * @param newpath  New name.
 * @param flags    @c SAFE_RESOLVE_* bits, #SAFE_RENAME_NOREPLACE or
 *                 #SAFE_RENAME_EXCHANGE.
 * @return 0, or -1 with @c errno set.
 *
 * @par Errors
 * - @c EINVAL: both NOREPLACE and EXCHANGE; a flag the filesystem (or,
 *   without renameat2, the fallback) cannot honour; a directory moved into
 *   itself.
 * - @c EEXIST: #SAFE_RENAME_NOREPLACE and @p newpath exists.
 * - @c EBUSY: a last component "." or "..", or a mount point.
 * - @c EXDEV: either path escapes its root, or the two names are on different
 *   mounts (see "Escape or mount crossing" in the file description).
 * - Resolution errors of either parent (see the group); any other error of
 *   renameat2(2) (@c ENOENT, @c ENOTDIR, @c EISDIR, @c ENOTEMPTY,
 *   @c EACCES, ...).
 */
SAFE_PUBLIC int safe_renameat_beneath(int olddirfd, const char *oldpath, int newdirfd,
                                      const char *newpath, uint64_t flags);

/**
 * @brief linkat(2) with each name beneath its own root.
 *
 * @p oldpath is resolved beneath @p olddirfd and @p newpath beneath
 * @p newdirfd, each with the @c SAFE_RESOLVE_* bits of @p flags (pass the
 * same descriptor twice for one root). A trailing symlink of @p oldpath is
 * linked itself unless #SAFE_FOLLOW; the new name is never followed.
 *
 * With #SAFE_FOLLOW the object is resolved by the resolver and linked from
 * its descriptor: linkat(@c AT_EMPTY_PATH) where the caller has
 * @c CAP_DAC_READ_SEARCH, else its own magic link in a verified procfs
 * (linkat(@c AT_SYMLINK_FOLLOW) of /proc/thread-self/fd/N).
 *
 * @par Guarantee
 * The object linked is beneath @p olddirfd and the new name is an entry of
 * a directory beneath @p newdirfd.
 *
 * @param olddirfd Root of @p oldpath, or @c AT_FDCWD. Borrowed.
 * @param oldpath  Existing object.
 * @param newdirfd Root of @p newpath, or @c AT_FDCWD. Borrowed.
 * @param newpath  New name.
 * @param flags    @c SAFE_RESOLVE_* bits and #SAFE_FOLLOW.
 * @return 0, or -1 with @c errno set.
 *
 * @par Errors
 * - @c EEXIST: @p newpath exists (a dangling symlink included; also "." and
 *   "..").
 * - @c EPERM: @p oldpath is a directory.
 * - @c EXDEV: either path escapes its root, or the two names are on different
 *   mounts.
 * - @c ENOENT (or @c EPERM): #SAFE_FOLLOW without @c CAP_DAC_READ_SEARCH and
 *   without a verified procfs (the answer of linkat(@c AT_EMPTY_PATH)).
 * - Resolution errors (see the group); any other error of linkat(2)
 *   (@c ENOENT, @c EACCES, @c EMLINK, ...).
 */
SAFE_PUBLIC int safe_linkat_beneath(int olddirfd, const char *oldpath, int newdirfd,
                                    const char *newpath, uint64_t flags);

/**
 * @brief symlinkat(2) beneath a root.
 *
 * @p target is stored exactly as given; whether it later leads outside the
 * root is what the resolver checks when the link is followed.
 *
 * @par Guarantee
 * The new link is an entry of a directory beneath @p dirfd.
 *
 * @param target   Link body (not resolved).
 * @param dirfd    Root directory, or @c AT_FDCWD.
 * @param linkpath Name of the new link.
 * @param flags    @c SAFE_RESOLVE_* bits and #SAFE_REPLACE.
 * @return 0, or -1 with @c errno set.
 *
 * @par Errors
 * - @c EEXIST: @p linkpath exists without #SAFE_REPLACE (also "." and "..",
 *   and a name ending in '/', even with it).
 * - @c EISDIR: #SAFE_REPLACE and @p linkpath is a directory.
 * - @c EBUSY: #SAFE_REPLACE and @p linkpath is a mount point.
 * - @c ENOENT: @p target is empty.
 * - @c EFAULT: @p target is NULL.
 * - Resolution errors of the parent (see the group); any other error of
 *   symlinkat(2).
 */
SAFE_PUBLIC int safe_symlinkat_beneath(const char *target, int dirfd, const char *linkpath,
                                       uint64_t flags);

/**
 * @brief readlinkat(2) beneath a root (reads the link itself).
 *
 * @par Guarantee
 * The body read is that of a symlink beneath @p dirfd.
 *
 * @param dirfd Root directory, or @c AT_FDCWD.
 * @param path  The symlink.
 * @param[out] buf Receives the body, not NUL-terminated (as readlink(2)).
 * @param size  Size of @p buf.
 * @param flags @c SAFE_RESOLVE_* bits.
 * @return Number of bytes placed in @p buf (the body is truncated to
 *         @p size, as readlink(2)), or -1 with @c errno set.
 *
 * @par Errors
 * - @c EINVAL: @p path is not a symlink ("." / ".." / a trailing '/'
 *   included), or @p size is 0.
 * - Resolution errors (see the group); any other error of readlinkat(2).
 */
SAFE_PUBLIC SAFE_NODISCARD ssize_t safe_readlinkat_beneath(int dirfd, const char *path, char *buf,
                                                           size_t size, uint64_t flags);

/**
 * @brief fchmodat(2) beneath a root.
 *
 * Uses fchmodat2(2) (Linux 6.6) on the parent and name, or on the object's
 * descriptor; on older kernels the object is pinned with
 * @c O_PATH|O_NOFOLLOW and changed through its own magic link in a verified
 * procfs.
 *
 * @par Guarantee
 * The object changed is beneath @p dirfd.
 *
 * @param dirfd Root directory, or @c AT_FDCWD.
 * @param path  Object to change.
 * @param mode  New permission bits.
 * @param flags @c SAFE_RESOLVE_* bits and #SAFE_FOLLOW.
 * @return 0, or -1 with @c errno set.
 *
 * @par Errors
 * - @c EOPNOTSUPP: the object is a symlink and #SAFE_FOLLOW was not given
 *   (Linux cannot change a symlink's mode).
 * - @c ENXIO: old kernel (no fchmodat2) and no verified procfs.
 * - Resolution errors (see the group); any other error of fchmodat(2)
 *   (@c EPERM, @c EROFS).
 */
SAFE_PUBLIC int safe_fchmodat_beneath(int dirfd, const char *path, mode_t mode, uint64_t flags);

/**
 * @brief fchownat(2) beneath a root.
 *
 * @par Guarantee
 * The object changed is beneath @p dirfd.
 *
 * @param dirfd Root directory, or @c AT_FDCWD.
 * @param path  Object to change (a trailing symlink itself unless
 *              #SAFE_FOLLOW).
 * @param owner New owner, or (uid_t)-1 to keep.
 * @param group New group, or (gid_t)-1 to keep.
 * @param flags @c SAFE_RESOLVE_* bits and #SAFE_FOLLOW.
 * @return 0, or -1 with @c errno set.
 *
 * @par Errors
 * - Resolution errors (see the group); any error of fchownat(2) (@c EPERM,
 *   @c EROFS).
 */
SAFE_PUBLIC int safe_fchownat_beneath(int dirfd, const char *path, uid_t owner, gid_t group,
                                      uint64_t flags);

/**
 * @brief utimensat(2) beneath a root.
 *
 * @par Guarantee
 * The object changed is beneath @p dirfd.
 *
 * @param dirfd Root directory, or @c AT_FDCWD.
 * @param path  Object to change (a trailing symlink itself unless
 *              #SAFE_FOLLOW).
 * @param times Two timespecs, access then modification time, as
 *              utimensat(2) (@c UTIME_NOW, @c UTIME_OMIT); NULL: now.
 * @param flags @c SAFE_RESOLVE_* bits and #SAFE_FOLLOW.
 * @return 0, or -1 with @c errno set.
 *
 * @par Errors
 * - @c EINVAL: invalid @p times.
 * - Resolution errors (see the group); any other error of utimensat(2)
 *   (@c EPERM, @c EACCES, @c EROFS).
 */
SAFE_PUBLIC int safe_utimensat_beneath(int dirfd, const char *path, const struct timespec *times,
                                       uint64_t flags);

/**
 * @brief getxattr(2) beneath a root (a trailing symlink itself unless
 *        #SAFE_FOLLOW).
 *
 * The four xattr functions use the *xattrat(2) calls (Linux 6.13) on the
 * parent and name with @c AT_SYMLINK_NOFOLLOW. With #SAFE_FOLLOW (or ".",
 * "..", a trailing '/') the object is resolved by the resolver and reached
 * through its own magic link in a verified procfs (the *xattrat() calls do
 * not take @c AT_EMPTY_PATH on @c O_PATH descriptors). On kernels before 6.13
 * every case goes through the procfs: the object is pinned with an
 * @c O_PATH descriptor and /proc/thread-self/fd/N is checked to be that
 * inode before the path-based call. Under #SAFE_RESOLVE_NO_XDEV the object is
 * always reached through its descriptor, hence through the procfs. Without a
 * verified procfs these routes fail with @c ENXIO.
 *
 * @par Guarantee
 * The attribute read is that of an object beneath @p dirfd.
 *
 * @param dirfd Root directory, or @c AT_FDCWD.
 * @param path  Object.
 * @param name  Attribute name.
 * @param[out] value Receives the value.
 * @param size  Size of @p value (0: return the size needed).
 * @param flags @c SAFE_RESOLVE_* bits and #SAFE_FOLLOW.
 * @return Length of the value, or -1 with @c errno set.
 *
 * @par Errors
 * - @c ENODATA: no such attribute.
 * - @c ERANGE: @p size is too small.
 * - @c ENXIO: no verified procfs where one is needed (see above).
 * - Resolution errors (see the group); any other error of getxattr(2)
 *   (@c EOPNOTSUPP, @c EACCES).
 */
SAFE_PUBLIC SAFE_NODISCARD ssize_t safe_getxattr_beneath(int dirfd, const char *path,
                                                         const char *name, void *value,
                                                         size_t size, uint64_t flags);

/**
 * @brief setxattr(2) beneath a root (a trailing symlink itself unless
 *        #SAFE_FOLLOW). See safe_getxattr_beneath() for the route taken.
 *
 * @par Guarantee
 * The object changed is beneath @p dirfd.
 *
 * @param dirfd Root directory, or @c AT_FDCWD.
 * @param path  Object.
 * @param name  Attribute name.
 * @param value Attribute value.
 * @param size  Length of @p value.
 * @param xattr_flags @c XATTR_CREATE, @c XATTR_REPLACE or 0, as setxattr(2).
 * @param flags @c SAFE_RESOLVE_* bits and #SAFE_FOLLOW.
 * @return 0, or -1 with @c errno set.
 *
 * @par Errors
 * - @c EEXIST / @c ENODATA: @c XATTR_CREATE and the attribute exists /
 *   @c XATTR_REPLACE and it does not.
 * - @c ENXIO: no verified procfs where one is needed.
 * - Resolution errors (see the group); any other error of setxattr(2)
 *   (@c EOPNOTSUPP, @c EPERM, @c ENOSPC, @c E2BIG, @c ERANGE).
 */
SAFE_PUBLIC int safe_setxattr_beneath(int dirfd, const char *path, const char *name,
                                      const void *value, size_t size, int xattr_flags,
                                      uint64_t flags);

/**
 * @brief listxattr(2) beneath a root (a trailing symlink itself unless
 *        #SAFE_FOLLOW). See safe_getxattr_beneath() for the route taken.
 *
 * @par Guarantee
 * The names listed are those of an object beneath @p dirfd.
 *
 * @param dirfd Root directory, or @c AT_FDCWD.
 * @param path  Object.
 * @param[out] list Receives the NUL-separated names.
 * @param size  Size of @p list (0: return the size needed).
 * @param flags @c SAFE_RESOLVE_* bits and #SAFE_FOLLOW.
 * @return Length of the list, or -1 with @c errno set.
 *
 * @par Errors
 * - @c ERANGE: @p size is too small.
 * - @c ENXIO: no verified procfs where one is needed.
 * - Resolution errors (see the group); any other error of listxattr(2).
 */
SAFE_PUBLIC SAFE_NODISCARD ssize_t safe_listxattr_beneath(int dirfd, const char *path, char *list,
                                                          size_t size, uint64_t flags);

/**
 * @brief removexattr(2) beneath a root (a trailing symlink itself unless
 *        #SAFE_FOLLOW). See safe_getxattr_beneath() for the route taken.
 *
 * @par Guarantee
 * The object changed is beneath @p dirfd.
 *
 * @param dirfd Root directory, or @c AT_FDCWD.
 * @param path  Object.
 * @param name  Attribute name.
 * @param flags @c SAFE_RESOLVE_* bits and #SAFE_FOLLOW.
 * @return 0, or -1 with @c errno set.
 *
 * @par Errors
 * - @c ENODATA: no such attribute.
 * - @c ENXIO: no verified procfs where one is needed.
 * - Resolution errors (see the group); any other error of removexattr(2).
 */
SAFE_PUBLIC int safe_removexattr_beneath(int dirfd, const char *path, const char *name,
                                         uint64_t flags);

/**
 * @brief Reopen a descriptor (typically @c O_PATH) with new open flags.
 *
 * Goes through procfs (/proc/thread-self/fd/N) after verifying that /proc is
 * a real procfs (filesystem magic and root inode), and checks that the
 * reopened object is the same inode as @p fd. Without a usable procfs it
 * fails with @c ENXIO rather than trust an unverified path. The open checks
 * permissions against the object as open(2) would (an @c O_PATH descriptor
 * grants nothing by itself). @c O_NOFOLLOW is accepted and ignored: the
 * object is already resolved; a descriptor of a symlink can only be reopened
 * with @c O_PATH (else @c ELOOP).
 *
 * @par Guarantee
 * The new descriptor refers to the same inode as @p fd.
 *
 * @code
 * int dir = safe_mkdir_all_beneath(rootfd, "spool/in", 0700, 0);  // O_PATH
 * int rd = safe_reopen(dir, O_RDONLY | O_DIRECTORY);              // to list it
 * @endcode
 *
 * @param fd    Descriptor to reopen. Borrowed.
 * @param flags New open(2) flags (@c O_CREAT, @c O_TMPFILE, @c O_EXCL are
 *              rejected); @c O_CLOEXEC is always added.
 * @return A new descriptor, or -1 with @c errno set.
 *
 * @par Errors
 * - @c EBADF: @p fd is not open.
 * - @c EINVAL: @c O_CREAT, @c O_EXCL, @c O_TMPFILE, an access mode of 3,
 *   unknown bits, @c O_PATH with flags other than @c O_DIRECTORY,
 *   @c O_NOFOLLOW, @c O_CLOEXEC.
 * - @c ELOOP: @p fd refers to a symlink and @p flags lack @c O_PATH.
 * - @c ENXIO: no verified procfs is available.
 * - @c EXDEV: the reopened object is not the object of @p fd.
 * - Any error of open(2) (@c EACCES, @c EISDIR, @c ENOTDIR, @c EMFILE, ...).
 */
SAFE_PUBLIC SAFE_NODISCARD int safe_reopen(int fd, int flags);

/**
 * @brief The canonical path of an object, relative to the root.
 *
 * Resolves @p path as safe_openat2() would (a trailing symlink is followed
 * unless #SAFE_RESOLVE_NO_SYMLINKS) and writes the path of the result
 * relative to @p dirfd, without "." / ".." / symlink components: "." for the
 * root itself, "a/b" otherwise.
 *
 * It fails exactly when safe_openat2() with @c O_PATH fails, with its errno
 * (so an absolute path under #SAFE_RESOLVE_BENEATH is @c EXDEV and an empty
 * path @c ENOENT whatever @p dirfd is).
 *
 * The name is the path the resolution itself took (the names it opened,
 * one at a time, from @p dirfd down), trusted only once resolved again from
 * @p dirfd to the same object: nothing above the root is opened or read,
 * and no permission beyond the resolution's is needed. For a file with
 * several hard links, the name the path reached is returned. The method:
 * safe_realpath_beneath(3).
 *
 * @par Guarantee
 * The result, resolved again from @p dirfd without following any symlink,
 * named the same object when the call returned.
 *
 * @param dirfd Root directory, or @c AT_FDCWD.
 * @param path  Path to canonicalize.
 * @param[out] buf Receives the NUL-terminated path.
 * @param size  Size of @p buf.
 * @param flags @c SAFE_RESOLVE_* bits.
 * @return Length of the path (excluding the NUL), or -1 with @c errno set.
 *
 * @par Errors
 * - @c ERANGE: @p buf is too small (@p size 0 included).
 * - @c EAGAIN: the tree kept changing while the path was being computed.
 * - @c ENAMETOOLONG: the canonical path is @c PATH_MAX or longer.
 * - Resolution errors as safe_openat2().
 */
SAFE_PUBLIC SAFE_NODISCARD ssize_t safe_realpath_beneath(int dirfd, const char *path, char *buf,
                                                         size_t size, uint64_t flags);

/** @} */

/**
 * @defgroup safeopen_walk Confined tree walks
 *
 * A tree walk beneath a root (find, du, chown -R, chmod -R, cp -a): every
 * directory is entered by a single name opened @c O_NOFOLLOW from its parent,
 * a symbolic link is reported and never followed, going back up never uses
 * the kernel's "..", and the number of descriptors is bounded whatever the
 * depth. Each entry comes with its parent's descriptor and its single name,
 * for *at() calls that act on exactly that entry. The reference is
 * safe_walk_open(3).
 * @{
 */

/** safe_walk_open(): do not enter a directory on another mount than its
 * parent (it is reported as #SAFE_WALK_MOUNT); like find -xdev. */
#define SAFE_WALK_XDEV (1ULL << 56)
/** safe_walk_open(): also report each directory after its entries
 * (#SAFE_WALK_POST). */
#define SAFE_WALK_POSTORDER (1ULL << 57)
/** safe_walk_open(): do not stat entries that are not directories when the
 * directory entry tells their type: their statx has only @c STATX_TYPE and
 * @c STATX_INO. */
#define SAFE_WALK_NO_STAT (1ULL << 58)
/** safe_walk_open(): the first entry with an error ends the walk:
 * safe_walk_next() returns -1 with that errno instead of reporting it. */
#define SAFE_WALK_STOP_ON_ERROR (1ULL << 59)

/** A directory, before its entries (its own descriptor is lent as @c fd). */
#define SAFE_WALK_PRE 1
/** A directory, after its entries (#SAFE_WALK_POSTORDER, or its listing
 * ended early: @c error says why). */
#define SAFE_WALK_POST 2
/** An entry that is not entered: not a directory (a symlink included), or a
 * directory that could not be opened (@c error). */
#define SAFE_WALK_LEAF 3
/** A directory on another mount, not entered because of #SAFE_WALK_XDEV. */
#define SAFE_WALK_MOUNT 4

/** @brief A walk in progress (opaque). */
struct safe_walk;

/** @brief One entry of a walk; valid until the next call on the walk. */
struct safe_walk_entry {
	const char *path;          /**< The start's path as given, then "/name" per level. */
	const char *name;          /**< Its name in @c dirfd ("." for a start without parent). */
	int dirfd;                 /**< Its parent's descriptor (lent): act with *at(dirfd, name). */
	int fd;                    /**< #SAFE_WALK_PRE / #SAFE_WALK_POST: the directory's own
	                                descriptor (lent, @c O_RDONLY); else -1. */
	unsigned int visit;        /**< #SAFE_WALK_PRE, #SAFE_WALK_POST, #SAFE_WALK_LEAF or
	                                #SAFE_WALK_MOUNT. */
	int error;                 /**< 0, or the errno of what failed for this entry. */
	size_t depth;              /**< 0 for the start. */
	const struct statx *stx;   /**< Its statx (@c stx_mask says which fields; 0 on error). */
};

/**
 * @brief Start a confined walk of the tree at @p path beneath @p dirfd.
 *
 * @param dirfd Root directory, or @c AT_FDCWD.
 * @param path  The start (resolved with the @c SAFE_RESOLVE_* bits; a
 *              trailing symlink is not followed: it is the walk's one entry).
 * @param flags @c SAFE_RESOLVE_* bits, #SAFE_WALK_XDEV, #SAFE_WALK_POSTORDER,
 *              #SAFE_WALK_NO_STAT, #SAFE_WALK_STOP_ON_ERROR.
 * @param[out] w The walk, for safe_walk_next(); free it with safe_walk_close().
 * @return 0, or -1 with @c errno set (resolution errors of the start,
 *         @c EINVAL unknown flags, @c ENOMEM).
 */
SAFE_PUBLIC SAFE_NODISCARD int safe_walk_open(int dirfd, const char *path, uint64_t flags,
                                              struct safe_walk **w);

/**
 * @brief The next entry of the walk: pre-order, each directory's entries in
 * the order the kernel lists them.
 *
 * @param w The walk from safe_walk_open().
 * @param[out] e Receives the entry (valid until the next call on @p w).
 * @return 1 with @p e filled, 0 at the end, -1 with @c errno set
 *         (#SAFE_WALK_STOP_ON_ERROR: the entry's error; @c EINVAL after that).
 */
SAFE_PUBLIC SAFE_NODISCARD int safe_walk_next(struct safe_walk *w, struct safe_walk_entry *e);

/**
 * @brief Do not enter the directory just reported as #SAFE_WALK_PRE.
 * @param w The walk from safe_walk_open().
 * @return 0, or -1 with @c EINVAL when the last entry was not a
 *         #SAFE_WALK_PRE.
 */
SAFE_PUBLIC int safe_walk_skip(struct safe_walk *w);

/**
 * @brief End a walk: closes its descriptors and frees it (NULL is a no-op).
 * @param w The walk from safe_walk_open(), or NULL.
 */
SAFE_PUBLIC void safe_walk_close(struct safe_walk *w);

/** @} */

/**
 * @brief The library's version string (for example "1.0.0").
 * @return A static, NUL-terminated string.
 */
SAFE_PUBLIC const char *safe_version(void);

#ifdef __cplusplus
}
#endif

#endif /* SAFEOPEN_H */
