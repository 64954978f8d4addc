/*
 * statedir — the per-project state directory, its lock, and the atomic
 * write/read pair every state file goes through (statedir.h).
 *
 * The lock is flock(2) on a file, not a pid file checked with kill(0):
 * the kernel drops a flock when its holder dies, even by kill -9, so a
 * stale lock cannot outlive a crash and no "is that pid still us?" guess
 * is needed.  The pid written into the file is only for the message.
 *
 * statedir_write has one exit path per outcome and closes its descriptor
 * in exactly one place: a close() that failed is never retried, so no
 * descriptor number another thread has been given since is ever closed
 * by mistake.
 */
#include <sys/file.h>
#include <sys/stat.h>

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "ledger/footprint.h"
#include "project/statedir.h"

#define SETTINGS_MAX	4096	/* settings.json is a few dozen bytes */

/* The home directory: $HOME, else the password database. */
static const char *
home_dir(void)
{
	const char	*h = getenv("HOME");
	struct passwd	*pw;

	if (h != NULL && h[0] == '/')
		return h;
	if ((pw = getpwuid(getuid())) != NULL && pw->pw_dir != NULL &&
	    pw->pw_dir[0] == '/')
		return pw->pw_dir;
	return NULL;
}

int
statedir_resolve(const char *project_abs, const char *override, char *out,
    size_t cap)
{
	const char	*xdg, *home, *name;
	size_t		 len;
	uint32_t	 id;
	int		 n;

	if (override != NULL && override[0] != '\0') {
		n = snprintf(out, cap, "%s", override);
		return n < 0 || (size_t)n >= cap ? -ENAMETOOLONG : 0;
	}
	if (project_abs == NULL || project_abs[0] != '/')
		return -EINVAL;

	/* "/a/b/" and "/a/b" are one project: hash without trailing slashes. */
	len = strlen(project_abs);
	while (len > 1 && project_abs[len - 1] == '/')
		len--;
	id = fnv1a32(project_abs, len);
	name = project_abs + len;
	while (name > project_abs && name[-1] != '/')
		name--;
	if (name == project_abs + len) {	/* the root directory */
		name = "root";
		len = 4;
	} else
		len = (size_t)(project_abs + len - name);

	xdg = getenv("XDG_STATE_HOME");
	if (xdg != NULL && xdg[0] == '/')
		n = snprintf(out, cap, "%s/sloptimize/%.*s-%08x", xdg,
		    (int)len, name, id);
	else if ((home = home_dir()) != NULL)
		n = snprintf(out, cap, "%s/.local/state/sloptimize/%.*s-%08x",
		    home, (int)len, name, id);
	else
		return -ENOENT;
	return n < 0 || (size_t)n >= cap ? -ENAMETOOLONG : 0;
}

int
statedir_path(const char *dir, const char *name, char *out, size_t cap)
{
	int	n = snprintf(out, cap, "%s/%s", dir, name);

	return n < 0 || (size_t)n >= cap ? -ENAMETOOLONG : 0;
}

int
statedir_make(const char *path)
{
	char	buf[4096], *p;
	size_t	len = strlen(path);

	if (len == 0)
		return -EINVAL;
	if (len >= sizeof(buf))
		return -ENAMETOOLONG;
	memcpy(buf, path, len + 1);
	/* Each prefix in turn; EEXIST is fine as long as it is a directory. */
	for (p = buf + 1; ; p++) {
		if (*p != '/' && *p != '\0')
			continue;
		if (p[-1] != '/') {
			char	c = *p;
			struct stat st;

			*p = '\0';
			if (mkdir(buf, 0700) == -1) {
				if (errno != EEXIST)
					return -errno;
				if (stat(buf, &st) == -1)
					return -errno;
				if (!S_ISDIR(st.st_mode))
					return -ENOTDIR;
			}
			*p = c;
		}
		if (*p == '\0')
			break;
	}
	return 0;
}

