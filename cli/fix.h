/*
 * fix — a fix or a proposal as `sloptimize fix` and the MCP server's
 * record_fix / propose_fix make it: the measured windows, then the one
 * writer (project_fix_append: the record's checks, the unknown-footprint
 * rule, the lock).  One function, so the two can never judge a fix
 * differently.
 */
#ifndef CLI_FIX_H
#define CLI_FIX_H

#include <stdatomic.h>
#include <stddef.h>

#include <cjson/cJSON.h>

struct cli_fix {
	const char	*status;	/* "applied" or "proposed" */
	const char	*title;		/* required */
	const char	*issue, *solution, *commit;	/* or NULL */
	const cJSON	*footprints;	/* array of 8-hex strings, or NULL */
	const cJSON	*files;		/* array of strings, or NULL */
	const char	*before, *after; /* window specs, or NULL */
	int		 force;		/* record unknown footprints anyway */
	const atomic_int *gone;		/* set when the asker left, or NULL */
};

/*
 * Build the record and append it to <project>/.sloptimize/fixes.jsonl.
 * Without `after` the record's after is null: the fold measures it once
 * a build that started after the fix has run (docs/json.md), and `before`
 * defaults to the latest build with heartbeats, the one that ran the old
 * code.  With `after`, that window is written now and `before` defaults
 * to the build before the latest.  Returns 0 with *out the record as
 * written (the caller deletes it), or a negative errno with why set:
 * -EINVAL for a bad window or a record the writer refuses (an unknown
 * footprint among them), else the writer's errno.
 */
int	cli_fix_record(const char *project, const struct cli_fix *f,
	    cJSON **out, char *why, size_t cap);

#endif
