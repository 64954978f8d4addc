/*
 * benchrun — a bench, a comparison, the budgets (benchrun.h).
 *
 * The run: the page from cli/pagerun.h — launched (the URL with
 * ?sloptimize=bench:<scene>, the page runtime virtual from the first
 * script), or the open tab through the daemon's relay — then one call of
 * sloptimize.bench.run(…), watched by its progress() (the setup
 * timeout while setting up, a minute without a new frame after).
 * Whatever ends it, the browser is closed.
 *
 * The page's result is outside input: it becomes a bench document, and
 * the document is read back through the same reader as a file on disk
 * (project_bench_parse) before it is written, so a bench this writes is
 * always one that --compare can read.
 */
#include <sys/stat.h>

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/base.h"
#include "browser/browser.h"
#include "cli/bench_budgets.h"
#include "cli/benchrun.h"
#include "cli/pagerun.h"
#include "ledger/footprint.h"
#include "ledger/verdict.h"
#include "project/bench.h"
#include "project/project.h"

#define OPEN_MS		120000	/* the browser's start, the page's load: minutes
				   on a loaded machine (docs/performance.md) */
#define STALL_MS	60000	/* no new frame for this long: hung */

static int
fail(struct bench_outcome *o, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int
fail(struct bench_outcome *o, int code, const char *fmt, ...)
{
	va_list	ap;

	va_start(ap, fmt);
	vsnprintf(o->err, sizeof(o->err), fmt, ap);
	va_end(ap);
	o->exit = code;
	return code;
}

const char *
bench_exit_meaning(int code, int compared)
{
	switch (code) {
	case 0:	return compared ? "improved" : "ok";
	case 1:	return compared ? "regressed" : "budget breached";
	case 2:	return "usage";
	case 3:	return "incomparable";
	case 4:	return "environment";
	case 5:	return "no-detectable-change";
	}
	return "interrupted";
}

/* SLOPTIMIZE_BENCH_TRACE=1: where a bench's wall time goes, on stderr
 * (docs/performance.md's breakdown). */
static void
trace(const char *what)
{
	static int64_t	t0;
	int64_t		now = base_mono_ms();

	if (getenv("SLOPTIMIZE_BENCH_TRACE") == NULL)
		return;
	if (t0 == 0)
		t0 = now;
	fprintf(stderr, "bench trace: %-8s %6.2f s\n", what,
	    (double)(now - t0) / 1000);
}

/* --- the launched run ----------------------------------------------------- */

struct progress_state {
	const struct bench_req	*r;
	int			 shown;
};

static void
progress_line(const struct bench_req *r, const cJSON *p, int *shown)
{
	const char	*phase = cJSON_GetStringValue(
			    cJSON_GetObjectItemCaseSensitive(p, "phase"));
	const cJSON	*run = cJSON_GetObjectItemCaseSensitive(p, "run"),
			*fr = cJSON_GetObjectItemCaseSensitive(p, "frame"),
			*frs = cJSON_GetObjectItemCaseSensitive(p, "frames");

	if (!r->progress || phase == NULL)
		return;
	if (strcmp(phase, "run") == 0)
		fprintf(stderr, "\rbench %s: run %d/%d, frame %d/%d   ",
		    r->scene, run ? run->valueint : 0, r->runs,
		    fr ? fr->valueint : 0, frs ? frs->valueint : 0);
	else
		fprintf(stderr, "\rbench %s: %s %d/%d            ", r->scene,
		    phase, fr ? fr->valueint : 0, frs ? frs->valueint : 0);
	*shown = 1;
}

static void
progress_cb(void *arg, const cJSON *p)
{
	struct progress_state	*ps = arg;

	progress_line(ps->r, p, &ps->shown);
}

/* The bench, in the page pagerun opened (launched, or the open tab):
 * one call of sloptimize.bench.run(…), watched by its progress. */
static int
run_page(const struct bench_req *r, struct pagerun *pr, cJSON **result,
    struct bench_outcome *o)
{
	struct progress_state	 ps = { r, 0 };
	struct pagerun_watch	 w = { r->setup_timeout_ms + 10000, STALL_MS,
				    progress_cb, &ps };
	char			 why[BROWSER_WHY_MAX];
	cJSON			*oj;
	int			 rc;

	oj = cJSON_CreateObject();
	cJSON_AddStringToObject(oj, "scene", r->scene);
	cJSON_AddNumberToObject(oj, "frames", r->frames);
	cJSON_AddNumberToObject(oj, "warmup", r->warmup);
	cJSON_AddNumberToObject(oj, "runs", r->runs);
	cJSON_AddNumberToObject(oj, "setupTimeoutMs", r->setup_timeout_ms);
	cJSON_AddNumberToObject(oj, "waitSceneMs", 10000);
	cJSON_AddNumberToObject(oj, "seed", PAGERUN_SEED);
	rc = pagerun_call(pr, "run", oj, &w, result, why, sizeof(why));
	cJSON_Delete(oj);
	if (ps.shown)
		fputs("\n", stderr);
	if (rc == 0)
		return 0;
	if (rc == -EINTR) {
		o->signal = pagerun_signal(pr);
		return fail(o, 128 + o->signal, "interrupted");
	}
	return fail(o, BENCH_EXIT_ENV, "%s", why);
}

/* --- the bench document ------------------------------------------------------ */

static const cJSON *
get(const cJSON *o, const char *a)
{
	return cJSON_GetObjectItemCaseSensitive(o, a);
}

static double
num(const cJSON *o, const char *a, double dflt)
{
	const cJSON	*v = get(o, a);

	return cJSON_IsNumber(v) && isfinite(v->valuedouble) ?
	    v->valuedouble : dflt;
}

static cJSON *
jdup(const cJSON *o)
{
	return o ? cJSON_Duplicate(o, 1) : NULL;
}

/* A per-run statistic over the runs: their median, or their max. */
static int
over_runs(const cJSON *per, const char *section, const char *field,
    int maxof, double *out)
{
	double		 v[VERDICT_RUNS_MAX];
	const cJSON	*run;
	int		 n = 0;

	cJSON_ArrayForEach(run, per) {
		const cJSON *x = get(get(run, section), field);

		if (!cJSON_IsNumber(x) || n >= VERDICT_RUNS_MAX)
			return -1;
		v[n++] = x->valuedouble;
	}
	if (n == 0)
		return -1;
	if (maxof) {
		int	i;

		*out = v[0];
		for (i = 1; i < n; i++)
			if (v[i] > *out)
				*out = v[i];
	} else
		*out = verdict_median(v, n);
	return 0;
}

static double
r3(double x)
{
	return round(x * 1000) / 1000;
}

static void
add_series(cJSON *o, const char *name, const struct verdict_series *s,
    const char *floor_name)
{
	if (s->n == 0)
		return;
	cJSON_AddNumberToObject(o, name, r3(verdict_median(s->run, s->n)));
	if (floor_name)
		cJSON_AddNumberToObject(o, floor_name,
		    r3(verdict_spread(s->run, s->n)));
}

/*
 * The page's result as a bench document: what was configured and
 * measured, the configHash, the per-run values, and the summary over
 * runs.  NULL with err when the result is not a bench.
 */
static cJSON *
bench_doc(const struct bench_req *r, const cJSON *res, const char *browser,
    const char *url, int64_t wall_ms, char *err, size_t cap)
{
	struct verdict_config	 vc;
	struct verdict_bench	 vb;
	const cJSON		*dev, *vp, *clk, *per;
	const char		*regime, *gpu, *vendor;
	cJSON			*doc, *env, *sec, *check;
	char			 at[32], hash[VERDICT_HASH_MAX], *text,
				 inner[512];
	double			 x;
	int			 rc;

	if (!cJSON_IsObject(res) || num(res, "v", 0) != 1) {
		snprintf(err, cap, "the page's bench runtime answered something "
		    "that is not a bench result (v 1)");
		return NULL;
	}
	dev = get(res, "device");
	vp = get(res, "viewport");
	clk = get(res, "clock");
	per = get(res, "perRun");
	regime = cJSON_GetStringValue(get(res, "regime"));
	gpu = cJSON_GetStringValue(get(dev, "renderer"));
	vendor = cJSON_GetStringValue(get(dev, "vendor"));

	memset(&vc, 0, sizeof(vc));
	vc.scene = r->scene;
	vc.frames = r->frames;
	vc.warmup = r->warmup;
	vc.runs = r->runs;
	vc.width = (int)num(vp, "width", 0);
	vc.height = (int)num(vp, "height", 0);
	vc.pixel_ratio = num(vp, "devicePixelRatio", 0);
	vc.clock = cJSON_GetStringValue(get(clk, "mode"));
	vc.seed = (long)num(clk, "seed", PAGERUN_SEED);
	vc.browser = browser;
	if (vc.clock == NULL || vc.width <= 0 || vc.height <= 0 ||
	    vc.pixel_ratio <= 0 || verdict_config_hash(&vc, hash) != 0) {
		snprintf(err, cap, "the page's result lacks its viewport or "
		    "clock");
		return NULL;
	}
	iso_format_ms(r->now_ms, at);

	doc = cJSON_CreateObject();
	cJSON_AddNumberToObject(doc, "v", 1);
	cJSON_AddStringToObject(doc, "name", r->scene);
	cJSON_AddStringToObject(doc, "scene", r->scene);
	cJSON_AddStringToObject(doc, "at", at);
	cJSON_AddStringToObject(doc, "regime", regime && (strcmp(regime,
	    "hardware") == 0 || strcmp(regime, "software") == 0) ? regime :
	    "unknown");
	env = cJSON_AddObjectToObject(doc, "environment");
	cJSON_AddBoolToObject(env, "launched", r->launch);
	if (r->launch)
		cJSON_AddStringToObject(env, "headless", "new");
	cJSON_AddStringToObject(env, "browser", browser);
	if (gpu != NULL)
		cJSON_AddStringToObject(env, "gpu", gpu);
	if (vendor != NULL)
		cJSON_AddStringToObject(env, "gpuVendor", vendor);
	cJSON_AddStringToObject(env, "url", url);
	sec = cJSON_AddObjectToObject(env, "viewport");
	cJSON_AddNumberToObject(sec, "width", vc.width);
	cJSON_AddNumberToObject(sec, "height", vc.height);
	cJSON_AddNumberToObject(env, "pixelRatio", vc.pixel_ratio);
	cJSON_AddStringToObject(env, "clock", vc.clock);
	cJSON_AddNumberToObject(env, "seed", (double)vc.seed);
	cJSON_AddStringToObject(env, "configHash", hash);
	cJSON_AddNumberToObject(doc, "frames", r->frames);
	cJSON_AddNumberToObject(doc, "warmup", r->warmup);
	cJSON_AddNumberToObject(doc, "runs", r->runs);
	cJSON_AddNumberToObject(doc, "settleFrames", num(res, "settleFrames",
	    0));
	cJSON_AddItemToObject(doc, "perRun", jdup(per));

	/* read back as a file would be: the per-run values checked */
	if ((text = cJSON_PrintUnformatted(doc)) == NULL) {
		cJSON_Delete(doc);
		snprintf(err, cap, "out of memory");
		return NULL;
	}
	rc = project_bench_parse(text, strlen(text), NULL, &vb, inner,
	    sizeof(inner));
	free(text);
	if (rc != 0) {
		cJSON_Delete(doc);
		snprintf(err, cap, "the page's result is not a bench: %s", inner);
		return NULL;
	}

	sec = cJSON_AddObjectToObject(doc, "frame");
	add_series(sec, "medianMs", &vb.m[M_FRAME_MEDIAN], NULL);
	add_series(sec, "p95Ms", &vb.m[M_FRAME_P95], NULL);
	if (over_runs(per, "frame", "p99Ms", 0, &x) == 0)
		cJSON_AddNumberToObject(sec, "p99Ms", r3(x));
	if (over_runs(per, "frame", "maxMs", 1, &x) == 0)
		cJSON_AddNumberToObject(sec, "maxMs", r3(x));
	cJSON_AddNumberToObject(sec, "noiseFloorMs",
	    r3(verdict_spread(vb.m[M_FRAME_MEDIAN].run, vb.m[M_FRAME_MEDIAN].n)));
	cJSON_AddNumberToObject(sec, "p95NoiseFloorMs",
	    r3(verdict_spread(vb.m[M_FRAME_P95].run, vb.m[M_FRAME_P95].n)));
	sec = cJSON_AddObjectToObject(doc, "render");
	add_series(sec, "calls", &vb.m[M_CALLS], NULL);
	add_series(sec, "triangles", &vb.m[M_TRIANGLES], NULL);
	add_series(sec, "points", &vb.m[M_POINTS], NULL);
	add_series(sec, "lines", &vb.m[M_LINES], NULL);
	add_series(sec, "programs", &vb.m[M_PROGRAMS], NULL);
	add_series(sec, "insideMs", &vb.m[M_RENDER_INSIDE],
	    "insideNoiseFloorMs");
	sec = cJSON_AddObjectToObject(doc, "memory");
	add_series(sec, "geometries", &vb.m[M_GEOMETRIES], NULL);
	add_series(sec, "textures", &vb.m[M_TEXTURES], NULL);
	if (vb.m[M_GPU_MEDIAN].n > 0) {
		sec = cJSON_AddObjectToObject(doc, "gpu");
		add_series(sec, "medianMs", &vb.m[M_GPU_MEDIAN], "noiseFloorMs");
		add_series(sec, "p95Ms", &vb.m[M_GPU_P95], NULL);
	}
	if (get(res, "gpuTimer"))
		cJSON_AddItemToObject(doc, "gpuTimer", jdup(get(res, "gpuTimer")));
	sec = cJSON_AddObjectToObject(doc, "grade");
	cJSON_AddStringToObject(sec, "counters", verdict_counters_stable(&vb) ?
	    "exact" : "unstable");
	cJSON_AddStringToObject(sec, "timing", cJSON_GetStringValue(get(doc,
	    "regime")));
	if (get(res, "errors"))
		cJSON_AddItemToObject(doc, "errors", jdup(get(res, "errors")));
	check = jdup(get(res, "notes"));
	cJSON_AddItemToObject(doc, "notes", check ? check :
	    cJSON_CreateArray());
	if (cJSON_IsNumber(get(res, "setupMs")))
		cJSON_AddNumberToObject(doc, "setupMs", num(res, "setupMs", 0));
	if (cJSON_IsNumber(get(res, "warmupMs")))
		cJSON_AddNumberToObject(doc, "warmupMs", num(res, "warmupMs", 0));
	cJSON_AddNumberToObject(doc, "wallMs", (double)wall_ms);
	return doc;
}

/* --- a comparison --------------------------------------------------------------- */

static const char *
base(const char *path)
{
	const char	*s = strrchr(path, '/');

	return s ? s + 1 : path;
}

static cJSON *
side(const char *path, const cJSON *doc)
{
	cJSON	*o = cJSON_CreateObject();

	cJSON_AddStringToObject(o, "file", base(path));
	cJSON_AddStringToObject(o, "path", path);
	cJSON_AddStringToObject(o, "at", cJSON_GetStringValue(get(doc, "at")));
	cJSON_AddStringToObject(o, "scene", cJSON_GetStringValue(get(doc,
	    "scene")));
	return o;
}

/* The seed §6.6 summary of one side: a few numbers a reader sees first. */
static cJSON *
summary(const char *path, const cJSON *doc)
{
	cJSON	*o = cJSON_CreateObject();
	const cJSON *f = get(doc, "frame"), *rd = get(doc, "render");

	cJSON_AddStringToObject(o, "file", base(path));
	cJSON_AddStringToObject(o, "at", cJSON_GetStringValue(get(doc, "at")));
	if (cJSON_IsNumber(get(rd, "calls")))
		cJSON_AddNumberToObject(o, "calls", num(rd, "calls", 0));
	if (cJSON_IsNumber(get(rd, "triangles")))
		cJSON_AddNumberToObject(o, "triangles", num(rd, "triangles", 0));
	if (cJSON_IsNumber(get(rd, "programs")))
		cJSON_AddNumberToObject(o, "programs", num(rd, "programs", 0));
	if (cJSON_IsNumber(get(f, "medianMs")))
		cJSON_AddNumberToObject(o, "medianMs", num(f, "medianMs", 0));
	if (cJSON_IsNumber(get(f, "p95Ms")))
		cJSON_AddNumberToObject(o, "p95Ms", num(f, "p95Ms", 0));
	return o;
}

static int
compare(const struct bench_req *r, const struct bench_budgets *bb,
    const char *before, const char *after, cJSON *out_doc,
    struct bench_outcome *o)
{
	struct verdict_bench	 va, vb;
	struct verdict_result	 vr;
	cJSON			*da = NULL, *db = NULL, *c, *ms, *m, *line, *bj,
				*per, *dist, *it;
	char			 why[1024], at[32];
	int			 i, breach, rc;

	if (project_bench_read(before, &da, &va, why, sizeof(why)) != 0 ||
	    project_bench_read(after, &db, &vb, why, sizeof(why)) != 0) {
		cJSON_Delete(da);
		return fail(o, BENCH_EXIT_ENV, "%s", why);
	}
	verdict_compare(&va, &vb, &vr);
	c = cJSON_AddObjectToObject(out_doc, "compare");
	cJSON_AddStringToObject(c, "verdict", verdict_name(vr.overall));
	cJSON_AddStringToObject(c, "why", vr.why);
	cJSON_AddStringToObject(c, "regime", va.regime == vb.regime ?
	    verdict_regime_name(va.regime) : "mixed");
	it = cJSON_AddArrayToObject(c, "decidedBy");
	for (i = 0; i < vr.ndecided; i++)
		cJSON_AddItemToArray(it, cJSON_CreateString(
		    verdict_metrics[vr.decided_by[i]].name));
	cJSON_AddItemToObject(c, "before", side(before, da));
	cJSON_AddItemToObject(c, "after", side(after, db));
	cJSON_AddStringToObject(c, "configHash", va.hash);
	ms = cJSON_AddArrayToObject(c, "metrics");
	for (i = 0; i < METRIC_N; i++) {
		const struct verdict_line *l = &vr.m[i];

		if (va.m[i].n == 0 && vb.m[i].n == 0)
			continue;
		m = cJSON_CreateObject();
		cJSON_AddItemToArray(ms, m);
		cJSON_AddStringToObject(m, "name", verdict_metrics[i].name);
		cJSON_AddStringToObject(m, "label", verdict_metrics[i].label);
		cJSON_AddStringToObject(m, "kind", verdict_metrics[i].kind ==
		    VERDICT_TIMING ? "timing" : "counter");
		cJSON_AddStringToObject(m, "verdict", vr.overall ==
		    VERDICT_INCOMPARABLE && l->v != VERDICT_NONE ?
		    "incomparable" : verdict_name(l->v));
		if (va.m[i].n)
			cJSON_AddNumberToObject(m, "before", r3(
			    verdict_median(va.m[i].run, va.m[i].n)));
		if (vb.m[i].n)
			cJSON_AddNumberToObject(m, "after", r3(
			    verdict_median(vb.m[i].run, vb.m[i].n)));
		if (l->measured) {
			cJSON_AddNumberToObject(m, "delta", r3(l->delta));
			cJSON_AddNumberToObject(m, "noiseFloorBefore",
			    r3(l->floor_before));
			cJSON_AddNumberToObject(m, "noiseFloorAfter",
			    r3(l->floor_after));
			cJSON_AddNumberToObject(m, "threshold", r3(l->threshold));
		}
		cJSON_AddBoolToObject(m, "decisive", l->decisive);
		cJSON_AddBoolToObject(m, "unstable", l->unstable);
		cJSON_AddStringToObject(m, "why", l->why);
	}
	bj = bench_budgets_judge(bb, db, &breach);
	cJSON_AddItemToObject(out_doc, "budgets", bj);
	o->exit = verdict_exit(vr.overall);

	/* the ledger line: seed §6.6's, and the rest */
	line = cJSON_CreateObject();
	iso_format_ms(r->now_ms, at);
	cJSON_AddStringToObject(line, "at", at);
	cJSON_AddStringToObject(line, "scene", cJSON_GetStringValue(get(db,
	    "scene")));
	if (r->change_ref || r->change) {
		it = cJSON_AddObjectToObject(line, "change");
		if (r->change_ref)
			cJSON_AddStringToObject(it, "ref", r->change_ref);
		if (r->change)
			cJSON_AddStringToObject(it, "description", r->change);
	}
	cJSON_AddItemToObject(line, "before", summary(before, da));
	cJSON_AddItemToObject(line, "after", summary(after, db));
	cJSON_AddStringToObject(line, "verdict", verdict_name(vr.overall));
	cJSON_AddNumberToObject(line, "exit", o->exit);
	cJSON_AddStringToObject(line, "why", vr.why);
	cJSON_AddStringToObject(line, "regime", cJSON_GetStringValue(get(c,
	    "regime")));
	cJSON_AddItemToObject(line, "decidedBy", jdup(get(c, "decidedBy")));
	per = cJSON_AddObjectToObject(line, "metrics");
	cJSON_ArrayForEach(m, ms)
		cJSON_AddStringToObject(per, cJSON_GetStringValue(get(m, "name")),
		    cJSON_GetStringValue(get(m, "verdict")));
	per = cJSON_AddObjectToObject(line, "budgets");
	dist = cJSON_AddObjectToObject(line, "distances");
	cJSON_ArrayForEach(it, get(bj, "items")) {
		cJSON_AddStringToObject(per, cJSON_GetStringValue(get(it, "key")),
		    cJSON_GetStringValue(get(it, "state")));
		cJSON_AddStringToObject(dist, cJSON_GetStringValue(get(it,
		    "key")), cJSON_GetStringValue(get(it, "text")));
	}
	cJSON_AddStringToObject(line, "configHash", va.hash);
	it = cJSON_AddObjectToObject(c, "history");
	cJSON_AddStringToObject(it, "file", PROJECT_DIR "/"
	    PROJECT_BENCH_HISTORY);
	rc = project_bench_history_append(r->project, line, why, sizeof(why));
	cJSON_AddBoolToObject(it, "appended", rc == 0);
	cJSON_AddItemToObject(it, "line", line);
	cJSON_Delete(da);
	cJSON_Delete(db);
	if (rc != 0)
		return fail(o, BENCH_EXIT_ENV, "the verdict is %s, but it could "
		    "not be recorded in %s: %s", verdict_name(vr.overall),
		    PROJECT_BENCH_HISTORY, why);
	return o->exit;
}

/* --- the whole of it ----------------------------------------------------------------- */

static int
launch_and_run(const struct bench_req *r, const struct bench_budgets *bb,
    char *path, size_t pcap, cJSON *out_doc, struct bench_outcome *o)
{
	struct pagerun_req	 pq = { r->project, r->scene, r->url, r->signals,
				    r->cancel, OPEN_MS, 0, 0, r->launch };
	struct pagerun		*pr;
	char			 url[2300], why[BROWSER_WHY_MAX];
	cJSON			*res = NULL, *doc, *run;
	int64_t			 t0 = base_mono_ms();
	int			 rc, breach, sig;

	trace("launch");
	if ((rc = pagerun_open(&pq, &pr, &sig, why, sizeof(why))) != 0) {
		if (rc == -EINTR) {
			o->signal = sig;
			return fail(o, 128 + sig, "interrupted");
		}
		return fail(o, rc == -ENAMETOOLONG || rc == -EDESTADDRREQ ?
		    BENCH_EXIT_USAGE :
		    BENCH_EXIT_ENV, "%s", rc == -ECANCELED ? "cancelled" : why);
	}
	trace("loaded");
	rc = run_page(r, pr, &res, o);
	snprintf(why, sizeof(why), "%s", pagerun_browser(pr));
	snprintf(url, sizeof(url), "%s", pagerun_url(pr));
	trace("ran");
	if (pagerun_close(pr) != 0 && rc == 0)
		rc = fail(o, BENCH_EXIT_ENV, "the browser's processes outlived "
		    "SIGKILL");
	trace("closed");
	if (rc != 0) {
		cJSON_Delete(res);
		return rc;
	}
	doc = bench_doc(r, res, why, url, base_mono_ms() - t0, o->err,
	    sizeof(o->err));
	cJSON_Delete(res);
	if (doc == NULL)
		return fail(o, BENCH_EXIT_ENV, "%s", o->err);
	if (project_bench_write(r->project, r->scene, r->now_ms, doc, path, pcap,
	    why, sizeof(why)) != 0) {
		cJSON_Delete(doc);
		return fail(o, BENCH_EXIT_ENV, "%s", why);
	}
	run = cJSON_AddObjectToObject(out_doc, "run");
	cJSON_AddStringToObject(run, "file", base(path));
	cJSON_AddStringToObject(run, "path", path);
	if (r->compare == NULL)
		cJSON_AddItemToObject(out_doc, "budgets",
		    bench_budgets_judge(bb, doc, &breach));
	else
		breach = 0;
	cJSON_AddItemToObject(run, "bench", doc);
	o->exit = breach ? BENCH_EXIT_REGRESSED : BENCH_EXIT_OK;
	return o->exit;
}

void
bench_execute(const struct bench_req *r, struct bench_outcome *o)
{
	struct bench_budgets	 bb;
	char			 before[PATH_MAX], after[PATH_MAX],
				 scene[PROJECT_SCENE_MAX + 1], why[1024];
	cJSON			*doc;
	int			 compared = r->compare != NULL;

	memset(o, 0, sizeof(*o));
	o->doc = doc = cJSON_CreateObject();
	cJSON_AddNumberToObject(doc, "v", 1);

	if (r->scene == NULL && r->compare == NULL)
		fail(o, BENCH_EXIT_USAGE, "--scene NAME runs a bench; "
		    "--compare A B (or last) compares two");
	else if (r->scene != NULL && !project_scene_ok(r->scene))
		fail(o, BENCH_EXIT_USAGE, "'%s' is not a scene name (letters, "
		    "digits, '.', '_', '-'; at most 64)", r->scene);
	else if (r->scene != NULL && r->compare_b != NULL)
		fail(o, BENCH_EXIT_USAGE, "with --scene, --compare takes one "
		    "bench (the before: a file or last); the after is the one "
		    "this runs");
	else if (r->scene == NULL && strcmp(r->compare, "last") != 0 &&
	    r->compare_b == NULL)
		fail(o, BENCH_EXIT_USAGE, "--compare A B: two benches (or "
		    "--compare last)");
	else if (r->scene == NULL && strcmp(r->compare, "last") == 0 &&
	    r->compare_b != NULL)
		fail(o, BENCH_EXIT_USAGE, "--compare last takes no second "
		    "bench: it compares the two newest");
	else if ((r->change_ref || r->change) && r->compare == NULL)
		fail(o, BENCH_EXIT_USAGE, "--change-ref and --change describe "
		    "a comparison: they go with --compare");
	else if (bench_budgets_load(r->project, &bb, why, sizeof(why)) != 0)
		fail(o, BENCH_EXIT_ENV, "%s", why);
	else if (r->scene != NULL) {
		/* the before bench exists, or nothing is launched */
		if (compared && project_bench_find(r->project, r->compare,
		    strcmp(r->compare, "last") == 0 ? r->scene : NULL, 0,
		    before, sizeof(before), NULL, why, sizeof(why)) != 0)
			fail(o, BENCH_EXIT_ENV, "nothing to compare with: %s — "
			    "bench the code before the change first", why);
		else if (launch_and_run(r, &bb, after, sizeof(after), doc, o) <=
		    BENCH_EXIT_REGRESSED && compared)
			compare(r, &bb, before, after, doc, o);
	} else if (strcmp(r->compare, "last") == 0) {
		if (project_bench_find(r->project, "last", NULL, 0, after,
		    sizeof(after), scene, why, sizeof(why)) != 0 ||
		    project_bench_find(r->project, "last", scene, 1, before,
		    sizeof(before), NULL, why, sizeof(why)) != 0)
			fail(o, BENCH_EXIT_ENV, "%s", why);
		else
			compare(r, &bb, before, after, doc, o);
	} else if (project_bench_find(r->project, r->compare, NULL, 0, before,
	    sizeof(before), NULL, why, sizeof(why)) != 0 ||
	    project_bench_find(r->project, r->compare_b, NULL, 0, after,
	    sizeof(after), NULL, why, sizeof(why)) != 0)
		fail(o, BENCH_EXIT_ENV, "%s", why);
	else
		compare(r, &bb, before, after, doc, o);

	cJSON_AddNumberToObject(doc, "exit", o->exit);
	cJSON_AddStringToObject(doc, "meaning", bench_exit_meaning(o->exit,
	    compared));
	if (*o->err != '\0')
		cJSON_AddStringToObject(doc, "error", o->err);
}
