/*
 * api — HTTP routes of the daemon (see api.h and docs/api.md).
 *
 * A request goes through, in order: the connection cap (503), the Host
 * check (421: DNS rebinding), the Origin allow-list (403), the route
 * (404) and its methods (405), then for writes the body rules (411, 413,
 * 415) and the write rule: an allowed Origin or the bearer token (403).
 * Only then is a handler run.  Errors are JSON, always.
 *
 * Handlers answer at once from the live fold (status, unfiltered issues,
 * history) or hand a job to libuv's thread pool and answer when it comes
 * back (the /ledger body, filtered folds, fix appends, settings, static
 * files).  A job outlives its request if the client hangs up (the result
 * is dropped) and outlives the server at shutdown (api_free orphans it).
 *
 * The /ledger body is cached per ?bytes= value and tagged with the
 * change counter (api.gen) it was built at.  A request that finds it
 * stale waits on the entry; one build runs at a time per entry, and a
 * request that arrived after the build began waits for the next one, so
 * nobody is served a body older than their request.
 */
#include <sys/socket.h>
#include <sys/stat.h>

#include <arpa/inet.h>
#include <netinet/in.h>

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>
#include <libwebsockets.h>

#include "cli/cli.h"
#include "daemon/api.h"
#include "daemon/daemon.h"
#include "daemon/log.h"
#include "daemon/server.h"
#include "daemon/snapshot.h"
#include "daemon/static.h"
#include "ledger/footprint.h"
#include "ledger/jscan.h"

#define WRITE_CHUNK	(256 * 1024)
#define PREFIX		"/api/sloptimize"
#define DRAIN_MAX	(64u << 20)	/* bigger bodies: answer and close */
#define MAX_ARGS	8

#define CSP_PAGE	"default-src 'self'; connect-src 'self' ws: wss:; " \
			"style-src 'self' 'unsafe-inline'; img-src 'self' data:; " \
			"frame-ancestors 'none'"
#define CSP_DATA	"default-src 'none'; frame-ancestors 'none'"

enum method { M_GET, M_HEAD, M_POST, M_PUT, M_OPTIONS, M_OTHER };

enum route {
	R_NONE, R_STATUS, R_LEDGER, R_ISSUES, R_ISSUE, R_HISTORY, R_FIXES,
	R_SETTINGS, R_EVENTS, R_STATIC
};

static const char *const allow_of[] = {
	[R_NONE] = NULL,
	[R_STATUS] = "GET, HEAD, OPTIONS",
	[R_LEDGER] = "GET, HEAD, OPTIONS",
	[R_ISSUES] = "GET, HEAD, OPTIONS",
	[R_ISSUE] = "GET, HEAD, OPTIONS",
	[R_HISTORY] = "GET, HEAD, OPTIONS",
	[R_FIXES] = "POST, OPTIONS",
	[R_SETTINGS] = "GET, HEAD, PUT, OPTIONS",
	[R_EVENTS] = "GET, OPTIONS",
	[R_STATIC] = "GET, HEAD, OPTIONS",
};

struct api_job {
	uv_work_t		 req;
	struct api		*a;	/* NULL: orphaned by api_free */
	struct api_request	*r;	/* NULL: the client hung up */
	struct api_job		*next, *prev;
	void			(*work)(struct api_job *);
	void			(*done)(struct api_job *);
	/* inputs */
	char			 project[PATH_MAX];
	char			 path[PATH_MAX + 64];
	char			 path2[PATH_MAX + 64];
	char			*body;
	size_t			 body_len;
	struct ledger_opts	 opts;
	struct ledger_query	 q;
	char			 id[9], type[64], status_f[16];
	int			 one, history, buckets;
	int64_t			 now_ms;
	uint64_t		 bytes, seq;
	int			 snap;
	char			 loop[16];
	uv_mutex_t		*mu;
	uint64_t		*written;
	/* outputs */
	unsigned		 status;
	struct api_blob		*out;
	const char		*ctype;
	char			 etag[48];
	const char		*code;
	char			 msg[256];
};

/* --- blobs ------------------------------------------------------------ */

static struct api_blob *
blob_new(const char *txt, size_t n, int newline)
{
	struct api_blob	*b = malloc(sizeof(*b) + LWS_PRE + n + 1);

	if (b == NULL)
		return NULL;
	b->refs = 1;
	memcpy(b->data + LWS_PRE, txt, n);
	if (newline)
		b->data[LWS_PRE + n++] = '\n';
	b->len = n;
	return b;
}

static struct api_blob *
blob_ref(struct api_blob *b)
{
	if (b != NULL)
		b->refs++;
	return b;
}

static void
blob_unref(struct api_blob *b)
{
	if (b != NULL && --b->refs == 0)
		free(b);
}

/* Print a cJSON tree (consumed) into a blob; NULL on allocation failure. */
static struct api_blob *
blob_json(cJSON *o)
{
	char		*txt = o ? cJSON_PrintUnformatted(o) : NULL;
	struct api_blob	*b;

	cJSON_Delete(o);
	if (txt == NULL)
		return NULL;
	b = blob_new(txt, strlen(txt), 1);
	free(txt);
	return b;
}

static cJSON *
error_json(const char *code, const char *message)
{
	cJSON	*o = cJSON_CreateObject(), *e;

	e = cJSON_AddObjectToObject(o, "error");
	cJSON_AddStringToObject(e, "code", code);
	cJSON_AddStringToObject(e, "message", message);
	return o;
}

/* --- responses -------------------------------------------------------- */

static int	pump(struct lws *, struct api_request *);

static struct api *
api_of(struct lws *wsi)
{
	struct server	*s = lws_context_user(lws_get_context(wsi));

	return &s->api;
}

/*
 * Queue `b` (a reference is taken over) as the response.  Inside the
 * request's own callback (api.sync_wsi) it is written at once, saving a
 * trip round the loop; the return value is then the callback's, and `r`
 * may be gone: completing the transaction frees lws's per-connection
 * user space (it rebinds the protocol).
 */
static int
respond_blob(struct lws *wsi, struct api_request *r, unsigned status,
    const char *ctype, struct api_blob *b)
{
	if (b == NULL && status != 204 && status != 304) {
		/* out of memory: a fixed answer that needs none */
		static const char	 oom[] = "{\"error\":{\"code\":\"internal\","
					    "\"message\":\"out of memory\"}}";

		status = 500;
		ctype = "application/json";
		if ((b = blob_new(oom, sizeof(oom) - 1, 1)) == NULL)
			return -1;
	}
	blob_unref(r->out);
	r->out = b;
	r->out_pos = 0;
	r->status = status;
	r->ctype = ctype;
	r->answered = 1;
	r->headers_sent = 0;
	if (r->cache == NULL)
		r->cache = "no-store";
	if (api_of(wsi)->sync_wsi == wsi)
		return pump(wsi, r);
	lws_callback_on_writable(wsi);
	return 0;
}

static int
respond_json(struct lws *wsi, struct api_request *r, unsigned status,
    cJSON *o)
{
	return respond_blob(wsi, r, status, "application/json", blob_json(o));
}

static int
respond_error(struct lws *wsi, struct api_request *r, unsigned status,
    const char *code, const char *message)
{
	r->etag[0] = '\0';
	r->cache = "no-store";
	r->page = 0;
	return respond_json(wsi, r, status, error_json(code, message));
}

/* An error after which the connection cannot go on (body unread). */
static int
respond_fatal(struct lws *wsi, struct api_request *r, unsigned status,
    const char *code, const char *message)
{
	r->close = 1;
	return respond_error(wsi, r, status, code, message);
}

static int
add_hdr(struct lws *wsi, const char *name, const char *value,
    unsigned char **p, unsigned char *end)
{
	return lws_add_http_header_by_name(wsi, (const unsigned char *)name,
	    (const unsigned char *)value, (int)strlen(value), p, end);
}

