/*
 * daemon_get — one GET to the daemon serving a project, for verbs that
 * want to show what only the running daemon knows (doctor: its watcher,
 * cursor saves, notifications).  Blocking, with one deadline for the
 * whole exchange: these verbs are short-lived and have nothing else to
 * do meanwhile; `watch` keeps its own event-driven client.
 *
 * HTTP/1.0 and "Connection: close", so the answer is whatever arrives
 * until the daemon closes: no chunked bodies to undo.  The Host header is
 * the loopback address the daemon recorded, which its DNS-rebinding
 * guard accepts; no Origin is sent (a read needs none).
 */
#include <sys/socket.h>
#include <sys/types.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/base.h"
#include "cli/daemon_get.h"
#include "cli/watch.h"
#include "project/statedir.h"

#define ANSWER_MAX	(64u << 20)	/* an open tab's bench, or its frame */

/* Wait for fd to be ready for `events` until the deadline: 0 or -errno. */
static int
wait_fd(int fd, short events, int64_t deadline)
{
	struct pollfd	p = { fd, events, 0 };
	int64_t		left;
	int		n;

	for (;;) {
		if ((left = deadline - base_mono_ms()) <= 0)
			return -ETIMEDOUT;
		n = poll(&p, 1, (int)left);
		if (n > 0)
			return 0;
		if (n < 0 && errno != EINTR)
			return -errno;
	}
}

static int
dial(const struct watch_addr *a, int64_t deadline)
{
	struct addrinfo	 hints, *res = NULL, *ai;
	char		 port[16];
	int		 fd = -1, rc = -ECONNREFUSED, err;
	socklen_t	 len = sizeof(err);

	memset(&hints, 0, sizeof(hints));
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_NUMERICSERV;
	snprintf(port, sizeof(port), "%d", a->port);
	if (getaddrinfo(a->host, port, &hints, &res) != 0)
		return -EHOSTUNREACH;
	for (ai = res; ai != NULL; ai = ai->ai_next) {
		fd = socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK |
		    SOCK_CLOEXEC, ai->ai_protocol);
		if (fd < 0)
			continue;
		if (connect(fd, ai->ai_addr, ai->ai_addrlen) == 0 ||
		    (errno == EINPROGRESS &&
		    (rc = wait_fd(fd, POLLOUT, deadline)) == 0 &&
		    getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) == 0 &&
		    (rc = -err) == 0))
			break;
		if (rc == 0)
			rc = -errno;
		close(fd);
		fd = -1;
	}
	freeaddrinfo(res);
	return fd >= 0 ? fd : rc;
}

int
cli_daemon_get(const char *project_abs, const char *path, int timeout_ms,
    cJSON **out, char *why, size_t cap)
{
	struct watch_addr	 a;
	char			 file[PATH_MAX + 32];
	const char		*bad = NULL;
	int			 rc;

	*out = NULL;
	if ((rc = watch_daemon_find(project_abs, &a, file, sizeof(file),
	    &bad)) != 0) {
		snprintf(why, cap, "%s", rc == -ENOENT ? "no daemon serves "
		    "this project" : bad != NULL ? bad : strerror(-rc));
		return rc;
	}
	return cli_daemon_get_at(&a, path, timeout_ms, out, why, cap);
}

int
cli_daemon_get_at(const struct watch_addr *a, const char *path,
    int timeout_ms, cJSON **out, char *why, size_t cap)
{
	int	status, rc;

	rc = cli_daemon_request(a, "GET", path, NULL, NULL, timeout_ms,
	    &status, out, why, cap);
	if (rc == 0 && status != 200) {
		cJSON_Delete(*out);
		*out = NULL;
		snprintf(why, cap, "the daemon answered %d to GET %s", status,
		    path);
		return -EPROTO;
	}
	return rc;
}

