#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Generate the hostile archives of tests/tools/test-extract.sh.

    gen-archives.py OUTDIR OUTSIDE [--dests] [--benign DIR] [--sentinel-only]

OUTSIDE is the absolute path of the sentinel tree, made here (its manifest,
tests/tools/tree-manifest.py, in OUTDIR/sentinel.full); the destination of
every run is a sibling of it (so "../outside" from the destination reaches
it). --dests makes those destinations that need something planted, one per
archive, class and path, OUTSIDE/../h.NAME.CLASS.PATH (PATH: fast or
walker), with what the "setup-" lines plant (test-extract.sh makes the
others it uses). --benign DIR makes the benign tree of test-extract.sh
in DIR and prints "xattrs yes" or "xattrs no" (whether the filesystem keeps
user xattrs). --sentinel-only makes the sentinel and nothing else.
For each archive NAME.{tar,zip,cpio} an expectation file NAME.expect is
written, one check per line:

    CLASS rc N              exit status of safeopen extract
    CLASS file PATH TEXT    PATH (beneath DEST) is a regular file holding TEXT
    CLASS link PATH TARGET  PATH is a symlink whose body is TARGET
    CLASS dir PATH          PATH is a directory (not a symlink)
    CLASS absent PATH       nothing at PATH (PATH has no symlink on the way)

