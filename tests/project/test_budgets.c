/*
 * test_budgets — project/budgets (the file and the judgement),
 * project/profile (a heartbeat made a profile) and project/gitignore (the
 * lines a game's .gitignore needs), as tables of cases: input, what must
 * come out.  docs/budgets.md is the page these cases state.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "project/budgets.h"
#include "project/gitignore.h"
#include "project/profile.h"

/* --- the file ------------------------------------------------------------- */

static const struct {
	const char	*text;
	int		 declared;
	const char	*first;		/* expected max of the first declared */
} good[] = {
	{ "{}", 0, NULL },
	{ "{\"perf.budget.draw_calls\": 300}", 1, "300 error" },
	{ "{\"perf.budget.frame_ms_p95\": {\"max\": 16.7, \"level\": \"warn\"}}",
	  1, "16.7 warn" },
	{ "{\"perf.budget.programs\": {\"max\": 20}}", 1, "20 error" },
	{ "{\"perf.budget.programs\": {\"level\": \"error\", \"max\": 0}}", 1,
	  "0 error" },
	{ "\xef\xbb\xbf\n{\n  \"$schema\": \"./schemas/budgets.json\",\n"
	  "  \"$comment\": \"reviewed\",\n  \"perf.budget.draw_calls\": 300,\n"
	  "  \"perf.budget.triangles\": 2000000,\n"
	  "  \"perf.budget.programs\": {\"max\": 40, \"level\": \"warn\"},\n"
	  "  \"perf.budget.frame_ms_p95\": 16.7,\n"
	  "  \"perf.budget.gpu_ms_p95\": 8\n}\n", 5, "300 error" },
};

static const struct {
	const char	*text;
	const char	*why;		/* a line of why must contain it */
	int		 lines;		/* faults expected (0: don't care) */
} bad[] = {
	{ "", "(the file): not one JSON object", 1 },
	{ "[]", "(the file): not one JSON object", 1 },
	{ "300", "(the file): not one JSON object", 1 },
	{ "{\"perf.budget.draw_calls\": 300,}", "at line 1, column", 1 },
	{ "{\n\"perf.budget.draw_calls\": 300\n\"x\": 1}", "at line 3, column 1",
	  1 },
	{ "{\"perf.budget.draw_calls\": 300} {}", "(the file)", 1 },
	{ "{\"perf.budget.draw_call\": 300}", "perf.budget.draw_call: not a "
	  "budget this version knows; did you mean perf.budget.draw_calls?", 1 },
	{ "{\"draw_calls\": 300}", "draw_calls: not a budget this version "
	  "knows; did you mean perf.budget.draw_calls?", 1 },
	{ "{\"budget.frame_ms_p95\": 3}", "did you mean perf.budget.frame_ms_p95", 1 },
	{ "{\"colour\": 3}", "colour: not a budget this version knows "
	  "(perf.budget.draw_calls, perf.budget.triangles", 1 },
	{ "{\"perf.budget.triangles\": 1, \"perf.budget.triangles\": 2}",
	  "perf.budget.triangles: declared twice; keep one", 1 },
	{ "{\"perf.budget.draw_calls\": -1}", "perf.budget.draw_calls: the max "
	  "is a number >= 0, not -1", 1 },
	/* the strict scanner refuses it first, and says where */
	{ "{\"perf.budget.draw_calls\": 1e999}", "number out of range at "
	  "line 1, column 28", 1 },
	{ "{\"perf.budget.draw_calls\": \"300\"}", "perf.budget.draw_calls: a "
	  "budget is a number or {\"max\": N, \"level\": \"error\"|\"warn\"}, "
	  "not a string", 1 },
	{ "{\"perf.budget.draw_calls\": null}", "not null", 1 },
	{ "{\"perf.budget.draw_calls\": [300]}", "not an array", 1 },
	{ "{\"perf.budget.draw_calls\": {\"level\": \"warn\"}}",
	  "perf.budget.draw_calls: {…} needs \"max\"", 1 },
	{ "{\"perf.budget.draw_calls\": {\"max\": true}}",
	  "perf.budget.draw_calls.max: the max is a number, not a boolean", 1 },
	{ "{\"perf.budget.draw_calls\": {\"max\": -0.5}}",
	  "perf.budget.draw_calls.max: the max is a number >= 0, not -0.5", 1 },
	{ "{\"perf.budget.programs\": {\"max\": 3, \"level\": \"fatal\"}}",
	  "perf.budget.programs.level: \"error\" or \"warn\", not \"fatal\"", 1 },
	{ "{\"perf.budget.programs\": {\"max\": 3, \"level\": \"off\"}}",
	  "to turn a budget off, remove it", 1 },
	{ "{\"perf.budget.programs\": {\"max\": 3, \"level\": 2}}",
	  "perf.budget.programs.level: \"error\" or \"warn\", not a number", 1 },
	{ "{\"perf.budget.programs\": {\"max\": 3, \"min\": 1}}",
	  "perf.budget.programs.min: unknown (a budget has \"max\" and "
	  "\"level\" only)", 1 },
	{ "{\"perf.budget.programs\": {\"max\": 3, \"max\": 4}}",
	  "perf.budget.programs.max: given twice", 1 },
	{ "{\"perf\": {\"budget\": {\"draw_calls\": 300}}}",
	  "perf: the keys are flat", 1 },
	{ "{\"$schema\": 1}", "$schema: a string, not a number", 1 },
	{ "{\"perf.budget.draw_calls\": \"x\", \"perf.budget.triangles\": -1, "
	  "\"nope\": 1, \"perf.budget.programs\": {}}", "perf.budget.programs: "
	  "{…} needs \"max\"", 4 },
	{ "{\"perf.budget.draw_calls\": \"\xff\"}", "(the file): not one JSON "
	  "object", 1 },
	{ "{\"perf.budget.draw_calls\": \"\\u0000\"}", "(the file)", 1 },
	{ "{\"x\x01y\": 1}", "(the file)", 1 },
};

