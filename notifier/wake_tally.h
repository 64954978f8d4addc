/*
 * wake_tally — what the limits hold back and how it is said (DESIGN §9,
 * docs/notifications.md), over notifier/wake.h (the rule and the line),
 * which knows nothing of it.  Pure like it: every time is passed in.
 *
 * Parts:
 *   - the tally (struct wake_tally): records a line stands for without a
 *     line of their own, per footprint — count, worst, verdict, status —
 *     listed most severe first (ledger/impact.h); a wake line is handed
 *     what it says of one as a struct wake_held (wake_tally_held);
 *   - the rate limiter (struct wake_limiter): per footprint and global,
 *     for repeats only.  A usermark and the first line saying a footprint
 *     regressed always go out; the first occurrence of a footprint goes
 *     out unless twice the global limit is already spent (a flood of new
 *     causes).  What it holds back is in its tally, said by the next line
 *     that goes out, or in a summary line when the window reopens
 *     (wake_limiter_flush_at, wake_summary_format);
 *   - the memory of which footprints were last said regressed
 *     (struct wake_memory), which tells a regression from its repeats;
 *   - the summary lines: what was held back, and the catch-up after
 *     downtime (old records, wake_is_recent 0), in one line.
 */
#ifndef NOTIFIER_WAKE_TALLY_H
#define NOTIFIER_WAKE_TALLY_H

#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "ledger/ledger.h"
#include "notifier/wake.h"

/* --- the tally: records said by a line that is not theirs --------------- */

struct wake_tally;

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
	    const struct wake_held_fp *const **out);
/*
 * What a line says of the tally (t may be NULL: nothing), for wake_format
 * and wake_json; valid until the tally changes.  Can't fail (short of
 * memory, the footprints may be left out).
 */
void	wake_tally_held(struct wake_tally *t, struct wake_held *out);

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

#define WAKE_NEVER	INT64_MAX		/* nothing to flush */

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
 * (those of the start-up seed too, so a restart does not wake an old
 * regression again).  O(footprints).
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

#endif
