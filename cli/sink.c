/*
 * sink — `sloptimize sink init` and `sloptimize issues --team` (see
 * sink.h).  Both talk to ClickHouse directly over HTTP, blocking: a
 * command line may wait, the daemon never does (sink/sink.c).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/sink.h"
#include "ledger/footprint.h"
#include "sink/clickhouse.h"
#include "sink/schema.h"
#include "sink/team.h"

#define CLI_TIMEOUT_MS	60000L

static const char sink_usage[] =
"usage: sloptimize sink init --sink URL [--cluster NAME] [--json]\n"
"Create the database and tables the daemons' sinks write to (idempotent).\n"
"  --sink URL       http://HOST:8123/?database=DB (or $SLOPTIMIZE_SINK)\n"
"  --cluster NAME   also a Distributed table over the shards of NAME\n"
"                   (run `sink init` on every shard first; docs/team.md)\n";

static const char team_usage[] =
"usage: sloptimize issues --team [--sink URL] [--type T] [--status S]\n"
"                         [--from ISO] [--to ISO] [--include-automated]\n"
"                         [--limit N] [--json]\n"
"The team's catalogue: every machine's records in ClickHouse, one row per\n"
"footprint, with the number of machines it happened on.\n"
"  --sink URL       http://HOST:8123/?database=DB (or $SLOPTIMIZE_SINK)\n";

int
cli_wants_team(int argc, char **argv)
{
	int	i;

	for (i = 1; i < argc; i++)
		if (strcmp(argv[i], "--team") == 0)
			return 1;
	return 0;
}

static int
url_or_usage(const char *verb, const char *sink, struct ch_url *u)
{
	char	err[CH_ERR_MAX];

	if (sink == NULL || *sink == '\0')
		sink = getenv("SLOPTIMIZE_SINK");
	if (sink == NULL || *sink == '\0') {
		fprintf(stderr, "sloptimize %s: --sink URL is needed "
		    "(http://HOST:8123/?database=DB)\n", verb);
		return EXIT_USAGE;
	}
	if (ch_url_parse(sink, u, err, sizeof(err)) != 0) {
		fprintf(stderr, "sloptimize %s: %s\n", verb, err);
		return EXIT_USAGE;
	}
	return -1;
}

int
verb_sink(int argc, char **argv)
{
	struct cli_common	 c;
	const char		*sink = NULL, *cluster = NULL, *pos[1];
	int			 npos = 1, rc;
	struct cli_opt		 opts[] = {
		{ "sink", OPT_ARG, &sink }, { "cluster", OPT_ARG, &cluster },
		{ NULL, 0, NULL }
	};
	struct ch_url		 u;
	struct schema_info	 si;
	char			 msg[CH_ERR_MAX + 128];

	if ((rc = cli_parse(argc, argv, opts, &c, sink_usage, pos, &npos)) >= 0)
		return rc;
	if (npos != 1 || strcmp(pos[0], "init") != 0) {
		fprintf(stderr, "sloptimize sink: the verb is `sink init`\n%s",
		    sink_usage);
		return EXIT_USAGE;
	}
	if ((rc = url_or_usage("sink init", sink, &u)) >= 0)
		return rc;
	rc = schema_init(&u, cluster, CLI_TIMEOUT_MS, &si, msg, sizeof(msg));
	if (c.json) {
		cJSON	*o = cJSON_CreateObject();

		cJSON_AddBoolToObject(o, "ok", rc == 0);
		cJSON_AddStringToObject(o, "sink", u.shown);
		cJSON_AddStringToObject(o, "database", u.db);
		cJSON_AddNumberToObject(o, "schema", rc == 0 ? si.version : 0);
		cJSON_AddStringToObject(o, "table", si.table);
		if (si.cluster[0])
			cJSON_AddStringToObject(o, "cluster", si.cluster);
		else
			cJSON_AddNullToObject(o, "cluster");
		cJSON_AddStringToObject(o, "message", msg);
		print_json(o);
		cJSON_Delete(o);
	} else if (rc == 0)
		printf("sink: %s\n", msg);
	if (rc != 0)
		fprintf(stderr, "sloptimize sink init: %s: %s\n", u.shown, msg);
	return rc == 0 ? EXIT_OK : rc == -EPROTONOSUPPORT ? EXIT_FINDINGS :
	    EXIT_NOTHING;
}

/* The four answers, then the fold's finish.  NULL with err set. */
static cJSON *
team_fetch(const struct ch_url *u, const struct team_query *q, int64_t now,
    char *err, size_t cap)
{
	struct ch_buf		 meta = { 0 }, ans[TEAM_NQ];
	struct schema_info	 si;
	const char		*bodies[TEAM_NQ];
	char			*sqls[TEAM_NQ] = { NULL };
	char			 sql[256], table[160];
	cJSON			*out = NULL;
	int			 i, rc;

	memset(ans, 0, sizeof(ans));
	schema_meta_sql(u->db, sql, sizeof(sql));
	rc = ch_query(u, sql, NULL, CLI_TIMEOUT_MS, &meta, err, cap);
	if (rc == 0)
		rc = schema_meta_parse(meta.p ? meta.p : "", &si, err, cap);
	else if (schema_is_missing(err))
		snprintf(err, cap, "no sloptimize tables in %s (run "
		    "`sloptimize sink init --sink URL`)", u->db);
	ch_buf_free(&meta);
	if (rc != 0)
		return NULL;
	schema_table(u->db, &si, table, sizeof(table));
	for (i = 0; i < TEAM_NQ; i++)
		if ((sqls[i] = team_sql((enum team_q)i, table, q)) == NULL) {
			snprintf(err, cap, "out of memory");
			goto out;
		}
	/* side by side: the rows statement is most of the time, the
	 * others run beside it */
	if (ch_query_all(u, (const char *const *)sqls, TEAM_NQ, TEAM_SETTINGS,
	    CLI_TIMEOUT_MS, ans, err, cap) != 0)
		goto out;
	for (i = 0; i < TEAM_NQ; i++)
		bodies[i] = ans[i].p ? ans[i].p : "";
	out = team_catalogue(bodies, q, now, err, cap);
out:
	for (i = 0; i < TEAM_NQ; i++) {
		free(sqls[i]);
		ch_buf_free(&ans[i]);
	}
	return out;
}

