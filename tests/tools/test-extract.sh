#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/tools/test-extract.sh: safeopen DEST extract.
#  1. hostile archives (tests/tools/gen-archives.py): every archive with default
#     options, --overwrite and --in-root, each with the fast path and the
#     walker forced; the sentinel tree next to DEST must stay identical
#     (manifest: checksums, modes, mtimes, xattrs) and the legitimate entries
#     must be extracted;
#  2. a benign corpus (a generated tree with modes, mtimes, symlinks, hard
#     links, a FIFO, xattrs, long names, a sparse file; and the library's own
#     sources) compared with GNU tar's extraction of the same archives;
#  3. an attacker swapping a directory of DEST with a symlink to outside
#     during the extraction of a large archive: nothing outside may change
#     (GNU tar and bsdtar in the same scenario are reported, not asserted);
#  4. options, privileges (devices, owners, set-ID bits), usage errors.
# `make check` runs the quick size: every hostile archive once, the classes
# (default, --overwrite, --in-root) and the two paths (fast, walker) rotating
# over the archives so that every combination runs; one benign archive; a
# 400-file swap attack. `make check-long` (SAFEOPEN_CHECK_LONG=1) runs every
# archive in every combination, the whole benign corpus, 3000 files and the
# GNU tar / bsdtar comparison.
set -u
LONG=${SAFEOPEN_CHECK_LONG:-}
[ "$LONG" = 0 ] && LONG=
. "${top_srcdir:-.}/tests/tools/extract-env.sh"
SWAP="$top_builddir/tests/tools/race-swap"
case $SWAP in /*) ;; *) SWAP=$(pwd)/$SWAP ;; esac
extract_env test-extract
GEN="$PYTHON $top_srcdir/tests/tools/gen-archives.py"
MANIFEST="$PYTHON $top_srcdir/tests/tools/tree-manifest.py"

T=$(mktemp -d "${TMPDIR:-/tmp}/test-extract.XXXXXX") || exit 99
T=$(cd "$T" && pwd -P)
trap 'chmod -R u+rwx "$T" 2>/dev/null; rm -rf "$T"' EXIT
umask 022
uid=$(id -u)

n=0
failed=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() {
	n=$((n + 1)); failed=$((failed + 1)); echo "not ok $n - $1"
	[ -s "$T/err" ] && sed 's/^/#   stderr: /' "$T/err" | head -8
}
check() { desc=$1; shift; if "$@"; then ok "$desc"; else not_ok "$desc"; fi; }
info() { echo "# $*"; }

# ---------------------------------------------------------------- sentinel
# The tree next to every DEST: "../outside" from DEST reaches it.
O=$T/outside
mkdir -p "$O/dir" "$O/victim"
printf 'sentinel\n' >"$O/file"
printf 'inner\n' >"$O/dir/inner"
ln -s file "$O/link"
chmod 0640 "$O/dir/inner"
touch -h -d '2000-01-02 03:04:05' "$O/file" "$O/dir/inner" "$O/link" "$O/dir" "$O/victim" "$O"
# Two views: a full manifest (checksums, modes, mtimes, xattrs) at the start
# and the end, and after every run a cheap one from find(1) that includes
# each object's inode number and ctime, which any write, chmod, chown, xattr
# or link change moves.
$MANIFEST "$O" >"$T/sentinel.full" || exit 99
quick() { find "$O" -printf '%p|%y|%m|%s|%T@|%C@|%i|%n|%l\n' | sort; }
quick >"$T/sentinel.before"
sentinel_same() { quick >"$T/sentinel.after" && cmp -s "$T/sentinel.before" "$T/sentinel.after"; }

# ---------------------------------------------------------------- 1. hostile archives
A=$T/archives
$GEN "$A" "$O" || bail "test-extract: gen-archives.py failed"

# verify EXPECTFILE CLASS DEST: the expectations of one run; prints failures
verify() {
	bad=0
	while read -r v_cls v_what p rest; do
		case $v_cls in '*' | *"$2"*) ;; *) continue ;; esac
		case $v_what in
		rc) [ "$rc" -eq "$p" ] || { echo "exit status $rc, expected $p"; bad=1; } ;;
		file) if [ -f "$3/$p" ] && [ ! -L "$3/$p" ] && [ "$(cat "$3/$p")" = "$rest" ]; then :; else
			echo "file $p: not a regular file holding '$rest'"; bad=1; fi ;;
		link) if [ -L "$3/$p" ] && [ "$(readlink "$3/$p")" = "$rest" ]; then :; else
			echo "link $p: not a symlink to '$rest'"; bad=1; fi ;;
		dir) if [ -d "$3/$p" ] && [ ! -L "$3/$p" ]; then :; else echo "dir $p: missing"; bad=1; fi ;;
		absent) if [ -e "$3/$p" ] || [ -L "$3/$p" ]; then echo "absent $p: exists"; bad=1; fi ;;
		setup-*) ;;
		*) echo "bad expectation line: $v_cls $v_what"; bad=1 ;;
		esac
	done <"$1"
	return $bad
}
# setup EXPECTFILE DEST: plant what the "setup-" lines ask for
setup() {
	while read -r v_cls v_what p rest; do
		case $v_what in
		setup-link) ln -s "$rest" "$2/$p" ;;
		setup-dir) mkdir -p "$2/$p" ;;
		esac
	done <"$1"
}

hostile=0
k=0
runs=0
for arc in "$A"/*.tar "$A"/*.zip "$A"/*.cpio; do
	base=${arc##*/}; base=${base%.*}
	k=$((k + 1))
	for cls in d o r; do
		for path in fast walker; do
			# d: --keep-old-files; o: replacing, the default (fast path:
			# spelled --overwrite); r: --in-root (and --keep-old-files)
			case $cls:$path in
			d:*) opts=--keep-old-files gl= ;;
			o:fast) opts=--overwrite gl= ;;
			o:walker) opts= gl= ;;
			r:*) opts=--keep-old-files gl=--in-root ;;
			esac
			# quick size: archive k runs one of the six combinations, in turn
			if [ -z "$LONG" ]; then
				case $((k % 6)):$cls:$path in
				0:d:fast | 1:o:walker | 2:r:fast | 3:d:walker | 4:o:fast | 5:r:walker) ;;
				*) continue ;;
				esac
			fi
			w=; [ $path = walker ] && w=--walker
			# a fresh destination per run (removed with $T at the end:
			# no chmod -R and rm -rf of the last one each time)
			runs=$((runs + 1)); D=$T/dest.$runs; mkdir "$D"
			setup "$A/$base.expect" "$D"
			# run from inside the sentinel: a /proc/self/cwd escape would show
			(cd "$O" && exec "$SAFEOPEN" $gl $w "$D" extract $opts "$arc") >"$T/out" 2>"$T/err"
			rc=$?
			what="$base ($cls, $path)"
			msgs=yes
			if [ "$rc" -ne 0 ]; then
				# every refusal names the entry and an errno name
				grep -q '^safeopen: extract: .*: .* (E[A-Z0-9]*)$' "$T/err" || msgs=no
			fi
			if ! sentinel_same; then
				not_ok "$what: the tree outside DEST changed"
				diff "$T/sentinel.before" "$T/sentinel.after" | head -5 | sed 's/^/#   /'
			elif ! verify "$A/$base.expect" "$cls" "$D" >"$T/verify"; then
				not_ok "$what: $(head -3 "$T/verify" | tr '\n' ';')"
			elif [ $msgs = no ]; then
				not_ok "$what: exit $rc without a message naming the entry and errno"
			elif [ -n "$(find "$D" -name '.safeopen-*' 2>/dev/null)" ]; then
				not_ok "$what: temporary names left in DEST"
			else
				ok "$what: outside unchanged, legitimate entries extracted (exit $rc)"
				hostile=$((hostile + 1))
			fi
		done
	done
