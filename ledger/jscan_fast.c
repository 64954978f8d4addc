/*
 * jscan_fast — the scanner's fast path: stage 1 (64 bytes at a time into
 * token masks), plans per line shape, the shape cache, and lookups
 * through a line's token index, and the entry points (jscan_object and
 * its variants), which try the fast path first and fall back to the
 * reference scanner.  jscan.c's opening comment says how the pieces fit.
 *
 * The top of the scanner: it uses the reference scanner and the number
 * range rule (jscan.c), the byte-walking lookups (jscan_get.c) where a
 * line has no token index, and jscan_prim.h; none of them uses it.
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "jscan.h"
#include "jscan_prim.h"

/* --- the fast path ------------------------------------------------------ */

/*
 * Lines of up to FAST_MAX_LEN bytes and MAX_TOKENS tokens take the fast
 * path (real records are well inside both); anything longer goes the
 * reference way.  The per-line state lives on the stack.
 */
#define FAST_MAX_LEN	JSCAN_FAST_MAX_LEN
#define MAX_TOKENS	JSCAN_FAST_MAX_TOKENS
#define MAX_MEMBERS	(MAX_TOKENS / 4)
#define SLACK		64	/* room for one block's vector stores */

/* One 64-byte block, one bit per byte. */
struct raw {
	uint64_t	q;	/* '"' */
	uint64_t	bs;	/* '\\' */
	uint64_t	st;	/* { } [ ] : , */
	uint64_t	ws;	/* space, \t, \n, \r */
	uint64_t	ctl;	/* < 0x20 */
	uint64_t	hi;	/* >= 0x80 */
};

struct stage1 {
	uint8_t		skel[MAX_TOKENS + SLACK];	/* the class of each token */
	uint16_t	pos[MAX_TOKENS + SLACK];	/* and where it is */
	size_t		ntok;
	uint64_t	esc_carry;	/* the next block's first byte is escaped */
	uint64_t	inside_carry;	/* all ones: the next block starts in a string */
	uint64_t	scalar_carry;	/* the last byte was part of a number/literal */
	uint64_t	bad;		/* a control byte inside a string */
	uint64_t	hi, bs;		/* any non-ASCII byte, any backslash */
};

/*
 * Byte classes: the bits of struct raw, and for structural characters a
 * token code in the top three bits.  The class of a token's first byte is
 * its letter in the line's skeleton: a quote (opening and closing quotes
 * are both tokens), one of { } [ ] : , or anything else, which starts a
 * number or literal.  Bytes >= 0x80 are 0 here (stage 1 masks them).
 */
enum { K_Q = 1, K_BS = 2, K_ST = 4, K_WS = 8, K_CTL = 16 };
enum {
	S_QUOTE = K_Q,
	S_OBJ = K_ST | 1 << 5, S_OBJ_END = K_ST | 2 << 5,
	S_ARR = K_ST | 3 << 5, S_ARR_END = K_ST | 4 << 5,
	S_COLON = K_ST | 5 << 5, S_COMMA = K_ST | 6 << 5,
	S_END = 0xff		/* past the last token */
};
static const unsigned char kclass[256] __attribute__((aligned(64))) = {
	[0x00 ... 0x08] = K_CTL, ['\t'] = K_CTL | K_WS, ['\n'] = K_CTL | K_WS,
	[0x0b ... 0x0c] = K_CTL, ['\r'] = K_CTL | K_WS, [0x0e ... 0x1f] = K_CTL,
	[' '] = K_WS, ['"'] = S_QUOTE, ['\\'] = K_BS,
	['{'] = S_OBJ, ['}'] = S_OBJ_END, ['['] = S_ARR, [']'] = S_ARR_END,
	[':'] = S_COLON, [','] = S_COMMA,
};

static inline void
raw_scalar(const unsigned char *p, struct raw *r)
{
	int	i;

	memset(r, 0, sizeof(*r));
	for (i = 0; i < 64; i++) {
		uint64_t	k = kclass[p[i]], bit = 1ull << i;

		r->q |= (k & K_Q) ? bit : 0;
		r->bs |= (k & K_BS) ? bit : 0;
		r->st |= (k & K_ST) ? bit : 0;
		r->ws |= (k & K_WS) ? bit : 0;
		r->ctl |= (k & K_CTL) ? bit : 0;
		r->hi |= p[i] >= 0x80 ? bit : 0;
	}
}

#ifdef JSCAN_X86
static inline uint64_t
mask16(__m128i v)
{
	return (uint64_t)(uint16_t)_mm_movemask_epi8(v);
}

