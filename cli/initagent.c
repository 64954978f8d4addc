/*
 * initagent — `sloptimize init-agent`: set a game project up for a coding
 * agent (Claude Code), in the project's own files:
 *
 *   .claude/settings.json   a UserPromptSubmit hook: sloptimize hook-status
 *   .mcp.json               the MCP server: sloptimize mcp
 *   .claude/skills/sloptimize/SKILL.md
 *                           the doctrine (skills/sloptimize/SKILL.md,
 *                           compiled in), with this project's commands,
 *                           the Monitor's among them
 *   .gitignore              what one machine makes (bench runs, goldens,
 *                           profile.json…), never the ledgers
 *                           (project/gitignore.h)
 *   CLAUDE.md               a fragment between two marker lines: the loop
 *                           and its rules in a dozen lines, read by every
 *                           session, not only when the skill is loaded;
 *                           appended after the user's text, never into it
 *
 * Invariants: a user's own entries are never changed or removed — the JSON
 * files are merged with cJSON, our entry added only where none of ours is;
 * an entry of the user's under our name is left alone and said; a file
 * that is not valid JSON is not touched.  Running it twice changes
 * nothing the second time.  It shows what it will write before writing;
 * without a terminal it only shows, unless --yes (docs/agents.md).
 */
#include <sys/stat.h>

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "cli.h"
#include "project/bench.h"
#include "project/gitignore.h"
#include "project/statedir.h"
#include "verbs.h"

extern const char initagent_skill[];	/* $(BUILD)/gen/skill.c */

#define FILE_MAX	(4 * 1024 * 1024)

#define NPLANS		5	/* the files below, in the order shown */

enum action { A_CREATE, A_UPDATE, A_UNCHANGED, A_CONFLICT, A_INVALID };

static const char *const action_names[] = {
	"create", "update", "unchanged", "left alone", "not valid JSON"
};

/* One file of the plan. */
struct plan {
	const char	*what;
	char		 path[PATH_MAX + 64];
	enum action	 action;
	char		*text;		/* what to write (create/update) */
	char		 note[PATH_MAX * 20];	/* what is added, or why not */
};

/* The program to name in the entries: `sloptimize` if that is what PATH
 * finds, else this very binary by its absolute path. */
static void
program(char *out, size_t cap)
{
	char	self[PATH_MAX], cand[PATH_MAX], found[PATH_MAX];
	char	*path = getenv("PATH"), *copy, *dir, *save = NULL;
	ssize_t	n = readlink("/proc/self/exe", self, sizeof(self) - 1);

	snprintf(out, cap, "sloptimize");
	if (n <= 0)
		return;		/* not Linux: trust PATH */
	self[n] = '\0';
	if (path != NULL && (copy = strdup(path)) != NULL) {
		for (dir = strtok_r(copy, ":", &save); dir != NULL;
		    dir = strtok_r(NULL, ":", &save)) {
			snprintf(cand, sizeof(cand), "%s/sloptimize", *dir ? dir :
			    ".");
			if (access(cand, X_OK) == 0 && realpath(cand, found) &&
			    strcmp(found, self) == 0) {
				free(copy);
				return;
			}
		}
		free(copy);
	}
	snprintf(out, cap, "%s", self);
}

