/* SPDX-License-Identifier: MIT */
/*
 * mkdir -p beneath a root: safe_mkdir_all_beneath(), and the missing parents
 * of a file: safe_create_all_beneath() and SAFE_TMPFILE_PARENTS (through
 * so_make_parents()). The safety argument is at mkdir_all() below; the
 * resolver (open.c) does every multi-component lookup, this file only
 * single-name steps from directories it opened.
 */
#include "internal.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <linux/fs.h> /* RENAME_NOREPLACE */

/* The open of one directory for mkdir -p, never following a symlink. */
#ifndef SAFEOPEN_MUTATE_MKDIR_ALL_FOLLOW
#define SO_MKDIR_STEP_FLAGS (O_PATH | O_NOFOLLOW | O_DIRECTORY | O_CLOEXEC)
#else
#define SO_MKDIR_STEP_FLAGS (O_PATH | O_DIRECTORY | O_CLOEXEC)
#endif

/*
 * One step down from `cur` into the plain name `name` (no '/', not "." or
 * ".."), never following it. A plain name one level below a directory that is
 * beneath the root is beneath the root too, so openat() is enough, except
 * under NO_XDEV: then the resolver takes the step (it refuses a mount point
 * with EXDEV exactly as openat2 does). ENOTDIR: a non-directory or a symlink.
 */
static int mkdir_step(int cur, const char *name, uint64_t resolve)
{
	if (!(resolve & SAFE_RESOLVE_NO_XDEV))
		return openat(cur, name, SO_MKDIR_STEP_FLAGS);
	struct safe_open_how how = {
		.flags = SO_MKDIR_STEP_FLAGS,
		.mode = 0,
		.resolve = (resolve & ~SAFE_RESOLVE_IN_ROOT) | SAFE_RESOLVE_BENEATH,
	};
	return so_open_validated(cur, name, &how);
}

/* Fail with err at the component c of buf (a copy of the caller's path):
 * the diagnostic record names it (diag.c), as a resolution would. */
static int comp_fail(const char *buf, const struct so_comp *c, int err)
{
	if (so_diag_on())
		so_diag_path(buf, c->start, c->end - c->start, err);
	return so_fail(err);
}

/* Where the components that may be created start: just after the last ".."
 * component (which must exist: ".." is never created through), else at the
 * first component. *base_end is that offset in path, and how much of the
 * path forms the prefix to resolve first (0: none, resolve "." or "/");
 * *last_end the end of the last component other than "." (the directory that
 * gets the caller's mode). */
static void mkdir_all_base(const char *path, size_t *base_end, size_t *last_end)
{
	*base_end = 0;
	*last_end = 0;
	for (struct so_comp c = { 0, 0 }; so_comp_next(path, &c);) {
		int dots = so_comp_dots(path, &c);
		if (dots == 2)
			*base_end = c.end;
		if (dots != 1)
			*last_end = c.end;
	}
}

/* Room for every component of a path of len bytes and the top (cur, where
 * the first mkdirat happens), taken before it: running out of memory or
 * descriptors never leaves an unrecorded directory behind. */
static int made_alloc(struct so_made_dirs *made, int cur, size_t len)
{
	made->names = malloc(len + 1);
	made->steps = calloc(len / 2 + 1, sizeof(*made->steps));
	if (!made->names || !made->steps) {
		so_made_dirs_free(made);
		return so_fail(ENOMEM);
	}
	made->topfd = fcntl(cur, F_DUPFD_CLOEXEC, 0);
	if (made->topfd < 0) {
		int saved = errno;
		so_made_dirs_free(made);
		return so_fail(saved);
	}
	return 0;
}

/* Record the step into `name` (open as next) below the top, created by this
 * call or not. */
static int made_record(struct so_made_dirs *made, int next, const char *name, bool ours)
{
	struct so_made_step *st = &made->steps[made->n];
	st->off = made->n ? made->steps[made->n - 1].off +
				    strlen(made->names + made->steps[made->n - 1].off) + 1
			  : 0;
	if (so_ident_at(next, NULL, &st->id) < 0)
		return -1;
	/* Fits: names has len + 1 bytes for a path of len bytes, and each
	 * recorded component takes its length plus one (its '/' or the NUL). */
	memcpy(made->names + st->off, name, strlen(name) + 1);
	st->ours = ours;
	/* Held, so that the identity stays this directory's: an inode number
	 * is given again once the last reference to its inode is gone. Out of
	 * descriptors: recorded but never removed (fails closed, a leftover). */
#ifndef SAFEOPEN_MUTATE_MKDIR_UNDO_PIN
	st->fd = ours ? fcntl(next, F_DUPFD_CLOEXEC, 0) : -1;
#else
	st->fd = ours ? fcntl(next, F_DUPFD_CLOEXEC, 0) : -1;
	if (st->fd >= 0) { /* the identity stays, the inode is let go */
		close(st->fd);
		st->fd = INT_MAX;
	}
#endif
	made->n++;
	return 0;
}

