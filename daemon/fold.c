/*
 * fold — the live catalogue and what it is folded from (fold.h).
 *
 * fixes.jsonl is tailed first, then perf.jsonl, so wake lines carry the
 * status that the fixes decide.  Fix lines are kept in memory (they are
 * few) so that a new generation of perf.jsonl can be folded from nothing
 * with the fixes in place.  Every change to what the files hold bumps
 * `changes`, and tells the checkpoint (ckpt_note) how much it has to
 * save; a line lost to memory taints the fold, which is then never saved
 * (a checkpoint stands for the file, or for nothing).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/fold.h"
#include "daemon/log.h"

void
fold_opts(struct ledger_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->from_ms = o->to_ms = LEDGER_NO_TIME;
	o->want_timeline = 1;
}

static struct ledger *
new_ledger(void)
{
	struct ledger_opts	o;

	fold_opts(&o);
	return ledger_create(&o);
}

int
fold_init(struct fold *f, uv_loop_t *loop, const struct config *cfg,
    const char *state_dir, struct notifier *n)
{
	f->loop = loop;
	f->cfg = cfg;
	f->state_dir = state_dir;
	f->notifier = n;
	if ((f->ledger = new_ledger()) == NULL)
		return -ENOMEM;
	return ckpt_init(f);
}

void
fold_fixes_into(const struct fold *f, struct ledger *l)
{
	size_t	i;

	for (i = 0; i < f->nfixes; i++)
		if (f->fixes[i].line == NULL)
			ledger_skip(l, LEDGER_FIXES, f->fixes[i].off,
			    f->fixes[i].len, NULL);
		else
			ledger_fold_fix(l, f->fixes[i].line, f->fixes[i].len,
			    f->fixes[i].off);
}

/* --- start-up: the checkpoint, or a fold from byte 0 ------------------- */

int
fold_load(struct fold *f, void (*then)(void *), void *arg)
{
	return ckpt_load(f, then, arg);
}

void
fold_fixes_ready(struct fold *f)
{
	ckpt_fixes_ready(f);
}

void
fold_perf_start(struct fold *f, struct tailer *perf)
{
	f->perf = perf;
	ckpt_perf_start(f);
}

int
fold_ready(struct fold *f)
{
	ckpt_ready(f);
	f->ready = 1;
	return f->ckpt.resumed;
}

uint64_t
fold_ring_from(const struct fold *f)
{
	return ckpt_ring_from(f);
}

cJSON *
fold_ckpt_status_json(const struct fold *f)
{
	return ckpt_status_json(f);
}

/* --- perf.jsonl ---------------------------------------------------------- */

int
fold_perf_line(struct fold *f, const char *line, size_t len, uint64_t off,
    struct ledger_event *ev)
{
	int	rc;

	f->changes++;
	if ((rc = ledger_fold_perf(f->ledger, line, len, off, ev)) < 0) {
		log_warnx("fold: out of memory at offset %llu; the line is "
		    "not counted", (unsigned long long)off);
		ckpt_taint(f);
		return -ENOMEM;
	}
	ckpt_note(f, len + 1);
	return rc;
}

enum tail_phase
fold_phase(const struct fold *f, uint64_t off, size_t len,
    enum tail_phase phase)
{
	if (f->regen_end > 0 && phase == TAIL_LIVE &&
	    off + len + 1 <= f->regen_end)
		return TAIL_CATCHUP;
	return phase;
}

int
fold_regen_done(struct fold *f, uint64_t off, size_t len)
{
	if (f->regen_end == 0 || off + len + 1 < f->regen_end)
		return 0;
	f->regen_end = 0;
	return 1;
}

void
fold_perf_long(struct fold *f, uint64_t off, uint64_t len)
{
	f->changes++;
	ledger_skip(f->ledger, LEDGER_PERF, off, len, NULL);
	ckpt_note(f, len + 1);
}

