/*
 * jscan — validating JSON scanner for ledger lines (see jscan.h).
 *
 * Two scanners that accept exactly the same lines:
 *
 * - the fast path, for lines of up to JSCAN_FAST_MAX_LEN bytes and
 *   JSCAN_FAST_MAX_TOKENS tokens.  Stage 1 classifies 64 bytes at a time
 *   with vector compares (AVX-512 or AVX2 where the CPU has them, SSE2 on
 *   every x86-64, plain C elsewhere) into bit masks — quotes, backslashes,
 *   structural characters, whitespace, control bytes — and derives from
 *   them, with carries between blocks, which quotes are escaped, which
 *   bytes lie inside strings and where every token starts.  Its output is
 *   the line's skeleton (one letter per token: { } [ ] : , quote, or
 *   "number or literal") and each token's position.  Stage 2 needs only
 *   the skeleton to check the grammar and to say which tokens are
 *   numbers to check and where the top-level members are: a plan, built
 *   once per skeleton and, with a jscan_shapes, reused for every line of
 *   the same shape.  Then the plan is applied to the line: its numbers
 *   checked, the members the fold reads measured.  A string costs two
 *   tokens however long it is.  What masks cannot say is checked by hand
 *   and only when present: escapes when a line holds a backslash, UTF-8
 *   when it holds a byte >= 0x80.
 *
 * - the reference scanner (jscan_object_ref): one recursive-descent pass
 *   that says *why* a line is refused and where.  The fast path never
 *   explains: when it refuses a line (rare: the line is broken), the
 *   reference scanner scans it again for the verdict and the reason.
 *   tests/ledger/test_jscan.c drives both, with every classifier, over the
 *   fixtures and a few hundred thousand mutations of them, and checks
 *   that they agree on every verdict and every member.
 *
 * Why a skeleton and plans: these lines hold a token every four bytes or
 * so, and any loop that looks at each token through a state machine —
 * branchy or table-driven — ran slower here than the reference scanner's
 * byte loop.  Lines of one writer share a handful of shapes.
 *
 * Recursion (reference) and the stack of open containers (plan building)
 * are bounded by JSCAN_MAX_DEPTH, so a line of a hundred thousand '[' is
 * refused, not a stack overflow.
 *
 * The files, each using only those above it in this list:
 *   jscan_prim.h  the byte-level pieces, static inline (UTF-8, \u
 *                 escapes, SWAR masks, whitespace, member names)
 *   jscan.c       this file: the reference scanner and the number range
 *                 rule both scanners apply (jscan_number_fits)
 *   jscan_get.c   lookups and decoding on validated spans
 *   jscan_fast.c  the fast path, the shape cache, lookups through the
 *                 token index, and the entry points (jscan_object…)
 */
#include <errno.h>
#include <float.h>
#include <stdlib.h>
#include <string.h>

#include "jscan.h"
#include "jscan_prim.h"

struct scan {
	const char	*s, *p, *end;
	const char	*error;
	const char	*error_p;
};

/* 1 for bytes that end the fast string loop: '"', '\\', controls,
 * non-ASCII.  Written out, so nothing needs building before first use. */
static const unsigned char special[256] = {
	[0x00 ... 0x1f] = 1, ['"'] = 1, ['\\'] = 1, [0x80 ... 0xff] = 1,
};

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


