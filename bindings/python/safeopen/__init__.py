# SPDX-License-Identifier: MIT
"""Open untrusted paths beneath a directory without ever leaving it.

safeopen is the Python binding of libsafeopen. Every function takes a
*root* -- a directory descriptor (int), a :class:`Root`, or a path (str,
bytes, os.PathLike; opened for the call) -- and a *path* that comes from
someone you do not trust. The path is resolved by the library, never by a
string check: ``..``, absolute paths and symbolic links that would lead
outside the root fail with :class:`EscapeError` (errno EXDEV), even when
another process swaps a directory for a symlink while the path is walked.
With ``resolve=RESOLVE_IN_ROOT`` they are scoped to the root instead, as if
it were ``/``.

The API follows the os module: :func:`open` returns a descriptor like
``os.open(path, flags, dir_fd=...)``; :func:`open_beneath` returns a file
object like ``open()``; :func:`stat`, :func:`mkdir`, :func:`makedirs`,
:func:`listdir`, :func:`scandir`, :func:`unlink`, :func:`rmdir`,
:func:`rmtree`, :func:`rename`, :func:`link`, :func:`symlink`,
:func:`readlink`, :func:`chmod`, :func:`chown`, :func:`utime`, the xattr
functions and :func:`realpath` take ``(root, path, ...)``.
:func:`write_atomic` publishes a complete file (with its xattrs) or
nothing; :func:`extract` unpacks an untrusted tar archive.

Errors are OSError subclasses with ``errno`` and ``filename`` set: the
builtin ones (FileNotFoundError, PermissionError, ...), and
:class:`EscapeError` for EXDEV ("path escapes the root directory").

The RESOLVE_*, TMPFILE_*, RENAME_* ... constants are generated from the C
header at build time, without the ``SAFE_`` prefix.
"""

import errno as _errno
import io as _io
import os as _os
import stat as _stat

from . import _safeopen
from ._safeopen import *  # noqa: F401,F403  (functions and generated constants)
from ._safeopen import EscapeError, TmpFile, __version__  # noqa: F401

__all__ = [n for n in dir(_safeopen) if not n.startswith("_") and n != "symlink"] + [
    "Root", "open_beneath", "makedirs", "listdir", "scandir", "DirEntry",
    "write_atomic", "extract", "ExtractError", "symlink", "lstat", "exists", "isdir",
    "isfile", "islink", "getsize", "opendir", "walk", "fwalk", "http_status",
]

_BENEATH = _safeopen.RESOLVE_BENEATH


class Root(_safeopen._Root):
    """A directory held open with an O_PATH descriptor: the root of the
    operations of this module.

    ``Root(path)`` opens the directory (its own path is trusted: it comes
    from the program); ``Root(fd)`` duplicates a descriptor, leaving the
    caller's own. ``resolve`` is the default resolution of the methods
    (``RESOLVE_BENEATH``, or ``RESOLVE_IN_ROOT`` to treat the directory as
    ``/``, plus any of ``RESOLVE_NO_SYMLINKS``, ...).

    A Root is a context manager (closed on exit), can be passed wherever a
    root is taken, and has the module's operations as methods:
    ``root.open(path, 'rb')`` is ``open_beneath(root, path, 'rb')``,
    ``root.stat(path)`` is ``stat(root, path, resolve=root.resolve)``...

    A Root may be shared between threads: close() waits for the calls in
    flight through it, and calls made after close() fail with EBADF, so
    that no call ever resolves beneath another directory that reused the
    descriptor's number. (A number taken out with fileno() has no such
    protection.) An unclosed Root is closed when collected, with a
    ResourceWarning, but silently at interpreter exit: a module-level Root
    opened once for the program's life needs no close().
    """

    def __init__(self, path_or_fd, *, resolve=_BENEATH):
        self.resolve = resolve
        self.path = path_or_fd
        if isinstance(path_or_fd, int):
            fd = _os.dup(path_or_fd)
        else:
            try:
                fd = _os.open(path_or_fd, _os.O_PATH | _os.O_DIRECTORY | _os.O_CLOEXEC)
            except OSError as e:
                raise _with_name(e, path_or_fd) from None
        super().__init__(fd)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __repr__(self):
        return "<safeopen.Root %r%s>" % (getattr(self, "path", None),
                                        " closed" if self.closed else "")

    def open(self, path, mode="r", *args, **kwargs):
        """open_beneath(self, path, mode, ...): a file object."""
        kwargs.setdefault("resolve", self.resolve)
        return open_beneath(self, path, mode, *args, **kwargs)

    def open_fd(self, path, flags, mode=0o777):
        """open(path, flags, mode, dir_fd=self): a descriptor."""
        return _safeopen.open(path, flags, mode, dir_fd=self, resolve=self.resolve)

    def subroot(self, path):
        """A new Root for the directory path beneath this one (its path
        attribute is path)."""
        fd = _safeopen.open(path, _os.O_PATH | _os.O_DIRECTORY, dir_fd=self, resolve=self.resolve)
        try:
            sub = Root(fd, resolve=self.resolve)
        finally:
            _os.close(fd)
        sub.path = path
        return sub


