/*
 * rawhdr: a request's header block as sent — the grammar it must follow,
 * the fields kept for the guard, and the framing from one request to the
 * next, however the bytes are cut.
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "daemon/guard.h"
#include "daemon/rawhdr.h"

/* Feed s in pieces of `step` bytes (0: whole). */
static void
feed(struct rawhdr *h, const char *s, size_t step)
{
	size_t	n = strlen(s), at = 0, k;

	if (step == 0)
		step = n ? n : 1;
	while (at < n) {
		k = n - at < step ? n - at : step;
		rawhdr_feed(h, s + at, k);
		at += k;
	}
}

/* The verdict on one request alone: NULL when it is well-formed. */
static const char *
verdict(const char *s)
{
	static char	why[256];
	struct rawhdr	h;
	struct rawhdr_req q;

	rawhdr_init(&h);
	feed(&h, s, 0);
	if (rawhdr_take(&h, &q) != 0)
		snprintf(why, sizeof(why), "(none: %s)", q.bad ? q.bad : "-");
	else
		snprintf(why, sizeof(why), "%s", q.bad ? q.bad : "");
	rawhdr_req_free(&q);
	rawhdr_free(&h);
	return why[0] ? why : NULL;
}

static void
rawhdr_keeps_the_fields_of_a_good_request(void **state)
{
	struct rawhdr		h;
	struct rawhdr_req	q;
	const char		*v;
	size_t			step;

	(void)state;
	for (step = 0; step < 9; step++) {
		rawhdr_init(&h);
		feed(&h, "GET /api/sloptimize/status?x=1 HTTP/1.1\r\n"
		    "Host:  localhost:7567 \r\nORIGIN: http://localhost:5173\r\n"
		    "X-Thing:\tspaced  \r\nAccept: */*\r\n\r\n", step);
		assert_int_equal(rawhdr_take(&h, &q), 0);
		assert_null(q.bad);
		assert_int_equal(q.method_len, 3);
		assert_int_equal(q.nf, 4);
		assert_int_equal(rawhdr_get(&q, "host", &v), 14);
		assert_memory_equal(v, "localhost:7567", 14);
		/* names are lowercased, values trimmed */
		assert_int_equal(rawhdr_get(&q, "origin", &v), 21);
		assert_int_equal(rawhdr_get(&q, "x-thing", &v), 6);
		/* libwebsockets keeps an unknown value's trailing blanks */
		assert_int_equal(q.f[2].lead_len, 8);
		assert_int_equal(rawhdr_get(&q, "cookie", &v), -1);
		rawhdr_req_free(&q);
		assert_int_equal(rawhdr_take(&h, &q), -ENOENT);
		assert_null(q.bad);
		rawhdr_free(&h);
	}
}

/* Each of the faults libwebsockets 4.1.6 misreads, and the rest of the
 * grammar. */
static void
rawhdr_refuses_what_is_not_the_grammar(void **state)
{
	(void)state;
	assert_null(verdict("GET / HTTP/1.1\r\nHost: a\r\n\r\n"));
	assert_null(verdict("\r\n\r\nGET / HTTP/1.0\r\n\r\n"));
	/* a header name that is a prefix of a known one is still fine
	 * here: it is the guard that sees lws lost the next line */
	assert_null(verdict("GET / HTTP/1.1\r\nAcc: a\r\nOrigin: http://e\r\n"
	    "\r\n"));
	assert_non_null(verdict("GET / HTTP/1.1\r\nTransfer-Encoding : "
	    "chunked\r\n\r\n"));
	assert_non_null(verdict("GET / HTTP/1.1\r\nOrigin\t: x\r\n\r\n"));
	assert_null(verdict("GET / HTTP/1.1\r\nHost: localhost\r\n\r\n"));
	{
		const char	nul[] = "GET / HTTP/1.1\r\nHost: localhost\0.evil"
				    ".com\r\n\r\n";
		struct rawhdr	h;
		struct rawhdr_req q;

		rawhdr_init(&h);
		rawhdr_feed(&h, nul, sizeof(nul) - 1);
		assert_int_equal(rawhdr_take(&h, &q), 0);
		assert_string_equal(q.bad, "a header value holds a NUL");
		rawhdr_req_free(&q);
		rawhdr_free(&h);
	}
	assert_non_null(verdict("GET / HTTP/1.1\r\nHost: a\r\n b\r\n\r\n"));
	assert_non_null(verdict("GET / HTTP/1.1\r\nHost: a\nX: b\r\n\r\n"));
	assert_non_null(verdict("GET / HTTP/1.1\r\nHost: a\rb\r\n\r\n"));
	assert_non_null(verdict("GET / HTTP/1.1\r\nHost: a\x01\r\n\r\n"));
	assert_non_null(verdict("GET / HTTP/1.1\r\nHost: a\r\nhost: b\r\n\r\n"));
	assert_non_null(verdict("GET / HTTP/1.1\r\nOrigin: a\r\n"
	    "Sec-WebSocket-Origin: b\r\n\r\n"));
	assert_non_null(verdict("GET / HTTP/1.1\r\n: x\r\n\r\n"));
	assert_non_null(verdict("GET / HTTP/1.1\r\nX[: x\r\n\r\n"));
	assert_non_null(verdict("GET /\x7f HTTP/1.1\r\n\r\n"));
	assert_non_null(verdict("GET / HTTP/2.0\r\n\r\n"));
	assert_non_null(verdict("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"));
	assert_non_null(verdict("GET  / HTTP/1.1\r\n\r\n"));
	assert_non_null(verdict("G=T / HTTP/1.1\r\n\r\n"));
	/* repeated headers the guards do not read are fine */
	assert_null(verdict("GET / HTTP/1.1\r\nAccept: a\r\nAccept: b\r\n\r\n"));
}

