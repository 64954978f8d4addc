/*
 * attribute — which entity of a scene costs what (docs/attribute.md,
 * DESIGN §16).  `--static`: the census — which entity holds what, where
 * in the source it was built, and the hints a walk can honestly give.
 * Without it: the measured bisection — the game paused, its frame drawn
 * again with each candidate entity hidden, the difference in draw calls
 * and triangles (exact) and time (marked noisy within the baselines'
 * spread), ranked; written to .sloptimize/attribution.json.
 *
 * The page from cli/pagerun.h — opened in a headless Chromium with
 * `--launch` (the launch, injection, URL and take-down `bench --launch`
 * and `gate --launch` use), else the tab the developer has open through
 * the daemon's relay — then one call of the page runtime's
 * sloptimize.bench.census({scene}) (page-runtime/bench.js, census.js):
 * the scene set up under the virtual clock, its settle frames and one
 * more stepped, and what that frame drew walked with the clock paused.
 * The answer is outside input: checked (its version, its totals, each
 * hint's kind against the closed vocabulary) before anything is written,
 * and .sloptimize/census.json is replaced whole (statedir_write: temp
 * file, fsync, rename) — a reader sees the old census or the new.
 *
 * Both call the page runtime (sloptimize.bench.census / .attribute in
 * page-runtime/bench.js) with one JSON object of options, made here with
 * cJSON: an id given on the command line is data, never script.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "base/base.h"
#include "cli/attribute.h"
#include "cli/benchrun.h"
#include "cli/cli.h"
#include "cli/pagerun.h"
#include "cli/verbs.h"
#include "ledger/footprint.h"
#include "project/statedir.h"

/* reading the page's answer (cli.h): absent or of another type is 0, "" */
#define get(o, k)	cli_get(o, k)
#define num(o, k)	cli_num(o, k, 0)
#define str(o, k)	cli_str(o, k, "")

#define ATTR_OPEN_MS	120000	/* the start, the load: each at most this */

/* The hints' closed vocabulary (docs/attribute.md). */
static const char *const hint_kinds[] = {
	"instancing-candidate", "material-dedup-candidate",
	"shadow-caster-light", "undisposed-suspect", "oversized-texture",
	"uncapped-pixel-ratio", NULL
};

/* What each mode calls the page for, and what it writes. */
#define WHAT(o)	((o)->bisect ? "attribution" : "census")
#define FILE_OF(o) ((o)->bisect ? "attribution.json" : "census.json")

static int
scene_ok(const char *s)
{
	size_t	n = strlen(s), i;

	if (n == 0 || n > 64)
		return 0;
	for (i = 0; i < n; i++) {
		char	c = s[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		    (c >= '0' && c <= '9') || (i > 0 && (c == '_' || c == '-' ||
		    c == '.'))))
			return 0;
	}
	return 1;
}

int
attr_ids_ok(const char *s)
{
	int	n = 1, len = 0;

	for (; *s != '\0'; s++) {
		if (*s == ',') {
			if (len == 0 || ++n > 200)
				return 0;
			len = 0;
		} else if ((unsigned char)*s <= ' ' || *s == '"' ||
		    *s == '\\' || *s == '\'' || ++len > 512)
			return 0;
	}
	return len > 0;
}

static int
known_kind(const char *k)
{
	int	i;

	for (i = 0; k != NULL && hint_kinds[i] != NULL; i++)
		if (strcmp(k, hint_kinds[i]) == 0)
			return 1;
	return 0;
}

/*
 * The page's census, checked: v 1, totals with the counts as numbers and
 * calls null, entities and hints as arrays.  A hint outside the
 * vocabulary is dropped and counted (*dropped): a newer runtime's kind
 * this CLI cannot explain is said, not passed on as if it knew it.
 * 0, or -EPROTO with why.
 */