def _with_name(e, path, path2=None):
    """e (an OSError) naming path (and path2), as raised by the os module."""
    if e.filename is not None and (path2 is None or e.filename2 is not None):
        return e
    return type(e)(e.errno, e.strerror, path, None, path2)


def _root_method(fn):
    def method(self, *args, **kwargs):
        kwargs.setdefault("resolve", self.resolve)
        return fn(self, *args, **kwargs)
    method.__name__ = fn.__name__
    method.__qualname__ = "Root." + fn.__name__
    method.__doc__ = "%s(self, ...) with resolve=self.resolve by default.\n\n%s" % (
        fn.__name__, fn.__doc__ or "")
    return method


_FLAGS = {"r": _os.O_RDONLY, "w": _os.O_WRONLY | _os.O_CREAT | _os.O_TRUNC,
          "x": _os.O_WRONLY | _os.O_CREAT | _os.O_EXCL, "a": _os.O_WRONLY | _os.O_CREAT | _os.O_APPEND}


def _mode_flags(mode):
    kinds = [c for c in mode if c in "rwxa"]
    if len(kinds) != 1 or len(set(mode)) != len(mode) or set(mode) - set("rwxabt+"):
        raise ValueError("invalid mode: %r" % (mode,))
    flags = _FLAGS[kinds[0]]
    if "+" in mode:
        flags = (flags & ~(_os.O_WRONLY | _os.O_RDONLY)) | _os.O_RDWR
    return flags


def open_beneath(root, path, mode="r", buffering=-1, encoding=None, errors=None,
                 newline=None, *, perm=0o666, flags=0, resolve=_BENEATH):
    """Open path beneath root and return a file object, like the builtin open().

    mode is open()'s ('r', 'wb', 'a+', 'x', ...), and buffering, encoding,
    errors and newline mean what they mean there. perm is the mode of a
    created file (before the umask); flags adds open(2) flags (O_NOFOLLOW,
    O_NONBLOCK, ...). The path is resolved by the library (see open()):
    EscapeError if it would leave root. The file's name is path.
    """
    oflags = _mode_flags(mode)
    # The argument errors open() finds before it opens anything, found here
    # before there is a descriptor.
    if "b" in mode and (encoding is not None or errors is not None or newline is not None):
        raise ValueError("binary mode doesn't take an encoding, errors or newline argument")
    if "b" in mode and "t" in mode:
        raise ValueError("can't have text and binary mode at once")
    if newline not in (None, "", "\n", "\r", "\r\n"):
        raise ValueError("illegal newline value: %r" % (newline,))
    fd = _safeopen.open(path, oflags | flags, perm, dir_fd=root, resolve=resolve)
    try:
        raw = _io.FileIO(fd, mode.replace("b", "").replace("t", ""), closefd=True)
    except BaseException as e:
        _os.close(fd)  # FileIO leaves a descriptor it refused (a directory, ...) open
        if isinstance(e, OSError):  # it names the descriptor: name the path
            raise type(e)(e.errno, e.strerror, path) from None
        raise
    try:
        raw.name = path
        return _layers(raw, mode, buffering, encoding, errors, newline)
    except BaseException:
        raw.close()
        raise


