/*
 * checkpoint — the fold's whole state as bytes, and back (checkpoint.h).
 * It sits above the fold: it reads the state (ledger_impl.h) and builds
 * a ledger through the fold's own functions (ledger_create, build_insert,
 * row_insert), and the fold calls nothing of it.
 *
 * Layout, native byte order (a checkpoint is a cache on the machine that
 * wrote it, not an interchange format):
 *
 *	"SLOPTCKP"  u32 version  u32 byte-order mark
 *	options     from_ms, to_ms, include_automated, want_timeline,
 *	            the occurrences_of id (or none)
 *	sections    counts, timeline span, builds, rows, fixes, skipped
 *	            lines, occurrences, heartbeat samples, hitch samples,
 *	            each a u32 tag, the lists with a u64 count first
 *	u64 total length   u32 CRC-32C of everything before it
 *
 * Each record — the options, a build, a row, a fix — is a table of its
 * fields below (the format), walked by the writer and the reader alike.
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
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "checkpoint.h"
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

/* --- the format: one table per record ---------------------------------- */

/*
 * Every record of a checkpoint — the fold's options, the counts, the
 * timeline's span, a build, a row, a fix, a skipped line, the
 * occurrences — is one table of its fields in the order they sit in the
 * file, and the writer (fields_put) and the reader (fields_get) both walk
 * it: a new field is one line here, and the reader cannot drift from the
 * writer.  A field is where it lives in its struct, how it is stored and
 * what the reader holds it to; what a record must hold across its fields
 * (a span in order, an id not seen before, a build inside the timeline)
 * is its section's check, after the table is read.  The sections' frame
 * (a tag, a count, the records) and the sample blocks, which are stored
 * as they sit in memory, are written by mb_head, mb_tail and snap_begin
 * and read by rd_state in the same order.
 */
enum fkind {
	F_U8,		/* uint8_t, as it is */
	F_FLAG,		/* int, as one byte: 0 or 1 */
	F_ENUM,		/* an enum, as one byte, at most `max` */
	F_U32,		/* uint32_t */
	F_U64,		/* uint64_t */
	F_I64,		/* int64_t */
	F_F64,		/* double */
	F_STR,		/* char *: u32 length and the bytes; UINT32_MAX for
			   NULL; shorter than `max` when it is not 0 */
	F_FIXED,	/* char[max], stored as F_STR */
	F_ID8,		/* char[9]: 8 bytes, NUL-ended in memory */
	F_JSON,		/* cJSON *, stored as F_STR: its unformatted text */
	F_LIST32,	/* uint32_t *, its uint32_t count at `count`: u32
			   count, then the u32s */
	F_LIST64	/* the same with a size_t count, stored as u64 */
};

/* What the reader holds a field to, beyond its bounds. */
#define C_TIME		0x01	/* a time a fold could make (time_ok) */
#define C_NOTINF	0x02	/* not infinite (NaN is "none") */
#define C_BUILD		0x04	/* (each) one of the builds read before */
#define C_NOBUILD	0x08	/* with C_BUILD: or NO_BUILD */
#define C_SET		0x10	/* a string or JSON that is there */
#define C_NONEMPTY	0x20	/* a string that is not "" */
#define C_OBJECT	0x40	/* JSON: an object, every number finite */
#define C_ARRAY		0x80	/* JSON: an array, every number finite */

struct field {
	size_t		 off;	/* in the record's struct */
	size_t		 count;	/* F_LIST32, F_LIST64: the count's offset */
	uint8_t		 kind;
	uint8_t		 check;
	uint16_t	 max;
};

#define FIELD(type, member, kind, check, max) \
	{ offsetof(type, member), 0, kind, check, max }
#define LIST(type, member, count, kind, check) \
	{ offsetof(type, member), offsetof(type, count), kind, check, 0 }
#define NFIELDS(t)	(sizeof(t) / sizeof((t)[0]))

/* F_ENUM reads and writes an int. */
_Static_assert(sizeof(enum fix_state) == sizeof(int), "enum fix_state");
_Static_assert(sizeof(enum ledger_stream) == sizeof(int), "enum stream");

/* The fold's options: a checkpoint is read only under the ones it was
 * folded with (ledger_opts, the occurrences' id as a number). */
struct opts_rec {
	int64_t		 from_ms, to_ms;
	uint8_t		 automated, timeline, want_occ;
	uint32_t	 occ_id;
};

