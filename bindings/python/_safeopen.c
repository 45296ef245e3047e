/* SPDX-License-Identifier: MIT */
/*
 * safeopen._safeopen: the CPython binding of libsafeopen.
 *
 * Thin and fast: each function converts its arguments, releases the GIL,
 * calls one library function and turns -1/errno into an OSError subclass
 * (EscapeError for EXDEV). What is better written in Python (Root, file
 * objects, scandir, write_atomic, extract) is in safeopen/__init__.py.
 *
 * Roots. Every operation takes a root: an int descriptor (borrowed), an
 * object with fileno() (a safeopen.Root, borrowed), or a str/bytes/PathLike,
 * which is opened with O_PATH|O_DIRECTORY for the call and closed after it.
 * The root's own path is trusted (it comes from the program, not from the
 * request); only the path beneath it is resolved by the library.
 *
 * Descriptors: every descriptor the module opens is O_CLOEXEC; one it returns
 * belongs to the caller; one it opens for a call (a PathLike root) is closed
 * on every path out of that call (the converter's cleanup).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <safeopen.h>

#ifndef PY_VERSION_HEX
#error "Python.h is required"
#endif

static PyObject *EscapeError;    /* safeopen.EscapeError(OSError) */
static PyObject *StatResultType; /* os.stat_result */

/* ------------------------------------------------------------------ errors */

/* Raise the OSError of errno `err` for `path` (and `path2`): the builtin
 * subclass the errno maps to (FileNotFoundError, ...), except EXDEV, which
 * is an EscapeError with a message that says what happened. */
static PyObject *raise_errno(int err, PyObject *path, PyObject *path2)
{
	if (err == EXDEV) {
		PyObject *exc = PyObject_CallFunction(
			EscapeError, "isOiO", err, "path escapes the root directory",
			path ? path : Py_None, 0, path2 ? path2 : Py_None);
		if (exc) {
			PyErr_SetObject(EscapeError, exc);
			Py_DECREF(exc);
		}
		return NULL;
	}
	errno = err;
	return PyErr_SetFromErrnoWithFilenameObjects(PyExc_OSError, path, path2);
}

/* ------------------------------------------------------------------ arguments */

/* A minimal vectorcall parser: names[] in positional order, the first npos of
 * them may be positional, the first nreq are required; out[] receives
 * borrowed references (NULL when absent). */
static int parse_args(const char *fname, PyObject *const *args, Py_ssize_t nargs,
		      PyObject *kwnames, const char *const *names, int npos, int nreq,
		      PyObject **out)
{
	int n = 0;
	while (names[n])
		n++;
	if (nargs > npos) {
		PyErr_Format(PyExc_TypeError, "%s() takes at most %d positional arguments (%zd given)",
			     fname, npos, nargs);
		return -1;
	}
	for (int i = 0; i < n; i++)
		out[i] = i < nargs ? args[i] : NULL;
	if (kwnames) {
		Py_ssize_t nkw = PyTuple_GET_SIZE(kwnames);
		for (Py_ssize_t k = 0; k < nkw; k++) {
			PyObject *key = PyTuple_GET_ITEM(kwnames, k);
			int i;
			for (i = 0; i < n; i++)
				if (PyUnicode_CompareWithASCIIString(key, names[i]) == 0)
					break;
			if (i == n) {
				PyErr_Format(PyExc_TypeError,
					     "%s() got an unexpected keyword argument '%U'", fname, key);
				return -1;
			}
			if (out[i]) {
				PyErr_Format(PyExc_TypeError, "%s() got multiple values for argument '%s'",
					     fname, names[i]);
				return -1;
			}
			out[i] = args[nargs + k];
		}
	}
	for (int i = 0; i < nreq; i++)
		if (!out[i]) {
			PyErr_Format(PyExc_TypeError, "%s() missing required argument '%s'", fname,
				     names[i]);
			return -1;
		}
	return 0;
}

/* A root: its descriptor and whether this call opened it. */
struct root {
	int fd;
	int owned;
};

/* An int argument (a descriptor, flags, a mode) without the private
 * _PyLong_AsInt, which newer Pythons removed. */
static int as_int(PyObject *o, int *out)
{
	long v = PyLong_AsLong(o);
	if (v == -1 && PyErr_Occurred())
		return -1;
	if (v < INT_MIN || v > INT_MAX) {
		PyErr_SetString(PyExc_OverflowError, "signed integer is greater than maximum");
		return -1;
	}
	*out = (int)v;
	return 0;
}

static int root_get(PyObject *o, struct root *r)
{
	r->fd = -1;
	r->owned = 0;
	if (PyLong_Check(o))
		return as_int(o, &r->fd);
	if (!PyUnicode_Check(o) && !PyBytes_Check(o) && PyObject_HasAttrString(o, "fileno")) {
		PyObject *res = PyObject_CallMethod(o, "fileno", NULL);
		if (!res)
			return -1;
		int rc = as_int(res, &r->fd);
		Py_DECREF(res);
		return rc;
	}
	PyObject *bytes = NULL;
	if (!PyUnicode_FSConverter(o, &bytes))
		return -1;
	int fd;
	Py_BEGIN_ALLOW_THREADS
	fd = open(PyBytes_AS_STRING(bytes), O_PATH | O_DIRECTORY | O_CLOEXEC);
	Py_END_ALLOW_THREADS
	if (fd < 0) {
		raise_errno(errno, o, NULL);
		Py_DECREF(bytes);
		return -1;
	}
	Py_DECREF(bytes);
	r->fd = fd;
	r->owned = 1;
	return 0;
}

static void root_put(struct root *r)
{
	if (r->owned && r->fd >= 0)
		close(r->fd);
	r->fd = -1;
	r->owned = 0;
}

/* str/bytes/PathLike -> a new bytes object (NULL + exception on error). An
 * embedded NUL is a ValueError, as in the os module. */
static PyObject *fspath_bytes(PyObject *o)
{
	PyObject *bytes = NULL;
	if (!PyUnicode_FSConverter(o, &bytes))
		return NULL;
	return bytes;
}

/* 1 when the caller passed bytes (or a PathLike giving bytes): results that
 * are names come back as bytes then, as in the os module. */
static int wants_bytes(PyObject *o)
{
	if (PyBytes_Check(o))
		return 1;
	if (PyUnicode_Check(o))
		return 0;
	PyObject *p = PyOS_FSPath(o);
	if (!p) {
		PyErr_Clear();
		return 0;
	}
	int b = PyBytes_Check(p);
	Py_DECREF(p);
	return b;
}