/* Status, type, length and the headers every answer carries. */
static int
build_headers(struct lws *wsi, struct api_request *r, unsigned char **p,
    unsigned char *end)
{
	int	nobody = r->status == 204 || r->status == 304;

	if (lws_add_http_header_status(wsi, r->status, p, end))
		return -1;
	if (!nobody) {
		if (add_hdr(wsi, "content-type:", r->ctype, p, end) ||
		    lws_add_http_header_content_length(wsi,
		    r->out ? r->out->len : 0, p, end))
			return -1;
	}
	if (r->etag[0] && add_hdr(wsi, "etag:", r->etag, p, end))
		return -1;
	if (r->cache && add_hdr(wsi, "cache-control:", r->cache, p, end))
		return -1;
	if (r->allow && add_hdr(wsi, "allow:", r->allow, p, end))
		return -1;
	if (r->origin_ok) {
		if (add_hdr(wsi, "access-control-allow-origin:", r->origin, p,
		    end) ||
		    add_hdr(wsi, "access-control-expose-headers:", "ETag", p,
		    end))
			return -1;
		if (r->preflight && (add_hdr(wsi,
		    "access-control-allow-methods:", r->allow, p, end) ||
		    add_hdr(wsi, "access-control-allow-headers:",
		    "Content-Type, Authorization, If-None-Match", p, end) ||
		    add_hdr(wsi, "access-control-max-age:", "600", p, end)))
			return -1;
		if (r->pna && add_hdr(wsi,
		    "access-control-allow-private-network:", "true", p, end))
			return -1;
	}
	if (add_hdr(wsi, "vary:", "Origin", p, end) ||
	    add_hdr(wsi, "x-content-type-options:", "nosniff", p, end) ||
	    add_hdr(wsi, "referrer-policy:", "no-referrer", p, end) ||
	    add_hdr(wsi, "x-frame-options:", "DENY", p, end) ||
	    add_hdr(wsi, "content-security-policy:", r->page ? CSP_PAGE :
	    CSP_DATA, p, end))
		return -1;
	if (r->close && add_hdr(wsi, "connection:", "close", p, end))
		return -1;
	return 0;
}

static int
finish(struct lws *wsi, struct api_request *r)
{
	int	close = r->close;

	blob_unref(r->out);
	r->out = NULL;
	r->answered = 0;
	r->headers_sent = 0;
	if (close)
		return -1;
	return lws_http_transaction_completed(wsi) ? -1 : 0;
}

/*
 * Headers, then the body in pieces of WRITE_CHUNK, one piece per call:
 * the first piece goes out with the headers.  On HTTP/1 two writes in one
 * callback are safe: lws queues what the socket did not take and keeps
 * the order.
 *
 * The body is shared between connections: lws_write() must not touch the
 * bytes before the piece.  On HTTP/1 without a compression transform it
 * does not (it only writes the bytes given); HTTP/2 would frame in place,
 * so h2c upgrades are refused (api_confirm_upgrade) and prior knowledge
 * is not enabled.
 */
static int
pump(struct lws *wsi, struct api_request *r)
{
	unsigned char	 hdr[LWS_PRE + 2048], *start = hdr + LWS_PRE, *p = start;
	unsigned char	*end = hdr + sizeof(hdr) - 1;
	size_t		 n;
	int		 final;

	if (!r->headers_sent) {
		if (build_headers(wsi, r, &p, end) ||
		    lws_finalize_write_http_header(wsi, start, &p, end))
			return -1;
		r->headers_sent = 1;
		if (r->head || r->out == NULL || r->out->len == 0 ||
		    r->status == 204 || r->status == 304)
			return finish(wsi, r);
	}
	n = r->out->len - r->out_pos;
	if (n > WRITE_CHUNK)
		n = WRITE_CHUNK;
	final = r->out_pos + n == r->out->len;
	if (lws_write(wsi, r->out->data + LWS_PRE + r->out_pos, n,
	    final ? LWS_WRITE_HTTP_FINAL : LWS_WRITE_HTTP) != (int)n)
		return -1;
	r->out_pos += n;
	if (final)
		return finish(wsi, r);
	lws_callback_on_writable(wsi);
	return 0;
}

int
api_http_writeable(struct api *a, struct lws *wsi, struct api_request *r)
{
	(void)a;
	if (!r->answered)
		return 0;
	return pump(wsi, r);
}

/* --- request checks --------------------------------------------------- */

static int
hdr(struct lws *wsi, enum lws_token_indexes t, char *buf, size_t cap)
{
	int	n = lws_hdr_copy(wsi, buf, (int)cap, t);

	if (n < 0) {
		buf[0] = '\0';
		return -1;	/* longer than we take */
	}
	return n;
}

static int
name_eq(const char *a, size_t an, const char *b)
{
	return strlen(b) == an && strncasecmp(a, b, an) == 0;
}

/* "name" or "name:port", name maybe "[v6]"; the port, if any, digits. */
static int
split_host(const char *h, const char **name, size_t *n)
{
	const char	*colon;

	if (h[0] == '[') {
		const char	*rb = strchr(h, ']');

		if (rb == NULL)
			return -1;
		colon = rb[1] == ':' ? rb + 1 : NULL;
		if (rb[1] != '\0' && rb[1] != ':')
			return -1;
	} else {
		colon = strchr(h, ':');
		if (colon && strchr(colon + 1, ':'))
			return -1;
	}
	*name = h;
	*n = colon ? (size_t)(colon - h) : strlen(h);
	if (colon) {
		const char	*q = colon + 1;

		if (*q == '\0' || strlen(q) > 5)
			return -1;
		for (; *q; q++)
			if (!isdigit((unsigned char)*q))
				return -1;
	}
	return *n > 0 ? 0 : -1;
}

static int
host_allowed(struct api *a, const char *host)
{
	static const char *const loop[] = { "localhost", "127.0.0.1",
					    "[::1]" };
	const struct config_list *l = &a->d->cfg.allow_hosts;
	const char	*name;
	size_t		 n, i;

	if (split_host(host, &name, &n))
		return 0;
	for (i = 0; i < sizeof(loop) / sizeof(loop[0]); i++)
		if (name_eq(name, n, loop[i]))
			return 1;
	for (i = 0; i < l->n; i++)
		if (name_eq(name, n, l->v[i]))
			return 1;
	return 0;
}

/* pattern "scheme://host", "scheme://host:port" or "scheme://host:*" */
static int
origin_match(const char *o, const char *pat)
{
	size_t	n = strlen(pat);

	if (n > 2 && strcmp(pat + n - 2, ":*") == 0) {
		n -= 2;
		if (strncasecmp(o, pat, n) != 0)
			return 0;
		if (o[n] == '\0')
			return 1;
		if (o[n] != ':' || o[n + 1] == '\0' || strlen(o + n + 1) > 5)
			return 0;
		for (o += n + 1; *o; o++)
			if (!isdigit((unsigned char)*o))
				return 0;
		return 1;
	}
	return strcasecmp(o, pat) == 0;
}

/*
 * Loopback origins on any port, the configured ones, and the daemon's
 * own origin (http://<Host>): the Host has already passed its check, so
 * a rebound name never gets this far.
 */
static int
origin_allowed(struct api *a, const char *origin, const char *host)
{
	static const char *const loop[] = { "http://localhost:*",
		"http://127.0.0.1:*", "http://[::1]:*" };
	const struct config_list *l = &a->d->cfg.allow_origins;
	size_t	i;

	for (i = 0; i < sizeof(loop) / sizeof(loop[0]); i++)
		if (origin_match(origin, loop[i]))
			return 1;
	for (i = 0; i < l->n; i++)
		if (origin_match(origin, l->v[i]))
			return 1;
	return strncmp(origin, "http://", 7) == 0 &&
	    strcasecmp(origin + 7, host) == 0;
}

static int
token_ok(struct api *a, struct lws *wsi)
{
	char		auth[128];
	unsigned char	diff = 0;
	size_t		i;

	if (hdr(wsi, WSI_TOKEN_HTTP_AUTHORIZATION, auth, sizeof(auth)) <= 0 ||
	    strncasecmp(auth, "Bearer ", 7) != 0 || strlen(auth + 7) != 64 ||
	    a->token[0] == '\0')
		return 0;
	for (i = 0; i < 64; i++)
		diff |= (unsigned char)(auth[7 + i] ^ a->token[i]);
	return diff == 0;
}

static int
json_type(const char *ct)
{
	size_t	n = strlen("application/json");

	while (*ct == ' ')
		ct++;
	if (strncasecmp(ct, "application/json", n) != 0)
		return 0;
	ct += n;
	while (*ct == ' ')
		ct++;
	return *ct == '\0' || *ct == ';';
}

static enum method
method_of(struct lws *wsi)
{
	if (lws_hdr_total_length(wsi, WSI_TOKEN_GET_URI))
		return M_GET;
	if (lws_hdr_total_length(wsi, WSI_TOKEN_POST_URI))
		return M_POST;
	if (lws_hdr_total_length(wsi, WSI_TOKEN_HEAD_URI))
		return M_HEAD;
	if (lws_hdr_total_length(wsi, WSI_TOKEN_PUT_URI))
		return M_PUT;
	if (lws_hdr_total_length(wsi, WSI_TOKEN_OPTIONS_URI))
		return M_OPTIONS;
	return M_OTHER;
}

