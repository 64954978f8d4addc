/*
 * jobs — thread-pool work for requests (see jobs.h).
 *
 * A request that waits on a job has its cancel hook set: freeing the
 * request (the client hung up) unhooks it from the job and raises `gone`,
 * and the job, when it comes back, answers nobody.
 */
#include <sys/resource.h>
#include <sys/syscall.h>

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/base.h"
#include "daemon/jobs.h"
#include "daemon/log.h"

static void
job_cancel(struct http_request *r, void *arg)
{
	struct api_job	*j = arg;

	(void)r;
	j->r = NULL;
	atomic_store(&j->gone, 1);
}

/* The job's work, timed; a heavy job nobody waits for is not started. */
static void
job_run(struct api_job *j)
{
	uint64_t	t0;

	if (j->heavy && job_gone(j)) {
		j->dropped = 1;
		job_fail(j, 503, "busy", "nobody waits for this answer");
		return;
	}
	t0 = uv_hrtime();
	if (j->heavy && j->js != NULL)
		atomic_fetch_add(&j->js->running, 1);
	j->work(j);
	if (j->heavy && j->js != NULL)
		atomic_fetch_sub(&j->js->running, 1);
	j->ran_ms = (double)(uv_hrtime() - t0) / 1e6;
	if (j->heavy && j->code != NULL && job_gone(j))
		j->dropped = 1;		/* it gave up on the way */
}

static void
job_work(uv_work_t *w)
{
	job_run(w->data);
}

int
job_gone(const struct api_job *j)
{
	return atomic_load(&((struct api_job *)j)->gone) != 0;
}

unsigned
jobs_retry_after(const struct jobs *js)
{
	double	s = (js->heavy + 1) * (js->heavy_ms > 0 ? js->heavy_ms :
		    1000.0) / 1000.0;

	return s < 1 ? 1 : s > 60 ? 60 : (unsigned)(s + 0.999);
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

/* A job is over (on the pool, the heavy thread, or never started): its
 * `done`, then free. */
static void
job_after(uv_work_t *w, int status)
{
	struct api_job	*j = w->data;
	struct jobs	*js = j->js;

	(void)status;
	if (js != NULL) {
		unlink_job(j);
		js->n--;
		if (j->heavy) {
			js->heavy--;
			if (j->dropped)
				js->dropped++;
			else if (j->ran_ms > 0) {
				/* a recent average, for Retry-After */
				js->heavy_ms = js->heavy_ms > 0 ? 0.7 *
				    js->heavy_ms + 0.3 * j->ran_ms : j->ran_ms;
				js->folds++;
			}
		}
		if (j->r != NULL) {
			j->r->cancel = NULL;
			j->r->cancel_arg = NULL;
		}
		if (j->done)
			j->done(j);
	}
	job_discard(j);
}

/* --- the heavy thread --------------------------------------------------- */

static void
heavy_main(void *arg)
{
	struct jobs	*js = arg;
	struct api_job	*j, **pp;

	/* below the loop: a fold gives way when the cores are busy */
	(void)setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid),
	    JOBS_HEAVY_NICE);
	uv_mutex_lock(&js->mu);
	for (;;) {
		while (js->todo == NULL && !js->quit)
			uv_cond_wait(&js->cv, &js->mu);
		if ((j = js->todo) == NULL)
			break;
		js->todo = j->tnext;
		if (js->todo == NULL)
			js->todo_tail = NULL;
		j->tnext = NULL;
		js->busy = 1;
		uv_mutex_unlock(&js->mu);
		job_run(j);
		uv_mutex_lock(&js->mu);
		js->busy = 0;
		for (pp = &js->done_q; *pp != NULL; pp = &(*pp)->tnext)
			;
		*pp = j;
		/* under the lock, so the loop never closes the handle
		 * between our last look and this send */
		uv_async_send(&js->async);
	}
	js->ended = 1;
	uv_async_send(&js->async);
	uv_mutex_unlock(&js->mu);
}

