/*
 * tailer — byte-cursor tailing of one ledger file on a libuv loop
 * (tailer.h; the why of every rule is in docs/tailing.md).
 *
 * The tailer is a small state machine driven by one "cycle":
 *
 *   event ──► probe (thread pool: stat path and dir, fstat or open the
 *             file, check the saved cursor) ──► decide ──► read a chunk
 *             (uv_fs_read) ──► feed lines ──► read again, or probe again
 *             if an event came in meanwhile, or go idle.
 *
 * Exactly one operation is in flight (`op`), so there is one read at a
 * time and no two decisions race.  Events arriving meanwhile only set
 * `dirty`, which makes the cycle probe once more before going idle: that
 * is what makes coalesced or lost watch events (an inotify queue
 * overflow) harmless — any event leads to a fresh stat and a read to the
 * end of the file.
 *
 * Identity while running: we hold the file open, so its inode cannot be
 * reused under us; a replacement shows as the path naming another inode.
 * Truncation shows as size < bytes read.  Truncate-then-regrow between two
 * looks is caught by the read overlap: every read starts up to
 * CURSOR_WINDOW bytes before the read position and those bytes must equal
 * what we read there before.
 */
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ledger/ledger.h"
#include "tailer.h"
#include "watchers/fstrust.h"

#define BACKEND_EVENTS	FSTRUST_EVENTS

#define NEW_GEN		", starting a new generation from byte 0"

enum { OP_NONE, OP_PROBE, OP_READ, OP_DECIDE, OP_FEED, OP_HELD };
enum { WATCH_NONE, WATCH_DIR, WATCH_GP };

static void	cycle_probe(struct tailer *);
static void	cycle_end(struct tailer *);
static void	read_next(struct tailer *);
static void	feed(struct tailer *);
static void	save_request(struct tailer *);
static void	close_maybe_finish(struct tailer *);

/* --- small helpers ---------------------------------------------------- */

static void
stat_fill(struct tailer_stat *ts, const struct stat *st)
{
	ts->rc = 0;
	ts->is_reg = S_ISREG(st->st_mode);
	ts->dev = (uint64_t)st->st_dev;
	ts->ino = (uint64_t)st->st_ino;
	ts->size = (uint64_t)st->st_size;
#if defined(__APPLE__)
	ts->mtime_sec = st->st_mtimespec.tv_sec;
	ts->mtime_nsec = st->st_mtimespec.tv_nsec;
#else
	ts->mtime_sec = st->st_mtim.tv_sec;
	ts->mtime_nsec = st->st_mtim.tv_nsec;
#endif
}

static void
stat_path(const char *path, struct tailer_stat *ts)
{
	struct stat	st;

	memset(ts, 0, sizeof(*ts));
	if (stat(path, &st) == -1)
		ts->rc = -errno;
	else
		stat_fill(ts, &st);
}

/* dirname into `out`; "." for a bare name. */
static int
parent_of(const char *path, char *out, size_t cap)
{
	const char	*slash = strrchr(path, '/');
	size_t		 n;

	if (slash == NULL)
		n = (size_t)snprintf(out, cap, ".");
	else if (slash == path)
		n = (size_t)snprintf(out, cap, "/");
	else
		n = (size_t)snprintf(out, cap, "%.*s", (int)(slash - path),
		    path);
	return n >= cap ? -ENAMETOOLONG : 0;
}

static const char *
base_of(const char *path)
{
	const char	*slash = strrchr(path, '/');

	return slash == NULL ? path : slash + 1;
}

/* --- lines ------------------------------------------------------------ */

static enum tail_phase
phase_of(const struct tailer *t, uint64_t end)
{
	if (end <= t->seed_end)
		return TAIL_SEED;
	if (end <= t->catchup_end)
		return TAIL_CATCHUP;
	return TAIL_LIVE;
}

/* From linesplit.  Nothing is delivered once closing, and then the cursor
 * does not move either: `delivered` is only ever what the consumer saw. */
static void
on_split_line(void *arg, const char *line, size_t len, uint64_t offset)
{
	struct tailer	*t = arg;
	uint64_t	 end = offset + len + 1;

	if (t->closing)
		return;
	t->delivered = end;
	t->lines++;
	t->cbs.line(t->cbs.arg, line, len, offset, phase_of(t, end));
}

