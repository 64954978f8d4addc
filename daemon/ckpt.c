/*
 * ckpt — the daemon's checkpoint: taken back at start, kept while running
 * (ckpt.h).
 *
 * Why the checkpoint must agree with the cursor: wake ids are
 * <generation>:<offset>, and the tailer tells SEED from CATCHUP by the
 * cursor.  A checkpoint of another generation than the cursor's would
 * fold lines the cursor says belong to another file; so it is used only
 * with a cursor of its generation and file, and the tailer checks both
 * against the file it opens (tailer_start_at).  Its offset may lie past
 * the cursor's (saved a moment after the cursor's last save, then a kill
 * -9): the lines in between were delivered and woken by the run that
 * folded them, and are not read again.
 *
 * Why fixes.jsonl is read from byte 0 all the same: its lines are kept in
 * memory (by the fold, daemon/fold.c) to refold a new generation of perf.jsonl, and the
 * only way to know they are the checkpoint's is to see them; it is a few
 * kilobytes.  Its lines after the checkpoint's are folded after the
 * checkpoint's perf lines, which gives the same fold as a fold from byte
 * 0 because, with the timeline kept, folding perf.jsonl does not depend
 * on the fixes — except for the order of skipped lines, so a fix line
 * skipped at start drops the checkpoint too.
 *
 * Why the save is split: ledger_checkpoint_begin copies on the loop what
 * the next fold may change and refers to the sealed sample blocks, which
 * never change; the write (tens of megabytes, an fsync) runs on the pool.
 * The ledger a job refers to must outlive it: a ledger replaced by a new
 * generation meanwhile is kept in `retired` until the job is back.  One
 * save at a time (the state directory's writer has one temp file per
 * path): the mutex, and a sequence number so that an older save never
 * lands after a newer one (the synchronous save at SIGTERM).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/base.h"
#include "daemon/ckpt.h"
#include "daemon/config.h"
#include "daemon/log.h"
#include "ledger/footprint.h"
#include "notifier/notifier.h"
#include "project/project.h"
#include "project/statedir.h"
#include "watchers/cursor.h"
#include "watchers/tailer.h"

struct ckpt_job {
	uv_work_t		 req;
	struct ckpt		*k;
	/* load */
	char			 path[PATH_MAX + 16];
	char			 cursor[PATH_MAX + 16];
	char			 perf[PATH_MAX + 32];
	struct ledger_opts	 opts;
	struct ledger		*l;
	struct checkpoint_mark	 mark;
	uint64_t		 last_line;	/* where the line before it starts */
	int			 rc;
	char			 why[CHECKPOINT_WHY_MAX + 64];
	/* save */
	struct ledger		*ledger;	/* the snapshot's */
	struct ledger_snap	*snap;
	uint64_t		 seq;
	int			 skipped;	/* a newer save landed first */
	double			 write_ms;
};

static double
ms_since(uint64_t t0)
{
	return (double)(uv_hrtime() - t0) / 1e6;
}

/* --- start ------------------------------------------------------------ */

int
ckpt_init(struct ckpt *k, const struct ckpt_env *env)
{
	int		 rc;

	k->env = *env;
	k->load_t0 = uv_hrtime();
	k->on = env->cfg->ckpt_on;
	if ((rc = statedir_path(env->state_dir, "checkpoint", k->path,
	    sizeof(k->path))) != 0)
		return rc;
	if ((rc = uv_mutex_init(&k->mu)) != 0)
		return rc;
	k->mu_init = 1;
	uv_timer_init(env->loop, &k->timer);
	k->timer.data = k;
	k->timer_init = 1;
	k->fixes_hash = FNV1A64_INIT;
	return 0;
}

/*
 * Where the line that ends just before `off` starts (0 when off is 0):
 * the events ring starts after it (ckpt_ring_from).  Read backwards in
 * blocks; a line is at most as long as the file.  0 or -errno.
 */
