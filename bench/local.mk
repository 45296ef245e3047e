# Benchmarks (`make bench`): programs, never timed assertions in tests.
# bench/bench measures libsafeopen against openat, the realpath pattern and raw
# openat2; `make bench BENCH_ARGS="--dir /dev/shm --cpu 1"` passes options.
# The only test is a correctness smoke run (bench/smoke.sh: --verify-only).
check_PROGRAMS += bench/bench
bench_bench_SOURCES = bench/bench.c
bench_bench_LDADD = lib/libsafeopen.la
# -no-install: a real binary (no libtool wrapper), so strace can run it again as
# a child; --export-dynamic: its malloc counter interposes the library's calls.
bench_bench_LDFLAGS = $(AM_LDFLAGS) -no-install -Wl,--export-dynamic

BENCH_ARGS =
bench: bench/bench
	./bench/bench --csv bench/results.csv $(BENCH_ARGS)
	@if command -v gnuplot >/dev/null 2>&1; then \
	  $(SHELL) $(srcdir)/bench/plot bench/results.csv bench/depth.svg; \
	else echo "gnuplot not found: no plot (Debian package gnuplot-nox)"; fi
PHONY_TARGETS += bench

TESTS += bench/smoke.sh
EXTRA_DIST += bench/smoke.sh bench/plot bench/README.md
CLEANFILES += bench/results.csv bench/depth.svg
