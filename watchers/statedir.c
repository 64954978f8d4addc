/*
 * statedir — the per-project state directory and its lock (statedir.h).
 *
 * The lock is flock(2) on a file, not a pid file checked with kill(0):
 * the kernel drops a flock when its holder dies, even by kill -9, so a
 * stale lock cannot outlive a crash and no "is that pid still us?" guess
 * is needed.  The pid written into the file is only for the message.
 */
#include <sys/file.h>
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ledger/footprint.h"
#include "statedir.h"

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
