/*
 * ledger: the fold's rules — catalogue rows, status against fixes and
 * build order, skips with offsets, the timeline's gaps, windows — and the
 * hostile inputs of the foundation issue: nothing crashes, nothing
 * accepted is lost.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "ledger/footprint.h"
#include "ledger/ledger.h"
#include "ledger/linesplit.h"

static struct ledger *
mk(int timeline)
{
	struct ledger_opts	o = { LEDGER_NO_TIME, LEDGER_NO_TIME, 0,
				    timeline, NULL };
	struct ledger		*l = ledger_create(&o);

	assert_non_null(l);
	return l;
}

static void
line_cb(void *arg, const char *line, size_t len, uint64_t off)
{
	assert_true(ledger_fold_perf(arg, line, len, off, NULL) >= 0);
}

static void
long_cb(void *arg, uint64_t off, uint64_t len)
{
	ledger_skip(arg, LEDGER_PERF, off, len, NULL);
}

/* Feed a whole text through linesplit, as a reader would. */
static void
feed(struct ledger *l, const char *text, size_t len)
{
	struct linesplit	ls;

	linesplit_init(&ls, 0, line_cb, long_cb, l);
	assert_int_equal(linesplit_feed(&ls, text, len), 0);
	linesplit_free(&ls);
}

static void
feed_fix(struct ledger *l, const char *line)
{
	assert_int_equal(ledger_fold_fix(l, line, strlen(line), 0), 0);
}

static cJSON *
issues(struct ledger *l)
{
	cJSON	*o = ledger_issues_json(l, NULL, 0);

	assert_non_null(o);
	return o;
}

static const cJSON *
row_of(const cJSON *doc, const char *id)
{
	const cJSON	*r;

	cJSON_ArrayForEach(r, cJSON_GetObjectItem(doc, "issues"))
		if (strcmp(cJSON_GetObjectItem(r, "id")->valuestring, id) == 0)
			return r;
	fail_msg("no row %s", id);
	return NULL;
}

static const char *
s(const cJSON *o, const char *k)
{
	return cJSON_GetStringValue(cJSON_GetObjectItem(o, k));
}

static double
n(const cJSON *o, const char *k)
{
	return cJSON_GetNumberValue(cJSON_GetObjectItem(o, k));
}

static void
ledger_empty(void **state)
{
	struct ledger	*l = mk(1);
	cJSON		*o, *h;

	(void)state;
	o = issues(l);
	assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(o, "issues")), 0);
	h = ledger_history_json(l, 4, 0);
	assert_non_null(h);
	assert_true(cJSON_IsNull(cJSON_GetObjectItem(h, "from")));
	assert_true(cJSON_IsNull(cJSON_GetObjectItem(h, "bucketMs")));
	assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(h, "buckets")), 0);
	cJSON_Delete(o);
	cJSON_Delete(h);
	ledger_destroy(l);
}

#define HB(at, build, p95) "{\"type\":\"heartbeat\",\"at\":\"" at "\",\"build\":\"" build \
	"\",\"frame\":{\"p95Ms\":" p95 ",\"medianMs\":8},\"render\":{\"calls\":100," \
	"\"triangles\":5000},\"memory\":{\"programs\":12}}\n"
#define HITCH(at, build, ms, guess, minted) "{\"type\":\"hitch\",\"at\":\"" at \
	"\",\"build\":\"" build "\",\"phase\":\"play\",\"frameMs\":" ms \
	",\"minted\":[" minted "],\"classification\":{\"guess\":\"" guess \
	"\",\"confidence\":\"medium\",\"evidence\":\"e " ms "\"}}\n"

static void
ledger_heartbeats_only(void **state)
{
	const char	*t = HB("2026-09-01T09:00:00.000Z", "b1", "14")
	    HB("2026-09-01T09:00:02.000Z", "b1", "16")
	    HB("2026-09-01T09:00:04.000Z", "b2", "12");
	struct ledger	*l = mk(1);
	cJSON		*o, *h, *b0;

	(void)state;
	feed(l, t, strlen(t));
	o = issues(l);
	assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(o, "issues")), 0);
	assert_int_equal(n(cJSON_GetObjectItem(o, "counts"), "folded"), 3);
	h = ledger_history_json(l, 2, 0);
	/* span 4001 ms in 2 buckets of 2001 ms: {0s, 2s} and {4s} */
	assert_int_equal(n(h, "bucketMs"), 2001);
	b0 = cJSON_GetArrayItem(cJSON_GetObjectItem(h, "buckets"), 0);
	assert_int_equal(n(b0, "heartbeats"), 2);
	assert_true(n(b0, "p95Ms") == 14);	/* nearest rank of {14, 16} */
	assert_int_equal(n(b0, "hitches"), 0);
	assert_true(cJSON_IsNull(cJSON_GetObjectItem(b0, "worstHitchMs")));
	assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(h, "builds")), 2);
	cJSON_Delete(o);
	cJSON_Delete(h);
	ledger_destroy(l);
}

