# httpd/: safe-httpd, the file server (installed, with its man page
# safe-httpd(1)); one .c per concept, listed in httpd/httpd.h. Its test is
# tests/test-httpd.sh, its benchmark `make bench-httpd` (bench/local.mk).
bin_PROGRAMS += httpd/safe-httpd
httpd_safe_httpd_SOURCES = httpd/httpd.h httpd/main.c httpd/conn.c httpd/request.c \
	httpd/files.c httpd/upload.c httpd/mime.c httpd/util.c
httpd_safe_httpd_LDADD = lib/libsafeopen.la
httpd_safe_httpd_LDFLAGS = $(INSTALLED_LDFLAGS)
dist_man1_MANS += httpd/safe-httpd.1
