/*
 * footprint — footprint v2 derivation and its helpers (DESIGN §6,
 * docs/footprint-v2.md: what enters a hitch's cause field), and the
 * hashes of the fold's bytes: FNV-1a, CRC-32C.
 *
 * The key is built into a caller's buffer with bounded appends; a key that
 * would not fit is cut, which changes nothing for real records (keys are a
 * few hundred bytes) and keeps a hostile record from costing memory.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "footprint.h"

#if defined(__x86_64__) && !defined(LEDGER_PORTABLE)
#include <immintrin.h>
#endif

#define FNV_PRIME	16777619u
#define FNV64_PRIME	0x100000001b3ull

uint32_t
fnv1a32_more(uint32_t h, const void *data, size_t len)
{
	const unsigned char	*p = data;

	while (len-- > 0) {
		h ^= *p++;
		h *= FNV_PRIME;
	}
	return h;
}

uint32_t
fnv1a32(const void *data, size_t len)
{
	return fnv1a32_more(FNV1A32_INIT, data, len);
}

uint64_t
fnv1a64_more(uint64_t h, const void *data, size_t len)
{
	const unsigned char	*p = data;

	while (len-- > 0) {
		h ^= *p++;
		h *= FNV64_PRIME;
	}
	return h;
}

uint64_t
fnv1a64(const void *data, size_t len)
{
	return fnv1a64_more(FNV1A64_INIT, data, len);
}

uint32_t
footprint_id(const char *key, size_t len)
{
	return fnv1a32_more(fnv1a32("v2:", 3), key, len);
}

void
footprint_hex(uint32_t id, char out[9])
{
	static const char	digits[] = "0123456789abcdef";
	int			i;

	for (i = 7; i >= 0; i--) {
		out[i] = digits[id & 0xf];
		id >>= 4;
	}
	out[8] = '\0';
}

int
footprint_parse_hex(const char *s, size_t n, uint32_t *id)
{
	uint32_t	v = 0;
	size_t		i;

	if (n != 8)
		return -1;
	for (i = 0; i < 8; i++) {
		char	c = s[i];

		v <<= 4;
		if (c >= '0' && c <= '9')
			v |= (uint32_t)(c - '0');
		else if (c >= 'a' && c <= 'f')
			v |= (uint32_t)(c - 'a' + 10);
		else if (c >= 'A' && c <= 'F')
			v |= (uint32_t)(c - 'A' + 10);
		else
			return -1;
	}
	*id = v;
	return 0;
}

void
footprint_scrub(char *s)
{
	for (; *s != '\0'; s++)
		if (*s == '|' || *s == ',' || *s == '=' || *s == '\n' ||
		    *s == '\r' || *s == '\t')
			*s = '_';
}

struct jspan
footprint_top_class(struct jspan cls)
{
	struct jspan	none = { 0 };

	if (cls.kind == J_ARRAY)
		cls = jscan_at(cls, 0);
	if (cls.kind != J_OBJECT)
		return none;
	return jscan_get(cls, "guess");
}

/* Bounded key builder. */
struct kb {
	char	*buf;
	size_t	 cap, n;
};

static void
kb_raw(struct kb *k, const char *s, size_t n)
{
	if (k->n + n >= k->cap)
		n = k->cap - 1 - k->n;
	memcpy(k->buf + k->n, s, n);
	k->n += n;
	k->buf[k->n] = '\0';
}

static void
kb_lit(struct kb *k, const char *s)
{
	kb_raw(k, s, strlen(s));
}

/* A string member, scrubbed; `dflt` when absent, empty or not a string.
 * Numbers are written as they appear, so a numeric phase still keys. */
static void
kb_field(struct kb *k, struct jspan v, const char *dflt)
{
	char	*start = k->buf + k->n;
	int	 n;

	if (v.kind != J_STRING && v.kind != J_NUMBER) {
		kb_lit(k, dflt);
		return;
	}
	n = jscan_str(v, start, k->cap - k->n);
	if (n <= 0) {
		k->buf[k->n] = '\0';
		kb_lit(k, dflt);
		return;
	}
	footprint_scrub(start);
	k->n += strlen(start);
}

static int
site_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The length of the longest prefix of s[0..n) of at most `max` bytes that
 * ends at a code point boundary (s is valid UTF-8). */
static size_t
utf8_head(const char *s, size_t n, size_t max)
{
	if (n <= max)
		return n;
	n = max;
	while (n > 0 && ((unsigned char)s[n] & 0xc0) == 0x80)
		n--;
	return n;
}

