/*
 * bench — a project's bench files (bench.h).
 *
 * A bench file is written to a temp file in the same directory, fsynced,
 * and renamed into place: a reader sees the whole bench or none.  It is
 * linked rather than renamed when the name may be taken (link(2) fails
 * with EEXIST instead of replacing): two benches in one millisecond get
 * two files.
 */
#include <sys/stat.h>

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/base.h"
#include "ledger/footprint.h"
#include "project/append.h"
#include "project/bench.h"
#include "project/project.h"

void
project_bench_stamp(int64_t at_ms, char out[32])
{
	time_t		t;
	struct tm	tm;
	char		day[32];

	if (at_ms < 0)
		at_ms = 0;
	t = (time_t)(at_ms / 1000);
	gmtime_r(&t, &tm);
	strftime(day, sizeof(day), "%Y%m%dT%H%M%S", &tm);
	snprintf(out, 32, "%.15s.%03uZ", day, (unsigned)(at_ms % 1000));
}

/* Is name "<scene>-<stamp>.json"?  The scene's length, or -1. */
static int
bench_name_scene(const char *name)
{
	size_t	n = strlen(name), i;
	/* "-20261129T120500.123Z.json": 26 characters */
	const char *p;

	if (n < 27)
		return -1;
	p = name + n - 26;
	if (p[0] != '-' || strcmp(p + 21, ".json") != 0 || p[9] != 'T' ||
	    p[16] != '.' || p[20] != 'Z')
		return -1;
	for (i = 1; i < 20; i++)
		if (i != 9 && i != 16 && !isdigit((unsigned char)p[i]))
			return -1;
	return (int)(n - 26);
}

/* --- writing -------------------------------------------------------------- */

static int
mkdirs(const char *project, char *dir, size_t cap, char *why, size_t wcap)
{
	if ((size_t)snprintf(dir, cap, "%s/" PROJECT_DIR, project) >= cap)
		return base_say(why, wcap, -ENAMETOOLONG, "the project path is too "
		    "long");
	if (mkdir(dir, 0755) == -1 && errno != EEXIST)
		return base_say(why, wcap, -errno, "cannot create %s: %s", dir,
		    strerror(errno));
	if ((size_t)snprintf(dir, cap, "%s/" PROJECT_DIR "/" PROJECT_BENCH_DIR,
	    project) >= cap)
		return base_say(why, wcap, -ENAMETOOLONG, "the project path is too "
		    "long");
	if (mkdir(dir, 0755) == -1 && errno != EEXIST)
		return base_say(why, wcap, -errno, "cannot create %s: %s", dir,
		    strerror(errno));
	return 0;
}

int
project_bench_write(const char *project, const char *scene, int64_t at_ms,
    const cJSON *doc, char *path, size_t cap, char *why, size_t wcap)
{
	char	 dir[PATH_MAX], tmp[PATH_MAX], stamp[32], *text;
	size_t	 len;
	ssize_t	 w;
	int	 fd, rc, tries, dfd;

	if (!project_scene_ok(scene))
		return base_say(why, wcap, -EINVAL, "'%s' is not a scene name",
		    scene);
	if ((rc = mkdirs(project, dir, sizeof(dir), why, wcap)) != 0)
		return rc;
	if ((text = cJSON_Print(doc)) == NULL)
		return base_say(why, wcap, -ENOMEM, "out of memory");
	len = strlen(text);
	text[len] = '\n';	/* the NUL becomes the last newline */
	if ((size_t)snprintf(tmp, sizeof(tmp), "%s/.%s.%ld.tmp", dir, scene,
	    (long)getpid()) >= sizeof(tmp)) {
		free(text);
		return base_say(why, wcap, -ENAMETOOLONG, "the path is too long");
	}
	if ((fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644))
	    == -1) {
		rc = -errno;
		free(text);
		return base_say(why, wcap, rc, "cannot create %s: %s", tmp,
		    strerror(-rc));
	}
	do
		w = write(fd, text, len + 1);
	while (w == -1 && errno == EINTR);
	rc = w == (ssize_t)(len + 1) ? 0 : w == -1 ? -errno : -ENOSPC;
	free(text);
	if (rc == 0 && fsync(fd) == -1)
		rc = -errno;
	close(fd);
	if (rc != 0) {
		unlink(tmp);
		return base_say(why, wcap, rc, "cannot write %s: %s (no bench "
		    "written)", tmp, strerror(-rc));
	}
	for (tries = 0; tries < 1000; tries++) {
		project_bench_stamp(at_ms + tries, stamp);
		if ((size_t)snprintf(path, cap, "%s/%s-%s.json", dir, scene,
		    stamp) >= cap) {
			rc = base_say(why, wcap, -ENAMETOOLONG, "the path is too "
			    "long");
			break;
		}
		if (link(tmp, path) == 0) {
			rc = 0;
			break;
		}
		if (errno != EEXIST) {
			rc = base_say(why, wcap, -errno, "cannot make %s: %s", path,
			    strerror(errno));
			break;
		}
		rc = base_say(why, wcap, -EEXIST, "no free name for the bench");
	}
	unlink(tmp);
	if (rc == 0 && (dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC))
	    != -1) {
		(void)fsync(dfd);
		close(dfd);
	}
	return rc;
}

