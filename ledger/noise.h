/*
 * noise — how far a window's p95 could move by chance, and a fix's verdict
 * from its two windows (docs/json.md, "Fix verdicts").
 *
 * A window's p95 is the median of its heartbeats' frame p95s.  Its noise
 * is a 95 % moving-block bootstrap interval of that median, over the
 * heartbeats in the order they were written: blocks of L consecutive
 * heartbeats (L the smallest with L³ >= n), so that a slow drift within
 * the window — the machine getting busier, a level getting heavier —
 * widens the interval instead of hiding in it.  The resamples come from a
 * xorshift32 generator with a fixed seed: the same heartbeats give the
 * same interval on every run, in the C fold and in page-runtime/fold.js
 * alike (which implements exactly this, step for step).
 *
 * A fix is judged on two windows: each needs enough exposure, both must
 * come from the same regime and not a software one, and the change must
 * clear both the noise (the intervals do not overlap) and a minimum
 * effect.  Anything short of that is "no-detectable-change" or "not
 * enough evidence yet", never a delta.
 *
 * Pure: no I/O, no clock.
 */
#ifndef LEDGER_NOISE_H
#define LEDGER_NOISE_H

#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "ledger.h"

#define NOISE_RESAMPLES	1000		/* bootstrap resamples */
#define NOISE_SEED	0x9e3779b9u	/* xorshift32's start, fixed */
#define NOISE_MAX	2048		/* heartbeats used, evenly thinned */
#define NOISE_MIN	5		/* fewer: no interval (null) */

/*
 * The interval of the nearest-rank median of v[0..n) (in write order):
 * the 2.5th and 97.5th percentiles (nearest rank) of NOISE_RESAMPLES
 * block-bootstrap medians.  0, -EINVAL when n < NOISE_MIN (nothing
 * written), -ENOMEM.
 */
int	noise_interval(const double *v, size_t n, double *lo, double *hi);

/*
 * A fix's verdict from its before and after windows (either may be NULL
 * or not an object), as the object docs/json.md describes:
 * {verdict, was, wasInterval, now, nowInterval, deltaMs, deltaPct,
 * regime, reason, needs}.  `pending`: the fix waits for a build after it.
 * `j` may be NULL (the defaults).  NULL only without memory.
 */
cJSON	*noise_judge(const cJSON *before, const cJSON *after, int pending,
	    const struct ledger_judge *j);

#endif
