/*
 * test_append — project/append: the writers of a project's ledger files.
 * The validator refuses exactly what the fold would skip (and what a C
 * reader would cut), a batch lands whole and in order with its refusals
 * named, a torn tail left by another writer is never glued to, a fix is
 * filled in and its bad member named, and the writers' lock is waited for
 * with a deadline and given up on when the request is gone.
 */
#include <sys/file.h>
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "tests/unitfs.h"

#include "ledger/ledger.h"
#include "project/append.h"
#include "project/project.h"

struct fx {
	char	root[PATH_MAX];
	char	perf[PATH_MAX + 32], fixes[PATH_MAX + 32];
};

static int
setup(void **state)
{
	struct fx	*fx = calloc(1, sizeof(*fx));

	assert_non_null(fx);
	unitfs_tmpdir(fx->root, sizeof(fx->root), "append");
	assert_int_equal(project_path(fx->root, "perf.jsonl", fx->perf,
	    sizeof(fx->perf)), 0);
	assert_int_equal(project_path(fx->root, "fixes.jsonl", fx->fixes,
	    sizeof(fx->fixes)), 0);
	*state = fx;
	return 0;
}

static int
teardown(void **state)
{
	struct fx	*fx = *state;

	if (unitfs_rmrf(fx->root) != 0)
		return -1;
	free(fx);
	return 0;
}

static void
mkproject(struct fx *fx)
{
	char	dir[PATH_MAX + 32];

	snprintf(dir, sizeof(dir), "%s/.sloptimize", fx->root);
	assert_int_equal(mkdir(dir, 0755), 0);
}

/* --- the validator ------------------------------------------------------ */

static void
append_validator_table(void **state)
{
	static const struct {
		const char	*text;
		int		 json_ok, record_ok;
		const char	*why;		/* a word of the reason */
	} cases[] = {
		{ "{\"type\":\"hitch\",\"at\":\"2026-11-29T12:00:00Z\"}", 1, 1, NULL },
		{ "  {\"type\":\"x\",\"at\":\"2026-11-29T12:00:00.5+01:00\"}\n", 1, 1, NULL },
		{ "{\"type\":\"hitch\"}", 1, 0, "ISO-8601" },
		{ "{\"type\":\"hitch\",\"at\":\"yesterday\"}", 1, 0, "ISO-8601" },
		{ "{\"type\":\"hitch\",\"at\":17}", 1, 0, "ISO-8601" },
		{ "{\"type\":\"hitch\",\"at\":\"2026-11-29T12:00\\u003a00Z\"}", 1, 0,
		    "ISO-8601" },		/* escaped: the fold reads no time */
		{ "{\"at\":\"2026-11-29T12:00:00Z\"}", 1, 0, "string type" },
		{ "{\"type\":\"\",\"at\":\"2026-11-29T12:00:00Z\"}", 1, 0, "string type" },
		{ "{\"type\":7,\"at\":\"2026-11-29T12:00:00Z\"}", 1, 0, "string type" },
		{ "{\"type\":\"a\x01b\"}", 0, 0, "byte" },
		{ "{\"type\":\"x\"} trailing", 0, 0, "byte" },
		{ "{\"type\":\"x\"}{\"type\":\"y\"}", 0, 0, "byte" },
		{ "{\"type\":\"\xff\"}", 0, 0, "UTF-8" },
		{ "{\"type\":\"x\",\"t\":\"cut\\u0000\"}", 0, 0, "u0000" },
		{ "[1,2]", 0, 0, "object" },
		/* numbers beyond a double's range (docs/json.md) */
		{ "{\"type\":\"hitch\",\"at\":\"2026-11-29T12:00:00Z\","
		    "\"frameMs\":1e999999}", 0, 0, "number out of range" },
		{ "{\"type\":\"x\",\"at\":\"2026-11-29T12:00:00Z\","
		    "\"w\":[{\"frameMs\":-1e400}]}", 0, 0, "out of range" },
		{ "{\"type\":\"x\",\"at\":\"2026-11-29T12:00:00Z\","
		    "\"tiny\":1e-400,\"max\":1.7976931348623157e308}", 1, 1,
		    NULL },
		{ "", 0, 0, NULL },
	};
	char	why[PROJECT_WHY_MAX];
	size_t	i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char	*t = cases[i].text;
		int		 j, r;

		why[0] = '\0';
		j = project_json_check(t, strlen(t), why, sizeof(why));
		if (cases[i].json_ok != (j == 0))
			fail_msg("case %zu json: %d (%s)", i, j, why);
		why[0] = '\0';
		r = project_record_check(t, strlen(t), why, sizeof(why));
		if (cases[i].record_ok != (r == 0))
			fail_msg("case %zu record: %d (%s)", i, r, why);
		if (r != 0)
			assert_int_equal(r, -EINVAL);
		if (cases[i].why != NULL && strstr(why, cases[i].why) == NULL)
			fail_msg("case %zu: \"%s\" lacks \"%s\"", i, why,
			    cases[i].why);
	}
	/* an escaped backslash before u0000 is text, not a NUL */
	assert_int_equal(project_json_check("{\"t\":\"a\\\\u0000\"}", 16, why,
	    sizeof(why)), 0);
}

