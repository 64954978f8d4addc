/*
 * mcp_tools — the tools of `sloptimize mcp` (see mcp.c for the protocol):
 * their arguments, the ones that read or write the project's files (run
 * on the thread pool, so they may block), and the table tools/list
 * answers from.  wait_for_wake reads its arguments here and waits
 * through the server's wait_for_wake, on the loop (cli/mcp.c).
 *
 * A tool sees only its struct mcp_call (cli/mcp_call.h): its arguments,
 * its cancel flag, the project, where to put its answer.  Nothing here
 * includes the server; the server is handed this table (mcp_tools.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "cli/attribute.h"
#include "cli/check.h"
#include "cli/benchrun.h"
#include "cli/cli.h"
#include "cli/daemon_get.h"
#include "cli/fix.h"
#include "cli/gate.h"
#include "cli/regime.h"
#include "cli/repro.h"
#include "cli/mcp_call.h"
#include "cli/mcp_tools.h"
#include "ledger/footprint.h"
#include "ledger/ledger.h"
#include "project/append.h"
#include "project/bench.h"
#include "project/project.h"
#include "project/statedir.h"

/* --- the project's files (on the pool) -------------------------------- */

static int
fold(struct mcp_call *c, struct ledger_opts *o, struct ledger **l,
    struct project_fold_info *fi)
{
	int	rc = project_fold(c->project, o, l, fi);

	if (rc == -ENOENT)
		mcp_call_fail(c, "no ledger at %s yet: the game's runtime writes it "
		    "while the game runs", fi->perf);
	else if (rc != 0)
		mcp_call_fail(c, "cannot read %s: %s", fi->failed ? fi->failed :
		    fi->perf, project_strerror(rc));
	return rc;
}

/* What the last heartbeats ran on (cli/regime.h): an agent reading the
 * rows' timings is told when a software renderer made them. */
static void
add_regime(cJSON *o, const struct project_fold_info *fi)
{
	struct cli_regime	r;

	cli_regime_recent(fi->perf, &r);
	cJSON_AddItemToObject(o, "regime", cli_regime_json(&r));
}

static int
filters(struct mcp_call *c, struct ledger_opts *o)
{
	int	automated = 0;

	if (mcp_arg_time(c, "from", &o->from_ms) || mcp_arg_time(c, "to", &o->to_ms) ||
	    mcp_arg_bool(c, "include_automated", &automated))
		return -1;
	o->include_automated = automated;
	return 0;
}

static const char *const statuses[] = {
	"open", "pending", "fixed", "regressed", NULL
};

static void
tool_get_issues(struct mcp_call *c)
{
	static const char *const known[] = { "type", "status", "from", "to",
		"include_automated", "limit", NULL };
	struct ledger_opts		 o = { 0 };
	struct ledger_query		 q = { 0 };
	struct ledger			*l = NULL;
	struct project_fold_info	 fi;
	long				 limit = 50;
	size_t				 i;

	if (mcp_args_known(c, known) || filters(c, &o) ||
	    mcp_arg_str(c, "type", 0, &q.type) ||
	    mcp_arg_str(c, "status", 0, &q.status) ||
	    mcp_arg_int(c, "limit", 0, 100000, &limit))
		return;
	for (i = 0; q.status != NULL && statuses[i] != NULL; i++)
		if (strcmp(q.status, statuses[i]) == 0)
			break;
	if (q.status != NULL && statuses[i] == NULL) {
		mcp_call_fail(c, "status is open, pending, fixed or regressed");
		return;
	}
	q.limit = (size_t)limit;
	if (fold(c, &o, &l, &fi) != 0)
		return;
	if ((c->out = ledger_issues_json(l, &q, c->now_ms)) != NULL) {
		cli_add_source(c->out, &fi);
		add_regime(c->out, &fi);
	}
	ledger_destroy(l);
}

static void
tool_get_issue(struct mcp_call *c)
{
	static const char *const known[] = { "id", "occurrences", "from", "to",
		"include_automated", NULL };
	struct ledger_opts		 o = { 0 };
	struct ledger			*l = NULL;
	struct project_fold_info	 fi;
	const char			*id;
	char				 hex[9], near[64];
	uint32_t			 v;
	long				 keep = 50;
	cJSON				*doc, *occ;
	int				 total;

	if (mcp_args_known(c, known) || mcp_arg_str(c, "id", 1, &id) ||
	    filters(c, &o) || mcp_arg_int(c, "occurrences", 0, 100000, &keep))
		return;
	if (footprint_parse_hex(id, strlen(id), &v) != 0) {
		mcp_call_fail(c, "id is an 8-hex footprint id (81e5eb9b), not '%s'",
		    id);
		return;
	}
	footprint_hex(v, hex);
	o.occurrences_of = hex;
	if (fold(c, &o, &l, &fi) != 0)
		return;
	if ((doc = ledger_issue_json(l, hex, c->now_ms)) == NULL) {
		project_footprints_nearest(l, hex, near, sizeof(near));
		mcp_call_fail(c, "no issue %s in %s; %s%s", hex, fi.perf, *near ?
		    "nearest known: " : "the ledger has no footprint yet",
		    near);
		ledger_destroy(l);
		return;
	}
	/* the occurrences are the ledger's (a reference): copy, then keep
	 * the last ones */
	c->out = cJSON_Duplicate(doc, 1);
	cJSON_Delete(doc);
	ledger_destroy(l);
	if (c->out == NULL)
		return;
	occ = cJSON_GetObjectItemCaseSensitive(c->out, "occurrences");
	total = cJSON_GetArraySize(occ);
	while (cJSON_GetArraySize(occ) > keep)
		cJSON_DeleteItemFromArray(occ, 0);
	cJSON_AddNumberToObject(c->out, "occurrencesTotal", total);
	cli_add_source(c->out, &fi);
	add_regime(c->out, &fi);
}

static void
tool_get_history(struct mcp_call *c)
{
	static const char *const known[] = { "buckets", "include_automated",
		NULL };
	struct ledger_opts		 o = { 0 };
	struct ledger			*l = NULL;
	struct project_fold_info	 fi;
	long				 buckets = 24;
	int				 automated = 0;

	if (mcp_args_known(c, known) ||
	    mcp_arg_int(c, "buckets", 1, 1000, &buckets) ||
	    mcp_arg_bool(c, "include_automated", &automated))
		return;
	o.from_ms = o.to_ms = LEDGER_NO_TIME;
	o.include_automated = automated;
	o.want_timeline = 1;
	if (fold(c, &o, &l, &fi) != 0)
		return;
	if ((c->out = ledger_history_json(l, (int)buckets, c->now_ms)) != NULL)
		cli_add_source(c->out, &fi);
	ledger_destroy(l);
}

/* --- get_ledger: the tail of a file ----------------------------------- */

#define TAIL_FIRST	(256 * 1024)
#define TAIL_MOST	(4 * 1024 * 1024)

/*
 * The last `want` records of a ledger file as {path, size, from,
 * truncated, records, offsets, skipped}: whole lines only (a partial last
 * line waits for its newline), each a record under the fold's rules (a
 * JSON object with a string type, strict JSON and UTF-8) or counted in
 * `skipped`.  Read backwards from the end, at most TAIL_MOST bytes.
 */
