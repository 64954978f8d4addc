/*
 * verdict — the rule of verdict.h, and the configuration hash.
 *
 * Why the pooled floor is the two spreads added: if one true value lies
 * inside the spread of each bench's runs, the two medians can be at most
 * spread(before) + spread(after) apart.  A larger difference cannot come
 * from one value, so it is a change; a smaller one may, so it is
 * no-detectable-change.  The 1 % floor (criterion.rs's noise threshold)
 * keeps a change nobody could feel from being called one when the runs
 * happen to agree closely.
 *
 * Why regressed wins over improved in the decisive set: a change that
 * makes the median faster and the p95 slower, or cuts draw calls while
 * adding triangles, is a trade the tool cannot weigh for the game; the
 * doctrine reverts anything not plainly better, and the reason names
 * both.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ledger/sha256.h"
#include "ledger/verdict.h"

const struct verdict_metric_def verdict_metrics[METRIC_N] = {
	[M_FRAME_MEDIAN] = { "frame.medianMs", VERDICT_TIMING, "ms", "frame median" },
	[M_FRAME_P95] = { "frame.p95Ms", VERDICT_TIMING, "ms", "frame p95" },
	[M_RENDER_INSIDE] = { "render.insideMs", VERDICT_TIMING, "ms", "inside render" },
	[M_GPU_MEDIAN] = { "gpu.medianMs", VERDICT_TIMING, "ms", "GPU median" },
	[M_GPU_P95] = { "gpu.p95Ms", VERDICT_TIMING, "ms", "GPU p95" },
	[M_CALLS] = { "render.calls", VERDICT_COUNTER, "", "draw calls" },
	[M_TRIANGLES] = { "render.triangles", VERDICT_COUNTER, "", "triangles" },
	[M_POINTS] = { "render.points", VERDICT_COUNTER, "", "points" },
	[M_LINES] = { "render.lines", VERDICT_COUNTER, "", "lines" },
	[M_PROGRAMS] = { "render.programs", VERDICT_COUNTER, "", "programs" },
	[M_GEOMETRIES] = { "memory.geometries", VERDICT_COUNTER, "", "geometries" },
	[M_TEXTURES] = { "memory.textures", VERDICT_COUNTER, "", "textures" },
};

static int
cmp_double(const void *a, const void *b)
{
	double	x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

double
verdict_median(const double *v, int n)
{
	double	s[VERDICT_RUNS_MAX];

	if (n <= 0)
		return NAN;
	if (n > VERDICT_RUNS_MAX)
		n = VERDICT_RUNS_MAX;
	memcpy(s, v, (size_t)n * sizeof(*s));
	qsort(s, (size_t)n, sizeof(*s), cmp_double);
	return n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
}

double
verdict_spread(const double *v, int n)
{
	double	lo, hi;
	int	i;

	if (n <= 0)
		return NAN;
	lo = hi = v[0];
	for (i = 1; i < n && i < VERDICT_RUNS_MAX; i++) {
		if (v[i] < lo)
			lo = v[i];
		if (v[i] > hi)
			hi = v[i];
	}
	return hi - lo;
}

static int
series_stable(const struct verdict_series *s)
{
	return s->n == 0 || verdict_spread(s->run, s->n) == 0;
}

int
verdict_counters_stable(const struct verdict_bench *b)
{
	int	i;

	for (i = 0; i < METRIC_N; i++)
		if (verdict_metrics[i].kind == VERDICT_COUNTER &&
		    !series_stable(&b->m[i]))
			return 0;
	return 1;
}

const char *
verdict_name(enum verdict v)
{
	switch (v) {
	case VERDICT_IMPROVED:		return "improved";
	case VERDICT_REGRESSED:		return "regressed";
	case VERDICT_NO_CHANGE:		return "no-detectable-change";
	case VERDICT_NOT_COMPARED:	return "not-compared";
	case VERDICT_INCOMPARABLE:	return "incomparable";
	case VERDICT_NONE:		break;
	}
	return "not-measured";
}

int
verdict_exit(enum verdict v)
{
	switch (v) {
	case VERDICT_IMPROVED:	return 0;
	case VERDICT_REGRESSED:	return 1;
	case VERDICT_NO_CHANGE:	return 5;
	default:		return 3;
	}
}

const char *
verdict_regime_name(enum verdict_regime r)
{
	return r == REGIME_HARDWARE ? "hardware" : r == REGIME_SOFTWARE ?
	    "software" : "unknown";
}

enum verdict_regime
verdict_regime_parse(const char *s)
{
	if (s != NULL && strcmp(s, "hardware") == 0)
		return REGIME_HARDWARE;
	if (s != NULL && strcmp(s, "software") == 0)
		return REGIME_SOFTWARE;
	return REGIME_UNKNOWN;
}

/* The noise rule: |Δ| past both the pooled floor and 1 % of before. */
static enum verdict
past_noise(struct verdict_line *l)
{
	l->pooled = l->floor_before + l->floor_after;
	l->threshold = fmax(l->pooled, VERDICT_MIN_CHANGE * fabs(l->before));
	if (fabs(l->delta) > l->pooled &&
	    fabs(l->delta) > VERDICT_MIN_CHANGE * fabs(l->before))
		return l->delta < 0 ? VERDICT_IMPROVED : VERDICT_REGRESSED;
	return VERDICT_NO_CHANGE;
}