/* --- batches ------------------------------------------------------------ */

static void
append_batch_array_in_order(void **state)
{
	struct fx		*fx = *state;
	struct project_batch	 b;
	char			 why[PROJECT_WHY_MAX], *got;
	const char		*body =
	    "[\n  {\"type\": \"heartbeat\", \"at\": \"2026-11-29T12:00:00Z\", \"n\": 0,"
	    " \"s\": \"two  spaces\"},\n"
	    "  {\"type\": \"hitch\", \"n\": 1},\n"
	    "  42,\n"
	    "  {\"type\": \"hitch\", \"at\": \"2026-11-29T12:00:01Z\", \"n\": 3}\n]";

	assert_int_equal(project_records_append(fx->root, body, strlen(body),
	    NULL, &b, why, sizeof(why)), 0);
	assert_int_equal(b.records, 4);
	assert_int_equal(b.accepted, 2);
	assert_int_equal(b.refused, 2);
	assert_int_equal(b.nlisted, 2);
	assert_int_equal(b.list[0].index, 1);
	assert_non_null(strstr(b.list[0].why, "ISO-8601"));
	assert_int_equal(b.list[1].index, 2);
	assert_string_equal(b.list[1].why, "not a JSON object");
	got = unitfs_slurp(fx->perf, NULL);	/* .sloptimize/ was made for us */
	assert_string_equal(got,
	    "{\"type\":\"heartbeat\",\"at\":\"2026-11-29T12:00:00Z\",\"n\":0,"
	    "\"s\":\"two  spaces\"}\n"
	    "{\"type\":\"hitch\",\"at\":\"2026-11-29T12:00:01Z\",\"n\":3}\n");
	assert_int_equal(b.bytes, strlen(got));
	free(got);

	/* not one JSON text: no batch, nothing written */
	assert_int_equal(project_records_append(fx->root, "[{\"type\":", 9,
	    NULL, &b, why, sizeof(why)), -EINVAL);
	assert_non_null(strstr(why, "JSON array"));
	assert_int_equal(project_records_append(fx->root, " \n", 2, NULL, &b,
	    why, sizeof(why)), -EINVAL);
}

