# SPDX-License-Identifier: MIT
"""The attack rows of tests/lib/test_resolve.c, from Python: each path opened
beneath the root (RESOLVE_BENEATH) and in it (RESOLVE_IN_ROOT) three ways --
the kernel's openat2(2) through ctypes (the oracle, where it exists),
safeopen.open() and safeopen.open() forced onto the library's walker
(RESOLVE_USERSPACE) -- must open the same object or fail with the same
errno as the table says, and leave the tree as it was."""
import ctypes
import errno
import os

import pytest

import safeopen

E = errno
BENEATH, IN_ROOT = safeopen.RESOLVE_BENEATH, safeopen.RESOLVE_IN_ROOT
NS, NX = safeopen.RESOLVE_NO_SYMLINKS, safeopen.RESOLVE_NO_XDEV
RD, P, PN = os.O_RDONLY, os.O_PATH, os.O_PATH | os.O_NOFOLLOW

OUTSIDE = ["d root", "f outside_file outside", "d outside_dir", "f outside_dir/secret secret"]
ROOT = [
    "d a", "d a/b", "d a/b/c", "f a/b/c/file deep", "f a/file a-file", "f file hello",
    "d dir", "f dir/inner inner", "d empty", "p fifo", "f ... dots", "f ..foo dotfoo",
    "l a/b/up2 ../..", "l a/b/up3 ../../..", "l a/b/lupfile ../../file", "l a/lup ..",
    "l a/b/lsame ../b/c", "l lrel a/b", "l labs /a/b", "l lroot /", "l ldot .",
    "l ldotdot ..", "l lfile file", "l ldir dir", "l ldangling missing",
    "l ldangling_abs /created_abs", "l lloop lloop", "l lslash dir/", "l ldoubleslash //dir//",
    "l lescape ../outside_file", "l lescape_deep a/b/c/../../../../outside_dir/secret",
    "l lnested lrel/c", "l lmid a/lup/a", "l lprocfd /proc/self/fd/0",
    "l lprocexe /proc/self/exe", "l lfifo fifo", "l a/b/lupup3 ../../../",
    "l ljump /a/b/lupup3",
]


def obj(p):
    return ("obj", p)


def err(e):
    return ("err", e)