static enum route
route_of(const char *path, char id[9])
{
	if (strncmp(path, PREFIX "/", sizeof(PREFIX)) != 0)
		return strcmp(path, "/") == 0 ||
		    strcmp(path, "/index.html") == 0 ||
		    strncmp(path, "/page-runtime/", 14) == 0 ? R_STATIC : R_NONE;
	path += sizeof(PREFIX);
	if (strcmp(path, "status") == 0)
		return R_STATUS;
	if (strcmp(path, "ledger") == 0)
		return R_LEDGER;
	if (strcmp(path, "issues") == 0)
		return R_ISSUES;
	if (strncmp(path, "issues/", 7) == 0) {
		snprintf(id, 9, "%.8s", path + 7);
		return strlen(path + 7) == 8 ? R_ISSUE : R_NONE;
	}
	if (strcmp(path, "history") == 0)
		return R_HISTORY;
	if (strcmp(path, "fixes") == 0)
		return R_FIXES;
	if (strcmp(path, "settings") == 0)
		return R_SETTINGS;
	if (strcmp(path, "events") == 0)
		return R_EVENTS;
	return R_NONE;
}

/* --- query strings ---------------------------------------------------- */

struct args {
	size_t	n;
	char	name[MAX_ARGS][32];
	char	value[MAX_ARGS][128];
};

/* lws has split the query at '&' and decoded it.  -1: too many, too long. */
static int
args_parse(struct lws *wsi, struct args *g)
{
	char	buf[192], *eq;
	int	i, n;

	g->n = 0;
	for (i = 0; ; i++) {
		if (lws_hdr_fragment_length(wsi, WSI_TOKEN_HTTP_URI_ARGS, i) >=
		    (int)sizeof(buf))
			return -1;
		n = lws_hdr_copy_fragment(wsi, buf, sizeof(buf),
		    WSI_TOKEN_HTTP_URI_ARGS, i);
		if (n < 0)
			return 0;
		if (n == 0)
			continue;
		if (g->n == MAX_ARGS)
			return -1;
		eq = strchr(buf, '=');
		if (eq)
			*eq++ = '\0';
		if (strlen(buf) >= sizeof(g->name[0]) ||
		    strlen(eq ? eq : "") >= sizeof(g->value[0]))
			return -1;
		strcpy(g->name[g->n], buf);
		strcpy(g->value[g->n], eq ? eq : "");
		g->n++;
	}
}

static const char *
arg(const struct args *g, const char *name)
{
	size_t	i;

	for (i = 0; i < g->n; i++)
		if (strcmp(g->name[i], name) == 0)
			return g->value[i];
	return NULL;
}

/* Every name in g is one of `known` (NULL-terminated); else its name. */
static const char *
args_unknown(const struct args *g, const char *const *known)
{
	size_t	i, j;

	for (i = 0; i < g->n; i++) {
		for (j = 0; known[j] != NULL; j++)
			if (strcmp(g->name[i], known[j]) == 0)
				break;
		if (known[j] == NULL)
			return g->name[i];
	}
	return NULL;
}

static int
arg_uint(const char *v, uint64_t lo, uint64_t hi, uint64_t *out)
{
	char			*end;
	unsigned long long	 n;

	if (v == NULL || !isdigit((unsigned char)*v))
		return -1;
	errno = 0;
	n = strtoull(v, &end, 10);
	if (*end != '\0' || errno != 0 || n < lo || n > hi)
		return -1;
	*out = n;
	return 0;
}

static int
arg_bool(const char *v, int *out)
{
	if (strcmp(v, "") == 0 || strcmp(v, "1") == 0 ||
	    strcmp(v, "true") == 0) {
		*out = 1;
		return 0;
	}
	if (strcmp(v, "0") == 0 || strcmp(v, "false") == 0) {
		*out = 0;
		return 0;
	}
	return -1;
}

/* --- jobs ------------------------------------------------------------- */

static void
job_work(uv_work_t *w)
{
	struct api_job	*j = w->data;

	j->work(j);
}

static void
job_after(uv_work_t *w, int status)
{
	struct api_job	*j = w->data;

	(void)status;
	if (j->a != NULL) {
		if (j->prev)
			j->prev->next = j->next;
		else
			j->a->jobs = j->next;
		if (j->next)
			j->next->prev = j->prev;
		if (j->r != NULL)
			j->r->job = NULL;
		if (j->done)
			j->done(j);
	}
	blob_unref(j->out);
	free(j->body);
	free(j);
}

static struct api_job *
job_new(struct api *a, struct api_request *r, void (*work)(struct api_job *),
    void (*done)(struct api_job *))
{
	struct api_job	*j = calloc(1, sizeof(*j));

	if (j == NULL)
		return NULL;
	j->a = a;
	j->r = r;
	j->work = work;
	j->done = done;
	j->req.data = j;
	j->now_ms = daemon_now_ms();
	snprintf(j->project, sizeof(j->project), "%s", a->d->cfg.project);
	return j;
}

static int
job_start(struct api *a, struct api_job *j)
{
	int	rc;

	if ((rc = uv_queue_work(a->d->loop, &j->req, job_work, job_after))
	    != 0) {
		log_warnx("%s: uv_queue_work: %s", __func__, uv_strerror(rc));
		free(j->body);
		free(j);
		return rc;
	}
	j->next = a->jobs;
	if (a->jobs)
		a->jobs->prev = j;
	a->jobs = j;
	if (j->r != NULL)
		j->r->job = j;
	return 0;
}

static void
job_fail(struct api_job *j, unsigned status, const char *code,
    const char *fmt, ...) __attribute__((format(printf, 4, 5)));

static void
job_fail(struct api_job *j, unsigned status, const char *code,
    const char *fmt, ...)
{
	va_list	ap;

	va_start(ap, fmt);
	vsnprintf(j->msg, sizeof(j->msg), fmt, ap);
	va_end(ap);
	j->status = status;
	j->code = code;
	blob_unref(j->out);
	j->out = NULL;
}

/* The common answer of a job: its blob, or its error. */
static void
job_respond(struct api_job *j)
{
	struct api_request	*r = j->r;

	if (r == NULL)
		return;
	if (j->code != NULL) {
		respond_error(r->wsi, r, j->status, j->code, j->msg);
		return;
	}
	if (j->etag[0])
		snprintf(r->etag, sizeof(r->etag), "%s", j->etag);
	respond_blob(r->wsi, r, j->status, j->ctype, j->out);
	j->out = NULL;
}

/* --- /ledger ---------------------------------------------------------- */

static int
etag_match(const char *inm, const char *etag)
{
	const char	*p = inm;
	size_t		 n = strlen(etag);

	while (*p) {
		while (*p == ' ' || *p == ',')
			p++;
		if (*p == '*')
			return 1;
		if (strncmp(p, "W/", 2) == 0)
			p += 2;
		if (strncmp(p, etag, n) == 0 && (p[n] == '\0' || p[n] == ',' ||
		    p[n] == ' '))
			return 1;
		while (*p && *p != ',')
			p++;
	}
	return 0;
}

static int
serve_cached(struct lws *wsi, struct api_request *r, struct api_blob *b,
    const char *etag, const char *ctype)
{
	snprintf(r->etag, sizeof(r->etag), "%s", etag);
	r->cache = "no-cache";
	if (r->inm[0] && etag_match(r->inm, etag))
		return respond_blob(wsi, r, 304, ctype, NULL);
	return respond_blob(wsi, r, 200, ctype, blob_ref(b));
}

static void
snap_work(struct api_job *j)
{
	int	rc;

	rc = snapshot_build(j->path, j->path2, j->bytes, LWS_PRE, &j->out,
	    j->etag);
	if (rc != 0)
		job_fail(j, 500, "internal", "cannot read the ledger: %s",
		    strerror(-rc));
}

static void	snap_build(struct api *a, int i);

static void
waiter_unlink(struct api *a, struct api_request *r)
{
	struct api_snap	*sn;

	if (r->wsnap == 0)
		return;
	sn = &a->snaps[r->wsnap - 1];
	if (r->wprev)
		r->wprev->wnext = r->wnext;
	else
		sn->waiters = r->wnext;
	if (r->wnext)
		r->wnext->wprev = r->wprev;
	r->wnext = r->wprev = NULL;
	r->wsnap = 0;
}

static void
snap_done(struct api_job *j)
{
	struct api		*a = j->a;
	struct api_snap		*sn = &a->snaps[j->snap];
	struct api_request	*r, *next;

	sn->building = 0;
	if (j->code == NULL) {
		blob_unref(sn->body);
		sn->body = j->out;
		j->out = NULL;
		sn->gen = sn->build_gen;
		snprintf(sn->etag, sizeof(sn->etag), "%s", j->etag);
		a->snap_builds++;
	}
	for (r = sn->waiters; r != NULL; r = next) {
		next = r->wnext;
		if (r->wgen > sn->build_gen && j->code == NULL)
			continue;	/* came after the build began */
		waiter_unlink(a, r);
		if (j->code != NULL)
			respond_error(r->wsi, r, j->status, j->code, j->msg);
		else
			serve_cached(r->wsi, r, sn->body, sn->etag,
			    "application/json");
	}
	if (sn->waiters != NULL)
		snap_build(a, j->snap);
}

