/*
 * server — libwebsockets on the daemon's libuv loop (see server.h).
 *
 * A subscriber never slows the daemon down, and never loses a wake.  It
 * is in one of two modes:
 *
 *   live         every wake is queued for it as it happens, and written
 *                when its socket is writable;
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
 * SERVER_REPLAY_JOBS chunks in flight) however far behind a client is,
 * and a reader gets every wake once, in id order, paced by its own
 * reading.  `record` messages (the panel's live incidents) are not kept:
 * the ones a catching-up client misses are counted and said in one
 * `dropped` message when it is live again.  What the file no longer has
 * (a new generation replaced it) is said in a `gap` message.
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
#include "daemon/replay.h"
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
	int		 live;		/* else catching up */
	int		 waiting;	/* resuming before the fold is done */
	/* every wake with an id up to here has been queued for it */
	uint64_t	 pos_gen, pos_off;
	int		 pos_none;	/* nothing of pos_gen yet (":-1") */
	int		 lost_known;	/* for a gap: how many wakes are lost, */
	uint64_t	 lost;		/* when that can be known */
	struct replay_job *job;		/* a chunk being re-made for it */
	struct sub	*jnext;		/* in the server's job queue */
	int		 in_jobq;
	uint64_t	 skipped;	/* record messages missed catching up */
};

/* Per connection: HTTP request state (daemon/http.h) or a subscriber. */
struct pss {
	struct sub		*sub;
	struct http_request	 req;
	char			 since[64];	/* ?since= of the upgrade */
	int			 has_since;
};

static void	sub_pump(struct server *, struct sub *);

/* A decimal number at s, up to *end; -1 unless digits that fit. */
static int
since_number(const char *s, char **end, uint64_t *v)
{
	if (*s < '0' || *s > '9')
		return -1;
	errno = 0;
	*v = strtoull(s, end, 10);
	return errno == ERANGE ? -1 : 0;	/* not UINT64_MAX, silently */
}

int
server_since_parse(const char *s, uint64_t *gen, uint64_t *off, int *none)
{
	char	*end;

	*none = 0;
	*gen = *off = 0;
	if (since_number(s, &end, gen) || *end != ':')
		return -1;
	s = end + 1;
	if (strcmp(s, "-1") == 0) {
		*none = 1;
		return 0;
	}
	return since_number(s, &end, off) || *end != '\0' ? -1 : 0;
}

/* Is gen:off after the subscriber's position? */
static int
after_pos(const struct sub *u, uint64_t gen, uint64_t off)
{
	if (gen != u->pos_gen)
		return gen > u->pos_gen;
	return u->pos_none || off > u->pos_off;
}

static void
pos_set(struct sub *u, uint64_t gen, uint64_t off)
{
	u->pos_gen = gen;
	u->pos_off = off;
	u->pos_none = 0;
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

/* Queue one message, whatever the bounds: callers check them. */
static int
sub_queue(struct sub *u, const char *json, size_t len)
{
	struct msg	*m;

	if ((m = msg_new(json, len)) == NULL) {
		log_warnx("events: out of memory queueing a message");
		return -ENOMEM;
	}
	if (u->tail)
		u->tail->next = m;
	else
		u->head = m;
	u->tail = m;
	u->qlen++;
	u->qbytes += len;
	lws_callback_on_writable(u->wsi);
	return 0;
}

static int
sub_full(const struct sub *u, size_t len)
{
	return u->qlen >= SERVER_SUB_MAX_MSGS ||
	    u->qbytes + len > SERVER_SUB_MAX_BYTES;
}

/*
 * A live subscriber stopped reading and its queue is at its bound: keep
 * what is queued, queue nothing more as it happens, and feed it from the
 * ring and the file once it reads again.
 */
static void
sub_fall_behind(struct server *s, struct sub *u)
{
	u->live = 0;
	s->behind++;
	log_info("events: a subscriber is %zu messages behind; it gets the "
	    "rest from the replay ring and perf.jsonl as it reads", u->qlen);
}

/* Back to live: say what it missed that is not kept anywhere. */
static void
sub_go_live(struct server *s, struct sub *u)
{
	char	note[96];
	int	n;

	u->live = 1;
	if (u->skipped == 0)
		return;
	n = snprintf(note, sizeof(note), "{\"type\":\"dropped\",\"count\":%llu,"
	    "\"what\":\"record\"}", (unsigned long long)u->skipped);
	s->dropped += u->skipped;
	u->skipped = 0;
	(void)sub_queue(u, note, (size_t)n);
}

void
server_broadcast(struct server *s, const char *json, size_t len)
{
	struct sub	*u;

	for (u = s->subs; u != NULL; u = u->next) {
		if (u->waiting)
			continue;
		if (u->live && sub_full(u, len))
			sub_fall_behind(s, u);
		if (u->live)
			(void)sub_queue(u, json, len);
		else
			u->skipped++;
	}
}

/* --- the ring ------------------------------------------------------------ */

static const struct ring_entry *
ring_at(const struct server *s, size_t i)
{
	return &s->ring[(s->ring_head + i) % SERVER_RING];
}

/* Index of the first entry after the subscriber's position (ids in the
 * ring only grow), or ring_len. */
static size_t
ring_find(const struct server *s, const struct sub *u)
{
	size_t	lo = 0, hi = s->ring_len, mid;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (after_pos(u, ring_at(s, mid)->gen, ring_at(s, mid)->off))
			hi = mid;
		else
			lo = mid + 1;
	}
	return lo;
}

