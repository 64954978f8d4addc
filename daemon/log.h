/*
 * log — the daemon's log: stderr, one line per message, each line led by
 * a journald priority prefix (<3> error … <7> debug) so `journalctl`
 * shows levels when the daemon runs as a systemd service.
 *
 * log_debug prints only with -v.  fatal (with strerror(errno)) and fatalx
 * are for start-up and broken invariants only.  log_prio is the
 * base_log_fn (base/base.h) the lower rooms are given.
 */
#ifndef DAEMON_LOG_H
#define DAEMON_LOG_H

#include <stdarg.h>

void	log_init(int verbose);
void	log_setverbose(int verbose);
void	log_warnx(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void	log_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void	log_debug(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void	fatal(const char *fmt, ...)
	    __attribute__((format(printf, 1, 2), noreturn));
void	fatalx(const char *fmt, ...)
	    __attribute__((format(printf, 1, 2), noreturn));
/* prio is a syslog(3) level: the notifier's log callback. */
void	log_prio(void *arg, int prio, const char *msg);

#endif
