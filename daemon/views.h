/*
 * views — the view snapshots the recorder makes of its hitches (seed §5,
 * docs/attribute.md "A hitch replayed"), kept as
 * .sloptimize/snapshots/<ref>.json for `sloptimize repro`.
 *
 * A snapshot is what the page says it is: a JSON object with v 1,
 * fidelity "view", a ref `hitch-<page id>-<frame>` and 1 to VIEWS_FRAMES
 * frames.  Nothing in it is interpreted here; the CLI restores it.  The
 * directory is bounded: past VIEWS_KEEP files the oldest go.
 *
 * Runs on the thread pool (it writes and fsyncs); no libwebsockets.
 */
#ifndef DAEMON_VIEWS_H
#define DAEMON_VIEWS_H

#include <stddef.h>

#define VIEWS_DIR	"snapshots"
#define VIEWS_KEEP	256		/* files kept; the oldest go first */
#define VIEWS_FRAMES	64		/* frames a snapshot may hold */
#define VIEWS_BODY_MAX	(64 * 1024)	/* bytes a snapshot may take */
#define VIEWS_REF_MAX	64

/*
 * Check a snapshot's body; on success its ref into ref[VIEWS_REF_MAX].
 * 0, or -EINVAL with why said in words.
 */
int	views_check(const char *body, size_t len, char *ref, char *why,
	    size_t cap);

/*
 * Write the body as <project>/.sloptimize/snapshots/<ref>.json (atomic:
 * the whole file or the old one), then remove the oldest past
 * VIEWS_KEEP; *pruned says how many went.  0 or -errno (why in words).
 */
int	views_write(const char *project, const char *ref, const char *body,
	    size_t len, unsigned *pruned, char *why, size_t cap);

#endif