static void
on_split_long(void *arg, uint64_t offset, uint64_t len)
{
	struct tailer	*t = arg;
	uint64_t	 end = offset + len + 1;

	if (t->closing)
		return;
	t->delivered = end;
	t->long_lines++;
	if (t->cbs.long_line != NULL)
		t->cbs.long_line(t->cbs.arg, offset, len, phase_of(t, end));
}

/* --- the stream of one generation ------------------------------------- */

static void
stream_restart(struct tailer *t)
{
	linesplit_reset(&t->ls, 0);
	t->read_pos = t->chunk_start = 0;
	t->chunk_len = t->feed_pos = 0;
	t->win_len = 0;
	t->delivered = 0;
	t->hash_at = 0;
	t->hash = CURSOR_HASH_INIT;
	t->hash_len = 0;
	t->seen_mtime_sec = t->seen_mtime_nsec = -1;
}

/*
 * Announce a new generation.  `why` NULL: the reason kept from start-up
 * or from the switch that led here.
 */
static void
generation_new(struct tailer *t, const char *why)
{
	char	buf[sizeof(t->pending_why)];

	snprintf(buf, sizeof(buf), "%s", why != NULL ? why :
	    t->pending_why[0] != '\0' ? t->pending_why :
	    "the file appeared, reading it from byte 0");
	t->pending_why[0] = '\0';
	t->generation++;
	t->seed_end = 0;
	stream_restart(t);
	t->cbs.reset(t->cbs.arg, t->generation, buf);
	save_request(t);
}

/*
 * The hash of the window before `at`, where hash_at <= at <= read_pos and
 * the chunk in hand is still in rbuf.  The bytes come from the chunk and,
 * for what it lacks, from the end of `win` (which ends at chunk_start).
 */
static void
window_hash(const struct tailer *t, uint64_t at, uint64_t *hash,
    uint32_t *len)
{
	const char	*data = t->rbuf + t->win_len;
	uint32_t	 n = at < CURSOR_WINDOW ? (uint32_t)at : CURSOR_WINDOW;
	uint64_t	 in_chunk = at - t->chunk_start;
	uint64_t	 h = CURSOR_HASH_INIT;

	if (at == t->hash_at) {
		*hash = t->hash;
		*len = t->hash_len;
		return;
	}
	if (in_chunk >= n)
		h = cursor_hash_more(h, data + in_chunk - n, n);
	else {
		uint32_t	from_win = n - (uint32_t)in_chunk;

		h = cursor_hash_more(h, t->win + t->win_len - from_win,
		    from_win);
		h = cursor_hash_more(h, data, (size_t)in_chunk);
	}
	*hash = h;
	*len = n;
}

static void
snapshot(const struct tailer *t, struct cursor *c)
{
	memset(c, 0, sizeof(*c));
	c->generation = t->generation;
	c->offset = t->delivered;
	c->dev = t->dev;
	c->ino = t->ino;
	c->size_seen = t->size > t->delivered ? t->size : t->delivered;
	window_hash(t, t->delivered, &c->hash, &c->hash_len);
}

/* The chunk is fed: remember the cursor's hash and slide the window. */
static void
chunk_done(struct tailer *t)
{
	const char	*data = t->rbuf + t->win_len;
	uint64_t	 h;
	uint32_t	 n;

	if (t->delivered != t->hash_at) {
		window_hash(t, t->delivered, &h, &n);
		t->hash_at = t->delivered;
		t->hash = h;
		t->hash_len = n;
	}
	if (t->chunk_len >= CURSOR_WINDOW) {
		memcpy(t->win, data + t->chunk_len - CURSOR_WINDOW,
		    CURSOR_WINDOW);
		t->win_len = CURSOR_WINDOW;
	} else if (t->chunk_len > 0) {
		size_t	keep = CURSOR_WINDOW - t->chunk_len;

		if (keep > t->win_len)
			keep = t->win_len;
		memmove(t->win, t->win + t->win_len - keep, keep);
		memcpy(t->win + keep, data, t->chunk_len);
		t->win_len = (uint32_t)(keep + t->chunk_len);
	}
	t->chunk_start += t->chunk_len;
	t->chunk_len = t->feed_pos = 0;
}

/* --- watches ---------------------------------------------------------- */

static void
kick(struct tailer *t)
{
	t->dirty = 1;
	if (t->op == OP_NONE && t->started && !t->closing && !t->paused)
		cycle_probe(t);
}