int
statedir_lock(const char *path, int *fd_out, pid_t *holder)
{
	char	file[4096], pid[32];
	ssize_t	n;
	int	fd, len, saved;

	*fd_out = -1;
	if (holder != NULL)
		*holder = 0;
	len = snprintf(file, sizeof(file), "%s/lock", path);
	if (len < 0 || (size_t)len >= sizeof(file))
		return -ENAMETOOLONG;
	if ((fd = open(file, O_RDWR | O_CREAT | O_CLOEXEC, 0600)) == -1)
		return -errno;
	while (flock(fd, LOCK_EX | LOCK_NB) == -1) {
		if (errno == EINTR)
			continue;
		saved = errno;
		if (saved == EWOULDBLOCK && holder != NULL &&
		    (n = pread(fd, pid, sizeof(pid) - 1, 0)) > 0) {
			pid[n] = '\0';
			*holder = (pid_t)strtol(pid, NULL, 10);
		}
		close(fd);
		return saved == EWOULDBLOCK ? -EBUSY : -saved;
	}
	/* Ours now: say who we are, for the next one that tries. */
	len = snprintf(pid, sizeof(pid), "%ld\n", (long)getpid());
	if (ftruncate(fd, 0) == -1 || pwrite(fd, pid, (size_t)len, 0) != len) {
		saved = errno ? errno : EIO;
		close(fd);
		return -saved;
	}
	*fd_out = fd;
	return 0;
}

void
statedir_unlock(int fd)
{
	if (fd >= 0)
		close(fd);
}

/* --- the atomic pair --------------------------------------------------- */

/* write(2) all of it, through EINTR and short writes. */
static int
write_all(int fd, const char *p, size_t n)
{
	ssize_t	w;

	while (n > 0) {
		if ((w = write(fd, p, n)) == -1) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

/* fsync the directory holding `path`, so a rename into it is durable. */
static int
fsync_parent(const char *path)
{
	char		 dir[PATH_MAX];
	const char	*slash = strrchr(path, '/');
	int		 fd, rc = 0;

	if (slash == NULL)
		strcpy(dir, ".");
	else if (slash == path)
		strcpy(dir, "/");
	else {
		if ((size_t)(slash - path) >= sizeof(dir))
			return -ENAMETOOLONG;
		memcpy(dir, path, (size_t)(slash - path));
		dir[slash - path] = '\0';
	}
	if ((fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) == -1)
		return -errno;
	if (fsync(fd) == -1 && errno != EINVAL)	/* EINVAL: fs can't, fine */
		rc = -errno;
	close(fd);
	return rc;
}

/* What put() appends to: the temp file. */
struct tmp_out {
	int	fd;
};

static int
tmp_put(void *arg, const void *data, size_t len)
{
	struct tmp_out	*o = arg;

	return write_all(o->fd, data, len);
}

/* Fill a fresh temp file: written, mode set, fsynced, closed (once). */
static int
tmp_fill(const char *tmp, mode_t mode,
    int (*fill)(void *, statedir_put_fn *, void *), void *arg)
{
	struct tmp_out	o;
	int		rc;

	if ((o.fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC |
	    O_NOFOLLOW, mode)) == -1)
		return -errno;
	rc = fill(arg, tmp_put, &o);
	if (rc == 0 && fchmod(o.fd, mode) == -1)	/* whatever the umask */
		rc = -errno;
	if (rc == 0 && fsync(o.fd) == -1)
		rc = -errno;
	if (close(o.fd) == -1 && rc == 0)
		rc = -errno;
	return rc;
}

int
statedir_write_with(const char *path, mode_t mode,
    int (*fill)(void *arg, statedir_put_fn *put, void *put_arg), void *arg)
{
	char	tmp[PATH_MAX];
	int	n, rc;

	n = snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	if (n < 0 || (size_t)n >= sizeof(tmp))
		return -ENAMETOOLONG;
	/* a temp file left by a kill -9 mid-write: ours to replace */
	if (unlink(tmp) == -1 && errno != ENOENT)
		return -errno;
	if ((rc = tmp_fill(tmp, mode, fill, arg)) == 0 &&
	    rename(tmp, path) == -1)
		rc = -errno;
	if (rc != 0) {
		unlink(tmp);
		return rc;
	}
	return fsync_parent(path);
}

/* statedir_write's content: one piece. */
struct whole {
	const void	*data;
	size_t		 len;
};

static int
whole_fill(void *arg, statedir_put_fn *put, void *put_arg)
{
	struct whole	*w = arg;

	return put(put_arg, w->data, w->len);
}

int
statedir_write(const char *path, const void *data, size_t len, mode_t mode)
{
	struct whole	w = { data, len };

	return statedir_write_with(path, mode, whole_fill, &w);
}

/* Open a state file for reading by the one rule: no symlink, never a
 * FIFO's wait, nothing but a regular file. */
static int
open_regular(const char *path, int *fd_out, struct stat *st)
{
	int	fd, rc = 0;

	*fd_out = -1;
	/* O_NONBLOCK: a FIFO planted at the path must not hang us */
	if ((fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW |
	    O_NONBLOCK)) == -1)
		return errno == ELOOP ? -ESPIPE : -errno;
	if (fstat(fd, st) == -1)
		rc = -errno;
	else if (!S_ISREG(st->st_mode))
		rc = -ESPIPE;
	if (rc != 0) {
		close(fd);
		return rc;
	}
	*fd_out = fd;
	return 0;
}