static void
append_batch_ndjson_and_torn_tail(void **state)
{
	struct fx		*fx = *state;
	struct project_batch	 b;
	char			 why[PROJECT_WHY_MAX], *got;
	const char		*body =
	    "{\"type\":\"a\",\"at\":\"2026-11-29T12:00:00Z\"}\r\n"
	    "\n"
	    "{\"type\":\"b\",\"at\":\n"
	    "   \n"
	    "{\"type\":\"c\",\"at\":\"2026-11-29T12:00:02Z\"}";

	mkproject(fx);
	unitfs_puts(fx->perf, "{\"type\":\"torn\"");	/* no newline: a writer died */
	assert_int_equal(project_records_append(fx->root, body, strlen(body),
	    NULL, &b, why, sizeof(why)), 0);
	assert_int_equal(b.records, 3);
	assert_int_equal(b.accepted, 2);
	assert_int_equal(b.list[0].index, 1);
	got = unitfs_slurp(fx->perf, NULL);
	assert_string_equal(got, "{\"type\":\"torn\"\n"
	    "{\"type\":\"a\",\"at\":\"2026-11-29T12:00:00Z\"}\n"
	    "{\"type\":\"c\",\"at\":\"2026-11-29T12:00:02Z\"}\n");
	free(got);

	/* all refused: nothing is written */
	assert_int_equal(project_records_append(fx->root, "{}\n", 3, NULL, &b,
	    why, sizeof(why)), 0);
	assert_int_equal(b.accepted, 0);
	assert_int_equal(b.bytes, 0);
}

static void
append_batch_lists_64_counts_all(void **state)
{
	struct fx		*fx = *state;
	struct project_batch	 b;
	char			 why[PROJECT_WHY_MAX], body[4096];
	size_t			 n = 0;
	int			 i;

	for (i = 0; i < 100; i++)
		n += (size_t)snprintf(body + n, sizeof(body) - n, "{\"n\":%d}\n",
		    i);
	assert_int_equal(project_records_append(fx->root, body, n, NULL, &b,
	    why, sizeof(why)), 0);
	assert_int_equal(b.records, 100);
	assert_int_equal(b.refused, 100);
	assert_int_equal(b.nlisted, PROJECT_REFUSALS_KEPT);
	assert_int_equal(b.list[63].index, 63);
}

/* A number beyond a double's range: in NDJSON that record alone is
 * refused, an array (one JSON text, like any other bad grammar) whole; a
 * fix record holding an infinity (what cJSON makes of 1e999999) too. */
static void
append_refuses_numbers_out_of_range(void **state)
{
	struct fx		*fx = *state;
	struct project_batch	 b;
	char			 why[PROJECT_WHY_MAX], *got, *line;
	const char		*nd =
	    "{\"type\":\"hitch\",\"at\":\"2026-11-29T12:00:00Z\",\"frameMs\":150}\n"
	    "{\"type\":\"hitch\",\"at\":\"2026-11-29T12:00:01Z\",\"frameMs\":1e999999}\n";
	const char		*arr =
	    "[{\"type\":\"hitch\",\"at\":\"2026-11-29T12:00:00Z\",\"frameMs\":150},"
	    "{\"type\":\"hitch\",\"at\":\"2026-11-29T12:00:01Z\",\"frameMs\":-1E+400}]";
	cJSON			*rec;
	size_t			 len;
	int			 force;

	assert_int_equal(project_records_append(fx->root, nd, strlen(nd),
	    NULL, &b, why, sizeof(why)), 0);
	assert_int_equal(b.records, 2);
	assert_int_equal(b.accepted, 1);
	assert_int_equal(b.list[0].index, 1);
	assert_non_null(strstr(b.list[0].why, "number out of range"));
	assert_int_equal(project_records_append(fx->root, arr, strlen(arr),
	    NULL, &b, why, sizeof(why)), -EINVAL);
	assert_non_null(strstr(why, "number out of range"));
	got = unitfs_slurp(fx->perf, NULL);
	assert_string_equal(got, "{\"type\":\"hitch\",\"at\":"
	    "\"2026-11-29T12:00:00Z\",\"frameMs\":150}\n");
	free(got);

	rec = cJSON_Parse("{\"title\":\"t\",\"before\":{\"p95Ms\":1e999}}");
	assert_non_null(rec);
	assert_int_equal(project_fix_line(rec, &force, &line, &len, why,
	    sizeof(why)), -EINVAL);
	assert_non_null(strstr(why, "number out of range in \"p95Ms\""));
	assert_null(line);
	cJSON_Delete(rec);
}

