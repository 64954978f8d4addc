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
 *	u64 total length   u32 CRC-32 of everything before it
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

#include "ledger_impl.h"

#define MAGIC		"SLOPTCKP"
#define BYTE_ORDER_MARK	0x01020304u
#define TRAILER		(sizeof(uint64_t) + sizeof(uint32_t))

enum {
	SEC_COUNTS = 1, SEC_SPAN, SEC_BUILDS, SEC_ROWS, SEC_FIXES, SEC_SKIPS,
	SEC_OCC, SEC_HB, SEC_HP, SEC_END
};

static const uint32_t crc_table[256] = {
	0x00000000, 0x77073096, 0xee0e612c, 0x990951ba, 0x076dc419, 0x706af48f,
	0xe963a535, 0x9e6495a3, 0x0edb8832, 0x79dcb8a4, 0xe0d5e91e, 0x97d2d988,
	0x09b64c2b, 0x7eb17cbd, 0xe7b82d07, 0x90bf1d91, 0x1db71064, 0x6ab020f2,
	0xf3b97148, 0x84be41de, 0x1adad47d, 0x6ddde4eb, 0xf4d4b551, 0x83d385c7,
	0x136c9856, 0x646ba8c0, 0xfd62f97a, 0x8a65c9ec, 0x14015c4f, 0x63066cd9,
	0xfa0f3d63, 0x8d080df5, 0x3b6e20c8, 0x4c69105e, 0xd56041e4, 0xa2677172,
	0x3c03e4d1, 0x4b04d447, 0xd20d85fd, 0xa50ab56b, 0x35b5a8fa, 0x42b2986c,
	0xdbbbc9d6, 0xacbcf940, 0x32d86ce3, 0x45df5c75, 0xdcd60dcf, 0xabd13d59,
	0x26d930ac, 0x51de003a, 0xc8d75180, 0xbfd06116, 0x21b4f4b5, 0x56b3c423,
	0xcfba9599, 0xb8bda50f, 0x2802b89e, 0x5f058808, 0xc60cd9b2, 0xb10be924,
	0x2f6f7c87, 0x58684c11, 0xc1611dab, 0xb6662d3d, 0x76dc4190, 0x01db7106,
	0x98d220bc, 0xefd5102a, 0x71b18589, 0x06b6b51f, 0x9fbfe4a5, 0xe8b8d433,
	0x7807c9a2, 0x0f00f934, 0x9609a88e, 0xe10e9818, 0x7f6a0dbb, 0x086d3d2d,
	0x91646c97, 0xe6635c01, 0x6b6b51f4, 0x1c6c6162, 0x856530d8, 0xf262004e,
	0x6c0695ed, 0x1b01a57b, 0x8208f4c1, 0xf50fc457, 0x65b0d9c6, 0x12b7e950,
	0x8bbeb8ea, 0xfcb9887c, 0x62dd1ddf, 0x15da2d49, 0x8cd37cf3, 0xfbd44c65,
	0x4db26158, 0x3ab551ce, 0xa3bc0074, 0xd4bb30e2, 0x4adfa541, 0x3dd895d7,
	0xa4d1c46d, 0xd3d6f4fb, 0x4369e96a, 0x346ed9fc, 0xad678846, 0xda60b8d0,
	0x44042d73, 0x33031de5, 0xaa0a4c5f, 0xdd0d7cc9, 0x5005713c, 0x270241aa,
	0xbe0b1010, 0xc90c2086, 0x5768b525, 0x206f85b3, 0xb966d409, 0xce61e49f,
	0x5edef90e, 0x29d9c998, 0xb0d09822, 0xc7d7a8b4, 0x59b33d17, 0x2eb40d81,
	0xb7bd5c3b, 0xc0ba6cad, 0xedb88320, 0x9abfb3b6, 0x03b6e20c, 0x74b1d29a,
	0xead54739, 0x9dd277af, 0x04db2615, 0x73dc1683, 0xe3630b12, 0x94643b84,
	0x0d6d6a3e, 0x7a6a5aa8, 0xe40ecf0b, 0x9309ff9d, 0x0a00ae27, 0x7d079eb1,
	0xf00f9344, 0x8708a3d2, 0x1e01f268, 0x6906c2fe, 0xf762575d, 0x806567cb,
	0x196c3671, 0x6e6b06e7, 0xfed41b76, 0x89d32be0, 0x10da7a5a, 0x67dd4acc,
	0xf9b9df6f, 0x8ebeeff9, 0x17b7be43, 0x60b08ed5, 0xd6d6a3e8, 0xa1d1937e,
	0x38d8c2c4, 0x4fdff252, 0xd1bb67f1, 0xa6bc5767, 0x3fb506dd, 0x48b2364b,
	0xd80d2bda, 0xaf0a1b4c, 0x36034af6, 0x41047a60, 0xdf60efc3, 0xa867df55,
	0x316e8eef, 0x4669be79, 0xcb61b38c, 0xbc66831a, 0x256fd2a0, 0x5268e236,
	0xcc0c7795, 0xbb0b4703, 0x220216b9, 0x5505262f, 0xc5ba3bbe, 0xb2bd0b28,
	0x2bb45a92, 0x5cb36a04, 0xc2d7ffa7, 0xb5d0cf31, 0x2cd99e8b, 0x5bdeae1d,
	0x9b64c2b0, 0xec63f226, 0x756aa39c, 0x026d930a, 0x9c0906a9, 0xeb0e363f,
	0x72076785, 0x05005713, 0x95bf4a82, 0xe2b87a14, 0x7bb12bae, 0x0cb61b38,
	0x92d28e9b, 0xe5d5be0d, 0x7cdcefb7, 0x0bdbdf21, 0x86d3d2d4, 0xf1d4e242,
	0x68ddb3f8, 0x1fda836e, 0x81be16cd, 0xf6b9265b, 0x6fb077e1, 0x18b74777,
	0x88085ae6, 0xff0f6a70, 0x66063bca, 0x11010b5c, 0x8f659eff, 0xf862ae69,
	0x616bffd3, 0x166ccf45, 0xa00ae278, 0xd70dd2ee, 0x4e048354, 0x3903b3c2,
	0xa7672661, 0xd06016f7, 0x4969474d, 0x3e6e77db, 0xaed16a4a, 0xd9d65adc,
	0x40df0b66, 0x37d83bf0, 0xa9bcae53, 0xdebb9ec5, 0x47b2cf7f, 0x30b5ffe9,
	0xbdbdf21c, 0xcabac28a, 0x53b39330, 0x24b4a3a6, 0xbad03605, 0xcdd70693,
	0x54de5729, 0x23d967bf, 0xb3667a2e, 0xc4614ab8, 0x5d681b02, 0x2a6f2b94,
	0xb40bbe37, 0xc30c8ea1, 0x5a05df1b, 0x2d02ef8d,
};

