/*
 * benchfile: project/bench.h — a bench file read back with every field a
 * comparison uses checked (the first bad one named), torn files refused,
 * bench files written whole and never over another, "last" found by the
 * scene's exact name, the history appended whole (after a torn tail too)
 * and read with its bad lines listed, dev.json and its dead server.
 */
#include <sys/stat.h>
#include <sys/wait.h>

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "tests/unitfs.h"

#include "project/bench.h"

#define HASH	"sha256:dd9512c7ab8f52bbadce96ddb050e3a2c5a9f25808fd0365200c7b20650ef397"

/* A bench of two runs, as bench writes it (the summary trimmed). */
static const char good[] =
    "{\"v\":1,\"name\":\"crates\",\"scene\":\"crates\",\"at\":\"2026-12-01T10:00:00.000Z\","
    "\"regime\":\"software\",\"environment\":{\"configHash\":\"" HASH "\",\"gpu\":\"SwiftShader\"},"
    "\"frames\":5,\"warmup\":2,\"runs\":2,\"perRun\":["
    "{\"frame\":{\"medianMs\":10,\"p95Ms\":12},\"render\":{\"insideMs\":8},"
    " \"gpu\":{\"medianMs\":3,\"p95Ms\":4},\"counters\":{\"calls\":4028,\"triangles\":48904,\"programs\":3}},"
    "{\"frame\":{\"medianMs\":11,\"p95Ms\":13},\"render\":{\"insideMs\":9},"
    " \"gpu\":{\"medianMs\":3.5,\"p95Ms\":4},\"counters\":{\"calls\":4028,\"triangles\":48904,\"programs\":3}}]}";

static char	project[256];

static int
setup(void **state)
{
	(void)state;
	snprintf(project, sizeof(project), "/tmp/test_benchfile.XXXXXX");
	return mkdtemp(project) ? 0 : -1;
}

static int
teardown(void **state)
{
	(void)state;
	return unitfs_rmrf(project);
}

static void
benchfile_parse_good(void **state)
{
	struct verdict_bench	 vb;
	cJSON			*doc;
	char			 why[256] = "";

	(void)state;
	assert_int_equal(project_bench_parse(good, strlen(good), &doc, &vb, why,
	    sizeof(why)), 0);
	assert_non_null(doc);
	assert_string_equal(vb.hash, HASH);
	assert_string_equal(vb.gpu, "SwiftShader");
	assert_int_equal(vb.regime, REGIME_SOFTWARE);
	assert_int_equal(vb.m[M_FRAME_MEDIAN].n, 2);
	assert_true(vb.m[M_FRAME_MEDIAN].run[1] == 11);
	assert_true(vb.m[M_RENDER_INSIDE].run[0] == 8);
	assert_int_equal(vb.m[M_GPU_MEDIAN].n, 2);
	assert_true(vb.m[M_GPU_MEDIAN].run[1] == 3.5);
	assert_int_equal(vb.m[M_CALLS].n, 2);
	assert_true(vb.m[M_CALLS].run[0] == 4028);
	assert_int_equal(vb.m[M_PROGRAMS].n, 2);
	assert_int_equal(vb.m[M_POINTS].n, 0);	/* not measured: absent */
	cJSON_Delete(doc);
}

