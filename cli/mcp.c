/*
 * mcp — `sloptimize mcp`: a Model Context Protocol server on stdio, for a
 * coding agent that wants the catalogue, the timeline, the ledger, the
 * daemon's status, the fix writers and the wake stream as tools.
 *
 * The wire: JSON-RPC 2.0, one message per line in each direction (MCP's
 * stdio transport), every message parsed and built with cJSON.  Protocol
 * revision 2025-11-25 (what @modelcontextprotocol/sdk 1.32 speaks), and
 * the older ones it still accepts: a client asking for one we know gets
 * it, any other gets ours.  structuredContent and outputSchema exist from
 * 2025-06-18 on and are left out below it.
 *
 * The loop never blocks.  stdin is read on libuv (a pipe, a tty, or a file
 * through the thread pool); a tool that reads or writes the project's
 * files runs on the thread pool, so `ping` and notifications/cancelled are
 * answered while a fold of a large ledger is in hand; wait_for_wake waits
 * on the loop itself, with the same events-socket client as `sloptimize
 * watch` (cli/watch.c).  A cancelled request gets no answer (the spec's
 * rule) and a cancelled fix is not written if the write had not begun.
 *
 * Errors: a line that is not JSON is -32700, a message that is not a
 * request -32600 (a batch too: this revision has none), an unknown method
 * -32601, bad params of the protocol's own methods -32602 — all with the
 * request's id when it has a usable one, else null.  Bad arguments of a
 * tool are the tool's answer (isError: true, the reason in its text), so
 * the model reads them.  EOF on stdin ends the server once what is in
 * hand has been answered.
 */
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stddef.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>
#include <uv.h>

#include "base/base.h"
#include "cli.h"
#include "cli/mcp.h"
#include "cli/mcp_tools.h"
#include "cli/watch.h"
#include "ledger/jscan.h"
#include "ledger/ledger.h"
#include "project/append.h"
#include "verbs.h"

/*
 * One tools/call in hand: what its tool sees (mc, handed to the tool),
 * and what the server keeps beside it to answer it.
 */
struct call {
	struct mcp_call		 mc;
	struct mcp		*m;
	cJSON			*id;		/* the request's */
	uv_work_t		 work;
	/* wait_for_wake */
	cJSON			*wakes;
	long			 max;
	struct watch_id		 since;
	int			 have_since;
	int			 connected;
	struct call		*next;
};

/* The revisions a client may ask for; MCP_LATEST for any other. */
static const char *const versions[] = {
	"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05", NULL
};

/* --- writing ------------------------------------------------------------ */

struct out_req {
	uv_write_t	 w;
	char		*text;
};

static void
on_written(uv_write_t *w, int status)
{
	struct out_req	*o = (struct out_req *)w;
	struct mcp	*m = w->data;

	if (status < 0)
		m->out_broken = 1;	/* the client went away: EPIPE */
	free(o->text);
	free(o);
}

/* JSON text is UTF-8, and cJSON prints a string's bytes as they are: a
 * project path that is not UTF-8, a name cut by "%.200s" inside a
 * character.  Each byte that starts no valid sequence becomes '?' (never
 * a structural character), so every line we write is valid JSON text. */
static void
utf8_scrub(char *s, size_t n)
{
	unsigned char	*p = (unsigned char *)s, *end = p + n;
	int		 k;

	while (p < end)
		if ((k = jscan_utf8_len(p, end)) == 0)
			*p++ = '?';
		else
			p += k;
}

/* One message, one line.  cJSON's unformatted text escapes every control
 * character inside strings, so the only newline is ours. */
static void
send_msg(struct mcp *m, cJSON *msg)
{
	char		*text = cJSON_PrintUnformatted(msg);
	size_t		 n;
	struct out_req	*o;
	uv_buf_t	 b;

	cJSON_Delete(msg);
	if (text == NULL)
		return;
	n = strlen(text);
	utf8_scrub(text, n);
	if (m->emit != NULL) {
		m->emit(m->emit_arg, text, n);
		free(text);
		return;
	}
	if (m->out_broken || !m->out_open) {
		free(text);
		return;
	}
	text[n] = '\n';		/* replaces the NUL: the buffer is n + 1 */
	if (!m->out_stream) {
		size_t	o2 = 0;

		while (o2 < n + 1) {
			ssize_t	k = write(STDOUT_FILENO, text + o2, n + 1 - o2);

			if (k < 0 && errno == EINTR)
				continue;
			if (k <= 0) {
				m->out_broken = 1;
				break;
			}
			o2 += (size_t)k;
		}
		free(text);
		return;
	}
	if ((o = calloc(1, sizeof(*o))) == NULL) {
		free(text);
		return;
	}
	o->text = text;
	o->w.data = m;
	b = uv_buf_init(text, (unsigned)(n + 1));
	if (uv_write(&o->w, &m->out.s, &b, 1, on_written) != 0) {
		m->out_broken = 1;
		free(text);
		free(o);
	}
}