static void
print_team(const cJSON *out)
{
	const cJSON	*row, *rows = cJSON_GetObjectItemCaseSensitive(out,
			    "issues");

	if (cJSON_GetArraySize(rows) == 0) {
		printf("no issues in the team's records\n");
		return;
	}
	printf("%-8s  %7s  %8s  %-9s  %-8s  %10s  %-24s  %s\n", "ID", "COUNT",
	    "MACHINES", "STATUS", "TYPE", "WORST", "LAST", "VERDICT");
	cJSON_ArrayForEach(row, rows) {
		const cJSON	*w = cJSON_GetObjectItemCaseSensitive(row,
				    "worst");
		const cJSON	*v = cJSON_GetObjectItemCaseSensitive(row,
				    "verdict");
		char		 worst[32] = "-";
		const char	*last = cJSON_GetStringValue(
				    cJSON_GetObjectItemCaseSensitive(row,
				    "last"));
		const char	*guess = cJSON_IsObject(v) ?
				    cJSON_GetStringValue(
				    cJSON_GetObjectItemCaseSensitive(v,
				    "guess")) : NULL;

		if (cJSON_IsObject(w))
			snprintf(worst, sizeof(worst), "%.1f%s",
			    cJSON_GetObjectItemCaseSensitive(w,
			    "value")->valuedouble, strcmp(cJSON_GetStringValue(
			    cJSON_GetObjectItemCaseSensitive(w, "unit")),
			    "ms") == 0 ? "ms" : "u");
		printf("%-8s  %7.0f  %8.0f  %-9s  %-8s  %10s  %-24s  %s\n",
		    cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(row,
		    "id")),
		    cJSON_GetObjectItemCaseSensitive(row, "count")->valuedouble,
		    cJSON_GetObjectItemCaseSensitive(row,
		    "machines")->valuedouble,
		    cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(row,
		    "status")),
		    cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(row,
		    "type")), worst, last ? last : "-", guess ? guess : "-");
	}
}

int
verb_issues_team(int argc, char **argv)
{
	struct cli_common	 c;
	const char		*sink = NULL, *type = NULL, *status = NULL;
	const char		*from = NULL, *to = NULL, *limit = NULL;
	int			 automated = 0, team = 0, rc;
	struct cli_opt		 opts[] = {
		{ "team", OPT_FLAG, &team }, { "sink", OPT_ARG, &sink },
		{ "type", OPT_ARG, &type }, { "status", OPT_ARG, &status },
		{ "from", OPT_ARG, &from }, { "to", OPT_ARG, &to },
		{ "limit", OPT_ARG, &limit },
		{ "include-automated", OPT_FLAG, &automated },
		{ NULL, 0, NULL }
	};
	struct team_query	 q = { NULL, NULL, 0, 0, LEDGER_NO_TIME,
				    LEDGER_NO_TIME };
	struct ch_url		 u;
	char			 err[CH_ERR_MAX];
	cJSON			*out;

	if ((rc = cli_parse(argc, argv, opts, &c, team_usage, NULL, NULL)) >= 0)
		return rc;
	if ((rc = url_or_usage("issues --team", sink, &u)) >= 0)
		return rc;
	if ((from && iso_parse_ms(from, strlen(from), &q.from_ms) != 0) ||
	    (to && iso_parse_ms(to, strlen(to), &q.to_ms) != 0)) {
		fprintf(stderr, "sloptimize issues: --from and --to take "
		    "ISO-8601 times\n");
		return EXIT_USAGE;
	}
	if (status && strcmp(status, "open") && strcmp(status, "fixed") &&
	    strcmp(status, "regressed")) {
		fprintf(stderr, "sloptimize issues: --status is open, fixed or "
		    "regressed\n");
		return EXIT_USAGE;
	}
	if (limit != NULL) {
		char	*end;
		long	 n = strtol(limit, &end, 10);

		if (*end != '\0' || n < 0) {
			fprintf(stderr, "sloptimize issues: --limit takes a "
			    "count\n");
			return EXIT_USAGE;
		}
		q.limit = (size_t)n;
	}
	q.type = type;
	q.status = status;
	q.include_automated = automated;
	if ((out = team_fetch(&u, &q, c.now_ms, err, sizeof(err))) == NULL) {
		fprintf(stderr, "sloptimize issues --team: %s: %s\n", u.shown,
		    err);
		return EXIT_NOTHING;
	}
	if (c.json)
		print_json(out);
	else
		print_team(out);
	cJSON_Delete(out);
	return EXIT_OK;
}
