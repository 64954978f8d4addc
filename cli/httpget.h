/*
 * httpget — one blocking HTTP/1.1 GET to the daemon on loopback, with a
 * deadline: how a verb (doctor) reads the running daemon's /status.  The
 * CLI is not an event loop, so this simply blocks, but never longer than
 * the deadline, whatever the other end does (a stopped daemon, a port
 * taken by something else, a body that never ends).
 */
#ifndef CLI_HTTPGET_H
#define CLI_HTTPGET_H

#include <stddef.h>

#define HTTPGET_MAX_BODY	(4u << 20)

/*
 * GET `path` from host:port (an IPv4/IPv6 literal or a name; the daemon
 * listens on loopback) within timeout_ms.  On 0, *body is a malloc'd
 * NUL-terminated body of *len bytes and *status the HTTP status; the
 * caller frees *body.  -ETIMEDOUT, -ECONNREFUSED, -EPROTO (not HTTP, or
 * a body over HTTPGET_MAX_BODY), -ENOMEM or another -errno, and then
 * nothing to free.
 */
int	httpget_fetch(const char *host, int port, const char *path,
	    int timeout_ms, char **body, size_t *len, int *status);

#endif
