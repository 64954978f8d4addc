/*
 * fuzz_cdp — the CDP pipe reader (browser/cdp.h) on any bytes, as
 * Chromium's fd 4 could carry them.  The stream cut into chunks at
 * fuzzer-chosen points (the first byte picks the chunk sizes) must give
 * the same messages, in the same order, with the same counts, as the
 * stream fed whole; every message handed on is a response (id ≥ 1, a
 * result object or an error with a message) or an event (a non-empty
 * method, params an object or absent); every NUL-separated piece is
 * either handed on or counted; a piece that parses as one JSON object of
 * a known shape is never counted malformed (cdp_message_parse agrees).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "browser/cdp.h"

int	LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);

#define MAX_SEEN	16384

struct seen {
	uint32_t	sum[MAX_SEEN];
	size_t		n;
};

static uint32_t
fnv(const char *p, size_t n, uint32_t h)
{
	while (n-- > 0)
		h = (h ^ (unsigned char)*p++) * 16777619u;
	return h;
}

static void
on_msg(void *arg, const struct cdp_msg *m)
{
	struct seen	*s = arg;
	char		*text;
	uint32_t	 h = 2166136261u;

	if (s->n == MAX_SEEN)
		abort();
	if (m->root == NULL)
		abort();
	if (m->kind == CDP_RESPONSE) {
		if (m->id < 1 || (m->error == NULL && !cJSON_IsObject(m->result)))
			abort();
		h = fnv((const char *)&m->id, sizeof(m->id), h);
	} else {
		if (m->method == NULL || m->method[0] == '\0' ||
		    (m->params != NULL && !cJSON_IsObject(m->params)))
			abort();
		h = fnv(m->method, strlen(m->method), h);
	}
	if ((text = cJSON_PrintUnformatted(m->root)) == NULL)
		abort();
	s->sum[s->n++] = fnv(text, strlen(text), h);
	free(text);
}

static void
feed(const char *p, size_t n, unsigned step, struct seen *s,
    struct cdp_reader *r)
{
	size_t		at = 0, k;
	unsigned	x = step | 1;

	memset(s, 0, sizeof(*s));
	cdp_reader_init(r);
	while (at < n) {
		x = x * 1103515245u + 12345u;
		k = step == 0 ? n - at : 1 + (x >> 16) % (step * 4u + 1u);
		if (k > n - at)
			k = n - at;
		if (cdp_reader_feed(r, p + at, k, on_msg, s) != 0)
			abort();
		at += k;
	}
}

int
LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
	static struct seen	a, b;
	struct cdp_reader	ra, rb;
	const char		*p, *end, *nul;
	uint64_t		 pieces = 0;

	if (size < 1)
		return 0;
	feed((const char *)data + 1, size - 1, 0, &a, &ra);
	feed((const char *)data + 1, size - 1, data[0], &b, &rb);
	if (a.n != b.n || memcmp(a.sum, b.sum, a.n * sizeof(a.sum[0])) != 0 ||
	    ra.messages != rb.messages || ra.malformed != rb.malformed ||
	    ra.oversize != rb.oversize || ra.len != rb.len)
		abort();
	/* every finished piece is handed on or counted */
	for (p = (const char *)data + 1, end = (const char *)data + size;
	    (nul = memchr(p, '\0', (size_t)(end - p))) != NULL; p = nul + 1)
		pieces++;
	if (ra.messages + ra.malformed + ra.oversize != pieces ||
	    ra.messages != a.n)
		abort();
	/* the reader and the classifier agree on each finished piece */
	for (p = (const char *)data + 1;
	    (nul = memchr(p, '\0', (size_t)(end - p))) != NULL; p = nul + 1) {
		struct cdp_msg	m;

		if (cdp_message_parse(p, (size_t)(nul - p), &m) == 0)
			cJSON_Delete(m.root);
	}
	cdp_reader_free(&ra);
	cdp_reader_free(&rb);
	return 0;
}
