# bench/: benchmarks are programs, never timed assertions in tests.
#   make bench          bench/bench: libsafeopen against openat, the realpath
#                       pattern and raw openat2; the shapes again under the
#                       kernel profiles BENCH_PROFILES (4.18 5.4) and one
#                       walker/realpath table of them all (bench/profiles.sh)
#   make bench-tree     safeopen find, chown -R, du -s, cp -a next to the GNU
#                       tools on a 100,000-entry tree (also run by make bench)
#   make bench-httpd    requests/s of tools/safe-httpd/safe-httpd next to nginx and python
#   make bench-owner-race  safe-httpd --symlinks owner-match next to nginx's
#                       disable_symlinks if_not_owner: what each serves, and a
#                       link swapped by its owner during requests (root only)
#   make bench-extract  safeopen extract next to GNU tar and bsdtar
#   make bench-fork     a fork-per-request server: per-child cost against openat
#   make bench-securejoin  the walker against Go's filepath-securejoin
#                       SecureJoin + open, per shape (needs go and Debian's
#                       golang-github-cyphar-filepath-securejoin-dev; without
#                       them it says so and does nothing)
# bench/bench and bench/httpd-bench are programs like the examples, built by
# `make` where the Check suites are built (not against tests/harness/minicheck).
if HAVE_CHECK
# `make bench BENCH_ARGS="--dir /dev/shm --cpu 1"` passes options. The only
# test is a correctness smoke run (bench/smoke.sh: --verify-only).
noinst_PROGRAMS += bench/bench
bench_bench_SOURCES = bench/bench.c bench/bench.h bench/alloc.c bench/shapes.c bench/methods.c \
	bench/tmpfile.c bench/measure.c bench/report.c bench/targets.c bench/mkdir.c
bench_bench_LDADD = lib/libsafeopen.la
# A real binary (no libtool wrapper, Makefile.am), so strace can run it again
# as a child; --export-dynamic: its malloc counter interposes the library's calls.
bench_bench_LDFLAGS = $(AM_LDFLAGS) -Wl,--export-dynamic

BENCH_ARGS =
# The shapes again under these kernel profiles (tests/harness/kernel-profile; the
# filter is in force for the whole benchmark, every method alike), then one
# walker/realpath table: native and each profile (bench/profiles.sh).
BENCH_PROFILES = 4.18 5.4
bench: bench/bench tests/harness/kernel-profile$(EXEEXT)
	./bench/bench --csv bench/results.csv $(BENCH_ARGS)
	AWK='$(AWK)' $(SHELL) $(srcdir)/bench/profiles.sh bench/results.csv $(BENCH_PROFILES) -- $(BENCH_ARGS)
	@if command -v gnuplot >/dev/null 2>&1; then \
	  $(SHELL) $(srcdir)/bench/plot bench/results.csv bench/depth.svg; \
	else echo "gnuplot not found: no plot (Debian package gnuplot-nox)"; fi
	$(MAKE) $(AM_MAKEFLAGS) bench-tree
	@$(MAKE) $(AM_MAKEFLAGS) bench-python
PHONY_TARGETS += bench

TESTS += bench/smoke.sh
EXTRA_DIST += bench/smoke.sh bench/plot bench/README.md bench/profiles.sh
CLEANFILES += bench/results.csv bench/depth.svg bench/results-*.csv

# `make bench-httpd`: requests/s of tools/safe-httpd/safe-httpd next to nginx (when
# installed) and `python3 -m http.server`, with the ratios
# (bench/httpd-bench.sh), with bench/httpd-bench as the load generator.
# HTTPD_BENCH_ENV passes settings, for example
# HTTPD_BENCH_ENV="BEFORE=/path/to/old/safe-httpd ROUNDS=5 ROUND_SECONDS=3".
noinst_PROGRAMS += bench/httpd-bench
bench_httpd_bench_LDADD =

HTTPD_BENCH_ENV =
bench-httpd: bench/httpd-bench tools/safe-httpd/safe-httpd
	top_builddir='$(abs_top_builddir)' top_srcdir='$(abs_top_srcdir)' $(HTTPD_BENCH_ENV) \
	  $(SHELL) $(srcdir)/bench/httpd-bench.sh