/* Where the last `max` bytes of s[0..n) start, moved forward to a code
 * point boundary. */
static size_t
utf8_tail(const char *s, size_t n, size_t max)
{
	size_t	i;

	if (n <= max)
		return 0;
	i = n - max;
	while (i < n && ((unsigned char)s[i] & 0xc0) == 0x80)
		i++;
	return i;
}

static int
key_sep(char c)
{
	return c == '|' || c == ',' || c == '=' || c == '\n' || c == '\r' ||
	    c == '\t' || c == '+';
}

/*
 * One site as it enters a v2 key (docs/footprint-v2.md): every run of
 * digits, with a '#' before it, becomes '#' (runtime ids and instance
 * numbers are not identity); the separators and '+' become '_'; then at
 * most FOOTPRINT_SITE_MAX bytes.  In place; returns the new length.
 */
static size_t
site_normalize(char *s, size_t n)
{
	size_t	i = 0, o = 0;

	while (i < n) {
		char	c = s[i];

		if ((c == '#' && i + 1 < n && s[i + 1] >= '0' &&
		    s[i + 1] <= '9') || (c >= '0' && c <= '9')) {
			if (c == '#')
				i++;
			while (i < n && s[i] >= '0' && s[i] <= '9')
				i++;
			s[o++] = '#';
			continue;
		}
		s[o++] = key_sep(c) ? '_' : c;
		i++;
	}
	o = utf8_head(s, o, FOOTPRINT_SITE_MAX);
	s[o] = '\0';
	return o;
}

/* Does the array hold a string? */
static int
has_string(struct jspan arr)
{
	size_t		 pos = 0;
	struct jspan	 v;

	if (arr.kind != J_ARRAY)
		return 0;
	while ((v = jscan_next(arr, &pos)).kind != J_NONE)
		if (v.kind == J_STRING)
			return 1;
	return 0;
}

/*
 * A hitch's sites (v2): the writer's `sites` when it holds a string, else
 * its `minted` pairs; each normalised, then sorted, deduplicated and
 * joined by "+" while the whole stays within FOOTPRINT_SITES_MAX bytes,
 * "+more" when some were left out; "-" if none.
 */
static void
kb_sites(struct kb *k, struct jspan sites, struct jspan minted)
{
	static const size_t	 one = FOOTPRINT_SITE_MAX + 1;
	char			 store[FOOTPRINT_SITES_IN * (FOOTPRINT_SITE_MAX + 1)];
	char			 raw[FOOTPRINT_SITE_IN + 1];
	char			*list[FOOTPRINT_SITES_IN];
	size_t			 pos = 0, n = 0, i, bytes = 0;
	struct jspan		 src = has_string(sites) ? sites : minted, v;
	int			 joined = 0;

	if (src.kind == J_ARRAY) {
		while ((v = jscan_next(src, &pos)).kind != J_NONE &&
		    n < FOOTPRINT_SITES_IN) {
			int	len;

			if (v.kind != J_STRING)
				continue;
			len = jscan_str(v, raw, sizeof(raw));
			if (len < 0)
				len = 0;
			len = (int)site_normalize(raw, (size_t)len);
			list[n] = store + n * one;
			memcpy(list[n], raw, (size_t)len + 1);
			n++;
		}
	}
	if (n == 0) {
		kb_lit(k, "-");
		return;
	}
	qsort(list, n, sizeof(list[0]), site_cmp);
	for (i = 0; i < n; i++) {
		size_t	len = strlen(list[i]);

		if (i > 0 && strcmp(list[i], list[i - 1]) == 0)
			continue;
		if (joined > 0 && bytes + 1 + len > FOOTPRINT_SITES_MAX) {
			kb_lit(k, "+more");
			return;
		}
		if (joined > 0) {
			kb_lit(k, "+");
			bytes++;
		}
		kb_lit(k, list[i]);
		bytes += len;
		joined++;
	}
}

/* Copy s[0..n) scrubbed (separators and '+' to '_') into the key. */
static void
kb_clean(struct kb *k, const char *s, size_t n)
{
	size_t	i;

	for (i = 0; i < n; i++) {
		char	c = key_sep(s[i]) ? '_' : s[i];

		kb_raw(k, &c, 1);
	}
}

