/*
 * sink_driver — the sink wired to real tailers, as the daemon wires it,
 * for tests/sink/sink.test.mjs and the sink benchmark: a real inotify tailer on
 * perf.jsonl (with its cursor) and on fixes.jsonl, every folded line
 * announced to the sink with sink_advance(), the sink on the same loop.
 *
 *   sink_driver --project DIR --state-dir DIR --sink URL [--status FILE]
 *               [--batch-rows N] [--batch-ms N] [--timeout-ms N]
 *               [--backoff-max-ms N]
 *
 * --status FILE gets {"idle", "perfCursor", "fixesCursor", "sink": {…}}
 * (sink_status_json) rewritten atomically whenever it changes, at most
 * every 20 ms, so a test can wait on it.  SIGTERM/SIGINT: save the
 * tailer's cursor, close the sink (which saves its own), exit 0.
 * Log lines go to stderr.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ledger/footprint.h"
#include "ledger/ledger.h"
#include "sink/sink.h"
#include "sink/team.h"
#include "project/statedir.h"
#include "watchers/tailer.h"

struct drv {
	uv_loop_t	 loop;
	struct tailer	 perf, fixes;
	struct sink	*sink;
	uint64_t	 gen[2];
	uv_signal_t	 sterm, sint, susr1;
	const char	*team_out;
	int64_t		 team_now;
	uv_timer_t	 status_timer;
	const char	*status_path;
	char		*last_status;
	int		 stopping;
};

static void
log_cb(void *arg, int prio, const char *msg)
{
	(void)arg;
	fprintf(stderr, "<%d> %s\n", prio, msg);
}

/*
 * The tailer's descriptor of the file a line came from.  The tailer has no
 * accessor for it yet; its struct is public so callers can embed it, and
 * during a line or reset callback `fd` is the file being read.
 */
static int
tailer_fd(const struct tailer *t)
{
	return t->fd;
}

static void
announce(struct drv *d, enum sink_stream s, struct tailer *t, uint64_t end)
{
	sink_advance(d->sink, s, d->gen[s], end, tailer_fd(t));
}

static void
perf_line(void *arg, const char *line, size_t len, uint64_t off,
    enum tail_phase ph)
{
	struct drv	*d = arg;

	(void)line;
	(void)ph;
	announce(d, SINK_PERF, &d->perf, off + len + 1);
}

static void
perf_long(void *arg, uint64_t off, uint64_t len, enum tail_phase ph)
{
	struct drv	*d = arg;

	(void)ph;
	announce(d, SINK_PERF, &d->perf, off + len + 1);
}

static void
perf_reset(void *arg, uint64_t gen, const char *why)
{
	struct drv	*d = arg;

	fprintf(stderr, "perf.jsonl: generation %llu: %s\n",
	    (unsigned long long)gen, why);
	d->gen[SINK_PERF] = gen;
	announce(d, SINK_PERF, &d->perf, 0);
}

static void
fix_line(void *arg, const char *line, size_t len, uint64_t off,
    enum tail_phase ph)
{
	struct drv	*d = arg;

	(void)line;
	(void)ph;
	announce(d, SINK_FIXES, &d->fixes, off + len + 1);
}

static void
fix_long(void *arg, uint64_t off, uint64_t len, enum tail_phase ph)
{
	struct drv	*d = arg;

	(void)ph;
	announce(d, SINK_FIXES, &d->fixes, off + len + 1);
}

static void
fix_reset(void *arg, uint64_t gen, const char *why)
{
	struct drv	*d = arg;

	(void)why;
	d->gen[SINK_FIXES] = gen;
	announce(d, SINK_FIXES, &d->fixes, 0);
}

static void
write_status(struct drv *d)
{
	cJSON			*o = cJSON_CreateObject();
	struct tailer_status	 ps, fs;
	char			*txt, tmp[PATH_MAX + 8];
	FILE			*f;

	tailer_status(&d->perf, &ps);
	tailer_status(&d->fixes, &fs);
	cJSON_AddBoolToObject(o, "idle", sink_idle(d->sink));
	cJSON_AddNumberToObject(o, "perfCursor", (double)ps.cursor);
	cJSON_AddNumberToObject(o, "fixesCursor", (double)fs.cursor);
	cJSON_AddNumberToObject(o, "pid", (double)getpid());
	cJSON_AddItemToObject(o, "sink", sink_status_json(d->sink));
	txt = cJSON_PrintUnformatted(o);
	cJSON_Delete(o);
	if (txt == NULL)
		return;
	if (d->last_status != NULL && strcmp(txt, d->last_status) == 0) {
		free(txt);
		return;
	}
	snprintf(tmp, sizeof(tmp), "%s.tmp", d->status_path);
	if ((f = fopen(tmp, "w")) != NULL) {
		fputs(txt, f);
		fclose(f);
		rename(tmp, d->status_path);
	}
	free(d->last_status);
	d->last_status = txt;
}

static void
on_status(uv_timer_t *t)
{
	write_status(t->data);
}

static void
on_team(void *arg, cJSON *cat, const char *err)
{
	struct drv	*d = arg;
	char		*txt, tmp[PATH_MAX + 8];
	FILE		*f;

	if (cat == NULL) {
		cat = cJSON_CreateObject();
		cJSON_AddStringToObject(cat, "error", err);
	}
	txt = cJSON_PrintUnformatted(cat);
	cJSON_Delete(cat);
	snprintf(tmp, sizeof(tmp), "%s.tmp", d->team_out);
	if (txt != NULL && (f = fopen(tmp, "w")) != NULL) {
		fputs(txt, f);
		fclose(f);
		rename(tmp, d->team_out);
	}
	free(txt);
}

