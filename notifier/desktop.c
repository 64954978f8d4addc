/*
 * desktop — desktop notifications (see desktop.h).
 *
 * Threads: everything here runs on the loop thread except the libnotify
 * calls in worker_show/worker_cleanup, which run on libuv's thread pool.
 * Accounting: every wake handed over while enabled is shown (in a bubble
 * the server took), pending (in the burst or the bubble being shown) or
 * dropped — wakes == shown + pending + dropped at every return.
 * At most one job is out at a time (d->busy) and it owns d->job and
 * d->backend until its after-work callback runs, so the two threads never
 * touch the same data at once.  The backend (NotifyNotification objects,
 * one per footprint for the in-place update) is only ever touched by
 * worker jobs.
 *
 * GDBus delivers libnotify's signals (NotificationClosed) through GLib's
 * default main context, which nobody iterates here; every job drains it,
 * or those events would pile up for the life of the daemon.
 *
 * libnotify is not linked: the first job (the probe desktop_init starts)
 * loads it on the pool (lazynotify.h), and every libnotify and glib call
 * goes through the table it gives.  A library that cannot be loaded is one
 * more way for the desktop to be unavailable: said once in the log with
 * dlerror()'s reason, in /status's `desktop`, and tried again as a missing
 * notification server is.  A daemon with desktop notifications off never
 * maps it.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>

#include "base/base.h"
#include "desktop.h"
#include "notifier/lazynotify.h"

/* The Makefile chooses the backend (NOTIFY=0 gives none). */
#if defined(HAVE_LIBNOTIFY)
#define NOTIFY_BACKEND	"libnotify"
#elif defined(HAVE_OSASCRIPT)
#define NOTIFY_BACKEND	"osascript"
#else
#define NOTIFY_BACKEND	"none"
#endif

enum item_kind { ITEM_SHOW, ITEM_PROBE, ITEM_CLEANUP };

struct desktop_item {
	enum item_kind		 kind;
	char			 fp[9];		/* the bubble kept for it:
						   a footprint, "-" for a
						   summary line, "burst" */
	char			*summary;
	char			*body;		/* libnotify's text */
	char			*text;		/* osascript's text … */
	char			*subtitle;	/* … and subtitle */
	int			 critical;
	uint64_t		 wakes;		/* how many it stands for */
	int			 replaced;	/* set by the job: in place */
	int			 status;	/* set by the job */
	char			 err[400];
};

/*
 * One footprint of the burst: what its bubble would say (the newest
 * update), and how many wakes of it the burst has seen.
 */
struct burst_ent {
	char		 fp[9];
	char		*what;		/* "hitch 141.2ms" */
	char		*guess;		/* "" if none */
	char		*evidence;	/* cleaned, cut */
	char		 status[16];
	uint64_t	 count;		/* the catalogue's ×N */
	uint64_t	 wakes;		/* in this burst */
	uint64_t	 seq;		/* first seen, for the order */
	int		 critical;
};

/* A line for whoever made the notifier; none without a log callback. */
#define desktop_log(d, prio, ...) \
	base_log((d)->log, (d)->log_arg, (prio), __VA_ARGS__)

static void
item_free(struct desktop_item *it)
{
	if (it == NULL)
		return;
	free(it->summary);
	free(it->body);
	free(it->text);
	free(it->subtitle);
	free(it);
}

static void
set_state(struct desktop *d, enum desktop_status s, const char *reason)
{
	d->status = s;
	switch (s) {
	case DESKTOP_DISABLED:
		snprintf(d->state, sizeof(d->state), "disabled%s%s",
		    reason != NULL ? ": " : "", reason != NULL ? reason : "");
		break;
	case DESKTOP_OK:
		snprintf(d->state, sizeof(d->state), "ok");
		break;
	case DESKTOP_UNAVAILABLE:
		snprintf(d->state, sizeof(d->state), "unavailable: %s",
		    reason);
		break;
	}
}

/*
 * Copy s for a notification: control characters become spaces (a body is
 * not a terminal), cut to max bytes at a UTF-8 boundary with "…".
 */
