/*
 * pngio: every case of tests/fixtures/png/png.json (made by
 * tests/gen_ssim_fixtures.py, byte by byte, not by libpng) decodes to the
 * RGBA it lists, or is refused with a reason — grey, grey+alpha, a
 * palette with tRNS, 16-bit, Adam7, bytes after IEND; a truncated file,
 * a bad CRC, not a PNG, no bytes, a lying header, no IDAT.  Then the
 * encoder: a round trip gives the same pixels, an opaque picture is
 * written as RGB, the same pixels give the same bytes, and the size
 * limits hold.
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

#include "tests/unitfs.h"

#include <cjson/cJSON.h>

#include "image/pngio.h"

#define DIR	"tests/fixtures/png/"

static void
pngio_fixtures(void **state)
{
	size_t		 len, flen, i;
	char		*text = unitfs_slurp(DIR "png.json", &len), path[256];
	char		 why[PNGIO_WHY_MAX];
	cJSON		*doc = cJSON_Parse(text), *c;
	int		 good = 0, bad = 0;

	(void)state;
	assert_non_null(doc);
	cJSON_ArrayForEach(c, cJSON_GetObjectItem(doc, "cases")) {
		const char		*file = cJSON_GetObjectItem(c,
					    "file")->valuestring;
		struct pngio_image	 im;
		void			*data;
		int			 rc;

		snprintf(path, sizeof(path), DIR "%s", file);
		data = unitfs_slurp(path, &flen);
		why[0] = '\0';
		rc = pngio_decode(data, flen, 0, &im, why, sizeof(why));
		if (cJSON_IsTrue(cJSON_GetObjectItem(c, "refused"))) {
			if (rc == 0)
				fail_msg("%s: decoded, should be refused", file);
			assert_true(rc == -EINVAL || rc == -EFBIG);
			assert_true(why[0] != '\0');
			assert_null(im.px);
			printf("refused %-20s %s\n", file, why);
			bad++;
		} else {
			const cJSON	*px = cJSON_GetObjectItem(c, "rgba");
			int		 tol = cJSON_GetObjectItem(c,
					    "tolerance")->valueint;

			if (rc != 0)
				fail_msg("%s: %s", file, why);
			assert_int_equal(im.width, cJSON_GetObjectItem(c,
			    "width")->valueint);
			assert_int_equal(im.height, cJSON_GetObjectItem(c,
			    "height")->valueint);
			assert_int_equal(cJSON_GetArraySize(px),
			    (int)(im.width * im.height * 4));
			for (i = 0; i < (size_t)cJSON_GetArraySize(px); i++) {
				int want = cJSON_GetArrayItem(px, (int)i)->valueint;
				int got = im.px[i];

				if (abs(want - got) > tol)
					fail_msg("%s: byte %zu is %d, not %d",
					    file, i, got, want);
			}
			good++;
			pngio_image_free(&im);
		}
		free(data);
	}
	assert_true(good >= 6 && bad >= 6);
	cJSON_Delete(doc);
	free(text);
}

static void
make(struct pngio_image *im, uint32_t w, uint32_t h, int opaque)
{
	size_t	i;

	im->width = w;
	im->height = h;
	im->px = malloc((size_t)w * h * 4);
	assert_non_null(im->px);
	for (i = 0; i < (size_t)w * h * 4; i++)
		im->px[i] = (uint8_t)(i * 37 + i / 7);
	if (opaque)
		for (i = 3; i < (size_t)w * h * 4; i += 4)
			im->px[i] = 255;
	im->opaque = opaque;
}

static void
pngio_round_trip(void **state)
{
	struct pngio_image	 im, back;
	void			*png, *again;
	size_t			 len, len2;
	char			 why[PNGIO_WHY_MAX];
	int			 opaque, fast;

	(void)state;
	for (opaque = 0; opaque <= 1; opaque++)
		for (fast = 0; fast <= 1; fast++) {
			make(&im, 37, 19, opaque);
			assert_int_equal(pngio_encode(&im, fast, &png, &len, why,
			    sizeof(why)), 0);
			/* IHDR's colour type: 2 RGB, 6 RGBA */
			assert_int_equal(((uint8_t *)png)[25], opaque ? 2 : 6);
			assert_int_equal(pngio_decode(png, len, 0, &back, why,
			    sizeof(why)), 0);
			assert_int_equal(back.width, 37);
			assert_int_equal(back.height, 19);
			assert_int_equal(back.opaque, opaque);
			assert_memory_equal(back.px, im.px, 37 * 19 * 4);
			/* the same pixels, the same bytes */
			assert_int_equal(pngio_encode(&im, fast, &again, &len2,
			    why, sizeof(why)), 0);
			assert_int_equal(len, len2);
			assert_memory_equal(png, again, len);
			free(png);
			free(again);
			pngio_image_free(&back);
			pngio_image_free(&im);
			assert_null(im.px);
		}
}

static void
pngio_limits(void **state)
{
	struct pngio_image	 im, back;
	void			*png;
	size_t			 len;
	char			 why[PNGIO_WHY_MAX];

	(void)state;
	make(&im, 64, 32, 1);
	assert_int_equal(pngio_encode(&im, 1, &png, &len, why, sizeof(why)), 0);
	/* 2048 pixels: refused under a limit of 2047, taken at 2048 */
	assert_int_equal(pngio_decode(png, len, 2047, &back, why, sizeof(why)),
	    -EFBIG);
	assert_non_null(strstr(why, "64×32"));
	assert_int_equal(pngio_decode(png, len, 2048, &back, why, sizeof(why)),
	    0);
	pngio_image_free(&back);
	/* every prefix of a good file is refused, never read as a picture */
	for (size_t n = 0; n < len; n += 1 + n / 8)
		assert_int_not_equal(pngio_decode(png, n, 0, &back, why,
		    sizeof(why)), 0);
	free(png);
	pngio_image_free(&im);
	/* nothing to encode */
	assert_int_equal(pngio_encode(&im, 0, &png, &len, why, sizeof(why)),
	    -EINVAL);
	pngio_image_free(NULL);
}

/*
 * A chunk whose declared length runs past the file's end is refused by
 * name before libpng reads it: libpng allocates the declared length
 * first, and fuzz_png had an 86-byte file ask for 1.8 GB that way.
 */
static void
pngio_chunk_past_end(void **state)
{
	struct pngio_image	 im, back;
	uint8_t			*bad;
	void			*png;
	size_t			 len;
	char			 why[PNGIO_WHY_MAX];

	(void)state;
	make(&im, 8, 4, 1);
	assert_int_equal(pngio_encode(&im, 1, &png, &len, why, sizeof(why)), 0);
	/* the chunk after IHDR (8 + 25 bytes in) made to declare 2^31 - 1
	 * bytes: a file of `len` bytes cannot hold it */
	assert_non_null(bad = malloc(len));
	memcpy(bad, png, len);
	bad[33] = 0x7f; bad[34] = bad[35] = bad[36] = 0xff;
	assert_int_equal(pngio_decode(bad, len, 0, &back, why, sizeof(why)),
	    -EINVAL);
	assert_null(back.px);
	assert_non_null(strstr(why, "declares 2147483647 bytes, past the "
	    "file's end"));
	/* the good file still reads */
	assert_int_equal(pngio_decode(png, len, 0, &back, why, sizeof(why)), 0);
	pngio_image_free(&back);
	free(bad);
	free(png);
	pngio_image_free(&im);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(pngio_fixtures),
		cmocka_unit_test(pngio_round_trip),
		cmocka_unit_test(pngio_limits),
		cmocka_unit_test(pngio_chunk_past_end),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