static void
ledger_timeline_gap_is_null(void **state)
{
	const char	*t = HB("2026-09-01T09:00:00.000Z", "b1", "14")
	    HB("2026-09-01T09:00:09.999Z", "b1", "16");
	struct ledger	*l = mk(1);
	cJSON		*h, *mid;

	(void)state;
	feed(l, t, strlen(t));
	h = ledger_history_json(l, 4, 0);
	mid = cJSON_GetArrayItem(cJSON_GetObjectItem(h, "buckets"), 1);
	assert_int_equal(n(mid, "heartbeats"), 0);
	assert_true(cJSON_IsNull(cJSON_GetObjectItem(mid, "p95Ms")));
	assert_true(cJSON_IsNull(cJSON_GetObjectItem(mid, "hitches")));
	assert_true(cJSON_IsNull(cJSON_GetObjectItem(mid, "calls")));
	cJSON_Delete(h);
	ledger_destroy(l);
}

static void
ledger_catalogue_row(void **state)
{
	const char	*t =
	    HITCH("2026-09-01T09:00:05.000Z", "b1", "120", "shader-compile", "\"m@o\"")
	    HITCH("2026-09-01T09:00:01.000Z", "b2", "180", "shader-compile", "\"m@o\"")
	    HITCH("2026-09-01T09:00:09.000Z", "b1", "180", "shader-compile", "\"m@o\",\"m@o\"");
	struct ledger	*l = mk(0);
	cJSON		*o;
	const cJSON	*r, *w;
	char		 id[9];
	const char	*key = "hitch|play|shader-compile|m@o|ctx:";

	(void)state;
	feed(l, t, strlen(t));
	footprint_hex(footprint_id(key, strlen(key)), id);
	o = issues(l);
	r = row_of(o, id);
	assert_string_equal(s(r, "key"), key);
	assert_int_equal(n(r, "count"), 3);
	assert_string_equal(s(r, "first"), "2026-09-01T09:00:01.000Z");
	assert_string_equal(s(r, "last"), "2026-09-01T09:00:09.000Z");
	assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(r, "builds")), 2);
	assert_string_equal(cJSON_GetArrayItem(cJSON_GetObjectItem(r,
	    "builds"), 0)->valuestring, "b1");
	w = cJSON_GetObjectItem(r, "worst");
	assert_true(n(w, "value") == 180);
	/* ties keep the earliest occurrence in file order */
	assert_string_equal(s(w, "at"), "2026-09-01T09:00:01.000Z");
	assert_string_equal(s(w, "unit"), "ms");
	/* verdict of the last occurrence in file order */
	assert_string_equal(s(cJSON_GetObjectItem(r, "verdict"), "evidence"),
	    "e 180");
	assert_string_equal(s(r, "status"), "open");
	cJSON_Delete(o);
	ledger_destroy(l);
}

static const char *
status_after(const char *perf, const char *fix1, const char *fix2,
    const char *id)
{
	static char	 buf[16];
	struct ledger	*l = mk(0);
	cJSON		*o;

	if (fix1)
		feed_fix(l, fix1);
	if (fix2)
		feed_fix(l, fix2);
	feed(l, perf, strlen(perf));
	o = issues(l);
	snprintf(buf, sizeof(buf), "%s", s(row_of(o, id), "status"));
	cJSON_Delete(o);
	ledger_destroy(l);
	return buf;
}