static char *
clean_copy(const char *s, size_t max)
{
	size_t n = strlen(s), i;
	char *out;
	int cut = 0;

	if (n > max) {
		n = max;
		while (n > 0 && ((unsigned char)s[n] & 0xc0) == 0x80)
			n--;
		cut = 1;
	}
	if ((out = malloc(n + 4)) == NULL)
		return NULL;
	for (i = 0; i < n; i++)
		out[i] = ((unsigned char)s[i] < 0x20 || s[i] == 0x7f) ? ' ' :
		    s[i];
	if (cut) {
		memcpy(out + n, "\xe2\x80\xa6", 3);	/* … */
		n += 3;
	}
	out[n] = '\0';
	return out;
}

static char *
xprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static char *
xprintf(const char *fmt, ...)
{
	va_list ap;
	char *s;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0 || (s = malloc((size_t)n + 1)) == NULL)
		return NULL;
	va_start(ap, fmt);
	vsnprintf(s, (size_t)n + 1, fmt, ap);
	va_end(ap);
	return s;
}

/* --- backends: start one job; it ends in desktop_job_done ------------- */

static void desktop_job_done(struct desktop *d);
static int backend_start(struct desktop *d);
static void backend_init(struct desktop *d);

#ifdef HAVE_LIBNOTIFY

struct kept {
	char			 fp[9];
	NotifyNotification	*n;
	uint64_t		 used;		/* LRU tick */
};

struct backend {
	const struct lazynotify	*nf;	/* NULL until a job loaded it */
	struct kept		 kept[DESKTOP_KEEP];
	uint64_t		 tick;
};

static void
glib_drain(const struct lazynotify *nf)
{
	while (nf->g_main_context_iteration(NULL, FALSE))
		;
}

static int
worker_probe(const struct lazynotify *nf, struct desktop_item *it)
{
	GDBusConnection *bus;
	GError *err = NULL;
	char *name = NULL, *version = NULL;

	/* Ask GIO first: its error says why there is no bus. */
	if ((bus = nf->g_bus_get_sync(G_BUS_TYPE_SESSION, NULL, &err)) ==
	    NULL) {
		snprintf(it->err, sizeof(it->err), "no D-Bus session bus: %s",
		    err != NULL ? err->message : "unknown error");
		nf->g_clear_error(&err);
		return -ENOTCONN;
	}
	nf->g_object_unref(bus);
	if (!nf->init("sloptimize")) {
		snprintf(it->err, sizeof(it->err), "notify_init failed");
		return -ENOTCONN;
	}
	if (!nf->get_server_info(&name, NULL, &version, NULL)) {
		snprintf(it->err, sizeof(it->err), "nothing owns "
		    "org.freedesktop.Notifications on the session bus");
		return -ENOTCONN;
	}
	snprintf(it->err, sizeof(it->err), "%s %s", name, version);
	nf->g_free(name);
	nf->g_free(version);
	return 0;
}

static struct kept *
kept_slot(struct backend *be, const char *fp, int *fresh)
{
	struct kept *k, *lru = &be->kept[0];
	size_t i;

	*fresh = 0;
	for (i = 0; i < DESKTOP_KEEP; i++) {
		k = &be->kept[i];
		if (k->n != NULL && strcmp(k->fp, fp) == 0)
			return k;
		if (k->n == NULL || (lru->n != NULL && k->used < lru->used))
			lru = k;
	}
	/* Forgetting one only means its next wake opens a new bubble. */
	if (lru->n != NULL)
		be->nf->g_object_unref(lru->n);
	lru->n = NULL;
	snprintf(lru->fp, sizeof(lru->fp), "%s", fp);
	*fresh = 1;
	return lru;
}

