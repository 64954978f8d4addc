/*
 * config — defaults < config file < flags (see config.h).
 *
 * One table describes every setting once: its flag, its config key, its
 * type and where it lives.  The flag parser and the file reader both walk
 * it, so the two can never disagree about a name.
 */
#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <arpa/inet.h>

#include <cjson/cJSON.h>

#include "config.h"
#include "sink/clickhouse.h"
#include "sink/sink.h"

enum kind { K_STR, K_BOOL, K_INT, K_DOUBLE, K_MS, K_UINT, K_LIST };

/*
 * What SIGHUP does with a setting whose value changed (config_reload):
 * R_APPLY copies it into the running configuration, where the part that
 * uses it reads it (the next request, wake, save, rotation); R_RESTART
 * keeps the old value and names it in the log, because the part that uses
 * it took it once at start (a socket, a file, a thread, a table sized by
 * it); R_ARGV is the command line's alone, which a reload reads again
 * unchanged.
 */
enum reload { R_APPLY, R_RESTART, R_ARGV };

struct setting {
	const char	*name;
	enum kind	 kind;
	size_t		 off;		/* in struct config */
	size_t		 size;		/* K_STR buffer size */
	int		 file;		/* may appear in the config file */
	enum reload	 reload;	/* on SIGHUP */
	const char	*help;
};

#define S(f)	offsetof(struct config, f), sizeof(((struct config *)0)->f)
#define W(f)	offsetof(struct config, wake.f), 0

