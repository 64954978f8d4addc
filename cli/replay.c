/*
 * replay — `sloptimize replay FILE`: append a recorded session to a
 * project's perf.jsonl as if it were being played now (DESIGN §11).  For
 * demos (`make run`) and for tests of everything downstream: the daemon's
 * tailer, wakes, `watch`, the panel.
 *
 * Each record's `at` is re-stamped to the wall clock at the moment it is
 * written, and the recorded gaps between records are kept, divided by
 * --speed.  The schedule is absolute (start + recorded offset / speed on
 * the monotonic clock), so time spent parsing and writing never adds up
 * into drift, and a recording whose clock steps back waits for nothing.
 *
 * Invariant: each record reaches perf.jsonl in one write(2) of the whole
 * line, '\n' included, on an O_APPEND descriptor, so a tailer never sees
 * half a record from us and a game writing the same file at the same time
 * cannot land inside one.  A write the disk takes only part of is undone
 * and ends the replay (project_write_once, as `fix` and POST /records
 * do): no torn record is left at the end of the file.
 */
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "base/base.h"
#include "cli.h"
#include "ledger/footprint.h"
#include "ledger/jscan.h"
#include "project/append.h"
#include "verbs.h"

#define REPLAY_LINE_MAX	(1024 * 1024)	/* the ledger's own limit (§8.7) */

static const char replay_usage[] =
"usage: sloptimize replay FILE [--speed X] [--project DIR] [--json]\n"
"Append a recorded session (perf records, one JSON object a line) to\n"
"<project>/.sloptimize/perf.jsonl, each record's `at` re-stamped to now,\n"
"keeping the recorded gaps between records divided by X.\n"
"  FILE         the recording; - reads standard input\n"
"  --speed X    1 (default) plays in real time, 10 ten times faster,\n"
"               0 without waiting at all\n"
"  --project D  the game project (default .); .sloptimize/ is created\n"
"Lines that are not JSON objects are reported and skipped.  Exit: 0 ok,\n"
"1 the ledger cannot be written, 2 usage, 4 FILE cannot be read.\n";

static volatile sig_atomic_t	interrupted;

static void
on_signal(int sig)
{
	interrupted = sig;
}

struct replay {
	const char	*file;
	double		 speed;
	int		 fd;		/* perf.jsonl, O_APPEND (read: its last byte) */
	char		 perf[PATH_MAX + 32];
	int		 need_nl;	/* perf.jsonl ends inside a line */
	uint64_t	 replayed, skipped;
	int		 timed;		/* start/first are set */
	struct timespec	 start;		/* monotonic, at the first timed record */
	int64_t		 first_ms;	/* its recorded `at` */
	int64_t		 high_ms;	/* the latest recorded `at` so far */
};

/*
 * Wait until this record's place in the recording, scaled by the speed.
 * The offset is from the first timed record to the latest `at` seen, so
 * a record stamped earlier than one before it goes out at once.  Returns
 * -EINTR when a signal asks us to stop.
 */
static int
wait_for(struct replay *r, int64_t at_ms)
{
	struct timespec	t;
	double		ns;

	if (!r->timed) {
		clock_gettime(CLOCK_MONOTONIC, &r->start);
		r->first_ms = r->high_ms = at_ms;
		r->timed = 1;
		return 0;
	}
	if (at_ms > r->high_ms)
		r->high_ms = at_ms;
	if (r->speed == 0)
		return 0;
	ns = (double)(r->high_ms - r->first_ms) * 1e6 / r->speed;
	t = r->start;
	t.tv_sec += (time_t)(ns / 1e9);
	t.tv_nsec += (long)fmod(ns, 1e9);
	if (t.tv_nsec >= 1000000000L) {
		t.tv_sec++;
		t.tv_nsec -= 1000000000L;
	}
	while (!interrupted) {
		int	rc = clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &t,
			    NULL);

		if (rc == 0)
			return 0;
		if (rc != EINTR)
			return -rc;
	}
	return -EINTR;
}

static void
skip(struct replay *r, uint64_t lineno, const char *why, size_t at)
{
	r->skipped++;
	if (at != (size_t)-1)
		fprintf(stderr, "sloptimize replay: %s:%llu: %s (byte %zu), "
		    "skipped\n", r->file, (unsigned long long)lineno, why, at);
	else
		fprintf(stderr, "sloptimize replay: %s:%llu: %s, skipped\n",
		    r->file, (unsigned long long)lineno, why);
}

/* Set `at` to iso, in its place; a duplicate `at` further on would win
 * in the fold (last duplicate wins), so duplicates go. */
