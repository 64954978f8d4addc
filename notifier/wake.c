/*
 * wake — the rule, the wake line and its JSON, the bounded text they are
 * built with, the footprint list a line names, and the catch-up rule (see
 * wake.h).  It knows no tally: what a line says of one comes in as a
 * struct wake_held, filled by wake_tally.c, which uses this file.
 *
 * Invariants: every line written here is valid UTF-8 (given valid input;
 * invalid bytes become '?'), has no control characters, and is at most
 * WAKE_LINE_MAX bytes.
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
#include "ledger/impact.h"
#include "notifier/wake.h"

#define TIMES	"\xc3\x97"		/* U+00D7 MULTIPLICATION SIGN */
#define ELLIPSIS "\xe2\x80\xa6"		/* U+2026 */

const char *const wake_type_names[WAKE_NTYPES] = {
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
or_empty(const char *s)
{
	return s != NULL ? s : "";
}

enum wake_type
wake_type_index(const char *type)
{
	int i;

	for (i = 0; i < WAKE_TYPE_OTHER; i++)
		if (strcmp(or_empty(type), wake_type_names[i]) == 0)
			return (enum wake_type)i;
	return WAKE_TYPE_OTHER;
}

int
wake_is_meaningful(const struct ledger_event *ev,
    const struct wake_config *cfg)
{
	if (ev == NULL || ev->automated || !ev->incident || !ev->counted)
		return 0;
	switch (wake_type_index(ev->type)) {
	case WAKE_TYPE_HITCH:
		return ev->has_value && isfinite(ev->value) &&
		    ev->value >= cfg->hitch_ms;
	case WAKE_TYPE_USERMARK:
	case WAKE_TYPE_JITTER:
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


void
wake_sb_init(struct wake_sb *sb, char *buf, size_t size)
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

void
wake_sb_put(struct wake_sb *sb, const char *s, size_t n)
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

void
wake_sb_puts(struct wake_sb *sb, const char *s)
{
	wake_sb_put(sb, s, strlen(s));
}

void __attribute__((format(printf, 2, 3)))
wake_sb_printf(struct wake_sb *sb, const char *fmt, ...)
{
	char tmp[256];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	wake_sb_put(sb, tmp, (size_t)n < sizeof(tmp) ? (size_t)n : sizeof(tmp) - 1);
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
sb_token(struct wake_sb *sb, const char *s)
{
	const unsigned char *p = (const unsigned char *)or_empty(s);
	size_t n = strlen((const char *)p), len;
	long cp;

	while (n > 0 && sb->len < sb->cap) {
		cp = utf8_next(p, n, &len);
		if (cp < 0)
			wake_sb_put(sb, "?", 1);
		else if (cp == ' ' || is_control(cp))
			wake_sb_put(sb, "_", 1);
		else
			wake_sb_put(sb, (const char *)p, len);
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

void
wake_sb_clock(struct wake_sb *sb, int64_t ms, int with_date)
{
	struct tm tm;
	time_t t;
	char tmp[32];

	t = (time_t)(ms >= 0 ? ms / 1000 : -((-ms + 999) / 1000));
	if (localtime_r(&t, &tm) == NULL) {
		wake_sb_puts(sb, "?");
		return;
	}
	strftime(tmp, sizeof(tmp), with_date ? "%Y-%m-%d %H:%M:%S" :
	    "%H:%M:%S", &tm);
	wake_sb_puts(sb, tmp);
}

int
wake_same_local_day(int64_t a, int64_t b)
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
	struct wake_sb sb;
	const char *unit = or_empty(ev->unit);
	int t = wake_type_index(ev->type);

	if (size == 0)
		return -EINVAL;
	wake_sb_init(&sb, buf, size);
	sb_token(&sb, or_empty(ev->type)[0] != '\0' ? ev->type : "record");
	if (!ev->has_value || !isfinite(ev->value))
		return (int)sb.len;
	wake_sb_puts(&sb, t == WAKE_TYPE_USERMARK ? " worst " : " ");
	if (strcmp(unit, "ms") == 0)
		wake_sb_printf(&sb, "%.1f", ev->value);
	else if (strcmp(unit, "units") == 0)
		wake_sb_printf(&sb, "%.2f", ev->value);
	else
		wake_sb_printf(&sb, "%g", ev->value);
	sb_token(&sb, unit);
	return (int)sb.len;
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

/* --- the footprints a line names ---------------------------------------- */

/* "164ms", "4.2ms", "0.67units", "" */
static void
sb_worst(struct wake_sb *sb, const struct wake_held_fp *f)
{
	if (!f->has_worst)
		return;
	wake_sb_puts(sb, " ");
	if (strcmp(f->unit, "ms") == 0)
		wake_sb_printf(sb, f->worst >= 10 ? "%.0fms" : "%.1fms", f->worst);
	else if (strcmp(f->unit, "units") == 0)
		wake_sb_printf(sb, "%.2funits", f->worst);
	else {
		wake_sb_printf(sb, "%g", f->worst);
		sb_token(sb, f->unit);
	}
}

/* "81e5eb9b ×7 164ms shader-compile regressed" into buf; its length. */
static size_t
entry_format(char *buf, size_t size, const struct wake_held_fp *f)
{
	struct wake_sb sb;

	wake_sb_init(&sb, buf, size);
	sb_token(&sb, f->fp);
	wake_sb_printf(&sb, " " TIMES "%" PRIu64, f->count);
	sb_worst(&sb, f);
	wake_sb_puts(&sb, " ");
	sb_token(&sb, f->guess[0] != '\0' ? f->guess : "unclassified");
	if (f->status[0] != '\0') {
		wake_sb_puts(&sb, " ");
		sb_token(&sb, f->status);
	}
	return sb.len;
}

size_t
wake_list_text(struct wake_sb *sb, const struct wake_held_fp *const *l, size_t n,
    size_t k)
{
	char e[WAKE_LINE_SIZE], tmp[64];
	size_t len = 0, i, el;

	if (n == 0)
		return 0;
	if (k == 0) {
		snprintf(tmp, sizeof(tmp), " (%zu footprint%s)", n,
		    n == 1 ? "" : "s");
		if (sb != NULL)
			wake_sb_puts(sb, tmp);
		return strlen(tmp);
	}
	for (i = 0; i < k; i++) {
		el = entry_format(e, sizeof(e), l[i]);
		len += 2 + el;				/* ": " or ", " */
		if (sb != NULL) {
			wake_sb_puts(sb, i == 0 ? ": " : ", ");
			wake_sb_put(sb, e, el);
		}
	}
	if (k < n) {
		snprintf(tmp, sizeof(tmp), ", %zu more footprint%s", n - k,
		    n - k == 1 ? "" : "s");
		len += strlen(tmp);
		if (sb != NULL)
			wake_sb_puts(sb, tmp);
	}
	return len;
}

/*
 * A list grows by a whole entry per footprint and its "N more" tail
 * shrinks by a few bytes, so the search stops once it is well past room:
 * a line holds a dozen entries at most, whatever n is.
 */
size_t
wake_list_fit(const struct wake_held_fp *const *l, size_t n, size_t room)
{
	size_t k, best = 0, len;

	for (k = 1; k <= n; k++) {
		len = wake_list_text(NULL, l, n, k);
		if (len <= room)
			best = k;
		else if (len > room + 32)
			break;
	}
	return best;
}

/* --- the wake line ------------------------------------------------------- */


/*
 * An escaped text (note or evidence) cut to at most cap bytes: whole if it
 * fits, else as much as fits before "…".  Returns its length; 0 when
 * cap cannot hold a cut one.
 */
static size_t
text_fit(char *out, size_t cap, const char *in)
{
	size_t len;

	if (in == NULL || in[0] == '\0')
		return 0;
	if (escape_evidence(out, cap, &len, in))
		return len;
	if (cap <= strlen(ELLIPSIS))
		return 0;
	escape_evidence(out, cap - strlen(ELLIPSIS), &len, in);
	memcpy(out + len, ELLIPSIS, strlen(ELLIPSIS));
	return len + strlen(ELLIPSIS);
}

/* Bytes the whole escaped text would take (no cut). */
static size_t
text_need(const char *in)
{
	char tmp[4 * WAKE_LINE_SIZE];
	size_t len;

	if (in == NULL || in[0] == '\0')
		return 0;
	if (escape_evidence(tmp, sizeof(tmp), &len, in))
		return len;
	return sizeof(tmp);		/* longer than any line */
}

/* A quoted token's cost: its text plus the quoting (0 without text). */
static size_t
tok(size_t text, size_t overhead)
{
	return text > 0 ? text + overhead : 0;
}

/* The text room a token of `room` bytes leaves (0 if none). */
static size_t
untok(size_t room, size_t overhead)
{
	return room > overhead ? room - overhead : 0;
}

#define NOTE_OVER	8	/* ` note="` and `"` */
#define EVID_OVER	3	/* ` "` and `"` */
#define ENT_OVER	10	/* ` entity="` and `"` */
#define ENT_MIN		16	/* an entity cut shorter says nothing */
#define EVID_MIN	48	/* kept for the evidence before an entity */

int
wake_format(char *buf, size_t size, const struct ledger_event *ev,
    const char *id, const struct wake_held *held, const struct wake_config *cfg)
{
	char head[WAKE_LINE_SIZE], tail[WAKE_LINE_SIZE], what[128];
	char hh[128], cmd[64], note[WAKE_LINE_SIZE], evid[WAKE_LINE_SIZE];
	char ent[WAKE_ENTITY_MAX + 1];
	struct wake_sb h, t, line, hs;
	const struct wake_held_fp *const *l = NULL;
	size_t limit, fixed, room, n = 0, k = 0, note_need, evid_need;
	size_t note_cap, evid_cap, used, nl, el, list0, troom, entl;
	const char *guess = or_empty(ev->guess), *conf = or_empty(ev->confidence);
	const char *loop = cfg != NULL ? cfg->loop : NULL;

	if (size == 0)
		return -EINVAL;
	limit = size - 1 < WAKE_LINE_MAX ? size - 1 : WAKE_LINE_MAX;

	wake_sb_init(&h, head, sizeof(head));
	wake_sb_puts(&h, "sloptimize ");
	wake_what_format(what, sizeof(what), ev);
	wake_sb_puts(&h, what);
	wake_sb_puts(&h, " ");
	if (guess[0] == '\0')
		wake_sb_puts(&h, "unclassified");
	else {
		sb_token(&h, guess);
		if (conf[0] != '\0') {
			wake_sb_puts(&h, "/");
			sb_token(&h, conf);
		}
	}

	wake_sb_init(&t, tail, sizeof(tail));
	wake_sb_puts(&t, " fp=");
	sb_token(&t, ev->id[0] != '\0' ? ev->id : "-");
	wake_sb_printf(&t, " " TIMES "%" PRIu64, ev->count);
	if (or_empty(ev->status)[0] != '\0') {
		wake_sb_puts(&t, " status=");
		sb_token(&t, ev->status);
	}
	if (or_empty(ev->phase)[0] != '\0') {
		wake_sb_puts(&t, " phase=");
		sb_token(&t, ev->phase);
	}
	if (or_empty(ev->build)[0] != '\0') {
		wake_sb_puts(&t, " build=");
		sb_token(&t, ev->build);
	}
	/* seed §6.4: a software renderer's frame time is not a GPU's; the
	 * line says so where the agent reads it, not only in the record */
	if (strcmp(or_empty(ev->regime), "software") == 0)
		wake_sb_puts(&t, " regime=software(timings-untrusted)");
	if (or_empty(id)[0] != '\0') {
		wake_sb_puts(&t, " id=");
		sb_token(&t, id);
	}
	if (loop != NULL && loop[0] != '\0' && strcmp(loop, "off") != 0) {
		wake_sb_puts(&t, " loop=");
		sb_token(&t, loop);
	}

	wake_sb_init(&hs, hh, sizeof(hh));
	if (held != NULL && held->count > 0) {
		wake_sb_printf(&hs, " +%" PRIu64 " more since ", held->count);
		wake_sb_clock(&hs, held->since, 0);
		l = held->fps;
		n = held->nfps;
	}
	cmd[0] = '\0';
	if (ev->id[0] != '\0')
		snprintf(cmd, sizeof(cmd), WAKE_ARROW "sloptimize issues --fp %s",
		    ev->id);

	/*
	 * The fixed tokens are what a reader dedupes, resumes, counts and
	 * acts with: they are never shortened.  The rest share what is left
	 * (wake.h says in which order).
	 */
	fixed = h.len + t.len + hs.len + strlen(cmd);
	/* the entity the incident names and the line that built it (issue
	   19): where to look.  Not a token a reader dedupes with: it takes
	   what the fixed ones leave beyond a minimum for the evidence, cut
	   if it must be, left out below ENT_MIN */
	el = fixed + EVID_MIN + ENT_OVER < limit ? limit - fixed - EVID_MIN -
	    ENT_OVER : 0;
	if (el > WAKE_ENTITY_MAX)
		el = WAKE_ENTITY_MAX;
	entl = el >= ENT_MIN ? text_fit(ent, el, ev->entity) : 0;
	fixed += tok(entl, ENT_OVER);
	room = fixed < limit ? limit - fixed : 0;
	/* with held footprints, at least " (N footprints)" is said */
	list0 = n > 0 ? wake_list_text(NULL, l, n, 0) : 0;
	troom = room > list0 ? room - list0 : 0;
	note_need = text_need(ev->note);
	evid_need = text_need(ev->evidence);
	note_cap = note_need < WAKE_NOTE_SHARE ? note_need : WAKE_NOTE_SHARE;
	evid_cap = evid_need < WAKE_NOTE_SHARE ? evid_need : WAKE_NOTE_SHARE;
	if (note_cap > untok(troom, NOTE_OVER))
		note_cap = untok(troom, NOTE_OVER);
	if (tok(note_cap, NOTE_OVER) + tok(evid_cap, EVID_OVER) > troom)
		evid_cap = untok(troom - tok(note_cap, NOTE_OVER), EVID_OVER);
	if (n > 0) {
		used = tok(note_cap, NOTE_OVER) + wake_list_text(NULL, l, n, 1);
		if (used <= room) {
			/* the first held footprint before the evidence */
			if (used + tok(evid_cap, EVID_OVER) > room)
				evid_cap = untok(room - used, EVID_OVER);
			k = wake_list_fit(l, n, room - tok(note_cap, NOTE_OVER) -
			    tok(evid_cap, EVID_OVER));
		}
	}
	used = tok(note_cap, NOTE_OVER) + tok(evid_cap, EVID_OVER) +
	    wake_list_text(NULL, l, n, k);
	/* what is left grows the note, then the evidence, back to whole */
	if (used < room && note_cap < note_need) {
		size_t more = room - used;
		size_t grow = note_cap == 0 ? untok(more, NOTE_OVER) : more;

		if (grow > note_need - note_cap)
			grow = note_need - note_cap;
		note_cap += grow;
		used = tok(note_cap, NOTE_OVER) + tok(evid_cap, EVID_OVER) +
		    wake_list_text(NULL, l, n, k);
	}
	if (used < room && evid_cap < evid_need) {
		size_t more = room - used;
		size_t grow = evid_cap == 0 ? untok(more, EVID_OVER) : more;

		if (grow > evid_need - evid_cap)
			grow = evid_need - evid_cap;
		evid_cap += grow;
	}
	nl = text_fit(note, note_cap, ev->note);
	el = text_fit(evid, evid_cap, ev->evidence);

	wake_sb_init(&line, buf, limit + 1);
	wake_sb_put(&line, head, h.len);
	if (nl > 0) {
		wake_sb_puts(&line, " note=\"");
		wake_sb_put(&line, note, nl);
		wake_sb_puts(&line, "\"");
	}
	if (el > 0) {
		wake_sb_puts(&line, " \"");
		wake_sb_put(&line, evid, el);
		wake_sb_puts(&line, "\"");
	}
	if (entl > 0) {
		wake_sb_puts(&line, " entity=\"");
		wake_sb_put(&line, ent, entl);
		wake_sb_puts(&line, "\"");
	}
	wake_sb_put(&line, tail, t.len);
	wake_sb_put(&line, hh, hs.len);
	wake_list_text(&line, l, n, k);
	wake_sb_puts(&line, cmd);
	return (int)line.len;
}

/*
 * heldBy, one footprint an element.  Each element is built as a cJSON
 * object, printed by cJSON, and kept in the array as that text (a raw
 * item), its tree freed at once: a catch-up line over 5,000 footprints is
 * built at the end of the start-up fold, when the daemon's memory is at
 * its highest, and a tree of eight nodes and their strings per footprint
 * (~4 MB there) put the daemon over its 32 MB (docs/performance.md).  The
 * line prints to the same bytes; nothing reads the elements back (every
 * channel takes the printed line).
 */
static void
json_held_list(cJSON *arr, const struct wake_held_fp *const *l, size_t n)
{
	size_t i;
	cJSON *e, *raw;
	char *txt;

	for (i = 0; i < n; i++) {
		if ((e = cJSON_CreateObject()) == NULL)
			return;
		cJSON_AddStringToObject(e, "fp", l[i]->fp);
		json_str_or_null(e, "type", l[i]->type);
		cJSON_AddNumberToObject(e, "count", (double)l[i]->count);
		if (l[i]->has_worst)
			cJSON_AddNumberToObject(e, "worst", l[i]->worst);
		else
			cJSON_AddNullToObject(e, "worst");
		json_str_or_null(e, "unit", l[i]->unit);
		json_str_or_null(e, "guess", l[i]->guess);
		json_str_or_null(e, "status", l[i]->status);
		txt = cJSON_GetArraySize(e) == 7 ? cJSON_PrintUnformatted(e) :
		    NULL;
		cJSON_Delete(e);
		raw = txt != NULL ? cJSON_CreateRaw(txt) : NULL;
		cJSON_free(txt);
		if (raw == NULL)
			return;		/* the caller sees the short array */
		cJSON_AddItemToArray(arr, raw);
	}
}

static void
json_id_or_null(cJSON *o, const char *name, int any, uint64_t gen,
    uint64_t off)
{
	char id[WAKE_ID_SIZE];

	if (!any) {
		cJSON_AddNullToObject(o, name);
		return;
	}
	wake_id_format(id, gen, off);
	cJSON_AddStringToObject(o, name, id);
}

/* held, heldSince, heldFrom, heldBy (wake.h): what a line says of `h`. */
static int
held_json(cJSON *o, const struct wake_held *h)
{
	size_t n = 0;
	cJSON *arr;
	int empty = h == NULL || h->count == 0;

	cJSON_AddNumberToObject(o, "held", empty ? 0 : (double)h->count);
	if (empty)
		cJSON_AddNullToObject(o, "heldSince");
	else
		json_time_or_null(o, "heldSince", h->since);
	json_id_or_null(o, "heldFrom", !empty, empty ? 0 : h->first_gen,
	    empty ? 0 : h->first_off);
	if ((arr = cJSON_AddArrayToObject(o, "heldBy")) == NULL)
		return -ENOMEM;
	if (!empty) {
		n = h->nfps;
		json_held_list(arr, h->fps, n);
	}
	return cJSON_GetArraySize(arr) == (int)n ? 0 : -ENOMEM;
}

/* record: the wake's own record, 16 members; 0 or -ENOMEM. */
static int
record_json(cJSON *o, const struct ledger_event *ev)
{
	cJSON *r;

	if ((r = cJSON_AddObjectToObject(o, "record")) == NULL)
		return -ENOMEM;
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
	json_str_or_null(r, "note", ev->note);
	json_str_or_null(r, "regime", ev->regime);
	json_str_or_null(r, "entity", ev->entity);
	/* An Add that failed to allocate left its member out. */
	return cJSON_GetArraySize(r) == 16 ? 0 : -ENOMEM;
}

cJSON *
wake_json(const struct ledger_event *ev, const char *id, const char *line,
    const struct wake_held *held)
{
	cJSON *o;

	if ((o = cJSON_CreateObject()) == NULL)
		return NULL;
	cJSON_AddStringToObject(o, "type", "wake");
	json_str_or_null(o, "id", id);
	cJSON_AddStringToObject(o, "line", or_empty(line));
	if (ev == NULL)
		cJSON_AddNullToObject(o, "record");
	else if (record_json(o, ev) < 0)
		goto fail;
	if (held_json(o, held) < 0)
		goto fail;
	/* An Add that failed to allocate left its member out. */
	if (cJSON_GetArraySize(o) != 8)
		goto fail;
	return o;
fail:
	cJSON_Delete(o);
	return NULL;
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
