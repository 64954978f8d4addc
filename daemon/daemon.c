/*
 * daemon — from a line in perf.jsonl to a wake line (see daemon.h).
 *
 * The tailer tells each line's phase, and the notifier decides what it
 * means for the wake (notifier/notifier.h): SEED lines (before the saved
 * cursor: delivered by an earlier run) that the earlier run said are
 * only folded — a `sloptimize watch` that outlived a kill -9 and resumes
 * from its last id gets their wakes made again from the file, and the
 * events socket's ring starts after them (daemon/server.h); those it had
 * not said yet (held back when it died) are said now; CATCHUP lines wake
 * when recent and are otherwise summed up; LIVE lines wake subject to the
 * rate limits.  The lines of a file that replaced perf.jsonl while running are
 * CATCHUP too, so an old history is summed up, not woken again.  This
 * file only feeds the notifier records, wires its channels, and keeps
 * `wakes` — the id of the last wake said — in a slot of the state
 * directory.  The catalogue, the fix lines, the generation and the
 * checkpoint are the fold's (fold.h): this file hands it the tailers'
 * lines and passes on what it folded.
 *
 * fixes.jsonl is tailed first, then perf.jsonl, so wake lines carry the
 * status that the fixes decide.
 */
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/base.h"
#include "daemon/daemon.h"
#include "daemon/log.h"
#include "daemon/sdnotify.h"
#include "ledger/footprint.h"
#include "project/statedir.h"

uint64_t
daemon_cursor(struct daemon *d)
{
	struct tailer_status	st;

	if (!d->perf_started)
		return 0;
	tailer_status(&d->perf, &st);
	return st.cursor;
}

void
daemon_listen(const struct daemon *d, char *out, size_t cap)
{
	snprintf(out, cap, strchr(d->cfg.listen_host, ':') ? "[%s]:%d" :
	    "%s:%d", d->cfg.listen_host, d->server.port);
}

/* --- the notifier's channels ----------------------------------------- */

/* The events socket: every wake is kept in its ring and sent; a wake gets
 * here only once its id is in `wakes` (NOTIFIER_GATED). */
static void
chan_socket(void *arg, const struct notifier_wake *w)
{
	struct daemon	*d = arg;

	events_wake(&d->server.events, w->gen, w->off, w->text, w->len);
}

static void
chan_log(void *arg, const struct notifier_wake *w)
{
	(void)arg;
	log_info("%s", w->line);
}

static void
chan_desktop(void *arg, const struct notifier_wake *w)
{
	struct daemon	*d = arg;

	desktop_notify(&d->desktop, w->ev, w->line);
}

static void
chan_exec(void *arg, const struct notifier_wake *w)
{
	struct daemon	*d = arg;

	exec_run(&d->exec, w->line, w->json);
}

/* --- wakes: the id of the last wake said ------------------------------ */

/*
 * <state>/wakes, a slot of the state directory (project/statedir.h):
 * "v 1" and "said <gen>:<off>" ("-": nothing said yet; "?": unknown, a
 * state directory from before the file).  Written before a wake reaches
 * the events socket (notifier/notifier.h), so after a kill -9 the next
 * start knows which records watchers may have seen.  One pwrite, on the
 * loop thread: it is on the path of every wake.
 */
static int
wakes_save(void *arg, uint64_t gen, uint64_t off)
{
	struct daemon	*d = arg;
	char		 text[STATEDIR_SLOT_TEXT_MAX + 1];

	snprintf(text, sizeof(text), "v 1\nsaid %llu:%llu\n",
	    (unsigned long long)gen, (unsigned long long)off);
	return statedir_slot_write(d->wakes_fd, text);
}

/*
 * At start: tell the notifier what the last run said.  No file and no
 * cursor: a fresh state directory, nothing said yet.  No file but a
 * cursor: a state directory from before the file, so the notifier keeps
 * the old rule (what is before the cursor was said) until a wake is
 * stored.  A torn or foreign record is the same unknown, said in the log.
 */
