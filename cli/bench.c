/*
 * bench — `sloptimize bench`: a bench of a named scene in a launched
 * browser, and a verdict on a change (docs/bench.md).  The work is
 * benchrun.c's (the MCP tool run_bench does the same); this file is the
 * options and the words.
 *
 *   sloptimize bench --scene S --launch [--url U] [--frames N --warmup W
 *                    --runs R] [--setup-timeout SECONDS] [--json]
 *   sloptimize bench --scene S --launch --compare last|A [--change-ref REF
 *                    --change TEXT]       bench now, compare with A
 *   sloptimize bench --compare A B | last [--change-ref … --change …]
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/bench_budgets.h"
#include "cli/benchrun.h"
#include "cli/cli.h"
#include "cli/verbs.h"

static const char usage[] =
"usage: sloptimize bench --scene NAME --launch [--url URL] [--frames N]\n"
"                        [--warmup N] [--runs N] [--setup-timeout SECONDS]\n"
"       sloptimize bench --scene NAME --launch --compare last|BENCH\n"
"                        [--change-ref REF] [--change TEXT]\n"
"       sloptimize bench --compare BENCH BENCH | last [--change-ref REF]\n"
"                        [--change TEXT]\n"
"\n"
"A bench of a scene the game names (sloptimize.scene(NAME, setup)): the\n"
"page runs under a virtual clock, warm-up frames then N frames R times, in a\n"
"Chromium sloptimize launches headless (--launch; the URL from --url or from\n"
".sloptimize/dev.json, which the Vite plugin writes).  Written to\n"
".sloptimize/bench/NAME-<time>.json.  --compare gives a verdict per metric\n"
"and overall, and appends it to .sloptimize/bench-history.jsonl.\n"
"BENCH is a file, or a name in .sloptimize/bench/; last is the newest of the\n"
"scene (with --scene) or the two newest of the newest scene.\n"
"\n"
"  --scene NAME         the scene to bench (letters, digits, . _ -)\n"
"  --launch             in a headless browser sloptimize starts (without\n"
"                       it: the game tab open in a browser, through the\n"
"                       daemon)\n"
"  --url URL            the game's page (default: .sloptimize/dev.json)\n"
"  --frames N           measured frames a run (default 600)\n"
"  --warmup N           frames before the runs, not measured (default 120)\n"
"  --runs N             runs (default 3; 2 or more for a timing verdict)\n"
"  --setup-timeout S    for the scene's setup (default 60)\n"
"  --compare A [B]      compare (see above)\n"
"  --change-ref REF     the change compared, e.g. git:1a2b3c4 (the ledger)\n"
"  --change TEXT        what it does, in a few words (the ledger)\n"
"\n"
"exit, a bench: 0, or 1 when a budget at level error is breached\n"
"(sloptimize.budgets.json); --compare: 0 improved, 1 regressed,\n"
"5 no-detectable-change (a result: not 2, which is a usage error here),\n"
"3 incomparable; 4 the environment (no browser, no page, no scene, a page\n"
"that hangs or crashes, no bench to compare with); 2 usage.\n";

static int
whole(const char *name, const char *s, long lo, long hi, int *out)
{
	long	v = *out;

	if (cli_whole("bench", name, s, lo, hi, &v) != 0)
		return -1;
	*out = (int)v;
	return 0;
}

/* --- the words ------------------------------------------------------------ */

static const cJSON *
get(const cJSON *o, const char *a)
{
	return cJSON_GetObjectItemCaseSensitive(o, a);
}

static const char *
str(const cJSON *o, const char *a)
{
	const char	*s = cJSON_GetStringValue(get(o, a));

	return s ? s : "";
}

/* A number as a person reads it: 4,028 or 41.2 */
static const char *
fmt(double v, char *buf, size_t cap)
{
	if (isnan(v))
		return "—";
	if (v == floor(v) && fabs(v) < 1e15) {
		char	raw[32], *o = buf;
		int	n, i, lead;

		n = snprintf(raw, sizeof(raw), "%.0f", fabs(v));
		lead = n % 3 ? n % 3 : 3;
		if (v < 0)
			*o++ = '-';
		for (i = 0; i < n && (size_t)(o - buf) + 2 < cap; i++) {
			if (i > 0 && (i - lead) % 3 == 0)
				*o++ = ',';
			*o++ = raw[i];
		}
		*o = '\0';
		return buf;
	}
	snprintf(buf, cap, "%.*f", fabs(v) >= 100 ? 1 : fabs(v) >= 10 ? 2 : 3,
	    v);
	return buf;
}

