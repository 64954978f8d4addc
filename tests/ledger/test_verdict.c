/*
 * verdict: the rule of ledger/verdict.h as vectors — one metric's runs
 * before and after, the regime, the verdict — then whole comparisons
 * (the decisive set, incomparable benches, what is reported and not
 * decisive), exit codes, and the configuration hash against a digest
 * computed apart (printf … | sha256sum).
 */
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "ledger/verdict.h"

#define H	REGIME_HARDWARE
#define S	REGIME_SOFTWARE
#define I	VERDICT_IMPROVED
#define R	VERDICT_REGRESSED
#define NDC	VERDICT_NO_CHANGE
#define NC	VERDICT_NOT_COMPARED
#define NONE	VERDICT_NONE

/* One metric: before runs, after runs (n 0: not measured). */
static const struct {
	const char		*what;
	enum verdict_metric	 m;
	enum verdict_regime	 regime;
	int			 na;
	double			 a[5];
	int			 nb;
	double			 b[5];
	enum verdict		 want;
	int			 unstable;
} vec[] = {
	{ "faster, past the floor and 1 %", M_FRAME_MEDIAN, H,
	  3, { 10.0, 10.2, 10.1 }, 3, { 9.0, 9.1, 9.05 }, I, 0 },
	{ "slower, past both", M_FRAME_P95, H,
	  3, { 10.0, 10.0, 10.1 }, 3, { 11.0, 11.1, 11.0 }, R, 0 },
	{ "inside the pooled floor", M_FRAME_MEDIAN, H,
	  3, { 10.0, 10.5, 10.2 }, 3, { 10.3, 10.1, 10.6 }, NDC, 0 },
	{ "past a zero floor but under 1 %", M_FRAME_MEDIAN, H,
	  3, { 100, 100, 100 }, 3, { 100.5, 100.5, 100.5 }, NDC, 0 },
	{ "exactly the pooled floor is not past it", M_FRAME_MEDIAN, H,
	  3, { 10.0, 10.5, 10.25 }, 3, { 11.0, 11.5, 11.25 }, NDC, 0 },
	{ "just past the pooled floor", M_FRAME_MEDIAN, H,
	  3, { 10.0, 10.5, 10.25 }, 3, { 11.0, 11.5, 11.26 }, R, 0 },
	{ "either floor alone would not hold it", M_FRAME_MEDIAN, H,
	  3, { 10.0, 10.6, 10.3 }, 3, { 9.4, 10.0, 9.7 }, NDC, 0 },
	{ "even runs: the median is the middle two's mean", M_RENDER_INSIDE, H,
	  4, { 4, 5, 6, 100 }, 4, { 2, 2, 3, 3 }, NDC, 0 },
	{ "software timing is reported, not compared", M_FRAME_MEDIAN, S,
	  3, { 30, 31, 30 }, 3, { 10, 11, 10 }, NC, 0 },
	{ "unknown regime likewise", M_GPU_MEDIAN, REGIME_UNKNOWN,
	  3, { 3, 3, 3 }, 3, { 1, 1, 1 }, NC, 0 },
	{ "one run has no noise floor", M_FRAME_MEDIAN, H,
	  1, { 10 }, 1, { 5 }, NC, 0 },
	{ "GPU time measured before only", M_GPU_P95, H,
	  3, { 2, 2, 2 }, 0, { 0 }, NONE, 0 },
	{ "draw calls: any fall is improved", M_CALLS, S,
	  3, { 4028, 4028, 4028 }, 3, { 30, 30, 30 }, I, 0 },
	{ "draw calls equal", M_CALLS, S,
	  3, { 4028, 4028, 4028 }, 3, { 4028, 4028, 4028 }, NDC, 0 },
	{ "one more program is regressed, exactly", M_PROGRAMS, H,
	  3, { 3, 3, 3 }, 3, { 4, 4, 4 }, R, 0 },
	{ "a counter 0.01 % up is still a change", M_TRIANGLES, S,
	  3, { 100000, 100000, 100000 }, 3, { 100010, 100010, 100010 }, R, 0 },
	{ "unstable counter: judged against its spread", M_CALLS, S,
	  3, { 10, 11, 10 }, 3, { 10, 10, 10 }, NDC, 1 },
	{ "unstable counter past its spread", M_CALLS, S,
	  3, { 100, 101, 100 }, 3, { 50, 50, 51 }, I, 1 },
};

