/*
 * wake_tally — what a limit holds back and how it is said: the footprint
 * table, the tally (per footprint: count, worst, verdict, status), the
 * rate limiter, the memory of regressions, and the summary lines (see
 * wake_tally.h).  Nothing a limit holds back is forgotten: it is in the
 * limiter's tally, by footprint, until a line says it.  It uses wake.c
 * (the text, the footprint list, the JSON of a wake) and hands a wake
 * line what it says of a tally as a struct wake_held, never the tally.
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
#include "notifier/wake_tally.h"

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
	size_t n = id != NULL ? strlen(id) : 0;

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
	struct wake_held_fp	 fp;
	uint64_t		 lgen, loff;	/* its latest record's id */
};

struct wake_tally {
	uint64_t		 total;
	uint64_t		 type[WAKE_NTYPES];
	int64_t			 since;		/* of the lowest id */
	int64_t			 first_at, last_at;
	uint64_t		 fgen, foff, lgen, loff;
	int			 any;
	struct fptab		 idx;		/* fp -> ents index + 1 (n) */
	struct tally_ent	*ents;
	size_t			 nents, capents;
	const struct wake_held_fp **sorted;
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
ent_fold(struct tally_ent *e, const struct wake_held_fp *r, uint64_t count,
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

/* s (NULL: "") into dst[size], cut to fit. */
static void
field_copy(char *dst, size_t size, const char *s)
{
	snprintf(dst, size, "%s", s != NULL ? s : "");
}

int
wake_tally_add(struct wake_tally *t, const struct ledger_event *ev,
    uint64_t gen, uint64_t off, int64_t now_ms)
{
	struct wake_held_fp r;
	struct tally_ent *e;
	char key[9];
	int fresh;

	t->total++;
	t->type[wake_type_index(ev->type)]++;
	tally_span(t, ev->at_ms != LEDGER_NO_TIME ? ev->at_ms : now_ms,
	    ev->at_ms, ev->at_ms, gen, off, gen, off);
	t->dirty = 1;
	memset(&r, 0, sizeof(r));
	field_copy(r.type, sizeof(r.type), ev->type);
	field_copy(r.guess, sizeof(r.guess), ev->guess);
	field_copy(r.status, sizeof(r.status), ev->status);
	field_copy(r.unit, sizeof(r.unit), ev->unit);
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
	for (i = 0; i < WAKE_NTYPES; i++)
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
fp_impact(const struct wake_held_fp *f, struct impact *im)
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
	const struct wake_held_fp *a = *(const struct wake_held_fp *const *)pa;
	const struct wake_held_fp *b = *(const struct wake_held_fp *const *)pb;
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
wake_tally_list(struct wake_tally *t, const struct wake_held_fp *const **out)
{
	size_t i;

	if (t->dirty || t->nsorted != t->nents) {
		const struct wake_held_fp **ns;

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

void
wake_tally_held(struct wake_tally *t, struct wake_held *out)
{
	memset(out, 0, sizeof(*out));
	if (t == NULL || t->total == 0)
		return;
	out->count = t->total;
	out->since = t->since;
	out->first_gen = t->fgen;
	out->first_off = t->foff;
	out->nfps = wake_tally_list(t, &out->fps);
}

/*
 * The footprints of two tallies as one list, most severe first: a copy
 * (merged where both have a footprint) in *out, to be freed.  -ENOMEM.
 * When only one tally has any (a catch-up line at start: nothing held by
 * a limiter yet), *out is NULL and the list points into that tally, which
 * is already in this order: no copy of 5,000 entries at the daemon's peak.
 */
static int
list_both(struct wake_tally *a, struct wake_tally *b,
    struct wake_held_fp **out, const struct wake_held_fp ***sorted,
    size_t *n)
{
	const struct wake_held_fp *const *la = NULL, *const *lb = NULL;
	size_t na = a != NULL ? wake_tally_list(a, &la) : 0;
	size_t nb = b != NULL ? wake_tally_list(b, &lb) : 0;
	struct wake_held_fp *all;
	const struct wake_held_fp **ptr;
	size_t i, j, k = 0;

	*out = NULL;
	*sorted = NULL;
	*n = 0;
	if (na == 0 || nb == 0) {
		if ((ptr = calloc(na + nb + 1, sizeof(*ptr))) == NULL)
			return -ENOMEM;
		if (na + nb > 0)
			memcpy(ptr, na > 0 ? la : lb, (na + nb) * sizeof(*ptr));
		*sorted = ptr;
		*n = na + nb;
		return 0;
	}
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
	int reg = ev->status != NULL && strcmp(ev->status, "regressed") == 0;
	int was;
	char key[9];

	fp_key(key, ev->id);
	if ((s = fptab_get(&m->fps, key, NULL, NULL)) == NULL)
		return 0;
	was = s->n != 0;
	s->n = (uint64_t)reg;
	return reg && !was;
}

int
wake_memory_set(struct wake_memory *m, const char *id, int regressed)
{
	struct fpslot *s;
	char key[9];

	fp_key(key, id);
	if ((s = fptab_get(&m->fps, key, NULL, NULL)) == NULL)
		return -ENOMEM;
	s->n = regressed != 0;
	return 0;
}

/* --- summary lines ----------------------------------------------------- */

static void
sb_type_counts(struct wake_sb *sb, const uint64_t counts[WAKE_NTYPES])
{
	int i, first = 1;

	for (i = 0; i < WAKE_NTYPES; i++) {
		if (counts[i] == 0)
			continue;
		wake_sb_printf(sb, "%s%s %" PRIu64, first ? "" : ", ",
		    wake_type_names[i], counts[i]);
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
	struct wake_sb h, line;
	struct wake_held_fp *all = NULL;
	const struct wake_held_fp **l = NULL;
	size_t limit, n = 0, k, fixed;
	int date;

	(void)cfg;
	if (size == 0)
		return -EINVAL;
	limit = size - 1 < WAKE_LINE_MAX ? size - 1 : WAKE_LINE_MAX;
	buf[0] = '\0';
	if (!nonempty(catchup) && !nonempty(held))
		return 0;
	wake_sb_init(&h, head, sizeof(head));
	if (nonempty(catchup)) {
		wake_sb_printf(&h, "sloptimize catch-up: %" PRIu64 " meaningful "
		    "record%s %s (", catchup->total, catchup->total == 1 ?
		    "" : "s", why != NULL && why[0] != '\0' ? why :
		    "while stopped");
		sb_type_counts(&h, catchup->type);
		wake_sb_puts(&h, ")");
		if (catchup->first_at != LEDGER_NO_TIME) {
			date = !wake_same_local_day(catchup->first_at,
			    catchup->last_at);
			wake_sb_puts(&h, " from ");
			wake_sb_clock(&h, catchup->first_at, date);
			wake_sb_puts(&h, " to ");
			wake_sb_clock(&h, catchup->last_at, date);
		}
		if (nonempty(held)) {
			wake_sb_printf(&h, ", and +%" PRIu64 " held back since ",
			    held->total);
			wake_sb_clock(&h, held->since, 0);
		}
	} else {
		wake_sb_printf(&h, "sloptimize held back: +%" PRIu64 " more since ",
		    held->total);
		wake_sb_clock(&h, held->since, 0);
		wake_sb_puts(&h, " (");
		sb_type_counts(&h, held->type);
		wake_sb_puts(&h, ")");
	}
	if (list_both(catchup, held, &all, &l, &n) < 0)
		n = 0;
	if (n > 0)
		snprintf(cmd, sizeof(cmd), WAKE_ARROW "sloptimize issues --fp %s",
		    l[0]->fp);
	else
		snprintf(cmd, sizeof(cmd), WAKE_ARROW "sloptimize report");
	fixed = h.len + strlen(cmd);
	k = fixed < limit ? wake_list_fit((const struct wake_held_fp *const *)l,
	    n, limit - fixed) : 0;
	wake_sb_init(&line, buf, limit + 1);
	wake_sb_put(&line, head, h.len);
	wake_list_text(&line, (const struct wake_held_fp *const *)l, n, k);
	wake_sb_puts(&line, cmd);
	free(all);
	free(l);
	return (int)line.len;
}

/* The line's JSON is a wake's (wake_json) without a record of its own,
 * holding both tallies, and how many of them are catch-up records. */
cJSON *
wake_summary_json(const char *id, const char *line,
    struct wake_tally *catchup, struct wake_tally *held)
{
	struct wake_held_fp *all = NULL;
	const struct wake_held_fp **l = NULL;
	struct wake_tally span;
	struct wake_held h;
	size_t n = 0;
	uint64_t nc = 0;
	cJSON *o;

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
	if (list_both(catchup, held, &all, &l, &n) < 0)
		return NULL;
	memset(&h, 0, sizeof(h));
	h.count = nc + (nonempty(held) ? held->total : 0);
	h.since = span.since;
	h.first_gen = span.fgen;
	h.first_off = span.foff;
	h.fps = (const struct wake_held_fp *const *)l;
	h.nfps = n;
	o = wake_json(NULL, id, line, &h);
	free(all);
	free(l);
	if (o == NULL)
		return NULL;
	cJSON_AddNumberToObject(o, "catchup", (double)nc);
	if (cJSON_GetArraySize(o) != 9) {
		cJSON_Delete(o);
		return NULL;
	}
	return o;
}
