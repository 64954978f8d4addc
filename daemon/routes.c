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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libwebsockets.h>

#include "daemon/api.h"
#include "daemon/log.h"
#include "daemon/routes.h"
#include "daemon/snapshot.h"
#include "daemon/static.h"
#include "ledger/footprint.h"
#include "ledger/ledger.h"
#include "project/append.h"
#include "project/project.h"
#include "project/statedir.h"

/* --- /status, /events --------------------------------------------------- */

static enum route_result
status_get(struct api *a, struct http_request *r, const struct http_args *g,
    struct api_job *j)
{
	(void)j;
	if (g->n)
		http_answer_error(r, 400, "bad_parameter",
		    "/status takes no parameters");
	else
		http_answer_json(r, 200, a->env.status(a->env.arg));
	return ROUTE_ANSWERED;
}

static enum route_result
events_get(struct api *a, struct http_request *r, const struct http_args *g,
    struct api_job *j)
{
	(void)a, (void)g, (void)j;
	http_answer_error(r, 426, "upgrade_required",
	    "this is the WebSocket events socket");
	return ROUTE_ANSWERED;
}

/* --- /ledger ------------------------------------------------------------ */

static enum route_result
ledger_get(struct api *a, struct http_request *r, const struct http_args *g,
    struct api_job *j)
{
	static const char *const known[] = { "bytes", NULL };
	uint64_t	 bytes = API_LEDGER_BYTES;

	(void)j;
	if (http_args_unknown(g, known) != NULL)
		http_answer_error(r, 400, "bad_parameter",
		    "/ledger takes bytes=N");
	else if (http_arg(g, "bytes") && http_arg_uint(http_arg(g, "bytes"),
	    1, API_LEDGER_MAX, &bytes))
		http_answer_error(r, 400, "bad_parameter",
		    "bytes is a whole number from 1 to 8388608");
	else if (cache_ledger(&a->cache, r, bytes))
		return ROUTE_WAITS;
	return ROUTE_ANSWERED;
}

/* --- the folds' answers -------------------------------------------------- */

static job_fn	fold_work;

/*
 * /issues, /issues/<id> and /history are folds of the files on the thread
 * pool, one at a time (a heavy job), and their answers are kept per
 * change (daemon/cache.h) under a key of the path and its parameters, in
 * name order: asking again before the ledger changes costs a memory copy.
 */
static enum route_result
cached_fold(struct api *a, struct http_request *r, const struct http_args *g,
    struct api_job *j)
{
	char	key[CACHE_KEY_MAX];
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
	len = snprintf(key, sizeof(key), "%s", r->path);
	for (i = 0; i < g->n && len > 0 && (size_t)len < sizeof(key); i++) {
		n = order[i];
		len += snprintf(key + len, sizeof(key) - (size_t)len, "%c%s=%s",
		    i ? '&' : '?', g->name[n], g->value[n]);
	}
	if (len < 0 || (size_t)len >= sizeof(key)) {
		http_answer_error(r, 400, "bad_parameter",
		    "the parameters are too long");
		return ROUTE_ANSWERED;
	}
	j->work = fold_work;
	j->heavy = 1;
	return cache_get(&a->cache, r, key, j) ? ROUTE_WAITS : ROUTE_ANSWERED;
}

/* --- /issues, /history -------------------------------------------------- */

static void
fold_work(struct api_job *j)
{
	struct project_fold_info info;
	struct ledger		*l = NULL;
	cJSON			*o;
	int			 rc;

	rc = project_fold(j->project, &j->opts, &l, &info);
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
	if (j->one)
		o = ledger_issue_json(l, j->id, j->now_ms);
	else if (j->history)
		o = ledger_history_json(l, j->buckets, j->now_ms);
	else
		o = ledger_issues_json(l, &j->q, j->now_ms);
	if (o == NULL && j->one) {
		ledger_destroy(l);
		job_fail(j, 404, "not_found", "no issue has the footprint %s",
		    j->id);
		return;
	}
	/* the tree may refer to the ledger's memory: print, then destroy */
	j->out = http_blob_json(o);
	ledger_destroy(l);
	if (j->out == NULL) {
		job_fail(j, 500, "internal", "out of memory");
		return;
	}
	j->status = 200;
	j->ctype = "application/json";
	snprintf(j->etag, sizeof(j->etag), "\"f%016llx%llx\"",
	    (unsigned long long)fnv1a64(j->out->data + LWS_PRE, j->out->len),
	    (unsigned long long)j->out->len);
}

