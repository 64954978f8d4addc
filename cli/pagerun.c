/*
 * pagerun — the game's page, launched with the runtime injected or the
 * open tab through the daemon's relay (pagerun.h).  Shared by `bench`
 * (cli/benchrun.c), `gate` (cli/gate_capture.c) and `attribute`
 * (cli/attribute.c), so the URL, the injection, the relay, the hang
 * detection and the take-down exist once.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/base.h"
#include "browser/browser.h"
#include "cli/daemon_get.h"
#include "cli/pagerun.h"
#include "cli/watch.h"
#include "project/bench.h"
#include "project/statedir.h"

extern const char pagebench_js[];	/* build/gen/pagebench.c */

#define POLL_MS		1000

struct pagerun {
	struct browser	*b;		/* launched; NULL: the open tab */
	int64_t		 deadline;
	char		 scene[80];
	char		 url[2300];
	char		 version[128];
	int		 open_ms;
	int		 reloads;	/* runs begun again after a reload */
	/* the open tab: the daemon that relays, and what ends its waits */
	struct watch_addr daemon;
	char		 token[STATEDIR_TOKEN_LEN + 1];
	const atomic_int *cancel;
	int		 signals;
};

static int	relay_open(const struct pagerun_req *, struct pagerun *, char *,
		    size_t);

#define PAGERUN_SYNC_MS	5000	/* the plugin waits up to 1 s for its watcher */
#define PAGERUN_RELOADS	1	/* runs begun again after the page reloaded */

/* A wait of want ms, cut to what is left before the deadline (at least
 * 1 ms, so a wait that is due still looks once). */
static int
clip(int64_t deadline, int want)
{
	int64_t	left;

	if (deadline == 0)
		return want;
	left = deadline - base_mono_ms();
	if (left < 1)
		left = 1;
	return left < want ? (int)left : want;
}

/* base with sloptimize=bench:<scene> in its query (before any #). */
static int
scene_url(const char *base, const char *scene, char *out, size_t cap)
{
	const char	*hash = strchr(base, '#'), *q = strchr(base, '?');
	size_t		 head = hash ? (size_t)(hash - base) : strlen(base);
	const char	*sep = "?";
	int		 n;

	if (q != NULL && (hash == NULL || q < hash))
		sep = base[head - 1] == '?' || base[head - 1] == '&' ? "" : "&";
	n = snprintf(out, cap, "%.*s%ssloptimize=bench:%s%s", (int)head, base,
	    sep, scene, hash ? hash : "");
	return n < 0 || (size_t)n >= cap ? -1 : 0;
}

/*
 * Have the dev server take what is on disk before the page loads (the
 * Vite plugin's sync, page-runtime/vite.js): Vite's watcher can miss an
 * edit made just after another of the same file, and the page would run
 * the code before it — a bench of a change that is not there.  Best
 * effort: a page the plugin does not serve (--url to a build) has no such
 * route, and nothing is said.  One plain GET: the HTTP client the CLI has
 * for the daemon speaks to any loopback server.
 */
static void
take_disk(const char *base, int64_t deadline)
{
	struct watch_addr	 a;
	cJSON			*doc = NULL, *taken, *f;
	char			 why[256];

	if (watch_url_parse(base, &a) != 0 ||
	    cli_daemon_get_at(&a, "/@sloptimize/__sync", clip(deadline,
	    PAGERUN_SYNC_MS), &doc, why, sizeof(why)) != 0)
		return;
	taken = cJSON_GetObjectItemCaseSensitive(doc, "taken");
	cJSON_ArrayForEach(f, taken) {
		if (cJSON_IsString(f))
			fprintf(stderr, "sloptimize: the dev server had not "
			    "taken the edit of %s (its file watcher missed it); "
			    "it has now\n", f->valuestring);
	}
	cJSON_Delete(doc);
}

