/*
 * sloptimize — the command line: a table of verbs.
 */
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "gate.h"
#include "sink.h"
#include "verbs.h"

static const struct {
	const char	*name;
	int		(*fn)(int, char **);
	const char	*what;
} verbs[] = {
	{ "issues", verb_issues, "the issue catalogue (--fp ID for one)" },
	{ "report", verb_report, "the five most frequent issues" },
	{ "history", verb_history, "the timeline in buckets, one window per build" },
	{ "fix", verb_fix, "record a fix, a proposal, or a decision on one" },
	{ "watch", verb_watch, "print the daemon's wake events as they happen" },
	{ "mcp", verb_mcp, "a Model Context Protocol server on stdio, for an agent" },
	{ "init", verb_init, "set a Vite game up: the npm package, the plugin line" },
	{ "init-agent", verb_init_agent, "set the project up for a coding agent" },
	{ "replay", verb_replay, "append a recorded session, re-stamped to now" },
	{ "check", verb_check, "every budget against the last measurement" },
	{ "hook-status", verb_hook_status, "at most five lines for a prompt hook" },
	{ "bench", verb_bench, "a bench of a scene, and a verdict on a change" },
	{ "doctor", verb_doctor, "check the environment and the ledger" },
	{ "sink", verb_sink, "sink init: the team's ClickHouse tables" },
	{ "gate", verb_gate, "the correctness gate: a frame against its golden" },
	{ "attribute", verb_attribute, "which entity costs what (measured, or --static: the census), built where" },
	{ "repro", verb_repro, "a hitch replayed from its view snapshot: the counters of each frame" },
};

static void
usage(FILE *f)
{
	size_t	i;

	fprintf(f, "usage: sloptimize <verb> [--json] [--project DIR] ...\n\n");
	for (i = 0; i < sizeof(verbs) / sizeof(verbs[0]); i++)
		fprintf(f, "  %-12s %s\n", verbs[i].name, verbs[i].what);
	fprintf(f, "\n'sloptimize <verb> --help' for each; man sloptimize.\n"
	    "Exit: 0 ok, 1 findings, 2 usage, 4 nothing to read.\n");
}

int
main(int argc, char **argv)
{
	size_t	i;

	/* A file-size limit (RLIMIT_FSIZE) is then an EFBIG the writers say,
	 * not a silent death with the fix half-written. */
	signal(SIGXFSZ, SIG_IGN);
	if (argc < 2) {
		usage(stderr);
		return EXIT_USAGE;
	}
	if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
	    strcmp(argv[1], "help") == 0) {
		usage(stdout);
		return EXIT_OK;
	}
	if (strcmp(argv[1], "--version") == 0) {
		printf("sloptimize %s\n", SLOPTIMIZE_VERSION);
		return EXIT_OK;
	}
	if (strcmp(argv[1], "issues") == 0 && cli_wants_team(argc - 1, argv + 1))
		return verb_issues_team(argc - 1, argv + 1);
	for (i = 0; i < sizeof(verbs) / sizeof(verbs[0]); i++)
		if (strcmp(argv[1], verbs[i].name) == 0)
			return verbs[i].fn(argc - 1, argv + 1);
	fprintf(stderr, "sloptimize: unknown verb '%s'\n", argv[1]);
	usage(stderr);
	return EXIT_USAGE;
}
