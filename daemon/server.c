/*
 * server — libwebsockets on the daemon's libuv loop (see server.h): the
 * events socket's transport (the protocol is daemon/events.c), HTTP handed
 * to the API, the bind check, idle.
 */
#include <sys/socket.h>

#include <arpa/inet.h>
#include <netinet/in.h>

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>
#include <libwebsockets.h>

#include "daemon/api.h"
#include "daemon/log.h"
#include "daemon/server.h"

#define EVENTS_PATH	"/api/sloptimize/events"

/* Per connection: HTTP request state (daemon/http.h) or a subscriber. */
struct pss {
	struct events_sub	*sub;
	struct http_request	 req;
	char			 since[64];	/* ?since= of the upgrade */
	int			 has_since;
	/* a message from a game page, put back together from its
	   fragments for the relay (daemon/relay.h) */
	char			*rx;
	size_t			 rx_len, rx_cap;
	int			 rx_skip;	/* past its bound, or binary */
};

#define RX_KEEP		(64 * 1024)	/* kept between messages */

/* --- the events' transport: libwebsockets -------------------------------- */

static void
ws_want_write(void *conn)
{
	lws_callback_on_writable(conn);
}

static int
ws_write(void *conn, unsigned char *buf, size_t len)
{
	return lws_write(conn, buf, len, LWS_WRITE_TEXT) < (int)len ? -1 : 0;
}

static const struct events_transport ws_transport = {
	LWS_PRE, ws_want_write, ws_write
};

/* --- the relay: game pages' messages -------------------------------------- */

static int
relay_send(void *arg, void *conn, const char *json, size_t len)
{
	struct server	*s = arg;

	return events_send(&s->events, conn, json, len);
}

static void
rx_reset(struct pss *p)
{
	p->rx_len = 0;
	p->rx_skip = 0;
	if (p->rx_cap > RX_KEEP) {
		/* an answer of megabytes is not held for the next one */
		free(p->rx);
		p->rx = NULL;
		p->rx_cap = 0;
	}
}

/*
 * A fragment of what a subscriber sent.  Only game pages say anything
 * (`page`, `progress`, `answer`); a whole message goes to the relay, one
 * past RELAY_MSG_MAX fails the page's command and is read to its end
 * unkept, and a binary one is not ours.  Nothing a client says closes
 * its connection.
 */
static int
on_receive(struct server *s, struct pss *p, struct lws *wsi, const char *in,
    size_t len)
{
	uint64_t	now = uv_now(s->loop);
	size_t		ncap;
	char		*nb;

	if (lws_frame_is_binary(wsi))
		p->rx_skip = 1;
	if (!p->rx_skip && p->rx_len + len > RELAY_MSG_MAX) {
		relay_too_big(&s->relay, p->sub, now);
		log_warnx("relay: a game page sent a message past %u MiB; "
		    "its command fails", RELAY_MSG_MAX >> 20);
		p->rx_skip = 1;
	}
	if (!p->rx_skip && p->rx_len + len + 1 > p->rx_cap) {
		for (ncap = p->rx_cap ? p->rx_cap : 4096;
		    ncap < p->rx_len + len + 1; ncap *= 2)
			;
		if ((nb = realloc(p->rx, ncap)) == NULL) {
			log_warnx("relay: out of memory for a page's message");
			relay_too_big(&s->relay, p->sub, now);
			p->rx_skip = 1;
		} else {
			p->rx = nb;
			p->rx_cap = ncap;
		}
	}
	if (!p->rx_skip) {
		memcpy(p->rx + p->rx_len, in, len);
		p->rx_len += len;
	}
	if (!lws_is_final_fragment(wsi) ||
	    lws_remaining_packet_payload(wsi) > 0)
		return 0;
	if (!p->rx_skip && relay_receive(&s->relay, p->sub, p->rx,
	    p->rx_len, now) == RELAY_MSG_PAGE)
		events_quiet(&s->events, p->sub);
	rx_reset(p);
	return 0;
}

/* --- the daemon's calls, handed to the events ---------------------------- */

