/*
 * relay — a live verb's command carried to the game's open tab (DESIGN
 * §16, docs/api.md "The relay").  The page runtime registers on the events
 * socket with a `page` message; a verb (`bench`, `gate`, `attribute`
 * without --launch) posts a command (POST /api/sloptimize/relay, a write:
 * token or allowed Origin); the daemon sends it to one page as a `command`
 * message; the page says how far it is (`progress`, twice a second while
 * it works) and answers (`answer`); the verb polls GET
 * /api/sloptimize/relay/<id> until the answer is there.
 *
 * Why a poll rather than an answer held open: the verb needs the page's
 * progress anyway (a page whose main thread hangs stops sending it, which
 * is how a hang is told from a long bench), and each poll is a plain
 * request under the API's own limits.
 *
 * No socket here: the transport (daemon/server.c) hands over whole
 * messages and says when a connection goes; `send` queues a message to
 * one connection.  All of it runs on the loop thread; tests/daemon/test_relay.c
 * drives it through a fake send.
 *
 * A command is named "<id>-<key>", the key random: GET /relay/<name> is a
 * read any page may send without an Origin, and it hands a finished
 * answer over once; only who posted the command (token or allowed Origin)
 * has its name.
 *
 * Bounds: RELAY_PAGES pages, RELAY_JOBS commands not yet fetched, one
 * command at a time per page, a page's message at most RELAY_MSG_MAX.  A
 * finished command is kept RELAY_KEEP_MS for its verb to fetch; one nobody
 * has asked about for RELAY_IDLE_MS is dropped (its verb is gone).
 */
#ifndef DAEMON_RELAY_H
#define DAEMON_RELAY_H

#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#define RELAY_PAGES	16
#define RELAY_JOBS	8
#define RELAY_KEEP_MS	60000
#define RELAY_IDLE_MS	(10 * 60 * 1000)
#define RELAY_MSG_MAX	(32u << 20)	/* a page's answer: a frame as PNG,
					   a bench's every frame */
#define RELAY_PAGE_MAX	8192		/* a page message */

/* What a message from a connection was. */
enum relay_msg {
	RELAY_MSG_PAGE,		/* a page registered (or said it changed) */
	RELAY_MSG_PROGRESS,
	RELAY_MSG_ANSWER,
	RELAY_MSG_BAD		/* not one of ours: counted, ignored */
};

enum relay_state {
	RELAY_SENT,		/* queued to the page, nothing heard yet */
	RELAY_RUNNING,		/* the page said how far it is */
	RELAY_DONE,		/* answered with a result */
	RELAY_FAILED,		/* answered with an error */
	RELAY_LOST		/* the page went before answering */
};

struct relay_page {
	void		*conn;		/* the transport's handle */
	unsigned	 id;
	cJSON		*info;		/* its last page message, minus type */
	int		 visible;
	uint64_t	 at_ms;		/* registered */
	uint64_t	 busy;		/* the command it runs, 0: none */
};

struct relay_job {
	uint64_t	 id;		/* 0: the slot is free */
	char		 key[17];	/* hex: a command is named "<id>-<key>",
					   so a page that cannot read the
					   answer to POST cannot guess it */
	enum relay_state state;
	unsigned	 page;
	char		 verb[16];
	char		 url[1024];	/* the page's, for the verb to say */
	uint64_t	 at_ms, heard_ms, done_ms, asked_ms;
	cJSON		*progress;	/* the page's last, or NULL */
	cJSON		*result;	/* RELAY_DONE */
	char		 error[1024];	/* RELAY_FAILED, RELAY_LOST */
};

struct relay {
	/* Queue one text message to conn: 0, or -1 (the page is then
	   treated as gone for this command). */
	int		(*send)(void *arg, void *conn, const char *json,
			    size_t len);
	void		*arg;
	struct relay_page pages[RELAY_PAGES];	/* conn NULL: free */
	struct relay_job jobs[RELAY_JOBS];
	unsigned	 next_page;
	uint64_t	 next_job;
	/* counters for /status */
	uint64_t	 commands, answers, lost, bad, refused, dropped;
};

void	relay_init(struct relay *r,
	    int (*send)(void *, void *, const char *, size_t), void *arg);
void	relay_free(struct relay *r);

/* A whole text message from conn.  A `page` message registers conn (or
 * updates it); `progress` and `answer` move the command conn runs. */
enum relay_msg relay_receive(struct relay *r, void *conn, const char *msg,
	    size_t len, uint64_t now_ms);
/* conn sent a message past RELAY_MSG_MAX: its command fails, saying so. */
void	relay_too_big(struct relay *r, void *conn, uint64_t now_ms);
/* conn is gone: it is no page any more, its command is lost. */
void	relay_gone(struct relay *r, void *conn, uint64_t now_ms);

/*
 * POST /relay's body: {"verb", "options", "page"?} sends a command;
 * {"cancel": name} forgets one (the page is told, and may go on).  Returns
 * the HTTP status with *out the answer (202 {v, id: name, page}; 200 for a
 * cancel), or an error status (400 invalid, 404 no page, 409 the page is
 * busy, 503 too many commands) with *code and why.
 */
unsigned relay_post(struct relay *r, const char *body, size_t len,
	    uint64_t now_ms, cJSON **out, const char **code, char *why,
	    size_t cap);
/* GET /relay/<name>: 200 with *out, or 404 (*out NULL).  A finished
 * command is handed over once and then forgotten. */
unsigned relay_get(struct relay *r, const char *id, uint64_t now_ms,
	    cJSON **out);
/* GET /relay: the pages registered now, newest first. */
cJSON	*relay_pages_json(const struct relay *r, uint64_t now_ms);
/* The relay's part of /status. */
void	 relay_status_json(const struct relay *r, cJSON *o);

#endif