static uint32_t
crc32_more(uint32_t crc, const void *data, size_t n)
{
	const unsigned char	*p = data;

	crc = ~crc;
	while (n-- > 0)
		crc = crc_table[(crc ^ *p++) & 0xff] ^ (crc >> 8);
	return ~crc;
}

/* --- writing ---------------------------------------------------------- */

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

static void
wr_u8(struct wr *w, uint8_t v)
{
	wr_bytes(w, &v, sizeof(v));
}

static void
wr_u32(struct wr *w, uint32_t v)
{
	wr_bytes(w, &v, sizeof(v));
}

static void
wr_u64(struct wr *w, uint64_t v)
{
	wr_bytes(w, &v, sizeof(v));
}

static void
wr_i64(struct wr *w, int64_t v)
{
	wr_bytes(w, &v, sizeof(v));
}

static void
wr_f64(struct wr *w, double v)
{
	wr_bytes(w, &v, sizeof(v));
}

/* A string: u32 length, or UINT32_MAX for none. */
static void
wr_str(struct wr *w, const char *s)
{
	if (s == NULL) {
		wr_u32(w, UINT32_MAX);
		return;
	}
	wr_u32(w, (uint32_t)strlen(s));
	wr_bytes(w, s, strlen(s));
}

static void
wr_samples(struct wr *w, const struct samples *s)
{
	size_t	i;
	int	c;

	wr_u64(w, samples_nblocks(s));
	for (i = 0; i < samples_nblocks(s); i++) {
		const void	*p;
		size_t		 len;

		samples_block(s, i, &p, &len);
		wr_u64(w, len);
		wr_bytes(w, p, len);
	}
	wr_u64(w, s->np);
	for (i = 0; i < s->np; i++) {
		wr_i64(w, s->pt[i]);
		wr_u32(w, s->pb[i]);
		for (c = 0; c < s->ncols; c++)
			wr_f64(w, s->pv[c][i]);
	}
}

