/*
 * bench_budgets — a bench held against sloptimize.budgets.json: the
 * project's one budgets reader and judgement (project/budgets.h, the same
 * as `check` and profile.json), the bench's document put in profile.json's
 * shape, and the result in the bench's words (bench --json's `budgets`,
 * bench-history.jsonl's distances).
 */
#ifndef CLI_BENCH_BUDGETS_H
#define CLI_BENCH_BUDGETS_H

#include <limits.h>
#include <stddef.h>

#include <cjson/cJSON.h>

#include "project/budgets.h"

struct bench_budgets {
	int		declared;	/* the file exists */
	char		file[PATH_MAX];
	struct budgets	b;
};

/*
 * Read <project>/sloptimize.budgets.json.  0 with out (declared 0 when
 * there is no file), or a negative errno with why naming the file and
 * the key that is wrong — never a silent pass.
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
