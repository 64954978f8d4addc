/*
 * check — `sloptimize check` (check.h, docs/budgets.md): the budgets
 * against the last measurement, never a silent pass.
 *
 * The order of the questions is the order of what a user must fix first:
 * a malformed budgets file (2) before anything is measured, no budgets
 * (0, said), then the measurement — none, or too old, is 4 — then the
 * judgement (project/budgets.h), where a timing budget on a software
 * renderer is reported and not judged, and a check in which not one
 * budget could be judged is 4 again: passing it would say "inside"
 * about nothing.
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/bench_check.h"
#include "cli/check.h"
#include "cli/cli.h"
#include "cli/verbs.h"
#include "ledger/footprint.h"
#include "project/budgets.h"
#include "project/profile.h"
#include "project/project.h"

int
check_parse_age(const char *s, int64_t *ms)
{
	char		*end;
	double		 v;
	double		 unit = 1000;

	if (strcmp(s, "off") == 0 || strcmp(s, "none") == 0) {
		*ms = CHECK_NO_MAX_AGE;
		return 0;
	}
	v = strtod(s, &end);
	if (end == s || !isfinite(v) || v < 0)
		return -1;
	if (strcmp(end, "ms") == 0)
		unit = 1;
	else if (strcmp(end, "s") == 0 || *end == '\0')
		unit = 1000;
	else if (strcmp(end, "m") == 0 || strcmp(end, "min") == 0)
		unit = 60000;
	else if (strcmp(end, "h") == 0)
		unit = 3600000;
	else if (strcmp(end, "d") == 0)
		unit = 86400000;
	else
		return -1;
	if (v * unit > 1e15)
		return -1;
	*ms = (int64_t)(v * unit);
	return 0;
}

/* "4s", "3m12s", "2h5m", "3d" */
static void
format_age(int64_t ms, char *out, size_t cap)
{
	int64_t	s = ms / 1000;

	if (ms < 0)
		snprintf(out, cap, "%.1fs in the future", -ms / 1000.0);
	else if (ms < 10000)
		snprintf(out, cap, "%.1fs", ms / 1000.0);
	else if (s < 120)
		snprintf(out, cap, "%llds", (long long)s);
	else if (s < 7200)
		snprintf(out, cap, "%lldm%02llds", (long long)(s / 60),
		    (long long)(s % 60));
	else if (s < 172800)
		snprintf(out, cap, "%lldh%02lldm", (long long)(s / 3600),
		    (long long)(s % 3600 / 60));
	else
		snprintf(out, cap, "%lldd", (long long)(s / 86400));
}

static cJSON *
doc_new(const struct check_opts *o)
{
	cJSON	*d = cJSON_CreateObject();

	if (d == NULL)
		return NULL;
	cJSON_AddNumberToObject(d, "v", 1);
	cJSON_AddNumberToObject(d, "exit", 0);
	cJSON_AddStringToObject(d, "result", "inside");
	cJSON_AddBoolToObject(d, "countersOnly", o->counters_only);
	if (o->max_age_ms == CHECK_NO_MAX_AGE)
		cJSON_AddNullToObject(d, "maxAgeMs");
	else
		cJSON_AddNumberToObject(d, "maxAgeMs", (double)o->max_age_ms);
	cJSON_AddArrayToObject(d, "warnings");
	return d;
}

/* Set exit and result (and error, if any); returns the exit. */
static int
finish(cJSON *d, int code, const char *result, const char *error)
{
	cJSON_ReplaceItemInObject(d, "exit", cJSON_CreateNumber(code));
	cJSON_ReplaceItemInObject(d, "result", cJSON_CreateString(result));
	if (error != NULL)
		cJSON_AddStringToObject(d, "error", error);
	return code;
}

static void
warn(cJSON *d, const char *text)
{
	cJSON_AddItemToArray(cJSON_GetObjectItemCaseSensitive(d, "warnings"),
	    cJSON_CreateString(text));
}

