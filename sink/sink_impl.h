/*
 * sink_impl — the sink's state, shared by its files (sink.c: the record
 * stream and the life cycle; sink_team.c: the team catalogue on the
 * loop).  Not for anything outside sink/.
 *
 * It sits below sink.h and does not include it: sink.c includes this, so
 * an include back would be a circle (issue 21).  What it needs of the
 * stream's names (enum sink_stream, SINK_NSTREAMS) is batch.h's.
 */
#ifndef SINK_SINK_IMPL_H
#define SINK_SINK_IMPL_H

#include <limits.h>
#include <stdint.h>

#include <uv.h>

#include "base/base.h"
#include "ledger/linesplit.h"
#include "sink/batch.h"
#include "sink/clickhouse.h"
#include "sink/schema.h"
#include "watchers/cursor.h"

enum sink_op { OP_IDLE, OP_CHECK, OP_READ, OP_POST, OP_WAIT, OP_LOSS };

struct sstream {
	struct sink	*s;
	enum sink_stream id;
	char		 cursor_path[PATH_MAX + 64];

	/* What the owner announced. */
	int		 has_dgen;
	uint64_t	 dgen;		/* owner's generation of `fd` */
	uint64_t	 target;	/* delivered up to here */
	int		 fd;		/* our dup, -1: none */
	int		 next_pending;	/* a newer generation waits */
	uint64_t	 next_dgen, next_target;
	int		 next_fd;

	/* What ClickHouse holds: generation = ours, offset = acked. */
	struct cursor	 cur;
	int		 verified;	/* cur checked against fd this run */
	int		 loaded;	/* cur came from a file */
	uint64_t	 lost_bytes, lost_generations;
	/* A generation found gone before it was all acknowledged: what
	 * ClickHouse holds of it is asked before the loss is counted
	 * (OP_LOSS), because an insert whose answer never came may have
	 * been stored all the same. */
	int		 loss_pending;
	uint64_t	 loss_gen, loss_from, loss_to;
	char		 loss_why[CURSOR_WHY_MAX];
	uint64_t	 rows, batches;
	int64_t		 pending_since;	/* first unsent announcement, 0 */

	/* Cursor saves. */
	int		 save_inflight, save_dirty;
	struct cursor	 save_snap;
	int		 save_rc;
	uv_work_t	 save_req;
};

/* A read, handed to the thread pool and back. */
struct sread {
	uv_work_t	 req;
	struct sink	*s;
	struct sstream	*st;
	/* in */
	int		 fd;
	struct cursor	 cur;
	int		 verify;	/* first read of a loaded cursor */
	uint64_t	 target;
	unsigned	 max_rows;
	size_t		 max_bytes;
	/* out */
	int		 rc;		/* 0, -ESTALE (not our content), -errno */
	int		 restarted;	/* verify failed: new generation */
	char		 why[CURSOR_WHY_MAX];
	uint64_t	 end;		/* just past the last line consumed */
	uint64_t	 nrows;
	struct cursor	 next;		/* the cursor once acked */
	struct ch_buf	 body;
	/* worker-only */
	struct linesplit ls;
	uint64_t	 stop_at;
	int		 full, err;
};

struct sink {
	uv_loop_t	*loop;
	struct ch_url	 url;
	struct ch_client *http;
	struct batch	*batch;
	char		 machine[33];
	char		 project[256];
	char		 state_dir[PATH_MAX];
	unsigned	 batch_rows, batch_bytes, batch_ms, timeout_ms;
	unsigned	 backoff_max_ms, backoff_ms;
	base_log_fn	*log;
	void		*log_arg;

	struct sstream	 st[SINK_NSTREAMS];
	enum sink_op	 op;
	struct sread	*rd;		/* in flight: READ or POST */
	struct sread	*ahead;		/* the next batch, read while rd posts */
	int		 ahead_done, ahead_stale;
	uv_timer_t	 timer;		/* backoff and batch age */
	int		 timer_armed;

	int		 schema_ok;
	int		 refused;	/* a newer schema: never write */
	struct schema_info schema;
	char		 check_sql[256];
	char		 loss_sql[1536];	/* OP_LOSS's body, held */
	char		*check_url;
	char		*insert_url;

	uint64_t	 rows, batches, errors, requests;
	char		 last_error[CH_ERR_MAX];
	int64_t		 last_error_ms, last_ok_ms;

	int		 closing, pending;	/* handles and work out */
	void		(*done)(void *);
	void		*done_arg;
};

/* Free the sink once it is closing and nothing is out any more. */
void	sink_free_maybe(struct sink *s);

#endif
