/*
 * fswatch — the watch backend: inotify or kqueue through uv_fs_event on
 * the file, its directory and the project folder, the stat poll when
 * those cannot be trusted, and what is said when a watch cannot be added
 * (fswatch.h; docs/tailing.md for the races).
 *
 * Invariant: once polling, always polling (`polling` never goes back to
 * 0): a watch that failed once is not trusted again in this run.
 */
#include <sys/stat.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <unistd.h>

#include <uv.h>

#include "watchers/fswatch.h"
#include "watchers/fstrust.h"

/* dirname into `out`; "." for a bare name.  Never longer than `path`. */
static void
parent_of(const char *path, char *out, size_t cap)
{
	const char	*slash = strrchr(path, '/');

	if (slash == NULL)
		snprintf(out, cap, ".");
	else if (slash == path)
		snprintf(out, cap, "/");
	else
		snprintf(out, cap, "%.*s", (int)(slash - path), path);
}

static const char *
base_of(const char *path)
{
	const char	*slash = strrchr(path, '/');

	return slash == NULL ? path : slash + 1;
}

static void
on_poll_timer(uv_timer_t *h)
{
	struct fswatch	*w = h->data;

	w->cb(w->arg, FSWATCH_LOOK);
}

/*
 * From now on, stat polling.  One way: once a watch failed we do not
 * trust the kernel's events for this file again in this run.
 *
 * Polling is a timer that has the user run its ordinary look (stat of
 * the path and the directory, fstat of the file it holds), not
 * uv_fs_poll: uv_fs_poll reports a change relative to its own previous
 * stat, which is not what the user last saw.  A file that appears, is
 * opened (after some other wake-up) and is deleted between two of its
 * polls looks unchanged to it (missing, then missing), and writes to a
 * renamed or deleted file still held never show on the path at all.  The
 * user's look compares with its own state, so nothing can fall between
 * two views; it costs two stats more per tick.
 *
 * `prio` -1: nothing is said (the user asked for it).  Returns as the
 * calls of fswatch.h do: 1, or the timer's error.
 */
static int
poll_start(struct fswatch *w, const char *why, int prio)
{
	int	rc;

	if (w->polling)
		return 0;
	w->polling = 1;
	w->tick = 0;
	w->backend = "poll";
	snprintf(w->backend_why, sizeof(w->backend_why), "%s", why);
	if (prio >= 0 && !w->closing)
		base_log(w->log, w->log_arg, prio, "%s: polling every %u ms: %s",
		    w->path, w->poll_ms, why);
	uv_fs_event_stop(&w->ev_file);
	uv_fs_event_stop(&w->ev_dir);
	uv_fs_event_stop(&w->ev_gp);
	w->dir_watch = w->gp_watch = 0;
	if ((rc = uv_timer_start(&w->poll_timer, on_poll_timer, w->poll_ms,
	    w->poll_ms)) < 0)
		return rc;
	return 1;
}

/*
 * The file changed.  A write is the user's to act on at once (it may read
 * without looking first); a rename means the path may name another file.
 */
static void
on_file_event(uv_fs_event_t *h, const char *name, int events, int status)
{
	struct fswatch	*w = h->data;

	(void)name;
	(void)status;
	w->cb(w->arg, (events & UV_RENAME) ? FSWATCH_LOOK : FSWATCH_WRITE);
}

/*
 * Events in the directory.  A change (not a rename) of the file is also
 * reported by the file's own watch while that is in place: an echo, which
 * the user may drop when it is idle and the path named, at its last look,
 * the file it holds — any change of what the path names since then came
 * as a rename event and had it look, so nothing can be lost by dropping
 * it.
 */
static void
on_dir_event(uv_fs_event_t *h, const char *name, int events, int status)
{
	struct fswatch	*w = h->data;

	(void)status;
	if (name != NULL && strcmp(name, w->base) == 0) {
		if (!(events & UV_RENAME) &&
		    uv_is_active((uv_handle_t *)&w->ev_file)) {
			w->cb(w->arg, FSWATCH_ECHO);
			return;
		}
	} else if (name != NULL && strcmp(name, w->dirbase) == 0) {
		/* The directory itself was deleted or moved (libuv names it
		 * by the watched path's last component): this watch is dead,
		 * or follows a directory the path no longer names. */
		if (events & UV_RENAME)
			w->dir_stale = 1;
	} else if (name != NULL)
		return;		/* profile.json, fixes.jsonl, … */
	w->cb(w->arg, FSWATCH_LOOK);
}

