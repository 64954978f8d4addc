/*
 * impact — the ranking formula (impact.h, docs/ranking.md).
 */
#include <math.h>
#include <string.h>

#include "impact.h"

static int
is(const char *s, const char *lit)
{
	return s != NULL && strcmp(s, lit) == 0;
}

void
impact_compute(const struct impact_of *in, struct impact *out)
{
	double	excess = 0, freq, age;
	double	floor_ms = IMPACT_FLOOR_MS - IMPACT_BUDGET_MS;
	int	usermark = is(in->type, "usermark");

	out->age_ms = in->age_ms == IMPACT_NO_AGE ? IMPACT_UNKNOWN_AGE_MS :
	    in->age_ms < 0 ? 0 : in->age_ms;
	if (in->has_worst && isfinite(in->worst) &&
	    (in->unit == NULL || is(in->unit, "ms") || in->unit[0] == '\0'))
		excess = in->worst - IMPACT_BUDGET_MS;
	if (excess < 0)
		excess = 0;
	/* meaningful by definition: never less than the wake threshold */
	if ((usermark || is(in->type, "jitter")) && excess < floor_ms)
		excess = floor_ms;
	out->excess_ms = excess;

	freq = 1 + log10((double)(in->count > 0 ? in->count : 1));
	age = (double)out->age_ms;
	out->score = excess * freq / (1 + age / IMPACT_HALF_MS);

	if (is(in->status, "regressed"))
		out->tier = 0;
	else if (usermark && in->age_ms != IMPACT_NO_AGE &&
	    out->age_ms <= IMPACT_FRESH_MS)
		out->tier = 1;
	else
		out->tier = 2;
}

int
impact_cmp(const struct impact *a, const struct impact *b)
{
	if (a->tier != b->tier)
		return a->tier < b->tier ? -1 : 1;
	if (a->tier == 1 && a->age_ms != b->age_ms)
		return a->age_ms < b->age_ms ? -1 : 1;	/* newest press */
	if (a->score != b->score)
		return a->score > b->score ? -1 : 1;
	return 0;
}

const char *
impact_tier_name(int tier)
{
	switch (tier) {
	case 0:
		return "regressed";
	case 1:
		return "fresh usermark";
	default:
		return "impact";
	}
}
