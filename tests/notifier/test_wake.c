/*
 * test_wake — notifier/wake and notifier/wake_tally: the meaningful rule,
 * the wake line (note, held-back footprints, the command), its JSON, the
 * tally, the rate limits and what skips them (synthetic times),
 * regressions, and the summary lines.
 * Times print in local time; main() pins TZ=UTC so the strings are exact.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "notifier/wake_tally.h"

/* What a line says of the tally t: the view wake_format takes. */
static const struct wake_held *
said(struct wake_tally *t, struct wake_held *hv)
{
	wake_tally_held(t, hv);
	return hv;
}

/* 2026-11-29T11:02:03Z */
#define T0	INT64_C(1795950123000)

static struct ledger_event
ev_hitch(void)
{
	struct ledger_event ev;

	memset(&ev, 0, sizeof(ev));
	ev.type = "hitch";
	ev.at_ms = T0;
	ev.incident = 1;
	ev.counted = 1;
	ev.value = 141.2;
	ev.has_value = 1;
	ev.unit = "ms";
	strcpy(ev.id, "81e5eb9b");
	ev.key = "hitch|play|shader-compile|mat_hull@ship_1|ctx:";
	ev.phase = "play";
	ev.build = "v1788";
	ev.guess = "shader-compile";
	ev.confidence = "medium";
	ev.evidence = "programs +3 in the hitch frame";
	ev.count = 7;
	ev.status = "regressed";
	return ev;
}

static struct ledger_event
ev_of(const char *type, const char *fp, int64_t at)
{
	struct ledger_event ev = ev_hitch();

	ev.type = type;
	strcpy(ev.id, fp);
	ev.at_ms = at;
	return ev;
}

/* Valid UTF-8 with no control characters. */
static int
clean_utf8(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	int k;

	while (*p != '\0') {
		if (*p < 0x20 || *p == 0x7f)
			return 0;
		if (*p < 0x80) {
			p++;
			continue;
		}
		k = *p >= 0xf0 ? 3 : *p >= 0xe0 ? 2 : *p >= 0xc2 ? 1 : -1;
		if (k < 0)
			return 0;
		for (p++; k > 0; k--, p++)
			if ((*p & 0xc0) != 0x80)
				return 0;
	}
	return 1;
}

/* --- the rule ------------------------------------------------------------ */

static void
notifier_meaningful_rule(void **state)
{
	static const struct {
		const char *type;
		double value;
		int has_value, automated, incident, counted;
		int want;
	} t[] = {
		{ "hitch", 100.0, 1, 0, 1, 1, 1 },	/* at the threshold */
		{ "hitch", 99.99, 1, 0, 1, 1, 0 },	/* just under */
		{ "hitch", 141.2, 1, 0, 1, 1, 1 },
		{ "hitch", 0, 0, 0, 1, 1, 0 },		/* no frameMs */
		{ "hitch", 500, 1, 1, 1, 1, 0 },	/* automated */
		{ "hitch", 500, 1, 0, 0, 1, 0 },	/* not an incident */
		{ "hitch", 500, 1, 0, 1, 0, 0 },	/* filtered out */
		{ "usermark", 5, 1, 0, 1, 1, 1 },	/* any usermark */
		{ "usermark", 0, 0, 0, 1, 1, 1 },
		{ "usermark", 5, 1, 1, 1, 1, 0 },
		{ "jitter", 0.01, 1, 0, 1, 1, 1 },	/* any jitter */
		{ "jitter", 0.01, 1, 1, 1, 1, 0 },
		{ "jitter", 0.01, 1, 0, 0, 1, 0 },
		{ "heartbeat", 500, 1, 0, 0, 1, 0 },
		{ "custom", 500, 1, 0, 1, 1, 0 },	/* other incidents */
	};
	struct wake_config cfg;
	struct ledger_event ev;
	size_t i;

	(void)state;
	wake_config_defaults(&cfg);
	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		ev = ev_hitch();
		ev.type = t[i].type;
		ev.value = t[i].value;
		ev.has_value = t[i].has_value;
		ev.automated = t[i].automated;
		ev.incident = t[i].incident;
		ev.counted = t[i].counted;
		if (wake_is_meaningful(&ev, &cfg) != t[i].want)
			fail_msg("row %zu: %s %g", i, t[i].type, t[i].value);
	}
	cfg.hitch_ms = 150;
	ev = ev_hitch();
	assert_int_equal(wake_is_meaningful(&ev, &cfg), 0);
	ev.value = 150;
	assert_int_equal(wake_is_meaningful(&ev, &cfg), 1);
	assert_int_equal(wake_is_meaningful(NULL, &cfg), 0);
}

static void
notifier_config_defaults(void **state)
{
	struct wake_config cfg;

	(void)state;
	wake_config_defaults(&cfg);
	assert_true(cfg.hitch_ms == 100);
	assert_int_equal(cfg.per_fp_ms, 10000);
	assert_int_equal(cfg.global_max, 6);
	assert_int_equal(cfg.global_window_ms, 60000);
	assert_int_equal(cfg.recent_ms, 600000);
	assert_int_equal(cfg.exec_max, 4);
	assert_null(cfg.loop);
}

static void
notifier_id_format(void **state)
{
	char id[WAKE_ID_SIZE];

	(void)state;
	wake_id_format(id, 3, 1048576);
	assert_string_equal(id, "3:1048576");
	wake_id_format(id, UINT64_MAX, UINT64_MAX);
	assert_string_equal(id,
	    "18446744073709551615:18446744073709551615");
}

