# examples/: the attack demo (`make demo`), hello, the smallest consumer
# (also the pkg-config check of .ci/run), and the programs of the cookbook.
# Their tests are in tests/docs/ (tests/local.mk).
noinst_PROGRAMS += examples/hello examples/demo
examples_hello_LDADD = lib/libsafeopen.la
examples_demo_LDADD = lib/libsafeopen.la

demo: examples/demo
	@./examples/demo
PHONY_TARGETS += demo

# The cookbook (doc/cookbook.md): each recipe is a complete program, built
# by `make` with the other examples and run by tests/docs/test-cookbook.sh
# against a temp dir.
cookbook_progs = examples/cookbook/serve-url examples/cookbook/upload \
	examples/cookbook/extract examples/cookbook/port-realpath \
	examples/cookbook/port-openat2 examples/cookbook/seccomp examples/cookbook/fdpass \
	examples/cookbook/backup-walk examples/cookbook/container
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
examples_cookbook_container_LDADD = lib/libsafeopen.la