CLASS says in which runs the check applies: d (--keep-old-files), o
(replacing, the default, or --overwrite), r (--in-root --keep-old-files), or
a combination such as "do"; each class runs
with the fast path and with the walker forced.
"""
import gzip
import io
try:
    import lzma
except ImportError:  # a Python built without liblzma: no .xz archives (test-extract.sh skips them)
    lzma = None
import os
import stat
import sys
import tarfile
import zipfile

out, outside = sys.argv[1], sys.argv[2]
opts = sys.argv[3:]
assert os.path.isabs(outside)
os.makedirs(out, exist_ok=True)
MTIME = 1300000000


def make_sentinel():
    """The tree next to every DEST, and its full manifest (checksums, modes,
    mtimes, xattrs) in OUTDIR/sentinel.full."""
    os.makedirs(os.path.join(outside, "dir"))
    os.mkdir(os.path.join(outside, "victim"))
    with open(os.path.join(outside, "file"), "w") as f:
        f.write("sentinel\n")
    with open(os.path.join(outside, "dir", "inner"), "w") as f:
        f.write("inner\n")
    os.chmod(os.path.join(outside, "dir", "inner"), 0o640)
    os.symlink("file", os.path.join(outside, "link"))
    for n in ("file", "dir/inner", "link", "dir", "victim", ""):
        os.utime(os.path.join(outside, n), ns=(946782245000000000,) * 2, follow_symlinks=False)
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    manifest = __import__("tree-manifest").manifest
    with open(os.path.join(out, "sentinel.full"), "w") as f:
        f.write("".join(l + "\n" for l in manifest(outside)))


make_sentinel()
if "--sentinel-only" in opts:
    sys.exit(0)


def reg(name, data, mode=0o644, pax=None):
    ti = tarfile.TarInfo(name)
    ti.size = len(data)
    ti.mode = mode
    ti.mtime = MTIME
    if pax:
        ti.pax_headers = dict(pax)
    return ti, io.BytesIO(data)


def sym(name, target, pax=None):
    ti = tarfile.TarInfo(name)
    ti.type = tarfile.SYMTYPE
    ti.linkname = target
    ti.mtime = MTIME
    if pax:
        ti.pax_headers = dict(pax)
    return ti, None


def hard(name, target):
    ti = tarfile.TarInfo(name)
    ti.type = tarfile.LNKTYPE
    ti.linkname = target
    ti.mtime = MTIME
    return ti, None


def dirent(name, mode=0o755):
    ti = tarfile.TarInfo(name)
    ti.type = tarfile.DIRTYPE
    ti.mode = mode
    ti.mtime = MTIME
    return ti, None


def special(name, kind, major=0, minor=0):
    ti = tarfile.TarInfo(name)
    ti.type = kind
    ti.mode = 0o644
    ti.devmajor, ti.devminor = major, minor
    ti.mtime = MTIME
    return ti, None


def write_tar(name, members, expect, fmt=tarfile.PAX_FORMAT):
    path = os.path.join(out, name + ".tar")
    with open(path, "wb") as f:
        with tarfile.open(fileobj=f, mode="w", format=fmt) as t:
            for ti, data in members:
                t.addfile(ti, data)
    write_expect(name, expect)


def write_expect(name, expect):
    with open(os.path.join(out, name + ".expect"), "w") as f:
        f.write("\n".join(expect) + "\n")
    setups = [line.split(" ", 3) for line in expect if line.split(" ")[1].startswith("setup-")]
    if "--dests" not in opts or not setups:
        return
    for cls in "dor":
        for path in ("fast", "walker"):
            dest = os.path.join(os.path.dirname(outside), "h.%s.%s.%s" % (name, cls, path))
            os.mkdir(dest)
            for what in setups:
                if what[1] == "setup-link":
                    os.symlink(what[3], os.path.join(dest, what[2]))
                elif what[1] == "setup-dir":
                    os.makedirs(os.path.join(dest, what[2]))


rel_out = "../" + os.path.basename(outside)   # outside, seen from DEST
in_root_out = outside.lstrip("/")             # where --in-root puts absolute names

# 1. absolute names
write_tar("absolute", [
    reg(outside + "/abs-created", b"abs\n"),
    reg(outside + "/file", b"PWNED\n"),
    reg("/abs-top", b"abstop\n"),
    reg("ok", b"ok-absolute\n"),
], ["* file ok ok-absolute", "d rc 1", "o rc 1", "d absent abs-top",
    "r rc 0", "r file %s/abs-created abs" % in_root_out, "r file %s/file PWNED" % in_root_out,
    "r file abs-top abstop"])

# 2. ".." names
write_tar("dotdot", [
    reg("../" + os.path.basename(outside) + "/dotdot-created", b"dd\n"),
    reg("a/../../" + os.path.basename(outside) + "/file", b"PWNED\n"),
    reg("a/b/../../../" + os.path.basename(outside) + "/x", b"PWNED\n"),
    reg("a/ok", b"ok-a\n"),
    reg("a/../ok2", b"ok-2\n"),
    reg("..", b"PWNED\n"),
], ["* file a/ok ok-a", "* file ok2 ok-2", "do rc 1", "r rc 1",
    # --in-root: ".." stops at DEST; "a/.." with no "a" yet is ENOENT (mkdir -p
    # follows the kernel: a component before ".." must exist)
    "r file outside/dotdot-created dd", "r absent outside/file", "r absent outside/x"])

# 3. symlink, then an entry written through it: relative, absolute, chained, /proc
write_tar("symlink-relative", [
    sym("s", rel_out),
    reg("s/written", b"PWNED\n"),
    reg("s/file", b"PWNED\n"),
    reg("ok", b"ok-rel\n"),
], ["* link s " + rel_out, "* file ok ok-rel", "* rc 1"])

write_tar("symlink-absolute", [
    sym("s", outside),
    reg("s/written", b"PWNED\n"),
    dirent("s/newdir/"),
    sym("t", outside + "/file"),
    reg("ok", b"ok-abs\n"),
], ["* link s " + outside, "* link t " + outside + "/file", "* file ok ok-abs",
    "* rc 1"])

write_tar("symlink-chained", [
    dirent("d/"),
    sym("c1", "c2"),
    sym("c2", "d/../.."),
    sym("c3", "c1/" + os.path.basename(outside)),
    reg("c1/" + os.path.basename(outside) + "/chained", b"PWNED\n"),
    reg("c3/file", b"PWNED\n"),
    reg("c2/" + os.path.basename(outside) + "/file", b"PWNED\n"),
    reg("ok", b"ok-chain\n"),
], ["* link c1 c2", "* link c2 d/../..", "* file ok ok-chain", "* dir d", "* rc 1"])

write_tar("symlink-proc", [
    sym("p", "/proc/self/root"),
    reg("p" + outside + "/proc-written", b"PWNED\n"),
    sym("q", "/proc/self/cwd"),
    reg("q/proc-cwd-written", b"PWNED\n"),
    sym("r", "/proc/self/root" + outside),
    reg("r/file", b"PWNED\n"),
    reg("ok", b"ok-proc\n"),
], ["* link p /proc/self/root", "* link q /proc/self/cwd", "* file ok ok-proc",
    "* rc 1"])

# 4. a directory replaced by a symlink in a later entry (and the reverse)
write_tar("dir-then-symlink", [
    dirent("d/"),
    reg("d/a", b"da\n"),
    sym("d", rel_out),
    reg("d/b", b"db\n"),
    sym("e", rel_out),
    dirent("e/"),
    reg("e/x", b"ex\n"),
], ["* dir d", "* file d/a da", "* file d/b db", "* rc 1",
    "dr link e " + rel_out, "o dir e", "o file e/x ex"])

# 5. hard links to outside, then data appended under the same name
write_tar("hardlink-outside", [
    hard("h1", rel_out + "/file"),
    hard("h2", outside + "/file"),
    sym("sd", rel_out),
    hard("h3", "sd/file"),
    reg("h1", b"appended-h1\n"),
    reg("h2", b"appended-h2\n"),
    reg("h3", b"appended-h3\n"),
    reg("ok", b"ok-hard\n"),
    hard("ok-link", "ok"),
], ["* file h1 appended-h1", "* file h3 appended-h3",
    "* file ok ok-hard", "* file ok-link ok-hard", "* rc 1", "* file h2 appended-h2"])

# 6. a hard link to a symlink, then data written to both names
write_tar("hardlink-symlink", [
    sym("s", rel_out + "/file"),
    hard("h", "s"),
    reg("h", b"via-h\n"),
    reg("s", b"via-s\n"),
    reg("ok", b"ok-hs\n"),
], ["* file ok ok-hs", "dr link s " + rel_out + "/file", "dr link h " + rel_out + "/file",
    "dr rc 1", "o file h via-h", "o file s via-s", "o rc 0"])

# 7. very long names
long_ok = "/".join(["L%03d" % i + "x" * 200 for i in range(3)]) + "/leaf"
write_tar("long-names", [
    reg("n" * 300, b"too-long-component\n"),
    reg("/".join(["p" * 250] * 20) + "/f", b"too-long-path\n"),
    reg("../" * 300 + os.path.basename(outside) + "/long-dotdot", b"PWNED\n"),
    reg(long_ok, b"long-ok\n"),
    sym("longlink", "../" * 100 + os.path.basename(outside)),
    reg("longlink/file", b"PWNED\n"),
], ["* file " + long_ok + " long-ok", "* rc 1"])

# 8. pax headers overriding the ustar name and link name; a GNU long name
write_tar("pax-override", [
    reg("harmless", b"PWNED\n", pax={"path": rel_out + "/pax-written"}),
    reg("harmless2", b"PWNED\n", pax={"path": outside + "/file"}),
    sym("pl", "inside", pax={"linkpath": rel_out}),
    reg("pl/written", b"PWNED\n"),
    reg("ok", b"ok-pax\n", pax={"path": "renamed-ok"}),
], ["* file renamed-ok ok-pax", "* absent harmless", "* absent ok", "* link pl " + rel_out,
    "do rc 1", "r rc 0", "r file outside/pax-written PWNED", "r file outside/written PWNED"])
write_tar("gnu-longname", [
    reg(rel_out + "/" + "g" * 120, b"PWNED\n"),
    reg("ok/" + "k" * 120, b"ok-gnu\n"),
], ["* file ok/" + "k" * 120 + " ok-gnu", "do rc 1", "r rc 0",
    "r file outside/" + "g" * 120 + " PWNED"], fmt=tarfile.GNU_FORMAT)

# 9. duplicate entries (and a duplicate that is a symlink first)
write_tar("duplicates", [
    reg("dup", b"first\n"),
    reg("dup", b"second\n"),
    dirent("dd/"),
    dirent("dd/"),
    sym("dup2", rel_out + "/file"),
    reg("dup2", b"replaced\n"),
    reg("dd/ok", b"ok-dup\n"),
], ["* file dd/ok ok-dup", "* dir dd", "dr file dup first", "o file dup second",
    "dr link dup2 " + rel_out + "/file", "o file dup2 replaced", "dr rc 1", "o rc 0"])

# 10. special files
write_tar("specials", [
    special(rel_out + "/fifo", tarfile.FIFOTYPE),
    special("null", tarfile.CHRTYPE, 1, 3),
    special("fifo-ok", tarfile.FIFOTYPE),
    reg("ok", b"ok-special\n"),
], ["* file ok ok-special", "* rc 1"])


# 11. zip: backslashes, absolute and ".." names, as DOS and as Unix archives
def write_zip(name, system, expect):
    path = os.path.join(out, name + ".zip")
    with zipfile.ZipFile(path, "w") as z:
        for n, data in [
            ("..\\..\\" + os.path.basename(outside) + "\\zip-bs", b"PWNED\n"),
            ("..\\" + os.path.basename(outside) + "\\zip-bs1", b"PWNED\n"),
            ("a\\b\\c.txt", b"abc\n"),
            ("/" + outside.lstrip("/") + "/zip-abs", b"PWNED\n"),
            ("../" + os.path.basename(outside) + "/zip-dotdot", b"PWNED\n"),
            ("zipok", b"ok-zip\n"),
        ]:
            zi = zipfile.ZipInfo(n, date_time=(2011, 3, 13, 7, 6, 40))
            zi.create_system = system
            zi.external_attr = (0o100644 << 16) if system == 3 else 0
            z.writestr(zi, data)
    write_expect(name, expect)


write_zip("zip-dos", 0, ["* file zipok ok-zip", "do rc 1"])
write_zip("zip-unix", 3, ["* file zipok ok-zip", "do rc 1"])


# 12. cpio (newc): ".." names, and a hard-linked pair whose data comes with
# the last link (the cpio convention), which must land in the new file
def newc(entries):
    buf = b""
    for ino, (name, mode, nlink, data, target) in enumerate(entries, 1):
        if target is not None:
            data = target.encode()
        nm = name.encode() + b"\0"
        fields = [ino, mode, 0, 0, nlink, MTIME, len(data), 0, 0, 0, 0, len(nm), 0]
        hdr = b"070701" + b"".join(b"%08X" % f for f in fields)
        buf += hdr + nm
        buf += b"\0" * (-len(buf) % 4)
        buf += data
        buf += b"\0" * (-len(buf) % 4)
    return buf


def cpio_entries():
    return [
        ("../" + os.path.basename(outside) + "/cpio-written", 0o100644, 1, b"PWNED\n", None),
        ("cl", 0o120777, 1, b"", rel_out),
        ("cl/file", 0o100644, 1, b"PWNED\n", None),
        ("cpiook", 0o100644, 1, b"ok-cpio\n", None),
        ("TRAILER!!!", 0, 1, b"", None),
    ]


with open(os.path.join(out, "cpio.cpio"), "wb") as f:
    f.write(newc(cpio_entries()))
write_expect("cpio", ["* file cpiook ok-cpio", "* link cl " + rel_out, "do rc 1"])

# 13. hard-linked cpio pairs (same inode number, data with the last link, as
# cpio stores them): a legitimate pair, and one whose first name is outside
def newc_ino(entries):
    buf = b""
    for ino, name, mode, nlink, data in entries + [(0, "TRAILER!!!", 0, 1, b"")]:
        nm = name.encode() + b"\0"
        fields = [ino, mode, 0, 0, nlink, MTIME, len(data), 0, 0, 0, 0, len(nm), 0]
        buf += b"070701" + b"".join(b"%08X" % x for x in fields) + nm
        buf += b"\0" * (-len(buf) % 4) + data
        buf += b"\0" * (-len(buf) % 4)
    return buf


with open(os.path.join(out, "cpio-pair.cpio"), "wb") as f:
    f.write(newc_ino([
        (7, "pair1", 0o100644, 2, b""), (7, "pair2", 0o100644, 2, b"pair-data\n"),
        (9, "../" + os.path.basename(outside) + "/file", 0o100644, 2, b""),
        (9, "inside", 0o100644, 2, b"PWNED\n"),
        (11, "cpiook", 0o100644, 1, b"ok-cpio\n"),
    ]))
write_expect("cpio-pair", ["* file pair1 pair-data", "* file pair2 pair-data",
                           "* file cpiook ok-cpio", "do rc 1"])

# 14. symlinks already in DEST (planted before the extraction, "setup-" lines):
# never followed out; one pointing inside is followed as a directory
write_tar("predest", [
    reg("pre/x", b"PWNED\n"),
    dirent("pre/"),
    reg("pref", b"replaced\n"),
    reg("prein/x", b"inside\n"),
    reg("ok", b"ok-pre\n"),
], ["* setup-link pre " + rel_out, "* setup-link pref " + rel_out + "/file",
    "* setup-dir realin", "* setup-link prein realin",
    "* file ok ok-pre", "* file realin/x inside", "* link prein realin",
    "dr link pref " + rel_out + "/file", "o file pref replaced", "o dir pre", "* rc 1"])

# ---------------------------------------------------------------- fidelity
# Real-like archives for the fidelity checks of tests/tools/test-extract.sh (in
# OUTDIR/fidelity, outside the hostile loop): what a system archive holds.
fid = os.path.join(out, "fidelity")
os.makedirs(fid, exist_ok=True)
BZ_MTIME = 1663545600  # 2022-09-19, bzip2's release in the report of issue 26


def newc_full(entries):
    """newc cpio: (ino, name, mode, uid, gid, nlink, mtime, data) each."""
    buf = b""
    for ino, name, mode, uid, gid, nlink, mtime, data in entries + [
            (0, "TRAILER!!!", 0, 0, 0, 1, 0, b"")]:
        nm = name.encode() + b"\0"
        fields = [ino, mode, uid, gid, nlink, mtime, len(data), 0, 0, 0, 0, len(nm), 0]
        buf += b"070701" + b"".join(b"%08X" % x for x in fields) + nm
        buf += b"\0" * (-len(buf) % 4) + data
        buf += b"\0" * (-len(buf) % 4)
    return buf


# 1. cpio hard links as bsdtar --format=newc writes bzip2's three names: one
# inode, the data with the last name; the directories after their contents
prog = b"#!/bin/sh\n# bzip2 stand-in\n" + b"x" * 3000 + b"\n"
with open(os.path.join(fid, "links.cpio"), "wb") as f:
    f.write(newc_full([
        (1, "usr", 0o40755, 0, 0, 3, BZ_MTIME - 50, b""),
        (2, "usr/bin", 0o40755, 0, 0, 2, BZ_MTIME - 40, b""),
        (3, "usr/bin/bzcat", 0o100755, 0, 0, 3, BZ_MTIME, b""),
        (3, "usr/bin/bunzip2", 0o100755, 0, 0, 3, BZ_MTIME, b""),
        (3, "usr/bin/bzip2", 0o100755, 0, 0, 3, BZ_MTIME, prog),
        (4, "usr/bin/bzip2recover", 0o100755, 0, 0, 1, BZ_MTIME - 7, b"recover\n"),
        (5, "usr/bin/bzless", 0o120777, 0, 0, 1, BZ_MTIME - 9, b"bzmore"),
    ]))

# 2. set-ID files and directories as a system package has them (sudo 4755,
# a set-group-ID program, a set-group-ID shared directory, a sticky one)
with tarfile.open(os.path.join(fid, "setid.tar"), "w", format=tarfile.PAX_FORMAT) as t:
    for name, mode, uid, gid, kind in [
            ("usr/", 0o755, 0, 0, "d"), ("usr/bin/", 0o755, 0, 0, "d"),
            ("usr/bin/sudo", 0o4755, 0, 0, "f"), ("usr/bin/wall", 0o2755, 0, 5, "f"),
            ("usr/bin/plain", 0o755, 1234, 4321, "f"),
            ("srv/", 0o755, 0, 0, "d"), ("srv/shared/", 0o2775, 1234, 4321, "d"),
            ("srv/tmp/", 0o1777, 0, 0, "d")]:
        ti = tarfile.TarInfo(name)
        ti.mode, ti.uid, ti.gid, ti.mtime = mode, uid, gid, BZ_MTIME
        if kind == "d":
            ti.type = tarfile.DIRTYPE
            t.addfile(ti)
        else:
            data = ("%s\n" % name).encode()
            ti.size = len(data)
            t.addfile(ti, io.BytesIO(data))

# 3. a source-tree-like archive for truncation and re-extraction: 24 files of
# compressible text in 4 directories (sizes not multiples of 512), with the
# cut points: the middle of the data of member 9 ("mid"), and one byte into
# the block padding after the last member's data ("padding")
words = [b"alpha", b"beta", b"gamma", b"delta", b"epsilon", b"zeta", b"eta", b"theta"]
with tarfile.open(os.path.join(fid, "tree.tar"), "w", format=tarfile.GNU_FORMAT) as t:
    ti = tarfile.TarInfo("src")
    ti.type, ti.mode, ti.mtime = tarfile.DIRTYPE, 0o755, MTIME - 1
    t.addfile(ti)
    for d in range(4):
        ti = tarfile.TarInfo("src/d%d" % d)
        ti.type, ti.mode, ti.mtime = tarfile.DIRTYPE, 0o755, MTIME
        t.addfile(ti)
        for i in range(6):
            n = d * 6 + i
            # words[(n * 7 + k * k) % 8] for k in range(900 + 397 * n), by its
            # period: k * k % 8 is 0, 1, 4, 1 as k % 4 is 0, 1, 2, 3
            count, period = 900 + 397 * n, [words[(n * 7 + q) % 8] for q in (0, 1, 4, 1)]
            data = b" ".join(period * (count // 4) + period[:count % 4]) + b"\n"
            ti = tarfile.TarInfo("src/d%d/f%02d.c" % (d, n))
            ti.mode, ti.mtime, ti.size = 0o644, MTIME + n, len(data)
            t.addfile(ti, io.BytesIO(data))
with tarfile.open(os.path.join(fid, "tree.tar")) as t:
    members = [m for m in t.getmembers() if m.isfile()]
    mid = members[8]
    last = members[-1]
    assert last.size % 512
    with open(os.path.join(fid, "tree.cuts"), "w") as f:
        f.write("mid %d %s\n" % (mid.offset_data + mid.size // 2, mid.name))
        f.write("padding %d -\n" % (last.offset_data + last.size + 1))

# 4. privileges: a device, a set-user-ID file of another owner, a FIFO
with tarfile.open(os.path.join(fid, "priv.tar"), "w", format=tarfile.PAX_FORMAT) as t:
    ti = tarfile.TarInfo("null")
    ti.type, ti.devmajor, ti.devminor = tarfile.CHRTYPE, 1, 3
    t.addfile(ti)
    ti = tarfile.TarInfo("suid")
    ti.mode, ti.uid, ti.gid, ti.size = 0o4755, 1234, 4321, 3
    t.addfile(ti, io.BytesIO(b"#!\n"))
    ti = tarfile.TarInfo("sock")
    ti.type, ti.mode = tarfile.FIFOTYPE, 0o600
    t.addfile(ti)

# 5. an attribute the filesystem refuses (a malformed ACL) between two it
# takes, on a directory and on a file in it
with tarfile.open(os.path.join(fid, "badxattr.tar"), "w", format=tarfile.PAX_FORMAT) as t:
    bad = {"SCHILY.xattr.user.one": "1", "SCHILY.xattr.system.posix_acl_access": "garbage",
           "SCHILY.xattr.user.two": "2"}
    ti = tarfile.TarInfo("xd")
    ti.type, ti.mode, ti.pax_headers = tarfile.DIRTYPE, 0o755, bad
    t.addfile(ti)
    ti = tarfile.TarInfo("xd/xa")
    ti.size, ti.mode, ti.pax_headers = 6, 0o644, bad
    t.addfile(ti, io.BytesIO(b"hello\n"))

# 6. the held parent directory of the extraction (test-extract.sh says what
# each shows): "d:NAME" a directory, "l:NAME:BODY" a symlink, "f:NAME:DATA" a
# file of DATA and a newline, in that order
for name, entries in [
        ("retarget", "d:x d:y l:l:x f:l/f1:1 l:l:y f:l/f2:2"),
        ("selfref", "d:a d:a/b l:a/s:. l:a/s/s:b f:a/s/f:f"),
        ("keys", "d:a f:a/f:a/f f:ab/g:ab/g d:a/b f:a/b/h:a/b/h f:a/i:a/i f:j:j "
                 "f:p/q/r/s:p/q/r/s d:a/b/.. f:a/..:a/.. f:a/b/k:a/b/k")]:
    with tarfile.open(os.path.join(fid, name + ".tar"), "w", format=tarfile.PAX_FORMAT) as t:
        for arg in entries.split():
            kind, ename, body = (arg.split(":", 2) + [""])[:3]
            ti = tarfile.TarInfo(ename)
            if kind == "d":
                ti.type, ti.mode = tarfile.DIRTYPE, 0o755
                t.addfile(ti)
            elif kind == "l":
                ti.type, ti.linkname = tarfile.SYMTYPE, body
                t.addfile(ti)
            else:
                data = body.encode() + b"\n"
                ti.size = len(data)
                t.addfile(ti, io.BytesIO(data))

# 7. the truncated and padded archives of the fidelity checks, made once here:
# whole with 100 kB of zeros after the end marker (more than a pipe holds),
# cut in a member's data ("mid") and in the padding, and the compressed
# ones (-1: the fastest, the test is the reading), cut at 3/5
with open(os.path.join(fid, "tree.tar"), "rb") as f:
    whole = f.read()
with open(os.path.join(fid, "tree.cuts")) as f:
    cuts = dict((l.split()[0], int(l.split()[1])) for l in f)


def put(name, data):
    with open(os.path.join(fid, name), "wb") as f:
        f.write(data)


put("padded.tar", whole + bytes(100000))
put("cut-mid.tar", whole[:cuts["mid"]])
put("cut-padding.tar", whole[:cuts["padding"]])
for ext, pack in (("xz", lzma and (lambda d: lzma.compress(d, preset=1))),
                  ("gz", lambda d: gzip.compress(d, compresslevel=1, mtime=0))):
    if not pack:
        continue
    z = pack(whole)
    put("tree.tar." + ext, z)
    put("padded.tar." + ext, pack(whole + bytes(100000)))
    put("cut.tar." + ext, z[:len(z) * 3 // 5])

# ---------------------------------------------------------------- benign tree
# The tree of test-extract.sh's benign corpus: modes, mtimes, symlinks, a hard
# link, a FIFO, long names, a sparse file and, where the filesystem has them,
# user xattrs
if "--benign" in opts:
    S = opts[opts.index("--benign") + 1]

    def bput(path, data, mode=None):
        with open(os.path.join(S, path), "wb") as f:
            f.write(data)
        if mode is not None:
            os.chmod(os.path.join(S, path), mode)
    for d in ("a/b/c", "ro", "modes", "links", "long"):
        os.makedirs(os.path.join(S, d))
    bput("a/file", b"alpha\n")
    bput("a/b/c/deep", b"deep\n")
    bput("a/empty", b"")
    bput("a/big", os.urandom(200000))
    with open(os.path.join(S, "a/sparse"), "wb") as f:
        f.seek(3000000)
        f.write(b"x")
        f.truncate(5000000)
    bput("ro/f", b"readonly\n")
    for m in (0o600, 0o640, 0o644, 0o700, 0o750, 0o755, 0o444, 0o400, 0o1755):
        bput("modes/m%04o" % m, b"%04o\n" % m, m)
    for body, name in (("../a/file", "rel"), ("/etc/passwd", "abs"), ("nowhere", "dangling"),
                       ("../a", "dirlink")):
        os.symlink(body, os.path.join(S, "links", name))
    os.link(os.path.join(S, "a/file"), os.path.join(S, "links/hard"))
    os.mkfifo(os.path.join(S, "links/fifo"))
    bput("long/with spaces and 'quotes'", b"spaces\n")
    long = "n" * 200
    os.makedirs(os.path.join(S, "long", long, long))
    bput(os.path.join("long", long, long, long), b"long\n")
    xattrs = "no"
    try:
        os.setxattr(os.path.join(S, "a/file"), "user.test", b"probe")
        os.setxattr(os.path.join(S, "a/file"), "user.mime", b"text/plain")
        os.setxattr(os.path.join(S, "a/b"), "user.dir", b"yes")
        xattrs = "yes"
    except OSError:
        pass
    os.chmod(os.path.join(S, "ro"), 0o555)
    os.chmod(os.path.join(S, "a/b"), 0o750)
    # the times last, children before their directory
    for top, dirs, files in os.walk(S, topdown=False):
        for n in dirs + files:
            os.utime(os.path.join(top, n), ns=(1300000000123456789,) * 2, follow_symlinks=False)
    os.utime(S, ns=(1300000000123456789,) * 2)
    for n in ("a/b", "links/rel", "modes/m0755"):
        os.utime(os.path.join(S, n), ns=(946684799000000000,) * 2, follow_symlinks=False)
    print("xattrs " + xattrs)
