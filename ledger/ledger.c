/*
 * ledger — the fold (DESIGN §7): lines in, catalogue / timeline / windows
 * out.  See ledger.h for the contract.
 *
 * Per perf line the hot path is: one validating scan (jscan_object), the
 * type, `at`, `build` and — for incidents only — the footprint and a few
 * nested members.  Heartbeats, four lines in five, cost a scan and nothing
 * else unless the timeline is wanted.  Rows are found by footprint id in
 * an open-addressing table; builds by name, with the previous line's build
 * tried first because consecutive records nearly always share it.
 *
 * Status is not stored: it depends on fixes and on builds that appear
 * after the fix, so it is computed when asked, from the row's highest
 * build and its latest unbuilt occurrence.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "footprint.h"
#include "jscan.h"
#include "ledger.h"

#define VERDICT_GUESS	64
#define VERDICT_CONF	32
#define VERDICT_EVID	256
#define NO_BUILD	UINT32_MAX
#define SERIES_SLICES	32

struct row {
	uint32_t	 id;
	char		 hex[9];
	char		*key;
	char		*type;
	char		*phase;		/* NULL when the record had none */
	char		*ctx;		/* the last occurrence's, "" if none */
	uint64_t	 count;
	int64_t		 first_ms, last_ms;	/* LEDGER_NO_TIME if none */
	uint32_t	*builds;	/* build indices, first-seen order */
	uint32_t	 nbuilds, capbuilds;
	uint32_t	 max_build;	/* NO_BUILD if none */
	int64_t		 last_unbuilt_ms;
	int		 has_worst;
	double		 worst;
	int64_t		 worst_ms;
	int		 has_verdict;
	char		 guess[VERDICT_GUESS];
	char		 conf[VERDICT_CONF];
	char		 evid[VERDICT_EVID];
	int		 has_guess, has_conf, has_evid;
};

struct build {
	char		*name;
	uint32_t	 hash;
	int64_t		 first_ms;	/* `at` of its first record */
};

struct hb {			/* one heartbeat, for medians */
	int64_t		 t;
	uint32_t	 build;
	double		 v[5];	/* p95, median, calls, triangles, programs; NAN absent */
};

struct hp {			/* one hitch, for counts and worst */
	int64_t		 t;
	uint32_t	 build;
	double		 ms;	/* NAN if it had no frameMs */
};

enum fix_state { FIX_APPLIED, FIX_PROPOSED, FIX_MERGED, FIX_REJECTED, FIX_OTHER };

struct fix {
	cJSON		*rec;
	char		 id[9];
	enum fix_state	 state;
	int64_t		 at_ms;		/* when it took effect */
	char		*after_build;
	uint32_t	*fps;
	size_t		 nfps;
};

struct skip {
	enum ledger_stream	 stream;
	uint64_t		 offset, length;
	const char		*reason;
};

struct ledger {
	struct ledger_opts	 opts;
	uint32_t		 occ_id;
	int			 want_occ;
	cJSON			*occ;

	struct row		**slots;	/* open addressing by id */
	size_t			 nslots;
	struct row		**rows;
	size_t			 nrows, caprows;

	struct build		*builds;
	size_t			 nbuilds, capbuilds;
	uint32_t		*bslots;	/* build index + 1, 0 empty */
	size_t			 nbslots;
	uint32_t		 last_build;

	struct hb		*hbs;
	size_t			 nhbs, caphbs;
	struct hp		*hps;
	size_t			 nhps, caphps;
	int64_t			 tmin, tmax;

	struct fix		*fixes;
	size_t			 nfixes, capfixes;

	struct skip		 skips[LEDGER_SKIPS_KEPT];
	size_t			 nskips;	/* total ever; ring index mod */

	struct ledger_counts	 c;

	/* scratch for ledger_event strings */
	char			 s_key[FOOTPRINT_KEY_MAX];
	char			 s_type[64], s_phase[128], s_build[128];
};

static int
grow(void **p, size_t *cap, size_t need, size_t size)
{
	size_t	 ncap;
	void	*np;

	if (need <= *cap)
		return 0;
	ncap = *cap ? *cap * 2 : 16;
	while (ncap < need)
		ncap *= 2;
	if ((np = realloc(*p, ncap * size)) == NULL)
		return -ENOMEM;
	*p = np;
	*cap = ncap;
	return 0;
}

struct ledger *
ledger_create(const struct ledger_opts *opts)
{
	struct ledger	*l;

	if ((l = calloc(1, sizeof(*l))) == NULL)
		return NULL;
	l->opts = *opts;
	l->opts.occurrences_of = NULL;
	l->tmin = l->tmax = LEDGER_NO_TIME;
	l->last_build = NO_BUILD;
	if (opts->occurrences_of != NULL &&
	    footprint_parse_hex(opts->occurrences_of,
	    strlen(opts->occurrences_of), &l->occ_id) == 0) {
		l->want_occ = 1;
		if ((l->occ = cJSON_CreateArray()) == NULL)
			goto fail;
	}
	l->nslots = 1024;
	l->nbslots = 64;
	if ((l->slots = calloc(l->nslots, sizeof(*l->slots))) == NULL ||
	    (l->bslots = calloc(l->nbslots, sizeof(*l->bslots))) == NULL)
		goto fail;
	return l;
fail:
	ledger_destroy(l);
	return NULL;
}

void
ledger_destroy(struct ledger *l)
{
	size_t	i;

	if (l == NULL)
		return;
	for (i = 0; i < l->nrows; i++) {
		free(l->rows[i]->key);
		free(l->rows[i]->type);
		free(l->rows[i]->phase);
		free(l->rows[i]->ctx);
		free(l->rows[i]->builds);
		free(l->rows[i]);
	}
	for (i = 0; i < l->nbuilds; i++)
		free(l->builds[i].name);
	ledger_clear_fixes(l);
	cJSON_Delete(l->occ);
	free(l->rows);
	free(l->slots);
	free(l->builds);
	free(l->bslots);
	free(l->hbs);
	free(l->hps);
	free(l->fixes);
	free(l);
}

static void
note_skip(struct ledger *l, enum ledger_stream s, uint64_t offset,
    uint64_t len, const char *reason)
{
	struct skip	*k = &l->skips[l->nskips % LEDGER_SKIPS_KEPT];

	k->stream = s;
	k->offset = offset;
	k->length = len;
	k->reason = reason;
	l->nskips++;
	l->c.skipped++;
}

void
ledger_skip(struct ledger *l, enum ledger_stream s, uint64_t offset,
    uint64_t len, const char *reason)
{
	l->c.lines++;
	note_skip(l, s, offset, len, reason ? reason : "line longer than 1 MiB");
}

/* --- rows and builds -------------------------------------------------- */

static struct row *
row_find(const struct ledger *l, uint32_t id)
{
	size_t	 mask = l->nslots - 1, i = (id * 2654435761u) & mask;

	for (; l->slots[i] != NULL; i = (i + 1) & mask)
		if (l->slots[i]->id == id)
			return l->slots[i];
	return NULL;
}

