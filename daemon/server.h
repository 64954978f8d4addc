/*
 * server — the daemon's HTTP and WebSocket server: libwebsockets on the
 * daemon's own libuv loop (DESIGN §10).
 *
 * The events socket (WS /api/sloptimize/events) is daemon/events.h; the
 * server is its transport, libwebsockets' side of it.  HTTP requests are
 * handed to the API (daemon/api.h), which the caller owns.  The server
 * knows nothing of the daemon: what it needs of the ledger comes through
 * hooks, which it passes on to the events.
 */
#ifndef DAEMON_SERVER_H
#define DAEMON_SERVER_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>
#include <uv.h>

#include "daemon/api.h"
#include "daemon/events.h"
#include "daemon/relay.h"
#include "daemon/tap.h"
#include "notifier/wake.h"

struct lws_context;
struct lws_vhost;

/* What the server asks of its owner (for the events: events_hooks). */
struct server_hooks {
	/* Add project, generation, ready and cursor to a hello message. */
	void	(*hello)(void *arg, cJSON *msg);
	/* A footprint's count and status now, for wakes re-made from the
	   file (NULL: no such row). */
	const char *(*row)(void *arg, const char *fp, uint64_t *count);
	void	*arg;
	/* The wake rules (borrowed, read on the loop): re-made wakes follow
	   the meaningful rule and carry the loop level in effect. */
	const struct wake_config *wake;
	char	 perf[PATH_MAX + 32];	/* perf.jsonl, read to re-make */
};

struct server {
	struct api		*api;
	struct events		 events;	/* the events socket */
	struct relay		 relay;		/* its game pages' commands */
	uv_loop_t		*loop;
	struct lws_context	*ctx;
	struct lws_vhost	*vh;
	int			 port;		/* the one actually bound */
	int			 stopping;
	/* Idle: libwebsockets' housekeeping timer, stopped while no
	   connection is open (server.c, "Idle"). */
	uv_prepare_t		 idle;
	int			 idle_up, timer_searched;
	uv_timer_t		*lws_timer;
	uint64_t		 idle_stops;
	/* What lws reads, for each request's raw header block. */
	struct tap		 tap;
};

/*
 * Listen on host:port (port 0: any free one) on `loop`, answering HTTP
 * through `api` (set up already; it must outlive the server).  hooks are
 * copied.  0 or -errno; the reason is logged.  On error the server must
 * still be stopped and freed like a running one.
 */
int	server_start(struct server *s, uv_loop_t *loop, const char *host,
	    int port, int verbose, struct api *api,
	    const struct server_hooks *hooks);
/* Stop listening and close every connection; the loop must run on for the
 * handles to close.  Accepts a server that never started. */
void	server_stop(struct server *s);

/* After the loop has run out: free what server_stop left. */
void	server_free(struct server *s);

/* The events socket is s->events: the daemon calls daemon/events.h on it. */

/* Add the server's part of /status (subscribers, events, idle). */
void	server_status_json(const struct server *s, cJSON *o);

#endif
