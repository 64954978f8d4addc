/*
 * ledger_verbs — `sloptimize` issues, report, history, fix, hook-status,
 * doctor.  (Their entry points are declared in cli/verbs.h with every
 * other verb's: that header is the dispatch table's, included by each
 * verb's file, and this file is one of them — it was verbs.c, and the
 * verbs it uses (watch, check) included its header back.)
 *
 * Every verb reads the project's files directly through the fold; none
 * needs the daemon.  Output is an aligned table for people or, with
 * --json, the shapes of docs/json.md for programs.  Exit codes follow
 * DESIGN §11: 0 ok, 1 findings, 2 usage, 4 nothing to read.
 */
#include <sys/stat.h>

#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "cli/check.h"
#include "cli/fix.h"
#include "cli/regime.h"
#include "daemon_get.h"
#include "ledger/footprint.h"
#include "ledger/impact.h"
#include "notifier/desktop.h"
#include "notifier/lazynotify.h"
#include "project/append.h"
#include "project/budgets.h"
#include "project/profile.h"
#include "sink.h"
#include "verbs.h"
#include "watch.h"
#include "watchers/fstrust.h"
#include "project/statedir.h"
#include "sink/lazycurl.h"

static int
parse_time_opt(const char *verb, const char *name, const char *v, int64_t *ms)
{
	*ms = LEDGER_NO_TIME;
	if (v == NULL)
		return 0;
	if (iso_parse_ms(v, strlen(v), ms) != 0) {
		fprintf(stderr, "sloptimize %s: --%s takes an ISO-8601 time, "
		    "not '%s'\n", verb, name, v);
		return -1;
	}
	return 0;
}

static int	state_dir_of(const char *, char *, size_t);

/* How fold_or_explain folds: from byte 0, or from the daemon's checkpoint
 * when it serves (PROJECT_RESUME_* flags may be added). */
#define FOLD_FRESH	0
#define FOLD_RESUME	0x100

/* Fold the project or say why not; returns -1 to go on or an exit code. */
static int
fold_or_explain(const char *verb, const struct cli_common *c,
    const struct ledger_opts *o, unsigned how, struct ledger **l,
    struct project_fold_info *fi)
{
	char		 dir[PATH_MAX], ckpt[PATH_MAX + 16];
	const char	*path = NULL;
	int		 rc;

	/* the daemon's checkpoint, if it has one: O(new bytes) */
	if ((how & FOLD_RESUME) && state_dir_of(c->project, dir,
	    sizeof(dir)) == 0 && statedir_path(dir, "checkpoint", ckpt,
	    sizeof(ckpt)) == 0)
		path = ckpt;
	rc = project_fold_resume(c->project, path, o, how & ~FOLD_RESUME, l,
	    fi);

	if (rc == 0)
		return -1;
	if (rc == -ENOENT) {
		fprintf(stderr, "sloptimize %s: no ledger at %s (the game's "
		    "runtime writes it; is --project right?)\n", verb, fi->perf);
		return EXIT_NOTHING;
	}
	fprintf(stderr, "sloptimize %s: cannot read %s: %s\n", verb,
	    fi->failed ? fi->failed : fi->perf, project_strerror(rc));
	return EXIT_NOTHING;
}

/* The catalogue (q) or the timeline (buckets) as JSON on stdout, with
 * its source, streamed a row at a time: memory does not grow with the
 * number of causes.  Consumes l. */
static int
write_json(const char *verb, struct ledger *l,
    const struct project_fold_info *fi, const struct ledger_query *q,
    int buckets, int64_t now_ms, const struct cli_regime *reg)
{
	cJSON	*extra = cJSON_CreateObject();
	int	 rc;

	cli_add_source(extra, fi);
	if (reg != NULL)
		cJSON_AddItemToObject(extra, "regime", cli_regime_json(reg));
	rc = q != NULL ? ledger_issues_write(l, q, now_ms, extra,
	    ledger_sink_file, stdout) : ledger_history_write(l, buckets,
	    now_ms, extra, ledger_sink_file, stdout);
	if (rc == 0 && fputc('\n', stdout) == EOF)
		rc = -EIO;
	cJSON_Delete(extra);
	ledger_destroy(l);
	if (rc != 0) {
		fprintf(stderr, "sloptimize %s: %s\n", verb, strerror(-rc));
		return EXIT_FINDINGS;
	}
	return EXIT_OK;
}

static void
note_partial(const struct project_fold_info *fi)
{
	if (fi->partial > 0)
		fprintf(stderr, "sloptimize: left %llu bytes of an unfinished "
		    "last line in %s unfolded\n",
		    (unsigned long long)fi->partial, fi->perf);
}

static const char *
jstr(const cJSON *o, const char *name)
{
	const char	*s = cJSON_GetStringValue(
			    cJSON_GetObjectItemCaseSensitive(o, name));

	return s ? s : "-";
}

static double
jnum(const cJSON *o, const char *name)
{
	const cJSON	*it = cJSON_GetObjectItemCaseSensitive(o, name);

	return cJSON_IsNumber(it) ? it->valuedouble : NAN;
}

static void
fmt_num(double v, const char *unit, char *out, size_t cap)
{
	if (isnan(v))
		snprintf(out, cap, "-");
	else if (fabs(v) >= 100000)
		snprintf(out, cap, "%.0f%s", v, unit);
	else if (v == floor(v))
		snprintf(out, cap, "%.0f%s", v, unit);
	else
		snprintf(out, cap, "%.1f%s", v, unit);
}

/* worst as "141.2ms" */
static void
fmt_worst(const cJSON *row, char *out, size_t cap)
{
	const cJSON	*w = cJSON_GetObjectItemCaseSensitive(row, "worst");

	if (!cJSON_IsObject(w)) {
		snprintf(out, cap, "-");
		return;
	}
	fmt_num(jnum(w, "value"), strcmp(jstr(w, "unit"), "ms") == 0 ? "ms" :
	    "u", out, cap);
}

static void
fmt_last(const cJSON *row, char *out, size_t cap)
{
	double	ago = jnum(row, "lastAgoMs");

	if (isnan(ago))
		snprintf(out, cap, "-");
	else
		format_ago((int64_t)ago, out, cap);
}

static const char *
verdict_guess(const cJSON *row)
{
	const cJSON	*v = cJSON_GetObjectItemCaseSensitive(row, "verdict");

	return cJSON_IsObject(v) ? jstr(v, "guess") : "-";
}

/* " [93.9–100.3]" from an interval {lo, hi}, "" without one. */
static void
fmt_interval(const cJSON *iv, char *out, size_t cap)
{
	char	lo[32], hi[32];

	*out = '\0';
	if (!cJSON_IsObject(iv) || isnan(jnum(iv, "lo")) || isnan(jnum(iv, "hi")))
		return;
	fmt_num(jnum(iv, "lo"), "", lo, sizeof(lo));
	fmt_num(jnum(iv, "hi"), "", hi, sizeof(hi));
	snprintf(out, cap, " [%s\u2013%s]", lo, hi);
}

/* What a verdict (docs/json.md, "Fix verdicts") is called in a sentence. */
static const char *
verdict_words(const char *v)
{
	static const struct { const char *v, *words; } t[] = {
		{ "improved", "improved" },
		{ "regressed", "regressed" },
		{ "no-detectable-change", "no detectable change" },
		{ "not-enough-evidence", "not enough evidence yet" },
		{ "software", "software renderer: timings are not evidence" },
		{ "incomparable", "incomparable" },
		{ "pending", "pending" },
	};
	size_t	i;

	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		if (strcmp(v, t[i].v) == 0)
			return t[i].words;
	return v;
}

/*
 * A fix's verdict on one line: was → now, each with its noise interval,
 * the delta only when the verdict is past the noise, then the verdict and
 * its reason.  Nothing for a fix without a judgement (an older fold).
 */
static void
print_judgement(const cJSON *fix, const char *indent)
{
	const cJSON	*j = cJSON_GetObjectItemCaseSensitive(fix, "judgement");
	const char	*v;
	char		 was[32], now[32], wi[80], ni[80], d[32], pct[32];

	if (!cJSON_IsObject(j))
		return;
	v = jstr(j, "verdict");
	printf("%s", indent);
	if (strcmp(v, "software") == 0 || strcmp(v, "incomparable") == 0) {
		/* timings that are not to be compared are not put side by
		 * side: each window's own, and why they stop there */
		const cJSON	*b = cJSON_GetObjectItemCaseSensitive(fix,
				    "before");
		const cJSON	*a = cJSON_GetObjectItemCaseSensitive(fix,
				    "after");

		fmt_num(jnum(j, "was"), "ms", was, sizeof(was));
		fmt_num(jnum(j, "now"), "ms", now, sizeof(now));
		printf("before p95 %s on %s, after p95 %s on %s: ", was,
		    cJSON_IsObject(b) ? jstr(b, "regime") : "-", now,
		    cJSON_IsObject(a) ? jstr(a, "regime") : "-");
	} else if (!isnan(jnum(j, "was")) || !isnan(jnum(j, "now"))) {
		fmt_num(jnum(j, "was"), "ms", was, sizeof(was));
		fmt_num(jnum(j, "now"), "ms", now, sizeof(now));
		fmt_interval(cJSON_GetObjectItemCaseSensitive(j, "wasInterval"),
		    wi, sizeof(wi));
		fmt_interval(cJSON_GetObjectItemCaseSensitive(j, "nowInterval"),
		    ni, sizeof(ni));
		printf("was %s%s \u2192 now %s%s p95", was, wi, now, ni);
		if ((strcmp(v, "improved") == 0 || strcmp(v, "regressed") == 0) &&
		    !isnan(jnum(j, "deltaMs"))) {
			fmt_num(fabs(jnum(j, "deltaMs")), "ms", d, sizeof(d));
			fmt_num(fabs(jnum(j, "deltaPct")), "", pct, sizeof(pct));
			printf(" %s%s (%s%s %%)", jnum(j, "deltaMs") < 0 ?
			    "\u2212" : "+", d, jnum(j, "deltaMs") < 0 ?
			    "\u2212" : "+", pct);
		}
		printf(": ");
	}
	printf("%s \u2014 %s\n", verdict_words(v), jstr(j, "reason"));
}

