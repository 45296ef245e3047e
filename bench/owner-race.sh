#!/bin/bash
# SPDX-License-Identifier: MIT
# bench/owner-race.sh: "follow a link only when its owner owns what it leads
# to", safe-httpd --symlinks owner-match next to nginx's
# `disable_symlinks if_not_owner`, on the same tree. Research, not a test: it
# reports what each server serves and never fails on what it finds (issue
# 42). Run by `make bench-owner-race`; needs root (the tree belongs to uids
# 1001 and 1002, the attacker runs as 1001) and python3 (the attacker and the
# client); without nginx only safe-httpd is tried.
#
# The tree (ROOT served by both):
#   a/        uid 1001: own.txt, and links owned by 1001:
#             same -> own.txt, foreign -> ../v/secret.txt, fdir -> ../v,
#             chain -> hop, where hop (a link owned by 1002) -> own.txt,
#             l (the attacker's link, swapped by the race)
#             rootlink -> own.txt, owned by root
#   v/        uid 1002: secret.txt (a unique token), and idx/index.html, a
#             link of 1001's in a 1001 directory leading to secret.txt
# Static part: one GET per case on each server, the status and whether the
# body holds the token; the listing of /a/ (nginx: autoindex on), whether it
# names the refused links and shows secret.txt's size.
# Race: the attacker (uid 1001) keeps replacing a/l, by symlink + rename,
# with a link to own.txt and one to ../v/secret.txt; a client GETs /a/l
# REQUESTS times from each server, over one keep-alive connection, and
# counts what came back: own.txt, the token, a refusal.
#
# Environment: HTTPD (default tools/safe-httpd/safe-httpd), NGINX (default
# nginx in PATH or /usr/sbin; "none" leaves it out), PYTHON, REQUESTS
# (default 20000).
set -u
: "${top_builddir:=.}"
HTTPD=${HTTPD:-"$top_builddir/tools/safe-httpd/safe-httpd"}
REQUESTS=${REQUESTS:-20000}
PYTHON=${PYTHON:-$(command -v /usr/bin/python3 python3 | head -1)}
NGINX=${NGINX:-$(command -v nginx /usr/sbin/nginx 2>/dev/null | head -1)}
[ "$NGINX" = none ] && NGINX=
[ -x "$HTTPD" ] || { echo "owner-race: $HTTPD not built" >&2; exit 1; }
if [ "$(id -u)" != 0 ]; then
	echo "owner-race: needs root (a tree owned by uids 1001 and 1002); nothing done"
	exit 0
fi
if [ -z "$PYTHON" ]; then
	echo "owner-race: needs python3; nothing done"
	exit 0
fi

BENCH_NAME=owner-race
. "${top_srcdir:-$(dirname "$0")/..}/bench/httpd-servers.sh"
bench_setup
TOKEN="owner-race-secret-$$-$RANDOM"
mkdir -p "$W/a" "$W/v/idx"
echo "own file of 1001" >"$W/a/own.txt"
# 4097 bytes: a size that no date in a listing row can contain
{ echo "$TOKEN"; head -c 4096 /dev/zero | tr '\0' x; } | head -c 4097 >"$W/v/secret.txt"
ln -s own.txt "$W/a/same"
ln -s ../v/secret.txt "$W/a/foreign"
ln -s ../v "$W/a/fdir"
ln -s own.txt "$W/a/hop"
ln -s hop "$W/a/chain"
ln -s own.txt "$W/a/l"
ln -s own.txt "$W/a/rootlink"
ln -s ../secret.txt "$W/v/idx/index.html"
chmod 644 "$W/a/own.txt" "$W/v/secret.txt"
chown -R 1001 "$W/a"
chown -h 1002 "$W/a/hop"
chown -h 0 "$W/a/rootlink"
chown 1002 "$W/v" "$W/v/secret.txt"
chown 1001 "$W/v/idx"
chown -h 1001 "$W/v/idx/index.html"

servers=(safe)
"$HTTPD" -q --symlinks owner-match "$W" 0 >"$T/safe.out" 2>"$T/safe.err" &
PIDS+=($!)
for _ in $(seq 100); do
	PORT_safe=$(sed -n 's/^listening on 127\.0\.0\.1:\([0-9]*\)$/\1/p' "$T/safe.out")
	[ -n "$PORT_safe" ] && break
	sleep 0.1
done
[ -n "$PORT_safe" ] || { echo "owner-race: safe-httpd did not start" >&2; exit 1; }
if [ -n "$NGINX" ]; then
	PORT_nginx=$(free_port)
	# one process (master_process off), so it runs as root like safe-httpd
	# here: the owner check is the only thing between a link and a file
	start_nginx "$NGINX" "$PORT_nginx" "$W" "master_process off;" \
		"access_log off;
    keepalive_requests 1000000;" \
		"listen 127.0.0.1:$PORT_nginx;
        disable_symlinks if_not_owner;
        autoindex on;"
	servers+=(nginx)