static const struct field opts_fields[] = {
	FIELD(struct opts_rec, from_ms, F_I64, 0, 0),
	FIELD(struct opts_rec, to_ms, F_I64, 0, 0),
	FIELD(struct opts_rec, automated, F_U8, 0, 0),
	FIELD(struct opts_rec, timeline, F_U8, 0, 0),
	FIELD(struct opts_rec, want_occ, F_U8, 0, 0),
	FIELD(struct opts_rec, occ_id, F_U32, 0, 0),
};

static const struct field counts_fields[] = {
	FIELD(struct ledger_counts, lines, F_U64, 0, 0),
	FIELD(struct ledger_counts, folded, F_U64, 0, 0),
	FIELD(struct ledger_counts, incidents, F_U64, 0, 0),
	FIELD(struct ledger_counts, fixes, F_U64, 0, 0),
	FIELD(struct ledger_counts, skipped, F_U64, 0, 0),
	FIELD(struct ledger_counts, malformed_footprints, F_U64, 0, 0),
	FIELD(struct ledger_counts, rows, F_U64, 0, 0),
	FIELD(struct ledger_counts, builds, F_U64, 0, 0),
};

/* The timeline's span; its section checks it is one (span_ok). */
static const struct field span_fields[] = {
	FIELD(struct ledger, tmin, F_I64, 0, 0),
	FIELD(struct ledger, tmax, F_I64, 0, 0),
};

/* A build; its name goes in through build_insert (the lookup table),
 * and its window is checked against the timeline's span. */
static const struct field build_fields[] = {
	FIELD(struct build, name, F_STR, C_SET | C_NONEMPTY, 0),
	FIELD(struct build, first_ms, F_I64, C_TIME, 0),
	FIELD(struct build, heartbeats, F_U64, 0, 0),
	FIELD(struct build, watched, F_FLAG, 0, 0),
	FIELD(struct build, nhb, F_U64, 0, 0),
	FIELD(struct build, nhp, F_U64, 0, 0),
	FIELD(struct build, ts_min, F_I64, 0, 0),
	FIELD(struct build, ts_max, F_I64, 0, 0),
	FIELD(struct build, worst, F_F64, C_NOTINF, 0),
};

/* A row; its section checks the id is new, the span and the worst. */
static const struct field row_fields[] = {
	FIELD(struct row, id, F_U32, 0, 0),
	FIELD(struct row, key, F_STR, C_SET, 0),
	FIELD(struct row, type, F_STR, C_SET, 0),
	FIELD(struct row, phase, F_STR, 0, 0),
	FIELD(struct row, ctx, F_STR, C_SET, 0),
	FIELD(struct row, count, F_U64, 0, 0),
	FIELD(struct row, first_ms, F_I64, 0, 0),
	FIELD(struct row, last_ms, F_I64, 0, 0),
	LIST(struct row, builds, nbuilds, F_LIST32, C_BUILD),
	FIELD(struct row, max_build, F_U32, C_BUILD | C_NOBUILD, 0),
	FIELD(struct row, last_unbuilt_ms, F_I64, C_TIME, 0),
	FIELD(struct row, has_worst, F_FLAG, 0, 0),
	FIELD(struct row, worst, F_F64, 0, 0),
	FIELD(struct row, worst_ms, F_I64, C_TIME, 0),
	FIELD(struct row, has_verdict, F_FLAG, 0, 0),
	FIELD(struct row, guess, F_STR, 0, VERDICT_GUESS),
	FIELD(struct row, conf, F_STR, 0, VERDICT_CONF),
	FIELD(struct row, evid, F_STR, 0, VERDICT_EVID),
};

static const struct field fix_fields[] = {
	FIELD(struct fix, rec, F_JSON, C_SET | C_OBJECT, 0),
	FIELD(struct fix, id, F_ID8, 0, 0),
	FIELD(struct fix, state, F_ENUM, 0, FIX_OTHER),
	FIELD(struct fix, at_ms, F_I64, C_TIME, 0),
	FIELD(struct fix, has_after, F_FLAG, 0, 0),
	FIELD(struct fix, after_build, F_STR, 0, 0),
	LIST(struct fix, fps, nfps, F_LIST64, 0),
};

static const struct field skip_fields[] = {
	FIELD(struct skip, stream, F_ENUM, 0, LEDGER_FIXES),
	FIELD(struct skip, offset, F_U64, 0, 0),
	FIELD(struct skip, length, F_U64, 0, 0),
	FIELD(struct skip, reason, F_FIXED, C_SET, SKIP_REASON),
};

