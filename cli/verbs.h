/*
 * verbs — one function per `sloptimize` verb, what cli/main.c dispatches
 * to.  Each takes the arguments after the verb name (argv[0] is the verb)
 * and returns an exit code.  A leaf: it includes nothing, and each verb's
 * file includes it to define its entry (tests/repo/layers.test.sh).
 */
#ifndef CLI_VERBS_H
#define CLI_VERBS_H

#include <stdint.h>

int	verb_issues(int argc, char **argv);
int	verb_report(int argc, char **argv);
int	verb_history(int argc, char **argv);
int	verb_fix(int argc, char **argv);
int	verb_hook_status(int argc, char **argv);
int	verb_doctor(int argc, char **argv);
int	verb_watch(int argc, char **argv);
int	verb_replay(int argc, char **argv);
int	verb_mcp(int argc, char **argv);
int	verb_init_agent(int argc, char **argv);
int	verb_init(int argc, char **argv);
int	verb_check(int argc, char **argv);
int	verb_bench(int argc, char **argv);
int	verb_attribute(int argc, char **argv);
int	verb_repro(int argc, char **argv);

#endif
