/*
 * events — the events socket without the socket (see events.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "daemon/events.h"
#include "daemon/log.h"
#include "daemon/rewake.h"

struct msg {
	struct msg	*next;
	size_t		 len;
	unsigned char	 buf[];		/* headroom + len */
};

struct events_sub {
	struct events_sub	*next, *prev;
	void			*conn;		/* the transport's */
	struct msg		*head, *tail;
	size_t			 qlen, qbytes;
	int			 live;		/* else catching up */
	int			 waiting;	/* resuming before the fold
						   is done */
	/* every wake with an id up to here has been queued for it */
	uint64_t		 pos_gen, pos_off;
	int			 pos_none;	/* nothing of pos_gen yet
						   (":-1") */
	int			 lost_known;	/* for a gap: how many wakes */
	uint64_t		 lost;		/* are lost, when known */
	struct rewake_job	*job;		/* a chunk being re-made */
	struct events_sub	*jnext;		/* in the job queue */
	int			 in_jobq;
	uint64_t		 skipped;	/* record messages missed
						   catching up */
	int			 quiet;		/* a game page on the relay:
						   sent no wakes or records */
};

static void	sub_pump(struct events *, struct events_sub *);

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
events_since_parse(const char *s, uint64_t *gen, uint64_t *off, int *none)
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
after_pos(const struct events_sub *u, uint64_t gen, uint64_t off)
{
	if (gen != u->pos_gen)
		return gen > u->pos_gen;
	return u->pos_none || off > u->pos_off;
}

static void
pos_set(struct events_sub *u, uint64_t gen, uint64_t off)
{
	u->pos_gen = gen;
	u->pos_off = off;
	u->pos_none = 0;
}

static struct msg *
msg_new(const char *json, size_t len, size_t headroom)
{
	struct msg	*m = malloc(sizeof(*m) + headroom + len);

	if (m == NULL)
		return NULL;
	m->next = NULL;
	m->len = len;
	memcpy(m->buf + headroom, json, len);
	return m;
}

static void
sub_clear(struct events_sub *u)
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
sub_queue(struct events *ev, struct events_sub *u, const char *json,
    size_t len)
{
	struct msg	*m;

	if ((m = msg_new(json, len, ev->tr.headroom)) == NULL) {
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
	ev->tr.want_write(u->conn);
	return 0;
}

static int
sub_full(const struct events_sub *u, size_t len)
{
	return u->qlen >= EVENTS_SUB_MAX_MSGS ||
	    u->qbytes + len > EVENTS_SUB_MAX_BYTES;
}

/*
 * A live subscriber stopped reading and its queue is at its bound: keep
 * what is queued, queue nothing more as it happens, and feed it from the
 * ring and the file once it reads again.
 */
static void
sub_fall_behind(struct events *ev, struct events_sub *u)
{
	u->live = 0;
	ev->behind++;
	log_info("events: a subscriber is %zu messages behind; it gets the "
	    "rest from the replay ring and perf.jsonl as it reads", u->qlen);
}

/* Back to live: say what it missed that is not kept anywhere. */
static void
sub_go_live(struct events *ev, struct events_sub *u)
{
	char	note[96];
	int	n;

	u->live = 1;
	if (u->skipped == 0)
		return;
	n = snprintf(note, sizeof(note), "{\"type\":\"dropped\",\"count\":%llu,"
	    "\"what\":\"record\"}", (unsigned long long)u->skipped);
	ev->dropped += u->skipped;
	u->skipped = 0;
	(void)sub_queue(ev, u, note, (size_t)n);
}

void
events_broadcast(struct events *ev, const char *json, size_t len)
{
	struct events_sub	*u;

	for (u = ev->subs; u != NULL; u = u->next) {
		if (u->waiting || u->quiet)
			continue;
		if (u->live && sub_full(u, len))
			sub_fall_behind(ev, u);
		if (u->live)
			(void)sub_queue(ev, u, json, len);
		else
			u->skipped++;
	}
}

/* --- the ring ------------------------------------------------------------ */

static const struct events_entry *
ring_at(const struct events *ev, size_t i)
{
	return &ev->ring[(ev->ring_head + i) % EVENTS_RING];
}

/* Index of the first entry after the subscriber's position (ids in the
 * ring only grow), or ring_len. */
static size_t
ring_find(const struct events *ev, const struct events_sub *u)
{
	size_t	lo = 0, hi = ev->ring_len, mid;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (after_pos(u, ring_at(ev, mid)->gen, ring_at(ev, mid)->off))
			hi = mid;
		else
			lo = mid + 1;
	}
	return lo;
}

