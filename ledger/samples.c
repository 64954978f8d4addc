/*
 * samples — packed timeline samples and exact medians over them (see
 * samples.h).
 *
 * A sealed block is one allocation: a header, then bit-packed columns,
 * each value a code of the column's width above the column's base:
 *
 *	time	 n - 1 deltas from t0 (above the smallest delta)
 *	build	 n codes: index + 1, 0 for none (above the smallest code)
 *	col c	 n codes: the decimal mantissa at the column's scale (above
 *		 the smallest; code 0 is "not measured" when any is not), or
 *		 64-bit raw doubles (NaN: not measured)
 *
 * A decimal column decodes as mantissa / 10^scale: one correctly rounded
 * division, which is what strtod gave for the text the writer printed.
 * Sealing checks it for every value and falls back to raw when any value
 * would not come back bit for bit (-0, huge, many digits).
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "samples.h"

#define SCALE_MAX	9
#define NBINS		4096

enum { COL_NONE = 0, COL_DEC = 1, COL_RAW = 2 };

struct scol {
	uint8_t		mode;
	uint8_t		scale;
	uint8_t		w;
	uint8_t		absent;		/* code 0 means not measured */
	uint32_t	measured;	/* values that are not NAN */
	int64_t		base;		/* mantissa of code 0 (or of code 1) */
	uint64_t	kmin, kmax;	/* their smallest and largest keys */
};

struct sblock {
	uint32_t	size;		/* bytes, header included */
	uint16_t	n;
	uint8_t		ncols;
	uint8_t		tw, bw;
	uint8_t		pad[7];
	int64_t		t0, dmin;
	int64_t		tmin, tmax;
	uint32_t	bmin, bmax;	/* build codes */
	struct scol	col[SAMPLES_MAXCOLS];
	uint64_t	bits[];
};

static const double p10[SCALE_MAX + 1] = {
	1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9
};

void
samples_init(struct samples *s, int ncols)
{
	memset(s, 0, offsetof(struct samples, pt));
	s->ncols = ncols;
}

void
samples_free(struct samples *s)
{
	size_t	i;

	for (i = 0; i < s->nblocks; i++)
		free(s->blocks[i]);
	free(s->blocks);
	samples_init(s, s->ncols);
}

size_t
samples_count(const struct samples *s)
{
	return s->sealed + s->np;
}

size_t
samples_bytes(const struct samples *s)
{
	return s->bytes + s->capblocks * sizeof(*s->blocks);
}

/* --- bits ------------------------------------------------------------- */

static inline unsigned
bitwidth(uint64_t x)
{
	return x == 0 ? 0 : 64 - (unsigned)__builtin_clzll(x);
}

static inline void
put_bits(uint64_t *w, size_t off, unsigned width, uint64_t v)
{
	size_t		i = off >> 6;
	unsigned	sh = off & 63;

	if (width == 0)
		return;
	w[i] |= v << sh;
	if (sh + width > 64)
		w[i + 1] |= v >> (64 - sh);
}

/* Bit offsets of a block's columns. */
static size_t
off_builds(const struct sblock *b)
{
	return (size_t)(b->n - 1) * b->tw;
}

static size_t
off_col(const struct sblock *b, int c)
{
	size_t	off = off_builds(b) + (size_t)b->n * b->bw;
	int	i;

	for (i = 0; i < c; i++)
		off += (size_t)b->n * b->col[i].w;
	return off;
}

/* A double as an unsigned key in the same order (-0 just below +0). */
static inline uint64_t
key_of(double d)
{
	uint64_t	u;

	memcpy(&u, &d, sizeof(u));
	return u >> 63 ? ~u : u | 0x8000000000000000ull;
}

/* --- sealing ---------------------------------------------------------- */

/* The mantissa of v at `scale` decimals, if it gives v back exactly. */
static inline int
dec_of(double v, int scale, int64_t *m)
{
	double	x = v * p10[scale];
	int64_t	r;

	if (!(x > -9007199254740992.0 && x < 9007199254740992.0))
		return 0;
	r = (int64_t)llrint(x);
	if ((double)r / p10[scale] != v || (r == 0 && signbit(v)))
		return 0;
	*m = r;
	return 1;
}

/* Choose a column's encoding; codes[] gets what is packed.  Each value
 * is tried at the scale reached so far and the scale raised until it is
 * exact there; a mantissa found at a smaller scale is multiplied up at
 * the end (exact at a scale stays exact at every larger one, as long as
 * the mantissa stays under 2^53). */
