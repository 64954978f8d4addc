/*
 * impact — how much an issue matters now: the one ranking that
 * `sloptimize report`, `hook-status` and the wake lines' held-back lists
 * use (docs/ranking.md has the formula and why).  Pure arithmetic on a
 * row's numbers; no I/O, no clock of its own.
 *
 *   tier 0  regressed: a fix that did not hold comes first, always;
 *   tier 1  a usermark pressed within IMPACT_FRESH_MS: a person just said
 *           it felt wrong — newest press first;
 *   tier 2  the rest, by score.
 *
 *   score = excess × (1 + log10(count)) / (1 + age / IMPACT_HALF_MS)
 *
 * where excess is how far past the frame budget (IMPACT_BUDGET_MS) the
 * worst occurrence went.  A usermark or a jitter counts at least as a
 * hitch at the wake threshold (IMPACT_FLOOR_MS): both are meaningful by
 * definition, a jitter has no frame time and a usermark's worst frame may
 * sit under the hitch bar (that is why someone pressed).  Frequency grows
 * the score by its order of magnitude, not linearly, so a 33 ms cause
 * seen a thousand times (excess 16 ms × 4) does not bury a 164 ms one
 * seen once (147 ms × 1).
 */
#ifndef LEDGER_IMPACT_H
#define LEDGER_IMPACT_H

#include <stdint.h>

#define IMPACT_BUDGET_MS	16.7	/* one frame at 60 fps */
#define IMPACT_FLOOR_MS		100.0	/* the wake threshold's hitch */
#define IMPACT_HALF_MS		(30.0 * 60 * 1000)	/* age that halves */
#define IMPACT_FRESH_MS		(10 * 60 * 1000)	/* a usermark is news */
#define IMPACT_UNKNOWN_AGE_MS	(24 * 60 * 60 * 1000)	/* no `at`: old */
#define IMPACT_NO_AGE		INT64_MIN

struct impact_of {
	const char	*type;		/* "hitch", "usermark", "jitter", … */
	const char	*status;	/* "open", "fixed", "regressed"; NULL */
	double		 worst;		/* the worst value */
	const char	*unit;		/* "ms" or "units"; NULL */
	int		 has_worst;
	uint64_t	 count;
	int64_t		 age_ms;	/* since the last occurrence;
					   IMPACT_NO_AGE when unknown */
};

struct impact {
	int		 tier;		/* 0, 1, 2: lower ranks first */
	double		 score;		/* within tiers 0 and 2 */
	double		 excess_ms;	/* past the budget, after the floor */
	int64_t		 age_ms;	/* as given, or IMPACT_UNKNOWN_AGE_MS */
};

/* Can't fail. */
void	impact_compute(const struct impact_of *in, struct impact *out);

/* < 0 when a ranks before b, > 0 after, 0 when they tie (the caller
 * breaks ties, e.g. by count then id). */
int	impact_cmp(const struct impact *a, const struct impact *b);

/* "regressed", "fresh usermark" or "impact": why a row ranks where it
 * does, for --json.  Can't fail. */
const char *impact_tier_name(int tier);

#endif
