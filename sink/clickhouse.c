/*
 * clickhouse — requests to ClickHouse's HTTP interface (see clickhouse.h).
 *
 * The loop side is libcurl's multi-socket API as its own documentation
 * lays it out for event loops: curl says which sockets it wants watched
 * (CURLMOPT_SOCKETFUNCTION → one uv_poll per socket) and when it next
 * wants a call (CURLMOPT_TIMERFUNCTION → one uv_timer); we tell it when a
 * socket is ready and read finished transfers off curl_multi_info_read.
 * Nothing here blocks: name resolution is curl's threaded resolver, and
 * the only timer armed is the one curl asks for while a transfer runs, so
 * an idle client costs no wake-ups.
 *
 * libcurl itself is loaded on first use (lazycurl.h says why): every curl
 * call goes through the table lazycurl_load() gives, and each entry point
 * that needs one loads it and turns a failure into its error sentence.
 * Building a URL needs no curl at all.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sink/clickhouse.h"
#include "sink/lazycurl.h"

/* --- URLs ------------------------------------------------------------- */

static int
ident_ok(const char *s, size_t n)
{
	size_t	i;

	if (n == 0 || n >= CH_DB_MAX)
		return 0;
	for (i = 0; i < n; i++)
		if (!(s[i] == '_' || (s[i] >= '0' && s[i] <= '9') ||
		    (s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z')))
			return 0;
	return 1;
}

static void
append(char *dst, size_t cap, const char *s, size_t n)
{
	size_t	l = strlen(dst);

	if (l + n + 1 > cap)
		n = cap > l + 1 ? cap - l - 1 : 0;
	memcpy(dst + l, s, n);
	dst[l + n] = '\0';
}

int
ch_url_parse(const char *url, struct ch_url *u, char *err, size_t cap)
{
	const char	*q, *p, *host, *at, *slash;
	size_t		 n;

	memset(u, 0, sizeof(*u));
	if (url == NULL || strlen(url) >= CH_URL_MAX - 16) {
		snprintf(err, cap, "sink URL missing or too long");
		return -EINVAL;
	}
	if (strncmp(url, "http://", 7) == 0)
		host = url + 7;
	else if (strncmp(url, "https://", 8) == 0)
		host = url + 8;
	else {
		snprintf(err, cap, "sink URL must start with http:// or "
		    "https:// (ClickHouse's HTTP port, 8123 by default): %s",
		    url);
		return -EINVAL;
	}
	q = strchr(url, '?');
	slash = strchr(host, '/');
	if (slash != NULL && q != NULL && slash > q)
		slash = NULL;
	n = (size_t)((slash ? slash : q ? q : host + strlen(host)) - host);
	if (n == 0 || host[0] == ':' || host[0] == '@') {
		snprintf(err, cap, "sink URL has no host: %s", url);
		return -EINVAL;
	}
	n = q ? (size_t)(q - url) : strlen(url);
	memcpy(u->base, url, n);
	u->base[n] = '\0';
	if (strchr(u->base + (host - url), '/') == NULL)
		append(u->base, sizeof(u->base), "/", 1);
	snprintf(u->db, sizeof(u->db), "sloptimize");
	for (p = q ? q + 1 : NULL; p != NULL && *p != '\0';) {
		const char	*amp = strchr(p, '&');
		size_t		 len = amp ? (size_t)(amp - p) : strlen(p);

		if (len > 9 && strncmp(p, "database=", 9) == 0) {
			if (!ident_ok(p + 9, len - 9)) {
				snprintf(err, cap, "sink URL: database must be "
				    "letters, digits and _ (at most %d)",
				    CH_DB_MAX - 1);
				return -EINVAL;
			}
			memcpy(u->db, p + 9, len - 9);
			u->db[len - 9] = '\0';
		} else if (len > 0) {
			if (u->params[0] != '\0')
				append(u->params, sizeof(u->params), "&", 1);
			append(u->params, sizeof(u->params), p, len);
		}
		p = amp ? amp + 1 : NULL;
	}
	/* What logs and status may show: no password, in either place. */
	at = strchr(host, '@');
	if (at != NULL && (slash == NULL || at < slash) &&
	    memchr(host, ':', (size_t)(at - host)) != NULL) {
		const char *colon = memchr(host, ':', (size_t)(at - host));

		append(u->shown, sizeof(u->shown), url, (size_t)(colon - url));
		append(u->shown, sizeof(u->shown), ":***", 4);
		append(u->shown, sizeof(u->shown), at, strlen(at));
	} else
		append(u->shown, sizeof(u->shown), url, strlen(url));
	{
		char	*pw = strstr(u->shown, "password=");

		if (pw != NULL) {
			char	*end = strchr(pw, '&');
			char	 rest[CH_URL_MAX];

			snprintf(rest, sizeof(rest), "%s", end ? end : "");
			snprintf(pw, sizeof(u->shown) - (size_t)(pw - u->shown),
			    "password=***%s", rest);
		}
	}
	return 0;
}

/*
 * Percent-encoding as curl_easy_escape does it (RFC 3986: everything but
 * the unreserved characters, as %XX in capitals), so that composing a URL
 * does not need libcurl loaded.
 */
static char *
url_escape(const char *s)
{
	static const char	 hex[] = "0123456789ABCDEF";
	size_t			 n = strlen(s), k = 0, i;
	char			*out;

	if ((out = malloc(3 * n + 1)) == NULL)
		return NULL;
	for (i = 0; i < n; i++) {
		unsigned char	c = (unsigned char)s[i];

		if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		    (c >= '0' && c <= '9') || c == '-' || c == '.' ||
		    c == '_' || c == '~')
			out[k++] = (char)c;
		else {
			out[k++] = '%';
			out[k++] = hex[c >> 4];
			out[k++] = hex[c & 15];
		}
	}
	out[k] = '\0';
	return out;
}

char *
ch_request_url(const struct ch_url *u, const char *stmt, const char *settings)
{
	char	*esc = NULL, *out;
	size_t	 n;

	if (stmt != NULL && (esc = url_escape(stmt)) == NULL)
		return NULL;
	n = strlen(u->base) + strlen(u->params) + (esc ? strlen(esc) : 0) +
	    (settings ? strlen(settings) : 0) + 16;
	if ((out = malloc(n)) != NULL) {
		snprintf(out, n, "%s?%s%s%s%s%s%s", u->base, u->params,
		    u->params[0] && (esc || (settings && *settings)) ? "&" : "",
		    esc ? "query=" : "", esc ? esc : "",
		    esc && settings && *settings ? "&" : "",
		    settings ? settings : "");
	}
	free(esc);
	return out;
}

/* --- buffers ---------------------------------------------------------- */

int
ch_buf_add(struct ch_buf *b, const void *data, size_t n)
{
	size_t	 need = b->len + n + 1, ncap;
	char	*np;

	if (b->max && b->len + n > b->max)
		return -E2BIG;
	if (need > b->cap) {
		ncap = b->cap ? b->cap : 4096;
		while (ncap < need)
			ncap *= 2;
		if ((np = realloc(b->p, ncap)) == NULL)
			return -ENOMEM;
		b->p = np;
		b->cap = ncap;
	}
	memcpy(b->p + b->len, data, n);
	b->len += n;
	b->p[b->len] = '\0';
	return 0;
}

void
ch_buf_free(struct ch_buf *b)
{
	free(b->p);
	b->p = NULL;
	b->len = b->cap = 0;
}

static size_t
on_body(char *data, size_t size, size_t nmemb, void *arg)
{
	struct ch_buf	*b = arg;

	if (ch_buf_add(b, data, size * nmemb) != 0)
		return 0;	/* curl stops the transfer: CURLE_WRITE_ERROR */
	return size * nmemb;
}

/* One line of ClickHouse's reason: its answers end in a stack or a
 * newline, and a status field wants a sentence. */
static void
reason_line(char *err, size_t cap, long status, const struct ch_buf *b)
{
	char	line[CH_ERR_MAX];
	size_t	n = 0;

	if (b->p != NULL)
		while (n < b->len && n < sizeof(line) - 1 && b->p[n] != '\n' &&
		    b->p[n] != '\r') {
			line[n] = b->p[n];
			n++;
		}
	line[n] = '\0';
	snprintf(err, cap, "ClickHouse answered %ld%s%s", status,
	    n ? ": " : "", line);
}

static int
ch_errno(CURLcode c)
{
	switch (c) {
	case CURLE_OK:				return 0;
	case CURLE_COULDNT_CONNECT:		return -ECONNREFUSED;
	case CURLE_OPERATION_TIMEDOUT:		return -ETIMEDOUT;
	case CURLE_COULDNT_RESOLVE_HOST:
	case CURLE_COULDNT_RESOLVE_PROXY:	return -EHOSTUNREACH;
	case CURLE_OUT_OF_MEMORY:		return -ENOMEM;
	case CURLE_WRITE_ERROR:			return -E2BIG;
	case CURLE_GOT_NOTHING:
	case CURLE_RECV_ERROR:
	case CURLE_SEND_ERROR:			return -ECONNRESET;
	default:				return -EIO;
	}
}

/* The options every request shares. */
static void
easy_setup(const struct lazycurl *cu, CURL *e, const char *url,
    const char *body, size_t len, long timeout_ms, struct ch_buf *out,
    char *errbuf)
{
	cu->easy_setopt(e, CURLOPT_URL, url);
	cu->easy_setopt(e, CURLOPT_POST, 1L);
	cu->easy_setopt(e, CURLOPT_POSTFIELDS, body ? body : "");
	cu->easy_setopt(e, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)len);
	cu->easy_setopt(e, CURLOPT_TIMEOUT_MS, timeout_ms);
	cu->easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS,
	    timeout_ms < 5000 ? timeout_ms : 5000L);
	cu->easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
	cu->easy_setopt(e, CURLOPT_WRITEFUNCTION, on_body);
	cu->easy_setopt(e, CURLOPT_WRITEDATA, out);
	cu->easy_setopt(e, CURLOPT_ERRORBUFFER, errbuf);
	cu->easy_setopt(e, CURLOPT_USERAGENT, "sloptimize/" SLOPTIMIZE_VERSION);
	/* no "Expect: 100-continue" round trip before large bodies */
	cu->easy_setopt(e, CURLOPT_EXPECT_100_TIMEOUT_MS, 0L);
	cu->easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http,https");
}

