/*
 * cache — answers built once per change (see cache.h).
 *
 * Builds are held back, not skipped: a request always gets an answer
 * built after it arrived.  What CACHE_MIN_MS bounds is how often a slot
 * is rebuilt while the files change under a crowd of pollers — without
 * it, 20 panels polling a growing ledger made the 2 MiB /ledger body be
 * rebuilt for nearly every poll.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libwebsockets.h>

#include "daemon/cache.h"
#include "daemon/snapshot.h"
#include "project/project.h"

static void	slot_build(struct cache *c, int i);

/* Every waiter of a slot whose build could not start: 503 when the fold
 * queue is full (daemon/jobs.h), else 500. */
static void
fail_waiters(struct cache *c, struct cache_slot *sn, int rc);

static void
waiter_unlink(struct http_request *r, void *arg)
{
	struct cache		*c = arg;
	struct cache_slot	*sn;

	if (r->wslot == 0)
		return;
	sn = &c->slot[r->wslot - 1];
	if (r->wprev)
		r->wprev->wnext = r->wnext;
	else
		sn->waiters = r->wnext;
	if (r->wnext)
		r->wnext->wprev = r->wprev;
	r->wnext = r->wprev = NULL;
	r->wslot = 0;
	r->cancel = NULL;
	r->cancel_arg = NULL;
}

/*
 * The cancel hook of a waiting request: it goes.  If it hung up (not let
 * go for waiting too long) and nobody else waits, the build is given up.
 */
static void
waiter_gone(struct http_request *r, void *arg)
{
	struct cache		*c = arg;
	struct cache_slot	*sn;

	if (r->wslot == 0)
		return;
	sn = &c->slot[r->wslot - 1];
	waiter_unlink(r, c);
	if (!r->expired && sn->waiters == NULL && sn->building &&
	    sn->job != NULL)
		atomic_store(&sn->job->gone, 1);	/* jobs.h: dropped */
}

static void
waiter_add(struct cache *c, struct cache_slot *sn, struct http_request *r)
{
	r->wslot = (int)(sn - c->slot) + 1;
	r->wgen = *c->changes;
	r->wprev = NULL;
	r->wnext = sn->waiters;
	if (sn->waiters)
		sn->waiters->wprev = r;
	sn->waiters = r;
	r->cancel = waiter_gone;
	r->cancel_arg = c;
}

/* The slot's answer: cacheable (ETag, 304) when it is a body, as it was
 * when it is an error. */
static void
answer(struct cache_slot *sn, struct http_request *r)
{
	if (sn->etag[0])
		http_answer_cached(r, sn->body, sn->etag, "application/json");
	else
		http_answer(r, sn->status, "application/json",
		    http_blob_ref(sn->body));
}

/* --- /ledger ------------------------------------------------------------ */

static void
ledger_work(struct api_job *j)
{
	int	rc;

	rc = snapshot_build(j->path, j->path2, j->bytes, LWS_PRE, &j->out,
	    j->etag);
	if (rc == -PROJECT_ENOTREG)
		job_fail(j, 409, "not_regular_file", "cannot read the ledger: "
		    "%s", project_strerror(rc));
	else if (rc != 0)
		job_fail(j, 500, "internal", "cannot read the ledger: %s",
		    strerror(-rc));
	else
		j->status = 200;
}

int
cache_ledger(struct cache *c, struct http_request *r, uint64_t bytes)
{
	struct api_job	*t;
	char		 key[64];
	int		 rc;

	if ((t = calloc(1, sizeof(*t))) == NULL) {
		http_answer_error(r, 500, "internal", "out of memory");
		return 0;
	}
	snprintf(key, sizeof(key), "ledger?bytes=%llu",
	    (unsigned long long)bytes);
	snprintf(t->path, sizeof(t->path), "%s", c->perf);
	snprintf(t->path2, sizeof(t->path2), "%s", c->fixes);
	t->bytes = bytes;
	t->work = ledger_work;
	rc = cache_get(c, r, key, t);
	free(t);
	return rc;
}

/* --- builds -------------------------------------------------------------- */

