/*
 * profile — .sloptimize/profile.json from a heartbeat, and back
 * (profile.h, docs/budgets.md).
 *
 * The heartbeat is the recorder's; the profile is a contract of ours
 * (schemas/profile.json), so the heartbeat's numbers are copied by rule,
 * not wholesale: a member that is not a finite number >= 0 (null, a
 * string, a negative count from a broken writer) is left out — absent,
 * never 0 — and the regime is one of three words.
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ledger/footprint.h"
#include "project/profile.h"
#include "project/project.h"
#include "project/statedir.h"

/* The finite numbers >= 0 of hb.<name> (and its strings, with
 * `strings`), into a new member of p; nothing when none. */
static void
copy_numbers(cJSON *p, const cJSON *hb, const char *name, int strings)
{
	const cJSON	*o = cJSON_GetObjectItemCaseSensitive(hb, name), *it;
	cJSON		*to = NULL;

	if (!cJSON_IsObject(o))
		return;
	cJSON_ArrayForEach(it, o) {
		cJSON	*v = NULL;

		if (it->string == NULL ||
		    cJSON_GetObjectItemCaseSensitive(to, it->string) != NULL)
			continue;	/* a key twice: the first counts */
		if (cJSON_IsNumber(it) && isfinite(it->valuedouble) &&
		    it->valuedouble >= 0)
			v = cJSON_CreateNumber(it->valuedouble);
		else if (strings && cJSON_IsString(it))
			v = cJSON_CreateString(it->valuestring);
		if (v == NULL)
			continue;
		if (to == NULL && (to = cJSON_AddObjectToObject(p, name)) ==
		    NULL) {
			cJSON_Delete(v);
			return;
		}
		cJSON_AddItemToObject(to, it->string, v);
	}
}

static void
copy_string(cJSON *p, const cJSON *hb, const char *name)
{
	const char	*s = cJSON_GetStringValue(
			    cJSON_GetObjectItemCaseSensitive(hb, name));

	if (s != NULL && *s != '\0')
		cJSON_AddStringToObject(p, name, s);
}

/* budgets {declared, checked, breached, errors}, or {error}. */
static void
add_budgets(cJSON *p, const struct budgets *b, const char *error)
{
	struct budget_judgement	 j;
	cJSON			*o = cJSON_AddObjectToObject(p, "budgets");
	cJSON			*breached, *errors;
	int			 m;

	cJSON_AddStringToObject(o, "file", BUDGETS_FILE);
	if (error != NULL) {
		cJSON_AddStringToObject(o, "error", error);
		return;
	}
	if (b == NULL) {
		cJSON_AddNumberToObject(o, "declared", 0);
		cJSON_AddNumberToObject(o, "checked", 0);
		cJSON_AddArrayToObject(o, "breached");
		cJSON_AddArrayToObject(o, "errors");
		return;
	}
	budgets_judge(b, p, 0, &j);
	cJSON_AddNumberToObject(o, "declared", j.declared);
	cJSON_AddNumberToObject(o, "checked", j.checked);
	breached = cJSON_AddArrayToObject(o, "breached");
	errors = cJSON_AddArrayToObject(o, "errors");
	for (m = 0; m < BUDGET_N; m++) {
		if (j.r[m].status != BUDGET_BREACHED)
			continue;
		cJSON_AddItemToArray(breached, cJSON_CreateString(
		    budgets_key((enum budget_metric)m)));
		if (b->b[m].level == BUDGET_ERROR)
			cJSON_AddItemToArray(errors, cJSON_CreateString(
			    budgets_key((enum budget_metric)m)));
	}
}