static void
bench_set(struct verdict_bench *b, enum verdict_regime r, const char *hash,
    const char *gpu)
{
	memset(b, 0, sizeof(*b));
	b->regime = r;
	snprintf(b->hash, sizeof(b->hash), "%s", hash);
	snprintf(b->gpu, sizeof(b->gpu), "%s", gpu);
}

static void
series(struct verdict_bench *b, enum verdict_metric m, int n, const double *v)
{
	b->m[m].n = n;
	memcpy(b->m[m].run, v, (size_t)n * sizeof(double));
}

static void
verdict_vectors(void **state)
{
	struct verdict_bench	a, b;
	struct verdict_result	r;
	size_t			i;

	(void)state;
	for (i = 0; i < sizeof(vec) / sizeof(vec[0]); i++) {
		bench_set(&a, vec[i].regime, "sha256:x", "gpu");
		bench_set(&b, vec[i].regime, "sha256:x", "gpu");
		series(&a, vec[i].m, vec[i].na, vec[i].a);
		series(&b, vec[i].m, vec[i].nb, vec[i].b);
		verdict_compare(&a, &b, &r);
		if (r.m[vec[i].m].v != vec[i].want ||
		    r.m[vec[i].m].unstable != vec[i].unstable)
			fail_msg("%s: %s got %s (unstable %d; Δ %g, pooled %g, "
			    "why: %s)", vec[i].what,
			    verdict_metrics[vec[i].m].name,
			    verdict_name(r.m[vec[i].m].v),
			    r.m[vec[i].m].unstable, r.m[vec[i].m].delta,
			    r.m[vec[i].m].pooled, r.m[vec[i].m].why);
	}
}

static void
verdict_line_numbers(void **state)
{
	struct verdict_bench	a, b;
	struct verdict_result	r;
	const double		x[] = { 10.0, 10.2, 10.1 }, y[] = { 9.0, 9.1, 9.05 };

	(void)state;
	bench_set(&a, H, "h", "g");
	bench_set(&b, H, "h", "g");
	series(&a, M_FRAME_MEDIAN, 3, x);
	series(&b, M_FRAME_MEDIAN, 3, y);
	verdict_compare(&a, &b, &r);
	assert_float_equal(r.m[M_FRAME_MEDIAN].before, 10.1, 1e-12);
	assert_float_equal(r.m[M_FRAME_MEDIAN].after, 9.05, 1e-12);
	assert_float_equal(r.m[M_FRAME_MEDIAN].delta, -1.05, 1e-12);
	assert_float_equal(r.m[M_FRAME_MEDIAN].floor_before, 0.2, 1e-12);
	assert_float_equal(r.m[M_FRAME_MEDIAN].floor_after, 0.1, 1e-12);
	assert_float_equal(r.m[M_FRAME_MEDIAN].pooled, 0.3, 1e-12);
	assert_float_equal(r.m[M_FRAME_MEDIAN].threshold, 0.3, 1e-12);
	assert_true(isnan(verdict_median(x, 0)));
	assert_float_equal(verdict_spread(y, 3), 0.1, 1e-12);
}

/* A software bench of the crates scene: counters and timing. */
static void
crates(struct verdict_bench *b, double calls, double tri, double programs,
    double ms, const char *hash, enum verdict_regime r, const char *gpu)
{
	double	c[3] = { calls, calls, calls }, t[3] = { tri, tri, tri },
		p[3] = { programs, programs, programs },
		f[3] = { ms, ms + 1, ms - 1 };

	bench_set(b, r, hash, gpu);
	series(b, M_CALLS, 3, c);
	series(b, M_TRIANGLES, 3, t);
	series(b, M_PROGRAMS, 3, p);
	series(b, M_FRAME_MEDIAN, 3, f);
	series(b, M_FRAME_P95, 3, f);
}

