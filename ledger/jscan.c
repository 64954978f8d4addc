/*
 * jscan — validating JSON scanner for ledger lines (see jscan.h).
 *
 * One recursive-descent pass.  Strings are the bulk of every record, so
 * the string loop is the hot loop: it runs over plain ASCII with a table
 * lookup per byte and only drops into the escape and UTF-8 paths when a
 * byte needs it.  Recursion is bounded by JSCAN_MAX_DEPTH, so a line of a
 * hundred thousand '[' is refused, not a stack overflow.
 */
#include <stdlib.h>
#include <string.h>

#include "jscan.h"

struct scan {
	const char	*s, *p, *end;
	const char	*error;
	const char	*error_p;
};

/* 1 for bytes that end the fast string loop: '"', '\\', controls, non-ASCII */
static unsigned char special[256];
static int special_ready;

static void
special_init(void)
{
	int	c;

	for (c = 0; c < 256; c++)
		special[c] = (c < 0x20 || c == '"' || c == '\\' || c >= 0x80);
	special_ready = 1;
}

static int
fail(struct scan *sc, const char *why)
{
	if (sc->error == NULL) {
		sc->error = why;
		sc->error_p = sc->p;
	}
	return -1;
}

static void
skip_ws(struct scan *sc)
{
	while (sc->p < sc->end && (*sc->p == ' ' || *sc->p == '\t' ||
	    *sc->p == '\n' || *sc->p == '\r'))
		sc->p++;
}

#define ONES	0x0101010101010101ull
#define HIGHS	0x8080808080808080ull

/* Does any byte of w need the slow path: '"', '\\', < 0x20 or >= 0x80? */
static inline int
swar_special(uint64_t w)
{
	uint64_t	quote = w ^ (ONES * '"');
	uint64_t	bslash = w ^ (ONES * '\\');

	return ((((quote - ONES) & ~quote) | ((bslash - ONES) & ~bslash) |
	    (w - ONES * 0x20) | w) & HIGHS) != 0;
}

