/*
 * routes — the table and its handlers (see routes.h and docs/api.md).
 *
 * Handlers answer at once what is small (status, settings) or hand their
 * job to the thread pool (folds, fix appends, settings writes, static
 * files).  What is a function of the ledger files — /ledger, /issues,
 * /issues/<id>, /history — is built on the pool once per change and kept
 * (daemon/cache.h): the loop never renders a catalogue.  Pool work reads
 * only its job: never the API, the daemon or the live catalogue.
 */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libwebsockets.h>

#include "daemon/log.h"
#include "daemon/routes.h"
#include "daemon/snapshot.h"
#include "daemon/static.h"
#include "daemon/views.h"
#include "ledger/footprint.h"
#include "ledger/ledger.h"
#include "project/append.h"
#include "project/project.h"
#include "project/statedir.h"

/* --- the parameters each row takes -------------------------------------- */

static unsigned
bad_parameter(struct guard_refusal *why, const char *message)
{
	why->status = 400;
	why->code = "bad_parameter";
	why->message = message;
	why->fatal = 0;
	return 400;
}

static unsigned
status_args(const char *param, const struct http_args *g,
    struct route_args *out, struct guard_refusal *why)
{
	(void)param, (void)out;
	return g->n ? bad_parameter(why, "/status takes no parameters") : 0;
}

static unsigned
ledger_args(const char *param, const struct http_args *g,
    struct route_args *out, struct guard_refusal *why)
{
	static const char *const known[] = { "bytes", NULL };

	(void)param;
	out->bytes = ROUTE_LEDGER_BYTES;
	if (http_args_unknown(g, known) != NULL)
		return bad_parameter(why, "/ledger takes bytes=N");
	if (http_arg(g, "bytes") && http_arg_uint(http_arg(g, "bytes"), 1,
	    ROUTE_LEDGER_MAX, &out->bytes))
		return bad_parameter(why, "bytes is a whole number from 1 to "
		    "8388608");
	return 0;
}

/*
 * POST /records: a batch's delivery identity (docs/api.md) — page, seq and
 * first come together or not at all.  Without them the batch is appended
 * as it comes, as any writer's.
 */
static unsigned
records_args(const char *param, const struct http_args *g,
    struct route_args *out, struct guard_refusal *why)
{
	static const char *const known[] = { "page", "seq", "first", NULL };
	const char	*page = http_arg(g, "page"), *seq = http_arg(g, "seq");
	const char	*first = http_arg(g, "first");

	(void)param;
	if (http_args_unknown(g, known) != NULL)
		return bad_parameter(why, "/records takes page, seq and first");
	if (page == NULL && seq == NULL && first == NULL)
		return 0;
	if (page == NULL || seq == NULL || first == NULL)
		return bad_parameter(why, "page, seq and first come together");
	if (!order_id_valid(page))
		return bad_parameter(why, "page is 1 to 32 of A-Z, a-z, 0-9, "
		    "'-' and '_'");
	if (http_arg_uint(seq, 1, ORDER_SEQ_MAX, &out->seq))
		return bad_parameter(why, "seq is a whole number from 1 to "
		    "2^53-1");
	if (http_arg_uint(first, 1, out->seq, &out->first))
		return bad_parameter(why, "first is a whole number from 1 to "
		    "seq");
	strcpy(out->page, page);
	return 0;
}

/* from, to, include-automated: shared by /issues and /issues/<id> */
static unsigned
fold_filters(const struct http_args *g, struct route_args *out,
    struct guard_refusal *why)
{
	const char	*v;

	if ((v = http_arg(g, "from")) != NULL &&
	    iso_parse_ms(v, strlen(v), &out->from_ms))
		return bad_parameter(why, "from is an ISO-8601 time");
	if ((v = http_arg(g, "to")) != NULL &&
	    iso_parse_ms(v, strlen(v), &out->to_ms))
		return bad_parameter(why, "to is an ISO-8601 time");
	if ((v = http_arg(g, "include-automated")) != NULL &&
	    http_arg_bool(v, &out->automated))
		return bad_parameter(why, "include-automated is true or false");
	return 0;
}

static unsigned
issues_args(const char *param, const struct http_args *g,
    struct route_args *out, struct guard_refusal *why)
{
	static const char *const known[] = { "type", "status", "from", "to",
		"include-automated", "limit", "scope", NULL };
	const char	*v;
	uint64_t	 limit = 0;
	unsigned	 rc;

	(void)param;
	if (http_args_unknown(g, known) != NULL)
		return bad_parameter(why, "/issues takes type, status, from, "
		    "to, include-automated, limit and scope");
	if ((v = http_arg(g, "scope")) != NULL) {
		if (strcmp(v, "local") != 0 && strcmp(v, "team") != 0)
			return bad_parameter(why, "scope is local (this "
			    "ledger) or team (the sink's)");
		out->team = strcmp(v, "team") == 0;
	}
	if ((rc = fold_filters(g, out, why)) != 0)
		return rc;
	if ((v = http_arg(g, "type")) != NULL) {
		if (*v == '\0' || strlen(v) >= sizeof(out->type))
			return bad_parameter(why, "type is a record type "
			    "(hitch, usermark, …)");
		strcpy(out->type, v);
	}
	if ((v = http_arg(g, "status")) != NULL) {
		if (strcmp(v, "open") && strcmp(v, "pending") &&
		    strcmp(v, "fixed") && strcmp(v, "regressed"))
			return bad_parameter(why, "status is open, pending, "
			    "fixed or regressed");
		strcpy(out->status, v);
	}
	if ((v = http_arg(g, "limit")) != NULL) {
		if (http_arg_uint(v, 0, 1000000, &limit))
			return bad_parameter(why, "limit is a whole number "
			    "(0: all)");
		out->limit = (size_t)limit;
	}
	return 0;
}