static const struct setting settings[] = {
	{ "project", K_STR, S(project), 1, R_RESTART, "the game project (default .)" },
	{ "listen", K_STR, S(listen_host), 1, R_RESTART,
	    "ADDR:PORT to serve on (default " CONFIG_DEFAULT_LISTEN
	    "; port 0 picks a free one)" },
	{ "state-dir", K_STR, S(state_dir), 1, R_RESTART,
	    "state directory (default $XDG_STATE_HOME/sloptimize/<project>)" },
	{ "config", K_STR, S(config_file), 0, R_ARGV, "JSON config file" },
	{ "poll", K_BOOL, S(poll), 1, R_RESTART, "stat-poll the ledger instead of inotify" },
	{ "rotate-wait", K_MS, S(rotate_wait_ms), 1, R_APPLY,
	    "read a rotated-away ledger N ms more for late lines (5000; 0 off)" },
	{ "checkpoint", K_BOOL, S(ckpt_on), 1, R_RESTART,
	    "keep the fold in a checkpoint, so a restart folds only what is "
	    "new (on; --checkpoint=0 off)" },
	{ "checkpoint-bytes", K_MS, S(ckpt_bytes), 1, R_APPLY,
	    "checkpoint once this many ledger bytes are folded since (16777216)" },
	{ "checkpoint-idle-ms", K_MS, S(ckpt_idle_ms), 1, R_APPLY,
	    "checkpoint once the ledger is quiet this long (1000)" },
	{ "checkpoint-max-ms", K_MS, S(ckpt_max_ms), 1, R_APPLY,
	    "checkpoint at most this long after a change (600000)" },
	{ "verbose", K_BOOL, S(verbose), 1, R_APPLY, "debug logging (-v)" },
	{ "check", K_BOOL, S(check_only), 0, R_ARGV, "check the configuration and exit (-n)" },
	{ "exec", K_STR, S(exec_cmd), 1, R_RESTART, "run CMD (sh -c) for every wake" },
	{ "loop", K_STR, S(loop_level), 1, R_APPLY, "fix loop automation level shown in wakes" },
	{ "allow-host", K_LIST, S(allow_hosts), 1, R_APPLY,
	    "also accept this Host name (repeatable; loopback names always)" },
	{ "allow-origin", K_LIST, S(allow_origins), 1, R_APPLY,
	    "also accept this Origin, e.g. http://box:5173 or http://box:* (repeatable)" },
	{ "max-connections", K_UINT, S(max_conns), 1, R_RESTART,
	    "HTTP and WebSocket connections at once (256; more get 503)" },
	{ "http-timeout", K_UINT, S(http_timeout), 1, R_RESTART,
	    "seconds a client has to send its request, and to take each piece "
	    "of an answer (10)" },
	{ "answer-wait", K_UINT, S(answer_wait), 1, R_APPLY,
	    "seconds a read waits for an answer being built, then 503 with "
	    "Retry-After (60)" },
	{ "max-subscribers", K_UINT, S(max_subs), 1, R_APPLY,
	    "events-socket subscribers at once (64; more get 503 at the "
	    "upgrade)" },
	{ "page-dir", K_STR, S(page_dir), 1, R_RESTART,
	    "serve the panel from DIR (default: beside the program, or the installed share)" },
	{ "sink", K_STR, S(sink_url), 1, R_RESTART,
	    "send every record to ClickHouse: http://HOST:8123/?database=DB (off)" },
	{ "sink-batch-rows", K_UINT, S(sink_batch_rows), 1, R_RESTART,
	    "rows per insert at most (10000)" },
	{ "sink-batch-bytes", K_UINT, S(sink_batch_bytes), 1, R_RESTART,
	    "bytes per insert at most (8388608)" },
	{ "sink-batch-ms", K_UINT, S(sink_batch_ms), 1, R_RESTART,
	    "a record waits at most N ms before it is sent (1000)" },
	{ "sink-timeout-ms", K_UINT, S(sink_timeout_ms), 1, R_RESTART,
	    "one insert's time limit (10000)" },
	{ "sink-backoff-max-ms", K_UINT, S(sink_backoff_max_ms), 1, R_RESTART,
	    "the longest wait between retries (30000)" },
	{ "hitch-ms", K_DOUBLE, W(hitch_ms), 1, R_APPLY, "a hitch this long wakes (100)" },
	{ "per-fp-ms", K_MS, W(per_fp_ms), 1, R_APPLY, "one wake per footprint per N ms (10000; 0 off)" },
	{ "global-max", K_UINT, W(global_max), 1, R_APPLY, "at most N wakes … (6; 0 off)" },
	{ "global-window-ms", K_MS, W(global_window_ms), 1, R_APPLY, "… per N ms (60000)" },
	{ "recent-ms", K_MS, W(recent_ms), 1, R_APPLY, "records appended while stopped wake if this recent (600000)" },
	{ "exec-max", K_UINT, W(exec_max), 1, R_RESTART, "--exec children at once (4)" },
	{ "exec-queue", K_UINT, W(exec_queue), 1, R_RESTART, "--exec runs waiting (64)" },
	{ "exec-timeout-ms", K_MS, W(exec_timeout_ms), 1, R_RESTART, "kill a hook after N ms (60000)" },
	{ "desktop", K_INT, W(desktop), 1, R_RESTART, "desktop notifications, 1 on 0 off (1)" },
	{ "desktop-ms", K_MS, W(desktop_ms), 1, R_RESTART, "at most one popup per N ms (5000)" },
};
#define NSETTINGS	(sizeof(settings) / sizeof(settings[0]))

static const struct setting *
find(const char *name, size_t n)
{
	size_t	i, j;

	for (i = 0; i < NSETTINGS; i++) {
		const char	*s = settings[i].name;

		if (strlen(s) != n)
			continue;
		for (j = 0; j < n; j++)
			if (s[j] != name[j] && !(s[j] == '-' && name[j] == '_'))
				break;
		if (j == n)
			return &settings[i];
	}
	return NULL;
}