static void
metric(const struct verdict_series *a, const struct verdict_series *b,
    enum verdict_kind kind, enum verdict_regime regime,
    struct verdict_line *l)
{
	memset(l, 0, sizeof(*l));
	if (a->n == 0 || b->n == 0) {
		l->v = VERDICT_NONE;
		snprintf(l->why, sizeof(l->why), "%s", a->n ? "measured in the "
		    "before bench only" : b->n ? "measured in the after bench "
		    "only" : "measured in neither bench");
		return;
	}
	l->measured = 1;
	l->before = verdict_median(a->run, a->n);
	l->after = verdict_median(b->run, b->n);
	l->delta = l->after - l->before;
	l->floor_before = verdict_spread(a->run, a->n);
	l->floor_after = verdict_spread(b->run, b->n);
	if (kind == VERDICT_COUNTER) {
		l->unstable = l->floor_before != 0 || l->floor_after != 0;
		if (!l->unstable) {
			l->pooled = l->threshold = 0;
			l->v = l->delta < 0 ? VERDICT_IMPROVED : l->delta > 0 ?
			    VERDICT_REGRESSED : VERDICT_NO_CHANGE;
			snprintf(l->why, sizeof(l->why), "exact");
			return;
		}
		l->v = past_noise(l);
		snprintf(l->why, sizeof(l->why), "unstable: the runs "
		    "disagree, so it is judged against their spread like "
		    "timing");
		return;
	}
	l->v = past_noise(l);
	if (regime != REGIME_HARDWARE) {
		l->v = VERDICT_NOT_COMPARED;
		snprintf(l->why, sizeof(l->why), "%s regime: timing is "
		    "reported, never compared", verdict_regime_name(regime));
	} else if (a->n < 2 || b->n < 2) {
		l->v = VERDICT_NOT_COMPARED;
		snprintf(l->why, sizeof(l->why), "one run has no noise floor: "
		    "bench with --runs 2 or more");
	} else
		snprintf(l->why, sizeof(l->why), "|Δ| %s %.3g (pooled floor "
		    "%.3g, 1%% of before %.3g)", l->v == VERDICT_NO_CHANGE ?
		    "within" : "past", l->threshold, l->pooled,
		    VERDICT_MIN_CHANGE * fabs(l->before));
}