static void
print_issue_table(const cJSON *issues, int limit)
{
	const cJSON	*row;
	int		 n = 0;

	printf("%-8s  %6s  %-9s  %-8s  %9s  %-9s  %-28s  %s\n", "ID", "COUNT",
	    "STATUS", "TYPE", "WORST", "LAST", "VERDICT", "SITUATION");
	cJSON_ArrayForEach(row, issues) {
		char		 worst[32], last[32], sit[256] = "";
		const cJSON	*f;
		size_t		 o = 0;

		if (limit && n++ >= limit)
			break;
		fmt_worst(row, worst, sizeof(worst));
		fmt_last(row, last, sizeof(last));
		cJSON_ArrayForEach(f, cJSON_GetObjectItemCaseSensitive(row,
		    "situation"))
			if (o < sizeof(sit))
				o += (size_t)snprintf(sit + o, sizeof(sit) - o,
				    "%s%s=%s", o ? " " : "", f->string,
				    cJSON_GetStringValue(f));
		printf("%-8s  %6.0f  %-9s  %-8s  %9s  %-9s  %-28.28s  %s\n",
		    jstr(row, "id"), jnum(row, "count"), jstr(row, "status"),
		    jstr(row, "type"), worst, last, verdict_guess(row),
		    *sit ? sit : "-");
	}
}

/* --- issues ----------------------------------------------------------- */

static const char issues_usage[] =
"usage: sloptimize issues [--fp ID] [--type T] [--status S] [--from ISO]\n"
"                         [--to ISO] [--include-automated] [--no-checkpoint]\n"
"                         [--json] [--project DIR]\n"
"The issue catalogue: one row per footprint, most frequent first.\n"
"  --fp ID             one issue with its history and every occurrence\n"
"  --type T            hitch, usermark, jitter, …\n"
"  --status S          open, pending, fixed or regressed\n"
"  --from/--to ISO     count only occurrences in this time range\n"
"  --include-automated include robots' records (automated: true)\n"
"  --no-checkpoint     fold the whole ledger, not the daemon's checkpoint\n"
"                      and the bytes after it (the answer is the same)\n";

/* Someone's own words on one line: quoted, '"' and '\\' escaped,
 * control characters as spaces (a note is not a terminal command). */
static void
print_quoted(const char *s)
{
	putchar('"');
	for (; *s != '\0'; s++) {
		if (*s == '"' || *s == '\\')
			putchar('\\');
		putchar((unsigned char)*s < 0x20 || *s == 0x7f ? ' ' : *s);
	}
	putchar('"');
}

/* Append to out what follows, " · " between pieces. */
static void
what_add(char *out, size_t cap, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void
what_add(char *out, size_t cap, const char *fmt, ...)
{
	size_t	n = strlen(out);
	va_list	ap;

	if (n > 0 && n + 3 < cap) {
		snprintf(out + n, cap - n, " \u00b7 ");
		n = strlen(out);
	}
	if (n + 1 >= cap)
		return;
	va_start(ap, fmt);
	vsnprintf(out + n, cap - n, fmt, ap);
	va_end(ap);
}

/* The last path segment of a URL, without its query or fragment. */
static void
url_file(const char *url, char *out, size_t cap)
{
	const char	*end = url + strcspn(url, "?#"), *p = end;

	while (p > url && p[-1] != '/')
		p--;
	snprintf(out, cap, "%.*s", (int)(end - p), p);
}

/* The resource counters that moved in a delta, each a part of its own,
 * the first after `lead`; with `calls`, the draw calls too — for the frame
 * whose work the stall was ("the frame before: "), where a crowd sharing
 * one geometry moves nothing else (in the hitch's own frame a camera's
 * turn moves them: not what tells it apart). */
static void
moved_add(char *out, size_t cap, const char *lead, const cJSON *d, int calls)
{
	const cJSON	*it;

	cJSON_ArrayForEach(it, d)
		if (cJSON_IsNumber(it) && it->valuedouble != 0 &&
		    (strcmp(it->string, "programs") == 0 ||
		    strcmp(it->string, "textures") == 0 ||
		    strcmp(it->string, "geometries") == 0 ||
		    (calls && strcmp(it->string, "calls") == 0))) {
			what_add(out, cap, "%s%s %+.0f", lead, it->string,
			    it->valuedouble);
			lead = "";
		}
}

/*
 * What tells an occurrence from the others of its footprint, from what
 * its record carried (docs/json.md): the script the browser named, the
 * bytes uploaded, the sites, the counters that moved, a software regime.
 * "-" when the record carried none of it.
 */
static void
occurrence_what(const cJSON *o, char *out, size_t cap)
{
	const cJSON	*sc = cJSON_GetObjectItemCaseSensitive(o, "script");
	const cJSON	*st = cJSON_GetObjectItemCaseSensitive(o, "sites");
	const cJSON	*d = cJSON_GetObjectItemCaseSensitive(o, "delta");
	const cJSON	*it;
	const char	*reg = cJSON_GetStringValue(
			    cJSON_GetObjectItemCaseSensitive(o, "regime"));
	char		 file[128], ms[32];
	int		 n = 0;

	*out = '\0';
	if (cJSON_IsObject(sc)) {
		const char	*name = cJSON_GetStringValue(
				    cJSON_GetObjectItemCaseSensitive(sc, "name"));
		const char	*inv = cJSON_GetStringValue(
				    cJSON_GetObjectItemCaseSensitive(sc,
				    "invoker"));
		const char	*url = cJSON_GetStringValue(
				    cJSON_GetObjectItemCaseSensitive(sc,
				    "sourceURL"));
		const char	*un = cJSON_GetStringValue(
				    cJSON_GetObjectItemCaseSensitive(sc,
				    "unavailable"));

		file[0] = '\0';
		if (url != NULL)
			url_file(url, file, sizeof(file));
		if (name != NULL || inv != NULL) {
			fmt_num(jnum(sc, "durationMs"), "ms", ms, sizeof(ms));
			what_add(out, cap, "script %s%s%s%s%s%s",
			    name != NULL ? name : inv, *file ? " (" : "",
			    file, *file ? ")" : "",
			    isnan(jnum(sc, "durationMs")) ? "" : " ",
			    isnan(jnum(sc, "durationMs")) ? "" : ms);
		} else if (un != NULL)
			what_add(out, cap, "no script named: %s", un);
	}
	if (!isnan(jnum(o, "uploadBytes"))) {
		double	b = jnum(o, "uploadBytes");

		if (b >= 1024 * 1024)
			what_add(out, cap, "upload %.1f MiB", b / (1024 * 1024));
		else if (b >= 1024)
			what_add(out, cap, "upload %.1f KiB", b / 1024);
		else
			what_add(out, cap, "upload %.0f B", b);
	}
	cJSON_ArrayForEach(it, st) {
		if (n++ == 3) {
			what_add(out, cap, "+%d sites",
			    cJSON_GetArraySize(st) - 3);
			break;
		}
		what_add(out, cap, "%s", cJSON_GetStringValue(it) ?
		    cJSON_GetStringValue(it) : "?");
	}
	moved_add(out, cap, "", d, 0);
	moved_add(out, cap, "the frame before: ", cJSON_GetObjectItemCaseSensitive(
	    cJSON_GetObjectItemCaseSensitive(o, "before"), "delta"), 1);
	if (reg != NULL && strcmp(reg, "software") == 0)
		what_add(out, cap, "software renderer");
	if (cJSON_IsString(cJSON_GetObjectItemCaseSensitive(o, "snapshotRef")))
		what_add(out, cap, "view snapshot");
	if (*out == '\0')
		snprintf(out, cap, "-");
}

static void
print_issue_detail(const cJSON *doc, const struct cli_regime *reg)
{
	const cJSON	*row = cJSON_GetObjectItemCaseSensitive(doc, "issue");
	const cJSON	*it, *v, *snap = NULL;
	char		 worst[32], last[32];

	fmt_worst(row, worst, sizeof(worst));
	fmt_last(row, last, sizeof(last));
	printf("issue     %s  (%s)\n", jstr(row, "id"), jstr(row, "status"));
	cli_regime_say(stdout, "regime    ", reg);
	printf("key       %s\n", jstr(row, "key"));
	printf("count     %.0f\n", jnum(row, "count"));
	printf("first     %s\n", jstr(row, "first"));
	printf("last      %s (%s)\n", jstr(row, "last"), last);
	printf("worst     %s at %s\n", worst,
	    jstr(cJSON_GetObjectItemCaseSensitive(row, "worst"), "at"));
	printf("builds   ");
	cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(row, "builds"))
		printf(" %s", cJSON_GetStringValue(it));
	printf("\n");
	v = cJSON_GetObjectItemCaseSensitive(row, "verdict");
	if (cJSON_IsObject(v))
		printf("verdict   %s/%s \"%s\"\n", jstr(v, "guess"),
		    jstr(v, "confidence"), jstr(v, "evidence"));
	cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(row, "fixes")) {
		if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(it,
		    "pending")))
			printf("fix       %s %s \"%s\" commit %s (pending: "
			    "waiting for a build after this fix)\n",
			    jstr(it, "id"), jstr(it, "at"), jstr(it, "title"),
			    jstr(it, "commit"));
		else
			printf("fix       %s %s \"%s\" commit %s (judged on "
			    "%s)\n", jstr(it, "id"), jstr(it, "at"),
			    jstr(it, "title"), jstr(it, "commit"),
			    jstr(it, "fixBuild"));
		print_judgement(it, "          ");
	}
	cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(row,
	    "proposals")) {
		printf("proposal  %s %s \"%s\" (%s)\n", jstr(it, "id"),
		    jstr(it, "at"), jstr(it, "title"), jstr(it, "status"));
		print_judgement(it, "          ");
	}
	if (cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(row,
	    "fixes")) == 0)
		printf("record a fix with:\n  sloptimize fix --footprints %s "
		    "--title \"…\" --commit <sha>\n", jstr(row, "id"));
	printf("\n%-24s  %-16s  %9s  %-28s  %10s  %s\n", "AT", "BUILD",
	    "VALUE", "VERDICT", "OFFSET", "WHAT TELLS IT APART");
	cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(doc,
	    "occurrences")) {
		char	val[32], what[512];

		fmt_num(jnum(it, "value"), "", val, sizeof(val));
		v = cJSON_GetObjectItemCaseSensitive(it, "verdict");
		occurrence_what(it, what, sizeof(what));
		printf("%-24s  %-16.16s  %9s  %-28.28s  %10.0f  %s\n",
		    jstr(it, "at"), jstr(it, "build"), val,
		    cJSON_IsObject(v) ? jstr(v, "guess") : "-",
		    jnum(it, "offset"), what);
		/* the player's own words, under the press they explain */
		if (cJSON_IsString(cJSON_GetObjectItemCaseSensitive(it, "note"))) {
			printf("%-24s  note: ", "");
			print_quoted(jstr(it, "note"));
			printf("\n");
		}
		if (cJSON_IsString(cJSON_GetObjectItemCaseSensitive(it,
		    "snapshotRef")))
			snap = it;
	}
	if (snap != NULL)
		printf("\nreplay the frames before one marked \"view "
		    "snapshot\": sloptimize repro OFFSET (the last: sloptimize "
		    "repro %.0f)\n", jnum(snap, "offset"));
}