static int
easy_result(const struct lazycurl *cu, CURL *e, CURLcode cc,
    const char *errbuf, const struct ch_buf *b, char *err, size_t cap)
{
	long	status = 0;
	int	rc;

	if (cc != CURLE_OK) {
		rc = ch_errno(cc);
		snprintf(err, cap, "%s", errbuf[0] ? errbuf :
		    cu->easy_strerror(cc));
		return rc;
	}
	cu->easy_getinfo(e, CURLINFO_RESPONSE_CODE, &status);
	if (status != 200) {
		reason_line(err, cap, status, b);
		return -EPROTO;
	}
	if (cap > 0)
		err[0] = '\0';
	return 0;
}

int
ch_query(const struct ch_url *u, const char *sql, const char *settings,
    long timeout_ms, struct ch_buf *out, char *err, size_t cap)
{
	const struct lazycurl	*cu;
	char			 errbuf[CURL_ERROR_SIZE] = "", *url;
	CURL			*e;
	CURLcode		 cc;
	int			 rc;

	if ((rc = lazycurl_load(&cu, err, cap)) != 0)
		return rc;
	if ((url = ch_request_url(u, NULL, settings)) == NULL ||
	    (e = cu->easy_init()) == NULL) {
		free(url);
		snprintf(err, cap, "out of memory");
		return -ENOMEM;
	}
	easy_setup(cu, e, url, sql, strlen(sql), timeout_ms, out, errbuf);
	cc = cu->easy_perform(e);
	rc = easy_result(cu, e, cc, errbuf, out, err, cap);
	cu->easy_cleanup(e);
	free(url);
	return rc;
}

