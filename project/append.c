/*
 * append — the writers of a project's ledger files (append.h).
 *
 * O_APPEND makes each write(2) land whole at the end of the file; the
 * flock keeps the writers that follow the same rule (every one of ours)
 * ordered, so a batch is never split by another writer's line.  A file
 * whose last byte is not a newline (a writer that does not take the lock
 * died mid-line) gets one first: our records must not glue themselves to
 * a torn tail, which then stays a line of its own, skipped and counted.
 *
 * The lock is waited for with LOCK_NB and short sleeps, not a blocking
 * flock, because the daemon runs this on its thread pool: a writer that
 * holds the lock forever must cost one request a timeout, not a pool
 * thread, and a request whose client left must not be written after the
 * lock comes free.
 */
#include <sys/file.h>
#include <sys/stat.h>

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/base.h"
#include "ledger/footprint.h"
#include "ledger/jscan.h"
#include "ledger/ledger.h"
#include "project/append.h"
#include "project/project.h"
#include "project/scene.h"

#define LOCK_POLL_MS	5

/* --- the validator ------------------------------------------------------ */

/* A backslash only occurs inside strings in valid JSON text, so a linear
 * scan is exact. */
long
project_nul_escape(const char *p, size_t n)
{
	size_t	i;

	for (i = 0; i + 1 < n; i++) {
		if (p[i] != '\\')
			continue;
		if (p[i + 1] == 'u' && i + 5 < n && memcmp(p + i + 2, "0000",
		    4) == 0)
			return (long)i;
		i++;		/* the escaped character */
	}
	return -1;
}

static int
json_check(const char *p, size_t n, struct jscan_result *r, char *why,
    size_t cap)
{
	long	at;

	if (n >= LEDGER_MAX_LINE)
		return base_say(why, cap, -EINVAL, "longer than 1 MiB, the longest "
		    "line the fold reads");
	if (jscan_object(p, n, r) != 0)
		return base_say(why, cap, -EINVAL, "not a valid JSON object: %s at "
		    "byte %zu", r->error, r->error_at);
	if ((at = project_nul_escape(p, n)) >= 0)
		return base_say(why, cap, -EINVAL, "\\u0000 at byte %ld: a NUL cuts "
		    "a string short in every reader", at);
	return 0;
}

int
project_json_check(const char *text, size_t n, char *why, size_t cap)
{
	struct jscan_result	r;

	return json_check(text, n, &r, why, cap);
}

int
project_record_check(const char *text, size_t n, char *why, size_t cap)
{
	struct jscan_result	 r;
	const struct jspan	*at;
	int64_t			 ms;
	int			 rc;

	if ((rc = json_check(text, n, &r, why, cap)) != 0)
		return rc;
	if (r.f[F_TYPE].kind != J_STRING || r.f[F_TYPE].n == 0)
		return base_say(why, cap, -EINVAL, "a record has a string type");
	at = &r.f[F_AT];
	if (at->kind != J_STRING || at->escaped ||
	    iso_parse_ms(at->p, at->n, &ms) != 0)
		return base_say(why, cap, -EINVAL, "a record has an ISO-8601 at "
		    "(2026-11-29T12:06:00.667Z)");
	return 0;
}

/* --- the one writer ----------------------------------------------------- */

static int
gone(const struct project_write *w)
{
	return w != NULL && w->gone != NULL && atomic_load(w->gone);
}

/* Take the writers' lock, waiting at most wait_ms, and giving up early
 * when the request is gone. */
static int
lock_wait(int fd, const struct project_write *w)
{
	int		 wait_ms = w && w->lock_wait_ms ? w->lock_wait_ms :
			    PROJECT_LOCK_WAIT_MS;
	struct timespec	 nap = { 0, LOCK_POLL_MS * 1000000L };
	int		 waited = 0;

	for (;;) {
		if (flock(fd, LOCK_EX | LOCK_NB) == 0)
			return 0;
		if (errno == EINTR)
			continue;
		if (errno != EWOULDBLOCK)
			return -errno;
		if (gone(w))
			return -ECANCELED;
		if (wait_ms < 0 || waited >= wait_ms)
			return -ETIMEDOUT;
		nanosleep(&nap, NULL);
		waited += LOCK_POLL_MS;
	}
}