/* The length of "scheme://host" at the start of s, or 0. */
static size_t
url_origin(const char *s, size_t n)
{
	size_t	i = 0;

	if (n == 0 || !((s[0] >= 'A' && s[0] <= 'Z') ||
	    (s[0] >= 'a' && s[0] <= 'z')))
		return 0;
	for (i = 1; i < n; i++) {
		char	c = s[i];

		if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
		    (c >= '0' && c <= '9') || c == '+' || c == '.' ||
		    c == '-'))
			break;
	}
	if (i + 3 > n || s[i] != ':' || s[i + 1] != '/' || s[i + 2] != '/')
		return 0;
	for (i += 3; i < n && s[i] != '/'; i++)
		;
	return i;
}

/* A script's file as identity: the path without query, fragment, scheme
 * and host, at most its last FOOTPRINT_SCRIPT_FILE_MAX bytes.  Sets
 * where it is in s (at, len). */
static void
script_file(const char *s, size_t n, size_t *at, size_t *len)
{
	size_t	i, o;

	for (i = 0; i < n && s[i] != '?' && s[i] != '#'; i++)
		;
	n = i;
	o = url_origin(s, n);
	i = o + utf8_tail(s + o, n - o, FOOTPRINT_SCRIPT_FILE_MAX);
	*at = i;
	*len = n - i;
}

/*
 * A long-script hitch's cause (v2): "name@file" of the script the browser
 * named ("(anonymous)" for no name, "-" for no file), else its invoker,
 * else "no-script" — also when the named script's `share` (of the page's time
 * outside render, docs/recorder.md) is under one half.
 */
static void
kb_script(struct kb *k, struct jspan script)
{
	static const char *const names[] = { "share", "name", "sourceURL",
	    "invoker" };
	struct jspan	m[4];
	char		name[FOOTPRINT_SITE_IN + 1], url[FOOTPRINT_SITE_IN + 1];
	int		nn = 0, nu = 0;
	size_t		at, len;
	double		share;

	if (script.kind != J_OBJECT) {
		kb_lit(k, "no-script");
		return;
	}
	jscan_getn(script, names, m, 4);
	if (jscan_num(m[0], &share) == 0 && share < 0.5) {
		kb_lit(k, "no-script");
		return;
	}
	if (m[1].kind == J_STRING && (nn = jscan_str(m[1], name,
	    sizeof(name))) < 0)
		nn = 0;
	if (m[2].kind == J_STRING && (nu = jscan_str(m[2], url,
	    sizeof(url))) < 0)
		nu = 0;
	script_file(url, (size_t)nu, &at, &len);
	if (nn > 0 || len > 0) {
		if (nn > 0)
			kb_clean(k, name, utf8_head(name, (size_t)nn,
			    FOOTPRINT_SCRIPT_NAME_MAX));
		else
			kb_lit(k, "(anonymous)");
		kb_lit(k, "@");
		if (len > 0)
			kb_clean(k, url + at, len);
		else
			kb_lit(k, "-");
		return;
	}
	nu = 0;
	if (m[3].kind == J_STRING && (nu = jscan_str(m[3], url,
	    sizeof(url))) < 0)
		nu = 0;
	if (url_origin(url, (size_t)nu) > 0)
		script_file(url, (size_t)nu, &at, &len);
	else {
		at = 0;
		len = utf8_head(url, (size_t)nu, FOOTPRINT_SCRIPT_FILE_MAX);
	}
	if (len == 0)
		kb_lit(k, "no-script");
	else
		kb_clean(k, url + at, len);
}

static void
kb_ctx(struct kb *k, struct jspan ctx)
{
	int	n;

	kb_lit(k, "ctx:");
	/* ctx is taken as written: the host canonicalised it */
	if (ctx.kind != J_STRING)
		return;
	n = jscan_str(ctx, k->buf + k->n, k->cap - k->n);
	if (n > 0)
		k->n += (size_t)n;
}