static int
wakes_load(struct daemon *d)
{
	char		 text[STATEDIR_SLOT_TEXT_MAX + 16], cpath[PATH_MAX + 16];
	const char	*initial = "v 1\nsaid -\n", *said;
	struct stat	 st;
	unsigned long long g, off;
	int		 rc;

	rc = statedir_slot_read(d->wakes_path, text, sizeof(text));
	if (rc == -ENOENT) {
		snprintf(cpath, sizeof(cpath), "%s/cursor", d->state_dir);
		if (stat(cpath, &st) == 0) {
			log_info("wakes: none yet (state from an older "
			    "version): records before the cursor count as "
			    "said");
			initial = "v 1\nsaid ?\n";
		} else
			notifier_resume(&d->notifier, 0, 0, 0);
	} else if (rc != 0)
		log_warnx("%s: %s; records before the cursor count as said",
		    d->wakes_path, rc == -EBADMSG ? "torn or not a slot "
		    "(a power cut?)" : strerror(-rc));
	else if ((said = strstr(text, "said ")) == NULL)
		log_warnx("%s: no wake id; records before the cursor count "
		    "as said", d->wakes_path);
	else if (strncmp(said + 5, "-\n", 2) == 0)
		notifier_resume(&d->notifier, 0, 0, 0);
	else if (sscanf(said + 5, "%llu:%llu", &g, &off) == 2)
		notifier_resume(&d->notifier, 1, g, off);
	/* "?": unknown, the old rule */
	if ((rc = statedir_slot_open(d->wakes_path, initial, 0644,
	    &d->wakes_fd)) != 0) {
		log_warnx("cannot open %s: %s; wakes go out unstored",
		    d->wakes_path, strerror(-rc));
		return rc;
	}
	return 0;
}

/* --- the tailers' callbacks ------------------------------------------- */

/*
 * Tell the sink (if any) that a stream is folded up to `end`, and which
 * descriptor holds it: the one the tailer read the line from.  The tailer
 * has no accessor for it; its struct is public so callers can embed it,
 * and during its callbacks `fd` is the file being read (a renamed-away
 * file while it drains, the new one after a reset).
 */
static void
sink_note(struct daemon *d, enum sink_stream s, const struct tailer *t,
    uint64_t gen, uint64_t end)
{
	if (d->sink != NULL)
		sink_advance(d->sink, s, gen, end, t->fd);
}

static void
record_json(struct daemon *d, const struct ledger_event *ev, uint64_t off)
{
	char	 id[WAKE_ID_SIZE], *txt;
	cJSON	*o = cJSON_CreateObject(), *r;

	wake_id_format(id, d->fold.generation, off);
	cJSON_AddStringToObject(o, "type", "record");
	cJSON_AddStringToObject(o, "id", id);
	r = wake_json(ev, id, "", NULL);
	/* the record part of a wake is the shape the panel wants */
	cJSON_AddItemToObject(o, "record",
	    cJSON_DetachItemFromObject(r, "record"));
	cJSON_Delete(r);
	if ((txt = cJSON_PrintUnformatted(o)) != NULL)
		events_broadcast(&d->server.events, txt, strlen(txt));
	free(txt);
	cJSON_Delete(o);
}

static void
perf_line(void *arg, const char *line, size_t len, uint64_t off,
    enum tail_phase phase)
{
	struct daemon		*d = arg;
	struct ledger_event	 ev;
	uint64_t		 gen = d->fold.generation;
	int			 rc;

	rc = fold_perf_line(&d->fold, line, len, off, &ev);
	/* the sink re-reads the bytes and skips what the fold skips */
	sink_note(d, SINK_PERF, &d->perf, gen, off + len + 1);
	if (rc < 0)
		return;
	if (rc == 1) {
		if (phase == TAIL_LIVE && len > 0)
			log_warnx("perf.jsonl: skipped the line at offset %llu "
			    "(not a valid record; see the status endpoint)",
			    (unsigned long long)off);
		return;
	}
	if (ev.incident && phase == TAIL_LIVE && events_count(&d->server.events) > 0)
		record_json(d, &ev, off);
	/* a file that replaced perf.jsonl: what it already held is history */
	phase = fold_phase(&d->fold, off, len, phase);
	/* profile.json: a live heartbeat now; a catch-up's last one at its
	 * end (docs/budgets.md) */
	if (strcmp(ev.type, "heartbeat") == 0)
		profile_writer_note(&d->profile, line, len, gen, off,
		    phase == TAIL_LIVE);
	/*
	 * Said by an earlier run: nothing goes out now, and a resuming watch
	 * that asks for it gets its wake made again from the file
	 * (server.h), so the ring starts after it.
	 */
	if (notifier_record(&d->notifier, &ev, gen, off,
	    phase == TAIL_SEED ? NOTIFIER_SEED : phase == TAIL_CATCHUP ?
	    NOTIFIER_CATCHUP : NOTIFIER_LIVE) == 1)
		events_ring_reset(&d->server.events, gen, off + 1);
	if (fold_regen_done(&d->fold, off, len)) {
		notifier_ready(&d->notifier);
		profile_writer_flush(&d->profile);
	}
}