/* --- the line ------------------------------------------------------------ */

#define CMD(fp)	" \xe2\x86\x92 sloptimize issues --fp " fp

/* A tally of `n` records of footprint fp (type, value, status), ids from
 * off0 on, times from T0 + t. */
static void
tally_n(struct wake_tally *t, const char *type, const char *fp, double value,
    const char *status, int n, uint64_t off0, int64_t t0)
{
	struct ledger_event ev;
	int i;

	for (i = 0; i < n; i++) {
		ev = ev_of(type, fp, T0 + t0 + i * 1000);
		ev.value = value;
		ev.status = status;
		if (strcmp(type, "jitter") == 0) {
			ev.unit = "units";
			ev.guess = "snap";
		}
		assert_int_equal(wake_tally_add(t, &ev, 3, off0 + (uint64_t)i,
		    T0), 0);
	}
}

static void
notifier_line_hitch(void **state)
{
	struct ledger_event ev = ev_hitch();
	char line[WAKE_LINE_SIZE];
	int n;

	(void)state;
	n = wake_format(line, sizeof(line), &ev, "3:1048576", NULL, NULL);
	assert_string_equal(line, "sloptimize hitch 141.2ms "
	    "shader-compile/medium \"programs +3 in the hitch frame\" "
	    "fp=81e5eb9b ×7 status=regressed phase=play build=v1788 "
	    "id=3:1048576" CMD("81e5eb9b"));
	assert_int_equal(n, (int)strlen(line));
}

/* The player's own words are in the line, before the evidence. */
static void
notifier_line_usermark_note(void **state)
{
	struct ledger_event ev = ev_hitch();
	char line[WAKE_LINE_SIZE];

	(void)state;
	ev.type = "usermark";
	ev.value = 61;
	strcpy(ev.id, "68faa5c5");
	ev.guess = "texture-upload";
	ev.evidence = "3 textures uploaded";
	ev.note = "stutters \"here\"\nwhen I turn";
	ev.count = 2;
	ev.status = "open";
	ev.phase = "match";
	ev.build = "";
	wake_format(line, sizeof(line), &ev, "1:220", NULL, NULL);
	assert_string_equal(line, "sloptimize usermark worst 61.0ms "
	    "texture-upload/medium note=\"stutters \\\"here\\\" when I turn\" "
	    "\"3 textures uploaded\" fp=68faa5c5 ×2 status=open phase=match "
	    "id=1:220" CMD("68faa5c5"));
	ev.note = "";
	wake_format(line, sizeof(line), &ev, "1:220", NULL, NULL);
	assert_null(strstr(line, "note="));
}

static void
notifier_line_jitter(void **state)
{
	struct ledger_event ev = ev_hitch();
	char line[WAKE_LINE_SIZE];

	(void)state;
	ev.type = "jitter";
	ev.value = 0.6666;
	ev.unit = "units";
	strcpy(ev.id, "d423dcef");
	ev.guess = "snap";
	ev.confidence = "high";
	ev.evidence = "unit jumped 0.67 along x";
	ev.count = 12;
	ev.status = "fixed";
	ev.phase = "";
	ev.build = "";
	wake_format(line, sizeof(line), &ev, "2:0", NULL, NULL);
	assert_string_equal(line, "sloptimize jitter 0.67units snap/high "
	    "\"unit jumped 0.67 along x\" fp=d423dcef ×12 status=fixed "
	    "id=2:0" CMD("d423dcef"));
}

/*
 * What the limiter held rides on the next line: how many, since when, and
 * which footprints with the worst value, verdict and status of each —
 * most severe first (a regression before a bigger open one).
 */
static void
notifier_line_names_what_was_held(void **state)
{
	struct ledger_event ev = ev_hitch();
	struct wake_config cfg;
	struct wake_tally *held = wake_tally_create();
	struct wake_held hv;
	char line[WAKE_LINE_SIZE];

	(void)state;
	wake_config_defaults(&cfg);
	cfg.loop = "propose";
	ev.guess = "";
	ev.confidence = "";
	ev.evidence = "";
	ev.build = "v 17";			/* a space in a token */
	tally_n(held, "hitch", "16a7255f", 240, "open", 5, 10, 0);
	tally_n(held, "hitch", "81e5eb9b", 164, "regressed", 7, 20, 100);
	wake_format(line, sizeof(line), &ev, "3:99", said(held, &hv), &cfg);
	assert_string_equal(line, "sloptimize hitch 141.2ms unclassified "
	    "fp=81e5eb9b ×7 status=regressed phase=play build=v_17 id=3:99 "
	    "loop=propose +12 more since 11:02:03: 81e5eb9b ×7 164ms "
	    "shader-compile regressed, 16a7255f ×5 240ms shader-compile open"
	    CMD("81e5eb9b"));
	cfg.loop = "off";
	wake_tally_reset(held);
	ev.guess = "long-script";
	wake_format(line, sizeof(line), &ev, "3:9", said(held, &hv), &cfg);
	assert_string_equal(line, "sloptimize hitch 141.2ms long-script "
	    "fp=81e5eb9b ×7 status=regressed phase=play build=v_17 id=3:9"
	    CMD("81e5eb9b"));
	wake_tally_destroy(held);
}

