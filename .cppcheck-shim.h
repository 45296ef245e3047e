/* SPDX-License-Identifier: MIT */
/*
 * Force-included by cppcheck in `make lint` (tests/attack.mk). cppcheck 2.10
 * ignores __attribute__((cleanup(...))), so every _cleanup_fd_ variable would
 * be reported as a resource leak or an unread variable. This maps each GNU
 * attribute the library uses to something cppcheck understands: cleanup(f)
 * becomes "static" (a variable whose scope end is not a leak), the others
 * disappear. An attribute missing here shows up as a cppcheck syntax error
 * ("SO_LINT_..."): add it.
 */
#define SO_LINT_EXPAND(z) z
#define __attribute__(x) SO_LINT_EXPAND(SO_LINT_ATTR x)
#define SO_LINT_ATTR(y) SO_LINT_##y
#define SO_LINT_cleanup(f) static
#define SO_LINT_unused
#define SO_LINT_visibility(v)
#define SO_LINT_warn_unused_result
#define SO_LINT_format(archetype, fmt, args)
#define SO_LINT_noreturn
#define SO_LINT_always_inline
