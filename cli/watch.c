/*
 * watch — `sloptimize watch`: a WebSocket client of the daemon's events
 * socket that prints one line per wake (DESIGN §9, §11), for an agent's
 * monitor or a terminal.
 *
 * The client runs libwebsockets on a libuv loop of its own: signals
 * (uv_signal) and the reconnect timer (uv_timer) then sit in the same loop
 * as the socket, with no signal-handler races and no polling.  The loop
 * ends by itself once SIGINT/SIGTERM has destroyed the lws context and
 * closed our two handles.
 *
 * Invariants:
 *   - a wake is printed at most once: only ids greater than the last
 *     printed one go out, whatever the daemon replays (watch_consume);
 *   - a lost connection is retried forever with backoff (100 ms doubling
 *     to 2 s), re-reading daemon.json each time since the daemon may come
 *     back on another port, and resumes with since=<last printed id>;
 *   - stderr hears once per outage that the daemon is unreachable, and
 *     once that it is back; stdout carries wake lines only.
 *
 * The pure parts (ids, addresses, daemon.json, reassembly, the protocol
 * consumer) come first and are tested in tests/cli/test_watch.c.
 */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>
#include <libwebsockets.h>
#include <uv.h>

#include "cli.h"
#include "verbs.h"
#include "watch.h"
#include "project/statedir.h"

/* --- wake ids --------------------------------------------------------- */

static int
parse_u64(const char *s, size_t n, uint64_t *out)
{
	uint64_t	v = 0;
	size_t		i;

	if (n == 0)
		return -EINVAL;
	for (i = 0; i < n; i++) {
		unsigned	d = (unsigned char)s[i] - '0';

		if (d > 9 || v > (UINT64_MAX - d) / 10)
			return -EINVAL;
		v = v * 10 + d;
	}
	*out = v;
	return 0;
}

int
watch_id_parse(const char *s, size_t n, struct watch_id *out)
{
	const char	*colon = memchr(s, ':', n);
	struct watch_id	 id;

	if (colon == NULL ||
	    parse_u64(s, (size_t)(colon - s), &id.gen) != 0 ||
	    parse_u64(colon + 1, n - (size_t)(colon - s) - 1, &id.off) != 0)
		return -EINVAL;
	*out = id;
	return 0;
}

int
watch_id_cmp(const struct watch_id *a, const struct watch_id *b)
{
	if (a->gen != b->gen)
		return a->gen < b->gen ? -1 : 1;
	if (a->off != b->off)
		return a->off < b->off ? -1 : 1;
	return 0;
}

void
watch_id_format(const struct watch_id *id, char *out, size_t cap)
{
	snprintf(out, cap, "%llu:%llu", (unsigned long long)id->gen,
	    (unsigned long long)id->off);
}

/* --- addresses -------------------------------------------------------- */

int
watch_url_parse(const char *url, struct watch_addr *out)
{
	const char	*p = url, *host, *hend, *port = NULL, *path;
	size_t		 hlen;
	uint64_t	 pv;
	int		 v6 = 0;

	memset(out, 0, sizeof(*out));
	if (strncmp(p, "wss://", 6) == 0 || strncmp(p, "https://", 8) == 0)
		return -EPROTONOSUPPORT;
	if (strncmp(p, "ws://", 5) == 0)
		p += 5;
	else if (strncmp(p, "http://", 7) == 0)
		p += 7;
	else if (strstr(p, "://") != NULL)
		return -EINVAL;

	path = p + strcspn(p, "/?#");
	if (*p == '[') {
		host = p + 1;
		if ((hend = memchr(host, ']', (size_t)(path - host))) == NULL)
			return -EINVAL;
		if (hend + 1 < path) {
			if (hend[1] != ':')
				return -EINVAL;
			port = hend + 2;
		}
		v6 = 1;
	} else {
		host = p;
		hend = memchr(p, ':', (size_t)(path - p));
		if (hend == NULL)
			hend = path;
		else
			port = hend + 1;
	}
	hlen = (size_t)(hend - host);
	if (hlen >= sizeof(out->host) || memchr(host, '@', hlen) != NULL)
		return -EINVAL;		/* no userinfo: nothing would use it */
	if (port != NULL) {
		if (parse_u64(port, (size_t)(path - port), &pv) != 0 ||
		    pv == 0 || pv > 65535)
			return -EINVAL;
		out->port = (int)pv;
	} else
		out->port = WATCH_DEFAULT_PORT;

	/*
	 * A daemon listening on the wildcard address is reached on loopback;
	 * connecting to 0.0.0.0 happens to work on Linux but not everywhere.
	 */
	if (hlen == 0 || (hlen == 7 && memcmp(host, "0.0.0.0", 7) == 0))
		strcpy(out->host, v6 ? "::1" : "127.0.0.1");
	else if (v6 && hlen == 2 && memcmp(host, "::", 2) == 0)
		strcpy(out->host, "::1");
	else
		memcpy(out->host, host, hlen);

	/* the query and fragment of a given URL are dropped: since= is ours */
	hlen = strcspn(path, "?#");
	if (hlen == 0 || (hlen == 1 && *path == '/'))
		snprintf(out->path, sizeof(out->path), "%s", WATCH_EVENTS_PATH);
	else if (hlen < sizeof(out->path))
		memcpy(out->path, path, hlen);
	else
		return -EINVAL;
	return 0;
}

