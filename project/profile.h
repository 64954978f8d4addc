/*
 * profile — .sloptimize/profile.json, the game's rolling summary (seed
 * §3.2, docs/budgets.md): made by the daemon from the last heartbeat it
 * folded, judged against sloptimize.budgets.json, replaced whole
 * (temp file, fsync, rename, fsync of the directory), and read back by
 * `check`, `hook-status`, `doctor` and the MCP tools.
 *
 *   { "v": 1, "at": …, "regime": "software", "build": …, "window": {…},
 *     "frame": {…}, "render": {…}, "memory": {…}, "gpu": {…},
 *     "paused": false, "budgets": {declared, checked, breached, errors},
 *     "source": {file, generation, offset}, "writtenAt": … }
 *
 * A field the heartbeat did not carry is absent, never 0: only finite
 * numbers >= 0 are copied out of its frame, render, memory, window and
 * gpu objects.  Everything here blocks on the disk (the daemon calls it
 * on the thread pool) except profile_build, which is pure.
 */
#ifndef PROJECT_PROFILE_H
#define PROJECT_PROFILE_H

#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "project/budgets.h"

#define PROFILE_FILE		"profile.json"
#define PROFILE_MAX_BYTES	(64 * 1024)

/* Where the heartbeat came from: perf.jsonl's generation and the byte
 * offset of its line. */
struct profile_source {
	uint64_t	generation;
	uint64_t	offset;
};

/*
 * The profile made from one heartbeat line (line[0..len), no newline),
 * judged against `b` (NULL: no budgets file; `budgets_error` non-NULL: a
 * file that could not be read, said in budgets.error).  written_ms is
 * when it is written (writtenAt).  NULL when the line is not a JSON
 * object with "type": "heartbeat" and a string "at", or out of memory.
 */
cJSON	*profile_build(const char *line, size_t len,
	    const struct profile_source *src, const struct budgets *b,
	    const char *budgets_error, int64_t written_ms);

/* Replace <project>/.sloptimize/profile.json with `profile`, atomically.
 * 0 or -errno. */
int	profile_write(const char *project, const cJSON *profile);

/*
 * Read <project>/.sloptimize/profile.json.  0 and *out (the caller
 * deletes it), or -ENOENT (none yet), -EINVAL (not a profile: why says
 * what is wrong), -EFBIG, -ESPIPE (not a regular file) or -errno, with
 * why[cap].  *at_ms is its `at` (the heartbeat's time).
 */
int	profile_read(const char *project, cJSON **out, int64_t *at_ms,
	    char *why, size_t cap);

#endif
