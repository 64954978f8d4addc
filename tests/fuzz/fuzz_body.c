/*
 * fuzz_body — a hostile request body through what the write routes run on
 * it before anything is written: POST /fixes (routes_fix_body: cJSON, the
 * strict scanner, the fix rules, the line to append), POST /records
 * (project_records_batch: an array or NDJSON, each record on its own) and
 * PUT /settings (routes_settings_body).  The first input byte picks the
 * route.
 *
 * What must hold, the promise of issue 8 ("a fix acknowledged but never
 * counted"): whatever a route would append is exactly what the fold
 * counts — a fix line folds as a fix, every accepted record folds as a
 * record, none is skipped — and is one strict JSON line (the reference
 * validator, refjson.c, accepts it) whose every number is finite.  A body a route accepts is itself
 * strict JSON.  A refusal has a status, a code and a reason and holds
 * nothing (no record, no line, no level, no counts); a batch's counts add
 * up and its refusals are listed in order.
 */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "daemon/routes.h"
#include "ledger/ledger.h"
#include "project/append.h"
#include "refjson.h"

int	LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);

static void
fail(const char *what)
{
	fprintf(stderr, "fuzz_body: %s\n", what);
	abort();
}

static void
refused(const struct route_body *b, unsigned rc)
{
	if (rc != b->status || (rc != 400 && rc != 500) || b->code == NULL ||
	    b->why[0] == '\0')
		fail("a refusal without status, code or reason");
	if (b->rec != NULL || b->line != NULL || b->len != 0 ||
	    b->loop[0] != '\0')
		fail("a refusal holds something");
}

/* No number of the line is an infinity once parsed (docs/json.md: a
 * number beyond a double's range is refused by every writer). */
static int
finite_item(const cJSON *o)
{
	const cJSON	*it;

	if (cJSON_IsNumber(o) && !isfinite(o->valuedouble))
		return 0;
	for (it = o->child; it != NULL; it = it->next)
		if (!finite_item(it))
			return 0;
	return 1;
}

static int
all_finite(const char *line, size_t n)
{
	cJSON	*o = cJSON_ParseWithLength(line, n);
	int	 ok;

	if (o == NULL)
		return 1;	/* out of memory: nothing to say */
	ok = finite_item(o);
	cJSON_Delete(o);
	return ok;
}

/* One line (no '\n') the fold must count: as a fix, or a perf record. */
static void
counted(const char *line, size_t n, int fix)
{
	struct ledger_opts	 o = { LEDGER_NO_TIME, LEDGER_NO_TIME, 1, 0,
				   NULL };
	struct ledger_counts	 c;
	struct ledger		*l;
	int			 rc;

	if (memchr(line, '\n', n) != NULL)
		fail("an appended record spans lines");
	if (!refjson_object(line, n))
		fail("an appended line is not strict JSON");
	if (!all_finite(line, n))
		fail("an appended line holds a number beyond a double's range");
	if ((l = ledger_create(&o)) == NULL)
		return;
	rc = fix ? ledger_fold_fix(l, line, n, 0) :
	    ledger_fold_perf(l, line, n, 0, NULL);
	ledger_counts(l, &c);
	if (rc == -ENOMEM) {
		ledger_destroy(l);
		return;
	}
	if (rc != 0 || c.skipped != 0 || (fix ? c.fixes : c.folded) != 1) {
		fprintf(stderr, "%.*s\n", (int)(n > 300 ? 300 : n), line);
		fail(fix ? "an accepted fix is not counted by the fold" :
		    "an accepted record is not counted by the fold");
	}
	ledger_destroy(l);
}

