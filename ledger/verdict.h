/*
 * verdict — what `sloptimize bench --compare` concludes from two benches
 * (DESIGN §16, docs/bench.md "How a verdict is reached").  Pure: numbers
 * in, verdicts out; the files are project/bench.h's.
 *
 * Every metric gets its own verdict from its per-run values:
 *
 *   value        the median of the runs' values
 *   noise floor  the spread of the runs' values (max − min)
 *   timing       improved / regressed only when |Δ| exceeds both the
 *                pooled floor (the two floors added: the farthest apart
 *                two medians can sit while one value lies inside both
 *                spreads) and 1 % of the before value; otherwise
 *                no-detectable-change.  Compared only in a hardware
 *                regime and with two runs or more; otherwise
 *                not-compared, with the reason.
 *   counters     exact: any difference decides.  A counter whose runs
 *                disagree (the scene is not deterministic) is unstable:
 *                it is judged like timing, and says so.
 *
 * The overall verdict: incomparable when the configuration hashes, the
 * regimes or the GPU strings differ; otherwise decided by the frame's
 * cost — frame time (median and p95) in a hardware regime, draw calls and
 * triangles in a software or unknown one: regressed if one of those
 * regressed, else improved if one improved, else no-detectable-change.
 * Other metrics are reported, never decisive.
 */
#ifndef LEDGER_VERDICT_H
#define LEDGER_VERDICT_H

#include <stddef.h>

#define VERDICT_RUNS_MAX	32
#define VERDICT_HASH_MAX	80	/* "sha256:" and 64 hex digits */
#define VERDICT_GPU_MAX		256
#define VERDICT_WHY_MAX		200
#define VERDICT_MIN_CHANGE	0.01	/* 1 % of the before value */

enum verdict {
	VERDICT_NONE = 0,	/* not measured in both benches */
	VERDICT_IMPROVED,
	VERDICT_REGRESSED,
	VERDICT_NO_CHANGE,	/* no-detectable-change: a result */
	VERDICT_NOT_COMPARED,	/* timing a software regime cannot give */
	VERDICT_INCOMPARABLE,
};

enum verdict_regime { REGIME_UNKNOWN = 0, REGIME_SOFTWARE, REGIME_HARDWARE };

enum verdict_kind { VERDICT_TIMING, VERDICT_COUNTER };

/* The metrics, in the order they are reported. */
enum verdict_metric {
	M_FRAME_MEDIAN, M_FRAME_P95, M_RENDER_INSIDE, M_GPU_MEDIAN, M_GPU_P95,
	M_CALLS, M_TRIANGLES, M_POINTS, M_LINES, M_PROGRAMS, M_GEOMETRIES,
	M_TEXTURES,
	METRIC_N
};

struct verdict_metric_def {
	const char		*name;	/* "frame.medianMs", "render.calls" */
	enum verdict_kind	 kind;
	const char		*unit;	/* "ms", "" */
	const char		*label;	/* "frame median", "draw calls" */
};
extern const struct verdict_metric_def verdict_metrics[METRIC_N];

/* One metric's values, one per run; n 0: not measured. */
struct verdict_series {
	int	n;
	double	run[VERDICT_RUNS_MAX];
};

/* What a comparison needs of one bench. */
struct verdict_bench {
	char			hash[VERDICT_HASH_MAX];
	enum verdict_regime	regime;
	char			gpu[VERDICT_GPU_MAX];	/* "" when unknown */
	struct verdict_series	m[METRIC_N];
};

struct verdict_line {
	enum verdict	v;
	int		measured;	/* in both */
	double		before, after, delta;	/* medians of the runs */
	double		floor_before, floor_after, pooled, threshold;
	int		unstable;	/* a counter whose runs disagree */
	int		decisive;
	char		why[VERDICT_WHY_MAX];
};

struct verdict_result {
	enum verdict		overall;
	enum verdict_regime	regime;		/* the benches' (when one) */
	char			why[4 * VERDICT_WHY_MAX];
	struct verdict_line	m[METRIC_N];
	int			decided_by[METRIC_N];	/* the decisive set */
	int			ndecided;
};

/* Median and spread (max − min) of v[0..n); NaN for n 0. */
double	verdict_median(const double *v, int n);
double	verdict_spread(const double *v, int n);

/* Do all runs of every measured counter agree?  1 yes, 0 no. */
int	verdict_counters_stable(const struct verdict_bench *b);

/* Compare before with after.  Cannot fail. */
void	verdict_compare(const struct verdict_bench *before,
	    const struct verdict_bench *after, struct verdict_result *out);

/* "improved", "regressed", "no-detectable-change", "not-compared",
 * "incomparable", "not-measured". */
const char *verdict_name(enum verdict v);
/* The exit code of `bench --compare` for an overall verdict: 0 improved,
 * 1 regressed, 5 no-detectable-change, 3 incomparable. */
int	verdict_exit(enum verdict v);

const char *verdict_regime_name(enum verdict_regime r);
/* "hardware", "software", anything else unknown. */
enum verdict_regime verdict_regime_parse(const char *s);

/* What a bench's configuration is, for its hash: what must be equal for
 * two benches to compare — never the game's code (its change is what is
 * compared), never the budgets. */
struct verdict_config {
	const char	*scene;
	int		 frames, warmup, runs;
	int		 width, height;		/* the viewport */
	double		 pixel_ratio;
	const char	*clock;			/* "virtual-60hz" */
	long		 seed;			/* Math.random's */
	const char	*browser;		/* "Chrome/156.0.8078.114" */
};

/*
 * The canonical text of a configuration (docs/bench.md shows it): one
 * "key=value" line each, in a fixed order, after a version line.  Control
 * characters in the strings become spaces.  Returns its length, or -1 if
 * it does not fit in cap.
 */
int	verdict_config_text(const struct verdict_config *c, char *out,
	    size_t cap);
/* "sha256:" and the SHA-256 of that text.  0, or -1 if it does not fit. */
int	verdict_config_hash(const struct verdict_config *c,
	    char out[VERDICT_HASH_MAX]);

#endif