void
watch_addr_format(const struct watch_addr *a, char *out, size_t cap)
{
	int	v6 = strchr(a->host, ':') != NULL;

	snprintf(out, cap, "ws://%s%s%s:%d%s", v6 ? "[" : "", a->host,
	    v6 ? "]" : "", a->port, a->path);
}

int
watch_daemon_json_parse(const char *text, size_t len, struct watch_addr *out,
    char *project, size_t pcap, const char **why)
{
	cJSON		*o = cJSON_ParseWithLength(text, len);
	const char	*url, *listen, *proj;
	int		 rc = -EINVAL;

	*why = NULL;
	if (project != NULL && pcap > 0)
		*project = '\0';
	if (!cJSON_IsObject(o)) {
		*why = "not a JSON object";
		goto out;
	}
	url = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o, "url"));
	listen = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o,
	    "listen"));
	proj = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o,
	    "project"));
	/* url says how to connect; listen is what was bound, as a fallback */
	if ((url == NULL || watch_url_parse(url, out) != 0) &&
	    (listen == NULL || watch_url_parse(listen, out) != 0)) {
		*why = "neither url nor listen is a usable address";
		goto out;
	}
	if (project != NULL && proj != NULL)
		snprintf(project, pcap, "%s", proj);
	rc = 0;
out:
	cJSON_Delete(o);
	return rc;
}

#define DAEMON_JSON_MAX	(64 * 1024)	/* it is a few dozen bytes */

int
watch_daemon_find(const char *project_abs, struct watch_addr *out,
    char *path, size_t cap, const char **why)
{
	char	dir[PATH_MAX], *buf;
	size_t	n;
	int	rc;

	*why = NULL;
	if ((rc = statedir_resolve(project_abs, NULL, dir, sizeof(dir))) != 0 ||
	    (rc = statedir_path(dir, "daemon.json", path, cap)) != 0)
		return rc;
	if ((buf = malloc(DAEMON_JSON_MAX)) == NULL)
		return -ENOMEM;
	if ((rc = statedir_read(path, buf, DAEMON_JSON_MAX, &n)) == 0)
		rc = watch_daemon_json_parse(buf, n, out, NULL, 0, why);
	free(buf);
	return rc;
}

/* --- messages --------------------------------------------------------- */

int
watch_msg_add(struct watch_msg *m, const void *p, size_t n)
{
	size_t	cap;
	char	*nb;

	if (m->oversized)
		return 0;
	if (n > WATCH_MSG_MAX - m->len) {
		m->oversized = 1;
		m->len = 0;
		return 0;
	}
	if (m->len + n + 1 > m->cap) {	/* +1: callers may NUL-terminate */
		cap = m->cap ? m->cap : 4096;
		while (cap < m->len + n + 1)
			cap *= 2;
		if ((nb = realloc(m->buf, cap)) == NULL)
			return -ENOMEM;
		m->buf = nb;
		m->cap = cap;
	}
	memcpy(m->buf + m->len, p, n);
	m->len += n;
	m->buf[m->len] = '\0';
	return 0;
}

void
watch_msg_reset(struct watch_msg *m)
{
	m->len = 0;
	m->oversized = 0;
}

void
watch_msg_free(struct watch_msg *m)
{
	free(m->buf);
	memset(m, 0, sizeof(*m));
}

size_t
watch_line_clean(char *line, size_t len)
{
	size_t	i;

	for (i = 0; i < len; i++)
		if ((unsigned char)line[i] < 0x20 || line[i] == 0x7f)
			line[i] = ' ';
	if (len > WATCH_LINE_MAX) {
		len = WATCH_LINE_MAX;
		/* back off continuation bytes so no character is cut in two */
		while (len > 0 && ((unsigned char)line[len] & 0xc0) == 0x80)
			len--;
	}
	line[len] = '\0';
	return len;
}

/* --- the protocol ----------------------------------------------------- */

