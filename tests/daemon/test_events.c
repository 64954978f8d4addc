/*
 * events: the events socket's protocol (daemon/events.h) driven through a
 * fake transport — the transport is an interface, so the connection is a
 * list of the messages written to it and a flag for "wants to write" —
 * and a real libuv loop for the wakes re-made from a real perf.jsonl.
 * hello first; live wakes and records; ?since= parsed and caught up on
 * from the ring, waiting for the start-up fold; a gap (a new generation,
 * an id from before the file) with its count when it is known; a
 * subscriber that stopped reading caught up with every wake once and the
 * records it missed counted in one `dropped`; the subscriber cap, which
 * follows its setting; a failed write.  No timing is asserted: the loop's
 * deadline only keeps a broken test from hanging.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include <cjson/cJSON.h>
#include <uv.h>

#include "daemon/events.h"
#include "tests/uvtest.h"

#define HEADROOM	16		/* like LWS_PRE: written over below */
#define MAXMSG		20000

/* One fake connection: what was written to it. */
struct conn {
	char		**msgs;
	int		 n;
	int		 want;		/* want_write since the last write */
	int		 fail;		/* the next write fails */
};

static void
fake_want_write(void *c)
{
	((struct conn *)c)->want = 1;
}

static int
fake_write(void *cv, unsigned char *buf, size_t len)
{
	struct conn	*c = cv;

	if (c->fail)
		return -1;
	/* the headroom is the transport's to write on (lws frames there):
	 * under ASan a short one is an error */
	memset(buf - HEADROOM, 0xAA, HEADROOM);
	assert_true(c->n < MAXMSG);
	c->msgs[c->n] = malloc(len + 1);
	memcpy(c->msgs[c->n], buf, len);
	c->msgs[c->n][len] = '\0';
	c->n++;
	return 0;
}

static const struct events_transport fake = {
	HEADROOM, fake_want_write, fake_write
};

/* The owner's side: a hello with a cursor, every footprint open ×7. */
static uint64_t	 hello_gen, hello_cursor;

static void
fake_hello(void *arg, cJSON *o)
{
	(void)arg;
	cJSON_AddStringToObject(o, "project", "/tmp/game");
	cJSON_AddNumberToObject(o, "generation", (double)hello_gen);
	cJSON_AddBoolToObject(o, "ready", 1);
	cJSON_AddNumberToObject(o, "cursor", (double)hello_cursor);
}

static const char *
fake_row(void *arg, const char *fp, uint64_t *count)
{
	(void)arg;
	(void)fp;
	*count = 7;
	return "open";
}

struct fx {
	uv_loop_t		 loop;
	struct wake_config	 wake;
	unsigned		 max_subs;
	struct events		 ev;
	char			 dir[64];
};