static int
rows_rehash(struct ledger *l)
{
	struct row	**ns;
	size_t		  n = l->nslots * 2, mask = n - 1, i, j;

	if ((ns = calloc(n, sizeof(*ns))) == NULL)
		return -ENOMEM;
	for (i = 0; i < l->nrows; i++) {
		j = (l->rows[i]->id * 2654435761u) & mask;
		while (ns[j] != NULL)
			j = (j + 1) & mask;
		ns[j] = l->rows[i];
	}
	free(l->slots);
	l->slots = ns;
	l->nslots = n;
	return 0;
}

static char *
dup_span(struct jspan s)
{
	char	*p;
	size_t	 cap = (size_t)s.n + 1;

	if ((p = malloc(cap)) == NULL)
		return NULL;
	jscan_str(s, p, cap);
	return p;
}

static struct row *
row_add(struct ledger *l, uint32_t id, const char *key)
{
	struct row	*r;
	size_t		 mask, i;

	if ((l->nrows + 1) * 2 > l->nslots && rows_rehash(l))
		return NULL;
	if (grow((void **)&l->rows, &l->caprows, l->nrows + 1,
	    sizeof(*l->rows)))
		return NULL;
	if ((r = calloc(1, sizeof(*r))) == NULL)
		return NULL;
	r->id = id;
	footprint_hex(id, r->hex);
	r->first_ms = r->last_ms = r->worst_ms = LEDGER_NO_TIME;
	r->last_unbuilt_ms = LEDGER_NO_TIME;
	r->max_build = NO_BUILD;
	/* type, phase and ctx are set from each occurrence by the caller */
	r->key = strdup(key);
	r->type = strdup("");
	if (r->key == NULL || r->type == NULL) {
		free(r->key);
		free(r->type);
		free(r);
		return NULL;
	}
	mask = l->nslots - 1;
	for (i = (id * 2654435761u) & mask; l->slots[i] != NULL;
	    i = (i + 1) & mask)
		;
	l->slots[i] = r;
	l->rows[l->nrows++] = r;
	l->c.rows = l->nrows;
	return r;
}

static int
bslot_put(uint32_t *slots, size_t n, uint32_t hash, uint32_t idx)
{
	size_t	mask = n - 1, i = hash & mask;

	while (slots[i] != 0)
		i = (i + 1) & mask;
	slots[i] = idx + 1;
	return 0;
}

static int
build_eq(const struct build *b, struct jspan s)
{
	if (!s.escaped)
		return strlen(b->name) == s.n && memcmp(b->name, s.p, s.n) == 0;
	return jscan_eq(s, b->name);
}

/* Index of the build named by `s` (a string span), creating it at `at`;
 * NO_BUILD if s is not a non-empty string; -ENOMEM through *err. */
static uint32_t
build_lookup(struct ledger *l, struct jspan s, int64_t at, int *err)
{
	char		 buf[512];
	uint32_t	 h;
	size_t		 mask, i;
	struct build	*b;

	if (s.kind != J_STRING || s.n == 0)
		return NO_BUILD;
	if (l->last_build != NO_BUILD &&
	    build_eq(&l->builds[l->last_build], s))
		return l->last_build;
	jscan_str(s, buf, sizeof(buf));
	h = fnv1a32(buf, strlen(buf));
	mask = l->nbslots - 1;
	for (i = h & mask; l->bslots[i] != 0; i = (i + 1) & mask) {
		b = &l->builds[l->bslots[i] - 1];
		if (b->hash == h && strcmp(b->name, buf) == 0)
			return l->last_build = l->bslots[i] - 1;
	}
	/* a new build */
	if ((l->nbuilds + 1) * 2 > l->nbslots) {
		uint32_t	*ns;
		size_t		 n = l->nbslots * 2, j;

		if ((ns = calloc(n, sizeof(*ns))) == NULL)
			goto nomem;
		for (j = 0; j < l->nbuilds; j++)
			bslot_put(ns, n, l->builds[j].hash, (uint32_t)j);
		free(l->bslots);
		l->bslots = ns;
		l->nbslots = n;
	}
	if (grow((void **)&l->builds, &l->capbuilds, l->nbuilds + 1,
	    sizeof(*l->builds)))
		goto nomem;
	b = &l->builds[l->nbuilds];
	if ((b->name = strdup(buf)) == NULL)
		goto nomem;
	b->hash = h;
	b->first_ms = at;
	bslot_put(l->bslots, l->nbslots, h, (uint32_t)l->nbuilds);
	l->c.builds = ++l->nbuilds;
	return l->last_build = (uint32_t)(l->nbuilds - 1);
nomem:
	*err = -ENOMEM;
	return NO_BUILD;
}

/*
 * Set *dst to a string span, "" for none when empty_ok, else NULL.  The
 * value nearly always repeats, so it is compared before anything is
 * copied: the type, phase and situation of a row are its last
 * occurrence's at the cost of a memcmp per incident.
 */
static int
row_set_str(char **dst, struct jspan v, int empty_ok)
{
	char	*n;

	if (v.kind != J_STRING)
		v.n = 0;
	if (*dst != NULL && !v.escaped && strlen(*dst) == v.n &&
	    (v.n == 0 || memcmp(*dst, v.p, v.n) == 0))
		return 0;
	if (v.n == 0 && !empty_ok) {
		free(*dst);
		*dst = NULL;
		return 0;
	}
	n = v.n == 0 ? strdup("") : dup_span(v);
	if (n == NULL)
		return -ENOMEM;
	free(*dst);
	*dst = n;
	return 0;
}

static int
row_add_build(struct row *r, uint32_t b)
{
	uint32_t	i;

	if (b == NO_BUILD)
		return 0;
	if (r->max_build == NO_BUILD || b > r->max_build)
		r->max_build = b;
	/* the newest build is the likeliest match */
	for (i = r->nbuilds; i > 0; i--)
		if (r->builds[i - 1] == b)
			return 0;
	if (r->nbuilds == r->capbuilds) {
		uint32_t	 n = r->capbuilds ? r->capbuilds * 2 : 4;
		uint32_t	*nb = realloc(r->builds, n * sizeof(*nb));

		if (nb == NULL)
			return -ENOMEM;
		r->builds = nb;
		r->capbuilds = n;
	}
	r->builds[r->nbuilds++] = b;
	return 0;
}

/* --- folding perf lines ----------------------------------------------- */

static double
num_or_nan(struct jspan s)
{
	double	v;

	return jscan_num(s, &v) == 0 ? v : NAN;
}

static void
copy_str(struct jspan s, char *dst, size_t cap, int *has)
{
	*has = (s.kind == J_STRING && jscan_str(s, dst, cap) >= 0);
	if (!*has)
		dst[0] = '\0';
}

