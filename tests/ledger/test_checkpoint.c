/*
 * checkpoint: the fold saved and restored.  For every fixture and a
 * generated ledger, under every kind of fold options: fold part of the
 * ledger, checkpoint, read it back, fold the rest — the catalogue, the
 * timeline and one issue's occurrences are byte for byte those of a
 * fresh fold of the whole.  And a checkpoint cut short anywhere, with any
 * byte flipped, of another version or other options, is refused: never
 * a wrong catalogue.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "ledger/checkpoint.h"
#include "ledger/ledger.h"
#include "ledger/ledger_impl.h"
#include "ledger/linesplit.h"

#define NOW	1790812800000LL		/* 2026-10-01T00:00:00Z */

/* --- a ledger's lines, kept to be folded in two halves ----------------- */

struct lines {
	char		**line;
	size_t		 *len;
	uint64_t	 *off;
	int		 *overlong;	/* a line linesplit reported as too long */
	size_t		  n, cap;
};

static void
lines_put(struct lines *ls, const char *p, size_t n, uint64_t off, int over)
{
	if (ls->n == ls->cap) {
		ls->cap = ls->cap ? ls->cap * 2 : 64;
		ls->line = realloc(ls->line, ls->cap * sizeof(*ls->line));
		ls->len = realloc(ls->len, ls->cap * sizeof(*ls->len));
		ls->off = realloc(ls->off, ls->cap * sizeof(*ls->off));
		ls->overlong = realloc(ls->overlong, ls->cap *
		    sizeof(*ls->overlong));
		assert_true(ls->line && ls->len && ls->off && ls->overlong);
	}
	assert_non_null(ls->line[ls->n] = malloc(n + 1));
	memcpy(ls->line[ls->n], p, n);
	ls->line[ls->n][n] = '\0';
	ls->len[ls->n] = n;
	ls->off[ls->n] = off;
	ls->overlong[ls->n++] = over;
}

static void
on_line(void *arg, const char *line, size_t len, uint64_t off)
{
	lines_put(arg, line, len, off, 0);
}

static void
on_long(void *arg, uint64_t off, uint64_t len)
{
	lines_put(arg, "", 0, off, (int)len);
}

/* The complete lines of a file, split as every reader splits them;
 * an absent file has none. */
static void
lines_load(struct lines *ls, const char *path)
{
	struct linesplit	 sp;
	FILE			*f = fopen(path, "rb");
	char			 buf[65536];
	size_t			 n;

	memset(ls, 0, sizeof(*ls));
	if (f == NULL)
		return;
	linesplit_init(&sp, 0, on_line, on_long, ls);
	while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
		assert_int_equal(linesplit_feed(&sp, buf, n), 0);
	linesplit_free(&sp);
	fclose(f);
}

static void
lines_free(struct lines *ls)
{
	size_t	i;

	for (i = 0; i < ls->n; i++)
		free(ls->line[i]);
	free(ls->line);
	free(ls->len);
	free(ls->off);
	free(ls->overlong);
}

static void
fold(struct ledger *l, const struct lines *ls, enum ledger_stream s,
    size_t from, size_t to)
{
	size_t	i;

	for (i = from; i < to; i++) {
		if (ls->overlong[i]) {
			ledger_skip(l, s, ls->off[i], (uint64_t)ls->overlong[i],
			    NULL);
			continue;
		}
		assert_true((s == LEDGER_PERF ? ledger_fold_perf(l,
		    ls->line[i], ls->len[i], ls->off[i], NULL) :
		    ledger_fold_fix(l, ls->line[i], ls->len[i],
		    ls->off[i])) >= 0);
	}
}

/* --- what a fold answers, as text ---------------------------------------- */

static char *
print(cJSON *o)
{
	char	*s;

	assert_non_null(o);
	assert_non_null(s = cJSON_Print(o));
	cJSON_Delete(o);
	return s;
}