static void
on_usr1(uv_signal_t *h, int sig)
{
	struct drv		*d = h->data;
	struct team_query	 q = { NULL, NULL, 0, 0, LEDGER_NO_TIME,
				    LEDGER_NO_TIME };

	(void)sig;
	if (d->team_out != NULL && !d->stopping &&
	    sink_team(d->sink, &q, d->team_now, on_team, d) != 0)
		fprintf(stderr, "sink_driver: sink_team failed\n");
}

static void
on_closed(void *arg)
{
	(void)arg;
}

static void
on_signal(uv_signal_t *h, int sig)
{
	struct drv	*d = h->data;

	(void)sig;
	if (d->stopping++)
		return;
	tailer_save_sync(&d->perf);
	tailer_close(&d->perf, NULL);
	tailer_close(&d->fixes, NULL);
	sink_close(d->sink, on_closed, NULL);
	uv_close((uv_handle_t *)&d->sterm, NULL);
	uv_close((uv_handle_t *)&d->sint, NULL);
	uv_close((uv_handle_t *)&d->susr1, NULL);
	if (d->status_path != NULL)
		uv_close((uv_handle_t *)&d->status_timer, NULL);
}

int
main(int argc, char **argv)
{
	struct drv		 d;
	struct sink_opts	 so = { 0 };
	const char		*project = NULL, *state = NULL;
	char			 perf[PATH_MAX], fixes[PATH_MAX], cursor[PATH_MAX];
	char			 err[512];
	struct tailer_cbs	 pc = { perf_line, perf_long, perf_reset, NULL,
				    &d, log_cb };
	struct tailer_cbs	 fc = { fix_line, fix_long, fix_reset, NULL,
				    &d, log_cb };
	int			 i, rc;

	memset(&d, 0, sizeof(d));
	for (i = 1; i + 1 < argc; i += 2) {
		const char	*k = argv[i], *v = argv[i + 1];

		if (strcmp(k, "--project") == 0)
			project = v;
		else if (strcmp(k, "--state-dir") == 0)
			state = v;
		else if (strcmp(k, "--sink") == 0)
			so.url = v;
		else if (strcmp(k, "--status") == 0)
			d.status_path = v;
		else if (strcmp(k, "--batch-rows") == 0)
			so.batch_rows = (unsigned)atoi(v);
		else if (strcmp(k, "--batch-ms") == 0)
			so.batch_ms = (unsigned)atoi(v);
		else if (strcmp(k, "--timeout-ms") == 0)
			so.timeout_ms = (unsigned)atoi(v);
		else if (strcmp(k, "--team-out") == 0)
			d.team_out = v;
		else if (strcmp(k, "--team-now") == 0)
			iso_parse_ms(v, strlen(v), &d.team_now);
		else if (strcmp(k, "--backoff-max-ms") == 0)
			so.backoff_max_ms = (unsigned)atoi(v);
		else {
			fprintf(stderr, "sink_driver: unknown %s\n", k);
			return 2;
		}
	}
	if (project == NULL || state == NULL || so.url == NULL) {
		fprintf(stderr, "usage: sink_driver --project DIR --state-dir "
		    "DIR --sink URL [--status FILE] …\n");
		return 2;
	}
	signal(SIGPIPE, SIG_IGN);
	if ((rc = statedir_make(state)) != 0) {
		fprintf(stderr, "sink_driver: %s: %s\n", state, strerror(-rc));
		return 1;
	}
	uv_loop_init(&d.loop);
	so.state_dir = state;
	so.log = log_cb;
	if ((rc = sink_create(&d.sink, &d.loop, &so, err, sizeof(err))) != 0) {
		fprintf(stderr, "sink_driver: %s\n", err);
		return 1;
	}
	snprintf(perf, sizeof(perf), "%s/.sloptimize/perf.jsonl", project);
	snprintf(fixes, sizeof(fixes), "%s/.sloptimize/fixes.jsonl", project);
	snprintf(cursor, sizeof(cursor), "%s/cursor", state);
	if (tailer_init(&d.perf, &d.loop, perf, cursor, 0, &pc) != 0 ||
	    tailer_init(&d.fixes, &d.loop, fixes, NULL, 0, &fc) != 0 ||
	    tailer_start(&d.fixes) != 0 || tailer_start(&d.perf) != 0) {
		fprintf(stderr, "sink_driver: cannot tail %s\n", project);
		return 1;
	}
	/* a resumed cursor keeps its generation: no reset() */
	{
		struct tailer_status	st;

		tailer_status(&d.perf, &st);
		d.gen[SINK_PERF] = st.generation;
	}
	uv_signal_init(&d.loop, &d.sterm);
	uv_signal_init(&d.loop, &d.sint);
	d.sterm.data = d.sint.data = &d;
	uv_signal_start(&d.sterm, on_signal, SIGTERM);
	uv_signal_start(&d.sint, on_signal, SIGINT);
	uv_signal_init(&d.loop, &d.susr1);
	d.susr1.data = &d;
	uv_signal_start(&d.susr1, on_usr1, SIGUSR1);
	if (d.status_path != NULL) {
		uv_timer_init(&d.loop, &d.status_timer);
		d.status_timer.data = &d;
		uv_timer_start(&d.status_timer, on_status, 0, 20);
	}
	uv_run(&d.loop, UV_RUN_DEFAULT);
	if (d.status_path != NULL)
		unlink(d.status_path);
	free(d.last_status);
	uv_loop_close(&d.loop);
	return 0;
}