/* The incident's footprint id and key (DESIGN §6 reading rule). */
static int
incident_id(struct ledger *l, const struct jscan_result *r, uint32_t *id,
    const char **key)
{
	static const char *const names[] = { "v", "id", "key" };
	struct jspan	fp = r->f[F_FOOTPRINT], m[3], sid, skey;
	double		ver = 0;
	int		stamped, n;

	jscan_getn(fp, names, m, 3);
	sid = m[1];
	skey = m[2];
	stamped = jscan_num(m[0], &ver) == 0 && ver == FOOTPRINT_VERSION;
	if (stamped) {
		if (sid.kind == J_STRING && !sid.escaped &&
		    footprint_parse_hex(sid.p, sid.n, id) == 0) {
			if (skey.kind == J_STRING)
				jscan_str(skey, l->s_key, sizeof(l->s_key));
			else if (footprint_derive(r, l->s_key,
			    sizeof(l->s_key)) < 0)
				l->s_key[0] = '\0';
			*key = l->s_key;
			return 0;
		}
		l->c.malformed_footprints++;
	}
	n = footprint_derive(r, l->s_key, sizeof(l->s_key));
	if (n < 0) {
		/* A type we cannot derive: the writer's id is all there is. */
		if (sid.kind != J_STRING || sid.escaped ||
		    footprint_parse_hex(sid.p, sid.n, id) != 0)
			return -1;
		jscan_str(skey, l->s_key, sizeof(l->s_key));
		*key = l->s_key;
		return 0;
	}
	*id = footprint_id(l->s_key, (size_t)n);
	*key = l->s_key;
	return 0;
}

static int
occurrence_add(struct ledger *l, int64_t at, uint32_t b, double value,
    int has_value, const struct row *row, uint64_t offset)
{
	cJSON	*o, *vd;
	char	 iso[32];

	if ((o = cJSON_CreateObject()) == NULL)
		return -ENOMEM;
	cJSON_AddItemToArray(l->occ, o);
	if (at != LEDGER_NO_TIME) {
		iso_format_ms(at, iso);
		cJSON_AddStringToObject(o, "at", iso);
	} else
		cJSON_AddNullToObject(o, "at");
	if (b != NO_BUILD)
		cJSON_AddStringToObject(o, "build", l->builds[b].name);
	else
		cJSON_AddNullToObject(o, "build");
	if (has_value)
		cJSON_AddNumberToObject(o, "value", value);
	else
		cJSON_AddNullToObject(o, "value");
	if (row->has_verdict) {
		vd = cJSON_AddObjectToObject(o, "verdict");
		if (vd == NULL)
			return -ENOMEM;
		row->has_guess ? (void)cJSON_AddStringToObject(vd, "guess",
		    row->guess) : (void)cJSON_AddNullToObject(vd, "guess");
		row->has_conf ? (void)cJSON_AddStringToObject(vd,
		    "confidence", row->conf) : (void)cJSON_AddNullToObject(vd,
		    "confidence");
		row->has_evid ? (void)cJSON_AddStringToObject(vd, "evidence",
		    row->evid) : (void)cJSON_AddNullToObject(vd, "evidence");
	} else
		cJSON_AddNullToObject(o, "verdict");
	cJSON_AddNumberToObject(o, "offset", (double)offset);
	return 0;
}

static const char *row_status(struct ledger *, const struct row *, int *);