/*
 * write(2) exactly once: a short write is an error, and is undone.  A
 * nearly full disk takes part of a write and says nothing more (the call
 * "succeeds" short), so the rest is offered once more only to learn the
 * real cause — ENOSPC, EDQUOT, EFBIG — which is what the user needs to
 * read, not a made-up "Input/output error".  If that second write does
 * go through (space was freed in between) and nobody wrote in between,
 * the record is whole and stays.  Where the short write landed is where
 * the descriptor's offset now is, less what it took (O_APPEND moved it
 * to the end first), so no lock is needed to know what to undo.
 */
int
project_write_once(int fd, const char *buf, size_t len)
{
	ssize_t		n, m;
	struct stat	st;
	off_t		size;
	int		rc;

	do
		n = write(fd, buf, len);
	while (n == -1 && errno == EINTR);
	if (n == (ssize_t)len)
		return 0;
	if (n <= 0)
		return n == -1 ? -errno : -EIO;
	if ((size = lseek(fd, 0, SEEK_CUR)) == -1)
		return -EIO;
	size -= n;
	if (fstat(fd, &st) == -1 || st.st_size != size + n)
		return -EIO;	/* another writer came after: cannot undo */
	do
		m = write(fd, buf + n, len - (size_t)n);
	while (m == -1 && errno == EINTR);
	if (m == (ssize_t)(len - (size_t)n))
		return 0;
	rc = m == -1 ? -errno : -ENOSPC;
	/* A torn tail must not glue itself to the next record.  If it cannot
	 * be cut either, the next append starts with a newline (append_lines)
	 * and the fold skips the torn line, counted: nothing more to do here,
	 * hence the result kept only to be dropped (a (void) cast does not
	 * silence warn_unused_result under _FORTIFY_SOURCE). */
	if (fstat(fd, &st) == 0 && st.st_size == size + n + (m > 0 ? m : 0)) {
		int cut = ftruncate(fd, size);
		(void)cut;
	}
	return rc;
}

/*
 * Append buf[0..len) — whole lines — to <project>/.sloptimize/<name>, in
 * one write(2) under the file's lock, then fsync.  *why says what failed.
 */
static int
append_lines(const char *project, const char *name, const char *buf,
    size_t len, const struct project_write *w, char *why, size_t cap)
{
	char		 dir[PATH_MAX], path[PATH_MAX], last, *nl = NULL;
	struct stat	 st;
	int		 fd = -1, rc;

	if (gone(w))
		return base_say(why, cap, -ECANCELED, "the request went away");
	if ((size_t)snprintf(dir, sizeof(dir), "%s/" PROJECT_DIR, project) >=
	    sizeof(dir) || project_path(project, name, path, sizeof(path)))
		return base_say(why, cap, -ENAMETOOLONG, "the project path is too "
		    "long");
	if (mkdir(dir, 0755) == -1 && errno != EEXIST)
		return base_say(why, cap, -errno, "cannot create %s: %s", dir,
		    strerror(errno));
	/* O_RDWR: the last byte is read back to see if it ends a line */
	if ((rc = project_open(path, O_RDWR | O_APPEND | O_CREAT, 0644,
	    &fd)) != 0)
		return base_say(why, cap, rc, "cannot open %s: %s", name,
		    project_strerror(rc));
	if ((rc = lock_wait(fd, w)) != 0) {
		base_say(why, cap, rc, rc == -ETIMEDOUT ? "%s is locked by another "
		    "writer; try again" : rc == -ECANCELED ? "the request "
		    "went away (%s not written)" : "cannot lock %s", name);
		goto out;
	}
	if (gone(w)) {
		rc = base_say(why, cap, -ECANCELED, "the request went away (%s not "
		    "written)", name);
		goto out;
	}
	if (fstat(fd, &st) == -1) {
		rc = base_say(why, cap, -errno, "cannot stat %s", name);
		goto out;
	}
	if (st.st_size > 0 && pread(fd, &last, 1, st.st_size - 1) == 1 &&
	    last != '\n') {
		/* a torn tail: our lines start on a line of their own */
		if ((nl = malloc(len + 1)) == NULL) {
			rc = base_say(why, cap, -ENOMEM, "out of memory");
			goto out;
		}
		nl[0] = '\n';
		memcpy(nl + 1, buf, len);
	}
	if ((rc = project_write_once(fd, nl ? nl : buf, len + (nl != NULL)))
	    != 0) {
		base_say(why, cap, rc, "cannot write %s: %s (nothing of it was "
		    "kept)", name, strerror(-rc));
		goto out;
	}
	if (fsync(fd) == -1)
		rc = base_say(why, cap, -errno, "fsync of %s failed: %s", name,
		    strerror(errno));
out:
	free(nl);
	close(fd);		/* and the lock with it */
	return rc;
}

