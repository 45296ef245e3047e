# SPDX-License-Identifier: MIT
"""The API of the safeopen module: os-style behaviour of every function,
roots of every kind, errors (types, errno, filename, the EscapeError
message), constants generated from the header, stubs, docstrings, and
reference counts of the arguments (the C code leaks no reference)."""
import errno
import inspect
import io
import os
import pathlib
import re
import stat
import sys

import pytest

import safeopen

HEADER = os.path.join(os.environ.get("top_srcdir", ""), "include", "safeopen.h")


def header_constants():
    """NAME -> value of every numeric SAFE_* flag macro of the header,
    evaluated here independently of bindings/python/gen-constants.py."""
    out = {}
    with open(HEADER, encoding="utf-8") as f:
        for line in f:
            m = re.match(r"#define (SAFE_[A-Z0-9_]+) (\(1ULL << \d+\)|0x[0-9a-fA-F]+ULL)\s*$",
                         line.strip())
            if m:
                out[m.group(1)[5:]] = eval(m.group(2).replace("ULL", ""))  # noqa: S307
    return out


@pytest.mark.skipif(not os.path.exists(HEADER), reason="top_srcdir not set (run by make check)")
def test_constants_from_header():
    consts = header_constants()
    assert "RESOLVE_BENEATH" in consts and "RESOLVE_IN_ROOT" in consts
    for name, value in consts.items():
        assert getattr(safeopen, name) == value, name
    stub = pathlib.Path(safeopen.__file__).with_name("_safeopen.pyi").read_text()
    for name in consts:
        assert re.search(r"^%s: int$" % name, stub, re.M), name


def test_stub_lists_every_function():
    stub = pathlib.Path(safeopen.__file__).with_name("_safeopen.pyi").read_text()
    for name, fn in vars(safeopen._safeopen).items():
        if callable(fn) and not name.startswith("_") and not isinstance(fn, type):
            assert re.search(r"^def %s\(" % name, stub, re.M), name


def test_docstrings_everywhere():
    assert safeopen.__doc__ and safeopen._safeopen.__doc__
    for name in safeopen.__all__:
        obj = getattr(safeopen, name)
        if callable(obj):
            assert obj.__doc__ and len(obj.__doc__) > 20, name
    for name, obj in vars(safeopen.Root).items():
        if callable(obj) and not name.startswith("_"):
            assert obj.__doc__, "Root." + name
    for name, obj in vars(safeopen.DirEntry).items():
        if callable(obj) and not name.startswith("_"):
            assert obj.__doc__, "DirEntry." + name


def test_dev_mode():
    """make check runs the suite under python3 -X dev on the build tree."""
    if "SAFEOPEN_TEST_BUILD" not in os.environ:
        pytest.skip("not run by run-pytest.sh")
    assert sys.flags.dev_mode
    assert safeopen.__file__.startswith(os.environ["SAFEOPEN_TEST_BUILD"])


@pytest.fixture
def tree(tmp_path):
    (tmp_path / "outside").write_bytes(b"secret")
    r = tmp_path / "root"
    (r / "dir" / "sub").mkdir(parents=True)
    (r / "dir" / "file").write_bytes(b"hello")
    os.symlink("dir/file", r / "lfile")
    os.symlink("../outside", r / "lout")
    return r


@pytest.mark.parametrize("kind", ["int", "Root", "str", "bytes", "pathlib"])
def test_open_root_kinds(tree, kind):
    fd0 = os.open(tree, os.O_PATH | os.O_DIRECTORY | os.O_CLOEXEC)
    root = {"int": lambda: fd0, "Root": lambda: safeopen.Root(tree), "str": lambda: str(tree),
            "bytes": lambda: os.fsencode(tree), "pathlib": lambda: tree}[kind]()
    try:
        fd = safeopen.open("dir/file", os.O_RDONLY, dir_fd=root)
        assert os.read(fd, 10) == b"hello"
        assert not os.get_inheritable(fd)
        os.close(fd)
        with pytest.raises(safeopen.EscapeError):
            safeopen.open("lout", os.O_RDONLY, dir_fd=root)
    finally:
        if kind == "Root":
            root.close()
        os.close(fd0)


