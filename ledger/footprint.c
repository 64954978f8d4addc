/*
 * footprint — footprint v2 derivation and its helpers (DESIGN §6,
 * docs/footprint-v2.md: what enters a hitch's cause field).
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