/* Keep-alive: a body is skipped by its length; what ends the HTTP
 * framing makes every later request a bad one. */
static void
rawhdr_follows_the_requests_of_a_connection(void **state)
{
	struct rawhdr		h;
	struct rawhdr_req	q;
	size_t			step;
	const char		*v;

	(void)state;
	for (step = 0; step < 7; step++) {
		rawhdr_init(&h);
		feed(&h, "POST /a HTTP/1.1\r\nContent-Length: 17\r\n\r\n"
		    "GET /x HTTP/1.1\r\n"	/* a body, not a request */
		    "GET /b HTTP/1.1\r\nHost: b\r\n\r\n", step);
		assert_int_equal(rawhdr_take(&h, &q), 0);
		assert_null(q.bad);
		assert_int_equal(rawhdr_get(&q, "content-length", &v), 2);
		rawhdr_req_free(&q);
		assert_int_equal(rawhdr_take(&h, &q), 0);
		assert_null(q.bad);
		assert_int_equal(rawhdr_get(&q, "host", &v), 1);
		assert_int_equal(*v, 'b');
		rawhdr_req_free(&q);
		rawhdr_free(&h);
	}
	/* after a malformed block nothing is trusted */
	rawhdr_init(&h);
	feed(&h, "GET / HTTP/1.1\r\nBad : x\r\n\r\nGET / HTTP/1.1\r\n\r\n", 0);
	assert_int_equal(rawhdr_take(&h, &q), 0);
	assert_non_null(q.bad);
	rawhdr_req_free(&q);
	assert_int_equal(rawhdr_take(&h, &q), -ENOENT);
	assert_non_null(q.bad);
	rawhdr_free(&h);
	/* chunked, or an upgrade: what follows is not ours to parse */
	rawhdr_init(&h);
	feed(&h, "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n"
	    "5\r\nhello\r\n0\r\n\r\n", 0);
	assert_int_equal(rawhdr_take(&h, &q), 0);
	assert_null(q.bad);
	rawhdr_req_free(&q);
	assert_int_equal(rawhdr_take(&h, &q), -ENOENT);
	assert_non_null(q.bad);
	rawhdr_free(&h);
	/* a bad Content-Length */
	assert_null(verdict("POST / HTTP/1.1\r\nContent-Length: 1x\r\n\r\n"));
	rawhdr_init(&h);
	feed(&h, "POST / HTTP/1.1\r\nContent-Length: 1x\r\n\r\nGET / "
	    "HTTP/1.1\r\n\r\n", 0);
	assert_int_equal(rawhdr_take(&h, &q), 0);
	rawhdr_req_free(&q);
	assert_int_equal(rawhdr_take(&h, &q), -ENOENT);
	assert_non_null(q.bad);
	rawhdr_free(&h);
}

/* Each request says where it ends in the stream (after its body), and
 * the parser how much it was fed: more fed than a request with a body
 * ends at is a request pipelined behind it (daemon/api.c closes then). */