static void
col_plan(const double *v, size_t n, struct scol *c, uint64_t *codes)
{
	static const int64_t	i10[SCALE_MAX + 1] = {
		1, 10, 100, 1000, 10000, 100000, 1000000, 10000000,
		100000000, 1000000000
	};
	int64_t		m, mmin = INT64_MAX, mmax = INT64_MIN, lim;
	uint8_t		at[SAMPLES_BLOCK];
	int		scale = 0, any = 0, absent = 0;
	size_t		i;

	memset(c, 0, sizeof(*c));
	for (i = 0; i < n; i++) {
		if (isnan(v[i])) {
			absent = 1;
			continue;
		}
		any = 1;
		while (!dec_of(v[i], scale, &m))
			if (++scale > SCALE_MAX)
				goto raw;
		codes[i] = (uint64_t)m;
		at[i] = (uint8_t)scale;
	}
	if (!any)
		return;			/* COL_NONE: nothing measured */
	for (i = 0; i < n; i++) {
		if (isnan(v[i]))
			continue;
		m = (int64_t)codes[i];
		if (at[i] != scale) {
			lim = 9007199254740992LL / i10[scale - at[i]];
			if (m >= lim || m <= -lim)
				goto raw;	/* too big at the final scale */
			m *= i10[scale - at[i]];
			codes[i] = (uint64_t)m;
		}
		if (m < mmin)
			mmin = m;
		if (m > mmax)
			mmax = m;
	}
	c->mode = COL_DEC;
	c->scale = (uint8_t)scale;
	c->absent = (uint8_t)absent;
	c->base = mmin - absent;
	c->w = (uint8_t)bitwidth((uint64_t)mmax - (uint64_t)c->base);
	for (i = 0; i < n; i++)
		codes[i] = isnan(v[i]) ? 0 : codes[i] - (uint64_t)c->base;
	return;
raw:
	c->mode = COL_RAW;
	c->scale = 0;
	c->absent = (uint8_t)absent;
	c->w = 64;
	for (i = 0; i < n; i++)
		memcpy(&codes[i], &v[i], sizeof(codes[i]));
}

static int
seal(struct samples *s)
{
	uint64_t	 codes[SAMPLES_MAXCOLS][SAMPLES_BLOCK];
	uint64_t	 bcode[SAMPLES_BLOCK];
	struct sblock	 h, *b;
	size_t		 n = s->np, i, bits, off, size;
	int64_t		 dmin = INT64_MAX, dmax = INT64_MIN;
	uint32_t	 bmin = UINT32_MAX, bmax = 0;
	int		 c;

	if (s->nblocks == s->capblocks) {
		size_t		 cap = s->capblocks ? s->capblocks * 2 : 64;
		struct sblock	**nb = realloc(s->blocks, cap * sizeof(*nb));

		if (nb == NULL)
			return -ENOMEM;
		s->blocks = nb;
		s->capblocks = cap;
	}
	memset(&h, 0, sizeof(h));
	h.n = (uint16_t)n;
	h.ncols = (uint8_t)s->ncols;
	h.t0 = h.tmin = h.tmax = s->pt[0];
	for (i = 0; i < n; i++) {
		uint32_t	bc = s->pb[i] == SAMPLES_NO_BUILD ? 0 :
				    s->pb[i] + 1;

		if (i > 0) {
			int64_t	d = s->pt[i] - s->pt[i - 1];

			if (d < dmin)
				dmin = d;
			if (d > dmax)
				dmax = d;
		}
		if (s->pt[i] < h.tmin)
			h.tmin = s->pt[i];
		if (s->pt[i] > h.tmax)
			h.tmax = s->pt[i];
		if (bc < bmin)
			bmin = bc;
		if (bc > bmax)
			bmax = bc;
		bcode[i] = bc;
	}
	h.dmin = n > 1 ? dmin : 0;
	h.tw = (uint8_t)(n > 1 ? bitwidth((uint64_t)dmax - (uint64_t)dmin) : 0);
	h.bmin = bmin;
	h.bmax = bmax;
	h.bw = (uint8_t)bitwidth(bmax - bmin);
	bits = (n - 1) * h.tw + n * h.bw;
	for (c = 0; c < s->ncols; c++) {
		struct scol	*k = &h.col[c];

		col_plan(s->pv[c], n, k, codes[c]);
		bits += n * k->w;
		for (i = 0; i < n; i++) {
			uint64_t	key;

			if (isnan(s->pv[c][i]))
				continue;
			key = key_of(s->pv[c][i]);
			if (k->measured++ == 0 || key < k->kmin)
				k->kmin = key;
			if (k->measured == 1 || key > k->kmax)
				k->kmax = key;
		}
	}
	size = sizeof(h) + ((bits + 63) / 64 + 1) * sizeof(uint64_t);
	if ((b = calloc(1, size)) == NULL)
		return -ENOMEM;
	h.size = (uint32_t)size;
	memcpy(b, &h, sizeof(h));
	for (i = 1; i < n; i++)
		put_bits(b->bits, (i - 1) * h.tw, h.tw,
		    (uint64_t)(s->pt[i] - s->pt[i - 1]) - (uint64_t)h.dmin);
	off = off_builds(b);
	for (i = 0; i < n; i++)
		put_bits(b->bits, off + i * h.bw, h.bw, bcode[i] - bmin);
	for (c = 0; c < s->ncols; c++) {
		off = off_col(b, c);
		for (i = 0; i < n; i++)
			put_bits(b->bits, off + i * h.col[c].w, h.col[c].w,
			    codes[c][i]);
	}
	s->blocks[s->nblocks++] = b;
	s->sealed += n;
	s->bytes += size;
	s->np = 0;
	return 0;
}

int
samples_add(struct samples *s, int64_t t, uint32_t build, const double *v)
{
	int	c;

	if (s->np == SAMPLES_BLOCK) {
		int	rc = seal(s);

		if (rc != 0)
			return rc;
	}
	s->pt[s->np] = t;
	s->pb[s->np] = build;
	for (c = 0; c < s->ncols; c++)
		s->pv[c][s->np] = v[c];
	s->np++;
	return 0;
}

