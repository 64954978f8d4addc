/*
 * ssim: our per-channel SSIM against scikit-image's, on the pairs of
 * tests/fixtures/ssim/ (made and measured once by
 * tests/gen_ssim_fixtures.py; see ssim.json for the exact call).  Each
 * channel's mean within SSIM_TOL of the reference, the per-pixel map
 * (borders included, where the window is mirrored) within MAP_TOL at the
 * sampled pixels, the changed pixels and the largest difference exactly.
 * The tint case is the reason the gate is per channel: the reference's
 * luma SSIM passes it at 0.98, and the minimum over R, G, B must not.
 * Then the contract's edges: symmetry, strides, RGB against RGBA, sizes
 * that cannot be compared.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "tests/unitfs.h"

#include <cjson/cJSON.h>

#include "image/pngio.h"
#include "ledger/ssim.h"

#define DIR	"tests/fixtures/ssim/"
/* The tolerances docs/gate.md states: the means are summed in another
 * order than numpy's; the map is stored as float. */
#define SSIM_TOL	1e-12
#define MAP_TOL		1e-6

static void
load(const char *name, struct pngio_image *im)
{
	char	 path[256], why[PNGIO_WHY_MAX];
	size_t	 len;
	void	*data;

	snprintf(path, sizeof(path), DIR "%s", name);
	data = unitfs_slurp(path, &len);
	if (pngio_decode(data, len, 0, im, why, sizeof(why)) != 0)
		fail_msg("%s: %s", name, why);
	free(data);
}

static struct ssim_image
view(const struct pngio_image *im)
{
	struct ssim_image	v = { im->px, im->width, im->height,
				    (size_t)im->width * 4, 4 };

	return v;
}

static double
num(const cJSON *o, const char *k)
{
	const cJSON	*it = cJSON_GetObjectItem(o, k);

	assert_true(cJSON_IsNumber(it));
	return it->valuedouble;
}

static void
ssim_matches_scikit_image(void **state)
{
	size_t		 len;
	char		*text = unitfs_slurp(DIR "ssim.json", &len);
	cJSON		*doc = cJSON_Parse(text), *c, *p;
	double		 worst = 0, worst_map = 0;
	int		 cases = 0, ch;

	(void)state;
	assert_non_null(doc);
	cJSON_ArrayForEach(c, cJSON_GetObjectItem(doc, "cases")) {
		const char		*name = cJSON_GetObjectItem(c,
					    "name")->valuestring;
		struct pngio_image	 a, b;
		struct ssim_image	 va, vb;
		struct ssim_result	 r;
		float			*map;

		load(cJSON_GetObjectItem(c, "a")->valuestring, &a);
		load(cJSON_GetObjectItem(c, "b")->valuestring, &b);
		va = view(&a);
		vb = view(&b);
		map = malloc((size_t)a.width * a.height * sizeof(float));
		assert_non_null(map);
		assert_int_equal(ssim_compare(&va, &vb, &r, map), 0);
		for (ch = 0; ch < 3; ch++) {
			double want = cJSON_GetArrayItem(cJSON_GetObjectItem(c,
			    "ssim"), ch)->valuedouble;
			double d = fabs(r.channel[ch] - want);

			if (d > worst)
				worst = d;
			if (d > SSIM_TOL)
				fail_msg("%s channel %d: %.15f, scikit-image "
				    "%.15f", name, ch, r.channel[ch], want);
		}
		assert_true(fabs(r.min - num(c, "min")) <= SSIM_TOL);
		assert_int_equal(r.pixels, (uint64_t)a.width * a.height);
		assert_int_equal(r.changed, (uint64_t)num(c, "changed"));
		assert_true(fabs(r.changed_share - num(c, "changedShare")) <
		    1e-15);
		assert_int_equal(r.max_delta, (unsigned)num(c, "maxDelta"));
		cJSON_ArrayForEach(p, cJSON_GetObjectItem(c, "map")) {
			int	x = cJSON_GetArrayItem(p, 0)->valueint;
			int	y = cJSON_GetArrayItem(p, 1)->valueint;
			double	want = cJSON_GetArrayItem(p, 2)->valuedouble;
			double	d = fabs(map[(size_t)y * a.width + x] - want);

			if (d > worst_map)
				worst_map = d;
			if (d > MAP_TOL)
				fail_msg("%s map at %d,%d: %.9f, scikit-image "
				    "%.9f", name, x, y,
				    map[(size_t)y * a.width + x], want);
		}
		/* the map is optional and changes nothing */
		{
			struct ssim_result	r2;

			assert_int_equal(ssim_compare(&va, &vb, &r2, NULL), 0);
			assert_memory_equal(r2.channel, r.channel,
			    sizeof(r.channel));
		}
		printf("%-9s R %.6f G %.6f B %.6f min %.6f changed %.4f\n",
		    name, r.channel[0], r.channel[1], r.channel[2], r.min,
		    r.changed_share);
		free(map);
		pngio_image_free(&a);
		pngio_image_free(&b);
		cases++;
	}
	printf("largest difference from scikit-image: mean %.3g, map %.3g\n",
	    worst, worst_map);
	assert_true(cases >= 10);
	cJSON_Delete(doc);
	free(text);
}