static void
ring_free(struct server *s)
{
	size_t	i;

	for (i = 0; i < s->ring_len; i++)
		free(s->ring[(s->ring_head + i) % SERVER_RING].json);
	s->ring_head = s->ring_len = 0;
}

void
server_wake(struct server *s, uint64_t gen, uint64_t off, const char *json,
    size_t len)
{
	struct ring_entry	*e;
	struct sub		*u;
	char			*copy;

	/* a summary of an older generation's records is said, not kept */
	if (gen == s->gen && (copy = malloc(len)) != NULL) {
		memcpy(copy, json, len);
		if (s->ring_len == SERVER_RING) {
			e = &s->ring[s->ring_head];
			/* what is older now comes from the file */
			s->ring_from = e->off + 1;
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
	} else if (gen == s->gen)
		log_warnx("events: out of memory keeping a wake for replay");
	for (u = s->subs; u != NULL; u = u->next) {
		if (!u->live)
			continue;	/* waiting, or catching up: its turn */
		if (sub_full(u, len)) {
			sub_fall_behind(s, u);
			continue;
		}
		if (sub_queue(u, json, len) == 0 && after_pos(u, gen, off))
			pos_set(u, gen, off);
	}
}

/* --- catching up --------------------------------------------------------- */

/*
 * What cannot be replayed any more: say so, and carry on from where the
 * daemon still has the wakes — the start of the current generation after a
 * new one, or the ring's first wake when the file could not be read (so a
 * file that stays unreadable is not asked again and again).  u->lost says
 * how many wakes are lost when that is known (they were in the ring when
 * it was cleared); before the ring nobody can tell, and the message says
 * null.
 */
static void
sub_gap(struct server *s, struct sub *u, int to_ring, const char *why)
{
	char	 from[WAKE_ID_SIZE], to[WAKE_ID_SIZE], *txt;
	cJSON	*o = cJSON_CreateObject();

	if (u->pos_none)
		snprintf(from, sizeof(from), "%llu:-1",
		    (unsigned long long)u->pos_gen);
	else
		wake_id_format(from, u->pos_gen, u->pos_off);
	u->pos_gen = s->gen;
	u->pos_off = 0;
	u->pos_none = 1;
	if (to_ring && s->ring_from > 0)
		pos_set(u, s->gen, s->ring_from - 1);
	if (u->pos_none)
		snprintf(to, sizeof(to), "%llu:-1", (unsigned long long)s->gen);
	else
		wake_id_format(to, u->pos_gen, u->pos_off);
	cJSON_AddStringToObject(o, "type", "gap");
	cJSON_AddStringToObject(o, "after", from);
	cJSON_AddStringToObject(o, "resume", to);
	if (u->lost_known)
		cJSON_AddNumberToObject(o, "lost", (double)u->lost);
	else
		cJSON_AddNullToObject(o, "lost");
	cJSON_AddStringToObject(o, "reason", why);
	if ((txt = cJSON_PrintUnformatted(o)) != NULL)
		(void)sub_queue(u, txt, strlen(txt));
	free(txt);
	cJSON_Delete(o);
	log_info("events: a subscriber cannot be given the wakes after %s "
	    "(%s); it resumes after %s", from, why, to);
	s->gaps++;
	u->lost_known = 0;
	u->lost = 0;
}

static const char *
on_row(struct replay_job *j, const char *fp, uint64_t *count)
{
	struct server	*s = j->owner;

	return s->hooks.row(s->hooks.arg, fp, count);
}

static void	job_done(struct replay_job *);

/* Re-make the next chunk before the ring for u (or queue it for later). */
static void
sub_job_start(struct server *s, struct sub *u)
{
	struct replay_job	*j;

	if (s->jobs >= SERVER_REPLAY_JOBS) {
		if (!u->in_jobq) {
			u->in_jobq = 1;
			u->jnext = NULL;
			if (s->jobq_tail)
				s->jobq_tail->jnext = u;
			else
				s->jobq = u;
			s->jobq_tail = u;
		}
		return;
	}
	if ((j = replay_new()) == NULL) {
		log_warnx("events: out of memory re-making wakes");
		return;		/* tried again when it next reads */
	}
	snprintf(j->path, sizeof(j->path), "%s", s->hooks.perf);
	j->gen = s->gen;
	j->after = u->pos_off;
	j->after_none = u->pos_none;
	j->limit = s->ring_from;
	j->cfg = *s->hooks.wake;
	j->row = on_row;
	j->done = job_done;
	j->owner = s;
	j->arg = u;
	if (replay_start(s->loop, j) != 0) {
		replay_free(j);
		log_warnx("events: cannot queue work to re-make wakes");
		return;
	}
	u->job = j;
	s->jobs++;
}

static void
jobq_remove(struct server *s, struct sub *u)
{
	struct sub	**pp, *prev = NULL;

	if (!u->in_jobq)
		return;
	for (pp = &s->jobq; *pp != NULL; prev = *pp, pp = &(*pp)->jnext)
		if (*pp == u) {
			*pp = u->jnext;
			if (s->jobq_tail == u)
				s->jobq_tail = prev;
			break;
		}
	u->in_jobq = 0;
	u->jnext = NULL;
}

static void
jobq_run(struct server *s)
{
	struct sub	*u;

	while (s->jobs < SERVER_REPLAY_JOBS && (u = s->jobq) != NULL) {
		jobq_remove(s, u);
		sub_pump(s, u);
	}
}

/* j->arg is the subscriber, NULL if it has gone meanwhile. */
static void
job_done(struct replay_job *j)
{
	struct server	*s = j->owner;
	struct sub	*u = j->arg;
	size_t		 i;

	s->jobs--;
	if (u == NULL || s->stopping) {
		if (u != NULL)
			u->job = NULL;
		replay_free(j);
		if (!s->stopping)
			jobq_run(s);
		return;
	}
	u->job = NULL;
	if (j->gen != s->gen) {
		/* a new generation came meanwhile: sub_pump says the gap */
	} else if (j->rc != 0) {
		u->lost_known = 0;
		sub_gap(s, u, 1, j->rc == -ENOENT ? "perf.jsonl is gone" :
		    "perf.jsonl cannot be read");
	} else {
		for (i = 0; i < j->nmsgs; i++)
			if (sub_queue(u, j->msgs[i].json, j->msgs[i].len) != 0)
				break;
		s->from_file += i;
		if (i < j->nmsgs && i > 0)
			pos_set(u, j->gen, j->msgs[i - 1].off);
		else if (i == j->nmsgs && j->consumed)
			pos_set(u, j->gen, j->last);
		if (!j->consumed && j->end) {
			/* the file ends before the ring begins: it was cut
			 * short under us, and a new generation will follow */
			u->lost_known = 0;
			sub_gap(s, u, 1, "perf.jsonl is shorter than its wake "
			    "ids");
		} else if (!j->consumed && j->limit > 0)
			/* no line starts between the position and the ring
			 * (it was the last line before where the ring starts):
			 * go on from the ring, or this job is asked for again
			 * and again */
			pos_set(u, j->gen, j->limit - 1);
	}
	replay_free(j);
	jobq_run(s);
	sub_pump(s, u);
}

/*
 * Feed a subscriber that is catching up, if its queue is low: from the
 * ring when the ring reaches back to its position, else the next chunk of
 * the file.  Once nothing is left after it, it is live.
 */
static void
sub_pump(struct server *s, struct sub *u)
{
	const struct ring_entry	*e;
	size_t			 i;

	if (u->live || u->waiting || u->job != NULL || u->in_jobq ||
	    !s->ready || s->stopping || u->qlen > SERVER_CATCHUP_LOW)
		return;
	if (u->pos_gen == 0 && u->pos_none && s->gen > 0)
		u->pos_gen = s->gen;	/* 0 is "no file yet": no lines, so
					   nothing of it can have been missed */
	else if (u->pos_gen < s->gen)
		sub_gap(s, u, 0, "perf.jsonl was replaced or truncated "
		    "since");
	if (u->pos_gen > s->gen) {
		/* ids from a reset state: nothing here comes after them */
		sub_go_live(s, u);
		return;
	}
	/* the ring holds every wake from ring_from on */
	if (!(u->pos_none ? s->ring_from == 0 : u->pos_off + 1 >= s->ring_from)) {
		sub_job_start(s, u);
		return;
	}
	for (i = ring_find(s, u); i < s->ring_len; i++) {
		if (u->qlen >= SERVER_CATCHUP_FILL ||
		    u->qbytes >= SERVER_CATCHUP_BYTES)
			return;		/* more when it has read these */
		e = ring_at(s, i);
		if (sub_queue(u, e->json, e->len) != 0)
			return;
		pos_set(u, e->gen, e->off);
		s->from_ring++;
	}
	sub_go_live(s, u);
}

void
server_ring_reset(struct server *s, uint64_t gen, uint64_t from)
{
	struct sub	*u;

	if (gen != s->gen) {
		for (u = s->subs; u != NULL; u = u->next) {
			if (u->live) {
				/* it has had everything of the old one */
				u->pos_gen = gen;
				u->pos_off = 0;
				u->pos_none = 1;
			} else if (u->pos_gen == s->gen) {
				/* catching up: what the ring held after it
				 * goes now; before the ring, nobody knows */
				u->lost_known = u->pos_none ?
				    s->ring_from == 0 :
				    u->pos_off + 1 >= s->ring_from;
				u->lost = u->lost_known ?
				    s->ring_len - ring_find(s, u) : 0;
			}
		}
		ring_free(s);
	}
	s->gen = gen;
	s->ring_from = from;
	for (u = s->subs; u != NULL; u = u->next)
		sub_pump(s, u);
}

/*
 * hello, then — resuming — what came after `since`.  Before the start-up
 * fold is done the ring and the file do not reach the end yet: a resuming
 * subscriber waits (nothing live is sent to it either, or it would see
 * later ids before earlier ones) and catches up from server_ready().  A
 * subscriber that does not resume is live from the cursor on.
 */
static void
sub_welcome(struct server *s, struct sub *u, const char *since)
{
	cJSON		*o = cJSON_CreateObject();
	const cJSON	*c;
	char		*txt;
	uint64_t	 gen, off;
	int		 none;

	cJSON_AddStringToObject(o, "type", "hello");
	cJSON_AddStringToObject(o, "version", SLOPTIMIZE_VERSION);
	cJSON_AddNumberToObject(o, "pid", (double)getpid());
	/* project, generation, ready and the cursor: lines before it are
	 * folded, what comes next is live, so a client resumes with
	 * since=<generation>:<cursor - 1> (":-1" at 0) */
	s->hooks.hello(s->hooks.arg, o);
	if ((txt = cJSON_PrintUnformatted(o)) != NULL)
		(void)sub_queue(u, txt, strlen(txt));
	free(txt);
	u->pos_gen = s->gen;
	u->pos_none = 1;
	c = cJSON_GetObjectItemCaseSensitive(o, "cursor");
	if (cJSON_IsNumber(c) && c->valuedouble >= 1)
		pos_set(u, s->gen, (uint64_t)c->valuedouble - 1);
	if (s->ring_len > 0 && after_pos(u, ring_at(s, s->ring_len - 1)->gen,
	    ring_at(s, s->ring_len - 1)->off))
		pos_set(u, ring_at(s, s->ring_len - 1)->gen,
		    ring_at(s, s->ring_len - 1)->off);
	cJSON_Delete(o);
	if (since == NULL || server_since_parse(since, &gen, &off, &none)) {
		u->live = 1;
		return;
	}
	u->pos_gen = gen;
	u->pos_off = off;
	u->pos_none = none;
	u->waiting = !s->ready;
	sub_pump(s, u);
}

void
server_ready(struct server *s)
{
	struct sub	*u;

	s->ready = 1;
	for (u = s->subs; u != NULL; u = u->next) {
		u->waiting = 0;
		sub_pump(s, u);
	}
}

static int
sub_write(struct server *s, struct sub *u)
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
	if (!u->live)
		sub_pump(s, u);
	if (u->head != NULL)
		lws_callback_on_writable(u->wsi);
	return 0;
}

