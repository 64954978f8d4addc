/*
 * browser — Chromium over --remote-debugging-pipe, on a loop of its own
 * (browser.h).
 *
 * The child gets five descriptors: nothing on 0 and 1, a pipe for its
 * stderr (the last 2 KiB are kept: what it says when it fails to start
 * or crashes), and the CDP pair — libuv's flags speak from the child's
 * side, so fd 3 is READABLE (the browser reads our calls) and fd 4
 * WRITABLE (it writes its answers).  It is started DETACHED: a session
 * and process group of its own, so that one kill(-pgid) reaches the
 * renderer, GPU and zygote processes it forks, and a Ctrl+C in the
 * terminal reaches only us — our handler takes it down in order.
 *
 * Waiting is uv_run(UV_RUN_ONCE) under a 100 ms tick until the answer is
 * in, the deadline passes, or the browser, the page, a signal or the
 * caller ends it: the loop only ever holds this browser's handles.
 */
#define _XOPEN_SOURCE	700	/* nftw */
#define _DEFAULT_SOURCE		/* and the rest as usual */
#include <sys/stat.h>
#include <sys/types.h>

#include <dirent.h>
#include <errno.h>
#include <ftw.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <uv.h>

#include "base/base.h"
#include "browser/browser.h"
#include "browser/cdp.h"

#define TICK_MS		100
#define CLOSE_WAIT_MS	3000	/* for Browser.close to end it */
#define KILL_WAIT_MS	3000	/* for SIGKILL's exit to be reaped */
#define TAIL		2048

struct pending {
	long		 id;
	int		 done;
	cJSON		*result;
	char		*error;
	struct pending	*next;
};

struct browser {
	uv_loop_t	 loop;
	uv_process_t	 proc;
	uv_pipe_t	 to, from, err;
	uv_timer_t	 tick;
	uv_signal_t	 sigint, sigterm;
	int		 signals;
	const atomic_int *cancel;

	struct cdp_reader rd;
	struct pending	*calls;
	long		 next_id;
	char		 session[128];
	int		 width, height;
	double		 dpr;		/* deviceScaleFactor of the viewport */

	int		 spawned, exited, eof, crashed, loaded, signalled;
	int64_t		 exit_status;
	int		 term_signal;
	pid_t		 pid;

	char		 exe[PATH_MAX];
	char		 profile[PATH_MAX];
	char		 version[128];
	char		 tail[TAIL];	/* stderr's last bytes, a ring */
	size_t		 tail_at, tail_len;
	char		 page_error[512];
};

/* --- finding it --- */

static int
executable(const char *p)
{
	struct stat	st;

	return stat(p, &st) == 0 && S_ISREG(st.st_mode) && access(p, X_OK) == 0;
}

int
browser_find(char *path, size_t cap, char *why, size_t wcap)
{
	static const char *const names[] = {
		"chromium", "chromium-browser", "google-chrome", NULL
	};
	const char	*env = getenv("SLOPTIMIZE_BROWSER"), *dirs, *p, *e;
	size_t		 i;

	if (env != NULL && *env != '\0') {
		if (!executable(env))
			return base_say(why, wcap, -ENOENT, "SLOPTIMIZE_BROWSER=%s is "
			    "not an executable file: %s", env,
			    BROWSER_INSTALL_HINT);
		if ((size_t)snprintf(path, cap, "%s", env) >= cap)
			return base_say(why, wcap, -ENAMETOOLONG, "SLOPTIMIZE_BROWSER "
			    "is too long");
		return 0;
	}
	dirs = getenv("PATH");
	for (i = 0; names[i] != NULL; i++)
		for (p = dirs ? dirs : ""; *p; p = *e ? e + 1 : e) {
			e = strchr(p, ':');
			if (e == NULL)
				e = p + strlen(p);
			if (e == p)
				continue;
			if ((size_t)snprintf(path, cap, "%.*s/%s", (int)(e - p),
			    p, names[i]) < cap && executable(path))
				return 0;
		}
	return base_say(why, wcap, -ENOENT, "no browser found (chromium, "
	    "chromium-browser or google-chrome on PATH): %s",
	    BROWSER_INSTALL_HINT);
}

/* --- the loop's callbacks --- */

