/*
 * log — stderr with journald priority prefixes (see log.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>

#include "log.h"

static int	verbose;	/* set once at start-up and on SIGHUP */

void
log_init(int v)
{
	verbose = v;
	setvbuf(stderr, NULL, _IOLBF, 0);
}

void
log_setverbose(int v)
{
	verbose = v;
}

static void
vlog(int prio, const char *errstr, const char *fmt, va_list ap)
{
	char	msg[2048];

	if (prio == LOG_DEBUG && !verbose)
		return;
	vsnprintf(msg, sizeof(msg), fmt, ap);
	if (errstr != NULL)
		fprintf(stderr, "<%d>sloptimized: %s: %s\n", prio, msg, errstr);
	else
		fprintf(stderr, "<%d>sloptimized: %s\n", prio, msg);
}

void
log_prio(void *arg, int prio, const char *msg)
{
	(void)arg;
	if (prio == LOG_DEBUG && !verbose)
		return;
	fprintf(stderr, "<%d>sloptimized: %s\n", prio, msg);
}

#define LOGFN(name, prio, witherr)				\
void								\
name(const char *fmt, ...)					\
{								\
	va_list	ap;						\
	int	saved = errno;					\
								\
	va_start(ap, fmt);					\
	vlog(prio, witherr ? strerror(saved) : NULL, fmt, ap);	\
	va_end(ap);						\
	errno = saved;						\
}

LOGFN(log_warnx, LOG_WARNING, 0)
LOGFN(log_info, LOG_INFO, 0)
LOGFN(log_debug, LOG_DEBUG, 0)

void
fatal(const char *fmt, ...)
{
	va_list	ap;
	int	saved = errno;

	va_start(ap, fmt);
	vlog(LOG_CRIT, strerror(saved), fmt, ap);
	va_end(ap);
	exit(1);
}

void
fatalx(const char *fmt, ...)
{
	va_list	ap;

	va_start(ap, fmt);
	vlog(LOG_CRIT, NULL, fmt, ap);
	va_end(ap);
	exit(1);
}
