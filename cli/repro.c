/*
 * repro — a hitch replayed (docs/attribute.md "A hitch replayed", seed
 * §5).  The recorder keeps the camera and the animation-frame time of its
 * last frames in its ring, and every hitch record names a view snapshot
 * (`snapshotRef`) of the frames from 30 before it, which the daemon keeps
 * as .sloptimize/snapshots/<ref>.json.  `sloptimize repro <hitch>` finds
 * it — by its ref, or by the byte offset of the hitch's line in
 * perf.jsonl (`issues --fp` prints both) — and has the page runtime's
 * sloptimize.bench.repro({view, frames}) restore it and step the frames:
 * in the tab the developer has open (through the daemon's relay, the
 * game paused meanwhile) or, with --launch, in a named scene of a
 * headless Chromium.  It prints the counters of every frame, the one that
 * replays the hitch's own frame marked, what moved in it and what the
 * game added (entities, the line that built them).
 *
 * Fidelity is "view": the camera, the viewport, the pixel ratio, the
 * visibility of track()ed entities and the frames' times — not the game's
 * own state (physics, mixers, spawn queues, its random numbers).  A spike
 * that came from those is not replayed, and the output says which of the
 * recorded counters moved in the replay and which did not.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/base.h"
#include "cli/benchrun.h"
#include "cli/cli.h"
#include "cli/pagerun.h"
#include "cli/repro.h"
#include "cli/verbs.h"
#include "ledger/ledger.h"
#include "project/project.h"
#include "project/statedir.h"

/* reading the page's answer (cli.h): absent or of another type is 0, "" */
#define get(o, k)	cli_get(o, k)
#define num(o, k)	cli_num(o, k, 0)
#define str(o, k)	cli_str(o, k, "")

#define REPRO_OPEN_MS	120000		/* the start, the load: each */
#define VIEW_MAX	(64 * 1024)	/* the daemon keeps none larger */
#define LINE_MAX_	(1024 * 1024)	/* a record line, at most */

static int
offset_ok(const char *s)
{
	size_t	n = strspn(s, "0123456789");

	return n > 0 && n <= 15 && s[n] == '\0';
}

int
repro_hitch_ok(const char *s)
{
	return s != NULL && (ledger_ref_ok(s) || offset_ok(s));
}

/*
 * The snapshot ref of the hitch whose line starts at byte `at` of
 * perf.jsonl.  0 with ref, or -ENOENT/-EINVAL with why.
 */
static int
ref_at(const char *project, const char *at, char *ref, size_t rcap,
    char *why, size_t cap)
{
	char		 path[PATH_MAX], *buf, *nl;
	long long	 off = strtoll(at, NULL, 10);
	ssize_t		 n;
	cJSON		*rec;
	int		 fd, rc;

	if (project_path(project, "perf.jsonl", path, sizeof(path)))
		return base_say(why, cap, -ENAMETOOLONG, "the project path is "
		    "too long");
	if ((rc = project_open(path, O_RDONLY, 0, &fd)) != 0)
		return base_say(why, cap, -ENOENT, "%s: %s", path,
		    project_strerror(rc));
	if ((buf = malloc(LINE_MAX_ + 2)) == NULL) {
		close(fd);
		return base_say(why, cap, -ENOMEM, "out of memory");
	}
	/* the byte before the offset must end a line: an offset inside a
	   record is not a record */
	n = off > 0 ? pread(fd, buf, LINE_MAX_ + 1, off - 1) :
	    pread(fd, buf + 1, LINE_MAX_, 0);
	close(fd);
	if (off == 0) {
		buf[0] = '\n';
		n = n < 0 ? n : n + 1;
	}
	if (n <= 1 || buf[0] != '\n') {
		free(buf);
		return base_say(why, cap, -ENOENT, "no record starts at byte "
		    "%s of %s (issues --fp prints each occurrence's offset)",
		    at, path);
	}
	buf[n] = '\0';
	if ((nl = strchr(buf + 1, '\n')) != NULL)
		*nl = '\0';
	rec = cJSON_Parse(buf + 1);
	free(buf);
	if (!cJSON_IsObject(rec) || strcmp(str(rec, "type"), "hitch") != 0) {
		cJSON_Delete(rec);
		return base_say(why, cap, -ENOENT, "the record at byte %s of "
		    "%s is not a hitch", at, path);
	}
	if (!ledger_ref_ok(str(rec, "snapshotRef"))) {
		cJSON_Delete(rec);
		return base_say(why, cap, -ENOENT, "the hitch at byte %s has "
		    "no view snapshot (a recorder before snapshots, or its "
		    "ring no longer held the frames 30 before it)", at);
	}
	snprintf(ref, rcap, "%s", str(rec, "snapshotRef"));
	cJSON_Delete(rec);
	return 0;
}

