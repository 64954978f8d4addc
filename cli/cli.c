/*
 * cli — what every verb of `sloptimize` shares (cli.h): the option
 * parser, time phrases, JSON output.
 */
#include <sys/stat.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli/cli.h"
#include "ledger/footprint.h"

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

/* After every verb's own --help: the options cli_parse takes for all. */
static const char common_help[] =
"\ncommon options:\n"
"  --project DIR   the game project (default: the current directory)\n"
"  --json          machine-readable output (docs/json.md, schemas/)\n"
"  --now ISO       take this time as now, for reproducible output\n"
"exit: 0 ok, 1 findings, 2 usage, 4 nothing to read (no project, no ledger,\n"
"no daemon)\n";

int
cli_parse(int argc, char **argv, const struct cli_opt *opts,
    struct cli_common *c,
    const char *usage, const char **pos, int *npos)
{
	const char	*now = NULL;
	struct stat	 st;
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
			fputs(common_help, stdout);
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
	/*
	 * The rule for a project that is not there, the same for every
	 * verb: nothing to read (4), said on stderr — for a reader, a writer
	 * (nowhere to write) and a prompt hook alike.  Only doctor goes on:
	 * saying what is wrong is its job, and it exits 4 itself.
	 */
	if (strcmp(argv[0], "doctor") != 0) {
		const char	*why = NULL;

		if (stat(c->project, &st) != 0)
			why = strerror(errno);
		else if (!S_ISDIR(st.st_mode))
			why = "not a directory";
		if (why != NULL) {
			fprintf(stderr, "sloptimize %s: no project at %s: %s\n",
			    argv[0], c->project, why);
			return EXIT_NOTHING;
		}
	}
	if (c->now_ms == LEDGER_NO_TIME) {
		struct timespec	ts;

		clock_gettime(CLOCK_REALTIME, &ts);
		c->now_ms = (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
	}
	return -1;
}

int
cli_whole(const char *verb, const char *name, const char *s, long lo,
    long hi, long *out)
{
	char	*end;
	long	 v;

	if (s == NULL)
		return 0;
	errno = 0;
	v = strtol(s, &end, 10);
	if (errno != 0 || end == s || *end != '\0' || v < lo || v > hi) {
		fprintf(stderr, "sloptimize %s: --%s is a whole number from %ld "
		    "to %ld, not '%s'\n", verb, name, lo, hi, s);
		return -1;
	}
	*out = v;
	return 0;
}

const cJSON *
cli_get(const cJSON *o, const char *k)
{
	return cJSON_GetObjectItemCaseSensitive(o, k);
}

double
cli_num(const cJSON *o, const char *k, double dflt)
{
	const cJSON	*n = cJSON_GetObjectItemCaseSensitive(o, k);

	return cJSON_IsNumber(n) ? n->valuedouble : dflt;
}

const char *
cli_str(const cJSON *o, const char *k, const char *dflt)
{
	const char	*s = cJSON_GetStringValue(
			    cJSON_GetObjectItemCaseSensitive(o, k));

	return s != NULL ? s : dflt;
}

void
cli_add_source(cJSON *o, const struct project_fold_info *fi)
{
	cJSON	*s = cJSON_AddObjectToObject(o, "source");

	cJSON_AddStringToObject(s, "perf", fi->perf);
	cJSON_AddStringToObject(s, "fixes", fi->fixes);
	cJSON_AddNumberToObject(s, "bytes", (double)fi->bytes);
	cJSON_AddNumberToObject(s, "partialBytes", (double)fi->partial);
}
