/*
 * bench_check — the one seam between `sloptimize check --bench SCENE`
 * (and the MCP tool check_budgets' `bench`) and the bench verb: check
 * calls only this function.
 *
 * Implemented in cli/bench_check.c on the bench verb's own run:
 *
 *   Run a bench of `scene` for `project` (a launched browser, with
 *   `frames` measured frames a run after `warmup`, `runs` runs — each
 *   0 for the bench's default, BENCH_FRAMES, BENCH_WARMUP, BENCH_RUNS,
 *   and a warmup of -1 for none; a controlled run, never the developer's
 *   tab) and
 *   hand back its result in profile.json's shape, so that check judges
 *   it by the same rule as a profile:
 *     { "at": ISO, "regime": "hardware"|"software"|"unknown",
 *       "frame": {"p95Ms", …}, "render": {"calls", "triangles", …},
 *       "memory": {"programs", …}, "gpu": {"p95Ms"} (where measured),
 *       "build"?, "bench": {"scene", "path" of bench/<scene>-<at>.json} }
 *   A field nobody measured is absent, never 0.
 *
 *   Returns 0 and *out (the caller deletes it), or the exit code check
 *   must give — 4 for the environment (no browser, no scene, no page, a
 *   page that hung), 2 for a usage error (an unknown scene name) — with
 *   why[cap] saying it in one line.  Never hangs: every wait has a
 *   deadline.  Blocks: the MCP server calls it on its thread pool.
 */
#ifndef CLI_BENCH_CHECK_H
#define CLI_BENCH_CHECK_H

#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

int	bench_for_check(const char *project, const char *scene, int frames,
	    int warmup, int runs, int64_t now_ms, cJSON **out, char *why,
	    size_t cap);

#endif
