/*
 * checkpoint — the fold's whole state as bytes, and back (ledger.h).
 *
 * Layout, native byte order (a checkpoint is a cache on the machine that
 * wrote it, not an interchange format):
 *
 *	"SLOPTCKP"  u32 version  u32 byte-order mark
 *	options     from_ms, to_ms, include_automated, want_timeline,
 *	            the occurrences_of id (or none)
 *	sections    counts, timeline span, builds, rows, fixes, skipped
 *	            lines, occurrences, heartbeat samples, hitch samples
 *	u64 total length   u32 CRC-32C of everything before it
 *
 * Reading checks, in this order, that it is a checkpoint of this version
 * at all, that its length is the one it says (a torn write ends early),
 * the CRC (which catches every flipped byte and burst up to 32 bits),
 * the byte order and the fold options; then every section is read with
 * bounds checks, so even a checkpoint that passes the CRC by accident
 * cannot make the reader go past its bytes.  Any doubt refuses the whole
 * checkpoint: the caller folds the ledger from the start instead.
 *
 * Samples are saved as their packed blocks, byte for byte; the open
 * block and the caches (lookup tables, shapes, the last build and day)
 * are rebuilt.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ledger.h"
#include "ledger_impl.h"

#define MAGIC		"SLOPTCKP"
#define BYTE_ORDER_MARK	0x01020304u
#define TRAILER		(sizeof(uint64_t) + sizeof(uint32_t))
/*
 * No fold makes a time further from 1970 than this: times come from
 * ISO 8601 strings with four-digit years (iso_parse_ms).  A checkpoint's
 * time beyond it is nonsense, and refusing it keeps the timeline's
 * arithmetic (spans, bucket widths) clear of overflow.
 */
#define TIME_BOUND	1000000000000000LL	/* ms: some 31,700 years */

enum {
	SEC_COUNTS = 1, SEC_SPAN, SEC_BUILDS, SEC_ROWS, SEC_FIXES, SEC_SKIPS,
	SEC_OCC, SEC_HB, SEC_HP, SEC_END
};

/*
 * CRC-32C (Castagnoli): the same bytes on every machine, from the SSE4.2
 * instruction where there is one (some 10 GB/s: a 1 GB ledger's
 * checkpoint is 21 MB) and from this table elsewhere.
 */
static const uint32_t crc_table[256] = {
	0x00000000, 0xf26b8303, 0xe13b70f7, 0x1350f3f4, 0xc79a971f, 0x35f1141c,
	0x26a1e7e8, 0xd4ca64eb, 0x8ad958cf, 0x78b2dbcc, 0x6be22838, 0x9989ab3b,
	0x4d43cfd0, 0xbf284cd3, 0xac78bf27, 0x5e133c24, 0x105ec76f, 0xe235446c,
	0xf165b798, 0x030e349b, 0xd7c45070, 0x25afd373, 0x36ff2087, 0xc494a384,
	0x9a879fa0, 0x68ec1ca3, 0x7bbcef57, 0x89d76c54, 0x5d1d08bf, 0xaf768bbc,
	0xbc267848, 0x4e4dfb4b, 0x20bd8ede, 0xd2d60ddd, 0xc186fe29, 0x33ed7d2a,
	0xe72719c1, 0x154c9ac2, 0x061c6936, 0xf477ea35, 0xaa64d611, 0x580f5512,
	0x4b5fa6e6, 0xb93425e5, 0x6dfe410e, 0x9f95c20d, 0x8cc531f9, 0x7eaeb2fa,
	0x30e349b1, 0xc288cab2, 0xd1d83946, 0x23b3ba45, 0xf779deae, 0x05125dad,
	0x1642ae59, 0xe4292d5a, 0xba3a117e, 0x4851927d, 0x5b016189, 0xa96ae28a,
	0x7da08661, 0x8fcb0562, 0x9c9bf696, 0x6ef07595, 0x417b1dbc, 0xb3109ebf,
	0xa0406d4b, 0x522bee48, 0x86e18aa3, 0x748a09a0, 0x67dafa54, 0x95b17957,
	0xcba24573, 0x39c9c670, 0x2a993584, 0xd8f2b687, 0x0c38d26c, 0xfe53516f,
	0xed03a29b, 0x1f682198, 0x5125dad3, 0xa34e59d0, 0xb01eaa24, 0x42752927,
	0x96bf4dcc, 0x64d4cecf, 0x77843d3b, 0x85efbe38, 0xdbfc821c, 0x2997011f,
	0x3ac7f2eb, 0xc8ac71e8, 0x1c661503, 0xee0d9600, 0xfd5d65f4, 0x0f36e6f7,
	0x61c69362, 0x93ad1061, 0x80fde395, 0x72966096, 0xa65c047d, 0x5437877e,
	0x4767748a, 0xb50cf789, 0xeb1fcbad, 0x197448ae, 0x0a24bb5a, 0xf84f3859,
	0x2c855cb2, 0xdeeedfb1, 0xcdbe2c45, 0x3fd5af46, 0x7198540d, 0x83f3d70e,
	0x90a324fa, 0x62c8a7f9, 0xb602c312, 0x44694011, 0x5739b3e5, 0xa55230e6,
	0xfb410cc2, 0x092a8fc1, 0x1a7a7c35, 0xe811ff36, 0x3cdb9bdd, 0xceb018de,
	0xdde0eb2a, 0x2f8b6829, 0x82f63b78, 0x709db87b, 0x63cd4b8f, 0x91a6c88c,
	0x456cac67, 0xb7072f64, 0xa457dc90, 0x563c5f93, 0x082f63b7, 0xfa44e0b4,
	0xe9141340, 0x1b7f9043, 0xcfb5f4a8, 0x3dde77ab, 0x2e8e845f, 0xdce5075c,
	0x92a8fc17, 0x60c37f14, 0x73938ce0, 0x81f80fe3, 0x55326b08, 0xa759e80b,
	0xb4091bff, 0x466298fc, 0x1871a4d8, 0xea1a27db, 0xf94ad42f, 0x0b21572c,
	0xdfeb33c7, 0x2d80b0c4, 0x3ed04330, 0xccbbc033, 0xa24bb5a6, 0x502036a5,
	0x4370c551, 0xb11b4652, 0x65d122b9, 0x97baa1ba, 0x84ea524e, 0x7681d14d,
	0x2892ed69, 0xdaf96e6a, 0xc9a99d9e, 0x3bc21e9d, 0xef087a76, 0x1d63f975,
	0x0e330a81, 0xfc588982, 0xb21572c9, 0x407ef1ca, 0x532e023e, 0xa145813d,
	0x758fe5d6, 0x87e466d5, 0x94b49521, 0x66df1622, 0x38cc2a06, 0xcaa7a905,
	0xd9f75af1, 0x2b9cd9f2, 0xff56bd19, 0x0d3d3e1a, 0x1e6dcdee, 0xec064eed,
	0xc38d26c4, 0x31e6a5c7, 0x22b65633, 0xd0ddd530, 0x0417b1db, 0xf67c32d8,
	0xe52cc12c, 0x1747422f, 0x49547e0b, 0xbb3ffd08, 0xa86f0efc, 0x5a048dff,
	0x8ecee914, 0x7ca56a17, 0x6ff599e3, 0x9d9e1ae0, 0xd3d3e1ab, 0x21b862a8,
	0x32e8915c, 0xc083125f, 0x144976b4, 0xe622f5b7, 0xf5720643, 0x07198540,
	0x590ab964, 0xab613a67, 0xb831c993, 0x4a5a4a90, 0x9e902e7b, 0x6cfbad78,
	0x7fab5e8c, 0x8dc0dd8f, 0xe330a81a, 0x115b2b19, 0x020bd8ed, 0xf0605bee,
	0x24aa3f05, 0xd6c1bc06, 0xc5914ff2, 0x37faccf1, 0x69e9f0d5, 0x9b8273d6,
	0x88d28022, 0x7ab90321, 0xae7367ca, 0x5c18e4c9, 0x4f48173d, 0xbd23943e,
	0xf36e6f75, 0x0105ec76, 0x12551f82, 0xe03e9c81, 0x34f4f86a, 0xc69f7b69,
	0xd5cf889d, 0x27a40b9e, 0x79b737ba, 0x8bdcb4b9, 0x988c474d, 0x6ae7c44e,
	0xbe2da0a5, 0x4c4623a6, 0x5f16d052, 0xad7d5351,
};