/* Everything a reader asks of a ledger, in one string. */
static char *
answers(struct ledger *l, const struct ledger_opts *o)
{
	char	*parts[4], *all;
	size_t	 n = 0, i;
	int	 k = 0;

	parts[k++] = print(ledger_issues_json(l, NULL, NOW));
	if (o->want_timeline) {
		parts[k++] = print(ledger_history_json(l, 4, NOW));
		parts[k++] = print(ledger_history_json(l, 24, NOW));
	}
	if (o->occurrences_of != NULL) {
		cJSON	*one = ledger_issue_json(l, o->occurrences_of, NOW);

		parts[k++] = one ? print(one) : strdup("no such issue");
	}
	for (i = 0; i < (size_t)k; i++)
		n += strlen(parts[i]) + 1;
	assert_non_null(all = calloc(1, n + 1));
	for (i = 0; i < (size_t)k; i++) {
		strcat(all, parts[i]);
		strcat(all, "\n");
		free(parts[i]);
	}
	return all;
}

/* --- checkpoint bytes ----------------------------------------------------- */

struct bytes {
	unsigned char	*p;
	size_t		 n, cap;
	size_t		 fail_after;	/* 0: never fail */
};

static int
to_bytes(void *arg, const void *data, size_t len)
{
	struct bytes	*b = arg;

	if (b->fail_after && b->n + len > b->fail_after)
		return -ENOSPC;
	if (b->n + len > b->cap) {
		b->cap = (b->n + len) * 2;
		assert_non_null(b->p = realloc(b->p, b->cap));
	}
	memcpy(b->p + b->n, data, len);
	b->n += len;
	return 0;
}

static void
checkpoint(const struct ledger *l, struct bytes *b)
{
	memset(b, 0, sizeof(*b));
	assert_int_equal(ledger_checkpoint_write(l, to_bytes, b), 0);
}

/* A source for the streamed reader: bytes handed over as a file would
 * give them, ending where the file ends. */
struct source {
	const unsigned char	*p;
	size_t			 n, at;
	size_t			 pulls;
};

static int
from_source(void *arg, void *buf, size_t n)
{
	struct source	*s = arg;

	if (n > s->n - s->at)
		return -EBADMSG;
	memcpy(buf, s->p + s->at, n);
	s->at += n;
	s->pulls++;
	return 0;
}

static int
read_stream(const struct ledger_opts *o, const void *p, size_t n,
    struct ledger **l, const char **why)
{
	struct source	s = { p, n, 0, 0 };
	int		rc;

	rc = ledger_checkpoint_read_stream(o, n, from_source, &s, l, why);
	if (rc == 0 && s.at != n)
		fail_msg("the streamed read took %zu of %zu bytes", s.at, n);
	return rc;
}

/* A checkpoint must be refused, and nothing handed back: in memory and
 * streamed. */
static void
refused(const struct ledger_opts *o, const void *p, size_t n, const char *what,
    size_t at)
{
	struct ledger	*l = (struct ledger *)1;
	const char	*why = NULL;
	int		 rc = ledger_checkpoint_read(o, p, n, &l, &why);

	if (rc >= 0 || l != NULL || why == NULL)
		fail_msg("%s at %zu: accepted (rc %d)", what, at, rc);
	l = (struct ledger *)1;
	why = NULL;
	rc = read_stream(o, p, n, &l, &why);
	if (rc >= 0 || l != NULL || why == NULL)
		fail_msg("%s at %zu: accepted when streamed (rc %d)", what, at,
		    rc);
}

/* --- the cases -------------------------------------------------------- */

struct case_ {
	char		 name[256];
	struct lines	 perf, fixes;
	char		 fp[9];		/* an issue to keep occurrences of */
};

static void
case_load(struct case_ *c, const char *dir, const char *base)
{
	char	path[512];
	size_t	i;

	snprintf(c->name, sizeof(c->name), "%s/%s", dir, base);
	snprintf(path, sizeof(path), "%s/%s.jsonl", dir, base);
	lines_load(&c->perf, path);
	snprintf(path, sizeof(path), "%s/%s.fixes.jsonl", dir, base);
	lines_load(&c->fixes, path);
	/* the first footprint id in the file, if any */
	c->fp[0] = '\0';
	for (i = 0; i < c->perf.n && c->fp[0] == '\0'; i++) {
		const char	*p = strstr(c->perf.line[i], "\"id\":\"");

		if (p != NULL && strlen(p) > 14)
			snprintf(c->fp, sizeof(c->fp), "%.8s", p + 6);
	}
}