static void
on_poll_timer(uv_timer_t *h)
{
	kick(h->data);
}

/*
 * From now on, stat polling.  One way: once a watch failed we do not
 * trust the kernel's events for this file again in this run.
 *
 * Polling is a timer that runs the ordinary probe (stat of the path and
 * the directory, fstat of the file we hold), not uv_fs_poll: uv_fs_poll
 * reports a change relative to its own previous stat, which is not what
 * the tailer last saw.  A file that appears, is opened by us (after some
 * other wake-up) and is deleted between two of its polls looks unchanged
 * to it (missing, then missing), and writes to a renamed or deleted file
 * we still hold never show on the path at all.  The probe compares with
 * the tailer's own state, so nothing can fall between two views; it
 * costs two stats more per tick.
 */
static void
backend_poll(struct tailer *t, const char *why)
{
	int	rc;

	if (t->use_poll)
		return;
	t->use_poll = 1;
	t->backend = "poll";
	snprintf(t->backend_why, sizeof(t->backend_why), "%s", why);
	uv_fs_event_stop(&t->ev_file);
	uv_fs_event_stop(&t->ev_dir);
	t->dir_watch = WATCH_NONE;
	if ((rc = uv_timer_start(&t->poll_timer, on_poll_timer, t->poll_ms,
	    t->poll_ms)) < 0)
		t->error = rc;
	t->dirty = 1;
}

/*
 * Our own file changed.  When idle, read first and probe after: the read
 * carries its own overlap check (truncation, rewrite), and the probe that
 * `dirty` still schedules once the new lines are handed over catches a
 * rename or replacement.  That takes a thread-pool round trip off the
 * path from an append to its line.
 */
static void
on_file_event(uv_fs_event_t *h, const char *name, int events, int status)
{
	struct tailer	*t = h->data;

	(void)name;
	(void)status;
	if (!(events & UV_RENAME) && t->op == OP_NONE && t->fd >= 0 &&
	    t->started && t->ready_sent && !t->closing && !t->paused &&
	    !t->draining) {
		t->dirty = 1;
		read_next(t);
		return;
	}
	kick(t);
}

/*
 * Events in the directory.  A change (not a rename) of our own file is
 * also reported by the file watch; it is dropped here only when the cycle
 * is idle and the path was, at the last probe, the file we hold: any
 * change of what the path names since then came as a rename event and
 * started a cycle, so nothing can be lost by dropping it.
 */
static void
on_dir_event(uv_fs_event_t *h, const char *name, int events, int status)
{
	struct tailer	*t = h->data;

	(void)status;
	if (name != NULL && t->dir_watch == WATCH_DIR) {
		if (strcmp(name, t->base) == 0) {
			if (!(events & UV_RENAME) && t->op == OP_NONE &&
			    !t->draining && uv_is_active((uv_handle_t *)
			    &t->ev_file))
				return;
		} else if (strcmp(name, t->dirbase) != 0)
			return;		/* profile.json, fixes.jsonl, … */
	} else if (name != NULL && t->dir_watch == WATCH_GP) {
		if (strcmp(name, t->dirbase) != 0 &&
		    strcmp(name, t->gpbase) != 0)
			return;		/* the rest of the project */
	}
	kick(t);
}

/* Watch the directory, or its parent while the directory is missing. */
static void
dir_watch_set(struct tailer *t, int want, const struct tailer_stat *dir)
{
	char	why[sizeof(t->backend_why)];
	int	rc;

	if (t->use_poll)
		return;
	if (t->dir_watch == want && (want != WATCH_DIR ||
	    (dir->dev == t->dir_dev && dir->ino == t->dir_ino)))
		return;
	uv_fs_event_stop(&t->ev_dir);
	t->dir_watch = WATCH_NONE;
	rc = uv_fs_event_start(&t->ev_dir, on_dir_event,
	    want == WATCH_DIR ? t->dir : t->gp, 0);
	if (rc == UV_ENOENT && want == WATCH_DIR) {
		/* Gone again between the stat and the watch. */
		want = WATCH_GP;
		rc = uv_fs_event_start(&t->ev_dir, on_dir_event, t->gp, 0);
	}
	if (rc < 0) {
		snprintf(why, sizeof(why), "cannot watch %s: %s",
		    want == WATCH_DIR ? t->dir : t->gp, uv_strerror(rc));
		backend_poll(t, why);
		return;
	}
	t->dir_watch = want;
	t->dir_dev = want == WATCH_DIR ? dir->dev : 0;
	t->dir_ino = want == WATCH_DIR ? dir->ino : 0;
	/* Whatever happened between our stat and the watch: look again. */
	t->dirty = 1;
}