static void
notifier_line_escapes_evidence(void **state)
{
	struct ledger_event ev = ev_hitch();
	char line[WAKE_LINE_SIZE];

	(void)state;
	ev.evidence = "say \"hi\"\nnext\\line\x01\r\n\tend\xe2\x80\xa8" "x";
	wake_format(line, sizeof(line), &ev, "3:1", NULL, NULL);
	assert_string_equal(line, "sloptimize hitch 141.2ms "
	    "shader-compile/medium \"say \\\"hi\\\" next\\\\line end x\" "
	    "fp=81e5eb9b ×7 status=regressed phase=play build=v1788 "
	    "id=3:1" CMD("81e5eb9b"));
	assert_true(clean_utf8(line));
	/* the same for tokens: a newline in a guess cannot split the line */
	ev.guess = "a\nb";
	wake_format(line, sizeof(line), &ev, "3:1", NULL, NULL);
	assert_non_null(strstr(line, " a_b/medium "));
	assert_true(clean_utf8(line));
}

static void
notifier_line_cut_at_500(void **state)
{
	struct ledger_event ev = ev_hitch();
	struct wake_tally *held = wake_tally_create();
	struct wake_held hv;
	char evidence[4096], line[WAKE_LINE_SIZE], small[64], fp[9];
	const char *tail, *p;
	size_t i, n = 0;
	int len;

	(void)state;
	/* 2-, 3- and 4-byte characters, so every cut position is tried */
	for (i = 0; n + 9 < sizeof(evidence) - 1; i++) {
		memcpy(evidence + n, "é漢😀", 9);
		n += 9;
	}
	evidence[n] = '\0';
	ev.evidence = evidence;
	tally_n(held, "hitch", "aaaaaaaa", 120, "open", 4, 1, 0);
	len = wake_format(line, sizeof(line), &ev, "3:1048576",
	    said(held, &hv), NULL);
	assert_int_equal(len, (int)strlen(line));
	assert_true(len <= WAKE_LINE_MAX);
	assert_true(len > WAKE_LINE_MAX - 4);	/* it used the room */
	assert_true(clean_utf8(line));
	/* the evidence was shortened, not the fp, id, held list or command */
	tail = "…\" fp=81e5eb9b ×7 status=regressed phase=play build=v1788 "
	    "id=3:1048576 +4 more since 11:02:03: aaaaaaaa ×4 120ms "
	    "shader-compile open" CMD("81e5eb9b");
	assert_true(strlen(line) > strlen(tail));
	assert_string_equal(line + strlen(line) - strlen(tail), tail);

	/* forty held footprints: as many as fit, most severe first, then
	 * how many more; a note and the evidence still get their share */
	wake_tally_reset(held);
	for (i = 0; i < 40; i++) {
		snprintf(fp, sizeof(fp), "%08zx", i);
		tally_n(held, "hitch", fp, 100 + (double)i, "open", 1, 100 + i,
		    (int64_t)i);
	}
	ev.note = evidence;
	len = wake_format(line, sizeof(line), &ev, "3:1048576",
	    said(held, &hv), NULL);
	assert_true(len <= WAKE_LINE_MAX);
	assert_true(clean_utf8(line));
	assert_non_null(strstr(line, " note=\""));
	assert_non_null(p = strstr(line, " +40 more since 11:02:03: 00000027 "
	    "×1 139ms"));			/* the worst first */
	assert_non_null(strstr(p, " more footprints" CMD("81e5eb9b")));
	/* the note kept at least half its share */
	p = strstr(line, " note=\"");
	assert_true(strstr(p, "\" \"") - p > WAKE_NOTE_SHARE / 2);

	/* a short buffer cuts at a boundary too */
	len = wake_format(small, sizeof(small), &ev, "3:1", NULL, NULL);
	assert_true(len <= (int)sizeof(small) - 1);
	assert_true(clean_utf8(small));

	/* tokens alone too long: the line itself is cut, still valid */
	ev.build = evidence;
	len = wake_format(line, sizeof(line), &ev, "3:1", NULL, NULL);
	assert_true(len <= WAKE_LINE_MAX);
	assert_true(clean_utf8(line));
	assert_null(strstr(line, "\""));	/* no room left for evidence */
	wake_tally_destroy(held);
}

static void
notifier_line_json(void **state)
{
	struct ledger_event ev = ev_hitch();
	struct wake_tally *held = wake_tally_create();
	struct wake_held hv;
	char line[WAKE_LINE_SIZE], *s;
	cJSON *o;

	(void)state;
	ev.build = "";
	ev.note = "felt it";
	tally_n(held, "jitter", "d423dcef", 0.5, "open", 2, 40, 0);
	wake_format(line, sizeof(line), &ev, "3:77", said(held, &hv), NULL);
	o = wake_json(&ev, "3:77", line, said(held, &hv));
	assert_non_null(o);
	s = cJSON_PrintUnformatted(o);
	assert_string_equal(s, "{\"type\":\"wake\",\"id\":\"3:77\","
	    "\"line\":\"sloptimize hitch 141.2ms shader-compile/medium "
	    "note=\\\"felt it\\\" \\\"programs +3 in the hitch frame\\\" "
	    "fp=81e5eb9b ×7 status=regressed phase=play id=3:77 +2 more "
	    "since 11:02:03: d423dcef ×2 0.50units snap open \xe2\x86\x92 "
	    "sloptimize issues --fp 81e5eb9b\","
	    "\"record\":{\"type\":\"hitch\",\"at\":\"2026-11-29T11:02:03.000Z\","
	    "\"value\":141.2,\"unit\":\"ms\",\"fp\":\"81e5eb9b\",\"key\":"
	    "\"hitch|play|shader-compile|mat_hull@ship_1|ctx:\",\"count\":7,"
	    "\"status\":\"regressed\",\"phase\":\"play\",\"build\":null,"
	    "\"guess\":\"shader-compile\",\"confidence\":\"medium\","
	    "\"evidence\":\"programs +3 in the hitch frame\","
	    "\"note\":\"felt it\",\"regime\":null,\"entity\":null},\"held\":2,"
	    "\"heldSince\":\"2026-11-29T11:02:03.000Z\",\"heldFrom\":\"3:40\","
	    "\"heldBy\":[{\"fp\":\"d423dcef\",\"type\":\"jitter\",\"count\":2,"
	    "\"worst\":0.5,\"unit\":\"units\",\"guess\":\"snap\","
	    "\"status\":\"open\"}]}");
	free(s);
	cJSON_Delete(o);
	wake_tally_destroy(held);
}