int
ledger_fold_perf(struct ledger *l, const char *line, size_t len,
    uint64_t offset, struct ledger_event *ev)
{
	struct jscan_result	 r;
	const struct jspan	*f = r.f;
	struct jspan		 cls;
	int64_t			 at = LEDGER_NO_TIME;
	int			 automated, counted, err = 0, incident, has_value;
	uint32_t		 b, id;
	const char		*key = NULL, *unit = "";
	double			 value = NAN;
	struct row		*row;
	size_t			 skip = 0;

	l->c.lines++;
	if (len >= 3 && memcmp(line, "\xef\xbb\xbf", 3) == 0)
		skip = 3;	/* a BOM, usually on the first line */
	{
		size_t	i;

		for (i = skip; i < len; i++)
			if (line[i] != ' ' && line[i] != '\t' && line[i] != '\r')
				break;
		if (i == len)
			return 1;	/* blank: no record, nothing lost */
	}
	if (jscan_object(line + skip, len - skip, &r)) {
		note_skip(l, LEDGER_PERF, offset, len, r.error);
		return 1;
	}
	if (f[F_TYPE].kind != J_STRING || f[F_TYPE].n == 0) {
		note_skip(l, LEDGER_PERF, offset, len, "no string type");
		return 1;
	}
	if (f[F_AT].kind == J_STRING && !f[F_AT].escaped &&
	    iso_parse_ms(f[F_AT].p, f[F_AT].n, &at) != 0)
		at = LEDGER_NO_TIME;
	automated = f[F_AUTOMATED].kind == J_TRUE;
	counted = !automated || l->opts.include_automated;
	if (counted && (l->opts.from_ms != LEDGER_NO_TIME ||
	    l->opts.to_ms != LEDGER_NO_TIME)) {
		counted = at != LEDGER_NO_TIME &&
		    (l->opts.from_ms == LEDGER_NO_TIME || at >= l->opts.from_ms) &&
		    (l->opts.to_ms == LEDGER_NO_TIME || at <= l->opts.to_ms);
	}
	/* Builds are ordered by first appearance in the file, whatever the
	 * time filters, so "older than the fix's build" means the same thing
	 * to every query; robots' builds stay out like their records. */
	b = !automated || l->opts.include_automated ?
	    build_lookup(l, f[F_BUILD], at, &err) : NO_BUILD;
	if (err)
		return err;
	l->c.folded++;

	incident = jscan_eq(f[F_TYPE], "hitch") ||
	    jscan_eq(f[F_TYPE], "usermark") || jscan_eq(f[F_TYPE], "jitter") ||
	    f[F_FOOTPRINT].kind == J_OBJECT;
	if (incident && incident_id(l, &r, &id, &key) != 0)
		incident = 0;

	/* value and verdict, by type */
	cls.kind = J_NONE;
	if (jscan_eq(f[F_TYPE], "hitch")) {
		value = num_or_nan(f[F_FRAMEMS]);
		unit = "ms";
		cls = f[F_CLASSIFICATION];
	} else if (jscan_eq(f[F_TYPE], "usermark")) {
		struct jspan	w0 = jscan_at(f[F_WORST], 0);

		value = num_or_nan(jscan_get(w0, "frameMs"));
		unit = "ms";
		cls = jscan_get(w0, "classification");
	} else if (jscan_eq(f[F_TYPE], "jitter")) {
		value = num_or_nan(f[F_UNITS]);
		unit = "units";
		cls = f[F_CLASSIFICATION];
	}
	has_value = !isnan(value);

	if (counted && l->opts.want_timeline) {
		if (at != LEDGER_NO_TIME) {
			if (l->tmin == LEDGER_NO_TIME || at < l->tmin)
				l->tmin = at;
			if (l->tmax == LEDGER_NO_TIME || at > l->tmax)
				l->tmax = at;
		}
		if (at != LEDGER_NO_TIME && jscan_eq(f[F_TYPE], "heartbeat")) {
			struct hb	*h;
			struct jspan	 fr = f[F_FRAME], re = f[F_RENDER];

			if (grow((void **)&l->hbs, &l->caphbs, l->nhbs + 1,
			    sizeof(*l->hbs)))
				return -ENOMEM;
			h = &l->hbs[l->nhbs++];
			h->t = at;
			h->build = b;
			static const char *const fn[] = { "p95Ms", "medianMs" };
			static const char *const rn[] = { "calls", "triangles" };
			struct jspan	 m[2];

			jscan_getn(fr, fn, m, 2);
			h->v[0] = num_or_nan(m[0]);
			h->v[1] = num_or_nan(m[1]);
			jscan_getn(re, rn, m, 2);
			h->v[2] = num_or_nan(m[0]);
			h->v[3] = num_or_nan(m[1]);
			h->v[4] = num_or_nan(jscan_get(f[F_MEMORY],
			    "programs"));
		} else if (at != LEDGER_NO_TIME &&
		    jscan_eq(f[F_TYPE], "hitch")) {
			if (grow((void **)&l->hps, &l->caphps, l->nhps + 1,
			    sizeof(*l->hps)))
				return -ENOMEM;
			l->hps[l->nhps].t = at;
			l->hps[l->nhps].build = b;
			l->hps[l->nhps].ms = value;
			l->nhps++;
		}
	}

	row = NULL;
	if (incident && counted) {
		static const char *const names[] = {
			"guess", "confidence", "evidence"
		};
		struct jspan	c0 = cls.kind == J_ARRAY ? jscan_at(cls, 0) : cls;
		struct jspan	vd[3];

		if ((row = row_find(l, id)) == NULL &&
		    (row = row_add(l, id, key)) == NULL)
			return -ENOMEM;
		if (row_set_str(&row->ctx, f[F_CTX], 1) ||
		    row_set_str(&row->type, f[F_TYPE], 1) ||
		    row_set_str(&row->phase, f[F_PHASE], 0) ||
		    row_add_build(row, b))
			return -ENOMEM;
		row->count++;
		l->c.incidents++;
		if (at != LEDGER_NO_TIME) {
			if (row->first_ms == LEDGER_NO_TIME || at < row->first_ms)
				row->first_ms = at;
			if (row->last_ms == LEDGER_NO_TIME || at > row->last_ms)
				row->last_ms = at;
			if (b == NO_BUILD && at > row->last_unbuilt_ms)
				row->last_unbuilt_ms = at;
		}
		if (has_value && (!row->has_worst || value > row->worst)) {
			row->has_worst = 1;
			row->worst = value;
			row->worst_ms = at;
		}
		row->has_verdict = c0.kind == J_OBJECT;
		jscan_getn(c0, names, vd, 3);
		copy_str(vd[0], row->guess, sizeof(row->guess), &row->has_guess);
		copy_str(vd[1], row->conf, sizeof(row->conf), &row->has_conf);
		copy_str(vd[2], row->evid, sizeof(row->evid), &row->has_evid);
		if (l->want_occ && id == l->occ_id &&
		    occurrence_add(l, at, b, value, has_value, row, offset))
			return -ENOMEM;
	}

	if (ev != NULL) {
		memset(ev, 0, sizeof(*ev));
		jscan_str(f[F_TYPE], l->s_type, sizeof(l->s_type));
		ev->type = l->s_type;
		ev->at_ms = at;
		ev->automated = automated;
		ev->incident = row != NULL;
		ev->counted = counted;
		ev->value = value;
		ev->has_value = has_value;
		ev->unit = unit;
		if (f[F_PHASE].kind == J_STRING)
			jscan_str(f[F_PHASE], l->s_phase, sizeof(l->s_phase));
		else
			l->s_phase[0] = '\0';
		ev->phase = l->s_phase;
		ev->build = b != NO_BUILD ? l->builds[b].name : "";
		ev->key = "";
		ev->guess = ev->confidence = ev->evidence = "";
		ev->status = "";
		if (row != NULL) {
			memcpy(ev->id, row->hex, sizeof(ev->id));
			ev->key = row->key;
			ev->guess = row->guess;
			ev->confidence = row->conf;
			ev->evidence = row->evid;
			ev->count = row->count;
			ev->status = row_status(l, row, NULL);
		}
	}
	return 0;
}

/* --- fixes ------------------------------------------------------------ */

static struct fix *
fix_by_id(struct ledger *l, const char *id)
{
	size_t	i;

	for (i = l->nfixes; i > 0; i--)
		if (strcmp(l->fixes[i - 1].id, id) == 0)
			return &l->fixes[i - 1];
	return NULL;
}

int
ledger_fold_fix(struct ledger *l, const char *line, size_t len,
    uint64_t offset)
{
	struct jscan_result	 r;
	cJSON			*rec = NULL, *it, *fps, *after;
	struct fix		*fx;
	const char		*st;
	size_t			 skip = 0, i;
	int64_t			 at = LEDGER_NO_TIME;

	l->c.lines++;
	if (len >= 3 && memcmp(line, "\xef\xbb\xbf", 3) == 0)
		skip = 3;
	for (i = skip; i < len; i++)
		if (line[i] != ' ' && line[i] != '\t' && line[i] != '\r')
			break;
	if (i == len)
		return 1;
	/* jscan first: the same strictness (UTF-8, depth) as perf lines */
	if (jscan_object(line + skip, len - skip, &r)) {
		note_skip(l, LEDGER_FIXES, offset, len, r.error);
		return 1;
	}
	if (r.f[F_TYPE].kind != J_STRING || r.f[F_TYPE].n == 0) {
		note_skip(l, LEDGER_FIXES, offset, len, "no string type");
		return 1;
	}
	if ((rec = cJSON_ParseWithLength(line + skip, len - skip)) == NULL)
		return -ENOMEM;	/* valid JSON that cJSON cannot hold */
	l->c.fixes++;
	if (!jscan_eq(r.f[F_TYPE], "fix")) {
		cJSON_Delete(rec);	/* kept in the file, not a fix */
		return 0;
	}
	if (r.f[F_AT].kind == J_STRING && !r.f[F_AT].escaped)
		iso_parse_ms(r.f[F_AT].p, r.f[F_AT].n, &at);
	st = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(rec,
	    "status"));
	if (st != NULL && (strcmp(st, "merged") == 0 ||
	    strcmp(st, "rejected") == 0)) {
		const char	*ref = cJSON_GetStringValue(
		    cJSON_GetObjectItemCaseSensitive(rec, "ref"));

		if (ref != NULL && (fx = fix_by_id(l, ref)) != NULL &&
		    fx->state == FIX_PROPOSED) {
			fx->state = *st == 'm' ? FIX_MERGED : FIX_REJECTED;
			if (at != LEDGER_NO_TIME)
				fx->at_ms = at;
		}
		cJSON_Delete(rec);
		return 0;
	}
	if (grow((void **)&l->fixes, &l->capfixes, l->nfixes + 1,
	    sizeof(*l->fixes))) {
		cJSON_Delete(rec);
		return -ENOMEM;
	}
	fx = &l->fixes[l->nfixes];
	memset(fx, 0, sizeof(*fx));
	fx->rec = rec;
	fx->at_ms = at;
	fx->state = st == NULL || strcmp(st, "applied") == 0 ? FIX_APPLIED :
	    strcmp(st, "proposed") == 0 ? FIX_PROPOSED : FIX_OTHER;
	it = cJSON_GetObjectItemCaseSensitive(rec, "id");
	if (cJSON_IsString(it) && footprint_parse_hex(it->valuestring,
	    strlen(it->valuestring), &(uint32_t){ 0 }) == 0) {
		for (i = 0; i < 8; i++)
			fx->id[i] = (char)(it->valuestring[i] | 0x20);
		fx->id[8] = '\0';
	} else
		footprint_hex(fnv1a32(line, len), fx->id);
	after = cJSON_GetObjectItemCaseSensitive(rec, "after");
	it = cJSON_GetObjectItemCaseSensitive(after, "build");
	if (cJSON_IsString(it) && *it->valuestring != '\0' &&
	    (fx->after_build = strdup(it->valuestring)) == NULL)
		goto nomem;
	fps = cJSON_GetObjectItemCaseSensitive(rec, "footprints");
	if (cJSON_IsArray(fps) && cJSON_GetArraySize(fps) > 0) {
		if ((fx->fps = calloc((size_t)cJSON_GetArraySize(fps),
		    sizeof(*fx->fps))) == NULL)
			goto nomem;
		cJSON_ArrayForEach(it, fps)
			if (cJSON_IsString(it) &&
			    footprint_parse_hex(it->valuestring,
			    strlen(it->valuestring), &fx->fps[fx->nfps]) == 0)
				fx->nfps++;
	}
	(void)offset;
	l->nfixes++;
	return 0;
