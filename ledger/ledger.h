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

/*
 * Checkpoints: everything the fold holds (rows, builds, fix state, the
 * timeline's samples, counters, skipped lines) as a versioned,
 * checksummed byte string, so a reader that saved one folds only the
 * bytes after it.  Where the bytes go, and which file offset they stand
 * for, is the caller's business: no I/O here.
 *
 * ledger_checkpoint_write() hands the bytes to cb in pieces (cb returns
 * 0 or -errno; the first error stops the write and is returned).  Can be
 * called at any point between folds; the ledger is not changed.
 *
 * ledger_checkpoint_read() makes a new ledger from a checkpoint, folded
 * with `opts` (which must be the options it was written with).  0 and
 * *out, or no ledger and *why (if not NULL) set to a static reason:
 *	-EBADMSG	not a checkpoint, torn (short) or damaged
 *	-EPROTO		another format version, or another byte order
 *	-ESTALE		folded with other options
 *	-ENOMEM
 * A checkpoint is never half used: on any refusal the caller folds the
 * ledger from its start.
 */
#define LEDGER_CHECKPOINT_VERSION	4	/* 2: fix evidence per build;
					   3: rows keyed by footprint v2 (an
					   older one holds v1 ids: refused,
					   folded again);
					   4: heartbeats' seconds and regime */
int	ledger_checkpoint_write(const struct ledger *l,
	    int (*cb)(void *arg, const void *data, size_t len), void *arg);
int	ledger_checkpoint_read(const struct ledger_opts *opts,
	    const void *data, size_t len, struct ledger **out,
	    const char **why);

/*
 * The same read from a source that hands the `len` bytes over in pieces
 * (a file read as it goes), so the reader never holds the whole
 * checkpoint beside the ledger it builds.  pull(arg, buf, n) must fill
 * buf with the next n bytes and return 0, or return -errno (-EBADMSG if
 * the source ended early); the reader asks for exactly `len` bytes in
 * all, in order.  Returns as ledger_checkpoint_read, or pull's error
 * (*why "could not be read").  The trailer is checked last: a torn or
 * damaged checkpoint costs the reading of it, and is still never used.
 */
int	ledger_checkpoint_read_stream(const struct ledger_opts *opts,
	    uint64_t len, int (*pull)(void *arg, void *buf, size_t n),
	    void *arg, struct ledger **out, const char **why);

/*
 * The write in two steps, for an owner that must not stall (the daemon's
 * loop): ledger_checkpoint_begin() copies, on the owner's thread, what
 * folding changes — counters, builds, fixes, skipped lines, the open
 * sample blocks — and only refers to the sealed sample blocks, which
 * never change once sealed and are most of the bytes.  The rows are kept
 * serialised in the ledger between saves, by runs of a few rows: begin
 * serialises again only the runs whose rows the fold changed since the
 * last begin (or prepare), and refers to the others.  The snapshot is
 * then written by ledger_snap_write() on any thread while the owner
 * folds on: the bytes are those ledger_checkpoint_write() gave at begin.
 * The ledger must not be destroyed before the snapshot is freed (it owns
 * the sample blocks).  begin: 0 or -ENOMEM.  ledger_snap_size() is the
 * length snap_write will write; ledger_snap_free accepts NULL (on any
 * thread).
 *
 * ledger_checkpoint_prepare() does begin's row work ahead, at most
 * `budget` rows of it, so an owner can spread the first save (every row
 * to serialise) or a save after many changed rows over several turns of
 * its loop; *left (if not NULL) is how many rows begin would still
 * serialise now.  0 or -ENOMEM.  Rows changed after a prepare are made
 * again at begin: the snapshot is always of the ledger at begin.
 */
struct ledger_snap;
int	ledger_checkpoint_prepare(struct ledger *l, size_t budget,
	    size_t *left);
int	ledger_checkpoint_begin(struct ledger *l, struct ledger_snap **out);
uint64_t ledger_snap_size(const struct ledger_snap *s);
int	ledger_snap_write(const struct ledger_snap *s,
	    int (*cb)(void *arg, const void *data, size_t len), void *arg);
void	ledger_snap_free(struct ledger_snap *s);

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