static int
callback(struct lws *wsi, enum lws_callback_reasons reason, void *user,
    void *in, size_t len)
{
	struct pss		*p = user;
	struct server		*s = lws_context_user(lws_get_context(wsi));
	struct api		*a = s->api;
	struct events_sub	*u;
	struct rawhdr_req	 rq;
	char			 uri[256];
	int			 n;

	switch (reason) {
	case LWS_CALLBACK_FILTER_PROTOCOL_CONNECTION:
		/* a WebSocket upgrade: only on the events path */
		if (lws_hdr_copy(wsi, uri, sizeof(uri), WSI_TOKEN_GET_URI) <= 0 ||
		    strcmp(uri, EVENTS_PATH) != 0)
			return -1;
		/* the headers are gone once the upgrade is done: keep since */
		{
			char		 arg[64];
			const char	*v = lws_get_urlarg_by_name(wsi, "since=",
					    arg, sizeof(arg));

			/* v points past "since=" inside arg */
			p->has_since = v != NULL;
			if (v != NULL)
				snprintf(p->since, sizeof(p->since), "%s", v);
		}
		return api_ws_allowed(a, wsi) ? 0 : -1;
	case LWS_CALLBACK_ESTABLISHED:
		/* the cap is said at the upgrade (api_confirm_upgrade), in the
		 * same turn of the loop: the events' own check is a belt */
		p->sub = events_open(&s->events, wsi,
		    p->has_since ? p->since : NULL);
		return p->sub != NULL ? 0 : -1;
	case LWS_CALLBACK_SERVER_WRITEABLE:
		return p->sub ? events_writable(&s->events, p->sub) : 0;
	case LWS_CALLBACK_RECEIVE:
		return p->sub ? on_receive(s, p, wsi, in, len) : 0;
	case LWS_CALLBACK_CLOSED:
		tap_close(&s->tap, lws_get_socket_fd(wsi));
		if ((u = p->sub) != NULL) {
			p->sub = NULL;
			relay_gone(&s->relay, u, uv_now(s->loop));
			events_close(&s->events, u);
		}
		free(p->rx);
		p->rx = NULL;
		p->rx_len = p->rx_cap = 0;
		return 0;
	case LWS_CALLBACK_WSI_CREATE:
		api_conn_open(a);
		return 0;
	case LWS_CALLBACK_WSI_DESTROY:
		api_conn_close(a);
		return 0;
	case LWS_CALLBACK_FILTER_NETWORK_CONNECTION:
		/* far past the cap: not even a 503 */
		if (api_conn_refused(a))
			return -1;
		/* `in` is the accepted socket: from now on what lws reads
		 * from it is seen by its header parser (daemon/tap.h) */
		(void)tap_open(&s->tap, (int)(intptr_t)in);
		return 0;
	case LWS_CALLBACK_HTTP_CONFIRM_UPGRADE:
		(void)tap_take(&s->tap, lws_get_socket_fd(wsi), &rq);
		n = api_confirm_upgrade(a, wsi, (const char *)in, &rq,
		    events_count(&s->events));
		rawhdr_req_free(&rq);
		return n;
	case LWS_CALLBACK_HTTP:
		(void)tap_take(&s->tap, lws_get_socket_fd(wsi), &rq);
		n = api_http(a, wsi, &p->req, (const char *)in, &rq);
		rawhdr_req_free(&rq);
		return n;
	case LWS_CALLBACK_HTTP_BODY:
		return api_http_body(a, wsi, &p->req, in, len);
	case LWS_CALLBACK_HTTP_BODY_COMPLETION:
		return api_http_body_done(a, wsi, &p->req);
	case LWS_CALLBACK_HTTP_WRITEABLE:
		return api_http_writeable(a, wsi, &p->req,
		    tap_fed(&s->tap, lws_get_socket_fd(wsi)));
	case LWS_CALLBACK_TIMER:
		return p != NULL && p->sub == NULL ?
		    api_http_timer(a, wsi, &p->req) : 0;
	case LWS_CALLBACK_CLOSED_HTTP:
	case LWS_CALLBACK_HTTP_DROP_PROTOCOL:
		/* DROP_PROTOCOL ends each transaction, not the connection:
		 * its tap stays for the next request */
		if (reason == LWS_CALLBACK_CLOSED_HTTP)
			tap_close(&s->tap, lws_get_socket_fd(wsi));
		if (p != NULL)
			http_request_free(&p->req);
		return 0;
	default:
		break;
	}
	return lws_callback_http_dummy(wsi, reason, user, in, len);
}

