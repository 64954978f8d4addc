/*
 * snapshot — the /ledger body (see snapshot.h).
 *
 * The records are the lines as written, not re-serialised: each line is
 * checked with the fold's own strictness (jscan_object: strict grammar and
 * UTF-8; a string `type`; at most LEDGER_MAX_LINE bytes; a leading BOM is
 * dropped) and, once valid, its bytes ARE valid JSON, so they are joined
 * with commas and handed to cJSON as a raw value.  Parsing 2 MiB into a
 * cJSON tree and printing it again would cost ten times as much and could
 * only change number formatting.  The envelope (v, size, from, truncated,
 * skipped) is built with cJSON like every other response.
 *
 * A line that is not a valid record is left out and counted in `skipped`
 * (blank lines are not records and not counted, as in the fold).  Only
 * complete lines are served: a partial last line waits for its newline.
 */
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "daemon/http.h"
#include "daemon/snapshot.h"
#include "ledger/footprint.h"
#include "ledger/jscan.h"
#include "ledger/ledger.h"
#include "project/project.h"

struct part {
	uint64_t	 size, from;
	int		 truncated;
	char		*raw;		/* "[rec,rec,…]" */
	uint64_t	 skipped;
};

static int
pread_all(int fd, char *buf, size_t n, uint64_t off)
{
	size_t	got = 0;
	ssize_t	r;

	while (got < n) {
		r = pread(fd, buf + got, n - got, (off_t)(off + got));
		if (r == -1) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (r == 0)
			break;		/* shrank under us: serve what we read */
		got += (size_t)r;
	}
	return (int)got;
}

static int
valid_line(const char *p, size_t n)
{
	struct jscan_result	r;

	if (n > LEDGER_MAX_LINE)
		return 0;
	if (jscan_object(p, n, &r) != 0)
		return 0;
	return r.f[F_TYPE].kind == J_STRING;
}

static int
blank(const char *p, size_t n)
{
	size_t	i;

	for (i = 0; i < n; i++)
		if (p[i] != ' ' && p[i] != '\t' && p[i] != '\r')
			return 0;
	return 1;
}

/* The tail of one file into pt->raw. */
static int
read_part(const char *path, uint64_t bytes, struct part *pt)
{
	struct stat	 st;
	char		*buf = NULL, *out = NULL, *p, *end, *nl;
	uint64_t	 start, lead;
	size_t		 n, o = 0;
	int		 fd, rc;

	memset(pt, 0, sizeof(*pt));
	/* never blocks: a FIFO at the path is refused, not waited on */
	if ((rc = project_open(path, O_RDONLY, 0, &fd)) != 0) {
		if (rc != -ENOENT)
			return rc;
		return (pt->raw = strdup("[]")) ? 0 : -ENOMEM;
	}
	if (fstat(fd, &st) == -1) {
		rc = -errno;
		goto out;
	}
	pt->size = (uint64_t)st.st_size;
	start = pt->size > bytes ? pt->size - bytes : 0;
	/* one byte before the window tells whether it starts a line */
	lead = start > 0 ? 1 : 0;
	n = (size_t)(pt->size - start + lead);
	if ((buf = malloc(n + 1)) == NULL || (out = malloc(n + 3)) == NULL) {
		rc = -ENOMEM;
		goto out;
	}
	if ((rc = pread_all(fd, buf, n, start - lead)) < 0)
		goto out;
	n = (size_t)rc;
	p = buf;
	end = buf + n;
	if (lead) {
		/* skip to just past the first '\n' (the byte before the
		 * window is one when the window starts a line) */
		nl = memchr(p, '\n', (size_t)(end - p));
		p = nl ? nl + 1 : end;
	}
	pt->from = start - lead + (uint64_t)(p - buf);
	pt->truncated = pt->from > 0;
	out[o++] = '[';
	while (p < end && (nl = memchr(p, '\n', (size_t)(end - p))) != NULL) {
		const char	*a = p;
		size_t		 len = (size_t)(nl - p);

		p = nl + 1;
		if (len >= 3 && (unsigned char)a[0] == 0xef &&
		    (unsigned char)a[1] == 0xbb && (unsigned char)a[2] == 0xbf) {
			a += 3;
			len -= 3;
		}
		if (blank(a, len))
			continue;
		if (!valid_line(a, len)) {
			pt->skipped++;
			continue;
		}
		if (o > 1)
			out[o++] = ',';
		memcpy(out + o, a, len);
		o += len;
	}
	out[o++] = ']';
	out[o] = '\0';
	pt->raw = out;
	out = NULL;
	rc = 0;
out:
	free(buf);
	free(out);
	close(fd);
	return rc;
}

static cJSON *
part_json(struct part *pt)
{
	cJSON	*o = cJSON_CreateObject();

	cJSON_AddNumberToObject(o, "size", (double)pt->size);
	cJSON_AddNumberToObject(o, "from", (double)pt->from);
	cJSON_AddBoolToObject(o, "truncated", pt->truncated);
	cJSON_AddItemToObject(o, "records", cJSON_CreateRaw(pt->raw));
	return o;
}

int
snapshot_build(const char *perf, const char *fixes, uint64_t bytes,
    size_t pre, struct http_blob **out, char etag[48])
{
	struct part	 pp, pf;
	cJSON		*o = NULL;
	char		*txt = NULL;
	struct http_blob	*b;
	size_t		 n;
	int		 rc;

	*out = NULL;
	memset(&pf, 0, sizeof(pf));
	if ((rc = read_part(perf, bytes, &pp)) != 0)
		return rc;
	if ((rc = read_part(fixes, bytes, &pf)) != 0)
		goto done;
	rc = -ENOMEM;
	if ((o = cJSON_CreateObject()) == NULL)
		goto done;
	cJSON_AddNumberToObject(o, "v", 1);
	cJSON_AddItemToObject(o, "perf", part_json(&pp));
	cJSON_AddItemToObject(o, "fixes", part_json(&pf));
	cJSON_AddNumberToObject(o, "skipped", (double)(pp.skipped +
	    pf.skipped));
	if ((txt = cJSON_PrintUnformatted(o)) == NULL)
		goto done;
	n = strlen(txt);
	if ((b = malloc(sizeof(*b) + pre + n + 1)) == NULL)
		goto done;
	b->refs = 1;
	b->len = n + 1;
	memcpy(b->data + pre, txt, n);
	b->data[pre + n] = '\n';
	snprintf(etag, 48, "\"l%016llx%llx\"",
	    (unsigned long long)fnv1a64(b->data + pre, b->len),
	    (unsigned long long)b->len);
	*out = b;
	rc = 0;
done:
	free(txt);
	cJSON_Delete(o);
	free(pp.raw);
	free(pf.raw);
	return rc;
}