static void
snap_build(struct api *a, int i)
{
	struct api_snap		*sn = &a->snaps[i];
	struct api_job		*j;
	struct api_request	*r, *next;

	if ((j = job_new(a, NULL, snap_work, snap_done)) == NULL)
		goto fail;
	snprintf(j->path, sizeof(j->path), "%s/.sloptimize/perf.jsonl",
	    a->d->cfg.project);
	snprintf(j->path2, sizeof(j->path2), "%s/.sloptimize/fixes.jsonl",
	    a->d->cfg.project);
	j->bytes = sn->bytes;
	j->snap = i;
	sn->build_gen = a->gen;
	sn->building = 1;
	if (job_start(a, j) == 0)
		return;
	sn->building = 0;
fail:
	for (r = sn->waiters; r != NULL; r = next) {
		next = r->wnext;
		waiter_unlink(a, r);
		respond_error(r->wsi, r, 500, "internal",
		    "cannot start reading the ledger");
	}
}

static int
get_ledger(struct api *a, struct lws *wsi, struct api_request *r,
    const struct args *g)
{
	static const char *const known[] = { "bytes", NULL };
	struct api_snap	*sn = NULL;
	const char	*bad;
	uint64_t	 bytes = API_LEDGER_BYTES;
	int		 i, lru = -1;

	if ((bad = args_unknown(g, known)) != NULL)
		return respond_error(wsi, r, 400, "bad_parameter",
		    "/ledger takes bytes=N");
	if (arg(g, "bytes") && arg_uint(arg(g, "bytes"), 1, API_LEDGER_MAX,
	    &bytes))
		return respond_error(wsi, r, 400, "bad_parameter",
		    "bytes is a whole number from 1 to 8388608");
	for (i = 0; i < API_SNAPS; i++) {
		if (a->snaps[i].bytes == bytes && (a->snaps[i].body ||
		    a->snaps[i].building)) {
			sn = &a->snaps[i];
			break;
		}
		if (!a->snaps[i].building && (lru < 0 ||
		    a->snaps[i].used < a->snaps[lru].used))
			lru = i;
	}
	if (sn == NULL) {
		if (lru < 0) {
			a->busy++;
			return respond_error(wsi, r, 503, "busy",
			    "every ledger cache slot is being rebuilt; retry");
		}
		sn = &a->snaps[lru];
		blob_unref(sn->body);
		sn->body = NULL;
		sn->bytes = bytes;
		sn->waiters = NULL;
	}
	sn->used = ++a->tick;
	if (sn->body != NULL && sn->gen == a->gen)
		return serve_cached(wsi, r, sn->body, sn->etag,
		    "application/json");
	/* stale or missing: wait for a build that began after now */
	r->wsnap = (int)(sn - a->snaps) + 1;
	r->wgen = a->gen;
	r->wprev = NULL;
	r->wnext = sn->waiters;
	if (sn->waiters)
		sn->waiters->wprev = r;
	sn->waiters = r;
	if (!sn->building)
		snap_build(a, r->wsnap - 1);
	return 0;
}

void
api_ledger_changed(struct api *a)
{
	if (a != NULL)
		a->gen++;
}

/* --- /issues, /history ------------------------------------------------ */