static int
count_lines(const char *s)
{
	int	n = *s != '\0';

	for (; *s != '\0'; s++)
		n += *s == '\n';
	return n;
}

static void
budgets_good_files(void **state)
{
	struct budgets	b;
	char		why[BUDGETS_WHY_MAX], got[64];
	size_t		i;
	int		m;

	(void)state;
	for (i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		if (budgets_parse(good[i].text, strlen(good[i].text), &b, why,
		    sizeof(why)) != 0)
			fail_msg("case %zu refused: %s", i, why);
		assert_int_equal(b.ndeclared, good[i].declared);
		assert_string_equal(why, "");
		for (m = 0; m < BUDGET_N && !b.b[m].declared; m++)
			;
		if (good[i].first == NULL) {
			assert_int_equal(m, BUDGET_N);
			continue;
		}
		snprintf(got, sizeof(got), "%g %s", b.b[m].max,
		    budgets_level_name(b.b[m].level));
		assert_string_equal(got, good[i].first);
	}
}

static void
budgets_bad_files_name_the_key(void **state)
{
	struct budgets	b;
	char		why[BUDGETS_WHY_MAX];
	size_t		i;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		memset(&b, 0x5a, sizeof(b));
		if (budgets_parse(bad[i].text, strlen(bad[i].text), &b, why,
		    sizeof(why)) != -EINVAL)
			fail_msg("case %zu (%s) accepted", i, bad[i].text);
		if (strstr(why, bad[i].why) == NULL)
			fail_msg("case %zu: want \"%s\" in:\n%s", i, bad[i].why,
			    why);
		if (bad[i].lines && count_lines(why) != bad[i].lines)
			fail_msg("case %zu: %d faults, want %d:\n%s", i,
			    count_lines(why), bad[i].lines, why);
		/* a refused file declares nothing: never half a file */
		assert_int_equal(b.ndeclared, 0);
		assert_int_equal(b.b[0].declared, 0);
	}
}

