/*
 * ledger — the fold (DESIGN §7): lines in, catalogue and timeline state
 * out.  See ledger.h for the contract; render.c answers from the state,
 * checkpoint.c saves and restores it.
 *
 * Per perf line the hot path is: one validating scan (jscan, with the
 * ledger's shape cache), the type, `at`, `build` and — for incidents
 * only — the footprint and a few nested members.  Heartbeats, four lines
 * in five, cost a scan and nothing else unless the timeline is wanted.
 * Rows are found by footprint id in an open-addressing table; builds by
 * name, with the previous line's build tried first because consecutive
 * records nearly always share it; `at` by the date of the previous one,
 * which is nearly always the same day.
 *
 * Status is not stored: it depends on fixes and on builds that appear
 * after the fix, so it is computed when asked, from the row's highest
 * build and its latest unbuilt occurrence.
 *
 * A fix recorded without an `after` window is judged by the fold: it is
 * pending until a build from its fix build on has heartbeats, and its
 * after-window is that build's, measured from the samples.  So that the
 * catalogue can show that window without keeping every heartbeat, a
 * build that starts while a fix waits for one is `watched`: its samples
 * are kept even without want_timeline (a build or two per fix).
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ledger.h"
#include "ledger_impl.h"

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
	samples_init(&l->hb, HB_COLS);
	samples_init(&l->hp, HP_COLS);
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
	    (l->bslots = calloc(l->nbslots, sizeof(*l->bslots))) == NULL ||
	    (l->shapes = jscan_shapes_create()) == NULL)
		goto fail;
	return l;
fail:
	ledger_destroy(l);
	return NULL;
}

void
ledger_set_judge(struct ledger *l, const struct ledger_judge *j)
{
	l->judge = *j;
}

void
rows_run_unref(struct rows_run *r)
{
	if (r == NULL || __atomic_sub_fetch(&r->refs, 1, __ATOMIC_ACQ_REL) != 0)
		return;
	free(r->p);
	free(r);
}

/* The checkpoint's rows cache, let go with the ledger (a snapshot that
 * still refers to a run keeps that run alive). */
static void
rows_runs_free(struct ledger *l)
{
	size_t	k;

	for (k = 0; k < l->nruns; k++)
		rows_run_unref(l->runs[k]);
	free(l->runs);
	free(l->run_stale);
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
		free(l->rows[i]->guess);
		free(l->rows[i]->conf);
		free(l->rows[i]->evid);
		free(l->rows[i]);
	}
	for (i = 0; i < l->nbuilds; i++)
		free(l->builds[i].name);
	rows_runs_free(l);
	ledger_clear_fixes(l);
	cJSON_Delete(l->occ);
	free(l->rows);
	free(l->slots);
	free(l->builds);
	free(l->bslots);
	samples_free(&l->hb);
	samples_free(&l->hp);
	free(l->fixes);
	jscan_shapes_destroy(l->shapes);
	free(l);
}

