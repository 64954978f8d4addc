/*
 * benchrun — what `sloptimize bench` does, apart from its options and
 * its printing, so the MCP tool run_bench does exactly the same:
 *
 *   run      a bench of a named scene in a launched browser
 *            (browser/browser.h): the page runtime injected before any
 *            script, the scene set up, warm-up and R × N frames, the
 *            result checked and written to .sloptimize/bench/;
 *   compare  two benches (files, or "last"), per-metric and overall
 *            verdicts (ledger/verdict.h), a line appended to
 *            bench-history.jsonl;
 *   budgets  the bench (or the after bench) held against
 *            sloptimize.budgets.json, each with its distance.
 *
 * The outcome is one JSON document (schemas/bench-output.json) and an
 * exit code: a run 0, or 1 when a budget at level error is breached; a
 * comparison 0 improved, 1 regressed, 5 no-detectable-change, 3
 * incomparable; 4 the environment (no browser, no page, no scene, no
 * bench to compare with, a page that hangs or crashes); 2 a request that
 * makes no sense (said in err).
 */
#ifndef CLI_BENCHRUN_H
#define CLI_BENCHRUN_H

#include <stdatomic.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#define BENCH_EXIT_OK		0
#define BENCH_EXIT_REGRESSED	1	/* or a budget at level error */
#define BENCH_EXIT_USAGE	2
#define BENCH_EXIT_INCOMPARABLE	3
#define BENCH_EXIT_ENV		4
#define BENCH_EXIT_NO_CHANGE	5

/* The defaults of every way in: the verb, run_bench, check --bench. */
#define BENCH_FRAMES		600	/* measured frames a run */
#define BENCH_WARMUP		120
#define BENCH_RUNS		3
#define BENCH_SETUP_S		60	/* the scene's setup deadline */

struct bench_req {
	const char	*project;
	const char	*scene;		/* run a bench of it; NULL: files only */
	int		 launch;	/* in a launched browser */
	const char	*url;		/* NULL: .sloptimize/dev.json's */
	int		 frames, warmup, runs;
	int		 setup_timeout_ms;
	const char	*compare;	/* "last", or a bench */
	const char	*compare_b;	/* the after bench, or NULL */
	const char	*change_ref, *change;
	int		 signals;	/* SIGINT/SIGTERM end it (the CLI) */
	const atomic_int *cancel;	/* or another thread (MCP) */
	int		 progress;	/* progress lines on stderr */
	int64_t		 now_ms;
};

struct bench_outcome {
	int	 exit;
	int	 signal;	/* the bench was interrupted by it */
	cJSON	*doc;		/* the output document; NULL only for 2 */
	char	 err[2048];	/* what went wrong (exits 2, 3, 4) */
};

/* Run what req asks.  Fills out; the caller frees out->doc. */
void	bench_execute(const struct bench_req *req, struct bench_outcome *out);

/* The meaning of an exit code, as the doctrine reads it. */
const char *bench_exit_meaning(int code, int compared);

#endif