static unsigned
issue_args(const char *param, const struct http_args *g,
    struct route_args *out, struct guard_refusal *why)
{
	static const char *const known[] = { "from", "to",
		"include-automated", NULL };
	size_t		 i;
	unsigned	 rc;

	if (http_args_unknown(g, known) != NULL)
		return bad_parameter(why, "/issues/<id> takes from, to and "
		    "include-automated");
	if ((rc = fold_filters(g, out, why)) != 0)
		return rc;
	if (strlen(param) != 8 ||
	    footprint_parse_hex(param, 8, &(uint32_t){ 0 }) != 0) {
		why->status = 404;
		why->code = "not_found";
		why->message = "a footprint id is 8 hex digits";
		why->fatal = 0;
		return 404;
	}
	for (i = 0; i < 8; i++)
		out->id[i] = (char)tolower((unsigned char)param[i]);
	out->id[8] = '\0';
	return 0;
}

static unsigned
history_args(const char *param, const struct http_args *g,
    struct route_args *out, struct guard_refusal *why)
{
	static const char *const known[] = { "buckets", "include-automated",
		NULL };
	uint64_t	 buckets = 24;
	const char	*v;

	(void)param;
	if (http_args_unknown(g, known) != NULL)
		return bad_parameter(why, "/history takes buckets and "
		    "include-automated");
	if ((v = http_arg(g, "buckets")) != NULL &&
	    http_arg_uint(v, 1, 1000, &buckets))
		return bad_parameter(why, "buckets is a whole number from 1 "
		    "to 1000");
	if ((v = http_arg(g, "include-automated")) != NULL &&
	    http_arg_bool(v, &out->automated))
		return bad_parameter(why, "include-automated is true or false");
	out->buckets = (int)buckets;
	return 0;
}

/* s with '%', '&' and '=' as %25, %26, %3D, appended at key + *len. */
static void
key_put(char *key, size_t cap, int *len, const char *s)
{
	for (; *s && *len >= 0 && (size_t)*len < cap; s++)
		*len += *s == '%' || *s == '&' || *s == '=' ?
		    snprintf(key + *len, cap - (size_t)*len, "%%%02X",
		    (unsigned char)*s) :
		    snprintf(key + *len, cap - (size_t)*len, "%c", *s);
}

/* The kept answer's key: path?name=value&… in name order. */
static int
key_make(const char *path, const struct http_args *g, char *key, size_t cap)
{
	size_t	i, k, n, order[HTTP_MAX_ARGS];
	int	len;

	for (i = 0; i < g->n; i++)
		order[i] = i;
	for (i = 1; i < g->n; i++)
		for (k = i; k > 0 && strcmp(g->name[order[k - 1]],
		    g->name[order[k]]) > 0; k--) {
			size_t	t = order[k];

			order[k] = order[k - 1];
			order[k - 1] = t;
		}
	len = snprintf(key, cap, "%s", path);
	for (i = 0; i < g->n && len >= 0 && (size_t)len < cap; i++) {
		n = order[i];
		len += snprintf(key + len, cap - (size_t)len, "%c",
		    i ? '&' : '?');
		key_put(key, cap, &len, g->name[n]);
		if (len >= 0 && (size_t)len < cap)
			len += snprintf(key + len, cap - (size_t)len, "=");
		key_put(key, cap, &len, g->value[n]);
	}
	return len < 0 || (size_t)len >= cap ? -1 : 0;
}

static job_fn	fold_work;

unsigned
routes_args(const struct route *rt, const char *path, const char *param,
    const struct http_args *g, struct route_args *out,
    struct guard_refusal *why)
{
	unsigned	rc;

	memset(out, 0, sizeof(*out));
	out->from_ms = out->to_ms = LEDGER_NO_TIME;
	if (rt->args != NULL && (rc = rt->args(param, g, out, why)) != 0)
		return rc;
	/* the folds' answers are kept per change under this key */
	if (rt->pool == fold_work &&
	    key_make(path, g, out->key, sizeof(out->key)) != 0)
		return bad_parameter(why, "the parameters are too long");
	return 0;
}

/* --- /status, /events --------------------------------------------------- */

static enum route_result
status_get(struct route_ctx *c, struct http_request *r,
    const struct route_args *ra, struct api_job *j)
{
	(void)ra, (void)j;
	http_answer_json(r, 200, c->env->status(c->env->arg));
	return ROUTE_ANSWERED;
}

static enum route_result
events_get(struct route_ctx *c, struct http_request *r,
    const struct route_args *ra, struct api_job *j)
{
	(void)c, (void)ra, (void)j;
	http_answer_error(r, 426, "upgrade_required",
	    "this is the WebSocket events socket");
	return ROUTE_ANSWERED;
}

/* --- /relay: commands to the game's open tab (daemon/relay.h) -------------- */

static int
relay_up(struct route_ctx *c, struct http_request *r)
{
	if (c->relay != NULL)
		return 1;
	http_answer_error(r, 503, "busy", "the events socket is not up yet");
	return 0;
}

