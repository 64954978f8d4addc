/*
 * watch: the pure parts of `sloptimize watch` — wake ids as number pairs,
 * daemon addresses in the forms a user or daemon.json gives them, the
 * state-dir rule for finding daemon.json, message reassembly bounded at
 * 1 MiB, line hygiene, and the protocol consumer's promise: a wake is
 * printed once, whatever the daemon replays.  The socket itself needs the
 * daemon and is tested with it.
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include <cjson/cJSON.h>

#include "cli/watch.h"
#include "ledger/footprint.h"

static struct watch_id
id_of(const char *s)
{
	struct watch_id	id;

	assert_int_equal(watch_id_parse(s, strlen(s), &id), 0);
	return id;
}

static void
watch_id_parse_strict(void **state)
{
	static const char *const bad[] = {
		"", ":", "3:", ":5", "3:5x", "-1:2", " 3:4", "3:4 ", "3:4:5",
		"+3:4", "3;4", "18446744073709551616:0", "0:18446744073709551616",
		"0x1:2", NULL
	};
	struct watch_id	id;
	const char	*const *b;
	char		 buf[48];

	(void)state;
	id = id_of("3:1048576");
	assert_true(id.gen == 3 && id.off == 1048576);
	id = id_of("18446744073709551615:0");
	assert_true(id.gen == UINT64_MAX && id.off == 0);
	for (b = bad; *b; b++)
		assert_int_equal(watch_id_parse(*b, strlen(*b), &id), -EINVAL);
	/* only n bytes are read: the id may sit inside a longer buffer */
	assert_int_equal(watch_id_parse("7:8, more", 3, &id), 0);
	assert_true(id.gen == 7 && id.off == 8);
	id = id_of("42:0");
	watch_id_format(&id, buf, sizeof(buf));
	assert_string_equal(buf, "42:0");
}

static void
watch_id_compares_as_numbers(void **state)
{
	struct watch_id	a, b;

	(void)state;
	a = id_of("2:9"), b = id_of("2:10");	/* not as strings */
	assert_true(watch_id_cmp(&a, &b) < 0);
	a = id_of("10:0"), b = id_of("9:999999");	/* generation first */
	assert_true(watch_id_cmp(&a, &b) > 0);
	a = id_of("3:5"), b = id_of("3:5");
	assert_int_equal(watch_id_cmp(&a, &b), 0);
	a = id_of("0:18446744073709551615"), b = id_of("1:0");
	assert_true(watch_id_cmp(&a, &b) < 0);
}

static void
url_ok(const char *url, const char *host, int port, const char *path)
{
	struct watch_addr	a;

	assert_int_equal(watch_url_parse(url, &a), 0);
	assert_string_equal(a.host, host);
	assert_int_equal(a.port, port);
	assert_string_equal(a.path, path);
}

static void
watch_url_forms(void **state)
{
	static const char *const bad[] = {
		"ftp://h:1", "ws://h:0", "ws://h:65536", "ws://h:12a",
		"ws://user@h:1", "ws://[::1", "ws://[::1]x", "ws://h:", NULL
	};
	struct watch_addr	 a;
	const char		*const *b;
	char			 buf[1400];

	(void)state;
	url_ok("ws://127.0.0.1:7567", "127.0.0.1", 7567,
	    "/api/sloptimize/events");
	url_ok("http://localhost:8000/", "localhost", 8000,
	    "/api/sloptimize/events");
	url_ok("127.0.0.1:7567", "127.0.0.1", 7567, "/api/sloptimize/events");
	url_ok("ws://localhost", "localhost", WATCH_DEFAULT_PORT,
	    "/api/sloptimize/events");
	url_ok("[::1]:7567", "::1", 7567, "/api/sloptimize/events");
	url_ok("ws://[fe80::1]/x/y?since=1:2#f", "fe80::1", WATCH_DEFAULT_PORT,
	    "/x/y");
	url_ok("ws://h:1/api/sloptimize/events?since=3:4", "h", 1,
	    "/api/sloptimize/events");
	/* a wildcard listen address is reached on loopback */
	url_ok("0.0.0.0:7567", "127.0.0.1", 7567, "/api/sloptimize/events");
	url_ok("[::]:9", "::1", 9, "/api/sloptimize/events");
	url_ok(":7567", "127.0.0.1", 7567, "/api/sloptimize/events");
	assert_int_equal(watch_url_parse("wss://h:1", &a), -EPROTONOSUPPORT);
	assert_int_equal(watch_url_parse("https://h:1", &a), -EPROTONOSUPPORT);
	for (b = bad; *b; b++)
		assert_int_equal(watch_url_parse(*b, &a), -EINVAL);

	assert_int_equal(watch_url_parse("[::1]:7567", &a), 0);
	watch_addr_format(&a, buf, sizeof(buf));
	assert_string_equal(buf, "ws://[::1]:7567/api/sloptimize/events");
	assert_int_equal(watch_url_parse(buf, &a), 0);
	assert_string_equal(a.host, "::1");
}