/* Keep the bodies within CACHE_BYTES: let the least recently used go. */
static void
trim(struct cache *c, const struct cache_slot *keep)
{
	size_t	total = 0, i, lru;

	for (i = 0; i < CACHE_SLOTS; i++)
		if (c->slot[i].body != NULL)
			total += c->slot[i].body->len;
	while (total > CACHE_BYTES) {
		lru = CACHE_SLOTS;
		for (i = 0; i < CACHE_SLOTS; i++) {
			const struct cache_slot	*sn = &c->slot[i];

			if (sn == keep || sn->body == NULL || sn->building ||
			    sn->waiters != NULL)
				continue;
			if (lru == CACHE_SLOTS || sn->used < c->slot[lru].used)
				lru = i;
		}
		if (lru == CACHE_SLOTS)
			return;
		total -= c->slot[lru].body->len;
		http_blob_unref(c->slot[lru].body);
		c->slot[lru].body = NULL;
	}
}

static void
build_done(struct api_job *j)
{
	struct cache		*c = j->owner;
	struct cache_slot	*sn = &c->slot[j->slot];
	struct http_request	*r, *next;

	sn->building = 0;
	sn->job = NULL;
	if (j->dropped) {
		/* given up: the slot is as it was; anyone who came since
		 * gets a build of their own */
		if (sn->waiters != NULL)
			slot_build(c, j->slot);
		return;
	}
	http_blob_unref(sn->body);
	if (j->code == NULL) {
		sn->body = j->out;
		j->out = NULL;
		sn->status = j->status ? j->status : 200;
		snprintf(sn->etag, sizeof(sn->etag), "%s", j->etag);
	} else {
		/* an error is an answer of this change too (a 404 id, a FIFO
		 * in place of the ledger): asking again gets it again */
		sn->body = http_blob_json(http_error_json(j->code, j->msg));
		sn->status = j->status;
		sn->etag[0] = '\0';
	}
	sn->gen = sn->build_gen;
	c->builds++;
	if (j->work == ledger_work)
		c->ledger_builds++;
	for (r = sn->waiters; r != NULL; r = next) {
		next = r->wnext;
		if (r->wgen > sn->build_gen)
			continue;	/* came after the build began */
		waiter_unlink(r, c);
		answer(sn, r);
	}
	trim(c, sn);
	if (sn->waiters != NULL)
		slot_build(c, j->slot);
}

static void
on_timer(uv_timer_t *t)
{
	struct cache	*c = t->data;
	int		 i;

	for (i = 0; i < CACHE_SLOTS; i++)
		if (c->slot[i].waiters != NULL && !c->slot[i].building)
			slot_build(c, i);
}

static void
slot_build(struct cache *c, int i)
{
	struct cache_slot	*sn = &c->slot[i];
	struct api_job		*j;
	uint64_t		 now = uv_now(c->loop);
	int			 rc = -ENOMEM;

	if (sn->build_ms != 0 && now < sn->build_ms + CACHE_MIN_MS) {
		/* rebuilt a moment ago: this one begins a little later */
		uint64_t	due = sn->build_ms + CACHE_MIN_MS - now;

		c->held++;
		if (c->timer_up && (!uv_is_active((uv_handle_t *)&c->timer) ||
		    uv_timer_get_due_in(&c->timer) > due))
			uv_timer_start(&c->timer, on_timer, due, 0);
		return;
	}
	if ((j = job_new(c->jobs, NULL, sn->tmpl->work, build_done, c)) ==
	    NULL)
		goto fail;
	job_inputs_copy(j, sn->tmpl);
	j->slot = i;
	sn->build_gen = *c->changes;
	sn->build_ms = now;
	sn->building = 1;
	sn->job = j;
	if ((rc = job_start(j)) == 0)
		return;
	sn->building = 0;
	sn->job = NULL;
fail:
	fail_waiters(c, sn, rc);
}

static void
fail_waiters(struct cache *c, struct cache_slot *sn, int rc)
{
	struct http_request	*r, *next;

	for (r = sn->waiters; r != NULL; r = next) {
		next = r->wnext;
		waiter_unlink(r, c);
		if (rc == -EBUSY) {
			r->retry_after = jobs_retry_after(c->jobs);
			http_answer_error(r, 503, "busy", "too many answers "
			    "are being built; retry after the seconds "
			    "Retry-After says");
		} else
			http_answer_error(r, 500, "internal",
			    "cannot start building the answer");
	}
}

/* --- the slots ---------------------------------------------------------- */

