# Example programs. `make demo` shows the library at work.
noinst_PROGRAMS += examples/hello
examples_hello_SOURCES = examples/hello.c
examples_hello_LDADD = lib/libsafeopen.la

demo: examples/hello
	@echo "== examples/hello: hostile paths beneath the source tree"
	./examples/hello $(top_srcdir)
PHONY_TARGETS += demo