def test_open_paths_and_errors(tree):
    with safeopen.Root(tree) as r:
        for p in ("dir/file", b"dir/file", pathlib.PurePosixPath("dir/file")):
            os.close(safeopen.open(p, os.O_RDONLY, dir_fd=r))
        with pytest.raises(safeopen.EscapeError) as ei:
            safeopen.open("../outside", os.O_RDONLY, dir_fd=r)
        e = ei.value
        assert isinstance(e, OSError) and e.errno == errno.EXDEV
        assert e.strerror == "path escapes the root directory" and e.filename == "../outside"
        assert "escapes the root" in str(e)
        with pytest.raises(FileNotFoundError) as ei:
            safeopen.open(b"missing", os.O_RDONLY, dir_fd=r)
        assert ei.value.filename == b"missing"
        with pytest.raises(IsADirectoryError):
            safeopen.open("dir", os.O_WRONLY, dir_fd=r)
        with pytest.raises(OSError) as ei:
            safeopen.open("lfile", os.O_RDONLY | os.O_NOFOLLOW, dir_fd=r)
        assert ei.value.errno == errno.ELOOP
        with pytest.raises(OSError) as ei:  # no scope bit: EINVAL, as openat2
            safeopen.open("dir/file", os.O_RDONLY, dir_fd=r, resolve=0)
        assert ei.value.errno == errno.EINVAL
        with pytest.raises(OSError) as ei:  # unknown bits
            safeopen.open("dir/file", os.O_RDONLY, dir_fd=r,
                          resolve=safeopen.RESOLVE_BENEATH | (1 << 60))
        assert ei.value.errno == errno.EINVAL
        with pytest.raises(ValueError):
            safeopen.open("dir/\0file", os.O_RDONLY, dir_fd=r)
        with pytest.raises(TypeError):
            safeopen.open("dir/file", os.O_RDONLY)  # dir_fd is required
        with pytest.raises(TypeError):
            safeopen.open("dir/file", os.O_RDONLY, dir_fd=1.5)
        with pytest.raises(TypeError):
            safeopen.open("dir/file", os.O_RDONLY, dir_fd=r, bogus=1)
        fd = safeopen.open("new", os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600, dir_fd=r)
        os.close(fd)
        assert stat.S_IMODE(os.stat(tree / "new").st_mode) == 0o600
        with pytest.raises(FileExistsError):
            safeopen.open("new", os.O_WRONLY | os.O_CREAT | os.O_EXCL, dir_fd=r)
        fd = safeopen.open("..", os.O_RDONLY, dir_fd=r, resolve=safeopen.RESOLVE_IN_ROOT)
        assert os.fstat(fd).st_ino == os.stat(tree).st_ino
        os.close(fd)
    with pytest.raises(ValueError):
        r.fileno()
    with pytest.raises(OSError) as ei:  # a closed Root: EBADF, naming the path
        safeopen.open("dir/file", os.O_RDONLY, dir_fd=r)
    assert ei.value.errno == errno.EBADF and ei.value.filename == "dir/file"
    with pytest.raises(FileNotFoundError):
        safeopen.open("x", os.O_RDONLY, dir_fd=tree / "no-such-root")


def test_reopen(tree):
    with safeopen.Root(tree) as r:
        p = safeopen.open("dir/file", os.O_PATH, dir_fd=r)
        try:
            fd = safeopen.reopen(p, os.O_RDONLY)
            assert os.read(fd, 5) == b"hello"
            os.close(fd)
        finally:
            os.close(p)


def test_open_beneath(tree):
    with safeopen.Root(tree) as r:
        with safeopen.open_beneath(r, "dir/file") as f:
            assert f.read() == "hello" and f.name == "dir/file"
        with r.open("dir/file", "rb", buffering=0) as f:
            assert f.read() == b"hello"
        with r.open("dir/t.txt", "w", encoding="latin-1") as f:
            f.write("caf\xe9")
        assert (tree / "dir" / "t.txt").read_bytes() == b"caf\xe9"
        with r.open("dir/t.txt", "a") as f:
            f.write("!")
        with r.open("dir/t.txt", "r+", encoding="latin-1", newline="") as f:
            assert f.read() == "caf\xe9!"
        with pytest.raises(FileExistsError):
            r.open("dir/t.txt", "x")
        with pytest.raises(ValueError):
            r.open("dir/file", "rw")
        with pytest.raises(LookupError):  # the descriptor is closed again
            r.open("dir/file", "r", encoding="no-such-codec")
        with pytest.raises(ValueError):
            r.open("dir/file", "r", buffering=0)
        with pytest.raises(ValueError):
            r.open("dir/file", "rb", encoding="utf-8")
        with pytest.raises(ValueError):
            r.open("dir/file", "r", newline="x")
        with pytest.raises(IsADirectoryError):  # FileIO refuses it: closed by us
            r.open("dir", "rb")
        with r.open("dir/file", "rb") as f:
            assert isinstance(f, io.BufferedReader) and f.name == "dir/file"
        with r.open("dir/file", "r+b") as f:
            assert isinstance(f, io.BufferedRandom)
        with r.open("dir/new.bin", "wb", buffering=0) as f:
            assert isinstance(f, io.FileIO)
        with r.open("dir/file", "r", buffering=1) as f:
            assert f.line_buffering and f.mode == "r"
        with pytest.raises(safeopen.EscapeError):
            r.open("lout")
        with pytest.raises(safeopen.EscapeError):
            r.open("lout", "w")
        assert (tree.parent / "outside").read_bytes() == b"secret"


