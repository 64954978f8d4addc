/*
 * pngio — PNG in and out of memory, through libpng's simplified API
 * (png_image_begin_read_from_memory, png_image_finish_read,
 * png_image_write_to_memory): the correctness gate's frames and goldens
 * (docs/gate.md).  No I/O: the caller reads and writes the bytes, so a
 * file is opened by the project's rules (never a FIFO, never a torn
 * write) and hashed from the same bytes that are decoded.
 *
 * Every picture comes out as 8-bit RGBA, rows top down, whatever the file
 * held: grey, palette (tRNS made alpha), 16-bit (taken as sRGB when the
 * file says nothing: what browsers and PIL do, where libpng alone would
 * call it linear), interlaced.  A file with a gamma other than sRGB's is
 * converted to sRGB, as libpng's simplified API does for 8-bit output.
 * Bytes after IEND are ignored, as every reader ignores them.
 */
#ifndef IMAGE_PNGIO_H
#define IMAGE_PNGIO_H

#include <stddef.h>
#include <stdint.h>

/* What a decoder accepts, at most: a side of 16,384 pixels, and 32 Mpx
 * (8K UHD, 7680×4320, fits; 128 MB decoded). */
#define PNGIO_MAX_SIDE		16384
#define PNGIO_MAX_PIXELS	((uint64_t)1 << 25)

#define PNGIO_WHY_MAX		160

struct pngio_image {
	uint8_t		*px;		/* width × height × 4 bytes, RGBA */
	uint32_t	 width, height;
	int		 opaque;	/* every alpha is 255 */
};

/*
 * Decode data[0..len).  max_pixels bounds width × height (0: the default,
 * PNGIO_MAX_PIXELS), checked from the header before the pixels are
 * allocated, so a lying header costs nothing.  0 with *out filled in
 * (pngio_image_free it), or -EINVAL (not a PNG, or a broken one: a bad
 * CRC, a truncated file, missing data), -EFBIG (larger than allowed) or
 * -ENOMEM, with why[cap] in words (libpng's own message where it has
 * one).  *out is zeroed on error.
 */
int	pngio_decode(const void *data, size_t len, uint64_t max_pixels,
	    struct pngio_image *out, char *why, size_t cap);

/*
 * Encode img: RGB when img->opaque (a captured canvas), else RGBA;
 * 8-bit, with libpng's sRGB marking.  The same pixels give the same bytes.
 * fast: favour speed over size (PNG_IMAGE_FLAG_FAST), for pictures made
 * to be looked at once.  0 with *png (free it) and *len, or -EINVAL /
 * -ENOMEM with why.
 */
int	pngio_encode(const struct pngio_image *img, int fast, void **png,
	    size_t *len, char *why, size_t cap);

/* Free the pixels; the struct is zeroed.  Accepts NULL. */
void	pngio_image_free(struct pngio_image *img);

#endif
