/*
 * project — reading a game project's ledger through the fold, and
 * appending fix records to it.
 *
 * The fold reads with plain read(2) into one 1 MiB buffer and hands the
 * bytes to linesplit: the ledger is streamed, never mapped, so the
 * resident size stays the fold's own whatever the file's size.
 */
#include <sys/file.h>
#include <sys/random.h>
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "ledger/footprint.h"
#include "ledger/linesplit.h"

#define READ_CHUNK	(1024 * 1024)

void
project_path(const char *project, const char *name, char *out, size_t cap)
{
	snprintf(out, cap, "%s/.sloptimize/%s", project, name);
}

struct fold_ctx {
	struct ledger		*l;
	enum ledger_stream	 stream;
	int			 err;
};

static void
on_line(void *arg, const char *line, size_t len, uint64_t offset)
{
	struct fold_ctx	*c = arg;
	int		 rc;

	rc = c->stream == LEDGER_PERF ?
	    ledger_fold_perf(c->l, line, len, offset, NULL) :
	    ledger_fold_fix(c->l, line, len, offset);
	if (rc < 0 && c->err == 0)
		c->err = rc;
}

static void
on_long(void *arg, uint64_t offset, uint64_t len)
{
	struct fold_ctx	*c = arg;

	ledger_skip(c->l, c->stream, offset, len, NULL);
}

/* Fold one file; *bytes and *partial report what was read and left. */
static int
fold_file(const char *path, struct fold_ctx *c, uint64_t *bytes,
    uint64_t *partial)
{
	struct linesplit	 ls;
	char			*buf;
	ssize_t			 n;
	int			 fd, rc = 0;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
		return -errno;
	if ((buf = malloc(READ_CHUNK)) == NULL) {
		close(fd);
		return -ENOMEM;
	}
	(void)posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
	linesplit_init(&ls, 0, on_line, on_long, c);
	*bytes = 0;
	for (;;) {
		n = read(fd, buf, READ_CHUNK);
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1) {
			rc = -errno;
			break;
		}
		if (n == 0)
			break;
		*bytes += (uint64_t)n;
		if ((rc = linesplit_feed(&ls, buf, (size_t)n)) != 0 ||
		    (rc = c->err) != 0)
			break;
	}
	*partial = linesplit_pending(&ls);
	linesplit_free(&ls);
	free(buf);
	close(fd);
	return rc;
}

int
ledger_fold_project(const char *project, const struct ledger_opts *o,
    struct ledger **out, struct fold_info *info)
{
	struct fold_ctx	 c = { 0 };
	uint64_t	 fb, fp;
	struct stat	 st;
	int		 rc;

	memset(info, 0, sizeof(*info));
	project_path(project, "perf.jsonl", info->perf, sizeof(info->perf));
	project_path(project, "fixes.jsonl", info->fixes, sizeof(info->fixes));
	if (stat(info->perf, &st) == -1)
		return -errno;
	if ((c.l = ledger_create(o)) == NULL)
		return -ENOMEM;
	/* fixes first: a fix's record is needed to judge every occurrence */
	c.stream = LEDGER_FIXES;
	rc = fold_file(info->fixes, &c, &fb, &fp);
	if (rc == 0)
		info->have_fixes = 1;
	else if (rc != -ENOENT)
		goto fail;
	c.stream = LEDGER_PERF;
	if ((rc = fold_file(info->perf, &c, &info->bytes,
	    &info->partial)) != 0)
		goto fail;
	*out = c.l;
	return 0;
fail:
	ledger_destroy(c.l);
	return rc;
}

static int
random_id(char out[9])
{
	uint32_t	v;

	if (getrandom(&v, sizeof(v), 0) != sizeof(v)) {
		struct timespec	ts;

		clock_gettime(CLOCK_REALTIME, &ts);
		v = fnv1a32(&ts, sizeof(ts)) ^ (uint32_t)getpid();
	}
	footprint_hex(v, out);
	return 0;
}

static int
valid_string(const cJSON *o, const char *name, int required)
{
	const cJSON	*it = cJSON_GetObjectItemCaseSensitive(o, name);

	if (it == NULL)
		return !required;
	return cJSON_IsString(it) && (!required || *it->valuestring != '\0');
}

static int
valid_ids(const cJSON *arr)
{
	const cJSON	*it;
	uint32_t	 v;

	if (arr == NULL)
		return 1;
	if (!cJSON_IsArray(arr))
		return 0;
	cJSON_ArrayForEach(it, arr)
		if (!cJSON_IsString(it) || footprint_parse_hex(it->valuestring,
		    strlen(it->valuestring), &v) != 0)
			return 0;
	return 1;
}

