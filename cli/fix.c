/*
 * fix — the record of `sloptimize fix` and of the MCP server's fix tools
 * (fix.h).
 *
 * The windows are measured here, from a fold of the project with the
 * timeline; the footprints are checked by the writer, which folds the
 * catalogue again.  Two passes over the ledger for one fix: a fix is
 * written by hand, rarely, and one checker in project/ serves the API too.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cli/fix.h"
#include "ledger/ledger.h"
#include "project/append.h"
#include "project/project.h"

static int
say(char *why, size_t cap, int rc, const char *what, const char *spec,
    const char *reason)
{
	snprintf(why, cap, "%s %s: %s", what, spec, reason);
	return rc;
}

int
cli_fix_record(const char *project, const struct cli_fix *f, cJSON **out,
    char *why, size_t cap)
{
	struct ledger_opts		 lo = { 0 };
	struct ledger			*l = NULL;
	struct project_fold_info	 fi;
	const char			*spec[2] = { f->before, f->after };
	const char			*err;
	cJSON				*rec, *w[2] = { NULL, NULL };
	struct project_write		 wr = { f->gone, 0 };
	int				 i, rc;

	*out = NULL;
	if ((rec = cJSON_CreateObject()) == NULL) {
		snprintf(why, cap, "out of memory");
		return -ENOMEM;
	}
	cJSON_AddStringToObject(rec, "type", "fix");
	cJSON_AddStringToObject(rec, "status", f->status);
	if (f->title != NULL)
		cJSON_AddStringToObject(rec, "title", f->title);
	if (f->issue != NULL)
		cJSON_AddStringToObject(rec, "issue", f->issue);
	if (f->solution != NULL)
		cJSON_AddStringToObject(rec, "solution", f->solution);
	if (f->commit != NULL)
		cJSON_AddStringToObject(rec, "commit", f->commit);
	if (f->files != NULL)
		cJSON_AddItemToObject(rec, "files", cJSON_Duplicate(f->files, 1));
	cJSON_AddItemToObject(rec, "footprints", f->footprints != NULL ?
	    cJSON_Duplicate(f->footprints, 1) : cJSON_CreateArray());

	/* the measured windows, when there is a ledger to measure */
	lo.from_ms = lo.to_ms = LEDGER_NO_TIME;
	lo.want_timeline = 1;
	if (project_fold(project, &lo, &l, &fi) != 0)
		l = NULL;
	for (i = 0; i < 2; i++) {
		if (spec[i] != NULL) {
			if (l == NULL) {
				rc = say(why, cap, -EINVAL, i ? "--after" :
				    "--before", spec[i], "there is no ledger to "
				    "measure");
				goto fail;
			}
			if ((w[i] = ledger_window_json(l, spec[i], i,
			    &err)) == NULL) {
				rc = say(why, cap, -EINVAL, i ? "--after" :
				    "--before", spec[i], err);
				goto fail;
			}
		} else if (i == 0 && l != NULL) {
			/*
			 * The build that ran before the change: the latest
			 * with heartbeats, unless an after window was given
			 * (then the one before the latest, to compare with).
			 * None yet is a null window, not an error.
			 */
			w[0] = ledger_window_json(l, NULL, f->after == NULL,
			    &err);
		}
		/* no --after: null; the fold measures it once a build
		 * after the fix has run */
	}
	cJSON_AddItemToObject(rec, "before", w[0] ? w[0] : cJSON_CreateNull());
	cJSON_AddItemToObject(rec, "after", w[1] ? w[1] : cJSON_CreateNull());
	w[0] = w[1] = NULL;
	ledger_destroy(l);
	l = NULL;
	if (f->force)
		cJSON_AddTrueToObject(rec, "force");
	if ((rc = project_fix_append(project, rec, &wr, why, cap)) != 0)
		goto fail;
	*out = rec;
	return 0;
fail:
	cJSON_Delete(w[0]);
	cJSON_Delete(w[1]);
	ledger_destroy(l);
	cJSON_Delete(rec);
	return rc;
}
