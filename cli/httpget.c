/*
 * httpget — see httpget.h.  Non-blocking socket, poll(2) with what is
 * left of one deadline before every step; "Connection: close", so the
 * body ends at Content-Length or at the end of the stream.
 */
#include <sys/socket.h>
#include <sys/types.h>

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "httpget.h"

static long
left_ms(const struct timespec *end)
{
	struct timespec	now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (end->tv_sec - now.tv_sec) * 1000 +
	    (end->tv_nsec - now.tv_nsec) / 1000000;
}

/* Wait for fd to be ready for `events`; 0, -ETIMEDOUT or -errno. */
static int
wait_fd(int fd, short events, const struct timespec *end)
{
	struct pollfd	p = { fd, events, 0 };
	long		ms;
	int		n;

	for (;;) {
		if ((ms = left_ms(end)) <= 0)
			return -ETIMEDOUT;
		n = poll(&p, 1, (int)ms);
		if (n > 0)
			return 0;
		if (n == 0)
			return -ETIMEDOUT;
		if (errno != EINTR)
			return -errno;
	}
}

static int
dial(const char *host, int port, const struct timespec *end)
{
	struct addrinfo	 hints, *res = NULL, *ai;
	char		 ps[16];
	int		 fd = -1, rc = -ECONNREFUSED, err;
	socklen_t	 elen = sizeof(err);

	memset(&hints, 0, sizeof(hints));
	hints.ai_socktype = SOCK_STREAM;
	snprintf(ps, sizeof(ps), "%d", port);
	if (getaddrinfo(host, ps, &hints, &res) != 0)
		return -EHOSTUNREACH;
	for (ai = res; ai != NULL; ai = ai->ai_next) {
		if ((fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC |
		    SOCK_NONBLOCK, ai->ai_protocol)) == -1) {
			rc = -errno;
			continue;
		}
		if (connect(fd, ai->ai_addr, ai->ai_addrlen) == 0)
			break;
		if (errno == EINPROGRESS &&
		    (rc = wait_fd(fd, POLLOUT, end)) == 0 &&
		    getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &elen) == 0 &&
		    err == 0)
			break;
		if (errno != EINPROGRESS)
			rc = -errno;
		else if (rc == 0)
			rc = -err;
		close(fd);
		fd = -1;
		if (rc == -ETIMEDOUT)
			break;
	}
	freeaddrinfo(res);
	return fd >= 0 ? fd : rc;
}

int
httpget_fetch(const char *host, int port, const char *path, int timeout_ms,
    char **body, size_t *len, int *status)
{
	struct timespec	 end;
	char		 req[2048], *buf = NULL, *nb, *hdr_end, *cl;
	size_t		 n = 0, cap = 0, off, want = (size_t)-1, hlen;
	ssize_t		 r;
	int		 fd, rc = 0, v6 = strchr(host, ':') != NULL;

	*body = NULL;
	*len = 0;
	clock_gettime(CLOCK_MONOTONIC, &end);
	end.tv_sec += timeout_ms / 1000;
	end.tv_nsec += (long)(timeout_ms % 1000) * 1000000;
	if (end.tv_nsec >= 1000000000) {
		end.tv_sec++;
		end.tv_nsec -= 1000000000;
	}
	if ((fd = dial(host, port, &end)) < 0)
		return fd;
	snprintf(req, sizeof(req), "GET %s HTTP/1.1\r\nHost: %s%s%s:%d\r\n"
	    "Accept: application/json\r\nConnection: close\r\n\r\n", path,
	    v6 ? "[" : "", host, v6 ? "]" : "", port);
	for (off = 0; off < strlen(req); ) {
		if ((rc = wait_fd(fd, POLLOUT, &end)) != 0)
			goto out;
		if ((r = send(fd, req + off, strlen(req) - off,
		    MSG_NOSIGNAL)) == -1) {
			if (errno == EAGAIN || errno == EINTR)
				continue;
			rc = -errno;
			goto out;
		}
		off += (size_t)r;
	}
	hdr_end = NULL;
	hlen = 0;
	for (;;) {
		if (hdr_end != NULL && n - hlen >= want)
			break;
		if (n + 4096 + 1 > cap) {
			cap = cap ? cap * 2 : 8192;
			if (cap > HTTPGET_MAX_BODY + 65536) {
				rc = -EPROTO;
				goto out;
			}
			if ((nb = realloc(buf, cap)) == NULL) {
				rc = -ENOMEM;
				goto out;
			}
			buf = nb;
		}
		if ((rc = wait_fd(fd, POLLIN, &end)) != 0)
			goto out;
		if ((r = recv(fd, buf + n, cap - n - 1, 0)) == -1) {
			if (errno == EAGAIN || errno == EINTR)
				continue;
			rc = -errno;
			goto out;
		}
		if (r == 0)
			break;
		n += (size_t)r;
		buf[n] = '\0';
		if (hdr_end == NULL && (hdr_end = strstr(buf, "\r\n\r\n")) !=
		    NULL) {
			hlen = (size_t)(hdr_end - buf) + 4;
			for (cl = buf; (cl = strchr(cl, '\n')) != NULL &&
			    cl < hdr_end; cl++)
				if (strncasecmp(cl + 1, "content-length:", 15) ==
				    0)
					want = strtoul(cl + 16, NULL, 10);
		}
	}
	if (hdr_end == NULL || sscanf(buf, "HTTP/1.%*d %d", status) != 1) {
		rc = -EPROTO;
		goto out;
	}
	if (want != (size_t)-1 && n - hlen > want)
		n = hlen + want;
	if (n - hlen > HTTPGET_MAX_BODY) {
		rc = -EPROTO;
		goto out;
	}
	memmove(buf, buf + hlen, n - hlen);
	buf[n - hlen] = '\0';
	*body = buf;
	*len = n - hlen;
	buf = NULL;
	rc = 0;
out:
	free(buf);
	close(fd);
	return rc;
}
