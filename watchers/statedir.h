/*
 * statedir — where the daemon keeps its own state for one project
 * (DESIGN §4, §8.10): the cursor, the generation, the token, the lock.
 *
 *   $XDG_STATE_HOME/sloptimize/<name>-<id>/      (default ~/.local/state)
 *
 * <name> is the project folder's basename, kept for humans; <id> is the
 * FNV-1a 32 of the absolute project path, so two projects with the same
 * folder name never share a cursor.  Nothing here is ever written into the
 * project tree.  All functions are synchronous: they run at start-up,
 * before the loop.
 */
#ifndef WATCHERS_STATEDIR_H
#define WATCHERS_STATEDIR_H

#include <stddef.h>
#include <sys/types.h>

/*
 * Resolve the state directory of the project at `project_abs` (an absolute
 * path; trailing slashes are ignored) into `out`.  `override`, when not
 * NULL or empty, is used as the state directory itself (--state-dir).  An
 * XDG_STATE_HOME that is unset, empty or relative is ignored, as the XDG
 * spec says.  Returns 0, -EINVAL (project path not absolute), -ENOENT (no
 * home directory to default to) or -ENAMETOOLONG (does not fit `cap`).
 * Nothing is created.
 */
int	statedir_resolve(const char *project_abs, const char *override,
	    char *out, size_t cap);

/*
 * mkdir -p `path`; directories it creates get mode 0700 (the state holds a
 * token).  Existing directories are left as they are.  0 or -errno.
 */
int	statedir_make(const char *path);

/*
 * Take the one-owner lock: flock(LOCK_EX|LOCK_NB) on `<path>/lock`, then
 * write our pid into it.  On success *fd_out holds the lock until
 * statedir_unlock() (or exit; the fd is close-on-exec, so children we
 * spawn never inherit the lock).  If another process holds it, returns
 * -EBUSY and, if `holder` is not NULL, sets it to that process's pid as
 * written in the file (0 if unreadable), so the caller can say
 * "another sloptimized (pid N) owns /path".  Other errors: -errno.
 */
int	statedir_lock(const char *path, int *fd_out, pid_t *holder);
/* Release the lock taken by statedir_lock.  Accepts -1. */
void	statedir_unlock(int fd);

#endif
