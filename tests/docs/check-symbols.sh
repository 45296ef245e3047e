#!/bin/sh
# Fails if the shared library exports anything that is not in the version
# script, anything unversioned, or anything the public header does not declare,
# or if a symbol of the version script is missing from the library; or if the
# places that state the release disagree (one version story: see below).
set -eu
srcdir=${top_srcdir:-.}
. "$srcdir/tests/harness/row.sh"
builddir=${top_builddir:-.}
so=
for f in "$builddir"/lib/.libs/libsafeopen.so.*.*.*; do [ -f "$f" ] && { so=$f; break; }; done
[ -n "$so" ] || { echo "check-symbols: no built libsafeopen.so under $builddir/lib/.libs"; exit 1; }
tmp=$(mktemp -d)
row_cleanup='rm -rf "$tmp"'
# What depends only on built files is kept in the build tree between runs
# (as make keeps objects): cached NAME INPUT COMMAND... writes COMMAND's
# output to $cache/NAME unless that is newer than INPUT and this script.
cache=$builddir/tests/docs/symbols-cache
[ -d "$cache" ] || mkdir -p "$cache"
cached() {
	c_out=$cache/$1 c_in=$2
	shift 2
	[ "$c_out" -nt "$c_in" ] && [ "$c_out" -nt "$srcdir/tests/docs/check-symbols.sh" ] && return 0
	"$@" >"$c_out" || { rm -f "$c_out"; return 1; }
}

# Exported (defined, global) dynamic symbols with their versions.
dyn_exports() { readelf --dyn-syms --wide "$so" | awk '$5 == "GLOBAL" && $7 != "UND" && $8 != "" { print $8 }'; }
cached exported-raw "$so" dyn_exports
sed -n 's/@@*LIBSAFEOPEN_1\.0$//p' "$cache/exported-raw" | sort -u > "$tmp/exported"
unversioned=$(grep -v '@' "$cache/exported-raw" | grep -v '^LIBSAFEOPEN_1.0$' || true)
sed -n 's/^[[:space:]]*\([a-z_][a-z0-9_]*\);$/\1/p' "$srcdir/lib/libsafeopen.sym" | sort -u > "$tmp/script"
# Declarations start with SAFEOPEN_PUBLIC and name the function on the same line.
grep '^SAFEOPEN_PUBLIC' "$srcdir/include/safeopen.h" | grep -o '\bsafe_[a-z0-9_]*(' | sed 's/($//' \
	| sort -u > "$tmp/header"

status=0
if [ -n "$unversioned" ]; then
	echo "check-symbols: unversioned exports:"; echo "$unversioned"; status=1
fi
if ! cmp -s "$tmp/exported" "$tmp/script"; then
	echo "check-symbols: exported (<) and version script (>) differ:"
	diff "$tmp/exported" "$tmp/script" || true
	status=1
fi
if ! cmp -s "$tmp/script" "$tmp/header"; then
	echo "check-symbols: version script (<) and header declarations (>) differ:"
	diff "$tmp/script" "$tmp/header" || true
	status=1
fi
[ $status -eq 0 ] && echo "check-symbols: $(wc -l < "$tmp/exported") symbols, all versioned LIBSAFEOPEN_1.0 and declared"

