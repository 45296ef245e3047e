# API documentation (Doxygen: HTML and man pages) and the design note.
EXTRA_DIST += doc/Doxyfile.in doc/design.md

if HAVE_DOXYGEN
doc: doc/Doxyfile $(top_srcdir)/include/safeopen.h
	@rm -rf doc/api doc/doxygen-warnings.log
	@$(MKDIR_P) doc
	$(AM_V_GEN)$(DOXYGEN) doc/Doxyfile
	@if test -s doc/doxygen-warnings.log; then \
	  cat doc/doxygen-warnings.log; echo "make doc: doxygen warnings (see above)"; exit 1; fi
	@echo "make doc: HTML in doc/api/html/index.html, man pages in doc/api/man/man3 (0 warnings)"
else
doc:
	@echo "doxygen not found: install the Debian package doxygen (scripts/install-deps does)"; exit 1
endif
PHONY_TARGETS += doc

clean-local: clean-doc
clean-doc:
	-rm -rf doc/api doc/doxygen-warnings.log
PHONY_TARGETS += clean-doc

# Install the API man pages (section 3) when `make doc` has generated them.
install-data-local: install-api-man
uninstall-local: uninstall-api-man
install-api-man:
	@if test -d doc/api/man/man3; then \
	  $(MKDIR_P) '$(DESTDIR)$(mandir)/man3' && \
	  for f in doc/api/man/man3/safe_*.3 doc/api/man/man3/SAFE_*.3 doc/api/man/man3/safeopen*.3; do \
	    echo " INSTALL $$f"; $(INSTALL_DATA) "$$f" '$(DESTDIR)$(mandir)/man3/' || exit 1; \
	  done; \
	fi
uninstall-api-man:
	@if test -d doc/api/man/man3; then \
	  for f in doc/api/man/man3/safe_*.3 doc/api/man/man3/SAFE_*.3 doc/api/man/man3/safeopen*.3; do rm -f '$(DESTDIR)$(mandir)/man3/'"$${f##*/}"; done; \
	fi
PHONY_TARGETS += install-api-man uninstall-api-man
