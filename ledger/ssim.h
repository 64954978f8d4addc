/*
 * ssim — the structural similarity of two 8-bit RGB(A) pictures, per
 * colour channel (Wang, Bovik, Sheikh and Simoncelli 2004): what the
 * correctness gate judges a frame by (docs/gate.md).  Pure: no I/O, no
 * loop; memory from malloc only, for the work rows.
 *
 * The parameters are the paper's: an 11×11 Gaussian window of σ 1.5
 * (weights normalised to sum 1), K1 0.01, K2 0.03, a data range of 255,
 * population (not sample) variances.  It computes what scikit-image's
 *
 *     structural_similarity(x, y, gaussian_weights=True, sigma=1.5,
 *                           use_sample_covariance=False, data_range=255)
 *
 * computes for one channel (x, y: the channel as a 2-D array): the
 * window's sums run over the picture mirrored at its edges (scipy's
 * "reflect": d c b a | a b c d), and the mean leaves out a strip of 5
 * pixels (the window's half-width) all round, where the window would
 * reach past the picture.  The filter's sums are taken in scipy's order,
 * so the per-pixel values agree with it to the last bits; the mean is
 * summed in another order, and agrees within 1e-12 (tests/ledger/test_ssim.c
 * holds it to the reference values of tests/fixtures/ssim/).
 *
 * Each of R, G and B is compared on its own, and the gate judges the
 * smallest: a tint of one material that the luma of a frame hardly sees
 * (0.987 on luma, 0.960 on green, in the fixture of docs/gate.md) is a
 * visible change.  Alpha is never compared: a captured canvas is opaque.
 */
#ifndef LEDGER_SSIM_H
#define LEDGER_SSIM_H

#include <stddef.h>
#include <stdint.h>

#define SSIM_WINDOW	11		/* the window's side, in pixels */
#define SSIM_RADIUS	5		/* its half-width: the strip left out */
#define SSIM_SIGMA	1.5
#define SSIM_K1		0.01
#define SSIM_K2		0.03
#define SSIM_RANGE	255.0

/* A picture to compare: rows of 8-bit pixels, R G B (A) in that order. */
struct ssim_image {
	const uint8_t	*px;		/* the top row */
	uint32_t	 width, height;
	size_t		 stride;	/* bytes from a row to the next */
	unsigned	 channels;	/* 3 (RGB) or 4 (RGBA) bytes a pixel */
};

struct ssim_result {
	double		channel[3];	/* the mean SSIM of R, G and B */
	double		min;		/* the smallest of the three */
	/*
	 * A pixel is "changed" when any of its R, G, B values differs
	 * between the two pictures at all (|a − b| ≥ 1; alpha is not
	 * looked at).  Exact, with no tolerance: two renders of unchanged
	 * code under the virtual clock are identical, so any difference is
	 * one; how much it matters is the SSIM's to say.
	 */
	uint64_t	pixels;		/* width × height */
	uint64_t	changed;
	double		changed_share;	/* changed / pixels */
	unsigned	max_delta;	/* the largest |a − b| of any R, G, B */
};

/*
 * Compare a with b.  Both must have the same width and height, each at
 * least SSIM_WINDOW; channels may differ (RGB against RGBA).  map, when
 * not NULL, gets width × height floats, row by row: at each pixel the
 * smallest of the three channels' local SSIM (scikit-image's full=True
 * image, borders included).  Returns 0 with *r filled in, -EINVAL (not
 * the same size, channels not 3 or 4, a stride shorter than a row, a
 * NULL), -ERANGE (a side shorter than SSIM_WINDOW: there is no window
 * to compare) or -ENOMEM.
 */
int	ssim_compare(const struct ssim_image *a, const struct ssim_image *b,
	    struct ssim_result *r, float *map);

/*
 * The difference picture a person looks at: out gets width × height RGBA
 * pixels.  An unchanged pixel is b's (the golden's) luma, faded toward
 * white, so the scene is recognisable; a changed one is red, pale for a
 * difference of 1 and full red from 32 up.  a and b as for ssim_compare
 * (same size; any size here).  0 or -EINVAL.
 */
int	ssim_diff_image(const struct ssim_image *a, const struct ssim_image *b,
	    uint8_t *out);

#endif
