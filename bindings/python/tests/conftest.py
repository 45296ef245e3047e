# SPDX-License-Identifier: MIT
"""Fixtures of the safeopen tests: every test checks the descriptor table
(no descriptor leaked or closed behind its back) and runs on the module of
the build tree."""
import gc
import os
import sys

import pytest

import safeopen


def open_fds():
    """The process's open descriptors, with what each names."""
    out = {}
    for n in os.listdir("/proc/self/fd"):
        try:
            out[int(n)] = os.readlink("/proc/self/fd/" + n)
        except FileNotFoundError:  # the descriptor of the listing itself
            pass
    return out


def pytest_report_header(config):
    return "safeopen %s from %s (libsafeopen %s); dev_mode=%s" % (
        safeopen.__name__, safeopen.__file__, safeopen.version(), sys.flags.dev_mode)


@pytest.fixture(autouse=True)
def fd_table():
    """Fail a test whose descriptor table changed (checked again after a
    garbage collection, so that only real leaks count)."""
    before = open_fds()
    yield
    after = open_fds()
    if after != before:  # an object not yet collected may still hold one
        gc.collect()
        after = open_fds()
    leaked = {fd: p for fd, p in after.items() if before.get(fd) != p}
    closed = {fd: p for fd, p in before.items() if fd not in after}
    assert not leaked and not closed, "descriptor table changed: leaked %r, closed %r" % (
        leaked, closed)


@pytest.fixture
def root(tmp_path):
    """A Root on an empty directory `root` inside tmp_path, next to which
    tests put what must stay unreachable."""
    (tmp_path / "root").mkdir()
    with safeopen.Root(tmp_path / "root") as r:
        yield r