static const struct lws_protocols protocols[] = {
	{ "sloptimize", callback, sizeof(struct pss), 64 * 1024, 0, NULL, 0 },
	{ NULL, NULL, 0, 0, 0, NULL, 0 }
};

/*
 * libwebsockets' errors go to our log.  One of them can come at the rate
 * of the loop: `accept: errno N` when accept(2) fails on a listening
 * socket that stays readable (EMFILE past the open-file limit; api_tune
 * fits the cap to it, but a descriptor leak elsewhere would still do it).
 * That line is said at most once every ACCEPT_LOG_MS, with how many were
 * not said.  lws's log callback has no argument: the state is this
 * file's, and only the loop thread logs through it.
 */
#define ACCEPT_LOG_MS	10000

static struct {
	uint64_t	last_ms;
	uint64_t	quiet;		/* lines not said since */
} accept_log;

static void
lws_log(int level, const char *line)
{
	size_t		n = strlen(line);
	uint64_t	now;

	if (n > 0 && line[n - 1] == '\n')
		n--;
	if ((level & LLL_ERR) && strncmp(line, "accept:", 7) == 0) {
		now = uv_hrtime() / 1000000;
		if (accept_log.last_ms != 0 &&
		    now - accept_log.last_ms < ACCEPT_LOG_MS) {
			accept_log.quiet++;
			return;
		}
		log_warnx("lws: %.*s (%llu more like it in the last %d s; "
		    "the open-file limit? see --max-connections)", (int)n,
		    line, (unsigned long long)accept_log.quiet,
		    ACCEPT_LOG_MS / 1000);
		accept_log.last_ms = now;
		accept_log.quiet = 0;
		return;
	}
	if (level & LLL_ERR)
		log_warnx("lws: %.*s", (int)n, line);
	else
		log_debug("lws: %.*s", (int)n, line);
}

/*
 * libwebsockets resolves the listen address through getifaddrs() and,
 * when that fails, binds the wildcard address and says nothing.  Look at
 * what we really listen on: the listening TCP sockets of this process on
 * our port must all be bound to the configured address.
 */
static int
check_bound(const char *host, int port)
{
	struct sockaddr_storage	ss;
	struct in_addr		want4;
	struct in6_addr		want6;
	int			fd, acc, v6, found = 0;
	socklen_t		len;
	char			got[INET6_ADDRSTRLEN];

	v6 = strchr(host, ':') != NULL;
	if ((v6 ? inet_pton(AF_INET6, host, &want6) :
	    inet_pton(AF_INET, host, &want4)) != 1)
		return -EADDRNOTAVAIL;
	for (fd = 0; fd < 4096; fd++) {
		if (fcntl(fd, F_GETFD) == -1)
			continue;
		len = sizeof(acc);
		if (getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &acc, &len) ||
		    !acc)
			continue;
		len = sizeof(ss);
		if (getsockname(fd, (struct sockaddr *)&ss, &len))
			continue;
		if (ss.ss_family == AF_INET) {
			struct sockaddr_in	*in = (void *)&ss;

			if (ntohs(in->sin_port) != port)
				continue;
			found++;
			if (!v6 && in->sin_addr.s_addr == want4.s_addr)
				continue;
			inet_ntop(AF_INET, &in->sin_addr, got, sizeof(got));
		} else if (ss.ss_family == AF_INET6) {
			struct sockaddr_in6	*in6 = (void *)&ss;

			if (ntohs(in6->sin6_port) != port)
				continue;
			found++;
			if (v6 && memcmp(&in6->sin6_addr, &want6,
			    sizeof(want6)) == 0)
				continue;
			inet_ntop(AF_INET6, &in6->sin6_addr, got, sizeof(got));
		} else
			continue;
		log_warnx("listening on %s port %d, not on %s as configured "
		    "(libwebsockets falls back to the wildcard address when "
		    "it cannot resolve the interface): refusing to run", got,
		    port, host);
		return -EADDRNOTAVAIL;
	}
	if (found == 0) {
		log_warnx("cannot find our listening socket on port %d", port);
		return -EADDRNOTAVAIL;
	}
	return 0;
}