/* Each variant breaks one thing; the error names it. */
static const struct {
	const char	*from, *to, *why;
} broken[] = {
	{ "\"v\":1", "\"v\":2", "v is not a whole number from 1 to 1" },
	{ "\"scene\":\"crates\"", "\"scene\":\"../x\"", "scene is not a scene name" },
	{ "\"at\":\"2026-12-01T10:00:00.000Z\"", "\"at\":\"yesterday\"", "at is not an ISO-8601 time" },
	{ "\"regime\":\"software\"", "\"regime\":\"fast\"", "regime is not hardware, software or unknown" },
	{ "\"runs\":2", "\"runs\":3", "perRun has 2 entries for 3 runs" },
	{ "\"runs\":2", "\"runs\":0", "runs is not a whole number from 1 to 32" },
	{ "\"configHash\":\"sha256:dd", "\"configHash\":\"md5:dd", "environment.configHash is not sha256: and 64 hex digits" },
	{ "{\"medianMs\":11,", "{\"medianMs\":\"11\",", "perRun[1].frame.medianMs is not a number" },
	{ "{\"medianMs\":10,", "{\"medianMs\":-1,", "perRun[0].frame.medianMs is not a number ≥ 0" },
	{ "\"insideMs\":9", "\"insideMS\":9", "perRun[1].render.insideMs is missing" },
	{ " \"gpu\":{\"medianMs\":3.5,\"p95Ms\":4},", "", "perRun[1] has no GPU time and perRun[0] has" },
	{ "\"programs\":3}}]", "\"programs\":3,\"lines\":0}}]", "perRun[1].counters.lines is there and perRun[0] has none" },
	{ "\"calls\":4028,\"triangles\":48904,\"programs\":3}}]", "\"triangles\":48904,\"programs\":3}}]", "perRun[1].counters.calls is missing (perRun[0] has it)" },
	{ "\"frames\":5", "\"frames\":5.5", "frames is not a whole number" },
	{ "\"perRun\":[", "\"perRun\":{\"x\":[", "perRun is not an array" },
};

static void
benchfile_parse_names_what_is_wrong(void **state)
{
	char	text[4096], why[256];
	size_t	i;

	(void)state;
	for (i = 0; i < sizeof(broken) / sizeof(broken[0]); i++) {
		const char	*at = strstr(good, broken[i].from);
		size_t		 head;

		assert_non_null(at);
		head = (size_t)(at - good);
		snprintf(text, sizeof(text), "%.*s%s%s%s", (int)head, good,
		    broken[i].to, at + strlen(broken[i].from),
		    strcmp(broken[i].from, "\"perRun\":[") == 0 ? "}" : "");
		why[0] = '\0';
		if (project_bench_parse(text, strlen(text), NULL, NULL, why,
		    sizeof(why)) != -EINVAL || strstr(why, broken[i].why) == NULL)
			fail_msg("case %zu: want \"%s\", got \"%s\"", i,
			    broken[i].why, why);
	}
}

static void
benchfile_torn(void **state)
{
	char	why[256], more[sizeof(good) + 8];
	size_t	n;

	(void)state;
	/* every prefix of the file is refused, never half read */
	for (n = 0; n < strlen(good); n++)
		assert_int_equal(project_bench_parse(good, n, NULL, NULL, why,
		    sizeof(why)), -EINVAL);
	assert_int_equal(project_bench_parse(good, strlen(good) - 1, NULL, NULL,
	    why, sizeof(why)), -EINVAL);
	assert_non_null(strstr(why, "not whole JSON"));
	assert_non_null(strstr(why, "a torn write?"));
	assert_int_equal(project_bench_parse("", 0, NULL, NULL, why,
	    sizeof(why)), -EINVAL);
	assert_non_null(strstr(why, "empty"));
	snprintf(more, sizeof(more), "%s{}", good);
	assert_int_equal(project_bench_parse(more, strlen(more), NULL, NULL, why,
	    sizeof(why)), -EINVAL);
	assert_non_null(strstr(why, "something follows"));
}

static cJSON *
doc_of(const char *text)
{
	cJSON	*d = cJSON_Parse(text);

	assert_non_null(d);
	return d;
}

