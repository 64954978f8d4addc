/*
 * api — a request from its headers to its handler (see api.h and
 * docs/api.md).
 *
 * A request goes through, in order: its raw header block (400: the headers
 * libwebsockets parsed must be the ones sent), the connection cap (503),
 * the Host check (421: DNS rebinding), the Origin allow-list (403), another
 * site's page without an Origin (403 cross_site), the route
 * (404) and its methods (405), then for writes the body rules (411, 413,
 * 415) and the write rule: an allowed Origin or the bearer token (403).
 * Only then is a handler run (daemon/routes.h), and whatever it answers
 * is written by the plumbing once it has returned (daemon/http.h).
 *
 * A request with a body is routed twice: its headers are checked when
 * they arrive, and its handler runs when the body is complete.
 */
#include <sys/resource.h>
#include <sys/socket.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <libwebsockets.h>

#include "base/base.h"
#include "daemon/api.h"
#include "daemon/guard.h"
#include "daemon/log.h"
#include "daemon/routes.h"
#include "daemon/static.h"
#include "ledger/jscan.h"
#include "ledger/ledger.h"
#include "project/statedir.h"

/* --- running a route ---------------------------------------------------- */

/* A job that could not start: the fold queue is full (503, come back
 * later), or something went wrong (500). */
static void
start_failed(struct api *a, struct http_request *r, int rc)
{
	if (rc == -EBUSY) {
		a->busy++;
		r->retry_after = jobs_retry_after(&a->jobs);
		http_answer_error(r, 503, "busy", "too many answers are being "
		    "built; retry after the seconds Retry-After says");
	} else
		http_answer_error(r, 500, "internal", "cannot start the work");
}

/*
 * The request is the daemon's to answer now: a job, a build or a held
 * batch will.  libwebsockets' timeout is for clients that are slow to
 * send (--http-timeout): it cut requests whose answer was still being
 * built (an empty reply after 1 s with --http-timeout 1), so it is
 * stopped here.  A read is bounded by the API instead: --answer-wait
 * seconds (60), then 503 busy with Retry-After (api_http_timer).  A
 * write is bounded by its own waits (the ledger's lock, the batch order)
 * and is never cut short: a 503 while its append might still happen
 * would make the client send it twice.
 *
 * Meanwhile the socket is looked at every WAIT_TICK_US (MSG_PEEK).
 * libwebsockets 4.1.6 does not read a connection whose transaction is
 * under way, yet asks to hear when it is readable: a client that hung up
 * made the loop go round at full speed until its answer came (before,
 * the client timeout ended that within 10 s; stopping the connection's rx
 * with lws_rx_flow_control left the answer unwritten).  So a client that
 * has gone is let go at the next tick — and with it what waited on its
 * behalf: a fold nobody else waits for is dropped.  A client that sent
 * more bytes while its read is being made (a request pipelined behind
 * it) is answered at once, 503 busy with Retry-After and the connection
 * closed, and asks again: the answer, still made, is kept for it.  (A
 * write is let finish — its own bounds are seconds — and is then closed
 * for what came behind it: api_http_writeable.)
 */
#define WAIT_TICK_US	(100 * 1000)

static void
wait_begin(const struct api *a, struct http_request *r)
{
	if (r->answered || r->in_body || r->waiting || r->wsi == NULL)
		return;
	r->waiting = r->waited = 1;
	lws_set_timeout(r->wsi, NO_PENDING_TIMEOUT, 0);
	r->deadline_ms = r->method & (HTTP_GET | HTTP_HEAD) ?
	    (uint64_t)base_mono_ms() + (uint64_t)a->env.cfg->answer_wait *
	    1000 : 0;
	lws_set_timer_usecs(r->wsi, WAIT_TICK_US);
}

/* A look at the socket that reads nothing: 0 quiet, 1 bytes wait to be
 * read, -1 the client hung up. */
static int
peek(struct lws *wsi)
{
	char	c;
	ssize_t	n = recv(lws_get_socket_fd(wsi), &c, 1, MSG_PEEK |
		    MSG_DONTWAIT);

	if (n > 0)
		return 1;
	return n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK &&
	    errno != EINTR) ? -1 : 0;
}

/*
 * The row's handler, with a job when the row has pool work; a body moves
 * into the job.  Whatever happens, the request ends answered or waiting
 * on something that will answer it: a handler that forgot to answer gets
 * a 500, never a hang.
 */