static enum route_result
relay_pages(struct route_ctx *c, struct http_request *r,
    const struct route_args *ra, struct api_job *j)
{
	(void)ra, (void)j;
	if (relay_up(c, r))
		http_answer_json(r, 200, relay_pages_json(c->relay,
		    uv_now(c->env->loop)));
	return ROUTE_ANSWERED;
}

static enum route_result
relay_command(struct route_ctx *c, struct http_request *r,
    const struct route_args *ra, struct api_job *j)
{
	const char	*code = "invalid";
	char		 why[512];
	cJSON		*out;
	unsigned	 st;

	(void)ra, (void)j;
	if (!relay_up(c, r))
		return ROUTE_ANSWERED;
	st = relay_post(c->relay, r->body, r->body_len, uv_now(c->env->loop),
	    &out, &code, why, sizeof(why));
	if (out != NULL)
		http_answer_json(r, st, out);
	else
		http_answer_error(r, st, code, why);
	return ROUTE_ANSWERED;
}

static enum route_result
relay_job(struct route_ctx *c, struct http_request *r,
    const struct route_args *ra, struct api_job *j)
{
	cJSON	*out;

	(void)ra, (void)j;
	if (!relay_up(c, r))
		return ROUTE_ANSWERED;
	if (relay_get(c->relay, r->param, uv_now(c->env->loop), &out) == 200)
		http_answer_json(r, 200, out);
	else
		http_answer_error(r, 404, "not_found", "no such command (a "
		    "finished one is handed over once, and kept a minute)");
	return ROUTE_ANSWERED;
}

/* --- files served as they are on disk ------------------------------------ */

/* On the pool: j->path2/j->path read by the static reader (a regular
 * file under the directory, bounded, a strong ETag), the job's answer
 * on success.  0 or its -errno, which the route turns into its words. */
static int
file_job(struct api_job *j)
{
	int	rc = static_read(j->path2, j->path, LWS_PRE, &j->out, j->etag);

	if (rc == 0) {
		j->status = 200;
		j->ctype = static_type(j->path);
	}
	return rc;
}

/* Not there, for the static reader: missing, a directory, outside. */
static int
file_missing(int rc)
{
	return rc == -ENOENT || rc == -ENOTDIR || rc == -ELOOP;
}

/* --- /census, /attribution: what `sloptimize attribute` last wrote -------- */

/*
 * The project's .sloptimize/census.json or attribution.json as the CLI
 * wrote it (atomically: a reader sees the old file or the new), for the
 * panel's Issues tab, read on the pool (file_job).
 */
static enum route_result
attr_file_get(struct route_ctx *c, struct http_request *r,
    const struct route_args *ra, struct api_job *j)
{
	const char	*name = strcmp(r->path, ROUTE_PREFIX "/census") == 0 ?
			    "census.json" : "attribution.json";

	(void)c, (void)ra;
	snprintf(j->path, sizeof(j->path), "%s", name);
	snprintf(j->path2, sizeof(j->path2), "%s/.sloptimize", j->project);
	return ROUTE_POOL;
}

static void
attr_file_work(struct api_job *j)
{
	int	rc = file_job(j);

	if (file_missing(rc))
		job_fail(j, 404, "not_found", "no %s yet: `sloptimize attribute "
		    "%s--scene S` writes it", j->path, strcmp(j->path,
		    "census.json") == 0 ? "--static " : "");
	else if (rc == -EFBIG)
		job_fail(j, 500, "internal", "%s is larger than the daemon "
		    "serves", j->path);
	else if (rc != 0)
		job_fail(j, 500, "internal", "cannot read %s: %s", j->path,
		    strerror(-rc));
}

/* --- /ledger ------------------------------------------------------------ */

static enum route_result
ledger_get(struct route_ctx *c, struct http_request *r,
    const struct route_args *ra, struct api_job *j)
{
	(void)j;
	return cache_ledger(c->cache, r, ra->bytes) ? ROUTE_WAITS :
	    ROUTE_ANSWERED;
}

/* --- the folds' answers -------------------------------------------------- */

/*
 * /issues, /issues/<id> and /history are folds of the files on the thread
 * pool, one at a time (a heavy job), and their answers are kept per
 * change (daemon/cache.h) under the key routes_args made: asking again
 * before the ledger changes costs a memory copy.
 */
static enum route_result
cached_fold(struct route_ctx *c, struct http_request *r,
    const struct route_args *ra, struct api_job *j)
{
	j->work = fold_work;
	j->heavy = 1;
	return cache_get(c->cache, r, ra->key, j) ? ROUTE_WAITS :
	    ROUTE_ANSWERED;
}

/* --- /issues, /history -------------------------------------------------- */

/*
 * The catalogue and the timeline are written into their blob a row at a
 * time, as `sloptimize issues --json` writes them to stdout: a tree of
 * 200,000 rows, its printed text and the blob's copy of it took the
 * daemon from 174 MB to about 1 GB for one /issues, where the CLI needs
 * 101 MB.  The streamed bytes are cJSON_Print's, made compact on the way
 * in (the answers' bytes, and so their ETags, are what they were).  One
 * issue is small and stays a tree.  A fold nobody waits for any more
 * stops between reads and between rows (daemon/jobs.h).
 */
