# SPDX-License-Identifier: MIT
"""A Root shared between threads and closed under them, a Root left open
until the interpreter exits, the names errors carry, the os.path-style
queries, opendir, and walk()/fwalk() on the library's confined walk."""
import errno
import os
import subprocess
import sys
import threading
import time

import pytest

import safeopen
from racer import Swapper, seconds


def test_close_waits_for_a_call_in_flight(tmp_path):
    """close() while another thread is inside the library (an open of a
    FIFO, blocked until a writer comes) waits for that call; calls that
    start meanwhile fail with EBADF; the descriptor is closed after."""
    os.mkfifo(tmp_path / "fifo")
    r = safeopen.Root(tmp_path)
    number = r.fileno()
    got = {}

    def reader():
        got["fd"] = safeopen.open("fifo", os.O_RDONLY, dir_fd=r)

    # daemons: a failed assertion leaves the reader blocked in open(2)
    t1 = threading.Thread(target=reader, daemon=True)
    t1.start()
    # the reader blocks in open(2) until a writer comes: seen in its wchan
    # (the FIFO's wait for a partner), else assumed after 0.3 s as before
    wchan = "/proc/self/task/%d/wchan" % t1.native_id
    deadline = time.monotonic() + 0.3
    while time.monotonic() < deadline:
        try:
            with open(wchan) as f:
                if f.read() == "wait_for_partner":
                    break
        except OSError:
            pass
        time.sleep(0.002)
    assert t1.is_alive(), "the reader did not block in open(2)"
    t2 = threading.Thread(target=r.close, daemon=True)
    t2.start()
    # close() marks the Root closed, then waits for the reader's call; one
    # that did not wait would be gone well before 50 ms with the GIL free
    deadline = time.monotonic() + 10
    while not r.closed and time.monotonic() < deadline:
        time.sleep(0.001)
    time.sleep(0.05)
    assert t2.is_alive(), "close() returned while a call was using the descriptor"
    assert r.closed
    with pytest.raises(OSError) as ei:  # a call that starts now: EBADF
        r.stat("fifo")
    assert ei.value.errno == errno.EBADF and ei.value.filename == "fifo"
    assert os.path.samestat(os.fstat(number), os.stat(tmp_path))  # still open
    w = os.open(tmp_path / "fifo", os.O_WRONLY | os.O_CLOEXEC)  # the reader goes on
    t1.join(10)
    t2.join(10)
    os.close(w)
    assert not t1.is_alive() and not t2.is_alive()
    assert os.path.samestat(os.fstat(got["fd"]), os.stat(tmp_path / "fifo"))
    os.close(got["fd"])
    with pytest.raises(ValueError):
        r.fileno()


def test_close_and_reopen_under_load(tmp_path):
    """Threads open a file through a shared Root while the main thread
    closes it and opens other directories, which reuse its descriptor
    number: every open reads the Root's own directory or fails with EBADF,
    never the directory that took the number."""
    for d in ("a", "b"):
        (tmp_path / d).mkdir()
        (tmp_path / d / "who").write_bytes(d.encode())
    stats = {"a": 0, "b": 0, "ebadf": 0, "reused": 0, "rounds": 0}
    lock = threading.Lock()
    stop = threading.Event()
    current = [safeopen.Root(tmp_path / "a")]

    def worker():
        while not stop.is_set():
            r = current[0]
            try:
                fd = safeopen.open("who", os.O_RDONLY, dir_fd=r)
            except OSError as e:
                assert e.errno == errno.EBADF, e
                with lock:
                    stats["ebadf"] += 1
                # The closed Root answers EBADF until the next one is in
                # place: asked again every 0.2 ms, through the window in
                # which the other directory holds its number (a loop with
                # no pause raised a million exceptions a second, for a
                # CPU-second of the test's time).
                time.sleep(0.0002)
                continue
            try:
                who = os.read(fd, 10).decode()
            finally:
                os.close(fd)
            with lock:
                stats[who] += 1

    threads = [threading.Thread(target=worker) for _ in range(3)]
    for t in threads:
        t.start()
    try:
        end = time.monotonic() + seconds(1.5, 0.1)  # and on until the floors below
        while time.monotonic() < end or stats["reused"] < 5 or stats["ebadf"] < 5:
            if time.monotonic() > end + 20:
                break
            old = current[0]
            number = old.fileno()
            time.sleep(0.002)
            old.close()
            # the number is free again: the other directory takes it
            other = os.open(tmp_path / "b", os.O_PATH | os.O_DIRECTORY | os.O_CLOEXEC)
            if other == number:
                stats["reused"] += 1
            time.sleep(0.002)
            current[0] = safeopen.Root(tmp_path / "a")
            os.close(other)
            stats["rounds"] += 1
    finally:
        stop.set()
        for t in threads:
            t.join(10)
        current[0].close()
    print("\n  close/reopen under load: %r" % stats)
    assert stats["b"] == 0, "a call resolved beneath the directory that reused the number"
    assert stats["reused"] >= 5 and stats["ebadf"] >= 5 and stats["a"] > 0, stats


