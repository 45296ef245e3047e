# Portability rules.
#
# libsafeopen.a, built and installed by default next to the shared library.
#
# A static archive has no dynamic symbol table, so -fvisibility=hidden and the
# version script do not keep the library's internal functions (so_*) out of
# the application's namespace: every object's hidden-but-global symbol would
# take part in the static link and could collide with an application symbol
# of the same name. So, once libtool has built lib/.libs/libsafeopen.a, its
# members are merged into one relocatable object (cc -r), every hidden symbol
# of that object is made local (objcopy --localize-hidden), and the archive
# is rewritten with that single member. Only the public API (the symbols the
# header marks SAFEOPEN_PUBLIC, default visibility) stays global; libtool then
# installs the rewritten archive as usual. tests/docs/check-symbols.sh checks the
# archive's globals against lib/libsafeopen.sym and links an application that
# defines every internal name.
#
# The stamp depends on the .la: when libtool rebuilds the archive, it is
# processed again. configure --disable-static: no archive, nothing to do.
STATIC_STAMP = lib/libsafeopen-a.stamp

all-local: $(STATIC_STAMP)
$(STATIC_STAMP): lib/libsafeopen.la
	$(AM_V_GEN)set -e; a=lib/.libs/libsafeopen.a; t=lib/.libs/static.tmp; \
	if test -f $$a; then \
	  rm -rf $$t; $(MKDIR_P) $$t/in $$t/out; \
	  (cd $$t/in && $(AR) x ../../libsafeopen.a); \
	  $(CC) $(CFLAGS) -nostdlib -r -o $$t/out/libsafeopen.o $$t/in/*.o; \
	  $(OBJCOPY) --localize-hidden $$t/out/libsafeopen.o; \
	  rm -f $$a.new; $(AR) cr $$a.new $$t/out/libsafeopen.o; $(RANLIB) $$a.new; \
	  mv -f $$a.new $$a; rm -rf $$t; \
	fi; \
	touch $@
CLEANFILES += $(STATIC_STAMP)

# configure's directory of symlinks to the kernel headers (for a compiler
# that does not search them, e.g. musl-gcc).
distclean-local: distclean-kernel-headers code-coverage-dist-clean
distclean-kernel-headers:
	-rm -rf kernel-headers
PHONY_TARGETS += distclean-kernel-headers

# The logs of `make check-kernels` (tests/kernels.mk).
CLEAN_LOCAL_TARGETS += clean-kernels
clean-kernels:
	-rm -rf tests/kernels
PHONY_TARGETS += clean-kernels

# The Debian packages (packaging/build-deb.sh: from the release tarball, with
# packaging/debian; run as a non-root user).
EXTRA_DIST += packaging/debian packaging/build-deb.sh packaging/gen-symbols.sh
deb: dist
	$(SHELL) $(srcdir)/packaging/build-deb.sh $(PACKAGE)-$(VERSION).tar.gz .
PHONY_TARGETS += deb
