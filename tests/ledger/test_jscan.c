/*
 * jscan: the validating scanner every ledger line goes through.  Cases as
 * data: a line and what must come of it.  Then the fast path against the
 * reference scanner, with every block classifier this CPU has, over the
 * fixtures' lines and thousands of mutations of them: the same verdict,
 * the same members, and no good line sent the slow way.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <cjson/cJSON.h>

#include "ledger/jscan.h"

static const struct {
	const char	*line;
	const char	*error;		/* NULL: valid */
} cases[] = {
	{ "{}", NULL },
	{ " {\"type\":\"hitch\"} \r", NULL },
	{ "{\"a\":[1,-2.5e+3,0.5,true,false,null,{\"b\":\"\\u00e9\\n\"}]}", NULL },
	{ "{\"s\":\"\\ud83d\\ude00\"}", NULL },
	{ "{\"s\":\"caf\xc3\xa9\"}", NULL },
	{ "[1]", "not a JSON object" },
	{ "\"x\"", "not a JSON object" },
	{ "", "not a JSON object" },
	{ "{\"a\":1,}", "expected member name" },
	{ "{\"a\" 1}", "expected ':'" },
	{ "{\"a\":1 \"b\":2}", "expected ',' or '}'" },
	{ "{\"a\":01}", "expected ',' or '}'" },
	{ "{\"a\":1.}", "bad number" },
	{ "{\"a\":-}", "bad number" },
	{ "{\"a\":tru}", "unexpected character" },
	{ "{\"a\":\"x}", "unterminated string" },
	{ "{\"a\":\"\\x\"}", "bad escape" },
	{ "{\"a\":\"\\u12\"}", "bad \\u escape" },
	{ "{\"a\":\"\\ud800\"}", "unpaired surrogate escape" },
	{ "{\"a\":\"\\udc00\"}", "unpaired surrogate escape" },
	{ "{\"a\":\"\xff\"}", "invalid UTF-8" },
	{ "{\"a\":\"\xc0\xaf\"}", "invalid UTF-8" },	/* overlong '/' */
	{ "{\"a\":\"\xed\xa0\x80\"}", "invalid UTF-8" },	/* surrogate */
	{ "{\"a\":\"\xf4\x90\x80\x80\"}", "invalid UTF-8" }, /* > U+10FFFF */
	{ "{\"a\":\"\xe2\x82\"}", "invalid UTF-8" },	/* cut sequence */
	{ "{\"a\":\"\t\"}", "control character in string" },
	{ "{\"a\":1} x", "trailing bytes after the object" },
	{ "{\"a\":1}{}", "trailing bytes after the object" },
	{ "{\"a\":[1,2}", "expected ',' or ']'" },
	/* numbers beyond a double's range (docs/json.md) */
	{ "{\"frameMs\":1e999999}", "number out of range" },
	{ "{\"a\":[-1e400]}", "number out of range" },
	{ "{\"a\":0.1e310}", "number out of range" },
	{ "{\"a\":1E+309}", "number out of range" },
	{ "{\"a\":1e99999999999999999999999}", "number out of range" },
	{ "{\"a\":1.7976931348623159e308}", "number out of range" },
	{ "{\"a\":1.7976931348623157e308}", NULL },
	{ "{\"a\":1.7976931348623158e308}", NULL },	/* rounds to DBL_MAX */
	{ "{\"a\":1e308,\"b\":0.00001e312,\"c\":-1e-999999}", NULL },
	{ "{\"a\":0e999999,\"b\":0.0e999999}", NULL },
	{ "{\"a\":1e-99999999999999999999999}", NULL },
	/* 2^1024 - 2^970, halfway from DBL_MAX to 2^1024: rounds up */
	{ "{\"a\":179769313486231580793728971405303415079934132710037826936173778980444968292764750946649017977587207096330286416692887910946555547851940402630657488671505820681908902000708383676273854845817711531764475730270069855571366959622842914819860834936475292719074168444365510704342711559699508093042880177904174497792}", "number out of range" },
	{ "{\"a\":179769313486231580793728971405303415079934132710037826936173778980444968292764750946649017977587207096330286416692887910946555547851940402630657488671505820681908902000708383676273854845817711531764475730270069855571366959622842914819860834936475292719074168444365510704342711559699508093042880177904174497791}", NULL },
	{ "{\"a\":179769313486231580793728971405303415079934132710037826936173778980444968292764750946649017977587207096330286416692887910946555547851940402630657488671505820681908902000708383676273854845817711531764475730270069855571366959622842914819860834936475292719074168444365510704342711559699508093042880177904174497791.999999999999999999999999999999999999}", NULL },
	/* past the 332 digits kept: the sticky digit still rounds up */
	{ "{\"a\":179769313486231580793728971405303415079934132710037826936173778980444968292764750946649017977587207096330286416692887910946555547851940402630657488671505820681908902000708383676273854845817711531764475730270069855571366959622842914819860834936475292719074168444365510704342711559699508093042880177904174497792.0000000000000000000000000000000000000001}",
	    "number out of range" },
};