def test_operations(tree):
    with safeopen.Root(tree) as r:
        st = r.stat("lfile")
        ref = os.stat(tree / "dir" / "file")
        assert (st.st_ino, st.st_size, st.st_mode, st.st_mtime_ns) == (
            ref.st_ino, ref.st_size, ref.st_mode, ref.st_mtime_ns)
        assert stat.S_ISLNK(r.lstat("lfile").st_mode)
        assert stat.S_ISLNK(r.stat("lfile", follow_symlinks=False).st_mode)
        assert r.readlink("lfile") == "dir/file" and r.readlink(b"lfile") == b"dir/file"
        assert r.realpath("lfile") == "dir/file" and r.realpath(b".") == b"."
        r.mkdir("m", 0o700)
        with pytest.raises(FileExistsError):
            r.mkdir("lfile")
        r.makedirs("m/a/b/c")
        with pytest.raises(FileExistsError):
            r.makedirs("m/a/b/c")
        r.makedirs("m/a/b/c", exist_ok=True)
        assert sorted(r.listdir("m/a")) == ["b"] and r.listdir(b"m") == [b"a"]
        r.rmdir("m/a/b/c")
        r.rmtree("m")
        assert not (tree / "m").exists()
        r.symlink("dir/file", "ln")  # os.symlink(src, dst)'s order
        assert os.readlink(tree / "ln") == "dir/file"
        r.rename("ln", "ln2")
        with pytest.raises(FileExistsError):
            r.rename("ln2", "lfile", flags=safeopen.RENAME_NOREPLACE)
        r.rename("ln2", "lout", flags=safeopen.RENAME_EXCHANGE)
        assert os.readlink(tree / "lout") == "dir/file"
        r.rename("ln2", "lout", flags=safeopen.RENAME_EXCHANGE)
        r.unlink("ln2")
        r.link("dir/file", "hard")
        assert os.stat(tree / "hard").st_ino == ref.st_ino
        with safeopen.Root(tree / "dir") as sub:
            r.rename("hard", "moved", dst_root=sub)
        assert (tree / "dir" / "moved").exists()
        r.chmod("dir/moved", 0o604)
        assert stat.S_IMODE(os.stat(tree / "dir" / "file").st_mode) == 0o604
        r.chown("dir/moved", os.getuid(), -1)
        r.utime("lfile", (1.5, 2.25))
        assert os.stat(tree / "dir" / "file").st_mtime == 2.25
        r.utime("lfile", ns=(3, 4_000_000_007))
        assert os.stat(tree / "dir" / "file").st_mtime_ns == 4_000_000_007
        r.utime("lfile")
        with pytest.raises(ValueError):
            r.utime("lfile", (1, 2), ns=(1, 2))
        r.mknod("fifo", stat.S_IFIFO | 0o600)
        assert stat.S_ISFIFO(os.lstat(tree / "fifo").st_mode)
        assert r.tmpfile_sweep(".", min_age=0) == 0
        try:
            r.setxattr("dir/file", "user.k", b"v")
        except OSError as e:
            if e.errno not in (errno.EOPNOTSUPP, errno.EPERM):
                raise
        else:
            assert r.getxattr("lfile", "user.k") == b"v"
            assert "user.k" in r.listxattr("dir/file")
            r.removexattr("dir/file", "user.k")
            with pytest.raises(OSError) as ei:
                r.getxattr("dir/file", "user.k")
            assert ei.value.errno == errno.ENODATA
        with r.subroot("dir") as sub:
            assert sorted(sub.listdir()) == ["file", "moved", "sub"]
            with pytest.raises(safeopen.EscapeError):
                sub.stat("../lfile")