static void
sub_close(struct server *s, struct sub *u)
{
	if (u->prev)
		u->prev->next = u->next;
	else
		s->subs = u->next;
	if (u->next)
		u->next->prev = u->prev;
	s->nsubs--;
	jobq_remove(s, u);
	if (u->job != NULL) {
		/* the job comes back to nobody: job_done frees it */
		u->job->arg = NULL;
		u->job->cancelled = 1;
	}
	sub_clear(u);
	free(u);
	jobq_run(s);
}

static int
callback(struct lws *wsi, enum lws_callback_reasons reason, void *user,
    void *in, size_t len)
{
	struct pss		*p = user;
	struct server		*s = lws_context_user(lws_get_context(wsi));
	struct api		*a = s->api;
	struct sub		*u;
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
		 * same turn of the loop: this is a belt */
		if (s->nsubs >= a->env.cfg->max_subs) {
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
		return p->sub ? sub_write(s, p->sub) : 0;
	case LWS_CALLBACK_RECEIVE:
		return 0;	/* clients have nothing to say */
	case LWS_CALLBACK_CLOSED:
		tap_close(&s->tap, lws_get_socket_fd(wsi));
		if ((u = p->sub) != NULL) {
			p->sub = NULL;
			sub_close(s, u);
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
		if (api_conn_refused(a))
			return -1;
		/* `in` is the accepted socket: from now on what lws reads
		 * from it is seen by its header parser (daemon/tap.h) */
		(void)tap_open(&s->tap, (int)(intptr_t)in);
		return 0;
	case LWS_CALLBACK_HTTP_CONFIRM_UPGRADE:
		(void)tap_take(&s->tap, lws_get_socket_fd(wsi), &rq);
		n = api_confirm_upgrade(a, wsi, (const char *)in, &rq,
		    s->nsubs);
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
	s->hooks = *hooks;
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

	cJSON_AddNumberToObject(o, "subscribers", s->nsubs);
	cJSON_AddNumberToObject(o, "maxSubscribers", s->api->env.cfg->max_subs);
	cJSON_AddNumberToObject(o, "subscribersRefused",
	    (double)s->api->subs_refused);
	cJSON_AddNumberToObject(o, "droppedMessages", (double)s->dropped);
	e = cJSON_AddObjectToObject(o, "events");
	cJSON_AddNumberToObject(e, "ring", (double)s->ring_len);
	cJSON_AddNumberToObject(e, "ringFrom", (double)s->ring_from);
	cJSON_AddNumberToObject(e, "replayedFromRing", (double)s->from_ring);
	cJSON_AddNumberToObject(e, "replayedFromFile", (double)s->from_file);
	cJSON_AddNumberToObject(e, "fellBehind", (double)s->behind);
	cJSON_AddNumberToObject(e, "gaps", (double)s->gaps);
	cJSON_AddNumberToObject(e, "replayJobs", s->jobs);
	cJSON_AddNumberToObject(e, "idleTimerStops", (double)s->idle_stops);
}

void
server_stop(struct server *s)
{
	if (s->idle_up) {
		s->idle_up = 0;
		s->lws_timer = NULL;
		uv_close((uv_handle_t *)&s->idle, NULL);
	}
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
	ring_free(s);
	tap_free(&s->tap);
}