uint32_t
ckpt_crc32c_sw(uint32_t crc, const void *data, size_t n)
{
	const unsigned char	*p = data;

	crc = ~crc;
	while (n-- > 0)
		crc = crc_table[(crc ^ *p++) & 0xff] ^ (crc >> 8);
	return ~crc;
}

#if defined(__x86_64__) && !defined(LEDGER_PORTABLE)
#include <immintrin.h>

__attribute__((target("sse4.2"))) static uint32_t
crc32c_hw(uint32_t crc, const void *data, size_t n)
{
	const unsigned char	*p = data;
	uint64_t		 c = ~crc;

	for (; n >= 8; n -= 8, p += 8) {
		uint64_t	w;

		memcpy(&w, p, 8);
		c = _mm_crc32_u64(c, w);
	}
	while (n-- > 0)
		c = _mm_crc32_u8((uint32_t)c, *p++);
	return ~(uint32_t)c;
}
#endif

static uint32_t
crc32_more(uint32_t crc, const void *data, size_t n)
{
#if defined(__x86_64__) && !defined(LEDGER_PORTABLE)
	if (__builtin_cpu_supports("sse4.2"))
		return crc32c_hw(crc, data, n);
#endif
	return ckpt_crc32c_sw(crc, data, n);
}

uint32_t
crc32c_more(uint32_t crc, const void *data, size_t n)
{
	return crc32_more(crc, data, n);
}

/* --- writing ---------------------------------------------------------- */

/*
 * A checkpoint is written in two steps (ledger.h): what folding changes is
 * serialised into memory on the owner's thread (begin), and the sealed
 * sample blocks — most of the bytes, and immutable once sealed — are only
 * referred to; the bytes then go out, with the length and the CRC, from
 * any thread (snap_write).  So an owner on an event loop pays for the
 * rows, builds and fixes, not for the megabytes of samples.
 */

/* A growing buffer: the serialised parts of a snapshot. */
struct mbuf {
	unsigned char	*p;
	size_t		 n, cap;
	int		 err;
};

static void
mb_bytes(struct mbuf *m, const void *p, size_t n)
{
	if (m->err || n == 0)
		return;
	if (m->n + n > m->cap) {
		size_t		 cap = m->cap ? m->cap : 4096;
		unsigned char	*np;

		while (cap < m->n + n)
			cap *= 2;
		if ((np = realloc(m->p, cap)) == NULL) {
			m->err = -ENOMEM;
			return;
		}
		m->p = np;
		m->cap = cap;
	}
	memcpy(m->p + m->n, p, n);
	m->n += n;
}

static void
mb_u8(struct mbuf *m, uint8_t v)
{
	mb_bytes(m, &v, sizeof(v));
}

static void
mb_u32(struct mbuf *m, uint32_t v)
{
	mb_bytes(m, &v, sizeof(v));
}

static void
mb_u64(struct mbuf *m, uint64_t v)
{
	mb_bytes(m, &v, sizeof(v));
}

static void
mb_i64(struct mbuf *m, int64_t v)
{
	mb_bytes(m, &v, sizeof(v));
}

static void
mb_f64(struct mbuf *m, double v)
{
	mb_bytes(m, &v, sizeof(v));
}

/* A string: u32 length, or UINT32_MAX for none. */
static void
mb_str(struct mbuf *m, const char *s)
{
	if (s == NULL) {
		mb_u32(m, UINT32_MAX);
		return;
	}
	mb_u32(m, (uint32_t)strlen(s));
	mb_bytes(m, s, strlen(s));
}

/* The sealed blocks of one samples, by reference. */
struct blkref {
	const void	**p;
	size_t		 *len;
	size_t		  n;
};

/*
 * A run of CKPT_RUN_ROWS rows as the rows section holds them.  Shared by
 * the ledger's cache and every snapshot that refers to it, so a run made
 * again while a snapshot is being written stays alive until that write is
 * done; the count is atomic because a snapshot may be freed on another
 * thread than the ledger's.
 */
struct rows_run {
	unsigned	 refs;
	size_t		 nrows;		/* the rows it holds */
	unsigned char	*p;
	size_t		 len;
};

/*
 * A checkpoint in the making: part[0], the rows' runs, part[1], the
 * blocks of hb, part[2], the blocks of hp, part[3]; the trailer is added
 * when it is written.
 */
