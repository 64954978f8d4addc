/*
 * sink — the record stream to ClickHouse (see sink.h for the contract).
 *
 * One operation at a time, like the tailer's read cycle:
 *
 *   IDLE ──kick──▶ CHECK (POST: read DB.meta) ──▶ IDLE
 *        ──kick──▶ READ (thread pool: verify, pread, rows) ──▶ POST ──▶ IDLE
 *        ──error──▶ WAIT (backoff timer) ──▶ IDLE
 *
 * plus, beside it, at most one cursor save on the thread pool (a later
 * one is marked dirty and follows).  The cursor moves only when
 * ClickHouse answered 200 for the rows before it, and it is saved after
 * that: a crash between the answer and the save resends a batch, which
 * the ReplacingMergeTree folds back into one copy.
 *
 * Memory: one batch (its body at most batch_bytes), one 1 MiB read chunk
 * and the line splitter's carry — whatever the lag.  The file is the
 * queue.
 *
 * The batch waits for batch_ms after the first unsent line was announced
 * unless a megabyte is already waiting: few, large inserts are what
 * ClickHouse wants (each INSERT makes a part on disk), and a sink behind
 * by more than that sends batch after batch without pausing.
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
#include <time.h>
#include <unistd.h>

#include "base/base.h"
#include "ledger/footprint.h"
#include "ledger/linesplit.h"
#include "project/statedir.h"
#include "sink/schema.h"
#include "sink/sink.h"
#include "sink/sink_impl.h"
#include "watchers/cursor.h"

#define SINK_CHUNK		(1024 * 1024)	/* one pread */
#define SINK_EAGER_BYTES	(1024 * 1024)	/* send without waiting */
#define SINK_BACKOFF_MIN_MS	250

static void	kick(struct sink *);

/* A line for the daemon's log; none without a log callback. */
#define slog(s, prio, ...) \
	base_log((s)->log, (s)->log_arg, (prio), __VA_ARGS__)

/* --- cursors ---------------------------------------------------------- */

static void
save_work(uv_work_t *req)
{
	struct sstream	*st = req->data;

	st->save_rc = cursor_save(st->cursor_path, &st->save_snap);
}

static void	save_request(struct sink *, struct sstream *);

static void
save_after(uv_work_t *req, int status)
{
	struct sstream	*st = req->data;
	struct sink	*s = st->s;

	st->save_inflight = 0;
	s->pending--;
	if (s->closing) {
		sink_free_maybe(s);
		return;
	}
	if (status == 0 && st->save_rc != 0)
		slog(s, LOG_WARNING, "sink: cannot save %s: %s",
		    st->cursor_path, strerror(-st->save_rc));
	if (st->save_dirty)
		save_request(s, st);
	kick(s);
}

static void
save_request(struct sink *s, struct sstream *st)
{
	if (st->save_inflight) {
		st->save_dirty = 1;
		return;
	}
	st->save_dirty = 0;
	st->save_snap = st->cur;
	st->save_req.data = st;
	if (uv_queue_work(s->loop, &st->save_req, save_work, save_after) == 0) {
		st->save_inflight = 1;
		s->pending++;
	} else
		st->save_dirty = 1;
}

/* --- reading a batch (thread pool) ------------------------------------ */

static void
on_line(void *arg, const char *line, size_t len, uint64_t offset)
{
	struct sread	*r = arg;
	int		 rc;

	if (r->full || r->err) {
		if (r->stop_at == UINT64_MAX)
			r->stop_at = offset;
		return;
	}
	rc = batch_add(r->s->batch, r->st->id, r->cur.generation, line, len,
	    offset, &r->body);
	if (rc == -E2BIG) {
		r->full = 1;
		r->stop_at = offset;
		return;
	}
	if (rc < 0) {
		r->err = rc;
		r->stop_at = offset;
		return;
	}
	if (rc == 0 && ++r->nrows >= r->max_rows)
		r->full = 1;
	if (r->body.len >= r->max_bytes - r->max_bytes / 8)
		r->full = 1;
}

static void
on_long(void *arg, uint64_t offset, uint64_t len)
{
	struct sread	*r = arg;

	/* over 1 MiB: the fold skips it, so there is no row */
	(void)len;
	if ((r->full || r->err) && r->stop_at == UINT64_MAX)
		r->stop_at = offset;
}

static int
fd_identity(int fd, struct cursor *c)
{
	struct stat	sb;

	if (fstat(fd, &sb) != 0)
		return -errno;
	c->dev = (uint64_t)sb.st_dev;
	c->ino = (uint64_t)sb.st_ino;
	c->size_seen = (uint64_t)sb.st_size;
	return 0;
}

