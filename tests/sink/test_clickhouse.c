/*
 * clickhouse: sink URLs — the database parameter taken out and checked,
 * everything else passed through, no password in what logs show — and
 * request URLs with the statement escaped.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "sink/clickhouse.h"

static void
clickhouse_url_parts(void **state)
{
	struct ch_url	u;
	char		err[256];

	(void)state;
	assert_int_equal(ch_url_parse("http://127.0.0.1:8123/?database=team",
	    &u, err, sizeof(err)), 0);
	assert_string_equal(u.base, "http://127.0.0.1:8123/");
	assert_string_equal(u.db, "team");
	assert_string_equal(u.params, "");
	assert_int_equal(ch_url_parse("https://ch.example:8443", &u, err,
	    sizeof(err)), 0);
	assert_string_equal(u.base, "https://ch.example:8443/");
	assert_string_equal(u.db, "sloptimize");
	assert_int_equal(ch_url_parse("http://h:1/x?user=a&database=d_1&"
	    "password=s3cret", &u, err, sizeof(err)), 0);
	assert_string_equal(u.base, "http://h:1/x");
	assert_string_equal(u.db, "d_1");
	assert_string_equal(u.params, "user=a&password=s3cret");
	assert_null(strstr(u.shown, "s3cret"));
	assert_int_equal(ch_url_parse("http://bob:pw@h:1/", &u, err,
	    sizeof(err)), 0);
	assert_null(strstr(u.shown, "pw@"));
	assert_non_null(strstr(u.shown, "bob:***@h:1"));
}

static void
clickhouse_url_refused(void **state)
{
	struct ch_url	u;
	char		err[256];

	(void)state;
	assert_int_equal(ch_url_parse("ftp://h/", &u, err, sizeof(err)),
	    -EINVAL);
	assert_non_null(strstr(err, "http://"));
	assert_int_equal(ch_url_parse("http://", &u, err, sizeof(err)),
	    -EINVAL);
	assert_int_equal(ch_url_parse("http://h/?database=a;drop", &u, err,
	    sizeof(err)), -EINVAL);
	assert_int_equal(ch_url_parse("http://h/?database=", &u, err,
	    sizeof(err)), 0);	/* empty: the default */
	assert_string_equal(u.db, "sloptimize");
	assert_int_equal(ch_url_parse(NULL, &u, err, sizeof(err)), -EINVAL);
}

static void
clickhouse_request_url(void **state)
{
	struct ch_url	 u;
	char		 err[256], *r;

	(void)state;
	assert_int_equal(ch_url_parse("http://h:1/?user=a&database=d", &u, err,
	    sizeof(err)), 0);
	r = ch_request_url(&u, "INSERT INTO `d`.x FORMAT JSONEachRow", "s=1");
	assert_string_equal(r, "http://h:1/?user=a&query=INSERT%20INTO%20%60d"
	    "%60.x%20FORMAT%20JSONEachRow&s=1");
	free(r);
	r = ch_request_url(&u, NULL, NULL);
	assert_string_equal(r, "http://h:1/?user=a");
	free(r);
}

static void
clickhouse_buffer_bounded(void **state)
{
	struct ch_buf	b = { 0 };

	(void)state;
	b.max = 4;
	assert_int_equal(ch_buf_add(&b, "abc", 3), 0);
	assert_int_equal(ch_buf_add(&b, "de", 2), -E2BIG);
	assert_int_equal(b.len, 3);
	assert_string_equal(b.p, "abc");
	ch_buf_free(&b);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(clickhouse_url_parts),
		cmocka_unit_test(clickhouse_url_refused),
		cmocka_unit_test(clickhouse_request_url),
		cmocka_unit_test(clickhouse_buffer_bounded),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