static cJSON *
tail_json(struct mcp_call *c, const char *path, long want)
{
	cJSON		*o, *recs, *offs;
	struct stat	 st;
	char		*buf = NULL;
	size_t		 win = TAIL_FIRST, n, i, start, nl, lines;
	uint64_t	 base = 0, from;
	long		 skipped = 0, k;
	int		 fd = -1, rc;
	size_t		*at = NULL;

	o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "path", path);
	if ((rc = project_open(path, O_RDONLY, 0, &fd)) == -ENOENT) {
		cJSON_AddNumberToObject(o, "size", 0);
		cJSON_AddNumberToObject(o, "from", 0);
		cJSON_AddFalseToObject(o, "truncated");
		cJSON_AddArrayToObject(o, "records");
		cJSON_AddArrayToObject(o, "offsets");
		cJSON_AddNumberToObject(o, "skipped", 0);
		return o;
	}
	if (rc != 0 || fstat(fd, &st) != 0) {
		mcp_call_fail(c, "cannot read %s: %s", path, project_strerror(rc ?
		    rc : -errno));
		goto fail;
	}
	for (;;) {
		if (win > (size_t)st.st_size)
			win = (size_t)st.st_size;
		base = (uint64_t)st.st_size - win;
		free(buf);
		if ((buf = malloc(win + 1)) == NULL)
			goto nomem;
		for (n = 0; n < win; ) {
			ssize_t	r = pread(fd, buf + n, win - n,
				    (off_t)(base + n));

			if (r < 0 && errno == EINTR)
				continue;
			if (r <= 0)
				break;
			n += (size_t)r;
		}
		win = n;
		for (i = lines = 0; i < win; i++)
			lines += buf[i] == '\n';
		if (lines > (size_t)want || base == 0 || win >= TAIL_MOST)
			break;
		win *= 2;
	}
	/* line starts: from the first byte after a newline (or 0) */
	if ((at = malloc((lines + 2) * sizeof(*at))) == NULL)
		goto nomem;
	start = 0;
	if (base > 0) {
		char	*p = memchr(buf, '\n', win);

		start = p ? (size_t)(p - buf) + 1 : win;
	}
	for (i = start, k = 0; i < win; i = nl + 1) {
		char	*p = memchr(buf + i, '\n', win - i);

		if (p == NULL)
			break;		/* the partial last line */
		nl = (size_t)(p - buf);
		at[k++] = i;
	}
	recs = cJSON_AddArrayToObject(o, "records");
	offs = cJSON_AddArrayToObject(o, "offsets");
	from = (uint64_t)st.st_size;
	{
		long	first = k > want ? k - want : 0, j;

		for (j = first; j < k; j++) {
			size_t	 s = at[j];
			char	*e = memchr(buf + s, '\n', win - s);
			size_t	 len = (size_t)(e - (buf + s));
			cJSON	*r;
			char	 why[8];

			if (len >= 3 && memcmp(buf + s, "\xef\xbb\xbf", 3) == 0) {
				s += 3;
				len -= 3;
			}
			while (len > 0 && (buf[s + len - 1] == '\r'))
				len--;
			if (len == 0)
				continue;	/* blank: not a record */
			if (j == first)
				from = base + at[j];
			if (project_json_check(buf + s, len, why,
			    sizeof(why)) != 0 || (r = cJSON_ParseWithLength(
			    buf + s, len)) == NULL) {
				skipped++;
				continue;
			}
			if (!cJSON_IsString(cJSON_GetObjectItemCaseSensitive(r,
			    "type")) || *cJSON_GetObjectItemCaseSensitive(r,
			    "type")->valuestring == '\0') {
				cJSON_Delete(r);
				skipped++;
				continue;
			}
			cJSON_AddItemToArray(recs, r);
			cJSON_AddItemToArray(offs,
			    cJSON_CreateNumber((double)(base + at[j])));
		}
	}
	cJSON_AddNumberToObject(o, "size", (double)st.st_size);
	cJSON_AddNumberToObject(o, "from", (double)(cJSON_GetArraySize(recs) ?
	    from : (uint64_t)st.st_size));
	cJSON_AddBoolToObject(o, "truncated", cJSON_GetArraySize(recs) ?
	    from > 0 : st.st_size > 0);
	cJSON_AddNumberToObject(o, "skipped", (double)skipped);
	free(at);
	free(buf);
	close(fd);
	return o;
nomem:
	mcp_call_fail(c, "out of memory reading %s", path);
fail:
	free(at);
	free(buf);
	if (fd >= 0)
		close(fd);
	cJSON_Delete(o);
	return NULL;
}

static void
tool_get_ledger(struct mcp_call *c)
{
	static const char *const known[] = { "records", "fixes", NULL };
	char	 path[PATH_MAX];
	long	 records = 50, fixes = 20;
	cJSON	*perf, *fx;

	if (mcp_args_known(c, known) || mcp_arg_int(c, "records", 0, 1000, &records) ||
	    mcp_arg_int(c, "fixes", 0, 1000, &fixes))
		return;
	if (project_path(c->project, "perf.jsonl", path, sizeof(path))) {
		mcp_call_fail(c, "the project path is too long");
		return;
	}
	if ((perf = tail_json(c, path, records)) == NULL)
		return;
	project_path(c->project, "fixes.jsonl", path, sizeof(path));
	if ((fx = tail_json(c, path, fixes)) == NULL) {
		cJSON_Delete(perf);
		return;
	}
	c->out = cJSON_CreateObject();
	cJSON_AddNumberToObject(c->out, "v", 1);
	cJSON_AddItemToObject(c->out, "perf", perf);
	cJSON_AddItemToObject(c->out, "fixes", fx);
}

/* --- get_status ------------------------------------------------------- */

#define STATUS_TIMEOUT_MS 3000

static void
tool_get_status(struct mcp_call *c)
{
	static const char *const known[] = { NULL };
	struct watch_addr		 a;
	char				 file[PATH_MAX + 16], err[3 * PATH_MAX] = "";
	const char			*why = NULL;
	int				 rc;
	struct ledger_opts		 o = { 0 };
	struct ledger			*l = NULL;
	struct project_fold_info	 fi;
	struct ledger_counts		 n;
	cJSON				*files, *st;

	if (mcp_args_known(c, known))
		return;
	if (c->daemon_url != NULL) {
		rc = watch_url_parse(c->daemon_url, &a);
		snprintf(file, sizeof(file), "--daemon %s", c->daemon_url);
	} else
		rc = watch_daemon_find(c->project, &a, file, sizeof(file),
		    &why);
	if (rc == 0 && (rc = cli_daemon_get_at(&a, "/api/sloptimize/status",
	    STATUS_TIMEOUT_MS, &st, err, sizeof(err))) == 0) {
		if (cJSON_IsObject(st)) {
			c->out = cJSON_CreateObject();
			cJSON_AddStringToObject(c->out, "source", "daemon");
			cJSON_AddItemToObject(c->out, "daemon", st);
			return;
		}
		cJSON_Delete(st);
		snprintf(err, sizeof(err), "the daemon's status is not an "
		    "object");
	} else if (rc == -ENOENT)
		snprintf(err, sizeof(err), "no daemon serves the project (no "
		    "%s): start one with sloptimized --project %s", file,
		    c->project);
	else if (*err == '\0')
		snprintf(err, sizeof(err), "%s: %s", file, why ? why :
		    strerror(-rc));
	/* no daemon to ask: what the files say */
	c->out = cJSON_CreateObject();
	cJSON_AddStringToObject(c->out, "source", "files");
	cJSON_AddStringToObject(c->out, "why", err);
	cJSON_AddNullToObject(c->out, "daemon");
	o.from_ms = o.to_ms = LEDGER_NO_TIME;
	rc = project_fold(c->project, &o, &l, &fi);
	files = cJSON_AddObjectToObject(c->out, "files");
	cJSON_AddStringToObject(files, "perf", fi.perf);
	cJSON_AddStringToObject(files, "fixes", fi.fixes);
	if (rc == 0) {
		ledger_counts(l, &n);
		cJSON_AddTrueToObject(files, "ledger");
		cJSON_AddNumberToObject(files, "bytes", (double)fi.bytes);
		cJSON_AddNumberToObject(files, "partialBytes",
		    (double)fi.partial);
		cJSON_AddBoolToObject(files, "haveFixes", fi.have_fixes);
		st = cJSON_AddObjectToObject(c->out, "counts");
		cJSON_AddNumberToObject(st, "lines", (double)n.lines);
		cJSON_AddNumberToObject(st, "folded", (double)n.folded);
		cJSON_AddNumberToObject(st, "incidents", (double)n.incidents);
		cJSON_AddNumberToObject(st, "fixes", (double)n.fixes);
		cJSON_AddNumberToObject(st, "skipped", (double)n.skipped);
		cJSON_AddNumberToObject(st, "rows", (double)n.rows);
		cJSON_AddNumberToObject(st, "builds", (double)n.builds);
		cJSON_AddItemToObject(c->out, "skipped", ledger_skipped_json(l));
	} else {
		cJSON_AddFalseToObject(files, "ledger");
		cJSON_AddStringToObject(files, "error", rc == -ENOENT ?
		    "no perf.jsonl yet: the game's runtime writes it" :
		    project_strerror(rc));
	}
	ledger_destroy(l);
}

