/*
 * machine — the machine id a sink's rows carry (see sink.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "project/statedir.h"
#include "sink/sink.h"

/*
 * <parent of the state dir>/machine-id: one per machine (per user's state
 * home), shared by every project's daemon.  Read with statedir_read; made
 * by writing a temp file of our own and link(2)ing it into place, which
 * fails if another daemon won the race — then its id is the one read.
 * (Not statedir_write: that replaces a file, and two daemons starting at
 * once would each keep an id while the file holds only one of them.)
 * Never rewritten.
 */
int
sink_machine_id(const char *state_dir, char out[33])
{
	char		 path[PATH_MAX], tmp[PATH_MAX + 32], buf[64];
	const char	*slash;
	unsigned char	 rnd[16];
	int		 fd, rc, i;
	ssize_t		 n;
	size_t		 len = strlen(state_dir);

	while (len > 1 && state_dir[len - 1] == '/')
		len--;
	for (slash = state_dir + len; slash > state_dir && slash[-1] != '/';)
		slash--;
	slash = slash > state_dir ? slash - 1 : NULL;
	if (slash == NULL)
		return -EINVAL;
	if (slash == state_dir)
		slash++;
	if ((size_t)(slash - state_dir) + 12 >= sizeof(path))
		return -ENAMETOOLONG;
	snprintf(path, sizeof(path), "%.*s/machine-id",
	    (int)(slash - state_dir), state_dir);
	for (i = 0; i < 2; i++) {
		size_t	len = 0;
		int	k;

		/* the one reader of state files: regular files only */
		if ((rc = statedir_read(path, buf, sizeof(buf), &len)) == 0 ||
		    rc == -EFBIG) {
			if (rc != 0 || len < 32)
				return -EBADMSG;
			for (k = 0; k < 32; k++)
				if (!((buf[k] >= '0' && buf[k] <= '9') ||
				    (buf[k] >= 'a' && buf[k] <= 'f')))
					return -EBADMSG;
			memcpy(out, buf, 32);
			out[32] = '\0';
			return 0;
		}
		if (rc != -ENOENT)
			return rc;
		if ((fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC)) < 0)
			return -errno;
		n = read(fd, rnd, sizeof(rnd));
		close(fd);
		if (n != (ssize_t)sizeof(rnd))
			return -EIO;
		for (n = 0; n < 16; n++)
			snprintf(buf + 2 * n, 3, "%02x", rnd[n]);
		buf[32] = '\n';
		snprintf(tmp, sizeof(tmp), "%s.%d.tmp", path, (int)getpid());
		if ((fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
		    0644)) < 0)
			return -errno;
		rc = write(fd, buf, 33) == 33 && fsync(fd) == 0 ? 0 : -errno;
		close(fd);
		if (rc == 0 && link(tmp, path) != 0 && errno != EEXIST)
			rc = -errno;
		unlink(tmp);
		if (rc != 0)
			return rc;
		if ((fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) >= 0)
			close(fd);
		{
			char	dir[PATH_MAX];

			snprintf(dir, sizeof(dir), "%.*s",
			    (int)(slash - state_dir), state_dir);
			if ((fd = open(dir, O_RDONLY | O_DIRECTORY |
			    O_CLOEXEC)) >= 0) {
				fsync(fd);
				close(fd);
			}
		}
	}
	return -EIO;
}