int
statedir_open(const char *path, int *fd, uint64_t *size)
{
	struct stat	st;
	int		rc;

	*size = 0;
	if ((rc = open_regular(path, fd, &st)) != 0)
		return rc;
	/* a regular file never blocks; take the flag off all the same */
	if (fcntl(*fd, F_SETFL, fcntl(*fd, F_GETFL) & ~O_NONBLOCK) == -1) {
		rc = -errno;
		close(*fd);
		*fd = -1;
		return rc;
	}
	*size = (uint64_t)st.st_size;
	return 0;
}

int
statedir_read(const char *path, void *buf, size_t cap, size_t *len)
{
	struct stat	 st;
	char		*p = buf, extra;
	size_t		 n = 0;
	ssize_t		 r;
	int		 fd, rc = 0;

	*len = 0;
	if ((rc = open_regular(path, &fd, &st)) != 0)
		return rc;
	while (rc == 0) {
		/* one byte past cap tells "exactly cap" from "longer" */
		if (n == cap)
			r = read(fd, &extra, 1);
		else
			r = read(fd, p + n, cap - n);
		if (r == -1 && errno == EINTR)
			continue;
		if (r == -1)
			rc = -errno;
		else if (r == 0)
			break;
		else if (n == cap)
			rc = -EFBIG;
		else
			n += (size_t)r;
	}
	close(fd);
	if (rc == 0)
		*len = n;
	return rc;
}

int
statedir_remove(const char *path)
{
	return unlink(path) == -1 && errno != ENOENT ? -errno : 0;
}

/* --- the files ------------------------------------------------------- */

static int
token_valid(const char *buf, size_t n)
{
	size_t	i;

	if (n != STATEDIR_TOKEN_LEN && !(n == STATEDIR_TOKEN_LEN + 1 &&
	    buf[STATEDIR_TOKEN_LEN] == '\n'))
		return 0;
	for (i = 0; i < STATEDIR_TOKEN_LEN; i++)
		if (!isxdigit((unsigned char)buf[i]))
			return 0;
	return 1;
}

