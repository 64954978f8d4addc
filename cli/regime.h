/*
 * regime — what the game's timings run on now, for the verbs that show
 * timings (issues, report, the MCP tools): the regime the last heartbeats
 * of perf.jsonl name (seed §6.4: a software renderer's frame times are
 * not a GPU's and are not to be trusted; its counters are).
 *
 * The catalogue's rows do not keep a regime (a hitch names none of its
 * own yet), so the verbs say where the catalogue comes from in one line
 * instead: read from the end of the file, at most CLI_REGIME_TAIL bytes
 * and the last CLI_REGIME_BEATS heartbeats, robots' left out.  Windows
 * and timeline buckets carry their own regime (docs/json.md, "Regimes").
 */
#ifndef CLI_REGIME_H
#define CLI_REGIME_H

#include <stdio.h>

#include <cjson/cJSON.h>

#define CLI_REGIME_TAIL		(256 * 1024)
#define CLI_REGIME_BEATS	50

struct cli_regime {
	unsigned	 heartbeats;	/* looked at */
	unsigned	 hardware, software, unknown;
	/* "hardware", "software", "unknown" (all of one), "mixed", or NULL
	 * when no heartbeat was found */
	const char	*timings;
};

/*
 * Tally the regime of the last heartbeats of the perf.jsonl at `path`.
 * 0 (a file without heartbeats is 0 with timings NULL), or -errno when
 * the file cannot be read (out zeroed).
 */
int	cli_regime_recent(const char *path, struct cli_regime *out);

/* {timings, heartbeats, hardware, software, unknown, note?}: note only
 * when timings are software or mixed.  NULL without memory. */
cJSON	*cli_regime_json(const struct cli_regime *r);

/* The sentence said under a software or mixed regime ("" otherwise). */
const char *cli_regime_note(const struct cli_regime *r);

/* Print "<prefix><note>\n" to f when there is a note; returns 1 if said. */
int	cli_regime_say(FILE *f, const char *prefix, const struct cli_regime *r);

#endif
