/*
 * tailer_watch — how the tailer learns of a change: the kernel's watches
 * on the file, its directory and the project folder (inotify/kqueue
 * through uv_fs_event), the stat poll when those cannot be trusted, and
 * what is said when a watch cannot be added.  See tailer.h for the
 * contract and docs/tailing.md for the races.
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
#include "watchers/fstrust.h"

/* --- watches ---------------------------------------------------------- */

void
tailer_kick(struct tailer *t)
{
	t->dirty = 1;
	if (t->op == OP_NONE && t->started && !t->closing && !t->paused)
		tailer_cycle_probe(t);
}

void
tailer_on_poll_timer(uv_timer_t *h)
{
	tailer_kick(h->data);
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
void
tailer_backend_poll(struct tailer *t, const char *why, int prio)
{
	int	rc;

	if (t->use_poll)
		return;
	t->use_poll = 1;
	t->tick = 0;
	t->backend = "poll";
	snprintf(t->backend_why, sizeof(t->backend_why), "%s", why);
	if (prio >= 0)
		tailer_log(t, prio, "%s: polling every %u ms: %s", t->path,
		    t->poll_ms, why);
	uv_fs_event_stop(&t->ev_file);
	uv_fs_event_stop(&t->ev_dir);
	uv_fs_event_stop(&t->ev_gp);
	t->dir_watch = t->gp_watch = 0;
	if ((rc = uv_timer_start(&t->poll_timer, tailer_on_poll_timer, t->poll_ms,
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
		t->read_small = 1;
		tailer_read_next(t);
		return;
	}
	tailer_kick(t);
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
	if (name != NULL && strcmp(name, t->base) == 0) {
		if (!(events & UV_RENAME) && t->op == OP_NONE &&
		    !t->draining && uv_is_active((uv_handle_t *)&t->ev_file))
			return;
	} else if (name != NULL && strcmp(name, t->dirbase) == 0) {
		/* The directory itself was deleted or moved (libuv names it
		 * by the watched path's last component): this watch is dead,
		 * or follows a directory the path no longer names. */
		if (events & UV_RENAME)
			t->dir_stale = 1;
	} else if (name != NULL)
		return;		/* profile.json, fixes.jsonl, … */
	tailer_kick(t);
}

/*
 * Events in the directory's parent (the project folder): only the entry
 * of the directory matters.  Any event on it — created, deleted, renamed
 * over — means the directory watch may sit on a directory the path no
 * longer names, and the next probe adds it again.  This is the one signal
 * that cannot be fooled: ext4 hands a freed directory's inode number to
 * the next mkdir, so a new directory can look like the watched one by its
 * number, and a deleted directory that something inside still pins sends
 * its own delete event only when that last reference goes.
 */
static void
on_gp_event(uv_fs_event_t *h, const char *name, int events, int status)
{
	struct tailer	*t = h->data;

	(void)status;
	if (name != NULL && strcmp(name, t->dirbase) == 0)
		t->dir_stale = 1;
	else if (name != NULL && strcmp(name, t->gpbase) == 0) {
		if (events & UV_RENAME)
			t->gp_watch = 0;	/* the project folder went */
	} else if (name != NULL)
		return;		/* the rest of the project */
	tailer_kick(t);
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
static void
watch_failed(struct tailer *t, const char *path, int rc)
{
	char	why[sizeof(t->backend_why)];

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
	tailer_backend_poll(t, why, LOG_WARNING);
}

/*
 * The parent is watched all along, the directory while it exists.  The
 * directory watch is added again when the parent said its entry changed,
 * or when the probe finds another inode there.
 */
void
tailer_dir_watch_set(struct tailer *t, const struct tailer_stat *dir)
{
	struct tailer_stat	now;
	int			rc;

	if (t->use_poll)
		return;
	if (!t->gp_watch) {
		uv_fs_event_stop(&t->ev_gp);
		if ((rc = uv_fs_event_start(&t->ev_gp, on_gp_event, t->gp,
		    0)) < 0) {
			watch_failed(t, t->gp, rc);
			return;
		}
		t->gp_watch = 1;
		t->dirty = 1;
	}
	if (dir->rc != 0) {
		/* Missing: the parent's watch reports it coming back. */
		uv_fs_event_stop(&t->ev_dir);
		t->dir_watch = t->dir_stale = 0;
		return;
	}
	if (t->dir_watch && !t->dir_stale && dir->dev == t->dir_dev &&
	    dir->ino == t->dir_ino)
		return;
	uv_fs_event_stop(&t->ev_dir);
	t->dir_watch = t->dir_stale = 0;
	t->dir_dev = t->dir_ino = 0;
	/* Whatever happened between our stat and the watch: look again. */
	t->dirty = 1;
	rc = uv_fs_event_start(&t->ev_dir, on_dir_event, t->dir, 0);
	if (rc == UV_ENOENT)
		return;		/* gone again: the parent says so */
	if (rc < 0) {
		watch_failed(t, t->dir, rc);
		return;
	}
	t->dir_watch = 1;
	/*
	 * The watch went onto whatever the path named when it was added,
	 * which may already not be the directory the probe saw.  Keep an
	 * inode number only if a stat right after the add (on the loop
	 * thread, as the add itself resolved the path here) finds the
	 * probe's; otherwise the next probe adds the watch again.
	 */
	tailer_stat_path(t->dir, &now);
	if (now.rc == 0 && now.dev == dir->dev && now.ino == dir->ino) {
		t->dir_dev = dir->dev;
		t->dir_ino = dir->ino;
	}
}

void
tailer_file_watch_set(struct tailer *t)
{
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
	if (rc < 0 && rc != UV_ENOENT)
		watch_failed(t, t->path, rc);
}