/* --- reading -------------------------------------------------------------- */

struct check {
	char	*why;
	size_t	 cap;
	int	 bad;
};

/* The first fault is the one said. */
static void
fault(struct check *k, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void
fault(struct check *k, const char *fmt, ...)
{
	va_list	ap;

	if (k->bad++)
		return;
	va_start(ap, fmt);
	vsnprintf(k->why, k->cap, fmt, ap);
	va_end(ap);
}

static const cJSON *
member(struct check *k, const cJSON *o, const char *name, const char *where)
{
	const cJSON	*it = cJSON_GetObjectItemCaseSensitive(o, name);

	if (it == NULL)
		fault(k, "%s%s is missing", where, name);
	return it;
}

static const cJSON *
object(struct check *k, const cJSON *o, const char *name, const char *where)
{
	const cJSON	*it = member(k, o, name, where);

	if (it != NULL && !cJSON_IsObject(it)) {
		fault(k, "%s%s is not an object", where, name);
		return NULL;
	}
	return it;
}

static const char *
string(struct check *k, const cJSON *o, const char *name, const char *where)
{
	const cJSON	*it = member(k, o, name, where);

	if (it != NULL && !cJSON_IsString(it)) {
		fault(k, "%s%s is not a string", where, name);
		return NULL;
	}
	return it ? it->valuestring : NULL;
}

/* A finite number ≥ 0 (every measure here is a time or a count). */
static int
number(struct check *k, const cJSON *o, const char *name, const char *where,
    double *out)
{
	const cJSON	*it = member(k, o, name, where);

	if (it == NULL)
		return -1;
	if (!cJSON_IsNumber(it) || !isfinite(it->valuedouble) ||
	    it->valuedouble < 0) {
		fault(k, "%s%s is not a number ≥ 0", where, name);
		return -1;
	}
	*out = it->valuedouble;
	return 0;
}

static int
whole(struct check *k, const cJSON *o, const char *name, const char *where,
    int lo, int hi, int *out)
{
	double	v;

	if (number(k, o, name, where, &v) != 0)
		return -1;
	if (v != floor(v) || v < lo || v > hi) {
		fault(k, "%s%s is not a whole number from %d to %d", where,
		    name, lo, hi);
		return -1;
	}
	*out = (int)v;
	return 0;
}

static const char *const counter_key[METRIC_N] = {
	[M_CALLS] = "calls", [M_TRIANGLES] = "triangles",
	[M_POINTS] = "points", [M_LINES] = "lines",
	[M_PROGRAMS] = "programs", [M_GEOMETRIES] = "geometries",
	[M_TEXTURES] = "textures",
};

/* perRun[i] into the series: timing required, GPU and each counter
 * optional — but one a run has, every run must have. */
static void
one_run(struct check *k, const cJSON *run, int i, int runs,
    struct verdict_bench *vb)
{
	char		 where[64];
	const cJSON	*frame, *render, *gpu, *counters;
	double		 v;
	int		 m;

	snprintf(where, sizeof(where), "perRun[%d].", i);
	if (!cJSON_IsObject(run)) {
		fault(k, "perRun[%d] is not an object", i);
		return;
	}
	if ((frame = object(k, run, "frame", where)) != NULL) {
		snprintf(where, sizeof(where), "perRun[%d].frame.", i);
		if (number(k, frame, "medianMs", where, &v) == 0)
			vb->m[M_FRAME_MEDIAN].run[i] = v;
		if (number(k, frame, "p95Ms", where, &v) == 0)
			vb->m[M_FRAME_P95].run[i] = v;
	}
	snprintf(where, sizeof(where), "perRun[%d].", i);
	if ((render = object(k, run, "render", where)) != NULL) {
		snprintf(where, sizeof(where), "perRun[%d].render.", i);
		if (number(k, render, "insideMs", where, &v) == 0)
			vb->m[M_RENDER_INSIDE].run[i] = v;
	}
	vb->m[M_FRAME_MEDIAN].n = vb->m[M_FRAME_P95].n =
	    vb->m[M_RENDER_INSIDE].n = runs;

	gpu = cJSON_GetObjectItemCaseSensitive(run, "gpu");
	if (gpu != NULL && !cJSON_IsNull(gpu)) {
		snprintf(where, sizeof(where), "perRun[%d].gpu.", i);
		if (!cJSON_IsObject(gpu))
			fault(k, "perRun[%d].gpu is not an object", i);
		else if (i > 0 && vb->m[M_GPU_MEDIAN].n == 0)
			fault(k, "perRun[%d] has GPU time and perRun[0] has "
			    "none", i);
		else {
			if (number(k, gpu, "medianMs", where, &v) == 0)
				vb->m[M_GPU_MEDIAN].run[i] = v;
			if (number(k, gpu, "p95Ms", where, &v) == 0)
				vb->m[M_GPU_P95].run[i] = v;
			vb->m[M_GPU_MEDIAN].n = vb->m[M_GPU_P95].n = runs;
		}
	} else if (i > 0 && vb->m[M_GPU_MEDIAN].n != 0)
		fault(k, "perRun[%d] has no GPU time and perRun[0] has", i);

	snprintf(where, sizeof(where), "perRun[%d].", i);
	if ((counters = object(k, run, "counters", where)) == NULL)
		return;
	snprintf(where, sizeof(where), "perRun[%d].counters.", i);
	for (m = 0; m < METRIC_N; m++) {
		const cJSON	*it;

		if (counter_key[m] == NULL)
			continue;
		it = cJSON_GetObjectItemCaseSensitive(counters, counter_key[m]);
		if (it == NULL) {
			if (i > 0 && vb->m[m].n != 0)
				fault(k, "%s%s is missing (perRun[0] has it)",
				    where, counter_key[m]);
			continue;
		}
		if (i > 0 && vb->m[m].n == 0) {
			fault(k, "%s%s is there and perRun[0] has none",
			    where, counter_key[m]);
			continue;
		}
		if (number(k, counters, counter_key[m], where, &v) == 0) {
			vb->m[m].run[i] = v;
			vb->m[m].n = runs;
		}
	}
}

int
project_bench_parse(const char *text, size_t n, cJSON **docp,
    struct verdict_bench *vbp, char *why, size_t cap)
{
	struct check		 k = { why, cap, 0 };
	struct verdict_bench	 vb;
	const char		*end = NULL, *s;
	const cJSON		*env, *per;
	cJSON			*doc;
	int64_t			 ms;
	int			 v, runs, frames, warmup, i;

	if (docp)
		*docp = NULL;
	memset(&vb, 0, sizeof(vb));
	if (n == 0)
		return base_say(why, cap, -EINVAL, "empty (a torn write?)");
	doc = cJSON_ParseWithLengthOpts(text, n, &end, 0);
	if (doc == NULL) {
		size_t	at = end && end >= text ? (size_t)(end - text) : 0;

		return base_say(why, cap, -EINVAL, "not whole JSON: it breaks at "
		    "byte %zu of %zu%s", at, n, at + 2 >= n ? " (a torn "
		    "write?)" : "");
	}
	for (s = end; s && (size_t)(s - text) < n; s++)
		if (!isspace((unsigned char)*s)) {
			cJSON_Delete(doc);
			return base_say(why, cap, -EINVAL, "something follows the "
			    "JSON document at byte %zu", (size_t)(s - text));
		}
	if (!cJSON_IsObject(doc)) {
		cJSON_Delete(doc);
		return base_say(why, cap, -EINVAL, "not a JSON object");
	}
	if (whole(&k, doc, "v", "", 1, 1, &v) != 0)
		goto out;
	s = string(&k, doc, "scene", "");
	if (s && !project_scene_ok(s))
		fault(&k, "scene is not a scene name");
	s = string(&k, doc, "at", "");
	if (s && iso_parse_ms(s, strlen(s), &ms) != 0)
		fault(&k, "at is not an ISO-8601 time");
	s = string(&k, doc, "regime", "");
	if (s && strcmp(s, "hardware") && strcmp(s, "software") &&
	    strcmp(s, "unknown"))
		fault(&k, "regime is not hardware, software or unknown");
	vb.regime = verdict_regime_parse(s);
	whole(&k, doc, "frames", "", 1, 1000000, &frames);
	whole(&k, doc, "warmup", "", 0, 1000000, &warmup);
	if (whole(&k, doc, "runs", "", 1, VERDICT_RUNS_MAX, &runs) != 0)
		goto out;
	if ((env = object(&k, doc, "environment", "")) != NULL) {
		s = string(&k, env, "configHash", "environment.");
		if (s && (strncmp(s, "sha256:", 7) != 0 || strlen(s) != 71))
			fault(&k, "environment.configHash is not sha256: and "
			    "64 hex digits");
		else if (s)
			snprintf(vb.hash, sizeof(vb.hash), "%s", s);
		s = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(env,
		    "gpu"));
		snprintf(vb.gpu, sizeof(vb.gpu), "%s", s ? s : "");
	}
	per = member(&k, doc, "perRun", "");
	if (per != NULL && !cJSON_IsArray(per))
		fault(&k, "perRun is not an array");
	else if (per != NULL && cJSON_GetArraySize(per) != runs)
		fault(&k, "perRun has %d entries for %d runs",
		    cJSON_GetArraySize(per), runs);
	else if (per != NULL)
		for (i = 0; i < runs && !k.bad; i++)
			one_run(&k, cJSON_GetArrayItem(per, i), i, runs, &vb);
out:
	if (k.bad) {
		cJSON_Delete(doc);
		return -EINVAL;
	}
	if (vbp)
		*vbp = vb;
	if (docp)
		*docp = doc;
	else
		cJSON_Delete(doc);
	return 0;
}

