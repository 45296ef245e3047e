# SPDX-License-Identifier: MIT
"""safeopen.extract(): fidelity on a benign archive, hostile archives
refused entry by entry with nothing written outside, and the race against
tarfile under an attacker that swaps a directory of the destination with a
symlink to outside (tarfile loses, safeopen.extract does not: both printed)."""
import errno
import io
import os
import stat
import tarfile
import threading
import time

import pytest

import safeopen
from racer import LONG, Swapper
from test_resolve import listing

MTIME = 1600000000


def add(tf, name, kind=tarfile.REGTYPE, data=b"", mode=0o644, linkname="", pax=None,
        mtime=MTIME):
    ti = tarfile.TarInfo(name)
    ti.type = kind
    ti.mode = mode
    ti.mtime = mtime
    ti.linkname = linkname
    if pax:
        ti.pax_headers = pax
    if kind == tarfile.REGTYPE:
        ti.size = len(data)
        tf.addfile(ti, io.BytesIO(data))
    else:
        tf.addfile(ti)


def make_tar(path, entries):
    with tarfile.open(path, "w", format=tarfile.PAX_FORMAT) as tf:
        for e in entries:
            add(tf, **e)
    return path


def user_xattrs_work(d):
    try:
        os.setxattr(d, "user.probe", b"1")
        os.removexattr(d, "user.probe")
        return True
    except OSError:
        return False


def test_benign_fidelity(tmp_path):
    arc = make_tar(tmp_path / "a.tar", [
        dict(name="top", kind=tarfile.DIRTYPE, mode=0o750, mtime=MTIME - 100),
        dict(name="top/sub", kind=tarfile.DIRTYPE, mode=0o755),
        dict(name="top/sub/file", data=b"hello\n", mode=0o640, mtime=MTIME + 1),
        dict(name="top/exec", data=b"#!/bin/sh\n", mode=0o755),
        dict(name="top/attr", data=b"x", pax={"SCHILY.xattr.user.mime": "text/plain"}),
        dict(name="top/link", kind=tarfile.SYMTYPE, linkname="sub/file"),
        dict(name="top/abslink", kind=tarfile.SYMTYPE, linkname="/etc/passwd"),
        dict(name="top/hard", kind=tarfile.LNKTYPE, linkname="top/sub/file"),
        dict(name="top/fifo", kind=tarfile.FIFOTYPE, mode=0o600),
        dict(name="./top//sub/./dotted", data=b"d"),
        dict(name="implied/parent/file", data=b"p"),
    ])
    dest = tmp_path / "dest"
    dest.mkdir()
    safeopen.extract(arc, dest, same_permissions=True)
    t = dest / "top"
    assert (t / "sub" / "file").read_bytes() == b"hello\n"
    assert stat.S_IMODE(os.stat(t / "sub" / "file").st_mode) == 0o640
    assert os.stat(t / "sub" / "file").st_mtime == MTIME + 1
    assert stat.S_IMODE(os.stat(t / "exec").st_mode) == 0o755
    assert stat.S_IMODE(os.stat(t).st_mode) == 0o750
    assert os.stat(t).st_mtime == MTIME - 100, "directory times are applied at the end"
    assert os.readlink(t / "link") == "sub/file"
    assert os.readlink(t / "abslink") == "/etc/passwd", "a symlink body is stored as it is"
    assert os.lstat(t / "link").st_mtime == MTIME
    assert os.stat(t / "hard").st_ino == os.stat(t / "sub" / "file").st_ino
    assert stat.S_ISFIFO(os.lstat(t / "fifo").st_mode)
    assert (t / "sub" / "dotted").read_bytes() == b"d"
    assert (dest / "implied" / "parent" / "file").read_bytes() == b"p"
    if user_xattrs_work(dest):
        assert os.getxattr(t / "attr", "user.mime") == b"text/plain"
    # the same archive again: every existing name is refused (EEXIST)...
    with pytest.raises(safeopen.ExtractError) as ei:
        safeopen.extract(arc, dest)
    assert all(isinstance(e, FileExistsError) for _, e in ei.value.errors), ei.value.errors
    assert (t / "sub" / "file").read_bytes() == b"hello\n"
    # ... and replaced with overwrite=True (directories are kept)
    safeopen.extract(arc, dest, overwrite=True)
    assert os.stat(t / "hard").st_ino == os.stat(t / "sub" / "file").st_ino
    assert not [n for n in os.listdir(t) if n.startswith(".safeopen")]


