/*
 * wake — the rule, the line, the rate limits and the catch-up summary
 * (see wake.h).
 *
 * Invariants: every line written here is valid UTF-8 (given valid input;
 * invalid bytes become '?'), has no control characters, and is at most
 * WAKE_LINE_MAX bytes.  Nothing a limit holds back is forgotten: it is
 * counted until a line says it.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ledger/footprint.h"
#include "wake.h"

#define TIMES	"\xc3\x97"		/* U+00D7 MULTIPLICATION SIGN */
#define ELLIPSIS "\xe2\x80\xa6"		/* U+2026 */

enum { T_HITCH, T_USERMARK, T_JITTER, T_OTHER, T_NTYPES };
static const char *const type_names[T_NTYPES] = {
	"hitch", "usermark", "jitter", "other"
};

void
wake_config_defaults(struct wake_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->hitch_ms = 100;
	cfg->per_fp_ms = 10 * 1000;
	cfg->global_max = 6;
	cfg->global_window_ms = 60 * 1000;
	cfg->recent_ms = 10 * 60 * 1000;
	cfg->exec_max = 4;
	cfg->exec_queue = 64;
	cfg->exec_timeout_ms = 60 * 1000;
	cfg->desktop = 1;
	cfg->desktop_ms = 5 * 1000;
	cfg->loop = NULL;
}

static const char *
str(const char *s)
{
	return s != NULL ? s : "";
}

static int
type_index(const char *type)
{
	int i;

	for (i = 0; i < T_OTHER; i++)
		if (strcmp(str(type), type_names[i]) == 0)
			return i;
	return T_OTHER;
}

int
wake_is_meaningful(const struct ledger_event *ev,
    const struct wake_config *cfg)
{
	if (ev == NULL || ev->automated || !ev->incident || !ev->counted)
		return 0;
	switch (type_index(ev->type)) {
	case T_HITCH:
		return ev->has_value && isfinite(ev->value) &&
		    ev->value >= cfg->hitch_ms;
	case T_USERMARK:
	case T_JITTER:
		return 1;
	default:
		return 0;
	}
}

void
wake_id_format(char out[WAKE_ID_SIZE], uint64_t generation, uint64_t offset)
{
	snprintf(out, WAKE_ID_SIZE, "%" PRIu64 ":%" PRIu64, generation, offset);
}

/* --- text ---------------------------------------------------------------- */

/*
 * A bounded string: appends that do not fit are cut at a UTF-8 boundary
 * and the builder stays full.  cap excludes the NUL.
 */
struct sb {
	char	*buf;
	size_t	 cap;
	size_t	 len;
};

static void
sb_init(struct sb *sb, char *buf, size_t size)
{
	sb->buf = buf;
	sb->cap = size - 1;
	sb->len = 0;
	buf[0] = '\0';
}

/* The largest n' <= n that does not end inside a UTF-8 sequence of s. */
static size_t
utf8_cut(const char *s, size_t n)
{
	size_t i = n;

	/* Step back over continuation bytes to the lead byte at the cut... */
	while (i > 0 && ((unsigned char)s[i] & 0xc0) == 0x80)
		i--;
	/* ...which is fine if the cut falls exactly before it. */
	return i;
}

static void
sb_put(struct sb *sb, const char *s, size_t n)
{
	if (n > sb->cap - sb->len) {
		/* s[n] may not exist: cut within s, then check the boundary
		 * against s itself. */
		n = sb->cap - sb->len;
		n = utf8_cut(s, n);
	}
	memcpy(sb->buf + sb->len, s, n);
	sb->len += n;
	sb->buf[sb->len] = '\0';
}

static void
sb_puts(struct sb *sb, const char *s)
{
	sb_put(sb, s, strlen(s));
}

static void __attribute__((format(printf, 2, 3)))
sb_printf(struct sb *sb, const char *fmt, ...)
{
	char tmp[256];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	sb_put(sb, tmp, (size_t)n < sizeof(tmp) ? (size_t)n : sizeof(tmp) - 1);
}

/*
 * Decode one UTF-8 character at s (n bytes left): its code point, or -1
 * for an invalid or truncated sequence (then *len is 1).
 */
