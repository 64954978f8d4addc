/*
 * wake — the rule, the line, the rate limits and the catch-up summary
 * (see wake.h).
 *
 * Invariants: every line written here is valid UTF-8 (given valid input;
 * invalid bytes become '?'), has no control characters, and is at most
 * WAKE_LINE_MAX bytes.  Nothing a limit holds back is forgotten: it is in
 * the limiter's tally, by footprint, until a line says it.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ledger/footprint.h"
#include "ledger/impact.h"
#include "wake.h"

#define TIMES	"\xc3\x97"		/* U+00D7 MULTIPLICATION SIGN */
#define ELLIPSIS "\xe2\x80\xa6"		/* U+2026 */

enum { T_HITCH, T_USERMARK, T_JITTER, T_OTHER, T_NTYPES };
static const char *const type_names[T_NTYPES] = {
	"hitch", "usermark", "jitter", "other"
};

void
wake_config_defaults(struct wake_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->hitch_ms = 100;
	cfg->per_fp_ms = 10 * 1000;
	cfg->global_max = 6;
	cfg->global_window_ms = 60 * 1000;
	cfg->recent_ms = 10 * 60 * 1000;
	cfg->exec_max = 4;
	cfg->exec_queue = 64;
	cfg->exec_timeout_ms = 60 * 1000;
	cfg->desktop = 1;
	cfg->desktop_ms = 5 * 1000;
	cfg->loop = NULL;
}

static const char *
str(const char *s)
{
	return s != NULL ? s : "";
}

static int
type_index(const char *type)
{
	int i;

	for (i = 0; i < T_OTHER; i++)
		if (strcmp(str(type), type_names[i]) == 0)
			return i;
	return T_OTHER;
}

int
wake_is_meaningful(const struct ledger_event *ev,
    const struct wake_config *cfg)
{
	if (ev == NULL || ev->automated || !ev->incident || !ev->counted)
		return 0;
	switch (type_index(ev->type)) {
	case T_HITCH:
		return ev->has_value && isfinite(ev->value) &&
		    ev->value >= cfg->hitch_ms;
	case T_USERMARK:
	case T_JITTER:
		return 1;
	default:
		return 0;
	}
}

void
wake_id_format(char out[WAKE_ID_SIZE], uint64_t generation, uint64_t offset)
{
	snprintf(out, WAKE_ID_SIZE, "%" PRIu64 ":%" PRIu64, generation, offset);
}

/* --- text ---------------------------------------------------------------- */

/*
 * A bounded string: appends that do not fit are cut at a UTF-8 boundary
 * and the builder stays full.  cap excludes the NUL.
 */
struct sb {
	char	*buf;
	size_t	 cap;
	size_t	 len;
};

static void
sb_init(struct sb *sb, char *buf, size_t size)
{
	sb->buf = buf;
	sb->cap = size - 1;
	sb->len = 0;
	buf[0] = '\0';
}

/* The largest n' <= n that does not end inside a UTF-8 sequence of s. */
static size_t
utf8_cut(const char *s, size_t n)
{
	size_t i = n;

	/* Step back over continuation bytes to the lead byte at the cut... */
	while (i > 0 && ((unsigned char)s[i] & 0xc0) == 0x80)
		i--;
	/* ...which is fine if the cut falls exactly before it. */
	return i;
}

static void
sb_put(struct sb *sb, const char *s, size_t n)
{
	if (n > sb->cap - sb->len) {
		/* s[n] may not exist: cut within s, then check the boundary
		 * against s itself. */
		n = sb->cap - sb->len;
		n = utf8_cut(s, n);
	}
	memcpy(sb->buf + sb->len, s, n);
	sb->len += n;
	sb->buf[sb->len] = '\0';
}

static void
sb_puts(struct sb *sb, const char *s)
{
	sb_put(sb, s, strlen(s));
}

static void __attribute__((format(printf, 2, 3)))
sb_printf(struct sb *sb, const char *fmt, ...)
{
	char tmp[256];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	sb_put(sb, tmp, (size_t)n < sizeof(tmp) ? (size_t)n : sizeof(tmp) - 1);
}

/*
 * Decode one UTF-8 character at s (n bytes left): its code point, or -1
 * for an invalid or truncated sequence (then *len is 1).
 */