static void
watch_daemon_json_fields(void **state)
{
	struct watch_addr	 a;
	char			 proj[64];
	const char		*why, *t;

	(void)state;
	t = "{\"pid\":12,\"listen\":\"127.0.0.1:7567\","
	    "\"url\":\"ws://127.0.0.1:9000\",\"project\":\"/g/ship\"}";
	assert_int_equal(watch_daemon_json_parse(t, strlen(t), &a, proj,
	    sizeof(proj), &why), 0);
	assert_int_equal(a.port, 9000);		/* url wins */
	assert_string_equal(proj, "/g/ship");
	/* a url it cannot use falls back to listen */
	t = "{\"listen\":\"0.0.0.0:7600\",\"url\":\"wss://x:1\"}";
	assert_int_equal(watch_daemon_json_parse(t, strlen(t), &a, proj,
	    sizeof(proj), &why), 0);
	assert_string_equal(a.host, "127.0.0.1");
	assert_int_equal(a.port, 7600);
	assert_string_equal(proj, "");
	t = "{\"pid\":12}";
	assert_int_equal(watch_daemon_json_parse(t, strlen(t), &a, NULL, 0,
	    &why), -EINVAL);
	assert_non_null(why);
	t = "[\"ws://h:1\"]";
	assert_int_equal(watch_daemon_json_parse(t, strlen(t), &a, NULL, 0,
	    &why), -EINVAL);
	t = "{\"url\":\"ws://h:1\"";		/* torn */
	assert_int_equal(watch_daemon_json_parse(t, strlen(t), &a, NULL, 0,
	    &why), -EINVAL);
}

/* The state dir rule, computed here independently of statedir.c. */
static void
watch_daemon_find_in_state_dir(void **state)
{
	char			 tmpl[] = "/tmp/test_watch.XXXXXX", dir[512],
				 file[600], got[600];
	const char		*project = "/games/ship-demo", *why;
	struct watch_addr	 a;
	FILE			*f;

	(void)state;
	assert_non_null(mkdtemp(tmpl));
	assert_int_equal(setenv("XDG_STATE_HOME", tmpl, 1), 0);
	assert_int_equal(watch_daemon_find(project, &a, got, sizeof(got),
	    &why), -ENOENT);
	snprintf(dir, sizeof(dir), "%s/sloptimize", tmpl);
	assert_int_equal(mkdir(dir, 0700), 0);
	snprintf(dir, sizeof(dir), "%s/sloptimize/ship-demo-%08x", tmpl,
	    fnv1a32(project, strlen(project)));
	assert_int_equal(mkdir(dir, 0700), 0);
	snprintf(file, sizeof(file), "%s/daemon.json", dir);
	assert_non_null(f = fopen(file, "w"));
	fputs("{\"pid\":1,\"listen\":\"127.0.0.1:41234\",\"url\":"
	    "\"ws://127.0.0.1:41234\",\"project\":\"/games/ship-demo\"}\n", f);
	fclose(f);
	assert_int_equal(watch_daemon_find(project, &a, got, sizeof(got),
	    &why), 0);
	assert_string_equal(got, file);
	assert_int_equal(a.port, 41234);
	/* a trailing slash names the same project */
	assert_int_equal(watch_daemon_find("/games/ship-demo/", &a, got,
	    sizeof(got), &why), 0);
	/* garbage is said, not used */
	assert_non_null(f = fopen(file, "w"));
	fputs("{\"pid\":", f);
	fclose(f);
	assert_int_equal(watch_daemon_find(project, &a, got, sizeof(got),
	    &why), -EINVAL);
	assert_non_null(why);
	unlink(file);
	rmdir(dir);
	snprintf(dir, sizeof(dir), "%s/sloptimize", tmpl);
	rmdir(dir);
	rmdir(tmpl);
}