int
statedir_token(const char *dir, char token[STATEDIR_TOKEN_LEN + 1],
    unsigned *what)
{
	char		 path[PATH_MAX], buf[80];
	unsigned char	 raw[STATEDIR_TOKEN_LEN / 2];
	struct stat	 st;
	unsigned	 w = 0;
	size_t		 n, i;
	int		 rc;

	token[0] = '\0';
	if ((rc = statedir_path(dir, "token", path, sizeof(path))) != 0)
		return rc;
	rc = statedir_read(path, buf, sizeof(buf), &n);
	if (rc == 0 && token_valid(buf, n)) {
		if (stat(path, &st) == 0 && (st.st_mode & 077) != 0) {
			if (chmod(path, 0600) == -1)
				return -errno;
			w |= STATEDIR_TOKEN_CHMOD;
		}
		memcpy(token, buf, STATEDIR_TOKEN_LEN);
		token[STATEDIR_TOKEN_LEN] = '\0';
		if (what != NULL)
			*what = w;
		return 0;
	}
	if (rc != 0 && rc != -ENOENT && rc != -EFBIG)
		return rc;
	w |= rc == -ENOENT ? STATEDIR_TOKEN_MADE : STATEDIR_TOKEN_REMADE;
	if (getentropy(raw, sizeof(raw)) == -1)
		return -errno;
	for (i = 0; i < sizeof(raw); i++)
		snprintf(buf + 2 * i, 3, "%02x", raw[i]);
	buf[STATEDIR_TOKEN_LEN] = '\n';
	if ((rc = statedir_write(path, buf, STATEDIR_TOKEN_LEN + 1,
	    0600)) != 0)
		return rc;
	memcpy(token, buf, STATEDIR_TOKEN_LEN);
	token[STATEDIR_TOKEN_LEN] = '\0';
	if (what != NULL)
		*what = w;
	return 0;
}

int
statedir_loop_valid(const char *v)
{
	return v != NULL && (strcmp(v, "off") == 0 ||
	    strcmp(v, "propose") == 0 || strcmp(v, "apply") == 0);
}

int
statedir_settings_read(const char *dir, char *loop, size_t cap)
{
	char		 path[PATH_MAX], buf[SETTINGS_MAX];
	cJSON		*o;
	const char	*v;
	size_t		 n;
	int		 rc;

	if (cap > 0)
		loop[0] = '\0';
	if ((rc = statedir_path(dir, "settings.json", path,
	    sizeof(path))) != 0 ||
	    (rc = statedir_read(path, buf, sizeof(buf), &n)) != 0)
		return rc == -EFBIG ? -EBADMSG : rc;
	o = cJSON_ParseWithLength(buf, n);
	v = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o, "loop"));
	rc = statedir_loop_valid(v) && strlen(v) < cap ? 0 : -EBADMSG;
	if (rc == 0)
		memcpy(loop, v, strlen(v) + 1);
	cJSON_Delete(o);
	return rc;
}

int
statedir_settings_write(const char *dir, const char *loop, int64_t now_ms)
{
	char	 path[PATH_MAX], iso[32], *txt, *line;
	cJSON	*o;
	size_t	 n;
	int	 rc;

	if (!statedir_loop_valid(loop))
		return -EINVAL;
	if ((rc = statedir_path(dir, "settings.json", path,
	    sizeof(path))) != 0)
		return rc;
	if ((o = cJSON_CreateObject()) == NULL)
		return -ENOMEM;
	cJSON_AddNumberToObject(o, "v", 1);
	cJSON_AddStringToObject(o, "loop", loop);
	iso_format_ms(now_ms, iso);
	cJSON_AddStringToObject(o, "updatedAt", iso);
	txt = cJSON_Print(o);
	cJSON_Delete(o);
	if (txt == NULL)
		return -ENOMEM;
	n = strlen(txt);
	if ((line = malloc(n + 1)) == NULL) {
		free(txt);
		return -ENOMEM;
	}
	memcpy(line, txt, n);
	line[n] = '\n';
	rc = statedir_write(path, line, n + 1, 0644);
	free(line);
	free(txt);
	return rc;
}

/* --- slots ------------------------------------------------------------ */

