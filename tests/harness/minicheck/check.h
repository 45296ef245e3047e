/* SPDX-License-Identifier: MIT */
/*
 * minicheck: the part of the Check unit-test API that the suites of tests/
 * use, for C libraries that Check is not built for (musl: Debian's libcheck
 * is linked against glibc). Same source-level interface, same semantics for
 * what the suites rely on: every test runs in its own forked child (checked
 * fixtures run in that child around it), a failed assertion ends the test
 * with its message, loop tests run once per index, tcase timeouts kill the
 * child, CK_RUN_SUITE / CK_RUN_CASE select, CK_DEFAULT_TIMEOUT and
 * CK_TIMEOUT_MULTIPLIER scale. CK_FORK=no is not supported (valgrind runs
 * use the real Check). Not a replacement for Check anywhere else.
 */
#ifndef SAFEOPEN_MINICHECK_H
#define SAFEOPEN_MINICHECK_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

typedef struct TTest {
	const char *name;
	void (*fn)(int);
	const char *file;
	int line;
} TTest;
typedef struct TCase TCase;
typedef struct Suite Suite;
typedef struct SRunner SRunner;
typedef void (*SFun)(void);
enum print_output { CK_SILENT, CK_MINIMAL, CK_NORMAL, CK_VERBOSE, CK_ENV };

#define START_TEST(tn)                                                             \
	static void tn##_fn(int _i __attribute__((unused)));                       \
	static const TTest tn##_ttest = { #tn, tn##_fn, __FILE__, __LINE__ };      \
	static const TTest *tn = &tn##_ttest;                                      \
	static void tn##_fn(int _i __attribute__((unused)))
#define END_TEST

Suite *suite_create(const char *name);
void suite_add_tcase(Suite *s, TCase *tc);
TCase *tcase_create(const char *name);
void tcase_set_timeout(TCase *tc, double seconds);
void tcase_add_checked_fixture(TCase *tc, SFun setup, SFun teardown);
void tcase_add_unchecked_fixture(TCase *tc, SFun setup, SFun teardown);
void _tcase_add_test(TCase *tc, const TTest *t, int sig, int exitval, int start, int end);
#define tcase_add_test(tc, t) _tcase_add_test((tc), (t), 0, 0, 0, 1)
#define tcase_add_loop_test(tc, t, s, e) _tcase_add_test((tc), (t), 0, 0, (s), (e))
SRunner *srunner_create(Suite *s);
void srunner_add_suite(SRunner *sr, Suite *s);
void srunner_run_all(SRunner *sr, enum print_output mode);
int srunner_ntests_failed(SRunner *sr);
int srunner_ntests_run(SRunner *sr);
void srunner_free(SRunner *sr);
void srunner_set_tap(SRunner *sr, const char *fname);

void _ck_mark(const char *file, int line);
/* The first variadic argument is a printf format (or NULL), as in Check. */
void _ck_failed(const char *file, int line, const char *expr, ...) __attribute__((noreturn));

#define mark_point() _ck_mark(__FILE__, __LINE__)
#define ck_assert_msg(expr, ...)                                                   \
	((expr) ? _ck_mark(__FILE__, __LINE__)                                     \
		: _ck_failed(__FILE__, __LINE__, "Assertion '" #expr "' failed" , ##__VA_ARGS__))
#define ck_assert(expr) ck_assert_msg(expr, NULL)
#define ck_abort_msg(...) _ck_failed(__FILE__, __LINE__, "Failed" , ##__VA_ARGS__)
#define ck_abort() ck_abort_msg(NULL)

#define _ck_assert_int(X, OP, Y)                                                   \
	do {                                                                       \
		intmax_t _ck_x = (X), _ck_y = (Y);                                 \
		ck_assert_msg(_ck_x OP _ck_y, "Assertion '%s' failed: %s == %jd, %s == %jd", \
			      #X " " #OP " " #Y, #X, _ck_x, #Y, _ck_y);                \
	} while (0)
#define ck_assert_int_eq(X, Y) _ck_assert_int(X, ==, Y)
#define ck_assert_int_ne(X, Y) _ck_assert_int(X, !=, Y)
#define ck_assert_int_lt(X, Y) _ck_assert_int(X, <, Y)
#define ck_assert_int_le(X, Y) _ck_assert_int(X, <=, Y)
#define ck_assert_int_gt(X, Y) _ck_assert_int(X, >, Y)
#define ck_assert_int_ge(X, Y) _ck_assert_int(X, >=, Y)
#define _ck_assert_uint(X, OP, Y)                                                  \
	do {                                                                       \
		uintmax_t _ck_x = (X), _ck_y = (Y);                                \
		ck_assert_msg(_ck_x OP _ck_y, "Assertion '%s' failed: %s == %ju, %s == %ju", \
			      #X " " #OP " " #Y, #X, _ck_x, #Y, _ck_y);                \
	} while (0)
#define ck_assert_uint_eq(X, Y) _ck_assert_uint(X, ==, Y)
#define ck_assert_uint_ne(X, Y) _ck_assert_uint(X, !=, Y)
#define ck_assert_uint_lt(X, Y) _ck_assert_uint(X, <, Y)
#define ck_assert_uint_le(X, Y) _ck_assert_uint(X, <=, Y)
#define ck_assert_uint_gt(X, Y) _ck_assert_uint(X, >, Y)
#define ck_assert_uint_ge(X, Y) _ck_assert_uint(X, >=, Y)
#define _ck_assert_str(X, OP, Y)                                                   \
	do {                                                                       \
		const char *_ck_x = (X), *_ck_y = (Y);                             \
		ck_assert_msg(_ck_x && _ck_y && strcmp(_ck_x, _ck_y) OP 0,         \
			      "Assertion '%s' failed: %s == \"%s\", %s == \"%s\"",     \
			      #X " " #OP " " #Y, #X, _ck_x ? _ck_x : "(null)", #Y,     \
			      _ck_y ? _ck_y : "(null)");                               \
	} while (0)
#define ck_assert_str_eq(X, Y) _ck_assert_str(X, ==, Y)
#define ck_assert_str_ne(X, Y) _ck_assert_str(X, !=, Y)
#define ck_assert_ptr_eq(X, Y) ck_assert_msg((const void *)(X) == (const void *)(Y), NULL)
#define ck_assert_ptr_ne(X, Y) ck_assert_msg((const void *)(X) != (const void *)(Y), NULL)
#define ck_assert_ptr_null(X) ck_assert_msg((const void *)(X) == NULL, NULL)
#define ck_assert_ptr_nonnull(X) ck_assert_msg((const void *)(X) != NULL, NULL)

#endif