void
fold_perf_reset(struct fold *f, uint64_t generation, uint64_t size)
{
	struct ledger	*l, *old;

	f->regen_end = size;
	f->generation = generation;
	f->changes++;
	if ((l = new_ledger()) == NULL) {
		log_warnx("fold: out of memory starting a new generation; "
		    "keeping the old catalogue");
		return;
	}
	old = f->ledger;
	f->ledger = l;
	fold_fixes_into(f, l);
	ckpt_perf_reset(f, old);	/* freed, or kept for a save in flight */
}

/* --- fixes.jsonl --------------------------------------------------------- */

/* Keep a fixes.jsonl line (NULL: one over LEDGER_MAX_LINE) to refold a
 * new generation with; -ENOMEM. */
static int
fixline_keep(struct fold *f, const char *line, size_t len, uint64_t off)
{
	struct fixline	*x;

	if (f->nfixes == f->capfixes) {
		size_t		 n = f->capfixes ? f->capfixes * 2 : 64;
		struct fixline	*nf = realloc(f->fixes, n * sizeof(*nf));

		if (nf == NULL)
			return -ENOMEM;
		f->fixes = nf;
		f->capfixes = n;
	}
	x = &f->fixes[f->nfixes];
	x->line = NULL;
	if (line != NULL) {
		if ((x->line = malloc(len + 1)) == NULL)
			return -ENOMEM;
		memcpy(x->line, line, len);
		x->line[len] = '\0';
	}
	x->len = len;
	x->off = off;
	f->nfixes++;
	return 0;
}

static void
fixlines_free(struct fold *f)
{
	size_t	i;

	for (i = 0; i < f->nfixes; i++)
		free(f->fixes[i].line);
	f->nfixes = 0;
}

void
fold_fix_line(struct fold *f, const char *line, size_t len, uint64_t off)
{
	struct ledger_counts	c0, c1;

	f->changes++;
	if (fixline_keep(f, line, len, off) != 0) {
		log_warnx("fixes.jsonl: out of memory");
		ckpt_taint(f);
		return;
	}
	/* a line the checkpoint's fold holds already is only kept */
	if (ckpt_fix_line(f, line, len, off) != 0)
		return;
	ledger_counts(f->ledger, &c0);
	if (ledger_fold_fix(f->ledger, line, len, off) == 1) {
		log_warnx("fixes.jsonl: skipped the line at offset %llu",
		    (unsigned long long)off);
		ledger_counts(f->ledger, &c1);
		if (c1.skipped != c0.skipped)
			ckpt_fix_skipped(f);
	}
	ckpt_note(f, 0);
}

void
fold_fix_long(struct fold *f, uint64_t off, uint64_t len)
{
	f->changes++;
	if (fixline_keep(f, NULL, len, off) != 0)
		ckpt_taint(f);
	if (ckpt_fix_line(f, NULL, len, off) == 0) {
		ledger_skip(f->ledger, LEDGER_FIXES, off, len, NULL);
		ckpt_fix_skipped(f);
		ckpt_note(f, 0);
	}
}

void
fold_fix_reset(struct fold *f, uint64_t generation)
{
	f->changes++;
	fixlines_free(f);
	/* at start, the checkpoint's fold holds the fixes it stands on */
	if (!ckpt_fixes_reset(f, generation)) {
		ledger_clear_fixes(f->ledger);
		ckpt_note(f, 0);
	}
}

const char *
fold_row_state(const struct fold *f, const char *fp, uint64_t *count)
{
	return ledger_row_state(f->ledger, fp, count);
}

/* --- life cycle ---------------------------------------------------------- */

void
fold_stop(struct fold *f)
{
	f->stopping = 1;
	/* the fold as it stands, beside the cursor (while the tailer is
	 * still open: the checkpoint's position is the tailer's) */
	ckpt_stop(f);
}

void
fold_free(struct fold *f)
{
	fixlines_free(f);
	free(f->fixes);
	f->fixes = NULL;
	ledger_destroy(f->ledger);
	f->ledger = NULL;
	ckpt_free(f);
}