int
verb_issues(int argc, char **argv)
{
	struct cli_common		 c;
	const char		*fp = NULL, *type = NULL, *status = NULL;
	const char		*from = NULL, *to = NULL;
	int			 automated = 0, nockpt = 0, rc;
	struct cli_opt		 opts[] = {
		{ "fp", OPT_ARG, &fp }, { "type", OPT_ARG, &type },
		{ "status", OPT_ARG, &status }, { "from", OPT_ARG, &from },
		{ "to", OPT_ARG, &to },
		{ "include-automated", OPT_FLAG, &automated },
		{ "no-checkpoint", OPT_FLAG, &nockpt },
		{ NULL, 0, NULL }
	};
	struct ledger_opts	 lo = { 0 };
	struct ledger_query	 q = { 0 };
	struct ledger		*l = NULL;
	struct project_fold_info	 fi;
	struct cli_regime	 reg;
	cJSON			*out;
	uint32_t		 id;

	if ((rc = cli_parse(argc, argv, opts, &c, issues_usage, NULL, NULL)) >= 0)
		return rc;
	if (parse_time_opt("issues", "from", from, &lo.from_ms) ||
	    parse_time_opt("issues", "to", to, &lo.to_ms))
		return EXIT_USAGE;
	if (status && strcmp(status, "open") && strcmp(status, "pending") &&
	    strcmp(status, "fixed") && strcmp(status, "regressed")) {
		fprintf(stderr, "sloptimize issues: --status is open, pending, "
		    "fixed or regressed\n");
		return EXIT_USAGE;
	}
	if (fp && footprint_parse_hex(fp, strlen(fp), &id) != 0) {
		fprintf(stderr, "sloptimize issues: --fp takes an 8-hex "
		    "footprint id\n");
		return EXIT_USAGE;
	}
	lo.include_automated = automated;
	lo.occurrences_of = fp;
	if ((rc = fold_or_explain("issues", &c, &lo, nockpt ? FOLD_FRESH :
	    FOLD_RESUME | PROJECT_RESUME_ANY_TIMELINE, &l, &fi)) >= 0)
		return rc;
	note_partial(&fi);
	cli_regime_recent(fi.perf, &reg);
	q.type = type;
	q.status = status;
	if (c.json && fp == NULL)
		return write_json("issues", l, &fi, &q, 0, c.now_ms, &reg);
	if (fp != NULL) {
		char	hex[9];

		footprint_hex(id, hex);
		if ((out = ledger_issue_json(l, hex, c.now_ms)) == NULL) {
			fprintf(stderr, "sloptimize issues: no issue %s in "
			    "%s\n", hex, fi.perf);
			ledger_destroy(l);
			return EXIT_FINDINGS;
		}
	} else
		out = ledger_issues_json(l, &q, c.now_ms);
	if (out == NULL) {
		ledger_destroy(l);
		fprintf(stderr, "sloptimize issues: out of memory\n");
		return EXIT_FINDINGS;
	}
	if (c.json) {
		cli_add_source(out, &fi);
		cJSON_AddItemToObject(out, "regime", cli_regime_json(&reg));
		print_json(out);
	} else if (fp != NULL)
		print_issue_detail(out, &reg);
	else {
		const cJSON	*rows = cJSON_GetObjectItemCaseSensitive(out,
				    "issues");

		cli_regime_say(stdout, "note: ", &reg);
		if (cJSON_GetArraySize(rows) == 0)
			printf("no issues in %s\n", fi.perf);
		else
			print_issue_table(rows, 0);
	}
	cJSON_Delete(out);
	ledger_destroy(l);
	return EXIT_OK;
}

/* --- ranking by impact (ledger/impact.h, docs/ranking.md) -------------- */

struct ranked {
	cJSON		*row;
	struct impact	 im;
	double		 count;
	const char	*id;
};

static void
row_impact(const cJSON *row, struct impact *im)
{
	const cJSON		*w = cJSON_GetObjectItemCaseSensitive(row, "worst");
	double			 ago = jnum(row, "lastAgoMs");
	struct impact_of	 in;

	memset(&in, 0, sizeof(in));
	in.type = jstr(row, "type");
	in.status = jstr(row, "status");
	in.has_worst = cJSON_IsObject(w) && !isnan(jnum(w, "value"));
	in.worst = in.has_worst ? jnum(w, "value") : 0;
	in.unit = cJSON_IsObject(w) ? jstr(w, "unit") : NULL;
	in.count = isnan(jnum(row, "count")) ? 1 : (uint64_t)jnum(row, "count");
	in.age_ms = isnan(ago) ? IMPACT_NO_AGE : (int64_t)ago;
	impact_compute(&in, im);
}

static int
ranked_cmp(const void *pa, const void *pb)
{
	const struct ranked	*a = pa, *b = pb;
	int			 c = impact_cmp(&a->im, &b->im);

	if (c != 0)
		return c;
	if (a->count != b->count)
		return a->count > b->count ? -1 : 1;
	return strcmp(a->id, b->id);
}

/*
 * Sort the rows of `arr` by impact, most first, keep the first `keep`
 * (0: all) and, with `annotate`, add to each its "impact" {rank, tier,
 * score, excessMs}.  Rows that cannot be ranked (out of memory) keep the
 * catalogue's order.
 */
static void
rank_rows(cJSON *arr, int keep, int annotate)
{
	struct ranked	*r;
	cJSON		*row;
	int		 n = cJSON_GetArraySize(arr), i = 0;

	if (n < 1 || (r = calloc((size_t)n, sizeof(*r))) == NULL)
		return;
	cJSON_ArrayForEach(row, arr) {
		r[i].row = row;
		row_impact(row, &r[i].im);
		r[i].count = jnum(row, "count");
		r[i].id = jstr(row, "id");
		i++;
	}
	qsort(r, (size_t)n, sizeof(*r), ranked_cmp);
	/* detach all, put back in order; the ids point into the rows */
	for (i = 0; i < n; i++)
		cJSON_DetachItemViaPointer(arr, r[i].row);
	for (i = 0; i < n; i++) {
		if (keep > 0 && i >= keep) {
			cJSON_Delete(r[i].row);
			continue;
		}
		if (annotate) {
			cJSON	*o = cJSON_CreateObject();

			cJSON_AddNumberToObject(o, "rank", i + 1);
			cJSON_AddStringToObject(o, "tier",
			    impact_tier_name(r[i].im.tier));
			cJSON_AddNumberToObject(o, "score",
			    round(r[i].im.score * 10) / 10);
			cJSON_AddNumberToObject(o, "excessMs",
			    round(r[i].im.excess_ms * 10) / 10);
			cJSON_AddItemToObject(r[i].row, "impact", o);
		}
		cJSON_AddItemToArray(arr, r[i].row);
	}
	free(r);
}

/* --- report ----------------------------------------------------------- */

static const char report_usage[] =
"usage: sloptimize report [--json] [--project DIR]\n"
"The five issues that matter most now, each with its verdict, evidence\n"
"and the command that shows it: regressions first, then a usermark\n"
"pressed in the last 10 minutes, then by impact — how far past the frame\n"
"budget, how often, how recently (docs/ranking.md).\n"
"Exits 1 when any issue has regressed after a fix.\n";

int
verb_report(int argc, char **argv)
{
	struct cli_common		 c;
	struct ledger_opts	 lo = { 0 };
	struct ledger_query	 q = { .limit = 5 };
	struct ledger		*l;
	struct project_fold_info	 fi;
	struct cli_regime	 reg;
	cJSON			*out, *regd, *row;
	int			 rc, regressed;

	if ((rc = cli_parse(argc, argv, NULL, &c, report_usage, NULL, NULL)) >= 0)
		return rc;
	lo.from_ms = lo.to_ms = LEDGER_NO_TIME;
	if ((rc = fold_or_explain("report", &c, &lo, FOLD_FRESH, &l, &fi)) >= 0)
		return rc;
	note_partial(&fi);
	q.status = "regressed";
	q.limit = 0;
	regd = ledger_issues_json(l, &q, c.now_ms);
	regressed = cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(regd,
	    "issues"));
	cJSON_Delete(regd);
	q.status = NULL;
	q.limit = 0;
	if ((out = ledger_issues_json(l, &q, c.now_ms)) == NULL) {
		ledger_destroy(l);
		return EXIT_FINDINGS;
	}
	rank_rows(cJSON_GetObjectItemCaseSensitive(out, "issues"), 5, 1);
	cli_regime_recent(fi.perf, &reg);
	if (c.json) {
		cli_add_source(out, &fi);
		cJSON_AddItemToObject(out, "regime", cli_regime_json(&reg));
		print_json(out);
	} else {
		const cJSON	*rows = cJSON_GetObjectItemCaseSensitive(out,
				    "issues");
		const cJSON	*cnt = cJSON_GetObjectItemCaseSensitive(out,
				    "counts");
		int		 i = 0;

		printf("%.0f issues from %.0f incidents in %s", jnum(cnt,
		    "rows"), jnum(cnt, "incidents"), fi.perf);
		if (regressed)
			printf(" — %d regressed", regressed);
		printf("\n");
		cli_regime_say(stdout, "note: ", &reg);
		cJSON_ArrayForEach(row, rows) {
			char		 worst[32], last[32];
			const cJSON	*v = cJSON_GetObjectItemCaseSensitive(row,
					    "verdict");

			fmt_worst(row, worst, sizeof(worst));
			fmt_last(row, last, sizeof(last));
			printf("\n%d. %s %s ×%.0f %s, worst %s, last %s\n",
			    ++i, jstr(row, "id"), jstr(row, "type"),
			    jnum(row, "count"), jstr(row, "status"), worst,
			    last);
			printf("   %s\n", jstr(row, "key"));
			if (cJSON_IsObject(v))
				printf("   %s/%s: %s\n", jstr(v, "guess"),
				    jstr(v, "confidence"), jstr(v, "evidence"));
			/* the latest fix's verdict on its windows */
			{
				const cJSON	*fx = NULL, *f;

				cJSON_ArrayForEach(f,
				    cJSON_GetObjectItemCaseSensitive(row,
				    "fixes"))
					fx = f;
				if (fx != NULL) {
					printf("   fix %s \"%s\": ",
					    jstr(fx, "id"), jstr(fx, "title"));
					print_judgement(fx, "");
				}
			}
			printf("   sloptimize issues --fp %s\n", jstr(row, "id"));
		}
	}
	cJSON_Delete(out);
	ledger_destroy(l);
	return regressed ? EXIT_FINDINGS : EXIT_OK;
}