nomem:
	free(fx->after_build);
	free(fx->fps);
	cJSON_Delete(rec);
	return -ENOMEM;
}

void
ledger_clear_fixes(struct ledger *l)
{
	size_t	i;

	for (i = 0; i < l->nfixes; i++) {
		cJSON_Delete(l->fixes[i].rec);
		free(l->fixes[i].after_build);
		free(l->fixes[i].fps);
	}
	l->nfixes = 0;
	l->c.fixes = 0;
}

static int
fix_names(const struct fix *fx, uint32_t id)
{
	size_t	i;

	for (i = 0; i < fx->nfps; i++)
		if (fx->fps[i] == id)
			return 1;
	return 0;
}

/* The build a fix is judged against; NO_BUILD if it has not appeared. */
static uint32_t
fix_build(const struct ledger *l, const struct fix *fx)
{
	size_t	i;

	if (fx->after_build != NULL) {
		for (i = 0; i < l->nbuilds; i++)
			if (strcmp(l->builds[i].name, fx->after_build) == 0)
				return (uint32_t)i;
		return NO_BUILD;
	}
	if (fx->at_ms == LEDGER_NO_TIME)
		return NO_BUILD;
	for (i = 0; i < l->nbuilds; i++)
		if (l->builds[i].first_ms != LEDGER_NO_TIME &&
		    l->builds[i].first_ms > fx->at_ms)
			return (uint32_t)i;
	return NO_BUILD;
}

static int
fix_counts(const struct fix *fx)
{
	return fx->state == FIX_APPLIED || fx->state == FIX_MERGED;
}

/* The latest counting fix naming the row decides; *fix_out its index. */
static const char *
row_status(struct ledger *l, const struct row *row, int *fix_out)
{
	const struct fix	*best = NULL;
	size_t			 i;
	uint32_t		 fb;

	for (i = 0; i < l->nfixes; i++) {
		const struct fix	*fx = &l->fixes[i];

		if (!fix_counts(fx) || !fix_names(fx, row->id))
			continue;
		if (best == NULL || fx->at_ms >= best->at_ms)
			best = fx;
	}
	if (fix_out != NULL)
		*fix_out = best ? (int)(best - l->fixes) : -1;
	if (best == NULL)
		return "open";
	fb = fix_build(l, best);
	if (fb != NO_BUILD && row->max_build != NO_BUILD &&
	    row->max_build >= fb)
		return "regressed";
	if (best->at_ms != LEDGER_NO_TIME &&
	    row->last_unbuilt_ms != LEDGER_NO_TIME &&
	    row->last_unbuilt_ms > best->at_ms)
		return "regressed";
	return "fixed";
}

const char *
ledger_status_of(struct ledger *l, const char *id)
{
	uint32_t	 v;
	struct row	*r;

	if (footprint_parse_hex(id, strlen(id), &v) != 0 ||
	    (r = row_find(l, v)) == NULL)
		return NULL;
	return row_status(l, r, NULL);
}

const char *
ledger_row_state(struct ledger *l, const char *id, uint64_t *count)
{
	uint32_t	 v;
	struct row	*r;

	if (footprint_parse_hex(id, strlen(id), &v) != 0 ||
	    (r = row_find(l, v)) == NULL)
		return NULL;
	*count = r->count;
	return row_status(l, r, NULL);
}

/* --- rendering -------------------------------------------------------- */

static void
add_time(cJSON *o, const char *name, int64_t ms)
{
	char	iso[32];

	if (ms == LEDGER_NO_TIME) {
		cJSON_AddNullToObject(o, name);
		return;
	}
	iso_format_ms(ms, iso);
	cJSON_AddStringToObject(o, name, iso);
}

static void
add_num(cJSON *o, const char *name, double v)
{
	if (isnan(v))
		cJSON_AddNullToObject(o, name);
	else
		cJSON_AddNumberToObject(o, name, v);
}

cJSON *
ledger_situation_json(const char *ctx)
{
	cJSON		*o = cJSON_CreateObject();
	const char	*p = ctx;

	if (o == NULL || ctx == NULL)
		return o;
	while (*p != '\0') {
		const char	*end = strchr(p, ','), *eq;
		size_t		 n = end ? (size_t)(end - p) : strlen(p);
		char		 k[256], v[256];

		eq = memchr(p, '=', n);
		if (eq != NULL && eq > p && (size_t)(eq - p) < sizeof(k) &&
		    n - (size_t)(eq - p) - 1 < sizeof(v)) {
			memcpy(k, p, (size_t)(eq - p));
			k[eq - p] = '\0';
			memcpy(v, eq + 1, n - (size_t)(eq - p) - 1);
			v[n - (size_t)(eq - p) - 1] = '\0';
			cJSON_DeleteItemFromObjectCaseSensitive(o, k);
			cJSON_AddStringToObject(o, k, v);
		}
		p += n;
		if (*p == ',')
			p++;
	}
	return o;
}

static const char *
fix_state_name(enum fix_state s)
{
	switch (s) {
	case FIX_APPLIED: return "applied";
	case FIX_PROPOSED: return "proposed";
	case FIX_MERGED: return "merged";
	case FIX_REJECTED: return "rejected";
	default: return NULL;
	}
}