static int
worker_show(struct backend *be, struct desktop_item *it)
{
	const struct lazynotify *nf = be->nf;
	struct kept *k;
	GError *err = NULL;
	char *summary, *body;
	int fresh, rc = 0;

	if (!nf->is_initted() && !nf->init("sloptimize")) {
		snprintf(it->err, sizeof(it->err), "notify_init failed");
		return -ENOTCONN;
	}
	/* D-Bus strings must be UTF-8; bodies may carry markup. */
	summary = nf->g_utf8_make_valid(it->summary, -1);
	body = nf->g_utf8_make_valid(it->body, -1);
	{
		char *esc = nf->g_markup_escape_text(body, -1);

		nf->g_free(body);
		body = esc;
	}
	k = kept_slot(be, it->fp, &fresh);
	if (fresh)
		k->n = nf->notification_new(summary, body, NULL);
	else
		nf->notification_update(k->n, summary, body, NULL);
	it->replaced = !fresh;
	k->used = ++be->tick;
	nf->notification_set_app_name(k->n, "sloptimize");
	nf->notification_set_urgency(k->n, it->critical ?
	    NOTIFY_URGENCY_CRITICAL : NOTIFY_URGENCY_NORMAL);
	if (!nf->notification_show(k->n, &err)) {
		snprintf(it->err, sizeof(it->err), "%s",
		    err != NULL ? err->message : "show failed");
		nf->g_clear_error(&err);
		nf->g_object_unref(k->n);	/* its id means nothing now */
		k->n = NULL;
		rc = -ENOTCONN;
	}
	nf->g_free(summary);
	nf->g_free(body);
	return rc;
}

static void
worker_cleanup(struct backend *be)
{
	size_t i;

	for (i = 0; i < DESKTOP_KEEP; i++)
		if (be->kept[i].n != NULL)
			be->nf->g_object_unref(be->kept[i].n);
	if (be->nf->is_initted())
		be->nf->uninit();
}

static void
worker(uv_work_t *w)
{
	struct desktop *d = w->data;
	struct desktop_item *it = d->job;
	struct backend *be = d->backend;

	if (be->nf == NULL) {
		/* nothing was ever shown: nothing to release, and no reason
		 * to load libnotify for it */
		if (it->kind == ITEM_CLEANUP)
			return;
		if ((it->status = lazynotify_load(&be->nf, it->err,
		    sizeof(it->err))) != 0)
			return;
	}
	glib_drain(be->nf);
	switch (it->kind) {
	case ITEM_PROBE:
		it->status = worker_probe(be->nf, it);
		break;
	case ITEM_SHOW:
		it->status = worker_show(be, it);
		break;
	case ITEM_CLEANUP:
		worker_cleanup(be);
		break;
	}
	glib_drain(be->nf);
}

static void
worker_done(uv_work_t *w, int status)
{
	struct desktop *d = w->data;

	if (status == UV_ECANCELED && d->job->status == 0)
		d->job->status = -ECANCELED;
	desktop_job_done(d);
}

static void
backend_init(struct desktop *d)
{
	d->work.data = d;
	d->backend = calloc(1, sizeof(struct backend));
}

static int
backend_start(struct desktop *d)
{
	if (d->backend == NULL)
		return -ENOMEM;
	return uv_queue_work(d->loop, &d->work, worker, worker_done);
}

static void
backend_free(struct desktop *d)
{
	free(d->backend);
	d->backend = NULL;
}

#elif defined(HAVE_OSASCRIPT)

/*
 * An AppleScript string literal: backslash and double quote escaped;
 * control characters are already spaces (clean_copy).  The script goes to
 * osascript as one argv entry, so no shell quoting is involved.
 */
static void
as_quote(char *out, size_t size, const char *s)
{
	size_t k = 0;

	out[k++] = '"';
	for (; *s != '\0' && k + 3 < size; s++) {
		if (*s == '"' || *s == '\\')
			out[k++] = '\\';
		out[k++] = *s;
	}
	/* never end inside a UTF-8 sequence */
	while (k > 1 && ((unsigned char)out[k - 1] & 0xc0) == 0x80)
		k--;
	if (k > 1 && (unsigned char)out[k - 1] >= 0xc0)
		k--;
	out[k++] = '"';
	out[k] = '\0';
}

static void
osa_closed(uv_handle_t *h)
{
	desktop_job_done(h->data);
}

static void
osa_exited(uv_process_t *p, int64_t status, int sig)
{
	struct desktop *d = p->data;

	if (sig != 0 || status != 0) {
		d->job->status = -EIO;
		snprintf(d->job->err, sizeof(d->job->err), "osascript %s %d",
		    sig != 0 ? "killed by signal" : "exited with status",
		    sig != 0 ? sig : (int)status);
	}
	uv_close((uv_handle_t *)p, osa_closed);
}

static void
backend_init(struct desktop *d)
{
	d->proc.data = d;
}