/* --- history ---------------------------------------------------------- */

static const char history_usage[] =
"usage: sloptimize history [--buckets N] [--include-automated]\n"
"                          [--no-checkpoint] [--json] [--project DIR]\n"
"The timeline: the ledger's span in N equal buckets (default 24) with the\n"
"medians of the heartbeats, the hitch count and worst hitch, and one\n"
"window per build.  '-' marks a bucket without evidence.\n";

/*
 * A window's or bucket's regime in a column: "hw", "sw!" (a software
 * renderer: its timings are not to be trusted), "unk", "-" (no
 * heartbeat), with "+" when heartbeats of another regime were left out
 * of its timings.  *software and *mixed are set when so.
 */
static void
fmt_regime(const cJSON *b, char *out, size_t cap, int *software, int *mixed)
{
	const char	*r = cJSON_GetStringValue(
			    cJSON_GetObjectItemCaseSensitive(b, "regime"));
	const cJSON	*rs = cJSON_GetObjectItemCaseSensitive(b, "regimes");
	double		 own, all;

	if (r == NULL) {
		snprintf(out, cap, "-");
		return;
	}
	own = jnum(rs, r);
	all = jnum(rs, "hardware") + jnum(rs, "software") + jnum(rs, "unknown");
	if (strcmp(r, "software") == 0)
		*software = 1;
	if (!isnan(own) && !isnan(all) && all > own)
		*mixed = 1;
	snprintf(out, cap, "%s%s", strcmp(r, "hardware") == 0 ? "hw" :
	    strcmp(r, "software") == 0 ? "sw!" : "unk",
	    !isnan(own) && !isnan(all) && all > own ? "+" : "");
}

static void
print_window_row(const char *label, const cJSON *b, int *software, int *mixed)
{
	char	p95[32], med[32], calls[32], tris[32], prog[32], hit[32],
		worst[32], reg[16], iv[80];
	const cJSON	*it;

	fmt_num(jnum(b, "p95Ms"), "", p95, sizeof(p95));
	fmt_num(jnum(b, "medianMs"), "", med, sizeof(med));
	fmt_num(jnum(b, "calls"), "", calls, sizeof(calls));
	fmt_num(jnum(b, "triangles"), "", tris, sizeof(tris));
	fmt_num(jnum(b, "programs"), "", prog, sizeof(prog));
	fmt_num(jnum(b, "hitches"), "", hit, sizeof(hit));
	fmt_num(jnum(b, "worstHitchMs"), "", worst, sizeof(worst));
	fmt_regime(b, reg, sizeof(reg), software, mixed);
	printf("%-24.24s  %7s  %7s  %6s  %9s  %5s  %7s  %7s  %-6s", label, p95,
	    med, calls, tris, prog, hit, worst, reg);
	/* a build's window: the p95's noise interval and its play time */
	if (cJSON_GetObjectItemCaseSensitive(b, "p95Interval") != NULL) {
		fmt_interval(cJSON_GetObjectItemCaseSensitive(b,
		    "p95Interval"), iv, sizeof(iv));
		printf(" p95%s", *iv ? iv : " [too few heartbeats]");
		if (!isnan(jnum(b, "playSeconds")))
			printf(" over %.0f s of play", jnum(b, "playSeconds"));
	}
	cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(b, "builds"))
		printf(" %s", cJSON_GetStringValue(it));
	printf("\n");
}

int
verb_history(int argc, char **argv)
{
	struct cli_common		 c;
	const char		*nb = NULL;
	int			 automated = 0, nockpt = 0, rc, buckets = 24;
	struct cli_opt		 opts[] = {
		{ "buckets", OPT_ARG, &nb },
		{ "include-automated", OPT_FLAG, &automated },
		{ "no-checkpoint", OPT_FLAG, &nockpt },
		{ NULL, 0, NULL }
	};
	struct ledger_opts	 lo = { 0 };
	struct ledger		*l;
	struct project_fold_info	 fi;
	cJSON			*out;
	const cJSON		*b;

	if ((rc = cli_parse(argc, argv, opts, &c, history_usage, NULL, NULL)) >= 0)
		return rc;
	if (nb != NULL) {
		char	*end;
		long	 v = strtol(nb, &end, 10);

		if (*nb == '\0' || *end != '\0' || v < 1 || v > 10000) {
			fprintf(stderr, "sloptimize history: --buckets is 1 "
			    "to 10000\n");
			return EXIT_USAGE;
		}
		buckets = (int)v;
	}
	lo.from_ms = lo.to_ms = LEDGER_NO_TIME;
	lo.include_automated = automated;
	lo.want_timeline = 1;
	if ((rc = fold_or_explain("history", &c, &lo, nockpt ? FOLD_FRESH :
	    FOLD_RESUME, &l, &fi)) >= 0)
		return rc;
	note_partial(&fi);
	if (c.json)
		return write_json("history", l, &fi, NULL, buckets, c.now_ms,
		    NULL);
	if ((out = ledger_history_json(l, buckets, c.now_ms)) == NULL) {
		ledger_destroy(l);
		fprintf(stderr, "sloptimize history: out of memory\n");
		return EXIT_FINDINGS;
	}
	if (c.json) {
		cli_add_source(out, &fi);
		print_json(out);
	} else {
		int	software = 0, mixed = 0;

		printf("%-24s  %7s  %7s  %6s  %9s  %5s  %7s  %7s  %-6s %s\n",
		    "BUCKET", "P95", "MEDIAN", "CALLS", "TRIS", "PROG",
		    "HITCHES", "WORST", "REGIME", "BUILDS");
		cJSON_ArrayForEach(b, cJSON_GetObjectItemCaseSensitive(out,
		    "buckets"))
			print_window_row(jstr(b, "from"), b, &software, &mixed);
		printf("\n%-24s\n", "PER BUILD");
		cJSON_ArrayForEach(b, cJSON_GetObjectItemCaseSensitive(out,
		    "builds"))
			print_window_row(jstr(b, "build"), b, &software, &mixed);
		if (software)
			printf("\nsw!: timings from a software renderer "
			    "(SwiftShader, llvmpipe): frame times not to be "
			    "trusted, and no fix is judged on them; counters "
			    "are.\n");
		if (mixed)
			printf("%s+: heartbeats of another regime were left out "
			    "of the timings (never averaged in); the counters "
			    "count them.\n", software ? "" : "\n");
	}
	cJSON_Delete(out);
	ledger_destroy(l);
	return EXIT_OK;
}

/* --- fix -------------------------------------------------------------- */

static const char fix_usage[] =
"usage: sloptimize fix [propose] --title TEXT [--footprints ID,…]\n"
"                      [--issue TEXT] [--solution TEXT] [--commit SHA]\n"
"                      [--files PATH,…] [--before W] [--after W] [--force]\n"
"                      [--json] [--project DIR]\n"
"       sloptimize fix merge|reject PROPOSAL-ID [--project DIR]\n"
"Append a fix (or a proposal, or a decision on one) to fixes.jsonl.\n"
"Without --after the fix is pending until a build that started after it\n"
"has run: the fold then measures that build as its after window, and\n"
"judges it fixed or regressed.  'before' is by default the latest build\n"
"with heartbeats (the one that ran before the change).  A window W is a\n"
"build name or <ISO>..<ISO>; give --after only for a build that ran the\n"
"fix.  Footprints must be in the ledger (the nearest known ids are named\n"
"otherwise); --force records unknown ones anyway.\n";

static cJSON *
split_list(const char *s)
{
	cJSON		*a = cJSON_CreateArray();
	const char	*p = s;

	while (a != NULL && *p != '\0') {
		const char	*e = strchr(p, ',');
		size_t		 n = e ? (size_t)(e - p) : strlen(p);
		char		*item = strndup(p, n);

		if (item != NULL && *item != '\0')
			cJSON_AddItemToArray(a, cJSON_CreateString(item));
		free(item);
		p += n;
		if (*p == ',')
			p++;
	}
	return a;
}

/*
 * A window `sloptimize fix` measured, with what a verdict on it will
 * need (docs/json.md, "Fix verdicts"): its p95 and noise interval, its
 * exposure, and its regime — said plainly when it is a software one.
 */
static void
print_fix_window(const char *name, const cJSON *w)
{
	const char	*r;
	char		 p95[32], iv[80];

	if (!cJSON_IsObject(w))
		return;
	r = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(w, "regime"));
	fmt_num(jnum(w, "p95Ms"), "ms", p95, sizeof(p95));
	fmt_interval(cJSON_GetObjectItemCaseSensitive(w, "p95Interval"), iv,
	    sizeof(iv));
	printf("  %-6s %s: p95 %s%s, %.0f heartbeats", name,
	    cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(w, "build")) ?
	    jstr(w, "build") : "(a time range)", p95,
	    *iv ? iv : " (too few heartbeats for a noise interval)",
	    jnum(w, "heartbeats"));
	if (!isnan(jnum(w, "playSeconds")))
		printf(", %.0f s of play", jnum(w, "playSeconds"));
	printf(", regime %s\n", r ? r : "-");
	if (r != NULL && strcmp(r, "software") == 0)
		printf("         timings from a software renderer (SwiftShader, "
		    "llvmpipe) are not evidence: no verdict will be given on "
		    "them (counters are still compared)\n");
}

