#!/bin/sh
# Every number the documentation quotes about the library's own limits is
# the code's: each is defined once, as a macro in lib/ (the truth), quoted by
# one page (its home; the other documents point at that page), and this test
# compares the two. Also: every "`MACRO` = N" written in doc/design.md names a
# macro of lib/ with that value, and every "N symbolic links" of the manual
# is the code's limit.
set -eu
srcdir=${top_srcdir:-.}
. "$srcdir/tests/harness/row.sh"
# The last pass holds while no file it reads changed
# (tests/docs/check-numbers.passed, tests/harness/row.sh).
passed=${top_builddir:-.}/tests/docs/check-numbers.passed
set -- "$srcdir"/lib/*.h "$srcdir"/lib/*.c "$srcdir"/doc/man/man3/*.3 "$srcdir"/doc/man/man7/*.7 \
	"$srcdir"/doc/*.md "$srcdir"/README.md "$srcdir"/SECURITY.md "$srcdir"/include/safeopen.h
sig="$srcdir|$#"
if row_unchanged "$passed" "$sig" "$@"; then
	echo "check-numbers: lib/ and the documents unchanged since they passed ($passed): not compared again"
	exit 0
fi
rm -f "$passed"
status=0
n=0
fail() { echo "check-numbers: $*"; status=1; }

# The value of a macro of lib/, wherever it is defined (the first definition
# in the order lib/*.h, lib/*.c): an integer literal, or the name of another
# macro (followed). Every #define of lib/ is read once, by one sed; val looks
# NAME up with the shell's own pattern matching (no process per lookup) and
# sets dv: it runs in this shell, so that its fail counts (in a command
# substitution, as it ran before, a missing macro was silently skipped). A
# macro defined by an expression is not evaluated: said, and not compared.
nl='
'
id='[A-Za-z_][A-Za-z0-9_]*'
defs=$nl$(sed -n -e "s/^#define \($id\) \([0-9][0-9]*\)\([^0-9].*\)\{0,1\}\$/\1 \2/p" \
	-e "s|^#define \($id\)[[:space:]][[:space:]]*\($id\)[[:space:]]*\(/[*/].*\)\{0,1\}\$|\1 \2|p" \
	-e "s/^#define \($id\)[[:space:]].*/\1 ?/p" "$srcdir"/lib/*.h "$srcdir"/lib/*.c)$nl
val() {
	dv=$1
	for _ in 1 2 3 4 5 6 7 8; do
		case $dv in [0-9]*) return 0 ;; esac
		m_=$dv
		dv=${defs#*"$nl$m_ "}
		[ "$dv" != "$defs" ] || { fail "no '#define $m_ NUMBER' in lib/ (for $1)"; return 1; }
		dv=${dv%%"$nl"*}
		[ "$dv" != "?" ] || { echo "check-numbers: $1: $m_ is an expression in lib/, not compared"; n=$((n - 1)); return 1; }
	done
	fail "$1: more than 8 macros to follow in lib/"; return 1
}
# row MACRO FILE PATTERN [UNIT]: FILE quotes MACRO (divided by UNIT, e.g.
# 1024 for KiB) where the extended regexp PATTERN (one parenthesised group:
# the number; one line of the file, starting with a non-digit) matches.
row() {
	m=$1 f=$2 pat=$3 unit=${4:-1}
	n=$((n + 1))
	val "$m" || return 0
	want=$dv
	[ "$unit" = 1 ] || want=$((want / unit))
	got=$(sed -n -E "s/.*$pat.*/\\1/p" "$srcdir/$f" | sort -u)
	if [ -z "$got" ]; then
		fail "$f does not quote $m (no match for: $pat)"
	elif [ "$got" != "$want" ]; then
		fail "$f quotes $m as $(echo $got) but lib/ defines $want"
	fi
}

# Descriptors held whatever the depth.
row SO_RESOLVE_MAX_FDS doc/man/man3/safe_openat2.3 'holds at most ([0-9]+) descriptors'
row SO_WALK_MAX_FDS doc/man/man3/safe_walk_open.3 'at most ([0-9]+) descriptors'
row SO_RMTREE_MAX_FDS doc/man/man3/safe_rmtree_beneath.3 'at most ([0-9]+) descriptors'
# Sizes and counts of the walk and of rmtree.
row SW_BATCH doc/man/man3/safe_walk_open.3 'a ([0-9]+) KiB batch' 1024
row SW_HELD doc/man/man3/safe_walk_open.3 '^deepest ([0-9]+) levels'
row RMTREE_PASSES doc/man/man3/safe_rmtree_beneath.3 '^most ([0-9]+), while a pass'
# The mode of the parents of SAFE_TMPFILE_PARENTS (octal, as written).
row PARENTS_MODE doc/man/man3/safe_tmpfile_xattr.3 'with mode ([0-7]+) minus the umask'
# The symlink limit, everywhere the manual states it.
lim=
! val SO_MAXSYMLINKS || lim=$dv
if [ -n "$lim" ]; then
	bad=$(cd "$srcdir" && grep -n -E '([Mm]ore than|at most|follows at most) [0-9]+ symbolic links' \
		doc/man/man3/*.3 doc/man/man7/*.7 | grep -v -E "(than|most) $lim symbolic links" || true)
	n=$((n + 1))
	[ -z "$bad" ] || fail "a symlink limit other than SO_MAXSYMLINKS = $lim:
$bad"
fi
# A descriptor bound is quoted only in its home page: elsewhere the text
# points at the page.
stray=$(cd "$srcdir" && grep -n -E 'at most [0-9]+ descriptors' doc/man/man3/*.3 doc/man/man7/*.7 \
	doc/*.md README.md SECURITY.md lib/*.c lib/*.h include/safeopen.h 2>/dev/null |
	grep -v -E '^doc/man/man3/(safe_openat2|safe_walk_open|safe_rmtree_beneath)\.3:' || true)
n=$((n + 1))
[ -z "$stray" ] || fail "a descriptor bound quoted outside its page (name the page or the macro):
$stray"
# doc/design.md: "`MACRO` = N" must be the code's.
for pair in $(cd "$srcdir" && grep -o -E '`[A-Z][A-Z0-9_]*` = [0-9]+' doc/design.md | sed 's/`//g; s/ = /=/' | sort -u); do
	m=${pair%=*} v=${pair#*=}
	n=$((n + 1))
	val "$m" || continue
	want=$dv
	[ "$want" = "$v" ] || fail "doc/design.md says $m = $v, lib/ defines $want"
done
[ $status -eq 0 ] && echo "check-numbers: $n checks: the numbers the documents quote are the code's" &&
	row_passed "$passed" "$sig"
exit $status
