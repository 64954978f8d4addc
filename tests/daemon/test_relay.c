/*
 * relay: commands to the game's open tab (daemon/relay.h) driven through a
 * fake send — a connection is a list of the messages queued to it.  A page
 * registers; a command goes to the newest visible page and is refused
 * with no page, a hidden page, a busy page; progress and an answer move
 * it; the answer is handed over once, by its name only; a page that goes
 * loses its command; a cancelled command's late answer frees the page;
 * what is not ours is counted and changes nothing; finished answers
 * nobody fetches are dropped after their time.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <cjson/cJSON.h>

#include "daemon/relay.h"

struct conn {
	char	*msgs[16];
	int	 n;
	int	 fail;
};

static int
fake_send(void *arg, void *cv, const char *json, size_t len)
{
	struct conn	*c = cv;

	(void)arg;
	if (c->fail || c->n == 16)
		return -1;
	c->msgs[c->n] = strndup(json, len);
	c->n++;
	return 0;
}

static void
conn_free(struct conn *c)
{
	int	i;

	for (i = 0; i < c->n; i++)
		free(c->msgs[i]);
	memset(c, 0, sizeof(*c));
}

static enum relay_msg
say(struct relay *r, struct conn *c, uint64_t now, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static enum relay_msg
say(struct relay *r, struct conn *c, uint64_t now, const char *fmt, ...)
{
	char	buf[1024];
	va_list	ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	return relay_receive(r, c, buf, strlen(buf), now);
}

static unsigned
post(struct relay *r, uint64_t now, const char *body, cJSON **out,
    const char **code)
{
	char	why[512];

	*code = NULL;
	return relay_post(r, body, strlen(body), now, out, code, why,
	    sizeof(why));
}

/* The command's name from a 202 answer, and its id from the message the
 * page got. */
static void
name_of(cJSON *out, char *name, size_t cap)
{
	const char	*s = cJSON_GetStringValue(cJSON_GetObjectItem(out, "id"));

	assert_non_null(s);
	snprintf(name, cap, "%s", s);
}

static const char *
state_of(cJSON *o)
{
	return cJSON_GetStringValue(cJSON_GetObjectItem(o, "state"));
}