static int
backend_start(struct desktop *d)
{
	struct desktop_item *it = d->job;
	uv_process_options_t opt;
	uv_stdio_container_t stdio[3];
	char text[1024], title[512], sub[256], script[2048];
	char *args[4];
	int rc;

	if (it->kind != ITEM_SHOW) {
		/* nothing to probe or release: finish on the next turn */
		return UV_ENOSYS;
	}
	as_quote(text, sizeof(text), it->text);
	as_quote(title, sizeof(title), it->summary);
	as_quote(sub, sizeof(sub), it->subtitle != NULL ? it->subtitle : "");
	snprintf(script, sizeof(script), "display notification %s with "
	    "title %s subtitle %s", text, title, sub);
	args[0] = "osascript";
	args[1] = "-e";
	args[2] = script;
	args[3] = NULL;
	memset(&opt, 0, sizeof(opt));
	memset(stdio, 0, sizeof(stdio));
	stdio[0].flags = stdio[1].flags = stdio[2].flags = UV_IGNORE;
	opt.file = args[0];
	opt.args = args;
	opt.stdio = stdio;
	opt.stdio_count = 3;
	opt.exit_cb = osa_exited;
	if ((rc = uv_spawn(d->loop, &d->proc, &opt)) < 0) {
		it->status = -ENOTCONN;
		snprintf(it->err, sizeof(it->err), "cannot run osascript: %s",
		    uv_strerror(rc));
		uv_close((uv_handle_t *)&d->proc, osa_closed);
	}
	return 0;
}

static void
backend_free(struct desktop *d)
{
	(void)d;
}

#else	/* built with NOTIFY=0: desktop_init never starts a job */

static void desktop_job_done(struct desktop *d) __attribute__((unused));

static void
backend_init(struct desktop *d)
{
	(void)d;
}

static int
backend_start(struct desktop *d)
{
	(void)d;
	return -ENOTSUP;
}

static void
backend_free(struct desktop *d)
{
	(void)d;
}

#endif

/* --- the burst, on the loop thread ---------------------------------------- */

/*
 * A burst is a run of wakes without a quiet spell of twice desktop_ms
 * between them.  A wake that comes while the desktop may show one (the rate
 * limit's wait is over, no bubble is being shown) is shown at once; wakes
 * that come during the wait are held together, and when the wait ends one
 * bubble says them: the footprint's own bubble if the burst so far is one
 * footprint, else the "burst" bubble, listing every footprint the burst
 * has seen (most severe first), replaced in place as the burst goes on.  So nothing queues behind
 * the limit: twelve seconds into a burst of six causes, all six have been
 * on screen since the first wait ended.
 */

static void desktop_dispatch(struct desktop *d);
static void desktop_close_step(struct desktop *d);

static void
timer_fired(uv_timer_t *t)
{
	desktop_dispatch(t->data);
}

static void
burst_clear(struct desktop *d)
{
	size_t i;

	for (i = 0; i < d->nburst; i++) {
		free(d->burst[i].what);
		free(d->burst[i].guess);
		free(d->burst[i].evidence);
	}
	d->nburst = 0;
	d->burst_wakes = 0;
	d->burst_others = 0;
	d->burst_notes = 0;
	free(d->burst_note);
	d->burst_note = NULL;
}

/* Hand it to the backend; if it cannot even start, it ends here (the
 * caller sees d->busy still 0). */
static void
desktop_job_start(struct desktop *d, struct desktop_item *it)
{
	int rc;

	d->busy = 1;
	d->job = it;
	if ((rc = backend_start(d)) < 0) {
		d->busy = 0;
		d->job = NULL;
		if (it->kind == ITEM_SHOW) {
			d->dropped += it->wakes;
			d->pending -= it->wakes;
		}
		item_free(it);
	}
}

static int
ent_cmp(const void *pa, const void *pb)
{
	const struct burst_ent *a = *(const struct burst_ent *const *)pa;
	const struct burst_ent *b = *(const struct burst_ent *const *)pb;

	if (a->critical != b->critical)
		return a->critical ? -1 : 1;
	if (a->wakes != b->wakes)
		return a->wakes > b->wakes ? -1 : 1;
	return a->seq < b->seq ? -1 : 1;
}