/*
 * Why lws could not listen on host:port: it only logs "ERROR on binding"
 * with a number, and creates no vhost.  Bind the same way (SO_REUSEADDR,
 * as lws does) to learn the errno.  -EADDRINUSE, another -errno, or -EIO
 * when our own bind works (then lws failed for a reason of its own).
 */
static int
bind_error(const char *host, int port)
{
	struct sockaddr_storage	ss;
	socklen_t		len;
	int			fd, one = 1, rc = -EIO;

	memset(&ss, 0, sizeof(ss));
	if (strchr(host, ':') != NULL) {
		struct sockaddr_in6	*in6 = (void *)&ss;

		in6->sin6_family = AF_INET6;
		in6->sin6_port = htons((uint16_t)port);
		if (inet_pton(AF_INET6, host, &in6->sin6_addr) != 1)
			return -EADDRNOTAVAIL;
		len = sizeof(*in6);
	} else {
		struct sockaddr_in	*in = (void *)&ss;

		in->sin_family = AF_INET;
		in->sin_port = htons((uint16_t)port);
		if (inet_pton(AF_INET, host, &in->sin_addr) != 1)
			return -EADDRNOTAVAIL;
		len = sizeof(*in);
	}
	if ((fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1)
		return -errno;
	(void)setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&ss, len) == -1 ||
	    listen(fd, 1) == -1)
		rc = -errno;
	close(fd);
	return rc;
}

/* --- Idle --------------------------------------------------------------- */

/*
 * An idle daemon must not wake up (DESIGN §8.11, §14).  libwebsockets
 * 4.1.6 runs a housekeeping timer every 30 s whatever it is doing:
 * lws_plat_init() (lib/plat/unix/unix-init.c, line 163) schedules the
 * per-thread `sul_plat` for 30 s, and lws_sul_plat_unix() (line 79)
 * re-arms it every time it runs; no creation option turns it off.  It
 * ends a deprecated context, frees deprecated vhosts, retries vhosts whose
 * listen socket could not be made and notices that a parent process died
 * — nothing this daemon uses.  On libuv the whole sorted timer list is
 * driven by one uv_timer of the event library (lib/event-libs/libuv/
 * libuv.c, `sultimer`, whose data is the lws context), re-armed from its
 * idle callback after every socket event.
 *
 * So, just before the loop sleeps (a prepare handle, which runs after
 * lws's idle callback), when no connection is open that timer is
 * stopped.  The next socket event (a new connection) makes lws re-arm it
 * with whatever is due, which then runs late and harmlessly.  While a
 * connection is open the timer runs as lws wants: the connections'
 * timeouts ride on the same list.
 */
static void
find_lws_timer(uv_handle_t *h, void *arg)
{
	struct server	*s = arg;

	if (h->type == UV_TIMER && h->data == (void *)s->ctx &&
	    s->lws_timer == NULL)
		s->lws_timer = (uv_timer_t *)h;
}

static void
on_idle(uv_prepare_t *h)
{
	struct server	*s = h->data;

	if (s->stopping || s->api->conns != 0)
		return;
	if (s->lws_timer == NULL && !s->timer_searched++) {
		uv_walk(s->loop, find_lws_timer, s);
		if (s->lws_timer == NULL)
			log_debug("idle: libwebsockets' timer not found; it "
			    "will wake the daemon every 30 s");
	}
	if (s->lws_timer != NULL && uv_is_active((uv_handle_t *)s->lws_timer)) {
		uv_timer_stop(s->lws_timer);
		s->idle_stops++;
	}
}

