/*
 * render — the fold's answers as JSON (docs/json.md): the catalogue, one
 * issue, the timeline, measured windows.  Each shape has one serializer;
 * the element builders (a row, a bucket, a window) are shared by the two
 * ways out:
 *
 * - as one cJSON tree (ledger_*_json), for the daemon's routes and the
 *   CLI's tables;
 * - streamed to a sink (ledger_*_write): the envelope is printed by cJSON
 *   with its big arrays empty, and the elements are built, printed and
 *   freed one at a time in between, indented as cJSON would have indented
 *   them inside the envelope.  The bytes are those of cJSON_Print of the
 *   whole tree; the memory is one element's.
 *
 * Timeline medians come from the packed samples (samples.h), exactly.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ledger.h"
#include "ledger_impl.h"
#include "noise.h"

static void
add_time(cJSON *o, const char *name, int64_t ms)
{
	char	iso[32];

	if (ms == LEDGER_NO_TIME) {
		cJSON_AddNullToObject(o, name);
		return;
	}
	iso_format_ms(ms, iso);
	cJSON_AddStringToObject(o, name, iso);
}

static void
add_num(cJSON *o, const char *name, double v)
{
	if (isnan(v))
		cJSON_AddNullToObject(o, name);
	else
		cJSON_AddNumberToObject(o, name, v);
}

cJSON *
ledger_situation_json(const char *ctx)
{
	cJSON		*o = cJSON_CreateObject();
	const char	*p = ctx;

	if (o == NULL || ctx == NULL)
		return o;
	while (*p != '\0') {
		const char	*end = strchr(p, ','), *eq;
		size_t		 n = end ? (size_t)(end - p) : strlen(p);
		char		 k[256], v[256];

		eq = memchr(p, '=', n);
		if (eq != NULL && eq > p && (size_t)(eq - p) < sizeof(k) &&
		    n - (size_t)(eq - p) - 1 < sizeof(v)) {
			memcpy(k, p, (size_t)(eq - p));
			k[eq - p] = '\0';
			memcpy(v, eq + 1, n - (size_t)(eq - p) - 1);
			v[n - (size_t)(eq - p) - 1] = '\0';
			cJSON_DeleteItemFromObjectCaseSensitive(o, k);
			cJSON_AddStringToObject(o, k, v);
		}
		p += n;
		if (*p == ',')
			p++;
	}
	return o;
}

const char *
fix_state_name(enum fix_state s)
{
	switch (s) {
	case FIX_APPLIED: return "applied";
	case FIX_PROPOSED: return "proposed";
	case FIX_MERGED: return "merged";
	case FIX_REJECTED: return "rejected";
	default: return NULL;
	}
}

static cJSON	*build_window_json(struct ledger *, uint32_t);

/*
 * How a fix's after window came to be: "written" (the record carries it),
 * "fold" (measured here, on the first build after the fix with
 * heartbeats), or null while it is pending.  Only fixes that count are
 * judged by the fold; a proposal's windows are as written.
 */
static void
fix_after_json(cJSON *o, struct ledger *l, const struct fix *fx, int pending)
{
	uint32_t	 ev;
	cJSON		*w = NULL;

	cJSON_DeleteItemFromObjectCaseSensitive(o, "pending");
	cJSON_DeleteItemFromObjectCaseSensitive(o, "afterSource");
	cJSON_AddBoolToObject(o, "pending", pending);
	if (fx->has_after) {
		cJSON_AddStringToObject(o, "afterSource", "written");
		return;
	}
	if (!fix_counts(fx)) {
		cJSON_AddNullToObject(o, "afterSource");
		return;
	}
	ev = fix_evidence(l, fx);
	if (ev != NO_BUILD && (l->opts.want_timeline || l->builds[ev].watched) &&
	    l->builds[ev].nhb + l->builds[ev].nhp > 0)
		w = build_window_json(l, ev);
	cJSON_DeleteItemFromObjectCaseSensitive(o, "after");
	if (w != NULL) {
		cJSON_AddItemToObject(o, "after", w);
		cJSON_AddStringToObject(o, "afterSource", "fold");
	} else {
		cJSON_AddNullToObject(o, "after");
		cJSON_AddNullToObject(o, "afterSource");
	}
}

/*
 * The after window, and the verdict on the two windows as they stand
 * (ledger/noise.h): every fix says whether its windows show a change past
 * the noise, whatever its status says of the footprint.
 */
static void
fix_judgement_json(cJSON *o, struct ledger *l, const struct fix *fx)
{
	int	pending = fix_counts(fx) && fix_pending(l, fx);

	fix_after_json(o, l, fx, pending);
	cJSON_DeleteItemFromObjectCaseSensitive(o, "judgement");
	cJSON_AddItemToObject(o, "judgement", noise_judge(
	    cJSON_GetObjectItemCaseSensitive(o, "before"),
	    cJSON_GetObjectItemCaseSensitive(o, "after"), pending,
	    &l->judge));
}

