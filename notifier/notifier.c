/*
 * notifier — from a folded record to a wake on every channel
 * (notifier.h).
 *
 * The order of what is said is the order of the file, and every line
 * says all that was still unsaid before it: a catch-up summary goes out
 * before the first record that wakes after it, carrying what the limiter
 * held; a held-back tally rides on the next line that goes out (or on the
 * flush timer's summary line when none comes).  A summary's id is the
 * last record it stands for.  So ids only grow, a `sloptimize watch`
 * that resumes after a line never gets it twice, and the last id said is
 * a watermark a restart can trust (once stored).
 *
 * Write-ahead: before a line reaches the NOTIFIER_GATED channels (the
 * events socket: what watchers see), its id is stored — synchronously, as
 * the store is a slot of the state directory (one pwrite of 128 bytes,
 * under a microsecond).  A store that fails does not hold wakes back: it
 * is counted and said once.
 *
 * Nothing here blocks: channels queue what they need (the events socket
 * writes when its clients are writable, desktop and exec run off the loop
 * thread or in children).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <time.h>

#include "base/base.h"
#include "notifier/notifier.h"

static void
say(struct notifier *n, int prio, const char *msg)
{
	if (n->log != NULL)
		n->log(n->log_arg, prio, msg);
}

static int
same_limits(const struct wake_config *a, const struct wake_config *b)
{
	return a->per_fp_ms == b->per_fp_ms && a->global_max == b->global_max &&
	    a->global_window_ms == b->global_window_ms;
}

/* --- write-ahead -------------------------------------------------------- */

/* Store a line's id before watchers can see it.  Availability first: a
 * failure is counted and said once, and the line goes out anyway (what
 * is lost is only exactness after a crash: some lines said twice). */
static void
store_line(struct notifier *n, uint64_t gen, uint64_t off)
{
	char	msg[256];
	int	rc;

	if ((rc = n->store.save(n->store.arg, gen, off)) == 0) {
		n->have_stored = 1;
		n->stored_gen = gen;
		n->stored_off = off;
		if (n->store_failing) {
			say(n, LOG_INFO, "wake: the last wake said is stored "
			    "again");
			n->store_failing = 0;
		}
		return;
	}
	n->store_errors++;
	if (!n->store_failing) {
		snprintf(msg, sizeof(msg), "wake: cannot store the last wake "
		    "said (%s); wakes go out anyway, but after a crash some may "
		    "be said twice", strerror(-rc));
		say(n, LOG_WARNING, msg);
		n->store_failing = 1;
	}
}

/* --- channels ----------------------------------------------------------- */

/* Hand one wake (json consumed) to every channel that takes it. */
static void
emit(struct notifier *n, const struct ledger_event *ev, uint64_t gen,
    uint64_t off, const char *id, cJSON *json, const char *line)
{
	struct notifier_wake	 w;
	char			*txt;
	size_t			 i;
	int			 stored = !n->has_store;

	if (json == NULL || (txt = cJSON_PrintUnformatted(json)) == NULL) {
		say(n, LOG_WARNING, "wake: out of memory");
		cJSON_Delete(json);
		return;
	}
	memset(&w, 0, sizeof(w));
	w.ev = ev;
	w.gen = gen;
	w.off = off;
	w.id = id;
	w.line = line;
	w.json = json;
	w.text = txt;
	w.len = strlen(txt);
	w.summary = ev == NULL;
	for (i = 0; i < n->nch; i++) {
		if ((n->ch[i].flags & NOTIFIER_GATED) && !stored++)
			store_line(n, gen, off);
		n->ch[i].fn(n->ch[i].arg, &w);
	}
	n->wakes++;
	n->have_said = 1;
	n->said_gen = gen;
	n->said_off = off;
	free(txt);
	cJSON_Delete(json);
}

/* --- catch-up and the limiter ------------------------------------------- */

static void	on_flush(uv_timer_t *);

static void
arm_flush(struct notifier *n)
{
	int64_t	now = base_now_ms(), at = wake_limiter_flush_at(n->limiter, now);

	if (!n->timer_up)
		return;
	if (at == WAKE_NEVER) {
		uv_timer_stop(&n->flush_timer);
		return;
	}
	uv_timer_start(&n->flush_timer, on_flush,
	    (uint64_t)(at > now ? at - now : 0), 0);
}

/*
 * Say in one line the catch-up tally and, with `with_held`, what the
 * limiter holds: both are unsaid and before anything to come.  The line's
 * id is the last record it stands for.
 */