static void
run(struct api *a, struct http_request *r, const struct route *rt)
{
	struct http_args	 g;
	struct route_args	 ra;
	struct guard_refusal	 why;
	struct api_job		*j = NULL;
	enum route_result	 rc;

	if (http_args_parse(r->wsi, &g)) {
		http_answer_error(r, 400, "bad_parameter",
		    "too many or too long query parameters");
		return;
	}
	if (routes_args(rt, r->path, r->param, &g, &ra, &why) != 0) {
		http_answer_error(r, why.status, why.code, why.message);
		return;
	}
	if (rt->pool != NULL) {
		if ((j = job_new(&a->jobs, r, rt->pool, rt->done ? rt->done :
		    job_answer, &a->rc)) == NULL) {
			http_answer_error(r, 500, "internal", "out of memory");
			return;
		}
		snprintf(j->project, sizeof(j->project), "%s",
		    a->env.cfg->project);
		j->body = r->body;
		j->body_len = r->body_len;
		r->body = NULL;
		r->body_len = 0;
	}
	rc = rt->loop != NULL ? rt->loop(&a->rc, r, &ra, j) : ROUTE_POOL;
	if (rc == ROUTE_POOL && j != NULL) {
		int	n;

		if ((n = job_start(j)) != 0)
			start_failed(a, r, n);
		return;
	}
	if (rc == ROUTE_KEPT)
		return;
	job_discard(j);
	if (rc != ROUTE_WAITS && !r->answered) {
		log_warnx("http: %s left unanswered; a bug", r->path);
		http_answer_error(r, 500, "internal", "no answer");
	}
}

static void
refuse(struct api *a, struct http_request *r, unsigned status,
    const char *code, const char *message, int fatal)
{
	a->refused++;
	log_debug("http: %u %s %s: %s", status, code, r->path, message);
	if (fatal)
		http_answer_fatal(r, status, code, message);
	else
		http_answer_error(r, status, code, message);
}

/* The headers are in: check them, then run the route or wait for the
 * body. */
static void
request(struct api *a, struct lws *wsi, struct http_request *r,
    const char *uri, const struct rawhdr_req *raw)
{
	const struct route	*rt;
	struct guard_refusal	 why;
	const char		*allow;
	uint64_t		 len = 0;
	int			 write;

	r->head = r->method == HTTP_HEAD;
	write = r->method == HTTP_POST || r->method == HTTP_PUT;
	a->requests++;
	if (strlen(uri) >= sizeof(r->path)) {
		refuse(a, r, 400, "bad_path", "the path is too long", 0);
		return;
	}
	snprintf(r->path, sizeof(r->path), "%s", uri);
	if (guard_raw(wsi, raw, &why) != 0) {
		refuse(a, r, why.status, why.code, why.message, 1);
		return;
	}
	if (a->conns > a->max_conns) {
		a->busy++;
		r->retry_after = 1;
		refuse(a, r, 503, "busy", "too many connections; retry", 1);
		return;
	}
	if (guard_peer(a->env.cfg, wsi, r, &why) != 0) {
		refuse(a, r, why.status, why.code, why.message, write);
		return;
	}
	rt = routes_match(r->path, r->method, &allow, r->param,
	    sizeof(r->param));
	if (allow == NULL) {
		refuse(a, r, 404, "not_found", "no such route", 0);
		return;
	}
	if (http_hdr(wsi, WSI_TOKEN_HTTP_IF_NONE_MATCH, r->inm,
	    sizeof(r->inm)) < 0)
		r->inm[0] = '\0';	/* too long to be ours: no match */
	r->write_timeout = a->env.cfg->http_timeout;
	if (r->method == HTTP_OPTIONS) {
		/* CORS preflight: the Origin, if any, passed guard_peer */
		r->allow = allow;
		r->preflight = 1;
		r->pna = lws_hdr_custom_length(wsi,
		    "access-control-request-private-network:", 39) > 0;
		r->cache = "max-age=600";
		http_answer(r, 204, NULL, NULL);
		return;
	}
	if (rt == NULL) {
		r->allow = allow;
		refuse(a, r, 405, "method_not_allowed",
		    "this route does not take that method", 1);
		return;
	}
	r->route = rt;
	if (rt->guard != GUARD_WRITE) {
		if (guard_no_body(wsi, &why) != 0)
			refuse(a, r, why.status, why.code, why.message,
			    why.fatal);
		else {
			run(a, r, rt);
			wait_begin(a, r);
		}
		return;
	}
	if (guard_write(a->token, API_MAX_BODY, wsi, r, &len, &why) != 0) {
		if (why.fatal || len == 0) {
			refuse(a, r, why.status, why.code, why.message,
			    why.fatal);
			return;
		}
		/* read the body, drop it, then refuse: the answer then
		 * reaches a client still sending, and the connection lives */
		r->drain = 1;
		r->drain_status = why.status;
		r->drain_code = why.code;
		r->drain_message = why.message;
		r->in_body = 1;
		return;
	}
	if (len == 0) {
		http_answer_error(r, 400, "invalid_json", "the body is empty");
		return;
	}
	if ((r->body = malloc(len + 1)) == NULL) {
		http_answer_fatal(r, 500, "internal", "out of memory");
		return;
	}
	r->body[0] = '\0';
	r->body_cap = (size_t)len;
	r->in_body = 1;
}