static cJSON *
fix_json(struct ledger *l, const struct fix *fx)
{
	cJSON		*o = cJSON_Duplicate(fx->rec, 1);
	const char	*st = fix_state_name(fx->state);
	uint32_t	 fb;

	if (o == NULL)
		return NULL;
	if (st != NULL) {
		cJSON_DeleteItemFromObjectCaseSensitive(o, "status");
		cJSON_AddStringToObject(o, "status", st);
	}
	cJSON_DeleteItemFromObjectCaseSensitive(o, "id");
	cJSON_AddStringToObject(o, "id", fx->id);
	cJSON_DeleteItemFromObjectCaseSensitive(o, "fixBuild");
	fb = fix_build(l, fx);
	if (fb != NO_BUILD)
		cJSON_AddStringToObject(o, "fixBuild", l->builds[fb].name);
	else if (fx->after_build != NULL)
		cJSON_AddStringToObject(o, "fixBuild", fx->after_build);
	else
		cJSON_AddNullToObject(o, "fixBuild");
	return o;
}

static cJSON *
row_json(struct ledger *l, const struct row *r, int64_t now_ms)
{
	cJSON		*o, *a, *fixes, *props, *v;
	uint32_t	 i;
	size_t		 k;

	if ((o = cJSON_CreateObject()) == NULL)
		return NULL;
	cJSON_AddStringToObject(o, "id", r->hex);
	cJSON_AddStringToObject(o, "key", r->key);
	cJSON_AddStringToObject(o, "type", r->type);
	if (r->phase)
		cJSON_AddStringToObject(o, "phase", r->phase);
	else
		cJSON_AddNullToObject(o, "phase");
	cJSON_AddNumberToObject(o, "count", (double)r->count);
	add_time(o, "first", r->first_ms);
	add_time(o, "last", r->last_ms);
	if (r->last_ms != LEDGER_NO_TIME)
		cJSON_AddNumberToObject(o, "lastAgoMs",
		    (double)(now_ms - r->last_ms));
	else
		cJSON_AddNullToObject(o, "lastAgoMs");
	a = cJSON_AddArrayToObject(o, "builds");
	for (i = 0; a != NULL && i < r->nbuilds; i++)
		cJSON_AddItemToArray(a,
		    cJSON_CreateString(l->builds[r->builds[i]].name));
	if (r->has_worst) {
		v = cJSON_AddObjectToObject(o, "worst");
		cJSON_AddNumberToObject(v, "value", r->worst);
		cJSON_AddStringToObject(v, "unit",
		    strcmp(r->type, "jitter") == 0 ? "units" : "ms");
		add_time(v, "at", r->worst_ms);
	} else
		cJSON_AddNullToObject(o, "worst");
	if (r->has_verdict) {
		v = cJSON_AddObjectToObject(o, "verdict");
		r->has_guess ? (void)cJSON_AddStringToObject(v, "guess",
		    r->guess) : (void)cJSON_AddNullToObject(v, "guess");
		r->has_conf ? (void)cJSON_AddStringToObject(v, "confidence",
		    r->conf) : (void)cJSON_AddNullToObject(v, "confidence");
		r->has_evid ? (void)cJSON_AddStringToObject(v, "evidence",
		    r->evid) : (void)cJSON_AddNullToObject(v, "evidence");
	} else
		cJSON_AddNullToObject(o, "verdict");
	cJSON_AddItemToObject(o, "situation",
	    ledger_situation_json(r->ctx ? r->ctx : ""));
	fixes = cJSON_AddArrayToObject(o, "fixes");
	props = cJSON_AddArrayToObject(o, "proposals");
	for (k = 0; k < l->nfixes; k++) {
		const struct fix	*fx = &l->fixes[k];

		if (!fix_names(fx, r->id))
			continue;
		if (fix_counts(fx))
			cJSON_AddItemToArray(fixes, fix_json(l, fx));
		else if (fx->state == FIX_PROPOSED ||
		    fx->state == FIX_REJECTED)
			cJSON_AddItemToArray(props, fix_json(l, fx));
	}
	cJSON_AddStringToObject(o, "status", row_status(l, r, NULL));
	return o;
}

static int
row_order(const void *a, const void *b)
{
	const struct row	*x = *(struct row *const *)a;
	const struct row	*y = *(struct row *const *)b;

	if (x->count != y->count)
		return x->count > y->count ? -1 : 1;
	if (x->last_ms != y->last_ms)
		return x->last_ms > y->last_ms ? -1 : 1;
	return x->id < y->id ? -1 : x->id > y->id;
}

static void
add_counts(cJSON *o, const struct ledger *l)
{
	cJSON	*c = cJSON_AddObjectToObject(o, "counts");

	cJSON_AddNumberToObject(c, "lines", (double)l->c.lines);
	cJSON_AddNumberToObject(c, "folded", (double)l->c.folded);
	cJSON_AddNumberToObject(c, "incidents", (double)l->c.incidents);
	cJSON_AddNumberToObject(c, "fixes", (double)l->c.fixes);
	cJSON_AddNumberToObject(c, "skipped", (double)l->c.skipped);
	cJSON_AddNumberToObject(c, "malformedFootprints",
	    (double)l->c.malformed_footprints);
	cJSON_AddNumberToObject(c, "rows", (double)l->c.rows);
	cJSON_AddNumberToObject(c, "builds", (double)l->c.builds);
}

void
ledger_counts(const struct ledger *l, struct ledger_counts *c)
{
	*c = l->c;
}

cJSON *
ledger_skipped_json(const struct ledger *l)
{
	cJSON	*a = cJSON_CreateArray();
	size_t	 n = l->nskips < LEDGER_SKIPS_KEPT ? l->nskips :
		    LEDGER_SKIPS_KEPT, i;

	for (i = 0; a != NULL && i < n; i++) {
		const struct skip	*k = &l->skips[(l->nskips - n + i) %
					    LEDGER_SKIPS_KEPT];
		cJSON			*o = cJSON_CreateObject();

		cJSON_AddItemToArray(a, o);
		cJSON_AddStringToObject(o, "stream",
		    k->stream == LEDGER_PERF ? "perf" : "fixes");
		cJSON_AddNumberToObject(o, "offset", (double)k->offset);
		cJSON_AddNumberToObject(o, "length", (double)k->length);
		cJSON_AddStringToObject(o, "reason", k->reason);
	}
	return a;
}

static cJSON *
envelope(int64_t now_ms)
{
	cJSON	*o = cJSON_CreateObject();

	if (o == NULL)
		return NULL;
	cJSON_AddNumberToObject(o, "v", 1);
	add_time(o, "generatedAt", now_ms);
	return o;
}

