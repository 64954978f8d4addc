/*
 * static — the panel's files (see static.h).
 *
 * Two fences against path traversal.  libwebsockets has already decoded
 * %xx and collapsed "/../" in the URL before we see it; static_map() then
 * refuses any segment that is empty, "." or "..", starts with a dot, or
 * holds a backslash, so no URL can name a path outside the root by
 * itself.  A symlink inside the root could still point out of it, so
 * static_read() resolves the real path and serves it only if it lies
 * under the root's real path.
 */
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <uv.h>

#include "daemon/http.h"
#include "daemon/snapshot.h"
#include "daemon/static.h"
#include "ledger/footprint.h"

#define STATIC_MAX	(16u << 20)

#ifndef SLOPTIMIZE_SHARE
#define SLOPTIMIZE_SHARE	"/usr/local/share/sloptimize"
#endif

static int
has_panel(const char *dir)
{
	char		p[PATH_MAX + 32];
	struct stat	st;

	snprintf(p, sizeof(p), "%s/index.html", dir);
	if (stat(p, &st) == 0)
		return 1;
	snprintf(p, sizeof(p), "%s/panel.js", dir);
	return stat(p, &st) == 0;
}

void
static_find_root(const char *configured, char *out, size_t cap,
    const char **why)
{
	char	exe[PATH_MAX], cand[PATH_MAX + 64], real[PATH_MAX], *slash;
	size_t	n = sizeof(exe);

	out[0] = '\0';
	if (configured != NULL && configured[0] != '\0') {
		*why = "--page-dir";
		if (realpath(configured, real) != NULL)
			snprintf(out, cap, "%s", real);
		return;
	}
	if (uv_exepath(exe, &n) == 0 && (slash = strrchr(exe, '/')) != NULL) {
		*slash = '\0';
		snprintf(cand, sizeof(cand), "%s/../page-runtime", exe);
		if (realpath(cand, real) != NULL && has_panel(real)) {
			*why = "beside the program";
			snprintf(out, cap, "%s", real);
			return;
		}
		/* PREFIX/bin/sloptimized serves PREFIX/share/…, wherever
		 * PREFIX was when it was built: a copied or relocated
		 * install still finds its own panel. */
		snprintf(cand, sizeof(cand),
		    "%s/../share/sloptimize/page-runtime", exe);
		if (realpath(cand, real) != NULL && has_panel(real)) {
			*why = "the program's share directory";
			snprintf(out, cap, "%s", real);
			return;
		}
	}
	snprintf(cand, sizeof(cand), "%s/page-runtime", SLOPTIMIZE_SHARE);
	if (realpath(cand, real) != NULL) {
		*why = "installed share directory";
		snprintf(out, cap, "%s", real);
		return;
	}
	/* Nothing yet: a build tree whose panel is still being written
	 * serves it as soon as it appears. */
	if (uv_exepath(exe, &(size_t){ sizeof(exe) }) == 0 &&
	    (slash = strrchr(exe, '/')) != NULL) {
		*slash = '\0';
		snprintf(cand, sizeof(cand), "%s/../page-runtime", exe);
		if (realpath(cand, real) != NULL) {
			*why = "beside the program (no panel in it yet)";
			snprintf(out, cap, "%s", real);
			return;
		}
	}
	*why = "not found";
}

int
static_map(const char *urlpath, char *rel, size_t cap)
{
	const char	*p, *seg;
	size_t		 n;

	if (strcmp(urlpath, "/") == 0 || strcmp(urlpath, "/index.html") == 0)
		p = "index.html";
	else if (strncmp(urlpath, "/page-runtime/", 14) == 0)
		p = urlpath + 14;
	else
		return -1;
	if ((n = strlen(p)) == 0 || n >= cap)
		return -1;
	for (seg = p; *seg != '\0'; ) {
		const char	*e = strchr(seg, '/');
		size_t		 len = e ? (size_t)(e - seg) : strlen(seg);

		if (len == 0 || seg[0] == '.' || memchr(seg, '\\', len) ||
		    memchr(seg, ':', len))
			return -1;
		seg += len;
		if (*seg == '/')
			seg++;
	}
	if (p[n - 1] == '/')
		return -1;
	memcpy(rel, p, n + 1);
	return 0;
}

int
static_read(const char *root, const char *rel, size_t pre,
    struct http_blob **out, char etag[48])
{
	char		 path[PATH_MAX * 2], real[PATH_MAX];
	struct stat	 st;
	struct http_blob	*b;
	size_t		 rootlen = strlen(root), got = 0;
	ssize_t		 r;
	int		 fd, rc;

	*out = NULL;
	if (rootlen == 0)
		return -ENOENT;
	snprintf(path, sizeof(path), "%s/%s", root, rel);
	if (realpath(path, real) == NULL)
		return errno == ENOTDIR ? -ENOENT : -errno;
	if (strncmp(real, root, rootlen) != 0 || real[rootlen] != '/')
		return -ENOENT;		/* a symlink out of the root */
	/* O_NONBLOCK: a FIFO planted in the directory must not hang us */
	if ((fd = open(real, O_RDONLY | O_CLOEXEC | O_NOFOLLOW |
	    O_NONBLOCK)) == -1)
		return -errno;
	if (fstat(fd, &st) == -1) {
		rc = -errno;
		goto out;
	}
	if (!S_ISREG(st.st_mode)) {
		rc = -ENOENT;
		goto out;
	}
	if ((uint64_t)st.st_size > STATIC_MAX) {
		rc = -EFBIG;
		goto out;
	}
	if ((b = malloc(sizeof(*b) + pre + (size_t)st.st_size + 1)) == NULL) {
		rc = -ENOMEM;
		goto out;
	}
	while (got < (size_t)st.st_size) {
		r = read(fd, b->data + pre + got, (size_t)st.st_size - got);
		if (r == -1 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		got += (size_t)r;
	}
	b->refs = 1;
	b->len = got;
	snprintf(etag, 48, "\"s%016llx%llx\"",
	    (unsigned long long)fnv1a64(b->data + pre, got),
	    (unsigned long long)got);
	*out = b;
	rc = 0;
out:
	close(fd);
	return rc;
}

const char *
static_type(const char *rel)
{
	static const struct {
		const char	*ext, *type;
	} types[] = {
		{ ".js", "text/javascript; charset=utf-8" },
		{ ".mjs", "text/javascript; charset=utf-8" },
		{ ".html", "text/html; charset=utf-8" },
		{ ".css", "text/css; charset=utf-8" },
		{ ".json", "application/json" },
		{ ".map", "application/json" },
		{ ".svg", "image/svg+xml" },
		{ ".png", "image/png" },
		{ ".jpg", "image/jpeg" },
		{ ".webp", "image/webp" },
		{ ".ico", "image/x-icon" },
		{ ".woff2", "font/woff2" },
		{ ".wasm", "application/wasm" },
		{ ".txt", "text/plain; charset=utf-8" },
		{ ".md", "text/plain; charset=utf-8" },
	};
	const char	*dot = strrchr(rel, '.');
	size_t		 i;

	if (dot != NULL && strchr(dot, '/') == NULL)
		for (i = 0; i < sizeof(types) / sizeof(types[0]); i++)
			if (strcmp(dot, types[i].ext) == 0)
				return types[i].type;
	return "application/octet-stream";
}
