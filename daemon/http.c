/*
 * http — blobs, answers, headers and writing (see http.h).
 *
 * The body of an answer is shared between connections: lws_write() must
 * not touch the bytes before the piece it is given.  On HTTP/1 without a
 * compression transform it does not (it only writes the bytes given);
 * HTTP/2 would frame in place, so h2c upgrades are refused (guard.c) and
 * prior knowledge is not enabled.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libwebsockets.h>

#include "daemon/http.h"

#define WRITE_CHUNK	(64 * 1024)

#define CSP_PAGE	"default-src 'self'; connect-src 'self' ws: wss:; " \
			"style-src 'self' 'unsafe-inline'; img-src 'self' data:; " \
			"frame-ancestors 'none'"
#define CSP_DATA	"default-src 'none'; frame-ancestors 'none'"

/* --- blobs -------------------------------------------------------------- */

struct http_blob *
http_blob_new(const char *txt, size_t n, int newline)
{
	struct http_blob	*b = malloc(sizeof(*b) + LWS_PRE + n + 1);

	if (b == NULL)
		return NULL;
	b->refs = 1;
	memcpy(b->data + LWS_PRE, txt, n);
	if (newline)
		b->data[LWS_PRE + n++] = '\n';
	b->len = n;
	return b;
}

struct http_blob *
http_blob_ref(struct http_blob *b)
{
	if (b != NULL)
		b->refs++;
	return b;
}

void
http_blob_unref(struct http_blob *b)
{
	if (b != NULL && --b->refs == 0)
		free(b);
}

struct http_blob *
http_blob_json(cJSON *o)
{
	char			*txt = o ? cJSON_PrintUnformatted(o) : NULL;
	struct http_blob	*b;

	cJSON_Delete(o);
	if (txt == NULL)
		return NULL;
	b = http_blob_new(txt, strlen(txt), 1);
	free(txt);
	return b;
}

void
http_blob_writer_init(struct http_blob_writer *w, int minify,
    const atomic_int *stop)
{
	memset(w, 0, sizeof(*w));
	w->minify = minify;
	w->stop = stop;
}

/* Room for n more bytes (and a newline).  Doubling: a 100 MB answer is
 * moved a few times at most, and realloc of a block this large remaps
 * rather than copies. */
static int
writer_room(struct http_blob_writer *w, size_t n)
{
	size_t			 len = w->b ? w->b->len : 0, cap;
	struct http_blob	*nb;

	if (len + n + 1 <= w->cap)
		return 0;
	for (cap = w->cap ? w->cap : 64 * 1024; cap < len + n + 1; cap *= 2)
		;
	if ((nb = realloc(w->b, sizeof(*nb) + LWS_PRE + cap)) == NULL)
		return -ENOMEM;
	if (w->b == NULL) {
		nb->refs = 1;
		nb->len = 0;
	}
	w->b = nb;
	w->cap = cap;
	return 0;
}

int
http_blob_put(void *arg, const void *data, size_t len)
{
	struct http_blob_writer	*w = arg;
	const unsigned char	*p = data;
	unsigned char		*o;
	size_t			 i;

	if (w->stop != NULL && atomic_load(w->stop))
		return -ECANCELED;
	if (writer_room(w, len) != 0)
		return -ENOMEM;
	o = w->b->data + LWS_PRE + w->b->len;
	if (!w->minify) {
		memcpy(o, p, len);
		w->b->len += len;
		return 0;
	}
	/* cJSON_Print's layout is tabs, newlines and the space after a
	 * comma, all outside strings; inside one, a quote ends it unless
	 * escaped */
	for (i = 0; i < len; i++) {
		if (w->in_str) {
			if (w->esc)
				w->esc = 0;
			else if (p[i] == '\\')
				w->esc = 1;
			else if (p[i] == '"')
				w->in_str = 0;
		} else if (p[i] == ' ' || p[i] == '\t' || p[i] == '\n' ||
		    p[i] == '\r')
			continue;
		else if (p[i] == '"')
			w->in_str = 1;
		*o++ = p[i];
	}
	w->b->len = (size_t)(o - (w->b->data + LWS_PRE));
	return 0;
}

