/*
 * noise — a window's noise interval and a fix's verdict (see noise.h).
 *
 * The bootstrap is written so that another implementation can give the
 * same doubles: integer draws (xorshift32, modulo), medians that are
 * always one of the values (nearest rank), percentiles by nearest rank,
 * no floating-point arithmetic on the way.  page-runtime/fold.js does
 * the same steps; tests/ledger/indep_fold.py a third time, for the fixtures.
 *
 * Each resample is n values made of ceil(n / L) blocks of L consecutive
 * heartbeats starting at a uniformly drawn place (the last block cut),
 * and its median is found without sorting it: the values are ranked
 * once, a resample is a count per rank, and the median is the rank where
 * the running count reaches ceil(n / 2).  O(n) a resample.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "noise.h"

static uint32_t
xorshift32(uint32_t *s)
{
	uint32_t	x = *s;

	x ^= x << 13;
	x ^= x >> 17;
	x ^= x << 5;
	return *s = x;
}

struct ranked {
	double	v;
	size_t	i;
};

static int
ranked_cmp(const void *a, const void *b)
{
	const struct ranked	*x = a, *y = b;

	if (x->v != y->v)
		return x->v < y->v ? -1 : 1;
	return x->i < y->i ? -1 : x->i > y->i;
}

static int
double_cmp(const void *a, const void *b)
{
	double	x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

int
noise_interval(const double *v, size_t n, double *lo, double *hi)
{
	struct ranked	*rk = NULL;
	size_t		*pos = NULL, *cnt = NULL, L, span, k, b, i, r, cum, drawn;
	double		*sorted = NULL, *med = NULL;
	uint32_t	 seed = NOISE_SEED;
	int		 rc = -ENOMEM;

	if (n < NOISE_MIN)
		return -EINVAL;
	if ((rk = malloc(n * sizeof(*rk))) == NULL ||
	    (pos = malloc(n * sizeof(*pos))) == NULL ||
	    (cnt = malloc(n * sizeof(*cnt))) == NULL ||
	    (sorted = malloc(n * sizeof(*sorted))) == NULL ||
	    (med = malloc(NOISE_RESAMPLES * sizeof(*med))) == NULL)
		goto done;
	for (i = 0; i < n; i++) {
		rk[i].v = v[i];
		rk[i].i = i;
	}
	qsort(rk, n, sizeof(*rk), ranked_cmp);
	for (r = 0; r < n; r++) {
		sorted[r] = rk[r].v;
		pos[rk[r].i] = r;
	}
	for (L = 1; L * L * L < n; L++)
		;
	span = n - L + 1;
	k = (n + 1) / 2;
	for (b = 0; b < NOISE_RESAMPLES; b++) {
		memset(cnt, 0, n * sizeof(*cnt));
		for (drawn = 0; drawn < n; ) {
			size_t	s = xorshift32(&seed) % span, j;

			for (j = 0; j < L && drawn < n; j++, drawn++)
				cnt[pos[s + j]]++;
		}
		for (r = 0, cum = 0; r < n; r++)
			if ((cum += cnt[r]) >= k)
				break;
		med[b] = sorted[r];
	}
	qsort(med, NOISE_RESAMPLES, sizeof(*med), double_cmp);
	*lo = med[(NOISE_RESAMPLES * 25 + 999) / 1000 - 1];
	*hi = med[(NOISE_RESAMPLES * 975 + 999) / 1000 - 1];
	rc = 0;
done:
	free(rk);
	free(pos);
	free(cnt);
	free(sorted);
	free(med);
	return rc;
}

/* --- a fix's verdict --------------------------------------------------- */

static double
num_of(const cJSON *o, const char *name)
{
	const cJSON	*it = cJSON_GetObjectItemCaseSensitive(o, name);

	return cJSON_IsNumber(it) ? it->valuedouble : NAN;
}

/* The window's regime: as written; a window written before windows said
 * one, that has heartbeats, is "unknown"; none: NULL (no heartbeats). */
static const char *
regime_of(const cJSON *w)
{
	const cJSON	*r = cJSON_GetObjectItemCaseSensitive(w, "regime");
	const char	*s = cJSON_GetStringValue(r);

	if (s != NULL && (strcmp(s, "hardware") == 0 ||
	    strcmp(s, "software") == 0 || strcmp(s, "unknown") == 0))
		return s;
	if (r == NULL && num_of(w, "heartbeats") > 0)
		return "unknown";
	return NULL;
}

