/*
 * fuzz_png — the PNG decoder (image/pngio.h) on any bytes: the gate reads
 * goldens and frames that anyone could have written.  Every chunk of a
 * PNG carries a CRC, which would stop a fuzzer at the first changed byte,
 * so when the input's first byte is odd the harness recomputes the CRC of
 * every chunk of the rest before decoding it, and the chunk parsers and
 * the inflater behind the CRCs get fuzzed too.
 *
 * What must hold: a decode either fails with a reason, no pixels and one
 * of the errors pngio.h lists, or gives a picture of sane dimensions
 * (1 … PNGIO_MAX_SIDE a side, within the pixel limit asked for) whose
 * `opaque` tells the truth, which encodes and decodes back to the same
 * pixels, and which — when a window fits — has an SSIM of exactly 1
 * with itself and no changed pixel.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "image/pngio.h"
#include "ledger/ssim.h"

int	LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);

#define MAX_PIXELS	((uint64_t)1 << 22)	/* fast enough to fuzz */

static uint32_t	crc_table[256];

static uint32_t
crc32_of(const uint8_t *p, size_t n)
{
	uint32_t	c = 0xffffffffu;
	size_t		i;

	if (crc_table[1] == 0) {
		for (uint32_t k = 0; k < 256; k++) {
			uint32_t v = k;

			for (int j = 0; j < 8; j++)
				v = v & 1 ? 0xedb88320u ^ (v >> 1) : v >> 1;
			crc_table[k] = v;
		}
	}
	for (i = 0; i < n; i++)
		c = crc_table[(c ^ p[i]) & 0xff] ^ (c >> 8);
	return c ^ 0xffffffffu;
}

/* Put the right CRC after every whole chunk after the signature. */
static void
fix_crcs(uint8_t *p, size_t n)
{
	size_t	at = 8;

	while (at + 12 <= n) {
		uint32_t len = (uint32_t)p[at] << 24 | (uint32_t)p[at + 1] << 16 |
		    (uint32_t)p[at + 2] << 8 | p[at + 3];
		uint32_t crc;

		if (len > n - at - 12)
			break;
		crc = crc32_of(p + at + 4, 4 + (size_t)len);
		p[at + 8 + len] = (uint8_t)(crc >> 24);
		p[at + 9 + len] = (uint8_t)(crc >> 16);
		p[at + 10 + len] = (uint8_t)(crc >> 8);
		p[at + 11 + len] = (uint8_t)crc;
		at += 12 + (size_t)len;
	}
}

int
LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
	struct pngio_image	 im, back;
	char			 why[PNGIO_WHY_MAX];
	uint8_t			*buf;
	void			*png;
	size_t			 len, i, n;
	int			 rc, opaque;

	if (size == 0)
		return 0;
	if ((buf = malloc(size)) == NULL)
		abort();
	memcpy(buf, data + 1, size - 1);
	if (data[0] & 1)
		fix_crcs(buf, size - 1);
	why[0] = '\0';
	rc = pngio_decode(buf, size - 1, MAX_PIXELS, &im, why, sizeof(why));
	free(buf);
	if (rc != 0) {
		if (rc != -EINVAL && rc != -EFBIG && rc != -ENOMEM)
			abort();
		if (why[0] == '\0' || im.px != NULL || im.width || im.height)
			abort();	/* a refusal says why and holds nothing */
		return 0;
	}
	if (im.px == NULL || im.width < 1 || im.height < 1 ||
	    im.width > PNGIO_MAX_SIDE || im.height > PNGIO_MAX_SIDE ||
	    (uint64_t)im.width * im.height > MAX_PIXELS)
		abort();
	n = (size_t)im.width * im.height;
	for (i = 0, opaque = 1; i < n; i++)
		if (im.px[4 * i + 3] != 255)
			opaque = 0;
	if (opaque != im.opaque)
		abort();
	/* what was decoded encodes, and comes back the same */
	if (pngio_encode(&im, 1, &png, &len, why, sizeof(why)) != 0)
		abort();
	if (pngio_decode(png, len, MAX_PIXELS, &back, why, sizeof(why)) != 0)
		abort();
	if (back.width != im.width || back.height != im.height ||
	    memcmp(back.px, im.px, n * 4) != 0)
		abort();
	free(png);
	pngio_image_free(&back);
	if (im.width >= SSIM_WINDOW && im.height >= SSIM_WINDOW && n <= 65536) {
		struct ssim_image	v = { im.px, im.width, im.height,
					    (size_t)im.width * 4, 4 };
		struct ssim_result	r;

		if (ssim_compare(&v, &v, &r, NULL) != 0 || r.min != 1.0 ||
		    r.changed != 0 || r.max_delta != 0)
			abort();
	}
	pngio_image_free(&im);
	return 0;
}
