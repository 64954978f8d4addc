/*
 * fuzz_mcp — bytes as a client would write them to `sloptimize mcp`'s
 * stdin, through the server itself (cli/mcp.c: mcp_feed, the lines, the
 * protocol, and every tool on a small project of its own: the folds, the
 * fix writers, wait_for_wake and get_status with no daemon to find).  If
 * the first byte is odd, an initialize request goes first, so most inputs
 * reach the tools.
 *
 * What must hold for any input: every line the server writes is exactly
 * one valid JSON-RPC 2.0 message — strict JSON text (the fold's scanner
 * and refjson.c both accept it: UTF-8, no raw control byte), an object
 * with "jsonrpc": "2.0", an "id" that is a string, a number or null, and
 * exactly one of "result" or "error" (an error with an integer code and a
 * string message), nothing else; a numeric id is written as the request
 * wrote it (its text is in the input: 9007199254740991 must not come back
 * as 9.00719925474099e+15); no more answers than lines.  And no crash, no
 * undefined behaviour (UBSan: a cast of "id": 8.4e52 to an integer).
 */
#include <sys/stat.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "cli/mcp.h"
#include "cli/mcp_tools.h"
#include "ledger/jscan.h"
#include "refjson.h"

int	LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);

static char	project[256], fixes[300];
static const unsigned char *input;
static size_t	input_len, answers;

static void
fail(const char *what, const char *line, size_t n)
{
	fprintf(stderr, "fuzz_mcp: %s: '%.*s'\n", what, (int)(n > 600 ? 600 :
	    n), line);
	abort();
}

static void
setup(void)
{
	char	path[400], state[300];
	FILE	*f;

	snprintf(project, sizeof(project), "%s/fuzz-mcp.XXXXXX",
	    getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (mkdtemp(project) == NULL)
		abort();
	/* no daemon to find, whatever runs on this machine */
	snprintf(state, sizeof(state), "%s/state", project);
	setenv("XDG_STATE_HOME", state, 1);
	snprintf(path, sizeof(path), "%s/.sloptimize", project);
	if (mkdir(path, 0755) != 0)
		abort();
	snprintf(path, sizeof(path), "%s/.sloptimize/perf.jsonl", project);
	if ((f = fopen(path, "w")) == NULL)
		abort();
	fputs("{\"type\":\"heartbeat\",\"at\":\"2026-09-01T09:00:00.000Z\","
	    "\"build\":\"b1\",\"frame\":{\"p95Ms\":16.5,\"medianMs\":8}}\n"
	    "{\"type\":\"hitch\",\"at\":\"2026-09-01T09:00:01.000Z\","
	    "\"build\":\"b1\",\"phase\":\"play\",\"frameMs\":141.2,"
	    "\"minted\":[\"mat_1@obj\"],\"classification\":{\"guess\":"
	    "\"shader-compile\",\"confidence\":\"high\"}}\n", f);
	fclose(f);
	snprintf(fixes, sizeof(fixes), "%s/.sloptimize/fixes.jsonl", project);
}

static int
number_in_input(const char *p, size_t n)
{
	size_t	i;

	for (i = 0; i + n <= input_len; i++)
		if (memcmp(input + i, p, n) == 0)
			return 1;
	return 0;
}

static void
check(void *arg, const char *line, size_t n)
{
	struct jscan_result	 r;
	struct jspan		 obj, idt;
	cJSON			*o;
	const cJSON		*it, *id, *res, *err, *code, *msg;
	int			 members = 0;

	(void)arg;
	answers++;
	if (memchr(line, '\n', n) != NULL)
		fail("a newline inside a message", line, n);
	if (jscan_object(line, n, &r) != 0 || !refjson_object(line, n))
		fail("not strict JSON text", line, n);
	if ((o = cJSON_ParseWithLength(line, n)) == NULL)
		return;		/* out of memory */
	cJSON_ArrayForEach(it, o)
		members++;
	id = cJSON_GetObjectItemCaseSensitive(o, "id");
	res = cJSON_GetObjectItemCaseSensitive(o, "result");
	err = cJSON_GetObjectItemCaseSensitive(o, "error");
	if (!cJSON_IsString(cJSON_GetObjectItemCaseSensitive(o, "jsonrpc")) ||
	    strcmp(cJSON_GetObjectItemCaseSensitive(o, "jsonrpc")->valuestring,
	    "2.0") != 0)
		fail("jsonrpc is not \"2.0\"", line, n);
	if (id == NULL || !(cJSON_IsString(id) || cJSON_IsNumber(id) ||
	    cJSON_IsNull(id)))
		fail("no id, or one that is no id", line, n);
	if ((res == NULL) == (err == NULL) || members != 3)
		fail("not exactly one of result and error", line, n);
	if (err != NULL) {
		code = cJSON_GetObjectItemCaseSensitive(err, "code");
		msg = cJSON_GetObjectItemCaseSensitive(err, "message");
		if (!cJSON_IsNumber(code) || code->valuedouble !=
		    (double)(int)code->valuedouble || !cJSON_IsString(msg))
			fail("an error without an integer code and a message",
			    line, n);
	}
	if (cJSON_IsNumber(id)) {
		obj.p = line;
		obj.n = (uint32_t)n;
		obj.kind = J_OBJECT;
		obj.escaped = 0;
		idt = jscan_get(obj, "id");
		if (idt.kind != J_NUMBER || (!number_in_input(idt.p, idt.n) &&
		    !(idt.n == 1 && idt.p[0] == '0')))	/* initialize's */
			fail("a numeric id not as the request wrote it", line,
			    n);
	}
	cJSON_Delete(o);
}

int
LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
	static const char init[] = "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":"
	    "\"initialize\",\"params\":{\"protocolVersion\":\"2025-11-25\","
	    "\"capabilities\":{},\"clientInfo\":{\"name\":\"f\",\"version\":"
	    "\"0\"}}}\n";
	struct mcp	*m;
	size_t		 lines = 0, i;

	if (project[0] == '\0')
		setup();
	if (size < 1)
		return 0;
	if ((m = calloc(1, sizeof(*m))) == NULL)
		return 0;
	if (mcp_open(m, project, mcp_tools, mcp_ntools) != 0) {
		free(m);
		return 0;
	}
	m->emit = check;
	answers = 0;
	input = data + 1;
	input_len = size - 1;
	if (data[0] & 1) {
		mcp_feed(m, init, sizeof(init) - 1);
		lines++;
	}
	mcp_feed(m, (const char *)data + 1, size - 1);
	mcp_feed(m, "\n", 1);		/* a last line without its newline */
	for (i = 1; i < size; i++)
		lines += data[i] == '\n';
	lines++;
	mcp_close(m);
	if (m->calls != NULL)
		fail("a call still in hand after the loop ran out", "", 0);
	if (answers > lines)
		fail("more answers than lines", "", 0);
	free(m);
	unlink(fixes);		/* what a forced record_fix wrote */
	return 0;
}
