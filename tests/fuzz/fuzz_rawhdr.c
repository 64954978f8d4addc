/*
 * fuzz_rawhdr — hostile bytes as a connection's stream of requests: the
 * header blocks and verdicts must not depend on how the stream was cut
 * into reads (the first byte of the input picks the cut), nor where each
 * request ends in the stream (its block and body: what was read past a
 * request with a body is a request behind it, daemon/api.c), every field
 * must lie inside its block, and nothing may crash or grow without bound.
 * (Seeded by tests/fuzz/run.sh with requests from tests/daemon/api.test.mjs's
 * kind: good ones and each misread libwebsockets 4.1.6 has.)
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/rawhdr.h"

int	LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);

#define MAX_REQS	64

struct outcome {
	size_t		 n;
	const char	*bad[MAX_REQS];
	size_t		 len[MAX_REQS], nf[MAX_REQS];
	uint32_t	 sum[MAX_REQS];
	uint64_t	 ends[MAX_REQS];
	const char	*end;
};

static uint32_t
sum(const char *p, size_t n)
{
	uint32_t	h = 2166136261u;

	while (n-- > 0)
		h = (h ^ (unsigned char)*p++) * 16777619u;
	return h;
}

/* Take everything complete; check each block's fields. */
static void
drain(struct rawhdr *h, struct outcome *o)
{
	struct rawhdr_req	q;
	size_t			i;

	while (o->n < MAX_REQS && rawhdr_take(h, &q) == 0) {
		for (i = 0; i < q.nf; i++) {
			if ((size_t)q.f[i].name + q.f[i].nlen > q.len ||
			    (size_t)q.f[i].value + q.f[i].lead_len > q.len ||
			    q.f[i].vlen > q.f[i].lead_len || q.f[i].nlen == 0)
				abort();
		}
		o->bad[o->n] = q.bad;
		o->len[o->n] = q.len;
		o->nf[o->n] = q.nf;
		o->sum[o->n] = sum(q.block, q.len - 2);
		/* requests end in stream order, each after its block */
		if (q.end != 0 && (q.end < q.len ||
		    (o->n > 0 && o->ends[o->n - 1] != 0 &&
		    q.end < o->ends[o->n - 1] + q.len)))
			abort();
		o->ends[o->n] = q.end;
		o->n++;
		rawhdr_req_free(&q);
	}
}

static void
run(const unsigned char *data, size_t size, size_t step, struct outcome *o)
{
	struct rawhdr		h;
	struct rawhdr_req	q;
	size_t			at = 0, k;

	memset(o, 0, sizeof(*o));
	rawhdr_init(&h);
	while (at < size) {
		k = size - at < step ? size - at : step;
		rawhdr_feed(&h, (const char *)data + at, k);
		at += k;
		if (h.cap > 2 * RAWHDR_BLOCK_MAX)
			abort();	/* bounded, whatever comes */
		drain(&h, o);	/* as lws reads: blocks taken as they come */
	}
	drain(&h, o);
	if (h.fed != size)
		abort();
	(void)rawhdr_take(&h, &q);
	o->end = q.bad;
	rawhdr_free(&h);
}

int
LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
	struct outcome	a, b;
	size_t		i, step;

	if (size < 1)
		return 0;
	/* a byte at a time, and in reads of up to 64 bytes (at most four
	 * whole blocks in one read: never more than RAWHDR_PENDING ahead) */
	step = (size_t)data[0] % 64 + 1;
	run(data + 1, size - 1, 1, &a);
	run(data + 1, size - 1, step, &b);
	if (a.n != b.n || (a.end == NULL) != (b.end == NULL))
		abort();
	for (i = 0; i < a.n; i++)
		if (a.len[i] != b.len[i] ||
		    a.nf[i] != b.nf[i] || a.sum[i] != b.sum[i] ||
		    a.ends[i] != b.ends[i] ||
		    (a.bad[i] == NULL) != (b.bad[i] == NULL))
			abort();
	return 0;
}