int
ledger_checkpoint_write(const struct ledger *l,
    int (*cb)(void *arg, const void *data, size_t len), void *arg)
{
	struct wr	*w;
	size_t		 i, n;
	uint32_t	 k;
	int		 rc;

	if ((w = calloc(1, sizeof(*w))) == NULL)
		return -ENOMEM;
	w->cb = cb;
	w->arg = arg;
	wr_bytes(w, MAGIC, 8);
	wr_u32(w, LEDGER_CHECKPOINT_VERSION);
	wr_u32(w, BYTE_ORDER_MARK);
	wr_i64(w, l->opts.from_ms);
	wr_i64(w, l->opts.to_ms);
	wr_u8(w, (uint8_t)(l->opts.include_automated != 0));
	wr_u8(w, (uint8_t)(l->opts.want_timeline != 0));
	wr_u8(w, (uint8_t)l->want_occ);
	wr_u32(w, l->occ_id);

	wr_u32(w, SEC_COUNTS);
	wr_u64(w, l->c.lines);
	wr_u64(w, l->c.folded);
	wr_u64(w, l->c.incidents);
	wr_u64(w, l->c.fixes);
	wr_u64(w, l->c.skipped);
	wr_u64(w, l->c.malformed_footprints);
	wr_u64(w, l->c.rows);
	wr_u64(w, l->c.builds);

	wr_u32(w, SEC_SPAN);
	wr_i64(w, l->tmin);
	wr_i64(w, l->tmax);

	wr_u32(w, SEC_BUILDS);
	wr_u64(w, l->nbuilds);
	for (i = 0; i < l->nbuilds; i++) {
		const struct build	*b = &l->builds[i];

		wr_str(w, b->name);
		wr_i64(w, b->first_ms);
		wr_u64(w, b->nhb);
		wr_u64(w, b->nhp);
		wr_i64(w, b->ts_min);
		wr_i64(w, b->ts_max);
		wr_f64(w, b->worst);
	}

	wr_u32(w, SEC_ROWS);
	wr_u64(w, l->nrows);
	for (i = 0; i < l->nrows; i++) {
		const struct row	*r = l->rows[i];

		wr_u32(w, r->id);
		wr_str(w, r->key);
		wr_str(w, r->type);
		wr_str(w, r->phase);
		wr_str(w, r->ctx);
		wr_u64(w, r->count);
		wr_i64(w, r->first_ms);
		wr_i64(w, r->last_ms);
		wr_u32(w, r->nbuilds);
		for (k = 0; k < r->nbuilds; k++)
			wr_u32(w, r->builds[k]);
		wr_u32(w, r->max_build);
		wr_i64(w, r->last_unbuilt_ms);
		wr_u8(w, (uint8_t)r->has_worst);
		wr_f64(w, r->worst);
		wr_i64(w, r->worst_ms);
		wr_u8(w, (uint8_t)r->has_verdict);
		wr_str(w, r->guess);
		wr_str(w, r->conf);
		wr_str(w, r->evid);
	}

	wr_u32(w, SEC_FIXES);
	wr_u64(w, l->nfixes);
	for (i = 0; i < l->nfixes; i++) {
		const struct fix	*fx = &l->fixes[i];
		char			*text = cJSON_PrintUnformatted(fx->rec);

		if (text == NULL) {
			free(w);
			return -ENOMEM;
		}
		wr_str(w, text);
		free(text);
		wr_bytes(w, fx->id, 8);
		wr_u8(w, (uint8_t)fx->state);
		wr_i64(w, fx->at_ms);
		wr_str(w, fx->after_build);
		wr_u64(w, fx->nfps);
		for (n = 0; n < fx->nfps; n++)
			wr_u32(w, fx->fps[n]);
	}

	wr_u32(w, SEC_SKIPS);
	wr_u64(w, l->nskips);
	n = l->nskips < LEDGER_SKIPS_KEPT ? l->nskips : LEDGER_SKIPS_KEPT;
	for (i = 0; i < n; i++) {
		const struct skip	*s = &l->skips[(l->nskips - n + i) %
					    LEDGER_SKIPS_KEPT];

		wr_u8(w, (uint8_t)s->stream);
		wr_u64(w, s->offset);
		wr_u64(w, s->length);
		wr_str(w, s->reason);
	}

	wr_u32(w, SEC_OCC);
	if (l->want_occ) {
		char	*text = cJSON_PrintUnformatted(l->occ);

		if (text == NULL) {
			free(w);
			return -ENOMEM;
		}
		wr_str(w, text);
		free(text);
	} else
		wr_str(w, NULL);

	wr_u32(w, SEC_HB);
	wr_samples(w, &l->hb);
	wr_u32(w, SEC_HP);
	wr_samples(w, &l->hp);
	wr_u32(w, SEC_END);

	wr_u64(w, w->total + TRAILER);
	k = w->crc;
	w->total += sizeof(k);
	wr_bytes(w, &k, sizeof(k));
	wr_flush(w);
	rc = w->err;
	free(w);
	return rc;
}

/* --- reading ---------------------------------------------------------- */

struct rd {
	const unsigned char	*p, *end;
	int			 bad;		/* ran short or found nonsense */
};

