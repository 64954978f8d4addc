/*
 * sink — the command line's side of team scale (docs/team.md):
 * `sloptimize sink init` and `sloptimize issues --team`.
 */
#ifndef CLI_SINK_H
#define CLI_SINK_H

int	verb_sink(int argc, char **argv);
/* `issues --team …`: argv as for verb_issues. */
int	verb_issues_team(int argc, char **argv);
/*
 * The `sink` part of the /status of the daemon listening on `listen`
 * ("host:port"): a tree the caller frees (JSON null without a sink), or
 * NULL with a sentence in err.  For doctor.  Blocking, 2 s at most.
 */
struct cJSON;
struct cJSON *cli_daemon_sink(const char *listen, char *err, size_t cap);

/* Does argv hold `--team`?  (main's dispatch) */
int	cli_wants_team(int argc, char **argv);

#endif
