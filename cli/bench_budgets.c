/*
 * bench_budgets — sloptimize.budgets.json for the bench (bench_budgets.h).
 *
 * The format: a JSON object whose `perf.budget.*` keys are budgets; any
 * other key ("$schema", "//") is left alone.  A budget is a positive
 * number (level error) or {"max": N, "level": "error"|"warn"}.  A key
 * under perf.budget. that is not one of the five is refused: a typo must
 * not become a budget nobody checks.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/bench_budgets.h"
#include "project/project.h"

static const struct bench_budget known[] = {
	{ "perf.budget.draw_calls", "render.calls", "draw calls", "", 0, 0, 1 },
	{ "perf.budget.frame_ms_p95", "frame.p95Ms", "frame p95", "ms", 1, 0, 1 },
	{ "perf.budget.triangles", "render.triangles", "triangles", "", 0, 0, 1 },
	{ "perf.budget.programs", "render.programs", "programs", "", 0, 0, 1 },
	{ "perf.budget.gpu_ms_p95", "gpu.p95Ms", "GPU p95", "ms", 1, 0, 1 },
};

static int
say(char *why, size_t cap, int rc, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static int
say(char *why, size_t cap, int rc, const char *fmt, ...)
{
	va_list	ap;

	va_start(ap, fmt);
	vsnprintf(why, cap, fmt, ap);
	va_end(ap);
	return rc;
}

int
bench_budgets_load(const char *project, struct bench_budgets *out, char *why,
    size_t cap)
{
	char		 buf[65536];
	const cJSON	*it, *mx, *lv;
	cJSON		*doc;
	const char	*end = NULL;
	ssize_t		 n;
	size_t		 k;
	int		 fd, rc;

	memset(out, 0, sizeof(*out));
	if ((size_t)snprintf(out->file, sizeof(out->file), "%s/%s", project,
	    BENCH_BUDGETS_FILE) >= sizeof(out->file))
		return say(why, cap, -ENAMETOOLONG, "the project path is too "
		    "long");
	if ((rc = project_open(out->file, O_RDONLY, 0, &fd)) == -ENOENT)
		return 0;
	if (rc != 0)
		return say(why, cap, rc, "%s: %s", out->file,
		    project_strerror(rc));
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n < 0)
		return say(why, cap, -errno, "%s: %s", out->file,
		    strerror(errno));
	if (n == (ssize_t)sizeof(buf) - 1)
		return say(why, cap, -EINVAL, "%s: larger than 64 KiB",
		    out->file);
	buf[n] = '\0';
	out->declared = 1;
	if ((doc = cJSON_ParseWithOpts(buf, &end, 1)) == NULL ||
	    !cJSON_IsObject(doc)) {
		cJSON_Delete(doc);
		return say(why, cap, -EINVAL, "%s: not a JSON object%s",
		    out->file, end ? " (it breaks near the marked byte)" : "");
	}
	cJSON_ArrayForEach(it, doc) {
		const struct bench_budget *kb = NULL;
		double	max;
		int	error = 1;

		if (strncmp(it->string, "perf.budget.", 12) != 0)
			continue;
		for (k = 0; k < sizeof(known) / sizeof(known[0]); k++)
			if (strcmp(it->string, known[k].key) == 0)
				kb = &known[k];
		if (kb == NULL) {
			rc = say(why, cap, -EINVAL, "%s: %s is not a budget "
			    "(there are draw_calls, frame_ms_p95, triangles, "
			    "programs, gpu_ms_p95)", out->file, it->string);
			goto bad;
		}
		if (cJSON_IsNumber(it))
			max = it->valuedouble;
		else if (cJSON_IsObject(it)) {
			mx = cJSON_GetObjectItemCaseSensitive(it, "max");
			lv = cJSON_GetObjectItemCaseSensitive(it, "level");
			if (!cJSON_IsNumber(mx)) {
				rc = say(why, cap, -EINVAL, "%s: %s.max is not "
				    "a number", out->file, it->string);
				goto bad;
			}
			max = mx->valuedouble;
			if (lv != NULL && (!cJSON_IsString(lv) ||
			    (strcmp(lv->valuestring, "error") != 0 &&
			    strcmp(lv->valuestring, "warn") != 0))) {
				rc = say(why, cap, -EINVAL, "%s: %s.level is "
				    "\"error\" or \"warn\"", out->file,
				    it->string);
				goto bad;
			}
			error = lv == NULL || strcmp(lv->valuestring, "error")
			    == 0;
		} else {
			rc = say(why, cap, -EINVAL, "%s: %s is a number or "
			    "{max, level}", out->file, it->string);
			goto bad;
		}
		if (!isfinite(max) || max <= 0) {
			rc = say(why, cap, -EINVAL, "%s: %s must be above 0",
			    out->file, it->string);
			goto bad;
		}
		if (out->n < BENCH_BUDGETS_MAX) {
			out->b[out->n] = *kb;
			out->b[out->n].max = max;
			out->b[out->n].error = error;
			out->n++;
		}
	}
	cJSON_Delete(doc);
	return 0;
bad:
	cJSON_Delete(doc);
	out->n = 0;
	return rc;
}

/* doc's value at "a.b", or NAN */
static double
value_at(const cJSON *doc, const char *path)
{
	char		 head[32];
	const char	*dot = strchr(path, '.');
	const cJSON	*o, *v;

	if (dot == NULL || (size_t)(dot - path) >= sizeof(head))
		return NAN;
	snprintf(head, sizeof(head), "%.*s", (int)(dot - path), path);
	o = cJSON_GetObjectItemCaseSensitive(doc, head);
	v = cJSON_GetObjectItemCaseSensitive(o, dot + 1);
	return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}