@pytest.mark.parametrize("where", ["script", "imported module"])
def test_module_level_root_exits_silently(tmp_path, where):
    """A Root opened once at module level and never closed: no message at
    interpreter exit, even under -X dev with warnings as errors."""
    (tmp_path / "served").mkdir()
    (tmp_path / "app.py").write_text(
        "import safeopen\nROOT = safeopen.Root(%r)\nROOT.stat('.')\n" % str(tmp_path / "served"))
    code = "import app" if where == "imported module" else (tmp_path / "app.py").read_text()
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [str(tmp_path)] + [p for p in sys.path if p]))
    out = subprocess.run([sys.executable, "-X", "dev", "-W", "error", "-c", code],
                         env=env, capture_output=True, timeout=60)
    assert out.returncode == 0 and out.stderr == b"" and out.stdout == b"", out


def test_unclosed_root_warns_when_collected(tmp_path):
    with pytest.warns(ResourceWarning, match="unclosed"):
        r = safeopen.Root(tmp_path)
        del r
        import gc
        gc.collect()


def test_errors_name_the_callers_path(root):
    """Every OSError names the path the caller passed (filename2 the second
    path of a two-path call), never a descriptor number or nothing."""
    root.makedirs("dir/sub")
    root.write_atomic("dir/file", b"x")
    cases = [
        (IsADirectoryError, lambda: root.open("dir"), "dir", None),
        (IsADirectoryError, lambda: safeopen.open_beneath(root, b"dir", "rb"), b"dir", None),
        (FileExistsError, lambda: root.write_atomic("dir/file", b"y", replace=False),
         "dir/file", None),
        (IsADirectoryError, lambda: root.write_atomic("dir/sub", b"y"), "dir/sub", None),
        (FileNotFoundError, lambda: root.rename("nope", "x"), "nope", "x"),
        (FileNotFoundError, lambda: root.link("nope", "x"), "nope", "x"),
        (FileExistsError, lambda: root.symlink("target", "dir/file"), "target", "dir/file"),
        (NotADirectoryError, lambda: root.makedirs("dir/file/x/y"), "dir/file/x/y", None),
        (NotADirectoryError, lambda: root.listdir("dir/file"), "dir/file", None),
        (FileNotFoundError, lambda: root.getsize("missing"), "missing", None),
        (FileNotFoundError, lambda: root.subroot("missing"), "missing", None),
        (safeopen.EscapeError, lambda: root.opendir("../x"), "../x", None),
        (FileNotFoundError, lambda: safeopen.Root(root.path / "missing"),
         str(root.path / "missing"), None),
    ]
    for i, (exc, call, name, name2) in enumerate(cases):
        with pytest.raises(OSError) as ei:
            call()
        e = ei.value
        assert isinstance(e, exc), (i, e)
        assert (e.filename, e.filename2) == (name, name2), (i, e)
    with root.tmpfile_open("dir/sub") as tmp:  # link onto a directory
        with pytest.raises(OSError) as ei:
            tmp.link()
        assert ei.value.filename == "dir/sub"


def test_queries_and_opendir(root):
    root.makedirs("d/e")
    root.write_atomic("d/f", b"12345")
    root.symlink("f", "d/lf")
    root.symlink("../../..", "d/lout")
    assert root.exists("d") and root.exists("d/f") and root.exists("d/lf")
    assert not root.exists("nope") and not root.exists("d/lout") and not root.exists("../")
    assert root.exists("d/lout", follow_symlinks=False)
    assert root.isdir("d") and not root.isdir("d/f") and not root.isdir("nope")
    assert root.isfile("d/f") and root.isfile("d/lf") and not root.isfile("d")
    assert root.islink("d/lf") and root.islink("d/lout") and not root.islink("d/f")
    assert root.getsize("d/f") == 5 and root.getsize("d/lf") == 5
    fd = root.opendir("d")
    try:
        assert sorted(os.listdir(fd)) == ["e", "f", "lf", "lout"]
    finally:
        os.close(fd)
    with root.subroot("d") as sub:
        with sub.scandir() as it:
            names = {e.name: e for e in it}
            assert names["e"].is_dir() and names["f"].is_file() and names["lf"].is_file()
            assert not names["lout"].is_file() and not names["lout"].is_dir()
        assert sub.path == "d" and sub.isfile("f") and not sub.exists("../d")


