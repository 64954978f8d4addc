/*
 * server — libwebsockets on the daemon's libuv loop (see server.h).
 *
 * A subscriber never slows the daemon down: messages are queued per
 * subscriber and written when its socket is writable.  A queue that grows
 * past its bound (a client that stopped reading) is dropped whole and the
 * client told {"type":"dropped"}; it reconnects with ?since= and the ring
 * gives it back what it missed, so nothing is lost, only delayed.
 *
 * Ids are <generation>:<offset> and are compared as number pairs.
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

struct msg {
	struct msg	*next;
	size_t		 len;
	unsigned char	 buf[];		/* LWS_PRE + len */
};

struct sub {
	struct sub	*next, *prev;
	struct lws	*wsi;
	struct server	*s;
	struct msg	*head, *tail;
	size_t		 qlen, qbytes;
	uint64_t	 dropped;
	int		 waiting;	/* resuming before the daemon is ready */
	uint64_t	 since_gen, since_off;
	int		 since_all;
};

/* Per connection: HTTP request state (daemon/http.h) or a subscriber. */
struct pss {
	struct sub		*sub;
	struct http_request	 req;
	char			 since[64];	/* ?since= of the upgrade */
	int			 has_since;
};

/* "<gen>:<off>", or "<gen>:-1" for the start of a generation (*all). */
static int
parse_id(const char *s, uint64_t *gen, uint64_t *off, int *all)
{
	char	*end;

	*all = 0;
	*gen = strtoull(s, &end, 10);
	if (end == s || *end != ':')
		return -1;
	s = end + 1;
	if (strcmp(s, "-1") == 0) {
		*all = 1;
		*off = 0;
		return 0;
	}
	*off = strtoull(s, &end, 10);
	return end == s || *end != '\0' ? -1 : 0;
}

static int
id_after(uint64_t g, uint64_t o, const struct sub *u)
{
	if (u->since_all)
		return g >= u->since_gen;
	return g > u->since_gen || (g == u->since_gen && o > u->since_off);
}

static struct msg *
msg_new(const char *json, size_t len)
{
	struct msg	*m = malloc(sizeof(*m) + LWS_PRE + len);

	if (m == NULL)
		return NULL;
	m->next = NULL;
	m->len = len;
	memcpy(m->buf + LWS_PRE, json, len);
	return m;
}

static void
sub_clear(struct sub *u)
{
	struct msg	*m, *n;

	for (m = u->head; m != NULL; m = n) {
		n = m->next;
		free(m);
	}
	u->head = u->tail = NULL;
	u->qlen = u->qbytes = 0;
}

static void
sub_push(struct sub *u, const char *json, size_t len)
{
	struct msg	*m;

	if (u->qlen >= SERVER_SUB_MAX_MSGS ||
	    u->qbytes + len > SERVER_SUB_MAX_BYTES) {
		/* It stopped reading: drop its backlog and say so; it
		 * resumes with ?since= from the ring. */
		u->dropped += u->qlen;
		u->s->dropped += u->qlen;
		log_warnx("events: subscriber too slow, dropped %zu queued "
		    "messages (it can resume with ?since=)", u->qlen);
		sub_clear(u);
		{
			char	note[96];
			int	n = snprintf(note, sizeof(note),
				    "{\"type\":\"dropped\",\"count\":%llu}",
				    (unsigned long long)u->dropped);

			if ((m = msg_new(note, (size_t)n)) != NULL) {
				u->head = u->tail = m;
				u->qlen = 1;
				u->qbytes = (size_t)n;
			}
		}
		lws_callback_on_writable(u->wsi);
		return;
	}
	if ((m = msg_new(json, len)) == NULL) {
		log_warnx("events: out of memory queueing a message");
		return;
	}
	if (u->tail)
		u->tail->next = m;
	else
		u->head = m;
	u->tail = m;
	u->qlen++;
	u->qbytes += len;
	lws_callback_on_writable(u->wsi);
}

void
server_broadcast(struct server *s, const char *json, size_t len)
{
	struct sub	*u;

	for (u = s->subs; u != NULL; u = u->next)
		if (!u->waiting)
			sub_push(u, json, len);
}

void
server_wake(struct server *s, uint64_t gen, uint64_t off, const char *json,
    size_t len, int broadcast)
{
	struct ring_entry	*e;
	char			*copy;

	if ((copy = malloc(len)) != NULL) {
		memcpy(copy, json, len);
		if (s->ring_len == SERVER_RING) {
			e = &s->ring[s->ring_head];
			free(e->json);
			s->ring_head = (s->ring_head + 1) % SERVER_RING;
			s->ring_len--;
			s->ring_evicted++;
		}
		e = &s->ring[(s->ring_head + s->ring_len) % SERVER_RING];
		e->gen = gen;
		e->off = off;
		e->json = copy;
		e->len = len;
		s->ring_len++;
	}
	if (broadcast)
		server_broadcast(s, json, len);
}

void
server_ring_clear(struct server *s)
{
	size_t	i;

	for (i = 0; i < s->ring_len; i++)
		free(s->ring[(s->ring_head + i) % SERVER_RING].json);
	s->ring_head = s->ring_len = 0;
}

/* The ring after the subscriber's since-point, oldest first. */
static void
sub_replay(struct server *s, struct sub *u)
{
	size_t	i, sent = 0;

	for (i = 0; i < s->ring_len; i++) {
		const struct ring_entry	*e = &s->ring[(s->ring_head + i) %
					    SERVER_RING];

		if (id_after(e->gen, e->off, u)) {
			sub_push(u, e->json, e->len);
			sent++;
		}
	}
	u->waiting = 0;
	log_debug("events: subscriber resumed after %llu:%llu, %zu wakes "
	    "replayed", (unsigned long long)u->since_gen,
	    (unsigned long long)u->since_off, sent);
}

