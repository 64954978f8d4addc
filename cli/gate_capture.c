/*
 * gate_capture — where the correctness gate gets its frame (gate.h).
 *
 * The page from cli/pagerun.h — opened in a headless Chromium with
 * `--launch` (the same launch, injection, URL and take-down as `bench
 * --launch`), else the tab the developer has open, through the daemon's
 * relay — then one call of the page runtime's sloptimize.bench.capture(…)
 * (page-runtime/bench.js): the scene set up under the virtual clock, its
 * settle frames and GATE_WARMUP frames stepped, one more frame stepped
 * and the canvas read with toDataURL in the same task as that frame's
 * render.  The PNG comes back as base64 in the call's answer and is
 * decoded here; it is outside input, checked strictly.  The open tab's
 * frame has the developer's window size and browser: a golden recorded in
 * a launched browser is another configuration (its hash says so).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "cli/benchrun.h"
#include "cli/gate.h"
#include "cli/pagerun.h"
#include "ledger/verdict.h"

#define OPEN_MS		120000	/* the start, the load: each at most this,
				   and never past the capture's deadline */

/* The captured frame is the first one a default bench measures. */
_Static_assert(GATE_WARMUP == BENCH_WARMUP, "the gate's frame is the "
    "bench's first measured frame");

/*
 * Strict base64 (RFC 4648 §4, padded): the page's PNG.  0 with *out and
 * *len (the caller frees), -EINVAL for anything that is not base64,
 * -ENOMEM.
 */
static int
unbase64(const char *in, void **out, size_t *len)
{
	static signed char	 val[256];
	static int		 ready;
	size_t			 n = strlen(in), i, o = 0, pad = 0;
	unsigned char		*buf;
	int			 c;

	if (!ready) {
		memset(val, -1, sizeof(val));
		for (c = 0; c < 26; c++) {
			val['A' + c] = (signed char)c;
			val['a' + c] = (signed char)(26 + c);
		}
		for (c = 0; c < 10; c++)
			val['0' + c] = (signed char)(52 + c);
		val['+'] = 62;
		val['/'] = 63;
		ready = 1;
	}
	if (n == 0 || n % 4 != 0)
		return -EINVAL;
	if (in[n - 1] == '=')
		pad = in[n - 2] == '=' ? 2 : 1;
	if ((buf = malloc(n / 4 * 3)) == NULL)
		return -ENOMEM;
	for (i = 0; i < n; i += 4) {
		int		 k, q[4];
		unsigned	 v;

		for (k = 0; k < 4; k++) {
			unsigned char	ch = (unsigned char)in[i + k];

			if (ch == '=' && i + 4 == n && k >= 4 - (int)pad)
				q[k] = 0;
			else if ((q[k] = val[ch]) < 0) {
				free(buf);
				return -EINVAL;
			}
		}
		v = (unsigned)q[0] << 18 | (unsigned)q[1] << 12 |
		    (unsigned)q[2] << 6 | (unsigned)q[3];
		buf[o++] = (unsigned char)(v >> 16);
		buf[o++] = (unsigned char)(v >> 8);
		buf[o++] = (unsigned char)v;
	}
	*out = buf;
	*len = o - pad;
	return 0;
}

static const cJSON *
get(const cJSON *o, const char *k)
{
	return cJSON_GetObjectItemCaseSensitive(o, k);
}

/* The configHash a default bench of the scene in this browser gets
 * (docs/bench.md), so a golden and a bench can be matched. */
