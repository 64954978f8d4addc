/*
 * static — the panel's files (page-runtime/): where they are, which URL
 * paths may name them, and reading one off the loop.
 *
 * The root is, in order: --page-dir; <directory of the executable>/../
 * page-runtime when it has an index.html or a panel.js (a build tree:
 * build/sloptimized next to page-runtime/); SLOPTIMIZE_SHARE/page-runtime
 * (make install).  A file is served only if its real path (symlinks
 * resolved) lies under the root's real path.
 */
#ifndef DAEMON_STATIC_H
#define DAEMON_STATIC_H

#include <stddef.h>

struct http_blob;

/* Find the root; out gets its real path ("" if none), *why a phrase for
 * the log and the status endpoint.  Can't fail. */
void	static_find_root(const char *configured, char *out, size_t cap,
	    const char **why);

/*
 * Map a decoded URL path ("/", "/page-runtime/panel.js") to a path
 * relative to the root ("index.html", "panel.js").  Returns 0, or -1 when
 * the path is not one we serve (empty, ".", "..", hidden or backslashed
 * segments, NUL, too long): the caller answers 404.
 */
int	static_map(const char *urlpath, char *rel, size_t cap);

/*
 * On the thread pool: read root/rel into a new blob (refs 1, `pre` bytes
 * of headroom) after checking that its real path is a regular file under
 * root.  etag gets a strong ETag.  Returns 0, -ENOENT (missing, a
 * directory, or outside the root), -EFBIG (over 16 MiB), or -errno.
 */
int	static_read(const char *root, const char *rel, size_t pre,
	    struct http_blob **out, char etag[48]);

/* Content-Type by extension; application/octet-stream if unknown. */
const char *static_type(const char *rel);

#endif
