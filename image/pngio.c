/*
 * pngio — the PNG codec (pngio.h).
 *
 * libpng's simplified API keeps its setjmp to itself and says what went
 * wrong in image.message; a failed call has already freed what it held
 * (png_image_free is still called on every path: it accepts a freed
 * image).  Warnings (an ancillary chunk with a bad CRC, say) are not
 * errors: the picture is whole.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <png.h>

#include "base/base.h"
#include "image/pngio.h"

static const uint8_t	signature[8] = { 0x89, 'P', 'N', 'G', '\r', '\n',
			    0x1a, '\n' };

/*
 * The first chunk, up to IEND, whose declared length runs past the bytes
 * there are; NULL when every one fits.  libpng allocates a chunk's
 * declared length before it reads the chunk: an 86-byte file declaring a
 * 1.8 GB sPLT asked for 1.8 GB (found by fuzz_png).  In memory, a chunk
 * longer than what is left is a broken file, said before libpng sees it.
 */
static const uint8_t *
chunk_past_end(const uint8_t *p, size_t len, uint32_t *declared)
{
	size_t	at = sizeof(signature);

	while (at + 12 <= len) {
		uint32_t n = (uint32_t)p[at] << 24 | (uint32_t)p[at + 1] << 16 |
		    (uint32_t)p[at + 2] << 8 | p[at + 3];

		if (n > len - at - 12) {
			*declared = n;
			return p + at;
		}
		if (memcmp(p + at + 4, "IEND", 4) == 0)
			break;
		at += 12 + (size_t)n;
	}
	return NULL;
}

int
pngio_decode(const void *data, size_t len, uint64_t max_pixels,
    struct pngio_image *out, char *why, size_t cap)
{
	png_image	im;
	uint8_t		*px;
	const uint8_t	*chunk;
	size_t		 i, n;
	uint32_t	 declared;

	memset(out, 0, sizeof(*out));
	if (max_pixels == 0)
		max_pixels = PNGIO_MAX_PIXELS;
	/* said before libpng says something less plain */
	if (len == 0)
		return base_say(why, cap, -EINVAL, "an empty file is not a PNG");
	if (len < sizeof(signature) || memcmp(data, signature,
	    sizeof(signature)) != 0)
		return base_say(why, cap, -EINVAL, "not a PNG (no PNG signature)");
	if ((chunk = chunk_past_end(data, len, &declared)) != NULL) {
		char	type[5];

		/* a chunk's type is four letters; anything else is shown as ? */
		for (i = 0; i < 4; i++)
			type[i] = (chunk[4 + i] | 0x20) >= 'a' &&
			    (chunk[4 + i] | 0x20) <= 'z' ? (char)chunk[4 + i] : '?';
		type[4] = '\0';
		return base_say(why, cap, -EINVAL, "a broken PNG: its %s chunk at "
		    "byte %zu declares %" PRIu32 " bytes, past the file's end "
		    "(%zu bytes)", type, (size_t)(chunk - (const uint8_t *)data),
		    declared, len);
	}
	memset(&im, 0, sizeof(im));
	im.version = PNG_IMAGE_VERSION;
	if (!png_image_begin_read_from_memory(&im, data, len)) {
		base_say(why, cap, -EINVAL, "not a readable PNG: %s", im.message);
		png_image_free(&im);
		return -EINVAL;
	}
	if (im.width == 0 || im.height == 0 || im.width > PNGIO_MAX_SIDE ||
	    im.height > PNGIO_MAX_SIDE ||
	    (uint64_t)im.width * im.height > max_pixels) {
		base_say(why, cap, -EFBIG, "a PNG of %" PRIu32 "×%" PRIu32 " is "
		    "larger than allowed (%d pixels a side, %llu in all)",
		    (uint32_t)im.width, (uint32_t)im.height, PNGIO_MAX_SIDE,
		    (unsigned long long)max_pixels);
		png_image_free(&im);
		return -EFBIG;
	}
	/* 16-bit without gAMA or sRGB is sRGB, as browsers take it (set
	 * after begin_read, which initialises flags) */
	im.flags |= PNG_IMAGE_FLAG_16BIT_sRGB;
	im.format = PNG_FORMAT_RGBA;
	n = PNG_IMAGE_SIZE(im);
	if ((px = malloc(n)) == NULL) {
		png_image_free(&im);
		return base_say(why, cap, -ENOMEM, "out of memory for a %" PRIu32
		    "×%" PRIu32 " picture", (uint32_t)im.width,
		    (uint32_t)im.height);
	}
	if (!png_image_finish_read(&im, NULL, px, 0, NULL)) {
		base_say(why, cap, -EINVAL, "a broken PNG: %s", im.message);
		png_image_free(&im);
		free(px);
		return -EINVAL;
	}
	out->px = px;
	out->width = im.width;
	out->height = im.height;
	out->opaque = 1;
	for (i = 3; i < n; i += 4)
		if (px[i] != 255) {
			out->opaque = 0;
			break;
		}
	png_image_free(&im);
	return 0;
}

int
pngio_encode(const struct pngio_image *img, int fast, void **png,
    size_t *len, char *why, size_t cap)
{
	png_image	 im;
	png_alloc_size_t n;
	uint8_t		*rgb = NULL;
	const uint8_t	*src = img->px;
	void		*buf, *small;
	size_t		 i, count;

	*png = NULL;
	*len = 0;
	if (img->px == NULL || img->width == 0 || img->height == 0 ||
	    img->width > PNGIO_MAX_SIDE || img->height > PNGIO_MAX_SIDE)
		return base_say(why, cap, -EINVAL, "no picture to encode");
	memset(&im, 0, sizeof(im));
	im.version = PNG_IMAGE_VERSION;
	im.width = img->width;
	im.height = img->height;
	im.format = img->opaque ? PNG_FORMAT_RGB : PNG_FORMAT_RGBA;
	im.flags = fast ? PNG_IMAGE_FLAG_FAST : 0;
	count = (size_t)img->width * img->height;
	if (img->opaque) {
		/* libpng takes RGB as RGB: the alpha bytes go */
		if ((rgb = malloc(count * 3)) == NULL)
			return base_say(why, cap, -ENOMEM, "out of memory");
		for (i = 0; i < count; i++)
			memcpy(rgb + 3 * i, img->px + 4 * i, 3);
		src = rgb;
	}
	n = PNG_IMAGE_PNG_SIZE_MAX(im);
	if ((buf = malloc(n)) == NULL) {
		free(rgb);
		return base_say(why, cap, -ENOMEM, "out of memory");
	}
	if (!png_image_write_to_memory(&im, buf, &n, 0, src, 0, NULL)) {
		base_say(why, cap, -EINVAL, "cannot encode the PNG: %s", im.message);
		png_image_free(&im);
		free(rgb);
		free(buf);
		return -EINVAL;
	}
	png_image_free(&im);
	free(rgb);
	/* the bound is generous: give the rest back */
	if ((small = realloc(buf, n)) != NULL)
		buf = small;
	*png = buf;
	*len = n;
	return 0;
}

void
pngio_image_free(struct pngio_image *img)
{
	if (img == NULL)
		return;
	free(img->px);
	memset(img, 0, sizeof(*img));
}