cJSON *
bench_budgets_judge(const struct bench_budgets *bb, const cJSON *bench,
    int *error_breach)
{
	cJSON		*o = cJSON_CreateObject(), *items, *breached, *warned, *it;
	const char	*regime = cJSON_GetStringValue(
			    cJSON_GetObjectItemCaseSensitive(bench, "regime"));
	int		 i, checked = 0;
	char		 text[200], val[40], max[40];

	*error_breach = 0;
	cJSON_AddBoolToObject(o, "declared", bb->declared);
	cJSON_AddStringToObject(o, "file", BENCH_BUDGETS_FILE);
	breached = cJSON_AddArrayToObject(o, "breached");
	warned = cJSON_AddArrayToObject(o, "warned");
	items = cJSON_AddArrayToObject(o, "items");
	for (i = 0; i < bb->n; i++) {
		const struct bench_budget *b = &bb->b[i];
		double	v = value_at(bench, b->metric);
		const char *state;

		it = cJSON_CreateObject();
		cJSON_AddItemToArray(items, it);
		cJSON_AddStringToObject(it, "key", b->key);
		cJSON_AddStringToObject(it, "metric", b->metric);
		cJSON_AddNumberToObject(it, "max", b->max);
		cJSON_AddStringToObject(it, "level", b->error ? "error" : "warn");
		snprintf(max, sizeof(max), "%g%s", b->max, b->unit);
		if (isnan(v)) {
			state = "not-measured";
			snprintf(text, sizeof(text), "%s not measured; budget "
			    "%s: not judged", b->label, max);
		} else {
			cJSON_AddNumberToObject(it, "value", v);
			snprintf(val, sizeof(val), "%g%s", v, b->unit);
			if (b->timing && (regime == NULL ||
			    strcmp(regime, "hardware") != 0)) {
				state = "not-judged";
				snprintf(text, sizeof(text), "%s %s; budget %s: "
				    "not judged (%s regime: timing is reported, "
				    "never judged)", b->label, val, max,
				    regime ? regime : "unknown");
			} else if (v > b->max) {
				state = "over";
				checked++;
				snprintf(text, sizeof(text), "%s %s; budget %s: "
				    "over by %.1f×%s", b->label, val, max,
				    v / b->max, b->error ? "" : " (warn)");
				cJSON_AddItemToArray(b->error ? breached : warned,
				    cJSON_CreateString(b->key));
				if (b->error)
					*error_breach = 1;
			} else {
				state = "inside";
				checked++;
				snprintf(text, sizeof(text), "%s %s; budget %s: "
				    "inside", b->label, val, max);
			}
		}
		cJSON_AddStringToObject(it, "state", state);
		cJSON_AddStringToObject(it, "text", text);
	}
	cJSON_AddNumberToObject(o, "checked", checked);
	return o;
}