/* The bubble of one footprint: summary, evidence, fp ×N status. */
static struct desktop_item *
item_single(const struct burst_ent *e, uint64_t wakes)
{
	struct desktop_item *it;
	char *tail, *s;

	if ((it = calloc(1, sizeof(*it))) == NULL)
		return NULL;
	it->kind = ITEM_SHOW;
	snprintf(it->fp, sizeof(it->fp), "%s", e->fp);
	it->critical = e->critical;
	if (e->guess[0] != '\0')
		s = xprintf("sloptimize: %s (%s)", e->what, e->guess);
	else
		s = xprintf("sloptimize: %s", e->what);
	it->summary = s != NULL ? clean_copy(s, 200) : NULL;
	free(s);
	/* "+N more": the updates this bubble stands for beyond its own */
	if (wakes > 1)
		tail = xprintf("fp=%s \xc3\x97%" PRIu64 " status=%s +%" PRIu64
		    " more", e->fp, e->count, e->status, wakes - 1);
	else
		tail = xprintf("fp=%s \xc3\x97%" PRIu64 " status=%s", e->fp,
		    e->count, e->status);
	if (tail != NULL) {
		it->body = xprintf("%s%s%s", e->evidence,
		    e->evidence[0] != '\0' ? "\n" : "", tail);
		it->text = xprintf("%s", e->evidence);
		it->subtitle = tail;
	}
	it->wakes = wakes;
	if (it->summary == NULL || it->body == NULL || it->text == NULL) {
		item_free(it);
		return NULL;
	}
	return it;
}

/* A summary line's bubble (a held-back or catch-up line). */
static struct desktop_item *
item_note(const char *line, uint64_t notes, uint64_t wakes)
{
	struct desktop_item *it;

	if ((it = calloc(1, sizeof(*it))) == NULL)
		return NULL;
	it->kind = ITEM_SHOW;
	strcpy(it->fp, "-");
	it->summary = xprintf("sloptimize");
	if (notes > 1)
		it->body = xprintf("%s (+%" PRIu64 " more)", line, notes - 1);
	else
		it->body = xprintf("%s", line);
	it->text = xprintf("%s", it->body != NULL ? it->body : "");
	it->subtitle = xprintf("%s", "");
	it->wakes = wakes;
	if (it->summary == NULL || it->body == NULL || it->text == NULL ||
	    it->subtitle == NULL) {
		item_free(it);
		return NULL;
	}
	return it;
}

/* The burst bubble: every footprint of the burst, most severe first. */
static struct desktop_item *
item_burst(struct desktop *d, uint64_t wakes)
{
	struct desktop_item *it;
	struct burst_ent **order;
	size_t i, shown;
	char *body = NULL, *text = NULL, *line, *nb, *nt;
	int critical = 0;

	if ((it = calloc(1, sizeof(*it))) == NULL)
		return NULL;
	if ((order = calloc(d->nburst + 1, sizeof(*order))) == NULL) {
		free(it);
		return NULL;
	}
	for (i = 0; i < d->nburst; i++) {
		order[i] = &d->burst[i];
		critical |= d->burst[i].critical;
	}
	qsort(order, d->nburst, sizeof(*order), ent_cmp);
	it->kind = ITEM_SHOW;
	strcpy(it->fp, "burst");
	it->critical = critical;
	it->summary = xprintf("sloptimize: %" PRIu64 " wake%s from %zu "
	    "cause%s", d->burst_wakes, d->burst_wakes == 1 ? "" : "s",
	    d->nburst, d->nburst == 1 ? "" : "s");
	shown = d->nburst < DESKTOP_BURST_LINES ? d->nburst :
	    DESKTOP_BURST_LINES;
	body = xprintf("%s", "");
	text = xprintf("%s", "");
	for (i = 0; i < d->nburst + 1 && body != NULL && text != NULL; i++) {
		const struct burst_ent *e = i < d->nburst ? order[i] : NULL;

		if (e != NULL && i < shown)
			line = xprintf("%s %s fp=%s \xc3\x97%" PRIu64 " %s",
			    e->what, e->guess[0] != '\0' ? e->guess :
			    "unclassified", e->fp, e->count, e->status);
		else if (e != NULL)
			continue;
		else if (d->nburst > shown && d->burst_others > 0)
			line = xprintf("+%zu more causes, and %" PRIu64 " wakes "
			    "of others", d->nburst - shown, d->burst_others);
		else if (d->nburst > shown)
			line = xprintf("+%zu more cause%s", d->nburst - shown,
			    d->nburst - shown == 1 ? "" : "s");
		else
			break;
		if (line == NULL)
			break;
		if (e != NULL && e->wakes > 1) {
			char *l2 = xprintf("%s (%" PRIu64 " wakes)", line,
			    e->wakes);

			free(line);
			line = l2;
			if (line == NULL)
				break;
		}
		nb = xprintf("%s%s%s", body, body[0] != '\0' ? "\n" : "", line);
		nt = xprintf("%s%s%s", text, text[0] != '\0' ? "; " : "", line);
		free(line);
		free(body);
		free(text);
		body = nb;
		text = nt;
	}
	if (body != NULL && d->burst_notes > 0 && d->burst_note != NULL) {
		nb = xprintf("%s\n%s", body, d->burst_note);
		free(body);
		body = nb;
	}
	it->body = body;
	it->text = text;
	it->subtitle = xprintf("%s", "");
	it->wakes = wakes;
	free(order);
	if (it->summary == NULL || it->body == NULL || it->text == NULL ||
	    it->subtitle == NULL) {
		item_free(it);
		return NULL;
	}
	return it;
}

