/*
 * batch: a ledger line becomes exactly the row the team's queries need —
 * the footprint by the fold's reading rule (stamped v1 kept, unstamped
 * and v0 re-derived, a malformed v1 id re-derived and flagged), the
 * verdict, value and unit per type, exact integers — and a line the fold
 * skips becomes no row at all.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <errno.h>
#include <string.h>
#include <cmocka.h>

#include <cjson/cJSON.h>

#include "sink/batch.h"

static cJSON *
row_of(struct batch *b, enum sink_stream s, const char *line, uint64_t off,
    int *rc)
{
	struct ch_buf	out = { 0 };
	cJSON		*o = NULL;

	*rc = batch_add(b, s, 3, line, strlen(line), off, &out);
	if (*rc == 0) {
		assert_non_null(out.p);
		assert_int_equal(out.p[out.len - 1], '\n');
		assert_null(memchr(out.p, '\n', out.len - 1));
		o = cJSON_Parse(out.p);
		assert_non_null(o);
	} else
		assert_int_equal(out.len, 0);
	ch_buf_free(&out);
	return o;
}

static const char *
s_of(const cJSON *o, const char *k)
{
	const char	*v = cJSON_GetStringValue(cJSON_GetObjectItem(o, k));

	assert_non_null(v);
	return v;
}

static double
n_of(const cJSON *o, const char *k)
{
	const cJSON	*v = cJSON_GetObjectItem(o, k);

	assert_true(cJSON_IsNumber(v));
	return v->valuedouble;
}

static void
batch_keys_and_exact_integers(void **state)
{
	struct batch	*b = batch_create("m1", "game-1234");
	cJSON		*o;
	int		 rc;

	(void)state;
	assert_non_null(b);
	o = row_of(b, SINK_PERF, "{\"type\":\"heartbeat\",\"at\":"
	    "\"2026-09-01T09:00:02.012Z\",\"build\":\"1.4.0\"}",
	    9007199254740000ull, &rc);
	assert_int_equal(rc, 0);
	assert_string_equal(s_of(o, "machine"), "m1");
	assert_string_equal(s_of(o, "project"), "game-1234");
	assert_string_equal(s_of(o, "stream"), "perf");
	assert_true(n_of(o, "generation") == 3);
	/* printed as an integer, not through a double's %g */
	assert_true(n_of(o, "offset") == 9007199254740000.0);
	assert_true(n_of(o, "at_ms") == 1788253202012.0);
	assert_true(n_of(o, "has_at") == 1);
	assert_string_equal(s_of(o, "day"), "2026-09-01");
	assert_string_equal(s_of(o, "build"), "1.4.0");
	assert_string_equal(s_of(o, "footprint_id"), "");
	assert_string_equal(s_of(o, "verdict"), "");
	assert_string_equal(s_of(o, "record"), "{\"type\":\"heartbeat\",\"at\":"
	    "\"2026-09-01T09:00:02.012Z\",\"build\":\"1.4.0\"}");
	cJSON_Delete(o);
	batch_destroy(b);
}

static void
batch_footprint_by_the_reading_rule(void **state)
{
	struct batch	*b = batch_create("m", "p");
	cJSON		*o;
	int		 rc;

	(void)state;
	/* stamped v2: the writer's id stays, even if it is not the hash */
	o = row_of(b, SINK_PERF, "{\"type\":\"hitch\",\"frameMs\":141.2,"
	    "\"footprint\":{\"v\":2,\"id\":\"0000abcd\",\"key\":\"k\"}}", 0, &rc);
	assert_string_equal(s_of(o, "footprint_id"), "0000abcd");
	assert_true(n_of(o, "malformed") == 0);
	assert_true(n_of(o, "value") == 141.2);
	assert_string_equal(s_of(o, "unit"), "ms");
	assert_true(n_of(o, "has_at") == 0);
	assert_string_equal(s_of(o, "day"), "1970-01-01");
	cJSON_Delete(o);
	/* unstamped: derived (footprint v2 vector 4fb3b53a) */
	o = row_of(b, SINK_PERF, "{\"type\":\"hitch\",\"classification\":"
	    "{\"guess\":\"long-script\"}}", 10, &rc);
	assert_string_equal(s_of(o, "footprint_id"), "4fb3b53a");
	assert_string_equal(s_of(o, "footprint_key"),
	    "hitch|-|long-script|no-script|ctx:");
	assert_true(n_of(o, "has_value") == 0);
	cJSON_Delete(o);
	/* stamped v0: re-derived */
	o = row_of(b, SINK_PERF, "{\"type\":\"hitch\",\"classification\":"
	    "{\"guess\":\"long-script\"},\"footprint\":{\"v\":0,\"id\":"
	    "\"ffffffff\"}}", 20, &rc);
	assert_string_equal(s_of(o, "footprint_id"), "4fb3b53a");
	assert_true(n_of(o, "malformed") == 0);
	cJSON_Delete(o);
	/* stamped v2, id not 8 hex: re-derived and flagged */
	o = row_of(b, SINK_PERF, "{\"type\":\"hitch\",\"classification\":"
	    "{\"guess\":\"long-script\"},\"footprint\":{\"v\":2,\"id\":"
	    "\"xyz\"}}", 30, &rc);
	assert_string_equal(s_of(o, "footprint_id"), "4fb3b53a");
	assert_true(n_of(o, "malformed") == 1);
	cJSON_Delete(o);
	batch_destroy(b);
}