static void
benchfile_write_find_read(void **state)
{
	char		 p1[PATH_MAX], p2[PATH_MAX], p3[PATH_MAX], p4[PATH_MAX],
			 found[PATH_MAX], scene[PROJECT_SCENE_MAX + 1], why[512];
	cJSON		*d = doc_of(good), *back;
	struct verdict_bench vb;
	const int64_t	 t = 1764583200000LL;	/* 2025-12-01T10:00:00Z */

	(void)state;
	assert_int_equal(project_bench_find(project, "last", "crates", 0, found,
	    sizeof(found), NULL, why, sizeof(why)), -ENOENT);
	assert_non_null(strstr(why, "no bench yet"));
	assert_int_equal(project_bench_write(project, "crates", t, d, p1,
	    sizeof(p1), why, sizeof(why)), 0);
	assert_non_null(strstr(p1, "/.sloptimize/bench/crates-20251201T100000.000Z.json"));
	/* the same millisecond: another file, never over the first */
	assert_int_equal(project_bench_write(project, "crates", t, d, p2,
	    sizeof(p2), why, sizeof(why)), 0);
	assert_non_null(strstr(p2, "crates-20251201T100000.001Z.json"));
	/* a scene whose name begins like another's */
	assert_int_equal(project_bench_write(project, "crates-big", t + 5000, d,
	    p3, sizeof(p3), why, sizeof(why)), 0);
	assert_int_equal(project_bench_write(project, "crates", t - 60000, d,
	    p4, sizeof(p4), why, sizeof(why)), 0);
	assert_int_equal(project_bench_write(project, "../x", t, d, p4,
	    sizeof(p4), why, sizeof(why)), -EINVAL);

	assert_int_equal(project_bench_find(project, "last", "crates", 0, found,
	    sizeof(found), NULL, why, sizeof(why)), 0);
	assert_string_equal(found, p2);
	assert_int_equal(project_bench_find(project, "last", "crates", 1, found,
	    sizeof(found), NULL, why, sizeof(why)), 0);
	assert_string_equal(found, p1);
	assert_int_equal(project_bench_find(project, "last", "crates", 3, found,
	    sizeof(found), NULL, why, sizeof(why)), -ENOENT);
	/* no scene: the newest bench's scene, crates-big, has one bench */
	assert_int_equal(project_bench_find(project, "last", NULL, 0, found,
	    sizeof(found), scene, why, sizeof(why)), 0);
	assert_string_equal(found, p3);
	assert_string_equal(scene, "crates-big");
	assert_int_equal(project_bench_find(project, "last", "crates-big", 1,
	    found, sizeof(found), NULL, why, sizeof(why)), -ENOENT);
	assert_non_null(strstr(why, "only one bench"));
	/* by name, with or without .json, and by path */
	assert_int_equal(project_bench_find(project,
	    "crates-20251201T100000.000Z", NULL, 0, found, sizeof(found), NULL,
	    why, sizeof(why)), 0);
	assert_string_equal(found, p1);
	assert_int_equal(project_bench_find(project, p2, NULL, 0, found,
	    sizeof(found), NULL, why, sizeof(why)), 0);
	assert_string_equal(found, p2);
	assert_int_equal(project_bench_find(project, "nope", NULL, 0, found,
	    sizeof(found), NULL, why, sizeof(why)), -ENOENT);

	assert_int_equal(project_bench_read(p1, &back, &vb, why, sizeof(why)), 0);
	assert_true(cJSON_Compare(back, d, 1));
	cJSON_Delete(back);
	/* a torn file on disk: its path and the fault */
	assert_int_equal(truncate(p2, 100), 0);
	assert_int_equal(project_bench_read(p2, &back, &vb, why, sizeof(why)),
	    -EINVAL);
	assert_non_null(strstr(why, p2));
	assert_non_null(strstr(why, "not whole JSON"));
	assert_int_equal(project_bench_read("/nonexistent/x.json", &back, &vb,
	    why, sizeof(why)), -ENOENT);
	cJSON_Delete(d);
}