static inline void
raw_sse2(const unsigned char *p, struct raw *r)
{
	int	i;

	memset(r, 0, sizeof(*r));
	for (i = 0; i < 4; i++) {
		__m128i	v = _mm_loadu_si128((const __m128i *)(p + 16 * i));
		__m128i	v20 = _mm_or_si128(v, _mm_set1_epi8(0x20));
		__m128i	st = _mm_or_si128(_mm_or_si128(
			    _mm_cmpeq_epi8(v20, _mm_set1_epi8('{')),
			    _mm_cmpeq_epi8(v20, _mm_set1_epi8('}'))),
			    _mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8(':')),
			    _mm_cmpeq_epi8(v, _mm_set1_epi8(','))));
		__m128i	ws = _mm_or_si128(_mm_or_si128(
			    _mm_cmpeq_epi8(v, _mm_set1_epi8(' ')),
			    _mm_cmpeq_epi8(v, _mm_set1_epi8('\t'))),
			    _mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8('\n')),
			    _mm_cmpeq_epi8(v, _mm_set1_epi8('\r'))));
		__m128i	ctl = _mm_cmpeq_epi8(_mm_min_epu8(v,
			    _mm_set1_epi8(0x1f)), v);

		r->q |= mask16(_mm_cmpeq_epi8(v, _mm_set1_epi8('"'))) << 16 * i;
		r->bs |= mask16(_mm_cmpeq_epi8(v, _mm_set1_epi8('\\'))) <<
		    16 * i;
		r->st |= mask16(st) << 16 * i;
		r->ws |= mask16(ws) << 16 * i;
		r->ctl |= mask16(ctl) << 16 * i;
		r->hi |= mask16(v) << 16 * i;
	}
}

__attribute__((target("avx2"))) static inline uint64_t
mask32(__m256i v)
{
	return (uint64_t)(uint32_t)_mm256_movemask_epi8(v);
}

__attribute__((target("avx2"))) static inline void
raw_avx2(const unsigned char *p, struct raw *r)
{
	int	i;

	r->q = r->bs = r->st = r->ws = r->ctl = r->hi = 0;
	for (i = 0; i < 2; i++) {
		__m256i	v = _mm256_loadu_si256((const __m256i *)(p + 32 * i));
		__m256i	v20 = _mm256_or_si256(v, _mm256_set1_epi8(0x20));
		__m256i	st = _mm256_or_si256(_mm256_or_si256(
			    _mm256_cmpeq_epi8(v20, _mm256_set1_epi8('{')),
			    _mm256_cmpeq_epi8(v20, _mm256_set1_epi8('}'))),
			    _mm256_or_si256(
			    _mm256_cmpeq_epi8(v, _mm256_set1_epi8(':')),
			    _mm256_cmpeq_epi8(v, _mm256_set1_epi8(','))));
		__m256i	ws = _mm256_or_si256(_mm256_or_si256(
			    _mm256_cmpeq_epi8(v, _mm256_set1_epi8(' ')),
			    _mm256_cmpeq_epi8(v, _mm256_set1_epi8('\t'))),
			    _mm256_or_si256(
			    _mm256_cmpeq_epi8(v, _mm256_set1_epi8('\n')),
			    _mm256_cmpeq_epi8(v, _mm256_set1_epi8('\r'))));
		__m256i	ctl = _mm256_cmpeq_epi8(_mm256_min_epu8(v,
			    _mm256_set1_epi8(0x1f)), v);

		r->q |= mask32(_mm256_cmpeq_epi8(v, _mm256_set1_epi8('"'))) <<
		    32 * i;
		r->bs |= mask32(_mm256_cmpeq_epi8(v,
		    _mm256_set1_epi8('\\'))) << 32 * i;
		r->st |= mask32(st) << 32 * i;
		r->ws |= mask32(ws) << 32 * i;
		r->ctl |= mask32(ctl) << 32 * i;
		r->hi |= mask32(v) << 32 * i;
	}
}
#endif

/* Bit i set: an odd number of bits at or below i are set in x. */
static inline uint64_t
prefix_xor(uint64_t x)
{
	x ^= x << 1;
	x ^= x << 2;
	x ^= x << 4;
	x ^= x << 8;
	x ^= x << 16;
	x ^= x << 32;
	return x;
}

/*
 * The bytes escaped by a backslash: the one after each backslash that
 * starts an escape, where runs of backslashes escape each other in
 * pairs.  Branch-free over the block (the carry says the block before
 * ended in an unpaired backslash); the technique is simdjson's.
 */
static inline uint64_t
escaped_of(uint64_t bs, uint64_t *carry)
{
	const uint64_t	even = 0x5555555555555555ull;
	uint64_t	follows, odd_starts, seq_even;

	bs &= ~*carry;
	follows = bs << 1 | *carry;
	odd_starts = bs & ~even & ~follows;
	*carry = __builtin_add_overflow(odd_starts, bs, &seq_even);
	return (even ^ (seq_even << 1)) & follows;
}

/* Shift a block's masks down by `sh` bits: the last block of a line is
 * loaded as the 64 bytes that end the line, so no byte past it is read. */
static inline void
raw_shift(struct raw *r, unsigned sh)
{
	r->q >>= sh;
	r->bs >>= sh;
	r->st >>= sh;
	r->ws >>= sh;
	r->ctl >>= sh;
	r->hi >>= sh;
}

/*
 * The tokens of one classified block; `valid` has a bit for each byte
 * that belongs to the line.  A token starts at every structural character
 * and every quote outside strings' contents, and at the first byte of
 * each run of anything else outside strings: a number, a literal, or
 * garbage that the number check will refuse.
 */
static inline uint64_t
block_tokens(struct stage1 *s, const struct raw *r, uint64_t valid)
{
	uint64_t	escaped = 0, q, inside, scalar, tok;

	if (r->bs | s->esc_carry) {
		escaped = escaped_of(r->bs, &s->esc_carry);
		s->bs |= r->bs;
	}
	q = r->q & ~escaped;
	/* from an opening quote (included) to its closing one (excluded) */
	inside = prefix_xor(q) ^ s->inside_carry;
	s->inside_carry = (uint64_t)((int64_t)inside >> 63);
	s->bad |= r->ctl & inside;
	s->hi |= r->hi;
	scalar = ~(inside | q | r->st | r->ws) & valid;
	tok = (r->st & ~inside) | q | (scalar & ~(scalar << 1 | s->scalar_carry));
	s->scalar_carry = scalar >> 63;
	return tok;
}