static cJSON *
fix_json(struct ledger *l, const struct fix *fx)
{
	cJSON		*o = cJSON_Duplicate(fx->rec, 1);
	const char	*st = fix_state_name(fx->state);
	uint32_t	 fb;

	if (o == NULL)
		return NULL;
	if (st != NULL) {
		cJSON_DeleteItemFromObjectCaseSensitive(o, "status");
		cJSON_AddStringToObject(o, "status", st);
	}
	cJSON_DeleteItemFromObjectCaseSensitive(o, "id");
	cJSON_AddStringToObject(o, "id", fx->id);
	cJSON_DeleteItemFromObjectCaseSensitive(o, "fixBuild");
	fb = fix_build(l, fx);
	if (fb != NO_BUILD)
		cJSON_AddStringToObject(o, "fixBuild", l->builds[fb].name);
	else if (fx->after_build != NULL)
		cJSON_AddStringToObject(o, "fixBuild", fx->after_build);
	else
		cJSON_AddNullToObject(o, "fixBuild");
	fix_judgement_json(o, l, fx);
	return o;
}

static cJSON *
row_json(struct ledger *l, const struct row *r, int64_t now_ms)
{
	cJSON		*o, *a, *fixes, *props, *v;
	uint32_t	 i;
	size_t		 k;

	if ((o = cJSON_CreateObject()) == NULL)
		return NULL;
	cJSON_AddStringToObject(o, "id", r->hex);
	cJSON_AddStringToObject(o, "key", r->key);
	cJSON_AddStringToObject(o, "type", r->type);
	if (r->phase)
		cJSON_AddStringToObject(o, "phase", r->phase);
	else
		cJSON_AddNullToObject(o, "phase");
	cJSON_AddNumberToObject(o, "count", (double)r->count);
	add_time(o, "first", r->first_ms);
	add_time(o, "last", r->last_ms);
	if (r->last_ms != LEDGER_NO_TIME)
		cJSON_AddNumberToObject(o, "lastAgoMs",
		    (double)(now_ms - r->last_ms));
	else
		cJSON_AddNullToObject(o, "lastAgoMs");
	a = cJSON_AddArrayToObject(o, "builds");
	for (i = 0; a != NULL && i < r->nbuilds; i++)
		cJSON_AddItemToArray(a,
		    cJSON_CreateString(l->builds[r->builds[i]].name));
	if (r->has_worst) {
		v = cJSON_AddObjectToObject(o, "worst");
		cJSON_AddNumberToObject(v, "value", r->worst);
		cJSON_AddStringToObject(v, "unit",
		    strcmp(r->type, "jitter") == 0 ? "units" : "ms");
		add_time(v, "at", r->worst_ms);
	} else
		cJSON_AddNullToObject(o, "worst");
	if (r->has_verdict) {
		v = cJSON_AddObjectToObject(o, "verdict");
		r->guess ? (void)cJSON_AddStringToObject(v, "guess",
		    r->guess) : (void)cJSON_AddNullToObject(v, "guess");
		r->conf ? (void)cJSON_AddStringToObject(v, "confidence",
		    r->conf) : (void)cJSON_AddNullToObject(v, "confidence");
		r->evid ? (void)cJSON_AddStringToObject(v, "evidence",
		    r->evid) : (void)cJSON_AddNullToObject(v, "evidence");
	} else
		cJSON_AddNullToObject(o, "verdict");
	cJSON_AddItemToObject(o, "situation",
	    ledger_situation_json(r->ctx ? r->ctx : ""));
	fixes = cJSON_AddArrayToObject(o, "fixes");
	props = cJSON_AddArrayToObject(o, "proposals");
	for (k = 0; k < l->nfixes; k++) {
		const struct fix	*fx = &l->fixes[k];

		if (!fix_names(fx, r->id))
			continue;
		if (fix_counts(fx))
			cJSON_AddItemToArray(fixes, fix_json(l, fx));
		else if (fx->state == FIX_PROPOSED ||
		    fx->state == FIX_REJECTED)
			cJSON_AddItemToArray(props, fix_json(l, fx));
	}
	cJSON_AddStringToObject(o, "status", row_status(l, r));
	return o;
}

static int
row_order(const void *a, const void *b)
{
	const struct row	*x = *(struct row *const *)a;
	const struct row	*y = *(struct row *const *)b;

	if (x->count != y->count)
		return x->count > y->count ? -1 : 1;
	if (x->last_ms != y->last_ms)
		return x->last_ms > y->last_ms ? -1 : 1;
	return x->id < y->id ? -1 : x->id > y->id;
}

static void
add_counts(cJSON *o, const struct ledger *l)
{
	cJSON	*c = cJSON_AddObjectToObject(o, "counts");

	cJSON_AddNumberToObject(c, "lines", (double)l->c.lines);
	cJSON_AddNumberToObject(c, "folded", (double)l->c.folded);
	cJSON_AddNumberToObject(c, "incidents", (double)l->c.incidents);
	cJSON_AddNumberToObject(c, "fixes", (double)l->c.fixes);
	cJSON_AddNumberToObject(c, "skipped", (double)l->c.skipped);
	cJSON_AddNumberToObject(c, "malformedFootprints",
	    (double)l->c.malformed_footprints);
	cJSON_AddNumberToObject(c, "rows", (double)l->c.rows);
	cJSON_AddNumberToObject(c, "builds", (double)l->c.builds);
}