struct http_blob *
http_blob_writer_finish(struct http_blob_writer *w, int newline)
{
	struct http_blob	*b, *nb;

	if (writer_room(w, 0) != 0) {
		http_blob_writer_free(w);
		return NULL;
	}
	b = w->b;
	if (newline)
		b->data[LWS_PRE + b->len++] = '\n';
	if ((nb = realloc(b, sizeof(*b) + LWS_PRE + b->len + 1)) != NULL)
		b = nb;		/* else the larger block serves as well */
	memset(w, 0, sizeof(*w));
	return b;
}

void
http_blob_writer_free(struct http_blob_writer *w)
{
	free(w->b);
	memset(w, 0, sizeof(*w));
}

cJSON *
http_error_json(const char *code, const char *message)
{
	cJSON	*o = cJSON_CreateObject(), *e;

	e = cJSON_AddObjectToObject(o, "error");
	cJSON_AddStringToObject(e, "code", code);
	cJSON_AddStringToObject(e, "message", message);
	return o;
}

/* --- the request -------------------------------------------------------- */

void
http_request_begin(struct http_request *r, struct lws *wsi)
{
	http_request_free(r);
	r->wsi = wsi;
}

void
http_request_free(struct http_request *r)
{
	http_cancel_fn	*cancel = r->cancel;

	r->cancel = NULL;
	if (cancel != NULL)
		cancel(r, r->cancel_arg);
	free(r->body);
	http_blob_unref(r->out);
	memset(r, 0, sizeof(*r));
}

/* --- answers ------------------------------------------------------------ */

void
http_answer(struct http_request *r, unsigned status, const char *ctype,
    struct http_blob *b)
{
	if (b == NULL && status != 204 && status != 304) {
		/* out of memory: a fixed answer that needs none */
		static const char	 oom[] = "{\"error\":{\"code\":\"internal\","
					    "\"message\":\"out of memory\"}}";

		status = 500;
		ctype = "application/json";
		b = http_blob_new(oom, sizeof(oom) - 1, 1);
		r->close = b == NULL;
	}
	http_blob_unref(r->out);
	r->out = b;
	r->out_pos = 0;
	r->status = status;
	r->ctype = ctype;
	r->answered = 1;
	r->headers_sent = 0;
	if (r->waiting && r->wsi != NULL)	/* the API's bound on the wait */
		lws_set_timer_usecs(r->wsi, LWS_SET_TIMER_USEC_CANCEL);
	r->waiting = 0;
	if (r->cache == NULL)
		r->cache = "no-store";
	/* inside its own callback the plumbing writes it on the way out */
	if (!r->in_callback && r->wsi != NULL)
		lws_callback_on_writable(r->wsi);
}

void
http_answer_json(struct http_request *r, unsigned status, cJSON *o)
{
	http_answer(r, status, "application/json", http_blob_json(o));
}

void
http_answer_error(struct http_request *r, unsigned status, const char *code,
    const char *message)
{
	r->etag[0] = '\0';
	r->cache = "no-store";
	r->page = 0;
	http_answer_json(r, status, http_error_json(code, message));
}

void
http_answer_fatal(struct http_request *r, unsigned status, const char *code,
    const char *message)
{
	r->close = 1;
	http_answer_error(r, status, code, message);
}

void
http_answer_cached(struct http_request *r, struct http_blob *b,
    const char *etag, const char *ctype)
{
	snprintf(r->etag, sizeof(r->etag), "%s", etag);
	r->cache = "no-cache";
	if (r->inm[0] && http_etag_match(r->inm, etag))
		http_answer(r, 304, ctype, NULL);
	else
		http_answer(r, 200, ctype, http_blob_ref(b));
}

/* --- writing ------------------------------------------------------------ */

static int
add_hdr(struct lws *wsi, const char *name, const char *value,
    unsigned char **p, unsigned char *end)
{
	return lws_add_http_header_by_name(wsi, (const unsigned char *)name,
	    (const unsigned char *)value, (int)strlen(value), p, end);
}

