/*
 * browser — driving Chromium for `sloptimize bench --launch` (DESIGN §2,
 * §16; docs/bench.md): find it, start it headless with a fresh profile
 * and `--remote-debugging-pipe`, speak CDP over the pipe (cdp.h) on a
 * libuv loop of its own, and take it down on every path out.
 *
 * The contract a caller can rely on:
 *
 *   - every wait has a deadline: a call answers, or fails with -ETIMEDOUT
 *     and why;
 *   - browser_close() always ends with no process of the browser left:
 *     Browser.close, then SIGKILL to its whole process group, reaped; its
 *     profile directory removed.  A caller that dies without calling it
 *     (SIGKILL) closes the pipe, and Chromium exits when its pipe closes;
 *   - a page that crashes (Inspector.targetCrashed) fails every wait with
 *     -ECONNRESET, a browser that exits with -EPIPE, each with what
 *     Chromium last wrote on stderr;
 *   - with `signals`, SIGINT and SIGTERM fail the wait under way with
 *     -EINTR (browser_signal() says which) so the caller closes the
 *     browser and exits; with `cancel`, another thread setting it does the
 *     same with -ECANCELED.
 *
 * One browser per thread: the loop is its own.  Blocks (it runs its
 * loop until the answer comes): it is for a CLI verb or a worker thread,
 * never for a loop that serves others.
 */
#ifndef BROWSER_BROWSER_H
#define BROWSER_BROWSER_H

#include <limits.h>
#include <stdatomic.h>
#include <stddef.h>

#include <cjson/cJSON.h>

#define BROWSER_WHY_MAX		1024
/* what `--launch` says when there is none */
#define BROWSER_INSTALL_HINT \
	"install Chromium (Debian/Ubuntu: sudo apt-get install chromium; " \
	"Fedora: sudo dnf install chromium; macOS: brew install --cask " \
	"chromium) or set SLOPTIMIZE_BROWSER to a Chromium or Chrome binary"

struct browser_opts {
	int			 width, height;	/* 0: 1280×720 */
	int			 signals;	/* SIGINT/SIGTERM end waits */
	const atomic_int	*cancel;	/* set elsewhere: end waits */
	int			 start_ms;	/* the first answer; 0: 60 s */
	double			 dpr;		/* device pixel ratio; 0: 1 */
};

struct browser;

/*
 * Which browser: $SLOPTIMIZE_BROWSER if set (it must be an executable
 * file: a wrong one is said, not passed over), else the first of
 * chromium, chromium-browser, google-chrome on PATH.  0 with path, or
 * -ENOENT with why (the hint included).
 */
int	browser_find(char *path, size_t cap, char *why, size_t wcap);

/*
 * Start it: headless, fresh profile, the viewport, the pipe; waits for
 * Browser.getVersion.  Extra flags come from $SLOPTIMIZE_BROWSER_ARGS
 * (space-separated).  0 with *out, or a negative errno with why (nothing
 * is left running).
 */
int	browser_launch(const struct browser_opts *o, struct browser **out,
	    char *why, size_t cap);

/* "Chrome/156.0.8078.114" (Browser.getVersion's product), and the
 * executable. */
const char *browser_version(const struct browser *b);
const char *browser_path(const struct browser *b);

/*
 * Open a page: a target at about:blank, attached (flat session), the
 * viewport at the launch's device pixel ratio (1 unless asked), `init`
 * (may be NULL) evaluated before any script of every document, then `url`, waiting for its load event.
 * 0, or a negative errno with why.
 */
int	browser_open(struct browser *b, const char *init, const char *url,
	    int timeout_ms, char *why, size_t cap);

/*
 * Send a call (to the page's session when on_page) without waiting; its
 * id in *id.  params is not consumed (NULL: {}).  0 or a negative errno.
 */
int	browser_send(struct browser *b, const char *method,
	    const cJSON *params, int on_page, long *id, char *why, size_t cap);

/*
 * Wait at most timeout_ms for the answer to id: 0 with *result (the
 * caller's; may be NULL), -ETIMEDOUT (the call stays pending: wait
 * again), -EPROTO (the browser answered with an error: why), or the ends
 * of the contract above.
 */
int	browser_wait(struct browser *b, long id, int timeout_ms,
	    cJSON **result, char *why, size_t cap);

/* browser_send, then browser_wait. */
int	browser_call(struct browser *b, const char *method,
	    const cJSON *params, int on_page, int timeout_ms, cJSON **result,
	    char *why, size_t cap);

/*
 * Runtime.evaluate on the page, awaiting a promise, by value: *value the
 * result (the caller's).  A script that throws or a promise that rejects
 * is -EINVAL with its message in why.  Started with browser_eval_send and
 * finished with browser_eval_wait, another call can run in between.
 */
int	browser_eval_send(struct browser *b, const char *expr, long *id,
	    char *why, size_t cap);
int	browser_eval_wait(struct browser *b, long id, int timeout_ms,
	    cJSON **value, char *why, size_t cap);
int	browser_eval(struct browser *b, const char *expr, int timeout_ms,
	    cJSON **value, char *why, size_t cap);

/* The signal that ended a wait (SIGINT, SIGTERM), or 0. */
int	browser_signal(const struct browser *b);

/* What the page last threw or logged as an error ("" if nothing). */
const char *browser_page_error(const struct browser *b);

/*
 * Take it down (see the contract) and free b; NULL is fine.  Waits at
 * most a few seconds.  Returns 0, or -EBUSY if a process of the group
 * was still there after SIGKILL (said on stderr).
 */
int	browser_close(struct browser *b);

#endif
