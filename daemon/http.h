/*
 * http — the HTTP plumbing under the API: response bodies, the request in
 * hand, answers, headers, writing, query strings.  It knows nothing of
 * routes, guards or the daemon (daemon/api.h puts them together).
 *
 * Answering is safe by construction: http_answer*() only records the
 * answer.  It is written by http_flush() once the handler has returned
 * (inside the request's own callback) or, for an answer given later (a
 * thread-pool job came back), when the socket is writable.  Writing the
 * last piece may complete the transaction, and libwebsockets then frees
 * the per-connection memory the request lives in — which is why only the
 * plumbing ever writes, as the last thing it does.
 *
 * Every response body is an immutable, reference-counted blob written in
 * pieces from LWS_CALLBACK_HTTP_WRITEABLE, so a large body never blocks
 * the loop and one /ledger body serves every client at once.
 *
 * Timeouts: libwebsockets gives a client `--http-timeout` seconds to send
 * its headers and its body.  While the daemon works on the answer (a
 * fold, a write, a build) no client timeout runs: the API marks the
 * request `waiting` and stops it, and bounds the wait itself (daemon/
 * api.c).  Once an answer is being written the client has the same
 * number of seconds to take each piece of it, so a client that stops
 * reading is let go and one that reads slowly is not.
 */
#ifndef DAEMON_HTTP_H
#define DAEMON_HTTP_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

struct lws;

/* Methods, as bits so a route can take several. */
#define HTTP_GET	0x01
#define HTTP_HEAD	0x02
#define HTTP_POST	0x04
#define HTTP_PUT	0x08
#define HTTP_OPTIONS	0x10
#define HTTP_OTHER	0x20

/* An immutable response body; data has LWS_PRE bytes of headroom. */
struct http_blob {
	unsigned	refs;
	size_t		len;
	unsigned char	data[];
};

/* A copy of txt[0..n) (plus '\n' if newline), refs 1; NULL: no memory. */
struct http_blob *http_blob_new(const char *txt, size_t n, int newline);
/* A cJSON tree (consumed; NULL allowed) printed into a blob. */
struct http_blob *http_blob_json(cJSON *o);
struct http_blob *http_blob_ref(struct http_blob *b);
/* Accepts NULL. */
void		 http_blob_unref(struct http_blob *b);

/*
 * A blob written piece by piece, for an answer streamed as it is made
 * (ledger_issues_write: a row at a time) — no tree of the whole answer
 * and no second copy of its text.  http_blob_put has the shape of a
 * ledger_sink_fn.  With `minify` the layout of cJSON_Print (whitespace
 * outside strings) is dropped as it comes, so the bytes are those of
 * cJSON_PrintUnformatted.  `stop` (NULL: none) gives it up: once it is
 * non-zero, put returns -ECANCELED.
 */
struct http_blob_writer {
	struct http_blob	*b;
	size_t			 cap;		/* bytes of b->data */
	int			 minify, in_str, esc;
	const atomic_int	*stop;
};

void	http_blob_writer_init(struct http_blob_writer *w, int minify,
	    const atomic_int *stop);
/* Append data[0..len).  0, -ENOMEM or -ECANCELED. */
int	http_blob_put(void *w, const void *data, size_t len);
/* The blob (plus '\n' if newline), refs 1, its memory trimmed; NULL when
 * out of memory.  The writer is empty afterwards. */
struct http_blob *http_blob_writer_finish(struct http_blob_writer *w,
	    int newline);
/* Drop what was written.  Accepts a finished writer. */
void	http_blob_writer_free(struct http_blob_writer *w);

struct http_request;

/* Called when the request is freed before it was answered (the client
 * hung up, or the server stops): whatever it waits on lets go of it. */
typedef void http_cancel_fn(struct http_request *r, void *arg);

