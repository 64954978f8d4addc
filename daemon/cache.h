/*
 * cache — answers that are a function of the ledger files, built on the
 * thread pool once per change and served from memory with a strong ETag:
 * GET /ledger (the tail of both files), /issues, /issues/<id> and
 * /history (folds of them).  The loop only ever writes prepared bytes.
 *
 * An answer is kept in a slot per key (the route and its parameters) and
 * tagged with the change counter it was built at (the daemon bumps it
 * for every line, skip or new generation of perf.jsonl or fixes.jsonl).
 * A request that finds its answer stale waits on the slot; one build runs
 * at a time per slot, and a request that arrived after the build began
 * waits for the next one, so nobody is served an answer older than their
 * request.  Concurrent requests share a build: one build per change,
 * however many ask — and while the files keep changing, a slot's builds
 * begin at most every CACHE_MIN_MS, never once per request.
 *
 * Memory: at most CACHE_SLOTS answers, and beyond CACHE_BYTES of them
 * the least recently used are let go (a body being written stays alive
 * through its reference).  When every slot is busy (building, or with
 * requests waiting), an answer is built for its request alone and not
 * kept.
 *
 * A build is for its waiters: when the last of them hangs up, it is
 * given up (jobs.h: before it starts, between reads, while it writes),
 * and the slot stays as it was.  A waiter the API lets go because it
 * waited too long (503, retry) does not give it up: its answer is then
 * kept for the retry.
 */
#ifndef DAEMON_CACHE_H
#define DAEMON_CACHE_H

#include <limits.h>
#include <stdint.h>

#include <uv.h>

#include "daemon/http.h"
#include "daemon/jobs.h"

#define CACHE_SLOTS	8		/* answers kept (one per key) */
#define CACHE_BYTES	(96u << 20)	/* their bodies, all slots */
#define CACHE_MIN_MS	250		/* a slot's builds begin at most
					   this often */
#define CACHE_KEY_MAX	640

struct cache_slot {
	char			 key[CACHE_KEY_MAX];	/* "" unused */
	uint64_t		 gen;		/* the change count it shows */
	uint64_t		 used;		/* LRU tick */
	struct http_blob	*body;		/* NULL until built */
	unsigned		 status;	/* 200, or an error's */
	char			 etag[48];	/* "" for errors */
	int			 building;
	struct api_job		*job;		/* the build, while building */
	uint64_t		 build_gen;	/* the count its build began at */
	uint64_t		 build_ms;	/* when (loop time) */
	struct api_job		*tmpl;		/* how to build it */
	struct http_request	*waiters;
};

struct cache {
	struct jobs		*jobs;
	const uint64_t		*changes;	/* the daemon's change counter */
	uv_loop_t		*loop;
	uv_timer_t		 timer;		/* a build held back by
						   CACHE_MIN_MS */
	int			 timer_up;
	char			 perf[PATH_MAX + 32], fixes[PATH_MAX + 32];
	struct cache_slot	 slot[CACHE_SLOTS];
	uint64_t		 tick;
	uint64_t		 builds;	/* bodies built, for /status */
	uint64_t		 ledger_builds;	/* of which /ledger's */
	uint64_t		 hits;		/* answered from memory */
	uint64_t		 held;		/* builds held back a while */
	uint64_t		 busy;		/* built for one request alone:
						   every slot was busy */
};

/* Set up for a project's two files.  0 or a libuv error. */
int	cache_init(struct cache *c, struct jobs *jobs, uv_loop_t *loop,
	    const uint64_t *changes, const char *project);
/*
 * Answer r with the answer for `key`: at once when it is fresh (200, 304
 * or the error it was), else later, when a build that began after now is
 * done.  `tmpl` says how to build it: its work function and inputs are
 * copied (job_inputs_copy), so the caller keeps it.  Returns 0 when
 * answered, 1 when r waits (its cancel hook is set).
 */
int	cache_get(struct cache *c, struct http_request *r, const char *key,
	    const struct api_job *tmpl);
/* GET /ledger?bytes=N: cache_get with the ledger's own builder. */
int	cache_ledger(struct cache *c, struct http_request *r, uint64_t bytes);
/* Stop the timer; the loop must run for it to close. */
void	cache_close(struct cache *c);
/* Drop the bodies.  Waiters must be gone (their requests freed). */
void	cache_free(struct cache *c);

#endif