static enum watch_action
print_wake(struct watch_state *st, const cJSON *o, FILE *out, FILE *err)
{
	const char	*line;
	char		*copy;
	size_t		 n;
	int		 rc;

	if (st->sink != NULL) {
		/* someone else delivers it (the MCP server's wait_for_wake) */
		if ((rc = st->sink(st->sink_arg, o)) < 0)
			return WATCH_OUT_FAILED;
		if (rc > 0)
			return WATCH_IGNORED;	/* not taken: last stays */
		st->printed++;
		return WATCH_PRINTED;
	}
	if (st->json) {
		/* reprinted, so that it is one line whatever the daemon sent */
		copy = cJSON_PrintUnformatted(o);
		if (copy == NULL)
			return WATCH_OUT_FAILED;
		rc = fprintf(out, "%s\n", copy);
		free(copy);
	} else {
		line = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o,
		    "line"));
		if (line == NULL) {
			st->bad++;
			fprintf(err, "sloptimize watch: a wake without a line, "
			    "skipped\n");
			return WATCH_BAD;
		}
		n = strlen(line);
		if ((copy = malloc(n + 1)) == NULL)
			return WATCH_OUT_FAILED;
		memcpy(copy, line, n + 1);
		n = watch_line_clean(copy, n);
		rc = fprintf(out, "%s\n", copy);
		free(copy);
	}
	/* a monitor acts on lines as they come: never sit in a buffer */
	if (rc < 0 || fflush(out) != 0)
		return WATCH_OUT_FAILED;
	st->printed++;
	return WATCH_PRINTED;
}

static void
on_hello(struct watch_state *st, const cJSON *o, FILE *err)
{
	const cJSON	*g = cJSON_GetObjectItemCaseSensitive(o, "generation");
	const cJSON	*c = cJSON_GetObjectItemCaseSensitive(o, "cursor");
	uint64_t	 gen;
	char		 was[48];

	if (!cJSON_IsNumber(g) || g->valuedouble < 0)
		return;
	gen = (uint64_t)g->valuedouble;
	/* before its start-up fold is done ("ready": false) the daemon may
	 * not know its generation yet: no verdict on a reset from that */
	if (st->have_resume && gen < st->resume.gen &&
	    !cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(o, "ready"))) {
		watch_id_format(&st->resume, was, sizeof(was));
		fprintf(err, "sloptimize watch: the daemon is at generation "
		    "%llu, before id %s: its state was reset, so its ids start "
		    "over; printing its wakes from now on\n",
		    (unsigned long long)gen, was);
		st->have_last = st->have_resume = 0;
		st->resets++;
	}
	/*
	 * The cursor is 0 or just past a '\n', and a wake's offset is the
	 * first byte of its line, so "ids after gen:cursor-1" is exactly "the
	 * lines from the cursor on".  At cursor 0 that is "gen:-1", the whole
	 * generation.  From a daemon that does not say, we resume without
	 * since: live only.
	 */
	if (!st->have_resume && cJSON_IsNumber(c) && c->valuedouble >= 0) {
		st->resume.gen = gen;
		st->resume_all = c->valuedouble < 1;
		st->resume.off = st->resume_all ? 0 :
		    (uint64_t)c->valuedouble - 1;
		st->have_resume = 1;
	}
}

/*
 * A wake from an older generation than one already printed.  The daemon
 * replays only ids after our since, so this is not a replay: its ids went
 * backwards (its state was reset, or it restarted without its
 * generation).  Holding to the last id would silence every wake until the
 * new ids overtake the old ones, which may be never; say so and start
 * over from this one.
 */
static enum watch_action
backwards(struct watch_state *st, const cJSON *o, const struct watch_id *id,
    FILE *out, FILE *err)
{
	enum watch_action	a;
	char			now[48], was[48];

	watch_id_format(id, now, sizeof(now));
	watch_id_format(&st->last, was, sizeof(was));
	fprintf(err, "sloptimize watch: the daemon's wake ids went back (%s "
	    "after %s): its state was reset; printing its wakes from here "
	    "on\n", now, was);
	st->resets++;
	if ((a = print_wake(st, o, out, err)) == WATCH_PRINTED) {
		st->last = st->resume = *id;
		st->have_last = st->have_resume = 1;
	}
	return a;
}

/*
 * The daemon cannot give the wakes after our id any more (perf.jsonl was
 * replaced or cut short): a line on stdout says so, since the monitor
 * missed something, and the watch resumes where the daemon says.
 */
