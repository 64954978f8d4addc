/*
 * routes — the API's route table: one row per (path, methods), saying
 * which guard the request must pass, which handler runs on the loop, and
 * which work, if any, runs on the thread pool.  Adding a route is one row
 * and its handler (docs/architecture.md shows how).
 *
 * A handler answers with http_answer*() and returns; it never writes, so
 * it cannot touch a request that answering freed (daemon/http.h).
 */
#ifndef DAEMON_ROUTES_H
#define DAEMON_ROUTES_H

#include "daemon/guard.h"
#include "daemon/http.h"
#include "daemon/jobs.h"

#define ROUTE_PREFIX	"/api/sloptimize"

struct api;

/* What a loop handler did with its request. */
enum route_result {
	ROUTE_ANSWERED,	/* an answer is queued */
	ROUTE_WAITS,	/* something else answers it later */
	ROUTE_POOL	/* run the row's pool work with the job, then done */
};

/*
 * On the loop thread.  `j` is the request's job when the row has pool
 * work (its body, if any, already moved into it), else NULL; the handler
 * fills the job's inputs and returns ROUTE_POOL, or answers.
 */
typedef enum route_result route_fn(struct api *a, struct http_request *r,
    const struct http_args *g, struct api_job *j);

/*
 * path is matched exactly, except that a last segment "*" stands for one
 * more segment (copied to r->param) and "**" for anything below.
 */
struct route {
	const char	*path;
	unsigned	 methods;	/* HTTP_* bits */
	enum guard	 guard;
	route_fn	*loop;		/* NULL: straight to the pool */
	job_fn		*pool;		/* NULL: the loop handler answers */
	job_fn		*done;		/* NULL: job_answer */
};

/*
 * The row for path and method.  NULL when no row has the path; when rows
 * have it but not the method, *allow is set (the Allow header: their
 * methods, then OPTIONS) and NULL returned too.  *allow is set whenever a
 * row has the path.  `param` gets the "*" segment.
 */
const struct route *routes_match(const char *path, unsigned method,
	    const char **allow, char *param, size_t cap);

#endif
