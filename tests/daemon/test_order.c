/*
 * order: the ingest route's batch order (daemon/order.h) on a real libuv
 * loop — batches in order go at once, one at a time per page; one ahead
 * of its predecessor waits for it, or for its deadline on the loop's
 * timer and is then let go with the gap counted; a duplicate is said and
 * never dispatched twice; a page the table forgot starts at its `first`;
 * the hold is bounded in batches and bytes; a held batch whose request
 * went away is let go; closing lets everything held go.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <uv.h>

#include "daemon/order.h"
#include "tests/uvtest.h"

/* The items are small ints; what the table dispatched, in order. */
struct rec {
	int		 got[1024];	/* a flood is some 600 batches */
	uint64_t	 at[1024];	/* uv_now() when dispatched */
	int		 n;
	int		 released[64];
	int		 nrel;
	uv_loop_t	*loop;
};

static int	 items[64];

static void
dispatch(void *arg, void *item)
{
	struct rec	*r = arg;

	r->at[r->n] = uv_now(r->loop);
	r->got[r->n++] = *(int *)item;
}

static void
release(void *arg, void *item)
{
	struct rec	*r = arg;

	r->released[r->nrel++] = *(int *)item;
}

static void
setup(struct order *o, struct rec *r, uv_loop_t *loop, unsigned pages,
    uint64_t hold_ms, unsigned held_max, size_t held_bytes)
{
	struct order_limits	lim = { pages, hold_ms, held_max, held_bytes };
	int			i;

	for (i = 0; i < 64; i++)
		items[i] = i;
	memset(r, 0, sizeof(*r));
	r->loop = loop;
	assert_int_equal(uv_loop_init(loop), 0);
	assert_int_equal(order_init(o, loop, &lim, dispatch, release, r), 0);
}

static void
teardown(struct order *o, uv_loop_t *loop)
{
	order_close(o);
	uv_run(loop, UV_RUN_DEFAULT);
	order_free(o);
	assert_int_equal(uv_loop_close(loop), 0);
}

#define OFFER(id, seq, first)						\
	order_offer(&o, (id), "", (seq), (first), &items[(seq)], 100)

static void
order_in_order(void **state)
{
	uv_loop_t	loop;
	struct order	o;
	struct rec	r;
	uint64_t	s;

	(void)state;
	setup(&o, &r, &loop, 8, 500, 8, 1 << 20);
	/* one at a time, each answered before the next: straight through */
	for (s = 1; s <= 5; s++) {
		assert_int_equal(OFFER("pg", s, s), ORDER_TAKEN);
		assert_int_equal(r.n, (int)s);
		order_done(&o, "pg", s, 1);
	}
	/* two under way: the second waits for the first's append, not for
	 * a deadline */
	assert_int_equal(OFFER("pg", 6, 6), ORDER_TAKEN);
	assert_int_equal(OFFER("pg", 7, 6), ORDER_TAKEN);
	assert_int_equal(r.n, 6);
	order_done(&o, "pg", 6, 1);
	assert_int_equal(r.n, 7);
	order_done(&o, "pg", 7, 1);
	for (s = 0; s < 7; s++)
		assert_int_equal(r.got[s], (int)s + 1);
	assert_int_equal(o.missing, 0);
	assert_int_equal(o.nheld, 0);
	assert_int_equal(o.held_total, 1);
	/* another page is another sequence */
	assert_int_equal(OFFER("other", 1, 1), ORDER_TAKEN);
	assert_int_equal(r.got[7], 1);
	order_done(&o, "other", 1, 1);
	teardown(&o, &loop);
}

static void
order_out_of_order_within_deadline(void **state)
{
	uv_loop_t	loop;
	struct order	o;
	struct rec	r;

	(void)state;
	setup(&o, &r, &loop, 8, 10000, 8, 1 << 20);
	assert_int_equal(OFFER("pg", 1, 1), ORDER_TAKEN);
	order_done(&o, "pg", 1, 1);
	/* 3 and 4 overtake 2 on the network: held, nothing dispatched */
	assert_int_equal(OFFER("pg", 4, 2), ORDER_TAKEN);
	assert_int_equal(OFFER("pg", 3, 2), ORDER_TAKEN);
	assert_int_equal(r.n, 1);
	assert_int_equal(o.nheld, 2);
	assert_int_equal(o.held_bytes, 200);
	/* the same batch again while it is held: under way, not twice */
	assert_int_equal(OFFER("pg", 3, 2), ORDER_UNDER_WAY);
	assert_int_equal(OFFER("pg", 2, 2), ORDER_TAKEN);
	assert_int_equal(r.n, 2);	/* 2 only: one append at a time */
	assert_int_equal(OFFER("pg", 2, 2), ORDER_UNDER_WAY);
	order_done(&o, "pg", 2, 1);
	assert_int_equal(r.n, 3);
	order_done(&o, "pg", 3, 1);
	order_done(&o, "pg", 4, 1);
	assert_int_equal(r.n, 4);
	assert_int_equal(r.got[1], 2);
	assert_int_equal(r.got[2], 3);
	assert_int_equal(r.got[3], 4);
	assert_int_equal(o.missing, 0);
	assert_int_equal(o.nheld, 0);
	assert_int_equal(o.held_bytes, 0);
	/* nothing was left for the timer: the loop has nothing to run */
	run_with_deadline(&loop, 2000);
	assert_int_equal(r.n, 4);
	teardown(&o, &loop);
}

