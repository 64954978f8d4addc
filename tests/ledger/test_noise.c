/*
 * noise: a window's noise interval is reproducible and the one
 * tests/ledger/indep_fold.py computes on its own; a fix's verdict follows
 * docs/json.md "Fix verdicts" case by case (the cases are data: before,
 * after, pending, the verdict and the start of its reason); a folded
 * record says which regime its timing ran on.
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "ledger/ledger.h"
#include "ledger/noise.h"

static void
noise_interval_is_fixed(void **state)
{
	/* tests/ledger/indep_fold.py bootstrap_interval gives these too */
	static const double	v[] = {
		20, 22, 19, 25, 30, 21, 23, 24, 18, 26, 28, 27
	};
	double	lo, hi, lo2, hi2, c[40], w[100];
	int	i;

	(void)state;
	assert_int_equal(noise_interval(v, 12, &lo, &hi), 0);
	assert_true(lo == 21 && hi == 26);
	assert_int_equal(noise_interval(v, 12, &lo2, &hi2), 0);
	assert_true(lo == lo2 && hi == hi2);		/* the same, again */
	for (i = 0; i < 100; i++)
		w[i] = (double)(i % 7) + 10;
	assert_int_equal(noise_interval(w, 100, &lo, &hi), 0);
	assert_true(lo == 12 && hi == 13);
	for (i = 0; i < 40; i++)
		c[i] = 16.7;
	assert_int_equal(noise_interval(c, 40, &lo, &hi), 0);
	assert_true(lo == 16.7 && hi == 16.7);		/* no noise: none */
	assert_int_equal(noise_interval(v, NOISE_MIN - 1, &lo, &hi), -EINVAL);
}

/* A window as a JSON text: regime, heartbeats of it, play, p95, interval. */
static cJSON *
win(const char *regime, int n, double play, double p95, double lo, double hi)
{
	char	text[512];

	if (regime == NULL)
		return NULL;
	snprintf(text, sizeof(text), "{\"regime\":\"%s\",\"heartbeats\":%d,"
	    "\"regimes\":{\"%s\":%d},\"playSeconds\":%g,\"p95Ms\":%g,"
	    "\"p95Interval\":{\"lo\":%g,\"hi\":%g}}", regime, n, regime, n,
	    play, p95, lo, hi);
	return cJSON_Parse(text);
}

static void
noise_judge_cases(void **state)
{
	static const struct {
		const char	*br;		/* before: regime, NULL none */
		int		 bn;
		double		 bp, bv, blo, bhi;
		const char	*ar;
		int		 an;
		double		 ap, av, alo, ahi;
		int		 pending;
		const char	*verdict, *reason;
		int		 delta;		/* deltaMs given */
	} t[] = {
		{ "hardware", 40, 120, 95, 90, 100, "hardware", 40, 120, 60,
		    58, 62, 0, "improved", "the after interval lies wholly "
		    "below", 1 },
		{ "hardware", 40, 120, 60, 58, 62, "hardware", 40, 120, 95,
		    90, 100, 0, "regressed", "the after interval lies wholly "
		    "above", 1 },
		/* the no-op: −17 % on the medians, inside the noise */
		{ "hardware", 40, 120, 95, 70, 110, "hardware", 40, 120, 79,
		    64, 96, 0, "no-detectable-change", "the intervals overlap",
		    1 },
		/* past the noise, under the minimum effect */
		{ "hardware", 40, 120, 95, 94, 96, "hardware", 40, 120, 91,
		    90, 92, 0, "no-detectable-change", "the change is under "
		    "10 %", 1 },
		{ "hardware", 40, 120, 95, 90, 100, "hardware", 12, 36, 60,
		    58, 62, 0, "not-enough-evidence", "the after window has 12 "
		    "heartbeats and 36 s of play; a verdict needs 30 and 60 s",
		    1 },
		{ "hardware", 40, 20, 95, 90, 100, "hardware", 40, 120, 60,
		    58, 62, 0, "not-enough-evidence", "the before window has 40 "
		    "heartbeats and 20 s", 1 },
		{ "software", 40, 120, 95, 90, 100, "software", 40, 120, 60,
		    58, 62, 0, "software", "both windows ran on a software "
		    "renderer", 0 },
		{ "hardware", 40, 120, 95, 90, 100, "software", 40, 120, 60,
		    58, 62, 0, "software", "the after window ran on a software "
		    "renderer", 0 },
		{ "hardware", 40, 120, 95, 90, 100, "unknown", 40, 120, 60,
		    58, 62, 0, "incomparable", "the before window ran on "
		    "hardware, the after window on unknown", 0 },
		{ "unknown", 40, 120, 95, 90, 100, "unknown", 40, 120, 60,
		    58, 62, 0, "improved", "the after interval", 1 },
		{ "hardware", 40, 120, 95, 90, 100, NULL, 0, 0, 0, 0, 0, 1,
		    "pending", "no build after the fix has run yet", 0 },
		{ NULL, 0, 0, 0, 0, 0, "hardware", 40, 120, 60, 58, 62, 0,
		    "not-enough-evidence", "no before window", 0 },
	};
	size_t	i;

	(void)state;
	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		cJSON		*b = win(t[i].br, t[i].bn, t[i].bp, t[i].bv,
				    t[i].blo, t[i].bhi);
		cJSON		*a = win(t[i].ar, t[i].an, t[i].ap, t[i].av,
				    t[i].alo, t[i].ahi);
		cJSON		*j = noise_judge(b, a, t[i].pending, NULL);
		const char	*v = cJSON_GetStringValue(
				    cJSON_GetObjectItem(j, "verdict"));
		const char	*r = cJSON_GetStringValue(
				    cJSON_GetObjectItem(j, "reason"));

		if (v == NULL || strcmp(v, t[i].verdict) != 0 || r == NULL ||
		    strncmp(r, t[i].reason, strlen(t[i].reason)) != 0)
			fail_msg("case %zu: %s (%s), want %s (%s…)", i,
			    v ? v : "-", r ? r : "-", t[i].verdict,
			    t[i].reason);
		if (cJSON_IsNumber(cJSON_GetObjectItem(j, "deltaMs")) !=
		    t[i].delta)
			fail_msg("case %zu: deltaMs %s", i, t[i].delta ?
			    "missing" : "given between unlike windows");
		cJSON_Delete(a);
		cJSON_Delete(b);
		cJSON_Delete(j);
	}
}