static void
command_goes_to_the_newest_visible_page(void **st)
{
	struct relay	 r;
	struct conn	 a = { 0 }, b = { 0 }, c = { 0 };
	cJSON		*out = NULL, *m;
	const char	*code;
	char		 name[64];

	(void)st;
	relay_init(&r, fake_send, NULL);
	/* no page: 404 no_page, nothing queued */
	assert_int_equal(post(&r, 0, "{\"verb\":\"run\"}", &out, &code), 404);
	assert_string_equal(code, "no_page");
	assert_null(out);

	assert_int_equal(say(&r, &a, 1, "{\"type\":\"page\",\"url\":\"http://"
	    "a/\",\"visible\":true}"), RELAY_MSG_PAGE);
	assert_int_equal(say(&r, &b, 2, "{\"type\":\"page\",\"url\":\"http://"
	    "b/\",\"visible\":true}"), RELAY_MSG_PAGE);
	assert_int_equal(say(&r, &c, 3, "{\"type\":\"page\",\"url\":\"http://"
	    "c/\",\"visible\":false,\"id\":42,\"busy\":false}"),
	    RELAY_MSG_PAGE);

	assert_int_equal(post(&r, 10, "{\"verb\":\"run\",\"options\":"
	    "{\"scene\":\"crates\",\"frames\":5}}", &out, &code), 202);
	assert_int_equal(a.n + c.n, 0);
	assert_int_equal(b.n, 1);		/* b: newest visible */
	m = cJSON_Parse(b.msgs[0]);
	assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(m,
	    "type")), "command");
	assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(m,
	    "verb")), "run");
	assert_int_equal(cJSON_GetObjectItem(cJSON_GetObjectItem(m, "options"),
	    "frames")->valueint, 5);
	cJSON_Delete(m);
	assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(
	    cJSON_GetObjectItem(out, "page"), "url")), "http://b/");
	name_of(out, name, sizeof(name));
	assert_non_null(strchr(name, '-'));
	cJSON_Delete(out);

	/* what the list says is the daemon's: c's own id and busy are not
	   taken, b is busy with the command */
	m = relay_pages_json(&r, 12);
	assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(m, "pages")), 3);
	assert_int_equal(cJSON_GetObjectItem(cJSON_GetArrayItem(
	    cJSON_GetObjectItem(m, "pages"), 0), "id")->valueint, 3);
	assert_null(cJSON_GetObjectItem(cJSON_GetArrayItem(
	    cJSON_GetObjectItem(m, "pages"), 0), "busy"));
	assert_int_equal(cJSON_GetObjectItem(cJSON_GetArrayItem(
	    cJSON_GetObjectItem(m, "pages"), 1), "busy")->valueint, 1);
	cJSON_Delete(m);

	/* b is busy now: a second command is refused, not queued */
	assert_int_equal(post(&r, 11, "{\"verb\":\"census\"}", &out, &code),
	    409);
	assert_string_equal(code, "page_busy");
	assert_int_equal(b.n, 1);

	/* the hidden page, named: refused as hidden */
	assert_int_equal(post(&r, 11, "{\"verb\":\"run\",\"page\":3}", &out,
	    &code), 409);
	assert_string_equal(code, "page_hidden");
	assert_int_equal(c.n, 0);
	/* a page that is not there */
	assert_int_equal(post(&r, 11, "{\"verb\":\"run\",\"page\":9}", &out,
	    &code), 404);
	/* a verb the page runtime does not have, options not an object */
	assert_int_equal(post(&r, 11, "{\"verb\":\"eval\"}", &out, &code),
	    400);
	assert_int_equal(post(&r, 11, "{\"verb\":\"run\",\"options\":\"x\"}",
	    &out, &code), 400);
	assert_int_equal(post(&r, 11, "[1]", &out, &code), 400);
	assert_int_equal(post(&r, 11, "{", &out, &code), 400);

	relay_free(&r);
	conn_free(&a);
	conn_free(&b);
	conn_free(&c);
}

static void
progress_then_answer_handed_over_once(void **st)
{
	struct relay	 r;
	struct conn	 a = { 0 };
	cJSON		*out = NULL, *g = NULL;
	const char	*code;
	char		 name[64], wrong[80];

	(void)st;
	relay_init(&r, fake_send, NULL);
	say(&r, &a, 0, "{\"type\":\"page\",\"url\":\"http://a/\"}");
	assert_int_equal(post(&r, 1, "{\"verb\":\"capture\"}", &out, &code),
	    202);
	name_of(out, name, sizeof(name));
	cJSON_Delete(out);

	assert_int_equal(relay_get(&r, name, 2, &g), 200);
	assert_string_equal(state_of(g), "sent");
	cJSON_Delete(g);

	assert_int_equal(say(&r, &a, 3, "{\"type\":\"progress\",\"id\":1,"
	    "\"progress\":{\"phase\":\"setup\"}}"), RELAY_MSG_PROGRESS);
	assert_int_equal(relay_get(&r, name, 503, &g), 200);
	assert_string_equal(state_of(g), "running");
	assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(
	    cJSON_GetObjectItem(g, "progress"), "phase")), "setup");
	assert_int_equal(cJSON_GetObjectItem(g, "quietMs")->valueint, 500);
	cJSON_Delete(g);

	/* the id alone, or a wrong key, names nothing */
	assert_int_equal(relay_get(&r, "1", 504, &g), 404);
	snprintf(wrong, sizeof(wrong), "1-%s", "0000000000000000");
	assert_int_equal(relay_get(&r, wrong, 504, &g), 404);
	assert_null(g);

	assert_int_equal(say(&r, &a, 600, "{\"type\":\"answer\",\"id\":1,"
	    "\"ok\":true,\"result\":{\"v\":1,\"png\":\"AAAA\"}}"),
	    RELAY_MSG_ANSWER);
	assert_int_equal(relay_get(&r, name, 601, &g), 200);
	assert_string_equal(state_of(g), "done");
	assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(
	    cJSON_GetObjectItem(g, "result"), "png")), "AAAA");
	cJSON_Delete(g);
	/* once */
	assert_int_equal(relay_get(&r, name, 602, &g), 404);

	/* the page is free again; a failure carries the page's words */
	assert_int_equal(post(&r, 700, "{\"verb\":\"run\"}", &out, &code),
	    202);
	name_of(out, name, sizeof(name));
	cJSON_Delete(out);
	say(&r, &a, 701, "{\"type\":\"answer\",\"id\":2,\"ok\":false,"
	    "\"error\":\"bench: no scene 'x' on this page\"}");
	assert_int_equal(relay_get(&r, name, 702, &g), 200);
	assert_string_equal(state_of(g), "failed");
	assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(g,
	    "error")), "bench: no scene 'x' on this page");
	cJSON_Delete(g);

	relay_free(&r);
	conn_free(&a);
}

