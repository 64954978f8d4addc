/*
 * project — a game project's files, and folding its ledger from disk
 * (project.h).
 *
 * The fold reads with plain read(2) into one 1 MiB buffer and hands the
 * bytes to linesplit: the ledger is streamed, never mapped, so the
 * resident size stays the fold's own whatever the file's size.
 */
#include <sys/stat.h>
#include <sys/types.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ledger/linesplit.h"
#include "project/project.h"

#define READ_CHUNK	(1024 * 1024)

int
project_path(const char *project, const char *name, char *out, size_t cap)
{
	int	n = snprintf(out, cap, "%s/" PROJECT_DIR "/%s", project, name);

	return n < 0 || (size_t)n >= cap ? -ENAMETOOLONG : 0;
}

struct fold_ctx {
	struct ledger		*l;
	enum ledger_stream	 stream;
	int			 err;
};

static void
on_line(void *arg, const char *line, size_t len, uint64_t offset)
{
	struct fold_ctx	*c = arg;
	int		 rc;

	rc = c->stream == LEDGER_PERF ?
	    ledger_fold_perf(c->l, line, len, offset, NULL) :
	    ledger_fold_fix(c->l, line, len, offset);
	if (rc < 0 && c->err == 0)
		c->err = rc;
}

static void
on_long(void *arg, uint64_t offset, uint64_t len)
{
	struct fold_ctx	*c = arg;

	ledger_skip(c->l, c->stream, offset, len, NULL);
}

int
project_open(const char *path, int flags, mode_t mode, int *fd_out)
{
	struct stat	st;
	int		fd, rc;

	*fd_out = -1;
	/*
	 * O_NONBLOCK: opening a FIFO blocks until its other end is opened
	 * (for reading, forever); with it the open returns at once (or
	 * fails with ENXIO for writing) and fstat tells what it is.
	 */
	if ((fd = open(path, flags | O_NONBLOCK | O_NOCTTY | O_CLOEXEC,
	    mode)) == -1)
		return errno == ENXIO ? -PROJECT_ENOTREG : -errno;
	if (fstat(fd, &st) == -1) {
		rc = -errno;
		close(fd);
		return rc;
	}
	if (!S_ISREG(st.st_mode)) {
		close(fd);
		return -PROJECT_ENOTREG;
	}
	/* a regular file never blocks; take the flag off all the same */
	if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK) == -1) {
		rc = -errno;
		close(fd);
		return rc;
	}
	*fd_out = fd;
	return 0;
}

const char *
project_strerror(int rc)
{
	if (rc == -PROJECT_ENOTREG)
		return "not a regular file (a FIFO, socket, device or "
		    "directory is never read or written)";
	return strerror(rc < 0 ? -rc : rc);
}

/* Fold one open file; *bytes and *partial report what was read and left.
 * The descriptor is closed. */
static int
fold_fd(int fd, struct fold_ctx *c, uint64_t *bytes, uint64_t *partial)
{
	struct linesplit	 ls;
	char			*buf;
	ssize_t			 n;
	int			 rc = 0;

	if ((buf = malloc(READ_CHUNK)) == NULL) {
		close(fd);
		return -ENOMEM;
	}
	(void)posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
	linesplit_init(&ls, 0, on_line, on_long, c);
	*bytes = 0;
	for (;;) {
		n = read(fd, buf, READ_CHUNK);
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1) {
			rc = -errno;
			break;
		}
		if (n == 0)
			break;
		*bytes += (uint64_t)n;
		if ((rc = linesplit_feed(&ls, buf, (size_t)n)) != 0 ||
		    (rc = c->err) != 0)
			break;
	}
	*partial = linesplit_pending(&ls);
	linesplit_free(&ls);
	free(buf);
	close(fd);
	return rc;
}

int
project_fold(const char *project, const struct ledger_opts *o,
    struct ledger **out, struct project_fold_info *info)
{
	struct fold_ctx	 c = { 0 };
	uint64_t	 fb, fp;
	int		 rc, pfd = -1, ffd = -1;

	*out = NULL;
	memset(info, 0, sizeof(*info));
	if ((rc = project_path(project, "perf.jsonl", info->perf,
	    sizeof(info->perf))) != 0 ||
	    (rc = project_path(project, "fixes.jsonl", info->fixes,
	    sizeof(info->fixes))) != 0)
		return rc;
	/* perf.jsonl first: without it there is no ledger to fold */
	if ((rc = project_open(info->perf, O_RDONLY, 0, &pfd)) != 0) {
		info->failed = info->perf;
		return rc;
	}
	rc = project_open(info->fixes, O_RDONLY, 0, &ffd);
	if (rc != 0 && rc != -ENOENT) {
		info->failed = info->fixes;
		close(pfd);
		return rc;
	}
	if ((c.l = ledger_create(o)) == NULL) {
		close(pfd);
		if (ffd != -1)
			close(ffd);
		return -ENOMEM;
	}
	/* fixes first: a fix's record is needed to judge every occurrence */
	if (ffd != -1) {
		c.stream = LEDGER_FIXES;
		if ((rc = fold_fd(ffd, &c, &fb, &fp)) != 0) {
			info->failed = info->fixes;
			close(pfd);
			goto fail;
		}
		info->have_fixes = 1;
	}
	c.stream = LEDGER_PERF;
	if ((rc = fold_fd(pfd, &c, &info->bytes, &info->partial)) != 0) {
		info->failed = info->perf;
		goto fail;
	}
	*out = c.l;
	return 0;
fail:
	ledger_destroy(c.l);
	return rc;
}
