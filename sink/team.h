/*
 * team — the team's catalogue: the local catalogue's shape (DESIGN §7,
 * schemas/issues.json, plus `machines` on every row) over every record
 * every machine sent, computed in ClickHouse and finished in C.
 *
 * ClickHouse does what it is good at — one pass over the deduplicated
 * rows (FINAL) grouping by footprint: count, first, last, machines, the
 * builds in first-seen order, the worst value and when, the last
 * occurrence's type, phase, situation and verdict.  What the fold decides
 * with rules — status and the fixes' `fixBuild` (DESIGN §7: the build
 * order, "the first build after the fix", "the latest fix decides") — is
 * not written a second time in SQL: the aggregates are replayed into a
 * real struct ledger as a few synthetic records (one per build, in the
 * team's build order; one per row and build, with the row's footprint;
 * the fix records as written) and the fold's own ledger_issues_json()
 * gives status, fixes and proposals.  One definition of status.
 *
 * Order across machines: records are ordered by `at`, then machine,
 * project, generation and byte offset (a record without `at` first).
 * "First seen" and "last occurrence" mean that order; builds are ordered
 * by their first record in it (docs/team.md).
 */
#ifndef SINK_TEAM_H
#define SINK_TEAM_H

#include <stdint.h>

#include <cjson/cJSON.h>

enum team_q { TEAM_Q_BUILDS, TEAM_Q_ROWS, TEAM_Q_FIXES, TEAM_Q_COUNTS,
	      TEAM_NQ };

struct team_query {
	const char	*type;		/* NULL: every type */
	const char	*status;	/* NULL: every status */
	size_t		 limit;		/* 0: all */
	int		 include_automated;
	int64_t		 from_ms, to_ms;	/* LEDGER_NO_TIME: open */
};

/* One of the four statements for `table` (qualified, e.g.
 * "`sloptimize`.`records`"), JSONEachRow.  malloc'd; NULL on ENOMEM. */
char	*team_sql(enum team_q which, const char *table,
	    const struct team_query *q);

/*
 * The catalogue from the four answers (JSONEachRow bodies, in enum
 * order).  NULL with a sentence in err on a malformed answer or ENOMEM.
 */
cJSON	*team_catalogue(const char *const answers[TEAM_NQ],
	    const struct team_query *q, int64_t now_ms, char *err, size_t cap);

/* The settings every team query needs: 64-bit integers as JSON numbers. */
#define TEAM_SETTINGS	"output_format_json_quote_64bit_integers=0"

#endif