static enum watch_action
on_gap(struct watch_state *st, const cJSON *o, FILE *out, FILE *err)
{
	const char	*after, *resume, *why;
	const cJSON	*lost = cJSON_GetObjectItemCaseSensitive(o, "lost");
	char		 line[WATCH_LINE_MAX + 1], n[32], *copy;
	struct watch_id	 id;
	size_t		 len;
	int		 rc;

	after = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o,
	    "after"));
	resume = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o,
	    "resume"));
	why = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o,
	    "reason"));
	if (after == NULL || resume == NULL) {
		st->bad++;
		fprintf(err, "sloptimize watch: a gap message without ids, "
		    "skipped\n");
		return WATCH_BAD;
	}
	if (cJSON_IsNumber(lost) && lost->valuedouble >= 0)
		snprintf(n, sizeof(n), "%.0f", lost->valuedouble);
	else
		snprintf(n, sizeof(n), "an unknown number of");
	if (st->json) {
		if ((copy = cJSON_PrintUnformatted(o)) == NULL)
			return WATCH_OUT_FAILED;
		rc = fprintf(out, "%s\n", copy);
		free(copy);
	} else {
		snprintf(line, sizeof(line), "sloptimize gap: %s wakes after "
		    "id=%s cannot be replayed (%s); resuming after id=%s", n,
		    after, why ? why : "the daemon no longer has them", resume);
		len = watch_line_clean(line, strlen(line));
		rc = fprintf(out, "%.*s\n", (int)len, line);
	}
	if (rc < 0 || fflush(out) != 0)
		return WATCH_OUT_FAILED;
	st->gaps++;
	/* the daemon carries on after `resume`: "<gen>:-1" (every wake of
	 * that generation is still to come) or an id */
	len = strlen(resume);
	if (len > 3 && len < 30 && strcmp(resume + len - 3, ":-1") == 0) {
		char	g[32];

		snprintf(g, sizeof(g), "%.*s:0", (int)(len - 3), resume);
		if (watch_id_parse(g, strlen(g), &id) == 0) {
			st->resume = id;
			st->resume_all = st->have_resume = 1;
		}
	} else if (watch_id_parse(resume, len, &id) == 0 &&
	    (!st->have_resume || watch_id_cmp(&id, &st->resume) > 0)) {
		st->resume = id;
		st->resume_all = 0;
		st->have_resume = 1;
	}
	return WATCH_PRINTED;
}

enum watch_action
watch_consume(struct watch_state *st, const char *msg, size_t len, FILE *out,
    FILE *err)
{
	cJSON			*o = cJSON_ParseWithLength(msg, len);
	const char		*type, *ids;
	const cJSON		*idv, *cnt;
	struct watch_id		 id;
	enum watch_action	 a = WATCH_IGNORED;

	if (!cJSON_IsObject(o) || (type = cJSON_GetStringValue(
	    cJSON_GetObjectItemCaseSensitive(o, "type"))) == NULL) {
		st->bad++;
		fprintf(err, "sloptimize watch: a message that is not a JSON "
		    "object with a type (%zu bytes), skipped\n", len);
		cJSON_Delete(o);
		return WATCH_BAD;
	}
	if (strcmp(type, "hello") == 0)
		on_hello(st, o, err);
	else if (strcmp(type, "dropped") == 0) {
		cnt = cJSON_GetObjectItemCaseSensitive(o, "count");
		if (cJSON_IsNumber(cnt) && cnt->valuedouble > 0)
			st->dropped += (uint64_t)cnt->valuedouble;
		/* a daemon that names what it dropped drops only the panel's
		 * "record" messages (it paces wakes); an older one dropped
		 * wakes too, and they are had back by resuming at once */
		if (cJSON_GetObjectItemCaseSensitive(o, "what") == NULL)
			a = WATCH_RESYNC;
	} else if (strcmp(type, "gap") == 0)
		a = on_gap(st, o, out, err);
	else if (strcmp(type, "wake") == 0) {
		idv = cJSON_GetObjectItemCaseSensitive(o, "id");
		if (idv == NULL || cJSON_IsNull(idv))
			a = print_wake(st, o, out, err);
		else if ((ids = cJSON_GetStringValue(idv)) == NULL ||
		    watch_id_parse(ids, strlen(ids), &id) != 0) {
			st->bad++;
			fprintf(err, "sloptimize watch: a wake with a malformed "
			    "id, skipped\n");
			a = WATCH_BAD;
		} else if (st->have_last && id.gen < st->last.gen)
			a = backwards(st, o, &id, out, err);
		else if (st->have_last && watch_id_cmp(&id, &st->last) <= 0)
			st->duplicates++;
		else if ((a = print_wake(st, o, out, err)) ==
		    WATCH_PRINTED) {
			st->last = st->resume = id;
			st->have_last = st->have_resume = 1;
			st->resume_all = 0;
		}
	}
	/* "record" and types from newer daemons are not ours to print */
	cJSON_Delete(o);
	return a;
}