static void
perf_long(void *arg, uint64_t off, uint64_t len, enum tail_phase phase)
{
	struct daemon	*d = arg;

	fold_perf_long(&d->fold, off, len);
	sink_note(d, SINK_PERF, &d->perf, d->fold.generation, off + len + 1);
	if (phase == TAIL_LIVE)
		log_warnx("perf.jsonl: skipped a %llu-byte line at offset %llu "
		    "(over 1 MiB)", (unsigned long long)len,
		    (unsigned long long)off);
}

static void
perf_reset(void *arg, uint64_t generation, const char *why)
{
	struct daemon	*d = arg;
	uint64_t	 size = 0;

	log_info("perf.jsonl: generation %llu: %s",
	    (unsigned long long)generation, why);
	/*
	 * What the old generation still held back is said first.  Once
	 * running, a new generation's content up to its size now was not
	 * appended live: its old records are summed up (the restart rule),
	 * its recent ones wake.
	 */
	notifier_generation(&d->notifier, d->fold.ready ? "already in the "
	    "new file" : NULL);
	if (d->fold.ready && d->perf_started) {
		struct tailer_status	st;

		tailer_status(&d->perf, &st);
		size = st.size;
	}
	sink_note(d, SINK_PERF, &d->perf, generation, 0);
	events_ring_reset(&d->server.events, generation, 0);
	fold_perf_reset(&d->fold, generation, size);
}

static void
on_perf_ready(void *arg)
{
	struct daemon		*d = arg;
	struct ledger_counts	 c;

	if (fold_ready(&d->fold))	/* the sink learns what the checkpoint
					   holds */
		sink_note(d, SINK_PERF, &d->perf, d->fold.generation,
		    daemon_cursor(d));
	notifier_ready(&d->notifier);
	profile_writer_flush(&d->profile);
	events_ready(&d->server.events);
	ledger_counts(d->fold.ledger, &c);
	log_info("ready: %llu records folded into %llu issues (generation "
	    "%llu), serving on %s:%d", (unsigned long long)c.folded,
	    (unsigned long long)c.rows, (unsigned long long)d->fold.generation,
	    d->cfg.listen_host, d->server.port);
	sdnotify_send("READY=1\nSTATUS=watching perf.jsonl");
}

static void
fix_line(void *arg, const char *line, size_t len, uint64_t off,
    enum tail_phase phase)
{
	struct daemon	*d = arg;

	(void)phase;
	fold_fix_line(&d->fold, line, len, off);
	sink_note(d, SINK_FIXES, &d->fixes_t, d->fixes_generation,
	    off + len + 1);
}

static void
fix_long(void *arg, uint64_t off, uint64_t len, enum tail_phase phase)
{
	struct daemon	*d = arg;

	(void)phase;
	fold_fix_long(&d->fold, off, len);
	sink_note(d, SINK_FIXES, &d->fixes_t, d->fixes_generation,
	    off + len + 1);
}

static void
fix_reset(void *arg, uint64_t generation, const char *why)
{
	struct daemon	*d = arg;

	if (generation > 1)
		log_info("fixes.jsonl: %s", why);
	d->fixes_generation = generation;
	sink_note(d, SINK_FIXES, &d->fixes_t, generation, 0);
	fold_fix_reset(&d->fold, generation);
}

