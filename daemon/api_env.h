/*
 * api_env — what the API may see of the daemon (docs/architecture.md):
 * the daemon fills one and hands it to api_init, which copies it; the
 * API's request plumbing (daemon/api.c) and the route handlers
 * (daemon/routes.c) read it, and neither sees `struct daemon`.
 *
 * It has a header of its own so that the route table can read it without
 * including the API: the API dispatches to the routes, never the other way
 * round (tests/repo/layers.test.sh).
 */
#ifndef DAEMON_API_ENV_H
#define DAEMON_API_ENV_H

#include <stdint.h>

#include <cjson/cJSON.h>
#include <uv.h>

#include "daemon/config.h"
#include "sink/sink.h"
#include "sink/team.h"

struct api_env {
	uv_loop_t		 *loop;
	const struct config	 *cfg;		/* may change on SIGHUP */
	const char		 *state_dir;
	const uint64_t		 *changes;	/* bumps when the files change */
	/* The whole /status document; the API adds its "http" part. */
	cJSON			*(*status)(void *arg);
	/* settings.json's fix-loop level ("" none), at start and on PUT. */
	void			 (*loop_set)(void *arg, const char *level);
	/* The team catalogue (sink_team), or -ENOENT without a sink. */
	int			 (*team)(void *arg, const struct team_query *q,
				    int64_t now_ms, sink_team_fn *done,
				    void *done_arg);
	void			 *arg;
};

#endif