/* --- decoding --------------------------------------------------------- */

/* One block's worth of samples, decoded as needed. */
struct chunk {
	size_t		n;
	int64_t		t[SAMPLES_BLOCK];
	uint32_t	b[SAMPLES_BLOCK];	/* build codes */
	double		v[SAMPLES_MAXCOLS][SAMPLES_BLOCK];	/* NAN: none */
	uint64_t	u[SAMPLES_BLOCK];	/* codes, before they are those */
};

/* n codes of `width` bits from bit `off`: no branch per value (a block
 * has a spare word after its last, so w[k + 1] is always there). */
static void
unpack(const uint64_t *w, size_t off, unsigned width, size_t n, uint64_t *out)
{
	uint64_t	mask = width == 64 ? ~0ull : (1ull << width) - 1;
	size_t		i;

	if (width == 0) {
		memset(out, 0, n * sizeof(*out));
		return;
	}
	for (i = 0; i < n; i++, off += width) {
		size_t		k = off >> 6;
		unsigned	sh = off & 63;

		out[i] = ((w[k] >> sh) | ((w[k + 1] << 1) << (63 - sh))) & mask;
	}
}

static void
decode_col(const struct sblock *b, int col, struct chunk *ch)
{
	const struct scol	*c = &b->col[col];
	double			*v = ch->v[col], d = p10[c->scale];
	size_t			 i;

	switch (c->mode) {
	case COL_NONE:
		for (i = 0; i < b->n; i++)
			v[i] = NAN;
		break;
	case COL_RAW:
		unpack(b->bits, off_col(b, col), 64, b->n, ch->u);
		memcpy(v, ch->u, b->n * sizeof(double));
		break;
	default:
		unpack(b->bits, off_col(b, col), c->w, b->n, ch->u);
		for (i = 0; i < b->n; i++)
			v[i] = c->absent && ch->u[i] == 0 ? NAN :
			    (double)(int64_t)(ch->u[i] + (uint64_t)c->base) / d;
		break;
	}
}

/* What a visit decodes: the columns in cmask, times and builds. */
struct need {
	unsigned	cmask;
	int		t, b;
};

static void
decode(const struct sblock *b, const struct need *nd, struct chunk *ch)
{
	size_t	i;
	int	c;

	ch->n = b->n;
	if (nd->t) {
		/* unsigned: a block from a checkpoint may not add up, and
		 * samples_block_add refuses it — without an overflow */
		uint64_t	t = (uint64_t)b->t0;

		unpack(b->bits, 0, b->tw, b->n - 1u, ch->u);
		ch->t[0] = b->t0;
		for (i = 1; i < b->n; i++) {
			t += ch->u[i - 1] + (uint64_t)b->dmin;
			ch->t[i] = (int64_t)t;
		}
	}
	if (nd->b) {
		unpack(b->bits, off_builds(b), b->bw, b->n, ch->u);
		for (i = 0; i < b->n; i++)
			ch->b[i] = b->bmin + (uint32_t)ch->u[i];
	}
	for (c = 0; c < b->ncols; c++)
		if (nd->cmask & 1u << c)
			decode_col(b, c, ch);
}

/* The open block, as a chunk. */
static void
decode_open(const struct samples *s, struct chunk *ch)
{
	size_t	i;
	int	c;

	ch->n = s->np;
	for (i = 0; i < s->np; i++) {
		ch->t[i] = s->pt[i];
		ch->b[i] = s->pb[i] == SAMPLES_NO_BUILD ? 0 : s->pb[i] + 1;
		for (c = 0; c < s->ncols; c++)
			ch->v[c][i] = s->pv[c][i];
	}
}

static inline double	double_of(uint64_t);

static inline uint32_t
want_code(const struct sgroups *q)
{
	return q->build == SAMPLES_NO_BUILD ? 0 : q->build + 1;
}

int
samples_code(double v)
{
	if (v == 0 || v == 1 || v == 2)
		return (int)v;
	return SAMPLES_CODE_NONE;
}

static inline int
code_wanted(const struct sgroups *q, double v)
{
	return q->codes == 0 || (q->codes >> samples_code(v) & 1u);
}

/* Does the code filter pass every sample of block b (1), none (0), or
 * must each be looked at (-1)?  A column whose keys are all one value
 * answers from the header. */
static int
block_codes(const struct sblock *b, const struct sgroups *q)
{
	const struct scol	*c;

	if (q->codes == 0)
		return 1;
	c = &b->col[q->ccol];
	if (c->measured == 0)
		return code_wanted(q, NAN);
	if (c->measured == b->n && c->kmin == c->kmax)
		return code_wanted(q, double_of(c->kmin));
	return -1;
}

/* Could block b hold a sample of groups [ga, gb) of q? */
static int
block_wanted(const struct sblock *b, const struct sgroups *q, int ga, int gb)
{
	if (q->by_build && (want_code(q) < b->bmin || want_code(q) > b->bmax))
		return 0;
	if (block_codes(b, q) == 0)
		return 0;
	if (q->from != SAMPLES_NO_TIME && b->tmax < q->from)
		return 0;
	if (q->to != SAMPLES_NO_TIME && b->tmin > q->to)
		return 0;
	if (q->width > 0) {
		/* [t0 + ga*w, t0 + gb*w), compared without overflow */
		if (b->tmax < q->t0 || (b->tmax - q->t0) / q->width < ga)
			return 0;
		if (b->tmin >= q->t0 && (b->tmin - q->t0) / q->width >= gb)
			return 0;
	}
	return 1;
}