static int
restamp(cJSON *rec, const char *iso)
{
	cJSON	*it, *next, *s;
	int	 seen = 0;

	for (it = rec->child; it != NULL; it = next) {
		next = it->next;
		if (it->string != NULL && strcmp(it->string, "at") == 0 &&
		    seen++)
			cJSON_Delete(cJSON_DetachItemViaPointer(rec, it));
	}
	if ((s = cJSON_CreateString(iso)) == NULL)
		return -ENOMEM;
	/* replacing by name keeps the member's place and names the new one */
	if (seen ? !cJSON_ReplaceItemInObjectCaseSensitive(rec, "at", s) :
	    !cJSON_AddItemToObject(rec, "at", s)) {
		cJSON_Delete(s);
		return -ENOMEM;
	}
	return 0;
}

/* One line of FILE (without its '\n').  0, or a negative errno that ends
 * the replay (the ledger cannot be written, or a signal). */
static int
replay_line(struct replay *r, char *line, size_t len, uint64_t lineno)
{
	struct jscan_result	 js;
	cJSON			*rec;
	const cJSON		*at;
	char			 iso[32], *text = NULL, *out;
	int64_t			 ms;
	size_t			 n;
	int			 rc;

	while (len > 0 && (line[len - 1] == '\r' || line[len - 1] == ' ' ||
	    line[len - 1] == '\t'))
		len--;
	if (len >= 3 && memcmp(line, "\xef\xbb\xbf", 3) == 0) {
		line += 3;
		len -= 3;
	}
	if (len == strspn(line, " \t"))
		return 0;	/* a blank line is not a record (docs/json.md) */
	if (len > REPLAY_LINE_MAX) {
		skip(r, lineno, "longer than 1 MiB", (size_t)-1);
		return 0;
	}
	/* jscan: the fold's own grammar, so what we write, it will read */
	if (jscan_object(line, len, &js) != 0) {
		skip(r, lineno, js.error, js.error_at);
		return 0;
	}
	if ((rec = cJSON_ParseWithLength(line, len)) == NULL) {
		skip(r, lineno, "not JSON cJSON can read", (size_t)-1);
		return 0;
	}
	at = cJSON_GetObjectItemCaseSensitive(rec, "at");
	if (cJSON_IsString(at) && iso_parse_ms(at->valuestring,
	    strlen(at->valuestring), &ms) == 0 &&
	    (rc = wait_for(r, ms)) != 0)
		goto out;
	iso_format_ms(base_now_ms(), iso);
	if ((rc = restamp(rec, iso)) != 0 ||
	    (text = cJSON_PrintUnformatted(rec)) == NULL) {
		rc = -ENOMEM;
		goto out;
	}
	/* the whole line, '\n' included, in one buffer for one write(2) */
	n = strlen(text);
	if ((out = malloc(n + 2)) == NULL) {
		rc = -ENOMEM;
		goto out;
	}
	memcpy(out + r->need_nl, text, n);
	if (r->need_nl)
		out[0] = '\n';
	out[r->need_nl + n] = '\n';
	/* one write(2), or nothing: a full disk takes part of a line and
	 * says nothing, and the part would glue itself to the next
	 * writer's record — so it is cut off again (project/append.h) */
	rc = project_write_once(r->fd, out, n + 1 + (size_t)r->need_nl);
	free(out);
	if (rc == 0) {
		r->need_nl = 0;
		r->replayed++;
	}
out:
	free(text);
	cJSON_Delete(rec);
	return rc;
}

