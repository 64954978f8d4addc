/*
 * bench_stub — bench_for_check (cli/bench_check.h) in a build without
 * the bench verb: `check --bench` says so and exits 4, never a pass.
 *
 * JOIN (for the lead): delete this file when the bench verb provides
 * bench_for_check.
 */
#include <stdio.h>

#include "cli/bench_check.h"
#include "cli/cli.h"

int
bench_for_check(const char *project, const char *scene, int64_t now_ms,
    cJSON **out, char *why, size_t cap)
{
	(void)project;
	(void)now_ms;
	*out = NULL;
	snprintf(why, cap, "bench not available in this build: cannot bench "
	    "scene '%s' (check without --bench judges .sloptimize/profile.json)",
	    scene);
	return EXIT_NOTHING;
}