static void
benchfile_history(void **state)
{
	char	 path[PATH_MAX], why[256];
	cJSON	*l1 = doc_of("{\"at\":\"2026-12-01T10:00:00Z\",\"scene\":\"crates\",\"verdict\":\"improved\"}");
	cJSON	*l2 = doc_of("{\"at\":\"2026-12-01T11:00:00Z\",\"scene\":\"town\",\"verdict\":\"regressed\"}");
	cJSON	*lines, *skipped;
	FILE	*f;

	(void)state;
	assert_int_equal(project_bench_history_read(project, 0, &lines, &skipped,
	    why, sizeof(why)), 0);
	assert_int_equal(cJSON_GetArraySize(lines), 0);	/* none yet: empty */
	cJSON_Delete(lines);
	cJSON_Delete(skipped);
	assert_int_equal(project_bench_history_append(project, l1, why,
	    sizeof(why)), 0);
	/* someone else's torn write, then ours: ours is a line of its own */
	snprintf(path, sizeof(path), "%s/.sloptimize/bench-history.jsonl",
	    project);
	assert_non_null(f = fopen(path, "a"));
	fputs("{\"at\":\"2026-12-01T10:30:00Z\",\"sce", f);
	fclose(f);
	assert_int_equal(project_bench_history_append(project, l2, why,
	    sizeof(why)), 0);
	assert_non_null(f = fopen(path, "a"));
	fputs("[1,2]\n{\"half\":", f);
	fclose(f);

	assert_int_equal(project_bench_history_read(project, 0, &lines, &skipped,
	    why, sizeof(why)), 0);
	assert_int_equal(cJSON_GetArraySize(lines), 2);
	assert_string_equal(cJSON_GetObjectItem(cJSON_GetArrayItem(lines, 1),
	    "scene")->valuestring, "town");
	assert_int_equal(cJSON_GetArraySize(skipped), 3);
	assert_int_equal(cJSON_GetObjectItem(cJSON_GetArrayItem(skipped, 0),
	    "line")->valueint, 2);
	assert_int_equal(cJSON_GetObjectItem(cJSON_GetArrayItem(skipped, 1),
	    "line")->valueint, 4);
	assert_non_null(strstr(cJSON_GetObjectItem(cJSON_GetArrayItem(skipped,
	    2), "why")->valuestring, "no newline"));
	cJSON_Delete(lines);
	cJSON_Delete(skipped);
	assert_int_equal(project_bench_history_read(project, 1, &lines, &skipped,
	    why, sizeof(why)), 0);
	assert_int_equal(cJSON_GetArraySize(lines), 1);
	cJSON_Delete(lines);
	cJSON_Delete(skipped);
	cJSON_Delete(l1);
	cJSON_Delete(l2);
}

static void
benchfile_dev_json(void **state)
{
	char	path[PATH_MAX], url[256], why[512];
	long	pid;
	pid_t	dead;
	FILE	*f;

	(void)state;
	assert_int_equal(project_dev_read(project, url, sizeof(url), &pid, why,
	    sizeof(why)), -ENOENT);
	assert_non_null(strstr(why, "pass --url"));
	snprintf(path, sizeof(path), "%s/.sloptimize", project);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/.sloptimize/dev.json", project);
	assert_non_null(f = fopen(path, "w"));
	fprintf(f, "{\"url\":\"http://127.0.0.1:5173/\",\"pid\":%ld,\"at\":\"x\"}",
	    (long)getpid());
	fclose(f);
	assert_int_equal(project_dev_read(project, url, sizeof(url), &pid, why,
	    sizeof(why)), 0);
	assert_string_equal(url, "http://127.0.0.1:5173/");
	assert_int_equal(pid, getpid());
	/* a server that is gone */
	if ((dead = fork()) == 0)
		_exit(0);
	waitpid(dead, NULL, 0);
	assert_non_null(f = fopen(path, "w"));
	fprintf(f, "{\"url\":\"http://127.0.0.1:5173/\",\"pid\":%ld}", (long)dead);
	fclose(f);
	assert_int_equal(project_dev_read(project, url, sizeof(url), &pid, why,
	    sizeof(why)), -ESRCH);
	assert_non_null(strstr(why, "is not running"));
	assert_non_null(f = fopen(path, "w"));
	fputs("{\"url\":\"ftp://x/\",\"pid\":1}", f);
	fclose(f);
	assert_int_equal(project_dev_read(project, url, sizeof(url), &pid, why,
	    sizeof(why)), -EINVAL);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(benchfile_parse_good),
		cmocka_unit_test(benchfile_parse_names_what_is_wrong),
		cmocka_unit_test(benchfile_torn),
		cmocka_unit_test_setup_teardown(benchfile_write_find_read, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(benchfile_history, setup, teardown),
		cmocka_unit_test_setup_teardown(benchfile_dev_json, setup,
		    teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
