# examples/: the attack demo (`make demo`), the safeopen command-line tool
# (installed, with its man page), hello, the
# smallest consumer (also the pkg-config check of .ci/run), and the programs
# of the cookbook. Their tests are in tests/ (tests/local.mk).
bin_PROGRAMS += examples/safeopen
examples_safeopen_SOURCES = examples/safeopen.c examples/extract.c examples/extract.h \
	examples/tree.c examples/tree.h
examples_safeopen_LDADD = lib/libsafeopen.la
examples_safeopen_LDFLAGS = $(INSTALLED_LDFLAGS)
# safeopen extract (examples/extract.c); without libarchive it says it is not
# built. (The per-target CPPFLAGS is set unconditionally: set only inside the
# conditional it would be empty, without AM_CPPFLAGS, in the other branch.)
examples_safeopen_CPPFLAGS = $(AM_CPPFLAGS) $(EXTRACT_CPPFLAGS)
EXTRACT_CPPFLAGS =
if HAVE_LIBARCHIVE
# libarchive's header only: it is loaded when an archive needs it
# (examples/la.h), not at every start of safeopen
examples_safeopen_SOURCES += examples/tarfast.c examples/tarfast.h examples/la.c \
	examples/la.h examples/xentry.h examples/tarbid.c examples/tarbid.h examples/tarhdr.h
EXTRACT_CPPFLAGS += $(LIBARCHIVE_CFLAGS)
examples_safeopen_LDADD += $(DLOPEN_LIBS)
endif
dist_man1_MANS += examples/safeopen.1

noinst_PROGRAMS += examples/hello examples/demo
examples_hello_LDADD = lib/libsafeopen.la
examples_demo_LDADD = lib/libsafeopen.la

# The attacker of tests/test-httpd.sh and tests/test-extract.sh, usable
# against any server ("race-swap DIR NAME1 NAME2 SECONDS"): swaps a directory
# and a symlink with renameat2(RENAME_EXCHANGE) as fast as it can, for a
# bounded time.
noinst_PROGRAMS += examples/race-swap
examples_race_swap_LDADD =

demo: examples/demo
	@./examples/demo
PHONY_TARGETS += demo

# The cookbook (doc/cookbook.md): each recipe is a complete program, built
# by `make` with the other examples and run by tests/test-cookbook.sh
# against a temp dir.
cookbook_progs = examples/cookbook/serve-url examples/cookbook/upload \
	examples/cookbook/extract examples/cookbook/port-realpath \
	examples/cookbook/port-openat2 examples/cookbook/seccomp examples/cookbook/fdpass \
	examples/cookbook/backup-walk
noinst_PROGRAMS += $(cookbook_progs)
examples_cookbook_serve_url_LDADD = lib/libsafeopen.la
examples_cookbook_upload_LDADD = lib/libsafeopen.la
examples_cookbook_extract_LDADD = lib/libsafeopen.la
examples_cookbook_port_realpath_LDADD = lib/libsafeopen.la
examples_cookbook_port_openat2_SOURCES = examples/cookbook/port-openat2.c
examples_cookbook_port_openat2_LDADD = lib/libsafeopen.la
examples_cookbook_seccomp_LDADD = lib/libsafeopen.la
examples_cookbook_fdpass_LDADD = lib/libsafeopen.la
examples_cookbook_backup_walk_LDADD = lib/libsafeopen.la