/* Many faults: the first ones are listed whole, the rest counted. */
static void
budgets_many_faults_are_counted(void **state)
{
	struct budgets	 b;
	char		 why[BUDGETS_WHY_MAX], *text = malloc(40000);
	size_t		 o = 0;
	int		 i;

	(void)state;
	o += (size_t)sprintf(text + o, "{");
	for (i = 0; i < 300; i++)
		o += (size_t)sprintf(text + o, "%s\"unknown_key_%d\": 1",
		    i ? "," : "", i);
	sprintf(text + o, "}");
	assert_int_equal(budgets_parse(text, strlen(text), &b, why,
	    sizeof(why)), -EINVAL);
	assert_non_null(strstr(why, "unknown_key_0: not a budget"));
	assert_non_null(strstr(why, " more)"));
	assert_true(strlen(why) < sizeof(why));
	free(text);
}

/* --- judging ------------------------------------------------------------------ */

static struct budgets
declare(const char *text)
{
	struct budgets	b;
	char		why[BUDGETS_WHY_MAX];

	if (budgets_parse(text, strlen(text), &b, why, sizeof(why)) != 0)
		fail_msg("%s: %s", text, why);
	return b;
}

static struct budget_judgement
judge(const char *budgets, const char *profile, unsigned flags)
{
	struct budgets		b = declare(budgets);
	struct budget_judgement	j;
	cJSON			*p = cJSON_Parse(profile);

	assert_non_null(p);
	budgets_judge(&b, p, flags, &j);
	cJSON_Delete(p);
	return j;
}

#define ALL	"{\"perf.budget.draw_calls\": 300, " \
		"\"perf.budget.triangles\": {\"max\": 1000, \"level\": \"warn\"}, " \
		"\"perf.budget.programs\": 20, " \
		"\"perf.budget.frame_ms_p95\": 16.7, " \
		"\"perf.budget.gpu_ms_p95\": 8}"

static void
budgets_judge_levels_and_regimes(void **state)
{
	struct budget_judgement	j;

	(void)state;
	/* hardware: everything judged; equal to max is inside */
	j = judge(ALL, "{\"regime\":\"hardware\",\"render\":{\"calls\":940,"
	    "\"triangles\":1200},\"memory\":{\"programs\":20},\"frame\":"
	    "{\"p95Ms\":15.2},\"gpu\":{\"p95Ms\":9}}", 0);
	assert_string_equal(j.regime, "hardware");
	assert_int_equal(j.declared, 5);
	assert_int_equal(j.checked, 5);
	assert_int_equal(j.r[BUDGET_DRAW_CALLS].status, BUDGET_BREACHED);
	assert_true(fabs(j.r[BUDGET_DRAW_CALLS].ratio - 940.0 / 300) < 1e-9);
	assert_int_equal(j.r[BUDGET_TRIANGLES].status, BUDGET_BREACHED);
	assert_int_equal(j.r[BUDGET_PROGRAMS].status, BUDGET_INSIDE);
	assert_int_equal(j.r[BUDGET_FRAME_MS_P95].status, BUDGET_INSIDE);
	assert_int_equal(j.r[BUDGET_GPU_MS_P95].status, BUDGET_BREACHED);
	assert_int_equal(j.breached_error, 2);	/* draw calls, gpu */
	assert_int_equal(j.breached_warn, 1);	/* triangles */

	/* software: timing reported, not judged; counters still exact */
	j = judge(ALL, "{\"regime\":\"software\",\"render\":{\"calls\":10,"
	    "\"triangles\":10},\"memory\":{\"programs\":2},\"frame\":"
	    "{\"p95Ms\":90}}", 0);
	assert_int_equal(j.checked, 3);
	assert_int_equal(j.r[BUDGET_FRAME_MS_P95].status, BUDGET_NOT_JUDGED);
	assert_true(j.r[BUDGET_FRAME_MS_P95].has_value);
	assert_string_equal(j.r[BUDGET_FRAME_MS_P95].why,
	    "software regime: timings not trusted");
	assert_int_equal(j.r[BUDGET_GPU_MS_P95].status, BUDGET_UNMEASURED);
	assert_int_equal(j.breached_error + j.breached_warn, 0);

	/* --counters-only: timing skipped whatever the regime */
	j = judge(ALL, "{\"regime\":\"hardware\",\"render\":{\"calls\":10},"
	    "\"frame\":{\"p95Ms\":90}}", BUDGETS_COUNTERS_ONLY);
	assert_int_equal(j.r[BUDGET_FRAME_MS_P95].status, BUDGET_SKIPPED);
	assert_int_equal(j.r[BUDGET_GPU_MS_P95].status, BUDGET_SKIPPED);
	assert_int_equal(j.skipped, 2);
	assert_int_equal(j.breached_error, 0);

	/* no regime: unknown, timing judged but flagged */
	j = judge("{\"perf.budget.frame_ms_p95\": 10}",
	    "{\"frame\":{\"p95Ms\":12}}", 0);
	assert_string_equal(j.regime, "unknown");
	assert_int_equal(j.r[BUDGET_FRAME_MS_P95].status, BUDGET_BREACHED);
	assert_non_null(strstr(j.r[BUDGET_FRAME_MS_P95].why, "regime unknown"));

	/* paused: frame times are not the game's cost */
	j = judge("{\"perf.budget.frame_ms_p95\": 10, \"perf.budget.draw_calls\""
	    ": 5}", "{\"regime\":\"hardware\",\"paused\":true,\"frame\":"
	    "{\"p95Ms\":500},\"render\":{\"calls\":9}}", 0);
	assert_int_equal(j.r[BUDGET_FRAME_MS_P95].status, BUDGET_NOT_JUDGED);
	assert_int_equal(j.r[BUDGET_DRAW_CALLS].status, BUDGET_BREACHED);
}

