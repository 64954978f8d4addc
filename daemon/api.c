/*
 * api — HTTP routes of the daemon (see api.h).
 *
 * Every response body is JSON built with cJSON, rendered once into a
 * buffer with LWS_PRE bytes of headroom, and sent in pieces when the
 * socket is writable.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>
#include <libwebsockets.h>

#include "daemon/api.h"
#include "daemon/daemon.h"
#include "daemon/log.h"
#include "daemon/server.h"

#define WRITE_CHUNK	(64 * 1024)
#define PREFIX		"/api/sloptimize"

void
api_tune(struct lws_context_creation_info *info)
{
	info->max_http_header_data = 8192;
	info->max_http_header_pool = 64;
	info->timeout_secs = 10;
	info->keepalive_timeout = 30;
}

/* An Origin a browser sends from a page served by this machine. */
static int
origin_loopback(const char *o)
{
	static const char *const ok[] = {
		"http://localhost", "http://127.0.0.1", "http://[::1]",
		"https://localhost", "https://127.0.0.1", "https://[::1]",
	};
	size_t	i, n;

	for (i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		n = strlen(ok[i]);
		if (strncmp(o, ok[i], n) == 0 &&
		    (o[n] == '\0' || o[n] == ':'))
			return 1;
	}
	return 0;
}

int
api_ws_allowed(struct server *s, struct lws *wsi)
{
	char	origin[256];

	(void)s;
	/* No Origin: not a browser (curl, sloptimize watch).  A browser
	 * page may only subscribe when it is served from this machine. */
	if (lws_hdr_copy(wsi, origin, sizeof(origin), WSI_TOKEN_ORIGIN) <= 0)
		return 1;
	if (origin_loopback(origin))
		return 1;
	log_warnx("events: refused a WebSocket from origin %s", origin);
	return 0;
}

void
api_request_free(struct api_request *r)
{
	free(r->body);
	free(r->out);
	memset(r, 0, sizeof(*r));
}

/* Queue `o` (consumed) as the response with `status`. */
static int
respond(struct lws *wsi, struct api_request *r, unsigned status, cJSON *o)
{
	unsigned char	 hdr[LWS_PRE + 1024], *start = hdr + LWS_PRE, *p = start;
	unsigned char	*end = hdr + sizeof(hdr) - 1;
	char		*txt;
	size_t		 n;

	txt = o ? cJSON_PrintUnformatted(o) : NULL;
	cJSON_Delete(o);
	if (txt == NULL)
		return -1;
	n = strlen(txt);
	free(r->out);
	if ((r->out = malloc(LWS_PRE + n + 1)) == NULL) {
		free(txt);
		return -1;
	}
	memcpy(r->out + LWS_PRE, txt, n);
	r->out[LWS_PRE + n] = '\n';
	free(txt);
	r->out_len = n + 1;
	r->out_pos = 0;
	if (lws_add_http_common_headers(wsi, status, "application/json",
	    r->out_len, &p, end) ||
	    lws_add_http_header_by_name(wsi,
	    (const unsigned char *)"cache-control:",
	    (const unsigned char *)"no-store", 8, &p, end) ||
	    lws_finalize_write_http_header(wsi, start, &p, end))
		return -1;
	r->headers_sent = 1;
	lws_callback_on_writable(wsi);
	return 0;
}

static int
respond_error(struct lws *wsi, struct api_request *r, unsigned status,
    const char *code, const char *message)
{
	cJSON	*o = cJSON_CreateObject(), *e;

	e = cJSON_AddObjectToObject(o, "error");
	cJSON_AddStringToObject(e, "code", code);
	cJSON_AddStringToObject(e, "message", message);
	return respond(wsi, r, status, o);
}

int
api_http_writeable(struct server *s, struct lws *wsi, struct api_request *r)
{
	size_t	n;
	int	final;

	(void)s;
	if (r->out == NULL || r->out_pos >= r->out_len)
		return 0;
	n = r->out_len - r->out_pos;
	if (n > WRITE_CHUNK)
		n = WRITE_CHUNK;
	final = r->out_pos + n == r->out_len;
	if (lws_write(wsi, (unsigned char *)r->out + LWS_PRE + r->out_pos, n,
	    final ? LWS_WRITE_HTTP_FINAL : LWS_WRITE_HTTP) != (int)n)
		return -1;
	r->out_pos += n;
	if (!final) {
		lws_callback_on_writable(wsi);
		return 0;
	}
	free(r->out);
	r->out = NULL;
	return lws_http_transaction_completed(wsi) ? -1 : 0;
}

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
	cJSON_AddBoolToObject(o, "paused", st.paused);
	cJSON_AddBoolToObject(o, "draining", st.draining);
	if (st.error)
		cJSON_AddStringToObject(o, "error", strerror(-st.error));
	if (st.save_error)
		cJSON_AddStringToObject(o, "cursorSaveError",
		    strerror(-st.save_error));
	return o;
}

