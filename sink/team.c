/*
 * team — the team's catalogue, SQL then the fold (see team.h).
 *
 * The rows query aggregates twice: per (footprint, build) first, so that
 * each build's first sighting in the row is known and the builds can be
 * listed in first-seen order, then per footprint.  Everything that picks
 * "the first" or "the last" occurrence compares the one order tuple
 * (has_at, at_ms, machine, project, generation, offset); the worst value
 * prefers the larger value, then the earlier occurrence, as the local
 * fold does (ties: the earliest).
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ledger/footprint.h"
#include "ledger/ledger.h"
#include "sink/team.h"

#define ORD	"(has_at, at_ms, machine, project, generation, offset)"
#define WKEY	"(1 - has_value, -value, has_at, at_ms, machine, project, " \
		"generation, offset)"

/* The filter of records the local fold counts (DESIGN §7 options). */
static void
counted(const struct team_query *q, char *out, size_t cap)
{
	char	from[64] = "", to[64] = "";

	if (q->from_ms != LEDGER_NO_TIME)
		snprintf(from, sizeof(from), " AND has_at = 1 AND at_ms >= %"
		    PRId64, q->from_ms);
	if (q->to_ms != LEDGER_NO_TIME)
		snprintf(to, sizeof(to), " AND has_at = 1 AND at_ms <= %" PRId64,
		    q->to_ms);
	snprintf(out, cap, "stream = 'perf'%s%s%s", q->include_automated ?
	    "" : " AND automated = 0", from, to);
}

char *
team_sql(enum team_q which, const char *table, const struct team_query *q)
{
	char	 w[256], *out;
	size_t	 cap = 4096 + strlen(table) * 2;
	int	 n = -1;

	if ((out = malloc(cap)) == NULL)
		return NULL;
	counted(q, w, sizeof(w));
	switch (which) {
	case TEAM_Q_BUILDS:
		/* Build order ignores the time filters, as in the fold, so
		 * "older than the fix's build" means one thing. */
		n = snprintf(out, cap,
		    "SELECT build, min(" ORD ") AS o, "
		    "countIf(type = 'heartbeat') AS heartbeats FROM %s FINAL "
		    "WHERE stream = 'perf' AND build != ''%s "
		    "GROUP BY build ORDER BY o FORMAT JSONEachRow", table,
		    q->include_automated ? "" : " AND automated = 0");
		break;
	case TEAM_Q_ROWS:
		/* One tuple per pick (argMax of (type, phase, ctx, verdict)
		 * rather than four argMax): each costs an order comparison
		 * per row.  The worst key carries its own `at`. */
		n = snprintf(out, cap,
		    "SELECT footprint_id AS id, argMin(k, o1) AS key, "
		    "argMax(tl, o2) AS tl, "
		    "sum(n) AS count, minIf(fa, na > 0) AS first, "
		    "maxIf(la, na > 0) AS last, sum(na) AS timed, "
		    "length(groupUniqArrayArray(ms)) AS machines, "
		    "arrayMap(x -> x.2, arraySort(arrayFilter(x -> x.2 != '', "
		    "groupArray((o1, build))))) AS builds, "
		    "min(wk) AS wkey, "
		    "maxIf(la, build = '' AND na > 0) AS last_unbuilt, "
		    "sumIf(na, build = '') AS unbuilt_timed "
		    "FROM (SELECT footprint_id, build, "
		    "min(" ORD ") AS o1, max(" ORD ") AS o2, "
		    "argMin(footprint_key, " ORD ") AS k, "
		    "argMax((type, phase, ctx, verdict), " ORD ") AS tl, "
		    "count() AS n, minIf(at_ms, has_at = 1) AS fa, "
		    "maxIf(at_ms, has_at = 1) AS la, countIf(has_at = 1) AS na, "
		    "groupUniqArray(machine) AS ms, min(" WKEY ") AS wk "
		    "FROM %s FINAL WHERE %s AND footprint_id != '' "
		    "GROUP BY footprint_id, build) "
		    "GROUP BY id FORMAT JSONEachRow", table, w);
		break;
	case TEAM_Q_FIXES:
		n = snprintf(out, cap,
		    "SELECT record FROM %s FINAL WHERE stream = 'fixes' "
		    "ORDER BY has_at, at_ms, machine, project, generation, "
		    "offset FORMAT JSONEachRow", table);
		break;
	case TEAM_Q_COUNTS:
		n = snprintf(out, cap,
		    "SELECT count() AS lines, countIf(stream = 'perf') AS "
		    "folded, countIf(%s AND footprint_id != '') AS incidents, "
		    "countIf(stream = 'fixes') AS fixes, countIf(malformed = 1) "
		    "AS malformed, uniqExact(machine) AS machines FROM %s FINAL "
		    "FORMAT JSONEachRow", w, table);
		break;
	default:
		break;
	}
	if (n < 0 || (size_t)n >= cap) {
		free(out);
		return NULL;
	}
	return out;
}

