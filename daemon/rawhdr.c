/*
 * rawhdr — strict request header blocks (see rawhdr.h).
 *
 * The grammar, and what is refused:
 *
 *   request-line = method SP request-target SP "HTTP/1." DIGIT CRLF
 *   field-line   = field-name ":" OWS field-value OWS CRLF
 *
 * A field name is one or more tchar, then the colon at once: whitespace
 * before the colon is an error the RFC says to reject (§5.1), and the
 * smuggling trick behind `Transfer-Encoding : chunked`.  A value holds
 * visible characters, obs-text, spaces and tabs: NUL, CR, LF and the other
 * controls are refused.  A line that starts with whitespace (obs-fold), a
 * bare LF or CR, and a second Host, Origin, Content-Length,
 * Transfer-Encoding, Authorization, Content-Type, Upgrade,
 * Sec-WebSocket-Key or Sec-Fetch-Site, -Mode or -Dest (headers the guards
 * act on, where two values leave the reader to choose) are refused too.  Empty lines before the request
 * line are skipped, as RFC 9112 §2.2 allows.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/rawhdr.h"

enum { ST_HEAD, ST_BODY, ST_LOST };

static const char *const singletons[] = {
	"host", "origin", "sec-websocket-origin", "content-length",
	"transfer-encoding", "authorization", "content-type", "upgrade",
	"sec-websocket-key", "sec-fetch-site", "sec-fetch-mode",
	"sec-fetch-dest", NULL
};

static int
tchar(unsigned char c)
{
	if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	    (c >= '0' && c <= '9'))
		return 1;
	return c != '\0' && strchr("!#$%&'*+-.^_`|~", c) != NULL;
}

/* A field value's bytes: VCHAR, obs-text, SP, HTAB. */
static int
vchar(unsigned char c)
{
	return c == ' ' || c == '\t' || (c > 0x20 && c != 0x7f);
}

void
rawhdr_init(struct rawhdr *h)
{
	memset(h, 0, sizeof(*h));
	h->state = ST_HEAD;
}

void
rawhdr_req_free(struct rawhdr_req *q)
{
	free(q->block);
	q->block = NULL;
}

void
rawhdr_free(struct rawhdr *h)
{
	size_t	i;

	for (i = 0; i < h->qlen; i++)
		rawhdr_req_free(&h->q[(h->qhead + i) % RAWHDR_PENDING]);
	free(h->buf);
	memset(h, 0, sizeof(*h));
}

static void
lose(struct rawhdr *h, const char *why)
{
	h->state = ST_LOST;
	if (h->lost == NULL)
		h->lost = why;
	free(h->buf);
	h->buf = NULL;
	h->len = h->cap = 0;
}

int
rawhdr_get(const struct rawhdr_req *q, const char *name, const char **v)
{
	size_t	i, n = strlen(name);

	for (i = 0; i < q->nf; i++)
		if (q->f[i].nlen == n &&
		    memcmp(q->block + q->f[i].name, name, n) == 0) {
			*v = q->block + q->f[i].value;
			return q->f[i].vlen;
		}
	return -1;
}

/* The request line, up to (excluding) its CRLF at b[0..n). */
static const char *
request_line(struct rawhdr_req *q, char *b, size_t n)
{
	size_t	i = 0, t;

	while (i < n && tchar((unsigned char)b[i]))
		i++;
	if (i == 0 || i >= n || b[i] != ' ')
		return "the request line does not start with a method";
	q->method_len = (uint16_t)i;
	t = ++i;
	while (i < n && b[i] != ' ') {
		if ((unsigned char)b[i] <= 0x20 || b[i] == 0x7f)
			return "the request target holds a control character";
		i++;
	}
	if (i == t || i >= n)
		return "the request line has no target";
	i++;
	if (n - i != 8 || memcmp(b + i, "HTTP/1.", 7) != 0 ||
	    b[i + 7] < '0' || b[i + 7] > '9')
		return "the request line does not end in HTTP/1.x";
	return NULL;
}

