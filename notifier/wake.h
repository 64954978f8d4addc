/*
 * wake — which folded records wake an agent, and the one line that says so
 * (DESIGN §9, docs/notifications.md).  Pure: no loop, no I/O, no clock of
 * its own; every time is passed in as milliseconds since the epoch, so the
 * tests drive it with synthetic times and the notifier owns the timers.
 *
 * Parts:
 *   - the rule (wake_is_meaningful) and the text (wake_format, wake_json);
 *   - the tally (struct wake_tally): records a line stands for without a
 *     line of their own, per footprint — count, worst, verdict, status —
 *     listed most severe first (ledger/impact.h) in the line that says
 *     them;
 *   - the rate limiter (struct wake_limiter): per footprint and global,
 *     for repeats only.  A usermark and the first line saying a footprint
 *     regressed always go out; the first occurrence of a footprint goes
 *     out unless twice the global limit is already spent (a flood of new
 *     causes).  What it holds back is in its tally, said by the next line
 *     that goes out, or in a summary line when the window reopens
 *     (wake_limiter_flush_at, wake_summary_format);
 *   - the memory of which footprints were last said regressed
 *     (struct wake_memory), which tells a regression from its repeats;
 *   - catch-up after downtime: recent records wake, older ones go into a
 *     tally said in one summary line.
 *
 * Lines are at most WAKE_LINE_MAX bytes, which is also at most that many
 * characters however a reader counts them, and every one ends with the
 * command that shows its issue, `sloptimize issues --fp ID`.
 */
#ifndef NOTIFIER_WAKE_H
#define NOTIFIER_WAKE_H

#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "base/base.h"
#include "ledger/ledger.h"

#define WAKE_LINE_MAX	500			/* bytes, excluding the NUL */
#define WAKE_LINE_SIZE	(WAKE_LINE_MAX + 1)
#define WAKE_ID_SIZE	48			/* "<u64>:<u64>" + NUL */
#define WAKE_NEVER	INT64_MAX		/* nothing to flush */
#define WAKE_ENTITY_MAX	120	/* bytes of the entity a line names, at most */
#define WAKE_NOTE_SHARE	160	/* bytes a note (and the evidence) keep
				   before a held-back list gets room */

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

struct wake_tally;

/*
 * The wake line:
 *
 *   sloptimize hitch 141.2ms shader-compile/medium "evidence" fp=81e5eb9b
 *   ×7 status=regressed phase=play build=v1788 id=3:1048576 loop=propose
 *   +12 more since 11:02:03: 16a7255f ×9 164ms long-script open, …
 *   → sloptimize issues --fp 81e5eb9b
 *
 * (one line).  A usermark's note comes after the verdict as
 * note="…".  Evidence and note are quoted with '"' and '\' escaped and
 * control characters dropped (newlines and tabs become spaces); other
 * tokens have spaces and controls turned into '_'.  Empty phase, build,
 * evidence, note and a NULL/""/"off" loop level leave their token out.
 * `held` (may be NULL or empty) is what the limiter held back before this
 * line: its count, the time of the first, and as many of its footprints
 * as fit, most severe first.  Room goes, in order, to everything else
 * (never shortened), the note and the evidence up to WAKE_NOTE_SHARE
 * bytes each, held-back footprints, then the rest of the note and the
 * evidence; what is shortened ends in "…" at a UTF-8 boundary.  Only if
 * the fixed tokens alone are too long is the line itself cut.  Times are
 * local (localtime_r).  Returns the length, or -EINVAL if size is 0.
 */
int	wake_format(char *buf, size_t size, const struct ledger_event *ev,
	    const char *id, struct wake_tally *held,
	    const struct wake_config *cfg);

/*
 * "hitch 141.2ms", "usermark worst 61.0ms", "jitter 0.67units": the
 * measure part of the line, shared with the desktop summary.  Returns the
 * length (cut to size - 1).
 */
int	wake_what_format(char *buf, size_t size, const struct ledger_event *ev);

/*
 * The same wake as {type:"wake", id, line, record:{type, at, value, unit,
 * fp, key, count, status, phase, build, guess, confidence, evidence,
 * note}, held, heldSince, heldFrom, heldBy:[…]} where held* describe
 * `held` (see wake_tally_json).  Absent values are null.  NULL on
 * allocation failure; the caller owns the tree.
 */
