/*
 * test_exec — notifier/exec on a real libuv loop with real children.
 * Every test runs the loop until it has nothing left to do, under a
 * deadline timer that fails the test instead of hanging it; nothing
 * sleeps and hopes.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <unistd.h>

#include <cmocka.h>

#include "tests/uvtest.h"

#include "notifier/exec.h"

struct logbuf {
	int	n;
	char	msg[32][512];
};

static void
log_cb(void *arg, int prio, const char *msg)
{
	struct logbuf *lb = arg;

	(void)prio;
	if (lb->n < 32)
		snprintf(lb->msg[lb->n++], sizeof(lb->msg[0]), "%s", msg);
}

static int
log_count(const struct logbuf *lb, const char *needle)
{
	int i, n = 0;

	for (i = 0; i < lb->n; i++)
		if (strstr(lb->msg[i], needle) != NULL)
			n++;
	return n;
}

static void
closed(struct exec *e)
{
	(*(int *)e->data)++;
}

/* exec_close and run until its callback; the loop must be empty after. */
static void
close_exec(uv_loop_t *loop, struct exec *e)
{
	int done = 0;

	e->data = &done;
	exec_close(e, closed);
	run_with_deadline(loop, 5000);
	assert_int_equal(done, 1);
	assert_int_equal(uv_loop_close(loop), 0);
}

static char *
slurp(const char *path)
{
	FILE *f;
	char *s;
	long n;

	if ((f = fopen(path, "rb")) == NULL)
		return NULL;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	s = calloc(1, (size_t)n + 1);
	if (fread(s, 1, (size_t)n, f) != (size_t)n) {
		free(s);
		s = NULL;
	}
	fclose(f);
	return s;
}

static struct wake_config
config(unsigned max, unsigned queue)
{
	struct wake_config cfg;

	wake_config_defaults(&cfg);
	cfg.exec_max = max;
	cfg.exec_queue = queue;
	return cfg;
}

static void
exec_stdin_and_env(void **state)
{
	char dir[] = "/tmp/test_exec.XXXXXX", cmd[512], path[600], *s;
	const char *line = "sloptimize hitch 141.2ms x/y \"q\\\" ×7\" "
	    "fp=81e5eb9b id=3:9";
	struct wake_config cfg = config(4, 8);
	struct logbuf lb = { 0 };
	struct exec_stats st;
	struct exec e;
	uv_loop_t loop;
	cJSON *json;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(cmd, sizeof(cmd), "cat > %s/in; printf %%s "
	    "\"$SLOPTIMIZE_WAKE\" > %s/wake", dir, dir);
	setenv("SLOPTIMIZE_WAKE", "inherited, must be replaced", 1);
	uv_loop_init(&loop);
	assert_int_equal(exec_init(&e, &loop, cmd, &cfg, log_cb, &lb), 0);
	json = cJSON_CreateObject();
	cJSON_AddStringToObject(json, "type", "wake");
	cJSON_AddStringToObject(json, "line", line);
	assert_int_equal(exec_run(&e, line, json), 0);
	cJSON_Delete(json);
	run_with_deadline(&loop, 10000);

	exec_stats(&e, &st);
	assert_int_equal(st.spawned, 1);
	assert_int_equal(st.completed, 1);
	assert_int_equal(st.failed, 0);
	assert_int_equal(st.running, 0);
	snprintf(path, sizeof(path), "%s/in", dir);
	s = slurp(path);
	assert_non_null(s);
	assert_string_equal(s, "{\"type\":\"wake\",\"line\":\"sloptimize "
	    "hitch 141.2ms x/y \\\"q\\\\\\\" ×7\\\" fp=81e5eb9b id=3:9\"}\n");
	free(s);
	unlink(path);
	snprintf(path, sizeof(path), "%s/wake", dir);
	s = slurp(path);
	assert_non_null(s);
	assert_string_equal(s, line);
	free(s);
	unlink(path);
	rmdir(dir);
	unsetenv("SLOPTIMIZE_WAKE");
	close_exec(&loop, &e);
}

static void
exec_concurrency_bound(void **state)
{
	struct wake_config cfg = config(2, 3);
	struct logbuf lb = { 0 };
	struct exec_stats st;
	struct exec e;
	uv_loop_t loop;
	int i, rc, ok = 0, dropped = 0;

	(void)state;
	uv_loop_init(&loop);
	assert_int_equal(exec_init(&e, &loop, "sleep 0.3", &cfg, log_cb, &lb),
	    0);
	for (i = 0; i < 7; i++) {
		rc = exec_run(&e, "line", NULL);
		if (rc == 0)
			ok++;
		else if (rc == -ENOBUFS)
			dropped++;
		else
			fail_msg("exec_run: %d", rc);
	}
	assert_int_equal(ok, 5);
	assert_int_equal(dropped, 2);
	exec_stats(&e, &st);
	assert_int_equal(st.running, 2);
	assert_int_equal(st.queued, 3);
	assert_int_equal(st.dropped, 2);
	/* said once for the burst, not once per drop */
	assert_int_equal(log_count(&lb, "dropping wakes"), 1);

	run_with_deadline(&loop, 10000);
	exec_stats(&e, &st);
	assert_int_equal(st.spawned, 5);
	assert_int_equal(st.completed, 5);
	assert_int_equal(st.peak_running, 2);
	assert_int_equal(st.running, 0);
	assert_int_equal(st.queued, 0);

	/* the next wake after the burst says how many were lost */
	assert_int_equal(exec_run(&e, "line", NULL), 0);
	assert_int_equal(log_count(&lb, "2 wakes dropped"), 1);
	run_with_deadline(&loop, 10000);
	close_exec(&loop, &e);
}