done
info "hostile archives: $hostile runs passed"

# messages: clear and specific
D=$T/dest; rm -rf "$D"; mkdir "$D"
"$SAFEOPEN" "$D" extract "$A/dotdot.tar" >"$T/out" 2>"$T/err"; rc=$?
check "dotdot: '..' entry refused with EXDEV and its name" \
	grep -qx "safeopen: extract: ../outside/dotdot-created: not extracted: leads outside the destination directory (EXDEV)" "$T/err"
rm -rf "$D"; mkdir "$D"
"$SAFEOPEN" "$D" extract "$A/symlink-relative.tar" >"$T/out" 2>"$T/err"; rc=$?
check "symlink-relative: write through the link refused with EXDEV" \
	grep -qx "safeopen: extract: s/written: not extracted: leads outside the destination directory (EXDEV)" "$T/err"
rm -rf "$D"; mkdir "$D"
"$SAFEOPEN" "$D" extract -k "$A/duplicates.tar" >"$T/out" 2>"$T/err"; rc=$?
check "duplicates, -k: second copy refused with EEXIST" \
	grep -qx "safeopen: extract: dup: not extracted: already exists (--keep-old-files) (EEXIST)" "$T/err"

# --strict stops at the first refusal; standard input; -v
rm -rf "$D"; mkdir "$D"
"$SAFEOPEN" "$D" extract --strict - <"$A/dotdot.tar" >"$T/out" 2>"$T/err"; rc=$?
check "--strict from standard input: exit 1, nothing after the first refusal" \
	test $rc -eq 1 -a ! -e "$D/a/ok" -a "$(grep -c '^safeopen: extract' "$T/err")" -eq 1
rm -rf "$D"; mkdir "$D"
"$SAFEOPEN" "$D" extract -v "$A/cpio-pair.cpio" >"$T/out" 2>"$T/err"; rc=$?
check "-v lists the entries" grep -qx pair2 "$T/out"
check "cpio: data of a linked pair lands in both names, one inode" \
	test "$(stat -c %i "$D/pair1")" = "$(stat -c %i "$D/pair2")"

# ---------------------------------------------------------------- 2. benign corpus vs GNU tar
if ! tar --version 2>/dev/null | grep -q 'GNU tar'; then
	skip "benign corpus: GNU tar not found"