static cJSON *
envelope(const cJSON *id)
{
	cJSON	*o = cJSON_CreateObject();

	cJSON_AddStringToObject(o, "jsonrpc", "2.0");
	cJSON_AddItemToObject(o, "id", id ? cJSON_Duplicate(id, 1) :
	    cJSON_CreateNull());
	return o;
}

static void
send_result(struct mcp *m, const cJSON *id, cJSON *result)
{
	cJSON	*o = envelope(id);

	cJSON_AddItemToObject(o, "result", result);
	send_msg(m, o);
}

static void
send_error(struct mcp *m, const cJSON *id, int code, const char *msg)
{
	cJSON	*o = envelope(id), *e;

	e = cJSON_AddObjectToObject(o, "error");
	cJSON_AddNumberToObject(e, "code", code);
	cJSON_AddStringToObject(e, "message", msg);
	send_msg(m, o);
}

/* --- tool results --------------------------------------------------------- */

/* The answer to a tools/call: the structured result as JSON text too (for
 * clients that read only content), or the error as text. */
static cJSON *
call_result(struct call *c)
{
	cJSON	*r = cJSON_CreateObject(), *content, *t;
	char	*text;

	content = cJSON_AddArrayToObject(r, "content");
	t = cJSON_CreateObject();
	cJSON_AddItemToArray(content, t);
	cJSON_AddStringToObject(t, "type", "text");
	if (*c->mc.err != '\0' || c->mc.out == NULL) {
		cJSON_AddStringToObject(t, "text", *c->mc.err ? c->mc.err :
		    "out of memory");
		cJSON_AddTrueToObject(r, "isError");
		return r;
	}
	text = cJSON_PrintUnformatted(c->mc.out);
	cJSON_AddStringToObject(t, "text", text ? text : "{}");
	free(text);
	if (c->m->structured) {
		cJSON_AddItemToObject(r, "structuredContent", c->mc.out);
		c->mc.out = NULL;
	}
	cJSON_AddFalseToObject(r, "isError");
	return r;
}

static void	maybe_done(struct mcp *m);

static void
call_free(struct call *c)
{
	struct call	**pp;

	for (pp = &c->m->calls; *pp != NULL; pp = &(*pp)->next)
		if (*pp == c) {
			*pp = c->next;
			break;
		}
	cJSON_Delete(c->id);
	cJSON_Delete(c->mc.args);
	cJSON_Delete(c->mc.out);
	cJSON_Delete(c->wakes);
	free(c);
}

/* Answer (unless cancelled) and forget the call. */
static void
call_finish(struct call *c)
{
	struct mcp	*m = c->m;

	if (!atomic_load(&c->mc.cancelled))
		send_result(m, c->id, call_result(c));
	call_free(c);
	maybe_done(m);
}

/* --- wait_for_wake (on the loop) ------------------------------------- */

static void
wait_end(struct mcp *m, int timed_out)
{
	struct call	*c = m->waiting;
	char		 id[48];

	if (c == NULL)
		return;
	m->waiting = NULL;
	uv_timer_stop(&m->wait_timer);
	uv_timer_stop(&m->gather_timer);
	watch_client_pause(&m->watch);
	if (*c->mc.err == '\0') {
		c->mc.out = cJSON_CreateObject();
		cJSON_AddItemToObject(c->mc.out, "wakes", c->wakes);
		c->wakes = NULL;
		if (m->wst.have_last) {
			watch_id_format(&m->wst.last, id, sizeof(id));
			cJSON_AddStringToObject(c->mc.out, "next", id);
		} else if (c->have_since) {
			watch_id_format(&c->since, id, sizeof(id));
			cJSON_AddStringToObject(c->mc.out, "next", id);
		} else
			cJSON_AddNullToObject(c->mc.out, "next");
		cJSON_AddBoolToObject(c->mc.out, "timedOut", timed_out);
		cJSON_AddBoolToObject(c->mc.out, "connected", c->connected ||
		    m->watch.connected);
		cJSON_AddStringToObject(c->mc.out, "daemon", m->watch.where);
		cJSON_AddStringToObject(c->mc.out, "said", m->watch.said);
	}
	call_finish(c);
}

static void
on_wait_timeout(uv_timer_t *t)
{
	wait_end(t->data, 1);
}

static void
on_gather(uv_timer_t *t)
{
	wait_end(t->data, 0);
}

