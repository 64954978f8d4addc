/*
 * events — the events socket's protocol and state, without the socket:
 * the subscribers, each with a bounded queue, the ring of recent wakes,
 * catching up (from the ring, and before it wakes re-made from perf.jsonl
 * by daemon/rewake.h), `?since=` and the subscriber cap.  The messages it
 * sends are described by schemas/events.json (docs/api.md).
 *
 * It knows no WebSocket library: a transport (daemon/server.c fills one
 * with libwebsockets' calls; tests/daemon/test_events.c a fake one) owns the
 * connections and calls in when one opens, can be written to, or closes;
 * each subscriber carries the transport's opaque handle for its
 * connection.  So the protocol can be driven and checked without a
 * socket.  The command relay (daemon/relay.h) rides on the same
 * connections: a game page registers on the events socket, is then sent
 * no wakes (events_quiet), and gets its commands through events_send.
 *
 * A subscriber never slows the daemon down, and never loses a wake.  It
 * is in one of two modes:
 *
 *   live         every wake is queued for it as it happens, and written
 *                when its connection is writable;
 *   catching up  it resumed with ?since=, or its queue reached its bound
 *                (a client that stopped reading: SIGSTOP, a full pipe).
 *                Nothing is queued for it as it happens; instead, each
 *                time its queue runs low it is fed the next wakes after
 *                the last one it was given — from the ring while the ring
 *                holds them, and before that re-made from perf.jsonl one
 *                bounded chunk at a time on the thread pool.  Once the
 *                ring has nothing after it, it is live again.
 *
 * So memory is bounded (a live queue's bound, a catching-up queue's fill,
 * EVENTS_REWAKE_JOBS chunks in flight) however far behind a client is,
 * and a reader gets every wake once, in id order, paced by its own
 * reading.  `record` messages (the panel's live incidents) are not kept:
 * the ones a catching-up client misses are counted and said in one
 * `dropped` message when it is live again.  What the file no longer has
 * (a new generation replaced it) is said in a `gap` message.
 *
 * Ids are <generation>:<offset> and are compared as number pairs.  All of
 * it runs on the loop thread.
 */
#ifndef DAEMON_EVENTS_H
#define DAEMON_EVENTS_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>
#include <uv.h>

#include "notifier/wake.h"

#define EVENTS_RING		8192		/* wakes kept for replay */
#define EVENTS_SUB_MAX_MSGS	4096		/* a live subscriber's queue */
#define EVENTS_SUB_MAX_BYTES	(8u << 20)
#define EVENTS_CATCHUP_LOW	256		/* catching up: refill below */
#define EVENTS_CATCHUP_FILL	1024		/* ... up to this many */
#define EVENTS_CATCHUP_BYTES	(1u << 20)	/* ... or this many bytes */
#define EVENTS_REWAKE_JOBS	2		/* file chunks in flight */

struct events_sub;

/*
 * What the events ask of the transport.  `conn` is the handle the
 * transport gave events_open for that connection.
 */
struct events_transport {
	/* Bytes the transport needs free before each message's text
	   (libwebsockets' LWS_PRE): kept in front of every queued message so
	   writing it copies nothing. */
	size_t	 headroom;
	/* conn has something queued: call events_writable once it can take
	   a message. */
	void	(*want_write)(void *conn);
	/* Send one whole text message; buf has `headroom` writable bytes
	   before it.  0, or -1 when the connection is broken (the transport
	   then closes it, and calls events_close). */
	int	(*write)(void *conn, unsigned char *buf, size_t len);
};

/* What the events ask of their owner. */
struct events_hooks {
	/* Add project, generation, ready and cursor to a hello message. */
	void	(*hello)(void *arg, cJSON *msg);
	/* A footprint's count and status now, for wakes re-made from the
	   file (NULL: no such row). */
	const char *(*row)(void *arg, const char *fp, uint64_t *count);
	void	*arg;
	/* The wake rules (borrowed, read on the loop): re-made wakes follow
	   the meaningful rule and carry the loop level in effect. */
	const struct wake_config *wake;
	/* The subscriber cap (borrowed, read at each open: a reload that
	   changes it applies to the next subscriber). */
	const unsigned *max_subs;
	char	 perf[PATH_MAX + 32];	/* perf.jsonl, read to re-make */
};