static int get_u64(PyObject *o, uint64_t def, uint64_t *out)
{
	if (!o || o == Py_None) {
		*out = def;
		return 0;
	}
	unsigned long long v = PyLong_AsUnsignedLongLong(o);
	if (v == (unsigned long long)-1 && PyErr_Occurred())
		return -1;
	*out = v;
	return 0;
}

static int get_int(PyObject *o, int def, int *out)
{
	if (!o) {
		*out = def;
		return 0;
	}
	return as_int(o, out);
}

static int get_bool(PyObject *o, int def, int *out)
{
	if (!o) {
		*out = def;
		return 0;
	}
	int v = PyObject_IsTrue(o);
	if (v < 0)
		return -1;
	*out = v;
	return 0;
}

#define RESOLVE_DEFAULT SAFE_RESOLVE_BENEATH

/* Retry a call interrupted by a signal, as the os module does (PEP 475). */
#define CALL_RETRY(ret, expr)                                                                      \
	do {                                                                                       \
		Py_BEGIN_ALLOW_THREADS(ret) = (expr);                                              \
		Py_END_ALLOW_THREADS                                                               \
	} while ((ret) < 0 && errno == EINTR && PyErr_CheckSignals() == 0)

/* ------------------------------------------------------------------ open */

PyDoc_STRVAR(open_doc,
"open(path, flags, mode=0o777, *, dir_fd, resolve=RESOLVE_BENEATH) -> int\n\n"
"Open path beneath the root dir_fd, like os.open(path, flags, mode,\n"
"dir_fd=dir_fd), but the path never resolves outside the root: '..',\n"
"absolute paths and symbolic links that would leave it fail with\n"
"EscapeError (EXDEV), with RESOLVE_IN_ROOT they are scoped to it.\n"
"dir_fd is a descriptor, a Root, or a path (opened for this call).\n"
"resolve is a mask of RESOLVE_* flags with exactly one of RESOLVE_BENEATH\n"
"and RESOLVE_IN_ROOT. Returns a new O_CLOEXEC descriptor.");

static PyObject *so_open(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
			 PyObject *kwnames)
{
	static const char *const names[] = { "path", "flags", "mode", "dir_fd", "resolve", NULL };
	PyObject *a[5];
	(void)self;
	if (parse_args("open", args, nargs, kwnames, names, 3, 2, a) < 0)
		return NULL;
	if (!a[3]) {
		PyErr_SetString(PyExc_TypeError, "open() missing required keyword argument 'dir_fd'");
		return NULL;
	}
	int flags, mode;
	uint64_t resolve;
	if (get_int(a[1], 0, &flags) < 0 || get_int(a[2], 0777, &mode) < 0 ||
	    get_u64(a[4], RESOLVE_DEFAULT, &resolve) < 0)
		return NULL;
	struct root r;
	if (root_get(a[3], &r) < 0)
		return NULL;
	PyObject *path = fspath_bytes(a[0]);
	if (!path) {
		root_put(&r);
		return NULL;
	}
	/* O_CREAT/O_TMPFILE take the mode; otherwise it must be 0 for openat2 */
	int creates = (flags & O_CREAT) || (flags & O_TMPFILE) == O_TMPFILE;
	struct safe_open_how how = { .flags = (uint64_t)(unsigned)flags | O_CLOEXEC,
				     .mode = creates ? (uint64_t)(mode & 07777) : 0,
				     .resolve = resolve };
	int fd;
	CALL_RETRY(fd, safe_openat2(r.fd, PyBytes_AS_STRING(path), &how, sizeof(how)));
	int err = errno;
	Py_DECREF(path);
	root_put(&r);
	if (fd < 0)
		return PyErr_Occurred() ? NULL : raise_errno(err, a[0], NULL);
	return PyLong_FromLong(fd);
}

PyDoc_STRVAR(reopen_doc,
"reopen(fd, flags) -> int\n\n"
"Open the object of fd (an O_PATH descriptor, say) again with new open(2)\n"
"flags, never through a path. Returns a new O_CLOEXEC descriptor.");

static PyObject *so_reopen(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
			   PyObject *kwnames)
{
	static const char *const names[] = { "fd", "flags", NULL };
	PyObject *a[2];
	int fd, flags, ret;
	(void)self;
	if (parse_args("reopen", args, nargs, kwnames, names, 2, 2, a) < 0 ||
	    get_int(a[0], 0, &fd) < 0 || get_int(a[1], 0, &flags) < 0)
		return NULL;
	CALL_RETRY(ret, safe_reopen(fd, flags));
	if (ret < 0)
		return PyErr_Occurred() ? NULL : raise_errno(errno, NULL, NULL);
	return PyLong_FromLong(ret);
}

/* ------------------------------------------------------------------ one-path operations */

/* The common frame of the operations on one path beneath a root: names[0] is
 * the root and names[1] the path; `body` runs with the GIL released and sets
 * `ret` (negative with errno on failure). */
#define OP_BEGIN(fname, npos, nreq)                                                                \
	PyObject *a[sizeof(names) / sizeof(names[0]) - 1];                                         \
	(void)self;                                                                                \
	if (parse_args(fname, args, nargs, kwnames, names, npos, nreq, a) < 0)                     \
		return NULL;

static PyObject *finish(long long ret, int err, PyObject *path, PyObject *path2)
{
	if (ret < 0)
		return PyErr_Occurred() ? NULL : raise_errno(err, path, path2);
	Py_RETURN_NONE;
}

/* Run `call` with root and path converted; `extra_ok` is the condition on
 * the other arguments' conversion. */
#define WITH_ROOT_PATH(rootobj, pathobj, stmt)                                                     \
	do {                                                                                       \
		struct root r_;                                                                    \
		if (root_get((rootobj), &r_) < 0)                                                  \
			return NULL;                                                               \
		PyObject *pb_ = fspath_bytes(pathobj);                                             \
		if (!pb_) {                                                                        \
			root_put(&r_);                                                             \
			return NULL;                                                               \
		}                                                                                  \
		const int rootfd = r_.fd;                                                          \
		const char *cpath = PyBytes_AS_STRING(pb_);                                        \
		stmt;                                                                              \
		Py_DECREF(pb_);                                                                    \
		root_put(&r_);                                                                     \
	} while (0)

static uint64_t follow_flag(int follow)
{
	return follow ? SAFE_FOLLOW : 0;
}

PyDoc_STRVAR(mkdir_doc, "mkdir(root, path, mode=0o777, *, resolve=RESOLVE_BENEATH)\n\n"
"Create the directory path beneath root (its parent must exist). An\n"
"existing name, a symbolic link included, is FileExistsError.");

