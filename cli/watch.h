/*
 * watch — the pure parts of `sloptimize watch`, exposed so they can be
 * tested without a daemon: wake ids, daemon addresses, daemon.json, the
 * message accumulator and the protocol consumer that decides what gets
 * printed.  The socket and the loop live in watch.c behind verb_watch().
 *
 * Invariant the consumer keeps (DESIGN §8.2, §9): a wake is printed only if
 * its id is greater than the last printed one, so a reconnect that replays
 * from `since` can never print a wake twice.
 */
#ifndef CLI_WATCH_H
#define CLI_WATCH_H

struct cJSON;
struct lws;
struct lws_context;

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <uv.h>

#define WATCH_DEFAULT_PORT	7567
#define WATCH_EVENTS_PATH	"/api/sloptimize/events"
#define WATCH_MSG_MAX		(1024 * 1024)	/* one message, reassembled */
#define WATCH_LINE_MAX		500		/* bytes of a printed wake line */

/* A wake id "<generation>:<byte offset>", compared as a pair. */
struct watch_id {
	uint64_t	gen;
	uint64_t	off;
};

/* Parse exactly "<digits>:<digits>" (no sign, no space, no overflow) from
 * s[0..n).  0 or -EINVAL. */
int	watch_id_parse(const char *s, size_t n, struct watch_id *out);
/* <0, 0, >0 as a is before, equal to, after b. */
int	watch_id_cmp(const struct watch_id *a, const struct watch_id *b);
/* "gen:off" into out (cap ≥ 42 always fits). */
void	watch_id_format(const struct watch_id *id, char *out, size_t cap);

/* Where the daemon's events socket is. */
struct watch_addr {
	char	host[256];	/* name or address, IPv6 without brackets */
	int	port;
	char	path[1024];	/* request path without the query */
};

/*
 * Parse a daemon address: ws://HOST[:PORT][/PATH], http://… likewise, or
 * a bare HOST:PORT (the `listen` form of daemon.json).  IPv6 hosts go in
 * brackets.  Without a port, WATCH_DEFAULT_PORT; without a path (or "/"),
 * WATCH_EVENTS_PATH.  A wildcard listen host (0.0.0.0, ::, empty) becomes
 * the loopback address of its family, since that is where a local client
 * reaches it.  Returns 0, -EPROTONOSUPPORT for wss:// and https:// (the
 * daemon serves loopback in the clear), -EINVAL otherwise.
 */
int	watch_url_parse(const char *url, struct watch_addr *out);
/* "ws://host:port/path" (brackets around IPv6) for messages. */
void	watch_addr_format(const struct watch_addr *a, char *out, size_t cap);

/*
 * Parse the text of daemon.json ({"pid","listen","url","project"}): `url`
 * if it parses, else `listen`.  If project is not NULL the daemon's
 * project path is copied into it ("" when absent).  0, or -EINVAL with
 * *why set to a static reason.
 */
int	watch_daemon_json_parse(const char *text, size_t len,
	    struct watch_addr *out, char *project, size_t pcap,
	    const char **why);
/*
 * Find the daemon serving `project_abs`: read <state dir>/daemon.json,
 * the state dir as statedir_resolve() computes it.  `path` receives the
 * file's path (for messages).  0, -ENOENT when there is no daemon.json,
 * -EINVAL (*why set) when it cannot be understood, or another -errno.
 */
int	watch_daemon_find(const char *project_abs, struct watch_addr *out,
	    char *path, size_t cap, const char **why);

/* One WebSocket message put back together from its fragments. */
struct watch_msg {
	char	*buf;
	size_t	 len, cap;
	int	 oversized;	/* past WATCH_MSG_MAX: the rest is discarded */
};

/* Append a fragment.  Past WATCH_MSG_MAX the message is marked oversized
 * and nothing more is kept (memory stays bounded).  0 or -ENOMEM. */
int	watch_msg_add(struct watch_msg *m, const void *p, size_t n);
/* Forget the message, keep the buffer. */
void	watch_msg_reset(struct watch_msg *m);
void	watch_msg_free(struct watch_msg *m);

/*
 * Make a wake line safe for a line-oriented monitor, in place: CR, LF and
 * other control characters become spaces, and the line is cut at
 * WATCH_LINE_MAX bytes on a UTF-8 boundary.  Returns the new length.
 */
size_t	watch_line_clean(char *line, size_t len);

/* What the consumer decided about one message. */
enum watch_action {
	WATCH_IGNORED,		/* hello, record, a wake already printed */
	WATCH_PRINTED,		/* a wake (or a gap) went to `out` */
	WATCH_RESYNC,		/* an older daemon's "dropped": reconnect now
				   from the last id */
	WATCH_BAD,		/* not a message we understand (warned) */
	WATCH_OUT_FAILED	/* writing to `out` failed: stop */
};

