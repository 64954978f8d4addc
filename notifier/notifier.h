/*
 * notifier — the one place that decides whether a folded record wakes the
 * agent, and what the wake says (DESIGN §9, docs/notifications.md).  The
 * daemon feeds it every record the fold returns, in file order, with the
 * tailer's phase; the notifier applies the meaningful rule, the catch-up
 * rule (notifier/wake.h) and the rate limits (notifier/wake_tally.h),
 * formats the line and its JSON once, and hands the result to its
 * channels: the events socket, the log, desktop notifications and the
 * --exec hook are all callbacks, registered by the caller, called in the
 * order they were added.
 *
 *   SEED     the record is before the saved cursor (the tailer's start-up
 *            seed, TAIL_SEED): an earlier run delivered it.  If that run
 *            said it (its id is at or before the last line said,
 *            notifier_resume), nothing goes out and notifier_record()
 *            returns 1: the caller's events socket makes its wake again
 *            from the file for a `sloptimize watch` that outlived a kill -9
 *            (daemon/server.h).  If it was not said
 *            (held back, or waiting for a summary, when that run died), it
 *            is said now, as CATCHUP.
 *   CATCHUP  appended while the daemon was stopped (or already in a file
 *            that replaced perf.jsonl): recent records wake, older ones
 *            are counted into one summary line, said before the next line
 *            or when notifier_ready() is called.  One that an earlier run
 *            already said is a SEED.
 *   LIVE     appended while running: subject to the rate limits; what a
 *            limit holds back is said in the next line that goes out, or
 *            by the flush timer in a summary line when the window reopens.
 *
 * Every line that goes out says everything not yet said before it, so
 * line ids only grow and "the last line said" is a watermark: every
 * meaningful record at or before it has been said, by its own line or in
 * one that stands for it.  With a store (notifier_store_set), that id is
 * written before a line reaches the channels added with NOTIFIER_GATED
 * (the events socket), so a restart after kill -9 knows exactly what
 * watchers may have seen: it replays that, and says the rest.  The store
 * is synchronous and must be cheap (a slot: project/statedir.h, one
 * pwrite): it is on the path of every wake.
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

#include "base/base.h"
#include "ledger/ledger.h"
#include "notifier/wake_tally.h"

#define NOTIFIER_CHANNELS	8

enum notifier_phase {
	NOTIFIER_SEED,
	NOTIFIER_CATCHUP,
	NOTIFIER_LIVE
};

/* One wake, as every channel sees it.  Valid during the call only. */
struct notifier_wake {
	const struct ledger_event *ev;	/* NULL: a summary line */
	uint64_t	 gen, off;	/* its id: the record's (or the last
					   one a summary stands for) */
	const char	*id;		/* "<gen>:<off>" */
	const char	*line;		/* the text line, ≤ WAKE_LINE_MAX */
	const cJSON	*json;		/* {type:"wake", id, line, record, …} */
	const char	*text;		/* json printed: len bytes and a NUL */
	size_t		 len;
	int		 summary;	/* 1: stands for other records */
};

typedef void notifier_channel_fn(void *arg, const struct notifier_wake *w);

#define NOTIFIER_GATED		1	/* channel flag: only once stored */

/*
 * Where the id of the last line said is kept (a slot of the state
 * directory, through the daemon).  save() writes gen:off now, on the
 * loop thread, and returns 0 or a negative errno; it must not block
 * (project/statedir.h's slots: one pwrite).
 */
struct notifier_store {
	int	(*save)(void *arg, uint64_t gen, uint64_t off);
	void	*arg;
};

struct notifier_status {
	uint64_t	wakes;		/* wake lines sent, summaries included */
	uint64_t	held;		/* records held back, all time */
	uint64_t	pending;	/* held back and not said yet */
	uint64_t	catchup;	/* records waiting for the catch-up line */
	uint64_t	store_errors;	/* stores that failed */
	int		have_said;	/* a line went out (this run or, per
					   notifier_resume, one before) */
	uint64_t	said_gen, said_off;
	int		have_stored;
	uint64_t	stored_gen, stored_off;
};

struct notifier {
	/* private */
	uv_timer_t		 flush_timer;
	const struct wake_config *cfg;
	struct wake_config	 limits;	/* what the limiter was made with */
	struct wake_limiter	*limiter;
	struct wake_tally	*catchup;
	char			 catchup_why[64];
	struct wake_memory	*memory;
	uint64_t		 gen;		/* of the last record */
	uint64_t		 wakes;
	base_log_fn		*log;
	void			*log_arg;
	struct {
		notifier_channel_fn	*fn;
		void			*arg;
		unsigned		 flags;
	}			 ch[NOTIFIER_CHANNELS];
	size_t			 nch;
	int			 timer_up;