def _layers(raw, mode, buffering, encoding, errors, newline):
    """The buffered and text layers open() puts over a raw file."""
    line_buffering = False
    if buffering == 1 or (buffering < 0 and raw.isatty()):
        buffering, line_buffering = -1, True
    if buffering < 0:
        buffering = _io.DEFAULT_BUFFER_SIZE
        try:
            blksize = _os.fstat(raw.fileno()).st_blksize
            if blksize > 1:
                buffering = blksize
        except OSError:
            pass
    binary = "b" in mode
    if buffering == 0:
        if binary:
            return raw
        raise ValueError("can't have unbuffered text I/O")
    if "+" in mode:
        buf = _io.BufferedRandom(raw, buffering)
    elif "r" in mode:
        buf = _io.BufferedReader(raw, buffering)
    else:
        buf = _io.BufferedWriter(raw, buffering)
    if binary:
        return buf
    if encoding is None:
        encoding = _io.text_encoding(None)
    text = _io.TextIOWrapper(buf, encoding, errors, newline, line_buffering)
    text.mode = mode
    return text


def makedirs(root, path, mode=0o777, exist_ok=False, *, resolve=_BENEATH):
    """os.makedirs() beneath root: create path and its missing parents.

    Existing directories on the way are kept; a symbolic link on the way is
    followed only if it stays beneath root. Without exist_ok, an existing
    last directory is FileExistsError.
    """
    if exist_ok:
        _os.close(_safeopen.mkdir_all(root, path, mode, resolve=resolve))
        return
    p = _os.fsdecode(path) if not isinstance(path, bytes) else path
    sep = b"/" if isinstance(p, bytes) else "/"
    head, _, tail = p.rstrip(sep).rpartition(sep)
    if head and tail:
        try:
            _os.close(_safeopen.mkdir_all(root, head, mode, resolve=resolve))
        except OSError as e:  # it names head: name the caller's path
            raise type(e)(e.errno, e.strerror, path) from None
    _safeopen.mkdir(root, path, mode, resolve=resolve)


def _open_dir(root, path, resolve):
    return _safeopen.open(path, _os.O_RDONLY | _os.O_DIRECTORY, dir_fd=root, resolve=resolve)


def listdir(root, path=".", *, resolve=_BENEATH):
    """os.listdir() of the directory path beneath root (names as str, or
    bytes if path is bytes)."""
    fd = _open_dir(root, path, resolve)
    try:
        names = _os.listdir(fd)
    except OSError as e:
        raise _with_name(e, path) from None
    finally:
        _os.close(fd)
    if isinstance(path, bytes):
        return [_os.fsencode(n) for n in names]
    return names


class DirEntry:
    """An entry of scandir(): name, path (relative to the root), is_dir(),
    is_file(), is_symlink(), stat(), inode().

    Unlike os.DirEntry, every stat goes through the library, scoped to the
    root, so following a symbolic link (the default of is_dir(), is_file()
    and stat()) never leaves it: a link to outside is neither a file nor a
    directory, and its stat() raises EscapeError. The root given to
    scandir() must stay open while the entries are used.
    """

    __slots__ = ("_entry", "_root", "_resolve", "name", "path")

    def __init__(self, entry, root, path, resolve):
        self._entry = entry
        self._root = root
        self._resolve = resolve
        self.name = entry.name
        self.path = path

    def inode(self):
        """The inode number of the entry (from the directory listing)."""
        return self._entry.inode()

    def stat(self, *, follow_symlinks=True):
        """safeopen.stat() of the entry (a link followed beneath the root)."""
        return _safeopen.stat(self._root, self.path, follow_symlinks=follow_symlinks,
                              resolve=self._resolve)

    def _is(self, test, follow_symlinks):
        try:
            return test(self.stat(follow_symlinks=follow_symlinks).st_mode)
        except OSError:
            return False

    def is_symlink(self):
        """True if the entry is a symbolic link."""
        return self._is(_stat.S_ISLNK, False)

    def is_dir(self, *, follow_symlinks=True):
        """True for a directory (or a link to one beneath the root)."""
        return self._is(_stat.S_ISDIR, follow_symlinks)

    def is_file(self, *, follow_symlinks=True):
        """True for a regular file (or a link to one beneath the root)."""
        return self._is(_stat.S_ISREG, follow_symlinks)

    def __fspath__(self):
        return self.path

    def __repr__(self):
        return "<safeopen.DirEntry %r>" % (self.name,)