/* A wake for the waiting call (inside lws: only note it, end later). */
static int
wake_sink(void *arg, const cJSON *wake)
{
	struct mcp	*m = arg;
	struct call	*c = m->waiting;

	if (c == NULL || cJSON_GetArraySize(c->wakes) >= c->max)
		return 1;	/* not taken: `next` stays before it */
	c->connected = 1;
	cJSON_AddItemToArray(c->wakes, cJSON_Duplicate(wake, 1));
	if (cJSON_GetArraySize(c->wakes) >= c->max)
		uv_timer_start(&m->gather_timer, on_gather, 0, 0);
	else if (cJSON_GetArraySize(c->wakes) == 1)
		uv_timer_start(&m->gather_timer, on_gather, GATHER_MS, 0);
	return 0;
}

static void
on_watch_fatal(struct watch_client *w, int rc)
{
	struct mcp	*m = w->data;

	if (m->waiting != NULL) {
		mcp_call_fail(&m->waiting->mc, "the events socket failed: "
		    "%s (%s)", strerror(-rc), w->said);
		wait_end(m, 0);
	}
}

/*
 * A call's wait for the next wakes (struct mcp_call's wait_for_wake,
 * which the wait_for_wake tool calls once it has read its arguments): 0
 * and the call is answered by wait_end, or -1 with the reason in the
 * call's err (the tool returns it and the call is answered at once).
 */
static int
wait_for_wake(struct mcp_call *mc, const struct watch_id *since,
    long timeout, long max)
{
	struct call		*c = (struct call *)((char *)mc -
				    offsetof(struct call, mc));
	struct mcp		*m = c->m;
	struct watch_addr	 a;
	const char		*why = NULL;
	char			 file[PATH_MAX + 16];
	int			 rc;

	c->max = max;
	if (since != NULL) {
		c->since = *since;
		c->have_since = 1;
	}
	if (m->waiting != NULL) {
		mcp_call_fail(mc, "another wait_for_wake is already waiting; "
		    "cancel it or wait for its answer");
		return -1;
	}
	if (m->daemon_url == NULL && (rc = watch_daemon_find(m->project, &a,
	    file, sizeof(file), &why)) != 0) {
		if (rc == -ENOENT)
			mcp_call_fail(mc, "no daemon serves %s (no %s): start "
			    "one with 'sloptimized --project %s'; its wakes "
			    "are what this waits for", m->project, file,
			    m->project);
		else
			mcp_call_fail(mc, "cannot use %s: %s", file, why ?
			    why : strerror(-rc));
		return -1;
	}
	if (!m->watch_open) {
		m->watch.project = m->project;
		m->watch.daemon_url = m->daemon_url;
		m->watch.st = &m->wst;
		m->watch.fatal = on_watch_fatal;
		m->watch.data = m;
		if (watch_client_open(&m->watch, &m->loop) != 0) {
			mcp_call_fail(mc, "%s", m->watch.said);
			return -1;
		}
		m->watch_open = 1;
	}
	if ((c->wakes = cJSON_CreateArray()) == NULL)
		return -1;
	memset(&m->wst, 0, sizeof(m->wst));
	m->wst.json = 1;
	m->wst.sink = wake_sink;
	m->wst.sink_arg = m;
	if (c->have_since) {
		m->wst.last = m->wst.resume = c->since;
		m->wst.have_last = m->wst.have_resume = 1;
	}
	m->waiting = c;
	m->watch.ever = 0;
	m->watch.said[0] = '\0';
	watch_client_start(&m->watch);
	uv_timer_start(&m->wait_timer, on_wait_timeout, (uint64_t)timeout, 0);
	return 0;
}

/* --- the thread pool ------------------------------------------------------ */

static void
on_work(uv_work_t *w)
{
	struct call	*c = w->data;

	if (!atomic_load(&c->mc.cancelled))
		c->mc.tool->pool(&c->mc);
}

static void
after_work(uv_work_t *w, int status)
{
	struct call	*c = w->data;

	(void)status;
	call_finish(c);
}