/* The view snapshot `ref`, parsed: 0 with *view, or -ENOENT with why. */
static int
view_read(const char *project, const char *ref, cJSON **view, char *why,
    size_t cap)
{
	char	 name[96], path[PATH_MAX], *text;
	size_t	 len;
	int	 rc;

	*view = NULL;
	snprintf(name, sizeof(name), "snapshots/%s.json", ref);
	if (project_path(project, name, path, sizeof(path)))
		return base_say(why, cap, -ENAMETOOLONG, "the project path is "
		    "too long");
	if ((text = malloc(VIEW_MAX + 1)) == NULL)
		return base_say(why, cap, -ENOMEM, "out of memory");
	if ((rc = statedir_read(path, text, VIEW_MAX + 1, &len)) != 0 ||
	    len > VIEW_MAX) {
		free(text);
		return base_say(why, cap, -ENOENT, "%s %s", path,
		    rc == -ENOENT ? "is not there: the page could not send "
		    "it, or more than 256 newer hitches pushed it out" : rc ?
		    strerror(-rc) : "is larger than a snapshot");
	}
	*view = cJSON_ParseWithLength(text, len);
	free(text);
	if (!cJSON_IsObject(*view) || num(*view, "v") != 1 ||
	    !cJSON_IsArray(get(*view, "frames"))) {
		cJSON_Delete(*view);
		*view = NULL;
		return base_say(why, cap, -ENOENT, "%s is not a view snapshot",
		    path);
	}
	return 0;
}

/* The page's answer, checked: v 1, fidelity view, steps as an array. */
static int
answer_check(const cJSON *d, char *why, size_t cap)
{
	const cJSON	*s;

	if (!cJSON_IsObject(d) || num(d, "v") != 1 ||
	    strcmp(str(d, "fidelity"), "view") != 0 ||
	    !cJSON_IsArray(get(d, "steps")))
		return base_say(why, cap, -EPROTO, "the page's repro runtime "
		    "answered something that is not a replay (v 1, fidelity "
		    "view, steps)");
	cJSON_ArrayForEach(s, get(d, "steps"))
		if (!cJSON_IsObject(get(s, "counters")) ||
		    !cJSON_IsNumber(get(s, "step")))
			return base_say(why, cap, -EPROTO, "the page's replay "
			    "has a frame without its step and counters");
	return 0;
}

int
repro_execute(const struct repro_opts *o, cJSON **doc, char *why,
    size_t cap)
{
	struct pagerun_req	 pq = { o->project, o->scene ? o->scene : "",
				    o->url, o->signals, o->cancel,
				    REPRO_OPEN_MS, 0, 1, o->launch };
	struct pagerun_watch	 w = { BENCH_SETUP_S * 1000 + 10000, 60000,
				    NULL, NULL };
	struct pagerun		*pr = NULL;
	char			 ref[80], err[2048];
	cJSON			*view = NULL, *args;
	int			 rc, sig;

	*doc = NULL;
	if (!repro_hitch_ok(o->hitch)) {
		snprintf(why, cap, "a hitch is its snapshot's ref "
		    "(hitch-<page>-<frame>) or the byte offset of its line in "
		    "perf.jsonl, not '%s'", o->hitch ? o->hitch : "");
		return EXIT_USAGE;
	}
	if (o->launch && o->scene == NULL) {
		snprintf(why, cap, "--launch replays in a named scene: pass "
		    "--scene S (without --launch: the game tab already open)");
		return EXIT_USAGE;
	}
	if (ledger_ref_ok(o->hitch))
		snprintf(ref, sizeof(ref), "%s", o->hitch);
	else if (ref_at(o->project, o->hitch, ref, sizeof(ref), why, cap))
		return EXIT_NOTHING;
	if (view_read(o->project, ref, &view, why, cap) != 0)
		return EXIT_NOTHING;
	if ((args = cJSON_CreateObject()) == NULL) {
		cJSON_Delete(view);
		snprintf(why, cap, "out of memory");
		return EXIT_NOTHING;
	}
	cJSON_AddItemToObject(args, "view", view);
	cJSON_AddNumberToObject(args, "frames", o->frames);
	cJSON_AddNumberToObject(args, "seed", PAGERUN_SEED);
	cJSON_AddNumberToObject(args, "setupTimeoutMs", BENCH_SETUP_S * 1000);
	cJSON_AddNumberToObject(args, "waitSceneMs", 10000);
	if (o->scene != NULL)
		cJSON_AddStringToObject(args, "scene", o->scene);
	pq.deadline = base_mono_ms() + o->timeout_ms;
	if ((rc = pagerun_open(&pq, &pr, &sig, err, sizeof(err))) != 0) {
		cJSON_Delete(args);
		snprintf(why, cap, "no replay of %s: %s", ref, rc == -EINTR ?
		    "interrupted" : err);
		if (rc == -EINTR && sig != 0)
			return 128 + sig;
		return rc == -ENAMETOOLONG || rc == -EDESTADDRREQ ? EXIT_USAGE :
		    EXIT_NOTHING;
	}
	rc = pagerun_call(pr, "repro", args, &w, doc, err, sizeof(err));
	cJSON_Delete(args);
	sig = rc == -EINTR ? pagerun_signal(pr) : 0;
	if (pagerun_close(pr) != 0 && rc == 0) {
		snprintf(err, sizeof(err), "the browser's processes outlived "
		    "SIGKILL");
		rc = -EBUSY;
	}
	if (rc == 0 && answer_check(*doc, err, sizeof(err)) != 0)
		rc = -EPROTO;
	if (rc != 0) {
		cJSON_Delete(*doc);
		*doc = NULL;
		snprintf(why, cap, "no replay of %s: %s", ref, err);
		return sig != 0 ? 128 + sig : EXIT_NOTHING;
	}
	return EXIT_OK;
}