int
verb_fix(int argc, char **argv)
{
	struct cli_common	 c;
	const char		*fps = NULL, *files = NULL;
	char			 reason[PROJECT_WHY_MAX];
	const char		*pos[2];
	int			 npos = 2, rc, force = 0;
	struct cli_fix		 f = { .status = "applied" };
	struct cli_opt		 opts[] = {
		{ "title", OPT_ARG, &f.title }, { "footprints", OPT_ARG, &fps },
		{ "issue", OPT_ARG, &f.issue },
		{ "solution", OPT_ARG, &f.solution },
		{ "commit", OPT_ARG, &f.commit }, { "files", OPT_ARG, &files },
		{ "before", OPT_ARG, &f.before }, { "after", OPT_ARG, &f.after },
		{ "force", OPT_FLAG, &force },
		{ NULL, 0, NULL }
	};
	cJSON			*rec = NULL, *fpa = NULL, *fla = NULL;
	const char		*mode = "applied";

	if ((rc = cli_parse(argc, argv, opts, &c, fix_usage, pos, &npos)) >= 0)
		return rc;
	if (npos > 0) {
		if (strcmp(pos[0], "propose") == 0 && npos == 1)
			mode = "proposed";
		else if ((strcmp(pos[0], "merge") == 0 ||
		    strcmp(pos[0], "reject") == 0) && npos == 2)
			mode = pos[0][0] == 'm' ? "merged" : "rejected";
		else {
			fputs(fix_usage, stderr);
			return EXIT_USAGE;
		}
	}
	if (strcmp(mode, "merged") == 0 || strcmp(mode, "rejected") == 0) {
		if ((rec = cJSON_CreateObject()) == NULL)
			return EXIT_FINDINGS;
		cJSON_AddStringToObject(rec, "type", "fix");
		cJSON_AddStringToObject(rec, "status", mode);
		cJSON_AddStringToObject(rec, "ref", pos[1]);
		rc = project_fix_append(c.project, rec, NULL, reason,
		    sizeof(reason));
		if (rc != 0) {
			cJSON_Delete(rec);
			rec = NULL;
		}
	} else {
		if (f.title == NULL) {
			fprintf(stderr, "sloptimize fix: --title is "
			    "required\n%s", fix_usage);
			return EXIT_USAGE;
		}
		f.status = mode;
		f.force = force;
		f.footprints = fpa = split_list(fps ? fps : "");
		if (files)
			f.files = fla = split_list(files);
		rc = cli_fix_record(c.project, &f, &rec, reason,
		    sizeof(reason));
		cJSON_Delete(fpa);
		cJSON_Delete(fla);
	}
	if (rc != 0) {
		fprintf(stderr, "sloptimize fix: %s\n", reason);
		return rc == -EINVAL ? EXIT_USAGE : rc == -PROJECT_ENOTREG ?
		    EXIT_NOTHING : EXIT_FINDINGS;
	}
	if (c.json)
		print_json(rec);
	else if (strcmp(mode, "applied") == 0) {
		printf("recorded fix %s in %s/.sloptimize/fixes.jsonl: %s\n",
		    jstr(rec, "id"), c.project, f.after ? "judged on the "
		    "window given" : "pending until a build after it has run");
		print_fix_window("before", cJSON_GetObjectItemCaseSensitive(rec,
		    "before"));
		print_fix_window("after", cJSON_GetObjectItemCaseSensitive(rec,
		    "after"));
	} else
		printf("recorded %s %s in %s/.sloptimize/fixes.jsonl\n", mode,
		    jstr(rec, strcmp(mode, "proposed") == 0 ? "id" : "ref"),
		    c.project);
	cJSON_Delete(rec);
	return EXIT_OK;
}

/* --- the daemon's state directory ------------------------------------- */

/* The project's state directory (the daemon's), or -errno. */
static int
state_dir_of(const char *project, char *dir, size_t cap)
{
	char	real[PATH_MAX];

	if (realpath(project, real) == NULL)
		return -errno;
	return statedir_resolve(real, NULL, dir, cap);
}

/* A JSON file of the project's state directory, or NULL. */
static cJSON *
state_file(const char *project, const char *name)
{
	char	dir[PATH_MAX], path[PATH_MAX + 64], buf[8192];
	size_t	n;

	if (state_dir_of(project, dir, sizeof(dir)) != 0 ||
	    statedir_path(dir, name, path, sizeof(path)) != 0 ||
	    statedir_read(path, buf, sizeof(buf), &n) != 0)
		return NULL;
	return cJSON_ParseWithLength(buf, n);
}

/* The fix loop's automation level the daemon keeps ("off" if unset). */
static void
fix_loop_level(const char *project, char *out, size_t cap)
{
	char	dir[PATH_MAX];

	if (state_dir_of(project, dir, sizeof(dir)) != 0 ||
	    statedir_settings_read(dir, out, cap) != 0)
		snprintf(out, cap, "off");
}

/* --- hook-status ------------------------------------------------------ */

static const char hook_usage[] =
"usage: sloptimize hook-status [--json] [--project DIR]\n"
"At most five lines for an agent's prompt hook: the game's measurement\n"
"(its regime — software: timings not trusted —, frame p95 against its\n"
"budget, the budgets breached), regressions, and issues seen in the last\n"
"30 minutes ranked by impact (docs/ranking.md), with the last hitch's\n"
"class and the command that shows each.  Silent, exit 0, when calm: no\n"
"regression, no issue in the last 30 minutes, no budget breached in a\n"
"profile of the last 30 minutes, and a readable budgets file; or when\n"
"there is no ledger.  Exit 4 with the reason on stderr when the ledger\n"
"cannot be read (e.g. it is not a regular file).\n";

#define HOOK_RECENT_MS	(30 * 60 * 1000)

/* The game's measurement, for the hook: profile.json judged against the
 * budgets file, the same rule as `check` (project/budgets.h). */
struct hook_perf {
	cJSON			*profile;	/* NULL: none, or not fresh */
	int64_t			 age_ms;
	struct budgets		 b;
	struct budget_judgement	 j;
	char			 budgets_error[BUDGETS_WHY_MAX];
};

static void
hook_perf_read(const char *project, int64_t now_ms, struct hook_perf *hp)
{
	char	why[512];
	int64_t	at_ms;
	int	found = 0;

	memset(hp, 0, sizeof(*hp));
	if (budgets_read(project, &hp->b, &found, hp->budgets_error,
	    sizeof(hp->budgets_error)) != 0) {
		char	*nl = strchr(hp->budgets_error, '\n');

		if (nl != NULL)		/* the first fault; check lists all */
			*nl = '\0';
		memset(&hp->b, 0, sizeof(hp->b));
	} else
		hp->budgets_error[0] = '\0';
	if (profile_read(project, &hp->profile, &at_ms, why, sizeof(why)) != 0)
		return;
	hp->age_ms = now_ms - at_ms;
	if (hp->age_ms > HOOK_RECENT_MS) {
		/* the game has not run lately: its old numbers are not news */
		cJSON_Delete(hp->profile);
		hp->profile = NULL;
		return;
	}
	budgets_judge(&hp->b, hp->profile, 0, &hp->j);
}

/* Something in the measurement needs saying. */
static int
hook_perf_loud(const struct hook_perf *hp)
{
	return hp->budgets_error[0] != '\0' || (hp->profile != NULL &&
	    hp->j.breached_error + hp->j.breached_warn > 0);
}

/* "software: timings not trusted · frame p95 34.2ms (budget 16.7ms not
 * judged) · over budget: draw_calls 940/300 (3.1×)" */
static void
hook_perf_line(const struct hook_perf *hp, char *out, size_t cap)
{
	const struct budget_result	*fr = &hp->j.r[BUDGET_FRAME_MS_P95];
	const struct budget		*fb = &hp->b.b[BUDGET_FRAME_MS_P95];
	double				 p95 = jnum(cJSON_GetObjectItemCaseSensitive(
					    hp->profile, "frame"), "p95Ms");
	size_t				 o = 0;
	int				 m, n = 0;
	char				 age[32];

#define PUT(...) do { if (o < cap) o += (size_t)snprintf(out + o, cap - o, \
		    __VA_ARGS__); } while (0)
	format_ago(hp->age_ms, age, sizeof(age));
	PUT("sloptimize: the game (profile %s", age);
	if (cJSON_IsString(cJSON_GetObjectItemCaseSensitive(hp->profile,
	    "build")))
		PUT(", build %s", jstr(hp->profile, "build"));
	PUT("): ");
	if (strcmp(hp->j.regime, "software") == 0)
		PUT("software: timings not trusted");
	else
		PUT("regime %s", hp->j.regime);
	if (isnan(p95))
		PUT(" · frame p95 not measured");
	else if (!fb->declared)
		PUT(" · frame p95 %.1fms (no budget)", p95);
	else if (fr->status == BUDGET_NOT_JUDGED &&
	    strcmp(hp->j.regime, "software") == 0)
		PUT(" · frame p95 %.1fms (budget %.1fms not judged)", p95,
		    fb->max);
	else if (fr->status == BUDGET_NOT_JUDGED)
		PUT(" · frame p95 %.1fms (budget %.1fms not judged: %s)", p95,
		    fb->max, fr->why);
	else if (fr->status == BUDGET_BREACHED)
		PUT(" · frame p95 %.1fms, budget %.1fms: over by %.1f×%s", p95,
		    fb->max, fr->ratio, fb->level == BUDGET_WARN ? " (warn)" :
		    "");
	else
		PUT(" · frame p95 %.1fms, budget %.1fms: inside", p95,
		    fb->max);
	for (m = 0; m < BUDGET_N; m++) {
		const struct budget_result	*r = &hp->j.r[m];
		enum budget_metric		 me = (enum budget_metric)m;

		if (r->status != BUDGET_BREACHED || me == BUDGET_FRAME_MS_P95)
			continue;
		if (budgets_is_timing(me))
			PUT("%s%s %.1fms/%.1fms", n++ ? ", " : " · over budget: ",
			    budgets_name(me), r->value, hp->b.b[m].max);
		else
			PUT("%s%s %.0f/%.0f", n++ ? ", " : " · over budget: ",
			    budgets_name(me), r->value, hp->b.b[m].max);
		if (isfinite(r->ratio))
			PUT(" (%.1f×%s)", r->ratio, hp->b.b[m].level ==
			    BUDGET_WARN ? ", warn" : "");
	}
	if (hp->budgets_error[0] != '\0')
		PUT(" · %s is not valid: %s", BUDGETS_FILE, hp->budgets_error);
	if (hook_perf_loud(hp))
		PUT(" → sloptimize check");
#undef PUT
}

