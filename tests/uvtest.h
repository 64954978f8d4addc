/*
 * uvtest — run a test's libuv loop until it has nothing left to do, with a
 * deadline: a test waits on its own conditions, never on a sleep, and a
 * loop that does not settle in time fails the test instead of hanging it.
 * Header-only, for the cmocka tests that drive a real loop.
 */
#ifndef TESTS_UVTEST_H
#define TESTS_UVTEST_H

#include <uv.h>

static void
uvtest_deadline_hit(uv_timer_t *t)
{
	*(int *)t->data = 1;
	uv_stop(t->loop);
}

/* Run until uv_stop or nothing is left; fail after ms. */
static void
run_with_deadline(uv_loop_t *loop, uint64_t ms)
{
	uv_timer_t	deadline;
	int		hit = 0;

	uv_timer_init(loop, &deadline);
	deadline.data = &hit;
	uv_timer_start(&deadline, uvtest_deadline_hit, ms, 0);
	uv_unref((uv_handle_t *)&deadline);
	uv_run(loop, UV_RUN_DEFAULT);
	uv_close((uv_handle_t *)&deadline, NULL);
	uv_run(loop, UV_RUN_NOWAIT);
	if (hit)
		fail_msg("loop still busy after %llu ms",
		    (unsigned long long)ms);
}

#endif