static void	agree(const char *, size_t, const char *);

static void
jscan_table(void **state)
{
	size_t			i;
	struct jscan_result	r;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int	rc = jscan_object(cases[i].line, strlen(cases[i].line), &r);

		if (cases[i].error == NULL) {
			if (rc != 0)
				fail_msg("case %zu '%s': refused: %s", i,
				    cases[i].line, r.error);
		} else {
			if (rc == 0)
				fail_msg("case %zu '%s': accepted", i,
				    cases[i].line);
			assert_string_equal(r.error, cases[i].error);
		}
		/* the fast path and the shaped one say the same */
		agree(cases[i].line, strlen(cases[i].line), cases[i].line);
	}
}

static void
jscan_nul_byte(void **state)
{
	const char		line[] = "{\"type\":\"hi\0tch\"}";
	const char		tail[] = "{\"type\":\"x\"}\0";
	struct jscan_result	r;

	(void)state;
	assert_int_equal(jscan_object(line, sizeof(line) - 1, &r), -1);
	assert_string_equal(r.error, "NUL byte");
	assert_int_equal(r.error_at, 11);
	assert_int_equal(jscan_object(tail, sizeof(tail) - 1, &r), -1);
	assert_string_equal(r.error, "NUL byte");
}

static void
jscan_deep_nesting_refused(void **state)
{
	size_t			n = 100000, i;
	char			*line = malloc(2 * n + 16);
	struct jscan_result	r;

	(void)state;
	strcpy(line, "{\"a\":");
	for (i = 0; i < n; i++)
		line[5 + i] = '[';
	for (i = 0; i < n; i++)
		line[5 + n + i] = ']';
	strcpy(line + 5 + 2 * n, "}");
	assert_int_equal(jscan_object(line, strlen(line), &r), -1);
	assert_string_equal(r.error, "nested too deep");
	free(line);
}

static void
jscan_captures_top_level_fields(void **state)
{
	const char	*line = "{\"type\":\"hitch\",\"world\":{\"type\":\"no\"},"
	    "\"frameMs\":141.2,\"phase\":\"p\\u0031\",\"minted\":[\"a\",\"b\"],"
	    "\"classification\":[{\"guess\":\"g\",\"x\":[1,{\"y\":2}]}],"
	    "\"type\":\"hitch\"}";
	struct jscan_result	r;
	char			buf[64];
	double			v;

	(void)state;
	assert_int_equal(jscan_object(line, strlen(line), &r), 0);
	assert_true(jscan_eq(r.f[F_TYPE], "hitch"));
	assert_int_equal(jscan_num(r.f[F_FRAMEMS], &v), 0);
	assert_true(v == 141.2);
	assert_int_equal(jscan_str(r.f[F_PHASE], buf, sizeof(buf)), 2);
	assert_string_equal(buf, "p1");
	assert_int_equal(r.f[F_MINTED].kind, J_ARRAY);
	assert_true(jscan_eq(jscan_at(r.f[F_MINTED], 1), "b"));
	assert_int_equal(jscan_at(r.f[F_MINTED], 2).kind, J_NONE);
	assert_true(jscan_eq(jscan_get(jscan_at(r.f[F_CLASSIFICATION], 0),
	    "guess"), "g"));
	assert_int_equal(r.f[F_AT].kind, J_NONE);
}