static void
case_free(struct case_ *c)
{
	lines_free(&c->perf);
	lines_free(&c->fixes);
}

/* Fold [0, split), checkpoint, read back, fold the rest: the same
 * answers as a fresh fold of everything. */
static void
resume_at(const struct case_ *c, const struct ledger_opts *o, size_t split,
    const char *fresh)
{
	struct ledger	*l;
	struct bytes	 b;
	const char	*why = NULL;
	char		*got;

	assert_non_null(l = ledger_create(o));
	fold(l, &c->fixes, LEDGER_FIXES, 0, c->fixes.n);
	fold(l, &c->perf, LEDGER_PERF, 0, split);
	checkpoint(l, &b);
	ledger_destroy(l);
	l = NULL;
	/* every other split reads it streamed, as from a file */
	if ((split % 2 ? read_stream(o, b.p, b.n, &l, &why) :
	    ledger_checkpoint_read(o, b.p, b.n, &l, &why)) != 0)
		fail_msg("%s split %zu: refused: %s", c->name, split, why);
	fold(l, &c->perf, LEDGER_PERF, split, c->perf.n);
	got = answers(l, o);
	if (strcmp(got, fresh) != 0)
		fail_msg("%s split %zu of %zu: answers differ", c->name, split,
		    c->perf.n);
	free(got);
	free(b.p);
	ledger_destroy(l);
}

static void
resume_all_ways(const struct case_ *c, int every_line)
{
	struct ledger_opts	opts[4] = {
		{ LEDGER_NO_TIME, LEDGER_NO_TIME, 0, 0, NULL },
		{ LEDGER_NO_TIME, LEDGER_NO_TIME, 0, 1, NULL },
		{ LEDGER_NO_TIME, LEDGER_NO_TIME, 1, 1, NULL },
		/* a time range, and one issue's occurrences */
		{ 1788220800000LL, 1790812800000LL, 0, 1, NULL },
	};
	size_t			k, split;

	opts[3].occurrences_of = c->fp[0] ? c->fp : NULL;
	for (k = 0; k < 4; k++) {
		struct ledger	*l;
		char		*fresh;

		assert_non_null(l = ledger_create(&opts[k]));
		fold(l, &c->fixes, LEDGER_FIXES, 0, c->fixes.n);
		fold(l, &c->perf, LEDGER_PERF, 0, c->perf.n);
		fresh = answers(l, &opts[k]);
		ledger_destroy(l);
		if (every_line)
			for (split = 0; split <= c->perf.n; split++)
				resume_at(c, &opts[k], split, fresh);
		else {
			resume_at(c, &opts[k], 0, fresh);
			resume_at(c, &opts[k], c->perf.n / 3, fresh);
			resume_at(c, &opts[k], c->perf.n / 2 + 1, fresh);
			resume_at(c, &opts[k], c->perf.n, fresh);
		}
		free(fresh);
	}
}

static const char *const fixtures[] = {
	"automated", "basic", "empty", "fix-status", "gaps", "heartbeats-only",
	"judged-fixed", "judged-pending", "judged-regressed", "malformed",
	"no-at", "strings-as-numbers", "unknown",
};

static void
checkpoint_resumes_every_fixture(void **state)
{
	size_t	i;

	(void)state;
	for (i = 0; i < sizeof(fixtures) / sizeof(fixtures[0]); i++) {
		struct case_	c;

		case_load(&c, "tests/fixtures", fixtures[i]);
		if (strcmp(fixtures[i], "empty") != 0 && c.perf.n == 0)
			fail_msg("no lines in %s (run from the repository's "
			    "top)", c.name);
		resume_all_ways(&c, 1);
		case_free(&c);
	}
}