class _ScandirIterator:
    def __init__(self, root, path, resolve):
        fd = _open_dir(root, path, resolve)
        try:
            self._it = _os.scandir(fd)  # works on its own duplicate
        finally:
            _os.close(fd)
        self._root = root
        self._path = path
        self._resolve = resolve

    def __iter__(self):
        return self

    def __next__(self):
        try:
            entry = next(self._it)
        except StopIteration:
            self.close()
            raise
        p = self._path
        if isinstance(p, bytes):
            full = entry.name if p in (b".", b"") else p.rstrip(b"/") + b"/" + entry.name
        else:
            p = _os.fspath(p)
            full = entry.name if p in (".", "") else p.rstrip("/") + "/" + entry.name
        return DirEntry(entry, self._root, full, self._resolve)

    def close(self):
        """Close the directory."""
        self._it.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def scandir(root, path=".", *, resolve=_BENEATH):
    """os.scandir() of the directory path beneath root: an iterator (and
    context manager) of DirEntry objects whose path is relative to root."""
    return _ScandirIterator(root, path, resolve)


def write_atomic(root, path, data, *, mode=0o644, xattrs=None, replace=True, sync=False,
                 encoding="utf-8", flags=0, resolve=_BENEATH):
    """Write a complete file at path beneath root, atomically.

    data (bytes-like, or str encoded with encoding) is written to an
    unpublished file (O_TMPFILE, or a hidden name where that is missing),
    the extended attributes xattrs ({name: value}) are set on it, and only
    then does it appear at path: readers see the old file or the new one,
    never a partial one, and a failure leaves nothing behind. replace=False
    makes an existing name FileExistsError; sync=True makes the data and
    the name durable (fsync) before returning. mode is the file's mode,
    subject to the umask (or the directory's default ACL) as with open();
    flags adds TMPFILE_* bits.
    """
    if isinstance(data, str):
        data = data.encode(encoding)
    view = memoryview(data).cast("B")
    with _safeopen.tmpfile_open(root, path, mode, flags=flags, resolve=resolve) as tmp:
        fd = tmp.fileno()
        off = 0
        while off < len(view):
            try:
                off += _os.write(fd, view[off:])
            except OSError as e:  # ENOSPC, EDQUOT...: name the file
                raise _with_name(e, path) from None
        link_flags = (_safeopen.TMPFILE_REPLACE if replace else 0) | \
            (_safeopen.TMPFILE_SYNC if sync else 0)
        _os.close(tmp.link(xattrs, link_flags))


def symlink(root, src, dst, *, resolve=_BENEATH):
    """os.symlink(src, dst) beneath root: create the symbolic link dst
    beneath root whose body is src (stored as it is: a body is data, and
    the library never follows it outside the root later). The order of
    os.symlink() since 1.0.0 (safeopen 0.x took (root, path, target))."""
    _safeopen.symlink(root, dst, src, resolve=resolve)