/*
 * Stage 1 over a whole line, one classifier per instruction set: masks,
 * then each token's class and position appended one by one.  The last
 * partial block is the 64 bytes ending the line, its masks shifted into
 * place; only a line shorter than a block is copied (into spaces).
 * Returns -1 when the line has more tokens than the fast path holds.
 */
#define STAGE1(name, attr, classify)					\
attr static int								\
name(const char *line, size_t len, struct stage1 *s)			\
{									\
	const unsigned char	*u = (const unsigned char *)line;	\
	size_t			 nb = (len + 63) / 64, b, n = 0;	\
	unsigned		 rem = (unsigned)(len % 64);		\
	struct raw		 r;					\
									\
	for (b = 0; b < nb; b++) {					\
		uint64_t	valid = ~0ull, t;			\
		uint16_t	base = (uint16_t)(b * 64);		\
									\
		if (b + 1 < nb || rem == 0)				\
			classify(u + b * 64, &r);			\
		else if (len >= 64) {					\
			classify(u + len - 64, &r);			\
			raw_shift(&r, 64 - rem);			\
			valid = (1ull << rem) - 1;			\
		} else {						\
			unsigned char	pad[64];			\
									\
			memset(pad, ' ', sizeof(pad));			\
			memcpy(pad, u, len);				\
			classify(pad, &r);				\
			valid = (1ull << rem) - 1;			\
		}							\
		t = block_tokens(s, &r, valid);				\
		if (n + (size_t)__builtin_popcountll(t) > MAX_TOKENS)	\
			return -1;					\
		for (; t != 0; t &= t - 1) {				\
			uint16_t	at = base +			\
					    (uint16_t)__builtin_ctzll(t); \
									\
			s->skel[n] = kclass[u[at]];			\
			s->pos[n++] = at;				\
		}							\
	}								\
	s->ntok = n;							\
	return 0;							\
}
STAGE1(stage1_scalar, , raw_scalar)
#ifdef JSCAN_X86
STAGE1(stage1_sse2, , raw_sse2)
STAGE1(stage1_avx2, __attribute__((target("avx2"))), raw_avx2)

/*
 * With AVX-512 (VBMI for the byte table, VBMI2 for compress) a block is
 * classified by one table lookup, and the skeleton and the positions are
 * compressed out of it whole: no loop over tokens at all.  The masked
 * load reads nothing past the line (masked-off bytes cannot fault).
 */
#define AVX512	__attribute__((target("avx512f,avx512bw,avx512vbmi," \
		    "avx512vbmi2,popcnt")))
AVX512 static int
stage1_avx512(const char *line, size_t len, struct stage1 *s)
{
	const __m512i	lo = _mm512_load_si512((const void *)kclass);
	const __m512i	hi = _mm512_load_si512((const void *)(kclass + 64));
	const __m512i	idx = _mm512_set_epi16(31, 30, 29, 28, 27, 26, 25,
			    24, 23, 22, 21, 20, 19, 18, 17, 16, 15, 14, 13, 12,
			    11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0);
	size_t		nb = (len + 63) / 64, b, n = 0;

	for (b = 0; b < nb; b++) {
		uint64_t	valid = b * 64 + 64 <= len ? ~0ull :
				    (1ull << (len % 64)) - 1, t;
		__m512i		v = _mm512_maskz_loadu_epi8(valid,
				    line + b * 64);
		__mmask64	h = _mm512_movepi8_mask(v);
		__m512i		c = _mm512_maskz_permutex2var_epi8(~h, lo, v,
				    hi);
		__m512i		base = _mm512_add_epi16(idx,
				    _mm512_set1_epi16((short)(b * 64)));
		struct raw	r;

		r.q = _mm512_test_epi8_mask(c, _mm512_set1_epi8(K_Q));
		r.bs = _mm512_test_epi8_mask(c, _mm512_set1_epi8(K_BS));
		r.st = _mm512_test_epi8_mask(c, _mm512_set1_epi8(K_ST));
		r.ws = _mm512_test_epi8_mask(c, _mm512_set1_epi8(K_WS));
		r.ctl = _mm512_test_epi8_mask(c, _mm512_set1_epi8(K_CTL));
		r.hi = h;
		t = block_tokens(s, &r, valid);
		if (n + (size_t)__builtin_popcountll(t) > MAX_TOKENS)
			return -1;
		_mm512_storeu_si512(s->skel + n,
		    _mm512_maskz_compress_epi8(t, c));
		_mm512_storeu_si512(s->pos + n,
		    _mm512_maskz_compress_epi16((__mmask32)t, base));
		_mm512_storeu_si512(s->pos + n +
		    __builtin_popcount((uint32_t)t),
		    _mm512_maskz_compress_epi16((__mmask32)(t >> 32),
		    _mm512_add_epi16(base, _mm512_set1_epi16(32))));
		n += (size_t)__builtin_popcountll(t);
	}
	s->ntok = n;
	return 0;
}
#endif

/* Past the run of ASCII digits at p: eight bytes at a time.  A byte of
 * `nd` is non-zero exactly when its byte of w is not '0'..'9' (high nibble
 * not 3, or low nibble over 9; nothing carries between bytes). */