/* "calls +1000, geometries +1000" from a step's delta */
static void
moved(const cJSON *delta, char *out, size_t cap)
{
	const cJSON	*d;
	size_t		 n = 0;

	out[0] = '\0';
	cJSON_ArrayForEach(d, delta)
		if (cJSON_IsNumber(d) && d->valuedouble != 0 && n < cap)
			n += (size_t)snprintf(out + n, cap - n, "%s%s %+.0f",
			    n ? ", " : "", d->string, d->valuedouble);
}

static void
print_text(const cJSON *d)
{
	const cJSON	*h = get(d, "hitch"), *rec = get(h, "recorded"),
			*cat = get(d, "comparedAt"), *s, *c, *n, *a, *cmp;
	int		 soft = strcmp(str(d, "regime"), "hardware") != 0;
	/* the step held against the record: the hitch's own, or the frame
	 * before it when the record says its stall was that frame's work */
	int		 before = strcmp(str(cat, "why"), "frame-before") == 0;
	int		 at = (int)num(before ? cat : h, "step");
	const char	*where = before ? "the frame before the hitch's" :
			    "the hitch's frame";
	char		 line[512];

	moved(get(rec, "delta"), line, sizeof(line));
	printf("repro of %s: hitch at frame %.0f (%s, %.1f ms; recorded %s)\n",
	    str(d, "ref"), num(h, "frame"), str(rec, "guess"),
	    num(rec, "frameMs"), line[0] ? line : "no counter moved");
	if (before) {
		moved(get(get(rec, "before"), "delta"), line, sizeof(line));
		printf("its stall was the work of the frame before, %.0f "
		    "(recorded %s): the replay is held against that frame\n",
		    num(cat, "frame"), line[0] ? line : "no counter moved");
	}
	printf("the view restored %s, %d frames stepped at the recorded "
	    "times (fidelity \"view\")%s\n", strcmp(str(d, "where"),
	    "open-tab") == 0 ? "in the open tab (the game paused meanwhile)" :
	    "in the launched scene", cJSON_GetArraySize(get(d, "steps")),
	    soft ? "; a software renderer's times: reported, never compared" :
	    "");
	printf("  %4s %8s %9s %8s %7s %9s %6s %6s %6s  %s\n", "step", "frame",
	    "work ms", "render", "calls", "triangles", "progs", "geoms",
	    "texs", "moved");
	cJSON_ArrayForEach(s, get(d, "steps")) {
		c = get(s, "counters");
		moved(get(s, "delta"), line, sizeof(line));
		printf("%s %4.0f %8.0f %9.2f %8.2f %7.0f %9.0f %6.0f %6.0f "
		    "%6.0f  %s\n", (int)num(s, "step") == at ? ">" : " ",
		    num(s, "step"), num(s, "frame"), num(s, "workMs"),
		    num(s, "insideRenderMs"), num(c, "calls"),
		    num(c, "triangles"), num(c, "programs"),
		    num(c, "geometries"), num(c, "textures"), line);
		if ((a = get(s, "added")) != NULL) {
			const cJSON	*e;

			cJSON_ArrayForEach(e, get(a, "sites"))
				printf("        added %.0f meshes (%s%s) built "
				    "at %s\n", num(e, "meshes"), str(e, "id"),
				    num(e, "entities") > 1 ? ", …" : "",
				    str(e, "site"));
		}
	}
	if (at == 0)
		printf("%s was not among those stepped\n", before ?
		    "the frame before the hitch's" : "the hitch's own frame");
	else if (cJSON_IsNull(get(d, "reproduced")))
		printf("%s is step %d (>); no counter moved in it when "
		    "recorded: compare its time (not a verdict)\n", where, at);
	else {
		printf("%s: in %s (step %d) %s\n",
		    cJSON_IsTrue(get(d, "reproduced")) ? "REPRODUCED" :
		    "NOT REPRODUCED", where, at,
		    cJSON_IsTrue(get(d, "reproduced")) ?
		    "every counter that moved when recorded moved the same "
		    "way" :
		    "a counter that moved when recorded did not move the same "
		    "way: the cause is in what a view does not restore");
		cJSON_ArrayForEach(cmp, get(d, "compared"))
			if (cJSON_IsNumber(get(cmp, "replayed")))
				printf("  %-10s recorded %+.0f, replayed "
				    "%+.0f\n", cmp->string, num(cmp,
				    "recorded"), num(cmp, "replayed"));
			else
				printf("  %-10s recorded %+.0f, not measured "
				    "in the replay\n", cmp->string,
				    num(cmp, "recorded"));
	}
	printf("not restored: %s\n", str(d, "notRestored"));
	cJSON_ArrayForEach(n, get(d, "notes"))
		if (cJSON_IsString(n))
			printf("note: %s\n", n->valuestring);
}

