/*
 * sink: the machine id — made once beside the state directories, the same
 * for every project and every start, refused when it is not an id — and
 * a sink that is given a bad URL says so and starts nothing.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "sink/sink.h"

static void
sink_machine_id_once(void **state)
{
	char	tmpl[] = "/tmp/sink-mid-XXXXXX", a[64], b[64], c[33], d[33];
	char	path[128];
	FILE	*f;

	(void)state;
	assert_non_null(mkdtemp(tmpl));
	snprintf(a, sizeof(a), "%s/game-1", tmpl);
	snprintf(b, sizeof(b), "%s/tools-2/", tmpl);
	assert_int_equal(sink_machine_id(a, c), 0);
	assert_int_equal(strlen(c), 32);
	assert_int_equal(strspn(c, "0123456789abcdef"), 32);
	/* another project, and a later start: the same id */
	assert_int_equal(sink_machine_id(b, d), 0);
	assert_string_equal(c, d);
	assert_int_equal(sink_machine_id(a, d), 0);
	assert_string_equal(c, d);
	snprintf(path, sizeof(path), "%s/machine-id", tmpl);
	/* garbage is never taken for an id */
	f = fopen(path, "w");
	fputs("not an id at all, not at all\n", f);
	fclose(f);
	assert_int_equal(sink_machine_id(a, d), -EBADMSG);
	unlink(path);
	rmdir(tmpl);
}

static void
sink_bad_url_refused(void **state)
{
	uv_loop_t		 loop;
	struct sink		*s = NULL;
	struct sink_opts	 o = { 0 };
	char			 err[256];

	(void)state;
	uv_loop_init(&loop);
	o.url = "clickhouse://h:9000";
	o.state_dir = "/tmp/x/y";
	o.machine = "m";
	assert_int_equal(sink_create(&s, &loop, &o, err, sizeof(err)), -EINVAL);
	assert_null(s);
	assert_non_null(strstr(err, "http://"));
	assert_int_equal(uv_run(&loop, UV_RUN_NOWAIT), 0);
	uv_loop_close(&loop);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(sink_machine_id_once),
		cmocka_unit_test(sink_bad_url_refused),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