int
api_http(struct api *a, struct lws *wsi, struct http_request *r,
    const char *uri, const struct rawhdr_req *raw)
{
	http_request_begin(r, wsi);
	r->method = http_method(wsi);
	if (raw != NULL) {
		r->end = raw->end;
		r->has_body = raw->has_body;
	}
	/*
	 * A request without a body is answered in this callback, saving a
	 * trip round the loop; one whose body is still to come is answered
	 * when the socket is writable, after lws has read what it sends.
	 */
	r->in_callback = r->method != HTTP_POST && r->method != HTTP_PUT;
	request(a, wsi, r, uri, raw);
	return http_flush(wsi, r);	/* r may be gone after this */
}

int
api_http_body(struct api *a, struct lws *wsi, struct http_request *r,
    const void *in, size_t len)
{
	(void)a;
	(void)wsi;
	if (!r->in_body || r->answered || len == 0)
		return 0;
	if (r->drain)
		return 0;	/* dropped as it comes */
	if (r->body_len + len > r->body_cap)
		return -1;	/* more than it said: off the rails */
	memcpy(r->body + r->body_len, in, len);
	r->body_len += len;
	r->body[r->body_len] = '\0';
	return 0;
}

int
api_http_body_done(struct api *a, struct lws *wsi, struct http_request *r)
{
	(void)wsi;
	if (!r->in_body || r->answered)
		return 0;
	r->in_body = 0;
	if (r->drain) {
		refuse(a, r, r->drain_status, r->drain_code, r->drain_message,
		    0);
		return 0;	/* answered when writable */
	}
	run(a, r, r->route);
	wait_begin(a, r);
	return 0;	/* answered when writable */
}

int
api_http_timer(struct api *a, struct lws *wsi, struct http_request *r)
{
	http_cancel_fn	*cancel = r->cancel;
	const char	*why;
	int		 seen;

	if (!r->waiting || r->answered)
		return 0;
	if ((seen = peek(wsi)) < 0) {
		a->hung_up++;
		log_debug("http: %s: the client hung up while its answer was "
		    "being made", r->path);
		return -1;	/* closed: the request is freed, and cancelled */
	}
	if (seen > 0 && r->deadline_ms != 0) {
		a->pipelined++;
		r->close = 1;
		why = "a request was sent behind this one while it was being "
		    "made (pipelining): ask again on a new connection; the "
		    "answer is kept for it";
	} else if (r->deadline_ms != 0 &&
	    (uint64_t)base_mono_ms() >= r->deadline_ms) {
		a->expired++;
		why = "the answer was not ready in time; it is still being "
		    "built: retry after the seconds Retry-After says";
		log_info("http: %s waited %u s for its answer (--answer-wait): "
		    "503", r->path, a->env.cfg->answer_wait);
	} else {
		lws_set_timer_usecs(wsi, WAIT_TICK_US);
		return 0;
	}
	/* what it waits on lets go of it; a kept answer's build goes on
	 * for the retry (daemon/cache.c) */
	r->expired = 1;
	r->cancel = NULL;
	if (cancel != NULL)
		cancel(r, r->cancel_arg);
	r->cancel_arg = NULL;
	r->retry_after = jobs_retry_after(&a->jobs);
	http_answer_error(r, 503, "busy", why);
	return 0;	/* written when writable */
}

