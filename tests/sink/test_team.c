/*
 * team: the team catalogue from ClickHouse's aggregates — status and
 * fixBuild decided by the fold itself (a fix's build is the first build
 * after it; an occurrence in it or later regresses; an occurrence without
 * a build after the fix regresses), the aggregates carried over as they
 * came, the local catalogue's order, filters and limit; and the SQL reads
 * deduplicated rows.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "ledger/ledger.h"
#include "sink/team.h"

static const char BUILDS[] =
    "{\"build\":\"b1\",\"o\":[1,1000,\"m\",\"p\",1,0],\"heartbeats\":3}\n"
    "{\"build\":\"b2\",\"o\":[1,5000,\"m\",\"p\",1,100],\"heartbeats\":2}\n";
/* the same builds, the fix's build never run with heartbeats */
static const char BUILDS_NO_HB[] =
    "{\"build\":\"b1\",\"o\":[1,1000,\"m\",\"p\",1,0],\"heartbeats\":3}\n"
    "{\"build\":\"b2\",\"o\":[1,5000,\"m\",\"p\",1,100],\"heartbeats\":0}\n";
static const char FIXES[] =
    "{\"record\":\"{\\\"type\\\":\\\"fix\\\",\\\"id\\\":\\\"aaaaaaaa\\\","
    "\\\"at\\\":\\\"1970-01-01T00:00:03.000Z\\\",\\\"title\\\":\\\"t\\\","
    "\\\"footprints\\\":[\\\"00000001\\\",\\\"00000002\\\",\\\"00000004\\\"]}\"}\n"
    "{\"record\":\"{\\\"type\\\":\\\"fix\\\",\\\"id\\\":\\\"bbbbbbbb\\\","
    "\\\"status\\\":\\\"proposed\\\",\\\"at\\\":\\\"1970-01-01T00:00:03.500Z\\\","
    "\\\"footprints\\\":[\\\"00000003\\\"]}\"}\n";
#define ROW(id, type, builds, count, timed, wkey, unbuilt, lu) \
    "{\"id\":\"" id "\",\"key\":\"k" id "\",\"tl\":[\"" type "\"," \
    "\"play\",\"a=b,c=d\",\"{\\\"guess\\\":" \
    "\\\"g\\\",\\\"confidence\\\":null,\\\"evidence\\\":\\\"e\\\"}\"]," \
    "\"count\":" #count ",\"first\":1000,\"last\":4500,\"timed\":" #timed \
    ",\"machines\":2,\"builds\":" builds ",\"wkey\":" wkey \
    ",\"last_unbuilt\":" #lu ",\"unbuilt_timed\":" \
    #unbuilt "}\n"
static const char ROWS[] =
    ROW("00000001", "hitch", "[\"b1\"]", 5, 5, "[0,-150.5,1,1500,\"m\",\"p\",1,7]", 0, 0)
    ROW("00000002", "hitch", "[\"b1\",\"b2\"]", 9, 9, "[0,-20,1,1500,\"m\",\"p\",1,8]", 0, 0)
    ROW("00000003", "jitter", "[\"b2\"]", 1, 0, "[1,0,0,0,\"m\",\"p\",1,9]", 0, 0)
    ROW("00000004", "jitter", "[]", 2, 2, "[0,-3,1,1500,\"m\",\"p\",1,9]", 1, 4000)
    "{\"id\":\"not-hex\",\"count\":1}\n";
static const char COUNTS[] =
    "{\"lines\":20,\"folded\":18,\"incidents\":17,\"fixes\":2,"
    "\"malformed\":1,\"machines\":2}\n";

static cJSON *
catalogue(const struct team_query *q)
{
	const char	*ans[TEAM_NQ] = { BUILDS, ROWS, FIXES, COUNTS };
	char		 err[256];
	cJSON		*o = team_catalogue(ans, q, 10000, err, sizeof(err));

	if (o == NULL)
		fail_msg("%s", err);
	return o;
}

static const cJSON *
row(const cJSON *cat, const char *id)
{
	const cJSON	*r;

	cJSON_ArrayForEach(r, cJSON_GetObjectItem(cat, "issues"))
		if (strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(r, "id")),
		    id) == 0)
			return r;
	return NULL;
}

