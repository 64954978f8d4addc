/*
 * bench_check — bench_for_check (cli/bench_check.h): `check --bench
 * SCENE` runs the bench verb's own bench (benchrun.h) in a launched
 * browser — a check is a controlled run, never the developer's tab — and hands
 * its result to check in profile.json's shape, so a bench and a live
 * profile are judged by one rule (project/budgets).
 */
#include <stdio.h>
#include <string.h>

#include "cli/bench_check.h"
#include "cli/benchrun.h"
#include "cli/cli.h"

/* bench's number at a.b into out's c.d, when it has one */
static void
copy(cJSON *out, const cJSON *bench, const char *a, const char *b,
    const char *c, const char *d)
{
	const cJSON	*v = cJSON_GetObjectItemCaseSensitive(
			    cJSON_GetObjectItemCaseSensitive(bench, a), b);
	cJSON		*o;

	if (!cJSON_IsNumber(v))
		return;
	if ((o = cJSON_GetObjectItemCaseSensitive(out, c)) == NULL)
		o = cJSON_AddObjectToObject(out, c);
	cJSON_AddNumberToObject(o, d, v->valuedouble);
}

int
bench_for_check(const char *project, const char *scene, int frames,
    int warmup, int runs, int64_t now_ms, cJSON **out, char *why, size_t cap)
{
	struct bench_req	 r = { .project = project, .scene = scene,
				    .launch = 1,
				    .frames = frames > 0 ? frames : BENCH_FRAMES,
				    .warmup = warmup > 0 ? warmup :
				    warmup < 0 ? 0 : BENCH_WARMUP,
				    .runs = runs > 0 ? runs : BENCH_RUNS,
				    .setup_timeout_ms = BENCH_SETUP_S * 1000,
				    .now_ms = now_ms };
	struct bench_outcome	 o;
	const cJSON		*run, *bench, *at, *regime, *path;
	cJSON			*p, *b;
	int			 rc;

	*out = NULL;
	memset(&o, 0, sizeof(o));
	bench_execute(&r, &o);
	run = cJSON_GetObjectItemCaseSensitive(o.doc, "run");
	bench = cJSON_GetObjectItemCaseSensitive(run, "bench");
	/* a breached budget (1) is check's to say, from the same numbers */
	if ((o.exit != BENCH_EXIT_OK && o.exit != BENCH_EXIT_REGRESSED) ||
	    !cJSON_IsObject(bench)) {
		snprintf(why, cap, "bench of scene '%s': %s", scene,
		    o.err[0] ? o.err : bench_exit_meaning(o.exit, 0));
		rc = o.exit == BENCH_EXIT_USAGE ? EXIT_USAGE : EXIT_NOTHING;
		cJSON_Delete(o.doc);
		return rc;
	}
	p = cJSON_CreateObject();
	at = cJSON_GetObjectItemCaseSensitive(bench, "at");
	regime = cJSON_GetObjectItemCaseSensitive(bench, "regime");
	if (cJSON_IsString(at))
		cJSON_AddStringToObject(p, "at", at->valuestring);
	cJSON_AddStringToObject(p, "regime", cJSON_IsString(regime) ?
	    regime->valuestring : "unknown");
	copy(p, bench, "frame", "medianMs", "frame", "medianMs");
	copy(p, bench, "frame", "p95Ms", "frame", "p95Ms");
	copy(p, bench, "frame", "p99Ms", "frame", "p99Ms");
	copy(p, bench, "render", "calls", "render", "calls");
	copy(p, bench, "render", "triangles", "render", "triangles");
	copy(p, bench, "render", "programs", "memory", "programs");
	copy(p, bench, "memory", "geometries", "memory", "geometries");
	copy(p, bench, "memory", "textures", "memory", "textures");
	copy(p, bench, "gpu", "p95Ms", "gpu", "p95Ms");
	b = cJSON_AddObjectToObject(p, "bench");
	cJSON_AddStringToObject(b, "scene", scene);
	path = cJSON_GetObjectItemCaseSensitive(run, "path");
	if (cJSON_IsString(path))
		cJSON_AddStringToObject(b, "path", path->valuestring);
	cJSON_Delete(o.doc);
	*out = p;
	return 0;
}