int
pagerun_open(const struct pagerun_req *r, struct pagerun **out, int *signal,
    char *err, size_t cap)
{
	struct browser_opts	 bo = { 1280, 720, r->signals, r->cancel, 0,
				    r->dpr };
	struct pagerun		*pr;
	char			 base[2048], why[BROWSER_WHY_MAX], *init;
	const char		*sig;
	long			 pid;
	size_t			 n;
	int			 rc;

	*out = NULL;
	*signal = 0;
	if (!r->launch && r->url != NULL)
		return base_say(err, cap, -EDESTADDRREQ, "--url names the page a "
		    "launched browser opens: pass --launch with it (without "
		    "--launch the game tab already open is used)");
	if (!r->launch) {
		if ((pr = calloc(1, sizeof(*pr))) == NULL)
			return base_say(err, cap, -ENOMEM, "out of memory");
		pr->deadline = r->deadline;
		pr->open_ms = r->open_ms;
		snprintf(pr->scene, sizeof(pr->scene), "%s", r->scene);
		if ((rc = relay_open(r, pr, err, cap)) != 0) {
			free(pr);
			return rc;
		}
		*out = pr;
		return 0;
	}
	if (r->url != NULL)
		snprintf(base, sizeof(base), "%s", r->url);
	else if ((rc = project_dev_read(r->project, base, sizeof(base), &pid,
	    why, sizeof(why))) != 0) {
		snprintf(err, cap, "%s", why);
		return rc < 0 ? rc : -ENOENT;
	}
	if ((pr = calloc(1, sizeof(*pr))) == NULL) {
		snprintf(err, cap, "out of memory");
		return -ENOMEM;
	}
	pr->deadline = r->deadline;
	pr->open_ms = r->open_ms;
	snprintf(pr->scene, sizeof(pr->scene), "%s", r->scene);
	if (scene_url(base, r->scene, pr->url, sizeof(pr->url)) != 0) {
		free(pr);
		snprintf(err, cap, "the URL is too long");
		return -ENAMETOOLONG;
	}
	take_disk(base, r->deadline);
	bo.start_ms = clip(r->deadline, r->open_ms);
	if ((rc = browser_launch(&bo, &pr->b, why, sizeof(why))) != 0) {
		free(pr);
		if (rc == -EINTR) {
			/* the browser is gone with its handle; why says which */
			sig = strstr(why, "signal ");
			*signal = sig ? atoi(sig + 7) : SIGINT;
		}
		snprintf(err, cap, "%s", why);
		return rc;
	}
	snprintf(pr->version, sizeof(pr->version), "%s",
	    browser_version(pr->b));

	/* virtual from the page's first script: two loads draw the same */
	n = strlen(pagebench_js) + 256;
	if ((init = malloc(n)) == NULL) {
		pagerun_close(pr);
		snprintf(err, cap, "out of memory");
		return -ENOMEM;
	}
	snprintf(init, n, "(function () {\n%s\ninstallBench(globalThis, "
	    "{ mode: 'virtual', seed: %d });\n})();\n", pagebench_js,
	    PAGERUN_SEED);
	rc = browser_open(pr->b, init, pr->url, clip(r->deadline, r->open_ms),
	    why, sizeof(why));
	free(init);
	if (rc != 0) {
		if (rc == -EINTR)
			*signal = browser_signal(pr->b);
		snprintf(err, cap, "%s%s%s", why, *browser_page_error(pr->b) ?
		    "; before that, " : "", browser_page_error(pr->b));
		pagerun_close(pr);
		return rc;
	}
	*out = pr;
	return 0;
}

/* --- the watch: a page that hangs told from a long call ------------------ */

/*
 * What progress() said last: the phase, and the frame reached in it.  A
 * setup phase may take up to w->setup_ms; after it, each new frame must
 * come within w->stall_ms.
 */
struct watching {
	const struct pagerun_watch *w;
	char		 phase[16], last[64];
	int64_t		 phase_at, moved_at;
};

static int
in_setup(const char *phase)
{
	return strcmp(phase, "scene") == 0 || strcmp(phase, "setup") == 0 ||
	    strcmp(phase, "idle") == 0;
}

static void
watching_start(struct watching *ws, const struct pagerun_watch *w)
{
	memset(ws, 0, sizeof(*ws));
	ws->w = w;
	snprintf(ws->phase, sizeof(ws->phase), "scene");
	ws->phase_at = ws->moved_at = base_mono_ms();
}

