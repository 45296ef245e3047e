# SPDX-License-Identifier: MIT
"""The Python recipe of doc/cookbook.md (bindings/python/examples/webfiles.py)
against a hostile tree: what it serves and stores, and that nothing outside
the root is read or written."""
import errno
import io
import os
import sys
import wsgiref.util

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "examples"))
import safeopen  # noqa: E402
import webfiles  # noqa: E402


@pytest.fixture
def site(tmp_path):
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "secret").write_bytes(b"secret")
    www = tmp_path / "www"
    (www / "sub").mkdir(parents=True)
    (www / "index.html").write_bytes(b"home")
    (www / "sub" / "a.txt").write_bytes(b"aaa")
    os.symlink(str(tmp_path / "outside"), www / "abs")     # IN_ROOT: www/<tmp>/outside
    os.symlink("../outside/secret", www / "rel")            # leaves the root
    os.symlink("/index.html", www / "home")                 # absolute, inside
    os.symlink("/proc/self/root" + str(tmp_path / "outside" / "secret"), www / "magic")
    os.mkfifo(www / "fifo")
    with safeopen.Root(www) as r:
        yield tmp_path, r


def call(app, method, path, body=b""):
    env = {"REQUEST_METHOD": method, "PATH_INFO": path, "CONTENT_LENGTH": str(len(body)),
           "wsgi.input": io.BytesIO(body)}
    wsgiref.util.setup_testing_defaults(env)
    out = {}

    def start(status, headers):
        out["status"] = status
    chunks = app(env, start)
    data = b"".join(chunks)
    if hasattr(chunks, "close"):
        chunks.close()
    return out["status"].split()[0], data


def test_send_file(site):
    top, r = site
    app = webfiles.make_app(r)
    assert call(app, "GET", "/index.html") == ("200", b"home")
    assert call(app, "GET", "/../../index.html") == ("200", b"home")
    assert call(app, "GET", "/%2e%2e/sub/a.txt") == ("200", b"aaa")
    assert call(app, "GET", "/home") == ("200", b"home")
    # IN_ROOT: links and climbs are scoped to the root, where there is no
    # such name (404: /proc/self/root... is looked up as ROOT/proc/...); NUL: 400
    for evil, want in (("/rel", "404"), ("/abs/secret", "404"), ("/magic", "404"),
                       ("/../outside/secret", "404"), ("/%00x", "400")):
        status, data = call(app, "GET", evil)
        assert status == want and b"secret" not in data, evil
    assert call(app, "GET", "/fifo")[0] == "403"
    assert call(app, "GET", "/sub")[0] == "403"


def test_http_status_is_the_readme_rule():
    """safeopen.http_status() is README's http_status(): the table is read
    from README.md's C function and compared errno by errno."""
    import re
    readme = os.path.join(os.environ.get("top_srcdir", ""), "README.md")
    if not os.path.exists(readme):
        pytest.skip("top_srcdir not set (run by make check)")
    with open(readme, encoding="utf-8") as f:
        text = f.read()
    body = text[text.index("int http_status(int err)"):]
    body = body[:body.index("\n}\n")]
    rule, pending = {}, []
    for line in body.splitlines():
        pending += re.findall(r"case (E[A-Z]+):", line)
        m = re.search(r"return (\d+);", line)
        if m:
            for name in pending:
                rule[name] = int(m.group(1))
            pending = []
    default = int(re.findall(r"return (\d+);", body)[-1])
    assert len(rule) >= 15 and default == 500
    for name, code in rule.items():
        assert safeopen.http_status(getattr(errno, name)) == code, name
        assert safeopen.http_status(OSError(getattr(errno, name), "x")) == code, name
    assert safeopen.http_status(safeopen.EscapeError(errno.EXDEV, "x")) == 403
    for name in ("EIO", "EBADF", "EROFS"):
        assert safeopen.http_status(getattr(errno, name)) == default


def test_upload(site):
    top, r = site
    app = webfiles.make_app(r)
    status, digest = call(app, "PUT", "/new/dir/f.txt", b"payload")
    assert status == "201" and len(digest.strip()) == 64
    assert call(app, "GET", "/new/dir/f.txt") == ("200", b"payload")
    for evil in ("/rel", "/abs/x", "/../../outside/x", "/sub/a.txt/x", "/"):
        assert call(app, "PUT", evil, b"evil")[0] in ("403", "201", "400", "409"), evil
    # "/rel" replaced the link itself (a name in the root), never its target
    assert (top / "outside" / "secret").read_bytes() == b"secret"
    assert sorted(os.listdir(top / "outside")) == ["secret"]
    assert not (top / "x").exists()


def test_store_upload_escape(site):
    top, r = site
    with pytest.raises(safeopen.EscapeError) as ei:
        webfiles.store_upload(r, "/abs/x", io.BytesIO(b"e"), 1)
    assert ei.value.errno == errno.EXDEV
