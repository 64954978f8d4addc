/*
 * batch — ledger lines to ClickHouse rows (see batch.h).
 *
 * Integer columns are written as raw JSON numbers printed with PRIu64 /
 * PRId64, not through doubles: an offset or a millisecond time must reach
 * ClickHouse exactly.  Everything else goes through cJSON like all JSON
 * in the project.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "ledger/footprint.h"
#include "ledger/jscan.h"
#include "ledger/ledger.h"
#include "sink/batch.h"

/* Rows the private ledger may hold before it starts over: it is only a
 * parser here, so forgetting rows loses nothing. */
#define BATCH_LEDGER_ROWS	65536

struct batch {
	char		*machine;
	char		*project;
	struct ledger	*perf;		/* the fold, as a record reader */
	struct ledger	*fixes;
	char		*scratch;	/* decoded strings */
	size_t		 scratch_cap;
};

const char *
sink_stream_name(enum sink_stream s)
{
	return s == SINK_FIXES ? "fixes" : "perf";
}

static struct ledger *
reader_ledger(void)
{
	/* automated records included: the sink sends every record, and the
	 * team query leaves robots out as the local fold does */
	struct ledger_opts	o = { LEDGER_NO_TIME, LEDGER_NO_TIME, 1, 0,
				    NULL };

	return ledger_create(&o);
}

struct batch *
batch_create(const char *machine, const char *project)
{
	struct batch	*b;

	if ((b = calloc(1, sizeof(*b))) == NULL)
		return NULL;
	if ((b->machine = strdup(machine)) == NULL ||
	    (b->project = strdup(project)) == NULL ||
	    (b->perf = reader_ledger()) == NULL ||
	    (b->fixes = reader_ledger()) == NULL) {
		batch_destroy(b);
		return NULL;
	}
	return b;
}

void
batch_destroy(struct batch *b)
{
	if (b == NULL)
		return;
	ledger_destroy(b->perf);
	ledger_destroy(b->fixes);
	free(b->machine);
	free(b->project);
	free(b->scratch);
	free(b);
}

/* A decoded copy of a string span in the scratch buffer ("" if not a
 * string).  NULL on allocation failure. */
static const char *
decode(struct batch *b, struct jspan s)
{
	size_t	need = (size_t)s.n + 1;

	if (s.kind != J_STRING)
		return "";
	if (need > b->scratch_cap) {
		char	*p = realloc(b->scratch, need);

		if (p == NULL)
			return NULL;
		b->scratch = p;
		b->scratch_cap = need;
	}
	jscan_str(s, b->scratch, need);
	return b->scratch;
}

static void
add_u64(cJSON *o, const char *name, uint64_t v)
{
	char	buf[24];

	snprintf(buf, sizeof(buf), "%" PRIu64, v);
	cJSON_AddRawToObject(o, name, buf);
}

static void
add_i64(cJSON *o, const char *name, int64_t v)
{
	char	buf[24];

	snprintf(buf, sizeof(buf), "%" PRId64, v);
	cJSON_AddRawToObject(o, name, buf);
}

/*
 * The top verdict as the fold keeps it (docs/json.md): the first element
 * of a ranked classification array, or the one object; guess, confidence
 * and evidence cut at 63, 31 and 255 bytes.  Printed as a JSON object, ""
 * when there is none, so one argMax picks the last occurrence's.
 */
static char *
verdict_text(const struct jscan_result *r)
{
	static const char *const names[] = { "guess", "confidence", "evidence" };
	static const size_t	 caps[] = { 64, 32, 256 };
	const struct jspan	*f = r->f;
	struct jspan		 cls = { 0 }, c0, vd[3];
	cJSON			*o;
	char			 buf[256], *txt;
	size_t			 i;

	if (jscan_eq(f[F_TYPE], "hitch") || jscan_eq(f[F_TYPE], "jitter"))
		cls = f[F_CLASSIFICATION];
	else if (jscan_eq(f[F_TYPE], "usermark"))
		cls = jscan_get(jscan_at(f[F_WORST], 0), "classification");
	c0 = cls.kind == J_ARRAY ? jscan_at(cls, 0) : cls;
	if (c0.kind != J_OBJECT)
		return strdup("");
	if ((o = cJSON_CreateObject()) == NULL)
		return NULL;
	jscan_getn(c0, names, vd, 3);
	for (i = 0; i < 3; i++) {
		if (vd[i].kind == J_STRING && jscan_str(vd[i], buf, caps[i]) >= 0)
			cJSON_AddStringToObject(o, names[i], buf);
		else
			cJSON_AddNullToObject(o, names[i]);
	}
	txt = cJSON_PrintUnformatted(o);
	cJSON_Delete(o);
	return txt;
}

/* Strip what the fold tolerates around a record: a BOM, a final '\r'. */
static void
trim(const char **line, size_t *len)
{
	if (*len >= 3 && memcmp(*line, "\xef\xbb\xbf", 3) == 0) {
		*line += 3;
		*len -= 3;
	}
	while (*len > 0 && ((*line)[*len - 1] == '\r' ||
	    (*line)[*len - 1] == ' ' || (*line)[*len - 1] == '\t'))
		(*len)--;
}

