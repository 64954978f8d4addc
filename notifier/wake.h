/*
 * wake — which folded records wake an agent, and the one line that says so
 * (DESIGN §9).  Pure: no loop, no I/O, no clock of its own; every time is
 * passed in as milliseconds since the epoch, so the tests drive it with
 * synthetic times and the daemon owns the timers.
 *
 * Three parts:
 *   - the rule (wake_is_meaningful) and the text (wake_format, wake_json);
 *   - the rate limiter (struct wake_limiter): per footprint and global;
 *     what it holds back is counted and said in the next line that goes
 *     out, or in a summary line the daemon asks for when the window
 *     reopens (wake_limiter_flush_at / wake_limiter_flush);
 *   - catch-up after downtime: recent records wake, older ones are counted
 *     into one summary line (struct wake_catchup).
 *
 * Lines are at most WAKE_LINE_MAX bytes, which is also at most that many
 * characters however a reader counts them.
 */
#ifndef NOTIFIER_WAKE_H
#define NOTIFIER_WAKE_H

#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "ledger/ledger.h"

#define WAKE_LINE_MAX	500			/* bytes, excluding the NUL */
#define WAKE_LINE_SIZE	(WAKE_LINE_MAX + 1)
#define WAKE_ID_SIZE	48			/* "<u64>:<u64>" + NUL */
#define WAKE_NEVER	INT64_MAX		/* nothing to flush */

/* How the notifier reports trouble: prio is a syslog(3) LOG_* level. */
typedef void wake_log_fn(void *arg, int prio, const char *msg);

/*
 * Every field is a config key and a flag of the daemon (same name, '-'
 * for '_' on the command line).  0 turns a limit off.  See
 * docs/notifications.md for why the defaults are what they are.
 */
struct wake_config {
	double		 hitch_ms;	/* 100: hitch frameMs that wakes */
	int64_t		 per_fp_ms;	/* 10000: 1 wake per footprint per … */
	unsigned	 global_max;	/* 6 wakes … */
	int64_t		 global_window_ms; /* … per 60000 ms, sliding */
	int64_t		 recent_ms;	/* 600000: catch-up records that wake */
	unsigned	 exec_max;	/* 4 --exec children at once */
	unsigned	 exec_queue;	/* 64 waiting, beyond: dropped, counted */
	int64_t		 exec_timeout_ms; /* 60000: then the hook is killed */
	int		 desktop;	/* 1: desktop notifications on */
	int64_t		 desktop_ms;	/* 5000: at most 1 popup per … */
	const char	*loop;		/* automation level, NULL: none */
};

/* Fill in the defaults above.  Can't fail. */
void	wake_config_defaults(struct wake_config *cfg);

/*
 * 1 if the record wakes: a hitch whose value (frameMs) is >= hitch_ms, any
 * usermark, any jitter; never an automated record, a record that is not a
 * catalogue incident, or one outside the fold's filters.  A hitch without
 * a frameMs does not wake (nothing says it was long).
 */
int	wake_is_meaningful(const struct ledger_event *ev,
	    const struct wake_config *cfg);

/* "<generation>:<byte offset>" into out[WAKE_ID_SIZE]. */
void	wake_id_format(char out[WAKE_ID_SIZE], uint64_t generation,
	    uint64_t offset);

/* What the rate limiter held back before this line, said at its end. */
struct wake_held {
	uint64_t	count;		/* 0: nothing */
	int64_t		since_ms;	/* the first held-back record's time */
};

/*
 * The wake line:
 *
 *   sloptimize hitch 141.2ms shader-compile/medium "evidence" fp=81e5eb9b
 *   ×7 status=regressed phase=play build=v1788 id=3:1048576 loop=propose
 *   +12 more since 11:02:03
 *
 * (one line).  Evidence is quoted with '"' and '\' escaped and control
 * characters dropped (newlines and tabs become spaces); other tokens have
 * spaces and controls turned into '_'.  Empty phase, build, evidence and a
 * NULL/"" /"off" loop level leave their token out.  When the line would be
 * longer than WAKE_LINE_MAX (or size - 1), the evidence is shortened first,
 * at a UTF-8 boundary and marked with "…", so the fp, id and held-back
 * count survive; only if that is not enough is the line itself cut.
 * held may be NULL; times are local (localtime_r).  Returns the length,
 * or -EINVAL if size is 0.
 */