static void
fold_work(struct api_job *j)
{
	struct fold_info	 info;
	struct ledger		*l = NULL;
	cJSON			*o;
	int			 rc;

	rc = ledger_fold_project(j->project, &j->opts, &l, &info);
	if (rc == -ENOENT)
		l = ledger_create(&j->opts);	/* no ledger yet: empty */
	else if (rc != 0) {
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
	j->out = blob_json(o);
	ledger_destroy(l);
	if (j->out == NULL) {
		job_fail(j, 500, "internal", "out of memory");
		return;
	}
	j->status = 200;
	j->ctype = "application/json";
}

/* from, to, include-automated: shared by /issues and /history */
static int
fold_filters(struct api_job *j, const struct args *g, const char **why)
{
	const char	*v;
	int64_t		 ms;

	j->opts.from_ms = j->opts.to_ms = LEDGER_NO_TIME;
	if ((v = arg(g, "from")) != NULL) {
		if (iso_parse_ms(v, strlen(v), &ms)) {
			*why = "from is an ISO-8601 time";
			return -1;
		}
		j->opts.from_ms = ms;
	}
	if ((v = arg(g, "to")) != NULL) {
		if (iso_parse_ms(v, strlen(v), &ms)) {
			*why = "to is an ISO-8601 time";
			return -1;
		}
		j->opts.to_ms = ms;
	}
	if ((v = arg(g, "include-automated")) != NULL &&
	    arg_bool(v, &j->opts.include_automated)) {
		*why = "include-automated is true or false";
		return -1;
	}
	return 0;
}

static int
get_issues(struct api *a, struct lws *wsi, struct api_request *r,
    const struct args *g, int one)
{
	static const char *const known[] = { "type", "status", "from", "to",
		"include-automated", "limit", NULL };
	static const char *const known_one[] = { "from", "to",
		"include-automated", NULL };
	struct api_job	 tmp, *j;
	const char	*v, *why = NULL;
	uint64_t	 limit = 0;
	size_t		 i;

	memset(&tmp, 0, sizeof(tmp));
	if (args_unknown(g, one ? known_one : known) != NULL)
		return respond_error(wsi, r, 400, "bad_parameter", one ?
		    "/issues/<id> takes from, to and include-automated" :
		    "/issues takes type, status, from, to, include-automated "
		    "and limit");
	if (fold_filters(&tmp, g, &why))
		return respond_error(wsi, r, 400, "bad_parameter", why);
	if ((v = arg(g, "type")) != NULL) {
		if (*v == '\0' || strlen(v) >= sizeof(tmp.type))
			return respond_error(wsi, r, 400, "bad_parameter",
			    "type is a record type (hitch, usermark, …)");
		strcpy(tmp.type, v);
		tmp.q.type = tmp.type;
	}
	if ((v = arg(g, "status")) != NULL) {
		if (strcmp(v, "open") && strcmp(v, "fixed") &&
		    strcmp(v, "regressed"))
			return respond_error(wsi, r, 400, "bad_parameter",
			    "status is open, fixed or regressed");
		strcpy(tmp.status_f, v);
		tmp.q.status = tmp.status_f;
	}
	if ((v = arg(g, "limit")) != NULL) {
		if (arg_uint(v, 0, 1000000, &limit))
			return respond_error(wsi, r, 400, "bad_parameter",
			    "limit is a whole number (0: all)");
		tmp.q.limit = (size_t)limit;
	}
	if (one) {
		for (i = 0; i < 8; i++)
			r->id[i] = (char)tolower((unsigned char)r->id[i]);
		if (footprint_parse_hex(r->id, 8, &(uint32_t){ 0 }) != 0)
			return respond_error(wsi, r, 404, "not_found",
			    "a footprint id is 8 hex digits");
	}
	if (!one && tmp.opts.from_ms == LEDGER_NO_TIME &&
	    tmp.opts.to_ms == LEDGER_NO_TIME && !tmp.opts.include_automated)
		/* the live fold has the same counts: no file read */
		return respond_json(wsi, r, 200, ledger_issues_json(
		    a->d->ledger, &tmp.q, daemon_now_ms()));
	if ((j = job_new(a, r, fold_work, job_respond)) == NULL)
		return respond_error(wsi, r, 500, "internal", "out of memory");
	j->opts = tmp.opts;
	memcpy(j->type, tmp.type, sizeof(j->type));
	memcpy(j->status_f, tmp.status_f, sizeof(j->status_f));
	j->q.type = tmp.q.type ? j->type : NULL;
	j->q.status = tmp.q.status ? j->status_f : NULL;
	j->q.limit = tmp.q.limit;
	if (one) {
		j->one = 1;
		memcpy(j->id, r->id, sizeof(j->id));
		j->opts.occurrences_of = j->id;
	}
	if (job_start(a, j) != 0)
		return respond_error(wsi, r, 500, "internal",
		    "cannot start the fold");
	return 0;
}

static int
get_history(struct api *a, struct lws *wsi, struct api_request *r,
    const struct args *g)
{
	static const char *const known[] = { "buckets", "include-automated",
		NULL };
	struct api_job	*j;
	uint64_t	 buckets = 24;
	int		 automated = 0;
	const char	*v;

	if (args_unknown(g, known) != NULL)
		return respond_error(wsi, r, 400, "bad_parameter",
		    "/history takes buckets and include-automated");
	if ((v = arg(g, "buckets")) != NULL && arg_uint(v, 1, 1000, &buckets))
		return respond_error(wsi, r, 400, "bad_parameter",
		    "buckets is a whole number from 1 to 1000");
	if ((v = arg(g, "include-automated")) != NULL &&
	    arg_bool(v, &automated))
		return respond_error(wsi, r, 400, "bad_parameter",
		    "include-automated is true or false");
	if (!automated)
		return respond_json(wsi, r, 200, ledger_history_json(
		    a->d->ledger, (int)buckets, daemon_now_ms()));
	if ((j = job_new(a, r, fold_work, job_respond)) == NULL)
		return respond_error(wsi, r, 500, "internal", "out of memory");
	j->opts.from_ms = j->opts.to_ms = LEDGER_NO_TIME;
	j->opts.include_automated = 1;
	j->opts.want_timeline = 1;
	j->history = 1;
	j->buckets = (int)buckets;
	if (job_start(a, j) != 0)
		return respond_error(wsi, r, 500, "internal",
		    "cannot start the fold");
	return 0;
}

/* --- /status ---------------------------------------------------------- */

static cJSON *
tailer_json(struct tailer *t, int started)
{
	struct tailer_status	 st;
	cJSON			*o = cJSON_CreateObject();

	if (!started) {
		cJSON_AddStringToObject(o, "state", "not started");
		return o;
	}
	tailer_status(t, &st);
	cJSON_AddStringToObject(o, "path", t->path);
	cJSON_AddBoolToObject(o, "exists", st.file_exists);
	cJSON_AddStringToObject(o, "backend", st.backend);
	cJSON_AddStringToObject(o, "backendWhy", st.backend_why);
	cJSON_AddNumberToObject(o, "generation", (double)st.generation);
	cJSON_AddNumberToObject(o, "cursor", (double)st.cursor);
	cJSON_AddNumberToObject(o, "size", (double)st.size);
	cJSON_AddNumberToObject(o, "lag", (double)st.lag);
	cJSON_AddNumberToObject(o, "lines", (double)st.lines);
	cJSON_AddNumberToObject(o, "longLines", (double)st.long_lines);
	cJSON_AddNumberToObject(o, "lateLines", (double)st.late_lines);
	cJSON_AddBoolToObject(o, "paused", st.paused);
	cJSON_AddBoolToObject(o, "draining", st.draining);
	if (st.error)
		cJSON_AddStringToObject(o, "error", st.error_why[0] ?
		    st.error_why : strerror(-st.error));
	if (st.save_error)
		cJSON_AddStringToObject(o, "cursorSaveError",
		    strerror(-st.save_error));
	return o;
}

static const char *
loop_level(struct api *a, const char **source)
{
	if (a->loop[0]) {
		*source = "settings";
		return a->loop;
	}
	if (a->d->cfg.loop_level[0]) {
		*source = "config";
		return a->d->cfg.loop_level;
	}
	*source = "default";
	return "off";
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

static cJSON *
status_json(struct api *a)
{
	struct server			*s = a->s;
	struct daemon			*d = a->d;
	struct ledger_counts		 c;
	struct wake_limiter_stats	 ws;
	struct tailer_status		 ts;
	cJSON				*o = cJSON_CreateObject(), *f, *n;
	const char			*src;
	char				 listen[300];

	cJSON_AddNumberToObject(o, "v", 1);
	cJSON_AddStringToObject(o, "version", SLOPTIMIZE_VERSION);
	cJSON_AddNumberToObject(o, "pid", (double)getpid());
	cJSON_AddNumberToObject(o, "uptimeMs",
	    (double)(daemon_now_ms() - d->started_ms));
	cJSON_AddStringToObject(o, "project", d->cfg.project);
	cJSON_AddStringToObject(o, "stateDir", d->state_dir);
	snprintf(listen, sizeof(listen), strchr(d->cfg.listen_host, ':') ?
	    "[%s]:%d" : "%s:%d", d->cfg.listen_host, s->port);
	cJSON_AddStringToObject(o, "listen", listen);
	cJSON_AddBoolToObject(o, "ready", d->perf_ready);
	cJSON_AddNumberToObject(o, "generation", (double)d->generation);
	memset(&ts, 0, sizeof(ts));
	if (d->perf_started)
		tailer_status(&d->perf, &ts);
	cJSON_AddNumberToObject(o, "cursor", (double)ts.cursor);
	cJSON_AddNumberToObject(o, "lag", (double)ts.lag);
	cJSON_AddStringToObject(o, "backend", d->perf_started ? ts.backend :
	    "not started");
	f = cJSON_AddObjectToObject(o, "files");
	cJSON_AddItemToObject(f, "perf", tailer_json(&d->perf,
	    d->perf_started));
	cJSON_AddItemToObject(f, "fixes", tailer_json(&d->fixes_t,
	    d->fixes_started));
	ledger_counts(d->ledger, &c);
	n = cJSON_AddObjectToObject(o, "counts");
	cJSON_AddNumberToObject(n, "lines", (double)c.lines);
	cJSON_AddNumberToObject(n, "folded", (double)c.folded);
	cJSON_AddNumberToObject(n, "incidents", (double)c.incidents);
	cJSON_AddNumberToObject(n, "fixes", (double)c.fixes);
	cJSON_AddNumberToObject(n, "skipped", (double)c.skipped);
	cJSON_AddNumberToObject(n, "malformedFootprints",
	    (double)c.malformed_footprints);
	cJSON_AddNumberToObject(n, "rows", (double)c.rows);
	cJSON_AddNumberToObject(n, "builds", (double)c.builds);
	cJSON_AddItemToObject(o, "skipped", ledger_skipped_json(d->ledger));
	n = cJSON_AddObjectToObject(o, "notifier");
	wake_limiter_stats(d->limiter, &ws);
	cJSON_AddNumberToObject(n, "wakes", (double)d->wakes);
	cJSON_AddNumberToObject(n, "heldBack", (double)ws.held);
	cJSON_AddNumberToObject(n, "heldPending", (double)ws.pending);
	cJSON_AddStringToObject(n, "desktopBackend", desktop_backend());
	cJSON_AddStringToObject(n, "desktop", d->desktop_up ?
	    desktop_state(&d->desktop) : "off");
	if (d->exec_on)
		cJSON_AddStringToObject(n, "exec", d->cfg.exec_cmd);
	cJSON_AddStringToObject(n, "loop", loop_level(a, &src));
	cJSON_AddNumberToObject(o, "subscribers", s->nsubs);
	cJSON_AddNumberToObject(o, "droppedMessages", (double)s->dropped);
	n = cJSON_AddObjectToObject(o, "http");
	cJSON_AddNumberToObject(n, "connections", a->conns);
	cJSON_AddNumberToObject(n, "maxConnections", d->cfg.max_conns);
	cJSON_AddNumberToObject(n, "requests", (double)a->requests);
	cJSON_AddNumberToObject(n, "refused", (double)a->refused);
	cJSON_AddNumberToObject(n, "ledgerBuilds", (double)a->snap_builds);
	cJSON_AddItemToObject(n, "allowHosts", list_json(&d->cfg.allow_hosts));
	cJSON_AddItemToObject(n, "allowOrigins",
	    list_json(&d->cfg.allow_origins));
	cJSON_AddStringToObject(n, "tokenFile", a->token_path);
	cJSON_AddStringToObject(n, "pageDir", a->page_root);
	cJSON_AddStringToObject(n, "pageDirWhy", a->page_why);
	return o;
}

/* --- POST /fixes ------------------------------------------------------ */

static void
fix_work(struct api_job *j)
{
	cJSON		*rec;
	const char	*why = NULL;
	int		 rc;

	rec = cJSON_ParseWithLength(j->body ? j->body : "", j->body_len);
	if (rec == NULL) {
		job_fail(j, 400, "invalid_json", "the body is not JSON");
		return;
	}
	if ((rc = fix_append(j->project, rec, &why)) != 0) {
		if (rc == -EINVAL)
			job_fail(j, 400, "invalid_fix", "%s", why ? why :
			    "not a valid fix record");
		else
			job_fail(j, 500, "internal", "%s: %s", why ? why :
			    "cannot append the fix", strerror(-rc));
		cJSON_Delete(rec);
		return;
	}
	if ((j->out = blob_json(rec)) == NULL) {
		job_fail(j, 500, "internal", "the fix was appended, but the "
		    "answer ran out of memory");
		return;
	}
	j->status = 201;
	j->ctype = "application/json";
}

/* --- settings --------------------------------------------------------- */

static int
valid_loop(const char *v)
{
	return strcmp(v, "off") == 0 || strcmp(v, "propose") == 0 ||
	    strcmp(v, "apply") == 0;
}

static cJSON *
settings_json(struct api *a)
{
	cJSON		*o = cJSON_CreateObject();
	const char	*src, *lv = loop_level(a, &src);

	cJSON_AddNumberToObject(o, "v", 1);
	cJSON_AddStringToObject(o, "loop", lv);
	cJSON_AddStringToObject(o, "source", src);
	return o;
}

/*
 * <state dir>/settings.json: {"v":1,"loop":"propose","updatedAt":ISO}.
 * Written atomically (temp, fsync, rename, fsync of the directory) under
 * a mutex, and only if no later PUT has been written already, so the file
 * and the daemon agree on the last PUT whatever order the pool runs them.
 */
static void
settings_work(struct api_job *j)
{
	char	 tmp[PATH_MAX + 80], dir[PATH_MAX + 80], iso[32], *txt, *slash;
	cJSON	*o = cJSON_CreateObject();
	int	 fd = -1, dfd, rc = 0;
	size_t	 n;

	cJSON_AddNumberToObject(o, "v", 1);
	cJSON_AddStringToObject(o, "loop", j->loop);
	iso_format_ms(j->now_ms, iso);
	cJSON_AddStringToObject(o, "updatedAt", iso);
	txt = cJSON_Print(o);
	cJSON_Delete(o);
	if (txt == NULL) {
		job_fail(j, 500, "internal", "out of memory");
		return;
	}
	n = strlen(txt);
	uv_mutex_lock(j->mu);
	if (j->seq > *j->written) {
		snprintf(tmp, sizeof(tmp), "%s.tmp", j->path);
		if ((fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
		    0644)) == -1 || write(fd, txt, n) != (ssize_t)n ||
		    write(fd, "\n", 1) != 1 || fsync(fd) == -1 ||
		    close(fd) == -1 || (fd = -1, rename(tmp, j->path) == -1))
			rc = -errno;
		if (fd != -1)
			close(fd);
		if (rc == 0) {
			snprintf(dir, sizeof(dir), "%s", j->path);
			if ((slash = strrchr(dir, '/')) != NULL)
				*slash = '\0';
			if ((dfd = open(dir, O_RDONLY | O_DIRECTORY |
			    O_CLOEXEC)) != -1) {
				fsync(dfd);
				close(dfd);
			}
			*j->written = j->seq;
		}
	}
	uv_mutex_unlock(j->mu);
	free(txt);
	if (rc != 0)
		job_fail(j, 500, "internal", "cannot write %s: %s", j->path,
		    strerror(-rc));
}

void
api_settings_apply(struct api *a)
{
	struct daemon	*d;

	if (a == NULL || a->d == NULL || a->loop[0] == '\0')
		return;
	d = a->d;
	snprintf(d->cfg.loop_level, sizeof(d->cfg.loop_level), "%s", a->loop);
	d->cfg.wake.loop = d->cfg.loop_level;
}

static void
settings_done(struct api_job *j)
{
	struct api	*a = j->a;

	if (j->code == NULL && j->seq > a->settings_applied) {
		a->settings_applied = j->seq;
		snprintf(a->loop, sizeof(a->loop), "%s", j->loop);
		api_settings_apply(a);
		log_info("settings: the fix loop is now '%s'", a->loop);
	}
	if (j->r == NULL)
		return;
	if (j->code != NULL)
		respond_error(j->r->wsi, j->r, j->status, j->code, j->msg);
	else
		respond_json(j->r->wsi, j->r, 200, settings_json(a));
}

/*
 * The one piece of state outside struct api: a settings write still on the
 * thread pool at shutdown outlives the api (api_free detaches its jobs),
 * so the lock that orders the writes must outlive it too.
 */
static uv_mutex_t	settings_mu;	/* see settings_work; init once */
static uint64_t		settings_written;
static uv_once_t	settings_once = UV_ONCE_INIT;

static void
settings_mu_init(void)
{
	uv_mutex_init(&settings_mu);
}

static int
put_settings(struct api *a, struct lws *wsi, struct api_request *r)
{
	cJSON		*o, *it;
	struct api_job	*j;
	const char	*lv = NULL;

	if ((o = cJSON_ParseWithLength(r->body ? r->body : "",
	    r->body_len)) == NULL)
		return respond_error(wsi, r, 400, "invalid_json",
		    "the body is not JSON");
	if (!cJSON_IsObject(o)) {
		cJSON_Delete(o);
		return respond_error(wsi, r, 400, "invalid_settings",
		    "settings are a JSON object");
	}
	cJSON_ArrayForEach(it, o) {
		if (strcmp(it->string, "loop") == 0) {
			if (!cJSON_IsString(it) || !valid_loop(it->valuestring))
				break;
			lv = it->valuestring;
		} else if (strcmp(it->string, "v") != 0 &&
		    strcmp(it->string, "source") != 0)
			break;
	}
	if (it != NULL || lv == NULL) {
		cJSON_Delete(o);
		return respond_error(wsi, r, 400, "invalid_settings",
		    "settings are {\"loop\": \"off\"|\"propose\"|\"apply\"}");
	}
	if ((j = job_new(a, r, settings_work, settings_done)) == NULL) {
		cJSON_Delete(o);
		return respond_error(wsi, r, 500, "internal", "out of memory");
	}
	snprintf(j->loop, sizeof(j->loop), "%s", lv);
	cJSON_Delete(o);
	snprintf(j->path, sizeof(j->path), "%s", a->settings_path);
	uv_once(&settings_once, settings_mu_init);
	j->mu = &settings_mu;
	j->written = &settings_written;
	j->seq = ++a->settings_seq;
	if (job_start(a, j) != 0)
		return respond_error(wsi, r, 500, "internal",
		    "cannot start writing the settings");
	return 0;
}

static void
settings_load(struct api *a)
{
	char	 buf[4096];
	cJSON	*o, *lv;
	ssize_t	 n;
	int	 fd;

	if ((fd = open(a->settings_path, O_RDONLY | O_CLOEXEC)) == -1) {
		if (errno != ENOENT)
			log_warn("cannot read %s", a->settings_path);
		return;
	}
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n < 0) {
		log_warn("cannot read %s", a->settings_path);
		return;
	}
	buf[n] = '\0';
	o = cJSON_Parse(buf);
	lv = cJSON_GetObjectItemCaseSensitive(o, "loop");
	if (!cJSON_IsString(lv) || !valid_loop(lv->valuestring)) {
		log_warnx("%s: not {\"loop\": off|propose|apply}; ignored",
		    a->settings_path);
		cJSON_Delete(o);
		return;
	}
	snprintf(a->loop, sizeof(a->loop), "%s", lv->valuestring);
	cJSON_Delete(o);
	if (a->d->cfg.loop_level[0] && strcmp(a->d->cfg.loop_level, a->loop))
		log_info("settings.json sets the fix loop to '%s' (the "
		    "configuration said '%s')", a->loop, a->d->cfg.loop_level);
	api_settings_apply(a);
}