static int
census_check(cJSON *doc, int *dropped, char *why, size_t cap)
{
	static const char *const counts[] = { "meshes", "triangles",
	    "materials", "geometries", "textureBytesEstimate", NULL };
	const cJSON	*t = get(doc, "totals"), *v = get(doc, "v");
	cJSON		*hints = cJSON_GetObjectItemCaseSensitive(doc, "hints"),
			*h;
	int		 i;

	*dropped = 0;
	if (!cJSON_IsObject(doc) || !cJSON_IsNumber(v) || v->valueint != 1 ||
	    !cJSON_IsObject(t) || !cJSON_IsArray(get(doc, "entities")) ||
	    !cJSON_IsArray(hints)) {
		snprintf(why, cap, "the page's census runtime answered "
		    "something that is not a census (v 1 with totals, entities "
		    "and hints)");
		return -EPROTO;
	}
	for (i = 0; counts[i] != NULL; i++) {
		const cJSON	*n = get(t, counts[i]);

		if (!cJSON_IsNumber(n) || n->valuedouble < 0) {
			snprintf(why, cap, "the page's census has no count of "
			    "%s", counts[i]);
			return -EPROTO;
		}
	}
	if (!cJSON_IsNull(get(t, "calls"))) {
		snprintf(why, cap, "the page's census gives draw calls: a "
		    "static census cannot know them (calls must be null)");
		return -EPROTO;
	}
	for (h = hints->child; h != NULL;) {
		cJSON	*next = h->next;

		if (!cJSON_IsObject(h) || !known_kind(cJSON_GetStringValue(
		    get(h, "kind"))) || !cJSON_IsString(get(h, "fix")) ||
		    !cJSON_IsString(get(h, "site"))) {
			cJSON_Delete(cJSON_DetachItemViaPointer(hints, h));
			(*dropped)++;
		}
		h = next;
	}
	return 0;
}

/*
 * The page's attribution, checked: v 1, a baseline with its counts,
 * entities each with an id and exact differences, `restored` and
 * `sumsToBaseline` as booleans.  0, or -EPROTO with why.
 */
static int
attribution_check(const cJSON *doc, char *why, size_t cap)
{
	const cJSON	*v = get(doc, "v"), *b = get(doc, "baseline"), *e;

	if (!cJSON_IsObject(doc) || !cJSON_IsNumber(v) || v->valueint != 1 ||
	    !cJSON_IsObject(b) || !cJSON_IsNumber(get(b, "calls")) ||
	    !cJSON_IsArray(get(doc, "entities")) ||
	    !cJSON_IsBool(get(doc, "restored")) ||
	    !cJSON_IsBool(get(doc, "sumsToBaseline"))) {
		snprintf(why, cap, "the page's attribution runtime answered "
		    "something that is not an attribution (v 1 with a baseline, "
		    "entities, restored and sumsToBaseline)");
		return -EPROTO;
	}
	cJSON_ArrayForEach(e, get(doc, "entities"))
		if (!cJSON_IsString(get(e, "id")) ||
		    !cJSON_IsNumber(get(e, "dCalls")) ||
		    !cJSON_IsNumber(get(e, "dTriangles")) ||
		    !cJSON_IsBool(get(e, "noisy"))) {
			snprintf(why, cap, "the page's attribution has an entity "
			    "without an id, dCalls, dTriangles and noisy");
			return -EPROTO;
		}
	return 0;
}

/*
 * The options the page runtime gets, as one JSON object: the scene, the
 * seed and deadlines, and for the bisection frames, top and the ids.
 * NULL when out of memory.
 */
static cJSON *
page_options(const struct attr_opts *o)
{
	cJSON	*a = cJSON_CreateObject(), *ids;
	char	*list = NULL, *id, *save = NULL;

	if (a == NULL)
		return NULL;
	cJSON_AddStringToObject(a, "scene", o->scene);
	cJSON_AddNumberToObject(a, "seed", PAGERUN_SEED);
	cJSON_AddNumberToObject(a, "setupTimeoutMs", BENCH_SETUP_S * 1000);
	cJSON_AddNumberToObject(a, "waitSceneMs", 10000);
	if (o->bisect) {
		cJSON_AddNumberToObject(a, "frames", o->frames);
		cJSON_AddNumberToObject(a, "top", o->top);
		if (o->ids != NULL) {
			if ((list = strdup(o->ids)) == NULL ||
			    (ids = cJSON_AddArrayToObject(a, "ids")) == NULL) {
				free(list);
				cJSON_Delete(a);
				return NULL;
			}
			for (id = strtok_r(list, ",", &save); id != NULL;
			    id = strtok_r(NULL, ",", &save))
				cJSON_AddItemToArray(ids, cJSON_CreateString(id));
		}
	}
	free(list);
	return a;
}

/* The census or attribution of o->scene from the page: 0 with
 * *out (the caller's), or a negative errno with why; *sig the signal that
 * ended a wait. */