int
cli_daemon_request(const struct watch_addr *ap, const char *method,
    const char *path, const char *token, const char *body, int timeout_ms,
    int *status, cJSON **out, char *why, size_t cap)
{
	const struct watch_addr	 a = *ap;
	char			 head[2048 + STATEDIR_TOKEN_LEN];
	char			*buf = NULL, *req = NULL, *ans;
	size_t			 len = 0, bcap = 0, blen = body ? strlen(body) : 0;
	int64_t			 deadline = base_mono_ms() + timeout_ms;
	int			 fd, rc, n;
	ssize_t			 got;

	*out = NULL;
	*status = 0;
	if ((fd = dial(&a, deadline)) < 0) {
		snprintf(why, cap, "cannot reach the daemon at %s:%d: %s",
		    a.host, a.port, strerror(-fd));
		return fd;
	}
	/* a write carries the token (the daemon's guard for a client that
	   is not a page: DESIGN §10) and a JSON body of known length */
	n = snprintf(head, sizeof(head), "%s %s HTTP/1.0\r\nHost: %s%s%s:%d"
	    "\r\nAccept: application/json\r\nConnection: close\r\n", method,
	    path, strchr(a.host, ':') ? "[" : "", a.host,
	    strchr(a.host, ':') ? "]" : "", a.port);
	if (token != NULL && n > 0 && (size_t)n < sizeof(head))
		n += snprintf(head + n, sizeof(head) - (size_t)n,
		    "Authorization: Bearer %s\r\n", token);
	if (body != NULL && n > 0 && (size_t)n < sizeof(head))
		n += snprintf(head + n, sizeof(head) - (size_t)n, "Content-Type: "
		    "application/json\r\nContent-Length: %zu\r\n", blen);
	if (n < 0 || (size_t)n + 3 > sizeof(head)) {
		rc = -ENAMETOOLONG;
		goto fail;
	}
	memcpy(head + n, "\r\n", 3);
	n += 2;
	if ((req = malloc((size_t)n + blen)) == NULL) {
		rc = -ENOMEM;
		goto fail;
	}
	memcpy(req, head, (size_t)n);
	if (blen > 0)
		memcpy(req + n, body, blen);
	for (len = 0; len < (size_t)n + blen; len += (size_t)got) {
		if ((rc = wait_fd(fd, POLLOUT, deadline)) != 0)
			goto fail;
		if ((got = send(fd, req + len, (size_t)n + blen - len,
		    MSG_NOSIGNAL)) < 0) {
			if (errno == EINTR || errno == EAGAIN)
				got = 0;
			else {
				rc = -errno;
				goto fail;
			}
		}
	}
	for (len = 0;;) {
		if (len + 4096 + 1 > bcap) {
			char	*nb;

			if (bcap >= ANSWER_MAX) {
				rc = -EFBIG;
				goto fail;
			}
			bcap = bcap ? bcap * 2 : 65536;
			if ((nb = realloc(buf, bcap)) == NULL) {
				rc = -ENOMEM;
				goto fail;
			}
			buf = nb;
		}
		if ((rc = wait_fd(fd, POLLIN, deadline)) != 0)
			goto fail;
		got = recv(fd, buf + len, bcap - len - 1, 0);
		if (got == 0)
			break;
		if (got < 0) {
			if (errno == EINTR || errno == EAGAIN)
				continue;
			rc = -errno;
			goto fail;
		}
		len += (size_t)got;
	}
	close(fd);
	fd = -1;
	buf[len] = '\0';
	if (sscanf(buf, "HTTP/%*d.%*d %d", status) != 1 ||
	    (ans = strstr(buf, "\r\n\r\n")) == NULL) {
		rc = -EPROTO;
		snprintf(why, cap, "the daemon's answer is not HTTP");
		goto out;
	}
	if ((*out = cJSON_Parse(ans + 4)) == NULL) {
		rc = -EPROTO;
		snprintf(why, cap, "the daemon's answer (%d) to %s %s is not "
		    "JSON", *status, method, path);
		goto out;
	}
	rc = 0;
	goto out;
fail:
	snprintf(why, cap, "%s %s to the daemon at %s:%d: %s", method, path,
	    a.host, a.port, strerror(-rc));
out:
	if (fd >= 0)
		close(fd);
	free(req);
	free(buf);
	return rc;
}
