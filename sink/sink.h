/*
 * sink — send every record the daemon folds to ClickHouse, in order, in
 * batches, with an acknowledged cursor of its own (DESIGN §15,
 * docs/team.md).
 *
 * The interface is small on purpose: the owner (the daemon, or a test
 * driver) gives the loop, the state directory and the sink URL, then says
 * after each line it folded "stream S of generation G is delivered up to
 * byte X, and fd holds it" (sink_advance).  The sink does the rest on its
 * own: it RE-READS those bytes from the file on the thread pool, in
 * bounded batches, builds one row per record (batch.h), POSTs them with
 * libcurl on the same loop (clickhouse.h), and moves its cursor only when
 * ClickHouse has answered 200.  Nothing is queued in memory but the one
 * batch in hand, so a slow or absent ClickHouse costs the daemon nothing
 * but lag: tailing, wakes and the API never wait for it.
 *
 * Rows are keyed by (machine, project, stream, generation, offset) in a
 * ReplacingMergeTree: after a crash, a kill -9 or an hour without
 * ClickHouse, the sink resends from its cursor and a resend replaces what
 * was already there instead of counting twice.
 *
 * Generations: `generation` in rows is the sink's own counter per stream,
 * kept in its cursor files, bumped whenever the file it reads is not the
 * content its cursor points into (the owner announced a new generation,
 * or at start the cursor's window hash does not match).  The owner's
 * generation numbers are only compared for change.  A generation whose
 * file was truncated in place before it was all sent cannot be read any
 * more: the bytes of it ClickHouse does not hold (asked, since an insert
 * that timed out may be stored) are counted in `lostBytes` and said in
 * the log.  A file
 * renamed away is still read to its end through the descriptor held.
 *
 * Everything runs on the loop thread; the work items touch only what they
 * were handed.
 */
#ifndef SINK_SINK_H
#define SINK_SINK_H

#include <errno.h>
#include <stdint.h>

#include <cjson/cJSON.h>
#include <uv.h>

#include "base/base.h"
#include "sink/batch.h"

#ifndef ELIBACC
#define ELIBACC	ENOENT		/* as sink/lazycurl.h: macOS has none */
#endif

#define SINK_BATCH_ROWS		10000
#define SINK_BATCH_BYTES	(8u << 20)	/* a batch's body at most */
#define SINK_BATCH_MS		1000		/* oldest unsent record */
#define SINK_TIMEOUT_MS		10000		/* one request, whole */
#define SINK_BACKOFF_MAX_MS	30000

struct sink_opts {
	const char	*url;		/* http://HOST:8123/?database=DB */
	const char	*state_dir;	/* the project's; its parent holds
					   machine-id */
	const char	*project;	/* NULL: the state directory's name */
	const char	*machine;	/* NULL: machine-id (made if missing) */
	unsigned	 batch_rows;	/* 0: SINK_BATCH_ROWS */
	unsigned	 batch_bytes;	/* 0: SINK_BATCH_BYTES */
	unsigned	 batch_ms;	/* 0: SINK_BATCH_MS */
	unsigned	 timeout_ms;	/* 0: SINK_TIMEOUT_MS */
	unsigned	 backoff_max_ms; /* 0: SINK_BACKOFF_MAX_MS */
	base_log_fn	*log;		/* may be NULL */
	void		*log_arg;
};

struct sink;

/*
 * Check the options, read or make the machine id, load the cursors
 * (synchronously: start-up, a few hundred bytes).  Nothing is sent until
 * the loop runs.  0 or -errno, with a sentence in err; -ELIBACC when
 * libcurl cannot be loaded (sink/lazycurl.h: loaded here, the first time
 * a sink is made, and not before).
 */
int	sink_create(struct sink **out, uv_loop_t *loop,
	    const struct sink_opts *o, char *err, size_t cap);

/*
 * Lines of stream `st` up to byte `end` of the owner's generation `gen`
 * are folded; `fd` is a descriptor of the file they are in (the sink
 * dups it when it starts that generation; -1 when the owner has none).
 * Call it after every line or every batch of lines; it is cheap (no I/O,
 * no allocation).  A new `gen` means new content from byte 0.
 */
void	sink_advance(struct sink *s, enum sink_stream st, uint64_t gen,
	    uint64_t end, int fd);

/* The sink's state for /status and doctor, as a JSON object. */
cJSON	*sink_status_json(const struct sink *s);

/*
 * The same object for a sink that was asked for (`url`) but could not be
 * made (`why`: sink_create's sentence, e.g. libcurl not loadable at
 * `at_ms`): state "unavailable", the URL without its password, lastError.
 * So /status and doctor say the sink is off and why, instead of a null
 * that reads "no --sink".
 */
cJSON	*sink_status_off_json(const char *url, const char *why,
	    int64_t at_ms);

/* Sent, acknowledged, up to date: for tests and benchmarks.  1 when
 * every byte announced is acknowledged and nothing is in flight. */
int	sink_idle(const struct sink *s);

/*
 * The team catalogue (team.h) from this sink's ClickHouse, without
 * blocking: the queries run on the sink's HTTP client, the finish on the
 * thread pool, then done(arg, catalogue, NULL) — the caller owns the
 * tree — or done(arg, NULL, reason) runs on the loop thread, exactly
 * once (also when the sink closes first: "cancelled").  `q`'s strings
 * are copied.  0, or -ENOMEM (done does not run).
 */
struct team_query;
typedef void sink_team_fn(void *arg, cJSON *catalogue, const char *err);
int	sink_team(struct sink *s, const struct team_query *q, int64_t now_ms,
	    sink_team_fn *done, void *arg);

/* Stop: cancel the request in flight, let running work come back, save
 * the cursors, free; `done` (may be NULL) runs after.  Accepts NULL. */
void	sink_close(struct sink *s, void (*done)(void *), void *arg);

/* The machine id of a state directory: <parent>/machine-id, 32 hex
 * digits, made once (atomically) if missing.  0 or -errno. */
int	sink_machine_id(const char *state_dir, char out[33]);

#endif
