/*
 * cdp: the pipe's framing and message shapes — a stream cut at every
 * point gives the same messages; what is not a response or an event is
 * counted and skipped; a message over the limit is skipped whole with
 * memory bounded; the calls we write are one JSON object and a NUL.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "browser/cdp.h"

struct seen {
	char	log[4096];
	size_t	n;
	int	count;
};

/* One line per message: "R id result|error" or "E method session". */
static void
record(void *arg, const struct cdp_msg *m)
{
	struct seen	*s = arg;
	char		*r = m->result ? cJSON_PrintUnformatted(m->result) : NULL;

	s->count++;
	if (m->kind == CDP_RESPONSE)
		s->n += (size_t)snprintf(s->log + s->n, sizeof(s->log) - s->n,
		    "R %ld %s%s\n", m->id, m->error ? "error " : "",
		    m->error ? m->error : r ? r : "-");
	else
		s->n += (size_t)snprintf(s->log + s->n, sizeof(s->log) - s->n,
		    "E %s %s\n", m->method, m->session ? m->session : "-");
	free(r);
}

/* A stream as Chromium writes it, with the things it must never send. */
static const char stream[] =
    "{\"id\":1,\"result\":{\"product\":\"Chrome/156.0.8078.114\"}}\0"
    "{\"method\":\"Target.attachedToTarget\",\"params\":{\"sessionId\":\"S1\"}}\0"
    "{\"id\":2,\"sessionId\":\"S1\",\"error\":{\"code\":-32000,\"message\":\"Cannot navigate\"}}\0"
    "not json at all\0"
    "[1,2,3]\0"
    "{\"id\":\"3\",\"result\":{}}\0"
    "{\"id\":0,\"result\":{}}\0"
    "{\"id\":2.5,\"result\":{}}\0"
    "{\"id\":4}\0"
    "{\"method\":\"\"}\0"
    "{\"method\":\"Page.loadEventFired\",\"params\":[1]}\0"
    "{\"method\":\"Inspector.targetCrashed\",\"sessionId\":\"S1\"}\0"
    "\0"
    "{\"id\":5,\"result\":{\"result\":{\"type\":\"number\",\"value\":2}},\"sessionId\":\"S1\"}\0";

static const char expect[] =
    "R 1 {\"product\":\"Chrome/156.0.8078.114\"}\n"
    "E Target.attachedToTarget -\n"
    "R 2 error Cannot navigate\n"
    "E Inspector.targetCrashed S1\n"
    "R 5 {\"result\":{\"type\":\"number\",\"value\":2}}\n";

static void
cdp_stream_whole(void **state)
{
	struct cdp_reader	r;
	struct seen		s = { .n = 0 };

	(void)state;
	cdp_reader_init(&r);
	assert_int_equal(cdp_reader_feed(&r, stream, sizeof(stream) - 1,
	    record, &s), 0);
	assert_string_equal(s.log, expect);
	assert_int_equal(r.messages, 5);
	assert_int_equal(r.malformed, 9);	/* the empty message too */
	assert_int_equal(r.oversize, 0);
	cdp_reader_free(&r);
}

/* Cut into three pieces at every pair of points: the same messages. */
static void
cdp_stream_cut_anywhere(void **state)
{
	size_t	n = sizeof(stream) - 1, i, j;

	(void)state;
	for (i = 0; i <= n; i += 3)
		for (j = i; j <= n; j += 11) {
			struct cdp_reader	r;
			struct seen		s = { .n = 0 };

			cdp_reader_init(&r);
			cdp_reader_feed(&r, stream, i, record, &s);
			cdp_reader_feed(&r, stream + i, j - i, record, &s);
			cdp_reader_feed(&r, stream + j, n - j, record, &s);
			if (strcmp(s.log, expect) != 0)
				fail_msg("cut at %zu and %zu:\n%s", i, j, s.log);
			assert_int_equal(r.malformed, 9);
			cdp_reader_free(&r);
		}
}

/* A message longer than CDP_MESSAGE_MAX is skipped whole, in pieces,
 * without its bytes held; the next one is read. */
static void
cdp_oversize_skipped(void **state)
{
	struct cdp_reader	 r;
	struct seen		 s = { .n = 0 };
	size_t			 chunk = 1 << 20, i;
	char			*big = malloc(chunk);
	static const char	 next[] = "{\"id\":7,\"result\":{}}";

	(void)state;
	assert_non_null(big);
	memset(big, 'x', chunk);
	cdp_reader_init(&r);
	cdp_reader_feed(&r, "{\"id\":6,\"result\":{\"data\":\"", 26, record, &s);
	for (i = 0; i < (CDP_MESSAGE_MAX / chunk) + 2; i++)
		cdp_reader_feed(&r, big, chunk, record, &s);
	assert_true(r.cap <= CDP_MESSAGE_MAX);
	cdp_reader_feed(&r, "\"}}\0", 4, record, &s);
	cdp_reader_feed(&r, next, sizeof(next), record, &s);
	assert_int_equal(r.oversize, 1);
	assert_int_equal(s.count, 1);
	assert_string_equal(s.log, "R 7 {}\n");
	free(big);
	cdp_reader_free(&r);
}

static void
cdp_call_text_shape(void **state)
{
	cJSON	*p = cJSON_CreateObject(), *back;
	char	*text;
	size_t	 len;

	(void)state;
	cJSON_AddStringToObject(p, "expression", "1+1\n\"x\"");
	assert_int_equal(cdp_call_text(9, "Runtime.evaluate", p, "S1", &text,
	    &len), 0);
	assert_int_equal(len, strlen(text) + 1);	/* the NUL is sent */
	assert_null(strchr(text, '\n'));
	back = cJSON_Parse(text);
	assert_non_null(back);
	assert_int_equal(cJSON_GetObjectItem(back, "id")->valueint, 9);
	assert_string_equal(cJSON_GetObjectItem(back, "sessionId")->valuestring,
	    "S1");
	assert_string_equal(cJSON_GetObjectItem(cJSON_GetObjectItem(back,
	    "params"), "expression")->valuestring, "1+1\n\"x\"");
	cJSON_Delete(back);
	free(text);
	assert_int_equal(cdp_call_text(10, "Browser.getVersion", NULL, NULL,
	    &text, &len), 0);
	assert_string_equal(text, "{\"id\":10,\"method\":\"Browser.getVersion\","
	    "\"params\":{}}");
	free(text);
	cJSON_Delete(p);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(cdp_stream_whole),
		cmocka_unit_test(cdp_stream_cut_anywhere),
		cmocka_unit_test(cdp_oversize_skipped),
		cmocka_unit_test(cdp_call_text_shape),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
