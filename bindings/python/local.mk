# python/: the safeopen Python package (included before tests/local.mk, so
# that its test, one of the slowest, starts first under make -j). A CPython extension (python/_safeopen.c,
# linked against lib/libsafeopen.la) plus pure-Python modules, built when
# configure found a python3 with its headers (--with-python, summary line
# "python:"), for that interpreter ($(PYTHON_BIN)) only.
#
#   make                 builds python/build/safeopen/, the package as it is
#                        installed, importable from the build tree with
#                        PYTHONPATH=python/build LD_LIBRARY_PATH=lib/.libs
#   make check           runs python/tests/ with pytest under -X dev
#                        (python/tests/run-pytest.sh; SKIP without the module)
#   make bench-python    safeopen.open against os.open(dir_fd=) and the
#                        realpath pattern (also run by `make bench`)
#   make install         installs the package in $(PYTHON_SITEDIR)/safeopen

PYPKG_FILES = python/safeopen/__init__.py python/safeopen/__init__.pyi python/safeopen/_extract.py \
	python/safeopen/py.typed
PYTEST_FILES = python/tests/conftest.py python/tests/test_api.py \
	python/tests/test_resolve.py python/tests/test_race.py python/tests/test_extract.py \
	python/tests/racer.py python/tests/test_cookbook.py python/examples/webfiles.py
EXTRA_DIST += python/_safeopen.c python/gen-constants.py python/safeopen/_safeopen.pyi.in \
	$(PYPKG_FILES) $(PYTEST_FILES) python/tests/run-pytest.sh python/tests/pytest.ini \
	bench/python-bench.py
TESTS += python/tests/run-pytest.sh
AM_TESTS_ENVIRONMENT += PYTHON_BIN='$(PYTHON_BIN)'; export PYTHON_BIN; \
	SAFEOPEN_SAN_CFLAGS='$(SAN_CFLAGS)'; export SAFEOPEN_SAN_CFLAGS;

if HAVE_PYTHON
# The constants of the public header (names listed from it at build time,
# values from its macros) and the type stub that lists them.
python/safeopen-constants.h python/_safeopen.pyi: $(srcdir)/python/gen-constants.py \
		$(top_srcdir)/include/safeopen.h $(srcdir)/python/safeopen/_safeopen.pyi.in
	$(AM_V_GEN)$(MKDIR_P) python && \
	$(PYTHON_BIN) $(srcdir)/python/gen-constants.py $(top_srcdir)/include/safeopen.h \
	  python/safeopen-constants.h $(srcdir)/python/safeopen/_safeopen.pyi.in python/_safeopen.pyi
BUILT_SOURCES = python/safeopen-constants.h
CLEANFILES += python/safeopen-constants.h python/_safeopen.pyi

safeopenpyexecdir = $(PYTHON_SITEDIR)/safeopen
safeopenpyexec_LTLIBRARIES = python/_safeopen.la
python__safeopen_la_SOURCES = python/_safeopen.c
nodist_python__safeopen_la_SOURCES = python/safeopen-constants.h
python__safeopen_la_CPPFLAGS = $(AM_CPPFLAGS) -Ipython $(PYTHON_CPPFLAGS)
# Python's headers trip -Wredundant-decls and friends; the module's own code
# is held to the rest of WARN_CFLAGS.
python__safeopen_la_CFLAGS = $(AM_CFLAGS) -fvisibility=hidden -fno-strict-aliasing \
	-Wno-redundant-decls -Wno-cast-align -Wno-missing-prototypes
python__safeopen_la_LDFLAGS = $(INSTALLED_LDFLAGS) -module -avoid-version -shared
python__safeopen_la_LIBADD = lib/libsafeopen.la

safeopenpy_DATA = $(PYPKG_FILES:python/safeopen/%=$(srcdir)/python/safeopen/%) python/_safeopen.pyi
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

# The package as installed, in the build tree (python/build/safeopen), for
# the tests and the benchmark; it finds lib/.libs/libsafeopen.so through
# LD_LIBRARY_PATH (the module's run path is $(libdir)).
noinst_DATA = python/build/.stamp
python/build/.stamp: python/_safeopen.la python/_safeopen.pyi \
		$(PYPKG_FILES:python/safeopen/%=$(srcdir)/python/safeopen/%)
	$(AM_V_GEN)rm -rf python/build && $(MKDIR_P) python/build/safeopen && \
	for f in $(PYPKG_FILES:python/safeopen/%=%); do \
	  cp $(srcdir)/python/safeopen/$$f python/build/safeopen/$$f || exit 1; done && \
	cp python/_safeopen.pyi python/build/safeopen/ && \
	cp python/.libs/_safeopen.so python/build/safeopen/_safeopen$(PYTHON_EXT_SUFFIX) && \
	touch $@
CLEAN_LOCAL_TARGETS += clean-python
clean-python:
	-rm -rf python/build python/tests/__pycache__ python/safeopen/__pycache__
PHONY_TARGETS += clean-python

PYTHON_ENV = PYTHONPATH='$(abs_top_builddir)/python/build' \
	LD_LIBRARY_PATH='$(abs_top_builddir)/lib/.libs' PYTHONDONTWRITEBYTECODE=1

# `make bench-python` (and the Python section of `make bench`): see
# bench/README.md. BENCH_PYTHON_ARGS="--seconds 2" passes options.
BENCH_PYTHON_ARGS =
bench-python: python/build/.stamp
	$(PYTHON_ENV) $(PYTHON_BIN) $(srcdir)/bench/python-bench.py $(BENCH_PYTHON_ARGS)
else
bench-python:
	@echo "bench-python: the Python module is not built (configure: python: no)"
endif
PHONY_TARGETS += bench-python