cJSON *
ledger_skipped_json(const struct ledger *l)
{
	cJSON	*a = cJSON_CreateArray();
	size_t	 n = l->nskips < LEDGER_SKIPS_KEPT ? l->nskips :
		    LEDGER_SKIPS_KEPT, i;

	for (i = 0; a != NULL && i < n; i++) {
		const struct skip	*k = &l->skips[(l->nskips - n + i) %
					    LEDGER_SKIPS_KEPT];
		cJSON			*o = cJSON_CreateObject();

		cJSON_AddItemToArray(a, o);
		cJSON_AddStringToObject(o, "stream",
		    k->stream == LEDGER_PERF ? "perf" : "fixes");
		cJSON_AddNumberToObject(o, "offset", (double)k->offset);
		cJSON_AddNumberToObject(o, "length", (double)k->length);
		cJSON_AddStringToObject(o, "reason", k->reason);
	}
	return a;
}

static cJSON *
envelope(int64_t now_ms)
{
	cJSON	*o = cJSON_CreateObject();

	if (o == NULL)
		return NULL;
	cJSON_AddNumberToObject(o, "v", 1);
	add_time(o, "generatedAt", now_ms);
	return o;
}

/* --- the catalogue ---------------------------------------------------- */

/* The rows a query selects, in catalogue order, one at a time. */
struct issues_it {
	struct ledger			*l;
	const struct ledger_query	*q;
	int64_t				 now_ms;
	struct row			**sorted;
	size_t				 i, emitted;
};

static int
issues_begin(struct ledger *l, const struct ledger_query *q, int64_t now_ms,
    struct issues_it *it)
{
	it->l = l;
	it->q = q;
	it->now_ms = now_ms;
	it->i = it->emitted = 0;
	if ((it->sorted = malloc((l->nrows + 1) * sizeof(*it->sorted))) == NULL)
		return -ENOMEM;
	if (l->nrows > 0) {
		memcpy(it->sorted, l->rows, l->nrows * sizeof(*it->sorted));
		qsort(it->sorted, l->nrows, sizeof(*it->sorted), row_order);
	}
	return 0;
}

/* The next row's JSON; NULL at the end (*err 0) or without memory. */
static cJSON *
issues_next(struct issues_it *it, int *err)
{
	const struct ledger_query	*q = it->q;
	cJSON				*o;

	*err = 0;
	for (; it->i < it->l->nrows; it->i++) {
		const struct row	*r = it->sorted[it->i];

		if (q != NULL && q->type != NULL && strcmp(q->type, r->type))
			continue;
		if (q != NULL && q->status != NULL &&
		    strcmp(q->status, row_status(it->l, r)))
			continue;
		if (q != NULL && q->limit && it->emitted >= q->limit)
			break;
		it->i++;
		it->emitted++;
		if ((o = row_json(it->l, r, it->now_ms)) == NULL)
			*err = -ENOMEM;
		return o;
	}
	return NULL;
}

static void
issues_end(struct issues_it *it)
{
	free(it->sorted);
}

/* {v, generatedAt, counts, issues: [], skipped} and extra's members. */
static cJSON *
issues_envelope(const struct ledger *l, int64_t now_ms, const cJSON *extra)
{
	cJSON		*o;
	const cJSON	*it;

	if ((o = envelope(now_ms)) == NULL)
		return NULL;
	add_counts(o, l);
	cJSON_AddArrayToObject(o, "issues");
	cJSON_AddItemToObject(o, "skipped", ledger_skipped_json(l));
	cJSON_ArrayForEach(it, extra)
		cJSON_AddItemToObject(o, it->string, cJSON_Duplicate(it, 1));
	return o;
}

cJSON *
ledger_issues_json(struct ledger *l, const struct ledger_query *q,
    int64_t now_ms)
{
	struct issues_it	 it;
	cJSON			*o, *a, *row;
	int			 err = 0;

	if ((o = issues_envelope(l, now_ms, NULL)) == NULL)
		return NULL;
	if (issues_begin(l, q, now_ms, &it) != 0) {
		cJSON_Delete(o);
		return NULL;
	}
	a = cJSON_GetObjectItemCaseSensitive(o, "issues");
	while ((row = issues_next(&it, &err)) != NULL)
		cJSON_AddItemToArray(a, row);
	issues_end(&it);
	if (err) {
		cJSON_Delete(o);
		return NULL;
	}
	return o;
}

cJSON *
ledger_issue_json(struct ledger *l, const char *id, int64_t now_ms)
{
	uint32_t	 v;
	struct row	*r;
	cJSON		*o;

	if (footprint_parse_hex(id, strlen(id), &v) != 0 ||
	    (r = row_find(l, v)) == NULL)
		return NULL;
	if ((o = envelope(now_ms)) == NULL)
		return NULL;
	cJSON_AddItemToObject(o, "issue", row_json(l, r, now_ms));
	if (l->want_occ && v == l->occ_id)
		cJSON_AddItemReferenceToObject(o, "occurrences", l->occ);
	else
		cJSON_AddArrayToObject(o, "occurrences");
	return o;
}

/* --- timeline and windows --------------------------------------------- */

static const char *metric_names[NMETRICS] = {
	"p95Ms", "medianMs", "calls", "triangles", "programs"
};

/* Split [t0, t1] into n equal slices (the bucket rule of docs/json.md). */
static int64_t
slice_width(int64_t t0, int64_t t1, int n)
{
	int64_t	span = t1 - t0 + 1;

	return (span + n - 1) / n;
}