static void
say_summary(struct notifier *n, int with_held)
{
	char			 line[WAKE_LINE_SIZE], id[WAKE_ID_SIZE];
	struct wake_tally	*held = wake_limiter_held(n->limiter);
	struct wake_tally	*c = n->catchup;
	uint64_t		 fg, fo, lg = 0, lo = 0, g, o;
	int			 any = 0;
	cJSON			*json;

	if (!with_held)
		held = NULL;
	if (c != NULL && wake_tally_count(c) > 0) {
		wake_tally_ids(c, &fg, &fo, &lg, &lo);
		any = 1;
	}
	if (held != NULL && wake_tally_count(held) > 0) {
		wake_tally_ids(held, &fg, &fo, &g, &o);
		if (!any || lg < g || (lg == g && lo < o)) {
			lg = g;
			lo = o;
		}
		any = 1;
	}
	if (!any)
		return;
	wake_summary_format(line, sizeof(line), c, n->catchup_why, held,
	    n->cfg);
	wake_id_format(id, lg, lo);
	json = wake_summary_json(id, line, c, held);
	emit(n, NULL, lg, lo, id, json, line);
	wake_limiter_sent(n->limiter, base_now_ms());
	if (c != NULL)
		wake_tally_reset(c);
	if (held != NULL)
		wake_tally_reset(held);
}

static void
on_flush(uv_timer_t *t)
{
	struct notifier	*n = t->data;
	int64_t		 now = base_now_ms();

	if (wake_limiter_flush_at(n->limiter, now) <= now)
		say_summary(n, 1);
	arm_flush(n);
}

/* --- records ------------------------------------------------------------ */

/* Did an earlier run say this one (it is at or before its last line)? */
static int
said_before(const struct notifier *n, uint64_t gen, uint64_t off)
{
	if (!n->resumed)
		return -1;		/* unknown */
	return n->prior && gen == n->prior_gen && off <= n->prior_off;
}

static void
wake_live(struct notifier *n, const struct ledger_event *ev, uint64_t gen,
    uint64_t off, enum wake_why why)
{
	char			 id[WAKE_ID_SIZE], line[WAKE_LINE_SIZE];
	struct wake_tally	*held = wake_limiter_held(n->limiter);
	struct wake_held	 said;
	int			 rc;

	/* what waits for the catch-up line is before this record */
	if (wake_tally_count(n->catchup) > 0)
		say_summary(n, 1);
	rc = wake_limiter_admit(n->limiter, ev, why, gen, off, base_now_ms());
	if (rc == 0) {
		arm_flush(n);
		return;
	}
	if (rc < 0)
		say(n, LOG_WARNING, "wake: rate limiter out of memory; waking "
		    "anyway");
	wake_id_format(id, gen, off);
	wake_tally_held(held, &said);
	wake_format(line, sizeof(line), ev, id, &said, n->cfg);
	emit(n, ev, gen, off, id, wake_json(ev, id, line, &said), line);
	wake_tally_reset(held);
	arm_flush(n);
}

int
notifier_record(struct notifier *n, const struct ledger_event *ev,
    uint64_t gen, uint64_t off, enum notifier_phase phase)
{
	enum wake_why	why;
	int		regression, said;

	if (!wake_is_meaningful(ev, n->cfg))
		return 0;
	n->gen = gen;
	/* every meaningful record teaches the memory, seeded ones too */
	regression = wake_memory_regression(n->memory, ev);
	if (phase != NOTIFIER_LIVE) {
		said = said_before(n, gen, off);
		if (said == 1 || (said == -1 && phase == NOTIFIER_SEED))
			return 1;
		if (!wake_is_recent(ev->at_ms, base_now_ms(), n->cfg)) {
			wake_tally_add(n->catchup, ev, gen, off, base_now_ms());
			return 0;
		}
	}
	if (strcmp(ev->type, "usermark") == 0)
		why = WAKE_USERMARK;
	else if (regression)
		why = WAKE_REGRESSED;
	else if (ev->count == 1)
		why = WAKE_NEW;
	else
		why = WAKE_REPEAT;
	/*
	 * A recent repeat the earlier run folded and never said: it held it
	 * back (or had its line waiting for the store) when it died.  Held
	 * it stays, to be said as soon as the window allows — a fresh
	 * limiter must not turn what that run held into a burst of lines.
	 */
	if (phase == NOTIFIER_SEED && why == WAKE_REPEAT) {
		wake_limiter_hold(n->limiter, ev, gen, off, base_now_ms());
		arm_flush(n);
		return 0;
	}
	wake_live(n, ev, gen, off, why);
	return 0;
}

void
notifier_ready(struct notifier *n)
{
	/* the held tally rides along: it may hold records older than the
	 * catch-up line's id, which must not be said after it */
	if (wake_tally_count(n->catchup) > 0)
		say_summary(n, 1);
}

void
notifier_resume(struct notifier *n, int have, uint64_t gen, uint64_t off)
{
	n->resumed = 1;
	n->prior = have;
	n->prior_gen = gen;
	n->prior_off = off;
	if (have) {
		n->have_said = n->have_stored = 1;
		n->said_gen = n->stored_gen = gen;
		n->said_off = n->stored_off = off;
	}
}

