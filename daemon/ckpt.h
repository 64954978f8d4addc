/*
 * ckpt — the daemon's fold kept as a checkpoint beside its cursor, and
 * taken back at start, so that a restart folds only the bytes after it
 * (issue 12; docs/checkpoints.md has the rules and the figures).
 *
 * Start:  the checkpoint is read on the thread pool and checked against
 *         the cursor (same generation, same file) and perf.jsonl (its
 *         identity and the bytes before the offset); the fold it holds
 *         becomes the live catalogue.  fixes.jsonl is then read from
 *         byte 0 as always, but the lines the checkpoint holds are only
 *         kept, not folded again, once their bytes are seen to be the
 *         checkpoint's; perf.jsonl is read from the checkpoint's offset
 *         (tailer_start_at).  Anything that does not match drops the
 *         checkpoint — with a log line — for a fold from byte 0: never a
 *         wrong catalogue.
 * Saving: after `checkpoint-bytes` folded, or once the ledger has been
 *         quiet `checkpoint-idle-ms`, or at the latest `checkpoint-max-ms`
 *         after a change; and at SIGTERM.  The loop only copies what
 *         folding changes (ledger_checkpoint_begin: builds, fixes and the
 *         rows changed since the last save, the first save's rows spread
 *         over loop turns by CKPT_PREPARE_ROWS); the sample blocks, the
 *         megabytes, are written from the thread pool through the state
 *         directory's one writer.  No timer runs while nothing changes.
 *
 * It sits below the fold (daemon/fold.h), which owns it and calls it: it
 * knows only what it saves and takes back — the live catalogue, read
 * through a pointer it is given, the tailer's position, the notifier's
 * state — and never the fold.  What it hands back goes the other way as
 * plain data or through the two calls in `struct ckpt_env`: the
 * checkpoint's fold, given to ckpt_load's `then`; a fold from byte 0, asked
 * for with `refold` when the checkpoint is dropped.
 *
 * Everything here runs on the loop thread but the save and load jobs.
 */
#ifndef DAEMON_CKPT_H
#define DAEMON_CKPT_H

#include <limits.h>
#include <stdint.h>

#include <cjson/cJSON.h>
#include <uv.h>

#include "ledger/ledger.h"
#include "project/checkpoint.h"

/* A save that waits for the notifier is looked at again after 1 s, then
 * twice as long each time up to 30 s: a wake held back for long (a
 * footprint's window) does not wake the daemon every second. */
#define CKPT_WAIT_MS		1000
#define CKPT_WAIT_MAX_MS	30000

/*
 * The loop's share of a save, bounded: the rows the fold changed since
 * the last save are serialised again (ledger_checkpoint_prepare) at most
 * CKPT_PREPARE_ROWS a loop turn (0.2-0.4 ms on the development machine)
 * until at most that many are left, which the begin itself serialises.
 * A fold that changes rows as fast as they are serialised (a storm of
 * new footprints) is let begin once CKPT_PREPARE_STUCK turns in a row
 * left no fewer rows: the save must come.
 */
#define CKPT_PREPARE_ROWS	512
#define CKPT_PREPARE_STUCK	8

struct ckpt_job;
struct config;
struct notifier;
struct tailer;

/* What the checkpoint is given by its owner (daemon/fold.c), at ckpt_init. */
struct ckpt_env {
	uv_loop_t		*loop;
	const struct config	*cfg;		/* may change on SIGHUP */
	const char		*state_dir;
	struct notifier		*notifier;	/* its memory taught at start */
	/* The live catalogue, which the owner keeps and replaces (a new
	 * generation, the start-up): read when a save begins. */
	struct ledger *const	*live;
	/* The live catalogue made again from the fixes kept so far, for a
	 * fold from byte 0 when the checkpoint's is dropped at start (no
	 * save runs then): 0, or -ENOMEM with the checkpoint's left live. */
	int			(*refold)(void *arg);
	void			*arg;
};

/* ckpt_load's answer, on the loop: `l` the checkpoint's fold, now the
 * owner's to make the live catalogue, or NULL when none serves (the fold
 * is from byte 0). */
typedef void ckpt_loaded_fn(void *arg, struct ledger *l);

struct ckpt {
	struct ckpt_env		 env;
	struct tailer		*perf;		/* NULL until ckpt_perf_start */
	int			 ready;		/* ckpt_ready has run */
	int			 stopping;	/* ckpt_stop has run */
	char			 path[PATH_MAX + 16];
	int			 on;		/* cfg.ckpt_on, and set up */

	/* start-up: the checkpoint's fold is the live one, to be confirmed */
	int			 held;
	struct checkpoint_mark	 mark;
	uint64_t		 last_line;	/* the line before its offset */
	int			 fixes_ok;	/* its fixes' bytes were seen */
	ckpt_loaded_fn		*then;
	void			*then_arg;
	uint64_t		 load_t0;	/* uv_hrtime at daemon_start */

