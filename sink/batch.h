/*
 * batch — one ledger line to one ClickHouse row (JSONEachRow).
 *
 * A row is the record as written plus what the team's queries group and
 * order by: machine, project, stream, generation, offset (the key), and
 * the columns the fold would read from the record — footprint id and key
 * by the fold's own reading rule (DESIGN §6), type, at, build, automated,
 * phase, ctx, the value and its unit, the top verdict — so ClickHouse
 * never parses JSON.  The footprint, value, build and type come from
 * ledger_fold_perf() on a private ledger: the sink folds each record
 * exactly as the daemon does, so "the line the fold skipped" and "the id
 * the fold gave" mean the same thing in both.
 *
 * No I/O; one owner at a time (the sink's worker thread).  Memory: the
 * private ledger's rows and builds, O(causes + builds), like the daemon's.
 */
#ifndef SINK_BATCH_H
#define SINK_BATCH_H

#include <stddef.h>
#include <stdint.h>

#include "sink/clickhouse.h"

enum sink_stream { SINK_PERF = 0, SINK_FIXES = 1, SINK_NSTREAMS = 2 };

/* "perf" or "fixes": the `stream` column and the cursor files' names. */
const char	*sink_stream_name(enum sink_stream s);

struct batch;

/* machine and project are copied.  NULL on allocation failure. */
struct batch	*batch_create(const char *machine, const char *project);
/* Accepts NULL. */
void		 batch_destroy(struct batch *b);

/*
 * Append the row of one complete line (no '\n'; a leading BOM and a
 * trailing '\r' are tolerated as the fold tolerates them) at byte
 * `offset` of `generation` to `out`, ending in '\n'.  Returns 0 when a row
 * was added, 1 when the line is not a record by the fold's rules (blank,
 * not JSON, no string type: the fold skips it, so it is not sent),
 * -ENOMEM or -E2BIG (out is full; nothing was added).
 */
int	batch_add(struct batch *b, enum sink_stream s, uint64_t generation,
	    const char *line, size_t len, uint64_t offset, struct ch_buf *out);

#endif
