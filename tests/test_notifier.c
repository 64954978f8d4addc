/*
 * test_notifier — notifier/notifier: the one object that decides whether
 * a folded record wakes, on a real libuv loop with recording channels.
 * Replayed records reach only the channels that keep them, catch-up is
 * summed up before the first record that wakes after it, the rate limit
 * holds back and the flush timer says what it held, a SIGHUP that changes
 * the limits says what the old limiter held, and channels are called in
 * the order they were added.
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

#include "tests/uvtest.h"

#include "notifier/notifier.h"

#define MAXCALLS	16

struct call {
	char		 chan;		/* which channel: 'A' or 'B' */
	int		 replay, summary;
	char		 id[WAKE_ID_SIZE];
	char		 line[WAKE_LINE_SIZE];
	char		 json[1024];
};

struct fx {
	uv_loop_t		 loop;
	struct wake_config	 cfg;
	struct notifier		 n;
	struct call		 calls[MAXCALLS];
	int			 ncalls;
	int			 stop_on_summary;
};

static void
record_call(struct fx *fx, char chan, const struct notifier_wake *w)
{
	struct call	*c;

	assert_true(fx->ncalls < MAXCALLS);
	c = &fx->calls[fx->ncalls++];
	c->chan = chan;
	c->replay = w->replay;
	c->summary = w->ev == NULL;
	snprintf(c->id, sizeof(c->id), "%s", w->id);
	snprintf(c->line, sizeof(c->line), "%s", w->line);
	snprintf(c->json, sizeof(c->json), "%.*s", (int)w->len, w->text);
	if (c->summary && fx->stop_on_summary)
		uv_stop(&fx->loop);
}

static void
chan_a(void *arg, const struct notifier_wake *w)
{
	record_call(arg, 'A', w);
}

static void
chan_b(void *arg, const struct notifier_wake *w)
{
	record_call(arg, 'B', w);
}

static int
setup(void **state)
{
	struct fx	*fx = calloc(1, sizeof(*fx));

	assert_non_null(fx);
	assert_int_equal(uv_loop_init(&fx->loop), 0);
	wake_config_defaults(&fx->cfg);
	fx->cfg.desktop = 0;
	assert_int_equal(notifier_init(&fx->n, &fx->loop, &fx->cfg, NULL,
	    NULL), 0);
	/* A keeps replays (the events socket), B does not (the log) */
	assert_int_equal(notifier_channel_add(&fx->n, chan_a, fx,
	    NOTIFIER_REPLAYS), 0);
	assert_int_equal(notifier_channel_add(&fx->n, chan_b, fx, 0), 0);
	*state = fx;
	return 0;
}

static int
teardown(void **state)
{
	struct fx	*fx = *state;

	notifier_close(&fx->n);
	uv_run(&fx->loop, UV_RUN_DEFAULT);
	notifier_free(&fx->n);
	assert_int_equal(uv_loop_close(&fx->loop), 0);
	free(fx);
	return 0;
}