static inline int
group_of(const struct sgroups *q, int64_t t, uint32_t bc, double cv)
{
	int64_t	g;

	if (q->by_build && bc != want_code(q))
		return -1;
	if (!code_wanted(q, cv))
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

static int
ngroups_of(const struct sgroups *q)
{
	return q->width > 0 ? q->ngroups : 1;
}

/*
 * Visit every sample of groups [ga, gb): the chunk of each block that
 * may hold one, decoded with the columns in cmask.  The visitor sees the
 * chunk and the group of each of its samples (-1: not selected).
 */
typedef void	(*visit_fn)(void *, const struct chunk *, const int *, int);

/* The group every sample of block b falls in, or -1 if they do not all
 * fall in one (or the block may hold samples q does not select). */
static int
block_group(const struct sblock *b, const struct sgroups *q)
{
	int64_t	g;

	if (q->by_build && (b->bmin != want_code(q) || b->bmax != b->bmin))
		return -1;
	if (block_codes(b, q) != 1)
		return -1;
	if ((q->from != SAMPLES_NO_TIME && b->tmin < q->from) ||
	    (q->to != SAMPLES_NO_TIME && b->tmax > q->to))
		return -1;
	if (q->width <= 0)
		return 0;
	if (b->tmin < q->t0)
		return -1;
	g = (b->tmin - q->t0) / q->width;
	if (g >= q->ngroups || (b->tmax - q->t0) / q->width != g)
		return -1;
	return (int)g;
}

/*
 * Visit every sample of groups [ga, gb): the chunk of each block that
 * may hold one, decoded with the columns in cmask.  The visitor sees the
 * chunk and either the group of every one of its samples (whole >= 0:
 * g[] is not filled) or each sample's group in g[] (-1: not selected).
 */
static int
visit(const struct samples *s, const struct sgroups *q, unsigned cmask,
    int builds, int ga, int gb, visit_fn fn, void *arg)
{
	struct chunk	*ch;
	int		 g[SAMPLES_BLOCK], whole;
	size_t		 k, i;
	struct need	 nd = { cmask | (q->codes ? 1u << q->ccol : 0),
			    q->from != SAMPLES_NO_TIME ||
			    q->to != SAMPLES_NO_TIME || q->width > 0,
			    q->by_build || builds };

	/* zeroed: what is not decoded is never looked at, but is defined */
	if ((ch = calloc(1, sizeof(*ch))) == NULL)
		return -ENOMEM;
	for (k = 0; k <= s->nblocks; k++) {
		whole = -1;
		if (k < s->nblocks) {
			const struct sblock	*b = s->blocks[k];

			if (!block_wanted(b, q, ga, gb))
				continue;
			if ((whole = block_group(b, q)) >= 0) {
				struct need	nc = { cmask, 0, builds };

				decode(b, &nc, ch);
				fn(arg, ch, g, whole);
				continue;
			}
			decode(b, &nd, ch);
		} else if (s->np > 0)
			decode_open(s, ch);
		else
			break;
		for (i = 0; i < ch->n; i++) {
			int	x = group_of(q, ch->t[i], ch->b[i],
				    q->codes ? ch->v[q->ccol][i] : 0);

			g[i] = x >= ga && x < gb ? x : -1;
		}
		fn(arg, ch, g, -1);
	}
	free(ch);
	return 0;
}

/* --- keys and selection ----------------------------------------------- */

static inline double
double_of(uint64_t k)
{
	uint64_t	u = k >> 63 ? k & 0x7fffffffffffffffull : ~k;
	double		d;

	memcpy(&d, &u, sizeof(d));
	return d;
}

static int
key_cmp(const void *a, const void *b)
{
	uint64_t	x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* The k-th smallest of a[0..n) (reorders a): quickselect, with a sort
 * for the rest once it has gone on too long, so no input is quadratic. */
static uint64_t
kth(uint64_t *a, size_t n, size_t k)
{
	ptrdiff_t	lo = 0, hi = (ptrdiff_t)n - 1, kk = (ptrdiff_t)k;
	int		budget = 2 * (int)bitwidth(n) + 8;

	while (hi > lo) {
		ptrdiff_t	i = lo, j = hi, mid = lo + (hi - lo) / 2;
		uint64_t	x, p = a[lo], q = a[mid], r = a[hi], t;

		if (budget-- == 0) {
			qsort(a + lo, (size_t)(hi - lo + 1), sizeof(*a),
			    key_cmp);
			break;
		}
		/* median of three */
		x = p < q ? (q < r ? q : p < r ? r : p) :
		    (p < r ? p : q < r ? r : q);
		while (i <= j) {
			while (a[i] < x)
				i++;
			while (a[j] > x)
				j--;
			if (i <= j) {
				t = a[i];
				a[i] = a[j];
				a[j] = t;
				i++;
				j--;
			}
		}
		if (kk <= j)
			hi = j;
		else if (kk >= i)
			lo = i;
		else
			break;		/* a[j+1 .. i-1] all equal x */
	}
	return a[k];
}

/* --- queries ---------------------------------------------------------- */

struct tally {
	int	 col;
	size_t	*count, *measured;
	double	*max;
};

static void
tally_visit(void *arg, const struct chunk *ch, const int *g, int whole)
{
	struct tally	*t = arg;
	const double	*v = ch->v[t->col];
	size_t		 i;

	for (i = 0; i < ch->n; i++) {
		int	x = whole >= 0 ? whole : g[i];

		if (x < 0)
			continue;
		if (t->count)
			t->count[x]++;
		if (isnan(v[i]))
			continue;
		if (t->measured)
			t->measured[x]++;
		if (t->max && (isnan(t->max[x]) || v[i] > t->max[x]))
			t->max[x] = v[i];
	}
}

int
samples_tally(const struct samples *s, const struct sgroups *q, int col,
    size_t *count, size_t *measured, double *max)
{
	struct tally	t = { col, count, measured, max };
	int		n = ngroups_of(q), i;

	for (i = 0; i < n; i++) {
		if (count)
			count[i] = 0;
		if (measured)
			measured[i] = 0;
		if (max)
			max[i] = NAN;
	}
	return visit(s, q, measured || max ? 1u << col : 0, 0, 0, n,
	    tally_visit, &t);
}

struct codes_arg {
	int	 col;
	size_t	*counts;
};

static void
codes_visit(void *arg, const struct chunk *ch, const int *g, int whole)
{
	struct codes_arg	*a = arg;
	size_t			 i;

	for (i = 0; i < ch->n; i++) {
		int	x = whole >= 0 ? whole : g[i];

		if (x >= 0)
			a->counts[(size_t)x * SAMPLES_CODES +
			    (size_t)samples_code(ch->v[a->col][i])]++;
	}
}

int
samples_codes(const struct samples *s, const struct sgroups *q, int col,
    size_t *counts)
{
	struct codes_arg	a = { col, counts };
	int			n = ngroups_of(q);

	memset(counts, 0, (size_t)n * SAMPLES_CODES * sizeof(*counts));
	return visit(s, q, 1u << col, 0, 0, n, codes_visit, &a);
}

struct sum_arg {
	int	col;
	double	sum;
	size_t	measured;
};

static void
sum_visit(void *arg, const struct chunk *ch, const int *g, int whole)
{
	struct sum_arg	*a = arg;
	size_t		 i;

	for (i = 0; i < ch->n; i++) {
		if ((whole < 0 && g[i] != 0) || isnan(ch->v[a->col][i]))
			continue;
		a->sum += ch->v[a->col][i];
		a->measured++;
	}
}

int
samples_sum(const struct samples *s, const struct sgroups *q, int col,
    double *sum, size_t *measured)
{
	struct sum_arg	a = { col, 0, 0 };
	int		rc = visit(s, q, 1u << col, 0, 0, 1, sum_visit, &a);

	*sum = a.sum;
	*measured = a.measured;
	return rc;
}

struct values_arg {
	int	 col;
	double	*out;
	size_t	 cap, n, seen, next, k;
};

static void
values_visit(void *arg, const struct chunk *ch, const int *g, int whole)
{
	struct values_arg	*a = arg;
	size_t			 i;

	for (i = 0; i < ch->n && a->k < a->cap; i++) {
		if ((whole < 0 && g[i] != 0) || isnan(ch->v[a->col][i]))
			continue;
		if (a->seen++ != a->next)
			continue;
		a->out[a->k++] = ch->v[a->col][i];
		/* the next one kept: floor(k * n / cap), or every one */
		a->next = a->n > a->cap ? (size_t)((uint64_t)a->k *
		    (uint64_t)a->n / (uint64_t)a->cap) : a->k;
	}
}

int
samples_values(const struct samples *s, const struct sgroups *q, int col,
    double *out, size_t cap, size_t *n)
{
	struct values_arg	a = { col, out, cap, 0, 0, 0, 0 };
	size_t			measured = 0;
	int			rc;

	*n = 0;
	if (cap == 0)
		return 0;
	if ((rc = samples_tally(s, q, col, NULL, &measured, NULL)) != 0)
		return rc;
	a.n = measured;
	if ((rc = visit(s, q, 1u << col, 0, 0, 1, values_visit, &a)) != 0)
		return rc;
	*n = a.k;
	return 0;
}

struct builds_arg {
	int	(*fn)(void *, int, uint32_t);
	void	 *arg;
	int	  rc;
};

static void
builds_visit(void *arg, const struct chunk *ch, const int *g, int whole)
{
	struct builds_arg	*a = arg;
	size_t			 i;

	for (i = 0; i < ch->n && a->rc == 0; i++) {
		int	x = whole >= 0 ? whole : g[i];

		if (x >= 0)
			a->rc = a->fn(a->arg, x, ch->b[i] == 0 ?
			    SAMPLES_NO_BUILD : ch->b[i] - 1);
	}
}

int
samples_each_build(const struct samples *s, const struct sgroups *q,
    int (*fn)(void *, int, uint32_t), void *arg)
{
	struct builds_arg	a = { fn, arg, 0 };
	int			rc;

	if ((rc = visit(s, q, 0, 1, 0, ngroups_of(q), builds_visit, &a)) != 0)
		return rc;
	return a.rc;
}

/*
 * Medians of columns [0, ncols) at once.  The unit of work is a pair
 * (group, column), numbered g * ncols + c.  Pass one counts each pair's
 * measured values and their key range; pairs that fit the scratch are
 * then gathered in batches of consecutive pairs that fill it (one pass
 * over the blocks that batch's groups can be in) and selected; a pair
 * too big for the scratch is narrowed on its own (median_big).
 */
/* Per pair: measured count and key range.  A block that lies wholly in
 * one group answers from its header; only the others are decoded. */
static void
range_note(size_t *cnt, uint64_t *kmin, uint64_t *kmax, size_t p, size_t n,
    uint64_t lo, uint64_t hi)
{
	if (n == 0)
		return;
	if (cnt[p] == 0 || lo < kmin[p])
		kmin[p] = lo;
	if (cnt[p] == 0 || hi > kmax[p])
		kmax[p] = hi;
	cnt[p] += n;
}

static int
range_pass(const struct samples *s, const struct sgroups *q, int ncols,
    size_t *cnt, uint64_t *kmin, uint64_t *kmax)
{
	struct chunk	*ch;
	struct need	 nd = { ((1u << ncols) - 1) |
			    (q->codes ? 1u << q->ccol : 0),
			    q->from != SAMPLES_NO_TIME ||
			    q->to != SAMPLES_NO_TIME || q->width > 0,
			    q->by_build };
	size_t		 k, i;
	int		 c, ng = ngroups_of(q);

	if ((ch = calloc(1, sizeof(*ch))) == NULL)
		return -ENOMEM;
	for (k = 0; k <= s->nblocks; k++) {
		if (k < s->nblocks) {
			const struct sblock	*b = s->blocks[k];
			int			 whole;

			if (!block_wanted(b, q, 0, ng))
				continue;
			if ((whole = block_group(b, q)) >= 0) {
				for (c = 0; c < ncols; c++)
					range_note(cnt, kmin, kmax,
					    (size_t)whole * (size_t)ncols +
					    (size_t)c, b->col[c].measured,
					    b->col[c].kmin, b->col[c].kmax);
				continue;
			}
			decode(b, &nd, ch);
		} else if (s->np > 0)
			decode_open(s, ch);
		else
			break;
		for (i = 0; i < ch->n; i++) {
			int	g = group_of(q, ch->t[i], ch->b[i],
				    q->codes ? ch->v[q->ccol][i] : 0);

			if (g < 0)
				continue;
			for (c = 0; c < ncols; c++)
				if (!isnan(ch->v[c][i])) {
					uint64_t	key = key_of(ch->v[c][i]);

					range_note(cnt, kmin, kmax, (size_t)g *
					    (size_t)ncols + (size_t)c, 1, key,
					    key);
				}
		}
	}
	free(ch);
	return 0;
}

/* Gather the keys of pairs [pa, pb) (those that fit) into their slices
 * of the scratch. */
struct gather {
	int		 ncols;
	uint64_t	*scratch;
	size_t		*off, *fill;	/* by pair - pa */
	size_t		 pa, pb;
	const size_t	*cnt;
};

static void
gather_visit(void *arg, const struct chunk *ch, const int *g, int whole)
{
	struct gather	*a = arg;
	size_t		 i, p;
	int		 c;

	if (whole >= 0) {
		for (c = 0; c < a->ncols; c++) {
			uint64_t	*o;

			p = (size_t)whole * (size_t)a->ncols + (size_t)c;
			if (p < a->pa || p >= a->pb ||
			    a->cnt[p] > SAMPLES_SCRATCH)
				continue;
			o = a->scratch + a->off[p - a->pa];
			for (i = 0; i < ch->n; i++)
				if (!isnan(ch->v[c][i]))
					o[a->fill[p - a->pa]++] =
					    key_of(ch->v[c][i]);
		}
		return;
	}
	for (c = 0; c < a->ncols; c++)
		for (i = 0; i < ch->n; i++) {
			if (g[i] < 0 || isnan(ch->v[c][i]))
				continue;
			p = (size_t)g[i] * (size_t)a->ncols + (size_t)c;
			if (p < a->pa || p >= a->pb ||
			    a->cnt[p] > SAMPLES_SCRATCH)
				continue;
			a->scratch[a->off[p - a->pa] + a->fill[p - a->pa]++] =
			    key_of(ch->v[c][i]);
		}
}

/* One pair's keys in [lo, hi]: counted in bins (bins != NULL, bin =
 * (k - lo) >> shift) or gathered into scratch. */
struct narrow {
	int		 group, col;
	uint64_t	 lo, hi;
	uint32_t	*bins;
	unsigned	 shift;
	uint64_t	*scratch;
	size_t		 fill;
};

static void
narrow_visit(void *arg, const struct chunk *ch, const int *g, int whole)
{
	struct narrow	*h = arg;
	const double	*v = ch->v[h->col];
	size_t		 i;

	if (whole >= 0 && whole != h->group)
		return;
	for (i = 0; i < ch->n; i++) {
		uint64_t	k;

		if ((whole < 0 && g[i] != h->group) || isnan(v[i]))
			continue;
		k = key_of(v[i]);
		if (k < h->lo || k > h->hi)
			continue;
		if (h->bins != NULL)
			h->bins[(k - h->lo) >> h->shift]++;
		else
			h->scratch[h->fill++] = k;
	}
}

/*
 * The median of one pair too big for the scratch: narrow the key range
 * that holds the rank by histogram passes (each divides it by NBINS)
 * until what is left fits, then gather and select.
 */
static int
median_big(const struct samples *s, const struct sgroups *q, int col,
    int group, size_t n, uint64_t lo, uint64_t hi, uint64_t *scratch,
    double *out)
{
	size_t		rank = (n + 1) / 2 - 1, below = 0;
	uint32_t	*bins;
	int		rc = 0;

	if ((bins = malloc(NBINS * sizeof(*bins))) == NULL)
		return -ENOMEM;
	for (;;) {
		struct narrow	h = { group, col, lo, hi, NULL, 0, scratch, 0 };
		size_t		b, cum = 0;
		uint64_t	span;

		if (lo == hi) {
			*out = double_of(lo);
			break;
		}
		if (n <= SAMPLES_SCRATCH) {
			if ((rc = visit(s, q, 1u << col, 0, group, group + 1,
			    narrow_visit, &h)) != 0)
				break;
			*out = double_of(kth(scratch, h.fill, rank - below));
			break;
		}
		h.bins = bins;
		for (h.shift = 0; ((hi - lo) >> h.shift) >= NBINS; h.shift++)
			;
		memset(bins, 0, NBINS * sizeof(*bins));
		if ((rc = visit(s, q, 1u << col, 0, group, group + 1,
		    narrow_visit, &h)) != 0)
			break;
		for (b = 0; b < NBINS - 1 && below + cum + bins[b] <= rank;
		    b++)
			cum += bins[b];
		below += cum;
		n = bins[b];
		lo += (uint64_t)b << h.shift;
		span = (1ull << h.shift) - 1;
		if (hi - lo > span)
			hi = lo + span;
	}
	free(bins);
	return rc;
}

int
samples_medians(const struct samples *s, const struct sgroups *q, int ncols,
    double *const *median)
{
	int		 ng = ngroups_of(q), g, c, rc = -ENOMEM;
	size_t		 np = (size_t)ng * (size_t)ncols, p, pa, total = 0;
	size_t		*cnt = calloc(np, sizeof(*cnt));
	size_t		*off = calloc(np, sizeof(*off));
	size_t		*fill = calloc(np, sizeof(*fill));
	uint64_t	*kmin = calloc(np, sizeof(*kmin));
	uint64_t	*kmax = calloc(np, sizeof(*kmax));
	uint64_t	*scratch = NULL;
	unsigned	 cmask = (1u << ncols) - 1;

	if (!cnt || !off || !fill || !kmin || !kmax)
		goto done;
	if ((rc = range_pass(s, q, ncols, cnt, kmin, kmax)) != 0)
		goto done;
	/* scratch for the biggest batch: every small pair, up to the cap
	 * (which a big pair needs in its last pass) */
	for (p = 0; p < np; p++)
		total += cnt[p] <= SAMPLES_SCRATCH ? cnt[p] : SAMPLES_SCRATCH;
	if (total > SAMPLES_SCRATCH)
		total = SAMPLES_SCRATCH;
	rc = -ENOMEM;
	if ((scratch = malloc((total + 1) * sizeof(*scratch))) == NULL)
		goto done;
	for (g = 0; g < ng; g++)
		for (c = 0; c < ncols; c++)
			median[c][g] = NAN;
	/* pairs that fit, in batches that fill the scratch */
	for (pa = 0; pa < np; ) {
		struct gather	a = { ncols, scratch, off, fill, pa, 0, cnt };
		size_t		sum = 0, pb;

		for (pb = pa; pb < np && (cnt[pb] > SAMPLES_SCRATCH ||
		    sum + cnt[pb] <= SAMPLES_SCRATCH); pb++) {
			off[pb - pa] = sum;
			fill[pb - pa] = 0;
			if (cnt[pb] <= SAMPLES_SCRATCH)
				sum += cnt[pb];
		}
		a.pb = pb;
		if (sum > 0 && (rc = visit(s, q, cmask, 0,
		    (int)(pa / (size_t)ncols),
		    (int)((pb - 1) / (size_t)ncols) + 1,
		    gather_visit, &a)) != 0)
			goto done;
		for (p = pa; p < pb; p++)
			if (cnt[p] > 0 && cnt[p] <= SAMPLES_SCRATCH)
				median[p % (size_t)ncols][p / (size_t)ncols] =
				    double_of(kth(scratch + off[p - pa], cnt[p],
				    (cnt[p] + 1) / 2 - 1));
		pa = pb;
	}
	/* and those that do not, one by one */
	for (p = 0; p < np; p++)
		if (cnt[p] > SAMPLES_SCRATCH &&
		    (rc = median_big(s, q, (int)(p % (size_t)ncols),
		    (int)(p / (size_t)ncols), cnt[p], kmin[p], kmax[p],
		    scratch, &median[p % (size_t)ncols][p / (size_t)ncols])) != 0)
			goto done;
	rc = 0;
done:
	free(cnt);
	free(off);
	free(fill);
	free(kmin);
	free(kmax);
	free(scratch);
	return rc;
}

/* --- checkpoints ------------------------------------------------------ */

size_t
samples_nblocks(const struct samples *s)
{
	return s->nblocks;
}

void
samples_block(const struct samples *s, size_t i, const void **p, size_t *len)
{
	*p = s->blocks[i];
	*len = s->blocks[i]->size;
}

/*
 * Does the block's header say what its samples are?  The seal writes the
 * exact ranges and counts; the queries rely on them.  0 or -EINVAL.
 */
static int
block_check(const struct sblock *b)
{
	const struct need	 all = { (1u << b->ncols) - 1, 1, 1 };
	struct chunk		*ch;
	int64_t			 tmin, tmax;
	uint32_t		 bmin, bmax;
	size_t			 i;
	int			 c, rc = -EINVAL;

	if ((ch = malloc(sizeof(*ch))) == NULL)
		return -ENOMEM;
	decode(b, &all, ch);
	tmin = tmax = ch->t[0];
	bmin = bmax = ch->b[0];
	for (i = 1; i < ch->n; i++) {
		tmin = ch->t[i] < tmin ? ch->t[i] : tmin;
		tmax = ch->t[i] > tmax ? ch->t[i] : tmax;
		bmin = ch->b[i] < bmin ? ch->b[i] : bmin;
		bmax = ch->b[i] > bmax ? ch->b[i] : bmax;
	}
	if (tmin != b->tmin || tmax != b->tmax || bmin != b->bmin ||
	    bmax != b->bmax)
		goto out;
	for (c = 0; c < b->ncols; c++) {
		const struct scol	*k = &b->col[c];
		uint64_t		 kmin = 0, kmax = 0, key;
		uint32_t		 measured = 0;

		for (i = 0; i < ch->n; i++) {
			if (isnan(ch->v[c][i]))
				continue;
			key = key_of(ch->v[c][i]);
			kmin = measured == 0 || key < kmin ? key : kmin;
			kmax = measured == 0 || key > kmax ? key : kmax;
			measured++;
		}
		if (measured != k->measured || (measured > 0 &&
		    (kmin != k->kmin || kmax != k->kmax)))
			goto out;
	}
	rc = 0;
out:
	free(ch);
	return rc;
}

int
samples_bounds(const struct samples *s, int64_t *tmin, int64_t *tmax,
    uint32_t *max_build)
{
	uint32_t	code = 0;
	size_t		i;
	int		any = 0;

	for (i = 0; i < s->nblocks; i++) {
		const struct sblock	*b = s->blocks[i];

		*tmin = !any || b->tmin < *tmin ? b->tmin : *tmin;
		*tmax = !any || b->tmax > *tmax ? b->tmax : *tmax;
		code = b->bmax > code ? b->bmax : code;
		any = 1;
	}
	for (i = 0; i < s->np; i++) {
		uint32_t	bc = s->pb[i] == SAMPLES_NO_BUILD ? 0 :
				    s->pb[i] + 1;

		*tmin = !any || s->pt[i] < *tmin ? s->pt[i] : *tmin;
		*tmax = !any || s->pt[i] > *tmax ? s->pt[i] : *tmax;
		code = bc > code ? bc : code;
		any = 1;
	}
	*max_build = code == 0 ? SAMPLES_NO_BUILD : code - 1;
	return any ? 0 : -ENOENT;
}

int
samples_block_add(struct samples *s, const void *p, size_t len)
{
	struct sblock	h, *b;
	size_t		bits;
	int		c, rc;

	if (len < sizeof(h))
		return -EINVAL;
	memcpy(&h, p, sizeof(h));
	if (h.size != len || h.n == 0 || h.n > SAMPLES_BLOCK ||
	    h.ncols != s->ncols || h.tw > 64 || h.bw > 32 ||
	    h.tmin > h.tmax || h.bmin > h.bmax)
		return -EINVAL;
	bits = (size_t)(h.n - 1) * h.tw + (size_t)h.n * h.bw;
	for (c = 0; c < s->ncols; c++) {
		const struct scol	*k = &h.col[c];

		if (k->mode > COL_RAW || k->w > 64 || k->scale > SCALE_MAX ||
		    (k->mode == COL_NONE && k->w != 0) ||
		    (k->mode == COL_RAW && k->w != 64))
			return -EINVAL;
		bits += (size_t)h.n * k->w;
	}
	if (sizeof(h) + ((bits + 63) / 64 + 1) * sizeof(uint64_t) != len)
		return -EINVAL;
	if (s->nblocks == s->capblocks) {
		size_t		 cap = s->capblocks ? s->capblocks * 2 : 64;
		struct sblock	**nb = realloc(s->blocks, cap * sizeof(*nb));

		if (nb == NULL)
			return -ENOMEM;
		s->blocks = nb;
		s->capblocks = cap;
	}
	if ((b = malloc(len)) == NULL)
		return -ENOMEM;
	memcpy(b, p, len);
	if ((rc = block_check(b)) != 0) {
		free(b);
		return rc;
	}
	s->blocks[s->nblocks++] = b;
	s->sealed += h.n;
	s->bytes += len;
	return 0;
}