/* A generated ledger: a few thousand records over a dozen builds with
 * fixes — enough heartbeats for several sealed sample blocks. */
static char	gen_dir[64];

static int
gen_setup(void **state)
{
	char	cmd[256];

	(void)state;
	snprintf(gen_dir, sizeof(gen_dir), "/tmp/test_checkpoint.XXXXXX");
	if (mkdtemp(gen_dir) == NULL)
		return -1;
	snprintf(cmd, sizeof(cmd), "python3 tests/genledger.py %s "
	    "--records 6000 --causes 80 > /dev/null", gen_dir);
	return system(cmd) == 0 ? 0 : -1;
}

static int
gen_teardown(void **state)
{
	char	cmd[128];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf %s", gen_dir);
	return system(cmd) == 0 ? 0 : -1;
}

static void
gen_case(struct case_ *c)
{
	char	dir[128];

	snprintf(dir, sizeof(dir), "%s/.sloptimize", gen_dir);
	case_load(c, dir, "perf");
	{
		char	path[256];

		lines_free(&c->fixes);
		snprintf(path, sizeof(path), "%s/fixes.jsonl", dir);
		lines_load(&c->fixes, path);
	}
	assert_true(c->perf.n == 6000);
	assert_true(c->fixes.n > 0);
}

static void
checkpoint_resumes_a_generated_ledger(void **state)
{
	struct case_	c;

	(void)state;
	gen_case(&c);
	resume_all_ways(&c, 0);
	case_free(&c);
}

/* Every cut and every flipped byte of a checkpoint is refused (a CRC-32C
 * catches every error of up to 32 bits in a row), and so is one of
 * another version, another byte order or other options. */
static void
refuse_damage(const struct case_ *c, int exhaustive)
{
	struct ledger_opts	 o = { LEDGER_NO_TIME, LEDGER_NO_TIME, 0, 1,
				    NULL }, other = o;
	struct ledger		*l;
	struct bytes		 b;
	unsigned char		*p;
	uint64_t		 rs = 77;
	size_t			 i, k, n;
	const char		*why;

	assert_non_null(l = ledger_create(&o));
	fold(l, &c->fixes, LEDGER_FIXES, 0, c->fixes.n);
	fold(l, &c->perf, LEDGER_PERF, 0, c->perf.n);
	checkpoint(l, &b);
	ledger_destroy(l);
	assert_non_null(p = malloc(b.n + 1));
	n = exhaustive ? b.n : 3000;
	for (k = 0; k < n; k++) {
		i = exhaustive ? k : (size_t)((rs = rs * 6364136223846793005ull +
		    1442695040888963407ull) >> 33) % b.n;
		refused(&o, b.p, i, "cut", i);
		memcpy(p, b.p, b.n);
		p[i] ^= 0xff;
		refused(&o, p, b.n, "byte flipped", i);
		p[i] ^= 0xfe;		/* one bit */
		refused(&o, p, b.n, "bit flipped", i);
	}
	/* one byte more, as if two writes were joined */
	memcpy(p, b.p, b.n);
	p[b.n] = '\n';
	refused(&o, p, b.n + 1, "grown", b.n);
	/* another version: refused even with a checksum that matches */
	memcpy(p, b.p, b.n);
	p[8]++;
	assert_int_equal(ledger_checkpoint_read(&o, p, b.n, &l, &why), -EPROTO);
	assert_null(l);
	/* other options */
	other.include_automated = 1;
	assert_int_equal(ledger_checkpoint_read(&other, b.p, b.n, &l, &why),
	    -ESTALE);
	other = o;
	other.want_timeline = 0;
	assert_int_equal(ledger_checkpoint_read(&other, b.p, b.n, &l, &why),
	    -ESTALE);
	other = o;
	other.from_ms = 0;
	assert_int_equal(ledger_checkpoint_read(&other, b.p, b.n, &l, &why),
	    -ESTALE);
	other = o;
	other.occurrences_of = "81e5eb9b";
	assert_int_equal(ledger_checkpoint_read(&other, b.p, b.n, &l, &why),
	    -ESTALE);
	assert_null(l);
	assert_non_null(why);
	/* and the untouched bytes still read */
	assert_int_equal(ledger_checkpoint_read(&o, b.p, b.n, &l, &why), 0);
	ledger_destroy(l);
	free(p);
	free(b.p);
}

