#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/tools/test-cli.sh: the safeopen command-line tool. Every command, the exit
# codes (0 success, 1 failure, 2 usage), the error message format, escapes
# refused, put with xattrs. Prints TAP, one line per check.
set -u
: "${top_builddir:=.}"
SAFEOPEN=${SAFEOPEN:-"$top_builddir/tools/safeopen/safeopen"}
. "${top_srcdir:-.}/tests/harness/direct.sh"
. "${top_srcdir:-.}/tests/harness/partial.sh"
[ -x "$SAFEOPEN" ] || bail "test-cli: $SAFEOPEN not built"
direct_binary SAFEOPEN

T=$(mktemp -d "${TMPDIR:-/tmp}/test-cli.XXXXXX") || exit 99
trap 'rm -rf "$T"' EXIT
umask 022
R=$T/root
SECRET="cli-secret-$$-token"

n=0
failed=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() {
	n=$((n + 1)); failed=$((failed + 1)); echo "not ok $n - $1"
	echo "#   exit status: $rc"; sed 's/^/#   stdout: /' "$T/out" | head -5
	sed 's/^/#   stderr: /' "$T/err" | head -5
}
# so ARGS...: run safeopen, keep its stdout, stderr and exit status
so() { "$SAFEOPEN" "$@" >"$T/out" 2>"$T/err" </dev/null; rc=$?; }
# slurp FILE: s = FILE's content without its trailing newlines, as "$(cat
# FILE)" but read by the shell (a process costs ~10 ms; expect runs 77 times)
slurp() {
	s= s_nl=
	while IFS= read -r s_line || [ -n "$s_line" ]; do
		s=$s$s_nl$s_line s_nl='
'
	done <"$1"
	while :; do case $s in *'
') s=${s%?} ;; *) break ;; esac; done
}
# expect DESC STATUS [STDOUT [STDERR]]: check the last run; STDOUT/STDERR are
# exact contents ("-" skips the comparison); the secret in neither
expect() {
	desc=$1; want_rc=$2; want_out=${3--}; want_err=${4--}; good=yes
	[ "$rc" -eq "$want_rc" ] || good=no
	slurp "$T/out"; got_out=$s
	slurp "$T/err"; got_err=$s
	if [ "$want_out" != - ] && [ "$got_out" != "$want_out" ]; then good=no; fi
	if [ "$want_err" != - ] && [ "$got_err" != "$want_err" ]; then good=no; fi
	case "$got_out
$got_err" in *"$SECRET"*) good=no; desc="$desc (SECRET LEAKED)" ;; esac
	if [ $good = yes ]; then ok "$desc"; else not_ok "$desc"; fi
}
check() { desc=$1; shift; if "$@"; then ok "$desc"; else rc=-; not_ok "$desc"; fi; }
# has FILE PATTERN...: every shell PATTERN matches a whole line of FILE (read
# by this shell, as slurp: a grep per check cost a process start)
has() {
	h_f=$1; shift
	for h_p; do
		h_ok=no
		while IFS= read -r h_l || [ -n "$h_l" ]; do
			case $h_l in $h_p) h_ok=yes; break ;; esac
		done <"$h_f"
		[ $h_ok = yes ] || return 1
	done
}

# ---------------------------------------------------------------- the tree
mkdir -p "$R/dir/sub" "$R/empty"
printf 'hello\n' >"$R/dir/file.txt"
printf 'world\n' >"$R/dir/sub/two.txt"
printf '%s\n' "$SECRET" >"$T/secret"
ln -s ../secret "$R/link-out"
ln -s "$T/secret" "$R/abs-link"
ln -s dir/file.txt "$R/inlink"
ln -s ../../dir/file.txt "$R/dir/sub/up"
: >"$T/out"; : >"$T/err"

