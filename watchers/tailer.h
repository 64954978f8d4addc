/*
 * tailer — follow one append-only ledger file by byte cursor, on a libuv
 * loop, and hand over its complete lines exactly once and in order
 * (DESIGN §8; docs/tailing.md explains how each guarantee is met).
 *
 * Contract, in short:
 *
 *  - Lines are what ledger/linesplit.h says: bytes up to, excluding, '\n'.
 *    A partial last line is held until its newline arrives, however many
 *    writes it takes; a line over LEDGER_MAX_LINE goes to long_line(), once,
 *    with its offset and full length, and memory stays bounded.
 *  - Every read is a thread-pool request (uv_queue_work / uv_fs_read), one
 *    in flight at a time, at most `chunk` bytes: the loop never blocks on
 *    the ledger.  Callbacks run on the loop thread.
 *  - A generation is one continuous file content from byte 0.  When the
 *    file is truncated, replaced, re-created, rewritten under the cursor,
 *    or the saved cursor does not match it, reset() announces a new
 *    generation and lines follow again from byte 0.  No line of an old
 *    generation is delivered after its reset().
 *  - When the path starts naming another file (rotation by rename, delete
 *    and re-create), the old file is read to its end through the descriptor
 *    we hold, including lines a writer still appends to it.  Once the new
 *    file has content it is opened and held, and the old one is read for
 *    rotate_wait_ms more (its late lines), or until the path moves on to a
 *    third file; then the switch.  Lines therefore come file by file: all
 *    of one generation before the reset() of the next.
 *  - The file and its directory may be missing, and may come and go: the
 *    directory (or its parent, when the directory is missing) is watched.
 *  - Backend: uv_fs_event (inotify/kqueue) plus nothing else while idle: no
 *    timer runs when nothing changes.  Stat polling every poll_ms when
 *    forced, when the filesystem is a network or FUSE one, or when a watch
 *    cannot be added (inotify watches or instances exhausted: said by that
 *    cause); tailer_status() says which and why, and log() says it once.
 *  - Only a regular file is read.  A directory, FIFO, socket or device at
 *    the path is never opened (a FIFO cannot hang a pool thread: stat
 *    first, then O_NONBLOCK and fstat); a symlink is followed, a dangling
 *    one is like a missing file.  What keeps the path from being read
 *    (that, an open or read error) is said once by log() when it starts
 *    and once when it ends, and stands in tailer_status() meanwhile; the
 *    file held so far is read on, so nothing delivered is lost.  While a
 *    fault lasts, or the path is a symlink (its target's changes are not
 *    reported in the directory), the path is also probed every poll_ms.
 *  - With a cursor path, the position is saved atomically (cursor.h) off
 *    the loop thread, at most one save in flight and at most one per
 *    save_interval_ms, and synchronously by tailer_save_sync().
 *
 * Lifetime (libuv style): the caller embeds struct tailer and must not
 * move it; after tailer_init() returns 0, tailer_close() must be called
 * (started or not), and the memory may be reused only in its `done`
 * callback.  Every function is for the loop thread only.  Callbacks may
 * call tailer_pause/resume/status/save_sync/close; after tailer_close(), no
 * further callback runs except `done`.
 */
#ifndef WATCHERS_TAILER_H
#define WATCHERS_TAILER_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>

#include <uv.h>

#include "base/base.h"
#include "ledger/linesplit.h"
#include "watchers/cursor.h"
#include "watchers/fswatch.h"
#include "watchers/saver.h"

#define TAILER_CHUNK		(256 * 1024)	/* bytes per read */
#define TAILER_LOOP_READ	(64 * 1024)	/* at most, read on the loop */
#define TAILER_POLL_MS		250
#define TAILER_SAVE_INTERVAL_MS	1000
#define TAILER_ROTATE_WAIT_MS	5000	/* Fluent Bit's rotate_wait */

enum tail_phase {
	TAIL_SEED,	/* before the persisted cursor: delivered in an earlier
			   run; fold it, don't wake */
	TAIL_CATCHUP,	/* after the cursor, present when we started:
			   appended while the daemon was stopped */
	TAIL_LIVE	/* appended while running */
};

struct tailer;