int
ch_query_all(const struct ch_url *u, const char *const *sql, int n,
    const char *settings, long timeout_ms, struct ch_buf *outs, char *err,
    size_t cap)
{
	const struct lazycurl	*cu;
	CURLM			*m;
	CURL			*e[8] = { NULL };
	char			 errbuf[8][CURL_ERROR_SIZE], *url;
	int			 i, running, rc = 0;

	if (n > 8)
		return -EINVAL;
	if ((rc = lazycurl_load(&cu, err, cap)) != 0)
		return rc;
	if ((url = ch_request_url(u, NULL, settings)) == NULL ||
	    (m = cu->multi_init()) == NULL) {
		free(url);
		snprintf(err, cap, "out of memory");
		return -ENOMEM;
	}
	for (i = 0; i < n; i++) {
		errbuf[i][0] = '\0';
		if ((e[i] = cu->easy_init()) == NULL) {
			rc = -ENOMEM;
			snprintf(err, cap, "out of memory");
			goto out;
		}
		easy_setup(cu, e[i], url, sql[i], strlen(sql[i]), timeout_ms,
		    &outs[i], errbuf[i]);
		cu->multi_add_handle(m, e[i]);
	}
	do {
		if (cu->multi_perform(m, &running) != CURLM_OK)
			break;
		if (running)
			cu->multi_poll(m, NULL, 0, 1000, NULL);
	} while (running);
	for (;;) {
		CURLMsg	*msg;
		int	 left;

		if ((msg = cu->multi_info_read(m, &left)) == NULL)
			break;
		if (msg->msg != CURLMSG_DONE || rc != 0)
			continue;
		for (i = 0; i < n; i++)
			if (e[i] == msg->easy_handle)
				rc = easy_result(cu, e[i], msg->data.result,
				    errbuf[i], &outs[i], err, cap);
	}
out:
	for (i = 0; i < n; i++)
		if (e[i] != NULL) {
			cu->multi_remove_handle(m, e[i]);
			cu->easy_cleanup(e[i]);
		}
	cu->multi_cleanup(m);
	free(url);
	return rc;
}