struct events_entry {
	uint64_t	 gen, off;
	char		*json;
	size_t		 len;
};

struct events {
	struct events_transport	 tr;
	struct events_hooks	 hooks;
	uv_loop_t		*loop;		/* the pool re-makes wakes */
	int			 ready;		/* events_ready was called */
	int			 stopping;
	struct events_sub	*subs;
	unsigned		 nsubs;
	uint64_t		 dropped;	/* record messages not sent */
	/* The ring: every wake of generation `gen` for a record at an offset
	   >= ring_from, oldest first; before ring_from, the file. */
	struct events_entry	 ring[EVENTS_RING];
	size_t			 ring_head, ring_len;
	uint64_t		 ring_evicted;
	uint64_t		 gen, ring_from;
	/* Re-making from the file: jobs in flight, subscribers waiting for
	   one, and what was sent. */
	unsigned		 jobs;
	struct events_sub	*jobq, *jobq_tail;
	uint64_t		 from_file, from_ring, behind, gaps;
};

/* Set up `ev` on `loop` (tr and hooks are copied).  Nothing to fail. */
void	events_init(struct events *ev, uv_loop_t *loop,
	    const struct events_transport *tr,
	    const struct events_hooks *hooks);
/* No more catching up: jobs that come back are freed unread.  Called
 * when the server stops; the subscribers are still closed one by one. */
void	events_stop(struct events *ev);
/* Free the ring.  The subscribers must all be closed. */
void	events_free(struct events *ev);

/*
 * A connection upgraded to the events socket: `since` is its ?since=
 * (NULL without one).  It is sent its hello at once, then — resuming —
 * what came after `since`.  NULL when the cap is reached (that is
 * logged) or without memory: refuse the connection.
 */
struct events_sub *events_open(struct events *ev, void *conn,
	    const char *since);
/* conn can take a message: write the next one queued.  0, or -1 when
 * writing failed (close the connection). */
int	events_writable(struct events *ev, struct events_sub *u);
/* The connection is gone: free its subscriber.  Its job, if one is on
 * the pool, comes back to nobody. */
void	events_close(struct events *ev, struct events_sub *u);
/* Queue one message to u alone, whatever its bounds (the relay's
 * commands: few and small).  0, or -ENOMEM. */
int	events_send(struct events *ev, struct events_sub *u, const char *json,
	    size_t len);
/* u is a game page on the relay (daemon/relay.h): from now on it is sent
 * no wakes and no records, only what events_send queues. */
void	events_quiet(struct events *ev, struct events_sub *u);
/* Subscribers now. */
unsigned events_count(const struct events *ev);

/* Send a message to every subscriber ("record", notes). */
void	events_broadcast(struct events *ev, const char *json, size_t len);
/* Keep a wake for replay, then send it to every subscriber that is
 * live (one catching up gets it in its turn). */
void	events_wake(struct events *ev, uint64_t gen, uint64_t off,
	    const char *json, size_t len);
/* The start-up fold is done: replay to the subscribers that resumed
 * before it. */
void	events_ready(struct events *ev);
/*
 * From here on the ring keeps the wakes of generation `gen` for records at
 * offsets >= `from`; those before are re-made from the file when asked
 * for.  A new generation clears the ring (its ids no longer name lines of
 * the file), and subscribers still catching up in the old one are told
 * of the gap.  The daemon calls it when the fold (re)starts: at 0 for a
 * new generation, past each line it folds without waking (SEED), or at
 * the offset a checkpoint resumes from.
 */
void	events_ring_reset(struct events *ev, uint64_t gen, uint64_t from);
/*
 * A resume id, `?since=<generation>:<offset>` or `<generation>:-1` (the
 * start of a generation: *none).  Pure.  0, or -1 when it is not one —
 * the subscriber then starts live.
 */
int	events_since_parse(const char *s, uint64_t *gen, uint64_t *off,
	    int *none);

/* Add the events' part of /status: subscribers, droppedMessages and the
 * `events` object (returned, for the caller's own counters). */
cJSON	*events_status_json(const struct events *ev, cJSON *o);

#endif