static PyObject *so_mkdir(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
			  PyObject *kwnames)
{
	static const char *const names[] = { "root", "path", "mode", "resolve", NULL };
	OP_BEGIN("mkdir", 3, 2)
	int mode, ret, err = 0;
	uint64_t res;
	if (get_int(a[2], 0777, &mode) < 0 || get_u64(a[3], RESOLVE_DEFAULT, &res) < 0)
		return NULL;
	WITH_ROOT_PATH(a[0], a[1], {
		CALL_RETRY(ret, safe_mkdirat_beneath(rootfd, cpath, (mode_t)mode, res));
		err = errno;
	});
	return finish(ret, err, a[1], NULL);
}

PyDoc_STRVAR(mkdir_all_doc, "mkdir_all(root, path, mode=0o777, *, resolve=RESOLVE_BENEATH) -> int\n\n"
"Create path and its missing parents beneath root (mkdir -p); existing\n"
"directories are kept. Returns an O_PATH descriptor of the last one,\n"
"which the caller closes (safeopen.makedirs() is the os-style wrapper).");

static PyObject *so_mkdir_all(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
			      PyObject *kwnames)
{
	static const char *const names[] = { "root", "path", "mode", "resolve", NULL };
	OP_BEGIN("mkdir_all", 3, 2)
	int mode, ret, err = 0;
	uint64_t res;
	if (get_int(a[2], 0777, &mode) < 0 || get_u64(a[3], RESOLVE_DEFAULT, &res) < 0)
		return NULL;
	WITH_ROOT_PATH(a[0], a[1], {
		CALL_RETRY(ret, safe_mkdir_all_beneath(rootfd, cpath, (mode_t)mode, res));
		err = errno;
	});
	if (ret < 0)
		return finish(ret, err, a[1], NULL);
	return PyLong_FromLong(ret);
}

PyDoc_STRVAR(mknod_doc, "mknod(root, path, mode=0o600, device=0, *, resolve=RESOLVE_BENEATH)\n\n"
"Create a FIFO, socket or device node (mode includes the file type, as\n"
"os.mknod) as the last name of path beneath root.");

static PyObject *so_mknod(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
			  PyObject *kwnames)
{
	static const char *const names[] = { "root", "path", "mode", "device", "resolve", NULL };
	OP_BEGIN("mknod", 4, 2)
	int mode, ret, err = 0;
	uint64_t res, dev;
	if (get_int(a[2], 0600 | S_IFIFO, &mode) < 0 || get_u64(a[3], 0, &dev) < 0 ||
	    get_u64(a[4], RESOLVE_DEFAULT, &res) < 0)
		return NULL;
	WITH_ROOT_PATH(a[0], a[1], {
		CALL_RETRY(ret, safe_mknodat_beneath(rootfd, cpath, (mode_t)mode, (dev_t)dev, res));
		err = errno;
	});
	return finish(ret, err, a[1], NULL);
}

PyDoc_STRVAR(stat_doc, "stat(root, path, *, follow_symlinks=True, resolve=RESOLVE_BENEATH) -> os.stat_result\n\n"
"os.stat() of path beneath root. A trailing symbolic link is followed\n"
"(scoped to the root) unless follow_symlinks is false, as os.lstat().");

static PyObject *make_stat(const struct stat *st)
{
#define NS(ts) PyLong_FromLongLong((long long)(ts).tv_sec * 1000000000LL + (ts).tv_nsec)
#define FL(ts) PyFloat_FromDouble((double)(ts).tv_sec + (double)(ts).tv_nsec * 1e-9)
	PyObject *seq = Py_BuildValue(
		"(kKKkkkLLLL)", (unsigned long)st->st_mode, (unsigned long long)st->st_ino,
		(unsigned long long)st->st_dev, (unsigned long)st->st_nlink,
		(unsigned long)st->st_uid, (unsigned long)st->st_gid, (long long)st->st_size,
		(long long)st->st_atim.tv_sec, (long long)st->st_mtim.tv_sec,
		(long long)st->st_ctim.tv_sec);
	PyObject *d = Py_BuildValue("{sNsNsNsNsNsNsksLsK}", "st_atime", FL(st->st_atim), "st_mtime",
				    FL(st->st_mtim), "st_ctime", FL(st->st_ctim), "st_atime_ns",
				    NS(st->st_atim), "st_mtime_ns", NS(st->st_mtim), "st_ctime_ns",
				    NS(st->st_ctim), "st_blksize", (unsigned long)st->st_blksize,
				    "st_blocks", (long long)st->st_blocks, "st_rdev",
				    (unsigned long long)st->st_rdev);
#undef NS
#undef FL
	PyObject *res = NULL;
	if (seq && d)
		res = PyObject_CallFunctionObjArgs(StatResultType, seq, d, NULL);
	Py_XDECREF(seq);
	Py_XDECREF(d);
	return res;
}

static PyObject *so_stat(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
			 PyObject *kwnames)
{
	static const char *const names[] = { "root", "path", "follow_symlinks", "resolve", NULL };
	OP_BEGIN("stat", 2, 2)
	int follow, ret, err = 0;
	uint64_t res;
	struct stat st;
	if (get_bool(a[2], 1, &follow) < 0 || get_u64(a[3], RESOLVE_DEFAULT, &res) < 0)
		return NULL;
	WITH_ROOT_PATH(a[0], a[1], {
		CALL_RETRY(ret, safe_fstatat_beneath(rootfd, cpath, &st, res | follow_flag(follow)));
		err = errno;
	});
	if (ret < 0)
		return finish(ret, err, a[1], NULL);
	return make_stat(&st);
}

PyDoc_STRVAR(unlink_doc, "unlink(root, path, *, resolve=RESOLVE_BENEATH)\n\n"
"Remove the name path beneath root (never what a symbolic link names).");
PyDoc_STRVAR(rmdir_doc, "rmdir(root, path, *, resolve=RESOLVE_BENEATH)\n\n"
"Remove the empty directory path beneath root.");

static PyObject *unlink_common(const char *fname, uint64_t extra, PyObject *self,
			       PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
	static const char *const names[] = { "root", "path", "resolve", NULL };
	OP_BEGIN(fname, 2, 2)
	int ret, err = 0;
	uint64_t res;
	if (get_u64(a[2], RESOLVE_DEFAULT, &res) < 0)
		return NULL;
	WITH_ROOT_PATH(a[0], a[1], {
		CALL_RETRY(ret, safe_unlinkat_beneath(rootfd, cpath, res | extra));
		err = errno;
	});
	return finish(ret, err, a[1], NULL);
}

static PyObject *so_unlink(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
			   PyObject *kwnames)
{
	return unlink_common("unlink", 0, self, args, nargs, kwnames);
}