/* One progress() answer (an object, else nothing happened). */
static void
watching_saw(struct watching *ws, const cJSON *p, int64_t now)
{
	const char	*ph;
	const cJSON	*run, *fr;
	char		 key[64];

	if (!cJSON_IsObject(p))
		return;
	ph = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(p, "phase"));
	run = cJSON_GetObjectItemCaseSensitive(p, "run");
	fr = cJSON_GetObjectItemCaseSensitive(p, "frame");
	if (ph != NULL && strcmp(ph, ws->phase) != 0) {
		snprintf(ws->phase, sizeof(ws->phase), "%s", ph);
		ws->phase_at = ws->moved_at = now;
	}
	snprintf(key, sizeof(key), "%s/%d/%d", ws->phase,
	    cJSON_IsNumber(run) ? run->valueint : 0,
	    cJSON_IsNumber(fr) ? fr->valueint : 0);
	if (strcmp(key, ws->last) != 0) {
		snprintf(ws->last, sizeof(ws->last), "%s", key);
		ws->moved_at = now;
	}
	if (ws->w->progress != NULL)
		ws->w->progress(ws->w->arg, p);
}

/* How long the page may now be silent: what is left of its phase's
 * limit, at least a second. */
static int
watching_limit(const struct watching *ws, int64_t now)
{
	int	limit = in_setup(ws->phase) ?
		    (int)(ws->w->setup_ms - (now - ws->phase_at)) :
		    (int)(ws->w->stall_ms - (now - ws->moved_at));

	return limit < 1000 ? 1000 : limit;
}

/* The page went silent for `quiet` ms, or made no progress past its
 * limits: -ETIMEDOUT with err; else 0. */
static int
watching_late(const struct watching *ws, const struct pagerun *pr,
    int64_t now, int64_t quiet, char *err, size_t cap)
{
	const char	*pe = pr->b ? browser_page_error(pr->b) : "";

	if (quiet >= 0)
		return base_say(err, cap, -ETIMEDOUT, "the page stopped "
		    "answering in its %s phase (%lld s without an answer): a "
		    "script that never returns?%s%s", ws->phase,
		    (long long)(quiet / 1000), *pe ? " " : "", pe);
	if (in_setup(ws->phase) && now - ws->phase_at > ws->w->setup_ms)
		return base_say(err, cap, -ETIMEDOUT, "the scene '%s' was not "
		    "set up in %d s", pr->scene, ws->w->setup_ms / 1000);
	if (!in_setup(ws->phase) && now - ws->moved_at > ws->w->stall_ms)
		return base_say(err, cap, -ETIMEDOUT, "the page made no frame "
		    "for %d s (in its %s phase)", ws->w->stall_ms / 1000,
		    ws->phase);
	return 0;
}

/* --- launched: the call as an evaluation over CDP ------------------------- */

/*
 * After a new document under the run: is it the page the run opened (a
 * reload: Vite's, on an edit), or did the game go to another address —
 * which is no longer the page that was asked for, and is not run again?
 * 0, or -ENOENT with why saying where it went.
 */
static int
same_page(struct pagerun *pr, char *why, size_t cap)
{
	cJSON	*u = cJSON_CreateString(pr->url), *v = NULL;
	char	*q = u != NULL ? cJSON_PrintUnformatted(u) : NULL, *expr;
	size_t	 n;
	int	 rc;

	cJSON_Delete(u);
	if (q == NULL)
		return base_say(why, cap, -ENOMEM, "out of memory");
	n = 2 * strlen(q) + 64;
	if ((expr = malloc(n)) == NULL) {
		free(q);
		return base_say(why, cap, -ENOMEM, "out of memory");
	}
	/* compared in the page: the URL as the browser writes it */
	snprintf(expr, n, "location.href === new URL(%s).href ? '' : "
	    "location.href", q);
	free(q);
	rc = browser_eval(pr->b, expr, 1000, &v, why, cap);
	free(expr);
	if (rc == 0 && cJSON_IsString(v) && v->valuestring[0] != '\0')
		rc = base_say(why, cap, -ENOENT, "the page went to another "
		    "address under the run (%.300s): the game left the page it "
		    "was run on, so nothing was measured", v->valuestring);
	cJSON_Delete(v);
	return rc;
}