static void
fold_work(struct api_job *j)
{
	struct project_fold_info info;
	struct http_blob_writer	 w;
	struct ledger		*l = NULL;
	cJSON			*o;
	int			 rc;

	rc = project_fold_stoppable(j->project, &j->opts, &j->gone, &l, &info);
	if (rc == -ECANCELED) {
		job_fail(j, 503, "busy", "nobody waits for this answer");
		return;
	}
	if (rc == -ENOENT)
		l = ledger_create(&j->opts);	/* no ledger yet: empty */
	else if (rc == -PROJECT_ENOTREG) {
		job_fail(j, 409, "not_regular_file", "cannot fold %s: %s",
		    info.failed ? info.failed : info.perf,
		    project_strerror(rc));
		return;
	} else if (rc != 0) {
		job_fail(j, 500, "internal", "cannot fold the ledger: %s",
		    strerror(-rc));
		return;
	}
	if (l == NULL) {
		job_fail(j, 500, "internal", "out of memory");
		return;
	}
	if (j->one) {
		if ((o = ledger_issue_json(l, j->id, j->now_ms)) == NULL) {
			ledger_destroy(l);
			job_fail(j, 404, "not_found", "no issue has the "
			    "footprint %s", j->id);
			return;
		}
		/* the tree may refer to the ledger's memory: print, then
		 * destroy */
		j->out = http_blob_json(o);
		rc = j->out == NULL ? -ENOMEM : 0;
	} else {
		http_blob_writer_init(&w, 1, &j->gone);
		rc = j->history ? ledger_history_write(l, j->buckets,
		    j->now_ms, NULL, http_blob_put, &w) :
		    ledger_issues_write(l, &j->q, j->now_ms, NULL,
		    http_blob_put, &w);
		if (rc == 0 && (j->out = http_blob_writer_finish(&w, 1)) ==
		    NULL)
			rc = -ENOMEM;
		http_blob_writer_free(&w);
	}
	ledger_destroy(l);
	if (rc == -ECANCELED) {
		job_fail(j, 503, "busy", "nobody waits for this answer");
		return;
	}
	if (rc != 0) {
		job_fail(j, 500, "internal", "cannot render the answer: %s",
		    strerror(-rc));
		return;
	}
	j->status = 200;
	j->ctype = "application/json";
	snprintf(j->etag, sizeof(j->etag), "\"f%016llx%llx\"",
	    (unsigned long long)fnv1a64(j->out->data + LWS_PRE, j->out->len),
	    (unsigned long long)j->out->len);
}

/*
 * ?scope=team: the team catalogue from the sink's ClickHouse
 * (docs/team.md), computed without blocking the loop or a pool thread on
 * the network (sink_team); the request waits, and one that hangs up first
 * is let go of.
 */
struct team_wait {
	struct http_request	*r;
};

static void
team_cancel(struct http_request *r, void *arg)
{
	struct team_wait	*w = arg;

	(void)r;
	w->r = NULL;
}

static void
team_done(void *arg, cJSON *cat, const char *err)
{
	struct team_wait	*w = arg;
	struct http_request	*r = w->r;

	free(w);
	if (r == NULL) {
		cJSON_Delete(cat);
		return;
	}
	r->cancel = NULL;
	r->cancel_arg = NULL;
	if (cat != NULL)
		http_answer_json(r, 200, cat);
	else
		http_answer_error(r, 502, "sink_unavailable", err);
}

static enum route_result
issues_team(struct route_ctx *c, struct http_request *r,
    const struct api_job *j)
{
	struct team_query	 q = { j->q.type, j->q.status, j->q.limit,
				    j->opts.include_automated, j->opts.from_ms,
				    j->opts.to_ms };
	struct team_wait	*w;
	int			 rc;

	if (c->env->team == NULL) {
		http_answer_error(r, 404, "no_sink", "this daemon has no sink: "
		    "start it with --sink URL (docs/team.md)");
		return ROUTE_ANSWERED;
	}
	if ((w = calloc(1, sizeof(*w))) == NULL) {
		http_answer_error(r, 500, "internal", "out of memory");
		return ROUTE_ANSWERED;
	}
	w->r = r;
	rc = c->env->team(c->env->arg, &q, j->now_ms, team_done, w);
	if (rc == -ENOENT) {
		free(w);
		http_answer_error(r, 404, "no_sink", "this daemon has no sink: "
		    "start it with --sink URL (docs/team.md)");
		return ROUTE_ANSWERED;
	}
	if (rc != 0) {
		free(w);
		http_answer_error(r, 500, "internal", "cannot start the team "
		    "query");
		return ROUTE_ANSWERED;
	}
	r->cancel = team_cancel;
	r->cancel_arg = w;
	return ROUTE_WAITS;
}

static enum route_result
issues_get(struct route_ctx *c, struct http_request *r,
    const struct route_args *ra, struct api_job *j)
{
	j->opts.from_ms = ra->from_ms;
	j->opts.to_ms = ra->to_ms;
	j->opts.include_automated = ra->automated;
	if (ra->type[0]) {
		snprintf(j->type, sizeof(j->type), "%s", ra->type);
		j->q.type = j->type;
	}
	if (ra->status[0]) {
		snprintf(j->status_f, sizeof(j->status_f), "%s", ra->status);
		j->q.status = j->status_f;
	}
	j->q.limit = ra->limit;
	if (ra->team)
		return issues_team(c, r, j);
	/*
	 * Even unfiltered, a fresh fold on the pool rather than the live
	 * catalogue on the loop: rendering 50,000 rows takes the loop
	 * hundreds of milliseconds, and the fold of the same bytes has the
	 * same counts (DESIGN §8.2).
	 */
	return cached_fold(c, r, ra, j);
}