static void
ring_free(struct events *ev)
{
	size_t	i;

	for (i = 0; i < ev->ring_len; i++)
		free(ev->ring[(ev->ring_head + i) % EVENTS_RING].json);
	ev->ring_head = ev->ring_len = 0;
}

void
events_wake(struct events *ev, uint64_t gen, uint64_t off, const char *json,
    size_t len)
{
	struct events_entry	*e;
	struct events_sub		*u;
	char			*copy;

	/* a summary of an older generation's records is said, not kept */
	if (gen == ev->gen && (copy = malloc(len)) != NULL) {
		memcpy(copy, json, len);
		if (ev->ring_len == EVENTS_RING) {
			e = &ev->ring[ev->ring_head];
			/* what is older now comes from the file */
			ev->ring_from = e->off + 1;
			free(e->json);
			ev->ring_head = (ev->ring_head + 1) % EVENTS_RING;
			ev->ring_len--;
			ev->ring_evicted++;
		}
		e = &ev->ring[(ev->ring_head + ev->ring_len) % EVENTS_RING];
		e->gen = gen;
		e->off = off;
		e->json = copy;
		e->len = len;
		ev->ring_len++;
	} else if (gen == ev->gen)
		log_warnx("events: out of memory keeping a wake for replay");
	for (u = ev->subs; u != NULL; u = u->next) {
		if (!u->live || u->quiet)
			continue;	/* waiting, or catching up: its turn */
		if (sub_full(u, len)) {
			sub_fall_behind(ev, u);
			continue;
		}
		if (sub_queue(ev, u, json, len) == 0 && after_pos(u, gen, off))
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
sub_gap(struct events *ev, struct events_sub *u, int to_ring, const char *why)
{
	char	 from[WAKE_ID_SIZE], to[WAKE_ID_SIZE], *txt;
	cJSON	*o = cJSON_CreateObject();

	if (u->pos_none)
		snprintf(from, sizeof(from), "%llu:-1",
		    (unsigned long long)u->pos_gen);
	else
		wake_id_format(from, u->pos_gen, u->pos_off);
	u->pos_gen = ev->gen;
	u->pos_off = 0;
	u->pos_none = 1;
	if (to_ring && ev->ring_from > 0)
		pos_set(u, ev->gen, ev->ring_from - 1);
	if (u->pos_none)
		snprintf(to, sizeof(to), "%llu:-1", (unsigned long long)ev->gen);
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
		(void)sub_queue(ev, u, txt, strlen(txt));
	free(txt);
	cJSON_Delete(o);
	log_info("events: a subscriber cannot be given the wakes after %s "
	    "(%s); it resumes after %s", from, why, to);
	ev->gaps++;
	u->lost_known = 0;
	u->lost = 0;
}

static const char *
on_row(struct rewake_job *j, const char *fp, uint64_t *count)
{
	struct events	*ev = j->owner;

	return ev->hooks.row(ev->hooks.arg, fp, count);
}

static void	job_done(struct rewake_job *);

/* Re-make the next chunk before the ring for u (or queue it for later). */
static void
sub_job_start(struct events *ev, struct events_sub *u)
{
	struct rewake_job	*j;

	if (ev->jobs >= EVENTS_REWAKE_JOBS) {
		if (!u->in_jobq) {
			u->in_jobq = 1;
			u->jnext = NULL;
			if (ev->jobq_tail)
				ev->jobq_tail->jnext = u;
			else
				ev->jobq = u;
			ev->jobq_tail = u;
		}
		return;
	}
	if ((j = rewake_new()) == NULL) {
		log_warnx("events: out of memory re-making wakes");
		return;		/* tried again when it next reads */
	}
	snprintf(j->path, sizeof(j->path), "%s", ev->hooks.perf);
	j->gen = ev->gen;
	j->after = u->pos_off;
	j->after_none = u->pos_none;
	j->limit = ev->ring_from;
	j->cfg = *ev->hooks.wake;
	j->row = on_row;
	j->done = job_done;
	j->owner = ev;
	j->arg = u;
	if (rewake_start(ev->loop, j) != 0) {
		rewake_free(j);
		log_warnx("events: cannot queue work to re-make wakes");
		return;
	}
	u->job = j;
	ev->jobs++;
}

static void
jobq_remove(struct events *ev, struct events_sub *u)
{
	struct events_sub	**pp, *prev = NULL;

	if (!u->in_jobq)
		return;
	for (pp = &ev->jobq; *pp != NULL; prev = *pp, pp = &(*pp)->jnext)
		if (*pp == u) {
			*pp = u->jnext;
			if (ev->jobq_tail == u)
				ev->jobq_tail = prev;
			break;
		}
	u->in_jobq = 0;
	u->jnext = NULL;
}

static void
jobq_run(struct events *ev)
{
	struct events_sub	*u;

	while (ev->jobs < EVENTS_REWAKE_JOBS && (u = ev->jobq) != NULL) {
		jobq_remove(ev, u);
		sub_pump(ev, u);
	}
}

/* j->arg is the subscriber, NULL if it has gone meanwhile. */
static void
job_done(struct rewake_job *j)
{
	struct events	*ev = j->owner;
	struct events_sub	*u = j->arg;
	size_t		 i;

	ev->jobs--;
	if (u == NULL || ev->stopping) {
		if (u != NULL)
			u->job = NULL;
		rewake_free(j);
		if (!ev->stopping)
			jobq_run(ev);
		return;
	}
	u->job = NULL;
	if (j->gen != ev->gen) {
		/* a new generation came meanwhile: sub_pump says the gap */
	} else if (j->rc != 0) {
		u->lost_known = 0;
		sub_gap(ev, u, 1, j->rc == -ENOENT ? "perf.jsonl is gone" :
		    "perf.jsonl cannot be read");
	} else {
		for (i = 0; i < j->nmsgs; i++)
			if (sub_queue(ev, u, j->msgs[i].json, j->msgs[i].len) != 0)
				break;
		ev->from_file += i;
		if (i < j->nmsgs && i > 0)
			pos_set(u, j->gen, j->msgs[i - 1].off);
		else if (i == j->nmsgs && j->consumed)
			pos_set(u, j->gen, j->last);
		if (!j->consumed && j->end) {
			/* the file ends before the ring begins: it was cut
			 * short under us, and a new generation will follow */
			u->lost_known = 0;
			sub_gap(ev, u, 1, "perf.jsonl is shorter than its wake "
			    "ids");
		} else if (!j->consumed && j->limit > 0)
			/* no line starts between the position and the ring
			 * (it was the last line before where the ring starts):
			 * go on from the ring, or this job is asked for again
			 * and again */
			pos_set(u, j->gen, j->limit - 1);
	}
	rewake_free(j);
	jobq_run(ev);
	sub_pump(ev, u);
}

/*
 * Feed a subscriber that is catching up, if its queue is low: from the
 * ring when the ring reaches back to its position, else the next chunk of
 * the file.  Once nothing is left after it, it is live.
 */
static void
sub_pump(struct events *ev, struct events_sub *u)
{
	const struct events_entry	*e;
	size_t			 i;

	if (u->live || u->waiting || u->job != NULL || u->in_jobq ||
	    !ev->ready || ev->stopping || u->qlen > EVENTS_CATCHUP_LOW)
		return;
	if (u->pos_gen == 0 && u->pos_none && ev->gen > 0)
		u->pos_gen = ev->gen;	/* 0 is "no file yet": no lines, so
					   nothing of it can have been missed */
	else if (u->pos_gen < ev->gen)
		sub_gap(ev, u, 0, "perf.jsonl was replaced or truncated "
		    "since");
	if (u->pos_gen > ev->gen) {
		/* ids from a reset state: nothing here comes after them */
		sub_go_live(ev, u);
		return;
	}
	/* the ring holds every wake from ring_from on */
	if (!(u->pos_none ? ev->ring_from == 0 : u->pos_off + 1 >= ev->ring_from)) {
		sub_job_start(ev, u);
		return;
	}
	for (i = ring_find(ev, u); i < ev->ring_len; i++) {
		if (u->qlen >= EVENTS_CATCHUP_FILL ||
		    u->qbytes >= EVENTS_CATCHUP_BYTES)
			return;		/* more when it has read these */
		e = ring_at(ev, i);
		if (sub_queue(ev, u, e->json, e->len) != 0)
			return;
		pos_set(u, e->gen, e->off);
		ev->from_ring++;
	}
	sub_go_live(ev, u);
}

void
events_ring_reset(struct events *ev, uint64_t gen, uint64_t from)
{
	struct events_sub	*u;

	if (gen != ev->gen) {
		for (u = ev->subs; u != NULL; u = u->next) {
			if (u->live) {
				/* it has had everything of the old one */
				u->pos_gen = gen;
				u->pos_off = 0;
				u->pos_none = 1;
			} else if (u->pos_gen == ev->gen) {
				/* catching up: what the ring held after it
				 * goes now; before the ring, nobody knows */
				u->lost_known = u->pos_none ?
				    ev->ring_from == 0 :
				    u->pos_off + 1 >= ev->ring_from;
				u->lost = u->lost_known ?
				    ev->ring_len - ring_find(ev, u) : 0;
			}
		}
		ring_free(ev);
	}
	ev->gen = gen;
	ev->ring_from = from;
	for (u = ev->subs; u != NULL; u = u->next)
		sub_pump(ev, u);
}

/*
 * hello, then — resuming — what came after `since`.  Before the start-up
 * fold is done the ring and the file do not reach the end yet: a resuming
 * subscriber waits (nothing live is sent to it either, or it would see
 * later ids before earlier ones) and catches up from events_ready().  A
 * subscriber that does not resume is live from the cursor on.
 */
static void
sub_welcome(struct events *ev, struct events_sub *u, const char *since)
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
	ev->hooks.hello(ev->hooks.arg, o);
	if ((txt = cJSON_PrintUnformatted(o)) != NULL)
		(void)sub_queue(ev, u, txt, strlen(txt));
	free(txt);
	u->pos_gen = ev->gen;
	u->pos_none = 1;
	c = cJSON_GetObjectItemCaseSensitive(o, "cursor");
	if (cJSON_IsNumber(c) && c->valuedouble >= 1)
		pos_set(u, ev->gen, (uint64_t)c->valuedouble - 1);
	if (ev->ring_len > 0 && after_pos(u, ring_at(ev, ev->ring_len - 1)->gen,
	    ring_at(ev, ev->ring_len - 1)->off))
		pos_set(u, ring_at(ev, ev->ring_len - 1)->gen,
		    ring_at(ev, ev->ring_len - 1)->off);
	cJSON_Delete(o);
	if (since == NULL || events_since_parse(since, &gen, &off, &none)) {
		u->live = 1;
		return;
	}
	u->pos_gen = gen;
	u->pos_off = off;
	u->pos_none = none;
	u->waiting = !ev->ready;
	sub_pump(ev, u);
}

void
events_ready(struct events *ev)
{
	struct events_sub	*u;

	ev->ready = 1;
	for (u = ev->subs; u != NULL; u = u->next) {
		u->waiting = 0;
		sub_pump(ev, u);
	}
}

static int
sub_write(struct events *ev, struct events_sub *u)
{
	struct msg	*m = u->head;

	if (m == NULL)
		return 0;
	if (ev->tr.write(u->conn, m->buf + ev->tr.headroom, m->len) != 0)
		return -1;
	u->head = m->next;
	if (u->head == NULL)
		u->tail = NULL;
	u->qlen--;
	u->qbytes -= m->len;
	free(m);
	if (!u->live)
		sub_pump(ev, u);
	if (u->head != NULL)
		ev->tr.want_write(u->conn);
	return 0;
}

static void
sub_close(struct events *ev, struct events_sub *u)
{
	if (u->prev)
		u->prev->next = u->next;
	else
		ev->subs = u->next;
	if (u->next)
		u->next->prev = u->prev;
	ev->nsubs--;
	jobq_remove(ev, u);
	if (u->job != NULL) {
		/* the job comes back to nobody: job_done frees it */
		u->job->arg = NULL;
		u->job->cancelled = 1;
	}
	sub_clear(u);
	free(u);
	jobq_run(ev);
}

/* --- the transport's side ------------------------------------------------ */

void
events_init(struct events *ev, uv_loop_t *loop,
    const struct events_transport *tr, const struct events_hooks *hooks)
{
	memset(ev, 0, sizeof(*ev));
	ev->loop = loop;
	ev->tr = *tr;
	ev->hooks = *hooks;
}

struct events_sub *
events_open(struct events *ev, void *conn, const char *since)
{
	struct events_sub	*u;

	if (ev->nsubs >= *ev->hooks.max_subs) {
		log_warnx("events: %u subscribers, refusing another",
		    ev->nsubs);
		return NULL;
	}
	if ((u = calloc(1, sizeof(*u))) == NULL)
		return NULL;
	u->conn = conn;
	u->next = ev->subs;
	if (ev->subs)
		ev->subs->prev = u;
	ev->subs = u;
	ev->nsubs++;
	sub_welcome(ev, u, since);
	return u;
}

int
events_writable(struct events *ev, struct events_sub *u)
{
	return sub_write(ev, u);
}

void
events_close(struct events *ev, struct events_sub *u)
{
	sub_close(ev, u);
}

int
events_send(struct events *ev, struct events_sub *u, const char *json,
    size_t len)
{
	return sub_queue(ev, u, json, len);
}

void
events_quiet(struct events *ev, struct events_sub *u)
{
	u->quiet = 1;
	u->live = 1;
	u->waiting = 0;
	jobq_remove(ev, u);
}

unsigned
events_count(const struct events *ev)
{
	return ev->nsubs;
}

void
events_stop(struct events *ev)
{
	ev->stopping = 1;
}

void
events_free(struct events *ev)
{
	ring_free(ev);
}

cJSON *
events_status_json(const struct events *ev, cJSON *o)
{
	cJSON	*e;

	cJSON_AddNumberToObject(o, "subscribers", ev->nsubs);
	cJSON_AddNumberToObject(o, "droppedMessages", (double)ev->dropped);
	e = cJSON_AddObjectToObject(o, "events");
	cJSON_AddNumberToObject(e, "ring", (double)ev->ring_len);
	cJSON_AddNumberToObject(e, "ringFrom", (double)ev->ring_from);
	cJSON_AddNumberToObject(e, "replayedFromRing", (double)ev->from_ring);
	cJSON_AddNumberToObject(e, "replayedFromFile", (double)ev->from_file);
	cJSON_AddNumberToObject(e, "fellBehind", (double)ev->behind);
	cJSON_AddNumberToObject(e, "gaps", (double)ev->gaps);
	cJSON_AddNumberToObject(e, "replayJobs", ev->jobs);
	return e;
}