def test_modes_like_gnu_tar(tmp_path):
    """Without same_permissions the umask applies and set-ID/sticky bits go."""
    arc = make_tar(tmp_path / "m.tar", [dict(name="suid", data=b"x", mode=0o4777)])
    dest = tmp_path / "dest"
    dest.mkdir()
    old = os.umask(0o027)
    try:
        safeopen.extract(arc, dest, same_permissions=False)
    finally:
        os.umask(old)
    assert stat.S_IMODE(os.stat(dest / "suid").st_mode) == 0o750


HOSTILE = [
    dict(name="../escape_dotdot", data=b"evil"),
    dict(name="/abs_escape", data=b"evil"),
    dict(name="ok1", data=b"fine"),
    dict(name="s", kind=tarfile.SYMTYPE, linkname="../outside"),
    dict(name="s/through_symlink", data=b"evil"),
    dict(name="chain", kind=tarfile.SYMTYPE, linkname="s"),
    dict(name="chain/through_chain", data=b"evil"),
    dict(name="p", kind=tarfile.SYMTYPE, linkname="/proc/self/root/tmp"),
    dict(name="p/through_proc", data=b"evil"),
    dict(name="hl", kind=tarfile.LNKTYPE, linkname="../outside/victim"),
    dict(name="hl2", kind=tarfile.LNKTYPE, linkname="s/victim"),
    dict(name="dev", kind=tarfile.CHRTYPE),
    dict(name="ok2", data=b"fine"),
]


@pytest.mark.parametrize("walker", [False, True], ids=["fast-path", "walker"])
def test_hostile_archive(tmp_path, walker):
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "victim").write_bytes(b"victim")
    arc = make_tar(tmp_path / "h.tar", HOSTILE)
    dest = tmp_path / "dest"
    dest.mkdir()
    before = listing(tmp_path / "outside")
    resolve = safeopen.RESOLVE_BENEATH | (safeopen.RESOLVE_USERSPACE if walker else 0)
    with pytest.raises(safeopen.ExtractError) as ei:
        safeopen.extract(arc, dest, resolve=resolve)
    refused = {name: e for name, e in ei.value.errors}
    for name in ("../escape_dotdot", "/abs_escape", "s/through_symlink", "chain/through_chain",
                 "p/through_proc", "hl", "hl2"):
        assert isinstance(refused.get(name), safeopen.EscapeError), (name, refused.get(name))
        assert "escapes the root" in str(refused[name])
    assert refused["dev"].errno == errno.EPERM
    assert set(refused) == {"../escape_dotdot", "/abs_escape", "s/through_symlink",
                            "chain/through_chain", "p/through_proc", "hl", "hl2", "dev"}
    assert (dest / "ok1").read_bytes() == b"fine" and (dest / "ok2").read_bytes() == b"fine"
    assert listing(tmp_path / "outside") == before
    assert not os.path.exists(tmp_path / "escape_dotdot")
    assert sorted(os.listdir(tmp_path)) == ["dest", "h.tar", "outside"]


def test_in_root(tmp_path):
    """RESOLVE_IN_ROOT: absolute names and '..' start at the destination."""
    arc = make_tar(tmp_path / "r.tar", [dict(name="/etc/conf", data=b"c"),
                                        dict(name="../../up", data=b"u")])
    dest = tmp_path / "dest"
    dest.mkdir()
    safeopen.extract(arc, dest, resolve=safeopen.RESOLVE_IN_ROOT)
    assert (dest / "etc" / "conf").read_bytes() == b"c"
    assert (dest / "up").read_bytes() == b"u"


