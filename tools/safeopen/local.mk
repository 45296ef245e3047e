# tools/safeopen/: the safeopen command-line tool (installed, with its man
# page safeopen(1)). Its tests are in tests/tools/ (tests/local.mk).
bin_PROGRAMS += tools/safeopen/safeopen
tools_safeopen_safeopen_SOURCES = tools/safeopen/safeopen.c tools/safeopen/extract.c tools/safeopen/extract.h \
	tools/safeopen/tree.c tools/safeopen/tree.h
tools_safeopen_safeopen_LDADD = lib/libsafeopen.la
tools_safeopen_safeopen_LDFLAGS = $(INSTALLED_LDFLAGS)
# safeopen extract (tools/safeopen/extract.c); without libarchive it says it is not
# built. (The per-target CPPFLAGS is set unconditionally: set only inside the
# conditional it would be empty, without AM_CPPFLAGS, in the other branch.)
tools_safeopen_safeopen_CPPFLAGS = $(AM_CPPFLAGS) $(EXTRACT_CPPFLAGS)
EXTRACT_CPPFLAGS =
if HAVE_LIBARCHIVE
# libarchive's header only: it is loaded when an archive needs it
# (tools/safeopen/la.h), not at every start of safeopen
tools_safeopen_safeopen_SOURCES += tools/safeopen/la.c tools/safeopen/la.h
EXTRACT_CPPFLAGS += $(LIBARCHIVE_CFLAGS)
tools_safeopen_safeopen_LDADD += $(DLOPEN_LIBS)
endif
dist_man1_MANS += tools/safeopen/safeopen.1