/*
 * A request with a body, or one the daemon worked on (wait_begin), is
 * never answered on a connection kept alive while more bytes are
 * buffered behind it — another request sent in the same write, or the
 * rest of a body refused before it came.  libwebsockets
 * 4.1.6 spins in its rx-flow handling on what it buffered behind a body
 * once the transaction completes: two POSTs in one write left the loop
 * stuck, the tailer with it, and SIGTERM unheard.  Such a request is
 * answered with `Connection: close`, and what was behind it is never
 * read; a client that pipelines sends it again on a new connection, as
 * RFC 9112 §9.3.2 has it do for any unanswered request.
 */
int
api_http_writeable(struct api *a, struct lws *wsi, struct http_request *r,
    uint64_t fed)
{
	if (r->answered && !r->headers_sent && (r->has_body || r->waited) &&
	    fed != r->end && !r->close) {
		r->close = 1;
		a->closed_behind++;
		log_debug("http: %s: %llu bytes behind a request with a body "
		    "or one the daemon worked on (pipelined, or a body left "
		    "unread): answered, then closed", r->path, fed > r->end ?
		    (unsigned long long)(fed - r->end) : 0ull);
	}
	return http_pump(wsi, r);
}

/* --- WebSocket upgrades ------------------------------------------------- */

/*
 * The subscriber cap is said here, at the upgrade, with a status: a 65th
 * subscriber used to get `101 Switching Protocols` and be closed at once,
 * and `sloptimize watch` looped "reconnected … unreachable" without a
 * reason.  The header `sloptimize-refused` carries the code and the
 * message for clients that cannot read the body of a refused upgrade
 * (libwebsockets' client, which `watch` is).
 */
int
api_confirm_upgrade(struct api *a, struct lws *wsi, const char *up,
    const struct rawhdr_req *raw, unsigned subs)
{
	struct http_request	 r;
	struct guard_refusal	 why = { 0, NULL, NULL, 0 };
	unsigned char		 hdrs[LWS_PRE + 2048], *start = hdrs + LWS_PRE;
	unsigned char		*p = start, *end = hdrs + sizeof(hdrs) - 1;
	char			 uri[256], msg[192], said[256];
	struct http_blob	*b;

	memset(&r, 0, sizeof(r));
	a->requests++;
	if (guard_raw(wsi, raw, &why) != 0)
		;	/* its headers were not read as sent */
	else if (strcasecmp(up, "websocket") != 0) {
		why.status = 400;
		why.code = "bad_upgrade";
		why.message = "only WebSocket upgrades are served";
	} else if (lws_hdr_copy(wsi, uri, sizeof(uri), WSI_TOKEN_GET_URI) <= 0 ||
	    strcmp(uri, ROUTE_PREFIX "/events") != 0) {
		why.status = 404;
		why.code = "not_found";
		why.message = "the events socket is " ROUTE_PREFIX "/events";
	} else if (a->conns > a->max_conns) {
		why.status = 503;
		why.code = "busy";
		why.message = "too many connections; retry";
	} else if (guard_peer(a->env.cfg, wsi, &r, &why) != 0)
		;	/* Host or Origin */
	else if (subs >= a->env.cfg->max_subs) {
		snprintf(msg, sizeof(msg), "%u subscriber%s connected, the "
		    "most this daemon takes (max-subscribers %u); retry later",
		    subs, subs == 1 ? " is" : "s are", a->env.cfg->max_subs);
		why.status = 503;
		why.code = "too_many_subscribers";
		why.message = msg;
		r.retry_after = 5;
		a->subs_refused++;
		if (a->subs_said++ % 64 == 0)
			log_warnx("events: %s (refused %llu so far)", msg,
			    (unsigned long long)a->subs_refused);
	} else
		return 0;
	/* refuse with a JSON answer written now: the connection is still
	 * plain HTTP, and we hang up after it */
	a->refused++;
	log_debug("events: upgrade refused: %u %s", why.status, why.message);
	if ((b = http_blob_json(http_error_json(why.code, why.message))) ==
	    NULL)
		return -1;
	r.status = why.status;
	r.ctype = "application/json";
	r.cache = "no-store";
	r.out = b;
	r.close = 1;
	snprintf(said, sizeof(said), "%s: %s", why.code, why.message);
	if (http_headers(wsi, &r, &p, end) == 0 &&
	    lws_add_http_header_by_name(wsi, (const unsigned char *)
	    "sloptimize-refused:", (const unsigned char *)said,
	    (int)strlen(said), &p, end) == 0 &&
	    lws_finalize_write_http_header(wsi, start, &p, end) == 0)
		(void)lws_write(wsi, b->data + LWS_PRE, b->len,
		    LWS_WRITE_HTTP_FINAL);
	http_blob_unref(b);
	return -1;	/* hang up: we said connection: close */
}