else
	S=$T/benign
	mkdir -p "$S/a/b/c" "$S/ro" "$S/modes" "$S/links" "$S/long"
	printf 'alpha\n' >"$S/a/file"
	printf 'deep\n' >"$S/a/b/c/deep"
	: >"$S/a/empty"
	head -c 200000 /dev/urandom >"$S/a/big"
	printf 'x' | dd of="$S/a/sparse" bs=1 seek=3000000 conv=notrunc 2>/dev/null
	truncate -s 5000000 "$S/a/sparse"
	printf 'readonly\n' >"$S/ro/f"
	for m in 0600 0640 0644 0700 0750 0755 0444 0400 1755; do
		printf '%s\n' "$m" >"$S/modes/m$m"; chmod "$m" "$S/modes/m$m"
	done
	ln -s ../a/file "$S/links/rel"
	ln -s /etc/passwd "$S/links/abs"
	ln -s nowhere "$S/links/dangling"
	ln -s ../a "$S/links/dirlink"
	ln "$S/a/file" "$S/links/hard"
	mkfifo "$S/links/fifo"
	printf 'spaces\n' >"$S/long/with spaces and 'quotes'"
	long=$(printf 'n%.0s' $(seq 1 200))
	mkdir -p "$S/long/$long/$long"
	printf 'long\n' >"$S/long/$long/$long/$long"
	xattrs=no
	if command -v setfattr >/dev/null && setfattr -n user.test -v probe "$S/a/file" 2>/dev/null; then
		setfattr -n user.mime -v text/plain "$S/a/file"
		setfattr -n user.dir -v yes "$S/a/b"
		xattrs=yes
	fi
	chmod 0555 "$S/ro"
	chmod 0750 "$S/a/b"
	find "$S" -depth -exec touch -h -d '2011-03-13 07:06:40.123456789' {} +
	touch -h -d '1999-12-31 23:59:59' "$S/a/b" "$S/links/rel" "$S/modes/m0755"
	info "benign corpus xattrs: $xattrs"
	[ $xattrs = yes ] || skip "xattrs in the benign corpus: no setfattr or no user xattrs on ${TMPDIR:-/tmp}"

	mkdir "$T/corpus"
	tar --xattrs --format=pax -C "$S" -cf "$T/corpus/tree-pax.tar" .
	if [ -n "$LONG" ]; then
		tar --format=gnu -C "$S" -cf "$T/corpus/tree-gnu.tar" .
		tar --xattrs --format=pax -C "$S" -czf "$T/corpus/tree-pax.tar.gz" .
	fi
	[ -n "$LONG" ] && tar --format=gnu -C "$top_srcdir" -cf "$T/corpus/sources.tar" \
		--exclude='*.o' --exclude='*.lo' --exclude='.libs' --exclude='.deps' \
		lib include tools tests doc bench configure.ac Makefile.am README.md
	# the release tarball too, when `make dist` has made one (26 s: not here)
	for tb in "$top_builddir"/libsafeopen-*.tar.gz; do
		[ -f "$tb" ] && cp "$tb" "$T/corpus/"
	done
	for arc in "$T"/corpus/*; do
		base=${arc##*/}
		# quick size: the pax tree (modes, links, FIFO, xattrs, sparse); the
		# sources (many entries) and the other formats under check-long
		[ -n "$LONG" ] || case $base in tree-pax.tar) ;; *) continue ;; esac
		G=$T/gnu; X=$T/ours
		chmod -R u+rwx "$G" "$X" 2>/dev/null; rm -rf "$G" "$X"; mkdir "$G" "$X"
		tar -xf "$arc" -C "$G" --no-same-owner --xattrs --xattrs-include='user.*' 2>"$T/err"
		for path in fast walker; do
			w=; [ $path = walker ] && w=--walker
			chmod -R u+rwx "$X" 2>/dev/null; rm -rf "$X"; mkdir "$X"
			"$SAFEOPEN" $w "$X" extract "$arc" >"$T/out" 2>"$T/err"; rc=$?
			# sources.tar and the release tarball have no "." entry: DEST itself is not theirs
			mo=; case $base in sources.tar | libsafeopen-*) mo=--no-root ;; esac
			$MANIFEST "$G" $mo >"$T/m.gnu"; $MANIFEST "$X" $mo >"$T/m.ours"
			diff -r --no-dereference "$G" "$X" >"$T/diff" 2>&1
			# diff -r cannot compare FIFOs (the manifest does)
			grep -v ' is a fifo while file .* is a fifo$' "$T/diff" >"$T/diff2"
			if [ $rc -ne 0 ]; then
				not_ok "benign $base ($path): exit $rc"
			elif [ -s "$T/diff2" ]; then
				not_ok "benign $base ($path): diff -r differs"; head -5 "$T/diff2" | sed 's/^/#   /'
			elif ! cmp -s "$T/m.gnu" "$T/m.ours"; then
				not_ok "benign $base ($path): modes/mtimes/links/xattrs differ from GNU tar"
				diff "$T/m.gnu" "$T/m.ours" | head -6 | sed 's/^/#   /'
			else
				ok "benign $base ($path): identical to GNU tar ($(wc -l <"$T/m.ours") objects)"
			fi
		done
	done
fi

# ---------------------------------------------------------------- 3. swap attack
# DEST/d is a directory, DEST/evil a symlink to outside; race-swap exchanges
# the two names as fast as it can while a $NF-file archive (400, 3000 under
# check-long) is extracted into d and e, its entries alternating between them.
if [ ! -x "$SWAP" ]; then
	skip "swap attack: tests/tools/race-swap not built"
else
	NF=400; [ -n "$LONG" ] && NF=3000
	G=$T/big; mkdir -p "$G/d" "$G/e"
	# the files only (the extraction writes into d, never creates or
	# replaces it), alternating between d and e: each entry of d resolves d
	# again instead of using the directory held for the previous entry
	i=0
	while [ $i -lt $((NF / 2)) ]; do
		: >"$G/d/f$i"; : >"$G/e/f${i}e"; printf 'd/f%s\ne/f%se\n' $i $i
		i=$((i + 1))
	done >"$T/big.list"
	tar -C "$G" -cf "$T/big.tar" --no-recursion -T "$T/big.list"
	rm -rf "$G"
	# attack RUNNER VICTIM: extract big.tar with RUNNER under the attack
	# (VICTIM: the outside directory evil points to). Sets swaps, inside.
	attack() {
		D=$T/dest; chmod -R u+rwx "$D" 2>/dev/null; rm -rf "$D"; mkdir -p "$D/d" "$D/e"
		ln -s "$2" "$D/evil"
		"$SWAP" "$D" d evil 60 >"$T/swaps" 2>"$T/swap.err" &
		spid=$!
		sleep 0.2
		$1 >"$T/out" 2>"$T/err"; rc=$?
		kill -TERM $spid 2>/dev/null; wait $spid
		swaps=$(cat "$T/swaps"); swaps=${swaps:-0}
		inside=$(find "$D" -name 'f*' -type f | wc -l)
	}
	for path in fast walker; do
		w=; [ $path = walker ] && w=--walker
		attack "$SAFEOPEN $w $T/dest extract $T/big.tar" "$O/victim"
		refused=$(grep -c '^safeopen: extract: d/f[0-9]*: ' "$T/err")
		if ! sentinel_same; then
			not_ok "swap attack ($path): the tree outside DEST changed"
			diff "$T/sentinel.before" "$T/sentinel.after" | head -5 | sed 's/^/#   /'
		elif [ "$swaps" -le 0 ]; then
			not_ok "swap attack ($path): the attacker did not run ($(cat "$T/swap.err"))"
		elif [ $rc -gt 1 ]; then
			not_ok "swap attack ($path): exit $rc"
		elif [ $((inside + refused)) -lt $NF ]; then
			not_ok "swap attack ($path): $inside extracted + $refused refused < $NF entries"
		else
			ok "swap attack ($path): outside unchanged; $swaps swaps, $inside files extracted, $refused refused"
		fi
	done
	# the same attack against GNU tar and bsdtar: a figure, not an assertion
	for tool in tar bsdtar; do
		[ -n "$LONG" ] || break
		command -v $tool >/dev/null || continue
		V=$T/victim-$tool; mkdir -p "$V"
		attack "$tool -xf $T/big.tar -C $T/dest" "$V"
		info "swap attack against $tool: $(find "$V" -type f | wc -l) of $NF files written outside DEST ($swaps swaps, exit $rc) $(head -c 200 "$T/swap.err")"
	done
