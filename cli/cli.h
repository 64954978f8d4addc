/*
 * cli — what the verbs of `sloptimize` share: exit codes, the option
 * parser, time phrases and JSON output.  cli/ is a leaf: nothing outside
 * it includes its headers.  A project's files are read and written
 * through project/, the same code the daemon uses.
 */
#ifndef CLI_CLI_H
#define CLI_CLI_H

#include <stdint.h>
#include <stdio.h>

#include <cjson/cJSON.h>

#include "ledger/ledger.h"
#include "project/project.h"

/* Exit codes (DESIGN §11). */
#define EXIT_OK		0
#define EXIT_FINDINGS	1
#define EXIT_USAGE	2
#define EXIT_NOTHING	4

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

/*
 * A whole-number option: 0 with *out, or -1 after saying on stderr
 * "sloptimize VERB: --NAME is a whole number from LO to HI, not 'S'".
 * S NULL (not given) leaves *out and returns 0.
 */
int	cli_whole(const char *verb, const char *name, const char *s, long lo,
	    long hi, long *out);

/* "3h ago", "12s ago", "just now" */
void	format_ago(int64_t ms, char *out, size_t cap);

/* Print a cJSON tree to stdout, pretty, with a final newline. */
int	print_json(const cJSON *o);

/* o's member k (NULL: none, or o is not an object), and its value as a
 * number or a string, dflt when it is absent or of another type: for
 * reading a document the page runtime answered. */
const cJSON	*cli_get(const cJSON *o, const char *k);
double		 cli_num(const cJSON *o, const char *k, double dflt);
const char	*cli_str(const cJSON *o, const char *k, const char *dflt);

/* o.source = {perf, fixes, bytes, partialBytes}: which files an answer
 * was folded from, and how much of them (the CLI's --json and the MCP
 * tools say it alike). */
void	cli_add_source(cJSON *o, const struct project_fold_info *fi);

#endif