static void
fix(const char *body, size_t n)
{
	struct route_body	 b;
	unsigned		 rc;
	const char		*s;

	rc = routes_fix_body(body, n, &b);
	if (rc != 0) {
		refused(&b, rc);
		return;
	}
	if (!refjson_object(body, n))
		fail("a fix body that is not strict JSON is accepted");
	if (!all_finite(body, n))	/* cJSON would write it as null */
		fail("a fix body with a number beyond a double's range is "
		    "accepted");
	if (b.line == NULL || b.len < 2 || b.line[b.len - 1] != '\n' ||
	    b.rec == NULL)
		fail("an accepted fix without its line");
	counted(b.line, b.len - 1, 1);
	s = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(b.rec,
	    "type"));
	if (s == NULL || strcmp(s, "fix") != 0 ||
	    cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(b.rec,
	    "id")) == NULL ||
	    cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(b.rec,
	    "at")) == NULL ||
	    cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(b.rec,
	    "status")) == NULL)
		fail("an accepted fix lacks type, id, at or status");
	s = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(b.rec,
	    "status"));
	if (strcmp(s, "applied") && strcmp(s, "proposed") &&
	    strcmp(s, "merged") && strcmp(s, "rejected"))
		fail("an accepted fix has a status that does not exist");
	routes_body_free(&b);
}

static void
records(const char *body, size_t n)
{
	struct project_batch	*b;
	char			 why[PROJECT_WHY_MAX], *lines;
	const char		*p, *nl;
	size_t			 len, i, k;
	int			 rc;

	if ((b = malloc(sizeof(*b))) == NULL)
		return;
	why[0] = '\0';
	rc = project_records_batch(body, n, b, &lines, &len, why, sizeof(why));
	if (rc != 0) {
		if ((rc != -EINVAL && rc != -ENOMEM) || why[0] == '\0' ||
		    lines != NULL || len != 0 || b->records || b->accepted ||
		    b->refused || b->nlisted)
			fail("a refused batch holds something or says nothing");
		free(b);
		return;
	}
	if (b->records != b->accepted + b->refused ||
	    b->nlisted != (b->refused < PROJECT_REFUSALS_KEPT ? b->refused :
	    PROJECT_REFUSALS_KEPT) || b->bytes != 0)
		fail("a batch's counts do not add up");
	for (i = 0; i < b->nlisted; i++)
		if (b->list[i].index >= b->records || b->list[i].why[0] ==
		    '\0' || (i > 0 && b->list[i].index <= b->list[i - 1].index))
			fail("a refusal out of order, out of range or unsaid");
	for (p = lines, k = 0; p < lines + len; k++) {
		if ((nl = memchr(p, '\n', (size_t)(lines + len - p))) == NULL)
			fail("the lines to append do not end in '\\n'");
		counted(p, (size_t)(nl - p), 0);
		p = nl + 1;
	}
	if (k != b->accepted)
		fail("another number of lines than of accepted records");
	free(lines);
	free(b);
}

static void
settings(const char *body, size_t n)
{
	struct route_body	 b;
	unsigned		 rc;
	cJSON			*o, *it;
	int			 loops = 0;

	rc = routes_settings_body(body, n, &b);
	if (rc != 0) {
		refused(&b, rc);
		return;
	}
	if (strcmp(b.loop, "off") && strcmp(b.loop, "propose") &&
	    strcmp(b.loop, "apply"))
		fail("a settings body sets a level that does not exist");
	if (!refjson_object(body, n))
		fail("a settings body that is not strict JSON is accepted");
	if ((o = cJSON_ParseWithLength(body, n)) == NULL)
		fail("an accepted settings body does not parse");
	cJSON_ArrayForEach(it, o)
		loops += strcmp(it->string, "loop") == 0;
	if (loops != 1)
		fail("a settings body with other than one loop is accepted");
	cJSON_Delete(o);
	routes_body_free(&b);
}

int
LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
	const char	*body = (const char *)data + 1;

	if (size < 1)
		return 0;
	switch (data[0] % 3) {
	case 0:
		fix(body, size - 1);
		break;
	case 1:
		records(body, size - 1);
		break;
	default:
		settings(body, size - 1);
		break;
	}
	return 0;
}
