/*
 * jobs — work for libuv's thread pool on behalf of an HTTP request (or of
 * the API itself, like a /ledger body build).
 *
 * A job's inputs are copied into it on the loop thread, so the pool never
 * touches loop state; its outputs (an answer, or an error) are read back
 * on the loop thread in `done`.  A job outlives its request if the client
 * hangs up: `r` becomes NULL and `gone` is set, which a write in progress
 * checks just before it writes, so nothing is appended for a request that
 * is no longer there to be told.
 */
#ifndef DAEMON_JOBS_H
#define DAEMON_JOBS_H

#include <limits.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include <uv.h>

#include "daemon/http.h"
#include "daemon/order.h"
#include "ledger/ledger.h"

struct api_job;
typedef void job_fn(struct api_job *j);

/*
 * Heavy jobs — folds of the whole ledger — do not run on libuv's thread
 * pool: they run one at a time on a thread of their own, at a lower CPU
 * priority than the loop (nice JOBS_HEAVY_NICE), started at the first
 * one.  The pool has four threads for the whole daemon and the tailer's
 * reads must never queue behind a fold; and on a machine whose cores are
 * busy, a fold that takes a core must yield it to the loop, or requests
 * as small as /status wait behind it in the scheduler's queue.  (The pool
 * threads cannot be lowered for one job and raised again: raising a
 * thread's priority takes a privilege the daemon does not have.)
 *
 * The queue is bounded: at most JOBS_HEAVY_MAX folds queued or running;
 * one more is refused (job_start: -EBUSY), and its request gets 503 busy
 * with a Retry-After from the folds' recent duration (jobs_retry_after).
 * A fold nobody waits for any more — its `gone` raised: the client hung
 * up, or every client of a kept answer did — is dropped before it starts,
 * and the fold itself gives up between reads (project_fold_stoppable) and
 * while its answer is written.  Before, a page firing distinct queries
 * left hundreds of folds queued for nobody.
 */
#define JOBS_HEAVY_NICE	10
#define JOBS_HEAVY_MAX	8

/* The jobs in flight, for one owner (the API). */
struct jobs {
	uv_loop_t	*loop;
	struct api_job	*head;
	unsigned	 n;		/* in flight, waiting ones included */
	unsigned	 heavy;		/* heavy jobs queued or running */
	uint64_t	 waited;	/* heavy jobs that had to wait */
	uint64_t	 refused;	/* heavy jobs refused: the queue was full */
	uint64_t	 dropped;	/* heavy jobs dropped: nobody waited */
	uint64_t	 folds;		/* heavy jobs run to their end */
	double		 heavy_ms;	/* a heavy job's recent duration */
	atomic_int	 running;	/* heavy jobs running now (any thread) */
	int		 stopping;	/* jobs_stop: no more heavy jobs */
	/* the heavy jobs' thread; its queues under mu */
	int		 thread_up, async_up, no_thread;
	uv_thread_t	 tid;
	uv_mutex_t	 mu;
	uv_cond_t	 cv;
	uv_async_t	 async;		/* something is done, or it ended */
	struct api_job	*todo, *todo_tail, *done_q;
	int		 busy, quit, ended;
};

struct api_job {
	uv_work_t		 req;
	struct jobs		*js;	/* NULL: orphaned by jobs_orphan */
	struct http_request	*r;	/* NULL: the client hung up */
	void			*owner;	/* the caller's, for done */
	atomic_int		 gone;	/* r went away: do not write, and a
					   heavy job gives up */
	struct api_job		*next, *prev;
	struct api_job		*tnext;	/* in the heavy thread's queues */
	int			 heavy;	/* a fold: the heavy thread's */
	job_fn			*work;	/* on the pool */
	job_fn			*done;	/* on the loop; NULL: nothing */
	int			 dropped;	/* gone before or while it ran */
	double			 ran_ms;	/* how long its work took */
	/* inputs */
	char			 project[PATH_MAX];
	char			 path[PATH_MAX + 64];
	char			 path2[PATH_MAX + 64];
	char			*body;	/* freed with the job */
	size_t			 body_len;
	struct ledger_opts	 opts;
	struct ledger_query	 q;
	char			 id[9], type[64], status_f[16];
	int			 one, history, buckets;
	int64_t			 now_ms;
	uint64_t		 bytes, seq;
	int			 slot;
	char			 loop[16];
	uv_mutex_t		*mu;
	uint64_t		*written;
	char			 page[ORDER_ID_MAX + 1];	/* POST /records: the batch's
						   page id, "" none */
	uint64_t		 page_seq;	/* and its seq; 0: not tracked */
	/* outputs */
	unsigned		 status;
	struct http_blob	*out;	/* unreferenced with the job */
	const char		*ctype;
	char			 etag[48];
	const char		*code;	/* NULL: success */
	char			 msg[256];
};

/*
 * A job for request r (NULL: none) of owner: calloc'd, not started.
 * NULL on allocation failure.
 */
struct api_job *job_new(struct jobs *js, struct http_request *r,
	    job_fn *work, job_fn *done, void *owner);
/* Queue it on the pool (a heavy one on the heavy thread).  0, or a libuv
 * error, or -EBUSY when JOBS_HEAVY_MAX heavy jobs are queued or running
 * (the job is freed then). */
int	job_start(struct api_job *j);
/* Has the job been given up on (its request gone)?  On any thread. */
int	job_gone(const struct api_job *j);
/* Seconds a client refused for a full queue should wait before it asks
 * again: the heavy jobs ahead times their recent duration, 1 to 60. */
unsigned jobs_retry_after(const struct jobs *js);
/* Copy src's inputs (the fields under "inputs", body excepted) into dst,
 * a fresh job, pointing its query and options at dst's own strings. */
void	job_inputs_copy(struct api_job *dst, const struct api_job *src);
/* Free a job that was never started.  Accepts NULL. */
void	job_discard(struct api_job *j);

/* Set the job's error answer (on the pool or the loop). */
void	job_fail(struct api_job *j, unsigned status, const char *code,
	    const char *fmt, ...) __attribute__((format(printf, 4, 5)));
/* The usual `done`: answer the request, if still there, with the job's
 * blob or its error. */
void	job_answer(struct api_job *j);

/* Shutting down: heavy jobs still waiting end now, with a 503 for their
 * `done`; the one running and those on the pool come back as usual, and
 * the heavy thread ends; the loop then runs out. */
void	jobs_stop(struct jobs *js);
/* After the loop has run out: the heavy thread is joined. */
void	jobs_free(struct jobs *js);
/* Detach every job in flight: their `done` will not run.  For a broken
 * shutdown only: normally the loop runs until every job is back. */
void	jobs_orphan(struct jobs *js);

#endif
