#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Print the directory this interpreter imports installed packages from for
the installation prefix PREFIX (usage: sitedir.py PREFIX), for `make
install` (bindings/python/local.mk) and configure's summary.

The rule is sysconfig's, as the interpreter itself applies it: the entry of
its import path (sys.path, the user site included, in a venv the venv's) that
lies in PREFIX/lib -- /usr/lib/python3/dist-packages for Debian's /usr,
/usr/local/lib/python3.X/dist-packages for /usr/local on Debian,
~/.local/lib/python3.X/site-packages for ~/.local, VENV/lib/python3.X/
site-packages for a venv -- else sysconfig's posix_prefix scheme for PREFIX
(PREFIX/lib/python3.X/site-packages), where PYTHONPATH must point.
"""
import os
import site
import sys
import sysconfig


def sitedir(prefix):
    prefix = os.path.normpath(os.path.abspath(prefix))
    lib = os.path.join(prefix, "lib") + os.sep
    paths = list(sys.path)
    if site.ENABLE_USER_SITE is not False:
        paths.append(site.getusersitepackages())
    for p in paths:
        p = os.path.normpath(os.path.abspath(p)) if p else ""
        if p.startswith(lib) and os.path.basename(p) in ("site-packages", "dist-packages"):
            return p
    v = {"base": prefix, "platbase": prefix, "installed_base": prefix,
         "installed_platbase": prefix}
    return sysconfig.get_path("platlib", "posix_prefix", v)


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.stderr.write(__doc__)
        sys.exit(2)
    print(sitedir(sys.argv[1]))