static const char *
s(const cJSON *o, const char *k)
{
	return cJSON_GetStringValue(cJSON_GetObjectItem(o, k));
}

static const struct team_query ALL = { NULL, NULL, 0, 0, LEDGER_NO_TIME,
				       LEDGER_NO_TIME };

static void
team_status_by_the_fold(void **state)
{
	cJSON		*cat = catalogue(&ALL);
	const cJSON	*r, *fx;

	(void)state;
	/* occurred only in b1, older than the fix's build b2: fixed */
	assert_string_equal(s(row(cat, "00000001"), "status"), "fixed");
	/* occurred in b2: regressed */
	assert_string_equal(s(row(cat, "00000002"), "status"), "regressed");
	/* only a proposal names it: open, and the proposal is listed */
	r = row(cat, "00000003");
	assert_string_equal(s(r, "status"), "open");
	assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(r,
	    "proposals")), 1);
	/* an occurrence without a build after the fix: regressed */
	assert_string_equal(s(row(cat, "00000004"), "status"), "regressed");
	/* the fix's build: the first build after its `at` */
	fx = cJSON_GetArrayItem(cJSON_GetObjectItem(row(cat, "00000001"),
	    "fixes"), 0);
	assert_string_equal(s(fx, "id"), "aaaaaaaa");
	assert_string_equal(s(fx, "fixBuild"), "b2");
	/* a row ClickHouse could not have had from the sink is no row */
	assert_null(row(cat, "not-hex"));
	cJSON_Delete(cat);
}

/* A fix without an after window waits for a build with heartbeats. */
static void
team_pending_until_measured(void **state)
{
	const char	*ans[TEAM_NQ] = { BUILDS_NO_HB, ROWS, FIXES, COUNTS };
	char		 err[256];
	cJSON		*cat = team_catalogue(ans, &ALL, 10000, err, sizeof(err));
	const cJSON	*fx;

	(void)state;
	assert_non_null(cat);
	assert_string_equal(s(row(cat, "00000001"), "status"), "pending");
	assert_string_equal(s(row(cat, "00000002"), "status"), "regressed");
	fx = cJSON_GetArrayItem(cJSON_GetObjectItem(row(cat, "00000001"),
	    "fixes"), 0);
	assert_true(cJSON_IsTrue(cJSON_GetObjectItem(fx, "pending")));
	cJSON_Delete(cat);
	/* the fix's build ran with heartbeats: fixed */
	cat = catalogue(&ALL);
	fx = cJSON_GetArrayItem(cJSON_GetObjectItem(row(cat, "00000001"),
	    "fixes"), 0);
	assert_true(cJSON_IsFalse(cJSON_GetObjectItem(fx, "pending")));
	/* no window measured from synthetic heartbeats: none is shown */
	assert_true(cJSON_IsNull(cJSON_GetObjectItem(fx, "after")));
	assert_null(s(fx, "afterSource"));
	cJSON_Delete(cat);
}