def test_stream(tmp_path):
    """A non-seekable file object (a pipe) is read as a stream."""
    arc = make_tar(tmp_path / "p.tar", [dict(name="a/b", data=b"streamed")])
    dest = tmp_path / "dest"
    dest.mkdir()
    r, w = os.pipe()
    data = arc.read_bytes()

    def writer():
        with open(w, "wb") as f:
            f.write(data)
    t = threading.Thread(target=writer)
    t.start()
    with open(r, "rb") as f:
        assert not f.seekable()
        safeopen.extract(f, dest)
    t.join()
    assert (dest / "a" / "b").read_bytes() == b"streamed"


def test_strict_and_tarfile_object(tmp_path):
    arc = make_tar(tmp_path / "s.tar", [dict(name="../x", data=b"x"), dict(name="y", data=b"y")])
    dest = tmp_path / "dest"
    dest.mkdir()
    with tarfile.open(arc) as tf:
        with pytest.raises(safeopen.ExtractError) as ei:
            safeopen.extract(tf, dest, strict=True)
    assert len(ei.value.errors) == 1 and not (dest / "y").exists()
    assert isinstance(ei.value, tarfile.ExtractError)


def test_entry_errors_are_refusals(tmp_path):
    """An mtime beyond time_t (OverflowError), a NUL in a name or a link
    (ValueError) and an escape (OSError) each refuse their entry only: the
    later entries are extracted, nothing of the refused ones is left, and
    ExtractError names each entry as the archive stores it, with its reason
    (not the component that failed)."""
    arc = make_tar(tmp_path / "e.tar", [
        dict(name="first", data=b"1"),
        dict(name="future", data=b"f", pax={"mtime": "99999999999999999999"}),
        dict(name="infinite", data=b"i", pax={"mtime": "1e400"}),
        dict(name="dir-future", kind=tarfile.DIRTYPE, pax={"mtime": "99999999999999999999"}),
        dict(name="nul", data=b"n", pax={"path": "bad\0name"}),
        dict(name="sym", kind=tarfile.SYMTYPE, linkname="x", pax={"linkpath": "a\0b"}),
        dict(name="../up", data=b"u"),
        dict(name="last", data=b"2"),
    ])
    dest = tmp_path / "dest"
    dest.mkdir()
    with pytest.raises(safeopen.ExtractError) as ei:
        safeopen.extract(arc, dest)
    refused = dict(ei.value.errors)
    assert set(refused) == {"future", "infinite", "dir-future", "bad\0name", "sym", "../up"}, \
        ei.value.errors
    assert [n for n, _ in ei.value.errors] == ["future", "infinite", "dir-future", "bad\0name",
                                               "sym", "../up"]
    assert isinstance(refused["future"], OverflowError)
    assert isinstance(refused["infinite"], OverflowError)
    assert isinstance(refused["bad\0name"], ValueError)
    assert isinstance(refused["sym"], ValueError)
    assert isinstance(refused["../up"], safeopen.EscapeError)
    assert sorted(os.listdir(dest)) == ["first", "last"]
    assert (dest / "last").read_bytes() == b"2"
    msg = str(ei.value)
    assert msg.startswith("6 entries not extracted: 'future': OverflowError: ")
    assert "'../up': " in msg and "(EXDEV)" in msg and "'..'" not in msg.replace("'../up'", "")
    for name in refused:
        assert repr(name) in msg


def test_extract_error_message_caps_the_list():
    errs = [("e%d" % i, FileExistsError(errno.EEXIST, "File exists")) for i in range(25)]
    e = safeopen.ExtractError(errs)
    assert e.errors == errs
    assert str(e).startswith("25 entries not extracted: 'e0': File exists (EEXIST); 'e1': ")
    assert str(e).endswith("'e19': File exists (EEXIST); and 5 more")


