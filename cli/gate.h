/*
 * gate — `sloptimize gate`: the correctness gate (docs/gate.md).  A frame
 * of a named scene is compared with the golden a person recorded for it,
 * by SSIM per colour channel (ledger/ssim.h); the gate passes when the
 * smallest of R, G and B reaches the threshold.  Goldens are the human's:
 * `gate --record` writes one only on a terminal (asking first) or with
 * --yes, never in --json mode or over MCP, and every golden has its
 * SHA-256 in .sloptimize/goldens.jsonl, so a golden changed any other way
 * is said, loudly, and never judged against.
 *
 * The frame comes from one function, gate_capture (cli/gate_capture.c,
 * on the launched page of cli/pagerun.h: the scene at a fixed step under
 * the virtual clock, the canvas as PNG); everything after the capture is
 * here.  --frame
 * FILE.png gives the comparison a PNG file instead, for tests and tools,
 * and every output says so.
 */
#ifndef CLI_GATE_H
#define CLI_GATE_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#define GATE_THRESHOLD		0.98	/* the default (seed §8.4) */
#define GATE_CAPTURE_MS		300000	/* the whole capture's deadline (the
					 * start, the load, the set-up, the
					 * frames): minutes on a loaded
					 * machine (docs/gate.md) */
#define GATE_WARMUP		120	/* frames stepped after the scene's
					 * settle frames; the next one is the
					 * frame captured: the first frame a
					 * default bench measures */

/* Exit codes (docs/gate.md). */
#define GATE_PASS		0
#define GATE_FAIL		1
#define GATE_USAGE		2
#define GATE_INCOMPARABLE	3	/* sizes differ; the golden is not
					 * a PNG or not the one recorded */
#define GATE_ENVIRONMENT	4	/* no golden, no browser, no frame */

/* What the capture is asked for. */
struct gate_capture_req {
	const char	*project;	/* the game project */
	const char	*scene;		/* a named scene (docs/bench.md) */
	int		 launch;	/* spawn Chromium rather than use the
					 * open tab through the daemon */
	const char	*url;		/* --url, or NULL: .sloptimize/dev.json */
	int		 timeout_ms;	/* the whole capture's deadline; 0:
					 * GATE_CAPTURE_MS */
	int		 signals;	/* SIGINT/SIGTERM end it (the CLI) */
	const atomic_int *cancel;	/* or another thread (MCP) */
};

/* A captured frame. */
struct gate_frame {
	void	*png;			/* the canvas as PNG (free it) */
	size_t	 len;
	char	 config_hash[80];	/* the configHash of a default bench
					 * of the scene here ("sha256:…"), ""
					 * unknown */
	int	 frame;			/* the virtual clock's frame */
	int	 signal;		/* the signal that interrupted it */
};

/*
 * Capture the scene's frame: set up, stepped to its fixed frame under the
 * virtual clock, the canvas as PNG.  Blocks until then or the deadline
 * (never longer: the browser is killed and reaped on every path).  0 with
 * *out filled in, or a negative errno with why[cap] saying what the user
 * can do: -ENOTCONN without launch (no daemon, no tab connected to it,
 * or the tab hidden),
 * -EINTR with out->signal when SIGINT/SIGTERM ended it, anything else the
 * environment's (exit 4).  Implemented in cli/gate_capture.c on
 * cli/pagerun.h.
 */
int	gate_capture(const struct gate_capture_req *req,
	    struct gate_frame *out, char *why, size_t cap);

/* One comparison, as `gate` and the MCP tool run_gate ask for it. */
struct gate_opts {
	const char	*project;
	const char	*scene;
	double		 threshold;
	int		 launch;
	const char	*url;
	const char	*frame_file;	/* --frame: a PNG file, not a capture */
	int		 timeout_ms;	/* the capture's; 0: GATE_CAPTURE_MS */
	int		 signals;	/* as gate_capture_req's */
	const atomic_int *cancel;
};

/*
 * Compare the scene's frame with its golden.  Returns the exit code
 * (GATE_*), with *doc the result (schemas/gate-output.json) for every
 * outcome but a usage error: the verdict, and the evidence as far as
 * there is any.  The frame and the difference picture are written to
 * .sloptimize/gate/<scene>.actual.png and .diff.png.  Blocks (the
 * capture, the disk): the MCP server runs it on the thread pool.
 */
int	gate_compare(const struct gate_opts *o, cJSON **doc, char *why,
	    size_t cap);


/* The verb. */
int	verb_gate(int argc, char **argv);

#define GATE_SCENE_RULE	"a gate scene is named by a letter or digit, " \
	"then up to 63 letters, digits, '_' or '-' (no '.': the gate's " \
	"pictures are S.actual.png and S.diff.png)"
/* Is s a scene the gate takes (a bench scene without a dot)? */
int	gate_scene_ok(const char *s);

#endif