/* Every slot is busy with a build or its waiters: build this answer for
 * this request alone, and keep nothing. */
static void
alone_done(struct api_job *j)
{
	struct http_request	*r = j->r;

	if (r == NULL)
		return;
	if (j->code != NULL)
		http_answer_error(r, j->status, j->code, j->msg);
	else if (j->etag[0])
		http_answer_cached(r, j->out, j->etag, "application/json");
	else
		http_answer(r, j->status ? j->status : 200, "application/json",
		    http_blob_ref(j->out));
}

static int
build_alone(struct cache *c, struct http_request *r,
    const struct api_job *tmpl)
{
	struct api_job	*j;
	int		 rc;

	c->busy++;
	if ((j = job_new(c->jobs, r, tmpl->work, alone_done, c)) == NULL) {
		http_answer_error(r, 500, "internal", "out of memory");
		return 0;
	}
	job_inputs_copy(j, tmpl);
	if ((rc = job_start(j)) == -EBUSY) {
		r->retry_after = jobs_retry_after(c->jobs);
		http_answer_error(r, 503, "busy", "too many answers are being "
		    "built; retry after the seconds Retry-After says");
		return 0;
	} else if (rc != 0) {
		http_answer_error(r, 500, "internal",
		    "cannot start building the answer");
		return 0;
	}
	return 1;
}

int
cache_get(struct cache *c, struct http_request *r, const char *key,
    const struct api_job *tmpl)
{
	struct cache_slot	*sn = NULL;
	int			 i, lru = -1;

	if (strlen(key) >= CACHE_KEY_MAX) {
		http_answer_error(r, 400, "bad_parameter",
		    "the parameters are too long");
		return 0;
	}
	for (i = 0; i < CACHE_SLOTS; i++) {
		if (strcmp(c->slot[i].key, key) == 0) {
			sn = &c->slot[i];
			break;
		}
		if (!c->slot[i].building && c->slot[i].waiters == NULL &&
		    (lru < 0 || c->slot[i].used < c->slot[lru].used))
			lru = i;
	}
	if (sn == NULL) {
		if (lru < 0)
			return build_alone(c, r, tmpl);
		sn = &c->slot[lru];
		if (sn->tmpl == NULL &&
		    (sn->tmpl = calloc(1, sizeof(*sn->tmpl))) == NULL) {
			http_answer_error(r, 500, "internal", "out of memory");
			return 0;
		}
		http_blob_unref(sn->body);
		sn->body = NULL;
		sn->build_ms = 0;
		snprintf(sn->key, sizeof(sn->key), "%s", key);
		job_inputs_copy(sn->tmpl, tmpl);
		sn->tmpl->work = tmpl->work;
	}
	sn->used = ++c->tick;
	if (sn->body != NULL && sn->gen == *c->changes) {
		c->hits++;
		answer(sn, r);
		return 0;
	}
	/* stale or missing: wait for a build that began after now */
	waiter_add(c, sn, r);
	if (!sn->building)
		slot_build(c, (int)(sn - c->slot));
	return 1;
}

int
cache_init(struct cache *c, struct jobs *jobs, uv_loop_t *loop,
    const uint64_t *changes, const char *project)
{
	int	rc;

	memset(c, 0, sizeof(*c));
	c->jobs = jobs;
	c->loop = loop;
	c->changes = changes;
	if (project_path(project, "perf.jsonl", c->perf, sizeof(c->perf)) ||
	    project_path(project, "fixes.jsonl", c->fixes, sizeof(c->fixes)))
		c->perf[0] = c->fixes[0] = '\0';	/* reads fail: a 500 */
	if ((rc = uv_timer_init(loop, &c->timer)) != 0)
		return rc;
	c->timer.data = c;
	c->timer_up = 1;
	return 0;
}

void
cache_close(struct cache *c)
{
	if (c->timer_up) {
		c->timer_up = 0;
		uv_close((uv_handle_t *)&c->timer, NULL);
	}
}

void
cache_free(struct cache *c)
{
	int	i;

	for (i = 0; i < CACHE_SLOTS; i++) {
		http_blob_unref(c->slot[i].body);
		c->slot[i].body = NULL;
		c->slot[i].waiters = NULL;
		free(c->slot[i].tmpl);
		c->slot[i].tmpl = NULL;
	}
}
