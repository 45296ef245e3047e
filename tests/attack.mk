# Attack and robustness suite (issue 8): differential random testing against
# openat2, fault injection, resource limits, concurrency, the libFuzzer target
# (make fuzz-smoke) and static analysis (make lint).

ATTACK_CORE = fuzz/diffcore.h fuzz/diffcore-internal.h fuzz/diffcore-util.c \
	fuzz/diffcore-treegen.c fuzz/diffcore-tree.c fuzz/diffcore-case.c fuzz/diffcore-oracle.c

check_PROGRAMS += tests/test_fuzz
tests_test_fuzz_SOURCES = tests/test_fuzz.c $(ATTACK_CORE)
tests_test_fuzz_CFLAGS = $(TEST_CFLAGS)
tests_test_fuzz_LDADD = $(TEST_LDADD)
TESTS += tests/test_fuzz
VALGRIND_TESTS += tests/test_fuzz

check_PROGRAMS += tests/test_fault
tests_test_fault_SOURCES = tests/test_fault.c $(ATTACK_CORE)
tests_test_fault_CFLAGS = $(TEST_CFLAGS)
tests_test_fault_LDADD = $(TEST_LDADD)
TESTS += tests/test_fault
VALGRIND_TESTS += tests/test_fault

check_PROGRAMS += tests/test_limits
tests_test_limits_SOURCES = tests/test_limits.c
tests_test_limits_CFLAGS = $(TEST_CFLAGS)
tests_test_limits_LDADD = $(TEST_LDADD)
TESTS += tests/test_limits
VALGRIND_TESTS += tests/test_limits

check_PROGRAMS += tests/test_concurrency
tests_test_concurrency_SOURCES = tests/test_concurrency.c
tests_test_concurrency_CFLAGS = $(TEST_CFLAGS)
tests_test_concurrency_LDADD = $(TEST_LDADD)
TESTS += tests/test_concurrency
VALGRIND_TESTS += tests/test_concurrency

# ---------------------------------------------------------------- libFuzzer
# ./configure --enable-fuzzing CC=clang. The target compiles the library's
# sources itself, so that libFuzzer's coverage instrumentation reaches them,
# and always adds ASan and UBSan (use a build directory without --enable-asan:
# clang's shared-library ASan setup and libFuzzer's static one do not mix).
EXTRA_DIST += fuzz/fuzz_resolve.c fuzz/resolve.dict fuzz/corpus
FUZZ_SMOKE_TIME = 60
FUZZ_SMOKE_FLAGS = -max_total_time=$(FUZZ_SMOKE_TIME) -timeout=20 -rss_limit_mb=2048 \
	-print_final_stats=1 -dict=$(srcdir)/fuzz/resolve.dict -artifact_prefix=fuzz-smoke-
if ENABLE_FUZZING
noinst_PROGRAMS += fuzz/fuzz_resolve
fuzz_fuzz_resolve_SOURCES = fuzz/fuzz_resolve.c $(ATTACK_CORE) $(lib_libsafeopen_la_SOURCES)
fuzz_fuzz_resolve_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/lib
FUZZ_SAN = -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
	-fno-omit-frame-pointer -g
fuzz_fuzz_resolve_CFLAGS = $(AM_CFLAGS) $(FUZZ_SAN)
fuzz_fuzz_resolve_LDFLAGS = $(AM_LDFLAGS) $(FUZZ_SAN)
# libFuzzer is C++ and uses libm; the C driver does not add them.
fuzz_fuzz_resolve_LDADD = -lstdc++ -lm

# Runs the target for FUZZ_SMOKE_TIME seconds from the committed seed corpus
# (new inputs go to a scratch directory in the build tree). A mismatch aborts
# and leaves the reproducing input in fuzz-smoke-crash-*.
fuzz-smoke: fuzz/fuzz_resolve$(EXEEXT)
	rm -rf fuzz-smoke-corpus && mkdir fuzz-smoke-corpus
	./fuzz/fuzz_resolve$(EXEEXT) $(FUZZ_SMOKE_FLAGS) fuzz-smoke-corpus $(srcdir)/fuzz/corpus/resolve
	rm -rf fuzz-smoke-corpus
else
fuzz-smoke:
	@echo "fuzz-smoke: configure with --enable-fuzzing CC=clang first"; exit 1
endif
PHONY_TARGETS += fuzz-smoke

# ---------------------------------------------------------------- static analysis
# cppcheck and clang-tidy over lib/*.c; zero findings required. Configuration:
# .clang-tidy (check set), .cppcheck-suppressions (suppressions, each
# justified there) and .cppcheck-shim.h (teaches cppcheck 2.10 what
# __attribute__((cleanup)) means); inline suppressions are justified where
# they appear.
EXTRA_DIST += .clang-tidy .cppcheck-suppressions .cppcheck-shim.h
LINT_CPPFLAGS = -I$(top_builddir) -I$(top_srcdir)/include -I$(top_srcdir)/lib
CPPCHECK_FLAGS = --quiet --error-exitcode=1 --inline-suppr --std=c11 --platform=unix64 \
	--enable=warning,style,performance,portability --library=posix \
	--suppressions-list=$(srcdir)/.cppcheck-suppressions \
	--include=$(srcdir)/.cppcheck-shim.h -D__linux__ -D__GNUC__=12 \
	-D__x86_64__ -D_GNU_SOURCE -DHAVE_CONFIG_H
lint:
	@test -n "$(CPPCHECK)" || { echo "lint: cppcheck not found (scripts/install-deps)"; exit 1; }
	@test -n "$(CLANG_TIDY)" || { echo "lint: clang-tidy not found (scripts/install-deps)"; exit 1; }
	@srcs=; for f in $(lib_libsafeopen_la_SOURCES); do \
	  case $$f in *.c) srcs="$$srcs $(srcdir)/$$f";; esac; done; \
	fail=0; \
	echo "cppcheck:$$srcs"; \
	$(CPPCHECK) $(CPPCHECK_FLAGS) $(LINT_CPPFLAGS) $$srcs || fail=1; \
	echo "clang-tidy:$$srcs"; \
	$(CLANG_TIDY) --quiet $$srcs -- -std=gnu17 $(LINT_CPPFLAGS) -DHAVE_CONFIG_H || fail=1; \
	if test $$fail = 0; then echo "lint: clean"; else echo "lint: FINDINGS above"; fi; \
	test $$fail = 0
PHONY_TARGETS += lint