static double
numv(const cJSON *o, const char *a)
{
	const cJSON	*v = get(o, a);

	return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}

static void
print_run(const cJSON *run)
{
	const cJSON	*b = get(run, "bench"), *f = get(b, "frame"),
			*rd = get(b, "render"), *mem = get(b, "memory"),
			*gpu = get(b, "gpu"), *gt = get(b, "gpuTimer"),
			*env = get(b, "environment"), *it;
	const char	*regime = str(b, "regime");
	char		 a[32], c[32], d[32], e[32], g[32];

	printf("bench %s: %d × %d frames after %d of warm-up; %s regime (%s)\n",
	    str(b, "scene"), (int)numv(b, "runs"), (int)numv(b, "frames"),
	    (int)numv(b, "warmup"), regime, *str(env, "gpu") ? str(env, "gpu") :
	    "no GPU string");
	printf("  frame          median %s ms  p95 %s  p99 %s  max %s  "
	    "spread %s ms\n", fmt(numv(f, "medianMs"), a, sizeof(a)),
	    fmt(numv(f, "p95Ms"), c, sizeof(c)), fmt(numv(f, "p99Ms"), d,
	    sizeof(d)), fmt(numv(f, "maxMs"), e, sizeof(e)),
	    fmt(numv(f, "noiseFloorMs"), g, sizeof(g)));
	printf("  inside render  median %s ms\n", fmt(numv(rd, "insideMs"), a,
	    sizeof(a)));
	if (gpu != NULL)
		printf("  GPU            median %s ms  p95 %s\n",
		    fmt(numv(gpu, "medianMs"), a, sizeof(a)),
		    fmt(numv(gpu, "p95Ms"), c, sizeof(c)));
	else
		printf("  GPU            not measured (%s)\n", *str(gt, "why") ?
		    str(gt, "why") : "no timer results");
	if (strcmp(regime, "hardware") != 0)
		printf("  timing         %s regime: reported, never compared or "
		    "judged\n", regime);
	printf("  counters       draw calls %s  triangles %s  programs %s  "
	    "geometries %s  textures %s  (%s)\n",
	    fmt(numv(rd, "calls"), a, sizeof(a)), fmt(numv(rd, "triangles"), c,
	    sizeof(c)), fmt(numv(rd, "programs"), d, sizeof(d)),
	    fmt(numv(mem, "geometries"), e, sizeof(e)),
	    fmt(numv(mem, "textures"), g, sizeof(g)),
	    str(get(b, "grade"), "counters"));
	if (strcmp(str(get(b, "grade"), "counters"), "unstable") == 0)
		printf("  counters differ between runs: the scene is not "
		    "deterministic, and comparisons judge them by their spread\n");
	if (numv(get(b, "errors"), "count") > 0)
		printf("  the game threw %s times during the bench: %s\n",
		    fmt(numv(get(b, "errors"), "count"), a, sizeof(a)),
		    str(get(b, "errors"), "first"));
	cJSON_ArrayForEach(it, get(b, "notes"))
		if (cJSON_IsString(it))
			printf("  note: %s\n", it->valuestring);
	printf("  written %s (%.1f s)\n", str(run, "path"),
	    numv(b, "wallMs") / 1000);
}

static void
print_budgets(const cJSON *bj)
{
	const cJSON	*it;

	if (bj == NULL)
		return;
	if (!cJSON_IsTrue(get(bj, "declared"))) {
		printf("budgets: none declared (%s at the game's root)\n",
		    BUDGETS_FILE);
		return;
	}
	printf("budgets (%s):\n", BUDGETS_FILE);
	cJSON_ArrayForEach(it, get(bj, "items"))
		printf("  %-26s %s\n", str(it, "key"), str(it, "text"));
	if (cJSON_GetArraySize(get(bj, "items")) == 0)
		printf("  (the file declares none)\n");
}