/* --- record_fix, propose_fix ----------------------------------------- */

static void
fix_tool(struct mcp_call *c, const char *status)
{
	static const char *const known[] = { "title", "footprints", "issue",
		"solution", "commit", "files", "before", "after", "force",
		NULL };
	struct cli_fix	 f = { .status = status };
	char		 why[PROJECT_WHY_MAX + 64];
	int		 rc;

	if (mcp_args_known(c, known) || mcp_arg_str(c, "title", 1, &f.title) ||
	    mcp_arg_list(c, "footprints", 1, &f.footprints) ||
	    mcp_arg_str(c, "issue", 0, &f.issue) ||
	    mcp_arg_str(c, "solution", 0, &f.solution) ||
	    mcp_arg_str(c, "commit", 0, &f.commit) ||
	    mcp_arg_list(c, "files", 0, &f.files) ||
	    mcp_arg_str(c, "before", 0, &f.before) ||
	    mcp_arg_str(c, "after", 0, &f.after) ||
	    mcp_arg_bool(c, "force", &f.force))
		return;
	if (*f.title == '\0') {
		mcp_call_fail(c, "title is required");
		return;
	}
	f.gone = &c->cancelled;
	if ((rc = cli_fix_record(c->project, &f, &c->out, why,
	    sizeof(why))) != 0)
		mcp_call_fail(c, "%s%s", why, rc == -EINVAL && strstr(why,
		    "force records") ? "; pass \"force\": true to record it" :
		    "");
}

static void
tool_record_fix(struct mcp_call *c)
{
	fix_tool(c, "applied");
}

static void
tool_propose_fix(struct mcp_call *c)
{
	fix_tool(c, "proposed");
}

/* --- get_profile, check_budgets (cli/check.h, docs/budgets.md) ------- */

/* Not a tool error: "nothing to check against" is an answer, with the
 * exit code `sloptimize check` would give, as `exit`. */
static void
tool_get_profile(struct mcp_call *c)
{
	static const char *const known[] = { NULL };

	if (mcp_args_known(c, known) == 0)
		check_profile_doc(c->project, c->now_ms, &c->out);
}

static void
tool_check_budgets(struct mcp_call *c)
{
	static const char *const known[] = { "counters_only", "bench",
		"max_age", NULL };
	struct check_opts	 o = { .project = c->project,
				    .max_age_ms = CHECK_MAX_AGE_MS,
				    .now_ms = c->now_ms };
	const char		*age = NULL;

	if (mcp_args_known(c, known) ||
	    mcp_arg_bool(c, "counters_only", &o.counters_only) ||
	    mcp_arg_str(c, "bench", 0, &o.bench) ||
	    mcp_arg_str(c, "max_age", 0, &age))
		return;
	if (age != NULL && check_parse_age(age, &o.max_age_ms) != 0) {
		mcp_call_fail(c, "max_age is 30s, 500ms, 5m, 2h, 1d or off, not "
		    "'%.100s'", age);
		return;
	}
	if (o.bench != NULL && *o.bench == '\0') {
		mcp_call_fail(c, "bench is a scene name");
		return;
	}
	check_run(&o, &c->out);
}

/* --- run_gate: compare only; recording a golden is the human's ---------- */

static void
tool_run_gate(struct mcp_call *c)
{
	static const char *const known[] = { "scene", "threshold", "launch",
		"url", "record", NULL };
	struct gate_opts	 o = { .project = c->project,
				    .threshold = GATE_THRESHOLD,
				    .cancel = &c->cancelled };
	const cJSON		*th;
	char			 why[2048];
	int			 rec = 0;

	if (mcp_args_known(c, known) || mcp_arg_bool(c, "record", &rec))
		return;
	if (rec) {
		mcp_call_fail(c, "run_gate only compares: a golden is recorded "
		    "by a person, at a terminal (sloptimize gate --record), "
		    "never by an agent");
		return;
	}
	if (mcp_arg_str(c, "scene", 1, &o.scene) ||
	    mcp_arg_bool(c, "launch", &o.launch) ||
	    mcp_arg_str(c, "url", 0, &o.url))
		return;
	if ((th = mcp_arg(c, "threshold")) != NULL) {
		if (!cJSON_IsNumber(th) || !(th->valuedouble > 0 &&
		    th->valuedouble <= 1)) {
			mcp_call_fail(c, "threshold is an SSIM above 0, at most 1");
			return;
		}
		o.threshold = th->valuedouble;
	}
	if (gate_compare(&o, &c->out, why, sizeof(why)) == GATE_USAGE)
		mcp_call_fail(c, "%s", why);
}

/* --- the bench ------------------------------------------------------------ */

/*
 * run_bench: `sloptimize bench` with the same checks and exit codes, its
 * --json document as the result (exit and meaning in it: a verdict, a
 * breached budget, an environment that could not bench — all results the
 * model reads).  Only a request that makes no sense is a tool error.
 * Runs here on the pool, in a browser of its own; a cancelled call takes
 * the browser down.
 */
static void
tool_run_bench(struct mcp_call *c)
{
	static const char *const known[] = { "scene", "launch", "url",
	    "frames", "warmup", "runs", "setup_timeout", "compare", "after",
	    "change_ref", "change", NULL };
	struct bench_req	 r;
	struct bench_outcome	 o;
	long			 frames = BENCH_FRAMES, warmup = BENCH_WARMUP,
				 runs = BENCH_RUNS, setup = BENCH_SETUP_S;
	int			 launch = 0;

	memset(&r, 0, sizeof(r));
	if (mcp_args_known(c, known) || mcp_arg_str(c, "scene", 0, &r.scene) ||
	    mcp_arg_bool(c, "launch", &launch) ||
	    mcp_arg_str(c, "url", 0, &r.url) ||
	    mcp_arg_int(c, "frames", 1, 100000, &frames) ||
	    mcp_arg_int(c, "warmup", 0, 100000, &warmup) ||
	    mcp_arg_int(c, "runs", 1, 20, &runs) ||
	    mcp_arg_int(c, "setup_timeout", 1, 3600, &setup) ||
	    mcp_arg_str(c, "compare", 0, &r.compare) ||
	    mcp_arg_str(c, "after", 0, &r.compare_b) ||
	    mcp_arg_str(c, "change_ref", 0, &r.change_ref) ||
	    mcp_arg_str(c, "change", 0, &r.change))
		return;
	r.project = c->project;
	r.launch = launch;
	r.frames = (int)frames;
	r.warmup = (int)warmup;
	r.runs = (int)runs;
	r.setup_timeout_ms = (int)setup * 1000;
	r.cancel = &c->cancelled;
	r.now_ms = c->now_ms;
	bench_execute(&r, &o);
	if (o.exit == BENCH_EXIT_USAGE) {
		mcp_call_fail(c, "%s", o.err);
		cJSON_Delete(o.doc);
		return;
	}
	c->out = o.doc;
}