# One errno -> HTTP status rule for every function: README's http_status(),
# the C cookbook's and safe-httpd's.
_HTTP_STATUS = {
    _errno.ENOENT: 404, _errno.ENOTDIR: 404,  # no such name beneath the root
    _errno.EXDEV: 403, _errno.ELOOP: 403,  # built to leave the root, a refused link
    _errno.EACCES: 403, _errno.EPERM: 403, _errno.EBUSY: 403,
    _errno.ENAMETOOLONG: 414,
    _errno.EINVAL: 400,
    _errno.EISDIR: 409, _errno.EEXIST: 409, _errno.ENOTEMPTY: 409,
    _errno.ENOSPC: 507, _errno.EDQUOT: 507,
    _errno.EAGAIN: 503, _errno.EMFILE: 503, _errno.ENFILE: 503, _errno.ENOMEM: 503,
}


def http_status(err):
    """The HTTP status for a failed call (err: an OSError or its errno),
    by the rule of README's http_status() for C: 404 no such name
    (ENOENT, ENOTDIR); 403 refused (EXDEV, i.e. EscapeError, ELOOP, EACCES,
    EPERM, EBUSY); 414 ENAMETOOLONG; 400 EINVAL; 409 EISDIR, EEXIST,
    ENOTEMPTY; 507 ENOSPC, EDQUOT; 503 EAGAIN, EMFILE, ENFILE, ENOMEM; 500
    anything else."""
    if isinstance(err, OSError):
        err = err.errno
    return _HTTP_STATUS.get(err, 500)


def lstat(root, path, *, resolve=_BENEATH):
    """stat(root, path, follow_symlinks=False)."""
    return _safeopen.stat(root, path, follow_symlinks=False, resolve=resolve)


def _mode_is(root, path, test, follow, resolve):
    try:
        st = _safeopen.stat(root, path, follow_symlinks=follow, resolve=resolve)
    except (OSError, ValueError):
        return False
    return test(st.st_mode)


def exists(root, path, *, follow_symlinks=True, resolve=_BENEATH):
    """os.path.exists() beneath root: False for a path that fails to
    resolve (missing, EscapeError: a link that leaves the root, ...)."""
    return _mode_is(root, path, lambda m: True, follow_symlinks, resolve)


def isdir(root, path, *, resolve=_BENEATH):
    """os.path.isdir() beneath root (a link followed beneath it only)."""
    return _mode_is(root, path, _stat.S_ISDIR, True, resolve)


def isfile(root, path, *, resolve=_BENEATH):
    """os.path.isfile() beneath root (a link followed beneath it only)."""
    return _mode_is(root, path, _stat.S_ISREG, True, resolve)


def islink(root, path, *, resolve=_BENEATH):
    """os.path.islink() beneath root."""
    return _mode_is(root, path, _stat.S_ISLNK, False, resolve)


def getsize(root, path, *, resolve=_BENEATH):
    """os.path.getsize() beneath root: the size of what path names
    (OSError if it cannot be resolved)."""
    return _safeopen.stat(root, path, resolve=resolve).st_size


def opendir(root, path=".", *, resolve=_BENEATH):
    """A new O_RDONLY|O_DIRECTORY descriptor of the directory path beneath
    root, for os.scandir(fd), os.listdir(fd), os.fstat(fd)...; the caller
    closes it. (root.subroot(path) is the Root of that directory.)"""
    return _open_dir(root, path, resolve)