/* --- the loop side ---------------------------------------------------- */

struct ch_req {
	struct ch_req	*next;
	struct ch_client *c;
	CURL		*easy;
	char		*url;
	struct ch_buf	 resp;
	char		 errbuf[CURL_ERROR_SIZE];
	ch_done_fn	*done;
	void		*arg;
};

struct ch_sock {		/* one socket curl wants watched */
	uv_poll_t	 poll;
	curl_socket_t	 fd;
	struct ch_client *c;
	struct ch_sock	*next, **prevp;	/* the client's list */
};

struct ch_client {
	const struct lazycurl *cu;
	uv_loop_t	*loop;
	CURLM		*multi;
	uv_timer_t	 timer;
	struct ch_req	*reqs;
	struct ch_sock	*socks;
	unsigned	 busy;
	unsigned	 open_handles;	/* timer + polls not yet closed */
	int		 closing;
	void		(*closed)(void *);
	void		*closed_arg;
};

static void	client_check(struct ch_client *);
static void	client_free_maybe(struct ch_client *);

static void
req_finish(struct ch_req *r, int rc, const char *err)
{
	struct ch_client	*c = r->c;
	struct ch_req		**pp;

	for (pp = &c->reqs; *pp != NULL; pp = &(*pp)->next)
		if (*pp == r) {
			*pp = r->next;
			break;
		}
	c->busy--;
	c->cu->multi_remove_handle(c->multi, r->easy);
	c->cu->easy_cleanup(r->easy);
	r->done(r->arg, rc, err, r->resp.p ? r->resp.p : "", r->resp.len);
	ch_buf_free(&r->resp);
	free(r->url);
	free(r);
}

static void
client_check(struct ch_client *c)
{
	CURLMsg	*m;
	int	 left;

	while ((m = c->cu->multi_info_read(c->multi, &left)) != NULL) {
		struct ch_req	*r = NULL;
		char		 err[CH_ERR_MAX];
		int		 rc;

		if (m->msg != CURLMSG_DONE)
			continue;
		c->cu->easy_getinfo(m->easy_handle, CURLINFO_PRIVATE,
		    (char **)&r);
		rc = easy_result(c->cu, r->easy, m->data.result, r->errbuf, &r->resp,
		    err, sizeof(err));
		req_finish(r, rc, err);
	}
}

static void
on_timer(uv_timer_t *t)
{
	struct ch_client	*c = t->data;
	int			 running;

	c->cu->multi_socket_action(c->multi, CURL_SOCKET_TIMEOUT, 0,
	    &running);
	client_check(c);
}

static int
curl_timer_cb(CURLM *multi, long ms, void *arg)
{
	struct ch_client	*c = arg;

	(void)multi;
	if (ms < 0)
		uv_timer_stop(&c->timer);
	else
		uv_timer_start(&c->timer, on_timer, (uint64_t)ms, 0);
	return 0;
}

static void
on_poll(uv_poll_t *p, int status, int events)
{
	struct ch_sock		*s = p->data;
	struct ch_client	*c = s->c;
	int			 flags = 0, running;

	if (status < 0)
		flags = CURL_CSELECT_ERR;
	if (events & UV_READABLE)
		flags |= CURL_CSELECT_IN;
	if (events & UV_WRITABLE)
		flags |= CURL_CSELECT_OUT;
	c->cu->multi_socket_action(c->multi, s->fd, flags, &running);
	client_check(c);
}

static void
on_sock_closed(uv_handle_t *h)
{
	struct ch_sock		*s = h->data;
	struct ch_client	*c = s->c;

	free(s);
	c->open_handles--;
	client_free_maybe(c);
}

/* Unlink and close; freed in the close callback. */
static void
sock_close(struct ch_sock *s)
{
	if (s->prevp == NULL)
		return;		/* already closing */
	if (s->next != NULL)
		s->next->prevp = s->prevp;
	*s->prevp = s->next;
	s->prevp = NULL;
	uv_poll_stop(&s->poll);
	uv_close((uv_handle_t *)&s->poll, on_sock_closed);
}