static int
page_take(const struct attr_opts *o, cJSON **out, char *browser,
    size_t bcap, char *url, size_t ucap, int *sig, char *why, size_t cap)
{
	struct pagerun_req	 pq = { o->project, o->scene, o->url,
				    o->signals, o->cancel, ATTR_OPEN_MS, 0,
				    o->dpr, o->launch };
	struct pagerun_watch	 w = { BENCH_SETUP_S * 1000 + 10000, 60000,
				    NULL, NULL };
	struct pagerun		*pr = NULL;
	char			 err[2048];
	cJSON			*args;
	const char		*fn = o->bisect ? "attribute" : "census";
	int			 rc;

	*out = NULL;
	*sig = 0;
	if ((args = page_options(o)) == NULL) {
		snprintf(why, cap, "out of memory");
		return -ENOMEM;
	}
	pq.deadline = base_mono_ms() + o->timeout_ms;
	if ((rc = pagerun_open(&pq, &pr, sig, err, sizeof(err))) != 0) {
		cJSON_Delete(args);
		snprintf(why, cap, "no %s of scene '%s': %s", WHAT(o), o->scene,
		    rc == -EINTR ? "interrupted" : err);
		return rc;
	}
	rc = pagerun_call(pr, fn, args, &w, out, err, sizeof(err));
	cJSON_Delete(args);
	snprintf(url, ucap, "%s", pagerun_url(pr));
	snprintf(browser, bcap, "%s", pagerun_browser(pr));
	if (rc == -EINTR)
		*sig = pagerun_signal(pr);
	if (pagerun_close(pr) != 0 && rc == 0) {
		snprintf(err, sizeof(err), "the browser's processes outlived "
		    "SIGKILL");
		rc = -EBUSY;
	}
	if (rc != 0) {
		cJSON_Delete(*out);
		*out = NULL;
		if (rc == -ETIMEDOUT && strstr(err, "deadline") != NULL)
			snprintf(why, cap, "no %s of scene '%s' within its "
			    "deadline of %d s: %s", WHAT(o), o->scene,
			    o->timeout_ms / 1000, err);
		else
			snprintf(why, cap, "no %s of scene '%s': %s", WHAT(o),
			    o->scene, err);
	}
	return rc;
}

/* The document written: what the CLI knows first (when, which scene,
 * page and browser), then the page's census or attribution as it
 * answered. */
static cJSON *
page_doc(const struct attr_opts *o, cJSON *page, const char *browser,
    const char *url, int dropped)
{
	cJSON	*d = cJSON_CreateObject(), *it, *notes;
	char	 at[32];

	if (d == NULL)
		return NULL;
	iso_format_ms(o->now_ms, at);
	cJSON_AddNumberToObject(d, "v", 1);
	cJSON_AddStringToObject(d, "at", at);
	cJSON_AddStringToObject(d, "scene", o->scene);
	cJSON_AddStringToObject(d, "source", o->launch ? "launch" : "open-tab");
	cJSON_AddStringToObject(d, "url", url);
	cJSON_AddStringToObject(d, "browser", browser);
	while ((it = page->child) != NULL) {
		cJSON_DetachItemViaPointer(page, it);
		if (strcmp(it->string, "v") == 0 ||
		    cJSON_GetObjectItemCaseSensitive(d, it->string) != NULL)
			cJSON_Delete(it);
		else
			cJSON_AddItemToObject(d, it->string, it);
	}
	if (dropped > 0 && (notes = cJSON_GetObjectItemCaseSensitive(d,
	    "notes")) != NULL && cJSON_IsArray(notes)) {
		char	line[160];

		snprintf(line, sizeof(line), "%d hints of a kind this sloptimize "
		    "does not know were left out (a newer page runtime?)",
		    dropped);
		cJSON_AddItemToArray(notes, cJSON_CreateString(line));
	}
	return d;
}