static void
order_predecessor_never_comes(void **state)
{
	uv_loop_t	loop;
	struct order	o;
	struct rec	r;
	uint64_t	t0;

	(void)state;
	setup(&o, &r, &loop, 8, 60, 8, 1 << 20);
	assert_int_equal(OFFER("pg", 1, 1), ORDER_TAKEN);
	order_done(&o, "pg", 1, 1);
	uv_update_time(&loop);
	t0 = uv_now(&loop);
	assert_int_equal(OFFER("pg", 4, 2), ORDER_TAKEN);	/* 2, 3 lost */
	assert_int_equal(OFFER("pg", 5, 2), ORDER_TAKEN);
	assert_int_equal(r.n, 1);
	/* the loop's timer lets 4 go at its deadline, not before */
	run_with_deadline(&loop, 5000);
	assert_int_equal(r.n, 2);
	assert_int_equal(r.got[1], 4);
	assert_true(r.at[1] >= t0 + 60);
	assert_int_equal(o.missing, 2);
	/* 5 waits for 4's append (not for the deadline) */
	order_done(&o, "pg", 4, 1);
	assert_int_equal(r.n, 3);
	assert_int_equal(r.got[2], 5);
	order_done(&o, "pg", 5, 1);
	/* 3 turns up after all: late, appended, not lost */
	assert_int_equal(OFFER("pg", 3, 3), ORDER_TAKEN);
	assert_int_equal(r.n, 4);
	assert_int_equal(r.got[3], 3);
	assert_int_equal(o.late, 1);
	order_done(&o, "pg", 3, 1);
	/* and is a duplicate from now on, as 4 and 5 are */
	assert_int_equal(OFFER("pg", 3, 3), ORDER_DUPLICATE);
	assert_int_equal(OFFER("pg", 4, 4), ORDER_DUPLICATE);
	assert_int_equal(OFFER("pg", 5, 5), ORDER_DUPLICATE);
	assert_int_equal(r.n, 4);
	teardown(&o, &loop);
}

static void
order_duplicate(void **state)
{
	uv_loop_t	loop;
	struct order	o;
	struct rec	r;

	(void)state;
	setup(&o, &r, &loop, 8, 500, 8, 1 << 20);
	assert_int_equal(OFFER("pg", 1, 1), ORDER_TAKEN);
	assert_int_equal(OFFER("pg", 1, 1), ORDER_UNDER_WAY);
	order_done(&o, "pg", 1, 1);
	/* the answer was lost; the page sends it again */
	assert_int_equal(OFFER("pg", 1, 1), ORDER_DUPLICATE);
	assert_int_equal(o.duplicates, 1);
	assert_int_equal(r.n, 1);
	/* a batch whose append failed is not appended: a retry goes */
	assert_int_equal(OFFER("pg", 2, 2), ORDER_TAKEN);
	order_done(&o, "pg", 2, 0);
	assert_int_equal(OFFER("pg", 3, 2), ORDER_TAKEN);	/* not held */
	assert_int_equal(r.n, 3);
	order_done(&o, "pg", 3, 1);
	assert_int_equal(OFFER("pg", 2, 2), ORDER_TAKEN);
	assert_int_equal(r.n, 4);
	assert_int_equal(r.got[3], 2);
	order_done(&o, "pg", 2, 1);
	assert_int_equal(OFFER("pg", 2, 2), ORDER_DUPLICATE);
	assert_int_equal(r.n, 4);
	teardown(&o, &loop);
}

