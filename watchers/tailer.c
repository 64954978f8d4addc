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
 *
 * Below it, and knowing nothing of reading: fswatch, which says when the
 * file or its path may have changed (on_change), and saver, which writes
 * the cursor off the loop and asks for it when a save starts
 * (on_snapshot).  Each is handed its callback and this tailer as an
 * opaque pointer; neither includes tailer.h.
 */
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include "ledger/ledger.h"
#include "watchers/fswatch.h"
#include "watchers/saver.h"
#include "watchers/tailer.h"

#define NEW_GEN		", starting a new generation from byte 0"

/* What the read cycle is doing (tailer.op): one operation at a time. */
enum { OP_NONE, OP_PROBE, OP_READ, OP_DECIDE, OP_FEED, OP_HELD };

static void	cycle_end(struct tailer *);
static void	cycle_probe(struct tailer *);
static void	read_next(struct tailer *);
static void	feed(struct tailer *);
static void	close_maybe_finish(struct tailer *);

/* --- small helpers ---------------------------------------------------- */

static void
stat_fill(struct tailer_stat *ts, const struct stat *st)
{
	ts->rc = 0;
	ts->is_reg = S_ISREG(st->st_mode);
	ts->mode = (unsigned)st->st_mode;
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

/* A sentence for the consumer's log; none once closing. */
static void
tailer_log(const struct tailer *t, int prio, const char *fmt, ...)
{
	va_list	ap;

	if (t->closing)
		return;
	va_start(ap, fmt);
	base_vlog(t->cbs.log, t->cbs.arg, prio, fmt, ap);
	va_end(ap);
}

static const char *
type_name(unsigned mode)
{
	switch (mode & S_IFMT) {
	case S_IFDIR:	return "a directory";
	case S_IFIFO:	return "a FIFO (named pipe)";
	case S_IFSOCK:	return "a socket";
	case S_IFCHR:	return "a character device";
	case S_IFBLK:	return "a block device";
	default:	return "of an unknown type";
	}
}

/* --- what the tailer uses: the watch backend and the saver ------------ */

/* Something may have changed: look, now if idle, else once the operation
 * in flight is over. */
static void
kick(struct tailer *t)
{
	t->dirty = 1;
	if (t->op == OP_NONE && t->started && !t->closing && !t->paused)
		cycle_probe(t);
}

/*
 * From the watch backend (fswatch.h).  A write to our own file, when
 * idle: read first and probe after.  The read carries its own overlap
 * check (truncation, rewrite), and the probe that `dirty` still schedules
 * once the new lines are handed over catches a rename or replacement.
 * That takes a thread-pool round trip off the path from an append to its
 * line.  The directory's echo of that write is dropped when the cycle is
 * idle and not draining: the path then named, at the last probe, the file
 * we hold, and any change of that came as an event of its own.
 */
static void
on_change(void *arg, enum fswatch_change what)
{
	struct tailer	*t = arg;

	if (what == FSWATCH_WRITE && t->op == OP_NONE && t->fd >= 0 &&
	    t->started && t->ready_sent && !t->closing && !t->paused &&
	    !t->draining) {
		t->dirty = 1;
		t->read_small = 1;
		read_next(t);
		return;
	}
	if (what == FSWATCH_ECHO && t->op == OP_NONE && !t->draining)
		return;
	kick(t);
}

/* What an fswatch call asks of us: look again, and keep the error. */
static void
watch_result(struct tailer *t, int rc)
{
	if (rc != 0)
		t->dirty = 1;
	if (rc < 0)
		t->error = rc;
}

/* The cursor moved: worth saving once it is past the saved one. */
static void
save_request(struct tailer *t)
{
	if (!t->has_cursor || !t->started || t->closing || t->generation == 0)
		return;
	if (t->delivered < t->seed_end)
		return;		/* the saved cursor is still ahead of us */
	saver_request(&t->saver);
}

static void
on_snapshot(void *arg, struct cursor *c)
{
	tailer_position(arg, c);
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
	if (t->next_fd >= 0 && end > t->late_from)
		t->late_lines++;
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
	if (t->next_fd >= 0 && end > t->late_from)
		t->late_lines++;
	if (t->cbs.long_line != NULL)
		t->cbs.long_line(t->cbs.arg, offset, len, phase_of(t, end));
}

/* --- the stream of one generation ------------------------------------- */

static void
stream_restart(struct tailer *t)
{
	linesplit_reset(&t->ls, 0);
	linesplit_prefix_start(&t->ls, 0, 0);	/* the cursor's prefix CRC */
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

/*
 * Resume the stream at a position the consumer already folded to (the
 * probe read the window before it and checked it): the same state
 * chunk_done() leaves behind at that offset, so the overlap check and
 * the cursor's hash go on from there.
 */
static void
stream_resume_at(struct tailer *t, const struct cursor *at, const char *win,
    uint32_t win_len)
{
	stream_restart(t);
	linesplit_reset(&t->ls, at->offset);
	if (at->flags & FILEMARK_PREFIX)
		linesplit_prefix_start(&t->ls, at->offset, at->prefix);
	t->read_pos = t->chunk_start = at->offset;
	memcpy(t->win, win, win_len);
	t->win_len = win_len;
	t->delivered = t->hash_at = at->offset;
	t->hash = at->hash;
	t->hash_len = at->hash_len;
}

void
tailer_position(const struct tailer *t, struct cursor *c)
{
	struct filemark	fm = { 0 };
	uint64_t	at;

	memset(c, 0, sizeof(*c));
	c->generation = t->generation;
	c->offset = t->delivered;
	c->dev = t->dev;
	c->ino = t->ino;
	c->size_seen = t->size > t->delivered ? t->size : t->delivered;
	window_hash(t, t->delivered, &c->hash, &c->hash_len);
	/* bound to the whole prefix, and to the file as it is now: a
	 * restart with the file untouched since reads none of it again
	 * (project/filemark.h) */
	if (linesplit_prefix(&t->ls, &c->prefix, &at) && at == t->delivered)
		c->flags |= FILEMARK_PREFIX;
	if (t->fd >= 0 && filemark_stat(t->fd, &fm) == 0) {
		c->flags |= fm.flags & FILEMARK_STAT;
		c->st_size = fm.size;
		c->mtime_ns = fm.mtime_ns;
		c->ctime_ns = fm.ctime_ns;
	}
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

/* --- the cycle: probe ------------------------------------------------- */

/*
 * Open `path` for reading without blocking — O_NONBLOCK, so that a FIFO
 * put there cannot hang a pool thread — and refuse what fstat says is not
 * a regular file.  0 or -errno (-EINVAL: not a regular file).
 */
static int
open_regular(const char *path, int *fdp, struct tailer_stat *ts)
{
	struct stat	st;
	int		fd, rc;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)) == -1)
		return -errno;
	if (fstat(fd, &st) == -1) {
		rc = -errno;
		close(fd);
		return rc;
	}
	if (!S_ISREG(st.st_mode)) {
		close(fd);
		return -EINVAL;
	}
	stat_fill(ts, &st);
	*fdp = fd;
	return 0;
}

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
	p->open_rc = p->verify_rc = p->at_rc = 0;
	p->why[0] = '\0';
	memset(&p->fd_st, 0, sizeof(p->fd_st));
	memset(&p->new_st, 0, sizeof(p->new_st));
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
	stat_path(t->watch.dir, &p->dir_st);
	p->path_link = 0;
	p->link_to[0] = '\0';
	if (lstat(t->path, &st) == 0 && S_ISLNK(st.st_mode)) {
		ssize_t	n;

		p->path_link = 1;
		if (p->path_st.rc == -ENOENT && (n = readlink(t->path,
		    p->link_to, sizeof(p->link_to) - 1)) >= 0)
			p->link_to[n] = '\0';
	}
	if (p->fd >= 0) {
		if (fstat(p->fd, &st) == -1)
			p->fd_st.rc = -errno;
		else
			stat_fill(&p->fd_st, &st);
		/*
		 * Rotate-wait: hold the new file from the moment it has
		 * content, so that it cannot go unread (deleted, replaced)
		 * while the old one's window runs.
		 */
		if (p->open_next && p->fd_st.rc == 0 && p->path_st.rc == 0 &&
		    p->path_st.is_reg && p->path_st.size > 0 &&
		    (p->path_st.dev != p->fd_st.dev ||
		    p->path_st.ino != p->fd_st.ino))
			p->open_rc = open_regular(t->path, &p->new_fd,
			    &p->new_st);
		return;
	}
	if (p->adopt_fd >= 0) {		/* the file held through a window */
		fd = p->adopt_fd;
		p->adopt_fd = -1;
		if (fstat(fd, &st) == -1) {
			p->open_rc = -errno;
			close(fd);
			return;
		}
		stat_fill(&p->fd_st, &st);
		p->new_fd = fd;
		return;
	}
	if (!p->open || p->path_st.rc < 0 || !p->path_st.is_reg)
		return;
	if ((p->open_rc = open_regular(t->path, &p->new_fd, &p->fd_st)) < 0)
		return;
	/*
	 * The consumer's own start (tailer_start_at) first when it has one
	 * of the cursor's generation: the cursor is then checked from it,
	 * reading only the bytes between the two for its prefix, not the
	 * whole file again (cursor_verify_from).
	 */
	if (p->verify && t->start_at_set &&
	    t->start_at.generation == t->start_cursor.generation) {
		char	at_why[sizeof(p->why)];

		p->at_rc = cursor_verify(&t->start_at, p->new_fd, at_why,
		    sizeof(at_why));
		p->verify_rc = p->at_rc == 0 ?
		    cursor_verify_from(&t->start_cursor, &t->start_at,
		    p->new_fd, p->why, sizeof(p->why)) :
		    cursor_verify(&t->start_cursor, p->new_fd, p->why,
		    sizeof(p->why));
		if (p->verify_rc == 0 && p->at_rc != 0)
			snprintf(p->why, sizeof(p->why), "%s", at_why);
		if (p->verify_rc == 0 && p->at_rc == 0)
			p->at_rc = cursor_window_read(p->new_fd,
			    t->start_at.offset, p->at_win, &p->at_win_len);
	} else if (p->verify) {
		p->verify_rc = cursor_verify(&t->start_cursor, p->new_fd,
		    p->why, sizeof(p->why));
		if (p->verify_rc == 0 && t->start_at_set) {
			snprintf(p->why, sizeof(p->why), "it is of generation %"
			    PRIu64 ", the cursor of %" PRIu64,
			    t->start_at.generation,
			    t->start_cursor.generation);
			p->at_rc = -ESTALE;
		}
	}
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
	p->adopt_fd = t->adopt_fd;
	t->adopt_fd = -1;
	p->open = t->fd < 0;
	p->open_next = t->fd >= 0 && t->next_fd < 0 && t->rotate_wait_ms > 0;
	p->verify = p->open && t->start_verify;
	p->req.data = t;
	t->op = OP_PROBE;
	if ((rc = uv_queue_work(t->loop, &p->req, probe_work,
	    probe_after)) < 0) {
		t->error = rc;
		t->close_fd = p->close_fd;
		t->adopt_fd = p->adopt_fd;
		p->close_fd = p->adopt_fd = -1;
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
	watch_result(t, fswatch_file_add(&t->watch));
	if (p->verify && p->verify_rc == 0 && t->start_at_set &&
	    p->at_rc != 0) {
		/* The file of the last run, but not what the consumer holds:
		 * a new generation tells it to forget that. */
		t->start_verify = t->start_at_set = 0;
		snprintf(t->pending_why, sizeof(t->pending_why),
		    p->at_rc == -ESTALE ? "the checkpoint does not match the "
		    "file: %s" NEW_GEN : "the checkpoint could not be checked "
		    "(%s)" NEW_GEN, p->at_rc == -ESTALE ? p->why :
		    strerror(-p->at_rc));
		generation_new(t, NULL);
		if (t->closing) {
			t->op = OP_NONE;
			return;
		}
	} else if (p->verify && p->verify_rc == 0) {
		/* The file of the last run: all before the cursor is seed;
		 * with a start, what is before it is not read at all. */
		t->start_verify = 0;
		if (t->start_at_set)
			stream_resume_at(t, &t->start_at, p->at_win,
			    p->at_win_len);
		else
			stream_restart(t);
		t->start_at_set = 0;
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
		t->start_at_set = 0;
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

/* --- faults ---------------------------------------------------------- */

/*
 * While a fault lasts, or the path is a symlink, probe every poll_ms as
 * well: a symlink's target may change where no watch of ours sees it, and
 * a read error ends without any event.  Nothing runs once it is over.
 */
static void
tick_update(struct tailer *t)
{
	fswatch_tick(&t->watch, !t->closing && (t->path_fault != 0 ||
	    t->read_fault != 0 || t->path_link));
}

/*
 * Say a fault once when it starts (or changes), and once when it ends.
 * `slot`/`buf` keep the one in force for the status.
 */
static void
fault_set(struct tailer *t, int *slot, char *buf, size_t cap, int code,
    const char *why, int prio)
{
	if (code == 0) {
		if (*slot != 0)
			tailer_log(t, LOG_INFO, t->file_exists ?
			    "%s can be read again" : "%s can be read again "
			    "once it is there", t->path);
		*slot = 0;
		buf[0] = '\0';
		return;
	}
	if (*slot == code && strcmp(buf, why) == 0)
		return;
	*slot = code;
	snprintf(buf, cap, "%s", why);
	tailer_log(t, prio, "%s", why);
}

/* What, if anything, keeps the path from being read, by its cause. */
static void
path_fault_check(struct tailer *t, const struct tailer_probe *p)
{
	char		 why[sizeof(t->path_why)];
	const char	*on = t->fd >= 0 ?
			    "; the file it named before is read on" : "";
	int		 code = 0, prio = LOG_WARNING;

	why[0] = '\0';
	if (p->path_st.rc == -ENOENT && p->path_link) {
		code = -ENOENT;
		prio = LOG_INFO;	/* like a missing file */
		snprintf(why, sizeof(why), "%s is a symbolic link to %s, which "
		    "does not exist: read once it does%s", t->path,
		    p->link_to[0] ? p->link_to : "(unreadable)", on);
	} else if (p->path_st.rc < 0 && p->path_st.rc != -ENOENT &&
	    p->path_st.rc != -ENOTDIR) {
		code = p->path_st.rc;
		snprintf(why, sizeof(why), "cannot look at %s: %s%s", t->path,
		    strerror(-code), on);
	} else if (p->path_st.rc == 0 && !p->path_st.is_reg) {
		code = (p->path_st.mode & S_IFMT) == S_IFDIR ? -EISDIR :
		    -EINVAL;
		snprintf(why, sizeof(why), "%s is %s, not a regular file: not "
		    "read while it is one%s", t->path,
		    type_name(p->path_st.mode), on);
	} else if (p->open_rc == -EINVAL) {
		code = -EINVAL;		/* replaced between stat and open */
		snprintf(why, sizeof(why), "%s is not a regular file: not "
		    "read while it is not one%s", t->path, on);
	} else if (p->open_rc == -EACCES || p->open_rc == -EPERM) {
		code = p->open_rc;
		snprintf(why, sizeof(why), "cannot open %s: %s (mode %03o)%s",
		    t->path, strerror(-code), p->path_st.mode & 07777, on);
	} else if (p->open_rc < 0) {
		code = p->open_rc;
		snprintf(why, sizeof(why), "cannot open %s: %s%s", t->path,
		    strerror(-code), on);
	} else if (p->fd_st.rc < 0) {
		code = p->fd_st.rc;
		snprintf(why, sizeof(why), "cannot stat the open %s: %s",
		    t->path, strerror(-code));
	}
	fault_set(t, &t->path_fault, t->path_why, sizeof(t->path_why), code,
	    why, prio);
}

static void
read_fault_set(struct tailer *t, int code)
{
	char	why[sizeof(t->read_why)];

	snprintf(why, sizeof(why), "cannot read %s: %s", t->path,
	    code ? strerror(-code) : "");
	fault_set(t, &t->read_fault, t->read_why, sizeof(t->read_why), code,
	    why, LOG_WARNING);
	tick_update(t);
}

/* --- rotate-wait ------------------------------------------------------ */

static void
on_rot_timer(uv_timer_t *h)
{
	struct tailer	*t = h->data;

	t->rot_due = 1;
	kick(t);
}

/*
 * The probe opened the file the path names now, while we still read the
 * old one: hold it, and give the old one rotate_wait_ms more.  Lines of
 * the old file past its present size were written after the new file had
 * content: those are the late lines, which a switch right now would lose.
 */
static void
next_take(struct tailer *t, struct tailer_probe *p)
{
	int	fd = p->new_fd;

	p->new_fd = -1;
	if (t->next_fd >= 0 || (p->new_st.dev == t->dev &&
	    p->new_st.ino == t->ino)) {
		/* Renamed back between the stat and the open: it is our own
		 * file, held twice; closing this one frees nothing. */
		close(fd);
		return;
	}
	t->next_fd = fd;
	t->next_dev = p->new_st.dev;
	t->next_ino = p->new_st.ino;
	t->late_from = p->fd_st.size;
	t->rot_due = 0;
	if (uv_timer_start(&t->rot_timer, on_rot_timer, t->rotate_wait_ms,
	    0) < 0)
		t->rot_due = 1;
}

/* The path names our file again (rotated back): no switch to wait for.
 * The held file goes to the next probe to be closed, in the pool. */
static void
next_drop(struct tailer *t)
{
	uv_timer_stop(&t->rot_timer);
	t->close_fd = t->next_fd;
	t->next_fd = -1;
	t->rot_due = 0;
	t->dirty = 1;
}

/* The window is over and the old file read to its end: the held file
 * becomes the file, from byte 0, a new generation. */
static void
next_switch(struct tailer *t)
{
	char	late[64] = "";

	if (t->late_lines > 0)
		snprintf(late, sizeof(late), " (%" PRIu64 " late lines in all "
		    "so far)", t->late_lines);
	snprintf(t->pending_why, sizeof(t->pending_why),
	    "the path names a new file (rotated, replaced or re-created); the "
	    "old one was read to its end and for the rotate-wait after it%s"
	    NEW_GEN, late);
	uv_timer_stop(&t->rot_timer);
	fswatch_file_remove(&t->watch);
	t->close_fd = t->fd;
	t->fd = -1;
	t->adopt_fd = t->next_fd;
	t->next_fd = -1;
	t->rot_due = 0;
	t->draining = 0;
	cycle_probe(t);
	/* The events that told of the path's changes came long ago: after
	 * the first read, a probe says what the path names now. */
	t->dirty = 1;
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
	if (p->adopt_fd >= 0) {
		close(p->adopt_fd);
		p->adopt_fd = -1;
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
	watch_result(t, fswatch_dir_set(&t->watch, p->dir_st.rc == 0,
	    p->dir_st.dev, p->dir_st.ino));
	t->path_link = p->path_link;
	path_fault_check(t, p);
	tick_update(t);
	if (p->new_fd >= 0 && t->fd < 0) {
		file_opened(t, p);
		return;
	}
	if (t->fd < 0) {
		if (p->verify) {
			t->start_verify = t->start_at_set = 0;
			snprintf(t->pending_why, sizeof(t->pending_why),
			    "the file was missing at start (deleted while "
			    "stopped?), reading it from byte 0 as it appears"
			    NEW_GEN);
		}
		cycle_end(t);
		return;
	}
	if (p->fd_st.rc < 0) {
		cycle_end(t);		/* a fault, said above */
		return;
	}

	same = p->path_st.rc == 0 && p->path_st.dev == t->dev &&
	    p->path_st.ino == t->ino;
	t->draining = !same;
	if (p->new_fd >= 0)
		next_take(t, p);
	if (t->next_fd >= 0) {
		if (same)
			next_drop(t);
		else if (p->path_st.rc == 0 && p->path_st.is_reg &&
		    p->path_st.size > 0 && (p->path_st.dev != t->next_dev ||
		    p->path_st.ino != t->next_ino))
			t->rot_due = 1;	/* a third file: cut the window short */
	}
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
	if (t->next_fd >= 0) {
		/* Read to its end; the window decides. */
		if (t->rot_due)
			next_switch(t);
		else
			cycle_end(t);
		return;
	}
	if (!same && p->path_st.rc == 0 && p->path_st.is_reg &&
	    p->path_st.size > 0 && t->rotate_wait_ms == 0) {
		/*
		 * No rotate-wait: the old file is read to its end and the new
		 * one has content.  A writer appends to the old descriptor
		 * before it writes the new file, so nothing of the old one
		 * written before this point is lost: switch.
		 */
		snprintf(t->pending_why, sizeof(t->pending_why),
		    "the path names a new file (rotated, replaced or "
		    "re-created); the old one was read to its end" NEW_GEN);
		fswatch_file_remove(&t->watch);
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
 *
 * Where: an append we were told of (read_small) or the few bytes a probe
 * found, on a filesystem whose change events we trust (local: the bytes
 * were just written and are in the page cache), is read on the loop, at
 * most TAILER_LOOP_READ of it — a pread of a few kilobytes from the page
 * cache costs microseconds, the pool's round trip two context switches,
 * which on a loaded 2-core machine were measured at up to 4 ms each way
 * (docs/performance.md, "Wake under load").  A read that fills its chunk
 * is followed by the next on the pool, so a catch-up, a big append or a
 * file on another filesystem is always read there.
 */
static void
read_next(struct tailer *t)
{
	uv_buf_t	buf;
	size_t		chunk = t->rbuf_chunk;
	int		rc, on_loop = 0, small = t->read_small;

	t->read_small = 0;
	if (t->closing) {
		t->op = OP_NONE;
		return;
	}
	if (t->paused) {
		t->dirty = 1;	/* resume starts a fresh cycle */
		t->op = OP_NONE;
		return;
	}
	if (!t->watch.polling && (small ||
	    (t->size > t->read_pos && t->size - t->read_pos <=
	    TAILER_LOOP_READ))) {
		on_loop = 1;
		if (chunk > TAILER_LOOP_READ)
			chunk = TAILER_LOOP_READ;
	}
	t->read_cap = chunk;
	buf = uv_buf_init(t->rbuf, (unsigned)(t->win_len + chunk));
	t->rreq.data = t;
	t->op = OP_READ;
	if (on_loop) {
		t->reads_loop++;
		/* no callback: done when it returns, result in the request */
		(void)uv_fs_read(t->loop, &t->rreq, t->fd, &buf, 1,
		    (int64_t)(t->read_pos - t->win_len), NULL);
		on_read(&t->rreq);
		return;
	}
	t->reads_pool++;
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
		read_fault_set(t, (int)n);
		cycle_end(t);
		return;
	}
	if (t->read_fault)
		read_fault_set(t, 0);
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
	if (got > 0 && (t->read_pos < t->size || got == t->read_cap))
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
	    sizeof(t->path))
		return UV_ENAMETOOLONG;
	/* The one step that can fail, first: nothing to undo after it. */
	if ((rc = saver_init(&t->saver, loop, cursor_path, t->path,
	    on_snapshot, t, cbs->log, cbs->arg)) < 0)
		return rc;
	fswatch_init(&t->watch, loop, t->path, on_change, t, cbs->log,
	    cbs->arg);
	t->has_cursor = cursor_path != NULL;
	t->loop = loop;
	t->cbs = *cbs;
	t->force_poll = force_poll;
	t->chunk = TAILER_CHUNK;
	t->poll_ms = TAILER_POLL_MS;
	t->save_interval_ms = TAILER_SAVE_INTERVAL_MS;
	t->rotate_wait_ms = TAILER_ROTATE_WAIT_MS;
	t->fd = t->close_fd = t->probe.new_fd = t->probe.close_fd = -1;
	t->next_fd = t->adopt_fd = t->probe.adopt_fd = -1;
	linesplit_init(&t->ls, LEDGER_MAX_LINE, on_split_line, on_split_long,
	    t);
	stream_restart(t);
	/* None of these can fail on a valid loop. */
	uv_timer_init(loop, &t->resume_timer);
	uv_timer_init(loop, &t->rot_timer);
	t->resume_timer.data = t->rot_timer.data = t;
	return 0;
}

int
tailer_start_at(struct tailer *t, const struct cursor *at)
{
	uint32_t	n;

	if (t->started || t->closing || !t->has_cursor || at == NULL)
		return UV_EINVAL;
	n = at->offset < CURSOR_WINDOW ? (uint32_t)at->offset : CURSOR_WINDOW;
	if (at->hash_len != n)
		return UV_EINVAL;
	t->start_at = *at;
	t->start_at_set = 1;
	return 0;
}

int
tailer_start(struct tailer *t)
{
	char	why[CURSOR_WHY_MAX];
	int	rc;

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
	else if ((rc = saver_load(&t->saver, &t->start_cursor, why,
	    sizeof(why))) == 0) {
		t->start_verify = 1;
		t->generation = t->start_cursor.generation;
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

	/* no cursor to agree with: the first open starts a new generation,
	 * whose reset() tells the consumer to drop what it holds */
	if (!t->start_verify)
		t->start_at_set = 0;

	t->saver.interval_ms = t->save_interval_ms;
	watch_result(t, fswatch_start(&t->watch, t->force_poll, t->poll_ms));
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

int
tailer_save_sync(struct tailer *t)
{
	struct cursor	c;

	if (!t->has_cursor || !t->started || t->generation == 0 ||
	    t->delivered < t->seed_end)
		return 0;
	tailer_position(t, &c);
	return saver_sync(&t->saver, &c);
}

/* One part closed: a timer of ours, the watch backend, the saver. */
static void
on_part_closed(void *arg)
{
	struct tailer	*t = arg;

	t->handles_open--;
	close_maybe_finish(t);
}

static void
on_handle_closed(uv_handle_t *h)
{
	on_part_closed(h->data);
}

/* Free everything once no handle, read, probe or save is outstanding. */
static void
close_maybe_finish(struct tailer *t)
{
	if (!t->closing || t->finished || t->handles_open > 0 ||
	    t->op == OP_PROBE || t->op == OP_READ)
		return;
	t->finished = 1;
	if (t->fd >= 0)
		close(t->fd);
	if (t->close_fd >= 0)
		close(t->close_fd);
	if (t->next_fd >= 0)
		close(t->next_fd);
	if (t->adopt_fd >= 0)
		close(t->adopt_fd);
	t->fd = t->close_fd = t->next_fd = t->adopt_fd = -1;
	linesplit_free(&t->ls);
	free(t->rbuf);
	t->rbuf = NULL;
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
	t->handles_open = 4;
	fswatch_close(&t->watch, on_part_closed);
	saver_close(&t->saver, on_part_closed);
	uv_close((uv_handle_t *)&t->resume_timer, on_handle_closed);
	uv_close((uv_handle_t *)&t->rot_timer, on_handle_closed);
}

void
tailer_status(const struct tailer *t, struct tailer_status *st)
{
	memset(st, 0, sizeof(*st));
	st->backend = t->watch.backend;
	st->reads_loop = t->reads_loop;
	st->reads_pool = t->reads_pool;
	st->backend_why = t->watch.backend_why;
	st->generation = t->generation;
	st->cursor = t->delivered;
	st->read = t->read_pos;
	st->size = t->size > t->read_pos ? t->size : t->read_pos;
	st->lag = st->size > t->delivered ? st->size - t->delivered : 0;
	st->lines = t->lines;
	st->long_lines = t->long_lines;
	st->late_lines = t->late_lines;
	st->saves = t->saver.saves;
	st->save_error = t->saver.rc;
	st->error = t->read_fault ? t->read_fault : t->path_fault ?
	    t->path_fault : t->error;
	st->error_why = t->read_fault ? t->read_why : t->path_fault ?
	    t->path_why : "";
	st->file_exists = t->file_exists;
	st->draining = t->draining;
	st->paused = t->paused;
}
