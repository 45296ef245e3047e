# SPDX-License-Identifier: MIT
"""Cookbook (doc/cookbook.md, "Python: send_file and an upload handler"):
serve and store files named by URLs beneath a root with safeopen, as a
WSGI application (no framework needed; the two functions drop into a Flask
or Django view as they are).

    python3 webfiles.py ROOT [PORT]     # GET serves, PUT stores (wsgiref)
"""
import errno
import hashlib
import http
import os
import stat
import sys
import urllib.parse

import safeopen


def status_line(code):
    return "%d %s" % (code, http.HTTPStatus(code).phrase)


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
        return status_line(400), [], None
    try:
        f = safeopen.open_beneath(root, path, "rb", flags=os.O_NONBLOCK | os.O_NOCTTY,
                                  resolve=safeopen.RESOLVE_IN_ROOT |
                                  safeopen.RESOLVE_NO_MAGICLINKS)
    except IsADirectoryError:  # not a regular file: as a FIFO below
        return status_line(403), [], None
    except OSError as e:  # the one rule: 404 not here, 403 refused (an escape), ...
        return status_line(safeopen.http_status(e)), [], None
    st = os.fstat(f.fileno())  # what we checked is what we send: same open file
    if not stat.S_ISREG(st.st_mode):
        f.close()
        return status_line(403), [], None
    return status_line(200), [("Content-Length", str(st.st_size)),
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
            except ValueError:
                start_response(status_line(400), [])
                return [b""]
            except OSError as e:
                start_response(status_line(safeopen.http_status(e)), [])
                return [b""]
            start_response(status_line(201), [("Content-Type", "text/plain")])
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