static long
utf8_next(const unsigned char *s, size_t n, size_t *len)
{
	long cp;
	size_t k, i;

	*len = 1;
	if (s[0] < 0x80)
		return s[0];
	if (s[0] >= 0xc2 && s[0] <= 0xdf) {
		k = 2;
		cp = s[0] & 0x1f;
	} else if (s[0] >= 0xe0 && s[0] <= 0xef) {
		k = 3;
		cp = s[0] & 0x0f;
	} else if (s[0] >= 0xf0 && s[0] <= 0xf4) {
		k = 4;
		cp = s[0] & 0x07;
	} else
		return -1;
	if (n < k)
		return -1;
	for (i = 1; i < k; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return -1;
		cp = (cp << 6) | (s[i] & 0x3f);
	}
	/* Overlongs, surrogates and beyond U+10FFFF. */
	if ((k == 3 && cp < 0x800) || (k == 4 && cp < 0x10000) ||
	    (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff)
		return -1;
	*len = k;
	return cp;
}

/* C0, DEL, C1 and the Unicode line/paragraph separators: anything a
 * reader might take as the end of the line or a terminal command. */
static int
is_control(long cp)
{
	return cp < 0x20 || cp == 0x7f || (cp >= 0x80 && cp < 0xa0) ||
	    cp == 0x2028 || cp == 0x2029;
}

static int
is_space_control(long cp)
{
	return cp == '\t' || cp == '\n' || cp == '\r' || cp == 0x0b ||
	    cp == 0x0c || cp == 0x85 || cp == 0x2028 || cp == 0x2029;
}

/* A token of the line: spaces and controls become '_'. */
static void
sb_token(struct sb *sb, const char *s)
{
	const unsigned char *p = (const unsigned char *)str(s);
	size_t n = strlen((const char *)p), len;
	long cp;

	while (n > 0 && sb->len < sb->cap) {
		cp = utf8_next(p, n, &len);
		if (cp < 0)
			sb_put(sb, "?", 1);
		else if (cp == ' ' || is_control(cp))
			sb_put(sb, "_", 1);
		else
			sb_put(sb, (const char *)p, len);
		p += len;
		n -= len;
	}
}

/*
 * Write the evidence escaped ('"' and '\' backslashed, line breaks and
 * tabs as one space, other controls dropped) in whole units, at most cap
 * bytes.  Returns 1 if all of it fitted.
 */
static int
escape_evidence(char *out, size_t cap, size_t *outlen, const char *in)
{
	const unsigned char *p = (const unsigned char *)in;
	size_t n = strlen(in), len, k = 0, ulen;
	char unit[4];
	const char *u;
	long cp;

	while (n > 0) {
		cp = utf8_next(p, n, &len);
		u = unit;
		if (cp < 0) {
			unit[0] = '?';
			ulen = 1;
		} else if (cp == '"' || cp == '\\') {
			unit[0] = '\\';
			unit[1] = (char)cp;
			ulen = 2;
		} else if (is_space_control(cp)) {
			/* one space for a run of breaks */
			if (k > 0 && out[k - 1] == ' ')
				ulen = 0;
			else {
				unit[0] = ' ';
				ulen = 1;
			}
		} else if (is_control(cp))
			ulen = 0;
		else {
			u = (const char *)p;
			ulen = len;
		}
		if (k + ulen > cap) {
			*outlen = k;
			return 0;
		}
		memcpy(out + k, u, ulen);
		k += ulen;
		p += len;
		n -= len;
	}
	*outlen = k;
	return 1;
}

static void
sb_clock(struct sb *sb, int64_t ms, int with_date)
{
	struct tm tm;
	time_t t;
	char tmp[32];

	t = (time_t)(ms >= 0 ? ms / 1000 : -((-ms + 999) / 1000));
	if (localtime_r(&t, &tm) == NULL) {
		sb_puts(sb, "?");
		return;
	}
	strftime(tmp, sizeof(tmp), with_date ? "%Y-%m-%d %H:%M:%S" :
	    "%H:%M:%S", &tm);
	sb_puts(sb, tmp);
}

static int
same_local_day(int64_t a, int64_t b)
{
	struct tm ta, tb;
	time_t t;

	t = (time_t)(a / 1000);
	if (localtime_r(&t, &ta) == NULL)
		return 0;
	t = (time_t)(b / 1000);
	if (localtime_r(&t, &tb) == NULL)
		return 0;
	return ta.tm_year == tb.tm_year && ta.tm_yday == tb.tm_yday;
}

int
wake_what_format(char *buf, size_t size, const struct ledger_event *ev)
{
	struct sb sb;
	const char *unit = str(ev->unit);
	int t = type_index(ev->type);

	if (size == 0)
		return -EINVAL;
	sb_init(&sb, buf, size);
	sb_token(&sb, str(ev->type)[0] != '\0' ? ev->type : "record");
	if (!ev->has_value || !isfinite(ev->value))
		return (int)sb.len;
	sb_puts(&sb, t == T_USERMARK ? " worst " : " ");
	if (strcmp(unit, "ms") == 0)
		sb_printf(&sb, "%.1f", ev->value);
	else if (strcmp(unit, "units") == 0)
		sb_printf(&sb, "%.2f", ev->value);
	else
		sb_printf(&sb, "%g", ev->value);
	sb_token(&sb, unit);
	return (int)sb.len;
}

int
wake_format(char *buf, size_t size, const struct ledger_event *ev,
    const char *id, const struct wake_held *held,
    const struct wake_config *cfg)
{
	char head[WAKE_LINE_SIZE], tail[WAKE_LINE_SIZE], what[128];
	char ebuf[WAKE_LINE_SIZE];
	struct sb h, t, line;
	size_t limit, fixed, avail, elen;
	const char *guess = str(ev->guess), *conf = str(ev->confidence);
	const char *loop = cfg != NULL ? cfg->loop : NULL;

	if (size == 0)
		return -EINVAL;
	limit = size - 1 < WAKE_LINE_MAX ? size - 1 : WAKE_LINE_MAX;

	sb_init(&h, head, sizeof(head));
	sb_puts(&h, "sloptimize ");
	wake_what_format(what, sizeof(what), ev);
	sb_puts(&h, what);
	sb_puts(&h, " ");
	if (guess[0] == '\0')
		sb_puts(&h, "unclassified");
	else {
		sb_token(&h, guess);
		if (conf[0] != '\0') {
			sb_puts(&h, "/");
			sb_token(&h, conf);
		}
	}

	sb_init(&t, tail, sizeof(tail));
	sb_puts(&t, " fp=");
	sb_token(&t, ev->id[0] != '\0' ? ev->id : "-");
	sb_printf(&t, " " TIMES "%" PRIu64, ev->count);
	if (str(ev->status)[0] != '\0') {
		sb_puts(&t, " status=");
		sb_token(&t, ev->status);
	}
	if (str(ev->phase)[0] != '\0') {
		sb_puts(&t, " phase=");
		sb_token(&t, ev->phase);
	}
	if (str(ev->build)[0] != '\0') {
		sb_puts(&t, " build=");
		sb_token(&t, ev->build);
	}
	if (str(id)[0] != '\0') {
		sb_puts(&t, " id=");
		sb_token(&t, id);
	}
	if (loop != NULL && loop[0] != '\0' && strcmp(loop, "off") != 0) {
		sb_puts(&t, " loop=");
		sb_token(&t, loop);
	}
	if (held != NULL && held->count > 0) {
		sb_printf(&t, " +%" PRIu64 " more since ", held->count);
		sb_clock(&t, held->since_ms, 0);
	}

	/*
	 * The evidence gets what the other parts leave: the fp, the id and
	 * the held-back count are what a reader dedupes, resumes and counts
	 * with, so they are the last thing to lose.
	 */
	sb_init(&line, buf, limit + 1);
	sb_put(&line, head, h.len);
	fixed = h.len + t.len + 3;		/* space and two quotes */
	if (str(ev->evidence)[0] != '\0' && fixed < limit) {
		avail = limit - fixed;
		if (avail > sizeof(ebuf) - 1)
			avail = sizeof(ebuf) - 1;
		if (!escape_evidence(ebuf, avail, &elen, ev->evidence)) {
			if (avail > strlen(ELLIPSIS))
				escape_evidence(ebuf, avail - strlen(ELLIPSIS),
				    &elen, ev->evidence);
			else
				elen = 0;
			/* after a cut, the ellipsis even if nothing fitted */
			memcpy(ebuf + elen, ELLIPSIS, strlen(ELLIPSIS));
			elen += strlen(ELLIPSIS);
			if (elen > avail)
				elen = 0;
		}
		if (elen > 0) {
			sb_puts(&line, " \"");
			sb_put(&line, ebuf, elen);
			sb_puts(&line, "\"");
		}
	}
	sb_put(&line, tail, t.len);
	return (int)line.len;
}

static void
json_str_or_null(cJSON *o, const char *name, const char *s)
{
	if (s != NULL && s[0] != '\0')
		cJSON_AddStringToObject(o, name, s);
	else
		cJSON_AddNullToObject(o, name);
}

static void
json_time_or_null(cJSON *o, const char *name, int64_t ms)
{
	struct tm tm;
	time_t t;
	char tmp[48];
	int64_t sec, msec;

	if (ms == LEDGER_NO_TIME) {
		cJSON_AddNullToObject(o, name);
		return;
	}
	sec = ms >= 0 ? ms / 1000 : -((-ms + 999) / 1000);
	msec = ms - sec * 1000;
	t = (time_t)sec;
	if (gmtime_r(&t, &tm) == NULL) {
		cJSON_AddNullToObject(o, name);
		return;
	}
	snprintf(tmp, sizeof(tmp), "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ",
	    tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour,
	    tm.tm_min, tm.tm_sec, (int)msec);
	cJSON_AddStringToObject(o, name, tmp);
}

cJSON *
wake_json(const struct ledger_event *ev, const char *id, const char *line,
    const struct wake_held *held)
{
	cJSON *o, *r;

	if ((o = cJSON_CreateObject()) == NULL)
		return NULL;
	cJSON_AddStringToObject(o, "type", "wake");
	json_str_or_null(o, "id", id);
	cJSON_AddStringToObject(o, "line", str(line));
	if ((r = cJSON_AddObjectToObject(o, "record")) == NULL)
		goto fail;
	json_str_or_null(r, "type", ev->type);
	json_time_or_null(r, "at", ev->at_ms);
	if (ev->has_value && isfinite(ev->value))
		cJSON_AddNumberToObject(r, "value", ev->value);
	else
		cJSON_AddNullToObject(r, "value");
	json_str_or_null(r, "unit", ev->unit);
	json_str_or_null(r, "fp", ev->id);
	json_str_or_null(r, "key", ev->key);
	cJSON_AddNumberToObject(r, "count", (double)ev->count);
	json_str_or_null(r, "status", ev->status);
	json_str_or_null(r, "phase", ev->phase);
	json_str_or_null(r, "build", ev->build);
	json_str_or_null(r, "guess", ev->guess);
	json_str_or_null(r, "confidence", ev->confidence);
	json_str_or_null(r, "evidence", ev->evidence);
	cJSON_AddNumberToObject(o, "held",
	    held != NULL ? (double)held->count : 0);
	if (held != NULL && held->count > 0)
		json_time_or_null(o, "heldSince", held->since_ms);
	else
		cJSON_AddNullToObject(o, "heldSince");
	/* An Add that failed to allocate left its member out. */
	if (cJSON_GetArraySize(r) != 13 || cJSON_GetArraySize(o) != 6)
		goto fail;
	return o;
fail:
	cJSON_Delete(o);
	return NULL;
}

cJSON *
wake_note_json(const char *line, uint64_t held)
{
	cJSON *o;

	if ((o = cJSON_CreateObject()) == NULL)
		return NULL;
	if (cJSON_AddStringToObject(o, "type", "wake") == NULL ||
	    cJSON_AddNullToObject(o, "id") == NULL ||
	    cJSON_AddStringToObject(o, "line", str(line)) == NULL ||
	    cJSON_AddNullToObject(o, "record") == NULL ||
	    cJSON_AddNumberToObject(o, "held", (double)held) == NULL) {
		cJSON_Delete(o);
		return NULL;
	}
	return o;
}

/* --- footprint table ----------------------------------------------------- */

/*
 * Open addressing over footprint ids.  No deletion: the limiter rebuilds
 * the table without its expired entries when it fills, so it holds the
 * footprints of the last per_fp_ms, not every footprint ever seen.
 */
struct fpslot {
	char		id[9];		/* "" = empty slot */
	int64_t		t;		/* limiter: last line sent */
	uint64_t	n;		/* catch-up: records */
};

struct fptab {
	struct fpslot	*slot;
	size_t		 cap;		/* power of two */
	size_t		 used;
};

static uint32_t
fp_hash(const char *id)
{
	return fnv1a32(id, strlen(id));
}

/* Ids are 8 hex digits; anything longer is cut, "" is stored as "-". */
static void
fp_key(char out[9], const char *id)
{
	size_t n = strlen(str(id));

	if (n == 0) {
		strcpy(out, "-");
		return;
	}
	if (n > 8)
		n = 8;
	memcpy(out, id, n);
	out[n] = '\0';
}

static struct fpslot *
fptab_find(struct fptab *ft, const char *key)
{
	size_t i;

	if (ft->cap == 0)
		return NULL;
	for (i = fp_hash(key) & (ft->cap - 1); ft->slot[i].id[0] != '\0';
	    i = (i + 1) & (ft->cap - 1))
		if (strcmp(ft->slot[i].id, key) == 0)
			return &ft->slot[i];
	return NULL;
}

/* Rebuild into cap slots, keeping the entries keep() says yes to. */
static int
fptab_rebuild(struct fptab *ft, size_t cap,
    int (*keep)(const struct fpslot *, void *), void *arg)
{
	struct fpslot *ns, *s;
	size_t i, j;

	if ((ns = calloc(cap, sizeof(*ns))) == NULL)
		return -ENOMEM;
	ft->used = 0;
	for (i = 0; i < ft->cap; i++) {
		s = &ft->slot[i];
		if (s->id[0] == '\0' || (keep != NULL && !keep(s, arg)))
			continue;
		for (j = fp_hash(s->id) & (cap - 1); ns[j].id[0] != '\0';
		    j = (j + 1) & (cap - 1))
			;
		ns[j] = *s;
		ft->used++;
	}
	free(ft->slot);
	ft->slot = ns;
	ft->cap = cap;
	return 0;
}

/* Find or add key; the table is at most half full after this.  NULL on
 * allocation failure (the table is unchanged then). */
static struct fpslot *
fptab_get(struct fptab *ft, const char *key,
    int (*keep)(const struct fpslot *, void *), void *arg)
{
	struct fpslot *s;
	size_t i, cap;

	if ((s = fptab_find(ft, key)) != NULL)
		return s;
	if ((ft->used + 1) * 2 > ft->cap) {
		/* Drop what has expired; grow if that did not free enough. */
		if (keep != NULL && ft->cap > 0 &&
		    fptab_rebuild(ft, ft->cap, keep, arg) < 0)
			return NULL;
		if ((ft->used + 1) * 4 > ft->cap) {
			cap = ft->cap == 0 ? 16 : ft->cap * 2;
			if (fptab_rebuild(ft, cap, NULL, NULL) < 0)
				return NULL;
		}
	}
	for (i = fp_hash(key) & (ft->cap - 1); ft->slot[i].id[0] != '\0';
	    i = (i + 1) & (ft->cap - 1))
		;
	s = &ft->slot[i];
	memset(s, 0, sizeof(*s));
	strcpy(s->id, key);
	ft->used++;
	return s;
}

/* --- rate limits --------------------------------------------------------- */

/*
 * Global limit: a sliding window, not a token bucket.  A bucket of 6
 * refilled at 6/min lets 12 lines through in a minute (a full bucket,
 * then its refill); the window guarantees what the setting says — never
 * more than global_max lines in any global_window_ms — which is what a
 * monitor that stops flooding sources counts.  It costs global_max
 * timestamps.
 */
struct wake_limiter {
	int64_t		 per_fp_ms;
	unsigned	 global_max;		/* 0: global limit off */
	int64_t		 global_window_ms;
	struct fptab	 fps;
	int64_t		*sent_at;		/* ring of global_max times */
	unsigned	 sent_head, sent_n;
	int64_t		 now;			/* latest time seen */

	uint64_t	 held;			/* not yet said */
	int64_t		 held_since;
	int64_t		 held_fp_ready;		/* earliest per-fp reopening */
	uint64_t	 held_type[T_NTYPES];
	char		 held_fp[9];

	uint64_t	 total_sent, total_held;
};

struct wake_limiter *
wake_limiter_create(const struct wake_config *cfg)
{
	struct wake_limiter *wl;

	if (cfg->global_max > WAKE_GLOBAL_MAX_LIMIT)
		return NULL;
	if ((wl = calloc(1, sizeof(*wl))) == NULL)
		return NULL;
	wl->per_fp_ms = cfg->per_fp_ms > 0 ? cfg->per_fp_ms : 0;
	if (cfg->global_max > 0 && cfg->global_window_ms > 0) {
		wl->global_max = cfg->global_max;
		wl->global_window_ms = cfg->global_window_ms;
		wl->sent_at = calloc(wl->global_max, sizeof(*wl->sent_at));
		if (wl->sent_at == NULL)
			goto fail;
	}
	wl->now = INT64_MIN;
	return wl;
fail:
	wake_limiter_destroy(wl);
	return NULL;
}

void
wake_limiter_destroy(struct wake_limiter *wl)
{
	if (wl == NULL)
		return;
	free(wl->fps.slot);
	free(wl->sent_at);
	free(wl);
}

/* 0 if a line may go out now, else the time the window reopens. */
static int64_t
global_ready(const struct wake_limiter *wl)
{
	if (wl->global_max == 0 || wl->sent_n < wl->global_max)
		return 0;
	return wl->sent_at[wl->sent_head] + wl->global_window_ms;
}

static void
global_push(struct wake_limiter *wl, int64_t now)
{
	if (wl->global_max == 0)
		return;
	if (wl->sent_n < wl->global_max)
		wl->sent_at[(wl->sent_head + wl->sent_n++) % wl->global_max] =
		    now;
	else {
		wl->sent_at[wl->sent_head] = now;
		wl->sent_head = (wl->sent_head + 1) % wl->global_max;
	}
}

static int64_t
clock_step(struct wake_limiter *wl, int64_t now)
{
	if (now < wl->now)
		now = wl->now;		/* stepped back: stand still */
	wl->now = now;
	return now;
}

static int
fp_unexpired(const struct fpslot *s, void *arg)
{
	const struct wake_limiter *wl = arg;

	return s->t + wl->per_fp_ms > wl->now;
}

static void
held_reset(struct wake_limiter *wl)
{
	wl->held = 0;
	wl->held_since = 0;
	wl->held_fp_ready = 0;
	memset(wl->held_type, 0, sizeof(wl->held_type));
	wl->held_fp[0] = '\0';
}

int
wake_limiter_admit(struct wake_limiter *wl, const struct ledger_event *ev,
    int64_t now_ms, struct wake_held *held)
{
	struct fpslot *s = NULL;
	int64_t fp_ready = 0, g_ready;
	char key[9];

	now_ms = clock_step(wl, now_ms);
	fp_key(key, ev->id);
	if (wl->per_fp_ms > 0 && (s = fptab_find(&wl->fps, key)) != NULL &&
	    s->t + wl->per_fp_ms > now_ms)
		fp_ready = s->t + wl->per_fp_ms;
	if ((g_ready = global_ready(wl)) <= now_ms)
		g_ready = 0;

	if (fp_ready != 0 || g_ready != 0) {
		if (wl->held++ == 0) {
			wl->held_since = ev->at_ms != LEDGER_NO_TIME ?
			    ev->at_ms : now_ms;
			wl->held_fp_ready = fp_ready;
		} else if (fp_ready < wl->held_fp_ready)
			wl->held_fp_ready = fp_ready;
		wl->held_type[type_index(ev->type)]++;
		strcpy(wl->held_fp, key);
		wl->total_held++;
		return 0;
	}

	if (wl->per_fp_ms > 0 && s == NULL &&
	    (s = fptab_get(&wl->fps, key, fp_unexpired, wl)) == NULL)
		return -ENOMEM;
	if (s != NULL)
		s->t = now_ms;
	global_push(wl, now_ms);
	if (held != NULL) {
		held->count = wl->held;
		held->since_ms = wl->held_since;
	}
	held_reset(wl);
	wl->total_sent++;
	return 1;
}

int64_t
wake_limiter_flush_at(const struct wake_limiter *wl)
{
	int64_t g;

	if (wl->held == 0)
		return WAKE_NEVER;
	/* Nothing went out since the last hold (that would have said the
	 * count), so the global window is where it was then. */
	g = global_ready(wl);
	return g > wl->held_fp_ready ? g : wl->held_fp_ready;
}

static void
sb_type_counts(struct sb *sb, const uint64_t counts[T_NTYPES])
{
	int i, first = 1;

	for (i = 0; i < T_NTYPES; i++) {
		if (counts[i] == 0)
			continue;
		sb_printf(sb, "%s%s %" PRIu64, first ? "" : ", ",
		    type_names[i], counts[i]);
		first = 0;
	}
}

int
wake_limiter_flush(struct wake_limiter *wl, int64_t now_ms, char *buf,
    size_t size, uint64_t *count)
{
	struct sb sb;

	if (count != NULL)
		*count = 0;
	if (size == 0)
		return -EINVAL;
	now_ms = clock_step(wl, now_ms);
	if (wl->held == 0 || now_ms < wake_limiter_flush_at(wl))
		return 0;
	sb_init(&sb, buf, size < WAKE_LINE_SIZE ? size : WAKE_LINE_SIZE);
	sb_printf(&sb, "sloptimize held back: +%" PRIu64 " more since ",
	    wl->held);
	sb_clock(&sb, wl->held_since, 0);
	sb_puts(&sb, " (");
	sb_type_counts(&sb, wl->held_type);
	sb_puts(&sb, "), last fp=");
	sb_puts(&sb, wl->held_fp);
	if (count != NULL)
		*count = wl->held;
	global_push(wl, now_ms);
	held_reset(wl);
	wl->total_sent++;
	return (int)sb.len;
}

void
wake_limiter_stats(const struct wake_limiter *wl,
    struct wake_limiter_stats *st)
{
	st->sent = wl->total_sent;
	st->held = wl->total_held;
	st->pending = wl->held;
}

/* --- catch-up ------------------------------------------------------------ */

int
wake_is_recent(int64_t at_ms, int64_t now_ms, const struct wake_config *cfg)
{
	if (at_ms == LEDGER_NO_TIME || cfg->recent_ms <= 0)
		return 0;
	if (at_ms >= now_ms)
		return 1;
	return now_ms - at_ms <= cfg->recent_ms;
}

struct wake_catchup {
	uint64_t	total;
	uint64_t	type[T_NTYPES];
	int64_t		first_ms, last_ms;	/* LEDGER_NO_TIME: none yet */
	struct fptab	fps;
	char		top[9];
	uint64_t	top_n;
};

struct wake_catchup *
wake_catchup_create(void)
{
	struct wake_catchup *wc;

	if ((wc = calloc(1, sizeof(*wc))) == NULL)
		return NULL;
	wc->first_ms = wc->last_ms = LEDGER_NO_TIME;
	return wc;
}

void
wake_catchup_destroy(struct wake_catchup *wc)
{
	if (wc == NULL)
		return;
	free(wc->fps.slot);
	free(wc);
}

int
wake_catchup_add(struct wake_catchup *wc, const struct ledger_event *ev)
{
	struct fpslot *s;
	char key[9];

	wc->total++;
	wc->type[type_index(ev->type)]++;
	if (ev->at_ms != LEDGER_NO_TIME) {
		if (wc->first_ms == LEDGER_NO_TIME || ev->at_ms < wc->first_ms)
			wc->first_ms = ev->at_ms;
		if (wc->last_ms == LEDGER_NO_TIME || ev->at_ms > wc->last_ms)
			wc->last_ms = ev->at_ms;
	}
	fp_key(key, ev->id);
	if ((s = fptab_get(&wc->fps, key, NULL, NULL)) == NULL)
		return -ENOMEM;
	/* Strictly more: on a tie the footprint that got there first stays. */
	if (++s->n > wc->top_n) {
		wc->top_n = s->n;
		strcpy(wc->top, s->id);
	}
	return 0;
}

uint64_t
wake_catchup_count(const struct wake_catchup *wc)
{
	return wc->total;
}

int
wake_catchup_format(const struct wake_catchup *wc, char *buf, size_t size)
{
	struct sb sb;
	int date;

	if (size == 0)
		return -EINVAL;
	sb_init(&sb, buf, size < WAKE_LINE_SIZE ? size : WAKE_LINE_SIZE);
	if (wc->total == 0)
		return 0;
	sb_printf(&sb, "sloptimize catch-up: %" PRIu64 " meaningful record%s "
	    "while stopped (", wc->total, wc->total == 1 ? "" : "s");
	sb_type_counts(&sb, wc->type);
	sb_puts(&sb, ")");
	if (wc->first_ms != LEDGER_NO_TIME) {
		date = !same_local_day(wc->first_ms, wc->last_ms);
		sb_puts(&sb, " from ");
		sb_clock(&sb, wc->first_ms, date);
		sb_puts(&sb, " to ");
		sb_clock(&sb, wc->last_ms, date);
	}
	if (wc->top_n > 0)
		sb_printf(&sb, ", top fp=%s " TIMES "%" PRIu64, wc->top,
		    wc->top_n);
	return (int)sb.len;
}