static void
verdict_overall(void **state)
{
	struct verdict_bench	a, b;
	struct verdict_result	r;
	const char		*sw = "ANGLE (SwiftShader)";

	(void)state;
	/* instancing: calls fall, triangles stay, a program more */
	crates(&a, 4028, 48904, 3, 300, "h", S, sw);
	crates(&b, 30, 48904, 4, 100, "h", S, sw);
	verdict_compare(&a, &b, &r);
	assert_int_equal(r.overall, VERDICT_IMPROVED);
	assert_int_equal(verdict_exit(r.overall), 0);
	assert_int_equal(r.ndecided, 2);
	assert_int_equal(r.decided_by[0], M_CALLS);
	assert_int_equal(r.decided_by[1], M_TRIANGLES);
	assert_true(r.m[M_CALLS].decisive && !r.m[M_PROGRAMS].decisive);
	assert_int_equal(r.m[M_PROGRAMS].v, VERDICT_REGRESSED);
	assert_int_equal(r.m[M_FRAME_MEDIAN].v, VERDICT_NOT_COMPARED);
	assert_non_null(strstr(r.why, "programs rose (3 → 4), reported, not decisive"));
	assert_non_null(strstr(r.why, "software regime"));

	/* the same code twice: timing moved a lot, counters not at all */
	crates(&a, 4028, 48904, 3, 300, "h", S, sw);
	crates(&b, 4028, 48904, 3, 150, "h", S, sw);
	verdict_compare(&a, &b, &r);
	assert_int_equal(r.overall, VERDICT_NO_CHANGE);
	assert_int_equal(verdict_exit(r.overall), 5);

	/* fewer calls, more triangles: a trade, regressed */
	crates(&a, 4028, 48904, 3, 300, "h", S, sw);
	crates(&b, 2028, 60000, 3, 300, "h", S, sw);
	verdict_compare(&a, &b, &r);
	assert_int_equal(r.overall, VERDICT_REGRESSED);
	assert_int_equal(verdict_exit(r.overall), 1);
	assert_non_null(strstr(r.why, "a trade the bench cannot weigh"));

	/* hardware: frame time decides, counters do not */
	crates(&a, 4028, 48904, 3, 30, "h", H, "ANGLE (NVIDIA)");
	crates(&b, 4028, 48904, 3, 20, "h", H, "ANGLE (NVIDIA)");
	verdict_compare(&a, &b, &r);
	assert_int_equal(r.overall, VERDICT_IMPROVED);
	assert_int_equal(r.decided_by[0], M_FRAME_MEDIAN);
	assert_non_null(strstr(r.why, "frame time (hardware regime)"));
	crates(&b, 30, 48904, 3, 30, "h", H, "ANGLE (NVIDIA)");
	verdict_compare(&a, &b, &r);
	assert_int_equal(r.overall, VERDICT_NO_CHANGE);
	assert_int_equal(r.m[M_CALLS].v, VERDICT_IMPROVED);
	assert_non_null(strstr(r.why, "draw calls fell (4028 → 30), reported, not decisive"));
}

static void
verdict_incomparable(void **state)
{
	struct verdict_bench	a, b;
	struct verdict_result	r;
	const double		one[1] = { 10 };

	(void)state;
	crates(&a, 4028, 48904, 3, 300, "sha256:aaaa", S, "sw");
	crates(&b, 30, 48904, 3, 300, "sha256:bbbb", S, "sw");
	verdict_compare(&a, &b, &r);
	assert_int_equal(r.overall, VERDICT_INCOMPARABLE);
	assert_int_equal(verdict_exit(r.overall), 3);
	assert_non_null(strstr(r.why, "configurations differ"));

	crates(&a, 4028, 48904, 3, 30, "h", H, "ANGLE (NVIDIA)");
	crates(&b, 4028, 48904, 3, 30, "h", S, "ANGLE (NVIDIA)");
	verdict_compare(&a, &b, &r);
	assert_int_equal(r.overall, VERDICT_INCOMPARABLE);
	assert_non_null(strstr(r.why, "hardware regime, the other in a software one"));

	crates(&a, 4028, 48904, 3, 30, "h", H, "ANGLE (NVIDIA)");
	crates(&b, 4028, 48904, 3, 30, "h", H, "ANGLE (AMD)");
	verdict_compare(&a, &b, &r);
	assert_int_equal(r.overall, VERDICT_INCOMPARABLE);
	assert_non_null(strstr(r.why, "GPUs differ"));

	/* hardware, one run: frame time has no floor, nothing decides */
	bench_set(&a, H, "h", "g");
	bench_set(&b, H, "h", "g");
	series(&a, M_FRAME_MEDIAN, 1, one);
	series(&b, M_FRAME_MEDIAN, 1, one);
	verdict_compare(&a, &b, &r);
	assert_int_equal(r.overall, VERDICT_INCOMPARABLE);
	assert_non_null(strstr(r.why, "nothing decisive was compared"));
	assert_non_null(strstr(r.why, "--runs 2 or more"));
}

