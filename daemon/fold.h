/*
 * fold — the daemon's live fold: the one owner of the catalogue of the
 * whole ledger (DESIGN §4), of the fixes.jsonl lines it is folded with,
 * of perf.jsonl's generation, and of the change counter the answers built
 * from the files go stale by (daemon/cache.h).  Its checkpoint (ckpt.h)
 * is kept here too, below it: the checkpoint reads the catalogue to save
 * it and knows nothing else of the fold; at start it hands its own fold
 * back (ckpt_load's answer), or asks for a fold from byte 0 (the refold
 * call of `struct ckpt_env`), and this file puts either in place.
 *
 * The tailers' lines and the steps of start-up come in through the fold_*
 * calls below (the daemon never calls the checkpoint); what a line means
 * for a wake is the caller's (daemon.c: fold → notifier →
 * channels).  Everything here runs on the loop thread but the
 * checkpoint's jobs (ckpt.h).
 */
#ifndef DAEMON_FOLD_H
#define DAEMON_FOLD_H

#include <limits.h>
#include <stdint.h>

#include <uv.h>

#include "daemon/ckpt.h"
#include "daemon/config.h"
#include "ledger/ledger.h"
#include "notifier/notifier.h"
#include "watchers/tailer.h"

/* A fixes.jsonl line kept to fold a new generation of perf.jsonl with. */
struct fixline {
	char		*line;		/* NULL: a line over LEDGER_MAX_LINE */
	size_t		 len;
	uint64_t	 off;
};

struct fold {
	struct ledger		*ledger;	/* the live catalogue */
	uint64_t		 changes;	/* lines, skips, generations */
	struct fixline		*fixes;		/* fixes.jsonl lines, to refold */
	size_t			 nfixes, capfixes;
	uint64_t		 generation;	/* perf.jsonl's */
	uint64_t		 regen_end;	/* a replaced file's lines up to
						   here are catch-up */
	int			 ready;		/* the start-up fold is done */
	struct ckpt		 ckpt;		/* the fold saved (ckpt.h) */
	void			(*then)(void *);	/* fold_load's */
	void			*then_arg;
};

/* An empty catalogue and the checkpoint's path and lock: 0 or -errno.
 * loop, cfg (which may change on SIGHUP), state_dir and n are the
 * checkpoint's, and must outlive the fold. */
int	fold_init(struct fold *f, uv_loop_t *loop, const struct config *cfg,
	    const char *state_dir, struct notifier *n);
/*
 * Start-up, in this order: the checkpoint read on the pool, `then(arg)`
 * once the catalogue is its fold or empty (0, or a libuv error: then it
 * has not run); fixes.jsonl read to its end; perf.jsonl's tailer made (to
 * be started at the checkpoint's offset, if it holds); its catch-up done.
 * fold_ready returns 1 when the fold resumed from the checkpoint.
 */
int	fold_load(struct fold *f, void (*then)(void *), void *arg);
void	fold_fixes_ready(struct fold *f);
void	fold_perf_start(struct fold *f, struct tailer *perf);
int	fold_ready(struct fold *f);
/* Where the events ring starts after a start-up fold (ckpt_ring_from). */
uint64_t fold_ring_from(const struct fold *f);
/* The checkpoint's part of /status. */
cJSON	*fold_ckpt_status_json(const struct fold *f);

/* perf.jsonl: a line folded into *ev.  0 folded, 1 skipped (not a valid
 * record), -ENOMEM (not counted; this fold is never saved again). */
int	fold_perf_line(struct fold *f, const char *line, size_t len,
	    uint64_t off, struct ledger_event *ev);
/* The phase a line wakes in: a file that replaced perf.jsonl while we
 * ran holds history up to regen_end, which is caught up, not live. */
enum tail_phase fold_phase(const struct fold *f, uint64_t off, size_t len,
	    enum tail_phase phase);
/* 1 once the line at `off` ends the replaced file's history (then said
 * as a catch-up), 0 otherwise. */
int	fold_regen_done(struct fold *f, uint64_t off, size_t len);
/* perf.jsonl: a line over LEDGER_MAX_LINE, skipped and counted. */
void	fold_perf_long(struct fold *f, uint64_t off, uint64_t len);
/* perf.jsonl: a new generation, `size` bytes of it already there when we
 * are running (0 at start); the catalogue starts again from the fixes. */
void	fold_perf_reset(struct fold *f, uint64_t generation, uint64_t size);

/* fixes.jsonl: a line (kept, and folded unless the checkpoint holds it),
 * one over LEDGER_MAX_LINE, a new generation. */
void	fold_fix_line(struct fold *f, const char *line, size_t len,
	    uint64_t off);
void	fold_fix_long(struct fold *f, uint64_t off, uint64_t len);
void	fold_fix_reset(struct fold *f, uint64_t generation);

/* A footprint's count and status now (wakes re-made from the file). */
const char *fold_row_state(const struct fold *f, const char *fp,
	    uint64_t *count);

void	fold_stop(struct fold *f);
void	fold_free(struct fold *f);

#endif