static int
set_value(struct config *c, const struct setting *s, const char *v,
    char *err, size_t errcap)
{
	char	*base = (char *)c, *end;
	double	 d;

	if (s->kind == K_STR) {
		if (strlen(v) >= s->size) {
			snprintf(err, errcap, "%s: value too long", s->name);
			return -1;
		}
		strcpy(base + s->off, v);
		return 0;
	}
	if (s->kind == K_LIST) {
		struct config_list	*l = (struct config_list *)(base + s->off);
		unsigned		 i;

		if (strlen(v) >= sizeof(l->v[0]) || *v == '\0') {
			snprintf(err, errcap, "%s: bad value '%s'", s->name, v);
			return -1;
		}
		for (i = 0; i < l->n; i++)
			if (strcmp(l->v[i], v) == 0)
				return 0;
		if (l->n == CONFIG_LIST_MAX) {
			snprintf(err, errcap, "%s: at most %d values", s->name,
			    CONFIG_LIST_MAX);
			return -1;
		}
		strcpy(l->v[l->n++], v);
		return 0;
	}
	if (s->kind == K_BOOL) {
		*(int *)(base + s->off) = strcmp(v, "0") != 0 &&
		    strcmp(v, "false") != 0;
		return 0;
	}
	errno = 0;
	d = strtod(v, &end);
	if (*v == '\0' || *end != '\0' || errno != 0 || d < 0 || d != d ||
	    d > 1e15) {
		snprintf(err, errcap, "%s: '%s' is not a number >= 0", s->name,
		    v);
		return -1;
	}
	switch (s->kind) {
	case K_INT: *(int *)(base + s->off) = (int)d; break;
	case K_DOUBLE: *(double *)(base + s->off) = d; break;
	case K_MS: *(int64_t *)(base + s->off) = (int64_t)d; break;
	case K_UINT: *(unsigned *)(base + s->off) = (unsigned)d; break;
	default: break;
	}
	return 0;
}

static int
load_file(struct config *c, const char *path, char *err, size_t errcap)
{
	FILE	*f;
	char	*buf = NULL;
	long	 n;
	cJSON	*root = NULL, *it;
	int	 rc = -1;

	if ((f = fopen(path, "r")) == NULL) {
		snprintf(err, errcap, "config %s: %s", path, strerror(errno));
		return -1;
	}
	if (fseek(f, 0, SEEK_END) != 0 || (n = ftell(f)) < 0 ||
	    n > 1024 * 1024 || fseek(f, 0, SEEK_SET) != 0 ||
	    (buf = malloc((size_t)n + 1)) == NULL ||
	    fread(buf, 1, (size_t)n, f) != (size_t)n) {
		snprintf(err, errcap, "config %s: cannot read it (or over 1 MiB)",
		    path);
		goto out;
	}
	buf[n] = '\0';
	if ((root = cJSON_Parse(buf)) == NULL || !cJSON_IsObject(root)) {
		snprintf(err, errcap, "config %s: not a JSON object", path);
		goto out;
	}
	cJSON_ArrayForEach(it, root) {
		const struct setting	*s = find(it->string,
					    strlen(it->string));
		char			 num[64];
		const char		*v;

		if (s == NULL || !s->file) {
			snprintf(err, errcap, "config %s: unknown key '%s'",
			    path, it->string);
			goto out;
		}
		if (s->kind == K_LIST && cJSON_IsArray(it)) {
			const cJSON	*e;

			cJSON_ArrayForEach(e, it) {
				if (!cJSON_IsString(e)) {
					snprintf(err, errcap, "config %s: '%s' "
					    "is a list of strings", path,
					    it->string);
					goto out;
				}
				if (set_value(c, s, e->valuestring, err,
				    errcap))
					goto out;
			}
			continue;
		}
		if (cJSON_IsString(it))
			v = it->valuestring;
		else if (cJSON_IsBool(it))
			v = cJSON_IsTrue(it) ? "1" : "0";
		else if (cJSON_IsNumber(it)) {
			snprintf(num, sizeof(num), "%.17g", it->valuedouble);
			v = num;
		} else {
			snprintf(err, errcap, "config %s: '%s' must be a "
			    "string, number or boolean", path, it->string);
			goto out;
		}
		if (set_value(c, s, v, err, errcap))
			goto out;
	}
	rc = 0;
out:
	cJSON_Delete(root);
	free(buf);
	fclose(f);
	return rc;
}

static void
usage(FILE *f)
{
	size_t	i;

	fprintf(f, "usage: sloptimized [--project DIR] [--listen ADDR:PORT] "
	    "[--state-dir DIR]\n                   [--config FILE] [--poll] "
	    "[--exec CMD] [-v] [-n] [--SETTING VALUE]\n\n");
	for (i = 0; i < NSETTINGS; i++)
		fprintf(f, "  --%-18s %s\n", settings[i].name, settings[i].help);
	fprintf(f, "\nEvery setting but config and check is also a key of "
	    "the JSON config file.\n");
}

