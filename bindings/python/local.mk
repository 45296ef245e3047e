# bindings/python/: the safeopen Python package (included before tests/local.mk, so
# that its test, one of the slowest, starts first under make -j). A CPython extension (bindings/python/_safeopen.c,
# linked against lib/libsafeopen.la) plus pure-Python modules, built when
# configure found a python3 with its headers (--with-python, summary line
# "python:"), for that interpreter ($(PYTHON_BIN)) only.
#
#   make                 builds bindings/python/build/safeopen/, the package as it is
#                        installed, importable from the build tree with
#                        PYTHONPATH=bindings/python/build LD_LIBRARY_PATH=lib/.libs
#   make check           runs bindings/python/tests/ with pytest under -X dev
#                        (bindings/python/tests/run-pytest.sh; SKIP without the module)
#   make bench-python    safeopen.open against os.open(dir_fd=) and the
#                        realpath pattern (also run by `make bench`)
#   make install         installs the package where $(PYTHON_BIN) imports from for
#                        $(prefix), or in $(PYTHON_SITEDIR)/safeopen (install-python)
#   pip install bindings/python   the same package built by setuptools against the
#                        installed library (pyproject.toml, setup.py)

PYPKG_FILES = bindings/python/safeopen/__init__.py bindings/python/safeopen/__init__.pyi bindings/python/safeopen/_extract.py \
	bindings/python/safeopen/py.typed
PYTEST_FILES = bindings/python/tests/conftest.py bindings/python/tests/test_api.py \
	bindings/python/tests/test_resolve.py bindings/python/tests/test_race.py bindings/python/tests/test_extract.py \
	bindings/python/tests/racer.py bindings/python/tests/test_cookbook.py bindings/python/tests/test_root.py bindings/python/examples/webfiles.py
EXTRA_DIST += bindings/python/_safeopen.c bindings/python/gen-constants.py bindings/python/safeopen/_safeopen.pyi.in \
	bindings/python/pyproject.toml bindings/python/setup.py bindings/python/MANIFEST.in \
	bindings/python/README.md bindings/python/sitedir.py bindings/python/install-package.sh \
	$(PYPKG_FILES) $(PYTEST_FILES) bindings/python/tests/run-pytest.sh bindings/python/tests/pytest.ini \
	bench/python-bench.py
# In TESTS where tests/local.mk puts it (the slowest tests first).
PYTHON_TESTS = bindings/python/tests/run-pytest.sh
AM_TESTS_ENVIRONMENT += PYTHON_BIN='$(PYTHON_BIN)'; export PYTHON_BIN; \
	SAFEOPEN_SAN_CFLAGS='$(SAN_CFLAGS)'; export SAFEOPEN_SAN_CFLAGS;

if HAVE_PYTHON
# The constants of the public header (names listed from it at build time,
# values from its macros) and the type stub that lists them.
bindings/python/safeopen-constants.h bindings/python/_safeopen.pyi: $(srcdir)/bindings/python/gen-constants.py \
		$(top_srcdir)/include/safeopen.h $(srcdir)/bindings/python/safeopen/_safeopen.pyi.in
	$(AM_V_GEN)$(MKDIR_P) bindings/python && \
	$(PYTHON_BIN) $(srcdir)/bindings/python/gen-constants.py $(top_srcdir)/include/safeopen.h \
	  bindings/python/safeopen-constants.h $(srcdir)/bindings/python/safeopen/_safeopen.pyi.in bindings/python/_safeopen.pyi
BUILT_SOURCES = bindings/python/safeopen-constants.h
CLEANFILES += bindings/python/safeopen-constants.h bindings/python/_safeopen.pyi

# The extension, built by libtool for the build tree (bindings/python/build);
# `make install` links it again for the installed library (install-python).
noinst_LTLIBRARIES = bindings/python/_safeopen.la
bindings_python__safeopen_la_SOURCES = bindings/python/_safeopen.c
nodist_bindings_python__safeopen_la_SOURCES = bindings/python/safeopen-constants.h
bindings_python__safeopen_la_CPPFLAGS = $(AM_CPPFLAGS) -Ibindings/python $(PYTHON_CPPFLAGS) \
	-DSAFEOPEN_PY_VERSION='"$(PACKAGE_VERSION)"'
# Python's headers trip -Wredundant-decls and friends; the module's own code
# is held to the rest of WARN_CFLAGS.
bindings_python__safeopen_la_CFLAGS = $(AM_CFLAGS) -fvisibility=hidden -fno-strict-aliasing \
	-Wno-redundant-decls -Wno-cast-align -Wno-missing-prototypes