def fwalk(root, top=".", topdown=True, onerror=None, *, xdev=False, resolve=_BENEATH):
    """os.fwalk() beneath root, on the library's confined walk.

    Yields (dirpath, dirnames, filenames, dirfd) for each directory of the
    tree at top beneath root: top first and then each subdirectory
    (topdown, where removing names from dirnames prunes the walk), or each
    directory after its subdirectories (topdown=False). dirpath is top
    joined with the names walked; dirfd is the directory's descriptor, valid
    until the next iteration (do not close it). Names are str, or bytes if
    top is bytes.

    Unlike os.fwalk(), the walk never leaves root whatever is renamed or
    swapped meanwhile (every directory is entered by its single name,
    O_NOFOLLOW, from its parent; never through '..'), and the number of
    descriptors is bounded whatever the depth. Symbolic links are never
    followed and are listed in filenames, a link to a directory included.
    Errors (a directory that cannot be opened, one moved out of the tree
    while walked: EAGAIN) go to onerror(OSError) if given, else are
    ignored, as os.fwalk(). xdev=True does not enter other mounts.
    """
    top = _os.fspath(top)
    isbytes = isinstance(top, bytes)
    name = (lambda b: b) if isbytes else _os.fsdecode
    flags = resolve | (_safeopen.WALK_XDEV if xdev else 0) | _safeopen.WALK_NO_STAT | \
        (0 if topdown else _safeopen.WALK_POSTORDER)
    try:
        it = _safeopen._walk(root, top, flags)
    except OSError as e:
        if onerror is not None:
            onerror(_with_name(e, top))
        return
    with it:
        frames = []  # per depth being walked: (dirpath, dirnames, filenames)
        skipped = False  # the next entry is the WALK_POST of a skipped directory
        for visit, path, nm, _dirfd, fd, err, depth, _mode in it:
            path = name(path)
            if visit == _safeopen.WALK_POST:
                if skipped:
                    skipped = False
                elif err:  # its listing ended early (EAGAIN: moved out)
                    if onerror is not None:
                        onerror(OSError(err, _os.strerror(err), path))
                elif not topdown and depth < len(frames):
                    yield frames[depth] + (fd,)
                del frames[depth:]
                continue
            wanted = depth == 0 or (depth <= len(frames) and name(nm) in frames[depth - 1][1])
            if visit != _safeopen.WALK_PRE:  # LEAF, MOUNT: not entered
                if err and wanted and onerror is not None:  # a directory that did not open
                    onerror(OSError(err, _os.strerror(err), path))
                continue
            del frames[depth:]
            try:
                if not wanted:
                    raise StopIteration
                dirs, files = _listing(fd, isbytes)
            except (OSError, StopIteration) as e:
                if isinstance(e, OSError) and onerror is not None:
                    onerror(_with_name(e, path))
                it.skip()
                skipped = not topdown
                continue
            frames.append((path, dirs, files))
            if topdown:
                yield path, dirs, files, fd


def _listing(fd, isbytes):
    """The subdirectories and the other names of the directory fd (a walk's
    lent descriptor, read through a descriptor of its own)."""
    own = _os.open(".", _os.O_RDONLY | _os.O_DIRECTORY | _os.O_NOFOLLOW | _os.O_CLOEXEC,
                   dir_fd=fd)
    dirs, files = [], []
    try:
        with _os.scandir(own) as it:
            for entry in it:
                n = _os.fsencode(entry.name) if isbytes else entry.name
                try:
                    isdir = entry.is_dir(follow_symlinks=False)
                except OSError:
                    isdir = False
                (dirs if isdir else files).append(n)
    finally:
        _os.close(own)
    return dirs, files


def walk(root, top=".", topdown=True, onerror=None, *, xdev=False, resolve=_BENEATH):
    """os.walk() beneath root: (dirpath, dirnames, filenames) per directory,
    as fwalk() (the same confinement, the same treatment of links)."""
    for dirpath, dirnames, filenames, _fd in fwalk(root, top, topdown, onerror, xdev=xdev,
                                                   resolve=resolve):
        yield dirpath, dirnames, filenames


for _name in ("stat", "mkdir", "mknod", "unlink", "rmdir", "rmtree", "rename", "link",
              "readlink", "realpath", "chmod", "chown", "utime", "getxattr",
              "setxattr", "removexattr", "listxattr", "tmpfile_open", "tmpfile_sweep"):
    setattr(Root, _name, _root_method(getattr(_safeopen, _name)))
for _fn in (makedirs, listdir, scandir, write_atomic, symlink, lstat, exists, isdir, isfile,
            islink, getsize, opendir, fwalk, walk):
    setattr(Root, _fn.__name__, _root_method(_fn))
del _name, _fn


from ._extract import extract, ExtractError  # noqa: E402

Root.extract = lambda self, archive, **kw: extract(archive, self, **{"resolve": self.resolve, **kw})
Root.extract.__doc__ = "extract(archive, self, ...) with resolve=self.resolve by default."