static size_t
say(char *out, size_t cap, size_t o, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static size_t
say(char *out, size_t cap, size_t o, const char *fmt, ...)
{
	va_list	ap;
	int	n;

	if (o >= cap)
		return o;
	va_start(ap, fmt);
	n = vsnprintf(out + o, cap - o, fmt, ap);
	va_end(ap);
	return n < 0 ? o : o + (size_t)n;
}

void
verdict_compare(const struct verdict_bench *a, const struct verdict_bench *b,
    struct verdict_result *out)
{
	static const int	 hw[] = { M_FRAME_MEDIAN, M_FRAME_P95 };
	static const int	 sw[] = { M_CALLS, M_TRIANGLES };
	const int		*set;
	size_t			 o = 0, cap = sizeof(out->why);
	int			 i, k, regressed = 0, improved = 0, measured = 0;
	enum verdict_regime	 regime;

	memset(out, 0, sizeof(*out));
	regime = a->regime == b->regime ? a->regime : REGIME_UNKNOWN;
	out->regime = regime;
	set = regime == REGIME_HARDWARE ? hw : sw;
	out->ndecided = 2;
	for (k = 0; k < 2; k++)
		out->decided_by[k] = set[k];
	for (i = 0; i < METRIC_N; i++)
		metric(&a->m[i], &b->m[i], verdict_metrics[i].kind, regime,
		    &out->m[i]);
	for (k = 0; k < out->ndecided; k++)
		out->m[set[k]].decisive = 1;

	if (strcmp(a->hash, b->hash) != 0) {
		out->overall = VERDICT_INCOMPARABLE;
		say(out->why, cap, 0, "the configurations differ (configHash "
		    "%.23s… ≠ %.23s…): another scene, frame count, warm-up, "
		    "runs, viewport, pixel ratio, clock or browser", a->hash,
		    b->hash);
		return;
	}
	if (a->regime != b->regime) {
		out->overall = VERDICT_INCOMPARABLE;
		say(out->why, cap, 0, "one bench ran in a %s regime, the other "
		    "in a %s one: timing never compares across regimes",
		    verdict_regime_name(a->regime),
		    verdict_regime_name(b->regime));
		return;
	}
	if (strcmp(a->gpu, b->gpu) != 0) {
		out->overall = VERDICT_INCOMPARABLE;
		say(out->why, cap, 0, "the GPUs differ (\"%.80s\" ≠ \"%.80s\"): "
		    "a comparison is between two benches of one machine",
		    a->gpu, b->gpu);
		return;
	}
	for (k = 0; k < out->ndecided; k++) {
		const struct verdict_line *l = &out->m[set[k]];

		if (l->v == VERDICT_REGRESSED)
			regressed++;
		else if (l->v == VERDICT_IMPROVED)
			improved++;
		if (l->v != VERDICT_NONE && l->v != VERDICT_NOT_COMPARED)
			measured++;
	}
	if (measured == 0) {
		out->overall = VERDICT_INCOMPARABLE;
		o = say(out->why, cap, 0, "nothing decisive was compared: ");
		for (k = 0; k < out->ndecided; k++)
			o = say(out->why, cap, o, "%s%s %s", k ? "; " : "",
			    verdict_metrics[set[k]].name,
			    out->m[set[k]].why);
		return;
	}
	out->overall = regressed ? VERDICT_REGRESSED : improved ?
	    VERDICT_IMPROVED : VERDICT_NO_CHANGE;
	o = say(out->why, cap, 0, "decided by %s (%s regime)",
	    regime == REGIME_HARDWARE ? "frame time" :
	    "draw calls and triangles", verdict_regime_name(regime));
	if (regressed && improved)
		o = say(out->why, cap, o, "; one of them improved and another "
		    "regressed: a trade the bench cannot weigh for the game");
	/* what moved another way than the verdict: reported, not decisive */
	for (i = 0; i < METRIC_N; i++) {
		const struct verdict_line *l = &out->m[i];

		if (l->decisive || (l->v != VERDICT_REGRESSED &&
		    l->v != VERDICT_IMPROVED))
			continue;
		if (l->v == out->overall)
			continue;
		o = say(out->why, cap, o, "; %s %s (%g → %g), reported, not "
		    "decisive", verdict_metrics[i].label,
		    l->v == VERDICT_REGRESSED ? "rose" : "fell", l->before,
		    l->after);
	}
	for (k = 0; k < out->ndecided; k++)
		if (out->m[set[k]].unstable) {
			o = say(out->why, cap, o, "; %s is unstable between "
			    "runs (the scene is not deterministic)",
			    verdict_metrics[set[k]].label);
		}
}

/* --- the configuration hash ----------------------------------------------- */

/* A string for the canonical text: control characters become spaces,
 * so no value can forge another line. */
static size_t
put_clean(char *out, size_t cap, size_t o, const char *key, const char *v)
{
	o = say(out, cap, o, "%s=", key);
	for (; v != NULL && *v; v++)
		o = say(out, cap, o, "%c", (unsigned char)*v < 0x20 ||
		    *v == 0x7f ? ' ' : *v);
	return say(out, cap, o, "\n");
}

int
verdict_config_text(const struct verdict_config *c, char *out, size_t cap)
{
	size_t	o = 0;

	o = say(out, cap, o, "sloptimize-bench-config/1\n");
	o = put_clean(out, cap, o, "scene", c->scene);
	o = say(out, cap, o, "frames=%d\nwarmup=%d\nruns=%d\n", c->frames,
	    c->warmup, c->runs);
	o = say(out, cap, o, "viewport=%dx%d\npixelRatio=%g\n", c->width,
	    c->height, c->pixel_ratio);
	o = put_clean(out, cap, o, "clock", c->clock);
	o = say(out, cap, o, "seed=%ld\n", c->seed);
	o = put_clean(out, cap, o, "browser", c->browser);
	return o < cap ? (int)o : -1;
}

int
verdict_config_hash(const struct verdict_config *c, char out[VERDICT_HASH_MAX])
{
	char	text[2048], hex[SHA256_HEX];
	uint8_t	d[SHA256_LEN];
	int	n;

	if ((n = verdict_config_text(c, text, sizeof(text))) < 0)
		return -1;
	sha256(text, (size_t)n, d);
	sha256_hex(d, hex);
	snprintf(out, VERDICT_HASH_MAX, "sha256:%s", hex);
	return 0;
}