fi

# ---------------------------------------------------------------- 4. options and privileges
D=$T/dest
mk_tar() { # mk_tar OUT: an archive with a device, a setuid file, an owned file
	"$PYTHON" - "$1" <<'EOF'
import io, sys, tarfile
with tarfile.open(sys.argv[1], "w", format=tarfile.PAX_FORMAT) as t:
    ti = tarfile.TarInfo("null"); ti.type = tarfile.CHRTYPE; ti.devmajor, ti.devminor = 1, 3
    t.addfile(ti)
    ti = tarfile.TarInfo("suid"); ti.mode = 0o4755; ti.uid = 1234; ti.gid = 4321; ti.size = 3
    t.addfile(ti, io.BytesIO(b"#!\n"))
    ti = tarfile.TarInfo("sock"); ti.type = tarfile.FIFOTYPE; ti.mode = 0o600
    t.addfile(ti)
EOF
}
mk_tar "$T/priv.tar"
rm -rf "$D"; mkdir "$D"
"$SAFEOPEN" "$D" extract "$T/priv.tar" >"$T/out" 2>"$T/err"; rc=$?
check "device node refused without --devices (EPERM), the rest extracted" \
	test $rc -eq 1 -a ! -e "$D/null" -a -f "$D/suid" -a -p "$D/sock"
setid_warning="safeopen: extract: warning: set-user-ID or set-group-ID bits not restored on 1 entry"
if [ "$uid" -eq 0 ]; then
	# tar's defaults for root: --same-owner --same-permissions
	check "root, default: owner and set-user-ID restored (as GNU tar and bsdtar), no warning" \
		test "$(stat -c '%a %u %g' "$D/suid")" = "4755 1234 4321" -a \
		"$(grep -c warning "$T/err")" -eq 0
	rm -rf "$D"; mkdir "$D"
	"$SAFEOPEN" "$D" extract --devices "$T/priv.tar" >"$T/out" 2>"$T/err"; rc=$?
	check "root --devices: device node created, exit 0" test $rc -eq 0 -a -c "$D/null"
	rm -rf "$D"; mkdir "$D"
	"$SAFEOPEN" "$D" extract --no-same-owner "$T/priv.tar" >"$T/out" 2>"$T/err"; rc=$?
	check "root --no-same-owner: owned by root, set-user-ID dropped, one warning" \
		test "$(stat -c '%a %u' "$D/suid")" = "755 0" -a \
		"$(grep -c "^$setid_warning (root keeps them only with --same-owner)\$" "$T/err")" -eq 1
	rm -rf "$D"; mkdir "$D"
	"$SAFEOPEN" "$D" extract --no-same-permissions "$T/priv.tar" >"$T/out" 2>"$T/err"; rc=$?
	check "root --no-same-permissions: umask applied, set-user-ID dropped, one warning" \
		test "$(stat -c '%a %u' "$D/suid")" = "755 1234" -a \
		"$(grep -c "^$setid_warning" "$T/err")" -eq 1
else
	check "unprivileged: set-user-ID bit dropped (as GNU tar), owned by the user, one warning" \
		test "$(stat -c '%a %u' "$D/suid")" = "755 $uid" -a \
		"$(grep -c "^$setid_warning (-p keeps them on the files of this user)\$" "$T/err")" -eq 1
	rm -rf "$D"; mkdir "$D"
	"$SAFEOPEN" "$D" extract -p "$T/priv.tar" >"$T/out" 2>"$T/err"
	check "unprivileged -p: own set-user-ID file kept (as GNU tar -p), no warning" \
		test "$(stat -c '%a %u' "$D/suid")" = "4755 $uid" -a "$(grep -c warning "$T/err")" -eq 0
	rm -rf "$D"; mkdir "$D"
	"$SAFEOPEN" "$D" extract --devices "$T/priv.tar" >"$T/out" 2>"$T/err"; rc=$?
	check "unprivileged --devices: refused by the kernel (EPERM), exit 1" \
		grep -q '^safeopen: extract: null: not created: .*(EPERM)$' "$T/err"
	skip "--same-owner and device creation: need root"
fi
# --overwrite replaces a file atomically (new inode) and never follows a link
rm -rf "$D"; mkdir "$D"
printf 'old\n' >"$D/ok"; ln "$D/ok" "$D/ok-other-link"
"$SAFEOPEN" "$D" extract --overwrite "$A/absolute.tar" >/dev/null 2>&1
check "--overwrite: the old file replaced by a new inode, its other link untouched" \
	test "$(cat "$D/ok")" = ok-absolute -a "$(cat "$D/ok-other-link")" = old
