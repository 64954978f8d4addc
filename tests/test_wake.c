/*
 * test_wake — notifier/wake: the meaningful rule, the wake line, its
 * JSON, the rate limits (synthetic times) and the catch-up summary.
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

#include "notifier/wake.h"

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
	    "id=3:1048576");
	assert_int_equal(n, (int)strlen(line));
}

static void
notifier_line_usermark(void **state)
{
	struct ledger_event ev = ev_hitch();
	char line[WAKE_LINE_SIZE];

	(void)state;
	ev.type = "usermark";
	ev.value = 61;
	strcpy(ev.id, "68faa5c5");
	ev.guess = "texture-upload";
	ev.evidence = "3 textures uploaded";
	ev.count = 2;
	ev.status = "open";
	ev.phase = "match";
	ev.build = "";
	wake_format(line, sizeof(line), &ev, "1:220", NULL, NULL);
	assert_string_equal(line, "sloptimize usermark worst 61.0ms "
	    "texture-upload/medium \"3 textures uploaded\" fp=68faa5c5 ×2 "
	    "status=open phase=match id=1:220");
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
	    "id=2:0");
}

static void
notifier_line_optional_tokens(void **state)
{
	struct ledger_event ev = ev_hitch();
	struct wake_config cfg;
	struct wake_held held = { 12, T0 };
	char line[WAKE_LINE_SIZE];

	(void)state;
	wake_config_defaults(&cfg);
	cfg.loop = "propose";
	ev.guess = "";
	ev.confidence = "";
	ev.evidence = "";
	ev.build = "v 17";			/* a space in a token */
	wake_format(line, sizeof(line), &ev, "3:9", &held, &cfg);
	assert_string_equal(line, "sloptimize hitch 141.2ms unclassified "
	    "fp=81e5eb9b ×7 status=regressed phase=play build=v_17 id=3:9 "
	    "loop=propose +12 more since 11:02:03");
	cfg.loop = "off";
	held.count = 0;
	ev.guess = "long-script";
	wake_format(line, sizeof(line), &ev, "3:9", &held, &cfg);
	assert_string_equal(line, "sloptimize hitch 141.2ms long-script "
	    "fp=81e5eb9b ×7 status=regressed phase=play build=v_17 id=3:9");
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
	    "id=3:1");
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
	struct wake_held held = { 4, T0 };
	char evidence[4096], line[WAKE_LINE_SIZE], small[64];
	size_t i, n = 0;
	const char *tail;
	int len;

	(void)state;
	/* 2-, 3- and 4-byte characters, so every cut position is tried */
	for (i = 0; n + 9 < sizeof(evidence) - 1; i++) {
		memcpy(evidence + n, "é漢😀", 9);
		n += 9;
	}
	evidence[n] = '\0';
	ev.evidence = evidence;
	len = wake_format(line, sizeof(line), &ev, "3:1048576", &held, NULL);
	assert_int_equal(len, (int)strlen(line));
	assert_true(len <= WAKE_LINE_MAX);
	assert_true(len > WAKE_LINE_MAX - 4);	/* it used the room */
	assert_true(clean_utf8(line));
	/* the evidence was shortened, not the fp, id or held count */
	tail = "…\" fp=81e5eb9b ×7 status=regressed phase=play build=v1788 "
	    "id=3:1048576 +4 more since 11:02:03";
	assert_true(strlen(line) > strlen(tail));
	assert_string_equal(line + strlen(line) - strlen(tail), tail);

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
}

