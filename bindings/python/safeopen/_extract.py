# SPDX-License-Identifier: MIT
"""safeopen.extract(): unpack an untrusted tar archive beneath a directory.

The same construction and the same fidelity choices as ``safeopen DEST
extract`` (tools/safeopen/extract.c), with Python's tarfile reading the archive:
no name from the archive is ever handed to a path system call. Each
entry's parent directory is found or created beneath the destination by
the library (mkdir -p, resolved beneath it: '..', absolute names and
symbolic links that leave it are EscapeError, a directory swapped for a
symlink during the extraction is seen as that symlink), and the entry is
created in that parent with the library's single-name operations, which
never follow a symlink in the last component.
"""

import errno as _errno
import os as _os
import stat as _stat
import tarfile as _tarfile

from . import _safeopen

_XATTR_ERRNOS = {_errno.EPERM, _errno.EOPNOTSUPP, _errno.E2BIG, _errno.ENOSPC, _errno.EINVAL,
                 _errno.EACCES, _errno.ERANGE, _errno.EDQUOT}


def _reason(exc):
    """Why an entry was refused, without the name of the component that
    failed (the message names the entry): 'No such file or directory
    (ENOENT)', or the exception's type and text for what is not an OSError
    (an mtime beyond time_t, a NUL in a name)."""
    if isinstance(exc, OSError) and exc.errno is not None:
        return "%s (%s)" % (exc.strerror or _os.strerror(exc.errno),
                            _errno.errorcode.get(exc.errno, "errno %d" % exc.errno))
    return "%s: %s" % (type(exc).__name__, exc)


class ExtractError(_tarfile.ExtractError):
    """Entries of the archive were refused or failed; the others were
    extracted. ``errors`` lists ``(member name, exception)`` in archive
    order, the name as the archive stores it: an OSError (an escape attempt
    is an :class:`safeopen.EscapeError`), or the OverflowError or ValueError
    of an entry that cannot be made (an mtime beyond time_t, a NUL in a
    name). The message names every entry (the first 20) with its reason."""

    SHOWN = 20

    def __init__(self, errors):
        self.errors = list(errors)
        n = len(self.errors)
        shown = "; ".join("%r: %s" % (name, _reason(e)) for name, e in self.errors[:self.SHOWN])
        more = "; and %d more" % (n - self.SHOWN) if n > self.SHOWN else ""
        super().__init__("%d entr%s not extracted: %s%s" % (
            n, "y" if n == 1 else "ies", shown, more))


# What one entry can raise that refuses that entry only: the system's
# answer (OSError), an mtime beyond what time_t or a timespec holds
# (OverflowError), a NUL or an unpaired surrogate in a name or link
# (ValueError, UnicodeError).
_ENTRY_ERRORS = (OSError, OverflowError, ValueError)


def _mtime_ns(m):
    """The member's mtime in nanoseconds (OverflowError beyond time_t: the
    kernel could not store it)."""
    ns = int(m.mtime * 1e9) if isinstance(m.mtime, float) else int(m.mtime) * 10**9
    if not -(2**63) <= ns < 2**63:
        raise OverflowError("mtime %r out of range" % (m.mtime,))
    return ns


def _umask():
    """The process umask, read without changing it (os.umask() would, for
    a moment, in every thread): /proc/self/status, else the os.umask dance."""
    try:
        with open("/proc/self/status", "rb") as f:
            for line in f:
                if line.startswith(b"Umask:"):
                    return int(line.split()[1], 8)
    except OSError:
        pass
    old = _os.umask(0o022)
    _os.umask(old)
    return old


def _normalize(name):
    """'./a//b/' -> 'a/b': empty and '.' components and trailing slashes
    dropped; a leading '/' and '..' kept (the library decides whether they
    stay beneath the destination, not a string check)."""
    parts = [p for p in name.split("/") if p not in ("", ".")]
    out = "/".join(parts)
    if name.startswith("/"):
        out = "/" + out
    return out or "."


def _split(path):
    head, _, tail = path.rpartition("/")
    if not _:
        return ".", path
    return head or "/", tail