int
fix_append(const char *project, cJSON *rec, const char **why)
{
	char		 dir[4096], path[4096], id[9], iso[32], *line = NULL;
	const char	*st;
	cJSON		*it;
	size_t		 len;
	ssize_t		 n;
	int		 fd = -1, rc;
	struct timespec	 ts;

	*why = NULL;
	if (!cJSON_IsObject(rec)) {
		*why = "a fix is a JSON object";
		return -EINVAL;
	}
	st = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(rec,
	    "status"));
	if (st == NULL)
		st = "applied";
	if (strcmp(st, "applied") && strcmp(st, "proposed") &&
	    strcmp(st, "merged") && strcmp(st, "rejected")) {
		*why = "status is applied, proposed, merged or rejected";
		return -EINVAL;
	}
	if (strcmp(st, "merged") == 0 || strcmp(st, "rejected") == 0) {
		it = cJSON_GetObjectItemCaseSensitive(rec, "ref");
		if (!cJSON_IsString(it) || footprint_parse_hex(it->valuestring,
		    strlen(it->valuestring), &(uint32_t){ 0 }) != 0) {
			*why = "a merge or reject names the proposal's 8-hex id in ref";
			return -EINVAL;
		}
	} else if (!valid_string(rec, "title", 1)) {
		*why = "a fix needs a title";
		return -EINVAL;
	}
	if (!valid_string(rec, "issue", 0) || !valid_string(rec, "solution", 0) ||
	    !valid_string(rec, "commit", 0)) {
		*why = "issue, solution and commit are strings";
		return -EINVAL;
	}
	if (!valid_ids(cJSON_GetObjectItemCaseSensitive(rec, "footprints"))) {
		*why = "footprints is a list of 8-hex footprint ids";
		return -EINVAL;
	}
	it = cJSON_GetObjectItemCaseSensitive(rec, "files");
	if (it != NULL) {
		const cJSON	*f;

		if (!cJSON_IsArray(it)) {
			*why = "files is a list of paths";
			return -EINVAL;
		}
		cJSON_ArrayForEach(f, it)
			if (!cJSON_IsString(f)) {
				*why = "files is a list of paths";
				return -EINVAL;
			}
	}

	/* fill in what the writer may leave to us */
	cJSON_DeleteItemFromObjectCaseSensitive(rec, "type");
	cJSON_AddStringToObject(rec, "type", "fix");
	it = cJSON_GetObjectItemCaseSensitive(rec, "id");
	if (it == NULL) {
		random_id(id);
		cJSON_AddStringToObject(rec, "id", id);
	} else if (!cJSON_IsString(it) || footprint_parse_hex(it->valuestring,
	    strlen(it->valuestring), &(uint32_t){ 0 }) != 0) {
		*why = "id is 8 hex digits";
		return -EINVAL;
	}
	if (cJSON_GetObjectItemCaseSensitive(rec, "at") == NULL) {
		clock_gettime(CLOCK_REALTIME, &ts);
		iso_format_ms((int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000,
		    iso);
		cJSON_AddStringToObject(rec, "at", iso);
	} else if (!valid_string(rec, "at", 1)) {
		*why = "at is an ISO-8601 time";
		return -EINVAL;
	}
	if (cJSON_GetObjectItemCaseSensitive(rec, "status") == NULL)
		cJSON_AddStringToObject(rec, "status", "applied");

	if ((line = cJSON_PrintUnformatted(rec)) == NULL)
		return -ENOMEM;
	len = strlen(line);
	if (len + 1 > LEDGER_MAX_LINE) {
		free(line);
		*why = "the fix record is larger than 1 MiB";
		return -EINVAL;
	}
	line[len] = '\n';	/* replaces the NUL: one write, one line */

	snprintf(dir, sizeof(dir), "%s/.sloptimize", project);
	if (mkdir(dir, 0755) == -1 && errno != EEXIST) {
		rc = -errno;
		*why = "cannot create .sloptimize/";
		goto out;
	}
	project_path(project, "fixes.jsonl", path, sizeof(path));
	if ((fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC,
	    0644)) == -1) {
		rc = -errno;
		*why = "cannot open fixes.jsonl";
		goto out;
	}
	/* O_APPEND makes each write land whole at the end; the lock keeps
	 * other writers (and a reader that wants a quiet moment) ordered. */
	while (flock(fd, LOCK_EX) == -1)
		if (errno != EINTR) {
			rc = -errno;
			*why = "cannot lock fixes.jsonl";
			goto out;
		}
	n = write(fd, line, len + 1);
	if (n != (ssize_t)(len + 1)) {
		rc = n == -1 ? -errno : -EIO;
		*why = "short write to fixes.jsonl";
		/* a torn tail must not glue itself to the next record */
		if (n > 0 && ftruncate(fd, lseek(fd, 0, SEEK_END) - n) == -1)
			*why = "short write to fixes.jsonl, could not undo it";
		goto out;
	}
	if (fsync(fd) == -1) {
		rc = -errno;
		*why = "fsync of fixes.jsonl failed";
		goto out;
	}
	rc = 0;
