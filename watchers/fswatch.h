/*
 * fswatch — how a file's changes are learnt of: the kernel's watches on
 * the file, its directory and the directory's parent (inotify or kqueue,
 * through uv_fs_event), or a stat poll where those cannot be trusted or
 * a watch cannot be added.  The backend sits behind this one small
 * interface, as Fluent Bit's in_tail keeps tail_fs_inotify and
 * tail_fs_stat behind tail_fs.h.
 *
 * It knows nothing of what its user does with a change: it is handed a
 * callback and an opaque pointer, and calls them when the file or the
 * path may have changed.  The user looks (stat, fstat, read) and decides;
 * the backend never reads the file, never stats it but for its own
 * watches' sake, and never calls its user except through that callback.
 * docs/tailing.md explains the races each watch is there for.
 *
 * Lifetime (libuv style): the caller embeds struct fswatch and must not
 * move it; after fswatch_init(), fswatch_close() must be called, and the
 * memory may be reused only once its `done` has run.  Loop thread only.
 */
#ifndef WATCHERS_FSWATCH_H
#define WATCHERS_FSWATCH_H

#include <limits.h>
#include <stdint.h>

#include <uv.h>

#include "base/base.h"

enum fswatch_change {
	/* The watched file's content changed (a write, not a rename). */
	FSWATCH_WRITE,
	/* The directory's report of a write to the file whose own watch is
	   in place, so that one reports it too: an echo the user may drop
	   when it has nothing else to look at. */
	FSWATCH_ECHO,
	/* Anything else: the path may name another file or none, the
	   directory may have gone or come back, or the poll's timer ran.
	   Look again. */
	FSWATCH_LOOK
};

typedef void fswatch_cb(void *arg, enum fswatch_change what);

struct fswatch {
	/* Read only for the user. */
	char		 path[PATH_MAX];	/* the file watched */
	char		 dir[PATH_MAX];		/* its directory */
	const char	*backend;	/* FSTRUST_EVENTS or "poll" */
	char		 backend_why[PATH_MAX + 64];
	int		 polling;	/* the stat poll, for good */

	/* Everything below is private. */
	uv_loop_t	*loop;
	fswatch_cb	*cb;
	void		*arg;
	base_log_fn	*log;
	void		*log_arg;
	unsigned	 poll_ms;
	char		 gp[PATH_MAX];
	const char	*base, *dirbase, *gpbase;
	uv_fs_event_t	 ev_file, ev_dir, ev_gp;
	uv_timer_t	 poll_timer;
	int		 dir_watch;		/* ev_dir watches the directory */
	int		 dir_stale;		/* its entry changed since */
	int		 gp_watch;		/* ev_gp watches its parent */
	uint64_t	 dir_dev, dir_ino;
	int		 tick;			/* poll_timer runs for fswatch_tick */
	int		 closing, handles_open;
	void		(*done)(void *arg);
};

/*
 * Prepare to watch `path` (shorter than PATH_MAX: the caller has checked
 * it) on `loop`; `cb(arg, …)` is called for every change.  `log` (may be
 * NULL) is told, once, of a fall-back to polling.  Cannot fail.  Nothing
 * is watched before fswatch_start().
 */
void	fswatch_init(struct fswatch *w, uv_loop_t *loop, const char *path,
	    fswatch_cb *cb, void *arg, base_log_fn *log, void *log_arg);

/*
 * Pick the backend (`force_poll`, or fstrust's rule for the directory's
 * filesystem) and add the watches on the directory and its parent; the
 * poll, if it is one, ticks every `poll_ms`.  Stats the directory on the
 * loop thread, as the add itself resolves the path here.
 *
 * This and the calls below return 0, or 1 when the user should look
 * again — a watch was just added, and what changed between the user's
 * last look and the add went unreported; or the backend has just fallen
 * back to polling — or a negative errno when the poll's timer could not
 * be started (look again as well).
 */
int	fswatch_start(struct fswatch *w, int force_poll, unsigned poll_ms);

/*
 * What the user last found at the directory: `exists`, with its dev and
 * inode.  The parent is watched all along, the directory while it
 * exists; its watch is added again when the parent said its entry
 * changed, or when `dev`/`ino` are not those of the directory watched.
 */
int	fswatch_dir_set(struct fswatch *w, int exists, uint64_t dev,
	    uint64_t ino);

/* The user has just opened the file at the path: watch it (by path). */
int	fswatch_file_add(struct fswatch *w);

/* The user no longer reads the file the path named.  Cannot fail. */
void	fswatch_file_remove(struct fswatch *w);

/*
 * `want`: call back with FSWATCH_LOOK every poll_ms as well as for the
 * kernel's events, for as long as something the watches cannot see is
 * going on (a fault of the path, a symlink whose target may change).
 * Nothing when polling already.  Cannot fail: if the timer will not
 * start, the events alone go on.
 */
void	fswatch_tick(struct fswatch *w, int want);

/* Stop and close every handle; `done(arg)` (may be NULL) runs once they
 * are all closed.  No callback runs after this call. */
void	fswatch_close(struct fswatch *w, void (*done)(void *arg));

#endif