static cJSON *
hook_perf_json(const struct hook_perf *hp)
{
	cJSON	*o = cJSON_CreateObject(), *a;
	int	 m;

	if (hp->budgets_error[0] != '\0')
		cJSON_AddStringToObject(o, "budgetsError", hp->budgets_error);
	if (hp->profile == NULL) {
		cJSON_AddNullToObject(o, "regime");
		return o;
	}
	cJSON_AddStringToObject(o, "regime", hp->j.regime);
	cJSON_AddBoolToObject(o, "timingTrusted",
	    strcmp(hp->j.regime, "software") != 0);
	cJSON_AddNumberToObject(o, "ageMs", (double)hp->age_ms);
	if (!isnan(jnum(cJSON_GetObjectItemCaseSensitive(hp->profile, "frame"),
	    "p95Ms")))
		cJSON_AddNumberToObject(o, "frameP95Ms", jnum(
		    cJSON_GetObjectItemCaseSensitive(hp->profile, "frame"),
		    "p95Ms"));
	if (hp->b.b[BUDGET_FRAME_MS_P95].declared)
		cJSON_AddNumberToObject(o, "frameBudgetMs",
		    hp->b.b[BUDGET_FRAME_MS_P95].max);
	a = cJSON_AddArrayToObject(o, "breached");
	for (m = 0; m < BUDGET_N; m++) {
		const struct budget_result	*r = &hp->j.r[m];
		cJSON				*it;

		if (r->status != BUDGET_BREACHED)
			continue;
		it = cJSON_CreateObject();
		cJSON_AddStringToObject(it, "key",
		    budgets_key((enum budget_metric)m));
		cJSON_AddNumberToObject(it, "value", r->value);
		cJSON_AddNumberToObject(it, "max", hp->b.b[m].max);
		cJSON_AddStringToObject(it, "level",
		    budgets_level_name(hp->b.b[m].level));
		cJSON_AddItemToArray(a, it);
	}
	return o;
}

/* The most recent hitch row of the catalogue, or NULL. */
static const cJSON *
last_hitch(const cJSON *issues)
{
	const cJSON	*row, *best = NULL;
	double		 ago, best_ago = INFINITY;

	cJSON_ArrayForEach(row, issues) {
		if (strcmp(jstr(row, "type"), "hitch") != 0)
			continue;
		ago = jnum(row, "lastAgoMs");
		if (!isnan(ago) && ago < best_ago) {
			best_ago = ago;
			best = row;
		}
	}
	return best;
}

int
verb_hook_status(int argc, char **argv)
{
	struct cli_common		 c;
	struct ledger_opts	 lo = { 0 };
	struct ledger		*l;
	struct project_fold_info	 fi;
	struct hook_perf	 hp;
	cJSON			*out, *row, *pick;
	const cJSON		*lh;
	int			 rc, regressed = 0, recent = 0, lines = 0;
	int			 loud;
	char			 loop[16], hitch[160] = "";

	if ((rc = cli_parse(argc, argv, NULL, &c, hook_usage, NULL, NULL)) >= 0)
		return rc;
	lo.from_ms = lo.to_ms = LEDGER_NO_TIME;
	if ((rc = project_fold(c.project, &lo, &l, &fi)) == -ENOENT)
		return EXIT_OK;		/* nothing running: stay silent */
	if (rc != 0) {
		/* something is wrong with the ledger itself: that needs
		 * attention, and must never hang the prompt */
		fprintf(stderr, "sloptimize hook-status: cannot read %s: %s\n",
		    fi.failed ? fi.failed : fi.perf, project_strerror(rc));
		return EXIT_NOTHING;
	}
	if ((out = ledger_issues_json(l, NULL, c.now_ms)) == NULL ||
	    (pick = cJSON_CreateArray()) == NULL) {
		cJSON_Delete(out);
		ledger_destroy(l);
		return EXIT_OK;
	}
	/* regressions, and what happened lately, ranked by impact */
	cJSON_ArrayForEach(row, cJSON_GetObjectItemCaseSensitive(out,
	    "issues")) {
		double	ago = jnum(row, "lastAgoMs");

		if (strcmp(jstr(row, "status"), "regressed") == 0)
			regressed++;
		else if (!isnan(ago) && ago <= HOOK_RECENT_MS)
			recent++;
		else
			continue;
		cJSON_AddItemToArray(pick, cJSON_Duplicate(row, 1));
	}
	rank_rows(pick, 0, c.json);
	hook_perf_read(c.project, c.now_ms, &hp);
	loud = hook_perf_loud(&hp);
	if ((lh = last_hitch(cJSON_GetObjectItemCaseSensitive(out,
	    "issues"))) != NULL) {
		char		 ago[32];
		const cJSON	*v = cJSON_GetObjectItemCaseSensitive(lh,
				    "verdict");

		format_ago((int64_t)jnum(lh, "lastAgoMs"), ago, sizeof(ago));
		snprintf(hitch, sizeof(hitch), "last hitch %s/%s %s (fp %s)",
		    cJSON_IsObject(v) ? jstr(v, "guess") : "-",
		    cJSON_IsObject(v) ? jstr(v, "confidence") : "-", ago,
		    jstr(lh, "id"));
	}
	fix_loop_level(c.project, loop, sizeof(loop));
	if (regressed + recent > 0 || loud) {
		if (c.json) {
			cJSON	*o = cJSON_CreateObject();

			cJSON_AddStringToObject(o, "loop", loop);
			cJSON_AddNumberToObject(o, "regressed", regressed);
			cJSON_AddNumberToObject(o, "recent", recent);
			cJSON_AddItemToObject(o, "perf", hook_perf_json(&hp));
			if (lh != NULL) {
				const cJSON	*v = cJSON_GetObjectItemCaseSensitive(
						    lh, "verdict");
				cJSON		*h = cJSON_AddObjectToObject(o,
						    "lastHitch");

				cJSON_AddStringToObject(h, "id", jstr(lh, "id"));
				cJSON_AddNumberToObject(h, "agoMs",
				    jnum(lh, "lastAgoMs"));
				if (cJSON_IsObject(v))
					cJSON_AddItemToObject(h, "verdict",
					    cJSON_Duplicate(v, 1));
			}
			cJSON_AddItemToObject(o, "issues", pick);
			pick = NULL;
			print_json(o);
			cJSON_Delete(o);
		} else {
			char	perf[1024];
			int	rows = 4;

			/* the game's line first, when there is a recent
			 * measurement or a budgets file to fix */
			if (hp.profile != NULL || hp.budgets_error[0] != '\0') {
				if (hp.profile != NULL) {
					hook_perf_line(&hp, perf, sizeof(perf));
					printf("%s\n", perf);
				} else
					printf("sloptimize: %s is not valid: %s → "
					    "sloptimize check\n", BUDGETS_FILE,
					    hp.budgets_error);
				rows = 3;
			}
			if (regressed + recent > 0)
				printf("sloptimize: %d regressed, %d issues seen "
				    "in the last 30 min (sloptimize issues for "
				    "all)%s%s%s%s\n", regressed, recent,
				    *hitch ? "; " : "", hitch,
				    strcmp(loop, "off") ? "; fix loop: " : "",
				    strcmp(loop, "off") ? loop : "");
			else if (*hitch)
				printf("sloptimize: %s\n", hitch);
			cJSON_ArrayForEach(row, pick) {
				char		 worst[32], last[32];
				const cJSON	*v;

				if (++lines > rows)
					break;
				v = cJSON_GetObjectItemCaseSensitive(row,
				    "verdict");
				fmt_worst(row, worst, sizeof(worst));
				fmt_last(row, last, sizeof(last));
				printf("  %s %s %s ×%.0f worst %s %s, last %s: "
				    "sloptimize issues --fp %s\n",
				    jstr(row, "status"), jstr(row, "id"),
				    jstr(row, "type"), jnum(row, "count"),
				    worst, cJSON_IsObject(v) ?
				    jstr(v, "guess") : "-", last,
				    jstr(row, "id"));
			}
		}
	}
	cJSON_Delete(hp.profile);
	cJSON_Delete(pick);
	cJSON_Delete(out);
	ledger_destroy(l);
	return EXIT_OK;
}

/* --- doctor ----------------------------------------------------------- */

static const char doctor_usage[] =
"usage: sloptimize doctor [--json] [--project DIR]\n"
"Checks the environment: the ledger and what the fold skipped, which\n"
"file-watch backend the daemon will use and why, the notification server,\n"
"and the limits sloptimize states; with a daemon serving the project, its\n"
"wakes (said, held back, stored) and desktop notifications (shown, sent,\n"
"replaced, pending, dropped) from its /status.  Exits 1 when something\n"
"needs fixing, 4 when there is no ledger.\n";

struct doc {
	cJSON	*checks;
	int	 problems;
	int	 json;
};

static cJSON *
check(struct doc *d, const char *name, int ok, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* One check; returns its JSON object (to add data to), owned by d. */
static cJSON *
check(struct doc *d, const char *name, int ok, const char *fmt, ...)
{
	char	msg[1024];
	va_list	ap;
	cJSON	*o = cJSON_CreateObject();

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	cJSON_AddStringToObject(o, "check", name);
	cJSON_AddStringToObject(o, "result", ok > 0 ? "ok" : ok == 0 ?
	    "problem" : "note");
	cJSON_AddStringToObject(o, "detail", msg);
	cJSON_AddItemToArray(d->checks, o);
	if (ok == 0)
		d->problems++;
	if (!d->json)
		printf("%-7s %-14s %s\n", ok > 0 ? "ok" : ok == 0 ? "PROBLEM" :
		    "note", name, msg);
	return o;
}

/* What the running daemon says of its wakes and desktop notifications,
 * from its /status (the counts only it knows). */
static void
daemon_wakes(struct doc *d, const cJSON *st)
{
	const cJSON		*n, *ds;
	cJSON			*o;

	n = cJSON_GetObjectItemCaseSensitive(st, "notifier");
	if (!cJSON_IsObject(n)) {
		check(d, "daemon status", 0, "the daemon's status has no "
		    "notifier part");
		return;
	}
	o = check(d, "wakes", 1, "%.0f lines said; %.0f records held back "
	    "(%.0f not said yet), %.0f waiting for the catch-up line; last "
	    "said %s, stored %s%s", jnum(n, "wakes"), jnum(n, "heldBack"),
	    jnum(n, "heldPending"), jnum(n, "catchupPending"),
	    jstr(n, "lastSaid"), jstr(n, "stored"),
	    jnum(n, "storeErrors") > 0 ? " (the state's wakes could not always be "
	    "written)" : "");
	cJSON_AddItemToObject(o, "data", cJSON_Duplicate(n, 1));
	ds = cJSON_GetObjectItemCaseSensitive(n, "desktopStats");
	if (cJSON_IsObject(ds)) {
		const char	*state = jstr(n, "desktop");
		int		 ok = strcmp(state, "ok") == 0 ||
				    strncmp(state, "disabled", 8) == 0;

		o = check(d, "desktop", ok ? 1 : -1, "%s, %s: %.0f wakes — "
		    "%.0f shown in %.0f bubbles (%.0f replaced in place), "
		    "%.0f pending, %.0f dropped", jstr(n, "desktopBackend"),
		    state, jnum(ds, "wakes"), jnum(ds, "shown"),
		    jnum(ds, "sent"), jnum(ds, "replaced"),
		    jnum(ds, "pending"), jnum(ds, "dropped"));
		cJSON_AddItemToObject(o, "data", cJSON_Duplicate(ds, 1));
	}
}

/* The daemon's sink, from its /status's `sink` (docs/team.md). */
static void
doctor_sink(struct doc *d, const cJSON *s)
{
	const char	*state, *last, *ok_at, *err_at;

	if (s == NULL) {
		check(d, "sink", -1, "the daemon's status has no sink part "
		    "(an older daemon?)");
		return;
	}
	if (cJSON_IsNull(s)) {
		check(d, "sink", 1, "off: nothing leaves this machine "
		    "(--sink URL sends every record to a team ClickHouse)");
		return;
	}
	state = jstr(s, "state");
	last = jstr(s, "lastError");
	ok_at = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(s,
	    "lastOkAt"));
	err_at = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(s,
	    "lastErrorAt"));
	if (strcmp(state, "refused") == 0 || strcmp(state, "unavailable") == 0)
		check(d, "sink", 0, "%s: %s", jstr(s, "url"), last);
	else if (err_at != NULL && (ok_at == NULL || strcmp(err_at, ok_at) > 0))
		check(d, "sink", 0, "%s: failing since %s (%s); %.0f bytes "
		    "wait in the ledger, nothing is lost", jstr(s, "url"),
		    err_at, last, jnum(s, "lagBytes"));
	else
		check(d, "sink", 1, "%s, database %s as machine %s: %.0f rows "
		    "sent, %.0f bytes behind", jstr(s, "url"),
		    jstr(s, "database"), jstr(s, "machine"), jnum(s, "rows"),
		    jnum(s, "lagBytes"));
}