static void
on_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *buf)
{
	(void)h;
	buf->base = malloc(suggested);
	buf->len = buf->base ? suggested : 0;
}

static struct pending *
pending_find(struct browser *b, long id)
{
	struct pending	*p;

	for (p = b->calls; p != NULL; p = p->next)
		if (p->id == id)
			return p;
	return NULL;
}

/* The first error the page or the browser reports is kept: later ones
 * are most often its consequences (and a missing favicon is nobody's). */
static void
remember_error(struct browser *b, const char *what, const char *text)
{
	if (b->page_error[0] != '\0' || strstr(text, "/favicon.ico") != NULL)
		return;
	snprintf(b->page_error, sizeof(b->page_error), "%s: %.400s", what,
	    text);
}

static void
on_message(void *arg, const struct cdp_msg *m)
{
	struct browser	*b = arg;
	struct pending	*p;
	const cJSON	*d;

	if (m->kind == CDP_RESPONSE) {
		if ((p = pending_find(b, m->id)) == NULL || p->done)
			return;		/* a call nobody waits for */
		p->done = 1;
		if (m->error != NULL)
			p->error = strdup(m->error);
		else
			p->result = cJSON_DetachItemViaPointer(m->root,
			    (cJSON *)m->result);
		return;
	}
	if (b->session[0] != '\0' && m->session != NULL &&
	    strcmp(m->session, b->session) != 0)
		return;
	if (strcmp(m->method, "Inspector.targetCrashed") == 0)
		b->crashed = 1;
	else if (strcmp(m->method, "Target.detachedFromTarget") == 0 &&
	    b->session[0] != '\0' && (d = cJSON_GetObjectItemCaseSensitive(
	    m->params, "sessionId")) != NULL && cJSON_IsString(d) &&
	    strcmp(d->valuestring, b->session) == 0)
		b->crashed = 2;
	else if (strcmp(m->method, "Page.loadEventFired") == 0)
		b->loaded = 1;
	else if (strcmp(m->method, "Runtime.exceptionThrown") == 0) {
		const cJSON *x = cJSON_GetObjectItemCaseSensitive(m->params,
		    "exceptionDetails");
		const cJSON *ex = cJSON_GetObjectItemCaseSensitive(x,
		    "exception");
		const char *s = cJSON_GetStringValue(
		    cJSON_GetObjectItemCaseSensitive(ex, "description"));

		if (s == NULL)
			s = cJSON_GetStringValue(
			    cJSON_GetObjectItemCaseSensitive(x, "text"));
		if (s != NULL)
			remember_error(b, "the page threw", s);
	} else if (strcmp(m->method, "Runtime.consoleAPICalled") == 0) {
		const cJSON *t = cJSON_GetObjectItemCaseSensitive(m->params,
		    "type");
		const cJSON *a0 = cJSON_GetArrayItem(
		    cJSON_GetObjectItemCaseSensitive(m->params, "args"), 0);
		const char *s = cJSON_GetStringValue(
		    cJSON_GetObjectItemCaseSensitive(a0, "value"));

		if (s == NULL)
			s = cJSON_GetStringValue(
			    cJSON_GetObjectItemCaseSensitive(a0, "description"));
		if (cJSON_IsString(t) && strcmp(t->valuestring, "error") == 0 &&
		    s != NULL)
			remember_error(b, "the page logged an error", s);
	} else if (strcmp(m->method, "Log.entryAdded") == 0) {
		/* the browser's own: a module that failed to load, a 404 */
		const cJSON *e = cJSON_GetObjectItemCaseSensitive(m->params,
		    "entry");
		const char *lv = cJSON_GetStringValue(
		    cJSON_GetObjectItemCaseSensitive(e, "level"));
		const char *s = cJSON_GetStringValue(
		    cJSON_GetObjectItemCaseSensitive(e, "text"));
		const char *u = cJSON_GetStringValue(
		    cJSON_GetObjectItemCaseSensitive(e, "url"));
		char	buf[480];

		if (lv != NULL && strcmp(lv, "error") == 0 && s != NULL) {
			snprintf(buf, sizeof(buf), "%.300s%s%.160s", s,
			    u ? " " : "", u ? u : "");
			remember_error(b, "the browser said", buf);
		}
	} else if (strcmp(m->method, "Page.javascriptDialogOpening") == 0) {
		/* an alert() would hold the page's main thread forever */
		cJSON	*params = cJSON_CreateObject();
		long	 id;

		cJSON_AddBoolToObject(params, "accept", 1);
		(void)browser_send(b, "Page.handleJavaScriptDialog", params, 1,
		    &id, NULL, 0);
		cJSON_Delete(params);
	}
}

