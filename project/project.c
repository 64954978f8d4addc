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
#include "project/checkpoint.h"
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
	const atomic_int	*stop;	/* NULL, or give up once non-zero */
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

/* Fold one open file from byte `start` (a line's first byte) to its end;
 * *bytes and *partial report what was read from there and what was left.
 * The descriptor stays open. */
static int
fold_fd(int fd, uint64_t start, struct fold_ctx *c, uint64_t *bytes,
    uint64_t *partial)
{
	struct linesplit	 ls;
	char			*buf;
	ssize_t			 n;
	int			 rc = 0;

	*bytes = *partial = 0;
	if (lseek(fd, (off_t)start, SEEK_SET) == -1)
		return -errno;
	if ((buf = malloc(READ_CHUNK)) == NULL)
		return -ENOMEM;
	(void)posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
	linesplit_init(&ls, 0, on_line, on_long, c);
	linesplit_reset(&ls, start);
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
		if (c->stop != NULL && atomic_load(c->stop)) {
			rc = -ECANCELED;
			break;
		}
	}
	*partial = linesplit_pending(&ls);
	linesplit_free(&ls);
	free(buf);
	return rc;
}

/* Both files opened for project_fold: perf.jsonl must be there. */
static int
open_both(const char *project, struct project_fold_info *info, int *pfd,
    int *ffd)
{
	int	rc;

	*pfd = *ffd = -1;
	if ((rc = project_path(project, "perf.jsonl", info->perf,
	    sizeof(info->perf))) != 0 ||
	    (rc = project_path(project, "fixes.jsonl", info->fixes,
	    sizeof(info->fixes))) != 0)
		return rc;
	/* perf.jsonl first: without it there is no ledger to fold */
	if ((rc = project_open(info->perf, O_RDONLY, 0, pfd)) != 0) {
		info->failed = info->perf;
		return rc;
	}
	rc = project_open(info->fixes, O_RDONLY, 0, ffd);
	if (rc != 0 && rc != -ENOENT) {
		info->failed = info->fixes;
		close(*pfd);
		*pfd = -1;
		return rc;
	}
	return 0;
}

/* fixes.jsonl then perf.jsonl, from byte 0, into a new ledger. */
static int
fold_both(int pfd, int ffd, const struct ledger_opts *o, const atomic_int *stop,
    struct ledger **out, struct project_fold_info *info)
{
	struct fold_ctx	 c = { 0 };
	uint64_t	 fb, fp;
	int		 rc;

	c.stop = stop;
	if ((c.l = ledger_create(o)) == NULL)
		return -ENOMEM;
	/* fixes first: a fix's record is needed to judge every occurrence */
	if (ffd != -1) {
		c.stream = LEDGER_FIXES;
		if ((rc = fold_fd(ffd, 0, &c, &fb, &fp)) != 0) {
			info->failed = info->fixes;
			goto fail;
		}
		info->have_fixes = 1;
	}
	c.stream = LEDGER_PERF;
	if ((rc = fold_fd(pfd, 0, &c, &info->bytes, &info->partial)) != 0) {
		info->failed = info->perf;
		goto fail;
	}
	*out = c.l;
	return 0;
fail:
	ledger_destroy(c.l);
	return rc;
}

int
project_fold(const char *project, const struct ledger_opts *o,
    struct ledger **out, struct project_fold_info *info)
{
	return project_fold_resume(project, NULL, o, 0, out, info);
}

/*
 * The checkpoint's fold and the bytes after it, or a refusal (a sentence
 * in info->resume_why).  Exactness: with the timeline kept, folding perf
 * does not depend on the fixes folded so far, so the fixes appended after
 * the checkpoint may be folded after its perf bytes — except that a
 * skipped fix line would then be listed after the perf lines skipped
 * before it, unlike in a fold from byte 0; such a fold is refused too.
 */
static int
resume(const char *ckpt, int pfd, int ffd, const struct ledger_opts *o,
    unsigned flags, struct ledger **out, struct project_fold_info *info)
{
	struct checkpoint_file	 f;
	struct checkpoint_mark	 m;
	struct ledger_opts	 co = *o;
	struct ledger_counts	 before, after;
	struct fold_ctx		 c = { 0 };
	char			*why = info->resume_why;
	size_t			 cap = sizeof(info->resume_why);
	uint64_t		 fb, fp;
	int			 rc;

	if ((rc = checkpoint_open(ckpt, &f, &m, why, cap)) != 0)
		return rc;
	if ((rc = checkpoint_verify_perf(&m, pfd, why, cap)) != 0 ||
	    (rc = checkpoint_verify_fixes(&m, ffd, why, cap)) != 0) {
		if (rc != -ESTALE)
			snprintf(why, cap, "cannot check the files: %s",
			    strerror(-rc));
		checkpoint_close(&f);
		return rc;
	}
	if (flags & PROJECT_RESUME_ANY_TIMELINE)
		co.want_timeline = 1;
	rc = checkpoint_fold(&f, &co, &c.l, why, cap);
	checkpoint_close(&f);
	if (rc != 0)
		return rc;
	if (ffd != -1) {
		ledger_counts(c.l, &before);
		c.stream = LEDGER_FIXES;
		if ((rc = fold_fd(ffd, m.fixes_offset, &c, &fb, &fp)) != 0) {
			snprintf(why, cap, "fixes.jsonl: %s", strerror(-rc));
			goto fail;
		}
		ledger_counts(c.l, &after);
		if (after.skipped != before.skipped) {
			snprintf(why, cap, "a line appended to fixes.jsonl "
			    "since is skipped");
			rc = -ESTALE;
			goto fail;
		}
		info->have_fixes = 1;
	}
	c.stream = LEDGER_PERF;
	if ((rc = fold_fd(pfd, m.offset, &c, &info->bytes,
	    &info->partial)) != 0) {
		snprintf(why, cap, "perf.jsonl: %s", strerror(-rc));
		goto fail;
	}
	info->bytes += m.offset;
	info->resumed = 1;
	info->resumed_at = m.offset;
	*out = c.l;
	return 0;
fail:
	ledger_destroy(c.l);
	return rc;
}

int
project_fold_resume(const char *project, const char *ckpt,
    const struct ledger_opts *o, unsigned flags, struct ledger **out,
    struct project_fold_info *info)
{
	int	rc, pfd, ffd;

	*out = NULL;
	memset(info, 0, sizeof(*info));
	if ((rc = open_both(project, info, &pfd, &ffd)) != 0)
		return rc;
	if (ckpt != NULL && o->occurrences_of == NULL &&
	    resume(ckpt, pfd, ffd, o, flags, out, info) == 0)
		rc = 0;
	else {
		if (ckpt != NULL && o->occurrences_of != NULL)
			snprintf(info->resume_why, sizeof(info->resume_why),
			    "one issue's occurrences are asked for");
		info->bytes = info->partial = 0;
		info->have_fixes = 0;
		rc = fold_both(pfd, ffd, o, NULL, out, info);
	}
	close(pfd);
	if (ffd != -1)
		close(ffd);
	return rc;
}

int
project_fold_stoppable(const char *project, const struct ledger_opts *o,
    const atomic_int *stop, struct ledger **out,
    struct project_fold_info *info)
{
	int	rc, pfd, ffd;

	*out = NULL;
	memset(info, 0, sizeof(*info));
	if (stop != NULL && atomic_load(stop))
		return -ECANCELED;
	if ((rc = open_both(project, info, &pfd, &ffd)) != 0)
		return rc;
	rc = fold_both(pfd, ffd, o, stop, out, info);
	close(pfd);
	if (ffd != -1)
		close(ffd);
	return rc;
}