static const char *
regime_phrase(const char *regime)
{
	if (strcmp(regime, "software") == 0)
		return "software: timings not trusted";
	if (strcmp(regime, "hardware") == 0)
		return "hardware";
	return "unknown: the renderer was not named";
}

/* The measurement: profile.json, or the bench's.  0, or an exit code
 * with the document finished. */
static int
measure(const struct check_opts *o, cJSON *d, cJSON **m)
{
	char		 why[1024], path[PATH_MAX], age[48];
	cJSON		*src;
	const char	*at, *build;
	int64_t		 at_ms = LEDGER_NO_TIME;
	int		 rc;

	src = cJSON_AddObjectToObject(d, "measurement");
	if (o->bench != NULL) {
		cJSON_AddStringToObject(src, "source", "bench");
		cJSON_AddStringToObject(src, "scene", o->bench);
		if ((rc = bench_for_check(o->project, o->bench,
		    o->bench_frames, o->bench_warmup, o->bench_runs, o->now_ms,
		    m, why, sizeof(why))) != 0 || *m == NULL) {
			if (rc == 0)
				rc = EXIT_NOTHING;
			return finish(d, rc, rc == EXIT_USAGE ? "usage" :
			    "no-measurement", why);
		}
		at = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(*m,
		    "at"));
		if (at != NULL)
			iso_parse_ms(at, strlen(at), &at_ms);
	} else {
		cJSON_AddStringToObject(src, "source", "profile");
		project_path(o->project, PROFILE_FILE, path, sizeof(path));
		cJSON_AddStringToObject(src, "path", path);
		if ((rc = profile_read(o->project, m, &at_ms, why,
		    sizeof(why))) != 0) {
			char	msg[1400];

			snprintf(msg, sizeof(msg), "%s: %s", why, rc == -ENOENT ?
			    "sloptimized writes it from the game's heartbeats "
			    "(start the daemon for this project and open the "
			    "game), or pass --bench SCENE" : "the daemon "
			    "replaces it at the next heartbeat");
			return finish(d, EXIT_NOTHING, "no-measurement", msg);
		}
	}
	cJSON_AddStringToObject(src, "regime", regime_phrase(
	    cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(*m,
	    "regime")) ? cJSON_GetStringValue(
	    cJSON_GetObjectItemCaseSensitive(*m, "regime")) : "unknown"));
	if ((build = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(*m,
	    "build"))) != NULL)
		cJSON_AddStringToObject(src, "build", build);
	{
		const cJSON	*s = cJSON_GetObjectItemCaseSensitive(*m,
				    "source");
		const cJSON	*off = cJSON_GetObjectItemCaseSensitive(s,
				    "offset");

		if (cJSON_IsNumber(off))
			cJSON_AddNumberToObject(src, "offset",
			    off->valuedouble);
	}
	if (at_ms == LEDGER_NO_TIME) {
		cJSON_AddNullToObject(src, "at");
		cJSON_AddNullToObject(src, "ageMs");
		if (o->max_age_ms != CHECK_NO_MAX_AGE && o->bench == NULL)
			return finish(d, EXIT_NOTHING, "stale", "the "
			    "measurement has no time (\"at\"): its age is "
			    "unknown");
		return 0;
	}
	{
		char	iso[32];

		iso_format_ms(at_ms, iso);
		cJSON_AddStringToObject(src, "at", iso);
	}
	cJSON_AddNumberToObject(src, "ageMs", (double)(o->now_ms - at_ms));
	if (o->max_age_ms != CHECK_NO_MAX_AGE && o->bench == NULL &&
	    o->now_ms - at_ms > o->max_age_ms) {
		char	msg[1024], lim[48];

		format_age(o->now_ms - at_ms, age, sizeof(age));
		format_age(o->max_age_ms, lim, sizeof(lim));
		snprintf(msg, sizeof(msg), "profile.json is %s old, past "
		    "--max-age %s: the game is not running (or the daemon is "
		    "not writing it); open the game, or pass --max-age to "
		    "accept an older measurement", age, lim);
		return finish(d, EXIT_NOTHING, "stale", msg);
	}
	return 0;
}