static void
tools_call(struct mcp *m, const cJSON *id, const cJSON *params)
{
	const char	*name = cJSON_GetStringValue(
			    cJSON_GetObjectItemCaseSensitive(params, "name"));
	const cJSON	*args = cJSON_GetObjectItemCaseSensitive(params,
			    "arguments");
	struct call	*c;
	size_t		 i;
	char		 msg[256];

	if (name == NULL) {
		send_error(m, id, RPC_PARAMS, "tools/call needs params.name, "
		    "the tool's name");
		return;
	}
	for (i = 0; i < m->ntools; i++)
		if (strcmp(name, m->tools[i].name) == 0)
			break;
	if (i == m->ntools) {
		snprintf(msg, sizeof(msg), "Unknown tool: %.200s (tools/list "
		    "names them)", name);
		send_error(m, id, RPC_PARAMS, msg);
		return;
	}
	if ((c = calloc(1, sizeof(*c))) == NULL) {
		send_error(m, id, RPC_INTERNAL, "out of memory");
		return;
	}
	c->m = m;
	c->id = cJSON_Duplicate(id, 1);
	c->mc.tool = &m->tools[i];
	c->mc.now_ms = base_now_ms();
	c->mc.project = m->project;
	c->mc.daemon_url = m->daemon_url;
	c->mc.wait_for_wake = wait_for_wake;
	c->next = m->calls;
	m->calls = c;
	if (args == NULL || cJSON_IsNull(args))
		c->mc.args = cJSON_CreateObject();
	else if (cJSON_IsObject(args))
		c->mc.args = cJSON_Duplicate(args, 1);
	else {
		c->mc.args = cJSON_CreateObject();
		mcp_call_fail(&c->mc, "arguments is an object of named "
		    "arguments");
		call_finish(c);
		return;
	}
	if (c->mc.tool->loop != NULL) {
		if (c->mc.tool->loop(&c->mc) != 0)
			call_finish(c);
		return;
	}
	c->work.data = c;
	if (uv_queue_work(&m->loop, &c->work, on_work, after_work) != 0) {
		mcp_call_fail(&c->mc, "cannot queue the work");
		call_finish(c);
	}
}

/* --- the protocol --------------------------------------------------------- */

/*
 * An id to answer with, made from the request's own text (`text`, its span
 * as the strict scanner found it): a string as cJSON decoded it; a whole
 * number as it was written, in a raw item, because a double changes
 * 9007199254740993 and cJSON prints 9007199254740991 as
 * 9.00719925474099e+15 — the client would not know its answer.  NULL: not
 * an id (a fraction, a boolean, an object, a string the strict scanner
 * would not pass).  "Whole" is tested on the double with floor(), never
 * through a cast to an integer type: 8.4e52 fits none.
 */
static cJSON *
id_make(const cJSON *v, struct jspan text)
{
	char	 buf[40], *t;
	cJSON	*r;

	if (cJSON_IsString(v))
		return text.kind == J_STRING && project_nul_escape(text.p - 1,
		    text.n + 2) >= 0 ? NULL : cJSON_CreateString(v->valuestring);
	if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble) ||
	    v->valuedouble != floor(v->valuedouble))
		return NULL;
	if (text.kind != J_NUMBER) {
		/* the member's name was escaped ("\u0069d"): no span, but
		 * %.17g gives the double back exactly */
		snprintf(buf, sizeof(buf), "%.17g", v->valuedouble);
		return cJSON_CreateRaw(buf);
	}
	if ((t = malloc(text.n + 1)) == NULL)
		return NULL;
	memcpy(t, text.p, text.n);
	t[text.n] = '\0';
	r = cJSON_CreateRaw(t);
	free(t);
	return r;
}

/* Two ids made by id_make: the same text, or numbers of the same value
 * where a double holds them exactly (1 and 1.0; not 2^53 + 1 and 2^53). */
static int
same_id(const cJSON *a, const cJSON *b)
{
	double	x, y;

	if (a == NULL || b == NULL)
		return 0;
	if (cJSON_IsString(a) && cJSON_IsString(b))
		return strcmp(a->valuestring, b->valuestring) == 0;
	if (!cJSON_IsRaw(a) || !cJSON_IsRaw(b))
		return 0;
	if (strcmp(a->valuestring, b->valuestring) == 0)
		return 1;
	x = strtod(a->valuestring, NULL);
	y = strtod(b->valuestring, NULL);
	return x == y && fabs(x) <= 9007199254740992.0;
}

/* notifications/cancelled: no answer for that request, ever; a fold in
 * hand finishes unseen, a fix not yet written is not written. */
static void
cancel(struct mcp *m, const cJSON *params, struct jspan pspan)
{
	cJSON		*rid = id_make(cJSON_GetObjectItemCaseSensitive(params,
			    "requestId"), jscan_get(pspan, "requestId"));
	struct call	*c;

	for (c = m->calls; c != NULL; c = c->next)
		if (same_id(c->id, rid)) {
			atomic_store(&c->mc.cancelled, 1);
			if (c == m->waiting)
				wait_end(m, 0);
			break;
		}
	cJSON_Delete(rid);
}

