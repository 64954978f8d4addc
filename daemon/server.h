/*
 * server — the daemon's HTTP and WebSocket server: libwebsockets on the
 * daemon's own libuv loop (DESIGN §10).
 *
 * The events socket (WS /api/sloptimize/events) is kept here: its
 * subscribers, each with a bounded queue, and a ring of recent wakes so a
 * client that resumes with ?since=<id> gets exactly what it missed.  HTTP
 * requests are handed to the API (daemon/api.h), which the caller owns.
 * The server knows nothing of the daemon: what the `hello` message says
 * about the ledger comes from a hook.
 */
#ifndef DAEMON_SERVER_H
#define DAEMON_SERVER_H

#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>
#include <uv.h>

#include "daemon/api.h"

#define SERVER_RING		8192		/* wakes kept for replay */
#define SERVER_SUB_MAX_MSGS	4096		/* per subscriber queue */
#define SERVER_SUB_MAX_BYTES	(8u << 20)
#define SERVER_MAX_SUBS		64

struct lws_context;
struct lws_vhost;
struct sub;

struct ring_entry {
	uint64_t	 gen, off;
	char		*json;
	size_t		 len;
};

/* What the server asks of its owner. */
struct server_hooks {
	/* Add project, generation, ready and cursor to a hello message. */
	void	(*hello)(void *arg, cJSON *msg);
	void	*arg;
};

struct server {
	struct api		*api;
	struct server_hooks	 hooks;
	struct lws_context	*ctx;
	struct lws_vhost	*vh;
	int			 port;		/* the one actually bound */
	int			 stopping;
	int			 ready;		/* server_ready was called */
	struct sub		*subs;
	unsigned		 nsubs;
	uint64_t		 dropped;	/* messages dropped, all subs */
	struct ring_entry	 ring[SERVER_RING];
	size_t			 ring_head, ring_len;
	uint64_t		 ring_evicted;
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

/* Send a message to every subscriber ("record", notes). */
void	server_broadcast(struct server *s, const char *json, size_t len);
/* Keep a wake for replay, then send it to every subscriber. */
void	server_wake(struct server *s, uint64_t gen, uint64_t off,
	    const char *json, size_t len, int broadcast);
/* The start-up fold is done: replay to the subscribers that resumed
 * before it. */
void	server_ready(struct server *s);
/* A new generation: the ring's ids no longer name lines in the file. */
void	server_ring_clear(struct server *s);
/* Add the server's part of /status (subscribers, droppedMessages). */
void	server_status_json(const struct server *s, cJSON *o);

#endif