void so_made_dirs_free(struct so_made_dirs *made)
{
	for (size_t k = 0; made->steps && k < made->n; k++)
		so_closep(&made->steps[k].fd);
	so_closep(&made->topfd);
	free(made->names);
	free(made->steps);
	made->names = NULL;
	made->steps = NULL;
	made->n = 0;
}

/* Open step k's directory again from the top, checking each level on the way
 * against the record. -1 (errno kept by the caller) when one was moved,
 * replaced or removed: nothing at or below it is touched. */
static int made_reach(const struct so_made_dirs *made, size_t k)
{
	int cur = fcntl(made->topfd, F_DUPFD_CLOEXEC, 0);
	for (size_t j = 0; cur >= 0 && j < k; j++) {
		int next = openat(cur, made->names + made->steps[j].off,
				  O_PATH | O_NOFOLLOW | O_DIRECTORY | O_CLOEXEC);
		so_close(cur);
		struct so_ident id;
		if (next >= 0 && (so_ident_at(next, NULL, &id) < 0 ||
				  !so_same_inode(&id, &made->steps[j].id))) {
			so_close(next);
			next = -1;
		}
		cur = next;
	}
	return cur;
}

/*
 * Remove the empty directory `name` of parent while it is the recorded inode
 * `rec`. No call removes a directory by descriptor, so some check must come
 * before an rmdir(2) by name; to keep that window off the name others work
 * with, the directory is first moved to a fresh hidden random name with
 * renameat2(RENAME_NOREPLACE), checked there, and removed there. A directory
 * swapped in at `name` after the first check is moved, found not ours and
 * put back (NOREPLACE: if the name was taken meanwhile, it stays under the
 * hidden name), never removed; one that is not empty any more (rmdir fails)
 * goes back to its name the same way. Without RENAME_NOREPLACE (ENOSYS):
 * rmdir by name right after the check.
 */
static void remove_level(int parent, const char *name, const struct so_ident *rec)
{
	struct so_ident id;
	bool ours = so_ident_at(parent, name, &id) == 0 && so_same_inode(&id, rec);
#ifdef SAFEOPEN_MUTATE_MKDIR_UNDO_RECHECK
	ours = true; /* mutation (tests only): removed whatever the name leads to */
#endif
	if (!ours)
		return;
	char hidden[SO_HIDDEN_LEN + 1];
	so_hidden_name(hidden);
	if (so_renameat2(parent, name, parent, hidden, RENAME_NOREPLACE) < 0) {
		if (errno == ENOSYS)
			(void)unlinkat(parent, name, AT_REMOVEDIR);
		return;
	}
	ours = so_ident_at(parent, hidden, &id) == 0 && so_same_inode(&id, rec);
#ifdef SAFEOPEN_MUTATE_MKDIR_UNDO_RECHECK
	ours = true;
#endif
	if (ours && unlinkat(parent, hidden, AT_REMOVEDIR) == 0)
		return;
	(void)so_renameat2(parent, hidden, parent, name, RENAME_NOREPLACE);
}

/*
 * Undo, deepest first. Safety argument: every directory acted on is reached
 * from topfd (which the resolver opened beneath the root) by single names
 * opened with O_NOFOLLOW|O_DIRECTORY, each checked to be the inode recorded
 * when this call made or met it, so the walk stays inside what this call
 * created. A directory is removed only with rmdir (empty ones only) and only
 * while it is the recorded inode (remove_level(): checked at its name, then
 * again under a hidden name it was moved to); a level that was moved or
 * replaced is left where it is with everything below it. The recorded
 * identities are of the directories this call's mkdirat() made (made_mkdir())
 * and held open (made_record()), so no other directory can show them. The
 * window between the last check and unlinkat() is on the hidden random name:
 * swapping another empty directory in there needs to learn that name and
 * write access to the parent, which is what removing it needs.
 */