int
api_ws_allowed(struct api *a, struct lws *wsi)
{
	struct http_request	r;
	struct guard_refusal	why;

	memset(&r, 0, sizeof(r));
	return guard_peer(a->env.cfg, wsi, &r, &why) == 0;
}

/* --- the order of the recorder's batches --------------------------------- */

/* A batch's turn (daemon/order.h): its append goes to the pool. */
static void
order_dispatch(void *arg, void *item)
{
	struct api_job		*j = item;
	struct http_request	*r = j->r;
	char			 page[ORDER_ID_MAX + 1];
	uint64_t		 seq = j->page_seq;

	(void)arg;
	snprintf(page, sizeof(page), "%s", j->page);
	if (r != NULL && r->cancel_arg == j) {
		r->cancel = NULL;
		r->cancel_arg = NULL;
	}
	if (job_start(j) != 0) {	/* j is freed */
		if (r != NULL)
			http_answer_error(r, 500, "internal",
			    "cannot start the work");
		order_done(&((struct api *)arg)->order, page, seq, 0);
	}
}

/* Stopping with batches still held: nobody is left to answer. */
static void
order_release(void *arg, void *item)
{
	(void)arg;
	job_discard(item);
}

static cJSON *
order_json(const struct order *o)
{
	cJSON	*n = cJSON_CreateObject();

	cJSON_AddNumberToObject(n, "taken", (double)o->batches);
	cJSON_AddNumberToObject(n, "held", (double)o->held_total);
	cJSON_AddNumberToObject(n, "heldNow", o->nheld);
	cJSON_AddNumberToObject(n, "duplicates", (double)o->duplicates);
	cJSON_AddNumberToObject(n, "missing", (double)o->missing);
	cJSON_AddNumberToObject(n, "late", (double)o->late);
	cJSON_AddNumberToObject(n, "full", (double)o->full);
	cJSON_AddNumberToObject(n, "evicted", (double)o->evicted);
	return n;
}

/* --- connections, limits, status ---------------------------------------- */

void
api_conn_open(struct api *a)
{
	a->conns++;
}

void
api_conn_close(struct api *a)
{
	if (a->conns > 0)
		a->conns--;
}

int
api_conn_refused(const struct api *a)
{
	return a->conns > a->max_conns + API_CONN_SLACK;
}

/*
 * Connections are descriptors: beyond the open-file limit, accept(2)
 * fails with EMFILE, the listening socket stays readable and
 * libwebsockets 4.1.6 goes round the loop at full speed, logging `accept:
 * errno 24` every time (81 MB of log in 20 s).  So the cap, with the connections accepted
 * past it to be told 503 (API_CONN_SLACK) and the daemon's own files
 * (API_FD_RESERVE: the ledger, inotify, the state directory, the thread
 * pool's reads, --exec's pipes, the sink), must fit in RLIMIT_NOFILE.  The
 * soft limit is raised as far as the hard one lets; if that is not
 * enough, the cap is lowered and the log says so.
 */
static unsigned
conns_fit(unsigned want)
{
	struct rlimit	rl;
	rlim_t		need = (rlim_t)want + API_CONN_SLACK + API_FD_RESERVE;
	unsigned	fit;

	if (getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY ||
	    rl.rlim_cur >= need)
		return want;
	if (rl.rlim_max == RLIM_INFINITY || rl.rlim_max > rl.rlim_cur) {
		struct rlimit	up = rl;

		up.rlim_cur = rl.rlim_max == RLIM_INFINITY ||
		    rl.rlim_max >= need ? need : rl.rlim_max;
		if (setrlimit(RLIMIT_NOFILE, &up) == 0)
			rl.rlim_cur = up.rlim_cur;
		if (rl.rlim_cur >= need) {
			log_info("raised the open-file limit to %llu for "
			    "--max-connections %u", (unsigned long long)need,
			    want);
			return want;
		}
	}
	fit = rl.rlim_cur > API_CONN_SLACK + API_FD_RESERVE + 8 ?
	    (unsigned)(rl.rlim_cur - API_CONN_SLACK - API_FD_RESERVE) : 8;
	log_warnx("--max-connections %u does not fit the open-file limit "
	    "(RLIMIT_NOFILE %llu, of which %u are kept for the daemon's own "
	    "files and %u for connections told 503 past the cap): serving %u "
	    "connections at once%s", want, (unsigned long long)rl.rlim_cur,
	    API_FD_RESERVE, API_CONN_SLACK, fit, fit == 8 ? "; the limit is "
	    "too low to serve safely: raise it (ulimit -n, LimitNOFILE=)" :
	    "");
	return fit;
}

