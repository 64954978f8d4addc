/*
 * profile_writer — the daemon's side of .sloptimize/profile.json
 * (project/profile.h, docs/budgets.md): every heartbeat the fold takes
 * LIVE replaces the file, on the thread pool, one write at a time; the
 * heartbeats of a catch-up (the start-up fold of a big ledger, a file
 * that replaced perf.jsonl) are only remembered, and the last one is
 * written once when the catch-up ends.
 *
 * A heartbeat that comes while a write is under way is held, and written
 * when it is done; a newer one replaces it (the file is a summary: only
 * the latest counts).  The budgets file is read again at every write, on
 * the pool: an edit to sloptimize.budgets.json shows in the next profile.
 *
 * Runs on the loop thread, except the write itself.
 */
#ifndef DAEMON_PROFILE_WRITER_H
#define DAEMON_PROFILE_WRITER_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>
#include <uv.h>

struct profile_job;

struct profile_writer {
	uv_loop_t		*loop;
	char			 project[PATH_MAX];

	/* the latest heartbeat not written yet */
	char			*held;
	size_t			 held_len, held_cap;
	uint64_t		 held_gen, held_off;
	int			 have_held;

	struct profile_job	*job;		/* the write under way */
	int			 closing;

	/* for /status and doctor */
	uint64_t		 heartbeats;	/* seen, LIVE or not */
	uint64_t		 writes, failures;
	uint64_t		 last_gen, last_off;	/* of the last written */
	int64_t			 last_ms;	/* when, 0: never */
	int			 last_error;	/* -errno of the last failure */
	int64_t			 last_error_ms;
	char			 budgets_error[256];	/* "" if none */
};

void	profile_writer_init(struct profile_writer *w, uv_loop_t *loop,
	    const char *project);
/*
 * A heartbeat line (line[0..len), no newline) at `off` of perf.jsonl's
 * generation `gen`: written now (or as soon as the write under way is
 * done) when `live`, else only remembered until profile_writer_flush().
 */
void	profile_writer_note(struct profile_writer *w, const char *line,
	    size_t len, uint64_t gen, uint64_t off, int live);
/* Write what is remembered (the end of a catch-up); nothing if none. */
void	profile_writer_flush(struct profile_writer *w);
/* Stopping: what is held is written now, on the loop thread (the
 * daemon is going away; a write under way finishes on the pool).  No
 * write starts after it. */
void	profile_writer_close(struct profile_writer *w);
/* Free what is held.  Accepts a writer never initialised (zeroed). */
void	profile_writer_free(struct profile_writer *w);

/* {path, heartbeats, writes, failures, lastWrittenAt, lastOffset,
 * lastGeneration, lastError, lastErrorAt, budgetsError, pending} */
cJSON	*profile_writer_status_json(const struct profile_writer *w);

#endif