void
note_skip(struct ledger *l, enum ledger_stream s, uint64_t offset,
    uint64_t len, const char *reason)
{
	struct skip	*k = &l->skips[l->nskips % LEDGER_SKIPS_KEPT];

	k->stream = s;
	k->offset = offset;
	k->length = len;
	snprintf(k->reason, sizeof(k->reason), "%s", reason);
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

struct row *
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

/* Add a row that is not there yet (its fields set); NULL: no memory, and
 * the row is not the ledger's. */
struct row *
row_insert(struct ledger *l, struct row *r)
{
	size_t	mask, i;

	if ((l->nrows + 1) * 2 > l->nslots && rows_rehash(l))
		return NULL;
	if (grow((void **)&l->rows, &l->caprows, l->nrows + 1,
	    sizeof(*l->rows)))
		return NULL;
	mask = l->nslots - 1;
	for (i = (r->id * 2654435761u) & mask; l->slots[i] != NULL;
	    i = (i + 1) & mask)
		;
	l->slots[i] = r;
	r->idx = (uint32_t)l->nrows;
	l->rows[l->nrows++] = r;
	l->c.rows = l->nrows;
	return r;
}

static struct row *
row_add(struct ledger *l, uint32_t id, const char *key)
{
	struct row	*r;

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
	if (r->key == NULL || r->type == NULL || row_insert(l, r) == NULL) {
		free(r->key);
		free(r->type);
		free(r);
		return NULL;
	}
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

/* Append a build (its name is copied); 0 or -ENOMEM. */
int
build_insert(struct ledger *l, const char *name, size_t len, int64_t first_ms)
{
	struct build	*b;
	uint32_t	 h = fnv1a32(name, len);

	if ((l->nbuilds + 1) * 2 > l->nbslots) {
		uint32_t	*ns;
		size_t		 n = l->nbslots * 2, j;

		if ((ns = calloc(n, sizeof(*ns))) == NULL)
			return -ENOMEM;
		for (j = 0; j < l->nbuilds; j++)
			bslot_put(ns, n, l->builds[j].hash, (uint32_t)j);
		free(l->bslots);
		l->bslots = ns;
		l->nbslots = n;
	}
	if (grow((void **)&l->builds, &l->capbuilds, l->nbuilds + 1,
	    sizeof(*l->builds)))
		return -ENOMEM;
	b = &l->builds[l->nbuilds];
	memset(b, 0, sizeof(*b));
	if ((b->name = malloc(len + 1)) == NULL)
		return -ENOMEM;
	memcpy(b->name, name, len);
	b->name[len] = '\0';
	b->len = (uint32_t)len;
	b->hash = h;
	b->first_ms = first_ms;
	b->ts_min = b->ts_max = LEDGER_NO_TIME;
	b->worst = NAN;
	bslot_put(l->bslots, l->nbslots, h, (uint32_t)l->nbuilds);
	l->c.builds = ++l->nbuilds;
	return 0;
}

static int	build_wanted(const struct ledger *, int64_t);

/* Index of the build named by `s` (a string span), creating it at `at`;
 * NO_BUILD if s is not a non-empty string; -ENOMEM through *err. */
static uint32_t
build_lookup(struct ledger *l, struct jspan s, int64_t at, int *err)
{
	char		 buf[512];
	size_t		 n, mask, i;
	uint32_t	 h;
	struct build	*b;

	if (s.kind != J_STRING || s.n == 0)
		return NO_BUILD;
	if (l->last_build != NO_BUILD && !s.escaped &&
	    l->builds[l->last_build].len == s.n &&
	    memcmp(l->builds[l->last_build].name, s.p, s.n) == 0)
		return l->last_build;
	n = (size_t)jscan_str(s, buf, sizeof(buf));
	h = fnv1a32(buf, n);
	mask = l->nbslots - 1;
	for (i = h & mask; l->bslots[i] != 0; i = (i + 1) & mask) {
		b = &l->builds[l->bslots[i] - 1];
		if (b->hash == h && b->len == n && memcmp(b->name, buf, n) == 0)
			return l->last_build = l->bslots[i] - 1;
	}
	if ((*err = build_insert(l, buf, n, at)) != 0)
		return NO_BUILD;
	l->builds[l->nbuilds - 1].watched = build_wanted(l, at);
	return l->last_build = (uint32_t)(l->nbuilds - 1);
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

/* A verdict field from the last occurrence, decoded and cut at cap - 1
 * bytes; NULL when it is not a string.  Nearly always the same as the
 * row's already, so it is compared before anything is allocated. */
static int
verdict_set(char **dst, struct jspan s, size_t cap)
{
	char	buf[VERDICT_EVID], *n;

	if (s.kind != J_STRING) {
		free(*dst);
		*dst = NULL;
		return 0;
	}
	/* what it would decode to, when that is its own bytes */
	if (*dst != NULL && !s.escaped && s.n < cap &&
	    strlen(*dst) == s.n && memcmp(*dst, s.p, s.n) == 0)
		return 0;
	if (jscan_str(s, buf, cap) < 0) {
		free(*dst);
		*dst = NULL;
		return 0;
	}
	if (*dst != NULL && strcmp(*dst, buf) == 0)
		return 0;
	if ((n = strdup(buf)) == NULL)
		return -ENOMEM;
	free(*dst);
	*dst = n;
	return 0;
}

/*
 * The incident's footprint id (DESIGN §6 reading rule), and how to get
 * its key, which only a new row needs: *how is KEY_READY (in l->s_key
 * already), KEY_SPAN (the writer's, in *kspan) or KEY_DERIVE.
 */
enum { KEY_READY, KEY_SPAN, KEY_DERIVE };

static int
incident_id(struct ledger *l, const struct jscan_result *r, uint32_t *id,
    int *how, struct jspan *kspan)
{
	static const char *const names[] = { "v", "id", "key" };
	struct jspan	fp = r->f[F_FOOTPRINT], m[3], sid, skey;
	double		ver = 0;
	int		stamped, n;

	jscan_getn_in(r, fp, names, m, 3);
	sid = m[1];
	skey = m[2];
	stamped = jscan_num(m[0], &ver) == 0 && ver == FOOTPRINT_VERSION;
	if (stamped) {
		if (sid.kind == J_STRING && !sid.escaped &&
		    footprint_parse_hex(sid.p, sid.n, id) == 0) {
			*kspan = skey;
			*how = skey.kind == J_STRING ? KEY_SPAN : KEY_DERIVE;
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
		*kspan = skey;
		*how = KEY_SPAN;
		return 0;
	}
	*id = footprint_id(l->s_key, (size_t)n);
	*how = KEY_READY;
	return 0;
}

/* The key incident_id said how to get, in l->s_key. */
static const char *
incident_key(struct ledger *l, const struct jscan_result *r, int how,
    struct jspan kspan)
{
	if (how == KEY_SPAN)
		jscan_str(kspan, l->s_key, sizeof(l->s_key));
	else if (how == KEY_DERIVE && footprint_derive(r, l->s_key,
	    sizeof(l->s_key)) < 0)
		l->s_key[0] = '\0';
	return l->s_key;
}

/* A string member of a record, decoded (cut at cap - 1 bytes). */
static void
occ_str(cJSON *o, const char *name, struct jspan v)
{
	char	buf[512];

	if (v.kind == J_STRING && jscan_str(v, buf, sizeof(buf)) > 0)
		cJSON_AddStringToObject(o, name, buf);
}

static void
occ_num(cJSON *o, const char *name, struct jspan v)
{
	double	d;

	if ((v.kind == J_NUMBER || v.kind == J_STRING) && jscan_num(v, &d) == 0)
		cJSON_AddNumberToObject(o, name, d);
}

/* A record's counter deltas, those it has, as o's "delta" (none: left out). */
static void
occ_delta(const struct jscan_result *r, struct jspan v, cJSON *o)
{
	static const char *const dn[] = {
		"programs", "textures", "geometries", "calls", "triangles"
	};
	struct jspan	 m[5];
	cJSON		*x;
	size_t		 k;

	if (v.kind != J_OBJECT || (x = cJSON_CreateObject()) == NULL)
		return;
	jscan_getn_in(r, v, dn, m, 5);
	for (k = 0; k < 5; k++)
		occ_num(x, dn[k], m[k]);
	if (cJSON_GetArraySize(x) > 0)
		cJSON_AddItemToObject(o, "delta", x);
	else
		cJSON_Delete(x);
}

/*
 * The entities an incident names (docs/attribute.md): l[0] its
 * `mintedEntities` ({minted, id, site}), l[1] its `world.spawnedEntities`
 * ({name, id, site}); each a J_ARRAY span, or not one when the record has
 * none.  *world is the record's `world`.
 */
static void
entity_lists(const struct jscan_result *r, struct jspan rec, struct jspan l[2],
    struct jspan *world)
{
	l[0] = jscan_get_in(r, rec, "mintedEntities");
	*world = jscan_get_in(r, rec, "world");
	l[1].kind = J_NONE;
	if (world->kind == J_OBJECT)
		l[1] = jscan_get_in(r, *world, "spawnedEntities");
}

/*
 * "id (site)" of an entity object into buf ("id" alone when the site is
 * unknown); 0, or -1 when it has no id.
 */
static int
entity_text(const struct jscan_result *r, struct jspan e, char *buf,
    size_t cap)
{
	static const char *const k[] = { "id", "site" };
	struct jspan	m[2];
	char		id[80], site[72];	/* with " (" ")" and " +N more": < 160 */

	if (e.kind != J_OBJECT)
		return -1;
	jscan_getn_in(r, e, k, m, 2);
	if (jscan_str(m[0], id, sizeof(id)) <= 0 || m[0].kind != J_STRING)
		return -1;
	if (m[1].kind == J_STRING && jscan_str(m[1], site, sizeof(site)) > 0 &&
	    strcmp(site, "unknown") != 0)
		snprintf(buf, cap, "%s (%s)", id, site);
	else
		snprintf(buf, cap, "%s", id);
	return 0;
}

/*
 * The event's entity: the first the incident names, and how many other
 * ids it names beside it ("enemy_17 (src/spawn.js:88) +2 more").  The
 * recorder lists at most 32 spawned: past that the spawned count is what
 * is said ("crate[1] (main.js:144) +999 more spawned"), not the ids it
 * happened to list.
 */
static void
event_entity(const struct jscan_result *r, struct jspan rec, int spawned_first,
    char *buf, size_t cap)
{
	static const char *const k[] = { "id" };
	struct jspan	l[2], w, arr, e, id, first;
	size_t		pos = 0, listed = 0;
	unsigned	others = 0;
	int		have = 0, pick;
	double		spawned = 0;

	/* a spawn-burst is about what was spawned; else what was minted;
	   the other list when the record lacks that one */
	entity_lists(r, rec, l, &w);
	pick = spawned_first ? 1 : 0;
	if (l[pick].kind != J_ARRAY)
		pick = !pick;
	arr = l[pick];
	buf[0] = '\0';
	first.kind = J_NONE;
	while (arr.kind == J_ARRAY && (e = jscan_next(arr, &pos)).kind !=
	    J_NONE) {
		listed++;
		if (!have) {
			if (entity_text(r, e, buf, cap) == 0) {
				have = 1;
				jscan_getn_in(r, e, k, &first, 1);
			}
			continue;
		}
		if (e.kind != J_OBJECT)
			continue;
		jscan_getn_in(r, e, k, &id, 1);
		if (id.kind == J_STRING && (id.n != first.n ||
		    memcmp(id.p, first.p, id.n) != 0))
			others++;
	}
	if (!have)
		return;
	if (pick == 1 &&
	    jscan_num(jscan_get_in(r, w, "spawnedCount"), &spawned) == 0 &&
	    spawned > (double)listed && spawned < 1e9)
		snprintf(buf + strlen(buf), cap - strlen(buf), " +%.0f more "
		    "spawned", spawned - 1);
	else if (others > 0)
		snprintf(buf + strlen(buf), cap - strlen(buf), " +%u more",
		    others);
}

/* The record of a line as one span, for the members the scan does not
 * pick out: from its first '{' to its last '}'. */
static struct jspan
record_span(const char *line, size_t len, size_t skip)
{
	const char	*p = line + skip, *e = line + len;
	struct jspan	 rec;

	while (p < e && *p != '{')
		p++;
	while (e > p && e[-1] != '}')
		e--;
	rec.p = p;
	rec.n = (uint32_t)(e - p);
	rec.kind = J_OBJECT;
	rec.escaped = 0;
	return rec;
}


/* hitch-<1..32 of [0-9a-z]>-<1..12 digits>: a view snapshot's ref as the
 * recorder writes it (daemon/views.c takes no other). */
int
ledger_ref_ok(const char *s)
{
	const char	*p, *q;

	if (strncmp(s, "hitch-", 6) != 0)
		return 0;
	for (q = p = s + 6; (*p >= '0' && *p <= '9') || (*p >= 'a' &&
	    *p <= 'z'); p++)
		;
	if (p == q || p - q > 32 || *p != '-')
		return 0;
	for (q = ++p; *p >= '0' && *p <= '9'; p++)
		;
	return p != q && p - q <= 12 && *p == '\0';
}

/*
 * What tells one occurrence from another (docs/json.md): the script the
 * browser named, the bytes uploaded, the sites minted, the counters that
 * moved (and the frame before's, when its stall was that frame's work),
 * the regime.  Read as far as each record has them: a field the
 * record does not carry is left out, never made up.
 */
static void
occurrence_detail(struct ledger *l, const struct jscan_result *r,
    struct jspan rec, uint32_t b, cJSON *o)
{
	static const char *const sn[] = {
		"name", "sourceURL", "invoker", "invokerType", "durationMs",
		"unavailable"
	};
	struct jspan	 v, m[6], site, up, lists[2];
	cJSON		*x;
	size_t		 pos = 0, k;
	int		 code;
	double		 d;

	/* the script Long Animation Frames named */
	v = jscan_get_in(r, rec, "script");
	if (v.kind == J_OBJECT && (x = cJSON_CreateObject()) != NULL) {
		jscan_getn_in(r, v, sn, m, 6);
		for (k = 0; k < 6; k++)
			if (k == 4)
				occ_num(x, sn[k], m[k]);
			else
				occ_str(x, sn[k], m[k]);
		if (cJSON_GetArraySize(x) > 0)
			cJSON_AddItemToObject(o, "script", x);
		else
			cJSON_Delete(x);
	}
	/* the bytes uploaded: upload.bytes, or a number of its own */
	up = jscan_get_in(r, rec, "upload");
	v = up.kind == J_OBJECT ? jscan_get_in(r, up, "bytes") :
	    jscan_get_in(r, rec, "uploadBytes");
	if (jscan_num(v, &d) == 0)
		cJSON_AddNumberToObject(o, "uploadBytes", d);
	/* the sites: the record's own site, then the pairs it minted */
	x = cJSON_CreateArray();
	site = jscan_get_in(r, rec, "site");
	if (x != NULL && site.kind == J_STRING) {
		char	buf[512];

		if (jscan_str(site, buf, sizeof(buf)) > 0)
			cJSON_AddItemToArray(x, cJSON_CreateString(buf));
	}
	while (x != NULL && r->f[F_MINTED].kind == J_ARRAY &&
	    cJSON_GetArraySize(x) < 16 &&
	    (v = jscan_next(r->f[F_MINTED], &pos)).kind != J_NONE) {
		char	buf[512];

		if (v.kind == J_STRING && jscan_str(v, buf, sizeof(buf)) > 0)
			cJSON_AddItemToArray(x, cJSON_CreateString(buf));
	}
	if (x != NULL && cJSON_GetArraySize(x) > 0)
		cJSON_AddItemToObject(o, "sites", x);
	else
		cJSON_Delete(x);
	/* the entities it names, as "id (site)": the minted, then the
	   spawned, each once, at most 8 */
	x = cJSON_CreateArray();
	entity_lists(r, rec, lists, &v);
	for (k = 0; k < 2 && x != NULL; k++) {
		pos = 0;
		while (lists[k].kind == J_ARRAY && cJSON_GetArraySize(x) < 8 &&
		    (m[0] = jscan_next(lists[k], &pos)).kind != J_NONE) {
			char	 buf[LEDGER_ENTITY_MAX];
			cJSON	*it;
			int	 seen = 0;

			if (entity_text(r, m[0], buf, sizeof(buf)) != 0)
				continue;
			cJSON_ArrayForEach(it, x)
				if (strcmp(it->valuestring, buf) == 0)
					seen = 1;
			if (!seen)
				cJSON_AddItemToArray(x, cJSON_CreateString(buf));
		}
	}
	if (x != NULL && cJSON_GetArraySize(x) > 0)
		cJSON_AddItemToObject(o, "entities", x);
	else
		cJSON_Delete(x);
	/* the view snapshot `sloptimize repro` replays (only a ref of the
	   form today's recorder writes: a file name, ASCII, so both folds
	   give the same bytes) */
	v = jscan_get_in(r, rec, "snapshotRef");
	if (v.kind == J_STRING) {
		char	buf[80];

		if (jscan_str(v, buf, sizeof(buf)) > 0 && ledger_ref_ok(buf))
			cJSON_AddStringToObject(o, "snapshotRef", buf);
	}
	/* the counters that moved */
	occ_delta(r, jscan_get_in(r, rec, "delta"), o);
	/* the frame before, when the record says its stall was that frame's
	   work (a compile, an upload, a crowd): its number, what moved in it */
	v = jscan_get_in(r, rec, "before");
	if (v.kind == J_OBJECT && (x = cJSON_CreateObject()) != NULL) {
		occ_num(x, "frame", jscan_get_in(r, v, "frame"));
		if (cJSON_GetArraySize(x) > 0) {
			occ_delta(r, jscan_get_in(r, v, "delta"), x);
			cJSON_AddItemToObject(o, "before", x);
		} else
			cJSON_Delete(x);
	}
	code = regime_code(r->f[F_REGIME], REGIME_UNKNOWN);
	if (code == REGIME_NONE && b != NO_BUILD && l->builds[b].last_regime)
		code = l->builds[b].last_regime - 1;
	if (code != REGIME_NONE)
		cJSON_AddStringToObject(o, "regime", regime_name(code));
}

static int
occurrence_add(struct ledger *l, int64_t at, uint32_t b, double value,
    int has_value, const struct row *row, struct jspan note, uint64_t offset,
    const struct jscan_result *r, struct jspan rec)
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
		row->guess ? (void)cJSON_AddStringToObject(vd, "guess",
		    row->guess) : (void)cJSON_AddNullToObject(vd, "guess");
		row->conf ? (void)cJSON_AddStringToObject(vd,
		    "confidence", row->conf) : (void)cJSON_AddNullToObject(vd,
		    "confidence");
		row->evid ? (void)cJSON_AddStringToObject(vd, "evidence",
		    row->evid) : (void)cJSON_AddNullToObject(vd, "evidence");
	} else
		cJSON_AddNullToObject(o, "verdict");
	/* a usermark's note is the player's own words: keep it with the
	 * occurrence it explains (only when there is one) */
	if (note.kind == J_STRING && note.n > 0 &&
	    jscan_str(note, l->s_note, sizeof(l->s_note)) > 0)
		cJSON_AddStringToObject(o, "note", l->s_note);
	occurrence_detail(l, r, rec, b, o);
	cJSON_AddNumberToObject(o, "offset", (double)offset);
	return 0;
}

enum rtype { R_OTHER, R_HEARTBEAT, R_HITCH, R_USERMARK, R_JITTER };

/* The record's type, once per line.  An escaped type ("hitc\u0068") is
 * the type it decodes to, as jscan_eq says. */
static enum rtype
rtype_of(struct jspan t)
{
	if (t.escaped)
		return jscan_eq(t, "heartbeat") ? R_HEARTBEAT :
		    jscan_eq(t, "hitch") ? R_HITCH :
		    jscan_eq(t, "usermark") ? R_USERMARK :
		    jscan_eq(t, "jitter") ? R_JITTER : R_OTHER;
	switch (t.n) {
	case 5:
		return memcmp(t.p, "hitch", 5) == 0 ? R_HITCH : R_OTHER;
	case 6:
		return memcmp(t.p, "jitter", 6) == 0 ? R_JITTER : R_OTHER;
	case 8:
		return memcmp(t.p, "usermark", 8) == 0 ? R_USERMARK : R_OTHER;
	case 9:
		return memcmp(t.p, "heartbeat", 9) == 0 ? R_HEARTBEAT : R_OTHER;
	default:
		return R_OTHER;
	}
}

static inline int
two_digits(const char *p, int *v)
{
	unsigned	a = (unsigned)(p[0] - '0'), b = (unsigned)(p[1] - '0');

	*v = (int)(a * 10 + b);
	return a < 10 && b < 10;
}

/*
 * `at` in milliseconds, as iso_parse_ms gives it.  The recorder writes
 * the canonical form (2026-09-01T09:00:00.000Z): for it the day is taken
 * from the previous `at` when the date is the same, and only the time of
 * day is parsed; any other form goes through iso_parse_ms whole.
 */
static int
at_parse(struct ledger *l, const char *p, size_t n, int64_t *ms)
{
	int	h, m, s, f1;

	if (n == 24 && p[10] == 'T' && p[13] == ':' && p[16] == ':' &&
	    p[19] == '.' && p[23] == 'Z' && two_digits(p + 11, &h) &&
	    two_digits(p + 14, &m) && two_digits(p + 17, &s) &&
	    two_digits(p + 20, &f1) && (unsigned)(p[22] - '0') < 10 &&
	    h <= 23 && m <= 59 && s <= 60) {
		int64_t	tod = ((int64_t)h * 3600 + m * 60 + s) * 1000 +
			    f1 * 10 + (p[22] - '0');

		if (memcmp(p, l->at_day, 10) == 0) {
			*ms = l->at_base + tod;
			return 0;
		}
		if (iso_parse_ms(p, n, ms) != 0)
			return -1;
		memcpy(l->at_day, p, 10);
		l->at_base = *ms - tod;
		return 0;
	}
	return iso_parse_ms(p, n, ms);
}

int
regime_code(struct jspan v, int dflt)
{
	if (v.kind != J_STRING)
		return REGIME_NONE;
	return jscan_eq(v, "hardware") ? REGIME_HARDWARE :
	    jscan_eq(v, "software") ? REGIME_SOFTWARE :
	    jscan_eq(v, "unknown") ? REGIME_UNKNOWN : dflt;
}

const char *
regime_name(int code)
{
	switch (code) {
	case REGIME_UNKNOWN: return "unknown";
	case REGIME_HARDWARE: return "hardware";
	case REGIME_SOFTWARE: return "software";
	default: return NULL;
	}
}

/*
 * A heartbeat's or hitch's sample for the timeline.  A heartbeat's
 * regime is always one of the three (one that names none, or one we do
 * not know, is "unknown": its timings are not known to be a GPU's); a
 * hitch's is kept only when it names one, so that a hitch of another
 * regime never enters a window timed on this one.
 */
static int
timeline_add(struct ledger *l, const struct jscan_result *r, enum rtype t,
    int64_t at, uint32_t b, double value)
{
	static const char *const fn[] = { "p95Ms", "medianMs" };
	static const char *const rn[] = { "calls", "triangles" };
	const struct jspan	*f = r->f;
	struct jspan		 m[2];
	double			 v[HB_COLS];
	struct build		*bd = b != NO_BUILD ? &l->builds[b] : NULL;
	int			 rc, code;

	if (t == R_HEARTBEAT) {
		jscan_getn_in(r, f[F_FRAME], fn, m, 2);
		v[0] = num_or_nan(m[0]);
		v[1] = num_or_nan(m[1]);
		jscan_getn_in(r, f[F_RENDER], rn, m, 2);
		v[2] = num_or_nan(m[0]);
		v[3] = num_or_nan(m[1]);
		v[4] = num_or_nan(jscan_get_in(r, f[F_MEMORY], "programs"));
		v[HB_SECONDS] = num_or_nan(jscan_get_in(r, f[F_WINDOW],
		    "seconds"));
		/* no time is negative, no window a day long */
		if (!(v[HB_SECONDS] >= 0 && v[HB_SECONDS] <= HB_SECONDS_MAX))
			v[HB_SECONDS] = NAN;
		code = regime_code(f[F_REGIME], REGIME_UNKNOWN);
		v[HB_REGIME] = code == REGIME_NONE ? REGIME_UNKNOWN : code;
		if ((rc = samples_add(&l->hb, at, b, v)) != 0)
			return rc;
		if (bd != NULL)
			bd->nhb++;
	} else {
		v[0] = value;
		code = regime_code(f[F_REGIME], REGIME_UNKNOWN);
		v[HP_REGIME] = code == REGIME_NONE ? NAN : code;
		if ((rc = samples_add(&l->hp, at, b, v)) != 0)
			return rc;
		if (bd != NULL) {
			bd->nhp++;
			if (!isnan(value) && (isnan(bd->worst) ||
			    value > bd->worst))
				bd->worst = value;
		}
	}
	if (bd != NULL) {
		if (bd->ts_min == LEDGER_NO_TIME || at < bd->ts_min)
			bd->ts_min = at;
		if (bd->ts_max == LEDGER_NO_TIME || at > bd->ts_max)
			bd->ts_max = at;
	}
	return 0;
}

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
	int			 key_how = KEY_READY;
	struct jspan		 kspan = { 0 };
	const char		*unit = "";
	double			 value = NAN;
	struct row		*row;
	enum rtype		 type;
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
	if (jscan_object_shaped(l->shapes, line + skip, len - skip, &r)) {
		note_skip(l, LEDGER_PERF, offset, len, r.error);
		return 1;
	}
	if (f[F_TYPE].kind != J_STRING || f[F_TYPE].n == 0) {
		note_skip(l, LEDGER_PERF, offset, len, "no string type");
		return 1;
	}
	type = rtype_of(f[F_TYPE]);
	if (f[F_AT].kind == J_STRING && !f[F_AT].escaped &&
	    at_parse(l, f[F_AT].p, f[F_AT].n, &at) != 0)
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

	incident = type == R_HITCH || type == R_USERMARK ||
	    type == R_JITTER || f[F_FOOTPRINT].kind == J_OBJECT;
	if (incident && incident_id(l, &r, &id, &key_how, &kspan) != 0)
		incident = 0;

	/* value and verdict, by type */
	cls.kind = J_NONE;
	if (type == R_HITCH) {
		value = num_or_nan(f[F_FRAMEMS]);
		unit = "ms";
		cls = f[F_CLASSIFICATION];
	} else if (type == R_USERMARK) {
		static const char *const wn[] = { "frameMs", "classification" };
		struct jspan	w0 = jscan_at_in(&r, f[F_WORST], 0), m[2];

		jscan_getn_in(&r, w0, wn, m, 2);
		value = num_or_nan(m[0]);
		unit = "ms";
		cls = m[1];
	} else if (type == R_JITTER) {
		value = num_or_nan(f[F_UNITS]);
		unit = "units";
		cls = f[F_CLASSIFICATION];
	}
	has_value = !isnan(value);

	/* a build's evidence, which a fix without an after window waits for */
	if (type == R_HEARTBEAT && b != NO_BUILD) {
		int	code = regime_code(f[F_REGIME], REGIME_UNKNOWN);

		l->builds[b].heartbeats++;
		if (code != REGIME_NONE)
			l->builds[b].last_regime = (uint8_t)(code + 1);
	}
	if (counted && at != LEDGER_NO_TIME && (l->opts.want_timeline ||
	    (b != NO_BUILD && l->builds[b].watched))) {
		if (l->tmin == LEDGER_NO_TIME || at < l->tmin)
			l->tmin = at;
		if (l->tmax == LEDGER_NO_TIME || at > l->tmax)
			l->tmax = at;
		if ((type == R_HEARTBEAT || type == R_HITCH) &&
		    (err = timeline_add(l, &r, type, at, b, value)) != 0)
			return err;
	}

	row = NULL;
	if (incident && counted) {
		static const char *const names[] = {
			"guess", "confidence", "evidence"
		};
		struct jspan	c0 = cls.kind == J_ARRAY ? jscan_at_in(&r, cls, 0) :
				    cls;
		struct jspan	vd[3];

		if ((row = row_find(l, id)) == NULL &&
		    (row = row_add(l, id, incident_key(l, &r, key_how,
		    kspan))) == NULL)
			return -ENOMEM;
		row_touch(l, row);
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
		jscan_getn_in(&r, c0, names, vd, 3);
		if (verdict_set(&row->guess, vd[0], VERDICT_GUESS) ||
		    verdict_set(&row->conf, vd[1], VERDICT_CONF) ||
		    verdict_set(&row->evid, vd[2], VERDICT_EVID))
			return -ENOMEM;
		if (l->want_occ && id == l->occ_id &&
		    occurrence_add(l, at, b, value, has_value, row, f[F_NOTE],
		    offset, &r, record_span(line, len, skip)))
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
		l->s_note[0] = '\0';
		if (f[F_NOTE].kind == J_STRING)
			jscan_str(f[F_NOTE], l->s_note, sizeof(l->s_note));
		ev->note = l->s_note;
		l->s_entity[0] = '\0';
		ev->entity = l->s_entity;
		{
			int	code = regime_code(f[F_REGIME], REGIME_UNKNOWN);

			if (code == REGIME_NONE && b != NO_BUILD &&
			    l->builds[b].last_regime != 0)
				code = l->builds[b].last_regime - 1;
			ev->regime = code == REGIME_NONE ? "" :
			    regime_name(code);
		}
		if (row != NULL) {
			memcpy(ev->id, row->hex, sizeof(ev->id));
			ev->key = row->key;
			ev->guess = row->guess ? row->guess : "";
			ev->confidence = row->conf ? row->conf : "";
			ev->evidence = row->evid ? row->evid : "";
			ev->count = row->count;
			ev->status = row_status(l, row);
			/* only an incident's: a wake says it, and incidents
			 * are few beside the heartbeats */
			event_entity(&r, record_span(line, len, skip),
			    strcmp(ev->guess, "spawn-burst") == 0, l->s_entity,
			    sizeof(l->s_entity));
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
	if (jscan_object_shaped(l->shapes, line + skip, len - skip, &r)) {
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
	fx->has_after = cJSON_IsObject(after);
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

int
fix_names(const struct fix *fx, uint32_t id)
{
	size_t	i;

	for (i = 0; i < fx->nfps; i++)
		if (fx->fps[i] == id)
			return 1;
	return 0;
}

/* The build a fix is judged against; NO_BUILD if it has not appeared. */
uint32_t
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

int
fix_counts(const struct fix *fx)
{
	return fx->state == FIX_APPLIED || fx->state == FIX_MERGED;
}

uint32_t
fix_evidence(const struct ledger *l, const struct fix *fx)
{
	uint32_t	b = fix_build(l, fx);

	if (b == NO_BUILD)
		return NO_BUILD;
	for (; b < l->nbuilds; b++)
		if (l->builds[b].heartbeats > 0)
			return b;
	return NO_BUILD;
}

int
fix_pending(const struct ledger *l, const struct fix *fx)
{
	return !fx->has_after && fix_evidence(l, fx) == NO_BUILD;
}

/*
 * Would a build first seen at `at` judge a fix that is waiting: one that
 * counts, has no after window, and either already has its fix build (a
 * build after it without heartbeats) or is older than this one?
 */
static int
build_wanted(const struct ledger *l, int64_t at)
{
	size_t	i;

	if (l->opts.want_timeline)
		return 0;	/* every sample is kept anyway */
	for (i = 0; i < l->nfixes; i++) {
		const struct fix	*fx = &l->fixes[i];

		if (!fix_counts(fx) || !fix_pending(l, fx))
			continue;
		if (fix_build(l, fx) != NO_BUILD || (at != LEDGER_NO_TIME &&
		    fx->at_ms != LEDGER_NO_TIME && at > fx->at_ms))
			return 1;
	}
	return 0;
}

/* The latest counting fix naming the row decides. */
const char *
row_status(struct ledger *l, const struct row *row)
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
	if (fix_pending(l, best))
		return "pending";
	return "fixed";
}

const char *
ledger_status_of(struct ledger *l, const char *id)
{
	uint64_t	count;

	return ledger_row_state(l, id, &count);
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
	return row_status(l, r);
}

void
ledger_counts(const struct ledger *l, struct ledger_counts *c)
{
	*c = l->c;
}
