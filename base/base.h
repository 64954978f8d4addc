/*
 * base — the ground floor: the few helpers every room needs and none of
 * them owns.  A log callback's type and a formatted call of it, a "why"
 * buffer filled and an error code handed back in one statement, and the
 * two clocks in milliseconds.  Before this room each was copied into the
 * files that needed it (seven wall clocks, six `say`s, four log shims).
 *
 * It includes nothing of ours, and every room may include it
 * (docs/architecture.md, tests/repo/layers.test.sh).  No state, no I/O beyond
 * reading the clocks.
 */
#ifndef BASE_BASE_H
#define BASE_BASE_H

#include <limits.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

/* How a module reports trouble to whoever made it: prio is a syslog(3)
 * LOG_* level, msg one line without its newline.  The daemon's is
 * log_prio (daemon/log.h). */
typedef void base_log_fn(void *arg, int prio, const char *msg);

/* The longest line base_log passes on (longer ones are cut): two paths
 * and a sentence, what the tailer's messages need. */
#define BASE_LOG_MAX	(2 * PATH_MAX + 256)

/* fmt formatted and handed to fn; nothing when fn is NULL. */
void	base_log(base_log_fn *fn, void *arg, int prio, const char *fmt, ...)
	    __attribute__((format(printf, 4, 5)));
void	base_vlog(base_log_fn *fn, void *arg, int prio, const char *fmt,
	    va_list ap) __attribute__((format(printf, 4, 0)));

/* fmt formatted into why (cap bytes; why NULL or cap 0: nothing), and rc
 * returned, so an error path is `return base_say(why, cap, -EIO, …);`. */
int	base_say(char *why, size_t cap, int rc, const char *fmt, ...)
	    __attribute__((format(printf, 4, 5)));

/* Milliseconds since the epoch (CLOCK_REALTIME): what records, files and
 * answers carry. */
int64_t	base_now_ms(void);
/* Milliseconds on CLOCK_MONOTONIC: deadlines and durations, which a
 * change of the wall clock must not move. */
int64_t	base_mono_ms(void);

#endif