static inline const char *
digits_end(const char *p, const char *end)
{
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	while (end - p >= 8) {
		uint64_t	w, nd;

		memcpy(&w, p, 8);
		nd = ((w & 0xf0f0f0f0f0f0f0f0ull) ^ 0x3030303030303030ull) |
		    (((w & 0x0f0f0f0f0f0f0f0full) + 0x0606060606060606ull) &
		    0xf0f0f0f0f0f0f0f0ull);
		if (nd != 0)
			return p + (__builtin_ctzll(nd) >> 3);
		p += 8;
	}
#endif
	while (p < end && (unsigned)(*p - '0') < 10)
		p++;
	return p;
}

/* End of the number at p (a digit or '-'), or NULL if there is none, by
 * the grammar: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?  *big is set
 * when it may lie beyond a double's range (an exponent, or 200 digits
 * before the point): jscan_number_fits says. */
static inline const char *
number_end_slow(const char *p, const char *end, int *big)
{
	const char	*q;

	*big = 0;
	if (*p == '-' && ++p >= end)
		return NULL;
	if (*p == '0')
		p++;
	else if ((unsigned)(*p - '1') < 9) {
		q = p;
		p = digits_end(p + 1, end);
		*big = p - q >= 200;
	} else
		return NULL;
	if (p < end && *p == '.') {
		if ((q = digits_end(p + 1, end)) == p + 1)
			return NULL;
		p = q;
	}
	if (p < end && (*p == 'e' || *p == 'E')) {
		*big = 1;
		if (++p < end && (*p == '+' || *p == '-'))
			p++;
		if ((q = digits_end(p, end)) == p)
			return NULL;
		p = q;
	}
	return p;
}

/*
 * Is p[0..n) exactly a number (n >= 1, p[0] a digit or '-')?  Stage 1
 * gives the extent (up to the next token, whitespace aside), so for the
 * common forms — no exponent, under 16 bytes — this is one 16-byte
 * classification: digits everywhere but a leading '-' and at most one
 * '.' with digits on both sides, and a leading 0 only before the '.' or
 * alone.  Other forms are parsed byte by byte.
 */
static inline int
number_ok(const char *p, size_t n, const char *end)
{
#ifdef JSCAN_X86
	if (n <= 16 && end - p >= 16) {
		__m128i		v = _mm_loadu_si128((const __m128i *)p);
		__m128i		d = _mm_sub_epi8(v, _mm_set1_epi8('0'));
		uint32_t	dig = (uint32_t)_mm_movemask_epi8(_mm_cmpeq_epi8(
				    _mm_min_epu8(d, _mm_set1_epi8(9)), d));
		unsigned	neg = *p == '-';
		uint32_t	nd = ~dig & ((1u << n) - 1) & ~(uint32_t)neg;

		if (n == neg || !(dig >> neg & 1))
			return 0;		/* no digit after the sign */
		if (nd != 0) {
			unsigned	at = (unsigned)__builtin_ctz(nd);

			if ((nd & (nd - 1)) != 0 || p[at] != '.')
				goto slow;	/* exponents, or not a number */
			if (at + 1 >= n)
				return 0;	/* "1." */
		}
		/* a leading zero stands alone or before the '.' */
		return p[neg] != '0' || n == neg + 1u || p[neg + 1] == '.';
	}
slow:
#endif
	{
		int	big;

		return number_end_slow(p, end, &big) == p + n &&
		    (!big || jscan_number_fits(p, n));
	}
}

/* Is p[0..n) exactly a number or a literal? */
static inline int
scalar_ok(const char *p, size_t n, const char *end)
{
	if ((unsigned)(*p - '0') < 10 || *p == '-')
		return number_ok(p, n, end);
	switch (n) {
	case 4:
		return memcmp(p, "true", 4) == 0 || memcmp(p, "null", 4) == 0;
	case 5:
		return memcmp(p, "false", 5) == 0;
	default:
		return 0;
	}
}

/* Where the number or literal at token t ends: where the next token
 * starts (a value always has one after it), whitespace aside. */
static inline size_t
scalar_stop(const char *line, const uint16_t *pos, size_t t)
{
	size_t	e = pos[t + 1];

	while (e > pos[t] && (line[e - 1] == ' ' || line[e - 1] == '\t' ||
	    line[e - 1] == '\n' || line[e - 1] == '\r'))
		e--;
	return e;
}

/* Every escape sequence well formed (the reference's rules), scanning
 * from backslash to backslash; only called for lines that hold one. */
static int
escapes_valid(const char *p, const char *end)
{
	uint32_t	u, lo;

	while ((p = memchr(p, '\\', (size_t)(end - p))) != NULL) {
		if (end - p < 2)
			return -1;
		switch (p[1]) {
		case '"': case '\\': case '/': case 'b': case 'f':
		case 'n': case 'r': case 't':
			p += 2;
			break;
		case 'u':
			if (end - p < 6 || hex4(p + 2, &u))
				return -1;
			p += 6;
			if (u >= 0xd800 && u <= 0xdbff) {
				if (end - p < 6 || p[0] != '\\' || p[1] != 'u' ||
				    hex4(p + 2, &lo) || lo < 0xdc00 ||
				    lo > 0xdfff)
					return -1;
				p += 6;
			} else if (u >= 0xdc00 && u <= 0xdfff)
				return -1;
			break;
		default:
			return -1;
		}
	}
	return 0;
}