static void
on_read(uv_stream_t *s, ssize_t n, const uv_buf_t *buf)
{
	struct browser	*b = s->data;

	if (n > 0)
		(void)cdp_reader_feed(&b->rd, buf->base, (size_t)n, on_message,
		    b);
	else if (n < 0) {
		b->eof = 1;
		uv_read_stop(s);
	}
	free(buf->base);
}

static void
on_stderr(uv_stream_t *s, ssize_t n, const uv_buf_t *buf)
{
	struct browser	*b = s->data;
	ssize_t		 i;

	for (i = 0; i < n; i++) {
		b->tail[b->tail_at] = buf->base[i];
		b->tail_at = (b->tail_at + 1) % TAIL;
		if (b->tail_len < TAIL)
			b->tail_len++;
	}
	if (n < 0)
		uv_read_stop(s);
	free(buf->base);
}

static void
on_proc_exit(uv_process_t *p, int64_t status, int sig)
{
	struct browser	*b = p->data;

	b->exited = 1;
	b->exit_status = status;
	b->term_signal = sig;
}

static void
on_signal(uv_signal_t *h, int sig)
{
	struct browser	*b = h->data;

	b->signalled = sig;
	uv_stop(&b->loop);
}

static void
on_tick(uv_timer_t *t)
{
	(void)t;
}

struct wreq {
	uv_write_t	 req;
	char		*text;
};

static void
on_written(uv_write_t *req, int status)
{
	struct wreq	*w = (struct wreq *)req;
	struct browser	*b = req->handle->data;

	if (status < 0)
		b->eof = 1;
	free(w->text);
	free(w);
}

/* --- the stderr tail, for messages --- */

/* The last line or two Chromium wrote, one line, in out. */
static void
stderr_tail(const struct browser *b, char *out, size_t cap)
{
	char	buf[TAIL + 1];
	size_t	i, n = b->tail_len, start = (b->tail_at + TAIL - n) % TAIL, o;
	char	*p;

	for (i = 0; i < n; i++)
		buf[i] = b->tail[(start + i) % TAIL];
	buf[n] = '\0';
	while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == ' '))
		buf[--n] = '\0';
	/* the last two lines */
	p = buf + n;
	for (i = 0; i < 2 && p > buf; i++)
		for (p--; p > buf && p[-1] != '\n'; p--)
			;
	for (o = 0; *p && o + 1 < cap; p++)
		out[o++] = *p == '\n' ? ' ' : *p;
	out[o] = '\0';
}

/* Why a wait ended that was not its answer. */
static int
ended(struct browser *b, char *why, size_t cap)
{
	char	tail[600];

	if (b->signalled)
		return base_say(why, cap, -EINTR, "interrupted (signal %d)",
		    b->signalled);
	if (b->cancel && atomic_load(b->cancel))
		return base_say(why, cap, -ECANCELED, "cancelled");
	stderr_tail(b, tail, sizeof(tail));
	if (b->crashed)
		return base_say(why, cap, -ECONNRESET, "the page %s%s%s%s",
		    b->crashed == 2 ? "was closed" : "crashed (Inspector."
		    "targetCrashed)", *b->page_error ? "; " : "", b->page_error,
		    "");
	if (b->exited)
		return base_say(why, cap, -EPIPE, "the browser exited (%s %d)%s%s",
		    b->term_signal ? "signal" : "status", b->term_signal ?
		    b->term_signal : (int)b->exit_status, *tail ? ": " : "",
		    tail);
	if (b->eof)
		return base_say(why, cap, -EPIPE, "the browser closed its pipe%s%s",
		    *tail ? ": " : "", tail);
	return 0;
}

/* --- calls --- */