static void
print_compare(const cJSON *c)
{
	const cJSON	*m;
	char		 a[32], b[32], d[32];
	const char	*untimed = NULL;

	printf("compare %s → %s: %s\n", str(get(c, "before"), "file"),
	    str(get(c, "after"), "file"), str(c, "verdict"));
	printf("  %s\n", str(c, "why"));
	cJSON_ArrayForEach(m, get(c, "metrics")) {
		const char	*v = str(m, "verdict");
		double		 delta = numv(m, "delta");

		if (isnan(delta))
			d[0] = '\0';
		else if (delta > 0)
			snprintf(d, sizeof(d), "+%s", fmt(delta, a, sizeof(a)));
		else
			fmt(delta, d, sizeof(d));
		printf("  %-14s %12s → %-12s %10s%s  %s%s\n", str(m, "label"),
		    fmt(numv(m, "before"), a, sizeof(a)),
		    fmt(numv(m, "after"), b, sizeof(b)), d,
		    strcmp(str(m, "kind"), "timing") == 0 ? " ms" : "   ", v,
		    cJSON_IsTrue(get(m, "decisive")) ? " (decisive)" :
		    strcmp(v, "improved") == 0 || strcmp(v, "regressed") == 0 ?
		    " (reported, not decisive)" : "");
		if (strcmp(v, "not-compared") == 0 && untimed == NULL)
			untimed = str(m, "why");
		else if (cJSON_IsTrue(get(m, "unstable")) ||
		    (strcmp(v, "not-compared") == 0 && strcmp(untimed,
		    str(m, "why")) != 0))
			printf("  %14s %s\n", "", str(m, "why"));
	}
	if (untimed != NULL)
		printf("  not-compared: %s\n", untimed);
	if (cJSON_IsTrue(get(get(c, "history"), "appended")))
		printf("  recorded in %s\n", str(get(c, "history"), "file"));
}

static int
print_outcome(const struct bench_outcome *o)
{
	const cJSON	*doc = o->doc;

	if (get(doc, "run") != NULL)
		print_run(get(doc, "run"));
	if (get(doc, "compare") != NULL)
		print_compare(get(doc, "compare"));
	print_budgets(get(doc, "budgets"));
	if (o->exit <= 5 && *o->err == '\0')
		printf("exit %d: %s%s\n", o->exit, str(doc, "meaning"),
		    o->exit == 5 ? " (a result, not a failure)" : "");
	return 0;
}

int
verb_bench(int argc, char **argv)
{
	struct cli_common	 c;
	struct bench_req	 r;
	struct bench_outcome	 o;
	const char		*frames = NULL, *warmup = NULL, *runs = NULL,
				*setup = NULL, *pos[1];
	int			 launch = 0, npos = 1, rc, setup_s = BENCH_SETUP_S;
	struct cli_opt		 opts[] = {
		{ "scene", OPT_ARG, &r.scene },
		{ "launch", OPT_FLAG, &launch },
		{ "url", OPT_ARG, &r.url },
		{ "frames", OPT_ARG, &frames },
		{ "warmup", OPT_ARG, &warmup },
		{ "runs", OPT_ARG, &runs },
		{ "setup-timeout", OPT_ARG, &setup },
		{ "compare", OPT_ARG, &r.compare },
		{ "change-ref", OPT_ARG, &r.change_ref },
		{ "change", OPT_ARG, &r.change },
		{ NULL, 0, NULL }
	};

	memset(&r, 0, sizeof(r));
	r.frames = BENCH_FRAMES;
	r.warmup = BENCH_WARMUP;
	r.runs = BENCH_RUNS;
	if ((rc = cli_parse(argc, argv, opts, &c, usage, pos, &npos)) >= 0)
		return rc;
	if (npos > 0 && r.compare == NULL) {
		fprintf(stderr, "sloptimize bench: unexpected argument '%s'\n%s",
		    pos[0], usage);
		return EXIT_USAGE;
	}
	if (whole("frames", frames, 1, 100000, &r.frames) ||
	    whole("warmup", warmup, 0, 100000, &r.warmup) ||
	    whole("runs", runs, 1, 20, &r.runs) ||
	    whole("setup-timeout", setup, 1, 3600, &setup_s))
		return EXIT_USAGE;
	if ((frames || warmup || runs || setup || r.url || launch) &&
	    r.scene == NULL) {
		fprintf(stderr, "sloptimize bench: --frames, --warmup, --runs, "
		    "--setup-timeout, --url and --launch go with --scene\n");
		return EXIT_USAGE;
	}
	r.project = c.project;
	r.launch = launch;
	r.compare_b = npos > 0 ? pos[0] : NULL;
	r.setup_timeout_ms = setup_s * 1000;
	r.signals = 1;
	r.progress = !c.json && isatty(2);
	r.now_ms = c.now_ms;
	bench_execute(&r, &o);
	if (*o.err != '\0')
		fprintf(stderr, "sloptimize bench: %s\n", o.err);
	if (o.exit == BENCH_EXIT_USAGE)
		fputs(usage, stderr);
	else if (c.json)
		print_json(o.doc);
	else
		print_outcome(&o);
	cJSON_Delete(o.doc);
	return o.exit;
}
