/*
 * schema — create and check the sink's tables (see schema.h).
 *
 * The records table: one row per ledger record, keyed by (machine,
 * project, stream, generation, offset) in a ReplacingMergeTree, so rows
 * sent twice become one at merge time and every query reads FINAL.
 * Partitioned by the month of the record's `at` (the `day` column, the
 * Unix epoch for a record without one): a resent row has the same `at`,
 * so it lands in the same partition as its first copy — deduplication
 * only works within a partition — and old months can be dropped whole
 * (docs/team.md, retention: 18.16 has no TTL).
 *
 * With a cluster, records_all is a Distributed table over every shard's
 * records, sharded by (machine, project): all the rows of one project on
 * one machine — and all copies of one key — live on one shard, where
 * FINAL can see them together.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "sink/schema.h"

void
schema_meta_sql(const char *db, char *out, size_t cap)
{
	snprintf(out, cap, "SELECT key, value FROM `%s`.meta FINAL "
	    "FORMAT JSONEachRow", db);
}

void
schema_table(const char *db, const struct schema_info *si, char *out,
    size_t cap)
{
	snprintf(out, cap, "`%s`.`%s`", db,
	    si->table[0] ? si->table : "records");
}

int
schema_is_missing(const char *err)
{
	return strstr(err, "Code: 60,") != NULL ||
	    strstr(err, "Code: 81,") != NULL;
}

int
schema_meta_parse(const char *body, struct schema_info *si, char *err,
    size_t cap)
{
	const char	*p = body, *nl;

	memset(si, 0, sizeof(*si));
	while (p != NULL && *p != '\0') {
		cJSON		*o;
		const char	*k, *v;

		nl = strchr(p, '\n');
		o = cJSON_ParseWithLength(p, nl ? (size_t)(nl - p) : strlen(p));
		p = nl ? nl + 1 : NULL;
		if (o == NULL)
			continue;
		k = cJSON_GetStringValue(cJSON_GetObjectItem(o, "key"));
		v = cJSON_GetStringValue(cJSON_GetObjectItem(o, "value"));
		if (k != NULL && v != NULL) {
			if (strcmp(k, "schema") == 0)
				si->version = atoi(v);
			else if (strcmp(k, "table") == 0)
				snprintf(si->table, sizeof(si->table), "%s", v);
			else if (strcmp(k, "cluster") == 0)
				snprintf(si->cluster, sizeof(si->cluster), "%s",
				    v);
		}
		cJSON_Delete(o);
	}
	if (si->version == 0) {
		snprintf(err, cap, "no sloptimize schema in this database: "
		    "run `sloptimize sink init --sink URL`");
		return -ENOENT;
	}
	if (si->version > SCHEMA_VERSION) {
		snprintf(err, cap, "the tables have schema %d, newer than this "
		    "sloptimize's %d: upgrade sloptimize; nothing is written",
		    si->version, SCHEMA_VERSION);
		return -EPROTONOSUPPORT;
	}
	if (si->version < SCHEMA_VERSION) {
		snprintf(err, cap, "the tables have schema %d, older than "
		    "%d: run `sloptimize sink init` to upgrade them",
		    si->version, SCHEMA_VERSION);
		return -ENOENT;
	}
	if (si->table[0] == '\0')
		snprintf(si->table, sizeof(si->table), "records");
	return 0;
}

/* The columns of schema 1; the comment of each is its meaning. */
static const char RECORDS_COLUMNS[] =
    "machine String COMMENT 'machine-id of the sending machine', "
    "project String COMMENT 'the project id: the state directory name', "
    "stream String COMMENT 'perf or fixes', "
    "generation UInt64 COMMENT 'the sink generation of the file content', "
    "offset UInt64 COMMENT 'byte offset of the line in its generation', "
    "type String, "
    "at_ms Int64 COMMENT 'the record''s at, ms since the epoch (0: none)', "
    "has_at UInt8, "
    "day Date COMMENT 'the day of at: the partition', "
    "build String, "
    "automated UInt8, "
    "footprint_id String COMMENT 'by the fold''s reading rule; empty: not "
    "an incident', "
    "footprint_key String, "
    "malformed UInt8 COMMENT 'a stamped v1 id that was re-derived', "
    "phase String, "
    "ctx String, "
    "value Float64 COMMENT 'hitch frameMs, usermark worst[0].frameMs, "
    "jitter units', "
    "has_value UInt8, "
    "unit String, "
    "verdict String COMMENT 'the top classification as JSON; empty: none', "
    "record String COMMENT 'the line as written'";