struct ledger_snap {
	struct mbuf	  part[4];
	struct rows_run	**runs;
	size_t		  nruns;
	struct blkref	  blk[2];
	uint64_t	  size;
};

static int
blk_take(struct blkref *b, const struct samples *s)
{
	size_t	i;

	b->n = samples_nblocks(s);
	if (b->n == 0)
		return 0;
	if ((b->p = calloc(b->n, sizeof(*b->p))) == NULL ||
	    (b->len = calloc(b->n, sizeof(*b->len))) == NULL)
		return -ENOMEM;
	for (i = 0; i < b->n; i++)
		samples_block(s, i, &b->p[i], &b->len[i]);
	return 0;
}

/* The open block, copied: it changes with the next sample. */
static void
mb_open_block(struct mbuf *m, const struct samples *s)
{
	size_t	i;
	int	c;

	mb_u64(m, s->np);
	for (i = 0; i < s->np; i++) {
		mb_i64(m, s->pt[i]);
		mb_u32(m, s->pb[i]);
		for (c = 0; c < s->ncols; c++)
			mb_f64(m, s->pv[c][i]);
	}
}

/* Everything from the magic to the rows' count. */
static int
mb_head(struct mbuf *w, const struct ledger *l)
{
	size_t		 i;

	mb_bytes(w, MAGIC, 8);
	mb_u32(w, LEDGER_CHECKPOINT_VERSION);
	mb_u32(w, BYTE_ORDER_MARK);
	mb_i64(w, l->opts.from_ms);
	mb_i64(w, l->opts.to_ms);
	mb_u8(w, (uint8_t)(l->opts.include_automated != 0));
	mb_u8(w, (uint8_t)(l->opts.want_timeline != 0));
	mb_u8(w, (uint8_t)l->want_occ);
	mb_u32(w, l->occ_id);

	mb_u32(w, SEC_COUNTS);
	mb_u64(w, l->c.lines);
	mb_u64(w, l->c.folded);
	mb_u64(w, l->c.incidents);
	mb_u64(w, l->c.fixes);
	mb_u64(w, l->c.skipped);
	mb_u64(w, l->c.malformed_footprints);
	mb_u64(w, l->c.rows);
	mb_u64(w, l->c.builds);

	mb_u32(w, SEC_SPAN);
	mb_i64(w, l->tmin);
	mb_i64(w, l->tmax);

	mb_u32(w, SEC_BUILDS);
	mb_u64(w, l->nbuilds);
	for (i = 0; i < l->nbuilds; i++) {
		const struct build	*b = &l->builds[i];

		mb_str(w, b->name);
		mb_i64(w, b->first_ms);
		mb_u64(w, b->heartbeats);
		mb_u8(w, (uint8_t)(b->watched != 0));
		mb_u64(w, b->nhb);
		mb_u64(w, b->nhp);
		mb_i64(w, b->ts_min);
		mb_i64(w, b->ts_max);
		mb_f64(w, b->worst);
	}

	mb_u32(w, SEC_ROWS);
	mb_u64(w, l->nrows);
	return w->err;
}

static void
mb_row(struct mbuf *w, const struct row *r)
{
	mb_u32(w, r->id);
	mb_str(w, r->key);
	mb_str(w, r->type);
	mb_str(w, r->phase);
	mb_str(w, r->ctx);
	mb_u64(w, r->count);
	mb_i64(w, r->first_ms);
	mb_i64(w, r->last_ms);
	mb_u32(w, r->nbuilds);
	mb_bytes(w, r->builds, (size_t)r->nbuilds * sizeof(*r->builds));
	mb_u32(w, r->max_build);
	mb_i64(w, r->last_unbuilt_ms);
	mb_u8(w, (uint8_t)r->has_worst);
	mb_f64(w, r->worst);
	mb_i64(w, r->worst_ms);
	mb_u8(w, (uint8_t)r->has_verdict);
	mb_str(w, r->guess);
	mb_str(w, r->conf);
	mb_str(w, r->evid);
}

/* Everything after the rows to the heartbeats' block count. */
static int
mb_tail(struct mbuf *w, const struct ledger *l)
{
	size_t		 i, n;

	mb_u32(w, SEC_FIXES);
	mb_u64(w, l->nfixes);
	for (i = 0; i < l->nfixes; i++) {
		const struct fix	*fx = &l->fixes[i];
		char			*text = cJSON_PrintUnformatted(fx->rec);

		if (text == NULL)
			return -ENOMEM;
		mb_str(w, text);
		free(text);
		mb_bytes(w, fx->id, 8);
		mb_u8(w, (uint8_t)fx->state);
		mb_i64(w, fx->at_ms);
		mb_u8(w, (uint8_t)(fx->has_after != 0));
		mb_str(w, fx->after_build);
		mb_u64(w, fx->nfps);
		for (n = 0; n < fx->nfps; n++)
			mb_u32(w, fx->fps[n]);
	}

	mb_u32(w, SEC_SKIPS);
	mb_u64(w, l->nskips);
	n = l->nskips < LEDGER_SKIPS_KEPT ? l->nskips : LEDGER_SKIPS_KEPT;
	for (i = 0; i < n; i++) {
		const struct skip	*s = &l->skips[(l->nskips - n + i) %
					    LEDGER_SKIPS_KEPT];

		mb_u8(w, (uint8_t)s->stream);
		mb_u64(w, s->offset);
		mb_u64(w, s->length);
		mb_str(w, s->reason);
	}

	mb_u32(w, SEC_OCC);
	if (l->want_occ) {
		char	*text = cJSON_PrintUnformatted(l->occ);

		if (text == NULL)
			return -ENOMEM;
		mb_str(w, text);
		free(text);
	} else
		mb_str(w, NULL);

	mb_u32(w, SEC_HB);
	mb_u64(w, samples_nblocks(&l->hb));
	return w->err;
}

/* --- the rows' runs ------------------------------------------------------ */

static void
run_unref(struct rows_run *r)
{
	if (r == NULL || __atomic_sub_fetch(&r->refs, 1, __ATOMIC_ACQ_REL) != 0)
		return;
	free(r->p);
	free(r);
}

