#!/bin/bash
# SPDX-License-Identifier: MIT
# bench/httpd-bench.sh: requests/s of httpd/safe-httpd for a 1 KiB and a
# 100 KiB file at 1, 10 and 50 concurrent keep-alive clients, side by side
# with `python3 -m http.server` on the same files, as a table. Run by
# `make bench-httpd`; a benchmark, never a test.
#
# Environment: HTTPD (the server, default httpd/safe-httpd), BEFORE
# (another safe-httpd binary for a before/after column, optional), SECONDS
# (per cell, default 3), CLIENTS (default "1 10 50"), PYTHON (default the
# system python3; "none" leaves the column out), LOADGEN (bench/httpd-bench).
set -u
: "${top_builddir:=.}"
HTTPD=${HTTPD:-"$top_builddir/httpd/safe-httpd"}
LOADGEN=${LOADGEN:-"$top_builddir/bench/httpd-bench"}
BEFORE=${BEFORE:-}
SECONDS_PER_CELL=${SECONDS:-3}
CLIENTS=${CLIENTS:-"1 10 50"}
PYTHON=${PYTHON:-$(command -v /usr/bin/python3 python3 | head -1)}
[ "$PYTHON" = none ] && PYTHON=
for p in "$HTTPD" "$LOADGEN"; do
	[ -x "$p" ] || { echo "httpd-bench: $p not built" >&2; exit 1; }
done

T=$(mktemp -d "${TMPDIR:-/tmp}/httpd-bench.XXXXXX") || exit 1
PIDS=()
cleanup() {
	for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done
	wait 2>/dev/null
	rm -rf "$T"
}
trap cleanup EXIT
head -c 1024 /dev/urandom >"$T/1k.bin"
head -c 102400 /dev/urandom >"$T/100k.bin"

# start NAME CMD...: start a server that serves $T on a free port; its port
# in PORT_<NAME>
start() {
	local name=$1 port
	shift
	"$@" >"$T/$name.out" 2>/dev/null &
	PIDS+=($!)
	for _ in $(seq 100); do
		port=$(sed -n 's/.*127\.0\.0\.1:\([0-9][0-9]*\).*/\1/p; s/.*port \([0-9][0-9]*\).*/\1/p' \
			"$T/$name.out" | head -1)
		[ -n "$port" ] && break
		sleep 0.1
	done
	[ -n "$port" ] || { echo "httpd-bench: $name did not start" >&2; exit 1; }
	printf -v "PORT_$name" %s "$port"
}

servers=(new)
start new "$HTTPD" -q "$T" 0
if [ -n "$BEFORE" ]; then
	servers+=(before)
	start before "$BEFORE" -q "$T" 0
fi
if [ -n "$PYTHON" ]; then
	# a free port for python (it does not print the one it picked with 0)
	pyport=$("$PYTHON" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
	servers+=(python)
	# -u: the "Serving HTTP on ... port N" line is not held in a buffer
	start python "$PYTHON" -u -m http.server --bind 127.0.0.1 --directory "$T" "$pyport"
fi
sleep 0.3

declare -A rate
declare -A label=([new]="safe-httpd" [before]="before" [python]="python3 http.server")
printf '%-9s %7s' file clients
for s in "${servers[@]}"; do printf ' %20s' "${label[$s]} req/s"; done
[ -n "$PYTHON" ] && printf ' %12s' "vs python"
echo
for f in 1k 100k; do
	for c in $CLIENTS; do
		printf '%-9s %7s' "${f/k/ KiB}" "$c"
		for s in "${servers[@]}"; do
			port_var=PORT_$s
			read -r rps _ errs _ < <("$LOADGEN" "${!port_var}" "/$f.bin" "$c" \
				"$SECONDS_PER_CELL")
			rate[$s]=$rps
			cell=$rps
			[ "${errs:-0}" != 0 ] && cell="$rps ($errs err)"
			printf ' %20s' "$cell"
		done
		if [ -n "$PYTHON" ] && [ "${rate[python]:-0}" -gt 0 ]; then
			printf ' %11sx' "$(awk -v a="${rate[new]}" -v b="${rate[python]}" 'BEGIN{printf "%.1f", a/b}')"
		fi
		echo
	done
done
echo "($SECONDS_PER_CELL s per cell, keep-alive where the server allows it; python's" \
	"http.server answers HTTP/1.0 and closes each connection)"