struct tailer_cbs {
	/* One complete line (no '\n'); `offset` is its first byte.  The
	   pointer is valid during the call only.  Required. */
	void	(*line)(void *arg, const char *line, size_t len,
		    uint64_t offset, enum tail_phase phase);
	/* A line longer than LEDGER_MAX_LINE, skipped whole.  May be NULL. */
	void	(*long_line)(void *arg, uint64_t offset, uint64_t len,
		    enum tail_phase phase);
	/* A new generation starts (first start, truncation, replacement,
	   inode reuse, cursor unusable): forget everything folded so far;
	   lines follow from byte 0.  `why` is a sentence for the log.
	   Required. */
	void	(*reset)(void *arg, uint64_t generation, const char *why);
	/* The start-up read reached the end of the file, or found no file:
	   seed and catch-up are done.  Runs once.  May be NULL. */
	void	(*ready)(void *arg);
	void	*arg;
	/* A sentence for the daemon's log, `prio` a syslog(3) level: a fault
	   of the path starting or ending, a fall-back to polling.  Each is
	   said once, when it happens.  May be NULL. */
	base_log_fn	*log;
};

struct tailer_status {
	const char	*backend;	/* "inotify", "kqueue" or "poll" */
	const char	*backend_why;
	uint64_t	 generation;
	uint64_t	 cursor;	/* just past the last delivered line */
	uint64_t	 read;		/* bytes of this generation read */
	uint64_t	 size;		/* file size last seen */
	uint64_t	 lag;		/* size - cursor */
	uint64_t	 lines, long_lines;	/* delivered since start */
	uint64_t	 late_lines;	/* of them: written to a rotated file
					   after the new one had content */
	uint64_t	 saves;		/* background cursor saves finished */
	uint64_t	 reads_loop;	/* reads made on the loop (small) */
	uint64_t	 reads_pool;	/* reads made on the thread pool */
	int		 save_error;	/* last cursor save: 0 or -errno */
	int		 error;		/* what keeps the path from being read,
					   or the last failed request: 0 or
					   -errno */
	const char	*error_why;	/* that as a sentence, or "" */
	int		 file_exists;	/* the path names a file */
	int		 draining;	/* reading a file the path left */
	int		 paused;
};

/* Private state, in the header only so callers can embed the struct. */
struct tailer_stat {
	int		 rc;		/* 0 or -errno */
	int		 is_reg;
	unsigned	 mode;		/* st_mode */
	uint64_t	 dev, ino, size;
	int64_t		 mtime_sec, mtime_nsec;
};

struct tailer_probe {
	uv_work_t		 req;
	int			 fd;		/* in: the open file or -1 */
	int			 close_fd;	/* in: close it first, or -1 */
	int			 open;		/* in: open the path if there */
	int			 open_next;	/* in: …while holding fd, if it
						   names another file with
						   content (rotate-wait) */
	int			 adopt_fd;	/* in: take this one as the file */
	int			 verify;	/* in: check start_cursor */
	struct tailer_stat	 path_st, dir_st, fd_st;	/* out */
	struct tailer_stat	 new_st;	/* out: of new_fd (open_next) */
	int			 path_link;	/* out: the path is a symlink */
	char			 link_to[PATH_MAX];	/* out: if dangling */
	int			 new_fd;	/* out: opened, or -1 */
	int			 open_rc;	/* out */
	int			 verify_rc;	/* out */
	int			 at_rc;		/* out: start_at checked */
	char			 at_win[CURSOR_WINDOW];	/* out: before it */
	uint32_t		 at_win_len;
	char			 why[CURSOR_WHY_MAX];
};

struct tailer {
	void		*data;		/* the caller's, untouched */

	/* Tunables: may be changed after init, before start. */
	size_t		 chunk;			/* TAILER_CHUNK */
	unsigned	 poll_ms;		/* TAILER_POLL_MS */
	uint64_t	 save_interval_ms;	/* TAILER_SAVE_INTERVAL_MS */
	uint64_t	 rotate_wait_ms;	/* TAILER_ROTATE_WAIT_MS; 0: switch
						   as soon as the new file has
						   content */

	/* Everything below is private. */
	uv_loop_t	*loop;
	struct tailer_cbs cbs;
	char		 path[PATH_MAX];
	int		 has_cursor, force_poll;
	int		 started, closing, finished, handles_open;
	void		(*done)(struct tailer *);

	struct fswatch	 watch;		/* how we learn of a change */
	struct saver	 saver;		/* the cursor kept on disk */
	uv_timer_t	 resume_timer, rot_timer;

	/* The read cycle: one operation at a time. */
	int		 op, dirty, paused;
	struct tailer_probe probe;
	uv_fs_t		 rreq;
	int		 close_fd;		/* old file, closed on switch */

	/* Faults of the path (probe) and of reading (read): said once. */
	int		 path_fault, read_fault;	/* 0 or -errno */
	char		 path_why[2 * PATH_MAX + 160], read_why[PATH_MAX + 96];
	int		 path_link;		/* last probe: a symlink */