static void
config_hash(const char *scene, const cJSON *res, const char *browser,
    char *out, size_t cap)
{
	struct verdict_config	 vc;
	const cJSON		*vp = get(res, "viewport"),
				*clk = get(res, "clock"), *x;
	char			 hash[VERDICT_HASH_MAX];

	memset(&vc, 0, sizeof(vc));
	vc.scene = scene;
	vc.frames = BENCH_FRAMES;
	vc.warmup = BENCH_WARMUP;
	vc.runs = BENCH_RUNS;
	vc.width = cJSON_IsNumber(x = get(vp, "width")) ? x->valueint : 0;
	vc.height = cJSON_IsNumber(x = get(vp, "height")) ? x->valueint : 0;
	vc.pixel_ratio = cJSON_IsNumber(x = get(vp, "devicePixelRatio")) ?
	    x->valuedouble : 0;
	vc.clock = cJSON_GetStringValue(get(clk, "mode"));
	/* the page's word: a seed past ±2^53 (beyond what a JSON number
	 * holds exactly, and on to where converting it to long is
	 * undefined) is no seed; every 32-bit seed the clock takes is kept */
	x = get(clk, "seed");
	vc.seed = cJSON_IsNumber(x) && x->valuedouble >= -9007199254740992.0 &&
	    x->valuedouble <= 9007199254740992.0 ? (long)x->valuedouble :
	    PAGERUN_SEED;
	vc.browser = browser;
	*out = '\0';
	if (vc.clock != NULL && vc.width > 0 && vc.height > 0 &&
	    vc.pixel_ratio > 0 && verdict_config_hash(&vc, hash) == 0)
		snprintf(out, cap, "%s", hash);
}

int
gate_capture(const struct gate_capture_req *req, struct gate_frame *out,
    char *why, size_t cap)
{
	struct pagerun_req	 pq = { req->project, req->scene, req->url,
				    req->signals, req->cancel, OPEN_MS, 0, 0,
				    req->launch };
	struct pagerun_watch	 w = { BENCH_SETUP_S * 1000 + 10000,
				    60000, NULL, NULL };
	struct pagerun		*pr = NULL;
	char			 err[2048], browser[128];
	const char		*b64;
	cJSON			*res = NULL, *opts;
	int			 rc, sig = 0, timeout = req->timeout_ms > 0 ?
				    req->timeout_ms : GATE_CAPTURE_MS;

	memset(out, 0, sizeof(*out));
	pq.deadline = base_mono_ms() + timeout;
	if ((rc = pagerun_open(&pq, &pr, &sig, err, sizeof(err))) != 0) {
		out->signal = rc == -EINTR ? sig : 0;
		snprintf(why, cap, "%s", rc == -EINTR ? "interrupted" : err);
		return rc;
	}
	opts = cJSON_CreateObject();
	cJSON_AddStringToObject(opts, "scene", req->scene);
	cJSON_AddNumberToObject(opts, "warmup", GATE_WARMUP);
	cJSON_AddNumberToObject(opts, "seed", PAGERUN_SEED);
	cJSON_AddNumberToObject(opts, "setupTimeoutMs", BENCH_SETUP_S * 1000);
	cJSON_AddNumberToObject(opts, "waitSceneMs", 10000);
	rc = pagerun_call(pr, "capture", opts, &w, &res, err, sizeof(err));
	cJSON_Delete(opts);
	if (rc == -EINTR)
		out->signal = pagerun_signal(pr);
	snprintf(browser, sizeof(browser), "%s", pagerun_browser(pr));
	if (pagerun_close(pr) != 0 && rc == 0) {
		snprintf(err, sizeof(err), "the browser's processes outlived "
		    "SIGKILL");
		rc = -EBUSY;
	}
	if (rc != 0) {
		if (rc == -ETIMEDOUT && strstr(err, "deadline") != NULL)
			snprintf(why, cap, "no frame of scene '%s' within the "
			    "capture's deadline of %d s: %s", req->scene,
			    timeout / 1000, err);
		else
			snprintf(why, cap, "no frame of scene '%s': %s",
			    req->scene, err);
		cJSON_Delete(res);
		return rc;
	}
	b64 = cJSON_GetStringValue(get(res, "png"));
	if (!cJSON_IsObject(res) || !cJSON_IsNumber(get(res, "v")) ||
	    get(res, "v")->valueint != 1 || b64 == NULL) {
		snprintf(why, cap, "the page's capture runtime answered "
		    "something that is not a frame (v 1 with a png)");
		cJSON_Delete(res);
		return -EPROTO;
	}
	if ((rc = unbase64(b64, &out->png, &out->len)) != 0) {
		snprintf(why, cap, "the page's frame of scene '%s' is not "
		    "base64", req->scene);
		cJSON_Delete(res);
		return rc;
	}
	config_hash(req->scene, res, browser, out->config_hash,
	    sizeof(out->config_hash));
	out->frame = cJSON_IsNumber(get(res, "frame")) ?
	    get(res, "frame")->valueint : 0;
	cJSON_Delete(res);
	return 0;
}