def test_scandir(tree):
    with safeopen.Root(tree) as r:
        with r.scandir(".") as it:
            entries = {e.name: e for e in it}
        # the entries stay usable after the iterator is closed
        assert entries["dir"].is_dir() and not entries["dir"].is_symlink()
        assert entries["lfile"].is_file() and entries["lfile"].is_symlink()
        # a link to outside is neither followed nor reported as a file
        assert not entries["lout"].is_file() and entries["lout"].is_symlink()
        with pytest.raises(safeopen.EscapeError):
            entries["lout"].stat()
        assert stat.S_ISLNK(entries["lout"].stat(follow_symlinks=False).st_mode)
        sub = list(safeopen.scandir(r, "dir"))
        assert sorted(e.path for e in sub) == ["dir/file", "dir/sub"]
        assert all(e.inode() for e in sub)


def test_write_atomic(tree):
    with safeopen.Root(tree) as r:
        r.write_atomic("dir/w", b"one", mode=0o640)
        assert (tree / "dir" / "w").read_bytes() == b"one"
        r.write_atomic("dir/w", "two")
        assert (tree / "dir" / "w").read_bytes() == b"two"
        with pytest.raises(FileExistsError):
            r.write_atomic("dir/w", b"three", replace=False)
        r.write_atomic("dir/big", memoryview(bytes(range(256)) * 4096), sync=True)
        assert (tree / "dir" / "big").stat().st_size == 1 << 20
        with pytest.raises(safeopen.EscapeError):
            r.write_atomic("lout/x", b"x")
        # a symlink at the name is replaced itself, never written through
        r.write_atomic("lout", b"new")
        assert (tree / "lout").read_bytes() == b"new" and not (tree / "lout").is_symlink()
        assert (tree.parent / "outside").read_bytes() == b"secret"
        with pytest.raises(FileNotFoundError):
            r.write_atomic("nodir/x", b"x")
        with pytest.raises(TypeError):
            r.write_atomic("dir/x", 12)
        try:
            r.write_atomic("dir/xa", b"x", xattrs={"user.mime": "text/plain", "user.b": b"\0"})
        except OSError as e:
            if e.errno not in (errno.EOPNOTSUPP, errno.EPERM):
                raise
        else:
            assert os.getxattr(tree / "dir" / "xa", "user.b") == b"\0"
        with pytest.raises(OSError) as ei:  # an invalid attribute name: nothing is published
            r.write_atomic("dir/bad", b"x", xattrs={"nonamespace": b"1"})
        assert not (tree / "dir" / "bad").exists()
        # nothing half-made or hidden is left behind
        assert sorted(os.listdir(tree / "dir")) == ["big", "file", "sub", "w"] + \
            (["xa"] if (tree / "dir" / "xa").exists() else [])


def test_tmpfile(tree):
    with safeopen.Root(tree) as r:
        with r.tmpfile_open("dir/t") as t:
            os.write(t.fileno(), b"data")
            assert not (tree / "dir" / "t").exists()
        assert not (tree / "dir" / "t").exists()  # discarded on exit
        with pytest.raises(ValueError):
            t.fileno()
        t = r.tmpfile_open("dir/t2")
        os.write(t.fileno(), b"x")
        fd = t.link()
        os.close(fd)
        with pytest.raises(ValueError):
            t.link()
        t.discard()  # idempotent after link
        assert (tree / "dir" / "t2").read_bytes() == b"x"
        t = r.tmpfile_open("dir/t2")
        with pytest.raises(FileExistsError):
            t.link()
        os.close(t.link(flags=safeopen.TMPFILE_REPLACE))
        assert (tree / "dir" / "t2").read_bytes() == b""
        t = r.tmpfile_open("dir/t3")
        del t  # a dropped TmpFile is discarded, its descriptor closed
        assert not (tree / "dir" / "t3").exists()