int
browser_send(struct browser *b, const char *method, const cJSON *params,
    int on_page, long *id, char *why, size_t cap)
{
	struct pending	*p;
	struct wreq	*w;
	uv_buf_t	 buf;
	size_t		 len;
	int		 rc;

	if ((rc = ended(b, why, cap)) != 0)
		return rc;
	if (on_page && b->session[0] == '\0')
		return base_say(why, cap, -ENOTCONN, "no page is open");
	if ((p = calloc(1, sizeof(*p))) == NULL ||
	    (w = calloc(1, sizeof(*w))) == NULL) {
		free(p);
		return base_say(why, cap, -ENOMEM, "out of memory");
	}
	p->id = ++b->next_id;
	if ((rc = cdp_call_text(p->id, method, params, on_page ? b->session :
	    NULL, &w->text, &len)) != 0) {
		free(w);
		free(p);
		return base_say(why, cap, rc, "out of memory");
	}
	buf = uv_buf_init(w->text, (unsigned)len);
	if ((rc = uv_write(&w->req, (uv_stream_t *)&b->to, &buf, 1,
	    on_written)) != 0) {
		free(w->text);
		free(w);
		free(p);
		return base_say(why, cap, -EPIPE, "cannot write to the browser: %s",
		    uv_strerror(rc));
	}
	p->next = b->calls;
	b->calls = p;
	*id = p->id;
	return 0;
}

static void
pending_drop(struct browser *b, struct pending *gone)
{
	struct pending	**pp;

	for (pp = &b->calls; *pp != NULL; pp = &(*pp)->next)
		if (*pp == gone) {
			*pp = gone->next;
			cJSON_Delete(gone->result);
			free(gone->error);
			free(gone);
			return;
		}
}

/* Run the loop until *flag is set or the deadline passes: 0, -ETIMEDOUT,
 * or why it ended. */
static int
run_until(struct browser *b, const int *flag, int timeout_ms, char *why,
    size_t cap)
{
	uint64_t	end;
	int		rc;

	uv_update_time(&b->loop);
	end = uv_now(&b->loop) + (uint64_t)(timeout_ms > 0 ? timeout_ms : 0);
	for (;;) {
		if (*flag)
			return 0;
		if ((rc = ended(b, why, cap)) != 0)
			return rc;
		uv_update_time(&b->loop);
		if (uv_now(&b->loop) >= end)
			return -ETIMEDOUT;
		uv_timer_start(&b->tick, on_tick, end - uv_now(&b->loop) <
		    TICK_MS ? end - uv_now(&b->loop) : TICK_MS, 0);
		uv_run(&b->loop, UV_RUN_ONCE);
	}
}

int
browser_wait(struct browser *b, long id, int timeout_ms, cJSON **result,
    char *why, size_t cap)
{
	struct pending	*p = pending_find(b, id);
	int		 rc;

	if (result)
		*result = NULL;
	if (p == NULL)
		return base_say(why, cap, -ENOENT, "no call %ld under way", id);
	if ((rc = run_until(b, &p->done, timeout_ms, why, cap)) != 0) {
		if (rc == -ETIMEDOUT)
			base_say(why, cap, rc, "no answer in %d ms", timeout_ms);
		return rc;
	}
	if (p->error != NULL)
		rc = base_say(why, cap, -EPROTO, "%s", p->error);
	else if (result) {
		*result = p->result;
		p->result = NULL;
	}
	pending_drop(b, p);
	return rc;
}

int
browser_call(struct browser *b, const char *method, const cJSON *params,
    int on_page, int timeout_ms, cJSON **result, char *why, size_t cap)
{
	char	inner[BROWSER_WHY_MAX];
	long	id;
	int	rc;

	if (result)
		*result = NULL;
	if ((rc = browser_send(b, method, params, on_page, &id, inner,
	    sizeof(inner))) == 0)
		rc = browser_wait(b, id, timeout_ms, result, inner,
		    sizeof(inner));
	if (rc != 0)
		base_say(why, cap, rc, "%s: %s", method, inner);
	return rc;
}

/* --- launch --- */

static void
flags_add(char **argv, int *argc, int max, char *s)
{
	if (*argc < max - 1)
		argv[(*argc)++] = s;
}

