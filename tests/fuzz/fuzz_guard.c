/*
 * fuzz_guard — a hostile request's header block through the strict parser
 * (daemon/rawhdr.h) and, when it is well-formed, through the guards'
 * checks (daemon/guard.h) as the daemon runs them: Host, Origin, then the
 * body rules of a read or a write (Content-Length, Transfer-Encoding,
 * Content-Type, the bearer token).
 *
 * The headers reach the checks the way libwebsockets hands them over: a
 * value in a buffer of the guard's size (-1 when it does not fit), and —
 * the first input byte decides — with its trailing whitespace trimmed or
 * kept.  Every verdict is compared with a reference written from the rules
 * docs/api.md states ("Security model"), in their order: 400 no_host, 421,
 * 403 bad_origin, 403 cross_site (Sec-Fetch-Site names another site and
 * no Origin came, unless it is a top-level navigation outside the API),
 * then 411, 400, 413, 415, 403 forbidden.  The method and the path come
 * from the request line, as api.c has them.  And whatever the verdict: a
 * refusal has a status, a code and a message, and leaves no Origin behind
 * to echo; an accepted write has the length that was sent.
 */
#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "daemon/guard.h"
#include "daemon/rawhdr.h"
#include "refjson.h"

int	LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);

#define TOKEN	"0123456789abcdef0123456789abcdef" \
		"0123456789abcdef0123456789abcdef"
#define MAX_BODY	(1024 * 1024)

static struct config	cfg;

static void
setup(void)
{
	static int	done;

	if (done++)
		return;
	cfg.allow_hosts.n = 2;
	strcpy(cfg.allow_hosts.v[0], "a.test");
	strcpy(cfg.allow_hosts.v[1], "My.Host");
	cfg.allow_origins.n = 2;
	strcpy(cfg.allow_origins.v[0], "http://x.test:*");
	strcpy(cfg.allow_origins.v[1], "https://y.test:8443");
}

static void
fail(const char *what)
{
	fprintf(stderr, "fuzz_guard: %s\n", what);
	abort();
}

/* --- the reference, from docs/api.md -------------------------------------- */

static int
port(const char *p)	/* ":" and 1 to 5 digits, then the end */
{
	size_t	n;

	if (*p++ != ':')
		return 0;
	for (n = 0; p[n] != '\0'; n++)
		if (p[n] < '0' || p[n] > '9')
			return 0;
	return n >= 1 && n <= 5;
}

/* a loopback name or an --allow-host one, maybe with a port */
static int
ref_host(const char *h)
{
	static const char *const loop[] = { "localhost", "127.0.0.1", "[::1]" };
	const char	*name;
	size_t		 i, n;

	for (i = 0; i < 3 + cfg.allow_hosts.n; i++) {
		name = i < 3 ? loop[i] : cfg.allow_hosts.v[i - 3];
		n = strlen(name);
		if (strncasecmp(h, name, n) == 0 &&
		    (h[n] == '\0' || port(h + n)))
			return 1;
	}
	return 0;
}

/* http://<loopback>[:port], an --allow-origin (":*" any port), or the
 * daemon's own origin http://<Host> */
static int
ref_origin(const char *o, const char *host)
{
	static const char *const loop[] = { "http://localhost:*",
		"http://127.0.0.1:*", "http://[::1]:*" };
	const char	*pat;
	size_t		 i, n;

	for (i = 0; i < 3 + cfg.allow_origins.n; i++) {
		pat = i < 3 ? loop[i] : cfg.allow_origins.v[i - 3];
		n = strlen(pat);
		if (n > 2 && strcmp(pat + n - 2, ":*") == 0) {
			if (strncasecmp(o, pat, n - 2) == 0 &&
			    (o[n - 2] == '\0' || port(o + n - 2)))
				return 1;
		} else if (strcasecmp(o, pat) == 0)
			return 1;
	}
	return strncmp(o, "http://", 7) == 0 && strcasecmp(o + 7, host) == 0;
}

/* digits only, at least one, no overflow: 0 and *v; else -1 */
/* application/json, any case, maybe ";params", whitespace around */
static int
ref_json(const char *ct)
{
	const char	*e;

	while (*ct == ' ' || *ct == '\t')
		ct++;
	e = strchr(ct, ';');
	if (e == NULL)
		e = ct + strlen(ct);
	while (e > ct && (e[-1] == ' ' || e[-1] == '\t'))
		e--;
	return e - ct == 16 && strncasecmp(ct, "application/json", 16) == 0;
}

