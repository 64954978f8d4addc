/*
 * bench_budgets — a bench against sloptimize.budgets.json (bench_budgets.h).
 *
 * The file is read and judged by project/budgets, so a bench, `check` and
 * profile.json never disagree on what a budget is: a bench is first put in
 * profile.json's shape (its programs are render.programs, a profile's
 * memory.programs), then judged, then said in the bench's words.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cli/bench_budgets.h"

int
bench_budgets_load(const char *project, struct bench_budgets *out, char *why,
    size_t cap)
{
	int	rc;

	memset(out, 0, sizeof(*out));
	snprintf(out->file, sizeof(out->file), "%s/%s", project, BUDGETS_FILE);
	rc = budgets_read(project, &out->b, &out->declared, why, cap);
	if (rc != 0)
		out->b.ndeclared = 0;
	return rc;
}

/* bench's value at "a.b" copied to profile's "c.d" */
static void
copy(cJSON *prof, const cJSON *bench, const char *from, const char *to)
{
	char		 head[32];
	const char	*dot = strchr(from, '.'), *tdot = strchr(to, '.');
	const cJSON	*v;
	cJSON		*o;

	snprintf(head, sizeof(head), "%.*s", (int)(dot - from), from);
	v = cJSON_GetObjectItemCaseSensitive(
	    cJSON_GetObjectItemCaseSensitive(bench, head), dot + 1);
	if (!cJSON_IsNumber(v))
		return;
	snprintf(head, sizeof(head), "%.*s", (int)(tdot - to), to);
	if ((o = cJSON_GetObjectItemCaseSensitive(prof, head)) == NULL)
		o = cJSON_AddObjectToObject(prof, head);
	cJSON_AddNumberToObject(o, tdot + 1, v->valuedouble);
}

static const char *const labels[BUDGET_N] = {
	[BUDGET_DRAW_CALLS] = "draw calls", [BUDGET_TRIANGLES] = "triangles",
	[BUDGET_PROGRAMS] = "programs", [BUDGET_FRAME_MS_P95] = "frame p95",
	[BUDGET_GPU_MS_P95] = "GPU p95",
};

static const char *const state_words[] = {
	[BUDGET_INSIDE] = "inside", [BUDGET_BREACHED] = "over",
	[BUDGET_NOT_JUDGED] = "not-judged", [BUDGET_UNMEASURED] = "not-measured",
	[BUDGET_SKIPPED] = "not-judged",
};

cJSON *
bench_budgets_judge(const struct bench_budgets *bb, const cJSON *bench,
    int *error_breach)
{
	struct budget_judgement	 j;
	cJSON			*o = cJSON_CreateObject(), *prof, *items, *it;
	cJSON			*breached, *warned;
	const cJSON		*regime;
	char			 text[256], val[40], max[40];
	int			 mi;

	*error_breach = 0;
	prof = cJSON_CreateObject();
	regime = cJSON_GetObjectItemCaseSensitive(bench, "regime");
	if (cJSON_IsString(regime))
		cJSON_AddStringToObject(prof, "regime", regime->valuestring);
	copy(prof, bench, "render.calls", "render.calls");
	copy(prof, bench, "render.triangles", "render.triangles");
	copy(prof, bench, "render.programs", "memory.programs");
	copy(prof, bench, "frame.p95Ms", "frame.p95Ms");
	copy(prof, bench, "gpu.p95Ms", "gpu.p95Ms");
	budgets_judge(&bb->b, prof, 0, &j);
	cJSON_Delete(prof);

	cJSON_AddBoolToObject(o, "declared", bb->declared);
	cJSON_AddStringToObject(o, "file", BUDGETS_FILE);
	breached = cJSON_AddArrayToObject(o, "breached");
	warned = cJSON_AddArrayToObject(o, "warned");
	items = cJSON_AddArrayToObject(o, "items");
	for (mi = 0; mi < BUDGET_N; mi++) {
		enum budget_metric		 me = (enum budget_metric)mi;
		const struct budget		*b = &bb->b.b[mi];
		const struct budget_result	*r = &j.r[mi];
		const char			*unit = budgets_unit(me);
		const char			*label = labels[me];

		if (!b->declared)
			continue;
		it = cJSON_CreateObject();
		cJSON_AddItemToArray(items, it);
		cJSON_AddStringToObject(it, "key", budgets_key(me));
		cJSON_AddStringToObject(it, "metric", me == BUDGET_PROGRAMS ?
		    "render.programs" : budgets_path(me));
		cJSON_AddNumberToObject(it, "max", b->max);
		cJSON_AddStringToObject(it, "level",
		    budgets_level_name(b->level));
		snprintf(max, sizeof(max), "%g%s", b->max, unit);
		snprintf(val, sizeof(val), "%g%s", r->value, unit);
		if (r->has_value)
			cJSON_AddNumberToObject(it, "value", r->value);
		switch (r->status) {
		case BUDGET_INSIDE:
			snprintf(text, sizeof(text), "%s %s; budget %s: inside",
			    label, val, max);
			break;
		case BUDGET_BREACHED:
			snprintf(text, sizeof(text), "%s %s; budget %s: over "
			    "by %.1f×%s", label, val, max, r->ratio,
			    b->level == BUDGET_ERROR ? "" : " (warn)");
			cJSON_AddItemToArray(b->level == BUDGET_ERROR ?
			    breached : warned, cJSON_CreateString(
			    budgets_key(me)));
			if (b->level == BUDGET_ERROR)
				*error_breach = 1;
			break;
		case BUDGET_UNMEASURED:
			snprintf(text, sizeof(text), "%s not measured; budget "
			    "%s: not judged", label, max);
			break;
		default:
			snprintf(text, sizeof(text), "%s %s; budget %s: not "
			    "judged (%s)", label, val, max, r->why);
			break;
		}
		cJSON_AddStringToObject(it, "state", state_words[r->status]);
		cJSON_AddStringToObject(it, "text", text);
	}
	cJSON_AddNumberToObject(o, "checked", j.checked);
	return o;
}
