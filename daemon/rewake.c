/*
 * rewake — re-making wakes from perf.jsonl in bounded chunks (rewake.h).
 *
 * The pool never touches the live catalogue: the first step folds the
 * chunk into a scratch catalogue of its own, which knows the record and
 * its footprint but not the whole history; the loop fills in the
 * count and status from the live catalogue; the second pool step folds
 * each kept line once more (cheaper than copying every string of an
 * event) and formats it with those values.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "daemon/rewake.h"
#include "ledger/ledger.h"
#include "ledger/linesplit.h"
#include "project/project.h"

#define READ_BLOCK	(256u << 10)

struct rewake_rec {
	uint64_t	 off;
	char		*line;
	size_t		 len;
	char		 fp[9];
	int		 have_row;	/* the live catalogue has its row */
	uint64_t	 count;
	char		 status[16];
};

struct rewake_job *
rewake_new(void)
{
	return calloc(1, sizeof(struct rewake_job));
}

void
rewake_free(struct rewake_job *j)
{
	size_t	i;

	if (j == NULL)
		return;
	for (i = 0; i < j->nrecs; i++)
		free(j->recs[i].line);
	free(j->recs);
	for (i = 0; i < j->nmsgs; i++)
		free(j->msgs[i].json);
	free(j->msgs);
	ledger_destroy(j->scratch);
	free(j);
}

static struct ledger *
scratch_new(void)
{
	/* the live fold's filters (daemon/fold.c fold_opts), without the
	 * timeline: the same records are meaningful */
	struct ledger_opts	o = { LEDGER_NO_TIME, LEDGER_NO_TIME, 0, 0,
				    NULL };

	return ledger_create(&o);
}

/* --- step 1, pool: which lines of the chunk wake ---------------------- */

/* Stop before this line?  Then the next job starts at it. */
static int
chunk_full(struct rewake_job *j, uint64_t off)
{
	if (j->stop)
		return 1;
	if (off >= j->limit || j->nrecs == REWAKE_MAX_WAKES ||
	    j->kept >= REWAKE_MAX_KEPT ||
	    (j->consumed && off - j->first >= REWAKE_MAX_READ))
		j->stop = 1;
	return j->stop;
}

static void
passed(struct rewake_job *j, uint64_t off)
{
	j->consumed = 1;
	j->last = off;
}

static void
scan_line(void *arg, const char *line, size_t len, uint64_t off)
{
	struct rewake_job	*j = arg;
	struct rewake_rec	*r;
	struct ledger_event	 ev;

	if (chunk_full(j, off))
		return;
	if (!j->after_none && off <= j->after)
		return;		/* delivered: the one at `after`, or a part */
	passed(j, off);
	if (ledger_fold_perf(j->scratch, line, len, off, &ev) != 0 ||
	    !wake_is_meaningful(&ev, &j->cfg))
		return;
	if (j->nrecs == j->caprecs) {
		size_t			 n = j->caprecs ? j->caprecs * 2 : 64;
		struct rewake_rec	*nr = realloc(j->recs, n * sizeof(*nr));

		if (nr == NULL) {
			j->rc = -ENOMEM;
			j->stop = 1;
			return;
		}
		j->recs = nr;
		j->caprecs = n;
	}
	r = &j->recs[j->nrecs];
	memset(r, 0, sizeof(*r));
	if ((r->line = malloc(len ? len : 1)) == NULL) {
		j->rc = -ENOMEM;
		j->stop = 1;
		return;
	}
	memcpy(r->line, line, len);
	r->len = len;
	r->off = off;
	memcpy(r->fp, ev.id, sizeof(r->fp));
	j->kept += len;
	j->nrecs++;
}

static void
scan_long(void *arg, uint64_t off, uint64_t len)
{
	struct rewake_job	*j = arg;

	(void)len;
	if (chunk_full(j, off) || (!j->after_none && off <= j->after))
		return;
	passed(j, off);		/* skipped by the fold too: no wake */
}