class _Extraction:
    def __init__(self, root, resolve, overwrite, same_owner, same_permissions, devices,
                 xattrs, strict):
        self.root = root
        self.resolve = resolve
        self.overwrite = overwrite
        self.same_owner = same_owner
        self.is_root = _os.geteuid() == 0
        self.same_perms = self.is_root if same_permissions is None else same_permissions
        self.devices = devices
        self.xattrs = xattrs
        self.strict = strict
        self.umask = _umask()
        self.errors = []
        self.dirs = []
        self.tmpseq = 0
        self.tmprand = int.from_bytes(_os.urandom(4), "little")

    def fail(self, member, exc):
        self.errors.append((member.name, exc))
        if self.strict:
            raise ExtractError(self.errors)

    def perm(self, m, is_dir):
        p = m.mode & 0o7777
        if not self.same_perms:
            p &= 0o777 & ~self.umask
        if not is_dir and self.is_root and not self.same_owner:
            p &= ~(_stat.S_ISUID | _stat.S_ISGID)
        return p

    def entry_xattrs(self, m):
        if not self.xattrs:
            return {}
        out = {}
        for k, v in m.pax_headers.items():
            if k.startswith("SCHILY.xattr."):
                out[k[len("SCHILY.xattr."):]] = v.encode("utf-8", "surrogateescape") \
                    if isinstance(v, str) else v
        return out

    def create_replacing(self, make, pfd, name):
        """make(name) creates the entry; if the name exists and overwrite was
        asked, create it under a hidden name and rename that over the old
        one, so that the name always shows one object or the other."""
        try:
            make(name)
            return
        except FileExistsError:
            if not self.overwrite:
                raise
        self.tmpseq += 1
        tmp = ".safeopen-extract.%08x.%u" % (self.tmprand, self.tmpseq)
        make(tmp)
        try:
            _safeopen.rename(pfd, tmp, name, resolve=self.resolve)
        except OSError:
            _safeopen.unlink(pfd, tmp, resolve=self.resolve)
            raise
        try:  # rename(2) of two links to one inode does nothing and keeps both
            _safeopen.unlink(pfd, tmp, resolve=self.resolve)
        except FileNotFoundError:
            pass

    def extract_dir(self, m, path):
        try:
            st = _safeopen.stat(self.root, path, follow_symlinks=False, resolve=self.resolve)
        except FileNotFoundError:
            st = None
        if st is not None and not _stat.S_ISDIR(st.st_mode):
            if not self.overwrite:
                raise FileExistsError(_errno.EEXIST, _os.strerror(_errno.EEXIST), m.name)
            _safeopen.unlink(self.root, path, resolve=self.resolve)
            st = None
        if st is None:
            _os.close(_safeopen.mkdir_all(self.root, path, (self.perm(m, True) | 0o700) & 0o777,
                                          resolve=self.resolve))
        for k, v in self.entry_xattrs(m).items():
            _safeopen.setxattr(self.root, path, k, v, follow_symlinks=False, resolve=self.resolve)
        self.dirs.append((path, len(self.dirs), m))

    def extract_file(self, tf, m, pfd, name):
        perm = self.perm(m, False)
        with _safeopen.tmpfile_open(pfd, name, perm & 0o777, resolve=self.resolve) as tmp:
            fd = tmp.fileno()
            src = tf.extractfile(m)
            try:
                while True:
                    chunk = src.read(1 << 20)
                    if not chunk:
                        break
                    view = memoryview(chunk)
                    while view:
                        view = view[_os.write(fd, view):]
            finally:
                src.close()
            if self.same_owner:
                _os.fchown(fd, m.uid, m.gid)
            xa = self.entry_xattrs(m)
            flags = _safeopen.TMPFILE_REPLACE if self.overwrite else 0
            try:
                out = tmp.link(xa, flags)
            except OSError as e:
                if not xa or e.errno not in _XATTR_ERRNOS:
                    raise
                good = {}
                for k, v in xa.items():  # keep the file, report the attributes
                    try:
                        _os.setxattr(fd, k, v)
                        good[k] = v
                    except OSError as xe:
                        self.errors.append((m.name, xe))
                if len(good) == len(xa):
                    raise
                out = tmp.link(good, flags)
        try:
            _os.fchmod(out, perm)
            _os.utime(out, ns=(_os.fstat(out).st_atime_ns, _mtime_ns(m)))
        finally:
            _os.close(out)

    def finish_special(self, m, pfd, name, chmod):
        if self.same_owner:
            _safeopen.chown(pfd, name, m.uid, m.gid, follow_symlinks=False, resolve=self.resolve)
        if chmod:
            _safeopen.chmod(pfd, name, self.perm(m, False), follow_symlinks=False,
                            resolve=self.resolve)
        mt = _mtime_ns(m)
        st = _safeopen.stat(pfd, name, follow_symlinks=False, resolve=self.resolve)
        _safeopen.utime(pfd, name, ns=(st.st_atime_ns, mt), follow_symlinks=False,
                        resolve=self.resolve)

    def entry(self, tf, m):
        _mtime_ns(m)  # an mtime that cannot be stored refuses the entry before it is made
        path = _normalize(m.name)
        if m.isdir():
            return self.extract_dir(m, path)
        parent, name = _split(path)
        pfd = self.root.fileno()
        own = parent != "."
        if own:
            pfd = _safeopen.mkdir_all(self.root, parent, 0o777, resolve=self.resolve)
        try:
            if m.islnk():
                target = _normalize(m.linkname)
                self.create_replacing(
                    lambda n: _safeopen.link(self.root, target, n, dst_root=pfd,
                                             resolve=self.resolve), pfd, name)
            elif m.isreg():
                self.extract_file(tf, m, pfd, name)
            elif m.issym():
                self.create_replacing(
                    lambda n: _safeopen.symlink(pfd, n, m.linkname, resolve=self.resolve),
                    pfd, name)
                self.finish_special(m, pfd, name, False)
            elif m.ischr() or m.isblk() or m.isfifo():
                if not m.isfifo() and not self.devices:
                    raise PermissionError(_errno.EPERM,
                                          "device node not created (devices=True, as root)",
                                          m.name)
                kind = _stat.S_IFCHR if m.ischr() else _stat.S_IFBLK if m.isblk() else \
                    _stat.S_IFIFO
                dev = _os.makedev(m.devmajor, m.devminor) if kind != _stat.S_IFIFO else 0
                self.create_replacing(
                    lambda n: _safeopen.mknod(pfd, n, kind | (self.perm(m, False) & 0o777), dev,
                                              resolve=self.resolve), pfd, name)
                self.finish_special(m, pfd, name, True)
            else:
                raise OSError(_errno.EINVAL, "unknown kind of entry, not extracted", m.name)
        finally:
            if own:
                _os.close(pfd)

    def finish_dirs(self):
        """Owner, mode and times of the directories, deepest first, each
        name resolved again and not followed; the last duplicate wins."""
        self.dirs.sort(key=lambda d: (d[0], d[1]))
        seen = set()
        for path, _, m in reversed(self.dirs):
            if path in seen:
                continue
            seen.add(path)
            try:
                mtime_ns = _mtime_ns(m)
                if self.same_owner:
                    _safeopen.chown(self.root, path, m.uid, m.gid, follow_symlinks=False,
                                    resolve=self.resolve)
                _safeopen.chmod(self.root, path, self.perm(m, True), follow_symlinks=False,
                                resolve=self.resolve)
                st = _safeopen.stat(self.root, path, follow_symlinks=False, resolve=self.resolve)
                _safeopen.utime(self.root, path, ns=(st.st_atime_ns, mtime_ns),
                                follow_symlinks=False, resolve=self.resolve)
            except _ENTRY_ERRORS as e:
                self.fail(m, e)


