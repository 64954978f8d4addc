/*
 * fuzz_query — a hostile request target as the router sees it: the path
 * through the route table (daemon/routes.h), the query's pieces through
 * http_args_add (daemon/http.h) and the matched row's parameter checks
 * (routes_args: bytes, type, status, limit, from/to, include-automated,
 * buckets, the footprint id of /issues/<id>, the batch identity of POST
 * /records: page, seq, first), and every `since` value
 * through the events socket's resume-id parser (events_since_parse).
 *
 * The input is a method byte, then "<path>\n<query>".  libwebsockets
 * splits a query at '&' and decodes each piece; the harness does the same
 * with a plain %XX decoder, so a piece may hold any byte ('&', '=', NUL).
 *
 * Asserted against references written from docs/api.md: the route each
 * path and method reaches and the Allow header it gets; the pieces as
 * name/value pairs (at most 8, names < 32, values < 128 bytes, no NUL);
 * each row's verdict (0, 400 or 404) and the values it read; the resume
 * id's grammar.  And: the key a fold's answer is kept under decodes back
 * to exactly the path and its parameters in name order (two different
 * queries never share a kept answer), and does not depend on the order
 * the parameters came in.
 */
#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/http.h"
#include "daemon/order.h"
#include "daemon/routes.h"
#include "daemon/events.h"
#include "ledger/footprint.h"
#include "ledger/ledger.h"
#include "refjson.h"

int	LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);

#define P	ROUTE_PREFIX

static void
fail(const char *what)
{
	fprintf(stderr, "fuzz_query: %s\n", what);
	abort();
}

/* --- references ------------------------------------------------------------ */

static int
ref_uint(const char *s, uint64_t lo, uint64_t hi, uint64_t *v)
{
	return ref_number(s, v) == 0 && *v >= lo && *v <= hi ? 0 : -1;
}

static int
ref_bool(const char *s, int *v)
{
	if (!strcmp(s, "") || !strcmp(s, "1") || !strcmp(s, "true"))
		return *v = 1, 0;
	if (!strcmp(s, "0") || !strcmp(s, "false"))
		return *v = 0, 0;
	return -1;
}

/* The documented routes: the row's pattern for path and method, *allow
 * the methods of every row with the path (HTTP_* bits; 0: no such path). */
static const char *
ref_route(const char *path, unsigned method, unsigned *allow)
{
	static const struct { const char *pat; unsigned m; } rows[] = {
		{ P "/status", HTTP_GET | HTTP_HEAD },
		{ P "/ledger", HTTP_GET | HTTP_HEAD },
		{ P "/issues", HTTP_GET | HTTP_HEAD },
		{ P "/issues/*", HTTP_GET | HTTP_HEAD },
		{ P "/history", HTTP_GET | HTTP_HEAD },
		{ P "/fixes", HTTP_POST },
		{ P "/records", HTTP_POST },
		{ P "/snapshots", HTTP_POST },
		{ P "/settings", HTTP_GET | HTTP_HEAD },
		{ P "/settings", HTTP_PUT },
		{ P "/events", HTTP_GET },
		{ P "/census", HTTP_GET | HTTP_HEAD },
		{ P "/attribution", HTTP_GET | HTTP_HEAD },
		{ P "/relay", HTTP_GET },
		{ P "/relay", HTTP_POST },
		{ P "/relay/*", HTTP_GET },
		{ "/", HTTP_GET | HTTP_HEAD },
		{ "/index.html", HTTP_GET | HTTP_HEAD },
		{ "/page-runtime/**", HTTP_GET | HTTP_HEAD },
	};
	const char	*hit = NULL, *seg;
	size_t		 i, n;
	int		 m;

	*allow = 0;
	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		n = strlen(rows[i].pat);
		if (rows[i].pat[n - 1] == '*' && rows[i].pat[n - 2] == '*')
			m = strncmp(path, rows[i].pat, n - 2) == 0;
		else if (rows[i].pat[n - 1] == '*') {
			seg = path + n - 1;
			m = strlen(path) >= n - 1 &&
			    strncmp(path, rows[i].pat, n - 1) == 0 &&
			    *seg != '\0' && strchr(seg, '/') == NULL &&
			    strlen(seg) < 64;
		} else
			m = strcmp(path, rows[i].pat) == 0;
		if (!m)
			continue;
		*allow |= rows[i].m;
		if ((rows[i].m & method) && hit == NULL)
			hit = rows[i].pat;
	}
	return hit;
}