static void
on_fixes_ready(void *arg)
{
	struct daemon		*d = arg;
	char			 cursor[PATH_MAX + 16], path[PATH_MAX + 32];
	struct tailer_cbs	 cbs = { perf_line, perf_long, perf_reset,
				    on_perf_ready, d, log_prio };
	int			 rc;

	if (d->fixes_seen++ || d->stopping)
		return;
	fold_fixes_ready(&d->fold);
	snprintf(path, sizeof(path), "%s/.sloptimize/perf.jsonl",
	    d->cfg.project);
	snprintf(cursor, sizeof(cursor), "%s/cursor", d->state_dir);
	if ((rc = tailer_init(&d->perf, d->loop, path, cursor, d->cfg.poll,
	    &cbs)) != 0) {
		log_warnx("cannot tail %s: %s", path, strerror(-rc));
		daemon_stop(d, "no ledger to tail");
		d->exit_code = 1;
		return;
	}
	d->perf.data = d;
	d->perf.rotate_wait_ms = (uint64_t)d->cfg.rotate_wait_ms;
	d->perf_started = 1;
	/* from the checkpoint's offset, if it holds */
	fold_perf_start(&d->fold, &d->perf);
	if ((rc = tailer_start(&d->perf)) != 0) {
		log_warnx("cannot tail %s: %s", path, strerror(-rc));
		daemon_stop(d, "no ledger to tail");
		d->exit_code = 1;
		return;
	}
	/* resuming from a saved cursor keeps its generation: no reset() */
	{
		struct tailer_status	st;

		tailer_status(&d->perf, &st);
		d->fold.generation = st.generation;
	}
	/* a fold resumed at a checkpoint's offset: a resuming watch gets the
	 * wakes before it re-made from the file */
	events_ring_reset(&d->server.events, d->fold.generation,
	    fold_ring_from(&d->fold));
}

/* --- signals, watchdog, daemon.json ----------------------------------- */

/* <state>/daemon.json: how `sloptimize watch --project` finds us. */
static int
write_daemon_json(struct daemon *d)
{
	char	 path[PATH_MAX + 32], listen[300], url[320], iso[32], *txt;
	cJSON	*o = cJSON_CreateObject();
	int	 rc;

	daemon_listen(d, listen, sizeof(listen));
	snprintf(url, sizeof(url), "ws://%s", listen);
	cJSON_AddNumberToObject(o, "pid", (double)getpid());
	cJSON_AddStringToObject(o, "listen", listen);
	cJSON_AddStringToObject(o, "url", url);
	cJSON_AddStringToObject(o, "project", d->cfg.project);
	cJSON_AddStringToObject(o, "version", SLOPTIMIZE_VERSION);
	iso_format_ms(base_now_ms(), iso);
	cJSON_AddStringToObject(o, "startedAt", iso);
	txt = cJSON_Print(o);
	cJSON_Delete(o);
	if (txt == NULL)
		return -ENOMEM;
	if ((rc = statedir_path(d->state_dir, "daemon.json", path,
	    sizeof(path))) == 0)
		rc = statedir_write(path, txt, strlen(txt), 0644);
	if (rc != 0)
		log_warnx("cannot write %s/daemon.json: %s", d->state_dir,
		    strerror(-rc));
	free(txt);
	return rc;
}

/* The wake lines carry the fix loop's level in effect. */
static void
loop_apply(struct daemon *d)
{
	d->cfg.wake.loop = config_loop_level(&d->cfg, d->loop_settings, NULL);
}

/* The API read settings.json, or a PUT changed it. */
static void
on_loop_set(void *arg, const char *level)
{
	struct daemon	*d = arg;

	snprintf(d->loop_settings, sizeof(d->loop_settings), "%s", level);
	loop_apply(d);
}

/* GET /issues?scope=team: the team catalogue from the sink's server. */
static int
on_team(void *arg, const struct team_query *q, int64_t now_ms,
    sink_team_fn *done, void *done_arg)
{
	struct daemon	*d = arg;

	if (d->sink == NULL)
		return -ENOENT;
	return sink_team(d->sink, q, now_ms, done, done_arg);
}