/* An evidence and a note each longer than any line (big, n bytes). */
static void
long_texts(struct ledger_event *ev, char *big, size_t n)
{
	memset(big, 'x', n - 1);
	big[n - 1] = '\0';
	ev->evidence = big;
	ev->note = big;
}

/*
 * A hitch timed on a software renderer says so in its line (seed §6.4),
 * among the tokens that are never shortened, and in its JSON; a GPU's or
 * an unknown regime adds nothing.  A long evidence and note still leave
 * the line within WAKE_LINE_MAX.
 */
static void
notifier_line_says_software(void **state)
{
	struct ledger_event ev = ev_hitch();
	char line[WAKE_LINE_SIZE], big[2000];
	cJSON *o;

	(void)state;
	ev.regime = "software";
	wake_format(line, sizeof(line), &ev, "3:5", NULL, NULL);
	assert_string_equal(line, "sloptimize hitch 141.2ms "
	    "shader-compile/medium \"programs +3 in the hitch frame\" "
	    "fp=81e5eb9b ×7 status=regressed phase=play build=v1788 "
	    "regime=software(timings-untrusted) id=3:5" CMD("81e5eb9b"));
	o = wake_json(&ev, "3:5", line, NULL);
	assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(
	    cJSON_GetObjectItem(o, "record"), "regime")), "software");
	cJSON_Delete(o);
	long_texts(&ev, big, sizeof(big));
	assert_true(wake_format(line, sizeof(line), &ev, "3:5", NULL, NULL) <=
	    WAKE_LINE_MAX);
	assert_non_null(strstr(line, " regime=software(timings-untrusted) "));
	ev.evidence = "programs +3 in the hitch frame";
	ev.note = "";
	ev.regime = "hardware";
	wake_format(line, sizeof(line), &ev, "3:5", NULL, NULL);
	assert_null(strstr(line, "regime="));
	ev.regime = "unknown";
	wake_format(line, sizeof(line), &ev, "3:5", NULL, NULL);
	assert_null(strstr(line, "regime="));
}

/*
 * The entity an incident names, and the line that built it (issue 19),
 * after the evidence and before the footprint, quoted; in the JSON as
 * `entity`.  A long evidence and note do not push it out; a line whose
 * fixed tokens leave no room for it leaves it out whole rather than a
 * stub; a quote in an id is escaped.
 */
static void
notifier_line_names_the_entity(void **state)
{
	struct ledger_event ev = ev_hitch();
	char line[WAKE_LINE_SIZE], big[2000], build[400];
	cJSON *o;

	(void)state;
	ev.guess = "spawn-burst";
	ev.entity = "enemy_17 (src/spawn.js:88) +2 more";
	wake_format(line, sizeof(line), &ev, "3:5", NULL, NULL);
	assert_string_equal(line, "sloptimize hitch 141.2ms "
	    "spawn-burst/medium \"programs +3 in the hitch frame\" "
	    "entity=\"enemy_17 (src/spawn.js:88) +2 more\" "
	    "fp=81e5eb9b ×7 status=regressed phase=play build=v1788 "
	    "id=3:5" CMD("81e5eb9b"));
	o = wake_json(&ev, "3:5", line, NULL);
	assert_non_null(o);
	assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(
	    cJSON_GetObjectItem(o, "record"), "entity")),
	    "enemy_17 (src/spawn.js:88) +2 more");
	cJSON_Delete(o);
	long_texts(&ev, big, sizeof(big));
	assert_true(wake_format(line, sizeof(line), &ev, "3:5", NULL, NULL) <=
	    WAKE_LINE_MAX);
	assert_non_null(strstr(line, " entity=\"enemy_17 (src/spawn.js:88) "
	    "+2 more\" fp=81e5eb9b "));
	/* a build name that takes nearly all the line: no entity stub */
	memset(build, 'b', sizeof(build) - 1);
	build[sizeof(build) - 1] = '\0';
	ev.build = build;
	assert_true(wake_format(line, sizeof(line), &ev, "3:5", NULL, NULL) <=
	    WAKE_LINE_MAX);
	assert_null(strstr(line, "entity="));
	ev.build = "v1788";
	ev.evidence = "e";
	ev.note = "";
	ev.entity = "bad\"id (src/a.js:1)";
	wake_format(line, sizeof(line), &ev, "3:5", NULL, NULL);
	assert_non_null(strstr(line, " entity=\"bad\\\"id (src/a.js:1)\" "));
	ev.entity = "";
	wake_format(line, sizeof(line), &ev, "3:5", NULL, NULL);
	assert_null(strstr(line, "entity="));
}

