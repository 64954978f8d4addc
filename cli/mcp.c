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
#include <sys/socket.h>
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netdb.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>
#include <uv.h>

#include "cli.h"
#include "cli/fix.h"
#include "cli/watch.h"
#include "ledger/footprint.h"
#include "ledger/ledger.h"
#include "project/append.h"
#include "project/project.h"
#include "verbs.h"

#define MCP_LINE_MAX	(8 * 1024 * 1024)	/* one message */
#define MCP_LATEST	"2025-11-25"
#define MCP_STRUCTURED	"2025-06-18"	/* structuredContent from here on */
#define MCP_ANNOTATED	"2025-03-26"	/* tool annotations from here on */
#define GATHER_MS	50	/* wakes this close to the first come along */
#define STATUS_TIMEOUT_MS 3000

static const char *const versions[] = {
	"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05", NULL
};

enum {
	RPC_PARSE = -32700, RPC_INVALID = -32600, RPC_NO_METHOD = -32601,
	RPC_PARAMS = -32602, RPC_INTERNAL = -32603
};

struct mcp;
struct call;

struct tool {
	const char	*name, *title, *description;
	const char	*input, *output;	/* JSON Schema text */
	int		 read_only;
	void		(*pool)(struct call *);	/* on the thread pool */
	void		(*loop)(struct call *);	/* or on the loop */
};

/* One tools/call in hand. */
struct call {
	struct mcp		*m;
	cJSON			*id;		/* the request's */
	const struct tool	*tool;
	cJSON			*args;		/* an object, owned */
	uv_work_t		 work;
	atomic_int		 cancelled;
	int64_t			 now_ms;
	cJSON			*out;		/* the structured result */
	char			 err[2048];	/* a tool error, if *err */
	/* wait_for_wake */
	cJSON			*wakes;
	long			 max;
	struct watch_id		 since;
	int			 have_since;
	int			 connected;
	struct call		*next;
};

struct mcp {
	uv_loop_t		 loop;
	union {
		uv_handle_t	 h;
		uv_stream_t	 s;
		uv_pipe_t	 pipe;
		uv_tty_t	 tty;
	}			 in, out;
	int			 in_stream, out_stream;	/* else a file */
	uv_fs_t			 in_req;
	char			 in_buf[65536];
	int			 in_open, out_open, out_broken;

	char			*buf;		/* the line being read */
	size_t			 len, cap;
	int			 discarding;	/* a line over MCP_LINE_MAX */

	int			 initialized;
	char			 version[16];
	int			 structured, annotated;

	char			 project[PATH_MAX];
	const char		*daemon_url;
	struct call		*calls;		/* in hand */
	int			 eof, done;