/*
 * Did the page go away under an evaluation because it was loaded again —
 * Vite's full reload when its watcher takes an edit, late on a loaded
 * machine — rather than because the browser or the page died?
 */
static int
reloaded_under(const char *why)
{
	return strstr(why, "navigated or closed") != NULL ||
	    strstr(why, "Execution context was destroyed") != NULL ||
	    strstr(why, "Cannot find default execution context") != NULL;
}

/*
 * After a reload under the run: wait until the new document has loaded.
 * The old one's context is gone by the time its evaluation failed, so
 * what answers now is the new document (whose init ran first); while it
 * is being made, the evaluation fails and is asked again.
 */
static int
wait_new_document(struct pagerun *pr, char *why, size_t cap)
{
	int64_t	 end = base_mono_ms() + clip(pr->deadline, pr->open_ms);
	cJSON	*v = NULL;
	int	 rc, done;

	for (;;) {
		rc = browser_eval(pr->b, "document.readyState", 1000, &v, why,
		    cap);
		done = rc == 0 && cJSON_IsString(v) &&
		    strcmp(v->valuestring, "complete") == 0;
		cJSON_Delete(v);
		v = NULL;
		if (done)
			return 0;
		if (rc == -EINTR || rc == -ECANCELED || rc == -ECONNRESET ||
		    rc == -EPIPE)
			return rc;
		if (base_mono_ms() >= end)
			return base_say(why, cap, -ETIMEDOUT, "the page loaded "
			    "again under the run did not finish loading in %d s",
			    pr->open_ms / 1000);
		/* (a signal cuts this short; the next call says it) */
		nanosleep(&(struct timespec){ 0, 100 * 1000 * 1000 }, NULL);
	}
}

/* The call as script: fn is one of the runtime's names and the options
 * JSON, so nothing of the caller's becomes code. */
static char *
call_expr(const char *fn, const cJSON *opts)
{
	char	*o = opts ? cJSON_PrintUnformatted(opts) : NULL, *e;
	size_t	 n = (o ? strlen(o) : 2) + 2 * strlen(fn) + 400;

	if ((e = malloc(n)) != NULL)
		snprintf(e, n, "(async () => { const s = globalThis.sloptimize; "
		    "if (!s || !s.bench || !s.bench.%s) throw new Error('the "
		    "page has no sloptimize bench runtime with %s() (the script "
		    "injected before the page did not run?)'); return await "
		    "s.bench.%s(%s); })()", fn, fn, fn, o ? o : "{}");
	free(o);
	return e;
}