static void
ref_allow(unsigned m, char *out, size_t cap)
{
	static const char *const name[] = { "GET", "HEAD", "POST", "PUT" };
	size_t	i;

	out[0] = '\0';
	for (i = 0; i < 4; i++)
		if (m & (1u << i))
			snprintf(out + strlen(out), cap - strlen(out), "%s, ",
			    name[i]);
	snprintf(out + strlen(out), cap - strlen(out), "OPTIONS");
}

/* name=value pieces as the docs say: split at the first '=' */
static int
ref_args(char pieces[][256], const size_t *len, size_t np,
    struct http_args *g)
{
	const char	*eq;
	size_t		 i, nn;

	g->n = 0;
	for (i = 0; i < np; i++) {
		if (len[i] >= 192 || memchr(pieces[i], '\0', len[i]))
			return -1;
		if (len[i] == 0)
			continue;
		if (g->n == 8)
			return -1;
		eq = memchr(pieces[i], '=', len[i]);
		nn = eq ? (size_t)(eq - pieces[i]) : len[i];
		if (nn >= 32 || (eq ? len[i] - nn - 1 : 0) >= 128)
			return -1;
		memcpy(g->name[g->n], pieces[i], nn);
		g->name[g->n][nn] = '\0';
		if (eq)
			memcpy(g->value[g->n], eq + 1, len[i] - nn - 1);
		g->value[g->n][eq ? len[i] - nn - 1 : 0] = '\0';
		g->n++;
	}
	return 0;
}

/* POST /records: page, seq and first together or not at all (docs/api.md). */
static unsigned
ref_records(const struct http_args *g, struct route_args *want)
{
	const char	*v[3] = { NULL, NULL, NULL };
	static const char *const name[3] = { "page", "seq", "first" };
	size_t		 i, k;
	uint64_t	 seq, first;

	for (i = 0; i < g->n; i++) {
		for (k = 0; k < 3 && strcmp(g->name[i], name[k]); k++)
			;
		if (k == 3)
			return 400;
		if (v[k] == NULL)
			v[k] = g->value[i];	/* the first of a name counts */
	}
	if (!v[0] && !v[1] && !v[2])
		return 0;
	if (!v[0] || !v[1] || !v[2])
		return 400;
	if (strlen(v[0]) < 1 || strlen(v[0]) > 32 ||
	    strspn(v[0], "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
	    "0123456789-_") != strlen(v[0]))
		return 400;
	if (ref_uint(v[1], 1, (1ull << 53) - 1, &seq) ||
	    ref_uint(v[2], 1, seq, &first))
		return 400;
	snprintf(want->page, sizeof(want->page), "%s", v[0]);
	want->seq = seq;
	want->first = first;
	return 0;
}

/* Every parameter's name must be in known; then check each known one. */
static unsigned
ref_verdict(const char *pat, const char *param, const struct http_args *g,
    struct route_args *want)
{
	const char	*v;
	uint64_t	 u;
	int64_t		 ms;
	size_t		 i, k;
	unsigned	 rc = 0;
	static const struct { const char *pat, *known; } takes[] = {
		{ P "/status", "" },
		{ P "/ledger", " bytes " },
		{ P "/issues", " type status from to include-automated limit scope " },
		{ P "/issues/*", " from to include-automated " },
		{ P "/history", " buckets include-automated " },
	};
	char		 word[40];
	const char	*known = NULL;

