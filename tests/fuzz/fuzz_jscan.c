/*
 * fuzz_jscan — one ledger line through the validating scanner, checked
 * against a plain reference validator (refjson.c): jscan must accept
 * exactly the lines the reference accepts, and every line it accepts must
 * also parse with cJSON.  A fast scanner that grows lenient, or strict in
 * the wrong place, shows up here as a difference, not as a crash.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "ledger/jscan.h"
#include "refjson.h"

int	LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);

int
LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
	struct jscan_result	 r;
	const char		*line = (const char *)data;
	int			 ours, ref;
	cJSON			*o;

	ours = jscan_object(line, size, &r) == 0;
	ref = refjson_object(line, size);
	if (ours != ref) {
		fprintf(stderr, "jscan %s, the reference %s (jscan says: %s "
		    "at %zu)\n", ours ? "accepts" : "refuses",
		    ref ? "accepts" : "refuses", r.error ? r.error : "-",
		    r.error_at);
		abort();
	}
	if (!ours) {
		if (r.error == NULL || r.error_at > size)
			abort();	/* a refusal always says where and why */
		return 0;
	}
	if ((o = cJSON_ParseWithLength(line, size)) == NULL ||
	    !cJSON_IsObject(o))
		abort();
	cJSON_Delete(o);
	return 0;
}