static enum route_result
issue_get(struct route_ctx *c, struct http_request *r,
    const struct route_args *ra, struct api_job *j)
{
	j->opts.from_ms = ra->from_ms;
	j->opts.to_ms = ra->to_ms;
	j->opts.include_automated = ra->automated;
	memcpy(j->id, ra->id, sizeof(j->id));
	j->one = 1;
	j->opts.occurrences_of = j->id;
	return cached_fold(c, r, ra, j);
}

static enum route_result
history_get(struct route_ctx *c, struct http_request *r,
    const struct route_args *ra, struct api_job *j)
{
	j->opts.from_ms = j->opts.to_ms = LEDGER_NO_TIME;
	j->opts.include_automated = ra->automated;
	j->opts.want_timeline = 1;
	j->history = 1;
	j->buckets = ra->buckets;
	return cached_fold(c, r, ra, j);
}

/* --- request bodies ------------------------------------------------------- */

static unsigned
body_refuse(struct route_body *b, unsigned status, const char *code,
    const char *fmt, ...) __attribute__((format(printf, 4, 5)));

static unsigned
body_refuse(struct route_body *b, unsigned status, const char *code,
    const char *fmt, ...)
{
	va_list	ap;

	cJSON_Delete(b->rec);
	b->rec = NULL;
	free(b->line);
	b->line = NULL;
	b->len = 0;
	b->loop[0] = '\0';
	b->status = status;
	b->code = code;
	va_start(ap, fmt);
	vsnprintf(b->why, sizeof(b->why), fmt, ap);
	va_end(ap);
	return status;
}

void
routes_body_free(struct route_body *b)
{
	cJSON_Delete(b->rec);
	free(b->line);
	b->rec = NULL;
	b->line = NULL;
}

/* --- POST /fixes -------------------------------------------------------- */

/* A writer's failure as an answer (for a request that is still there). */
static void
write_fail(struct api_job *j, int rc, const char *invalid, const char *why)
{
	if (rc == -EINVAL)
		job_fail(j, 400, invalid, "%s", why);
	else if (rc == -ETIMEDOUT)
		job_fail(j, 503, "busy", "%s", why);
	else if (rc == -PROJECT_ENOTREG)
		job_fail(j, 409, "not_regular_file", "%s", why);
	else if (rc == -ENOSPC || rc == -EDQUOT || rc == -EFBIG)
		job_fail(j, 507, "no_space", "%s", why);
	else	/* -ECANCELED among them: nobody is there to hear it */
		job_fail(j, 500, "internal", "%s", why);
}

/*
 * The body is checked twice: cJSON must read it (else invalid_json) as an
 * object (else invalid_fix), and the fold's strict scanner must accept it
 * as written (UTF-8, no control characters, nothing after the object, no
 * \u0000), or cJSON's leniency would let through a fix the fold skips.
 */
unsigned
routes_fix_body(const char *body, size_t len, struct route_body *out)
{
	char	why[PROJECT_WHY_MAX];
	int	rc;

	memset(out, 0, sizeof(*out));
	if ((out->rec = cJSON_ParseWithLength(body ? body : "", len)) == NULL)
		return body_refuse(out, 400, "invalid_json", "the body is not "
		    "JSON");
	if (cJSON_IsObject(out->rec) &&
	    project_json_check(body, len, why, sizeof(why)) != 0)
		return body_refuse(out, 400, "invalid_json", "the body is %s",
		    why);
	if ((rc = project_fix_line(out->rec, &out->force, &out->line,
	    &out->len, why, sizeof(why))) != 0)
		return body_refuse(out, rc == -EINVAL ? 400 : 500,
		    rc == -EINVAL ? "invalid_fix" : "internal", "%s", why);
	return 0;
}

static void
fix_work(struct api_job *j)
{
	struct project_write	 w = { &j->gone, ROUTE_LOCK_WAIT_MS };
	struct route_body	 b;
	char			 why[PROJECT_WHY_MAX];
	int			 rc;

	if (routes_fix_body(j->body, j->body_len, &b) != 0) {
		job_fail(j, b.status, b.code, "%s", b.why);
		routes_body_free(&b);
		return;
	}
	/* an unknown footprint needs the files: here, not in the pure half */
	if ((!b.force && (rc = project_fix_known(j->project, b.rec, why,
	    sizeof(why))) != 0) || (rc = project_fix_write(j->project, b.line,
	    b.len, &w, why, sizeof(why))) != 0) {
		write_fail(j, rc, "invalid_fix", why);
		routes_body_free(&b);
		return;
	}
	j->out = http_blob_json(b.rec);	/* consumes the record */
	b.rec = NULL;
	routes_body_free(&b);
	if (j->out == NULL) {
		job_fail(j, 500, "internal", "the fix was appended, but the "
		    "answer ran out of memory");
		return;
	}
	j->status = 201;
	j->ctype = "application/json";
}

/* --- POST /snapshots: a hitch's view snapshot (daemon/views.h) ---------- */