static int
rd_bytes(struct rd *r, void *out, size_t n)
{
	if (r->bad || (size_t)(r->end - r->p) < n) {
		r->bad = 1;
		memset(out, 0, n);
		return -1;
	}
	memcpy(out, r->p, n);
	r->p += n;
	return 0;
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

	if (r->bad || n > (uint64_t)(r->end - r->p) / each) {
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
	uint32_t	n = rd_u32(r);

	*out = NULL;
	if (r->bad)
		return -1;
	if (n == UINT32_MAX)
		return 0;
	if (n > (size_t)(r->end - r->p) || (cap && n >= cap) ||
	    memchr(r->p, '\0', n) != NULL) {
		r->bad = 1;
		return -1;
	}
	if ((*out = malloc((size_t)n + 1)) == NULL)
		return -1;
	memcpy(*out, r->p, n);
	(*out)[n] = '\0';
	r->p += n;
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
	size_t	n, i, len;
	int	c, rc;

	n = rd_count(r, sizeof(uint64_t));
	for (i = 0; i < n && !r->bad; i++) {
		len = (size_t)rd_u64(r);
		if (r->bad || len > (size_t)(r->end - r->p)) {
			r->bad = 1;
			return -1;
		}
		if ((rc = samples_block_add(s, r->p, len)) != 0) {
			r->bad = rc == -EINVAL;
			return -1;
		}
		r->p += len;
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
			v[c] = rd_f64(r);
		if (!r->bad && samples_add(s, t, b, v) != 0)
			return -1;
	}
	return r->bad ? -1 : 0;
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
		if (build_insert(l, name, strlen(name), first) != 0) {
			free(name);
			return -1;
		}
		free(name);
		b = &l->builds[l->nbuilds - 1];
		b->nhb = rd_u64(r);
		b->nhp = rd_u64(r);
		b->ts_min = rd_i64(r);
		b->ts_max = rd_i64(r);
		b->worst = rd_f64(r);
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
		if (ok && !r->bad && (nb > (size_t)(r->end - r->p) / 4 ||
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
		l->nfixes++;
		rd_bytes(r, fx->id, 8);
		fx->id[8] = '\0';
		if ((st = rd_u8(r)) > FIX_OTHER)
			r->bad = 1;
		fx->state = (enum fix_state)st;
		fx->at_ms = rd_i64(r);
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
			if (!cJSON_IsArray(l->occ)) {
				r->bad = 1;
				return -1;
			}
		}
	}

	if (rd_section(r, SEC_HB) || rd_samples(r, &l->hb) != 0 ||
	    rd_section(r, SEC_HP) || rd_samples(r, &l->hp) != 0 ||
	    rd_section(r, SEC_END))
		return -1;
	if (r->p != r->end || c.rows != l->nrows || c.builds != l->nbuilds)
		r->bad = 1;
	l->c = c;
	return r->bad ? -1 : 0;
}

int
ledger_checkpoint_read(const struct ledger_opts *opts, const void *data,
    size_t len, struct ledger **out, const char **why)
{
	const unsigned char	*p = data;
	const char		*reason = NULL;
	struct rd		 r;
	struct ledger		*l;
	uint64_t		 total;
	uint32_t		 crc, u32, occ_id = 0;
	int64_t			 i64;
	int			 want_occ = 0, rc;

	*out = NULL;
	if (why == NULL)
		why = &reason;
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
	r.p = p + 16;
	r.end = p + len - TRAILER;
	r.bad = 0;
	i64 = rd_i64(&r);
	if (i64 != opts->from_ms)
		goto other;
	i64 = rd_i64(&r);
	if (i64 != opts->to_ms ||
	    rd_u8(&r) != (opts->include_automated != 0) ||
	    rd_u8(&r) != (opts->want_timeline != 0))
		goto other;
	want_occ = rd_u8(&r);
	occ_id = rd_u32(&r);
	{
		uint32_t	id;
		int		want = opts->occurrences_of != NULL &&
				    footprint_parse_hex(opts->occurrences_of,
				    strlen(opts->occurrences_of), &id) == 0;

		if (want != want_occ || (want && id != occ_id))
			goto other;
	}
	if ((l = ledger_create(opts)) == NULL) {
		*why = "out of memory";
		return -ENOMEM;
	}
	if ((rc = rd_state(&r, l)) != 0) {
		ledger_destroy(l);
		if (r.bad) {
			*why = "damaged: its contents do not hold together";
			return -EBADMSG;
		}
		*why = "out of memory";
		return -ENOMEM;
	}
	*out = l;
	*why = NULL;
	return 0;
other:
	*why = "folded with other options (time range, automated records, "
	    "timeline or the issue whose occurrences are kept)";
	return -ESTALE;
}