PHONY_TARGETS += bench-httpd
EXTRA_DIST += bench/httpd-bench.sh bench/httpd-servers.sh

# `make bench-owner-race`: research for issue 42 (bench/owner-race.sh): the
# owner policy of safe-httpd and of nginx on one tree, and under a race.
# OWNER_RACE_ENV="REQUESTS=100000 NGINX=none" passes settings.
OWNER_RACE_ENV =
bench-owner-race: tools/safe-httpd/safe-httpd
	top_builddir='$(abs_top_builddir)' top_srcdir='$(abs_top_srcdir)' $(OWNER_RACE_ENV) \
	  $(SHELL) $(srcdir)/bench/owner-race.sh
PHONY_TARGETS += bench-owner-race
EXTRA_DIST += bench/owner-race.sh

# `make bench-fork`: a fork-per-request server's per-child cost, plain
# openat() against safe_openat_in_root() cold and warmed before the fork.
noinst_PROGRAMS += bench/fork-serve
bench_fork_serve_SOURCES = bench/fork-serve.c
bench_fork_serve_LDADD = lib/libsafeopen.la
FORK_BENCH_ARGS =
bench-fork: bench/fork-serve
	./bench/fork-serve $(FORK_BENCH_ARGS)
PHONY_TARGETS += bench-fork

# `make bench-securejoin`: bench/bench's shapes on the walker next to
# SecureJoin(root, path) + open (bench/securejoin/main.go, built here in GOPATH
# mode, offline) and the table of both (bench/securejoin.sh); BENCH_ARGS as for
# `make bench`. GO and SECUREJOIN_GOPATH (where src/github.com/cyphar/
# filepath-securejoin is) can be set.
GO = go
SECUREJOIN_GOPATH = /usr/share/gocode
bench-securejoin: bench/bench
	top_builddir='$(abs_top_builddir)' top_srcdir='$(abs_top_srcdir)' GO='$(GO)' \
	  SECUREJOIN_GOPATH='$(SECUREJOIN_GOPATH)' AWK='$(AWK)' \
	  $(SHELL) $(srcdir)/bench/securejoin.sh $(BENCH_ARGS)
PHONY_TARGETS += bench-securejoin
endif
# Outside the conditional: distributed and cleaned whatever configure found.
EXTRA_DIST += bench/securejoin.sh bench/securejoin/main.go
CLEANFILES += bench/securejoin-bench bench/securejoin-walker.csv bench/securejoin-go.csv
CLEAN_LOCAL_TARGETS += clean-securejoin
clean-securejoin:
	-rm -rf bench/.gocache
PHONY_TARGETS += clean-securejoin

# `make bench-tree`: the tree commands of safeopen (the confined walk) next to
# GNU find, chown -R (chmod -R when not root), du -s and cp -a, on one tree of
# 100,000 entries: median ms, ratio, system calls per entry.
# BENCH_TREE_ARGS="--entries 100000 --runs 5 --dir /dev/shm"
BENCH_TREE_ARGS =
bench-tree: tools/safeopen/safeopen
	top_builddir='$(abs_top_builddir)' top_srcdir='$(abs_top_srcdir)' \
	  $(SHELL) $(srcdir)/bench/tree-bench.sh $(BENCH_TREE_ARGS)
PHONY_TARGETS += bench-tree
EXTRA_DIST += bench/tree-bench.sh

# `make bench-extract`: safeopen extract (both paths) next to GNU tar and
# bsdtar (wall and CPU time, min and median of 5, ratios, system calls per
# entry) on a synthetic archive of 10,000 small files, plain tars of
# /usr/include and of tzdata (/usr/share/zoneinfo) and the release tarball
# (made with dist-gzip when missing).
# BENCH_EXTRACT_ARGS="--runs 9 --dir /dev/shm"
BENCH_EXTRACT_ARGS =
bench-extract: tools/safeopen/safeopen
	@test -f $(distdir).tar.gz || $(MAKE) $(AM_MAKEFLAGS) dist-gzip
	top_builddir='$(abs_top_builddir)' $(SHELL) $(srcdir)/bench/extract-bench.sh \
	  $(BENCH_EXTRACT_ARGS) $(distdir).tar.gz
PHONY_TARGETS += bench-extract
EXTRA_DIST += bench/extract-bench.sh