static PyObject *so_rmdir(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
			  PyObject *kwnames)
{
	return unlink_common("rmdir", SAFE_REMOVEDIR, self, args, nargs, kwnames);
}

PyDoc_STRVAR(rmtree_doc, "rmtree(root, path, *, xdev=False, resolve=RESOLVE_BENEATH)\n\n"
"Remove path and everything beneath it (rm -r), never following a symbolic\n"
"link and never leaving the tree, even while it changes. Mount points are\n"
"left alone (OSError EXDEV... as the library says) unless xdev is true.");

static PyObject *so_rmtree(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
			   PyObject *kwnames)
{
	static const char *const names[] = { "root", "path", "xdev", "resolve", NULL };
	OP_BEGIN("rmtree", 2, 2)
	int xdev, ret, err = 0;
	uint64_t res;
	if (get_bool(a[2], 0, &xdev) < 0 || get_u64(a[3], RESOLVE_DEFAULT, &res) < 0)
		return NULL;
	WITH_ROOT_PATH(a[0], a[1], {
		CALL_RETRY(ret, safe_rmtree_beneath(rootfd, cpath, res | (xdev ? SAFE_RMTREE_XDEV : 0)));
		err = errno;
	});
	return finish(ret, err, a[1], NULL);
}

/* ------------------------------------------------------------------ two-path operations */

PyDoc_STRVAR(rename_doc, "rename(root, src, dst, *, dst_root=None, flags=0, resolve=RESOLVE_BENEATH)\n\n"
"Rename src beneath root to dst beneath dst_root (default: root), like\n"
"os.rename(). flags: RENAME_NOREPLACE, RENAME_EXCHANGE.");
PyDoc_STRVAR(link_doc, "link(root, src, dst, *, dst_root=None, follow_symlinks=False, resolve=RESOLVE_BENEATH)\n\n"
"Make dst beneath dst_root (default: root) a hard link to src beneath\n"
"root. A trailing symbolic link src is linked itself unless\n"
"follow_symlinks (which needs CAP_DAC_READ_SEARCH: the library links the\n"
"resolved descriptor, never a path it did not check).");

static PyObject *two_paths(int is_link, PyObject *self, PyObject *const *args, Py_ssize_t nargs,
			   PyObject *kwnames)
{
	static const char *const names[] = { "root",	"src",	   "dst",     "dst_root",
					     "flags",	"resolve", "follow_symlinks", NULL };
	const char *fname = is_link ? "link" : "rename";
	OP_BEGIN(fname, 3, 3)
	uint64_t flags, res;
	int follow, ret = -1, err = 0;
	if ((is_link && a[4]) || (!is_link && a[6])) {
		PyErr_Format(PyExc_TypeError, "%s() got an unexpected keyword argument '%s'", fname,
			     is_link ? "flags" : "follow_symlinks");
		return NULL;
	}
	if (get_u64(a[4], 0, &flags) < 0 || get_u64(a[5], RESOLVE_DEFAULT, &res) < 0 ||
	    get_bool(a[6], 0, &follow) < 0)
		return NULL;
	struct root r2 = { -1, 0 };
	int have_r2 = a[3] && a[3] != Py_None;
	if (have_r2 && root_get(a[3], &r2) < 0)
		return NULL;
	PyObject *dstb = fspath_bytes(a[2]);
	if (!dstb) {
		root_put(&r2);
		return NULL;
	}
	WITH_ROOT_PATH(a[0], a[1], {
		int dfd = have_r2 ? r2.fd : rootfd;
		if (is_link)
			CALL_RETRY(ret, safe_linkat_beneath(rootfd, cpath, dfd, PyBytes_AS_STRING(dstb),
							    res | follow_flag(follow)));
		else
			CALL_RETRY(ret, safe_renameat_beneath(rootfd, cpath, dfd,
							      PyBytes_AS_STRING(dstb), res | flags));
		err = errno;
	});
	Py_DECREF(dstb);
	root_put(&r2);
	return finish(ret, err, a[1], a[2]);
}

static PyObject *so_rename(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
			   PyObject *kwnames)
{
	return two_paths(0, self, args, nargs, kwnames);
}

static PyObject *so_link(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
			 PyObject *kwnames)
{
	return two_paths(1, self, args, nargs, kwnames);
}

PyDoc_STRVAR(symlink_doc, "symlink(root, path, target, *, resolve=RESOLVE_BENEATH)\n\n"
"Create the symbolic link path beneath root with the body target (stored\n"
"as it is: a body is data, and the library never follows it outside the\n"
"root later). Note the order: root and the new name first, as in every\n"
"function of this module.");

static PyObject *so_symlink(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
			    PyObject *kwnames)
{
	static const char *const names[] = { "root", "path", "target", "resolve", NULL };
	OP_BEGIN("symlink", 3, 3)
	int ret, err = 0;
	uint64_t res;
	if (get_u64(a[3], RESOLVE_DEFAULT, &res) < 0)
		return NULL;
	PyObject *tb = fspath_bytes(a[2]);
	if (!tb)
		return NULL;
	WITH_ROOT_PATH(a[0], a[1], {
		CALL_RETRY(ret, safe_symlinkat_beneath(PyBytes_AS_STRING(tb), rootfd, cpath, res));
		err = errno;
	});
	Py_DECREF(tb);
	return finish(ret, err, a[1], NULL);
}

/* A name the library wrote into buf: str (filesystem encoding) or bytes. */
static PyObject *name_result(const char *buf, Py_ssize_t len, int as_bytes)
{
	if (as_bytes)
		return PyBytes_FromStringAndSize(buf, len);
	return PyUnicode_DecodeFSDefaultAndSize(buf, len);
}

PyDoc_STRVAR(readlink_doc, "readlink(root, path, *, resolve=RESOLVE_BENEATH) -> str | bytes\n\n"
"The body of the symbolic link path beneath root (bytes if path is bytes).");
PyDoc_STRVAR(realpath_doc, "realpath(root, path, *, resolve=RESOLVE_BENEATH) -> str | bytes\n\n"
"The canonical name of what path opens beneath root, relative to root\n"
"(\".\" for the root itself, \"a/b\" otherwise), following symbolic links\n"
"scoped to the root. Unlike os.path.realpath() the result, resolved again\n"
"from root without following any link, named the same object when the\n"
"call returned.");