static int
doc_write(const char *project, const char *file, const cJSON *doc, char *path,
    size_t pcap, char *why, size_t cap)
{
	char	top[PATH_MAX], *text;
	int	rc;

	if ((size_t)snprintf(top, sizeof(top), "%s/" PROJECT_DIR, project) >=
	    sizeof(top) || project_path(project, file, path, pcap)) {
		snprintf(why, cap, "the project path is too long");
		return -ENAMETOOLONG;
	}
	if (mkdir(top, 0755) != 0 && errno != EEXIST) {
		rc = -errno;
		snprintf(why, cap, "cannot create %s: %s", top, strerror(errno));
		return rc;
	}
	if ((text = cJSON_Print(doc)) == NULL) {
		snprintf(why, cap, "out of memory");
		return -ENOMEM;
	}
	rc = statedir_write(path, text, strlen(text), 0644);
	free(text);
	if (rc != 0)
		snprintf(why, cap, "cannot write %s: %s", path, strerror(-rc));
	return rc;
}

static void
print_text(const cJSON *d, const char *path)
{
	const cJSON	*t = get(d, "totals"), *e, *h, *n;
	int		 i = 0;

	printf("census of scene '%s' (%s): %.0f meshes, %.0f triangles, %.0f "
	    "materials, %.0f geometries, ~%.1f MB of textures (an estimate); "
	    "draw calls are not known to a static census\n", str(d, "scene"),
	    str(d, "at"), num(t, "meshes"), num(t, "triangles"),
	    num(t, "materials"), num(t, "geometries"),
	    num(t, "textureBytesEstimate") / 1048576.0);
	cJSON_ArrayForEach(e, get(d, "entities")) {
		if (i++ == 5)
			break;
		printf("  %-28s %6.0f meshes %9.0f triangles  %s\n",
		    str(e, "id"), num(e, "meshes"), num(e, "triangles"),
		    str(e, "site"));
	}
	if (cJSON_GetArraySize(get(d, "entities")) == 0)
		printf("  (no entity with a mesh)\n");
	cJSON_ArrayForEach(h, get(d, "hints"))
		printf("%s: %s\n", str(h, "kind"), str(h, "fix"));
	cJSON_ArrayForEach(n, get(d, "notes"))
		if (cJSON_IsString(n))
			printf("note: %s\n", n->valuestring);
	printf("written to %s\n", path);
}

static void
print_attribution(const cJSON *d, const char *path)
{
	const cJSON	*b = get(d, "baseline"), *e, *n;
	int		 soft = strcmp(str(d, "regime"), "hardware") != 0;
	int		 gpu = cJSON_IsNumber(get(b, "gpuMs"));

	printf("attribution of scene '%s' (%s): the game paused, its frame "
	    "drawn %.0f times per entity; baseline %.0f draw calls, %.0f "
	    "triangles, %.2f ms inside render (spread %.2f ms over 3 "
	    "baselines%s)\n", str(d, "scene"), str(d, "at"), num(d, "frames"),
	    num(b, "calls"), num(b, "triangles"), num(b, "insideRenderMs"),
	    num(b, "spreadMs"), soft ? "; a software renderer's times: "
	    "reported, never compared" : "");
	if (gpu)
		printf("  GPU time per replay %.3f ms (spread %.3f ms)%s\n",
		    num(b, "gpuMs"), num(b, "gpuSpreadMs"), soft ? "; a software "
		    "renderer times its emulation, not a GPU" : "");
	printf("  %-28s %9s %11s %10s %s %s\n", "entity (ranked by draw calls)",
	    "calls", "triangles", "render ms", gpu ? "   gpu ms" : "",
	    "built at");
	cJSON_ArrayForEach(e, get(d, "entities")) {
		char	g[32] = "";

		if (gpu && cJSON_IsNumber(get(e, "dGpuMs")))
			snprintf(g, sizeof(g), "%+9.3f%s", num(e, "dGpuMs"),
			    cJSON_IsTrue(get(e, "gpuNoisy")) ? "~" : " ");
		else if (gpu)
			snprintf(g, sizeof(g), "%9s ", "-");
		printf("  %-28s %+9.0f %+11.0f %+9.2f%s%s %s\n", str(e, "id"),
		    num(e, "dCalls"), num(e, "dTriangles"),
		    num(e, "dInsideRenderMs"),
		    cJSON_IsTrue(get(e, "noisy")) ? "~" : " ", g,
		    str(e, "site"));
	}
	if (cJSON_GetArraySize(get(d, "entities")) == 0)
		printf("  (no entity with a mesh)\n");
	printf("(~: within the baselines' spread — noise, not a cost; a "
	    "ranking, not an accounting: the rows do not sum to the "
	    "baseline)\n");
	printf("world %s%s\n", cJSON_IsTrue(get(d, "restored")) ?
	    "restored: every entity hidden is visible again as it was" :
	    "NOT restored: an entity's visible flag is not what it was",
	    cJSON_IsTrue(get(d, "pixelsIdentical")) ? "; the frame's pixels "
	    "identical before and after" : cJSON_IsFalse(get(d,
	    "pixelsIdentical")) ? "; the frame's pixels DIFFER before and "
	    "after" : "");
	cJSON_ArrayForEach(n, get(d, "notes"))
		if (cJSON_IsString(n))
			printf("note: %s\n", n->valuestring);
	printf("written to %s\n", path);
}

