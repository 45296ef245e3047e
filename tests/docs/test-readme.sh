#!/bin/sh
# README.md's usage example, ported as a user would: its first C block
# (http_status, serve, store) compiled with -Wall -Wextra -Werror next to a
# small driver, and run against a document root: a URL path gets the file,
# the client's escapes stay inside the root, store() creates its parents and
# a failed store() leaves nothing behind.
set -eu
srcdir=${top_srcdir:-.}
. "$srcdir/tests/harness/row.sh"
builddir=${top_builddir:-.}
cc=${CC:-cc}
lib="$builddir/lib/.libs/libsafeopen.so"
[ -f "$lib" ] || { echo "test-readme: library $lib not built"; exit 1; }
libdir=${lib%/*}
T=$(mktemp -d)
row_cleanup='rm -rf "$T"'
awk '/^```c$/ { n++; if (n == 1) on = 1; next } /^```/ { on = 0 } on' "$srcdir/README.md" > "$T/readme.c"
grep -q '^int serve(' "$T/readme.c" || { echo "test-readme: no serve() in README's first C block"; exit 1; }
cat >> "$T/readme.c" <<'DRIVER'

/* The driver: ROOT get URL-PATH | ROOT put PATH DATA */
#include <string.h>
int main(int argc, char *argv[])
{
        if (argc != 4 && argc != 5)
                return 2;
        int open_before = 0;
        for (int fd = 0; fd < 1024; fd++)
                open_before += fcntl(fd, F_GETFD) >= 0;
        int root = open(argv[1], O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (root < 0)
                return 2;
        int rc = 0;
        if (!strcmp(argv[2], "get")) {
                off_t size;
                int status;
                int fd = serve(root, argv[3], &size, &status);
                printf("%d", status);
                if (fd >= 0) {
                        char buf[256];
                        ssize_t n = read(fd, buf, sizeof(buf));
                        printf(" %lld %.*s", (long long)size, (int)(n > 0 ? n : 0), buf);
                        close(fd);
                }
                printf("\n");
        } else if (argc == 5) {
                rc = store(root, argv[3], argv[4], strlen(argv[4])) == 0 ? 0 : 1;
                if (rc)
                        printf("%d\n", http_status(errno));
        }
        close(root);
        /* Nothing left open. */
        int open_after = 0;
        for (int fd = 0; fd < 1024; fd++)
                open_after += fcntl(fd, F_GETFD) >= 0;
        return open_after == open_before ? rc : 3;
}
DRIVER
# The program is kept in the build tree (tests/docs/readme-example/, removed
# by make clean) as make would keep it: compiled again when its text, the
# header, the library or the compiler and its flags changed (a timestamp
# equal to the header's or the library's counts as changed), as
# check-man-examples.sh keeps the manual's.
cache=$builddir/tests/docs/readme-example
[ -d "$cache" ] || mkdir -p "$cache"
sig="$cc|${TEST_LINK_FLAGS:-}|$srcdir|$libdir"
old=; [ -f "$cache/signature" ] && IFS= read -r old <"$cache/signature"
[ "$old" = "$sig" ] || { rm -f "$cache"/*; printf '%s\n' "$sig" >"$cache/signature"; }
cmp -s "$T/readme.c" "$cache/readme.c" || cp "$T/readme.c" "$cache/readme.c"
if ! { [ -f "$cache/readme" ] && [ "$cache/readme" -nt "$cache/readme.c" ] &&
	[ "$cache/readme" -nt "$srcdir/include/safeopen.h" ] && [ "$cache/readme" -nt "$lib" ]; }; then
	rm -f "$cache/readme"
	# shellcheck disable=SC2086
	$cc -std=c11 -Wall -Wextra -Werror -I"$srcdir/include" ${TEST_LINK_FLAGS:-} "$cache/readme.c" \
		-o "$cache/readme" -L"$libdir" -lsafeopen -Wl,-rpath,"$libdir" || { rm -f "$cache/readme"; exit 1; }
fi
fails=0
n=0
expect() { # DESCRIPTION WANT ARGS...
	d=$1 want=$2; shift 2
	n=$((n + 1))
	got=$("$cache/readme" "$@" 2>&1) && rc=0 || rc=$?
	if [ "$got" != "$want" ] || [ $rc -gt 1 ]; then
		echo "FAIL: $d: got '$got' (exit $rc), want '$want'"; fails=$((fails + 1))
	fi
}
R="$T/www"
mkdir -p "$R/docs" "$T/outside"
printf hello > "$R/docs/a.html"
printf secret > "$T/outside/secret"
ln -s /docs/a.html "$R/abs"             # absolute: means ROOT/docs/a.html
ln -s "$T/outside/secret" "$R/out"      # absolute: ROOT$T/outside/secret, missing
ln -s ../../outside/secret "$R/docs/up" # climbs: clamped at the root
ln -s loop "$R/loop"
mkfifo "$R/fifo"
expect "GET /docs/a.html" "200 5 hello" "$R" get /docs/a.html
expect "GET docs/a.html" "200 5 hello" "$R" get docs/a.html
expect "GET /../docs/a.html" "200 5 hello" "$R" get /../docs/a.html
expect "GET /abs (absolute symlink in the tree)" "200 5 hello" "$R" get /abs
expect "GET /out (absolute symlink to outside)" "404" "$R" get /out
expect "GET /docs/up (climbing symlink)" "404" "$R" get /docs/up
expect "GET /../outside/secret" "404" "$R" get /../outside/secret
expect "GET /loop" "403" "$R" get /loop
expect "GET /docs (a directory)" "403" "$R" get /docs
expect "GET /fifo (does not hang)" "403" "$R" get /fifo
expect "GET /missing" "404" "$R" get /missing
S="$T/spool"
mkdir "$S"
expect "store a/b/c.txt" "" "$S" put a/b/c.txt data
[ "$(cat "$S/a/b/c.txt")" = data ] || { echo "FAIL: store a/b/c.txt: wrong content"; fails=$((fails + 1)); }
expect "store a/b/c.txt again" "409" "$S" put a/b/c.txt data
expect "store ../x" "403" "$S" put ../x data
long=$(printf '%0300d' 0)
expect "store n1/n2/(300 bytes)" "414" "$S" put "n1/n2/$long" data
[ ! -e "$S/n1" ] || { echo "FAIL: a failed store left n1 behind"; fails=$((fails + 1)); }
[ "$(cd "$S" && find . | sort | tr '\n' ' ')" = ". ./a ./a/b ./a/b/c.txt " ] ||
	{ echo "FAIL: the spool holds more than a/b/c.txt"; fails=$((fails + 1)); }
[ "$(cat "$T/outside/secret")" = secret ] && [ "$(ls "$T/outside")" = secret ] ||
	{ echo "FAIL: outside changed"; fails=$((fails + 1)); }
echo "test-readme: $n checks, $fails failed"
[ $fails -eq 0 ]