/* Run k of l's rows, serialised now. */
static struct rows_run *
run_make(const struct ledger *l, size_t k)
{
	struct rows_run	*run;
	struct mbuf	 m = { 0 };
	size_t		 i, first = k * CKPT_RUN_ROWS, n = l->nrows - first;

	if (n > CKPT_RUN_ROWS)
		n = CKPT_RUN_ROWS;
	for (i = first; i < first + n; i++)
		mb_row(&m, l->rows[i]);
	if (m.err || (run = calloc(1, sizeof(*run))) == NULL) {
		free(m.p);
		return NULL;
	}
	run->refs = 1;
	run->nrows = n;
	run->p = m.p;
	run->len = m.n;
	return run;
}

static size_t
runs_needed(const struct ledger *l)
{
	return (l->nrows + CKPT_RUN_ROWS - 1) / CKPT_RUN_ROWS;
}

/* Is run k missing, short of rows or changed since it was made? */
static int
run_stale(const struct ledger *l, size_t k)
{
	size_t	want = l->nrows - k * CKPT_RUN_ROWS;

	if (want > CKPT_RUN_ROWS)
		want = CKPT_RUN_ROWS;
	return k >= l->nruns || l->run_stale[k] || l->runs[k]->nrows != want;
}

void
ckpt_runs_free(struct ledger *l)
{
	size_t	k;

	for (k = 0; k < l->nruns; k++)
		run_unref(l->runs[k]);
	free(l->runs);
	free(l->run_stale);
	l->runs = NULL;
	l->run_stale = NULL;
	l->nruns = l->capruns = 0;
}

int
ledger_checkpoint_prepare(struct ledger *l, size_t budget, size_t *left)
{
	size_t		 need = runs_needed(l), k, made = 0, stale = 0;
	struct rows_run	*run;

	if (need > l->capruns) {
		size_t		 cap = l->capruns ? l->capruns : 64;
		struct rows_run	**nr;
		uint8_t		*ns;

		while (cap < need)
			cap *= 2;
		if ((nr = realloc(l->runs, cap * sizeof(*nr))) == NULL)
			return -ENOMEM;
		l->runs = nr;
		if ((ns = realloc(l->run_stale, cap)) == NULL)
			return -ENOMEM;
		l->run_stale = ns;
		l->capruns = cap;
	}
	for (k = 0; k < need; k++) {
		if (!run_stale(l, k))
			continue;
		if (made * CKPT_RUN_ROWS >= budget ||
		    (k >= l->nruns && k != l->nruns)) {
			stale++;	/* the runs are made in order */
			continue;
		}
		if ((run = run_make(l, k)) == NULL)
			return -ENOMEM;
		if (k < l->nruns)
			run_unref(l->runs[k]);
		else
			l->nruns++;
		l->runs[k] = run;
		l->run_stale[k] = 0;
		made++;
	}
	if (left != NULL)
		*left = stale * CKPT_RUN_ROWS;
	return 0;
}

void
ledger_snap_free(struct ledger_snap *s)
{
	size_t	k;
	int	i;

	if (s == NULL)
		return;
	for (i = 0; i < 4; i++)
		free(s->part[i].p);
	for (k = 0; k < s->nruns; k++)
		run_unref(s->runs[k]);
	free(s->runs);
	for (i = 0; i < 2; i++) {
		free(s->blk[i].p);
		free(s->blk[i].len);
	}
	free(s);
}

/*
 * The snapshot of l.  With `cache` (l itself, writable) the rows are the
 * cache's runs, made again only where stale and kept for the next save;
 * without, they are made for this snapshot alone.
 */
static int
snap_begin(const struct ledger *l, struct ledger *cache,
    struct ledger_snap **out)
{
	struct ledger_snap	*s;
	size_t			 i, k;
	int			 rc;

	*out = NULL;
	if ((s = calloc(1, sizeof(*s))) == NULL)
		return -ENOMEM;
	rc = mb_head(&s->part[0], l);
	if (rc == 0 && cache != NULL)
		rc = ledger_checkpoint_prepare(cache, SIZE_MAX, NULL);
	if (rc == 0 && (s->nruns = runs_needed(l)) > 0 &&
	    (s->runs = calloc(s->nruns, sizeof(*s->runs))) == NULL)
		rc = -ENOMEM;
	for (k = 0; rc == 0 && k < s->nruns; k++) {
		if (cache != NULL) {
			s->runs[k] = cache->runs[k];
			__atomic_add_fetch(&s->runs[k]->refs, 1,
			    __ATOMIC_RELAXED);
		} else if ((s->runs[k] = run_make(l, k)) == NULL)
			rc = -ENOMEM;
	}
	if (rc == 0)
		rc = mb_tail(&s->part[1], l);
	if (rc == 0)
		rc = blk_take(&s->blk[0], &l->hb);
	if (rc == 0) {
		mb_open_block(&s->part[2], &l->hb);
		mb_u32(&s->part[2], SEC_HP);
		mb_u64(&s->part[2], samples_nblocks(&l->hp));
		rc = s->part[2].err;
	}
	if (rc == 0)
		rc = blk_take(&s->blk[1], &l->hp);
	if (rc == 0) {
		mb_open_block(&s->part[3], &l->hp);
		mb_u32(&s->part[3], SEC_END);
		rc = s->part[3].err;
	}
	if (rc != 0) {
		ledger_snap_free(s);
		return rc;
	}
	s->size = TRAILER;
	for (k = 0; k < 4; k++)
		s->size += s->part[k].n;
	for (k = 0; k < s->nruns; k++)
		s->size += s->runs[k]->len;
	for (k = 0; k < 2; k++)
		for (i = 0; i < s->blk[k].n; i++)
			s->size += sizeof(uint64_t) + s->blk[k].len[i];
	*out = s;
	return 0;
}

int
ledger_checkpoint_begin(struct ledger *l, struct ledger_snap **out)
{
	return snap_begin(l, l, out);
}

uint64_t
ledger_snap_size(const struct ledger_snap *s)
{
	return s->size;
}

/* The bytes to the sink in pieces of up to 64 KiB, with the CRC. */
struct wr {
	int		(*cb)(void *, const void *, size_t);
	void		 *arg;
	unsigned char	  buf[64 * 1024];
	size_t		  n;
	uint64_t	  total;
	uint32_t	  crc;
	int		  err;
};

static void
wr_flush(struct wr *w)
{
	if (w->err == 0 && w->n > 0)
		w->err = w->cb(w->arg, w->buf, w->n);
	w->n = 0;
}

