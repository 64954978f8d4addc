/*
 * notify_driver — drives notifier/desktop for tests/notifier/notify.test.sh, which
 * compiles it and runs it against a real notification server (and without
 * one).  Not a cmocka test: the suite would run it outside any D-Bus
 * session.
 *
 * Sends, each a quiet spell (1.2 s: past twice the 500 ms limit) after
 * the previous bubble was shown, so each starts a burst of its own:
 *   A1  hitch    fp 81e5eb9b  open       (a new bubble)
 *   A2  hitch    fp 81e5eb9b  open       (must replace A1 in place)
 *   B   jitter   fp d423dcef  regressed  (critical)
 *   C1 C2 C3 at once (usermark, fp 68faa5c5): C1 is shown at once, C2
 *       and C3 wait and replace it in place, "+1 more"
 *   D1..D6 at once (six footprints, D4 regressed): D1 is shown at once,
 *       the rest wait, then one "burst" bubble names all six (critical)
 * and right after that, during the next wait, D7 and D1 again: the burst
 * bubble is replaced in place and names seven.  Eight bubbles in all.
 *
 * stdout: "state: <state>" after the server check, "shown <n>
 * <status>" per attempt, then "state: <state>" and "stats: wakes=…
 * shown=… sent=… replaced=… pending=… dropped=… failed=…".  stderr: log
 * lines.
 * Exits 0 unless something could not even start; the script judges.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>

#include "notifier/desktop.h"

struct drv {
	uv_loop_t	 loop;
	struct desktop	 desk;
	uv_timer_t	 deadline, pause;
	int		 step;
	int		 closed;
};

static void
log_cb(void *arg, int prio, const char *msg)
{
	(void)arg;
	fprintf(stderr, "log: <%d> %s\n", prio, msg);
}

static struct ledger_event
event(const char *type, const char *fp, double value, const char *unit,
    const char *guess, const char *evidence, uint64_t count,
    const char *status)
{
	struct ledger_event ev;

	memset(&ev, 0, sizeof(ev));
	ev.type = type;
	ev.at_ms = LEDGER_NO_TIME;
	ev.incident = ev.counted = 1;
	ev.value = value;
	ev.has_value = 1;
	ev.unit = unit;
	snprintf(ev.id, sizeof(ev.id), "%s", fp);
	ev.key = "";
	ev.phase = "play";
	ev.build = "v1";
	ev.guess = guess;
	ev.confidence = "medium";
	ev.evidence = evidence;
	ev.count = count;
	ev.status = status;
	return ev;
}

static void
send_d(struct desktop *d, int i, uint64_t count)
{
	struct ledger_event ev;
	char fp[9];

	snprintf(fp, sizeof(fp), "0000d00%d", i);
	ev = event("hitch", fp, 150, "ms", "spawn-burst", "D", count,
	    i == 4 ? "regressed" : "open");
	desktop_notify(d, &ev, NULL);
}

static void
send_step(struct drv *drv)
{
	struct ledger_event ev;
	struct desktop *d = &drv->desk;
	int i;

	switch (drv->step++) {
	case 0:
		ev = event("hitch", "81e5eb9b", 120.5, "ms", "shader-compile",
		    "first A <b>&</b> \"q\" \\ end", 1, "open");
		desktop_notify(d, &ev, NULL);
		break;
	case 1:
		ev = event("hitch", "81e5eb9b", 141.2, "ms", "shader-compile",
		    "second A", 2, "open");
		desktop_notify(d, &ev, NULL);
		break;
	case 2:
		ev = event("jitter", "d423dcef", 0.67, "units", "snap",
		    "B regressed", 5, "regressed");
		desktop_notify(d, &ev, NULL);
		break;
	case 3:
		ev = event("usermark", "68faa5c5", 61, "ms", "texture-upload",
		    "C one", 1, "open");
		desktop_notify(d, &ev, NULL);
		ev.evidence = "C two";
		ev.count = 2;
		desktop_notify(d, &ev, NULL);
		ev.evidence = "C three";
		ev.count = 3;
		desktop_notify(d, &ev, NULL);
		break;
	case 4:
		break;		/* C1's own bubble: C2 and C3 wait */
	case 5:
		for (i = 1; i <= 6; i++)
			send_d(d, i, 1);
		break;
	case 6:
		break;		/* D1's own bubble: the burst waits */
	case 7:
		send_d(d, 7, 1);
		send_d(d, 1, 2);
		break;
	default:
		break;
	}
}