/* Every byte >= 0x80 starts a valid UTF-8 sequence (the reference's
 * rules); only called for lines that hold one. */
static int
utf8_valid(const char *line, const char *end)
{
	const unsigned char	*p = (const unsigned char *)line;
	const unsigned char	*e = (const unsigned char *)end;

	while (p < e) {
		int	n;

		if (*p < 0x80) {
			p++;
			continue;
		}
		if ((n = utf8_len(p, e)) == 0)
			return -1;
		p += n;
	}
	return 0;
}

/*
 * A plan: what is left to check and read in a line once its skeleton is
 * known to be grammatical — where the numbers and literals are, and the
 * top-level members (token indices of the name's opening quote, of the
 * value's first token and of its last: the closing quote or bracket, or
 * the value itself for a number or literal).
 */
struct plan {
	uint16_t	  nscalar, nmember;
	const uint16_t	 *scalar;
	const uint16_t	(*member)[3];
	const uint16_t	 *match;	/* an opening bracket's closing one */
};

/* Where plan_build writes; a remembered plan is copied out at its size. */
struct plan_space {
	uint16_t	scalar[MAX_TOKENS];
	uint16_t	member[MAX_MEMBERS][3];
	uint16_t	match[MAX_TOKENS];
};

/*
 * The grammar over a skeleton, filling a plan; -1 if it is not one JSON
 * object.  Depends on nothing but the skeleton, so a plan holds for every
 * line with the same one.  Each place in the grammar is a label; the
 * stack of open containers says where a closing bracket returns to.
 */
static int
plan_build(const uint8_t *skel, size_t ntok, struct plan_space *ws,
    struct plan *pl)
{
	uint8_t		stack[JSCAN_MAX_DEPTH];		/* 1: object */
	uint16_t	opened[JSCAN_MAX_DEPTH];	/* its opening token */
	size_t		i = 0, name = 0, open_member = 0;
	int		depth;
	unsigned	c;

#define TOK(k)	((k) < ntok ? skel[k] : S_END)
/* The value at token i in a container at `depth`; then on to `cont`. */
#define VALUE(cont)							\
	do {								\
		switch (c = TOK(i)) {					\
		case S_QUOTE:						\
			if (TOK(i + 1) != S_QUOTE)			\
				return -1;				\
			if (depth == 1) {				\
				ws->member[pl->nmember][0] = (uint16_t)name; \
				ws->member[pl->nmember][1] = (uint16_t)i; \
				ws->member[pl->nmember++][2] =		\
				    (uint16_t)(i + 1);			\
			}						\
			i += 2;						\
			goto cont;					\
		case S_OBJ:						\
		case S_ARR:						\
			if (depth >= JSCAN_MAX_DEPTH - 1)		\
				return -1;				\
			if (depth == 1) {				\
				ws->member[pl->nmember][0] = (uint16_t)name; \
				ws->member[pl->nmember][1] = (uint16_t)i; \
				open_member = pl->nmember++;		\
			}						\
			opened[depth] = (uint16_t)i;			\
			stack[depth++] = c == S_OBJ;			\
			i++;						\
			if (c == S_OBJ)					\
				goto object_begin;			\
			goto array_begin;				\
		case S_OBJ_END: case S_ARR_END: case S_COLON:		\
		case S_COMMA: case S_END:				\
			return -1;					\
		default:						\
			ws->scalar[pl->nscalar++] = (uint16_t)i;	\
			if (depth == 1) {				\
				ws->member[pl->nmember][0] = (uint16_t)name; \
				ws->member[pl->nmember][1] = (uint16_t)i; \
				ws->member[pl->nmember++][2] = (uint16_t)i; \
			}						\
			i++;						\
			goto cont;					\
		}							\
	} while (0)

	pl->nscalar = pl->nmember = 0;
	pl->scalar = ws->scalar;
	pl->member = (const uint16_t (*)[3])ws->member;
	pl->match = ws->match;
	if (TOK(0) != S_OBJ)
		return -1;
	stack[0] = 1;
	opened[0] = 0;
	depth = 1;
	i = 1;
object_begin:			/* after '{' */
	if (TOK(i) == S_OBJ_END)
		goto scope_end;
object_key:			/* at a member name */
	if (TOK(i) != S_QUOTE || TOK(i + 1) != S_QUOTE ||
	    TOK(i + 2) != S_COLON)
		return -1;
	name = i;
	i += 3;
	VALUE(object_continue);
object_continue:		/* after a member's value */
	if (TOK(i) == S_COMMA) {
		i++;
		goto object_key;
	}
	if (TOK(i) == S_OBJ_END)
		goto scope_end;
	return -1;
array_begin:			/* after '[' */
	if (TOK(i) == S_ARR_END)
		goto scope_end;
array_value:
	VALUE(array_continue);
array_continue:			/* after an element */
	if (TOK(i) == S_COMMA) {
		i++;
		goto array_value;
	}
	if (TOK(i) == S_ARR_END)
		goto scope_end;
	return -1;
scope_end:			/* at the '}' or ']' closing the container */
	ws->match[opened[depth - 1]] = (uint16_t)i;
	if (--depth == 1)
		ws->member[open_member][2] = (uint16_t)i;
	i++;
	if (depth > 0) {
		if (stack[depth - 1])
			goto object_continue;
		goto array_continue;
	}
#undef VALUE
#undef TOK
	return i == ntok ? 0 : -1;	/* nothing after the object */
}

