/*
 * ssim — per-channel SSIM (ssim.h).
 *
 * The Gaussian filter is separable, so each of the five local moments
 * (μa, μb, E[a²], E[b²], E[ab]) is a vertical pass then a horizontal one,
 * the order scipy.ndimage.gaussian_filter runs them in.  One output row
 * at a time: the vertical pass reads the 11 source rows around it (rows
 * past an edge mirrored) from one channel copied out of the interleaved
 * pixels, into five row buffers padded by mirroring at both ends; the
 * horizontal pass then gives the five moments of each pixel of the row,
 * and the SSIM at once.  Memory is the channel copies (2 × width ×
 * height bytes) and 10 rows of doubles, not five planes of them: a 4K
 * frame costs 17 MB, not 330.
 *
 * Each tap pair is summed as scipy's correlate1d does for a symmetric
 * kernel — the centre first, then (left + right) × weight from the
 * outermost pair in — and the products a², b², ab of 8-bit values are
 * exact in a double, so the local values are scipy's own.  Written so
 * the compiler can vectorise the inner loops over x.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ledger/ssim.h"

#define R	SSIM_RADIUS

/*
 * scipy's _gaussian_kernel1d(1.5, 0, 5): exp(-0.5 / σ² · x²) for x in
 * −5..5, divided by its sum.  numpy sums 11 values as eight lanes folded
 * in a tree, then the last three one by one; summed the same way here so
 * the weights are the same doubles.  g[0] is the centre, g[k] the weight
 * k pixels away.
 */
static void
kernel(double g[R + 1])
{
	double	phi[2 * R + 1], lane, sum;
	int	i;

	for (i = 0; i < 2 * R + 1; i++) {
		double x = i - R;

		phi[i] = exp(-0.5 / (SSIM_SIGMA * SSIM_SIGMA) * (x * x));
	}
	lane = ((phi[0] + phi[1]) + (phi[2] + phi[3])) +
	    ((phi[4] + phi[5]) + (phi[6] + phi[7]));
	sum = lane + phi[8] + phi[9] + phi[10];
	for (i = 0; i <= R; i++)
		g[i] = phi[R + i] / sum;
}

/* scipy's "reflect": −1 → 0, −2 → 1; n → n − 1 (n ≥ R, so once). */
static inline long
mirror(long i, long n)
{
	if (i < 0)
		return -i - 1;
	if (i >= n)
		return 2 * n - i - 1;
	return i;
}

static int
image_ok(const struct ssim_image *m)
{
	return m != NULL && m->px != NULL && (m->channels == 3 ||
	    m->channels == 4) && m->stride >= (size_t)m->width * m->channels;
}

/* One channel of an interleaved picture as a plane of bytes. */
static void
plane_copy(const struct ssim_image *m, unsigned c, uint8_t *out)
{
	uint32_t	x, y;

	for (y = 0; y < m->height; y++) {
		const uint8_t	*s = m->px + (size_t)y * m->stride + c;
		uint8_t		*d = out + (size_t)y * m->width;

		for (x = 0; x < m->width; x++)
			d[x] = s[(size_t)x * m->channels];
	}
}

struct work {
	long		 w, h;
	double		 g[R + 1];
	double		 c1, c2;
	uint8_t		*pa, *pb;	/* the channel's planes */
	double		*v[5];		/* vertical sums, R padding each side */
	double		*m[5];		/* the five moments of one row */
};

/* The vertical pass for output row y: v[q][R + x] for every x, then the
 * mirrored padding. */
static void
vertical(struct work *k, long y)
{
	const uint8_t	*ra[2 * R + 1], *rb[2 * R + 1];
	double		*va = k->v[0] + R, *vb = k->v[1] + R, *vaa = k->v[2] + R,
			*vbb = k->v[3] + R, *vab = k->v[4] + R;
	const double	 g0 = k->g[0];
	long		 x, j, q;

	for (j = -R; j <= R; j++) {
		ra[j + R] = k->pa + mirror(y + j, k->h) * k->w;
		rb[j + R] = k->pb + mirror(y + j, k->h) * k->w;
	}
	for (x = 0; x < k->w; x++) {
		double	a = ra[R][x], b = rb[R][x];

		va[x] = a * g0;
		vb[x] = b * g0;
		vaa[x] = a * a * g0;
		vbb[x] = b * b * g0;
		vab[x] = a * b * g0;
	}
	for (j = R; j >= 1; j--) {
		const uint8_t	*a0 = ra[R - j], *a1 = ra[R + j];
		const uint8_t	*b0 = rb[R - j], *b1 = rb[R + j];
		const double	 gj = k->g[j];

		for (x = 0; x < k->w; x++) {
			double	p = a0[x], s = a1[x], u = b0[x], t = b1[x];

			va[x] += (p + s) * gj;
			vb[x] += (u + t) * gj;
			vaa[x] += (p * p + s * s) * gj;
			vbb[x] += (u * u + t * t) * gj;
			vab[x] += (p * u + s * t) * gj;
		}
	}
	for (q = 0; q < 5; q++) {
		double	*v = k->v[q] + R;

		for (j = 1; j <= R; j++) {
			v[-j] = v[j - 1];
			v[k->w - 1 + j] = v[k->w - j];
		}
	}
}

/* The horizontal pass for x in [x0, x1) and the SSIM there; the sum of
 * the values in [s0, s1) is returned, map (the row's) gets the smallest
 * so far at each x when not NULL.  Each moment is its own loop over x
 * (contiguous, so it vectorises), the taps in the same order for every
 * x as in scipy. */