void
api_tune(struct api *a, struct lws_context_creation_info *info)
{
	unsigned	m;

	m = a->max_conns = conns_fit(a->env.cfg->max_conns);

	info->max_http_header_data = 8192;
	/* one header buffer per connection that is sending its headers:
	 * enough for every connection we keep, so a crowd of slow clients
	 * never makes a prompt one wait for a buffer */
	info->max_http_header_pool = (unsigned short)(m + 16);
	info->timeout_secs = a->env.cfg->http_timeout;
	info->keepalive_timeout = 30;
	info->server_string = "sloptimized";
}

const char *
api_loop_level(const struct api *a, const char **source)
{
	return config_loop_level(a->env.cfg, a->settings.loop, source);
}

static cJSON *
list_json(const struct config_list *l)
{
	cJSON		*o = cJSON_CreateArray();
	unsigned	 i;

	for (i = 0; i < l->n; i++)
		cJSON_AddItemToArray(o, cJSON_CreateString(l->v[i]));
	return o;
}

cJSON *
api_status_json(const struct api *a)
{
	const struct config	*cfg = a->env.cfg;
	cJSON			*n = cJSON_CreateObject(), *f;
	int			 running;

	cJSON_AddNumberToObject(n, "connections", a->conns);
	cJSON_AddNumberToObject(n, "maxConnections", a->max_conns);
	if (a->max_conns != cfg->max_conns)
		cJSON_AddNumberToObject(n, "maxConnectionsAsked",
		    cfg->max_conns);
	cJSON_AddNumberToObject(n, "requests", (double)a->requests);
	cJSON_AddNumberToObject(n, "refused", (double)a->refused);
	cJSON_AddNumberToObject(n, "closedBehindBody",
	    (double)a->closed_behind);
	cJSON_AddNumberToObject(n, "ledgerBuilds",
	    (double)a->cache.ledger_builds);
	cJSON_AddNumberToObject(n, "answerBuilds", (double)a->cache.builds);
	cJSON_AddNumberToObject(n, "answerHits", (double)a->cache.hits);
	cJSON_AddNumberToObject(n, "buildsHeldBack", (double)a->cache.held);
	cJSON_AddNumberToObject(n, "jobs", a->jobs.n);
	cJSON_AddNumberToObject(n, "foldsWaited", (double)a->jobs.waited);
	f = cJSON_AddObjectToObject(n, "folds");
	running = atomic_load(&((struct api *)a)->jobs.running);
	cJSON_AddNumberToObject(f, "running", running);
	cJSON_AddNumberToObject(f, "queued", (int)a->jobs.heavy > running ?
	    (int)a->jobs.heavy - running : 0);
	cJSON_AddNumberToObject(f, "max", JOBS_HEAVY_MAX);
	cJSON_AddNumberToObject(f, "done", (double)a->jobs.folds);
	cJSON_AddNumberToObject(f, "refused", (double)a->jobs.refused);
	cJSON_AddNumberToObject(f, "dropped", (double)a->jobs.dropped);
	cJSON_AddNumberToObject(f, "recentMs", a->jobs.heavy_ms);
	cJSON_AddNumberToObject(n, "expired", (double)a->expired);
	cJSON_AddNumberToObject(n, "hungUp", (double)a->hung_up);
	cJSON_AddNumberToObject(n, "pipelinedWhileWaiting",
	    (double)a->pipelined);
	cJSON_AddItemToObject(n, "allowHosts", list_json(&cfg->allow_hosts));
	cJSON_AddItemToObject(n, "allowOrigins",
	    list_json(&cfg->allow_origins));
	cJSON_AddStringToObject(n, "tokenFile", a->token_path);
	cJSON_AddStringToObject(n, "pageDir", a->page_root);
	cJSON_AddStringToObject(n, "pageDirWhy", a->page_why);
	if (a->order_up)
		cJSON_AddItemToObject(n, "batches", order_json(&a->order));
	return n;
}