static void
read_work(uv_work_t *req)
{
	struct sread	*r = req->data;
	char		*buf, win[CURSOR_WINDOW];
	uint64_t	 pos;
	uint32_t	 wlen;
	int		 rc;

	r->stop_at = UINT64_MAX;
	if (r->verify && r->cur.offset > 0) {
		rc = cursor_verify(&r->cur, r->fd, r->why, sizeof(r->why));
		if (rc == -ESTALE) {
			r->restarted = 1;
			r->cur.generation++;
			r->cur.offset = 0;
		} else if (rc != 0) {
			r->rc = rc;
			return;
		}
	} else if (r->cur.offset > 0) {
		/* Still our content?  (Truncated, or rewritten in place?) */
		rc = cursor_verify(&r->cur, r->fd, r->why, sizeof(r->why));

		if (rc != 0) {
			r->rc = rc;
			return;
		}
	}
	if (r->cur.offset == 0) {
		if ((rc = fd_identity(r->fd, &r->cur)) != 0) {
			r->rc = rc;
			return;
		}
		r->cur.hash_len = 0;
		r->cur.hash = cursor_hash(NULL, 0);
	}
	r->end = r->cur.offset;
	if (r->target <= r->cur.offset)
		goto done;
	if ((buf = malloc(SINK_CHUNK)) == NULL) {
		r->rc = -ENOMEM;
		return;
	}
	linesplit_init(&r->ls, 0, on_line, on_long, r);
	linesplit_reset(&r->ls, r->cur.offset);
	for (pos = r->cur.offset; pos < r->target && !r->full && !r->err;) {
		size_t	want = r->target - pos < SINK_CHUNK ?
			    (size_t)(r->target - pos) : SINK_CHUNK;
		ssize_t	n = pread(r->fd, buf, want, (off_t)pos);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			/* shorter than announced: truncated under us */
			r->rc = n < 0 ? -errno : -ESTALE;
			snprintf(r->why, sizeof(r->why), "the file is shorter "
			    "than the %" PRIu64 " bytes announced", r->target);
			break;
		}
		if ((rc = linesplit_feed(&r->ls, buf, (size_t)n)) != 0) {
			r->err = rc;
			break;
		}
		pos += (uint64_t)n;
	}
	free(buf);
	r->end = r->stop_at != UINT64_MAX ? r->stop_at :
	    linesplit_cursor(&r->ls);
	linesplit_free(&r->ls);
	if (r->err != 0 && r->rc == 0 && r->end == r->cur.offset) {
		r->rc = r->err;	/* not even one row: say why */
		return;
	}
	if (r->rc != 0)
		return;
done:
	r->next = r->cur;
	r->next.offset = r->end;
	if (r->end != r->cur.offset) {
		if ((rc = cursor_window_read(r->fd, r->end, win, &wlen)) != 0) {
			r->rc = rc;
			return;
		}
		r->next.hash_len = wlen;
		r->next.hash = cursor_hash(win, wlen);
		fd_identity(r->fd, &r->next);
	}
}

static void	post_done(void *, int, const char *, const char *, size_t);

static void
on_timer(uv_timer_t *t)
{
	struct sink	*s = t->data;

	s->timer_armed = 0;
	if (s->op == OP_WAIT)
		s->op = OP_IDLE;
	kick(s);
}

/* An error: say it, back off, try again (re-reading from the file). */
static void
fail(struct sink *s, const char *what, const char *err)
{
	s->errors++;
	s->last_error_ms = base_now_ms();
	snprintf(s->last_error, sizeof(s->last_error), "%s%s", what, err);
	s->backoff_ms = s->backoff_ms == 0 ? SINK_BACKOFF_MIN_MS :
	    s->backoff_ms * 2 > s->backoff_max_ms ? s->backoff_max_ms :
	    s->backoff_ms * 2;
	/* once per failure streak at warning level, then quietly */
	slog(s, s->backoff_ms == SINK_BACKOFF_MIN_MS ? LOG_WARNING : LOG_DEBUG,
	    "sink: %s (retrying in %u ms; the daemon goes on)", s->last_error,
	    s->backoff_ms);
	s->op = OP_WAIT;
	s->timer_armed = 1;
	uv_timer_start(&s->timer, on_timer, s->backoff_ms, 0);
}

/*
 * After a batch: cut by a limit, the rest has waited long enough (go on
 * at once); all sent, nothing waits; else what was announced during the
 * request keeps the time it was announced.
 */
static void
pending_after(struct sstream *st, const struct sread *r)
{
	if (r->end < r->target)
		st->pending_since = 1;
	else if (r->end >= st->target)
		st->pending_since = 0;
}

static void
read_free(struct sread *r)
{
	if (r == NULL)
		return;
	ch_buf_free(&r->body);
	free(r);
}

