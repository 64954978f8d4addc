/*
 * guard — the checks a request passes before any route runs (DESIGN §10,
 * docs/api.md "Security model"): the Host (DNS rebinding), the Origin
 * allow-list (cross-origin pages), a browser's word that another site's
 * page sent a request without an Origin (Sec-Fetch-Site), and for writes
 * the body rules and the write rule — an allowed Origin or the bearer
 * token.
 *
 * Pure functions of the request's headers — as libwebsockets parsed them,
 * and as they were sent — and the configuration: no state of their own,
 * nothing written.
 */
#ifndef DAEMON_GUARD_H
#define DAEMON_GUARD_H

#include <stddef.h>
#include <stdint.h>

#include "daemon/config.h"
#include "daemon/http.h"
#include "daemon/rawhdr.h"

struct lws;

/* What a route asks of a request. */
enum guard {
	GUARD_READ,	/* Host and Origin */
	GUARD_WRITE	/* and a JSON body of known length, Origin or token */
};

/* A refusal: status, code and message for the JSON error, and whether
 * the connection must close (a body would be left unread). */
struct guard_refusal {
	unsigned	 status;
	const char	*code;
	const char	*message;
	int		 fatal;
};

/*
 * Before anything else: the request's raw header block, as it came off the
 * socket (daemon/rawhdr.h), must be well-formed and wholly accounted for
 * by what libwebsockets parsed — every header it holds found by lws, and
 * the ones the guards act on (Host, Origin, Authorization, Content-Length,
 * Content-Type, Transfer-Encoding, Upgrade, Connection, the WebSocket
 * key and version) with the same value, both ways.  `q` NULL, or a block
 * that was not seen: refused; one marked `unchecked` (no tap on this
 * system, daemon/tap.h) and not bad: let through.  0, or 400 bad_header
 * (the connection closes: its framing cannot be trusted).
 */
unsigned guard_raw(struct lws *wsi, const struct rawhdr_req *q,
	    struct guard_refusal *why);

/*
 * The headers the guards read, as libwebsockets parsed them
 * (guard_hdrs_read) — or as a fuzzer or a test hands them over.  Each
 * value is NUL-ended; its *_n is its length, 0 when absent (lws cannot
 * tell empty from absent) and -1 when longer than the buffer (refused, or
 * for Authorization simply no token).
 */
struct guard_hdrs {
	char	host[256], origin[256], auth[128], clen[32], ctype[128];
	int	host_n, origin_n, auth_n, clen_n, ctype_n;
	int	chunked;	/* a Transfer-Encoding is present */
	/* Fetch metadata (Sec-Fetch-Site, -Mode, -Dest): browsers send them
	 * on every request, with or without an Origin */
	char	site[32], mode[32], dest[32];
	int	site_n, mode_n, dest_n;
};

void	guard_hdrs_read(struct lws *wsi, struct guard_hdrs *h);

/*
 * The checks themselves: pure functions of the headers and the
 * configuration (what the wrappers below run on a live request).
 *
 * Host, then Origin, then the fetch metadata: shared by HTTP requests and
 * WebSocket upgrades.  A request a browser says came from another site's
 * page (`Sec-Fetch-Site: cross-site` or `same-site`) must carry an allowed
 * Origin: a `no-cors` GET carries none, yet cost a fold per distinct
 * query.  The one exception is a top-level navigation (`Sec-Fetch-Mode:
 * navigate`, `Sec-Fetch-Dest: document`) of a GET or HEAD outside
 * ROUTE_PREFIX: a link to the panel's page.  r->method and r->path say
 * what is asked (method 0: a WebSocket upgrade).  Fills r->origin and
 * r->origin_ok (both cleared on a refusal).  0, or the refusal's status
 * (400 no_host, 421 bad_host, 403 bad_origin or cross_site) with *why
 * filled in.
 */
unsigned guard_peer_check(const struct config *cfg, const struct guard_hdrs *h,
	    struct http_request *r, struct guard_refusal *why);

/*
 * The body rules of a write: a Content-Length (no chunked bodies) of at
 * most max_body, Content-Type: application/json, and an allowed Origin
 * (r->origin_ok, from guard_peer_check) or `Authorization: Bearer
 * <token>`.  *len gets the body's length.  0, or the refusal's status.
 */
unsigned guard_write_check(const char *token, size_t max_body,
	    const struct guard_hdrs *h, const struct http_request *r,
	    uint64_t *len, struct guard_refusal *why);

/* A request that is not a write must not carry a body.  0 or status. */
unsigned guard_no_body_check(const struct guard_hdrs *h,
	    struct guard_refusal *why);

/* The same three on a live request: guard_hdrs_read, then the check. */
unsigned guard_peer(const struct config *cfg, struct lws *wsi,
	    struct http_request *r, struct guard_refusal *why);
unsigned guard_write(const char *token, size_t max_body, struct lws *wsi,
	    struct http_request *r, uint64_t *len, struct guard_refusal *why);
unsigned guard_no_body(struct lws *wsi, struct guard_refusal *why);

#endif
