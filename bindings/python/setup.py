# SPDX-License-Identifier: MIT
"""Build of the safeopen package by setuptools (pyproject.toml), for pip and
python -m build: the C extension _safeopen against the libsafeopen that
pkg-config finds (the installed library: its header for the constants, its
shared object to link), at least the release this package is.

The version is the library's release: AC_INIT of ../../configure.ac in a
source tree, the PKG-INFO of an sdist made from it. `make` builds the same
extension with libtool instead (bindings/python/local.mk).
"""
import os
import re
import subprocess
import sys
import sysconfig

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

HERE = os.path.dirname(os.path.abspath(__file__))


def release():
    conf = os.path.join(HERE, "..", "..", "configure.ac")
    if os.path.exists(conf):
        with open(conf, encoding="utf-8") as f:
            m = re.search(r"^AC_INIT\(\[libsafeopen\], \[([^]]+)\]", f.read(), re.M)
    else:
        with open(os.path.join(HERE, "PKG-INFO"), encoding="utf-8") as f:
            m = re.search(r"^Version: (\S+)$", f.read(), re.M)
    if not m:
        sys.exit("setup.py: no version in configure.ac or PKG-INFO")
    return m.group(1)


VERSION = release()


def pkgconfig(*args):
    cmd = ["pkg-config"] + list(args) + ["libsafeopen"]
    try:
        out = subprocess.run(cmd, check=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             universal_newlines=True)
    except FileNotFoundError:
        sys.exit("setup.py: pkg-config is missing (Debian: pkg-config)")
    except subprocess.CalledProcessError as e:
        sys.exit("setup.py: %s: %s\nsetup.py: the safeopen package needs libsafeopen >= %s "
                 "installed (make install, or Debian's libsafeopen-dev; PKG_CONFIG_PATH for "
                 "another prefix)" % (" ".join(cmd), e.stderr.strip(), VERSION))
    return out.stdout.split()


class BuildExt(build_ext):
    """build_ext with the library from pkg-config and the generated files:
    safeopen-constants.h (compiled in) and safeopen/_safeopen.pyi (the stub),
    both listed from the installed header by gen-constants.py."""

    def run(self):
        pkgconfig("--atleast-version=" + VERSION)
        header = os.path.join(pkgconfig("--variable=includedir")[0], "safeopen.h")
        libdir = pkgconfig("--variable=libdir")[0]
        gen = os.path.join(self.build_temp, "safeopen-gen")
        os.makedirs(gen, exist_ok=True)
        pkgdir = os.path.join(HERE if self.inplace else self.build_lib, "safeopen")
        os.makedirs(pkgdir, exist_ok=True)
        subprocess.run([sys.executable, os.path.join(HERE, "gen-constants.py"), header,
                        os.path.join(gen, "safeopen-constants.h"),
                        os.path.join(HERE, "safeopen", "_safeopen.pyi.in"),
                        os.path.join(pkgdir, "_safeopen.pyi")], check=True)
        # the run path only where the loader would not look (a private prefix)
        multiarch = sysconfig.get_config_var("MULTIARCH") or ""
        system = {"/usr/lib", "/lib", "/usr/lib/" + multiarch, "/lib/" + multiarch,
                  "/usr/lib64", "/lib64"}
        for ext in self.extensions:
            ext.include_dirs += [gen] + [f[2:] for f in pkgconfig("--cflags-only-I")]
            ext.extra_compile_args += pkgconfig("--cflags-only-other")
            ext.library_dirs += [f[2:] for f in pkgconfig("--libs-only-L")]
            ext.libraries += [f[2:] for f in pkgconfig("--libs-only-l")]
            if os.path.normpath(libdir) not in system:
                ext.runtime_library_dirs.append(libdir)
        super().run()

    def get_outputs(self):
        return super().get_outputs() + [os.path.join(self.build_lib, "safeopen", "_safeopen.pyi")]


setup(
    version=VERSION,
    ext_modules=[Extension(
        "safeopen._safeopen", ["_safeopen.c"],
        define_macros=[("SAFEOPEN_PY_VERSION", '"%s"' % VERSION)],
        extra_compile_args=["-fvisibility=hidden", "-fno-strict-aliasing"],
    )],
    cmdclass={"build_ext": BuildExt},
)