	memset(want, 0, sizeof(*want));
	want->from_ms = want->to_ms = LEDGER_NO_TIME;
	want->bytes = 2u << 20;
	want->buckets = 24;
	if (strcmp(pat, P "/records") == 0)
		return ref_records(g, want);
	for (k = 0; k < sizeof(takes) / sizeof(takes[0]); k++)
		if (strcmp(pat, takes[k].pat) == 0)
			known = takes[k].known;
	if (known == NULL)
		return 0;	/* the query is not read */
	for (i = 0; i < g->n; i++) {
		snprintf(word, sizeof(word), " %s ", g->name[i]);
		if (strstr(known, word) == NULL || g->name[i][0] == '\0' ||
		    strchr(g->name[i], ' ') != NULL)
			return 400;
	}
	/* the first of a name counts; the others are not read */
	for (i = 0; i < g->n; i++) {
		for (k = 0; k < i; k++)
			if (strcmp(g->name[k], g->name[i]) == 0)
				break;
		if (k < i)
			continue;
		v = g->value[i];
		if (!strcmp(g->name[i], "bytes")) {
			if (ref_uint(v, 1, 8u << 20, &u))
				rc = 400;
			want->bytes = u;
		} else if (!strcmp(g->name[i], "limit")) {
			if (ref_uint(v, 0, 1000000, &u))
				rc = 400;
			want->limit = (size_t)u;
		} else if (!strcmp(g->name[i], "buckets")) {
			if (ref_uint(v, 1, 1000, &u))
				rc = 400;
			want->buckets = (int)u;
		} else if (!strcmp(g->name[i], "include-automated")) {
			if (ref_bool(v, &want->automated))
				rc = 400;
		} else if (!strcmp(g->name[i], "type")) {
			if (*v == '\0' || strlen(v) >= 64)
				rc = 400;
			snprintf(want->type, sizeof(want->type), "%s", v);
		} else if (!strcmp(g->name[i], "status")) {
			if (strcmp(v, "open") && strcmp(v, "pending") &&
			    strcmp(v, "fixed") && strcmp(v, "regressed"))
				rc = 400;
			snprintf(want->status, sizeof(want->status), "%s", v);
		} else if (!strcmp(g->name[i], "scope")) {
			if (strcmp(v, "local") && strcmp(v, "team"))
				rc = 400;
			want->team = !strcmp(v, "team");
		} else if (!strcmp(g->name[i], "from") ||
		    !strcmp(g->name[i], "to")) {
			/* the fold's own ISO-8601 reader is the oracle */
			if (iso_parse_ms(v, strlen(v), &ms))
				rc = 400;
			*(g->name[i][0] == 'f' ? &want->from_ms :
			    &want->to_ms) = ms;
		}
	}
	if (rc == 0 && strcmp(pat, P "/issues/*") == 0) {
		for (i = 0; param[i] && isxdigit((unsigned char)param[i]); i++)
			;
		if (i != 8 || param[i] != '\0')
			return 404;
		for (i = 0; i < 8; i++)
			want->id[i] = (char)tolower((unsigned char)param[i]);
	}
	return rc;
}

/* %XX → the byte; anything else as it is.  The decoded length. */
static size_t
decode(const char *p, size_t n, char *out)
{
	size_t	i, o = 0;
	char	h[3] = { 0 };

	for (i = 0; i < n; i++) {
		if (p[i] == '%' && i + 2 < n &&
		    isxdigit((unsigned char)p[i + 1]) &&
		    isxdigit((unsigned char)p[i + 2])) {
			h[0] = p[i + 1];
			h[1] = p[i + 2];
			out[o++] = (char)strtol(h, NULL, 16);
			i += 2;
		} else
			out[o++] = p[i];
	}
	return o;
}

/* --- the kept answer's key ---------------------------------------------------- */

static int
unescape(const char *p, size_t n, char *out, size_t cap)
{
	size_t	i, o = 0;
	char	h[3] = { 0 };

	for (i = 0; i < n; i++) {
		if (o + 1 >= cap)
			return -1;
		if (p[i] == '%') {
			if (i + 2 >= n || !isxdigit((unsigned char)p[i + 1]) ||
			    !isxdigit((unsigned char)p[i + 2]))
				return -1;
			h[0] = p[i + 1];
			h[1] = p[i + 2];
			out[o++] = (char)strtol(h, NULL, 16);
			i += 2;
		} else if (p[i] == '&' || p[i] == '=')
			return -1;	/* never bare inside a name or value */
		else
			out[o++] = p[i];
	}
	out[o] = '\0';
	return 0;
}