/* --- which entity: the census and the bisection ---------------------------- */

#define CENSUS_MAX_BYTES	(16u << 20)

/*
 * What attribute_execute answered, as the tool's result: {v, exit,
 * meaning, error?, <name>: the document}.  A browser, page or scene that
 * is not there is a result the model reads (exit 4), as run_bench's.
 */
static void
attr_result(struct mcp_call *c, const char *name, int exit, cJSON *doc,
    const char *why)
{
	c->out = cJSON_CreateObject();
	cJSON_AddNumberToObject(c->out, "v", 1);
	cJSON_AddNumberToObject(c->out, "exit", exit);
	cJSON_AddStringToObject(c->out, "meaning", exit == 0 ? "written" :
	    exit == 1 ? "world-not-restored" : "environment");
	if (doc == NULL)
		cJSON_AddStringToObject(c->out, "error", why);
	else
		cJSON_AddItemToObject(c->out, name, doc);
}

/* Run what o asks on this pool thread: a request that makes no sense is
 * a tool error, anything else a result. */
static void
attr_run(struct mcp_call *c, const struct attr_opts *o, const char *name)
{
	cJSON	*doc = NULL;
	char	 path[PATH_MAX], why[3 * PATH_MAX];
	int	 exit;

	exit = attribute_execute(o, &doc, path, sizeof(path), why, sizeof(why));
	if (exit == EXIT_USAGE && doc == NULL)
		mcp_call_fail(c, "%s", why);
	else
		attr_result(c, name, exit, doc, why);
}

/* The arguments both take: scene, launch, url. */
static int
attr_args(struct mcp_call *c, struct attr_opts *o, int required)
{
	memset(o, 0, sizeof(*o));
	o->project = c->project;
	o->timeout_ms = ATTR_TIMEOUT_MS;
	o->top = ATTR_TOP;
	o->frames = ATTR_FRAMES;
	o->dpr = 1;
	o->now_ms = c->now_ms;
	o->cancel = &c->cancelled;
	return mcp_arg_str(c, "scene", required, &o->scene) ||
	    mcp_arg_bool(c, "launch", &o->launch) ||
	    mcp_arg_str(c, "url", 0, &o->url);
}

/*
 * get_census: without scene, the census already written (the file);
 * with one, a fresh walk of it in a launched browser.
 */
static void
tool_get_census(struct mcp_call *c)
{
	static const char *const known[] = { "scene", "launch", "url", NULL };
	struct attr_opts	 o;
	cJSON			*doc = NULL;
	char			 path[PATH_MAX], why[3 * PATH_MAX], *text;
	size_t			 len;
	int			 rc;

	if (mcp_args_known(c, known) || attr_args(c, &o, 0))
		return;
	if (o.scene == NULL) {
		if (project_path(o.project, "census.json", path, sizeof(path))) {
			mcp_call_fail(c, "the project path is too long");
			return;
		}
		/* a census is a few hundred entities and hints: 16 MB is
		   far past one, and the bound a file made hostile meets */
		if ((text = malloc(CENSUS_MAX_BYTES)) == NULL) {
			mcp_call_fail(c, "out of memory");
			return;
		}
		if ((rc = statedir_read(path, text, CENSUS_MAX_BYTES,
		    &len)) != 0) {
			free(text);
			snprintf(why, sizeof(why), "%s %s: take the census with "
			    "scene and launch: true", path, rc == -ENOENT ?
			    "is not there yet" : strerror(-rc));
			attr_result(c, "census", EXIT_NOTHING, NULL, why);
			return;
		}
		doc = cJSON_ParseWithLength(text, len);
		free(text);
		if (!cJSON_IsObject(doc)) {
			cJSON_Delete(doc);
			doc = NULL;
			snprintf(why, sizeof(why), "%s is not a JSON object: take "
			    "the census again with scene and launch: true", path);
		}
		attr_result(c, "census", doc ? EXIT_OK : EXIT_NOTHING, doc,
		    why);
		return;
	}
	attr_run(c, &o, "census");
}

/* attribute_cost: the measured bisection, `sloptimize attribute --json`. */
static void
tool_attribute_cost(struct mcp_call *c)
{
	static const char *const known[] = { "scene", "launch", "url", "ids",
	    "top", "frames", NULL };
	struct attr_opts	 o;
	const cJSON		*ids, *id;
	char			 list[8192] = "";
	long			 top = ATTR_TOP, frames = ATTR_FRAMES;
	size_t			 n = 0;

	if (mcp_args_known(c, known) || attr_args(c, &o, 1) ||
	    mcp_arg_int(c, "top", 1, 200, &top) ||
	    mcp_arg_int(c, "frames", 1, 600, &frames))
		return;
	o.bisect = 1;
	o.top = (int)top;
	o.frames = (int)frames;
	if ((ids = mcp_arg(c, "ids")) != NULL) {
		if (!cJSON_IsArray(ids) || mcp_arg(c, "top") != NULL) {
			mcp_call_fail(c, "ids is a list of entity ids (the "
			    "census's), and not with top");
			return;
		}
		cJSON_ArrayForEach(id, ids) {
			const char	*s = cJSON_GetStringValue(id);

			if (s == NULL || strchr(s, ',') != NULL ||
			    n + strlen(s) + 2 > sizeof(list)) {
				mcp_call_fail(c, "ids: each an id of the census "
				    "(no comma), all of them under 8 KB");
				return;
			}
			n += (size_t)snprintf(list + n, sizeof(list) - n, "%s%s",
			    n ? "," : "", s);
		}
		if (!attr_ids_ok(list)) {
			mcp_call_fail(c, "ids: 1 to 200 ids, none empty, no "
			    "blank, quote or backslash");
			return;
		}
		o.ids = list;
	}
	attr_run(c, &o, "attribution");
}

/* repro_hitch: a hitch replayed from its view snapshot, `sloptimize
 * repro --json`: in the open tab, or a named scene with launch. */
static void
tool_repro_hitch(struct mcp_call *c)
{
	static const char *const known[] = { "hitch", "frames", "launch",
	    "scene", "url", NULL };
	struct repro_opts	 o = { 0 };
	cJSON			*doc = NULL;
	char			 why[4096];
	long			 frames = REPRO_FRAMES;
	int			 exit;

	if (mcp_args_known(c, known) || mcp_arg_str(c, "hitch", 1, &o.hitch) ||
	    mcp_arg_int(c, "frames", 1, 600, &frames) ||
	    mcp_arg_bool(c, "launch", &o.launch) ||
	    mcp_arg_str(c, "scene", 0, &o.scene) ||
	    mcp_arg_str(c, "url", 0, &o.url))
		return;
	o.project = c->project;
	o.frames = (int)frames;
	o.timeout_ms = REPRO_TIMEOUT_MS;
	o.cancel = &c->cancelled;
	exit = repro_execute(&o, &doc, why, sizeof(why));
	if (exit == EXIT_USAGE) {
		mcp_call_fail(c, "%s", why);
		return;
	}
	c->out = cJSON_CreateObject();
	cJSON_AddNumberToObject(c->out, "v", 1);
	cJSON_AddNumberToObject(c->out, "exit", exit);
	cJSON_AddStringToObject(c->out, "meaning", exit == 0 ? "replayed" :
	    "environment");
	if (doc == NULL)
		cJSON_AddStringToObject(c->out, "error", why);
	else
		cJSON_AddItemToObject(c->out, "repro", doc);
}

/* get_bench_ledger: bench-history.jsonl, the loop's memory: the last
 * lines (of one scene), and every line that does not parse, said. */