static void
add_summary(cJSON *o, size_t nhb, const double *med, size_t nhp,
    double worst)
{
	int	m;

	cJSON_AddNumberToObject(o, "heartbeats", (double)nhb);
	for (m = 0; m < NMETRICS; m++)
		add_num(o, metric_names[m], med[m]);
	if (nhb == 0 && nhp == 0)
		cJSON_AddNullToObject(o, "hitches");
	else
		cJSON_AddNumberToObject(o, "hitches", (double)nhp);
	add_num(o, "worstHitchMs", worst);
}

/*
 * Which regime a group's timings come from, given its heartbeats per
 * regime code: hardware when it has any (the only timings to trust),
 * else software, else unknown; -1 with no heartbeat.  The others' are
 * left out of the timings, never averaged in (docs/json.md, "Regimes").
 */
static int
pick_regime(const size_t *codes)
{
	if (codes[REGIME_HARDWARE] > 0)
		return REGIME_HARDWARE;
	if (codes[REGIME_SOFTWARE] > 0)
		return REGIME_SOFTWARE;
	if (codes[REGIME_UNKNOWN] + codes[REGIME_NONE] > 0)
		return REGIME_UNKNOWN;
	return -1;
}

/* Heartbeats of other regimes than the one picked? */
static int
regimes_mixed(const size_t *codes, int r)
{
	int	k;

	for (k = 0; k < SAMPLES_CODES; k++)
		if (k != r && codes[k] > 0 &&
		    !(r == REGIME_UNKNOWN && k == REGIME_NONE))
			return 1;
	return 0;
}

static void
add_regime(cJSON *o, const size_t *codes, int r)
{
	cJSON	*c;

	if (r < 0)
		cJSON_AddNullToObject(o, "regime");
	else
		cJSON_AddStringToObject(o, "regime", regime_name(r));
	if ((c = cJSON_AddObjectToObject(o, "regimes")) == NULL)
		return;
	cJSON_AddNumberToObject(c, "hardware", (double)codes[REGIME_HARDWARE]);
	cJSON_AddNumberToObject(c, "software", (double)codes[REGIME_SOFTWARE]);
	cJSON_AddNumberToObject(c, "unknown",
	    (double)(codes[REGIME_UNKNOWN] + codes[REGIME_NONE]));
}

/* q narrowed to heartbeats of regime r (q itself when none is left out). */
static struct sgroups
timed_query(const struct sgroups *q, int r, int mixed)
{
	struct sgroups	t = *q;

	if (r >= 0 && mixed) {
		t.ccol = HB_REGIME;
		t.codes = 1u << r | (r == REGIME_UNKNOWN ? 1u << REGIME_NONE :
		    0);
	}
	return t;
}

/* q narrowed to the hitches a window timed on regime r counts: those of
 * r and those that name no regime of their own. */
static struct sgroups
hitch_query(const struct sgroups *q, int r)
{
	struct sgroups	t = *q;

	if (r >= 0) {
		t.ccol = HP_REGIME;
		t.codes = 1u << r | 1u << REGIME_NONE;
	}
	return t;
}

/*
 * A measured window over the samples q selects: the build's when
 * `build` names one, else [from, to] (from/to are the window's span in
 * both cases).  The counters are medians over every heartbeat; the
 * timings (p95, median, the series, the hitches and the worst) over the
 * heartbeats and hitches of one regime; the p95's noise interval and the
 * play time from the same heartbeats.
 */
