/*
 * profile_writer — .sloptimize/profile.json from the heartbeats the
 * daemon folds (profile_writer.h).
 *
 * The loop only copies the heartbeat's line (a few hundred bytes, once
 * every two seconds per open tab); parsing it, reading the budgets file,
 * judging, and the atomic replace with its two fsyncs all happen on the
 * thread pool, so a slow disk never stalls a wake.  One job at a time:
 * statedir_write's temp file is one per path, and a newer heartbeat
 * makes an older one's write pointless anyway.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/base.h"
#include "daemon/log.h"
#include "daemon/profile_writer.h"
#include "ledger/footprint.h"
#include "project/budgets.h"
#include "project/profile.h"
#include "project/project.h"

struct profile_job {
	uv_work_t		 req;
	struct profile_writer	*w;
	char			*line;
	size_t			 len;
	struct profile_source	 src;
	int			 rc;		/* of the write */
	int			 built;		/* 0: not a heartbeat we can
						   read */
	char			 budgets_error[256];
	int64_t			 done_ms;
};

void
profile_writer_init(struct profile_writer *w, uv_loop_t *loop,
    const char *project)
{
	memset(w, 0, sizeof(*w));
	w->loop = loop;
	snprintf(w->project, sizeof(w->project), "%s", project);
}

/* The job's work, on the pool (or on the loop at close). */
static void
job_run(struct profile_job *j)
{
	struct budgets	 b;
	char		 why[BUDGETS_WHY_MAX];
	int		 found = 0, rc;
	cJSON		*p;

	rc = budgets_read(j->w->project, &b, &found, why, sizeof(why));
	if (rc != 0) {
		/* the first fault is enough here; `check` lists them all */
		char	*nl = strchr(why, '\n');

		if (nl != NULL)
			*nl = '\0';
		snprintf(j->budgets_error, sizeof(j->budgets_error), "%.*s",
		    (int)sizeof(j->budgets_error) - 1, why);
	}
	j->done_ms = base_now_ms();
	p = profile_build(j->line, j->len, &j->src, rc == 0 && found ? &b :
	    NULL, rc != 0 ? j->budgets_error : NULL, j->done_ms);
	if (p == NULL) {
		j->built = 0;
		j->rc = 0;
		return;
	}
	j->built = 1;
	j->rc = profile_write(j->w->project, p);
	cJSON_Delete(p);
}

static void
job_work(uv_work_t *req)
{
	job_run(req->data);
}

static void	start(struct profile_writer *w);
static struct profile_job *take(struct profile_writer *w);

/* What a job found, told on the loop: counters, the log. */
static void
job_account(struct profile_writer *w, struct profile_job *j)
{
	if (strcmp(j->budgets_error, w->budgets_error) != 0) {
		if (j->budgets_error[0] != '\0')
			log_warnx("%s: %s (profile.json says so; `sloptimize "
			    "check` lists every fault)", BUDGETS_FILE,
			    j->budgets_error);
		else if (w->budgets_error[0] != '\0')
			log_info("%s: readable again", BUDGETS_FILE);
		memcpy(w->budgets_error, j->budgets_error,
		    sizeof(w->budgets_error));
	}
	if (!j->built) {
		log_debug("profile.json: the heartbeat at offset %llu is not "
		    "one a profile is made from", (unsigned long long)
		    j->src.offset);
		return;
	}
	if (j->rc != 0) {
		if (w->failures++ == 0 || w->last_error != j->rc)
			log_warnx("cannot write %s/%s/%s: %s (check and "
			    "hook-status read an older one)", w->project,
			    PROJECT_DIR, PROFILE_FILE, strerror(-j->rc));
		w->last_error = j->rc;
		w->last_error_ms = j->done_ms;
		return;
	}
	if (w->last_error != 0)
		log_info("%s/%s: written again", PROJECT_DIR, PROFILE_FILE);
	w->last_error = 0;
	w->writes++;
	w->last_gen = j->src.generation;
	w->last_off = j->src.offset;
	w->last_ms = j->done_ms;
}

static void
job_free(struct profile_job *j)
{
	if (j != NULL)
		free(j->line);
	free(j);
}

static void
job_after(uv_work_t *req, int status)
{
	struct profile_job	*j = req->data;
	struct profile_writer	*w = j->w;

	(void)status;		/* UV_ECANCELED: never cancelled */
	w->job = NULL;
	job_account(w, j);
	job_free(j);
	if (!w->have_held)
		return;
	if (!w->closing)
		start(w);
	else if ((j = take(w)) != NULL) {
		/* stopping: the one held during this write, now (close) */
		job_run(j);
		job_account(w, j);
		job_free(j);
	}
}