static void
checkpoint_refuses_damage(void **state)
{
	size_t	i;

	(void)state;
	for (i = 0; i < sizeof(fixtures) / sizeof(fixtures[0]); i++) {
		struct case_	c;

		case_load(&c, "tests/fixtures", fixtures[i]);
		refuse_damage(&c, 1);
		case_free(&c);
	}
	{
		struct case_	c;

		gen_case(&c);
		refuse_damage(&c, 0);
		case_free(&c);
	}
}

/*
 * A checkpoint that passes its CRC — written by this very writer — but
 * whose contents no fold could have made: a sample whose build is past
 * the ledger's builds (history indexed l->builds[] with it: a read out
 * of bounds), a sample outside the timeline's span, a build whose window
 * ends before it starts (its series was left half unset), a row's time
 * near INT64_MIN (lastAgoMs overflowed), a worst hitch that is no number.
 * Each is refused by both readers, so the caller folds afresh.
 */
enum tamper {
	T_OPEN_HB_BUILD, T_OPEN_HB_BUILD_FAR, T_OPEN_HP_BUILD, T_SEALED_BUILD,
	T_SAMPLE_AFTER_SPAN, T_BUILD_SPAN_REVERSED, T_ROW_TIME, T_ROW_WORST_NAN,
	T_COUNT
};

static void
tamper(struct ledger *l, enum tamper t)
{
	double		 v[SAMPLES_MAXCOLS] = { 16, 8, 100, 1000, 3 };
	size_t		 i;

	switch (t) {
	case T_OPEN_HB_BUILD:
		assert_true(l->hb.np > 0);
		l->hb.pb[l->hb.np - 1] = (uint32_t)l->nbuilds;
		break;
	case T_OPEN_HB_BUILD_FAR:
		assert_true(l->hb.np > 0);
		l->hb.pb[0] = 1000000;
		break;
	case T_OPEN_HP_BUILD:
		assert_int_equal(samples_add(&l->hp, l->tmin,
		    (uint32_t)l->nbuilds + 3, v), 0);
		break;
	case T_SEALED_BUILD:
		/* a whole block's worth: sealed, its header says so */
		for (i = 0; i < SAMPLES_BLOCK; i++)
			assert_int_equal(samples_add(&l->hb, l->tmin,
			    (uint32_t)l->nbuilds + 5, v), 0);
		break;
	case T_SAMPLE_AFTER_SPAN:
		assert_int_equal(samples_add(&l->hp, l->tmax + 1,
		    SAMPLES_NO_BUILD, v), 0);
		break;
	case T_BUILD_SPAN_REVERSED:
		assert_true(l->nbuilds > 0 && l->builds[0].nhb > 0);
		l->builds[0].ts_min = l->builds[0].ts_max + 1;
		break;
	case T_ROW_TIME:
		assert_true(l->nrows > 0);
		l->rows[0]->last_ms = INT64_MIN + 1;
		break;
	case T_ROW_WORST_NAN:
		for (i = 0; i < l->nrows && !l->rows[i]->has_worst; i++)
			;
		assert_true(i < l->nrows);
		l->rows[i]->worst = NAN;
		break;
	case T_COUNT:
		break;
	}
}