/* The case luma lets through: a visible tint of one material. */
static void
ssim_tint_caught_per_channel(void **state)
{
	size_t			 len;
	char			*text = unitfs_slurp(DIR "ssim.json", &len);
	cJSON			*doc = cJSON_Parse(text), *c, *tint = NULL;
	struct pngio_image	 a, b;
	struct ssim_image	 va, vb;
	struct ssim_result	 r;

	(void)state;
	cJSON_ArrayForEach(c, cJSON_GetObjectItem(doc, "cases"))
		if (strcmp(cJSON_GetObjectItem(c, "name")->valuestring,
		    "tint") == 0)
			tint = c;
	assert_non_null(tint);
	/* the independent luma SSIM passes it at the default threshold */
	assert_true(num(tint, "luma") >= 0.98);
	load("tint.a.png", &a);
	load("tint.b.png", &b);
	va = view(&a);
	vb = view(&b);
	assert_int_equal(ssim_compare(&va, &vb, &r, NULL), 0);
	/* the per-channel minimum fails it, and clearly */
	assert_true(r.min < 0.98);
	assert_true(r.min < num(tint, "luma") - 0.02);
	assert_true(r.channel[2] == r.min);	/* blue */
	printf("tint: luma %.5f (scikit-image), R %.5f G %.5f B %.5f\n",
	    num(tint, "luma"), r.channel[0], r.channel[1], r.channel[2]);
	pngio_image_free(&a);
	pngio_image_free(&b);
	cJSON_Delete(doc);
	free(text);
}

static void
ssim_symmetric_strided_mixed(void **state)
{
	struct pngio_image	 a, b;
	struct ssim_image	 va, vb, vrgb, vpad;
	struct ssim_result	 ab, ba, r;
	uint8_t			*rgb, *pad;
	size_t			 i, n, stride;
	uint32_t		 y;

	(void)state;
	load("noise.a.png", &a);
	load("noise.b.png", &b);
	va = view(&a);
	vb = view(&b);
	assert_int_equal(ssim_compare(&va, &vb, &ab, NULL), 0);
	assert_int_equal(ssim_compare(&vb, &va, &ba, NULL), 0);
	assert_memory_equal(ab.channel, ba.channel, sizeof(ab.channel));

	/* a as RGB, tightly packed */
	n = (size_t)a.width * a.height;
	rgb = malloc(n * 3);
	assert_non_null(rgb);
	for (i = 0; i < n; i++)
		memcpy(rgb + 3 * i, a.px + 4 * i, 3);
	vrgb = (struct ssim_image){ rgb, a.width, a.height,
	    (size_t)a.width * 3, 3 };
	assert_int_equal(ssim_compare(&vrgb, &vb, &r, NULL), 0);
	assert_memory_equal(r.channel, ab.channel, sizeof(r.channel));

	/* a with 13 bytes of padding after each row */
	stride = (size_t)a.width * 4 + 13;
	pad = malloc(stride * a.height);
	assert_non_null(pad);
	memset(pad, 0xab, stride * a.height);
	for (y = 0; y < a.height; y++)
		memcpy(pad + y * stride, a.px + (size_t)y * a.width * 4,
		    (size_t)a.width * 4);
	vpad = (struct ssim_image){ pad, a.width, a.height, stride, 4 };
	assert_int_equal(ssim_compare(&vpad, &vb, &r, NULL), 0);
	assert_memory_equal(r.channel, ab.channel, sizeof(r.channel));
	assert_int_equal(r.changed, ab.changed);

	free(rgb);
	free(pad);
	pngio_image_free(&a);
	pngio_image_free(&b);
}

