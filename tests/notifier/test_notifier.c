/*
 * test_notifier — notifier/notifier: the one object that decides whether
 * a folded record wakes, on a real libuv loop with recording channels.
 * Replayed records reach only the channels that keep them, catch-up is
 * summed up before the first record that wakes after it, the rate limit
 * holds back and the flush timer says what it held, a SIGHUP that changes
 * the limits says what the old limiter held, and channels are called in
 * the order they were added.  What skips the limits (a usermark, a new
 * footprint, a regression), what an earlier run said (resume), and the
 * write-ahead: a gated channel sees a wake only once its id is on disk,
 * in a slot of the state directory.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "base/base.h"
#include "tests/uvtest.h"

#include "notifier/notifier.h"
#include "project/statedir.h"

#define MAXCALLS	64

struct call {
	char		 chan;		/* which channel: 'A' or 'B' */
	int		 summary;
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
	/* the store: a slot in a temp dir, written by the notifier's call */
	char			 dir[64], path[128];
	int			 fd, saves;
	char			 on_disk[WAKE_LINE_SIZE];	/* at the gated call */
	int			 gated_calls;
};

static void
record_call(struct fx *fx, char chan, const struct notifier_wake *w)
{
	struct call	*c;

	assert_true(fx->ncalls < MAXCALLS);
	c = &fx->calls[fx->ncalls++];
	c->chan = chan;
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

/* What the slot says right now ("" if nothing readable). */
static void
read_store(struct fx *fx, char *out, size_t cap)
{
	if (statedir_slot_read(fx->path, out, cap) != 0)
		out[0] = '\0';
}

/* G: a gated channel (the events socket's place): what is on disk when
 * the wake arrives is recorded with it. */
static void
chan_g(void *arg, const struct notifier_wake *w)
{
	struct fx	*fx = arg;

	read_store(fx, fx->on_disk, sizeof(fx->on_disk));
	fx->gated_calls++;
	record_call(fx, 'G', w);
}

static int
store_save(void *arg, uint64_t gen, uint64_t off)
{
	struct fx	*fx = arg;
	char		 text[64];

	fx->saves++;
	snprintf(text, sizeof(text), "said %llu:%llu\n",
	    (unsigned long long)gen, (unsigned long long)off);
	return statedir_slot_write(fx->fd, text);
}

/* Gate a channel G on a slot in a fresh temp directory (broken: a
 * descriptor that is not open, as if the slot could not be opened). */
static void
gate(struct fx *fx, int broken)
{
	struct notifier_store	st = { store_save, fx };

	snprintf(fx->dir, sizeof(fx->dir), "/tmp/test_notifier.XXXXXX");
	assert_non_null(mkdtemp(fx->dir));
	snprintf(fx->path, sizeof(fx->path), "%s/wakes", fx->dir);
	fx->fd = -1;
	if (!broken)
		assert_int_equal(statedir_slot_open(fx->path, "said -\n", 0644,
		    &fx->fd), 0);
	assert_int_equal(notifier_channel_add(&fx->n, chan_g, fx,
	    NOTIFIER_GATED), 0);
	notifier_store_set(&fx->n, &st);
}

static void
ungate(struct fx *fx)
{
	statedir_slot_close(fx->fd);
	unlink(fx->path);
	rmdir(fx->dir);
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
	assert_int_equal(notifier_channel_add(&fx->n, chan_a, fx, 0), 0);
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

/* What an earlier run said reaches no channel, and the caller is told
 * (it makes the wake again from the file for a watch that resumes);
 * records that are not meaningful reach nobody. */
static void
notifier_said_before_goes_nowhere(void **state)
{
	struct fx		*fx = *state;
	struct ledger_event	 ev = hitch("81e5eb9b", 150, base_now_ms());
	struct ledger_event	 small = hitch("81e5eb9b", 20, base_now_ms());
	struct notifier_status	 st;

	assert_int_equal(notifier_record(&fx->n, &ev, 3, 1048576,
	    NOTIFIER_SEED), 1);
	assert_int_equal(notifier_record(&fx->n, &small, 3, 2000000,
	    NOTIFIER_LIVE), 0);
	assert_int_equal(fx->ncalls, 0);
	notifier_status(&fx->n, &st);
	assert_int_equal(st.wakes, 0);

	/* live: every channel, in the order they were added */
	assert_int_equal(notifier_record(&fx->n, &ev, 3, 2000100,
	    NOTIFIER_LIVE), 0);
	assert_int_equal(fx->ncalls, 2);
	assert_int_equal(fx->calls[0].chan, 'A');
	assert_int_equal(fx->calls[1].chan, 'B');
	assert_string_equal(fx->calls[1].id, "3:2000100");
	assert_non_null(strstr(fx->calls[1].line, "fp=81e5eb9b"));
	assert_non_null(strstr(fx->calls[0].json, "\"id\":\"3:2000100\""));
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
	int64_t			 old = base_now_ms() - 3600 * 1000;
	struct ledger_event	 a = hitch("aaaaaaaa", 150, old);
	struct ledger_event	 b = hitch("bbbbbbbb", 180, old + 1000);
	struct ledger_event	 fresh = hitch("cccccccc", 200, base_now_ms());
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
	struct ledger_event	 ev = hitch("81e5eb9b", 150, base_now_ms());
	struct notifier_status	 st;

	fx->cfg.per_fp_ms = 150;
	assert_int_equal(notifier_reconfigure(&fx->n), 0);
	notifier_record(&fx->n, &ev, 1, 0, NOTIFIER_LIVE);
	ev.count = 2;			/* a repeat: the first always wakes */
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
	struct ledger_event	 ev = hitch("81e5eb9b", 150, base_now_ms());

	fx->cfg.per_fp_ms = 3600 * 1000;
	assert_int_equal(notifier_reconfigure(&fx->n), 0);
	notifier_record(&fx->n, &ev, 1, 0, NOTIFIER_LIVE);
	ev.count = 2;
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

/*
 * The limits are for repeats.  A usermark wakes at once, inside a
 * footprint window and with the global window full, and says what was
 * held in its own line; so does the first line saying a footprint
 * regressed (once); a new footprint wakes past a full window.
 */
static void
notifier_what_matters_wakes_at_once(void **state)
{
	struct fx		*fx = *state;
	struct ledger_event	 ev = hitch("81e5eb9b", 150, base_now_ms());
	struct ledger_event	 mark = hitch("68faa5c5", 40, base_now_ms());
	struct ledger_event	 other = hitch("16a7255f", 150, base_now_ms());

	fx->cfg.per_fp_ms = 3600 * 1000;
	fx->cfg.global_max = 2;
	assert_int_equal(notifier_reconfigure(&fx->n), 0);
	notifier_record(&fx->n, &ev, 1, 0, NOTIFIER_LIVE);	/* new */
	ev.count = 2;
	notifier_record(&fx->n, &ev, 1, 100, NOTIFIER_LIVE);	/* held */
	assert_int_equal(fx->ncalls, 2);
	mark.type = "usermark";
	mark.note = "it hitched when I turned";
	mark.count = 3;
	notifier_record(&fx->n, &mark, 1, 200, NOTIFIER_LIVE);
	assert_int_equal(fx->ncalls, 4);
	assert_false(fx->calls[2].summary);
	assert_string_equal(fx->calls[2].id, "1:200");
	assert_non_null(strstr(fx->calls[2].line, "note=\"it hitched when I "
	    "turned\""));
	assert_non_null(strstr(fx->calls[2].line, " +1 more since "));
	assert_non_null(strstr(fx->calls[2].line, ": 81e5eb9b ×1 150ms "
	    "shader-compile open"));
	assert_non_null(strstr(fx->calls[2].json, "\"heldFrom\":\"1:100\""));
	/* a new footprint: past the full window (two lines), up to twice
	 * its size */
	notifier_record(&fx->n, &other, 1, 300, NOTIFIER_LIVE);
	assert_int_equal(fx->ncalls, 6);
	/* a regression of 81e5eb9b: through its footprint window, once */
	ev.status = "regressed";
	ev.count = 3;
	notifier_record(&fx->n, &ev, 1, 400, NOTIFIER_LIVE);
	assert_int_equal(fx->ncalls, 8);
	assert_non_null(strstr(fx->calls[6].line, "status=regressed"));
	ev.count = 4;
	notifier_record(&fx->n, &ev, 1, 500, NOTIFIER_LIVE);
	assert_int_equal(fx->ncalls, 8);	/* its repeat is held */
}

/*
 * Write-ahead: a gated channel gets a wake only once the slot on disk
 * names its id, stored once per line; the channels before it are not
 * held.
 */
static void
notifier_gated_after_store(void **state)
{
	struct fx		*fx = *state;
	struct ledger_event	 a = hitch("aaaaaaaa", 150, base_now_ms());
	struct ledger_event	 b = hitch("bbbbbbbb", 150, base_now_ms());
	struct notifier_status	 st;

	gate(fx, 0);
	notifier_record(&fx->n, &a, 4, 10, NOTIFIER_LIVE);
	assert_int_equal(fx->gated_calls, 1);
	assert_string_equal(fx->on_disk, "said 4:10\n");
	notifier_record(&fx->n, &b, 4, 20, NOTIFIER_LIVE);
	assert_int_equal(fx->gated_calls, 2);
	assert_string_equal(fx->on_disk, "said 4:20\n");
	assert_int_equal(fx->saves, 2);
	assert_int_equal(fx->ncalls, 6);	/* A, B and G, twice */
	notifier_status(&fx->n, &st);
	assert_true(st.have_stored && st.stored_gen == 4 &&
	    st.stored_off == 20);
	/* what an earlier run said is neither stored again nor sent */
	assert_int_equal(notifier_record(&fx->n, &a, 4, 5, NOTIFIER_SEED),
	    1);
	assert_int_equal(fx->saves, 2);
	assert_int_equal(fx->gated_calls, 2);
	ungate(fx);
}

/* A store that cannot be written does not keep wakes from watchers: they
 * go out anyway, and the failure is counted. */
static void
notifier_gated_store_fails(void **state)
{
	struct fx		*fx = *state;
	struct ledger_event	 a = hitch("aaaaaaaa", 150, base_now_ms());
	struct ledger_event	 b = hitch("bbbbbbbb", 150, base_now_ms());
	struct notifier_status	 st;

	gate(fx, 1);
	notifier_record(&fx->n, &a, 4, 10, NOTIFIER_LIVE);
	notifier_record(&fx->n, &b, 4, 20, NOTIFIER_LIVE);
	assert_int_equal(fx->gated_calls, 2);
	notifier_status(&fx->n, &st);
	assert_int_equal(st.store_errors, 2);
	assert_false(st.have_stored);
	ungate(fx);
}

/*
 * After a restart: what the earlier run said (up to its last line) is not
 * said again, before the cursor or after it; what it had not said yet is said
 * now — a repeat it held stays held (no burst from a fresh limiter), its
 * old records go into the catch-up line, a first occurrence wakes.
 * Without resume (a state directory from before the store) everything
 * before the cursor counts as said.
 */
static void
notifier_resume_says_the_unsaid(void **state)
{
	struct fx		*fx = *state;
	int64_t			 old = base_now_ms() - 3600 * 1000;
	struct ledger_event	 said = hitch("aaaaaaaa", 150, base_now_ms());
	struct ledger_event	 held = hitch("aaaaaaaa", 150, base_now_ms());
	struct ledger_event	 stale = hitch("bbbbbbbb", 150, old);
	struct ledger_event	 late = hitch("cccccccc", 150, base_now_ms());
	struct ledger_event	 fresh = hitch("dddddddd", 150, base_now_ms());

	notifier_resume(&fx->n, 1, 2, 100);
	assert_int_equal(notifier_record(&fx->n, &said, 2, 100,
	    NOTIFIER_SEED), 1);
	held.count = 2;
	assert_int_equal(notifier_record(&fx->n, &held, 2, 200,
	    NOTIFIER_SEED), 0);
	assert_int_equal(notifier_record(&fx->n, &stale, 2, 300,
	    NOTIFIER_SEED), 0);
	assert_int_equal(notifier_record(&fx->n, &late, 2, 50,
	    NOTIFIER_CATCHUP), 1);
	/* 2:100 and 2:50 said before; 2:200 held, 2:300 caught up */
	assert_int_equal(fx->ncalls, 0);
	notifier_ready(&fx->n);
	assert_int_equal(fx->ncalls, 2);
	assert_true(fx->calls[0].summary);
	assert_string_equal(fx->calls[0].id, "2:300");
	assert_non_null(strstr(fx->calls[0].line, "catch-up: 1 meaningful "
	    "record while stopped"));
	assert_non_null(strstr(fx->calls[0].line, "and +1 held back since"));
	assert_non_null(strstr(fx->calls[0].line, ": aaaaaaaa ×1 150ms"));
	assert_non_null(strstr(fx->calls[0].line, ", bbbbbbbb ×1 150ms"));
	/* a first occurrence the earlier run never said wakes */
	notifier_record(&fx->n, &fresh, 2, 400, NOTIFIER_SEED);
	assert_int_equal(fx->ncalls, 4);
	assert_string_equal(fx->calls[2].id, "2:400");
}

static void
notifier_resume_unknown_keeps_the_old_rule(void **state)
{
	struct fx		*fx = *state;
	struct ledger_event	 ev = hitch("aaaaaaaa", 150, base_now_ms());

	assert_int_equal(notifier_record(&fx->n, &ev, 2, 100,
	    NOTIFIER_SEED), 1);
	assert_int_equal(fx->ncalls, 0);
	/* "nothing said yet": the same record is said */
	notifier_resume(&fx->n, 0, 0, 0);
	assert_int_equal(notifier_record(&fx->n, &ev, 2, 100,
	    NOTIFIER_SEED), 0);
	assert_int_equal(fx->ncalls, 2);
}

/*
 * Line ids only grow.  A record held back before catch-up records that
 * come after it in the file is said in the catch-up line (whose id is the
 * greatest), never after it; a new generation says what the old one still
 * held first.
 */
static void
notifier_ids_only_grow(void **state)
{
	struct fx		*fx = *state;
	int64_t			 old = base_now_ms() - 3600 * 1000;
	struct ledger_event	 a = hitch("aaaaaaaa", 150, base_now_ms());
	struct ledger_event	 stale = hitch("bbbbbbbb", 150, old);
	struct notifier_status	 st;

	fx->cfg.per_fp_ms = 3600 * 1000;
	assert_int_equal(notifier_reconfigure(&fx->n), 0);
	notifier_record(&fx->n, &a, 1, 10, NOTIFIER_CATCHUP);	/* wakes */
	a.count = 2;
	notifier_record(&fx->n, &a, 1, 20, NOTIFIER_CATCHUP);	/* held */
	notifier_record(&fx->n, &stale, 1, 30, NOTIFIER_CATCHUP);
	notifier_ready(&fx->n);
	assert_int_equal(fx->ncalls, 4);
	assert_string_equal(fx->calls[2].id, "1:30");
	assert_non_null(strstr(fx->calls[2].line, "and +1 held back since"));
	notifier_status(&fx->n, &st);
	assert_int_equal(st.pending, 0);
	assert_int_equal(st.catchup, 0);

	a.count = 3;
	notifier_record(&fx->n, &a, 1, 40, NOTIFIER_LIVE);	/* held */
	assert_int_equal(fx->ncalls, 4);
	notifier_generation(&fx->n, "already in the new file");
	assert_int_equal(fx->ncalls, 6);
	assert_string_equal(fx->calls[4].id, "1:40");
	assert_non_null(strstr(fx->calls[4].line, "held back: +1 more"));
	stale.count = 1;
	notifier_record(&fx->n, &stale, 2, 0, NOTIFIER_CATCHUP);
	notifier_ready(&fx->n);
	assert_non_null(strstr(fx->calls[6].line, "1 meaningful record "
	    "already in the new file"));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(notifier_said_before_goes_nowhere,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(notifier_catchup_summed_up,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(notifier_held_back_then_flushed,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(notifier_reconfigure_says_held,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(
		    notifier_what_matters_wakes_at_once, setup, teardown),
		cmocka_unit_test_setup_teardown(notifier_gated_after_store,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(notifier_gated_store_fails,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(notifier_resume_says_the_unsaid,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(
		    notifier_resume_unknown_keeps_the_old_rule, setup, teardown),
		cmocka_unit_test_setup_teardown(notifier_ids_only_grow,
		    setup, teardown),
	};

	setenv("TZ", "UTC", 1);
	tzset();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