static const char usage[] =
"usage: sloptimize attribute --static --scene S --launch [--url URL]\n"
"                            [--dpr N] [--timeout SECONDS] [--json]\n"
"       sloptimize attribute --scene S --launch [--ids A,B | --top N]\n"
"                            [--frames K] [--url URL] [--dpr N]\n"
"                            [--timeout SECONDS] [--json]\n"
"\n"
"--static: the census of a named scene: its meshes, triangles, materials,\n"
"geometries and an estimate of its texture bytes, by entity (the id\n"
"sloptimize.track() gave it, its asset, its name path, or a stable auto\n"
"id) with the file and line that built it, and hints with their evidence\n"
"and a fix naming that line.  Written to .sloptimize/census.json.\n"
"\n"
"Without --static: the measured bisection.  The game is paused and its\n"
"frame drawn again K times with each candidate entity hidden (the ids\n"
"given, or the census's first N by triangles); what each costs in draw\n"
"calls and triangles (exact) and time inside render (marked noisy within\n"
"the spread of three baselines), ranked by draw calls, the world checked\n"
"as it was afterwards.  Written to .sloptimize/attribution.json.\n"
"\n"
"  --static         the census rather than the bisection\n"
"  --ids A,B        the entities to measure (bisection)\n"
"  --top N          else the census's first N by triangles (default 20)\n"
"  --frames K       frames drawn per entity and baseline (default 5)\n"
"  --scene S        a named scene (docs/bench.md)\n"
"  --launch         spawn a headless Chromium rather than use the open tab\n"
"  --url URL        the game's URL (default: .sloptimize/dev.json's)\n"
"  --dpr N          the launched browser's device pixel ratio (default 1)\n"
"  --timeout S      the census's whole deadline (default 300 s)\n"
"\n"
"exit: 0 written, 1 the world not restored after the bisection, 2 usage,\n"
"4 no browser, page, scene or entity (without --launch: no daemon, no game\n"
"tab connected to it, or the tab hidden); 130/143 interrupted (the browser\n"
"taken down).  docs/attribute.md.\n";

