/*
 * jscan: the validating scanner every ledger line goes through.  Cases as
 * data: a line and what must come of it.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "ledger/jscan.h"

static const struct {
	const char	*line;
	const char	*error;		/* NULL: valid */
} cases[] = {
	{ "{}", NULL },
	{ " {\"type\":\"hitch\"} \r", NULL },
	{ "{\"a\":[1,-2.5e+3,0.5,true,false,null,{\"b\":\"\\u00e9\\n\"}]}", NULL },
	{ "{\"s\":\"\\ud83d\\ude00\"}", NULL },
	{ "{\"s\":\"caf\xc3\xa9\"}", NULL },
	{ "[1]", "not a JSON object" },
	{ "\"x\"", "not a JSON object" },
	{ "", "not a JSON object" },
	{ "{\"a\":1,}", "expected member name" },
	{ "{\"a\" 1}", "expected ':'" },
	{ "{\"a\":1 \"b\":2}", "expected ',' or '}'" },
	{ "{\"a\":01}", "expected ',' or '}'" },
	{ "{\"a\":1.}", "bad number" },
	{ "{\"a\":-}", "bad number" },
	{ "{\"a\":tru}", "unexpected character" },
	{ "{\"a\":\"x}", "unterminated string" },
	{ "{\"a\":\"\\x\"}", "bad escape" },
	{ "{\"a\":\"\\u12\"}", "bad \\u escape" },
	{ "{\"a\":\"\\ud800\"}", "unpaired surrogate escape" },
	{ "{\"a\":\"\\udc00\"}", "unpaired surrogate escape" },
	{ "{\"a\":\"\xff\"}", "invalid UTF-8" },
	{ "{\"a\":\"\xc0\xaf\"}", "invalid UTF-8" },	/* overlong '/' */
	{ "{\"a\":\"\xed\xa0\x80\"}", "invalid UTF-8" },	/* surrogate */
	{ "{\"a\":\"\xf4\x90\x80\x80\"}", "invalid UTF-8" }, /* > U+10FFFF */
	{ "{\"a\":\"\xe2\x82\"}", "invalid UTF-8" },	/* cut sequence */
	{ "{\"a\":\"\t\"}", "control character in string" },
	{ "{\"a\":1} x", "trailing bytes after the object" },
	{ "{\"a\":1}{}", "trailing bytes after the object" },
	{ "{\"a\":[1,2}", "expected ',' or ']'" },
};

static void
jscan_table(void **state)
{
	size_t			i;
	struct jscan_result	r;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int	rc = jscan_object(cases[i].line, strlen(cases[i].line), &r);

		if (cases[i].error == NULL) {
			if (rc != 0)
				fail_msg("case %zu '%s': refused: %s", i,
				    cases[i].line, r.error);
		} else {
			if (rc == 0)
				fail_msg("case %zu '%s': accepted", i,
				    cases[i].line);
			assert_string_equal(r.error, cases[i].error);
		}
	}
}

static void
jscan_nul_byte(void **state)
{
	const char		line[] = "{\"type\":\"hi\0tch\"}";
	const char		tail[] = "{\"type\":\"x\"}\0";
	struct jscan_result	r;

	(void)state;
	assert_int_equal(jscan_object(line, sizeof(line) - 1, &r), -1);
	assert_string_equal(r.error, "NUL byte");
	assert_int_equal(r.error_at, 11);
	assert_int_equal(jscan_object(tail, sizeof(tail) - 1, &r), -1);
	assert_string_equal(r.error, "NUL byte");
}

static void
jscan_deep_nesting_refused(void **state)
{
	size_t			n = 100000, i;
	char			*line = malloc(2 * n + 16);
	struct jscan_result	r;

	(void)state;
	strcpy(line, "{\"a\":");
	for (i = 0; i < n; i++)
		line[5 + i] = '[';
	for (i = 0; i < n; i++)
		line[5 + n + i] = ']';
	strcpy(line + 5 + 2 * n, "}");
	assert_int_equal(jscan_object(line, strlen(line), &r), -1);
	assert_string_equal(r.error, "nested too deep");
	free(line);
}

static void
jscan_captures_top_level_fields(void **state)
{
	const char	*line = "{\"type\":\"hitch\",\"world\":{\"type\":\"no\"},"
	    "\"frameMs\":141.2,\"phase\":\"p\\u0031\",\"minted\":[\"a\",\"b\"],"
	    "\"classification\":[{\"guess\":\"g\",\"x\":[1,{\"y\":2}]}],"
	    "\"type\":\"hitch\"}";
	struct jscan_result	r;
	char			buf[64];
	double			v;

	(void)state;
	assert_int_equal(jscan_object(line, strlen(line), &r), 0);
	assert_true(jscan_eq(r.f[F_TYPE], "hitch"));
	assert_int_equal(jscan_num(r.f[F_FRAMEMS], &v), 0);
	assert_true(v == 141.2);
	assert_int_equal(jscan_str(r.f[F_PHASE], buf, sizeof(buf)), 2);
	assert_string_equal(buf, "p1");
	assert_int_equal(r.f[F_MINTED].kind, J_ARRAY);
	assert_true(jscan_eq(jscan_at(r.f[F_MINTED], 1), "b"));
	assert_int_equal(jscan_at(r.f[F_MINTED], 2).kind, J_NONE);
	assert_true(jscan_eq(jscan_get(jscan_at(r.f[F_CLASSIFICATION], 0),
	    "guess"), "g"));
	assert_int_equal(r.f[F_AT].kind, J_NONE);
}

static void
jscan_numbers_in_strings(void **state)
{
	const char		*line = "{\"a\":\"141.2\",\"b\":\"12x\",\"c\":\"\","
	    "\"d\":\" 3\",\"e\":\"nan\"}";
	struct jscan_result	r;
	struct jspan		o;
	double			v;

	(void)state;
	assert_int_equal(jscan_object(line, strlen(line), &r), 0);
	o.p = line;
	o.n = (uint32_t)strlen(line);
	o.kind = J_OBJECT;
	assert_int_equal(jscan_num(jscan_get(o, "a"), &v), 0);
	assert_true(v == 141.2);
	assert_int_equal(jscan_num(jscan_get(o, "b"), &v), -1);
	assert_int_equal(jscan_num(jscan_get(o, "c"), &v), -1);
	assert_int_equal(jscan_num(jscan_get(o, "e"), &v), -1);
	assert_int_equal(jscan_num(jscan_get(o, "missing"), &v), -1);
}

static void
jscan_str_truncates_on_utf8_boundary(void **state)
{
	const char		*line = "{\"a\":\"\xc3\xa9\xc3\xa9\xc3\xa9\"}";
	struct jscan_result	r;
	struct jspan		o = { line, 0, J_OBJECT, 0 };
	char			buf[4];

	(void)state;
	o.n = (uint32_t)strlen(line);
	assert_int_equal(jscan_object(line, strlen(line), &r), 0);
	/* 3 bytes of room: one é (2 bytes) fits, the next would be cut */
	assert_int_equal(jscan_str(jscan_get(o, "a"), buf, sizeof(buf)), 2);
	assert_string_equal(buf, "\xc3\xa9");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(jscan_table),
		cmocka_unit_test(jscan_nul_byte),
		cmocka_unit_test(jscan_deep_nesting_refused),
		cmocka_unit_test(jscan_captures_top_level_fields),
		cmocka_unit_test(jscan_numbers_in_strings),
		cmocka_unit_test(jscan_str_truncates_on_utf8_boundary),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
