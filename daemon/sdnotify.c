/*
 * sdnotify — sd_notify(3) in a page, so the daemon needs no libsystemd
 * (sdnotify.h; the protocol is systemd's doc/NOTIFY_SOCKET, stable since
 * 2010).
 *
 * One socket per message, closed at once: messages are rare (start,
 * reload, stop, a watchdog ping every few seconds), and holding no socket
 * means no descriptor to leak into the --exec hook's children and nothing
 * to redo when the manager re-creates its socket after `daemon-reexec`.
 *
 * Deliberately not done: passing file descriptors (FDSTORE=1) and
 * credentials by hand.  The kernel attaches our pid to the datagram on its
 * own because the manager sets SO_PASSCRED on its end; that pid is what
 * NotifyAccess=main checks.
 */
#include <sys/socket.h>
#include <sys/un.h>

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "sdnotify.h"

#ifndef MSG_NOSIGNAL		/* macOS: datagram sends raise no SIGPIPE */
#define MSG_NOSIGNAL	0
#endif

#define SDNOTIFY_MSG_MAX	4096

/*
 * Fill `sun` from $NOTIFY_SOCKET's value.  "@name" is the abstract
 * "\0name", whose length is exact (no terminating NUL: the NUL would be
 * part of the name); a path's length includes its NUL, as systemd does.
 */
static int
notify_addr(const char *e, struct sockaddr_un *sun, socklen_t *len)
{
	size_t n = strlen(e);

	memset(sun, 0, sizeof(*sun));
	sun->sun_family = AF_UNIX;
	if (e[0] == '/') {
		if (n >= sizeof(sun->sun_path))
			return -ENAMETOOLONG;
		memcpy(sun->sun_path, e, n + 1);
		*len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) +
		    n + 1);
		return 0;
	}
#ifdef __linux__
	if (e[0] == '@' && n > 1) {
		if (n > sizeof(sun->sun_path))
			return -ENAMETOOLONG;
		sun->sun_path[0] = '\0';
		memcpy(sun->sun_path + 1, e + 1, n - 1);
		*len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n);
		return 0;
	}
#endif
	return -EAFNOSUPPORT;	/* relative path, "vsock:...", bare "@" */
}

static int
dgram_socket(void)
{
	int fd;

#ifdef SOCK_CLOEXEC
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
#else
	fd = socket(AF_UNIX, SOCK_DGRAM, 0);
	if (fd >= 0)
		(void)fcntl(fd, F_SETFD, FD_CLOEXEC);
#endif
	return fd < 0 ? -errno : fd;
}

/*
 * MSG_DONTWAIT: a datagram socket whose receiver's queue is full would
 * otherwise block the sender until the manager catches up, and the
 * daemon's loop must never wait on anyone.
 */
int
sdnotify_send(const char *state)
{
	struct sockaddr_un	 sun;
	socklen_t		 len;
	const char		*e;
	ssize_t			 n;
	size_t			 size;
	int			 fd, r;

	if ((e = getenv("NOTIFY_SOCKET")) == NULL || e[0] == '\0')
		return 0;
	if (state == NULL || (size = strlen(state)) == 0)
		return -EINVAL;
	if ((r = notify_addr(e, &sun, &len)) < 0)
		return r;
	if ((fd = dgram_socket()) < 0)
		return fd;
	do
		n = sendto(fd, state, size, MSG_NOSIGNAL | MSG_DONTWAIT,
		    (struct sockaddr *)&sun, len);
	while (n < 0 && errno == EINTR);
	r = n < 0 ? -errno : (size_t)n == size ? 0 : -EMSGSIZE;
	if (r == -EWOULDBLOCK)
		r = -EAGAIN;
	close(fd);
	return r;
}

int
sdnotify_sendf(const char *fmt, ...)
{
	char	buf[SDNOTIFY_MSG_MAX];
	va_list	ap;
	int	n;

	if (fmt == NULL)
		return -EINVAL;
	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (n < 0)
		return -EINVAL;
	if ((size_t)n >= sizeof(buf))
		return -EMSGSIZE;
	return sdnotify_send(buf);
}

int
sdnotify_reloading(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_MONOTONIC, &ts) != 0)
		return -errno;
	return sdnotify_sendf("RELOADING=1\nMONOTONIC_USEC=%llu",
	    (unsigned long long)ts.tv_sec * 1000000ULL +
	    (unsigned long long)ts.tv_nsec / 1000ULL);
}

/*
 * A positive decimal number and nothing else: no sign, no spaces, no
 * "0x", no overflow (strtoull accepts all of those, or wraps "-1").
 */
static int
parse_positive(const char *s, uint64_t *out)
{
	uint64_t v = 0;

	if (*s == '\0')
		return -EINVAL;
	for (; *s != '\0'; s++) {
		if (*s < '0' || *s > '9')
			return -EINVAL;
		if (v > (UINT64_MAX - (uint64_t)(*s - '0')) / 10)
			return -EINVAL;
		v = v * 10 + (uint64_t)(*s - '0');
	}
	if (v == 0)
		return -EINVAL;
	*out = v;
	return 0;
}

int
sdnotify_watchdog_usec(uint64_t *usec)
{
	const char	*s, *p;
	uint64_t	 v, pid;

	if ((s = getenv("WATCHDOG_USEC")) == NULL || s[0] == '\0')
		return 0;
	if (parse_positive(s, &v) < 0)
		return -EINVAL;
	if ((p = getenv("WATCHDOG_PID")) != NULL && p[0] != '\0') {
		if (parse_positive(p, &pid) < 0)
			return -EINVAL;
		if (pid != (uint64_t)getpid())
			return 0;
	}
	if (usec != NULL)
		*usec = v;
	return 1;
}
