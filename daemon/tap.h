/*
 * tap — the bytes libwebsockets reads from its HTTP connections, seen on
 * their way in, so each request's raw header block can be checked
 * (daemon/rawhdr.h) against what libwebsockets made of it.
 *
 * libwebsockets 4.1.6 offers no hook on the bytes it reads before it
 * parses them, so the daemon interposes recv(2): lws reads every plain
 * socket with recv() (lws_ssl_capable_read_no_ssl(), lib/core-net/
 * output.c, line 309), and a recv() defined in the program wins over
 * libc's for the shared library too.  The interposer calls the system
 * call itself and hands the bytes to the connection's parser.  It is the
 * one piece of process-wide state in the daemon (a recv() has no argument
 * to carry a context), and it only ever acts on the loop thread that made
 * the tap and on sockets the server registered: any other recv() in the
 * process passes straight through.  Only sloptimized links it (the
 * Makefile keeps it out of the archive the CLI and the tests link).
 *
 * macOS cannot be tapped that way: its linker binds libwebsockets' recv
 * to libSystem's by name (the two-level namespace), so a recv() in the
 * program is never called by the library.  There the tap is compiled out
 * (TAP_SEES 0, the build says so) and each request comes with a block
 * marked `unchecked`: the guard has nothing to compare, so the headers
 * libwebsockets misreads go unnoticed, and since where a request ends in
 * the stream is not known either, every connection whose request had a
 * body, or was worked on, is closed after its answer (docs/api.md).
 */
#ifndef DAEMON_TAP_H
#define DAEMON_TAP_H

#include <stddef.h>
#include <stdint.h>

#include <uv.h>

#include "daemon/rawhdr.h"

#ifdef __APPLE__
#define TAP_SEES	0	/* no interposition: see above */
#else
#define TAP_SEES	1
#endif

struct tap {
	struct rawhdr	**by_fd;	/* NULL: not a connection of ours */
	size_t		  cap;
	size_t		  n;
	uv_thread_t	  owner;
	int		  on;
};

/* Become the process's tap, owned by the calling (loop) thread.  0, or
 * -EBUSY when another tap is on.  Without TAP_SEES it logs, once, that
 * the raw header checks are off. */
int	tap_init(struct tap *t);
/* Stop tapping and free every connection's parser. */
void	tap_free(struct tap *t);

/* A connection was accepted on fd: parse what is read from it (a parser
 * left by an earlier connection on the same descriptor is replaced).
 * 0 or -ENOMEM (then its requests find no header block and are refused). */
int	tap_open(struct tap *t, int fd);
/* It is closing.  Accepts an fd that is not tapped. */
void	tap_close(struct tap *t, int fd);
/* The next header block read on fd (rawhdr_take); a request on a socket
 * that is not tapped gets a bad block.  Without TAP_SEES: an unchecked
 * block that says it has a body. */
int	tap_take(struct tap *t, int fd, struct rawhdr_req *out);
/* How many bytes have been read from fd in all (0: not tapped): compared
 * with a request's end (rawhdr_req.end), whether more are buffered
 * behind it.  Without TAP_SEES: UINT64_MAX, never a request's end. */
uint64_t tap_fed(const struct tap *t, int fd);

#endif