static int
launched_call(struct pagerun *pr, const char *expr,
    const struct pagerun_watch *w, cJSON **result, char *err, size_t cap)
{
	struct browser	*b = pr->b;
	struct watching	 ws;
	char		 why[BROWSER_WHY_MAX];
	cJSON		*p = NULL;
	long		 id;
	int64_t		 now;
	int		 rc;

	*result = NULL;
again:
	watching_start(&ws, w);
	if ((rc = browser_eval_send(b, expr, &id, why, sizeof(why))) != 0)
		goto failed;
	for (;;) {
		rc = browser_eval_wait(b, id, clip(pr->deadline, POLL_MS),
		    result, why, sizeof(why));
		if (rc == 0)
			return 0;
		if (rc != -ETIMEDOUT)
			goto failed;
		now = base_mono_ms();
		if (pr->deadline != 0 && now >= pr->deadline) {
			snprintf(err, cap, "the page did not finish before the "
			    "deadline (in its %s phase)%s%s", ws.phase,
			    *browser_page_error(b) ? ": " : "",
			    browser_page_error(b));
			return -ETIMEDOUT;
		}
		rc = browser_eval(b, "globalThis.sloptimize && globalThis."
		    "sloptimize.bench ? globalThis.sloptimize.bench.progress() "
		    ": null", clip(pr->deadline, watching_limit(&ws, now)), &p,
		    why, sizeof(why));
		now = base_mono_ms();
		if (rc == -ETIMEDOUT)
			return watching_late(&ws, pr, now, now - (in_setup(
			    ws.phase) ? ws.phase_at : ws.moved_at), err, cap);
		if (rc != 0)
			goto failed;
		watching_saw(&ws, p, now);
		cJSON_Delete(p);
		p = NULL;
		if ((rc = watching_late(&ws, pr, now, -1, err, cap)) != 0)
			return rc;
	}
failed:
	cJSON_Delete(p);
	p = NULL;
	/* What was measured so far is dropped and the run begins again on
	 * the page as it is now, once: a dev server that keeps reloading
	 * is an environment that cannot be measured (exit 4). */
	if (rc != -EINTR && rc != -ECANCELED && reloaded_under(why) &&
	    pr->reloads < PAGERUN_RELOADS) {
		pr->reloads++;
		take_disk(pr->url, pr->deadline);
		if ((rc = wait_new_document(pr, why, sizeof(why))) == 0 &&
		    (rc = same_page(pr, why, sizeof(why))) == 0) {
			fprintf(stderr, "sloptimize: the page was loaded again "
			    "under the run (the dev server took an edit of the "
			    "game); running again from the start on the page as "
			    "it is now\n");
			goto again;
		}
	} else if (reloaded_under(why))
		snprintf(why + strlen(why), sizeof(why) - strlen(why), " (the "
		    "page was loaded again under the run %d times: is the dev "
		    "server reloading it on its own?)", pr->reloads + 1);
	if (rc == -EINTR)
		snprintf(err, cap, "interrupted");
	else if (rc == -ECANCELED)
		snprintf(err, cap, "cancelled");
	else
		snprintf(err, cap, "%s%s%s", why, *browser_page_error(b) ?
		    "; before that, " : "", browser_page_error(b));
	return rc;
}

/* --- the open tab: the call as a command through the daemon's relay ----- */

#define RELAY_API	"/api/sloptimize/relay"
#define RELAY_POLL_MS	250	/* between two looks at the command */
#define RELAY_HTTP_MS	10000	/* one request to the daemon */
#define RELAY_ACK_MS	30000	/* the page takes the command (DESIGN §16) */
#define RELAY_SILENT_MS	2000	/* the page says how far it is twice a
				   second (page-runtime/relay.js) */

static volatile sig_atomic_t relay_signalled;

static void
relay_on_signal(int sig)
{
	relay_signalled = sig;
}

/* Why a wait of the open tab ends early: a signal, or the caller. */
static int
relay_ended(const struct pagerun *pr, char *err, size_t cap)
{
	if (relay_signalled)
		return base_say(err, cap, -EINTR, "interrupted");
	if (pr->cancel != NULL && atomic_load(pr->cancel))
		return base_say(err, cap, -ECANCELED, "cancelled");
	return 0;
}

/* The user agent's browser, "Chrome/131.0.0.0" or the like. */
static void
agent_browser(const char *ua, char *out, size_t cap)
{
	static const char *const names[] = { "Edg/", "Firefox/", "Chrome/",
		"Version/", NULL };
	const char	*p = NULL;
	size_t		 i, n;

	for (i = 0; ua != NULL && names[i] != NULL && p == NULL; i++)
		p = strstr(ua, names[i]);
	n = p ? strcspn(p, " ;)") : 0;
	snprintf(out, cap, "%.*s", (int)n, p ? p : "");
	if (n == 0)
		snprintf(out, cap, "unknown browser");
}

/* Is a game page connected to the daemon?  0, or -ENOTCONN with err.
 * Which one a command goes to is the daemon's choice (daemon/relay.c);
 * its answer to the command names it (relay_post). */