/* Back to idle after a read or a request, and look for more. */
static void
op_end(struct sink *s, struct sread *r)
{
	s->rd = NULL;
	read_free(r);
	s->op = OP_IDLE;
	kick(s);
}

static void	ahead_start(struct sink *, struct sstream *, const struct sread *);

/* What a finished read means: a new generation, a loss, an error, an
 * empty stretch to step over, or rows to POST. */
static void
read_result(struct sink *s, struct sread *r)
{
	struct sstream	*st = r->st;

	if (r->restarted) {
		slog(s, LOG_NOTICE, "sink: %s is not the content the sink "
		    "cursor points into (%s): sending it as generation %" PRIu64,
		    sink_stream_name(st->id), r->why, r->cur.generation);
		st->cur.generation = r->cur.generation;
		st->cur.offset = 0;
	}
	st->verified = 1;
	if (r->rc == -ESTALE) {
		/* The generation being sent is gone from the file.  What is
		 * lost is counted once ClickHouse said how much of it it
		 * holds (loss_start): an insert that timed out may have been
		 * stored, and the acknowledged cursor knows nothing of it. */
		if (st->target > st->cur.offset && !st->loss_pending) {
			st->loss_pending = 1;
			st->loss_gen = st->cur.generation;
			st->loss_from = st->cur.offset;
			st->loss_to = st->target;
			snprintf(st->loss_why, sizeof(st->loss_why), "%s",
			    r->why);
		}
		close(st->fd);
		st->fd = -1;
		st->target = st->cur.offset;
		st->pending_since = 0;
		op_end(s, r);
		return;
	}
	if (r->rc != 0) {
		int	rc = r->rc;

		s->rd = NULL;
		read_free(r);
		fail(s, "reading the ledger: ", strerror(-rc));
		return;
	}
	if (r->nrows == 0) {
		/* Nothing to send (blank or skipped lines): move on. */
		st->cur = r->next;
		pending_after(st, r);
		save_request(s, st);
		op_end(s, r);
		return;
	}
	s->op = OP_POST;
	s->requests++;
	if (ch_client_post(s->http, s->insert_url, r->body.p, r->body.len,
	    (long)s->timeout_ms, post_done, r) != 0) {
		s->rd = NULL;
		read_free(r);
		fail(s, "", "cannot start a request (out of memory)");
		return;
	}
	s->pending++;
	/* Cut by a limit: the sink is behind.  Read the next batch while
	 * this one is in flight, so building rows here and inserting them
	 * there overlap; it is posted only if this one is acknowledged. */
	if (r->end < r->target && s->ahead == NULL && !st->next_pending)
		ahead_start(s, st, r);
}

static void
read_after(uv_work_t *req, int status)
{
	struct sread	*r = req->data;
	struct sink	*s = r->s;

	s->pending--;
	if (r == s->ahead) {
		/* A read-ahead: the POST before it decides what becomes of
		 * it, unless that already failed. */
		if (status != 0 || s->closing || s->ahead_stale) {
			s->ahead = NULL;
			s->ahead_stale = s->ahead_done = 0;
			read_free(r);
			if (s->closing)
				sink_free_maybe(s);
			else
				kick(s);
			return;
		}
		s->ahead_done = 1;
		return;
	}
	if (status != 0 || s->closing) {
		s->rd = NULL;
		read_free(r);
		s->op = OP_IDLE;
		if (s->closing)
			sink_free_maybe(s);
		else
			kick(s);
		return;
	}
	read_result(s, r);
}

/* The POST before a read-ahead failed: the read-ahead is for nothing. */
static void
ahead_drop(struct sink *s)
{
	if (s->ahead == NULL)
		return;
	if (s->ahead_done) {
		read_free(s->ahead);
		s->ahead = NULL;
		s->ahead_done = 0;
	} else
		s->ahead_stale = 1;	/* read_after frees it */
}

static void
post_done(void *arg, int rc, const char *err, const char *body, size_t len)
{
	struct sread	*r = arg;
	struct sink	*s = r->s;
	struct sstream	*st = r->st;

	(void)body;
	(void)len;
	s->pending--;
	if (rc != 0) {
		s->rd = NULL;
		read_free(r);
		ahead_drop(s);
		if (s->closing) {
			sink_free_maybe(s);
			return;
		}
		/* ClickHouse may have been re-initialised (or emptied)
		 * meanwhile: check the schema before the next insert */
		s->schema_ok = 0;
		fail(s, "insert: ", err);
		return;
	}
	st->cur = r->next;
	st->rows += r->nrows;
	st->batches++;
	s->rows += r->nrows;
	s->batches++;
	s->backoff_ms = 0;
	s->last_ok_ms = base_now_ms();
	pending_after(st, r);
	save_request(s, st);
	if (s->ahead != NULL && !s->closing) {
		/* the next batch was read meanwhile: it starts where this
		 * one ended */
		struct sread	*a = s->ahead;

		read_free(r);
		s->ahead = NULL;
		s->rd = a;
		s->op = OP_READ;
		if (s->ahead_done) {
			s->ahead_done = 0;
			read_result(s, a);
		}
		/* else its read_after finds it in s->rd */
		return;
	}
	op_end(s, r);
}