static const char usage[] =
"usage: sloptimize repro HITCH [--frames N] [--timeout SECONDS] [--json]\n"
"       sloptimize repro HITCH --launch --scene S [--url URL] [--frames N]\n"
"\n"
"A hitch replayed from its view snapshot: HITCH is the snapshot's ref\n"
"(hitch-<page>-<frame>, a hitch record's snapshotRef) or the byte offset\n"
"of the hitch's line in perf.jsonl (issues --fp prints both).  The camera,\n"
"viewport, pixel ratio and visibility of track()ed entities of the frames\n"
"from 30 before the hitch are restored, and N frames (default 35) stepped\n"
"at the recorded times, each drawn with its recorded camera; per frame the\n"
"counters, the time, what moved and what the game added, with the hitch's\n"
"own frame marked and compared with what was recorded.\n"
"\n"
"Fidelity \"view\": the game's own state (physics, mixers, spawn queues,\n"
"its random numbers) is not restored; the game runs its own logic from\n"
"where it is.  Without --launch: in the game tab open now, through the\n"
"daemon (the game is paused while it runs).\n"
"\n"
"  --frames N       frames to step (default 35, at most 600)\n"
"  --launch         in a headless Chromium, in scene S (--scene)\n"
"  --scene S        the named scene to set up first (with --launch)\n"
"  --url URL        the game's URL (default: .sloptimize/dev.json's)\n"
"  --timeout S      the whole deadline (default 120 s)\n"
"\n"
"exit: 0 replayed (the output says whether the hitch's counters moved as\n"
"recorded), 2 usage, 4 no snapshot, daemon, game tab, browser or scene;\n"
"130/143 interrupted.  docs/attribute.md.\n";

int
verb_repro(int argc, char **argv)
{
	struct cli_common	 c;
	struct repro_opts	 o = { 0 };
	const char		*frames = NULL, *timeout = NULL, *pos[2];
	char			 why[4096];
	int			 npos = 2;
	cJSON			*doc;
	int			 rc;
	long			 n;
	const struct cli_opt	 opts[] = {
		{ "frames", OPT_ARG, &frames },
		{ "launch", OPT_FLAG, &o.launch },
		{ "scene", OPT_ARG, &o.scene },
		{ "url", OPT_ARG, &o.url },
		{ "timeout", OPT_ARG, &timeout },
		{ NULL, 0, NULL }
	};

	if ((rc = cli_parse(argc, argv, opts, &c, usage, pos, &npos)) >= 0)
		return rc;
	o.project = c.project;
	o.frames = REPRO_FRAMES;
	o.timeout_ms = REPRO_TIMEOUT_MS;
	if (npos != 1) {
		fprintf(stderr, "sloptimize repro: name one hitch (its "
		    "snapshotRef, or its offset in perf.jsonl)\n%s", usage);
		return EXIT_USAGE;
	}
	o.hitch = pos[0];
	if (frames != NULL) {
		if (cli_whole("repro", "frames", frames, 1, 600, &n) != 0)
			return EXIT_USAGE;
		o.frames = (int)n;
	}
	if (timeout != NULL) {
		if (cli_whole("repro", "timeout", timeout, 1, 3600, &n) != 0)
			return EXIT_USAGE;
		o.timeout_ms = (int)n * 1000;
	}
	o.signals = 1;
	rc = repro_execute(&o, &doc, why, sizeof(why));
	if (rc > 128) {
		fprintf(stderr, "sloptimize repro: interrupted\n");
		return rc;
	}
	if (doc == NULL) {
		fprintf(stderr, "sloptimize repro: %s\n", why);
		return rc;
	}
	if (c.json)
		print_json(doc);
	else
		print_text(doc);
	cJSON_Delete(doc);
	return rc;
}