static int
relay_page(struct pagerun *pr, char *err, size_t cap)
{
	cJSON		*doc = NULL;
	char		 why[512];
	int		 rc, n;

	if ((rc = cli_daemon_get_at(&pr->daemon, RELAY_API, clip(pr->deadline,
	    RELAY_HTTP_MS), &doc, why, sizeof(why))) != 0)
		return base_say(err, cap, rc, "cannot ask the daemon for the "
		    "game's open tab: %s", why);
	n = cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(doc, "pages"));
	cJSON_Delete(doc);
	if (n == 0)
		return base_say(err, cap, -ENOTCONN, "no game page is connected "
		    "to the daemon: open the game in a browser (its dev server, "
		    "with the sloptimize plugin), or pass --launch");
	return 0;
}

static int
relay_open(const struct pagerun_req *r, struct pagerun *pr, char *err,
    size_t cap)
{
	char		 dir[PATH_MAX], path[PATH_MAX + 32], tok[128];
	const char	*bad = NULL;
	size_t		 n = 0;
	int		 rc;

	pr->signals = r->signals;
	pr->cancel = r->cancel;
	if ((rc = watch_daemon_find(r->project, &pr->daemon, path,
	    sizeof(path), &bad)) != 0)
		return base_say(err, cap, -ENOTCONN, "%s, and the game's open "
		    "tab is reached through it: start it (sloptimized --project "
		    "%s), or pass --launch", rc == -ENOENT ? "no daemon serves "
		    "this project" : bad ? bad : strerror(-rc), r->project);
	/* the token of a write (DESIGN §10): a command runs code of the
	   game in the developer's tab */
	if ((rc = statedir_resolve(r->project, NULL, dir, sizeof(dir))) == 0 &&
	    (rc = statedir_path(dir, "token", path, sizeof(path))) == 0 &&
	    (rc = statedir_read(path, tok, sizeof(tok) - 1, &n)) == 0)
		tok[n] = '\0';
	if (rc != 0 || (n = strspn(tok, "0123456789abcdef")) !=
	    STATEDIR_TOKEN_LEN)
		return base_say(err, cap, -EACCES, "cannot read the daemon's "
		    "token in %s: %s", path, rc ? strerror(-rc) : "not 64 hex "
		    "digits");
	memcpy(pr->token, tok, n);
	pr->token[n] = '\0';
	return relay_page(pr, err, cap);
}

/* Forget the command at the daemon (best effort: the page is told, and
 * may go on; the daemon keeps it busy until it answers). */
static void
relay_cancel(struct pagerun *pr, const char *name)
{
	char	 body[96], why[256];
	cJSON	*out = NULL;
	int	 status;

	snprintf(body, sizeof(body), "{\"cancel\":\"%s\"}", name);
	(void)cli_daemon_request(&pr->daemon, "POST", RELAY_API, pr->token,
	    body, 2000, &status, &out, why, sizeof(why));
	cJSON_Delete(out);
}

/* A page connects again after a reload: wait for it, up to open_ms. */
static int
relay_page_back(struct pagerun *pr, char *err, size_t cap)
{
	int64_t	end = base_mono_ms() + clip(pr->deadline, pr->open_ms);
	int	rc;

	for (;;) {
		if ((rc = relay_ended(pr, err, cap)) != 0)
			return rc;
		if ((rc = relay_page(pr, err, cap)) != -ENOTCONN)
			return rc;
		if (base_mono_ms() >= end)
			return base_say(err, cap, -ETIMEDOUT, "the game's tab "
			    "was loaded again under the run and did not come "
			    "back in %d s", pr->open_ms / 1000);
		nanosleep(&(struct timespec){ 0, RELAY_POLL_MS * 1000000L },
		    NULL);
	}
}