static void
a_page_that_goes_loses_its_command(void **st)
{
	struct relay	 r;
	struct conn	 a = { 0 };
	cJSON		*out = NULL, *g = NULL, *p;
	const char	*code;
	char		 name[64];

	(void)st;
	relay_init(&r, fake_send, NULL);
	say(&r, &a, 0, "{\"type\":\"page\",\"url\":\"http://a/\"}");
	assert_int_equal(post(&r, 1, "{\"verb\":\"attribute\"}", &out, &code),
	    202);
	name_of(out, name, sizeof(name));
	cJSON_Delete(out);
	relay_gone(&r, &a, 5);
	assert_int_equal(relay_get(&r, name, 6, &g), 200);
	assert_string_equal(state_of(g), "lost");
	assert_non_null(strstr(cJSON_GetStringValue(cJSON_GetObjectItem(g,
	    "error")), "loaded again"));
	cJSON_Delete(g);
	p = relay_pages_json(&r, 7);
	assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(p, "pages")),
	    0);
	cJSON_Delete(p);
	/* nothing to send to now */
	assert_int_equal(post(&r, 8, "{\"verb\":\"run\"}", &out, &code), 404);
	relay_free(&r);
	conn_free(&a);
}

static void
cancel_then_late_answer_frees_the_page(void **st)
{
	struct relay	 r;
	struct conn	 a = { 0 };
	cJSON		*out = NULL, *g = NULL;
	const char	*code;
	char		 name[64], body[128];
	uint64_t	 bad;

	(void)st;
	relay_init(&r, fake_send, NULL);
	say(&r, &a, 0, "{\"type\":\"page\",\"url\":\"http://a/\"}");
	post(&r, 1, "{\"verb\":\"run\"}", &out, &code);
	name_of(out, name, sizeof(name));
	cJSON_Delete(out);
	snprintf(body, sizeof(body), "{\"cancel\":\"%s\"}", name);
	assert_int_equal(post(&r, 2, body, &out, &code), 200);
	cJSON_Delete(out);
	assert_int_equal(a.n, 2);
	assert_non_null(strstr(a.msgs[1], "\"cancel\""));
	assert_int_equal(relay_get(&r, name, 3, &g), 404);
	/* still running it: busy until it answers */
	assert_int_equal(post(&r, 4, "{\"verb\":\"run\"}", &out, &code), 409);
	bad = r.bad;
	assert_int_equal(say(&r, &a, 5, "{\"type\":\"progress\",\"id\":1}"),
	    RELAY_MSG_PROGRESS);
	assert_int_equal(say(&r, &a, 6, "{\"type\":\"answer\",\"id\":1,"
	    "\"ok\":true,\"result\":{}}"), RELAY_MSG_ANSWER);
	assert_int_equal(r.bad, bad);
	assert_int_equal(post(&r, 7, "{\"verb\":\"run\"}", &out, &code), 202);
	cJSON_Delete(out);
	relay_free(&r);
	conn_free(&a);
}

