/*
 * project — a game project's files, and folding its ledger from disk
 * (project.h).
 *
 * The fold reads with plain read(2) into one 1 MiB buffer and hands the
 * bytes to linesplit: the ledger is streamed, never mapped, so the
 * resident size stays the fold's own whatever the file's size.
 */
#include <sys/stat.h>

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

/* Fold one file; *bytes and *partial report what was read and left. */
static int
fold_file(const char *path, struct fold_ctx *c, uint64_t *bytes,
    uint64_t *partial)
{
	struct linesplit	 ls;
	char			*buf;
	ssize_t			 n;
	int			 fd, rc = 0;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
		return -errno;
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
	struct stat	 st;
	int		 rc;

	memset(info, 0, sizeof(*info));
	if ((rc = project_path(project, "perf.jsonl", info->perf,
	    sizeof(info->perf))) != 0 ||
	    (rc = project_path(project, "fixes.jsonl", info->fixes,
	    sizeof(info->fixes))) != 0)
		return rc;
	if (stat(info->perf, &st) == -1)
		return -errno;
	if ((c.l = ledger_create(o)) == NULL)
		return -ENOMEM;
	/* fixes first: a fix's record is needed to judge every occurrence */
	c.stream = LEDGER_FIXES;
	rc = fold_file(info->fixes, &c, &fb, &fp);
	if (rc == 0)
		info->have_fixes = 1;
	else if (rc != -ENOENT)
		goto fail;
	c.stream = LEDGER_PERF;
	if ((rc = fold_file(info->perf, &c, &info->bytes,
	    &info->partial)) != 0)
		goto fail;
	*out = c.l;
	return 0;
fail:
	ledger_destroy(c.l);
	return rc;
}