/* --- the schema check ------------------------------------------------- */

static void
check_done(void *arg, int rc, const char *err, const char *body, size_t len)
{
	struct sink	*s = arg;
	char		 why[CH_ERR_MAX], table[160], stmt[256], *u;

	(void)len;
	s->pending--;
	if (s->closing) {
		sink_free_maybe(s);
		return;
	}
	if (rc != 0) {
		fail(s, schema_is_missing(err) ? "no sloptimize tables (run "
		    "`sloptimize sink init --sink URL`): " : "schema check: ",
		    err);
		return;
	}
	rc = schema_meta_parse(body, &s->schema, why, sizeof(why));
	if (rc == -EPROTONOSUPPORT) {
		/* never write into a newer schema; nothing to retry */
		s->refused = 1;
		s->op = OP_IDLE;
		snprintf(s->last_error, sizeof(s->last_error), "%s", why);
		s->last_error_ms = base_now_ms();
		slog(s, LOG_ERR, "sink: %s", why);
		return;
	}
	if (rc != 0) {
		fail(s, "", why);
		return;
	}
	schema_table(s->url.db, &s->schema, table, sizeof(table));
	snprintf(stmt, sizeof(stmt), "INSERT INTO %s FORMAT JSONEachRow", table);
	/* A Distributed table answers once every shard has the rows, not
	 * once they are queued on this server: the cursor may move. */
	if ((u = ch_request_url(&s->url, stmt, s->schema.cluster[0] ?
	    "insert_distributed_sync=1" : NULL)) == NULL) {
		fail(s, "", "out of memory");
		return;
	}
	free(s->insert_url);
	s->insert_url = u;
	s->schema_ok = 1;
	s->op = OP_IDLE;
	kick(s);
}

static void
check_start(struct sink *s)
{
	int	rc;

	s->op = OP_CHECK;
	s->requests++;
	rc = ch_client_post(s->http, s->check_url, s->check_sql,
	    strlen(s->check_sql), (long)s->timeout_ms, check_done, s);
	if (rc != 0) {
		fail(s, "schema check: ", strerror(-rc));
		return;
	}
	s->pending++;
}

/* --- counting a loss ------------------------------------------------- */

/* `v` as a ClickHouse string literal's body: \ and ' escaped. */
static size_t
sql_str(char *out, size_t cap, const char *v)
{
	size_t	n = 0;

	for (; *v != '\0' && n + 3 < cap; v++) {
		if (*v == '\\' || *v == '\'')
			out[n++] = '\\';
		out[n++] = *v;
	}
	out[n] = '\0';
	return n;
}

/*
 * Every insert of a generation starts at the cursor acknowledged when it
 * was sent, and the cursor only moves forward, so what ClickHouse holds
 * past loss_from is one run of lines from loss_from: it ends with the
 * line of the largest offset, whose length the `record` column gives
 * (the line as written, less the whitespace around it).
 */
static void
loss_done(void *arg, int rc, const char *err, const char *body, size_t len)
{
	struct sink	*s = arg;
	struct sstream	*st = NULL;
	uint64_t	 off = 0, rlen = 0, n = 0, held, lost;
	char		 tmp[128];
	int		 i;

	s->pending--;
	if (s->closing) {
		sink_free_maybe(s);
		return;
	}
	for (i = SINK_NSTREAMS - 1; i >= 0; i--)
		if (s->st[i].loss_pending) {
			st = &s->st[i];
			break;
		}
	if (st == NULL) {		/* cannot happen: one asker */
		s->op = OP_IDLE;
		kick(s);
		return;
	}
	if (rc != 0) {
		s->schema_ok = 0;
		fail(s, "counting lost bytes: ", err);
		return;
	}
	snprintf(tmp, sizeof(tmp), "%.*s", (int)(len < sizeof(tmp) - 1 ?
	    len : sizeof(tmp) - 1), body ? body : "");
	if (sscanf(tmp, "%" SCNu64 "\t%" SCNu64 "\t%" SCNu64, &off, &rlen,
	    &n) != 3) {
		fail(s, "counting lost bytes: ", "an answer that is not "
		    "three numbers");
		return;
	}
	held = n > 0 && off + rlen + 1 > st->loss_from ? off + rlen + 1 :
	    st->loss_from;
	lost = st->loss_to > held ? st->loss_to - held : 0;
	st->lost_bytes += lost;
	st->loss_pending = 0;
	if (lost > 0)
		slog(s, LOG_WARNING, "sink: %s generation %" PRIu64 " changed "
		    "under the sink before it was all sent (%s): %" PRIu64
		    " bytes from offset %" PRIu64 " to %" PRIu64 " cannot "
		    "reach ClickHouse", sink_stream_name(st->id),
		    st->loss_gen, st->loss_why, lost, held, st->loss_to);
	else
		slog(s, LOG_NOTICE, "sink: %s generation %" PRIu64 " changed "
		    "under the sink (%s) after ClickHouse had stored all of "
		    "it: nothing lost", sink_stream_name(st->id),
		    st->loss_gen, st->loss_why);
	s->op = OP_IDLE;
	kick(s);
}