static void
team_aggregates_carried_over(void **state)
{
	cJSON		*cat = catalogue(&ALL);
	const cJSON	*r = row(cat, "00000001"), *w, *c;

	(void)state;
	assert_string_equal(s(r, "key"), "k00000001");
	assert_string_equal(s(r, "type"), "hitch");
	assert_string_equal(s(r, "phase"), "play");
	assert_int_equal(cJSON_GetObjectItem(r, "count")->valueint, 5);
	assert_int_equal(cJSON_GetObjectItem(r, "machines")->valueint, 2);
	assert_string_equal(s(r, "first"), "1970-01-01T00:00:01.000Z");
	assert_string_equal(s(r, "last"), "1970-01-01T00:00:04.500Z");
	assert_int_equal(cJSON_GetObjectItem(r, "lastAgoMs")->valueint, 5500);
	w = cJSON_GetObjectItem(r, "worst");
	assert_true(cJSON_GetObjectItem(w, "value")->valuedouble == 150.5);
	assert_string_equal(s(w, "unit"), "ms");
	assert_string_equal(s(w, "at"), "1970-01-01T00:00:01.500Z");
	assert_string_equal(s(cJSON_GetObjectItem(r, "verdict"), "guess"), "g");
	assert_true(cJSON_IsNull(cJSON_GetObjectItem(cJSON_GetObjectItem(r,
	    "verdict"), "confidence")));
	assert_string_equal(s(cJSON_GetObjectItem(r, "situation"), "c"), "d");
	/* no value anywhere: no worst; no `at`: no first or last */
	r = row(cat, "00000003");
	assert_true(cJSON_IsNull(cJSON_GetObjectItem(r, "worst")));
	assert_true(cJSON_IsNull(cJSON_GetObjectItem(r, "first")));
	assert_true(cJSON_IsNull(cJSON_GetObjectItem(r, "lastAgoMs")));
	assert_string_equal(s(cJSON_GetObjectItem(row(cat, "00000004"),
	    "worst"), "unit"), "units");
	c = cJSON_GetObjectItem(cat, "counts");
	assert_int_equal(cJSON_GetObjectItem(c, "rows")->valueint, 4);
	assert_int_equal(cJSON_GetObjectItem(c, "builds")->valueint, 2);
	assert_int_equal(cJSON_GetObjectItem(c, "malformedFootprints")->valueint,
	    1);
	cJSON_Delete(cat);
}

static void
team_order_filters_limit(void **state)
{
	struct team_query	 q = ALL;
	cJSON			*cat = catalogue(&ALL);
	const cJSON		*a = cJSON_GetObjectItem(cat, "issues");

	(void)state;
	assert_int_equal(cJSON_GetArraySize(a), 4);
	assert_string_equal(s(cJSON_GetArrayItem(a, 0), "id"), "00000002");
	assert_string_equal(s(cJSON_GetArrayItem(a, 1), "id"), "00000001");
	assert_string_equal(s(cJSON_GetArrayItem(a, 2), "id"), "00000004");
	assert_string_equal(s(cJSON_GetArrayItem(a, 3), "id"), "00000003");
	cJSON_Delete(cat);
	q.status = "regressed";
	cat = catalogue(&q);
	assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(cat, "issues")),
	    2);
	cJSON_Delete(cat);
	q.status = NULL;
	q.type = "jitter";
	q.limit = 1;
	cat = catalogue(&q);
	a = cJSON_GetObjectItem(cat, "issues");
	assert_int_equal(cJSON_GetArraySize(a), 1);
	assert_string_equal(s(cJSON_GetArrayItem(a, 0), "id"), "00000004");
	cJSON_Delete(cat);
}

static void
team_sql_reads_deduplicated(void **state)
{
	struct team_query	 q = ALL;
	int			 i;

	(void)state;
	for (i = 0; i < TEAM_NQ; i++) {
		char	*sql = team_sql((enum team_q)i, "`db`.`records`", &q);

		assert_non_null(sql);
		assert_non_null(strstr(sql, "`db`.`records` FINAL"));
		if (i != TEAM_Q_FIXES)
			assert_non_null(strstr(sql, "automated = 0"));
		free(sql);
	}
	q.include_automated = 1;
	q.from_ms = 5;
	{
		char	*sql = team_sql(TEAM_Q_ROWS, "t", &q);

		assert_null(strstr(sql, "automated = 0"));
		assert_non_null(strstr(sql, "at_ms >= 5"));
		free(sql);
	}
}

static void
team_malformed_answer(void **state)
{
	const char	*ans[TEAM_NQ] = { BUILDS, "{not json\n", FIXES, COUNTS };
	char		 err[256];

	(void)state;
	assert_null(team_catalogue(ans, &ALL, 0, err, sizeof(err)));
	assert_non_null(strstr(err, "JSONEachRow"));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(team_status_by_the_fold),
		cmocka_unit_test(team_pending_until_measured),
		cmocka_unit_test(team_aggregates_carried_over),
		cmocka_unit_test(team_order_filters_limit),
		cmocka_unit_test(team_sql_reads_deduplicated),
		cmocka_unit_test(team_malformed_answer),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
