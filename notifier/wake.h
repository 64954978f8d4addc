/*
 * wake — which folded records wake an agent, and the one line that says so
 * (DESIGN §9, docs/notifications.md).  Pure: no loop, no I/O, no clock of
 * its own; every time is passed in as milliseconds since the epoch, so the
 * tests drive it with synthetic times and the notifier owns the timers.
 *
 * Parts:
 *   - the rule (wake_is_meaningful) and the catch-up rule after downtime
 *     (wake_is_recent: recent records wake, older ones go into a tally
 *     said in one summary line);
 *   - the line and its JSON (wake_format, wake_json), with what it says of
 *     the records it stands for beyond its own (struct wake_held: a count,
 *     a time and footprints, most severe first);
 *   - the bounded text they are built with (struct wake_sb) and the list of
 *     footprints a line names (wake_list_text), which the summary lines
 *     (wake_tally.h) are built with too.
 *
 * The limits, the tallies of what they hold back and the summary lines
 * are notifier/wake_tally.h, which uses this and is not used by it: a line
 * is handed what it says of a tally as a struct wake_held.
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
#define WAKE_ENTITY_MAX	120	/* bytes of the entity a line names, at most */
#define WAKE_NOTE_SHARE	160	/* bytes a note (and the evidence) keep
				   before a held-back list gets room */
#define WAKE_ARROW	" \xe2\x86\x92 "	/* " → ": before a line's command */

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

/* The record types a line and a tally tell apart. */
enum wake_type {
	WAKE_TYPE_HITCH,
	WAKE_TYPE_USERMARK,
	WAKE_TYPE_JITTER,
	WAKE_TYPE_OTHER,
	WAKE_NTYPES
};
/* "hitch", "usermark", "jitter", "other", as lines name them */
extern const char *const wake_type_names[WAKE_NTYPES];
/* Which of them `type` is (NULL or unknown: WAKE_TYPE_OTHER). */
enum wake_type wake_type_index(const char *type);

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

/* One footprint a line names for records it stands for. */
struct wake_held_fp {
	char		 fp[9];
	char		 type[16];
	char		 unit[8];	/* "ms", "units" or "" */
	char		 guess[48];	/* "" if none */
	char		 status[16];	/* the latest; "" if none */
	uint64_t	 count;
	double		 worst;
	int		 has_worst;
};

/*
 * What a line says of the records it stands for without lines of their
 * own: how many, the time of the first (the lowest id) and its id, and
 * their footprints, most severe first (ledger/impact.h).  A view a tally
 * fills (wake_tally_held); it owns nothing.
 */
struct wake_held {
	uint64_t	 count;			/* 0: none */
	int64_t		 since;
	uint64_t	 first_gen, first_off;
	const struct wake_held_fp *const *fps;
	size_t		 nfps;
};

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
 * fp, key, count, status, phase, build, guess, confidence, evidence,
 * note, regime, entity}, held, heldSince, heldFrom, heldBy:[…]} where
 * held* describe `held` (may be NULL): held (the count), heldSince (ISO
 * or null), heldFrom (the first id or null) and heldBy, every footprint,
 * most severe first: [{fp, type, count, worst, unit, guess, status}].
 * Absent values are null; ev NULL makes record null (a summary line,
 * wake_summary_json).  NULL on allocation failure; the caller owns the
 * tree.
 */
cJSON	*wake_json(const struct ledger_event *ev, const char *id,
	    const char *line, const struct wake_held *held);

/* --- the text lines are built with --------------------------------------- */

/*
 * A bounded string: appends that do not fit are cut at a UTF-8 boundary
 * and the builder stays full.  cap excludes the NUL.
 */
struct wake_sb {
	char	*buf;
	size_t	 cap;
	size_t	 len;
};

/* Over buf[size], size >= 1, emptied.  Can't fail. */
void	wake_sb_init(struct wake_sb *sb, char *buf, size_t size);
void	wake_sb_put(struct wake_sb *sb, const char *s, size_t n);
void	wake_sb_puts(struct wake_sb *sb, const char *s);
/* At most 255 bytes a call. */
void	wake_sb_printf(struct wake_sb *sb, const char *fmt, ...)
	    __attribute__((format(printf, 2, 3)));
/* Local time "11:02:03", with_date: "2026-03-02 11:02:03". */
void	wake_sb_clock(struct wake_sb *sb, int64_t ms, int with_date);
/* 1 if both times fall on one local day. */
int	wake_same_local_day(int64_t a, int64_t b);

/*
 * The footprint list of a line: ": e1, e2, 3 more footprints" naming the
 * first k of the n in l, each as "81e5eb9b ×7 164ms shader-compile
 * regressed"; " (n footprints)" when k is 0.  Into sb when it is not
 * NULL; returns its length either way.
 */
size_t	wake_list_text(struct wake_sb *sb,
	    const struct wake_held_fp *const *l, size_t n, size_t k);
/* The largest k <= n whose list fits in `room` bytes (0 if none does). */
size_t	wake_list_fit(const struct wake_held_fp *const *l, size_t n,
	    size_t room);

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