static void
order_table_full_evicts(void **state)
{
	uv_loop_t	loop;
	struct order	o;
	struct rec	r;

	(void)state;
	setup(&o, &r, &loop, 2, 500, 8, 1 << 20);
	assert_int_equal(OFFER("a", 1, 1), ORDER_TAKEN);
	order_done(&o, "a", 1, 1);
	assert_int_equal(OFFER("b", 1, 1), ORDER_TAKEN);
	order_done(&o, "b", 1, 1);
	assert_int_equal(OFFER("b", 2, 2), ORDER_TAKEN);
	order_done(&o, "b", 2, 1);
	/* c takes the least recently used slot: a's */
	assert_int_equal(OFFER("c", 1, 1), ORDER_TAKEN);
	assert_int_equal(o.evicted, 1);
	/* a is forgotten: its next batch starts at its own first, without
	 * waiting for anything (and a retry of 1 would go again) */
	assert_int_equal(OFFER("a", 7, 7), ORDER_TAKEN);
	assert_int_equal(r.got[r.n - 1], 7);
	assert_int_equal(o.evicted, 2);	/* b's slot */
	/* both slots busy (c, a): a new page is not tracked */
	assert_int_equal(OFFER("d", 1, 1), ORDER_UNTRACKED);
	assert_int_equal(r.n, 5);
	order_done(&o, "c", 1, 1);
	order_done(&o, "a", 7, 1);
	assert_int_equal(OFFER("d", 3, 3), ORDER_TAKEN);
	order_done(&o, "d", 3, 1);
	/* a page that was answered for what it says (first) does not wait
	 * for batches it is not going to send */
	assert_int_equal(OFFER("d", 9, 9), ORDER_TAKEN);
	assert_int_equal(r.got[r.n - 1], 9);
	order_done(&o, "d", 9, 1);
	assert_int_equal(o.missing, 0);
	teardown(&o, &loop);
}

/*
 * A flood of page ids from one writer (300 new ids from a local process
 * with the token) pushes out that writer's own pages, never the game
 * page's (its Origin): the page's retry of an answered batch is still a
 * duplicate.  Within one writer the flood still pushes out the oldest
 * page — what the daemon cannot tell apart (docs/robustness.md).
 */
static void
order_flood_forgets_the_flooders_pages(void **state)
{
	uv_loop_t	loop;
	struct order	o;
	struct rec	r;
	char		id[32];
	int		i, n;

	(void)state;
	setup(&o, &r, &loop, ORDER_PAGES, 500, 8, 1 << 20);
	assert_int_equal(order_offer(&o, "game", "http://localhost:5173", 1, 1,
	    &items[1], 100), ORDER_TAKEN);
	order_done(&o, "game", 1, 1);
	assert_int_equal(order_offer(&o, "game", "http://localhost:5173", 2, 2,
	    &items[2], 100), ORDER_TAKEN);
	order_done(&o, "game", 2, 1);
	for (i = 0; i < 300; i++) {
		snprintf(id, sizeof(id), "flood-%d", i);
		assert_int_equal(order_offer(&o, id, "", 1, 1, &items[1], 100),
		    ORDER_TAKEN);
		order_done(&o, id, 1, 1);
	}
	assert_true(o.evicted >= 300 - (ORDER_PAGES - 1));
	n = r.n;
	/* the game's answer for batch 1 was lost: its retry is not appended */
	assert_int_equal(order_offer(&o, "game", "http://localhost:5173", 1, 1,
	    &items[1], 100), ORDER_DUPLICATE);
	assert_int_equal(r.n, n);
	/* the flooder's first page is the one that was forgotten */
	assert_int_equal(order_offer(&o, "flood-0", "", 1, 1, &items[1], 100),
	    ORDER_TAKEN);
	order_done(&o, "flood-0", 1, 1);
	/* a second writer starting up takes a slot from the flooder too */
	assert_int_equal(order_offer(&o, "other", "http://127.0.0.1:5173", 1, 1,
	    &items[1], 100), ORDER_TAKEN);
	order_done(&o, "other", 1, 1);
	assert_int_equal(order_offer(&o, "game", "http://localhost:5173", 2, 2,
	    &items[2], 100), ORDER_DUPLICATE);
	assert_int_equal(order_offer(&o, "other", "http://127.0.0.1:5173", 1, 1,
	    &items[1], 100), ORDER_DUPLICATE);
	/* the same flood sent with the game's Origin: its page goes too */
	for (i = 0; i < 300; i++) {
		snprintf(id, sizeof(id), "same-%d", i);
		assert_int_equal(order_offer(&o, id, "http://localhost:5173", 1,
		    1, &items[1], 100), ORDER_TAKEN);
		order_done(&o, id, 1, 1);
	}
	assert_int_equal(order_offer(&o, "game", "http://localhost:5173", 1, 1,
	    &items[1], 100), ORDER_TAKEN);
	order_done(&o, "game", 1, 1);
	teardown(&o, &loop);
}