static void
exec_failure_logged(void **state)
{
	struct wake_config cfg = config(4, 8);
	struct logbuf lb = { 0 };
	struct exec_stats st;
	struct exec e1, e2;
	uv_loop_t loop;

	(void)state;
	uv_loop_init(&loop);
	assert_int_equal(exec_init(&e1, &loop, "exit 3", &cfg, log_cb, &lb),
	    0);
	assert_int_equal(exec_init(&e2, &loop, "kill -TERM $$", &cfg, log_cb,
	    &lb), 0);
	exec_run(&e1, "a", NULL);
	exec_run(&e2, "b", NULL);
	run_with_deadline(&loop, 10000);
	exec_stats(&e1, &st);
	assert_int_equal(st.failed, 1);
	assert_int_equal(st.completed, 0);
	assert_int_equal(log_count(&lb, "exited with status 3"), 1);
	assert_int_equal(log_count(&lb, "killed by signal 15"), 1);
	{
		int done = 0;

		e1.data = e2.data = &done;
		exec_close(&e1, closed);
		exec_close(&e2, closed);
		run_with_deadline(&loop, 5000);
		assert_int_equal(done, 2);
	}
	assert_int_equal(uv_loop_close(&loop), 0);
}

static void
exec_hook_ignores_stdin(void **state)
{
	struct wake_config cfg = config(4, 8);
	struct logbuf lb = { 0 };
	struct exec_stats st;
	struct exec e;
	uv_loop_t loop;
	cJSON *json;
	char *big;

	(void)state;
	/* 1 MiB of stdin to a hook that exits at once: EPIPE, not SIGPIPE */
	big = malloc(1 << 20);
	memset(big, 'x', (1 << 20) - 1);
	big[(1 << 20) - 1] = '\0';
	json = cJSON_CreateObject();
	cJSON_AddStringToObject(json, "evidence", big);
	uv_loop_init(&loop);
	assert_int_equal(exec_init(&e, &loop, "true", &cfg, log_cb, &lb), 0);
	exec_run(&e, "x", json);
	exec_run(&e, "x", json);
	run_with_deadline(&loop, 10000);
	exec_stats(&e, &st);
	assert_int_equal(st.completed, 2);
	cJSON_Delete(json);
	free(big);
	close_exec(&loop, &e);
}

static void
exec_timeout_kills_group(void **state)
{
	struct wake_config cfg = config(4, 8);
	struct logbuf lb = { 0 };
	struct exec_stats st;
	struct exec e;
	uv_loop_t loop;

	(void)state;
	cfg.exec_timeout_ms = 200;
	uv_loop_init(&loop);
	/* sleep in a subshell, so the kill must reach the group */
	assert_int_equal(exec_init(&e, &loop, "(sleep 30); echo no", &cfg,
	    log_cb, &lb), 0);
	exec_run(&e, "x", NULL);
	run_with_deadline(&loop, 5000);
	exec_stats(&e, &st);
	assert_int_equal(st.failed, 1);
	assert_int_equal(log_count(&lb, "still running after 200 ms"), 1);
	assert_int_equal(log_count(&lb, "killed by signal 9"), 1);
	close_exec(&loop, &e);
}

static void
exec_close_drops_queue(void **state)
{
	struct wake_config cfg = config(1, 5);
	struct logbuf lb = { 0 };
	struct exec_stats st;
	struct exec e;
	uv_loop_t loop;

	(void)state;
	uv_loop_init(&loop);
	assert_int_equal(exec_init(&e, &loop, "sleep 0.2", &cfg, log_cb, &lb),
	    0);
	exec_run(&e, "1", NULL);
	exec_run(&e, "2", NULL);
	exec_run(&e, "3", NULL);
	close_exec(&loop, &e);
	exec_stats(&e, &st);
	assert_int_equal(st.spawned, 1);
	assert_int_equal(st.dropped, 2);
	assert_int_equal(log_count(&lb, "2 queued hooks not run"), 1);
	assert_int_equal(exec_run(&e, "4", NULL), -ESHUTDOWN);
	assert_int_equal(exec_init(&e, &loop, "", &cfg, NULL, NULL), -EINVAL);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(exec_stdin_and_env),
		cmocka_unit_test(exec_concurrency_bound),
		cmocka_unit_test(exec_failure_logged),
		cmocka_unit_test(exec_hook_ignores_stdin),
		cmocka_unit_test(exec_timeout_kills_group),
		cmocka_unit_test(exec_close_drops_queue),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