/* One field line b[0..n) (no CRLF).  Names are lowercased in place. */
static const char *
field_line(struct rawhdr_req *q, char *b, size_t n, size_t at)
{
	struct rawhdr_field	*f;
	size_t			 i = 0, v, e;
	const char		*dup, *seen;
	int			 k;

	if (n > 0 && (b[0] == ' ' || b[0] == '\t'))
		return "a header line is folded (starts with whitespace)";
	while (i < n && tchar((unsigned char)b[i])) {
		if (b[i] >= 'A' && b[i] <= 'Z')
			b[i] += 'a' - 'A';
		i++;
	}
	if (i == 0)
		return "a header line has no name";
	if (i == n || b[i] != ':')
		return b[i] == ' ' || b[i] == '\t' ? "whitespace between a "
		    "header's name and its colon" : "a header name holds a "
		    "character that is not allowed";
	for (v = i + 1; v < n && (b[v] == ' ' || b[v] == '\t'); v++)
		;
	for (e = v; e < n; e++)
		if (!vchar((unsigned char)b[e]))
			return b[e] == '\0' ? "a header value holds a NUL" :
			    "a header value holds a control character";
	if (q->nf == RAWHDR_FIELDS_MAX)
		return "too many header lines";
	f = &q->f[q->nf];
	f->name = (uint16_t)at;
	f->nlen = (uint16_t)i;
	f->value = (uint16_t)(at + v);
	f->lead_len = (uint16_t)(n - v);
	while (e > v && (b[e - 1] == ' ' || b[e - 1] == '\t'))
		e--;
	f->vlen = (uint16_t)(e - v);
	for (k = 0; singletons[k] != NULL; k++) {
		dup = singletons[k];
		if (strlen(dup) == i && memcmp(b, dup, i) == 0 &&
		    rawhdr_get(q, dup, &seen) >= 0)
			return "a header the guards read is sent twice";
	}
	/* libwebsockets reads Sec-WebSocket-Origin as Origin */
	if ((i == 6 && memcmp(b, "origin", 6) == 0 &&
	    rawhdr_get(q, "sec-websocket-origin", &seen) >= 0) ||
	    (i == 20 && memcmp(b, "sec-websocket-origin", 20) == 0 &&
	    rawhdr_get(q, "origin", &seen) >= 0))
		return "a header the guards read is sent twice";
	q->nf++;
	return NULL;
}

/* Parse a complete block b[0..n), ending with its empty line's CRLF. */
static void
parse(struct rawhdr_req *q, char *b, size_t n)
{
	size_t	 i, start = 0, line = 0;

	q->block = b;
	q->len = n;
	q->nf = 0;
	q->bad = NULL;
	for (i = 0; i < n && q->bad == NULL; i++) {
		if (b[i] == '\r' && (i + 1 >= n || b[i + 1] != '\n'))
			q->bad = "a CR that does not end a line";
		else if (b[i] == '\n' && (i == 0 || b[i - 1] != '\r'))
			q->bad = "a line that ends in LF alone";
		if (q->bad != NULL || b[i] != '\n')
			continue;
		if (i - 1 == start)
			break;		/* the empty line: the end */
		q->bad = line == 0 ? request_line(q, b + start,
		    i - 1 - start) : field_line(q, b + start, i - 1 - start,
		    start);
		line++;
		start = i + 1;
	}
	b[n - 2] = '\0';	/* the last CRLF: a C string for readers */
}

