/*
 * config — the daemon's settings: defaults, then the JSON config file,
 * then the command line, in that order of strength.  Every key of the file
 * is the long flag's name (`hitch-ms`; `hitch_ms` is accepted too), so
 * what can be said on the command line can be said in the file.
 *
 * On SIGHUP the file is read again and the flags applied over it once
 * more; settings that need a restart (project, listen, state dir) keep
 * their old value and the log says so.
 */
#ifndef DAEMON_CONFIG_H
#define DAEMON_CONFIG_H

#include <limits.h>

#include "notifier/wake.h"

#define CONFIG_DEFAULT_LISTEN	"127.0.0.1:7567"

struct config {
	char			project[PATH_MAX];	/* absolute */
	char			listen_host[256];
	int			listen_port;
	char			state_dir[PATH_MAX];	/* "" = the default */
	char			config_file[PATH_MAX];	/* "" = none */
	int			poll;
	int			verbose;
	int			check_only;		/* -n */
	char			exec_cmd[4096];		/* "" = none */
	char			loop_level[16];		/* off/propose/apply */
	struct wake_config	wake;
};

/*
 * Build the configuration from argv (and the file it names).  Returns 0,
 * 1 after printing --help/--version (exit 0), or -1 with a message in
 * err (exit 2).
 */
int	config_load(struct config *c, int argc, char **argv, char *err,
	    size_t errcap);

/* Print the effective configuration as the JSON a config file takes. */
void	config_print(const struct config *c);

#endif