static void
checkpoint_refuses_what_no_fold_makes(void **state)
{
	struct ledger_opts	 o = { LEDGER_NO_TIME, LEDGER_NO_TIME, 0, 1,
				    NULL };
	struct ledger		*l;
	struct bytes		 b;
	struct case_		 c;
	const char		*why;
	int			 t;

	(void)state;
	gen_case(&c);
	/* untouched, it reads (so what follows is the tampering refused) */
	assert_non_null(l = ledger_create(&o));
	fold(l, &c.fixes, LEDGER_FIXES, 0, c.fixes.n);
	fold(l, &c.perf, LEDGER_PERF, 0, c.perf.n);
	assert_true(samples_count(&l->hb) > SAMPLES_BLOCK);
	checkpoint(l, &b);
	ledger_destroy(l);
	assert_int_equal(ledger_checkpoint_read(&o, b.p, b.n, &l, &why), 0);
	ledger_destroy(l);
	free(b.p);
	for (t = 0; t < T_COUNT; t++) {
		assert_non_null(l = ledger_create(&o));
		fold(l, &c.fixes, LEDGER_FIXES, 0, c.fixes.n);
		fold(l, &c.perf, LEDGER_PERF, 0, c.perf.n);
		tamper(l, (enum tamper)t);
		checkpoint(l, &b);	/* its CRC is right */
		ledger_destroy(l);
		refused(&o, b.p, b.n, "tampered", (size_t)t);
		l = (struct ledger *)1;
		assert_int_equal(ledger_checkpoint_read(&o, b.p, b.n, &l,
		    &why), -EBADMSG);
		assert_null(l);
		assert_non_null(strstr(why, "damaged"));
		free(b.p);
	}
	case_free(&c);
}

/* CRC-32C bit by bit, from its definition. */
static uint32_t
crc32c_bits(const unsigned char *p, size_t n)
{
	uint32_t	c = 0xffffffffu;
	int		k;

	while (n-- > 0)
		for (c ^= *p++, k = 0; k < 8; k++)
			c = c & 1 ? 0x82f63b78u ^ (c >> 1) : c >> 1;
	return ~c;
}

/* The trailer is standard CRC-32C whichever way this machine computed it,
 * and the table every other machine uses agrees: a checkpoint reads the
 * same on a CPU with the instruction and one without. */
static void
checkpoint_crc_is_crc32c(void **state)
{
	struct ledger_opts	 o = { LEDGER_NO_TIME, LEDGER_NO_TIME, 0, 1,
				    NULL };
	struct ledger		*l;
	struct bytes		 b;
	struct case_		 c;
	uint32_t		 crc;
	size_t			 i;

	(void)state;
	assert_int_equal(crc32c_bits((const unsigned char *)"123456789", 9),
	    0xe3069283u);
	gen_case(&c);
	assert_non_null(l = ledger_create(&o));
	fold(l, &c.perf, LEDGER_PERF, 0, c.perf.n);
	checkpoint(l, &b);
	memcpy(&crc, b.p + b.n - sizeof(crc), sizeof(crc));
	assert_int_equal(crc, crc32c_bits(b.p, b.n - sizeof(crc)));
	assert_int_equal(crc32c_sw(0, b.p, b.n - sizeof(crc)), crc);
	for (i = 0; i < 64; i++)	/* and pieces of every alignment */
		assert_int_equal(crc32c_sw(0, b.p + i, 1000 + i),
		    crc32c_bits(b.p + i, 1000 + i));
	ledger_destroy(l);
	free(b.p);
	case_free(&c);
}

/*
 * The two-step write: a snapshot taken half way, written after the rest
 * of the ledger was folded (more blocks sealed, the tables grown), gives
 * the bytes a checkpoint taken at the same point gives, and its size is
 * said in advance.  Reading it back and folding the rest answers as a
 * fresh fold.
 */
