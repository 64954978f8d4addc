/*
 * saver — a tailer's cursor persisted off the loop thread (saver.h).
 *
 * Two writers may meet: the pool's background save and saver_sync() on
 * the loop thread (SIGTERM).  Each takes a sequence number when its
 * snapshot is taken, and writes under the mutex only if nothing newer
 * was written meanwhile, so the file never goes back to an older cursor.
 */
#include <stdio.h>
#include <string.h>
#include <syslog.h>

#include <uv.h>

#include "watchers/saver.h"

static int
cursor_same(const struct cursor *a, const struct cursor *b)
{
	return a->generation == b->generation && a->offset == b->offset &&
	    a->dev == b->dev && a->ino == b->ino;
}

static void
maybe_done(struct saver *s)
{
	if (!s->closing || s->finished || s->timer_open || s->inflight)
		return;
	s->finished = 1;
	uv_mutex_destroy(&s->mu);
	if (s->done != NULL)
		s->done(s->arg);
}

static void
save_work(uv_work_t *req)
{
	struct saver	*s = req->data;
	int		 rc = 0;

	/* A saver_sync may have written a newer cursor meanwhile: keep it. */
	uv_mutex_lock(&s->mu);
	if (s->snap_seq > s->saved_seq &&
	    (rc = cursor_save(s->path, &s->snap)) == 0)
		s->saved_seq = s->snap_seq;
	uv_mutex_unlock(&s->mu);
	s->work_rc = rc;
}

static void
save_after(uv_work_t *req, int status)
{
	struct saver	*s = req->data;
	int		 was = s->rc;

	s->inflight = 0;
	s->rc = status < 0 ? status : s->work_rc;
	/*
	 * Said once when saves start failing and once when they work again,
	 * not per save: a read-only or full state directory would otherwise
	 * write a line for every record.  Reading goes on meanwhile; only a
	 * restart would read again from the last saved point.
	 */
	if (!s->closing && s->rc < 0 && was >= 0)
		base_log(s->log, s->log_arg, LOG_WARNING, "%s: cannot save "
		    "the cursor to %s: %s; reading goes on (a restart now "
		    "would read again from the last saved point)", s->name,
		    s->path, strerror(-s->rc));
	else if (!s->closing && s->rc == 0 && was < 0)
		base_log(s->log, s->log_arg, LOG_INFO, "%s: the cursor can be "
		    "saved again", s->name);
	s->last_ms = uv_now(s->loop);
	if (status == 0)
		s->saves++;
	/* A failed save is retried when the cursor next moves, not in a
	 * loop: a full disk must not turn into a busy timer. */
	if (s->rc < 0)
		memset(&s->last, 0, sizeof(s->last));
	if (s->closing) {
		maybe_done(s);
		return;
	}
	if (s->dirty)
		saver_request(s);
}

static void
save_start(struct saver *s)
{
	struct cursor	c;
	int		rc;

	s->dirty = 0;
	s->snapshot(s->arg, &c);
	if (cursor_same(&c, &s->last))
		return;
	s->snap = c;
	s->last = c;
	s->snap_seq = ++s->seq;
	s->req.data = s;
	s->inflight = 1;
	if ((rc = uv_queue_work(s->loop, &s->req, save_work,
	    save_after)) < 0) {
		s->inflight = 0;
		s->rc = rc;
		memset(&s->last, 0, sizeof(s->last));
	}
}

static void
on_timer(uv_timer_t *h)
{
	saver_request(h->data);
}

int
saver_init(struct saver *s, uv_loop_t *loop, const char *path,
    const char *name, saver_snapshot_fn *snapshot, void *arg,
    base_log_fn *log, void *log_arg)
{
	int	rc;

	memset(s, 0, sizeof(*s));
	if (path != NULL && (size_t)snprintf(s->path, sizeof(s->path), "%s",
	    path) >= sizeof(s->path))
		return UV_ENAMETOOLONG;
	s->kept = path != NULL;
	if ((rc = uv_mutex_init(&s->mu)) < 0)
		return rc;
	s->loop = loop;
	s->name = name;
	s->snapshot = snapshot;
	s->arg = arg;
	s->log = log;
	s->log_arg = log_arg;
	/* Cannot fail on a valid loop. */
	uv_timer_init(loop, &s->timer);
	s->timer.data = s;
	return 0;
}

int
saver_load(struct saver *s, struct cursor *c, char *why, size_t cap)
{
	int	rc;

	if (!s->kept)
		return UV_ENOENT;
	if ((rc = cursor_load(s->path, c, why, cap)) == 0)
		s->last = *c;
	return rc;
}

void
saver_request(struct saver *s)
{
	uint64_t	since;

	if (!s->kept || s->closing)
		return;
	if (s->inflight || uv_is_active((uv_handle_t *)&s->timer)) {
		s->dirty = 1;
		return;
	}
	since = uv_now(s->loop) - s->last_ms;
	if (s->saves > 0 && since < s->interval_ms) {
		s->dirty = 1;
		uv_timer_start(&s->timer, on_timer, s->interval_ms - since, 0);
		return;
	}
	save_start(s);
}

int
saver_sync(struct saver *s, const struct cursor *c)
{
	uint64_t	seq;
	int		rc;

	if (!s->kept)
		return 0;
	seq = ++s->seq;
	/* Once closed, no save can be on the pool, and the mutex is gone. */
	if (!s->finished)
		uv_mutex_lock(&s->mu);
	if ((rc = cursor_save(s->path, c)) == 0)
		s->saved_seq = seq;
	if (!s->finished)
		uv_mutex_unlock(&s->mu);
	s->rc = rc;
	if (rc == 0)
		s->last = *c;
	return rc;
}

static void
on_timer_closed(uv_handle_t *h)
{
	struct saver	*s = h->data;

	s->timer_open = 0;
	maybe_done(s);
}

void
saver_close(struct saver *s, void (*done)(void *arg))
{
	if (s->closing)
		return;
	s->closing = 1;
	s->done = done;
	/* Queued but not running: comes back as cancelled. */
	if (s->inflight)
		uv_cancel((uv_req_t *)&s->req);
	s->timer_open = 1;
	uv_close((uv_handle_t *)&s->timer, on_timer_closed);
}