/* The settings move the bar; 0 keeps the default. */
static void
noise_judge_settings(void **state)
{
	struct ledger_judge	 jo = { 10, 20, 50 };
	cJSON			*b = win("hardware", 12, 36, 95, 90, 100);
	cJSON			*a = win("hardware", 12, 36, 60, 58, 62);
	cJSON			*j = noise_judge(b, a, 0, &jo);

	(void)state;
	/* enough exposure now, but −37 % is under a 50 % bar */
	assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(j,
	    "verdict")), "no-detectable-change");
	assert_int_equal(cJSON_GetObjectItem(cJSON_GetObjectItem(j, "needs"),
	    "heartbeats")->valueint, 10);
	cJSON_Delete(j);
	jo.min_effect_pct = 0;
	j = noise_judge(b, a, 0, &jo);
	assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(j,
	    "verdict")), "improved");
	cJSON_Delete(j);
	cJSON_Delete(a);
	cJSON_Delete(b);
}

static const char *
fold_regime(struct ledger *l, const char *line, uint64_t off)
{
	static char		 out[32];
	struct ledger_event	 ev;

	assert_int_equal(ledger_fold_perf(l, line, strlen(line), off, &ev), 0);
	snprintf(out, sizeof(out), "%s", ev.regime);
	return out;
}

/* A record's regime: its own, else its build's last heartbeat's. */
static void
noise_event_regime(void **state)
{
	struct ledger_opts	 o = { LEDGER_NO_TIME, LEDGER_NO_TIME, 0, 0,
				    NULL };
	struct ledger		*l = ledger_create(&o);
	const char		*hitch = "{\"type\":\"hitch\",\"at\":"
				    "\"2026-09-01T08:00:01.000Z\",\"build\":"
				    "\"b1\",\"frameMs\":150}";

	(void)state;
	assert_non_null(l);
	assert_string_equal(fold_regime(l, hitch, 0), "");
	assert_string_equal(fold_regime(l, "{\"type\":\"heartbeat\",\"at\":"
	    "\"2026-09-01T08:00:02.000Z\",\"build\":\"b1\",\"regime\":"
	    "\"software\"}", 100), "software");
	assert_string_equal(fold_regime(l, hitch, 200), "software");
	assert_string_equal(fold_regime(l, "{\"type\":\"hitch\",\"at\":"
	    "\"2026-09-01T08:00:03.000Z\",\"build\":\"b1\",\"frameMs\":150,"
	    "\"regime\":\"hardware\"}", 300), "hardware");
	/* another build's heartbeats say nothing of this one */
	assert_string_equal(fold_regime(l, "{\"type\":\"hitch\",\"at\":"
	    "\"2026-09-01T08:00:04.000Z\",\"build\":\"b2\",\"frameMs\":150}",
	    400), "");
	ledger_destroy(l);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(noise_interval_is_fixed),
		cmocka_unit_test(noise_judge_cases),
		cmocka_unit_test(noise_judge_settings),
		cmocka_unit_test(noise_event_regime),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
