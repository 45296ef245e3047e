/* SPDX-License-Identifier: MIT */
/*
 * safeopen._safeopen: the CPython binding of libsafeopen.
 *
 * Thin and fast: each function converts its arguments, releases the GIL,
 * calls one library function and turns -1/errno into an OSError subclass
 * (EscapeError for EXDEV) that names the path the caller passed. What is
 * better written in Python (Root's methods, file objects, scandir, walk,
 * write_atomic, extract) is in safeopen/__init__.py.
 *
 * Every wrapper has the same shape: call_parse() (the arguments by name),
 * its own conversions, call_begin() (the root and the path), the library
 * call with the GIL released (CALL_RETRY), call_end() (releases the root
 * and the path, raises with the caller's path). The text signatures of the
 * docstrings ("name($module, /, ...)\n--\n\n") give inspect.signature().
 *
 * Roots. Every operation takes a root: an int descriptor (borrowed), a
 * safeopen.Root (a _Root: see below), another object with fileno()
 * (borrowed), or a str/bytes/PathLike, which is opened with
 * O_PATH|O_DIRECTORY for the call and closed after it. The root's own path
 * is trusted (it comes from the program, not from the request); only the
 * path beneath it is resolved by the library.
 *
 * A _Root may be shared between threads and closed by one of them while
 * others use it: each call holds a use of its descriptor while the GIL is
 * released (users), close() marks the Root closing, so that no new call
 * starts on it (EBADF), and waits, without the GIL, until the calls in flight
 * are done before it closes the descriptor. A call therefore never reaches
 * the library with a number close() gave back to the kernel and another
 * open() may have reused for another directory.
 *
 * Descriptors: every descriptor the module opens is O_CLOEXEC; one it returns
 * belongs to the caller; one it opens for a call (a PathLike root) is closed
 * on every path out of that call (call_end()).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <safeopen.h>

#ifndef PY_VERSION_HEX
#error "Python.h is required"
#endif

#if PY_VERSION_HEX >= 0x030D0000
#define so_is_finalizing() Py_IsFinalizing()
#else
#define so_is_finalizing() _Py_IsFinalizing()
#endif

#ifndef SAFEOPEN_PY_VERSION
#error "SAFEOPEN_PY_VERSION (the release, from configure.ac) must be defined"
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

/* ------------------------------------------------------------------ Root */

typedef struct {
	PyObject_HEAD
	int fd;      /* owned; -1 before __init__ and once closed */
	int closing; /* close() has begun: no new call may start */
	int users;   /* calls in flight (changed with the GIL held; read by a
		      * waiting close() under mu, hence the atomics) */
	pthread_mutex_t mu;
	pthread_cond_t idle; /* users dropped to 0 while closing */
} RootObject;

static PyTypeObject RootType;

static PyObject *root_new(PyTypeObject *type, PyObject *args, PyObject *kwds)
{
	(void)args;
	(void)kwds;
	RootObject *self = (RootObject *)type->tp_alloc(type, 0);
	if (!self)
		return NULL;
	self->fd = -1;
	self->closing = 0;
	self->users = 0;
	pthread_mutex_init(&self->mu, NULL);
	pthread_cond_init(&self->idle, NULL);
	return (PyObject *)self;
}

/* _Root.__init__(fd): adopt fd, a descriptor this object now owns (the
 * Python class opens or duplicates it). */
static int root_init(RootObject *self, PyObject *args, PyObject *kwds)
{
	int fd;
	if (kwds && PyDict_GET_SIZE(kwds)) {
		PyErr_SetString(PyExc_TypeError, "_Root() takes no keyword arguments");
		return -1;
	}
	if (!PyArg_ParseTuple(args, "i:_Root", &fd))
		return -1;
	if (fd < 0 || self->fd >= 0 || self->closing) {
		PyErr_SetString(PyExc_ValueError, "_Root: a descriptor >= 0, once");
		return -1;
	}
	self->fd = fd;
	return 0;
}

/* Wait (without the GIL) until no call uses the descriptor, then close it.
 * Idempotent; a second closer waits as well. */
static PyObject *root_close(RootObject *self, PyObject *unused)
{
	(void)unused;
	self->closing = 1;
	if (__atomic_load_n(&self->users, __ATOMIC_ACQUIRE) > 0) {
		Py_BEGIN_ALLOW_THREADS
		pthread_mutex_lock(&self->mu);
		while (__atomic_load_n(&self->users, __ATOMIC_ACQUIRE) > 0)
			pthread_cond_wait(&self->idle, &self->mu);
		pthread_mutex_unlock(&self->mu);
		Py_END_ALLOW_THREADS
	}
	int fd = self->fd;
	self->fd = -1;
	if (fd >= 0 && close(fd) < 0 && errno != EINTR)
		return raise_errno(errno, NULL, NULL);
	Py_RETURN_NONE;
}

static PyObject *root_fileno(RootObject *self, PyObject *unused)
{
	(void)unused;
	if (self->fd < 0 || self->closing) {
		PyErr_SetString(PyExc_ValueError, "I/O operation on closed Root");
		return NULL;
	}
	return PyLong_FromLong(self->fd);
}

static PyObject *root_closed(RootObject *self, void *unused)
{
	(void)unused;
	return PyBool_FromLong(self->fd < 0 || self->closing);
}

/* An unclosed Root: a ResourceWarning, as for a file, except while the
 * interpreter exits (a module-level Root lives until then by design), and
 * nothing is imported here. */
static void root_finalize(PyObject *o)
{
	RootObject *self = (RootObject *)o;
	if (self->fd < 0)
		return;
	if (!so_is_finalizing()) {
		PyObject *type, *value, *tb;
		PyErr_Fetch(&type, &value, &tb);
		if (PyErr_ResourceWarning(o, 1, "unclosed %R", o) < 0)
			PyErr_WriteUnraisable(o);
		PyErr_Restore(type, value, tb);
	}
	close(self->fd);
	self->fd = -1;
}