struct watch_state {
	struct watch_id	last;		/* last printed id: the dedupe key */
	int		have_last;
	struct watch_id	resume;		/* what to ask replay from (since=) */
	int		have_resume;
	int		resume_all;	/* since=<resume.gen>:-1, the whole
					   generation (the cursor was 0) */
	int		json;		/* print whole wake messages */
	uint64_t	printed, duplicates, bad;
	uint64_t	resets;		/* the daemon's ids started over */
	uint64_t	dropped;	/* sum of the daemon's "dropped" counts */
	/* Deliver wakes here instead of printing them to `out`: called with
	 * the whole message; 0 taken (it becomes `last`), > 0 not taken
	 * (WATCH_IGNORED: `last` stays, so a resume gets it again), < 0
	 * WATCH_OUT_FAILED. */
	int		(*sink)(void *arg, const struct cJSON *wake);
	void		*sink_arg;
	uint64_t	gaps;		/* "gap" messages: wakes it cannot have */
};

/*
 * Handle one complete server message.  Wakes newer than st->last are
 * printed to `out` (the line, or with st->json the message itself, one
 * JSON object per line) and flushed at once; warnings go to `err`.
 *
 * A wake with a null id (a "+N more" or catch-up summary, not a record)
 * is printed whenever it comes: there is nothing to dedupe it by.  A
 * "gap" (the daemon cannot replay what comes after our id: perf.jsonl was
 * replaced) is printed as one "sloptimize gap: …" line, and the resume
 * point moves to where the daemon says it carries on.  "dropped" from a
 * daemon that says what it dropped ("what": "record") concerns only the
 * panel's messages and is counted; from an older daemon, which dropped
 * wakes too, it asks for a reconnect (WATCH_RESYNC).
 *
 * st->resume follows st->last; before anything is printed, the first
 * hello that carries a cursor sets it just before that cursor, so that a
 * connection lost before the first wake still resumes where it started
 * instead of skipping what happened while it was down.  A hello from a
 * ready daemon whose generation is older than st->resume means its state
 * was reset (a new state directory): its ids start over, so both are
 * forgotten rather than silencing every wake until the new ids catch up.
 * A wake whose generation is older than st->last's says the same (the
 * daemon never replays ids before since): it is printed, said on `err`,
 * and becomes the new last.
 */
enum watch_action watch_consume(struct watch_state *st, const char *msg,
	    size_t len, FILE *out, FILE *err);

/*
 * The client: the daemon's events socket on a caller's libuv loop, found
 * through daemon.json (re-read before every attempt) or daemon_url,
 * reconnected with backoff forever, resuming with since=, every message
 * handed to watch_consume() with the caller's watch_state.  One context
 * of libwebsockets each, on that loop.  `sloptimize watch` runs one for
 * its lifetime; the MCP server's wait_for_wake starts and pauses one per
 * call.
 *
 * Fill in the fields above the line, then open; start and pause as often
 * as needed; close (the first of lws's two stages on a foreign loop),
 * let the loop run out, then free.
 */
struct watch_client {
	const char		*project;	/* absolute */
	const char		*daemon_url;	/* or NULL: daemon.json */
	struct watch_state	*st;		/* the caller's */
	FILE			*out;		/* wakes, when st has no sink */
	FILE			*log;		/* status lines, or NULL */
	/* A fatal error (out of memory, `out` gone): called on the loop,
	 * outside lws; the client is paused. */
	void			(*fatal)(struct watch_client *, int rc);
	void			*data;
	/* ---- the client's own ---- */
	char			 said[1600];	/* the last status line */
	int			 connected;	/* the socket is up now */
	int			 ever;		/* was connected once */
	uv_timer_t		 retry;
	struct lws_context	*lws;
	struct lws		*wsi;
	struct watch_msg	 msg;
	FILE			*quiet;		/* consume's warnings, no log */
	char			 where[1400];	/* the address tried last */
	char			 path[1200];	/* request path + query */
	char			 host[300];	/* Host: header */
	struct watch_addr	 addr;
	uint64_t		 backoff_ms;
	int			 live;		/* an attempt is in flight */
	int			 said_down;	/* this outage was reported */
	int			 said_hint;
	int			 resync;	/* reconnect at once */
	int			 stopping;	/* no more attempts */
	int			 torn;		/* closed */
	int			 rc;
};

/* 0, or -ENOTSUP when libwebsockets cannot run on libuv (said). */
int	watch_client_open(struct watch_client *w, uv_loop_t *loop);
/* Connect (again), from w->st's resume point. */
void	watch_client_start(struct watch_client *w);
/* Drop the connection and stop retrying; nothing more is delivered. */
void	watch_client_pause(struct watch_client *w);
void	watch_client_close(struct watch_client *w);
/* After the loop has run out following close. */
void	watch_client_free(struct watch_client *w);

#endif