static void
order_held_bounds(void **state)
{
	uv_loop_t	loop;
	struct order	o;
	struct rec	r;

	(void)state;
	setup(&o, &r, &loop, 8, 10000, 2, 250);
	assert_int_equal(OFFER("a", 1, 1), ORDER_TAKEN);	/* busy */
	assert_int_equal(OFFER("a", 3, 1), ORDER_TAKEN);	/* held 100 */
	assert_int_equal(OFFER("a", 4, 1), ORDER_TAKEN);	/* held 200 */
	/* a third held batch: over the count */
	assert_int_equal(OFFER("b", 2, 1), ORDER_FULL);
	assert_int_equal(o.full, 1);
	/* one that would not wait is never refused */
	assert_int_equal(OFFER("b", 1, 1), ORDER_TAKEN);
	order_done(&o, "b", 1, 1);
	order_done(&o, "a", 1, 1);		/* 3, 4 wait for 2 */
	assert_int_equal(o.nheld, 2);
	/* bytes: 200 held + 100 > 250 */
	assert_true(order_forget(&o, &items[4]));
	assert_int_equal(o.nheld, 1);
	assert_int_equal(o.held_bytes, 100);
	assert_int_equal(order_offer(&o, "b", "", 3, 2, &items[3], 151),
	    ORDER_FULL);
	assert_int_equal(order_offer(&o, "b", "", 3, 2, &items[3], 150),
	    ORDER_TAKEN);
	assert_int_equal(o.held_bytes, 250);
	assert_int_equal(r.n, 2);
	/* a forgotten item is not held: never dispatched, never released */
	assert_false(order_forget(&o, &items[4]));
	order_free(&o);		/* what is still held is released */
	assert_int_equal(r.nrel, 2);
	assert_int_equal(r.n, 2);
	uv_close((uv_handle_t *)&o.timer, NULL);
	uv_run(&loop, UV_RUN_DEFAULT);
	assert_int_equal(uv_loop_close(&loop), 0);
}

static void
order_close_lets_go(void **state)
{
	uv_loop_t	loop;
	struct order	o;
	struct rec	r;

	(void)state;
	setup(&o, &r, &loop, 8, 60000, 8, 1 << 20);
	assert_int_equal(OFFER("a", 3, 1), ORDER_TAKEN);
	assert_int_equal(OFFER("a", 5, 1), ORDER_TAKEN);
	assert_int_equal(r.n, 0);
	order_close(&o);	/* nothing waits for 1, 2 and 4 any more */
	assert_int_equal(r.n, 1);
	assert_int_equal(r.got[0], 3);
	order_done(&o, "a", 3, 1);
	assert_int_equal(r.n, 2);
	assert_int_equal(r.got[1], 5);
	order_done(&o, "a", 5, 1);
	assert_int_equal(o.missing, 3);
	uv_run(&loop, UV_RUN_DEFAULT);
	order_free(&o);
	assert_int_equal(r.nrel, 0);
	assert_int_equal(uv_loop_close(&loop), 0);
}

static void
order_id_rule(void **state)
{
	char	long_id[ORDER_ID_MAX + 2];

	(void)state;
	assert_true(order_id_valid("a"));
	assert_true(order_id_valid("Zx-09_q"));
	assert_false(order_id_valid(""));
	assert_false(order_id_valid("a/b"));
	assert_false(order_id_valid("a b"));
	assert_false(order_id_valid("é"));
	memset(long_id, 'x', sizeof(long_id) - 1);
	long_id[ORDER_ID_MAX] = '\0';
	assert_true(order_id_valid(long_id));
	long_id[ORDER_ID_MAX] = 'x';
	long_id[ORDER_ID_MAX + 1] = '\0';
	assert_false(order_id_valid(long_id));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(order_in_order),
		cmocka_unit_test(order_out_of_order_within_deadline),
		cmocka_unit_test(order_predecessor_never_comes),
		cmocka_unit_test(order_duplicate),
		cmocka_unit_test(order_table_full_evicts),
		cmocka_unit_test(order_flood_forgets_the_flooders_pages),
		cmocka_unit_test(order_held_bounds),
		cmocka_unit_test(order_close_lets_go),
		cmocka_unit_test(order_id_rule),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