/* Apply argv; with files_only, only find --config. */
static int
apply_args(struct config *c, int argc, char **argv, int config_only,
    char *err, size_t errcap)
{
	int	i;

	for (i = 1; i < argc; i++) {
		const char		*a = argv[i], *eq, *v;
		const struct setting	*s;
		size_t			 n;

		if (strcmp(a, "-v") == 0)
			a = "--verbose";
		else if (strcmp(a, "-n") == 0)
			a = "--check";
		if (strncmp(a, "--", 2) != 0) {
			snprintf(err, errcap, "unexpected argument '%s'", a);
			return -1;
		}
		a += 2;
		eq = strchr(a, '=');
		n = eq ? (size_t)(eq - a) : strlen(a);
		if ((s = find(a, n)) == NULL) {
			snprintf(err, errcap, "unknown option '--%.*s'",
			    (int)n, a);
			return -1;
		}
		if (s->kind == K_BOOL && eq == NULL)
			v = "1";
		else if (eq)
			v = eq + 1;
		else if (i + 1 < argc)
			v = argv[++i];
		else {
			snprintf(err, errcap, "--%s needs a value", s->name);
			return -1;
		}
		if (config_only && strcmp(s->name, "config") != 0)
			continue;
		if (set_value(c, s, v, err, errcap))
			return -1;
	}
	return 0;
}

/*
 * The listen address must be numeric: libwebsockets takes anything else
 * for an interface name, and when it cannot find that interface (or
 * getifaddrs() fails) it binds the wildcard address without a word.
 * "localhost" is the one name we translate.  A listen address that is not
 * loopback needs --allow-host for the name clients will use: there is no
 * other way for a browser to reach it that passes the Host check, and
 * saying so at start beats a daemon that answers every request with 421.
 */
static int
check_listen(struct config *c, char *err, size_t errcap)
{
	struct in_addr	a4;
	struct in6_addr	a6;

	if (strcmp(c->listen_host, "localhost") == 0)
		strcpy(c->listen_host, "127.0.0.1");
	if (inet_pton(AF_INET, c->listen_host, &a4) == 1)
		c->listen_loopback = (ntohl(a4.s_addr) >> 24) == 127;
	else if (inet_pton(AF_INET6, c->listen_host, &a6) == 1)
		c->listen_loopback = IN6_IS_ADDR_LOOPBACK(&a6);
	else {
		snprintf(err, errcap, "--listen takes a numeric address "
		    "(127.0.0.1, ::1, or localhost), not '%s'", c->listen_host);
		return -1;
	}
	if (!c->listen_loopback && c->allow_hosts.n == 0) {
		snprintf(err, errcap, "--listen %s is not a loopback address: "
		    "name the host clients will use with --allow-host NAME "
		    "(writes then need an allowed Origin or the token in the "
		    "state directory)", c->listen_host);
		return -1;
	}
	return 0;
}

/* Host names: letters, digits, '.', '-', or a bracketed IPv6 address;
 * no port (any port is accepted).  Origins: scheme://host[:port|:*]. */
static int
valid_hostname(const char *h, size_t n)
{
	size_t	i;

	if (n == 0)
		return 0;
	if (h[0] == '[') {
		char		 b[64];
		struct in6_addr	 a6;

		if (n < 3 || h[n - 1] != ']' || n - 2 >= sizeof(b))
			return 0;
		memcpy(b, h + 1, n - 2);
		b[n - 2] = '\0';
		return inet_pton(AF_INET6, b, &a6) == 1;
	}
	for (i = 0; i < n; i++)
		if (!((h[i] >= 'a' && h[i] <= 'z') || (h[i] >= 'A' &&
		    h[i] <= 'Z') || (h[i] >= '0' && h[i] <= '9') ||
		    h[i] == '.' || h[i] == '-'))
			return 0;
	return 1;
}

