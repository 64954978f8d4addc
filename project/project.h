/*
 * project — a game project's own files (DESIGN §4): where they are, and
 * folding its ledger from disk.  The CLI's verbs and the daemon's API both
 * read a project through here, so `sloptimize issues --json` and
 * `GET /api/sloptimize/issues?from=…` are one fold of the same bytes.
 *
 *   <project>/.sloptimize/perf.jsonl     the game's records (append-only)
 *   <project>/.sloptimize/fixes.jsonl    fixes and proposals (append-only)
 *
 * The writers (fix records, the recorder's batches) are in
 * project/append.h; the daemon's own state, outside the project tree, in
 * project/statedir.h.  Everything here blocks on the disk: the daemon
 * calls it from libuv's thread pool.
 */
#ifndef PROJECT_PROJECT_H
#define PROJECT_PROJECT_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>

#include "ledger/ledger.h"

#define PROJECT_DIR	".sloptimize"

/* <project>/.sloptimize/<name> into out.  0 or -ENAMETOOLONG. */
int	project_path(const char *project, const char *name, char *out,
	    size_t cap);

/* What project_fold read. */
struct project_fold_info {
	char		perf[PATH_MAX];		/* path of perf.jsonl */
	char		fixes[PATH_MAX];	/* path of fixes.jsonl */
	uint64_t	bytes;		/* perf bytes read */
	uint64_t	partial;	/* unterminated tail left unfolded */
	int		have_fixes;
};

/*
 * Fold a project's fixes.jsonl, then its perf.jsonl (complete lines only;
 * fixes first, because a fix is needed to judge every occurrence).
 * Returns 0 with *out the ledger (the caller destroys it), -ENOENT when
 * perf.jsonl does not exist (fixes alone are not a ledger), or another
 * negative errno.  `info` is filled in either way.
 */
int	project_fold(const char *project, const struct ledger_opts *o,
	    struct ledger **out, struct project_fold_info *info);

#endif