static void
tool_get_bench_ledger(struct mcp_call *c)
{
	static const char *const known[] = { "last", "scene", NULL };
	const char	*scene = NULL;
	long		 last = 20;
	cJSON		*lines, *skipped, *kept, *it, *next;
	char		 why[512];
	int		 n;

	if (mcp_args_known(c, known) || mcp_arg_int(c, "last", 0, 100000,
	    &last) || mcp_arg_str(c, "scene", 0, &scene))
		return;
	if (project_bench_history_read(c->project, 0, &lines, &skipped,
	    why, sizeof(why)) != 0) {
		mcp_call_fail(c, "%s", why);
		return;
	}
	kept = cJSON_CreateArray();
	for (it = lines ? lines->child : NULL; it != NULL; it = next) {
		next = it->next;
		if (scene != NULL && (cJSON_GetStringValue(
		    cJSON_GetObjectItemCaseSensitive(it, "scene")) == NULL ||
		    strcmp(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(
		    it, "scene")), scene) != 0))
			continue;
		cJSON_AddItemToArray(kept, cJSON_DetachItemViaPointer(lines, it));
	}
	cJSON_Delete(lines);
	while (last > 0 && (n = cJSON_GetArraySize(kept)) > last)
		cJSON_DeleteItemFromArray(kept, 0);
	c->out = cJSON_CreateObject();
	cJSON_AddNumberToObject(c->out, "v", 1);
	cJSON_AddStringToObject(c->out, "file", PROJECT_DIR "/"
	    PROJECT_BENCH_HISTORY);
	cJSON_AddItemToObject(c->out, "lines", kept);
	cJSON_AddItemToObject(c->out, "skipped", skipped);
}

/* --- wait_for_wake: its arguments; the wait is the server's, on the loop - */

static int
tool_wait_for_wake(struct mcp_call *c)
{
	static const char *const known[] = { "since", "timeout_ms", "max",
		NULL };
	struct watch_id	 id;
	const char	*since;
	long		 timeout = 30000, max = 20;

	if (mcp_args_known(c, known) || mcp_arg_str(c, "since", 0, &since) ||
	    mcp_arg_int(c, "timeout_ms", 0, 600000, &timeout) ||
	    mcp_arg_int(c, "max", 1, 1000, &max))
		return -1;
	if (since != NULL && watch_id_parse(since, strlen(since), &id) != 0) {
		mcp_call_fail(c, "since is a wake id, <generation>:<offset> "
		    "(the id= of a wake line, or next), not '%s'", since);
		return -1;
	}
	return c->wait_for_wake(c, since != NULL ? &id : NULL, timeout, max);
}

/* --- the tools ---------------------------------------------------------- */

#define FILTER_PROPS \
	"\"from\":{\"type\":\"string\",\"description\":\"ISO-8601: count only occurrences from this time\"}," \
	"\"to\":{\"type\":\"string\",\"description\":\"ISO-8601: count only occurrences up to this time\"}," \
	"\"include_automated\":{\"type\":\"boolean\",\"description\":\"include robots' records (automated: true); default false\"}"

#define STATUS_ENUM "[\"open\",\"pending\",\"fixed\",\"regressed\"]"

#define FIX_INPUT \
	"{\"type\":\"object\",\"additionalProperties\":false,\"required\":[\"title\"],\"properties\":{" \
	"\"title\":{\"type\":\"string\",\"minLength\":1,\"description\":\"what was changed, in a few words\"}," \
	"\"footprints\":{\"type\":\"array\",\"items\":{\"type\":\"string\",\"pattern\":\"^[0-9a-fA-F]{8}$\"},\"description\":\"the footprint ids this addresses (each must be in the ledger)\"}," \
	"\"issue\":{\"type\":\"string\",\"description\":\"the problem, as seen\"}," \
	"\"solution\":{\"type\":\"string\",\"description\":\"what the change does about it\"}," \
	"\"commit\":{\"type\":\"string\",\"description\":\"the commit that carries the change\"}," \
	"\"files\":{\"type\":\"array\",\"items\":{\"type\":\"string\"},\"description\":\"the files changed\"}," \
	"\"before\":{\"type\":\"string\",\"description\":\"the before window: a build name or <ISO>..<ISO>; default the latest build with heartbeats\"}," \
	"\"after\":{\"type\":\"string\",\"description\":\"only for a build that really ran the change: a build name or <ISO>..<ISO>; leave it out and the fix is pending until a build after it has run\"}," \
	"\"force\":{\"type\":\"boolean\",\"description\":\"record footprints the ledger has never seen (a typo is refused otherwise)\"}}}"

#define FIX_OUTPUT \
	"{\"type\":\"object\",\"required\":[\"type\",\"id\",\"at\",\"status\",\"title\",\"footprints\"],\"properties\":{" \
	"\"type\":{\"const\":\"fix\"},\"id\":{\"type\":\"string\"},\"at\":{\"type\":\"string\"}," \
	"\"status\":{\"enum\":[\"applied\",\"proposed\"]},\"title\":{\"type\":\"string\"}," \
	"\"footprints\":{\"type\":\"array\",\"items\":{\"type\":\"string\"}}," \
	"\"before\":{\"type\":[\"object\",\"null\"]},\"after\":{\"type\":[\"object\",\"null\"]}}}"

