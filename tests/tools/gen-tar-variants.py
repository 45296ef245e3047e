#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Generate the tar variants of tests/tools/test-extract-reader.sh, which extracts
each of them with the built-in tar reader of `safeopen extract` (default
reading, tools/safeopen/tarfast.c) and with libarchive alone, and compares.

    gen-tar-variants.py python TREE OUTDIR PREFIX [--gnu-ustar-builtin]
        python's tarfile writers over TREE: PREFIX-py-gnu.tar, -py-ustar.tar,
        -py-pax.tar, -py-pax-global.tar (a 'g' header first, as git archive);
        a writer that fails on TREE (ustar: too long names) writes nothing
    gen-tar-variants.py crafted OUTDIR
        hand-made header groups, one archive NAME.tar each (raw 512-byte
        blocks; hdr() computes the checksum)
    gen-tar-variants.py damage ARCHIVE OUTDIR SEED
        ARCHIVE truncated at ~40 offsets (trunc-*.tar) and 150 seeded variants
        with 1-4 bytes changed inside header blocks (flip-*.tar)
    gen-tar-variants.py manifest LIST MANIFEST_SCRIPT T0
        each line of LIST is "OUT DIR [OPTION...]": run MANIFEST_SCRIPT
        (tests/tools/tree-manifest.py) on DIR with the options, in this process,
        writing OUT, then a line "atime PATH NS" for each object beneath DIR
        (taken before the manifest reads them); an mtime or atime in [T0,
        T0 + 1 hour] (ns) is written "now" (an object whose time the archive
        does not give: a directory the extraction made without an entry of
        its own, the access time of most entries). Not as
        root, what the user cannot read (an entry of mode 0000) is made
        readable first, and the manifest shows the mode it had; a tree that
        still cannot be read writes the error, so that both sides compare