int
server_start(struct server *s, uv_loop_t *loop, const char *host, int port,
    int verbose, struct api *api, const struct server_hooks *hooks)
{
	struct lws_context_creation_info	info;
	void					*loops[1] = { loop };
	int					 rc;

	memset(s, 0, sizeof(*s));
	s->api = api;
	{
		struct events_hooks	eh = { hooks->hello, hooks->row,
					    hooks->arg, hooks->wake,
					    &api->env.cfg->max_subs, "" };

		snprintf(eh.perf, sizeof(eh.perf), "%s", hooks->perf);
		events_init(&s->events, loop, &ws_transport, &eh);
	}
	relay_init(&s->relay, relay_send, s);
	api->rc.relay = &s->relay;
	s->loop = loop;
	if (tap_init(&s->tap) != 0)
		log_warnx("another server taps this process's sockets: every "
		    "request to this one will be refused");
	lws_set_log_level(LLL_ERR | LLL_WARN | (verbose ? LLL_NOTICE : 0),
	    lws_log);
	memset(&info, 0, sizeof(info));
	info.port = port;
	info.iface = host;
	info.protocols = protocols;
	info.user = s;
	/* No LWS_SERVER_OPTION_HTTP_HEADERS_SECURITY_BEST_PRACTICES_ENFORCE:
	 * its CSP forbids the panel's own styles and images; the API sends
	 * its own security headers on every answer (docs/api.md). */
	info.options = LWS_SERVER_OPTION_LIBUV |
	    LWS_SERVER_OPTION_VALIDATE_UTF8;
	if (strchr(host, ':') == NULL)
		info.options |= LWS_SERVER_OPTION_DISABLE_IPV6;
	info.foreign_loops = loops;
	api_tune(api, &info);
	if ((s->ctx = lws_create_context(&info)) == NULL) {
		log_warnx("cannot serve on %s:%d (is the "
		    "libwebsockets-evlib-uv package installed?)", host, port);
		return -EADDRINUSE;
	}
	/*
	 * From here on a failure leaves the context to server_stop and
	 * server_free: on a foreign loop lws must be destroyed in two
	 * stages with the loop running in between.  Destroying it twice
	 * in a row unloads its event-loop plugin while its handles are
	 * still closing, and the loop then calls into unmapped code.
	 *
	 * When the listen socket cannot be bound, lws 4.1 fails to make
	 * the default vhost and runs the first stage itself, yet returns
	 * the context: only the second stage is left, for server_free.
	 */
	s->vh = lws_get_vhost_by_name(s->ctx, "default");
	s->port = s->vh ? lws_get_vhost_listen_port(s->vh) : -1;
	if (s->vh == NULL)
		s->stopping = 1;
	if (s->port <= 0) {
		rc = bind_error(host, port);
		log_warnx("cannot listen on %s%s%s:%d: %s", strchr(host, ':') ?
		    "[" : "", host, strchr(host, ':') ? "]" : "", port,
		    rc == -EADDRINUSE ? "the address is in use (another "
		    "sloptimized, or another server?)" : strerror(-rc));
		s->port = port;
		return rc;
	}
	if ((rc = check_bound(host, s->port)) != 0)
		return rc;
	uv_prepare_init(loop, &s->idle);
	s->idle.data = s;
	uv_prepare_start(&s->idle, on_idle);
	s->idle_up = 1;
	return 0;
}

void
server_status_json(const struct server *s, cJSON *o)
{
	cJSON	*e;

	e = events_status_json(&s->events, o);
	cJSON_AddNumberToObject(o, "maxSubscribers", s->api->env.cfg->max_subs);
	cJSON_AddNumberToObject(o, "subscribersRefused",
	    (double)s->api->subs_refused);
	cJSON_AddNumberToObject(e, "idleTimerStops", (double)s->idle_stops);
	relay_status_json(&s->relay, o);
}

void
server_stop(struct server *s)
{
	if (s->idle_up) {
		s->idle_up = 0;
		s->lws_timer = NULL;
		uv_close((uv_handle_t *)&s->idle, NULL);
	}
	events_stop(&s->events);
	if (s->ctx != NULL && !s->stopping) {
		s->stopping = 1;
		lws_context_destroy(s->ctx);
	}
}

/*
 * On a foreign loop lws is destroyed in two stages: server_stop's call
 * closes its handles, which needs the loop to run on (and its callbacks
 * may still use the API state); this second call, once the loop has run
 * out, frees the context.
 */
void
server_free(struct server *s)
{
	if (s->ctx != NULL) {
		lws_context_destroy(s->ctx);
		s->ctx = NULL;
	}
	events_free(&s->events);
	relay_free(&s->relay);
	tap_free(&s->tap);
}