out:
	if (fd != -1)
		close(fd);
	free(line);
	return rc;
}

void
format_ago(int64_t ms, char *out, size_t cap)
{
	int64_t	s = ms / 1000;

	if (ms < 0)
		snprintf(out, cap, "in the future");
	else if (s < 5)
		snprintf(out, cap, "just now");
	else if (s < 120)
		snprintf(out, cap, "%llds ago", (long long)s);
	else if (s < 7200)
		snprintf(out, cap, "%lldm ago", (long long)(s / 60));
	else if (s < 172800)
		snprintf(out, cap, "%lldh ago", (long long)(s / 3600));
	else
		snprintf(out, cap, "%lldd ago", (long long)(s / 86400));
}

int
print_json(const cJSON *o)
{
	char	*s = cJSON_Print(o);

	if (s == NULL)
		return -ENOMEM;
	fputs(s, stdout);
	fputc('\n', stdout);
	free(s);
	return 0;
}

/* --- options ---------------------------------------------------------- */

int
cli_parse(int argc, char **argv, const struct cli_opt *opts,
    struct cli_common *c,
    const char *usage, const char **pos, int *npos)
{
	const char	*now = NULL;
	int		 i, maxpos = npos ? *npos : 0;

	c->project = ".";
	c->json = 0;
	c->now_ms = LEDGER_NO_TIME;
	if (npos)
		*npos = 0;
	for (i = 1; i < argc; i++) {
		const char		*a = argv[i], *eq, *val = NULL;
		const struct cli_opt	*o;
		size_t			 nlen;
		struct cli_opt		 common[] = {
			{ "project", OPT_ARG, &c->project },
			{ "json", OPT_FLAG, &c->json },
			{ "now", OPT_ARG, &now },
			{ NULL, 0, NULL }
		};

		if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
			fputs(usage, stdout);
			return EXIT_OK;
		}
		if (strncmp(a, "--", 2) != 0 || a[2] == '\0') {
			if (npos == NULL || *npos >= maxpos) {
				fprintf(stderr, "sloptimize %s: unexpected "
				    "argument '%s'\n%s", argv[0], a, usage);
				return EXIT_USAGE;
			}
			pos[(*npos)++] = a;
			continue;
		}
		a += 2;
		eq = strchr(a, '=');
		nlen = eq ? (size_t)(eq - a) : strlen(a);
		for (o = opts; o && o->name; o++)
			if (strlen(o->name) == nlen &&
			    strncmp(o->name, a, nlen) == 0)
				break;
		if (o == NULL || o->name == NULL)
			for (o = common; o->name; o++)
				if (strlen(o->name) == nlen &&
				    strncmp(o->name, a, nlen) == 0)
					break;
		if (o->name == NULL) {
			fprintf(stderr, "sloptimize %s: unknown option "
			    "'--%.*s'\n%s", argv[0], (int)nlen, a, usage);
			return EXIT_USAGE;
		}
		if (o->kind == OPT_FLAG) {
			if (eq) {
				fprintf(stderr, "sloptimize %s: --%s takes no "
				    "value\n", argv[0], o->name);
				return EXIT_USAGE;
			}
			*(int *)o->dst = 1;
			continue;
		}
		if (eq)
			val = eq + 1;
		else if (i + 1 < argc)
			val = argv[++i];
		else {
			fprintf(stderr, "sloptimize %s: --%s needs a value\n",
			    argv[0], o->name);
			return EXIT_USAGE;
		}
		*(const char **)o->dst = val;
	}
	if (now != NULL && iso_parse_ms(now, strlen(now), &c->now_ms) != 0) {
		fprintf(stderr, "sloptimize %s: --now takes an ISO-8601 time\n",
		    argv[0]);
		return EXIT_USAGE;
	}
	if (c->now_ms == LEDGER_NO_TIME) {
		struct timespec	ts;

		clock_gettime(CLOCK_REALTIME, &ts);
		c->now_ms = (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
	}
	return -1;
}
