/*
 * append — the writers of a project's ledger files: fix records to
 * fixes.jsonl (`sloptimize fix`, POST /api/sloptimize/fixes).
 *
 * Every write is one line (or one batch of lines) in one write(2) on an
 * O_APPEND descriptor, under an exclusive flock(2) of the file, fsynced
 * before it is acknowledged: two writers never interleave, a tailer never
 * sees half a record, and what was acknowledged survives a crash.
 */
#ifndef PROJECT_APPEND_H
#define PROJECT_APPEND_H

#include <cjson/cJSON.h>

/*
 * Validate a fix record and append it to <project>/.sloptimize/fixes.jsonl
 * as one line.  Fills in `type`, `id` (8 random hex digits) and `at` when
 * missing and normalises `status`.  Returns 0, or a negative errno with
 * *why set to a static message (-EINVAL for a record that is not a valid
 * fix).
 */
int	project_fix_append(const char *project, cJSON *rec, const char **why);

#endif