# (path, open flags, extra resolve bits, BENEATH result, IN_ROOT result)
ROWS = [
    ("file", RD, 0, obj("file"), obj("file")),
    ("a/b/c/file", RD, 0, obj("a/b/c/file"), obj("a/b/c/file")),
    ("a//b///c/file", RD, 0, obj("a/b/c/file"), obj("a/b/c/file")),
    ("a/b/../b/c/file", RD, 0, obj("a/b/c/file"), obj("a/b/c/file")),
    ("a/b/c/../../../file", RD, 0, obj("file"), obj("file")),
    ("a/b/c/../../../../file", RD, 0, err(E.EXDEV), obj("file")),
    ("a/../../root/file", RD, 0, err(E.EXDEV), err(E.ENOENT)),
    ("..", RD, 0, err(E.EXDEV), obj(".")),
    ("../..", P, 0, err(E.EXDEV), obj(".")),
    ("/file", RD, 0, err(E.EXDEV), obj("file")),
    ("/", RD, 0, err(E.EXDEV), obj(".")),
    ("//a/b", RD, 0, err(E.EXDEV), obj("a/b")),
    ("/../../a", P, 0, err(E.EXDEV), obj("a")),
    (".", RD, 0, obj("."), obj(".")),
    ("", RD, 0, err(E.ENOENT), err(E.ENOENT)),
    ("missing", RD, 0, err(E.ENOENT), err(E.ENOENT)),
    ("missing/../file", P, 0, err(E.ENOENT), err(E.ENOENT)),
    ("file/", RD, 0, err(E.ENOTDIR), err(E.ENOTDIR)),
    ("file/..", RD, 0, err(E.ENOTDIR), err(E.ENOTDIR)),
    ("...", RD, 0, obj("..."), obj("...")),
    ("..foo", RD, 0, obj("..foo"), obj("..foo")),
    ("dir/..", RD, 0, obj("."), obj(".")),
    ("lrel/c/file", RD, 0, obj("a/b/c/file"), obj("a/b/c/file")),
    ("lrel", PN, 0, obj("lrel"), obj("lrel")),
    ("lrel", os.O_NOFOLLOW, 0, err(E.ELOOP), err(E.ELOOP)),
    ("lrel/", os.O_NOFOLLOW, 0, obj("a/b"), obj("a/b")),
    ("lrel/..", RD, 0, obj("a"), obj("a")),
    ("lfile/", RD, 0, err(E.ENOTDIR), err(E.ENOTDIR)),
    ("labs", RD, 0, err(E.EXDEV), obj("a/b")),
    ("labs/c/file", RD, 0, err(E.EXDEV), obj("a/b/c/file")),
    ("labs/../../file", RD, 0, err(E.EXDEV), obj("file")),
    ("lroot/file", RD, 0, err(E.EXDEV), obj("file")),
    ("lroot/..", P, 0, err(E.EXDEV), obj(".")),
    ("ldot/ldot/ldot/file", RD, 0, obj("file"), obj("file")),
    ("ldotdot/file", RD, 0, err(E.EXDEV), obj("file")),
    ("ldotdot/root/file", RD, 0, err(E.EXDEV), err(E.ENOENT)),
    ("a/lup/file", RD, 0, obj("file"), obj("file")),
    ("a/lup/..", RD, 0, err(E.EXDEV), obj(".")),
    ("a/lup/a/lup/a/file", RD, 0, obj("a/file"), obj("a/file")),
    ("a/b/up2/file", RD, 0, obj("file"), obj("file")),
    ("a/b/up3/file", RD, 0, err(E.EXDEV), obj("file")),
    ("a/b/lupfile", RD, 0, obj("file"), obj("file")),
    ("lescape", RD, 0, err(E.EXDEV), err(E.ENOENT)),
    ("lescape_deep", RD, 0, err(E.EXDEV), err(E.ENOENT)),
    ("ldangling", RD, 0, err(E.ENOENT), err(E.ENOENT)),
    ("ldangling_abs", RD, 0, err(E.EXDEV), err(E.ENOENT)),
    ("lslash/inner", RD, 0, obj("dir/inner"), obj("dir/inner")),
    ("ldoubleslash/inner", RD, 0, err(E.EXDEV), obj("dir/inner")),
    ("lnested/file", RD, 0, obj("a/b/c/file"), obj("a/b/c/file")),
    ("lmid/file", RD, 0, obj("a/file"), obj("a/file")),
    ("lprocfd", RD, 0, err(E.EXDEV), err(E.ENOENT)),
    ("lprocexe", RD, 0, err(E.EXDEV), err(E.ENOENT)),
    ("ljump/", PN, 0, err(E.EXDEV), obj(".")),
    ("a/b/lupup3/a/b/lupup3/file", RD, 0, err(E.EXDEV), obj("file")),
    ("dir/../ljump/file", RD, 0, err(E.EXDEV), obj("file")),
    ("lfifo", RD | os.O_NONBLOCK, 0, obj("fifo"), obj("fifo")),
    ("lloop", RD, 0, err(E.ELOOP), err(E.ELOOP)),
    ("lloop", PN, 0, obj("lloop"), obj("lloop")),
    ("lrel/c/file", RD, NS, err(E.ELOOP), err(E.ELOOP)),
    ("a/b/c/file", RD, NS, obj("a/b/c/file"), obj("a/b/c/file")),
    ("a/lup/file", RD, NS, err(E.ELOOP), err(E.ELOOP)),
    ("labs", RD, NS, err(E.ELOOP), err(E.ELOOP)),
    ("lroot/file", RD, NX, err(E.EXDEV), obj("file")),
    ("dir", os.O_WRONLY, 0, err(E.EISDIR), err(E.EISDIR)),
    ("file", os.O_DIRECTORY, 0, err(E.ENOTDIR), err(E.ENOTDIR)),
]

_libc = ctypes.CDLL(None, use_errno=True)
SYS_openat2 = 437  # the same number on every architecture (since Linux 5.6)


class OpenHow(ctypes.Structure):
    _fields_ = [("flags", ctypes.c_uint64), ("mode", ctypes.c_uint64),
                ("resolve", ctypes.c_uint64)]


def kernel_openat2(dirfd, path, flags, resolve):
    """The raw system call: -errno on failure. EAGAIN means "try again"
    (any rename anywhere in the system during a '..' step causes it): the
    oracle's answer is the first other one, as in tests/lib/test_resolve.c."""
    how = OpenHow(flags | os.O_CLOEXEC, 0, resolve)
    for _ in range(100000):
        fd = _libc.syscall(ctypes.c_long(SYS_openat2), ctypes.c_int(dirfd),
                           ctypes.c_char_p(os.fsencode(path)), ctypes.byref(how),
                           ctypes.c_size_t(ctypes.sizeof(how)))
        if fd >= 0:
            return fd
        err = ctypes.get_errno()
        if err != errno.EAGAIN or resolve & safeopen.RESOLVE_CACHED:
            return -err
    return -errno.EAGAIN


def have_openat2():
    """False on kernels before 5.6 (ENOSYS) and under a seccomp profile
    that refuses it (EPERM): then the table is the only oracle."""
    fd = kernel_openat2(-100, "/", os.O_PATH, 0)
    if fd >= 0:
        os.close(fd)
        return True
    return False


def build(dirfd, spec):
    for line in spec:
        kind, name, *rest = line.split(" ", 2)
        if kind == "d":
            os.mkdir(name, 0o755, dir_fd=dirfd)
        elif kind == "f":
            fd = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o644,
                         dir_fd=dirfd)
            os.write(fd, rest[0].encode())
            os.close(fd)
        elif kind == "p":
            os.mkfifo(name, 0o644, dir_fd=dirfd)
        elif kind == "l":
            os.symlink(rest[0], name, dir_fd=dirfd)


