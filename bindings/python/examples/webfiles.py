# SPDX-License-Identifier: MIT
"""Cookbook (doc/cookbook.md, "Python: send_file and an upload handler"):
serve and store files named by URLs beneath a root with safeopen, as a
WSGI application (no framework needed; the two functions drop into a Flask
or Django view as they are).

    python3 webfiles.py ROOT [PORT]     # GET serves, PUT stores (wsgiref)
"""
import errno
import hashlib
import os
import stat
import sys
import urllib.parse

import safeopen

# ENOENT, ENOTDIR, ELOOP and EXDEV (EscapeError) all mean "no such file
# here": an attack gets the answer a typo gets.
NOT_FOUND = (errno.ENOENT, errno.ENOTDIR, errno.ELOOP, errno.EXDEV)


def send_file(root, url_path):
    """Open the file url_path names beneath root, as a static-file handler.

    Returns (status, headers, file object or None). The document root is
    "/" for the client (RESOLVE_IN_ROOT: "/a", "a", "/../a" and a symlink
    to "/a" planted in the tree all name ROOT/a); magic links are refused;
    O_NONBLOCK keeps a FIFO placed in the tree from hanging the server, and
    only regular files are sent.
    """
    path = urllib.parse.unquote(url_path, errors="strict")
    if "\0" in path:
        return "400 Bad Request", [], None
    try:
        f = safeopen.open_beneath(root, path, "rb", flags=os.O_NONBLOCK | os.O_NOCTTY,
                                  resolve=safeopen.RESOLVE_IN_ROOT |
                                  safeopen.RESOLVE_NO_MAGICLINKS)
    except OSError as e:
        if e.errno in NOT_FOUND:
            return "404 Not Found", [], None
        if e.errno in (errno.EACCES, errno.EPERM, errno.EISDIR):
            return "403 Forbidden", [], None
        raise
    st = os.fstat(f.fileno())  # what we checked is what we send: same open file
    if not stat.S_ISREG(st.st_mode):
        f.close()
        return "403 Forbidden", [], None
    return "200 OK", [("Content-Length", str(st.st_size)),
                      ("Content-Type", "application/octet-stream")], f


def store_upload(root, url_path, stream, length):
    """Store length bytes of stream as url_path beneath root.

    Parents are created beneath the root only (makedirs), the file appears
    complete, with its SHA-256 in the xattr user.sha256, replacing an older
    version atomically (write_atomic); a path that leaves the root is
    EscapeError. Returns the hex digest.
    """
    path = urllib.parse.unquote(url_path, errors="strict").lstrip("/")
    if "\0" in path or not path or path.endswith("/"):
        raise ValueError("bad upload name: %r" % (url_path,))
    parent = path.rpartition("/")[0]
    if parent:
        safeopen.makedirs(root, parent, 0o755, exist_ok=True)
    data = stream.read(length)
    digest = hashlib.sha256(data).hexdigest()
    try:
        safeopen.write_atomic(root, path, data, mode=0o644,
                              xattrs={"user.sha256": digest})
    except OSError as e:
        if e.errno not in (errno.EOPNOTSUPP, errno.EPERM):  # no user xattrs here
            raise
        safeopen.write_atomic(root, path, data, mode=0o644)
    return digest


def make_app(root):
    """A WSGI application: GET sends, PUT stores, beneath root (a Root)."""
    def app(environ, start_response):
        url = environ.get("PATH_INFO", "/")
        if environ["REQUEST_METHOD"] == "PUT":
            try:
                n = int(environ.get("CONTENT_LENGTH") or 0)
                digest = store_upload(root, url, environ["wsgi.input"], n)
            except (ValueError, safeopen.EscapeError, NotADirectoryError,
                    FileExistsError, IsADirectoryError):
                start_response("403 Forbidden", [])
                return [b""]
            start_response("201 Created", [("Content-Type", "text/plain")])
            return [digest.encode() + b"\n"]
        status, headers, f = send_file(root, url)
        start_response(status, headers)
        if f is None:
            return [b""]
        wrapper = environ.get("wsgi.file_wrapper")
        return wrapper(f, 65536) if wrapper else _chunks(f)
    return app


def _chunks(f):
    with f:
        while True:
            chunk = f.read(65536)
            if not chunk:
                return
            yield chunk


if __name__ == "__main__":
    from wsgiref.simple_server import make_server
    with safeopen.Root(sys.argv[1]) as r:
        make_server("127.0.0.1", int(sys.argv[2]) if len(sys.argv) > 2 else 8000,
                    make_app(r)).serve_forever()