static void
checkpoint_snapshot_is_the_ledger_at_begin(void **state)
{
	struct ledger_opts	 opts[2] = {
		{ LEDGER_NO_TIME, LEDGER_NO_TIME, 0, 1, NULL },
		{ LEDGER_NO_TIME, LEDGER_NO_TIME, 0, 0, NULL },
	};
	struct ledger		*l, *r;
	struct ledger_snap	*snap;
	struct bytes		 at, later;
	struct case_		 c;
	const char		*why;
	char			*fresh, *got;
	size_t			 k, split;

	(void)state;
	gen_case(&c);
	for (k = 0; k < 2; k++) {
		assert_non_null(l = ledger_create(&opts[k]));
		fold(l, &c.fixes, LEDGER_FIXES, 0, c.fixes.n);
		fold(l, &c.perf, LEDGER_PERF, 0, c.perf.n);
		fresh = answers(l, &opts[k]);
		ledger_destroy(l);
		for (split = 0; split <= c.perf.n; split += c.perf.n / 4) {
			assert_non_null(l = ledger_create(&opts[k]));
			fold(l, &c.fixes, LEDGER_FIXES, 0, c.fixes.n);
			fold(l, &c.perf, LEDGER_PERF, 0, split);
			checkpoint(l, &at);
			assert_int_equal(ledger_checkpoint_begin(l, &snap), 0);
			assert_int_equal(ledger_snap_size(snap), at.n);
			fold(l, &c.perf, LEDGER_PERF, split, c.perf.n);
			memset(&later, 0, sizeof(later));
			assert_int_equal(ledger_snap_write(snap, to_bytes,
			    &later), 0);
			ledger_snap_free(snap);
			ledger_destroy(l);
			assert_int_equal(later.n, at.n);
			if (memcmp(later.p, at.p, at.n) != 0)
				fail_msg("split %zu: the snapshot's bytes "
				    "differ", split);
			assert_int_equal(read_stream(&opts[k], later.p,
			    later.n, &r, &why), 0);
			fold(r, &c.perf, LEDGER_PERF, split, c.perf.n);
			got = answers(r, &opts[k]);
			assert_string_equal(got, fresh);
			free(got);
			ledger_destroy(r);
			free(at.p);
			free(later.p);
		}
		free(fresh);
	}
	ledger_snap_free(NULL);
	case_free(&c);
}

/*
 * Saves kept incremental (the rows serialised by runs, kept between
 * saves, made again only where the fold changed them): at every one of
 * many saves — after a few lines or after many, with rows serialised
 * ahead by prepare in slices of every size, and lines folded between the
 * prepare and the begin — the snapshot's bytes are exactly those of a
 * full write at that instant; and a snapshot still being written while
 * the fold goes on and the next begin makes its runs again keeps its own
 * bytes.
 */
static void
checkpoint_incremental_begin_is_a_full_write(void **state)
{
	struct ledger_opts	 o = { LEDGER_NO_TIME, LEDGER_NO_TIME, 0, 1,
				    NULL };
	static const size_t	 budgets[] = { 0, 1, 16, 17, 40, SIZE_MAX };
	struct ledger		*l;
	struct ledger_snap	*snap, *prev = NULL;
	struct bytes		 at, prev_at = { 0 }, got;
	struct case_		 c;
	struct ledger_counts	 n;
	size_t			 pos = 0, step = 1, round = 0, left, rows;

	(void)state;
	gen_case(&c);
	assert_non_null(l = ledger_create(&o));
	fold(l, &c.fixes, LEDGER_FIXES, 0, c.fixes.n);
	while (pos < c.perf.n) {
		size_t	to = pos + step > c.perf.n ? c.perf.n : pos + step;

		fold(l, &c.perf, LEDGER_PERF, pos, to);
		pos = to;
		step = step * 3 % 397 + 1;
		assert_int_equal(ledger_checkpoint_prepare(l,
		    budgets[round % 6], &left), 0);
		ledger_counts(l, &n);
		rows = (size_t)n.rows;
		assert_true(left <= rows + 16);
		if (budgets[round % 6] == SIZE_MAX)
			assert_int_equal(left, 0);
		if (round % 3 == 1 && pos < c.perf.n) {
			/* rows changed after the prepare: begin sees them */
			fold(l, &c.perf, LEDGER_PERF, pos, pos + 1);
			pos++;
		}
		checkpoint(l, &at);
		assert_int_equal(ledger_checkpoint_begin(l, &snap), 0);
		assert_int_equal(ledger_snap_size(snap), at.n);
		if (prev != NULL) {
			/* written after its runs were made again */
			memset(&got, 0, sizeof(got));
			assert_int_equal(ledger_snap_write(prev, to_bytes,
			    &got), 0);
			assert_int_equal(got.n, prev_at.n);
			if (memcmp(got.p, prev_at.p, got.n) != 0)
				fail_msg("round %zu: an earlier snapshot "
				    "changed under its write", round);
			free(got.p);
			ledger_snap_free(prev);
			free(prev_at.p);
		}
		memset(&got, 0, sizeof(got));
		assert_int_equal(ledger_snap_write(snap, to_bytes, &got), 0);
		assert_int_equal(got.n, at.n);
		if (memcmp(got.p, at.p, at.n) != 0)
			fail_msg("round %zu (line %zu): the incremental "
			    "snapshot differs from a full write", round, pos);
		free(got.p);
		prev = snap;
		prev_at = at;
		round++;
	}
	assert_true(round > 20);
	/* the ledger goes first: freeing the snapshot is still safe, its
	 * runs are its own too */
	ledger_destroy(l);
	ledger_snap_free(prev);
	free(prev_at.p);
	case_free(&c);
}

