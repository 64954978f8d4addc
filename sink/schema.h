/*
 * schema — the sink's tables in ClickHouse, and their version.
 *
 * ClickHouse 18.16 (Debian's) has column comments but no table comments,
 * so the version lives in a small meta table beside the data, `DB.meta`
 * (key, value, at) in a ReplacingMergeTree, read with FINAL:
 *
 *   schema   the version of the tables' shape (SCHEMA_VERSION)
 *   table    where rows go and queries read: records, or records_all (the
 *            Distributed table over the cluster's shards)
 *   cluster  the cluster's name, when there is one
 *
 * A sloptimize that finds a newer schema refuses to write (the daemon's
 * sink stops sending and says so in /status) and `sink init` refuses to
 * touch it: an older binary must never write rows a newer schema would
 * misread.
 */
#ifndef SINK_SCHEMA_H
#define SINK_SCHEMA_H

#include <stddef.h>

#include "sink/clickhouse.h"

#define SCHEMA_VERSION	1

struct schema_info {
	int	version;		/* 0: no meta table or no version */
	char	table[64];		/* "records" or "records_all" */
	char	cluster[128];		/* "" without one */
};

/* The statement that reads DB.meta (JSONEachRow). */
void	schema_meta_sql(const char *db, char *out, size_t cap);

/*
 * Read schema_meta_sql's answer.  0 (a usable schema: version ==
 * SCHEMA_VERSION), -ENOENT (no version: run `sloptimize sink init`),
 * -EPROTONOSUPPORT (newer than this binary), -EINVAL (unreadable); err
 * gets a sentence for each failure.
 */
int	schema_meta_parse(const char *body, struct schema_info *si, char *err,
	    size_t cap);

/* Is ClickHouse's error text the one for a missing database or table?
 * (Codes 81 and 60.)  Then the answer is "run sink init", not a retry. */
int	schema_is_missing(const char *err);

/*
 * `sloptimize sink init`: create the database, the meta table, the
 * records table and, with a cluster, the Distributed table over it, then
 * record the version; every statement is IF NOT EXISTS, so running it
 * again changes nothing.  Blocking.  0, -EPROTONOSUPPORT (a newer schema
 * is there: nothing was changed), or -errno from the transport; err
 * says what happened.  `created` (may be NULL) gets the table rows go to.
 */
int	schema_init(const struct ch_url *u, const char *cluster,
	    long timeout_ms, struct schema_info *out, char *err, size_t cap);

/* The table rows go to, qualified: "`db`.`records`". */
void	schema_table(const char *db, const struct schema_info *si, char *out,
	    size_t cap);

#endif