/* The key must read back as path, then g's pairs in name order. */
static void
key_check(const char *key, const char *path, const struct http_args *g)
{
	size_t		 i, k, n, order[HTTP_MAX_ARGS], plen = strlen(path);
	const char	*p, *amp, *eq;
	char		 name[256], value[512];

	if (strncmp(key, path, plen) != 0)
		fail("the key does not start with the path");
	p = key + plen;
	if (g->n == 0) {
		if (*p != '\0')
			fail("a key without parameters has more than the path");
		return;
	}
	for (i = 0; i < g->n; i++)
		order[i] = i;
	for (i = 1; i < g->n; i++)	/* stable: equal names keep order */
		for (k = i; k > 0 && strcmp(g->name[order[k - 1]],
		    g->name[order[k]]) > 0; k--) {
			size_t	t = order[k];

			order[k] = order[k - 1];
			order[k - 1] = t;
		}
	if (*p++ != '?')
		fail("no '?' after the key's path");
	for (i = 0; i < g->n; i++) {
		amp = strchr(p, '&');
		n = amp ? (size_t)(amp - p) : strlen(p);
		if ((eq = memchr(p, '=', n)) == NULL)
			fail("a key pair without '='");
		if (unescape(p, (size_t)(eq - p), name, sizeof(name)) ||
		    unescape(eq + 1, n - (size_t)(eq - p) - 1, value,
		    sizeof(value)))
			fail("a key pair that does not decode");
		if (strcmp(name, g->name[order[i]]) ||
		    strcmp(value, g->value[order[i]]))
			fail("the key does not read back as the parameters");
		p += n;
		if (i + 1 < g->n && *p++ != '&')
			fail("the key has fewer pairs than parameters");
	}
	if (*p != '\0')
		fail("the key has more pairs than parameters");
}

/* --- the resume id ---------------------------------------------------------- */

static void
since_check(const char *v)
{
	uint64_t	 gen, off, rg, ro = 0;
	int		 none, ok, want;
	const char	*colon = strchr(v, ':');
	char		 a[200];

	ok = events_since_parse(v, &gen, &off, &none) == 0;
	want = 0;
	if (colon != NULL && (size_t)(colon - v) < sizeof(a)) {
		memcpy(a, v, (size_t)(colon - v));
		a[colon - v] = '\0';
		want = ref_number(a, &rg) == 0 && (strcmp(colon + 1, "-1") == 0
		    || ref_number(colon + 1, &ro) == 0);
	}
	if (ok != want)
		fail(ok ? "a bad resume id is taken" :
		    "a good resume id is refused");
	if (ok && (gen != rg || none != !strcmp(colon + 1, "-1") ||
	    (!none && off != ro)))
		fail("a resume id read wrong");
}

/* --- the harness ---------------------------------------------------------------- */