/*
 * Events in the directory's parent (the project folder): only the entry
 * of the directory matters.  Any event on it — created, deleted, renamed
 * over — means the directory watch may sit on a directory the path no
 * longer names, and the next fswatch_dir_set() adds it again.  This is
 * the one signal that cannot be fooled: ext4 hands a freed directory's
 * inode number to the next mkdir, so a new directory can look like the
 * watched one by its number, and a deleted directory that something
 * inside still pins sends its own delete event only when that last
 * reference goes.
 */
static void
on_gp_event(uv_fs_event_t *h, const char *name, int events, int status)
{
	struct fswatch	*w = h->data;

	(void)status;
	if (name != NULL && strcmp(name, w->dirbase) == 0)
		w->dir_stale = 1;
	else if (name != NULL && strcmp(name, w->gpbase) == 0) {
		if (events & UV_RENAME)
			w->gp_watch = 0;	/* the project folder went */
	} else if (name != NULL)
		return;		/* the rest of the project */
	w->cb(w->arg, FSWATCH_LOOK);
}

#if defined(__linux__)
/*
 * An inotify limit as it binds here: the system's (fs.inotify.*) or, if
 * lower, this user namespace's (user.max_inotify_*), which is where a
 * container lowers it.  -1 if neither can be read.  procfs, read once
 * when a watch fails: it does not block.
 */
static long
inotify_limit(const char *fs_name, const char *user_name)
{
	const char	*dirs[2] = { "/proc/sys/fs/inotify/", "/proc/sys/user/" };
	const char	*names[2] = { fs_name, user_name };
	char		 path[96], buf[32];
	long		 best = -1, v;
	int		 i, fd;
	ssize_t		 n;

	for (i = 0; i < 2; i++) {
		snprintf(path, sizeof(path), "%s%s", dirs[i], names[i]);
		if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
			continue;
		n = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		if (n <= 0)
			continue;
		buf[n] = '\0';
		v = strtol(buf, NULL, 10);
		if (v >= 0 && (best < 0 || v < best))
			best = v;
	}
	return best;
}
#endif

/*
 * A watch could not be added: poll from now on, and say why by its cause.
 * inotify's ENOSPC is the watch limit and EMFILE (from inotify_init1) the
 * instance limit, unless the process is out of descriptors altogether;
 * "No space left on device" would send a user to df.
 */
static int
watch_failed(struct fswatch *w, const char *path, int rc)
{
	char	why[sizeof(w->backend_why)];

	snprintf(why, sizeof(why), "cannot watch %s: %s", path,
	    uv_strerror(rc));
#if defined(__linux__)
	if (rc == UV_ENOSPC)
		snprintf(why, sizeof(why), "inotify watches exhausted "
		    "(max_user_watches=%ld), adding one for %s",
		    inotify_limit("max_user_watches", "max_inotify_watches"),
		    path);
	else if (rc == UV_EMFILE) {
		int	fd = open("/dev/null", O_RDONLY | O_CLOEXEC);

		if (fd >= 0) {
			close(fd);
			snprintf(why, sizeof(why), "inotify instances "
			    "exhausted (max_user_instances=%ld)",
			    inotify_limit("max_user_instances",
			    "max_inotify_instances"));
		} else
			snprintf(why, sizeof(why), "out of file descriptors "
			    "for an inotify instance (EMFILE)");
	} else if (rc == UV_ENOMEM)
		snprintf(why, sizeof(why), "not enough kernel memory for an "
		    "inotify watch on %s", path);
#endif
	return poll_start(w, why, LOG_WARNING);
}

void
fswatch_init(struct fswatch *w, uv_loop_t *loop, const char *path,
    fswatch_cb *cb, void *arg, base_log_fn *log, void *log_arg)
{
	memset(w, 0, sizeof(*w));
	snprintf(w->path, sizeof(w->path), "%s", path);
	parent_of(w->path, w->dir, sizeof(w->dir));
	parent_of(w->dir, w->gp, sizeof(w->gp));
	w->base = base_of(w->path);
	w->dirbase = base_of(w->dir);
	w->gpbase = base_of(w->gp);
	w->loop = loop;
	w->cb = cb;
	w->arg = arg;
	w->log = log;
	w->log_arg = log_arg;
	w->backend = FSTRUST_EVENTS;
	/* None of these can fail on a valid loop. */
	uv_fs_event_init(loop, &w->ev_file);
	uv_fs_event_init(loop, &w->ev_dir);
	uv_fs_event_init(loop, &w->ev_gp);
	uv_timer_init(loop, &w->poll_timer);
	w->ev_file.data = w->ev_dir.data = w->ev_gp.data = w;
	w->poll_timer.data = w;
}