static void
view_work(struct api_job *j)
{
	char		 ref[VIEWS_REF_MAX], why[PROJECT_WHY_MAX];
	unsigned	 pruned;
	cJSON		*o;
	int		 rc;

	if (views_check(j->body ? j->body : "", j->body_len, ref, why,
	    sizeof(why)) != 0) {
		job_fail(j, 400, "invalid_snapshot", "%s", why);
		return;
	}
	if ((rc = views_write(j->project, ref, j->body, j->body_len, &pruned,
	    why, sizeof(why))) != 0) {
		write_fail(j, rc, "invalid_snapshot", why);
		return;
	}
	if ((o = cJSON_CreateObject()) != NULL &&
	    (cJSON_AddStringToObject(o, "ref", ref) == NULL ||
	    cJSON_AddNumberToObject(o, "pruned", pruned) == NULL)) {
		cJSON_Delete(o);
		o = NULL;
	}
	if (o == NULL || (j->out = http_blob_json(o)) == NULL) {
		job_fail(j, 500, "internal", "the snapshot was written, but "
		    "the answer ran out of memory");
		return;
	}
	j->status = 201;
	j->ctype = "application/json";
}

/* --- POST /records ----------------------------------------------------- */

/* A held batch's client hung up: the table lets it go (its successors
 * then wait for their own deadline, or a retry of it). */
static void
records_held_cancel(struct http_request *r, void *arg)
{
	struct api_job		*j = arg;
	struct route_ctx	*c = j->owner;

	(void)r;
	if (order_forget(c->order, j))
		job_discard(j);
}

/*
 * A batch with its page's delivery identity goes through the order table
 * (daemon/order.h): appended now, held for its predecessor, or answered
 * as a duplicate; one without is appended as it comes.
 */
static enum route_result
records_loop(struct route_ctx *c, struct http_request *r,
    const struct route_args *ra, struct api_job *j)
{
	cJSON	*o;

	if (ra->page[0] == '\0' || c->order == NULL)
		return ROUTE_POOL;
	snprintf(j->page, sizeof(j->page), "%s", ra->page);
	j->page_seq = ra->seq;
	/* held until its turn; job_start replaces the hook when it goes */
	r->cancel = records_held_cancel;
	r->cancel_arg = j;
	/* the writer: whose pages a flood of page ids may push out */
	switch (order_offer(c->order, ra->page, r->origin_ok ? r->origin : "",
	    ra->seq, ra->first, j, j->body_len)) {
	case ORDER_TAKEN:
		return ROUTE_KEPT;
	case ORDER_UNTRACKED:
		r->cancel = NULL;
		r->cancel_arg = NULL;
		j->page_seq = 0;
		return ROUTE_POOL;
	case ORDER_DUPLICATE:
		r->cancel = NULL;
		r->cancel_arg = NULL;
		o = cJSON_CreateObject();
		cJSON_AddNumberToObject(o, "v", 1);
		cJSON_AddNumberToObject(o, "records", 0);
		cJSON_AddNumberToObject(o, "accepted", 0);
		cJSON_AddNumberToObject(o, "refused", 0);
		cJSON_AddArrayToObject(o, "refusals");
		cJSON_AddNumberToObject(o, "bytes", 0);
		cJSON_AddTrueToObject(o, "duplicate");
		http_answer_json(r, 200, o);
		return ROUTE_ANSWERED;
	case ORDER_UNDER_WAY:
		r->cancel = NULL;
		r->cancel_arg = NULL;
		http_answer_error(r, 503, "busy", "this batch is already being "
		    "appended; retry");
		return ROUTE_ANSWERED;
	case ORDER_FULL:
	default:
		r->cancel = NULL;
		r->cancel_arg = NULL;
		http_answer_error(r, 503, "busy", "too many batches wait for "
		    "their predecessors; retry");
		return ROUTE_ANSWERED;
	}
}

/* The answer, then the batch's page may append its next one. */
static void
records_done(struct api_job *j)
{
	struct route_ctx	*c = j->owner;

	job_answer(j);
	if (j->page_seq != 0)
		order_done(c->order, j->page, j->page_seq, j->code == NULL);
}

/* The recorder's ingest: the batch goes through the same writer and the
 * same validator as every other record (project/append.h); the daemon
 * then folds it through its tailer, like any other writer's lines. */
static void
records_work(struct api_job *j)
{
	struct project_write	 w = { &j->gone, ROUTE_LOCK_WAIT_MS };
	struct project_batch	*b;
	char			 why[PROJECT_WHY_MAX];
	cJSON			*o, *list, *it;
	size_t			 i;
	int			 rc;

	if ((b = malloc(sizeof(*b))) == NULL) {
		job_fail(j, 500, "internal", "out of memory");
		return;
	}
	if ((rc = project_records_append(j->project, j->body ? j->body : "",
	    j->body_len, &w, b, why, sizeof(why))) != 0) {
		write_fail(j, rc, "invalid_json", why);
		free(b);
		return;
	}
	o = cJSON_CreateObject();
	cJSON_AddNumberToObject(o, "v", 1);
	cJSON_AddNumberToObject(o, "records", (double)b->records);
	cJSON_AddNumberToObject(o, "accepted", (double)b->accepted);
	cJSON_AddNumberToObject(o, "refused", (double)b->refused);
	list = cJSON_AddArrayToObject(o, "refusals");
	for (i = 0; i < b->nlisted; i++) {
		it = cJSON_CreateObject();
		cJSON_AddNumberToObject(it, "index", (double)b->list[i].index);
		cJSON_AddStringToObject(it, "reason", b->list[i].why);
		cJSON_AddItemToArray(list, it);
	}
	cJSON_AddNumberToObject(o, "bytes", (double)b->bytes);
	free(b);
	if ((j->out = http_blob_json(o)) == NULL) {
		job_fail(j, 500, "internal", "the records were appended, but "
		    "the answer ran out of memory");
		return;
	}
	j->status = 200;
	j->ctype = "application/json";
}

