# SPDX-License-Identifier: MIT
# Sourced by bench/httpd-bench.sh and bench/owner-race.sh: their temporary
# tree and starting the servers they compare. The caller sets BENCH_NAME
# (for names and messages) and PYTHON (may be empty).

# bench_setup: T, a new temporary directory, and W=$T/www, both readable by
# others (nginx's workers may run as another user); at exit every server
# in PIDS is stopped and T removed
bench_setup() {
	T=$(mktemp -d "${TMPDIR:-/tmp}/$BENCH_NAME.XXXXXX") || exit 1
	W=$T/www
	mkdir "$W"
	chmod 755 "$T" "$W"
	PIDS=()
	trap bench_cleanup EXIT
}
bench_cleanup() {
	for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done
	wait 2>/dev/null
	rm -rf "$T"
}

# free_port: a port of 127.0.0.1 free at the time
free_port() {
	"$PYTHON" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])' 2>/dev/null ||
		echo $((20000 + RANDOM % 20000))
}
# wait_port NAME PORT: until something accepts on 127.0.0.1:PORT
wait_port() {
	for _ in $(seq 100); do
		(exec 3<>"/dev/tcp/127.0.0.1/$2") 2>/dev/null && return 0
		sleep 0.1
	done
	echo "$BENCH_NAME: $1 did not start" >&2
	exit 1
}
# start_safe NAME ENV BINARY OPTION...: a safe-httpd (BINARY, with the
# environment ENV, e.g. LD_LIBRARY_PATH=...) serving W on a free port of
# 127.0.0.1; its port in PORT_<NAME>
start_safe() {
	local name=$1 env=$2 bin=$3 port=
	shift 3
	# shellcheck disable=SC2086
	env $env "$bin" "$@" "$W" 0 >"$T/$name.out" 2>"$T/$name.err" &
	PIDS+=($!)
	for _ in $(seq 100); do
		port=$(sed -n 's/^listening on 127\.0\.0\.1:\([0-9]*\)$/\1/p' "$T/$name.out")
		[ -n "$port" ] && break
		sleep 0.1
	done
	[ -n "$port" ] || { echo "$BENCH_NAME: $name did not start" >&2; cat "$T/$name.err" >&2; exit 1; }
	printf -v "PORT_$name" %s "$port"
}
# start_nginx NGINX PORT ROOT MAIN HTTP SERVER: nginx serving ROOT on
# 127.0.0.1:PORT, its files in $T/nginx; MAIN, HTTP and SERVER are lines
# for its main, http and server contexts. Returns once it accepts.
start_nginx() {
	mkdir -p "$T/nginx"
	cat >"$T/nginx/nginx.conf" <<EOF_NGINX
$4
pid $T/nginx/nginx.pid;
error_log $T/nginx/error.log;
events { worker_connections 4096; }
http {
    include /etc/nginx/mime.types;
    default_type application/octet-stream;
    client_body_temp_path $T/nginx/body;
    proxy_temp_path $T/nginx/proxy;
    fastcgi_temp_path $T/nginx/fastcgi;
    uwsgi_temp_path $T/nginx/uwsgi;
    scgi_temp_path $T/nginx/scgi;
    $5
    server {
        root $3;
        $6
    }
}
EOF_NGINX
	"$1" -p "$T/nginx" -c "$T/nginx/nginx.conf" -g 'daemon off;' 2>"$T/nginx/stderr" &
	PIDS+=($!)
	wait_port nginx "$2"
}