/* --- reading the answers ---------------------------------------------- */

/* Each line of a JSONEachRow body, parsed; fn returns 0 to go on (the
 * object is freed), 1 when it kept the object, < 0 to stop. */
static int
each_line(const char *body, int (*fn)(void *, cJSON *), void *arg)
{
	const char	*p = body, *nl;
	int		 rc = 0;

	while (p != NULL && *p != '\0' && rc == 0) {
		size_t	n;
		cJSON	*o;

		nl = strchr(p, '\n');
		n = nl ? (size_t)(nl - p) : strlen(p);
		if (n > 0) {
			if ((o = cJSON_ParseWithLength(p, n)) == NULL)
				return -EINVAL;
			if ((rc = fn(arg, o)) == 1)
				rc = 0;
			else
				cJSON_Delete(o);
		}
		p = nl ? nl + 1 : NULL;
	}
	return rc;
}

static double
num(const cJSON *o, const char *name)
{
	const cJSON	*v = cJSON_GetObjectItemCaseSensitive(o, name);

	return cJSON_IsNumber(v) ? v->valuedouble : 0;
}

static const char *
str(const cJSON *o, const char *name)
{
	const char	*s = cJSON_GetStringValue(
			    cJSON_GetObjectItemCaseSensitive(o, name));

	return s ? s : "";
}

/* Element i of the array member `name`, a string, or "". */
static const char *
str_at(const cJSON *o, const char *name, int i)
{
	const char	*s = cJSON_GetStringValue(cJSON_GetArrayItem(
			    cJSON_GetObjectItemCaseSensitive(o, name), i));

	return s ? s : "";
}

static double
num_at(const cJSON *o, const char *name, int i)
{
	const cJSON	*v = cJSON_GetArrayItem(
			    cJSON_GetObjectItemCaseSensitive(o, name), i);

	return cJSON_IsNumber(v) ? v->valuedouble : 0;
}

/* Fold one synthetic record built as a cJSON object. */
static int
fold_obj(struct ledger *l, cJSON *rec, uint64_t *off)
{
	char	*txt = cJSON_PrintUnformatted(rec);
	int	 rc;

	cJSON_Delete(rec);
	if (txt == NULL)
		return -ENOMEM;
	rc = ledger_fold_perf(l, txt, strlen(txt), (*off)++, NULL);
	free(txt);
	return rc < 0 ? rc : 0;
}

static void
add_iso(cJSON *o, const char *name, int64_t ms)
{
	char	iso[32];

	iso_format_ms(ms, iso);
	cJSON_AddStringToObject(o, name, iso);
}

struct tbuild {
	char		*name;
	size_t		 index;		/* in the team's build order */
};

static int
tbuild_cmp(const void *a, const void *b)
{
	return strcmp(((const struct tbuild *)a)->name,
	    ((const struct tbuild *)b)->name);
}

struct fin {
	struct ledger	*l;
	uint64_t	 off;
	struct trow	*rows;
	size_t		 nrows, caprows;
	uint64_t	 builds;
	struct tbuild	*order;		/* by name: each build's index */
	size_t		 norder, caporder;
};

struct trow {
	uint32_t	 id;
	cJSON		*agg;
	cJSON		*out;
	uint64_t	 count;
	int64_t		 last;		/* LEDGER_NO_TIME: none */
};

