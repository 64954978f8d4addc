/*
 * bench_budgets — the budgets a bench is held against, read from
 * sloptimize.budgets.json at the game's root (issue 18: `perf.budget.*`
 * keys, each a number or {max, level: "error"|"warn"}).
 *
 * Provisional: `check` and the daemon get the project's one budgets
 * reader (project/budgets.h, built beside this).  This is the bench's
 * own small reader of the same format behind its own header, so the
 * bench can say its distances and exit 1 now; when both are merged, this
 * header's two functions are implemented by — or replaced with — that
 * reader, and nothing else in cli/bench*.c changes.
 */
#ifndef CLI_BENCH_BUDGETS_H
#define CLI_BENCH_BUDGETS_H

#include <limits.h>
#include <stddef.h>

#include <cjson/cJSON.h>

#define BENCH_BUDGETS_FILE	"sloptimize.budgets.json"
#define BENCH_BUDGETS_MAX	8

struct bench_budget {
	const char	*key;		/* "perf.budget.draw_calls" */
	const char	*metric;	/* the bench's "render.calls" */
	const char	*label;		/* "draw calls" */
	const char	*unit;		/* "ms" or "" */
	int		 timing;	/* judged only in a hardware regime */
	double		 max;
	int		 error;		/* level error (else warn) */
};

struct bench_budgets {
	int			declared;	/* the file exists */
	char			file[PATH_MAX];
	int			n;
	struct bench_budget	b[BENCH_BUDGETS_MAX];
};

/*
 * Read <project>/sloptimize.budgets.json.  0 with out (declared 0 when
 * there is no file), or -EINVAL with why naming the file and the key
 * that is wrong — never a silent pass.
 */
int	bench_budgets_load(const char *project, struct bench_budgets *out,
	    char *why, size_t cap);

/*
 * Hold a bench document (project/bench.h's shape) against the budgets:
 * {declared, file, checked, breached: [keys at level error],
 *  warned: [keys at level warn], items: [{key, metric, max, level,
 *  value?, state: inside|over|not-judged|not-measured, text}]}.
 * *error_breach is set when a judged budget at level error is over.
 */
cJSON	*bench_budgets_judge(const struct bench_budgets *bb,
	    const cJSON *bench, int *error_breach);

#endif