/* --- fixes -------------------------------------------------------------- */

static void
append_fix_filled_in_and_checked(void **state)
{
	struct fx	*fx = *state;
	char		 why[PROJECT_WHY_MAX], *got;
	cJSON		*rec = cJSON_Parse("{\"title\":\"instanced the rocks\","
			    "\"footprints\":[\"81e5eb9b\"]}"), *back;

	/* no ledger yet: no footprint is known, nothing is written */
	assert_int_equal(project_fix_append(fx->root, rec, NULL, why,
	    sizeof(why)), -EINVAL);
	assert_non_null(strstr(why, "there is no ledger yet"));
	assert_int_equal(access(fx->fixes, F_OK), -1);
	{
		char	dir[PATH_MAX + 32];

		snprintf(dir, sizeof(dir), "%s/.sloptimize", fx->root);
		assert_int_equal(mkdir(dir, 0755), 0);
	}
	unitfs_puts(fx->perf, "{\"type\":\"hitch\",\"at\":\"2026-09-01T09:00:00Z\","
	    "\"frameMs\":150,\"footprint\":{\"v\":2,\"id\":\"81e5eb9b\","
	    "\"key\":\"k\"}}\n");
	/* a typo of it: refused, the known one named */
	cJSON_ReplaceItemInObject(rec, "footprints",
	    cJSON_CreateStringArray((const char *[]){ "81e5eb9c" }, 1));
	assert_int_equal(project_fix_append(fx->root, rec, NULL, why,
	    sizeof(why)), -EINVAL);
	assert_non_null(strstr(why, "footprint 81e5eb9c is in no record of "
	    "the ledger; nearest known: 81e5eb9b"));
	assert_int_equal(access(fx->fixes, F_OK), -1);
	/* force must be a boolean, and is not written */
	cJSON_AddStringToObject(rec, "force", "yes");
	assert_int_equal(project_fix_append(fx->root, rec, NULL, why,
	    sizeof(why)), -EINVAL);
	assert_string_equal(why, "force is true or false");
	cJSON_ReplaceItemInObject(rec, "footprints",
	    cJSON_CreateStringArray((const char *[]){ "81e5eb9b" }, 1));
	cJSON_ReplaceItemInObject(rec, "force", cJSON_CreateFalse());

	assert_int_equal(project_fix_append(fx->root, rec, NULL, why,
	    sizeof(why)), 0);
	assert_null(cJSON_GetObjectItem(rec, "force"));
	got = unitfs_slurp(fx->fixes, NULL);
	assert_null(strstr(got, "force"));
	assert_non_null(strchr(got, '\n'));
	assert_int_equal(strchr(got, '\n')[1], '\0');
	assert_int_equal(project_record_check(got, strlen(got) - 1, why,
	    sizeof(why)), 0);
	back = cJSON_Parse(got);
	assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(back,
	    "type")), "fix");
	assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(back,
	    "status")), "applied");
	assert_int_equal(strlen(cJSON_GetStringValue(cJSON_GetObjectItem(back,
	    "id"))), 8);
	cJSON_Delete(back);
	cJSON_Delete(rec);
	free(got);

	/* a title that is not UTF-8 (a shell's bytes) is named, not written */
	rec = cJSON_CreateObject();
	cJSON_AddStringToObject(rec, "title", "bad \xff title");
	assert_int_equal(project_fix_append(fx->root, rec, NULL, why,
	    sizeof(why)), -EINVAL);
	assert_string_equal(why, "title is not valid UTF-8 text; the fold "
	    "would skip the record");
	cJSON_Delete(rec);
	rec = cJSON_Parse("{\"title\":\"t\",\"at\":\"soon\"}");
	assert_int_equal(project_fix_append(fx->root, rec, NULL, why,
	    sizeof(why)), -EINVAL);
	assert_non_null(strstr(why, "ISO-8601"));
	cJSON_Delete(rec);
	got = unitfs_slurp(fx->fixes, NULL);
	assert_int_equal(strchr(got, '\n')[1], '\0');	/* still one line */
	free(got);
}