/* --- /settings ---------------------------------------------------------- */

static cJSON *
settings_json(const struct route_ctx *c)
{
	cJSON		*o = cJSON_CreateObject();
	const char	*src, *lv = config_loop_level(c->env->cfg,
			    c->settings->loop, &src);

	cJSON_AddNumberToObject(o, "v", 1);
	cJSON_AddStringToObject(o, "loop", lv);
	cJSON_AddStringToObject(o, "source", src);
	return o;
}

static enum route_result
settings_get(struct route_ctx *c, struct http_request *r,
    const struct route_args *ra, struct api_job *j)
{
	(void)ra, (void)j;
	http_answer_json(r, 200, settings_json(c));
	return ROUTE_ANSWERED;
}

unsigned
routes_settings_body(const char *body, size_t len, struct route_body *out)
{
	const cJSON	*it;
	const char	*lv = NULL;
	char		 why[PROJECT_WHY_MAX];

	memset(out, 0, sizeof(*out));
	if ((out->rec = cJSON_ParseWithLength(body ? body : "", len)) == NULL)
		return body_refuse(out, 400, "invalid_json", "the body is not "
		    "JSON");
	if (!cJSON_IsObject(out->rec))
		return body_refuse(out, 400, "invalid_settings", "settings are "
		    "a JSON object");
	/* cJSON skips NULs and controls as whitespace and ignores what
	 * follows the object: the fixes' strict check, here too
	 * (tests/fuzz/regress/fuzz_body/) */
	if (project_json_check(body, len, why, sizeof(why)) != 0)
		return body_refuse(out, 400, "invalid_json", "the body is %s",
		    why);
	cJSON_ArrayForEach(it, out->rec) {
		if (strcmp(it->string, "loop") == 0) {
			if (!cJSON_IsString(it) || lv != NULL ||
			    !statedir_loop_valid(it->valuestring))
				break;	/* two levels: which one? */
			lv = it->valuestring;
		} else if (strcmp(it->string, "v") != 0 &&
		    strcmp(it->string, "source") != 0)
			break;
	}
	if (it != NULL || lv == NULL)
		return body_refuse(out, 400, "invalid_settings", "settings are "
		    "{\"loop\": \"off\"|\"propose\"|\"apply\"}");
	snprintf(out->loop, sizeof(out->loop), "%s", lv);
	cJSON_Delete(out->rec);
	out->rec = NULL;
	return 0;
}

static enum route_result
settings_put(struct route_ctx *c, struct http_request *r,
    const struct route_args *ra, struct api_job *j)
{
	struct route_body	b;

	(void)ra;
	if (routes_settings_body(j->body, j->body_len, &b) != 0) {
		http_answer_error(r, b.status, b.code, b.why);
		routes_body_free(&b);
		return ROUTE_ANSWERED;
	}
	snprintf(j->loop, sizeof(j->loop), "%s", b.loop);
	routes_body_free(&b);
	snprintf(j->path, sizeof(j->path), "%s", c->env->state_dir);
	j->mu = &c->settings->mu;
	j->written = &c->settings->written;
	j->seq = ++c->settings->seq;
	return ROUTE_POOL;
}

/*
 * Under the mutex, and only if no later PUT has been written already, so
 * the file and the daemon agree on the last PUT whatever order the pool
 * runs them in.
 */
static void
settings_work(struct api_job *j)
{
	int	rc = 0;

	uv_mutex_lock(j->mu);
	if (j->seq > *j->written &&
	    (rc = statedir_settings_write(j->path, j->loop, j->now_ms)) == 0)
		*j->written = j->seq;
	uv_mutex_unlock(j->mu);
	if (rc != 0)
		job_fail(j, 500, "internal", "cannot write %s/settings.json: "
		    "%s", j->path, strerror(-rc));
}

static void
settings_done(struct api_job *j)
{
	struct route_ctx	*c = j->owner;
	struct route_settings	*s = c->settings;

	if (j->code == NULL && j->seq > s->applied) {
		s->applied = j->seq;
		snprintf(s->loop, sizeof(s->loop), "%s", j->loop);
		c->env->loop_set(c->env->arg, s->loop);
		log_info("settings: the fix loop is now '%s'", s->loop);
	}
	if (j->r == NULL)
		return;
	if (j->code != NULL)
		http_answer_error(j->r, j->status, j->code, j->msg);
	else
		http_answer_json(j->r, 200, settings_json(c));
}

/* --- the panel's files -------------------------------------------------- */

static enum route_result
static_get(struct route_ctx *c, struct http_request *r,
    const struct route_args *ra, struct api_job *j)
{
	char	rel[512];

	(void)ra;
	if (static_map(r->path, rel, sizeof(rel)) != 0) {
		http_answer_error(r, 404, "not_found", "no such file");
		return ROUTE_ANSWERED;
	}
	snprintf(j->path, sizeof(j->path), "%s", rel);
	snprintf(j->path2, sizeof(j->path2), "%s", c->page_root);
	return ROUTE_POOL;
}

static void
static_work(struct api_job *j)
{
	int	rc = file_job(j);

	if (file_missing(rc))
		job_fail(j, 404, "not_found", strcmp(j->path, "index.html") ?
		    "no such file" : "the panel (page-runtime/index.html) is "
		    "not installed");
	else if (rc == -EFBIG)
		job_fail(j, 404, "not_found", "file too large to serve");
	else if (rc != 0)
		job_fail(j, 500, "internal", "cannot read the file: %s",
		    strerror(-rc));
}