/* --- static files ----------------------------------------------------- */

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
	struct api_request	*r = j->r;

	if (r == NULL)
		return;
	if (j->code != NULL) {
		respond_error(r->wsi, r, j->status, j->code, j->msg);
		return;
	}
	r->page = strncmp(j->ctype, "text/html", 9) == 0;
	serve_cached(r->wsi, r, j->out, j->etag, j->ctype);
}

static int
get_static(struct api *a, struct lws *wsi, struct api_request *r)
{
	struct api_job	*j;
	char		 rel[512];

	if (static_map(r->path, rel, sizeof(rel)) != 0)
		return respond_error(wsi, r, 404, "not_found", "no such file");
	if ((j = job_new(a, r, static_work, static_done)) == NULL)
		return respond_error(wsi, r, 500, "internal", "out of memory");
	snprintf(j->path, sizeof(j->path), "%s", rel);
	snprintf(j->path2, sizeof(j->path2), "%s", a->page_root);
	if (job_start(a, j) != 0)
		return respond_error(wsi, r, 500, "internal",
		    "cannot start reading the file");
	return 0;
}

/* --- the request ------------------------------------------------------ */

static int
dispatch(struct api *a, struct lws *wsi, struct api_request *r)
{
	struct args	g;

	if (args_parse(wsi, &g))
		return respond_error(wsi, r, 400, "bad_parameter",
		    "too many or too long query parameters");
	switch (r->route) {
	case R_STATUS:
		return g.n ? respond_error(wsi, r, 400, "bad_parameter",
		    "/status takes no parameters") :
		    respond_json(wsi, r, 200, status_json(a));
	case R_LEDGER:
		return get_ledger(a, wsi, r, &g);
	case R_ISSUES:
		return get_issues(a, wsi, r, &g, 0);
	case R_ISSUE:
		return get_issues(a, wsi, r, &g, 1);
	case R_HISTORY:
		return get_history(a, wsi, r, &g);
	case R_SETTINGS:
		return respond_json(wsi, r, 200, settings_json(a));
	case R_EVENTS:
		return respond_error(wsi, r, 426, "upgrade_required",
		    "this is the WebSocket events socket");
	case R_STATIC:
		return get_static(a, wsi, r);
	default:
		return respond_error(wsi, r, 404, "not_found", "no such route");
	}
}