/* s, lowercased, is exactly word */
static int
is(const char *s, int n, const char *word)
{
	char	low[32];
	int	i;

	if (n <= 0 || n >= (int)sizeof(low))
		return 0;
	for (i = 0; i < n; i++)
		low[i] = (char)tolower((unsigned char)s[i]);
	low[n] = '\0';
	return strcmp(low, word) == 0;
}

/* Another site's page, no Origin: refused, unless a browser navigates
 * its top-level document to something outside /api/ with GET or HEAD */
static int
ref_cross_site(const struct guard_hdrs *h, const char *method,
    const char *path)
{
	int	nav;

	if (h->origin_n != 0 || !(is(h->site, h->site_n, "cross-site") ||
	    is(h->site, h->site_n, "same-site")))
		return 0;
	nav = (strcmp(method, "GET") == 0 || strcmp(method, "HEAD") == 0) &&
	    is(h->mode, h->mode_n, "navigate") &&
	    is(h->dest, h->dest_n, "document") &&
	    !(path[0] == '/' && path[1] == 'a' && path[2] == 'p' &&
	    path[3] == 'i' && path[4] == '/');
	return !nav;
}

static unsigned
ref_verdict(const struct guard_hdrs *h, int write, const char *method,
    const char *path, uint64_t *len)
{
	uint64_t	cl = 0;
	int		bad_cl;

	*len = 0;
	if (h->host_n == 0)
		return 400;
	if (h->host_n < 0 || !ref_host(h->host))
		return 421;
	if (h->origin_n < 0 || (h->origin_n > 0 &&
	    !ref_origin(h->origin, h->host)))
		return 403;
	if (ref_cross_site(h, method, path))
		return 403;
	bad_cl = h->clen_n < 0 || (h->clen_n > 0 && ref_number(h->clen, &cl));
	if (h->chunked)
		return 411;
	if (bad_cl)
		return 400;
	if (!write)
		return cl > 0 ? 400 : 0;
	if (h->clen_n == 0)
		return 411;
	*len = cl;
	if (cl > MAX_BODY)
		return 413;
	if (h->ctype_n <= 0 || !ref_json(h->ctype))
		return 415;
	if (h->origin_n > 0)
		return 0;
	return h->auth_n > 0 && strncasecmp(h->auth, "bearer ", 7) == 0 &&
	    strcmp(h->auth + 7, TOKEN) == 0 ? 0 : 403;
}

/* --- the headers as libwebsockets hands them over -------------------------- */

/* The field's value into buf[cap]: trimmed, or with the trailing
 * whitespace libwebsockets may keep.  Its length, 0 absent, -1 too long. */
static int
give(const struct rawhdr_req *q, const char *name, int lead, char *buf,
    size_t cap)
{
	size_t	i, n;

	buf[0] = '\0';
	for (i = 0; i < q->nf; i++) {
		if (strlen(name) != q->f[i].nlen ||
		    memcmp(q->block + q->f[i].name, name, q->f[i].nlen) != 0)
			continue;
		n = lead ? q->f[i].lead_len : q->f[i].vlen;
		if (n + 1 > cap)
			return -1;
		memcpy(buf, q->block + q->f[i].value, n);
		buf[n] = '\0';
		return (int)n;
	}
	return 0;
}

/* The request line's method and path (the target up to '?', as lws
 * hands the path over); -1 when the path is too long for api.c, which
 * refuses it before the guards. */
static int
request_line(const struct rawhdr_req *q, char *method, size_t mcap,
    char *path, size_t pcap)
{
	const char	*t = q->block + q->method_len + 1;
	size_t		 n = 0;

	if (q->method_len + 1 > mcap)
		return -1;
	memcpy(method, q->block, q->method_len);
	method[q->method_len] = '\0';
	while (t[n] != ' ' && t[n] != '?' && t[n] != '\0')
		n++;
	if (n + 1 > pcap)
		return -1;
	memcpy(path, t, n);
	path[n] = '\0';
	return 0;
}

/* What api.c makes of the method: one HTTP_* bit. */
static unsigned
method_bit(const char *m)
{
	return strcmp(m, "GET") == 0 ? HTTP_GET : strcmp(m, "HEAD") == 0 ?
	    HTTP_HEAD : strcmp(m, "POST") == 0 ? HTTP_POST :
	    strcmp(m, "PUT") == 0 ? HTTP_PUT : strcmp(m, "OPTIONS") == 0 ?
	    HTTP_OPTIONS : HTTP_OTHER;
}

