/*
 * notify_driver — drives notifier/desktop for tests/notify.test.sh, which
 * compiles it and runs it against a real notification server (and without
 * one).  Not a cmocka test: the suite would run it outside any D-Bus
 * session.
 *
 * Sends, each after the previous one was shown:
 *   A1  hitch    fp 81e5eb9b  open       (a new bubble)
 *   A2  hitch    fp 81e5eb9b  open       (must replace A1 in place)
 *   B   jitter   fp d423dcef  regressed  (critical)
 * then C1, C2, C3 (usermark, fp 68faa5c5) in one burst: C1 waits out the
 * rate limit, C2 and C3 coalesce into it, so one bubble says "+2 more".
 *
 * stdout: "state: <state>" after the server check, "shown <step>
 * <status>" per attempt, then "state: <state>" and
 * "stats: shown=… failed=… dropped=… coalesced=…".  stderr: log lines.
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
	uv_timer_t	 deadline;
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
send_step(struct drv *drv)
{
	struct ledger_event ev;
	struct desktop *d = &drv->desk;

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
}

static void
finish(struct drv *drv)
{
	struct desktop_stats st;

	desktop_stats(&drv->desk, &st);
	printf("state: %s\n", desktop_state(&drv->desk));
	printf("stats: shown=%llu failed=%llu dropped=%llu coalesced=%llu\n",
	    (unsigned long long)st.shown, (unsigned long long)st.failed,
	    (unsigned long long)st.dropped, (unsigned long long)st.coalesced);
	fflush(stdout);
	desktop_close(&drv->desk, closed);
}

static void
shown(struct desktop *d, int status)
{
	struct drv *drv = d->data;

	printf("shown %d %d\n", drv->step, status);
	fflush(stdout);
	if (drv->step < 4)
		send_step(drv);
	else
		finish(drv);
}

/* No server: the wakes that follow are dropped without another log line. */
static void
state_changed(struct desktop *d)
{
	struct drv *drv = d->data;

	printf("state: %s\n", desktop_state(d));
	if (d->status != DESKTOP_UNAVAILABLE || d->closing)
		return;
	while (drv->step < 4)
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
	uv_timer_start(&drv.deadline, deadline_hit, 15000, 0);
	send_step(&drv);		/* waits for the server check */
	uv_run(&drv.loop, UV_RUN_DEFAULT);
	if (!drv.closed)
		return 1;
	return uv_loop_close(&drv.loop) == 0 ? 0 : 1;
}