fi
declare -A label=([safe]="safe-httpd --symlinks owner-match" [nginx]="nginx disable_symlinks if_not_owner")

echo "Static cases (status; LEAK: the body holds uid 1002's token):"
printf '  %-52s' "case"
for s in "${servers[@]}"; do printf ' %-12s' "${s}"; done
echo
while IFS='|' read -r path what; do
	printf '  %-52s' "$what"
	for s in "${servers[@]}"; do
		port_var=PORT_$s
		code=$(curl -s -o "$T/body" -w '%{http_code}' "http://127.0.0.1:${!port_var}$path")
		grep -q "$TOKEN" "$T/body" && code="$code LEAK"
		printf ' %-12s' "$code"
	done
	echo
done <<'EOF'
/a/own.txt|a file of 1001
/a/same|1001's link to 1001's file
/a/foreign|1001's link to 1002's file
/a/fdir/secret.txt|1001's link to 1002's directory (middle)
/a/chain|1001's link -> 1002's link -> 1001's file
/a/rootlink|root's link to 1001's file
/v/idx/|index.html: 1001's link to 1002's file
EOF
echo "Listing of /a/ (the names it shows):"
for s in "${servers[@]}"; do
	port_var=PORT_$s
	curl -s -o "$T/list" "http://127.0.0.1:${!port_var}/a/"
	names=$(grep -o 'href="[^"]*"' "$T/list" | sed 's/^href="//; s/"$//' | grep -v '^\.\./$' | tr '\n' ' ')
	shown=no
	grep -E 'href="foreign"' "$T/list" | grep -qwF 4097 && shown=yes
	printf "  %-40s %s(the size of uid 1002's file next to foreign: %s)\n" "${label[$s]}:" "$names" "$shown"
done

echo "Race: uid 1001 swaps a/l between own.txt and ../v/secret.txt; $REQUESTS GETs of /a/l each:"
"$PYTHON" - "$W/a" 1001 >"$T/attacker.out" 2>&1 <<'EOF' &
import os, sys
d, uid = sys.argv[1], int(sys.argv[2])
os.setgroups([]); os.setgid(uid); os.setuid(uid)
os.chdir(d)
import signal
swaps = 0
def done(*_):
    print(swaps, flush=True)
    os._exit(0)
signal.signal(signal.SIGTERM, done)
targets = ("own.txt", "../v/secret.txt")
while True:
    for t in targets:
        try: os.unlink("l.new")
        except FileNotFoundError: pass
        os.symlink(t, "l.new")
        os.rename("l.new", "l")
        swaps += 1
EOF
APID=$!
PIDS+=($APID)
for s in "${servers[@]}"; do
	port_var=PORT_$s
	"$PYTHON" - "${!port_var}" "$REQUESTS" "$TOKEN" "$W/a/l" <<'EOF' >"$T/race.$s"
import http.client, os, sys, time
port, n, token, link = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3].encode(), sys.argv[4]
own = foreign = refused = other = 0
changes = 0
last = os.readlink(link)
conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
t0 = time.monotonic()
for _ in range(n):
    conn.request("GET", "/a/l")
    r = conn.getresponse()
    body = r.read()
    if r.status == 200 and token in body:
        foreign += 1
    elif r.status == 200 and body.startswith(b"own file of 1001"):
        own += 1
    elif r.status in (403, 404):
        refused += 1
    else:
        other += 1
    try:
        cur = os.readlink(link)
        changes += cur != last
        last = cur
    except OSError:
        pass
dt = time.monotonic() - t0
print(f"{own} {foreign} {refused} {other} {changes} {n / dt:.0f}")
EOF
	read -r own foreign refused other changes rps <"$T/race.$s"
	printf '  %-40s own %6s  FOREIGN %6s  refused %6s  other %s  (%s req/s; the link changed %s times between requests)\n' \
		"${label[$s]}:" "$own" "$foreign" "$refused" "$other" "$rps" "$changes"
done
kill "$APID" 2>/dev/null
wait "$APID" 2>/dev/null
echo "  (the attacker replaced the link $(cat "$T/attacker.out") times in all)"
echo "(a refusal: the attacker's link led to 1002's file, or was being replaced; FOREIGN: a body"
echo " with 1002's token was served. protected_hardlinks=$(cat /proc/sys/fs/protected_hardlinks 2>/dev/null || echo '?'),"
echo " protected_symlinks=$(cat /proc/sys/fs/protected_symlinks 2>/dev/null || echo '?'); load: $(cut -d' ' -f1-3 /proc/loadavg))"