static void
watch_msg_reassembles_and_bounds(void **state)
{
	struct watch_msg	 m = { 0 };
	char			*big = malloc(WATCH_MSG_MAX);

	(void)state;
	assert_non_null(big);
	memset(big, 'x', WATCH_MSG_MAX);
	assert_int_equal(watch_msg_add(&m, "{\"type\":", 8), 0);
	assert_int_equal(watch_msg_add(&m, "\"hello\"}", 8), 0);
	assert_int_equal(m.len, 16);
	assert_string_equal(m.buf, "{\"type\":\"hello\"}");
	watch_msg_reset(&m);
	/* exactly the limit fits; one byte more marks it and keeps nothing */
	assert_int_equal(watch_msg_add(&m, big, WATCH_MSG_MAX - 1), 0);
	assert_int_equal(watch_msg_add(&m, "y", 1), 0);
	assert_false(m.oversized);
	assert_int_equal(watch_msg_add(&m, "z", 1), 0);
	assert_true(m.oversized);
	assert_int_equal(m.len, 0);
	assert_int_equal(watch_msg_add(&m, big, WATCH_MSG_MAX), 0);
	assert_int_equal(m.len, 0);
	watch_msg_reset(&m);
	assert_false(m.oversized);
	assert_int_equal(watch_msg_add(&m, "{}", 2), 0);
	assert_int_equal(m.len, 2);
	watch_msg_free(&m);
	free(big);
}

static void
watch_line_clean_one_line(void **state)
{
	char	s[1024];
	size_t	i, n;

	(void)state;
	strcpy(s, "a\nb\rc\td");
	assert_int_equal(watch_line_clean(s, strlen(s)), 7);
	assert_string_equal(s, "a b c d");
	/* cut at 500 bytes, never inside a character: "é" is 2 bytes */
	memset(s, 'a', 499);
	memcpy(s + 499, "\xc3\xa9zz", 5);
	n = watch_line_clean(s, 503);
	assert_int_equal(n, 499);
	assert_int_equal(strlen(s), 499);
	for (i = 0; i < 600; i++)
		s[i] = 'b';
	assert_int_equal(watch_line_clean(s, 600), WATCH_LINE_MAX);
}

/* --- the consumer ----------------------------------------------------- */

struct io {
	char	*out, *err;
	size_t	 nout, nerr;
	FILE	*fout, *ferr;
};

static void
io_open(struct io *io)
{
	memset(io, 0, sizeof(*io));
	io->fout = open_memstream(&io->out, &io->nout);
	io->ferr = open_memstream(&io->err, &io->nerr);
	assert_non_null(io->fout);
	assert_non_null(io->ferr);
}

static void
io_close(struct io *io)
{
	fclose(io->fout);
	fclose(io->ferr);
	free(io->out);
	free(io->err);
}

static enum watch_action
feed(struct watch_state *st, struct io *io, const char *msg)
{
	return watch_consume(st, msg, strlen(msg), io->fout, io->ferr);
}

#define WAKE(id, line) \
	"{\"type\":\"wake\",\"id\":\"" id "\",\"line\":\"" line "\"," \
	"\"record\":{\"type\":\"hitch\"},\"held\":0}"

