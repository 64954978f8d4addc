/*
 * tailer_save — persisting the tailer's cursor: at most one save in
 * flight, at most one per save_interval_ms, off the loop thread; and the
 * synchronous save of SIGTERM.  See tailer.h.
 */
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <unistd.h>

#include <uv.h>

#include "watchers/tailer.h"
#include "watchers/tailer_impl.h"

/* --- cursor saves ----------------------------------------------------- */

static int
cursor_same(const struct cursor *a, const struct cursor *b)
{
	return a->generation == b->generation && a->offset == b->offset &&
	    a->dev == b->dev && a->ino == b->ino;
}

static void
save_work(uv_work_t *req)
{
	struct tailer	*t = req->data;
	int		 rc = 0;

	/* A save_sync may have written a newer cursor meanwhile: keep it. */
	uv_mutex_lock(&t->save_mu);
	if (t->save_snap_seq > t->saved_seq &&
	    (rc = cursor_save(t->cursor_path, &t->save_snap)) == 0)
		t->saved_seq = t->save_snap_seq;
	uv_mutex_unlock(&t->save_mu);
	t->save_work_rc = rc;
}

static void
save_after(uv_work_t *req, int status)
{
	struct tailer	*t = req->data;

	t->save_inflight = 0;
	t->save_rc = status < 0 ? status : t->save_work_rc;
	t->last_save_ms = uv_now(t->loop);
	if (status == 0)
		t->saves++;
	/* A failed save is retried when the cursor next moves, not in a
	 * loop: a full disk must not turn into a busy timer. */
	if (t->save_rc < 0)
		memset(&t->last_snap, 0, sizeof(t->last_snap));
	if (t->closing) {
		tailer_close_maybe_finish(t);
		return;
	}
	if (t->save_dirty)
		tailer_save_request(t);
}

static void
save_start(struct tailer *t)
{
	struct cursor	c;
	int		rc;

	t->save_dirty = 0;
	tailer_snapshot(t, &c);
	if (cursor_same(&c, &t->last_snap))
		return;
	t->save_snap = c;
	t->last_snap = c;
	t->save_snap_seq = ++t->save_seq;
	t->save_req.data = t;
	t->save_inflight = 1;
	if ((rc = uv_queue_work(t->loop, &t->save_req, save_work,
	    save_after)) < 0) {
		t->save_inflight = 0;
		t->save_rc = rc;
		memset(&t->last_snap, 0, sizeof(t->last_snap));
	}
}

static void
on_save_timer(uv_timer_t *h)
{
	tailer_save_request(h->data);
}

/*
 * The cursor moved.  Coalesced: one save in flight, at most one started
 * per save_interval_ms, and the last position always gets written.  The
 * timer runs only while a save is owed, so an idle tailer has none.
 */
void
tailer_save_request(struct tailer *t)
{
	uint64_t	since;

	if (!t->has_cursor || !t->started || t->closing || t->generation == 0)
		return;
	if (t->delivered < t->seed_end)
		return;		/* the saved cursor is still ahead of us */
	if (t->save_inflight ||
	    uv_is_active((uv_handle_t *)&t->save_timer)) {
		t->save_dirty = 1;
		return;
	}
	since = uv_now(t->loop) - t->last_save_ms;
	if (t->saves > 0 && since < t->save_interval_ms) {
		t->save_dirty = 1;
		uv_timer_start(&t->save_timer, on_save_timer,
		    t->save_interval_ms - since, 0);
		return;
	}
	save_start(t);
}

int
tailer_save_sync(struct tailer *t)
{
	struct cursor	c;
	uint64_t	seq;
	int		rc;

	if (!t->has_cursor || !t->started || t->generation == 0 ||
	    t->delivered < t->seed_end)
		return 0;
	tailer_snapshot(t, &c);
	seq = ++t->save_seq;
	uv_mutex_lock(&t->save_mu);
	if ((rc = cursor_save(t->cursor_path, &c)) == 0)
		t->saved_seq = seq;
	uv_mutex_unlock(&t->save_mu);
	t->save_rc = rc;
	if (rc == 0)
		t->last_snap = c;
	return rc;
}
