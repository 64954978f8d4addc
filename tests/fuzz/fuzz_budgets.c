/*
 * fuzz_budgets — any bytes as sloptimize.budgets.json, and as the
 * heartbeat line a profile is made from (docs/budgets.md).  The budgets
 * file is reviewed source anyone may break; the heartbeat comes from a
 * page.  Whatever they hold: an accepted file declares only finite
 * maxes >= 0 and the judgement of it never crashes; a refused one says
 * why, one line per fault, each naming a key or "(the file)", inside its
 * buffer; a profile is made only from a heartbeat with a time, and holds
 * no number that is not finite and >= 0.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "project/budgets.h"
#include "project/profile.h"

int	LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);

static const char profile_text[] =
	"{\"regime\":\"hardware\",\"render\":{\"calls\":940,\"triangles\":1},"
	"\"memory\":{\"programs\":3},\"frame\":{\"p95Ms\":20},"
	"\"gpu\":{\"p95Ms\":0}}";

/* Every number in the tree is finite and >= 0 (v, offsets, counts). */
static void
numbers_sane(const cJSON *o)
{
	const cJSON	*it;

	cJSON_ArrayForEach(it, o) {
		if (cJSON_IsNumber(it) && (!isfinite(it->valuedouble) ||
		    it->valuedouble < 0)) {
			fprintf(stderr, "profile: %s = %g\n", it->string,
			    it->valuedouble);
			abort();
		}
		numbers_sane(it);
	}
}

int
LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
	static cJSON		*profile;
	struct budgets		 b;
	struct budget_judgement	 j;
	struct profile_source	 src = { 1, 0 };
	char			 why[BUDGETS_WHY_MAX + 16];
	const char		*text = (const char *)data;
	cJSON			*p;
	int			 rc, m, n = 0;

	if (profile == NULL)
		profile = cJSON_Parse(profile_text);
	memset(why + BUDGETS_WHY_MAX, 0x7e, 16);
	rc = budgets_parse(text, size, &b, why, BUDGETS_WHY_MAX);
	for (m = 0; m < 16; m++)
		if ((unsigned char)why[BUDGETS_WHY_MAX + m] != 0x7e)
			abort();	/* wrote past its buffer */
	if (rc == 0) {
		for (m = 0; m < BUDGET_N; m++) {
			if (!b.b[m].declared)
				continue;
			n++;
			if (!isfinite(b.b[m].max) || b.b[m].max < 0 ||
			    (b.b[m].level != BUDGET_ERROR &&
			    b.b[m].level != BUDGET_WARN))
				abort();
		}
		if (n != b.ndeclared || why[0] != '\0')
			abort();
		budgets_judge(&b, profile, 0, &j);
		budgets_judge(&b, profile, BUDGETS_COUNTERS_ONLY, &j);
		if (j.checked + j.skipped + j.not_judged + j.unmeasured !=
		    j.declared)
			abort();
	} else {
		if (rc != -EINVAL || why[0] == '\0' || b.ndeclared != 0 ||
		    memchr(why, '\0', BUDGETS_WHY_MAX) == NULL)
			abort();
	}
	/* the same bytes as a heartbeat line */
	if ((p = profile_build(text, size, &src, rc == 0 ? &b : NULL, NULL,
	    0)) != NULL) {
		if (!cJSON_IsString(cJSON_GetObjectItem(p, "at")) ||
		    !cJSON_IsString(cJSON_GetObjectItem(p, "regime")))
			abort();
		numbers_sane(p);
		budgets_judge(&b, p, 0, &j);
		cJSON_Delete(p);
	}
	return 0;
}
