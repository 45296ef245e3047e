# Issue 12: honest test targets.
#   make check-long       every suite at its big size (SAFEOPEN_CHECK_LONG=1)
#   make check-mutations  each defence disabled in turn must make a test fail
#                         (tests/mutations.list, tests/check-mutations.sh)
EXTRA_DIST += tests/mutations.list tests/check-mutations.sh

check-long:
	SAFEOPEN_CHECK_LONG=1 $(MAKE) $(AM_MAKEFLAGS) check

check-mutations: $(check_PROGRAMS) $(lib_LTLIBRARIES)
	top_srcdir='$(abs_top_srcdir)' top_builddir='$(abs_top_builddir)' MAKE='$(MAKE)' \
	  $(SHELL) $(srcdir)/tests/check-mutations.sh

PHONY_TARGETS += check-long check-mutations

clean-mutations:
	rm -rf mutations
CLEAN_LOCAL_TARGETS += clean-mutations
PHONY_TARGETS += clean-mutations