# make check: 300 entries, and tarfile's figure only under check-long
N_RACE = 1000 if LONG else 300
RACE_SECONDS = 20


def race_archive(path):
    with tarfile.open(path, "w") as tf:
        for i in range(N_RACE):
            add(tf, "d/f%04d" % i, data=b"x")


def race(tmp_path, label, run):
    """Run one extractor into a fresh destination whose directory d an
    attacker keeps exchanging with a symlink to outside; returns
    (files written outside, files inside, swaps)."""
    top = tmp_path / label
    (top / "outside").mkdir(parents=True)
    dest = top / "dest"
    (dest / "d").mkdir(parents=True)
    os.symlink("../outside", dest / "s")
    fd = os.open(dest, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        with Swapper(fd, "d", "s") as sw:
            until = time.monotonic() + 5
            while sw.swaps < 10 and time.monotonic() < until:  # the attacker is running
                time.sleep(0.001)
            t0 = time.monotonic()
            try:
                run(dest)
            except Exception as e:  # refusals are expected; what matters is where files went
                err = e
            else:
                err = None
            elapsed = time.monotonic() - t0
            swaps = sw.swaps
    finally:
        os.close(fd)
    outside = len(os.listdir(top / "outside"))
    inside = len(os.listdir(dest / "d")) if os.path.isdir(dest / "d") else 0
    return outside, inside, swaps, elapsed, err


def test_extract_race_vs_tarfile(tmp_path):
    arc = tmp_path / "race.tar"
    race_archive(arc)
    has_filter = hasattr(tarfile, "data_filter")

    def with_tarfile(dest):
        with tarfile.open(arc) as tf:
            if has_filter:
                tf.extractall(dest, filter="data")
                return

            def checked(tf=tf):
                # the data filter's own check (PEP 706), member by member
                # just before it is extracted: the name, realpath'd, stays
                # in the destination
                real = os.path.realpath(dest)
                for m in tf:
                    target = os.path.realpath(os.path.join(dest, m.name))
                    if os.path.commonpath([real, target]) == real:
                        yield m
            tf.extractall(dest, members=checked())

    if LONG:  # the figure of tarfile in the same race (not asserted)
        t_out, t_in, t_swaps, t_time, t_err = race(tmp_path, "tarfile", with_tarfile)
    s_out, s_in, s_swaps, s_time, s_err = race(tmp_path, "safeopen",
                                               lambda dest: safeopen.extract(arc, dest))
    what = "extractall(filter='data')" if has_filter else \
        "extractall() with the data filter's realpath check done by hand (this Python %s " \
        "has no filter=, PEP 706)" % (
            ".".join(map(str, __import__("sys").version_info[:3])))
    print("\nextract race, %d files into d/ while d <-> symlink to outside is exchanged:" % N_RACE)
    if LONG:
        print("  tarfile %s: %d files written OUTSIDE, %d inside, %d swaps, %.2fs%s" % (
            what, t_out, t_in, t_swaps, t_time, ", raised %r" % (t_err,) if t_err else ""))
    print("  safeopen.extract: %d files written outside, %d inside, %d refused, %d swaps, %.2fs" % (
        s_out, s_in, len(s_err.errors) if isinstance(s_err, safeopen.ExtractError) else 0,
        s_swaps, s_time))
    assert s_out == 0, "safeopen.extract wrote outside the destination"
    assert s_err is None or isinstance(s_err, safeopen.ExtractError), s_err
    if s_err is not None:
        assert all(isinstance(e, (safeopen.EscapeError, FileNotFoundError, NotADirectoryError))
                   for _, e in s_err.errors), s_err.errors[:5]
    # the attack must have hit the extraction for the run to count
    if s_swaps == 0 or s_err is None:
        pytest.skip("attacker starved: %d swaps, no entry of safeopen.extract refused" % s_swaps)
    assert s_in + len(s_err.errors) == N_RACE