/* A body-carrying request whose body is in: run it. */
static int
dispatch_body(struct api *a, struct lws *wsi, struct api_request *r)
{
	struct api_job	*j;

	if (r->route == R_SETTINGS)
		return put_settings(a, wsi, r);
	if ((j = job_new(a, r, fix_work, job_respond)) == NULL)
		return respond_error(wsi, r, 500, "internal", "out of memory");
	j->body = r->body;
	j->body_len = r->body_len;
	r->body = NULL;
	r->body_len = 0;
	if (job_start(a, j) != 0)
		return respond_error(wsi, r, 500, "internal",
		    "cannot start the append");
	return 0;
}

static int
refuse(struct api *a, struct lws *wsi, struct api_request *r, unsigned status,
    const char *code, const char *message)
{
	a->refused++;
	log_debug("http: %u %s %s: %s", status, code, r->path, message);
	return respond_error(wsi, r, status, code, message);
}

static int
refuse_fatal(struct api *a, struct lws *wsi, struct api_request *r,
    unsigned status, const char *code, const char *message)
{
	r->close = 1;
	return refuse(a, wsi, r, status, code, message);
}

/*
 * Host, then Origin: shared by HTTP requests and WebSocket upgrades.
 * Returns 0, or the refusal's status with code/message set.
 */
static unsigned
check_peer(struct api *a, struct lws *wsi, struct api_request *r,
    const char **code, const char **message)
{
	char	host[256];
	int	n;

	if ((n = hdr(wsi, WSI_TOKEN_HOST, host, sizeof(host))) <= 0) {
		*code = n == 0 ? "no_host" : "bad_host";
		*message = "a Host header naming this machine is required";
		return n == 0 ? 400 : 421;
	}
	if (!host_allowed(a, host)) {
		*code = "bad_host";
		*message = "this Host is not one this daemon answers to "
		    "(loopback names, or --allow-host)";
		return 421;
	}
	n = hdr(wsi, WSI_TOKEN_ORIGIN, r->origin, sizeof(r->origin));
	if (n < 0 || (n > 0 && !origin_allowed(a, r->origin, host))) {
		r->origin[0] = '\0';
		*code = "bad_origin";
		*message = "this Origin is not allowed (loopback origins, or "
		    "--allow-origin)";
		return 403;
	}
	r->origin_ok = n > 0;
	return 0;
}

static int	http_request(struct api *, struct lws *, struct api_request *,
		    const char *);

int
api_http(struct api *a, struct lws *wsi, struct api_request *r,
    const char *uri)
{
	int	rc;

	api_request_free(a, r);
	r->wsi = wsi;
	r->method = method_of(wsi);
	/* answer at once unless a body is still to come; r must not be
	 * touched after: an answer written now may have freed it */
	if (r->method != M_POST && r->method != M_PUT)
		a->sync_wsi = wsi;
	rc = http_request(a, wsi, r, uri);
	a->sync_wsi = NULL;
	return rc;
}

static int
http_request(struct api *a, struct lws *wsi, struct api_request *r,
    const char *uri)
{
	const char	*code, *message;
	char		 ct[128], cl[32];
	unsigned	 st;
	uint64_t	 len = 0;
	int		 n;

	r->head = r->method == M_HEAD;
	a->requests++;
	if (strlen(uri) >= sizeof(r->path))
		return refuse(a, wsi, r, 400, "bad_path", "the path is too long");
	snprintf(r->path, sizeof(r->path), "%s", uri);
	if (a->conns > a->d->cfg.max_conns) {
		a->busy++;
		return refuse_fatal(a, wsi, r, 503, "busy",
		    "too many connections; retry");
	}
	if ((st = check_peer(a, wsi, r, &code, &message)) != 0)
		return (r->method == M_POST || r->method == M_PUT) ?
		    refuse_fatal(a, wsi, r, st, code, message) :
		    refuse(a, wsi, r, st, code, message);
	r->route = route_of(r->path, r->id);
	if (r->route == R_NONE)
		return refuse(a, wsi, r, 404, "not_found", "no such route");
	if (hdr(wsi, WSI_TOKEN_HTTP_IF_NONE_MATCH, r->inm, sizeof(r->inm)) < 0)
		r->inm[0] = '\0';	/* too long to be ours: no match */
	if (r->method == M_OPTIONS) {
		r->allow = allow_of[r->route];
		/* CORS preflight: the Origin, if any, passed check_peer */
		r->preflight = 1;
		r->pna = lws_hdr_custom_length(wsi,
		    "access-control-request-private-network:", 39) > 0;
		r->cache = "max-age=600";
		return respond_blob(wsi, r, 204, NULL, NULL);
	}
	n = r->method == M_GET || r->method == M_HEAD ? (r->route != R_FIXES) :
	    r->method == M_POST ? r->route == R_FIXES :
	    r->method == M_PUT ? r->route == R_SETTINGS : 0;
	if (!n || (r->route == R_EVENTS && r->method == M_HEAD)) {
		r->allow = allow_of[r->route];
		return refuse_fatal(a, wsi, r, 405, "method_not_allowed",
		    "this route does not take that method");
	}
	if (lws_hdr_total_length(wsi, WSI_TOKEN_HTTP_TRANSFER_ENCODING))
		return refuse_fatal(a, wsi, r, 411, "length_required",
		    "send the body with a Content-Length, not chunked");
	if ((n = hdr(wsi, WSI_TOKEN_HTTP_CONTENT_LENGTH, cl, sizeof(cl))) != 0 &&
	    (n < 0 || arg_uint(cl, 0, UINT64_MAX, &len)))
		return refuse_fatal(a, wsi, r, 400, "bad_length",
		    "Content-Length is not a number");
	if (r->method != M_POST && r->method != M_PUT) {
		if (len > 0)
			return refuse_fatal(a, wsi, r, 400, "unexpected_body",
			    "this method takes no body");
		return dispatch(a, wsi, r);
	}

	/* writes */
	if (n == 0)
		return refuse_fatal(a, wsi, r, 411, "length_required",
		    "a Content-Length is required");
	if (len > API_MAX_BODY)
		return len > DRAIN_MAX ?
		    refuse_fatal(a, wsi, r, 413, "body_too_large",
		    "request bodies are at most 1 MiB") :
		    refuse(a, wsi, r, 413, "body_too_large",
		    "request bodies are at most 1 MiB");
	if (hdr(wsi, WSI_TOKEN_HTTP_CONTENT_TYPE, ct, sizeof(ct)) <= 0 ||
	    !json_type(ct))
		return refuse(a, wsi, r, 415, "unsupported_media_type",
		    "send Content-Type: application/json");
	if (!r->origin_ok && !token_ok(a, wsi))
		return refuse(a, wsi, r, 403, "forbidden", "writes need an "
		    "allowed Origin or Authorization: Bearer <token> (the "
		    "token file is in the state directory)");
	if (len == 0)
		return respond_error(wsi, r, 400, "invalid_json",
		    "the body is empty");
	if ((r->body = malloc(len + 1)) == NULL)
		return respond_fatal(wsi, r, 500, "internal", "out of memory");
	r->body[0] = '\0';
	r->body_cap = (size_t)len;
	r->in_body = 1;
	return 0;
}

int
api_http_body(struct api *a, struct lws *wsi, struct api_request *r,
    const void *in, size_t len)
{
	(void)a;
	(void)wsi;
	if (!r->in_body || r->answered || len == 0)
		return 0;
	if (r->body_len + len > r->body_cap)
		return -1;	/* more than it said: off the rails */
	memcpy(r->body + r->body_len, in, len);
	r->body_len += len;
	r->body[r->body_len] = '\0';
	return 0;
}

int
api_http_body_done(struct api *a, struct lws *wsi, struct api_request *r)
{
	if (!r->in_body || r->answered)
		return 0;
	r->in_body = 0;
	return dispatch_body(a, wsi, r);
}

void
api_request_free(struct api *a, struct api_request *r)
{
	if (r->job != NULL) {
		r->job->r = NULL;
		r->job = NULL;
	}
	if (a != NULL)
		waiter_unlink(a, r);
	free(r->body);
	blob_unref(r->out);
	memset(r, 0, sizeof(*r));
}

/* --- WebSocket upgrades ----------------------------------------------- */