static cJSON *
window_json(struct ledger *l, const char *build, const struct sgroups *q,
    int64_t from, int64_t to)
{
	cJSON		*o = cJSON_CreateObject(), *a;
	double		 med[NMETRICS], tmed[2], series[SERIES_SLICES];
	double		 worst, secs, *vals = NULL, lo, hi;
	size_t		 codes[SAMPLES_CODES], nhb, nhp, nsecs, nv;
	struct sgroups	 tq, hq, sq;
	int		 k, r, mixed;

	if (o == NULL)
		return NULL;
	double		*mp[NMETRICS] = { &med[0], &med[1], &med[2], &med[3],
			    &med[4] }, *tp[2] = { &tmed[0], &tmed[1] },
			*sp[1] = { series };

	if (samples_codes(&l->hb, q, HB_REGIME, codes) != 0)
		goto fail;
	r = pick_regime(codes);
	mixed = r >= 0 && regimes_mixed(codes, r);
	tq = timed_query(q, r, mixed);
	hq = hitch_query(q, r);
	if (samples_medians(&l->hb, q, NMETRICS, mp) != 0 ||
	    (mixed && samples_medians(&l->hb, &tq, 2, tp) != 0))
		goto fail;
	if (mixed) {
		med[0] = tmed[0];
		med[1] = tmed[1];
	}
	if (samples_tally(&l->hb, q, 0, &nhb, NULL, NULL) != 0 ||
	    samples_tally(&l->hp, &hq, 0, &nhp, NULL, &worst) != 0 ||
	    samples_sum(&l->hb, &tq, HB_SECONDS, &secs, &nsecs) != 0)
		goto fail;
	if (build)
		cJSON_AddStringToObject(o, "build", build);
	else
		cJSON_AddNullToObject(o, "build");
	add_time(o, "from", from);
	add_time(o, "to", to);
	add_summary(o, nhb, med, nhp, worst);
	add_regime(o, codes, r);
	/* to 0.01 s; a sum that is no play time (negative, or past a
	 * double's range once in hundredths) comes only from a damaged
	 * checkpoint — the fold bounds each window — and is not measured */
	secs = round(secs * 100) / 100;
	if (nsecs == 0 || !(secs >= 0 && isfinite(secs)))
		cJSON_AddNullToObject(o, "playSeconds");
	else
		cJSON_AddNumberToObject(o, "playSeconds", secs);
	/* the p95's noise: its heartbeats in the order they came */
	if ((vals = malloc(NOISE_MAX * sizeof(*vals))) == NULL ||
	    samples_values(&l->hb, &tq, 0, vals, NOISE_MAX, &nv) != 0)
		goto fail;
	k = nv >= NOISE_MIN ? noise_interval(vals, nv, &lo, &hi) : -EINVAL;
	if (k == -ENOMEM)
		goto fail;
	if (k == 0) {
		cJSON	*i = cJSON_AddObjectToObject(o, "p95Interval");

		cJSON_AddNumberToObject(i, "lo", lo);
		cJSON_AddNumberToObject(i, "hi", hi);
	} else
		cJSON_AddNullToObject(o, "p95Interval");
	free(vals);
	vals = NULL;
	if ((a = cJSON_AddArrayToObject(o, "series")) == NULL)
		goto fail;
	if (nhb == 0 || from == LEDGER_NO_TIME)
		return o;
	/* p95 medians over 32 slices of [from, to], cut like buckets */
	sq = tq;
	sq.t0 = from;
	sq.width = slice_width(from, to, SERIES_SLICES);
	sq.ngroups = SERIES_SLICES;
	if (samples_medians(&l->hb, &sq, 1, sp) != 0)
		goto fail;
	for (k = 0; k < SERIES_SLICES; k++)
		cJSON_AddItemToArray(a, isnan(series[k]) ? cJSON_CreateNull() :
		    cJSON_CreateNumber(series[k]));
	return o;
fail:
	free(vals);
	cJSON_Delete(o);
	return NULL;
}

/* The window of build b. */
static cJSON *
build_window_json(struct ledger *l, uint32_t b)
{
	const struct build	*bd = &l->builds[b];
	struct sgroups		 q = { 1, b, SAMPLES_NO_TIME, SAMPLES_NO_TIME,
				    0, 0, 1, 0, 0 };

	return window_json(l, bd->name, &q, bd->ts_min, bd->ts_max);
}

/* The timeline's buckets, computed for all of them at once. */
struct timeline {
	int		  n;
	int64_t		  t0, w;
	size_t		 *nhb, *nhp;
	double		 *med[NMETRICS], *worst;
	uint32_t	**bl;		/* per bucket: its builds, sorted */
	size_t		 *nbl, *capbl;
	size_t		 *codes;	/* per bucket: heartbeats per regime */
	int		 *reg;		/* per bucket: its timings' regime */
};

static void
timeline_free(struct timeline *tl)
{
	int	k;

	for (k = 0; tl->bl != NULL && k < tl->n; k++)
		free(tl->bl[k]);
	for (k = 0; k < NMETRICS; k++)
		free(tl->med[k]);
	free(tl->nhb);
	free(tl->nhp);
	free(tl->worst);
	free(tl->bl);
	free(tl->nbl);
	free(tl->capbl);
	free(tl->codes);
	free(tl->reg);
	memset(tl, 0, sizeof(*tl));
}

/* Note that build b ran in bucket g (a short look back keeps the list
 * short: consecutive samples nearly always share their build). */
static int
timeline_note_build(void *arg, int g, uint32_t b)
{
	struct timeline	*tl = arg;
	size_t		 i, n = tl->nbl[g];

	if (b == NO_BUILD)
		return 0;
	for (i = n; i > 0 && n - i < 8; i--)
		if (tl->bl[g][i - 1] == b)
			return 0;
	if (n == tl->capbl[g]) {
		size_t		 cap = n ? n * 2 : 4;
		uint32_t	*nb = realloc(tl->bl[g], cap * sizeof(*nb));

		if (nb == NULL)
			return -ENOMEM;
		tl->bl[g] = nb;
		tl->capbl[g] = cap;
	}
	tl->bl[g][tl->nbl[g]++] = b;
	return 0;
}