/* A value nobody measured is never taken as 0 (which would be inside). */
static void
budgets_judge_unmeasured_is_not_zero(void **state)
{
	struct budget_judgement	j;

	(void)state;
	j = judge("{\"perf.budget.draw_calls\": 300, \"perf.budget.programs\": "
	    "5, \"perf.budget.triangles\": 9}", "{\"regime\":\"hardware\","
	    "\"render\":{\"calls\":null,\"triangles\":-3},\"memory\":\"x\"}",
	    0);
	assert_int_equal(j.checked, 0);
	assert_int_equal(j.unmeasured, 3);
	assert_int_equal(j.r[BUDGET_DRAW_CALLS].status, BUDGET_UNMEASURED);
	assert_false(j.r[BUDGET_DRAW_CALLS].has_value);
	/* a budget of 0 exceeded: an infinite ratio, still a breach */
	j = judge("{\"perf.budget.programs\": 0}",
	    "{\"memory\":{\"programs\":1}}", 0);
	assert_int_equal(j.r[BUDGET_PROGRAMS].status, BUDGET_BREACHED);
	assert_true(isinf(j.r[BUDGET_PROGRAMS].ratio));
	j = judge("{\"perf.budget.programs\": 0}",
	    "{\"memory\":{\"programs\":0}}", 0);
	assert_int_equal(j.r[BUDGET_PROGRAMS].status, BUDGET_INSIDE);
}

/* --- profile.json from a heartbeat ---------------------------------------- */