def listing(top):
    out = []
    for d, dirs, files in os.walk(top):
        for n in sorted(dirs + files):
            p = os.path.join(d, n)
            st = os.lstat(p)
            out.append((os.path.relpath(p, top), st.st_mode, st.st_size, st.st_mtime_ns))
    return sorted(out)


@pytest.fixture(scope="module")
def tree(tmp_path_factory):
    top = tmp_path_factory.mktemp("resolve")
    topfd = os.open(top, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    build(topfd, OUTSIDE)
    rootfd = os.open("root", os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC, dir_fd=topfd)
    build(rootfd, ROOT)
    os.close(topfd)
    yield top, rootfd
    os.close(rootfd)


def ident_of(rootfd, rel):
    st = os.stat(rel, dir_fd=rootfd, follow_symlinks=False)
    return st.st_dev, st.st_ino


def run(way, rootfd, path, flags, resolve):
    """(kind, value): ('obj', (dev, ino)) or ('err', errno)."""
    if way == "kernel":
        fd = kernel_openat2(rootfd, path, flags, resolve)
        if fd < 0:
            return ("err", -fd)
    else:
        try:
            fd = safeopen.open(path, flags, dir_fd=rootfd,
                               resolve=resolve | (safeopen.RESOLVE_USERSPACE
                                                  if way == "walker" else 0))
        except safeopen.EscapeError as e:
            assert e.errno == errno.EXDEV and "escapes the root" in str(e)
            assert e.filename == path
            return ("err", e.errno)
        except OSError as e:
            assert e.filename == path
            return ("err", e.errno)
    try:
        st = os.fstat(fd)
        return ("obj", (st.st_dev, st.st_ino))
    finally:
        os.close(fd)


WAYS = ["kernel", "library", "walker"]


@pytest.mark.parametrize("row", ROWS, ids=["%s|%#x|%#x" % (r[0], r[1], r[2]) for r in ROWS])
def test_row(tree, row):
    """One row, both scopes, three ways: the kernel (when it has openat2),
    the library's choice (openat2 fast path) and the forced walker all give
    the table's answer."""
    top, rootfd = tree
    path, flags, extra, b, i = row
    ways = WAYS if have_openat2() else WAYS[1:]
    wrong = []
    for scope, want in (("beneath", b), ("in_root", i)):
        res = (BENEATH if scope == "beneath" else IN_ROOT) | extra
        if want[0] == "obj":
            want = ("obj", ident_of(rootfd, want[1]))
        for way in ways:
            got = run(way, rootfd, path, flags, res)
            if got != want:
                wrong.append((scope, way, got if got[0] == "obj" else errno.errorcode[got[1]],
                              want if want[0] == "obj" else errno.errorcode[want[1]]))
    assert not wrong, (path, wrong)


def test_tree_unchanged(tree):
    """The rows (all run before this test) changed nothing, in or out."""
    top, rootfd = tree
    before = listing(top)
    for path, flags, extra, _, _ in ROWS:
        for way in WAYS[1:]:
            run(way, rootfd, path, flags, BENEATH | extra)
    assert listing(top) == before


ESCAPES = ["../outside_file", "lescape", "a/b/up3/outside_file", "/outside_file",
           "ldotdot/outside_dir/secret", "labs/../../outside_dir"]


@pytest.mark.parametrize("path", ESCAPES)
def test_operations_refuse_escapes(tmp_path, path):
    """Every operation refuses a path through an escaping name with
    EscapeError and touches nothing outside."""
    top = tmp_path
    topfd = os.open(top, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        build(topfd, OUTSIDE)
        with safeopen.Root(top / "root") as r:
            build(r.fileno(), ROOT)
            before = listing(top)
            calls = [
                lambda: r.stat(path), lambda: r.lstat(path + "/x"),
                lambda: r.open(path), lambda: r.open(path + "/new", "w"),
                lambda: r.mkdir(path + "/d"), lambda: r.makedirs(path + "/d/e/f"),
                lambda: r.unlink(path + "/x"), lambda: r.rmtree(path + "/x"),
                lambda: r.rename("file", path + "/moved"), lambda: r.rename(path + "/x", "m"),
                lambda: r.link(path, "hl", follow_symlinks=True), lambda: r.symlink("x", path + "/l"),
                lambda: r.chmod(path, 0o777), lambda: r.utime(path, (0, 0)),
                lambda: r.setxattr(path, "user.x", b"1"), lambda: r.getxattr(path, "user.x"),
                lambda: r.listdir(path), lambda: r.realpath(path),
                lambda: r.write_atomic(path + "/w", b"x"), lambda: r.readlink(path + "/x"),
                lambda: r.tmpfile_open(path + "/t"), lambda: r.stat(path + "/"),
            ]
            for i, call in enumerate(calls):
                with pytest.raises(OSError) as ei:
                    call()
                # EXDEV, or the error of an earlier check that never reached
                # outside (a symlink's own name is not a directory, ...)
                assert ei.value.errno in (errno.EXDEV, errno.ENOTDIR, errno.ENOENT), (
                    i, ei.value)
                if ei.value.errno == errno.EXDEV:
                    assert isinstance(ei.value, safeopen.EscapeError)
            assert listing(top) == before
    finally:
        os.close(topfd)
