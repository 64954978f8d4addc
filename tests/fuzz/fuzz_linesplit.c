/*
 * fuzz_linesplit — a byte stream cut into chunks at fuzzer-chosen points
 * must give the same lines, offsets and over-long reports as the stream
 * fed whole, and as a plain reference split (memchr over the whole
 * input).  The first byte of the input picks the chunk sizes.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ledger/linesplit.h"

#define MAX_LINE	64	/* small, so over-long lines happen */
#define MAX_EVENTS	16384	/* above -max_len: one per byte */

int	LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);

struct seen {
	uint64_t	off[MAX_EVENTS], len[MAX_EVENTS];
	uint32_t	sum[MAX_EVENTS];
	char		longl[MAX_EVENTS];
	size_t		n;
};

static uint32_t
sum(const char *p, size_t n)
{
	uint32_t	h = 2166136261u;

	while (n-- > 0)
		h = (h ^ (unsigned char)*p++) * 16777619u;
	return h;
}

static void
on_line(void *arg, const char *line, size_t len, uint64_t offset)
{
	struct seen	*s = arg;

	if (s->n == MAX_EVENTS)
		abort();
	if (len > MAX_LINE || memchr(line, '\n', len) != NULL)
		abort();
	s->off[s->n] = offset;
	s->len[s->n] = len;
	s->sum[s->n] = sum(line, len);
	s->longl[s->n++] = 0;
}

static void
on_long(void *arg, uint64_t offset, uint64_t len)
{
	struct seen	*s = arg;

	if (s->n == MAX_EVENTS)
		abort();
	s->off[s->n] = offset;
	s->len[s->n] = len;
	s->sum[s->n] = 0;
	s->longl[s->n++] = 1;
}

static void
split(const char *p, size_t n, unsigned step, struct seen *s,
    uint64_t *cursor, uint64_t *pending)
{
	struct linesplit	ls;
	size_t			at = 0, k;
	unsigned		x = step | 1;

	memset(s, 0, sizeof(*s));
	linesplit_init(&ls, MAX_LINE, on_line, on_long, s);
	while (at < n) {
		/* chunk sizes from a tiny LCG seeded by the first byte */
		x = x * 1103515245u + 12345u;
		k = step == 0 ? n - at : 1 + (x >> 16) % (step * 4u + 1u);
		if (k > n - at)
			k = n - at;
		if (linesplit_feed(&ls, p + at, k) != 0)
			abort();
		at += k;
	}
	*cursor = linesplit_cursor(&ls);
	*pending = linesplit_pending(&ls);
	linesplit_free(&ls);
}

int
LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
	static struct seen	whole, cut;
	const char		*p = (const char *)data + 1, *nl;
	uint64_t		 c1, c2, p1, p2, off = 0;
	size_t			 n, i = 0;

	if (size < 1)
		return 0;
	n = size - 1;
	split(p, n, 0, &whole, &c1, &p1);
	split(p, n, data[0], &cut, &c2, &p2);
	if (whole.n != cut.n || c1 != c2 || p1 != p2)
		abort();
	if (memcmp(whole.off, cut.off, whole.n * sizeof(uint64_t)) ||
	    memcmp(whole.len, cut.len, whole.n * sizeof(uint64_t)) ||
	    memcmp(whole.sum, cut.sum, whole.n * sizeof(uint32_t)) ||
	    memcmp(whole.longl, cut.longl, whole.n))
		abort();
	/* the reference: every '\n' ends one line, long or not */
	while ((nl = memchr(p + off, '\n', n - off)) != NULL) {
		size_t	len = (size_t)(nl - (p + off));

		if (i >= whole.n || whole.off[i] != off ||
		    whole.len[i] != len || whole.longl[i] != (len > MAX_LINE))
			abort();
		if (!whole.longl[i] && whole.sum[i] != sum(p + off, len))
			abort();
		off += len + 1;
		i++;
	}
	if (i != whole.n || c1 != off || p1 != n - off)
		abort();
	return 0;
}