static void
watch_consume_prints_each_wake_once(void **state)
{
	struct watch_state	st = { 0 };
	struct io		io;

	(void)state;
	io_open(&io);
	assert_int_equal(feed(&st, &io, "{\"type\":\"hello\",\"version\":"
	    "\"0.1.0\",\"generation\":3,\"cursor\":0}"), WATCH_IGNORED);
	assert_int_equal(feed(&st, &io, WAKE("3:10", "one")), WATCH_PRINTED);
	assert_int_equal(feed(&st, &io, WAKE("3:9", "old")), WATCH_IGNORED);
	assert_int_equal(feed(&st, &io, WAKE("3:10", "again")), WATCH_IGNORED);
	assert_int_equal(feed(&st, &io, WAKE("3:100", "two")), WATCH_PRINTED);
	/* a reconnect's replay overlapping what we printed */
	assert_int_equal(feed(&st, &io, WAKE("3:10", "one")), WATCH_IGNORED);
	assert_int_equal(feed(&st, &io, WAKE("3:100", "two")), WATCH_IGNORED);
	assert_int_equal(feed(&st, &io, WAKE("4:0", "three")), WATCH_PRINTED);
	assert_int_equal(feed(&st, &io, "{\"type\":\"record\",\"id\":\"4:5\","
	    "\"record\":{}}"), WATCH_IGNORED);
	assert_int_equal(feed(&st, &io, "{\"type\":\"future-thing\"}"),
	    WATCH_IGNORED);
	fflush(io.fout);
	assert_string_equal(io.out, "one\ntwo\nthree\n");
	assert_int_equal(st.printed, 3);
	assert_int_equal(st.duplicates, 4);
	assert_true(st.have_last && st.last.gen == 4 && st.last.off == 0);
	assert_true(st.resume.gen == 4 && st.resume.off == 0);
	io_close(&io);
}

static void
watch_consume_since_sets_the_floor(void **state)
{
	struct watch_state	st = { 0 };
	struct io		io;

	(void)state;
	io_open(&io);
	st.last = st.resume = id_of("3:500");
	st.have_last = st.have_resume = 1;
	assert_int_equal(feed(&st, &io, WAKE("3:499", "a")), WATCH_IGNORED);
	assert_int_equal(feed(&st, &io, WAKE("3:500", "b")), WATCH_IGNORED);
	assert_int_equal(feed(&st, &io, WAKE("3:501", "c")), WATCH_PRINTED);
	fflush(io.fout);
	assert_string_equal(io.out, "c\n");
	io_close(&io);
}

static void
watch_consume_json_mode(void **state)
{
	struct watch_state	st = { .json = 1 };
	struct io		io;
	cJSON			*o;

	(void)state;
	io_open(&io);
	/* pretty-printed by the daemon or not, one object on one line */
	assert_int_equal(feed(&st, &io, "{\n \"type\": \"wake\",\n \"id\": "
	    "\"1:2\",\n \"line\": \"x\", \"held\": 3\n}"), WATCH_PRINTED);
	fflush(io.fout);
	assert_non_null(strchr(io.out, '\n'));
	assert_ptr_equal(strchr(io.out, '\n'), io.out + io.nout - 1);
	o = cJSON_Parse(io.out);
	assert_non_null(o);
	assert_string_equal(cJSON_GetObjectItem(o, "id")->valuestring, "1:2");
	assert_int_equal(cJSON_GetObjectItem(o, "held")->valueint, 3);
	cJSON_Delete(o);
	io_close(&io);
}

static void
watch_consume_notes_without_id(void **state)
{
	struct watch_state	st = { 0 };
	struct io		io;

	(void)state;
	io_open(&io);
	assert_int_equal(feed(&st, &io, WAKE("2:50", "a")), WATCH_PRINTED);
	/* "+12 more since 11:02:03" has no record, hence no id: always out */
	assert_int_equal(feed(&st, &io, "{\"type\":\"wake\",\"id\":null,"
	    "\"line\":\"sloptimize +12 more since 11:02:03\",\"record\":null,"
	    "\"held\":12}"), WATCH_PRINTED);
	assert_int_equal(feed(&st, &io, "{\"type\":\"wake\",\"line\":\"n\"}"),
	    WATCH_PRINTED);
	assert_true(st.last.gen == 2 && st.last.off == 50);
	fflush(io.fout);
	assert_string_equal(io.out,
	    "a\nsloptimize +12 more since 11:02:03\nn\n");
	io_close(&io);
}