"$SAFEOPEN" "$D" extract --help >"$T/out" 2>"$T/err"; rc=$?
check "extract --help: exit 0, usage on stdout" test $rc -eq 0 -a -s "$T/out"
"$SAFEOPEN" "$D" extract --bogus >"$T/out" 2>"$T/err"; rc=$?
check "extract --bogus: exit 2" test $rc -eq 2
"$SAFEOPEN" "$D" extract a b >"$T/out" 2>"$T/err"; rc=$?
check "extract with two archives: exit 2" test $rc -eq 2
"$SAFEOPEN" "$D" extract "$T/nonexistent.tar" >"$T/out" 2>"$T/err"; rc=$?
check "missing archive: exit 1 with a message" test $rc -eq 1 -a -s "$T/err"
printf 'this is not an archive\n' >"$T/garbage"
"$SAFEOPEN" "$D" extract "$T/garbage" >"$T/out" 2>"$T/err"; rc=$?
check "not an archive: exit 1 with a message" test $rc -eq 1 -a -s "$T/err"
head -c 3000 "$A/long-names.tar" >"$T/truncated.tar"
rm -rf "$D"; mkdir "$D"
"$SAFEOPEN" "$D" extract "$T/truncated.tar" >"$T/out" 2>"$T/err"; rc=$?
check "truncated archive: exit 1, no temporary names left" \
	test $rc -eq 1 -a -z "$(find "$D" -name '.safeopen-*')"
# ---------------------------------------------------------------- 5. fidelity
# Real-like archives (tests/tools/gen-archives.py, $A/fidelity): cpio hard links
# with their mtime, set-ID bits with this user's defaults, truncated plain
# and compressed archives, re-extraction in the three modes; compared with
# bsdtar (owners, modes, mtimes, hard-link groups) where it is installed.
F=$A/fidelity
X=$T/fx
HAVE_BSDTAR=; command -v bsdtar >/dev/null && HAVE_BSDTAR=yes
fresh() { chmod -R u+rwx "$1" 2>/dev/null; rm -rf "$1"; mkdir "$1"; }
# like_bsdtar ARCHIVE WHAT: safeopen's extraction equals bsdtar's
like_bsdtar() {
	if ! command -v bsdtar >/dev/null; then
		skip "$2 compared with bsdtar: bsdtar not installed"
		return
	fi
	B=$T/fb; fresh "$B"
	bsdtar -xf "$1" -C "$B" 2>"$T/err.bsdtar"
	$MANIFEST "$B" --no-root --owners >"$T/m.bsdtar"; $MANIFEST "$X" --no-root --owners >"$T/m.ours"
	if cmp -s "$T/m.bsdtar" "$T/m.ours"; then
		ok "$2: identical to bsdtar ($(wc -l <"$T/m.ours") objects: type, mode, owner, mtime, content, link groups)"
	else
		not_ok "$2: differs from bsdtar"; diff "$T/m.bsdtar" "$T/m.ours" | head -6 | sed 's/^/#   /'
	fi
}

# cpio: three names of one inode, the data with the last (bzip2, bzcat, bunzip2)
fresh "$X"
"$SAFEOPEN" "$X" extract "$F/links.cpio" >"$T/out" 2>"$T/err"; rc=$?
check "cpio hard links: one inode, its mtime the archive's (2022-09-19), mode 0755, exit 0" \
	test $rc -eq 0 -a "$(stat -c '%h %Y %a' "$X/usr/bin/bzip2")" = "3 1663545600 755" -a \
	"$(stat -c %i "$X/usr/bin/bzcat")" = "$(stat -c %i "$X/usr/bin/bzip2")" -a \
	"$(stat -c %i "$X/usr/bin/bunzip2")" = "$(stat -c %i "$X/usr/bin/bzip2")" -a \
	"$(stat -c %Y "$X/usr/bin")" = 1663545560
like_bsdtar "$F/links.cpio" "cpio hard links"

# set-ID bits: this user's defaults (root: owners and exact modes, as tar)
fresh "$X"
"$SAFEOPEN" "$X" extract "$F/setid.tar" >"$T/out" 2>"$T/err"; rc=$?
if [ "$uid" -eq 0 ]; then
	check "set-ID as root: sudo 4755 root, wall 2755 :5, shared 2775 1234:4321, tmp 1777, no warning" \
		test $rc -eq 0 -a "$(stat -c '%a %u:%g' "$X/usr/bin/sudo" "$X/usr/bin/wall" "$X/srv/shared" "$X/srv/tmp" | tr '\n' ' ')" = \
		"4755 0:0 2755 0:5 2775 1234:4321 1777 0:0 " -a ! -s "$T/err"
else
	check "set-ID as user $uid: bits dropped, one warning counting 3 entries" \
		test $rc -eq 0 -a "$(stat -c %a "$X/usr/bin/sudo" "$X/usr/bin/wall" "$X/srv/shared" | tr '\n' ' ')" = "755 755 755 " -a \
		"$(cat "$T/err")" = "safeopen: extract: warning: set-user-ID or set-group-ID bits not restored on 3 entries (-p keeps them on the files of this user)"
fi
like_bsdtar "$F/setid.tar" "set-ID archive as uid $uid"

