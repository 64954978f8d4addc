/*
 * regime — the regime the last heartbeats name (see regime.h).
 *
 * One pread of the file's last CLI_REGIME_TAIL bytes; lines are parsed
 * with cJSON (a few hundred at most), from the first whole one.  A line
 * that is not a record is passed over: the fold counts those, not this.
 */
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/regime.h"

static void
tally_line(const char *p, size_t n, unsigned char *ring, unsigned *count)
{
	cJSON		*o = cJSON_ParseWithLength(p, n);
	const char	*type, *reg;
	unsigned char	 code;

	if (!cJSON_IsObject(o))
		goto out;
	type = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o,
	    "type"));
	if (type == NULL || strcmp(type, "heartbeat") != 0 ||
	    cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(o, "automated")))
		goto out;
	reg = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o,
	    "regime"));
	code = reg == NULL ? 0 : strcmp(reg, "hardware") == 0 ? 1 :
	    strcmp(reg, "software") == 0 ? 2 : 0;
	ring[*count % CLI_REGIME_BEATS] = code;
	(*count)++;
out:
	cJSON_Delete(o);
}

int
cli_regime_recent(const char *path, struct cli_regime *out)
{
	unsigned char	 ring[CLI_REGIME_BEATS];
	unsigned	 count = 0, i, n;
	struct stat	 st;
	char		*buf = NULL;
	off_t		 from;
	ssize_t		 got;
	size_t		 len, start, k;
	int		 fd, rc = 0;

	memset(out, 0, sizeof(*out));
	if ((fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)) == -1)
		return -errno;
	if (fstat(fd, &st) == -1) {
		rc = -errno;
		goto done;
	}
	if (!S_ISREG(st.st_mode)) {
		rc = -EINVAL;
		goto done;
	}
	from = st.st_size > CLI_REGIME_TAIL ? st.st_size - CLI_REGIME_TAIL : 0;
	len = (size_t)(st.st_size - from);
	if ((buf = malloc(len + 1)) == NULL) {
		rc = -ENOMEM;
		goto done;
	}
	do
		got = pread(fd, buf, len, from);
	while (got == -1 && errno == EINTR);
	if (got < 0) {
		rc = -errno;
		goto done;
	}
	len = (size_t)got;
	/* from the first whole line: the cut one before it is not read */
	start = 0;
	if (from > 0) {
		while (start < len && buf[start] != '\n')
			start++;
		start++;
	}
	for (k = start; k < len; k++)
		if (buf[k] == '\n') {
			tally_line(buf + start, k - start, ring, &count);
			start = k + 1;
		}
	n = count < CLI_REGIME_BEATS ? count : CLI_REGIME_BEATS;
	out->heartbeats = n;
	for (i = 0; i < n; i++) {
		unsigned char	c = ring[(count - 1 - i) % CLI_REGIME_BEATS];

		if (c == 1)
			out->hardware++;
		else if (c == 2)
			out->software++;
		else
			out->unknown++;
	}
	if (n == 0)
		out->timings = NULL;
	else if (out->hardware == n)
		out->timings = "hardware";
	else if (out->software == n)
		out->timings = "software";
	else if (out->unknown == n)
		out->timings = "unknown";
	else
		out->timings = "mixed";
done:
	free(buf);
	close(fd);
	return rc;
}

const char *
cli_regime_note(const struct cli_regime *r)
{
	if (r->timings == NULL)
		return "";
	if (strcmp(r->timings, "software") == 0)
		return "timings come from a software renderer (SwiftShader, "
		    "llvmpipe): frame times are not to be trusted, and no "
		    "fix is judged on them; counters are";
	if (strcmp(r->timings, "mixed") == 0 && r->software > 0)
		return "some timings come from a software renderer "
		    "(SwiftShader, llvmpipe): those frame times are not to be "
		    "trusted; windows time themselves on one regime only";
	return "";
}

cJSON *
cli_regime_json(const struct cli_regime *r)
{
	cJSON	*o = cJSON_CreateObject();

	if (o == NULL)
		return NULL;
	if (r->timings != NULL)
		cJSON_AddStringToObject(o, "timings", r->timings);
	else
		cJSON_AddNullToObject(o, "timings");
	cJSON_AddNumberToObject(o, "heartbeats", r->heartbeats);
	cJSON_AddNumberToObject(o, "hardware", r->hardware);
	cJSON_AddNumberToObject(o, "software", r->software);
	cJSON_AddNumberToObject(o, "unknown", r->unknown);
	if (*cli_regime_note(r) != '\0')
		cJSON_AddStringToObject(o, "note", cli_regime_note(r));
	return o;
}

int
cli_regime_say(FILE *f, const char *prefix, const struct cli_regime *r)
{
	const char	*note = cli_regime_note(r);

	if (*note == '\0')
		return 0;
	fprintf(f, "%s%s (the last %u heartbeats: %u software, %u "
	    "hardware, %u unknown)\n", prefix, note, r->heartbeats,
	    r->software, r->hardware, r->unknown);
	return 1;
}