cJSON *
profile_build(const char *line, size_t len, const struct profile_source *src,
    const struct budgets *b, const char *budgets_error, int64_t written_ms)
{
	cJSON		*hb, *p, *s;
	const cJSON	*it;
	const char	*at, *type, *regime;
	char		 iso[32];
	int64_t		 ms;

	if ((hb = cJSON_ParseWithLength(line, len)) == NULL)
		return NULL;
	at = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(hb, "at"));
	type = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(hb,
	    "type"));
	if (!cJSON_IsObject(hb) || type == NULL ||
	    strcmp(type, "heartbeat") != 0 || at == NULL ||
	    iso_parse_ms(at, strlen(at), &ms) != 0 ||
	    (p = cJSON_CreateObject()) == NULL) {
		cJSON_Delete(hb);
		return NULL;
	}
	cJSON_AddNumberToObject(p, "v", 1);
	/* the time as the fold reads it, in one form */
	iso_format_ms(ms, iso);
	cJSON_AddStringToObject(p, "at", iso);
	regime = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(hb,
	    "regime"));
	cJSON_AddStringToObject(p, "regime", regime != NULL &&
	    (strcmp(regime, "hardware") == 0 || strcmp(regime, "software") ==
	    0) ? regime : "unknown");
	copy_string(p, hb, "build");
	copy_string(p, hb, "phase");
	copy_numbers(p, hb, "window", 0);
	copy_numbers(p, hb, "frame", 0);
	copy_numbers(p, hb, "render", 0);
	copy_numbers(p, hb, "memory", 0);
	copy_numbers(p, hb, "gpu", 1);
	if (cJSON_IsBool(it = cJSON_GetObjectItemCaseSensitive(hb, "paused")))
		cJSON_AddBoolToObject(p, "paused", cJSON_IsTrue(it));
	if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(hb, "automated")))
		cJSON_AddTrueToObject(p, "automated");
	cJSON_Delete(hb);
	add_budgets(p, b, budgets_error);
	s = cJSON_AddObjectToObject(p, "source");
	cJSON_AddStringToObject(s, "file", "perf.jsonl");
	cJSON_AddNumberToObject(s, "generation", (double)src->generation);
	cJSON_AddNumberToObject(s, "offset", (double)src->offset);
	iso_format_ms(written_ms, iso);
	cJSON_AddStringToObject(p, "writtenAt", iso);
	return p;
}

int
profile_write(const char *project, const cJSON *profile)
{
	char	 path[PATH_MAX], *text;
	size_t	 n;
	int	 rc;

	if (project_path(project, PROFILE_FILE, path, sizeof(path)) != 0)
		return -ENAMETOOLONG;
	if ((text = cJSON_Print(profile)) == NULL)
		return -ENOMEM;
	n = strlen(text);
	text[n] = '\n';		/* cJSON_Print's NUL: a text file ends in one */
	rc = statedir_write(path, text, n + 1, 0644);
	free(text);
	return rc;
}

int
profile_read(const char *project, cJSON **out, int64_t *at_ms, char *why,
    size_t cap)
{
	char		 path[PATH_MAX], *buf;
	const char	*at;
	size_t		 n;
	cJSON		*p;
	int		 rc;

	*out = NULL;
	*at_ms = LEDGER_NO_TIME;
	if (project_path(project, PROFILE_FILE, path, sizeof(path)) != 0) {
		snprintf(why, cap, "the project path is too long");
		return -ENAMETOOLONG;
	}
	if ((buf = malloc(PROFILE_MAX_BYTES)) == NULL) {
		snprintf(why, cap, "out of memory");
		return -ENOMEM;
	}
	if ((rc = statedir_read(path, buf, PROFILE_MAX_BYTES, &n)) != 0) {
		free(buf);
		if (rc == -ENOENT)
			snprintf(why, cap, "no %s yet", path);
		else if (rc == -ESPIPE)
			snprintf(why, cap, "%s is not a regular file", path);
		else if (rc == -EFBIG)
			snprintf(why, cap, "%s is over %d KiB: not a profile",
			    path, PROFILE_MAX_BYTES / 1024);
		else
			snprintf(why, cap, "%s: %s", path, strerror(-rc));
		return rc;
	}
	p = cJSON_ParseWithLength(buf, n);
	free(buf);
	at = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(p, "at"));
	if (!cJSON_IsObject(p) || at == NULL ||
	    iso_parse_ms(at, strlen(at), at_ms) != 0) {
		cJSON_Delete(p);
		*at_ms = LEDGER_NO_TIME;
		snprintf(why, cap, "%s is not a profile (a JSON object with an "
		    "ISO-8601 \"at\"): torn or written by something else",
		    path);
		return -EINVAL;
	}
	*out = p;
	return 0;
}
