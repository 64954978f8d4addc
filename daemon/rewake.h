/*
 * rewake — wakes made again from perf.jsonl, for an events-socket
 * subscriber that is behind what the replay ring still holds
 * (daemon/server.h).
 *
 * A wake's id is the byte offset of its record's line, so the wakes after
 * any id can be made again from the file.  One job re-makes one bounded
 * chunk, in three steps:
 *
 *   pool   read the chunk (at most REWAKE_MAX_READ bytes of lines) and
 *          fold each line into a scratch catalogue: which records are
 *          meaningful (the notifier's rule), and their footprints;
 *   loop   ask the live catalogue, through the caller's `row` hook, what
 *          each footprint's count and status are now — hash lookups, so
 *          the loop does nothing that scales with the chunk's bytes;
 *   pool   format each wake's line and JSON message.
 *
 * What a re-made wake says (docs/daemon.md, "Resuming"): the record as it
 * was written (type, value, class, build, phase, evidence, id) and its
 * issue as it stands when the wake is made again: `×N` is the catalogue's
 * count now and `status=` the status now, and the JSON says
 * "replayed": true.  No rate limit applies: a resume asks for every
 * meaningful record, and each gets its own wake.
 *
 * Memory is bounded per job: the read block, one line (LEDGER_MAX_LINE),
 * the kept lines (REWAKE_MAX_KEPT) and at most REWAKE_MAX_WAKES messages.
 */
#ifndef DAEMON_REWAKE_H
#define DAEMON_REWAKE_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>

#include <uv.h>

#include "notifier/wake.h"

#define REWAKE_MAX_WAKES	512		/* wakes made per job */
#define REWAKE_MAX_READ		(4u << 20)	/* bytes of lines per job */
#define REWAKE_MAX_KEPT		(2u << 20)	/* meaningful lines kept */

/* One re-made wake: its id's offset and the message, NUL-terminated. */
struct rewake_msg {
	uint64_t	 off;
	char		*json;
	size_t		 len;
};

struct rewake_job;

/* The live catalogue's count and status of footprint `fp` (loop thread);
 * NULL when it has no row. */
typedef const char *rewake_row_fn(struct rewake_job *j, const char *fp,
	    uint64_t *count);
/* The job is over (loop thread); the callee frees it with rewake_free. */
typedef void rewake_done_fn(struct rewake_job *j);

struct rewake_rec;

struct rewake_job {
	/* in: set by the caller, then rewake_start */
	char			 path[PATH_MAX + 32];	/* perf.jsonl */
	uint64_t		 gen;
	uint64_t		 after;		/* lines whose offset > after, */
	int			 after_none;	/* or every line from 0 */
	uint64_t		 limit;		/* and < limit */
	struct wake_config	 cfg;		/* copied: read on the pool */
	char			 loop[16];	/* cfg.loop's text */
	rewake_row_fn		*row;
	rewake_done_fn		*done;
	void			*owner, *arg;	/* the caller's */
	int			 cancelled;	/* by the caller: skip the rest */

	/* out, in `done` */
	int			 rc;		/* 0, or -errno reading */
	int			 consumed;	/* some line was passed */
	uint64_t		 last;		/* the last line passed */
	int			 end;		/* the file ended before limit */
	struct rewake_msg	*msgs;
	size_t			 nmsgs;

	/* private */
	uv_work_t		 req;
	int			 step;
	struct rewake_rec	*recs;
	size_t			 nrecs, caprecs, kept;
	uint64_t		 first;		/* where this chunk starts */
	int			 stop;
	struct ledger		*scratch;
};

/* A zeroed job; NULL without memory. */
struct rewake_job *rewake_new(void);
/* Queue the job on loop's pool: `done` runs once, always.  0, or a libuv
 * error (then `done` will not run; free it). */
int	rewake_start(uv_loop_t *loop, struct rewake_job *j);
/* Free the job and its messages.  Accepts NULL. */
void	rewake_free(struct rewake_job *j);

#endif
