# tools/safe-httpd/: safe-httpd, the file server (installed, with its man page
# safe-httpd(1)); one .c per concept, listed in tools/safe-httpd/httpd.h. Its test is
# tests/tools/test-httpd.sh, its benchmark `make bench-httpd` (bench/local.mk).
bin_PROGRAMS += tools/safe-httpd/safe-httpd
tools_safe_httpd_safe_httpd_SOURCES = tools/safe-httpd/httpd.h tools/safe-httpd/main.c tools/safe-httpd/conn.c tools/safe-httpd/request.c \
	tools/safe-httpd/files.c tools/safe-httpd/upload.c tools/safe-httpd/auth.c tools/safe-httpd/mime.c tools/safe-httpd/util.c
tools_safe_httpd_safe_httpd_LDADD = lib/libsafeopen.la $(CRYPT_LIBS)
tools_safe_httpd_safe_httpd_LDFLAGS = $(INSTALLED_LDFLAGS)
dist_man1_MANS += tools/safe-httpd/safe-httpd.1
# The systemd units, the service and its socket for socket activation (the
# Debian package installs them, disabled; the settings file is
# packaging/debian/safe-httpd.default); tests/tools/test-httpd.sh runs
# systemd-analyze verify on them.
EXTRA_DIST += tools/safe-httpd/safe-httpd.service tools/safe-httpd/safe-httpd.socket
