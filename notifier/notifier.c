/*
 * notifier — from a folded record to a wake on every channel
 * (notifier.h).
 *
 * The order of what is said is the order of the file: a catch-up summary
 * goes out before the first record that wakes after it, and a held-back
 * count rides on the next line that passes the limiter (or on the flush
 * timer's summary line when none comes).  Summary lines carry the id of
 * the last record they stand for, so a `sloptimize watch` that resumes
 * after one does not get it twice.
 *
 * Nothing here blocks: channels queue what they need (the events socket
 * writes when its clients are writable, desktop and exec run off the loop
 * thread or in children).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <time.h>

#include "notifier/notifier.h"

static int64_t
now_ms(void)
{
	struct timespec	ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

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

/* --- channels ----------------------------------------------------------- */

/* Hand one wake (json consumed) to every channel that takes it. */
static void
emit(struct notifier *n, const struct ledger_event *ev, uint64_t off,
    const char *id, cJSON *json, const char *line, int replay)
{
	struct notifier_wake	 w;
	char			*txt;
	size_t			 i;

	if (json == NULL || (txt = cJSON_PrintUnformatted(json)) == NULL) {
		say(n, LOG_WARNING, "wake: out of memory");
		cJSON_Delete(json);
		return;
	}
	w.ev = ev;
	w.gen = n->gen;
	w.off = off;
	w.id = id;
	w.line = line;
	w.json = json;
	w.text = txt;
	w.len = strlen(txt);
	w.replay = replay;
	for (i = 0; i < n->nch; i++)
		if (!replay || (n->ch[i].flags & NOTIFIER_REPLAYS))
			n->ch[i].fn(n->ch[i].arg, &w);
	if (!replay)
		n->wakes++;
	free(txt);
	cJSON_Delete(json);
}

/* A line that stands for several records: held back, or caught up. */
static void
emit_note(struct notifier *n, const char *line, uint64_t count,
    uint64_t off)
{
	char	 id[WAKE_ID_SIZE];
	cJSON	*json = wake_note_json(line, count);

	wake_id_format(id, n->gen, off);
	if (json != NULL)
		cJSON_ReplaceItemInObject(json, "id", cJSON_CreateString(id));
	emit(n, NULL, off, id, json, line, 0);
}

/* --- catch-up and the limiter ------------------------------------------- */

static void
flush_catchup(struct notifier *n)
{
	char			 line[WAKE_LINE_SIZE];
	struct wake_catchup	*fresh;
	int			 len;

	if (n->catchup == NULL || wake_catchup_count(n->catchup) == 0)
		return;
	len = wake_catchup_format(n->catchup, line, sizeof(line));
	if (len > 0)
		emit_note(n, line, wake_catchup_count(n->catchup),
		    n->catchup_off);
	if ((fresh = wake_catchup_create()) == NULL) {
		say(n, LOG_WARNING, "wake: out of memory for the catch-up "
		    "summary; later records are not summarised");
		return;
	}
	wake_catchup_destroy(n->catchup);
	n->catchup = fresh;
}

static void	on_flush(uv_timer_t *);

static void
arm_flush(struct notifier *n)
{
	int64_t	at = wake_limiter_flush_at(n->limiter), now = now_ms();

	if (at == WAKE_NEVER || !n->timer_up)
		return;
	uv_timer_start(&n->flush_timer, on_flush,
	    (uint64_t)(at > now ? at - now : 0), 0);
}

/* Say what the limiter held back, if its window has reopened. */
static void
flush_held(struct notifier *n)
{
	char		line[WAKE_LINE_SIZE];
	uint64_t	count = 0;

	if (wake_limiter_flush(n->limiter, now_ms(), line, sizeof(line),
	    &count) > 0)
		emit_note(n, line, count, n->held_off);
}

static void
on_flush(uv_timer_t *t)
{
	struct notifier	*n = t->data;

	flush_held(n);
	arm_flush(n);
}

/* --- records ------------------------------------------------------------ */

void
notifier_record(struct notifier *n, const struct ledger_event *ev,
    uint64_t gen, uint64_t off, enum notifier_phase phase)
{
	char			 id[WAKE_ID_SIZE], line[WAKE_LINE_SIZE];
	struct wake_held	 held = { 0, 0 };
	int			 rc;

	if (!wake_is_meaningful(ev, n->cfg))
		return;
	n->gen = gen;
	wake_id_format(id, gen, off);
	if (phase == NOTIFIER_REPLAY) {
		wake_format(line, sizeof(line), ev, id, NULL, n->cfg);
		emit(n, ev, off, id, wake_json(ev, id, line, NULL), line, 1);
		return;
	}
	if (phase == NOTIFIER_CATCHUP &&
	    !wake_is_recent(ev->at_ms, now_ms(), n->cfg)) {
		if (n->catchup != NULL)
			wake_catchup_add(n->catchup, ev);
		n->catchup_off = off;
		return;
	}
	flush_catchup(n);
	rc = wake_limiter_admit(n->limiter, ev, now_ms(), &held);
	if (rc == 0) {
		n->held_off = off;
		arm_flush(n);
		return;
	}
	if (rc < 0) {
		say(n, LOG_WARNING, "wake: rate limiter out of memory; waking "
		    "anyway");
		held.count = 0;
	}
	wake_format(line, sizeof(line), ev, id, &held, n->cfg);
	emit(n, ev, off, id, wake_json(ev, id, line, &held), line, 0);
}

void
notifier_ready(struct notifier *n)
{
	flush_catchup(n);
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
	{
		char		line[WAKE_LINE_SIZE];
		uint64_t	count = 0;

		if (wake_limiter_flush(n->limiter, WAKE_NEVER - 1, line,
		    sizeof(line), &count) > 0)
			emit_note(n, line, count, n->held_off);
	}
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
    const struct wake_config *cfg, wake_log_fn *log, void *log_arg)
{
	int	rc;

	memset(n, 0, sizeof(*n));
	n->cfg = cfg;
	n->limits = *cfg;
	n->log = log;
	n->log_arg = log_arg;
	if ((n->limiter = wake_limiter_create(cfg)) == NULL ||
	    (n->catchup = wake_catchup_create()) == NULL) {
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

	if (n->limiter != NULL)
		wake_limiter_stats(n->limiter, &ws);
	st->wakes = n->wakes;
	st->held = ws.held;
	st->pending = ws.pending;
	st->catchup = n->catchup ? wake_catchup_count(n->catchup) : 0;
}

cJSON *
notifier_status_json(const struct notifier *n)
{
	struct notifier_status	 st;
	cJSON			*o = cJSON_CreateObject();

	notifier_status(n, &st);
	cJSON_AddNumberToObject(o, "wakes", (double)st.wakes);
	cJSON_AddNumberToObject(o, "heldBack", (double)st.held);
	cJSON_AddNumberToObject(o, "heldPending", (double)st.pending);
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
	wake_catchup_destroy(n->catchup);
	n->limiter = NULL;
	n->catchup = NULL;
}
