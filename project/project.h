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

#include <sys/types.h>

#include <errno.h>
#include <limits.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "ledger/ledger.h"

#define PROJECT_DIR	".sloptimize"

/* <project>/.sloptimize/<name> into out.  0 or -ENAMETOOLONG. */
int	project_path(const char *project, const char *name, char *out,
	    size_t cap);

/*
 * A ledger file that is not a regular file — a FIFO, a socket, a device, a
 * directory — is refused with -PROJECT_ENOTREG: a reader of a FIFO would
 * wait forever for a writer, and a thread-pool thread stuck there stops
 * the daemon's API.  project_strerror() says it in words.
 */
#define PROJECT_ENOTREG	ESPIPE

/*
 * open(2) a ledger file without ever blocking (O_NONBLOCK, then fstat):
 * anything but a regular file is refused.  flags are O_RDONLY, or
 * O_RDWR | O_APPEND | O_CREAT (with mode) for a writer; O_CLOEXEC is
 * added.  0 with *fd open (blocking again), -ENOENT, -PROJECT_ENOTREG or
 * -errno.
 */
int	project_open(const char *path, int flags, mode_t mode, int *fd);
/* strerror, with PROJECT_ENOTREG said as what it means here. */
const char *project_strerror(int rc);

/* What project_fold read. */
struct project_fold_info {
	char		perf[PATH_MAX];		/* path of perf.jsonl */
	char		fixes[PATH_MAX];	/* path of fixes.jsonl */
	uint64_t	bytes;		/* perf bytes read */
	uint64_t	partial;	/* unterminated tail left unfolded */
	int		have_fixes;
	const char	*failed;	/* on error: perf or fixes, or NULL */
	/* project_fold_resume: */
	int		resumed;	/* the fold came from a checkpoint */
	uint64_t	resumed_at;	/* its perf.jsonl offset */
	char		resume_why[320];	/* why not, when one was asked */
};

/*
 * Fold a project's fixes.jsonl, then its perf.jsonl (complete lines only;
 * fixes first, because a fix is needed to judge every occurrence).
 * Returns 0 with *out the ledger (the caller destroys it), -ENOENT when
 * perf.jsonl does not exist (fixes alone are not a ledger),
 * -PROJECT_ENOTREG when either file is not a regular file, or another
 * negative errno.  `info` is filled in either way.
 */
int	project_fold(const char *project, const struct ledger_opts *o,
	    struct ledger **out, struct project_fold_info *info);
/*
 * The same fold, given up as soon as *stop is non-zero, checked between
 * reads of at most 1 MiB (so between the two files too): -ECANCELED, and
 * nothing is kept.  For the daemon's folds whose client has left
 * (daemon/jobs.h).
 */
int	project_fold_stoppable(const char *project, const struct ledger_opts *o,
	    const atomic_int *stop, struct ledger **out,
	    struct project_fold_info *info);

/*
 * The same fold, from a daemon's checkpoint when one serves
 * (project/checkpoint.h): `ckpt` is its path (NULL: none), and when it
 * holds a fold of these very files with these options, the fold is read
 * from it and only the bytes after it are folded — O(new bytes).  When
 * it does not (no file, torn, another version, other options, a file
 * replaced, truncated or rewritten since, one issue's occurrences asked
 * for) the project is folded from byte 0; info->resume_why says why.
 * Either way the ledger answers the same, byte for byte.
 *
 * PROJECT_RESUME_ANY_TIMELINE: `o` does not keep the timeline, but a
 * checkpoint that does (the daemon's) may serve it: the catalogue does
 * not depend on it (the daemon's /issues is rendered from such a fold).
 */
#define PROJECT_RESUME_ANY_TIMELINE	1
int	project_fold_resume(const char *project, const char *ckpt,
	    const struct ledger_opts *o, unsigned flags, struct ledger **out,
	    struct project_fold_info *info);

#endif
