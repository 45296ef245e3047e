# doc/: the hand-written man pages (the source of truth for the reference
# manual, shipped in the tarball and installed by `make install` without
# Doxygen) and the Doxygen HTML (main page, design note, cookbook, recipes).
# The tests that keep the pages honest are tests/docs/check-man-*.sh.

# Section 3: one page per function; functions that share a page are `.so`
# links (an alias page contains only `.so man3/<page>.3`).
MAN3_PAGES = \
	doc/man/man3/safe_create_all_beneath.3 \
	doc/man/man3/safe_diag_enable.3 \
	doc/man/man3/safe_diag_get.3 \
	doc/man/man3/safe_fchmodat_beneath.3 \
	doc/man/man3/safe_fchownat_beneath.3 \
	doc/man/man3/safe_fstatat_beneath.3 \
	doc/man/man3/safe_getxattr_beneath.3 \
	doc/man/man3/safe_linkat_beneath.3 \
	doc/man/man3/safe_listxattr_beneath.3 \
	doc/man/man3/safe_mkdir_all_beneath.3 \
	doc/man/man3/safe_mkdirat_beneath.3 \
	doc/man/man3/safe_mknodat_beneath.3 \
	doc/man/man3/safe_open_parent_beneath.3 \
	doc/man/man3/safe_openat2.3 \
	doc/man/man3/safe_openat_beneath.3 \
	doc/man/man3/safe_openat_in_root.3 \
	doc/man/man3/safe_opendir_beneath.3 \
	doc/man/man3/safe_proc_fd_path.3 \
	doc/man/man3/safe_proc_handle.3 \
	doc/man/man3/safe_proc_open.3 \
	doc/man/man3/safe_proc_readlink.3 \
	doc/man/man3/safe_readlinkat_beneath.3 \
	doc/man/man3/safe_realpath_beneath.3 \
	doc/man/man3/safe_removexattr_beneath.3 \
	doc/man/man3/safe_renameat_beneath.3 \
	doc/man/man3/safe_reopen.3 \
	doc/man/man3/safe_rmtree_beneath.3 \
	doc/man/man3/safe_setxattr_beneath.3 \
	doc/man/man3/safe_statx_beneath.3 \
	doc/man/man3/safe_strerror.3 \
	doc/man/man3/safe_symlinkat_beneath.3 \
	doc/man/man3/safe_tmpfile_discard.3 \
	doc/man/man3/safe_tmpfile_failed_xattr.3 \
	doc/man/man3/safe_tmpfile_fd.3 \
	doc/man/man3/safe_tmpfile_link.3 \
	doc/man/man3/safe_tmpfile_open.3 \
	doc/man/man3/safe_tmpfile_sweep_beneath.3 \
	doc/man/man3/safe_tmpfile_xattr.3 \
	doc/man/man3/safe_unlinkat_beneath.3 \
	doc/man/man3/safe_utimensat_beneath.3 \
	doc/man/man3/safe_write_atomic.3 \
	doc/man/man3/safe_version.3 \
	doc/man/man3/safe_walk_close.3 \
	doc/man/man3/safe_walk_next.3 \
	doc/man/man3/safe_walk_open.3 \
	doc/man/man3/safe_walk_skip.3
MAN7_PAGES = doc/man/man7/libsafeopen.7
dist_man3_MANS = $(MAN3_PAGES)
dist_man7_MANS = $(MAN7_PAGES)

EXTRA_DIST += doc/Doxyfile.in doc/design.md doc/cookbook.md doc/man2dox.sh doc/examples.dox \
	doc/recipes/extract.md

if HAVE_DOXYGEN
doc: doc/Doxyfile $(top_srcdir)/include/safeopen.h $(top_srcdir)/README.md $(top_srcdir)/SECURITY.md \
		$(top_srcdir)/doc/design.md $(top_srcdir)/doc/cookbook.md $(MAN3_PAGES) $(MAN7_PAGES)
	@rm -rf doc/api doc/api-src doc/doxygen-warnings.log
	@$(MKDIR_P) doc
	$(AM_V_GEN)$(SHELL) $(top_srcdir)/doc/man2dox.sh '$(abs_top_srcdir)' doc/api-src
	$(AM_V_GEN)$(DOXYGEN) doc/Doxyfile
	@if test -s doc/doxygen-warnings.log; then \
	  cat doc/doxygen-warnings.log; echo "make doc: doxygen warnings (see above)"; exit 1; fi
	@echo "make doc: HTML in doc/api/html/index.html (0 warnings); man pages are doc/man (installed by make install)"
else
doc:
	@echo "doxygen not found: install the Debian package doxygen (scripts/install-deps does)"; exit 1
endif
PHONY_TARGETS += doc

CLEAN_LOCAL_TARGETS += clean-doc
clean-doc:
	-rm -rf doc/api doc/api-src doc/doxygen-warnings.log
PHONY_TARGETS += clean-doc
