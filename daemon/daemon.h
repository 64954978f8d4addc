/*
 * daemon — sloptimized's state in one struct, and the wiring between its
 * parts: the tailers feed the fold (fold.h), the fold's events become
 * wakes (notifier/notifier.h), wakes go to the log, the events socket,
 * desktop notifications and --exec.
 *
 * Everything here runs on the one libuv loop thread.
 */
#ifndef DAEMON_DAEMON_H
#define DAEMON_DAEMON_H

#include <limits.h>
#include <stdint.h>

#include <uv.h>

#include "daemon/api.h"
#include "daemon/config.h"
#include "daemon/fold.h"
#include "daemon/profile_writer.h"
#include "daemon/server.h"
#include "ledger/ledger.h"
#include "notifier/desktop.h"
#include "notifier/exec.h"
#include "notifier/notifier.h"
#include "sink/sink.h"
#include "watchers/tailer.h"

struct daemon {
	struct config		 cfg;
	int			 argc;
	char			**argv;		/* kept for SIGHUP */
	uv_loop_t		*loop;
	char			 state_dir[PATH_MAX];
	int			 lock_fd;
	int64_t			 started_ms;

	struct fold		 fold;		/* the live catalogue (fold.h) */
	struct profile_writer	 profile;	/* .sloptimize/profile.json */

	struct tailer		 perf, fixes_t;
	int			 perf_started, fixes_started, fixes_seen;
	int			 handles_up, desktop_up, notifier_up;

	struct notifier		 notifier;	/* decides, then the channels: */
	/* <state>/wakes: the id of the last wake said (notifier_store) */
	char			 wakes_path[PATH_MAX + 16];
	int			 wakes_fd;	/* a slot, -1 if none */
	struct desktop		 desktop;
	struct exec		 exec;
	int			 exec_on;

	char			 loop_settings[16];	/* settings.json's */

	struct sink		*sink;		/* NULL: no --sink (docs/team.md),
						   or it could not start: */
	char			 sink_error[512];	/* why, for /status */
	int64_t			 sink_error_ms;
	uint64_t		 fixes_generation;

	struct api		 api;		/* HTTP routes */
	struct server		 server;	/* HTTP and WebSocket */
	int			 api_up;

	uv_signal_t		 sig_term, sig_int, sig_hup;
	uv_timer_t		 watchdog_timer;
	int			 watchdog_on;
	int			 stopping;
	int			 exit_code;
};


/* Just past the last perf.jsonl line folded (0 before the tailer runs). */
uint64_t daemon_cursor(struct daemon *d);
/* "host:port" ("[v6]:port") really listened on. */
void	daemon_listen(const struct daemon *d, char *out, size_t cap);
/* The /status document (daemon/status.c): each part from its module. */
cJSON	*daemon_status_json(void *daemon);

int	daemon_init(struct daemon *d, uv_loop_t *loop, int argc, char **argv);
/* Start; a failure stops what had begun, and the exit status is then 1. */
int	daemon_start(struct daemon *d);
/* Persist, close everything; the loop then runs out. */
void	daemon_stop(struct daemon *d, const char *why);
/* Free what is left once the loop has run out; the exit status. */
int	daemon_free(struct daemon *d);

#endif