static void
loss_start(struct sink *s, struct sstream *st)
{
	char	table[160], m[80], p[520];
	int	rc;

	schema_table(s->url.db, &s->schema, table, sizeof(table));
	sql_str(m, sizeof(m), s->machine);
	sql_str(p, sizeof(p), s->project);
	snprintf(s->loss_sql, sizeof(s->loss_sql), "SELECT max(offset), "
	    "argMax(length(record), offset), count() FROM %s WHERE machine = "
	    "'%s' AND project = '%s' AND stream = '%s' AND generation = %"
	    PRIu64 " AND offset >= %" PRIu64 " FORMAT TabSeparated", table, m,
	    p, sink_stream_name(st->id), st->loss_gen, st->loss_from);
	s->op = OP_LOSS;
	s->requests++;
	rc = ch_client_post(s->http, s->check_url, s->loss_sql,
	    strlen(s->loss_sql), (long)s->timeout_ms, loss_done, s);
	if (rc != 0) {
		fail(s, "counting lost bytes: ", strerror(-rc));
		return;
	}
	s->pending++;
}

/* --- the cycle -------------------------------------------------------- */

/* The current generation is all sent (or lost): take the next one. */
static void
generation_switch(struct sink *s, struct sstream *st)
{

	if (st->fd >= 0)
		close(st->fd);
	st->fd = st->next_fd;
	st->dgen = st->next_dgen;
	st->target = st->next_target;
	st->next_pending = 0;
	st->next_fd = -1;
	st->cur.generation++;
	st->cur.offset = 0;
	st->cur.hash_len = 0;
	st->cur.hash = cursor_hash(NULL, 0);
	st->verified = 1;
	st->pending_since = st->target > 0 ? 1 : 0;
	slog(s, LOG_INFO, "sink: %s: a new file content, sent as generation "
	    "%" PRIu64, sink_stream_name(st->id), st->cur.generation);
	save_request(s, st);
}

static int
has_work(const struct sstream *st)
{
	return st->fd >= 0 && (st->cur.offset < st->target || !st->verified);
}

static void
read_start(struct sink *s, struct sstream *st)
{
	struct sread	*r;
	int		 rc;

	if ((r = calloc(1, sizeof(*r))) == NULL) {
		fail(s, "", "out of memory");
		return;
	}
	r->s = s;
	r->st = st;
	r->fd = st->fd;
	r->cur = st->cur;
	r->verify = !st->verified && st->loaded;
	r->target = st->target;
	r->max_rows = s->batch_rows;
	r->max_bytes = s->batch_bytes;
	r->body.max = s->batch_bytes;
	r->req.data = r;
	if ((rc = uv_queue_work(s->loop, &r->req, read_work, read_after)) != 0) {
		free(r);
		fail(s, "", strerror(-rc));
		return;
	}
	s->rd = r;
	s->op = OP_READ;
	s->pending++;
}

/* The batch after `prev`, assuming prev is acknowledged. */
static void
ahead_start(struct sink *s, struct sstream *st, const struct sread *prev)
{
	struct sread	*a;

	if ((a = calloc(1, sizeof(*a))) == NULL)
		return;		/* no harm: it is read after the POST */
	a->s = s;
	a->st = st;
	a->fd = st->fd;
	a->cur = prev->next;
	a->target = st->target;
	a->max_rows = s->batch_rows;
	a->max_bytes = s->batch_bytes;
	a->body.max = s->batch_bytes;
	a->req.data = a;
	if (uv_queue_work(s->loop, &a->req, read_work, read_after) != 0) {
		free(a);
		return;
	}
	s->ahead = a;
	s->ahead_done = s->ahead_stale = 0;
	s->pending++;
}