void
notifier_store_set(struct notifier *n, const struct notifier_store *st)
{
	n->store = *st;
	n->has_store = st->save != NULL;
}

void
notifier_generation(struct notifier *n, const char *why)
{
	say_summary(n, 1);
	wake_memory_reset(n->memory);
	snprintf(n->catchup_why, sizeof(n->catchup_why), "%s",
	    why != NULL ? why : "while stopped");
	arm_flush(n);
}

int
notifier_memory_seed(struct notifier *n, const char *id)
{
	return wake_memory_set(n->memory, id, 1);
}

void
notifier_memory_forget(struct notifier *n)
{
	wake_memory_reset(n->memory);
}

int
notifier_reconfigure(struct notifier *n)
{
	struct wake_limiter	*wl;

	if (same_limits(&n->limits, n->cfg))
		return 0;
	if ((wl = wake_limiter_create(n->cfg)) == NULL)
		return -ENOMEM;
	/* say what the old limiter held before it goes, whatever its
	 * window says: the new one starts with nothing held */
	say_summary(n, 1);
	wake_limiter_destroy(n->limiter);
	n->limiter = wl;
	n->limits = *n->cfg;
	if (n->timer_up)
		uv_timer_stop(&n->flush_timer);
	return 0;
}

/* --- life cycle --------------------------------------------------------- */

int
notifier_init(struct notifier *n, uv_loop_t *loop,
    const struct wake_config *cfg, base_log_fn *log, void *log_arg)
{
	int	rc;

	memset(n, 0, sizeof(*n));
	n->cfg = cfg;
	n->limits = *cfg;
	n->log = log;
	n->log_arg = log_arg;
	snprintf(n->catchup_why, sizeof(n->catchup_why), "while stopped");
	if ((n->limiter = wake_limiter_create(cfg)) == NULL ||
	    (n->catchup = wake_tally_create()) == NULL ||
	    (n->memory = wake_memory_create()) == NULL) {
		notifier_free(n);
		return -ENOMEM;
	}
	if ((rc = uv_timer_init(loop, &n->flush_timer)) != 0) {
		notifier_free(n);
		return rc;
	}
	n->flush_timer.data = n;
	n->timer_up = 1;
	return 0;
}

int
notifier_channel_add(struct notifier *n, notifier_channel_fn *fn, void *arg,
    unsigned flags)
{
	if (n->nch == NOTIFIER_CHANNELS)
		return -ENOSPC;
	n->ch[n->nch].fn = fn;
	n->ch[n->nch].arg = arg;
	n->ch[n->nch].flags = flags;
	n->nch++;
	return 0;
}

void
notifier_status(const struct notifier *n, struct notifier_status *st)
{
	struct wake_limiter_stats	ws = { 0, 0, 0 };

	memset(st, 0, sizeof(*st));
	if (n->limiter != NULL)
		wake_limiter_stats(n->limiter, &ws);
	st->wakes = n->wakes;
	st->held = ws.held;
	st->pending = ws.pending;
	st->catchup = n->catchup ? wake_tally_count(n->catchup) : 0;
	st->store_errors = n->store_errors;
	st->have_said = n->have_said;
	st->said_gen = n->said_gen;
	st->said_off = n->said_off;
	st->have_stored = n->have_stored;
	st->stored_gen = n->stored_gen;
	st->stored_off = n->stored_off;
}

cJSON *
notifier_status_json(const struct notifier *n)
{
	struct notifier_status	 st;
	cJSON			*o = cJSON_CreateObject();
	char			 id[WAKE_ID_SIZE];

	notifier_status(n, &st);
	cJSON_AddNumberToObject(o, "wakes", (double)st.wakes);
	cJSON_AddNumberToObject(o, "heldBack", (double)st.held);
	cJSON_AddNumberToObject(o, "heldPending", (double)st.pending);
	cJSON_AddNumberToObject(o, "catchupPending", (double)st.catchup);
	wake_id_format(id, st.said_gen, st.said_off);
	if (st.have_said)
		cJSON_AddStringToObject(o, "lastSaid", id);
	else
		cJSON_AddNullToObject(o, "lastSaid");
	wake_id_format(id, st.stored_gen, st.stored_off);
	if (st.have_stored)
		cJSON_AddStringToObject(o, "stored", id);
	else
		cJSON_AddNullToObject(o, "stored");
	cJSON_AddNumberToObject(o, "storeErrors", (double)st.store_errors);
	return o;
}

void
notifier_close(struct notifier *n)
{
	if (n->timer_up) {
		n->timer_up = 0;
		uv_close((uv_handle_t *)&n->flush_timer, NULL);
	}
}

void
notifier_free(struct notifier *n)
{
	wake_limiter_destroy(n->limiter);
	wake_tally_destroy(n->catchup);
	wake_memory_destroy(n->memory);
	n->limiter = NULL;
	n->catchup = NULL;
	n->memory = NULL;
}
