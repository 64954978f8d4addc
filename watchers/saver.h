/*
 * saver — a tailer's cursor kept on disk (cursor.h's format, written
 * through the state directory's atomic pair): off the loop thread, at
 * most one save in flight and at most one started per interval_ms, and
 * the synchronous save of SIGTERM, serialised with them.
 *
 * It knows nothing of reading: it is handed the cursor file's path and a
 * snapshot callback it calls when a save starts (so a burst of requests
 * costs one snapshot, taken as late as possible), and it writes what that
 * gives.  Its user decides when the position is worth saving.
 *
 * Lifetime (libuv style): embedded, never moved; after saver_init()
 * returns 0, saver_close() must be called, and the memory may be reused
 * only once its `done` has run.  Loop thread only, but for the pool's
 * own write.
 */
#ifndef WATCHERS_SAVER_H
#define WATCHERS_SAVER_H

#include <limits.h>
#include <stdint.h>

#include <uv.h>

#include "base/base.h"
#include "watchers/cursor.h"

/* Fill `c` with the position to save now.  Runs on the loop thread. */
typedef void saver_snapshot_fn(void *arg, struct cursor *c);

struct saver {
	/* A tunable: may be changed after init, while no save is owed. */
	uint64_t	 interval_ms;

	/* Read only for the user. */
	int		 kept;		/* a cursor file is kept */
	char		 path[PATH_MAX];	/* that file */
	uint64_t	 saves;		/* background saves finished */
	int		 rc;		/* the last save: 0 or -errno */
	int		 inflight;	/* a save is on the pool */

	/* Everything below is private. */
	uv_loop_t	*loop;
	const char	*name;		/* the file whose cursor it is */
	saver_snapshot_fn *snapshot;
	void		*arg;
	base_log_fn	*log;
	void		*log_arg;
	/* seq orders the saves, the mutex serialises the writes. */
	uv_mutex_t	 mu;
	uint64_t	 seq, saved_seq;	/* saved_seq under mu */
	uv_work_t	 req;
	uv_timer_t	 timer;
	struct cursor	 snap, last;
	uint64_t	 snap_seq, last_ms;
	int		 dirty, work_rc;
	int		 closing, timer_open, finished;
	void		(*done)(void *arg);
};

/*
 * Prepare to keep the cursor of `name` (kept, not copied: it must live as
 * long as the saver; it only names the file in the log) at `path` (NULL:
 * none; every call is then a no-op that succeeds).  `snapshot(arg, …)`
 * gives the position when a background save starts; `log` (may be NULL)
 * is told when saves start failing and when they work again.  Returns 0,
 * UV_ENAMETOOLONG or the mutex's error; on error there is nothing to
 * close.
 */
int	saver_init(struct saver *s, uv_loop_t *loop, const char *path,
	    const char *name, saver_snapshot_fn *snapshot, void *arg,
	    base_log_fn *log, void *log_arg);

/*
 * The cursor saved by an earlier run, at start-up (synchronously: a few
 * hundred bytes from the state directory): cursor_load()'s result.  A
 * loaded cursor counts as saved: an unmoved position is not written
 * again.
 */
int	saver_load(struct saver *s, struct cursor *c, char *why, size_t cap);

/*
 * The position moved.  Coalesced: one save in flight, at most one
 * started per interval_ms, and the last position always gets written.
 * The timer runs only while a save is owed, so an idle saver has none.
 * A failed save is said once and retried at the next request, not in a
 * loop.  Cannot fail.
 */
void	saver_request(struct saver *s);

/* Write `c` now, synchronously; a background save still running cannot
 * overwrite it with an older one.  Also after saver_close().  0 or
 * -errno from cursor_save. */
int	saver_sync(struct saver *s, const struct cursor *c);

/* Cancel what has not started and close the timer; `done(arg)` (may be
 * NULL) runs once that is closed and no save is on the pool. */
void	saver_close(struct saver *s, void (*done)(void *arg));

#endif
