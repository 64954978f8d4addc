/*
 * fuzz_checkpoint — a checkpoint's bytes through the ledger's checkpoint
 * readers (ledger/checkpoint.c): the in-memory one and the streamed one.
 * The input is a checkpoint without its trailer; the harness adds the
 * length and the CRC-32C, so that the fuzzer explores what a checkpoint
 * that passes its checksum by accident (or by a writer's bug) can make a
 * reader do, not the checksum.  The fold options are taken from the
 * input's own option bytes, so it is read rather than refused as
 * "folded with other options".
 *
 * What must hold: both readers give the same verdict and, when they
 * accept, ledgers that render the same (the catalogue, one issue, the
 * timeline at several bucket counts, each build's window, the skipped
 * lines) with every number finite; a refusal is one of the documented
 * ones.  An accepted ledger written back is read again, and written back
 * again gives the same bytes and the same renderings.  And nothing reads
 * out of bounds: an index the file gives (a sample's build, a row's
 * builds) is checked before anything uses it.
 *
 * A failure prints where two renderings part, or which number is not
 * finite.  What it found is in tests/fuzz/regress/fuzz_checkpoint/: a
 * heartbeat's build index past the builds (a SEGV in history), a build
 * window that ends before it starts (its series half unset), a row time
 * near INT64_MIN (lastAgoMs overflowed), a worst hitch that is NaN.
 *
 * Seeds: tests/fuzz/seeds/fuzz_checkpoint/ keeps a few checkpoints of
 * the fixtures as files.  More are made at each run: with
 * FUZZ_CKPT_SEED=<a ledger> and FUZZ_CKPT_OUT=<prefix> in the
 * environment, LLVMFuzzerInitialize folds the ledger under four sets of
 * options, writes each checkpoint (without its trailer) to <prefix>.<n>
 * and exits; tests/fuzz/run.sh does so for the fixtures and a generated
 * ledger.
 */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "ledger/checkpoint.h"
#include "ledger/footprint.h"
#include "ledger/ledger.h"

#define TRAILER	12		/* u64 total length, u32 CRC-32C */
#define NOW	1790812800000LL

int	LLVMFuzzerInitialize(int *argc, char ***argv);
int	LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);

static void
fail(const char *what)
{
	fprintf(stderr, "fuzz_checkpoint: %s\n", what);
	abort();
}

/* Two renderings that should agree: say where they part, then fail. */
static void
fail_diff(const char *what, const unsigned char *a, size_t na,
    const unsigned char *b, size_t nb)
{
	size_t	i = 0, from;

	while (i < na && i < nb && a[i] == b[i])
		i++;
	from = i > 200 ? i - 200 : 0;
	fprintf(stderr, "fuzz_checkpoint: they part at byte %zu:\n"
	    "  one: %.*s\n  two: %.*s\n", i, (int)((na > from + 400 ? from +
	    400 : na) - from), (const char *)a + from, (int)((nb > from + 400 ?
	    from + 400 : nb) - from), (const char *)b + from);
	fail(what);
}

struct buf {
	unsigned char	*p;
	size_t		 n;
};

static int
to_buf(void *arg, const void *data, size_t len)
{
	struct buf	*b = arg;
	unsigned char	*np = realloc(b->p, b->n + len + 1);

	if (np == NULL)
		return -ENOMEM;
	b->p = np;
	memcpy(b->p + b->n, data, len);
	b->n += len;
	return 0;
}

/* --- seeds --------------------------------------------------------------- */

static void
seed_one(const char *ledger, const struct ledger_opts *o, const char *out)
{
	struct ledger	*l;
	struct buf	 b = { NULL, 0 };
	FILE		*f;
	char		*line = NULL;
	size_t		 cap = 0;
	ssize_t		 n;
	uint64_t	 off = 0;

	if ((f = fopen(ledger, "r")) == NULL || (l = ledger_create(o)) ==
	    NULL)
		exit(2);
	while ((n = getline(&line, &cap, f)) > 0) {
		struct ledger_event	ev;

		ledger_fold_perf(l, line, line[n - 1] == '\n' ? (size_t)n - 1 :
		    (size_t)n, off, &ev);
		off += (uint64_t)n;
	}
	free(line);
	fclose(f);
	if (ledger_checkpoint_write(l, to_buf, &b) != 0 || b.n < TRAILER)
		exit(2);
	ledger_destroy(l);
	if ((f = fopen(out, "wb")) == NULL ||
	    fwrite(b.p, 1, b.n - TRAILER, f) != b.n - TRAILER)
		exit(2);
	fclose(f);
	free(b.p);
}

static void
seeds(const char *ledger, const char *prefix)
{
	const struct ledger_opts os[] = {
		{ LEDGER_NO_TIME, LEDGER_NO_TIME, 0, 1, NULL },
		{ LEDGER_NO_TIME, LEDGER_NO_TIME, 1, 1, NULL },
		{ 1788253200000LL, 1790812800000LL, 0, 1, NULL },
		{ LEDGER_NO_TIME, LEDGER_NO_TIME, 0, 0, "3fd84d65" },
	};
	char	out[4096];
	size_t	i;

	for (i = 0; i < sizeof(os) / sizeof(os[0]); i++) {
		snprintf(out, sizeof(out), "%s.%zu", prefix, i);
		seed_one(ledger, &os[i], out);
	}
}

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char	*in = getenv("FUZZ_CKPT_SEED"), *out =
			    getenv("FUZZ_CKPT_OUT");

	(void)argc;
	(void)argv;
	if (in != NULL && out != NULL) {
		seeds(in, out);
		exit(0);
	}
	return 0;
}