static int
u32_cmp(const void *a, const void *b)
{
	uint32_t	x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/*
 * Each bucket's timings from one regime (pick_regime): where a bucket's
 * heartbeats all share one, the medians over every heartbeat are already
 * right; only the regimes of mixed buckets take another pass, and only
 * when a hitch names another regime than its bucket's are hitches
 * counted again.
 */
static int
timeline_regimes(struct ledger *l, const struct sgroups *q,
    struct timeline *tl)
{
	size_t		*hc = NULL, *cnt = NULL;
	double		*tm[2] = { NULL, NULL }, *worst = NULL;
	unsigned	 need = 0, hneed = 0;
	int		 n = tl->n, k, r, rc = -ENOMEM;

	if ((rc = samples_codes(&l->hb, q, HB_REGIME, tl->codes)) != 0)
		return rc;
	rc = -ENOMEM;
	if ((hc = calloc((size_t)n * SAMPLES_CODES, sizeof(*hc))) == NULL ||
	    (cnt = calloc((size_t)n, sizeof(*cnt))) == NULL ||
	    (worst = calloc((size_t)n, sizeof(*worst))) == NULL ||
	    (tm[0] = calloc((size_t)n, sizeof(double))) == NULL ||
	    (tm[1] = calloc((size_t)n, sizeof(double))) == NULL)
		goto done;
	if ((rc = samples_codes(&l->hp, q, HP_REGIME, hc)) != 0)
		goto done;
	for (k = 0; k < n; k++) {
		const size_t	*c = tl->codes + (size_t)k * SAMPLES_CODES;
		const size_t	*h = hc + (size_t)k * SAMPLES_CODES;
		int		 i;

		tl->reg[k] = r = pick_regime(c);
		if (r < 0)
			continue;
		if (regimes_mixed(c, r))
			need |= 1u << r;
		for (i = 0; i < SAMPLES_CODES; i++)
			if (h[i] > 0 && i != r && i != REGIME_NONE)
				hneed |= 1u << r;
	}
	for (r = 0; r < REGIME_NONE; r++) {
		struct sgroups	tq;

		if (need & 1u << r) {
			tq = timed_query(q, r, 1);
			if ((rc = samples_medians(&l->hb, &tq, 2, tm)) != 0)
				goto done;
			for (k = 0; k < n; k++)
				if (tl->reg[k] == r) {
					tl->med[0][k] = tm[0][k];
					tl->med[1][k] = tm[1][k];
				}
		}
		if (hneed & 1u << r) {
			tq = hitch_query(q, r);
			if ((rc = samples_tally(&l->hp, &tq, 0, cnt, NULL,
			    worst)) != 0)
				goto done;
			for (k = 0; k < n; k++)
				if (tl->reg[k] == r) {
					tl->nhp[k] = cnt[k];
					tl->worst[k] = worst[k];
				}
		}
	}
	rc = 0;
done:
	free(hc);
	free(cnt);
	free(worst);
	free(tm[0]);
	free(tm[1]);
	return rc;
}

static int
timeline_compute(struct ledger *l, int n, struct timeline *tl)
{
	struct sgroups	q = { 0, 0, SAMPLES_NO_TIME, SAMPLES_NO_TIME, 0, 0, 0,
			    0, 0 };
	size_t		i, o;
	int		k, m, rc = -ENOMEM;

	memset(tl, 0, sizeof(*tl));
	if (l->tmin == LEDGER_NO_TIME)
		return 0;		/* no bucket at all */
	tl->n = n;
	tl->t0 = l->tmin;
	tl->w = slice_width(l->tmin, l->tmax, n);
	q.t0 = tl->t0;
	q.width = tl->w;
	q.ngroups = n;
	if ((tl->nhb = calloc((size_t)n, sizeof(*tl->nhb))) == NULL ||
	    (tl->nhp = calloc((size_t)n, sizeof(*tl->nhp))) == NULL ||
	    (tl->worst = calloc((size_t)n, sizeof(*tl->worst))) == NULL ||
	    (tl->bl = calloc((size_t)n, sizeof(*tl->bl))) == NULL ||
	    (tl->nbl = calloc((size_t)n, sizeof(*tl->nbl))) == NULL ||
	    (tl->capbl = calloc((size_t)n, sizeof(*tl->capbl))) == NULL)
		goto fail;
	for (m = 0; m < NMETRICS; m++)
		if ((tl->med[m] = calloc((size_t)n, sizeof(double))) == NULL)
			goto fail;
	if ((tl->codes = calloc((size_t)n * SAMPLES_CODES,
	    sizeof(*tl->codes))) == NULL ||
	    (tl->reg = calloc((size_t)n, sizeof(*tl->reg))) == NULL)
		goto fail;
	if ((rc = samples_medians(&l->hb, &q, NMETRICS, tl->med)) != 0 ||
	    (rc = samples_tally(&l->hb, &q, 0, tl->nhb, NULL, NULL)) != 0 ||
	    (rc = samples_tally(&l->hp, &q, 0, tl->nhp, NULL,
	    tl->worst)) != 0 ||
	    (rc = timeline_regimes(l, &q, tl)) != 0 ||
	    (rc = samples_each_build(&l->hb, &q, timeline_note_build,
	    tl)) != 0 ||
	    (rc = samples_each_build(&l->hp, &q, timeline_note_build,
	    tl)) != 0)
		goto fail;
	for (k = 0; k < n; k++) {
		if (tl->nbl[k] > 1)
			qsort(tl->bl[k], tl->nbl[k], sizeof(uint32_t),
			    u32_cmp);
		for (i = o = 0; i < tl->nbl[k]; i++)
			if (i == 0 || tl->bl[k][i] != tl->bl[k][i - 1])
				tl->bl[k][o++] = tl->bl[k][i];
		tl->nbl[k] = o;
	}
	return 0;
fail:
	timeline_free(tl);
	return rc;
}

static cJSON *
bucket_json(const struct ledger *l, const struct timeline *tl, int k)
{
	cJSON	*o = cJSON_CreateObject(), *bb;
	double	 med[NMETRICS];
	size_t	 i;
	int	 m;

	if (o == NULL)
		return NULL;
	for (m = 0; m < NMETRICS; m++)
		med[m] = tl->med[m][k];
	add_time(o, "from", tl->t0 + k * tl->w);
	add_time(o, "to", tl->t0 + (k + 1) * tl->w);
	add_summary(o, tl->nhb[k], med, tl->nhp[k], tl->worst[k]);
	add_regime(o, tl->codes + (size_t)k * SAMPLES_CODES, tl->reg[k]);
	if ((bb = cJSON_AddArrayToObject(o, "builds")) == NULL) {
		cJSON_Delete(o);
		return NULL;
	}
	for (i = 0; i < tl->nbl[k]; i++)
		cJSON_AddItemToArray(bb, cJSON_CreateString(
		    l->builds[tl->bl[k][i]].name));
	return o;
}

/* The timeline's elements, one at a time: buckets, then one window per
 * build that has samples. */
struct history_it {
	struct ledger	*l;
	struct timeline	 tl;
	int		 k;
	size_t		 b;
};

static cJSON *
history_envelope(struct history_it *h, int64_t now_ms, const cJSON *extra)
{
	struct ledger	*l = h->l;
	cJSON		*o;
	const cJSON	*it;

	if ((o = envelope(now_ms)) == NULL)
		return NULL;
	add_time(o, "from", l->tmin);
	add_time(o, "to", l->tmax);
	cJSON_AddArrayToObject(o, "buckets");
	cJSON_AddArrayToObject(o, "builds");
	if (l->tmin == LEDGER_NO_TIME)
		cJSON_AddNullToObject(o, "bucketMs");
	else
		cJSON_AddNumberToObject(o, "bucketMs", (double)h->tl.w);
	cJSON_ArrayForEach(it, extra)
		cJSON_AddItemToObject(o, it->string, cJSON_Duplicate(it, 1));
	return o;
}

static int
history_begin(struct ledger *l, int nbuckets, struct history_it *h)
{
	h->l = l;
	h->k = 0;
	h->b = 0;
	return timeline_compute(l, nbuckets < 1 ? 24 : nbuckets, &h->tl);
}

/* Element i of array a (0: buckets, 1: builds); NULL at the end. */
static cJSON *
history_next(void *arg, int a, int *err)
{
	struct history_it	*h = arg;
	cJSON			*o = NULL;

	*err = 0;
	if (a == 0) {
		if (h->k >= h->tl.n)
			return NULL;
		o = bucket_json(h->l, &h->tl, h->k++);
	} else {
		while (h->b < h->l->nbuilds && h->l->builds[h->b].nhb +
		    h->l->builds[h->b].nhp == 0)
			h->b++;
		if (h->b >= h->l->nbuilds)
			return NULL;
		o = build_window_json(h->l, (uint32_t)h->b++);
	}
	if (o == NULL)
		*err = -ENOMEM;
	return o;
}

cJSON *
ledger_history_json(struct ledger *l, int nbuckets, int64_t now_ms)
{
	struct history_it	 h;
	cJSON			*o = NULL, *it;
	int			 a, err = 0;

	if (history_begin(l, nbuckets, &h) != 0 ||
	    (o = history_envelope(&h, now_ms, NULL)) == NULL)
		goto fail;
	for (a = 0; a < 2; a++) {
		cJSON	*arr = cJSON_GetObjectItemCaseSensitive(o,
			    a == 0 ? "buckets" : "builds");

		while ((it = history_next(&h, a, &err)) != NULL)
			cJSON_AddItemToArray(arr, it);
		if (err)
			goto fail;
	}
	timeline_free(&h.tl);
	return o;
fail:
	timeline_free(&h.tl);
	cJSON_Delete(o);
	return NULL;
}

cJSON *
ledger_window_json(struct ledger *l, const char *spec, int after,
    const char **err)
{
	const char	*dots;
	uint32_t	 b = NO_BUILD;
	int64_t		 from, to;
	size_t		 i;
	cJSON		*o;

	*err = NULL;
	if (spec == NULL || *spec == '\0') {
		uint32_t	latest = NO_BUILD, prev = NO_BUILD;

		/* builds with heartbeat evidence, newest last */
		for (i = l->nbuilds; i > 0; i--) {
			if (l->builds[i - 1].nhb == 0)
				continue;
			if (latest == NO_BUILD)
				latest = (uint32_t)(i - 1);
			else {
				prev = (uint32_t)(i - 1);
				break;
			}
		}
		b = after ? latest : prev;
		if (b == NO_BUILD) {
			*err = after ? "no build has heartbeats yet" :
			    "no earlier build with heartbeats to compare with";
			return NULL;
		}
	} else if ((dots = strstr(spec, "..")) != NULL) {
		struct sgroups	q = { 0, 0, 0, 0, 0, 0, 1, 0, 0 };

		if (iso_parse_ms(spec, (size_t)(dots - spec), &from) ||
		    iso_parse_ms(dots + 2, strlen(dots + 2), &to) || to < from) {
			*err = "a window is <ISO>..<ISO> with from <= to";
			return NULL;
		}
		q.from = from;
		q.to = to;
		if ((o = window_json(l, NULL, &q, from, to)) == NULL) {
			*err = "out of memory";
			return NULL;
		}
		return o;
	} else {
		for (i = 0; i < l->nbuilds; i++)
			if (strcmp(l->builds[i].name, spec) == 0)
				b = (uint32_t)i;
		if (b == NO_BUILD) {
			*err = "no such build in the ledger";
			return NULL;
		}
	}
	if ((o = build_window_json(l, b)) == NULL)
		*err = "out of memory";
	return o;
}

/* --- streamed output -------------------------------------------------- */

struct out {
	ledger_sink_fn	 sink;
	void		*arg;
	char		*buf;		/* one element, printed */
	size_t		 cap;
	char		*ind;		/* and indented */
	size_t		 icap;
};

/* cJSON_Print into the reusable buffer (cJSON wants a few bytes of
 * room over the text: it is grown until the print fits). */
static const char *
out_print(struct out *w, const cJSON *item)
{
	for (;;) {
		if (w->buf != NULL &&
		    cJSON_PrintPreallocated((cJSON *)item, w->buf, (int)w->cap,
		    1))
			return w->buf;
		if (w->cap > (size_t)1 << 30)
			return NULL;
		free(w->buf);
		w->cap = w->cap ? w->cap * 2 : 64 * 1024;
		if ((w->buf = malloc(w->cap)) == NULL) {
			w->cap = 0;
			return NULL;
		}
	}
}

/* Write text with `depth` tabs after each newline: the indentation an
 * element printed on its own lacks inside the envelope (cJSON escapes
 * newlines inside strings, so every newline is layout). */
static int
out_indented(struct out *w, const char *text, int depth)
{
	size_t	n = strlen(text), lines = 0, i, o = 0;

	for (i = 0; i < n; i++)
		lines += text[i] == '\n';
	if (n + lines * (size_t)depth + 1 > w->icap) {
		size_t	 cap = n + lines * (size_t)depth + 1;
		char	*p = realloc(w->ind, cap);

		if (p == NULL)
			return -ENOMEM;
		w->ind = p;
		w->icap = cap;
	}
	for (i = 0; i < n; i++) {
		w->ind[o++] = text[i];
		if (text[i] == '\n') {
			memset(w->ind + o, '\t', (size_t)depth);
			o += (size_t)depth;
		}
	}
	return w->sink(w->arg, w->ind, o);
}

typedef cJSON	*(*element_fn)(void *, int, int *);

/*
 * Print `env` through the sink, where each of its top-level arrays named
 * in `names` (empty in env, in this order) gets the elements next()
 * produces for it, printed one at a time.
 */
static int
stream(const cJSON *env, const char *const *names, int nnames,
    element_fn next, void *narg, ledger_sink_fn sink, void *sarg)
{
	struct out	 w = { sink, sarg, NULL, 0, NULL, 0 };
	char		*text = cJSON_Print(env), needle[64];
	const char	*cur = text, *at;
	int		 a, rc = 0;
	size_t		 i;

	if (text == NULL)
		return -ENOMEM;
	for (a = 0; a < nnames && rc == 0; a++) {
		cJSON	*item;
		int	 err = 0;

		snprintf(needle, sizeof(needle), "\n\t\"%s\":\t[]", names[a]);
		if ((at = strstr(cur, needle)) == NULL) {
			rc = -EINVAL;
			break;
		}
		at += strlen(needle) - 1;	/* at the ']' */
		if ((rc = sink(sarg, cur, (size_t)(at - cur))) != 0)
			break;
		cur = at;
		for (i = 0; rc == 0 && (item = next(narg, a, &err)) != NULL;
		    i++) {
			const char	*s = out_print(&w, item);

			if (s == NULL)
				rc = -ENOMEM;
			else if (i > 0 && (rc = sink(sarg, ", ", 2)) != 0)
				;
			else
				rc = out_indented(&w, s, 2);
			cJSON_Delete(item);
		}
		if (rc == 0)
			rc = err;
	}
	if (rc == 0)
		rc = sink(sarg, cur, strlen(cur));
	free(text);
	free(w.buf);
	free(w.ind);
	return rc;
}

static cJSON *
issues_elem(void *arg, int a, int *err)
{
	(void)a;
	return issues_next(arg, err);
}

int
ledger_issues_write(struct ledger *l, const struct ledger_query *q,
    int64_t now_ms, const cJSON *extra, ledger_sink_fn sink, void *arg)
{
	static const char *const names[] = { "issues" };
	struct issues_it	 it;
	cJSON			*env;
	int			 rc;

	if ((env = issues_envelope(l, now_ms, extra)) == NULL)
		return -ENOMEM;
	if ((rc = issues_begin(l, q, now_ms, &it)) == 0) {
		rc = stream(env, names, 1, issues_elem, &it, sink, arg);
		issues_end(&it);
	}
	cJSON_Delete(env);
	return rc;
}

int
ledger_history_write(struct ledger *l, int nbuckets, int64_t now_ms,
    const cJSON *extra, ledger_sink_fn sink, void *arg)
{
	static const char *const names[] = { "buckets", "builds" };
	struct history_it	 h;
	cJSON			*env;
	int			 rc;

	if ((rc = history_begin(l, nbuckets, &h)) != 0)
		return rc;
	if ((env = history_envelope(&h, now_ms, extra)) == NULL)
		rc = -ENOMEM;
	else
		rc = stream(env, names, 2, history_next, &h, sink, arg);
	cJSON_Delete(env);
	timeline_free(&h.tl);
	return rc;
}

int
ledger_sink_file(void *file, const void *data, size_t len)
{
	return len == 0 || fwrite(data, 1, len, file) == len ? 0 : -EIO;
}