/* Does any byte of w need the slow path: '"', '\\', < 0x20 or >= 0x80? */
static inline int
swar_special(uint64_t w)
{
	uint64_t	quote = w ^ (ONES * '"');
	uint64_t	bslash = w ^ (ONES * '\\');

	return ((((quote - ONES) & ~quote) | ((bslash - ONES) & ~bslash) |
	    (w - ONES * 0x20) | w) & HIGHS) != 0;
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

/*
 * The magnitude decides almost every number without converting it: a
 * value with its first significant digit at 10^m is finite for m < 308
 * and overflows for m > 308 (DBL_MAX is 1.797…e308).  For m == 308 the
 * significant digits go to strtod as D.DDD…e308 — at most 330 of them
 * and a sticky 1 for any non-zero digit beyond, which rounds the same
 * way: the halfway point to 2^1024 is an integer of 309 digits.  No
 * allocation, nothing read past p + n.
 */
int
jscan_number_fits(const char *p, size_t n)
{
	const char	*end = p + n, *ip, *fp = NULL, *fe = NULL, *q;
	const char	*seg[2][2];
	char		 buf[344];
	int64_t		 idig, fz = 0, exp = 0, mag;
	size_t		 k = 0;
	int		 eneg = 0, sticky = 0, i;
	double		 d;

	if (p < end && *p == '-')
		p++;
	for (ip = p; p < end && (unsigned)(*p - '0') < 10; p++)
		;
	idig = ip < end && *ip == '0' ? 0 : (int64_t)(p - ip);
	if (p < end && *p == '.') {
		for (fp = ++p; p < end && (unsigned)(*p - '0') < 10; p++)
			;
		fe = p;
	}
	if (p < end && (*p == 'e' || *p == 'E')) {
		if (++p < end && (*p == '+' || *p == '-'))
			eneg = *p++ == '-';
		for (; p < end && (unsigned)(*p - '0') < 10; p++)
			if (exp < 100000000)	/* far past any double */
				exp = exp * 10 + (*p - '0');
		if (eneg)
			exp = -exp;
	}
	if (idig == 0) {
		/* 0.000ddd: the first non-zero digit of the fraction */
		if (fp == NULL)
			return 1;
		while (fp + fz < fe && fp[fz] == '0')
			fz++;
		if (fp + fz == fe)
			return 1;	/* zero */
		mag = exp - fz - 1;
	} else
		mag = exp + idig - 1;
	if (mag < 308)
		return 1;
	if (mag > 308)
		return 0;
	/* the significant digits: the integer part's, then the fraction's
	 * (past its leading zeros when the integer part is 0) */
	seg[0][0] = idig > 0 ? ip : fp + fz;
	seg[0][1] = idig > 0 ? ip + idig : fe;
	seg[1][0] = idig > 0 && fp != NULL ? fp : NULL;
	seg[1][1] = idig > 0 && fp != NULL ? fe : NULL;
	for (i = 0; i < 2; i++)
		for (q = seg[i][0]; q != NULL && q < seg[i][1]; q++) {
			if (k < 332) {
				buf[k++] = *q;
				if (k == 1)
					buf[k++] = '.';
			} else if (*q != '0')
				sticky = 1;
		}
	if (sticky)
		buf[k++] = '1';
	memcpy(buf + k, "e308", 5);
	d = strtod(buf, NULL);
	return d <= DBL_MAX;
}

/* A number by the grammar, and within a double's range (docs/json.md):
 * 1e999999 is as much an error as 1e, since every reader would make it
 * infinity or null. */
static int
scan_number(struct scan *sc)
{
	const char	*p = sc->p, *end = sc->end, *start = sc->p, *d;
	int		 big = 0;

	if (p < end && *p == '-')
		p++;
	if (p >= end)
		goto bad;
	if (*p == '0')
		p++;
	else if (*p >= '1' && *p <= '9') {
		for (d = p; p < end && *p >= '0' && *p <= '9'; p++)
			;
		big = p - d >= 200;
	} else
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
		big = 1;
		if (p < end && (*p == '+' || *p == '-'))
			p++;
		if (p >= end || *p < '0' || *p > '9')
			goto bad;
		while (p < end && *p >= '0' && *p <= '9')
			p++;
	}
	if (big && !jscan_number_fits(start, (size_t)(p - start))) {
		sc->p = start;
		return fail(sc, "number out of range");
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
jscan_object_ref(const char *line, size_t len, struct jscan_result *r)
{
	struct scan	sc = { line, line, line + len, NULL, NULL };

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

int
jscan_utf8_len(const unsigned char *p, const unsigned char *end)
{
	return p[0] < 0x80 ? 1 : utf8_len(p, end);
}