static void
scan_work(struct rewake_job *j)
{
	struct linesplit	 ls;
	char			*buf;
	uint64_t		 pos;
	ssize_t			 n;
	int			 fd, rc;

	if ((j->scratch = scratch_new()) == NULL ||
	    (buf = malloc(READ_BLOCK)) == NULL) {
		j->rc = -ENOMEM;
		return;
	}
	if ((rc = project_open(j->path, O_RDONLY, 0, &fd)) != 0) {
		free(buf);
		j->rc = rc;
		return;
	}
	/* from the byte of `after` on: the line that holds it is passed
	 * over by its offset (scan_line), whether `after` starts it or not */
	pos = j->after_none ? 0 : j->after;
	j->first = pos;
	linesplit_init(&ls, 0, scan_line, scan_long, j);
	linesplit_reset(&ls, pos);
	while (!j->stop) {
		if ((n = pread(fd, buf, READ_BLOCK, (off_t)pos)) < 0) {
			if (errno == EINTR)
				continue;
			j->rc = -errno;
			break;
		}
		if (n == 0) {
			j->end = 1;	/* a last line without its '\n' waits */
			break;
		}
		if (linesplit_feed(&ls, buf, (size_t)n) != 0) {
			j->rc = -ENOMEM;
			break;
		}
		pos += (uint64_t)n;
	}
	linesplit_free(&ls);
	close(fd);
	free(buf);
}

/* --- step 2, pool: the messages ----------------------------------------- */

static void
format_work(struct rewake_job *j)
{
	char			 id[WAKE_ID_SIZE], line[WAKE_LINE_SIZE], *txt;
	struct ledger_event	 ev;
	cJSON			*o;
	size_t			 i;

	if ((j->msgs = calloc(j->nrecs, sizeof(*j->msgs))) == NULL) {
		j->rc = -ENOMEM;
		return;
	}
	for (i = 0; i < j->nrecs; i++) {
		struct rewake_rec	*r = &j->recs[i];

		if (ledger_fold_perf(j->scratch, r->line, r->len, r->off,
		    &ev) != 0)
			continue;	/* it folded a moment ago */
		if (r->have_row) {
			ev.count = r->count;
			ev.status = r->status;
		}
		wake_id_format(id, j->gen, r->off);
		if (wake_format(line, sizeof(line), &ev, id, NULL, &j->cfg) < 0 ||
		    (o = wake_json(&ev, id, line, NULL)) == NULL) {
			j->rc = -ENOMEM;
			return;
		}
		cJSON_AddBoolToObject(o, "replayed", 1);
		txt = cJSON_PrintUnformatted(o);
		cJSON_Delete(o);
		if (txt == NULL) {
			j->rc = -ENOMEM;
			return;
		}
		j->msgs[j->nmsgs].off = r->off;
		j->msgs[j->nmsgs].json = txt;
		j->msgs[j->nmsgs].len = strlen(txt);
		j->nmsgs++;
		free(r->line);
		r->line = NULL;
		r->len = 0;
	}
}

static void
work(uv_work_t *req)
{
	struct rewake_job	*j = req->data;

	if (j->step == 0)
		scan_work(j);
	else
		format_work(j);
}

/* --- between the steps, loop: the live catalogue's word -------------- */

static void
after(uv_work_t *req, int status)
{
	struct rewake_job	*j = req->data;
	const char		*st;
	size_t			 i;

	if (status != 0 && j->rc == 0)
		j->rc = status;		/* cancelled: the loop is closing */
	if (j->step == 0 && j->rc == 0 && j->nrecs > 0 && !j->cancelled) {
		for (i = 0; i < j->nrecs; i++) {
			struct rewake_rec	*r = &j->recs[i];

			if ((st = j->row(j, r->fp, &r->count)) == NULL)
				continue;
			r->have_row = 1;
			snprintf(r->status, sizeof(r->status), "%s", st);
		}
		j->step = 1;
		if (uv_queue_work(req->loop, &j->req, work, after) == 0)
			return;
		j->rc = -ENOMEM;
	}
	j->done(j);
}

int
rewake_start(uv_loop_t *loop, struct rewake_job *j)
{
	if (j->cfg.loop != NULL) {
		snprintf(j->loop, sizeof(j->loop), "%s", j->cfg.loop);
		j->cfg.loop = j->loop;
	}
	j->req.data = j;
	j->step = 0;
	return uv_queue_work(loop, &j->req, work, after);
}
