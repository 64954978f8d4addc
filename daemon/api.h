/*
 * api — the HTTP side of the server (DESIGN §10, docs/api.md): requests
 * pass the guards (daemon/guard.h), are matched against the route table
 * (daemon/routes.h) and answered by their handler, on the loop or with
 * a job on the thread pool (daemon/jobs.h).  Errors are JSON, always.
 *
 * The API sees the daemon through a narrow environment, not the daemon
 * itself: the configuration (read only), the change counter of the
 * ledger files, a function that builds /status, and one
 * that applies a new fix-loop level.  It keeps its own state: the token,
 * the fix loop's level from settings.json, the answers built from the
 * ledger files (daemon/cache.h), the order of the recorder's batches
 * (daemon/order.h), the jobs in flight and its counters.
 */
#ifndef DAEMON_API_H
#define DAEMON_API_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>
#include <uv.h>

#include "daemon/cache.h"
#include "daemon/config.h"
#include "daemon/http.h"
#include "daemon/jobs.h"
#include "daemon/order.h"
#include "daemon/rawhdr.h"
#include "project/statedir.h"
#include "sink/sink.h"
#include "sink/team.h"

#define API_MAX_BODY		(1024 * 1024)		/* request bodies */
#define API_LEDGER_BYTES	(2u << 20)		/* /ledger default */
#define API_LEDGER_MAX		(8u << 20)		/* ?bytes= at most */
#define API_LOCK_WAIT_MS	5000	/* a writer waits this long for the
					   ledger's lock, then 503 */
#define API_CONN_SLACK		64	/* connections accepted past the cap,
					   to be told 503; beyond, closed */
#define API_FD_RESERVE		64	/* descriptors kept for the daemon's
					   own files (api_tune) */

struct ledger;
struct lws;
struct lws_context_creation_info;

/* What the API may see of the daemon. */
struct api_env {
	uv_loop_t		 *loop;
	const struct config	 *cfg;		/* may change on SIGHUP */
	const char		 *state_dir;
	const uint64_t		 *changes;	/* bumps when the files change */
	/* The whole /status document; the API adds its "http" part. */
	cJSON			*(*status)(void *arg);
	/* settings.json's fix-loop level ("" none), at start and on PUT. */
	void			 (*loop_set)(void *arg, const char *level);
	/* The team catalogue (sink_team), or -ENOENT without a sink. */
	int			 (*team)(void *arg, const struct team_query *q,
				    int64_t now_ms, sink_team_fn *done,
				    void *done_arg);
	void			 *arg;
};

struct api {
	struct api_env	 env;
	char		 token[STATEDIR_TOKEN_LEN + 1];
	char		 token_path[PATH_MAX + 32];
	char		 page_root[PATH_MAX];	/* realpath, "" if none */
	const char	*page_why;		/* how page_root was found */
	char		 loop[16];		/* settings.json's level, "" */
	uint64_t	 settings_seq, settings_applied, settings_written;
	uv_mutex_t	 settings_mu;		/* orders settings.json writes */
	int		 mu_up;
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