static void
initialize(struct mcp *m, const cJSON *id, const cJSON *params)
{
	const char	*want = cJSON_GetStringValue(
			    cJSON_GetObjectItemCaseSensitive(params,
			    "protocolVersion"));
	cJSON		*r, *caps, *info;
	size_t		 i;

	if (want == NULL) {
		send_error(m, id, RPC_PARAMS, "initialize needs "
		    "params.protocolVersion");
		return;
	}
	if (m->initialized) {
		send_error(m, id, RPC_INVALID, "already initialized");
		return;
	}
	for (i = 0; versions[i] != NULL; i++)
		if (strcmp(want, versions[i]) == 0)
			break;
	snprintf(m->version, sizeof(m->version), "%s", versions[i] ?
	    versions[i] : MCP_LATEST);
	m->structured = strcmp(m->version, MCP_STRUCTURED) >= 0;
	m->annotated = strcmp(m->version, MCP_ANNOTATED) >= 0;
	m->initialized = 1;
	r = cJSON_CreateObject();
	cJSON_AddStringToObject(r, "protocolVersion", m->version);
	caps = cJSON_AddObjectToObject(r, "capabilities");
	cJSON_AddFalseToObject(cJSON_AddObjectToObject(caps, "tools"),
	    "listChanged");
	info = cJSON_AddObjectToObject(r, "serverInfo");
	cJSON_AddStringToObject(info, "name", "sloptimize");
	if (m->structured)
		cJSON_AddStringToObject(info, "title", "sloptimize — the "
		    "stutter catalogue of a three.js game");
	cJSON_AddStringToObject(info, "version", SLOPTIMIZE_VERSION);
	cJSON_AddStringToObject(r, "instructions",
	    "sloptimize folds the game's stutter ledger (.sloptimize/perf.jsonl) "
	    "into a catalogue of causes by footprint. Read get_issues and "
	    "get_issue before changing code; change one thing at a time; after "
	    "the change, record_fix with the footprints it addresses: the fix is "
	    "pending until a build after it has run, and only the fold's verdict "
	    "(fixed or regressed) says whether it worked. Do not retry what a "
	    "regressed or rejected fix already tried. wait_for_wake waits for "
	    "the next stutter the daemon sees.");
	send_result(m, id, r);
}

/* tools/list: the table the server was handed, in its order; titles and
 * output schemas from 2025-06-18 on, annotations from 2025-03-26 on. */
static cJSON *
tools_list(const struct mcp *m)
{
	cJSON	*r = cJSON_CreateObject(), *a, *t, *an;
	size_t	 i;

	a = cJSON_AddArrayToObject(r, "tools");
	for (i = 0; i < m->ntools; i++) {
		t = cJSON_CreateObject();
		cJSON_AddItemToArray(a, t);
		cJSON_AddStringToObject(t, "name", m->tools[i].name);
		if (m->structured)
			cJSON_AddStringToObject(t, "title", m->tools[i].title);
		cJSON_AddStringToObject(t, "description",
		    m->tools[i].description);
		cJSON_AddItemToObject(t, "inputSchema",
		    cJSON_Parse(m->tools[i].input));
		if (m->structured)
			cJSON_AddItemToObject(t, "outputSchema",
			    cJSON_Parse(m->tools[i].output));
		if (m->annotated) {
			an = cJSON_AddObjectToObject(t, "annotations");
			cJSON_AddBoolToObject(an, "readOnlyHint",
			    m->tools[i].read_only);
			if (!m->tools[i].read_only) {
				/* appends; never changes or removes */
				cJSON_AddFalseToObject(an, "destructiveHint");
				cJSON_AddFalseToObject(an, "idempotentHint");
			}
			cJSON_AddFalseToObject(an, "openWorldHint");
		}
	}
	return r;
}

static void
request(struct mcp *m, const char *method, const cJSON *id,
    const cJSON *params)
{
	if (strcmp(method, "ping") == 0) {
		send_result(m, id, cJSON_CreateObject());
		return;
	}
	if (strcmp(method, "initialize") == 0) {
		initialize(m, id, params);
		return;
	}
	if (strcmp(method, "tools/list") != 0 &&
	    strcmp(method, "tools/call") != 0) {
		char	msg[256];

		snprintf(msg, sizeof(msg), "Method not found: %.200s", method);
		send_error(m, id, RPC_NO_METHOD, msg);
		return;
	}
	if (!m->initialized) {
		send_error(m, id, RPC_INVALID, "not initialized: send "
		    "initialize first");
		return;
	}
	if (strcmp(method, "tools/list") == 0)
		send_result(m, id, tools_list(m));
	else
		tools_call(m, id, params);
}

/* Is line[0..len) one valid JSON text, if not an object?  (jscan scans
 * objects: look at it as {"a": <line>}.)  A batch or a bare value is then
 * -32600, not -32700. */