static int
sink_start(struct daemon *d)
{
	struct sink_opts	o = { 0 };
	char			err[512];
	int			rc;

	if (d->cfg.sink_url[0] == '\0')
		return 0;	/* nothing leaves the machine */
	o.url = d->cfg.sink_url;
	o.state_dir = d->state_dir;
	o.batch_rows = d->cfg.sink_batch_rows;
	o.batch_bytes = d->cfg.sink_batch_bytes;
	o.batch_ms = d->cfg.sink_batch_ms;
	o.timeout_ms = d->cfg.sink_timeout_ms;
	o.backoff_max_ms = d->cfg.sink_backoff_max_ms;
	o.log = log_prio;
	if ((rc = sink_create(&d->sink, d->loop, &o, err, sizeof(err))) == 0)
		return 0;
	if (rc != -ELIBACC) {
		log_warnx("%s", err);
		return rc;
	}
	/*
	 * No libcurl (sink/lazycurl.h): the daemon still folds, wakes and
	 * serves; only the sink is off.  Its cursor stays where it was, so
	 * a start with libcurl sends everything since — nothing is lost.
	 */
	log_warnx("sink off: %s; the ledger stays on this machine until a "
	    "start that can load it", err);
	snprintf(d->sink_error, sizeof(d->sink_error), "%s", err);
	d->sink_error_ms = base_now_ms();
	return 0;
}

/* A footprint's count and status now, for wakes re-made from the file. */
static const char *
on_row(void *arg, const char *fp, uint64_t *count)
{
	struct daemon	*d = arg;

	return fold_row_state(&d->fold, fp, count);
}

/* What the events socket's hello says of the ledger. */
static void
on_hello(void *arg, cJSON *o)
{
	struct daemon	*d = arg;

	cJSON_AddStringToObject(o, "project", d->cfg.project);
	cJSON_AddNumberToObject(o, "generation", (double)d->fold.generation);
	cJSON_AddBoolToObject(o, "ready", d->fold.ready);
	cJSON_AddNumberToObject(o, "cursor", (double)daemon_cursor(d));
}

/*
 * SIGHUP: the configuration read again, and what changed applied or named
 * by the settings table (config_reload); then the parts that took a
 * setting at start are told.
 */
static void
reload(struct daemon *d)
{
	struct config	c;
	char		err[512], restart[1024], applied[1024];

	sdnotify_reloading();
	if (config_load(&c, d->argc, d->argv, err, sizeof(err)) != 0) {
		log_warnx("SIGHUP: configuration not reloaded: %s", err);
		sdnotify_send("READY=1");
		return;
	}
	config_reload(&d->cfg, &c, restart, sizeof(restart), applied,
	    sizeof(applied));
	if (restart[0] != '\0')
		log_warnx("SIGHUP: %s take%s effect at the next start", restart,
		    strchr(restart, ',') ? "" : "s");
	log_setverbose(d->cfg.verbose);
	/* from the next rotation */
	d->perf.rotate_wait_ms = d->fixes_t.rotate_wait_ms =
	    (uint64_t)d->cfg.rotate_wait_ms;
	loop_apply(d);		/* settings.json still wins */
	if (notifier_reconfigure(&d->notifier) != 0)
		log_warnx("SIGHUP: out of memory for the new rate limits; the "
		    "old ones stay");
	log_info("SIGHUP: configuration reloaded (%s)", applied[0] != '\0' ?
	    applied : "nothing changed");
	sdnotify_send("READY=1");
}

static void
on_signal(uv_signal_t *h, int signum)
{
	struct daemon	*d = h->data;

	if (signum == SIGHUP)
		reload(d);
	else
		daemon_stop(d, signum == SIGTERM ? "SIGTERM" : "SIGINT");
}

static void
on_watchdog(uv_timer_t *t)
{
	(void)t;
	sdnotify_send("WATCHDOG=1");
}

/* --- life cycle ------------------------------------------------------- */

int
daemon_init(struct daemon *d, uv_loop_t *loop, int argc, char **argv)
{
	char	err[1024];
	int	rc;

	memset(d, 0, sizeof(*d));
	d->loop = loop;
	d->argc = argc;
	d->argv = argv;
	d->lock_fd = -1;
	d->wakes_fd = -1;
	d->started_ms = base_now_ms();
	if ((rc = config_load(&d->cfg, argc, argv, err, sizeof(err))) != 0) {
		if (rc < 0)
			fprintf(stderr, "sloptimized: %s\n", err);
		return rc < 0 ? -EINVAL : 1;
	}
	loop_apply(d);
	log_init(d->cfg.verbose);
	if ((rc = statedir_resolve(d->cfg.project, d->cfg.state_dir,
	    d->state_dir, sizeof(d->state_dir))) != 0) {
		fprintf(stderr, "sloptimized: no state directory for %s: %s\n",
		    d->cfg.project, strerror(-rc));
		return -EINVAL;
	}
	if (d->cfg.check_only) {
		config_print(&d->cfg);
		printf("configuration OK (state in %s)\n", d->state_dir);
		return 1;
	}
	return 0;
}