/* A whole file into memory, at most max bytes; refuses what is not a
 * regular file. */
static int
slurp(const char *path, size_t max, char **out, size_t *len, char *why,
    size_t cap)
{
	struct stat	 st;
	char		*buf;
	size_t		 got = 0;
	ssize_t		 r;
	int		 fd, rc;

	*out = NULL;
	*len = 0;
	if ((rc = project_open(path, O_RDONLY, 0, &fd)) != 0)
		return base_say(why, cap, rc, "%s: %s", path, rc == -ENOENT ?
		    "no such file" : project_strerror(rc));
	if (fstat(fd, &st) == -1) {
		rc = -errno;
		close(fd);
		return base_say(why, cap, rc, "%s: %s", path, strerror(-rc));
	}
	if ((uint64_t)st.st_size > max) {
		close(fd);
		return base_say(why, cap, -EFBIG, "%s: %lld bytes, more than %zu",
		    path, (long long)st.st_size, max);
	}
	if ((buf = malloc((size_t)st.st_size + 1)) == NULL) {
		close(fd);
		return base_say(why, cap, -ENOMEM, "out of memory");
	}
	while (got < (size_t)st.st_size) {
		r = read(fd, buf + got, (size_t)st.st_size - got);
		if (r == -1 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		got += (size_t)r;
	}
	close(fd);
	buf[got] = '\0';
	*out = buf;
	*len = got;
	return 0;
}

int
project_bench_read(const char *path, cJSON **doc, struct verdict_bench *vb,
    char *why, size_t cap)
{
	char	*text, inner[512];
	size_t	 len;
	int	 rc;

	if ((rc = slurp(path, PROJECT_BENCH_MAX, &text, &len, why, cap)) != 0)
		return rc;
	rc = project_bench_parse(text, len, doc, vb, inner, sizeof(inner));
	free(text);
	if (rc != 0)
		return base_say(why, cap, rc, "%s: %s", path, inner);
	return 0;
}

/* --- finding one ----------------------------------------------------------- */

struct found {
	char	name[NAME_MAX + 1];
};

static int
newest_first(const void *a, const void *b)
{
	const char	*x = ((const struct found *)a)->name,
			*y = ((const struct found *)b)->name;

	/* the stamps, then the names */
	int c = strcmp(y + strlen(y) - 25, x + strlen(x) - 25);

	return c ? c : strcmp(y, x);
}

int
project_bench_find(const char *project, const char *ref, const char *scene,
    int skip, char *path, size_t cap, char *scene_out, char *why,
    size_t wcap)
{
	char		 dir[PATH_MAX];
	struct found	*list = NULL, *grown;
	size_t		 n = 0, room = 0, i;
	struct dirent	*e;
	struct stat	 st;
	DIR		*d;
	int		 len, rc;

	if ((size_t)snprintf(dir, sizeof(dir), "%s/" PROJECT_DIR "/"
	    PROJECT_BENCH_DIR, project) >= sizeof(dir))
		return base_say(why, wcap, -ENAMETOOLONG, "the project path is too "
		    "long");
	if (strcmp(ref, "last") != 0) {
		const char *suffix = strlen(ref) > 5 &&
		    strcmp(ref + strlen(ref) - 5, ".json") == 0 ? "" : ".json";

		if (strchr(ref, '/') != NULL && stat(ref, &st) == 0) {
			if ((size_t)snprintf(path, cap, "%s", ref) >= cap)
				return base_say(why, wcap, -ENAMETOOLONG, "the path "
				    "is too long");
			return 0;
		}
		if (strchr(ref, '/') == NULL &&
		    (size_t)snprintf(path, cap, "%s/%s%s", dir, ref, suffix) <
		    cap && stat(path, &st) == 0)
			return 0;
		if (stat(ref, &st) == 0 &&
		    (size_t)snprintf(path, cap, "%s", ref) < cap)
			return 0;
		return base_say(why, wcap, -ENOENT, "no bench '%s' (a file, or a "
		    "name in %s)", ref, dir);
	}
	if ((d = opendir(dir)) == NULL) {
		rc = -errno;
		return base_say(why, wcap, rc, rc == -ENOENT ? "no bench yet (no "
		    "%s): run `sloptimize bench --scene NAME --launch` first" :
		    "cannot read %s: %s", dir, strerror(-rc));
	}
	while ((e = readdir(d)) != NULL) {
		if ((len = bench_name_scene(e->d_name)) <= 0)
			continue;
		if (scene != NULL && ((size_t)len != strlen(scene) ||
		    strncmp(e->d_name, scene, (size_t)len) != 0))
			continue;
		if (n == room) {
			room = room ? 2 * room : 16;
			if ((grown = realloc(list, room * sizeof(*list))) ==
			    NULL) {
				free(list);
				closedir(d);
				return base_say(why, wcap, -ENOMEM, "out of memory");
			}
			list = grown;
		}
		snprintf(list[n++].name, sizeof(list->name), "%s", e->d_name);
	}
	closedir(d);
	qsort(list, n, sizeof(*list), newest_first);
	if (scene == NULL && n > 0) {
		/* the newest bench's scene, then its benches only */
		char	first[PROJECT_SCENE_MAX + 1];
		size_t	m = 0;

		len = bench_name_scene(list[0].name);
		snprintf(first, sizeof(first), "%.*s", len, list[0].name);
		for (i = 0; i < n; i++)
			if (bench_name_scene(list[i].name) == len &&
			    strncmp(list[i].name, first, (size_t)len) == 0)
				list[m++] = list[i];
		n = m;
		if (scene_out)
			snprintf(scene_out, PROJECT_SCENE_MAX + 1, "%s", first);
	} else if (scene_out && scene)
		snprintf(scene_out, PROJECT_SCENE_MAX + 1, "%s", scene);
	if ((size_t)skip >= n) {
		rc = base_say(why, wcap, -ENOENT, "%s %s in %s%s",
		    n == 0 ? "no bench" : "only one bench", scene ? scene :
		    "of any scene", dir, n == 0 ? ": run `sloptimize bench "
		    "--scene NAME --launch` first" : ": a comparison needs "
		    "two");
		free(list);
		return rc;
	}
	rc = (size_t)snprintf(path, cap, "%s/%s", dir, list[skip].name) >= cap ?
	    base_say(why, wcap, -ENAMETOOLONG, "the path is too long") : 0;
	free(list);
	return rc;
}

/* --- the history ------------------------------------------------------------ */

int
project_bench_history_append(const char *project, const cJSON *line,
    char *why, size_t cap)
{
	char	*text = cJSON_PrintUnformatted(line);
	int	 rc;

	if (text == NULL)
		return base_say(why, cap, -ENOMEM, "out of memory");
	rc = project_line_append(project, PROJECT_BENCH_HISTORY, text,
	    strlen(text), NULL, why, cap);
	free(text);
	return rc;
}

int
project_bench_history_read(const char *project, size_t last, cJSON **lines,
    cJSON **skipped, char *why, size_t cap)
{
	char		 path[PATH_MAX], *text, *p, *nl, inner[160];
	size_t		 len;
	uint64_t	 lineno = 0;
	cJSON		*all, *bad;
	int		 rc, n;

	*lines = NULL;
	*skipped = NULL;
	if (project_path(project, PROJECT_BENCH_HISTORY, path, sizeof(path)))
		return base_say(why, cap, -ENAMETOOLONG, "the project path is too "
		    "long");
	rc = slurp(path, (size_t)1 << 30, &text, &len, why, cap);
	if (rc == -ENOENT) {
		*lines = cJSON_CreateArray();
		*skipped = cJSON_CreateArray();
		return 0;
	}
	if (rc != 0)
		return rc;
	all = cJSON_CreateArray();
	bad = cJSON_CreateArray();
	for (p = text; p < text + len; p = nl + 1) {
		cJSON	*o, *s;
		size_t	 n1;

		lineno++;
		if ((nl = memchr(p, '\n', (size_t)(text + len - p))) == NULL)
			nl = text + len;
		n1 = (size_t)(nl - p);
		if (n1 == 0)
			continue;
		o = NULL;
		if (nl == text + len)
			snprintf(inner, sizeof(inner), "the last line has no "
			    "newline: a write in progress or torn");
		else if (project_json_check(p, n1, inner, sizeof(inner)) == 0 &&
		    (o = cJSON_ParseWithLength(p, n1)) != NULL)
			cJSON_AddItemToArray(all, o);
		if (o == NULL) {
			s = cJSON_CreateObject();
			cJSON_AddNumberToObject(s, "line", (double)lineno);
			cJSON_AddNumberToObject(s, "offset", (double)(p - text));
			cJSON_AddStringToObject(s, "why", inner);
			cJSON_AddItemToArray(bad, s);
		}
	}
	free(text);
	while (last > 0 && (n = cJSON_GetArraySize(all)) > 0 &&
	    (size_t)n > last)
		cJSON_DeleteItemFromArray(all, 0);
	*lines = all;
	*skipped = bad;
	return 0;
}

/* --- dev.json ---------------------------------------------------------------- */

int
project_dev_read(const char *project, char *url, size_t cap, long *pid,
    char *why, size_t wcap)
{
	char		 path[PATH_MAX], *text, inner[256];
	size_t		 len;
	cJSON		*o;
	const cJSON	*u, *p;
	int		 rc;

	if (project_path(project, PROJECT_DEV_JSON, path, sizeof(path)))
		return base_say(why, wcap, -ENAMETOOLONG, "the project path is too "
		    "long");
	if ((rc = slurp(path, 65536, &text, &len, inner, sizeof(inner))) != 0)
		return base_say(why, wcap, rc, rc == -ENOENT ? "no %s: start the "
		    "game's Vite dev server with sloptimize's plugin (it "
		    "writes it), or pass --url" : "%s", rc == -ENOENT ? path :
		    inner);
	o = cJSON_ParseWithLength(text, len);
	free(text);
	u = cJSON_GetObjectItemCaseSensitive(o, "url");
	p = cJSON_GetObjectItemCaseSensitive(o, "pid");
	if (!cJSON_IsString(u) || (strncmp(u->valuestring, "http://", 7) != 0 &&
	    strncmp(u->valuestring, "https://", 8) != 0) ||
	    strlen(u->valuestring) >= cap || !cJSON_IsNumber(p) ||
	    p->valuedouble < 1 || p->valuedouble > 1e9) {
		cJSON_Delete(o);
		return base_say(why, wcap, -EINVAL, "%s is not {\"url\": "
		    "\"http://…\", \"pid\": N}: pass --url", path);
	}
	snprintf(url, cap, "%s", u->valuestring);
	*pid = (long)p->valuedouble;
	cJSON_Delete(o);
	if (kill((pid_t)*pid, 0) == -1 && errno == ESRCH)
		return base_say(why, wcap, -ESRCH, "the dev server %s names (pid "
		    "%ld, %s) is not running: start it, or pass --url", path,
		    *pid, url);
	return 0;
}