/* Show what the burst has that no bubble said yet, if the limit allows. */
static void
desktop_dispatch(struct desktop *d)
{
	struct desktop_item *it;
	uint64_t now, wakes;

	if (d->busy || d->closing || d->unshown == 0)
		return;
	now = uv_now(d->loop);
	if (now < d->next_ms) {
		uv_timer_start(&d->timer, timer_fired, d->next_ms - now, 0);
		return;
	}
	wakes = d->unshown;
	if (d->nburst == 1 && d->burst_notes == 0)
		it = item_single(&d->burst[0], wakes);
	else if (d->nburst == 0)
		it = item_note(d->burst_note != NULL ? d->burst_note : "",
		    d->burst_notes, wakes);
	else
		it = item_burst(d, wakes);
	d->unshown = 0;
	if (it == NULL) {
		d->dropped += wakes;
		d->pending -= wakes;
		return;
	}
	d->next_ms = now + d->interval_ms;
	desktop_job_start(d, it);
}

/* Every wake not shown yet is dropped (no server, or shutting down). */
static void
drop_pending(struct desktop *d)
{
	d->dropped += d->unshown;
	d->pending -= d->unshown;
	d->unshown = 0;
	burst_clear(d);
}

static void
desktop_job_done(struct desktop *d)
{
	struct desktop_item *it = d->job;
	enum desktop_status was = d->status;
	int status = it->status;

	d->busy = 0;
	d->job = NULL;
	if (it->kind == ITEM_CLEANUP) {
		item_free(it);
		desktop_close_step(d);
		return;
	}
	if (it->kind == ITEM_SHOW)
		d->pending -= it->wakes;
	if (status < 0) {
		if (it->kind == ITEM_SHOW) {
			d->failed++;
			d->dropped += it->wakes;
		}
		/*
		 * Said once: every later failure while unavailable is only
		 * counted, or a desktop without a notification server would
		 * get one log line per wake.
		 */
		if (d->status != DESKTOP_UNAVAILABLE && status == -ELIBACC)
			desktop_log(d, LOG_WARNING, "desktop notifications off: "
			    "%s; tried again at most every %d s", it->err,
			    DESKTOP_RETRY_MS / 1000);
		else if (d->status != DESKTOP_UNAVAILABLE)
			desktop_log(d, LOG_WARNING, "desktop: no notification "
			    "server (%s); notifications off, retried at most "
			    "every %d s", it->err, DESKTOP_RETRY_MS / 1000);
		set_state(d, DESKTOP_UNAVAILABLE, it->err);
		d->retry_ms = uv_now(d->loop) + DESKTOP_RETRY_MS;
		drop_pending(d);
	} else {
		if (d->status == DESKTOP_UNAVAILABLE)
			desktop_log(d, LOG_INFO, "desktop: notification server "
			    "is back");
		else if (it->kind == ITEM_PROBE)
			desktop_log(d, LOG_DEBUG, "desktop: notification server "
			    "%s", it->err);
		set_state(d, DESKTOP_OK, NULL);
		if (it->kind == ITEM_SHOW) {
			d->sent++;
			d->replaced += it->replaced != 0;
			d->shown += it->wakes;
		}
	}
	if (it->kind == ITEM_SHOW && d->shown_cb != NULL)
		d->shown_cb(d, status);
	if ((it->kind == ITEM_PROBE || d->status != was) && d->state_cb != NULL)
		d->state_cb(d);
	item_free(it);
	if (d->closing)
		desktop_close_step(d);
	else
		desktop_dispatch(d);
}