int	wake_format(char *buf, size_t size, const struct ledger_event *ev,
	    const char *id, const struct wake_held *held,
	    const struct wake_config *cfg);

/*
 * "hitch 141.2ms", "usermark worst 61.0ms", "jitter 0.67units": the
 * measure part of the line, shared with the desktop summary.  Returns the
 * length (cut to size - 1).
 */
int	wake_what_format(char *buf, size_t size, const struct ledger_event *ev);

/*
 * The same wake as {type:"wake", id, line, record:{type, at, value, unit,
 * fp, key, count, status, phase, build, guess, confidence, evidence},
 * held, heldSince}.  Absent values are null.  NULL on allocation failure;
 * the caller owns the tree.
 */
cJSON	*wake_json(const struct ledger_event *ev, const char *id,
	    const char *line, const struct wake_held *held);
/* A line that is not one record (held-back or catch-up summary):
 * {type:"wake", id:null, line, record:null, held}. */
cJSON	*wake_note_json(const char *line, uint64_t held);

/* --- rate limits --------------------------------------------------------- */

struct wake_limiter;

/* NULL on allocation failure or global_max > WAKE_GLOBAL_MAX_LIMIT. */
#define WAKE_GLOBAL_MAX_LIMIT	100000
struct wake_limiter *wake_limiter_create(const struct wake_config *cfg);
/* Accepts NULL. */
void	wake_limiter_destroy(struct wake_limiter *wl);

/*
 * Decide for one meaningful record at now_ms.  Returns 1 when its line
 * goes out now: *held says what was held back before it (and the count is
 * reset: the caller must say it in this line).  Returns 0 when a limit
 * holds it back: it is counted, to be said later.  -ENOMEM when the
 * footprint table cannot grow (nothing changed).  A clock that steps back
 * is treated as standing still.
 */
int	wake_limiter_admit(struct wake_limiter *wl,
	    const struct ledger_event *ev, int64_t now_ms,
	    struct wake_held *held);

/*
 * When something is held back and no new wake comes, the time (ms) from
 * which wake_limiter_flush will produce the summary line: the daemon arms
 * a timer for it after every admit that returned 0.  WAKE_NEVER when
 * nothing is held.
 */
int64_t	wake_limiter_flush_at(const struct wake_limiter *wl);

/*
 * At or after flush_at: write the summary line
 *   sloptimize held back: +12 more since 11:02:03 (hitch 9, usermark 3),
 *   last fp=81e5eb9b
 * into buf, count it against the global limit, reset the held count, and
 * return its length.  0 when there is nothing to say yet.  *count (may be
 * NULL) gets how many records the line stands for.
 */
int	wake_limiter_flush(struct wake_limiter *wl, int64_t now_ms,
	    char *buf, size_t size, uint64_t *count);

struct wake_limiter_stats {
	uint64_t	sent;		/* lines admitted, summaries included */
	uint64_t	held;		/* records held back, all time */
	uint64_t	pending;	/* held back and not yet said */
};
void	wake_limiter_stats(const struct wake_limiter *wl,
	    struct wake_limiter_stats *st);

/* --- catch-up after downtime -------------------------------------------- */

/*
 * During the start-up fold: 1 if a meaningful record at at_ms should wake
 * (within recent_ms of now_ms, or stamped in the future), 0 if it goes into
 * the catch-up summary.  A record without a time is summarised (nothing
 * says it is recent); recent_ms 0 summarises everything.
 */
int	wake_is_recent(int64_t at_ms, int64_t now_ms,
	    const struct wake_config *cfg);

struct wake_catchup;

struct wake_catchup *wake_catchup_create(void);
/* Accepts NULL. */
void	wake_catchup_destroy(struct wake_catchup *wc);
/* Count one summarised record.  0 or -ENOMEM (then it is counted but
 * cannot compete for "top fp"). */
int	wake_catchup_add(struct wake_catchup *wc,
	    const struct ledger_event *ev);
/*
 *   sloptimize catch-up: 37 meaningful records while stopped (hitch 30,
 *   usermark 4, jitter 3) from 09:12:01 to 10:45:13, top fp=81e5eb9b ×12
 * (one line; ×N counts the summarised records of that footprint; times
 * are local, with the date when the span is not within one day).  Returns
 * the length, 0 when nothing was added.
 */
int	wake_catchup_format(const struct wake_catchup *wc, char *buf,
	    size_t size);
uint64_t wake_catchup_count(const struct wake_catchup *wc);

#endif