static void
wr_bytes(struct wr *w, const void *p, size_t n)
{
	const unsigned char	*c = p;

	w->crc = crc32_more(w->crc, p, n);
	w->total += n;
	while (n > 0 && w->err == 0) {
		size_t	k = sizeof(w->buf) - w->n;

		if (k > n)
			k = n;
		memcpy(w->buf + w->n, c, k);
		w->n += k;
		c += k;
		n -= k;
		if (w->n == sizeof(w->buf))
			wr_flush(w);
	}
}

int
ledger_snap_write(const struct ledger_snap *s,
    int (*cb)(void *arg, const void *data, size_t len), void *arg)
{
	struct wr	*w;
	uint64_t	 v;
	uint32_t	 crc;
	size_t		 i;
	int		 k, rc;

	if ((w = calloc(1, sizeof(*w))) == NULL)
		return -ENOMEM;
	w->cb = cb;
	w->arg = arg;
	wr_bytes(w, s->part[0].p, s->part[0].n);
	for (i = 0; i < s->nruns; i++)
		wr_bytes(w, s->runs[i]->p, s->runs[i]->len);
	for (k = 1; k < 4; k++) {
		wr_bytes(w, s->part[k].p, s->part[k].n);
		for (i = 0; k < 3 && i < s->blk[k - 1].n; i++) {
			v = s->blk[k - 1].len[i];
			wr_bytes(w, &v, sizeof(v));
			wr_bytes(w, s->blk[k - 1].p[i], s->blk[k - 1].len[i]);
		}
	}
	v = w->total + TRAILER;
	wr_bytes(w, &v, sizeof(v));
	crc = w->crc;
	wr_bytes(w, &crc, sizeof(crc));
	wr_flush(w);
	rc = w->err;
	free(w);
	return rc;
}

int
ledger_checkpoint_write(const struct ledger *l,
    int (*cb)(void *arg, const void *data, size_t len), void *arg)
{
	struct ledger_snap	*s;
	int			 rc;

	if ((rc = snap_begin(l, NULL, &s)) != 0)
		return rc;
	rc = ledger_snap_write(s, cb, arg);
	ledger_snap_free(s);
	return rc;
}

/* --- reading ---------------------------------------------------------- */

/*
 * The reader works on the bytes in hand, [p, end), and pulls more from
 * the source when they run out: a checkpoint in memory is all in hand, a
 * streamed one comes in pieces of RD_PULL (ledger_checkpoint_read_stream),
 * so a reader never holds the whole file beside the ledger it builds.
 * `more` counts the content bytes (the trailer aside) not pulled yet, so
 * every bound below is against what is left of the whole, in hand or not.
 */
#define RD_PULL		(64 * 1024)

struct rd {
	const unsigned char	*p, *end;	/* in hand */
	uint64_t		 more;		/* content not pulled yet */
	int			(*pull)(void *, void *, size_t);
	void			*arg;
	unsigned char		*buf;		/* RD_PULL bytes, streamed */
	unsigned char		*tmp;		/* a span cut by a pull */
	size_t			 tcap;
	uint32_t		 crc;		/* of what was pulled */
	int			 bad;		/* ran short or found nonsense */
	int			 err;		/* the source failed: -errno */
};

static uint64_t
rd_left(const struct rd *r)
{
	return (uint64_t)(r->end - r->p) + r->more;
}

/* Take the next piece from the source once the bytes in hand are gone. */
static int
rd_fill(struct rd *r)
{
	size_t	n;
	int	rc;

	if (r->more == 0 || r->pull == NULL) {
		r->bad = 1;
		return -1;
	}
	n = r->more < RD_PULL ? (size_t)r->more : RD_PULL;
	if ((rc = r->pull(r->arg, r->buf, n)) != 0) {
		r->bad = 1;
		r->err = rc;
		return -1;
	}
	r->crc = crc32_more(r->crc, r->buf, n);
	r->more -= n;
	r->p = r->buf;
	r->end = r->buf + n;
	return 0;
}

static int
rd_bytes(struct rd *r, void *out, size_t n)
{
	unsigned char	*o = out;

	if (r->bad || rd_left(r) < n) {
		r->bad = 1;
		memset(out, 0, n);
		return -1;
	}
	while (n > 0) {
		size_t	k = (size_t)(r->end - r->p);

		if (k == 0 && rd_fill(r) != 0) {
			memset(o, 0, n);
			return -1;
		}
		k = (size_t)(r->end - r->p);
		if (k > n)
			k = n;
		memcpy(o, r->p, k);
		r->p += k;
		o += k;
		n -= k;
	}
	return 0;
}

/* n contiguous bytes: in place when they are in hand, else gathered. */
static const unsigned char *
rd_span(struct rd *r, size_t n)
{
	const unsigned char	*q;

	if (r->bad || rd_left(r) < n) {
		r->bad = 1;
		return NULL;
	}
	if ((size_t)(r->end - r->p) >= n) {
		q = r->p;
		r->p += n;
		return q;
	}
	if (n > r->tcap) {
		unsigned char	*t = realloc(r->tmp, n);

		if (t == NULL)
			return NULL;	/* not bad: out of memory */
		r->tmp = t;
		r->tcap = n;
	}
	return rd_bytes(r, r->tmp, n) == 0 ? r->tmp : NULL;
}

static uint8_t
rd_u8(struct rd *r)
{
	uint8_t	v;

	rd_bytes(r, &v, sizeof(v));
	return v;
}

static uint32_t
rd_u32(struct rd *r)
{
	uint32_t	v;

	rd_bytes(r, &v, sizeof(v));
	return v;
}

static uint64_t
rd_u64(struct rd *r)
{
	uint64_t	v;

	rd_bytes(r, &v, sizeof(v));
	return v;
}

static int64_t
rd_i64(struct rd *r)
{
	int64_t	v;

	rd_bytes(r, &v, sizeof(v));
	return v;
}

static double
rd_f64(struct rd *r)
{
	double	v;

	rd_bytes(r, &v, sizeof(v));
	return v;
}

/* A count of items each at least `each` bytes long: more than the bytes
 * left could hold is nonsense (and would be a huge allocation). */
static size_t
rd_count(struct rd *r, size_t each)
{
	uint64_t	n = rd_u64(r);

	if (r->bad || n > rd_left(r) / each) {
		r->bad = 1;
		return 0;
	}
	return (size_t)n;
}