/* The occurrences kept (an array), there exactly when the options ask
 * for them. */
struct occ_rec {
	cJSON		*occ;
};

static const struct field occ_fields[] = {
	FIELD(struct occ_rec, occ, F_JSON, C_ARRAY, 0),
};

/* The fewest bytes a record of the table takes in the file: a count
 * whose records would not fit in what is left is nonsense. */
static size_t
fields_least(const struct field *f, size_t n)
{
	size_t	least = 0;

	for (; n > 0; f++, n--)
		switch (f->kind) {
		case F_U8:
		case F_FLAG:
		case F_ENUM:
			least += 1;
			break;
		case F_U32:
		case F_STR:
		case F_FIXED:
		case F_JSON:
		case F_LIST32:
			least += 4;
			break;
		default:	/* F_U64, F_I64, F_F64, F_ID8, F_LIST64 */
			least += 8;
			break;
		}
	return least;
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

/* Room for n more bytes; on no memory m->err is set and -1 returned. */
static int
mb_grow(struct mbuf *m, size_t n)
{
	size_t		 cap = m->cap ? m->cap : 4096;
	unsigned char	*np;

	while (cap < m->n + n)
		cap *= 2;
	if ((np = realloc(m->p, cap)) == NULL) {
		m->err = -ENOMEM;
		return -1;
	}
	m->p = np;
	m->cap = cap;
	return 0;
}

/* Inline, so that the fixed-size writes below are a store each: the
 * rows are some millions of small fields on a first save. */
static inline void
mb_bytes(struct mbuf *m, const void *p, size_t n)
{
	if (m->err || n == 0)
		return;
	if (m->cap - m->n < n && mb_grow(m, n) != 0)
		return;
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

/* A record by its table.  0 or -ENOMEM (also left in m->err). */
static int
fields_put(struct mbuf *m, const struct field *f, size_t n, const void *rec)
{
	const char	*base = rec;

	for (; n > 0; f++, n--) {
		const void	*at = base + f->off;

		switch (f->kind) {
		case F_U8:
			mb_u8(m, *(const uint8_t *)at);
			break;
		case F_FLAG:
			mb_u8(m, (uint8_t)(*(const int *)at != 0));
			break;
		case F_ENUM:
			mb_u8(m, (uint8_t)*(const int *)at);
			break;
		case F_U32:
			mb_u32(m, *(const uint32_t *)at);
			break;
		case F_U64:
			mb_u64(m, *(const uint64_t *)at);
			break;
		case F_I64:
			mb_i64(m, *(const int64_t *)at);
			break;
		case F_F64:
			mb_f64(m, *(const double *)at);
			break;
		case F_STR:
			mb_str(m, *(char *const *)at);
			break;
		case F_FIXED:
			mb_str(m, at);
			break;
		case F_ID8:
			mb_bytes(m, at, 8);
			break;
		case F_JSON: {
			const cJSON	*j = *(cJSON *const *)at;
			char		*text = NULL;

			if (j != NULL && (text = cJSON_PrintUnformatted(j)) ==
			    NULL)
				return m->err = -ENOMEM;
			mb_str(m, text);
			free(text);
			break;
		}
		case F_LIST32: {
			uint32_t	c = *(const uint32_t *)(base + f->count);

			mb_u32(m, c);
			mb_bytes(m, *(uint32_t *const *)at,
			    (size_t)c * sizeof(uint32_t));
			break;
		}
		case F_LIST64: {
			size_t	c = *(const size_t *)(base + f->count);

			mb_u64(m, c);
			mb_bytes(m, *(uint32_t *const *)at, c * sizeof(uint32_t));
			break;
		}
		}
	}
	return m->err;
}

#define PUT(m, table, rec)	fields_put(m, table, NFIELDS(table), rec)

/* Everything from the magic to the rows' count. */
static int
mb_head(struct mbuf *w, const struct ledger *l)
{
	struct opts_rec	 o = {
		.from_ms = l->opts.from_ms,
		.to_ms = l->opts.to_ms,
		.automated = l->opts.include_automated != 0,
		.timeline = l->opts.want_timeline != 0,
		.want_occ = (uint8_t)l->want_occ,
		.occ_id = l->occ_id,
	};
	size_t		 i;

	mb_bytes(w, MAGIC, 8);
	mb_u32(w, LEDGER_CHECKPOINT_VERSION);
	mb_u32(w, BYTE_ORDER_MARK);
	PUT(w, opts_fields, &o);
	mb_u32(w, SEC_COUNTS);
	PUT(w, counts_fields, &l->c);
	mb_u32(w, SEC_SPAN);
	PUT(w, span_fields, l);
	mb_u32(w, SEC_BUILDS);
	mb_u64(w, l->nbuilds);
	for (i = 0; i < l->nbuilds; i++)
		PUT(w, build_fields, &l->builds[i]);
	mb_u32(w, SEC_ROWS);
	mb_u64(w, l->nrows);
	return w->err;
}

/* Everything after the rows to the heartbeats' block count. */
static int
mb_tail(struct mbuf *w, const struct ledger *l)
{
	struct occ_rec	 o = { l->want_occ ? l->occ : NULL };
	size_t		 i, n;

	mb_u32(w, SEC_FIXES);
	mb_u64(w, l->nfixes);
	for (i = 0; i < l->nfixes; i++)
		if (PUT(w, fix_fields, &l->fixes[i]) != 0)
			return w->err;
	mb_u32(w, SEC_SKIPS);
	mb_u64(w, l->nskips);
	n = l->nskips < LEDGER_SKIPS_KEPT ? l->nskips : LEDGER_SKIPS_KEPT;
	for (i = 0; i < n; i++)
		PUT(w, skip_fields, &l->skips[(l->nskips - n + i) %
		    LEDGER_SKIPS_KEPT]);
	mb_u32(w, SEC_OCC);
	PUT(w, occ_fields, &o);
	mb_u32(w, SEC_HB);
	mb_u64(w, samples_nblocks(&l->hb));
	return w->err;
}

/* --- the rows' runs ------------------------------------------------------ */

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
		PUT(&m, row_fields, l->rows[i]);
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
run_outdated(const struct ledger *l, size_t k)
{
	size_t	want = l->nrows - k * CKPT_RUN_ROWS;

	if (want > CKPT_RUN_ROWS)
		want = CKPT_RUN_ROWS;
	return k >= l->nruns || l->run_stale[k] || l->runs[k]->nrows != want;
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
		if (!run_outdated(l, k))
			continue;
		if (made * CKPT_RUN_ROWS >= budget ||
		    (k >= l->nruns && k != l->nruns)) {
			stale++;	/* the runs are made in order */
			continue;
		}
		if ((run = run_make(l, k)) == NULL)
			return -ENOMEM;
		if (k < l->nruns)
			rows_run_unref(l->runs[k]);
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
		rows_run_unref(s->runs[k]);
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

	w->crc = crc32c_more(w->crc, p, n);
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
	r->crc = crc32c_more(r->crc, r->buf, n);
	r->more -= n;
	r->p = r->buf;
	r->end = r->buf + n;
	return 0;
}

static int
rd_gather(struct rd *r, void *out, size_t n)
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

/* The next n bytes into out (zeros when they are not there).  Inline
 * for the common case, the bytes in hand: a row is some twenty small
 * fields. */
static inline int
rd_bytes(struct rd *r, void *out, size_t n)
{
	if (!r->bad && (size_t)(r->end - r->p) >= n) {
		memcpy(out, r->p, n);
		r->p += n;
		return 0;
	}
	return rd_gather(r, out, n);
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

/* Is b one of the builds read so far (or none, when the check allows)? */
static int
build_ok(const struct ledger *l, uint8_t check, uint32_t b)
{
	if (!(check & C_BUILD))
		return 1;
	return b < l->nbuilds || ((check & C_NOBUILD) && b == NO_BUILD);
}

/*
 * A record by its table, into `rec`, held to each field's checks (the
 * builds against l's).  0, or -1 with r->bad set on nonsense, or with it
 * clear when memory ran out.  What it allocated stays in the record,
 * whole or not, for fields_drop or the ledger to free.
 */
static int
fields_get(struct rd *r, const struct field *f, size_t n, void *rec,
    const struct ledger *l)
{
	char	*base = rec;

	for (; n > 0 && !r->bad; f++, n--) {
		void	*at = base + f->off;

		switch (f->kind) {
		case F_U8:
			*(uint8_t *)at = rd_u8(r);
			break;
		case F_FLAG:
			*(int *)at = rd_u8(r) != 0;
			break;
		case F_ENUM:
			if ((*(int *)at = rd_u8(r)) > f->max)
				r->bad = 1;
			break;
		case F_U32:
			if (!build_ok(l, f->check, *(uint32_t *)at = rd_u32(r)))
				r->bad = 1;
			break;
		case F_U64:
			*(uint64_t *)at = rd_u64(r);
			break;
		case F_I64:
			*(int64_t *)at = rd_i64(r);
			if ((f->check & C_TIME) && !time_ok(*(int64_t *)at))
				r->bad = 1;
			break;
		case F_F64:
			*(double *)at = rd_f64(r);
			if ((f->check & C_NOTINF) && isinf(*(double *)at))
				r->bad = 1;
			break;
		case F_STR: {
			char	**s = at;

			if (rd_str(r, s, f->max) != 0)
				return -1;
			if (((f->check & C_SET) && *s == NULL) ||
			    ((f->check & C_NONEMPTY) && *s != NULL &&
			    **s == '\0'))
				r->bad = 1;
			break;
		}
		case F_FIXED: {
			int	has;

			if (rd_fixed(r, at, f->max, &has) != 0)
				return -1;
			if ((f->check & C_SET) && !has)
				r->bad = 1;
			break;
		}
		case F_ID8:
			rd_bytes(r, at, 8);
			((char *)at)[8] = '\0';
			break;
		case F_JSON: {
			cJSON	**j = at;
			char	 *text;

			if (rd_str(r, &text, 0) != 0)
				return -1;
			if (text == NULL) {
				if (f->check & C_SET)
					r->bad = 1;
				break;
			}
			*j = cJSON_Parse(text);
			free(text);
			if (*j == NULL || !json_finite(*j) ||
			    ((f->check & C_OBJECT) && !cJSON_IsObject(*j)) ||
			    ((f->check & C_ARRAY) && !cJSON_IsArray(*j)))
				r->bad = 1;
			break;
		}
		case F_LIST32:
		case F_LIST64: {
			uint32_t	**v = at;
			size_t		  c, k;

			if (f->kind == F_LIST32) {
				c = rd_u32(r);
				if (!r->bad && c > rd_left(r) / sizeof(**v))
					r->bad = 1;
			} else
				c = rd_count(r, sizeof(**v));
			if (r->bad || c == 0)
				break;
			if ((*v = malloc(c * sizeof(**v))) == NULL)
				return -1;
			if (f->kind == F_LIST32)
				*(uint32_t *)(base + f->count) = (uint32_t)c;
			else
				*(size_t *)(base + f->count) = c;
			rd_bytes(r, *v, c * sizeof(**v));
			for (k = 0; k < c && !r->bad; k++)
				if (!build_ok(l, f->check, (*v)[k]))
					r->bad = 1;
			break;
		}
		}
	}
	return r->bad ? -1 : 0;
}

#define GET(r, table, rec, l)	fields_get(r, table, NFIELDS(table), rec, l)

/* What fields_get allocated in a record that is not kept. */
static void
fields_drop(const struct field *f, size_t n, void *rec)
{
	char	*base = rec;

	for (; n > 0; f++, n--) {
		void	*at = base + f->off;

		switch (f->kind) {
		case F_STR:
			free(*(char **)at);
			*(char **)at = NULL;
			break;
		case F_JSON:
			cJSON_Delete(*(cJSON **)at);
			*(cJSON **)at = NULL;
			break;
		case F_LIST32:
		case F_LIST64:
			free(*(uint32_t **)at);
			*(uint32_t **)at = NULL;
			break;
		default:
			break;
		}
	}
}

#define DROP(table, rec)	fields_drop(table, NFIELDS(table), rec)

/*
 * A build, appended to l.  Its window is its samples' span, inside the
 * timeline's; it has one exactly when it has samples.
 */
static int
rd_build(struct rd *r, struct ledger *l)
{
	struct build	 b = { 0 }, *in;
	char		*name;

	if (GET(r, build_fields, &b, l) != 0) {
		DROP(build_fields, &b);
		return -1;
	}
	name = b.name;
	if (build_insert(l, name, strlen(name), b.first_ms) != 0) {
		free(name);
		return -1;
	}
	free(name);
	/* the name, its hash and the caches are build_insert's */
	in = &l->builds[l->nbuilds - 1];
	b.name = in->name;
	b.len = in->len;
	b.hash = in->hash;
	b.last_regime = in->last_regime;
	*in = b;
	if (!span_ok(b.ts_min, b.ts_max) ||
	    (b.ts_min == LEDGER_NO_TIME) != (b.nhb == 0 && b.nhp == 0) ||
	    (b.ts_min != LEDGER_NO_TIME && (l->tmin == LEDGER_NO_TIME ||
	    b.ts_min < l->tmin || b.ts_max > l->tmax)))
		r->bad = 1;
	return r->bad ? -1 : 0;
}

/* A row, inserted into l: an id not seen before, its times a span, its
 * worst hitch a number when it has one. */
static int
rd_row(struct rd *r, struct ledger *l)
{
	struct row	*row;

	if ((row = calloc(1, sizeof(*row))) == NULL)
		return -1;
	if (GET(r, row_fields, row, l) == 0) {
		footprint_hex(row->id, row->hex);
		row->capbuilds = row->nbuilds;
		if (row_find(l, row->id) != NULL ||
		    (row->has_worst && !isfinite(row->worst)) ||
		    !span_ok(row->first_ms, row->last_ms))
			r->bad = 1;
		else if (row_insert(l, row) != NULL)
			return 0;
	}
	DROP(row_fields, row);
	free(row);
	return -1;
}

static int
rd_state(struct rd *r, struct ledger *l)
{
	struct ledger_counts	c;
	struct occ_rec		o = { NULL };
	size_t			i, n;

	if (rd_section(r, SEC_COUNTS) || GET(r, counts_fields, &c, l) ||
	    rd_section(r, SEC_SPAN) || GET(r, span_fields, l, l))
		return -1;
	if (!span_ok(l->tmin, l->tmax))
		r->bad = 1;

	if (rd_section(r, SEC_BUILDS))
		return -1;
	n = rd_count(r, fields_least(build_fields, NFIELDS(build_fields)));
	for (i = 0; i < n && !r->bad; i++)
		if (rd_build(r, l) != 0)
			return -1;

	if (rd_section(r, SEC_ROWS))
		return -1;
	n = rd_count(r, fields_least(row_fields, NFIELDS(row_fields)));
	for (i = 0; i < n && !r->bad; i++)
		if (rd_row(r, l) != 0)
			return -1;

	if (rd_section(r, SEC_FIXES))
		return -1;
	n = rd_count(r, fields_least(fix_fields, NFIELDS(fix_fields)));
	if (!r->bad && n > 0 &&
	    (l->fixes = calloc(n, sizeof(*l->fixes))) == NULL)
		return -1;
	l->capfixes = n;
	for (i = 0; i < n && !r->bad; i++) {
		l->nfixes++;	/* freed with the ledger, whole or not */
		if (GET(r, fix_fields, &l->fixes[i], l) != 0)
			return -1;
	}

	if (rd_section(r, SEC_SKIPS))
		return -1;
	l->nskips = (size_t)rd_u64(r);
	n = l->nskips < LEDGER_SKIPS_KEPT ? l->nskips : LEDGER_SKIPS_KEPT;
	for (i = 0; i < n && !r->bad; i++)
		if (GET(r, skip_fields, &l->skips[(l->nskips - n + i) %
		    LEDGER_SKIPS_KEPT], l) != 0)
			return -1;

	if (rd_section(r, SEC_OCC) || GET(r, occ_fields, &o, l) != 0) {
		DROP(occ_fields, &o);
		return -1;
	}
	if ((o.occ != NULL) != (l->want_occ != 0)) {
		r->bad = 1;
		DROP(occ_fields, &o);
		return -1;
	}
	if (o.occ != NULL) {
		cJSON_Delete(l->occ);
		l->occ = o.occ;
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
	struct opts_rec	 want = { 0 }, got = { 0 };
	struct ledger	*l;
	int		 rc;

	want.from_ms = opts->from_ms;
	want.to_ms = opts->to_ms;
	want.automated = opts->include_automated != 0;
	want.timeline = opts->want_timeline != 0;
	want.want_occ = opts->occurrences_of != NULL &&
	    footprint_parse_hex(opts->occurrences_of,
	    strlen(opts->occurrences_of), &want.occ_id) == 0;
	(void)GET(r, opts_fields, &got, NULL);
	if (got.from_ms != want.from_ms || got.to_ms != want.to_ms ||
	    got.automated != want.automated ||
	    got.timeline != want.timeline ||
	    got.want_occ != want.want_occ ||
	    (want.want_occ && got.occ_id != want.occ_id))
		goto other;
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
	if (crc32c_more(0, p, len - sizeof(crc)) != crc) {
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
	r.crc = crc32c_more(0, head, sizeof(head));
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
	if (crc32c_more(r.crc, tail, sizeof(total)) != crc) {
		ledger_destroy(l);
		*why = "damaged: the checksum does not match";
		return -EBADMSG;
	}
	*out = l;
	*why = NULL;
	return 0;
}
