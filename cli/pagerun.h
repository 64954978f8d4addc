/*
 * pagerun — the game's page, for every verb that needs one (`bench`,
 * `gate`, `attribute`, `repro`), reached one of two ways (DESIGN §16):
 *
 *   launched   (--launch) the one place that resolves the URL (--url, or
 *              the one the Vite plugin recorded in .sloptimize/dev.json)
 *              and adds ?sloptimize=bench:<scene>, starts Chromium
 *              (browser/browser.h), has it run the page runtime
 *              (page-runtime/clock.js and bench.js, build/gen/pagebench.js)
 *              before any script of the page with the virtual clock
 *              engaged, opens the page, runs one long call of the runtime
 *              while polling its progress(), and takes the browser down;
 *   open tab   the tab the developer has open, through the daemon's relay
 *              (daemon/relay.h): the call is posted as a command with the
 *              daemon's token, and its state polled until the page answers.
 *
 * Either way the call is one of the bench runtime's (run, capture, census,
 * attribute, repro) with its options as data, never script, and the same watch
 * tells a page that hangs from a long bench: a script that never returns
 * blocks the page's main thread, so progress() goes unanswered (launched)
 * or the page stops sending it (open tab), and its deadline passes.
 * Every wait has a deadline; pagerun_close() leaves no process of the
 * browser and must be called on every path once pagerun_open() succeeded.
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
	int			 launch;	/* else the open tab */
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
 * Launched: resolve the URL, launch the browser, open the page with the
 * runtime.  Open tab: find the daemon serving the project, its token, and
 * a game page connected to it.  0 with *out; or a negative errno with err:
 * -EINTR (*signal says which), -ECANCELED, -ENAMETOOLONG (the URL) or
 * -EDESTADDRREQ (a URL without launch): usage errors — errnos no page
 * or browser error uses, so a caller can tell them apart — else the environment's (no dev.json, no browser, a page
 * that does not load, no daemon or no page connected to it: -ENOTCONN,
 * the deadline).  Nothing is left running on an error.
 */
int	pagerun_open(const struct pagerun_req *r, struct pagerun **out,
	    int *signal, char *err, size_t cap);

/*
 * Call sloptimize.bench.<fn>(opts) in the page and wait for it, watching
 * its progress as w says, never past the request's deadline.  0 with
 * *result (the caller's), or a negative errno with err: -EINTR
 * (pagerun_signal), -ECANCELED, -ETIMEDOUT (the page hung, or the
 * deadline), -EBUSY (the open tab runs another command), anything else the
 * page's or the browser's (a call that threw, a crash).
 */
int	pagerun_call(struct pagerun *pr, const char *fn, const cJSON *opts,
	    const struct pagerun_watch *w, cJSON **result, char *err,
	    size_t cap);

/* The page's URL and browser ("Chrome/…"): a launched page's from
 * pagerun_open, the open tab's from its last pagerun_call (the daemon
 * chooses the tab). */
const char *pagerun_url(const struct pagerun *pr);
const char *pagerun_browser(const struct pagerun *pr);
int	pagerun_launched(const struct pagerun *pr);	/* else the open tab */
int	pagerun_signal(const struct pagerun *pr);	/* ended a wait, or 0 */

/* Take the browser down and free pr (NULL is fine): 0, or -EBUSY when a
 * process of it outlived SIGKILL. */
int	pagerun_close(struct pagerun *pr);

#endif
