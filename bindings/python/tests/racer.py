# SPDX-License-Identifier: MIT
"""An attacker thread for the race tests: exchanges two names in a
directory (renameat2 RENAME_EXCHANGE, atomic) as fast as it can until
stopped, counting its swaps. ctypes releases the GIL around the system
call, so the attacker runs while the victim is inside the library."""
import ctypes
import os
import threading

_libc = ctypes.CDLL(None, use_errno=True)
RENAME_EXCHANGE = 2

# make check runs the races briefly, each until its attacker has been seen;
# make check-long (SAFEOPEN_CHECK_LONG=1) for their full time.
LONG = os.environ.get("SAFEOPEN_CHECK_LONG", "0") not in ("", "0")


def seconds(full, quick):
    """A race's minimum duration: `full` under check-long, `quick` otherwise."""
    return full if LONG else quick


def exchange(dirfd, a, b):
    r = _libc.renameat2(dirfd, os.fsencode(a), dirfd, os.fsencode(b), RENAME_EXCHANGE)
    if r != 0:
        e = ctypes.get_errno()
        raise OSError(e, os.strerror(e))


class Swapper:
    """with Swapper(dirfd, "d", "s") as sw: ... sw.swaps"""

    def __init__(self, dirfd, a, b):
        self.dirfd = os.dup(dirfd)
        self.a, self.b = a, b
        self.swaps = 0
        self.error = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self):
        try:
            while not self._stop.is_set():
                exchange(self.dirfd, self.a, self.b)
                self.swaps += 1
        except OSError as e:  # reported by stop()
            self.error = e

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join(10)
        assert not self._thread.is_alive(), "the attacker thread did not stop"
        if self.swaps % 2:  # leave the names as they were
            exchange(self.dirfd, self.a, self.b)
        os.close(self.dirfd)
        if self.error is not None and exc[0] is None:
            raise self.error
