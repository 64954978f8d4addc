/*
 * jobs — thread-pool work for requests (see jobs.h).
 *
 * A request that waits on a job has its cancel hook set: freeing the
 * request (the client hung up) unhooks it from the job and raises `gone`,
 * and the job, when it comes back, answers nobody.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "daemon/jobs.h"
#include "daemon/log.h"

static int64_t
now_ms(void)
{
	struct timespec	ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void
job_cancel(struct http_request *r, void *arg)
{
	struct api_job	*j = arg;

	(void)r;
	j->r = NULL;
	atomic_store(&j->gone, 1);
}

static void
job_work(uv_work_t *w)
{
	struct api_job	*j = w->data;

	j->work(j);
}

static void
unlink_job(struct api_job *j)
{
	if (j->prev)
		j->prev->next = j->next;
	else
		j->js->head = j->next;
	if (j->next)
		j->next->prev = j->prev;
}

static void	job_after(uv_work_t *, int);

/* Hand the next waiting heavy jobs to the pool. */
static void
turns_run(struct jobs *js)
{
	struct api_job	*j;
	int		 rc;

	while (!js->stopping && js->heavy < JOBS_HEAVY_MAX &&
	    (j = js->turn) != NULL) {
		js->turn = j->tnext;
		if (js->turn == NULL)
			js->turn_tail = NULL;
		j->tnext = NULL;
		if ((rc = uv_queue_work(js->loop, &j->req, job_work,
		    job_after)) != 0) {
			log_warnx("%s: uv_queue_work: %s", __func__,
			    uv_strerror(rc));
			job_fail(j, 500, "internal", "cannot start the work");
			job_after(&j->req, 0);
			continue;
		}
		j->queued = 1;
		js->heavy++;
	}
}

/* A job is over (on the pool, or never started): its `done`, then free. */
static void
job_after(uv_work_t *w, int status)
{
	struct api_job	*j = w->data;
	struct jobs	*js = j->js;

	(void)status;
	if (js != NULL) {
		unlink_job(j);
		js->n--;
		if (j->heavy && j->queued)
			js->heavy--;
		if (j->r != NULL) {
			j->r->cancel = NULL;
			j->r->cancel_arg = NULL;
		}
		if (j->done)
			j->done(j);
	}
	job_discard(j);
	if (js != NULL)
		turns_run(js);
}

struct api_job *
job_new(struct jobs *js, struct http_request *r, job_fn *work, job_fn *done,
    void *owner)
{
	struct api_job	*j = calloc(1, sizeof(*j));

	if (j == NULL)
		return NULL;
	j->js = js;
	j->r = r;
	j->owner = owner;
	j->work = work;
	j->done = done;
	j->req.data = j;
	j->now_ms = now_ms();
	atomic_init(&j->gone, 0);
	return j;
}

int
job_start(struct api_job *j)
{
	struct jobs	*js = j->js;
	int		 rc;

	if (j->heavy && (js->heavy >= JOBS_HEAVY_MAX || js->turn != NULL)) {
		/* its turn comes when the fold before it is done */
		if (js->turn_tail)
			js->turn_tail->tnext = j;
		else
			js->turn = j;
		js->turn_tail = j;
		js->waited++;
	} else if ((rc = uv_queue_work(js->loop, &j->req, job_work,
	    job_after)) != 0) {
		log_warnx("%s: uv_queue_work: %s", __func__, uv_strerror(rc));
		job_discard(j);
		return rc;
	} else {
		j->queued = 1;
		if (j->heavy)
			js->heavy++;
	}
	j->next = j->js->head;
	if (j->js->head)
		j->js->head->prev = j;
	j->js->head = j;
	j->js->n++;
	if (j->r != NULL) {
		j->r->cancel = job_cancel;
		j->r->cancel_arg = j;
	}
	return 0;
}

void
job_discard(struct api_job *j)
{
	if (j == NULL)
		return;
	http_blob_unref(j->out);
	free(j->body);
	free(j);
}

void
job_fail(struct api_job *j, unsigned status, const char *code,
    const char *fmt, ...)
{
	va_list	ap;

	va_start(ap, fmt);
	vsnprintf(j->msg, sizeof(j->msg), fmt, ap);
	va_end(ap);
	j->status = status;
	j->code = code;
	http_blob_unref(j->out);
	j->out = NULL;
}

void
job_answer(struct api_job *j)
{
	struct http_request	*r = j->r;

	if (r == NULL)
		return;
	if (j->code != NULL) {
		http_answer_error(r, j->status, j->code, j->msg);
		return;
	}
	if (j->etag[0])
		snprintf(r->etag, sizeof(r->etag), "%s", j->etag);
	http_answer(r, j->status, j->ctype, j->out);
	j->out = NULL;
}

void
job_inputs_copy(struct api_job *d, const struct api_job *s)
{
	memcpy(d->project, s->project, sizeof(d->project));
	memcpy(d->path, s->path, sizeof(d->path));
	memcpy(d->path2, s->path2, sizeof(d->path2));
	d->opts = s->opts;
	d->q = s->q;
	memcpy(d->id, s->id, sizeof(d->id));
	memcpy(d->type, s->type, sizeof(d->type));
	memcpy(d->status_f, s->status_f, sizeof(d->status_f));
	/* the query and the options point into the job's own strings */
	d->q.type = s->q.type ? d->type : NULL;
	d->q.status = s->q.status ? d->status_f : NULL;
	d->opts.occurrences_of = s->opts.occurrences_of ? d->id : NULL;
	d->one = s->one;
	d->history = s->history;
	d->buckets = s->buckets;
	d->bytes = s->bytes;
	d->seq = s->seq;
	d->slot = s->slot;
	memcpy(d->loop, s->loop, sizeof(d->loop));
	d->heavy = s->heavy;
}

void
jobs_stop(struct jobs *js)
{
	struct api_job	*j;

	js->stopping = 1;
	while ((j = js->turn) != NULL) {
		js->turn = j->tnext;
		if (js->turn == NULL)
			js->turn_tail = NULL;
		j->tnext = NULL;
		job_fail(j, 503, "busy", "the daemon is stopping");
		job_after(&j->req, 0);
	}
}

void
jobs_orphan(struct jobs *js)
{
	struct api_job	*j;

	jobs_stop(js);
	for (j = js->head; j != NULL; j = j->next) {
		j->js = NULL;
		if (j->r != NULL) {
			j->r->cancel = NULL;
			j->r->cancel_arg = NULL;
		}
		j->r = NULL;
		atomic_store(&j->gone, 1);
	}
	js->head = NULL;
	js->n = 0;
}