cJSON	*wake_json(const struct ledger_event *ev, const char *id,
	    const char *line, struct wake_tally *held);

/* --- the tally: records said by a line that is not theirs --------------- */

/* One footprint of a tally. */
struct wake_tally_fp {
	char		 fp[9];
	char		 type[16];
	char		 unit[8];	/* "ms", "units" or "" */
	char		 guess[48];	/* "" if none */
	char		 status[16];	/* the latest; "" if none */
	uint64_t	 count;
	double		 worst;
	int		 has_worst;
};

struct wake_tally *wake_tally_create(void);
/* Accepts NULL. */
void	wake_tally_destroy(struct wake_tally *t);
/*
 * Count one record (generation gen, byte offset off) that a later line
 * will stand for.  now_ms is its time when it has no `at`.  0, or
 * -ENOMEM (then it is counted in the totals but not listed by
 * footprint).
 */
int	wake_tally_add(struct wake_tally *t, const struct ledger_event *ev,
	    uint64_t gen, uint64_t off, int64_t now_ms);
/* Move everything from src into dst; src is empty after.  0 or -ENOMEM
 * (then the totals are moved and some footprints are not listed). */
int	wake_tally_merge(struct wake_tally *dst, struct wake_tally *src);
/* Forget everything (it was said).  Can't fail. */
void	wake_tally_reset(struct wake_tally *t);
uint64_t wake_tally_count(const struct wake_tally *t);
/* The records' times: the first added (its `at`, or now_ms without
 * one), and the earliest and latest `at` (LEDGER_NO_TIME if none). */
int64_t	wake_tally_since(const struct wake_tally *t);
void	wake_tally_span(const struct wake_tally *t, int64_t *first_at,
	    int64_t *last_at);
/* The smallest and largest id added (0 when empty). */
void	wake_tally_ids(const struct wake_tally *t, uint64_t *first_gen,
	    uint64_t *first_off, uint64_t *last_gen, uint64_t *last_off);
/* Its footprints, most severe first (ledger/impact.h; ties: count, then
 * id); valid until the tally changes.  Returns how many. */
size_t	wake_tally_list(struct wake_tally *t,
	    const struct wake_tally_fp *const **out);
/*
 * Add to `o` what a line says of the tally: held (the count), heldSince
 * (ISO or null), heldFrom (the first id or null) and heldBy, every
 * footprint, most severe first: [{fp, type, count, worst, unit, guess,
 * status}].  0 or -ENOMEM.
 */
int	wake_tally_json(struct wake_tally *t, cJSON *o);

/* --- rate limits --------------------------------------------------------- */

/* Why a record may skip the limits. */
enum wake_why {
	WAKE_REPEAT,	/* both limits apply */
	WAKE_NEW,	/* the first occurrence of a footprint: goes out
			   unless 2 × global_max lines are in the window */
	WAKE_REGRESSED,	/* the first line saying a fix did not hold:
			   always goes out */
	WAKE_USERMARK	/* a person pressed the key: always goes out */
};

struct wake_limiter;

/* NULL on allocation failure or global_max > WAKE_GLOBAL_MAX_LIMIT. */
#define WAKE_GLOBAL_MAX_LIMIT	100000
struct wake_limiter *wake_limiter_create(const struct wake_config *cfg);
/* Accepts NULL. */
void	wake_limiter_destroy(struct wake_limiter *wl);

/*
 * Decide for one meaningful record (id gen:off) at now_ms.  Returns 1
 * when its line goes out now (counted in the window; the caller says
 * wake_limiter_held() in it and resets that tally).  Returns 0 when a
 * limit holds it back: it is added to the held tally.  -ENOMEM when the
 * footprint table cannot grow (nothing changed).  A clock that steps back
 * is treated as standing still.
 */
int	wake_limiter_admit(struct wake_limiter *wl,
	    const struct ledger_event *ev, enum wake_why why, uint64_t gen,
	    uint64_t off, int64_t now_ms);

/*
 * Hold one record back without a decision: a repeat an earlier run held
 * and died before saying (notifier.h).  It is said like any held record,
 * by the next line or a summary as soon as the global window allows.
 */