void so_made_dirs_undo(struct so_made_dirs *made)
{
	int saved = errno;
	for (size_t k = made->n; made->topfd >= 0 && k-- > 0;) {
		if (!made->steps[k].ours || made->steps[k].fd < 0)
			continue;
		int parent = made_reach(made, k);
		if (parent < 0)
			continue;
		remove_level(parent, made->names + made->steps[k].off, &made->steps[k].id);
		so_close(parent);
	}
	so_made_dirs_free(made);
	errno = saved;
}

/*
 * Make the directory `name` in cur for a call that records what it made, and
 * open it: 0 with *next an O_PATH fd of the directory this call's mkdirat()
 * made (*ours: its identity may be trusted by the undo; *next is -1 where
 * the name was made directly, see below: the caller opens it), 1 when the
 * name exists already (made by someone else: *next -1), -1 with errno.
 *
 * Safety argument (issue 36): the undo removes what the record says this
 * call made, so the record must hold the directory mkdirat() made, not
 * whatever a later open of its name finds (another directory can be put at
 * the name in between). So the directory is made under a fresh hidden random
 * name, held by an open of that name, checked to be owned by our effective
 * uid (an attacker who learns the hidden name, with inotify say, and swaps
 * in a directory of its own in the one-call window gets it refused: it
 * stays, never ours), and only then moved to `name` with
 * renameat2(RENAME_NOREPLACE), which never replaces anything: from then on
 * the name led to what we hold, and what another puts there later is not
 * what we hold. A filesystem that records someone else as the owner of what
 * we make (root_squash NFS) gets its directories made but never undone (a
 * leftover, never a foreign removal). Where renameat2(RENAME_NOREPLACE)
 * cannot be had (ENOSYS: before 3.15, or a filesystem without it, which
 * so_renameat2() reports as ENOSYS), the hidden directory is removed and the
 * name made directly: then the window of the open after mkdirat() is the
 * one stated in safe_tmpfile_xattr(3).
 */
static int made_mkdir(int cur, const char *name, mode_t mode, uint64_t resolve, int *next,
		      bool *ours)
{
	*next = -1;
	*ours = false;
#ifndef SAFEOPEN_MUTATE_MKDIR_UNDO_IDENTITY
	char hidden[SO_HIDDEN_LEN + 1];
	int i = 0;
	for (; i < SO_HIDDEN_TRIES; i++) {
		so_hidden_name(hidden);
		if (mkdirat(cur, hidden, mode) == 0)
			break;
		if (errno != EEXIST)
			return -1;
	}
	if (i == SO_HIDDEN_TRIES)
		return so_fail(EEXIST);
	_cleanup_fd_ int fd = mkdir_step(cur, hidden, resolve);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) < 0) {
		/* Gone or replaced by a non-directory: not ours to touch. */
		return so_fail(errno == ENOTDIR || errno == ENOENT ? EAGAIN : errno);
	}
	bool mine = st.st_uid == geteuid();
	if (so_renameat2(cur, hidden, cur, name, RENAME_NOREPLACE) == 0) {
		*ours = mine;
		*next = take_fd(&fd);
		return 0;
	}
	int saved = errno;
	/* Not moved: remove the hidden directory while it is the one held. */
	struct so_ident held, now;
	if (mine && so_inode_at(fd, NULL, &held) == 0 && so_inode_at(cur, hidden, &now) == 0 &&
	    so_same_inode(&held, &now))
		(void)unlinkat(cur, hidden, AT_REMOVEDIR);
	if (saved == EEXIST)
		return 1;
	if (saved != ENOSYS)
		return so_fail(saved);
#else
	(void)resolve;
#endif
	/* No RENAME_NOREPLACE here: the name made directly, and opened by the
	 * caller (*next stays -1). */
	if (mkdirat(cur, name, mode) < 0)
		return errno == EEXIST ? 1 : -1;
	*ours = true;
	return 0;
}

/*
 * mkdir -p, linear in the number of components.
 *
 * Safety argument: every directory this function hands out or steps from was
 * either opened by the resolver (scoped to the root) or opened from such a
 * directory with openat(O_PATH|O_NOFOLLOW|O_DIRECTORY) of one plain name,
 * which cannot leave it (no "..", no '/', no symlink followed). New
 * directories are made with mkdirat() of one name in such a directory, which
 * never follows the name. A symlink found in the existing part of the path is
 * followed by the resolver only (the prefix up to it, from the root, with the
 * caller's scope); a name that was missing when we looked and is a
 * non-directory after mkdirat() says EEXIST (a concurrent creator) is never
 * followed. ".." is resolved only as part of the prefix given to the
 * resolver, which must exist entirely.
 *
 * Cost: the whole path is first opened by the resolver (an existing directory
 * costs just that); otherwise the prefix up to the last ".." is resolved once,
 * then each later component costs one openat() (plus mkdirat() if missing),
 * and each symlink among them one more resolution of its prefix (at most 40
 * before ELOOP). O(n) system calls on both paths.
 */