/* from, to, include-automated: shared by /issues and /history */
static int
fold_filters(struct ledger_opts *o, const struct http_args *g,
    const char **why)
{
	const char	*v;
	int64_t		 ms;

	o->from_ms = o->to_ms = LEDGER_NO_TIME;
	if ((v = http_arg(g, "from")) != NULL) {
		if (iso_parse_ms(v, strlen(v), &ms)) {
			*why = "from is an ISO-8601 time";
			return -1;
		}
		o->from_ms = ms;
	}
	if ((v = http_arg(g, "to")) != NULL) {
		if (iso_parse_ms(v, strlen(v), &ms)) {
			*why = "to is an ISO-8601 time";
			return -1;
		}
		o->to_ms = ms;
	}
	if ((v = http_arg(g, "include-automated")) != NULL &&
	    http_arg_bool(v, &o->include_automated)) {
		*why = "include-automated is true or false";
		return -1;
	}
	return 0;
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
issues_team(struct api *a, struct http_request *r, const struct api_job *j)
{
	struct team_query	 q = { j->q.type, j->q.status, j->q.limit,
				    j->opts.include_automated, j->opts.from_ms,
				    j->opts.to_ms };
	struct team_wait	*w;
	int			 rc;

	if (a->env.team == NULL) {
		http_answer_error(r, 404, "no_sink", "this daemon has no sink: "
		    "start it with --sink URL (docs/team.md)");
		return ROUTE_ANSWERED;
	}
	if ((w = calloc(1, sizeof(*w))) == NULL) {
		http_answer_error(r, 500, "internal", "out of memory");
		return ROUTE_ANSWERED;
	}
	w->r = r;
	rc = a->env.team(a->env.arg, &q, j->now_ms, team_done, w);
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
issues_get(struct api *a, struct http_request *r, const struct http_args *g,
    struct api_job *j)
{
	static const char *const known[] = { "type", "status", "from", "to",
		"include-automated", "limit", "scope", NULL };
	const char	*v, *why = NULL;
	uint64_t	 limit = 0;

	if (http_args_unknown(g, known) != NULL) {
		http_answer_error(r, 400, "bad_parameter", "/issues takes type, "
		    "status, from, to, include-automated, limit and scope");
		return ROUTE_ANSWERED;
	}
	if ((v = http_arg(g, "scope")) != NULL && strcmp(v, "local") != 0 &&
	    strcmp(v, "team") != 0) {
		http_answer_error(r, 400, "bad_parameter",
		    "scope is local (this ledger) or team (the sink's)");
		return ROUTE_ANSWERED;
	}
	if (fold_filters(&j->opts, g, &why)) {
		http_answer_error(r, 400, "bad_parameter", why);
		return ROUTE_ANSWERED;
	}
	if ((v = http_arg(g, "type")) != NULL) {
		if (*v == '\0' || strlen(v) >= sizeof(j->type)) {
			http_answer_error(r, 400, "bad_parameter",
			    "type is a record type (hitch, usermark, …)");
			return ROUTE_ANSWERED;
		}
		strcpy(j->type, v);
		j->q.type = j->type;
	}
	if ((v = http_arg(g, "status")) != NULL) {
		if (strcmp(v, "open") && strcmp(v, "pending") &&
		    strcmp(v, "fixed") && strcmp(v, "regressed")) {
			http_answer_error(r, 400, "bad_parameter",
			    "status is open, pending, fixed or regressed");
			return ROUTE_ANSWERED;
		}
		strcpy(j->status_f, v);
		j->q.status = j->status_f;
	}
	if ((v = http_arg(g, "limit")) != NULL) {
		if (http_arg_uint(v, 0, 1000000, &limit)) {
			http_answer_error(r, 400, "bad_parameter",
			    "limit is a whole number (0: all)");
			return ROUTE_ANSWERED;
		}
		j->q.limit = (size_t)limit;
	}
	if ((v = http_arg(g, "scope")) != NULL && strcmp(v, "team") == 0)
		return issues_team(a, r, j);
	/*
	 * Even unfiltered, a fresh fold on the pool rather than the live
	 * catalogue on the loop: rendering 50,000 rows takes the loop
	 * hundreds of milliseconds, and the fold of the same bytes has the
	 * same counts (DESIGN §8.2).
	 */
	return cached_fold(a, r, g, j);
}

static enum route_result
issue_get(struct api *a, struct http_request *r, const struct http_args *g,
    struct api_job *j)
{
	static const char *const known[] = { "from", "to",
		"include-automated", NULL };
	const char	*why = NULL;
	size_t		 i;

	(void)a;
	if (http_args_unknown(g, known) != NULL) {
		http_answer_error(r, 400, "bad_parameter", "/issues/<id> takes "
		    "from, to and include-automated");
		return ROUTE_ANSWERED;
	}
	if (fold_filters(&j->opts, g, &why)) {
		http_answer_error(r, 400, "bad_parameter", why);
		return ROUTE_ANSWERED;
	}
	if (strlen(r->param) != 8 ||
	    footprint_parse_hex(r->param, 8, &(uint32_t){ 0 }) != 0) {
		http_answer_error(r, 404, "not_found",
		    "a footprint id is 8 hex digits");
		return ROUTE_ANSWERED;
	}
	for (i = 0; i < 8; i++)
		j->id[i] = (char)tolower((unsigned char)r->param[i]);
	j->id[8] = '\0';
	j->one = 1;
	j->opts.occurrences_of = j->id;
	return cached_fold(a, r, g, j);
}

static enum route_result
history_get(struct api *a, struct http_request *r, const struct http_args *g,
    struct api_job *j)
{
	static const char *const known[] = { "buckets", "include-automated",
		NULL };
	uint64_t	 buckets = 24;
	int		 automated = 0;
	const char	*v;

	if (http_args_unknown(g, known) != NULL) {
		http_answer_error(r, 400, "bad_parameter",
		    "/history takes buckets and include-automated");
		return ROUTE_ANSWERED;
	}
	if ((v = http_arg(g, "buckets")) != NULL &&
	    http_arg_uint(v, 1, 1000, &buckets)) {
		http_answer_error(r, 400, "bad_parameter",
		    "buckets is a whole number from 1 to 1000");
		return ROUTE_ANSWERED;
	}
	if ((v = http_arg(g, "include-automated")) != NULL &&
	    http_arg_bool(v, &automated)) {
		http_answer_error(r, 400, "bad_parameter",
		    "include-automated is true or false");
		return ROUTE_ANSWERED;
	}
	j->opts.from_ms = j->opts.to_ms = LEDGER_NO_TIME;
	j->opts.include_automated = automated;
	j->opts.want_timeline = 1;
	j->history = 1;
	j->buckets = (int)buckets;
	return cached_fold(a, r, g, j);
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
static void
fix_work(struct api_job *j)
{
	struct project_write	 w = { &j->gone, API_LOCK_WAIT_MS };
	char			 why[PROJECT_WHY_MAX];
	cJSON			*rec;
	int			 rc;

	rec = cJSON_ParseWithLength(j->body ? j->body : "", j->body_len);
	if (rec == NULL) {
		job_fail(j, 400, "invalid_json", "the body is not JSON");
		return;
	}
	if (cJSON_IsObject(rec) &&
	    project_json_check(j->body, j->body_len, why, sizeof(why)) != 0) {
		cJSON_Delete(rec);
		job_fail(j, 400, "invalid_json", "the body is %s", why);
		return;
	}
	if ((rc = project_fix_append(j->project, rec, &w, why,
	    sizeof(why))) != 0) {
		write_fail(j, rc, "invalid_fix", why);
		cJSON_Delete(rec);
		return;
	}
	if ((j->out = http_blob_json(rec)) == NULL) {
		job_fail(j, 500, "internal", "the fix was appended, but the "
		    "answer ran out of memory");
		return;
	}
	j->status = 201;
	j->ctype = "application/json";
}

/* --- POST /records ----------------------------------------------------- */

/* The recorder's ingest: the batch goes through the same writer and the
 * same validator as every other record (project/append.h); the daemon
 * then folds it through its tailer, like any other writer's lines. */
static void
records_work(struct api_job *j)
{
	struct project_write	 w = { &j->gone, API_LOCK_WAIT_MS };
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
settings_json(const struct api *a)
{
	cJSON		*o = cJSON_CreateObject();
	const char	*src, *lv = api_loop_level(a, &src);

	cJSON_AddNumberToObject(o, "v", 1);
	cJSON_AddStringToObject(o, "loop", lv);
	cJSON_AddStringToObject(o, "source", src);
	return o;
}

static enum route_result
settings_get(struct api *a, struct http_request *r, const struct http_args *g,
    struct api_job *j)
{
	(void)g, (void)j;
	http_answer_json(r, 200, settings_json(a));
	return ROUTE_ANSWERED;
}

static enum route_result
settings_put(struct api *a, struct http_request *r, const struct http_args *g,
    struct api_job *j)
{
	cJSON		*o, *it;
	const char	*lv = NULL;

	(void)g;
	if ((o = cJSON_ParseWithLength(j->body ? j->body : "",
	    j->body_len)) == NULL) {
		http_answer_error(r, 400, "invalid_json",
		    "the body is not JSON");
		return ROUTE_ANSWERED;
	}
	if (!cJSON_IsObject(o)) {
		cJSON_Delete(o);
		http_answer_error(r, 400, "invalid_settings",
		    "settings are a JSON object");
		return ROUTE_ANSWERED;
	}
	cJSON_ArrayForEach(it, o) {
		if (strcmp(it->string, "loop") == 0) {
			if (!cJSON_IsString(it) ||
			    !statedir_loop_valid(it->valuestring))
				break;
			lv = it->valuestring;
		} else if (strcmp(it->string, "v") != 0 &&
		    strcmp(it->string, "source") != 0)
			break;
	}
	if (it != NULL || lv == NULL) {
		cJSON_Delete(o);
		http_answer_error(r, 400, "invalid_settings", "settings are "
		    "{\"loop\": \"off\"|\"propose\"|\"apply\"}");
		return ROUTE_ANSWERED;
	}
	snprintf(j->loop, sizeof(j->loop), "%s", lv);
	cJSON_Delete(o);
	snprintf(j->path, sizeof(j->path), "%s", a->env.state_dir);
	j->mu = &a->settings_mu;
	j->written = &a->settings_written;
	j->seq = ++a->settings_seq;
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
	struct api	*a = j->owner;

	if (j->code == NULL && j->seq > a->settings_applied) {
		a->settings_applied = j->seq;
		snprintf(a->loop, sizeof(a->loop), "%s", j->loop);
		a->env.loop_set(a->env.arg, a->loop);
		log_info("settings: the fix loop is now '%s'", a->loop);
	}
	if (j->r == NULL)
		return;
	if (j->code != NULL)
		http_answer_error(j->r, j->status, j->code, j->msg);
	else
		http_answer_json(j->r, 200, settings_json(a));
}

/* --- the panel's files -------------------------------------------------- */

static enum route_result
static_get(struct api *a, struct http_request *r, const struct http_args *g,
    struct api_job *j)
{
	char	rel[512];

	(void)g;
	if (static_map(r->path, rel, sizeof(rel)) != 0) {
		http_answer_error(r, 404, "not_found", "no such file");
		return ROUTE_ANSWERED;
	}
	snprintf(j->path, sizeof(j->path), "%s", rel);
	snprintf(j->path2, sizeof(j->path2), "%s", a->page_root);
	return ROUTE_POOL;
}

static void
static_work(struct api_job *j)
{
	int	rc = static_read(j->path2, j->path, LWS_PRE, &j->out, j->etag);

	if (rc == -ENOENT || rc == -ENOTDIR || rc == -ELOOP)
		job_fail(j, 404, "not_found", strcmp(j->path, "index.html") ?
		    "no such file" : "the panel (page-runtime/index.html) is "
		    "not installed");
	else if (rc == -EFBIG)
		job_fail(j, 404, "not_found", "file too large to serve");
	else if (rc != 0)
		job_fail(j, 500, "internal", "cannot read the file: %s",
		    strerror(-rc));
	else {
		j->status = 200;
		j->ctype = static_type(j->path);
	}
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
	{ ROUTE_PREFIX "/status", GH, GUARD_READ, status_get, NULL, NULL },
	{ ROUTE_PREFIX "/ledger", GH, GUARD_READ, ledger_get, NULL, NULL },
	{ ROUTE_PREFIX "/issues", GH, GUARD_READ, issues_get, fold_work,
	    NULL },
	{ ROUTE_PREFIX "/issues/*", GH, GUARD_READ, issue_get, fold_work,
	    NULL },
	{ ROUTE_PREFIX "/history", GH, GUARD_READ, history_get, fold_work,
	    NULL },
	{ ROUTE_PREFIX "/fixes", HTTP_POST, GUARD_WRITE, NULL, fix_work,
	    NULL },
	{ ROUTE_PREFIX "/records", HTTP_POST, GUARD_WRITE, NULL, records_work,
	    NULL },
	{ ROUTE_PREFIX "/settings", GH, GUARD_READ, settings_get, NULL,
	    NULL },
	{ ROUTE_PREFIX "/settings", HTTP_PUT, GUARD_WRITE, settings_put,
	    settings_work, settings_done },
	{ ROUTE_PREFIX "/events", HTTP_GET, GUARD_READ, events_get, NULL,
	    NULL },
	{ "/", GH, GUARD_READ, static_get, static_work, static_done },
	{ "/index.html", GH, GUARD_READ, static_get, static_work,
	    static_done },
	{ "/page-runtime/**", GH, GUARD_READ, static_get, static_work,
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
