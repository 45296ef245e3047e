#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Print a manifest of a directory tree, one line per object, sorted by path:
type, permission bits, size, mtime (ns), link count, symlink body, SHA-256 of
regular files, and the user.* extended attributes. Nothing is followed.

    tree-manifest.py DIR [--no-root] [--no-symlink-mtime] [--owners]
    tree-manifest.py --compare REF DIR... [options]

The second form compares each DIR's manifest with REF's (one process for
what would be a manifest per tree and a cmp): one line per DIR, "same N"
(N objects) or "differs", the latter followed by its first differing lines
("#   -" REF's, "#   +" DIR's, at most 6).

Two trees with equal manifests are equal in everything an archive carries
(apart from ownership and access times). --owners adds the numeric owner and
group and the hard-link group (the first path, in sorted order, of the
object's inode).

Also a module: manifest(root, opts) returns the lines (opts: a set of the
options above).
"""
import hashlib
import os
import stat
import sys


def _line(rel, path, opts, groups):
    st = os.lstat(path)
    kind = stat.S_IFMT(st.st_mode)
    t = {stat.S_IFREG: "f", stat.S_IFDIR: "d", stat.S_IFLNK: "l", stat.S_IFIFO: "p",
         stat.S_IFCHR: "c", stat.S_IFBLK: "b", stat.S_IFSOCK: "s"}.get(kind, "?")
    mtime = st.st_mtime_ns
    if t == "l" and "--no-symlink-mtime" in opts:
        mtime = "-"
    extra = ""
    if t == "f":
        h = hashlib.sha256()
        with open(path, "rb") as f:
            for block in iter(lambda: f.read(1 << 16), b""):
                h.update(block)
        extra = h.hexdigest()
    elif t == "l":
        extra = ascii(os.readlink(path))
    elif t in "cb":
        extra = "%d,%d" % (os.major(st.st_rdev), os.minor(st.st_rdev))
    size = st.st_size if t in "fl" else "-"
    xattrs = []
    if t in "fd":
        try:
            for n in sorted(os.listxattr(path, follow_symlinks=False)):
                if n.startswith("user."):
                    xattrs.append("%s=%s" % (n, os.getxattr(path, n, follow_symlinks=False).hex()))
        except OSError:
            pass
    nlink = st.st_nlink if t != "d" else "-"
    own = ""
    if "--owners" in opts:
        own = " %d:%d %s" % (st.st_uid, st.st_gid,
                              ascii(groups[(st.st_dev, st.st_ino)]) if t != "d" else "-")
    return "%s %s %04o %s %s %s %s %s%s" % (ascii(rel), t, stat.S_IMODE(st.st_mode),
                                           size, mtime, nlink, extra, ",".join(xattrs), own)


def manifest(root, opts=frozenset()):
    """The manifest of the tree at root, as a sorted list of lines."""
    # hard-link groups: each inode named by its first path in sorted order
    groups = {}
    paths = []
    for dirpath, dirnames, filenames in os.walk(root):
        for n in dirnames + filenames:
            paths.append(os.path.relpath(os.path.join(dirpath, n), root))
    paths.sort()
    for rel in paths:
        st = os.lstat(os.path.join(root, rel))
        groups.setdefault((st.st_dev, st.st_ino), rel)
    out = [] if "--no-root" in opts else [_line(".", root, opts, groups)]
    out += [_line(rel, os.path.join(root, rel), opts, groups) for rel in paths]
    return sorted(out)


def compare(ref, dirs, opts):
    want = manifest(ref, opts)
    for d in dirs:
        got = manifest(d, opts)
        if got == want:
            print("same %d" % len(got))
            continue
        print("differs")
        diff = ["#   - " + l for l in sorted(set(want) - set(got))][:3]
        diff += ["#   + " + l for l in sorted(set(got) - set(want))][:3]
        print("\n".join(diff or ["#   (the same lines in another order)"]))


if __name__ == "__main__":
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    opts = set(a for a in sys.argv[1:] if a.startswith("--"))
    if "--compare" in opts:
        compare(args[0], args[1:], opts - {"--compare"})
    else:
        for l in manifest(args[0], opts):
            print(l)