static void
notifier_line_json(void **state)
{
	struct ledger_event ev = ev_hitch();
	struct wake_held held = { 2, T0 };
	char line[WAKE_LINE_SIZE], *s;
	cJSON *o;

	(void)state;
	ev.build = "";
	wake_format(line, sizeof(line), &ev, "3:77", &held, NULL);
	o = wake_json(&ev, "3:77", line, &held);
	assert_non_null(o);
	s = cJSON_PrintUnformatted(o);
	assert_string_equal(s, "{\"type\":\"wake\",\"id\":\"3:77\","
	    "\"line\":\"sloptimize hitch 141.2ms shader-compile/medium "
	    "\\\"programs +3 in the hitch frame\\\" fp=81e5eb9b ×7 "
	    "status=regressed phase=play id=3:77 +2 more since 11:02:03\","
	    "\"record\":{\"type\":\"hitch\",\"at\":\"2026-11-29T11:02:03.000Z\","
	    "\"value\":141.2,\"unit\":\"ms\",\"fp\":\"81e5eb9b\",\"key\":"
	    "\"hitch|play|shader-compile|mat_hull@ship_1|ctx:\",\"count\":7,"
	    "\"status\":\"regressed\",\"phase\":\"play\",\"build\":null,"
	    "\"guess\":\"shader-compile\",\"confidence\":\"medium\","
	    "\"evidence\":\"programs +3 in the hitch frame\"},\"held\":2,"
	    "\"heldSince\":\"2026-11-29T11:02:03.000Z\"}");
	free(s);
	cJSON_Delete(o);

	o = wake_note_json("sloptimize held back: +1 more", 1);
	s = cJSON_PrintUnformatted(o);
	assert_string_equal(s, "{\"type\":\"wake\",\"id\":null,\"line\":"
	    "\"sloptimize held back: +1 more\",\"record\":null,\"held\":1}");
	free(s);
	cJSON_Delete(o);
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

/* Admit a record of fp at T0 + t (its `at` too); returns admit's answer. */
static int
admit(struct wake_limiter *wl, const char *fp, int64_t t,
    struct wake_held *held)
{
	struct ledger_event ev = ev_of("hitch", fp, T0 + t);

	memset(held, 0xa5, sizeof(*held));
	return wake_limiter_admit(wl, &ev, T0 + t, held);
}

static void
notifier_limit_per_fp(void **state)
{
	struct wake_limiter *wl = limiter(10000, 0, 0);
	struct ledger_event ev;
	struct wake_held h;
	struct wake_limiter_stats st;
	char line[WAKE_LINE_SIZE];

	(void)state;
	assert_int_equal(admit(wl, "aaaaaaaa", 0, &h), 1);
	assert_int_equal(h.count, 0);
	assert_int_equal(admit(wl, "aaaaaaaa", 1000, &h), 0);
	assert_int_equal(admit(wl, "aaaaaaaa", 9999, &h), 0);
	/* another footprint is not held by A's window... */
	assert_int_equal(admit(wl, "bbbbbbbb", 10000 - 2, &h), 1);
	/* ...and its line says what A's window held, from A's first hold */
	assert_int_equal(h.count, 2);
	assert_true(h.since_ms == T0 + 1000);
	ev = ev_of("hitch", "bbbbbbbb", T0 + 9998);
	wake_format(line, sizeof(line), &ev, "1:2", &h, NULL);
	assert_non_null(strstr(line, " +2 more since 11:02:04"));
	/* A's window reopens exactly per_fp_ms after its last line */
	assert_int_equal(admit(wl, "aaaaaaaa", 10000, &h), 1);
	assert_int_equal(h.count, 0);
	assert_int_equal(admit(wl, "aaaaaaaa", 19999, &h), 0);
	assert_int_equal(admit(wl, "aaaaaaaa", 20000, &h), 1);
	assert_int_equal(h.count, 1);
	assert_true(h.since_ms == T0 + 19999);
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
	struct wake_held h;
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
	assert_int_equal(h.count, 6);
	assert_true(h.since_ms == T0 + 3000);
	/* the window is full again (lines at 1 s, 2 s, 60 s) */
	assert_int_equal(admit(wl, "0000000a", 60500, &h), 0);
	assert_int_equal(admit(wl, "0000000a", 61000, &h), 1);
	assert_int_equal(h.count, 1);
	wake_limiter_destroy(wl);
}

static void
notifier_limit_zero_is_off(void **state)
{
	struct wake_limiter *wl;
	struct wake_held h;
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
	assert_true(wake_limiter_flush_at(wl) == WAKE_NEVER);
	wake_limiter_destroy(wl);
}

static void
notifier_limit_flush(void **state)
{
	struct wake_limiter *wl = limiter(10000, 6, 60000);
	struct wake_held h;
	char line[WAKE_LINE_SIZE];
	uint64_t n;
	int i, len;

	(void)state;
	assert_true(wake_limiter_flush_at(wl) == WAKE_NEVER);
	assert_int_equal(wake_limiter_flush(wl, T0, line, sizeof(line), &n), 0);
	assert_int_equal(admit(wl, "aaaaaaaa", 0, &h), 1);
	for (i = 1; i <= 3; i++)
		assert_int_equal(admit(wl, "aaaaaaaa", i * 1000, &h), 0);
	{
		struct ledger_event ev = ev_of("jitter", "aaaaaaaa", T0 + 4000);
		assert_int_equal(wake_limiter_admit(wl, &ev, T0 + 4000, &h), 0);
	}
	/* nothing new comes: the summary is due when A's window reopens */
	assert_true(wake_limiter_flush_at(wl) == T0 + 10000);
	assert_int_equal(wake_limiter_flush(wl, T0 + 9999, line, sizeof(line),
	    &n), 0);
	len = wake_limiter_flush(wl, T0 + 10000, line, sizeof(line), &n);
	assert_int_equal(len, (int)strlen(line));
	assert_string_equal(line, "sloptimize held back: +4 more since "
	    "11:02:04 (hitch 3, jitter 1), last fp=aaaaaaaa");
	assert_int_equal(n, 4);
	assert_true(wake_limiter_flush_at(wl) == WAKE_NEVER);
	/* said once: the next line has nothing to add */
	assert_int_equal(admit(wl, "bbbbbbbb", 11000, &h), 1);
	assert_int_equal(h.count, 0);
	wake_limiter_destroy(wl);

	/* held by the global window: due when its oldest line leaves */
	wl = limiter(0, 2, 60000);
	assert_int_equal(admit(wl, "aaaaaaaa", 0, &h), 1);
	assert_int_equal(admit(wl, "bbbbbbbb", 5000, &h), 1);
	assert_int_equal(admit(wl, "cccccccc", 6000, &h), 0);
	assert_true(wake_limiter_flush_at(wl) == T0 + 60000);
	len = wake_limiter_flush(wl, T0 + 60000, line, sizeof(line), &n);
	assert_int_equal(len, (int)strlen(line));
	assert_string_equal(line, "sloptimize held back: +1 more since "
	    "11:02:09 (hitch 1), last fp=cccccccc");
	/* the summary counts against the window: full again until 65 s */
	assert_int_equal(admit(wl, "dddddddd", 64999, &h), 0);
	assert_int_equal(admit(wl, "dddddddd", 65000, &h), 1);
	assert_int_equal(h.count, 1);
	wake_limiter_destroy(wl);
}

static void
notifier_limit_clock_steps_back(void **state)
{
	struct wake_limiter *wl = limiter(10000, 0, 0);
	struct wake_held h;

	(void)state;
	assert_int_equal(admit(wl, "aaaaaaaa", 50000, &h), 1);
	/* an hour back: the limiter stands still rather than lock up */
	assert_int_equal(admit(wl, "aaaaaaaa", 50000 - 3600000, &h), 0);
	assert_int_equal(admit(wl, "aaaaaaaa", 60000, &h), 1);
	assert_int_equal(h.count, 1);
	wake_limiter_destroy(wl);
}

static void
notifier_limit_many_footprints(void **state)
{
	struct wake_limiter *wl = limiter(10000, 0, 0);
	struct wake_held h;
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

/* --- catch-up ------------------------------------------------------------ */

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
	struct wake_catchup *wc;
	struct ledger_event ev;
	char line[WAKE_LINE_SIZE];
	/* 2026-11-29T09:12:01Z */
	const int64_t t1 = INT64_C(1795943521000);
	int i;

	(void)state;
	wc = wake_catchup_create();
	assert_non_null(wc);
	assert_int_equal(wake_catchup_format(wc, line, sizeof(line)), 0);
	for (i = 0; i < 30; i++) {
		ev = ev_of("hitch", i % 5 < 2 ? "81e5eb9b" : i % 5 == 2 ?
		    "16a7255f" : "941f2650", t1 + (int64_t)i * 60000);
		assert_int_equal(wake_catchup_add(wc, &ev), 0);
	}
	for (i = 0; i < 4; i++) {
		ev = ev_of("usermark", "68faa5c5", t1 + 100000);
		wake_catchup_add(wc, &ev);
	}
	for (i = 0; i < 3; i++) {
		ev = ev_of("jitter", "d423dcef", LEDGER_NO_TIME);
		wake_catchup_add(wc, &ev);
	}
	ev = ev_of("hitch", "81e5eb9b", t1 + 5592000);	/* 10:45:13 */
	wake_catchup_add(wc, &ev);
	ev = ev_of("hitch", "81e5eb9b", t1 - 1);		/* out of order */
	wake_catchup_add(wc, &ev);
	assert_int_equal(wake_catchup_count(wc), 39);
	wake_catchup_format(wc, line, sizeof(line));
	/* 941f2650 has 12; 81e5eb9b has 12 + 2 */
	assert_string_equal(line, "sloptimize catch-up: 39 meaningful "
	    "records while stopped (hitch 32, usermark 4, jitter 3) from "
	    "09:12:00 to 10:45:13, top fp=81e5eb9b ×14");
	wake_catchup_destroy(wc);

	/* one record, across midnight: dates are said */
	wc = wake_catchup_create();
	ev = ev_of("jitter", "d423dcef", t1 - 86400000);
	wake_catchup_add(wc, &ev);
	ev = ev_of("jitter", "d423dcef", t1);
	wake_catchup_add(wc, &ev);
	wake_catchup_format(wc, line, sizeof(line));
	assert_string_equal(line, "sloptimize catch-up: 2 meaningful records "
	    "while stopped (jitter 2) from 2026-11-28 09:12:01 to "
	    "2026-11-29 09:12:01, top fp=d423dcef ×2");
	wake_catchup_destroy(wc);
	wake_catchup_destroy(NULL);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(notifier_meaningful_rule),
		cmocka_unit_test(notifier_config_defaults),
		cmocka_unit_test(notifier_id_format),
		cmocka_unit_test(notifier_line_hitch),
		cmocka_unit_test(notifier_line_usermark),
		cmocka_unit_test(notifier_line_jitter),
		cmocka_unit_test(notifier_line_optional_tokens),
		cmocka_unit_test(notifier_line_escapes_evidence),
		cmocka_unit_test(notifier_line_cut_at_500),
		cmocka_unit_test(notifier_line_json),
		cmocka_unit_test(notifier_limit_per_fp),
		cmocka_unit_test(notifier_limit_global),
		cmocka_unit_test(notifier_limit_zero_is_off),
		cmocka_unit_test(notifier_limit_flush),
		cmocka_unit_test(notifier_limit_clock_steps_back),
		cmocka_unit_test(notifier_limit_many_footprints),
		cmocka_unit_test(notifier_catchup_split),
		cmocka_unit_test(notifier_catchup_summary),
	};

	setenv("TZ", "UTC", 1);
	tzset();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
