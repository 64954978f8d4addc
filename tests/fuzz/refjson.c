/*
 * refjson — the plain validator (see refjson.h).
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ledger/jscan.h"
#include "refjson.h"

struct ref {
	const unsigned char	*p, *end;
};

static int	value(struct ref *r, int depth);
static int	number_syntax(struct ref *r);

/* The plain way: a copy with its NUL, and strtod. */
static int
finite_text(const unsigned char *p, size_t n)
{
	char	*copy = malloc(n + 1);
	double	 d;

	if (copy == NULL)
		abort();
	memcpy(copy, p, n);
	copy[n] = '\0';
	d = strtod(copy, NULL);
	free(copy);
	return isfinite(d);
}

static int
at_end(const struct ref *r)
{
	return r->p >= r->end;
}

static void
ws(struct ref *r)
{
	while (!at_end(r) && (*r->p == ' ' || *r->p == '\t' ||
	    *r->p == '\n' || *r->p == '\r'))
		r->p++;
}

static int
eat(struct ref *r, unsigned char c)
{
	if (at_end(r) || *r->p != c)
		return 0;
	r->p++;
	return 1;
}

static int
hexval(unsigned char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* After "\u": four hex digits into *u. */
static int
hex4(struct ref *r, uint32_t *u)
{
	int	i, h;

	*u = 0;
	for (i = 0; i < 4; i++) {
		if (at_end(r) || (h = hexval(*r->p)) < 0)
			return 0;
		*u = *u * 16 + (uint32_t)h;
		r->p++;
	}
	return 1;
}

/* One UTF-8 encoded code point starting with a byte >= 0x80. */
static int
utf8(struct ref *r)
{
	unsigned char	c = *r->p++;
	uint32_t	cp;
	int		more, i;

	if ((c & 0xe0) == 0xc0)
		more = 1, cp = c & 0x1f;
	else if ((c & 0xf0) == 0xe0)
		more = 2, cp = c & 0x0f;
	else if ((c & 0xf8) == 0xf0)
		more = 3, cp = c & 0x07;
	else
		return 0;		/* a continuation byte, or 0xf8.. */
	for (i = 0; i < more; i++) {
		if (at_end(r) || (*r->p & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (*r->p++ & 0x3f);
	}
	/* the shortest form only */
	if ((more == 1 && cp < 0x80) || (more == 2 && cp < 0x800) ||
	    (more == 3 && cp < 0x10000))
		return 0;
	if (cp >= 0xd800 && cp <= 0xdfff)
		return 0;
	return cp <= 0x10ffff;
}

static int
string(struct ref *r)
{
	uint32_t	u, lo;

	if (!eat(r, '"'))
		return 0;
	for (;;) {
		if (at_end(r))
			return 0;
		if (*r->p == '"') {
			r->p++;
			return 1;
		}
		if (*r->p < 0x20)
			return 0;
		if (*r->p >= 0x80) {
			if (!utf8(r))
				return 0;
			continue;
		}
		if (*r->p != '\\') {
			r->p++;
			continue;
		}
		r->p++;
		if (at_end(r))
			return 0;
		switch (*r->p++) {
		case '"': case '\\': case '/': case 'b': case 'f': case 'n':
		case 'r': case 't':
			break;
		case 'u':
			if (!hex4(r, &u))
				return 0;
			if (u >= 0xdc00 && u <= 0xdfff)
				return 0;		/* a low half first */
			if (u >= 0xd800 && u <= 0xdbff) {
				if (!eat(r, '\\') || !eat(r, 'u') ||
				    !hex4(r, &lo) || lo < 0xdc00 || lo > 0xdfff)
					return 0;
			}
			break;
		default:
			return 0;
		}
	}
}

static int
digits(struct ref *r)
{
	int	n = 0;

	while (!at_end(r) && *r->p >= '0' && *r->p <= '9')
		r->p++, n++;
	return n;
}

/* number = [ minus ] int [ frac ] [ exp ], and strtod of its text is
 * finite (docs/json.md) */
static int
number(struct ref *r)
{
	const unsigned char	*start = r->p;

	if (!number_syntax(r))
		return 0;
	return finite_text(start, (size_t)(r->p - start));
}

static int
number_syntax(struct ref *r)
{
	eat(r, '-');
	if (eat(r, '0')) {
		/* no leading zeros */
	} else if (!at_end(r) && *r->p >= '1' && *r->p <= '9') {
		digits(r);
	} else {
		return 0;
	}
	if (eat(r, '.') && digits(r) == 0)
		return 0;
	if (eat(r, 'e') || eat(r, 'E')) {
		if (!eat(r, '+'))
			eat(r, '-');
		if (digits(r) == 0)
			return 0;
	}
	return 1;
}

static int
literal(struct ref *r, const char *word)
{
	while (*word != '\0')
		if (!eat(r, (unsigned char)*word++))
			return 0;
	return 1;
}

static int
object(struct ref *r, int depth)
{
	if (depth >= JSCAN_MAX_DEPTH || !eat(r, '{'))
		return 0;
	ws(r);
	if (eat(r, '}'))
		return 1;
	for (;;) {
		ws(r);
		if (!string(r))
			return 0;
		ws(r);
		if (!eat(r, ':'))
			return 0;
		ws(r);
		if (!value(r, depth + 1))
			return 0;
		ws(r);
		if (eat(r, '}'))
			return 1;
		if (!eat(r, ','))
			return 0;
	}
}

static int
array(struct ref *r, int depth)
{
	if (depth >= JSCAN_MAX_DEPTH || !eat(r, '['))
		return 0;
	ws(r);
	if (eat(r, ']'))
		return 1;
	for (;;) {
		ws(r);
		if (!value(r, depth + 1))
			return 0;
		ws(r);
		if (eat(r, ']'))
			return 1;
		if (!eat(r, ','))
			return 0;
	}
}

/* `depth` is the depth a container starting here would have. */
static int
value(struct ref *r, int depth)
{
	if (at_end(r))
		return 0;
	switch (*r->p) {
	case '{':
		return object(r, depth);
	case '[':
		return array(r, depth);
	case '"':
		return string(r);
	case 't':
		return literal(r, "true");
	case 'f':
		return literal(r, "false");
	case 'n':
		return literal(r, "null");
	default:
		return number(r);
	}
}

int
refjson_object(const char *data, size_t n)
{
	struct ref	r = { (const unsigned char *)data,
			      (const unsigned char *)data + n };

	ws(&r);
	if (at_end(&r) || *r.p != '{' || !object(&r, 1))
		return 0;
	ws(&r);
	return at_end(&r);
}

int
ref_number(const char *s, uint64_t *v)
{
	*v = 0;
	if (*s == '\0')
		return -1;
	for (; *s; s++) {
		if (*s < '0' || *s > '9' ||
		    *v > (UINT64_MAX - (uint64_t)(*s - '0')) / 10)
			return -1;
		*v = *v * 10 + (uint64_t)(*s - '0');
	}
	return 0;
}
