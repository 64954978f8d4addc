/*
 * budgets — sloptimize.budgets.json and the judgement of a measurement
 * against it (budgets.h, docs/budgets.md).
 *
 * The file is reviewed like code, so a fault in it is an error that says
 * where and why, never a budget quietly dropped: the bytes are checked
 * against the strict grammar first (the ledger's own scanner, which says
 * at which byte a file stops being JSON), then the tree is walked with
 * cJSON and every fault is listed, one line each, key first.  Only the
 * first faults fit in `why`; the count of the rest is said.
 */
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "project/append.h"
#include "project/budgets.h"
#include "project/project.h"

static const struct {
	const char	*key, *name, *obj, *member, *unit;
	int		 timing;
} metrics[BUDGET_N] = {
	[BUDGET_DRAW_CALLS] = { "perf.budget.draw_calls", "draw_calls",
	    "render", "calls", "", 0 },
	[BUDGET_TRIANGLES] = { "perf.budget.triangles", "triangles",
	    "render", "triangles", "", 0 },
	[BUDGET_PROGRAMS] = { "perf.budget.programs", "programs",
	    "memory", "programs", "", 0 },
	[BUDGET_FRAME_MS_P95] = { "perf.budget.frame_ms_p95", "frame_ms_p95",
	    "frame", "p95Ms", "ms", 1 },
	[BUDGET_GPU_MS_P95] = { "perf.budget.gpu_ms_p95", "gpu_ms_p95",
	    "gpu", "p95Ms", "ms", 1 },
};

static const char *const paths[BUDGET_N] = {
	"render.calls", "render.triangles", "memory.programs", "frame.p95Ms",
	"gpu.p95Ms"
};

const char *
budgets_key(enum budget_metric m)
{
	return m < BUDGET_N ? metrics[m].key : "";
}

const char *
budgets_name(enum budget_metric m)
{
	return m < BUDGET_N ? metrics[m].name : "";
}

const char *
budgets_path(enum budget_metric m)
{
	return m < BUDGET_N ? paths[m] : "";
}

int
budgets_is_timing(enum budget_metric m)
{
	return m < BUDGET_N && metrics[m].timing;
}

const char *
budgets_unit(enum budget_metric m)
{
	return m < BUDGET_N ? metrics[m].unit : "";
}

const char *
budgets_level_name(enum budget_level l)
{
	return l == BUDGET_WARN ? "warn" : "error";
}

const char *
budgets_status_name(enum budget_status s)
{
	switch (s) {
	case BUDGET_INSIDE:	return "inside";
	case BUDGET_BREACHED:	return "breached";
	case BUDGET_NOT_JUDGED:	return "not-judged";
	case BUDGET_UNMEASURED:	return "unmeasured";
	case BUDGET_SKIPPED:	return "skipped";
	default:		return "undeclared";
	}
}

/* --- parsing ---------------------------------------------------------------- */

/* The faults found so far, one line each, into why[cap]. */
struct faults {
	char	*why;
	size_t	 cap, used;
	int	 n, dropped;
};

