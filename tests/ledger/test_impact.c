/*
 * test_impact — ledger/impact: the ranking of docs/ranking.md.  Each case
 * is one sentence of that page: what must rank above what.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "ledger/impact.h"

#define MIN	(60 * 1000)

static struct impact
of(const char *type, const char *status, double worst, const char *unit,
    uint64_t count, int64_t age_ms)
{
	struct impact_of	in = { type, status, worst, unit, 1, count,
				    age_ms };
	struct impact		im;

	impact_compute(&in, &im);
	return im;
}

/* The example: a 33 ms cause seen often must not bury a 164 ms
 * one, even one seen once a few minutes earlier. */
static void
impact_long_frame_beats_a_frequent_short_one(void **state)
{
	struct impact	often = of("hitch", "open", 33, "ms", 1000, 0);
	struct impact	once = of("hitch", "open", 164, "ms", 1, 5 * MIN);

	(void)state;
	assert_true(impact_cmp(&once, &often) < 0);
	/* but count does matter: the same 164 ms cause seen 20 times ranks
	 * above it seen once */
	{
		struct impact	twenty = of("hitch", "open", 164, "ms", 20,
				    5 * MIN);

		assert_true(impact_cmp(&twenty, &once) < 0);
	}
}

/* The usermark just pressed outranks every cause that is not a
 * regression, however bad; a regression outranks it. */
static void
impact_fresh_usermark_then_regressions_first(void **state)
{
	struct impact	mark = of("usermark", "open", 25, "ms", 1, 10 * 1000);
	struct impact	huge = of("hitch", "open", 900, "ms", 500, 0);
	struct impact	reg = of("hitch", "regressed", 33, "ms", 1, 50 * MIN);
	struct impact	old_mark = of("usermark", "open", 25, "ms", 1,
			    2 * 60 * MIN);
	struct impact	newer = of("usermark", "open", 25, "ms", 1, 1000);

	(void)state;
	assert_int_equal(mark.tier, 1);
	assert_true(impact_cmp(&mark, &huge) < 0);
	assert_true(impact_cmp(&reg, &mark) < 0);
	assert_true(impact_cmp(&reg, &huge) < 0);
	/* newest press first */
	assert_true(impact_cmp(&newer, &mark) < 0);
	/* a press from two hours ago is ranked by impact like the rest: its
	 * frame under the bar counts as the threshold's hitch */
	assert_int_equal(old_mark.tier, 2);
	assert_true(old_mark.excess_ms == IMPACT_FLOOR_MS - IMPACT_BUDGET_MS);
}

/* Recent beats old at the same size; nothing decays to zero. */
static void
impact_recency(void **state)
{
	struct impact	now = of("hitch", "open", 120, "ms", 3, 0);
	struct impact	day = of("hitch", "open", 120, "ms", 3,
			    24 * 60 * MIN);
	struct impact	none = of("hitch", "open", 120, "ms", 3, IMPACT_NO_AGE);

	(void)state;
	assert_true(impact_cmp(&now, &day) < 0);
	assert_true(day.score > 0);
	assert_true(none.score == day.score);	/* no time: counted as a day */
	assert_int_equal(none.tier, 2);
}

/* Jitter has no frame time: it counts as the threshold's hitch.  A frame
 * inside the budget has no excess. */
static void
impact_units_and_budget(void **state)
{
	struct impact	jit = of("jitter", "open", 0.67, "units", 1, 0);
	struct impact	fast = of("hitch", "open", 12, "ms", 50, 0);

	(void)state;
	assert_true(jit.excess_ms == IMPACT_FLOOR_MS - IMPACT_BUDGET_MS);
	assert_true(fast.excess_ms == 0 && fast.score == 0);
	assert_true(impact_cmp(&jit, &fast) < 0);
	assert_string_equal(impact_tier_name(0), "regressed");
	assert_string_equal(impact_tier_name(1), "fresh usermark");
	assert_string_equal(impact_tier_name(2), "impact");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(impact_long_frame_beats_a_frequent_short_one),
		cmocka_unit_test(impact_fresh_usermark_then_regressions_first),
		cmocka_unit_test(impact_recency),
		cmocka_unit_test(impact_units_and_budget),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
