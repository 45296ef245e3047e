#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""safeopen extract next to bsdtar, on a corpus built here (the driver of
tests/tools/test-extract-bsdtar.sh).

    extract-vs-bsdtar.py SAFEOPEN WORKDIR [--long]

The corpus: names that are not ASCII (zip entries written by Python's
zipfile, flagged UTF-8 or raw bytes; pax and GNU tar; archives written by
bsdtar in its formats from a tree with such names, links and hard links),
compressed tars with data after the compressed stream, pax links whose
target is only in a pax record, pax hard links with data, and the shapes of
PEP 706 (CPython's tarfile extraction filters). Every archive is extracted
by bsdtar and by `safeopen extract` (as this user, their defaults) into
fresh directories next to a sentinel tree, in the C locale and, for the
names, in C.UTF-8, and compared:

  - "same": the two trees are equal (tests/tools/tree-manifest.py with
    --owners: type, mode, size, content, link body, mtime, owner, hard-link
    group) and so are the exit statuses;
  - "refuse NAME...": safeopen refuses exactly these entries, each named in a
    message, and exits 1; the rest of the tree is bsdtar's (without what
    bsdtar made of those names). These are the hostile shapes (safeopen
    refuses what would leave DEST; bsdtar strips a leading '/'), a device
    node (refused without --devices), and the tar hard link whose target is
    only in a pax linkpath record, which libarchive reads with no target at
    all (bsdtar then makes an empty regular file).

Nothing outside the destinations may change. Prints one "ok N - ..." or
"not ok N - ..." line per check; exits 1 if one failed. --long (make
check-long) adds the rest of bsdtar's formats and bigger trees.
"""
import ast
import bz2
import gzip
import io
import os
import shutil
import subprocess
import sys
import tarfile
import time
import zipfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
manifest = __import__("tree-manifest").manifest  # noqa: E402

SAFEOPEN, WORK = sys.argv[1], os.path.abspath(sys.argv[2])
LONG = "--long" in sys.argv[3:]
MTIME = 1300000000
CORPUS = os.path.join(WORK, "corpus")
OUTSIDE = os.path.join(WORK, "outside")
os.makedirs(CORPUS)
checks = []  # (ok, description, details)

# ---------------------------------------------------------------- the corpus
corpus = []  # (file name, expectation: None for "same", else the refused names)


def add(name, expect=None):
    corpus.append((name, expect))
    return os.path.join(CORPUS, name)


def tinfo(name, kind=tarfile.REGTYPE, size=0, mode=0o644, link="", pax=None):
    ti = tarfile.TarInfo(name)
    ti.type, ti.size, ti.mode, ti.linkname, ti.mtime = kind, size, mode, link, MTIME
    if pax:
        ti.pax_headers = dict(pax)
    return ti


def tar_bytes(entries, fmt=tarfile.PAX_FORMAT, encoding="utf-8"):
    """A tar of entries: (TarInfo, data or None)."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=fmt, encoding=encoding,
                      errors="surrogateescape") as t:
        for ti, data in entries:
            t.addfile(ti, io.BytesIO(data) if data is not None else None)
    return buf.getvalue()


def write_tar(path, entries, **kw):
    with open(path, "wb") as f:
        f.write(tar_bytes(entries, **kw))


def blank_link_fields(data):
    """The ustar link name of every link header emptied (checksums fixed): the
    target then lives only in the pax linkpath record before it."""
    b, off = bytearray(data), 0
    while off + 512 <= len(b) and any(b[off:off + 512]):
        h = b[off:off + 512]
        size = int(h[124:136].strip(b"\0 ") or b"0", 8)
        if h[156:157] in (b"1", b"2"):
            b[off + 157:off + 257] = bytes(100)
            b[off + 148:off + 156] = b" " * 8
            b[off + 148:off + 156] = b"%06o\0 " % sum(b[off:off + 512])
        off += 512 + (size + 511) // 512 * 512
    return bytes(b)


def reg(name, data, **kw):
    return tinfo(name, size=len(data), **kw), data