int
browser_launch(const struct browser_opts *o, struct browser **out, char *why,
    size_t cap)
{
	struct browser		*b;
	uv_process_options_t	 po;
	uv_stdio_container_t	 stdio[5];
	char			*argv[64], profile_arg[PATH_MAX + 32],
				 dumps_arg[PATH_MAX + 32],
				 size_arg[64], *extra = NULL, *tok, *save,
				 inner[BROWSER_WHY_MAX];
	const char		*tmp = getenv("TMPDIR"), *env;
	cJSON			*v = NULL;
	int			 argc = 0, rc;

	*out = NULL;
	/* a browser that died under a write is EPIPE, not our death */
	signal(SIGPIPE, SIG_IGN);
	if ((b = calloc(1, sizeof(*b))) == NULL)
		return base_say(why, cap, -ENOMEM, "out of memory");
	b->width = o && o->width > 0 ? o->width : 1280;
	b->dpr = o && o->dpr > 0 ? o->dpr : 1;
	b->height = o && o->height > 0 ? o->height : 720;
	b->cancel = o ? o->cancel : NULL;
	cdp_reader_init(&b->rd);
	if ((rc = browser_find(b->exe, sizeof(b->exe), why, cap)) != 0) {
		free(b);
		return rc;
	}
	snprintf(b->profile, sizeof(b->profile), "%s/sloptimize-browser-XXXXXX",
	    tmp && *tmp ? tmp : "/tmp");
	if (mkdtemp(b->profile) == NULL) {
		rc = -errno;
		base_say(why, cap, rc, "cannot make a profile directory in %s: %s",
		    tmp && *tmp ? tmp : "/tmp", strerror(-rc));
		free(b);
		return rc;
	}
	uv_loop_init(&b->loop);
	uv_pipe_init(&b->loop, &b->to, 0);
	uv_pipe_init(&b->loop, &b->from, 0);
	uv_pipe_init(&b->loop, &b->err, 0);
	uv_timer_init(&b->loop, &b->tick);
	b->to.data = b->from.data = b->err.data = b->proc.data = b;
	if (o && o->signals) {
		b->signals = 1;
		uv_signal_init(&b->loop, &b->sigint);
		uv_signal_init(&b->loop, &b->sigterm);
		b->sigint.data = b->sigterm.data = b;
		uv_signal_start(&b->sigint, on_signal, SIGINT);
		uv_signal_start(&b->sigterm, on_signal, SIGTERM);
	}

	snprintf(profile_arg, sizeof(profile_arg), "--user-data-dir=%s",
	    b->profile);
	snprintf(size_arg, sizeof(size_arg), "--window-size=%d,%d", b->width,
	    b->height);
	snprintf(dumps_arg, sizeof(dumps_arg), "--crash-dumps-dir=%s/crashes",
	    b->profile);
	flags_add(argv, &argc, 64, b->exe);
	flags_add(argv, &argc, 64, "--headless=new");
	flags_add(argv, &argc, 64, "--remote-debugging-pipe");
	flags_add(argv, &argc, 64, profile_arg);
	flags_add(argv, &argc, 64, size_arg);
	flags_add(argv, &argc, 64, "--force-device-scale-factor=1");
	flags_add(argv, &argc, 64, "--no-first-run");
	flags_add(argv, &argc, 64, "--no-default-browser-check");
	flags_add(argv, &argc, 64, "--disable-background-networking");
	flags_add(argv, &argc, 64, "--disable-component-update");
	flags_add(argv, &argc, 64, "--disable-sync");
	flags_add(argv, &argc, 64, "--disable-extensions");
	flags_add(argv, &argc, 64, "--disable-default-apps");
	flags_add(argv, &argc, 64, "--mute-audio");
	flags_add(argv, &argc, 64, "--hide-scrollbars");
	/* the crash reporter's handler runs in a session of its own (our
	 * group kill does not reach it: it exits when the browser does) and
	 * keeps its database in the profile, not the user's config */
	flags_add(argv, &argc, 64, "--disable-breakpad");
	flags_add(argv, &argc, 64, dumps_arg);
	/* a headless page is never "in the background": full-rate frames */
	flags_add(argv, &argc, 64, "--disable-background-timer-throttling");
	flags_add(argv, &argc, 64, "--disable-renderer-backgrounding");
	flags_add(argv, &argc, 64, "--disable-backgrounding-occluded-windows");
	/* WebGL falls back to SwiftShader where there is no GPU (the regime
	 * says so); a machine with a GPU uses it */
	flags_add(argv, &argc, 64, "--enable-unsafe-swiftshader");
	if (geteuid() == 0)
		flags_add(argv, &argc, 64, "--no-sandbox");	/* refused otherwise */
	if ((env = getenv("SLOPTIMIZE_BROWSER_ARGS")) != NULL && *env &&
	    (extra = strdup(env)) != NULL)
		for (tok = strtok_r(extra, " \t", &save); tok != NULL;
		    tok = strtok_r(NULL, " \t", &save))
			flags_add(argv, &argc, 64, tok);
	flags_add(argv, &argc, 64, "about:blank");
	argv[argc] = NULL;

	memset(stdio, 0, sizeof(stdio));
	stdio[0].flags = UV_IGNORE;
	stdio[1].flags = UV_IGNORE;
	stdio[2].flags = UV_CREATE_PIPE | UV_WRITABLE_PIPE;
	stdio[2].data.stream = (uv_stream_t *)&b->err;
	stdio[3].flags = UV_CREATE_PIPE | UV_READABLE_PIPE;
	stdio[3].data.stream = (uv_stream_t *)&b->to;
	stdio[4].flags = UV_CREATE_PIPE | UV_WRITABLE_PIPE;
	stdio[4].data.stream = (uv_stream_t *)&b->from;
	memset(&po, 0, sizeof(po));
	po.file = b->exe;
	po.args = argv;
	po.exit_cb = on_proc_exit;
	po.flags = UV_PROCESS_DETACHED;
	po.stdio_count = 5;
	po.stdio = stdio;
	rc = uv_spawn(&b->loop, &b->proc, &po);
	free(extra);
	if (rc != 0) {
		base_say(why, cap, -ENOENT, "cannot run %s: %s (%s)", b->exe,
		    uv_strerror(rc), BROWSER_INSTALL_HINT);
		browser_close(b);
		return -ENOENT;
	}
	b->spawned = 1;
	b->pid = b->proc.pid;
	uv_read_start((uv_stream_t *)&b->from, on_alloc, on_read);
	uv_read_start((uv_stream_t *)&b->err, on_alloc, on_stderr);
	if ((rc = browser_call(b, "Browser.getVersion", NULL, 0, o &&
	    o->start_ms > 0 ? o->start_ms : 60000, &v, inner,
	    sizeof(inner))) != 0) {
		base_say(why, cap, rc, "%s did not start: %s", b->exe, inner);
		browser_close(b);
		return rc;
	}
	snprintf(b->version, sizeof(b->version), "%s",
	    cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(v,
	    "product")) ? cJSON_GetStringValue(
	    cJSON_GetObjectItemCaseSensitive(v, "product")) : "unknown");
	cJSON_Delete(v);
	*out = b;
	return 0;
}