/* --- fixes -------------------------------------------------------------- */

static void
random_id(char out[9])
{
	uint32_t	v;

	if (getentropy(&v, sizeof(v)) == -1) {
		struct timespec	ts;

		clock_gettime(CLOCK_REALTIME, &ts);
		v = fnv1a32(&ts, sizeof(ts)) ^ (uint32_t)getpid();
	}
	footprint_hex(v, out);
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

static int
name_order(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/*
 * The first member a name names, when the object names it more than once;
 * NULL when none is repeated (or out of memory: *nomem).  A fix with two
 * `type`s or `status`es means what its reader picks: cJSON reads the
 * first, and the writer replaces only the first (tests/fuzz/regress/
 * fuzz_body/).  Sorted names: a body of a megabyte of members costs
 * n log n, not n².
 */
static const char *
repeated_member(const cJSON *o, int *nomem)
{
	const cJSON	 *it;
	const char	**names, *dup = NULL;
	size_t		  n = 0, i;

	*nomem = 0;
	cJSON_ArrayForEach(it, o)
		n++;
	if (n < 2)
		return NULL;
	if ((names = malloc(n * sizeof(*names))) == NULL) {
		*nomem = 1;
		return NULL;
	}
	n = 0;
	cJSON_ArrayForEach(it, o)
		names[n++] = it->string;
	qsort(names, n, sizeof(*names), name_order);
	for (i = 1; i < n && dup == NULL; i++)
		if (strcmp(names[i - 1], names[i]) == 0)
			dup = names[i];
	free(names);
	return dup;
}

/* A number in the tree that is not finite: cJSON would print it as null,
 * a different record from the one given (docs/json.md: every writer
 * refuses a number beyond a double's range).  Its member's name, or
 * NULL. */
static const char *
infinite_member(const cJSON *o, const char *name)
{
	const cJSON	*it;
	const char	*bad;

	if (cJSON_IsNumber(o) && !isfinite(o->valuedouble))
		return name != NULL ? name : "a number";
	for (it = o->child; it != NULL; it = it->next)
		if ((bad = infinite_member(it, it->string != NULL ?
		    it->string : name)) != NULL)
			return bad;
	return NULL;
}

/* The fields of a fix, before anything is filled in.  0, -EINVAL or
 * -ENOMEM. */
static int
fix_check(const cJSON *rec, char *why, size_t cap)
{
	const char	*st, *dup;
	const cJSON	*it, *f;
	int		 nomem;

	if (!cJSON_IsObject(rec))
		return base_say(why, cap, -EINVAL, "a fix is a JSON object");
	if ((dup = repeated_member(rec, &nomem)) != NULL)
		return base_say(why, cap, -EINVAL, "a fix names each member once "
		    "(\"%.64s\" is there twice)", dup);
	if (nomem)
		return base_say(why, cap, -ENOMEM, "out of memory");
	if ((dup = infinite_member(rec, NULL)) != NULL)
		return base_say(why, cap, -EINVAL, "number out of range in \"%.64s\" "
		    "(beyond a double's range)", dup);
	/* absent is "applied"; present, it is a string (a number once went
	 * through as it was: tests/fuzz/regress/fuzz_body/) */
	it = cJSON_GetObjectItemCaseSensitive(rec, "status");
	if (it != NULL && !cJSON_IsString(it))
		return base_say(why, cap, -EINVAL, "status is applied, proposed, "
		    "merged or rejected");
	st = it != NULL ? it->valuestring : "applied";
	if (strcmp(st, "applied") && strcmp(st, "proposed") &&
	    strcmp(st, "merged") && strcmp(st, "rejected"))
		return base_say(why, cap, -EINVAL, "status is applied, proposed, "
		    "merged or rejected");
	if (strcmp(st, "merged") == 0 || strcmp(st, "rejected") == 0) {
		it = cJSON_GetObjectItemCaseSensitive(rec, "ref");
		if (!cJSON_IsString(it) || footprint_parse_hex(it->valuestring,
		    strlen(it->valuestring), &(uint32_t){ 0 }) != 0)
			return base_say(why, cap, -EINVAL, "a merge or reject names "
			    "the proposal's 8-hex id in ref");
	} else if (!valid_string(rec, "title", 1))
		return base_say(why, cap, -EINVAL, "a fix needs a title");
	if (!valid_string(rec, "issue", 0) || !valid_string(rec, "solution", 0) ||
	    !valid_string(rec, "commit", 0))
		return base_say(why, cap, -EINVAL, "issue, solution and commit are "
		    "strings");
	if (!valid_ids(cJSON_GetObjectItemCaseSensitive(rec, "footprints")))
		return base_say(why, cap, -EINVAL, "footprints is a list of 8-hex "
		    "footprint ids");
	if ((it = cJSON_GetObjectItemCaseSensitive(rec, "files")) != NULL) {
		if (!cJSON_IsArray(it))
			return base_say(why, cap, -EINVAL, "files is a list of paths");
		cJSON_ArrayForEach(f, it)
			if (!cJSON_IsString(f))
				return base_say(why, cap, -EINVAL, "files is a list "
				    "of paths");
	}
	it = cJSON_GetObjectItemCaseSensitive(rec, "id");
	if (it != NULL && (!cJSON_IsString(it) ||
	    footprint_parse_hex(it->valuestring, strlen(it->valuestring),
	    &(uint32_t){ 0 }) != 0))
		return base_say(why, cap, -EINVAL, "id is 8 hex digits");
	it = cJSON_GetObjectItemCaseSensitive(rec, "at");
	if (it != NULL && (!cJSON_IsString(it) || iso_parse_ms(it->valuestring,
	    strlen(it->valuestring), &(int64_t){ 0 }) != 0))
		return base_say(why, cap, -EINVAL, "at is an ISO-8601 time "
		    "(2026-11-29T12:06:00.667Z)");
	return 0;
}

/* The line failed the fold's scanner: say which member (a string with
 * bytes that are not UTF-8, typically a title from a shell). */
static int
blame_member(const cJSON *rec, const char *fallback, char *why, size_t cap)
{
	const cJSON	*it;
	char		*v, *wrapped;
	size_t		 n;
	int		 bad;

	cJSON_ArrayForEach(it, rec) {
		if ((v = cJSON_PrintUnformatted(it)) == NULL)
			break;
		n = strlen(v);
		if ((wrapped = malloc(n + 8)) == NULL) {
			free(v);
			break;
		}
		memcpy(wrapped, "{\"v\":", 5);
		memcpy(wrapped + 5, v, n);
		wrapped[5 + n] = '}';
		bad = project_json_check(wrapped, n + 6, NULL, 0) != 0;
		free(wrapped);
		free(v);
		if (bad)
			return base_say(why, cap, -EINVAL, "%s is not valid UTF-8 "
			    "text; the fold would skip the record",
			    it->string);
	}
	return base_say(why, cap, -EINVAL, "the fix record would not be read back: "
	    "%s", fallback);
}

/* Edit distance of two short strings (Levenshtein), for typos. */
static size_t
edit_distance(const char *a, const char *b)
{
	size_t	la = strlen(a), lb = strlen(b), i, j, prev, cur, d[16];

	if (la > 15 || lb > 15)
		return la > lb ? la : lb;
	for (j = 0; j <= lb; j++)
		d[j] = j;
	for (i = 1; i <= la; i++) {
		prev = d[0];
		d[0] = i;
		for (j = 1; j <= lb; j++) {
			cur = d[j];
			d[j] = (size_t)(tolower((unsigned char)a[i - 1]) ==
			    tolower((unsigned char)b[j - 1]) ? prev : prev + 1);
			if (cur + 1 < d[j])
				d[j] = cur + 1;
			if (d[j - 1] + 1 < d[j])
				d[j] = d[j - 1] + 1;
			prev = cur;
		}
	}
	return d[lb];
}

#define NEAREST	3

void
project_footprints_nearest(struct ledger *l, const char *id, char *out,
    size_t cap)
{
	cJSON		*doc = ledger_issues_json(l, NULL, 0), *row;
	const char	*best[NEAREST] = { NULL };
	size_t		 dist[NEAREST], i, k, o = 0;

	*out = '\0';
	cJSON_ArrayForEach(row, cJSON_GetObjectItemCaseSensitive(doc, "issues")) {
		const char	*r = cJSON_GetStringValue(
				    cJSON_GetObjectItemCaseSensitive(row, "id"));
		size_t		 dd;

		if (r == NULL)
			continue;
		dd = edit_distance(id, r);
		for (k = 0; k < NEAREST; k++)
			if (best[k] == NULL || dd < dist[k])
				break;
		if (k == NEAREST)
			continue;
		for (i = NEAREST - 1; i > k; i--) {
			best[i] = best[i - 1];
			dist[i] = dist[i - 1];
		}
		best[k] = r;
		dist[k] = dd;
	}
	for (k = 0; k < NEAREST && best[k] != NULL && o < cap; k++)
		o += (size_t)snprintf(out + o, cap - o, "%s%s", k ? ", " : "",
		    best[k]);
	cJSON_Delete(doc);
}

/*
 * Every footprint a fix names must be one the ledger has seen (any
 * record of perf.jsonl, robots' too): a typo would otherwise be recorded
 * as a fix of nothing and never judged.  `force` skips the check.
 * 0, or -EINVAL with why naming the first unknown id and the nearest
 * known ones.
 */
int
project_fix_known(const char *project, const cJSON *rec, char *why,
    size_t cap)
{
	const cJSON			*fps, *it;
	struct ledger_opts		 o = { LEDGER_NO_TIME, LEDGER_NO_TIME,
					    1, 0, NULL };
	struct ledger			*l = NULL;
	struct project_fold_info	 fi;
	const char			*unknown = NULL;
	char				 near[64];
	int				 rc, nunknown = 0;

	fps = cJSON_GetObjectItemCaseSensitive(rec, "footprints");
	if (cJSON_GetArraySize(fps) == 0)
		return 0;
	rc = project_fold(project, &o, &l, &fi);
	if (rc == -ENOENT)
		return base_say(why, cap, -EINVAL, "there is no ledger yet (%s): no "
		    "footprint is known; is the project right? (force records "
		    "it anyway)", PROJECT_DIR "/perf.jsonl");
	if (rc != 0)
		return base_say(why, cap, rc, "cannot read the ledger to check the "
		    "footprints: %s", project_strerror(rc));
	cJSON_ArrayForEach(it, fps)
		if (ledger_status_of(l, it->valuestring) == NULL) {
			if (unknown == NULL)
				unknown = it->valuestring;
			nunknown++;
		}
	if (unknown != NULL) {
		project_footprints_nearest(l, unknown, near, sizeof(near));
		rc = base_say(why, cap, -EINVAL, "footprint %s%s is in no record of "
		    "the ledger; %s%s (force records it anyway)", unknown,
		    nunknown > 1 ? " (and others)" : "", *near ? "nearest "
		    "known: " : "the ledger has no footprint yet", near);
	}
	ledger_destroy(l);
	return rc;
}

int
project_fix_line(cJSON *rec, int *force, char **out, size_t *out_len,
    char *why, size_t cap)
{
	char		 id[9], iso[32], *line, reason[PROJECT_WHY_MAX];
	struct timespec	 ts;
	size_t		 len;
	int		 rc;
	const cJSON	*fo;

	*out = NULL;
	*out_len = 0;
	*force = 0;
	if ((rc = fix_check(rec, why, cap)) != 0)
		return rc;
	/* `force` is an instruction to us, not part of the record */
	if ((fo = cJSON_GetObjectItemCaseSensitive(rec, "force")) != NULL) {
		if (!cJSON_IsBool(fo))
			return base_say(why, cap, -EINVAL, "force is true or false");
		*force = cJSON_IsTrue(fo);
		cJSON_DeleteItemFromObjectCaseSensitive(rec, "force");
	}
	/* fill in what the writer may leave to us */
	cJSON_DeleteItemFromObjectCaseSensitive(rec, "type");
	cJSON_AddStringToObject(rec, "type", "fix");
	if (cJSON_GetObjectItemCaseSensitive(rec, "id") == NULL) {
		random_id(id);
		cJSON_AddStringToObject(rec, "id", id);
	}
	if (cJSON_GetObjectItemCaseSensitive(rec, "at") == NULL) {
		clock_gettime(CLOCK_REALTIME, &ts);
		iso_format_ms((int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000,
		    iso);
		cJSON_AddStringToObject(rec, "at", iso);
	}
	if (cJSON_GetObjectItemCaseSensitive(rec, "status") == NULL)
		cJSON_AddStringToObject(rec, "status", "applied");

	if ((line = cJSON_PrintUnformatted(rec)) == NULL)
		return base_say(why, cap, -ENOMEM, "out of memory");
	len = strlen(line);
	/* what the fold will read back, checked by the fold's scanner */
	if (len + 1 > LEDGER_MAX_LINE)
		rc = base_say(why, cap, -EINVAL, "the fix record is larger than "
		    "1 MiB");
	else if (project_record_check(line, len, reason, sizeof(reason)) != 0)
		rc = blame_member(rec, reason, why, cap);
	if (rc != 0) {
		free(line);
		return rc;
	}
	line[len] = '\n';	/* replaces the NUL: one write, one line */
	*out = line;
	*out_len = len + 1;
	return 0;
}

int
project_fix_write(const char *project, const char *line, size_t len,
    const struct project_write *w, char *why, size_t cap)
{
	return append_lines(project, "fixes.jsonl", line, len, w, why, cap);
}

int
project_fix_append(const char *project, cJSON *rec,
    const struct project_write *w, char *why, size_t cap)
{
	char	*line;
	size_t	 len;
	int	 rc, force;

	if ((rc = project_fix_line(rec, &force, &line, &len, why, cap)) != 0)
		return rc;
	if (force || (rc = project_fix_known(project, rec, why, cap)) == 0)
		rc = project_fix_write(project, line, len, w, why, cap);
	free(line);
	return rc;
}

/* --- goldens ------------------------------------------------------------ */

static int
sha256_ok(const char *s)
{
	size_t	i;

	for (i = 0; i < 64; i++)
		if (!isxdigit((unsigned char)s[i]) || isupper((unsigned char)s[i]))
			return 0;
	return s[64] == '\0';
}

int
project_goldens_append(const char *project, cJSON *rec, char *why,
    size_t cap)
{
	const cJSON	*type, *scene, *sha, *who;
	char		 iso[32], *line;
	struct timespec	 ts;
	size_t		 len;
	int		 rc;

	type = cJSON_GetObjectItemCaseSensitive(rec, "type");
	scene = cJSON_GetObjectItemCaseSensitive(rec, "scene");
	sha = cJSON_GetObjectItemCaseSensitive(rec, "sha256");
	who = cJSON_GetObjectItemCaseSensitive(rec, "who");
	if (!cJSON_IsObject(rec) || !cJSON_IsString(type) ||
	    strcmp(type->valuestring, "golden") != 0)
		return base_say(why, cap, -EINVAL, "a golden's record has type "
		    "\"golden\"");
	/* a gate scene: no dot (cli/gate.h: its pictures are S.actual.png) */
	if (!cJSON_IsString(scene) || !project_scene_ok(scene->valuestring) ||
	    strchr(scene->valuestring, '.') != NULL)
		return base_say(why, cap, -EINVAL, "a golden names its scene (a "
		    "letter or digit, then up to 63 letters, digits, _ or -)");
	if (!cJSON_IsString(sha) || !sha256_ok(sha->valuestring))
		return base_say(why, cap, -EINVAL, "a golden carries the SHA-256 of "
		    "its PNG (64 lowercase hex digits)");
	if (!cJSON_IsString(who))
		return base_say(why, cap, -EINVAL, "a golden says who recorded it");
	if (cJSON_GetObjectItemCaseSensitive(rec, "at") == NULL) {
		clock_gettime(CLOCK_REALTIME, &ts);
		iso_format_ms((int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000,
		    iso);
		cJSON_AddStringToObject(rec, "at", iso);
	}
	if ((line = cJSON_PrintUnformatted(rec)) == NULL)
		return base_say(why, cap, -ENOMEM, "out of memory");
	len = strlen(line);
	if ((rc = project_record_check(line, len, why, cap)) == 0) {
		line[len] = '\n';
		rc = append_lines(project, "goldens.jsonl", line, len + 1, NULL,
		    why, cap);
	}
	free(line);
	return rc;
}

/* --- other ledgers: one checked line ----------------------------------- */

int
project_line_append(const char *project, const char *name, const char *line,
    size_t len, const struct project_write *w, char *why, size_t cap)
{
	char	*buf;
	int	 rc;

	if (name[0] == '\0' || strchr(name, '/') != NULL || name[0] == '.')
		return base_say(why, cap, -EINVAL, "'%s' is not a file name of "
		    ".sloptimize/", name);
	if (memchr(line, '\n', len) != NULL || memchr(line, '\r', len) != NULL)
		return base_say(why, cap, -EINVAL, "a line of %s holds no newline",
		    name);
	if ((rc = project_json_check(line, len, why, cap)) != 0)
		return rc;
	if ((buf = malloc(len + 1)) == NULL)
		return base_say(why, cap, -ENOMEM, "out of memory");
	memcpy(buf, line, len);
	buf[len] = '\n';
	rc = append_lines(project, name, buf, len + 1, w, why, cap);
	free(buf);
	return rc;
}

/* --- batches of records ------------------------------------------------- */

/* Copy valid JSON text without the whitespace between tokens: one line. */
static size_t
compact(const char *p, size_t n, char *out)
{
	size_t	i, o = 0;
	int	in = 0;

	for (i = 0; i < n; i++) {
		char	c = p[i];

		if (in) {
			out[o++] = c;
			if (c == '\\' && i + 1 < n)
				out[o++] = p[++i];
			else if (c == '"')
				in = 0;
		} else if (c != ' ' && c != '\t' && c != '\n' && c != '\r') {
			out[o++] = c;
			in = c == '"';
		}
	}
	return o;
}

struct batch_out {
	struct project_batch	*b;
	char			*buf;
	size_t			 len;
};

static void
batch_refuse(struct batch_out *o, size_t index, const char *why)
{
	struct project_refusal	*r;

	o->b->refused++;
	if (o->b->nlisted == PROJECT_REFUSALS_KEPT)
		return;
	r = &o->b->list[o->b->nlisted++];
	r->index = index;
	snprintf(r->why, sizeof(r->why), "%s", why);
}

/* One record of the batch: accepted (compacted into the buffer) or
 * refused (counted, and listed while there is room). */
static void
batch_one(struct batch_out *o, const char *p, size_t n)
{
	char	why[PROJECT_WHY_MAX];
	size_t	index = o->b->records++;

	if (project_record_check(p, n, why, sizeof(why)) != 0) {
		batch_refuse(o, index, why);
		return;
	}
	o->len += compact(p, n, o->buf + o->len);
	o->buf[o->len++] = '\n';
	o->b->accepted++;
}

/* A JSON array: validated whole (it must be one JSON text to be split),
 * then each element on its own. */
static int
batch_array(struct batch_out *o, const char *body, size_t len, char *why,
    size_t cap)
{
	struct jscan_result	 r;
	struct jspan		 obj, arr, el;
	char			*w;
	size_t			 pos = 0;

	/* jscan scans objects: look at the array as {"a": <body>} */
	if ((w = malloc(len + 8)) == NULL)
		return base_say(why, cap, -ENOMEM, "out of memory");
	memcpy(w, "{\"a\":", 5);
	memcpy(w + 5, body, len);
	w[5 + len] = '}';
	if (jscan_object(w, len + 6, &r) != 0) {
		base_say(why, cap, -EINVAL, "the body is not a JSON array of records "
		    "(%s at byte %zu)", r.error, r.error_at > 5 ?
		    r.error_at - 5 : 0);
		free(w);
		return -EINVAL;
	}
	obj.p = w;
	obj.n = (uint32_t)(len + 6);
	obj.kind = J_OBJECT;
	obj.escaped = 0;
	arr = jscan_get(obj, "a");
	if (arr.kind != J_ARRAY) {
		free(w);
		return base_say(why, cap, -EINVAL, "the body is not a JSON array of "
		    "records");
	}
	while ((el = jscan_next(arr, &pos)).kind != J_NONE) {
		if (el.kind == J_OBJECT)
			batch_one(o, el.p, el.n);
		else	/* still a record of the batch, with its place */
			batch_refuse(o, o->b->records++, "not a JSON object");
	}
	free(w);
	return 0;
}

/* NDJSON: one record a line; blank lines are no records. */
static void
batch_lines(struct batch_out *o, const char *body, size_t len)
{
	const char	*p = body, *end = body + len, *nl;
	size_t		 n, i;

	while (p < end) {
		nl = memchr(p, '\n', (size_t)(end - p));
		n = nl ? (size_t)(nl - p) : (size_t)(end - p);
		for (i = 0; i < n; i++)
			if (p[i] != ' ' && p[i] != '\t' && p[i] != '\r')
				break;
		if (i < n)
			batch_one(o, p, n);
		p += n + (nl != NULL);
	}
}

int
project_records_batch(const char *body, size_t len, struct project_batch *out,
    char **lines, size_t *lines_len, char *why, size_t cap)
{
	struct batch_out	 o;
	size_t			 i;
	int			 rc = 0;

	memset(out, 0, sizeof(*out));
	*lines = NULL;
	*lines_len = 0;
	for (i = 0; i < len; i++)
		if (body[i] != ' ' && body[i] != '\t' && body[i] != '\n' &&
		    body[i] != '\r')
			break;
	if (i == len)
		return base_say(why, cap, -EINVAL, "the body holds no records");
	o.b = out;
	o.len = 0;
	/* every accepted record is at most its own bytes plus a newline */
	if ((o.buf = malloc(len + len / 2 + 2)) == NULL)
		return base_say(why, cap, -ENOMEM, "out of memory");
	if (body[i] == '[')
		rc = batch_array(&o, body + i, len - i, why, cap);
	else
		batch_lines(&o, body, len);
	if (rc != 0) {
		memset(out, 0, sizeof(*out));
		free(o.buf);
		return rc;
	}
	*lines = o.buf;
	*lines_len = o.len;
	return 0;
}

int
project_records_append(const char *project, const char *body, size_t len,
    const struct project_write *w, struct project_batch *out, char *why,
    size_t cap)
{
	char	*lines;
	size_t	 n;
	int	 rc;

	if ((rc = project_records_batch(body, len, out, &lines, &n, why,
	    cap)) != 0)
		return rc;
	if (n > 0 && (rc = append_lines(project, "perf.jsonl", lines, n, w,
	    why, cap)) == 0)
		out->bytes = n;
	if (rc != 0)
		out->accepted = 0;
	free(lines);
	return rc;
}