# truncated archives: every complete entry extracted, the damaged one not
# (no partial file), exit 1 naming it; GNU tar recovers the same entries
S=$T/ftree; fresh "$S"
"$SAFEOPEN" "$S" extract "$F/tree.tar" >"$T/out" 2>"$T/err" || not_ok "tree.tar: whole archive not extracted"
# complete_in DIR: the regular files of DIR equal to the whole extraction's
# (by CRC and size: one cksum for a whole tree, the names have no blanks)
sums() { (cd "$1" && find . -type f -exec cksum {} + | LC_ALL=C sort); }
sums "$S" >"$T/whole.sums"
complete_in() { sums "$1" | LC_ALL=C comm -12 - "$T/whole.sums" | awk '{ print $3 }' | LC_ALL=C sort; }
nfiles_in() { find "$1" -type f | wc -l; }
mid_cut=$(awk '$1 == "mid" { print $2 }' "$F/tree.cuts")
mid_name=$(awk '$1 == "mid" { print $3 }' "$F/tree.cuts")
pad_cut=$(awk '$1 == "padding" { print $2 }' "$F/tree.cuts")
head -c "$mid_cut" "$F/tree.tar" >"$T/cut-mid.tar"
head -c "$pad_cut" "$F/tree.tar" >"$T/cut-padding.tar"
cuts="cut-mid.tar cut-padding.tar"
for z in xz gzip; do
	command -v $z >/dev/null || { skip "truncated .tar.$z: $z not installed"; continue; }
	ext=$z; [ $z = gzip ] && ext=gz
	$z -1 -c "$F/tree.tar" >"$T/tree.tar.$ext" # -1: the fastest, the test is the reading
	# whole, with 100 kB of zeros after the end marker (more than a pipe
	# holds): exit 0, the decompressor read to its end, not killed by SIGPIPE
	{ cat "$F/tree.tar"; head -c 100000 /dev/zero; } | $z -1 -c >"$T/padded.tar.$ext"
	fresh "$X"
	"$SAFEOPEN" "$X" extract "$T/padded.tar.$ext" >"$T/out" 2>"$T/err"; rc=$?
	check "whole .tar.$ext with a long tail of zeros: exit 0, 24 files, no message" \
		test $rc -eq 0 -a "$(complete_in "$X" | wc -l)" -eq 24 -a ! -s "$T/err"
	# without the program (PATH without it), libarchive decompresses
	fresh "$X"
	PATH=/nonexistent "$SAFEOPEN" "$X" extract "$T/padded.tar.$ext" >"$T/out" 2>"$T/err"; rc=$?
	check "whole .tar.$ext, $z not in PATH: libarchive decompresses, exit 0, 24 files" \
		test $rc -eq 0 -a "$(complete_in "$X" | wc -l)" -eq 24 -a ! -s "$T/err"
	sz=$(wc -c <"$T/tree.tar.$ext")
	head -c $((sz * 3 / 5)) "$T/tree.tar.$ext" >"$T/cut.tar.$ext"
	cuts="$cuts cut.tar.$ext"
done
for c in $cuts; do
	fresh "$X"
	"$SAFEOPEN" "$X" extract "$T/$c" >"$T/out" 2>"$T/err"; rc=$?
	complete_in "$X" >"$T/c.ours"
	cp "$T/err" "$T/err.$c"
	[ "$c" = cut.tar.xz ] && cp "$T/c.ours" "$T/c.xz"
	[ "$c" = cut-mid.tar ] && cp "$T/c.ours" "$T/c.mid"
	G=$T/fg; fresh "$G"
	tar -xf "$T/$c" -C "$G" 2>/dev/null
	complete_in "$G" >"$T/c.gnu"
	bsd=; if [ -n "$HAVE_BSDTAR" ] && [ -n "$LONG" ]; then # context, not asserted
		fresh "$T/fbt"; bsdtar -xf "$T/$c" -C "$T/fbt" 2>/dev/null
		bsd=", bsdtar: $(complete_in "$T/fbt" | wc -l) and $(($(nfiles_in "$T/fbt") - $(complete_in "$T/fbt" | wc -l))) partial"
	fi
	got=$(wc -l <"$T/c.ours")
	if [ $rc -ne 1 ]; then
		not_ok "truncated $c: exit $rc, expected 1"
	elif [ "$(nfiles_in "$X")" -ne "$got" ]; then
		not_ok "truncated $c: a partial file was left ($(nfiles_in "$X") files, $got complete)"
	elif [ -n "$(LC_ALL=C comm -23 "$T/c.gnu" "$T/c.ours")" ]; then
		not_ok "truncated $c: GNU tar recovers complete files that safeopen does not ($got, GNU tar $(wc -l <"$T/c.gnu"))"
		LC_ALL=C comm -23 "$T/c.gnu" "$T/c.ours" | head -4 | sed 's/^/#   /'
	elif [ "$got" -lt 1 ]; then
		not_ok "truncated $c: nothing recovered"
	elif [ -n "$(find "$X" -name '.safeopen-*')" ]; then
		not_ok "truncated $c: temporary names left"
	else
		ok "truncated $c: exit 1, the $got complete files (GNU tar: $(wc -l <"$T/c.gnu")$bsd), no partial file"
	fi
done
if [ -f "$T/cut.tar.xz" ]; then
	fresh "$X"
	"$SAFEOPEN" "$X" extract - <"$T/cut.tar.xz" >"$T/out" 2>"$T/err"; rc=$?
	complete_in "$X" >"$T/c.stdin"
	check "truncated .tar.xz on standard input (a file): the same complete files, named damage, exit 1" \
		test $rc -eq 1 -a -s "$T/c.stdin" -a "$(nfiles_in "$X")" -eq "$(wc -l <"$T/c.stdin")" -a \
		"$(cmp -s "$T/c.stdin" "$T/c.xz" && echo same)" = same -a \
		"$(grep -c '^safeopen: extract: standard input: xz -dc: exit status 1' "$T/err")" -eq 1
fi
check "truncated in an entry's data: that entry named in a message" \
	grep -q "^safeopen: extract: $mid_name: " "$T/err.cut-mid.tar"