static cJSON *
status_json(struct server *s)
{
	struct daemon			*d = s->d;
	struct ledger_counts		 c;
	struct wake_limiter_stats	 ws;
	struct desktop_stats		 ds;
	struct exec_stats		 es;
	cJSON				*o = cJSON_CreateObject(), *f, *n;
	char				 listen[300];

	cJSON_AddNumberToObject(o, "v", 1);
	cJSON_AddStringToObject(o, "version", SLOPTIMIZE_VERSION);
	cJSON_AddNumberToObject(o, "pid", (double)getpid());
	cJSON_AddNumberToObject(o, "uptimeMs",
	    (double)(daemon_now_ms() - d->started_ms));
	cJSON_AddStringToObject(o, "project", d->cfg.project);
	cJSON_AddStringToObject(o, "stateDir", d->state_dir);
	snprintf(listen, sizeof(listen), "%s:%d", d->cfg.listen_host, s->port);
	cJSON_AddStringToObject(o, "listen", listen);
	cJSON_AddBoolToObject(o, "ready", d->perf_ready);
	cJSON_AddNumberToObject(o, "generation", (double)d->generation);
	f = cJSON_AddObjectToObject(o, "files");
	cJSON_AddItemToObject(f, "perf", tailer_json(&d->perf,
	    d->perf_started));
	cJSON_AddItemToObject(f, "fixes", tailer_json(&d->fixes_t, 1));
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
	cJSON_AddStringToObject(n, "desktop", desktop_state(&d->desktop));
	desktop_stats(&d->desktop, &ds);
	(void)ds;
	if (d->exec_on) {
		exec_stats(&d->exec, &es);
		cJSON_AddStringToObject(n, "exec", d->cfg.exec_cmd);
	}
	cJSON_AddNumberToObject(o, "subscribers", s->nsubs);
	cJSON_AddNumberToObject(o, "droppedMessages", (double)s->dropped);
	return o;
}

static int
route_get(struct server *s, struct lws *wsi, struct api_request *r)
{
	const char	*path = r->uri;

	if (strcmp(path, PREFIX "/status") == 0)
		return respond(wsi, r, 200, status_json(s));
	if (strcmp(path, PREFIX "/issues") == 0)
		return respond(wsi, r, 200, ledger_issues_json(s->d->ledger,
		    NULL, daemon_now_ms()));
	if (strcmp(path, PREFIX "/history") == 0)
		return respond(wsi, r, 200, ledger_history_json(s->d->ledger,
		    24, daemon_now_ms()));
	return respond_error(wsi, r, 404, "not_found", "no such route");
}

int
api_http(struct server *s, struct lws *wsi, struct api_request *r,
    const char *uri)
{
	memset(r, 0, sizeof(*r));
	snprintf(r->uri, sizeof(r->uri), "%s", uri);
	if (lws_hdr_total_length(wsi, WSI_TOKEN_GET_URI) > 0) {
		strcpy(r->method, "GET");
		return route_get(s, wsi, r);
	}
	return respond_error(wsi, r, 405, "method_not_allowed",
	    "this route takes GET");
}

int
api_http_body(struct server *s, struct lws *wsi, struct api_request *r,
    const void *in, size_t len)
{
	char	*nb;

	(void)s;
	(void)wsi;
	if (r->body_too_big || r->body_len + len > API_MAX_BODY) {
		r->body_too_big = 1;
		return 0;
	}
	if ((nb = realloc(r->body, r->body_len + len + 1)) == NULL)
		return -1;
	r->body = nb;
	memcpy(r->body + r->body_len, in, len);
	r->body_len += len;
	r->body[r->body_len] = '\0';
	return 0;
}

int
api_http_body_done(struct server *s, struct lws *wsi, struct api_request *r)
{
	(void)s;
	if (r->body_too_big)
		return respond_error(wsi, r, 413, "body_too_large",
		    "request bodies are at most 1 MiB");
	return respond_error(wsi, r, 405, "method_not_allowed",
	    "no route takes a body yet");
}
