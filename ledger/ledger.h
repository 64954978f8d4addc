/*
 * ledger — the pure fold of perf.jsonl and fixes.jsonl (DESIGN §5–§7).
 *
 * A struct ledger is fed complete lines, one at a time, in file order, and
 * answers with the issue catalogue, the timeline and measured windows as
 * cJSON trees.  It does no I/O and knows nothing of event loops, so the
 * daemon (live, line by line), the CLI (one pass over the file) and the
 * tests share it.  Not thread-safe: one owner at a time.
 *
 * Memory is O(causes + builds) for the catalogue; with want_timeline it
 * also keeps every heartbeat and hitch, which exact medians need, packed
 * to a few bytes each (samples.h).
 */
#ifndef LEDGER_LEDGER_H
#define LEDGER_LEDGER_H

#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "ledger/ledger_types.h"


struct ledger;

/* The limits, struct ledger_judge, struct ledger_opts, enum ledger_stream
 * and struct ledger_counts: ledger_types.h. */

/*
 * What one folded perf line was, for the daemon's wake events.  Strings
 * point into the ledger's scratch space and are valid until the next
 * fold call.  `row` fields are the catalogue row after this record.
 */
struct ledger_event {
	const char	*type;
	int64_t		 at_ms;		/* LEDGER_NO_TIME if none */
	int		 automated;
	int		 incident;	/* folded into the catalogue */
	int		 counted;	/* inside the from/to and automated filters */
	double		 value;		/* frameMs / worst[0].frameMs / units */
	int		 has_value;
	const char	*unit;		/* "ms", "units" or "" */
	char		 id[9];		/* footprint id, "" if not an incident */
	const char	*key;
	const char	*phase;		/* "" if none */
	const char	*build;		/* "" if none */
	const char	*guess;		/* top verdict, "" if none */
	const char	*confidence;
	const char	*evidence;
	const char	*note;		/* a usermark's `note`, the player's own
					   words (cut at LEDGER_NOTE_MAX - 1
					   bytes); "" if none */
	uint64_t	 count;		/* the row's count after this record */
	const char	*status;	/* "open", "pending", "fixed", "regressed" */
	const char	*entity;	/* the first entity the incident names —
					   "enemy_17 (src/spawn.js:88)", and
					   " +N more" when it names others —
					   from mintedEntities or
					   world.spawnedEntities (spawned first
					   for a spawn-burst); "" if none */
	const char	*regime;	/* what its timings ran on: the record's
					   own `regime`, else its build's last
					   heartbeat's ("hardware", "software",
					   "unknown"); "" if not known */
};

/* Is s a view snapshot's ref as the recorder writes it:
 * hitch-<1..32 of [0-9a-z]>-<1..12 digits>?  (A file name, never a path:
 * what the daemon keeps and `sloptimize repro` takes.) */
int		 ledger_ref_ok(const char *s);

struct ledger	*ledger_create(const struct ledger_opts *opts);
/* What fix verdicts need from now on (the defaults until called): a
 * rendering setting, not folded state.  Can't fail. */
void		 ledger_set_judge(struct ledger *l,
		    const struct ledger_judge *j);
/* Accepts NULL. */
void		 ledger_destroy(struct ledger *l);

/*
 * Fold one complete perf.jsonl line: `line` excludes the '\n' (a trailing
 * '\r' is tolerated, and so is a UTF-8 BOM at its start); `offset` is the
 * byte offset of its first byte.  Returns 0 when folded (ev filled if not
 * NULL), 1 when the line was blank or skipped (skips are counted with
 * their offset and reason), -ENOMEM on allocation failure (nothing half
 * folded).
 */
int	ledger_fold_perf(struct ledger *l, const char *line, size_t len,
	    uint64_t offset, struct ledger_event *ev);
/* Same for a fixes.jsonl line (fix, proposal, merged, rejected). */
int	ledger_fold_fix(struct ledger *l, const char *line, size_t len,
	    uint64_t offset);
/* Forget every fix folded so far (fixes.jsonl was truncated or
 * replaced); its lines are folded again from byte 0.  Can't fail. */
void	ledger_clear_fixes(struct ledger *l);
/* Count a line the reader could not hand over whole (over
 * LEDGER_MAX_LINE): `len` is its full length. */
void	ledger_skip(struct ledger *l, enum ledger_stream s, uint64_t offset,
	    uint64_t len, const char *reason);

/* Counters, for status and doctor (struct ledger_counts). */
void	ledger_counts(const struct ledger *l, struct ledger_counts *c);

/* The last skipped lines as [{stream, offset, length, reason}]. */
cJSON	*ledger_skipped_json(const struct ledger *l);

/* Catalogue filters applied when rendering (from/to/automated are fold
 * options because they change the counts). */
struct ledger_query {
	const char	*type;		/* NULL: all */
	const char	*status;	/* NULL: all */
	size_t		 limit;		/* 0: all */
};

/*
 * The catalogue (DESIGN §7) as {v, generatedAt, counts, issues:[row…],
 * skipped}.  now_ms feeds lastAgoMs.  NULL on allocation failure.
 */
cJSON	*ledger_issues_json(struct ledger *l, const struct ledger_query *q,
	    int64_t now_ms);
/* One row {v, generatedAt, issue, occurrences:[…]} or NULL if the id is
 * unknown (occurrences are kept only for opts.occurrences_of). */
cJSON	*ledger_issue_json(struct ledger *l, const char *id, int64_t now_ms);
/* The timeline {v, from, to, bucketMs, buckets:[…], builds:[…]}; needs
 * want_timeline. */
cJSON	*ledger_history_json(struct ledger *l, int buckets, int64_t now_ms);
/*
 * A measured window: spec is NULL/"" for the default ("before": previous
 * build with evidence, "after": latest build with evidence), a build name,
 * or "<ISO>..<ISO>".  Returns the window object, or NULL and sets *err to
 * a static reason.  Needs want_timeline.
 */
cJSON	*ledger_window_json(struct ledger *l, const char *spec, int after,
	    const char **err);

/*
 * The same catalogue and timeline, written to a sink as they are built:
 * the bytes of cJSON_Print of the ledger_*_json tree (with `extra`'s
 * members appended to the envelope, e.g. the CLI's "source"; NULL for
 * none), but a row or bucket at a time, so memory does not grow with the
 * number of rows.  No newline at the end.  0, -ENOMEM, or the first
 * non-zero return of the sink (nothing more is written after it).
 */
typedef int	(*ledger_sink_fn)(void *arg, const void *data, size_t len);
int	ledger_issues_write(struct ledger *l, const struct ledger_query *q,
	    int64_t now_ms, const cJSON *extra, ledger_sink_fn sink, void *arg);
int	ledger_history_write(struct ledger *l, int buckets, int64_t now_ms,
	    const cJSON *extra, ledger_sink_fn sink, void *arg);
/* A sink writing to a FILE * (arg); -EIO on a short write. */
int	ledger_sink_file(void *file, const void *data, size_t len);

/* Checkpoints, the fold saved and read back: checkpoint.h. */

/* The status of a footprint id right now ("open", "pending", "fixed",
 * "regressed"; docs/json.md), or NULL if it has no row. */
const char *ledger_status_of(struct ledger *l, const char *id);
/* The same, and the row's count now in *count (untouched when there is no
 * row): what a wake re-made later from the file says of its issue. */
const char *ledger_row_state(struct ledger *l, const char *id,
	    uint64_t *count);

/* Situation string "k=v,k2=v2" to a cJSON object of facets. */
cJSON	*ledger_situation_json(const char *ctx);

#endif
