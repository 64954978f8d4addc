/*
 * views — view snapshots kept for `sloptimize repro` (see views.h).
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "daemon/views.h"
#include "ledger/ledger.h"
#include "project/append.h"
#include "project/project.h"
#include "project/statedir.h"

int
views_check(const char *body, size_t len, char *ref, char *why, size_t cap)
{
	cJSON		*o, *v, *f, *r, *fr;
	int		 rc = -EINVAL;

	if (len > VIEWS_BODY_MAX) {
		snprintf(why, cap, "a snapshot takes at most %d bytes",
		    VIEWS_BODY_MAX);
		return -EINVAL;
	}
	/* the fold's strict scanner first: cJSON alone is lenient */
	if (project_json_check(body, len, why, cap) != 0)
		return -EINVAL;
	if ((o = cJSON_ParseWithLength(body, len)) == NULL ||
	    !cJSON_IsObject(o)) {
		snprintf(why, cap, "a snapshot is a JSON object");
		goto out;
	}
	v = cJSON_GetObjectItemCaseSensitive(o, "v");
	f = cJSON_GetObjectItemCaseSensitive(o, "fidelity");
	r = cJSON_GetObjectItemCaseSensitive(o, "ref");
	fr = cJSON_GetObjectItemCaseSensitive(o, "frames");
	if (!cJSON_IsNumber(v) || v->valuedouble != 1 || !cJSON_IsString(f) ||
	    strcmp(f->valuestring, "view") != 0)
		snprintf(why, cap, "a snapshot has v 1 and fidelity \"view\"");
	else if (!cJSON_IsString(r) || !ledger_ref_ok(r->valuestring))
		snprintf(why, cap, "ref is hitch-<page id>-<frame> (page id "
		    "1-32 of [0-9a-z], frame 1-12 digits)");
	else if (!cJSON_IsArray(fr) || cJSON_GetArraySize(fr) < 1 ||
	    cJSON_GetArraySize(fr) > VIEWS_FRAMES)
		snprintf(why, cap, "frames is an array of 1 to %d frames",
		    VIEWS_FRAMES);
	else {
		snprintf(ref, VIEWS_REF_MAX, "%s", r->valuestring);
		rc = 0;
	}
out:
	cJSON_Delete(o);
	return rc;
}

struct aged {
	char	name[VIEWS_REF_MAX + 8];
	time_t	mtime;
	long	nsec;
};

static int
older(const void *a, const void *b)
{
	const struct aged	*x = a, *y = b;

	if (x->mtime != y->mtime)
		return x->mtime < y->mtime ? -1 : 1;
	if (x->nsec != y->nsec)
		return x->nsec < y->nsec ? -1 : 1;
	return strcmp(x->name, y->name);
}

/* Remove the oldest *.json past VIEWS_KEEP; how many went. */
static unsigned
prune(const char *dir)
{
	struct aged	*all = NULL, *grown;
	struct dirent	*e;
	struct stat	 st;
	char		 path[4096];
	size_t		 n = 0, cap = 0, len, i;
	unsigned	 gone = 0;
	DIR		*d;

	if ((d = opendir(dir)) == NULL)
		return 0;
	while ((e = readdir(d)) != NULL) {
		len = strlen(e->d_name);
		if (len < 6 || len >= sizeof(all->name) ||
		    strcmp(e->d_name + len - 5, ".json") != 0)
			continue;
		if (snprintf(path, sizeof(path), "%s/%s", dir, e->d_name) >=
		    (int)sizeof(path) || lstat(path, &st) != 0 ||
		    !S_ISREG(st.st_mode))
			continue;
		if (n == cap) {
			cap = cap ? cap * 2 : 64;
			if ((grown = realloc(all, cap * sizeof(*all))) == NULL)
				break;
			all = grown;
		}
		memcpy(all[n].name, e->d_name, len + 1);
		all[n].mtime = st.st_mtim.tv_sec;
		all[n].nsec = st.st_mtim.tv_nsec;
		n++;
	}
	closedir(d);
	if (n > VIEWS_KEEP) {
		qsort(all, n, sizeof(*all), older);
		for (i = 0; i < n - VIEWS_KEEP; i++)
			if (snprintf(path, sizeof(path), "%s/%s", dir,
			    all[i].name) < (int)sizeof(path) &&
			    unlink(path) == 0)
				gone++;
	}
	free(all);
	return gone;
}

int
views_write(const char *project, const char *ref, const char *body,
    size_t len, unsigned *pruned, char *why, size_t cap)
{
	char	dir[4096], path[4096];
	int	rc;

	*pruned = 0;
	if (project_path(project, VIEWS_DIR, dir, sizeof(dir)) != 0 ||
	    snprintf(path, sizeof(path), "%s/%s.json", dir, ref) >=
	    (int)sizeof(path)) {
		snprintf(why, cap, "the project's path is too long");
		return -ENAMETOOLONG;
	}
	if ((rc = statedir_make(dir)) != 0 ||
	    (rc = statedir_write(path, body, len, 0644)) != 0) {
		snprintf(why, cap, "%s: %s", path, strerror(-rc));
		return rc;
	}
	*pruned = prune(dir);
	return 0;
}
