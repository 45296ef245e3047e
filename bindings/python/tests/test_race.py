# SPDX-License-Identifier: MIT
"""safeopen.open() against an attacker that swaps a directory of the root
with a symlink to outside while the path is walked: every open either
reaches the file inside or fails; none reaches outside. The same attack on
os.open(dir_fd=) is run alongside to show it works (and is printed), and
the test requires that the attacker ran and that the victim saw it."""
import errno
import os
import time

import pytest

import safeopen
from racer import Swapper, exchange, seconds

# per path (fast path, walker): check-long 1 s; make check 0.1 s and on (at
# most 10 s more) until the victim has seen the attack
SECONDS = seconds(1.0, 0.1)


def setup_tree(top):
    (top / "outside").mkdir()
    (top / "outside" / "file").write_bytes(b"outside")
    root = top / "root"
    (root / "d").mkdir(parents=True)
    (root / "d" / "file").write_bytes(b"inside")
    os.symlink("../outside", root / "s")
    # deeper paths give the attacker more windows in the walker
    (root / "d" / "x" / "y").mkdir(parents=True)
    (root / "d" / "x" / "y" / "file").write_bytes(b"inside-deep")
    (top / "outside" / "x" / "y").mkdir(parents=True)
    (top / "outside" / "x" / "y" / "file").write_bytes(b"outside-deep")


@pytest.mark.parametrize("walker", [False, True], ids=["fast-path", "walker"])
def test_swap_race(tmp_path, walker):
    setup_tree(tmp_path)
    outside = {os.stat(tmp_path / "outside" / "file").st_ino,
               os.stat(tmp_path / "outside" / "x" / "y" / "file").st_ino}
    resolve = safeopen.RESOLVE_BENEATH | (safeopen.RESOLVE_USERSPACE if walker else 0)
    counts = {"inside": 0, "refused": 0, "escaped": 0}
    control = {"inside": 0, "refused": 0, "escaped": 0}
    errnos = set()
    with safeopen.Root(tmp_path / "root") as root:
        with Swapper(root.fileno(), "d", "s") as sw:
            deadline = time.monotonic() + SECONDS
            i = 0
            while time.monotonic() < deadline or (
                    counts["refused"] + control["escaped"] + control["refused"] == 0
                    and time.monotonic() < deadline + 10):
                path = "d/file" if i % 2 else "d/x/y/file"
                i += 1
                try:
                    fd = safeopen.open(path, os.O_RDONLY, dir_fd=root, resolve=resolve)
                except OSError as e:
                    assert e.errno in (errno.EXDEV, errno.ENOENT, errno.ENOTDIR, errno.EAGAIN,
                                       errno.ELOOP), e
                    errnos.add(errno.errorcode[e.errno])
                    counts["refused"] += 1
                else:
                    ino = os.fstat(fd).st_ino
                    os.close(fd)
                    counts["escaped" if ino in outside else "inside"] += 1
                # the control: the os module's dir_fd-relative open
                try:
                    fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC, dir_fd=root.fileno())
                except OSError:
                    control["refused"] += 1
                else:
                    ino = os.fstat(fd).st_ino
                    os.close(fd)
                    control["escaped" if ino in outside else "inside"] += 1
            swaps = sw.swaps
    print("\nswap race (%s): %d swaps; safeopen.open %r (errnos %s); os.open(dir_fd=) %r"
          % ("walker" if walker else "fast path", swaps, counts, sorted(errnos), control))
    assert counts["escaped"] == 0, "safeopen.open reached outside the root"
    # the attack must have happened for the run to count (as the C race
    # tests: otherwise a SKIP, "attacker starved", never a PASS)
    if swaps == 0 or counts["refused"] + control["escaped"] + control["refused"] == 0:
        pytest.skip("attacker starved: %d swaps, none seen by the victim" % swaps)
    assert counts["inside"] > 0


def test_swapper_swaps(tmp_path):
    """The attacker itself: an exchange really swaps the two names."""
    setup_tree(tmp_path)
    fd = os.open(tmp_path / "root", os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        exchange(fd, "d", "s")
        assert os.path.islink(tmp_path / "root" / "d")
        exchange(fd, "d", "s")
        assert os.path.isdir(tmp_path / "root" / "d")
    finally:
        os.close(fd)
