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
#   make install         installs the package in $(PYTHON_SITEDIR)/safeopen

PYPKG_FILES = bindings/python/safeopen/__init__.py bindings/python/safeopen/__init__.pyi bindings/python/safeopen/_extract.py \
	bindings/python/safeopen/py.typed
PYTEST_FILES = bindings/python/tests/conftest.py bindings/python/tests/test_api.py \
	bindings/python/tests/test_resolve.py bindings/python/tests/test_race.py bindings/python/tests/test_extract.py \
	bindings/python/tests/racer.py bindings/python/tests/test_cookbook.py bindings/python/tests/test_root.py bindings/python/examples/webfiles.py
EXTRA_DIST += bindings/python/_safeopen.c bindings/python/gen-constants.py bindings/python/safeopen/_safeopen.pyi.in \
	$(PYPKG_FILES) $(PYTEST_FILES) bindings/python/tests/run-pytest.sh bindings/python/tests/pytest.ini \
	bench/python-bench.py
TESTS += bindings/python/tests/run-pytest.sh
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

safeopenpyexecdir = $(PYTHON_SITEDIR)/safeopen
safeopenpyexec_LTLIBRARIES = bindings/python/_safeopen.la
bindings_python__safeopen_la_SOURCES = bindings/python/_safeopen.c
nodist_bindings_python__safeopen_la_SOURCES = bindings/python/safeopen-constants.h
bindings_python__safeopen_la_CPPFLAGS = $(AM_CPPFLAGS) -Ibindings/python $(PYTHON_CPPFLAGS) \
	-DSAFEOPEN_PY_VERSION='"$(PACKAGE_VERSION)"'
# Python's headers trip -Wredundant-decls and friends; the module's own code
# is held to the rest of WARN_CFLAGS.
bindings_python__safeopen_la_CFLAGS = $(AM_CFLAGS) -fvisibility=hidden -fno-strict-aliasing \
	-Wno-redundant-decls -Wno-cast-align -Wno-missing-prototypes
bindings_python__safeopen_la_LDFLAGS = $(INSTALLED_LDFLAGS) -module -avoid-version -shared
bindings_python__safeopen_la_LIBADD = lib/libsafeopen.la

safeopenpy_DATA = $(PYPKG_FILES:bindings/python/safeopen/%=$(srcdir)/bindings/python/safeopen/%) bindings/python/_safeopen.pyi
safeopenpydir = $(PYTHON_SITEDIR)/safeopen

# Installed as _safeopen$(EXT_SUFFIX) (_safeopen.cpython-311-x86_64-linux-gnu.so),
# the name only the interpreter it was built for imports; no .la file.
install-exec-hook: install-python-ext
install-python-ext:
	rm -f $(DESTDIR)$(safeopenpyexecdir)/_safeopen.la
	mv -f $(DESTDIR)$(safeopenpyexecdir)/_safeopen.so \
	  $(DESTDIR)$(safeopenpyexecdir)/_safeopen$(PYTHON_EXT_SUFFIX)
uninstall-hook: uninstall-python-ext
uninstall-python-ext:
	rm -f $(DESTDIR)$(safeopenpyexecdir)/_safeopen$(PYTHON_EXT_SUFFIX)
	-rmdir $(DESTDIR)$(safeopenpyexecdir) 2>/dev/null
PHONY_TARGETS += install-python-ext uninstall-python-ext

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