cJSON *
ledger_issues_json(struct ledger *l, const struct ledger_query *q,
    int64_t now_ms)
{
	cJSON		 *o, *a;
	struct row	**sorted;
	size_t		  i, n = 0;

	if ((o = envelope(now_ms)) == NULL)
		return NULL;
	add_counts(o, l);
	a = cJSON_AddArrayToObject(o, "issues");
	if ((sorted = malloc((l->nrows + 1) * sizeof(*sorted))) == NULL) {
		cJSON_Delete(o);
		return NULL;
	}
	if (l->nrows > 0) {
		memcpy(sorted, l->rows, l->nrows * sizeof(*sorted));
		qsort(sorted, l->nrows, sizeof(*sorted), row_order);
	}
	for (i = 0; i < l->nrows; i++) {
		const struct row	*r = sorted[i];

		if (q != NULL && q->type != NULL && strcmp(q->type, r->type))
			continue;
		if (q != NULL && q->status != NULL &&
		    strcmp(q->status, row_status(l, r, NULL)))
			continue;
		if (q != NULL && q->limit && n >= q->limit)
			break;
		cJSON_AddItemToArray(a, row_json(l, r, now_ms));
		n++;
	}
	free(sorted);
	cJSON_AddItemToObject(o, "skipped", ledger_skipped_json(l));
	return o;
}

cJSON *
ledger_issue_json(struct ledger *l, const char *id, int64_t now_ms)
{
	uint32_t	 v;
	struct row	*r;
	cJSON		*o;

	if (footprint_parse_hex(id, strlen(id), &v) != 0 ||
	    (r = row_find(l, v)) == NULL)
		return NULL;
	if ((o = envelope(now_ms)) == NULL)
		return NULL;
	cJSON_AddItemToObject(o, "issue", row_json(l, r, now_ms));
	if (l->want_occ && v == l->occ_id)
		cJSON_AddItemReferenceToObject(o, "occurrences", l->occ);
	else
		cJSON_AddArrayToObject(o, "occurrences");
	return o;
}

/* --- timeline and windows --------------------------------------------- */