/* Open <project>/.sloptimize/perf.jsonl for appending, creating both. */
static int
open_ledger(struct replay *r, const char *project, const struct stat *src)
{
	char		dir[PATH_MAX + 16], last;
	struct stat	st;

	snprintf(dir, sizeof(dir), "%s/.sloptimize", project);
	if (mkdir(dir, 0755) == -1 && errno != EEXIST)
		return -errno;
	if (project_path(project, "perf.jsonl", r->perf, sizeof(r->perf)))
		return -ENAMETOOLONG;
	r->fd = open(r->perf, O_RDWR | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
	if (r->fd == -1)
		return -errno;
	if (fstat(r->fd, &st) == -1)
		return -errno;
	/* reading what we append would never end */
	if (src != NULL && st.st_dev == src->st_dev && st.st_ino == src->st_ino)
		return -ELOOP;
	/*
	 * A game that died mid-line left a fragment without its '\n'.  Our
	 * first record would be glued to it and both lost; ending the
	 * fragment first costs one line the fold skips and counts.
	 */
	if (st.st_size > 0 && pread(r->fd, &last, 1, st.st_size - 1) == 1 &&
	    last != '\n') {
		r->need_nl = 1;
		fprintf(stderr, "sloptimize replay: %s ends inside a line; "
		    "ending it before the first record\n", r->perf);
	}
	return 0;
}

static void
summary(const struct replay *r, int json, double seconds)
{
	cJSON	*o;

	if (!json) {
		printf("replayed %llu records (%llu skipped) into %s\n",
		    (unsigned long long)r->replayed,
		    (unsigned long long)r->skipped, r->perf);
		return;
	}
	if ((o = cJSON_CreateObject()) == NULL)
		return;
	cJSON_AddNumberToObject(o, "v", 1);
	cJSON_AddNumberToObject(o, "replayed", (double)r->replayed);
	cJSON_AddNumberToObject(o, "skipped", (double)r->skipped);
	cJSON_AddStringToObject(o, "file", r->file);
	cJSON_AddStringToObject(o, "perf", r->perf);
	cJSON_AddNumberToObject(o, "speed", r->speed);
	cJSON_AddNumberToObject(o, "seconds", round(seconds * 1000) / 1000);
	print_json(o);
	cJSON_Delete(o);
}

static int
parse_speed(const char *v, double *out)
{
	char	*end;
	double	 d;

	errno = 0;
	d = strtod(v, &end);
	if (*v == '\0' || *end != '\0' || errno != 0 || !isfinite(d) || d < 0)
		return -1;
	*out = d;
	return 0;
}

int
verb_replay(int argc, char **argv)
{
	struct replay		 r;
	struct sigaction	 sa, old_int, old_term;
	struct timespec		 t0, t1;
	struct stat		 src;
	const char		*project, *speed = NULL, *pos[1];
	struct cli_common	 c;
	struct cli_opt		 opts[] = {
		{ "speed", OPT_ARG, &speed }, { NULL, 0, NULL }
	};
	int			 npos = 1;
	char			 real[PATH_MAX], *line = NULL;
	size_t			 cap = 0;
	ssize_t			 n;
	uint64_t		 lineno = 0;
	int			 json, rc = 0, have_src;
	FILE			*in;

	memset(&r, 0, sizeof(r));
	r.fd = -1;
	r.speed = 1;
	if ((rc = cli_parse(argc, argv, opts, &c, replay_usage, pos,
	    &npos)) >= 0)
		return rc;
	r.file = npos > 0 ? pos[0] : NULL;
	project = c.project;
	json = c.json;
	if (r.file == NULL) {
		fputs(replay_usage, stderr);
		return EXIT_USAGE;
	}
	if (speed != NULL && parse_speed(speed, &r.speed) != 0) {
		fprintf(stderr, "sloptimize replay: --speed takes a number ≥ 0, "
		    "not '%s'\n", speed);
		return EXIT_USAGE;
	}
	if (realpath(project, real) == NULL) {
		fprintf(stderr, "sloptimize replay: --project %s: %s\n",
		    project, strerror(errno));
		return EXIT_USAGE;
	}
	in = strcmp(r.file, "-") == 0 ? stdin : fopen(r.file, "re");
	if (in == NULL) {
		fprintf(stderr, "sloptimize replay: cannot read %s: %s\n",
		    r.file, strerror(errno));
		return EXIT_NOTHING;
	}
	have_src = fstat(fileno(in), &src) == 0;
	if ((rc = open_ledger(&r, real, have_src ? &src : NULL)) != 0) {
		if (rc == -ELOOP)
			fprintf(stderr, "sloptimize replay: %s is the ledger "
			    "itself\n", r.file);
		else
			fprintf(stderr, "sloptimize replay: cannot append to "
			    "%s: %s\n", *r.perf ? r.perf : real,
			    strerror(-rc));
		rc = rc == -ELOOP ? EXIT_USAGE : EXIT_FINDINGS;
		goto out;
	}

	/* no SA_RESTART: a signal must cut a wait short, then we stop */
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, &old_int);
	sigaction(SIGTERM, &sa, &old_term);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (!interrupted && (n = getline(&line, &cap, in)) != -1) {
		lineno++;
		if (n > 0 && line[n - 1] == '\n')
			n--;
		if ((rc = replay_line(&r, line, (size_t)n, lineno)) != 0)
			break;
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGTERM, &old_term, NULL);
	if (rc == 0 && !interrupted && ferror(in)) {
		fprintf(stderr, "sloptimize replay: reading %s: %s\n", r.file,
		    strerror(errno));
		rc = -EIO;
	} else if (rc != 0 && rc != -EINTR)
		fprintf(stderr, "sloptimize replay: cannot append to %s: %s "
		    "(line %llu of %s not written%s; the replay stops)\n",
		    r.perf, strerror(-rc), (unsigned long long)lineno, r.file,
		    rc == -EIO ? "" : ", nothing of it kept");
	summary(&r, json, (double)(t1.tv_sec - t0.tv_sec) +
	    (double)(t1.tv_nsec - t0.tv_nsec) / 1e9);
	fflush(stdout);
	if (interrupted) {
		/* die of the signal, as the shell and make expect */
		free(line);
		signal((int)interrupted, SIG_DFL);
		raise((int)interrupted);
	}
	rc = rc == 0 ? EXIT_OK : EXIT_FINDINGS;
out:
	free(line);
	if (r.fd != -1)
		close(r.fd);
	if (in != stdin)
		fclose(in);
	return rc;
}