fresh "$X"
"$SAFEOPEN" "$X" extract "$T/cut-padding.tar" >"$T/out" 2>"$T/err"; rc=$?
check "truncated in the padding after the last data: that file kept, the damage reported, exit 1" \
	test $rc -eq 1 -a "$(nfiles_in "$X")" -eq 24 -a -s "$T/err"

# re-extraction: the default replaces (tar's and bsdtar's default), -k refuses
# (EEXIST, exit 1), --skip-old-files leaves; a name never followed
R=$T/fre
one=src/d0/f01.c two=src/d1/f07.c three=src/d2/f13.c
spoil() {
	printf 'changed\n' >"$R/$one"
	rm -f "$R/$one.link"; ln "$R/$one" "$R/$one.link"
	rm -f "$R/$two"; ln -s ../../../outside/file "$R/$two"
	rm -f "$R/$three"
}
fresh "$R"; "$SAFEOPEN" "$R" extract "$F/tree.tar" >/dev/null 2>&1
spoil
"$SAFEOPEN" "$R" extract "$F/tree.tar" >"$T/out" 2>"$T/err"; rc=$?
check "re-extract, default: exit 0, every file replaced (symlink in place replaced, not followed), other link of the old inode untouched" \
	test $rc -eq 0 -a "$(complete_in "$R" | wc -l)" -eq 24 -a ! -L "$R/$two" -a \
	"$(cat "$R/$one.link")" = changed -a ! -s "$T/err"
check "re-extract, default: nothing outside changed" sentinel_same
spoil
"$SAFEOPEN" "$R" extract --keep-old-files "$F/tree.tar" >"$T/out" 2>"$T/err"; rc=$?
check "re-extract, --keep-old-files: exit 1, 23 names refused with EEXIST, the missing one extracted" \
	test $rc -eq 1 -a "$(grep -c ': not extracted: already exists (--keep-old-files) (EEXIST)$' "$T/err")" -eq 23 -a \
	"$(cat "$R/$one")" = changed -a -L "$R/$two" -a -f "$R/$three"
spoil
"$SAFEOPEN" "$R" extract --skip-old-files "$F/tree.tar" >"$T/out" 2>"$T/err"; rc=$?
check "re-extract, --skip-old-files: exit 0, silent, existing names left, the missing one extracted" \
	test $rc -eq 0 -a ! -s "$T/err" -a "$(cat "$R/$one")" = changed -a -L "$R/$two" -a -f "$R/$three"
check "re-extract: nothing outside changed" sentinel_same

# --atomic: every file through the tmpfile API; the same tree, the same modes
fresh "$X"
"$SAFEOPEN" "$X" extract --atomic "$F/tree.tar" >"$T/out" 2>"$T/err"; rc=$?
$MANIFEST "$S" --no-root --owners >"$T/m.default"; $MANIFEST "$X" --no-root --owners >"$T/m.atomic"
check "--atomic: exit 0, the tree of the default extraction (modes, owners, mtimes, content)" \
	test $rc -eq 0 -a ! -s "$T/err" -a "$(cmp -s "$T/m.default" "$T/m.atomic" && echo same)" = same
"$SAFEOPEN" "$X" extract --atomic -k "$F/tree.tar" >"$T/out" 2>"$T/err"; rc=$?
check "--atomic -k over it: exit 1, 24 names refused with EEXIST" \
	test $rc -eq 1 -a "$(grep -c '(--keep-old-files) (EEXIST)$' "$T/err")" -eq 24
"$SAFEOPEN" "$X" extract --atomic --skip-old-files "$F/tree.tar" >"$T/out" 2>"$T/err"; rc=$?
check "--atomic --skip-old-files over it: exit 0, silent" test $rc -eq 0 -a ! -s "$T/err"
# An attribute the filesystem refuses (a malformed ACL) is named, left out,
# and the object made with its other attributes: one rule (extract.c's
# set_xattrs(), the answer of safe_tmpfile_failed_xattr() on the tmpfile
# paths) for a new file written in place, a file published by the tmpfile
# API (--atomic), one replacing an existing name, and a directory
if [ $xattrs = yes ]; then
	"$PYTHON" -c '
import io, sys, tarfile
t = tarfile.open(sys.argv[1], "w", format=tarfile.PAX_FORMAT)
bad = {"SCHILY.xattr.user.one": "1", "SCHILY.xattr.system.posix_acl_access": "garbage",
       "SCHILY.xattr.user.two": "2"}
ti = tarfile.TarInfo("xd"); ti.type = tarfile.DIRTYPE; ti.mode = 0o755; ti.pax_headers = bad
t.addfile(ti)
ti = tarfile.TarInfo("xd/xa"); ti.size = 6; ti.mode = 0o644; ti.pax_headers = bad
t.addfile(ti, io.BytesIO(b"hello\n")); t.close()' "$T/badxattr.tar"
	for mode in in-place --atomic --overwrite; do
		fresh "$X"
		opt=$mode; [ $mode = in-place ] && opt=
		[ $mode = --overwrite ] && mkdir "$X/xd" && printf 'old\n' >"$X/xd/xa" # the replace path
		"$SAFEOPEN" "$X" extract $opt "$T/badxattr.tar" >"$T/out" 2>"$T/err"; rc=$?
		check "$mode, a refused attribute: exit 1, named once for the directory and once for the file, both made with the others" \
			test $rc -eq 1 -a "$(grep -c '^safeopen: extract: xd: extended attribute system.posix_acl_access not restored: .* (E[A-Z]*)$' "$T/err")" -eq 1 \
			-a "$(grep -c '^safeopen: extract: xd/xa: extended attribute system.posix_acl_access not restored: .* (E[A-Z]*)$' "$T/err")" -eq 1 \
			-a "$(grep -c . "$T/err")" -eq 2 \
			-a "$(cat "$X/xd/xa")" = hello -a "$(getfattr --only-values -n user.one "$X/xd/xa" 2>/dev/null)" = 1 \
			-a "$(getfattr --only-values -n user.two "$X/xd/xa" 2>/dev/null)" = 2 \
			-a "$(getfattr --only-values -n user.one "$X/xd" 2>/dev/null)" = 1 \
			-a "$(getfattr --only-values -n user.two "$X/xd" 2>/dev/null)" = 2 -a -z "$(find "$X" -name '.safeopen-*')"
	done