static void
profile_build_copies_only_what_was_measured(void **state)
{
	const char	*hb = "{\"type\":\"heartbeat\",\"at\":\"2026-11-29T12:00:"
			    "00.5Z\",\"regime\":\"software\",\"build\":\"b7\","
			    "\"window\":{\"frames\":120,\"seconds\":2},"
			    "\"frame\":{\"medianMs\":16.6,\"p95Ms\":null,"
			    "\"fps\":-1,\"insideRenderMs\":\"3\"},"
			    "\"render\":{\"calls\":940,\"triangles\":12},"
			    "\"memory\":{\"programs\":17},\"gpu\":{\"p95Ms\":"
			    "4.5,\"renderer\":\"ANGLE\"},\"paused\":false,"
			    "\"ctx\":\"a=b\",\"extra\":{\"kept\":1}}";
	struct profile_source	src = { 3, 1048576 };
	struct budgets		b = declare("{\"perf.budget.draw_calls\": 300,"
				    "\"perf.budget.programs\": {\"max\": 10, "
				    "\"level\": \"warn\"}, "
				    "\"perf.budget.frame_ms_p95\": 1}");
	cJSON			*p = profile_build(hb, strlen(hb), &src, &b,
				    NULL, 0);
	const cJSON		*f, *bu;
	char			*txt;

	(void)state;
	assert_non_null(p);
	txt = cJSON_PrintUnformatted(p);
	assert_non_null(strstr(txt, "\"at\":\"2026-11-29T12:00:00.500Z\""));
	assert_non_null(strstr(txt, "\"regime\":\"software\""));
	assert_non_null(strstr(txt, "\"build\":\"b7\""));
	assert_non_null(strstr(txt, "\"paused\":false"));
	/* null, negative and string numbers are absent, never 0 */
	f = cJSON_GetObjectItem(p, "frame");
	assert_int_equal(cJSON_GetArraySize(f), 1);
	assert_non_null(cJSON_GetObjectItem(f, "medianMs"));
	assert_non_null(strstr(txt, "\"gpu\":{\"p95Ms\":4.5,\"renderer\":"
	    "\"ANGLE\"}"));
	assert_null(cJSON_GetObjectItem(p, "extra"));
	assert_null(cJSON_GetObjectItem(p, "automated"));
	assert_non_null(strstr(txt, "\"source\":{\"file\":\"perf.jsonl\","
	    "\"generation\":3,\"offset\":1048576}"));
	/* judged as check judges it: the software frame time is not */
	bu = cJSON_GetObjectItem(p, "budgets");
	assert_non_null(strstr(txt, "\"budgets\":{\"file\":\"sloptimize."
	    "budgets.json\",\"declared\":3,\"checked\":2,\"breached\":[\"perf."
	    "budget.draw_calls\",\"perf.budget.programs\"],\"errors\":[\"perf."
	    "budget.draw_calls\"]}"));
	(void)bu;
	cJSON_free(txt);
	cJSON_Delete(p);

	/* an unreadable budgets file is said; none at all is none */
	p = profile_build(hb, strlen(hb), &src, NULL, "x: broken", 0);
	txt = cJSON_PrintUnformatted(p);
	assert_non_null(strstr(txt, "\"budgets\":{\"file\":\"sloptimize.budgets"
	    ".json\",\"error\":\"x: broken\"}"));
	cJSON_free(txt);
	cJSON_Delete(p);
	p = profile_build(hb, strlen(hb), &src, NULL, NULL, 0);
	txt = cJSON_PrintUnformatted(p);
	assert_non_null(strstr(txt, "\"declared\":0,\"checked\":0"));
	cJSON_free(txt);
	cJSON_Delete(p);
}

static void
profile_build_refuses_what_is_not_a_heartbeat(void **state)
{
	static const char *const no[] = {
		"{\"type\":\"hitch\",\"at\":\"2026-11-29T12:00:00Z\"}",
		"{\"type\":\"heartbeat\"}",
		"{\"type\":\"heartbeat\",\"at\":\"yesterday\"}",
		"{\"type\":\"heartbeat\",\"at\":7}",
		"[\"heartbeat\"]",
		"{\"type\":\"heartbeat\",\"at\":\"2026-11-29T12:00:00Z\"",
		"",
	};
	struct profile_source	src = { 1, 0 };
	size_t			i;
	cJSON			*p;

	(void)state;
	for (i = 0; i < sizeof(no) / sizeof(no[0]); i++)
		assert_null(profile_build(no[i], strlen(no[i]), &src, NULL,
		    NULL, 0));
	/* a regime we do not know is "unknown"; automated is said */
	{
		const char	*q = "{\"type\":\"heartbeat\",\"at\":\"2026-11-"
				    "29T12:00:00Z\",\"regime\":\"quantum\","
				    "\"automated\":true}";

		p = profile_build(q, strlen(q), &src, NULL, NULL, 0);
	}
	assert_non_null(p);
	assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(p,
	    "regime")), "unknown");
	assert_true(cJSON_IsTrue(cJSON_GetObjectItem(p, "automated")));
	assert_null(cJSON_GetObjectItem(p, "frame"));
	cJSON_Delete(p);
}

/* --- .gitignore ---------------------------------------------------------------- */