static int
on_build(void *arg, cJSON *o)
{
	struct fin	*f = arg;
	const cJSON	*ord = cJSON_GetObjectItemCaseSensitive(o, "o");
	cJSON		*rec = cJSON_CreateObject();

	if (rec == NULL)
		return -ENOMEM;
	if (f->norder == f->caporder) {
		size_t		 n = f->caporder ? f->caporder * 2 : 64;
		struct tbuild	*nb = realloc(f->order, n * sizeof(*nb));

		if (nb == NULL) {
			cJSON_Delete(rec);
			return -ENOMEM;
		}
		f->order = nb;
		f->caporder = n;
	}
	if ((f->order[f->norder].name = strdup(str(o, "build"))) == NULL) {
		cJSON_Delete(rec);
		return -ENOMEM;
	}
	f->order[f->norder++].index = (size_t)f->builds;
	f->builds++;
	/* it makes the build exist, in order, with the `at` of its first
	 * record; a heartbeat when the build has any, because a fix without
	 * an after window waits for a build with heartbeats (pending) */
	cJSON_AddStringToObject(rec, "type", num(o, "heartbeats") > 0 ?
	    "heartbeat" : "sloptimize-team-build");
	cJSON_AddStringToObject(rec, "build", str(o, "build"));
	if (cJSON_GetArraySize(ord) >= 2 &&
	    cJSON_GetArrayItem(ord, 0)->valuedouble == 1)
		add_iso(rec, "at", (int64_t)cJSON_GetArrayItem(ord, 1)->valuedouble);
	return fold_obj(f->l, rec, &f->off);
}

static int
on_fix(void *arg, cJSON *o)
{
	struct fin	*f = arg;
	const char	*rec = str(o, "record");
	int		 rc;

	rc = ledger_fold_fix(f->l, rec, strlen(rec), f->off++);
	return rc < 0 ? rc : 0;
}

/* One synthetic incident of row `o` in `build` (NULL: none) at `at`. */
static int
row_record(struct fin *f, const cJSON *o, const char *build, int64_t at)
{
	cJSON	*rec = cJSON_CreateObject(), *fp;

	if (rec == NULL)
		return -ENOMEM;
	cJSON_AddStringToObject(rec, "type", str_at(o, "tl", 0)[0] ?
	    str_at(o, "tl", 0) : "incident");
	if (build != NULL)
		cJSON_AddStringToObject(rec, "build", build);
	if (at != LEDGER_NO_TIME)
		add_iso(rec, "at", at);
	fp = cJSON_AddObjectToObject(rec, "footprint");
	cJSON_AddNumberToObject(fp, "v", FOOTPRINT_VERSION);
	cJSON_AddStringToObject(fp, "id", str(o, "id"));
	cJSON_AddStringToObject(fp, "key", str(o, "key"));
	return fold_obj(f->l, rec, &f->off);
}

/*
 * What status needs of a row is its latest build in the team's order and
 * its latest occurrence without a build (ledger.c's row_status): one
 * synthetic record for each, whatever the row's size.  Its other fields
 * come from the aggregates (patch()).
 */
static int
on_row(void *arg, cJSON *o)
{
	struct fin	*f = arg;
	const char	*id = str(o, "id"), *top = NULL;
	const cJSON	*b, *builds = cJSON_GetObjectItemCaseSensitive(o,
			    "builds");
	struct trow	*t;
	uint32_t	 v;
	double		 best = -1;
	int		 rc, any = 0;

	if (footprint_parse_hex(id, strlen(id), &v) != 0)
		return 0;	/* not a footprint the fold could have made */
	cJSON_ArrayForEach(b, builds) {
		struct tbuild	 key, *ix;

		if (!cJSON_IsString(b))
			continue;
		key.name = b->valuestring;
		if ((ix = bsearch(&key, f->order, f->norder, sizeof(*f->order),
		    tbuild_cmp)) != NULL && (double)ix->index > best) {
			best = (double)ix->index;
			top = b->valuestring;
		}
	}
	if (top != NULL) {
		if ((rc = row_record(f, o, top, LEDGER_NO_TIME)) != 0)
			return rc;
		any = 1;
	}
	/* an occurrence with no build regresses a fix older than it */
	if (num(o, "unbuilt_timed") > 0) {
		if ((rc = row_record(f, o, NULL,
		    (int64_t)num(o, "last_unbuilt"))) != 0)
			return rc;
		any = 1;
	}
	if (!any && (rc = row_record(f, o, NULL, LEDGER_NO_TIME)) != 0)
		return rc;
	if (f->nrows == f->caprows) {
		size_t		 n = f->caprows ? f->caprows * 2 : 256;
		struct trow	*nr = realloc(f->rows, n * sizeof(*nr));

		if (nr == NULL)
			return -ENOMEM;
		f->rows = nr;
		f->caprows = n;
	}
	t = &f->rows[f->nrows];
	memset(t, 0, sizeof(*t));
	t->id = v;
	t->agg = o;		/* kept: each_line does not free it */
	t->count = (uint64_t)num(o, "count");
	t->last = num(o, "timed") > 0 ? (int64_t)num(o, "last") :
	    LEDGER_NO_TIME;
	f->nrows++;
	return 1;
}