static int
check_allow(struct config *c, char *err, size_t errcap)
{
	unsigned	i;

	for (i = 0; i < c->allow_hosts.n; i++)
		if (!valid_hostname(c->allow_hosts.v[i],
		    strlen(c->allow_hosts.v[i]))) {
			snprintf(err, errcap, "--allow-host takes a host name "
			    "without a port, not '%s'", c->allow_hosts.v[i]);
			return -1;
		}
	for (i = 0; i < c->allow_origins.n; i++) {
		const char	*o = c->allow_origins.v[i], *h, *colon;
		size_t		 n;

		if (strncmp(o, "http://", 7) == 0)
			h = o + 7;
		else if (strncmp(o, "https://", 8) == 0)
			h = o + 8;
		else
			goto bad;
		colon = h[0] == '[' ? strchr(h, ']') : h;
		if (colon == NULL)
			goto bad;
		colon = strchr(colon, ':');
		n = colon ? (size_t)(colon - h) : strlen(h);
		if (!valid_hostname(h, n))
			goto bad;
		if (colon != NULL && strcmp(colon, ":*") != 0) {
			const char	*p = colon + 1;

			if (*p == '\0' || strlen(p) > 5)
				goto bad;
			for (; *p; p++)
				if (*p < '0' || *p > '9')
					goto bad;
		}
		continue;
bad:
		snprintf(err, errcap, "--allow-origin takes scheme://host, "
		    "scheme://host:port or scheme://host:*, not '%s'", o);
		return -1;
	}
	return 0;
}

/* The sink is off unless a URL is given; its numbers within reason. */
static int
check_sink(const struct config *c, char *err, size_t errcap)
{
	struct ch_url	u;
	char		why[CH_ERR_MAX];

	if (c->sink_url[0] != '\0' &&
	    ch_url_parse(c->sink_url, &u, why, sizeof(why)) != 0) {
		snprintf(err, errcap, "--sink: %s", why);
		return -1;
	}
	if (c->sink_batch_rows < 1 || c->sink_batch_rows > 1000000 ||
	    c->sink_batch_bytes < 65536 || c->sink_batch_bytes > (256u << 20) ||
	    c->sink_batch_ms < 1 || c->sink_batch_ms > 3600000 ||
	    c->sink_timeout_ms < 100 || c->sink_timeout_ms > 600000 ||
	    c->sink_backoff_max_ms < 250 || c->sink_backoff_max_ms > 3600000) {
		snprintf(err, errcap, "sink settings: batch-rows 1 to 1000000, "
		    "batch-bytes 65536 to 268435456, batch-ms 1 to 3600000, "
		    "timeout-ms 100 to 600000, backoff-max-ms 250 to 3600000");
		return -1;
	}
	return 0;
}