static void
watch_consume_bad_input(void **state)
{
	struct watch_state	st = { 0 };
	struct io		io;

	(void)state;
	io_open(&io);
	assert_int_equal(feed(&st, &io, "not json"), WATCH_BAD);
	assert_int_equal(feed(&st, &io, "[1]"), WATCH_BAD);
	assert_int_equal(feed(&st, &io, "{\"id\":\"1:1\"}"), WATCH_BAD);
	assert_int_equal(feed(&st, &io, WAKE("1:x", "a")), WATCH_BAD);
	assert_int_equal(feed(&st, &io, "{\"type\":\"wake\",\"id\":7,"
	    "\"line\":\"a\"}"), WATCH_BAD);
	assert_int_equal(feed(&st, &io, "{\"type\":\"wake\",\"id\":\"1:1\"}"),
	    WATCH_BAD);
	assert_false(st.have_last);	/* a wake without a line is not printed */
	assert_int_equal(st.bad, 6);
	fflush(io.fout);
	fflush(io.ferr);
	assert_int_equal(io.nout, 0);
	assert_true(io.nerr > 0);
	/* a wake line is one line, however the daemon wrote it */
	assert_int_equal(feed(&st, &io, WAKE("1:2", "a\\nb")), WATCH_PRINTED);
	fflush(io.fout);
	assert_string_equal(io.out, "a b\n");
	io_close(&io);
}

static void
watch_consume_dropped_resyncs(void **state)
{
	struct watch_state	st = { 0 };
	struct io		io;

	(void)state;
	io_open(&io);
	/* an older daemon dropped wakes too: resume at once */
	assert_int_equal(feed(&st, &io, "{\"type\":\"dropped\",\"count\":17}"),
	    WATCH_RESYNC);
	assert_int_equal(feed(&st, &io, "{\"type\":\"dropped\"}"),
	    WATCH_RESYNC);
	/* one that says what: only the panel's records, nothing to do */
	assert_int_equal(feed(&st, &io, "{\"type\":\"dropped\",\"count\":3,"
	    "\"what\":\"record\"}"), WATCH_IGNORED);
	assert_int_equal(st.dropped, 20);
	fflush(io.fout);
	assert_int_equal(io.nout, 0);
	io_close(&io);
}

static void
watch_consume_gap_is_said(void **state)
{
	struct watch_state	st = { 0 };
	struct io		io;

	(void)state;
	io_open(&io);
	st.last = st.resume = id_of("2:500");
	st.have_last = st.have_resume = 1;
	assert_int_equal(feed(&st, &io, "{\"type\":\"gap\",\"after\":\"2:500\","
	    "\"resume\":\"3:-1\",\"lost\":null,\"reason\":\"replaced\"}"),
	    WATCH_PRINTED);
	fflush(io.fout);
	assert_string_equal(io.out, "sloptimize gap: an unknown number of wakes "
	    "after id=2:500 cannot be replayed (replaced); resuming after "
	    "id=3:-1\n");
	/* a reconnect now asks for the whole new generation */
	assert_true(st.have_resume && st.resume_all && st.resume.gen == 3);
	assert_int_equal(st.gaps, 1);
	/* and its first wake is printed */
	assert_int_equal(feed(&st, &io, WAKE("3:0", "a")), WATCH_PRINTED);
	/* a counted gap says its count */
	assert_int_equal(feed(&st, &io, "{\"type\":\"gap\",\"after\":\"3:0\","
	    "\"resume\":\"4:-1\",\"lost\":12,\"reason\":\"cut\"}"),
	    WATCH_PRINTED);
	fflush(io.fout);
	assert_non_null(strstr(io.out, "sloptimize gap: 12 wakes after id=3:0"));
	/* carrying on after an id */
	assert_int_equal(feed(&st, &io, "{\"type\":\"gap\",\"after\":\"4:-1\","
	    "\"resume\":\"4:900\",\"lost\":null,\"reason\":\"unreadable\"}"),
	    WATCH_PRINTED);
	assert_true(st.resume.gen == 4 && st.resume.off == 900 && !st.resume_all);
	/* without ids it is not a gap we understand */
	assert_int_equal(feed(&st, &io, "{\"type\":\"gap\"}"), WATCH_BAD);
	io_close(&io);
}

