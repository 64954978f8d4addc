/*
 * pagerun — the game's page in a browser sloptimize launches, for every
 * verb that needs one (`bench --launch`, `gate --launch`): the one place
 * that resolves the URL (--url, or the one the Vite plugin recorded in
 * .sloptimize/dev.json) and adds ?sloptimize=bench:<scene>, starts
 * Chromium (browser/browser.h), has it run the page runtime
 * (page-runtime/clock.js and bench.js, build/gen/pagebench.js) before any
 * script of the page with the virtual clock engaged, opens the page, runs
 * one long call of the runtime while polling its progress(), and takes
 * the browser down.
 *
 * The poll is what notices a page that hangs: a script that never
 * returns blocks the page's main thread, so progress() goes unanswered
 * and its deadline passes.  Every wait has a deadline; pagerun_close()
 * leaves no process of the browser and must be called on every path
 * once pagerun_open() succeeded.
 */
#ifndef CLI_PAGERUN_H
#define CLI_PAGERUN_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#define PAGERUN_SEED	1	/* Math.random's seed under the virtual clock */

struct pagerun_req {
	const char		*project;
	const char		*scene;		/* added to the URL */
	const char		*url;		/* --url, or NULL: dev.json's */
	int			 signals;	/* SIGINT/SIGTERM end waits */
	const atomic_int	*cancel;	/* or another thread */
	int			 open_ms;	/* the start, and the load, each */
	int64_t			 deadline;	/* base_mono_ms() after which
						   nothing waits; 0: none */
	double			 dpr;		/* device pixel ratio; 0: 1 */
};

/* How a long call is watched. */
struct pagerun_watch {
	int	 setup_ms;	/* longest in the scene/setup phases */
	int	 stall_ms;	/* longest without a new frame after */
	/* each progress() answer (an object), for a progress line */
	void	(*progress)(void *arg, const cJSON *p);
	void	*arg;
};

struct pagerun;

/*
 * Resolve the URL, launch the browser, open the page with the runtime.
 * 0 with *out; or a negative errno with err: -EINTR (*signal says which),
 * -ECANCELED, -ENAMETOOLONG (the URL: a usage error), else the
 * environment's (no dev.json, no browser, a page that does not load,
 * the deadline).  Nothing is left running on an error.
 */
int	pagerun_open(const struct pagerun_req *r, struct pagerun **out,
	    int *signal, char *err, size_t cap);

/*
 * Evaluate expr (a promise: the runtime's long call) and wait for it,
 * polling sloptimize.bench.progress() once a second as w says, never past
 * the request's deadline.  0 with *result (the caller's), or a negative
 * errno with err: -EINTR (pagerun_signal), -ECANCELED, -ETIMEDOUT (the
 * page hung, or the deadline), anything else the page's or the browser's
 * (a script that threw, a crash).
 */
int	pagerun_eval(struct pagerun *pr, const char *expr,
	    const struct pagerun_watch *w, cJSON **result, char *err,
	    size_t cap);

const char *pagerun_url(const struct pagerun *pr);	/* as opened */
const char *pagerun_browser(const struct pagerun *pr);	/* "Chrome/…" */
int	pagerun_signal(const struct pagerun *pr);	/* ended a wait, or 0 */

/* Take the browser down and free pr (NULL is fine): 0, or -EBUSY when a
 * process of it outlived SIGKILL. */
int	pagerun_close(struct pagerun *pr);

#endif