int
check_run(const struct check_opts *o, cJSON **out)
{
	struct budgets		 b;
	struct budget_judgement	 j;
	char			 why[BUDGETS_WHY_MAX], path[PATH_MAX + 64];
	cJSON			*d, *m = NULL, *arr, *it, *s, *breached;
	int			 found = 0, rc, mi;

	if ((*out = d = doc_new(o)) == NULL)
		return EXIT_FINDINGS;
	snprintf(path, sizeof(path), "%s/%s", o->project, BUDGETS_FILE);
	s = cJSON_AddObjectToObject(d, "budgetsFile");
	cJSON_AddStringToObject(s, "path", path);
	rc = budgets_read(o->project, &b, &found, why, sizeof(why));
	cJSON_AddBoolToObject(s, "found", found);
	if (rc != 0) {
		char		 msg[BUDGETS_WHY_MAX + 128];
		char		*line, *save = NULL;

		arr = cJSON_AddArrayToObject(s, "faults");
		snprintf(msg, sizeof(msg), "%s", why);
		for (line = strtok_r(msg, "\n", &save); line != NULL;
		    line = strtok_r(NULL, "\n", &save))
			cJSON_AddItemToArray(arr, cJSON_CreateString(line));
		snprintf(msg, sizeof(msg), "%s is not a valid budgets file "
		    "(docs/budgets.md): %s", BUDGETS_FILE, why);
		return finish(d, EXIT_USAGE, "invalid-budgets", msg);
	}
	cJSON_AddNumberToObject(s, "declared", b.ndeclared);
	if (b.ndeclared == 0) {
		warn(d, found ? "no budgets declared: sloptimize.budgets.json "
		    "declares none, so nothing is checked (docs/budgets.md)" :
		    "no budgets declared: there is no sloptimize.budgets.json "
		    "at the project's root, so nothing is checked "
		    "(docs/budgets.md)");
		return finish(d, EXIT_OK, "no-budgets", NULL);
	}
	if ((rc = measure(o, d, &m)) != 0) {
		cJSON_Delete(m);
		return rc;
	}
	budgets_judge(&b, m, o->counters_only ? BUDGETS_COUNTERS_ONLY : 0, &j);
	s = cJSON_AddObjectToObject(d, "summary");
	cJSON_AddNumberToObject(s, "declared", j.declared);
	cJSON_AddNumberToObject(s, "checked", j.checked);
	cJSON_AddNumberToObject(s, "breached", j.breached_error +
	    j.breached_warn);
	cJSON_AddNumberToObject(s, "breachedError", j.breached_error);
	cJSON_AddNumberToObject(s, "breachedWarn", j.breached_warn);
	cJSON_AddNumberToObject(s, "notJudged", j.not_judged);
	cJSON_AddNumberToObject(s, "unmeasured", j.unmeasured);
	cJSON_AddNumberToObject(s, "skipped", j.skipped);
	arr = cJSON_AddArrayToObject(d, "budgets");
	breached = cJSON_AddArrayToObject(d, "breached");
	for (mi = 0; mi < BUDGET_N; mi++) {
		const struct budget		*bu = &b.b[mi];
		const struct budget_result	*r = &j.r[mi];
		enum budget_metric		 me = (enum budget_metric)mi;

		if (!bu->declared)
			continue;
		it = cJSON_CreateObject();
		cJSON_AddStringToObject(it, "key", budgets_key(me));
		cJSON_AddStringToObject(it, "metric", budgets_path(me));
		cJSON_AddStringToObject(it, "grade", budgets_is_timing(me) ?
		    "timing" : "counter");
		cJSON_AddNumberToObject(it, "max", bu->max);
		cJSON_AddStringToObject(it, "level",
		    budgets_level_name(bu->level));
		cJSON_AddStringToObject(it, "unit", budgets_unit(me));
		cJSON_AddStringToObject(it, "status",
		    budgets_status_name(r->status));
		if (r->has_value) {
			cJSON_AddNumberToObject(it, "value", r->value);
			/* JSON has no infinity: a budget of 0 exceeded */
			if (isfinite(r->ratio))
				cJSON_AddNumberToObject(it, "ratio",
				    round(r->ratio * 1000) / 1000);
			else
				cJSON_AddNullToObject(it, "ratio");
		}
		if (r->why[0] != '\0')
			cJSON_AddStringToObject(it, "why", r->why);
		cJSON_AddItemToArray(arr, it);
		if (r->status == BUDGET_BREACHED)
			cJSON_AddItemToArray(breached,
			    cJSON_CreateString(budgets_key(me)));
	}
	cJSON_Delete(m);
	if (j.breached_warn > 0)
		warn(d, "a budget at level warn is breached: said, not failed");
	if (j.checked == 0) {
		char	msg[512];

		snprintf(msg, sizeof(msg), "no budget could be judged (%d "
		    "declared: %d not judged, %d not measured, %d skipped by "
		    "--counters-only): nothing was checked, so this is not a "
		    "pass", j.declared, j.not_judged, j.unmeasured, j.skipped);
		return finish(d, EXIT_NOTHING, "nothing-judged", msg);
	}
	if (j.breached_error > 0)
		return finish(d, EXIT_FINDINGS, "breached", NULL);
	return finish(d, EXIT_OK, j.breached_warn > 0 ? "warned" : "inside",
	    NULL);
}