static void
watch_consume_hello_sets_resume(void **state)
{
	struct watch_state	st = { 0 };
	struct io		io;

	(void)state;
	io_open(&io);
	/* nothing printed yet: resume from the lines at the cursor on */
	feed(&st, &io, "{\"type\":\"hello\",\"generation\":3,\"cursor\":4096}");
	assert_true(st.have_resume && !st.have_last);
	assert_true(st.resume.gen == 3 && st.resume.off == 4095);
	/* a later hello (a reconnect) keeps the first position */
	feed(&st, &io, "{\"type\":\"hello\",\"generation\":3,\"cursor\":9000}");
	assert_true(st.resume.off == 4095);
	/* the line at the cursor wakes with id 3:4096: it is printed */
	assert_int_equal(feed(&st, &io, WAKE("3:4096", "a")), WATCH_PRINTED);
	assert_true(st.resume.off == 4096);
	io_close(&io);
}

static void
watch_consume_generation_reset(void **state)
{
	struct watch_state	st = { 0 };
	struct io		io;

	(void)state;
	io_open(&io);
	st.last = st.resume = id_of("7:900");
	st.have_last = st.have_resume = 1;
	/* same or later generation: a normal resume, nothing forgotten */
	feed(&st, &io, "{\"type\":\"hello\",\"generation\":7,\"cursor\":10}");
	assert_true(st.have_last && st.last.off == 900);
	/* not ready yet: its generation may be provisional, no verdict */
	feed(&st, &io, "{\"type\":\"hello\",\"generation\":0,"
	    "\"ready\":false}");
	assert_true(st.have_last && st.last.off == 900);
	/* an older generation: the daemon's ids started over */
	feed(&st, &io, "{\"type\":\"hello\",\"generation\":1,\"cursor\":300}");
	assert_false(st.have_last);
	assert_true(st.have_resume && st.resume.gen == 1 &&
	    st.resume.off == 299);
	assert_int_equal(feed(&st, &io, WAKE("1:300", "after reset")),
	    WATCH_PRINTED);
	assert_int_equal(st.resets, 1);
	/* a hello without a cursor still says the generation */
	feed(&st, &io, "{\"type\":\"hello\",\"generation\":0}");
	assert_false(st.have_last || st.have_resume);
	feed(&st, &io, "{\"type\":\"hello\",\"generation\":0}");
	assert_false(st.have_resume);
	fflush(io.ferr);
	assert_non_null(strstr(io.err, "reset"));
	io_close(&io);
}

static void
watch_consume_ids_going_back(void **state)
{
	struct watch_state	st = { 0 };
	struct io		io;

	(void)state;
	io_open(&io);
	assert_int_equal(feed(&st, &io, WAKE("1:12522", "a")), WATCH_PRINTED);
	/* same generation, lower offset: a replay, silently dropped */
	assert_int_equal(feed(&st, &io, WAKE("1:90", "dup")), WATCH_IGNORED);
	/* an older generation: the daemon lost its own; say it, print it */
	assert_int_equal(feed(&st, &io, WAKE("0:26559", "b")), WATCH_PRINTED);
	assert_int_equal(feed(&st, &io, WAKE("0:26559", "b")), WATCH_IGNORED);
	assert_int_equal(feed(&st, &io, WAKE("0:27811", "c")), WATCH_PRINTED);
	assert_int_equal(st.resets, 1);
	assert_true(st.last.gen == 0 && st.last.off == 27811);
	fflush(io.fout);
	fflush(io.ferr);
	assert_string_equal(io.out, "a\nb\nc\n");
	assert_non_null(strstr(io.err, "went back (0:26559 after 1:12522)"));
	io_close(&io);
}

static void
watch_consume_output_failure(void **state)
{
	struct watch_state	 st = { 0 };
	FILE			*full = fopen("/dev/full", "w");

	(void)state;
	if (full == NULL)
		skip();
	assert_int_equal(watch_consume(&st, WAKE("1:1", "a"),
	    strlen(WAKE("1:1", "a")), full, stderr), WATCH_OUT_FAILED);
	assert_false(st.have_last);	/* not printed, not remembered */
	fclose(full);
}

/*
 * The events socket's shared vectors (schemas/events-vectors.json): each
 * message, on a fresh state, gets the action the file says watch takes —
 * the same file the schema and the panel are tested against.
 */