int
config_load(struct config *c, int argc, char **argv, char *err, size_t errcap)
{
	char	 real[PATH_MAX], *colon;
	int	 i;
	long	 port;

	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--help") == 0 ||
		    strcmp(argv[i], "-h") == 0) {
			usage(stdout);
			return 1;
		}
		if (strcmp(argv[i], "--version") == 0) {
			printf("sloptimized %s\n", SLOPTIMIZE_VERSION);
			return 1;
		}
	}
	memset(c, 0, sizeof(*c));
	wake_config_defaults(&c->wake);
	strcpy(c->project, ".");
	strcpy(c->listen_host, CONFIG_DEFAULT_LISTEN);
	c->max_conns = CONFIG_MAX_CONNS;
	c->http_timeout = CONFIG_HTTP_TIMEOUT;
	c->answer_wait = CONFIG_ANSWER_WAIT;
	c->max_subs = CONFIG_MAX_SUBS;
	c->rotate_wait_ms = CONFIG_ROTATE_WAIT_MS;
	c->ckpt_on = 1;
	c->ckpt_bytes = CONFIG_CKPT_BYTES;
	c->ckpt_idle_ms = CONFIG_CKPT_IDLE_MS;
	c->ckpt_max_ms = CONFIG_CKPT_MAX_MS;
	c->sink_batch_rows = SINK_BATCH_ROWS;
	c->sink_batch_bytes = SINK_BATCH_BYTES;
	c->sink_batch_ms = SINK_BATCH_MS;
	c->sink_timeout_ms = SINK_TIMEOUT_MS;
	c->sink_backoff_max_ms = SINK_BACKOFF_MAX_MS;
	if (apply_args(c, argc, argv, 1, err, errcap))
		return -1;
	if (c->config_file[0] != '\0' &&
	    load_file(c, c->config_file, err, errcap))
		return -1;
	if (apply_args(c, argc, argv, 0, err, errcap))
		return -1;

	if (realpath(c->project, real) == NULL) {
		snprintf(err, errcap, "project %s: %s", c->project,
		    strerror(errno));
		return -1;
	}
	strcpy(c->project, real);
	/* ADDR:PORT, [v6]:PORT */
	if ((colon = strrchr(c->listen_host, ':')) == NULL) {
		snprintf(err, errcap, "--listen takes ADDR:PORT, not '%s'",
		    c->listen_host);
		return -1;
	}
	{
		char	*end;

		port = strtol(colon + 1, &end, 10);
		if (colon[1] == '\0' || *end != '\0' || port < 0 ||
		    port > 65535) {
			snprintf(err, errcap, "--listen: bad port in '%s'",
			    c->listen_host);
			return -1;
		}
	}
	c->listen_port = (int)port;
	*colon = '\0';
	if (c->listen_host[0] == '[') {
		size_t	n = strlen(c->listen_host);

		if (n < 3 || c->listen_host[n - 1] != ']') {
			snprintf(err, errcap, "--listen: bad address");
			return -1;
		}
		memmove(c->listen_host, c->listen_host + 1, n - 2);
		c->listen_host[n - 2] = '\0';
	}
	if (check_listen(c, err, errcap) || check_allow(c, err, errcap))
		return -1;
	if (c->max_conns < 8 || c->max_conns > 4096) {
		snprintf(err, errcap, "--max-connections is 8 to 4096");
		return -1;
	}
	if (c->http_timeout < 1 || c->http_timeout > 3600) {
		snprintf(err, errcap, "--http-timeout is 1 to 3600 seconds");
		return -1;
	}
	if (c->answer_wait < 1 || c->answer_wait > 3600) {
		snprintf(err, errcap, "--answer-wait is 1 to 3600 seconds");
		return -1;
	}
	/* the default follows a lowered --max-connections (a daemon started
	 * with --max-connections 8 must not need --max-subscribers too); a
	 * value of the user's above it is an error */
	if (c->max_subs == CONFIG_MAX_SUBS && c->max_subs > c->max_conns)
		c->max_subs = c->max_conns;
	if (c->max_subs < 1 || c->max_subs > c->max_conns) {
		snprintf(err, errcap, "--max-subscribers is 1 to "
		    "--max-connections (%u)", c->max_conns);
		return -1;
	}
	if (check_sink(c, err, errcap))
		return -1;
	if (c->loop_level[0] != '\0' && strcmp(c->loop_level, "off") &&
	    strcmp(c->loop_level, "propose") && strcmp(c->loop_level, "apply")) {
		snprintf(err, errcap, "--loop is off, propose or apply");
		return -1;
	}
	c->wake.loop = c->loop_level[0] ? c->loop_level : NULL;
	return 0;
}

void
config_print(const struct config *c)
{
	cJSON		*o = cJSON_CreateObject();
	char		*s, listen[300];
	const char	*base = (const char *)c;
	size_t		 i;

	for (i = 0; i < NSETTINGS; i++) {
		const struct setting	*st = &settings[i];

		if (!st->file)
			continue;
		switch (st->kind) {
		case K_STR:
			if (strcmp(st->name, "listen") == 0) {
				snprintf(listen, sizeof(listen),
				    strchr(c->listen_host, ':') ? "[%s]:%d" :
				    "%s:%d", c->listen_host, c->listen_port);
				cJSON_AddStringToObject(o, st->name, listen);
			} else
				cJSON_AddStringToObject(o, st->name,
				    base + st->off);
			break;
		case K_BOOL:
			cJSON_AddBoolToObject(o, st->name,
			    *(const int *)(base + st->off));
			break;
		case K_INT:
			cJSON_AddNumberToObject(o, st->name,
			    *(const int *)(base + st->off));
			break;
		case K_DOUBLE:
			cJSON_AddNumberToObject(o, st->name,
			    *(const double *)(base + st->off));
			break;
		case K_MS:
			cJSON_AddNumberToObject(o, st->name,
			    (double)*(const int64_t *)(base + st->off));
			break;
		case K_UINT:
			cJSON_AddNumberToObject(o, st->name,
			    *(const unsigned *)(base + st->off));
			break;
		case K_LIST: {
			const struct config_list *l = (const void *)(base +
						    st->off);
			cJSON			*a = cJSON_AddArrayToObject(o,
						    st->name);
			unsigned		 j;

			for (j = 0; j < l->n; j++)
				cJSON_AddItemToArray(a,
				    cJSON_CreateString(l->v[j]));
			break;
		}
		}
	}
	if ((s = cJSON_Print(o)) != NULL)
		printf("%s\n", s);
	free(s);
	cJSON_Delete(o);
}

