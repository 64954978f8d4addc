/*
 * exec — the `--exec CMD` hook: one `/bin/sh -c CMD` per wake line.
 *
 * The child gets the line in $SLOPTIMIZE_WAKE and the wake's JSON (one
 * line, then EOF) on its stdin.  Its stdout goes to /dev/null, its stderr
 * is the daemon's (so a hook's complaints land in the daemon's log or the
 * journal, and its chatter cannot mix into wake lines the daemon prints on
 * stdout).  It runs in its own process group; one that outlives
 * exec_timeout_ms is killed with the whole group.
 *
 * Never blocks the loop: spawn, the stdin write and reaping are libuv's.
 * At most exec_max children run at once; up to exec_queue more wait in
 * order; beyond that a wake is dropped, counted (exec_stats) and said in
 * the log once per burst, with the total when the burst ends.  A command
 * that exits non-zero or dies by a signal is logged with its status.
 *
 * Writing to a child that has already exited raises SIGPIPE: exec_init
 * ignores SIGPIPE when its disposition is still the default, because a
 * fast `--exec true` must not kill the daemon.
 */
#ifndef NOTIFIER_EXEC_H
#define NOTIFIER_EXEC_H

#include <stdint.h>

#include <cjson/cJSON.h>
#include <uv.h>

#include "base/base.h"
#include "wake.h"

struct exec;
struct exec_job;
struct exec_child;
typedef void exec_close_cb(struct exec *e);

struct exec {
	void			*data;		/* the caller's */

	/* private */
	uv_loop_t		*loop;
	uv_timer_t		 handle;	/* closed last: exec_close's
						 * callback is never inline */
	char			*cmd;
	unsigned		 max_running;
	unsigned		 max_queue;
	int64_t			 timeout_ms;
	base_log_fn		*log;
	void			*log_arg;
	struct exec_job		*queue;		/* FIFO */
	struct exec_job		**queue_tail;
	unsigned		 queued;
	struct exec_child	*children;	/* running or closing */
	unsigned		 running;
	unsigned		 live;		/* child structs not freed */
	uint64_t		 burst;		/* dropped since the queue filled */
	uint64_t		 spawned, completed, failed, dropped;
	unsigned		 peak_running;
	int			 closing;
	exec_close_cb		*close_cb;
};

struct exec_stats {
	unsigned	running;
	unsigned	queued;
	unsigned	peak_running;
	uint64_t	spawned;	/* children started */
	uint64_t	completed;	/* exited 0 */
	uint64_t	failed;		/* spawn error, non-zero, signal */
	uint64_t	dropped;	/* queue full or shutting down */
};

/*
 * Set up the hook for cmd (copied) with cfg's exec_max (0 counts as 1),
 * exec_queue and exec_timeout_ms (0: none).  log may be NULL.  Returns 0,
 * -EINVAL for an empty command, -ENOMEM, or a libuv error.
 */
int	exec_init(struct exec *e, uv_loop_t *loop, const char *cmd,
	    const struct wake_config *cfg, base_log_fn *log, void *log_arg);

/*
 * Run the hook for one wake: line for $SLOPTIMIZE_WAKE, json (may be NULL:
 * empty stdin) printed unformatted plus '\n' for its stdin.  Both are
 * copied.  Returns 0 when started or queued, -ENOBUFS when dropped because
 * the queue is full (counted and logged), -ESHUTDOWN after exec_close,
 * -ENOMEM.
 */
int	exec_run(struct exec *e, const char *line, const cJSON *json);

void	exec_stats(const struct exec *e, struct exec_stats *st);

/*
 * Stop: queued hooks are not run (said in the log), running children are
 * left to finish on their own (no longer watched), and cb (may be NULL)
 * runs from the loop once every handle is closed.  exec_run fails after.
 */
void	exec_close(struct exec *e, exec_close_cb *cb);

#endif