/* The span of a string whose quotes are at open and close. */
static inline struct jspan
string_span(const char *line, size_t open, size_t close, int any_bs)
{
	struct jspan	v;

	v.p = line + open + 1;
	v.n = (uint32_t)(close - open - 1);
	v.kind = J_STRING;
	v.escaped = any_bs && memchr(v.p, '\\', v.n) != NULL;
	return v;
}

/* Check what the plan says is left, and fill r->f[]: 0 if the line is
 * valid. */
static int
plan_apply(const struct plan *pl, const struct stage1 *s, const char *line,
    size_t len, struct jscan_result *r)
{
	const char	*end = line + len, *p;
	const uint16_t	*pos = s->pos;
	int		 any_bs = s->bs != 0, f;
	size_t		 i;

	if (s->bad || s->inside_carry)
		return -1;
	for (i = 0; i < pl->nscalar; i++) {
		size_t	t = pl->scalar[i];

		if (!scalar_ok(line + pos[t], scalar_stop(line, pos, t) -
		    pos[t], end))
			return -1;
	}
	if (any_bs && escapes_valid(line, end))
		return -1;
	if (s->hi && utf8_valid(line, end))
		return -1;
	/* only the kinds: clearing all 288 bytes cost 7% of the scan */
	for (i = 0; i < F_NFIELDS; i++) {
		r->f[i].kind = J_NONE;
		r->f[i].escaped = 0;
	}
	r->error = NULL;
	r->error_at = 0;
	r->index = NULL;
	for (i = 0; i < pl->nmember; i++) {
		const uint16_t	*m = pl->member[i];
		struct jspan	 k = string_span(line, pos[m[0]],
				    pos[m[0] + 1], any_bs), *v;

		if (k.escaped || (f = field_of(k.p, k.n)) < 0)
			continue;
		v = &r->f[f];		/* the last duplicate wins */
		p = line + pos[m[1]];
		switch (*p) {
		case '"':
			*v = string_span(line, pos[m[1]], pos[m[2]], any_bs);
			break;
		case '{':
		case '[':
			v->p = p;
			v->n = (uint32_t)(pos[m[2]] + 1 - pos[m[1]]);
			v->kind = *p == '{' ? J_OBJECT : J_ARRAY;
			v->escaped = 0;
			break;
		default:
			v->p = p;
			v->n = (uint32_t)(scalar_stop(line, pos, m[1]) -
			    pos[m[1]]);
			v->kind = *p == 't' ? J_TRUE : *p == 'f' ? J_FALSE :
			    *p == 'n' ? J_NULL : J_NUMBER;
			v->escaped = 0;
			break;
		}
	}
	return 0;
}

/*
 * Remembered skeletons and their plans: a set-associative cache indexed
 * by a hash of the skeleton, each entry one allocation at its size, and
 * the last hit tried first (consecutive lines are mostly heartbeats).
 * A writer's lines come in a few hundred shapes at most.
 */
#define SHAPE_SETS	128
#define SHAPE_WAYS	4

struct shape {
	uint16_t	ntok;
	struct plan	plan;
	uint8_t		skel[];		/* then the plan's arrays */
};

/* What the *_in lookups walk: the last line scanned with a shapes. */
struct jscan_index {
	const char		*line;
	const struct stage1	*s;
	const struct plan	*pl;
};

struct jscan_shapes {
	struct shape		*set[SHAPE_SETS][SHAPE_WAYS];
	uint8_t			 victim[SHAPE_SETS];
	const struct shape	*mru;
	struct plan_space	 ws;	/* a plan not remembered lives here */
	struct plan		 own;
	struct stage1		 last;
	struct jscan_index	 index;
};

struct jscan_shapes *
jscan_shapes_create(void)
{
	return calloc(1, sizeof(struct jscan_shapes));
}

void
jscan_shapes_destroy(struct jscan_shapes *sh)
{
	size_t	i, k;

	if (sh == NULL)
		return;
	for (i = 0; i < SHAPE_SETS; i++)
		for (k = 0; k < SHAPE_WAYS; k++)
			free(sh->set[i][k]);
	free(sh);
}

static inline int
shape_is(const struct shape *e, const struct stage1 *s)
{
	return e != NULL && e->ntok == s->ntok &&
	    memcmp(e->skel, s->skel, s->ntok) == 0;
}

static uint64_t
skel_hash(const uint8_t *p, size_t n)
{
	uint64_t	h = n * 0x9e3779b97f4a7c15ull, w;

	for (; n >= 8; n -= 8, p += 8) {
		memcpy(&w, p, 8);
		h = (h ^ w) * 0xff51afd7ed558ccdull;
		h ^= h >> 32;
	}
	for (; n > 0; n--)
		h = (h ^ *p++) * 0x100000001b3ull;
	return h ^ h >> 29;
}