int
desktop_init(struct desktop *d, uv_loop_t *loop,
    const struct wake_config *cfg, base_log_fn *log, void *log_arg)
{
	struct desktop_item *probe;
	int rc;

	memset(d, 0, sizeof(*d));
	d->loop = loop;
	d->log = log;
	d->log_arg = log_arg;
	d->interval_ms = cfg->desktop_ms > 0 ? (uint64_t)cfg->desktop_ms : 0;
	if ((rc = uv_timer_init(loop, &d->timer)) < 0)
		return rc;
	d->timer.data = d;
	if (!cfg->desktop) {
		set_state(d, DESKTOP_DISABLED, NULL);
		return 0;
	}
	if (strcmp(desktop_backend(), "none") == 0) {
		desktop_log(d, LOG_WARNING, "desktop: this build has no "
		    "notification backend (built with NOTIFY=0); wakes go to "
		    "the log and the watchers only");
		set_state(d, DESKTOP_DISABLED, "built without notifications");
		return 0;
	}
	set_state(d, DESKTOP_OK, NULL);
	backend_init(d);
	if ((probe = calloc(1, sizeof(*probe))) != NULL) {
		probe->kind = ITEM_PROBE;
		desktop_job_start(d, probe);
	}
	return 0;
}

/* Find or add the burst entry of fp; NULL on allocation failure. */
static struct burst_ent *
burst_ent(struct desktop *d, const char *fp)
{
	struct burst_ent *e;
	size_t i;

	for (i = 0; i < d->nburst; i++)
		if (strcmp(d->burst[i].fp, fp) == 0)
			return &d->burst[i];
	if (d->nburst >= DESKTOP_BURST_KEEP)
		return NULL;
	if (d->nburst == d->capburst) {
		size_t cap = d->capburst ? d->capburst * 2 : 8;

		if ((e = realloc(d->burst, cap * sizeof(*e))) == NULL)
			return NULL;
		d->burst = e;
		d->capburst = cap;
	}
	e = &d->burst[d->nburst++];
	memset(e, 0, sizeof(*e));
	snprintf(e->fp, sizeof(e->fp), "%s", fp);
	e->seq = d->seq++;
	return e;
}

/* The newest update of a footprint, into its burst entry. */
static int
burst_add(struct desktop *d, const struct ledger_event *ev)
{
	struct burst_ent *e;
	char what[128], *w, *g, *ev_text;

	e = burst_ent(d, ev->id[0] != '\0' ? ev->id : "-");
	if (e == NULL && d->nburst >= DESKTOP_BURST_KEEP) {
		d->burst_others++;	/* said as "+N more" in the bubble */
		return 0;
	}
	if (e == NULL)
		return -ENOMEM;
	wake_what_format(what, sizeof(what), ev);
	w = clean_copy(what, 120);
	g = clean_copy(ev->guess != NULL ? ev->guess : "", 60);
	ev_text = clean_copy(ev->evidence != NULL ? ev->evidence : "",
	    DESKTOP_EVIDENCE_MAX);
	if (w == NULL || g == NULL || ev_text == NULL) {
		free(w);
		free(g);
		free(ev_text);
		if (e->what == NULL)		/* just added: take it back */
			d->nburst--;
		return -ENOMEM;
	}
	free(e->what);
	free(e->guess);
	free(e->evidence);
	e->what = w;
	e->guess = g;
	e->evidence = ev_text;
	snprintf(e->status, sizeof(e->status), "%s", ev->status != NULL &&
	    ev->status[0] != '\0' ? ev->status : "-");
	e->count = ev->count;
	e->critical = ev->status != NULL &&
	    strcmp(ev->status, "regressed") == 0;
	e->wakes++;
	return 0;
}