static void
closed(struct desktop *d)
{
	struct drv *drv = d->data;

	drv->closed = 1;
	uv_close((uv_handle_t *)&drv->deadline, NULL);
	uv_close((uv_handle_t *)&drv->pause, NULL);
}

/* The rate limit is over: D1 comes to a free desktop. */
static void
paused(uv_timer_t *t)
{
	send_step(t->data);
}

static void
finish(struct drv *drv)
{
	struct desktop_stats st;

	desktop_stats(&drv->desk, &st);
	printf("state: %s\n", desktop_state(&drv->desk));
	printf("stats: wakes=%llu shown=%llu sent=%llu replaced=%llu "
	    "pending=%llu dropped=%llu failed=%llu\n",
	    (unsigned long long)st.wakes, (unsigned long long)st.shown,
	    (unsigned long long)st.sent, (unsigned long long)st.replaced,
	    (unsigned long long)st.pending, (unsigned long long)st.dropped,
	    (unsigned long long)st.failed);
	fflush(stdout);
	desktop_close(&drv->desk, closed);
}

static void
shown(struct desktop *d, int status)
{
	struct drv *drv = d->data;

	printf("shown %d %d\n", drv->step, status);
	fflush(stdout);
	switch (drv->step) {
	case 1: case 2: case 3: case 5:	/* a quiet spell, then the next */
		uv_timer_start(&drv->pause, paused, 1200, 0);
		break;
	case 4: case 6: case 7:		/* the next right away */
		send_step(drv);
		break;
	default:			/* 8: the last burst bubble */
		finish(drv);
	}
}

/* No server: the wakes that follow are dropped without another log line. */
static void
state_changed(struct desktop *d)
{
	struct drv *drv = d->data;

	printf("state: %s\n", desktop_state(d));
	if (d->status != DESKTOP_UNAVAILABLE || d->closing)
		return;
	while (drv->step < 8)
		send_step(drv);
	finish(drv);
}

static void
deadline_hit(uv_timer_t *t)
{
	struct drv *drv = t->data;

	fprintf(stderr, "driver: deadline passed at step %d\n", drv->step);
	if (!drv->desk.closing)
		finish(drv);
}

int
main(int argc, char **argv)
{
	struct wake_config cfg;
	struct drv drv;

	(void)argc;
	(void)argv;
	memset(&drv, 0, sizeof(drv));
	uv_loop_init(&drv.loop);
	wake_config_defaults(&cfg);
	cfg.desktop_ms = 500;
	if (desktop_init(&drv.desk, &drv.loop, &cfg, log_cb, NULL) != 0)
		return 1;
	drv.desk.data = &drv;
	drv.desk.shown_cb = shown;
	drv.desk.state_cb = state_changed;
	/* With no server nothing is ever shown: the deadline ends it. */
	uv_timer_init(&drv.loop, &drv.deadline);
	drv.deadline.data = &drv;
	uv_timer_init(&drv.loop, &drv.pause);
	drv.pause.data = &drv;
	uv_timer_start(&drv.deadline, deadline_hit, 15000, 0);
	send_step(&drv);		/* waits for the server check */
	uv_run(&drv.loop, UV_RUN_DEFAULT);
	if (!drv.closed)
		return 1;
	return uv_loop_close(&drv.loop) == 0 ? 0 : 1;
}