static int
run(const struct ch_url *u, const char *sql, long timeout_ms,
    struct ch_buf *out, char *err, size_t cap)
{
	struct ch_buf	tmp = { 0 };
	int		rc;

	rc = ch_query(u, sql, NULL, timeout_ms, out ? out : &tmp, err, cap);
	ch_buf_free(&tmp);
	return rc;
}

int
schema_init(const struct ch_url *u, const char *cluster, long timeout_ms,
    struct schema_info *si, char *err, size_t cap)
{
	char		 sql[4096], why[CH_ERR_MAX];
	struct ch_buf	 body = { 0 };
	struct schema_info cur;
	int		 rc;

	memset(si, 0, sizeof(*si));
	if (cluster != NULL && *cluster != '\0') {
		size_t	i;

		for (i = 0; cluster[i]; i++)
			if (!(cluster[i] == '_' || cluster[i] == '-' ||
			    (cluster[i] >= '0' && cluster[i] <= '9') ||
			    (cluster[i] >= 'a' && cluster[i] <= 'z') ||
			    (cluster[i] >= 'A' && cluster[i] <= 'Z')) ||
			    i >= sizeof(si->cluster) - 1) {
				snprintf(err, cap, "--cluster: a name of "
				    "letters, digits, - and _");
				return -EINVAL;
			}
	}
	snprintf(sql, sizeof(sql), "CREATE DATABASE IF NOT EXISTS `%s`", u->db);
	if ((rc = run(u, sql, timeout_ms, NULL, err, cap)) != 0)
		return rc;
	snprintf(sql, sizeof(sql), "CREATE TABLE IF NOT EXISTS `%s`.meta "
	    "(key String, value String, at DateTime) "
	    "ENGINE = ReplacingMergeTree(at) ORDER BY key", u->db);
	if ((rc = run(u, sql, timeout_ms, NULL, err, cap)) != 0)
		return rc;
	/* A newer schema is left alone: check before creating anything in
	 * it. */
	schema_meta_sql(u->db, sql, sizeof(sql));
	if ((rc = run(u, sql, timeout_ms, &body, err, cap)) != 0) {
		ch_buf_free(&body);
		return rc;
	}
	rc = schema_meta_parse(body.p ? body.p : "", &cur, why, sizeof(why));
	ch_buf_free(&body);
	if (rc == -EPROTONOSUPPORT) {
		snprintf(err, cap, "%s", why);
		return rc;
	}
	snprintf(sql, sizeof(sql), "CREATE TABLE IF NOT EXISTS `%s`.records "
	    "(%s) ENGINE = ReplacingMergeTree PARTITION BY toYYYYMM(day) "
	    "ORDER BY (machine, project, stream, generation, offset)", u->db,
	    RECORDS_COLUMNS);
	if ((rc = run(u, sql, timeout_ms, NULL, err, cap)) != 0)
		return rc;
	snprintf(si->table, sizeof(si->table), "records");
	if (cluster != NULL && *cluster != '\0') {
		snprintf(sql, sizeof(sql), "CREATE TABLE IF NOT EXISTS "
		    "`%s`.records_all AS `%s`.records ENGINE = Distributed("
		    "`%s`, `%s`, records, cityHash64(machine, project))",
		    u->db, u->db, cluster, u->db);
		if ((rc = run(u, sql, timeout_ms, NULL, err, cap)) != 0)
			return rc;
		snprintf(si->table, sizeof(si->table), "records_all");
		snprintf(si->cluster, sizeof(si->cluster), "%s", cluster);
	} else if (cur.cluster[0] != '\0') {
		/* init without --cluster on the entry server of a cluster
		 * keeps the cluster: an idempotent re-run changes nothing */
		snprintf(si->table, sizeof(si->table), "%s", cur.table);
		snprintf(si->cluster, sizeof(si->cluster), "%s", cur.cluster);
	}
	snprintf(sql, sizeof(sql), "INSERT INTO `%s`.meta (key, value, at) "
	    "VALUES ('schema', '%d', now()), ('table', '%s', now()), "
	    "('cluster', '%s', now())", u->db, SCHEMA_VERSION, si->table,
	    si->cluster);
	if ((rc = run(u, sql, timeout_ms, NULL, err, cap)) != 0)
		return rc;
	si->version = SCHEMA_VERSION;
	snprintf(err, cap, "database %s ready: schema %d, rows go to %s%s%s",
	    u->db, SCHEMA_VERSION, si->table, si->cluster[0] ?
	    " on cluster " : "", si->cluster);
	return 0;
}