static void
rawhdr_says_where_each_request_ends(void **state)
{
	static const char	two[] = "\r\nPOST /a HTTP/1.1\r\n"
				    "Content-Length: 5\r\n\r\nhello"
				    "GET /b HTTP/1.1\r\nHost: b\r\n\r\n";
	struct rawhdr		h;
	struct rawhdr_req	q;
	size_t			step, first = strlen("\r\nPOST /a HTTP/1.1\r\n"
				    "Content-Length: 5\r\n\r\nhello");

	(void)state;
	for (step = 0; step < 7; step++) {
		rawhdr_init(&h);
		feed(&h, two, step);
		assert_int_equal(h.fed, strlen(two));
		assert_int_equal(rawhdr_take(&h, &q), 0);
		assert_true(q.has_body);
		assert_int_equal(q.end, first);
		assert_true(h.fed > q.end);	/* a request behind it */
		rawhdr_req_free(&q);
		assert_int_equal(rawhdr_take(&h, &q), 0);
		assert_false(q.has_body);
		assert_int_equal(q.end, strlen(two));
		rawhdr_req_free(&q);
		rawhdr_free(&h);
	}
	/* a body still coming: fed short of the end */
	rawhdr_init(&h);
	feed(&h, "POST /a HTTP/1.1\r\nContent-Length: 10\r\n\r\nhel", 0);
	assert_int_equal(rawhdr_take(&h, &q), 0);
	assert_true(h.fed < q.end);
	rawhdr_req_free(&q);
	rawhdr_free(&h);
	/* a Content-Length that overflows the stream offset loses the
	 * framing; a malformed block has no end */
	rawhdr_init(&h);
	feed(&h, "POST /a HTTP/1.1\r\nContent-Length: "
	    "18446744073709551615\r\n\r\n", 0);
	assert_int_equal(rawhdr_take(&h, &q), 0);
	assert_int_equal(q.end, 0);
	rawhdr_req_free(&q);
	rawhdr_free(&h);
}

/* Memory is bounded: an endless header block, or requests pipelined far
 * ahead of their answers, lose the framing instead of growing. */
static void
rawhdr_is_bounded(void **state)
{
	struct rawhdr		h;
	struct rawhdr_req	q;
	char			chunk[1024];
	int			i;

	(void)state;
	rawhdr_init(&h);
	feed(&h, "GET / HTTP/1.1\r\n", 0);
	memset(chunk, 'a', sizeof(chunk));
	for (i = 0; i < 64; i++)
		rawhdr_feed(&h, chunk, sizeof(chunk));
	assert_true(h.cap <= RAWHDR_BLOCK_MAX * 2);
	assert_int_equal(rawhdr_take(&h, &q), -ENOENT);
	assert_string_equal(q.bad, "the headers are too long");
	rawhdr_free(&h);
	rawhdr_init(&h);
	for (i = 0; i < RAWHDR_PENDING + 2; i++)
		feed(&h, "GET / HTTP/1.1\r\nHost: a\r\n\r\n", 0);
	for (i = 0; i < RAWHDR_PENDING; i++) {
		assert_int_equal(rawhdr_take(&h, &q), 0);
		assert_null(q.bad);
		rawhdr_req_free(&q);
	}
	assert_int_equal(rawhdr_take(&h, &q), -ENOENT);
	assert_non_null(q.bad);
	rawhdr_free(&h);
}

/*
 * Where recv(2) cannot be interposed (macOS, daemon/tap.h) a request comes
 * with an unchecked block: the guard lets it through without a wsi to
 * compare against, but a bad block is still refused, and a block that is
 * neither seen nor marked unchecked is refused as before.
 */
static void
guard_passes_an_unchecked_block_only(void **state)
{
	struct rawhdr_req	 q;
	struct guard_refusal	 why;

	(void)state;
	memset(&q, 0, sizeof(q));
	q.unchecked = "recv(2) cannot be interposed on this system";
	assert_int_equal(guard_raw(NULL, &q, &why), 0);
	q.bad = "framing lost";
	assert_int_equal(guard_raw(NULL, &q, &why), 400);
	assert_string_equal(why.message, "framing lost");
	memset(&q, 0, sizeof(q));
	assert_int_equal(guard_raw(NULL, &q, &why), 400);
	assert_int_equal(guard_raw(NULL, NULL, &why), 400);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(rawhdr_keeps_the_fields_of_a_good_request),
		cmocka_unit_test(rawhdr_refuses_what_is_not_the_grammar),
		cmocka_unit_test(rawhdr_follows_the_requests_of_a_connection),
		cmocka_unit_test(rawhdr_says_where_each_request_ends),
		cmocka_unit_test(rawhdr_is_bounded),
		cmocka_unit_test(guard_passes_an_unchecked_block_only),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