static void
static_done(struct api_job *j)
{
	struct http_request	*r = j->r;

	if (r == NULL)
		return;
	if (j->code != NULL) {
		http_answer_error(r, j->status, j->code, j->msg);
		return;
	}
	r->page = strncmp(j->ctype, "text/html", 9) == 0;
	http_answer_cached(r, j->out, j->etag, j->ctype);
}

/* --- the table ---------------------------------------------------------- */

#define GH	(HTTP_GET | HTTP_HEAD)

static const struct route routes[] = {
	{ ROUTE_PREFIX "/status", GH, GUARD_READ, status_args, status_get,
	    NULL, NULL },
	{ ROUTE_PREFIX "/ledger", GH, GUARD_READ, ledger_args, ledger_get,
	    NULL, NULL },
	{ ROUTE_PREFIX "/issues", GH, GUARD_READ, issues_args, issues_get,
	    fold_work, NULL },
	{ ROUTE_PREFIX "/issues/*", GH, GUARD_READ, issue_args, issue_get,
	    fold_work, NULL },
	{ ROUTE_PREFIX "/history", GH, GUARD_READ, history_args, history_get,
	    fold_work, NULL },
	{ ROUTE_PREFIX "/fixes", HTTP_POST, GUARD_WRITE, NULL, NULL, fix_work,
	    NULL },
	{ ROUTE_PREFIX "/records", HTTP_POST, GUARD_WRITE, records_args,
	    records_loop, records_work, records_done },
	{ ROUTE_PREFIX "/snapshots", HTTP_POST, GUARD_WRITE, NULL, NULL,
	    view_work, NULL },
	{ ROUTE_PREFIX "/settings", GH, GUARD_READ, NULL, settings_get, NULL,
	    NULL },
	{ ROUTE_PREFIX "/settings", HTTP_PUT, GUARD_WRITE, NULL, settings_put,
	    settings_work, settings_done },
	{ ROUTE_PREFIX "/events", HTTP_GET, GUARD_READ, NULL, events_get, NULL,
	    NULL },
	{ ROUTE_PREFIX "/census", GH, GUARD_READ, NULL, attr_file_get,
	    attr_file_work, static_done },
	{ ROUTE_PREFIX "/attribution", GH, GUARD_READ, NULL, attr_file_get,
	    attr_file_work, static_done },
	{ ROUTE_PREFIX "/relay", HTTP_GET, GUARD_READ, NULL, relay_pages, NULL,
	    NULL },
	{ ROUTE_PREFIX "/relay", HTTP_POST, GUARD_WRITE, NULL, relay_command,
	    NULL, NULL },
	{ ROUTE_PREFIX "/relay/*", HTTP_GET, GUARD_READ, NULL, relay_job, NULL,
	    NULL },
	{ "/", GH, GUARD_READ, NULL, static_get, static_work, static_done },
	{ "/index.html", GH, GUARD_READ, NULL, static_get, static_work,
	    static_done },
	{ "/page-runtime/**", GH, GUARD_READ, NULL, static_get, static_work,
	    static_done },
};

/* The Allow header of a path's methods (GET, HEAD, POST, PUT bits). */
static const char *const allow_of[16] = {
	"OPTIONS", "GET, OPTIONS", "HEAD, OPTIONS", "GET, HEAD, OPTIONS",
	"POST, OPTIONS", "GET, POST, OPTIONS", "HEAD, POST, OPTIONS",
	"GET, HEAD, POST, OPTIONS", "PUT, OPTIONS", "GET, PUT, OPTIONS",
	"HEAD, PUT, OPTIONS", "GET, HEAD, PUT, OPTIONS",
	"POST, PUT, OPTIONS", "GET, POST, PUT, OPTIONS",
	"HEAD, POST, PUT, OPTIONS", "GET, HEAD, POST, PUT, OPTIONS",
};

/* Does path match the row's pattern?  The "*" segment goes to param. */
static int
path_match(const char *pat, const char *path, char *param, size_t cap)
{
	size_t	n = strlen(pat);

	if (n >= 3 && strcmp(pat + n - 3, "/**") == 0)
		return strncmp(path, pat, n - 2) == 0;
	if (n >= 2 && strcmp(pat + n - 2, "/*") == 0) {
		const char	*seg = path + n - 1;

		if (strncmp(path, pat, n - 1) != 0 || *seg == '\0' ||
		    strchr(seg, '/') != NULL || strlen(seg) >= cap)
			return 0;
		strcpy(param, seg);
		return 1;
	}
	return strcmp(path, pat) == 0;
}

const struct route *
routes_match(const char *path, unsigned method, const char **allow,
    char *param, size_t cap)
{
	const struct route	*hit = NULL;
	unsigned		 methods = 0;
	int			 found = 0;
	size_t			 i;

	*allow = NULL;
	for (i = 0; i < sizeof(routes) / sizeof(routes[0]); i++) {
		if (!path_match(routes[i].path, path, param, cap))
			continue;
		found = 1;
		methods |= routes[i].methods;
		if ((routes[i].methods & method) && hit == NULL)
			hit = &routes[i];
	}
	if (found)
		*allow = allow_of[methods & 0x0f];
	return hit;
}