def test_root_object(tree):
    r = safeopen.Root(tree)
    assert not r.closed and "safeopen.Root" in repr(r)
    fd = r.fileno()
    assert os.get_inheritable(fd) is False
    r.close()
    r.close()
    assert r.closed
    fd0 = os.open(tree, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    with safeopen.Root(fd0, resolve=safeopen.RESOLVE_IN_ROOT) as r2:
        assert r2.fileno() != fd0  # a duplicate: the caller keeps its own
        assert r2.stat("/dir/file").st_size == 5  # IN_ROOT by default
    os.fstat(fd0)
    os.close(fd0)


def test_root_leak_warns(tree):
    with pytest.warns(ResourceWarning):
        r = safeopen.Root(tree)
        del r
        import gc
        gc.collect()


def test_refcounts(tree):
    """The C functions keep no reference to their arguments, on success and
    on every error path."""
    path, bpath, bad, rootp = "dir/file", b"dir/file", "lout/x", str(tree)
    objs = [path, bpath, bad, rootp]
    with safeopen.Root(tree) as r:
        before = [sys.getrefcount(o) for o in objs + [r]]
        for _ in range(200):
            os.close(safeopen.open(path, os.O_RDONLY, dir_fd=r))
            os.close(safeopen.open(bpath, os.O_RDONLY, dir_fd=rootp))
            for call in (lambda: safeopen.open(bad, os.O_RDONLY, dir_fd=r),
                         lambda: safeopen.stat(rootp, bad), lambda: safeopen.unlink(r, bad),
                         lambda: safeopen.rename(r, bad, path), lambda: safeopen.readlink(r, path),
                         lambda: safeopen.getxattr(r, bad, "user.x")):
                with pytest.raises(OSError):
                    call()
            safeopen.stat(r, path)
            safeopen.realpath(r, bpath)
        after = [sys.getrefcount(o) for o in objs + [r]]
        assert after == before


def test_version():
    assert re.match(r"^\d+\.\d+", safeopen.version())


def test_signature_of_open():
    """The signature of safeopen.open (os.open's plus resolve), for
    inspect.signature() (the C functions' __text_signature__)."""
    sig = inspect.signature(safeopen.open)
    assert str(sig) == "(path, flags, mode=511, *, dir_fd, resolve=%d)" % safeopen.RESOLVE_BENEATH
    assert inspect.isbuiltin(safeopen.open)


def test_signatures_of_every_function():
    """inspect.signature() works on every function and method of the
    package, C or Python, and names what the function accepts."""
    for name in safeopen.__all__:
        obj = getattr(safeopen, name)
        if callable(obj) and not isinstance(obj, type):
            params = inspect.signature(obj).parameters
            if name not in ("reopen", "version", "http_status"):
                assert "resolve" in params, name
    for name, obj in vars(safeopen.TmpFile).items():
        if callable(obj) and not name.startswith("__"):
            inspect.signature(obj)
    assert list(inspect.signature(safeopen.Root.fileno).parameters) == ["self"]
    assert list(inspect.signature(safeopen.symlink).parameters)[:3] == ["root", "src", "dst"]


def test_package_stub():
    """__init__.pyi parses and declares every public name of the package."""
    import ast
    stub = pathlib.Path(safeopen.__file__).with_name("__init__.pyi").read_text()
    tree = ast.parse(stub)
    declared = {n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef))}
    for name in safeopen.__all__:
        if name in vars(safeopen._safeopen):
            continue  # from _safeopen.pyi (star import)
        assert name in declared, name
    root_cls = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "Root")
    root_methods = {f.name for f in root_cls.body if isinstance(f, ast.FunctionDef)}
    for name, obj in vars(safeopen.Root).items():
        if callable(obj) and not name.startswith("_"):
            assert name in root_methods, "Root." + name


def test_no_memory_growth(tree):
    """Thousands of calls, succeeding and failing, leave the traced heap as
    it was: a leaked path buffer (a bytes object per call) or exception
    would add tens of kilobytes."""
    import tracemalloc

    def calls(r):
        os.close(safeopen.open("dir/file", os.O_RDONLY, dir_fd=r))
        safeopen.stat(r, "lfile")
        safeopen.readlink(r, b"lfile")
        safeopen.realpath(r, "dir/../dir/file")
        for bad in ("lout/x", "missing"):
            try:
                safeopen.open(bad, os.O_RDONLY, dir_fd=r)
            except OSError:
                pass
        try:
            safeopen.rename(r, "lout/a", "lout/b")
        except OSError:
            pass
        with safeopen.tmpfile_open(r, "dir/t") as t:
            os.write(t.fileno(), b"x")

    # make check: 500 rounds (4,000 calls: one leaked bytes object per call
    # is over 100 kB), 2000 under check-long
    rounds = 2000 if os.environ.get("SAFEOPEN_CHECK_LONG", "0") not in ("", "0") else 500
    with safeopen.Root(tree) as r:
        for _ in range(200):  # warm-up: caches, interned strings
            calls(r)
        tracemalloc.start()
        try:
            base = tracemalloc.get_traced_memory()[0]
            for _ in range(rounds):
                calls(r)
            grown = tracemalloc.get_traced_memory()[0] - base
        finally:
            tracemalloc.stop()
    assert grown < 16384, "the heap grew by %d bytes over %d rounds" % (grown, rounds)