static void
ledger_status_by_build_order(void **state)
{
	const char	*key = "hitch|play|long-script|no-script|ctx:";
	char		 id[9], fix[512], fix2[512];
	/* b1 runs, the fix lands at 09:10, b2 first appears at 09:20 */
	const char	*stale =
	    HITCH("2026-09-01T09:00:00.000Z", "b1", "120", "long-script", "")
	    HB("2026-09-01T09:20:00.000Z", "b2", "14")
	    HITCH("2026-09-01T09:30:00.000Z", "b1", "120", "long-script", "");
	const char	*again = HB("2026-09-01T09:00:00.000Z", "b1", "14")
	    HITCH("2026-09-01T09:00:00.000Z", "b1", "120", "long-script", "")
	    HB("2026-09-01T09:20:00.000Z", "b2", "14")
	    HITCH("2026-09-01T09:30:00.000Z", "b2", "120", "long-script", "");

	(void)state;
	footprint_hex(footprint_id(key, strlen(key)), id);
	snprintf(fix, sizeof(fix), "{\"type\":\"fix\",\"id\":\"0000000a\","
	    "\"at\":\"2026-09-01T09:10:00.000Z\",\"title\":\"t\","
	    "\"footprints\":[\"%s\"]}", id);
	assert_string_equal(status_after(stale, NULL, NULL, id), "open");
	/* an occurrence in the old build after the fix is stale */
	assert_string_equal(status_after(stale, fix, NULL, id), "fixed");
	assert_string_equal(status_after(again, fix, NULL, id), "regressed");
	/* after.build names the build the fix was judged on */
	snprintf(fix2, sizeof(fix2), "{\"type\":\"fix\",\"id\":\"0000000b\","
	    "\"at\":\"2026-09-01T08:00:00.000Z\",\"title\":\"t\","
	    "\"footprints\":[\"%s\"],\"after\":{\"build\":\"b2\"}}", id);
	assert_string_equal(status_after(stale, fix2, NULL, id), "fixed");
	assert_string_equal(status_after(again, fix2, NULL, id), "regressed");
	/* a proposal is not a fix until merged */
	snprintf(fix2, sizeof(fix2), "{\"type\":\"fix\",\"id\":\"0000000c\","
	    "\"status\":\"proposed\",\"at\":\"2026-09-01T09:10:00.000Z\","
	    "\"title\":\"t\",\"footprints\":[\"%s\"]}", id);
	assert_string_equal(status_after(stale, fix2, NULL, id), "open");
	assert_string_equal(status_after(stale, fix2, "{\"type\":\"fix\","
	    "\"status\":\"merged\",\"ref\":\"0000000c\","
	    "\"at\":\"2026-09-01T09:11:00.000Z\"}", id), "fixed");
	assert_string_equal(status_after(stale, fix2, "{\"type\":\"fix\","
	    "\"status\":\"rejected\",\"ref\":\"0000000c\"}", id), "open");
}

static void
ledger_hostile_lines_are_counted(void **state)
{
	char		*big, *t;
	size_t		 bign = 2 * 1024 * 1024, off = 0, tn;
	struct ledger	*l = mk(0);
	cJSON		*o, *sk;
	const char	*good = HITCH("2026-09-01T09:00:00.000Z", "b1", "150",
			    "long-script", "");

	(void)state;
	t = malloc(bign + 4096);
	/* BOM + CRLF good line, garbage, NUL, bad UTF-8, no type, 2 MiB */
	off += (size_t)sprintf(t + off, "\xef\xbb\xbf%.*s\r\n",
	    (int)strlen(good) - 1, good);
	off += (size_t)sprintf(t + off, "not json\n");
	memcpy(t + off, "{\"type\":\"a\0\"}\n", 14);
	off += 14;
	off += (size_t)sprintf(t + off, "{\"type\":\"\xff\"}\n");
	off += (size_t)sprintf(t + off, "{\"at\":\"x\"}\n");
	off += (size_t)sprintf(t + off, "[1,2]\n\n   \n");
	big = t + off;
	memset(big, 'x', bign);
	big[0] = '{';
	off += bign;
	t[off++] = '\n';
	off += (size_t)sprintf(t + off, "%s", good);
	tn = off;
	feed(l, t, tn);
	o = issues(l);
	assert_int_equal(n(cJSON_GetObjectItem(o, "counts"), "folded"), 2);
	assert_int_equal(n(cJSON_GetObjectItem(o, "counts"), "skipped"), 6);
	sk = cJSON_GetObjectItem(o, "skipped");
	assert_string_equal(s(cJSON_GetArrayItem(sk, 0), "reason"),
	    "not a JSON object");
	assert_string_equal(s(cJSON_GetArrayItem(sk, 1), "reason"), "NUL byte");
	assert_string_equal(s(cJSON_GetArrayItem(sk, 2), "reason"),
	    "invalid UTF-8");
	assert_string_equal(s(cJSON_GetArrayItem(sk, 3), "reason"),
	    "no string type");
	assert_string_equal(s(cJSON_GetArrayItem(sk, 5), "reason"),
	    "line longer than 1 MiB");
	assert_true(n(cJSON_GetArrayItem(sk, 5), "length") == bign);
	assert_true(n(cJSON_GetArrayItem(sk, 5), "offset") ==
	    (double)(big - t));
	/* both good lines landed in one row */
	assert_int_equal(n(cJSON_GetArrayItem(cJSON_GetObjectItem(o,
	    "issues"), 0), "count"), 2);
	cJSON_Delete(o);
	free(t);
	ledger_destroy(l);
}