# ---------------------------------------------------------------- cat
so "$R" cat dir/file.txt; expect "cat a file" 0 hello ""
so "$R" cat dir/file.txt dir/sub/two.txt; expect "cat two files" 0 "$(printf 'hello\nworld')" ""
so "$R" cat inlink; expect "cat follows a link inside" 0 hello ""
so "$R" cat dir/sub/up; expect "cat: link climbing with .. but staying inside" 0 hello ""
so "$R" cat ../secret
ESC="path escapes the root directory (EXDEV)"
expect "cat ../secret: refused, exit 1" 1 "" "safeopen: ../secret: $ESC"
so "$R" cat link-out
expect "cat through a symlink to outside" 1 "" "safeopen: link-out: $ESC"
so "$R" cat abs-link; expect "cat through an absolute symlink" 1 ""
so "$R" cat "$T/secret"
expect "cat an absolute path" 1 "" "safeopen: $T/secret: path escapes the root directory (EXDEV)"
so "$R" cat dir/../../secret; expect "cat dir/../../secret" 1 ""
so "$R" cat nope dir/file.txt
expect "cat: a missing file does not stop the others" 1 hello \
	"safeopen: nope: No such file or directory"
so --walker "$R" cat dir/file.txt; expect "--walker cat" 0 hello ""
so --walker "$R" cat ../secret
expect "--walker cat ../secret" 1 "" "safeopen: ../secret: path escapes the root directory (EXDEV)"
so --in-root "$R" cat /dir/file.txt; expect "--in-root: absolute path starts at ROOT" 0 hello ""
so --in-root "$R" cat ../../../dir/file.txt; expect "--in-root: .. stops at ROOT" 0 hello ""
so --in-root "$R" cat abs-link; expect "--in-root: absolute link stays inside (ENOENT)" 1 ""
so --no-symlinks "$R" cat inlink
expect "--no-symlinks refuses a link" 1 "" \
	"safeopen: inlink: forbidden symbolic link, or too many levels of links (ELOOP)"
so --symlinks-owner-match "$R" cat inlink; expect "--symlinks-owner-match: a link of the file's owner" 0 hello ""
if [ "$(id -u)" = 0 ]; then
	chown -h 1001 "$R/inlink"
	so --symlinks-owner-match "$R" cat inlink
	expect "--symlinks-owner-match refuses another owner's link (as root)" 1 "" \
		"safeopen: inlink: forbidden symbolic link, or too many levels of links (ELOOP)"
	so "$R" cat inlink; expect "without it the same link is followed" 0 hello ""
	chown -h 0 "$R/inlink"
else
	skip "--symlinks-owner-match refuses another owner's link: needs root (chown)"
fi
so "$R" cat -- dir/file.txt; expect "cat -- PATH" 0 hello ""
(cd "$R" && find . -type f -print0 | xargs -0 "$SAFEOPEN" "$R" cat) >"$T/out" 2>"$T/err"
rc=$?; expect "find -print0 | xargs -0 safeopen ROOT cat" 0 - ""
check "xargs output has both files" has "$T/out" world

# ---------------------------------------------------------------- stat, ls, resolve
so "$R" stat dir/file.txt; expect "stat a file" 0
check "stat: type and size" has "$T/out" '*Type: regular file*' '*Size: 6 *'
so "$R" stat inlink; expect "stat a link" 0
check "stat: a link is described, not followed" has "$T/out" '*File: inlink -> dir/file.txt*'
so "$R" stat link-out; expect "stat a link pointing outside (the link itself is inside)" 0
so "$R" stat link-out/x; expect "stat through a link to outside" 1 ""
so "$R" ls dir; expect "ls" 0 "$(printf 'file.txt\nsub')" ""
so "$R" ls; expect "ls ROOT" 0 "$(printf 'abs-link\ndir\nempty\ninlink\nlink-out')" ""
so "$R" ls -l dir/sub; expect "ls -l" 0
check "ls -l shows link targets" has "$T/out" '* up -> ../../dir/file.txt'
so "$R" ls link-out; expect "ls through a link to outside" 1 "" \
	"safeopen: link-out: path escapes the root directory (EXDEV)"
so "$R" resolve dir/sub/up; expect "resolve a link" 0 dir/file.txt ""
so "$R" resolve dir/./sub/../file.txt .
expect "resolve . and .." 0 "$(printf 'dir/file.txt\n.')" ""
so "$R" resolve ../x; expect "resolve an escape" 1 "" "safeopen: ../x: $ESC"
so --in-root "$R" resolve /../dir/../inlink; expect "--in-root resolve" 0 dir/file.txt ""

