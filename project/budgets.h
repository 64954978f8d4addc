/*
 * budgets — sloptimize.budgets.json, the performance budgets a game
 * declares at its root and commits like code (docs/budgets.md), and the
 * one judgement of a measurement against them that `check`, `hook-status`,
 * the MCP tools and the daemon's profile.json all use.
 *
 *   {
 *     "perf.budget.draw_calls": 300,
 *     "perf.budget.frame_ms_p95": { "max": 16.7, "level": "warn" }
 *   }
 *
 * A budget is a number (its max, at level "error") or {max, level}, level
 * "error" or "warn" (Lighthouse CI's levels).  Anything else is an error
 * that names the key and says why: an unknown key (a typo would otherwise
 * be a budget nobody checks), a key twice, a max that is negative or not
 * a finite number, an unknown level or member.  Only "$schema" and
 * "$comment" may sit beside the budgets.
 *
 * budgets_parse and budgets_judge are pure (no I/O, no allocation kept):
 * the fuzz harness and the cmocka vectors call them directly.
 * budgets_read blocks on the disk.
 */
#ifndef PROJECT_BUDGETS_H
#define PROJECT_BUDGETS_H

#include <stddef.h>

#include <cjson/cJSON.h>

#define BUDGETS_FILE		"sloptimize.budgets.json"
#define BUDGETS_MAX_BYTES	(64 * 1024)	/* a bigger file is refused */
#define BUDGETS_WHY_MAX		1024		/* room for every error */

enum budget_metric {
	BUDGET_DRAW_CALLS = 0,	/* render.calls, a counter */
	BUDGET_TRIANGLES,	/* render.triangles, a counter */
	BUDGET_PROGRAMS,	/* memory.programs, a counter */
	BUDGET_FRAME_MS_P95,	/* frame.p95Ms, timing */
	BUDGET_GPU_MS_P95,	/* gpu.p95Ms, timing */
	BUDGET_N
};

enum budget_level { BUDGET_ERROR = 0, BUDGET_WARN };

struct budget {
	int			 declared;
	double			 max;		/* finite, >= 0 */
	enum budget_level	 level;
};

struct budgets {
	struct budget	 b[BUDGET_N];
	int		 ndeclared;
};

/* "perf.budget.draw_calls" */
const char	*budgets_key(enum budget_metric m);
/* "draw_calls" */
const char	*budgets_name(enum budget_metric m);
/* Where profile.json holds it: "render.calls" */
const char	*budgets_path(enum budget_metric m);
/* 1 for frame and GPU times, 0 for the exact counters. */
int		 budgets_is_timing(enum budget_metric m);
/* "ms" or "" */
const char	*budgets_unit(enum budget_metric m);
const char	*budgets_level_name(enum budget_level l);

/*
 * Parse the file's bytes text[0..len) (a UTF-8 BOM is allowed).  0 and
 * *out filled (ndeclared may be 0: an empty object declares nothing), or
 * -EINVAL and why[cap] holding one line per fault, each starting with the
 * key it is about ("perf.budget.draw_calls.max: …"), the file's first
 * fault first.  Never reads past text[len).
 */
int	budgets_parse(const char *text, size_t len, struct budgets *out,
	    char *why, size_t cap);

/*
 * Read <project>/sloptimize.budgets.json.  0 with *found 1 and *out, or
 * 0 with *found 0 when the file does not exist (nothing declared); a
 * malformed file -EINVAL with why (as budgets_parse); -EFBIG past
 * BUDGETS_MAX_BYTES, -ESPIPE when it is not a regular file, or -errno,
 * each with why.  Never waits on a FIFO.
 */
int	budgets_read(const char *project, struct budgets *out, int *found,
	    char *why, size_t cap);

/* --- judging a measurement ------------------------------------------------ */

enum budget_status {
	BUDGET_UNDECLARED = 0,	/* not in the file */
	BUDGET_INSIDE,		/* value <= max */
	BUDGET_BREACHED,	/* value > max (at the budget's level) */
	BUDGET_NOT_JUDGED,	/* measured, but not to be judged: `why` */
	BUDGET_UNMEASURED,	/* the measurement has no value for it */
	BUDGET_SKIPPED		/* left out on purpose (--counters-only) */
};

struct budget_result {
	enum budget_status	 status;
	int			 has_value;
	double			 value;
	double			 ratio;		/* value / max; INFINITY when
						   max is 0 and value > 0 */
	const char		*why;		/* static; "" when inside or
						   breached */
};

struct budget_judgement {
	struct budget_result	 r[BUDGET_N];
	int			 declared, checked;
	int			 breached_error, breached_warn;
	int			 not_judged, unmeasured, skipped;
	/* "hardware", "software" or "unknown" (a profile without one) */
	const char		*regime;
	int			 paused;
};

#define BUDGETS_COUNTERS_ONLY	1	/* judge the counters only */

/*
 * Judge `profile` (profile.json's shape: render.calls, frame.p95Ms, …,
 * regime, paused) against `b`.  Timing budgets are not judged in a
 * `software` regime (timings from a software renderer are not to be
 * trusted, seed §6.4) nor in a paused profile; with
 * BUDGETS_COUNTERS_ONLY they are skipped.  A value that is not a finite
 * number >= 0 is unmeasured, never taken as 0.  Can't fail.
 */
void	budgets_judge(const struct budgets *b, const cJSON *profile,
	    unsigned flags, struct budget_judgement *j);

/* One line's verdict: "inside", "breached", "not-judged", "unmeasured",
 * "skipped" (schemas/check.json). */
const char	*budgets_status_name(enum budget_status s);

#endif