/* --- for people -------------------------------------------------------------- */

static const char *
jstr(const cJSON *o, const char *k)
{
	const char	*s = cJSON_GetStringValue(
			    cJSON_GetObjectItemCaseSensitive(o, k));

	return s != NULL ? s : "";
}

static double
jnum(const cJSON *o, const char *k)
{
	const cJSON	*v = cJSON_GetObjectItemCaseSensitive(o, k);

	return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}

static void
fmt_value(double v, const char *unit, char *out, size_t cap)
{
	if (isnan(v))
		snprintf(out, cap, "-");
	else if (*unit != '\0' || v != floor(v))
		snprintf(out, cap, "%.1f%s", v, unit);
	else
		snprintf(out, cap, "%.0f", v);
}

void
check_print(const cJSON *d, FILE *f)
{
	const cJSON	*m = cJSON_GetObjectItemCaseSensitive(d, "measurement");
	const cJSON	*s = cJSON_GetObjectItemCaseSensitive(d, "summary");
	const cJSON	*it;
	char		 age[48];
	int		 w = 0;

	if (cJSON_IsObject(m) && cJSON_IsObject(s)) {
		double	a = jnum(m, "ageMs");

		if (strcmp(jstr(m, "source"), "bench") == 0)
			fprintf(f, "sloptimize check: bench of scene %s",
			    jstr(m, "scene"));
		else
			fprintf(f, "sloptimize check: profile.json");
		if (!isnan(a)) {
			format_age((int64_t)a, age, sizeof(age));
			fprintf(f, " at %s (%s old)", jstr(m, "at"), age);
		}
		if (*jstr(m, "build"))
			fprintf(f, ", build %s", jstr(m, "build"));
		fprintf(f, ", regime %s\n", jstr(m, "regime"));
		fprintf(f, "budgets: %.0f declared, %.0f checked, %.0f "
		    "breached%s\n", jnum(s, "declared"), jnum(s, "checked"),
		    jnum(s, "breached"), cJSON_IsTrue(
		    cJSON_GetObjectItemCaseSensitive(d, "countersOnly")) ?
		    " (--counters-only)" : "");
		cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(d,
		    "budgets"))
			if ((int)strlen(jstr(it, "key")) > w)
				w = (int)strlen(jstr(it, "key"));
		cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(d,
		    "budgets")) {
			char		 val[64], max[64], pair[140];
			const char	*st = jstr(it, "status");
			double		 ratio = jnum(it, "ratio");

			fmt_value(jnum(it, "value"), jstr(it, "unit"), val,
			    sizeof(val));
			fmt_value(jnum(it, "max"), jstr(it, "unit"), max,
			    sizeof(max));
			snprintf(pair, sizeof(pair), "%s / %s", val, max);
			fprintf(f, "  %-*s   %-17s ", w, jstr(it, "key"), pair);
			if (strcmp(st, "breached") == 0) {
				if (isnan(ratio))
					fprintf(f, "← over (the budget is 0)");
				else if (ratio >= 1.1)
					fprintf(f, "← over by %.*f×", ratio < 10 ?
					    1 : 0, ratio);
				else
					fprintf(f, "← over by %.1f%%",
					    (ratio - 1) * 100);
				if (strcmp(jstr(it, "level"), "warn") == 0)
					fprintf(f, " (warn)");
			} else if (strcmp(st, "inside") == 0)
				fprintf(f, "inside");
			else
				fprintf(f, "%s", jstr(it, "why"));
			if (strcmp(st, "inside") == 0 ||
			    strcmp(st, "breached") == 0) {
				if (*jstr(it, "why"))
					fprintf(f, " (%s)", jstr(it, "why"));
			}
			fputc('\n', f);
		}
	} else if (strcmp(jstr(d, "result"), "no-budgets") == 0)
		fprintf(f, "budgets: none declared\n");
	cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(d, "warnings"))
		fprintf(stderr, "sloptimize check: warning: %s\n",
		    cJSON_GetStringValue(it));
	if (strcmp(jstr(d, "result"), "invalid-budgets") == 0) {
		const cJSON	*bf = cJSON_GetObjectItemCaseSensitive(d,
				    "budgetsFile");

		fprintf(stderr, "sloptimize check: %s is not a valid budgets "
		    "file (docs/budgets.md):\n", jstr(bf, "path"));
		cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(bf,
		    "faults"))
			fprintf(stderr, "  %s\n", cJSON_GetStringValue(it));
	} else if (*jstr(d, "error"))
		fprintf(stderr, "sloptimize check: %s\n", jstr(d, "error"));
}