def make_tree(top):
    for d in ("a/b/c", "a/x", "e"):
        os.makedirs(top / d)
    for f in ("a/f1", "a/b/f2", "a/b/c/f3", "top"):
        (top / f).write_bytes(b"")
    os.symlink("b", top / "a/lb")


def normalized(walk):
    return sorted((p, sorted(d), sorted(f)) + tuple(rest) for p, d, f, *rest in walk)


@pytest.mark.parametrize("topdown", [True, False])
def test_walk_as_os_walk(root, topdown):
    path = root.path
    make_tree(path)

    def relative(rows, top, prefix):  # os.walk of path/top, named as top
        return normalized((prefix + p[len(top):], d, f) for p, d, f in rows)
    expected = relative(os.walk(str(path), topdown=topdown), str(path), ".")
    expected_b = relative(os.walk(os.fsencode(path / "a"), topdown=topdown),
                          os.fsencode(path / "a"), b"a")
    # os.walk lists a link to a directory among dirnames; the confined walk
    # never follows links and lists them among filenames
    def fix(rows, link, parent):
        return sorted((p, [n for n in d if n != link], sorted(f + [link]) if p == parent else f)
                      for p, d, f in rows)
    assert normalized(root.walk(topdown=topdown)) == fix(expected, "lb", "./a")
    assert normalized(safeopen.walk(root, b"a", topdown=topdown)) == fix(expected_b, b"lb", b"a")
    order = [p for p, _, _ in root.walk(topdown=topdown)]
    assert (order.index(".") < order.index("./a/b")) == topdown
    seen = []
    for dirpath, dirnames, filenames, dirfd in root.fwalk(topdown=topdown):
        assert os.path.samestat(os.fstat(dirfd), os.stat(path / dirpath))
        seen.append(dirpath)
    assert sorted(seen) == sorted(p for p, _, _ in expected)


def test_walk_prunes_and_reports_errors(root):
    make_tree(root.path)
    got = []
    for dirpath, dirnames, filenames in root.walk("a"):
        got.append(dirpath)
        if "b" in dirnames:
            dirnames.remove("b")
    assert sorted(got) == ["a", "a/x"]
    errors = []
    assert list(root.walk("missing", onerror=errors.append)) == []
    assert len(errors) == 1 and errors[0].errno == errno.ENOENT and errors[0].filename == "missing"
    errors.clear()
    assert list(root.walk("../", onerror=errors.append)) == []
    assert isinstance(errors[0], safeopen.EscapeError)
    assert list(root.walk("top")) == []  # not a directory: nothing, as os.fwalk
    if os.geteuid() != 0:
        os.chmod(root.path / "a/x", 0)
        try:
            errors.clear()
            rows = list(root.walk("a", onerror=errors.append))
            assert [e.errno for e in errors] == [errno.EACCES], errors
            assert errors[0].filename == "a/x" and "a/x" not in [p for p, _, _ in rows]
        finally:
            os.chmod(root.path / "a/x", 0o755)


def test_walk_never_leaves_the_root_under_swaps(tmp_path):
    """An attacker exchanges a directory of the tree with a symlink to
    outside while the tree is walked again and again: the walk never lists
    what is outside, and the attacker ran."""
    (tmp_path / "outside" / "deep").mkdir(parents=True)
    (tmp_path / "outside" / "deep" / "SECRET").write_bytes(b"")
    root_dir = tmp_path / "root"
    (root_dir / "d" / "deep").mkdir(parents=True)
    (root_dir / "d" / "deep" / "inside").write_bytes(b"")
    os.symlink("../outside", root_dir / "s")
    seen = set()
    walks = 0
    with safeopen.Root(root_dir) as r:
        dirfd = r.opendir()
        try:
            with Swapper(dirfd, "d", "s") as sw:
                end = time.monotonic() + seconds(1.0, 0.1)  # and on until 100 swaps, 11 walks
                while time.monotonic() < end or sw.swaps < 100 or walks <= 10:
                    for _, _, files in r.walk(onerror=lambda e: None):
                        seen.update(files)
                    walks += 1
                swaps = sw.swaps
        finally:
            os.close(dirfd)
    print("\n  walk under swaps: %d walks, %d swaps, names seen %s" % (walks, swaps, sorted(seen)))
    assert swaps >= 100 and walks > 10
    assert "SECRET" not in seen and "inside" in seen