static void
ledger_reading_rule(void **state)
{
	const char	*key = "hitch|-|long-script|no-script|ctx:";
	char		 id[9], t[4096];
	struct ledger	*l = mk(0);
	cJSON		*o;
	const cJSON	*r;

	(void)state;
	footprint_hex(footprint_id(key, strlen(key)), id);
	snprintf(t, sizeof(t),
	    /* no footprint: derived */
	    "{\"type\":\"hitch\",\"classification\":{\"guess\":\"long-script\"}}\n"
	    /* v0: re-derived */
	    "{\"type\":\"hitch\",\"footprint\":{\"v\":0,\"id\":\"deadbeef\","
	    "\"key\":\"hitch\"},\"classification\":{\"guess\":\"long-script\"}}\n"
	    /* v2 with a malformed id: re-derived and counted */
	    "{\"type\":\"hitch\",\"footprint\":{\"v\":2,\"id\":\"xyz\"},"
	    "\"classification\":{\"guess\":\"long-script\"}}\n"
	    /* v2 well formed: the writer's word stands, even if it differs */
	    "{\"type\":\"hitch\",\"footprint\":{\"v\":2,\"id\":\"0badc0de\","
	    "\"key\":\"writer|key\"},\"classification\":{\"guess\":\"x\"}}\n"
	    /* v1 well formed: an older version, re-derived with v2 (not malformed) */
	    "{\"type\":\"hitch\",\"footprint\":{\"v\":1,\"id\":\"16a7255f\","
	    "\"key\":\"hitch|-|long-script|-|ctx:\"},\"classification\":{\"guess\":\"long-script\"}}\n"
	    /* unknown type with a footprint: a row, worst null */
	    "{\"type\":\"warm\",\"footprint\":{\"v\":1,\"id\":\"00000001\","
	    "\"key\":\"warm|k\"},\"extra\":[1]}\n"
	    /* unknown type without: folded, not an incident */
	    "{\"type\":\"census\",\"whatever\":{}}\n"
	    /* numbers as strings */
	    "{\"type\":\"hitch\",\"frameMs\":\"141.5\","
	    "\"classification\":{\"guess\":\"long-script\"}}\n");
	feed(l, t, strlen(t));
	o = issues(l);
	r = row_of(o, id);
	assert_int_equal(n(r, "count"), 5);
	assert_true(n(cJSON_GetObjectItem(r, "worst"), "value") == 141.5);
	assert_string_equal(s(row_of(o, "0badc0de"), "key"), "writer|key");
	assert_true(cJSON_IsNull(cJSON_GetObjectItem(row_of(o, "00000001"),
	    "worst")));
	assert_int_equal(n(cJSON_GetObjectItem(o, "counts"),
	    "malformedFootprints"), 1);
	assert_int_equal(n(cJSON_GetObjectItem(o, "counts"), "folded"), 8);
	assert_int_equal(n(cJSON_GetObjectItem(o, "counts"), "rows"), 3);
	cJSON_Delete(o);
	ledger_destroy(l);
}