static void
jscan_numbers_in_strings(void **state)
{
	const char		*line = "{\"a\":\"141.2\",\"b\":\"12x\",\"c\":\"\","
	    "\"d\":\" 3\",\"e\":\"nan\"}";
	struct jscan_result	r;
	struct jspan		o;
	double			v;

	(void)state;
	assert_int_equal(jscan_object(line, strlen(line), &r), 0);
	o.p = line;
	o.n = (uint32_t)strlen(line);
	o.kind = J_OBJECT;
	assert_int_equal(jscan_num(jscan_get(o, "a"), &v), 0);
	assert_true(v == 141.2);
	assert_int_equal(jscan_num(jscan_get(o, "b"), &v), -1);
	assert_int_equal(jscan_num(jscan_get(o, "c"), &v), -1);
	assert_int_equal(jscan_num(jscan_get(o, "e"), &v), -1);
	assert_int_equal(jscan_num(jscan_get(o, "missing"), &v), -1);
}

static void
jscan_str_truncates_on_utf8_boundary(void **state)
{
	const char		*line = "{\"a\":\"\xc3\xa9\xc3\xa9\xc3\xa9\"}";
	struct jscan_result	r;
	struct jspan		o = { line, 0, J_OBJECT, 0 };
	char			buf[4];

	(void)state;
	o.n = (uint32_t)strlen(line);
	assert_int_equal(jscan_object(line, strlen(line), &r), 0);
	/* 3 bytes of room: one é (2 bytes) fits, the next would be cut */
	assert_int_equal(jscan_str(jscan_get(o, "a"), buf, sizeof(buf)), 2);
	assert_string_equal(buf, "\xc3\xa9");
}


/* --- the fast path against the reference -------------------------------- */

static const enum jscan_isa isas[] = {
	JSCAN_ISA_SCALAR, JSCAN_ISA_SSE2, JSCAN_ISA_AVX2, JSCAN_ISA_AVX512
};
static const char *const isa_names[] = {
	"?", "scalar", "sse2", "avx2", "avx512", "shaped"
};