static PyObject *name_op(int is_realpath, PyObject *self, PyObject *const *args,
			 Py_ssize_t nargs, PyObject *kwnames)
{
	static const char *const names[] = { "root", "path", "resolve", NULL };
	OP_BEGIN(is_realpath ? "realpath" : "readlink", 2, 2)
	ssize_t ret = -1;
	int err = 0;
	uint64_t res;
	char buf[PATH_MAX + 1];
	if (get_u64(a[2], RESOLVE_DEFAULT, &res) < 0)
		return NULL;
	WITH_ROOT_PATH(a[0], a[1], {
		if (is_realpath)
			CALL_RETRY(ret, safe_realpath_beneath(rootfd, cpath, buf, sizeof(buf), res));
		else
			CALL_RETRY(ret, safe_readlinkat_beneath(rootfd, cpath, buf, sizeof(buf), res));
		err = errno;
	});
	if (ret < 0)
		return finish(ret, err, a[1], NULL);
	return name_result(buf, ret, wants_bytes(a[1]));
}

static PyObject *so_readlink(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
			     PyObject *kwnames)
{
	return name_op(0, self, args, nargs, kwnames);
}

static PyObject *so_realpath(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
			     PyObject *kwnames)
{
	return name_op(1, self, args, nargs, kwnames);
}

/* ------------------------------------------------------------------ attributes */

PyDoc_STRVAR(chmod_doc, "chmod(root, path, mode, *, follow_symlinks=True, resolve=RESOLVE_BENEATH)\n\n"
"os.chmod() of path beneath root.");

static PyObject *so_chmod(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
			  PyObject *kwnames)
{
	static const char *const names[] = { "root", "path", "mode", "follow_symlinks", "resolve", NULL };
	OP_BEGIN("chmod", 3, 3)
	int mode, follow, ret, err = 0;
	uint64_t res;
	if (get_int(a[2], 0, &mode) < 0 || get_bool(a[3], 1, &follow) < 0 ||
	    get_u64(a[4], RESOLVE_DEFAULT, &res) < 0)
		return NULL;
	WITH_ROOT_PATH(a[0], a[1], {
		CALL_RETRY(ret, safe_fchmodat_beneath(rootfd, cpath, (mode_t)mode, res | follow_flag(follow)));
		err = errno;
	});
	return finish(ret, err, a[1], NULL);
}

PyDoc_STRVAR(chown_doc, "chown(root, path, uid, gid, *, follow_symlinks=True, resolve=RESOLVE_BENEATH)\n\n"
"os.chown() of path beneath root; -1 leaves the id unchanged.");

static PyObject *so_chown(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
			  PyObject *kwnames)
{
	static const char *const names[] = { "root", "path", "uid", "gid", "follow_symlinks", "resolve", NULL };
	OP_BEGIN("chown", 4, 4)
	int uid, gid, follow, ret, err = 0;
	uint64_t res;
	if (get_int(a[2], -1, &uid) < 0 || get_int(a[3], -1, &gid) < 0 ||
	    get_bool(a[4], 1, &follow) < 0 || get_u64(a[5], RESOLVE_DEFAULT, &res) < 0)
		return NULL;
	WITH_ROOT_PATH(a[0], a[1], {
		CALL_RETRY(ret, safe_fchownat_beneath(rootfd, cpath, (uid_t)uid, (gid_t)gid,
						      res | follow_flag(follow)));
		err = errno;
	});
	return finish(ret, err, a[1], NULL);
}

static int time_pair(PyObject *o, int ns, struct timespec ts[2])
{
	if (!PyTuple_Check(o) || PyTuple_GET_SIZE(o) != 2) {
		PyErr_SetString(PyExc_TypeError, ns ? "utime: 'ns' must be a tuple of two ints"
						    : "utime: 'times' must be a tuple of two numbers");
		return -1;
	}
	for (int i = 0; i < 2; i++) {
		PyObject *v = PyTuple_GET_ITEM(o, i);
		if (ns) {
			long long n = PyLong_AsLongLong(v);
			if (n == -1 && PyErr_Occurred())
				return -1;
			long long s = n / 1000000000LL, r = n % 1000000000LL;
			if (r < 0) {
				r += 1000000000LL;
				s--;
			}
			ts[i].tv_sec = (time_t)s;
			ts[i].tv_nsec = (long)r;
		} else {
			double d = PyFloat_AsDouble(v);
			if (d == -1.0 && PyErr_Occurred())
				return -1;
			double s = d >= 0 ? (double)(long long)d : (double)(long long)d - (d != (double)(long long)d);
			ts[i].tv_sec = (time_t)s;
			ts[i].tv_nsec = (long)((d - s) * 1e9);
			if (ts[i].tv_nsec >= 1000000000L)
				ts[i].tv_nsec = 999999999L;
		}
	}
	return 0;
}

PyDoc_STRVAR(utime_doc, "utime(root, path, times=None, *, ns=None, follow_symlinks=True, resolve=RESOLVE_BENEATH)\n\n"
"os.utime() of path beneath root: times=(atime, mtime) in seconds or\n"
"ns=(atime_ns, mtime_ns); neither sets both to the current time.");

static PyObject *so_utime(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
			  PyObject *kwnames)
{
	static const char *const names[] = { "root", "path", "times", "ns", "follow_symlinks", "resolve", NULL };
	OP_BEGIN("utime", 3, 2)
	int follow, ret, err = 0;
	uint64_t res;
	struct timespec ts[2], *tsp = NULL;
	if (get_bool(a[4], 1, &follow) < 0 || get_u64(a[5], RESOLVE_DEFAULT, &res) < 0)
		return NULL;
	int have_t = a[2] && a[2] != Py_None, have_ns = a[3] && a[3] != Py_None;
	if (have_t && have_ns) {
		PyErr_SetString(PyExc_ValueError, "utime: you may specify either 'times' or 'ns' but not both");
		return NULL;
	}
	if (have_t || have_ns) {
		if (time_pair(have_t ? a[2] : a[3], have_ns, ts) < 0)
			return NULL;
		tsp = ts;
	}
	WITH_ROOT_PATH(a[0], a[1], {
		CALL_RETRY(ret, safe_utimensat_beneath(rootfd, cpath, tsp, res | follow_flag(follow)));
		err = errno;
	});
	return finish(ret, err, a[1], NULL);
}

PyDoc_STRVAR(getxattr_doc, "getxattr(root, path, attribute, *, follow_symlinks=True, resolve=RESOLVE_BENEATH) -> bytes\n\n"
"The value of the extended attribute of path beneath root.");