int
LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
	static const unsigned methods[] = { HTTP_GET, HTTP_HEAD, HTTP_POST,
		HTTP_PUT, HTTP_OPTIONS, HTTP_OTHER };
	static char		 pieces[64][256];
	size_t			 len[64], np = 0, i, n;
	struct http_args	 g, rg, rev;
	struct route_args	 got, want, got2;
	struct guard_refusal	 why, why2;
	const struct route	*rt;
	const char		*in = (const char *)data + 1, *nl, *amp, *allow;
	const char		*pat;
	char			 path[512], param[64], aw[64];
	unsigned		 method, allow_m, vg, vw;
	int			 ga, ra, kept;

	if (size < 1)
		return 0;
	method = methods[data[0] % 6];
	size--;
	nl = memchr(in, '\n', size);
	n = nl ? (size_t)(nl - in) : size;
	if (n >= sizeof(path) || memchr(in, '\0', n))
		return 0;	/* api.c refuses a path this long (400) */
	memcpy(path, in, n);
	path[n] = '\0';

	/* the route */
	memset(param, 0, sizeof(param));
	rt = routes_match(path, method, &allow, param, sizeof(param));
	pat = ref_route(path, method, &allow_m);
	if ((rt == NULL) != (pat == NULL) ||
	    (rt != NULL && strcmp(rt->path, pat) != 0))
		fail("the path reached another route than the documented one");
	if ((allow == NULL) != (allow_m == 0))
		fail("Allow set for a path no route has, or not set");
	if (allow != NULL) {
		ref_allow(allow_m, aw, sizeof(aw));
		if (strcmp(allow, aw) != 0)
			fail("the Allow header names other methods");
	}
	if (rt != NULL && pat[strlen(pat) - 1] == '*' &&
	    pat[strlen(pat) - 2] == '/' &&
	    strcmp(param, path + strlen(pat) - 1) != 0)
		fail("the '*' segment is not the path's last segment");

	/* the query: split at '&', each piece decoded */
	if (nl != NULL) {
		const char	*p = nl + 1, *end = in + size;

		while (p <= end && np < 64) {
			amp = memchr(p, '&', (size_t)(end - p));
			n = amp ? (size_t)(amp - p) : (size_t)(end - p);
			if (n > 255)
				n = 255;
			len[np] = decode(p, n, pieces[np]);
			np++;
			if (amp == NULL)
				break;
			p = amp + 1;
		}
	}
	memset(&g, 0, sizeof(g));
	ga = 0;
	for (i = 0; i < np && ga == 0; i++)
		ga = http_args_add(&g, pieces[i], len[i]);
	ra = ref_args(pieces, len, np, &rg);
	if ((ga == 0) != (ra == 0))
		fail(ga ? "good parameters are refused" :
		    "bad parameters are taken");
	if (ga != 0)
		return 0;	/* 400 bad_parameter, nothing routed */
	if (g.n != rg.n)
		fail("another number of parameters");
	for (i = 0; i < g.n; i++)
		if (strcmp(g.name[i], rg.name[i]) ||
		    strcmp(g.value[i], rg.value[i]))
			fail("a parameter read wrong");
	for (i = 0; i < g.n; i++)
		if (strcmp(g.name[i], "since") == 0)
			since_check(g.value[i]);
	for (i = 0; i < g.n; i++) {
		uint64_t	a, b;
		int		x = http_arg_uint(g.value[i], 0, UINT64_MAX,
				    &a), y = ref_number(g.value[i], &b);

		if ((x == 0) != (y == 0) || (x == 0 && a != b))
			fail("http_arg_uint disagrees with the reference");
	}
	if (rt == NULL)
		return 0;

	/* the row's parameters */
	memset(&why, 0, sizeof(why));
	vg = routes_args(rt, path, param, &g, &got, &why);
	vw = ref_verdict(pat, param, &g, &want);
	if (vg != vw && !(vg == 400 && vw == 0 && why.message != NULL &&
	    strcmp(why.message, "the parameters are too long") == 0 &&
	    rt->pool != NULL))
		fail("a row's verdict differs from the documented one");
	if (vg != 0) {
		if (why.status != vg || why.code == NULL || why.message == NULL)
			fail("a refusal without status, code or message");
		return 0;
	}
	if (got.bytes != want.bytes && strcmp(pat, P "/ledger") == 0)
		fail("bytes read wrong");
	if (got.limit != want.limit || got.automated != want.automated ||
	    got.team != want.team ||
	    strcmp(got.type, want.type) || strcmp(got.status, want.status) ||
	    got.from_ms != want.from_ms || got.to_ms != want.to_ms ||
	    strcmp(got.id, want.id))
		fail("a parameter's value read wrong");
	if (strcmp(pat, P "/history") == 0 && got.buckets != want.buckets)
		fail("buckets read wrong");
	if (strcmp(pat, P "/records") == 0 && (strcmp(got.page, want.page) ||
	    got.seq != want.seq || got.first != want.first))
		fail("the batch identity read wrong");
	if (got.page[0] != '\0' && !order_id_valid(got.page))
		fail("a page id the order table refuses");
	kept = !strcmp(pat, P "/issues") || !strcmp(pat, P "/issues/*") ||
	    !strcmp(pat, P "/history");
	if (!kept) {
		if (got.key[0] != '\0')
			fail("a key for a row whose answer is not kept");
		return 0;
	}
	key_check(got.key, path, &g);

	/* the same parameters in reverse order: the same answer and key
	 * (when no name repeats: the first of a name counts) */
	for (i = 0; i < g.n; i++) {
		size_t	k;

		for (k = 0; k < i; k++)
			if (strcmp(g.name[i], g.name[k]) == 0)
				return 0;
	}
	rev.n = g.n;
	for (i = 0; i < g.n; i++) {
		memcpy(rev.name[i], g.name[g.n - 1 - i], sizeof(rev.name[0]));
		memcpy(rev.value[i], g.value[g.n - 1 - i],
		    sizeof(rev.value[0]));
	}
	if (routes_args(rt, path, param, &rev, &got2, &why2) != 0 ||
	    strcmp(got.key, got2.key) != 0)
		fail("the parameters' order changes the kept answer");
	return 0;
}