/* --- the lock ----------------------------------------------------------- */

static void
append_lock_deadline_and_gone(void **state)
{
	struct fx		*fx = *state;
	atomic_int		 gone;
	struct project_write	 w = { &gone, 50 };
	struct stat		 st;
	char			 why[PROJECT_WHY_MAX];
	cJSON			*rec;
	int			 holder;

	mkproject(fx);
	unitfs_puts(fx->fixes, "");
	/* another open file description: flock conflicts with it */
	holder = open(fx->fixes, O_RDONLY);
	assert_true(holder >= 0);
	assert_int_equal(flock(holder, LOCK_EX), 0);

	atomic_init(&gone, 0);
	rec = cJSON_Parse("{\"title\":\"t\"}");
	assert_int_equal(project_fix_append(fx->root, rec, &w, why,
	    sizeof(why)), -ETIMEDOUT);
	assert_non_null(strstr(why, "locked by another writer"));
	cJSON_Delete(rec);

	/* the request is gone: given up at once, even with time to wait */
	atomic_store(&gone, 1);
	w.lock_wait_ms = 60000;
	rec = cJSON_Parse("{\"title\":\"t\"}");
	assert_int_equal(project_fix_append(fx->root, rec, &w, why,
	    sizeof(why)), -ECANCELED);
	cJSON_Delete(rec);
	assert_int_equal(stat(fx->fixes, &st), 0);
	assert_int_equal(st.st_size, 0);

	/* released: it lands */
	close(holder);
	atomic_store(&gone, 0);
	rec = cJSON_Parse("{\"title\":\"t\"}");
	assert_int_equal(project_fix_append(fx->root, rec, &w, why,
	    sizeof(why)), 0);
	cJSON_Delete(rec);
	assert_int_equal(stat(fx->fixes, &st), 0);
	assert_true(st.st_size > 0);
}

static void
append_refuses_fifo(void **state)
{
	struct fx		*fx = *state;
	struct project_batch	 b;
	char			 why[PROJECT_WHY_MAX];
	cJSON			*rec = cJSON_Parse("{\"title\":\"t\"}");
	const char		*body = "{\"type\":\"a\",\"at\":"
				    "\"2026-11-29T12:00:00Z\"}\n";

	mkproject(fx);
	assert_int_equal(mkfifo(fx->fixes, 0644), 0);
	assert_int_equal(mkfifo(fx->perf, 0644), 0);
	assert_int_equal(project_fix_append(fx->root, rec, NULL, why,
	    sizeof(why)), -PROJECT_ENOTREG);
	assert_non_null(strstr(why, "not a regular file"));
	assert_int_equal(project_records_append(fx->root, body, strlen(body),
	    NULL, &b, why, sizeof(why)), -PROJECT_ENOTREG);
	assert_int_equal(b.accepted, 0);
	cJSON_Delete(rec);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(append_validator_table),
		cmocka_unit_test_setup_teardown(append_batch_array_in_order,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(
		    append_batch_ndjson_and_torn_tail, setup, teardown),
		cmocka_unit_test_setup_teardown(
		    append_batch_lists_64_counts_all, setup, teardown),
		cmocka_unit_test_setup_teardown(
		    append_refuses_numbers_out_of_range, setup, teardown),
		cmocka_unit_test_setup_teardown(
		    append_fix_filled_in_and_checked, setup, teardown),
		cmocka_unit_test_setup_teardown(append_lock_deadline_and_gone,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(append_refuses_fifo, setup,
		    teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