"""
import io
import os
import random
import re
import runpy
import sys
import tarfile

BLOCK = 512
MTIME = 1234567890

# ------------------------------------------------------------------ raw headers


def octal(v, n):
    """A numeric field of n bytes: n-1 octal digits and a NUL."""
    return b"%0*o\0" % (n - 1, v)


def put(h, off, data):
    h[off:off + len(data)] = data


def hdr(name, type=b"0", size=0, mode=0o644, uid=0, gid=0, mtime=MTIME, link=b"",
        magic="gnu", prefix=b"", devmajor=None, devminor=None, fields=None, chk="unsigned"):
    """One header block. name/link/prefix: bytes or str (utf-8). fields:
    {offset: bytes} written over the block before the checksum (raw fields:
    base-256, garbage, ...). chk: "unsigned" (what writers do), "signed" (the
    sum of the bytes as signed chars), "bad" (off by one), or bytes for the
    field as is."""
    enc = lambda s: s.encode() if isinstance(s, str) else s
    h = bytearray(BLOCK)
    put(h, 0, enc(name)[:100])
    put(h, 100, octal(mode, 8))
    put(h, 108, octal(uid, 8))
    put(h, 116, octal(gid, 8))
    put(h, 124, octal(size, 12))
    put(h, 136, octal(mtime, 12))
    h[156:157] = type
    put(h, 157, enc(link)[:100])
    if magic == "gnu":
        put(h, 257, b"ustar  \0")
    elif magic == "ustar":
        put(h, 257, b"ustar\x0000")
        put(h, 345, enc(prefix)[:155])
    elif magic != "v7":
        put(h, 257, magic)
    if magic != "v7":
        put(h, 265, b"root")
        put(h, 297, b"root")
        if devmajor is not None:
            put(h, 329, octal(devmajor, 8))
            put(h, 337, octal(devminor, 8))
    for off, data in (fields or {}).items():
        put(h, off, data)
    put(h, 148, b" " * 8)
    if isinstance(chk, bytes):
        put(h, 148, chk)
        return bytes(h)
    if chk == "signed":
        s = sum(b - 256 if b >= 128 else b for b in h)
    else:
        s = sum(h)
    if chk == "bad":
        s += 1
    put(h, 148, b"%06o\0 " % (s & 0o777777))
    return bytes(h)


def body(data):
    data = data.encode() if isinstance(data, str) else data
    return data + b"\0" * (-len(data) % BLOCK)


def reg(name, data=b"", **kw):
    data = data.encode() if isinstance(data, str) else data
    return hdr(name, size=len(data), **kw) + body(data)


def long_entry(type, text, magic="gnu", size=None):
    """A GNU 'L' or 'K' header and its body (text and a NUL)."""
    data = (text.encode() if isinstance(text, str) else text) + b"\0"
    return hdr("././@LongLink", type=type, size=len(data) if size is None else size,
               magic=magic) + body(data)


def pax(type, records):
    data = b""
    for k, v in records:
        v = v.encode() if isinstance(v, str) else v
        rec = b" %s=%s\n" % (k.encode(), v)
        n = len(rec)
        while len(b"%d" % n) + len(rec) != n:
            n = len(b"%d" % n) + len(rec)
        data += b"%d" % n + rec
    return hdr("PaxHeader/x", type=type, size=len(data), magic="ustar") + body(data)


END = b"\0" * 1024
BEFORE = reg("before", "before\n")
AFTER = reg("after", "after\n")


def around(*middle):
    """A file before and after the header group under test, then the end."""
    return BEFORE + b"".join(middle) + AFTER + END


def crafted():
    c = {}
    long100 = "n" * 100
    # GNU long names and links
    c["L-K-symlink"] = around(long_entry(b"L", "d/" + "l" * 150),
                              long_entry(b"K", "t" * 150), hdr("x", type=b"2", link="x"))
    c["L-K-hardlink"] = around(long_entry(b"L", "h" * 120), long_entry(b"K", "before"),
                               hdr("x", type=b"1", link="x"))
    c["L-L"] = around(long_entry(b"L", "first" * 30), long_entry(b"L", "second" * 30),
                      reg("x", "data\n"))
    c["K-K-symlink"] = around(long_entry(b"K", "k1" * 60), long_entry(b"K", "k2" * 60),
                              hdr("s", type=b"2", link="x"))
    c["L-ustar-magic"] = around(long_entry(b"L", "u" * 130, magic="ustar"), reg("x", "d\n"))
    c["L-v7-magic"] = around(long_entry(b"L", "v" * 130, magic="v7"), reg("x", "d\n"))
    c["L-size0"] = around(hdr("././@LongLink", type=b"L", size=0), reg("x", "d\n"))
    c["L-then-end"] = BEFORE + long_entry(b"L", "e" * 130) + END
    c["L-then-eof"] = BEFORE + long_entry(b"L", "e" * 130)
    c["K-before-file"] = around(long_entry(b"K", "k" * 130), reg("x", "d\n"))
    c["K-before-dir"] = around(long_entry(b"K", "k" * 130), hdr("kd", type=b"5", mode=0o755))
    c["L-no-nul"] = around(hdr("././@LongLink", type=b"L", size=512) + (b"z" * 99 + b"/") * 5 + b"z" * 12,
                           reg("x", "d\n"))
    c["L-nul-inside"] = around(hdr("././@LongLink", type=b"L", size=300) +
                               body(b"a" * 120 + b"\0" + b"b" * 179), reg("x", "d\n"))
    c["L-slash-dir"] = around(long_entry(b"L", "ld" * 60 + "/"), hdr("x", type=b"0", mode=0o755))
    c["L-65536"] = around(hdr("././@LongLink", type=b"L", size=65536) +
                          body(b"m" * 200 + b"\0" * (65536 - 200)), reg("x", "d\n"))
    c["L-65537"] = around(hdr("././@LongLink", type=b"L", size=65537) +
                          body(b"m" * 200 + b"\0" * (65537 - 200)), reg("x", "d\n"))
    c["L-for-dot-dot"] = around(long_entry(b"L", "../" + "evil" * 30), reg("x", "d\n"))
    c["K-L-symlink"] = around(long_entry(b"K", "t" * 150), long_entry(b"L", "kl" * 70),
                              hdr("x", type=b"2", link="x"))
    c["L-empty-header-name"] = around(long_entry(b"L", "from-L"), reg("", "d\n"))
    c["L-just-nul"] = around(long_entry(b"L", ""), reg("x", "d\n"))
    # names and prefixes
    c["name-100-no-nul"] = around(reg(long100, "d\n", magic="ustar"),
                                  hdr("s", type=b"2", link="l" * 100, magic="ustar"))
    c["ustar-prefix-slash"] = around(reg("c", "d\n", magic="ustar", prefix="a/b/"))
    c["ustar-prefix-noslash"] = around(reg("c", "d\n", magic="ustar", prefix="a/b"))
    c["ustar-prefix-155"] = around(reg(long100, "d\n", magic="ustar", prefix="p" * 155))
    c["ustar-prefix-empty-name"] = around(hdr("", magic="ustar", prefix="pd", mode=0o755))
    c["ustar-prefix-dot"] = around(reg("f", "d\n", magic="ustar", prefix="."))
    c["gnu-prefix-area-times"] = around(reg("t", "d\n", fields={345: octal(MTIME + 5, 12),
                                                               357: octal(MTIME + 9, 12)}))
    c["empty-name"] = around(reg("", "d\n"))
    c["dot-entries"] = around(hdr("./", type=b"5", mode=0o750), hdr(".", type=b"5", mode=0o700),
                              reg("./a//b", "d\n"), reg("a/./c", "e\n"))
    c["absolute-name"] = around(reg("/abs", "d\n"))
    c["utf8-and-latin1"] = around(reg("caf\u00e9", "d\n"), reg(b"caf\xe9", "e\n"))
    c["duplicate"] = around(reg("f", "one\n"), reg("f", "two\n"), hdr("f", type=b"5"),
                            hdr("f", type=b"2", link="x"))
    # numbers
    c["base256-size"] = around(reg("x", "d\n", fields={124: b"\x80" + b"\0" * 10 + b"\x02"}))
    c["base256-uid"] = around(reg("x", "d\n", fields={108: b"\x80\0\0\0\0\0\x03\xe8"}))
    c["base256-mtime"] = around(reg("x", "d\n", fields={136: b"\x80" + b"\0" * 7 + b"\x49\x96\x02\xd2"}))
    c["negative-mtime"] = around(reg("x", "d\n", fields={136: b"-0000000001\0"}))
    c["negative-size"] = around(reg("x", "d\n", fields={124: b"-0000000003\0"}))
    c["octal-leading-spaces"] = around(reg("x", "d\n", fields={100: b"   644 \0", 124: b"      3\0\0\0\0\0"}))
    c["octal-tab"] = around(reg("x", "d\n", fields={100: b"\t0000644"}))
    c["octal-garbage-after-nul"] = around(reg("x", "d\n", fields={100: b"000644\0X"}))
    c["size-garbage-after-nul"] = around(reg("x", "dd\n", fields={124: b"00000000003\0"[:8] + b"\0ZZZ"}))
    c["mtime-garbage"] = around(reg("x", "d\n", fields={136: b"1234567q0123"}))
    c["octal-no-terminator"] = around(reg("x", "d\n", fields={100: b"00000644", 124: b"000000000002",
                                                              136: b"%012o" % MTIME}))
    c["octal-8-and-9"] = around(reg("x", "d\n", fields={100: b"0000648\0"}))
    c["fields-all-spaces"] = around(reg("x", "", fields={108: b" " * 8, 116: b" " * 8, 124: b" " * 12}))
    c["fields-all-nul"] = around(reg("x", "", fields={108: b"\0" * 8, 124: b"\0" * 12, 136: b"\0" * 12}))
    c["mode-with-type-bits"] = around(reg("r", "d\n", mode=0o40755),
                                      hdr("h", type=b"1", link="r", mode=0o120777),
                                      hdr("dd", type=b"5", mode=0o100644),
                                      hdr("sl", type=b"2", link="r", mode=0o060644))
    c["huge-size-last"] = BEFORE + reg("huge", "h\n", fields={124: b"77777777777\0"}) + END
    c["size-past-end"] = BEFORE + reg("past", "p\n", fields={124: octal(5000, 12)}) + END
    c["mtime-max-12-digits"] = around(reg("x", "d\n", fields={136: b"777777777777"}))
    c["uid-gid-8-digits"] = around(reg("x", "d\n", fields={108: b"77777777", 116: b"00001750"}))
    c["gnu-atime-ctime-spaces"] = around(reg("t", "d\n", fields={345: b"  %o \0" % (MTIME + 7),
                                                                 357: b"%011o\0" % (MTIME + 8)}))
    c["gnu-atime-garbage"] = around(reg("t", "d\n", fields={345: b"12345678901X"}))
    c["v7-dir-symlink-hardlink"] = around(hdr("vd", type=b"5", magic="v7", mode=0o755),
                                          hdr("vs", type=b"2", link="vd", magic="v7"),
                                          hdr("vh", type=b"1", link="before", magic="v7"))
    c["dir-without-slash-and-symlink-slash"] = around(hdr("dn", type=b"5", mode=0o700),
                                                      hdr("sl/", type=b"2", link="before"))
    c["hardlink-to-itself"] = around(hdr("self", type=b"1", link="self"))
    c["mode-7777-and-0"] = around(reg("m7", "d\n", mode=0o7777), reg("m0", "e\n", mode=0))
    # checksums
    c["chk-signed"] = around(reg(b"sig\xe9\xff", "d\n", chk="signed"))
    c["chk-signed-equals-unsigned"] = around(reg("plain", "d\n", chk="signed"))
    c["chk-bad-middle"] = BEFORE + reg("bad", "d\n", chk="bad") + AFTER + END
    c["chk-leading-spaces"] = around(reg("x", "d\n"))  # rewritten below
    c["chk-garbage-after-nul"] = around(reg("x", "d\n"))  # rewritten below
    c["chk-7-digits"] = around(reg("x", "d\n"))  # rewritten below
    # type flags
    c["type-3-chr"] = around(hdr("null", type=b"3", mode=0o666, magic="ustar", devmajor=1, devminor=3))
    c["type-4-blk"] = around(hdr("loop", type=b"4", mode=0o660, magic="ustar", devmajor=7, devminor=0))
    c["type-6-fifo"] = around(hdr("fifo", type=b"6", mode=0o644))
    sparse = bytearray(hdr("sp", type=b"S", size=512, fields={
        386: octal(1024, 12) + octal(512, 12), 482: b"\0", 483: octal(2048, 12)}))
    c["type-S-sparse"] = around(bytes(sparse) + body(b"s" * 512))
    c["type-V-volume"] = hdr("volume label", type=b"V") + around()
    c["type-V-middle"] = around(hdr("vol", type=b"V"))
    c["type-M-multivolume"] = around(hdr("mv", type=b"M", size=10, fields={369: octal(100, 12)}) +
                                     body("0123456789"))
    c["type-N-oldlongname"] = around(hdr("n", type=b"N", size=40) + body("Symlink a to b\n" * 2))
    c["type-D-dumpdir"] = around(hdr("dump", type=b"D", size=12, mode=0o755) + body(b"Yfile\0Nnot\0\0"))
    c["type-x-pax"] = around(pax(b"x", [("path", "renamed"), ("mtime", "1234567891.5")]), reg("x", "d\n"))
    c["type-x-first"] = pax(b"x", [("path", "renamed")]) + reg("x", "d\n") + AFTER + END
    c["type-g-global"] = pax(b"g", [("comment", "abc" * 14)]) + BEFORE + AFTER + END
    c["type-g-middle"] = around(pax(b"g", [("mtime", "1000000000")]), reg("x", "d\n"))
    c["type-A-solaris-acl"] = around(hdr("acl", type=b"A", size=40) +
                                     body(b"01000010\0user::rw-,group::r--,other::r--\0"),
                                     reg("x", "d\n"))
    c["type-Q-unknown"] = around(reg("q", "unknown\n", type=b"Q"))
    c["type-7-contiguous"] = around(reg("c7", "d\n", type=b"7"))
    c["type-nul-v7"] = around(reg("v7", "d\n", type=b"\0", magic="v7"),
                              hdr("v7dir/", type=b"\0", magic="v7", mode=0o755))
    # links and directories with data
    c["hardlink-size-ustar"] = around(hdr("h", type=b"1", link="before", size=5, magic="ustar") +
                                      body("BBBBB"))
    c["hardlink-size-gnu"] = around(hdr("h", type=b"1", link="before", size=5) + body("BBBBB"))
    c["hardlink-size-header-body"] = around(hdr("h", type=b"1", link="before", size=1024) +
                                            reg("inbody", "i\n"))
    c["hardlink-size-after-pax"] = around(pax(b"x", [("comment", "c")]),
                                          hdr("h", type=b"1", link="before", size=5, magic="ustar") +
                                          body("BBBBB"))
    c["hardlink-across-handover"] = around(reg("a", "A\n"), pax(b"x", [("path", "b")]),
                                           hdr("bb", type=b"1", link="a"))
    c["hardlink-to-later"] = around(hdr("h", type=b"1", link="later"), reg("later", "l\n"))
    c["hardlink-to-dir"] = around(hdr("d", type=b"5", mode=0o755), hdr("h", type=b"1", link="d"))
    c["hardlink-empty-target"] = around(hdr("h", type=b"1", link=""))
    c["symlink-empty-target"] = around(hdr("s", type=b"2", link=""))
    c["symlink-size-body"] = around(hdr("s", type=b"2", link="before", size=1024) +
                                    reg("inbody", "i\n"))
    c["dir-size-body"] = around(hdr("d", type=b"5", size=1024, mode=0o755) + reg("inbody", "i\n"))
    c["dir-size-data"] = around(hdr("d", type=b"5", size=5, mode=0o755) + body("DDDDD"))
    c["file-slash-size0"] = around(hdr("sd/", type=b"0", mode=0o711))
    c["file-slash-size5"] = around(hdr("sd/", type=b"0", size=5, mode=0o711) + body("SSSSS"))
    c["file-with-linkname"] = around(reg("f", "d\n", link="ignored"))
    c["symlink-dotdot-inside"] = around(hdr("d", type=b"5", mode=0o755), hdr("s", type=b"2", link="d/../before"))
    # escapes (refused by both; nothing outside DEST: the test checks its sentinel)
    c["escape-hardlink-dotdot-x"] = around(hdr("h", type=b"1", link="../x"))
    c["escape-hardlink-outside"] = around(hdr("h", type=b"1", link="../outside/file"))
    c["escape-file-dotdot-evil"] = around(reg("../evil", "evil\n"))
    c["escape-file-outside"] = around(reg("../outside/evil", "evil\n"))
    c["escape-symlink-then-file"] = around(hdr("s", type=b"2", link="../outside"), reg("s/evil", "e\n"))
    # the end of the archive
    c["garbage-after-end"] = BEFORE + END + bytes(random.Random(7).randrange(256) for _ in range(1500))
    c["header-after-end"] = BEFORE + END + reg("ghost", "g\n") + END
    c["one-zero-block-eof"] = BEFORE + b"\0" * BLOCK
    c["one-zero-block-then-header"] = BEFORE + b"\0" * BLOCK + reg("ghost", "g\n") + END
    c["no-end-marker"] = BEFORE + AFTER
    c["short-last-block"] = BEFORE + AFTER[:700]
    c["empty"] = b""
    c["only-end"] = END
    c["partial-zero-block"] = BEFORE + b"\0" * 100
    # GNU sparse fields on a plain file
    c["gnu-realsize-same"] = around(reg("r", "d\n", fields={483: octal(2, 12)}))
    c["gnu-realsize-larger"] = around(reg("r", "d\n", fields={483: octal(700, 12)}))
    c["gnu-realsize-smaller"] = around(reg("r", "dd\n", fields={483: octal(1, 12)}))
    c["gnu-realsize-dir"] = around(hdr("rd", type=b"5", mode=0o755, fields={483: octal(600, 12)}))
    c["gnu-sparse-map"] = around(reg("r", "d\n", fields={386: octal(0, 12) + octal(2, 12)}))
    c["gnu-sparse-map-hole"] = around(reg("r", "d\n", fields={386: octal(100, 12) + octal(2, 12),
                                                              483: octal(102, 12)}))
    c["gnu-isextended"] = around(reg("r", "d\n", fields={482: b"\1"}))
    # magic and version
    c["magic-ustar-spaces"] = around(reg("x", "d\n", magic=b"ustar\0  "))
    c["magic-ustar-no-version"] = around(reg("x", "d\n", magic=b"ustar\0\0\0"))
    c["magic-garbage"] = around(reg("x", "d\n", magic=b"garbage!"))
    c["first-devmajor-garbage"] = reg("x", "d\n", magic="ustar", fields={329: b"garbage!"}) + AFTER + END
    c["middle-devmajor-garbage"] = around(reg("x", "d\n", magic="ustar", fields={329: b"garbage!"}))
    c["first-mode-garbage"] = reg("x", "d\n", fields={100: b"zzzzzzz\0"}) + AFTER + END
    c["first-name-PK"] = reg(b"PK\x03\x04zip", "d\n") + AFTER + END
    c["first-name-gzip"] = reg(b"\x1f\x8b\x08gz", "d\n") + AFTER + END
    c["first-name-bzip2"] = reg(b"BZh91AY&SY", "d\n") + AFTER + END
    c["first-name-cpio"] = reg(b"070701", "d\n") + AFTER + END
    # the buffer (128 KiB reads): a header group across a read boundary, the
    # hand-over far into the stream
    pad = 131072 - 3 * BLOCK
    c["L-across-chunk"] = around(reg("big", b"b" * (pad - BLOCK)), long_entry(b"L", ("c" * 99 + "/") * 6 + "c" * 99),
                                 reg("x", "d\n"))
    c["pax-after-big"] = around(reg("big", bytes(range(256)) * 1200), pax(b"x", [("path", "p")]),
                                reg("x", "d\n"), reg("y", "e\n"))
    # pax extended headers: what the built-in reader takes (path, linkpath,
    # size, uid, gid, times, names, comment) and what it must hand over
    def raw_pax(data):
        return hdr("PaxHeader/x", type=b"x", size=len(data), magic="ustar") + body(data)
    ureg = lambda name, data=b"", **kw: reg(name, data, magic="ustar", **kw)
    uhdr = lambda name, **kw: hdr(name, magic="ustar", **kw)
    PX = [
        ("pax-path-link", [("path", "p/renamed")], ureg("x", "d\n")),
        ("pax-path-empty", [("path", "")], ureg("x", "d\n")),
        ("pax-path-utf8", [("path", "caf\u00e9")], ureg("x", "d\n")),
        ("pax-path-latin1", [("path", b"caf\xe9")], ureg("x", "d\n")),
        ("pax-path-control", [("path", "a\tb")], ureg("x", "d\n")),
        ("pax-path-twice", [("path", "one"), ("path", "two")], ureg("x", "d\n")),
        ("pax-path-dir-slash", [("path", "pd/")], ureg("x", "")),
        ("pax-path-dir-slash-data", [("path", "pd/")], ureg("x", "data\n")),
        ("pax-linkpath-symlink", [("linkpath", "before")], uhdr("s", type=b"2", link="zzz")),
        ("pax-linkpath-hardlink", [("linkpath", "before")], uhdr("h", type=b"1", link="zzz")),
        ("pax-linkpath-regular", [("linkpath", "before")], ureg("x", "d\n")),
        ("pax-size-larger", [("size", "600")], ureg("x", "d\n") + body(b"q" * 600)),
        ("pax-size-smaller", [("size", "1")], ureg("x", "dd\n")),
        ("pax-size-on-dir", [("size", "512")], uhdr("pd", type=b"5", mode=0o755) + body(b"z" * 512)),
        ("pax-size-on-hardlink", [("size", "5")], uhdr("h", type=b"1", link="before") + body("BBBBB")),
        ("pax-size-negative", [("size", "-1")], ureg("x", "d\n")),
        ("pax-uid-gid", [("uid", "4242"), ("gid", "4343")], ureg("x", "d\n")),
        ("pax-uid-huge", [("uid", "99999999999")], ureg("x", "d\n")),
        ("pax-uid-space", [("uid", " 12")], ureg("x", "d\n")),
        ("pax-mtime-frac", [("mtime", "1234567890.123456789")], ureg("x", "d\n")),
        ("pax-mtime-frac-long", [("mtime", "1234567890.1234567891234")], ureg("x", "d\n")),
        ("pax-mtime-frac-short", [("mtime", "1234567890.5")], ureg("x", "d\n")),
        ("pax-mtime-dot", [("mtime", "1234567890.")], ureg("x", "d\n")),
        ("pax-mtime-negative", [("mtime", "-1234.5")], ureg("x", "d\n")),
        ("pax-mtime-garbage", [("mtime", "12x")], ureg("x", "d\n")),
        ("pax-atime", [("atime", "1000000000.25")], ureg("x", "d\n")),
        ("pax-ctime", [("ctime", "1000000000.25")], ureg("x", "d\n")),
        ("pax-uname", [("uname", "someone"), ("gname", "group")], ureg("x", "d\n")),
        ("pax-uname-utf8", [("uname", "\u00e9")], ureg("x", "d\n")),
        ("pax-comment-charset", [("comment", "any text\nwith lines"), ("charset", "x")],
         ureg("x", "d\n")),
        ("pax-hdrcharset", [("hdrcharset", "BINARY"), ("path", b"caf\xe9")], ureg("x", "d\n")),
        ("pax-xattr", [("SCHILY.xattr.user.a", "v")], ureg("x", "d\n")),
        ("pax-unknown-key", [("VENDOR.thing", "v")], ureg("x", "d\n")),
        ("pax-sparse-key", [("GNU.sparse.size", "10")], ureg("x", "d\n")),
        ("pax-on-gnu-header", [("path", "gn")], ureg("x", "d\n")),
        ("pax-hardlink-gnu-size", [("comment", "c")],
         hdr("h", type=b"1", link="before", size=5) + body("BBBBB")),
    ]
    for name, recs, entry in PX:
        c[name] = around(pax(b"x", recs), entry)
    c["pax-on-gnu-header"] = around(pax(b"x", [("path", "gn")]), reg("x", "d\n", magic="gnu"))
    c["pax-empty-body"] = around(raw_pax(b""), reg("x", "d\n"))
    c["pax-no-newline"] = around(raw_pax(b"12 path=abc "), reg("x", "d\n"))
    c["pax-length-short"] = around(raw_pax(b"9 path=abc\n"), reg("x", "d\n"))
    c["pax-length-long"] = around(raw_pax(b"13 path=abc\n"), reg("x", "d\n"))
    c["pax-no-equals"] = around(raw_pax(b"9 pathabc\n"), reg("x", "d\n"))
    c["pax-key-empty"] = around(raw_pax(b"8 =value\n"), reg("x", "d\n"))
    c["pax-nul-padding"] = around(raw_pax(b"12 path=abc\n\0\0\0\0"), reg("x", "d\n"))
    c["pax-leading-zero-length"] = around(raw_pax(b"0013 path=ab\n"), reg("x", "d\n"))
    c["pax-two-x"] = around(pax(b"x", [("path", "one")]), pax(b"x", [("path", "two")]),
                            reg("x", "d\n"))
    c["pax-x-then-L"] = around(pax(b"x", [("path", "px")]), long_entry(b"L", "lname"),
                               reg("x", "d\n"))
    c["pax-L-then-x"] = around(long_entry(b"L", "lname"), pax(b"x", [("path", "px")]),
                               reg("x", "d\n"))
    c["pax-g-then-x"] = around(pax(b"g", [("comment", "g")]), pax(b"x", [("path", "px")]),
                               reg("x", "d\n"))
    c["pax-x-then-g"] = around(pax(b"x", [("path", "px")]), pax(b"g", [("comment", "g")]),
                               reg("x", "d\n"))
    c["pax-many-g"] = around(*([pax(b"g", [("comment", "g")])] * 12), reg("x", "d\n"))
    c["pax-g-at-end"] = BEFORE + pax(b"g", [("comment", "g")]) + END
    # the sticky pax mode: after a 'g' or 'x', a ustar hard link with data is
    # a file with data; a GNU or v7 header ends the mode
    HL5 = hdr("h", type=b"1", link="before", size=5, magic="ustar") + body("BBBBB")
    c["pax-sticky-hardlink-data"] = around(pax(b"g", [("comment", "g")]), reg("m", "m\n"), HL5)
    c["pax-sticky-ended-by-gnu"] = around(pax(b"g", [("comment", "g")]),
                                          reg("m", "m\n", magic="gnu"), HL5)
    c["pax-sticky-ended-by-v7"] = around(pax(b"x", [("comment", "c")]), reg("m", "m\n", magic="ustar"),
                                         reg("v", "v\n", magic="v7"), HL5)
    c["pax-sticky-handover"] = around(pax(b"g", [("comment", "g")]), reg("m", "m\n"),
                                      pax(b"x", [("SCHILY.xattr.user.a", "v")]), reg("n", "n\n"), HL5)
    # checksum spellings
    def rechk(data, field):
        at = len(BEFORE)
        h = bytearray(data[at:at + BLOCK])
        put(h, 148, b" " * 8)
        put(h, 148, field(sum(h)))
        return data[:at] + bytes(h) + data[at + BLOCK:]
    c["chk-leading-spaces"] = rechk(c["chk-leading-spaces"], lambda s: b"%7o\0" % s)
    c["chk-garbage-after-nul"] = rechk(c["chk-garbage-after-nul"], lambda s: b"%06o\0X" % s)
    c["chk-7-digits"] = rechk(c["chk-7-digits"], lambda s: b"%07o\0" % s)
    return c


# ------------------------------------------------------------------ damage


def walk(data):
    """Header blocks of a tar archive (offset, size, type), in order, up to
    the end marker."""
    out, off = [], 0
    while off + BLOCK <= len(data):
        h = data[off:off + BLOCK]
        if h == b"\0" * BLOCK:
            break
        size = int(h[124:136].split(b"\0")[0].strip() or b"0", 8)
        typ = h[156:157]
        out.append((off, size, typ))
        if typ in (b"1", b"2", b"3", b"4", b"5", b"6"):
            size = 0
        off += BLOCK + (size + BLOCK - 1) // BLOCK * BLOCK
    return out, off


def damage(archive, outdir, seed, ncuts=44, nflips=150):
    data = open(archive, "rb").read()
    heads, end = walk(data)
    rnd = random.Random(seed)
    cuts = set()
    # every kind of place, spread over the archive: a header's start, middle
    # and last byte, its data's start, middle and end, the padding, the end
    # marker
    step = max(1, len(heads) // 8)
    for off, size, typ in heads[::step] + heads[-2:]:
        cuts.update((off, off + 1, off + 256, off + 511))
        if size and typ not in (b"1", b"2", b"5"):
            d = off + BLOCK
            cuts.update((d, d + size // 2, d + size))
            if size % BLOCK:
                cuts.add(d + size + (BLOCK - size % BLOCK) // 2)
    cuts.update((end, end + 100, end + BLOCK, end + 1000, 0, 100))
    cuts = sorted(c for c in cuts if c < len(data))
    if len(cuts) > ncuts:
        cuts = sorted(rnd.sample(cuts, ncuts))
    for c in cuts:
        with open(os.path.join(outdir, "trunc-%07d.tar" % c), "wb") as f:
            f.write(data[:c])
    # byte changes inside header blocks: anywhere in the block or in its
    # fields that decide the reading; the values that change its meaning;
    # every other variant with its checksum made valid again (so that the
    # header is read, not refused on its sum)
    fields = [(0, 100), (100, 8), (124, 12), (136, 12), (148, 8), (156, 1), (157, 100),
              (257, 8), (329, 16), (345, 155), (386, 24), (482, 13)]
    values = b"\0 /01234567\x80\xffLKSxgV5-."
    for i in range(nflips):
        h_off = rnd.choice(heads)[0]
        v = bytearray(data)
        what = []
        for _ in range(rnd.randint(1, 4)):
            if rnd.random() < 0.4:
                at = rnd.randrange(BLOCK)
            else:
                fo, fl = rnd.choice(fields)
                at = fo + rnd.randrange(fl)
            b = rnd.choice(values) if rnd.random() < 0.7 else rnd.randrange(256)
            v[h_off + at] = b
            what.append("%d=%02x" % (at, b))
        fix = i % 2 == 0
        if fix:
            h = v[h_off:h_off + BLOCK]
            put(h, 148, b" " * 8)
            put(h, 148, b"%06o\0 " % (sum(h) & 0o777777))
            v[h_off:h_off + BLOCK] = h
        name = "flip-%03d-at%d-%s%s.tar" % (i, h_off, "+".join(what), "-chk" if fix else "")
        with open(os.path.join(outdir, name), "wb") as f:
            f.write(bytes(v))


# ------------------------------------------------------------------ python writers


def python_writers(tree, outdir, prefix):
    def write(fmt, suffix, **kw):
        path = os.path.join(outdir, "%s-py-%s.tar" % (prefix, suffix))
        try:
            with tarfile.open(path, "w", format=fmt, **kw) as tf:
                tf.add(tree, arcname=".")
        except ValueError:  # ustar: a name or link too long
            os.unlink(path)
    write(tarfile.GNU_FORMAT, "gnu")
    write(tarfile.USTAR_FORMAT, "ustar")
    write(tarfile.PAX_FORMAT, "pax")
    write(tarfile.PAX_FORMAT, "pax-global",
          pax_headers={"comment": "4b825dc642cb6eb9a060e54bf8d69288fbee4904"})


# ------------------------------------------------------------------ manifests


class ModeStat:
    """A stat result with the mode an object had before readable() made it
    readable."""
    def __init__(self, st, mode):
        self._st, self.st_mode = st, mode

    def __getattr__(self, name):
        return getattr(self._st, name)


def readable(top, saved):
    """Give the user read (and search) permission on every file (directory)
    beneath top that lacks it, as an ordinary user needs to read a tree
    extracted with modes such as 0000; saved[path] = the mode it had."""
    st = os.lstat(top)
    mode = st.st_mode
    want = 0o500 if os.path.isdir(top) and not os.path.islink(top) else 0o400
    if not os.path.islink(top) and (mode & want) != want:
        os.chmod(top, (mode & 0o7777) | want)
        saved[os.path.normpath(top)] = mode
    if want == 0o500:
        for n in os.listdir(top):
            readable(os.path.join(top, n), saved)


def manifests(listfile, script, t0):
    lo, hi = t0, t0 + 3600 * 10**9
    mt = re.compile(rb"(?<= )(\d{19})(?=[ \n])")
    sub = lambda m: b"now" if lo <= int(m.group(1)) <= hi else m.group(1)
    real_stdout = sys.stdout
    real_lstat = os.lstat
    saved = {}

    def lstat(path, *a, **kw):
        st = real_lstat(path, *a, **kw)
        mode = saved.get(os.path.normpath(path)) if saved else None
        return st if mode is None else ModeStat(st, mode)
    for line in open(listfile):
        args = line.split()
        if not args:
            continue
        out, argv = args[0], args[1:]
        buf = io.StringIO()
        # the access times first (reading a file or a directory for the
        # manifest may move them): the extraction restores those the
        # archive has
        atimes = []
        for dirpath, dirnames, filenames in os.walk(argv[0]):
            for n in dirnames + filenames:
                p = os.path.join(dirpath, n)
                try:
                    atimes.append("atime %s %d\n" % (ascii(os.path.relpath(p, argv[0])),
                                                      os.lstat(p).st_atime_ns))
                except OSError:
                    pass
        saved.clear()
        if os.geteuid() != 0:
            try:
                readable(argv[0], saved)
            except OSError:
                pass
        sys.argv = [script] + argv
        sys.stdout = buf
        os.lstat = lstat
        try:
            runpy.run_path(script, run_name="__main__")
        except (OSError, SystemExit) as e:
            buf.write("error: %s\n" % str(e).replace(argv[0], "DEST"))
        finally:
            sys.stdout = real_stdout
            os.lstat = real_lstat
        with open(out, "wb") as f:
            f.write(mt.sub(sub, (buf.getvalue() + "".join(sorted(atimes))).encode()))


def main():
    cmd = sys.argv[1]
    if cmd == "python":
        python_writers(sys.argv[2], sys.argv[3], sys.argv[4])
    elif cmd == "crafted":
        os.makedirs(sys.argv[2], exist_ok=True)
        for name, data in crafted().items():
            with open(os.path.join(sys.argv[2], name + ".tar"), "wb") as f:
                f.write(data)
    elif cmd == "damage":
        os.makedirs(sys.argv[3], exist_ok=True)
        damage(sys.argv[2], sys.argv[3], int(sys.argv[4]), *map(int, sys.argv[5:7]))
    elif cmd == "manifest":
        manifests(sys.argv[2], sys.argv[3], int(sys.argv[4]))
    else:
        sys.exit("gen-tar-variants.py: unknown command %s" % cmd)


if __name__ == "__main__":
    main()