	struct watch_client	 watch;
	struct watch_state	 wst;
	int			 watch_open;
	struct call		*waiting;	/* the one wait_for_wake */
	uv_timer_t		 wait_timer, gather_timer;
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
	if (text == NULL || m->out_broken || !m->out_open) {
		free(text);
		return;
	}
	n = strlen(text);
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

static void
call_fail(struct call *c, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void
call_fail(struct call *c, const char *fmt, ...)
{
	va_list	ap;

	va_start(ap, fmt);
	vsnprintf(c->err, sizeof(c->err), fmt, ap);
	va_end(ap);
}

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
	if (*c->err != '\0' || c->out == NULL) {
		cJSON_AddStringToObject(t, "text", *c->err ? c->err :
		    "out of memory");
		cJSON_AddTrueToObject(r, "isError");
		return r;
	}
	text = cJSON_PrintUnformatted(c->out);
	cJSON_AddStringToObject(t, "text", text ? text : "{}");
	free(text);
	if (c->m->structured) {
		cJSON_AddItemToObject(r, "structuredContent", c->out);
		c->out = NULL;
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
	cJSON_Delete(c->args);
	cJSON_Delete(c->out);
	cJSON_Delete(c->wakes);
	free(c);
}

/* Answer (unless cancelled) and forget the call. */
static void
call_finish(struct call *c)
{
	struct mcp	*m = c->m;

	if (!atomic_load(&c->cancelled))
		send_result(m, c->id, call_result(c));
	call_free(c);
	maybe_done(m);
}

/* --- arguments ------------------------------------------------------------- */

/* Unknown arguments are refused, so that a typo is not silently ignored. */
static int
args_known(struct call *c, const char *const *known)
{
	const cJSON	*it;
	size_t		 i, o = 0;
	char		 list[512] = "";

	cJSON_ArrayForEach(it, c->args) {
		for (i = 0; known[i] != NULL; i++)
			if (strcmp(it->string, known[i]) == 0)
				break;
		if (known[i] != NULL)
			continue;
		for (i = 0; known[i] != NULL && o < sizeof(list); i++)
			o += (size_t)snprintf(list + o, sizeof(list) - o,
			    "%s%s", i ? ", " : "", known[i]);
		call_fail(c, "unknown argument '%.100s' (%s takes %s)",
		    it->string, c->tool->name, *list ? list : "none");
		return -1;
	}
	return 0;
}

static const cJSON *
arg(struct call *c, const char *name)
{
	const cJSON	*it = cJSON_GetObjectItemCaseSensitive(c->args, name);

	return cJSON_IsNull(it) ? NULL : it;
}

static int
arg_str(struct call *c, const char *name, int required, const char **out)
{
	const cJSON	*it = arg(c, name);

	*out = NULL;
	if (it == NULL) {
		if (required) {
			call_fail(c, "%s is required", name);
			return -1;
		}
		return 0;
	}
	if (!cJSON_IsString(it)) {
		call_fail(c, "%s is a string", name);
		return -1;
	}
	*out = it->valuestring;
	return 0;
}

static int
arg_bool(struct call *c, const char *name, int *out)
{
	const cJSON	*it = arg(c, name);

	if (it == NULL)
		return 0;
	if (!cJSON_IsBool(it)) {
		call_fail(c, "%s is true or false", name);
		return -1;
	}
	*out = cJSON_IsTrue(it);
	return 0;
}

static int
arg_int(struct call *c, const char *name, long lo, long hi, long *out)
{
	const cJSON	*it = arg(c, name);

	if (it == NULL)
		return 0;
	if (!cJSON_IsNumber(it) || it->valuedouble != (double)(long)
	    it->valuedouble || it->valuedouble < lo || it->valuedouble > hi) {
		call_fail(c, "%s is a whole number from %ld to %ld", name, lo,
		    hi);
		return -1;
	}
	*out = (long)it->valuedouble;
	return 0;
}

static int
arg_time(struct call *c, const char *name, int64_t *ms)
{
	const char	*v;

	*ms = LEDGER_NO_TIME;
	if (arg_str(c, name, 0, &v) != 0)
		return -1;
	if (v != NULL && iso_parse_ms(v, strlen(v), ms) != 0) {
		call_fail(c, "%s is an ISO-8601 time (2026-09-01T09:00:00Z), "
		    "not '%s'", name, v);
		return -1;
	}
	return 0;
}

/* An array of strings (8-hex ids when hex). */
static int
arg_list(struct call *c, const char *name, int hex, const cJSON **out)
{
	const cJSON	*it = arg(c, name), *e;

	*out = NULL;
	if (it == NULL)
		return 0;
	if (!cJSON_IsArray(it))
		goto bad;
	cJSON_ArrayForEach(e, it)
		if (!cJSON_IsString(e) || (hex && footprint_parse_hex(
		    e->valuestring, strlen(e->valuestring), &(uint32_t){ 0 })))
			goto bad;
	*out = it;
	return 0;
bad:
	call_fail(c, hex ? "%s is a list of 8-hex footprint ids (81e5eb9b)" :
	    "%s is a list of strings", name);
	return -1;
}

/* --- the project's files (on the pool) -------------------------------- */

static int
fold(struct call *c, struct ledger_opts *o, struct ledger **l,
    struct project_fold_info *fi)
{
	int	rc = project_fold(c->m->project, o, l, fi);

	if (rc == -ENOENT)
		call_fail(c, "no ledger at %s yet: the game's runtime writes it "
		    "while the game runs", fi->perf);
	else if (rc != 0)
		call_fail(c, "cannot read %s: %s", fi->failed ? fi->failed :
		    fi->perf, project_strerror(rc));
	return rc;
}

static void
add_source(cJSON *o, const struct project_fold_info *fi)
{
	cJSON	*s = cJSON_AddObjectToObject(o, "source");

	cJSON_AddStringToObject(s, "perf", fi->perf);
	cJSON_AddStringToObject(s, "fixes", fi->fixes);
	cJSON_AddNumberToObject(s, "bytes", (double)fi->bytes);
	cJSON_AddNumberToObject(s, "partialBytes", (double)fi->partial);
}

static int
filters(struct call *c, struct ledger_opts *o)
{
	int	automated = 0;

	if (arg_time(c, "from", &o->from_ms) || arg_time(c, "to", &o->to_ms) ||
	    arg_bool(c, "include_automated", &automated))
		return -1;
	o->include_automated = automated;
	return 0;
}

static const char *const statuses[] = {
	"open", "pending", "fixed", "regressed", NULL
};

static void
tool_get_issues(struct call *c)
{
	static const char *const known[] = { "type", "status", "from", "to",
		"include_automated", "limit", NULL };
	struct ledger_opts		 o = { 0 };
	struct ledger_query		 q = { 0 };
	struct ledger			*l = NULL;
	struct project_fold_info	 fi;
	long				 limit = 50;
	size_t				 i;

	if (args_known(c, known) || filters(c, &o) ||
	    arg_str(c, "type", 0, &q.type) ||
	    arg_str(c, "status", 0, &q.status) ||
	    arg_int(c, "limit", 0, 100000, &limit))
		return;
	for (i = 0; q.status != NULL && statuses[i] != NULL; i++)
		if (strcmp(q.status, statuses[i]) == 0)
			break;
	if (q.status != NULL && statuses[i] == NULL) {
		call_fail(c, "status is open, pending, fixed or regressed");
		return;
	}
	q.limit = (size_t)limit;
	if (fold(c, &o, &l, &fi) != 0)
		return;
	if ((c->out = ledger_issues_json(l, &q, c->now_ms)) != NULL)
		add_source(c->out, &fi);
	ledger_destroy(l);
}

static void
tool_get_issue(struct call *c)
{
	static const char *const known[] = { "id", "occurrences", "from", "to",
		"include_automated", NULL };
	struct ledger_opts		 o = { 0 };
	struct ledger			*l = NULL;
	struct project_fold_info	 fi;
	const char			*id;
	char				 hex[9], near[64];
	uint32_t			 v;
	long				 keep = 50;
	cJSON				*doc, *occ;
	int				 total;

	if (args_known(c, known) || arg_str(c, "id", 1, &id) ||
	    filters(c, &o) || arg_int(c, "occurrences", 0, 100000, &keep))
		return;
	if (footprint_parse_hex(id, strlen(id), &v) != 0) {
		call_fail(c, "id is an 8-hex footprint id (81e5eb9b), not '%s'",
		    id);
		return;
	}
	footprint_hex(v, hex);
	o.occurrences_of = hex;
	if (fold(c, &o, &l, &fi) != 0)
		return;
	if ((doc = ledger_issue_json(l, hex, c->now_ms)) == NULL) {
		project_footprints_nearest(l, hex, near, sizeof(near));
		call_fail(c, "no issue %s in %s; %s%s", hex, fi.perf, *near ?
		    "nearest known: " : "the ledger has no footprint yet",
		    near);
		ledger_destroy(l);
		return;
	}
	/* the occurrences are the ledger's (a reference): copy, then keep
	 * the last ones */
	c->out = cJSON_Duplicate(doc, 1);
	cJSON_Delete(doc);
	ledger_destroy(l);
	if (c->out == NULL)
		return;
	occ = cJSON_GetObjectItemCaseSensitive(c->out, "occurrences");
	total = cJSON_GetArraySize(occ);
	while (cJSON_GetArraySize(occ) > keep)
		cJSON_DeleteItemFromArray(occ, 0);
	cJSON_AddNumberToObject(c->out, "occurrencesTotal", total);
	add_source(c->out, &fi);
}

static void
tool_get_history(struct call *c)
{
	static const char *const known[] = { "buckets", "include_automated",
		NULL };
	struct ledger_opts		 o = { 0 };
	struct ledger			*l = NULL;
	struct project_fold_info	 fi;
	long				 buckets = 24;
	int				 automated = 0;

	if (args_known(c, known) ||
	    arg_int(c, "buckets", 1, 1000, &buckets) ||
	    arg_bool(c, "include_automated", &automated))
		return;
	o.from_ms = o.to_ms = LEDGER_NO_TIME;
	o.include_automated = automated;
	o.want_timeline = 1;
	if (fold(c, &o, &l, &fi) != 0)
		return;
	if ((c->out = ledger_history_json(l, (int)buckets, c->now_ms)) != NULL)
		add_source(c->out, &fi);
	ledger_destroy(l);
}

/* --- get_ledger: the tail of a file ----------------------------------- */

#define TAIL_FIRST	(256 * 1024)
#define TAIL_MOST	(4 * 1024 * 1024)

/*
 * The last `want` records of a ledger file as {path, size, from,
 * truncated, records, offsets, skipped}: whole lines only (a partial last
 * line waits for its newline), each a record under the fold's rules (a
 * JSON object with a string type, strict JSON and UTF-8) or counted in
 * `skipped`.  Read backwards from the end, at most TAIL_MOST bytes.
 */
static cJSON *
tail_json(struct call *c, const char *path, long want)
{
	cJSON		*o, *recs, *offs;
	struct stat	 st;
	char		*buf = NULL;
	size_t		 win = TAIL_FIRST, n, i, start, nl, lines;
	uint64_t	 base = 0, from;
	long		 skipped = 0, k;
	int		 fd = -1, rc;
	size_t		*at = NULL;

	o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "path", path);
	if ((rc = project_open(path, O_RDONLY, 0, &fd)) == -ENOENT) {
		cJSON_AddNumberToObject(o, "size", 0);
		cJSON_AddNumberToObject(o, "from", 0);
		cJSON_AddFalseToObject(o, "truncated");
		cJSON_AddArrayToObject(o, "records");
		cJSON_AddArrayToObject(o, "offsets");
		cJSON_AddNumberToObject(o, "skipped", 0);
		return o;
	}
	if (rc != 0 || fstat(fd, &st) != 0) {
		call_fail(c, "cannot read %s: %s", path, project_strerror(rc ?
		    rc : -errno));
		goto fail;
	}
	for (;;) {
		if (win > (size_t)st.st_size)
			win = (size_t)st.st_size;
		base = (uint64_t)st.st_size - win;
		free(buf);
		if ((buf = malloc(win + 1)) == NULL)
			goto nomem;
		for (n = 0; n < win; ) {
			ssize_t	r = pread(fd, buf + n, win - n,
				    (off_t)(base + n));

			if (r < 0 && errno == EINTR)
				continue;
			if (r <= 0)
				break;
			n += (size_t)r;
		}
		win = n;
		for (i = lines = 0; i < win; i++)
			lines += buf[i] == '\n';
		if (lines > (size_t)want || base == 0 || win >= TAIL_MOST)
			break;
		win *= 2;
	}
	/* line starts: from the first byte after a newline (or 0) */
	if ((at = malloc((lines + 2) * sizeof(*at))) == NULL)
		goto nomem;
	start = 0;
	if (base > 0) {
		char	*p = memchr(buf, '\n', win);

		start = p ? (size_t)(p - buf) + 1 : win;
	}
	for (i = start, k = 0; i < win; i = nl + 1) {
		char	*p = memchr(buf + i, '\n', win - i);

		if (p == NULL)
			break;		/* the partial last line */
		nl = (size_t)(p - buf);
		at[k++] = i;
	}
	recs = cJSON_AddArrayToObject(o, "records");
	offs = cJSON_AddArrayToObject(o, "offsets");
	from = (uint64_t)st.st_size;
	{
		long	first = k > want ? k - want : 0, j;

		for (j = first; j < k; j++) {
			size_t	 s = at[j];
			char	*e = memchr(buf + s, '\n', win - s);
			size_t	 len = (size_t)(e - (buf + s));
			cJSON	*r;
			char	 why[8];

			if (len >= 3 && memcmp(buf + s, "\xef\xbb\xbf", 3) == 0) {
				s += 3;
				len -= 3;
			}
			while (len > 0 && (buf[s + len - 1] == '\r'))
				len--;
			if (len == 0)
				continue;	/* blank: not a record */
			if (j == first)
				from = base + at[j];
			if (project_json_check(buf + s, len, why,
			    sizeof(why)) != 0 || (r = cJSON_ParseWithLength(
			    buf + s, len)) == NULL) {
				skipped++;
				continue;
			}
			if (!cJSON_IsString(cJSON_GetObjectItemCaseSensitive(r,
			    "type")) || *cJSON_GetObjectItemCaseSensitive(r,
			    "type")->valuestring == '\0') {
				cJSON_Delete(r);
				skipped++;
				continue;
			}
			cJSON_AddItemToArray(recs, r);
			cJSON_AddItemToArray(offs,
			    cJSON_CreateNumber((double)(base + at[j])));
		}
	}
	cJSON_AddNumberToObject(o, "size", (double)st.st_size);
	cJSON_AddNumberToObject(o, "from", (double)(cJSON_GetArraySize(recs) ?
	    from : (uint64_t)st.st_size));
	cJSON_AddBoolToObject(o, "truncated", cJSON_GetArraySize(recs) ?
	    from > 0 : st.st_size > 0);
	cJSON_AddNumberToObject(o, "skipped", (double)skipped);
	free(at);
	free(buf);
	close(fd);
	return o;
nomem:
	call_fail(c, "out of memory reading %s", path);
fail:
	free(at);
	free(buf);
	if (fd >= 0)
		close(fd);
	cJSON_Delete(o);
	return NULL;
}

static void
tool_get_ledger(struct call *c)
{
	static const char *const known[] = { "records", "fixes", NULL };
	char	 path[PATH_MAX];
	long	 records = 50, fixes = 20;
	cJSON	*perf, *fx;

	if (args_known(c, known) || arg_int(c, "records", 0, 1000, &records) ||
	    arg_int(c, "fixes", 0, 1000, &fixes))
		return;
	if (project_path(c->m->project, "perf.jsonl", path, sizeof(path))) {
		call_fail(c, "the project path is too long");
		return;
	}
	if ((perf = tail_json(c, path, records)) == NULL)
		return;
	project_path(c->m->project, "fixes.jsonl", path, sizeof(path));
	if ((fx = tail_json(c, path, fixes)) == NULL) {
		cJSON_Delete(perf);
		return;
	}
	c->out = cJSON_CreateObject();
	cJSON_AddNumberToObject(c->out, "v", 1);
	cJSON_AddItemToObject(c->out, "perf", perf);
	cJSON_AddItemToObject(c->out, "fixes", fx);
}

/* --- get_status ------------------------------------------------------- */

/*
 * GET path from the daemon, HTTP/1.0 (one answer, then the close: no
 * chunks, no keep-alive), with one deadline for all of it.  0 with
 * *body (malloc'd, NUL-terminated) and *code, or -errno with err.
 */
static int
http_get(const struct watch_addr *a, const char *path, char **body,
    int *code, char *err, size_t ecap)
{
	struct addrinfo	 hints = { 0 }, *res = NULL, *ai;
	char		 port[16], req[2048], *buf = NULL, *p;
	size_t		 len = 0, cap = 0;
	int		 fd = -1, rc, v6 = strchr(a->host, ':') != NULL;
	struct timespec	 t0, t;
	struct pollfd	 pf;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	snprintf(port, sizeof(port), "%d", a->port);
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_NUMERICSERV;
	if ((rc = getaddrinfo(a->host, port, &hints, &res)) != 0) {
		snprintf(err, ecap, "%.200s: %s", a->host, gai_strerror(rc));
		return -EHOSTUNREACH;
	}
	for (ai = res; ai != NULL; ai = ai->ai_next) {
		if ((fd = socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK |
		    SOCK_CLOEXEC, ai->ai_protocol)) < 0)
			continue;
		if (connect(fd, ai->ai_addr, ai->ai_addrlen) == 0 ||
		    errno == EINPROGRESS) {
			int		e = 0;
			socklen_t	el = sizeof(e);

			pf.fd = fd;
			pf.events = POLLOUT;
			if (poll(&pf, 1, STATUS_TIMEOUT_MS) == 1 &&
			    getsockopt(fd, SOL_SOCKET, SO_ERROR, &e, &el) == 0 &&
			    e == 0)
				break;
		}
		close(fd);
		fd = -1;
	}
	freeaddrinfo(res);
	if (fd < 0) {
		snprintf(err, ecap, "cannot connect to %s%.200s%s:%d", v6 ? "[" :
		    "", a->host, v6 ? "]" : "", a->port);
		return -ECONNREFUSED;
	}
	snprintf(req, sizeof(req), "GET %s HTTP/1.0\r\nHost: %s%s%s:%d\r\n"
	    "Accept: application/json\r\n\r\n", path, v6 ? "[" : "", a->host,
	    v6 ? "]" : "", a->port);
	if (send(fd, req, strlen(req), MSG_NOSIGNAL) != (ssize_t)strlen(req)) {
		snprintf(err, ecap, "cannot send the request: %s",
		    strerror(errno));
		close(fd);
		return -EIO;
	}
	for (;;) {
		long	left;
		ssize_t	r;

		clock_gettime(CLOCK_MONOTONIC, &t);
		left = STATUS_TIMEOUT_MS - ((t.tv_sec - t0.tv_sec) * 1000 +
		    (t.tv_nsec - t0.tv_nsec) / 1000000);
		pf.fd = fd;
		pf.events = POLLIN;
		if (left <= 0 || poll(&pf, 1, (int)left) != 1) {
			snprintf(err, ecap, "no answer within %d ms",
			    STATUS_TIMEOUT_MS);
			rc = -ETIMEDOUT;
			goto out;
		}
		if (len + 65536 + 1 > cap) {
			char	*nb;

			cap = cap ? cap * 2 : 131072;
			if (cap > 16 * 1024 * 1024 ||
			    (nb = realloc(buf, cap)) == NULL) {
				snprintf(err, ecap, "the answer is too large");
				rc = -E2BIG;
				goto out;
			}
			buf = nb;
		}
		r = recv(fd, buf + len, cap - len - 1, 0);
		if (r < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (r < 0) {
			snprintf(err, ecap, "reading the answer: %s",
			    strerror(errno));
			rc = -EIO;
			goto out;
		}
		if (r == 0)
			break;
		len += (size_t)r;
	}
	buf[len] = '\0';
	if (sscanf(buf, "HTTP/%*d.%*d %d", code) != 1 ||
	    (p = strstr(buf, "\r\n\r\n")) == NULL) {
		snprintf(err, ecap, "not an HTTP answer");
		rc = -EPROTO;
		goto out;
	}
	if ((*body = strdup(p + 4)) == NULL) {
		rc = -ENOMEM;
		goto out;
	}
	rc = 0;
out:
	free(buf);
	close(fd);
	return rc;
}

static void
tool_get_status(struct call *c)
{
	static const char *const known[] = { NULL };
	struct watch_addr		 a;
	char				 file[PATH_MAX + 16], err[3 * PATH_MAX] = "";
	char				*body = NULL;
	const char			*why = NULL;
	int				 rc, code = 0;
	struct ledger_opts		 o = { 0 };
	struct ledger			*l = NULL;
	struct project_fold_info	 fi;
	struct ledger_counts		 n;
	cJSON				*files, *st;

	if (args_known(c, known))
		return;
	if (c->m->daemon_url != NULL) {
		rc = watch_url_parse(c->m->daemon_url, &a);
		snprintf(file, sizeof(file), "--daemon %s", c->m->daemon_url);
	} else
		rc = watch_daemon_find(c->m->project, &a, file, sizeof(file),
		    &why);
	if (rc == 0 && (rc = http_get(&a, "/api/sloptimize/status", &body,
	    &code, err, sizeof(err))) == 0) {
		st = code == 200 ? cJSON_Parse(body) : NULL;
		free(body);
		if (cJSON_IsObject(st)) {
			c->out = cJSON_CreateObject();
			cJSON_AddStringToObject(c->out, "source", "daemon");
			cJSON_AddItemToObject(c->out, "daemon", st);
			return;
		}
		cJSON_Delete(st);
		snprintf(err, sizeof(err), "the daemon answered %d", code);
	} else if (rc == -ENOENT)
		snprintf(err, sizeof(err), "no daemon serves the project (no "
		    "%s): start one with sloptimized --project %s", file,
		    c->m->project);
	else if (*err == '\0')
		snprintf(err, sizeof(err), "%s: %s", file, why ? why :
		    strerror(-rc));
	/* no daemon to ask: what the files say */
	c->out = cJSON_CreateObject();
	cJSON_AddStringToObject(c->out, "source", "files");
	cJSON_AddStringToObject(c->out, "why", err);
	cJSON_AddNullToObject(c->out, "daemon");
	o.from_ms = o.to_ms = LEDGER_NO_TIME;
	rc = project_fold(c->m->project, &o, &l, &fi);
	files = cJSON_AddObjectToObject(c->out, "files");
	cJSON_AddStringToObject(files, "perf", fi.perf);
	cJSON_AddStringToObject(files, "fixes", fi.fixes);
	if (rc == 0) {
		ledger_counts(l, &n);
		cJSON_AddTrueToObject(files, "ledger");
		cJSON_AddNumberToObject(files, "bytes", (double)fi.bytes);
		cJSON_AddNumberToObject(files, "partialBytes",
		    (double)fi.partial);
		cJSON_AddBoolToObject(files, "haveFixes", fi.have_fixes);
		st = cJSON_AddObjectToObject(c->out, "counts");
		cJSON_AddNumberToObject(st, "lines", (double)n.lines);
		cJSON_AddNumberToObject(st, "folded", (double)n.folded);
		cJSON_AddNumberToObject(st, "incidents", (double)n.incidents);
		cJSON_AddNumberToObject(st, "fixes", (double)n.fixes);
		cJSON_AddNumberToObject(st, "skipped", (double)n.skipped);
		cJSON_AddNumberToObject(st, "rows", (double)n.rows);
		cJSON_AddNumberToObject(st, "builds", (double)n.builds);
		cJSON_AddItemToObject(c->out, "skipped", ledger_skipped_json(l));
	} else {
		cJSON_AddFalseToObject(files, "ledger");
		cJSON_AddStringToObject(files, "error", rc == -ENOENT ?
		    "no perf.jsonl yet: the game's runtime writes it" :
		    project_strerror(rc));
	}
	ledger_destroy(l);
}

/* --- record_fix, propose_fix ----------------------------------------- */

static void
fix_tool(struct call *c, const char *status)
{
	static const char *const known[] = { "title", "footprints", "issue",
		"solution", "commit", "files", "before", "after", "force",
		NULL };
	struct cli_fix	 f = { .status = status };
	char		 why[PROJECT_WHY_MAX + 64];
	int		 rc;

	if (args_known(c, known) || arg_str(c, "title", 1, &f.title) ||
	    arg_list(c, "footprints", 1, &f.footprints) ||
	    arg_str(c, "issue", 0, &f.issue) ||
	    arg_str(c, "solution", 0, &f.solution) ||
	    arg_str(c, "commit", 0, &f.commit) ||
	    arg_list(c, "files", 0, &f.files) ||
	    arg_str(c, "before", 0, &f.before) ||
	    arg_str(c, "after", 0, &f.after) ||
	    arg_bool(c, "force", &f.force))
		return;
	if (*f.title == '\0') {
		call_fail(c, "title is required");
		return;
	}
	f.gone = &c->cancelled;
	if ((rc = cli_fix_record(c->m->project, &f, &c->out, why,
	    sizeof(why))) != 0)
		call_fail(c, "%s%s", why, rc == -EINVAL && strstr(why,
		    "force records") ? "; pass \"force\": true to record it" :
		    "");
}

static void
tool_record_fix(struct call *c)
{
	fix_tool(c, "applied");
}

static void
tool_propose_fix(struct call *c)
{
	fix_tool(c, "proposed");
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
	if (*c->err == '\0') {
		c->out = cJSON_CreateObject();
		cJSON_AddItemToObject(c->out, "wakes", c->wakes);
		c->wakes = NULL;
		if (m->wst.have_last) {
			watch_id_format(&m->wst.last, id, sizeof(id));
			cJSON_AddStringToObject(c->out, "next", id);
		} else if (c->have_since) {
			watch_id_format(&c->since, id, sizeof(id));
			cJSON_AddStringToObject(c->out, "next", id);
		} else
			cJSON_AddNullToObject(c->out, "next");
		cJSON_AddBoolToObject(c->out, "timedOut", timed_out);
		cJSON_AddBoolToObject(c->out, "connected", c->connected ||
		    m->watch.connected);
		cJSON_AddStringToObject(c->out, "daemon", m->watch.where);
		cJSON_AddStringToObject(c->out, "said", m->watch.said);
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
		call_fail(m->waiting, "the events socket failed: %s (%s)",
		    strerror(-rc), w->said);
		wait_end(m, 0);
	}
}

static void
tool_wait_for_wake(struct call *c)
{
	static const char *const known[] = { "since", "timeout_ms", "max",
		NULL };
	struct mcp		*m = c->m;
	struct watch_addr	 a;
	const char		*since, *why = NULL;
	char			 file[PATH_MAX + 16];
	long			 timeout = 30000;
	int			 rc;

	c->max = 20;
	if (args_known(c, known) || arg_str(c, "since", 0, &since) ||
	    arg_int(c, "timeout_ms", 0, 600000, &timeout) ||
	    arg_int(c, "max", 1, 1000, &c->max))
		goto fail;
	if (since != NULL) {
		if (watch_id_parse(since, strlen(since), &c->since) != 0) {
			call_fail(c, "since is a wake id, <generation>:<offset> "
			    "(the id= of a wake line, or next), not '%s'",
			    since);
			goto fail;
		}
		c->have_since = 1;
	}
	if (m->waiting != NULL) {
		call_fail(c, "another wait_for_wake is already waiting; cancel "
		    "it or wait for its answer");
		goto fail;
	}
	if (m->daemon_url == NULL && (rc = watch_daemon_find(m->project, &a,
	    file, sizeof(file), &why)) != 0) {
		if (rc == -ENOENT)
			call_fail(c, "no daemon serves %s (no %s): start one "
			    "with 'sloptimized --project %s'; its wakes are "
			    "what this waits for", m->project, file, m->project);
		else
			call_fail(c, "cannot use %s: %s", file, why ? why :
			    strerror(-rc));
		goto fail;
	}
	if (!m->watch_open) {
		m->watch.project = m->project;
		m->watch.daemon_url = m->daemon_url;
		m->watch.st = &m->wst;
		m->watch.fatal = on_watch_fatal;
		m->watch.data = m;
		if (watch_client_open(&m->watch, &m->loop) != 0) {
			call_fail(c, "%s", m->watch.said);
			goto fail;
		}
		m->watch_open = 1;
	}
	if ((c->wakes = cJSON_CreateArray()) == NULL)
		goto fail;
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
	return;
fail:
	call_finish(c);
}

/* --- the tools ---------------------------------------------------------- */

#define FILTER_PROPS \
	"\"from\":{\"type\":\"string\",\"description\":\"ISO-8601: count only occurrences from this time\"}," \
	"\"to\":{\"type\":\"string\",\"description\":\"ISO-8601: count only occurrences up to this time\"}," \
	"\"include_automated\":{\"type\":\"boolean\",\"description\":\"include robots' records (automated: true); default false\"}"

#define STATUS_ENUM "[\"open\",\"pending\",\"fixed\",\"regressed\"]"

#define FIX_INPUT \
	"{\"type\":\"object\",\"additionalProperties\":false,\"required\":[\"title\"],\"properties\":{" \
	"\"title\":{\"type\":\"string\",\"minLength\":1,\"description\":\"what was changed, in a few words\"}," \
	"\"footprints\":{\"type\":\"array\",\"items\":{\"type\":\"string\",\"pattern\":\"^[0-9a-fA-F]{8}$\"},\"description\":\"the footprint ids this addresses (each must be in the ledger)\"}," \
	"\"issue\":{\"type\":\"string\",\"description\":\"the problem, as seen\"}," \
	"\"solution\":{\"type\":\"string\",\"description\":\"what the change does about it\"}," \
	"\"commit\":{\"type\":\"string\",\"description\":\"the commit that carries the change\"}," \
	"\"files\":{\"type\":\"array\",\"items\":{\"type\":\"string\"},\"description\":\"the files changed\"}," \
	"\"before\":{\"type\":\"string\",\"description\":\"the before window: a build name or <ISO>..<ISO>; default the latest build with heartbeats\"}," \
	"\"after\":{\"type\":\"string\",\"description\":\"only for a build that really ran the change: a build name or <ISO>..<ISO>; leave it out and the fix is pending until a build after it has run\"}," \
	"\"force\":{\"type\":\"boolean\",\"description\":\"record footprints the ledger has never seen (a typo is refused otherwise)\"}}}"

#define FIX_OUTPUT \
	"{\"type\":\"object\",\"required\":[\"type\",\"id\",\"at\",\"status\",\"title\",\"footprints\"],\"properties\":{" \
	"\"type\":{\"const\":\"fix\"},\"id\":{\"type\":\"string\"},\"at\":{\"type\":\"string\"}," \
	"\"status\":{\"enum\":[\"applied\",\"proposed\"]},\"title\":{\"type\":\"string\"}," \
	"\"footprints\":{\"type\":\"array\",\"items\":{\"type\":\"string\"}}," \
	"\"before\":{\"type\":[\"object\",\"null\"]},\"after\":{\"type\":[\"object\",\"null\"]}}}"

static const struct tool tools[] = {
	{ "get_issues", "The issue catalogue",
	  "The issue catalogue of the game's stutters: one row per footprint "
	  "(the identity of a cause) with count, first/last seen, builds, the "
	  "worst value, the last verdict and its evidence, the situation, the "
	  "fixes naming it and its status: open, pending (a fix waits for a "
	  "build after it to run), fixed, or regressed. Most frequent first. "
	  "The same fold as `sloptimize issues --json`.",
	  "{\"type\":\"object\",\"additionalProperties\":false,\"properties\":{"
	  "\"type\":{\"type\":\"string\",\"description\":\"only rows of this record type: hitch, usermark, jitter, …\"},"
	  "\"status\":{\"enum\":" STATUS_ENUM ",\"description\":\"only rows with this status\"},"
	  "\"limit\":{\"type\":\"integer\",\"minimum\":0,\"maximum\":100000,\"description\":\"at most this many rows (default 50; 0: all)\"},"
	  FILTER_PROPS "}}",
	  "{\"type\":\"object\",\"required\":[\"v\",\"counts\",\"issues\"],\"properties\":{"
	  "\"v\":{\"const\":1},\"counts\":{\"type\":\"object\"},\"issues\":{\"type\":\"array\",\"items\":{"
	  "\"type\":\"object\",\"required\":[\"id\",\"key\",\"type\",\"count\",\"status\",\"fixes\"],\"properties\":{"
	  "\"id\":{\"type\":\"string\"},\"count\":{\"type\":\"integer\"},\"status\":{\"enum\":" STATUS_ENUM "}}}},"
	  "\"skipped\":{\"type\":\"array\"},\"source\":{\"type\":\"object\"}}}",
	  1, tool_get_issues, NULL },
	{ "get_issue", "One issue",
	  "One footprint: its catalogue row (with every fix and proposal "
	  "naming it, and how each is judged) and its occurrences in file "
	  "order (at, build, value, verdict, byte offset), the last ones kept. "
	  "Read it before acting on an issue: do not retry what a fix there "
	  "already tried.",
	  "{\"type\":\"object\",\"additionalProperties\":false,\"required\":[\"id\"],\"properties\":{"
	  "\"id\":{\"type\":\"string\",\"pattern\":\"^[0-9a-fA-F]{8}$\",\"description\":\"the footprint id (fp= in a wake line)\"},"
	  "\"occurrences\":{\"type\":\"integer\",\"minimum\":0,\"maximum\":100000,\"description\":\"keep the last N occurrences (default 50)\"},"
	  FILTER_PROPS "}}",
	  "{\"type\":\"object\",\"required\":[\"v\",\"issue\",\"occurrences\",\"occurrencesTotal\"],\"properties\":{"
	  "\"issue\":{\"type\":\"object\",\"required\":[\"id\",\"status\",\"fixes\",\"proposals\"],\"properties\":{\"status\":{\"enum\":" STATUS_ENUM "}}},"
	  "\"occurrences\":{\"type\":\"array\",\"items\":{\"type\":\"object\"}},\"occurrencesTotal\":{\"type\":\"integer\"}}}",
	  1, tool_get_issue, NULL },
	{ "get_history", "The timeline",
	  "The ledger's time span in equal buckets: per bucket the medians of "
	  "the heartbeats (frame p95 and median, draw calls, triangles, "
	  "programs), the hitch count and worst hitch, and the builds that ran; "
	  "then one measured window per build. A bucket without evidence is "
	  "null, never zero.",
	  "{\"type\":\"object\",\"additionalProperties\":false,\"properties\":{"
	  "\"buckets\":{\"type\":\"integer\",\"minimum\":1,\"maximum\":1000,\"description\":\"how many buckets (default 24)\"},"
	  "\"include_automated\":{\"type\":\"boolean\",\"description\":\"include robots' records\"}}}",
	  "{\"type\":\"object\",\"required\":[\"v\",\"buckets\",\"builds\"],\"properties\":{"
	  "\"buckets\":{\"type\":\"array\",\"items\":{\"type\":\"object\"}},\"builds\":{\"type\":\"array\",\"items\":{\"type\":\"object\"}}}}",
	  1, tool_get_history, NULL },
	{ "get_ledger", "The ledger's tail",
	  "The last records of perf.jsonl and fixes.jsonl as written (unknown "
	  "fields kept), whole lines only, with each record's byte offset (the "
	  "offset in a wake id). Bounded: at most 1000 of each.",
	  "{\"type\":\"object\",\"additionalProperties\":false,\"properties\":{"
	  "\"records\":{\"type\":\"integer\",\"minimum\":0,\"maximum\":1000,\"description\":\"the last N records of perf.jsonl (default 50)\"},"
	  "\"fixes\":{\"type\":\"integer\",\"minimum\":0,\"maximum\":1000,\"description\":\"the last N records of fixes.jsonl (default 20)\"}}}",
	  "{\"type\":\"object\",\"required\":[\"v\",\"perf\",\"fixes\"],\"properties\":{"
	  "\"perf\":{\"$ref\":\"#/$defs/tail\"},\"fixes\":{\"$ref\":\"#/$defs/tail\"}},"
	  "\"$defs\":{\"tail\":{\"type\":\"object\",\"required\":[\"path\",\"size\",\"from\",\"truncated\",\"records\",\"offsets\",\"skipped\"],"
	  "\"properties\":{\"records\":{\"type\":\"array\",\"items\":{\"type\":\"object\"}},\"offsets\":{\"type\":\"array\",\"items\":{\"type\":\"integer\"}}}}}}",
	  1, tool_get_ledger, NULL },
	{ "get_status", "The daemon's status",
	  "What the daemon serving this project says about itself (watched "
	  "files, watcher backend, cursor, lag, skipped lines with offsets, "
	  "notifier, subscribers); when no daemon runs, what the files say "
	  "(the ledger's size, counts and skipped lines) and why there is no "
	  "daemon.",
	  "{\"type\":\"object\",\"additionalProperties\":false,\"properties\":{}}",
	  "{\"type\":\"object\",\"required\":[\"source\",\"daemon\"],\"properties\":{"
	  "\"source\":{\"enum\":[\"daemon\",\"files\"]},\"daemon\":{\"type\":[\"object\",\"null\"]},"
	  "\"why\":{\"type\":\"string\"},\"files\":{\"type\":\"object\"},\"counts\":{\"type\":\"object\"},\"skipped\":{\"type\":\"array\"}}}",
	  1, tool_get_status, NULL },
	{ "record_fix", "Record a fix",
	  "Append a fix to fixes.jsonl, the same record and checks as "
	  "`sloptimize fix`. Call it after the change is made, with the "
	  "footprints it addresses: it is pending until a build that started "
	  "after it has run, then the fold measures that build as its after "
	  "window and judges it fixed or regressed. Never claim the fix "
	  "worked before that. A footprint the ledger has never seen is "
	  "refused with the nearest known ids.",
	  FIX_INPUT, FIX_OUTPUT, 0, tool_record_fix, NULL },
	{ "propose_fix", "Propose a fix",
	  "Append a proposal to fixes.jsonl (`sloptimize fix propose`): a fix "
	  "the human merges or rejects in the panel. It does not count as a "
	  "fix until merged. Same fields and checks as record_fix.",
	  FIX_INPUT, FIX_OUTPUT, 0, tool_propose_fix, NULL },
	{ "wait_for_wake", "Wait for the next wake",
	  "Block until the daemon's next wake event (a hitch of 100 ms or "
	  "more, a usermark the player pressed, a jitter) or the timeout, "
	  "then return the wakes (the daemon's messages, each with its line "
	  "and record) and `next`, the id to pass as `since` next time so "
	  "nothing is missed or repeated. The push channel for an agent "
	  "without a monitor. Wakes arriving within 50 ms of the first come "
	  "back together.",
	  "{\"type\":\"object\",\"additionalProperties\":false,\"properties\":{"
	  "\"since\":{\"type\":\"string\",\"pattern\":\"^[0-9]+:[0-9]+$\",\"description\":\"only wakes after this id (next from the last call, or id= of a wake line); the daemon replays those it still holds\"},"
	  "\"timeout_ms\":{\"type\":\"integer\",\"minimum\":0,\"maximum\":600000,\"description\":\"give up after this long (default 30000); keep it under the client's request timeout\"},"
	  "\"max\":{\"type\":\"integer\",\"minimum\":1,\"maximum\":1000,\"description\":\"at most this many wakes (default 20)\"}}}",
	  "{\"type\":\"object\",\"required\":[\"wakes\",\"next\",\"timedOut\",\"connected\"],\"properties\":{"
	  "\"wakes\":{\"type\":\"array\",\"items\":{\"type\":\"object\",\"required\":[\"type\"],\"properties\":{\"type\":{\"const\":\"wake\"}}}},"
	  "\"next\":{\"type\":[\"string\",\"null\"]},\"timedOut\":{\"type\":\"boolean\"},\"connected\":{\"type\":\"boolean\"},"
	  "\"daemon\":{\"type\":\"string\"},\"said\":{\"type\":\"string\"}}}",
	  1, NULL, tool_wait_for_wake },
};

#define NTOOLS	(sizeof(tools) / sizeof(tools[0]))

static cJSON *
tools_list(const struct mcp *m)
{
	cJSON	*r = cJSON_CreateObject(), *a, *t, *an;
	size_t	 i;

	a = cJSON_AddArrayToObject(r, "tools");
	for (i = 0; i < NTOOLS; i++) {
		t = cJSON_CreateObject();
		cJSON_AddItemToArray(a, t);
		cJSON_AddStringToObject(t, "name", tools[i].name);
		if (m->structured)
			cJSON_AddStringToObject(t, "title", tools[i].title);
		cJSON_AddStringToObject(t, "description", tools[i].description);
		cJSON_AddItemToObject(t, "inputSchema",
		    cJSON_Parse(tools[i].input));
		if (m->structured)
			cJSON_AddItemToObject(t, "outputSchema",
			    cJSON_Parse(tools[i].output));
		if (m->annotated) {
			an = cJSON_AddObjectToObject(t, "annotations");
			cJSON_AddBoolToObject(an, "readOnlyHint",
			    tools[i].read_only);
			if (!tools[i].read_only) {
				/* appends; never changes or removes */
				cJSON_AddFalseToObject(an, "destructiveHint");
				cJSON_AddFalseToObject(an, "idempotentHint");
			}
			cJSON_AddFalseToObject(an, "openWorldHint");
		}
	}
	return r;
}

/* --- the thread pool ------------------------------------------------------ */

static void
on_work(uv_work_t *w)
{
	struct call	*c = w->data;

	if (!atomic_load(&c->cancelled))
		c->tool->pool(c);
}

static void
after_work(uv_work_t *w, int status)
{
	struct call	*c = w->data;

	(void)status;
	call_finish(c);
}

static int64_t
now_ms(void)
{
	struct timespec	ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
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
	for (i = 0; i < NTOOLS; i++)
		if (strcmp(name, tools[i].name) == 0)
			break;
	if (i == NTOOLS) {
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
	c->tool = &tools[i];
	c->now_ms = now_ms();
	c->next = m->calls;
	m->calls = c;
	if (args == NULL || cJSON_IsNull(args))
		c->args = cJSON_CreateObject();
	else if (cJSON_IsObject(args))
		c->args = cJSON_Duplicate(args, 1);
	else {
		c->args = cJSON_CreateObject();
		call_fail(c, "arguments is an object of named arguments");
		call_finish(c);
		return;
	}
	if (c->tool->loop != NULL) {
		c->tool->loop(c);
		return;
	}
	c->work.data = c;
	if (uv_queue_work(&m->loop, &c->work, on_work, after_work) != 0) {
		call_fail(c, "cannot queue the work");
		call_finish(c);
	}
}

/* --- the protocol --------------------------------------------------------- */

static int
same_id(const cJSON *a, const cJSON *b)
{
	if (cJSON_IsString(a) && cJSON_IsString(b))
		return strcmp(a->valuestring, b->valuestring) == 0;
	if (cJSON_IsNumber(a) && cJSON_IsNumber(b))
		return a->valuedouble == b->valuedouble;
	return 0;
}

/* notifications/cancelled: no answer for that request, ever; a fold in
 * hand finishes unseen, a fix not yet written is not written. */
static void
cancel(struct mcp *m, const cJSON *params)
{
	const cJSON	*rid = cJSON_GetObjectItemCaseSensitive(params,
			    "requestId");
	struct call	*c;

	for (c = m->calls; c != NULL; c = c->next)
		if (same_id(c->id, rid)) {
			atomic_store(&c->cancelled, 1);
			if (c == m->waiting)
				wait_end(m, 0);
			return;
		}
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

/* One line from the client. */
static void
message(struct mcp *m, const char *line, size_t len)
{
	cJSON		*msg = cJSON_ParseWithLength(line, len);
	const cJSON	*id, *params, *jv;
	const char	*method;

	if (msg == NULL) {
		send_error(m, NULL, RPC_PARSE, "Parse error: the line is not "
		    "JSON");
		return;
	}
	if (cJSON_IsArray(msg)) {
		send_error(m, NULL, RPC_INVALID, "Invalid Request: batches are "
		    "not part of this protocol revision; send one message per "
		    "line");
		goto out;
	}
	if (!cJSON_IsObject(msg)) {
		send_error(m, NULL, RPC_INVALID, "Invalid Request: a message is "
		    "a JSON object");
		goto out;
	}
	id = cJSON_GetObjectItemCaseSensitive(msg, "id");
	/* an id we can answer with: a string or a whole number */
	if (id != NULL && !cJSON_IsString(id) && !(cJSON_IsNumber(id) &&
	    id->valuedouble == (double)(int64_t)id->valuedouble)) {
		send_error(m, NULL, RPC_INVALID, "Invalid Request: id is a "
		    "string or an integer");
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
			cancel(m, params);
		goto out;
	}
	request(m, method, id, params);
out:
	cJSON_Delete(msg);
}

/* --- reading ---------------------------------------------------------------- */

/* Bytes from stdin: split into lines (a CR before the LF is dropped). */
static void
feed(struct mcp *m, const char *p, size_t n)
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
		feed(m, b->base, (size_t)n);
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
		feed(m, m->in_buf, (size_t)n);
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
	if ((rc = uv_loop_init(&m->loop)) != 0) {
		fprintf(stderr, "sloptimize mcp: %s\n", uv_strerror(rc));
		free(m);
		return EXIT_FINDINGS;
	}
	uv_timer_init(&m->loop, &m->wait_timer);
	uv_timer_init(&m->loop, &m->gather_timer);
	m->wait_timer.data = m->gather_timer.data = m;
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