static enum watch_action
action_named(const char *s)
{
	if (strcmp(s, "printed") == 0)
		return WATCH_PRINTED;
	if (strcmp(s, "ignored") == 0)
		return WATCH_IGNORED;
	if (strcmp(s, "bad") == 0)
		return WATCH_BAD;
	if (strcmp(s, "resync") == 0)
		return WATCH_RESYNC;
	fail_msg("unknown watch action %s in the vectors", s);
	return WATCH_BAD;
}

static void
vectors_run(const cJSON *list, int good, int *n)
{
	const cJSON		*v;
	struct watch_state	 st;
	struct io		 io;
	char			*text;
	const char		*name, *want;
	enum watch_action	 a;

	cJSON_ArrayForEach(v, list) {
		name = cJSON_GetStringValue(cJSON_GetObjectItem(v, "name"));
		want = cJSON_GetStringValue(cJSON_GetObjectItem(v, "watch"));
		assert_non_null(name);
		assert_non_null(want);
		text = good ? cJSON_PrintUnformatted(cJSON_GetObjectItem(v,
		    "message")) : strdup(cJSON_GetStringValue(
		    cJSON_GetObjectItem(v, "text")));
		assert_non_null(text);
		memset(&st, 0, sizeof(st));
		io_open(&io);
		a = feed(&st, &io, text);
		fflush(io.fout);
		fflush(io.ferr);
		if (a != action_named(want))
			fail_msg("vector \"%s\": watch action %d, the vectors "
			    "say %s", name, (int)a, want);
		/* a printed message is one line; a bad one is said on stderr */
		if (a == WATCH_PRINTED)
			assert_true(io.nout > 0 && io.out[io.nout - 1] == '\n' &&
			    memchr(io.out, '\n', io.nout) == io.out + io.nout - 1);
		if (a == WATCH_BAD)
			assert_true(io.nerr > 0 && st.bad == 1);
		io_close(&io);
		free(text);
		(*n)++;
	}
}

static void
watch_consume_events_vectors(void **state)
{
	FILE	*f = fopen("schemas/events-vectors.json", "r");
	char	*buf;
	long	 len;
	cJSON	*doc;
	int	 n = 0;

	(void)state;
	assert_non_null(f);	/* run from the top of the tree */
	assert_int_equal(fseek(f, 0, SEEK_END), 0);
	len = ftell(f);
	rewind(f);
	buf = malloc((size_t)len + 1);
	assert_non_null(buf);
	assert_int_equal(fread(buf, 1, (size_t)len, f), (size_t)len);
	buf[len] = '\0';
	fclose(f);
	doc = cJSON_Parse(buf);
	assert_non_null(doc);
	vectors_run(cJSON_GetObjectItem(doc, "good"), 1, &n);
	vectors_run(cJSON_GetObjectItem(doc, "bad"), 0, &n);
	assert_true(n >= 20);
	cJSON_Delete(doc);
	free(buf);
}

int
main(void)
{
	const struct CMUnitTest	tests[] = {
		cmocka_unit_test(watch_id_parse_strict),
		cmocka_unit_test(watch_id_compares_as_numbers),
		cmocka_unit_test(watch_url_forms),
		cmocka_unit_test(watch_daemon_json_fields),
		cmocka_unit_test(watch_daemon_find_in_state_dir),
		cmocka_unit_test(watch_msg_reassembles_and_bounds),
		cmocka_unit_test(watch_line_clean_one_line),
		cmocka_unit_test(watch_consume_prints_each_wake_once),
		cmocka_unit_test(watch_consume_since_sets_the_floor),
		cmocka_unit_test(watch_consume_json_mode),
		cmocka_unit_test(watch_consume_notes_without_id),
		cmocka_unit_test(watch_consume_bad_input),
		cmocka_unit_test(watch_consume_dropped_resyncs),
		cmocka_unit_test(watch_consume_gap_is_said),
		cmocka_unit_test(watch_consume_hello_sets_resume),
		cmocka_unit_test(watch_consume_generation_reset),
		cmocka_unit_test(watch_consume_ids_going_back),
		cmocka_unit_test(watch_consume_output_failure),
		cmocka_unit_test(watch_consume_events_vectors),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