fi
mkdir -p "$X/${one%/*}"; printf 'changed\n' >"$X/$one"
"$SAFEOPEN" "$X" extract --atomic "$F/tree.tar" >"$T/out" 2>"$T/err"; rc=$?
check "--atomic over it: exit 0, files replaced" \
	test $rc -eq 0 -a "$(complete_in "$X" | wc -l)" -eq 24 -a -z "$(find "$X" -name '.safeopen-*')"
fresh "$X"
"$SAFEOPEN" "$X" extract --atomic "$T/cut-mid.tar" >"$T/out" 2>"$T/err"; rc=$?
check "--atomic, truncated: exit 1, the complete files only, no temporary name" \
	test $rc -eq 1 -a "$(nfiles_in "$X")" -eq "$(complete_in "$X" | wc -l)" -a \
	"$(complete_in "$X" | wc -l)" -eq "$(wc -l <"$T/c.mid")" -a -z "$(find "$X" -name '.safeopen-*')"

# make_tar OUT ENTRY...: a pax tar of ENTRY "d:NAME" (directory), "l:NAME:BODY"
# (symlink), "f:NAME:DATA" (regular file, DATA and a newline), in that order
make_tar() {
	"$PYTHON" - "$@" <<'PY'
import io, sys, tarfile
with tarfile.open(sys.argv[1], "w", format=tarfile.PAX_FORMAT) as t:
    for arg in sys.argv[2:]:
        kind, name, body = (arg.split(":", 2) + [""])[:3]
        ti = tarfile.TarInfo(name)
        if kind == "d":
            ti.type = tarfile.DIRTYPE; ti.mode = 0o755; t.addfile(ti)
        elif kind == "l":
            ti.type = tarfile.SYMTYPE; ti.linkname = body; t.addfile(ti)
        else:
            data = body.encode() + b"\n"
            ti.size = len(data); t.addfile(ti, io.BytesIO(data))
PY
}

# the held parent directory is let go after an entry that replaced a name: a
# symlink retargeted between two entries leads the second one to the new place
make_tar "$T/retarget.tar" d:x d:y l:l:x f:l/f1:1 l:l:y f:l/f2:2
fresh "$X"
"$SAFEOPEN" "$X" extract "$T/retarget.tar" >"$T/out" 2>"$T/err"; rc=$?
check "a symlink replaced between two entries: the second goes where it now leads (y/f2, not x/f2)" \
	test $rc -eq 0 -a -f "$X/x/f1" -a -f "$X/y/f2" -a ! -e "$X/x/f2" -a "$(readlink "$X/l")" = y
# ... also when the replaced name is on the held directory's own path: "a/s"
# -> "." holds a for "a/s/", the entry "a/s/s" (made in a) replaces a/s
# itself by a link to b, and "a/s/f" then belongs in a/b
# (SAFEOPEN_MUTATE_EXTRACT_HELD_PARENT keeps the held directory)
make_tar "$T/selfref.tar" d:a d:a/b l:a/s:. l:a/s/s:b f:a/s/f:f
fresh "$X"
"$SAFEOPEN" "$X" extract "$T/selfref.tar" >"$T/out" 2>"$T/err"; rc=$?
check "a symlink on the held directory's own path replaced: the next entry goes where it now leads (a/b/f, not a/f)" \
	test $rc -eq 0 -a -f "$X/a/b/f" -a ! -e "$X/a/f" -a "$(readlink "$X/a/s")" = b

# the held parent is matched by its whole key: entries that leave and come
# back to a directory, a sibling whose name begins like it ("ab" after "a"),
# parents that no entry creates (made as by mkdir -p), and names ending in
# ".." (the library's EINVAL: no name in a parent to create)
make_tar "$T/keys.tar" d:a f:a/f:a/f f:ab/g:ab/g d:a/b f:a/b/h:a/b/h f:a/i:a/i f:j:j \
	f:p/q/r/s:p/q/r/s d:a/b/.. f:a/..:a/.. f:a/b/k:a/b/k
for w in "" --walker; do
	fresh "$X"
	"$SAFEOPEN" $w "$X" extract "$T/keys.tar" >"$T/out" 2>"$T/err"; rc=$?
	got=$(cd "$X" && find . -type f | sort | while read -r f; do printf '%s=%s ' "$f" "$(cat "$f")"; done)
	check "held parents${w:+ ($w)}: every entry in its own directory, the two '..' names refused with EINVAL" \
		test $rc -eq 1 -a "$got" = "./a/b/h=a/b/h ./a/b/k=a/b/k ./a/f=a/f ./a/i=a/i ./ab/g=ab/g ./j=j ./p/q/r/s=p/q/r/s " \
		-a "$(grep -c '^safeopen: extract: a/b/\.\.: not extracted: .* (EINVAL)$' "$T/err")" -eq 1 \
		-a "$(grep -c '^safeopen: extract: a/\.\.: not extracted: .* (EINVAL)$' "$T/err")" -eq 1 \
		-a "$(grep -c . "$T/err")" -eq 2
done

$MANIFEST "$O" >"$T/sentinel.full.after"
check "sentinel unchanged at the end (checksums, modes, mtimes, xattrs)" \
	cmp -s "$T/sentinel.full" "$T/sentinel.full.after"

echo "test-extract: $n checks, $failed failed"
tap_end test-extract