const char *
browser_version(const struct browser *b)
{
	return b->version;
}

const char *
browser_path(const struct browser *b)
{
	return b->exe;
}

int
browser_signal(const struct browser *b)
{
	return b ? b->signalled : 0;
}

const char *
browser_page_error(const struct browser *b)
{
	return b->page_error;
}

/* --- the page --- */

int
browser_open(struct browser *b, const char *init, const char *url,
    int timeout_ms, char *why, size_t cap)
{
	cJSON		*p, *r = NULL;
	const char	*s;
	int		 rc;

	p = cJSON_CreateObject();
	cJSON_AddStringToObject(p, "url", "about:blank");
	rc = browser_call(b, "Target.createTarget", p, 0, timeout_ms, &r, why,
	    cap);
	cJSON_Delete(p);
	if (rc != 0)
		return rc;
	p = cJSON_CreateObject();
	cJSON_AddStringToObject(p, "targetId", cJSON_GetStringValue(
	    cJSON_GetObjectItemCaseSensitive(r, "targetId")) ?
	    cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(r,
	    "targetId")) : "");
	cJSON_AddBoolToObject(p, "flatten", 1);
	cJSON_Delete(r);
	rc = browser_call(b, "Target.attachToTarget", p, 0, timeout_ms, &r,
	    why, cap);
	cJSON_Delete(p);
	if (rc != 0)
		return rc;
	s = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(r,
	    "sessionId"));
	snprintf(b->session, sizeof(b->session), "%s", s ? s : "");
	cJSON_Delete(r);
	if (b->session[0] == '\0')
		return base_say(why, cap, -EPROTO, "Target.attachToTarget gave no "
		    "sessionId");
	if ((rc = browser_call(b, "Inspector.enable", NULL, 1, timeout_ms, NULL,
	    why, cap)) != 0 ||
	    (rc = browser_call(b, "Page.enable", NULL, 1, timeout_ms, NULL, why,
	    cap)) != 0 ||
	    (rc = browser_call(b, "Runtime.enable", NULL, 1, timeout_ms, NULL,
	    why, cap)) != 0 ||
	    (rc = browser_call(b, "Log.enable", NULL, 1, timeout_ms, NULL, why,
	    cap)) != 0)
		return rc;
	p = cJSON_CreateObject();
	cJSON_AddNumberToObject(p, "width", b->width);
	cJSON_AddNumberToObject(p, "height", b->height);
	cJSON_AddNumberToObject(p, "deviceScaleFactor", b->dpr);
	cJSON_AddBoolToObject(p, "mobile", 0);
	rc = browser_call(b, "Emulation.setDeviceMetricsOverride", p, 1,
	    timeout_ms, NULL, why, cap);
	cJSON_Delete(p);
	if (rc != 0)
		return rc;
	if (init != NULL) {
		p = cJSON_CreateObject();
		cJSON_AddStringToObject(p, "source", init);
		rc = browser_call(b, "Page.addScriptToEvaluateOnNewDocument", p,
		    1, timeout_ms, NULL, why, cap);
		cJSON_Delete(p);
		if (rc != 0)
			return rc;
	}
	b->loaded = 0;
	p = cJSON_CreateObject();
	cJSON_AddStringToObject(p, "url", url);
	rc = browser_call(b, "Page.navigate", p, 1, timeout_ms, &r, why, cap);
	cJSON_Delete(p);
	if (rc != 0)
		return rc;
	s = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(r,
	    "errorText"));
	if (s != NULL && *s != '\0') {
		rc = base_say(why, cap, -EHOSTUNREACH, "cannot load %s: %s (is the "
		    "dev server running?)", url, s);
		cJSON_Delete(r);
		return rc;
	}
	cJSON_Delete(r);
	if ((rc = run_until(b, &b->loaded, timeout_ms, why, cap)) != 0) {
		if (rc == -ETIMEDOUT)
			base_say(why, cap, rc, "%s did not finish loading in %d s%s%s",
			    url, timeout_ms / 1000, *b->page_error ? "; " : "",
			    b->page_error);
		return rc;
	}
	return 0;
}