static int
emit(cJSON *o, struct ch_buf *out)
{
	char	*txt = cJSON_PrintUnformatted(o);
	int	 rc;

	if (txt == NULL)
		return -ENOMEM;
	if ((rc = ch_buf_add(out, txt, strlen(txt))) == 0 &&
	    (rc = ch_buf_add(out, "\n", 1)) != 0)
		out->len -= strlen(txt);
	free(txt);
	return rc;
}

int
batch_add(struct batch *b, enum sink_stream s, uint64_t generation,
    const char *line, size_t len, uint64_t offset, struct ch_buf *out)
{
	struct ledger_event	 ev;
	struct ledger_counts	 before, after;
	struct jscan_result	 r;
	const char		*rec = line, *str;
	size_t			 rlen = len;
	char			*copy = NULL, *vtxt = NULL, day[32];
	int64_t			 at = LEDGER_NO_TIME;
	cJSON			*o = NULL;
	int			 rc, malformed = 0;

	if (s == SINK_PERF) {
		ledger_counts(b->perf, &before);
		if (before.rows >= BATCH_LEDGER_ROWS) {
			struct ledger	*n = reader_ledger();

			if (n == NULL)
				return -ENOMEM;
			ledger_destroy(b->perf);
			b->perf = n;
			ledger_counts(b->perf, &before);
		}
		if ((rc = ledger_fold_perf(b->perf, line, len, offset, &ev)) != 0)
			return rc;	/* 1: not a record; -ENOMEM */
		ledger_counts(b->perf, &after);
		malformed = after.malformed_footprints >
		    before.malformed_footprints;
		at = ev.at_ms;
	} else {
		rc = ledger_fold_fix(b->fixes, line, len, offset);
		ledger_clear_fixes(b->fixes);	/* a reader keeps nothing */
		if (rc != 0)
			return rc;
	}
	trim(&rec, &rlen);
	/* The fold accepted it, so it is one valid JSON object. */
	if (jscan_object(rec, rlen, &r) != 0)
		return 1;
	if (s == SINK_FIXES && r.f[F_AT].kind == J_STRING &&
	    !r.f[F_AT].escaped &&
	    iso_parse_ms(r.f[F_AT].p, r.f[F_AT].n, &at) != 0)
		at = LEDGER_NO_TIME;

	rc = -ENOMEM;
	if ((o = cJSON_CreateObject()) == NULL ||
	    (copy = malloc(rlen + 1)) == NULL)
		goto out;
	memcpy(copy, rec, rlen);
	copy[rlen] = '\0';
	cJSON_AddStringToObject(o, "machine", b->machine);
	cJSON_AddStringToObject(o, "project", b->project);
	cJSON_AddStringToObject(o, "stream", sink_stream_name(s));
	add_u64(o, "generation", generation);
	add_u64(o, "offset", offset);
	if ((str = decode(b, r.f[F_TYPE])) == NULL)
		goto out;
	cJSON_AddStringToObject(o, "type", str);
	add_i64(o, "at_ms", at == LEDGER_NO_TIME ? 0 : at);
	cJSON_AddNumberToObject(o, "has_at", at != LEDGER_NO_TIME);
	iso_format_ms(at == LEDGER_NO_TIME ? 0 : at, day);
	day[10] = '\0';
	cJSON_AddStringToObject(o, "day", day);
	if (s == SINK_PERF) {
		cJSON_AddStringToObject(o, "build", ev.build);
		cJSON_AddNumberToObject(o, "automated", ev.automated);
		cJSON_AddStringToObject(o, "footprint_id",
		    ev.incident ? ev.id : "");
		cJSON_AddStringToObject(o, "footprint_key",
		    ev.incident ? ev.key : "");
		cJSON_AddNumberToObject(o, "malformed", malformed);
		cJSON_AddStringToObject(o, "phase", ev.phase);
		if ((str = decode(b, r.f[F_CTX])) == NULL)
			goto out;
		cJSON_AddStringToObject(o, "ctx", str);
		cJSON_AddNumberToObject(o, "value", ev.has_value ? ev.value : 0);
		cJSON_AddNumberToObject(o, "has_value", ev.has_value);
		cJSON_AddStringToObject(o, "unit", ev.unit);
		if ((vtxt = ev.incident ? verdict_text(&r) : strdup("")) == NULL)
			goto out;
		cJSON_AddStringToObject(o, "verdict", vtxt);
	} else {
		cJSON_AddStringToObject(o, "build", "");
		cJSON_AddNumberToObject(o, "automated", 0);
		cJSON_AddStringToObject(o, "footprint_id", "");
		cJSON_AddStringToObject(o, "footprint_key", "");
		cJSON_AddNumberToObject(o, "malformed", 0);
		cJSON_AddStringToObject(o, "phase", "");
		cJSON_AddStringToObject(o, "ctx", "");
		cJSON_AddNumberToObject(o, "value", 0);
		cJSON_AddNumberToObject(o, "has_value", 0);
		cJSON_AddStringToObject(o, "unit", "");
		cJSON_AddStringToObject(o, "verdict", "");
	}
	cJSON_AddStringToObject(o, "record", copy);
	rc = emit(o, out);
out:
	cJSON_Delete(o);
	free(copy);
	free(vtxt);
	return rc;
}