static void
verdict_names_and_exits(void **state)
{
	(void)state;
	assert_string_equal(verdict_name(VERDICT_NO_CHANGE), "no-detectable-change");
	assert_string_equal(verdict_name(VERDICT_INCOMPARABLE), "incomparable");
	assert_string_equal(verdict_name(VERDICT_NONE), "not-measured");
	assert_int_equal(verdict_exit(VERDICT_IMPROVED), 0);
	assert_int_equal(verdict_exit(VERDICT_REGRESSED), 1);
	assert_int_equal(verdict_exit(VERDICT_NO_CHANGE), 5);
	assert_int_equal(verdict_exit(VERDICT_INCOMPARABLE), 3);
	assert_int_equal(verdict_regime_parse("hardware"), REGIME_HARDWARE);
	assert_int_equal(verdict_regime_parse("software"), REGIME_SOFTWARE);
	assert_int_equal(verdict_regime_parse("Software"), REGIME_UNKNOWN);
	assert_int_equal(verdict_regime_parse(NULL), REGIME_UNKNOWN);
}

static void
verdict_config_hash_vectors(void **state)
{
	struct verdict_config	c = {
		.scene = "crates", .frames = 600, .warmup = 120, .runs = 3,
		.width = 1280, .height = 720, .pixel_ratio = 1,
		.clock = "virtual-60hz", .seed = 1,
		.browser = "Chrome/156.0.8078.114",
	};
	char			text[1024], hash[VERDICT_HASH_MAX], other[VERDICT_HASH_MAX];

	(void)state;
	assert_int_equal(verdict_config_text(&c, text, sizeof(text)), 155);
	assert_string_equal(text, "sloptimize-bench-config/1\nscene=crates\n"
	    "frames=600\nwarmup=120\nruns=3\nviewport=1280x720\npixelRatio=1\n"
	    "clock=virtual-60hz\nseed=1\nbrowser=Chrome/156.0.8078.114\n");
	assert_int_equal(verdict_config_hash(&c, hash), 0);
	/* printf '<the text above>' | sha256sum */
	assert_string_equal(hash, "sha256:dd9512c7ab8f52bbadce96ddb050e3a2"
	    "c5a9f25808fd0365200c7b20650ef397");
	c.frames = 601;
	verdict_config_hash(&c, other);
	assert_string_not_equal(hash, other);
	c.frames = 600;
	c.pixel_ratio = 1.5;
	verdict_config_text(&c, text, sizeof(text));
	assert_non_null(strstr(text, "\npixelRatio=1.5\n"));
	/* a newline in a value cannot make a line of its own */
	c.pixel_ratio = 1;
	c.browser = "Chrome/1\nruns=3";
	verdict_config_text(&c, text, sizeof(text));
	assert_non_null(strstr(text, "\nbrowser=Chrome/1 runs=3\n"));
	assert_int_equal(verdict_config_text(&c, text, 20), -1);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(verdict_vectors),
		cmocka_unit_test(verdict_line_numbers),
		cmocka_unit_test(verdict_overall),
		cmocka_unit_test(verdict_incomparable),
		cmocka_unit_test(verdict_names_and_exits),
		cmocka_unit_test(verdict_config_hash_vectors),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