/* Per connection: the request in hand and its response. */
struct http_request {
	struct lws	*wsi;
	unsigned	 method;		/* one HTTP_* bit */
	char		 path[512];
	char		 param[64];		/* the route's "*" segment */
	char		 origin[256];		/* "" if none */
	int		 origin_ok;		/* allowed: echo it in ACAO */
	char		 inm[256];		/* If-None-Match */
	char		*body;			/* request body being received */
	size_t		 body_len, body_cap;	/* cap: its Content-Length */
	/* where it ends in the connection's byte stream, its body
	 * included (daemon/rawhdr.h): more read than that is a request
	 * sent behind it */
	uint64_t	 end;
	int		 has_body;
	int		 in_body;		/* waiting for the body */
	/* a refusal held until its body is read and dropped (guard.c's
	 * drainable refusals): answered before the body, the rest of it
	 * would be left unread and the connection reset under the answer */
	int		 drain;
	unsigned	 drain_status;
	const char	*drain_code, *drain_message;
	const void	*route;			/* the route it matched */
	int		 in_callback;		/* the plumbing writes on return */
	/* what it waits on, if anything (a job, a /ledger build) */
	http_cancel_fn	*cancel;
	void		*cancel_arg;
	int		 waiting;		/* on the daemon: no client timeout */
	int		 waited;		/* ... and it did */
	uint64_t	 deadline_ms;		/* a read's bound (uv_hrtime ms) */
	int		 expired;		/* the API's bound on it ran out */
	unsigned	 write_timeout;		/* seconds to take each piece */
	struct http_request *wnext, *wprev;	/* a waiting list's links */
	int		 wslot;			/* its owner's index + 1 */
	uint64_t	 wgen;			/* its owner's change count */
	/* the response */
	int		 answered;		/* a response is queued */
	unsigned	 status;
	const char	*ctype;
	const char	*cache;
	const char	*allow;
	char		 etag[48];
	int		 page;			/* an HTML page: the panel's CSP */
	int		 close;			/* close the connection after */
	unsigned	 retry_after;		/* a Retry-After, seconds (503) */
	int		 head;			/* HEAD: headers only */
	int		 preflight;		/* OPTIONS: CORS headers */
	int		 pna;			/* Private Network Access asked */
	int		 headers_sent;
	struct http_blob *out;
	size_t		 out_pos;
};

/* Start a new request on wsi, freeing what an earlier one left. */
void	http_request_begin(struct http_request *r, struct lws *wsi);
/* The connection closed: cancel what it waits on, drop the response. */
void	http_request_free(struct http_request *r);

/*
 * Record the answer: status, Content-Type and body (a reference is taken
 * over; NULL for 204/304, or after an allocation failure, which becomes a
 * fixed 500).  Never writes; see the top of this file.  A second answer
 * replaces the first.
 */
void	http_answer(struct http_request *r, unsigned status, const char *ctype,
	    struct http_blob *b);
/* A cJSON tree (consumed) as application/json. */
void	http_answer_json(struct http_request *r, unsigned status, cJSON *o);
/* {"error":{"code","message"}} (schemas/error.json). */
void	http_answer_error(struct http_request *r, unsigned status,
	    const char *code, const char *message);
/* The same, and the connection closes after it (its body is unread). */
void	http_answer_fatal(struct http_request *r, unsigned status,
	    const char *code, const char *message);
/* A cacheable body with a strong ETag: 304 when If-None-Match has it. */
void	http_answer_cached(struct http_request *r, struct http_blob *b,
	    const char *etag, const char *ctype);
cJSON	*http_error_json(const char *code, const char *message);

/*
 * Write what is queued: headers, then the body one 256 KiB piece per
 * call.  Returns what the lws callback returns; the request may be gone
 * afterwards.  http_flush ends a callback that set in_callback: it writes
 * the answer the handler queued, if any (0 when none).
 */
int	http_pump(struct lws *wsi, struct http_request *r);
int	http_flush(struct lws *wsi, struct http_request *r);
/* Status, type, length and the headers every answer carries. */
int	http_headers(struct lws *wsi, struct http_request *r, unsigned char **p,
	    unsigned char *end);

/* --- reading the request ------------------------------------------------ */

unsigned http_method(struct lws *wsi);
/* A header into buf: its length, 0 if absent, -1 if longer than cap. */
int	http_hdr(struct lws *wsi, int token, char *buf, size_t cap);
/* Is this Content-Type application/json (parameters allowed)? */
int	http_json_type(const char *ct);
/* Does an If-None-Match list name etag (weakly)? */
int	http_etag_match(const char *inm, const char *etag);

#define HTTP_MAX_ARGS	8

/* The query string, split at '&' and decoded by lws. */
struct http_args {
	size_t	n;
	char	name[HTTP_MAX_ARGS][32];
	char	value[HTTP_MAX_ARGS][128];
};

#define HTTP_ARG_MAX	192	/* one name=value, decoded, at most */

/* 0, or -1 when there are too many or too long parameters (or one holds
 * a NUL).  lws splits the query at '&' and decodes each piece; each goes
 * through http_args_add. */
int	http_args_parse(struct lws *wsi, struct http_args *g);
/* One decoded piece frag[0..n) ("name=value", "name", or empty: skipped)
 * into g.  0 or -1, as http_args_parse. */
int	http_args_add(struct http_args *g, const char *frag, size_t n);
/* The value of `name`, or NULL. */
const char *http_arg(const struct http_args *g, const char *name);
/* A name in g that is not in `known` (NULL-terminated), or NULL. */
const char *http_args_unknown(const struct http_args *g,
	    const char *const *known);
/* A whole number in [lo, hi].  0 or -1. */
int	http_arg_uint(const char *v, uint64_t lo, uint64_t hi, uint64_t *out);
/* "", 1, true → 1; 0, false → 0.  0 or -1. */
int	http_arg_bool(const char *v, int *out);

#endif
