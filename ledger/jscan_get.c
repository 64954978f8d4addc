/*
 * jscan_get — lookups on spans jscan_object() has validated, and decoding
 * strings and numbers out of them.
 */
#include <float.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "jscan.h"
#include "jscan_prim.h"

/* Bytes that may follow a number or literal: whitespace, a structural
 * character, a quote. */
static const unsigned char term[256] = {
	[' '] = 1, ['\t'] = 1, ['\n'] = 1, ['\r'] = 1, ['"'] = 1,
	['{'] = 1, ['}'] = 1, ['['] = 1, [']'] = 1, [':'] = 1, [','] = 1,
};

/*
 * Lookups on spans that jscan_object() has already validated: the grammar
 * is known to hold, so these only need to find value boundaries.
 */
/* The lowest byte of w equal to c has the lowest set bit (bytes above a
 * match may show false ones, which a lowest-bit search never sees). */
static inline uint64_t
has_byte(uint64_t w, unsigned char c)
{
	uint64_t	x = w ^ (ONES * c);

	return (x - ONES) & ~x & HIGHS;
}

/*
 * Past the closing quote of the valid string whose body starts at p,
 * eight bytes at a time; *esc set if it holds a backslash.  `end` bounds
 * the reads: the enclosing container's end, which the closing quote is
 * before.
 */
static inline const char *
str_end(const char *p, const char *end, int *esc)
{
	for (;;) {
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
		while (end - p >= 8) {
			uint64_t	w, m;

			memcpy(&w, p, 8);
			m = has_byte(w, '"') | has_byte(w, '\\');
			if (m != 0) {
				p += __builtin_ctzll(m) >> 3;
				break;
			}
			p += 8;
		}
#endif
		while (*p != '"' && *p != '\\')
			p++;
		if (*p == '"')
			return p + 1;
		*esc = 1;
		p += 2;
	}
}

/* Past the valid value at p (inside a container ending before end). */
static const char *
value_end(const char *p, const char *end)
{
	int	depth = 0, esc;

	if (*p == '"')
		return str_end(p + 1, end, &esc);
	if (*p != '{' && *p != '[') {
		while (p < end && !term[(unsigned char)*p])
			p++;
		return p;
	}
	for (;;) {
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
		/* skip to the next quote or bracket ('[' | 0x20 is '{',
		 * ']' | 0x20 is '}', and nothing else maps to either) */
		while (end - p >= 8) {
			uint64_t	w, m;

			memcpy(&w, p, 8);
			m = has_byte(w, '"') | has_byte(w | ONES * 0x20, '{') |
			    has_byte(w | ONES * 0x20, '}');
			if (m != 0) {
				p += __builtin_ctzll(m) >> 3;
				break;
			}
			p += 8;
		}
#endif
		switch (*p++) {
		case '"':
			p = str_end(p, end, &esc);
			break;
		case '{': case '[':
			depth++;
			break;
		case '}': case ']':
			if (--depth == 0)
				return p;
			break;
		}
	}
}

static struct jspan
span_of(const char *p, const char *end)
{
	struct jspan	s = { 0 };
	int		esc = 0;

	switch (*p) {
	case '"':
		s.p = p + 1;
		s.n = (uint32_t)(str_end(p + 1, end, &esc) - p - 2);
		s.kind = J_STRING;
		s.escaped = (uint8_t)esc;
		return s;
	case '{': s.kind = J_OBJECT; break;
	case '[': s.kind = J_ARRAY; break;
	case 't': s.kind = J_TRUE; break;
	case 'f': s.kind = J_FALSE; break;
	case 'n': s.kind = J_NULL; break;
	default: s.kind = J_NUMBER; break;
	}
	s.p = p;
	s.n = (uint32_t)(value_end(p, end) - p);
	return s;
}

