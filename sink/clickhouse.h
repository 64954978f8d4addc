/*
 * clickhouse — ClickHouse's HTTP interface, from C, through libcurl.
 *
 * Two ways to send one request, sharing the URL rules and the request
 * shape: ch_query() blocks (the CLI: `sink init`, `issues --team`), and a
 * struct ch_client runs requests on a libuv loop through libcurl's multi
 * interface, its sockets on uv_poll and its timer on a uv_timer, so the
 * daemon's loop never waits on the network (docs/team.md says why libcurl
 * and not libwebsockets' client).
 *
 * A sink URL is `http[s]://[user[:password]@]HOST:PORT/?database=DB[&…]`.
 * `database` names the database the tables live in (default
 * "sloptimize"); every other query parameter (user, password, settings)
 * is passed through to every request as written.  Statements name the
 * database themselves, so the URL's database need not exist yet (`sink
 * init` creates it).
 *
 * An answer other than 200 is an error: ClickHouse puts its reason
 * ("Code: 60, e.displayText() = DB::Exception: Table … doesn't exist") in
 * the body, and that text is what errors carry, cut to one line.
 */
#ifndef SINK_CLICKHOUSE_H
#define SINK_CLICKHOUSE_H

#include <stddef.h>
#include <stdint.h>

#include <uv.h>

#define CH_DB_MAX	64
#define CH_URL_MAX	2048
#define CH_ERR_MAX	512

struct ch_url {
	char	base[CH_URL_MAX];	/* scheme://[auth@]host:port/path */
	char	params[CH_URL_MAX];	/* pass-through query, "" or "a=b&c=d" */
	char	db[CH_DB_MAX];		/* a validated identifier */
	char	shown[CH_URL_MAX];	/* for logs and status: no password */
};

/*
 * Parse a sink URL.  0, or -EINVAL with a sentence in err: not http or
 * https, no host, a database name that is not [A-Za-z0-9_]+, too long.
 */
int	ch_url_parse(const char *url, struct ch_url *u, char *err, size_t cap);

/* A growing buffer for answers (and for request bodies elsewhere). */
struct ch_buf {
	char	*p;
	size_t	 len, cap;
	size_t	 max;		/* 0: unbounded; else appends past it fail */
};
int	ch_buf_add(struct ch_buf *b, const void *data, size_t n);
void	ch_buf_free(struct ch_buf *b);

/*
 * The request for a statement: when `data` is NULL the statement is the
 * POST body (a SELECT, a CREATE); otherwise it goes in the URL's `query`
 * parameter and `data` is the body (INSERT … FORMAT JSONEachRow).
 * `settings` ("a=1&b=2" or NULL) are added to the URL.  Returns a
 * malloc'd URL, or NULL on allocation failure.
 */
char	*ch_request_url(const struct ch_url *u, const char *stmt_in_url,
	    const char *settings);

/*
 * Blocking: run `sql` (as the body) and collect the answer.  0, or a
 * negative errno with a sentence in err: -ELIBACC when libcurl cannot be
 * loaded (lazycurl.h), -ECONNREFUSED and friends from
 * the transport, -ETIMEDOUT, -EPROTO for an answer other than 200 (err
 * holds ClickHouse's reason), -EIO for another transport failure.  *out
 * holds the body on 0 and on -EPROTO.
 */
int	ch_query(const struct ch_url *u, const char *sql, const char *settings,
	    long timeout_ms, struct ch_buf *out, char *err, size_t cap);

/*
 * Blocking, several at once: ClickHouse runs them side by side (the
 * team catalogue's four statements).  outs[i] gets answer i.  0, or the
 * first failure as ch_query's.
 */
int	ch_query_all(const struct ch_url *u, const char *const *sql, int n,
	    const char *settings, long timeout_ms, struct ch_buf *outs,
	    char *err, size_t cap);

/* --- on a libuv loop -------------------------------------------------- */

struct ch_client;
struct ch_req;

/*
 * One request's end: rc 0 (HTTP 200) or a negative errno as ch_query's,
 * `err` a sentence (empty on success), the body (valid during the call
 * only; on -EIO ClickHouse's reason).  Runs on the loop thread, once per
 * request, also when the client closes (rc -ECANCELED).
 */
typedef void ch_done_fn(void *arg, int rc, const char *err,
	    const char *body, size_t len);

/*
 * 0, or -errno with a sentence in err: -ELIBACC when libcurl cannot be
 * loaded (lazycurl.h; the first call loads it, so call this at start-up,
 * not from a loop callback), -ENOMEM.  Everything on the loop thread.
 */
int	ch_client_create(struct ch_client **out, uv_loop_t *loop, char *err,
	    size_t cap);

/*
 * POST `body` (len bytes, borrowed: it must stay valid until `done`) to
 * `url` (copied), with a whole-request timeout.  0, or -errno (then done
 * does not run).
 */
int	ch_client_post(struct ch_client *c, const char *url, const char *body,
	    size_t len, long timeout_ms, ch_done_fn *done, void *arg);

/* Requests in flight. */
unsigned ch_client_busy(const struct ch_client *c);

/*
 * Cancel what is in flight (each `done` runs with -ECANCELED), close the
 * loop handles; the client is freed once they are closed, and `closed`
 * (may be NULL) runs then.  Accepts NULL.
 */
void	ch_client_close(struct ch_client *c, void (*closed)(void *),
	    void *arg);

#endif