int
api_confirm_upgrade(struct api *a, struct lws *wsi, const char *up)
{
	struct api_request	 r;
	unsigned char		 hdrs[LWS_PRE + 2048], *start = hdrs + LWS_PRE;
	unsigned char		*p = start, *end = hdrs + sizeof(hdrs) - 1;
	const char		*code = NULL, *message = NULL;
	char			 uri[256];
	unsigned		 st;
	struct api_blob		*b;
	int			 rc = 1;

	memset(&r, 0, sizeof(r));
	a->requests++;
	if (strcasecmp(up, "websocket") != 0) {
		st = 400;
		code = "bad_upgrade";
		message = "only WebSocket upgrades are served";
	} else if (lws_hdr_copy(wsi, uri, sizeof(uri), WSI_TOKEN_GET_URI) <= 0 ||
	    strcmp(uri, PREFIX "/events") != 0) {
		st = 404;
		code = "not_found";
		message = "the events socket is " PREFIX "/events";
	} else if (a->conns > a->d->cfg.max_conns) {
		st = 503;
		code = "busy";
		message = "too many connections; retry";
	} else if ((st = check_peer(a, wsi, &r, &code, &message)) == 0)
		return 0;
	/* refuse with a JSON answer written now: the connection is still
	 * plain HTTP, and lws completes the transaction when we return 1 */
	a->refused++;
	log_debug("events: upgrade refused: %u %s", st, message);
	if ((b = blob_json(error_json(code, message))) == NULL)
		return -1;
	r.status = st;
	r.ctype = "application/json";
	r.cache = "no-store";
	r.out = b;
	r.close = 1;
	if (build_headers(wsi, &r, &p, end) ||
	    lws_finalize_write_http_header(wsi, start, &p, end) ||
	    lws_write(wsi, b->data + LWS_PRE, b->len, LWS_WRITE_HTTP_FINAL) !=
	    (int)b->len)
		rc = -1;
	blob_unref(b);
	(void)rc;
	return -1;	/* hang up: we said connection: close */
}

int
api_ws_allowed(struct api *a, struct lws *wsi)
{
	struct api_request	 r;
	const char		*code, *message;

	memset(&r, 0, sizeof(r));
	return check_peer(a, wsi, &r, &code, &message) == 0;
}

/* --- life cycle ------------------------------------------------------- */

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

void
api_tune(struct api *a, struct lws_context_creation_info *info)
{
	unsigned	m = a->d->cfg.max_conns;

	info->max_http_header_data = 8192;
	/* one header buffer per connection that is sending its headers:
	 * enough for every connection we keep, so a crowd of slow clients
	 * never makes a prompt one wait for a buffer */
	info->max_http_header_pool = (unsigned short)(m + 16);
	info->timeout_secs = a->d->cfg.http_timeout;
	info->keepalive_timeout = 30;
	info->server_string = "sloptimized";
}

/* 32 random bytes as 64 hex digits in <state>/token, mode 0600, created
 * at first start (temp, fsync, rename) and kept across restarts. */
static int
token_load(struct api *a)
{
	char		 buf[80], tmp[PATH_MAX + 64];
	unsigned char	 raw[32];
	struct stat	 st;
	ssize_t		 n;
	int		 fd, i, rc = 0;

	snprintf(a->token_path, sizeof(a->token_path), "%s/token",
	    a->d->state_dir);
	if ((fd = open(a->token_path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)) != -1) {
		n = read(fd, buf, sizeof(buf) - 1);
		if (fstat(fd, &st) == 0 && (st.st_mode & 077) != 0 &&
		    fchmod(fd, 0600) == 0)
			log_warnx("%s was readable by others; now mode 0600",
			    a->token_path);
		close(fd);
		if (n >= 64) {
			buf[n] = '\0';
			for (i = 0; i < 64 && isxdigit((unsigned char)buf[i]);
			    i++)
				;
			if (i == 64 && (buf[64] == '\0' || buf[64] == '\n')) {
				memcpy(a->token, buf, 64);
				a->token[64] = '\0';
				return 0;
			}
		}
		log_warnx("%s is not 64 hex digits: making a new token",
		    a->token_path);
	} else if (errno != ENOENT) {
		rc = -errno;
		log_warn("cannot read %s", a->token_path);
		return rc;
	}
	if (uv_random(NULL, NULL, raw, sizeof(raw), 0, NULL) != 0) {
		log_warnx("no random bytes for the token");
		return -EIO;
	}
	for (i = 0; i < 32; i++)
		snprintf(a->token + 2 * i, 3, "%02x", raw[i]);
	snprintf(buf, sizeof(buf), "%s\n", a->token);
	snprintf(tmp, sizeof(tmp), "%s.tmp", a->token_path);
	unlink(tmp);
	if ((fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600)) ==
	    -1 || write(fd, buf, 65) != 65 || fsync(fd) == -1 ||
	    close(fd) == -1 || (fd = -1, rename(tmp, a->token_path) == -1)) {
		rc = -errno;
		log_warn("cannot write %s", a->token_path);
		if (fd != -1)
			close(fd);
		a->token[0] = '\0';
		return rc;
	}
	log_info("made a new API token in %s", a->token_path);
	return 0;
}

int
api_init(struct api *a, struct server *s, struct daemon *d)
{
	struct jscan_result	jr;
	int			rc;

	memset(a, 0, sizeof(*a));
	a->s = s;
	a->d = d;
	/* jscan builds a table on first use: do it here, on the loop
	 * thread, before any pool thread scans a line */
	(void)jscan_object("{}", 2, &jr);
	if ((rc = token_load(a)) != 0)
		return rc;
	snprintf(a->settings_path, sizeof(a->settings_path),
	    "%s/settings.json", d->state_dir);
	settings_load(a);
	static_find_root(d->cfg.page_dir, a->page_root, sizeof(a->page_root),
	    &a->page_why);
	if (a->page_root[0] == '\0')
		log_warnx("no page-runtime/ directory found: GET / answers 404 "
		    "(use --page-dir)");
	else
		log_debug("serving the panel from %s (%s)", a->page_root,
		    a->page_why);
	if (!d->cfg.listen_loopback)
		log_info("listening beyond loopback: writes need an allowed "
		    "Origin or the bearer token in %s", a->token_path);
	return 0;
}

void
api_free(struct api *a)
{
	struct api_job	*j;
	int		 i;

	for (j = a->jobs; j != NULL; j = j->next) {
		j->a = NULL;
		if (j->r != NULL)
			j->r->job = NULL;
		j->r = NULL;
	}
	a->jobs = NULL;
	for (i = 0; i < API_SNAPS; i++) {
		blob_unref(a->snaps[i].body);
		a->snaps[i].body = NULL;
		a->snaps[i].waiters = NULL;
	}
}

/*
 * libwebsockets resolves the listen address through getifaddrs() and,
 * when that fails, binds the wildcard address and says nothing.  Look at
 * what we really listen on: the listening TCP sockets of this process on
 * our port must all be bound to the configured address.
 */
int
api_check_bound(struct api *a, const char *host, int port)
{
	struct sockaddr_storage	ss;
	struct in_addr		want4;
	struct in6_addr		want6;
	int			fd, acc, v6, found = 0;
	socklen_t		len;
	char			got[INET6_ADDRSTRLEN];

	(void)a;
	v6 = strchr(host, ':') != NULL;
	if ((v6 ? inet_pton(AF_INET6, host, &want6) :
	    inet_pton(AF_INET, host, &want4)) != 1)
		return -EADDRNOTAVAIL;
	for (fd = 0; fd < 4096; fd++) {
		if (fcntl(fd, F_GETFD) == -1)
			continue;
		len = sizeof(acc);
		if (getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &acc, &len) ||
		    !acc)
			continue;
		len = sizeof(ss);
		if (getsockname(fd, (struct sockaddr *)&ss, &len))
			continue;
		if (ss.ss_family == AF_INET) {
			struct sockaddr_in	*in = (void *)&ss;

			if (ntohs(in->sin_port) != port)
				continue;
			found++;
			if (!v6 && in->sin_addr.s_addr == want4.s_addr)
				continue;
			inet_ntop(AF_INET, &in->sin_addr, got, sizeof(got));
		} else if (ss.ss_family == AF_INET6) {
			struct sockaddr_in6	*in6 = (void *)&ss;

			if (ntohs(in6->sin6_port) != port)
				continue;
			found++;
			if (v6 && memcmp(&in6->sin6_addr, &want6,
			    sizeof(want6)) == 0)
				continue;
			inet_ntop(AF_INET6, &in6->sin6_addr, got, sizeof(got));
		} else
			continue;
		log_warnx("listening on %s port %d, not on %s as configured "
		    "(libwebsockets falls back to the wildcard address when "
		    "it cannot resolve the interface): refusing to run", got,
		    port, host);
		return -EADDRNOTAVAIL;
	}
	if (found == 0) {
		log_warnx("cannot find our listening socket on port %d", port);
		return -EADDRNOTAVAIL;
	}
	return 0;
}