static void
check(const struct rawhdr_req *q, int lead)
{
	struct guard_hdrs	 h;
	struct guard_refusal	 why;
	struct http_request	*r;
	char			 te[64], method[32], path[512];
	uint64_t		 len = 0, rlen;
	unsigned		 got, want;
	int			 write;

	memset(&h, 0, sizeof(h));
	h.host_n = give(q, "host", lead, h.host, sizeof(h.host));
	if ((h.origin_n = give(q, "origin", lead, h.origin,
	    sizeof(h.origin))) == 0)	/* lws files it as Origin */
		h.origin_n = give(q, "sec-websocket-origin", lead, h.origin,
		    sizeof(h.origin));
	h.auth_n = give(q, "authorization", lead, h.auth, sizeof(h.auth));
	h.clen_n = give(q, "content-length", lead, h.clen, sizeof(h.clen));
	h.ctype_n = give(q, "content-type", lead, h.ctype, sizeof(h.ctype));
	h.chunked = give(q, "transfer-encoding", lead, te, sizeof(te)) != 0;
	/* headers lws does not know: guard_hdrs_read trims them */
	h.site_n = give(q, "sec-fetch-site", 0, h.site, sizeof(h.site));
	h.mode_n = give(q, "sec-fetch-mode", 0, h.mode, sizeof(h.mode));
	h.dest_n = give(q, "sec-fetch-dest", 0, h.dest, sizeof(h.dest));
	write = (q->method_len == 4 && memcmp(q->block, "POST", 4) == 0) ||
	    (q->method_len == 3 && memcmp(q->block, "PUT", 3) == 0);
	if (request_line(q, method, sizeof(method), path, sizeof(path)) != 0)
		return;

	/* the request as api.c has it: zeroed by http_request_begin, then
	 * its method and path */
	if ((r = calloc(1, sizeof(*r))) == NULL)
		return;
	r->method = method_bit(method);
	snprintf(r->path, sizeof(r->path), "%s", path);
	memset(&why, 0, sizeof(why));
	got = guard_peer_check(&cfg, &h, r, &why);
	if (got == 0)
		got = write ? guard_write_check(TOKEN, MAX_BODY, &h, r, &len,
		    &why) : guard_no_body_check(&h, &why);
	want = ref_verdict(&h, write, method, path, &rlen);
	if (got != want) {
		fprintf(stderr, "guard %u, the reference %u (%s: %s)\n", got,
		    want, why.code ? why.code : "-",
		    why.message ? why.message : "-");
		abort();
	}
	if (got != 0) {
		if (why.status != got || why.code == NULL ||
		    why.message == NULL)
			fail("a refusal without status, code or message");
	} else {
		if (r->origin_ok != (h.origin_n > 0) ||
		    (r->origin_ok && strcmp(r->origin, h.origin) != 0))
			fail("an accepted peer's Origin is not the one sent");
		/* (Content-Length: 0 passes; api.c answers it 400, empty) */
		if (write && (len != rlen || len > MAX_BODY))
			fail("an accepted write's length is not the one sent");
	}
	/* a refused peer leaves no Origin to echo in the CORS headers */
	if (got != 0 && (strcmp(why.code, "no_host") == 0 ||
	    strcmp(why.code, "bad_host") == 0 ||
	    strcmp(why.code, "bad_origin") == 0 ||
	    strcmp(why.code, "cross_site") == 0) &&
	    (r->origin_ok || r->origin[0] != '\0'))
		fail("a refused peer leaves an Origin to echo");
	free(r);
}

int
LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
	struct rawhdr		h;
	struct rawhdr_req	q;

	if (size < 1)
		return 0;
	setup();
	rawhdr_init(&h);
	rawhdr_feed(&h, (const char *)data + 1, size - 1);
	if (rawhdr_take(&h, &q) == 0) {
		if (q.bad == NULL)
			check(&q, data[0] & 1);
		rawhdr_req_free(&q);
	} else if (size - 1 > 0 && q.bad == NULL && h.len == 0) {
		/* nothing complete, nothing held, framing not lost: only
		 * blank lines were sent */
		size_t	i;

		for (i = 1; i < size; i++)
			if (data[i] != '\r' && data[i] != '\n')
				fail("nothing came of a request line");
	}
	rawhdr_free(&h);
	return 0;
}