int
fswatch_start(struct fswatch *w, int force_poll, unsigned poll_ms)
{
	char		why[sizeof(w->backend_why)];
	struct stat	st;
	int		dir_ok;

	w->poll_ms = poll_ms;
	dir_ok = stat(w->dir, &st) == 0;
	if (force_poll)
		return poll_start(w, "forced (--poll)", -1);
	if (!fstrust_check(dir_ok ? w->dir : w->gp, why, sizeof(why)))
		return poll_start(w, why, LOG_INFO);
	snprintf(w->backend_why, sizeof(w->backend_why), "%s", why);
	return fswatch_dir_set(w, dir_ok, dir_ok ? (uint64_t)st.st_dev : 0,
	    dir_ok ? (uint64_t)st.st_ino : 0);
}

int
fswatch_dir_set(struct fswatch *w, int exists, uint64_t dev, uint64_t ino)
{
	struct stat	now;
	int		rc, again = 0;

	if (w->polling)
		return 0;
	if (!w->gp_watch) {
		uv_fs_event_stop(&w->ev_gp);
		if ((rc = uv_fs_event_start(&w->ev_gp, on_gp_event, w->gp,
		    0)) < 0)
			return watch_failed(w, w->gp, rc);
		w->gp_watch = 1;
		again = 1;
	}
	if (!exists) {
		/* Missing: the parent's watch reports it coming back. */
		uv_fs_event_stop(&w->ev_dir);
		w->dir_watch = w->dir_stale = 0;
		return again;
	}
	if (w->dir_watch && !w->dir_stale && dev == w->dir_dev &&
	    ino == w->dir_ino)
		return again;
	uv_fs_event_stop(&w->ev_dir);
	w->dir_watch = w->dir_stale = 0;
	w->dir_dev = w->dir_ino = 0;
	/* Whatever happened between the user's stat and the watch: look
	 * again. */
	rc = uv_fs_event_start(&w->ev_dir, on_dir_event, w->dir, 0);
	if (rc == UV_ENOENT)
		return 1;	/* gone again: the parent says so */
	if (rc < 0)
		return watch_failed(w, w->dir, rc);
	w->dir_watch = 1;
	/*
	 * The watch went onto whatever the path named when it was added,
	 * which may already not be the directory the user's stat saw.  Keep
	 * an inode number only if a stat right after the add (on the loop
	 * thread, as the add itself resolved the path here) finds that one;
	 * otherwise the next call adds the watch again.
	 */
	if (stat(w->dir, &now) == 0 && (uint64_t)now.st_dev == dev &&
	    (uint64_t)now.st_ino == ino) {
		w->dir_dev = dev;
		w->dir_ino = ino;
	}
	return 1;
}

int
fswatch_file_add(struct fswatch *w)
{
	int	rc;

	if (w->polling)
		return 0;
	uv_fs_event_stop(&w->ev_file);
	/*
	 * By path, right after the open: if the path was replaced in
	 * between we watch the wrong inode, which only delays draining
	 * the one the user holds until the new file has content (see
	 * docs/tailing.md).
	 */
	rc = uv_fs_event_start(&w->ev_file, on_file_event, w->path, 0);
	if (rc < 0 && rc != UV_ENOENT)
		return watch_failed(w, w->path, rc);
	return 0;
}

void
fswatch_file_remove(struct fswatch *w)
{
	uv_fs_event_stop(&w->ev_file);
}

void
fswatch_tick(struct fswatch *w, int want)
{
	if (w->polling)
		return;
	if (want && !w->tick) {
		if (uv_timer_start(&w->poll_timer, on_poll_timer, w->poll_ms,
		    w->poll_ms) == 0)
			w->tick = 1;
	} else if (!want && w->tick) {
		uv_timer_stop(&w->poll_timer);
		w->tick = 0;
	}
}

static void
on_closed(uv_handle_t *h)
{
	struct fswatch	*w = h->data;

	if (--w->handles_open == 0 && w->done != NULL)
		w->done(w->arg);
}

void
fswatch_close(struct fswatch *w, void (*done)(void *arg))
{
	if (w->closing)
		return;
	w->closing = 1;
	w->done = done;
	w->handles_open = 4;
	uv_close((uv_handle_t *)&w->ev_file, on_closed);
	uv_close((uv_handle_t *)&w->ev_dir, on_closed);
	uv_close((uv_handle_t *)&w->ev_gp, on_closed);
	uv_close((uv_handle_t *)&w->poll_timer, on_closed);
}