static void
fault(struct faults *f, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void
fault(struct faults *f, const char *fmt, ...)
{
	char	line[512];
	va_list	ap;
	size_t	n;

	f->n++;
	if (f->why == NULL || f->cap == 0)
		return;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	n = strlen(line);
	/* a line that does not fit whole is not cut: it is counted */
	if (f->used + (f->used ? 1 : 0) + n + 64 >= f->cap) {
		f->dropped++;
		return;
	}
	if (f->used)
		f->why[f->used++] = '\n';
	memcpy(f->why + f->used, line, n + 1);
	f->used += n;
}

/* A key as written, safe to print: at most 80 bytes, control characters
 * and quotes replaced (it came from a file anyone may edit). */
static void
printable(const char *s, char *out, size_t cap)
{
	size_t	i, o = 0;

	for (i = 0; s[i] != '\0' && o + 4 < cap && i < 80; i++)
		out[o++] = (unsigned char)s[i] < 0x20 || s[i] == 0x7f ||
		    s[i] == '"' ? '?' : s[i];
	if (s[i] != '\0' && o + 4 < cap) {
		memcpy(out + o, "...", 3);
		o += 3;
	}
	out[o] = '\0';
}

/* Edit distance of two short strings, capped (for "did you mean"). */
static size_t
distance(const char *a, const char *b)
{
	size_t	la = strlen(a), lb = strlen(b), i, j, prev[64], cur[64];

	if (la >= 63 || lb >= 63)
		return 99;
	for (j = 0; j <= lb; j++)
		prev[j] = j;
	for (i = 1; i <= la; i++) {
		cur[0] = i;
		for (j = 1; j <= lb; j++) {
			size_t	sub = prev[j - 1] + (a[i - 1] != b[j - 1]);
			size_t	del = prev[j] + 1, ins = cur[j - 1] + 1;

			cur[j] = sub < del ? (sub < ins ? sub : ins) :
			    (del < ins ? del : ins);
		}
		memcpy(prev, cur, (lb + 1) * sizeof(prev[0]));
	}
	return prev[lb];
}

/* The known key nearest to `k` (within a few edits), or NULL. */
static const char *
nearest(const char *k)
{
	const char	*best = NULL;
	size_t		 bd = 4, d;
	int		 m;

	for (m = 0; m < BUDGET_N; m++) {
		/* "draw_calls" alone, or with the wrong prefix */
		const char	*tail = strrchr(k, '.');

		if ((d = distance(k, metrics[m].key)) < bd ||
		    (tail != NULL && (d = distance(tail + 1, metrics[m].name))
		    < bd) || (d = distance(k, metrics[m].name)) < bd) {
			bd = d;
			best = metrics[m].key;
		}
	}
	return best;
}

static const char *
kind_name(const cJSON *v)
{
	if (cJSON_IsString(v))
		return "a string";
	if (cJSON_IsBool(v))
		return "a boolean";
	if (cJSON_IsNull(v))
		return "null";
	if (cJSON_IsArray(v))
		return "an array";
	if (cJSON_IsObject(v))
		return "an object";
	return "a number";
}

/* A max: a finite number >= 0.  0, or -1 with the fault said. */
static int
parse_max(struct faults *f, const char *key, const char *where,
    const cJSON *v, double *out)
{
	if (!cJSON_IsNumber(v)) {
		fault(f, "%s%s: the max is a number, not %s", key, where,
		    kind_name(v));
		return -1;
	}
	/* cJSON reads 1e999 as infinity: never a budget */
	if (!isfinite(v->valuedouble)) {
		fault(f, "%s%s: the max is a finite number, and this one is "
		    "too large to be one", key, where);
		return -1;
	}
	if (v->valuedouble < 0) {
		fault(f, "%s%s: the max is a number >= 0, not %g", key, where,
		    v->valuedouble);
		return -1;
	}
	*out = v->valuedouble;
	return 0;
}

static void
parse_budget(struct faults *f, const cJSON *v, enum budget_metric m,
    struct budget *b)
{
	const char	*key = metrics[m].key;
	const cJSON	*it, *max = NULL, *level = NULL;
	char		 name[96];
	int		 bad = 0;

	if (cJSON_IsNumber(v)) {
		if (parse_max(f, key, "", v, &b->max) == 0) {
			b->declared = 1;
			b->level = BUDGET_ERROR;
		}
		return;
	}
	if (!cJSON_IsObject(v)) {
		fault(f, "%s: a budget is a number or {\"max\": N, \"level\": "
		    "\"error\"|\"warn\"}, not %s", key, kind_name(v));
		return;
	}
	cJSON_ArrayForEach(it, v) {
		if (strcmp(it->string, "max") == 0) {
			if (max != NULL) {
				fault(f, "%s.max: given twice; keep one", key);
				bad = 1;
			}
			max = it;
		} else if (strcmp(it->string, "level") == 0) {
			if (level != NULL) {
				fault(f, "%s.level: given twice; keep one", key);
				bad = 1;
			}
			level = it;
		} else {
			printable(it->string, name, sizeof(name));
			fault(f, "%s.%s: unknown (a budget has \"max\" and "
			    "\"level\" only)", key, name);
			bad = 1;
		}
	}
	if (max == NULL) {
		fault(f, "%s: {…} needs \"max\"", key);
		bad = 1;
	} else if (parse_max(f, key, ".max", max, &b->max) != 0)
		bad = 1;
	b->level = BUDGET_ERROR;
	if (level != NULL) {
		const char	*s = cJSON_GetStringValue(level);

		if (s != NULL && strcmp(s, "error") == 0)
			b->level = BUDGET_ERROR;
		else if (s != NULL && strcmp(s, "warn") == 0)
			b->level = BUDGET_WARN;
		else {
			if (s != NULL) {
				printable(s, name, sizeof(name));
				fault(f, "%s.level: \"error\" or \"warn\", not "
				    "\"%s\" (to turn a budget off, remove it)",
				    key, name);
			} else
				fault(f, "%s.level: \"error\" or \"warn\", not "
				    "%s", key, kind_name(level));
			bad = 1;
		}
	}
	if (!bad)
		b->declared = 1;
}

/* Byte `at` of text as "line L, column C" (columns count bytes). */
static void
position(const char *text, size_t len, size_t at, char *out, size_t cap)
{
	size_t	i, line = 1, col = 1;

	for (i = 0; i < at && i < len; i++) {
		if (text[i] == '\n') {
			line++;
			col = 1;
		} else
			col++;
	}
	snprintf(out, cap, "line %zu, column %zu", line, col);
}

int
budgets_parse(const char *text, size_t len, struct budgets *out, char *why,
    size_t cap)
{
	struct faults	 f = { why, cap, 0, 0, 0 };
	char		 reason[256], where[64], name[96];
	cJSON		*doc, *it, *other;
	size_t		 skip = 0;
	int		 m;

	memset(out, 0, sizeof(*out));
	if (why != NULL && cap > 0)
		*why = '\0';
	if (len >= 3 && memcmp(text, "\xef\xbb\xbf", 3) == 0)
		skip = 3;
	if (len - skip > BUDGETS_MAX_BYTES) {
		fault(&f, "the file is over %d KiB: not a budgets file",
		    BUDGETS_MAX_BYTES / 1024);
		return -EINVAL;
	}
	/* the strict grammar first: it says where the file stops being
	 * JSON ("byte 57"), which cJSON does not */
	if (project_json_check(text + skip, len - skip, reason,
	    sizeof(reason)) != 0) {
		const char	*r = reason, *at = strstr(reason, " at byte ");
		const char	*pre = "not a valid JSON object: ";
		unsigned long	 b;

		if (strncmp(r, pre, strlen(pre)) == 0)
			r += strlen(pre);
		if (at != NULL && at > r && sscanf(at, " at byte %lu", &b) == 1) {
			position(text + skip, len - skip, b, where,
			    sizeof(where));
			fault(&f, "(the file): not one JSON object: %.*s at %s",
			    (int)(at - r), r, where);
		} else
			fault(&f, "(the file): not one JSON object: %s", r);
		return -EINVAL;
	}
	if ((doc = cJSON_ParseWithLength(text + skip, len - skip)) == NULL) {
		fault(&f, "(the file): cannot be read as JSON (out of memory?)");
		return -EINVAL;
	}
	cJSON_ArrayForEach(it, doc) {
		/* a key twice: which one counts would depend on the reader */
		for (other = doc->child; other != it; other = other->next)
			if (strcmp(other->string, it->string) == 0)
				break;
		printable(it->string, name, sizeof(name));
		if (other != it) {
			fault(&f, "%s: declared twice; keep one", name);
			continue;
		}
		if (strcmp(it->string, "$schema") == 0 ||
		    strcmp(it->string, "$comment") == 0) {
			if (!cJSON_IsString(it))
				fault(&f, "%s: a string, not %s", name,
				    kind_name(it));
			continue;
		}
		for (m = 0; m < BUDGET_N; m++)
			if (strcmp(it->string, metrics[m].key) == 0)
				break;
		if (m < BUDGET_N) {
			parse_budget(&f, it, (enum budget_metric)m,
			    &out->b[m]);
			continue;
		}
		if (strcmp(it->string, "perf") == 0 && cJSON_IsObject(it))
			fault(&f, "perf: the keys are flat, as written in the "
			    "code that reads them: \"perf.budget.draw_calls\": "
			    "300, not {\"perf\": {\"budget\": …}}");
		else if (nearest(it->string) != NULL)
			fault(&f, "%s: not a budget this version knows; did you "
			    "mean %s?", name, nearest(it->string));
		else
			fault(&f, "%s: not a budget this version knows (%s, %s, "
			    "%s, %s, %s)", name, metrics[0].key, metrics[1].key,
			    metrics[2].key, metrics[3].key, metrics[4].key);
	}
	if (!cJSON_IsObject(doc))	/* the grammar check allows objects only */
		fault(&f, "(the file): one JSON object of budgets");
	cJSON_Delete(doc);
	if (f.dropped > 0 && why != NULL && f.used + 40 < cap)
		snprintf(why + f.used, cap - f.used, "\n(and %d more)",
		    f.dropped);
	if (f.n > 0) {
		memset(out, 0, sizeof(*out));
		return -EINVAL;
	}
	for (m = 0; m < BUDGET_N; m++)
		out->ndeclared += out->b[m].declared;
	return 0;
}

int
budgets_read(const char *project, struct budgets *out, int *found, char *why,
    size_t cap)
{
	char		 path[PATH_MAX];
	char		*buf;
	struct stat	 st;
	ssize_t		 r;
	size_t		 n = 0;
	int		 fd, rc;

	memset(out, 0, sizeof(*out));
	*found = 0;
	if (why != NULL && cap > 0)
		*why = '\0';
	if (snprintf(path, sizeof(path), "%s/%s", project, BUDGETS_FILE) >=
	    (int)sizeof(path)) {
		snprintf(why, cap, "the project path is too long");
		return -ENAMETOOLONG;
	}
	/* O_NONBLOCK: a FIFO there must not hang `check` or the pool */
	if ((fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)) == -1) {
		if (errno == ENOENT)
			return 0;
		rc = -errno;
		snprintf(why, cap, "%s: %s", path, strerror(-rc));
		return rc;
	}
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		snprintf(why, cap, "%s: not a regular file", path);
		return -ESPIPE;
	}
	*found = 1;
	if (st.st_size > BUDGETS_MAX_BYTES) {
		close(fd);
		snprintf(why, cap, "%s: %lld bytes, over the %d KiB a budgets "
		    "file may have", path, (long long)st.st_size,
		    BUDGETS_MAX_BYTES / 1024);
		return -EFBIG;
	}
	if ((buf = malloc(BUDGETS_MAX_BYTES + 1)) == NULL) {
		close(fd);
		snprintf(why, cap, "out of memory");
		return -ENOMEM;
	}
	/* read to the end, whatever the size said (the file may grow) */
	while (n <= BUDGETS_MAX_BYTES) {
		r = read(fd, buf + n, BUDGETS_MAX_BYTES + 1 - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			rc = -errno;
			free(buf);
			close(fd);
			snprintf(why, cap, "%s: %s", path, strerror(-rc));
			return rc;
		}
		if (r == 0)
			break;
		n += (size_t)r;
	}
	close(fd);
	if (n > BUDGETS_MAX_BYTES) {
		free(buf);
		snprintf(why, cap, "%s: over the %d KiB a budgets file may "
		    "have", path, BUDGETS_MAX_BYTES / 1024);
		return -EFBIG;
	}
	rc = budgets_parse(buf, n, out, why, cap);
	free(buf);
	return rc;
}