# names beyond ASCII: zip (Python's zipfile flags them UTF-8)
NAMES = ["caf\u00e9/na\u00efve.txt", "\u65e5\u672c\u8a9e/\u30d5\u30a1\u30a4\u30eb.txt",
         "emoji-\U0001f600.txt", "\u0391\u03b8\u03ae\u03bd\u03b1/\u00e4\u00f6\u00fc\u00df",
         "ascii.txt"]
with zipfile.ZipFile(add("names-utf8.zip"), "w") as z:
    for i, n in enumerate(NAMES):
        zi = zipfile.ZipInfo(n, date_time=(2011, 3, 13, 7, 6, 40))
        zi.external_attr = (0o100644 if i % 2 else 0o100600) << 16
        z.writestr(zi, ("entry %d\n" % i).encode())
    zi = zipfile.ZipInfo("r\u00e9pertoire/", date_time=(2011, 3, 13, 7, 6, 40))
    zi.external_attr = 0o40755 << 16
    z.writestr(zi, b"")
# a zip name of raw bytes, not flagged UTF-8 (an old DOS or Windows writer)
buf = io.BytesIO()
with zipfile.ZipFile(buf, "w") as z:
    z.writestr(zipfile.ZipInfo("rawXname.txt", date_time=(2011, 3, 13, 7, 6, 40)), b"raw\n")
with open(add("names-raw.zip"), "wb") as f:
    f.write(buf.getvalue().replace(b"rawXname", b"raw\x82name"))
# pax (UTF-8 records) and GNU tar (the bytes of ISO 8859-1): files,
# directories, a symlink with such a body, a hard link to such a name
for fmt, enc, fname in ((tarfile.PAX_FORMAT, "utf-8", "names-pax.tar"),
                        (tarfile.GNU_FORMAT, "latin-1", "names-gnu-latin1.tar")):
    uni = enc == "utf-8"
    n1 = "d\u00e9j\u00e0/fichier"
    n2 = "\u65e5\u672c/\u30d5" if uni else "\u00e0\u00e7\u00ee/\u00f1"
    write_tar(add(fname), [
        (tinfo("d\u00e9j\u00e0", tarfile.DIRTYPE, mode=0o755), None),
        reg(n1, b"one\n", mode=0o640),
        reg(n2, b"two\n"),
        (tinfo("lien-\u00e9", tarfile.SYMTYPE, link=n1), None),
        (tinfo("dur-\u00e9", tarfile.LNKTYPE, link=n1), None),
    ], fmt=fmt, encoding=enc)
# pax hdrcharset=BINARY: names of undeclared bytes
write_tar(add("names-pax-binary.tar"), [
    reg("bin-\udce9", b"binary\n", pax={"hdrcharset": "BINARY"}),
], encoding="utf-8")

# links given only by pax records, and pax hard links with data
with open(add("pax-symlink-linkpath.tar", ["sl"]), "wb") as f:
    f.write(blank_link_fields(tar_bytes([
        reg("target", b"data\n"),
        (tinfo("sl", tarfile.SYMTYPE, link="target", pax={"linkpath": "target"}), None),
        (tinfo("sl-long", tarfile.SYMTYPE, link="d/" * 60 + "target"), None),
    ])))
with open(add("pax-hardlink-linkpath.tar", ["hl"]), "wb") as f:
    f.write(blank_link_fields(tar_bytes([
        reg("target", b"data\n"),
        (tinfo("hl", tarfile.LNKTYPE, link="target", pax={"linkpath": "target"}), None),
        reg("after", b"after\n"),
    ])))
write_tar(add("pax-hardlink-data.tar"), [
    reg("a", b"old\n"),
    (tinfo("b", tarfile.LNKTYPE, size=4, mode=0o600, link="a", pax={"size": "4"}), b"new\n"),
    reg("c" * 120, b"c\n"),
    (tinfo("d/e", tarfile.LNKTYPE, link="c" * 120), None),  # its target in a pax record
])