static void
ledger_row_fields_from_last_occurrence(void **state)
{
	const char	*t =
	    "{\"type\":\"warm\",\"phase\":\"boot\",\"ctx\":\"a=1\","
	    "\"footprint\":{\"v\":1,\"id\":\"00000002\",\"key\":\"k\"}}\n"
	    "{\"type\":\"warm\",\"phase\":\"play\",\"ctx\":\"a=2\","
	    "\"footprint\":{\"v\":1,\"id\":\"00000002\",\"key\":\"k\"}}\n"
	    "{\"type\":\"warm\",\"footprint\":{\"v\":1,\"id\":\"00000003\","
	    "\"key\":\"k3\"},\"phase\":\"boot\"}\n"
	    "{\"type\":\"warm\",\"footprint\":{\"v\":1,\"id\":\"00000003\","
	    "\"key\":\"k3\"}}\n";
	struct ledger	*l = mk(0);
	cJSON		*o;
	const cJSON	*r;

	(void)state;
	feed(l, t, strlen(t));
	o = issues(l);
	r = row_of(o, "00000002");
	assert_string_equal(s(r, "phase"), "play");
	assert_string_equal(s(cJSON_GetObjectItem(r, "situation"), "a"), "2");
	/* the last occurrence had no phase */
	assert_true(cJSON_IsNull(cJSON_GetObjectItem(row_of(o, "00000003"),
	    "phase")));
	cJSON_Delete(o);
	ledger_destroy(l);
}

static void
ledger_automated_and_time_filters(void **state)
{
	const char	*t =
	    "{\"type\":\"usermark\",\"at\":\"2026-09-01T09:00:00Z\",\"automated\":true}\n"
	    "{\"type\":\"usermark\",\"at\":\"2026-09-01T10:00:00Z\"}\n"
	    "{\"type\":\"usermark\"}\n";
	struct ledger_opts	o = { LEDGER_NO_TIME, LEDGER_NO_TIME, 0, 0,
				    NULL };
	struct ledger		*l;
	cJSON			*doc;

	(void)state;
	l = ledger_create(&o);
	feed(l, t, strlen(t));
	doc = issues(l);
	/* the robot's record is left out; the one without `at` counts */
	assert_int_equal(n(cJSON_GetArrayItem(cJSON_GetObjectItem(doc,
	    "issues"), 0), "count"), 2);
	cJSON_Delete(doc);
	ledger_destroy(l);

	o.include_automated = 1;
	iso_parse_ms("2026-09-01T09:30:00Z", 20, &o.from_ms);
	l = ledger_create(&o);
	feed(l, t, strlen(t));
	doc = issues(l);
	/* from/to keep only timed records in range */
	assert_int_equal(n(cJSON_GetArrayItem(cJSON_GetObjectItem(doc,
	    "issues"), 0), "count"), 1);
	cJSON_Delete(doc);
	ledger_destroy(l);
}

static void
ledger_windows(void **state)
{
	const char	*t = HB("2026-09-01T09:00:00.000Z", "b1", "20")
	    HB("2026-09-01T09:00:02.000Z", "b1", "22")
	    HITCH("2026-09-01T09:00:03.000Z", "b1", "130", "g", "")
	    HB("2026-09-01T09:00:04.000Z", "b2", "12")
	    HB("2026-09-01T09:00:06.000Z", "b3", "10");
	struct ledger	*l = mk(1);
	cJSON		*w;
	const char	*err;

	(void)state;
	feed(l, t, strlen(t));
	w = ledger_window_json(l, NULL, 1, &err);
	assert_string_equal(s(w, "build"), "b3");
	cJSON_Delete(w);
	w = ledger_window_json(l, NULL, 0, &err);
	assert_string_equal(s(w, "build"), "b2");
	cJSON_Delete(w);
	w = ledger_window_json(l, "b1", 0, &err);
	assert_true(n(w, "p95Ms") == 20);
	assert_int_equal(n(w, "hitches"), 1);
	assert_true(n(w, "worstHitchMs") == 130);
	/* 32 slices over the window, a null where a slice has no heartbeat */
	assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(w, "series")), 32);
	assert_true(cJSON_GetArrayItem(cJSON_GetObjectItem(w, "series"), 0)->valuedouble == 20);
	assert_true(cJSON_IsNull(cJSON_GetArrayItem(cJSON_GetObjectItem(w, "series"), 1)));
	/* the window runs to the hitch at 3 s: 94 ms slices, 2 s is slice 21 */
	assert_true(cJSON_GetArrayItem(cJSON_GetObjectItem(w, "series"), 21)->valuedouble == 22);
	cJSON_Delete(w);
	w = ledger_window_json(l,
	    "2026-09-01T09:00:01Z..2026-09-01T09:00:05Z", 0, &err);
	assert_true(cJSON_IsNull(cJSON_GetObjectItem(w, "build")));
	assert_int_equal(n(w, "heartbeats"), 2);
	cJSON_Delete(w);
	assert_null(ledger_window_json(l, "nope", 0, &err));
	assert_non_null(err);
	assert_null(ledger_window_json(l, "2026-09-01T09:00:05Z..x", 0, &err));
	ledger_destroy(l);
}

