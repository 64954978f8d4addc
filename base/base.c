/*
 * base — the ground floor's helpers (see base.h).
 */
#include <stdio.h>
#include <time.h>

#include "base/base.h"

void
base_vlog(base_log_fn *fn, void *arg, int prio, const char *fmt, va_list ap)
{
	char	msg[BASE_LOG_MAX];

	if (fn == NULL)
		return;
	vsnprintf(msg, sizeof(msg), fmt, ap);
	fn(arg, prio, msg);
}

void
base_log(base_log_fn *fn, void *arg, int prio, const char *fmt, ...)
{
	va_list	ap;

	va_start(ap, fmt);
	base_vlog(fn, arg, prio, fmt, ap);
	va_end(ap);
}

int
base_say(char *why, size_t cap, int rc, const char *fmt, ...)
{
	va_list	ap;

	if (why != NULL && cap > 0) {
		va_start(ap, fmt);
		vsnprintf(why, cap, fmt, ap);
		va_end(ap);
	}
	return rc;
}

static int64_t
clock_ms(clockid_t id)
{
	struct timespec	ts;

	clock_gettime(id, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int64_t
base_now_ms(void)
{
	return clock_ms(CLOCK_REALTIME);
}

int64_t
base_mono_ms(void)
{
	return clock_ms(CLOCK_MONOTONIC);
}