# data after the end of a whole compressed stream (a warning, exit 0); gzip
# and bzip2 by Python's modules (no process), lz4 by its program
plain = tar_bytes([reg("z/one", b"1\n" * 5000), reg("z/two", b"2\n")])
for prog, ext in (("gzip", "gz"), ("bzip2", "bz2"), ("lz4", "lz4")):
    if ext == "gz":
        comp = gzip.compress(plain, compresslevel=1, mtime=0)
    elif ext == "bz2":
        comp = bz2.compress(plain, compresslevel=1)
    elif shutil.which(prog):
        comp = subprocess.run([prog, "-1", "-c"], input=plain, capture_output=True,
                              check=True).stdout
    else:
        continue
    with open(add("trailing.tar." + ext), "wb") as f:
        f.write(comp + b"trailing garbage\n")

# the shapes of PEP 706's filters: absolute names, "..", links that lead
# outside and writes through them, set-ID bits, a device node
write_tar(add("pep706-absolute.tar", ["/abs-file"]), [reg("/abs-file", b"abs\n"), reg("ok", b"ok\n")])
write_tar(add("pep706-dotdot.tar", ["../escape", "a/../../escape2"]), [
    reg("../escape", b"x\n"), reg("a/../../escape2", b"x\n"), reg("a/ok", b"ok\n")])
write_tar(add("pep706-links.tar", ["out/x", "abs/x", "hard-out", "d/up2/chain"]), [
    (tinfo("out", tarfile.SYMTYPE, link="../outside"), None),
    reg("out/x", b"through\n"),
    (tinfo("abs", tarfile.SYMTYPE, link=OUTSIDE), None),
    reg("abs/x", b"through\n"),
    (tinfo("hard-out", tarfile.LNKTYPE, link="../outside/file"), None),
    (tinfo("d", tarfile.DIRTYPE, mode=0o755), None),
    (tinfo("d/up", tarfile.SYMTYPE, link=".."), None),
    (tinfo("d/up2", tarfile.SYMTYPE, link="up/.."), None),
    reg("d/up2/chain", b"chain\n"),
    reg("ok", b"ok\n"),
])
write_tar(add("pep706-modes.tar"), [
    reg("suid", b"#!/bin/sh\n", mode=0o4755), reg("sgid-dir-file", b"g\n", mode=0o2750),
    (tinfo("sticky", tarfile.DIRTYPE, mode=0o1777), None), reg("ro", b"ro\n", mode=0o444),
    (tinfo("fifo", tarfile.FIFOTYPE, mode=0o600), None)])
dev = tinfo("dev", tarfile.CHRTYPE)
dev.devmajor, dev.devminor = 1, 3
write_tar(add("pep706-device.tar", ["dev"]), [(dev, None), reg("ok", b"ok\n")])

# archives written by bsdtar itself, of a tree with such names
src = os.path.join(WORK, "src")
for d in ("t/sub", "t/\u00e9t\u00e9", "t/empty"):
    os.makedirs(os.path.join(src, d))
files = {"t/a.txt": b"a\n", "t/sub/b": b"b" * 3000, "t/\u00e9t\u00e9/\u65e5\u672c": b"ja\n",
         "t/exec": b"#!/bin/sh\n"}
for n in range(40 if LONG else 4):
    files["t/sub/f%03d" % n] = b"%d\n" % n
for n, data in files.items():
    with open(os.path.join(src, n), "wb") as f:
        f.write(data)
os.chmod(os.path.join(src, "t/exec"), 0o755)
os.link(os.path.join(src, "t/a.txt"), os.path.join(src, "t/sub/hard-\u00e9"))
os.symlink("../a.txt", os.path.join(src, "t/sub/sym"))
os.symlink("\u65e5\u672c", os.path.join(src, "t/\u00e9t\u00e9/sym-ja"))
for dirpath, dirnames, filenames in os.walk(src, topdown=False):
    for n in dirnames + filenames:
        os.utime(os.path.join(dirpath, n), (MTIME, MTIME), follow_symlinks=False)
formats = ["pax", "gnutar", "newc", "zip"] + (["ustar", "cpio", "7zip", "iso9660"] if LONG else [])
if shutil.which("bsdtar"):
    for fmt in formats:
        out = add("bsdtar-%s.%s" % (fmt, {"zip": "zip", "7zip": "7z", "iso9660": "iso"}.get(fmt, "ar")))
        subprocess.run(["bsdtar", "--format", fmt, "-cf", out, "-C", src, "t"], check=True,
                       env=dict(os.environ, LC_ALL="C.UTF-8"))