/* The live fold is the checkpoint's, or empty: tail fixes.jsonl, whose
 * ready starts perf.jsonl. */
static void
start_files(void *arg)
{
	struct daemon		*d = arg;
	char			 path[PATH_MAX + 32];
	struct tailer_cbs	 fcbs = { fix_line, fix_long, fix_reset,
				    on_fixes_ready, d, log_prio };
	int			 rc;

	snprintf(path, sizeof(path), "%s/.sloptimize/fixes.jsonl",
	    d->cfg.project);
	if ((rc = tailer_init(&d->fixes_t, d->loop, path, NULL, d->cfg.poll,
	    &fcbs)) != 0) {
		log_warnx("cannot tail %s: %s", path, strerror(-rc));
		daemon_stop(d, "no fixes.jsonl to tail");
		d->exit_code = 1;
		return;
	}
	d->fixes_t.data = d;
	d->fixes_t.rotate_wait_ms = (uint64_t)d->cfg.rotate_wait_ms;
	d->fixes_started = 1;
	if ((rc = tailer_start(&d->fixes_t)) != 0) {
		log_warnx("cannot tail %s: %s", path, strerror(-rc));
		daemon_stop(d, "no fixes.jsonl to tail");
		d->exit_code = 1;
	}
}

static int
start(struct daemon *d)
{
	pid_t			 holder = 0;
	uint64_t		 usec;
	int			 rc;

	if ((rc = statedir_make(d->state_dir)) != 0) {
		log_warnx("cannot create %s: %s", d->state_dir, strerror(-rc));
		return rc;
	}
	if ((rc = statedir_lock(d->state_dir, &d->lock_fd, &holder)) != 0) {
		if (rc == -EBUSY)
			log_warnx("another sloptimized (pid %d) already watches "
			    "%s (state in %s); stop it first", (int)holder,
			    d->cfg.project, d->state_dir);
		else
			log_warnx("cannot lock %s: %s", d->state_dir,
			    strerror(-rc));
		return rc;
	}
	if ((rc = fold_init(&d->fold, d->loop, &d->cfg, d->state_dir,
	    &d->notifier)) != 0) {
		log_warnx("fold: %s", strerror(-rc));
		return rc;
	}
	profile_writer_init(&d->profile, d->loop, d->cfg.project);
	if ((rc = notifier_init(&d->notifier, d->loop, &d->cfg.wake, log_prio,
	    NULL)) != 0) {
		log_warnx("notifier: %s", strerror(-rc));
		return rc;
	}
	d->notifier_up = 1;
	if ((rc = statedir_path(d->state_dir, "wakes", d->wakes_path,
	    sizeof(d->wakes_path))) != 0) {
		log_warnx("wakes: %s", strerror(-rc));
		return rc;
	}
	if (wakes_load(d) == 0) {
		struct notifier_store	st = { wakes_save, d };

		notifier_store_set(&d->notifier, &st);
	}
	if ((rc = sink_start(d)) != 0)
		return rc;

	uv_signal_init(d->loop, &d->sig_term);
	uv_signal_init(d->loop, &d->sig_int);
	uv_signal_init(d->loop, &d->sig_hup);
	d->sig_term.data = d->sig_int.data = d->sig_hup.data = d;
	uv_signal_start(&d->sig_term, on_signal, SIGTERM);
	uv_signal_start(&d->sig_int, on_signal, SIGINT);
	uv_signal_start(&d->sig_hup, on_signal, SIGHUP);
	uv_timer_init(d->loop, &d->watchdog_timer);
	d->watchdog_timer.data = d;
	d->handles_up = 1;

	/* the channels, in the order a wake reaches them */
	notifier_channel_add(&d->notifier, chan_socket, d, NOTIFIER_GATED);
	notifier_channel_add(&d->notifier, chan_log, d, 0);
	if ((rc = desktop_init(&d->desktop, d->loop, &d->cfg.wake, log_prio,
	    NULL)) != 0)
		log_warnx("desktop notifications off: %s", strerror(-rc));
	else {
		d->desktop_up = 1;
		notifier_channel_add(&d->notifier, chan_desktop, d, 0);
	}
	if (d->cfg.exec_cmd[0] != '\0') {
		if ((rc = exec_init(&d->exec, d->loop, d->cfg.exec_cmd,
		    &d->cfg.wake, log_prio, NULL)) != 0) {
			log_warnx("--exec: %s", strerror(-rc));
			return rc;
		}
		d->exec_on = 1;
		notifier_channel_add(&d->notifier, chan_exec, d, 0);
	}
	{
		struct api_env		env = { d->loop, &d->cfg, d->state_dir,
					    &d->fold.changes,
					    daemon_status_json, on_loop_set,
					    on_team, d };
		struct server_hooks	hooks = { on_hello, on_row, d,
					    &d->cfg.wake, "" };

		snprintf(hooks.perf, sizeof(hooks.perf),
		    "%s/.sloptimize/perf.jsonl", d->cfg.project);
		if ((rc = api_init(&d->api, &env)) != 0)
			return rc;
		d->api_up = 1;
		if ((rc = server_start(&d->server, d->loop, d->cfg.listen_host,
		    d->cfg.listen_port, d->cfg.verbose, &d->api, &hooks)) != 0)
			return rc;
	}
	if ((rc = write_daemon_json(d)) != 0)
		return rc;
	/* the checkpoint first (on the pool), then the files */
	if ((rc = fold_load(&d->fold, start_files, d)) != 0) {
		log_warnx("checkpoint: %s", uv_strerror(rc));
		return rc;
	}
	if (sdnotify_watchdog_usec(&usec) > 0 && usec >= 2000) {
		d->watchdog_on = 1;
		uv_timer_start(&d->watchdog_timer, on_watchdog, usec / 2000,
		    usec / 2000);
	}
	log_info("sloptimized %s watching %s (state in %s)",
	    SLOPTIMIZE_VERSION, d->cfg.project, d->state_dir);
	return 0;
}

