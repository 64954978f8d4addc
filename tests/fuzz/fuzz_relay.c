/*
 * fuzz_relay — the daemon's relay (daemon/relay.h) driven by a script of
 * hostile steps: what pages say (any bytes, as three connections), what
 * verbs post and ask, pages going, answers past the bound, the clock
 * moving.  The input is split at '\n'; a step's first byte says what it
 * is, the rest is its text:
 *
 *   '0'..'2' text  connection N says text
 *   'P' text       POST /relay with text as the body
 *   'C'            POST /relay {"cancel": the last name}
 *   'G'            GET /relay/<the last name>
 *   'g' text       GET /relay/<text>
 *   'X'..'Z'       connection 0..2 goes
 *   'T'            connection 0's message was too big
 *   '+' n          the clock moves n × 997 ms
 *
 * What must hold: no crash, no leak (ASan); every message queued to a
 * connection is a command or a cancel, whole JSON; a 202 names its
 * command `<n>-<16 hex>`; a GET answers 200 with a known state or 404; a
 * finished command is handed over once; /status's numbers never fall.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "daemon/relay.h"

int	LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);

static void
fail(const char *what)
{
	fprintf(stderr, "fuzz_relay: %s\n", what);
	abort();
}

static int conns[3];

static int
fake_send(void *arg, void *conn, const char *json, size_t len)
{
	cJSON		*m;
	const char	*t;

	(void)arg;
	if (conn != &conns[0] && conn != &conns[1] && conn != &conns[2])
		fail("a message to no connection");
	if ((m = cJSON_ParseWithLength(json, len)) == NULL)
		fail("a message that is not JSON");
	t = cJSON_GetStringValue(cJSON_GetObjectItem(m, "type"));
	if (t == NULL || (strcmp(t, "command") != 0 &&
	    strcmp(t, "cancel") != 0))
		fail("a message that is neither a command nor a cancel");
	cJSON_Delete(m);
	return 0;
}

static int
name_ok(const char *s)
{
	const char	*d = strchr(s, '-');

	return s[0] >= '1' && s[0] <= '9' && d != NULL && strlen(d + 1) == 16 &&
	    strspn(d + 1, "0123456789abcdef") == 16;
}

static void
status_check(const struct relay *r, uint64_t *last)
{
	cJSON		*o = cJSON_CreateObject(), *s;
	const char	*const keys[] = { "commands", "answers", "lost",
			    "dropped", "refused", "badMessages" };
	size_t		 i;
	double		 v;

	relay_status_json(r, o);
	s = cJSON_GetObjectItem(o, "relay");
	for (i = 0; i < 6; i++) {
		v = cJSON_GetNumberValue(cJSON_GetObjectItem(s, keys[i]));
		if (v < (double)last[i])
			fail("a counter fell");
		last[i] = (uint64_t)v;
	}
	if (cJSON_GetNumberValue(cJSON_GetObjectItem(s, "pages")) >
	    RELAY_PAGES)
		fail("more pages than the bound");
	cJSON_Delete(o);
}

int
LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
	struct relay	 r;
	char		*buf, *line, *next, name[64] = "", why[512], body[128];
	const char	*code, *st;
	cJSON		*out, *pages;
	uint64_t	 now = 1, last[6] = { 0 };
	unsigned	 rc;

	if ((buf = malloc(size + 1)) == NULL)
		return 0;
	memcpy(buf, data, size);
	buf[size] = '\0';
	relay_init(&r, fake_send, NULL);
	for (line = buf; line != NULL && line < buf + size; line = next) {
		size_t	n;

		next = memchr(line, '\n', (size_t)(buf + size - line));
		n = next ? (size_t)(next - line) : (size_t)(buf + size - line);
		if (next)
			*next++ = '\0';
		if (n == 0)
			continue;
		out = NULL;
		switch (line[0]) {
		case '0': case '1': case '2':
			(void)relay_receive(&r, &conns[line[0] - '0'], line + 1,
			    n - 1, now);
			break;
		case 'P':
			rc = relay_post(&r, line + 1, n - 1, now, &out, &code,
			    why, sizeof(why));
			if (rc == 202) {
				st = cJSON_GetStringValue(cJSON_GetObjectItem(out,
				    "id"));
				if (st == NULL || !name_ok(st))
					fail("a command named otherwise");
				snprintf(name, sizeof(name), "%s", st);
			} else if (rc != 200 && (out != NULL || code == NULL ||
			    why[0] == '\0'))
				fail("a refusal without a code and a reason");
			break;
		case 'C':
			snprintf(body, sizeof(body), "{\"cancel\":\"%s\"}", name);
			(void)relay_post(&r, body, strlen(body), now, &out, &code,
			    why, sizeof(why));
			break;
		case 'G': case 'g':
			rc = relay_get(&r, line[0] == 'G' ? name : line + 1, now,
			    &out);
			if (rc == 200) {
				st = cJSON_GetStringValue(cJSON_GetObjectItem(out,
				    "state"));
				if (st == NULL || (strcmp(st, "sent") != 0 &&
				    strcmp(st, "running") != 0 &&
				    strcmp(st, "done") != 0 &&
				    strcmp(st, "failed") != 0 &&
				    strcmp(st, "lost") != 0))
					fail("a state that is not one");
				if (strcmp(st, "sent") != 0 &&
				    strcmp(st, "running") != 0) {
					cJSON_Delete(out);
					out = NULL;
					if (relay_get(&r, line[0] == 'G' ? name :
					    line + 1, now, &out) != 404)
						fail("a finished command handed "
						    "over twice");
				}
			} else if (rc != 404 || out != NULL)
				fail("neither 200 nor 404");
			break;
		case 'X': case 'Y': case 'Z':
			relay_gone(&r, &conns[line[0] - 'X'], now);
			break;
		case 'T':
			relay_too_big(&r, &conns[0], now);
			break;
		case '+':
			now += (uint64_t)(unsigned char)(n > 1 ? line[1] : 1) *
			    997;
			break;
		default:
			break;
		}
		cJSON_Delete(out);
		status_check(&r, last);
		pages = relay_pages_json(&r, now);
		cJSON_Delete(pages);
		now++;
	}
	relay_free(&r);
	free(buf);
	return 0;
}