# ---------------------------------------------------------------- mkdir
so "$R" mkdir -p new/a/b; expect "mkdir -p" 0 "" ""
check "mkdir -p created the tree" test -d "$R/new/a/b"
so "$R" mkdir -p new/a/b; expect "mkdir -p an existing directory" 0 "" ""
so "$R" mkdir new; expect "mkdir an existing name" 1 "" "safeopen: new: File exists"
so "$R" mkdir -m 0700 private; expect "mkdir -m" 0 "" ""
check "mkdir -m sets the exact mode" test "$(stat -c %a "$R/private")" = 700
so "$R" mkdir -p -m 0500 gnu/x/y; expect "mkdir -p -m" 0 "" ""
check "mkdir -p: the parents get 0777 minus the umask, as mkdir(1)" \
	test "$(stat -c %a "$R/gnu/x")" = "$(printf %o $((0777 & ~$(umask))))"
check "mkdir -p -m: the last directory gets MODE" test "$(stat -c %a "$R/gnu/x/y")" = 500
so "$R" mkdir -p link-out/evil; expect "mkdir -p through a link to outside" 1
check "nothing created outside" test ! -e "$T/evil"

# ---------------------------------------------------------------- put
printf 'payload one\n' >"$T/in1"
printf 'payload two, longer\n' >"$T/in2"
"$SAFEOPEN" "$R" put dir/up.txt --xattr user.mime_type=text/plain --xattr user.origin=test-cli \
	<"$T/in1" >"$T/out" 2>"$T/err"; rc=$?
if [ $rc = 1 ] && grep -qi 'not supported' "$T/err"; then
	# No user xattrs on the filesystem of $TMPDIR (tmpfs before Linux 6.6).
	expect "put with xattrs, none on this filesystem: refused" 1 "" "-"
	check "put refused: no name, no temporary left" \
		sh -c "test ! -e '$R/dir/up.txt' && test -z \"\$(find '$R' -name '.safeopen-*')\""
	skip "put with xattrs: no user xattrs on ${TMPDIR:-/tmp}"
	"$SAFEOPEN" "$R" put dir/up.txt <"$T/in1" >"$T/out" 2>"$T/err"; rc=$?
	expect "put without xattrs" 0 "" ""
	check "put: content byte for byte" cmp -s "$T/in1" "$R/dir/up.txt"
	so "$R" stat dir/up.txt; expect "stat the new file" 0
else
	expect "put with two xattrs" 0 "" ""
	check "put: content byte for byte" cmp -s "$T/in1" "$R/dir/up.txt"
	so "$R" stat dir/up.txt; expect "stat the new file" 0
	check "put: xattrs stored" has "$T/out" ' Xattr: user.mime_type="text/plain"' ' Xattr: user.origin="test-cli"'
	if command -v getfattr >/dev/null 2>&1; then
		check "put: getfattr agrees" sh -c \
			"getfattr --absolute-names --only-values -n user.mime_type '$R/dir/up.txt' |
			grep -qx text/plain"
	else
		skip "put: xattrs read back with getfattr: getfattr (package attr) not installed"
	fi
fi
check "put: mode 0666 minus umask" test "$(stat -c %a "$R/dir/up.txt")" = 644
"$SAFEOPEN" "$R" put dir/up.txt <"$T/in2" >"$T/out" 2>"$T/err"; rc=$?
expect "put over an existing file without --replace" 1 "" "safeopen: dir/up.txt: File exists"
check "the old file is untouched" cmp -s "$T/in1" "$R/dir/up.txt"
"$SAFEOPEN" "$R" put --replace dir/up.txt --sync --mode 0600 <"$T/in2" >"$T/out" 2>"$T/err"
rc=$?; expect "put --replace --sync --mode" 0 "" ""
check "replaced byte for byte" cmp -s "$T/in2" "$R/dir/up.txt"
check "put --mode 0600" test "$(stat -c %a "$R/dir/up.txt")" = 600
"$SAFEOPEN" "$R" put ../planted <"$T/in1" >"$T/out" 2>"$T/err"; rc=$?
expect "put ../planted refused" 1 "" "safeopen: ../planted: path escapes the root directory (EXDEV)"
"$SAFEOPEN" "$R" put link-out/planted <"$T/in1" >"$T/out" 2>"$T/err"; rc=$?
expect "put through a link to outside refused" 1 ""
check "nothing planted outside" test ! -e "$T/planted"
ls -a "$R/dir" >"$T/listing"
check "no temporary names left behind" \
	test "$(tr '\n' ' ' <"$T/listing")" = ". .. file.txt sub up.txt "
