/*
 * mcp_call — a tool call's arguments and its failure (see mcp_call.h):
 * what every tool of cli/mcp_tools.c and the server's own checks use to
 * read arguments the same way and to say what is wrong with them.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "cli/mcp_call.h"
#include "ledger/footprint.h"
#include "ledger/ledger.h"

/* --- failure --------------------------------------------------------- */

void
mcp_call_fail(struct mcp_call *c, const char *fmt, ...)
{
	va_list	ap;

	va_start(ap, fmt);
	vsnprintf(c->err, sizeof(c->err), fmt, ap);
	va_end(ap);
}

/* --- arguments ------------------------------------------------------------- */

/* Unknown arguments are refused, so that a typo is not silently ignored. */
int
mcp_args_known(struct mcp_call *c, const char *const *known)
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
		mcp_call_fail(c, "unknown argument '%.100s' (%s takes %s)",
		    it->string, c->tool->name, *list ? list : "none");
		return -1;
	}
	return 0;
}

const cJSON *
mcp_arg(struct mcp_call *c, const char *name)
{
	const cJSON	*it = cJSON_GetObjectItemCaseSensitive(c->args, name);

	return cJSON_IsNull(it) ? NULL : it;
}

int
mcp_arg_str(struct mcp_call *c, const char *name, int required, const char **out)
{
	const cJSON	*it = mcp_arg(c, name);

	*out = NULL;
	if (it == NULL) {
		if (required) {
			mcp_call_fail(c, "%s is required", name);
			return -1;
		}
		return 0;
	}
	if (!cJSON_IsString(it)) {
		mcp_call_fail(c, "%s is a string", name);
		return -1;
	}
	*out = it->valuestring;
	return 0;
}

int
mcp_arg_bool(struct mcp_call *c, const char *name, int *out)
{
	const cJSON	*it = mcp_arg(c, name);

	if (it == NULL)
		return 0;
	if (!cJSON_IsBool(it)) {
		mcp_call_fail(c, "%s is true or false", name);
		return -1;
	}
	*out = cJSON_IsTrue(it);
	return 0;
}

int
mcp_arg_int(struct mcp_call *c, const char *name, long lo, long hi, long *out)
{
	const cJSON	*it = mcp_arg(c, name);

	if (it == NULL)
		return 0;
	/* the range first: a cast of 8.4e52 to long is undefined */
	if (!cJSON_IsNumber(it) || !(it->valuedouble >= (double)lo &&
	    it->valuedouble <= (double)hi) ||
	    it->valuedouble != floor(it->valuedouble)) {
		mcp_call_fail(c, "%s is a whole number from %ld to %ld", name, lo,
		    hi);
		return -1;
	}
	*out = (long)it->valuedouble;
	return 0;
}

int
mcp_arg_time(struct mcp_call *c, const char *name, int64_t *ms)
{
	const char	*v;

	*ms = LEDGER_NO_TIME;
	if (mcp_arg_str(c, name, 0, &v) != 0)
		return -1;
	if (v != NULL && iso_parse_ms(v, strlen(v), ms) != 0) {
		mcp_call_fail(c, "%s is an ISO-8601 time (2026-09-01T09:00:00Z), "
		    "not '%s'", name, v);
		return -1;
	}
	return 0;
}

/* An array of strings (8-hex ids when hex). */
int
mcp_arg_list(struct mcp_call *c, const char *name, int hex, const cJSON **out)
{
	const cJSON	*it = mcp_arg(c, name), *e;

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
	mcp_call_fail(c, hex ? "%s is a list of 8-hex footprint ids (81e5eb9b)" :
	    "%s is a list of strings", name);
	return -1;
}