# One version story. The release (configure.ac's AC_INIT, hence config.h's
# PACKAGE_VERSION, safe_version() and the .pc file) is MAJOR.MINOR.PATCH; the
# newest node of the version script is LIBSAFEOPEN_MAJOR.MINOR (a minor
# release adds interfaces in a new node, README "ABI policy"); the soname is
# libsafeopen.so.MAJOR; NEWS opens with the release, debian/changelog's top
# entry packages it, no entry of the symbols file is newer, and every man
# page's title line names it. safe_version() itself is compared below (the
# static application prints it) and in test_base.
ver=$(sed -n 's/^AC_INIT(\[libsafeopen\], \[\([^]]*\)\].*/\1/p' "$srcdir/configure.ac")
pcver=$(sed -n 's/^Version: //p' "$builddir/libsafeopen.pc" 2>/dev/null)
vstatus=0
vfail() { echo "check-symbols: version: $*"; vstatus=1; }
case $ver in
[0-9]*.[0-9]*.[0-9]*) ;;
*) vfail "configure.ac's AC_INIT version '$ver' is not MAJOR.MINOR.PATCH" ;;
esac
major=${ver%%.*}
minor=${ver#*.}; minor=${minor%%.*}
[ "$pcver" = "$ver" ] || vfail "libsafeopen.pc says '$pcver', configure.ac '$ver' (reconfigure)"
node=$(sed -n 's/^\(LIBSAFEOPEN_[0-9.]*\)[[:space:]]*{.*/\1/p' "$srcdir/lib/libsafeopen.sym" | tail -n 1)
[ "$node" = "LIBSAFEOPEN_$major.$minor" ] ||
	vfail "newest node of lib/libsafeopen.sym is '$node'; release $ver needs LIBSAFEOPEN_$major.$minor"
so_soname() { readelf -d "$so" | sed -n 's/.*(SONAME).*\[\(.*\)\]$/\1/p'; }
cached soname "$so" so_soname
soname=; IFS= read -r soname <"$cache/soname" || :
[ "$soname" = "libsafeopen.so.$major" ] || vfail "soname '$soname', release $ver needs libsafeopen.so.$major"
news=$(sed -n 's/^\([0-9][0-9.]*\) .*/\1/p' "$srcdir/NEWS" | head -n 1)
[ "$news" = "$ver" ] || vfail "NEWS opens with '$news', not $ver"
deb=$(sed -n '1s/^libsafeopen (\([^)-]*\)-[^)]*).*/\1/p' "$srcdir/packaging/debian/changelog")
[ "$deb" = "$ver" ] || vfail "packaging/debian/changelog's top entry is '$deb', not $ver"
newer=$(awk -v v="$ver" 'NR > 2 && $2 != v { print $1 " " $2 }' "$srcdir/packaging/debian/libsafeopen1.symbols" |
	while read -r sym sv; do
		dpkg --compare-versions "$sv" gt "$ver" 2>/dev/null && echo "$sym $sv"
	done || true)
[ -z "$newer" ] || vfail "symbols newer than $ver in packaging/debian/libsafeopen1.symbols: $newer"
# One awk reads every page (a process per page cost ~100 starts); a page
# without a .TH line is an alias (.so) and is skipped.
badth=$(awk -v v="$ver" -v s="$srcdir/" '
function flush() {
	if (f != "" && hasth && th != v)
		print (index(f, s) == 1 ? substr(f, length(s) + 1) : f) ": .TH names libsafeopen \047" th "\047, not " v
}
FNR == 1 { flush(); f = FILENAME; hasth = 0; th = "" }
/^\.TH / { hasth = 1; th = match($0, /"libsafeopen [0-9][^"]*"/) ? substr($0, RSTART + 13, RLENGTH - 14) : "" }
END { flush() }' "$srcdir"/doc/man/man3/*.3 "$srcdir"/doc/man/man7/*.7 "$srcdir"/tools/safeopen/safeopen.1 \
	"$srcdir"/tools/safe-httpd/safe-httpd.1) || vfail "awk could not read the man pages"
[ -z "$badth" ] || vfail "$badth"
# The Python package: safeopen.__version__ of the module built here (from
# PACKAGE_VERSION) and the version setup.py gives pip and python -m build
# (configure.ac's, read again) are the release too. One interpreter for
# both; setup.py runs with setuptools replaced by a stub that records what
# setup() is given (importing setuptools alone costs a CPU-second).
# The interpreter's answer is kept (tests/docs/symbols-cache/python.out) while
# nothing it read is newer: the module's build stamp, setup.py, configure.ac,
# this script.
pyvers=""
stamp=$builddir/bindings/python/build/.stamp
pycache=$cache/python.out
if [ -n "${PYTHON_BIN:-}" ] && [ -f "$stamp" ]; then
	if ! row_unchanged "$pycache" "$PYTHON_BIN|$srcdir" "$stamp" "$srcdir/bindings/python/setup.py" \
		"$srcdir/configure.ac"; then
		pyout=$(PYTHONPATH="$builddir/bindings/python/build" LD_LIBRARY_PATH="$builddir/lib/.libs" \
			"$PYTHON_BIN" - "$srcdir/bindings/python/setup.py" 2>/dev/null <<'EOPY'
import runpy
import sys
import types
# setup.py first: importing a sanitizer build's module can end the process
got = {}
st = types.ModuleType("setuptools")
st.Extension = lambda *a, **k: None
st.setup = got.update
be = types.ModuleType("setuptools.command.build_ext")
be.build_ext = type("build_ext", (), {})
sys.modules.update({"setuptools": st, "setuptools.command": types.ModuleType("setuptools.command"),
                    "setuptools.command.build_ext": be})
runpy.run_path(sys.argv[1], run_name="__main__")
for name in ("setuptools.command.build_ext", "setuptools.command", "setuptools"):
    del sys.modules[name]
print("setup %s" % got.get("version"), flush=True)
try:
    import safeopen
    print("module " + safeopen.__version__)
except Exception:  # a sanitizer build: reported by the shell
    print("module-unimportable")
EOPY
) || true
		printf '%s\n%s\n' "$PYTHON_BIN|$srcdir" "$pyout" >"$pycache"
	fi
	pyver= setupver=
	while IFS= read -r l; do
		case $l in "module "*) pyver=${l#module } ;; "setup "*) setupver=${l#setup } ;; esac
	done <"$pycache"
	if [ -n "$pyver" ]; then
		[ "$pyver" = "$ver" ] || vfail "safeopen.__version__ of the built module is '$pyver', not $ver"
		pyvers=", safeopen.__version__"
	else
		echo "check-symbols: the built Python module cannot be imported here (a sanitizer build?): its version not checked"
	fi
	[ "$setupver" = "$ver" ] || vfail "bindings/python/setup.py gives setup() the version '$setupver', not $ver"
	pyvers="$pyvers, setup.py"
fi
[ $vstatus -eq 0 ] && echo "check-symbols: version $ver: $node, libsafeopen.so.$major, libsafeopen.pc, NEWS, debian/changelog, symbols file, man pages$pyvers agree"
[ $vstatus -eq 0 ] || status=1

# The static archive (lib/static.mk): its only global definitions are the
# version script's symbols, and an application may define every internal
# name of the library (taken from the shared object's symbol table, where
# they are local) and still link statically against it.
a="$builddir/lib/.libs/libsafeopen.a"
if [ ! -f "$a" ]; then
	echo "check-symbols: no $a (configured with --disable-static?): archive not checked"
	exit $status
fi
archive_globals() { nm -g --defined-only "$a" | awk 'NF == 3 { print $3 }' | sort -u; }
cached archive "$a" archive_globals
if ! cmp -s "$cache/archive" "$tmp/script"; then
	echo "check-symbols: archive globals (<) and version script (>) differ:"
	diff "$cache/archive" "$tmp/script" || true
	status=1
fi
# Internal functions and objects of the library: local symbols of the .so,
# minus compiler-generated and file-scope names that cannot collide anyway.
so_locals() {
	nm --defined-only "$so" | awk 'NF == 3 && $2 ~ /^[tdbr]$/ && $3 ~ /^[A-Za-z][A-Za-z0-9_]*$/ { print $3 }'
}
cached so-locals "$so" so_locals
grep -v -x -F -f "$tmp/script" "$cache/so-locals" | sort -u > "$tmp/internal" || true
n=$(wc -l < "$tmp/internal")
if [ "$n" -eq 0 ]; then
	echo "check-symbols: found no internal symbol names in $so"; status=1
else
	{
		echo '/* Defines every internal symbol name of libsafeopen. */'
		sed 's/.*/char &[1] = { 0 };/' "$tmp/internal"
		echo 'int safeopen_collide_main(void);'
		echo 'int safeopen_collide_main(void) { return 0; }'
	} > "$tmp/collide.c"
	cat > "$tmp/main.c" <<'EOC'
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <safeopen.h>
int main(void)
{
	/* Calls into the resolver, whose internals the application redefines. */
	int escaped = !(safe_openat_beneath(AT_FDCWD, "..", O_RDONLY, 0) == -1 && errno == EXDEV);
	puts(safe_version());
	return escaped;
}
EOC
	CC_=${CC:-cc}
	# The linked application is kept in the build tree between runs
	# (tests/docs/symbols-cache/, as make keeps objects) and linked again
	# when anything it is made of is newer (the archive, the shared object
	# whose names it defines, the header, this script) or the compiler, its
	# flags or the source tree differ.
	sig="$CC_|${TEST_LINK_FLAGS:-}|$srcdir|$n"
	app=$cache/static-app
	if ! [ -f "$app" ] || ! row_unchanged "$cache/signature" "$sig" "$a" "$so" "$srcdir/include/safeopen.h"; then
		rm -f "$app" "$cache/signature"
		# TEST_LINK_FLAGS: the build's sanitizer and linker flags (make check sets it).
		# shellcheck disable=SC2086
		$CC_ ${TEST_LINK_FLAGS:-} -I"$srcdir/include" -o "$app" "$tmp/main.c" "$tmp/collide.c" "$a" -pthread \
			> "$tmp/link.log" 2>&1 && row_passed "$cache/signature" "$sig" || rm -f "$app"
	fi
	if [ -f "$app" ] && "$app" > "$tmp/app.out"; then
		echo "check-symbols: archive: $(wc -l < "$cache/archive") globals; an application defining all $n internal names links statically"
		[ "$(cat "$tmp/app.out")" = "$ver" ] ||
			{ echo "check-symbols: version: safe_version() says '$(cat "$tmp/app.out")', not $ver"; status=1; }
	else
		echo "check-symbols: static link of an application defining the $n internal names failed:"
		cat "$tmp/link.log"; status=1
	fi
fi
exit $status
