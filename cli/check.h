/*
 * check — `sloptimize check`: every budget of sloptimize.budgets.json
 * against the game's measurement (profile.json, or a bench run first),
 * with the exit code the doctrine and CI depend on (docs/budgets.md):
 *
 *   0  every budget judged is inside (or none declared: a warning)
 *   1  a budget at level "error" is breached (a "warn" one only says so)
 *   2  the budgets file is malformed (every fault named by its key), or
 *      a usage error
 *   4  nothing to check against: no profile, one older than --max-age,
 *      a bench that could not run, or no budget could be judged
 *
 * check_run is the whole check as a document (schemas/check.json), so the
 * CLI and the MCP tool check_budgets give the same answer.  It blocks on
 * the disk (and on a bench): the MCP server runs it on its thread pool.
 */
#ifndef CLI_CHECK_H
#define CLI_CHECK_H

#include <stdint.h>
#include <stdio.h>

#include <cjson/cJSON.h>

#define CHECK_MAX_AGE_MS	30000	/* --max-age's default: 30 s */
#define CHECK_NO_MAX_AGE	(-1)

struct check_opts {
	const char	*project;
	int		 counters_only;
	const char	*bench;		/* a scene to bench first, or NULL */
	/* the size of that bench; 0: the bench's default (benchrun.h) */
	int		 bench_frames, bench_warmup, bench_runs;
	int64_t		 max_age_ms;	/* CHECK_NO_MAX_AGE: any age */
	int64_t		 now_ms;
};

/* The check: *out the document (NULL only when out of memory); returns
 * the exit code. */
int	check_run(const struct check_opts *o, cJSON **out);

/* The document for people, as seed §7 shows it. */
void	check_print(const cJSON *doc, FILE *out);

/* "30s", "500ms", "5m", "2h", "1d", a number of seconds, or "off"
 * (CHECK_NO_MAX_AGE).  0, or -1 for anything else. */
int	check_parse_age(const char *s, int64_t *ms);

/* The profile for the MCP tool get_profile: {exit, path, ageMs, profile}
 * or {exit: 4, path, error}; returns the exit. */
int	check_profile_doc(const char *project, int64_t now_ms, cJSON **out);

#endif
