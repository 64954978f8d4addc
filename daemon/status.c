/*
 * status — GET /api/sloptimize/status (schemas/status.json), put together
 * from each module's own status: the tailers', the fold's counts and
 * skips, the notifier's and its channels', the events socket's and the
 * API's.  The daemon only adds who it is.
 */
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "base/base.h"
#include "daemon/daemon.h"

static cJSON *
tailer_json(const struct tailer *t, int started)
{
	struct tailer_status	 st;
	cJSON			*o = cJSON_CreateObject();

	if (!started) {
		cJSON_AddStringToObject(o, "state", "not started");
		return o;
	}
	tailer_status(t, &st);
	cJSON_AddStringToObject(o, "path", t->path);
	cJSON_AddBoolToObject(o, "exists", st.file_exists);
	cJSON_AddStringToObject(o, "backend", st.backend);
	cJSON_AddStringToObject(o, "backendWhy", st.backend_why);
	cJSON_AddNumberToObject(o, "generation", (double)st.generation);
	cJSON_AddNumberToObject(o, "cursor", (double)st.cursor);
	cJSON_AddNumberToObject(o, "size", (double)st.size);
	cJSON_AddNumberToObject(o, "lag", (double)st.lag);
	cJSON_AddNumberToObject(o, "lines", (double)st.lines);
	cJSON_AddNumberToObject(o, "longLines", (double)st.long_lines);
	cJSON_AddNumberToObject(o, "lateLines", (double)st.late_lines);
	cJSON_AddBoolToObject(o, "paused", st.paused);
	cJSON_AddBoolToObject(o, "draining", st.draining);
	if (st.error)
		cJSON_AddStringToObject(o, "error", st.error_why[0] ?
		    st.error_why : strerror(-st.error));
	if (st.save_error)
		cJSON_AddStringToObject(o, "cursorSaveError",
		    strerror(-st.save_error));
	return o;
}

static cJSON *
counts_json(const struct ledger *l)
{
	struct ledger_counts	 c;
	cJSON			*n = cJSON_CreateObject();

	ledger_counts(l, &c);
	cJSON_AddNumberToObject(n, "lines", (double)c.lines);
	cJSON_AddNumberToObject(n, "folded", (double)c.folded);
	cJSON_AddNumberToObject(n, "incidents", (double)c.incidents);
	cJSON_AddNumberToObject(n, "fixes", (double)c.fixes);
	cJSON_AddNumberToObject(n, "skipped", (double)c.skipped);
	cJSON_AddNumberToObject(n, "malformedFootprints",
	    (double)c.malformed_footprints);
	cJSON_AddNumberToObject(n, "rows", (double)c.rows);
	cJSON_AddNumberToObject(n, "builds", (double)c.builds);
	return n;
}

cJSON *
daemon_status_json(void *arg)
{
	struct daemon		*d = arg;
	struct tailer_status	 ts;
	cJSON			*o = cJSON_CreateObject(), *f, *n;
	char			 listen[300];

	cJSON_AddNumberToObject(o, "v", 1);
	cJSON_AddStringToObject(o, "version", SLOPTIMIZE_VERSION);
	cJSON_AddNumberToObject(o, "pid", (double)getpid());
	cJSON_AddNumberToObject(o, "uptimeMs",
	    (double)(base_now_ms() - d->started_ms));
	cJSON_AddStringToObject(o, "project", d->cfg.project);
	cJSON_AddStringToObject(o, "stateDir", d->state_dir);
	daemon_listen(d, listen, sizeof(listen));
	cJSON_AddStringToObject(o, "listen", listen);
	cJSON_AddBoolToObject(o, "ready", d->fold.ready);
	cJSON_AddNumberToObject(o, "generation", (double)d->fold.generation);
	memset(&ts, 0, sizeof(ts));
	if (d->perf_started)
		tailer_status(&d->perf, &ts);
	cJSON_AddNumberToObject(o, "cursor", (double)ts.cursor);
	cJSON_AddNumberToObject(o, "lag", (double)ts.lag);
	cJSON_AddStringToObject(o, "backend", d->perf_started ? ts.backend :
	    "not started");
	f = cJSON_AddObjectToObject(o, "files");
	cJSON_AddItemToObject(f, "perf", tailer_json(&d->perf,
	    d->perf_started));
	cJSON_AddItemToObject(f, "fixes", tailer_json(&d->fixes_t,
	    d->fixes_started));
	cJSON_AddItemToObject(o, "counts", counts_json(d->fold.ledger));
	cJSON_AddItemToObject(o, "checkpoint",
	    fold_ckpt_status_json(&d->fold));
	cJSON_AddItemToObject(o, "profile",
	    profile_writer_status_json(&d->profile));
	cJSON_AddItemToObject(o, "skipped", ledger_skipped_json(d->fold.ledger));
	n = notifier_status_json(&d->notifier);
	cJSON_AddStringToObject(n, "desktopBackend", desktop_backend());
	cJSON_AddStringToObject(n, "desktop", d->desktop_up ?
	    desktop_state(&d->desktop) : "off");
	/* every wake handed to the desktop: shown, pending or dropped */
	cJSON_AddItemToObject(n, "desktopStats", d->desktop_up ?
	    desktop_stats_json(&d->desktop) : cJSON_CreateNull());
	if (d->exec_on)
		cJSON_AddStringToObject(n, "exec", d->cfg.exec_cmd);
	cJSON_AddStringToObject(n, "loop", api_loop_level(&d->api, NULL));
	cJSON_AddItemToObject(o, "notifier", n);
	server_status_json(&d->server, o);
	cJSON_AddItemToObject(o, "http", api_status_json(&d->api));
	/* null: no --sink, nothing leaves the machine (docs/team.md);
	 * "unavailable": asked for but it could not start (no libcurl) */
	cJSON_AddItemToObject(o, "sink", d->sink != NULL ?
	    sink_status_json(d->sink) : d->sink_error[0] != '\0' ?
	    sink_status_off_json(d->cfg.sink_url, d->sink_error,
	    d->sink_error_ms) : cJSON_CreateNull());
	return o;
}