static void
what_is_not_ours_changes_nothing(void **st)
{
	struct relay	 r;
	struct conn	 a = { 0 }, x = { 0 };
	cJSON		*out = NULL, *g = NULL;
	const char	*code;
	char		 name[64], big[RELAY_PAGE_MAX + 64];
	static const char *const junk[] = { "", "nul", "[]", "{}",
		"{\"type\":7}", "{\"type\":\"wake\"}",
		"{\"type\":\"page\"}", "{\"type\":\"page\",\"url\":5}",
		"{\"type\":\"answer\",\"id\":1,\"ok\":true}",
		"{\"type\":\"answer\",\"id\":\"1\"}",
		"{\"type\":\"progress\",\"id\":-1}",
		"{\"type\":\"answer\",\"id\":1e300,\"ok\":true}", NULL };
	size_t		 i;

	(void)st;
	relay_init(&r, fake_send, NULL);
	say(&r, &a, 0, "{\"type\":\"page\",\"url\":\"http://a/\"}");
	post(&r, 1, "{\"verb\":\"run\"}", &out, &code);
	name_of(out, name, sizeof(name));
	cJSON_Delete(out);
	/* from a connection that is no page, and junk from the page */
	for (i = 0; junk[i] != NULL; i++) {
		assert_int_equal(relay_receive(&r, &x, junk[i],
		    strlen(junk[i]), 2), RELAY_MSG_BAD);
		if (i != 8)	/* an answer from no page: x */
			assert_int_equal(relay_receive(&r, &a, junk[i],
			    strlen(junk[i]), 2), RELAY_MSG_BAD);
	}
	/* a page message past its bound */
	memset(big, 'x', sizeof(big));
	i = (size_t)snprintf(big, sizeof(big), "{\"type\":\"page\",\"url\":\"");
	big[i] = 'x';
	memcpy(big + sizeof(big) - 3, "\"}", 3);
	assert_int_equal(relay_receive(&r, &x, big, strlen(big), 2),
	    RELAY_MSG_BAD);
	assert_int_equal(relay_get(&r, name, 3, &g), 200);
	assert_string_equal(state_of(g), "sent");
	cJSON_Delete(g);
	/* an answer too big for the relay fails the command, saying why */
	relay_too_big(&r, &a, 4);
	assert_int_equal(relay_get(&r, name, 5, &g), 200);
	assert_string_equal(state_of(g), "failed");
	assert_non_null(strstr(cJSON_GetStringValue(cJSON_GetObjectItem(g,
	    "error")), "larger"));
	cJSON_Delete(g);
	relay_free(&r);
	conn_free(&a);
	conn_free(&x);
}

static void
what_nobody_fetches_is_dropped(void **st)
{
	struct relay	 r;
	struct conn	 a = { 0 }, b = { 0 };
	cJSON		*out = NULL, *g = NULL;
	const char	*code;
	char		 done[64], idle[64];

	(void)st;
	relay_init(&r, fake_send, NULL);
	say(&r, &a, 0, "{\"type\":\"page\",\"url\":\"http://a/\"}");
	say(&r, &b, 0, "{\"type\":\"page\",\"url\":\"http://b/\"}");
	post(&r, 1, "{\"verb\":\"run\",\"page\":1}", &out, &code);
	name_of(out, done, sizeof(done));
	cJSON_Delete(out);
	post(&r, 1, "{\"verb\":\"run\",\"page\":2}", &out, &code);
	name_of(out, idle, sizeof(idle));
	cJSON_Delete(out);
	say(&r, &a, 2, "{\"type\":\"answer\",\"id\":1,\"ok\":true,"
	    "\"result\":1}");
	/* just inside their times: kept */
	assert_int_equal(relay_get(&r, idle, RELAY_KEEP_MS, &g), 200);
	cJSON_Delete(g);
	/* past them: dropped, and b is free for the next command */
	assert_int_equal(relay_get(&r, done, RELAY_KEEP_MS + 3, &g), 404);
	assert_int_equal(relay_get(&r, idle, RELAY_KEEP_MS + RELAY_IDLE_MS + 1,
	    &g), 404);
	assert_int_equal(r.dropped, 2);
	assert_int_equal(post(&r, RELAY_KEEP_MS + RELAY_IDLE_MS + 2,
	    "{\"verb\":\"run\",\"page\":2}", &out, &code), 202);
	cJSON_Delete(out);
	relay_free(&r);
	conn_free(&a);
	conn_free(&b);
}