void
jscan_getn(struct jspan obj, const char *const *names, struct jspan *out,
    size_t n)
{
	const char	*p, *end;
	size_t		 i, lens[8];

	for (i = 0; i < n; i++) {
		out[i].kind = J_NONE;
		lens[i] = strlen(names[i]);
	}
	if (obj.kind != J_OBJECT)
		return;
	end = obj.p + obj.n;
	p = ws(obj.p + 1, end);
	while (*p == '"') {
		struct jspan	key = span_of(p, end), v;
		int		match = -1;

		for (i = 0; i < n && !key.escaped; i++)
			if (key.n == lens[i] &&
			    memcmp(key.p, names[i], lens[i]) == 0)
				match = (int)i;
		/* past the closing quote and the ':' */
		p = ws(ws(key.p + key.n + 1, end) + 1, end);
		v = span_of(p, end);
		if (match >= 0)
			out[match] = v;		/* the last duplicate wins */
		p = ws(v.kind == J_STRING ? v.p + v.n + 1 : v.p + v.n, end);
		if (*p != ',')
			break;
		p = ws(p + 1, end);
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
	const char	*p, *end;

	if (arr.kind != J_ARRAY)
		return none;
	end = arr.p + arr.n;
	p = ws(arr.p + (*pos == 0 ? 1 : *pos), end);
	if (*pos != 0) {
		if (*p != ',')
			return none;
		p = ws(p + 1, end);
	}
	if (*p == ']')
		return none;
	v = span_of(p, end);
	*pos = (size_t)((v.kind == J_STRING ? v.p + v.n + 1 : v.p + v.n) -
	    arr.p);
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

/*
 * A JSON number (already validated) as strtod gives it, when that needs
 * no big arithmetic: at most 19 significant digits making an integer w <=
 * 2^53, and a decimal exponent e with |e| <= 22.  Then w and 10^|e| are
 * exact doubles and one IEEE multiplication or division rounds w * 10^e
 * correctly, which is what strtod does (Clinger's fast path).  Anything
 * else returns -1 and goes to strtod.
 */
static int
num_fast(const char *p, size_t n, double *out)
{
#if defined(FLT_EVAL_METHOD) && FLT_EVAL_METHOD == 0
	static const double	p10[] = {
		1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
		1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21,
		1e22
	};
	const char	*end = p + n;
	uint64_t	 w = 0;
	int		 neg = 0, sig = 0, e = 0, frac = 0;
	double		 d;

	if (p < end && *p == '-') {
		neg = 1;
		p++;
	}
	for (; p < end && (unsigned)(*p - '0') < 10; p++) {
		if (sig >= 19)
			return -1;
		w = w * 10 + (uint64_t)(*p - '0');
		sig += w != 0;
	}
	if (p < end && *p == '.')
		for (p++; p < end && (unsigned)(*p - '0') < 10; p++) {
			if (sig >= 19)
				return -1;
			w = w * 10 + (uint64_t)(*p - '0');
			sig += w != 0;
			frac++;
		}
	if (p < end && (*p == 'e' || *p == 'E')) {
		int	sign = 1, ev = 0;

		if (++p < end && (*p == '+' || *p == '-'))
			sign = *p++ == '-' ? -1 : 1;
		for (; p < end && (unsigned)(*p - '0') < 10; p++) {
			if (ev > 100000)
				return -1;
			ev = ev * 10 + (*p - '0');
		}
		e = sign * ev;
	}
	if (p != end)
		return -1;
	e -= frac;
	if (w == 0) {
		*out = neg ? -0.0 : 0.0;
		return 0;
	}
	if (w > (1ull << 53) || e > 22 || e < -22)
		return -1;
	d = (double)w;
	if (e > 0)
		d *= p10[e];
	else if (e < 0)
		d /= p10[-e];
	*out = neg ? -d : d;
	return 0;
#else
	(void)p;
	(void)n;
	(void)out;
	return -1;
#endif
}

int
jscan_num(struct jspan s, double *out)
{
	char	 buf[64], *end;
	int	 n;

	if (s.kind == J_NUMBER) {
		if (num_fast(s.p, s.n, out) == 0)
			return 0;
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