# ---------------------------------------------------------------- the runs
os.makedirs(os.path.join(OUTSIDE, "dir"))
with open(os.path.join(OUTSIDE, "file"), "w") as f:
    f.write("sentinel\n")
outside_before = manifest(OUTSIDE)


def run(argv, cwd, env_locale):
    env = dict(os.environ, LC_ALL=env_locale)
    env.pop("LANG", None)
    p = subprocess.run(argv, cwd=cwd, env=env, capture_output=True)
    return p.returncode, p.stderr.decode("utf-8", "backslashreplace")


RECENT = time.time_ns() - 86400 * 10**9


def same_dirs(lines):
    """Directories that an archive does not list are made by both tools with
    the time of the extraction: their mtimes are left out."""
    out = []
    for l in lines:
        f = l.split(" ")
        if f[1] == "d" and int(f[4]) > RECENT:
            f[4] = "(now)"
        out.append(" ".join(f))
    return out


def strip_lines(lines, names):
    """The manifest lines not of these names (their leading '/' stripped, as
    bsdtar stores them) or of anything beneath them."""
    keys = [n.lstrip("/") for n in names]
    kept = []
    for l in lines:
        path = ast.literal_eval(l.split(" ", 1)[0])
        if not any(path == k or path.startswith(k + "/") for k in keys):
            kept.append(l)
    return kept


n = 0
for name, refused in corpus:
    arc = os.path.join(CORPUS, name)
    locales = ["C", "C.UTF-8"] if name.startswith(("names-", "bsdtar-")) else ["C.UTF-8"]
    # bsdtar, the reference, runs in C.UTF-8 whatever safeopen's locale: once
    # an archive
    theirs = os.path.join(WORK, "b%d" % (n + 1))
    os.mkdir(theirs)
    brc, berr = run(["bsdtar", "-xf", arc, "-C", theirs], WORK, "C.UTF-8")
    m_bsdtar = same_dirs(manifest(theirs, {"--no-root", "--owners"}))
    for loc in locales:
        n += 1
        ours = os.path.join(WORK, "o%d" % n)
        os.mkdir(ours)
        rc, err = run([SAFEOPEN, ours, "extract", arc], WORK, loc)
        m_ours = same_dirs(manifest(ours, {"--no-root", "--owners"}))
        m_theirs = m_bsdtar
        what = "%s (LC_ALL=%s)" % (name, loc)
        problems = []
        if manifest(OUTSIDE) != outside_before:
            problems.append("the tree outside DEST changed")
        if refused is None:
            if rc != brc:
                problems.append("exit %d, bsdtar %d" % (rc, brc))
        else:
            if rc != 1:
                problems.append("exit %d, expected 1" % rc)
            for r in refused:
                if not any(l.startswith("safeopen: extract: %s: " % r) for l in err.splitlines()):
                    problems.append("no message naming %s" % r)
            m_theirs = strip_lines(m_theirs, refused)
            if strip_lines(m_ours, refused) != m_ours:
                problems.append("a refused entry exists")
        if m_ours != m_theirs:
            diff = sorted(set(m_ours) ^ set(m_theirs))[:4]
            problems.append("tree differs from bsdtar's: " + " | ".join(
                ("ours: " if l in m_ours else "bsdtar: ") + l for l in diff))
        if problems:
            checks.append((False, what, problems + ["stderr: " + err.strip()[:300],
                                                    "bsdtar: " + berr.strip()[:200]]))
        else:
            checks.append((True, "%s: %s (%d objects, exit %d)" % (
                what, "as bsdtar" if refused is None else
                "refuses %s, the rest as bsdtar" % ", ".join(refused), len(m_ours), rc), []))

for i, (good, what, details) in enumerate(checks, 1):
    print("%s %d - %s" % ("ok" if good else "not ok", i, what))
    for d in details:
        print("#   " + d)
sys.exit(0 if all(c[0] for c in checks) else 1)