static int
json_not_object(const char *line, size_t len)
{
	struct jscan_result	 r;
	char			*w;
	int			 ok;

	if ((w = malloc(len + 6)) == NULL)
		return 0;
	memcpy(w, "{\"a\":", 5);
	memcpy(w + 5, line, len);
	w[5 + len] = '}';
	ok = jscan_object(w, len + 6, &r) == 0;
	free(w);
	return ok;
}

/*
 * One line from the client.  It is read with the fold's strict scanner
 * first (ledger/jscan.h): RFC 8259 grammar, strict UTF-8, no raw control
 * bytes, numbers within a double's range.  cJSON alone took invalid UTF-8
 * (and a method name holding it came back raw in "Method not found", not
 * JSON text) and a raw NUL, which cut the string it was in.  Only then is
 * the line parsed with cJSON, and the id taken from its own text.
 */
static void
message(struct mcp *m, const char *line, size_t len)
{
	struct jscan_result	 r;
	struct jspan		 obj = { 0 };
	cJSON			*msg = NULL, *id = NULL;
	const cJSON		*idv, *params, *jv, *it;
	const char		*method;
	char			 why[160];
	long			 at;
	int			 nid = 0;

	if (jscan_object(line, len, &r) != 0) {
		if (json_not_object(line, len)) {
			send_error(m, NULL, RPC_INVALID, line[strspn(line,
			    " \t")] == '[' ? "Invalid Request: batches are "
			    "not part of this protocol revision; send one "
			    "message per line" : "Invalid Request: a message "
			    "is a JSON object");
			return;
		}
		snprintf(why, sizeof(why), "Parse error: %s at byte %zu (not "
		    "JSON text)", r.error, r.error_at);
		send_error(m, NULL, RPC_PARSE, why);
		return;
	}
	if ((msg = cJSON_ParseWithLength(line, len)) == NULL ||
	    !cJSON_IsObject(msg)) {
		send_error(m, NULL, RPC_INTERNAL, "out of memory");
		goto out;
	}
	obj.p = line + strspn(line, " \t");
	obj.n = (uint32_t)(len - (size_t)(obj.p - line));
	while (obj.n > 0 && (obj.p[obj.n - 1] == ' ' ||
	    obj.p[obj.n - 1] == '\t'))
		obj.n--;
	obj.kind = J_OBJECT;
	cJSON_ArrayForEach(it, msg)
		nid += it->string != NULL && strcmp(it->string, "id") == 0;
	if (nid > 1) {
		send_error(m, NULL, RPC_INVALID, "Invalid Request: id is named "
		    "more than once");
		goto out;
	}
	idv = cJSON_GetObjectItemCaseSensitive(msg, "id");
	/* an id we can answer with: a string or a whole number */
	if (idv != NULL && (id = id_make(idv, jscan_get(obj, "id"))) == NULL) {
		send_error(m, NULL, RPC_INVALID, "Invalid Request: id is a "
		    "string or an integer");
		goto out;
	}
	if ((at = project_nul_escape(line, len)) >= 0) {
		/* valid JSON, but cJSON would cut the string there */
		snprintf(why, sizeof(why), "Invalid Request: \\u0000 at byte "
		    "%ld: a NUL cuts a string short", at);
		if (id != NULL)
			send_error(m, id, RPC_INVALID, why);
		goto out;
	}
	jv = cJSON_GetObjectItemCaseSensitive(msg, "jsonrpc");
	method = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(msg,
	    "method"));
	params = cJSON_GetObjectItemCaseSensitive(msg, "params");
	if (!cJSON_IsString(jv) || strcmp(jv->valuestring, "2.0") != 0) {
		send_error(m, id, RPC_INVALID, "Invalid Request: jsonrpc is "
		    "\"2.0\"");
		goto out;
	}
	if (method == NULL) {
		/* a response: we send no requests, so nothing to match */
		if (id != NULL && (cJSON_HasObjectItem(msg, "result") ||
		    cJSON_HasObjectItem(msg, "error")))
			goto out;
		send_error(m, id, RPC_INVALID, "Invalid Request: no method");
		goto out;
	}
	if (params != NULL && !cJSON_IsObject(params)) {
		if (id != NULL)
			send_error(m, id, RPC_PARAMS, "Invalid params: params "
			    "is an object");
		goto out;
	}
	if (id == NULL) {	/* a notification: never answered */
		if (strcmp(method, "notifications/cancelled") == 0)
			cancel(m, params, jscan_get(obj, "params"));
		goto out;
	}
	request(m, method, id, params);
out:
	cJSON_Delete(id);
	cJSON_Delete(msg);
}

/* --- reading ---------------------------------------------------------------- */