/* A string into a new allocation (*out NULL for none); `cap` bounds it
 * when it goes into a fixed field (0: no bound).  -1 on nonsense or no
 * memory (r->bad tells which). */
static int
rd_str(struct rd *r, char **out, size_t cap)
{
	uint32_t		 n = rd_u32(r);
	const unsigned char	*q;

	*out = NULL;
	if (r->bad)
		return -1;
	if (n == UINT32_MAX)
		return 0;
	if (n > rd_left(r) || (cap && n >= cap)) {
		r->bad = 1;
		return -1;
	}
	if ((q = rd_span(r, n)) == NULL)
		return -1;
	if (memchr(q, '\0', n) != NULL) {
		r->bad = 1;
		return -1;
	}
	if ((*out = malloc((size_t)n + 1)) == NULL)
		return -1;
	memcpy(*out, q, n);
	(*out)[n] = '\0';
	return 0;
}

/* A string into a fixed field; *has says if there was one. */
static int
rd_fixed(struct rd *r, char *dst, size_t cap, int *has)
{
	char	*s;

	if (rd_str(r, &s, cap) != 0)
		return -1;
	*has = s != NULL;
	snprintf(dst, cap, "%s", s ? s : "");
	free(s);
	return 0;
}

static int
rd_samples(struct rd *r, struct samples *s)
{
	const unsigned char	*q;
	size_t			 n, i;
	uint64_t		 len;
	int			 c, rc;

	n = rd_count(r, sizeof(uint64_t));
	for (i = 0; i < n && !r->bad; i++) {
		len = rd_u64(r);
		if (r->bad || len > rd_left(r)) {
			r->bad = 1;
			return -1;
		}
		if ((q = rd_span(r, (size_t)len)) == NULL)
			return -1;
		if ((rc = samples_block_add(s, q, (size_t)len)) != 0) {
			r->bad = rc == -EINVAL;
			return -1;
		}
	}
	n = rd_count(r, sizeof(int64_t) + sizeof(uint32_t) +
	    (size_t)s->ncols * sizeof(double));
	if (n > SAMPLES_BLOCK) {
		r->bad = 1;
		return -1;
	}
	for (i = 0; i < n && !r->bad; i++) {
		double		v[SAMPLES_MAXCOLS];
		int64_t		t = rd_i64(r);
		uint32_t	b = rd_u32(r);

		for (c = 0; c < s->ncols; c++)
			if (isinf(v[c] = rd_f64(r)))
				r->bad = 1;
		if (!r->bad && samples_add(s, t, b, v) != 0)
			return -1;
	}
	return r->bad ? -1 : 0;
}

/* A time a fold could have made, or LEDGER_NO_TIME. */
static int
time_ok(int64_t t)
{
	return t == LEDGER_NO_TIME || (t >= -TIME_BOUND && t <= TIME_BOUND);
}

/* A span [lo, hi]: both unset, or both set and in order. */
static int
span_ok(int64_t lo, int64_t hi)
{
	if (lo == LEDGER_NO_TIME || hi == LEDGER_NO_TIME)
		return lo == hi;
	return time_ok(lo) && time_ok(hi) && lo <= hi;
}

/* Every number in a tree finite: a fold never keeps one that is not
 * (the writers refuse them), and the renderers print what is here. */
static int
json_finite(const cJSON *o)
{
	const cJSON	*it;

	if (cJSON_IsNumber(o) && !isfinite(o->valuedouble))
		return 0;
	for (it = o->child; it != NULL; it = it->next)
		if (!json_finite(it))
			return 0;
	return 1;
}

/*
 * What the samples hold, against the ledger read before them: every
 * sample's build is one of the ledger's builds (the renderers index
 * l->builds[] with it) and its time is inside the timeline's span (the
 * span the buckets are cut from).  The blocks' headers were already
 * checked against their samples (samples_block_add), so their bounds are
 * the samples' own.
 */
static int
samples_fit(const struct ledger *l, const struct samples *s)
{
	int64_t		tmin, tmax;
	uint32_t	max_build;

	if (samples_bounds(s, &tmin, &tmax, &max_build) != 0)
		return 1;	/* none */
	if (max_build != SAMPLES_NO_BUILD && max_build >= l->nbuilds)
		return 0;
	return l->tmin != LEDGER_NO_TIME && tmin >= l->tmin &&
	    tmax <= l->tmax;
}

/* Does the section tag come next? */
static int
rd_section(struct rd *r, uint32_t tag)
{
	if (rd_u32(r) != tag)
		r->bad = 1;
	return r->bad ? -1 : 0;
}