static void
ssim_refuses_what_cannot_be_compared(void **state)
{
	static uint8_t		px[40 * 40 * 4];
	struct ssim_image	a = { px, 40, 40, 160, 4 }, b = a;
	struct ssim_result	r;

	(void)state;
	b.width = 39;
	assert_int_equal(ssim_compare(&a, &b, &r, NULL), -EINVAL);
	b = a;
	b.height = 41;
	assert_int_equal(ssim_compare(&a, &b, &r, NULL), -EINVAL);
	b = a;
	b.channels = 2;
	assert_int_equal(ssim_compare(&a, &b, &r, NULL), -EINVAL);
	b = a;
	b.stride = 100;		/* shorter than a row */
	assert_int_equal(ssim_compare(&a, &b, &r, NULL), -EINVAL);
	b = a;
	b.px = NULL;
	assert_int_equal(ssim_compare(&a, &b, &r, NULL), -EINVAL);
	assert_int_equal(ssim_compare(&a, &a, NULL, NULL), -EINVAL);
	/* smaller than the window: nothing to compare */
	a.width = b.width = 10;
	b = a;
	assert_int_equal(ssim_compare(&a, &b, &r, NULL), -ERANGE);
	a.width = b.width = 40;
	a.height = b.height = 10;
	assert_int_equal(ssim_compare(&a, &b, &r, NULL), -ERANGE);
	/* 11 × 11 is the smallest */
	a.width = b.width = a.height = b.height = 11;
	assert_int_equal(ssim_compare(&a, &b, &r, NULL), 0);
	assert_true(r.min == 1.0);
	assert_int_equal(r.changed, 0);
}

static void
ssim_diff_image_marks_changes(void **state)
{
	uint8_t			a[12 * 12 * 3], b[12 * 12 * 3], out[12 * 12 * 4];
	struct ssim_image	va = { a, 12, 12, 36, 3 }, vb = { b, 12, 12,
				    36, 3 };

	(void)state;
	memset(a, 100, sizeof(a));
	memset(b, 100, sizeof(b));
	a[3 * 5 + 1] = 101;		/* pixel 5: a difference of 1 */
	a[3 * 7] = 0;			/* pixel 7: of 100 */
	assert_int_equal(ssim_diff_image(&va, &vb, out), 0);
	/* unchanged: grey, faded toward white */
	assert_int_equal(out[0], out[1]);
	assert_int_equal(out[0], 255 - (255 - 100) / 4);
	assert_int_equal(out[3], 255);
	/* a difference of 1: pale red; of 32 and more: red */
	assert_int_equal(out[4 * 5], 255);
	assert_true(out[4 * 5 + 1] > 150 && out[4 * 5 + 1] < 200);
	assert_int_equal(out[4 * 7 + 1], 0);
	assert_int_equal(out[4 * 7 + 2], 0);
	vb.width = 11;
	assert_int_equal(ssim_diff_image(&va, &vb, out), -EINVAL);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(ssim_matches_scikit_image),
		cmocka_unit_test(ssim_tint_caught_per_channel),
		cmocka_unit_test(ssim_symmetric_strided_mixed),
		cmocka_unit_test(ssim_refuses_what_cannot_be_compared),
		cmocka_unit_test(ssim_diff_image_marks_changes),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