/*
 * What only the running daemon knows, from one GET of its /status: the
 * watcher it really uses and why, read faults by their cause, cursor
 * saves that fail, what it said and held back, its desktop notifier's
 * counts, its sink.  Each is said here as well as in the daemon's log,
 * because doctor is where a user looks.
 */
static void
daemon_checks(struct doc *d, const char *project)
{
	static const char *const files[] = { "perf", "fixes" };
	cJSON		*st = NULL;
	const cJSON	*f;
	const char	*v, *why;
#define SVAL(o, k)	(cJSON_GetStringValue( \
			    cJSON_GetObjectItemCaseSensitive((o), (k))) ? \
			    cJSON_GetStringValue( \
			    cJSON_GetObjectItemCaseSensitive((o), (k))) : "")
	char		 err[512];
	size_t		 i;

	if (cli_daemon_get(project, "/api/sloptimize/status", 2000, &st, err,
	    sizeof(err)) != 0) {
		check(d, "daemon", 0, "%s", err);
		return;
	}
	for (i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		f = cJSON_GetObjectItemCaseSensitive(
		    cJSON_GetObjectItemCaseSensitive(st, "files"), files[i]);
		if (f == NULL)
			continue;
		why = jstr(f, "backendWhy");
		if (strcmp(jstr(f, "backend"), "poll") == 0 &&
		    strncmp(why, "forced", 6) != 0)
			check(d, "watcher", strstr(why, "exhausted") ? 0 : -1,
			    "the daemon polls %s.jsonl: %s", files[i], why);
		if ((v = SVAL(f, "error"))[0] != '\0')
			check(d, "reading", 0, "the daemon cannot read %s: %s",
			    jstr(f, "path"), v);
		if ((v = SVAL(f, "cursorSaveError"))[0] != '\0')
			check(d, "cursor", 0, "the daemon cannot save its %s "
			    "cursor in %s: %s (after a restart it reads that "
			    "file again from the last saved point)", files[i],
			    jstr(st, "stateDir"), v);
	}
	daemon_wakes(d, st);
	doctor_sink(d, cJSON_GetObjectItemCaseSensitive(st, "sink"));
	cJSON_Delete(st);
#undef SVAL
}

/*
 * The budgets file, the last profile and the daemon's writer of it
 * (docs/budgets.md): what `check` would stand on.
 */
static void
doctor_budgets(struct doc *d, const char *project, int64_t now_ms)
{
	struct budgets	 b;
	char		 why[BUDGETS_WHY_MAX], list[512] = "", age[32];
	cJSON		*p = NULL, *st = NULL, *o;
	const cJSON	*pw;
	int64_t		 at_ms;
	int		 found = 0, rc, m;
	size_t		 n = 0;

	rc = budgets_read(project, &b, &found, why, sizeof(why));
	if (rc != 0) {
		char	*line, *save = NULL;

		check(d, "budgets", 0, "%s/%s is not valid: `check` exits 2 "
		    "until it is fixed:", project, BUDGETS_FILE);
		for (line = strtok_r(why, "\n", &save); line != NULL;
		    line = strtok_r(NULL, "\n", &save))
			check(d, "budgets", -1, "%s", line);
	} else if (b.ndeclared == 0)
		check(d, "budgets", -1, "none declared (%s %s): `check` "
		    "exits 0 with a warning and judges nothing",
		    BUDGETS_FILE, found ? "declares none" : "does not exist");
	else {
		for (m = 0; m < BUDGET_N && n < sizeof(list); m++)
			if (b.b[m].declared)
				n += (size_t)snprintf(list + n, sizeof(list) -
				    n, "%s%s ≤ %g%s (%s)", n ? ", " : "",
				    budgets_name((enum budget_metric)m),
				    b.b[m].max,
				    budgets_unit((enum budget_metric)m),
				    budgets_level_name(b.b[m].level));
		check(d, "budgets", 1, "%d declared in %s: %s", b.ndeclared,
		    BUDGETS_FILE, list);
	}
	if ((rc = profile_read(project, &p, &at_ms, why, sizeof(why))) != 0)
		check(d, "profile", rc == -ENOENT ? -1 : 0, "%s%s", why,
		    rc == -ENOENT ? ": the daemon writes it from the game's "
		    "heartbeats; `check` exits 4 without it" : "");
	else {
		const char	*regime = cJSON_GetStringValue(
				    cJSON_GetObjectItemCaseSensitive(p, "regime"));

		format_ago(now_ms - at_ms, age, sizeof(age));
		o = check(d, "profile", now_ms - at_ms > CHECK_MAX_AGE_MS ?
		    -1 : 1, "profile.json from a heartbeat %s (offset %.0f of "
		    "perf.jsonl), regime %s%s", age,
		    jnum(cJSON_GetObjectItemCaseSensitive(p, "source"),
		    "offset"), regime ? regime : "unknown", now_ms - at_ms >
		    CHECK_MAX_AGE_MS ? ": older than check's default --max-age "
		    "(30s), so `check` exits 4 until the game runs again" : "");
		cJSON_AddNumberToObject(o, "ageMs", (double)(now_ms - at_ms));
		if (regime != NULL && strcmp(regime, "software") == 0)
			check(d, "regime", -1, "software renderer: timings not "
			    "trusted — frame and GPU times are reported, never "
			    "judged against a budget nor compared; counters "
			    "(draw calls, triangles, programs) are exact");
		else if (regime == NULL || strcmp(regime, "hardware") != 0)
			check(d, "regime", -1, "unknown: the browser did not "
			    "name its renderer (WEBGL_debug_renderer_info), so "
			    "timings may come from a software renderer");
		cJSON_Delete(p);
	}
	/* the daemon's writer, when one serves: what it could not write */
	if (cli_daemon_get(project, "/api/sloptimize/status", 2000, &st, why,
	    sizeof(why)) == 0 && cJSON_IsObject(pw =
	    cJSON_GetObjectItemCaseSensitive(st, "profile"))) {
		const char	*err = cJSON_GetStringValue(
				    cJSON_GetObjectItemCaseSensitive(pw,
				    "lastError"));

		if (err != NULL)
			check(d, "profile", 0, "the daemon cannot write %s: %s "
			    "(since %s; %.0f failures)", jstr(pw, "path"), err,
			    jstr(pw, "lastErrorAt"), jnum(pw, "failures"));
		else
			check(d, "profile", 1, "the daemon wrote it %.0f times "
			    "from %.0f heartbeats", jnum(pw, "writes"),
			    jnum(pw, "heartbeats"));
	}
	cJSON_Delete(st);
}

/*
 * The game tabs connected to the daemon's relay: where bench, gate and
 * attribute without --launch run (docs/bench.md, "The open tab").
 */
static void
doctor_open_tab(struct doc *d, const char *project)
{
	cJSON		*doc = NULL, *pages, *p;
	char		 why[512];
	int		 n, hidden = 0;

	if (cli_daemon_get(project, "/api/sloptimize/relay", 2000, &doc, why,
	    sizeof(why)) != 0) {
		check(d, "open tab", 0, "cannot ask the daemon: %s", why);
		return;
	}
	pages = cJSON_GetObjectItemCaseSensitive(doc, "pages");
	n = cJSON_GetArraySize(pages);
	cJSON_ArrayForEach(p, pages)
		hidden += cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(p,
		    "visible"));
	if (n == 0)
		check(d, "open tab", -1, "no game tab is connected to the "
		    "daemon: bench, gate and attribute need --launch until "
		    "the game is open with the plugin");
	else
		check(d, "open tab", hidden < n, "%d game tab%s connected, "
		    "the newest %s (%s)%s", n, n == 1 ? "" : "s",
		    jstr(cJSON_GetArrayItem(pages, 0), "url"),
		    cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(
		    cJSON_GetArrayItem(pages, 0), "visible")) ? "hidden" :
		    "visible", hidden == n ? ": every one is hidden, and a "
		    "hidden tab draws no frames — bring one to the front" : "");
	cJSON_Delete(doc);
}

/*
 * A browser for `bench --launch`, found as the launcher finds one:
 * $SLOPTIMIZE_BROWSER, then chromium, chromium-browser, google-chrome
 * on PATH.  0 and the path in out, or -ENOENT.
 */