/* --- the tally ----------------------------------------------------------- */

static void
notifier_tally_merge_and_order(void **state)
{
	struct wake_tally *a = wake_tally_create(), *b = wake_tally_create();
	const struct wake_held_fp *const *l;
	uint64_t fg, fo, lg, lo;
	int64_t first, last;
	size_t n;

	(void)state;
	assert_int_equal(wake_tally_list(a, &l), 0);
	tally_n(a, "hitch", "aaaaaaaa", 120, "open", 3, 50, 5000);
	tally_n(b, "hitch", "aaaaaaaa", 300, "fixed", 1, 10, 0);
	tally_n(b, "jitter", "bbbbbbbb", 0.3, "open", 1, 70, 9000);
	tally_n(b, "hitch", "cccccccc", 110, "regressed", 1, 80, 9500);
	assert_int_equal(wake_tally_merge(a, b), 0);
	assert_int_equal(wake_tally_count(b), 0);
	assert_int_equal(wake_tally_count(a), 6);
	n = wake_tally_list(a, &l);
	assert_int_equal(n, 3);
	/* regressed first; then aaaaaaaa (worst 300 of 4) over the jitter */
	assert_string_equal(l[0]->fp, "cccccccc");
	assert_string_equal(l[1]->fp, "aaaaaaaa");
	assert_int_equal(l[1]->count, 4);
	assert_true(l[1]->worst == 300);
	/* the newest record's status wins (id 3:52 over 3:10) */
	assert_string_equal(l[1]->status, "open");
	assert_string_equal(l[2]->fp, "bbbbbbbb");
	wake_tally_ids(a, &fg, &fo, &lg, &lo);
	assert_int_equal(fo, 10);
	assert_int_equal(lo, 80);
	assert_true(wake_tally_since(a) == T0);		/* of the lowest id */
	wake_tally_span(a, &first, &last);
	assert_true(first == T0 && last == T0 + 9500);
	wake_tally_destroy(a);
	wake_tally_destroy(b);
	wake_tally_destroy(NULL);
}

/* --- rate limits --------------------------------------------------------- */

static struct wake_limiter *
limiter(int64_t per_fp_ms, unsigned global_max, int64_t window_ms)
{
	struct wake_config cfg;
	struct wake_limiter *wl;

	wake_config_defaults(&cfg);
	cfg.per_fp_ms = per_fp_ms;
	cfg.global_max = global_max;
	cfg.global_window_ms = window_ms;
	wl = wake_limiter_create(&cfg);
	assert_non_null(wl);
	return wl;
}

static uint64_t next_off;

/* Admit a repeat of fp at T0 + t (its `at` too): admit's answer.  What
 * was held before a 1 is in *held, then forgotten, as the notifier does. */
static int
admit_why(struct wake_limiter *wl, const char *type, const char *fp,
    int64_t t, enum wake_why why, uint64_t *held)
{
	struct ledger_event ev = ev_of(type, fp, T0 + t);
	int rc = wake_limiter_admit(wl, &ev, why, 3, next_off++, T0 + t);

	if (held != NULL)
		*held = wake_tally_count(wake_limiter_held(wl));
	if (rc == 1)
		wake_tally_reset(wake_limiter_held(wl));
	return rc;
}

static int
admit(struct wake_limiter *wl, const char *fp, int64_t t, uint64_t *held)
{
	return admit_why(wl, "hitch", fp, t, WAKE_REPEAT, held);
}

static void
notifier_limit_per_fp(void **state)
{
	struct wake_limiter *wl = limiter(10000, 0, 0);
	struct wake_limiter_stats st;
	uint64_t h;

	(void)state;
	assert_int_equal(admit(wl, "aaaaaaaa", 0, &h), 1);
	assert_int_equal(h, 0);
	assert_int_equal(admit(wl, "aaaaaaaa", 1000, &h), 0);
	assert_int_equal(admit(wl, "aaaaaaaa", 9999, &h), 0);
	assert_true(wake_tally_since(wake_limiter_held(wl)) == T0 + 1000);
	/* another footprint is not held by A's window, and its line says
	 * what A's window held */
	assert_int_equal(admit(wl, "bbbbbbbb", 10000 - 2, &h), 1);
	assert_int_equal(h, 2);
	/* A's window reopens exactly per_fp_ms after its last line */
	assert_int_equal(admit(wl, "aaaaaaaa", 10000, &h), 1);
	assert_int_equal(h, 0);
	assert_int_equal(admit(wl, "aaaaaaaa", 19999, &h), 0);
	assert_int_equal(admit(wl, "aaaaaaaa", 20000, &h), 1);
	assert_int_equal(h, 1);
	wake_limiter_stats(wl, &st);
	assert_int_equal(st.sent, 4);
	assert_int_equal(st.held, 3);
	assert_int_equal(st.pending, 0);
	wake_limiter_destroy(wl);
}

