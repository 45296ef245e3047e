# Sourced by the shell tests. A part of a script that cannot run here is a
# skip; a script that left a part out ends in SKIP (exit 77) naming every
# such part, never in PASS. A failed check still makes it FAIL.
#
# skip REASON: record a part that was not run (and say so in the log).
skips=
skip() { skips="${skips:+$skips; }$1"; echo "# SKIP $1"; }
# skips_exit NAME N: call once no check failed; exits 77 if a part was
# skipped, else returns.
skips_exit() {
	[ -z "$skips" ] && return 0
	echo "SKIP: $1: the $2 checks that ran passed; not run: $skips"
	exit 77
}