static void
file_watch_set(struct tailer *t)
{
	char	why[sizeof(t->backend_why)];
	int	rc;

	if (t->use_poll)
		return;
	uv_fs_event_stop(&t->ev_file);
	/*
	 * By path, right after the open: if the path was replaced in
	 * between we watch the wrong inode, which only delays draining
	 * the one we hold until the new file has content (see docs).
	 */
	rc = uv_fs_event_start(&t->ev_file, on_file_event, t->path, 0);
	if (rc < 0 && rc != UV_ENOENT) {
		snprintf(why, sizeof(why), "cannot watch %s: %s", t->path,
		    uv_strerror(rc));
		backend_poll(t, why);
	}
}

/* --- the cycle: probe ------------------------------------------------- */

/*
 * In the thread pool: everything that may block before a read.  Touches
 * only the probe and what does not change while it is in flight (the
 * paths, start_cursor).
 */
static void
probe_work(uv_work_t *req)
{
	struct tailer		*t = req->data;
	struct tailer_probe	*p = &t->probe;
	struct stat		 st;
	int			 fd;

	p->new_fd = -1;
	p->open_rc = p->verify_rc = 0;
	p->why[0] = '\0';
	memset(&p->fd_st, 0, sizeof(p->fd_st));
	if (p->close_fd >= 0) {
		close(p->close_fd);
		p->close_fd = -1;
	}
	/*
	 * The path first, then the file we hold: the rotation rule (switch
	 * once the new file has content) relies on it.  A writer appends to
	 * its old descriptor before it writes the new file, so if this stat
	 * sees the new file non-empty, the fstat below sees all the old
	 * file will ever get from it, and we read that before switching.
	 */
	stat_path(t->path, &p->path_st);
	stat_path(t->dir, &p->dir_st);
	if (p->fd >= 0) {
		if (fstat(p->fd, &st) == -1)
			p->fd_st.rc = -errno;
		else
			stat_fill(&p->fd_st, &st);
		return;
	}
	if (!p->open || p->path_st.rc < 0)
		return;
	/* O_NONBLOCK: a FIFO at the path must not hang a pool thread. */
	if ((fd = open(t->path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)) == -1) {
		p->open_rc = -errno;
		return;
	}
	if (fstat(fd, &st) == -1) {
		p->open_rc = -errno;
		close(fd);
		return;
	}
	if (!S_ISREG(st.st_mode)) {
		p->open_rc = -EINVAL;	/* a directory, a FIFO: not a ledger */
		close(fd);
		return;
	}
	stat_fill(&p->fd_st, &st);
	p->new_fd = fd;
	if (p->verify)
		p->verify_rc = cursor_verify(&t->start_cursor, fd, p->why,
		    sizeof(p->why));
}

static void	probe_after(uv_work_t *, int);

static void
cycle_probe(struct tailer *t)
{
	struct tailer_probe	*p = &t->probe;
	int			 rc;

	if (t->closing) {
		t->op = OP_NONE;
		return;
	}
	t->dirty = 0;
	p->fd = t->fd;
	p->close_fd = t->close_fd;
	t->close_fd = -1;
	p->open = t->fd < 0;
	p->verify = p->open && t->start_verify;
	p->req.data = t;
	t->op = OP_PROBE;
	if ((rc = uv_queue_work(t->loop, &p->req, probe_work,
	    probe_after)) < 0) {
		t->error = rc;
		t->close_fd = p->close_fd;
		t->op = OP_NONE;
	}
}