/* Length of the valid UTF-8 sequence at p (lead byte >= 0x80), or 0. */
static int
utf8_len(const unsigned char *p, const unsigned char *end)
{
	unsigned char	c = p[0];
	int		n, i;
	uint32_t	cp;

	if (c >= 0xc2 && c <= 0xdf)
		n = 2, cp = c & 0x1f;
	else if (c >= 0xe0 && c <= 0xef)
		n = 3, cp = c & 0x0f;
	else if (c >= 0xf0 && c <= 0xf4)
		n = 4, cp = c & 0x07;
	else
		return 0;
	if (end - p < n)
		return 0;
	for (i = 1; i < n; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		cp = (cp << 6) | (p[i] & 0x3f);
	}
	/* overlong forms, surrogates, beyond U+10FFFF */
	if ((n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) ||
	    (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff)
		return 0;
	return n;
}

static int
hex4(const char *p, uint32_t *out)
{
	uint32_t	v = 0;
	int		i;

	for (i = 0; i < 4; i++) {
		char	c = p[i];

		v <<= 4;
		if (c >= '0' && c <= '9')
			v |= c - '0';
		else if (c >= 'a' && c <= 'f')
			v |= c - 'a' + 10;
		else if (c >= 'A' && c <= 'F')
			v |= c - 'A' + 10;
		else
			return -1;
	}
	*out = v;
	return 0;
}

/* sc->p at the opening quote; leaves it past the closing one. */
static int
scan_string(struct scan *sc, struct jspan *out)
{
	const unsigned char	*p = (const unsigned char *)sc->p + 1;
	const unsigned char	*end = (const unsigned char *)sc->end;
	const unsigned char	*start = p;
	int			 escaped = 0;

	for (;;) {
		/* eight bytes at a time while none of them is special */
		while (end - p >= 8) {
			uint64_t	w;

			memcpy(&w, p, 8);
			if (swar_special(w))
				break;
			p += 8;
		}
		while (p < end && !special[*p])
			p++;
		if (p >= end) {
			sc->p = (const char *)p;
			return fail(sc, "unterminated string");
		}
		if (*p == '"')
			break;
		if (*p == '\\') {
			escaped = 1;
			if (p + 1 >= end) {
				sc->p = (const char *)p;
				return fail(sc, "unterminated string");
			}
			switch (p[1]) {
			case '"': case '\\': case '/': case 'b': case 'f':
			case 'n': case 'r': case 't':
				p += 2;
				break;
			case 'u': {
				uint32_t	u;

				if (end - p < 6 || hex4((const char *)p + 2, &u)) {
					sc->p = (const char *)p;
					return fail(sc, "bad \\u escape");
				}
				p += 6;
				/* a lone surrogate cannot become UTF-8 */
				if (u >= 0xd800 && u <= 0xdbff) {
					uint32_t	lo;

					if (end - p < 6 || p[0] != '\\' ||
					    p[1] != 'u' ||
					    hex4((const char *)p + 2, &lo) ||
					    lo < 0xdc00 || lo > 0xdfff) {
						sc->p = (const char *)p;
						return fail(sc,
						    "unpaired surrogate escape");
					}
					p += 6;
				} else if (u >= 0xdc00 && u <= 0xdfff) {
					sc->p = (const char *)p;
					return fail(sc, "unpaired surrogate escape");
				}
				break;
			}
			default:
				sc->p = (const char *)p;
				return fail(sc, "bad escape");
			}
			continue;
		}
		if (*p < 0x20) {
			sc->p = (const char *)p;
			return fail(sc, *p == 0 ? "NUL byte" :
			    "control character in string");
		}
		{
			int	n = utf8_len(p, end);

			if (n == 0) {
				sc->p = (const char *)p;
				return fail(sc, "invalid UTF-8");
			}
			p += n;
		}
	}
	if (out != NULL) {
		out->p = (const char *)start;
		out->n = (uint32_t)(p - start);
		out->kind = J_STRING;
		out->escaped = escaped;
	}
	sc->p = (const char *)p + 1;
	return 0;
}

static int
scan_number(struct scan *sc)
{
	const char	*p = sc->p, *end = sc->end;

	if (p < end && *p == '-')
		p++;
	if (p >= end)
		goto bad;
	if (*p == '0')
		p++;
	else if (*p >= '1' && *p <= '9')
		while (p < end && *p >= '0' && *p <= '9')
			p++;
	else
		goto bad;
	if (p < end && *p == '.') {
		p++;
		if (p >= end || *p < '0' || *p > '9')
			goto bad;
		while (p < end && *p >= '0' && *p <= '9')
			p++;
	}
	if (p < end && (*p == 'e' || *p == 'E')) {
		p++;
		if (p < end && (*p == '+' || *p == '-'))
			p++;
		if (p >= end || *p < '0' || *p > '9')
			goto bad;
		while (p < end && *p >= '0' && *p <= '9')
			p++;
	}
	sc->p = p;
	return 0;
bad:
	sc->p = p;
	return fail(sc, "bad number");
}

static int
scan_literal(struct scan *sc, const char *lit, size_t n)
{
	if ((size_t)(sc->end - sc->p) < n || memcmp(sc->p, lit, n) != 0)
		return fail(sc, "unexpected character");
	sc->p += n;
	return 0;
}

/* Top-level member names the fold reads, by length first: cheaper than
 * hashing names that are mostly a handful of bytes long. */
static const struct {
	const char	*name;
	uint8_t		 len, field;
} fields[] = {
	{ "at", 2, F_AT }, { "ctx", 3, F_CTX }, { "type", 4, F_TYPE },
	{ "jump", 4, F_JUMP }, { "kind", 4, F_KIND }, { "note", 4, F_NOTE },
	{ "phase", 5, F_PHASE },
	{ "build", 5, F_BUILD }, { "worst", 5, F_WORST },
	{ "track", 5, F_TRACK }, { "units", 5, F_UNITS },
	{ "frame", 5, F_FRAME }, { "minted", 6, F_MINTED },
	{ "render", 6, F_RENDER }, { "memory", 6, F_MEMORY },
	{ "frameMs", 7, F_FRAMEMS }, { "automated", 9, F_AUTOMATED },
	{ "footprint", 9, F_FOOTPRINT },
	{ "classification", 14, F_CLASSIFICATION },
};

static int
field_of(const char *p, uint32_t n)
{
	size_t	i;

	if (n < 2 || n > 14)
		return -1;
	for (i = 0; i < sizeof(fields) / sizeof(fields[0]); i++)
		if (fields[i].len == n && p[0] == fields[i].name[0] &&
		    memcmp(p, fields[i].name, n) == 0)
			return fields[i].field;
	return -1;
}

static int scan_value(struct scan *, int, struct jspan *);

static int
scan_object_body(struct scan *sc, int depth, struct jscan_result *top)
{
	sc->p++;			/* '{' */
	skip_ws(sc);
	if (sc->p < sc->end && *sc->p == '}') {
		sc->p++;
		return 0;
	}
	for (;;) {
		struct jspan	 key, val, *slot = NULL;

		skip_ws(sc);
		if (sc->p >= sc->end || *sc->p != '"')
			return fail(sc, "expected member name");
		if (scan_string(sc, &key))
			return -1;
		skip_ws(sc);
		if (sc->p >= sc->end || *sc->p != ':')
			return fail(sc, "expected ':'");
		sc->p++;
		skip_ws(sc);
		if (top != NULL && !key.escaped) {
			int	f = field_of(key.p, key.n);
			if (f >= 0)
				slot = &top->f[f];
		}
		if (scan_value(sc, depth + 1, slot ? &val : NULL))
			return -1;
		if (slot != NULL)
			*slot = val;
		skip_ws(sc);
		if (sc->p >= sc->end)
			return fail(sc, "unterminated object");
		if (*sc->p == ',') {
			sc->p++;
			continue;
		}
		if (*sc->p == '}') {
			sc->p++;
			return 0;
		}
		return fail(sc, "expected ',' or '}'");
	}
}

static int
scan_array_body(struct scan *sc, int depth)
{
	sc->p++;			/* '[' */
	skip_ws(sc);
	if (sc->p < sc->end && *sc->p == ']') {
		sc->p++;
		return 0;
	}
	for (;;) {
		skip_ws(sc);
		if (scan_value(sc, depth + 1, NULL))
			return -1;
		skip_ws(sc);
		if (sc->p >= sc->end)
			return fail(sc, "unterminated array");
		if (*sc->p == ',') {
			sc->p++;
			continue;
		}
		if (*sc->p == ']') {
			sc->p++;
			return 0;
		}
		return fail(sc, "expected ',' or ']'");
	}
}

/* sc->p at the first byte of a value (whitespace already skipped). */
static int
scan_value(struct scan *sc, int depth, struct jspan *out)
{
	const char	*start = sc->p;
	uint8_t		 kind;
	int		 rc;

	if (sc->p >= sc->end)
		return fail(sc, "unexpected end of line");
	switch (*sc->p) {
	case '"':
		return scan_string(sc, out);
	case '{':
		if (depth >= JSCAN_MAX_DEPTH)
			return fail(sc, "nested too deep");
		kind = J_OBJECT;
		rc = scan_object_body(sc, depth, NULL);
		break;
	case '[':
		if (depth >= JSCAN_MAX_DEPTH)
			return fail(sc, "nested too deep");
		kind = J_ARRAY;
		rc = scan_array_body(sc, depth);
		break;
	case 't':
		kind = J_TRUE;
		rc = scan_literal(sc, "true", 4);
		break;
	case 'f':
		kind = J_FALSE;
		rc = scan_literal(sc, "false", 5);
		break;
	case 'n':
		kind = J_NULL;
		rc = scan_literal(sc, "null", 4);
		break;
	case '\0':
		return fail(sc, "NUL byte");
	default:
		kind = J_NUMBER;
		rc = scan_number(sc);
		break;
	}
	if (rc == 0 && out != NULL) {
		out->p = start;
		out->n = (uint32_t)(sc->p - start);
		out->kind = kind;
		out->escaped = 0;
	}
	return rc;
}

int
jscan_object(const char *line, size_t len, struct jscan_result *r)
{
	struct scan	sc = { line, line, line + len, NULL, NULL };

	if (!special_ready)
		special_init();
	memset(r, 0, sizeof(*r));
	skip_ws(&sc);
	if (sc.p >= sc.end || *sc.p != '{') {
		fail(&sc, sc.p < sc.end && *sc.p == '\0' ? "NUL byte" :
		    "not a JSON object");
		goto bad;
	}
	if (scan_object_body(&sc, 1, r))
		goto bad;
	skip_ws(&sc);
	if (sc.p != sc.end) {
		fail(&sc, *sc.p == '\0' ? "NUL byte" :
		    "trailing bytes after the object");
		goto bad;
	}
	return 0;
bad:
	r->error = sc.error;
	r->error_at = (size_t)(sc.error_p - line);
	return -1;
}

/*
 * Lookups on spans that jscan_object() has already validated: the grammar
 * is known to hold, so these only need to find value boundaries.
 */
/* The closing quote of a valid string whose body starts at p: the first
 * '"' not escaped by an odd run of backslashes. */
static const char *
string_end(const char *p)
{
	const char	*q = p;

	for (;;) {
		const char	*b;

		q = strchr(q, '"');
		for (b = q; b > p && b[-1] == '\\'; b--)
			;
		if ((q - b) % 2 == 0)
			return q;
		q++;
	}
}

static const char *
skip_value(const char *p)
{
	int	depth = 0;

	for (;;) {
		switch (*p) {
		case '"':
			p = string_end(p + 1) + 1;
			break;
		case '{': case '[':
			depth++;
			p++;
			break;
		case '}': case ']':
			depth--;
			p++;
			break;
		default:
			/* a number, literal, or separator inside a container */
			if (depth == 0) {
				while (*p != ',' && *p != '}' && *p != ']' &&
				    *p != ' ' && *p != '\t' && *p != '\r' &&
				    *p != '\n')
					p++;
				return p;
			}
			p++;
			break;
		}
		if (depth == 0)
			return p;
	}
}

static const char *
ws(const char *p)
{
	while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
		p++;
	return p;
}

static struct jspan
span_of(const char *p)
{
	struct jspan	s = { 0 };
	const char	*e = skip_value(p);

	switch (*p) {
	case '"':
		s.p = p + 1;
		s.n = (uint32_t)(e - p - 2);
		s.kind = J_STRING;
		s.escaped = memchr(s.p, '\\', s.n) != NULL;
		return s;
	case '{': s.kind = J_OBJECT; break;
	case '[': s.kind = J_ARRAY; break;
	case 't': s.kind = J_TRUE; break;
	case 'f': s.kind = J_FALSE; break;
	case 'n': s.kind = J_NULL; break;
	default: s.kind = J_NUMBER; break;
	}
	s.p = p;
	s.n = (uint32_t)(e - p);
	return s;
}

void
jscan_getn(struct jspan obj, const char *const *names, struct jspan *out,
    size_t n)
{
	const char	*p;
	size_t		 i, lens[8];

	for (i = 0; i < n; i++) {
		out[i].kind = J_NONE;
		lens[i] = strlen(names[i]);
	}
	if (obj.kind != J_OBJECT)
		return;
	p = ws(obj.p + 1);
	while (*p == '"') {
		struct jspan	key = span_of(p);
		int		match = -1;

		for (i = 0; i < n && !key.escaped; i++)
			if (key.n == lens[i] &&
			    memcmp(key.p, names[i], lens[i]) == 0)
				match = (int)i;
		p = ws(ws(key.p + key.n + 1) + 1);	/* past '"' and ':' */
		if (match >= 0)
			out[match] = span_of(p);	/* last duplicate wins */
		p = ws(skip_value(p));
		if (*p != ',')
			break;
		p = ws(p + 1);
	}
}

struct jspan
jscan_get(struct jspan obj, const char *name)
{
	struct jspan	v;

	jscan_getn(obj, &name, &v, 1);
	return v;
}

struct jspan
jscan_next(struct jspan arr, size_t *pos)
{
	struct jspan	 none = { 0 }, v;
	const char	*p;

	if (arr.kind != J_ARRAY)
		return none;
	p = ws(arr.p + (*pos == 0 ? 1 : *pos));
	if (*pos != 0) {
		if (*p != ',')
			return none;
		p = ws(p + 1);
	}
	if (*p == ']')
		return none;
	v = span_of(p);
	*pos = (size_t)(skip_value(p) - arr.p);
	return v;
}

struct jspan
jscan_at(struct jspan arr, size_t i)
{
	size_t		pos = 0;
	struct jspan	v;

	do
		v = jscan_next(arr, &pos);
	while (v.kind != J_NONE && i-- > 0);
	return v;
}

static size_t
put_utf8(char *o, uint32_t cp)
{
	if (cp < 0x80) {
		o[0] = (char)cp;
		return 1;
	}
	if (cp < 0x800) {
		o[0] = (char)(0xc0 | (cp >> 6));
		o[1] = (char)(0x80 | (cp & 0x3f));
		return 2;
	}
	if (cp < 0x10000) {
		o[0] = (char)(0xe0 | (cp >> 12));
		o[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
		o[2] = (char)(0x80 | (cp & 0x3f));
		return 3;
	}
	o[0] = (char)(0xf0 | (cp >> 18));
	o[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
	o[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
	o[3] = (char)(0x80 | (cp & 0x3f));
	return 4;
}

int
jscan_str(struct jspan s, char *buf, size_t cap)
{
	const char	*p = s.p, *end = s.p + s.n;
	size_t		 o = 0;

	if (cap == 0)
		return -1;
	if (s.kind == J_NONE || s.kind == J_OBJECT || s.kind == J_ARRAY) {
		buf[0] = '\0';
		return -1;
	}
	if (s.kind != J_STRING || !s.escaped) {
		size_t	n = s.n < cap - 1 ? s.n : cap - 1;

		/* never cut a UTF-8 sequence in half */
		while (n < s.n && n > 0 && ((unsigned char)p[n] & 0xc0) == 0x80)
			n--;
		memcpy(buf, p, n);
		buf[n] = '\0';
		return s.kind == J_STRING || s.kind == J_NUMBER ||
		    s.kind == J_TRUE || s.kind == J_FALSE ||
		    s.kind == J_NULL ? (int)n : -1;
	}
	while (p < end) {
		char		tmp[4];
		size_t		tn;
		uint32_t	cp;

		if (*p != '\\') {
			size_t	n = 1;

			if ((unsigned char)*p >= 0x80)
				n = utf8_len((const unsigned char *)p,
				    (const unsigned char *)end);
			if (o + n >= cap)
				break;
			memcpy(buf + o, p, n);
			o += n;
			p += n;
			continue;
		}
		switch (p[1]) {
		case 'b': tmp[0] = '\b'; tn = 1; break;
		case 'f': tmp[0] = '\f'; tn = 1; break;
		case 'n': tmp[0] = '\n'; tn = 1; break;
		case 'r': tmp[0] = '\r'; tn = 1; break;
		case 't': tmp[0] = '\t'; tn = 1; break;
		case 'u':
			hex4(p + 2, &cp);
			if (cp >= 0xd800 && cp <= 0xdbff) {
				uint32_t	lo;

				hex4(p + 8, &lo);
				cp = 0x10000 + ((cp - 0xd800) << 10) +
				    (lo - 0xdc00);
				p += 6;
			}
			tn = put_utf8(tmp, cp);
			p += 4;
			break;
		default: tmp[0] = p[1]; tn = 1; break;
		}
		if (o + tn >= cap)
			break;
		memcpy(buf + o, tmp, tn);
		o += tn;
		p += 2;
	}
	buf[o] = '\0';
	return (int)o;
}

int
jscan_num(struct jspan s, double *out)
{
	char	 buf[64], *end;
	int	 n;

	if (s.kind == J_NUMBER) {
		if (s.n >= sizeof(buf))
			return -1;
		memcpy(buf, s.p, s.n);
		buf[s.n] = '\0';
		*out = strtod(buf, NULL);
		return 0;
	}
	if (s.kind != J_STRING)
		return -1;
	/* Writers that quote their numbers ("141.2") are common enough in
	 * hand-written records to accept, as long as the whole string is
	 * one finite number. */
	n = jscan_str(s, buf, sizeof(buf));
	if (n <= 0 || (size_t)n >= sizeof(buf) - 1)
		return -1;
	*out = strtod(buf, &end);
	if (end == buf || *end != '\0' || *out != *out ||
	    *out > 1e308 || *out < -1e308)
		return -1;
	return 0;
}

int
jscan_eq(struct jspan s, const char *lit)
{
	size_t	n = strlen(lit);

	if (s.kind != J_STRING)
		return 0;
	if (!s.escaped)
		return s.n == n && memcmp(s.p, lit, n) == 0;
	{
		char	buf[256];
		int	m = jscan_str(s, buf, sizeof(buf));

		return m >= 0 && (size_t)m == n && memcmp(buf, lit, n) == 0;
	}
}
