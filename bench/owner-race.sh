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
# Races: the attacker (uid 1001) keeps replacing a/l, by symlink + rename,
# with a link to own.txt and one to ../v/secret.txt; then, in s/ (a
# directory where both may rename), l alternates between a link to
# ../v/secret.txt and 1002's file decoy renamed over it. A client GETs l
# REQUESTS times from each server, over one keep-alive connection, and
# counts what came back: own.txt or the decoy, the token, a refusal.
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
start_safe safe "" "$HTTPD" -q --symlinks owner-match
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

# The attacker (uid 1001) in DIR: "swap" replaces l, by symlink + rename,
# with a link to own.txt and one to ../v/secret.txt; "decoy" (in a
# directory where both users may rename, as a shared group directory
# without the sticky bit) makes l a link to ../v/secret.txt, then renames
# 1002's file decoy over it, and back.
cat >"$T/attacker.py" <<'EOF'
import os, signal, sys
d, uid, mode = sys.argv[1], int(sys.argv[2]), sys.argv[3]
os.setgroups([]); os.setgid(uid); os.setuid(uid)
os.chdir(d)
swaps = 0
def done(*_):
    print(swaps, flush=True)
    os._exit(0)
signal.signal(signal.SIGTERM, done)
def link(target):
    try: os.unlink("l.new")
    except FileNotFoundError: pass
    os.symlink(target, "l.new")
    os.rename("l.new", "l")
while True:
    if mode == "swap":
        link("own.txt")
        link("../v/secret.txt")
    else:
        link("../v/secret.txt")
        os.rename("decoy", "l")
        os.rename("l", "decoy")
    swaps += 2
EOF
# The client: N GETs of PATH over one keep-alive connection, counted by
# what came back
cat >"$T/client.py" <<'EOF'
import http.client, sys, time
port, n, token, path = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3].encode(), sys.argv[4]
own = foreign = refused = other = 0
conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
t0 = time.monotonic()
for _ in range(n):
    conn.request("GET", path)
    r = conn.getresponse()
    body = r.read()
    if r.status == 200 and token in body:
        foreign += 1
    elif r.status == 200 and (body.startswith(b"own file of 1001") or body.startswith(b"decoy")):
        own += 1
    elif r.status in (403, 404):
        refused += 1
    else:
        other += 1
print(f"{own} {foreign} {refused} {other} {n / (time.monotonic() - t0):.0f}")
EOF
# race DIR MODE URL-PATH WHAT: the attacker in DIR, REQUESTS GETs from each server
race() {
	echo "Race: $4; $REQUESTS GETs of $3 each:"
	"$PYTHON" "$T/attacker.py" "$1" 1001 "$2" >"$T/attacker.out" 2>&1 &
	local apid=$!
	PIDS+=($apid)
	for s in "${servers[@]}"; do
		port_var=PORT_$s
		"$PYTHON" "$T/client.py" "${!port_var}" "$REQUESTS" "$TOKEN" "$3" >"$T/race.$s"
		read -r own foreign refused other rps <"$T/race.$s"
		printf '  %-40s own %6s  FOREIGN %6s  refused %6s  other %s  (%s req/s)\n' \
			"${label[$s]}:" "$own" "$foreign" "$refused" "$other" "$rps"
	done
	kill "$apid" 2>/dev/null
	wait "$apid" 2>/dev/null
	echo "  (the attacker changed l $(cat "$T/attacker.out") times in all)"
}
race "$W/a" swap /a/l "uid 1001 swaps a/l between own.txt and ../v/secret.txt"
mkdir "$W/s"
chmod 777 "$W/s"
echo "decoy of 1002" >"$W/s/decoy"
chown 1002 "$W/s/decoy"
chmod 644 "$W/s/decoy"
race "$W/s" decoy /s/l "in s/ (mode 777, no sticky bit) uid 1001 makes l a link to ../v/secret.txt, then renames 1002's decoy over it"
echo "(own: own.txt or the decoy; a refusal: the link led to 1002's file, or l was missing;"
echo " FOREIGN: a body with 1002's token was served. protected_hardlinks=$(cat /proc/sys/fs/protected_hardlinks 2>/dev/null || echo '?'),"
echo " protected_symlinks=$(cat /proc/sys/fs/protected_symlinks 2>/dev/null || echo '?'); load: $(cut -d' ' -f1-3 /proc/loadavg))"