/* A file was opened at the path: a resumed or a new generation. */
static void
file_opened(struct tailer *t, struct tailer_probe *p)
{
	t->fd = p->new_fd;
	p->new_fd = -1;
	t->dev = p->fd_st.dev;
	t->ino = p->fd_st.ino;
	t->size = p->fd_st.size;
	t->draining = 0;
	t->error = 0;
	file_watch_set(t);
	if (p->verify && p->verify_rc == 0) {
		/* The file of the last run: all before the cursor is seed. */
		t->start_verify = 0;
		stream_restart(t);
		t->seed_end = t->start_cursor.offset;
	} else {
		if (p->verify) {
			t->start_verify = 0;
			snprintf(t->pending_why, sizeof(t->pending_why),
			    p->verify_rc == -ESTALE ?
			    "cursor does not match the file: %s" NEW_GEN :
			    "cursor could not be checked (%s)" NEW_GEN,
			    p->verify_rc == -ESTALE ? p->why :
			    strerror(-p->verify_rc));
		}
		generation_new(t, NULL);
		if (t->closing) {
			t->op = OP_NONE;
			return;
		}
	}
	t->catchup_end = t->ready_sent ? 0 : t->size;
	t->probe_mtime_sec = p->fd_st.mtime_sec;
	t->probe_mtime_nsec = p->fd_st.mtime_nsec;
	read_next(t);
}

static void
probe_after(uv_work_t *req, int status)
{
	struct tailer		*t = req->data;
	struct tailer_probe	*p = &t->probe;
	char			 why[256];
	int			 same;

	t->op = OP_DECIDE;
	if (p->close_fd >= 0) {		/* cancelled before it ran */
		close(p->close_fd);
		p->close_fd = -1;
	}
	if (status < 0 || t->closing) {
		if (p->new_fd >= 0)
			close(p->new_fd);
		p->new_fd = -1;
		if (status < 0 && !t->closing)
			t->error = status;
		t->op = OP_NONE;
		close_maybe_finish(t);
		return;
	}
	t->file_exists = p->path_st.rc == 0 && p->path_st.is_reg;
	dir_watch_set(t, p->dir_st.rc == 0 ? WATCH_DIR : WATCH_GP, &p->dir_st);
	if (p->new_fd >= 0) {
		file_opened(t, p);
		return;
	}
	if (t->fd < 0) {
		if (p->path_st.rc == 0 && p->open_rc < 0)
			t->error = p->open_rc;
		if (p->verify) {
			t->start_verify = 0;
			snprintf(t->pending_why, sizeof(t->pending_why),
			    "the file was missing at start (deleted while "
			    "stopped?), reading it from byte 0 as it appears"
			    NEW_GEN);
		}
		cycle_end(t);
		return;
	}
	if (p->fd_st.rc < 0) {
		t->error = p->fd_st.rc;
		cycle_end(t);
		return;
	}

	same = p->path_st.rc == 0 && p->path_st.dev == t->dev &&
	    p->path_st.ino == t->ino;
	t->draining = !same;
	if (p->fd_st.size < t->read_pos) {
		snprintf(why, sizeof(why), "truncated (size %" PRIu64
		    " < %" PRIu64 " bytes read)" NEW_GEN, p->fd_st.size,
		    t->read_pos);
		t->size = p->fd_st.size;
		generation_new(t, why);
		t->catchup_end = 0;
		if (t->closing) {
			t->op = OP_NONE;
			return;
		}
	}
	t->size = p->fd_st.size;
	if (p->fd_st.size > t->read_pos ||
	    p->fd_st.mtime_sec != t->seen_mtime_sec ||
	    p->fd_st.mtime_nsec != t->seen_mtime_nsec) {
		/* Grown, or touched: a read (with its overlap check) tells. */
		t->probe_mtime_sec = p->fd_st.mtime_sec;
		t->probe_mtime_nsec = p->fd_st.mtime_nsec;
		read_next(t);
		return;
	}
	if (!same && p->path_st.rc == 0 && p->path_st.is_reg &&
	    p->path_st.size > 0) {
		/*
		 * The old file is read to its end and the new one has
		 * content.  A writer appends to the old descriptor before it
		 * writes the new file, so nothing of the old one can come
		 * after this point: switch.
		 */
		snprintf(t->pending_why, sizeof(t->pending_why),
		    "the path names a new file (rotated, replaced or "
		    "re-created); the old one was read to its end" NEW_GEN);
		uv_fs_event_stop(&t->ev_file);
		t->close_fd = t->fd;
		t->fd = -1;
		t->draining = 0;
		cycle_probe(t);
		return;
	}
	cycle_end(t);
}

/* --- the cycle: read and feed ----------------------------------------- */

static void	on_read(uv_fs_t *);

/*
 * Read the next chunk, starting win_len bytes early: those bytes must be
 * what we read there before (the overlap check).
 */
