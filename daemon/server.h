/*
 * server — the daemon's HTTP and WebSocket server: libwebsockets on the
 * daemon's own libuv loop (DESIGN §10).
 *
 * The events socket (WS /api/sloptimize/events) is kept here: its
 * subscribers, each with a bounded queue, and a ring of recent wakes.  A
 * subscriber that resumes with ?since=<id>, or falls behind, is fed what
 * it missed in order, paced by its own reading: from the ring while the
 * ring still holds it, and before that re-made from perf.jsonl in bounded
 * chunks off the loop (daemon/replay.h) — never more memory than a bound,
 * and never a silent loss: what cannot be had any more (the file was
 * replaced) is said in a `gap` message.  HTTP requests are handed to the
 * API (daemon/api.h), which the caller owns.  The server knows nothing of
 * the daemon: what it needs of the ledger comes through hooks.
 */
#ifndef DAEMON_SERVER_H
#define DAEMON_SERVER_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>
#include <uv.h>

#include "daemon/api.h"
#include "daemon/tap.h"
#include "notifier/wake.h"

#define SERVER_RING		8192		/* wakes kept for replay */
#define SERVER_SUB_MAX_MSGS	4096		/* a live subscriber's queue */
#define SERVER_SUB_MAX_BYTES	(8u << 20)
#define SERVER_CATCHUP_LOW	256		/* catching up: refill below */
#define SERVER_CATCHUP_FILL	1024		/* ... up to this many */
#define SERVER_CATCHUP_BYTES	(1u << 20)	/* ... or this many bytes */
#define SERVER_REPLAY_JOBS	2		/* file chunks in flight */

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
	/* A footprint's count and status now, for wakes re-made from the
	   file (NULL: no such row). */
	const char *(*row)(void *arg, const char *fp, uint64_t *count);
	void	*arg;
	/* The wake rules (borrowed, read on the loop): re-made wakes follow
	   the meaningful rule and carry the loop level in effect. */
	const struct wake_config *wake;
	char	 perf[PATH_MAX + 32];	/* perf.jsonl, read to re-make */
};

struct replay_job;

struct server {
	struct api		*api;
	struct server_hooks	 hooks;
	uv_loop_t		*loop;
	struct lws_context	*ctx;
	struct lws_vhost	*vh;
	int			 port;		/* the one actually bound */
	int			 stopping;
	int			 ready;		/* server_ready was called */
	struct sub		*subs;
	unsigned		 nsubs;
	uint64_t		 dropped;	/* record messages not sent */
	/* The ring: every wake of generation `gen` for a record at an offset
	   >= ring_from, oldest first; before ring_from, the file. */
	struct ring_entry	 ring[SERVER_RING];
	size_t			 ring_head, ring_len;
	uint64_t		 ring_evicted;
	uint64_t		 gen, ring_from;
	/* Re-making from the file: jobs in flight, subscribers waiting for
	   one, and what was sent. */
	unsigned		 jobs;
	struct sub		*jobq, *jobq_tail;
	uint64_t		 from_file, from_ring, behind, gaps;
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

/* Send a message to every subscriber ("record", notes). */
void	server_broadcast(struct server *s, const char *json, size_t len);
/* Keep a wake for replay, then send it to every subscriber that is
 * live (one catching up gets it in its turn). */
void	server_wake(struct server *s, uint64_t gen, uint64_t off,
	    const char *json, size_t len);
/* The start-up fold is done: replay to the subscribers that resumed
 * before it. */
void	server_ready(struct server *s);
/*
 * From here on the ring keeps the wakes of generation `gen` for records at
 * offsets >= `from`; those before are re-made from the file when asked
 * for.  A new generation clears the ring (its ids no longer name lines of
 * the file), and subscribers still catching up in the old one are told
 * of the gap.  The daemon calls it when the fold (re)starts: at 0 for a
 * new generation, past each line it folds without waking (SEED), or at
 * the offset a checkpoint resumes from.
 */
void	server_ring_reset(struct server *s, uint64_t gen, uint64_t from);
/*
 * A resume id, `?since=<generation>:<offset>` or `<generation>:-1` (the
 * start of a generation: *none).  Pure.  0, or -1 when it is not one —
 * the subscriber then starts live.
 */
int	server_since_parse(const char *s, uint64_t *gen, uint64_t *off,
	    int *none);

/* Add the server's part of /status (subscribers, events). */
void	server_status_json(const struct server *s, cJSON *o);

#endif
