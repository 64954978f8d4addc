/*
 * exec — the --exec hook (see exec.h).
 *
 * A child struct owns three handles: the process, the stdin pipe and the
 * timeout timer.  The slot it takes in max_running is given back when the
 * process exits (not when the handles are closed), so the next queued
 * hook starts from the exit callback; the struct is freed when the last of
 * its handles has closed.
 */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>

#include "base/base.h"
#include "exec.h"

#define WAKE_ENV	"SLOPTIMIZE_WAKE="

extern char **environ;

struct exec_job {
	struct exec_job	*next;
	char		*env;		/* "SLOPTIMIZE_WAKE=<line>" */
	char		*json;		/* with its '\n'; NULL: empty stdin */
	size_t		 json_len;
};

struct exec_child {
	struct exec_child	*next, **prevp;
	struct exec		*e;
	struct exec_job		*job;
	uv_process_t		 proc;
	uv_pipe_t		 in;
	uv_timer_t		 timer;
	uv_write_t		 wr;
	int			 handles;	/* still open */
	int			 exited;
};

/* A line for whoever made the runner; none without a log callback. */
#define exec_log(e, prio, ...) \
	base_log((e)->log, (e)->log_arg, (prio), __VA_ARGS__)

static void
job_free(struct exec_job *j)
{
	if (j == NULL)
		return;
	free(j->env);
	free(j->json);
	free(j);
}

int
exec_init(struct exec *e, uv_loop_t *loop, const char *cmd,
    const struct wake_config *cfg, base_log_fn *log, void *log_arg)
{
	struct sigaction sa;
	int rc;

	memset(e, 0, sizeof(*e));
	if (cmd == NULL || cmd[0] == '\0')
		return -EINVAL;
	e->loop = loop;
	e->log = log;
	e->log_arg = log_arg;
	e->max_running = cfg->exec_max > 0 ? cfg->exec_max : 1;
	e->max_queue = cfg->exec_queue;
	e->timeout_ms = cfg->exec_timeout_ms > 0 ? cfg->exec_timeout_ms : 0;
	e->queue_tail = &e->queue;
	if ((e->cmd = strdup(cmd)) == NULL)
		return -ENOMEM;
	if ((rc = uv_timer_init(loop, &e->handle)) < 0) {
		free(e->cmd);
		e->cmd = NULL;
		return rc;
	}
	uv_unref((uv_handle_t *)&e->handle);
	if (sigaction(SIGPIPE, NULL, &sa) == 0 && sa.sa_handler == SIG_DFL) {
		signal(SIGPIPE, SIG_IGN);
		exec_log(e, LOG_DEBUG, "exec: SIGPIPE now ignored (writes to "
		    "exited hooks)");
	}
	return 0;
}

static void exec_dispatch(struct exec *e);
static void exec_close_finish(struct exec *e);

static void
child_handle_closed(uv_handle_t *h)
{
	struct exec_child *c = h->data;
	struct exec *e = c->e;

	if (--c->handles > 0)
		return;
	*c->prevp = c->next;
	if (c->next != NULL)
		c->next->prevp = c->prevp;
	job_free(c->job);
	free(c);
	e->live--;
	if (e->closing)
		exec_close_finish(e);
}

static void
child_close(struct exec_child *c)
{
	if (!uv_is_closing((uv_handle_t *)&c->proc))
		uv_close((uv_handle_t *)&c->proc, child_handle_closed);
	if (!uv_is_closing((uv_handle_t *)&c->in))
		uv_close((uv_handle_t *)&c->in, child_handle_closed);
	if (!uv_is_closing((uv_handle_t *)&c->timer))
		uv_close((uv_handle_t *)&c->timer, child_handle_closed);
}

static void
child_exited(uv_process_t *p, int64_t status, int sig)
{
	struct exec_child *c = p->data;
	struct exec *e = c->e;

	c->exited = 1;
	e->running--;
	uv_timer_stop(&c->timer);
	if (sig != 0) {
		e->failed++;
		exec_log(e, LOG_WARNING, "exec: hook (pid %d) killed by "
		    "signal %d", p->pid, sig);
	} else if (status != 0) {
		e->failed++;
		exec_log(e, LOG_WARNING, "exec: hook (pid %d) exited with "
		    "status %" PRId64, p->pid, status);
	} else
		e->completed++;
	/* The stdin pipe closes itself when its write is done. */
	uv_close((uv_handle_t *)&c->proc, child_handle_closed);
	uv_close((uv_handle_t *)&c->timer, child_handle_closed);
	exec_dispatch(e);
}