static void
read_next(struct tailer *t)
{
	uv_buf_t	buf;
	int		rc;

	if (t->closing) {
		t->op = OP_NONE;
		return;
	}
	if (t->paused) {
		t->dirty = 1;	/* resume starts a fresh cycle */
		t->op = OP_NONE;
		return;
	}
	buf = uv_buf_init(t->rbuf, (unsigned)(t->win_len + t->rbuf_chunk));
	t->rreq.data = t;
	t->op = OP_READ;
	rc = uv_fs_read(t->loop, &t->rreq, t->fd, &buf, 1,
	    (int64_t)(t->read_pos - t->win_len), on_read);
	if (rc < 0) {
		t->error = rc;
		cycle_end(t);
	}
}

static void
on_read(uv_fs_t *req)
{
	struct tailer	*t = req->data;
	ssize_t		 n = req->result;
	const char	*why = NULL;

	uv_fs_req_cleanup(req);
	t->op = OP_DECIDE;
	if (t->closing) {
		t->op = OP_NONE;
		close_maybe_finish(t);
		return;
	}
	if (n < 0) {
		t->error = (int)n;
		cycle_end(t);
		return;
	}
	if ((size_t)n < t->win_len)
		why = "the file shrank under the read position (truncated)"
		    NEW_GEN;
	else if (memcmp(t->rbuf, t->win, t->win_len) != 0)
		why = "the bytes before the read position changed (truncated "
		    "and rewritten)" NEW_GEN;
	if (why != NULL) {
		generation_new(t, why);
		t->catchup_end = 0;
		read_next(t);
		return;
	}
	t->error = 0;
	t->seen_mtime_sec = t->probe_mtime_sec;
	t->seen_mtime_nsec = t->probe_mtime_nsec;
	t->chunk_start = t->read_pos;
	t->chunk_len = (size_t)n - t->win_len;
	t->feed_pos = 0;
	t->read_pos += t->chunk_len;
	if (t->size < t->read_pos)
		t->size = t->read_pos;
	feed(t);
}

/*
 * Hand the chunk's lines over one at a time, so that a pause asked for by
 * a line callback takes effect at the next line: the rest of the chunk
 * waits in rbuf (OP_HELD) and no later byte is read.
 */
static void
feed(struct tailer *t)
{
	const char	*data = t->rbuf + t->win_len;
	uint64_t	 before = t->hash_at;
	size_t		 got;

	t->op = OP_FEED;
	while (t->feed_pos < t->chunk_len) {
		const char	*p = data + t->feed_pos, *nl;
		size_t		 left = t->chunk_len - t->feed_pos, n;

		if (t->closing) {
			t->op = OP_NONE;
			return;
		}
		if (t->paused) {
			t->op = OP_HELD;
			return;
		}
		nl = memchr(p, '\n', left);
		n = nl != NULL ? (size_t)(nl - p) + 1 : left;
		/* Cannot fail: tailer_start made linesplit allocate. */
		(void)linesplit_feed(&t->ls, p, n);
		t->feed_pos += n;
	}
	if (t->closing) {
		t->op = OP_NONE;
		return;
	}
	got = t->chunk_len;
	chunk_done(t);
	t->op = OP_DECIDE;
	if (t->hash_at != before)
		save_request(t);
	if (got > 0 && (t->read_pos < t->size || got == t->rbuf_chunk))
		read_next(t);
	else if (t->dirty || t->draining)
		cycle_probe(t);		/* draining: decide the switch */
	else
		cycle_end(t);
}

/* Nothing in flight.  Say ready once; look again if an event came in. */
static void
cycle_end(struct tailer *t)
{
	t->op = OP_NONE;
	if (!t->ready_sent) {
		t->ready_sent = 1;
		if (t->cbs.ready != NULL)
			t->cbs.ready(t->cbs.arg);
		if (t->closing || t->op != OP_NONE)
			return;
	}
	if (t->dirty && !t->paused && !t->closing)
		cycle_probe(t);
}

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
		close_maybe_finish(t);
		return;
	}
	if (t->save_dirty)
		save_request(t);
}

static void
save_start(struct tailer *t)
{
	struct cursor	c;
	int		rc;

	t->save_dirty = 0;
	snapshot(t, &c);
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
	save_request(h->data);
}

/*
 * The cursor moved.  Coalesced: one save in flight, at most one started
 * per save_interval_ms, and the last position always gets written.  The
 * timer runs only while a save is owed, so an idle tailer has none.
 */