/* Bytes from stdin: split into lines (a CR before the LF is dropped). */
void
mcp_feed(struct mcp *m, const char *p, size_t n)
{
	const char	*end = p + n, *nl;

	while (p < end) {
		size_t	k;

		nl = memchr(p, '\n', (size_t)(end - p));
		k = nl ? (size_t)(nl - p) : (size_t)(end - p);
		if (!m->discarding && m->len + k > MCP_LINE_MAX) {
			m->discarding = 1;
			m->len = 0;
		}
		if (!m->discarding) {
			if (m->len + k + 1 > m->cap) {
				size_t	 cap = m->cap ? m->cap : 65536;
				char	*nb;

				while (cap < m->len + k + 1)
					cap *= 2;
				if ((nb = realloc(m->buf, cap)) == NULL) {
					m->discarding = 1;
					m->len = 0;
				} else {
					m->buf = nb;
					m->cap = cap;
				}
			}
			if (!m->discarding) {
				memcpy(m->buf + m->len, p, k);
				m->len += k;
			}
		}
		p += k;
		if (nl == NULL)
			break;
		p++;
		if (m->discarding) {
			send_error(m, NULL, RPC_INVALID, "Invalid Request: a "
			    "message over 8 MiB, skipped");
			m->discarding = 0;
		} else {
			size_t	len = m->len, i;

			while (len > 0 && m->buf[len - 1] == '\r')
				len--;
			for (i = 0; i < len; i++)
				if (m->buf[i] != ' ' && m->buf[i] != '\t')
					break;
			if (i < len)
				message(m, m->buf, len);
		}
		m->len = 0;
	}
}

static void	on_eof(struct mcp *m);

static void
on_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *b)
{
	struct mcp	*m = h->data;

	(void)suggested;
	*b = uv_buf_init(m->in_buf, sizeof(m->in_buf));
}

static void
on_read(uv_stream_t *s, ssize_t n, const uv_buf_t *b)
{
	struct mcp	*m = s->data;

	if (n > 0)
		mcp_feed(m, b->base, (size_t)n);
	else if (n < 0)		/* UV_EOF, or the pipe broke */
		on_eof(m);
}

static void	read_file(struct mcp *m);

static void
on_file_read(uv_fs_t *r)
{
	struct mcp	*m = r->data;
	ssize_t		 n = r->result;

	uv_fs_req_cleanup(r);
	if (n > 0) {
		mcp_feed(m, m->in_buf, (size_t)n);
		read_file(m);
	} else
		on_eof(m);
}

/* stdin is a file (or /dev/null): read it on the pool, chunk by chunk. */
static void
read_file(struct mcp *m)
{
	uv_buf_t	b = uv_buf_init(m->in_buf, sizeof(m->in_buf));

	m->in_req.data = m;
	if (uv_fs_read(&m->loop, &m->in_req, STDIN_FILENO, &b, 1, -1,
	    on_file_read) != 0)
		on_eof(m);
}

/* --- the end ------------------------------------------------------------------ */

static void
on_shutdown(uv_shutdown_t *r, int status)
{
	(void)status;
	uv_close((uv_handle_t *)r->handle, NULL);
	free(r);
}

/* Once stdin has ended and nothing is in hand: close everything; the loop
 * then runs out and the server exits. */
static void
maybe_done(struct mcp *m)
{
	uv_shutdown_t	*r;

	if (!m->eof || m->calls != NULL || m->done)
		return;
	m->done = 1;
	uv_close((uv_handle_t *)&m->wait_timer, NULL);
	uv_close((uv_handle_t *)&m->gather_timer, NULL);
	if (m->watch_open)
		watch_client_close(&m->watch);
	if (m->out_stream && m->out_open) {
		m->out_open = 0;
		/* what is written is flushed before the close */
		if ((r = calloc(1, sizeof(*r))) == NULL ||
		    uv_shutdown(r, &m->out.s, on_shutdown) != 0) {
			free(r);
			uv_close(&m->out.h, NULL);
		}
	}
}

static void
on_eof(struct mcp *m)
{
	if (m->eof)
		return;
	m->eof = 1;
	if (m->in_open && m->in_stream) {
		uv_read_stop(&m->in.s);
		uv_close(&m->in.h, NULL);
	}
	m->in_open = 0;
	/*
	 * A client may close its side and still read ours (a pipe fed by a
	 * script): what was asked is answered.  A wait is answered at once
	 * with what it has, or the server would linger for its timeout.
	 */
	if (m->waiting != NULL)
		wait_end(m, 0);
	maybe_done(m);
}

/* stdin or stdout as a libuv stream when it is one. */
static int
open_stream(struct mcp *m, int fd, int readable, void *h)
{
	uv_handle_type	t = uv_guess_handle(fd);

	if (t == UV_TTY)
		return uv_tty_init(&m->loop, h, fd, readable) == 0;
	if (t == UV_NAMED_PIPE || t == UV_TCP)
		return uv_pipe_init(&m->loop, h, 0) == 0 &&
		    uv_pipe_open(h, fd) == 0;
	return 0;
}