/* Post the command: 0 with its name, or a negative errno with err. */
static int
relay_post(struct pagerun *pr, const char *fn, const cJSON *opts, char *name,
    size_t ncap, char *err, size_t cap)
{
	cJSON		*b = cJSON_CreateObject(), *out = NULL, *e;
	const char	*msg, *id, *code;
	char		*text, why[512];
	int		 rc, status;

	cJSON_AddStringToObject(b, "verb", fn);
	cJSON_AddItemToObject(b, "options", opts ? cJSON_Duplicate(opts, 1) :
	    cJSON_CreateObject());
	text = cJSON_PrintUnformatted(b);
	cJSON_Delete(b);
	if (text == NULL)
		return base_say(err, cap, -ENOMEM, "out of memory");
	rc = cli_daemon_request(&pr->daemon, "POST", RELAY_API, pr->token, text,
	    clip(pr->deadline, RELAY_HTTP_MS), &status, &out, why, sizeof(why));
	free(text);
	if (rc != 0)
		return base_say(err, cap, rc, "%s", why);
	e = cJSON_GetObjectItemCaseSensitive(out, "error");
	msg = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(e,
	    "message"));
	code = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(e,
	    "code"));
	id = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(out, "id"));
	if (status == 202 && id != NULL && strlen(id) < ncap) {
		/* the tab the daemon chose: its URL and browser are the run's */
		e = cJSON_GetObjectItemCaseSensitive(out, "page");
		snprintf(name, ncap, "%s", id);
		snprintf(pr->url, sizeof(pr->url), "%s", cJSON_GetStringValue(
		    cJSON_GetObjectItemCaseSensitive(e, "url")) ?: "");
		agent_browser(cJSON_GetStringValue(
		    cJSON_GetObjectItemCaseSensitive(e, "userAgent")),
		    pr->version, sizeof(pr->version));
		rc = 0;
	} else if (status == 404)
		rc = base_say(err, cap, -ENOTCONN, "%s", msg ? msg : "no game "
		    "page is connected to the daemon");
	else if (status == 409 && code != NULL &&
	    strcmp(code, "page_busy") == 0)
		rc = base_say(err, cap, -EBUSY, "%s", msg);
	else if (status == 409)
		rc = base_say(err, cap, -ENOTCONN, "%s", msg ? msg : "the "
		    "game's tab cannot take a command now");
	else
		rc = base_say(err, cap, -EPROTO, "the daemon refused the "
		    "command (%d): %s", status, msg ? msg : "no reason given");
	cJSON_Delete(out);
	return rc;
}