static char *
merged(const char *old, int want, char *warning, size_t wcap)
{
	char	*out = NULL, added[1024];
	int	 rc = gitignore_merge(old, old ? strlen(old) : 0, &out, added,
		    sizeof(added), warning, wcap);

	assert_int_equal(rc, want);
	return out;
}

static void
gitignore_appends_after_the_users_text(void **state)
{
	char	 warning[512];
	char	*a, *b;
	size_t	 i;

	(void)state;
	a = merged(NULL, 1, warning, sizeof(warning));
	for (i = 0; gitignore_patterns[i] != NULL; i++) {
		char	line[128];

		snprintf(line, sizeof(line), "\n%s\n", gitignore_patterns[i]);
		assert_non_null(strstr(a, line));
	}
	/* never a ledger */
	assert_null(strstr(a, "\n.sloptimize/perf.jsonl"));
	assert_null(strstr(a, "\n*.jsonl"));
	assert_string_equal(warning, "");
	/* idempotent */
	assert_null(merged(a, 0, warning, sizeof(warning)));
	free(a);

	/* the user's bytes first, as they were; a last newline added */
	a = merged("node_modules\r\n/dist", 1, warning, sizeof(warning));
	assert_memory_equal(a, "node_modules\r\n/dist\n\n# sloptimize", 32);
	b = a;
	assert_null(merged(b, 0, warning, sizeof(warning)));
	free(a);
}

static void
gitignore_knows_the_users_spellings(void **state)
{
	char		 warning[512];
	char		*a;

	(void)state;
	/* every pattern, as people write them: nothing to add */
	assert_null(merged("/.sloptimize/bench\n.sloptimize/goldens/**\n"
	    ".sloptimize/snapshots/*  \r\n/.sloptimize/profile.json\n"
	    ".sloptimize/census.json\n.sloptimize/attribution.json\n"
	    "# a comment\n.sloptimize/dev.json\n.sloptimize/*.tmp\n", 0,
	    warning, sizeof(warning)));
	/* a negation is the user's decision: not added back */
	a = merged("!.sloptimize/goldens/\n", 1, warning, sizeof(warning));
	assert_null(strstr(a, "\n.sloptimize/goldens/\n"));
	assert_non_null(strstr(a, "\n.sloptimize/bench/\n"));
	free(a);
	/* what keeps a ledger out of git is said, and left */
	a = merged(".sloptimize/\n", 1, warning, sizeof(warning));
	assert_non_null(strstr(warning, "\".sloptimize/\""));
	assert_non_null(strstr(warning, "left as it is"));
	assert_memory_equal(a, ".sloptimize/\n", 13);
	free(a);
	a = merged("*.jsonl\n.sloptimize/fixes.jsonl\n", 1, warning,
	    sizeof(warning));
	assert_non_null(strstr(warning, "\"*.jsonl\", \".sloptimize/fixes.jsonl\""));
	free(a);
	a = merged(".sloptimize/*\n!.sloptimize/*.jsonl\n", 1, warning,
	    sizeof(warning));
	assert_string_equal(warning, "");
	free(a);
	/* npm's template ignores *.tgz: init's package copy is let back in,
	 * once */
	a = merged("node_modules/\n*.tgz\n", 1, warning, sizeof(warning));
	assert_non_null(strstr(a, "\n!.sloptimize/npm/*.tgz\n"));
	assert_null(merged(a, 0, warning, sizeof(warning)));
	free(a);
	a = merged("*.tgz\n!/.sloptimize/npm/*.tgz\n", 1, warning,
	    sizeof(warning));
	assert_null(strstr(a + 25, "!.sloptimize/npm/*.tgz"));
	free(a);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(budgets_good_files),
		cmocka_unit_test(budgets_bad_files_name_the_key),
		cmocka_unit_test(budgets_many_faults_are_counted),
		cmocka_unit_test(budgets_judge_levels_and_regimes),
		cmocka_unit_test(budgets_judge_unmeasured_is_not_zero),
		cmocka_unit_test(profile_build_copies_only_what_was_measured),
		cmocka_unit_test(profile_build_refuses_what_is_not_a_heartbeat),
		cmocka_unit_test(gitignore_appends_after_the_users_text),
		cmocka_unit_test(gitignore_knows_the_users_spellings),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