/* --- life cycle --------------------------------------------------------- */

/* <state>/token (project/statedir.h): made at first start, then kept. */
static int
token_load(struct api *a)
{
	unsigned	what = 0;
	int		rc;

	statedir_path(a->env.state_dir, "token", a->token_path,
	    sizeof(a->token_path));
	if ((rc = statedir_token(a->env.state_dir, a->token, &what)) != 0) {
		log_warnx("cannot make or read %s: %s", a->token_path,
		    strerror(-rc));
		return rc;
	}
	if (what & STATEDIR_TOKEN_CHMOD)
		log_warnx("%s was readable by others; now mode 0600",
		    a->token_path);
	if (what & STATEDIR_TOKEN_REMADE)
		log_warnx("%s was not 64 hex digits: made a new token",
		    a->token_path);
	if (what & STATEDIR_TOKEN_MADE)
		log_info("made a new API token in %s", a->token_path);
	return 0;
}

/* settings.json's level, if any, wins over the config's. */
static void
settings_load(struct api *a)
{
	const char	*cfg = a->env.cfg->loop_level;
	char		*loop = a->settings.loop;
	int		 rc = statedir_settings_read(a->env.state_dir, loop,
			    sizeof(a->settings.loop));

	if (rc == -EBADMSG)
		log_warnx("%s/settings.json: not {\"loop\": "
		    "off|propose|apply}; ignored", a->env.state_dir);
	else if (rc != 0 && rc != -ENOENT)
		log_warnx("cannot read %s/settings.json: %s",
		    a->env.state_dir, strerror(-rc));
	if (rc != 0) {
		loop[0] = '\0';
		return;
	}
	if (cfg[0] && strcmp(cfg, loop))
		log_info("settings.json sets the fix loop to '%s' (the "
		    "configuration said '%s')", loop, cfg);
	a->env.loop_set(a->env.arg, loop);
}

int
api_init(struct api *a, const struct api_env *env)
{
	int	rc;

	memset(a, 0, sizeof(*a));
	a->env = *env;
	a->jobs.loop = env->loop;
	/* the handlers' view (daemon/routes.h): the order table once up */
	a->rc.env = &a->env;
	a->rc.cache = &a->cache;
	a->rc.settings = &a->settings;
	a->rc.page_root = a->page_root;
	if ((rc = uv_mutex_init(&a->settings.mu)) != 0)
		return rc;
	a->mu_up = 1;
	if ((rc = cache_init(&a->cache, &a->jobs, env->loop, env->changes,
	    env->cfg->project)) != 0) {
		api_free(a);
		return rc;
	}
	if ((rc = token_load(a)) != 0) {
		cache_close(&a->cache);	/* the loop closes it on its way out */
		api_free(a);
		return rc;
	}
	if ((rc = order_init(&a->order, env->loop, NULL, order_dispatch,
	    order_release, a)) != 0) {
		log_warnx("%s: the batch order table: %s", __func__,
		    uv_strerror(rc));
		cache_close(&a->cache);
		api_free(a);
		return rc;
	}
	a->order_up = 1;
	a->rc.order = &a->order;
	settings_load(a);
	static_find_root(env->cfg->page_dir, a->page_root,
	    sizeof(a->page_root), &a->page_why);
	if (a->page_root[0] == '\0')
		log_warnx("no page-runtime/ directory found: GET / answers 404 "
		    "(use --page-dir)");
	else
		log_debug("serving the panel from %s (%s)", a->page_root,
		    a->page_why);
	if (!env->cfg->listen_loopback)
		log_info("listening beyond loopback: writes need an allowed "
		    "Origin or the bearer token in %s", a->token_path);
	return 0;
}

void
api_close(struct api *a)
{
	jobs_stop(&a->jobs);
	cache_close(&a->cache);
	if (a->order_up)
		order_close(&a->order);
}

void
api_free(struct api *a)
{
	if (a->jobs.head != NULL) {
		/* a broken invariant: the loop should have run until every
		 * job came back; their memory must then outlive us */
		log_warnx("api: jobs still in flight at shutdown");
		jobs_orphan(&a->jobs);
		a->mu_up = 0;
	}
	cache_free(&a->cache);
	jobs_free(&a->jobs);
	order_free(&a->order);
	a->order_up = 0;
	a->rc.order = NULL;
	if (a->mu_up)
		uv_mutex_destroy(&a->settings.mu);
	a->mu_up = 0;
}