"$SAFEOPEN" "$R" put empty/zero </dev/null >"$T/out" 2>"$T/err"; rc=$?
expect "put an empty file" 0 "" ""
check "empty file exists" test -f "$R/empty/zero" -a ! -s "$R/empty/zero"

# ---------------------------------------------------------------- rm
so "$R" rm dir/up.txt; expect "rm a file" 0 "" ""
check "rm removed it" test ! -e "$R/dir/up.txt"
so "$R" rm link-out; expect "rm a link to outside" 0 "" ""
check "rm removed the link, not its target" test -f "$T/secret" -a ! -L "$R/link-out"
so "$R" rm dir; expect "rm a directory without -r" 1 "" "safeopen: dir: Is a directory (use rm -r)"
so "$R" rm nope; expect "rm a missing file" 1 "" "safeopen: nope: No such file or directory"
so "$R" rm -f nope; expect "rm -f a missing file" 0 "" ""
so "$R" rm -r ../root; expect "rm -r ../root refused" 1 ""
check "the root is still there" test -f "$R/dir/file.txt"
so "$R" rm -r new dir; expect "rm -r two trees" 0 "" ""
check "rm -r removed them" test ! -e "$R/new" -a ! -e "$R/dir"

# ---------------------------------------------------------------- sweep
mkdir -p "$R/up2"
: >"$R/up2/.safeopen-Leftover01234567"
: >"$R/up2/.safeopen-NotOurs"
ln -s ../../secret "$R/up2/.safeopen-SymlinkSymlink12"
: >"$T/.safeopen-OutsideOutside12"
so "$R" sweep up2; expect "sweep: a fresh leftover is kept (default age 3600 s)" 0 0 ""
so "$R" sweep --age 0 up2; expect "sweep --age 0 removes the leftover" 0 1 ""
check "sweep kept the foreign name and the symlink" \
	test -e "$R/up2/.safeopen-NotOurs" -a -L "$R/up2/.safeopen-SymlinkSymlink12" -a -f "$T/secret"
so "$R" sweep --age 0 ..; expect "sweep .. refused" 1 "" "safeopen: ..: $ESC"
check "nothing removed outside" test -e "$T/.safeopen-OutsideOutside12"
so "$R" sweep --age 0; expect "sweep ROOT itself" 0 0 ""
so "$R" sweep --age -1 up2; expect "sweep --age -1" 2 ""
so "$R" sweep up2 dir; expect "sweep with two DIRs" 2 ""
rm -r "$R/up2" "$T/.safeopen-OutsideOutside12"

# ---------------------------------------------------------------- usage and status
so; expect "no arguments: usage error" 2 ""
check "usage error names the problem" has "$T/err" 'safeopen: missing ROOT*'
so "$R"; expect "no command" 2 ""
so "$R" frobnicate x; expect "unknown command" 2 ""
so --frob "$R" cat x; expect "unknown option" 2 ""
so "$R" --in-root cat x; expect "option after ROOT" 2 ""
check "option after ROOT: the message says where options go" \
	has "$T/err" '*options go before ROOT*'
so "$R" cat; expect "cat without PATH" 2 ""
so "$R" put; expect "put without PATH" 2 ""
so "$R" put a b; expect "put with two PATHs" 2 ""
so "$R" put x --mode 999; expect "put --mode 999" 2 ""
so "$R" put x --xattr novalue; expect "put --xattr without =" 2 ""
so "$R" ls -z; expect "ls -z" 2 ""
so "$T/nonexistent" cat x; expect "missing ROOT directory" 1 "" \
	"safeopen: $T/nonexistent: No such file or directory"
so --help; expect "--help" 0
check "--help prints the usage" has "$T/out" 'Usage: safeopen*'
so --version; expect "--version" 0
check "--version prints the version" has "$T/out" 'safeopen (libsafeopen) [0-9]*'

tap_end test-cli
