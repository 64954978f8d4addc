/*
 * sink — the command line's side of team scale (docs/team.md):
 * `sloptimize sink init` and `sloptimize issues --team`.
 */
#ifndef CLI_SINK_H
#define CLI_SINK_H

int	verb_sink(int argc, char **argv);
/* `issues --team …`: argv as for verb_issues. */
int	verb_issues_team(int argc, char **argv);
/* Does argv hold `--team`?  (main's dispatch) */
int	cli_wants_team(int argc, char **argv);

#endif