void	wake_limiter_hold(struct wake_limiter *wl,
	    const struct ledger_event *ev, uint64_t gen, uint64_t off,
	    int64_t now_ms);

/* What is held back and not said yet.  Never NULL. */
struct wake_tally *wake_limiter_held(struct wake_limiter *wl);

/* A line the limiter did not admit went out at now_ms (a summary): it
 * counts against the global window like any line. */
void	wake_limiter_sent(struct wake_limiter *wl, int64_t now_ms);

/*
 * When something is held back and no new wake comes, the time (ms) from
 * which a summary line may go out: the global window has room and the
 * first held footprint's own window has reopened.  The notifier arms a
 * timer for it.  WAKE_NEVER when nothing is held.
 */
int64_t	wake_limiter_flush_at(struct wake_limiter *wl, int64_t now_ms);

struct wake_limiter_stats {
	uint64_t	sent;		/* lines admitted and summaries sent */
	uint64_t	held;		/* records held back, all time */
	uint64_t	pending;	/* held back and not yet said */
};
void	wake_limiter_stats(const struct wake_limiter *wl,
	    struct wake_limiter_stats *st);

/* --- regressions --------------------------------------------------------- */

/*
 * Which footprints were last seen regressed, over every meaningful record
 * (replayed ones too, so a restart does not wake an old regression
 * again).  O(footprints).
 */
struct wake_memory;

struct wake_memory *wake_memory_create(void);
/* Accepts NULL. */
void	wake_memory_destroy(struct wake_memory *m);
/* A new generation: the catalogue starts over, so does this. */
void	wake_memory_reset(struct wake_memory *m);
/*
 * Note one meaningful record; 1 when it is the first to say its footprint
 * regressed since it last was not (or since it was first seen): that line
 * always wakes.  0 otherwise (also on allocation failure).
 */
int	wake_memory_regression(struct wake_memory *m,
	    const struct ledger_event *ev);
/*
 * Say that footprint `id` was last seen regressed (`regressed` 1) or not,
 * without a record: a fold resumed from a checkpoint skips the records
 * that would have taught it (daemon/ckpt.h).  0 or -ENOMEM.
 */
int	wake_memory_set(struct wake_memory *m, const char *id, int regressed);

/* --- summary lines ----------------------------------------------------- */

/*
 * A line that stands for records without lines of their own:
 *
 *   sloptimize held back: +12 more since 11:02:03 (hitch 9, jitter 3):
 *   81e5eb9b ×7 164ms shader-compile regressed, 16a7255f ×5 120ms
 *   long-script open, 2 more footprints → sloptimize issues --fp 81e5eb9b
 *
 *   sloptimize catch-up: 37 meaningful records while stopped (hitch 30,
 *   usermark 4, jitter 3) from 09:12:01 to 10:45:13: 81e5eb9b ×12 …
 *
 * `catchup` (old records, `why` says where they come from: "while
 * stopped", "in the replaced file") and `held` (what the limiter held)
 * may each be NULL or empty; with both, the catch-up headline goes first
 * and the footprints of both are listed together.  Times are local, with
 * the date when a span is not within one day.  Returns the length, 0 when
 * both are empty, -EINVAL if size is 0.
 */
int	wake_summary_format(char *buf, size_t size, struct wake_tally *catchup,
	    const char *why, struct wake_tally *held,
	    const struct wake_config *cfg);

/*
 * Its JSON: {type:"wake", id, line, record:null, held, heldSince,
 * heldFrom, heldBy, catchup} — id is the last record the line stands for,
 * held counts every record it stands for, catchup those of them that are
 * catch-up records.  NULL on allocation failure.
 */
cJSON	*wake_summary_json(const char *id, const char *line,
	    struct wake_tally *catchup, struct wake_tally *held);

/* --- catch-up after downtime -------------------------------------------- */

/*
 * During the start-up fold: 1 if a meaningful record at at_ms should wake
 * (within recent_ms of now_ms, or stamped in the future), 0 if it goes into
 * the catch-up summary.  A record without a time is summarised (nothing
 * says it is recent); recent_ms 0 summarises everything.
 */
int	wake_is_recent(int64_t at_ms, int64_t now_ms,
	    const struct wake_config *cfg);

#endif