static void
child_timeout(uv_timer_t *t)
{
	struct exec_child *c = t->data;

	/* pid 0 would be our own group */
	if (c->exited || c->proc.pid <= 0)
		return;
	exec_log(c->e, LOG_WARNING, "exec: hook (pid %d) still running "
	    "after %" PRId64 " ms: killed", c->proc.pid, c->e->timeout_ms);
	/* the whole group: sh and whatever it started */
	if (uv_kill(-c->proc.pid, SIGKILL) < 0)
		uv_process_kill(&c->proc, SIGKILL);
}

static void
child_written(uv_write_t *w, int status)
{
	struct exec_child *c = w->data;

	/* A hook that does not read its stdin is allowed (EPIPE). */
	if (status < 0 && status != UV_EPIPE && status != UV_ECANCELED)
		exec_log(c->e, LOG_DEBUG, "exec: writing the hook's stdin: %s",
		    uv_strerror(status));
	if (!uv_is_closing((uv_handle_t *)&c->in))
		uv_close((uv_handle_t *)&c->in, child_handle_closed);
}

/* The environment plus $SLOPTIMIZE_WAKE (replacing an inherited one). */
static char **
child_env(const char *wake)
{
	char **env;
	size_t n = 0, i, k = 0;

	while (environ[n] != NULL)
		n++;
	if ((env = calloc(n + 2, sizeof(*env))) == NULL)
		return NULL;
	for (i = 0; i < n; i++)
		if (strncmp(environ[i], WAKE_ENV, strlen(WAKE_ENV)) != 0)
			env[k++] = environ[i];
	env[k++] = (char *)wake;
	env[k] = NULL;
	return env;
}

/* Start job j (ownership passes).  0 or a negative errno (j freed). */
static int
exec_start(struct exec *e, struct exec_job *j)
{
	uv_process_options_t opt;
	uv_stdio_container_t stdio[3];
	struct exec_child *c;
	char *args[4];
	char **env = NULL;
	uv_buf_t buf;
	int rc;

	if ((c = calloc(1, sizeof(*c))) == NULL ||
	    (env = child_env(j->env)) == NULL) {
		free(c);
		job_free(j);
		return -ENOMEM;
	}
	c->e = e;
	c->job = j;
	c->proc.data = c->in.data = c->timer.data = c->wr.data = c;
	if ((c->next = e->children) != NULL)
		c->next->prevp = &c->next;
	c->prevp = &e->children;
	e->children = c;
	e->live++;
	/* these cannot fail on Unix */
	uv_pipe_init(e->loop, &c->in, 0);
	uv_timer_init(e->loop, &c->timer);
	c->handles = 3;

	args[0] = "/bin/sh";
	args[1] = "-c";
	args[2] = e->cmd;
	args[3] = NULL;
	memset(&opt, 0, sizeof(opt));
	memset(stdio, 0, sizeof(stdio));
	stdio[0].flags = UV_CREATE_PIPE | UV_READABLE_PIPE;
	stdio[0].data.stream = (uv_stream_t *)&c->in;
	stdio[1].flags = UV_IGNORE;		/* /dev/null */
	stdio[2].flags = UV_INHERIT_FD;
	stdio[2].data.fd = 2;
	opt.file = args[0];
	opt.args = args;
	opt.env = env;
	opt.stdio = stdio;
	opt.stdio_count = 3;
	opt.flags = UV_PROCESS_DETACHED;	/* own group, for the kill */
	opt.exit_cb = child_exited;
	rc = uv_spawn(e->loop, &c->proc, &opt);
	free(env);
	if (rc < 0) {
		e->failed++;
		exec_log(e, LOG_ERR, "exec: cannot start /bin/sh: %s",
		    uv_strerror(rc));
		/* a failed spawn still leaves the handle to close */
		c->exited = 1;
		child_close(c);
		return rc;
	}
	e->running++;
	e->spawned++;
	if (e->running > e->peak_running)
		e->peak_running = e->running;
	if (e->timeout_ms > 0)
		uv_timer_start(&c->timer, child_timeout, (uint64_t)e->timeout_ms,
		    0);

	if (j->json == NULL) {
		uv_close((uv_handle_t *)&c->in, child_handle_closed);
		return 0;
	}
	buf = uv_buf_init(j->json, (unsigned)j->json_len);
	if ((rc = uv_write(&c->wr, (uv_stream_t *)&c->in, &buf, 1,
	    child_written)) < 0) {
		exec_log(e, LOG_DEBUG, "exec: writing the hook's stdin: %s",
		    uv_strerror(rc));
		uv_close((uv_handle_t *)&c->in, child_handle_closed);
	}
	return 0;
}