static PyObject *so_getxattr(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
			     PyObject *kwnames)
{
	static const char *const names[] = { "root", "path", "attribute", "follow_symlinks", "resolve", NULL };
	OP_BEGIN("getxattr", 3, 3)
	int follow, err = 0;
	ssize_t ret = -1;
	uint64_t res;
	char buf[65536];
	if (get_bool(a[3], 1, &follow) < 0 || get_u64(a[4], RESOLVE_DEFAULT, &res) < 0)
		return NULL;
	PyObject *nb = fspath_bytes(a[2]);
	if (!nb)
		return NULL;
	WITH_ROOT_PATH(a[0], a[1], {
		CALL_RETRY(ret, safe_getxattr_beneath(rootfd, cpath, PyBytes_AS_STRING(nb), buf,
						      sizeof(buf), res | follow_flag(follow)));
		err = errno;
	});
	Py_DECREF(nb);
	if (ret < 0)
		return finish(ret, err, a[1], NULL);
	return PyBytes_FromStringAndSize(buf, ret);
}

PyDoc_STRVAR(setxattr_doc, "setxattr(root, path, attribute, value, flags=0, *, follow_symlinks=True, resolve=RESOLVE_BENEATH)\n\n"
"Set an extended attribute of path beneath root (flags: os.XATTR_CREATE,\n"
"os.XATTR_REPLACE).");

static PyObject *so_setxattr(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
			     PyObject *kwnames)
{
	static const char *const names[] = { "root", "path", "attribute", "value", "flags", "follow_symlinks", "resolve", NULL };
	OP_BEGIN("setxattr", 5, 4)
	int xflags, follow, ret, err = 0;
	uint64_t res;
	if (get_int(a[4], 0, &xflags) < 0 || get_bool(a[5], 1, &follow) < 0 ||
	    get_u64(a[6], RESOLVE_DEFAULT, &res) < 0)
		return NULL;
	Py_buffer val;
	if (PyObject_GetBuffer(a[3], &val, PyBUF_SIMPLE) < 0)
		return NULL;
	PyObject *nb = fspath_bytes(a[2]);
	if (!nb) {
		PyBuffer_Release(&val);
		return NULL;
	}
	WITH_ROOT_PATH(a[0], a[1], {
		CALL_RETRY(ret, safe_setxattr_beneath(rootfd, cpath, PyBytes_AS_STRING(nb), val.buf,
						      (size_t)val.len, xflags, res | follow_flag(follow)));
		err = errno;
	});
	Py_DECREF(nb);
	PyBuffer_Release(&val);
	return finish(ret, err, a[1], NULL);
}

PyDoc_STRVAR(removexattr_doc, "removexattr(root, path, attribute, *, follow_symlinks=True, resolve=RESOLVE_BENEATH)\n\n"
"Remove an extended attribute of path beneath root.");

static PyObject *so_removexattr(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
				PyObject *kwnames)
{
	static const char *const names[] = { "root", "path", "attribute", "follow_symlinks", "resolve", NULL };
	OP_BEGIN("removexattr", 3, 3)
	int follow, ret, err = 0;
	uint64_t res;
	if (get_bool(a[3], 1, &follow) < 0 || get_u64(a[4], RESOLVE_DEFAULT, &res) < 0)
		return NULL;
	PyObject *nb = fspath_bytes(a[2]);
	if (!nb)
		return NULL;
	WITH_ROOT_PATH(a[0], a[1], {
		CALL_RETRY(ret, safe_removexattr_beneath(rootfd, cpath, PyBytes_AS_STRING(nb),
							 res | follow_flag(follow)));
		err = errno;
	});
	Py_DECREF(nb);
	return finish(ret, err, a[1], NULL);
}

PyDoc_STRVAR(listxattr_doc, "listxattr(root, path, *, follow_symlinks=True, resolve=RESOLVE_BENEATH) -> list[str]\n\n"
"The names of the extended attributes of path beneath root.");

static PyObject *so_listxattr(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
			      PyObject *kwnames)
{
	static const char *const names[] = { "root", "path", "follow_symlinks", "resolve", NULL };
	OP_BEGIN("listxattr", 2, 2)
	int follow, err = 0;
	ssize_t ret = -1;
	uint64_t res;
	char buf[65536];
	if (get_bool(a[2], 1, &follow) < 0 || get_u64(a[3], RESOLVE_DEFAULT, &res) < 0)
		return NULL;
	WITH_ROOT_PATH(a[0], a[1], {
		CALL_RETRY(ret, safe_listxattr_beneath(rootfd, cpath, buf, sizeof(buf),
						       res | follow_flag(follow)));
		err = errno;
	});
	if (ret < 0)
		return finish(ret, err, a[1], NULL);
	PyObject *list = PyList_New(0);
	for (ssize_t i = 0; list && i < ret;) {
		size_t len = strnlen(buf + i, (size_t)(ret - i));
		PyObject *s = PyUnicode_DecodeFSDefaultAndSize(buf + i, (Py_ssize_t)len);
		if (!s || PyList_Append(list, s) < 0) {
			Py_XDECREF(s);
			Py_CLEAR(list);
			break;
		}
		Py_DECREF(s);
		i += (ssize_t)len + 1;
	}
	return list;
}

/* ------------------------------------------------------------------ tmpfile */

typedef struct {
	PyObject_HEAD
	struct safe_tmpfile *tmp; /* NULL once linked or discarded */
	int fd;                   /* safe_tmpfile_fd(), lent by the handle */
} TmpFileObject;

static PyTypeObject TmpFileType;

PyDoc_STRVAR(tmpfile_open_doc,
"tmpfile_open(root, path, mode=0o644, *, flags=0, resolve=RESOLVE_BENEATH) -> TmpFile\n\n"
"Start a file that appears at path beneath root only when complete:\n"
"write to tmp.fileno(), then tmp.link(...) publishes it (with its xattrs\n"
"already set) or tmp.discard() leaves nothing behind. flags: TMPFILE_*\n"
"bits for the opening (see the header). safeopen.write_atomic() is the\n"
"one-call form.");

static PyObject *so_tmpfile_open(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
				 PyObject *kwnames)
{
	static const char *const names[] = { "root", "path", "mode", "flags", "resolve", NULL };
	OP_BEGIN("tmpfile_open", 3, 2)
	int mode, ret = -1, err = 0;
	uint64_t res, flags;
	struct safe_tmpfile *tmp = NULL;
	if (get_int(a[2], 0644, &mode) < 0 || get_u64(a[3], 0, &flags) < 0 ||
	    get_u64(a[4], RESOLVE_DEFAULT, &res) < 0)
		return NULL;
	WITH_ROOT_PATH(a[0], a[1], {
		CALL_RETRY(ret, safe_tmpfile_open(rootfd, cpath, (mode_t)mode, res | flags, &tmp));
		err = errno;
	});
	if (ret < 0)
		return finish(ret, err, a[1], NULL);
	TmpFileObject *t = PyObject_New(TmpFileObject, &TmpFileType);
	if (!t) {
		(void)safe_tmpfile_discard(tmp);
		return NULL;
	}
	t->tmp = tmp;
	t->fd = safe_tmpfile_fd(tmp);
	return (PyObject *)t;
}