static int
rd_state(struct rd *r, struct ledger *l)
{
	struct ledger_counts	c;
	size_t			i, n, k;

	if (rd_section(r, SEC_COUNTS))
		return -1;
	c.lines = rd_u64(r);
	c.folded = rd_u64(r);
	c.incidents = rd_u64(r);
	c.fixes = rd_u64(r);
	c.skipped = rd_u64(r);
	c.malformed_footprints = rd_u64(r);
	c.rows = rd_u64(r);
	c.builds = rd_u64(r);

	if (rd_section(r, SEC_SPAN))
		return -1;
	l->tmin = rd_i64(r);
	l->tmax = rd_i64(r);
	if (!span_ok(l->tmin, l->tmax))
		r->bad = 1;

	if (rd_section(r, SEC_BUILDS))
		return -1;
	n = rd_count(r, sizeof(uint32_t) + 6 * sizeof(uint64_t));
	for (i = 0; i < n && !r->bad; i++) {
		struct build	*b;
		char		*name;
		int64_t		 first;

		if (rd_str(r, &name, 0) != 0)
			return -1;
		if (name == NULL || *name == '\0') {
			free(name);
			r->bad = 1;
			return -1;
		}
		first = rd_i64(r);
		if (!time_ok(first))
			r->bad = 1;
		if (build_insert(l, name, strlen(name), first) != 0) {
			free(name);
			return -1;
		}
		free(name);
		b = &l->builds[l->nbuilds - 1];
		b->heartbeats = rd_u64(r);
		b->watched = rd_u8(r) != 0;
		b->nhb = rd_u64(r);
		b->nhp = rd_u64(r);
		b->ts_min = rd_i64(r);
		b->ts_max = rd_i64(r);
		b->worst = rd_f64(r);
		/* a build's window is its samples' span, inside the
		 * timeline's; it has one exactly when it has samples */
		if (!span_ok(b->ts_min, b->ts_max) || isinf(b->worst) ||
		    (b->ts_min == LEDGER_NO_TIME) != (b->nhb == 0 &&
		    b->nhp == 0) || (b->ts_min != LEDGER_NO_TIME &&
		    (l->tmin == LEDGER_NO_TIME || b->ts_min < l->tmin ||
		    b->ts_max > l->tmax)))
			r->bad = 1;
	}

	if (rd_section(r, SEC_ROWS))
		return -1;
	n = rd_count(r, 64);
	for (i = 0; i < n && !r->bad; i++) {
		struct row	*row = calloc(1, sizeof(*row));
		uint32_t	 nb;
		int		 ok;

		if (row == NULL)
			return -1;
		row->id = rd_u32(r);
		footprint_hex(row->id, row->hex);
		ok = rd_str(r, &row->key, 0) == 0 &&
		    rd_str(r, &row->type, 0) == 0 &&
		    rd_str(r, &row->phase, 0) == 0 &&
		    rd_str(r, &row->ctx, 0) == 0;
		row->count = rd_u64(r);
		row->first_ms = rd_i64(r);
		row->last_ms = rd_i64(r);
		nb = rd_u32(r);
		if (ok && !r->bad && (nb > rd_left(r) / 4 ||
		    (nb > 0 && (row->builds = calloc(nb,
		    sizeof(*row->builds))) == NULL)))
			ok = 0;
		row->nbuilds = row->capbuilds = ok ? nb : 0;
		for (k = 0; ok && k < nb; k++)
			if ((row->builds[k] = rd_u32(r)) >= l->nbuilds)
				r->bad = 1;
		row->max_build = rd_u32(r);
		row->last_unbuilt_ms = rd_i64(r);
		row->has_worst = rd_u8(r);
		row->worst = rd_f64(r);
		row->worst_ms = rd_i64(r);
		row->has_verdict = rd_u8(r);
		ok = ok && rd_str(r, &row->guess, VERDICT_GUESS) == 0 &&
		    rd_str(r, &row->conf, VERDICT_CONF) == 0 &&
		    rd_str(r, &row->evid, VERDICT_EVID) == 0;
		if (ok && !r->bad && (row->key == NULL || row->type == NULL ||
		    row->ctx == NULL || row_find(l, row->id) != NULL ||
		    (row->has_worst && !isfinite(row->worst)) ||
		    !span_ok(row->first_ms, row->last_ms) ||
		    !time_ok(row->worst_ms) || !time_ok(row->last_unbuilt_ms) ||
		    (row->max_build != NO_BUILD &&
		    row->max_build >= l->nbuilds)))
			r->bad = 1;
		if (!ok || r->bad || row_insert(l, row) == NULL) {
			free(row->key);
			free(row->type);
			free(row->phase);
			free(row->ctx);
			free(row->builds);
			free(row->guess);
			free(row->conf);
			free(row->evid);
			free(row);
			return -1;
		}
	}

	if (rd_section(r, SEC_FIXES))
		return -1;
	n = rd_count(r, 8);
	if (!r->bad && n > 0 &&
	    (l->fixes = calloc(n, sizeof(*l->fixes))) == NULL)
		return -1;
	l->capfixes = n;
	for (i = 0; i < n && !r->bad; i++) {
		struct fix	*fx = &l->fixes[i];
		char		*text;
		size_t		 nf;
		uint8_t		 st;

		if (rd_str(r, &text, 0) != 0)
			return -1;
		fx->rec = text ? cJSON_Parse(text) : NULL;
		free(text);
		if (fx->rec == NULL) {
			r->bad = 1;
			return -1;
		}
		l->nfixes++;	/* freed with the ledger from here on */
		if (!cJSON_IsObject(fx->rec) || !json_finite(fx->rec)) {
			r->bad = 1;
			return -1;
		}
		rd_bytes(r, fx->id, 8);
		fx->id[8] = '\0';
		if ((st = rd_u8(r)) > FIX_OTHER)
			r->bad = 1;
		fx->state = (enum fix_state)st;
		if (!time_ok(fx->at_ms = rd_i64(r)))
			r->bad = 1;
		fx->has_after = rd_u8(r) != 0;
		if (rd_str(r, &fx->after_build, 0) != 0)
			return -1;
		nf = rd_count(r, sizeof(uint32_t));
		if (nf > 0 && (fx->fps = calloc(nf, sizeof(*fx->fps))) == NULL)
			return -1;
		for (k = 0; k < nf; k++)
			fx->fps[k] = rd_u32(r);
		fx->nfps = nf;
	}

	if (rd_section(r, SEC_SKIPS))
		return -1;
	l->nskips = (size_t)rd_u64(r);
	n = l->nskips < LEDGER_SKIPS_KEPT ? l->nskips : LEDGER_SKIPS_KEPT;
	for (i = 0; i < n && !r->bad; i++) {
		struct skip	*s = &l->skips[(l->nskips - n + i) %
				    LEDGER_SKIPS_KEPT];
		int		 has;

		uint8_t		 stream = rd_u8(r);

		s->stream = stream == LEDGER_FIXES ? LEDGER_FIXES : LEDGER_PERF;
		s->offset = rd_u64(r);
		s->length = rd_u64(r);
		if (rd_fixed(r, s->reason, sizeof(s->reason), &has) != 0)
			return -1;
		if (!has || stream > LEDGER_FIXES)
			r->bad = 1;
	}

	if (rd_section(r, SEC_OCC))
		return -1;
	{
		char	*text;

		if (rd_str(r, &text, 0) != 0)
			return -1;
		if ((text != NULL) != (l->want_occ != 0)) {
			free(text);
			r->bad = 1;
			return -1;
		}
		if (text != NULL) {
			cJSON_Delete(l->occ);
			l->occ = cJSON_Parse(text);
			free(text);
			if (!cJSON_IsArray(l->occ) || !json_finite(l->occ)) {
				r->bad = 1;
				return -1;
			}
		}
	}

	if (rd_section(r, SEC_HB) || rd_samples(r, &l->hb) != 0 ||
	    rd_section(r, SEC_HP) || rd_samples(r, &l->hp) != 0 ||
	    rd_section(r, SEC_END))
		return -1;
	if (rd_left(r) != 0 || c.rows != l->nrows ||
	    c.builds != l->nbuilds || !samples_fit(l, &l->hb) ||
	    !samples_fit(l, &l->hp))
		r->bad = 1;
	l->c = c;
	return r->bad ? -1 : 0;
}