static int
curl_socket_cb(CURL *e, curl_socket_t fd, int what, void *arg, void *sockp)
{
	struct ch_client	*c = arg;
	struct ch_sock		*s = sockp;
	int			 ev = 0;

	(void)e;
	if (what == CURL_POLL_REMOVE) {
		if (s != NULL) {
			sock_close(s);
			if (!c->closing)
				c->cu->multi_assign(c->multi, fd, NULL);
		}
		return 0;
	}
	if (c->closing)
		return 0;
	if (s == NULL) {
		if ((s = calloc(1, sizeof(*s))) == NULL)
			return -1;
		s->fd = fd;
		s->c = c;
		if (uv_poll_init_socket(c->loop, &s->poll, fd) != 0) {
			free(s);
			return -1;
		}
		s->poll.data = s;
		c->open_handles++;
		if ((s->next = c->socks) != NULL)
			s->next->prevp = &s->next;
		s->prevp = &c->socks;
		c->socks = s;
		c->cu->multi_assign(c->multi, fd, s);
	}
	if (what & CURL_POLL_IN)
		ev |= UV_READABLE;
	if (what & CURL_POLL_OUT)
		ev |= UV_WRITABLE;
	uv_poll_start(&s->poll, ev, on_poll);
	return 0;
}

int
ch_client_create(struct ch_client **out, uv_loop_t *loop, char *err,
    size_t cap)
{
	const struct lazycurl	*cu;
	struct ch_client	*c;
	int			 rc;

	*out = NULL;
	if ((rc = lazycurl_load(&cu, err, cap)) != 0)
		return rc;
	if ((c = calloc(1, sizeof(*c))) == NULL ||
	    (c->multi = cu->multi_init()) == NULL) {
		free(c);
		snprintf(err, cap, "out of memory");
		return -ENOMEM;
	}
	c->cu = cu;
	c->loop = loop;
	cu->multi_setopt(c->multi, CURLMOPT_SOCKETFUNCTION, curl_socket_cb);
	cu->multi_setopt(c->multi, CURLMOPT_SOCKETDATA, c);
	cu->multi_setopt(c->multi, CURLMOPT_TIMERFUNCTION, curl_timer_cb);
	cu->multi_setopt(c->multi, CURLMOPT_TIMERDATA, c);
	uv_timer_init(loop, &c->timer);
	c->timer.data = c;
	c->open_handles = 1;
	*out = c;
	return 0;
}

int
ch_client_post(struct ch_client *c, const char *url, const char *body,
    size_t len, long timeout_ms, ch_done_fn *done, void *arg)
{
	struct ch_req	*r;

	if (c->closing)
		return -ECANCELED;
	if ((r = calloc(1, sizeof(*r))) == NULL ||
	    (r->url = strdup(url)) == NULL ||
	    (r->easy = c->cu->easy_init()) == NULL) {
		if (r != NULL)
			free(r->url);
		free(r);
		return -ENOMEM;
	}
	r->c = c;
	r->done = done;
	r->arg = arg;
	r->resp.max = 64u << 20;
	easy_setup(c->cu, r->easy, r->url, body, len, timeout_ms, &r->resp,
	    r->errbuf);
	c->cu->easy_setopt(r->easy, CURLOPT_PRIVATE, r);
	if (c->cu->multi_add_handle(c->multi, r->easy) != CURLM_OK) {
		c->cu->easy_cleanup(r->easy);
		free(r->url);
		free(r);
		return -ENOMEM;
	}
	r->next = c->reqs;
	c->reqs = r;
	c->busy++;
	return 0;
}

unsigned
ch_client_busy(const struct ch_client *c)
{
	return c->busy;
}

static void
client_free_maybe(struct ch_client *c)
{
	if (!c->closing || c->open_handles > 0)
		return;
	if (c->closed != NULL)
		c->closed(c->closed_arg);
	free(c);
}

static void
on_timer_closed(uv_handle_t *h)
{
	struct ch_client	*c = h->data;

	c->open_handles--;
	client_free_maybe(c);
}

void
ch_client_close(struct ch_client *c, void (*closed)(void *), void *arg)
{
	if (c == NULL || c->closing)
		return;
	c->closing = 1;
	c->closed = closed;
	c->closed_arg = arg;
	while (c->reqs != NULL)
		req_finish(c->reqs, -ECANCELED, "cancelled: the sink is "
		    "closing");
	/* Kept-alive connections go with the multi handle; whatever socket
	 * curl did not tell us to forget is closed here. */
	c->cu->multi_cleanup(c->multi);
	c->multi = NULL;
	while (c->socks != NULL)
		sock_close(c->socks);
	uv_timer_stop(&c->timer);
	uv_close((uv_handle_t *)&c->timer, on_timer_closed);
}
