# SPDX-License-Identifier: MIT
"""pytest plugin (-p tap_report): one TAP line per test, for Automake's TAP
driver (bindings/python/tests/run-pytest.sh). The lines go to the file named
by $SAFEOPEN_TAP_OUT as each test ends; pytest's own report stays on its
output. A test is "not ok" if its setup, call or teardown failed, a skip is
"ok N - NAME # SKIP REASON", an expected failure "# TODO"."""
import os

_out = None
_n = 0
_state = {}


def pytest_configure(config):
    global _out
    path = os.environ.get("SAFEOPEN_TAP_OUT")
    if path:
        _out = open(path, "w", buffering=1, encoding="utf-8")


def _emit(line):
    if _out is not None:
        _out.write(line + "\n")


def pytest_runtest_logreport(report):
    global _n
    st = _state.setdefault(report.nodeid, {"failed": False, "skip": None, "xfail": False})
    if report.failed:
        st["failed"] = True
    elif report.skipped:
        if hasattr(report, "wasxfail"):
            st["xfail"] = True
        elif st["skip"] is None:
            lr = report.longrepr
            st["skip"] = (lr[2] if isinstance(lr, tuple) else str(lr)).replace("\n", " ")
    if report.when != "teardown":
        return
    _n += 1
    name = report.nodeid.replace("#", "%23")
    if st["failed"]:
        _emit(f"not ok {_n} - {name}")
    elif st["xfail"]:
        _emit(f"not ok {_n} - {name} # TODO expected failure")
    elif st["skip"] is not None:
        _emit(f"ok {_n} - {name} # SKIP {st['skip']}")
    else:
        _emit(f"ok {_n} - {name}")
    del _state[report.nodeid]


def pytest_sessionfinish(session, exitstatus):
    if _out is not None:
        _emit(f"1..{_n}")
        _out.close()
