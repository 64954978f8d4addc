/*
 * routes — the API's route table: one row per (path, methods), saying
 * which guard the request must pass, which handler runs on the loop, and
 * which work, if any, runs on the thread pool.  Adding a route is one row
 * and its handler (docs/architecture.md shows how).
 *
 * A handler answers with http_answer*() and returns; it never writes, so
 * it cannot touch a request that answering freed (daemon/http.h).
 *
 * The table sits below the API (daemon/api.h), which dispatches to it:
 * a handler is given a `struct route_ctx`, the part of the API's state
 * the routes act on, and never the API itself — so routes.c includes
 * nothing of api.h, and the API's guards, token and counters stay its
 * own.
 */
#ifndef DAEMON_ROUTES_H
#define DAEMON_ROUTES_H

#include <stdint.h>

#include <cjson/cJSON.h>
#include <uv.h>

#include "daemon/api_env.h"
#include "daemon/cache.h"
#include "daemon/guard.h"
#include "daemon/http.h"
#include "daemon/jobs.h"
#include "daemon/order.h"
#include "daemon/relay.h"

#define ROUTE_PREFIX	"/api/sloptimize"
#define ROUTE_LEDGER_BYTES	(2u << 20)	/* /ledger default */
#define ROUTE_LEDGER_MAX	(8u << 20)	/* ?bytes= at most */
#define ROUTE_LOCK_WAIT_MS	5000	/* a writer waits this long for the
					   ledger's lock, then 503 */

/*
 * settings.json's fix-loop level, as GET and PUT /settings see it.  Each
 * PUT is numbered: the pool writes the file under `mu` only if no later
 * PUT was written already (`written`), and the loop applies it only if no
 * later one was applied (`applied`), so the file and the daemon agree on
 * the last PUT whatever order the pool runs them in.
 */
struct route_settings {
	char		 loop[16];		/* settings.json's level, "" */
	uint64_t	 seq, applied, written;
	uv_mutex_t	 mu;			/* orders settings.json writes */
};

/*
 * What a handler may touch: the API's (daemon/api.h), which owns every
 * part and fills this in at api_init.  A job's owner is this too, so its
 * `done` reaches the same and no more.
 */
struct route_ctx {
	const struct api_env	*env;		/* the daemon, as the API sees it */
	struct cache		*cache;		/* the answers kept per change */
	struct order		*order;		/* POST /records; NULL if not up */
	struct route_settings	*settings;
	const char		*page_root;	/* the panel's directory, "" none */
	struct relay		*relay;		/* the open tab's; NULL until
						   the server is up */
};

/*
 * A request's parameters — the query, and the row's "*" segment — as its
 * row's checker read them: the handlers act on these and nothing else.
 */
struct route_args {
	uint64_t	 bytes;			/* /ledger ?bytes= */
	int64_t		 from_ms, to_ms;	/* LEDGER_NO_TIME: none */
	int		 automated;		/* include-automated */
	char		 type[64];		/* "" none */
	char		 status[16];		/* "" none */
	size_t		 limit;			/* 0: all */
	int		 team;			/* /issues ?scope=team */
	char		 id[9];			/* /issues/<id>, lowercase */
	int		 buckets;		/* /history */
	char		 key[CACHE_KEY_MAX];	/* the kept answer's, or "" */
	char		 page[ORDER_ID_MAX + 1];		/* POST /records ?page=, "" */
	uint64_t	 seq, first;		/* ?seq=, ?first= */
};

/* Check g and param for the row, filling *out: pure (what the fuzzer
 * calls, tests/fuzz/fuzz_query.c).  0, or 400 bad_parameter / 404
 * not_found with *why. */
typedef unsigned route_args_fn(const char *param, const struct http_args *g,
    struct route_args *out, struct guard_refusal *why);

/* What a loop handler did with its request. */
enum route_result {
	ROUTE_ANSWERED,	/* an answer is queued */
	ROUTE_WAITS,	/* something else answers it later */
	ROUTE_KEPT,	/* the handler kept the job; it answers later */
	ROUTE_POOL	/* run the row's pool work with the job, then done */
};

/*
 * On the loop thread.  `j` is the request's job when the row has pool
 * work (its body, if any, already moved into it), else NULL; the handler
 * fills the job's inputs and returns ROUTE_POOL, or answers.
 */
typedef enum route_result route_fn(struct route_ctx *c,
    struct http_request *r, const struct route_args *ra, struct api_job *j);

/*
 * path is matched exactly, except that a last segment "*" stands for one
 * more segment (copied to r->param) and "**" for anything below.
 */
struct route {
	const char	*path;
	unsigned	 methods;	/* HTTP_* bits */
	enum guard	 guard;
	route_args_fn	*args;		/* NULL: the query is ignored */
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

/* A request body, checked: what a write route appends or applies. */
struct route_body {
	unsigned	 status;	/* 0: accepted; else the refusal's */
	const char	*code;
	char		 why[256];
	cJSON		*rec;		/* POST /fixes: the record answered */
	char		*line;		/* POST /fixes: appended, '\n'-ended */
	size_t		 len;
	int		 force;		/* POST /fixes: skip project_fix_known */
	char		 loop[16];	/* PUT /settings: the level */
};

/*
 * POST /fixes's and PUT /settings's bodies, checked — pure, nothing
 * written (tests/fuzz/fuzz_body.c calls them as the routes do).  0 with
 * *out filled, or the refusal's status (400 invalid_json, invalid_fix,
 * invalid_settings; 500 internal when out of memory) with out->code and
 * out->why, and nothing else held.  Free with routes_body_free.
 */
unsigned routes_fix_body(const char *body, size_t len, struct route_body *out);
unsigned routes_settings_body(const char *body, size_t len,
	    struct route_body *out);
void	 routes_body_free(struct route_body *b);

/*
 * The row's parameters for path (the "*" segment from routes_match) and
 * g: rt->args, and for the rows whose answers are kept (daemon/cache.h)
 * out->key, the path and the parameters in name order — each name and
 * value with '%', '&' and '=' escaped, so two different queries never
 * share a key.  0, or the refusal's status with *why.
 */
unsigned routes_args(const struct route *rt, const char *path,
	    const char *param, const struct http_args *g,
	    struct route_args *out, struct guard_refusal *why);

#endif