static void
kick(struct sink *s)
{
	struct sstream	*st = NULL;
	int		 i;
	int64_t		 now, wait;

	/* A read-ahead still on the pool (its POST failed) holds the row
	 * builder, which is one thread's at a time: wait for it. */
	if (s->closing || s->refused || s->op != OP_IDLE || s->ahead != NULL)
		return;
	/* a loss is counted before anything else is read */
	for (i = SINK_NSTREAMS - 1; i >= 0; i--)
		if (s->st[i].loss_pending) {
			if (!s->schema_ok)
				check_start(s);
			else
				loss_start(s, &s->st[i]);
			return;
		}
	/* fixes first: they are few, and status depends on them */
	for (i = SINK_NSTREAMS - 1; i >= 0; i--) {
		struct sstream	*c = &s->st[i];

		if (c->next_pending && (c->fd < 0 ||
		    (c->verified && c->cur.offset >= c->target)))
			generation_switch(s, c);
		if (has_work(c)) {
			st = c;
			break;
		}
	}
	if (st == NULL)
		return;
	if (!s->schema_ok) {
		check_start(s);
		return;
	}
	/* The age limit: wait for more unless a lot is waiting already. */
	now = base_now_ms();
	if (st->verified && st->target - st->cur.offset < SINK_EAGER_BYTES &&
	    st->pending_since > 1 &&
	    (wait = st->pending_since + (int64_t)s->batch_ms - now) > 0) {
		if (!s->timer_armed) {
			s->timer_armed = 1;
			uv_timer_start(&s->timer, on_timer, (uint64_t)wait, 0);
		}
		return;
	}
	if (s->timer_armed) {
		uv_timer_stop(&s->timer);
		s->timer_armed = 0;
	}
	read_start(s, st);
}

void
sink_advance(struct sink *s, enum sink_stream id, uint64_t gen, uint64_t end,
    int fd)
{
	struct sstream	*st;

	if (s == NULL || s->closing || (unsigned)id >= SINK_NSTREAMS)
		return;
	st = &s->st[id];
	if (!st->has_dgen) {
		/* the first word of this run about the stream */
		st->has_dgen = 1;
		st->dgen = gen;
		if (fd >= 0 && st->fd < 0)
			st->fd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
		if (end > st->target)
			st->target = end;
	} else if (gen == st->dgen && !st->next_pending) {
		if (end > st->target)
			st->target = end;
	} else if (st->next_pending && gen == st->next_dgen) {
		if (end > st->next_target)
			st->next_target = end;
		return;
	} else {
		/* a new generation: the current one drains first */
		if (st->next_pending) {
			/* one announced and replaced before we reached it */
			st->lost_generations++;
			st->lost_bytes += st->next_target;
			if (st->next_fd >= 0)
				close(st->next_fd);
		}
		st->next_pending = 1;
		st->next_dgen = gen;
		st->next_target = end;
		st->next_fd = fd >= 0 ? fcntl(fd, F_DUPFD_CLOEXEC, 0) : -1;
	}
	if (st->pending_since == 0 && st->target > st->cur.offset)
		st->pending_since = base_now_ms();
	kick(s);
}

/* --- life cycle ------------------------------------------------------- */

static void
stream_init(struct sink *s, struct sstream *st, enum sink_stream id,
    uint32_t target_hash)
{
	char	why[CURSOR_WHY_MAX];
	int	rc;

	st->s = s;
	st->id = id;
	st->fd = st->next_fd = -1;
	snprintf(st->cursor_path, sizeof(st->cursor_path),
	    "%s/sink-%08x-%s.cursor", s->state_dir, target_hash,
	    sink_stream_name(id));
	rc = cursor_load(st->cursor_path, &st->cur, why, sizeof(why));
	if (rc == 0)
		st->loaded = 1;
	else {
		if (rc != -ENOENT)
			slog(s, LOG_WARNING, "sink: %s: %s; sending %s from "
			    "byte 0 (resent rows replace what ClickHouse "
			    "holds)", st->cursor_path, rc == -EBADMSG ? why :
			    strerror(-rc), sink_stream_name(id));
		memset(&st->cur, 0, sizeof(st->cur));
		st->cur.generation = 1;
		st->cur.hash = cursor_hash(NULL, 0);
	}
}

