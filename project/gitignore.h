/*
 * gitignore — the lines a game's .gitignore needs for sloptimize's
 * output, and adding them without touching a line of the user's
 * (docs/budgets.md, "What is committed").
 *
 * Ignored: what one machine makes and nobody reviews — bench runs
 * (.sloptimize/bench/), goldens (.sloptimize/goldens/), view snapshots,
 * profile.json, census.json, attribution.json, dev.json, temp files.
 * Never ignored: the ledgers (perf.jsonl, fixes.jsonl,
 * bench-history.jsonl, goldens.jsonl), the audit trail, nor
 * sloptimize.budgets.json.  The npm package copy `sloptimize init` keeps
 * in .sloptimize/npm/ is let back in when the user's text ignores *.tgz.
 *
 * `sloptimize init` and `sloptimize init-agent` both use it:
 * gitignore_plan, then show plan.added (and plan.warning), then
 * gitignore_write when the user agrees, then gitignore_plan_free.
 */
#ifndef PROJECT_GITIGNORE_H
#define PROJECT_GITIGNORE_H

#include <limits.h>
#include <stddef.h>

#define GITIGNORE_MAX_BYTES	(1024 * 1024)

/* The patterns, in the order they are added; NULL-terminated. */
extern const char *const gitignore_patterns[];

/*
 * The pure part.  old[0..len) is the file's text (NULL, 0: no file).
 * Returns 1 and *out (malloc'd: the old text unchanged, a newline if it
 * lacked a last one, then a comment and the missing patterns) when
 * something is missing; 0 and *out NULL when every pattern is there
 * already (or the user negated it: `!.sloptimize/bench/` is their
 * decision); -ENOMEM.  added[acap]: the patterns added, ", "-joined.
 * warning[wcap]: "" or what in the user's text keeps a ledger out of git
 * (".sloptimize/" whole, "*.jsonl", a ledger by name), which is left as
 * it is and said.  Lines are compared after trailing blanks and a CR are
 * dropped; a leading slash, and a directory's trailing slash-star or
 * slash-star-star, do not make another pattern.
 */
int	gitignore_merge(const char *old, size_t len, char **out, char *added,
	    size_t acap, char *warning, size_t wcap);

struct gitignore_plan {
	char	 path[PATH_MAX];	/* <project>/.gitignore */
	int	 exists;
	char	*text;			/* to write; NULL: nothing to do */
	char	 added[1024];
	char	 warning[512];
	char	 error[PATH_MAX + 128];	/* why it cannot be planned */
};

/* Read <project>/.gitignore and plan.  0, or -errno with plan->error
 * (not a regular file, over GITIGNORE_MAX_BYTES, unreadable). */
int	gitignore_plan(const char *project, struct gitignore_plan *p);
/* Write plan->text over the file, atomically (temp, fsync, rename), to
 * a symlink's target when it is one, keeping its mode.  0 (also when
 * there is nothing to write) or -errno. */
int	gitignore_write(const struct gitignore_plan *p);
void	gitignore_plan_free(struct gitignore_plan *p);

#endif
