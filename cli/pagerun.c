/*
 * pagerun — the game's page in a launched browser, the runtime injected
 * (pagerun.h).  Shared by `bench --launch` (cli/benchrun.c) and
 * `gate --launch` (cli/gate_capture.c), so the URL, the injection, the
 * hang detection and the take-down exist once.
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

extern const char pagebench_js[];	/* build/gen/pagebench.c */

#define POLL_MS		1000

struct pagerun {
	struct browser	*b;
	int64_t		 deadline;
	char		 scene[80];
	char		 url[2300];
	char		 version[128];
	int		 open_ms;
	int		 reloads;	/* runs begun again after a reload */
};

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

static int
in_setup(const char *phase)
{
	return strcmp(phase, "scene") == 0 || strcmp(phase, "setup") == 0 ||
	    strcmp(phase, "idle") == 0;
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

int
pagerun_eval(struct pagerun *pr, const char *expr,
    const struct pagerun_watch *w, cJSON **result, char *err, size_t cap)
{
	struct browser	*b = pr->b;
	char		 why[BROWSER_WHY_MAX], phase[16], last[64];
	cJSON		*p = NULL;
	long		 id;
	int64_t		 phase_at, moved_at, now;
	int		 rc;

	*result = NULL;
again:
	snprintf(phase, sizeof(phase), "scene");
	last[0] = '\0';
	if ((rc = browser_eval_send(b, expr, &id, why, sizeof(why))) != 0)
		goto failed;
	phase_at = moved_at = base_mono_ms();
	for (;;) {
		int	limit;
		char	key[64];

		rc = browser_eval_wait(b, id, clip(pr->deadline, POLL_MS),
		    result, why, sizeof(why));
		if (rc == 0)
			return 0;
		if (rc != -ETIMEDOUT)
			goto failed;
		now = base_mono_ms();
		if (pr->deadline != 0 && now >= pr->deadline) {
			snprintf(err, cap, "the page did not finish before the "
			    "deadline (in its %s phase)%s%s", phase,
			    *browser_page_error(b) ? ": " : "",
			    browser_page_error(b));
			return -ETIMEDOUT;
		}
		limit = in_setup(phase) ? (int)(w->setup_ms - (now - phase_at)) :
		    (int)(w->stall_ms - (now - moved_at));
		if (limit < 1000)
			limit = 1000;
		rc = browser_eval(b, "globalThis.sloptimize && globalThis."
		    "sloptimize.bench ? globalThis.sloptimize.bench.progress() "
		    ": null", clip(pr->deadline, limit), &p, why, sizeof(why));
		now = base_mono_ms();
		if (rc == -ETIMEDOUT) {
			snprintf(err, cap, "the page stopped answering in its %s "
			    "phase (%lld s without an answer): a script that "
			    "never returns?%s%s", phase,
			    (long long)((now - (in_setup(phase) ? phase_at :
			    moved_at)) / 1000), *browser_page_error(b) ? " " :
			    "", browser_page_error(b));
			return -ETIMEDOUT;
		}
		if (rc != 0)
			goto failed;
		if (cJSON_IsObject(p)) {
			const char *ph = cJSON_GetStringValue(
			    cJSON_GetObjectItemCaseSensitive(p, "phase"));
			const cJSON *run = cJSON_GetObjectItemCaseSensitive(p,
			    "run"), *fr = cJSON_GetObjectItemCaseSensitive(p,
			    "frame");

			if (ph != NULL && strcmp(ph, phase) != 0) {
				snprintf(phase, sizeof(phase), "%s", ph);
				phase_at = moved_at = now;
			}
			snprintf(key, sizeof(key), "%s/%d/%d", phase,
			    cJSON_IsNumber(run) ? run->valueint : 0,
			    cJSON_IsNumber(fr) ? fr->valueint : 0);
			if (strcmp(key, last) != 0) {
				snprintf(last, sizeof(last), "%s", key);
				moved_at = now;
			}
			if (w->progress != NULL)
				w->progress(w->arg, p);
		}
		cJSON_Delete(p);
		p = NULL;
		if (in_setup(phase) && now - phase_at > w->setup_ms) {
			snprintf(err, cap, "the scene '%s' was not set up in "
			    "%d s", pr->scene, w->setup_ms / 1000);
			return -ETIMEDOUT;
		}
		if (!in_setup(phase) && now - moved_at > w->stall_ms) {
			snprintf(err, cap, "the page made no frame for %d s (in "
			    "its %s phase)", w->stall_ms / 1000, phase);
			return -ETIMEDOUT;
		}
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
		fprintf(stderr, "sloptimize: the page was loaded again under "
		    "the run (the dev server took an edit of the game); "
		    "running again from the start on the page as it is now\n");
		take_disk(pr->url, pr->deadline);
		if ((rc = wait_new_document(pr, why, sizeof(why))) == 0)
			goto again;
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
	return browser_signal(pr->b);
}

int
pagerun_close(struct pagerun *pr)
{
	int	rc;

	if (pr == NULL)
		return 0;
	rc = browser_close(pr->b);
	free(pr);
	return rc;
}
