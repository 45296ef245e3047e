# Sourced by the shell tests (after top_builddir is set).
# direct_binary VAR: $VAR names a program of the build; replace it by the
# binary its libtool wrapper script would run (DIR/.libs/NAME, with the
# build's library directory put first in the exported LD_LIBRARY_PATH), or
# keep the program when there is none or SAFEOPEN_WRAPPER is set. The result
# is absolute. The wrapper costs a shell per run; tests that run a program a
# hundred times call the binary directly.
direct_binary() {
	eval "db_path=\${$1}"
	case $db_path in /*) ;; *) db_path=$(pwd)/$db_path ;; esac
	if [ -z "${SAFEOPEN_WRAPPER:-}" ] && [ -x "${db_path%/*}/.libs/${db_path##*/}" ] &&
	   [ -d "$top_builddir/lib/.libs" ]; then
		db_path=${db_path%/*}/.libs/${db_path##*/}
		db_lib=$(cd "$top_builddir/lib/.libs" && pwd)
		case ":${LD_LIBRARY_PATH:-}:" in
		*":$db_lib:"*) ;;
		*) LD_LIBRARY_PATH=$db_lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} ;;
		esac
		export LD_LIBRARY_PATH
	fi
	eval "$1=\$db_path"
}