const struct mcp_tool mcp_tools[] = {
	{ "get_issues", "The issue catalogue",
	  "The issue catalogue of the game's stutters: one row per footprint "
	  "(the identity of a cause) with count, first/last seen, builds, the "
	  "worst value, the last verdict and its evidence, the situation, the "
	  "fixes naming it and its status: open, pending (a fix waits for a "
	  "build after it to run), fixed, or regressed. Most frequent first. "
	  "Each fix carries its judgement: was → now (the p95 of its before "
	  "and after windows, each with its noise interval) and a verdict — "
	  "improved or regressed only past the noise with enough play; "
	  "no-detectable-change, not-enough-evidence, software (a software "
	  "renderer's timings are never evidence) or incomparable otherwise. "
	  "`regime` says when the last heartbeats came from a software "
	  "renderer: their frame times are not to be trusted. "
	  "The same fold as `sloptimize issues --json`.",
	  "{\"type\":\"object\",\"additionalProperties\":false,\"properties\":{"
	  "\"type\":{\"type\":\"string\",\"description\":\"only rows of this record type: hitch, usermark, jitter, …\"},"
	  "\"status\":{\"enum\":" STATUS_ENUM ",\"description\":\"only rows with this status\"},"
	  "\"limit\":{\"type\":\"integer\",\"minimum\":0,\"maximum\":100000,\"description\":\"at most this many rows (default 50; 0: all)\"},"
	  FILTER_PROPS "}}",
	  "{\"type\":\"object\",\"required\":[\"v\",\"counts\",\"issues\"],\"properties\":{"
	  "\"v\":{\"const\":1},\"counts\":{\"type\":\"object\"},\"issues\":{\"type\":\"array\",\"items\":{"
	  "\"type\":\"object\",\"required\":[\"id\",\"key\",\"type\",\"count\",\"status\",\"fixes\"],\"properties\":{"
	  "\"id\":{\"type\":\"string\"},\"count\":{\"type\":\"integer\"},\"status\":{\"enum\":" STATUS_ENUM "}}}},"
	  "\"skipped\":{\"type\":\"array\"},\"source\":{\"type\":\"object\"}}}",
	  1, tool_get_issues, NULL },
	{ "get_issue", "One issue",
	  "One footprint: its catalogue row (with every fix and proposal "
	  "naming it, and how each is judged) and its occurrences in file "
	  "order (at, build, value, verdict, byte offset, and what tells it "
	  "apart: the script named, bytes uploaded, sites, counters that "
	  "moved, its regime), the last ones kept. "
	  "Read it before acting on an issue: do not retry what a fix there "
	  "already tried.",
	  "{\"type\":\"object\",\"additionalProperties\":false,\"required\":[\"id\"],\"properties\":{"
	  "\"id\":{\"type\":\"string\",\"pattern\":\"^[0-9a-fA-F]{8}$\",\"description\":\"the footprint id (fp= in a wake line)\"},"
	  "\"occurrences\":{\"type\":\"integer\",\"minimum\":0,\"maximum\":100000,\"description\":\"keep the last N occurrences (default 50)\"},"
	  FILTER_PROPS "}}",
	  "{\"type\":\"object\",\"required\":[\"v\",\"issue\",\"occurrences\",\"occurrencesTotal\"],\"properties\":{"
	  "\"issue\":{\"type\":\"object\",\"required\":[\"id\",\"status\",\"fixes\",\"proposals\"],\"properties\":{\"status\":{\"enum\":" STATUS_ENUM "}}},"
	  "\"occurrences\":{\"type\":\"array\",\"items\":{\"type\":\"object\"}},\"occurrencesTotal\":{\"type\":\"integer\"}}}",
	  1, tool_get_issue, NULL },
	{ "get_history", "The timeline",
	  "The ledger's time span in equal buckets: per bucket the medians of "
	  "the heartbeats (frame p95 and median, draw calls, triangles, "
	  "programs), the hitch count and worst hitch, and the builds that ran; "
	  "then one measured window per build. A bucket without evidence is "
	  "null, never zero.",
	  "{\"type\":\"object\",\"additionalProperties\":false,\"properties\":{"
	  "\"buckets\":{\"type\":\"integer\",\"minimum\":1,\"maximum\":1000,\"description\":\"how many buckets (default 24)\"},"
	  "\"include_automated\":{\"type\":\"boolean\",\"description\":\"include robots' records\"}}}",
	  "{\"type\":\"object\",\"required\":[\"v\",\"buckets\",\"builds\"],\"properties\":{"
	  "\"buckets\":{\"type\":\"array\",\"items\":{\"type\":\"object\"}},\"builds\":{\"type\":\"array\",\"items\":{\"type\":\"object\"}}}}",
	  1, tool_get_history, NULL },
	{ "get_ledger", "The ledger's tail",
	  "The last records of perf.jsonl and fixes.jsonl as written (unknown "
	  "fields kept), whole lines only, with each record's byte offset (the "
	  "offset in a wake id). Bounded: at most 1000 of each.",
	  "{\"type\":\"object\",\"additionalProperties\":false,\"properties\":{"
	  "\"records\":{\"type\":\"integer\",\"minimum\":0,\"maximum\":1000,\"description\":\"the last N records of perf.jsonl (default 50)\"},"
	  "\"fixes\":{\"type\":\"integer\",\"minimum\":0,\"maximum\":1000,\"description\":\"the last N records of fixes.jsonl (default 20)\"}}}",
	  "{\"type\":\"object\",\"required\":[\"v\",\"perf\",\"fixes\"],\"properties\":{"
	  "\"perf\":{\"$ref\":\"#/$defs/tail\"},\"fixes\":{\"$ref\":\"#/$defs/tail\"}},"
	  "\"$defs\":{\"tail\":{\"type\":\"object\",\"required\":[\"path\",\"size\",\"from\",\"truncated\",\"records\",\"offsets\",\"skipped\"],"
	  "\"properties\":{\"records\":{\"type\":\"array\",\"items\":{\"type\":\"object\"}},\"offsets\":{\"type\":\"array\",\"items\":{\"type\":\"integer\"}}}}}}",
	  1, tool_get_ledger, NULL },
	{ "get_status", "The daemon's status",
	  "What the daemon serving this project says about itself (watched "
	  "files, watcher backend, cursor, lag, skipped lines with offsets, "
	  "notifier, subscribers); when no daemon runs, what the files say "
	  "(the ledger's size, counts and skipped lines) and why there is no "
	  "daemon.",
	  "{\"type\":\"object\",\"additionalProperties\":false,\"properties\":{}}",
	  "{\"type\":\"object\",\"required\":[\"source\",\"daemon\"],\"properties\":{"
	  "\"source\":{\"enum\":[\"daemon\",\"files\"]},\"daemon\":{\"type\":[\"object\",\"null\"]},"
	  "\"why\":{\"type\":\"string\"},\"files\":{\"type\":\"object\"},\"counts\":{\"type\":\"object\"},\"skipped\":{\"type\":\"array\"}}}",
	  1, tool_get_status, NULL },
	{ "record_fix", "Record a fix",
	  "Append a fix to fixes.jsonl, the same record and checks as "
	  "`sloptimize fix`. Call it after the change is made, with the "
	  "footprints it addresses: it is pending until a build that started "
	  "after it has run, then the fold measures that build as its after "
	  "window and judges it fixed or regressed. Never claim the fix "
	  "worked before that, nor past its judgement: a verdict other than "
	  "improved (no-detectable-change, not-enough-evidence, software, "
	  "incomparable) is no evidence the change made it faster. A "
	  "footprint the ledger has never seen is refused with the nearest "
	  "known ids.",
	  FIX_INPUT, FIX_OUTPUT, 0, tool_record_fix, NULL },
	{ "propose_fix", "Propose a fix",
	  "Append a proposal to fixes.jsonl (`sloptimize fix propose`): a fix "
	  "the human merges or rejects in the panel. It does not count as a "
	  "fix until merged. Same fields and checks as record_fix.",
	  FIX_INPUT, FIX_OUTPUT, 0, tool_propose_fix, NULL },
	{ "get_profile", "The game's current profile",
	  "The game's rolling summary, .sloptimize/profile.json, which the "
	  "daemon writes from each heartbeat: regime (hardware, or software: "
	  "timings not trusted), frame p95/median, draw calls, triangles, "
	  "programs, GPU time where measured, and the budgets breached. A "
	  "field nobody measured is absent. `exit` is 0, or 4 with `error` "
	  "when there is no profile; `ageMs` says how old it is.",
	  "{\"type\":\"object\",\"additionalProperties\":false,\"properties\":{}}",
	  "{\"type\":\"object\",\"required\":[\"v\",\"exit\",\"path\"],\"properties\":{"
	  "\"exit\":{\"enum\":[0,4]},\"path\":{\"type\":\"string\"},\"ageMs\":{\"type\":\"number\"},"
	  "\"regime\":{\"type\":\"string\"},\"profile\":{\"type\":\"object\"},\"error\":{\"type\":\"string\"}}}",
	  1, tool_get_profile, NULL },
	{ "check_budgets", "Check the performance budgets",
	  "Every budget of sloptimize.budgets.json against the last "
	  "measurement (profile.json, or a bench of `bench` run first), as "
	  "`sloptimize check --json`. `exit`: 0 inside (or none declared, "
	  "with a warning), 1 a budget at level error breached, 2 the "
	  "budgets file is malformed (faults named by key), 4 nothing to "
	  "check against (no profile, older than max_age, no budget judged). "
	  "Timing budgets from a software renderer are reported, not judged; "
	  "counters_only judges the exact counters only.",
	  "{\"type\":\"object\",\"additionalProperties\":false,\"properties\":{"
	  "\"counters_only\":{\"type\":\"boolean\",\"description\":\"judge draw calls, triangles and programs only (exact on any renderer)\"},"
	  "\"bench\":{\"type\":\"string\",\"minLength\":1,\"description\":\"a scene to bench first; its result is judged instead of profile.json\"},"
	  "\"max_age\":{\"type\":\"string\",\"description\":\"a profile older than this is no measurement: 30s (default), 500ms, 5m, 2h, 1d, or off\"}}}",
	  "{\"type\":\"object\",\"required\":[\"v\",\"exit\",\"result\",\"warnings\",\"budgetsFile\"],\"properties\":{"
	  "\"exit\":{\"enum\":[0,1,2,4]},\"result\":{\"enum\":[\"inside\",\"warned\",\"breached\",\"no-budgets\",\"invalid-budgets\",\"no-measurement\",\"stale\",\"nothing-judged\",\"usage\"]},"
	  "\"error\":{\"type\":\"string\"},\"warnings\":{\"type\":\"array\",\"items\":{\"type\":\"string\"}},"
	  "\"budgetsFile\":{\"type\":\"object\"},\"measurement\":{\"type\":\"object\"},\"summary\":{\"type\":\"object\"},"
	  "\"budgets\":{\"type\":\"array\",\"items\":{\"type\":\"object\",\"required\":[\"key\",\"status\",\"max\",\"level\"]}},"
	  "\"breached\":{\"type\":\"array\",\"items\":{\"type\":\"string\"}}}}",
	  1, tool_check_budgets, NULL },
	{ "wait_for_wake", "Wait for the next wake",
	  "Block until the daemon's next wake event (a hitch of 100 ms or "
	  "more, a usermark the player pressed, a jitter) or the timeout, "
	  "then return the wakes (the daemon's messages, each with its line "
	  "and record) and `next`, the id to pass as `since` next time so "
	  "nothing is missed or repeated. The push channel for an agent "
	  "without a monitor. Wakes arriving within 50 ms of the first come "
	  "back together.",
	  "{\"type\":\"object\",\"additionalProperties\":false,\"properties\":{"
	  "\"since\":{\"type\":\"string\",\"pattern\":\"^[0-9]+:[0-9]+$\",\"description\":\"only wakes after this id (next from the last call, or id= of a wake line); the daemon replays those it still holds\"},"
	  "\"timeout_ms\":{\"type\":\"integer\",\"minimum\":0,\"maximum\":600000,\"description\":\"give up after this long (default 30000); keep it under the client's request timeout\"},"
	  "\"max\":{\"type\":\"integer\",\"minimum\":1,\"maximum\":1000,\"description\":\"at most this many wakes (default 20)\"}}}",
	  "{\"type\":\"object\",\"required\":[\"wakes\",\"next\",\"timedOut\",\"connected\"],\"properties\":{"
	  "\"wakes\":{\"type\":\"array\",\"items\":{\"type\":\"object\",\"required\":[\"type\"],\"properties\":{\"type\":{\"const\":\"wake\"}}}},"
	  "\"next\":{\"type\":[\"string\",\"null\"]},\"timedOut\":{\"type\":\"boolean\"},\"connected\":{\"type\":\"boolean\"},"
	  "\"daemon\":{\"type\":\"string\"},\"said\":{\"type\":\"string\"}}}",
	  1, NULL, tool_wait_for_wake },
	{ "run_gate", "The correctness gate",
	  "Compare the named scene's frame with its golden (.sloptimize/goldens/"
	  "SCENE.png) by SSIM on each of R, G and B, the same as `sloptimize "
	  "gate --json`: verdict pass or fail (the smallest channel against the "
	  "threshold), the SSIM per channel, the share of changed pixels, the "
	  "frame and a difference picture written to .sloptimize/gate/. A fail "
	  "means the change altered the picture: revert it. golden-changed, "
	  "incomparable, no-golden and environment judge nothing; tell the "
	  "person. launch: true captures the frame in a headless Chromium "
	  "(the scene under the virtual clock, the first frame a bench "
	  "measures; most of a minute on a software renderer); without it "
	  "the game tab open in a browser, through the daemon (no tab: "
	  "environment). Compare only: "
	  "never record or edit a golden.",
	  "{\"type\":\"object\",\"additionalProperties\":false,\"required\":[\"scene\"],\"properties\":{"
	  "\"scene\":{\"type\":\"string\",\"pattern\":\"^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$\",\"description\":\"a named scene (the one the person chose)\"},"
	  "\"threshold\":{\"type\":\"number\",\"exclusiveMinimum\":0,\"maximum\":1,\"description\":\"the smallest SSIM that passes (default 0.98)\"},"
	  "\"launch\":{\"type\":\"boolean\",\"description\":\"capture in a headless Chromium sloptimize starts (else: the game tab open in a browser, through the daemon)\"},"
	  "\"url\":{\"type\":\"string\",\"description\":\"the game's URL (default: .sloptimize/dev.json's)\"}}}",
	  "{\"type\":\"object\",\"required\":[\"v\",\"scene\",\"verdict\",\"exit\",\"threshold\",\"golden\",\"warnings\"],\"properties\":{"
	  "\"verdict\":{\"enum\":[\"pass\",\"fail\",\"golden-changed\",\"incomparable\",\"no-golden\",\"environment\"]},"
	  "\"exit\":{\"enum\":[0,1,3,4]},\"ssim\":{\"type\":\"object\"},\"changed\":{\"type\":\"object\"},"
	  "\"error\":{\"type\":\"string\"},\"golden\":{\"type\":\"object\"},\"frame\":{\"type\":\"object\"},"
	  "\"files\":{\"type\":\"object\"},\"warnings\":{\"type\":\"array\",\"items\":{\"type\":\"string\"}}}}",
	  0, tool_run_gate, NULL },
	{ "run_bench", "Bench a scene, or compare two benches",
	  "A bench of a scene the game names (sloptimize.scene), in a "
	  "headless Chromium sloptimize launches (launch: true) or the game "
	  "tab open in a browser, through the daemon, and with compare a verdict on the change: "
	  "exactly `sloptimize bench --json`. The result's exit says what to "
	  "do: 0 improved (keep the change), 1 regressed (revert), 5 "
	  "no-detectable-change (a result: revert), 3 incomparable (the "
	  "benches differ in configuration, regime or GPU: fix that first), "
	  "4 environment (no browser, no page, no scene, nothing to compare "
	  "with: the error says which); a bench without compare exits 1 when "
	  "a budget at level error is breached. Timing from a software "
	  "renderer is reported and never compared: the verdict is then "
	  "decided by draw calls and triangles. Never invent a scene: use the "
	  "one the project names. A bench takes minutes: raise the client's "
	  "request timeout.",
	  "{\"type\":\"object\",\"additionalProperties\":false,\"properties\":{"
	  "\"scene\":{\"type\":\"string\",\"pattern\":\"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$\",\"description\":\"run a bench of this scene (leave it out to compare two existing benches)\"},"
	  "\"launch\":{\"type\":\"boolean\",\"description\":\"bench in a headless Chromium sloptimize starts (required for now)\"},"
	  "\"url\":{\"type\":\"string\",\"description\":\"the game's page (default: .sloptimize/dev.json, written by the Vite plugin)\"},"
	  "\"frames\":{\"type\":\"integer\",\"minimum\":1,\"maximum\":100000,\"description\":\"measured frames a run (default 600)\"},"
	  "\"warmup\":{\"type\":\"integer\",\"minimum\":0,\"maximum\":100000,\"description\":\"frames before the runs (default 120)\"},"
	  "\"runs\":{\"type\":\"integer\",\"minimum\":1,\"maximum\":20,\"description\":\"runs (default 3)\"},"
	  "\"setup_timeout\":{\"type\":\"integer\",\"minimum\":1,\"maximum\":3600,\"description\":\"seconds for the scene's setup (default 60)\"},"
	  "\"compare\":{\"type\":\"string\",\"description\":\"the before bench: last (the newest of the scene) or a bench file name; without scene, last compares the two newest\"},"
	  "\"after\":{\"type\":\"string\",\"description\":\"without scene: the after bench to compare with compare\"},"
	  "\"change_ref\":{\"type\":\"string\",\"description\":\"the change compared, e.g. git:1a2b3c4 (recorded in the ledger)\"},"
	  "\"change\":{\"type\":\"string\",\"description\":\"what the change does, in a few words (recorded in the ledger)\"}}}",
	  "{\"type\":\"object\",\"required\":[\"v\",\"exit\",\"meaning\"],\"properties\":{"
	  "\"exit\":{\"enum\":[0,1,3,4,5]},\"meaning\":{\"type\":\"string\"},\"error\":{\"type\":\"string\"},"
	  "\"run\":{\"type\":\"object\"},\"compare\":{\"type\":\"object\",\"properties\":{"
	  "\"verdict\":{\"enum\":[\"improved\",\"regressed\",\"no-detectable-change\",\"incomparable\"]}}},"
	  "\"budgets\":{\"type\":\"object\"}}}",
	  0, tool_run_bench, NULL },
	{ "get_census", "The census of a scene",
	  "Which entity of a named scene holds what: meshes, triangles, "
	  "materials, geometries, an estimate of texture bytes, each entity "
	  "with the file and line that built it, and hints (instancing-"
	  "candidate, material-dedup-candidate, shadow-caster-light, "
	  "oversized-texture, uncapped-pixel-ratio, undisposed-suspect) each "
	  "with a fix naming "
	  "that line: go there rather than searching. Without scene: the "
	  "census last written (.sloptimize/census.json); with scene and "
	  "launch: true a fresh walk in a headless Chromium (most of a "
	  "minute), as `sloptimize attribute --static --json`. Counts and "
	  "estimates: draw calls are measured by attribute_cost or a bench.",
	  "{\"type\":\"object\",\"additionalProperties\":false,\"properties\":{"
	  "\"scene\":{\"type\":\"string\",\"pattern\":\"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$\",\"description\":\"walk this scene now (leave it out to read the last census)\"},"
	  "\"launch\":{\"type\":\"boolean\",\"description\":\"in a headless Chromium sloptimize starts (required for a fresh walk for now)\"},"
	  "\"url\":{\"type\":\"string\",\"description\":\"the game's page (default: .sloptimize/dev.json)\"}}}",
	  "{\"type\":\"object\",\"required\":[\"v\",\"exit\",\"meaning\"],\"properties\":{"
	  "\"exit\":{\"enum\":[0,4]},\"meaning\":{\"type\":\"string\"},\"error\":{\"type\":\"string\"},"
	  "\"census\":{\"type\":\"object\"}}}",
	  0, tool_get_census, NULL },
	{ "attribute_cost", "What each entity costs, measured",
	  "The measured bisection, as `sloptimize attribute --json`: the game "
	  "paused in a headless Chromium (launch: true), its frame drawn "
	  "again with each entity hidden (the ids given, or the census's "
	  "first top by triangles); per entity the draw calls and triangles "
	  "it takes (exact) and its time inside render (noisy within the "
	  "baselines' spread; from a software renderer never compared), "
	  "ranked by draw calls, each with the file and line that built it. "
	  "A ranking, not an accounting (sumsToBaseline: false). exit 1: "
	  "the world could not be put back: tell the person. Minutes on a "
	  "software renderer: raise the client's request timeout.",
	  "{\"type\":\"object\",\"additionalProperties\":false,\"required\":[\"scene\"],\"properties\":{"
	  "\"scene\":{\"type\":\"string\",\"pattern\":\"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$\",\"description\":\"a named scene (the one the project names)\"},"
	  "\"launch\":{\"type\":\"boolean\",\"description\":\"in a headless Chromium sloptimize starts (required for now)\"},"
	  "\"url\":{\"type\":\"string\",\"description\":\"the game's page (default: .sloptimize/dev.json)\"},"
	  "\"ids\":{\"type\":\"array\",\"items\":{\"type\":\"string\",\"minLength\":1},\"minItems\":1,\"maxItems\":200,\"description\":\"the entities to measure, as the census names them\"},"
	  "\"top\":{\"type\":\"integer\",\"minimum\":1,\"maximum\":200,\"description\":\"else the census's first N by triangles (default 20)\"},"
	  "\"frames\":{\"type\":\"integer\",\"minimum\":1,\"maximum\":600,\"description\":\"frames drawn per entity and baseline (default 5)\"}}}",
	  "{\"type\":\"object\",\"required\":[\"v\",\"exit\",\"meaning\"],\"properties\":{"
	  "\"exit\":{\"enum\":[0,1,4]},\"meaning\":{\"type\":\"string\"},\"error\":{\"type\":\"string\"},"
	  "\"attribution\":{\"type\":\"object\"}}}",
	  0, tool_attribute_cost, NULL },
	{ "repro_hitch", "A hitch replayed",
	  "As `sloptimize repro --json`: the view snapshot a hitch record "
	  "names (its snapshotRef, or the byte offset of its line in "
	  "perf.jsonl) restored — camera, viewport, pixel ratio, visibility of "
	  "track()ed entities — and frames (default 35) stepped at the "
	  "recorded times, in the game tab open now (the game paused "
	  "meanwhile) or with launch: true in a named scene of a headless "
	  "Chromium. Per frame the counters and what the game added (entity "
	  "ids, the line that built them); reproduced: whether the hitch's "
	  "own frame moved its counters as recorded (or the frame before it, "
	  "when the record says its stall was that frame's work: comparedAt). "
	  "Fidelity \"view\": the "
	  "game's own state (physics, spawn queues, its random numbers) is not "
	  "restored, so NOT reproduced says the cause lies there. Times from a "
	  "software renderer are never evidence.",
	  "{\"type\":\"object\",\"additionalProperties\":false,\"required\":[\"hitch\"],\"properties\":{"
	  "\"hitch\":{\"type\":\"string\",\"pattern\":\"^(hitch-[0-9a-z]{1,32}-[0-9]{1,12}|[0-9]{1,15})$\",\"description\":\"a hitch record's snapshotRef, or the byte offset of its line in perf.jsonl\"},"
	  "\"frames\":{\"type\":\"integer\",\"minimum\":1,\"maximum\":600,\"description\":\"frames to step (default 35: the hitch's own is the 31st)\"},"
	  "\"launch\":{\"type\":\"boolean\",\"description\":\"in a headless Chromium sloptimize starts, in scene (else the open tab)\"},"
	  "\"scene\":{\"type\":\"string\",\"pattern\":\"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$\",\"description\":\"the named scene to set up first (with launch)\"},"
	  "\"url\":{\"type\":\"string\",\"description\":\"the game's page (default: .sloptimize/dev.json; with launch)\"}}}",
	  "{\"type\":\"object\",\"required\":[\"v\",\"exit\",\"meaning\"],\"properties\":{"
	  "\"exit\":{\"enum\":[0,4]},\"meaning\":{\"type\":\"string\"},\"error\":{\"type\":\"string\"},"
	  "\"repro\":{\"type\":\"object\"}}}",
	  0, tool_repro_hitch, NULL },
	{ "get_bench_ledger", "The bench ledger",
	  "bench-history.jsonl: one line per comparison (the change's ref and "
	  "description, before and after, the verdict and each metric's, the "
	  "budgets' distances). Read it before trying a change: do not retry "
	  "what it shows reverted. Lines that do not parse are listed in "
	  "skipped, never dropped in silence.",
	  "{\"type\":\"object\",\"additionalProperties\":false,\"properties\":{"
	  "\"last\":{\"type\":\"integer\",\"minimum\":0,\"maximum\":100000,\"description\":\"the last N lines (default 20; 0: all)\"},"
	  "\"scene\":{\"type\":\"string\",\"description\":\"only this scene's\"}}}",
	  "{\"type\":\"object\",\"required\":[\"v\",\"file\",\"lines\",\"skipped\"],\"properties\":{"
	  "\"lines\":{\"type\":\"array\",\"items\":{\"type\":\"object\"}},"
	  "\"skipped\":{\"type\":\"array\",\"items\":{\"type\":\"object\",\"required\":[\"line\",\"offset\",\"why\"]}}}}",
	  1, tool_get_bench_ledger, NULL },
};

const size_t mcp_ntools = sizeof(mcp_tools) / sizeof(mcp_tools[0]);
