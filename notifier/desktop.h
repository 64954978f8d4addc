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
 * footprint.  Nothing queues behind it: a wake that comes while one may
 * be shown gets its bubble at once; wakes that come during the wait are
 * held together, and when the wait ends one bubble says them — the
 * footprint's own bubble if the burst (a run of wakes with no quiet spell
 * of twice desktop_ms) is one footprint ("+N more" updates), else one "burst"
 * bubble naming every footprint the burst has seen, most severe first,
 * replaced in place while the burst goes on.  Every wake is
 * accounted for: shown, pending or dropped (desktop_stats), never lost in
 * silence.
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

#include <cjson/cJSON.h>
#include <uv.h>

#include "base/base.h"
#include "ledger/ledger.h"
#include "wake.h"

#define DESKTOP_BURST_LINES	8	/* footprints named in a burst bubble */
#define DESKTOP_BURST_KEEP	256	/* footprints a burst tracks; wakes of
					   others are counted, not listed */
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

struct burst_ent;

struct desktop {
	void			*data;		/* the caller's */
	desktop_shown_cb	*shown_cb;	/* optional, set after init */
	desktop_state_cb	*state_cb;	/* optional, set after init */

	/* private */
	uv_loop_t		*loop;
	uv_timer_t		 timer;		/* the rate limit's wait */
	uv_work_t		 work;		/* libnotify */
	uv_process_t		 proc;		/* osascript */
	base_log_fn		*log;
	void			*log_arg;
	uint64_t		 interval_ms;
	enum desktop_status	 status;
	char			 state[448];	/* what desktop_state says */
	struct burst_ent	*burst;		/* footprints of the burst */
	size_t			 nburst, capburst;
	uint64_t		 seq;
	uint64_t		 burst_wakes;	/* in the burst, shown or not */
	uint64_t		 burst_others;	/* of footprints past the KEEP */
	char			*burst_note;	/* its last summary line */
	uint64_t		 burst_notes;
	uint64_t		 unshown;	/* burst wakes no bubble said */
	struct desktop_item	*job;		/* being shown */
	int			 busy;
	int			 closing;
	uint64_t		 next_ms;	/* uv_now when one may show */
	uint64_t		 last_wake_ms;	/* uv_now of the last wake */
	uint64_t		 retry_ms;	/* when unavailable */
	void			*backend;	/* worker-thread state */
	uint64_t		 wakes, shown, sent, replaced, pending;
	uint64_t		 dropped, failed;
	desktop_close_cb	*close_cb;
};

/* wakes == shown + pending + dropped, always. */
struct desktop_stats {
	uint64_t	wakes;		/* handed over while enabled */
	uint64_t	shown;		/* in a bubble the server took */
	uint64_t	sent;		/* bubbles (Notify calls) it took */
	uint64_t	replaced;	/* of those, updated in place */
	uint64_t	pending;	/* waiting for (or in) the next bubble */
	uint64_t	dropped;	/* never shown: no server, shutdown */
	uint64_t	failed;		/* attempts that failed */
};

/*
 * Start: with cfg->desktop 0 the state is "disabled" and desktop_notify
 * does nothing.  Otherwise a first job checks for a notification server
 * (no bubble shown), so the state is known before the first wake.
 * desktop_ms is the rate limit (0: none).  log may be NULL.  Returns 0 or
 * a libuv error; desktop_close is needed after a 0 return only.
 */
int	desktop_init(struct desktop *d, uv_loop_t *loop,
	    const struct wake_config *cfg, base_log_fn *log, void *log_arg);

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
/* {wakes, shown, sent, replaced, pending, dropped, failed}, for /status. */
cJSON	*desktop_stats_json(const struct desktop *d);

/*
 * Stop: pending notifications are not shown (counted and logged), a job
 * in progress is waited for, libnotify is released, and cb (may be NULL)
 * runs from the loop when every handle is closed.  Bubbles already on
 * screen stay.
 */
void	desktop_close(struct desktop *d, desktop_close_cb *cb);

#endif