static PyObject *tmp_fileno(TmpFileObject *t, PyObject *unused)
{
	(void)unused;
	if (!t->tmp) {
		PyErr_SetString(PyExc_ValueError, "TmpFile already linked or discarded");
		return NULL;
	}
	return PyLong_FromLong(t->fd);
}

/* xattrs: a mapping or an iterable of (name, value) pairs; values are
 * bytes-like or str (UTF-8). Fills names/values (new references kept in
 * `keep`) and the safe_xattr array. */
static Py_ssize_t collect_xattrs(PyObject *obj, PyObject **keep, struct safe_xattr **out)
{
	*keep = NULL;
	*out = NULL;
	if (!obj || obj == Py_None)
		return 0;
	PyObject *items = PyMapping_Check(obj) && !PyList_Check(obj) && !PyTuple_Check(obj)
				  ? PyMapping_Items(obj)
				  : PySequence_List(obj);
	if (!items)
		return -1;
	Py_ssize_t n = PyList_GET_SIZE(items);
	PyObject *hold = PyList_New(0);
	struct safe_xattr *xa = PyMem_Calloc(n ? (size_t)n : 1, sizeof(*xa));
	if (!hold || !xa)
		goto fail;
	for (Py_ssize_t i = 0; i < n; i++) {
		PyObject *pair = PyList_GET_ITEM(items, i);
		if (!PyTuple_Check(pair) || PyTuple_GET_SIZE(pair) != 2) {
			PyErr_SetString(PyExc_TypeError, "xattrs: expected (name, value) pairs");
			goto fail;
		}
		PyObject *nb = fspath_bytes(PyTuple_GET_ITEM(pair, 0));
		if (!nb || PyList_Append(hold, nb) < 0) {
			Py_XDECREF(nb);
			goto fail;
		}
		Py_DECREF(nb);
		PyObject *v = PyTuple_GET_ITEM(pair, 1);
		PyObject *vb = PyUnicode_Check(v) ? PyUnicode_AsUTF8String(v) : PyBytes_FromObject(v);
		if (!vb || PyList_Append(hold, vb) < 0) {
			Py_XDECREF(vb);
			goto fail;
		}
		Py_DECREF(vb);
		xa[i].name = PyBytes_AS_STRING(nb);
		xa[i].value = PyBytes_AS_STRING(vb);
		xa[i].size = (size_t)PyBytes_GET_SIZE(vb);
	}
	Py_DECREF(items);
	*keep = hold;
	*out = xa;
	return n;
fail:
	Py_DECREF(items);
	Py_XDECREF(hold);
	PyMem_Free(xa);
	return -1;
}

PyDoc_STRVAR(tmp_link_doc, "link(xattrs=None, flags=0) -> int\n\n"
"Publish the file at its name with the extended attributes xattrs (a\n"
"mapping or (name, value) pairs) set first. flags: TMPFILE_REPLACE to\n"
"replace an existing file atomically, TMPFILE_SYNC for durability.\n"
"Returns the descriptor of the published file (the number fileno()\n"
"gave), which the caller now owns. On failure (FileExistsError without\n"
"TMPFILE_REPLACE, ...) nothing is published and the TmpFile stays usable:\n"
"link() again or discard().");

static PyObject *tmp_link(TmpFileObject *t, PyObject *const *args, Py_ssize_t nargs,
			  PyObject *kwnames)
{
	static const char *const names[] = { "xattrs", "flags", NULL };
	PyObject *a[2];
	uint64_t flags;
	if (parse_args("link", args, nargs, kwnames, names, 2, 0, a) < 0 ||
	    get_u64(a[1], 0, &flags) < 0)
		return NULL;
	if (!t->tmp) {
		PyErr_SetString(PyExc_ValueError, "TmpFile already linked or discarded");
		return NULL;
	}
	PyObject *keep;
	struct safe_xattr *xa;
	Py_ssize_t n = collect_xattrs(a[0], &keep, &xa);
	if (n < 0)
		return NULL;
	/* The handle is taken out of the object while the GIL is released, so
	 * that another thread's link() or discard() cannot use it meanwhile
	 * (they see a spent TmpFile); it is put back if it is still pending. */
	struct safe_tmpfile *tmp = t->tmp;
	t->tmp = NULL;
	int ret;
	CALL_RETRY(ret, safe_tmpfile_link(tmp, xa, (size_t)n, flags));
	int err = errno;
	PyMem_Free(xa);
	Py_XDECREF(keep);
	if (ret < 0) {
		t->tmp = tmp;
		if (PyErr_Occurred())
			return NULL;
		/* still pending: link() again (after EEXIST, with REPLACE) or
		 * discard(), which is all that remains after EBADF */
		return raise_errno(err, NULL, NULL);
	}
	/* the library freed the handle; the descriptor is the caller's now */
	return PyLong_FromLong(ret);
}

PyDoc_STRVAR(tmp_discard_doc, "discard()\n\n"
"Abandon the file: nothing is published, no temporary name is left, and\n"
"the descriptor of fileno() is closed. Idempotent.");

static PyObject *tmp_discard(TmpFileObject *t, PyObject *unused)
{
	(void)unused;
	if (t->tmp) {
		struct safe_tmpfile *tmp = t->tmp;
		t->tmp = NULL;
		int ret;
		Py_BEGIN_ALLOW_THREADS
		ret = safe_tmpfile_discard(tmp);
		Py_END_ALLOW_THREADS
		if (ret < 0)
			return raise_errno(errno, NULL, NULL);
	}
	Py_RETURN_NONE;
}

static PyObject *tmp_enter(PyObject *t, PyObject *unused)
{
	(void)unused;
	Py_INCREF(t);
	return t;
}

static PyObject *tmp_exit(TmpFileObject *t, PyObject *args)
{
	(void)args;
	return tmp_discard(t, NULL);
}

static void tmp_dealloc(TmpFileObject *t)
{
	if (t->tmp)
		(void)safe_tmpfile_discard(t->tmp);
	PyObject_Free(t);
}

