/*
 * daemon_get — one blocking request to the daemon serving a project (see
 * daemon_get.c for why blocking is right here).
 */
#ifndef CLI_DAEMON_GET_H
#define CLI_DAEMON_GET_H

#include <stddef.h>

#include <cjson/cJSON.h>

/*
 * GET `path` (e.g. "/api/sloptimize/status") from the daemon that serves
 * `project_abs` (found through its daemon.json), within timeout_ms for
 * the whole exchange.  0 with *out the parsed JSON answer (the caller
 * frees it); or -ENOENT (no daemon serves the project), -ETIMEDOUT,
 * -ECONNREFUSED, -EPROTO (not a 200 JSON answer) or another -errno, with
 * `why` a sentence for the user.
 */
int	cli_daemon_get(const char *project_abs, const char *path,
	    int timeout_ms, cJSON **out, char *why, size_t cap);
/* The same, to the daemon at `a` (`--daemon URL`). */
struct watch_addr;
int	cli_daemon_get_at(const struct watch_addr *a, const char *path,
	    int timeout_ms, cJSON **out, char *why, size_t cap);
/*
 * One request of any method to the daemon at `a`: with `token` (or NULL)
 * as its bearer token, `body` (or NULL) as a JSON body.  0 with *status
 * and *out the parsed JSON answer whatever the status (an error's
 * {error, message} too); or a negative errno with why.
 */
int	cli_daemon_request(const struct watch_addr *a, const char *method,
	    const char *path, const char *token, const char *body,
	    int timeout_ms, int *status, cJSON **out, char *why, size_t cap);

#endif