	/* the bytes of fixes.jsonl delivered in its generation */
	uint64_t		 fixes_end, fixes_hash;
	int			 fixes_unknown;	/* a line over LEDGER_MAX_LINE */

	/* saving */
	int			 dirty;		/* changed since the last begin */
	int			 unsettled;	/* the last save's mark lacks the
						   file's times (they were too
						   fresh: project/filemark.h):
						   saved again at stop */
	int			 tainted;	/* a line lost to memory: never
						   save this fold */
	uint64_t		 bytes;		/* perf bytes since */
	uint64_t		 first_dirty;	/* uv_now then */
	uv_timer_t		 timer;
	int			 timer_init;
	struct ckpt_job		*job;		/* in flight */
	struct ledger		*retired;	/* replaced while a job reads it */
	uv_mutex_t		 mu;		/* one save at a time */
	int			 mu_init;
	uint64_t		 seq, saved_seq;	/* saved_seq under mu */

	/* for /status and the log */
	uint64_t		 saves, failures;
	int			 last_error;
	uint64_t		 last_offset, last_size;
	double			 last_begin_ms, last_write_ms;
	double			 last_prepare_ms;	/* the longest turn */
	unsigned		 prepare_turns;	/* of the save being begun */
	unsigned		 prepare_stuck;	/* turns without progress */
	size_t			 prepare_least;	/* fewest rows left so far */
	unsigned		 last_prepare_turns;
	int			 resumed;
	uint64_t		 resumed_at;
	double			 load_ms, ready_ms;
	char			 why[CHECKPOINT_WHY_MAX + 64];
	char			 waiting[160];	/* why a save waits, or "" */
	uint64_t		 wait_ms;	/* its next look, 0 if none */
	int			 seeded;	/* the notifier's memory told */
};

/* The path and the lock; env is copied.  0 or -errno.  Before ckpt_load. */
int	ckpt_init(struct ckpt *k, const struct ckpt_env *env);
/* Read the checkpoint on the pool and fold it with options `o`; `then(arg,
 * l)` runs on the loop with its fold, or with NULL when there is none
 * that serves (at once when checkpoints are off).  0, or a libuv error
 * (then `then` has not run); after ckpt_stop, `then` never runs. */
int	ckpt_load(struct ckpt *k, const struct ledger_opts *o,
	    ckpt_loaded_fn *then, void *arg);

/* fixes.jsonl's tailer: a new generation (1 at start). 1 if the ledger's
 * fixes must be kept (they are the checkpoint's), 0 to clear them. */
int	ckpt_fixes_reset(struct ckpt *k, uint64_t generation);
/* A fixes.jsonl line (NULL: one over LEDGER_MAX_LINE, of `len` bytes),
 * already kept by the owner: 1 when the live fold holds it already (or has
 * just been refolded with it), 0 when it is to be folded. */
int	ckpt_fix_line(struct ckpt *k, const char *line, size_t len,
	    uint64_t off);
/* After folding a fix line at start: it was skipped (the fold's skipped
 * lines would come out in another order than in a fold from byte 0). */
void	ckpt_fix_skipped(struct ckpt *k);
/* fixes.jsonl read to its end at start: the checkpoint's fixes must have
 * been seen whole. */
void	ckpt_fixes_ready(struct ckpt *k);
/* perf.jsonl's tailer is made: start it at the checkpoint's offset.  The
 * checkpoint's position is the tailer's from then on. */
void	ckpt_perf_start(struct ckpt *k, struct tailer *perf);
/*
 * Where the events ring starts (events_ring_reset) when the start-up fold
 * resumes from the checkpoint: just after the start of the last line
 * before its offset — the ring holds nothing before the offset, and a
 * watch whose last id is before it gets those wakes re-made from the
 * file; from that line's offset + 1 rather than from the offset itself,
 * so that the span the file is asked for always holds a line.  0 when
 * the checkpoint does not hold (the fold is from byte 0).
 */
uint64_t ckpt_ring_from(const struct ckpt *k);
/* perf.jsonl: a new generation (the checkpoint, if held, is dropped) and
 * the ledger it replaced, which the saver may still be reading. */
void	ckpt_perf_reset(struct ckpt *k, struct ledger *old);
/* The start-up fold is done. */
void	ckpt_ready(struct ckpt *k);
/* The fold changed: `bytes` of perf.jsonl folded (0 for the rest). */
void	ckpt_note(struct ckpt *k, uint64_t bytes);
/* A line could not be folded (out of memory): this fold is not a fold of
 * the file any more, and is never saved. */
void	ckpt_taint(struct ckpt *k);

/* SIGTERM: save now, on the loop, if anything changed. */
void	ckpt_stop(struct ckpt *k);
void	ckpt_free(struct ckpt *k);

/* {path, resumed, resumedAt, loadMs, why, saves, failures, lastError,
 * lastOffset, lastBytes, lastBeginMs, lastWriteMs, pending, waiting} for
 * /status. */
cJSON	*ckpt_status_json(const struct ckpt *k);

#endif