/* A copy of a plan in one allocation with its skeleton; NULL: no memory. */
static struct shape *
shape_new(const struct stage1 *s, const struct plan *pl)
{
	size_t		 n = s->ntok, sk = (n + 1) & ~(size_t)1;
	size_t		 size = sizeof(struct shape) + sk +
			    ((size_t)pl->nscalar + 3 * (size_t)pl->nmember +
			    n) * sizeof(uint16_t);
	struct shape	*e = malloc(size);
	uint16_t	*u;

	if (e == NULL)
		return NULL;
	e->ntok = (uint16_t)n;
	memcpy(e->skel, s->skel, n);
	u = (uint16_t *)(void *)(e->skel + sk);
	memcpy(u, pl->scalar, pl->nscalar * sizeof(*u));
	e->plan.scalar = u;
	u += pl->nscalar;
	memcpy(u, pl->member, pl->nmember * 3 * sizeof(*u));
	e->plan.member = (const uint16_t (*)[3])u;
	u += 3 * (size_t)pl->nmember;
	memcpy(u, pl->match, n * sizeof(*u));
	e->plan.match = u;
	e->plan.nscalar = pl->nscalar;
	e->plan.nmember = pl->nmember;
	return e;
}

/* The plan for this skeleton: a remembered one, or a new one (which is
 * remembered in place of one of its set); NULL if it is not grammatical. */
static const struct plan *
plan_for(struct jscan_shapes *sh, const struct stage1 *s,
    struct plan_space *ws, struct plan *own)
{
	struct shape	**set, *e;
	unsigned	  k;

	if (sh == NULL)
		return plan_build(s->skel, s->ntok, ws, own) == 0 ? own : NULL;
	if (shape_is(sh->mru, s))
		return &sh->mru->plan;
	k = (unsigned)(skel_hash(s->skel, s->ntok) % SHAPE_SETS);
	set = sh->set[k];
	for (unsigned w = 0; w < SHAPE_WAYS; w++)
		if (shape_is(set[w], s)) {
			sh->mru = set[w];
			return &set[w]->plan;
		}
	if (plan_build(s->skel, s->ntok, &sh->ws, &sh->own) != 0)
		return NULL;
	if ((e = shape_new(s, &sh->own)) == NULL)
		return &sh->own;	/* used once, not remembered */
	if (sh->mru == set[sh->victim[k]])
		sh->mru = NULL;
	free(set[sh->victim[k]]);
	set[sh->victim[k]] = e;
	sh->victim[k] = (uint8_t)((sh->victim[k] + 1) % SHAPE_WAYS);
	sh->mru = e;
	return &e->plan;
}

int
jscan_isa_supported(enum jscan_isa isa)
{
	switch (isa) {
	case JSCAN_ISA_AUTO:
	case JSCAN_ISA_SCALAR:
		return 1;
#ifdef JSCAN_X86
	case JSCAN_ISA_SSE2:
		return 1;
	case JSCAN_ISA_AVX2:
		return __builtin_cpu_supports("avx2");
	case JSCAN_ISA_AVX512:
		return __builtin_cpu_supports("avx512f") &&
		    __builtin_cpu_supports("avx512bw") &&
		    __builtin_cpu_supports("avx512vbmi") &&
		    __builtin_cpu_supports("avx512vbmi2");
#endif
	default:
		return 0;
	}
}

static int
stage1_run(const char *line, size_t len, struct stage1 *s,
    enum jscan_isa isa)
{
	s->esc_carry = s->inside_carry = s->scalar_carry = 0;
	s->bad = s->hi = s->bs = 0;
#ifdef JSCAN_X86
	if (isa == JSCAN_ISA_AUTO)
		isa = jscan_isa_supported(JSCAN_ISA_AVX512) ? JSCAN_ISA_AVX512 :
		    jscan_isa_supported(JSCAN_ISA_AVX2) ? JSCAN_ISA_AVX2 :
		    JSCAN_ISA_SSE2;
	switch (isa) {
	case JSCAN_ISA_AVX512:
		return stage1_avx512(line, len, s);
	case JSCAN_ISA_AVX2:
		return stage1_avx2(line, len, s);
	case JSCAN_ISA_SSE2:
		return stage1_sse2(line, len, s);
	default:
		break;
	}
#else
	(void)isa;
#endif
	return stage1_scalar(line, len, s);
}

/* 0 and r filled, or -1 when the line is not for the fast path or is
 * refused (the reference scanner then says why). */
static int
jscan_fast_object(struct jscan_shapes *sh, const char *line, size_t len,
    struct jscan_result *r, enum jscan_isa isa)
{
	struct stage1		 own_s, *s = sh != NULL ? &sh->last : &own_s;
	struct plan_space	 ws;
	struct plan		 own;
	const struct plan	*pl;

	if (len == 0 || len > FAST_MAX_LEN || !jscan_isa_supported(isa) ||
	    stage1_run(line, len, s, isa) != 0 ||
	    (pl = plan_for(sh, s, &ws, &own)) == NULL ||
	    plan_apply(pl, s, line, len, r) != 0)
		return -1;
	if (sh != NULL) {
		sh->index.line = line;
		sh->index.s = s;
		sh->index.pl = pl;
		r->index = &sh->index;
	}
	return 0;
}

/* --- the entry points --------------------------------------------------- */

/*
 * The fast path first; a line it refuses (rare: the line is broken) or
 * does not take is scanned again by the reference scanner (jscan.c), which
 * gives the verdict and the reason.
 */
int
jscan_object_fast(const char *line, size_t len, struct jscan_result *r,
    enum jscan_isa isa)
{
	int	rc = jscan_fast_object(NULL, line, len, r, isa);

	if (rc != 0) {
		memset(r->f, 0, sizeof(r->f));
		r->error = NULL;
		r->error_at = 0;
		r->index = NULL;
	}
	return rc;
}

