/*
 * test_notifier_desktop — notifier/desktop without a notification server
 * (the suite runs outside any D-Bus session, and must never pop a bubble
 * on a developer's desktop: the environment is emptied first).  The real
 * server is tests/notifier/notify.test.sh's job.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "tests/uvtest.h"

#include "notifier/desktop.h"

struct ctx {
	int	logs;
	int	unavailable_logs;
	int	states;
	int	closed;
	char	last[512];
};

static void
log_cb(void *arg, int prio, const char *msg)
{
	struct ctx *c = arg;

	(void)prio;
	c->logs++;
	if (strstr(msg, "no notification server") != NULL)
		c->unavailable_logs++;
	snprintf(c->last, sizeof(c->last), "%s", msg);
}

static void
closed(struct desktop *d)
{
	((struct ctx *)d->data)->closed++;
}

static void
state_changed(struct desktop *d)
{
	((struct ctx *)d->data)->states++;
	uv_stop(d->loop);
}

static struct ledger_event
ev_regressed(void)
{
	struct ledger_event ev;

	memset(&ev, 0, sizeof(ev));
	ev.type = "hitch";
	ev.at_ms = LEDGER_NO_TIME;
	ev.incident = ev.counted = 1;
	ev.value = 141.2;
	ev.has_value = 1;
	ev.unit = "ms";
	strcpy(ev.id, "81e5eb9b");
	ev.key = ev.phase = ev.build = "";
	ev.guess = "shader-compile";
	ev.confidence = "medium";
	ev.evidence = "programs +3";
	ev.count = 7;
	ev.status = "regressed";
	return ev;
}

static void
notifier_desktop_disabled(void **state)
{
	struct wake_config cfg;
	struct ledger_event ev = ev_regressed();
	struct desktop_stats st;
	struct desktop d;
	struct ctx c = { 0 };
	uv_loop_t loop;

	(void)state;
	uv_loop_init(&loop);
	wake_config_defaults(&cfg);
	cfg.desktop = 0;
	assert_int_equal(desktop_init(&d, &loop, &cfg, log_cb, &c), 0);
	d.data = &c;
	assert_string_equal(desktop_state(&d), "disabled");
	assert_int_equal(desktop_notify(&d, &ev, "line"), 0);
	desktop_stats(&d, &st);
	assert_int_equal(st.shown + st.dropped + st.pending, 0);
	desktop_close(&d, closed);
	run_with_deadline(&loop, 5000);
	assert_int_equal(c.closed, 1);
	assert_int_equal(c.logs, 0);
	assert_int_equal(uv_loop_close(&loop), 0);
}

static void
notifier_desktop_no_server(void **state)
{
	char rt[] = "/tmp/test_notifier_desktop.XXXXXX";
	struct wake_config cfg;
	struct ledger_event ev = ev_regressed();
	struct desktop_stats st;
	struct desktop d;
	struct ctx c = { 0 };
	uv_loop_t loop;
	int i;

	(void)state;
	/* no session bus to find, and no X display to autolaunch one on */
	assert_non_null(mkdtemp(rt));
	unsetenv("DBUS_SESSION_BUS_ADDRESS");
	unsetenv("DISPLAY");
	unsetenv("WAYLAND_DISPLAY");
	setenv("XDG_RUNTIME_DIR", rt, 1);

	uv_loop_init(&loop);
	wake_config_defaults(&cfg);
	assert_int_equal(desktop_init(&d, &loop, &cfg, log_cb, &c), 0);
	d.data = &c;
	d.state_cb = state_changed;
	/* queued behind the server check, then dropped with it */
	assert_int_equal(desktop_notify(&d, &ev, NULL), 0);
	run_with_deadline(&loop, 30000);
	assert_int_equal(c.states, 1);
	assert_true(strncmp(desktop_state(&d), "unavailable: ", 13) == 0);
	assert_int_equal(c.unavailable_logs, 1);

	/* the daemon runs on: later wakes are counted, not logged again */
	for (i = 0; i < 5; i++)
		assert_int_equal(desktop_notify(&d, &ev, NULL), -ENOTCONN);
	assert_int_equal(desktop_notify(&d, NULL, "a summary line"),
	    -ENOTCONN);
	desktop_stats(&d, &st);
	assert_int_equal(st.shown, 0);
	assert_int_equal(st.dropped, 7);
	assert_int_equal(c.unavailable_logs, 1);

	desktop_close(&d, closed);
	run_with_deadline(&loop, 30000);
	assert_int_equal(c.closed, 1);
	assert_int_equal(desktop_notify(&d, &ev, NULL), -ESHUTDOWN);
	assert_int_equal(c.unavailable_logs, 1);
	assert_int_equal(uv_loop_close(&loop), 0);
	rmdir(rt);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(notifier_desktop_disabled),
		cmocka_unit_test(notifier_desktop_no_server),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
