/*
 * fuzz_benchfile — a bench file (project/bench.h) on any bytes: a person
 * may edit one, a disk may tear one.  project_bench_parse either refuses
 * it with a reason, or accepts it with what a comparison needs in
 * bounds: 1 to 32 runs, every measured series as long as the runs and
 * every value finite and ≥ 0, a configHash of "sha256:" and 64
 * characters; and the verdict on the bench against itself is never
 * improved or regressed (the same numbers are no change).
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ledger/verdict.h"
#include "project/bench.h"

int	LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);

int
LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
	static struct verdict_bench	vb;
	struct verdict_result		r;
	char				why[512];
	cJSON				*doc = NULL;
	int				rc, i, k, runs = 0;

	why[0] = '\0';
	rc = project_bench_parse((const char *)data, size, &doc, &vb, why,
	    sizeof(why));
	if (rc != 0) {
		if (rc != -22 || why[0] == '\0' || doc != NULL)
			abort();	/* -EINVAL, always with a reason */
		return 0;
	}
	if (doc == NULL || strncmp(vb.hash, "sha256:", 7) != 0 ||
	    strlen(vb.hash) != 71)
		abort();
	for (i = 0; i < METRIC_N; i++) {
		if (vb.m[i].n == 0)
			continue;
		if (vb.m[i].n < 1 || vb.m[i].n > VERDICT_RUNS_MAX ||
		    (runs && vb.m[i].n != runs))
			abort();
		runs = vb.m[i].n;
		for (k = 0; k < vb.m[i].n; k++)
			if (!isfinite(vb.m[i].run[k]) || vb.m[i].run[k] < 0)
				abort();
	}
	if (vb.m[M_FRAME_MEDIAN].n == 0)
		abort();	/* timing is required */
	verdict_compare(&vb, &vb, &r);
	if (r.overall == VERDICT_IMPROVED || r.overall == VERDICT_REGRESSED)
		abort();
	for (i = 0; i < METRIC_N; i++)
		if (r.m[i].v == VERDICT_IMPROVED || r.m[i].v == VERDICT_REGRESSED)
			abort();
	cJSON_Delete(doc);
	return 0;
}