static void root_dealloc(RootObject *self)
{
	if (PyObject_CallFinalizerFromDealloc((PyObject *)self) < 0)
		return;
	if (self->fd >= 0)
		close(self->fd);
	pthread_cond_destroy(&self->idle);
	pthread_mutex_destroy(&self->mu);
	Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyMethodDef root_methods[] = {
	{ "fileno", (PyCFunction)root_fileno, METH_NOARGS,
	  "fileno($self, /)\n--\n\n"
	  "The O_PATH descriptor (owned by the Root: do not close it). A number\n"
	  "taken out this way is not protected by the Root's use count: pass the\n"
	  "Root itself to the functions of this module." },
	{ "close", (PyCFunction)root_close, METH_NOARGS,
	  "close($self, /)\n--\n\n"
	  "Close the descriptor, after the calls in flight on this Root (in\n"
	  "other threads) are done; calls that start afterwards fail with EBADF.\n"
	  "Idempotent." },
	{ NULL, NULL, 0, NULL },
};

static PyGetSetDef root_getset[] = {
	{ "closed", (getter)root_closed, NULL, "True once close() was called.", NULL },
	{ NULL, NULL, NULL, NULL, NULL },
};

static PyTypeObject RootType = {
	PyVarObject_HEAD_INIT(NULL, 0).tp_name = "safeopen._safeopen._Root",
	.tp_basicsize = sizeof(RootObject),
	.tp_dealloc = (destructor)root_dealloc,
	.tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
	.tp_doc = "The descriptor of a safeopen.Root and the use count that makes\n"
		  "close() safe while other threads call through it.",
	.tp_methods = root_methods,
	.tp_getset = root_getset,
	.tp_init = (initproc)root_init,
	.tp_new = root_new,
	.tp_finalize = root_finalize,
};

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

/* A root for one call: its descriptor, whether the call opened it, and the
 * _Root whose use it holds. */
struct root {
	int fd;
	int owned;
	RootObject *ro;
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

/* Take the root `o` for a call on `path` (named in errors). */
static int root_get(PyObject *o, struct root *r, PyObject *path)
{
	r->fd = -1;
	r->owned = 0;
	r->ro = NULL;
	if (PyObject_TypeCheck(o, &RootType)) {
		RootObject *ro = (RootObject *)o;
		if (ro->closing || ro->fd < 0) {
			raise_errno(EBADF, path, NULL);
			return -1;
		}
		/* with the GIL: close() cannot be between its check of closing
		 * and its read of users */
		__atomic_add_fetch(&ro->users, 1, __ATOMIC_ACQ_REL);
		Py_INCREF(ro);
		r->ro = ro;
		r->fd = ro->fd;
		return 0;
	}
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
	Py_DECREF(bytes);
	if (fd < 0) {
		raise_errno(errno, o, NULL);
		return -1;
	}
	r->fd = fd;
	r->owned = 1;
	return 0;
}

/* Give the root back (with the GIL held). */
static void root_put(struct root *r)
{
	if (r->owned && r->fd >= 0)
		close(r->fd);
	RootObject *ro = r->ro;
	if (ro) {
		if (__atomic_sub_fetch(&ro->users, 1, __ATOMIC_ACQ_REL) == 0 && ro->closing) {
			pthread_mutex_lock(&ro->mu);
			pthread_cond_broadcast(&ro->idle);
			pthread_mutex_unlock(&ro->mu);
		}
		Py_DECREF(ro);
	}
	r->fd = -1;
	r->owned = 0;
	r->ro = NULL;
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
#define MAX_ARGS 8

/* Retry a call interrupted by a signal, as the os module does (PEP 475). */
#define CALL_RETRY(ret, expr)                                                                      \
	do {                                                                                       \
		Py_BEGIN_ALLOW_THREADS(ret) = (expr);                                              \
		Py_END_ALLOW_THREADS                                                               \
	} while ((ret) < 0 && errno == EINTR && PyErr_CheckSignals() == 0)

/* ------------------------------------------------------------------ the prologue */

/* One call of a wrapper: its arguments by name, then its root(s) and path. */
struct call {
	PyObject *a[MAX_ARGS]; /* borrowed; NULL when not passed */
	struct root r, r2;     /* the root, and dst_root of the two-root calls */
	PyObject *pb;          /* the path as bytes (owned) */
	const char *path;      /* its string */
	PyObject *name, *name2; /* what errors name: the caller's path(s) */
};

/* The arguments (see parse_args). */
static int call_parse(struct call *c, const char *fname, const char *const *names, int npos,
		      int nreq, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
	c->r = (struct root){ -1, 0, NULL };
	c->r2 = (struct root){ -1, 0, NULL };
	c->pb = NULL;
	c->path = NULL;
	c->name = c->name2 = NULL;
	return parse_args(fname, args, nargs, kwnames, names, npos, nreq, c->a);
}

static void call_release(struct call *c)
{
	Py_CLEAR(c->pb);
	root_put(&c->r2);
	root_put(&c->r);
}

/* The root a[iroot] and the path a[ipath]; on failure nothing is held. */
static int call_begin(struct call *c, int iroot, int ipath)
{
	c->name = c->a[ipath];
	if (root_get(c->a[iroot], &c->r, c->name) < 0)
		return -1;
	c->pb = fspath_bytes(c->a[ipath]);
	if (!c->pb) {
		call_release(c);
		return -1;
	}
	c->path = PyBytes_AS_STRING(c->pb);
	return 0;
}

/* The end of every call: release, then None, or the error of `err`. */
static PyObject *call_end(struct call *c, long long ret, int err)
{
	call_release(c);
	if (ret < 0)
		return PyErr_Occurred() ? NULL : raise_errno(err, c->name, c->name2);
	Py_RETURN_NONE;
}

/* call_end() for the calls that return an int (a descriptor, a count). */
static PyObject *call_end_int(struct call *c, long long ret, int err)
{
	if (ret < 0)
		return call_end(c, ret, err);
	call_release(c);
	return PyLong_FromLongLong(ret);
}

#define WRAPPER(fn)                                                                                \
	static PyObject *fn(PyObject *self, PyObject *const *args, Py_ssize_t nargs,               \
			    PyObject *kwnames)
#define PARSE(fname, npos, nreq)                                                                   \
	struct call c;                                                                             \
	(void)self;                                                                                \
	if (call_parse(&c, fname, names, npos, nreq, args, nargs, kwnames) < 0)                    \
		return NULL

static uint64_t follow_flag(int follow)
{
	return follow ? SAFE_FOLLOW : 0;
}

/* ------------------------------------------------------------------ open */

PyDoc_STRVAR(open_doc,
"open($module, /, path, flags, mode=0o777, *, dir_fd, resolve=RESOLVE_BENEATH)\n--\n\n"
"Open path beneath the root dir_fd, like os.open(path, flags, mode,\n"
"dir_fd=dir_fd), but the path never resolves outside the root: '..',\n"
"absolute paths and symbolic links that would leave it fail with\n"
"EscapeError (EXDEV), with RESOLVE_IN_ROOT they are scoped to it.\n"
"dir_fd is a descriptor, a Root, or a path (opened for this call).\n"
"resolve is a mask of RESOLVE_* flags with exactly one of RESOLVE_BENEATH\n"
"and RESOLVE_IN_ROOT. Returns a new O_CLOEXEC descriptor.");

WRAPPER(so_open)
{
	static const char *const names[] = { "path", "flags", "mode", "dir_fd", "resolve", NULL };
	PARSE("open", 3, 2);
	if (!c.a[3]) {
		PyErr_SetString(PyExc_TypeError, "open() missing required keyword argument 'dir_fd'");
		return NULL;
	}
	int flags, mode;
	uint64_t resolve;
	if (get_int(c.a[1], 0, &flags) < 0 || get_int(c.a[2], 0777, &mode) < 0 ||
	    get_u64(c.a[4], RESOLVE_DEFAULT, &resolve) < 0 || call_begin(&c, 3, 0) < 0)
		return NULL;
	/* O_CREAT/O_TMPFILE take the mode; otherwise it must be 0 for openat2 */
	int creates = (flags & O_CREAT) || (flags & O_TMPFILE) == O_TMPFILE;
	struct safe_open_how how = { .flags = (uint64_t)(unsigned)flags | O_CLOEXEC,
				     .mode = creates ? (uint64_t)(mode & 07777) : 0,
				     .resolve = resolve };
	int fd;
	CALL_RETRY(fd, safe_openat2(c.r.fd, c.path, &how, sizeof(how)));
	return call_end_int(&c, fd, errno);
}

PyDoc_STRVAR(reopen_doc,
"reopen($module, /, fd, flags)\n--\n\n"
"Open the object of fd (an O_PATH descriptor, say) again with new open(2)\n"
"flags, never through a path. Returns a new O_CLOEXEC descriptor.");

WRAPPER(so_reopen)
{
	static const char *const names[] = { "fd", "flags", NULL };
	int fd, flags, ret;
	PARSE("reopen", 2, 2);
	if (get_int(c.a[0], 0, &fd) < 0 || get_int(c.a[1], 0, &flags) < 0)
		return NULL;
	CALL_RETRY(ret, safe_reopen(fd, flags));
	c.name = c.a[0];
	return call_end_int(&c, ret, errno);
}

/* ------------------------------------------------------------------ one-path operations */

PyDoc_STRVAR(mkdir_doc, "mkdir($module, /, root, path, mode=0o777, *, resolve=RESOLVE_BENEATH)\n--\n\n"
"Create the directory path beneath root (its parent must exist). An\n"
"existing name, a symbolic link included, is FileExistsError.");

WRAPPER(so_mkdir)
{
	static const char *const names[] = { "root", "path", "mode", "resolve", NULL };
	int mode, ret;
	uint64_t res;
	PARSE("mkdir", 3, 2);
	if (get_int(c.a[2], 0777, &mode) < 0 || get_u64(c.a[3], RESOLVE_DEFAULT, &res) < 0 ||
	    call_begin(&c, 0, 1) < 0)
		return NULL;
	CALL_RETRY(ret, safe_mkdirat_beneath(c.r.fd, c.path, (mode_t)mode, res));
	return call_end(&c, ret, errno);
}

PyDoc_STRVAR(mkdir_all_doc, "mkdir_all($module, /, root, path, mode=0o777, *, resolve=RESOLVE_BENEATH)\n--\n\n"
"Create path and its missing parents beneath root (mkdir -p); existing\n"
"directories are kept. Returns an O_PATH descriptor of the last one,\n"
"which the caller closes (safeopen.makedirs() is the os-style wrapper).");

WRAPPER(so_mkdir_all)
{
	static const char *const names[] = { "root", "path", "mode", "resolve", NULL };
	int mode, ret;
	uint64_t res;
	PARSE("mkdir_all", 3, 2);
	if (get_int(c.a[2], 0777, &mode) < 0 || get_u64(c.a[3], RESOLVE_DEFAULT, &res) < 0 ||
	    call_begin(&c, 0, 1) < 0)
		return NULL;
	CALL_RETRY(ret, safe_mkdir_all_beneath(c.r.fd, c.path, (mode_t)mode, res));
	return call_end_int(&c, ret, errno);
}

PyDoc_STRVAR(mknod_doc, "mknod($module, /, root, path, mode=0o10600, device=0, *, resolve=RESOLVE_BENEATH)\n--\n\n"
"Create a FIFO, socket or device node (mode includes the file type, as\n"
"os.mknod; the default is a FIFO of mode 0o600) as the last name of path\n"
"beneath root.");

WRAPPER(so_mknod)
{
	static const char *const names[] = { "root", "path", "mode", "device", "resolve", NULL };
	int mode, ret;
	uint64_t res, dev;
	PARSE("mknod", 4, 2);
	if (get_int(c.a[2], 0600 | S_IFIFO, &mode) < 0 || get_u64(c.a[3], 0, &dev) < 0 ||
	    get_u64(c.a[4], RESOLVE_DEFAULT, &res) < 0 || call_begin(&c, 0, 1) < 0)
		return NULL;
	CALL_RETRY(ret, safe_mknodat_beneath(c.r.fd, c.path, (mode_t)mode, (dev_t)dev, res));
	return call_end(&c, ret, errno);
}

PyDoc_STRVAR(stat_doc, "stat($module, /, root, path, *, follow_symlinks=True, resolve=RESOLVE_BENEATH)\n--\n\n"
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

WRAPPER(so_stat)
{
	static const char *const names[] = { "root", "path", "follow_symlinks", "resolve", NULL };
	int follow, ret;
	uint64_t res;
	struct stat st;
	PARSE("stat", 2, 2);
	if (get_bool(c.a[2], 1, &follow) < 0 || get_u64(c.a[3], RESOLVE_DEFAULT, &res) < 0 ||
	    call_begin(&c, 0, 1) < 0)
		return NULL;
	CALL_RETRY(ret, safe_fstatat_beneath(c.r.fd, c.path, &st, res | follow_flag(follow)));
	if (ret < 0)
		return call_end(&c, ret, errno);
	call_release(&c);
	return make_stat(&st);
}

PyDoc_STRVAR(unlink_doc, "unlink($module, /, root, path, *, resolve=RESOLVE_BENEATH)\n--\n\n"
"Remove the name path beneath root (never what a symbolic link names).");
PyDoc_STRVAR(rmdir_doc, "rmdir($module, /, root, path, *, resolve=RESOLVE_BENEATH)\n--\n\n"
"Remove the empty directory path beneath root.");

static PyObject *unlink_common(const char *fname, uint64_t extra, PyObject *self,
			       PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
	static const char *const names[] = { "root", "path", "resolve", NULL };
	int ret;
	uint64_t res;
	PARSE(fname, 2, 2);
	if (get_u64(c.a[2], RESOLVE_DEFAULT, &res) < 0 || call_begin(&c, 0, 1) < 0)
		return NULL;
	CALL_RETRY(ret, safe_unlinkat_beneath(c.r.fd, c.path, res | extra));
	return call_end(&c, ret, errno);
}

WRAPPER(so_unlink)
{
	return unlink_common("unlink", 0, self, args, nargs, kwnames);
}

WRAPPER(so_rmdir)
{
	return unlink_common("rmdir", SAFE_REMOVEDIR, self, args, nargs, kwnames);
}

PyDoc_STRVAR(rmtree_doc, "rmtree($module, /, root, path, *, xdev=False, resolve=RESOLVE_BENEATH)\n--\n\n"
"Remove path and everything beneath it (rm -r), never following a symbolic\n"
"link and never leaving the tree, even while it changes. Mount points are\n"
"left alone (OSError EXDEV... as the library says) unless xdev is true.");

WRAPPER(so_rmtree)
{
	static const char *const names[] = { "root", "path", "xdev", "resolve", NULL };
	int xdev, ret;
	uint64_t res;
	PARSE("rmtree", 2, 2);
	if (get_bool(c.a[2], 0, &xdev) < 0 || get_u64(c.a[3], RESOLVE_DEFAULT, &res) < 0 ||
	    call_begin(&c, 0, 1) < 0)
		return NULL;
	CALL_RETRY(ret, safe_rmtree_beneath(c.r.fd, c.path, res | (xdev ? SAFE_RMTREE_XDEV : 0)));
	return call_end(&c, ret, errno);
}

/* ------------------------------------------------------------------ two-path operations */

PyDoc_STRVAR(rename_doc, "rename($module, /, root, src, dst, *, dst_root=None, flags=0, resolve=RESOLVE_BENEATH)\n--\n\n"
"Rename src beneath root to dst beneath dst_root (default: root), like\n"
"os.rename(). flags: RENAME_NOREPLACE, RENAME_EXCHANGE.");
PyDoc_STRVAR(link_doc, "link($module, /, root, src, dst, *, dst_root=None, follow_symlinks=False, resolve=RESOLVE_BENEATH)\n--\n\n"
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
	uint64_t flags, res;
	int follow, ret;
	PARSE(fname, 3, 3);
	if ((is_link && c.a[4]) || (!is_link && c.a[6])) {
		PyErr_Format(PyExc_TypeError, "%s() got an unexpected keyword argument '%s'", fname,
			     is_link ? "flags" : "follow_symlinks");
		return NULL;
	}
	if (get_u64(c.a[4], 0, &flags) < 0 || get_u64(c.a[5], RESOLVE_DEFAULT, &res) < 0 ||
	    get_bool(c.a[6], 0, &follow) < 0 || call_begin(&c, 0, 1) < 0)
		return NULL;
	c.name2 = c.a[2];
	PyObject *dstb = fspath_bytes(c.a[2]);
	if (!dstb)
		return call_end(&c, -1, 0);
	int have_r2 = c.a[3] && c.a[3] != Py_None;
	if (have_r2 && root_get(c.a[3], &c.r2, c.a[2]) < 0) {
		Py_DECREF(dstb);
		return call_end(&c, -1, 0);
	}
	int dfd = have_r2 ? c.r2.fd : c.r.fd;
	const char *dst = PyBytes_AS_STRING(dstb);
	if (is_link)
		CALL_RETRY(ret, safe_linkat_beneath(c.r.fd, c.path, dfd, dst, res | follow_flag(follow)));
	else
		CALL_RETRY(ret, safe_renameat_beneath(c.r.fd, c.path, dfd, dst, res | flags));
	int err = errno;
	Py_DECREF(dstb);
	return call_end(&c, ret, err);
}

WRAPPER(so_rename)
{
	return two_paths(0, self, args, nargs, kwnames);
}

WRAPPER(so_link)
{
	return two_paths(1, self, args, nargs, kwnames);
}

PyDoc_STRVAR(symlink_doc, "symlink($module, /, root, path, target, *, resolve=RESOLVE_BENEATH)\n--\n\n"
"Create the symbolic link path beneath root with the body target (stored\n"
"as it is). The binding's own order; safeopen.symlink(root, src, dst)\n"
"takes os.symlink()'s.");

WRAPPER(so_symlink)
{
	static const char *const names[] = { "root", "path", "target", "resolve", NULL };
	int ret;
	uint64_t res;
	PARSE("symlink", 3, 3);
	if (get_u64(c.a[3], RESOLVE_DEFAULT, &res) < 0)
		return NULL;
	PyObject *tb = fspath_bytes(c.a[2]);
	if (!tb)
		return NULL;
	if (call_begin(&c, 0, 1) < 0) {
		Py_DECREF(tb);
		return NULL;
	}
	c.name2 = c.a[2];
	CALL_RETRY(ret, safe_symlinkat_beneath(PyBytes_AS_STRING(tb), c.r.fd, c.path, res));
	int err = errno;
	Py_DECREF(tb);
	/* as os.symlink: filename is the body (src), filename2 the new name */
	c.name = c.a[2];
	c.name2 = c.a[1];
	return call_end(&c, ret, err);
}

/* A name the library wrote into buf: str (filesystem encoding) or bytes. */
static PyObject *name_result(const char *buf, Py_ssize_t len, int as_bytes)
{
	if (as_bytes)
		return PyBytes_FromStringAndSize(buf, len);
	return PyUnicode_DecodeFSDefaultAndSize(buf, len);
}

PyDoc_STRVAR(readlink_doc, "readlink($module, /, root, path, *, resolve=RESOLVE_BENEATH)\n--\n\n"
"The body of the symbolic link path beneath root (bytes if path is bytes).");
PyDoc_STRVAR(realpath_doc, "realpath($module, /, root, path, *, resolve=RESOLVE_BENEATH)\n--\n\n"
"The canonical name of what path opens beneath root, relative to root\n"
"(\".\" for the root itself, \"a/b\" otherwise), following symbolic links\n"
"scoped to the root. Unlike os.path.realpath() the result, resolved again\n"
"from root without following any link, named the same object when the\n"
"call returned.");

static PyObject *name_op(int is_realpath, PyObject *self, PyObject *const *args,
			 Py_ssize_t nargs, PyObject *kwnames)
{
	static const char *const names[] = { "root", "path", "resolve", NULL };
	ssize_t ret;
	uint64_t res;
	char buf[PATH_MAX + 1];
	PARSE(is_realpath ? "realpath" : "readlink", 2, 2);
	if (get_u64(c.a[2], RESOLVE_DEFAULT, &res) < 0 || call_begin(&c, 0, 1) < 0)
		return NULL;
	if (is_realpath)
		CALL_RETRY(ret, safe_realpath_beneath(c.r.fd, c.path, buf, sizeof(buf), res));
	else
		CALL_RETRY(ret, safe_readlinkat_beneath(c.r.fd, c.path, buf, sizeof(buf), res));
	if (ret < 0)
		return call_end(&c, ret, errno);
	call_release(&c);
	return name_result(buf, ret, wants_bytes(c.a[1]));
}

WRAPPER(so_readlink)
{
	return name_op(0, self, args, nargs, kwnames);
}

WRAPPER(so_realpath)
{
	return name_op(1, self, args, nargs, kwnames);
}

/* ------------------------------------------------------------------ attributes */

PyDoc_STRVAR(chmod_doc, "chmod($module, /, root, path, mode, *, follow_symlinks=True, resolve=RESOLVE_BENEATH)\n--\n\n"
"os.chmod() of path beneath root.");

WRAPPER(so_chmod)
{
	static const char *const names[] = { "root", "path", "mode", "follow_symlinks", "resolve", NULL };
	int mode, follow, ret;
	uint64_t res;
	PARSE("chmod", 3, 3);
	if (get_int(c.a[2], 0, &mode) < 0 || get_bool(c.a[3], 1, &follow) < 0 ||
	    get_u64(c.a[4], RESOLVE_DEFAULT, &res) < 0 || call_begin(&c, 0, 1) < 0)
		return NULL;
	CALL_RETRY(ret, safe_fchmodat_beneath(c.r.fd, c.path, (mode_t)mode, res | follow_flag(follow)));
	return call_end(&c, ret, errno);
}

PyDoc_STRVAR(chown_doc, "chown($module, /, root, path, uid, gid, *, follow_symlinks=True, resolve=RESOLVE_BENEATH)\n--\n\n"
"os.chown() of path beneath root; -1 leaves the id unchanged.");

WRAPPER(so_chown)
{
	static const char *const names[] = { "root", "path", "uid", "gid", "follow_symlinks", "resolve", NULL };
	int uid, gid, follow, ret;
	uint64_t res;
	PARSE("chown", 4, 4);
	if (get_int(c.a[2], -1, &uid) < 0 || get_int(c.a[3], -1, &gid) < 0 ||
	    get_bool(c.a[4], 1, &follow) < 0 || get_u64(c.a[5], RESOLVE_DEFAULT, &res) < 0 ||
	    call_begin(&c, 0, 1) < 0)
		return NULL;
	CALL_RETRY(ret, safe_fchownat_beneath(c.r.fd, c.path, (uid_t)uid, (gid_t)gid,
					      res | follow_flag(follow)));
	return call_end(&c, ret, errno);
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

PyDoc_STRVAR(utime_doc, "utime($module, /, root, path, times=None, *, ns=None, follow_symlinks=True, resolve=RESOLVE_BENEATH)\n--\n\n"
"os.utime() of path beneath root: times=(atime, mtime) in seconds or\n"
"ns=(atime_ns, mtime_ns); neither sets both to the current time.");

WRAPPER(so_utime)
{
	static const char *const names[] = { "root", "path", "times", "ns", "follow_symlinks", "resolve", NULL };
	int follow, ret;
	uint64_t res;
	struct timespec ts[2], *tsp = NULL;
	PARSE("utime", 3, 2);
	if (get_bool(c.a[4], 1, &follow) < 0 || get_u64(c.a[5], RESOLVE_DEFAULT, &res) < 0)
		return NULL;
	int have_t = c.a[2] && c.a[2] != Py_None, have_ns = c.a[3] && c.a[3] != Py_None;
	if (have_t && have_ns) {
		PyErr_SetString(PyExc_ValueError, "utime: you may specify either 'times' or 'ns' but not both");
		return NULL;
	}
	if (have_t || have_ns) {
		if (time_pair(have_t ? c.a[2] : c.a[3], have_ns, ts) < 0)
			return NULL;
		tsp = ts;
	}
	if (call_begin(&c, 0, 1) < 0)
		return NULL;
	CALL_RETRY(ret, safe_utimensat_beneath(c.r.fd, c.path, tsp, res | follow_flag(follow)));
	return call_end(&c, ret, errno);
}

/* The xattr calls: root, path, the attribute's name (as bytes in *nb) and
 * the follow/resolve flags at a[ifollow], a[ifollow + 1]. */
static int xattr_begin(struct call *c, int ifollow, PyObject **nb, uint64_t *flags)
{
	int follow;
	uint64_t res;
	if (get_bool(c->a[ifollow], 1, &follow) < 0 ||
	    get_u64(c->a[ifollow + 1], RESOLVE_DEFAULT, &res) < 0)
		return -1;
	*flags = res | follow_flag(follow);
	*nb = fspath_bytes(c->a[2]);
	if (!*nb)
		return -1;
	if (call_begin(c, 0, 1) < 0) {
		Py_CLEAR(*nb);
		return -1;
	}
	return 0;
}

PyDoc_STRVAR(getxattr_doc, "getxattr($module, /, root, path, attribute, *, follow_symlinks=True, resolve=RESOLVE_BENEATH)\n--\n\n"
"The value of the extended attribute of path beneath root.");

WRAPPER(so_getxattr)
{
	static const char *const names[] = { "root", "path", "attribute", "follow_symlinks", "resolve", NULL };
	ssize_t ret;
	uint64_t flags;
	PyObject *nb;
	char buf[65536];
	PARSE("getxattr", 3, 3);
	if (xattr_begin(&c, 3, &nb, &flags) < 0)
		return NULL;
	CALL_RETRY(ret, safe_getxattr_beneath(c.r.fd, c.path, PyBytes_AS_STRING(nb), buf,
					      sizeof(buf), flags));
	int err = errno;
	Py_DECREF(nb);
	if (ret < 0)
		return call_end(&c, ret, err);
	call_release(&c);
	return PyBytes_FromStringAndSize(buf, ret);
}

PyDoc_STRVAR(setxattr_doc, "setxattr($module, /, root, path, attribute, value, flags=0, *, follow_symlinks=True, resolve=RESOLVE_BENEATH)\n--\n\n"
"Set an extended attribute of path beneath root (flags: os.XATTR_CREATE,\n"
"os.XATTR_REPLACE).");

WRAPPER(so_setxattr)
{
	static const char *const names[] = { "root", "path", "attribute", "value", "flags", "follow_symlinks", "resolve", NULL };
	int xflags, ret;
	uint64_t flags;
	PyObject *nb;
	Py_buffer val;
	PARSE("setxattr", 5, 4);
	if (get_int(c.a[4], 0, &xflags) < 0 || PyObject_GetBuffer(c.a[3], &val, PyBUF_SIMPLE) < 0)
		return NULL;
	if (xattr_begin(&c, 5, &nb, &flags) < 0) {
		PyBuffer_Release(&val);
		return NULL;
	}
	CALL_RETRY(ret, safe_setxattr_beneath(c.r.fd, c.path, PyBytes_AS_STRING(nb), val.buf,
					      (size_t)val.len, xflags, flags));
	int err = errno;
	Py_DECREF(nb);
	PyBuffer_Release(&val);
	return call_end(&c, ret, err);
}

PyDoc_STRVAR(removexattr_doc, "removexattr($module, /, root, path, attribute, *, follow_symlinks=True, resolve=RESOLVE_BENEATH)\n--\n\n"
"Remove an extended attribute of path beneath root.");

WRAPPER(so_removexattr)
{
	static const char *const names[] = { "root", "path", "attribute", "follow_symlinks", "resolve", NULL };
	int ret;
	uint64_t flags;
	PyObject *nb;
	PARSE("removexattr", 3, 3);
	if (xattr_begin(&c, 3, &nb, &flags) < 0)
		return NULL;
	CALL_RETRY(ret, safe_removexattr_beneath(c.r.fd, c.path, PyBytes_AS_STRING(nb), flags));
	int err = errno;
	Py_DECREF(nb);
	return call_end(&c, ret, err);
}

PyDoc_STRVAR(listxattr_doc, "listxattr($module, /, root, path, *, follow_symlinks=True, resolve=RESOLVE_BENEATH)\n--\n\n"
"The names of the extended attributes of path beneath root.");

WRAPPER(so_listxattr)
{
	static const char *const names[] = { "root", "path", "follow_symlinks", "resolve", NULL };
	int follow;
	ssize_t ret;
	uint64_t res;
	char buf[65536];
	PARSE("listxattr", 2, 2);
	if (get_bool(c.a[2], 1, &follow) < 0 || get_u64(c.a[3], RESOLVE_DEFAULT, &res) < 0 ||
	    call_begin(&c, 0, 1) < 0)
		return NULL;
	CALL_RETRY(ret, safe_listxattr_beneath(c.r.fd, c.path, buf, sizeof(buf),
					       res | follow_flag(follow)));
	if (ret < 0)
		return call_end(&c, ret, errno);
	call_release(&c);
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
	PyObject *path;           /* the caller's path, for errors */
} TmpFileObject;

static PyTypeObject TmpFileType;

PyDoc_STRVAR(tmpfile_open_doc,
"tmpfile_open($module, /, root, path, mode=0o644, *, flags=0, resolve=RESOLVE_BENEATH)\n--\n\n"
"Start a file that appears at path beneath root only when complete:\n"
"write to tmp.fileno(), then tmp.link(...) publishes it (with its xattrs\n"
"already set) or tmp.discard() leaves nothing behind. flags: TMPFILE_*\n"
"bits for the opening (see the header). safeopen.write_atomic() is the\n"
"one-call form.");

WRAPPER(so_tmpfile_open)
{
	static const char *const names[] = { "root", "path", "mode", "flags", "resolve", NULL };
	int mode, ret;
	uint64_t res, flags;
	struct safe_tmpfile *tmp = NULL;
	PARSE("tmpfile_open", 3, 2);
	if (get_int(c.a[2], 0644, &mode) < 0 || get_u64(c.a[3], 0, &flags) < 0 ||
	    get_u64(c.a[4], RESOLVE_DEFAULT, &res) < 0 || call_begin(&c, 0, 1) < 0)
		return NULL;
	CALL_RETRY(ret, safe_tmpfile_open(c.r.fd, c.path, (mode_t)mode, res | flags, &tmp));
	if (ret < 0)
		return call_end(&c, ret, errno);
	call_release(&c);
	TmpFileObject *t = PyObject_New(TmpFileObject, &TmpFileType);
	if (!t) {
		(void)safe_tmpfile_discard(tmp);
		return NULL;
	}
	t->tmp = tmp;
	t->fd = safe_tmpfile_fd(tmp);
	Py_INCREF(c.a[1]);
	t->path = c.a[1];
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

PyDoc_STRVAR(tmp_link_doc, "link($self, /, xattrs=None, flags=0)\n--\n\n"
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
		return raise_errno(err, t->path, NULL);
	}
	/* the library freed the handle; the descriptor is the caller's now */
	return PyLong_FromLong(ret);
}

PyDoc_STRVAR(tmp_discard_doc, "discard($self, /)\n--\n\n"
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
			return raise_errno(errno, t->path, NULL);
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
	Py_XDECREF(t->path);
	PyObject_Free(t);
}

static PyMethodDef tmp_methods[] = {
	{ "fileno", (PyCFunction)tmp_fileno, METH_NOARGS,
	  "fileno($self, /)\n--\n\nThe descriptor to write the data to (lent: do not close it)." },
	{ "link", (PyCFunction)(void (*)(void))tmp_link, METH_FASTCALL | METH_KEYWORDS, tmp_link_doc },
	{ "discard", (PyCFunction)tmp_discard, METH_NOARGS, tmp_discard_doc },
	{ "__enter__", tmp_enter, METH_NOARGS, "__enter__($self, /)\n--\n\nReturn self." },
	{ "__exit__", (PyCFunction)tmp_exit, METH_VARARGS,
	  "__exit__($self, *exc)\n--\n\nDiscard the file unless it was linked." },
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

PyDoc_STRVAR(sweep_doc, "tmpfile_sweep($module, /, root, path='.', *, min_age=3600, resolve=RESOLVE_BENEATH)\n--\n\n"
"Remove the hidden temporaries that interrupted writers of the fallback\n"
"strategy left in the directory path beneath root, if older than min_age\n"
"seconds. Returns how many were removed.");

WRAPPER(so_tmpfile_sweep)
{
	static const char *const names[] = { "root", "path", "min_age", "resolve", NULL };
	static PyObject *dot;
	int age, ret;
	uint64_t res;
	PARSE("tmpfile_sweep", 2, 1);
	if (get_int(c.a[2], 3600, &age) < 0 || get_u64(c.a[3], RESOLVE_DEFAULT, &res) < 0)
		return NULL;
	if (age < 0) {
		PyErr_SetString(PyExc_ValueError, "min_age must be >= 0");
		return NULL;
	}
	if (!c.a[1]) {
		if (!dot && !(dot = PyUnicode_InternFromString(".")))
			return NULL;
		c.a[1] = dot;
	}
	if (call_begin(&c, 0, 1) < 0)
		return NULL;
	CALL_RETRY(ret, safe_tmpfile_sweep_beneath(c.r.fd, c.path, (unsigned)age, res, NULL));
	return call_end_int(&c, ret, errno);
}

/* ------------------------------------------------------------------ walk */

/* The library's confined walk as an iterator of raw entries, for
 * safeopen.fwalk()/walk() (safeopen/__init__.py): each entry is
 * (visit, path, name, dirfd, fd, error, depth, mode), path and name as bytes,
 * dirfd and fd lent until the next entry. */
typedef struct {
	PyObject_HEAD
	struct safe_walk *w; /* NULL once closed */
	int busy;            /* a next()/skip() is running without the GIL */
} WalkObject;

static PyTypeObject WalkType;

PyDoc_STRVAR(walk_doc, "_walk($module, /, root, path, flags)\n--\n\n"
"The library's confined walk (safe_walk_open(3)) of path beneath root:\n"
"an iterator of (visit, path, name, dirfd, fd, error, depth, mode), the\n"
"descriptors lent until the next entry. flags: RESOLVE_* and WALK_* bits.\n"
"safeopen.fwalk() and safeopen.walk() are the os-style forms.");

WRAPPER(so_walk)
{
	static const char *const names[] = { "root", "path", "flags", NULL };
	uint64_t flags;
	struct safe_walk *w = NULL;
	int ret;
	PARSE("_walk", 3, 3);
	if (get_u64(c.a[2], 0, &flags) < 0 || call_begin(&c, 0, 1) < 0)
		return NULL;
	CALL_RETRY(ret, safe_walk_open(c.r.fd, c.path, flags, &w));
	if (ret < 0)
		return call_end(&c, ret, errno);
	call_release(&c); /* the walk holds descriptors of its own */
	WalkObject *o = PyObject_New(WalkObject, &WalkType);
	if (!o) {
		safe_walk_close(w);
		return NULL;
	}
	o->w = w;
	o->busy = 0;
	return (PyObject *)o;
}

static int walk_usable(WalkObject *o)
{
	if (!o->w) {
		PyErr_SetString(PyExc_ValueError, "walk closed");
		return 0;
	}
	if (o->busy) {
		PyErr_SetString(PyExc_ValueError, "walk already executing");
		return 0;
	}
	return 1;
}

static PyObject *walk_next(WalkObject *o)
{
	if (!o->w)
		return NULL;
	if (!walk_usable(o))
		return NULL;
	struct safe_walk_entry e;
	int ret;
	o->busy = 1;
	CALL_RETRY(ret, safe_walk_next(o->w, &e));
	int err = errno;
	o->busy = 0;
	if (ret <= 0) {
		if (ret < 0 && !PyErr_Occurred())
			raise_errno(err, NULL, NULL);
		return NULL;
	}
	unsigned mode = e.stx && (e.stx->stx_mask & STATX_TYPE) ? e.stx->stx_mode : 0;
	return Py_BuildValue("(Iy#y#iiinI)", e.visit, e.path, (Py_ssize_t)strlen(e.path), e.name,
			     (Py_ssize_t)strlen(e.name), e.dirfd, e.fd, e.error, (Py_ssize_t)e.depth,
			     mode);
}

static PyObject *walk_skip(WalkObject *o, PyObject *unused)
{
	(void)unused;
	if (!walk_usable(o))
		return NULL;
	if (safe_walk_skip(o->w) < 0)
		return raise_errno(errno, NULL, NULL);
	Py_RETURN_NONE;
}

static PyObject *walk_close(WalkObject *o, PyObject *unused)
{
	(void)unused;
	if (o->busy) {
		PyErr_SetString(PyExc_ValueError, "walk already executing");
		return NULL;
	}
	safe_walk_close(o->w);
	o->w = NULL;
	Py_RETURN_NONE;
}

static PyObject *walk_exit(WalkObject *o, PyObject *args)
{
	(void)args;
	return walk_close(o, NULL);
}

static void walk_dealloc(WalkObject *o)
{
	safe_walk_close(o->w);
	PyObject_Free(o);
}

static PyMethodDef walk_methods[] = {
	{ "skip", (PyCFunction)walk_skip, METH_NOARGS,
	  "skip($self, /)\n--\n\nDo not enter the directory just reported as WALK_PRE." },
	{ "close", (PyCFunction)walk_close, METH_NOARGS,
	  "close($self, /)\n--\n\nEnd the walk (its descriptors are closed). Idempotent." },
	{ "__enter__", tmp_enter, METH_NOARGS, "__enter__($self, /)\n--\n\nReturn self." },
	{ "__exit__", (PyCFunction)walk_exit, METH_VARARGS,
	  "__exit__($self, *exc)\n--\n\nClose the walk." },
	{ NULL, NULL, 0, NULL },
};

static PyTypeObject WalkType = {
	PyVarObject_HEAD_INIT(NULL, 0).tp_name = "safeopen._safeopen._Walk",
	.tp_basicsize = sizeof(WalkObject),
	.tp_dealloc = (destructor)walk_dealloc,
	.tp_flags = Py_TPFLAGS_DEFAULT,
	.tp_doc = "A confined walk in progress (see _walk()).",
	.tp_iter = PyObject_SelfIter,
	.tp_iternext = (iternextfunc)walk_next,
	.tp_methods = walk_methods,
};

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
	FC("_walk", so_walk, walk_doc),
	{ "version", so_version, METH_NOARGS,
	  "version($module, /)\n--\n\nThe version of libsafeopen in use (safe_version())." },
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

static int add_type(PyObject *m, const char *name, PyTypeObject *type)
{
	if (PyType_Ready(type) < 0)
		return -1;
	Py_INCREF(type);
	if (PyModule_AddObject(m, name, (PyObject *)type) < 0) {
		Py_DECREF(type);
		return -1;
	}
	return 0;
}

PyMODINIT_FUNC PyInit__safeopen(void);
PyMODINIT_FUNC PyInit__safeopen(void)
{
	PyObject *m = PyModule_Create(&moduledef);
	if (!m)
		return NULL;
	if (add_type(m, "TmpFile", &TmpFileType) < 0 || add_type(m, "_Root", &RootType) < 0 ||
	    add_type(m, "_Walk", &WalkType) < 0 ||
	    PyModule_AddStringConstant(m, "__version__", SAFEOPEN_PY_VERSION) < 0)
		goto fail;
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