static void
notifier_limit_global(void **state)
{
	struct wake_limiter *wl = limiter(0, 3, 60000);
	uint64_t h;
	char fp[9];
	int i;

	(void)state;
	for (i = 0; i < 3; i++) {
		snprintf(fp, sizeof(fp), "%08x", (unsigned)i);
		assert_int_equal(admit(wl, fp, i * 1000, &h), 1);
	}
	for (i = 3; i < 8; i++) {
		snprintf(fp, sizeof(fp), "%08x", (unsigned)i);
		assert_int_equal(admit(wl, fp, i * 1000, &h), 0);
	}
	/* sliding: the first slot frees 60 s after the first line */
	assert_int_equal(admit(wl, "00000009", 59999, &h), 0);
	assert_int_equal(admit(wl, "00000009", 60000, &h), 1);
	assert_int_equal(h, 6);
	/* the window is full again (lines at 1 s, 2 s, 60 s) */
	assert_int_equal(admit(wl, "0000000a", 60500, &h), 0);
	assert_int_equal(admit(wl, "0000000a", 61000, &h), 1);
	assert_int_equal(h, 1);
	wake_limiter_destroy(wl);
}

/*
 * The limits are for repeats: a usermark and the first line of a
 * regression always go out, inside a footprint's window and with the
 * global window full; a new footprint too, until twice the global limit
 * is spent in the window.  They count against the window.
 */
static void
notifier_limit_skips_for_what_matters(void **state)
{
	struct wake_limiter *wl = limiter(10000, 2, 60000);
	uint64_t h;
	char fp[9];
	int i;

	(void)state;
	assert_int_equal(admit(wl, "aaaaaaaa", 0, &h), 1);
	assert_int_equal(admit(wl, "bbbbbbbb", 100, &h), 1);
	assert_int_equal(admit(wl, "cccccccc", 200, &h), 0);	/* full */
	assert_int_equal(admit_why(wl, "usermark", "aaaaaaaa", 300,
	    WAKE_USERMARK, &h), 1);
	assert_int_equal(h, 1);			/* and it says the held one */
	assert_int_equal(admit_why(wl, "hitch", "aaaaaaaa", 400,
	    WAKE_REGRESSED, &h), 1);
	/* new footprints: past the soft limit (2), up to the hard cap (4) */
	assert_int_equal(admit_why(wl, "hitch", "dddddddd", 500, WAKE_NEW,
	    &h), 0);			/* 4 lines in the window already */
	wake_limiter_destroy(wl);

	wl = limiter(10000, 2, 60000);
	for (i = 0; i < 4; i++) {
		snprintf(fp, sizeof(fp), "%08x", (unsigned)i);
		assert_int_equal(admit_why(wl, "hitch", fp, i, WAKE_NEW, &h),
		    1);
	}
	assert_int_equal(admit_why(wl, "hitch", "00000009", 10, WAKE_NEW, &h),
	    0);
	/* a usermark is never held, cap or not */
	for (i = 0; i < 20; i++)
		assert_int_equal(admit_why(wl, "usermark", "eeeeeeee", 20 + i,
		    WAKE_USERMARK, NULL), 1);
	/* a repeat of a footprint just said is held by its own window */
	assert_int_equal(admit(wl, "00000000", 5000, &h), 0);
	wake_limiter_destroy(wl);
}

static void
notifier_limit_zero_is_off(void **state)
{
	struct wake_limiter *wl;
	uint64_t h;
	int i;

	(void)state;
	/* per_fp 0: the same footprint every millisecond */
	wl = limiter(0, 0, 60000);
	for (i = 0; i < 1000; i++)
		assert_int_equal(admit(wl, "aaaaaaaa", i, &h), 1);
	wake_limiter_destroy(wl);
	/* global_max 0 */
	wl = limiter(0, 0, 60000);
	for (i = 0; i < 100; i++)
		assert_int_equal(admit(wl, "aaaaaaaa", 0, &h), 1);
	wake_limiter_destroy(wl);
	/* global window 0 */
	wl = limiter(0, 6, 0);
	for (i = 0; i < 100; i++)
		assert_int_equal(admit(wl, "aaaaaaaa", 0, &h), 1);
	assert_true(wake_limiter_flush_at(wl, T0) == WAKE_NEVER);
	wake_limiter_destroy(wl);
}

static void
notifier_limit_flush_at(void **state)
{
	struct wake_limiter *wl = limiter(10000, 6, 60000);
	uint64_t h;
	int i;

	(void)state;
	assert_true(wake_limiter_flush_at(wl, T0) == WAKE_NEVER);
	assert_int_equal(admit(wl, "aaaaaaaa", 0, &h), 1);
	for (i = 1; i <= 3; i++)
		assert_int_equal(admit(wl, "aaaaaaaa", i * 1000, &h), 0);
	/* nothing new comes: the summary is due when A's window reopens */
	assert_true(wake_limiter_flush_at(wl, T0 + 5000) == T0 + 10000);
	wake_tally_reset(wake_limiter_held(wl));	/* it was said */
	assert_true(wake_limiter_flush_at(wl, T0 + 5000) == WAKE_NEVER);
	wake_limiter_destroy(wl);

	/* held by the global window: due when its oldest line leaves; a
	 * summary counts against the window */
	wl = limiter(0, 2, 60000);
	assert_int_equal(admit(wl, "aaaaaaaa", 0, &h), 1);
	assert_int_equal(admit(wl, "bbbbbbbb", 5000, &h), 1);
	assert_int_equal(admit(wl, "cccccccc", 6000, &h), 0);
	assert_true(wake_limiter_flush_at(wl, T0 + 6000) == T0 + 60000);
	wake_tally_reset(wake_limiter_held(wl));
	wake_limiter_sent(wl, T0 + 60000);
	assert_int_equal(admit(wl, "dddddddd", 64999, &h), 0);
	assert_int_equal(admit(wl, "dddddddd", 65000, &h), 1);
	assert_int_equal(h, 1);
	wake_limiter_destroy(wl);
}