	/* what an earlier run said (notifier_resume) */
	int			 resumed;	/* notifier_resume was called */
	int			 prior;		/* ... and named a line */
	uint64_t		 prior_gen, prior_off;
	/* the last line said, by this run or the one before */
	int			 have_said;
	uint64_t		 said_gen, said_off;

	/* write-ahead for the gated channels */
	struct notifier_store	 store;
	int			 has_store, store_failing;
	int			 have_stored;
	uint64_t		 stored_gen, stored_off;
	uint64_t		 store_errors;
};

/*
 * Set up on `loop` with `cfg`, which is borrowed: it must outlive the
 * notifier, and its thresholds, recent_ms and loop level are read at
 * every record (a SIGHUP reload edits it in place; the rate limits are
 * re-read by notifier_reconfigure).  log may be NULL.  0 or -ENOMEM /
 * a libuv error; on error nothing needs closing.
 */
int	notifier_init(struct notifier *n, uv_loop_t *loop,
	    const struct wake_config *cfg, base_log_fn *log, void *log_arg);

/* Add a channel (flags: NOTIFIER_GATED or 0).  0 or
 * -ENOSPC. */
int	notifier_channel_add(struct notifier *n, notifier_channel_fn *fn,
	    void *arg, unsigned flags);

/*
 * What an earlier run said, read from the store before the first record:
 * `have` 0 when nothing was said yet (a fresh state directory), else the
 * id of its last line.  Not calling it at all means "unknown" (a state
 * directory from before the store): then every SEED record counts as
 * said, as it always did.
 */
void	notifier_resume(struct notifier *n, int have, uint64_t gen,
	    uint64_t off);

/* Store each line's id before the NOTIFIER_GATED channels get it. */
void	notifier_store_set(struct notifier *n, const struct notifier_store *st);

/*
 * One folded record at byte `off` of generation `gen`.  Records that are
 * not meaningful (wake_is_meaningful) are ignored: the caller may pass
 * every one.  1 when an earlier run said it (nothing goes out: SEED,
 * or a CATCHUP record the earlier run said before its cursor was saved),
 * else 0.
 */
int	notifier_record(struct notifier *n, const struct ledger_event *ev,
	    uint64_t gen, uint64_t off, enum notifier_phase phase);

/*
 * Before the first record: the fold starts from a checkpoint (daemon/
 * ckpt.h), whose records were never fed here, so the regression memory
 * is told by the catalogue instead — `id` is a footprint whose row is
 * "regressed" now.  A new generation forgets it like the rest
 * (notifier_generation); notifier_memory_forget() drops it when the
 * checkpoint is dropped before the fold.  0 or -ENOMEM (then that
 * footprint's next regressed record wakes as a regression again).
 */
int	notifier_memory_seed(struct notifier *n, const char *id);
void	notifier_memory_forget(struct notifier *n);

/* The start-up fold (or the catch-up of a replaced file) is done: say the
 * catch-up summary, if any. */
void	notifier_ready(struct notifier *n);

/*
 * A new generation of perf.jsonl starts (truncation, replacement): what is
 * still held back or waiting for its catch-up line is said now, before
 * anything of the new one; the regression memory starts over; `why` (NULL:
 * "while stopped") is how the next catch-up line says where its records
 * come from.
 */
void	notifier_generation(struct notifier *n, const char *why);

/*
 * The rate limits in cfg may have changed (SIGHUP): if they did, what the
 * old limiter held back is said first, then a new limiter takes over.
 * 0, or -ENOMEM (the old limiter stays).
 */
int	notifier_reconfigure(struct notifier *n);

void	notifier_status(const struct notifier *n, struct notifier_status *st);
/* {wakes, heldBack, heldPending, catchupPending, lastSaid, stored,
 * storeErrors}: the notifier's part of /status. */
cJSON	*notifier_status_json(const struct notifier *n);

/*
 * Shutdown: the flush timer stops; the loop must run for it to close.
 * What is still held back is not said here: it was never stored as said,
 * so the next start says it.  Accepts a notifier that failed init.
 */
void	notifier_close(struct notifier *n);
/* After the loop has run: free the rest.  Accepts a zeroed struct. */
void	notifier_free(struct notifier *n);

#endif