static struct fx *
fx_new(void)
{
	struct fx		*f = calloc(1, sizeof(*f));
	struct events_hooks	 h;

	assert_non_null(f);
	assert_int_equal(uv_loop_init(&f->loop), 0);
	wake_config_defaults(&f->wake);
	f->max_subs = 4;
	snprintf(f->dir, sizeof(f->dir), "/tmp/test_events.XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	memset(&h, 0, sizeof(h));
	h.hello = fake_hello;
	h.row = fake_row;
	h.wake = &f->wake;
	h.max_subs = &f->max_subs;
	snprintf(h.perf, sizeof(h.perf), "%s/perf.jsonl", f->dir);
	events_init(&f->ev, &f->loop, &fake, &h);
	hello_gen = 1;
	hello_cursor = 0;
	return f;
}

static struct conn *
conn_new(void)
{
	struct conn	*c = calloc(1, sizeof(*c));

	assert_non_null(c);
	c->msgs = calloc(MAXMSG, sizeof(char *));
	assert_non_null(c->msgs);
	return c;
}

static void
conn_free(struct conn *c)
{
	int	i;

	for (i = 0; i < c->n; i++)
		free(c->msgs[i]);
	free(c->msgs);
	free(c);
}

static void
fx_free(struct fx *f)
{
	char	path[128];

	events_stop(&f->ev);
	run_with_deadline(&f->loop, 60000);
	events_free(&f->ev);
	assert_int_equal(uv_loop_close(&f->loop), 0);
	snprintf(path, sizeof(path), "%s/perf.jsonl", f->dir);
	(void)unlink(path);
	(void)rmdir(f->dir);
	free(f);
}

/* The connection reads whatever is queued, as a socket that keeps up. */
static void
drain(struct fx *f, struct events_sub *u, struct conn *c)
{
	while (c->want) {
		c->want = 0;
		assert_int_equal(events_writable(&f->ev, u), 0);
	}
}

/* Drain, run the pool's jobs, drain: until nothing more comes. */
static void
drain_all(struct fx *f, struct events_sub *u, struct conn *c)
{
	int	before;

	do {
		before = c->n;
		drain(f, u, c);
		run_with_deadline(&f->loop, 60000);
		drain(f, u, c);
	} while (c->n != before);
}

static cJSON *
msg(struct conn *c, int i)
{
	cJSON	*o;

	assert_true(i < c->n);
	o = cJSON_Parse(c->msgs[i]);
	assert_non_null(o);
	return o;
}

static const char *
str(const cJSON *o, const char *k)
{
	const cJSON	*v = cJSON_GetObjectItemCaseSensitive(o, k);

	return cJSON_IsString(v) ? v->valuestring : NULL;
}

static void
assert_type(struct conn *c, int i, const char *type)
{
	cJSON	*o = msg(c, i);

	assert_string_equal(str(o, "type"), type);
	cJSON_Delete(o);
}

/* A wake message as the notifier makes it, with id gen:off. */
static void
wake(struct fx *f, uint64_t gen, uint64_t off)
{
	char	buf[160];
	int	n;

	n = snprintf(buf, sizeof(buf), "{\"type\":\"wake\",\"id\":\"%llu:%llu\","
	    "\"line\":\"sloptimize hitch\",\"record\":null}",
	    (unsigned long long)gen, (unsigned long long)off);
	events_wake(&f->ev, gen, off, buf, (size_t)n);
}

static void
record(struct fx *f)
{
	static const char	r[] = "{\"type\":\"record\",\"record\":{}}";

	events_broadcast(&f->ev, r, sizeof(r) - 1);
}

/* The ids of the wakes written to c, from message `from` on. */
static int
wake_ids(struct conn *c, int from, char ids[][32], int max)
{
	int	i, n = 0;
	cJSON	*o;

	for (i = from; i < c->n && n < max; i++) {
		o = msg(c, i);
		if (strcmp(str(o, "type"), "wake") == 0)
			snprintf(ids[n++], 32, "%s", str(o, "id"));
		cJSON_Delete(o);
	}
	return n;
}

static void
test_since_parse(void **state)
{
	uint64_t	g, o;
	int		none;

	(void)state;
	assert_int_equal(events_since_parse("3:120", &g, &o, &none), 0);
	assert_true(g == 3 && o == 120 && !none);
	assert_int_equal(events_since_parse("2:-1", &g, &o, &none), 0);
	assert_true(g == 2 && none);
	assert_int_equal(events_since_parse("0:0", &g, &o, &none), 0);
	assert_int_equal(events_since_parse("", &g, &o, &none), -1);
	assert_int_equal(events_since_parse("1", &g, &o, &none), -1);
	assert_int_equal(events_since_parse("1:", &g, &o, &none), -1);
	assert_int_equal(events_since_parse(":1", &g, &o, &none), -1);
	assert_int_equal(events_since_parse("1:2x", &g, &o, &none), -1);
	assert_int_equal(events_since_parse("-1:2", &g, &o, &none), -1);
	assert_int_equal(events_since_parse("1:-2", &g, &o, &none), -1);
	assert_int_equal(events_since_parse("1: 2", &g, &o, &none), -1);
	assert_int_equal(events_since_parse("99999999999999999999:1", &g, &o,
	    &none), -1);
}

/* hello first, then what happens, as it happens. */
static void
test_hello_then_live(void **state)
{
	struct fx		*f = fx_new();
	struct conn		*c = conn_new();
	struct events_sub	*u;
	cJSON			*o;

	(void)state;
	events_ring_reset(&f->ev, 1, 0);
	events_ready(&f->ev);
	hello_cursor = 500;
	u = events_open(&f->ev, c, NULL);
	assert_non_null(u);
	assert_int_equal(events_count(&f->ev), 1);
	assert_true(c->want);
	drain(f, u, c);
	assert_int_equal(c->n, 1);
	o = msg(c, 0);
	assert_string_equal(str(o, "type"), "hello");
	assert_non_null(str(o, "version"));
	assert_string_equal(str(o, "project"), "/tmp/game");
	assert_true(cJSON_IsNumber(cJSON_GetObjectItem(o, "pid")));
	cJSON_Delete(o);
	wake(f, 1, 600);
	record(f);
	drain(f, u, c);
	assert_int_equal(c->n, 3);
	assert_type(c, 1, "wake");
	assert_type(c, 2, "record");
	events_close(&f->ev, u);
	assert_int_equal(events_count(&f->ev), 0);
	conn_free(c);
	fx_free(f);
}

/* ?since= from the ring: every wake after it once, in order, then live;
 * one that resumes before the start-up fold is done waits for it. */
static void
test_catchup_from_ring(void **state)
{
	struct fx		*f = fx_new();
	struct conn		*c = conn_new(), *w = conn_new();
	struct events_sub	*u, *uw;
	char			 ids[8][32];

	(void)state;
	events_ring_reset(&f->ev, 1, 0);
	wake(f, 1, 10);
	wake(f, 1, 20);
	uw = events_open(&f->ev, w, "1:10");	/* before ready */
	drain(f, uw, w);
	assert_int_equal(w->n, 1);		/* hello only */
	wake(f, 1, 30);
	drain(f, uw, w);
	assert_int_equal(w->n, 1);		/* nothing live before its turn */
	events_ready(&f->ev);
	u = events_open(&f->ev, c, "1:10");
	drain(f, u, c);
	drain(f, uw, w);
	assert_int_equal(wake_ids(c, 1, ids, 8), 2);
	assert_string_equal(ids[0], "1:20");
	assert_string_equal(ids[1], "1:30");
	assert_int_equal(wake_ids(w, 1, ids, 8), 2);
	assert_string_equal(ids[0], "1:20");
	assert_string_equal(ids[1], "1:30");
	wake(f, 1, 40);				/* both live now */
	drain(f, u, c);
	drain(f, uw, w);
	assert_int_equal(wake_ids(c, 1, ids, 8), 3);
	assert_string_equal(ids[2], "1:40");
	assert_int_equal(wake_ids(w, 1, ids, 8), 3);
	assert_true(f->ev.from_ring == 4);
	events_close(&f->ev, u);
	events_close(&f->ev, uw);
	conn_free(c);
	conn_free(w);
	fx_free(f);
}

/* An id of a generation the file no longer has: a gap, with null lost
 * (nobody can count what was before the ring), then the new one's wakes. */
static void
test_gap_old_generation(void **state)
{
	struct fx		*f = fx_new();
	struct conn		*c = conn_new();
	struct events_sub	*u;
	cJSON			*o;
	char			 ids[4][32];

	(void)state;
	hello_gen = 2;
	events_ring_reset(&f->ev, 2, 0);
	events_ready(&f->ev);
	wake(f, 2, 5);
	u = events_open(&f->ev, c, "1:900");
	drain(f, u, c);
	assert_int_equal(c->n, 3);
	o = msg(c, 1);
	assert_string_equal(str(o, "type"), "gap");
	assert_string_equal(str(o, "after"), "1:900");
	assert_string_equal(str(o, "resume"), "2:-1");
	assert_true(cJSON_IsNull(cJSON_GetObjectItem(o, "lost")));
	assert_non_null(str(o, "reason"));
	cJSON_Delete(o);
	assert_int_equal(wake_ids(c, 2, ids, 4), 1);
	assert_string_equal(ids[0], "2:5");
	assert_true(f->ev.gaps == 1);
	events_close(&f->ev, u);
	conn_free(c);
	fx_free(f);
}

/*
 * A subscriber that stopped reading falls behind at its queue's bound; a
 * new generation comes while it is behind: the wakes of the old one it
 * never got are counted in the gap (they were in the ring), the records
 * it missed in one `dropped`, and every wake it did get came once, in
 * order.
 */
static void
test_behind_gap_and_dropped(void **state)
{
	struct fx		*f = fx_new();
	struct conn		*c = conn_new();
	struct events_sub	*u;
	static char		 ids[MAXMSG][32];
	cJSON			*o;
	int			 i, n, gap = -1, dropped = -1;
	uint64_t		 total = EVENTS_SUB_MAX_MSGS + 100;

	(void)state;
	events_ring_reset(&f->ev, 1, 0);
	events_ready(&f->ev);
	u = events_open(&f->ev, c, NULL);
	for (i = 1; i <= (int)total; i++)
		wake(f, 1, (uint64_t)i * 10);
	assert_true(f->ev.behind == 1);
	record(f);
	record(f);
	record(f);
	/* it reads a little: still behind, fed from the ring as it reads */
	c->want = 0;
	for (i = 0; i < 10; i++)
		assert_int_equal(events_writable(&f->ev, u), 0);
	hello_gen = 2;
	events_ring_reset(&f->ev, 2, 0);
	wake(f, 2, 7);
	c->want = 1;
	drain(f, u, c);
	for (i = 0; i < c->n; i++) {
		o = msg(c, i);
		if (strcmp(str(o, "type"), "gap") == 0) {
			assert_int_equal(gap, -1);
			gap = i;
			assert_string_equal(str(o, "resume"), "2:-1");
			assert_true(cJSON_IsNumber(cJSON_GetObjectItem(o,
			    "lost")));
			/* the wakes of the old generation it never got:
			 * all but the i - 1 before the gap */
			assert_int_equal((int)cJSON_GetObjectItem(o,
			    "lost")->valuedouble, (int)total - (i - 1));
		} else if (strcmp(str(o, "type"), "dropped") == 0) {
			dropped = i;
			assert_int_equal(cJSON_GetObjectItem(o,
			    "count")->valueint, 3);
			assert_string_equal(str(o, "what"), "record");
		}
		cJSON_Delete(o);
	}
	assert_true(gap > 0);
	assert_true(dropped > gap);
	n = wake_ids(c, 0, ids, MAXMSG);
	/* the old generation's wakes up to the gap, in order, once; then
	 * the new one's */
	for (i = 0; i < n - 1; i++) {
		char	want[32];

		snprintf(want, sizeof(want), "1:%d", (i + 1) * 10);
		assert_string_equal(ids[i], want);
	}
	assert_string_equal(ids[n - 1], "2:7");
	assert_true(f->ev.dropped == 3);
	events_close(&f->ev, u);
	conn_free(c);
	fx_free(f);
}

/* Behind, then reading again in the same generation: every wake once, in
 * order, and the records it missed in one `dropped` at the end. */
static void
test_behind_catches_up(void **state)
{
	struct fx		*f = fx_new();
	struct conn		*c = conn_new();
	struct events_sub	*u;
	static char		 ids[MAXMSG][32];
	cJSON			*o;
	int			 i, n, missed = 0;
	int			 total = EVENTS_SUB_MAX_MSGS + 500;

	(void)state;
	events_ring_reset(&f->ev, 1, 0);
	events_ready(&f->ev);
	u = events_open(&f->ev, c, NULL);
	for (i = 1; i <= total; i++) {
		wake(f, 1, (uint64_t)i);
		if (i % 500 == 0) {
			missed += f->ev.behind > 0;
			record(f);
		}
	}
	assert_true(f->ev.behind == 1 && missed > 0);
	drain(f, u, c);
	n = wake_ids(c, 0, ids, MAXMSG);
	assert_int_equal(n, total);
	for (i = 0; i < n; i++) {
		char	want[32];

		snprintf(want, sizeof(want), "1:%d", i + 1);
		assert_string_equal(ids[i], want);
	}
	/* the records before it fell behind were queued; those after are
	 * counted */
	o = msg(c, c->n - 1);
	assert_string_equal(str(o, "type"), "dropped");
	assert_int_equal(cJSON_GetObjectItem(o, "count")->valueint, missed);
	cJSON_Delete(o);
	record(f);				/* live again */
	drain(f, u, c);
	assert_type(c, c->n - 1, "record");
	events_close(&f->ev, u);
	conn_free(c);
	fx_free(f);
}

/* The cap is read at each open: a raised setting applies at once. */
static void
test_cap(void **state)
{
	struct fx		*f = fx_new();
	struct conn		*c[4];
	struct events_sub	*u[4];
	int			 i;

	(void)state;
	f->max_subs = 2;
	events_ring_reset(&f->ev, 1, 0);
	events_ready(&f->ev);
	for (i = 0; i < 4; i++)
		c[i] = conn_new();
	assert_non_null(u[0] = events_open(&f->ev, c[0], NULL));
	assert_non_null(u[1] = events_open(&f->ev, c[1], NULL));
	assert_null(events_open(&f->ev, c[2], NULL));
	assert_int_equal(c[2]->n, 0);
	assert_false(c[2]->want);
	assert_int_equal(events_count(&f->ev), 2);
	events_close(&f->ev, u[1]);
	assert_non_null(u[1] = events_open(&f->ev, c[1], NULL));
	f->max_subs = 3;
	assert_non_null(u[2] = events_open(&f->ev, c[2], NULL));
	assert_int_equal(events_count(&f->ev), 3);
	for (i = 0; i < 3; i++)
		events_close(&f->ev, u[i]);
	for (i = 0; i < 4; i++)
		conn_free(c[i]);
	fx_free(f);
}

/* A write that fails is said to the transport, which closes. */
static void
test_write_fails(void **state)
{
	struct fx		*f = fx_new();
	struct conn		*c = conn_new();
	struct events_sub	*u;

	(void)state;
	events_ring_reset(&f->ev, 1, 0);
	events_ready(&f->ev);
	u = events_open(&f->ev, c, NULL);
	c->fail = 1;
	assert_int_equal(events_writable(&f->ev, u), -1);
	events_close(&f->ev, u);
	conn_free(c);
	fx_free(f);
}

/* Before the ring, the wakes are made again from perf.jsonl on the pool:
 * the meaningful lines only, with their ids, "replayed", the row now. */
static void
test_catchup_from_file(void **state)
{
	struct fx		*f = fx_new();
	struct conn		*c = conn_new();
	struct events_sub	*u;
	char			 path[128], ids[8][32], want[3][32];
	static const char	*lines[] = {
		"{\"type\":\"hitch\",\"at\":\"2026-11-02T14:30:02.400Z\","
		    "\"frame\":1144,\"phase\":\"play\",\"build\":\"v1\","
		    "\"frameMs\":141.2,\"medianMs\":8.2,"
		    "\"classification\":{\"guess\":\"shader-compile\","
		    "\"confidence\":\"medium\",\"evidence\":\"programs +3\"}}",
		"{\"type\":\"heartbeat\",\"at\":\"2026-11-02T14:30:03.000Z\","
		    "\"build\":\"v1\",\"fps\":60}",
		"{\"type\":\"hitch\",\"at\":\"2026-11-02T14:30:04.400Z\","
		    "\"frame\":1244,\"phase\":\"play\",\"build\":\"v1\","
		    "\"frameMs\":30.0,\"medianMs\":8.2}",
		"{\"type\":\"usermark\",\"at\":\"2026-11-02T14:30:05.000Z\","
		    "\"phase\":\"play\",\"build\":\"v1\",\"note\":\"stutter\"}",
	};
	FILE			*fp;
	long			 off[4];
	int			 i, n;
	cJSON			*o;

	(void)state;
	snprintf(path, sizeof(path), "%s/perf.jsonl", f->dir);
	assert_non_null(fp = fopen(path, "w"));
	for (i = 0; i < 4; i++) {
		off[i] = ftell(fp);
		fprintf(fp, "%s\n", lines[i]);
	}
	/* the ring starts after the last line (they were folded without
	 * waking, as after a restart: the daemon's SEED) */
	events_ring_reset(&f->ev, 1, (uint64_t)off[3] + 1);
	fclose(fp);
	events_ready(&f->ev);
	u = events_open(&f->ev, c, "1:-1");
	drain_all(f, u, c);
	snprintf(want[0], 32, "1:%ld", off[0]);
	snprintf(want[1], 32, "1:%ld", off[3]);
	n = wake_ids(c, 1, ids, 8);
	assert_int_equal(n, 2);		/* the 30 ms hitch does not wake */
	assert_string_equal(ids[0], want[0]);
	assert_string_equal(ids[1], want[1]);
	o = msg(c, 1);
	assert_true(cJSON_IsTrue(cJSON_GetObjectItem(o, "replayed")));
	assert_non_null(strstr(str(o, "line"), "status=open"));
	cJSON_Delete(o);
	assert_true(f->ev.from_file == 2);
	wake(f, 1, 100000);		/* live after the file */
	drain(f, u, c);
	assert_int_equal(wake_ids(c, 1, ids, 8), 3);
	events_close(&f->ev, u);
	conn_free(c);
	(void)unlink(path);
	fx_free(f);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_since_parse),
		cmocka_unit_test(test_hello_then_live),
		cmocka_unit_test(test_catchup_from_ring),
		cmocka_unit_test(test_gap_old_generation),
		cmocka_unit_test(test_behind_gap_and_dropped),
		cmocka_unit_test(test_behind_catches_up),
		cmocka_unit_test(test_cap),
		cmocka_unit_test(test_write_fails),
		cmocka_unit_test(test_catchup_from_file),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
