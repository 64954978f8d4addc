/*
 * sdnotify — the service manager's notification protocol, without
 * libsystemd (DESIGN §13, docs/service.md).
 *
 * Under systemd with Type=notify the manager passes the address of a
 * datagram socket in $NOTIFY_SOCKET; the daemon says what it is doing by
 * sending "KEY=VALUE" lines to it: READY=1 once it serves, STATUS=... for
 * `systemctl status`, WATCHDOG=1 every half watchdog interval,
 * RELOADING=1 (with MONOTONIC_USEC=) on SIGHUP and READY=1 again after,
 * STOPPING=1 on SIGTERM.  Not under systemd (NOTIFY_SOCKET unset: a shell,
 * launchd, a test) every call is a successful no-op, so the daemon calls
 * these unconditionally.
 *
 * The environment is read on every call, nothing is cached, and the
 * variables are left in place: the --exec hook's children inherit them,
 * which is harmless because the unit says NotifyAccess=main (the manager
 * ignores messages from any pid but the daemon's).
 *
 * Nothing here blocks: a datagram the manager's queue has no room for
 * fails with -EAGAIN instead of stalling the loop (see sdnotify_send).
 */
#ifndef DAEMON_SDNOTIFY_H
#define DAEMON_SDNOTIFY_H

#include <stdint.h>

/*
 * Send `state` (one or more "KEY=VALUE" lines separated by '\n') as one
 * datagram to $NOTIFY_SOCKET: a filesystem path ("/run/user/1000/...") or
 * a Linux abstract socket ("@name").  Returns 0 when sent, and 0 when
 * NOTIFY_SOCKET is unset or empty (not under a service manager: nothing to
 * do).  Otherwise a negative errno, nothing sent:
 *   -EINVAL        state is NULL or empty
 *   -EAFNOSUPPORT  NOTIFY_SOCKET is neither "/..." nor "@..." (or "@..."
 *                  where abstract sockets do not exist)
 *   -ENAMETOOLONG  the address does not fit a sockaddr_un
 *   -EAGAIN        the manager's queue is full right now; the caller may
 *                  retry later (a WATCHDOG=1 simply waits for the next
 *                  tick, READY=1 deserves a retry from a timer)
 *   -ENOENT, -ECONNREFUSED, -EACCES, ...   from socket(2)/sendto(2)
 * Thread-safe; async-signal-safe it is not (it reads the environment).
 */
int	sdnotify_send(const char *state);

/*
 * printf-style sdnotify_send, e.g. sdnotify_sendf("STATUS=tailing %s, "
 * "%u issues", path, n).  The formatted text is capped at 4096 bytes
 * (-EMSGSIZE beyond); otherwise as sdnotify_send.
 */
int	sdnotify_sendf(const char *fmt, ...)
	    __attribute__((format(printf, 1, 2)));

/*
 * "RELOADING=1\nMONOTONIC_USEC=<CLOCK_MONOTONIC now>": what to send when
 * SIGHUP starts a reload (systemd >= 253 needs the timestamp to match a
 * reload to its request; older ones ignore it).  Send READY=1 when the
 * reload is done, whether it succeeded or not.  Returns as sdnotify_send.
 */
int	sdnotify_reloading(void);

/*
 * Is the manager's watchdog on for this process?  Reads $WATCHDOG_USEC
 * (the interval in microseconds) and, when set, $WATCHDOG_PID (the pid the
 * interval is meant for: a child that inherited the variables must not
 * ping).  Returns 1 and sets *usec when the watchdog is on; the daemon then
 * sends WATCHDOG=1 every *usec / 2.  Returns 0 (and leaves *usec alone)
 * when WATCHDOG_USEC is unset or empty, or WATCHDOG_PID names another
 * process.  Returns -EINVAL when either variable is not a positive decimal
 * number: the watchdog is then off too, but worth a log line.
 */
int	sdnotify_watchdog_usec(uint64_t *usec);

#endif