static void
save_request(struct tailer *t)
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
	snapshot(t, &c);
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

/* --- public ----------------------------------------------------------- */

static void
on_resume_timer(uv_timer_t *h)
{
	struct tailer	*t = h->data;

	if (t->paused || t->closing)
		return;
	if (t->op == OP_HELD)
		feed(t);
	else if (t->op == OP_NONE && t->dirty)
		cycle_probe(t);
}

int
tailer_init(struct tailer *t, uv_loop_t *loop, const char *path,
    const char *cursor_path, int force_poll, const struct tailer_cbs *cbs)
{
	int	rc;

	if (loop == NULL || path == NULL || path[0] == '\0' || cbs == NULL ||
	    cbs->line == NULL || cbs->reset == NULL)
		return UV_EINVAL;
	memset(t, 0, sizeof(*t));
	if ((size_t)snprintf(t->path, sizeof(t->path), "%s", path) >=
	    sizeof(t->path) ||
	    parent_of(t->path, t->dir, sizeof(t->dir)) < 0 ||
	    parent_of(t->dir, t->gp, sizeof(t->gp)) < 0)
		return UV_ENAMETOOLONG;
	if (cursor_path != NULL) {
		if ((size_t)snprintf(t->cursor_path, sizeof(t->cursor_path),
		    "%s", cursor_path) >= sizeof(t->cursor_path))
			return UV_ENAMETOOLONG;
		t->has_cursor = 1;
	}
	t->base = base_of(t->path);
	t->dirbase = base_of(t->dir);
	t->gpbase = base_of(t->gp);
	t->loop = loop;
	t->cbs = *cbs;
	t->force_poll = force_poll;
	t->chunk = TAILER_CHUNK;
	t->poll_ms = TAILER_POLL_MS;
	t->save_interval_ms = TAILER_SAVE_INTERVAL_MS;
	t->fd = t->close_fd = t->probe.new_fd = t->probe.close_fd = -1;
	t->backend = BACKEND_EVENTS;
	linesplit_init(&t->ls, LEDGER_MAX_LINE, on_split_line, on_split_long,
	    t);
	stream_restart(t);
	if ((rc = uv_mutex_init(&t->save_mu)) < 0)
		return rc;
	/* None of these can fail on a valid loop. */
	uv_fs_event_init(loop, &t->ev_file);
	uv_fs_event_init(loop, &t->ev_dir);
	uv_timer_init(loop, &t->poll_timer);
	uv_timer_init(loop, &t->save_timer);
	uv_timer_init(loop, &t->resume_timer);
	t->ev_file.data = t->ev_dir.data = t;
	t->poll_timer.data = t->save_timer.data = t->resume_timer.data = t;
	t->handles_open = 0;
	return 0;
}

int
tailer_start(struct tailer *t)
{
	char		 why[CURSOR_WHY_MAX], bwhy[sizeof(t->backend_why)];
	struct tailer_stat dir;
	int		 rc;

	if (t->started || t->closing)
		return UV_EINVAL;
	/* The buffer's size is fixed here: `chunk` is only read once. */
	t->rbuf_chunk = t->chunk;
	if (t->rbuf_chunk == 0 || t->rbuf_chunk > (size_t)INT32_MAX -
	    CURSOR_WINDOW)
		t->rbuf_chunk = TAILER_CHUNK;
	if ((t->rbuf = malloc(CURSOR_WINDOW + t->rbuf_chunk)) == NULL)
		return UV_ENOMEM;
	/*
	 * linesplit allocates its line buffer on its first feed; make that
	 * happen here, where failing is allowed, so feeding never can.
	 */
	if (linesplit_feed(&t->ls, "x", 1) < 0)
		return UV_ENOMEM;
	linesplit_reset(&t->ls, 0);

	if (!t->has_cursor)
		snprintf(t->pending_why, sizeof(t->pending_why),
		    "no cursor is kept for this file, reading it from byte 0");
	else if ((rc = cursor_load(t->cursor_path, &t->start_cursor, why,
	    sizeof(why))) == 0) {
		t->start_verify = 1;
		t->generation = t->start_cursor.generation;
		t->last_snap = t->start_cursor;
	} else if (rc == -ENOENT)
		snprintf(t->pending_why, sizeof(t->pending_why),
		    "first start (no cursor yet), reading from byte 0");
	else {
		/*
		 * The old generation number is lost with the cursor, and a
		 * reused number would make consumers dedupe new records as
		 * old ones: take the clock in milliseconds, which no count
		 * of generations can have reached, and which still grows if
		 * this happens twice in one second.
		 */
		uv_timeval64_t	now;

		if (uv_gettimeofday(&now) < 0)
			now.tv_sec = time(NULL), now.tv_usec = 0;
		t->generation = (uint64_t)now.tv_sec * 1000 +
		    (uint64_t)now.tv_usec / 1000 - 1;
		snprintf(t->pending_why, sizeof(t->pending_why), "%s" NEW_GEN,
		    why);
	}

	stat_path(t->dir, &dir);
	if (t->force_poll)
		backend_poll(t, "forced (--poll)");
	else if (!fstrust_check(dir.rc == 0 ? t->dir : t->gp, bwhy,
	    sizeof(bwhy)))
		backend_poll(t, bwhy);
	else {
		snprintf(t->backend_why, sizeof(t->backend_why), "%s", bwhy);
		dir_watch_set(t, dir.rc == 0 ? WATCH_DIR : WATCH_GP, &dir);
	}
	t->started = 1;
	kick(t);
	return 0;
}

