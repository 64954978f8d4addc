/*
 * append — the writers of a project's ledger files (append.h).
 *
 * O_APPEND makes each write(2) land whole at the end of the file; the
 * flock keeps writers that follow the same rule (every one of ours, and a
 * reader that wants a quiet moment) ordered, so a batch is never split by
 * another writer's line.
 */
#include <sys/file.h>
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ledger/footprint.h"
#include "ledger/ledger.h"
#include "project/append.h"
#include "project/project.h"

static int
random_id(char out[9])
{
	uint32_t	v;

	if (getentropy(&v, sizeof(v)) == -1) {
		struct timespec	ts;

		clock_gettime(CLOCK_REALTIME, &ts);
		v = fnv1a32(&ts, sizeof(ts)) ^ (uint32_t)getpid();
	}
	footprint_hex(v, out);
	return 0;
}

static int
valid_string(const cJSON *o, const char *name, int required)
{
	const cJSON	*it = cJSON_GetObjectItemCaseSensitive(o, name);

	if (it == NULL)
		return !required;
	return cJSON_IsString(it) && (!required || *it->valuestring != '\0');
}

static int
valid_ids(const cJSON *arr)
{
	const cJSON	*it;
	uint32_t	 v;

	if (arr == NULL)
		return 1;
	if (!cJSON_IsArray(arr))
		return 0;
	cJSON_ArrayForEach(it, arr)
		if (!cJSON_IsString(it) || footprint_parse_hex(it->valuestring,
		    strlen(it->valuestring), &v) != 0)
			return 0;
	return 1;
}

int
project_fix_append(const char *project, cJSON *rec, const char **why)
{
	char		 dir[4096], path[4096], id[9], iso[32], *line = NULL;
	const char	*st;
	cJSON		*it;
	size_t		 len;
	ssize_t		 n;
	int		 fd = -1, rc;
	struct timespec	 ts;

	*why = NULL;
	if (!cJSON_IsObject(rec)) {
		*why = "a fix is a JSON object";
		return -EINVAL;
	}
	st = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(rec,
	    "status"));
	if (st == NULL)
		st = "applied";
	if (strcmp(st, "applied") && strcmp(st, "proposed") &&
	    strcmp(st, "merged") && strcmp(st, "rejected")) {
		*why = "status is applied, proposed, merged or rejected";
		return -EINVAL;
	}
	if (strcmp(st, "merged") == 0 || strcmp(st, "rejected") == 0) {
		it = cJSON_GetObjectItemCaseSensitive(rec, "ref");
		if (!cJSON_IsString(it) || footprint_parse_hex(it->valuestring,
		    strlen(it->valuestring), &(uint32_t){ 0 }) != 0) {
			*why = "a merge or reject names the proposal's 8-hex id in ref";
			return -EINVAL;
		}
	} else if (!valid_string(rec, "title", 1)) {
		*why = "a fix needs a title";
		return -EINVAL;
	}
	if (!valid_string(rec, "issue", 0) || !valid_string(rec, "solution", 0) ||
	    !valid_string(rec, "commit", 0)) {
		*why = "issue, solution and commit are strings";
		return -EINVAL;
	}
	if (!valid_ids(cJSON_GetObjectItemCaseSensitive(rec, "footprints"))) {
		*why = "footprints is a list of 8-hex footprint ids";
		return -EINVAL;
	}
	it = cJSON_GetObjectItemCaseSensitive(rec, "files");
	if (it != NULL) {
		const cJSON	*f;

		if (!cJSON_IsArray(it)) {
			*why = "files is a list of paths";
			return -EINVAL;
		}
		cJSON_ArrayForEach(f, it)
			if (!cJSON_IsString(f)) {
				*why = "files is a list of paths";
				return -EINVAL;
			}
	}

	/* fill in what the writer may leave to us */
	cJSON_DeleteItemFromObjectCaseSensitive(rec, "type");
	cJSON_AddStringToObject(rec, "type", "fix");
	it = cJSON_GetObjectItemCaseSensitive(rec, "id");
	if (it == NULL) {
		random_id(id);
		cJSON_AddStringToObject(rec, "id", id);
	} else if (!cJSON_IsString(it) || footprint_parse_hex(it->valuestring,
	    strlen(it->valuestring), &(uint32_t){ 0 }) != 0) {
		*why = "id is 8 hex digits";
		return -EINVAL;
	}
	if (cJSON_GetObjectItemCaseSensitive(rec, "at") == NULL) {
		clock_gettime(CLOCK_REALTIME, &ts);
		iso_format_ms((int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000,
		    iso);
		cJSON_AddStringToObject(rec, "at", iso);
	} else if (!valid_string(rec, "at", 1)) {
		*why = "at is an ISO-8601 time";
		return -EINVAL;
	}
	if (cJSON_GetObjectItemCaseSensitive(rec, "status") == NULL)
		cJSON_AddStringToObject(rec, "status", "applied");

	if ((line = cJSON_PrintUnformatted(rec)) == NULL)
		return -ENOMEM;
	len = strlen(line);
	if (len + 1 > LEDGER_MAX_LINE) {
		free(line);
		*why = "the fix record is larger than 1 MiB";
		return -EINVAL;
	}
	line[len] = '\n';	/* replaces the NUL: one write, one line */

	snprintf(dir, sizeof(dir), "%s/" PROJECT_DIR, project);
	if (mkdir(dir, 0755) == -1 && errno != EEXIST) {
		rc = -errno;
		*why = "cannot create .sloptimize/";
		goto out;
	}
	if ((rc = project_path(project, "fixes.jsonl", path,
	    sizeof(path))) != 0) {
		*why = "the project path is too long";
		goto out;
	}
	if ((fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC,
	    0644)) == -1) {
		rc = -errno;
		*why = "cannot open fixes.jsonl";
		goto out;
	}
	/* O_APPEND makes each write land whole at the end; the lock keeps
	 * other writers (and a reader that wants a quiet moment) ordered. */
	while (flock(fd, LOCK_EX) == -1)
		if (errno != EINTR) {
			rc = -errno;
			*why = "cannot lock fixes.jsonl";
			goto out;
		}
	n = write(fd, line, len + 1);
	if (n != (ssize_t)(len + 1)) {
		rc = n == -1 ? -errno : -EIO;
		*why = "short write to fixes.jsonl";
		/* a torn tail must not glue itself to the next record */
		if (n > 0 && ftruncate(fd, lseek(fd, 0, SEEK_END) - n) == -1)
			*why = "short write to fixes.jsonl, could not undo it";
		goto out;
	}
	if (fsync(fd) == -1) {
		rc = -errno;
		*why = "fsync of fixes.jsonl failed";
		goto out;
	}
	rc = 0;
out:
	if (fd != -1)
		close(fd);
	free(line);
	return rc;
}