/* The streamed reader pulls in bounded pieces: it never asks for the
 * whole checkpoint at once. */
static void
checkpoint_stream_pulls_in_pieces(void **state)
{
	struct ledger_opts	 o = { LEDGER_NO_TIME, LEDGER_NO_TIME, 0, 1,
				    NULL };
	struct ledger		*l;
	struct bytes		 b;
	struct case_		 c;
	struct source		 s;
	const char		*why;

	(void)state;
	gen_case(&c);
	assert_non_null(l = ledger_create(&o));
	/* the lines three times over: a checkpoint of a few pieces */
	fold(l, &c.perf, LEDGER_PERF, 0, c.perf.n);
	fold(l, &c.perf, LEDGER_PERF, 0, c.perf.n);
	fold(l, &c.perf, LEDGER_PERF, 0, c.perf.n);
	checkpoint(l, &b);
	ledger_destroy(l);
	assert_true(b.n > 2 * 65536);
	s.p = b.p;
	s.n = b.n;
	s.at = s.pulls = 0;
	assert_int_equal(ledger_checkpoint_read_stream(&o, b.n, from_source,
	    &s, &l, &why), 0);
	assert_int_equal(s.at, b.n);
	assert_true(s.pulls >= b.n / 65536);
	ledger_destroy(l);
	/* a source that fails: its error, and no ledger */
	s.at = 0;
	s.n = b.n / 2;
	l = (struct ledger *)1;
	assert_int_equal(ledger_checkpoint_read_stream(&o, b.n, from_source,
	    &s, &l, &why), -EBADMSG);
	assert_null(l);
	assert_string_equal(why, "could not be read");
	free(b.p);
	case_free(&c);
}

/* A sink that fails stops the write with its error. */
static void
checkpoint_write_reports_the_sink_error(void **state)
{
	struct ledger_opts	 o = { LEDGER_NO_TIME, LEDGER_NO_TIME, 0, 1,
				    NULL };
	struct ledger		*l;
	struct bytes		 b = { NULL, 0, 0, 100 };
	struct case_		 c;

	(void)state;
	case_load(&c, "tests/fixtures", "basic");
	assert_non_null(l = ledger_create(&o));
	fold(l, &c.perf, LEDGER_PERF, 0, c.perf.n);
	assert_int_equal(ledger_checkpoint_write(l, to_bytes, &b), -ENOSPC);
	ledger_destroy(l);
	free(b.p);
	case_free(&c);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(checkpoint_resumes_every_fixture),
		cmocka_unit_test(checkpoint_resumes_a_generated_ledger),
		cmocka_unit_test(checkpoint_refuses_damage),
		cmocka_unit_test(checkpoint_refuses_what_no_fold_makes),
		cmocka_unit_test(checkpoint_snapshot_is_the_ledger_at_begin),
		cmocka_unit_test(checkpoint_incremental_begin_is_a_full_write),
		cmocka_unit_test(checkpoint_stream_pulls_in_pieces),
		cmocka_unit_test(checkpoint_write_reports_the_sink_error),
		cmocka_unit_test(checkpoint_crc_is_crc32c),
	};

	return cmocka_run_group_tests(tests, gen_setup, gen_teardown);
}