static void
notifier_limit_clock_steps_back(void **state)
{
	struct wake_limiter *wl = limiter(10000, 0, 0);
	uint64_t h;

	(void)state;
	assert_int_equal(admit(wl, "aaaaaaaa", 50000, &h), 1);
	/* an hour back: the limiter stands still rather than lock up */
	assert_int_equal(admit(wl, "aaaaaaaa", 50000 - 3600000, &h), 0);
	assert_int_equal(admit(wl, "aaaaaaaa", 60000, &h), 1);
	assert_int_equal(h, 1);
	wake_limiter_destroy(wl);
}

static void
notifier_limit_many_footprints(void **state)
{
	struct wake_limiter *wl = limiter(10000, 0, 0);
	uint64_t h;
	char fp[9];
	int i;

	(void)state;
	/* the table keeps only live windows: it is pruned as it fills */
	for (i = 0; i < 20000; i++) {
		snprintf(fp, sizeof(fp), "%08x", i);
		assert_int_equal(admit(wl, fp, (int64_t)i * 10, &h), 1);
	}
	/* one still inside its window */
	assert_int_equal(admit(wl, "00004e1f", 199990 + 1, &h), 0);
	wake_limiter_destroy(wl);
	{
		struct wake_config cfg;

		wake_config_defaults(&cfg);
		cfg.global_max = WAKE_GLOBAL_MAX_LIMIT + 1;
		assert_null(wake_limiter_create(&cfg));
	}
	wake_limiter_destroy(NULL);
}

/* --- regressions --------------------------------------------------------- */

static void
notifier_memory_regression_once(void **state)
{
	struct wake_memory *m = wake_memory_create();
	struct ledger_event ev = ev_hitch();

	(void)state;
	ev.status = "open";
	assert_int_equal(wake_memory_regression(m, &ev), 0);
	ev.status = "regressed";
	assert_int_equal(wake_memory_regression(m, &ev), 1);
	assert_int_equal(wake_memory_regression(m, &ev), 0);	/* a repeat */
	ev.status = "fixed";					/* fixed again */
	assert_int_equal(wake_memory_regression(m, &ev), 0);
	ev.status = "regressed";
	assert_int_equal(wake_memory_regression(m, &ev), 1);
	wake_memory_reset(m);
	assert_int_equal(wake_memory_regression(m, &ev), 1);
	wake_memory_destroy(m);
	wake_memory_destroy(NULL);
}

/* --- summary lines ----------------------------------------------------- */

static void
notifier_summary_held(void **state)
{
	struct wake_tally *held = wake_tally_create();
	char line[WAKE_LINE_SIZE], fp[9];
	cJSON *o;
	char *s;
	int i, len;

	(void)state;
	assert_int_equal(wake_summary_format(line, sizeof(line), NULL, NULL,
	    held, NULL), 0);
	tally_n(held, "hitch", "aaaaaaaa", 120, "open", 3, 10, 1000);
	tally_n(held, "jitter", "bbbbbbbb", 0.7, "open", 1, 20, 4000);
	len = wake_summary_format(line, sizeof(line), NULL, NULL, held, NULL);
	assert_int_equal(len, (int)strlen(line));
	assert_string_equal(line, "sloptimize held back: +4 more since "
	    "11:02:04 (hitch 3, jitter 1): aaaaaaaa ×3 120ms shader-compile "
	    "open, bbbbbbbb ×1 0.70units snap open" CMD("aaaaaaaa"));
	o = wake_summary_json("3:20", line, NULL, held);
	s = cJSON_PrintUnformatted(o);
	assert_non_null(strstr(s, "\"id\":\"3:20\""));
	assert_non_null(strstr(s, "\"record\":null,\"held\":4,\"heldSince\":"
	    "\"2026-11-29T11:02:04.000Z\",\"heldFrom\":\"3:10\",\"heldBy\":"
	    "[{\"fp\":\"aaaaaaaa\""));
	assert_non_null(strstr(s, "\"catchup\":0}"));
	free(s);
	cJSON_Delete(o);

	/* sixty footprints: never just the last one, as many as fit, the
	 * rest counted; the JSON lists every one */
	for (i = 0; i < 60; i++) {
		snprintf(fp, sizeof(fp), "f%07u", (unsigned)i % 10000000u);
		tally_n(held, "hitch", fp, 101, "open", 1, 100 + i, 5000 + i);
	}
	len = wake_summary_format(line, sizeof(line), NULL, NULL, held, NULL);
	assert_true(len <= WAKE_LINE_MAX && len > WAKE_LINE_MAX - 60);
	assert_true(clean_utf8(line));
	assert_non_null(strstr(line, " more footprints" CMD("aaaaaaaa")));
	o = wake_summary_json("3:200", line, NULL, held);
	assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(o, "heldBy")),
	    62);
	cJSON_Delete(o);
	wake_tally_destroy(held);
}

static void
notifier_catchup_split(void **state)
{
	struct wake_config cfg;
	int64_t now = T0;

	(void)state;
	wake_config_defaults(&cfg);
	assert_int_equal(wake_is_recent(now, now, &cfg), 1);
	assert_int_equal(wake_is_recent(now - 600000, now, &cfg), 1);
	assert_int_equal(wake_is_recent(now - 600001, now, &cfg), 0);
	assert_int_equal(wake_is_recent(now + 5000, now, &cfg), 1);
	assert_int_equal(wake_is_recent(LEDGER_NO_TIME, now, &cfg), 0);
	cfg.recent_ms = 0;
	assert_int_equal(wake_is_recent(now, now, &cfg), 0);
}

