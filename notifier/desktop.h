/*
 * desktop — wake events as desktop notifications for the human who plays.
 *
 * One notification per footprint, updated in place: the next wake of the
 * same footprint replaces the bubble (libnotify reuses the id it got, the
 * spec's replaces_id) instead of stacking a new one.  Urgency is critical
 * only for a regression, normal otherwise.
 *
 * Rate limit: at most one notification shown per desktop_ms (default 5 s)
 * for the whole desktop, because it is one person's screen, whatever the
 * footprint.  What waits is coalesced — one pending update per footprint,
 * the newest, in arrival order, at most DESKTOP_PENDING_MAX footprints —
 * and never lost in silence: the next bubble's body says "+N more" for
 * every update it stands for.
 *
 * D-Bus calls block, so they run off the loop thread (uv_queue_work), one
 * job at a time.  With no notification server (no session bus, nothing
 * owning org.freedesktop.Notifications) the log says so once, the state
 * becomes "unavailable: <reason>", wakes are counted as dropped, and a
 * later wake tries again at most every DESKTOP_RETRY_MS.  Without libnotify
 * (macOS) the same goes through `osascript -e 'display notification …'`
 * (uv_spawn; no in-place update there).
 *
 * libnotify is process-wide: one struct desktop per process.
 */
#ifndef NOTIFIER_DESKTOP_H
#define NOTIFIER_DESKTOP_H

#include <stdint.h>

#include <uv.h>

#include "ledger/ledger.h"
#include "wake.h"

#define DESKTOP_PENDING_MAX	16	/* footprints waiting for their turn */
#define DESKTOP_KEEP		64	/* notifications kept for in-place */
#define DESKTOP_RETRY_MS	60000	/* after "unavailable" */
#define DESKTOP_EVIDENCE_MAX	300	/* bytes of evidence in a body */

struct desktop;
struct desktop_item;
typedef void desktop_close_cb(struct desktop *d);
/* After every attempt to show: status 0 or a negative errno. */
typedef void desktop_shown_cb(struct desktop *d, int status);
/* After the first check for a server (libnotify; osascript has no way to
 * check without showing) and whenever the state changes (desktop_state
 * says the new one). */
typedef void desktop_state_cb(struct desktop *d);

enum desktop_status {
	DESKTOP_DISABLED,
	DESKTOP_OK,
	DESKTOP_UNAVAILABLE,
};

struct desktop {
	void			*data;		/* the caller's */
	desktop_shown_cb	*shown_cb;	/* optional, set after init */
	desktop_state_cb	*state_cb;	/* optional, set after init */

	/* private */
	uv_loop_t		*loop;
	uv_timer_t		 timer;		/* the rate limit's wait */
	uv_work_t		 work;		/* libnotify */
	uv_process_t		 proc;		/* osascript */
	wake_log_fn		*log;
	void			*log_arg;
	uint64_t		 interval_ms;
	enum desktop_status	 status;
	char			 state[256];	/* what desktop_state says */
	struct desktop_item	*pending;	/* FIFO, one per footprint */
	struct desktop_item	**pending_tail;
	unsigned		 npending;
	uint64_t		 overflow;	/* updates with no slot left */
	struct desktop_item	*job;		/* being shown */
	int			 busy;
	int			 closing;
	uint64_t		 next_ms;	/* uv_now when one may show */
	uint64_t		 retry_ms;	/* when unavailable */
	void			*backend;	/* worker-thread state */
	uint64_t		 shown, failed, dropped, coalesced;
	desktop_close_cb	*close_cb;
};

struct desktop_stats {
	uint64_t	shown;		/* notifications the server took */
	uint64_t	failed;		/* attempts that failed */
	uint64_t	dropped;	/* while unavailable or shutting down */
	uint64_t	coalesced;	/* folded into another, said as +N */
	unsigned	pending;
};

/*
 * Start: with cfg->desktop 0 the state is "disabled" and desktop_notify
 * does nothing.  Otherwise a first job checks for a notification server
 * (no bubble shown), so the state is known before the first wake.
 * desktop_ms is the rate limit (0: none).  log may be NULL.  Returns 0 or
 * a libuv error; desktop_close is needed after a 0 return only.
 */
int	desktop_init(struct desktop *d, uv_loop_t *loop,
	    const struct wake_config *cfg, wake_log_fn *log, void *log_arg);

/*
 * Show (or queue) the notification for one wake.  ev may be NULL for a
 * line that is not one record (a held-back or catch-up summary): then the
 * line is the body, under one "sloptimize" notification of its own.
 * Everything needed is copied.  Returns 0 (shown, queued or coalesced; 0
 * also when disabled), -ENOTCONN when unavailable (counted as dropped),
 * -ESHUTDOWN after desktop_close, -ENOMEM.
 */
int	desktop_notify(struct desktop *d, const struct ledger_event *ev,
	    const char *line);

/* The backend compiled in: "libnotify", "osascript" or "none" (NOTIFY=0).
 * Can't fail. */
const char *desktop_backend(void);

/* "ok", "disabled" or "unavailable: <reason>", for status and doctor;
 * valid until the next loop iteration. */
const char *desktop_state(const struct desktop *d);

void	desktop_stats(const struct desktop *d, struct desktop_stats *st);

/*
 * Stop: pending notifications are not shown (counted and logged), a job
 * in progress is waited for, libnotify is released, and cb (may be NULL)
 * runs from the loop when every handle is closed.  Bubbles already on
 * screen stay.
 */
void	desktop_close(struct desktop *d, desktop_close_cb *cb);

#endif