int
http_headers(struct lws *wsi, struct http_request *r, unsigned char **p,
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
	if (r->retry_after) {
		char	s[16];

		snprintf(s, sizeof(s), "%u", r->retry_after);
		if (add_hdr(wsi, "retry-after:", s, p, end))
			return -1;
	}
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

/* The answer is out: the next request may come, or the connection goes.
 * Completing the transaction may free r. */
static int
finish(struct lws *wsi, struct http_request *r)
{
	int	close = r->close;

	http_blob_unref(r->out);
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
 */
int
http_pump(struct lws *wsi, struct http_request *r)
{
	unsigned char	 hdr[LWS_PRE + 2048], *start = hdr + LWS_PRE, *p = start;
	unsigned char	*end = hdr + sizeof(hdr) - 1;
	size_t		 n;
	int		 final;

	if (!r->answered)
		return 0;
	/* the client has this long to take each piece (see http.h) */
	if (r->write_timeout)
		lws_set_timeout(wsi, PENDING_TIMEOUT_HTTP_CONTENT,
		    (int)r->write_timeout);
	if (!r->headers_sent) {
		if (http_headers(wsi, r, &p, end) ||
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
http_flush(struct lws *wsi, struct http_request *r)
{
	int	sync = r->in_callback;

	r->in_callback = 0;
	return sync && r->answered ? http_pump(wsi, r) : 0;
}

/* --- reading the request ------------------------------------------------ */

unsigned
http_method(struct lws *wsi)
{
	if (lws_hdr_total_length(wsi, WSI_TOKEN_GET_URI))
		return HTTP_GET;
	if (lws_hdr_total_length(wsi, WSI_TOKEN_POST_URI))
		return HTTP_POST;
	if (lws_hdr_total_length(wsi, WSI_TOKEN_HEAD_URI))
		return HTTP_HEAD;
	if (lws_hdr_total_length(wsi, WSI_TOKEN_PUT_URI))
		return HTTP_PUT;
	if (lws_hdr_total_length(wsi, WSI_TOKEN_OPTIONS_URI))
		return HTTP_OPTIONS;
	return HTTP_OTHER;
}

int
http_hdr(struct lws *wsi, int token, char *buf, size_t cap)
{
	int	n = lws_hdr_copy(wsi, buf, (int)cap,
		    (enum lws_token_indexes)token);

	if (n < 0) {
		buf[0] = '\0';
		return -1;	/* longer than we take */
	}
	return n;
}

/* Whitespace around the type is RFC 9110's OWS: spaces and tabs (a tab
 * after the type was once refused with 415; tests/fuzz/fuzz_guard.c). */
int
http_json_type(const char *ct)
{
	size_t	n = strlen("application/json");

	while (*ct == ' ' || *ct == '\t')
		ct++;
	if (strncasecmp(ct, "application/json", n) != 0)
		return 0;
	ct += n;
	while (*ct == ' ' || *ct == '\t')
		ct++;
	return *ct == '\0' || *ct == ';';
}

int
http_etag_match(const char *inm, const char *etag)
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

/* --- query strings ------------------------------------------------------ */

int
http_args_add(struct http_args *g, const char *frag, size_t n)
{
	const char	*eq;
	size_t		 nn;

	if (n >= HTTP_ARG_MAX || memchr(frag, '\0', n) != NULL)
		return -1;	/* a NUL would cut the value short unseen */
	if (n == 0)
		return 0;
	if (g->n == HTTP_MAX_ARGS)
		return -1;
	eq = memchr(frag, '=', n);
	nn = eq ? (size_t)(eq - frag) : n;
	if (nn >= sizeof(g->name[0]) ||
	    (eq ? n - nn - 1 : 0) >= sizeof(g->value[0]))
		return -1;
	memcpy(g->name[g->n], frag, nn);
	g->name[g->n][nn] = '\0';
	if (eq)
		memcpy(g->value[g->n], eq + 1, n - nn - 1);
	g->value[g->n][eq ? n - nn - 1 : 0] = '\0';
	g->n++;
	return 0;
}

int
http_args_parse(struct lws *wsi, struct http_args *g)
{
	char	buf[HTTP_ARG_MAX];
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
		if (http_args_add(g, buf, (size_t)n))
			return -1;
	}
}

const char *
http_arg(const struct http_args *g, const char *name)
{
	size_t	i;

	for (i = 0; i < g->n; i++)
		if (strcmp(g->name[i], name) == 0)
			return g->value[i];
	return NULL;
}

const char *
http_args_unknown(const struct http_args *g, const char *const *known)
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

int
http_arg_uint(const char *v, uint64_t lo, uint64_t hi, uint64_t *out)
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

int
http_arg_bool(const char *v, int *out)
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