/* --- get_profile ------------------------------------------------------------- */

int
check_profile_doc(const char *project, int64_t now_ms, cJSON **out)
{
	char	 why[1024], path[PATH_MAX];
	cJSON	*d = cJSON_CreateObject(), *p = NULL;
	int64_t	 at_ms;
	int	 rc;

	*out = d;
	if (d == NULL)
		return EXIT_FINDINGS;
	project_path(project, PROFILE_FILE, path, sizeof(path));
	cJSON_AddNumberToObject(d, "v", 1);
	rc = profile_read(project, &p, &at_ms, why, sizeof(why));
	cJSON_AddNumberToObject(d, "exit", rc == 0 ? EXIT_OK : EXIT_NOTHING);
	cJSON_AddStringToObject(d, "path", path);
	if (rc != 0) {
		char	msg[1400];

		snprintf(msg, sizeof(msg), "%s%s", why, rc == -ENOENT ? ": "
		    "sloptimized writes it from the game's heartbeats (start "
		    "the daemon for this project and open the game)" : "");
		cJSON_AddStringToObject(d, "error", msg);
		return EXIT_NOTHING;
	}
	cJSON_AddNumberToObject(d, "ageMs", (double)(now_ms - at_ms));
	cJSON_AddStringToObject(d, "regime", regime_phrase(jstr(p, "regime")));
	cJSON_AddItemToObject(d, "profile", p);
	return EXIT_OK;
}

/* --- the verb ---------------------------------------------------------------- */

