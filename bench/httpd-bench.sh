#!/bin/bash
# SPDX-License-Identifier: MIT
# bench/httpd-bench.sh: requests/s of tools/safe-httpd/safe-httpd next to nginx (when
# installed) and `python3 -m http.server`, serving the same files in one run,
# as a table with the ratios. Run by `make bench-httpd`; a benchmark, never a
# test. Only loopback traffic; every server is stopped at the end.
#
# Cells: a 1 KiB file at 1 and 100 clients with keep-alive, at 100 clients
# with one connection per request ("close": the accept/parse/open/sendfile/
# close path), and a 100 KiB file at 100 clients with keep-alive. The servers
# take turns within each cell (ROUNDS rounds), so load from elsewhere on the
# machine hits them alike; a cell shows the best round of each.
#
# Like for like: safe-httpd and nginx both write an access log to a file,
# both run one worker per CPU (safe-httpd's default --threads; nginx
# worker_processes auto), nginx with `disable_symlinks on` (its nearest
# equivalent of the library's refusal of symlinks out of the root) and
# sendfile.
#
# Environment: HTTPD (default tools/safe-httpd/safe-httpd), BEFORE (another safe-httpd
# binary for a before/after column and the ratio "vs before", optional;
# BEFORE_ENV its environment, e.g. LD_LIBRARY_PATH), NGINX (default: nginx in PATH or /usr/sbin; "none"
# leaves it out), PYTHON (default the system python3; "none" leaves it out),
# ROUND_SECONDS (per round, default 2; not SECONDS, which bash keeps as
# its own clock), ROUNDS (default 3), CELLS (default
# "1k:1:ka 1k:100:ka 1k:100:close 100k:100:ka"), LOADGEN (bench/httpd-bench).
set -u
: "${top_builddir:=.}"
HTTPD=${HTTPD:-"$top_builddir/tools/safe-httpd/safe-httpd"}
LOADGEN=${LOADGEN:-"$top_builddir/bench/httpd-bench"}
BEFORE=${BEFORE:-}
BEFORE_ENV=${BEFORE_ENV:-}
SECONDS_PER_ROUND=${ROUND_SECONDS:-2}
ROUNDS=${ROUNDS:-3}
CELLS=${CELLS:-"1k:1:ka 1k:100:ka 1k:100:close 100k:100:ka"}
PYTHON=${PYTHON:-$(command -v /usr/bin/python3 python3 | head -1)}
[ "$PYTHON" = none ] && PYTHON=
NGINX=${NGINX:-$(command -v nginx /usr/sbin/nginx 2>/dev/null | head -1)}
[ "$NGINX" = none ] && NGINX=
for p in "$HTTPD" "$LOADGEN"; do
	[ -x "$p" ] || { echo "httpd-bench: $p not built" >&2; exit 1; }
done

BENCH_NAME=httpd-bench
. "${top_srcdir:-$(dirname "$0")/..}/bench/httpd-servers.sh"
bench_setup
head -c 1024 /dev/urandom >"$W/1k.bin"
head -c 102400 /dev/urandom >"$W/100k.bin"
chmod 644 "$W"/*.bin

servers=(new)
start_safe new "" "$HTTPD" --access-log "$T/new.log"
if [ -n "$BEFORE" ]; then
	servers+=(before)
	start_safe before "$BEFORE_ENV" "$BEFORE" --access-log "$T/before.log"
fi
if [ -n "$NGINX" ]; then
	PORT_nginx=$(free_port)
	start_nginx "$NGINX" "$PORT_nginx" "$W" "worker_processes auto;" \
		"access_log $T/nginx/access.log;
    sendfile on;
    tcp_nopush on;
    keepalive_requests 100000;" \
		"listen 127.0.0.1:$PORT_nginx reuseport;
        disable_symlinks on;"
	servers+=(nginx)
fi
if [ -n "$PYTHON" ]; then
	PORT_python=$(free_port)
	# -u: the "Serving HTTP on ... port N" line is not held in a buffer
	"$PYTHON" -u -m http.server --bind 127.0.0.1 --directory "$W" "$PORT_python" \
		>"$T/python.out" 2>&1 &
	PIDS+=($!)
	wait_port python "$PORT_python"
	servers+=(python)
fi
sleep 0.3

declare -A label=([new]="safe-httpd" [before]="before" [nginx]="nginx" [python]="python3")
declare -A best
printf '%-6s %7s %-10s' file clients mode
for s in "${servers[@]}"; do printf ' %13s' "${label[$s]} req/s"; done
[ -n "$BEFORE" ] && printf ' %10s' "vs before"
[ -n "$NGINX" ] && printf ' %9s' "vs nginx"
[ -n "$PYTHON" ] && printf ' %10s' "vs python"
echo
for cell in $CELLS; do
	IFS=: read -r f c mode <<<"$cell"
	extra=
	[ "$mode" = close ] && extra=close
	for s in "${servers[@]}"; do best[$s]=0; done
	errs=0
	for _ in $(seq "$ROUNDS"); do
		for s in "${servers[@]}"; do
			port_var=PORT_$s
			read -r rps _ e _ < <("$LOADGEN" "${!port_var}" "/$f.bin" "$c" \
				"$SECONDS_PER_ROUND" $extra)
			[ "${rps:-0}" -gt "${best[$s]}" ] && best[$s]=$rps
			errs=$((errs + ${e:-0}))
		done
	done
	printf '%-6s %7s %-10s' "${f/k/ KiB}" "$c" "$([ "$mode" = close ] && echo close || echo keep-alive)"
	for s in "${servers[@]}"; do printf ' %13s' "${best[$s]}"; done
	ratio() { awk -v a="${best[new]}" -v b="$1" 'BEGIN{ if (b > 0) printf "%.2fx", a/b; else printf "-" }'; }
	[ -n "$BEFORE" ] && printf ' %10s' "$(ratio "${best[before]}")"
	[ -n "$NGINX" ] && printf ' %9s' "$(ratio "${best[nginx]}")"
	[ -n "$PYTHON" ] && printf ' %10s' "$(ratio "${best[python]}")"
	[ "$errs" != 0 ] && printf '  (%s errors)' "$errs"
	echo
done
echo "(best of $ROUNDS rounds of $SECONDS_PER_ROUND s per server and cell, servers in turn;" \
	"python's http.server answers HTTP/1.0 and closes every connection)"