static void
bounded_pages_and_commands(void **st)
{
	struct relay	 r;
	struct conn	 c[RELAY_PAGES + 1];
	cJSON		*out = NULL;
	const char	*code;
	char		 body[64];
	int		 i;

	(void)st;
	memset(c, 0, sizeof(c));
	relay_init(&r, fake_send, NULL);
	for (i = 0; i < RELAY_PAGES; i++)
		assert_int_equal(say(&r, &c[i], 0, "{\"type\":\"page\","
		    "\"url\":\"http://p%d/\"}", i), RELAY_MSG_PAGE);
	assert_int_equal(say(&r, &c[RELAY_PAGES], 0, "{\"type\":\"page\","
	    "\"url\":\"http://more/\"}"), RELAY_MSG_BAD);
	assert_int_equal(r.refused, 1);
	for (i = 0; i < RELAY_JOBS; i++) {
		snprintf(body, sizeof(body), "{\"verb\":\"run\",\"page\":%d}",
		    i + 1);
		assert_int_equal(post(&r, 1, body, &out, &code), 202);
		cJSON_Delete(out);
	}
	snprintf(body, sizeof(body), "{\"verb\":\"run\",\"page\":%d}",
	    RELAY_JOBS + 1);
	assert_int_equal(post(&r, 1, body, &out, &code), 503);
	relay_free(&r);
	for (i = 0; i <= RELAY_PAGES; i++)
		conn_free(&c[i]);
}

static void
a_send_that_fails_leaves_the_page_free(void **st)
{
	struct relay	 r;
	struct conn	 a = { 0 };
	cJSON		*out = NULL;
	const char	*code;

	(void)st;
	relay_init(&r, fake_send, NULL);
	say(&r, &a, 0, "{\"type\":\"page\",\"url\":\"http://a/\"}");
	a.fail = 1;
	assert_int_equal(post(&r, 1, "{\"verb\":\"run\"}", &out, &code), 503);
	assert_null(out);
	a.fail = 0;
	assert_int_equal(post(&r, 2, "{\"verb\":\"run\"}", &out, &code), 202);
	cJSON_Delete(out);
	assert_int_equal(r.commands, 1);
	relay_free(&r);
	conn_free(&a);
}

/* A capture posted at `now`: its name into name. */
static void
capture(struct relay *r, uint64_t now, char *name, size_t cap)
{
	cJSON		*out = NULL;
	const char	*code;

	assert_int_equal(post(r, now, "{\"verb\":\"capture\"}", &out, &code),
	    202);
	name_of(out, name, cap);
	cJSON_Delete(out);
}

/*
 * An answer of megabytes is not made into a tree on the loop: its result
 * is handed over as the bytes it came in, the same JSON.  One the
 * project's scanner will not take (nested past its depth bound) is read
 * the ordinary way and handed over too; one that is not JSON is not an
 * answer, and the command waits on.
 */