static int
find_browser(char *out, size_t cap, const char **how)
{
	static const char *const names[] = { "chromium", "chromium-browser",
		"google-chrome", NULL };
	const char	*env = getenv("SLOPTIMIZE_BROWSER"), *path;
	char		*dir, *save = NULL;
	size_t		 i;

	if (env != NULL && *env != '\0') {
		*how = "$SLOPTIMIZE_BROWSER";
		snprintf(out, cap, "%s", env);
		return access(env, X_OK) == 0 ? 0 : -ENOENT;
	}
	*how = "PATH";
	if ((path = getenv("PATH")) == NULL)
		return -ENOENT;
	for (i = 0; names[i] != NULL; i++) {
		char	*p = strdup(path);

		if (p == NULL)
			break;
		for (dir = strtok_r(p, ":", &save); dir != NULL;
		    dir = strtok_r(NULL, ":", &save)) {
			snprintf(out, cap, "%s/%s", *dir ? dir : ".", names[i]);
			if (access(out, X_OK) == 0) {
				free(p);
				return 0;
			}
		}
		free(p);
	}
	return -ENOENT;
}

static void
doctor_browser(struct doc *d)
{
	char		 path[PATH_MAX];
	const char	*how;

	if (find_browser(path, sizeof(path), &how) == 0)
		check(d, "browser", 1, "%s (from %s) for bench --launch",
		    path, how);
	else if (strcmp(how, "PATH") != 0)
		check(d, "browser", 0, "$SLOPTIMIZE_BROWSER names %s, which is "
		    "not an executable: bench --launch exits 4", path);
	else
		check(d, "browser", -1, "none found for bench --launch "
		    "($SLOPTIMIZE_BROWSER unset; no chromium, chromium-browser "
		    "or google-chrome on PATH): install one (Debian: apt "
		    "install chromium) or bench in the open tab");
	check(d, "gpu timer", -1, "known only per browser run: a bench's "
	    "environment says whether the browser gave a GPU timer "
	    "(.sloptimize/bench/<scene>-<at>.json); profile.json has gpu only "
	    "where it was measured, never a guess");
}

/* The stated limits (seed §10) that apply to this build. */
static void
doctor_limits(struct doc *d)
{
	static const char *const limits[] = {
		"no per-draw GPU timing: WebGL's timer allows one query at a "
		"time and its results come frames late, so GPU time is per "
		"frame, Chromium only, or absent",
		"fill-rate and overdraw are judged by a heuristic only (the "
		"pixel-ratio experiment), and say so",
		"timing from a software renderer (SwiftShader, llvmpipe) is "
		"reported and never compared or judged against a budget; "
		"counters are exact everywhere",
		"a repro restores a view (camera, viewport, pixel ratio, "
		"visibility: fidelity \"view\"), not the play that led to it",
		"EffectComposer and custom pipelines: the recorder times "
		"renderer.render, so a frame of several passes is the sum of "
		"its render calls, and GPU work outside them is not seen",
		"multiplayer is out of scope: a server cannot be paused or "
		"restored",
		"the virtual clock cannot pin timers in Workers, audio "
		"(AudioContext time) or a game's own wall clock (a server's "
		"time): a scene that depends on them is not deterministic",
		"bench --launch drives Chromium only",
		NULL
	};
	size_t	i;

	for (i = 0; limits[i] != NULL; i++)
		check(d, "limits", -1, "%s", limits[i]);
}

/* Can the daemon load libnotify (notifier/lazynotify.h)?  0, or -errno
 * with the reason in err.  Loaded in this process as the daemon would. */
static int
doctor_libnotify(char *err, size_t cap)
{
#ifdef HAVE_LIBNOTIFY
	const struct lazynotify	*nf;

	return lazynotify_load(&nf, err, cap);
#else
	(void)err;
	(void)cap;
	return 0;
#endif
}

int
verb_doctor(int argc, char **argv)
{
	struct cli_common		 c;
	struct doc		 d = { 0 };
	struct ledger_opts	 lo = { 0 };
	struct ledger		*l = NULL;
	struct project_fold_info	 fi;
	struct ledger_counts	 n;
	char			 dir[PATH_MAX + 32], why[PATH_MAX + 64], real[PATH_MAX];
	const char		*backend, *bus;
	struct stat		 st;
	int			 rc, nothing = 0;
	FILE			*f;

	if ((rc = cli_parse(argc, argv, NULL, &c, doctor_usage, NULL, NULL)) >= 0)
		return rc;
	d.json = c.json;
	d.checks = cJSON_CreateArray();
	if (realpath(c.project, real) == NULL) {
		check(&d, "project", 0, "%s: %s", c.project, strerror(errno));
		nothing = 1;
		goto out;
	}
	check(&d, "project", 1, "%s", real);
	snprintf(dir, sizeof(dir), "%s/.sloptimize", real);
	lo.from_ms = lo.to_ms = LEDGER_NO_TIME;
	rc = project_fold(real, &lo, &l, &fi);
	if (rc == -ENOENT) {
		check(&d, "ledger", 0, "no %s yet: the game's runtime writes "
		    "it while the game runs", fi.perf);
		nothing = 1;
	} else if (rc != 0) {
		check(&d, "ledger", 0, "cannot read %s: %s", fi.failed ?
		    fi.failed : fi.perf, project_strerror(rc));
		nothing = 1;
	} else {
		ledger_counts(l, &n);
		check(&d, "ledger", 1, "%s: %llu bytes, %llu records, %llu "
		    "incidents in %llu issues, %llu builds", fi.perf,
		    (unsigned long long)fi.bytes,
		    (unsigned long long)n.folded,
		    (unsigned long long)n.incidents,
		    (unsigned long long)n.rows, (unsigned long long)n.builds);
		if (n.skipped > 0) {
			cJSON		*sk = ledger_skipped_json(l), *it;

			check(&d, "skipped", 0, "%llu lines skipped (not valid "
			    "records); the last ones:",
			    (unsigned long long)n.skipped);
			cJSON_ArrayForEach(it, sk)
				check(&d, "skipped", -1, "%s offset %.0f "
				    "length %.0f: %s", jstr(it, "stream"),
				    jnum(it, "offset"), jnum(it, "length"),
				    jstr(it, "reason"));
			cJSON_Delete(sk);
		} else
			check(&d, "skipped", 1, "every line is a valid record");
		if (n.malformed_footprints > 0)
			check(&d, "footprints", 0, "%llu records carry a "
			    "malformed v1 footprint id (re-derived)",
			    (unsigned long long)n.malformed_footprints);
		if (fi.partial > 0)
			check(&d, "tail", -1, "%llu bytes of an unfinished last "
			    "line (folded once its newline arrives)",
			    (unsigned long long)fi.partial);
		check(&d, "fixes", fi.have_fixes ? 1 : -1, "%s%s", fi.fixes,
		    fi.have_fixes ? "" : " does not exist yet");
	}
	/* the tailer's own rule, on what the tailer would look at */
	backend = fstrust_check(stat(dir, &st) == 0 ? dir : real, why,
	    sizeof(why)) ? FSTRUST_EVENTS : "poll";
	check(&d, "watcher", 1, "%s (%s)", backend, why);
	if ((f = fopen("/proc/sys/fs/inotify/max_user_watches", "r"))) {
		long	w = 0;

		if (fscanf(f, "%ld", &w) == 1)
			check(&d, "inotify", w >= 64 ? 1 : 0,
			    "max_user_watches %ld", w);
		fclose(f);
	}
	bus = getenv("DBUS_SESSION_BUS_ADDRESS");
	backend = desktop_backend();
	if (strcmp(backend, "none") == 0)
		check(&d, "notifications", -1, "built without a notification "
		    "backend (NOTIFY=0): the daemon logs wakes but shows no "
		    "desktop notifications");
	else if (strcmp(backend, "libnotify") != 0)
		check(&d, "notifications", 1, "%s", backend);
	else if (doctor_libnotify(why, sizeof(why)) != 0)
		check(&d, "notifications", 0, "%s; the daemon logs wakes but "
		    "shows no desktop notifications", why);
	else if (bus == NULL || *bus == '\0')
		check(&d, "notifications", -1, "libnotify, but no D-Bus session "
		    "(DBUS_SESSION_BUS_ADDRESS unset): the daemon logs wakes "
		    "but shows no desktop notifications");
	else
		check(&d, "notifications", 1, "libnotify, D-Bus session at %s",
		    bus);
	/* loaded here as the sink loads it (sink/lazycurl.h) */
	{
		const struct lazycurl	*cu;

		if (lazycurl_load(&cu, why, sizeof(why)) != 0)
			check(&d, "libcurl", -1, "%s; --sink, `sink init` and "
			    "`issues --team` cannot work", why);
		else
			check(&d, "libcurl", 1, "%s loads (for --sink and "
			    "--team)", LAZYCURL_SONAME);
	}
	{
		cJSON		*dj = state_file(real, "daemon.json");
		const cJSON	*pid = cJSON_GetObjectItemCaseSensitive(dj, "pid");
		char		 loop[16];

		if (dj == NULL)
			check(&d, "daemon", -1, "no sloptimized serves this "
			    "project (start one: sloptimized --project %s)",
			    real);
		else if (!cJSON_IsNumber(pid) ||
		    kill((pid_t)pid->valuedouble, 0) == -1)
			check(&d, "daemon", 0, "daemon.json names pid %.0f, "
			    "which is not running (it was killed; start it "
			    "again)", cJSON_IsNumber(pid) ? pid->valuedouble :
			    0);
		else {
			check(&d, "daemon", 1, "pid %.0f serving on %s",
			    pid->valuedouble, jstr(dj, "listen"));
			daemon_checks(&d, real);
			doctor_open_tab(&d, real);
		}
		cJSON_Delete(dj);
		fix_loop_level(real, loop, sizeof(loop));
		check(&d, "fix loop", 1, "automation level %s", loop);
	}
	doctor_budgets(&d, real, c.now_ms);
	doctor_browser(&d);
	check(&d, "limits", -1, "lines over 1 MiB are skipped and counted; "
	    "footprint keys are cut at %d bytes; verdict evidence at 255",
	    FOOTPRINT_KEY_MAX - 1);
	doctor_limits(&d);
out:
	if (c.json) {
		cJSON	*o = cJSON_CreateObject();

		cJSON_AddNumberToObject(o, "v", 1);
		cJSON_AddNumberToObject(o, "problems", d.problems);
		cJSON_AddItemToObject(o, "checks", d.checks);
		print_json(o);
		cJSON_Delete(o);
	} else
		cJSON_Delete(d.checks);
	ledger_destroy(l);
	if (nothing)
		return EXIT_NOTHING;
	return d.problems ? EXIT_FINDINGS : EXIT_OK;
}