static int
last_line_start(int fd, uint64_t off, uint64_t *out)
{
	char		 buf[16384];
	uint64_t	 end = off > 0 ? off - 1 : 0, pos;
	ssize_t		 n;
	size_t		 i;

	*out = 0;
	while (end > 0) {
		pos = end > sizeof(buf) ? end - sizeof(buf) : 0;
		if ((n = pread(fd, buf, (size_t)(end - pos), (off_t)pos)) < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if ((uint64_t)n != end - pos)
			return -ESTALE;	/* shorter than it was just now */
		for (i = (size_t)n; i > 0; i--)
			if (buf[i - 1] == '\n') {
				*out = pos + i;
				return 0;
			}
		end = pos;
	}
	return 0;
}

/*
 * On the pool: the checkpoint, checked against the cursor and perf.jsonl,
 * and its fold.  fixes.jsonl is checked as its lines arrive (ckpt.h).
 */
static void
load_work(uv_work_t *req)
{
	struct ckpt_job		*j = req->data;
	struct checkpoint_file	 f;
	struct cursor		 c;
	char			 why[CURSOR_WHY_MAX];
	int			 fd;

	if ((j->rc = checkpoint_open(j->path, &f, &j->mark, j->why,
	    sizeof(j->why))) != 0)
		return;
	if ((j->rc = cursor_load(j->cursor, &c, why, sizeof(why))) != 0) {
		snprintf(j->why, sizeof(j->why), "no cursor to agree with (%s)",
		    j->rc == -ENOENT ? "none" : why);
		goto out;
	}
	if (c.generation != j->mark.generation || c.dev != j->mark.dev ||
	    c.ino != j->mark.ino) {
		snprintf(j->why, sizeof(j->why), "it is of generation %" PRIu64
		    " (dev/inode %" PRIu64 "/%" PRIu64 "), the cursor of %"
		    PRIu64 " (%" PRIu64 "/%" PRIu64 ")", j->mark.generation,
		    j->mark.dev, j->mark.ino, c.generation, c.dev, c.ino);
		j->rc = -ESTALE;
		goto out;
	}
	if ((j->rc = project_open(j->perf, O_RDONLY, 0, &fd)) != 0) {
		snprintf(j->why, sizeof(j->why), "perf.jsonl: %s",
		    project_strerror(j->rc));
		goto out;
	}
	j->rc = checkpoint_verify_perf(&j->mark, fd, j->why, sizeof(j->why));
	/*
	 * Checked now, prefix and all: the tailer checks the same mark again
	 * in a moment (tailer_start_at), and with the file's times as they
	 * are now it does not read the prefix a second time — only if the
	 * file is written in between.
	 */
	if (j->rc == 0) {
		struct filemark	fm = { 0 };

		if (filemark_stat(fd, &fm) == 0) {
			j->mark.st_size = fm.size;
			j->mark.mtime_ns = fm.mtime_ns;
			j->mark.ctime_ns = fm.ctime_ns;
			j->mark.flags |= FILEMARK_STAT;
		}
	}
	if (j->rc == 0 && (j->rc = last_line_start(fd, j->mark.offset,
	    &j->last_line)) != 0)
		snprintf(j->why, sizeof(j->why), "perf.jsonl: %s",
		    strerror(-j->rc));
	close(fd);
	if (j->rc == 0)
		j->rc = checkpoint_fold(&f, &j->opts, &j->l, j->why,
		    sizeof(j->why));
out:
	checkpoint_close(&f);
}

static void
load_after(uv_work_t *req, int status)
{
	struct ckpt_job	*j = req->data;
	struct ckpt	*k = j->k;
	ckpt_loaded_fn	*then = k->then;
	struct ledger	*l = NULL;

	k->job = NULL;
	k->load_ms = ms_since(k->load_t0);
	if (status != 0 && j->rc == 0) {
		ledger_destroy(j->l);
		j->l = NULL;
		j->rc = status;
		snprintf(j->why, sizeof(j->why), "%s", uv_strerror(status));
	}
	if (k->stopping) {
		ledger_destroy(j->l);
		free(j);
		return;
	}
	if (j->rc == 0) {
		struct ledger_counts	c;

		l = j->l;	/* the owner's once `then` has it */
		k->held = 1;
		k->mark = j->mark;
		k->last_line = j->last_line;
		k->fixes_ok = j->mark.fixes_offset == 0;
		ledger_counts(l, &c);
		log_info("checkpoint: %" PRIu64 " records in %" PRIu64 " issues"
		    " up to byte %" PRIu64 " of perf.jsonl (generation %" PRIu64
		    "), read in %.1f ms; folding the bytes after it",
		    c.folded, c.rows, j->mark.offset, j->mark.generation,
		    k->load_ms);
	} else {
		snprintf(k->why, sizeof(k->why), "%s", j->rc == -ENOENT ?
		    "none yet" : j->why);
		if (j->rc == -ENOENT)
			log_info("checkpoint: none yet; folding perf.jsonl from "
			    "byte 0");
		else
			log_warnx("checkpoint not used: %s; folding perf.jsonl "
			    "from byte 0", j->why);
	}
	free(j);
	then(k->then_arg, l);
}

int
ckpt_load(struct ckpt *k, const struct ledger_opts *o, ckpt_loaded_fn *then,
    void *arg)
{
	struct ckpt_job	*j;
	int		 rc;

	k->then = then;
	k->then_arg = arg;
	if (!k->on) {
		snprintf(k->why, sizeof(k->why), "checkpoints are off");
		then(arg, NULL);
		return 0;
	}
	if ((j = calloc(1, sizeof(*j))) == NULL)
		return UV_ENOMEM;
	j->k = k;
	j->req.data = j;
	j->opts = *o;
	snprintf(j->path, sizeof(j->path), "%s", k->path);
	if (statedir_path(k->env.state_dir, "cursor", j->cursor,
	    sizeof(j->cursor)) != 0 || project_path(k->env.cfg->project,
	    "perf.jsonl", j->perf, sizeof(j->perf)) != 0) {
		free(j);
		return UV_ENAMETOOLONG;
	}
	if ((rc = uv_queue_work(k->env.loop, &j->req, load_work,
	    load_after)) < 0) {
		free(j);
		return rc;
	}
	k->job = j;
	return 0;
}

/* --- start: confirming it ----------------------------------------------- */

/* Drop the checkpoint's fold for a fold from byte 0: the owner folds
 * fixes.jsonl's lines kept so far into a new ledger (env.refold),
 * perf.jsonl is read from 0. */
static void
drop(struct ckpt *k, const char *why)
{
	if (!k->held)
		return;
	k->held = 0;
	snprintf(k->why, sizeof(k->why), "%s", why);
	log_warnx("checkpoint not used: %s; folding from byte 0", why);
	if (k->env.refold(k->env.arg) != 0) {
		log_warnx("fold: out of memory; the catalogue is the "
		    "checkpoint's and is never saved again");
		k->tainted = 1;
		return;
	}
	k->dirty = 1;
}

int
ckpt_fixes_reset(struct ckpt *k, uint64_t generation)
{
	k->fixes_end = 0;
	k->fixes_hash = FNV1A64_INIT;
	k->fixes_unknown = 0;
	if (k->held && generation > 1)
		drop(k, "fixes.jsonl was replaced while the daemon started");
	return k->held;
}

int
ckpt_fix_line(struct ckpt *k, const char *line, size_t len, uint64_t off)
{
	uint64_t	 end = off + len + 1, at = k->mark.fixes_offset;

	if (line == NULL)
		k->fixes_unknown = 1;
	else if (!k->fixes_unknown) {
		k->fixes_hash = fnv1a64_more(k->fixes_hash, line, len);
		k->fixes_hash = fnv1a64_more(k->fixes_hash, "\n", 1);
	}
	k->fixes_end = end;
	if (!k->held || k->fixes_ok)
		return 0;
	if (line != NULL && end < at)
		return 1;		/* the checkpoint's: kept, not folded */
	if (line != NULL && end == at && k->fixes_hash == k->mark.fixes_hash) {
		k->fixes_ok = 1;
		return 1;
	}
	drop(k, line == NULL ? "fixes.jsonl holds a line too long to be "
	    "checked" : end == at ? "fixes.jsonl changed while the daemon was "
	    "stopped" : "fixes.jsonl changed while the daemon was stopped "
	    "(its lines no longer end where they did)");
	return 1;			/* drop() folded it with the rest */
}

void
ckpt_fix_skipped(struct ckpt *k)
{
	drop(k, "a line appended to fixes.jsonl while stopped is skipped");
}

void
ckpt_fixes_ready(struct ckpt *k)
{
	if (k->held && !k->fixes_ok)
		drop(k, "fixes.jsonl is shorter than the checkpoint, or gone");
}

/*
 * The notifier's regression memory (notifier/wake.h) is taught by every
 * meaningful record, and the checkpoint's were never fed to it: it learns
 * from the catalogue instead — the footprints whose rows are "regressed"
 * now, with the fixes appended while stopped already folded, as they
 * are before perf.jsonl in a fold from byte 0 (docs/checkpoints.md says
 * where the two can differ).
 */
static void
seed_memory(struct ckpt *k)
{
	struct ledger_query	 q = { NULL, "regressed", 0 };
	cJSON			*o, *rows, *r, *id;
	size_t			 n = 0;

	if ((o = ledger_issues_json(*k->env.live, &q, base_now_ms())) ==
	    NULL) {
		log_warnx("checkpoint: out of memory reading the regressed "
		    "issues; their next records wake as regressions");
		return;
	}
	rows = cJSON_GetObjectItemCaseSensitive(o, "issues");
	cJSON_ArrayForEach(r, rows) {
		id = cJSON_GetObjectItemCaseSensitive(r, "id");
		if (cJSON_IsString(id) &&
		    notifier_memory_seed(k->env.notifier, id->valuestring) == 0)
			n++;
	}
	cJSON_Delete(o);
	k->seeded = 1;
	log_debug("checkpoint: %zu regressed footprints told to the notifier",
	    n);
}

void
ckpt_perf_start(struct ckpt *k, struct tailer *perf)
{
	struct cursor	 c;

	k->perf = perf;
	if (!k->held)
		return;
	memset(&c, 0, sizeof(c));
	c.generation = k->mark.generation;
	c.offset = k->mark.offset;
	c.dev = k->mark.dev;
	c.ino = k->mark.ino;
	c.size_seen = k->mark.offset;
	c.hash_len = k->mark.hash_len;
	c.hash = k->mark.hash;
	c.flags = k->mark.flags;
	c.prefix = k->mark.prefix;
	c.st_size = k->mark.st_size;
	c.mtime_ns = k->mark.mtime_ns;
	c.ctime_ns = k->mark.ctime_ns;
	if (tailer_start_at(k->perf, &c) != 0) {
		drop(k, "the tailer cannot start at its offset");
		return;
	}
	seed_memory(k);
}

uint64_t
ckpt_ring_from(const struct ckpt *k)
{
	if (!k->held || k->mark.offset == 0)
		return 0;
	return k->last_line + 1;
}

/* A ledger taken out of service: freed, or kept for the job reading it. */
static void
retire(struct ckpt *k, struct ledger *old)
{
	if (k->job != NULL && k->job->ledger == old && k->retired == NULL)
		k->retired = old;
	else
		ledger_destroy(old);
}

void
ckpt_perf_reset(struct ckpt *k, struct ledger *old)
{
	if (k->held) {
		k->held = 0;
		snprintf(k->why, sizeof(k->why), "perf.jsonl did not match it "
		    "(see the generation line)");
		log_warnx("checkpoint not used: perf.jsonl did not match it; "
		    "folding from byte 0");
	}
	retire(k, old);
	ckpt_note(k, 0);
}

static void	schedule(struct ckpt *);

void
ckpt_ready(struct ckpt *k)
{
	struct tailer_status	 st;

	k->ready_ms = ms_since(k->load_t0);
	if (k->held) {
		tailer_status(k->perf, &st);
		/* the file went away before it could be opened: the fold is
		 * of nothing, as it would be from byte 0 */
		if (!st.file_exists || st.cursor < k->mark.offset) {
			drop(k, "perf.jsonl was not there to resume");
			if (k->seeded)
				notifier_memory_forget(k->env.notifier);
		}
	}
	if (k->held) {
		k->held = 0;
		k->resumed = 1;
		k->resumed_at = k->mark.offset;
		k->why[0] = '\0';
		tailer_status(k->perf, &st);
		log_info("checkpoint: resumed at byte %" PRIu64 ", folded the "
		    "%" PRIu64 " bytes after it; ready %.1f ms after start",
		    k->mark.offset, st.cursor - k->mark.offset, k->ready_ms);
	}
	schedule(k);
	k->ready = 1;
}

/* --- saving ------------------------------------------------------------- */

void
ckpt_note(struct ckpt *k, uint64_t bytes)
{
	if (!k->dirty)
		k->first_dirty = uv_now(k->env.loop);
	k->dirty = 1;
	k->bytes += bytes;
	if (k->ready && !k->held)
		schedule(k);
}

void
ckpt_taint(struct ckpt *k)
{
	k->tainted = 1;
}

/* Is the live fold one a checkpoint may stand for, and where?  1 yes, 0
 * no, -1 not yet (k->waiting says why). */
static int
savable(struct ckpt *k, struct checkpoint_mark *m)
{
	struct tailer_status	 st;
	struct notifier_status	 ns;
	struct cursor		 c;

	if (!k->on || k->tainted || k->held || !k->ready || k->perf == NULL ||
	    k->fixes_unknown)
		return 0;
	tailer_status(k->perf, &st);
	if (!st.file_exists || st.generation == 0)
		return 0;
	/*
	 * A restart never feeds the notifier the records before the offset,
	 * so the offset may only stand where every meaningful record before
	 * it was said: nothing held back by a rate limit, nothing waiting
	 * for the catch-up line (docs/checkpoints.md).
	 */
	notifier_status(k->env.notifier, &ns);
	if (ns.pending > 0 || ns.catchup > 0) {
		snprintf(k->waiting, sizeof(k->waiting), "the notifier has %"
		    PRIu64 " wakes held back and %" PRIu64 " waiting for the "
		    "catch-up line", ns.pending, ns.catchup);
		return -1;
	}
	k->waiting[0] = '\0';
	tailer_position(k->perf, &c);
	memset(m, 0, sizeof(*m));
	m->generation = c.generation;
	m->offset = c.offset;
	m->dev = c.dev;
	m->ino = c.ino;
	m->hash_len = c.hash_len;
	m->hash = c.hash;
	/* the whole prefix and the file's times (project/filemark.h): a
	 * mark that lacks the prefix stands on nothing a reader can check */
	if (c.offset > 0 && !(c.flags & FILEMARK_PREFIX))
		return 0;
	m->flags = c.flags;
	m->prefix = c.prefix;
	m->st_size = c.st_size;
	m->mtime_ns = c.mtime_ns;
	m->ctime_ns = c.ctime_ns;
	m->fixes_offset = k->fixes_end;
	m->fixes_hash = k->fixes_hash;
	m->written_ms = base_now_ms();
	return 1;
}

static void
save_work(uv_work_t *req)
{
	struct ckpt_job	*j = req->data;
	struct ckpt	*k = j->k;
	uint64_t	 t0 = uv_hrtime();

	uv_mutex_lock(&k->mu);
	if (j->seq > k->saved_seq) {
		if ((j->rc = checkpoint_save(k->path, &j->mark, j->snap)) == 0)
			k->saved_seq = j->seq;
	} else
		j->skipped = 1;
	uv_mutex_unlock(&k->mu);
	j->write_ms = ms_since(t0);
}

/* Said once when saving starts to fail, once when it works again. */
static void
save_result(struct ckpt *k, int rc, uint64_t offset, uint64_t size)
{
	if (rc != 0) {
		k->failures++;
		if (k->last_error != rc)
			log_warnx("cannot save the checkpoint %s: %s (a restart "
			    "folds more of the ledger until it works)", k->path,
			    strerror(-rc));
		k->last_error = rc;
		return;
	}
	if (k->last_error != 0)
		log_info("checkpoint saved again (%s)", k->path);
	k->last_error = 0;
	k->saves++;
	k->last_offset = offset;
	k->last_size = size;
}

static void
save_after(uv_work_t *req, int status)
{
	struct ckpt_job	*j = req->data;
	struct ckpt	*k = j->k;
	int		 rc = status != 0 ? status : j->rc;

	if (!j->skipped) {
		save_result(k, rc, j->mark.offset, ledger_snap_size(j->snap));
		k->last_write_ms = j->write_ms;
		if (rc != 0)
			k->dirty = 1;	/* tried again at the next change */
		else
			k->unsettled = !(j->mark.flags & FILEMARK_STAT);
	}
	ledger_snap_free(j->snap);
	if (k->retired != NULL && k->retired == j->ledger) {
		ledger_destroy(k->retired);
		k->retired = NULL;
	}
	k->job = NULL;
	free(j);
	/* a failed save waits for the next change, not a loop of retries */
	if (rc == 0)
		schedule(k);
}

static void	on_timer(uv_timer_t *);

static void
begin_save(struct ckpt *k)
{
	struct ledger		*live = *k->env.live;
	struct ckpt_job		*j;
	uint64_t		 t0;
	size_t			 left;
	int			 rc;

	if (k->job != NULL || !k->dirty || k->stopping)
		return;
	if ((j = calloc(1, sizeof(*j))) == NULL)
		return;
	if ((rc = savable(k, &j->mark)) != 1) {
		free(j);
		/* deferred, not dropped: looked at again a while later */
		if (rc < 0 && k->timer_init) {
			k->wait_ms = k->wait_ms == 0 ? CKPT_WAIT_MS :
			    k->wait_ms * 2 > CKPT_WAIT_MAX_MS ?
			    CKPT_WAIT_MAX_MS : k->wait_ms * 2;
			uv_timer_start(&k->timer, on_timer, k->wait_ms, 0);
		}
		return;
	}
	k->wait_ms = 0;
	/*
	 * The rows changed since the last save, serialised ahead a slice a
	 * turn, so that the begin below — which must see the fold at one
	 * instant, the mark's — has little left to do.
	 */
	t0 = uv_hrtime();
	rc = ledger_checkpoint_prepare(live, CKPT_PREPARE_ROWS, &left);
	if (k->prepare_turns == 0 || left < k->prepare_least) {
		k->prepare_least = left;
		k->prepare_stuck = 0;
	} else
		k->prepare_stuck++;
	if (rc == 0 && left > CKPT_PREPARE_ROWS &&
	    k->prepare_stuck < CKPT_PREPARE_STUCK) {
		if (ms_since(t0) > k->last_prepare_ms)
			k->last_prepare_ms = ms_since(t0);
		k->prepare_turns++;
		free(j);
		uv_timer_start(&k->timer, on_timer, 0, 0);
		return;
	}
	if (ms_since(t0) > k->last_prepare_ms)
		k->last_prepare_ms = ms_since(t0);
	k->last_prepare_turns = k->prepare_turns + 1;
	k->prepare_turns = 0;
	t0 = uv_hrtime();
	if (rc != 0 || (rc = ledger_checkpoint_begin(live, &j->snap)) != 0) {
		save_result(k, rc, 0, 0);
		free(j);
		return;
	}
	k->last_begin_ms = ms_since(t0);
	j->k = k;
	j->req.data = j;
	j->ledger = live;
	j->seq = ++k->seq;
	if ((rc = uv_queue_work(k->env.loop, &j->req, save_work,
	    save_after)) < 0) {
		save_result(k, rc, 0, 0);
		ledger_snap_free(j->snap);
		free(j);
		return;
	}
	k->job = j;
	k->dirty = 0;
	k->bytes = 0;
}

static void
on_timer(uv_timer_t *t)
{
	begin_save(t->data);
}

/* Arm the timer by the three rules (ckpt.h); nothing while a save runs —
 * its end calls here again if the fold changed meanwhile. */
static void
schedule(struct ckpt *k)
{
	const struct config	*cfg = k->env.cfg;
	uint64_t		 now, due, idle, last;

	if (!k->on || !k->dirty || k->tainted || k->job != NULL ||
	    k->stopping || !k->timer_init)
		return;
	now = uv_now(k->env.loop);
	idle = (uint64_t)cfg->ckpt_idle_ms;
	last = k->first_dirty + (uint64_t)cfg->ckpt_max_ms;
	if ((int64_t)k->bytes >= cfg->ckpt_bytes)
		due = 0;
	else
		due = last <= now ? 0 : last - now < idle ? last - now : idle;
	uv_timer_start(&k->timer, on_timer, due, 0);
}

void
ckpt_stop(struct ckpt *k)
{
	struct checkpoint_mark	 m;
	struct ledger_snap	*snap;
	uint64_t		 t0 = uv_hrtime(), seq, size = 0;
	int			 rc;

	k->stopping = 1;
	if (k->timer_init) {
		uv_timer_stop(&k->timer);
		uv_close((uv_handle_t *)&k->timer, NULL);
		k->timer_init = 0;
	}
	/*
	 * A mark taken within FILEMARK_SETTLED_NS of the file's last write
	 * cannot vouch that nothing wrote since, and the next start would
	 * read the whole prefix to check it: at stop, once the times have
	 * settled, the same fold is saved again with them.  (Not on a timer
	 * while running: a quiet daemon wakes for nothing.)
	 */
	if ((!k->dirty && !k->unsettled) || (rc = savable(k, &m)) == 0)
		return;
	if (rc > 0 && !k->dirty && !(m.flags & FILEMARK_STAT))
		return;		/* the same fold, the times still fresh */
	if (rc < 0) {
		/* the last checkpoint stays: its offset was a said one */
		log_info("checkpoint not saved at stop: %s", k->waiting);
		return;
	}
	if ((rc = ledger_checkpoint_begin(*k->env.live, &snap)) == 0) {
		seq = ++k->seq;
		size = ledger_snap_size(snap);
		uv_mutex_lock(&k->mu);
		if ((rc = checkpoint_save(k->path, &m, snap)) == 0)
			k->saved_seq = seq;
		uv_mutex_unlock(&k->mu);
		ledger_snap_free(snap);
	}
	save_result(k, rc, m.offset, size);
	if (rc == 0) {
		k->dirty = 0;
		k->unsettled = !(m.flags & FILEMARK_STAT);
		log_info("checkpoint saved at byte %" PRIu64 " in %.1f ms",
		    m.offset, ms_since(t0));
	}
}

void
ckpt_free(struct ckpt *k)
{
	ledger_destroy(k->retired);
	k->retired = NULL;
	if (k->mu_init)
		uv_mutex_destroy(&k->mu);
	k->mu_init = 0;
}

cJSON *
ckpt_status_json(const struct ckpt *k)
{
	cJSON			*o = cJSON_CreateObject();

	cJSON_AddBoolToObject(o, "on", k->on);
	cJSON_AddStringToObject(o, "path", k->path);
	cJSON_AddBoolToObject(o, "resumed", k->resumed);
	cJSON_AddNumberToObject(o, "resumedAt", (double)k->resumed_at);
	cJSON_AddStringToObject(o, "why", k->why);
	cJSON_AddNumberToObject(o, "loadMs", k->load_ms);
	cJSON_AddNumberToObject(o, "readyMs", k->ready_ms);
	cJSON_AddNumberToObject(o, "saves", (double)k->saves);
	cJSON_AddNumberToObject(o, "failures", (double)k->failures);
	if (k->last_error != 0)
		cJSON_AddStringToObject(o, "error", strerror(-k->last_error));
	cJSON_AddNumberToObject(o, "lastOffset", (double)k->last_offset);
	cJSON_AddNumberToObject(o, "lastBytes", (double)k->last_size);
	cJSON_AddNumberToObject(o, "lastBeginMs", k->last_begin_ms);
	cJSON_AddNumberToObject(o, "lastWriteMs", k->last_write_ms);
	cJSON_AddNumberToObject(o, "lastPrepareTurns",
	    (double)k->last_prepare_turns);
	cJSON_AddNumberToObject(o, "maxPrepareMs", k->last_prepare_ms);
	cJSON_AddBoolToObject(o, "pending", k->dirty || k->job != NULL);
	cJSON_AddStringToObject(o, "waiting", k->dirty ? k->waiting : "");
	return o;
}