static int mkdir_all(int dirfd, const char *path, size_t len, mode_t mode, mode_t parent_mode,
		     uint64_t resolve, struct so_made_dirs *made)
{
	struct safe_open_how how = {
		.flags = O_PATH | O_DIRECTORY | O_CLOEXEC,
		.mode = 0,
		.resolve = resolve,
	};
	int fd = so_open_validated(dirfd, path, &how);
	if (fd >= 0 || (errno != ENOENT && errno != ENOTDIR))
		return fd;

	char buf[PATH_MAX];
	memcpy(buf, path, len + 1);
	size_t base_end, last_end;
	mkdir_all_base(buf, &base_end, &last_end);
	const char *base = ".";
	char saved = 0;
	if (base_end > 0) {
		saved = buf[base_end];
		buf[base_end] = '\0';
		base = buf;
	} else if (buf[0] == '/') {
		base = "/";
	}
	_cleanup_fd_ int cur = so_open_validated(dirfd, base, &how);
	if (base_end > 0)
		buf[base_end] = saved;
	if (cur < 0)
		return -1;

	bool creating = false; /* a component was created: the rest is new too */
	int retries = 0;
	for (struct so_comp c = { base_end, base_end }; so_comp_next(buf, &c);) {
		size_t e = c.end;
		bool final = e == last_end;
		if (so_comp_dots(buf, &c) == 1) /* "." creates nothing */
			continue;
		saved = buf[e];
		buf[e] = '\0';
		const char *name = buf + c.start;
		int next = -1;
		bool made_here = false;
		if (!creating) {
			next = mkdir_step(cur, name, resolve);
			if (next < 0 && errno == ENOTDIR) {
				/* A symlink (followed, scoped, from the root) or a
				 * non-directory. */
				struct stat st;
				if (fstatat(cur, name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
					if (errno != ENOENT)
						return -1;
					errno = ENOENT; /* gone meanwhile: create it */
				} else if (!S_ISLNK(st.st_mode)) {
					return comp_fail(buf, &c, final ? EEXIST : ENOTDIR);
				} else {
					next = so_open_validated(dirfd, buf, &how);
					if (next < 0 && (errno == ENOENT || errno == ENOTDIR) && final)
						errno = EEXIST;
					if (next < 0)
						return -1;
				}
			}
			if (next < 0 && errno != ENOENT)
				return -1;
		}
		if (next < 0) {
			/* Missing: create it in `cur`. */
			if (made && !made->steps && made_alloc(made, cur, len) < 0)
				return -1;
			mode_t m = final ? mode : parent_mode;
			int r;
			if (made) {
				r = made_mkdir(cur, name, m, resolve, &next, &made_here);
				if (r < 0)
					return comp_fail(buf, &c, errno);
				creating = r == 0;
			} else {
				r = mkdirat(cur, name, m);
				if (r < 0 && errno != EEXIST)
					return comp_fail(buf, &c, errno);
				creating = made_here = r == 0;
			}
			if (next < 0)
				next = mkdir_step(cur, name, resolve);
			if (next < 0) {
				if (errno == ENOTDIR) /* a concurrent non-directory: not followed */
					return comp_fail(buf, &c, final ? EEXIST : ENOTDIR);
				if (errno != ENOENT)
					return -1;
				/* Removed again before we could open it: retry. */
				if (++retries > SO_RACE_RETRIES)
					return so_fail(EAGAIN);
				buf[e] = saved;
				creating = false;
				c.end = c.start; /* this component again */
				continue;
			}
		}
		if (made && made->topfd >= 0 &&
		    made_record(made, next, name, made_here) < 0) {
			so_close(next);
			return -1;
		}
		buf[e] = saved;
		so_close(cur);
		cur = next;
	}
	return take_fd(&cur);
}

int safe_mkdir_all_beneath(int dirfd, const char *path, mode_t mode, uint64_t flags)
{
	uint64_t resolve;
	if (so_op_resolve(flags, 0, &resolve) < 0)
		return -1;
	size_t len;
	if (so_path_len(path, &len) < 0)
		return -1;
	/* Every level gets the caller's mode (the rule of Go's os.MkdirAll and
	 * libpathrs): 0777 for the parents would leave world-writable
	 * directories behind a caller that runs with umask(0). */
	return mkdir_all(dirfd, path, len, mode, mode, resolve, NULL);
}

int so_mkdir_all(int dirfd, const char *path, mode_t mode, mode_t parent_mode, uint64_t resolve,
		 struct so_made_dirs *made)
{
	size_t len;
	if (so_path_len(path, &len) < 0)
		return -1;
	return mkdir_all(dirfd, path, len, mode, parent_mode, resolve, made);
}

int so_make_parents(int dirfd, const char *path, mode_t dir_mode, uint64_t resolve,
		    struct so_made_dirs *made, const char **name, uint64_t *name_resolve)
{
	struct so_path_end pe;
	so_path_end(path, &pe);
	size_t n = pe.last.start; /* the directory part, its slashes included */
	if (n == 0)
		return -2;
	*name = path + n;
	char dir[PATH_MAX];
	if (n >= sizeof(dir))
		return so_fail(ENAMETOOLONG);
	memcpy(dir, path, n);
	dir[n] = '\0';
	int fd = so_mkdir_all(dirfd, dir, dir_mode, dir_mode, resolve, made);
	if (fd >= 0)
		*name_resolve = (resolve & ~SAFE_RESOLVE_IN_ROOT) | SAFE_RESOLVE_BENEATH;
	return fd;
}

/* The open(2) flags safe_create_all_beneath() refuses: it creates a named
 * regular file. */
#define CREATE_ALL_BAD_OFLAGS (O_DIRECTORY | O_PATH | (O_TMPFILE & ~O_DIRECTORY))

/*
 * open(O_CREAT) with the missing parents made first.
 *
 * Safety argument: the path is first opened as it is by the resolver with
 * the caller's scope (one resolution when the parents exist). Only on ENOENT
 * are the parents made, by mkdir_all() (see its argument), which returns a
 * descriptor of the directory part opened beneath the root; the last name is
 * then opened in it with the caller's scope narrowed to BENEATH, and with
 * O_NOFOLLOW, so a symlink found there (met, or planted by a racer) is never
 * followed relative to the parent, where its body would be judged against
 * the wrong root: the whole path is then resolved again from dirfd with the
 * caller's scope, as the first attempt did. Directories this call made are
 * removed again if the open fails (so_made_dirs_undo(): empty, same inode,
 * still at their names).
 */
int safe_create_all_beneath(int dirfd, const char *path, int oflags, mode_t mode, mode_t dir_mode,
			    uint64_t flags)
{
	uint64_t resolve;
	if (so_op_resolve(flags, 0, &resolve) < 0)
		return -1;
	/* Both modes checked before anything is made: openat2(2) refuses a mode
	 * beyond 07777 with EINVAL, but where the kernel has no openat2 the
	 * final openat() would mask it after the parents exist. */
	if (!(oflags & O_CREAT) || (oflags & CREATE_ALL_BAD_OFLAGS) || (mode & ~(mode_t)07777) ||
	    (dir_mode & ~(mode_t)07777))
		return so_fail(EINVAL);
	size_t len;
	if (so_path_len(path, &len) < 0)
		return -1;
	struct safe_open_how how = {
		.flags = (uint64_t)(unsigned int)oflags | O_CLOEXEC,
		.mode = mode,
		.resolve = resolve,
	};
	int fd = so_open_validated(dirfd, path, &how);
	if (fd >= 0 || errno != ENOENT || !so_path_ends_in_name(path))
		return fd;

	struct so_made_dirs made = SO_MADE_DIRS_INIT;
	const char *name;
	uint64_t name_resolve;
	_cleanup_fd_ int pdir = so_make_parents(dirfd, path, dir_mode, resolve, &made, &name,
						&name_resolve);
	if (pdir == -2) /* one component: nothing to make, the ENOENT stands */
		return so_fail(ENOENT);
	if (pdir >= 0) {
		struct safe_open_how one = how;
		one.resolve = name_resolve;
		if (!(oflags & O_EXCL))
			one.flags |= O_NOFOLLOW;
		fd = so_open_validated(pdir, name, &one);
		if (fd < 0 && errno == ELOOP && !(oflags & (O_NOFOLLOW | O_EXCL)))
			fd = so_open_validated(dirfd, path, &how); /* a symlink: from the root */
	}
	if (fd < 0) {
		so_made_dirs_undo(&made); /* keeps errno */
		return -1;
	}
	so_made_dirs_free(&made);
	return fd;
}