static long
utf8_next(const unsigned char *s, size_t n, size_t *len)
{
	long cp;
	size_t k, i;

	*len = 1;
	if (s[0] < 0x80)
		return s[0];
	if (s[0] >= 0xc2 && s[0] <= 0xdf) {
		k = 2;
		cp = s[0] & 0x1f;
	} else if (s[0] >= 0xe0 && s[0] <= 0xef) {
		k = 3;
		cp = s[0] & 0x0f;
	} else if (s[0] >= 0xf0 && s[0] <= 0xf4) {
		k = 4;
		cp = s[0] & 0x07;
	} else
		return -1;
	if (n < k)
		return -1;
	for (i = 1; i < k; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return -1;
		cp = (cp << 6) | (s[i] & 0x3f);
	}
	/* Overlongs, surrogates and beyond U+10FFFF. */
	if ((k == 3 && cp < 0x800) || (k == 4 && cp < 0x10000) ||
	    (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff)
		return -1;
	*len = k;
	return cp;
}

/* C0, DEL, C1 and the Unicode line/paragraph separators: anything a
 * reader might take as the end of the line or a terminal command. */
static int
is_control(long cp)
{
	return cp < 0x20 || cp == 0x7f || (cp >= 0x80 && cp < 0xa0) ||
	    cp == 0x2028 || cp == 0x2029;
}

static int
is_space_control(long cp)
{
	return cp == '\t' || cp == '\n' || cp == '\r' || cp == 0x0b ||
	    cp == 0x0c || cp == 0x85 || cp == 0x2028 || cp == 0x2029;
}

/* A token of the line: spaces and controls become '_'. */
static void
sb_token(struct sb *sb, const char *s)
{
	const unsigned char *p = (const unsigned char *)str(s);
	size_t n = strlen((const char *)p), len;
	long cp;

	while (n > 0 && sb->len < sb->cap) {
		cp = utf8_next(p, n, &len);
		if (cp < 0)
			sb_put(sb, "?", 1);
		else if (cp == ' ' || is_control(cp))
			sb_put(sb, "_", 1);
		else
			sb_put(sb, (const char *)p, len);
		p += len;
		n -= len;
	}
}

/*
 * Write the evidence escaped ('"' and '\' backslashed, line breaks and
 * tabs as one space, other controls dropped) in whole units, at most cap
 * bytes.  Returns 1 if all of it fitted.
 */
static int
escape_evidence(char *out, size_t cap, size_t *outlen, const char *in)
{
	const unsigned char *p = (const unsigned char *)in;
	size_t n = strlen(in), len, k = 0, ulen;
	char unit[4];
	const char *u;
	long cp;

	while (n > 0) {
		cp = utf8_next(p, n, &len);
		u = unit;
		if (cp < 0) {
			unit[0] = '?';
			ulen = 1;
		} else if (cp == '"' || cp == '\\') {
			unit[0] = '\\';
			unit[1] = (char)cp;
			ulen = 2;
		} else if (is_space_control(cp)) {
			/* one space for a run of breaks */
			if (k > 0 && out[k - 1] == ' ')
				ulen = 0;
			else {
				unit[0] = ' ';
				ulen = 1;
			}
		} else if (is_control(cp))
			ulen = 0;
		else {
			u = (const char *)p;
			ulen = len;
		}
		if (k + ulen > cap) {
			*outlen = k;
			return 0;
		}
		memcpy(out + k, u, ulen);
		k += ulen;
		p += len;
		n -= len;
	}
	*outlen = k;
	return 1;
}

static void
sb_clock(struct sb *sb, int64_t ms, int with_date)
{
	struct tm tm;
	time_t t;
	char tmp[32];

	t = (time_t)(ms >= 0 ? ms / 1000 : -((-ms + 999) / 1000));
	if (localtime_r(&t, &tm) == NULL) {
		sb_puts(sb, "?");
		return;
	}
	strftime(tmp, sizeof(tmp), with_date ? "%Y-%m-%d %H:%M:%S" :
	    "%H:%M:%S", &tm);
	sb_puts(sb, tmp);
}

static int
same_local_day(int64_t a, int64_t b)
{
	struct tm ta, tb;
	time_t t;

	t = (time_t)(a / 1000);
	if (localtime_r(&t, &ta) == NULL)
		return 0;
	t = (time_t)(b / 1000);
	if (localtime_r(&t, &tb) == NULL)
		return 0;
	return ta.tm_year == tb.tm_year && ta.tm_yday == tb.tm_yday;
}

int
wake_what_format(char *buf, size_t size, const struct ledger_event *ev)
{
	struct sb sb;
	const char *unit = str(ev->unit);
	int t = type_index(ev->type);

	if (size == 0)
		return -EINVAL;
	sb_init(&sb, buf, size);
	sb_token(&sb, str(ev->type)[0] != '\0' ? ev->type : "record");
	if (!ev->has_value || !isfinite(ev->value))
		return (int)sb.len;
	sb_puts(&sb, t == T_USERMARK ? " worst " : " ");
	if (strcmp(unit, "ms") == 0)
		sb_printf(&sb, "%.1f", ev->value);
	else if (strcmp(unit, "units") == 0)
		sb_printf(&sb, "%.2f", ev->value);
	else
		sb_printf(&sb, "%g", ev->value);
	sb_token(&sb, unit);
	return (int)sb.len;
}

static void
json_str_or_null(cJSON *o, const char *name, const char *s)
{
	if (s != NULL && s[0] != '\0')
		cJSON_AddStringToObject(o, name, s);
	else
		cJSON_AddNullToObject(o, name);
}

static void
json_time_or_null(cJSON *o, const char *name, int64_t ms)
{
	struct tm tm;
	time_t t;
	char tmp[48];
	int64_t sec, msec;

	if (ms == LEDGER_NO_TIME) {
		cJSON_AddNullToObject(o, name);
		return;
	}
	sec = ms >= 0 ? ms / 1000 : -((-ms + 999) / 1000);
	msec = ms - sec * 1000;
	t = (time_t)sec;
	if (gmtime_r(&t, &tm) == NULL) {
		cJSON_AddNullToObject(o, name);
		return;
	}
	snprintf(tmp, sizeof(tmp), "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ",
	    tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour,
	    tm.tm_min, tm.tm_sec, (int)msec);
	cJSON_AddStringToObject(o, name, tmp);
}

/* --- footprint table ----------------------------------------------------- */

/*
 * Open addressing over footprint ids.  No deletion: the limiter rebuilds
 * the table without its expired entries when it fills, so it holds the
 * footprints of the last per_fp_ms, not every footprint ever seen; a
 * tally's index and the regression memory keep theirs.
 */
struct fpslot {
	char		id[9];		/* "" = empty slot */
	int64_t		t;		/* limiter: last line sent */
	uint64_t	n;		/* tally: entry index + 1; memory: 1 if
					   last seen regressed */
};

struct fptab {
	struct fpslot	*slot;
	size_t		 cap;		/* power of two */
	size_t		 used;
};

static uint32_t
fp_hash(const char *id)
{
	return fnv1a32(id, strlen(id));
}

/* Ids are 8 hex digits; anything longer is cut, "" is stored as "-". */
static void
fp_key(char out[9], const char *id)
{
	size_t n = strlen(str(id));

	if (n == 0) {
		strcpy(out, "-");
		return;
	}
	if (n > 8)
		n = 8;
	memcpy(out, id, n);
	out[n] = '\0';
}

static struct fpslot *
fptab_find(struct fptab *ft, const char *key)
{
	size_t i;

	if (ft->cap == 0)
		return NULL;
	for (i = fp_hash(key) & (ft->cap - 1); ft->slot[i].id[0] != '\0';
	    i = (i + 1) & (ft->cap - 1))
		if (strcmp(ft->slot[i].id, key) == 0)
			return &ft->slot[i];
	return NULL;
}

/* Rebuild into cap slots, keeping the entries keep() says yes to. */
static int
fptab_rebuild(struct fptab *ft, size_t cap,
    int (*keep)(const struct fpslot *, void *), void *arg)
{
	struct fpslot *ns, *s;
	size_t i, j;

	if ((ns = calloc(cap, sizeof(*ns))) == NULL)
		return -ENOMEM;
	ft->used = 0;
	for (i = 0; i < ft->cap; i++) {
		s = &ft->slot[i];
		if (s->id[0] == '\0' || (keep != NULL && !keep(s, arg)))
			continue;
		for (j = fp_hash(s->id) & (cap - 1); ns[j].id[0] != '\0';
		    j = (j + 1) & (cap - 1))
			;
		ns[j] = *s;
		ft->used++;
	}
	free(ft->slot);
	ft->slot = ns;
	ft->cap = cap;
	return 0;
}

/* Find or add key; the table is at most half full after this.  NULL on
 * allocation failure (the table is unchanged then). */
static struct fpslot *
fptab_get(struct fptab *ft, const char *key,
    int (*keep)(const struct fpslot *, void *), void *arg)
{
	struct fpslot *s;
	size_t i, cap;

	if ((s = fptab_find(ft, key)) != NULL)
		return s;
	if ((ft->used + 1) * 2 > ft->cap) {
		/* Drop what has expired; grow if that did not free enough. */
		if (keep != NULL && ft->cap > 0 &&
		    fptab_rebuild(ft, ft->cap, keep, arg) < 0)
			return NULL;
		if ((ft->used + 1) * 4 > ft->cap) {
			cap = ft->cap == 0 ? 16 : ft->cap * 2;
			if (fptab_rebuild(ft, cap, NULL, NULL) < 0)
				return NULL;
		}
	}
	for (i = fp_hash(key) & (ft->cap - 1); ft->slot[i].id[0] != '\0';
	    i = (i + 1) & (ft->cap - 1))
		;
	s = &ft->slot[i];
	memset(s, 0, sizeof(*s));
	strcpy(s->id, key);
	ft->used++;
	return s;
}


/* --- the tally ----------------------------------------------------------- */

struct tally_ent {
	struct wake_tally_fp	 fp;
	uint64_t		 lgen, loff;	/* its latest record's id */
};

struct wake_tally {
	uint64_t		 total;
	uint64_t		 type[T_NTYPES];
	int64_t			 since;		/* of the lowest id */
	int64_t			 first_at, last_at;
	uint64_t		 fgen, foff, lgen, loff;
	int			 any;
	struct fptab		 idx;		/* fp -> ents index + 1 (n) */
	struct tally_ent	*ents;
	size_t			 nents, capents;
	const struct wake_tally_fp **sorted;
	size_t			 nsorted;
	int			 dirty;
};

static int
id_less(uint64_t ag, uint64_t ao, uint64_t bg, uint64_t bo)
{
	return ag < bg || (ag == bg && ao < bo);
}

struct wake_tally *
wake_tally_create(void)
{
	struct wake_tally *t;

	if ((t = calloc(1, sizeof(*t))) == NULL)
		return NULL;
	t->first_at = t->last_at = LEDGER_NO_TIME;
	return t;
}

void
wake_tally_reset(struct wake_tally *t)
{
	free(t->idx.slot);
	free(t->ents);
	free(t->sorted);
	memset(t, 0, sizeof(*t));
	t->first_at = t->last_at = LEDGER_NO_TIME;
}

void
wake_tally_destroy(struct wake_tally *t)
{
	if (t == NULL)
		return;
	wake_tally_reset(t);
	free(t);
}

/* Find or add the entry of footprint key; NULL on allocation failure. */
static struct tally_ent *
tally_ent(struct wake_tally *t, const char *key, int *fresh)
{
	struct fpslot *s;
	struct tally_ent *e;

	*fresh = 0;
	if ((s = fptab_find(&t->idx, key)) != NULL)
		return &t->ents[s->n - 1];
	if (t->nents == t->capents) {
		size_t cap = t->capents ? t->capents * 2 : 8;
		struct tally_ent *ne = realloc(t->ents, cap * sizeof(*ne));

		if (ne == NULL)
			return NULL;
		t->ents = ne;
		t->capents = cap;
	}
	if ((s = fptab_get(&t->idx, key, NULL, NULL)) == NULL)
		return NULL;
	e = &t->ents[t->nents];
	memset(e, 0, sizeof(*e));
	snprintf(e->fp.fp, sizeof(e->fp.fp), "%s", key);
	s->n = ++t->nents;
	*fresh = 1;
	return e;
}

/* The entry takes the newer record's type, verdict and status, and the
 * worse value. */
static void
ent_fold(struct tally_ent *e, const struct wake_tally_fp *r, uint64_t count,
    uint64_t gen, uint64_t off, int fresh)
{
	if (fresh || !id_less(gen, off, e->lgen, e->loff)) {
		memcpy(e->fp.type, r->type, sizeof(e->fp.type));
		memcpy(e->fp.guess, r->guess, sizeof(e->fp.guess));
		memcpy(e->fp.status, r->status, sizeof(e->fp.status));
		e->lgen = gen;
		e->loff = off;
	}
	if (r->has_worst && (!e->fp.has_worst || r->worst > e->fp.worst)) {
		e->fp.has_worst = 1;
		e->fp.worst = r->worst;
		memcpy(e->fp.unit, r->unit, sizeof(e->fp.unit));
	}
	e->fp.count += count;
}

static void
tally_span(struct wake_tally *t, int64_t since, int64_t first_at,
    int64_t last_at, uint64_t fgen, uint64_t foff, uint64_t lgen,
    uint64_t loff)
{
	if (!t->any || id_less(fgen, foff, t->fgen, t->foff)) {
		t->fgen = fgen;
		t->foff = foff;
		t->since = since;
	}
	if (!t->any || id_less(t->lgen, t->loff, lgen, loff)) {
		t->lgen = lgen;
		t->loff = loff;
	}
	if (first_at != LEDGER_NO_TIME && (t->first_at == LEDGER_NO_TIME ||
	    first_at < t->first_at))
		t->first_at = first_at;
	if (last_at != LEDGER_NO_TIME && (t->last_at == LEDGER_NO_TIME ||
	    last_at > t->last_at))
		t->last_at = last_at;
	t->any = 1;
}

int
wake_tally_add(struct wake_tally *t, const struct ledger_event *ev,
    uint64_t gen, uint64_t off, int64_t now_ms)
{
	struct wake_tally_fp r;
	struct tally_ent *e;
	char key[9];
	int fresh;

	t->total++;
	t->type[type_index(ev->type)]++;
	tally_span(t, ev->at_ms != LEDGER_NO_TIME ? ev->at_ms : now_ms,
	    ev->at_ms, ev->at_ms, gen, off, gen, off);
	t->dirty = 1;
	memset(&r, 0, sizeof(r));
	snprintf(r.type, sizeof(r.type), "%s", str(ev->type));
	snprintf(r.guess, sizeof(r.guess), "%s", str(ev->guess));
	snprintf(r.status, sizeof(r.status), "%s", str(ev->status));
	snprintf(r.unit, sizeof(r.unit), "%s", str(ev->unit));
	r.has_worst = ev->has_value && isfinite(ev->value);
	r.worst = r.has_worst ? ev->value : 0;
	fp_key(key, ev->id);
	if ((e = tally_ent(t, key, &fresh)) == NULL)
		return -ENOMEM;
	ent_fold(e, &r, 1, gen, off, fresh);
	return 0;
}

int
wake_tally_merge(struct wake_tally *dst, struct wake_tally *src)
{
	struct tally_ent *e;
	size_t i;
	int fresh, rc = 0;

	if (src->total == 0)
		return 0;
	dst->total += src->total;
	for (i = 0; i < T_NTYPES; i++)
		dst->type[i] += src->type[i];
	tally_span(dst, src->since, src->first_at, src->last_at, src->fgen,
	    src->foff, src->lgen, src->loff);
	dst->dirty = 1;
	for (i = 0; i < src->nents; i++) {
		if ((e = tally_ent(dst, src->ents[i].fp.fp, &fresh)) == NULL) {
			rc = -ENOMEM;
			continue;
		}
		ent_fold(e, &src->ents[i].fp, src->ents[i].fp.count,
		    src->ents[i].lgen, src->ents[i].loff, fresh);
	}
	wake_tally_reset(src);
	return rc;
}

uint64_t
wake_tally_count(const struct wake_tally *t)
{
	return t->total;
}

int64_t
wake_tally_since(const struct wake_tally *t)
{
	return t->since;
}

void
wake_tally_span(const struct wake_tally *t, int64_t *first_at,
    int64_t *last_at)
{
	*first_at = t->first_at;
	*last_at = t->last_at;
}

void
wake_tally_ids(const struct wake_tally *t, uint64_t *first_gen,
    uint64_t *first_off, uint64_t *last_gen, uint64_t *last_off)
{
	*first_gen = t->fgen;
	*first_off = t->foff;
	*last_gen = t->lgen;
	*last_off = t->loff;
}

static void
fp_impact(const struct wake_tally_fp *f, struct impact *im)
{
	struct impact_of in;

	memset(&in, 0, sizeof(in));
	in.type = f->type;
	in.status = f->status;
	in.worst = f->worst;
	in.has_worst = f->has_worst;
	in.unit = f->unit;
	in.count = f->count;
	in.age_ms = 0;		/* all of it is happening now */
	impact_compute(&in, im);
}

static int
fp_cmp(const void *pa, const void *pb)
{
	const struct wake_tally_fp *a = *(const struct wake_tally_fp *const *)pa;
	const struct wake_tally_fp *b = *(const struct wake_tally_fp *const *)pb;
	struct impact ia, ib;
	int c;

	fp_impact(a, &ia);
	fp_impact(b, &ib);
	if ((c = impact_cmp(&ia, &ib)) != 0)
		return c;
	if (a->count != b->count)
		return a->count > b->count ? -1 : 1;
	return strcmp(a->fp, b->fp);
}

size_t
wake_tally_list(struct wake_tally *t, const struct wake_tally_fp *const **out)
{
	size_t i;

	if (t->dirty || t->nsorted != t->nents) {
		const struct wake_tally_fp **ns;

		ns = realloc(t->sorted, (t->nents ? t->nents : 1) *
		    sizeof(*ns));
		if (ns == NULL) {
			*out = t->sorted;
			return t->sorted != NULL ? t->nsorted : 0;
		}
		t->sorted = ns;
		for (i = 0; i < t->nents; i++)
			ns[i] = &t->ents[i].fp;
		qsort(ns, t->nents, sizeof(*ns), fp_cmp);
		t->nsorted = t->nents;
		t->dirty = 0;
	}
	*out = t->sorted;
	return t->nsorted;
}

/*
 * The footprints of two tallies as one list, most severe first: a copy
 * (merged where both have a footprint) in *out, to be freed.  -ENOMEM.
 */
static int
list_both(struct wake_tally *a, struct wake_tally *b,
    struct wake_tally_fp **out, const struct wake_tally_fp ***sorted,
    size_t *n)
{
	const struct wake_tally_fp *const *la = NULL, *const *lb = NULL;
	size_t na = a != NULL ? wake_tally_list(a, &la) : 0;
	size_t nb = b != NULL ? wake_tally_list(b, &lb) : 0;
	struct wake_tally_fp *all;
	const struct wake_tally_fp **ptr;
	size_t i, j, k = 0;

	*out = NULL;
	*sorted = NULL;
	*n = 0;
	if ((all = calloc(na + nb + 1, sizeof(*all))) == NULL ||
	    (ptr = calloc(na + nb + 1, sizeof(*ptr))) == NULL) {
		free(all);
		return -ENOMEM;
	}
	for (i = 0; i < na; i++)
		all[k++] = *la[i];
	for (j = 0; j < nb; j++) {
		for (i = 0; i < na; i++)
			if (strcmp(all[i].fp, lb[j]->fp) == 0)
				break;
		if (i == na) {
			all[k++] = *lb[j];
			continue;
		}
		/* both: b is the limiter's, said after a's, so newer */
		all[i].count += lb[j]->count;
		memcpy(all[i].type, lb[j]->type, sizeof(all[i].type));
		memcpy(all[i].guess, lb[j]->guess, sizeof(all[i].guess));
		memcpy(all[i].status, lb[j]->status, sizeof(all[i].status));
		if (lb[j]->has_worst && (!all[i].has_worst ||
		    lb[j]->worst > all[i].worst)) {
			all[i].has_worst = 1;
			all[i].worst = lb[j]->worst;
			memcpy(all[i].unit, lb[j]->unit, sizeof(all[i].unit));
		}
	}
	for (i = 0; i < k; i++)
		ptr[i] = &all[i];
	qsort(ptr, k, sizeof(*ptr), fp_cmp);
	*out = all;
	*sorted = ptr;
	*n = k;
	return 0;
}

/* "164ms", "4.2ms", "0.67units", "" */
static void
sb_worst(struct sb *sb, const struct wake_tally_fp *f)
{
	if (!f->has_worst)
		return;
	sb_puts(sb, " ");
	if (strcmp(f->unit, "ms") == 0)
		sb_printf(sb, f->worst >= 10 ? "%.0fms" : "%.1fms", f->worst);
	else if (strcmp(f->unit, "units") == 0)
		sb_printf(sb, "%.2funits", f->worst);
	else {
		sb_printf(sb, "%g", f->worst);
		sb_token(sb, f->unit);
	}
}

/* "81e5eb9b ×7 164ms shader-compile regressed" into buf; its length. */
static size_t
entry_format(char *buf, size_t size, const struct wake_tally_fp *f)
{
	struct sb sb;

	sb_init(&sb, buf, size);
	sb_token(&sb, f->fp);
	sb_printf(&sb, " " TIMES "%" PRIu64, f->count);
	sb_worst(&sb, f);
	sb_puts(&sb, " ");
	sb_token(&sb, f->guess[0] != '\0' ? f->guess : "unclassified");
	if (f->status[0] != '\0') {
		sb_puts(&sb, " ");
		sb_token(&sb, f->status);
	}
	return sb.len;
}

/*
 * The footprint list of a line: ": e1, e2, 3 more footprints" naming the
 * first k of n; " (n footprints)" when k is 0.  Into sb when it is not
 * NULL; returns its length either way.
 */
static size_t
list_text(struct sb *sb, const struct wake_tally_fp *const *l, size_t n,
    size_t k)
{
	char e[WAKE_LINE_SIZE], tmp[64];
	size_t len = 0, i, el;

	if (n == 0)
		return 0;
	if (k == 0) {
		snprintf(tmp, sizeof(tmp), " (%zu footprint%s)", n,
		    n == 1 ? "" : "s");
		if (sb != NULL)
			sb_puts(sb, tmp);
		return strlen(tmp);
	}
	for (i = 0; i < k; i++) {
		el = entry_format(e, sizeof(e), l[i]);
		len += 2 + el;				/* ": " or ", " */
		if (sb != NULL) {
			sb_puts(sb, i == 0 ? ": " : ", ");
			sb_put(sb, e, el);
		}
	}
	if (k < n) {
		snprintf(tmp, sizeof(tmp), ", %zu more footprint%s", n - k,
		    n - k == 1 ? "" : "s");
		len += strlen(tmp);
		if (sb != NULL)
			sb_puts(sb, tmp);
	}
	return len;
}

/*
 * The largest k <= n whose list fits in `room` bytes (0 if none does).
 * A list grows by a whole entry per footprint and its "N more" tail
 * shrinks by a few bytes, so the search stops once it is well past room:
 * a line holds a dozen entries at most, whatever n is.
 */
static size_t
list_fit(const struct wake_tally_fp *const *l, size_t n, size_t room)
{
	size_t k, best = 0, len;

	for (k = 1; k <= n; k++) {
		len = list_text(NULL, l, n, k);
		if (len <= room)
			best = k;
		else if (len > room + 32)
			break;
	}
	return best;
}

static void
json_tally_list(cJSON *arr, const struct wake_tally_fp *const *l, size_t n)
{
	size_t i;
	cJSON *e;

	for (i = 0; i < n; i++) {
		if ((e = cJSON_CreateObject()) == NULL)
			return;
		cJSON_AddStringToObject(e, "fp", l[i]->fp);
		json_str_or_null(e, "type", l[i]->type);
		cJSON_AddNumberToObject(e, "count", (double)l[i]->count);
		if (l[i]->has_worst)
			cJSON_AddNumberToObject(e, "worst", l[i]->worst);
		else
			cJSON_AddNullToObject(e, "worst");
		json_str_or_null(e, "unit", l[i]->unit);
		json_str_or_null(e, "guess", l[i]->guess);
		json_str_or_null(e, "status", l[i]->status);
		cJSON_AddItemToArray(arr, e);
	}
}

static void
json_id_or_null(cJSON *o, const char *name, int any, uint64_t gen,
    uint64_t off)
{
	char id[WAKE_ID_SIZE];

	if (!any) {
		cJSON_AddNullToObject(o, name);
		return;
	}
	wake_id_format(id, gen, off);
	cJSON_AddStringToObject(o, name, id);
}

int
wake_tally_json(struct wake_tally *t, cJSON *o)
{
	const struct wake_tally_fp *const *l = NULL;
	size_t n = 0;
	cJSON *arr;
	int empty = t == NULL || t->total == 0;

	cJSON_AddNumberToObject(o, "held", empty ? 0 : (double)t->total);
	if (empty)
		cJSON_AddNullToObject(o, "heldSince");
	else
		json_time_or_null(o, "heldSince", t->since);
	json_id_or_null(o, "heldFrom", !empty, empty ? 0 : t->fgen,
	    empty ? 0 : t->foff);
	if ((arr = cJSON_AddArrayToObject(o, "heldBy")) == NULL)
		return -ENOMEM;
	if (!empty) {
		n = wake_tally_list(t, &l);
		json_tally_list(arr, l, n);
	}
	return cJSON_GetArraySize(arr) == (int)n ? 0 : -ENOMEM;
}

/* --- the wake line ------------------------------------------------------- */

#define ARROW	" \xe2\x86\x92 "		/* " → " */

/*
 * An escaped text (note or evidence) cut to at most cap bytes: whole if it
 * fits, else as much as fits before "…".  Returns its length; 0 when
 * cap cannot hold a cut one.
 */
static size_t
text_fit(char *out, size_t cap, const char *in)
{
	size_t len;

	if (in == NULL || in[0] == '\0')
		return 0;
	if (escape_evidence(out, cap, &len, in))
		return len;
	if (cap <= strlen(ELLIPSIS))
		return 0;
	escape_evidence(out, cap - strlen(ELLIPSIS), &len, in);
	memcpy(out + len, ELLIPSIS, strlen(ELLIPSIS));
	return len + strlen(ELLIPSIS);
}

/* Bytes the whole escaped text would take (no cut). */
static size_t
text_need(const char *in)
{
	char tmp[4 * WAKE_LINE_SIZE];
	size_t len;

	if (in == NULL || in[0] == '\0')
		return 0;
	if (escape_evidence(tmp, sizeof(tmp), &len, in))
		return len;
	return sizeof(tmp);		/* longer than any line */
}

/* A quoted token's cost: its text plus the quoting (0 without text). */
static size_t
tok(size_t text, size_t overhead)
{
	return text > 0 ? text + overhead : 0;
}

/* The text room a token of `room` bytes leaves (0 if none). */
static size_t
untok(size_t room, size_t overhead)
{
	return room > overhead ? room - overhead : 0;
}

#define NOTE_OVER	8	/* ` note="` and `"` */
#define EVID_OVER	3	/* ` "` and `"` */

int
wake_format(char *buf, size_t size, const struct ledger_event *ev,
    const char *id, struct wake_tally *held, const struct wake_config *cfg)
{
	char head[WAKE_LINE_SIZE], tail[WAKE_LINE_SIZE], what[128];
	char hh[128], cmd[64], note[WAKE_LINE_SIZE], evid[WAKE_LINE_SIZE];
	struct sb h, t, line, hs;
	const struct wake_tally_fp *const *l = NULL;
	size_t limit, fixed, room, n = 0, k = 0, note_need, evid_need;
	size_t note_cap, evid_cap, used, nl, el, list0, troom;
	const char *guess = str(ev->guess), *conf = str(ev->confidence);
	const char *loop = cfg != NULL ? cfg->loop : NULL;

	if (size == 0)
		return -EINVAL;
	limit = size - 1 < WAKE_LINE_MAX ? size - 1 : WAKE_LINE_MAX;

	sb_init(&h, head, sizeof(head));
	sb_puts(&h, "sloptimize ");
	wake_what_format(what, sizeof(what), ev);
	sb_puts(&h, what);
	sb_puts(&h, " ");
	if (guess[0] == '\0')
		sb_puts(&h, "unclassified");
	else {
		sb_token(&h, guess);
		if (conf[0] != '\0') {
			sb_puts(&h, "/");
			sb_token(&h, conf);
		}
	}

	sb_init(&t, tail, sizeof(tail));
	sb_puts(&t, " fp=");
	sb_token(&t, ev->id[0] != '\0' ? ev->id : "-");
	sb_printf(&t, " " TIMES "%" PRIu64, ev->count);
	if (str(ev->status)[0] != '\0') {
		sb_puts(&t, " status=");
		sb_token(&t, ev->status);
	}
	if (str(ev->phase)[0] != '\0') {
		sb_puts(&t, " phase=");
		sb_token(&t, ev->phase);
	}
	if (str(ev->build)[0] != '\0') {
		sb_puts(&t, " build=");
		sb_token(&t, ev->build);
	}
	if (str(id)[0] != '\0') {
		sb_puts(&t, " id=");
		sb_token(&t, id);
	}
	if (loop != NULL && loop[0] != '\0' && strcmp(loop, "off") != 0) {
		sb_puts(&t, " loop=");
		sb_token(&t, loop);
	}

	sb_init(&hs, hh, sizeof(hh));
	if (held != NULL && held->total > 0) {
		sb_printf(&hs, " +%" PRIu64 " more since ", held->total);
		sb_clock(&hs, held->since, 0);
		n = wake_tally_list(held, &l);
	}
	cmd[0] = '\0';
	if (ev->id[0] != '\0')
		snprintf(cmd, sizeof(cmd), ARROW "sloptimize issues --fp %s",
		    ev->id);

	/*
	 * The fixed tokens are what a reader dedupes, resumes, counts and
	 * acts with: they are never shortened.  The rest share what is left
	 * (wake.h says in which order).
	 */
	fixed = h.len + t.len + hs.len + strlen(cmd);
	room = fixed < limit ? limit - fixed : 0;
	/* with held footprints, at least " (N footprints)" is said */
	list0 = n > 0 ? list_text(NULL, l, n, 0) : 0;
	troom = room > list0 ? room - list0 : 0;
	note_need = text_need(ev->note);
	evid_need = text_need(ev->evidence);
	note_cap = note_need < WAKE_NOTE_SHARE ? note_need : WAKE_NOTE_SHARE;
	evid_cap = evid_need < WAKE_NOTE_SHARE ? evid_need : WAKE_NOTE_SHARE;
	if (note_cap > untok(troom, NOTE_OVER))
		note_cap = untok(troom, NOTE_OVER);
	if (tok(note_cap, NOTE_OVER) + tok(evid_cap, EVID_OVER) > troom)
		evid_cap = untok(troom - tok(note_cap, NOTE_OVER), EVID_OVER);
	if (n > 0) {
		used = tok(note_cap, NOTE_OVER) + list_text(NULL, l, n, 1);
		if (used <= room) {
			/* the first held footprint before the evidence */
			if (used + tok(evid_cap, EVID_OVER) > room)
				evid_cap = untok(room - used, EVID_OVER);
			k = list_fit(l, n, room - tok(note_cap, NOTE_OVER) -
			    tok(evid_cap, EVID_OVER));
		}
	}
	used = tok(note_cap, NOTE_OVER) + tok(evid_cap, EVID_OVER) +
	    list_text(NULL, l, n, k);
	/* what is left grows the note, then the evidence, back to whole */
	if (used < room && note_cap < note_need) {
		size_t more = room - used;
		size_t grow = note_cap == 0 ? untok(more, NOTE_OVER) : more;

		if (grow > note_need - note_cap)
			grow = note_need - note_cap;
		note_cap += grow;
		used = tok(note_cap, NOTE_OVER) + tok(evid_cap, EVID_OVER) +
		    list_text(NULL, l, n, k);
	}
	if (used < room && evid_cap < evid_need) {
		size_t more = room - used;
		size_t grow = evid_cap == 0 ? untok(more, EVID_OVER) : more;

		if (grow > evid_need - evid_cap)
			grow = evid_need - evid_cap;
		evid_cap += grow;
	}
	nl = text_fit(note, note_cap, ev->note);
	el = text_fit(evid, evid_cap, ev->evidence);

	sb_init(&line, buf, limit + 1);
	sb_put(&line, head, h.len);
	if (nl > 0) {
		sb_puts(&line, " note=\"");
		sb_put(&line, note, nl);
		sb_puts(&line, "\"");
	}
	if (el > 0) {
		sb_puts(&line, " \"");
		sb_put(&line, evid, el);
		sb_puts(&line, "\"");
	}
	sb_put(&line, tail, t.len);
	sb_put(&line, hh, hs.len);
	list_text(&line, l, n, k);
	sb_puts(&line, cmd);
	return (int)line.len;
}

cJSON *
wake_json(const struct ledger_event *ev, const char *id, const char *line,
    struct wake_tally *held)
{
	cJSON *o, *r;

	if ((o = cJSON_CreateObject()) == NULL)
		return NULL;
	cJSON_AddStringToObject(o, "type", "wake");
	json_str_or_null(o, "id", id);
	cJSON_AddStringToObject(o, "line", str(line));
	if ((r = cJSON_AddObjectToObject(o, "record")) == NULL)
		goto fail;
	json_str_or_null(r, "type", ev->type);
	json_time_or_null(r, "at", ev->at_ms);
	if (ev->has_value && isfinite(ev->value))
		cJSON_AddNumberToObject(r, "value", ev->value);
	else
		cJSON_AddNullToObject(r, "value");
	json_str_or_null(r, "unit", ev->unit);
	json_str_or_null(r, "fp", ev->id);
	json_str_or_null(r, "key", ev->key);
	cJSON_AddNumberToObject(r, "count", (double)ev->count);
	json_str_or_null(r, "status", ev->status);
	json_str_or_null(r, "phase", ev->phase);
	json_str_or_null(r, "build", ev->build);
	json_str_or_null(r, "guess", ev->guess);
	json_str_or_null(r, "confidence", ev->confidence);
	json_str_or_null(r, "evidence", ev->evidence);
	json_str_or_null(r, "note", ev->note);
	if (wake_tally_json(held, o) < 0)
		goto fail;
	/* An Add that failed to allocate left its member out. */
	if (cJSON_GetArraySize(r) != 14 || cJSON_GetArraySize(o) != 8)
		goto fail;
	return o;
fail:
	cJSON_Delete(o);
	return NULL;
}

/* --- rate limits --------------------------------------------------------- */

/*
 * Global limit: a sliding window, not a token bucket.  A bucket of 6
 * refilled at 6/min lets 12 lines through in a minute (a full bucket,
 * then its refill); the window guarantees what the setting says — never
 * more than global_max repeats' lines in any global_window_ms — which is
 * what a monitor that stops flooding sources counts.  Lines that skip the
 * limits count in the window too, and the window keeps 2 × global_max
 * send times: new footprints stop skipping at that many, so only
 * usermarks and regressions (a person's pace, and rare) can ever exceed
 * it.
 */
struct wake_limiter {
	int64_t		 per_fp_ms;
	unsigned	 global_max;		/* 0: global limit off */
	int64_t		 global_window_ms;
	struct fptab	 fps;
	int64_t		*sent_at;		/* ring: send times in the
						   window, oldest first */
	unsigned	 cap, head, n;
	int64_t		 now;			/* latest time seen */

	struct wake_tally *held;
	int64_t		 held_fp_ready;		/* earliest per-fp reopening
						   of a held footprint; 0 */

	uint64_t	 total_sent, total_held;
};

struct wake_limiter *
wake_limiter_create(const struct wake_config *cfg)
{
	struct wake_limiter *wl;

	if (cfg->global_max > WAKE_GLOBAL_MAX_LIMIT)
		return NULL;
	if ((wl = calloc(1, sizeof(*wl))) == NULL)
		return NULL;
	wl->per_fp_ms = cfg->per_fp_ms > 0 ? cfg->per_fp_ms : 0;
	if (cfg->global_max > 0 && cfg->global_window_ms > 0) {
		wl->global_max = cfg->global_max;
		wl->global_window_ms = cfg->global_window_ms;
		wl->cap = 2 * wl->global_max;
		wl->sent_at = calloc(wl->cap, sizeof(*wl->sent_at));
		if (wl->sent_at == NULL)
			goto fail;
	}
	if ((wl->held = wake_tally_create()) == NULL)
		goto fail;
	wl->now = INT64_MIN;
	return wl;
fail:
	wake_limiter_destroy(wl);
	return NULL;
}

void
wake_limiter_destroy(struct wake_limiter *wl)
{
	if (wl == NULL)
		return;
	free(wl->fps.slot);
	free(wl->sent_at);
	wake_tally_destroy(wl->held);
	free(wl);
}

static int64_t
clock_step(struct wake_limiter *wl, int64_t now)
{
	if (now < wl->now)
		now = wl->now;		/* stepped back: stand still */
	wl->now = now;
	return now;
}

/* Forget the sends that left the window. */
static void
window_expire(struct wake_limiter *wl, int64_t now)
{
	while (wl->n > 0 &&
	    wl->sent_at[wl->head] + wl->global_window_ms <= now) {
		wl->head = (wl->head + 1) % wl->cap;
		wl->n--;
	}
}

static void
window_push(struct wake_limiter *wl, int64_t now)
{
	if (wl->global_max == 0)
		return;
	if (wl->n == wl->cap) {		/* beyond the hard cap: keep the
					   newest (only bypasses get here) */
		wl->head = (wl->head + 1) % wl->cap;
		wl->n--;
	}
	wl->sent_at[(wl->head + wl->n++) % wl->cap] = now;
}

/* When the window will have room for one more repeat: 0 if it has. */
static int64_t
window_ready(const struct wake_limiter *wl)
{
	if (wl->global_max == 0 || wl->n < wl->global_max)
		return 0;
	return wl->sent_at[(wl->head + wl->n - wl->global_max) % wl->cap] +
	    wl->global_window_ms;
}

static int
fp_unexpired(const struct fpslot *s, void *arg)
{
	const struct wake_limiter *wl = arg;

	return s->t + wl->per_fp_ms > wl->now;
}

int
wake_limiter_admit(struct wake_limiter *wl, const struct ledger_event *ev,
    enum wake_why why, uint64_t gen, uint64_t off, int64_t now_ms)
{
	struct fpslot *s = NULL;
	int64_t fp_ready = 0;
	int hold;
	char key[9];

	now_ms = clock_step(wl, now_ms);
	if (wl->global_max > 0)
		window_expire(wl, now_ms);
	fp_key(key, ev->id);
	if (wl->per_fp_ms > 0 && (s = fptab_find(&wl->fps, key)) != NULL &&
	    s->t + wl->per_fp_ms > now_ms)
		fp_ready = s->t + wl->per_fp_ms;
	switch (why) {
	case WAKE_USERMARK:
	case WAKE_REGRESSED:
		hold = 0;
		break;
	case WAKE_NEW:
		hold = wl->global_max > 0 && wl->n >= wl->cap;
		break;
	default:
		hold = fp_ready != 0 || window_ready(wl) != 0;
		break;
	}
	if (hold) {
		/* the summary waits for the earliest footprint window
		 * among the held (0: one was held by the global one only) */
		if (wl->held->total == 0 || fp_ready < wl->held_fp_ready)
			wl->held_fp_ready = fp_ready;
		wake_tally_add(wl->held, ev, gen, off, now_ms);
		wl->total_held++;
		return 0;
	}
	if (wl->per_fp_ms > 0 && s == NULL &&
	    (s = fptab_get(&wl->fps, key, fp_unexpired, wl)) == NULL)
		return -ENOMEM;
	if (s != NULL)
		s->t = now_ms;
	window_push(wl, now_ms);
	wl->total_sent++;
	return 1;
}

void
wake_limiter_hold(struct wake_limiter *wl, const struct ledger_event *ev,
    uint64_t gen, uint64_t off, int64_t now_ms)
{
	/* no footprint window of ours to wait for */
	clock_step(wl, now_ms);
	wl->held_fp_ready = 0;
	wake_tally_add(wl->held, ev, gen, off, now_ms);
	wl->total_held++;
}

struct wake_tally *
wake_limiter_held(struct wake_limiter *wl)
{
	return wl->held;
}

void
wake_limiter_sent(struct wake_limiter *wl, int64_t now_ms)
{
	now_ms = clock_step(wl, now_ms);
	if (wl->global_max > 0) {
		window_expire(wl, now_ms);
		window_push(wl, now_ms);
	}
	wl->total_sent++;
}

int64_t
wake_limiter_flush_at(struct wake_limiter *wl, int64_t now_ms)
{
	int64_t g;

	if (wl->held->total == 0)
		return WAKE_NEVER;
	now_ms = clock_step(wl, now_ms);
	if (wl->global_max > 0)
		window_expire(wl, now_ms);
	g = window_ready(wl);
	return g > wl->held_fp_ready ? g : wl->held_fp_ready;
}

void
wake_limiter_stats(const struct wake_limiter *wl,
    struct wake_limiter_stats *st)
{
	st->sent = wl->total_sent;
	st->held = wl->total_held;
	st->pending = wl->held->total;
}

/* --- regressions --------------------------------------------------------- */

struct wake_memory {
	struct fptab	fps;		/* n: 1 if last seen regressed */
};

struct wake_memory *
wake_memory_create(void)
{
	return calloc(1, sizeof(struct wake_memory));
}

void
wake_memory_destroy(struct wake_memory *m)
{
	if (m == NULL)
		return;
	free(m->fps.slot);
	free(m);
}

void
wake_memory_reset(struct wake_memory *m)
{
	free(m->fps.slot);
	memset(&m->fps, 0, sizeof(m->fps));
}

int
wake_memory_regression(struct wake_memory *m, const struct ledger_event *ev)
{
	struct fpslot *s;
	int reg = strcmp(str(ev->status), "regressed") == 0, was;
	char key[9];

	fp_key(key, ev->id);
	if ((s = fptab_get(&m->fps, key, NULL, NULL)) == NULL)
		return 0;
	was = s->n != 0;
	s->n = (uint64_t)reg;
	return reg && !was;
}

/* --- summary lines ----------------------------------------------------- */

static void
sb_type_counts(struct sb *sb, const uint64_t counts[T_NTYPES])
{
	int i, first = 1;

	for (i = 0; i < T_NTYPES; i++) {
		if (counts[i] == 0)
			continue;
		sb_printf(sb, "%s%s %" PRIu64, first ? "" : ", ",
		    type_names[i], counts[i]);
		first = 0;
	}
}

static int
nonempty(const struct wake_tally *t)
{
	return t != NULL && t->total > 0;
}

int
wake_summary_format(char *buf, size_t size, struct wake_tally *catchup,
    const char *why, struct wake_tally *held, const struct wake_config *cfg)
{
	char head[WAKE_LINE_SIZE], cmd[64];
	struct sb h, line;
	struct wake_tally_fp *all = NULL;
	const struct wake_tally_fp **l = NULL;
	size_t limit, n = 0, k, fixed;
	int date;

	(void)cfg;
	if (size == 0)
		return -EINVAL;
	limit = size - 1 < WAKE_LINE_MAX ? size - 1 : WAKE_LINE_MAX;
	buf[0] = '\0';
	if (!nonempty(catchup) && !nonempty(held))
		return 0;
	sb_init(&h, head, sizeof(head));
	if (nonempty(catchup)) {
		sb_printf(&h, "sloptimize catch-up: %" PRIu64 " meaningful "
		    "record%s %s (", catchup->total, catchup->total == 1 ?
		    "" : "s", why != NULL && why[0] != '\0' ? why :
		    "while stopped");
		sb_type_counts(&h, catchup->type);
		sb_puts(&h, ")");
		if (catchup->first_at != LEDGER_NO_TIME) {
			date = !same_local_day(catchup->first_at,
			    catchup->last_at);
			sb_puts(&h, " from ");
			sb_clock(&h, catchup->first_at, date);
			sb_puts(&h, " to ");
			sb_clock(&h, catchup->last_at, date);
		}
		if (nonempty(held)) {
			sb_printf(&h, ", and +%" PRIu64 " held back since ",
			    held->total);
			sb_clock(&h, held->since, 0);
		}
	} else {
		sb_printf(&h, "sloptimize held back: +%" PRIu64 " more since ",
		    held->total);
		sb_clock(&h, held->since, 0);
		sb_puts(&h, " (");
		sb_type_counts(&h, held->type);
		sb_puts(&h, ")");
	}
	if (list_both(catchup, held, &all, &l, &n) < 0)
		n = 0;
	if (n > 0)
		snprintf(cmd, sizeof(cmd), ARROW "sloptimize issues --fp %s",
		    l[0]->fp);
	else
		snprintf(cmd, sizeof(cmd), ARROW "sloptimize report");
	fixed = h.len + strlen(cmd);
	k = fixed < limit ? list_fit((const struct wake_tally_fp *const *)l,
	    n, limit - fixed) : 0;
	sb_init(&line, buf, limit + 1);
	sb_put(&line, head, h.len);
	list_text(&line, (const struct wake_tally_fp *const *)l, n, k);
	sb_puts(&line, cmd);
	free(all);
	free(l);
	return (int)line.len;
}

cJSON *
wake_summary_json(const char *id, const char *line,
    struct wake_tally *catchup, struct wake_tally *held)
{
	struct wake_tally_fp *all = NULL;
	const struct wake_tally_fp **l = NULL;
	struct wake_tally span;
	size_t n = 0;
	uint64_t total = 0, nc = 0;
	cJSON *o, *arr;

	if ((o = cJSON_CreateObject()) == NULL)
		return NULL;
	memset(&span, 0, sizeof(span));
	if (nonempty(catchup)) {
		nc = catchup->total;
		tally_span(&span, catchup->since, catchup->first_at,
		    catchup->last_at, catchup->fgen, catchup->foff,
		    catchup->lgen, catchup->loff);
	}
	if (nonempty(held))
		tally_span(&span, held->since, held->first_at, held->last_at,
		    held->fgen, held->foff, held->lgen, held->loff);
	total = nc + (nonempty(held) ? held->total : 0);
	cJSON_AddStringToObject(o, "type", "wake");
	json_str_or_null(o, "id", id);
	cJSON_AddStringToObject(o, "line", str(line));
	cJSON_AddNullToObject(o, "record");
	cJSON_AddNumberToObject(o, "held", (double)total);
	if (total > 0)
		json_time_or_null(o, "heldSince", span.since);
	else
		cJSON_AddNullToObject(o, "heldSince");
	json_id_or_null(o, "heldFrom", total > 0, span.fgen, span.foff);
	if ((arr = cJSON_AddArrayToObject(o, "heldBy")) == NULL ||
	    list_both(catchup, held, &all, &l, &n) < 0)
		goto fail;
	json_tally_list(arr, (const struct wake_tally_fp *const *)l, n);
	free(all);
	free(l);
	cJSON_AddNumberToObject(o, "catchup", (double)nc);
	if (cJSON_GetArraySize(arr) != (int)n || cJSON_GetArraySize(o) != 9)
		goto fail;
	return o;
fail:
	free(all);
	free(l);
	cJSON_Delete(o);
	return NULL;
}

/* --- catch-up ------------------------------------------------------------ */

int
wake_is_recent(int64_t at_ms, int64_t now_ms, const struct wake_config *cfg)
{
	if (at_ms == LEDGER_NO_TIME || cfg->recent_ms <= 0)
		return 0;
	if (at_ms >= now_ms)
		return 1;
	return now_ms - at_ms <= cfg->recent_ms;
}