static void
batch_verdict_value_per_type(void **state)
{
	struct batch	*b = batch_create("m", "p");
	cJSON		*o, *v;
	int		 rc;

	(void)state;
	o = row_of(b, SINK_PERF, "{\"type\":\"usermark\",\"ctx\":\"view=fp\","
	    "\"phase\":\"match\",\"automated\":true,\"worst\":[{\"frameMs\":"
	    "88,\"classification\":[{\"guess\":\"texture-upload\","
	    "\"confidence\":\"low\"},{\"guess\":\"other\"}]}]}", 0, &rc);
	assert_string_equal(s_of(o, "footprint_id"), "7ac002c0");
	assert_true(n_of(o, "automated") == 1);
	assert_true(n_of(o, "value") == 88);
	assert_string_equal(s_of(o, "unit"), "ms");
	assert_string_equal(s_of(o, "phase"), "match");
	assert_string_equal(s_of(o, "ctx"), "view=fp");
	v = cJSON_Parse(s_of(o, "verdict"));
	assert_string_equal(s_of(v, "guess"), "texture-upload");
	assert_string_equal(s_of(v, "confidence"), "low");
	assert_true(cJSON_IsNull(cJSON_GetObjectItem(v, "evidence")));
	cJSON_Delete(v);
	cJSON_Delete(o);
	o = row_of(b, SINK_PERF, "{\"type\":\"jitter\",\"track\":\"unit\","
	    "\"kind\":\"snap\",\"units\":\"2.5\",\"jump\":[1,0,0]}", 0, &rc);
	assert_true(n_of(o, "value") == 2.5);
	assert_string_equal(s_of(o, "unit"), "units");
	assert_string_equal(s_of(o, "verdict"), "");
	cJSON_Delete(o);
	batch_destroy(b);
}

static void
batch_skips_what_the_fold_skips(void **state)
{
	struct batch	*b = batch_create("m", "p");
	int		 rc;

	(void)state;
	assert_null(row_of(b, SINK_PERF, "", 0, &rc));
	assert_int_equal(rc, 1);
	assert_null(row_of(b, SINK_PERF, "  \r", 0, &rc));
	assert_int_equal(rc, 1);
	assert_null(row_of(b, SINK_PERF, "{\"type\":\"hitch\"", 0, &rc));
	assert_int_equal(rc, 1);
	assert_null(row_of(b, SINK_PERF, "{\"at\":\"x\"}", 0, &rc));
	assert_int_equal(rc, 1);
	assert_null(row_of(b, SINK_PERF, "[1,2]", 0, &rc));
	assert_int_equal(rc, 1);
	assert_null(row_of(b, SINK_PERF, "{\"type\":\"a\xff\"}", 0, &rc));
	assert_int_equal(rc, 1);
	assert_null(row_of(b, SINK_FIXES, "not json", 0, &rc));
	assert_int_equal(rc, 1);
	batch_destroy(b);
}

static void
batch_fixes_rows_and_bom(void **state)
{
	struct batch	*b = batch_create("m", "p");
	cJSON		*o;
	int		 rc;

	(void)state;
	o = row_of(b, SINK_FIXES, "\xef\xbb\xbf{\"type\":\"fix\",\"id\":"
	    "\"1f2e3d4c\",\"at\":\"2026-09-01T09:11:18.714Z\",\"footprints\":"
	    "[\"81e5eb9b\"]}\r", 5, &rc);
	assert_int_equal(rc, 0);
	assert_string_equal(s_of(o, "stream"), "fixes");
	assert_string_equal(s_of(o, "type"), "fix");
	assert_true(n_of(o, "has_at") == 1);
	/* the record without the BOM and the \r: a JSON object as is */
	assert_string_equal(s_of(o, "record"), "{\"type\":\"fix\",\"id\":"
	    "\"1f2e3d4c\",\"at\":\"2026-09-01T09:11:18.714Z\",\"footprints\":"
	    "[\"81e5eb9b\"]}");
	cJSON_Delete(o);
	batch_destroy(b);
}

static void
batch_full_buffer_adds_nothing(void **state)
{
	struct batch	*b = batch_create("m", "p");
	struct ch_buf	 out = { 0 };
	const char	*l = "{\"type\":\"heartbeat\"}";

	(void)state;
	/* room for one row and a bit, not two */
	assert_int_equal(batch_add(b, SINK_PERF, 1, l, strlen(l), 0, &out), 0);
	out.max = out.len + out.len / 2;
	{
		size_t	len = out.len;

		assert_int_equal(batch_add(b, SINK_PERF, 1, l, strlen(l), 21,
		    &out), -E2BIG);
		assert_int_equal(out.len, len);
	}
	ch_buf_free(&out);
	batch_destroy(b);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(batch_keys_and_exact_integers),
		cmocka_unit_test(batch_footprint_by_the_reading_rule),
		cmocka_unit_test(batch_verdict_value_per_type),
		cmocka_unit_test(batch_skips_what_the_fold_skips),
		cmocka_unit_test(batch_fixes_rows_and_bom),
		cmocka_unit_test(batch_full_buffer_adds_nothing),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