def extract(archive, dest, *, members=None, resolve=_safeopen.RESOLVE_BENEATH, overwrite=False,
            same_owner=False, same_permissions=None, devices=False, xattrs=True, strict=False):
    """Unpack a tar archive beneath dest, never writing anywhere else.

    A race-safe replacement for ``tarfile.extractall(dest, filter='data')``:
    archive is a tarfile.TarFile, a path, or a file object (a pipe is read
    as a stream) opened with tarfile.open (any compression); dest is a root
    (path, descriptor or Root); members restricts the extraction to these
    TarInfo objects.

    Every entry is created beneath dest by the library: parents with mkdir
    -p, files published atomically with their xattrs (pax SCHILY.xattr)
    through the tmpfile API, symbolic links stored as they are (a body is
    data: the library never follows it outside dest), hard-link targets
    resolved beneath dest, FIFOs made, device nodes only with devices=True,
    directory modes and times applied at the end, deepest first. An entry
    that would leave dest -- an absolute or '..' name, a parent that is a
    symlink to outside, even one swapped in during the extraction -- is
    refused with EscapeError; with resolve=RESOLVE_IN_ROOT, absolute names
    and links start at dest instead.

    Existing names are never followed, and replaced (atomically) only with
    overwrite=True (else FileExistsError); an existing directory is kept.
    Permissions as GNU tar: the umask applies and set-ID and sticky bits are
    dropped unless same_permissions (the default for root, who keeps the
    set-ID bits of a file only with same_owner); same_owner restores the
    numeric owner and group (root only).

    Refused or failed entries do not stop the others (whatever the error of
    one entry: OSError, or the OverflowError or ValueError of an mtime
    beyond time_t or a NUL in a name): at the end, ExtractError lists them
    by their names in the archive, with the reason of each (strict=True
    raises at the first).
    """
    own_tf = not isinstance(archive, _tarfile.TarFile)
    if own_tf:
        if hasattr(archive, "read"):
            seekable = getattr(archive, "seekable", lambda: False)()
            # a pipe or a socket is read as a stream ("r|*"), in one pass
            tf = _tarfile.open(fileobj=archive, mode="r:*" if seekable else "r|*")
        else:
            tf = _tarfile.open(archive, mode="r:*")
    else:
        tf = archive
    try:
        with _Root(dest) as root:
            x = _Extraction(root, resolve, overwrite, same_owner, same_permissions, devices,
                            xattrs, strict)
            for m in (members if members is not None else tf):
                try:
                    x.entry(tf, m)
                except ExtractError:
                    raise
                except _ENTRY_ERRORS as e:
                    if isinstance(e, OSError) and e.filename is None:
                        e.filename = m.name
                    x.fail(m, e)
            x.finish_dirs()
    finally:
        if own_tf:
            tf.close()
    if x.errors:
        raise ExtractError(x.errors)


def _Root(dest):
    from . import Root
    if isinstance(dest, Root):
        return Root(dest.fileno(), resolve=dest.resolve)
    if not isinstance(dest, int) and hasattr(dest, "fileno"):
        return Root(dest.fileno())
    return Root(dest)