static const char check_usage[] =
"usage: sloptimize check [--counters-only] [--bench SCENE [--frames N]\n"
"                        [--warmup N] [--runs N]] [--max-age T] [--json]\n"
"                        [--project DIR]\n"
"Every budget of sloptimize.budgets.json (the project's root) against the\n"
"game's last measurement, .sloptimize/profile.json, which sloptimized\n"
"writes from the game's heartbeats (docs/budgets.md).\n"
"  --counters-only  judge draw calls, triangles and programs only: exact on\n"
"                   any renderer (what CI without a GPU runs)\n"
"  --bench SCENE    run a bench of SCENE first and judge its result\n"
"  --frames N, --warmup N, --runs N\n"
"                   that bench's size, as `bench` takes them (default\n"
"                   600, 120, 3): counters are exact at any size\n"
"  --max-age T      a profile older than T is no measurement (default 30s;\n"
"                   500ms, 5m, 2h, 1d, or off)\n"
"Timing budgets (frame_ms_p95, gpu_ms_p95) of a software renderer are\n"
"reported, never judged.\n"
"exit: 0 inside (or no budgets declared, with a warning); 1 a budget at\n"
"level error breached (warn: said, exit 0); 2 a malformed budgets file\n"
"(each fault named by its key) or usage; 4 nothing to check against (no\n"
"profile, a stale one, a bench that could not run, no budget judged)\n";

int
verb_check(int argc, char **argv)
{
	struct cli_common	 c;
	struct check_opts	 o = { 0 };
	const char		*age = NULL, *size[3] = { NULL, NULL, NULL };
	int			 rc, i, counters = 0;
	int			*sizev[3] = { &o.bench_frames, &o.bench_warmup,
				    &o.bench_runs };
	static const char *const sizen[3] = { "frames", "warmup", "runs" };
	static const long	 sizelo[3] = { 1, 0, 1 }, sizehi[3] = { 100000,
				    100000, 20 };
	struct cli_opt		 opts[] = {
		{ "counters-only", OPT_FLAG, &counters },
		{ "bench", OPT_ARG, &o.bench },
		{ "frames", OPT_ARG, &size[0] },
		{ "warmup", OPT_ARG, &size[1] },
		{ "runs", OPT_ARG, &size[2] },
		{ "max-age", OPT_ARG, &age },
		{ NULL, 0, NULL }
	};
	cJSON			*doc;
	char			 real[PATH_MAX];

	if ((rc = cli_parse(argc, argv, opts, &c, check_usage, NULL, NULL)) >= 0)
		return rc;
	/* paths said in full: the output is read from elsewhere (CI logs) */
	o.project = realpath(c.project, real) != NULL ? real : c.project;
	o.counters_only = counters;
	o.now_ms = c.now_ms;
	o.max_age_ms = CHECK_MAX_AGE_MS;
	if (age != NULL && check_parse_age(age, &o.max_age_ms) != 0) {
		fprintf(stderr, "sloptimize check: --max-age takes 30s, 500ms, "
		    "5m, 2h, 1d or off, not '%s'\n", age);
		return EXIT_USAGE;
	}
	if (o.bench != NULL && *o.bench == '\0') {
		fprintf(stderr, "sloptimize check: --bench takes a scene name\n");
		return EXIT_USAGE;
	}
	/* the bench's own ranges (cli/bench.c); a warm-up of 0 is asked for
	 * as -1 here, since 0 means "the default" to bench_for_check */
	for (i = 0; i < 3; i++) {
		long	 v;

		if (size[i] == NULL)
			continue;
		if (o.bench == NULL) {
			fprintf(stderr, "sloptimize check: --%s goes with "
			    "--bench SCENE\n", sizen[i]);
			return EXIT_USAGE;
		}
		if (cli_whole("check", sizen[i], size[i], sizelo[i], sizehi[i],
		    &v) != 0)
			return EXIT_USAGE;
		*sizev[i] = v == 0 ? -1 : (int)v;
	}
	rc = check_run(&o, &doc);
	if (doc == NULL) {
		fprintf(stderr, "sloptimize check: out of memory\n");
		return EXIT_FINDINGS;
	}
	if (c.json) {
		print_json(doc);
		/* the reason on stderr too: a pipe into jq still shows it */
		if (cJSON_IsString(cJSON_GetObjectItemCaseSensitive(doc,
		    "error")))
			fprintf(stderr, "sloptimize check: %s\n",
			    jstr(doc, "error"));
	} else
		check_print(doc, stdout);
	cJSON_Delete(doc);
	return rc;
}
