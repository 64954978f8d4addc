/*
 * cli — the pieces of `sloptimize` that other programs reuse: reading a
 * project's ledger through the fold, and appending a fix record.  The
 * daemon links these too, so a fix posted to the API and one typed at the
 * shell take the same path.
 */
#ifndef CLI_CLI_H
#define CLI_CLI_H

#include <stdint.h>
#include <stdio.h>

#include <cjson/cJSON.h>

#include "ledger/ledger.h"

/* Exit codes (DESIGN §11). */
#define EXIT_OK		0
#define EXIT_FINDINGS	1
#define EXIT_USAGE	2
#define EXIT_NOTHING	4

struct fold_info {
	char		perf[4096];	/* path of perf.jsonl */
	char		fixes[4096];	/* path of fixes.jsonl */
	uint64_t	bytes;		/* perf bytes read */
	uint64_t	partial;	/* unterminated tail left unfolded */
	int		have_fixes;
};

/* Options of a verb: a flag sets an int to 1, an argument a string. */
enum { OPT_FLAG, OPT_ARG };

struct cli_opt {
	const char	*name;		/* without the leading "--" */
	int		 kind;
	void		*dst;		/* int * for flags, const char ** */
};

/* Options every verb shares. */
struct cli_common {
	const char	*project;	/* --project DIR (default ".") */
	int		 json;		/* --json */
	int64_t		 now_ms;	/* --now ISO, for reproducible output */
};

/*
 * Parse argv[1..] (argv[0] is the verb) against the verb's options plus
 * the common ones; --name=value and --name value both work.  Positional
 * arguments are collected in pos (up to *npos; NULL: none allowed).
 * Returns -1 to go on, or an exit code: 0 after --help (usage printed),
 * 2 on a usage error (said on stderr).
 */
int	cli_parse(int argc, char **argv, const struct cli_opt *opts,
	    struct cli_common *c, const char *usage, const char **pos,
	    int *npos);

/* <project>/.sloptimize/<name> into out. */
void	project_path(const char *project, const char *name, char *out,
	    size_t cap);

/*
 * Fold a project's perf.jsonl and fixes.jsonl (complete lines only).
 * Returns 0, -ENOENT when perf.jsonl does not exist (fixes alone are not a
 * ledger), or another negative errno.  *out is the ledger on success.
 */
int	ledger_fold_project(const char *project, const struct ledger_opts *o,
	    struct ledger **out, struct fold_info *info);

/*
 * Validate a fix record and append it to <project>/.sloptimize/fixes.jsonl
 * as one line: an exclusive lock, one write(2), fsync.  Fills in `type`,
 * `id` (8 random hex digits) and `at` when missing and normalises
 * `status`.  Returns 0, or a negative errno with *why set to a static
 * message (-EINVAL for a record that is not a valid fix).
 */
int	fix_append(const char *project, cJSON *rec, const char **why);

/* "3h ago", "12s ago", "just now" */
void	format_ago(int64_t ms, char *out, size_t cap);

/* Print a cJSON tree to stdout, pretty, with a final newline. */
int	print_json(const cJSON *o);

#endif