/* Heartbeats of the window's own regime (the ones its timings are). */
static double
timed_heartbeats(const cJSON *w, const char *regime)
{
	double	n = num_of(cJSON_GetObjectItemCaseSensitive(w, "regimes"),
		    regime);

	return isnan(n) ? num_of(w, "heartbeats") : n;
}

/* The window's p95 interval as [lo, hi], or 0. */
static int
interval_of(const cJSON *w, double *lo, double *hi)
{
	const cJSON	*i = cJSON_GetObjectItemCaseSensitive(w, "p95Interval");

	*lo = num_of(i, "lo");
	*hi = num_of(i, "hi");
	return !isnan(*lo) && !isnan(*hi);
}

static void
add_interval(cJSON *o, const char *name, int have, double lo, double hi)
{
	cJSON	*i;

	if (!have) {
		cJSON_AddNullToObject(o, name);
		return;
	}
	i = cJSON_AddObjectToObject(o, name);
	cJSON_AddNumberToObject(i, "lo", lo);
	cJSON_AddNumberToObject(i, "hi", hi);
}

static void
add_num_or_null(cJSON *o, const char *name, double v)
{
	if (isnan(v))
		cJSON_AddNullToObject(o, name);
	else
		cJSON_AddNumberToObject(o, name, v);
}

/* |x| rounded to `scale` (10, 100) with its sign: the same in every
 * language (no half-way rule depends on the sign). */
static double
round_to(double x, double scale)
{
	double	r = round(fabs(x) * scale) / scale;

	return x < 0 ? -r : r;
}

/* Is window w, named `name`, long enough?  0, or 1 with why written. */
static int
too_short(const cJSON *w, const char *name, const char *regime,
    const struct ledger_judge *j, char *why, size_t cap)
{
	double	n = timed_heartbeats(w, regime), ps = num_of(w, "playSeconds");

	if (isnan(n))
		n = 0;
	if (n >= j->min_heartbeats && (isnan(ps) || ps >= j->min_play_s))
		return 0;
	if (isnan(ps))
		snprintf(why, cap, "the %s window has %.0f heartbeats (its play "
		    "time was not recorded); a verdict needs %u: it is judged "
		    "again as the window grows", name, n, j->min_heartbeats);
	else
		snprintf(why, cap, "the %s window has %.0f heartbeats and %.0f s "
		    "of play; a verdict needs %u and %g s: it is judged again "
		    "as the window grows", name, n, floor(ps),
		    j->min_heartbeats, j->min_play_s);
	return 1;
}