static int
trow_by_id(const void *a, const void *b)
{
	const struct trow	*x = a, *y = b;

	return x->id < y->id ? -1 : x->id > y->id;
}

/* The local fold's order: count, then last seen, descending; then id. */
static int
trow_order(const void *a, const void *b)
{
	const struct trow	*x = a, *y = b;

	if (x->count != y->count)
		return x->count > y->count ? -1 : 1;
	if (x->last != y->last)
		return x->last > y->last ? -1 : 1;
	return x->id < y->id ? -1 : x->id > y->id;
}

static void
put(cJSON *row, const char *name, cJSON *v)
{
	if (v == NULL)
		v = cJSON_CreateNull();
	if (!cJSON_ReplaceItemInObjectCaseSensitive(row, name, v))
		cJSON_AddItemToObject(row, name, v);
}

static cJSON *
iso_or_null(int has, int64_t ms)
{
	char	iso[32];

	if (!has)
		return cJSON_CreateNull();
	iso_format_ms(ms, iso);
	return cJSON_CreateString(iso);
}

/*
 * The aggregates over the fold's row: everything but status and fixes.
 * tl = [type, phase, ctx, verdict] of the last occurrence; wkey =
 * [1 - has_value, -value, has_at, at_ms, …] of the worst.
 */
static void
patch(cJSON *row, const cJSON *a, int64_t now_ms)
{
	const char	*type = str_at(a, "tl", 0), *vtxt = str_at(a, "tl", 3);
	const char	*phase = str_at(a, "tl", 1);
	const cJSON	*wk = cJSON_GetObjectItemCaseSensitive(a, "wkey");
	int		 timed = num(a, "timed") > 0;
	cJSON		*w;

	put(row, "key", cJSON_CreateString(str(a, "key")));
	put(row, "type", cJSON_CreateString(type));
	put(row, "phase", phase[0] ? cJSON_CreateString(phase) :
	    cJSON_CreateNull());
	put(row, "count", cJSON_CreateNumber(num(a, "count")));
	put(row, "first", iso_or_null(timed, (int64_t)num(a, "first")));
	put(row, "last", iso_or_null(timed, (int64_t)num(a, "last")));
	put(row, "lastAgoMs", timed ?
	    cJSON_CreateNumber((double)(now_ms - (int64_t)num(a, "last"))) :
	    cJSON_CreateNull());
	put(row, "builds", cJSON_Duplicate(
	    cJSON_GetObjectItemCaseSensitive(a, "builds"), 1));
	if (cJSON_GetArraySize(wk) >= 2 &&
	    cJSON_GetArrayItem(wk, 0)->valuedouble == 0) {
		w = cJSON_CreateObject();
		cJSON_AddNumberToObject(w, "value",
		    -cJSON_GetArrayItem(wk, 1)->valuedouble);
		cJSON_AddStringToObject(w, "unit", strcmp(type, "jitter") == 0 ?
		    "units" : "ms");
		cJSON_AddItemToObject(w, "at", iso_or_null(
		    num_at(a, "wkey", 2) == 1, (int64_t)num_at(a, "wkey", 3)));
		put(row, "worst", w);
	} else
		put(row, "worst", NULL);
	put(row, "verdict", vtxt[0] ? cJSON_Parse(vtxt) : NULL);
	put(row, "situation", ledger_situation_json(str_at(a, "tl", 2)));
	put(row, "machines", cJSON_CreateNumber(num(a, "machines")));
}

/*
 * The fold measures the after window of a fix recorded without one on
 * the first build after it with heartbeats; the synthetic heartbeats
 * here carry no numbers, so such a window would be empty: the team
 * catalogue shows none (each machine's daemon shows its own).  Status
 * and `pending` need only whether the build has heartbeats, which the
 * synthetic ones say.
 */
static void
unmeasured(cJSON *row)
{
	cJSON	*fx;

	cJSON_ArrayForEach(fx, cJSON_GetObjectItemCaseSensitive(row, "fixes"))
		if (strcmp(str(fx, "afterSource"), "fold") == 0)
			put(fx, "after", NULL);
}

static int
on_counts(void *arg, cJSON *o)
{
	cJSON	**out = arg;

	cJSON_Delete(*out);
	*out = cJSON_Duplicate(o, 1);
	return *out == NULL ? -ENOMEM : 0;
}

