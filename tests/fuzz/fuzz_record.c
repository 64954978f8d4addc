/*
 * fuzz_record — one perf.jsonl line and one fixes.jsonl line through the
 * whole fold (record, footprint reading rule, catalogue, timeline, a
 * fix's windows and verdict, an occurrence's details), then every
 * rendering.  Checks what must hold for any input: a folded
 * incident has an 8-hex footprint id, a skip is counted, and the JSON
 * rendered is valid (cJSON parses it back) with every number in it
 * finite.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "ledger/ledger.h"

int	LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);

/* Every number a rendering holds is finite: cJSON would print an
 * infinity as null, a `worst.value: null` the schema forbids (docs/json.md:
 * a number beyond a double's range is refused where it is read). */
static void
finite_tree(const cJSON *o)
{
	const cJSON	*it;

	if (cJSON_IsNumber(o) && !isfinite(o->valuedouble)) {
		fprintf(stderr, "fuzz_record: a rendered number is %g\n",
		    o->valuedouble);
		abort();
	}
	for (it = o->child; it != NULL; it = it->next)
		finite_tree(it);
}

static void
roundtrip(cJSON *o)
{
	char	*s;
	cJSON	*back;

	if (o == NULL)
		abort();
	finite_tree(o);
	if ((s = cJSON_PrintUnformatted(o)) == NULL)
		abort();
	if ((back = cJSON_Parse(s)) == NULL)
		abort();
	cJSON_Delete(back);
	free(s);
	cJSON_Delete(o);
}

int
LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
	struct ledger_opts	 opts = { LEDGER_NO_TIME, LEDGER_NO_TIME, 1, 1,
				   NULL };
	struct ledger_counts	 c0, c1;
	struct ledger_event	 ev;
	struct ledger		*l;
	const char		*line = (const char *)data, *err;
	const char		*nl;
	size_t			 n1;
	int			 rc, i;

	if ((l = ledger_create(&opts)) == NULL)
		return 0;
	/* the first line is a perf record, the rest (if any) a fix */
	nl = memchr(line, '\n', size);
	n1 = nl != NULL ? (size_t)(nl - line) : size;
	ledger_counts(l, &c0);
	rc = ledger_fold_perf(l, line, n1, 0, &ev);
	ledger_counts(l, &c1);
	if (rc == 0) {
		if (c1.folded != c0.folded + 1)
			abort();
		if (ev.incident) {
			for (i = 0; i < 8; i++)
				if (strchr("0123456789abcdef", ev.id[i]) ==
				    NULL || ev.id[i] == '\0')
					abort();
			if (ev.id[8] != '\0' || ev.count == 0)
				abort();
		}
	} else if (rc == 1) {
		if (c1.folded != c0.folded)
			abort();
	} else if (rc != -ENOMEM) {
		abort();
	}
	if (nl != NULL)
		ledger_fold_fix(l, nl + 1, size - n1 - 1, n1 + 1);
	roundtrip(ledger_issues_json(l, &(struct ledger_query){ 0 }, 0));
	roundtrip(ledger_history_json(l, 3, 0));
	roundtrip(ledger_skipped_json(l));
	if (ev.incident && rc == 0) {
		cJSON *one = ledger_issue_json(l, ev.id, 0);

		if (one == NULL)
			abort();	/* a folded incident has its row */
		roundtrip(one);
		/* and again keeping its occurrences: what tells them apart
		 * (script, upload, sites, delta, regime) is read from the
		 * record as far as it has it */
		{
			struct ledger_opts	 oo = opts;
			struct ledger		*lo;
			char			 id[9];

			memcpy(id, ev.id, sizeof(id));
			oo.occurrences_of = id;
			if ((lo = ledger_create(&oo)) != NULL) {
				ledger_fold_perf(lo, line, n1, 0, NULL);
				if ((one = ledger_issue_json(lo, id, 0)) != NULL)
					roundtrip(one);
				ledger_destroy(lo);
			}
		}
	}
	{
		cJSON *w = ledger_window_json(l, NULL, 1, &err);

		if (w != NULL)
			roundtrip(w);
	}
	ledger_destroy(l);
	return 0;
}