static const char *
exception_text(const cJSON *r)
{
	const cJSON	*x = cJSON_GetObjectItemCaseSensitive(r,
			    "exceptionDetails");
	const cJSON	*ex = cJSON_GetObjectItemCaseSensitive(x, "exception");
	const char	*s;

	if (x == NULL)
		return NULL;
	if ((s = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(ex,
	    "description"))) != NULL)
		return s;
	if ((s = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(ex,
	    "value"))) != NULL)
		return s;
	if ((s = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(x,
	    "text"))) != NULL)
		return s;
	return "an exception without a message";
}

int
browser_eval_send(struct browser *b, const char *expr, long *id, char *why,
    size_t cap)
{
	cJSON	*p = cJSON_CreateObject();
	int	 rc;

	cJSON_AddStringToObject(p, "expression", expr);
	cJSON_AddBoolToObject(p, "awaitPromise", 1);
	cJSON_AddBoolToObject(p, "returnByValue", 1);
	rc = browser_send(b, "Runtime.evaluate", p, 1, id, why, cap);
	cJSON_Delete(p);
	return rc;
}

int
browser_eval_wait(struct browser *b, long id, int timeout_ms, cJSON **value,
    char *why, size_t cap)
{
	cJSON		*r = NULL, *res;
	const char	*ex;
	int		 rc;

	*value = NULL;
	if ((rc = browser_wait(b, id, timeout_ms, &r, why, cap)) != 0)
		return rc;
	if ((ex = exception_text(r)) != NULL) {
		/* "Error: bench: …\n    at …": the message line */
		size_t	n = strcspn(ex, "\n");

		rc = base_say(why, cap, -EINVAL, "%.*s", (int)(n < 900 ? n : 900),
		    ex);
		cJSON_Delete(r);
		return rc;
	}
	res = cJSON_GetObjectItemCaseSensitive(r, "result");
	*value = cJSON_DetachItemFromObjectCaseSensitive(res, "value");
	if (*value == NULL)
		*value = cJSON_CreateNull();
	cJSON_Delete(r);
	return 0;
}