/* On the loop: what the heavy thread finished; once it has ended, the
 * handle closes and the loop may run out. */
static void
on_heavy(uv_async_t *a)
{
	struct jobs	*js = a->data;
	struct api_job	*list, *j;
	int		 ended;

	uv_mutex_lock(&js->mu);
	list = js->done_q;
	js->done_q = NULL;
	ended = js->ended;
	uv_mutex_unlock(&js->mu);
	while ((j = list) != NULL) {
		list = j->tnext;
		j->tnext = NULL;
		job_after(&j->req, 0);
	}
	if (ended && js->async_up) {
		js->async_up = 0;
		uv_close((uv_handle_t *)&js->async, NULL);
	}
}

/* Started with the first heavy job.  0, or a libuv error. */
static int
heavy_up(struct jobs *js)
{
	int	rc;

	if (js->thread_up)
		return 0;
	if (js->no_thread)
		return -EAGAIN;
	if ((rc = uv_mutex_init(&js->mu)) != 0)
		return rc;
	if ((rc = uv_cond_init(&js->cv)) != 0) {
		uv_mutex_destroy(&js->mu);
		return rc;
	}
	if ((rc = uv_async_init(js->loop, &js->async, on_heavy)) != 0) {
		uv_cond_destroy(&js->cv);
		uv_mutex_destroy(&js->mu);
		return rc;
	}
	js->async.data = js;
	js->async_up = 1;
	if ((rc = uv_thread_create(&js->tid, heavy_main, js)) != 0) {
		/* heavy jobs go to the pool from now on; the mutex and cond
		 * are destroyed in jobs_free, once the handle has closed */
		log_warnx("%s: no thread for folds (%s): they share the pool",
		    __func__, uv_strerror(rc));
		js->async_up = 0;
		uv_close((uv_handle_t *)&js->async, NULL);
		js->no_thread = 1;
		return rc;
	}
	js->thread_up = 1;
	return 0;
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
	j->now_ms = base_now_ms();
	atomic_init(&j->gone, 0);
	return j;
}

int
job_start(struct api_job *j)
{
	struct jobs	*js = j->js;
	int		 rc;

	if (j->heavy && js->heavy >= JOBS_HEAVY_MAX) {
		js->refused++;
		job_discard(j);
		return -EBUSY;
	}
	if (j->heavy && !js->stopping && (rc = heavy_up(js)) == 0) {
		uv_mutex_lock(&js->mu);
		if (js->busy || js->todo != NULL)
			js->waited++;
		if (js->todo_tail)
			js->todo_tail->tnext = j;
		else
			js->todo = j;
		js->todo_tail = j;
		uv_cond_signal(&js->cv);
		uv_mutex_unlock(&js->mu);
		js->heavy++;
	} else if ((rc = uv_queue_work(js->loop, &j->req, job_work,
	    job_after)) != 0) {
		log_warnx("%s: uv_queue_work: %s", __func__, uv_strerror(rc));
		job_discard(j);
		return rc;
	} else if (j->heavy)
		js->heavy++;	/* no thread of its own: on the pool */
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
	struct api_job	*list, *j;

	js->stopping = 1;
	if (!js->thread_up)
		return;
	uv_mutex_lock(&js->mu);
	list = js->todo;
	js->todo = js->todo_tail = NULL;
	js->quit = 1;
	uv_cond_signal(&js->cv);
	uv_mutex_unlock(&js->mu);
	while ((j = list) != NULL) {
		list = j->tnext;
		j->tnext = NULL;
		job_fail(j, 503, "busy", "the daemon is stopping");
		job_after(&j->req, 0);
	}
}

void
jobs_free(struct jobs *js)
{
	if (js->thread_up)
		uv_thread_join(&js->tid);
	if (js->thread_up || js->no_thread) {
		uv_cond_destroy(&js->cv);
		uv_mutex_destroy(&js->mu);
	}
	js->thread_up = js->no_thread = 0;
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
