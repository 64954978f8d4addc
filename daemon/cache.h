/*
 * cache — the bodies of GET /api/sloptimize/ledger, kept per ?bytes=
 * value and tagged with the change counter they were built at (the
 * daemon bumps it for every line, skip or new generation of perf.jsonl
 * or fixes.jsonl).
 *
 * A request that finds its body stale waits on the slot; one build runs
 * at a time per slot, on the thread pool (daemon/snapshot.h), and a
 * request that arrived after the build began waits for the next one, so
 * nobody is served a body older than their request.  Concurrent requests
 * share a build: one build per change, however many ask.
 */
#ifndef DAEMON_CACHE_H
#define DAEMON_CACHE_H

#include <limits.h>
#include <stdint.h>

#include "daemon/http.h"
#include "daemon/jobs.h"

#define CACHE_SLOTS	4	/* bodies kept (one per ?bytes=) */

struct cache_slot {
	uint64_t		 bytes;		/* the ?bytes= it is for */
	uint64_t		 gen;		/* the change count it shows */
	uint64_t		 used;		/* LRU tick */
	struct http_blob	*body;		/* NULL until built */
	char			 etag[48];
	int			 building;
	uint64_t		 build_gen;	/* the count its build began at */
	struct http_request	*waiters;
};

struct cache {
	struct jobs		*jobs;
	const uint64_t		*changes;	/* the daemon's change counter */
	char			 perf[PATH_MAX + 32], fixes[PATH_MAX + 32];
	struct cache_slot	 slot[CACHE_SLOTS];
	uint64_t		 tick;
	uint64_t		 builds;	/* bodies built, for /status */
	uint64_t		 busy;		/* 503s: every slot building */
};

/* Set up for a project's two files.  Can't fail (paths are cut). */
void	cache_init(struct cache *c, struct jobs *jobs, const uint64_t *changes,
	    const char *project);
/*
 * Answer r with the body for `bytes`: at once when it is fresh (200 or
 * 304), else later, when a build that began after now is done.  Returns
 * 0 when answered, 1 when r waits (its cancel hook is set).
 */
int	cache_get(struct cache *c, struct http_request *r, uint64_t bytes);
/* Drop the bodies.  Waiters must be gone (their requests freed). */
void	cache_free(struct cache *c);

#endif