/* A block is complete: queue it and set the framing after it. */
static void
complete(struct rawhdr *h)
{
	struct rawhdr_req	*q;
	const char		*v;
	uint64_t		 cl = 0;
	int			 n, k;

	if (h->qlen == RAWHDR_PENDING) {
		lose(h, "too many requests sent ahead of their answers");
		return;
	}
	q = &h->q[(h->qhead + h->qlen) % RAWHDR_PENDING];
	memset(q, 0, sizeof(*q));
	parse(q, h->buf, h->len);
	q->end = h->pos;	/* without a body; the framing below may add it */
	h->qlen++;
	h->buf = NULL;
	h->len = h->cap = 0;
	h->state = ST_HEAD;
	if (q->bad != NULL) {
		q->end = 0;
		lose(h, "a malformed request came before");
		return;
	}
	if (rawhdr_get(q, "transfer-encoding", &v) >= 0) {
		q->end = 0;
		lose(h, "a request with Transfer-Encoding came before");
		return;
	}
	if (rawhdr_get(q, "upgrade", &v) >= 0) {
		lose(h, "the connection was upgraded");
		return;
	}
	if ((n = rawhdr_get(q, "content-length", &v)) < 0)
		return;
	for (k = 0; k < n; k++) {
		if (v[k] < '0' || v[k] > '9' || cl > (UINT64_MAX - 9) / 10) {
			q->end = 0;
			lose(h, "a request with a bad Content-Length came "
			    "before");
			return;
		}
		cl = cl * 10 + (uint64_t)(v[k] - '0');
	}
	if (n == 0 || cl > UINT64_MAX - h->pos) {
		q->end = 0;
		lose(h, "a request with a bad Content-Length came before");
		return;
	}
	q->end = h->pos + cl;
	q->has_body = cl > 0;
	if (cl > 0) {
		h->body_left = cl;
		h->state = ST_BODY;
	}
}

/* Do the bytes gathered so far and p[0..take) end in the blank line? */
static int
at_end(const struct rawhdr *h, const char *p, size_t take)
{
	size_t	end = h->len + take, k, idx;
	char	w[4];

	if (end < 4)
		return 0;
	for (k = 0; k < 4; k++) {
		idx = end - 4 + k;
		w[k] = idx < h->len ? h->buf[idx] : p[idx - h->len];
	}
	return memcmp(w, "\r\n\r\n", 4) == 0;
}

void
rawhdr_feed(struct rawhdr *h, const char *p, size_t n)
{
	size_t	take, cap;
	char	*nb;
	int	found;

	h->fed += n;
	while (n > 0 && h->state != ST_LOST) {
		if (h->state == ST_BODY) {
			take = n < h->body_left ? n : (size_t)h->body_left;
			h->body_left -= take;
			h->pos += take;
			p += take;
			n -= take;
			if (h->body_left == 0)
				h->state = ST_HEAD;
			continue;
		}
		/* empty lines before a request line are skipped */
		if (h->len == 0 && (*p == '\r' || *p == '\n')) {
			h->pos++;
			p++;
			n--;
			continue;
		}
		for (take = 0, found = 0; take < n && !found &&
		    h->len + take < RAWHDR_BLOCK_MAX; )
			found = p[take++] == '\n' && at_end(h, p, take);
		if (h->len + take > h->cap) {
			for (cap = h->cap ? h->cap : 1024; cap < h->len + take; )
				cap *= 2;
			if ((nb = realloc(h->buf, cap)) == NULL) {
				lose(h, "out of memory reading the headers");
				return;
			}
			h->buf = nb;
			h->cap = cap;
		}
		memcpy(h->buf + h->len, p, take);
		h->len += take;
		h->pos += take;
		p += take;
		n -= take;
		if (found)
			complete(h);
		else if (h->len >= RAWHDR_BLOCK_MAX)
			lose(h, "the headers are too long");
	}
}

int
rawhdr_take(struct rawhdr *h, struct rawhdr_req *out)
{
	if (h->qlen == 0) {
		memset(out, 0, sizeof(*out));
		out->bad = h->lost;
		return -ENOENT;
	}
	*out = h->q[h->qhead];
	h->qhead = (h->qhead + 1) % RAWHDR_PENDING;
	h->qlen--;
	return 0;
}
