/*
 * notifier — the one place that decides whether a folded record wakes the
 * agent, and what the wake says (DESIGN §9).  The daemon feeds it every
 * record the fold returns, in file order, with the tailer's phase; the
 * notifier applies the meaningful rule, the catch-up rule and the rate
 * limits (notifier/wake.h), formats the line and its JSON once, and hands
 * the result to its channels: the events socket, the log, desktop
 * notifications and the --exec hook are all callbacks, registered by the
 * caller, called in the order they were added.
 *
 *   REPLAY   the record was delivered by an earlier run (before the saved
 *            cursor): its wake is made again so the events socket can
 *            replay it to a `sloptimize watch` that outlived a kill -9,
 *            but only channels added with NOTIFIER_REPLAYS see it, and
 *            with `replay` set.
 *   CATCHUP  appended while the daemon was stopped: recent records wake,
 *            older ones are counted into one summary line, said when the
 *            next record wakes or when notifier_ready() is called.
 *   LIVE     appended while running: subject to the rate limits; what a
 *            limit holds back is said in the next line that goes out, or
 *            by the flush timer in a summary line when the window reopens.
 *
 * Every function is for the loop thread.  Lifetime (libuv style): the
 * caller embeds struct notifier, calls notifier_close() and lets the loop
 * run before notifier_free().
 */
#ifndef NOTIFIER_NOTIFIER_H
#define NOTIFIER_NOTIFIER_H

#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>
#include <uv.h>

#include "ledger/ledger.h"
#include "notifier/wake.h"

#define NOTIFIER_CHANNELS	8

enum notifier_phase {
	NOTIFIER_REPLAY,
	NOTIFIER_CATCHUP,
	NOTIFIER_LIVE
};

/* One wake, as every channel sees it.  Valid during the call only. */
struct notifier_wake {
	const struct ledger_event *ev;	/* NULL: a summary line */
	uint64_t	 gen, off;	/* its id: the record's (or the last
					   summarised one's) place */
	const char	*id;		/* "<gen>:<off>" */
	const char	*line;		/* the text line, ≤ WAKE_LINE_MAX */
	const cJSON	*json;		/* {type:"wake", id, line, record, …} */
	const char	*text;		/* json printed: len bytes and a NUL */
	size_t		 len;
	int		 replay;	/* 1: REPLAY only, nobody is told */
};

typedef void notifier_channel_fn(void *arg, const struct notifier_wake *w);

#define NOTIFIER_REPLAYS	1	/* channel flag: also REPLAY wakes */

struct notifier_status {
	uint64_t	wakes;		/* wake lines sent, summaries included */
	uint64_t	held;		/* records held back, all time */
	uint64_t	pending;	/* held back and not said yet */
	uint64_t	catchup;	/* records in the catch-up summary */
};

struct notifier {
	/* private */
	uv_timer_t		 flush_timer;
	const struct wake_config *cfg;
	struct wake_config	 limits;	/* what the limiter was made with */
	struct wake_limiter	*limiter;
	struct wake_catchup	*catchup;
	uint64_t		 gen;		/* of the last record */
	uint64_t		 catchup_off;	/* last summarised record */
	uint64_t		 held_off;	/* last held-back record */
	uint64_t		 wakes;
	wake_log_fn		*log;
	void			*log_arg;
	struct {
		notifier_channel_fn	*fn;
		void			*arg;
		unsigned		 flags;
	}			 ch[NOTIFIER_CHANNELS];
	size_t			 nch;
	int			 timer_up;
};

/*
 * Set up on `loop` with `cfg`, which is borrowed: it must outlive the
 * notifier, and its thresholds, recent_ms and loop level are read at
 * every record (a SIGHUP reload edits it in place; the rate limits are
 * re-read by notifier_reconfigure).  log may be NULL.  0 or -ENOMEM /
 * a libuv error; on error nothing needs closing.
 */
int	notifier_init(struct notifier *n, uv_loop_t *loop,
	    const struct wake_config *cfg, wake_log_fn *log, void *log_arg);

/* Add a channel (flags: NOTIFIER_REPLAYS or 0).  0 or -ENOSPC. */
int	notifier_channel_add(struct notifier *n, notifier_channel_fn *fn,
	    void *arg, unsigned flags);

/*
 * One folded record at byte `off` of generation `gen`.  Records that are
 * not meaningful (wake_is_meaningful) are ignored: the caller may pass
 * every one.
 */
void	notifier_record(struct notifier *n, const struct ledger_event *ev,
	    uint64_t gen, uint64_t off, enum notifier_phase phase);

/* The start-up fold is done: say the catch-up summary, if any. */
void	notifier_ready(struct notifier *n);

/*
 * The rate limits in cfg may have changed (SIGHUP): if they did, what the
 * old limiter held back is said first, then a new limiter takes over.
 * 0, or -ENOMEM (the old limiter stays).
 */
int	notifier_reconfigure(struct notifier *n);

void	notifier_status(const struct notifier *n, struct notifier_status *st);
/* {wakes, heldBack, heldPending}: the notifier's part of /status. */
cJSON	*notifier_status_json(const struct notifier *n);

/* Stop the flush timer; the loop must run for it to close.  What is
 * still held back is not said.  Accepts a notifier that failed init. */
void	notifier_close(struct notifier *n);
/* After the loop has run: free the rest.  Accepts a zeroed struct. */
void	notifier_free(struct notifier *n);

#endif