/* --- without stdio (tests/fuzz/fuzz_mcp.c) ----------------------------------- */

int
mcp_open(struct mcp *m, const char *project, const struct mcp_tool *tools,
    size_t ntools)
{
	int	rc;

	m->tools = tools;
	m->ntools = ntools;
	if (project != NULL)
		snprintf(m->project, sizeof(m->project), "%s", project);
	if ((rc = uv_loop_init(&m->loop)) != 0)
		return rc;
	uv_timer_init(&m->loop, &m->wait_timer);
	uv_timer_init(&m->loop, &m->gather_timer);
	m->wait_timer.data = m->gather_timer.data = m;
	return 0;
}

void
mcp_close(struct mcp *m)
{
	uv_run(&m->loop, UV_RUN_DEFAULT);	/* what is in hand ends */
	if (m->waiting != NULL)
		wait_end(m, 0);
	if (!m->done) {
		m->done = 1;
		uv_close((uv_handle_t *)&m->wait_timer, NULL);
		uv_close((uv_handle_t *)&m->gather_timer, NULL);
		if (m->watch_open)
			watch_client_close(&m->watch);
	}
	uv_run(&m->loop, UV_RUN_DEFAULT);
	if (m->watch_open) {
		watch_client_free(&m->watch);
		uv_run(&m->loop, UV_RUN_DEFAULT);
	}
	uv_loop_close(&m->loop);
	free(m->buf);
	m->buf = NULL;
}

/* --- the verb ------------------------------------------------------------------ */

static const char mcp_usage[] =
"usage: sloptimize mcp [--project DIR] [--daemon URL]\n"
"A Model Context Protocol server on stdin/stdout (JSON-RPC 2.0, one\n"
"message a line; protocol revision " MCP_LATEST "), for a coding agent.\n"
"Tools: get_issues, get_issue, get_history, get_ledger, get_status,\n"
"record_fix, propose_fix, wait_for_wake.  Ends at EOF on stdin.\n"
"  --project DIR  the game project (default .)\n"
"  --daemon URL   the daemon for wait_for_wake and get_status, instead\n"
"                 of the one daemon.json names\n"
"Register it with Claude Code: sloptimize init-agent (docs/agents.md).\n";

int
verb_mcp(int argc, char **argv)
{
	struct cli_common	 cc;
	struct watch_addr	 probe;
	struct mcp		*m;
	const char		*daemon = NULL;
	struct cli_opt		 opts[] = {
		{ "daemon", OPT_ARG, &daemon }, { NULL, 0, NULL }
	};
	int			 rc;

	if ((rc = cli_parse(argc, argv, opts, &cc, mcp_usage, NULL,
	    NULL)) >= 0)
		return rc;
	if (daemon != NULL && watch_url_parse(daemon, &probe) != 0) {
		fprintf(stderr, "sloptimize mcp: --daemon %s is not a ws:// or "
		    "http:// address of the daemon\n", daemon);
		return EXIT_USAGE;
	}
	if ((m = calloc(1, sizeof(*m))) == NULL)
		return EXIT_FINDINGS;
	if (realpath(cc.project, m->project) == NULL) {
		fprintf(stderr, "sloptimize mcp: --project %s: %s\n",
		    cc.project, strerror(errno));
		free(m);
		return EXIT_USAGE;
	}
	m->daemon_url = daemon;
	signal(SIGPIPE, SIG_IGN);	/* a client gone is EPIPE, not death */
	if ((rc = mcp_open(m, NULL, mcp_tools, mcp_ntools)) != 0) {
		fprintf(stderr, "sloptimize mcp: %s\n", uv_strerror(rc));
		free(m);
		return EXIT_FINDINGS;
	}
	m->out_stream = open_stream(m, STDOUT_FILENO, 0, &m->out);
	m->out.h.data = m;
	m->out_open = 1;
	if ((m->in_stream = open_stream(m, STDIN_FILENO, 1, &m->in))) {
		m->in.h.data = m;
		m->in_open = 1;
		uv_read_start(&m->in.s, on_alloc, on_read);
	} else
		read_file(m);
	uv_run(&m->loop, UV_RUN_DEFAULT);
	if (m->watch_open) {
		watch_client_free(&m->watch);
		uv_run(&m->loop, UV_RUN_DEFAULT);
	}
	if (uv_loop_close(&m->loop) != 0)
		fprintf(stderr, "sloptimize mcp: loop not empty at exit\n");
	free(m->buf);
	free(m);
	return EXIT_OK;
}