int
sink_create(struct sink **out, uv_loop_t *loop, const struct sink_opts *o,
    char *err, size_t cap)
{
	struct sink	*s;
	const char	*base;
	char		 target[CH_URL_MAX + CH_DB_MAX], why[CH_ERR_MAX];
	int		 rc, i;

	*out = NULL;
	if ((s = calloc(1, sizeof(*s))) == NULL) {
		snprintf(err, cap, "out of memory");
		return -ENOMEM;
	}
	s->loop = loop;
	s->log = o->log;
	s->log_arg = o->log_arg;
	s->batch_rows = o->batch_rows ? o->batch_rows : SINK_BATCH_ROWS;
	s->batch_bytes = o->batch_bytes ? o->batch_bytes : SINK_BATCH_BYTES;
	if (s->batch_bytes < 64 * 1024)
		s->batch_bytes = 64 * 1024;
	s->batch_ms = o->batch_ms ? o->batch_ms : SINK_BATCH_MS;
	s->timeout_ms = o->timeout_ms ? o->timeout_ms : SINK_TIMEOUT_MS;
	s->backoff_max_ms = o->backoff_max_ms ? o->backoff_max_ms :
	    SINK_BACKOFF_MAX_MS;
	if (s->backoff_max_ms < SINK_BACKOFF_MIN_MS)
		s->backoff_max_ms = SINK_BACKOFF_MIN_MS;
	if ((rc = ch_url_parse(o->url, &s->url, err, cap)) != 0)
		goto fail;
	if (o->state_dir == NULL || snprintf(s->state_dir, sizeof(s->state_dir),
	    "%s", o->state_dir) >= (int)sizeof(s->state_dir)) {
		snprintf(err, cap, "sink: no state directory");
		rc = -EINVAL;
		goto fail;
	}
	for (i = (int)strlen(s->state_dir); i > 1 && s->state_dir[i - 1] == '/';
	    i--)
		s->state_dir[i - 1] = '\0';
	base = strrchr(s->state_dir, '/');
	snprintf(s->project, sizeof(s->project), "%.255s", o->project ?
	    o->project : base ? base + 1 : s->state_dir);
	if (o->machine != NULL)
		snprintf(s->machine, sizeof(s->machine), "%s", o->machine);
	else if ((rc = sink_machine_id(s->state_dir, s->machine)) != 0) {
		snprintf(err, cap, "sink: no machine id beside %s: %s",
		    s->state_dir, strerror(-rc));
		goto fail;
	}
	/* The cursor belongs to one destination: another server or
	 * database starts from byte 0 of what the file holds. */
	snprintf(target, sizeof(target), "%s|%s", s->url.base, s->url.db);
	for (i = 0; i < SINK_NSTREAMS; i++)
		stream_init(s, &s->st[i], (enum sink_stream)i,
		    fnv1a32(target, strlen(target)));
	schema_meta_sql(s->url.db, s->check_sql, sizeof(s->check_sql));
	if ((s->batch = batch_create(s->machine, s->project)) == NULL ||
	    (s->check_url = ch_request_url(&s->url, NULL, NULL)) == NULL) {
		snprintf(err, cap, "out of memory");
		rc = -ENOMEM;
		goto fail;
	}
	if ((rc = ch_client_create(&s->http, loop, why, sizeof(why))) != 0) {
		/* lazycurl's sentence names the sink already */
		snprintf(err, cap, "%s%s", rc == -ELIBACC ? "" : "sink: ", why);
		goto fail;
	}
	uv_timer_init(loop, &s->timer);
	s->timer.data = s;
	slog(s, LOG_INFO, "sink: sending to %s (database %s) as machine %s, "
	    "project %s", s->url.shown, s->url.db, s->machine, s->project);
	*out = s;
	return 0;
fail:
	batch_destroy(s->batch);
	free(s->check_url);
	free(s);
	return rc;
}

int
sink_idle(const struct sink *s)
{
	int	i;

	if (s->op != OP_IDLE || s->ahead != NULL)
		return 0;
	for (i = 0; i < SINK_NSTREAMS; i++)
		if (s->st[i].cur.offset < s->st[i].target ||
		    s->st[i].next_pending || s->st[i].loss_pending ||
		    s->st[i].save_inflight ||
		    s->st[i].save_dirty)
			return 0;
	return 1;
}

static void
add_u64(cJSON *o, const char *name, uint64_t v)
{
	cJSON_AddNumberToObject(o, name, (double)v);
}

static void
add_time(cJSON *o, const char *name, int64_t ms)
{
	char	iso[32];

	if (ms <= 0) {
		cJSON_AddNullToObject(o, name);
		return;
	}
	iso_format_ms(ms, iso);
	cJSON_AddStringToObject(o, name, iso);
}