/* Hand what is held to a new job (the held buffer moves into it). */
static struct profile_job *
take(struct profile_writer *w)
{
	struct profile_job	*j;

	if ((j = calloc(1, sizeof(*j))) == NULL)
		return NULL;
	j->w = w;
	j->line = w->held;
	j->len = w->held_len;
	j->src.generation = w->held_gen;
	j->src.offset = w->held_off;
	j->req.data = j;
	w->held = NULL;
	w->held_len = w->held_cap = 0;
	w->have_held = 0;
	return j;
}

static void
start(struct profile_writer *w)
{
	struct profile_job	*j;
	int			 rc;

	if (w->job != NULL || !w->have_held || w->closing)
		return;
	if ((j = take(w)) == NULL) {
		log_warnx("profile.json: out of memory; the next heartbeat "
		    "tries again");
		return;
	}
	if ((rc = uv_queue_work(w->loop, &j->req, job_work, job_after)) < 0) {
		log_warnx("profile.json: uv_queue_work: %s", uv_strerror(rc));
		job_free(j);
		return;
	}
	w->job = j;
}

void
profile_writer_note(struct profile_writer *w, const char *line, size_t len,
    uint64_t gen, uint64_t off, int live)
{
	if (w->loop == NULL || w->closing)
		return;
	w->heartbeats++;
	if (len + 1 > w->held_cap) {
		size_t	 cap = len + 1 < 1024 ? 1024 : len + 1;
		char	*p = realloc(w->held, cap);

		if (p == NULL) {
			log_warnx("profile.json: out of memory for a %zu-byte "
			    "heartbeat; kept the one before", len);
			return;
		}
		w->held = p;
		w->held_cap = cap;
	}
	memcpy(w->held, line, len);
	w->held[len] = '\0';
	w->held_len = len;
	w->held_gen = gen;
	w->held_off = off;
	w->have_held = 1;
	if (live)
		start(w);
}

void
profile_writer_flush(struct profile_writer *w)
{
	if (w->loop != NULL)
		start(w);
}

void
profile_writer_close(struct profile_writer *w)
{
	struct profile_job	*j;

	if (w->loop == NULL || w->closing)
		return;
	/*
	 * The last heartbeat of a session is the one a `check` run right
	 * after will read: written here, on the loop, which is going away
	 * (the daemon saves its cursor the same way).  With a write still
	 * on the pool, that one is left to finish: two writers of one path
	 * share its temp file.
	 */
	if (w->job == NULL && w->have_held && (j = take(w)) != NULL) {
		job_run(j);
		job_account(w, j);
		job_free(j);
	}
	w->closing = 1;
}

void
profile_writer_free(struct profile_writer *w)
{
	free(w->held);
	w->held = NULL;
	w->held_len = w->held_cap = 0;
	w->have_held = 0;
}

cJSON *
profile_writer_status_json(const struct profile_writer *w)
{
	cJSON	*o = cJSON_CreateObject();
	char	 path[PATH_MAX + 32], iso[32];

	snprintf(path, sizeof(path), "%s/%s/%s", w->project, PROJECT_DIR,
	    PROFILE_FILE);
	cJSON_AddStringToObject(o, "path", path);
	cJSON_AddNumberToObject(o, "heartbeats", (double)w->heartbeats);
	cJSON_AddNumberToObject(o, "writes", (double)w->writes);
	cJSON_AddNumberToObject(o, "failures", (double)w->failures);
	if (w->last_ms > 0) {
		iso_format_ms(w->last_ms, iso);
		cJSON_AddStringToObject(o, "lastWrittenAt", iso);
		cJSON_AddNumberToObject(o, "lastGeneration",
		    (double)w->last_gen);
		cJSON_AddNumberToObject(o, "lastOffset", (double)w->last_off);
	} else {
		cJSON_AddNullToObject(o, "lastWrittenAt");
		cJSON_AddNullToObject(o, "lastGeneration");
		cJSON_AddNullToObject(o, "lastOffset");
	}
	if (w->last_error != 0) {
		cJSON_AddStringToObject(o, "lastError",
		    strerror(-w->last_error));
		iso_format_ms(w->last_error_ms, iso);
		cJSON_AddStringToObject(o, "lastErrorAt", iso);
	} else {
		cJSON_AddNullToObject(o, "lastError");
		cJSON_AddNullToObject(o, "lastErrorAt");
	}
	if (w->budgets_error[0] != '\0')
		cJSON_AddStringToObject(o, "budgetsError", w->budgets_error);
	else
		cJSON_AddNullToObject(o, "budgetsError");
	cJSON_AddBoolToObject(o, "pending", w->have_held || w->job != NULL);
	return o;
}