int
desktop_notify(struct desktop *d, const struct ledger_event *ev,
    const char *line)
{
	int rc;

	if (d->status == DESKTOP_DISABLED)
		return 0;
	d->wakes++;
	if (d->closing) {
		d->dropped++;
		return -ESHUTDOWN;
	}
	if (d->status == DESKTOP_UNAVAILABLE && uv_now(d->loop) < d->retry_ms) {
		d->dropped++;
		return -ENOTCONN;
	}
	/* after a quiet spell (twice desktop_ms without a wake) a new burst
	 * starts, once everything of the last one has been on screen */
	if (d->unshown == 0 && (d->wakes == 1 ||
	    uv_now(d->loop) - d->last_wake_ms >= 2 * d->interval_ms))
		burst_clear(d);
	d->last_wake_ms = uv_now(d->loop);
	if (ev != NULL)
		rc = burst_add(d, ev);
	else {
		char *copy = clean_copy(line != NULL ? line : "",
		    WAKE_LINE_MAX);

		rc = copy != NULL ? 0 : -ENOMEM;
		if (copy != NULL) {
			free(d->burst_note);
			d->burst_note = copy;
			d->burst_notes++;
		}
	}
	if (rc < 0) {
		d->dropped++;
		return rc;
	}
	d->burst_wakes++;
	d->unshown++;
	d->pending++;
	desktop_dispatch(d);
	return 0;
}

const char *
desktop_backend(void)
{
	return NOTIFY_BACKEND;
}

const char *
desktop_state(const struct desktop *d)
{
	return d->state;
}

void
desktop_stats(const struct desktop *d, struct desktop_stats *st)
{
	st->wakes = d->wakes;
	st->shown = d->shown;
	st->sent = d->sent;
	st->replaced = d->replaced;
	st->pending = d->pending;
	st->dropped = d->dropped;
	st->failed = d->failed;
}

cJSON *
desktop_stats_json(const struct desktop *d)
{
	struct desktop_stats st;
	cJSON *o = cJSON_CreateObject();

	desktop_stats(d, &st);
	cJSON_AddNumberToObject(o, "wakes", (double)st.wakes);
	cJSON_AddNumberToObject(o, "shown", (double)st.shown);
	cJSON_AddNumberToObject(o, "sent", (double)st.sent);
	cJSON_AddNumberToObject(o, "replaced", (double)st.replaced);
	cJSON_AddNumberToObject(o, "pending", (double)st.pending);
	cJSON_AddNumberToObject(o, "dropped", (double)st.dropped);
	cJSON_AddNumberToObject(o, "failed", (double)st.failed);
	return o;
}

static void
timer_closed(uv_handle_t *h)
{
	struct desktop *d = h->data;

	backend_free(d);
	burst_clear(d);
	free(d->burst);
	d->burst = NULL;
	d->capburst = 0;
	if (d->close_cb != NULL)
		d->close_cb(d);
}

/*
 * Called on desktop_close and after every job while closing: wait for the
 * job out, release libnotify in a last job, then close the timer.
 */
static void
desktop_close_step(struct desktop *d)
{
	struct desktop_item *it;

	if (d->busy || uv_is_closing((uv_handle_t *)&d->timer))
		return;
	if (d->backend != NULL && d->closing == 1) {
		d->closing = 2;
		if ((it = calloc(1, sizeof(*it))) != NULL) {
			it->kind = ITEM_CLEANUP;
			desktop_job_start(d, it);
			if (d->busy)
				return;
		}
	}
	uv_close((uv_handle_t *)&d->timer, timer_closed);
}

void
desktop_close(struct desktop *d, desktop_close_cb *cb)
{
	uint64_t before = d->dropped;

	if (d->closing)
		return;
	d->closing = 1;
	d->close_cb = cb;
	uv_timer_stop(&d->timer);
	drop_pending(d);
	if (d->dropped > before)
		desktop_log(d, LOG_INFO, "desktop: %" PRIu64 " pending "
		    "notification%s not shown (shutting down)",
		    d->dropped - before, d->dropped - before == 1 ? "" : "s");
	desktop_close_step(d);
}