/* --- judging ------------------------------------------------------------------ */

/* profile.<obj>.<member> as a finite number >= 0, or -1. */
static int
profile_value(const cJSON *profile, enum budget_metric m, double *out)
{
	const cJSON	*o = cJSON_GetObjectItemCaseSensitive(profile,
			    metrics[m].obj);
	const cJSON	*v = cJSON_GetObjectItemCaseSensitive(o,
			    metrics[m].member);

	if (!cJSON_IsObject(o) || !cJSON_IsNumber(v) ||
	    !isfinite(v->valuedouble) || v->valuedouble < 0)
		return -1;
	*out = v->valuedouble;
	return 0;
}

void
budgets_judge(const struct budgets *b, const cJSON *profile, unsigned flags,
    struct budget_judgement *j)
{
	const char	*regime = cJSON_GetStringValue(
			    cJSON_GetObjectItemCaseSensitive(profile, "regime"));
	int		 m;

	memset(j, 0, sizeof(*j));
	if (regime != NULL && strcmp(regime, "hardware") == 0)
		j->regime = "hardware";
	else if (regime != NULL && strcmp(regime, "software") == 0)
		j->regime = "software";
	else
		j->regime = "unknown";
	j->paused = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(profile,
	    "paused"));
	for (m = 0; m < BUDGET_N; m++) {
		const struct budget	*bu = &b->b[m];
		struct budget_result	*r = &j->r[m];

		r->why = "";
		if (!bu->declared)
			continue;
		j->declared++;
		r->has_value = profile_value(profile, (enum budget_metric)m,
		    &r->value) == 0;
		if (r->has_value)
			r->ratio = bu->max > 0 ? r->value / bu->max :
			    r->value > 0 ? INFINITY : 0;
		if (metrics[m].timing && (flags & BUDGETS_COUNTERS_ONLY)) {
			r->status = BUDGET_SKIPPED;
			r->why = "--counters-only: timing is not judged";
			j->skipped++;
			continue;
		}
		if (!r->has_value) {
			r->status = BUDGET_UNMEASURED;
			r->why = m == BUDGET_GPU_MS_P95 ? "not measured: the "
			    "measurement has no GPU time (gpu.p95Ms)" :
			    "not measured: the measurement has no value for it";
			j->unmeasured++;
			continue;
		}
		if (metrics[m].timing && strcmp(j->regime, "software") == 0) {
			r->status = BUDGET_NOT_JUDGED;
			r->why = "software regime: timings not trusted";
			j->not_judged++;
			continue;
		}
		if (metrics[m].timing && j->paused) {
			r->status = BUDGET_NOT_JUDGED;
			r->why = "paused: frame times of a paused game are not "
			    "its cost";
			j->not_judged++;
			continue;
		}
		j->checked++;
		if (r->value > bu->max) {
			r->status = BUDGET_BREACHED;
			if (bu->level == BUDGET_WARN)
				j->breached_warn++;
			else
				j->breached_error++;
		} else
			r->status = BUDGET_INSIDE;
		if (metrics[m].timing && strcmp(j->regime, "unknown") == 0)
			r->why = "regime unknown: the renderer was not named, "
			    "so this timing may come from a software renderer";
	}
}
