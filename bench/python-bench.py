#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""make bench-python: safeopen.open() next to what Python code does today.

Per shape (the shapes of bench/bench), the time of one open + close:
  os.open(dir_fd=)     os.open(path, O_RDONLY, dir_fd=root): fast, unsafe
                       (follows '..' and symlinks out of the root)
  safeopen.open        safeopen.open(path, O_RDONLY, dir_fd=root)
  walker               the same with RESOLVE_USERSPACE (no openat2)
  realpath+check+open  os.path.realpath(join(root, path)), a prefix check,
                       os.open(): the common pattern (racy, and slower)
Each cell is the median of --repeats runs of --number calls, in ns per
call, the methods of a row interleaved run by run so that a busy period
hits them alike; "so/os" and "so/realpath" are medians of the per-run
ratios of safeopen.open to os.open(dir_fd=) (target <= 1.20 on the
1-component shape) and to realpath+check+open (target < 1.00 on every
shape). --clock cpu times the thread's CPU time (user + system) instead of
the wall clock: on a machine busier than it has CPUs, wall time mostly
measures the wait for a CPU. Timings are no assertion: this is a program,
not a test.
"""
import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time

import safeopen

SHAPES = [
    ("1 component", "f", safeopen.RESOLVE_BENEATH),
    ("8 dirs deep", "d/d/d/d/d/d/d/d/f", safeopen.RESOLVE_BENEATH),
    ("3 rel symlinks", "sym/la/lb/lc/file", safeopen.RESOLVE_BENEATH),
    ("a/b/../b/c/../..", "a/b/../b/c/../../a/b/file", safeopen.RESOLVE_BENEATH),
    ("64 components", "d/" * 63 + "f", safeopen.RESOLVE_BENEATH),
    ("nonexistent", "d/d/d/missing", safeopen.RESOLVE_BENEATH),
]


def build(top):
    os.makedirs(os.path.join(top, *["d"] * 63))
    for depth in (0, 8, 63):
        open(os.path.join(top, *(["d"] * depth + ["f"])), "wb").close()
    os.makedirs(os.path.join(top, "sym", "ra", "rb", "rc"))
    open(os.path.join(top, "sym", "ra", "rb", "rc", "file"), "wb").close()
    os.symlink("ra", os.path.join(top, "sym", "la"))
    os.symlink("rb", os.path.join(top, "sym", "ra", "lb"))
    os.symlink("rc", os.path.join(top, "sym", "ra", "rb", "lc"))
    os.makedirs(os.path.join(top, "a", "b", "c"))
    os.makedirs(os.path.join(top, "a", "a", "b"))
    open(os.path.join(top, "a", "a", "b", "file"), "wb").close()


def method_os(rootfd, root, path, resolve):
    fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC, dir_fd=rootfd)
    os.close(fd)


def method_safeopen(rootfd, root, path, resolve):
    fd = safeopen.open(path, os.O_RDONLY, dir_fd=rootfd, resolve=resolve)
    os.close(fd)


def method_walker(rootfd, root, path, resolve):
    fd = safeopen.open(path, os.O_RDONLY, dir_fd=rootfd,
                       resolve=resolve | safeopen.RESOLVE_USERSPACE)
    os.close(fd)


def method_realpath(rootfd, root, path, resolve):
    real = os.path.realpath(os.path.join(root, path))
    if real != root and not real.startswith(root + os.sep):
        raise PermissionError(path)
    fd = os.open(real, os.O_RDONLY | os.O_CLOEXEC)
    os.close(fd)


METHODS = [("os.open(dir_fd=)", method_os), ("safeopen.open", method_safeopen),
           ("walker", method_walker), ("realpath+check+open", method_realpath)]


def measure(fn, args, number, repeats, clock=time.perf_counter_ns):
    """Median ns per call over `repeats` runs of `number` calls, the
    methods interleaved by the caller so that load hits them alike."""
    ok = True
    try:
        fn(*args)
    except OSError:
        ok = False  # the nonexistent shape: time the failure
    runs = []
    for _ in range(repeats):
        t0 = clock()
        if ok:
            for _ in range(number):
                fn(*args)
        else:
            for _ in range(number):
                try:
                    fn(*args)
                except OSError:
                    pass
        runs.append((clock() - t0) / number)
    return runs


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--number", type=int, default=2000, help="calls per run")
    ap.add_argument("--repeats", type=int, default=15, help="runs per cell (median)")
    ap.add_argument("--dir", default=None, help="where the tree is made (default: $TMPDIR)")
    ap.add_argument("--clock", choices=("wall", "cpu"), default="wall",
                    help="wall clock, or the thread's CPU time (busy machines)")
    args = ap.parse_args()
    top = tempfile.mkdtemp(prefix="safeopen-pybench.", dir=args.dir)
    try:
        build(top)
        root = os.path.realpath(top)
        rootfd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        clock = time.perf_counter_ns if args.clock == "wall" else time.thread_time_ns
        print("Python %s, libsafeopen %s, %s; median of %d x %d calls, ns per open+close "
              "(%s clock), load %s" % (sys.version.split()[0], safeopen.version(), root,
                                       args.repeats, args.number, args.clock,
                                       " ".join("%.1f" % x for x in os.getloadavg())))
        print()
        print("| shape | " + " | ".join(m for m, _ in METHODS) + " | so/os | so/realpath |")
        print("|---|" + "---:|" * (len(METHODS) + 2))
        for label, path, resolve in SHAPES:
            runs = {m: [] for m, _ in METHODS}
            # interleave: one run of each method in turn, `repeats` times
            for _ in range(args.repeats):
                for m, fn in METHODS:
                    runs[m] += measure(fn, (rootfd, root, path, resolve), args.number, 1, clock)
            med = {m: statistics.median(v) for m, v in runs.items()}
            so = runs["safeopen.open"]
            r_os = statistics.median(a / b for a, b in zip(so, runs["os.open(dir_fd=)"]))
            r_rp = statistics.median(a / b for a, b in zip(so, runs["realpath+check+open"]))
            print("| %s | %s | %.2f | %.2f |" % (
                label, " | ".join("%.0f" % med[m] for m, _ in METHODS), r_os, r_rp))
        os.close(rootfd)
    finally:
        shutil.rmtree(top)


if __name__ == "__main__":
    main()