/* A shell word: as is when it is plain, else in single quotes. */
static void
shell_quote(const char *s, char *out, size_t cap)
{
	size_t	i, o = 0;

	if (*s != '\0' && strspn(s, "abcdefghijklmnopqrstuvwxyz"
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789/._-+:@%=,") == strlen(s)) {
		snprintf(out, cap, "%s", s);
		return;
	}
	if (cap < 3)
		return;
	out[o++] = '\'';
	for (i = 0; s[i] != '\0' && o + 5 < cap; i++) {
		if (s[i] == '\'') {
			memcpy(out + o, "'\\''", 4);
			o += 4;
		} else
			out[o++] = s[i];
	}
	out[o++] = '\'';
	out[o] = '\0';
}

/* The file's text, NULL with *missing when it does not exist. */
static char *
slurp(const char *path, int *missing)
{
	FILE	*f;
	char	*buf;
	size_t	 n;

	*missing = 0;
	if ((f = fopen(path, "r")) == NULL) {
		*missing = errno == ENOENT;
		return NULL;
	}
	if ((buf = malloc(FILE_MAX + 1)) == NULL) {
		fclose(f);
		return NULL;
	}
	n = fread(buf, 1, FILE_MAX, f);
	fclose(f);
	buf[n] = '\0';
	return buf;
}

/* Pretty JSON text with a final newline. */
static char *
json_text(const cJSON *o)
{
	char	*s = cJSON_Print(o), *t;
	size_t	 n;

	if (s == NULL)
		return NULL;
	n = strlen(s);
	if ((t = realloc(s, n + 2)) == NULL) {
		free(s);
		return NULL;
	}
	t[n] = '\n';
	t[n + 1] = '\0';
	return t;
}

/* Does any hook command under hooks.UserPromptSubmit run hook-status? */
static int
has_hook(const cJSON *ups)
{
	const cJSON	*group, *h;
	const char	*cmd;

	cJSON_ArrayForEach(group, ups)
		cJSON_ArrayForEach(h, cJSON_GetObjectItemCaseSensitive(group,
		    "hooks")) {
			cmd = cJSON_GetStringValue(
			    cJSON_GetObjectItemCaseSensitive(h, "command"));
			if (cmd != NULL && strstr(cmd, "sloptimize") != NULL &&
			    strstr(cmd, "hook-status") != NULL)
				return 1;
		}
	return 0;
}

/* .claude/settings.json: our UserPromptSubmit hook, beside the user's. */
static void
plan_settings(struct plan *p, const char *project, const char *command)
{
	int		 missing;
	char		*old = slurp(p->path, &missing);
	cJSON		*doc, *hooks, *ups, *group, *h;

	snprintf(p->note, sizeof(p->note), "hooks.UserPromptSubmit: "
	    "{\"type\": \"command\", \"command\": \"%s\"}", command);
	(void)project;
	if (old == NULL && !missing) {
		p->action = A_INVALID;
		snprintf(p->note, sizeof(p->note), "cannot read it: %s",
		    strerror(errno));
		return;
	}
	doc = old ? cJSON_Parse(old) : cJSON_CreateObject();
	if (!cJSON_IsObject(doc) ||
	    ((hooks = cJSON_GetObjectItemCaseSensitive(doc, "hooks")) != NULL &&
	    !cJSON_IsObject(hooks)) ||
	    (hooks != NULL && (ups = cJSON_GetObjectItemCaseSensitive(hooks,
	    "UserPromptSubmit")) != NULL && !cJSON_IsArray(ups))) {
		p->action = A_INVALID;
		snprintf(p->note, sizeof(p->note), "not a settings object this "
		    "can add a hook to (hooks.UserPromptSubmit must be a list); "
		    "left alone — add the hook by hand: %s", command);
		cJSON_Delete(doc);
		free(old);
		return;
	}
	if (hooks == NULL)
		hooks = cJSON_AddObjectToObject(doc, "hooks");
	if ((ups = cJSON_GetObjectItemCaseSensitive(hooks,
	    "UserPromptSubmit")) == NULL)
		ups = cJSON_AddArrayToObject(hooks, "UserPromptSubmit");
	if (has_hook(ups)) {
		p->action = A_UNCHANGED;
		snprintf(p->note, sizeof(p->note), "a UserPromptSubmit hook "
		    "already runs sloptimize hook-status");
	} else {
		group = cJSON_CreateObject();
		h = cJSON_CreateObject();
		cJSON_AddStringToObject(h, "type", "command");
		cJSON_AddStringToObject(h, "command", command);
		cJSON_AddItemToArray(cJSON_AddArrayToObject(group, "hooks"), h);
		cJSON_AddItemToArray(ups, group);
		p->action = old ? A_UPDATE : A_CREATE;
		p->text = json_text(doc);
	}
	cJSON_Delete(doc);
	free(old);
}

/* .mcp.json: mcpServers.sloptimize, unless the user has one by that name. */
static void
plan_mcp(struct plan *p, const char *prog, const char *project)
{
	int		 missing;
	char		*old = slurp(p->path, &missing);
	cJSON		*doc, *servers, *ours, *have, *args;

	ours = cJSON_CreateObject();
	cJSON_AddStringToObject(ours, "type", "stdio");
	cJSON_AddStringToObject(ours, "command", prog);
	args = cJSON_AddArrayToObject(ours, "args");
	cJSON_AddItemToArray(args, cJSON_CreateString("mcp"));
	cJSON_AddItemToArray(args, cJSON_CreateString("--project"));
	cJSON_AddItemToArray(args, cJSON_CreateString(project));
	{
		char	*t = cJSON_PrintUnformatted(ours);

		snprintf(p->note, sizeof(p->note), "mcpServers.sloptimize: %s",
		    t ? t : "");
		free(t);
	}
	if (old == NULL && !missing) {
		p->action = A_INVALID;
		snprintf(p->note, sizeof(p->note), "cannot read it: %s",
		    strerror(errno));
		cJSON_Delete(ours);
		return;
	}
	doc = old ? cJSON_Parse(old) : cJSON_CreateObject();
	if (!cJSON_IsObject(doc) || ((servers =
	    cJSON_GetObjectItemCaseSensitive(doc, "mcpServers")) != NULL &&
	    !cJSON_IsObject(servers))) {
		p->action = A_INVALID;
		snprintf(p->note, sizeof(p->note), "not an MCP config this can "
		    "add to (mcpServers must be an object); left alone");
		cJSON_Delete(doc);
		cJSON_Delete(ours);
		free(old);
		return;
	}
	if (servers == NULL)
		servers = cJSON_AddObjectToObject(doc, "mcpServers");
	if ((have = cJSON_GetObjectItemCaseSensitive(servers,
	    "sloptimize")) != NULL) {
		if (cJSON_Compare(have, ours, 1)) {
			p->action = A_UNCHANGED;
			snprintf(p->note, sizeof(p->note), "mcpServers.sloptimize "
			    "is already this entry");
		} else {
			p->action = A_CONFLICT;
			snprintf(p->note, sizeof(p->note), "mcpServers.sloptimize "
			    "is an entry of yours that differs from ours (%s mcp "
			    "--project %s); left as it is", prog, project);
		}
		cJSON_Delete(ours);
	} else {
		cJSON_AddItemToObject(servers, "sloptimize", ours);
		p->action = old ? A_UPDATE : A_CREATE;
		p->text = json_text(doc);
	}
	cJSON_Delete(doc);
	free(old);
}

/* .claude/skills/sloptimize/SKILL.md: the doctrine and this project's
 * commands.  Never replaces a file that differs (the user's edits). */
static void
plan_skill(struct plan *p, const char *prog_q, const char *project_q)
{
	int	 missing;
	char	*old = slurp(p->path, &missing);
	size_t	 n = strlen(initagent_skill) + 4096;
	char	*text = malloc(n);

	if (text == NULL) {
		free(old);
		p->action = A_INVALID;
		snprintf(p->note, sizeof(p->note), "out of memory");
		return;
	}
	snprintf(text, n, "%s\n## This project\n\n"
	    "Written by `sloptimize init-agent`, which never replaces this "
	    "file once it exists: to get a newer version, remove it and run "
	    "init-agent again.\n\n"
	    "- Monitor (each stdout line is a wake event): `%s watch --project "
	    "%s`\n"
	    "- Prompt hook (in .claude/settings.json): `%s hook-status "
	    "--project %s`\n"
	    "- MCP server `sloptimize` (in .mcp.json): `%s mcp --project %s`\n",
	    initagent_skill, prog_q, project_q, prog_q, project_q, prog_q,
	    project_q);
	snprintf(p->note, sizeof(p->note), "the doctrine, and the Monitor "
	    "command: %s watch --project %s", prog_q, project_q);
	if (old != NULL && strcmp(old, text) == 0) {
		p->action = A_UNCHANGED;
		free(text);
	} else if (old != NULL) {
		p->action = A_CONFLICT;
		snprintf(p->note, sizeof(p->note), "exists and differs (edited, "
		    "or from another version); left as it is — remove it to "
		    "get this version");
		free(text);
	} else if (!missing) {
		p->action = A_INVALID;
		snprintf(p->note, sizeof(p->note), "cannot read it: %s",
		    strerror(errno));
		free(text);
	} else {
		p->action = A_CREATE;
		p->text = text;
	}
	free(old);
}

/*
 * CLAUDE.md: our fragment, between the two marker lines, after the user's
 * text.  Claude Code reads CLAUDE.md in every session; the skill only when
 * it is loaded, so the loop's few hard rules are here too.  Only what lies
 * between our markers is ours, and even that is never replaced once it
 * differs (an edit of the user's, or another version): said, left alone.
 */
#define CLAUDE_BEGIN	"<!-- sloptimize:begin (written by `sloptimize " \
			"init-agent`; your own notes go outside these lines) -->"
#define CLAUDE_END	"<!-- sloptimize:end -->"

static void
plan_claude(struct plan *p, const char *prog_q, const char *project_q,
    const char *scene)
{
	int	 missing;
	char	*old = slurp(p->path, &missing), *b, *e, *text;
	char	 frag[PATH_MAX * 16 + 4096], sc[160];
	size_t	 n, ol;
	const char *sn = scene != NULL ? scene : "SCENE";

	if (scene != NULL)
		snprintf(sc, sizeof(sc), "`%s`, chosen by a person: bench that "
		    "one, never a workload of your own", scene);
	else
		snprintf(sc, sizeof(sc), "none named yet: ask the person which "
		    "`sloptimize.scene(…)` is the canonical one");
	snprintf(frag, sizeof(frag), CLAUDE_BEGIN "\n"
	    "## Performance work: sloptimize\n\n"
	    "Follow `.claude/skills/sloptimize/SKILL.md` (\"The loop\"). In "
	    "short, one change per iteration:\n\n"
	    "1. `%s check --project %s` (`--bench %s` when the game is not "
	    "running) — 0: every budget is inside, stop.\n"
	    "2. Read `.sloptimize/bench-history.jsonl` and "
	    "`.sloptimize/perf.jsonl`; never retry a change the bench ledger "
	    "shows reverted.\n"
	    "3. One change, then `%s bench --scene %s --launch --compare last "
	    "--change \"…\"`: 0 improved, 1 regressed, 5 no detectable "
	    "change, 3 incomparable, 4 environment.\n"
	    "4. `%s gate --scene %s --launch`: 0 pass, 1 the picture changed.\n"
	    "5. Keep (commit, the ledger line in the message) only on bench 0 "
	    "and gate 0; otherwise revert.\n"
	    "6. Stop: budgets pass; 3 no-detectable-change in a row; 2 gate "
	    "failures; the iteration cap.\n\n"
	    "Bench scene: %s.\n"
	    "Never re-record a golden (`gate --record` is the person's). Never "
	    "write your own measuring script: the harness measures. Never "
	    "edit `sloptimize.budgets.json` to pass.\n"
	    CLAUDE_END "\n", prog_q, project_q, sn, prog_q, sn, prog_q, sn, sc);
	snprintf(p->note, sizeof(p->note), "the loop's rules between "
	    "sloptimize:begin/end markers, after your text:\n%s", frag);
	if (old == NULL && !missing) {
		p->action = A_INVALID;
		snprintf(p->note, sizeof(p->note), "cannot read it: %s",
		    strerror(errno));
		return;
	}
	if (old == NULL) {
		p->action = A_CREATE;
		p->text = strdup(frag);
		return;
	}
	b = strstr(old, "<!-- sloptimize:begin");
	e = b != NULL ? strstr(b, CLAUDE_END) : NULL;
	if (b != NULL) {
		/* ours is there: the same, or left as it is */
		if (e != NULL && (size_t)(e - b) + strlen(CLAUDE_END) + 1 ==
		    strlen(frag) && strncmp(b, frag, strlen(frag) - 1) == 0) {
			p->action = A_UNCHANGED;
			snprintf(p->note, sizeof(p->note), "already has this "
			    "sloptimize fragment");
		} else {
			p->action = A_CONFLICT;
			snprintf(p->note, sizeof(p->note), "has a sloptimize "
			    "fragment that differs (edited, from another "
			    "version, or without its end marker); left as it is "
			    "— remove the lines from sloptimize:begin to "
			    "sloptimize:end to get this version");
		}
		free(old);
		return;
	}
	/* the user's text as it is, a blank line, ours */
	ol = strlen(old);
	n = ol + strlen(frag) + 3;
	if ((text = malloc(n)) == NULL) {
		p->action = A_INVALID;
		snprintf(p->note, sizeof(p->note), "out of memory");
		free(old);
		return;
	}
	snprintf(text, n, "%s%s%s", old, ol == 0 ? "" : old[ol - 1] == '\n' ?
	    "\n" : "\n\n", frag);
	p->action = A_UPDATE;
	p->text = text;
	free(old);
}

/* .gitignore: our lines appended after the user's (project/gitignore.h). */
static void
plan_gitignore(struct plan *p, struct gitignore_plan *g, const char *project)
{
	snprintf(p->path, sizeof(p->path), "%s/.gitignore", project);
	if (gitignore_plan(project, g) != 0) {
		p->action = A_INVALID;
		snprintf(p->note, sizeof(p->note), "%s; add by hand: "
		    ".sloptimize/bench/ and .sloptimize/goldens/ (never the "
		    "ledgers)", g->error);
		return;
	}
	if (g->text == NULL) {
		p->action = A_UNCHANGED;
		snprintf(p->note, sizeof(p->note), "already ignores what "
		    "sloptimize makes on this machine");
	} else {
		p->action = g->exists ? A_UPDATE : A_CREATE;
		snprintf(p->note, sizeof(p->note), "appends %s (the ledgers "
		    ".sloptimize/*.jsonl stay committed)", g->added);
		/* shown and counted like the others; written by
		 * gitignore_write */
		p->text = strdup(g->text);
	}
	if (g->warning[0] != '\0') {
		size_t	n = strlen(p->note);

		snprintf(p->note + n, sizeof(p->note) - n, "; note: %s",
		    g->warning);
	}
}

/* mkdir -p for the file's directory. */
static int
make_dirs(const char *file)
{
	char	d[PATH_MAX], *s;

	snprintf(d, sizeof(d), "%s", file);
	if ((s = strrchr(d, '/')) == NULL)
		return 0;
	*s = '\0';
	for (s = d + 1; *s != '\0'; s++) {
		if (*s != '/')
			continue;
		*s = '\0';
		if (mkdir(d, 0755) == -1 && errno != EEXIST)
			return -errno;
		*s = '/';
	}
	if (mkdir(d, 0755) == -1 && errno != EEXIST)
		return -errno;
	return 0;
}

/* Write through a symlink to what it names (a dotfiles checkout), in one
 * atomic replace. */
static int
write_file(const struct plan *p)
{
	char		 target[PATH_MAX];
	struct stat	 st;
	int		 rc;
	mode_t		 mode = 0644;

	if (realpath(p->path, target) == NULL)
		snprintf(target, sizeof(target), "%s", p->path);
	else if (stat(target, &st) == 0)
		mode = st.st_mode & 07777;
	if ((rc = make_dirs(target)) != 0)
		return rc;
	return statedir_write(target, p->text, strlen(p->text), mode);
}

static const char initagent_usage[] =
"usage: sloptimize init-agent [--project DIR] [--scene S] [--yes] [--dry-run]\n"
"                             [--json]\n"
"Set the project up for a coding agent (Claude Code): a UserPromptSubmit\n"
"hook running `sloptimize hook-status` in .claude/settings.json, the MCP\n"
"server `sloptimize mcp` in .mcp.json, and the doctrine with the Monitor\n"
"command line (`sloptimize watch --project DIR`) in\n"
".claude/skills/sloptimize/SKILL.md.  Shows what it will write first; on\n"
"a terminal it asks, otherwise it only shows unless --yes.  Also adds\n"
"to .gitignore what one machine makes (.sloptimize/bench/, goldens/,\n"
"profile.json, …), never the ledgers.  Your own entries are never\n"
"changed; running it twice changes nothing.  CLAUDE.md gets the loop's\n"
"rules between two marker lines, after your own text.\n"
"  --scene S  the bench scene a person chose, named in CLAUDE.md\n"
"  --yes      write without asking\n"
"  --dry-run  only show what would be written\n";

int
verb_init_agent(int argc, char **argv)
{
	struct cli_common	 c;
	int			 yes = 0, dry = 0, rc, i, changes = 0, bad = 0;
	const char		*scene = NULL;
	struct cli_opt		 opts[] = {
		{ "yes", OPT_FLAG, &yes }, { "dry-run", OPT_FLAG, &dry },
		{ "scene", OPT_ARG, &scene },
		{ NULL, 0, NULL }
	};
	char			 project[PATH_MAX], prog[PATH_MAX];
	char			 prog_q[PATH_MAX * 4 + 8];
	char			 project_q[PATH_MAX * 4 + 8];
	char			 hook[PATH_MAX * 8 + 64], monitor[PATH_MAX * 8 + 64];
	struct plan		 plans[NPLANS] = {
		{ .what = "prompt hook" }, { .what = "MCP server" },
		{ .what = "doctrine and Monitor" },
		{ .what = "machine-local output out of git" },
		{ .what = "the loop's rules for every session" }
	};
	struct gitignore_plan	 gi;
	int			 write;

	if ((rc = cli_parse(argc, argv, opts, &c, initagent_usage, NULL,
	    NULL)) >= 0)
		return rc;
	if (scene != NULL && !project_scene_ok(scene)) {
		fprintf(stderr, "sloptimize init-agent: --scene: a scene name is "
		    "1-64 of letters, digits, '.', '_' and '-'\n");
		return EXIT_USAGE;
	}
	if (yes && dry) {
		fprintf(stderr, "sloptimize init-agent: --yes or --dry-run, not "
		    "both\n");
		return EXIT_USAGE;
	}
	if (realpath(c.project, project) == NULL) {
		fprintf(stderr, "sloptimize init-agent: --project %s: %s\n",
		    c.project, strerror(errno));
		return EXIT_USAGE;
	}
	program(prog, sizeof(prog));
	shell_quote(prog, prog_q, sizeof(prog_q));
	shell_quote(project, project_q, sizeof(project_q));
	snprintf(hook, sizeof(hook), "%s hook-status --project %s", prog_q,
	    project_q);
	snprintf(monitor, sizeof(monitor), "%s watch --project %s", prog_q,
	    project_q);
	snprintf(plans[0].path, sizeof(plans[0].path), "%s/.claude/settings.json",
	    project);
	snprintf(plans[1].path, sizeof(plans[1].path), "%s/.mcp.json", project);
	snprintf(plans[2].path, sizeof(plans[2].path),
	    "%s/.claude/skills/sloptimize/SKILL.md", project);
	plan_settings(&plans[0], project, hook);
	plan_mcp(&plans[1], prog, project);
	plan_skill(&plans[2], prog_q, project_q);
	plan_gitignore(&plans[3], &gi, project);
	snprintf(plans[4].path, sizeof(plans[4].path), "%s/CLAUDE.md", project);
	plan_claude(&plans[4], prog_q, project_q, scene);
	for (i = 0; i < NPLANS; i++) {
		changes += plans[i].action == A_CREATE ||
		    plans[i].action == A_UPDATE;
		bad += plans[i].action == A_INVALID;
	}

	/* show the plan */
	if (!c.json) {
		printf("sloptimize init-agent for %s\n\n", project);
		for (i = 0; i < NPLANS; i++)
			printf("  %-10s %s\n             %s\n", action_names[
			    plans[i].action], plans[i].path, plans[i].note);
		printf("\nMonitor command line (one wake per line):\n  %s\n",
		    monitor);
	}
	write = changes > 0 && !dry;
	if (write && !yes) {
		if (!isatty(STDIN_FILENO)) {
			write = 0;
			if (!c.json)
				printf("\nNothing written: stdin is not a "
				    "terminal; run with --yes to write.\n");
		} else {
			char	ans[16] = "";

			printf("\nWrite %d file%s? [y/N] ", changes, changes == 1 ?
			    "" : "s");
			fflush(stdout);
			if (fgets(ans, sizeof(ans), stdin) == NULL ||
			    (ans[0] != 'y' && ans[0] != 'Y')) {
				write = 0;
				printf("Nothing written.\n");
			}
		}
	}
	rc = bad ? EXIT_FINDINGS : EXIT_OK;
	for (i = 0; write && i < NPLANS; i++) {
		int	e;

		if (plans[i].text == NULL)
			continue;
		if ((e = i == 3 ? gitignore_write(&gi) :
		    write_file(&plans[i])) != 0) {
			fprintf(stderr, "sloptimize init-agent: cannot write %s: "
			    "%s\n", plans[i].path, strerror(-e));
			rc = EXIT_FINDINGS;
		} else if (!c.json)
			printf("wrote %s\n", plans[i].path);
	}
	if (!c.json && changes == 0)
		printf("\nNothing to write: the project is set up.\n");
	if (c.json) {
		cJSON	*o = cJSON_CreateObject(), *a;

		cJSON_AddStringToObject(o, "project", project);
		cJSON_AddStringToObject(o, "monitor", monitor);
		cJSON_AddStringToObject(o, "hook", hook);
		cJSON_AddBoolToObject(o, "written", write && rc == EXIT_OK);
		a = cJSON_AddArrayToObject(o, "files");
		for (i = 0; i < NPLANS; i++) {
			cJSON	*f = cJSON_CreateObject();

			cJSON_AddStringToObject(f, "path", plans[i].path);
			cJSON_AddStringToObject(f, "what", plans[i].what);
			cJSON_AddStringToObject(f, "action",
			    action_names[plans[i].action]);
			cJSON_AddStringToObject(f, "note", plans[i].note);
			cJSON_AddItemToArray(a, f);
		}
		print_json(o);
		cJSON_Delete(o);
	}
	for (i = 0; i < NPLANS; i++)
		free(plans[i].text);
	gitignore_plan_free(&gi);
	return rc;
}