int
jscan_object_isa(const char *line, size_t len, struct jscan_result *r,
    enum jscan_isa isa)
{
	if (jscan_fast_object(NULL, line, len, r, isa) == 0)
		return 0;
	return jscan_object_ref(line, len, r);
}

int
jscan_object_shaped(struct jscan_shapes *sh, const char *line, size_t len,
    struct jscan_result *r)
{
	if (jscan_fast_object(sh, line, len, r, JSCAN_ISA_AUTO) == 0)
		return 0;
	return jscan_object_ref(line, len, r);
}

int
jscan_object(const char *line, size_t len, struct jscan_result *r)
{
	return jscan_object_shaped(NULL, line, len, r);
}

/* --- lookups through the token index ------------------------------------ */

/* The token at which span v starts, or -1 (then the byte walk answers). */
static ptrdiff_t
index_token(const struct jscan_index *x, struct jspan v, unsigned want)
{
	size_t		lo = 0, hi = x->s->ntok, off;

	if (v.p < x->line)
		return -1;
	off = (size_t)(v.p - x->line);
	while (lo < hi) {
		size_t	mid = lo + (hi - lo) / 2;

		if (x->s->pos[mid] < off)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo >= x->s->ntok || x->s->pos[lo] != off || x->s->skel[lo] != want)
		return -1;
	return (ptrdiff_t)lo;
}

/* The last token of the value whose first token is v. */
static inline size_t
value_last(const struct jscan_index *x, size_t v)
{
	uint8_t	c = x->s->skel[v];

	if (c == S_OBJ || c == S_ARR)
		return x->pl->match[v];
	return c == S_QUOTE ? v + 1 : v;
}

/* The span of the value at tokens [v, e]. */
static struct jspan
index_span(const struct jscan_index *x, size_t v, size_t e)
{
	const uint16_t	*pos = x->s->pos;
	const char	*p = x->line + pos[v];
	struct jspan	 s = { 0 };
	size_t		 end;

	switch (x->s->skel[v]) {
	case S_QUOTE:
		s.p = p + 1;
		s.n = (uint32_t)(pos[e] - pos[v] - 1);
		s.kind = J_STRING;
		s.escaped = x->s->bs && memchr(s.p, '\\', s.n) != NULL;
		return s;
	case S_OBJ:
	case S_ARR:
		s.p = p;
		s.n = (uint32_t)(pos[e] + 1 - pos[v]);
		s.kind = x->s->skel[v] == S_OBJ ? J_OBJECT : J_ARRAY;
		return s;
	default:
		/* a number or literal ends where the next token starts,
		 * whitespace aside (a value always has a token after it) */
		end = pos[v + 1];
		while (end > pos[v] && (x->line[end - 1] == ' ' ||
		    x->line[end - 1] == '\t' || x->line[end - 1] == '\n' ||
		    x->line[end - 1] == '\r'))
			end--;
		s.p = p;
		s.n = (uint32_t)(end - pos[v]);
		s.kind = *p == 't' ? J_TRUE : *p == 'f' ? J_FALSE :
		    *p == 'n' ? J_NULL : J_NUMBER;
		return s;
	}
}

void
jscan_getn_in(const struct jscan_result *r, struct jspan obj,
    const char *const *names, struct jspan *out, size_t n)
{
	const struct jscan_index	*x = r->index;
	const uint8_t			*skel;
	const uint16_t			*pos;
	size_t				 i, k, lens[8], e;
	ptrdiff_t			 at;

	if (x == NULL || obj.kind != J_OBJECT ||
	    (at = index_token(x, obj, S_OBJ)) < 0) {
		jscan_getn(obj, names, out, n);
		return;
	}
	for (k = 0; k < n; k++) {
		out[k].kind = J_NONE;
		lens[k] = strlen(names[k]);
	}
	skel = x->s->skel;
	pos = x->s->pos;
	/* members: name's quotes at i and i + 1, ':' at i + 2, value */
	for (i = (size_t)at + 1; skel[i] == S_QUOTE; i = e + 2) {
		const char	*name = x->line + pos[i] + 1;
		size_t		 len = pos[i + 1] - pos[i] - 1;
		int		 match = -1;

		for (k = 0; k < n; k++)
			if (len == lens[k] && memcmp(name, names[k], len) == 0)
				match = (int)k;
		e = value_last(x, i + 3);
		if (match >= 0 && !(x->s->bs && memchr(name, '\\', len)))
			out[match] = index_span(x, i + 3, e);
		if (skel[e + 1] != S_COMMA)
			break;
	}
}

struct jspan
jscan_get_in(const struct jscan_result *r, struct jspan obj, const char *name)
{
	struct jspan	v;

	jscan_getn_in(r, obj, &name, &v, 1);
	return v;
}

struct jspan
jscan_at_in(const struct jscan_result *r, struct jspan arr, size_t i)
{
	const struct jscan_index	*x = r->index;
	struct jspan			 none = { 0 };
	size_t				 t, e;
	ptrdiff_t			 at;

	if (x == NULL || arr.kind != J_ARRAY ||
	    (at = index_token(x, arr, S_ARR)) < 0)
		return jscan_at(arr, i);
	t = (size_t)at + 1;
	if (x->s->skel[t] == S_ARR_END)
		return none;
	for (;;) {
		e = value_last(x, t);
		if (i-- == 0)
			return index_span(x, t, e);
		if (x->s->skel[e + 1] != S_COMMA)
			return none;
		t = e + 2;
	}
}