static double
horizontal(struct work *k, long x0, long x1, long s0, long s1, float *map,
    int first)
{
	const double	*g = k->g;
	double		 sum = 0;
	long		 x, j, q;

	for (q = 0; q < 5; q++) {
		const double	*v = k->v[q] + R;
		double		*h = k->m[q];

		for (x = x0; x < x1; x++)
			h[x] = v[x] * g[0];
		for (j = R; j >= 1; j--) {
			const double	gj = g[j];

			for (x = x0; x < x1; x++)
				h[x] += (v[x - j] + v[x + j]) * gj;
		}
	}
	for (x = x0; x < x1; x++) {
		double	ua = k->m[0][x], ub = k->m[1][x];
		double	sa, sb, sab, a1, a2, b1, b2, s;

		/* the expression as skimage writes it, operation for
		 * operation */
		sa = k->m[2][x] - ua * ua;
		sb = k->m[3][x] - ub * ub;
		sab = k->m[4][x] - ua * ub;
		a1 = 2 * ua * ub + k->c1;
		a2 = 2 * sab + k->c2;
		b1 = ua * ua + ub * ub + k->c1;
		b2 = sa + sb + k->c2;
		s = (a1 * a2) / (b1 * b2);
		if (x >= s0 && x < s1)
			sum += s;
		if (map != NULL && (first || s < map[x]))
			map[x] = (float)s;
	}
	return sum;
}

int
ssim_compare(const struct ssim_image *a, const struct ssim_image *b,
    struct ssim_result *r, float *map)
{
	struct work	 k;
	uint64_t	 n = 0;
	unsigned	 c, top = 0;
	long		 x, y, q;
	int		 rc = -ENOMEM;

	if (r == NULL || !image_ok(a) || !image_ok(b) ||
	    a->width != b->width || a->height != b->height)
		return -EINVAL;
	if (a->width < SSIM_WINDOW || a->height < SSIM_WINDOW)
		return -ERANGE;
	memset(r, 0, sizeof(*r));
	memset(&k, 0, sizeof(k));
	k.w = a->width;
	k.h = a->height;
	kernel(k.g);
	k.c1 = (SSIM_K1 * SSIM_RANGE) * (SSIM_K1 * SSIM_RANGE);
	k.c2 = (SSIM_K2 * SSIM_RANGE) * (SSIM_K2 * SSIM_RANGE);
	if ((k.pa = malloc((size_t)k.w * k.h)) == NULL ||
	    (k.pb = malloc((size_t)k.w * k.h)) == NULL)
		goto out;
	for (q = 0; q < 5; q++)
		if ((k.v[q] = malloc(((size_t)k.w + 2 * R) *
		    sizeof(double))) == NULL || (k.m[q] = malloc((size_t)k.w *
		    sizeof(double))) == NULL)
			goto out;

	for (c = 0; c < 3; c++) {
		double	total = 0;

		plane_copy(a, c, k.pa);
		plane_copy(b, c, k.pb);
		for (y = map ? 0 : R; y < (map ? k.h : k.h - R); y++) {
			int	inside = y >= R && y < k.h - R;

			vertical(&k, y);
			total += horizontal(&k, map ? 0 : R, map ? k.w : k.w - R,
			    inside ? R : 0, inside ? k.w - R : 0,
			    map ? map + y * k.w : NULL, c == 0);
		}
		r->channel[c] = total / ((double)(k.w - 2 * R) *
		    (double)(k.h - 2 * R));
	}
	r->min = r->channel[0];
	for (c = 1; c < 3; c++)
		if (r->channel[c] < r->min)
			r->min = r->channel[c];

	for (y = 0; y < k.h; y++) {
		const uint8_t	*pa = a->px + (size_t)y * a->stride;
		const uint8_t	*pb = b->px + (size_t)y * b->stride;

		for (x = 0; x < k.w; x++, pa += a->channels, pb += b->channels) {
			unsigned d = 0;

			for (c = 0; c < 3; c++) {
				unsigned e = pa[c] > pb[c] ? pa[c] - pb[c] :
				    pb[c] - pa[c];

				if (e > d)
					d = e;
			}
			n += d > 0;
			if (d > top)
				top = d;
		}
	}
	r->pixels = (uint64_t)k.w * (uint64_t)k.h;
	r->changed = n;
	r->changed_share = (double)n / (double)r->pixels;
	r->max_delta = top;
	rc = 0;
out:
	free(k.pa);
	free(k.pb);
	for (q = 0; q < 5; q++) {
		free(k.v[q]);
		free(k.m[q]);
	}
	return rc;
}

int
ssim_diff_image(const struct ssim_image *a, const struct ssim_image *b,
    uint8_t *out)
{
	uint32_t	x, y;

	if (out == NULL || !image_ok(a) || !image_ok(b) ||
	    a->width != b->width || a->height != b->height)
		return -EINVAL;
	for (y = 0; y < a->height; y++) {
		const uint8_t	*pa = a->px + (size_t)y * a->stride;
		const uint8_t	*pb = b->px + (size_t)y * b->stride;

		for (x = 0; x < a->width; x++, pa += a->channels,
		    pb += b->channels, out += 4) {
			unsigned d = 0, c, luma;

			for (c = 0; c < 3; c++) {
				unsigned e = pa[c] > pb[c] ? pa[c] - pb[c] :
				    pb[c] - pa[c];

				if (e > d)
					d = e;
			}
			if (d == 0) {
				/* BT.601 luma, in integers, a quarter of
				 * its distance from white */
				luma = (299 * pb[0] + 587 * pb[1] +
				    114 * pb[2] + 500) / 1000;
				out[0] = out[1] = out[2] =
				    (uint8_t)(255 - (255 - luma) / 4);
			} else {
				unsigned t = d >= 32 ? 32 : d;

				out[0] = 255;
				out[1] = out[2] = (uint8_t)(200 - 200 * t / 32);
			}
			out[3] = 255;
		}
	}
	return 0;
}