	/* Rotate-wait: the new file, held while the old one's window runs. */
	int		 next_fd, adopt_fd;
	uint64_t	 next_dev, next_ino;
	uint64_t	 late_from;		/* the old file's size then */
	int		 rot_due;		/* window over: switch when read */

	/* The open file. */
	int		 fd;
	uint64_t	 dev, ino, size;
	int64_t		 seen_mtime_sec, seen_mtime_nsec;
	int64_t		 probe_mtime_sec, probe_mtime_nsec;
	int		 file_exists, draining, error;

	/* The byte stream of this generation. */
	struct linesplit ls;
	char		*rbuf;			/* CURSOR_WINDOW + rbuf_chunk */
	size_t		 rbuf_chunk;
	size_t		 read_cap;		/* the last read's chunk */
	int		 read_small;		/* next read: an append we were
						   told of (on_change) */
	uint64_t	 reads_loop, reads_pool;
	char		 win[CURSOR_WINDOW];	/* bytes before chunk_start */
	uint32_t	 win_len;
	uint64_t	 read_pos;		/* = chunk_start + chunk_len */
	uint64_t	 chunk_start;
	size_t		 chunk_len, feed_pos;
	uint64_t	 delivered;		/* the cursor */
	uint64_t	 hash_at, hash;		/* window hash before hash_at */
	uint32_t	 hash_len;
	uint64_t	 seed_end, catchup_end, generation;
	uint64_t	 lines, long_lines, late_lines;
	int		 start_verify, ready_sent;
	struct cursor	 start_cursor;
	int		 start_at_set;		/* tailer_start_at() */
	struct cursor	 start_at;
	char		 pending_why[CURSOR_WHY_MAX + 128];
};

/*
 * Prepare `t` to tail `path` on `loop`.  `cursor_path` NULL: no cursor is
 * kept and the file is always read from byte 0 (fixes.jsonl).
 * `force_poll`: poll by stat whatever the filesystem (--poll).  `cbs` is
 * copied.  Returns 0, -EINVAL or -ENAMETOOLONG; on error there is nothing
 * to close.
 */
int	tailer_init(struct tailer *t, uv_loop_t *loop, const char *path,
	    const char *cursor_path, int force_poll,
	    const struct tailer_cbs *cbs);

/*
 * Load the cursor (synchronously: a few hundred bytes from the state
 * directory, at start-up), pick the backend, add the watches and queue
 * the first read.  Lines arrive once the loop runs.  0 or -errno (then
 * close it as usual).  A missing file is not an error.
 */
int	tailer_start(struct tailer *t);

/*
 * Start reading at `at` instead of byte 0: the consumer already holds a
 * fold of every line before it (the daemon's checkpoint).  Between
 * tailer_init and tailer_start, with a cursor path.  `at` is honoured
 * only together with the saved cursor: it must be of the cursor's
 * generation, file (dev, inode) and, once opened, the file must match
 * both (cursor_verify); lines from `at` to the cursor are then SEED and
 * the rest CATCHUP, as usual, and `at` may also lie past the cursor (a
 * checkpoint saved after the cursor's last save).  When it cannot be
 * honoured — no cursor, another generation, a file that does not match
 * — the tailer starts a new generation: reset() is how the consumer
 * learns that what it holds does not apply, and lines follow from byte
 * 0.  0, or UV_EINVAL (started already, no cursor path, or an `at` that
 * is not a position: offset 0 or after a '\n', window as the cursor's).
 */
int	tailer_start_at(struct tailer *t, const struct cursor *at);

/* Where the lines delivered so far end, as a cursor (generation, offset
 * just past the last one, the file's dev and inode, the hash of the
 * window before it): what a fold of them stands on.  Cannot fail. */
void	tailer_position(const struct tailer *t, struct cursor *c);

/* Backpressure: while paused, no line callback runs and nothing is read;
   the chunk in hand waits (memory stays bounded by one chunk). */
void	tailer_pause(struct tailer *t);
void	tailer_resume(struct tailer *t);

/*
 * Persist the cursor now, synchronously (SIGTERM).  Lines before it have
 * all been delivered.  While the start-up read is still before the saved
 * cursor, the file on disk is left as it is.  0, or -errno from
 * cursor_save.  Without a cursor path: 0.
 */
int	tailer_save_sync(struct tailer *t);

/* Stop everything; `done` (may be NULL) runs once every handle is closed
   and every request has come back.  Does not save the cursor. */
void	tailer_close(struct tailer *t, void (*done)(struct tailer *));

/* A snapshot for the status endpoint and doctor.  Cannot fail. */
void	tailer_status(const struct tailer *t, struct tailer_status *st);

#endif
