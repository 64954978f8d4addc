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

static void
job_after(uv_work_t *w, int status)
{
	struct api_job	*j = w->data;

	(void)status;
	if (j->js != NULL) {
		unlink_job(j);
		j->js->n--;
		if (j->r != NULL) {
			j->r->cancel = NULL;
			j->r->cancel_arg = NULL;
		}
		if (j->done)
			j->done(j);
	}
	job_discard(j);
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
	int	rc;

	if ((rc = uv_queue_work(j->js->loop, &j->req, job_work, job_after))
	    != 0) {
		log_warnx("%s: uv_queue_work: %s", __func__, uv_strerror(rc));
		job_discard(j);
		return rc;
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
jobs_orphan(struct jobs *js)
{
	struct api_job	*j;

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