int
daemon_start(struct daemon *d)
{
	int	rc;

	if ((rc = start(d)) != 0) {
		daemon_stop(d, "start-up failed");
		d->exit_code = 1;
	}
	return rc;
}

void
daemon_stop(struct daemon *d, const char *why)
{
	char	path[PATH_MAX + 32];
	int	rc;

	if (d->stopping++)
		return;
	log_info("stopping (%s)", why);
	sdnotify_send("STOPPING=1");
	if (d->perf_started) {
		/* every line handed over is folded: the cursor may stand
		 * past it */
		if ((rc = tailer_save_sync(&d->perf)) != 0)
			log_warnx("cannot save the cursor: %s", strerror(-rc));
	}
	fold_stop(&d->fold);	/* saved, while the tailer is still open */
	if (d->perf_started)
		tailer_close(&d->perf, NULL);
	profile_writer_close(&d->profile);
	if (d->fixes_started)
		tailer_close(&d->fixes_t, NULL);
	if (d->server.ctx != NULL &&
	    statedir_path(d->state_dir, "daemon.json", path, sizeof(path)) == 0)
		statedir_remove(path);
	if (d->notifier_up)
		notifier_close(&d->notifier);
	server_stop(&d->server);
	/* after the server: no route reaches a closing sink; the sink saves
	 * its cursors and frees itself once its requests are back */
	sink_close(d->sink, NULL, NULL);
	d->sink = NULL;
	if (d->api_up)
		api_close(&d->api);
	if (d->desktop_up)
		desktop_close(&d->desktop, NULL);
	if (d->exec_on)
		exec_close(&d->exec, NULL);
	if (!d->handles_up)
		return;
	uv_close((uv_handle_t *)&d->sig_term, NULL);
	uv_close((uv_handle_t *)&d->sig_int, NULL);
	uv_close((uv_handle_t *)&d->sig_hup, NULL);
	uv_close((uv_handle_t *)&d->watchdog_timer, NULL);
}

int
daemon_free(struct daemon *d)
{
	server_free(&d->server);
	if (d->api_up)
		api_free(&d->api);
	fold_free(&d->fold);
	profile_writer_free(&d->profile);
	notifier_free(&d->notifier);
	statedir_slot_close(d->wakes_fd);
	statedir_unlock(d->lock_fd);
	return d->exit_code;
}