/* K_STR, K_LIST and the numbers, by the kind's own type. */
static size_t
value_size(const struct setting *s)
{
	switch (s->kind) {
	case K_STR: return s->size;
	case K_LIST: return sizeof(struct config_list);
	case K_BOOL: case K_INT: return sizeof(int);
	case K_DOUBLE: return sizeof(double);
	case K_MS: return sizeof(int64_t);
	case K_UINT: return sizeof(unsigned);
	}
	return 0;
}

static int
same_value(const struct config *a, const struct config *b,
    const struct setting *s)
{
	const char	*pa = (const char *)a + s->off;
	const char	*pb = (const char *)b + s->off;

	if (s->kind == K_STR)
		return strcmp(pa, pb) == 0 && (strcmp(s->name, "listen") != 0 ||
		    a->listen_port == b->listen_port);
	if (s->kind == K_LIST) {
		const struct config_list *la = (const void *)pa;
		const struct config_list *lb = (const void *)pb;
		unsigned		  i;

		if (la->n != lb->n)
			return 0;
		for (i = 0; i < la->n; i++)
			if (strcmp(la->v[i], lb->v[i]) != 0)
				return 0;
		return 1;
	}
	return memcmp(pa, pb, value_size(s)) == 0;
}

int
config_reload(struct config *cur, const struct config *next, char *restart,
    size_t cap, char *applied, size_t acap)
{
	size_t	i, rn = 0, an = 0;
	int	n = 0;

	if (cap > 0)
		restart[0] = '\0';
	if (acap > 0)
		applied[0] = '\0';
	for (i = 0; i < NSETTINGS; i++) {
		const struct setting	*s = &settings[i];

		if (s->reload == R_ARGV || same_value(cur, next, s))
			continue;
		if (s->reload == R_RESTART) {
			if (rn < cap)
				rn += (size_t)snprintf(restart + rn, cap - rn,
				    "%s%s", rn ? ", " : "", s->name);
			continue;
		}
		memcpy((char *)cur + s->off, (const char *)next + s->off,
		    value_size(s));
		if (an < acap)
			an += (size_t)snprintf(applied + an, acap - an, "%s%s",
			    an ? ", " : "", s->name);
		n++;
	}
	/* those connected over a lowered cap stay; the cap never passes
	 * the connections', which needs a restart */
	if (cur->max_subs > cur->max_conns)
		cur->max_subs = cur->max_conns;
	return n;
}

int
config_setting_count(void)
{
	return (int)NSETTINGS;
}

const char *
config_setting_name(int i, int *file, int *restart)
{
	if (i < 0 || (size_t)i >= NSETTINGS)
		return NULL;
	if (file != NULL)
		*file = settings[i].file;
	if (restart != NULL)
		*restart = settings[i].reload == R_RESTART;
	return settings[i].name;
}

int
config_setting_same(const struct config *a, const struct config *b, int i)
{
	if (i < 0 || (size_t)i >= NSETTINGS)
		return -1;
	return same_value(a, b, &settings[i]);
}

const char *
config_loop_level(const struct config *c, const char *settings,
    const char **source)
{
	const char	*src, *lv;

	if (settings != NULL && settings[0] != '\0') {
		src = "settings";
		lv = settings;
	} else if (c->loop_level[0] != '\0') {
		src = "config";
		lv = c->loop_level;
	} else {
		src = "default";
		lv = "off";
	}
	if (source != NULL)
		*source = src;
	return lv;
}