static int
dbl_cmp(const void *a, const void *b)
{
	double	x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* Nearest-rank median (rank ceil(n/2)); NAN when n is 0.  Reorders v. */
static double
median(double *v, size_t n)
{
	if (n == 0)
		return NAN;
	qsort(v, n, sizeof(*v), dbl_cmp);
	return v[(n + 1) / 2 - 1];
}

/* A set of samples: indices into l->hbs and l->hps. */
struct sample_set {
	size_t	*hb, nhb;
	size_t	*hp, nhp;
};

static const char *metric_names[5] = {
	"p95Ms", "medianMs", "calls", "triangles", "programs"
};

/* medians, hitch count and worst of a set; scratch holds nhb doubles */
static void
add_summary(cJSON *o, const struct ledger *l, const struct sample_set *s,
    double *scratch)
{
	size_t	m, i, n;
	double	worst = NAN;

	cJSON_AddNumberToObject(o, "heartbeats", (double)s->nhb);
	for (m = 0; m < 5; m++) {
		for (i = n = 0; i < s->nhb; i++)
			if (!isnan(l->hbs[s->hb[i]].v[m]))
				scratch[n++] = l->hbs[s->hb[i]].v[m];
		add_num(o, metric_names[m], median(scratch, n));
	}
	for (i = 0; i < s->nhp; i++)
		if (!isnan(l->hps[s->hp[i]].ms) &&
		    (isnan(worst) || l->hps[s->hp[i]].ms > worst))
			worst = l->hps[s->hp[i]].ms;
	if (s->nhb == 0 && s->nhp == 0)
		cJSON_AddNullToObject(o, "hitches");
	else
		cJSON_AddNumberToObject(o, "hitches", (double)s->nhp);
	add_num(o, "worstHitchMs", worst);
}

/* Split [t0, t1] into n equal slices (the bucket rule of docs/json.md). */
static int64_t
slice_width(int64_t t0, int64_t t1, int n)
{
	int64_t	span = t1 - t0 + 1;

	return (span + n - 1) / n;
}

/* p95 medians over SERIES_SLICES equal slices of the window [t0, t1],
 * cut like the timeline's buckets; a slice without a heartbeat is null. */
static cJSON *
series_json(const struct ledger *l, const struct sample_set *s, int64_t t0,
    int64_t t1, double *scratch)
{
	cJSON	*a = cJSON_CreateArray();
	int64_t	 w;
	size_t	 i, n;
	int	 k;

	if (a == NULL || s->nhb == 0 || t0 == LEDGER_NO_TIME)
		return a;
	w = slice_width(t0, t1, SERIES_SLICES);
	for (k = 0; k < SERIES_SLICES; k++) {
		for (i = n = 0; i < s->nhb; i++) {
			const struct hb	*h = &l->hbs[s->hb[i]];

			if ((h->t - t0) / w == k && !isnan(h->v[0]))
				scratch[n++] = h->v[0];
		}
		if (n == 0)
			cJSON_AddItemToArray(a, cJSON_CreateNull());
		else
			cJSON_AddItemToArray(a,
			    cJSON_CreateNumber(median(scratch, n)));
	}
	return a;
}

static void
set_span(const struct ledger *l, const struct sample_set *s, int64_t *t0,
    int64_t *t1)
{
	size_t	i;

	*t0 = *t1 = LEDGER_NO_TIME;
	for (i = 0; i < s->nhb + s->nhp; i++) {
		int64_t	t = i < s->nhb ? l->hbs[s->hb[i]].t :
			    l->hps[s->hp[i - s->nhb]].t;

		if (*t0 == LEDGER_NO_TIME || t < *t0)
			*t0 = t;
		if (*t1 == LEDGER_NO_TIME || t > *t1)
			*t1 = t;
	}
}

static cJSON *
window_json(const struct ledger *l, const struct sample_set *s,
    const char *build, int64_t from, int64_t to, double *scratch)
{
	cJSON	*o = cJSON_CreateObject();

	if (o == NULL)
		return NULL;
	if (build)
		cJSON_AddStringToObject(o, "build", build);
	else
		cJSON_AddNullToObject(o, "build");
	if (from == LEDGER_NO_TIME && to == LEDGER_NO_TIME)
		set_span(l, s, &from, &to);
	add_time(o, "from", from);
	add_time(o, "to", to);
	add_summary(o, l, s, scratch);
	cJSON_AddItemToObject(o, "series", series_json(l, s, from, to,
	    scratch));
	return o;
}

/* Select the samples of build b (NO_BUILD: none) or of [from, to]. */
static int
select_samples(const struct ledger *l, uint32_t b, int64_t from, int64_t to,
    struct sample_set *s)
{
	size_t	i;
	int	by_build = from == LEDGER_NO_TIME && to == LEDGER_NO_TIME;

	s->nhb = s->nhp = 0;
	s->hb = malloc((l->nhbs + 1) * sizeof(*s->hb));
	s->hp = malloc((l->nhps + 1) * sizeof(*s->hp));
	if (s->hb == NULL || s->hp == NULL)
		return -ENOMEM;
	for (i = 0; i < l->nhbs; i++)
		if (by_build ? l->hbs[i].build == b :
		    l->hbs[i].t >= from && l->hbs[i].t <= to)
			s->hb[s->nhb++] = i;
	for (i = 0; i < l->nhps; i++)
		if (by_build ? l->hps[i].build == b :
		    l->hps[i].t >= from && l->hps[i].t <= to)
			s->hp[s->nhp++] = i;
	return 0;
}

static void
free_samples(struct sample_set *s)
{
	free(s->hb);
	free(s->hp);
}

static int
u32_cmp(const void *a, const void *b)
{
	uint32_t	x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

cJSON *
ledger_history_json(struct ledger *l, int nbuckets, int64_t now_ms)
{
	cJSON			*o, *ba, *wa;
	int64_t			 w = 0;
	size_t			*cnt = NULL, *start = NULL, *fill = NULL;
	size_t			*order = NULL, i, total = l->nhbs + l->nhps;
	double			*scratch = NULL;
	uint32_t		*bl = NULL;
	int			 k, ok = 0;

	if (nbuckets < 1)
		nbuckets = 24;
	if ((o = envelope(now_ms)) == NULL)
		return NULL;
	add_time(o, "from", l->tmin);
	add_time(o, "to", l->tmax);
	ba = cJSON_AddArrayToObject(o, "buckets");
	wa = cJSON_AddArrayToObject(o, "builds");
	if ((scratch = malloc((l->nhbs + 1) * sizeof(*scratch))) == NULL ||
	    (bl = malloc((total + 1) * sizeof(*bl))) == NULL)
		goto done;
	if (l->tmin == LEDGER_NO_TIME) {
		cJSON_AddNullToObject(o, "bucketMs");
	} else {
		w = slice_width(l->tmin, l->tmax, nbuckets);
		cJSON_AddNumberToObject(o, "bucketMs", (double)w);
		/* counting sort of every sample into its bucket */
		cnt = calloc((size_t)nbuckets, sizeof(*cnt));
		start = calloc((size_t)nbuckets + 1, sizeof(*start));
		fill = calloc((size_t)nbuckets, sizeof(*fill));
		order = malloc((total + 1) * sizeof(*order));
		if (!cnt || !start || !fill || !order)
			goto done;
		for (i = 0; i < total; i++) {
			int64_t	t = i < l->nhbs ? l->hbs[i].t :
				    l->hps[i - l->nhbs].t;

			cnt[(t - l->tmin) / w]++;
		}
		for (k = 0; k < nbuckets; k++)
			start[k + 1] = start[k] + cnt[k];
		for (i = 0; i < total; i++) {
			int64_t	t = i < l->nhbs ? l->hbs[i].t :
				    l->hps[i - l->nhbs].t;
			size_t	bk = (size_t)((t - l->tmin) / w);

			order[start[bk] + fill[bk]++] = i;
		}
		for (k = 0; k < nbuckets; k++) {
			struct sample_set	 s;
			cJSON			*bo, *bb;
			size_t			 j, nb = 0;

			/* hb indices sort before hp ones within a bucket */
			s.hb = order + start[k];
			for (s.nhb = 0; s.nhb < cnt[k] &&
			    order[start[k] + s.nhb] < l->nhbs; s.nhb++)
				;
			s.hp = s.hb + s.nhb;
			s.nhp = cnt[k] - s.nhb;
			for (j = 0; j < s.nhp; j++)
				s.hp[j] -= l->nhbs;
			if ((bo = cJSON_CreateObject()) == NULL)
				goto done;
			cJSON_AddItemToArray(ba, bo);
			add_time(bo, "from", l->tmin + k * w);
			add_time(bo, "to", l->tmin + (k + 1) * w);
			add_summary(bo, l, &s, scratch);
			for (j = 0; j < s.nhb; j++)
				if (l->hbs[s.hb[j]].build != NO_BUILD)
					bl[nb++] = l->hbs[s.hb[j]].build;
			for (j = 0; j < s.nhp; j++)
				if (l->hps[s.hp[j]].build != NO_BUILD)
					bl[nb++] = l->hps[s.hp[j]].build;
			qsort(bl, nb, sizeof(*bl), u32_cmp);
			bb = cJSON_AddArrayToObject(bo, "builds");
			for (j = 0; j < nb; j++)
				if (j == 0 || bl[j] != bl[j - 1])
					cJSON_AddItemToArray(bb,
					    cJSON_CreateString(
					    l->builds[bl[j]].name));
		}
	}
	for (i = 0; i < l->nbuilds; i++) {
		struct sample_set	s;

		if (select_samples(l, (uint32_t)i, LEDGER_NO_TIME,
		    LEDGER_NO_TIME, &s)) {
			free_samples(&s);
			goto done;
		}
		if (s.nhb + s.nhp > 0)
			cJSON_AddItemToArray(wa, window_json(l, &s,
			    l->builds[i].name, LEDGER_NO_TIME, LEDGER_NO_TIME,
			    scratch));
		free_samples(&s);
	}
	ok = 1;
done:
	free(cnt);
	free(start);
	free(fill);
	free(order);
	free(scratch);
	free(bl);
	if (!ok) {
		cJSON_Delete(o);
		return NULL;
	}
	return o;
}

/* Builds with heartbeat evidence, newest last. */
static int
has_evidence(const struct ledger *l, uint32_t b)
{
	size_t	i;

	for (i = 0; i < l->nhbs; i++)
		if (l->hbs[i].build == b)
			return 1;
	return 0;
}

cJSON *
ledger_window_json(struct ledger *l, const char *spec, int after,
    const char **err)
{
	struct sample_set	 s = { 0 };
	const char		*dots;
	uint32_t		 b = NO_BUILD;
	int64_t			 from = LEDGER_NO_TIME, to = LEDGER_NO_TIME;
	double			*scratch;
	cJSON			*o = NULL;
	size_t			 i;

	*err = NULL;
	if (spec == NULL || *spec == '\0') {
		uint32_t	latest = NO_BUILD, prev = NO_BUILD;

		for (i = l->nbuilds; i > 0; i--) {
			if (!has_evidence(l, (uint32_t)(i - 1)))
				continue;
			if (latest == NO_BUILD)
				latest = (uint32_t)(i - 1);
			else {
				prev = (uint32_t)(i - 1);
				break;
			}
		}
		b = after ? latest : prev;
		if (b == NO_BUILD) {
			*err = after ? "no build has heartbeats yet" :
			    "no earlier build with heartbeats to compare with";
			return NULL;
		}
	} else if ((dots = strstr(spec, "..")) != NULL) {
		if (iso_parse_ms(spec, (size_t)(dots - spec), &from) ||
		    iso_parse_ms(dots + 2, strlen(dots + 2), &to) || to < from) {
			*err = "a window is <ISO>..<ISO> with from <= to";
			return NULL;
		}
	} else {
		for (i = 0; i < l->nbuilds; i++)
			if (strcmp(l->builds[i].name, spec) == 0)
				b = (uint32_t)i;
		if (b == NO_BUILD) {
			*err = "no such build in the ledger";
			return NULL;
		}
	}
	if ((scratch = malloc((l->nhbs + 1) * sizeof(*scratch))) != NULL &&
	    select_samples(l, b, from, to, &s) == 0)
		o = window_json(l, &s, b != NO_BUILD ? l->builds[b].name : NULL,
		    from, to, scratch);
	free_samples(&s);
	free(scratch);
	if (o == NULL)
		*err = "out of memory";
	return o;
}