/*
 * The record: the caller's text, "sum <fnv1a32 of the text, 8 hex>\n",
 * then spaces to STATEDIR_SLOT_SIZE - 1 and a final '\n'.  Always the
 * whole size, so one pwrite(2) at offset 0 replaces it entirely.
 */
static int
slot_format(char rec[STATEDIR_SLOT_SIZE], const char *text)
{
	size_t	n = strlen(text);
	int	k;

	if (n > STATEDIR_SLOT_TEXT_MAX || memchr(text, '\0', n) != NULL)
		return -EINVAL;
	memcpy(rec, text, n);
	k = snprintf(rec + n, STATEDIR_SLOT_SIZE - n, "sum %08x\n",
	    (unsigned)fnv1a32(text, n));
	if (k < 0 || n + (size_t)k >= STATEDIR_SLOT_SIZE)
		return -EINVAL;
	memset(rec + n + (size_t)k, ' ', STATEDIR_SLOT_SIZE - n - (size_t)k);
	rec[STATEDIR_SLOT_SIZE - 1] = '\n';
	return 0;
}

int
statedir_slot_open(const char *path, const char *initial, mode_t mode,
    int *fd_out)
{
	char		rec[STATEDIR_SLOT_SIZE];
	struct stat	st;
	int		fd, rc;

	*fd_out = -1;
	if (lstat(path, &st) == -1) {
		if (errno != ENOENT)
			return -errno;
		/* made whole by the one atomic writer, then kept open */
		if ((rc = slot_format(rec, initial)) != 0 ||
		    (rc = statedir_write(path, rec, sizeof(rec), mode)) != 0)
			return rc;
	} else if (!S_ISREG(st.st_mode))
		return -ESPIPE;
	if ((fd = open(path, O_WRONLY | O_CLOEXEC | O_NOFOLLOW |
	    O_NONBLOCK)) == -1)
		return errno == ELOOP ? -ESPIPE : -errno;
	if (fstat(fd, &st) == -1 || !S_ISREG(st.st_mode)) {
		close(fd);
		return -ESPIPE;
	}
	*fd_out = fd;
	return 0;
}

int
statedir_slot_write(int fd, const char *text)
{
	char	rec[STATEDIR_SLOT_SIZE];
	ssize_t	w;
	int	rc;

	if ((rc = slot_format(rec, text)) != 0)
		return rc;
	do
		w = pwrite(fd, rec, sizeof(rec), 0);
	while (w == -1 && errno == EINTR);
	if (w == -1)
		return -errno;
	/* a short write of 128 bytes to a regular file is a full disk */
	return (size_t)w == sizeof(rec) ? 0 : -ENOSPC;
}

int
statedir_slot_read(const char *path, char *text, size_t cap)
{
	char		 rec[STATEDIR_SLOT_SIZE + 1], want[16];
	const char	*sum;
	size_t		 n, tlen;
	int		 rc;

	if ((rc = statedir_read(path, rec, sizeof(rec), &n)) != 0)
		return rc == -EFBIG ? -EBADMSG : rc;
	if (n != STATEDIR_SLOT_SIZE)
		return -EBADMSG;
	rec[n] = '\0';
	/* the last "sum " line starting a line, before the padding */
	for (sum = NULL, tlen = 0; tlen + 13 <= n; tlen++)
		if ((tlen == 0 || rec[tlen - 1] == '\n') &&
		    memcmp(rec + tlen, "sum ", 4) == 0) {
			sum = rec + tlen;
			break;
		}
	if (sum == NULL || memchr(rec, '\0', tlen) != NULL)
		return -EBADMSG;
	snprintf(want, sizeof(want), "sum %08x\n",
	    (unsigned)fnv1a32(rec, tlen));
	if (memcmp(sum, want, 13) != 0)
		return -EBADMSG;
	if (tlen + 1 > cap)
		return -EFBIG;
	memcpy(text, rec, tlen);
	text[tlen] = '\0';
	return 0;
}

void
statedir_slot_close(int fd)
{
	if (fd >= 0)
		close(fd);
}
