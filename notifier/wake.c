/*
 * wake — the rule, the wake line and its JSON, the bounded text they are
 * built with, and the catch-up rule (see wake.h; the limits and summary
 * lines are in wake_tally.c).
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
#include "wake.h"
#include "wake_impl.h"

const char *const wake_type_names[T_NTYPES] = {
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

const char *
wake_str(const char *s)
{
	return s != NULL ? s : "";
}

int
wake_type_index(const char *type)
{
	int i;

	for (i = 0; i < T_OTHER; i++)
		if (strcmp(wake_str(type), wake_type_names[i]) == 0)
			return i;
	return T_OTHER;
}

int
wake_is_meaningful(const struct ledger_event *ev,
    const struct wake_config *cfg)
{
	if (ev == NULL || ev->automated || !ev->incident || !ev->counted)
		return 0;
	switch (wake_type_index(ev->type)) {
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


void
wake_sb_init(struct sb *sb, char *buf, size_t size)
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
wake_sb_put(struct sb *sb, const char *s, size_t n)
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
wake_sb_puts(struct sb *sb, const char *s)
{
	wake_sb_put(sb, s, strlen(s));
}

void __attribute__((format(printf, 2, 3)))
wake_sb_printf(struct sb *sb, const char *fmt, ...)
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
void
wake_sb_token(struct sb *sb, const char *s)
{
	const unsigned char *p = (const unsigned char *)wake_str(s);
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
wake_sb_clock(struct sb *sb, int64_t ms, int with_date)
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
	struct sb sb;
	const char *unit = wake_str(ev->unit);
	int t = wake_type_index(ev->type);

	if (size == 0)
		return -EINVAL;
	wake_sb_init(&sb, buf, size);
	wake_sb_token(&sb, wake_str(ev->type)[0] != '\0' ? ev->type : "record");
	if (!ev->has_value || !isfinite(ev->value))
		return (int)sb.len;
	wake_sb_puts(&sb, t == T_USERMARK ? " worst " : " ");
	if (strcmp(unit, "ms") == 0)
		wake_sb_printf(&sb, "%.1f", ev->value);
	else if (strcmp(unit, "units") == 0)
		wake_sb_printf(&sb, "%.2f", ev->value);
	else
		wake_sb_printf(&sb, "%g", ev->value);
	wake_sb_token(&sb, unit);
	return (int)sb.len;
}

void
wake_json_str_or_null(cJSON *o, const char *name, const char *s)
{
	if (s != NULL && s[0] != '\0')
		cJSON_AddStringToObject(o, name, s);
	else
		cJSON_AddNullToObject(o, name);
}

void
wake_json_time_or_null(cJSON *o, const char *name, int64_t ms)
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
    const char *id, struct wake_tally *held, const struct wake_config *cfg)
{
	char head[WAKE_LINE_SIZE], tail[WAKE_LINE_SIZE], what[128];
	char hh[128], cmd[64], note[WAKE_LINE_SIZE], evid[WAKE_LINE_SIZE];
	char ent[WAKE_ENTITY_MAX + 1];
	struct sb h, t, line, hs;
	const struct wake_tally_fp *const *l = NULL;
	size_t limit, fixed, room, n = 0, k = 0, note_need, evid_need;
	size_t note_cap, evid_cap, used, nl, el, list0, troom, entl;
	const char *guess = wake_str(ev->guess), *conf = wake_str(ev->confidence);
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
		wake_sb_token(&h, guess);
		if (conf[0] != '\0') {
			wake_sb_puts(&h, "/");
			wake_sb_token(&h, conf);
		}
	}

	wake_sb_init(&t, tail, sizeof(tail));
	wake_sb_puts(&t, " fp=");
	wake_sb_token(&t, ev->id[0] != '\0' ? ev->id : "-");
	wake_sb_printf(&t, " " TIMES "%" PRIu64, ev->count);
	if (wake_str(ev->status)[0] != '\0') {
		wake_sb_puts(&t, " status=");
		wake_sb_token(&t, ev->status);
	}
	if (wake_str(ev->phase)[0] != '\0') {
		wake_sb_puts(&t, " phase=");
		wake_sb_token(&t, ev->phase);
	}
	if (wake_str(ev->build)[0] != '\0') {
		wake_sb_puts(&t, " build=");
		wake_sb_token(&t, ev->build);
	}
	/* seed §6.4: a software renderer's frame time is not a GPU's; the
	 * line says so where the agent reads it, not only in the record */
	if (strcmp(wake_str(ev->regime), "software") == 0)
		wake_sb_puts(&t, " regime=software(timings-untrusted)");
	if (wake_str(id)[0] != '\0') {
		wake_sb_puts(&t, " id=");
		wake_sb_token(&t, id);
	}
	if (loop != NULL && loop[0] != '\0' && strcmp(loop, "off") != 0) {
		wake_sb_puts(&t, " loop=");
		wake_sb_token(&t, loop);
	}

	wake_sb_init(&hs, hh, sizeof(hh));
	if (held != NULL && wake_tally_count(held) > 0) {
		wake_sb_printf(&hs, " +%" PRIu64 " more since ",
		    wake_tally_count(held));
		wake_sb_clock(&hs, wake_tally_since(held), 0);
		n = wake_tally_list(held, &l);
	}
	cmd[0] = '\0';
	if (ev->id[0] != '\0')
		snprintf(cmd, sizeof(cmd), ARROW "sloptimize issues --fp %s",
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

cJSON *
wake_json(const struct ledger_event *ev, const char *id, const char *line,
    struct wake_tally *held)
{
	cJSON *o, *r;

	if ((o = cJSON_CreateObject()) == NULL)
		return NULL;
	cJSON_AddStringToObject(o, "type", "wake");
	wake_json_str_or_null(o, "id", id);
	cJSON_AddStringToObject(o, "line", wake_str(line));
	if ((r = cJSON_AddObjectToObject(o, "record")) == NULL)
		goto fail;
	wake_json_str_or_null(r, "type", ev->type);
	wake_json_time_or_null(r, "at", ev->at_ms);
	if (ev->has_value && isfinite(ev->value))
		cJSON_AddNumberToObject(r, "value", ev->value);
	else
		cJSON_AddNullToObject(r, "value");
	wake_json_str_or_null(r, "unit", ev->unit);
	wake_json_str_or_null(r, "fp", ev->id);
	wake_json_str_or_null(r, "key", ev->key);
	cJSON_AddNumberToObject(r, "count", (double)ev->count);
	wake_json_str_or_null(r, "status", ev->status);
	wake_json_str_or_null(r, "phase", ev->phase);
	wake_json_str_or_null(r, "build", ev->build);
	wake_json_str_or_null(r, "guess", ev->guess);
	wake_json_str_or_null(r, "confidence", ev->confidence);
	wake_json_str_or_null(r, "evidence", ev->evidence);
	wake_json_str_or_null(r, "note", ev->note);
	wake_json_str_or_null(r, "regime", ev->regime);
	wake_json_str_or_null(r, "entity", ev->entity);
	if (wake_tally_json(held, o) < 0)
		goto fail;
	/* An Add that failed to allocate left its member out. */
	if (cJSON_GetArraySize(r) != 16 || cJSON_GetArraySize(o) != 8)
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