/* --- the client ------------------------------------------------------- */

#define BACKOFF_MIN_MS	100
#define BACKOFF_MAX_MS	2000

static void	attempt(struct watch_client *w);

/* A status line: to w->log when there is one; the last is kept in
 * w->said for a caller without a log. */
static void
say(struct watch_client *w, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void
say(struct watch_client *w, const char *fmt, ...)
{
	va_list	ap;

	va_start(ap, fmt);
	vsnprintf(w->said, sizeof(w->said), fmt, ap);
	va_end(ap);
	if (w->log != NULL)
		fprintf(w->log, "sloptimize watch: %s\n", w->said);
}

static void
on_retry(uv_timer_t *t)
{
	attempt(t->data);
}

static void
retry_in(struct watch_client *w, uint64_t ms)
{
	if (!w->stopping)
		uv_timer_start(&w->retry, on_retry, ms, 0);
}

/* Back off: 100 ms, doubling, at most 2 s. */
static void
retry_later(struct watch_client *w)
{
	retry_in(w, w->backoff_ms);
	w->backoff_ms = w->backoff_ms * 2 > BACKOFF_MAX_MS ? BACKOFF_MAX_MS :
	    w->backoff_ms * 2;
}

/* The attempt or connection in flight is over, for `why`. */
static void
lost(struct watch_client *w, const char *why)
{
	if (!w->live)
		return;		/* lws may report one failure twice */
	w->live = 0;
	w->connected = 0;
	w->wsi = NULL;
	watch_msg_reset(&w->msg);
	if (w->stopping)
		return;
	if (w->resync) {
		w->resync = 0;
		retry_in(w, 0);
		return;
	}
	if (!w->said_down) {
		if (strncmp(why, "refused", 7) == 0)
			say(w, "daemon at %s %s; retrying", w->where, why);
		else
			say(w, "daemon at %s unreachable (%s), retrying",
			    w->where, why);
		w->said_down = 1;
	}
	retry_later(w);
}

/*
 * Why the daemon answered the upgrade with something else than 101: its
 * `sloptimize-refused` header says it in words (a 65th subscriber: "too_
 * many_subscribers: 64 subscribers are connected, the most this daemon
 * takes (max-subscribers 64)"), else the status.  NULL when the attempt
 * failed before any answer.
 */
static const char *
refusal(struct lws *wsi, char *buf, size_t cap)
{
	char		said[256];
	unsigned	status = wsi ? lws_http_client_http_response(wsi) : 0;

	if (status == 0 || status == 101)
		return NULL;
	if (lws_hdr_custom_copy(wsi, said, sizeof(said), "sloptimize-refused:",
	    19) > 0)
		snprintf(buf, cap, "refused the events socket (HTTP %u, %s)",
		    status, said);
	else
		snprintf(buf, cap, "refused the events socket (HTTP %u)",
		    status);
	return buf;
}

/* A fatal error inside an lws callback: the owner hears of it on the
 * next turn of the loop, outside lws. */
static void
on_fatal_timer(uv_timer_t *t)
{
	struct watch_client	*w = t->data;

	if (w->fatal != NULL)
		w->fatal(w, w->rc);
}

static void
fatal_soon(struct watch_client *w, int rc)
{
	w->stopping = 1;
	w->rc = rc;
	uv_timer_start(&w->retry, on_fatal_timer, 0, 0);
}

/* Where to connect now: --daemon, or daemon.json read afresh. */
static int
locate(struct watch_client *w)
{
	char		 file[PATH_MAX + 16];
	const char	*why;
	int		 rc;

	if (w->daemon_url != NULL) {
		rc = watch_url_parse(w->daemon_url, &w->addr);
		watch_addr_format(&w->addr, w->where, sizeof(w->where));
		return rc;
	}
	rc = watch_daemon_find(w->project, &w->addr, file, sizeof(file), &why);
	if (rc == 0) {
		watch_addr_format(&w->addr, w->where, sizeof(w->where));
		return 0;
	}
	if (rc == -ENOENT && !w->said_hint) {
		say(w, "no daemon serves %s yet (no %s); start one with "
		    "'sloptimized --project %s' or pass --daemon URL; waiting "
		    "for it", w->project, file, w->project);
		w->said_hint = w->said_down = 1;
	} else if (rc != -ENOENT && !w->said_down) {
		say(w, "cannot use %s (%s), retrying", file, why ? why :
		    strerror(-rc));
		w->said_down = 1;
	}
	return rc;
}

static void
attempt(struct watch_client *w)
{
	struct lws_client_connect_info	 ci;
	char				 since[48];
	int				 v6;

	if (w->stopping)
		return;
	if (locate(w) != 0) {
		retry_later(w);
		return;
	}
	v6 = strchr(w->addr.host, ':') != NULL;
	snprintf(w->host, sizeof(w->host), "%s%s%s:%d", v6 ? "[" : "",
	    w->addr.host, v6 ? "]" : "", w->addr.port);
	if (w->st->have_resume && w->st->resume_all) {
		snprintf(since, sizeof(since), "%llu:-1",
		    (unsigned long long)w->st->resume.gen);
		snprintf(w->path, sizeof(w->path), "%s?since=%s", w->addr.path,
		    since);
	} else if (w->st->have_resume) {
		watch_id_format(&w->st->resume, since, sizeof(since));
		snprintf(w->path, sizeof(w->path), "%s?since=%s", w->addr.path,
		    since);
	} else
		snprintf(w->path, sizeof(w->path), "%s", w->addr.path);

	memset(&ci, 0, sizeof(ci));
	ci.context = w->lws;
	ci.address = w->addr.host;
	ci.port = w->addr.port;
	ci.path = w->path;
	ci.host = w->host;
	/* no Origin: we are not a browser, and the daemon's origin check is
	 * for browsers */
	ci.protocol = NULL;
	ci.local_protocol_name = "sloptimize-watch";
	ci.ietf_version_or_minus_one = -1;
	ci.userdata = w;
	ci.pwsi = &w->wsi;
	w->live = 1;
	if (lws_client_connect_via_info(&ci) == NULL)
		lost(w, "cannot start a connection");
}

/*
 * Is this callback about the attempt in flight?  A paused client may
 * start again while the connection it dropped is still being torn down;
 * that one's callbacks must not end the new attempt.  pwsi turns NULL
 * when an attempt fails early, so NULL matches too.
 */
static int
current(const struct watch_client *w, const struct lws *wsi)
{
	return w->wsi == NULL || w->wsi == wsi;
}

static int
on_lws(struct lws *wsi, enum lws_callback_reasons reason, void *user,
    void *in, size_t len)
{
	struct watch_client	*w = lws_context_user(lws_get_context(wsi));
	char			 id[48];
	enum watch_action	 a;

	(void)user;
	switch (reason) {
	case LWS_CALLBACK_CLIENT_CONNECTION_ERROR:
		if (current(w, wsi)) {
			char		 buf[384];
			const char	*why = refusal(wsi, buf, sizeof(buf));

			lost(w, why ? why : in ? (const char *)in :
			    "connection failed");
		}
		break;
	case LWS_CALLBACK_CLIENT_ESTABLISHED:
		if (w->stopping || !current(w, wsi))
			return -1;	/* paused meanwhile: not wanted */
		w->backoff_ms = BACKOFF_MIN_MS;
		if (w->said_down && w->ever) {
			if (w->st->have_last)
				watch_id_format(&w->st->last, id, sizeof(id));
			say(w, "reconnected to %s%s%s", w->where,
			    w->st->have_last ? ", resuming after id " : "",
			    w->st->have_last ? id : "");
		} else if (!w->ever)
			say(w, "connected to %s", w->where);
		w->said_down = 0;
		w->ever = w->connected = 1;
		watch_msg_reset(&w->msg);
		break;
	case LWS_CALLBACK_CLIENT_RECEIVE:
		if (w->stopping || !current(w, wsi))
			return -1;
		if (lws_frame_is_binary(wsi))
			break;		/* the protocol is text only */
		if (watch_msg_add(&w->msg, in, len) != 0) {
			say(w, "out of memory");
			fatal_soon(w, -ENOMEM);
			return -1;
		}
		if (!lws_is_final_fragment(wsi))
			break;
		if (w->msg.oversized) {
			say(w, "a message over %d bytes, skipped",
			    WATCH_MSG_MAX);
			w->st->bad++;
			watch_msg_reset(&w->msg);
			break;
		}
		a = watch_consume(w->st, w->msg.buf, w->msg.len, w->out,
		    w->log ? w->log : w->quiet);
		watch_msg_reset(&w->msg);
		if (a == WATCH_OUT_FAILED) {
			/* the reader went away (EPIPE): nobody to wake */
			say(w, "cannot deliver a wake (%s), stopping",
			    strerror(errno));
			fatal_soon(w, -EPIPE);
			return -1;
		}
		if (a == WATCH_RESYNC) {
			say(w, "the daemon dropped messages for us; "
			    "reconnecting to replay them");
			w->resync = 1;
			return -1;	/* closes; lost() reconnects at once */
		}
		break;
	case LWS_CALLBACK_CLIENT_CLOSED:
		if (current(w, wsi))
			lost(w, "connection closed");
		break;
	case LWS_CALLBACK_CLOSED_CLIENT_HTTP:
	case LWS_CALLBACK_WSI_DESTROY:
		/*
		 * A daemon killed between accepting us and answering the
		 * upgrade ends the attempt with neither CONNECTION_ERROR nor
		 * CLIENT_CLOSED: without this the watch would wait forever.
		 * Only the attempt in flight counts, not an older wsi going.
		 */
		if (current(w, wsi))
			lost(w, "connection closed");
		break;
	default:
		break;
	}
	return 0;
}

static const struct lws_protocols protocols[] = {
	{ "sloptimize-watch", on_lws, 0, 0, 0, NULL, 0 },
	{ NULL, NULL, 0, 0, 0, NULL, 0 }	/* no LWS_PROTOCOL_LIST_TERM in 4.1 */
};

/*
 * Ping an idle connection, rarely.  A daemon that dies closes its socket
 * and the watch knows at once; only one that is stopped (SIGSTOP, a
 * suspended VM) keeps it open, and without a ping the watch would wait on
 * it forever instead of saying so.  Nothing is lost while it waits (a
 * stopped daemon sends nothing, and what comes after is resumed), so
 * noticing within a few minutes is enough, and each ping wakes both
 * processes: after 5 minutes of silence, given up 30 s later without an
 * answer (docs/cli-watch.md).  lws answers pings on the server side by
 * itself.
 */
static const lws_retry_bo_t idle_policy = {
	.secs_since_valid_ping = 300,
	.secs_since_valid_hangup = 330,
};

int
watch_client_open(struct watch_client *w, uv_loop_t *loop)
{
	struct lws_context_creation_info	 info;
	void					*loops[1] = { loop };

	uv_timer_init(loop, &w->retry);
	w->retry.data = w;
	if (w->quiet == NULL && w->log == NULL &&
	    (w->quiet = fopen("/dev/null", "w")) == NULL)
		w->quiet = stderr;
	lws_set_log_level(0, NULL);	/* our own messages say what matters */
	memset(&info, 0, sizeof(info));
	info.port = CONTEXT_PORT_NO_LISTEN;
	info.protocols = protocols;
	info.options = LWS_SERVER_OPTION_LIBUV;
	info.foreign_loops = loops;
	info.user = w;
	info.pcontext = &w->lws;
	info.retry_and_idle_policy = &idle_policy;
	info.fd_limit_per_thread = 1 + 1 + 1 + 2;	/* and one dying */
	if ((w->lws = lws_create_context(&info)) == NULL) {
		say(w, "cannot start libwebsockets on libuv (is "
		    "libwebsockets-evlib-uv installed?)");
		uv_close((uv_handle_t *)&w->retry, NULL);
		return -ENOTSUP;
	}
	w->stopping = 1;	/* until started */
	return 0;
}

void
watch_client_start(struct watch_client *w)
{
	w->stopping = 0;
	w->resync = 0;
	w->said_down = w->said_hint = 0;
	w->backoff_ms = BACKOFF_MIN_MS;
	w->rc = 0;
	if (!w->live)
		attempt(w);
}

void
watch_client_pause(struct watch_client *w)
{
	w->stopping = 1;
	uv_timer_stop(&w->retry);
	if (w->wsi != NULL)
		/* closed on lws's next service, never under its feet */
		lws_set_timeout(w->wsi, PENDING_TIMEOUT_CLOSE_SEND,
		    LWS_TO_KILL_ASYNC);
	w->wsi = NULL;
	w->live = 0;
	w->connected = 0;
	watch_msg_reset(&w->msg);
}

void
watch_client_close(struct watch_client *w)
{
	if (w->torn)
		return;
	w->torn = w->stopping = 1;
	uv_timer_stop(&w->retry);
	lws_context_destroy(w->lws);	/* the first of two stages */
	uv_close((uv_handle_t *)&w->retry, NULL);
}

void
watch_client_free(struct watch_client *w)
{
	/*
	 * On a foreign loop lws_context_destroy() has two stages: the one in
	 * watch_client_close() closes lws's handles, which the loop has run
	 * out by now; this one frees the context (pcontext has turned NULL
	 * if it already has).
	 */
	if (w->lws != NULL) {
		lws_context_destroy(w->lws);
		w->lws = NULL;
	}
	if (w->quiet != NULL && w->quiet != stderr)
		fclose(w->quiet);
	w->quiet = NULL;
	watch_msg_free(&w->msg);
}

/* --- the verb --------------------------------------------------------- */

static const char watch_usage[] =
"usage: sloptimize watch [--project DIR] [--daemon URL] [--since ID] [--json]\n"
"Print one line per wake event of the daemon serving the project, as it\n"
"happens: the monitor of a coding agent.  Runs until SIGINT or SIGTERM.\n"
"  --project DIR  the game project (default .); its daemon is found\n"
"                 through daemon.json in the daemon's state directory\n"
"  --daemon URL   connect here instead (ws://127.0.0.1:7567, or http://…)\n"
"  --since ID     print only wakes after this id (gen:offset), replaying\n"
"                 those the daemon still has\n"
"  --json         print each wake message whole, one JSON object a line\n"
"A lost daemon is retried forever; wakes are resumed, never repeated.\n";

struct watch_cmd {
	uv_loop_t		 loop;
	uv_signal_t		 sigint, sigterm;
	struct watch_client	 w;
	struct watch_state	 st;
	int			 rc;
};

static void
watch_cmd_stop(struct watch_cmd *c, int rc)
{
	c->rc = rc;
	watch_client_close(&c->w);
	uv_close((uv_handle_t *)&c->sigint, NULL);
	uv_close((uv_handle_t *)&c->sigterm, NULL);
}

static void
on_signal(uv_signal_t *s, int signum)
{
	(void)signum;
	watch_cmd_stop(s->data, EXIT_OK);
}

static void
on_fatal(struct watch_client *w, int rc)
{
	(void)rc;
	watch_cmd_stop(w->data, EXIT_FINDINGS);
}

int
verb_watch(int argc, char **argv)
{
	struct watch_cmd	 cmd;
	struct watch_client	*w = &cmd.w;
	struct watch_addr	 probe;
	const char		*project, *since = NULL;
	char			 real[PATH_MAX];
	struct cli_common	 c;
	struct cli_opt		 opts[] = {
		{ "daemon", OPT_ARG, &w->daemon_url },
		{ "since", OPT_ARG, &since },
		{ NULL, 0, NULL }
	};
	int			 rc;

	memset(&cmd, 0, sizeof(cmd));
	if ((rc = cli_parse(argc, argv, opts, &c, watch_usage, NULL,
	    NULL)) >= 0)
		return rc;
	cmd.st.json = c.json;
	project = c.project;
	if (since != NULL) {
		if (watch_id_parse(since, strlen(since), &cmd.st.last) != 0) {
			fprintf(stderr, "sloptimize watch: --since takes a wake "
			    "id, <generation>:<offset>, not '%s'\n", since);
			return EXIT_USAGE;
		}
		cmd.st.resume = cmd.st.last;
		cmd.st.have_last = cmd.st.have_resume = 1;
	}
	if (w->daemon_url != NULL &&
	    (rc = watch_url_parse(w->daemon_url, &probe)) != 0) {
		fprintf(stderr, "sloptimize watch: --daemon %s: %s\n",
		    w->daemon_url, rc == -EPROTONOSUPPORT ? "the daemon speaks "
		    "plain ws:// (TLS is not supported)" : "not a ws:// or "
		    "http:// address");
		return EXIT_USAGE;
	}
	if (realpath(project, real) == NULL) {
		fprintf(stderr, "sloptimize watch: --project %s: %s\n",
		    project, strerror(errno));
		return EXIT_USAGE;
	}
	w->project = real;
	w->st = &cmd.st;
	w->out = stdout;
	w->log = stderr;
	w->fatal = on_fatal;
	w->data = &cmd;
	if ((rc = uv_loop_init(&cmd.loop)) != 0) {
		fprintf(stderr, "sloptimize watch: %s\n", uv_strerror(rc));
		return EXIT_FINDINGS;
	}
	if (watch_client_open(w, &cmd.loop) != 0) {
		uv_run(&cmd.loop, UV_RUN_DEFAULT);
		uv_loop_close(&cmd.loop);
		watch_client_free(w);
		return EXIT_FINDINGS;
	}
	uv_signal_init(&cmd.loop, &cmd.sigint);
	uv_signal_init(&cmd.loop, &cmd.sigterm);
	cmd.sigint.data = cmd.sigterm.data = &cmd;
	uv_signal_start(&cmd.sigint, on_signal, SIGINT);
	uv_signal_start(&cmd.sigterm, on_signal, SIGTERM);
	watch_client_start(w);
	/* the loop ends by itself once a signal or a fatal error has closed
	 * the client and our handles */
	uv_run(&cmd.loop, UV_RUN_DEFAULT);
	watch_client_free(w);
	uv_run(&cmd.loop, UV_RUN_DEFAULT);
	if ((rc = uv_loop_close(&cmd.loop)) != 0)
		fprintf(stderr, "sloptimize watch: loop not empty at exit: %s\n",
		    uv_strerror(rc));
	return cmd.rc;
}