cJSON *
team_catalogue(const char *const ans[TEAM_NQ], const struct team_query *q,
    int64_t now_ms, char *err, size_t cap)
{
	struct ledger_opts	 lo = { LEDGER_NO_TIME, LEDGER_NO_TIME, 1, 0,
				    NULL };
	struct fin		 f = { 0 };
	cJSON			*cat = NULL, *issues, *row, *counts = NULL;
	cJSON			*c, *out = NULL;
	size_t			 i, n;
	int			 rc;

	if ((f.l = ledger_create(&lo)) == NULL)
		goto nomem;
	if ((rc = each_line(ans[TEAM_Q_BUILDS], on_build, &f)) == 0)
		qsort(f.order, f.norder, sizeof(*f.order), tbuild_cmp);
	if (rc != 0 ||
	    (rc = each_line(ans[TEAM_Q_FIXES], on_fix, &f)) != 0 ||
	    (rc = each_line(ans[TEAM_Q_ROWS], on_row, &f)) != 0 ||
	    (rc = each_line(ans[TEAM_Q_COUNTS], on_counts, &counts)) != 0) {
		snprintf(err, cap, rc == -ENOMEM ? "out of memory" :
		    "ClickHouse's answer is not JSONEachRow");
		goto out;
	}
	qsort(f.rows, f.nrows, sizeof(*f.rows), trow_by_id);
	if ((cat = ledger_issues_json(f.l, NULL, now_ms)) == NULL)
		goto nomem;
	issues = cJSON_GetObjectItemCaseSensitive(cat, "issues");
	cJSON_ArrayForEach(row, issues) {
		struct trow	 key, *t;
		const char	*id = str(row, "id");

		if (footprint_parse_hex(id, strlen(id), &key.id) != 0 ||
		    (t = bsearch(&key, f.rows, f.nrows, sizeof(*f.rows),
		    trow_by_id)) == NULL)
			continue;
		patch(row, t->agg, now_ms);
		unmeasured(row);
		t->out = row;
	}
	/* filter, order and cut like ledger_issues_json */
	qsort(f.rows, f.nrows, sizeof(*f.rows), trow_order);
	if ((out = cJSON_CreateObject()) == NULL)
		goto nomem;
	cJSON_AddNumberToObject(out, "v", 1);
	cJSON_AddItemToObject(out, "generatedAt", iso_or_null(1, now_ms));
	c = cJSON_AddObjectToObject(out, "counts");
	cJSON_AddNumberToObject(c, "lines", num(counts, "lines"));
	cJSON_AddNumberToObject(c, "folded", num(counts, "folded"));
	cJSON_AddNumberToObject(c, "incidents", num(counts, "incidents"));
	cJSON_AddNumberToObject(c, "fixes", num(counts, "fixes"));
	cJSON_AddNumberToObject(c, "skipped", 0);
	cJSON_AddNumberToObject(c, "malformedFootprints",
	    num(counts, "malformed"));
	cJSON_AddNumberToObject(c, "rows", (double)f.nrows);
	cJSON_AddNumberToObject(c, "builds", (double)f.builds);
	issues = cJSON_AddArrayToObject(out, "issues");
	for (i = n = 0; i < f.nrows; i++) {
		cJSON	*r = f.rows[i].out;

		if (r == NULL)
			continue;
		if (q->type != NULL && strcmp(q->type, str(r, "type")) != 0)
			continue;
		if (q->status != NULL && strcmp(q->status, str(r, "status")))
			continue;
		if (q->limit && n >= q->limit)
			break;
		/* moved, not copied, out of the fold's catalogue */
		cJSON_DetachItemViaPointer(cJSON_GetObjectItemCaseSensitive(cat,
		    "issues"), r);
		cJSON_AddItemToArray(issues, r);
		n++;
	}
	cJSON_AddItemToObject(out, "skipped", cJSON_CreateArray());
	goto out;
nomem:
	snprintf(err, cap, "out of memory");
	cJSON_Delete(out);
	out = NULL;
out:
	for (i = 0; i < f.nrows; i++)
		cJSON_Delete(f.rows[i].agg);
	free(f.rows);
	for (i = 0; i < f.norder; i++)
		free(f.order[i].name);
	free(f.order);
	cJSON_Delete(cat);
	cJSON_Delete(counts);
	ledger_destroy(f.l);
	return out;
}
