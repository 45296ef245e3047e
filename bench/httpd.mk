# `make bench-httpd`: requests/s of examples/safe-httpd against
# `python3 -m http.server` (bench/httpd-bench.sh), with bench/httpd-bench as
# the load generator. HTTPD_BENCH_ENV passes settings, for example
# HTTPD_BENCH_ENV="BEFORE=/path/to/old/safe-httpd SECONDS=5".
noinst_PROGRAMS += bench/httpd-bench
bench_httpd_bench_SOURCES = bench/httpd-bench.c

HTTPD_BENCH_ENV =
bench-httpd: bench/httpd-bench examples/safe-httpd
	top_builddir='$(abs_top_builddir)' $(HTTPD_BENCH_ENV) $(SHELL) $(srcdir)/bench/httpd-bench.sh
PHONY_TARGETS += bench-httpd
EXTRA_DIST += bench/httpd-bench.sh