/*
 * hello, then the ring after `since`.  Before the start-up fold is done
 * the ring does not reach the file's end yet: a resuming subscriber waits
 * (live messages are not sent to it either, or it would see later ids
 * before earlier ones) and is replayed in server_ready().
 */
static void
sub_welcome(struct server *s, struct sub *u, const char *since)
{
	cJSON	*o = cJSON_CreateObject();
	char	*txt;

	cJSON_AddStringToObject(o, "type", "hello");
	cJSON_AddStringToObject(o, "version", SLOPTIMIZE_VERSION);
	cJSON_AddNumberToObject(o, "pid", (double)getpid());
	/* project, generation, ready and the cursor: lines before it are
	 * folded, what comes next is live, so a client resumes with
	 * since=<generation>:<cursor - 1> (":-1" at 0) */
	s->hooks.hello(s->hooks.arg, o);
	if ((txt = cJSON_PrintUnformatted(o)) != NULL)
		sub_push(u, txt, strlen(txt));
	free(txt);
	cJSON_Delete(o);
	if (since == NULL || parse_id(since, &u->since_gen, &u->since_off,
	    &u->since_all))
		return;
	u->waiting = 1;
	if (s->ready)
		sub_replay(s, u);
}

void
server_ready(struct server *s)
{
	struct sub	*u;

	s->ready = 1;
	for (u = s->subs; u != NULL; u = u->next)
		if (u->waiting)
			sub_replay(s, u);
}

static int
sub_write(struct sub *u)
{
	struct msg	*m = u->head;

	if (m == NULL)
		return 0;
	if (lws_write(u->wsi, m->buf + LWS_PRE, m->len, LWS_WRITE_TEXT) <
	    (int)m->len)
		return -1;
	u->head = m->next;
	if (u->head == NULL)
		u->tail = NULL;
	u->qlen--;
	u->qbytes -= m->len;
	free(m);
	if (u->head != NULL)
		lws_callback_on_writable(u->wsi);
	return 0;
}

static int
callback(struct lws *wsi, enum lws_callback_reasons reason, void *user,
    void *in, size_t len)
{
	struct pss	*p = user;
	struct server	*s = lws_context_user(lws_get_context(wsi));
	struct api	*a = s->api;
	struct sub	*u;
	char		 uri[256];

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
		if (s->nsubs >= SERVER_MAX_SUBS) {
			log_warnx("events: %u subscribers, refusing another",
			    s->nsubs);
			return -1;
		}
		if ((u = calloc(1, sizeof(*u))) == NULL)
			return -1;
		u->wsi = wsi;
		u->s = s;
		u->next = s->subs;
		if (s->subs)
			s->subs->prev = u;
		s->subs = u;
		s->nsubs++;
		p->sub = u;
		sub_welcome(s, u, p->has_since ? p->since : NULL);
		return 0;
	case LWS_CALLBACK_SERVER_WRITEABLE:
		return p->sub ? sub_write(p->sub) : 0;
	case LWS_CALLBACK_RECEIVE:
		return 0;	/* clients have nothing to say */
	case LWS_CALLBACK_CLOSED:
		if ((u = p->sub) != NULL) {
			if (u->prev)
				u->prev->next = u->next;
			else
				s->subs = u->next;
			if (u->next)
				u->next->prev = u->prev;
			s->nsubs--;
			sub_clear(u);
			free(u);
			p->sub = NULL;
		}
		return 0;
	case LWS_CALLBACK_WSI_CREATE:
		api_conn_open(a);
		return 0;
	case LWS_CALLBACK_WSI_DESTROY:
		api_conn_close(a);
		return 0;
	case LWS_CALLBACK_FILTER_NETWORK_CONNECTION:
		/* far past the cap: not even a 503 */
		return api_conn_refused(a) ? -1 : 0;
	case LWS_CALLBACK_HTTP_CONFIRM_UPGRADE:
		return api_confirm_upgrade(a, wsi, (const char *)in);
	case LWS_CALLBACK_HTTP:
		return api_http(a, wsi, &p->req, (const char *)in);
	case LWS_CALLBACK_HTTP_BODY:
		return api_http_body(a, wsi, &p->req, in, len);
	case LWS_CALLBACK_HTTP_BODY_COMPLETION:
		return api_http_body_done(a, wsi, &p->req);
	case LWS_CALLBACK_HTTP_WRITEABLE:
		return api_http_writeable(a, wsi, &p->req);
	case LWS_CALLBACK_CLOSED_HTTP:
	case LWS_CALLBACK_HTTP_DROP_PROTOCOL:
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

static void
lws_log(int level, const char *line)
{
	size_t	n = strlen(line);

	if (n > 0 && line[n - 1] == '\n')
		n--;
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

int
server_start(struct server *s, uv_loop_t *loop, const char *host, int port,
    int verbose, struct api *api, const struct server_hooks *hooks)
{
	struct lws_context_creation_info	info;
	void					*loops[1] = { loop };
	int					 rc;

	memset(s, 0, sizeof(*s));
	s->api = api;
	s->hooks = *hooks;
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
	return check_bound(host, s->port);
}

void
server_status_json(const struct server *s, cJSON *o)
{
	cJSON_AddNumberToObject(o, "subscribers", s->nsubs);
	cJSON_AddNumberToObject(o, "droppedMessages", (double)s->dropped);
}

void
server_stop(struct server *s)
{
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
	server_ring_clear(s);
}