/* The magic, the version and the byte order: the first 16 bytes. */
static int
rd_magic(const unsigned char *p, size_t len, const char **why)
{
	uint32_t	u32;

	if (len < 16 || memcmp(p, MAGIC, 8) != 0) {
		*why = "not a checkpoint";
		return -EBADMSG;
	}
	memcpy(&u32, p + 8, sizeof(u32));
	if (u32 != LEDGER_CHECKPOINT_VERSION) {
		*why = "a checkpoint of another format version";
		return -EPROTO;
	}
	memcpy(&u32, p + 12, sizeof(u32));
	if (u32 != BYTE_ORDER_MARK) {
		*why = "a checkpoint from a machine of another byte order";
		return -EPROTO;
	}
	return 0;
}

/* The options, then the state, into a new ledger in *out. */
static int
rd_ledger(struct rd *r, const struct ledger_opts *opts, struct ledger **out,
    const char **why)
{
	struct ledger	*l;
	uint32_t	 occ_id;
	int64_t		 i64;
	int		 want_occ, rc;

	i64 = rd_i64(r);
	if (i64 != opts->from_ms)
		goto other;
	i64 = rd_i64(r);
	if (i64 != opts->to_ms ||
	    rd_u8(r) != (opts->include_automated != 0) ||
	    rd_u8(r) != (opts->want_timeline != 0))
		goto other;
	want_occ = rd_u8(r);
	occ_id = rd_u32(r);
	{
		uint32_t	id;
		int		want = opts->occurrences_of != NULL &&
				    footprint_parse_hex(opts->occurrences_of,
				    strlen(opts->occurrences_of), &id) == 0;

		if (want != want_occ || (want && id != occ_id))
			goto other;
	}
	if (r->bad)
		goto other;
	if ((l = ledger_create(opts)) == NULL) {
		*why = "out of memory";
		return -ENOMEM;
	}
	if ((rc = rd_state(r, l)) != 0) {
		ledger_destroy(l);
		if (r->err != 0) {
			*why = "could not be read";
			return r->err;
		}
		if (r->bad) {
			*why = "damaged: its contents do not hold together";
			return -EBADMSG;
		}
		*why = "out of memory";
		return -ENOMEM;
	}
	*out = l;
	return 0;
other:
	if (r->err != 0) {
		*why = "could not be read";
		return r->err;
	}
	*why = "folded with other options (time range, automated records, "
	    "timeline or the issue whose occurrences are kept)";
	return -ESTALE;
}

int
ledger_checkpoint_read(const struct ledger_opts *opts, const void *data,
    size_t len, struct ledger **out, const char **why)
{
	const unsigned char	*p = data;
	const char		*reason = NULL;
	struct rd		 r;
	uint64_t		 total;
	uint32_t		 crc;
	int			 rc;

	*out = NULL;
	if (why == NULL)
		why = &reason;
	if ((rc = rd_magic(p, len, why)) != 0)
		return rc;
	if (len < 16 + TRAILER) {
		*why = "torn: shorter than a checkpoint can be";
		return -EBADMSG;
	}
	memcpy(&total, p + len - TRAILER, sizeof(total));
	if (total != len) {
		*why = "torn: its length is not the one it was written with";
		return -EBADMSG;
	}
	memcpy(&crc, p + len - sizeof(crc), sizeof(crc));
	if (crc32_more(0, p, len - sizeof(crc)) != crc) {
		*why = "damaged: the checksum does not match";
		return -EBADMSG;
	}
	memset(&r, 0, sizeof(r));
	r.p = p + 16;
	r.end = p + len - TRAILER;
	rc = rd_ledger(&r, opts, out, why);
	free(r.tmp);
	if (rc == 0)
		*why = NULL;
	return rc;
}

/*
 * Streamed: the header first, the state as it comes, and the trailer —
 * the length and the CRC of all that came — last.  The ledger is built
 * as the bytes arrive and handed back only once the trailer agrees, so a
 * torn or damaged checkpoint is still never half used; it is only found
 * out later than in memory, where the CRC is checked first.
 */
int
ledger_checkpoint_read_stream(const struct ledger_opts *opts, uint64_t len,
    int (*pull)(void *arg, void *buf, size_t n), void *arg,
    struct ledger **out, const char **why)
{
	unsigned char	 head[16], tail[TRAILER];
	const char	*reason = NULL;
	struct ledger	*l = NULL;
	struct rd	 r;
	uint64_t	 total;
	uint32_t	 crc;
	int		 rc;

	*out = NULL;
	if (why == NULL)
		why = &reason;
	if (len < sizeof(head)) {
		*why = "not a checkpoint";
		return -EBADMSG;
	}
	if ((rc = pull(arg, head, sizeof(head))) != 0) {
		*why = "could not be read";
		return rc;
	}
	if ((rc = rd_magic(head, sizeof(head), why)) != 0)
		return rc;
	if (len < sizeof(head) + TRAILER) {
		*why = "torn: shorter than a checkpoint can be";
		return -EBADMSG;
	}
	memset(&r, 0, sizeof(r));
	if ((r.buf = malloc(RD_PULL)) == NULL) {
		*why = "out of memory";
		return -ENOMEM;
	}
	r.pull = pull;
	r.arg = arg;
	r.more = len - sizeof(head) - TRAILER;
	r.p = r.end = r.buf;
	r.crc = crc32_more(0, head, sizeof(head));
	rc = rd_ledger(&r, opts, &l, why);
	free(r.buf);
	free(r.tmp);
	if (rc != 0)
		return rc;
	if ((rc = pull(arg, tail, sizeof(tail))) != 0) {
		ledger_destroy(l);
		*why = "could not be read";
		return rc;
	}
	memcpy(&total, tail, sizeof(total));
	memcpy(&crc, tail + sizeof(total), sizeof(crc));
	if (total != len) {
		ledger_destroy(l);
		*why = "torn: its length is not the one it was written with";
		return -EBADMSG;
	}
	if (crc32_more(r.crc, tail, sizeof(total)) != crc) {
		ledger_destroy(l);
		*why = "damaged: the checksum does not match";
		return -EBADMSG;
	}
	*out = l;
	*why = NULL;
	return 0;
}
