/*
 * api — the HTTP side of the server (DESIGN §10, docs/api.md): requests
 * pass the guards (daemon/guard.h), are matched against the route table
 * (daemon/routes.h) and answered by their handler, on the loop or with
 * a job on the thread pool (daemon/jobs.h).  Errors are JSON, always.
 *
 * The API sees the daemon through a narrow environment, not the daemon
 * itself (daemon/api_env.h): the configuration (read only), the change
 * counter of the ledger files, a function that builds /status, and one
 * that applies a new fix-loop level.  It keeps its own state: the token,
 * the fix loop's level from settings.json, the answers built from the
 * ledger files (daemon/cache.h), the order of the recorder's batches
 * (daemon/order.h), the jobs in flight and its counters.  The route
 * handlers get only the part of it they act on (struct route_ctx): the
 * API includes the route table, never the other way round.
 */
#ifndef DAEMON_API_H
#define DAEMON_API_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>
#include <uv.h>

#include "daemon/api_env.h"
#include "daemon/cache.h"
#include "daemon/config.h"
#include "daemon/http.h"
#include "daemon/jobs.h"
#include "daemon/order.h"
#include "daemon/rawhdr.h"
#include "daemon/routes.h"
#include "project/statedir.h"

#define API_MAX_BODY		(1024 * 1024)		/* request bodies */
#define API_CONN_SLACK		64	/* connections accepted past the cap,
					   to be told 503; beyond, closed */
#define API_FD_RESERVE		64	/* descriptors kept for the daemon's
					   own files (api_tune) */

struct ledger;
struct lws;
struct lws_context_creation_info;

struct api {
	struct api_env	 env;
	char		 token[STATEDIR_TOKEN_LEN + 1];
	char		 token_path[PATH_MAX + 32];
	char		 page_root[PATH_MAX];	/* realpath, "" if none */
	const char	*page_why;		/* how page_root was found */
	struct route_settings settings;		/* settings.json's level */
	int		 mu_up;			/* settings.mu */
	unsigned	 conns;			/* open connections */
	unsigned	 max_conns;		/* the cap, within RLIMIT_NOFILE */
	uint64_t	 requests, refused, busy;
	uint64_t	 closed_behind;		/* a body, more bytes behind */
	uint64_t	 expired;		/* reads that waited too long */
	uint64_t	 hung_up;		/* clients gone while waiting */
	uint64_t	 pipelined;		/* ... that sent more meanwhile */
	uint64_t	 subs_refused, subs_said;	/* the subscriber cap */
	struct jobs	 jobs;
	struct cache	 cache;			/* /ledger bodies */
	struct order	 order;			/* POST /records batches */
	int		 order_up;
	struct route_ctx rc;			/* the handlers' view of it */
};

/* Set up: the token (made at first start), settings.json (its level is
 * passed to env->loop_set), the panel's directory.  env is copied.  0 or
 * -errno, logged; on error nothing needs freeing. */
int	api_init(struct api *a, const struct api_env *env);
/* Stopping: folds still waiting for their turn end, the cache's timer
 * closes; the loop then runs out. */
void	api_close(struct api *a);
/* After the loop has run out: free the cached bodies.  Accepts a zeroed
 * struct. */
void	api_free(struct api *a);
/* Server-wide limits (header size, connections, timeouts); the cap on
 * connections is fitted to the open-file limit (a->max_conns). */
void	api_tune(struct api *a, struct lws_context_creation_info *info);

/* The fix loop's level: settings.json's, else the config's, else "off";
 * *source says which ("settings", "config", "default"). */
const char *api_loop_level(const struct api *a, const char **source);
/* The "http" part of /status. */
cJSON	*api_status_json(const struct api *a);

/* Connection accounting (LWS_CALLBACK_WSI_CREATE / _DESTROY), and the
 * check at accept: far past the cap a connection is closed unanswered. */
void	api_conn_open(struct api *a);
void	api_conn_close(struct api *a);
int	api_conn_refused(const struct api *a);

/* A WebSocket upgrade: refuse (answering it) unless its raw header block,
 * the path, Host and Origin pass, and fewer than --max-subscribers are
 * connected (`subs`).  Returns what LWS_CALLBACK_HTTP_CONFIRM_UPGRADE
 * returns. */
int	api_confirm_upgrade(struct api *a, struct lws *wsi, const char *up,
	    const struct rawhdr_req *raw, unsigned subs);
/* The same check, for the FILTER_PROTOCOL_CONNECTION belt: 1 allowed. */
int	api_ws_allowed(struct api *a, struct lws *wsi);

/* The lws HTTP callbacks, each returning what the callback returns.  raw:
 * the request's header block as it was sent (daemon/rawhdr.h). */
int	api_http(struct api *a, struct lws *wsi, struct http_request *r,
	    const char *uri, const struct rawhdr_req *raw);
int	api_http_body(struct api *a, struct lws *wsi, struct http_request *r,
	    const void *in, size_t len);
int	api_http_body_done(struct api *a, struct lws *wsi,
	    struct http_request *r);
/* LWS_CALLBACK_TIMER: the bound on a request's wait ran out. */
int	api_http_timer(struct api *a, struct lws *wsi, struct http_request *r);
/* `fed`: the bytes read from the connection so far (daemon/tap.h). */
int	api_http_writeable(struct api *a, struct lws *wsi,
	    struct http_request *r, uint64_t fed);

#endif