static uint64_t
rnd(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* Tokens as jscan.h counts them, for a valid line: each structural
 * character and quote outside strings' contents, each run of other
 * non-space bytes there. */
static size_t
tokens_of(const char *p, size_t len)
{
	size_t	i, n = 0;
	int	in = 0, run = 0;

	for (i = 0; i < len; i++) {
		char	c = p[i];

		if (in) {
			if (c == '\\')
				i++;
			else if (c == '"') {
				in = 0;
				n++;
			}
			continue;
		}
		if (c == '"') {
			in = 1;
			run = 0;
			n++;
		} else if (strchr("{}[]:,", c) != NULL) {
			run = 0;
			n++;
		} else if (c == ' ' || c == '\t' || c == '\r' || c == '\n')
			run = 0;
		else if (!run) {
			run = 1;
			n++;
		}
	}
	return n;
}

/* Every verdict and member the same as the reference's; a line the
 * reference accepts must not need it (that would be a silent slowdown). */
static struct jscan_shapes	*shapes;	/* shared by every line */
#define NISAS	(sizeof(isas) / sizeof(isas[0]))
#define NAME(k)	isa_names[(k) < NISAS ? isas[k] : 5]

static void
agree(const char *line, size_t len, const char *what)
{
	struct jscan_result	ref, fast, full;
	int			rr = jscan_object_ref(line, len, &ref);
	size_t			i, k;

	if (shapes == NULL)
		assert_non_null(shapes = jscan_shapes_create());
	/* k == nisas: the shaped path, with plans from earlier lines */
	for (k = 0; k <= NISAS; k++) {
		int	rf, rc;

		if (k == NISAS) {
			rc = jscan_object_shaped(shapes, line, len, &full);
			rf = rc == 0 && full.error == NULL ? 0 : -1;
		} else if (!jscan_isa_supported(isas[k]))
			continue;
		else {
			rf = jscan_object_fast(line, len, &fast, isas[k]);
			rc = jscan_object_isa(line, len, &full, isas[k]);
		}
		if (rf == 0 && rr != 0)
			fail_msg("%s: %s accepts a line the reference refuses "
			    "(%s at %zu): '%.*s'", what, NAME(k),
			    ref.error, ref.error_at, (int)len, line);
		if (rr == 0 && rf != 0 && len <= JSCAN_FAST_MAX_LEN &&
		    tokens_of(line, len) <= JSCAN_FAST_MAX_TOKENS)
			fail_msg("%s: %s refuses a good line: '%.*s'", what,
			    NAME(k), (int)len, line);
		assert_int_equal(rc, rr);
		if (rr != 0) {
			assert_string_equal(full.error, ref.error);
			assert_int_equal(full.error_at, ref.error_at);
			continue;
		}
		for (i = 0; i < F_NFIELDS; i++) {
			const struct jspan	*a = &full.f[i], *b = &ref.f[i];

			if (a->kind != b->kind || (b->kind != J_NONE &&
			    (a->p != b->p || a->n != b->n ||
			    a->escaped != b->escaped)))
				fail_msg("%s: %s: member %zu differs "
				    "(kind %d/%d, n %u/%u, escaped %d/%d): "
				    "'%.*s'", what, NAME(k), i,
				    a->kind, b->kind, a->n, b->n, a->escaped,
				    b->escaped, (int)len, line);
		}
	}
}

/* Lines of the repository's fixtures, each a seed for mutations. */
struct seeds {
	char	**line;
	size_t	 *len, n, cap;
};

static void
seeds_add(struct seeds *s, const char *p, size_t n)
{
	if (s->n == s->cap) {
		s->cap = s->cap ? s->cap * 2 : 64;
		s->line = realloc(s->line, s->cap * sizeof(*s->line));
		s->len = realloc(s->len, s->cap * sizeof(*s->len));
		assert_non_null(s->line);
		assert_non_null(s->len);
	}
	s->line[s->n] = malloc(n + 1);
	assert_non_null(s->line[s->n]);
	memcpy(s->line[s->n], p, n);
	s->line[s->n][n] = '\0';
	s->len[s->n++] = n;
}

static void
seeds_load(struct seeds *s, const char *path)
{
	FILE	*f = fopen(path, "rb");
	char	*buf = NULL;
	size_t	 cap = 0;
	ssize_t	 n;

	if (f == NULL)
		fail_msg("cannot open %s (run from the repository's top)", path);
	while ((n = getline(&buf, &cap, f)) > 0) {
		if (buf[n - 1] == '\n')
			n--;
		seeds_add(s, buf, (size_t)n);
	}
	free(buf);
	fclose(f);
}

static void
seeds_free(struct seeds *s)
{
	size_t	i;

	for (i = 0; i < s->n; i++)
		free(s->line[i]);
	free(s->line);
	free(s->len);
}

static const char *const handmade[] = {
	"{\"s\":\"a\\\\\\\"b\",\"type\":\"x\\\\\"}",
	"{\"type\":\"\\u00e9\\ud83d\\ude00\\/\\b\\f\\n\\r\\t\",\"at\":1}",
	"{\"n\":[-0,0,0.0,-0.5e-3,1E+9,12345678901234567890,1e99]}",
	"{\"n\":[1e308,1e309,-1.8e308,0.1e-999,1e999]}",
	"{\"t\":true,\"f\":false,\"z\":null,\"o\":{},\"a\":[],\"e\":{\"\":\"\"}}",
	"\t{ \"type\" : \"hitch\" , \"frameMs\" : [ 1 , { } ] }\r ",
	"{\"note\":\"\xc3\xa7" "a saccade ici \xe2\x82\xac \xf0\x9f\x98\x80\"}",
	"{\"typ\\u0065\":\"esc key\",\"type\":\"plain\"}",
	"{\"frame\":{\"medianMs\":8.58,\"p95Ms\":17.36},\"render\":{\"calls\":846}}",
};

/* Bytes mutations draw from: structure, escapes, number and literal
 * characters, whitespace, controls and every kind of UTF-8 byte. */
static const unsigned char alphabet[] =
	"\"\\{}[]:, \t\r\n0123456789-+.eEtrufalsnxu/"
	"\x00\x01\x1f\x7f\x80\xbf\xc0\xc2\xc3\xa9\xe2\x82\xed\xa0\xf0\xf4\x90"
	"\xff";

static size_t
mutate(uint64_t *rs, char *buf, size_t len, size_t cap)
{
	int	steps = 1 + (int)(rnd(rs) % 3), i;

	for (i = 0; i < steps; i++) {
		size_t	pos = len ? rnd(rs) % (len + 1) : 0;
		char	c = (char)alphabet[rnd(rs) % (sizeof(alphabet) - 1)];

		switch (rnd(rs) % 5) {
		case 0:		/* replace */
			if (pos < len)
				buf[pos] = c;
			break;
		case 1:		/* insert */
			if (len + 1 < cap) {
				memmove(buf + pos + 1, buf + pos, len - pos);
				buf[pos] = c;
				len++;
			}
			break;
		case 2:		/* delete */
			if (pos < len) {
				memmove(buf + pos, buf + pos + 1,
				    len - pos - 1);
				len--;
			}
			break;
		case 3:		/* cut */
			len = pos;
			break;
		default: {	/* repeat a piece */
			size_t	n = rnd(rs) % 12;

			if (pos + n <= len && len + n < cap) {
				memmove(buf + pos + n, buf + pos, len - pos);
				len += n;
			}
			break;
		}
		}
	}
	return len;
}

static void
jscan_fast_agrees_on_fixtures_and_mutations(void **state)
{
	static const char *const files[] = {
		"tests/fixtures/basic.jsonl", "tests/fixtures/malformed.jsonl",
		"tests/fixtures/strings-as-numbers.jsonl",
		"tests/fixtures/unknown.jsonl", "tests/fixtures/fix-status.jsonl",
		"tests/fixtures/fix-status.fixes.jsonl",
		"tests/fixtures/sessions/demo.jsonl",
	};
	struct seeds	s = { 0 };
	uint64_t	rs = 0x9e3779b97f4a7c15ull;
	char		buf[4096], what[64];
	size_t		i, j;

	(void)state;
	for (i = 0; i < sizeof(files) / sizeof(files[0]); i++)
		seeds_load(&s, files[i]);
	for (i = 0; i < sizeof(handmade) / sizeof(handmade[0]); i++)
		seeds_add(&s, handmade[i], strlen(handmade[i]));
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		seeds_add(&s, cases[i].line, strlen(cases[i].line));
	assert_true(s.n > 50);
	for (i = 0; i < s.n; i++) {
		snprintf(what, sizeof(what), "seed %zu", i);
		agree(s.line[i], s.len[i], what);
	}
	/* mutants, shifted by a random indent so every byte meets every
	 * block boundary */
	for (j = 0; j < 200000; j++) {
		size_t	k = rnd(&rs) % s.n, pad = rnd(&rs) % 70, len;

		if (s.len[k] + pad + 64 > sizeof(buf))
			continue;
		memset(buf, ' ', pad);
		memcpy(buf + pad, s.line[k], s.len[k]);
		len = mutate(&rs, buf, s.len[k] + pad, sizeof(buf));
		snprintf(what, sizeof(what), "mutant %zu of seed %zu", j, k);
		agree(buf, len, what);
	}
	seeds_free(&s);
}

/* Runs of backslashes and quotes across every block boundary: the
 * escape and in-string carries between 64-byte blocks. */
static void
jscan_fast_agrees_across_blocks(void **state)
{
	char	buf[512];
	size_t	pad, run, tail;

	(void)state;
	for (pad = 0; pad < 140; pad++)
		for (run = 0; run < 10; run++)
			for (tail = 0; tail < 3; tail++) {
				size_t	n = 0, i;

				n += (size_t)sprintf(buf, "{\"type\":\"");
				for (i = 0; i < pad; i++)
					buf[n++] = 'x';
				for (i = 0; i < run; i++)
					buf[n++] = '\\';
				if (tail > 0)
					buf[n++] = tail == 1 ? '"' : 'n';
				n += (size_t)sprintf(buf + n,
				    "\",\"at\":%zu}", pad);
				agree(buf, n, "backslash run");
			}
}

/* The depth limit at its edge: 127 containers open at once are fine,
 * 128 are not — in objects and arrays alike. */
static void
jscan_fast_agrees_on_depth(void **state)
{
	char	buf[1024];
	size_t	d, i, n;

	(void)state;
	for (d = 120; d < 132; d++) {
		n = (size_t)sprintf(buf, "{\"a\":");
		for (i = 1; i < d; i++)
			buf[n++] = '[';
		for (i = 1; i < d; i++)
			buf[n++] = ']';
		buf[n++] = '}';
		agree(buf, n, "nested arrays");
		n = 0;
		for (i = 0; i < d; i++)
			n += (size_t)sprintf(buf + n, "{\"a\":");
		n += (size_t)sprintf(buf + n, "1");
		for (i = 0; i < d; i++)
			buf[n++] = '}';
		agree(buf, n, "nested objects");
	}
	{
		struct jscan_result	r;

		n = (size_t)sprintf(buf, "{\"a\":");
		for (i = 1; i < 127; i++)
			buf[n++] = '[';
		for (i = 1; i < 127; i++)
			buf[n++] = ']';
		buf[n++] = '}';
		assert_int_equal(jscan_object(buf, n, &r), 0);
		n = (size_t)sprintf(buf, "{\"a\":");
		for (i = 1; i < 128; i++)
			buf[n++] = '[';
		for (i = 1; i < 128; i++)
			buf[n++] = ']';
		buf[n++] = '}';
		assert_int_equal(jscan_object(buf, n, &r), -1);
		assert_string_equal(r.error, "nested too deep");
	}
}

/* Do two trees print the same (cJSON_Compare cannot compare inf)? */
static int
same_json(const cJSON *a, const cJSON *b)
{
	char	*x = cJSON_PrintUnformatted(a), *y = cJSON_PrintUnformatted(b);
	int	 same = x != NULL && y != NULL && strcmp(x, y) == 0;

	free(x);
	free(y);
	return same;
}

/* A span's text parsed by cJSON. */
static cJSON *
parse_span(struct jspan v)
{
	const char	*p = v.kind == J_STRING ? v.p - 1 : v.p;
	size_t		 n = v.kind == J_STRING ? v.n + 2 : v.n;

	return cJSON_ParseWithLength(p, n);
}

static void
same_span(struct jspan a, struct jspan b, const char *what, const char *line)
{
	if (a.kind != b.kind || (a.kind != J_NONE && (a.p != b.p ||
	    a.n != b.n || a.escaped != b.escaped)))
		fail_msg("%s: the token index and the byte walk differ in "
		    "'%s'", what, line);
}

/* Does every member of object/array span c, found by jscan_get,
 * jscan_getn and jscan_at (and their _in variants through r's token
 * index), equal cJSON's parse of it?  Recursive. */
static void
lookups_match(const struct jscan_result *r, struct jspan c, const cJSON *ref,
    const char *line, int depth)
{
	const cJSON	*it;
	size_t		 i = 0, pos = 0;

	if (depth > 6)
		return;
	if (c.kind == J_ARRAY) {
		struct jspan	v;

		cJSON_ArrayForEach(it, ref) {
			cJSON	*got;

			v = jscan_next(c, &pos);
			assert_true(v.kind != J_NONE);
			got = parse_span(v);
			if (!same_json(got, it))
				fail_msg("element %zu differs in '%s'", i,
				    line);
			if (cJSON_IsObject(it) || cJSON_IsArray(it))
				lookups_match(r, v, it, line, depth + 1);
			assert_true(jscan_at(c, i).p == v.p);
			same_span(jscan_at_in(r, c, i), v, "jscan_at_in", line);
			cJSON_Delete(got);
			i++;
		}
		assert_int_equal(jscan_next(c, &pos).kind, J_NONE);
		assert_int_equal(jscan_at(c, i).kind, J_NONE);
		assert_int_equal(jscan_at_in(r, c, i).kind, J_NONE);
		return;
	}
	cJSON_ArrayForEach(it, ref) {
		const cJSON	*k;
		struct jspan	 v, w[2];
		const char	*names[2] = { it->string, "no such member" };
		int		 dup = 0;
		cJSON		*got;
		char		 buf[256];

		/* jscan takes the last of duplicate names, cJSON the first;
		 * jscan does not match escaped names */
		cJSON_ArrayForEach(k, ref)
			dup += strcmp(k->string, it->string) == 0;
		if (dup > 1 || strlen(it->string) >= sizeof(buf) ||
		    strpbrk(it->string, "\\\"") != NULL || strlen(it->string) == 0)
			continue;
		v = jscan_get(c, it->string);
		same_span(jscan_get_in(r, c, it->string), v, "jscan_get_in",
		    line);
		if (v.kind == J_NONE)
			continue;	/* the name was written escaped */
		jscan_getn(c, names, w, 2);
		assert_true(w[0].p == v.p && w[0].n == v.n);
		assert_int_equal(w[1].kind, J_NONE);
		jscan_getn_in(r, c, names, w, 2);
		same_span(w[0], v, "jscan_getn_in", line);
		assert_int_equal(w[1].kind, J_NONE);
		got = parse_span(v);
		if (!same_json(got, it))
			fail_msg("member '%s' differs in '%s'", it->string,
			    line);
		if (v.kind == J_STRING && cJSON_IsString(it)) {
			int	n = jscan_str(v, buf, sizeof(buf));

			if (strlen(it->valuestring) < sizeof(buf) - 1 &&
			    (n < 0 || strcmp(buf, it->valuestring) != 0))
				fail_msg("'%s' decodes to '%s', not '%s'",
				    it->string, buf, it->valuestring);
		}
		if (cJSON_IsObject(it) || cJSON_IsArray(it))
			lookups_match(r, v, it, line, depth + 1);
		cJSON_Delete(got);
	}
}

/* Nested lookups (jscan_get/getn/at/next/str) on every valid line of the
 * fixtures and of mutants give what cJSON parses there. */
static void
jscan_lookups_agree_with_cjson(void **state)
{
	static const char *const files[] = {
		"tests/fixtures/basic.jsonl", "tests/fixtures/unknown.jsonl",
		"tests/fixtures/strings-as-numbers.jsonl",
		"tests/fixtures/sessions/demo.jsonl",
	};
	struct seeds	s = { 0 };
	uint64_t	rs = 31337;
	char		buf[4096];
	size_t		i, j, checked = 0, indexed = 0;

	(void)state;
	for (i = 0; i < sizeof(files) / sizeof(files[0]); i++)
		seeds_load(&s, files[i]);
	for (i = 0; i < sizeof(handmade) / sizeof(handmade[0]); i++)
		seeds_add(&s, handmade[i], strlen(handmade[i]));
	for (j = 0; j < 60000; j++) {
		struct jscan_result	 r;
		struct jspan		 top;
		cJSON			*ref;
		size_t			 k = rnd(&rs) % s.n, len;

		if (s.len[k] + 64 > sizeof(buf))
			continue;
		memcpy(buf, s.line[k], s.len[k]);
		len = j < s.n ? s.len[k] : mutate(&rs, buf, s.len[k],
		    sizeof(buf));
		if (shapes == NULL)
			assert_non_null(shapes = jscan_shapes_create());
		if (jscan_object_shaped(shapes, buf, len, &r) != 0 ||
		    (ref = cJSON_ParseWithLength(buf, len)) == NULL)
			continue;
		indexed += r.index != NULL;
		/* the whole line as one object span */
		top.p = memchr(buf, '{', len);
		top.n = (uint32_t)(buf + len - top.p);
		while (top.n > 0 && top.p[top.n - 1] != '}')
			top.n--;
		top.kind = J_OBJECT;
		top.escaped = 0;
		buf[len] = '\0';
		lookups_match(&r, top, ref, buf, 0);
		cJSON_Delete(ref);
		checked++;
	}
	assert_true(checked > 5000);
	assert_true(indexed > checked / 2);
	seeds_free(&s);
}

/* Lines past the fast path's length go the reference way, whole. */
static void
jscan_long_lines(void **state)
{
	size_t			 n = 100000, i;
	char			*line = malloc(n + 64);
	struct jscan_result	 r;

	(void)state;
	assert_non_null(line);
	i = (size_t)sprintf(line, "{\"type\":\"");
	while (i < n)
		line[i++] = 'y';
	i += (size_t)sprintf(line + i, "\",\"at\":\"z\"}");
	agree(line, i, "long line");
	assert_int_equal(jscan_object(line, i, &r), 0);
	assert_int_equal(r.f[F_TYPE].n, n - 9);
	line[i - 1] = ' ';
	agree(line, i, "long broken line");
	free(line);
}

/* jscan_num gives what strtod gives, bit for bit, for numbers of every
 * shape: short and long mantissas, leading zeros, exponents near and past
 * the fast path's edges, signed zeros. */
static void
jscan_num_is_strtod(void **state)
{
	static const char *const fixed[] = {
		"0", "-0", "0.0", "-0.0", "0e5", "-0E-7", "1", "-1", "8.58",
		"17.36", "1234567", "0.1", "0.3", "2.2250738585072014e-308",
		"1e22", "1e23", "9007199254740992", "9007199254740993",
		"123456789012345678", "1234567890123456789",
		"12345678901234567890", "0.000000000000000000000000001",
		"1.7976931348623157e308", "1e309", "-1e-400", "4.35", "141.2",
		"1e-22", "1e-23", "3.14159265358979323846",
	};
	uint64_t	rs = 42;
	char		buf[64];
	size_t		i, j;

	(void)state;
	for (i = 0; i < sizeof(fixed) / sizeof(fixed[0]) + 200000; i++) {
		struct jspan	sp;
		double		got, want;

		if (i < sizeof(fixed) / sizeof(fixed[0]))
			snprintf(buf, sizeof(buf), "%s", fixed[i]);
		else {
			/* -?digits(.digits)?(e[+-]?digits)? of random sizes */
			size_t	n = 0, k = 1 + rnd(&rs) % 20;

			if (rnd(&rs) % 4 == 0)
				buf[n++] = '-';
			buf[n++] = (char)('1' + rnd(&rs) % 9);
			for (j = 1; j < k; j++)
				buf[n++] = (char)('0' + rnd(&rs) % 10);
			if (rnd(&rs) % 2) {
				buf[n++] = '.';
				for (j = 0; j < 1 + rnd(&rs) % 12; j++)
					buf[n++] = (char)('0' + rnd(&rs) % 10);
			}
			if (rnd(&rs) % 3 == 0)
				n += (size_t)snprintf(buf + n, sizeof(buf) - n,
				    "e%d", (int)(rnd(&rs) % 61) - 30);
			buf[n] = '\0';
		}
		sp.p = buf;
		sp.n = (uint32_t)strlen(buf);
		sp.kind = J_NUMBER;
		sp.escaped = 0;
		want = strtod(buf, NULL);
		assert_int_equal(jscan_num(sp, &got), 0);
		if (memcmp(&got, &want, sizeof(got)) != 0)
			fail_msg("'%s': jscan_num %.17g, strtod %.17g", buf, got,
			    want);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(jscan_table),
		cmocka_unit_test(jscan_nul_byte),
		cmocka_unit_test(jscan_deep_nesting_refused),
		cmocka_unit_test(jscan_captures_top_level_fields),
		cmocka_unit_test(jscan_numbers_in_strings),
		cmocka_unit_test(jscan_str_truncates_on_utf8_boundary),
		cmocka_unit_test(jscan_fast_agrees_on_fixtures_and_mutations),
		cmocka_unit_test(jscan_fast_agrees_across_blocks),
		cmocka_unit_test(jscan_fast_agrees_on_depth),
		cmocka_unit_test(jscan_long_lines),
		cmocka_unit_test(jscan_lookups_agree_with_cjson),
		cmocka_unit_test(jscan_num_is_strtod),
	};

	int	rc = cmocka_run_group_tests(tests, NULL, NULL);

	jscan_shapes_destroy(shapes);
	return rc;
}