bindings_python__safeopen_la_LDFLAGS = $(INSTALLED_LDFLAGS) -module -avoid-version -shared -rpath /nowhere
bindings_python__safeopen_la_LIBADD = lib/libsafeopen.la

# `make install`: the package in the directory that $(PYTHON_BIN) imports from
# for $(prefix) (bindings/python/sitedir.py: site-packages of a venv or of
# ~/.local, Debian's /usr/lib/python3/dist-packages, ...), or $(PYTHON_SITEDIR)
# if given (to configure or to make install), installed whole or not at all
# (bindings/python/install-package.sh). The extension is linked again from its
# object for the installed library: no run path into the build tree, and one
# to $(libdir) only where the loader does not look.
PYTHON_INSTALL_FILES = $(PYPKG_FILES:bindings/python/safeopen/%=$(srcdir)/bindings/python/safeopen/%) \
	bindings/python/_safeopen.pyi
python_sitedir = sitedir='$(PYTHON_SITEDIR)'; test -n "$$sitedir" || \
	sitedir=$$($(PYTHON_BIN) $(srcdir)/bindings/python/sitedir.py '$(prefix)') || exit 1
install-exec-hook: install-python
install-python: bindings/python/build/.stamp
	@$(python_sitedir); \
	case '$(libdir)' in /lib|/usr/lib|/lib64|/usr/lib64|/lib/*-linux-*|/usr/lib/*-linux-*) rpath= ;; \
	*) rpath='-Wl,-rpath,$(libdir)' ;; esac; \
	out=bindings/python/_safeopen-install.so; \
	echo "  CCLD     $$out (for $(libdir))"; \
	$(CC) $(AM_CFLAGS) $(CFLAGS) -shared -o $$out bindings/python/.libs/_safeopen_la-_safeopen.o \
	  -Llib/.libs -lsafeopen $$rpath $(INSTALLED_LDFLAGS) $(LDFLAGS) && \
	$(SHELL) $(srcdir)/bindings/python/install-package.sh "$(DESTDIR)$$sitedir" $$out \
	  '$(PYTHON_EXT_SUFFIX)' $(PYTHON_INSTALL_FILES); rc=$$?; rm -f $$out; exit $$rc
uninstall-hook: uninstall-python
uninstall-python:
	@$(python_sitedir); d="$(DESTDIR)$$sitedir/safeopen"; \
	for f in $(PYTHON_INSTALL_FILES:bindings/python/%=%) _safeopen$(PYTHON_EXT_SUFFIX); do \
	  rm -f "$$d/$$(basename $$f)"; done; \
	rm -rf "$$d/__pycache__"; rmdir "$$d" 2>/dev/null || true
PHONY_TARGETS += install-python uninstall-python

# The package as installed, in the build tree (bindings/python/build/safeopen), for
# the tests and the benchmark; it finds lib/.libs/libsafeopen.so through
# LD_LIBRARY_PATH (the module's run path is $(libdir)).
noinst_DATA = bindings/python/build/.stamp
bindings/python/build/.stamp: bindings/python/_safeopen.la bindings/python/_safeopen.pyi \
		$(PYPKG_FILES:bindings/python/safeopen/%=$(srcdir)/bindings/python/safeopen/%)
	$(AM_V_GEN)rm -rf bindings/python/build && $(MKDIR_P) bindings/python/build/safeopen && \
	for f in $(PYPKG_FILES:bindings/python/safeopen/%=%); do \
	  cp $(srcdir)/bindings/python/safeopen/$$f bindings/python/build/safeopen/$$f || exit 1; done && \
	cp bindings/python/_safeopen.pyi bindings/python/build/safeopen/ && \
	cp bindings/python/.libs/_safeopen.so bindings/python/build/safeopen/_safeopen$(PYTHON_EXT_SUFFIX) && \
	touch $@
CLEAN_LOCAL_TARGETS += clean-python
clean-python:
	-rm -rf bindings/python/build bindings/python/tests/__pycache__ bindings/python/safeopen/__pycache__
PHONY_TARGETS += clean-python

PYTHON_ENV = PYTHONPATH='$(abs_top_builddir)/bindings/python/build' \
	LD_LIBRARY_PATH='$(abs_top_builddir)/lib/.libs' PYTHONDONTWRITEBYTECODE=1

# `make bench-python` (and the Python section of `make bench`): see
# bench/README.md. BENCH_PYTHON_ARGS="--seconds 2" passes options.
BENCH_PYTHON_ARGS =
bench-python: bindings/python/build/.stamp
	$(PYTHON_ENV) $(PYTHON_BIN) $(srcdir)/bench/python-bench.py $(BENCH_PYTHON_ARGS)
else
bench-python:
	@echo "bench-python: the Python module is not built (configure: python: no)"
endif
PHONY_TARGETS += bench-python