void
tailer_pause(struct tailer *t)
{
	t->paused = 1;
}

void
tailer_resume(struct tailer *t)
{
	if (!t->paused)
		return;
	t->paused = 0;
	/* Not from here: the caller may be in the middle of its own work,
	 * and lines must not arrive inside tailer_resume(). */
	if (t->started && !t->closing && (t->op == OP_HELD ||
	    (t->op == OP_NONE && t->dirty)))
		uv_timer_start(&t->resume_timer, on_resume_timer, 0, 0);
}

static void
on_handle_closed(uv_handle_t *h)
{
	struct tailer	*t = h->data;

	t->handles_open--;
	close_maybe_finish(t);
}

/* Free everything once no handle, read, probe or save is outstanding. */
static void
close_maybe_finish(struct tailer *t)
{
	if (!t->closing || t->finished || t->handles_open > 0 ||
	    t->op == OP_PROBE || t->op == OP_READ || t->save_inflight)
		return;
	t->finished = 1;
	if (t->fd >= 0)
		close(t->fd);
	if (t->close_fd >= 0)
		close(t->close_fd);
	t->fd = t->close_fd = -1;
	linesplit_free(&t->ls);
	free(t->rbuf);
	t->rbuf = NULL;
	uv_mutex_destroy(&t->save_mu);
	if (t->done != NULL)
		t->done(t);
}

void
tailer_close(struct tailer *t, void (*done)(struct tailer *))
{
	if (t->closing)
		return;
	t->closing = 1;
	t->done = done;
	/* Whatever is queued but not running comes back as cancelled. */
	if (t->op == OP_PROBE)
		uv_cancel((uv_req_t *)&t->probe.req);
	else if (t->op == OP_READ)
		uv_cancel((uv_req_t *)&t->rreq);
	else
		t->op = OP_NONE;
	if (t->save_inflight)
		uv_cancel((uv_req_t *)&t->save_req);
	t->handles_open = 5;
	uv_close((uv_handle_t *)&t->ev_file, on_handle_closed);
	uv_close((uv_handle_t *)&t->ev_dir, on_handle_closed);
	uv_close((uv_handle_t *)&t->poll_timer, on_handle_closed);
	uv_close((uv_handle_t *)&t->save_timer, on_handle_closed);
	uv_close((uv_handle_t *)&t->resume_timer, on_handle_closed);
}

void
tailer_status(const struct tailer *t, struct tailer_status *st)
{
	memset(st, 0, sizeof(*st));
	st->backend = t->backend;
	st->backend_why = t->backend_why;
	st->generation = t->generation;
	st->cursor = t->delivered;
	st->read = t->read_pos;
	st->size = t->size > t->read_pos ? t->size : t->read_pos;
	st->lag = st->size > t->delivered ? st->size - t->delivered : 0;
	st->lines = t->lines;
	st->long_lines = t->long_lines;
	st->saves = t->saves;
	st->save_error = t->save_rc;
	st->error = t->error;
	st->file_exists = t->file_exists;
	st->draining = t->draining;
	st->paused = t->paused;
}