static void
exec_dispatch(struct exec *e)
{
	struct exec_job *j;

	while (!e->closing && e->running < e->max_running &&
	    (j = e->queue) != NULL) {
		if ((e->queue = j->next) == NULL)
			e->queue_tail = &e->queue;
		e->queued--;
		j->next = NULL;
		exec_start(e, j);
	}
}

int
exec_run(struct exec *e, const char *line, const cJSON *json)
{
	struct exec_job *j;
	char *s;

	if (e->closing || e->cmd == NULL) {
		e->dropped++;
		return -ESHUTDOWN;
	}
	if (e->running >= e->max_running && e->queued >= e->max_queue) {
		e->dropped++;
		if (e->burst++ == 0)
			exec_log(e, LOG_WARNING, "exec: %u hooks running and %u "
			    "waiting: dropping wakes until one finishes "
			    "(counted in status)", e->running, e->queued);
		return -ENOBUFS;
	}
	if (e->burst > 0) {
		exec_log(e, LOG_WARNING, "exec: %" PRIu64 " wake%s dropped "
		    "while the hook queue was full", e->burst,
		    e->burst == 1 ? "" : "s");
		e->burst = 0;
	}

	if ((j = calloc(1, sizeof(*j))) == NULL)
		return -ENOMEM;
	if (line == NULL)
		line = "";
	if ((j->env = malloc(strlen(WAKE_ENV) + strlen(line) + 1)) == NULL)
		goto nomem;
	strcpy(j->env, WAKE_ENV);
	strcat(j->env, line);
	if (json != NULL) {
		if ((s = cJSON_PrintUnformatted(json)) == NULL)
			goto nomem;
		j->json_len = strlen(s) + 1;
		if ((j->json = malloc(j->json_len + 1)) == NULL) {
			cJSON_free(s);
			goto nomem;
		}
		memcpy(j->json, s, j->json_len - 1);
		j->json[j->json_len - 1] = '\n';
		j->json[j->json_len] = '\0';
		cJSON_free(s);
	}

	*e->queue_tail = j;
	e->queue_tail = &j->next;
	e->queued++;
	exec_dispatch(e);
	return 0;
nomem:
	job_free(j);
	return -ENOMEM;
}

void
exec_stats(const struct exec *e, struct exec_stats *st)
{
	st->running = e->running;
	st->queued = e->queued;
	st->peak_running = e->peak_running;
	st->spawned = e->spawned;
	st->completed = e->completed;
	st->failed = e->failed;
	st->dropped = e->dropped;
}

static void
exec_handle_closed(uv_handle_t *h)
{
	struct exec *e = h->data;
	exec_close_cb *cb = e->close_cb;

	free(e->cmd);
	e->cmd = NULL;
	if (cb != NULL)
		cb(e);
}

static void
exec_close_finish(struct exec *e)
{
	if (e->live > 0 || uv_is_closing((uv_handle_t *)&e->handle))
		return;
	e->handle.data = e;
	uv_close((uv_handle_t *)&e->handle, exec_handle_closed);
}

void
exec_close(struct exec *e, exec_close_cb *cb)
{
	struct exec_job *j;
	struct exec_child *c;
	unsigned n = 0;

	if (e->closing)
		return;
	e->closing = 1;
	e->close_cb = cb;
	while ((j = e->queue) != NULL) {
		e->queue = j->next;
		job_free(j);
		n++;
	}
	e->queue_tail = &e->queue;
	e->queued = 0;
	e->dropped += n;
	if (n > 0)
		exec_log(e, LOG_WARNING, "exec: %u queued hook%s not run "
		    "(shutting down)", n, n == 1 ? "" : "s");
	if (e->running > 0)
		exec_log(e, LOG_INFO, "exec: %u hook%s left running", e->running,
		    e->running == 1 ? "" : "s");
	for (c = e->children; c != NULL; c = c->next)
		child_close(c);
	exec_close_finish(e);
}