static PyMethodDef tmp_methods[] = {
	{ "fileno", (PyCFunction)tmp_fileno, METH_NOARGS,
	  "fileno() -> int\n\nThe descriptor to write the data to (lent: do not close it)." },
	{ "link", (PyCFunction)(void (*)(void))tmp_link, METH_FASTCALL | METH_KEYWORDS, tmp_link_doc },
	{ "discard", (PyCFunction)tmp_discard, METH_NOARGS, tmp_discard_doc },
	{ "__enter__", tmp_enter, METH_NOARGS, "Return self." },
	{ "__exit__", (PyCFunction)tmp_exit, METH_VARARGS,
	  "Discard the file unless it was linked." },
	{ NULL, NULL, 0, NULL },
};

static PyTypeObject TmpFileType = {
	PyVarObject_HEAD_INIT(NULL, 0).tp_name = "safeopen.TmpFile",
	.tp_basicsize = sizeof(TmpFileObject),
	.tp_dealloc = (destructor)tmp_dealloc,
	.tp_flags = Py_TPFLAGS_DEFAULT,
	.tp_doc = "An unpublished file made by tmpfile_open(): write to fileno(), then link()\n"
		  "or discard(). As a context manager it is discarded on exit unless linked.",
	.tp_methods = tmp_methods,
};

PyDoc_STRVAR(sweep_doc, "tmpfile_sweep(root, path='.', *, min_age=3600, resolve=RESOLVE_BENEATH) -> int\n\n"
"Remove the hidden temporaries that interrupted writers of the fallback\n"
"strategy left in the directory path beneath root, if older than min_age\n"
"seconds. Returns how many were removed.");

static PyObject *so_tmpfile_sweep(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
				  PyObject *kwnames)
{
	static const char *const names[] = { "root", "path", "min_age", "resolve", NULL };
	OP_BEGIN("tmpfile_sweep", 2, 1)
	int age, ret, err = 0;
	uint64_t res;
	if (get_int(a[2], 3600, &age) < 0 || get_u64(a[3], RESOLVE_DEFAULT, &res) < 0)
		return NULL;
	if (age < 0) {
		PyErr_SetString(PyExc_ValueError, "min_age must be >= 0");
		return NULL;
	}
	PyObject *dot = NULL;
	if (!a[1]) {
		dot = PyUnicode_FromString(".");
		if (!dot)
			return NULL;
		a[1] = dot;
	}
	WITH_ROOT_PATH(a[0], a[1], {
		CALL_RETRY(ret, safe_tmpfile_sweep_beneath(rootfd, cpath, (unsigned)age, res, NULL));
		err = errno;
	});
	PyObject *out = ret < 0 ? finish(ret, err, a[1], NULL) : PyLong_FromLong(ret);
	Py_XDECREF(dot);
	return out;
}

static PyObject *so_version(PyObject *self, PyObject *unused)
{
	(void)self;
	(void)unused;
	return PyUnicode_FromString(safe_version());
}

/* ------------------------------------------------------------------ module */

#define FC(name, fn, doc) { name, (PyCFunction)(void (*)(void))fn, METH_FASTCALL | METH_KEYWORDS, doc }

static PyMethodDef methods[] = {
	FC("open", so_open, open_doc),
	FC("reopen", so_reopen, reopen_doc),
	FC("mkdir", so_mkdir, mkdir_doc),
	FC("mkdir_all", so_mkdir_all, mkdir_all_doc),
	FC("mknod", so_mknod, mknod_doc),
	FC("stat", so_stat, stat_doc),
	FC("unlink", so_unlink, unlink_doc),
	FC("rmdir", so_rmdir, rmdir_doc),
	FC("rmtree", so_rmtree, rmtree_doc),
	FC("rename", so_rename, rename_doc),
	FC("link", so_link, link_doc),
	FC("symlink", so_symlink, symlink_doc),
	FC("readlink", so_readlink, readlink_doc),
	FC("realpath", so_realpath, realpath_doc),
	FC("chmod", so_chmod, chmod_doc),
	FC("chown", so_chown, chown_doc),
	FC("utime", so_utime, utime_doc),
	FC("getxattr", so_getxattr, getxattr_doc),
	FC("setxattr", so_setxattr, setxattr_doc),
	FC("removexattr", so_removexattr, removexattr_doc),
	FC("listxattr", so_listxattr, listxattr_doc),
	FC("tmpfile_open", so_tmpfile_open, tmpfile_open_doc),
	FC("tmpfile_sweep", so_tmpfile_sweep, sweep_doc),
	{ "version", so_version, METH_NOARGS, "version() -> str\n\nThe version of libsafeopen in use." },
	{ NULL, NULL, 0, NULL },
};

static struct PyModuleDef moduledef = {
	PyModuleDef_HEAD_INIT,
	.m_name = "safeopen._safeopen",
	.m_doc = "The C binding of libsafeopen (use the safeopen package).",
	.m_size = -1,
	.m_methods = methods,
};

/* The constants of include/safeopen.h, listed at build time by
 * bindings/python/gen-constants.py from the header itself (names), with the values
 * taken from the header's macros by the compiler. */
struct so_const {
	const char *name;
	unsigned long long value;
};
static const struct so_const constants[] = {
#include "safeopen-constants.h"
	{ NULL, 0 },
};

PyMODINIT_FUNC PyInit__safeopen(void);
PyMODINIT_FUNC PyInit__safeopen(void)
{
	PyObject *m = PyModule_Create(&moduledef);
	if (!m)
		return NULL;
	if (PyType_Ready(&TmpFileType) < 0)
		goto fail;
	Py_INCREF(&TmpFileType);
	if (PyModule_AddObject(m, "TmpFile", (PyObject *)&TmpFileType) < 0) {
		Py_DECREF(&TmpFileType);
		goto fail;
	}
	EscapeError = PyErr_NewExceptionWithDoc(
		"safeopen.EscapeError",
		"A path would resolve outside its root (errno EXDEV): '..', an absolute\n"
		"path or a symbolic link that leaves it (or, with RESOLVE_NO_XDEV, a\n"
		"mount point crossed). A subclass of OSError.",
		PyExc_OSError, NULL);
	if (!EscapeError)
		goto fail;
	Py_INCREF(EscapeError);
	if (PyModule_AddObject(m, "EscapeError", EscapeError) < 0) {
		Py_DECREF(EscapeError);
		goto fail;
	}
	PyObject *os = PyImport_ImportModule("os");
	if (!os)
		goto fail;
	StatResultType = PyObject_GetAttrString(os, "stat_result");
	Py_DECREF(os);
	if (!StatResultType)
		goto fail;
	for (const struct so_const *c = constants; c->name; c++) {
		PyObject *v = PyLong_FromUnsignedLongLong(c->value);
		if (!v || PyModule_AddObject(m, c->name, v) < 0) {
			Py_XDECREF(v);
			goto fail;
		}
	}
	return m;
fail:
	Py_DECREF(m);
	return NULL;
}
