/*
 * sink_team — the team catalogue from the sink's own ClickHouse, on the
 * loop (see sink.h, sink_team()).
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sink/sink.h"
#include "sink/sink_impl.h"
#include "sink/team.h"

/* --- the team catalogue, on the loop ------------------------------------ */

/*
 * A team query: DB.meta first (which table), then the four statements at
 * once on the sink's HTTP client, then team_catalogue() on the thread
 * pool — it replays every row into a ledger, which for a large team is
 * more than the loop should do in one go.
 */
struct tjob;
struct tans {			/* one answer's request context */
	struct tjob	*j;
	int		 i;
};

struct tjob {
	uv_work_t		 req;
	struct tans		 ctx[TEAM_NQ];
	struct sink		*s;
	struct team_query	 q;
	char			 type[64], status[16];
	int64_t			 now;
	sink_team_fn		*done;
	void			*arg;
	char			*sql[TEAM_NQ];
	struct ch_buf		 ans[TEAM_NQ];
	int			 outstanding, failed;
	char			 err[CH_ERR_MAX];
	cJSON			*out;
};

static void
tjob_free(struct tjob *j)
{
	int	i;

	for (i = 0; i < TEAM_NQ; i++) {
		free(j->sql[i]);
		ch_buf_free(&j->ans[i]);
	}
	free(j);
}

static void
tjob_finish(struct tjob *j, cJSON *out, const char *err)
{
	struct sink	*s = j->s;

	j->done(j->arg, out, err);
	tjob_free(j);
	s->pending--;
	if (s->closing)
		sink_free_maybe(s);
}

static void
tjob_work(uv_work_t *req)
{
	struct tjob	*j = req->data;
	const char	*bodies[TEAM_NQ];
	int		 i;

	for (i = 0; i < TEAM_NQ; i++)
		bodies[i] = j->ans[i].p ? j->ans[i].p : "";
	j->out = team_catalogue(bodies, &j->q, j->now, j->err, sizeof(j->err));
}

static void
tjob_after(uv_work_t *req, int status)
{
	struct tjob	*j = req->data;

	if (status != 0) {
		cJSON_Delete(j->out);
		tjob_finish(j, NULL, "cancelled");
		return;
	}
	tjob_finish(j, j->out, j->out ? NULL : j->err);
}

/* One of the four answers. */
static void
tjob_answer(void *arg, int rc, const char *err, const char *body, size_t len)
{
	struct tans	*t = arg;
	struct tjob	*j = t->j;
	struct ch_buf	*b = &j->ans[t->i];

	if (rc != 0) {
		if (!j->failed)
			snprintf(j->err, sizeof(j->err), "%s", err);
		j->failed = 1;
	} else if (ch_buf_add(b, body, len) != 0 && !j->failed) {
		snprintf(j->err, sizeof(j->err), "out of memory");
		j->failed = 1;
	}
	if (--j->outstanding > 0)
		return;
	if (j->failed || j->s->closing) {
		tjob_finish(j, NULL, j->s->closing ? "cancelled" : j->err);
		return;
	}
	j->req.data = j;
	if (uv_queue_work(j->s->loop, &j->req, tjob_work, tjob_after) != 0)
		tjob_finish(j, NULL, "cannot queue the catalogue's finish");
}

static void
tjob_meta(void *arg, int rc, const char *err, const char *body, size_t len)
{
	struct tjob		*j = arg;
	struct sink		*s = j->s;
	struct schema_info	 si;
	char			 table[160], why[CH_ERR_MAX], *url;
	int			 i;

	(void)len;
	if (rc != 0) {
		tjob_finish(j, NULL, s->closing ? "cancelled" :
		    schema_is_missing(err) ? "no sloptimize tables (run "
		    "`sloptimize sink init --sink URL`)" : err);
		return;
	}
	if (schema_meta_parse(body, &si, why, sizeof(why)) != 0) {
		tjob_finish(j, NULL, why);
		return;
	}
	schema_table(s->url.db, &si, table, sizeof(table));
	if ((url = ch_request_url(&s->url, NULL, TEAM_SETTINGS)) == NULL) {
		tjob_finish(j, NULL, "out of memory");
		return;
	}
	for (i = 0; i < TEAM_NQ; i++)
		if ((j->sql[i] = team_sql((enum team_q)i, table, &j->q)) ==
		    NULL) {
			free(url);
			tjob_finish(j, NULL, "out of memory");
			return;
		}
	for (i = 0; i < TEAM_NQ; i++) {
		j->ans[i].max = 1u << 30;
		j->ctx[i].j = j;
		j->ctx[i].i = i;
		if (ch_client_post(s->http, url, j->sql[i], strlen(j->sql[i]),
		    60000L, tjob_answer, &j->ctx[i]) != 0) {
			snprintf(j->err, sizeof(j->err), "cannot start a "
			    "request");
			j->failed = 1;
			continue;
		}
		j->outstanding++;
	}
	free(url);
	if (j->outstanding == 0)
		tjob_finish(j, NULL, j->err);
}

int
sink_team(struct sink *s, const struct team_query *q, int64_t now_ms,
    sink_team_fn *done, void *arg)
{
	struct tjob	*j;

	if (s->closing || (j = calloc(1, sizeof(*j))) == NULL)
		return -ENOMEM;
	j->s = s;
	j->q = *q;
	if (q->type != NULL) {
		snprintf(j->type, sizeof(j->type), "%s", q->type);
		j->q.type = j->type;
	}
	if (q->status != NULL) {
		snprintf(j->status, sizeof(j->status), "%s", q->status);
		j->q.status = j->status;
	}
	j->now = now_ms;
	j->done = done;
	j->arg = arg;
	if (ch_client_post(s->http, s->check_url, s->check_sql,
	    strlen(s->check_sql), 60000L, tjob_meta, j) != 0) {
		free(j);
		return -ENOMEM;
	}
	s->pending++;
	return 0;
}