int
footprint_derive(const struct jscan_result *r, char *key, size_t cap)
{
	struct kb		 k = { key, cap, 0 };
	const struct jspan	*f = r->f;

	key[0] = '\0';
	if (jscan_eq(f[F_TYPE], "hitch")) {
		struct jspan	g = footprint_top_class(f[F_CLASSIFICATION]);
		char		guess[64];

		kb_lit(&k, "hitch|");
		kb_field(&k, f[F_PHASE], "-");
		kb_lit(&k, "|");
		kb_field(&k, g, "-");
		kb_lit(&k, "|");
		/* the cause field: by the verdict (docs/footprint-v2.md) */
		if (g.kind != J_STRING || jscan_str(g, guess, sizeof(guess)) < 0)
			guess[0] = '\0';
		if (strcmp(guess, "long-script") == 0)
			kb_script(&k, f[F_SCRIPT]);
		else if (strcmp(guess, "gc-or-upload-by-elimination") == 0 ||
		    strcmp(guess, "resize") == 0)
			kb_lit(&k, "-");
		else
			kb_sites(&k, f[F_SITES], f[F_MINTED]);
		kb_lit(&k, "|");
	} else if (jscan_eq(f[F_TYPE], "usermark")) {
		struct jspan	w0 = jscan_at(f[F_WORST], 0);

		kb_lit(&k, "usermark|");
		kb_field(&k, f[F_PHASE], "-");
		kb_lit(&k, "|");
		kb_field(&k, footprint_top_class(
		    jscan_get(w0, "classification")), "-");
		kb_lit(&k, "|");
	} else if (jscan_eq(f[F_TYPE], "jitter")) {
		double	j[3] = { 0, 0, 0 };
		int	i;

		for (i = 0; i < 3; i++)
			if (jscan_num(jscan_at(f[F_JUMP], (size_t)i), &j[i]))
				j[i] = 0;
		kb_lit(&k, "jitter|");
		kb_field(&k, f[F_TRACK], "-");
		kb_lit(&k, "|");
		kb_field(&k, f[F_KIND], "-");
		kb_lit(&k, "|");
		kb_field(&k, f[F_PHASE], "-");
		kb_lit(&k, "|");
		kb_field(&k, footprint_top_class(f[F_CLASSIFICATION]), "-");
		kb_lit(&k, fabs(j[1]) > fmax(fabs(j[0]), fabs(j[2])) ?
		    "|vertical|" : "|horizontal|");
	} else
		return -1;
	kb_ctx(&k, f[F_CTX]);
	return (int)k.n;
}

/* Days from 1970-01-01 to y-m-d in the proleptic Gregorian calendar. */
static int64_t
days_from_civil(int64_t y, unsigned m, unsigned d)
{
	int64_t		era;
	unsigned	yoe, doy, doe;

	y -= m <= 2;
	era = (y >= 0 ? y : y - 399) / 400;
	yoe = (unsigned)(y - era * 400);
	doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
	doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + (int64_t)doe - 719468;
}

static int
digits(const char *s, size_t n, size_t at, size_t count, int *out)
{
	int	v = 0;
	size_t	i;

	if (at + count > n)
		return -1;
	for (i = 0; i < count; i++) {
		if (s[at + i] < '0' || s[at + i] > '9')
			return -1;
		v = v * 10 + (s[at + i] - '0');
	}
	*out = v;
	return 0;
}

int
iso_parse_ms(const char *s, size_t n, int64_t *ms)
{
	int	Y, M, D, h, m, sec = 0, frac = 0, oh = 0, om = 0, sign = 0;
	size_t	i;
	int64_t	t;

	if (digits(s, n, 0, 4, &Y) || n < 16 || s[4] != '-' ||
	    digits(s, n, 5, 2, &M) || s[7] != '-' || digits(s, n, 8, 2, &D) ||
	    (s[10] != 'T' && s[10] != 't' && s[10] != ' ') ||
	    digits(s, n, 11, 2, &h) || s[13] != ':' ||
	    digits(s, n, 14, 2, &m))
		return -1;
	i = 16;
	if (i < n && s[i] == ':') {
		if (digits(s, n, 17, 2, &sec))
			return -1;
		i = 19;
		if (i < n && (s[i] == '.' || s[i] == ',')) {
			int	scale = 100, any = 0;

			for (i++; i < n && s[i] >= '0' && s[i] <= '9'; i++) {
				frac += (s[i] - '0') * scale;
				scale /= 10;
				any = 1;
			}
			if (!any)
				return -1;
		}
	}
	if (i < n && (s[i] == 'Z' || s[i] == 'z'))
		i++;
	else if (i < n && (s[i] == '+' || s[i] == '-')) {
		sign = s[i] == '-' ? -1 : 1;
		if (digits(s, n, i + 1, 2, &oh))
			return -1;
		i += 3;
		if (i < n && s[i] == ':')
			i++;
		if (digits(s, n, i, 2, &om))
			return -1;
		i += 2;
	} else
		return -1;
	if (i != n || M < 1 || M > 12 || D < 1 || D > 31 || h > 23 ||
	    m > 59 || sec > 60 || oh > 23 || om > 59)
		return -1;
	t = days_from_civil(Y, (unsigned)M, (unsigned)D) * 86400 +
	    h * 3600 + m * 60 + sec - sign * (oh * 3600 + om * 60);
	*ms = t * 1000 + frac;
	return 0;
}