static void
a_large_answer_is_handed_over_as_it_came(void **st)
{
	struct relay	 r;
	struct conn	 a = { 0 };
	cJSON		*g = NULL, *back;
	char		 name[64], *msg, *text;
	size_t		 n, i, big = 300000;

	(void)st;
	relay_init(&r, fake_send, NULL);
	say(&r, &a, 0, "{\"type\":\"page\",\"url\":\"http://a/\"}");
	capture(&r, 1, name, sizeof(name));

	assert_non_null(msg = malloc(big + 256));
	n = (size_t)sprintf(msg, "{\"type\":\"answer\",\"id\":1,\"ok\":true,"
	    "\"result\":{\"v\":1,\"png\":\"");
	for (i = 0; i < big; i++)
		msg[n++] = "AB+/"[i % 4];
	n += (size_t)sprintf(msg + n, "\",\"width\":1280}}");
	/* not JSON: not an answer, nothing changes */
	assert_int_equal(relay_receive(&r, &a, msg, n - 1, 2), RELAY_MSG_BAD);
	assert_int_equal(relay_get(&r, name, 3, &g), 200);
	assert_string_equal(state_of(g), "sent");
	cJSON_Delete(g);
	assert_int_equal(relay_receive(&r, &a, msg, n, 4), RELAY_MSG_ANSWER);
	assert_int_equal(relay_get(&r, name, 5, &g), 200);
	assert_string_equal(state_of(g), "done");
	/* kept as bytes, never a tree */
	assert_true(cJSON_IsRaw(cJSON_GetObjectItem(g, "result")));
	assert_non_null(text = cJSON_PrintUnformatted(g));
	assert_non_null(back = cJSON_Parse(text));
	assert_int_equal(strlen(cJSON_GetStringValue(cJSON_GetObjectItem(
	    cJSON_GetObjectItem(back, "result"), "png"))), big);
	assert_int_equal(cJSON_GetObjectItem(cJSON_GetObjectItem(back,
	    "result"), "width")->valueint, 1280);
	free(text);
	cJSON_Delete(back);
	cJSON_Delete(g);

	/* nested past the scanner's bound (cJSON takes it): still handed over */
	capture(&r, 6, name, sizeof(name));
	n = (size_t)sprintf(msg, "{\"type\":\"answer\",\"id\":2,\"ok\":true,"
	    "\"result\":{\"pad\":\"");
	for (i = 0; i < 9000; i++)
		msg[n++] = 'x';
	n += (size_t)sprintf(msg + n, "\",\"deep\":");
	for (i = 0; i < 200; i++)
		msg[n++] = '[';
	for (i = 0; i < 200; i++)
		msg[n++] = ']';
	n += (size_t)sprintf(msg + n, "}}");
	assert_int_equal(relay_receive(&r, &a, msg, n, 7), RELAY_MSG_ANSWER);
	assert_int_equal(relay_get(&r, name, 8, &g), 200);
	assert_string_equal(state_of(g), "done");
	assert_true(cJSON_IsObject(cJSON_GetObjectItem(g, "result")));
	assert_true(cJSON_IsArray(cJSON_GetObjectItem(cJSON_GetObjectItem(g,
	    "result"), "deep")));
	cJSON_Delete(g);

	/* a large failure: its words, whichever way it was read */
	capture(&r, 9, name, sizeof(name));
	n = (size_t)sprintf(msg, "{\"type\":\"answer\",\"id\":3,\"ok\":false,"
	    "\"error\":\"gate: no PNG\",\"pad\":\"");
	for (i = 0; i < 9000; i++)
		msg[n++] = 'y';
	n += (size_t)sprintf(msg + n, "\"}");
	assert_int_equal(relay_receive(&r, &a, msg, n, 10), RELAY_MSG_ANSWER);
	assert_int_equal(relay_get(&r, name, 11, &g), 200);
	assert_string_equal(state_of(g), "failed");
	assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(g,
	    "error")), "gate: no PNG");
	cJSON_Delete(g);
	free(msg);
	relay_free(&r);
	conn_free(&a);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(command_goes_to_the_newest_visible_page),
		cmocka_unit_test(progress_then_answer_handed_over_once),
		cmocka_unit_test(a_page_that_goes_loses_its_command),
		cmocka_unit_test(cancel_then_late_answer_frees_the_page),
		cmocka_unit_test(what_is_not_ours_changes_nothing),
		cmocka_unit_test(what_nobody_fetches_is_dropped),
		cmocka_unit_test(bounded_pages_and_commands),
		cmocka_unit_test(a_send_that_fails_leaves_the_page_free),
		cmocka_unit_test(a_large_answer_is_handed_over_as_it_came),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
