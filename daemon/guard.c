/*
 * guard — Host, Origin, token and body checks (see guard.h).
 *
 * The order is the one docs/api.md states: Host (421), Origin (403), the
 * fetch metadata (403), then for writes the length (411, 413), the type
 * (415) and the write rule (403).  A refusal that leaves a body unread, or one far too large to
 * drain, closes the connection.
 */
#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include <libwebsockets.h>

#include "daemon/guard.h"

#define DRAIN_MAX	(64u << 20)	/* bigger bodies: answer and close */

static int
refuse(struct guard_refusal *why, unsigned status, const char *code,
    const char *message, int fatal)
{
	why->status = status;
	why->code = code;
	why->message = message;
	why->fatal = fatal;
	return (int)status;
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
host_allowed(const struct config *cfg, const char *host)
{
	static const char *const loop[] = { "localhost", "127.0.0.1",
					    "[::1]" };
	const struct config_list *l = &cfg->allow_hosts;
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
origin_allowed(const struct config *cfg, const char *origin,
    const char *host)
{
	static const char *const loop[] = { "http://localhost:*",
		"http://127.0.0.1:*", "http://[::1]:*" };
	const struct config_list *l = &cfg->allow_origins;
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

/* Constant time: the comparison's duration says nothing of the token. */
static int
token_ok(const char *token, const struct guard_hdrs *h)
{
	const char	*auth = h->auth;
	unsigned char	 diff = 0;
	size_t		 i;

	if (h->auth_n <= 0 || strncasecmp(auth, "Bearer ", 7) != 0 ||
	    strlen(auth + 7) != 64 || token[0] == '\0')
		return 0;
	for (i = 0; i < 64; i++)
		diff |= (unsigned char)(auth[7 + i] ^ token[i]);
	return diff == 0;
}

/* --- the raw header block ------------------------------------------------- */

/* The lws token for a header name ("host"), or -1 when lws does not know
 * it (it then keeps it as a custom header). */
static int
token_of(const char *name, size_t n)
{
	const unsigned char	*t;
	int			 k;

	for (k = 0; k < WSI_TOKEN_COUNT; k++) {
		if ((t = lws_token_to_string((enum lws_token_indexes)k)) ==
		    NULL)
			continue;
		if (strncmp((const char *)t, name, n) == 0 && t[n] == ':' &&
		    t[n + 1] == '\0')
			return k == WSI_TOKEN_SWORIGIN ? WSI_TOKEN_ORIGIN : k;
	}
	return -1;
}

/* The headers the guards act on: lws's value and the sent one must be
 * the same, and lws must not have one the client did not send. */
static const struct {
	int		 token;
	const char	*name;
} acted_on[] = {
	{ WSI_TOKEN_HOST, "host" },
	{ WSI_TOKEN_ORIGIN, "origin" },
	{ WSI_TOKEN_HTTP_AUTHORIZATION, "authorization" },
	{ WSI_TOKEN_HTTP_CONTENT_LENGTH, "content-length" },
	{ WSI_TOKEN_HTTP_CONTENT_TYPE, "content-type" },
	{ WSI_TOKEN_HTTP_TRANSFER_ENCODING, "transfer-encoding" },
	{ WSI_TOKEN_UPGRADE, "upgrade" },
	{ WSI_TOKEN_CONNECTION, "connection" },
	{ WSI_TOKEN_KEY, "sec-websocket-key" },
	{ WSI_TOKEN_VERSION, "sec-websocket-version" },
};

static int
acted(int token)
{
	size_t	i;

	for (i = 0; i < sizeof(acted_on) / sizeof(acted_on[0]); i++)
		if (acted_on[i].token == token)
			return 1;
	return 0;
}

/* How many of the fields lws files under `token` (tok: each field's). */
static int
raw_count(const int *tok, size_t nf, int token)
{
	size_t	i;
	int	n = 0;

	for (i = 0; i < nf; i++)
		n += tok[i] == token;
	return n;
}

unsigned
guard_raw(struct lws *wsi, const struct rawhdr_req *q,
    struct guard_refusal *why)
{
	char	 name[256], val[8192];
	int	 tok[RAWHDR_FIELDS_MAX], t, n;
	size_t	 i;

	why->fatal = 1;
	if (q != NULL && q->unchecked != NULL && q->bad == NULL)
		return 0;	/* nothing seen to compare (daemon/tap.h) */
	if (q == NULL || q->block == NULL)
		return (unsigned)refuse(why, 400, "bad_header", q && q->bad ?
		    q->bad : "the request's header block was not seen whole",
		    1);
	if (q->bad != NULL)
		return (unsigned)refuse(why, 400, "bad_header", q->bad, 1);
	for (i = 0; i < q->nf; i++)
		tok[i] = token_of(q->block + q->f[i].name, q->f[i].nlen);
	for (i = 0; i < q->nf; i++) {
		const struct rawhdr_field	*f = &q->f[i];
		const char			*v = q->block + f->value;

		t = tok[i];
		if (t < 0) {
			/* lws keeps it by its name and the colon, the value
			 * without its leading whitespace */
			if ((size_t)f->nlen + 2 > sizeof(name))
				goto unseen;
			memcpy(name, q->block + f->name, f->nlen);
			name[f->nlen] = ':';
			name[f->nlen + 1] = '\0';
			if (lws_hdr_custom_length(wsi, name, f->nlen + 1) !=
			    (int)f->lead_len)
				goto unseen;
			continue;
		}
		if (f->vlen == 0)
			continue;	/* lws cannot say empty from absent */
		if (!acted(t) || raw_count(tok, q->nf, t) > 1) {
			if (lws_hdr_total_length(wsi,
			    (enum lws_token_indexes)t) <= 0)
				goto unseen;
			continue;
		}
		n = lws_hdr_copy(wsi, val, sizeof(val),
		    (enum lws_token_indexes)t);
		while (n > 0 && (val[n - 1] == ' ' || val[n - 1] == '\t'))
			n--;
		if (n != f->vlen || memcmp(val, v, (size_t)n) != 0)
			goto unseen;
	}
	/* and nothing the guards act on that the client did not send */
	for (i = 0; i < sizeof(acted_on) / sizeof(acted_on[0]); i++)
		if (lws_hdr_total_length(wsi, (enum lws_token_indexes)
		    acted_on[i].token) > 0 &&
		    raw_count(tok, q->nf, acted_on[i].token) == 0)
			return (unsigned)refuse(why, 400, "bad_header", "the "
			    "headers were not read as they were sent", 1);
	return 0;
unseen:
	return (unsigned)refuse(why, 400, "bad_header", "a header was not "
	    "read as it was sent (libwebsockets 4.1.6 misreads some header "
	    "lines; docs/api.md)", 1);
}

/* --- the headers the guards read -------------------------------------------- */

/* A header lws does not know, by its lowercase "name:": its length (its
 * trailing whitespace, which lws keeps, trimmed), 0 absent, -1 longer
 * than cap. */
static int
custom_hdr(struct lws *wsi, const char *name, char *buf, size_t cap)
{
	int	n = lws_hdr_custom_length(wsi, name, (int)strlen(name));

	buf[0] = '\0';
	if (n < 0)
		return 0;
	if ((size_t)n + 1 > cap)
		return -1;
	if ((n = lws_hdr_custom_copy(wsi, buf, (int)cap, name,
	    (int)strlen(name))) < 0) {
		buf[0] = '\0';
		return -1;
	}
	while (n > 0 && (buf[n - 1] == ' ' || buf[n - 1] == '\t'))
		buf[--n] = '\0';
	return n;
}

void
guard_hdrs_read(struct lws *wsi, struct guard_hdrs *h)
{
	h->host_n = http_hdr(wsi, WSI_TOKEN_HOST, h->host, sizeof(h->host));
	h->origin_n = http_hdr(wsi, WSI_TOKEN_ORIGIN, h->origin,
	    sizeof(h->origin));
	h->auth_n = http_hdr(wsi, WSI_TOKEN_HTTP_AUTHORIZATION, h->auth,
	    sizeof(h->auth));
	h->clen_n = http_hdr(wsi, WSI_TOKEN_HTTP_CONTENT_LENGTH, h->clen,
	    sizeof(h->clen));
	h->ctype_n = http_hdr(wsi, WSI_TOKEN_HTTP_CONTENT_TYPE, h->ctype,
	    sizeof(h->ctype));
	h->chunked = lws_hdr_total_length(wsi,
	    WSI_TOKEN_HTTP_TRANSFER_ENCODING) > 0;
	h->site_n = custom_hdr(wsi, "sec-fetch-site:", h->site,
	    sizeof(h->site));
	h->mode_n = custom_hdr(wsi, "sec-fetch-mode:", h->mode,
	    sizeof(h->mode));
	h->dest_n = custom_hdr(wsi, "sec-fetch-dest:", h->dest,
	    sizeof(h->dest));
}

/* --- Host and Origin --------------------------------------------------------- */

/* Sec-Fetch-Site names another site: a page that is not this one sent
 * it.  ("same-origin": the panel itself; "none": the user typed it.) */
static int
from_other_site(const struct guard_hdrs *h)
{
	return h->site_n > 0 && (strcasecmp(h->site, "cross-site") == 0 ||
	    strcasecmp(h->site, "same-site") == 0);
}

/* A top-level navigation to the panel's page (a link, a bookmark): the
 * page then asks the API from its own origin.  Nothing under the API,
 * which is where a fold costs. */
static int
page_navigation(const struct guard_hdrs *h, const struct http_request *r)
{
	return (r->method == HTTP_GET || r->method == HTTP_HEAD) &&
	    strncmp(r->path, "/api/", 5) != 0 &&
	    h->mode_n > 0 && strcasecmp(h->mode, "navigate") == 0 &&
	    h->dest_n > 0 && strcasecmp(h->dest, "document") == 0;
}

unsigned
guard_peer_check(const struct config *cfg, const struct guard_hdrs *h,
    struct http_request *r, struct guard_refusal *why)
{
	why->fatal = 0;
	r->origin[0] = '\0';
	r->origin_ok = 0;
	if (h->host_n <= 0)
		return (unsigned)refuse(why, h->host_n == 0 ? 400 : 421,
		    h->host_n == 0 ? "no_host" : "bad_host",
		    "a Host header naming this machine is required", 0);
	if (!host_allowed(cfg, h->host))
		return (unsigned)refuse(why, 421, "bad_host", "this Host is "
		    "not one this daemon answers to (loopback names, or "
		    "--allow-host)", 0);
	if (h->origin_n < 0 || (h->origin_n > 0 &&
	    !origin_allowed(cfg, h->origin, h->host)))
		return (unsigned)refuse(why, 403, "bad_origin", "this Origin "
		    "is not allowed (loopback origins, or --allow-origin)", 0);
	if (h->origin_n == 0 && from_other_site(h) && !page_navigation(h, r))
		return (unsigned)refuse(why, 403, "cross_site", "the browser "
		    "says another site's page sent this, and it has no "
		    "allowed Origin (a page's fetch must be CORS, from an "
		    "allowed origin)", 0);
	snprintf(r->origin, sizeof(r->origin), "%s", h->origin);
	r->origin_ok = h->origin_n > 0;
	return 0;
}

/* Content-Length: 0 when absent (*len 0), -1 when not a number. */
static int
content_length(const struct guard_hdrs *h, uint64_t *len)
{
	*len = 0;
	if (h->clen_n == 0)
		return 0;
	if (h->clen_n < 0 || http_arg_uint(h->clen, 0, UINT64_MAX, len))
		return -1;
	return 1;
}

unsigned
guard_no_body_check(const struct guard_hdrs *h, struct guard_refusal *why)
{
	uint64_t	len;
	int		n;

	if (h->chunked)
		return (unsigned)refuse(why, 411, "length_required",
		    "send the body with a Content-Length, not chunked", 1);
	if ((n = content_length(h, &len)) < 0)
		return (unsigned)refuse(why, 400, "bad_length",
		    "Content-Length is not a number", 1);
	if (len > 0)
		return (unsigned)refuse(why, 400, "unexpected_body",
		    "this method takes no body", 1);
	return 0;
}

unsigned
guard_write_check(const char *token, size_t max_body,
    const struct guard_hdrs *h, const struct http_request *r, uint64_t *len,
    struct guard_refusal *why)
{
	int	n;

	*len = 0;
	if (h->chunked)
		return (unsigned)refuse(why, 411, "length_required",
		    "send the body with a Content-Length, not chunked", 1);
	if ((n = content_length(h, len)) < 0)
		return (unsigned)refuse(why, 400, "bad_length",
		    "Content-Length is not a number", 1);
	if (n == 0)
		return (unsigned)refuse(why, 411, "length_required",
		    "a Content-Length is required", 1);
	if (*len > max_body)
		return (unsigned)refuse(why, 413, "body_too_large",
		    "request bodies are at most 1 MiB", *len > DRAIN_MAX);
	if (h->ctype_n <= 0 || !http_json_type(h->ctype))
		return (unsigned)refuse(why, 415, "unsupported_media_type",
		    "send Content-Type: application/json", 0);
	if (!r->origin_ok && !token_ok(token, h))
		return (unsigned)refuse(why, 403, "forbidden", "writes need an "
		    "allowed Origin or Authorization: Bearer <token> (the "
		    "token file is in the state directory)", 0);
	return 0;
}

unsigned
guard_peer(const struct config *cfg, struct lws *wsi, struct http_request *r,
    struct guard_refusal *why)
{
	struct guard_hdrs	h;

	guard_hdrs_read(wsi, &h);
	return guard_peer_check(cfg, &h, r, why);
}

unsigned
guard_no_body(struct lws *wsi, struct guard_refusal *why)
{
	struct guard_hdrs	h;

	guard_hdrs_read(wsi, &h);
	return guard_no_body_check(&h, why);
}

unsigned
guard_write(const char *token, size_t max_body, struct lws *wsi,
    struct http_request *r, uint64_t *len, struct guard_refusal *why)
{
	struct guard_hdrs	h;

	guard_hdrs_read(wsi, &h);
	return guard_write_check(token, max_body, &h, r, len, why);
}
