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

/* The options of the daemon's fold: everything, with the timeline.  The
 * checkpoint's fold is made with the same (fold_load). */
static void
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

/* Fold the fixes.jsonl lines kept so far into `l` (a new ledger). */
static void
fixes_into(const struct fold *f, struct ledger *l)
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

/*
 * The checkpoint dropped at start (ckpt.h): the fold from byte 0 of the
 * fixes kept so far replaces the checkpoint's.  No save runs before
 * ready, so the old one is freed at once.
 */
static int
refold(void *arg)
{
	struct fold	*f = arg;
	struct ledger	*l;

	if ((l = new_ledger()) == NULL)
		return -ENOMEM;
	fixes_into(f, l);
	ledger_destroy(f->ledger);
	f->ledger = l;
	return 0;
}

int
fold_init(struct fold *f, uv_loop_t *loop, const struct config *cfg,
    const char *state_dir, struct notifier *n)
{
	struct ckpt_env	env = { loop, cfg, state_dir, n, &f->ledger, refold,
			    f };

	if ((f->ledger = new_ledger()) == NULL)
		return -ENOMEM;
	return ckpt_init(&f->ckpt, &env);
}

/* --- start-up: the checkpoint, or a fold from byte 0 ------------------- */

/* The checkpoint's answer: its fold, if one serves, is the catalogue. */
static void
loaded(void *arg, struct ledger *l)
{
	struct fold	*f = arg;

	if (l != NULL) {
		ledger_destroy(f->ledger);
		f->ledger = l;
	}
	f->then(f->then_arg);
}

int
fold_load(struct fold *f, void (*then)(void *), void *arg)
{
	struct ledger_opts	o;

	f->then = then;
	f->then_arg = arg;
	fold_opts(&o);
	return ckpt_load(&f->ckpt, &o, loaded, f);
}

void
fold_fixes_ready(struct fold *f)
{
	ckpt_fixes_ready(&f->ckpt);
}

void
fold_perf_start(struct fold *f, struct tailer *perf)
{
	ckpt_perf_start(&f->ckpt, perf);
}

int
fold_ready(struct fold *f)
{
	ckpt_ready(&f->ckpt);
	f->ready = 1;
	return f->ckpt.resumed;
}

uint64_t
fold_ring_from(const struct fold *f)
{
	return ckpt_ring_from(&f->ckpt);
}

cJSON *
fold_ckpt_status_json(const struct fold *f)
{
	return ckpt_status_json(&f->ckpt);
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
		ckpt_taint(&f->ckpt);
		return -ENOMEM;
	}
	ckpt_note(&f->ckpt, len + 1);
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
	ckpt_note(&f->ckpt, len + 1);
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
	fixes_into(f, l);
	ckpt_perf_reset(&f->ckpt, old);	/* freed, or kept for a save in flight */
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
		ckpt_taint(&f->ckpt);
		return;
	}
	/* a line the checkpoint's fold holds already is only kept */
	if (ckpt_fix_line(&f->ckpt, line, len, off) != 0)
		return;
	ledger_counts(f->ledger, &c0);
	if (ledger_fold_fix(f->ledger, line, len, off) == 1) {
		log_warnx("fixes.jsonl: skipped the line at offset %llu",
		    (unsigned long long)off);
		ledger_counts(f->ledger, &c1);
		if (c1.skipped != c0.skipped)
			ckpt_fix_skipped(&f->ckpt);
	}
	ckpt_note(&f->ckpt, 0);
}

void
fold_fix_long(struct fold *f, uint64_t off, uint64_t len)
{
	f->changes++;
	if (fixline_keep(f, NULL, len, off) != 0)
		ckpt_taint(&f->ckpt);
	if (ckpt_fix_line(&f->ckpt, NULL, len, off) == 0) {
		ledger_skip(f->ledger, LEDGER_FIXES, off, len, NULL);
		ckpt_fix_skipped(&f->ckpt);
		ckpt_note(&f->ckpt, 0);
	}
}

void
fold_fix_reset(struct fold *f, uint64_t generation)
{
	f->changes++;
	fixlines_free(f);
	/* at start, the checkpoint's fold holds the fixes it stands on */
	if (!ckpt_fixes_reset(&f->ckpt, generation)) {
		ledger_clear_fixes(f->ledger);
		ckpt_note(&f->ckpt, 0);
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
	/* the fold as it stands, beside the cursor (while the tailer is
	 * still open: the checkpoint's position is the tailer's) */
	ckpt_stop(&f->ckpt);
}

void
fold_free(struct fold *f)
{
	fixlines_free(f);
	free(f->fixes);
	f->fixes = NULL;
	ledger_destroy(f->ledger);
	f->ledger = NULL;
	ckpt_free(&f->ckpt);
}