static void
notifier_catchup_summary(void **state)
{
	struct wake_tally *c = wake_tally_create(), *held;
	struct ledger_event ev;
	char line[WAKE_LINE_SIZE];
	/* 2026-11-29T09:12:01Z */
	const int64_t t1 = INT64_C(1795943521000);
	uint64_t off = 0;
	int i;

	(void)state;
	for (i = 0; i < 30; i++) {
		ev = ev_of("hitch", i % 5 < 2 ? "81e5eb9b" : i % 5 == 2 ?
		    "16a7255f" : "941f2650", t1 + (int64_t)i * 60000);
		ev.status = "open";
		assert_int_equal(wake_tally_add(c, &ev, 1, off++, T0), 0);
	}
	for (i = 0; i < 4; i++) {
		ev = ev_of("usermark", "68faa5c5", t1 + 100000);
		ev.status = "open";
		wake_tally_add(c, &ev, 1, off++, T0);
	}
	for (i = 0; i < 3; i++) {
		ev = ev_of("jitter", "d423dcef", LEDGER_NO_TIME);
		ev.unit = "units";
		ev.value = 0.5;
		ev.status = "open";
		wake_tally_add(c, &ev, 1, off++, T0);
	}
	ev = ev_of("hitch", "81e5eb9b", t1 + 5592000);	/* 10:45:13 */
	ev.status = "regressed";
	wake_tally_add(c, &ev, 1, off++, T0);
	ev = ev_of("hitch", "81e5eb9b", t1 - 1);		/* out of order */
	wake_tally_add(c, &ev, 1, off++, T0);
	assert_int_equal(wake_tally_count(c), 39);
	wake_summary_format(line, sizeof(line), c, "while stopped", NULL,
	    NULL);
	/* the regressed footprint first, the usermark next */
	assert_string_equal(line, "sloptimize catch-up: 39 meaningful "
	    "records while stopped (hitch 32, usermark 4, jitter 3) from "
	    "09:12:00 to 10:45:13: 81e5eb9b ×14 141ms shader-compile "
	    "regressed, 68faa5c5 ×4 141ms shader-compile open, 941f2650 ×12 "
	    "141ms shader-compile open, 16a7255f ×6 141ms shader-compile "
	    "open, d423dcef ×3 0.50units shader-compile open"
	    CMD("81e5eb9b"));

	/* with what the limiter held: one line says both, listed together */
	held = wake_tally_create();
	ev = ev_of("hitch", "16a7255f", T0);
	ev.status = "open";
	wake_tally_add(held, &ev, 1, off++, T0);
	wake_summary_format(line, sizeof(line), c, "in the replaced file",
	    held, NULL);
	assert_non_null(strstr(line, "sloptimize catch-up: 39 meaningful "
	    "records in the replaced file (hitch 32, usermark 4, jitter 3) "
	    "from 09:12:00 to 10:45:13, and +1 held back since 11:02:03: "));
	assert_non_null(strstr(line, "16a7255f ×7 "));
	wake_tally_destroy(held);
	wake_tally_destroy(c);

	/* across midnight: dates are said */
	c = wake_tally_create();
	ev = ev_of("jitter", "d423dcef", t1 - 86400000);
	ev.unit = "units";
	ev.value = 0.5;
	ev.status = "open";
	wake_tally_add(c, &ev, 1, 1, T0);
	ev.at_ms = t1;
	wake_tally_add(c, &ev, 1, 2, T0);
	wake_summary_format(line, sizeof(line), c, NULL, NULL, NULL);
	assert_string_equal(line, "sloptimize catch-up: 2 meaningful records "
	    "while stopped (jitter 2) from 2026-11-28 09:12:01 to "
	    "2026-11-29 09:12:01: d423dcef ×2 0.50units shader-compile open"
	    CMD("d423dcef"));
	wake_tally_destroy(c);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(notifier_meaningful_rule),
		cmocka_unit_test(notifier_config_defaults),
		cmocka_unit_test(notifier_id_format),
		cmocka_unit_test(notifier_line_hitch),
		cmocka_unit_test(notifier_line_usermark_note),
		cmocka_unit_test(notifier_line_jitter),
		cmocka_unit_test(notifier_line_names_what_was_held),
		cmocka_unit_test(notifier_line_escapes_evidence),
		cmocka_unit_test(notifier_line_cut_at_500),
		cmocka_unit_test(notifier_line_json),
		cmocka_unit_test(notifier_line_says_software),
		cmocka_unit_test(notifier_line_names_the_entity),
		cmocka_unit_test(notifier_tally_merge_and_order),
		cmocka_unit_test(notifier_limit_per_fp),
		cmocka_unit_test(notifier_limit_global),
		cmocka_unit_test(notifier_limit_skips_for_what_matters),
		cmocka_unit_test(notifier_limit_zero_is_off),
		cmocka_unit_test(notifier_limit_flush_at),
		cmocka_unit_test(notifier_limit_clock_steps_back),
		cmocka_unit_test(notifier_limit_many_footprints),
		cmocka_unit_test(notifier_memory_regression_once),
		cmocka_unit_test(notifier_summary_held),
		cmocka_unit_test(notifier_catchup_split),
		cmocka_unit_test(notifier_catchup_summary),
	};

	setenv("TZ", "UTC", 1);
	tzset();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