cJSON *
sink_status_json(const struct sink *s)
{
	static const char *const ops[] = { "idle", "checking", "reading",
					   "sending", "waiting", "counting" };
	cJSON	*o = cJSON_CreateObject(), *streams;
	uint64_t lag = 0;
	int	 i;

	if (o == NULL)
		return NULL;
	cJSON_AddStringToObject(o, "url", s->url.shown);
	cJSON_AddStringToObject(o, "database", s->url.db);
	cJSON_AddStringToObject(o, "table", s->schema_ok ? s->schema.table :
	    "");
	cJSON_AddStringToObject(o, "machine", s->machine);
	cJSON_AddStringToObject(o, "project", s->project);
	cJSON_AddStringToObject(o, "state", s->refused ? "refused" :
	    s->op == OP_WAIT ? "backoff" : ops[s->op]);
	streams = cJSON_AddObjectToObject(o, "streams");
	for (i = 0; i < SINK_NSTREAMS; i++) {
		const struct sstream	*st = &s->st[i];
		cJSON			*j = cJSON_AddObjectToObject(streams,
					    sink_stream_name(st->id));
		uint64_t		 l = st->target > st->cur.offset ?
					    st->target - st->cur.offset : 0;

		if (st->next_pending)
			l += st->next_target;
		lag += l;
		add_u64(j, "generation", st->cur.generation);
		add_u64(j, "acked", st->cur.offset);
		add_u64(j, "announced", st->target);
		add_u64(j, "lagBytes", l);
		add_u64(j, "rows", st->rows);
		add_u64(j, "batches", st->batches);
		add_u64(j, "lostBytes", st->lost_bytes);
		add_u64(j, "lostGenerations", st->lost_generations);
		cJSON_AddStringToObject(j, "cursor", st->cursor_path);
	}
	add_u64(o, "lagBytes", lag);
	add_u64(o, "rows", s->rows);
	add_u64(o, "batches", s->batches);
	add_u64(o, "requests", s->requests);
	add_u64(o, "errors", s->errors);
	if (s->last_error[0])
		cJSON_AddStringToObject(o, "lastError", s->last_error);
	else
		cJSON_AddNullToObject(o, "lastError");
	add_time(o, "lastErrorAt", s->last_error_ms);
	add_time(o, "lastOkAt", s->last_ok_ms);
	add_u64(o, "backoffMs", s->op == OP_WAIT ? s->backoff_ms : 0);
	add_u64(o, "batchRows", s->batch_rows);
	add_u64(o, "batchMs", s->batch_ms);
	add_u64(o, "timeoutMs", s->timeout_ms);
	return o;
}

cJSON *
sink_status_off_json(const char *url, const char *why, int64_t at_ms)
{
	struct ch_url	 u;
	char		 perr[CH_ERR_MAX];
	cJSON		*o = cJSON_CreateObject();

	if (o == NULL)
		return NULL;
	if (ch_url_parse(url, &u, perr, sizeof(perr)) != 0)
		snprintf(u.shown, sizeof(u.shown), "(not a sink URL)");
	cJSON_AddStringToObject(o, "url", u.shown);
	cJSON_AddStringToObject(o, "database", u.db);
	cJSON_AddStringToObject(o, "state", "unavailable");
	cJSON_AddStringToObject(o, "lastError", why);
	add_time(o, "lastErrorAt", at_ms);
	cJSON_AddNullToObject(o, "lastOkAt");
	return o;
}

void
sink_free_maybe(struct sink *s)
{
	int	i;

	if (!s->closing || s->pending > 0)
		return;
	for (i = 0; i < SINK_NSTREAMS; i++) {
		struct sstream	*st = &s->st[i];
		int		 rc;

		/* what ClickHouse acknowledged since the last save */
		if (st->save_dirty && (rc = cursor_save(st->cursor_path,
		    &st->cur)) != 0)
			slog(s, LOG_WARNING, "sink: cannot save %s: %s",
			    st->cursor_path, strerror(-rc));
		if (st->fd >= 0)
			close(st->fd);
		if (st->next_fd >= 0)
			close(st->next_fd);
	}
	read_free(s->ahead);	/* read, never posted */
	batch_destroy(s->batch);
	free(s->check_url);
	free(s->insert_url);
	if (s->done != NULL)
		s->done(s->done_arg);
	free(s);
}

static void
on_http_closed(void *arg)
{
	struct sink	*s = arg;

	s->pending--;
	sink_free_maybe(s);
}

static void
on_timer_closed(uv_handle_t *h)
{
	struct sink	*s = h->data;

	s->pending--;
	sink_free_maybe(s);
}

void
sink_close(struct sink *s, void (*done)(void *), void *arg)
{
	int	i;

	if (s == NULL || s->closing)
		return;
	s->closing = 1;
	s->done = done;
	s->done_arg = arg;
	for (i = 0; i < SINK_NSTREAMS; i++)
		if (s->st[i].save_inflight)
			s->st[i].save_dirty = 1;	/* saved again at the end */
	if (s->op == OP_READ && s->rd != NULL)
		uv_cancel((uv_req_t *)&s->rd->req);
	if (s->ahead != NULL && !s->ahead_done)
		uv_cancel((uv_req_t *)&s->ahead->req);
	s->pending += 2;
	uv_timer_stop(&s->timer);
	uv_close((uv_handle_t *)&s->timer, on_timer_closed);
	ch_client_close(s->http, on_http_closed, s);
}
