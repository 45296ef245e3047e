# The library. One .c per concept; lib/internal.h is private.
lib_LTLIBRARIES += lib/libsafeopen.la
lib_libsafeopen_la_SOURCES = \
	lib/internal.h \
	lib/compat.h \
	lib/open.c \
	lib/diag.c \
	lib/openat2.c \
	lib/resolve.c \
	lib/path.c \
	lib/procfs.c \
	lib/ident.c \
	lib/probe.c \
	lib/tmpfile.c \
	lib/sweep.c \
	lib/ops.c \
	lib/mkdir_all.c \
	lib/rmtree.c \
	lib/realpath.c \
	lib/chain.c \
	lib/walk.c \
	lib/util.c
lib_libsafeopen_la_CFLAGS = $(AM_CFLAGS) -fvisibility=hidden
lib_libsafeopen_la_LDFLAGS = $(INSTALLED_LDFLAGS) \
	-version-info $(LIBSAFEOPEN_LT_VERSION) \
	-Wl,--version-script=$(srcdir)/lib/libsafeopen.sym \
	-Wl,--no-undefined -Wl,-z,now
# -z now (BIND_NOW): the library's own calls into the C library are bound when
# it is loaded, not at their first use: a process that forks per request does
# that once instead of in every child (bench/fork-serve: about 8 page faults
# and a third of the child's CPU less). With -z relro, full RELRO as well.
EXTRA_lib_libsafeopen_la_DEPENDENCIES = lib/libsafeopen.sym
EXTRA_DIST += lib/libsafeopen.sym
# assert()s on the walker's and rmtree's bookkeeping (held levels, depth)
# abort in the sanitizer and coverage builds, and in the fuzz target, which
# compiles these sources itself; the default (release) build leaves them out.
# (A per-target CPPFLAGS set only inside a conditional would be empty, and
# lose AM_CPPFLAGS, in the other branch: the conditional sets a variable.)
LIB_NDEBUG =
if !ENABLE_SANITIZERS
if !CODE_COVERAGE_ENABLED
LIB_NDEBUG += -DNDEBUG
endif
endif
lib_libsafeopen_la_CPPFLAGS = $(AM_CPPFLAGS) $(LIB_NDEBUG)