int
browser_eval(struct browser *b, const char *expr, int timeout_ms,
    cJSON **value, char *why, size_t cap)
{
	long	id;
	int	rc;

	*value = NULL;
	if ((rc = browser_eval_send(b, expr, &id, why, cap)) != 0)
		return rc;
	return browser_eval_wait(b, id, timeout_ms, value, why, cap);
}

/* --- taking it down --- */

static int
rm_one(const char *path, const struct stat *st, int flag, struct FTW *f)
{
	(void)st;
	(void)f;
	if (flag == FTW_DP || flag == FTW_D)
		rmdir(path);
	else
		unlink(path);
	return 0;
}

/* Run the loop until the browser has exited and been reaped, or ms
 * pass: in teardown a closed pipe or a detached page is expected, not an
 * end. */
static void
wait_exit(struct browser *b, int ms)
{
	uint64_t	end;

	uv_update_time(&b->loop);
	end = uv_now(&b->loop) + (uint64_t)ms;
	while (!b->exited) {
		uv_update_time(&b->loop);
		if (uv_now(&b->loop) >= end)
			return;
		uv_timer_start(&b->tick, on_tick, TICK_MS, 0);
		uv_run(&b->loop, UV_RUN_ONCE);
	}
}

/* Is any process left in the group?  kill(…, 0) asks without killing. */
static int
group_alive(pid_t pgid)
{
	return kill(-pgid, 0) == 0 || errno == EPERM;
}

static void
on_closed(uv_handle_t *h)
{
	(void)h;
}

int
browser_close(struct browser *b)
{
	struct pending	*p, *next;
	int		 rc = 0, waited;
	long		 id;

	if (b == NULL)
		return 0;
	if (b->spawned && !b->exited) {
		/* politely first (its profile is written out), unless it is
		 * gone or its page crashed */
		b->signalled = 0;
		b->cancel = NULL;
		if (!b->eof && !b->crashed && browser_send(b, "Browser.close",
		    NULL, 0, &id, NULL, 0) == 0)
			wait_exit(b, CLOSE_WAIT_MS);
	}
	if (b->spawned) {
		/* the whole group: renderers, the GPU process, the zygote */
		kill(-b->pid, SIGKILL);
		if (!b->exited) {
			uv_process_kill(&b->proc, SIGKILL);
			wait_exit(b, KILL_WAIT_MS);
		}
		for (waited = 0; group_alive(b->pid) && waited < KILL_WAIT_MS;
		    waited += 50) {
			kill(-b->pid, SIGKILL);
			usleep(50 * 1000);
		}
		if (group_alive(b->pid)) {
			fprintf(stderr, "sloptimize: processes of the browser "
			    "(group %ld) outlived SIGKILL\n", (long)b->pid);
			rc = -EBUSY;
		}
		if (!b->exited)
			fprintf(stderr, "sloptimize: the browser (pid %ld) was "
			    "not reaped\n", (long)b->pid);
	}
	uv_close((uv_handle_t *)&b->to, on_closed);
	uv_close((uv_handle_t *)&b->from, on_closed);
	uv_close((uv_handle_t *)&b->err, on_closed);
	uv_close((uv_handle_t *)&b->tick, on_closed);
	if (b->spawned)
		uv_close((uv_handle_t *)&b->proc, on_closed);
	if (b->signals) {
		uv_close((uv_handle_t *)&b->sigint, on_closed);
		uv_close((uv_handle_t *)&b->sigterm, on_closed);
	}
	uv_run(&b->loop, UV_RUN_DEFAULT);
	(void)uv_loop_close(&b->loop);
	for (p = b->calls; p != NULL; p = next) {
		next = p->next;
		cJSON_Delete(p->result);
		free(p->error);
		free(p);
	}
	cdp_reader_free(&b->rd);
	if (b->profile[0] != '\0')
		nftw(b->profile, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	free(b);
	return rc;
}