static int64_t
now_ms(void)
{
	struct timespec	ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static struct ledger_event
hitch(const char *fp, double ms, int64_t at)
{
	struct ledger_event	ev;

	memset(&ev, 0, sizeof(ev));
	ev.type = "hitch";
	ev.at_ms = at;
	ev.incident = 1;
	ev.counted = 1;
	ev.value = ms;
	ev.has_value = 1;
	ev.unit = "ms";
	snprintf(ev.id, sizeof(ev.id), "%s", fp);
	ev.key = "hitch|play|shader-compile|-|ctx:";
	ev.phase = "play";
	ev.build = "v1";
	ev.guess = "shader-compile";
	ev.confidence = "high";
	ev.evidence = "programs +1";
	ev.count = 1;
	ev.status = "open";
	return ev;
}

/* Replayed wakes reach only the channels that keep them, marked; records
 * that are not meaningful reach nobody. */
static void
notifier_replay_only_where_kept(void **state)
{
	struct fx		*fx = *state;
	struct ledger_event	 ev = hitch("81e5eb9b", 150, now_ms());
	struct ledger_event	 small = hitch("81e5eb9b", 20, now_ms());
	struct notifier_status	 st;

	notifier_record(&fx->n, &ev, 3, 1048576, NOTIFIER_REPLAY);
	notifier_record(&fx->n, &small, 3, 2000000, NOTIFIER_LIVE);
	assert_int_equal(fx->ncalls, 1);
	assert_int_equal(fx->calls[0].chan, 'A');
	assert_true(fx->calls[0].replay);
	assert_string_equal(fx->calls[0].id, "3:1048576");
	assert_non_null(strstr(fx->calls[0].line, "fp=81e5eb9b"));
	assert_non_null(strstr(fx->calls[0].json, "\"id\":\"3:1048576\""));
	notifier_status(&fx->n, &st);
	assert_int_equal(st.wakes, 0);

	/* live: every channel, in the order they were added */
	notifier_record(&fx->n, &ev, 3, 2000100, NOTIFIER_LIVE);
	assert_int_equal(fx->ncalls, 3);
	assert_int_equal(fx->calls[1].chan, 'A');
	assert_int_equal(fx->calls[2].chan, 'B');
	assert_false(fx->calls[1].replay || fx->calls[2].replay);
	assert_string_equal(fx->calls[2].id, "3:2000100");
	notifier_status(&fx->n, &st);
	assert_int_equal(st.wakes, 1);
}

/* Old catch-up records are summed up; the summary goes out before the
 * first record that wakes after it, or at ready, with the id of the last
 * record it stands for. */
static void
notifier_catchup_summed_up(void **state)
{
	struct fx		*fx = *state;
	int64_t			 old = now_ms() - 3600 * 1000;
	struct ledger_event	 a = hitch("aaaaaaaa", 150, old);
	struct ledger_event	 b = hitch("bbbbbbbb", 180, old + 1000);
	struct ledger_event	 fresh = hitch("cccccccc", 200, now_ms());
	struct notifier_status	 st;

	notifier_record(&fx->n, &a, 2, 100, NOTIFIER_CATCHUP);
	notifier_record(&fx->n, &b, 2, 200, NOTIFIER_CATCHUP);
	assert_int_equal(fx->ncalls, 0);
	notifier_status(&fx->n, &st);
	assert_int_equal(st.catchup, 2);
	notifier_record(&fx->n, &fresh, 2, 300, NOTIFIER_CATCHUP);
	assert_int_equal(fx->ncalls, 4);
	assert_true(fx->calls[0].summary);
	assert_non_null(strstr(fx->calls[0].line, "sloptimize catch-up: 2 "));
	assert_string_equal(fx->calls[0].id, "2:200");
	assert_false(fx->calls[2].summary);
	assert_string_equal(fx->calls[2].id, "2:300");

	/* the next batch is said at ready */
	notifier_record(&fx->n, &a, 2, 400, NOTIFIER_CATCHUP);
	assert_int_equal(fx->ncalls, 4);
	notifier_ready(&fx->n);
	assert_int_equal(fx->ncalls, 6);
	assert_true(fx->calls[5].summary);
	assert_non_null(strstr(fx->calls[5].line, "sloptimize catch-up: 1 "));
	assert_string_equal(fx->calls[5].id, "2:400");
	notifier_ready(&fx->n);		/* nothing more to say */
	assert_int_equal(fx->ncalls, 6);
}

/* A repeat inside per_fp_ms is held back; the flush timer says it when
 * the window reopens, with the held record's id. */
static void
notifier_held_back_then_flushed(void **state)
{
	struct fx		*fx = *state;
	struct ledger_event	 ev = hitch("81e5eb9b", 150, now_ms());
	struct notifier_status	 st;

	fx->cfg.per_fp_ms = 150;
	assert_int_equal(notifier_reconfigure(&fx->n), 0);
	notifier_record(&fx->n, &ev, 1, 0, NOTIFIER_LIVE);
	notifier_record(&fx->n, &ev, 1, 500, NOTIFIER_LIVE);
	assert_int_equal(fx->ncalls, 2);
	notifier_status(&fx->n, &st);
	assert_int_equal(st.pending, 1);
	fx->stop_on_summary = 1;
	run_with_deadline(&fx->loop, 10000);
	assert_int_equal(fx->ncalls, 4);
	assert_true(fx->calls[2].summary);
	assert_non_null(strstr(fx->calls[2].line, "held back: +1 more"));
	assert_string_equal(fx->calls[2].id, "1:500");
	notifier_status(&fx->n, &st);
	assert_int_equal(st.pending, 0);
	assert_int_equal(st.held, 1);
	assert_int_equal(st.wakes, 2);
}

/* New limits (SIGHUP): what the old limiter held is said at once, not
 * lost with it. */
static void
notifier_reconfigure_says_held(void **state)
{
	struct fx		*fx = *state;
	struct ledger_event	 ev = hitch("81e5eb9b", 150, now_ms());

	fx->cfg.per_fp_ms = 3600 * 1000;
	assert_int_equal(notifier_reconfigure(&fx->n), 0);
	notifier_record(&fx->n, &ev, 1, 0, NOTIFIER_LIVE);
	notifier_record(&fx->n, &ev, 1, 100, NOTIFIER_LIVE);
	assert_int_equal(fx->ncalls, 2);
	assert_int_equal(notifier_reconfigure(&fx->n), 0);	/* unchanged */
	assert_int_equal(fx->ncalls, 2);
	fx->cfg.per_fp_ms = 0;
	assert_int_equal(notifier_reconfigure(&fx->n), 0);
	assert_int_equal(fx->ncalls, 4);
	assert_true(fx->calls[3].summary);
	assert_non_null(strstr(fx->calls[3].line, "held back: +1 more"));
	/* and the new limiter lets the repeat through */
	notifier_record(&fx->n, &ev, 1, 200, NOTIFIER_LIVE);
	assert_int_equal(fx->ncalls, 6);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(notifier_replay_only_where_kept,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(notifier_catchup_summed_up,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(notifier_held_back_then_flushed,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(notifier_reconfigure_says_held,
		    setup, teardown),
	};

	setenv("TZ", "UTC", 1);
	tzset();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
