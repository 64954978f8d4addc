/*
 * config — the daemon's settings: defaults, then the JSON config file,
 * then the command line, in that order of strength.  Every key of the file
 * is the long flag's name (`hitch-ms`; `hitch_ms` is accepted too), so
 * what can be said on the command line can be said in the file.
 *
 * On SIGHUP the file is read again and the flags applied over it once
 * more, and config_reload takes what changed into the running
 * configuration by the table's reload column: each setting is either
 * applied or keeps its old value and is named as needing a restart.
 */
#ifndef DAEMON_CONFIG_H
#define DAEMON_CONFIG_H

#include <limits.h>

#include "notifier/wake.h"

#define CONFIG_DEFAULT_LISTEN	"127.0.0.1:7567"
#define CONFIG_LIST_MAX		16	/* entries of a repeatable setting */
#define CONFIG_MAX_CONNS	256
#define CONFIG_HTTP_TIMEOUT	10	/* seconds */
#define CONFIG_ANSWER_WAIT	60	/* seconds a read waits for its answer */
#define CONFIG_MAX_SUBS		64	/* events subscribers at once */
#define CONFIG_ROTATE_WAIT_MS	5000	/* = TAILER_ROTATE_WAIT_MS */
/* Checkpoints (docs/checkpoints.md): a kill -9 costs at most this many
 * bytes of refold; a quiet ledger is saved soon, a busy one at least this
 * often. */
#define CONFIG_CKPT_BYTES	(16 * 1024 * 1024)
#define CONFIG_CKPT_IDLE_MS	1000	/* = the cursor's save: one wake-up */
#define CONFIG_CKPT_MAX_MS	600000

/* A repeatable setting (--allow-host a --allow-host b, or a JSON array). */
struct config_list {
	unsigned	n;
	char		v[CONFIG_LIST_MAX][256];
};

struct config {
	char			project[PATH_MAX];	/* absolute */
	char			listen_host[256];
	int			listen_port;
	char			state_dir[PATH_MAX];	/* "" = the default */
	char			config_file[PATH_MAX];	/* "" = none */
	int			poll;
	int64_t			rotate_wait_ms;	/* read a rotated file on */
	int			ckpt_on;	/* checkpoints kept and used */
	int64_t			ckpt_bytes, ckpt_idle_ms, ckpt_max_ms;
	int			verbose;
	int			check_only;		/* -n */
	char			exec_cmd[4096];		/* "" = none */
	char			loop_level[16];		/* off/propose/apply */
	struct config_list	allow_hosts;		/* Host names beyond loopback */
	struct config_list	allow_origins;		/* Origins beyond loopback */
	unsigned		max_conns;		/* HTTP/WS connections */
	unsigned		http_timeout;		/* seconds, slow clients */
	unsigned		answer_wait;		/* seconds, a read's answer */
	unsigned		max_subs;		/* events subscribers */
	char			page_dir[PATH_MAX];	/* "" = found (api.md) */
	char			 sink_url[2048];	/* "" = off (docs/team.md) */
	unsigned		 sink_batch_rows, sink_batch_bytes;
	unsigned		 sink_batch_ms, sink_timeout_ms;
	unsigned		 sink_backoff_max_ms;
	int			listen_loopback;	/* set by config_load */
	struct wake_config	wake;
};

/*
 * Build the configuration from argv (and the file it names).  Returns 0,
 * 1 after printing --help/--version (exit 0), or -1 with a message in
 * err (exit 2).
 */
int	config_load(struct config *c, int argc, char **argv, char *err,
	    size_t errcap);

/*
 * The fix loop's automation level in effect: `settings` (settings.json's,
 * "" or NULL for none) wins over the config's `loop`, and "off" is the
 * default.  *source (may be NULL) says which: "settings", "config" or
 * "default".  The API and the wake lines both use this one rule.
 */
const char *config_loop_level(const struct config *c, const char *settings,
	    const char **source);

/*
 * SIGHUP: `next` was loaded from the same argv and the file as it is now.
 * Every setting that differs is copied into `cur` (and named in
 * `applied`) or, when it needs a restart, left as it is and named in
 * `restart` — comma-separated names, "" when none.  The caller then tells
 * the parts that copied a setting at start (the log's level, the
 * tailers' rotate-wait, the rate limits).  Returns how many were applied.
 */
int	config_reload(struct config *cur, const struct config *next,
	    char *restart, size_t cap, char *applied, size_t acap);

/* The table, for tests and the docs: the i-th setting's name (NULL past
 * the end), whether the config file may set it and whether a change needs
 * a restart; whether two configurations agree on it (-1 past the end). */
int	config_setting_count(void);
const char *config_setting_name(int i, int *file, int *restart);
int	config_setting_same(const struct config *a, const struct config *b,
	    int i);

/* Print the effective configuration as the JSON a config file takes. */
void	config_print(const struct config *c);

#endif