void
iso_format_ms(int64_t ms, char out[32])
{
	time_t		t;
	struct tm	tm;
	int64_t		frac = ms % 1000;

	if (frac < 0)
		frac += 1000;
	t = (time_t)((ms - frac) / 1000);
	gmtime_r(&t, &tm);
	strftime(out, 32, "%Y-%m-%dT%H:%M:%S", &tm);
	out[19] = '.';
	out[20] = (char)('0' + frac / 100);
	out[21] = (char)('0' + frac / 10 % 10);
	out[22] = (char)('0' + frac % 10);
	out[23] = 'Z';
	out[24] = '\0';
}

/*
 * CRC-32C (Castagnoli): the same bytes on every machine, from the SSE4.2
 * instruction where there is one (some 10 GB/s: a 1 GB ledger's
 * checkpoint is 21 MB) and from this table elsewhere.
 */
static const uint32_t crc_table[256] = {
	0x00000000, 0xf26b8303, 0xe13b70f7, 0x1350f3f4, 0xc79a971f, 0x35f1141c,
	0x26a1e7e8, 0xd4ca64eb, 0x8ad958cf, 0x78b2dbcc, 0x6be22838, 0x9989ab3b,
	0x4d43cfd0, 0xbf284cd3, 0xac78bf27, 0x5e133c24, 0x105ec76f, 0xe235446c,
	0xf165b798, 0x030e349b, 0xd7c45070, 0x25afd373, 0x36ff2087, 0xc494a384,
	0x9a879fa0, 0x68ec1ca3, 0x7bbcef57, 0x89d76c54, 0x5d1d08bf, 0xaf768bbc,
	0xbc267848, 0x4e4dfb4b, 0x20bd8ede, 0xd2d60ddd, 0xc186fe29, 0x33ed7d2a,
	0xe72719c1, 0x154c9ac2, 0x061c6936, 0xf477ea35, 0xaa64d611, 0x580f5512,
	0x4b5fa6e6, 0xb93425e5, 0x6dfe410e, 0x9f95c20d, 0x8cc531f9, 0x7eaeb2fa,
	0x30e349b1, 0xc288cab2, 0xd1d83946, 0x23b3ba45, 0xf779deae, 0x05125dad,
	0x1642ae59, 0xe4292d5a, 0xba3a117e, 0x4851927d, 0x5b016189, 0xa96ae28a,
	0x7da08661, 0x8fcb0562, 0x9c9bf696, 0x6ef07595, 0x417b1dbc, 0xb3109ebf,
	0xa0406d4b, 0x522bee48, 0x86e18aa3, 0x748a09a0, 0x67dafa54, 0x95b17957,
	0xcba24573, 0x39c9c670, 0x2a993584, 0xd8f2b687, 0x0c38d26c, 0xfe53516f,
	0xed03a29b, 0x1f682198, 0x5125dad3, 0xa34e59d0, 0xb01eaa24, 0x42752927,
	0x96bf4dcc, 0x64d4cecf, 0x77843d3b, 0x85efbe38, 0xdbfc821c, 0x2997011f,
	0x3ac7f2eb, 0xc8ac71e8, 0x1c661503, 0xee0d9600, 0xfd5d65f4, 0x0f36e6f7,
	0x61c69362, 0x93ad1061, 0x80fde395, 0x72966096, 0xa65c047d, 0x5437877e,
	0x4767748a, 0xb50cf789, 0xeb1fcbad, 0x197448ae, 0x0a24bb5a, 0xf84f3859,
	0x2c855cb2, 0xdeeedfb1, 0xcdbe2c45, 0x3fd5af46, 0x7198540d, 0x83f3d70e,
	0x90a324fa, 0x62c8a7f9, 0xb602c312, 0x44694011, 0x5739b3e5, 0xa55230e6,
	0xfb410cc2, 0x092a8fc1, 0x1a7a7c35, 0xe811ff36, 0x3cdb9bdd, 0xceb018de,
	0xdde0eb2a, 0x2f8b6829, 0x82f63b78, 0x709db87b, 0x63cd4b8f, 0x91a6c88c,
	0x456cac67, 0xb7072f64, 0xa457dc90, 0x563c5f93, 0x082f63b7, 0xfa44e0b4,
	0xe9141340, 0x1b7f9043, 0xcfb5f4a8, 0x3dde77ab, 0x2e8e845f, 0xdce5075c,
	0x92a8fc17, 0x60c37f14, 0x73938ce0, 0x81f80fe3, 0x55326b08, 0xa759e80b,
	0xb4091bff, 0x466298fc, 0x1871a4d8, 0xea1a27db, 0xf94ad42f, 0x0b21572c,
	0xdfeb33c7, 0x2d80b0c4, 0x3ed04330, 0xccbbc033, 0xa24bb5a6, 0x502036a5,
	0x4370c551, 0xb11b4652, 0x65d122b9, 0x97baa1ba, 0x84ea524e, 0x7681d14d,
	0x2892ed69, 0xdaf96e6a, 0xc9a99d9e, 0x3bc21e9d, 0xef087a76, 0x1d63f975,
	0x0e330a81, 0xfc588982, 0xb21572c9, 0x407ef1ca, 0x532e023e, 0xa145813d,
	0x758fe5d6, 0x87e466d5, 0x94b49521, 0x66df1622, 0x38cc2a06, 0xcaa7a905,
	0xd9f75af1, 0x2b9cd9f2, 0xff56bd19, 0x0d3d3e1a, 0x1e6dcdee, 0xec064eed,
	0xc38d26c4, 0x31e6a5c7, 0x22b65633, 0xd0ddd530, 0x0417b1db, 0xf67c32d8,
	0xe52cc12c, 0x1747422f, 0x49547e0b, 0xbb3ffd08, 0xa86f0efc, 0x5a048dff,
	0x8ecee914, 0x7ca56a17, 0x6ff599e3, 0x9d9e1ae0, 0xd3d3e1ab, 0x21b862a8,
	0x32e8915c, 0xc083125f, 0x144976b4, 0xe622f5b7, 0xf5720643, 0x07198540,
	0x590ab964, 0xab613a67, 0xb831c993, 0x4a5a4a90, 0x9e902e7b, 0x6cfbad78,
	0x7fab5e8c, 0x8dc0dd8f, 0xe330a81a, 0x115b2b19, 0x020bd8ed, 0xf0605bee,
	0x24aa3f05, 0xd6c1bc06, 0xc5914ff2, 0x37faccf1, 0x69e9f0d5, 0x9b8273d6,
	0x88d28022, 0x7ab90321, 0xae7367ca, 0x5c18e4c9, 0x4f48173d, 0xbd23943e,
	0xf36e6f75, 0x0105ec76, 0x12551f82, 0xe03e9c81, 0x34f4f86a, 0xc69f7b69,
	0xd5cf889d, 0x27a40b9e, 0x79b737ba, 0x8bdcb4b9, 0x988c474d, 0x6ae7c44e,
	0xbe2da0a5, 0x4c4623a6, 0x5f16d052, 0xad7d5351,
};

uint32_t
crc32c_sw(uint32_t crc, const void *data, size_t n)
{
	const unsigned char	*p = data;

	crc = ~crc;
	while (n-- > 0)
		crc = crc_table[(crc ^ *p++) & 0xff] ^ (crc >> 8);
	return ~crc;
}

#if defined(__x86_64__) && !defined(LEDGER_PORTABLE)

__attribute__((target("sse4.2"))) static uint32_t
crc32c_hw(uint32_t crc, const void *data, size_t n)
{
	const unsigned char	*p = data;
	uint64_t		 c = ~crc;

	for (; n >= 8; n -= 8, p += 8) {
		uint64_t	w;

		memcpy(&w, p, 8);
		c = _mm_crc32_u64(c, w);
	}
	while (n-- > 0)
		c = _mm_crc32_u8((uint32_t)c, *p++);
	return ~(uint32_t)c;
}
#endif

uint32_t
crc32c_more(uint32_t crc, const void *data, size_t n)
{
#if defined(__x86_64__) && !defined(LEDGER_PORTABLE)
	if (__builtin_cpu_supports("sse4.2"))
		return crc32c_hw(crc, data, n);
#endif
	return crc32c_sw(crc, data, n);
}
