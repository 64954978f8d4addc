/*
 * samples: the packed timeline store.  Every value comes back bit for
 * bit; medians, counts and maxima equal what sorting the raw samples
 * gives, for every kind of grouping, for groups bigger than the scratch,
 * out-of-order times and unmeasured values; a damaged block is refused.
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "ledger/samples.h"

struct raw {
	int64_t		*t;
	uint32_t	*b;
	double		*v;		/* one column */
	size_t		 n;
};

static uint64_t
rnd(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static void
raw_alloc(struct raw *r, size_t n)
{
	r->t = calloc(n, sizeof(*r->t));
	r->b = calloc(n, sizeof(*r->b));
	r->v = calloc(n, sizeof(*r->v));
	r->n = 0;
	assert_non_null(r->t);
	assert_non_null(r->b);
	assert_non_null(r->v);
}

static void
raw_free(struct raw *r)
{
	free(r->t);
	free(r->b);
	free(r->v);
}

/* The order samples.c selects in: -0 just below +0. */
static uint64_t
key_of(double d)
{
	uint64_t	u;

	memcpy(&u, &d, sizeof(u));
	return u >> 63 ? ~u : u | 0x8000000000000000ull;
}

static int
key_cmp(const void *a, const void *b)
{
	uint64_t	x = key_of(*(const double *)a);
	uint64_t	y = key_of(*(const double *)b);

	return x < y ? -1 : x > y;
}

static int
group_of(const struct sgroups *q, int64_t t, uint32_t b)
{
	int64_t	g;

	if (q->by_build && b != q->build)
		return -1;
	if (q->from != SAMPLES_NO_TIME && t < q->from)
		return -1;
	if (q->to != SAMPLES_NO_TIME && t > q->to)
		return -1;
	if (q->width <= 0)
		return 0;
	if (t < q->t0)
		return -1;
	g = (t - q->t0) / q->width;
	return g < q->ngroups ? (int)g : -1;
}

/* Brute force: sort each group's measured values, take rank ceil(n/2). */
static void
check(const struct samples *s, const struct raw *r, const struct sgroups *q,
    const char *what)
{
	int	 ng = q->width > 0 ? q->ngroups : 1, g;
	double	*med = calloc((size_t)ng, sizeof(double));
	double	*max = calloc((size_t)ng, sizeof(double));
	double	*vals = calloc(r->n + 1, sizeof(double));
	size_t	*cnt = calloc((size_t)ng, sizeof(size_t));
	size_t	*mes = calloc((size_t)ng, sizeof(size_t));
	size_t	 i;

	assert_non_null(med);
	assert_non_null(max);
	assert_non_null(vals);
	assert_non_null(cnt);
	assert_non_null(mes);
	{
		/* every column at once: the others are never measured */
		double	*cols[SAMPLES_MAXCOLS] = { med };
		int	 c;

		for (c = 1; c < s->ncols; c++)
			assert_non_null(cols[c] = calloc((size_t)ng,
			    sizeof(double)));
		assert_int_equal(samples_medians(s, q, s->ncols, cols), 0);
		for (c = 1; c < s->ncols; c++) {
			for (g = 0; g < ng; g++)
				assert_true(isnan(cols[c][g]));
			free(cols[c]);
		}
	}
	assert_int_equal(samples_tally(s, q, 0, cnt, mes, max), 0);
	for (g = 0; g < ng; g++) {
		size_t	n = 0, all = 0;
		double	want_max = NAN;

		for (i = 0; i < r->n; i++) {
			if (group_of(q, r->t[i], r->b[i]) != g)
				continue;
			all++;
			if (isnan(r->v[i]))
				continue;
			vals[n++] = r->v[i];
			if (isnan(want_max) || r->v[i] > want_max)
				want_max = r->v[i];
		}
		if (cnt[g] != all || mes[g] != n)
			fail_msg("%s: group %d: counts %zu/%zu, want %zu/%zu",
			    what, g, cnt[g], mes[g], all, n);
		if (n == 0) {
			if (!isnan(med[g]) || !isnan(max[g]))
				fail_msg("%s: group %d: empty but %g/%g", what,
				    g, med[g], max[g]);
			continue;
		}
		qsort(vals, n, sizeof(*vals), key_cmp);
		if (memcmp(&med[g], &vals[(n + 1) / 2 - 1], sizeof(double)) ||
		    !(max[g] == want_max))
			fail_msg("%s: group %d of %zu: median %.17g want %.17g, "
			    "max %.17g want %.17g", what, g, n, med[g],
			    vals[(n + 1) / 2 - 1], max[g], want_max);
	}
	free(med);
	free(max);
	free(vals);
	free(cnt);
	free(mes);
}

static void
add(struct samples *s, struct raw *r, int64_t t, uint32_t b, double v)
{
	double	row[SAMPLES_MAXCOLS] = { v, NAN, 0, 0, 0 };

	assert_int_equal(samples_add(s, t, b, row), 0);
	r->t[r->n] = t;
	r->b[r->n] = b == SAMPLES_NO_BUILD ? UINT32_MAX : b;
	r->v[r->n++] = v;
}

/* Values of every kind the store must give back exactly. */
static double
odd_value(uint64_t *rs)
{
	static const double	fixed[] = {
		0.0, -0.0, 1e300, -1e300, 5e-324, 0.1 + 0.2, 1.0 / 3.0,
		9007199254740993.0, 123456789.123, 1e-9, 8.58, 17.36, 1e22,
		-4.5, 2.5e-5, INFINITY, -INFINITY,
	};
	uint64_t		u;
	double			d;

	switch (rnd(rs) % 6) {
	case 0:
		return fixed[rnd(rs) % (sizeof(fixed) / sizeof(fixed[0]))];
	case 1:		/* any double at all (not NaN: that is "absent") */
		u = rnd(rs);
		memcpy(&d, &u, sizeof(d));
		return isnan(d) ? 1.5 : d;
	case 2:
		return NAN;
	case 3:		/* integers */
		return (double)(int64_t)(rnd(rs) % 2000000) - 1000000;
	default:	/* decimals of up to 4 places */
		return (double)(int64_t)(rnd(rs) % 100000) /
		    (double)(rnd(rs) % 2 ? 100 : 10000);
	}
}

static void
samples_give_every_value_back(void **state)
{
	struct samples	*s = malloc(sizeof(*s));
	struct raw	 r;
	struct sgroups	 q = { 0, 0, SAMPLES_NO_TIME, SAMPLES_NO_TIME, 0, 1, 0,
			    0, 0 };
	uint64_t	 rs = 7;
	size_t		 i, n = 3000;

	(void)state;
	assert_non_null(s);
	raw_alloc(&r, n);
	/* one sample per millisecond: each is a group of its own; first
	 * anything at all (most blocks raw), then short decimals with now
	 * and then a value that only looks like one (-0, 1e22, 2.5e-5) */
	for (int pass = 0; pass < 2; pass++) {
		static const double	sly[] = { -0.0, 1e22, 2.5e-5, 0.0 };

		samples_init(s, 2);
		r.n = 0;
		for (i = 0; i < n; i++) {
			double	v = pass == 0 ? odd_value(&rs) :
				    i % 97 == 0 ? sly[i / SAMPLES_BLOCK % 4] :
				    (double)(int64_t)(rnd(&rs) % 5000) / 100;

			add(s, &r, (int64_t)i, (uint32_t)(i / 700), v);
		}
		q.ngroups = (int)n;
		check(s, &r, &q, pass == 0 ? "any values" : "sly decimals");
		samples_free(s);
	}
	raw_free(&r);
	free(s);
}

static void
samples_medians_match_sorting(void **state)
{
	struct samples	*s = malloc(sizeof(*s));
	struct raw	 r;
	uint64_t	 rs = 99;
	size_t		 i, n = 20000;
	int		 k;

	(void)state;
	assert_non_null(s);
	samples_init(s, 2);
	raw_alloc(&r, n);
	for (i = 0; i < n; i++) {
		/* mostly increasing times, some out of order; a few builds */
		int64_t		t = (int64_t)i * 1000 +
				    (rnd(&rs) % 10 == 0 ? -50000 : 0) +
				    (int64_t)(rnd(&rs) % 700);
		uint32_t	b = rnd(&rs) % 50 == 0 ? SAMPLES_NO_BUILD :
				    i > n / 2 ? (uint32_t)(rnd(&rs) % 1000) :
				    (uint32_t)(i / 3000);
		double		v = rnd(&rs) % 8 == 0 ? odd_value(&rs) :
				    (double)(1200 + (int64_t)(rnd(&rs) % 1200)) /
				    100;

		add(s, &r, t, b, v);
	}
	for (k = 0; k < 60; k++) {
		struct sgroups	q = { 0, 0, SAMPLES_NO_TIME, SAMPLES_NO_TIME,
				    0, 0, 0, 0, 0 };
		char		what[64];

		if (k % 3 == 1) {
			q.by_build = 1;
			q.build = k % 7 == 0 ? SAMPLES_NO_BUILD :
			    (uint32_t)(rnd(&rs) % (k % 2 ? 7 : 1000));
		}
		if (k % 4 == 2) {
			q.from = (int64_t)(rnd(&rs) % 10000000);
			q.to = q.from + (int64_t)(rnd(&rs) % 10000000);
		}
		if (k % 2 == 0) {
			q.t0 = (int64_t)(rnd(&rs) % 1000000) - 500000;
			/* slices narrower and wider than a block's span */
			q.ngroups = 1 + (int)(rnd(&rs) % 300);
			q.width = 1 + (int64_t)(rnd(&rs) % (k % 4 == 0 ?
			    5000000 : 200000));
		}
		snprintf(what, sizeof(what), "query %d", k);
		check(s, &r, &q, what);
	}
	samples_free(s);
	raw_free(&r);
	free(s);
}

/* Groups past SAMPLES_SCRATCH go through histogram narrowing: spread
 * values, heavy duplicates, one value only, and values with two lone
 * outliers far away (the first histogram puts all but them in one bin). */
static void
samples_big_groups(void **state)
{
	size_t	n = SAMPLES_SCRATCH * 2 + 12346, i;	/* even: rank n/2 */
	int	kind;

	(void)state;
	for (kind = 0; kind < 4; kind++) {
		struct samples	*s = malloc(sizeof(*s));
		struct raw	 r;
		struct sgroups	 q = { 0, 0, SAMPLES_NO_TIME, SAMPLES_NO_TIME,
				    0, 0, 0, 0, 0 };
		uint64_t	 rs = 1234 + (uint64_t)kind;
		char		 what[32];

		assert_non_null(s);
		samples_init(s, 1);
		raw_alloc(&r, n);
		for (i = 0; i < n; i++) {
			double	v;

			switch (kind) {
			case 0:
				v = (double)(int64_t)(rnd(&rs) % 1000000) / 100;
				break;
			case 1:
				v = (double)(rnd(&rs) % 3);
				break;
			case 2:
				v = 16.7;
				break;
			default:
				v = i == 5 ? -1e300 : i == 7 ? 1e300 :
				    12 + (double)(rnd(&rs) % 100) / 1000;
				break;
			}
			add(s, &r, (int64_t)i, 0, v);
		}
		snprintf(what, sizeof(what), "big group, kind %d", kind);
		check(s, &r, &q, what);
		/* and two big groups side by side with small ones */
		q.t0 = 0;
		q.width = (int64_t)(n / 2) - 7;
		q.ngroups = 3;
		check(s, &r, &q, what);
		samples_free(s);
		raw_free(&r);
		free(s);
	}
}

/* Realistic heartbeats (the generator's ranges) pack to a few bytes. */
static void
samples_are_small(void **state)
{
	struct samples	*s = malloc(sizeof(*s));
	uint64_t	 rs = 5;
	size_t		 i, n = 100000;
	int64_t		 t = 1790000000000;

	(void)state;
	assert_non_null(s);
	samples_init(s, 5);
	for (i = 0; i < n; i++) {
		double	v[5] = {
			(double)(1200 + (int64_t)(rnd(&rs) % 1200)) / 100,
			(double)(400 + (int64_t)(rnd(&rs) % 650)) / 100,
			(double)(300 + rnd(&rs) % 650),
			(double)(700000 + rnd(&rs) % 700000),
			(double)(10 + rnd(&rs) % 13),
		};

		t += 250 + (int64_t)(rnd(&rs) % 2000);
		assert_int_equal(samples_add(s, t, (uint32_t)(i / 10000), v),
		    0);
	}
	if (samples_bytes(s) > n * 10)
		fail_msg("%zu bytes for %zu heartbeats", samples_bytes(s), n);
	samples_free(s);
	free(s);
}

/* An odd value a block from a checkpoint may hold: finite or NaN (no
 * fold keeps an infinity, and samples_block_add refuses a block with
 * one: docs/json.md). */
static double
finite_value(uint64_t *rs)
{
	double	d = odd_value(rs);

	return isinf(d) ? (d > 0 ? 1e300 : -1e300) : d;
}

/* A block copied out and back answers the same; a damaged one is
 * refused, never read past its end. */
static void
samples_blocks_round_trip(void **state)
{
	struct samples	*s = malloc(sizeof(*s)), *t = malloc(sizeof(*t));
	struct raw	 r;
	struct sgroups	 q = { 0, 0, SAMPLES_NO_TIME, SAMPLES_NO_TIME, 0, 97,
			    20, 0, 0 };
	uint64_t	 rs = 3;
	size_t		 i, k, n = SAMPLES_BLOCK * 4;

	(void)state;
	assert_non_null(s);
	assert_non_null(t);
	samples_init(s, 1);
	samples_init(t, 1);
	raw_alloc(&r, n);
	for (i = 0; i < n; i++)
		add(s, &r, (int64_t)i, (uint32_t)(i / 900),
		    finite_value(&rs));
	assert_int_equal(samples_nblocks(s), 3);	/* the 4th is open */
	for (k = 0; k < samples_nblocks(s); k++) {
		const void	*p;
		size_t		 len, cut;
		unsigned char	*bad;

		samples_block(s, k, &p, &len);
		assert_non_null(bad = malloc(len));
		for (cut = 0; cut < len; cut += 7)
			assert_int_equal(samples_block_add(t, p, cut), -EINVAL);
		memcpy(bad, p, len);
		bad[4] ^= 0xff;			/* the sample count */
		assert_int_equal(samples_block_add(t, bad, len), -EINVAL);
		free(bad);
		assert_int_equal(samples_block_add(t, p, len), 0);
	}
	for (i = samples_count(t); i < n; i++) {
		double	row[SAMPLES_MAXCOLS] = { r.v[i] };

		assert_int_equal(samples_add(t, r.t[i], r.b[i] == UINT32_MAX ?
		    SAMPLES_NO_BUILD : r.b[i], row), 0);
	}
	check(t, &r, &q, "copied blocks");
	samples_free(s);
	samples_free(t);
	raw_free(&r);
	free(s);
	free(t);
}

/*
 * A code column narrows a query (a heartbeat's regime): medians, counts,
 * sums and the values in order are those of the samples with a wanted
 * code only, whether a block holds one code (its header answers) or
 * several (each sample is looked at); codes per group are counted.
 */
static void
samples_code_filter(void **state)
{
	struct samples	*s = malloc(sizeof(*s));
	size_t		 i, n = SAMPLES_BLOCK * 5 + 77, k;
	uint64_t	 rs = 11;
	double		*want = calloc(n, sizeof(double)), sum = 0;
	size_t		 nwant = 0;

	(void)state;
	assert_non_null(s);
	assert_non_null(want);
	samples_init(s, 2);
	for (i = 0; i < n; i++) {
		/* blocks 0 and 3 all code 1; the others mixed, some NaN */
		double	code = i / SAMPLES_BLOCK == 0 || i / SAMPLES_BLOCK == 3 ?
			    1 : rnd(&rs) % 5 == 0 ? NAN :
			    (double)(rnd(&rs) % 3);
		double	row[SAMPLES_MAXCOLS] = {
			(double)(int64_t)(rnd(&rs) % 10000) / 10, code
		};

		assert_int_equal(samples_add(s, (int64_t)i, 0, row), 0);
		if (code == 1) {
			want[nwant++] = row[0];
			sum += row[0];
		}
	}
	{
		struct sgroups	q = { 0, 0, SAMPLES_NO_TIME, SAMPLES_NO_TIME,
				    0, 0, 1, 1, 1u << 1 };
		struct sgroups	all = { 0, 0, SAMPLES_NO_TIME, SAMPLES_NO_TIME,
				    0, 0, 1, 0, 0 };
		double		 med, *mp[1] = { &med }, got_sum, *vals;
		double		*sorted = malloc(nwant * sizeof(double));
		size_t		 cnt, measured, nv, codes[SAMPLES_CODES];
		size_t		 ncodes = 0;

		assert_non_null(sorted);
		assert_non_null(vals = malloc(n * sizeof(double)));
		assert_int_equal(samples_tally(s, &q, 0, &cnt, &measured, NULL),
		    0);
		assert_int_equal(cnt, nwant);
		memcpy(sorted, want, nwant * sizeof(double));
		qsort(sorted, nwant, sizeof(double), key_cmp);
		assert_int_equal(samples_medians(s, &q, 1, mp), 0);
		assert_true(med == sorted[(nwant + 1) / 2 - 1]);
		assert_int_equal(samples_sum(s, &q, 0, &got_sum, &measured), 0);
		assert_int_equal(measured, nwant);
		assert_true(got_sum == sum);	/* same values, same order */
		/* every value, in order */
		assert_int_equal(samples_values(s, &q, 0, vals, n, &nv), 0);
		assert_int_equal(nv, nwant);
		assert_memory_equal(vals, want, nwant * sizeof(double));
		/* thinned: value floor(i * n / cap) of them */
		assert_int_equal(samples_values(s, &q, 0, vals, 100, &nv), 0);
		assert_int_equal(nv, 100);
		for (k = 0; k < 100; k++)
			assert_true(vals[k] == want[k * nwant / 100]);
		/* codes: every sample counted once, under its code */
		assert_int_equal(samples_codes(s, &all, 1, codes), 0);
		for (k = 0; k < SAMPLES_CODES; k++)
			ncodes += codes[k];
		assert_int_equal(ncodes, n);
		assert_int_equal(codes[1], nwant);
		assert_true(codes[SAMPLES_CODE_NONE] > 0);
		/* NONE is a code too: the unmeasured only */
		q.codes = 1u << SAMPLES_CODE_NONE;
		assert_int_equal(samples_tally(s, &q, 0, &cnt, NULL, NULL), 0);
		assert_int_equal(cnt, codes[SAMPLES_CODE_NONE]);
		free(sorted);
		free(vals);
	}
	samples_free(s);
	free(s);
	free(want);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(samples_give_every_value_back),
		cmocka_unit_test(samples_medians_match_sorting),
		cmocka_unit_test(samples_big_groups),
		cmocka_unit_test(samples_are_small),
		cmocka_unit_test(samples_code_filter),
		cmocka_unit_test(samples_blocks_round_trip),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