cJSON *
noise_judge(const cJSON *before, const cJSON *after, int pending,
    const struct ledger_judge *jo)
{
	struct ledger_judge	 j = { LEDGER_JUDGE_HEARTBEATS,
				    LEDGER_JUDGE_PLAY_S,
				    LEDGER_JUDGE_EFFECT_PCT };
	const cJSON		*b = cJSON_IsObject(before) ? before : NULL;
	const cJSON		*a = cJSON_IsObject(after) ? after : NULL;
	const char		*rb = b ? regime_of(b) : NULL;
	const char		*ra = a ? regime_of(a) : NULL;
	const char		*verdict;
	double			 was = b ? num_of(b, "p95Ms") : NAN;
	double			 now = a ? num_of(a, "p95Ms") : NAN;
	double			 wlo = NAN, whi = NAN, nlo = NAN, nhi = NAN;
	int			 wi = b && interval_of(b, &wlo, &whi);
	int			 ni = a && interval_of(a, &nlo, &nhi);
	char			 why[512];
	int			 comparable;
	cJSON			*o, *needs;

	if (jo != NULL && jo->min_heartbeats > 0)
		j.min_heartbeats = jo->min_heartbeats;
	if (jo != NULL && jo->min_play_s > 0)
		j.min_play_s = jo->min_play_s;
	if (jo != NULL && jo->min_effect_pct > 0)
		j.min_effect_pct = jo->min_effect_pct;
	if ((o = cJSON_CreateObject()) == NULL)
		return NULL;

	if (pending) {
		verdict = "pending";
		snprintf(why, sizeof(why), "no build after the fix has run yet: "
		    "its after window is measured once one has");
	} else if (b == NULL) {
		verdict = "not-enough-evidence";
		snprintf(why, sizeof(why), "no before window: nothing to "
		    "compare with");
	} else if (a == NULL) {
		verdict = "not-enough-evidence";
		snprintf(why, sizeof(why), "no after window yet");
	} else if (rb == NULL || ra == NULL) {
		verdict = "not-enough-evidence";
		snprintf(why, sizeof(why), "the %s window has no heartbeats",
		    rb == NULL ? "before" : "after");
	} else if (strcmp(rb, "software") == 0 ||
	    strcmp(ra, "software") == 0) {
		verdict = "software";
		snprintf(why, sizeof(why), "%s on a software renderer: its "
		    "timings are not evidence of a fix (its counters are)",
		    strcmp(rb, ra) == 0 ? "both windows ran" :
		    strcmp(rb, "software") == 0 ? "the before window ran" :
		    "the after window ran");
	} else if (strcmp(rb, ra) != 0) {
		verdict = "incomparable";
		snprintf(why, sizeof(why), "the before window ran on %s, the "
		    "after window on %s: timings are compared like with like "
		    "only", rb, ra);
	} else if (too_short(a, "after", ra, &j, why, sizeof(why)) ||
	    too_short(b, "before", rb, &j, why, sizeof(why))) {
		verdict = "not-enough-evidence";
	} else if (isnan(was) || isnan(now)) {
		verdict = "not-enough-evidence";
		snprintf(why, sizeof(why), "the %s window has no p95",
		    isnan(was) ? "before" : "after");
	} else if (!wi || !ni) {
		verdict = "not-enough-evidence";
		snprintf(why, sizeof(why), "the %s window carries no noise "
		    "interval (written by an older sloptimize)",
		    !wi ? "before" : "after");
	} else {
		double	effect = j.min_effect_pct / 100 * fabs(was);

		if (nhi < wlo && was - now >= effect) {
			verdict = "improved";
			snprintf(why, sizeof(why), "the after interval lies "
			    "wholly below the before interval, and the change "
			    "is at least %g %% of before", j.min_effect_pct);
		} else if (nlo > whi && now - was >= effect) {
			verdict = "regressed";
			snprintf(why, sizeof(why), "the after interval lies "
			    "wholly above the before interval, and the change "
			    "is at least %g %% of before", j.min_effect_pct);
		} else if (nhi >= wlo && nlo <= whi) {
			verdict = "no-detectable-change";
			snprintf(why, sizeof(why), "the intervals overlap: the "
			    "difference is inside the noise");
		} else {
			verdict = "no-detectable-change";
			snprintf(why, sizeof(why), "the change is under %g %% "
			    "of before", j.min_effect_pct);
		}
	}
	cJSON_AddStringToObject(o, "verdict", verdict);
	cJSON_AddStringToObject(o, "metric", "p95Ms");
	add_num_or_null(o, "was", was);
	add_interval(o, "wasInterval", wi, wlo, whi);
	add_num_or_null(o, "now", now);
	add_interval(o, "nowInterval", ni, nlo, nhi);
	/* a difference only between windows timed alike, and not on a
	 * software renderer: anything else is no difference at all */
	comparable = rb != NULL && ra != NULL && strcmp(rb, ra) == 0 &&
	    strcmp(rb, "software") != 0 && !isnan(was) && !isnan(now);
	add_num_or_null(o, "deltaMs", comparable ? round_to(now - was, 100) :
	    NAN);
	add_num_or_null(o, "deltaPct", comparable && was != 0 ?
	    round_to((now - was) / was * 100, 10) : NAN);
	if (rb != NULL && ra != NULL && strcmp(rb, ra) == 0)
		cJSON_AddStringToObject(o, "regime", rb);
	else
		cJSON_AddNullToObject(o, "regime");
	cJSON_AddStringToObject(o, "reason", why);
	needs = cJSON_AddObjectToObject(o, "needs");
	cJSON_AddNumberToObject(needs, "heartbeats", j.min_heartbeats);
	cJSON_AddNumberToObject(needs, "playSeconds", j.min_play_s);
	cJSON_AddNumberToObject(needs, "effectPct", j.min_effect_pct);
	return o;
}
