/*
 * tap — recv(2) interposed, for the raw header blocks (see tap.h); on
 * macOS, where it cannot be, the same calls saying so.
 */
#include <sys/socket.h>
#ifndef __APPLE__
#include <sys/syscall.h>
#endif

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon/log.h"
#include "daemon/tap.h"

/*
 * The one tap of the process.  Only written by tap_init and tap_free, on
 * the loop thread, before the server accepts anything and after it has
 * stopped; recv() reads it.
 */
static struct tap	*the_tap;

#if TAP_SEES
static int
mine(const struct tap *t)
{
	uv_thread_t	self = uv_thread_self();

	return t != NULL && t->on && uv_thread_equal(&self, &t->owner);
}

/*
 * recv(2), as libwebsockets calls it.  The system call itself (not libc's
 * recv, which this definition replaces); then, for a tapped socket read
 * by the loop thread, the bytes go to its parser.  MSG_PEEK reads leave
 * the stream where it was.
 */
ssize_t
recv(int fd, void *buf, size_t len, int flags)
{
	struct tap	*t = the_tap;
	ssize_t		 n;

	n = syscall(SYS_recvfrom, fd, buf, len, flags, NULL, NULL);
	if (n > 0 && !(flags & MSG_PEEK) && fd >= 0 && mine(t) &&
	    (size_t)fd < t->cap && t->by_fd[fd] != NULL)
		rawhdr_feed(t->by_fd[fd], buf, (size_t)n);
	return n;
}
#endif

int
tap_init(struct tap *t)
{
	memset(t, 0, sizeof(*t));
	if (the_tap != NULL)
		return -EBUSY;
	t->owner = uv_thread_self();
	t->on = 1;
	the_tap = t;
#if !TAP_SEES
	log_warnx("the raw header checks are off: this system gives a "
	    "program no way to see what libwebsockets reads (docs/api.md, "
	    "\"Headers libwebsockets misreads\"); every connection whose "
	    "request had a body is closed after its answer");
#endif
	return 0;
}

void
tap_close(struct tap *t, int fd)
{
	if (fd < 0 || (size_t)fd >= t->cap || t->by_fd[fd] == NULL)
		return;
	rawhdr_free(t->by_fd[fd]);
	free(t->by_fd[fd]);
	t->by_fd[fd] = NULL;
	t->n--;
}

int
tap_open(struct tap *t, int fd)
{
	struct rawhdr	**nb, *h;
	size_t		  cap;

	if (fd < 0 || !t->on)
		return -EINVAL;
	if ((size_t)fd >= t->cap) {
		for (cap = t->cap ? t->cap : 256; cap <= (size_t)fd; )
			cap *= 2;
		if ((nb = realloc(t->by_fd, cap * sizeof(*nb))) == NULL)
			return -ENOMEM;
		memset(nb + t->cap, 0, (cap - t->cap) * sizeof(*nb));
		t->by_fd = nb;
		t->cap = cap;
	}
	tap_close(t, fd);
	if ((h = malloc(sizeof(*h))) == NULL)
		return -ENOMEM;
	rawhdr_init(h);
	t->by_fd[fd] = h;
	t->n++;
	return 0;
}

int
tap_take(struct tap *t, int fd, struct rawhdr_req *out)
{
	if (fd < 0 || (size_t)fd >= t->cap || t->by_fd[fd] == NULL) {
		memset(out, 0, sizeof(*out));
		out->bad = "the connection's bytes were not seen";
		return -ENOENT;
	}
#if TAP_SEES
	return rawhdr_take(t->by_fd[fd], out);
#else
	/* nothing to take: say so, and that the request may have a body
	 * behind which more is buffered (tap_fed never matches its end) */
	memset(out, 0, sizeof(*out));
	out->unchecked = "recv(2) cannot be interposed on this system";
	out->has_body = 1;
	return 0;
#endif
}

uint64_t
tap_fed(const struct tap *t, int fd)
{
#if !TAP_SEES
	(void)t;
	(void)fd;
	return UINT64_MAX;
#else
	if (fd < 0 || (size_t)fd >= t->cap || t->by_fd[fd] == NULL)
		return 0;
	return t->by_fd[fd]->fed;
#endif
}

void
tap_free(struct tap *t)
{
	size_t	fd;

	if (the_tap == t)
		the_tap = NULL;
	for (fd = 0; fd < t->cap; fd++)
		tap_close(t, (int)fd);
	free(t->by_fd);
	memset(t, 0, sizeof(*t));
}
