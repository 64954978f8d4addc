/*
 * statedir — where the daemon keeps its own state for one project
 * (DESIGN §4, §8.10), and the one way every file there is written and
 * read.
 *
 *   $XDG_STATE_HOME/sloptimize/<name>-<id>/      (default ~/.local/state)
 *
 * <name> is the project folder's basename, kept for humans; <id> is the
 * FNV-1a 32 of the absolute project path, so two projects with the same
 * folder name never share a cursor.  Nothing here is ever written into the
 * project tree.
 *
 * The files: `lock` (the one-owner lock), `cursor` (watchers/cursor.h),
 * `daemon.json` (where the daemon listens), `settings.json` (the fix
 * loop's level), `token` (the API's bearer token), `wakes` (the id of
 * the last wake said: a slot, below).  Each is replaced
 * whole through statedir_write — temp file, fsync, rename, fsync of the
 * directory — so a reader (statedir_read) sees the old content or the
 * new, never a mix, whatever crashes when.
 *
 * Everything here blocks on the disk: the daemon calls it at start-up,
 * at shutdown, or from the thread pool.  Thread-safe, except that two
 * writes of one path must not run at once (they share its temp file).
 */
#ifndef PROJECT_STATEDIR_H
#define PROJECT_STATEDIR_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define STATEDIR_TOKEN_LEN	64	/* hex digits */

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

/* "<dir>/<name>" into out.  0 or -ENAMETOOLONG. */
int	statedir_path(const char *dir, const char *name, char *out,
	    size_t cap);

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

/*
 * The one atomic writer: afterwards `path` holds exactly data[0..len),
 * with permissions `mode`, or — on any error — its old content, and no
 * temp file is left behind.  The temp file is `<path>.tmp` (a fixed name:
 * a kill -9 mid-write leaves at most one, which the next write replaces);
 * it is written and fsynced, renamed over `path`, and the directory is
 * fsynced so the rename itself survives a crash.  0 or -errno.
 */
int	statedir_write(const char *path, const void *data, size_t len,
	    mode_t mode);

/*
 * The same writer for content made as it is written, so that a state
 * file of megabytes (the fold's checkpoint) is never held whole in
 * memory: fill(arg, put, put_arg) is called once and hands the bytes to
 * put(put_arg, data, len), in order (put returns 0 or -errno).  A
 * non-zero return of fill abandons the write: the old file stays and no
 * temp file is left.  0 or -errno.
 */
typedef int	statedir_put_fn(void *put_arg, const void *data, size_t len);
int	statedir_write_with(const char *path, mode_t mode,
	    int (*fill)(void *arg, statedir_put_fn *put, void *put_arg),
	    void *arg);

/*
 * A slot: a small record rewritten in place many times a second —
 * `wakes`, the id of the last wake said, rewritten before every wake the
 * events socket sends (notifier/notifier.h).  The one writer above costs
 * a create, a rename and two fsyncs (here 0.17 ms at the median and 2 ms
 * at p99 even without the fsyncs: more than the wake's whole latency
 * budget); a slot is updated by a single pwrite(2) of its whole fixed-size
 * record at offset 0 (under a microsecond), which a killed process
 * cannot tear: the record is the old one or the new.  A power cut may
 * bring back an older record or a torn one; the record carries a checksum,
 * so a torn one is detected (-EBADMSG), never used.  The file itself is
 * made, when missing, by statedir_write — whole or not at all.
 *
 * The record: the text (at most STATEDIR_SLOT_TEXT_MAX bytes, lines of
 * "key value"), "sum <fnv1a32 of the text>", spaces up to
 * STATEDIR_SLOT_SIZE bytes.
 */
#define STATEDIR_SLOT_SIZE	128
#define STATEDIR_SLOT_TEXT_MAX	96

/* Open `path` for slot writes, making it with `initial` when missing.
 * Anything but a regular file is refused (-ESPIPE).  0 or -errno;
 * *fd_out is -1 on error. */
int	statedir_slot_open(const char *path, const char *initial, mode_t mode,
	    int *fd_out);
/* Replace the record with `text`: one pwrite(2).  0, -EINVAL (too long),
 * -ENOSPC, or -errno.  Never blocks on a lock; safe on the loop thread. */
int	statedir_slot_write(int fd, const char *text);
/* The text of the record at `path` into text[cap] (NUL-terminated).  0,
 * -ENOENT, -EBADMSG (torn, wrong size, checksum), -EFBIG (cap), -ESPIPE,
 * or -errno. */
int	statedir_slot_read(const char *path, char *text, size_t cap);
/* Accepts -1. */
void	statedir_slot_close(int fd);

/*
 * The one reader: the whole of `path` into buf[0..cap), its length in
 * *len (buf is not NUL-terminated).  Never blocks and never follows a
 * symlink: anything but a regular file is refused.  0, -ENOENT, -EFBIG
 * (longer than cap), -ESPIPE (not a regular file), or -errno.
 */
int	statedir_read(const char *path, void *buf, size_t cap, size_t *len);

/*
 * The reader for a state file read as it goes (the checkpoint): `path`
 * opened by statedir_read's rules — never a symlink, never a wait on a
 * FIFO, nothing but a regular file — into *fd (close-on-exec; the
 * caller closes it), its length in *size.  0, -ENOENT, -ESPIPE, -errno.
 */
int	statedir_open(const char *path, int *fd, uint64_t *size);

/* Remove a state file; a missing one is fine.  0 or -errno. */
int	statedir_remove(const char *path);

/*
 * The API token in <dir>/token: 32 random bytes as 64 lowercase hex
 * digits and a newline, mode 0600, made at first start and kept.  A file
 * that is not 64 hex digits is replaced by a new token; one readable by
 * others is made 0600.  token gets the digits and a NUL; *what (may be
 * NULL) says what happened, as STATEDIR_TOKEN_* bits, for the log.
 * 0 or -errno (no token then).
 */
#define STATEDIR_TOKEN_MADE	1	/* there was none: a new one */
#define STATEDIR_TOKEN_REMADE	2	/* it was malformed: a new one */
#define STATEDIR_TOKEN_CHMOD	4	/* it was readable by others */
int	statedir_token(const char *dir, char token[STATEDIR_TOKEN_LEN + 1],
	    unsigned *what);

/*
 * <dir>/settings.json, {"v":1,"loop":"off|propose|apply","updatedAt":ISO}
 * (docs/api.md), read by the daemon and by `sloptimize hook-status`.
 * statedir_settings_read puts the loop level into loop[cap]: 0, -ENOENT
 * (no settings yet), -EBADMSG (not that shape), or -errno.
 */
int	statedir_settings_read(const char *dir, char *loop, size_t cap);
int	statedir_settings_write(const char *dir, const char *loop,
	    int64_t now_ms);
/* Is v one of the fix loop's levels (off, propose, apply)? */
int	statedir_loop_valid(const char *v);

#endif