/*
 * The entity an incident names (issue 19): a spawn-burst's first spawned
 * entity with its site and how many other ids beside it; another class's
 * first minted one; "" when the record names none.  issues --fp lists
 * them per occurrence.
 */
static void
ledger_event_names_the_entity(void **state)
{
	const char *spawn = "{\"type\":\"hitch\",\"at\":"
	    "\"2026-09-01T09:00:00Z\",\"frameMs\":90,\"phase\":\"play\","
	    "\"classification\":[{\"guess\":\"spawn-burst\",\"confidence\":"
	    "\"high\",\"evidence\":\"60 spawned\"}],\"mintedEntities\":"
	    "[{\"minted\":\"m@o\",\"id\":\"fx\",\"site\":\"src/fx.js:3\"}],"
	    "\"world\":{\"spawned\":[\"e\",\"e\",\"b\"],\"spawnedEntities\":"
	    "[{\"name\":\"e\",\"id\":\"enemy_17\",\"site\":\"src/spawn.js:88\"},"
	    "{\"name\":\"e\",\"id\":\"enemy_17\",\"site\":\"src/spawn.js:88\"},"
	    "{\"name\":\"b\",\"id\":\"boss\",\"site\":\"unknown\"}]}}";
	const char *compile = "{\"type\":\"hitch\",\"at\":"
	    "\"2026-09-01T09:00:01Z\",\"frameMs\":90,\"classification\":"
	    "[{\"guess\":\"shader-compile\",\"confidence\":\"high\","
	    "\"evidence\":\"programs +1\"}],\"mintedEntities\":[{\"minted\":"
	    "\"m@o\",\"id\":\"boss\",\"site\":\"unknown\"}]}";
	/* the recorder lists 32 of a thousand: the count is said */
	const char *many = "{\"type\":\"hitch\",\"at\":"
	    "\"2026-09-01T09:00:01Z\",\"frameMs\":90,\"classification\":"
	    "[{\"guess\":\"spawn-burst\",\"confidence\":\"high\","
	    "\"evidence\":\"1000 spawned\"}],\"mintedEntities\":[{\"minted\":"
	    "\"m@o\",\"id\":\"boss\",\"site\":\"unknown\"}],\"world\":"
	    "{\"spawnedCount\":1000,\"spawnedEntities\":[{\"name\":\"crate\","
	    "\"id\":\"crate[1]\",\"site\":\"main.js:144\"},{\"name\":"
	    "\"crate\",\"id\":\"crate[2]\",\"site\":\"main.js:144\"}]}}";
	const char *plain = "{\"type\":\"hitch\",\"at\":"
	    "\"2026-09-01T09:00:02Z\",\"frameMs\":90,\"classification\":"
	    "[{\"guess\":\"long-script\",\"confidence\":\"high\","
	    "\"evidence\":\"f\"}]}";
	struct ledger_opts	 o = { LEDGER_NO_TIME, LEDGER_NO_TIME, 0, 0,
				    NULL };
	struct ledger		*l = mk(0), *lo;
	struct ledger_event	 ev;
	cJSON			*doc, *occ, *ents;

	(void)state;
	assert_int_equal(ledger_fold_perf(l, spawn, strlen(spawn), 0, &ev), 0);
	assert_string_equal(ev.entity, "enemy_17 (src/spawn.js:88) +1 more");
	assert_int_equal(ledger_fold_perf(l, compile, strlen(compile), 500,
	    &ev), 0);
	assert_string_equal(ev.entity, "boss");
	assert_int_equal(ledger_fold_perf(l, many, strlen(many), 700, &ev), 0);
	assert_string_equal(ev.entity, "crate[1] (main.js:144) +999 more "
	    "spawned");
	assert_int_equal(ledger_fold_perf(l, plain, strlen(plain), 900, &ev),
	    0);
	assert_true(ev.incident);
	assert_string_equal(ev.entity, "");

	/* issues --fp: the occurrence's entities, in order */
	assert_int_equal(ledger_fold_perf(l, spawn, strlen(spawn), 1200, &ev),
	    0);
	o.occurrences_of = ev.id;
	lo = ledger_create(&o);
	assert_non_null(lo);
	assert_int_equal(ledger_fold_perf(lo, spawn, strlen(spawn), 0, &ev), 0);
	doc = ledger_issue_json(lo, ev.id, 0);
	assert_non_null(doc);
	occ = cJSON_GetArrayItem(cJSON_GetObjectItem(doc, "occurrences"), 0);
	assert_non_null(occ);
	ents = cJSON_GetObjectItem(occ, "entities");
	assert_int_equal(cJSON_GetArraySize(ents), 3);
	assert_string_equal(cJSON_GetArrayItem(ents, 0)->valuestring,
	    "fx (src/fx.js:3)");
	assert_string_equal(cJSON_GetArrayItem(ents, 1)->valuestring,
	    "enemy_17 (src/spawn.js:88)");
	assert_string_equal(cJSON_GetArrayItem(ents, 2)->valuestring, "boss");
	cJSON_Delete(doc);
	ledger_destroy(lo);
	ledger_destroy(l);
}

