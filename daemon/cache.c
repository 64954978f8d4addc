/*
 * cache — the /ledger bodies (see cache.h).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <libwebsockets.h>

#include "daemon/cache.h"
#include "daemon/snapshot.h"
#include "project/project.h"

static void	slot_build(struct cache *c, int i);

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
	r->cancel = waiter_unlink;
	r->cancel_arg = c;
}

static void
build_work(struct api_job *j)
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
}

static void
build_done(struct api_job *j)
{
	struct cache		*c = j->owner;
	struct cache_slot	*sn = &c->slot[j->slot];
	struct http_request	*r, *next;

	sn->building = 0;
	if (j->code == NULL) {
		http_blob_unref(sn->body);
		sn->body = j->out;
		j->out = NULL;
		sn->gen = sn->build_gen;
		snprintf(sn->etag, sizeof(sn->etag), "%s", j->etag);
		c->builds++;
	}
	for (r = sn->waiters; r != NULL; r = next) {
		next = r->wnext;
		if (r->wgen > sn->build_gen && j->code == NULL)
			continue;	/* came after the build began */
		waiter_unlink(r, c);
		if (j->code != NULL)
			http_answer_error(r, j->status, j->code, j->msg);
		else
			http_answer_cached(r, sn->body, sn->etag,
			    "application/json");
	}
	if (sn->waiters != NULL)
		slot_build(c, j->slot);
}

static void
slot_build(struct cache *c, int i)
{
	struct cache_slot	*sn = &c->slot[i];
	struct api_job		*j;
	struct http_request	*r, *next;

	if ((j = job_new(c->jobs, NULL, build_work, build_done, c)) == NULL)
		goto fail;
	snprintf(j->path, sizeof(j->path), "%s", c->perf);
	snprintf(j->path2, sizeof(j->path2), "%s", c->fixes);
	j->bytes = sn->bytes;
	j->slot = i;
	sn->build_gen = *c->changes;
	sn->building = 1;
	if (job_start(j) == 0)
		return;
	sn->building = 0;
fail:
	for (r = sn->waiters; r != NULL; r = next) {
		next = r->wnext;
		waiter_unlink(r, c);
		http_answer_error(r, 500, "internal",
		    "cannot start reading the ledger");
	}
}

void
cache_init(struct cache *c, struct jobs *jobs, const uint64_t *changes,
    const char *project)
{
	memset(c, 0, sizeof(*c));
	c->jobs = jobs;
	c->changes = changes;
	if (project_path(project, "perf.jsonl", c->perf, sizeof(c->perf)) ||
	    project_path(project, "fixes.jsonl", c->fixes, sizeof(c->fixes)))
		c->perf[0] = c->fixes[0] = '\0';	/* reads fail: a 500 */
}

int
cache_get(struct cache *c, struct http_request *r, uint64_t bytes)
{
	struct cache_slot	*sn = NULL;
	int			 i, lru = -1;

	for (i = 0; i < CACHE_SLOTS; i++) {
		if (c->slot[i].bytes == bytes && (c->slot[i].body ||
		    c->slot[i].building)) {
			sn = &c->slot[i];
			break;
		}
		if (!c->slot[i].building && (lru < 0 ||
		    c->slot[i].used < c->slot[lru].used))
			lru = i;
	}
	if (sn == NULL) {
		if (lru < 0) {
			c->busy++;
			http_answer_error(r, 503, "busy", "every ledger cache "
			    "slot is being rebuilt; retry");
			return 0;
		}
		sn = &c->slot[lru];
		http_blob_unref(sn->body);
		sn->body = NULL;
		sn->bytes = bytes;
		sn->waiters = NULL;
	}
	sn->used = ++c->tick;
	if (sn->body != NULL && sn->gen == *c->changes) {
		http_answer_cached(r, sn->body, sn->etag, "application/json");
		return 0;
	}
	/* stale or missing: wait for a build that began after now */
	waiter_add(c, sn, r);
	if (!sn->building)
		slot_build(c, (int)(sn - c->slot));
	return 1;
}

void
cache_free(struct cache *c)
{
	int	i;

	for (i = 0; i < CACHE_SLOTS; i++) {
		http_blob_unref(c->slot[i].body);
		c->slot[i].body = NULL;
		c->slot[i].waiters = NULL;
	}
}
