/*
 * snapshot — the body of GET /api/sloptimize/ledger: the tail of
 * perf.jsonl (cut at a line start) and of fixes.jsonl, as
 *
 *   {"v":1,"perf":{"size","from","truncated","records":[…]},
 *    "fixes":{…},"skipped":N}
 *
 * Built on libuv's thread pool (it reads files and blocks), once per
 * change of the files; the caller keeps it and serves it from memory.
 */
#ifndef DAEMON_SNAPSHOT_H
#define DAEMON_SNAPSHOT_H

#include <stddef.h>
#include <stdint.h>

struct http_blob;

/*
 * Read the last `bytes` of each file (whole lines only, starting at a
 * line start) and build the body into a new blob (refs 1) with `pre`
 * bytes of headroom; `etag` gets a strong ETag (quoted) of the body.
 * A missing file is an empty one; one that is not a regular file is
 * refused (-PROJECT_ENOTREG) without blocking.  Returns 0, or -errno
 * (nothing to free).
 * Thread-safe: touches nothing but its arguments.
 */
int	snapshot_build(const char *perf, const char *fixes, uint64_t bytes,
	    size_t pre, struct http_blob **out, char etag[48]);

#endif