static void
ledger_event_for_wakes(void **state)
{
	const char		*line = "{\"type\":\"hitch\",\"at\":"
	    "\"2026-09-01T09:00:00Z\",\"frameMs\":141.2,\"phase\":\"play\","
	    "\"build\":\"v1\",\"classification\":[{\"guess\":\"shader-compile\","
	    "\"confidence\":\"medium\",\"evidence\":\"programs +3\"}]}";
	struct ledger		*l = mk(0);
	struct ledger_event	 ev;

	(void)state;
	assert_int_equal(ledger_fold_perf(l, line, strlen(line), 0, &ev), 0);
	assert_int_equal(ledger_fold_perf(l, line, strlen(line), 300, &ev), 0);
	assert_true(ev.incident && ev.counted && ev.has_value);
	assert_true(ev.value == 141.2);
	assert_string_equal(ev.type, "hitch");
	assert_string_equal(ev.guess, "shader-compile");
	assert_string_equal(ev.evidence, "programs +3");
	assert_string_equal(ev.build, "v1");
	assert_string_equal(ev.status, "open");
	assert_int_equal(ev.count, 2);
	assert_int_equal(strlen(ev.id), 8);
	assert_string_equal(ev.note, "");
	ledger_destroy(l);
}

/* A usermark's note (the player's words) reaches the wake, decoded, and
 * a note that is not a string is no note. */
static void
ledger_event_carries_the_note(void **state)
{
	const char		*mark = "{\"type\":\"usermark\",\"note\":"
	    "\"feels \\\"heavy\\\" \\u00e9\",\"worst\":[{\"frameMs\":61}]}";
	const char		*num = "{\"type\":\"usermark\",\"note\":12,"
	    "\"worst\":[{\"frameMs\":61}]}";
	struct ledger		*l = mk(0);
	struct ledger_event	 ev;

	(void)state;
	assert_int_equal(ledger_fold_perf(l, mark, strlen(mark), 0, &ev), 0);
	assert_string_equal(ev.note, "feels \"heavy\" \xc3\xa9");
	assert_int_equal(ledger_fold_perf(l, num, strlen(num), 100, &ev), 0);
	assert_string_equal(ev.note, "");
	ledger_destroy(l);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(ledger_empty),
		cmocka_unit_test(ledger_heartbeats_only),
		cmocka_unit_test(ledger_timeline_gap_is_null),
		cmocka_unit_test(ledger_catalogue_row),
		cmocka_unit_test(ledger_status_by_build_order),
		cmocka_unit_test(ledger_hostile_lines_are_counted),
		cmocka_unit_test(ledger_reading_rule),
		cmocka_unit_test(ledger_row_fields_from_last_occurrence),
		cmocka_unit_test(ledger_automated_and_time_filters),
		cmocka_unit_test(ledger_windows),
		cmocka_unit_test(ledger_event_for_wakes),
		cmocka_unit_test(ledger_event_names_the_entity),
		cmocka_unit_test(ledger_event_carries_the_note),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