static int
relay_call(struct pagerun *pr, const char *fn, const cJSON *opts,
    const struct pagerun_watch *w, cJSON **result, char *err, size_t cap)
{
	struct sigaction	 sa, old_int, old_term;
	struct watching		 ws;
	char			 name[64], path[160], why[512], was[2300] = "";
	cJSON			*st = NULL;
	const char		*state;
	int64_t			 now, quiet, age;
	int			 rc, status;

	*result = NULL;
	relay_signalled = 0;
	if (pr->signals) {
		/* no SA_RESTART: a signal cuts the sleep between two looks */
		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = relay_on_signal;
		sigemptyset(&sa.sa_mask);
		sigaction(SIGINT, &sa, &old_int);
		sigaction(SIGTERM, &sa, &old_term);
	}
again:
	if ((rc = relay_post(pr, fn, opts, name, sizeof(name), err, cap)) != 0)
		goto out;
	snprintf(path, sizeof(path), "%s/%s", RELAY_API, name);
	if (*was != '\0' && strcmp(was, pr->url) != 0) {
		/* not the page loaded again: the tab (or the newest one) is
		   at another address, which is not what was asked for */
		rc = base_say(err, cap, -ENOENT, "the game's tab went to "
		    "another address under the run (%.300s, was %.300s): the "
		    "game left the page it was run on, so nothing was "
		    "measured", pr->url, was);
		goto give_up;
	}
	if (*was != '\0')
		fprintf(stderr, "sloptimize: the game's tab was loaded again "
		    "under the run (the dev server took an edit of the game?); "
		    "running again from the start\n");
	watching_start(&ws, w);
	for (;;) {
		if ((rc = relay_ended(pr, err, cap)) != 0)
			goto give_up;
		now = base_mono_ms();
		if (pr->deadline != 0 && now >= pr->deadline) {
			rc = base_say(err, cap, -ETIMEDOUT, "the page did not "
			    "finish before the deadline (in its %s phase)",
			    ws.phase);
			goto give_up;
		}
		cJSON_Delete(st);
		st = NULL;
		if ((rc = cli_daemon_request(&pr->daemon, "GET", path, NULL,
		    NULL, clip(pr->deadline, RELAY_HTTP_MS), &status, &st, why,
		    sizeof(why))) != 0) {
			rc = base_say(err, cap, rc, "lost the daemon that relays "
			    "to the game's tab: %s", why);
			goto give_up;
		}
		if (status != 200) {
			rc = base_say(err, cap, -EPROTO, "the daemon no longer "
			    "knows the command (was it restarted?)");
			goto out;
		}
		state = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(st,
		    "state"));
		now = base_mono_ms();
		if (state != NULL && strcmp(state, "done") == 0) {
			*result = cJSON_DetachItemFromObjectCaseSensitive(st,
			    "result");
			rc = 0;
			goto out;
		}
		if (state != NULL && strcmp(state, "lost") == 0 &&
		    pr->reloads < PAGERUN_RELOADS) {
			/* Vite reloads the page when it takes an edit: the
			   run begins again on the page as it is now, once */
			pr->reloads++;
			snprintf(was, sizeof(was), "%s", pr->url);
			if ((rc = relay_page_back(pr, err, cap)) != 0)
				goto out;
			goto again;
		}
		if (state == NULL || strcmp(state, "failed") == 0 ||
		    strcmp(state, "lost") == 0) {
			rc = base_say(err, cap, state && strcmp(state, "lost") ==
			    0 ? -ECONNRESET : -EIO, "%s", cJSON_GetStringValue(
			    cJSON_GetObjectItemCaseSensitive(st, "error")) ?:
			    "the daemon's answer has no state");
			goto out;
		}
		quiet = (int64_t)cJSON_GetNumberValue(
		    cJSON_GetObjectItemCaseSensitive(st, "quietMs"));
		age = (int64_t)cJSON_GetNumberValue(
		    cJSON_GetObjectItemCaseSensitive(st, "ageMs"));
		if (strcmp(state, "sent") == 0 && age > RELAY_ACK_MS) {
			rc = base_say(err, cap, -ETIMEDOUT, "the game's tab did "
			    "not take the command in %d s (is its main thread "
			    "busy, or the tab asleep?)", RELAY_ACK_MS / 1000);
			goto give_up;
		}
		watching_saw(&ws, cJSON_GetObjectItemCaseSensitive(st,
		    "progress"), now);
		/* past a limit while the page says nothing: its main thread
		   is held, which is what the user is told */
		if ((rc = watching_late(&ws, pr, now, -1, err, cap)) != 0) {
			if (quiet > RELAY_SILENT_MS)
				(void)watching_late(&ws, pr, now, quiet, err,
				    cap);
			goto give_up;
		}
		nanosleep(&(struct timespec){ 0, RELAY_POLL_MS * 1000000L },
		    NULL);
	}
give_up:
	relay_cancel(pr, name);
out:
	cJSON_Delete(st);
	if (pr->signals) {
		sigaction(SIGINT, &old_int, NULL);
		sigaction(SIGTERM, &old_term, NULL);
	}
	return rc;
}

int
pagerun_call(struct pagerun *pr, const char *fn, const cJSON *opts,
    const struct pagerun_watch *w, cJSON **result, char *err, size_t cap)
{
	char	*expr;
	int	 rc;

	if (pr->b == NULL)
		return relay_call(pr, fn, opts, w, result, err, cap);
	if ((expr = call_expr(fn, opts)) == NULL)
		return base_say(err, cap, -ENOMEM, "out of memory");
	rc = launched_call(pr, expr, w, result, err, cap);
	free(expr);
	return rc;
}

const char *
pagerun_url(const struct pagerun *pr)
{
	return pr->url;
}

const char *
pagerun_browser(const struct pagerun *pr)
{
	return pr->version;
}

int
pagerun_signal(const struct pagerun *pr)
{
	return pr->b ? browser_signal(pr->b) : relay_signalled;
}

int
pagerun_launched(const struct pagerun *pr)
{
	return pr->b != NULL;
}

int
pagerun_close(struct pagerun *pr)
{
	int	rc;

	if (pr == NULL)
		return 0;
	rc = pr->b ? browser_close(pr->b) : 0;
	free(pr);
	return rc;
}