int
verb_attribute(int argc, char **argv)
{
	struct cli_common	 c;
	struct attr_opts	 o = { 0 };
	const char		*timeout = NULL, *dpr = NULL, *top = NULL,
				*frames = NULL;
	int			 stat_ = 0, rc;
	char			 why[3 * PATH_MAX], path[PATH_MAX], *end;
	cJSON			*doc;
	const struct cli_opt	 opts[] = {
		{ "static", OPT_FLAG, &stat_ },
		{ "ids", OPT_ARG, &o.ids },
		{ "top", OPT_ARG, &top },
		{ "frames", OPT_ARG, &frames },
		{ "scene", OPT_ARG, &o.scene },
		{ "launch", OPT_FLAG, &o.launch },
		{ "url", OPT_ARG, &o.url },
		{ "dpr", OPT_ARG, &dpr },
		{ "timeout", OPT_ARG, &timeout },
		{ NULL, 0, NULL }
	};

	if ((rc = cli_parse(argc, argv, opts, &c, usage, NULL, NULL)) >= 0)
		return rc;
	o.project = c.project;
	o.now_ms = c.now_ms;
	o.timeout_ms = ATTR_TIMEOUT_MS;
	o.dpr = 1;
	o.bisect = !stat_;
	o.top = ATTR_TOP;
	o.frames = ATTR_FRAMES;
	if (stat_ && (o.ids != NULL || top != NULL || frames != NULL)) {
		fprintf(stderr, "sloptimize attribute: --ids, --top and --frames "
		    "are the bisection's; --static takes the census\n");
		return EXIT_USAGE;
	}
	if (o.ids != NULL && top != NULL) {
		fprintf(stderr, "sloptimize attribute: --ids names the entities; "
		    "--top picks them from the census: one or the other\n");
		return EXIT_USAGE;
	}
	if (top != NULL || frames != NULL) {
		long	n;

		if (top != NULL) {
			if (cli_whole("attribute", "top", top, 1, 200, &n) != 0)
				return EXIT_USAGE;
			o.top = (int)n;
		}
		if (frames != NULL) {
			if (cli_whole("attribute", "frames", frames, 1, 600,
			    &n) != 0)
				return EXIT_USAGE;
			o.frames = (int)n;
		}
	}
	if (o.ids != NULL && !attr_ids_ok(o.ids)) {
		fprintf(stderr, "sloptimize attribute: --ids is a comma-separated "
		    "list of 1 to 200 entity ids as the census names them (not "
		    "'%s')\n", o.ids);
		return EXIT_USAGE;
	}
	if (timeout != NULL) {
		long	s;

		if (cli_whole("attribute", "timeout", timeout, 1, 3600, &s) != 0)
			return EXIT_USAGE;
		o.timeout_ms = (int)s * 1000;
	}
	if (dpr != NULL) {
		errno = 0;
		o.dpr = strtod(dpr, &end);
		if (errno || end == dpr || *end != '\0' ||
		    !(o.dpr >= 0.5 && o.dpr <= 4)) {
			fprintf(stderr, "sloptimize attribute: --dpr is a device "
			    "pixel ratio from 0.5 to 4, not '%s'\n", dpr);
			return EXIT_USAGE;
		}
	}
	if (o.scene == NULL) {
		fprintf(stderr, "sloptimize attribute: --scene S is required "
		    "(the view a person named: docs/bench.md)\n%s", usage);
		return EXIT_USAGE;
	}
	if (!scene_ok(o.scene)) {
		fprintf(stderr, "sloptimize attribute: a scene is named by 1-64 "
		    "letters, digits, '.', '_' or '-' (not '%s')\n", o.scene);
		return EXIT_USAGE;
	}
	o.signals = 1;
	rc = attribute_execute(&o, &doc, path, sizeof(path), why, sizeof(why));
	if (rc > 128) {
		fprintf(stderr, "sloptimize attribute: interrupted; the browser "
		    "is taken down and nothing was written\n");
		return rc;
	}
	if (doc == NULL) {
		fprintf(stderr, "sloptimize attribute: %s\n", why);
		return rc;
	}
	if (c.json)
		print_json(doc);
	else if (o.bisect)
		print_attribution(doc, path);
	else
		print_text(doc, path);
	cJSON_Delete(doc);
	return rc;
}

int
attribute_execute(const struct attr_opts *oin, cJSON **doc, char *path,
    size_t pcap, char *why, size_t cap)
{
	struct attr_opts	 o = *oin;
	cJSON			*page = NULL;
	char			 browser[128] = "", url[2300] = "";
	int			 rc, sig = 0, dropped = 0;

	*doc = NULL;
	if (o.now_ms == 0) {
		struct timespec	ts;

		clock_gettime(CLOCK_REALTIME, &ts);
		o.now_ms = (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
	}
	rc = page_take(&o, &page, browser, sizeof(browser), url, sizeof(url),
	    &sig, why, cap);
	if (rc == -EINTR && sig != 0)
		return 128 + sig;
	if (rc == -ENAMETOOLONG || rc == -EDESTADDRREQ)
		return EXIT_USAGE;
	if (rc != 0)
		return EXIT_NOTHING;
	rc = o.bisect ? attribution_check(page, why, cap) :
	    census_check(page, &dropped, why, cap);
	if (rc != 0 || (*doc = page_doc(&o, page, browser, url, dropped)) ==
	    NULL) {
		if (rc == 0)
			snprintf(why, cap, "out of memory");
		snprintf(why + strlen(why), cap - strlen(why), "; nothing was "
		    "written");
		cJSON_Delete(page);
		return EXIT_NOTHING;
	}
	cJSON_Delete(page);
	if (doc_write(o.project, FILE_OF(&o), *doc, path, pcap, why,
	    cap) != 0) {
		cJSON_Delete(*doc);
		*doc = NULL;
		return EXIT_NOTHING;
	}
	return o.bisect && !cJSON_IsTrue(get(*doc, "restored")) ?
	    EXIT_FINDINGS : EXIT_OK;
}
