# fuzz/: the libFuzzer target over the differential core of tests/ (tests/local.mk),
# built where the Check suites are (not against tests/harness/minicheck).
if HAVE_CHECK
# The libFuzzer target: ./configure --enable-fuzzing CC=clang. It compiles the
# library's sources itself, so that libFuzzer's coverage instrumentation
# reaches them, and always adds ASan and UBSan (use a build directory without
# --enable-asan: clang's shared-library ASan setup and libFuzzer's static one
# do not mix).
EXTRA_DIST += fuzz/fuzz_resolve.c fuzz/resolve.dict fuzz/corpus
FUZZ_SMOKE_TIME = 60
FUZZ_SMOKE_FLAGS = -max_total_time=$(FUZZ_SMOKE_TIME) -timeout=20 -rss_limit_mb=2048 \
	-print_final_stats=1 -dict=$(srcdir)/fuzz/resolve.dict -artifact_prefix=fuzz-smoke-
if ENABLE_FUZZING
noinst_PROGRAMS += fuzz/fuzz_resolve
fuzz_fuzz_resolve_SOURCES = fuzz/fuzz_resolve.c $(DIFFCORE_SOURCES) $(lib_libsafeopen_la_SOURCES)
fuzz_fuzz_resolve_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/lib
FUZZ_SAN = -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
	-fno-omit-frame-pointer -g
fuzz_fuzz_resolve_CFLAGS = $(AM_CFLAGS) $(FUZZ_SAN)
fuzz_fuzz_resolve_LDFLAGS = $(AM_LDFLAGS) $(FUZZ_SAN)
# libFuzzer is C++ and uses libm; the C driver does not add them.
fuzz_fuzz_resolve_LDADD = -lstdc++ -lm

# `make fuzz-smoke` runs the target from its committed seed corpus for
# FUZZ_SMOKE_TIME seconds (new inputs go to a scratch directory in the build
# tree). A mismatch aborts and leaves the reproducing input in
# fuzz-smoke-crash-*.
fuzz-smoke: fuzz/fuzz_resolve$(EXEEXT)
	rm -rf fuzz-smoke-corpus && mkdir fuzz-smoke-corpus
	./fuzz/fuzz_resolve$(EXEEXT) $(FUZZ_SMOKE_FLAGS) fuzz-smoke-corpus $(srcdir)/fuzz/corpus/resolve
	rm -rf fuzz-smoke-corpus
else
fuzz-smoke:
	@echo "fuzz-smoke: configure with --enable-fuzzing CC=clang first"; exit 1
endif
PHONY_TARGETS += fuzz-smoke
endif