/* --- the checks ---------------------------------------------------------- */

static void
finite_tree(const cJSON *o)
{
	const cJSON	*it;

	if (cJSON_IsNumber(o) && !isfinite(o->valuedouble)) {
		fprintf(stderr, "fuzz_checkpoint: \"%s\" is %g\n",
		    o->string ? o->string : "(an element)", o->valuedouble);
		fail("a rendered number is not finite");
	}
	for (it = o->child; it != NULL; it = it->next)
		finite_tree(it);
}

static void
add_json(struct buf *b, cJSON *o)
{
	char	*s;

	if (o == NULL) {
		to_buf(b, "(null)", 6);
		return;
	}
	finite_tree(o);
	if ((s = cJSON_PrintUnformatted(o)) != NULL) {
		to_buf(b, s, strlen(s));
		free(s);
	}
	cJSON_Delete(o);
}

/* Everything a reader of the ledger can ask, as one string. */
static struct buf
render(struct ledger *l)
{
	struct ledger_query	 q = { 0 };
	struct ledger_counts	 c;
	struct buf		 b = { NULL, 0 };
	cJSON			*issues, *first;
	const char		*err = NULL, *id;
	char			 hex[9] = "";
	int			 k;

	ledger_counts(l, &c);
	issues = ledger_issues_json(l, &q, NOW);
	first = issues ? cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(
	    issues, "issues"), 0) : NULL;
	id = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(first,
	    "id"));
	if (id != NULL)
		snprintf(hex, sizeof(hex), "%s", id);
	add_json(&b, issues);
	if (hex[0] != '\0')
		add_json(&b, ledger_issue_json(l, hex, NOW));
	for (k = 1; k <= 48; k *= 4)
		add_json(&b, ledger_history_json(l, k, NOW));
	add_json(&b, ledger_skipped_json(l));
	add_json(&b, ledger_window_json(l, NULL, 1, &err));
	add_json(&b, ledger_window_json(l, NULL, 0, &err));
	to_buf(&b, "", 1);
	return b;
}

struct pull {
	const unsigned char	*p;
	size_t			 left;
};

static int
pull(void *arg, void *buf, size_t n)
{
	struct pull	*s = arg;

	if (n > s->left)
		return -EBADMSG;
	memcpy(buf, s->p, n);
	s->p += n;
	s->left -= n;
	return 0;
}

int
LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
	struct ledger_opts	 o = { LEDGER_NO_TIME, LEDGER_NO_TIME, 0, 1,
				   NULL };
	struct ledger		*l1 = NULL, *l2 = NULL, *l3 = NULL;
	struct buf		 in = { NULL, 0 }, w1 = { NULL, 0 },
				 w2 = { NULL, 0 }, r1, r2, r3;
	struct pull		 s;
	const char		*why1 = NULL, *why2 = NULL;
	uint64_t		 total = (uint64_t)size + TRAILER;
	uint32_t		 crc, occ;
	char			 hex[9];
	int			 rc1, rc2;

	if (to_buf(&in, data, size) != 0 || to_buf(&in, &total, 8) != 0)
		return 0;
	crc = crc32c_more(0, in.p, in.n);
	if (to_buf(&in, &crc, 4) != 0)
		return 0;
	/* the options the checkpoint says it was folded with */
	if (size >= 39) {
		memcpy(&o.from_ms, data + 16, 8);
		memcpy(&o.to_ms, data + 24, 8);
		o.include_automated = data[32] != 0;
		o.want_timeline = data[33] != 0;
		if (data[34] != 0) {
			memcpy(&occ, data + 35, 4);
			footprint_hex(occ, hex);
			o.occurrences_of = hex;
		}
	}
	rc1 = ledger_checkpoint_read(&o, in.p, in.n, &l1, &why1);
	s.p = in.p;
	s.left = in.n;
	rc2 = ledger_checkpoint_read_stream(&o, in.n, pull, &s, &l2, &why2);
	if (rc1 != rc2)
		fail("the two readers disagree on the verdict");
	if (rc1 != 0) {
		if ((rc1 != -EBADMSG && rc1 != -EPROTO && rc1 != -ESTALE &&
		    rc1 != -ENOMEM) || why1 == NULL)
			fail("a refusal that is none of the documented ones");
		free(in.p);
		return 0;
	}
	r1 = render(l1);
	r2 = render(l2);
	if (r1.n != r2.n || memcmp(r1.p, r2.p, r1.n) != 0)
		fail_diff("the two readers' ledgers render differently", r1.p,
		    r1.n, r2.p, r2.n);
	/* written back, read again, written again: the same */
	if (ledger_checkpoint_write(l1, to_buf, &w1) != 0)
		fail("an accepted checkpoint cannot be written back");
	if ((rc1 = ledger_checkpoint_read(&o, w1.p, w1.n, &l3, &why1)) != 0) {
		if (rc1 != -ENOMEM)
			fail("a checkpoint written back is refused");
	} else {
		r3 = render(l3);
		if (ledger_checkpoint_write(l3, to_buf, &w2) != 0 ||
		    w1.n != w2.n || memcmp(w1.p, w2.p, w1.n) != 0)
			fail("written back twice, not the same bytes");
		if (r1.n != r3.n || memcmp(r1.p, r3.p, r1.n) != 0)
			fail_diff("read back, it renders differently", r1.p,
			    r1.n, r3.p, r3.n);
		free(r3.p);
	}
	ledger_destroy(l1);
	ledger_destroy(l2);
	ledger_destroy(l3);
	free(r1.p);
	free(r2.p);
	free(w1.p);
	free(w2.p);
	free(in.p);
	return 0;
}
