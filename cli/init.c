/*
 * init — `sloptimize init`: set a Vite game up for sloptimize, in the
 * game's own files (docs/packaging.md, "Adopting with sloptimize init"):
 *
 *   .sloptimize/npm/sloptimize-VERSION.tgz   a copy of the installed npm
 *                        tarball, committed with the game, so every
 *                        checkout (a teammate's, CI's) installs the same
 *                        page runtime without this machine's paths
 *   package.json         devDependencies.sloptimize: "file:" that copy
 *   vite.config.*        `import sloptimize from 'sloptimize/vite'` and
 *                        `sloptimize()` in its plugins
 *   .gitignore           what sloptimize makes again on every run
 *                        (bench runs, goldens, the rolling profile, the
 *                        dev server's address); never the ledgers
 *   sloptimize.budgets.json   starter budgets, to edit and commit
 *
 * Invariants: a user's text is never changed, only added to — package.json
 * by inserting bytes where cJSON then proves the document is the old one
 * plus our entry; a Vite config only when its shape is one this can edit
 * without doubt, else the exact lines to paste; a file of ours that
 * differs is left alone and said.  Running it twice changes nothing the
 * second time.  It shows the plan before writing; without a terminal it
 * writes only with --yes.  Exit 0: the game is set up (now, or already);
 * 1: something is not (a plan not written, a line to paste, no tarball).
 */
#include <sys/stat.h>

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>
#include <uv.h>

#include "cli.h"
#include "project/gitignore.h"
#include "project/statedir.h"
#include "verbs.h"

#ifndef SLOPTIMIZE_SHARE
#define SLOPTIMIZE_SHARE	"/usr/local/share/sloptimize"
#endif

#define FILE_MAX	(8 * 1024 * 1024)
#define NOTE_MAX	(PATH_MAX * 4)
#define IMPORT_LINE	"import sloptimize from 'sloptimize/vite';"
#define PLUGIN_CALL	"sloptimize()"

enum action { A_CREATE, A_UPDATE, A_UNCHANGED, A_CONFLICT, A_CANNOT };

static const char *const action_names[] = {
	"create", "update", "unchanged", "left alone", "by hand"
};

/* One file of the plan. */
struct plan {
	const char	*what;
	char		 path[PATH_MAX + 64];
	enum action	 action;
	char		*text;		/* what to write (create/update) */
	size_t		 len;
	char		 note[NOTE_MAX];
};

/* The file's bytes (NUL-terminated, *len without it); NULL with *missing
 * when it does not exist, NULL with errno otherwise. */
static char *
slurp(const char *path, size_t *len, int *missing)
{
	FILE	*f;
	char	*buf;
	size_t	 n;

	*missing = 0;
	*len = 0;
	if ((f = fopen(path, "rb")) == NULL) {
		*missing = errno == ENOENT;
		return NULL;
	}
	if ((buf = malloc(FILE_MAX + 1)) == NULL) {
		fclose(f);
		errno = ENOMEM;
		return NULL;
	}
	n = fread(buf, 1, FILE_MAX, f);
	if (n == FILE_MAX && fgetc(f) != EOF) {
		fclose(f);
		free(buf);
		errno = EFBIG;
		return NULL;
	}
	fclose(f);
	buf[n] = '\0';
	*len = n;
	return buf;
}

static int
exists(const char *path)
{
	struct stat	st;

	return stat(path, &st) == 0;
}

/* mkdir -p for the file's directory. */
static int
make_dirs(const char *file)
{
	char	d[PATH_MAX], *s;

	snprintf(d, sizeof(d), "%s", file);
	if ((s = strrchr(d, '/')) == NULL || s == d)
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

/* Write through a symlink to what it names, in one atomic replace, with
 * the file's own permissions when it has some. */
static int
write_file(const struct plan *p)
{
	char		 target[PATH_MAX];
	struct stat	 st;
	mode_t		 mode = 0644;
	int		 rc;

	if (realpath(p->path, target) == NULL)
		snprintf(target, sizeof(target), "%s", p->path);
	else if (stat(target, &st) == 0)
		mode = st.st_mode & 07777;
	if ((rc = make_dirs(target)) != 0)
		return rc;
	return statedir_write(target, p->text, p->len, mode);
}

/* A new string: s[0..at) + ins + s[cut..len). */
static char *
splice(const char *s, size_t len, size_t at, size_t cut, const char *ins,
    size_t *out_len)
{
	size_t	 n = strlen(ins), total = at + n + (len - cut);
	char	*t = malloc(total + 1);

	if (t == NULL)
		return NULL;
	memcpy(t, s, at);
	memcpy(t + at, ins, n);
	memcpy(t + at + n, s + cut, len - cut);
	t[total] = '\0';
	*out_len = total;
	return t;
}

/* --- the npm tarball --------------------------------------------------------- */

/*
 * The installed tarball, sloptimize-VERSION.tgz: beside the program (a
 * source tree's build/, where `make dist` leaves it), then in this
 * program's own install (PREFIX/bin → PREFIX/share/sloptimize/npm, so a
 * relocated install finds its own), then in the share directory compiled
 * in — the order the daemon looks for its page runtime in.
 */
static int
tarball_find(char *out, size_t cap, char *looked, size_t lcap)
{
	char	exe[PATH_MAX], cand[3][PATH_MAX + 96], *slash = NULL;
	size_t	n = sizeof(exe), i, k = 0;
	const char *name = "sloptimize-" SLOPTIMIZE_VERSION ".tgz";

	if (uv_exepath(exe, &n) == 0 && (slash = strrchr(exe, '/')) != NULL) {
		*slash = '\0';
		snprintf(cand[k++], sizeof(cand[0]), "%s/%s", exe, name);
		snprintf(cand[k++], sizeof(cand[0]), "%s/../share/sloptimize/npm/%s",
		    exe, name);
	}
	snprintf(cand[k++], sizeof(cand[0]), "%s/npm/%s", SLOPTIMIZE_SHARE, name);
	looked[0] = '\0';
	for (i = 0; i < k; i++) {
		char	real[PATH_MAX];

		if (realpath(cand[i], real) != NULL) {
			snprintf(out, cap, "%s", real);
			return 0;
		}
		snprintf(looked + strlen(looked), lcap - strlen(looked), "%s%s",
		    i ? ", " : "", cand[i]);
	}
	return -ENOENT;
}

/* .sloptimize/npm/sloptimize-VERSION.tgz: the installed tarball's bytes. */
static void
plan_tarball(struct plan *p, const char *tarball)
{
	size_t	 have_len, want_len;
	int	 missing, m2;
	char	*have = slurp(p->path, &have_len, &missing);
	char	*want = slurp(tarball, &want_len, &m2);

	if (want == NULL) {
		p->action = A_CANNOT;
		snprintf(p->note, sizeof(p->note), "cannot read %s: %s", tarball,
		    strerror(errno));
	} else if (have != NULL && have_len == want_len &&
	    memcmp(have, want, want_len) == 0) {
		p->action = A_UNCHANGED;
		snprintf(p->note, sizeof(p->note), "the copy of %s", tarball);
	} else if (have != NULL || !missing) {
		p->action = A_CONFLICT;
		snprintf(p->note, sizeof(p->note), "exists and differs from %s; "
		    "left as it is", tarball);
	} else {
		p->action = A_CREATE;
		p->text = want;
		p->len = want_len;
		want = NULL;
		snprintf(p->note, sizeof(p->note), "a copy of %s (%zu bytes), "
		    "committed with the game", tarball, want_len);
	}
	free(have);
	free(want);
}

/* --- package.json: offsets into JSON text ------------------------------------ */

/*
 * Enough of a scanner to find where a member starts and ends, so an edit
 * inserts bytes and touches none of the user's.  cJSON has already
 * accepted the text as JSON, which this trusts.
 */
static size_t
js_ws(const char *s, size_t i)
{
	while (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r')
		i++;
	return i;
}

static size_t
js_string(const char *s, size_t i)
{
	for (i++; s[i] != '\0' && s[i] != '"'; i++)
		if (s[i] == '\\' && s[i + 1] != '\0')
			i++;
	return s[i] ? i + 1 : i;
}

static size_t
js_value(const char *s, size_t i)
{
	int	depth = 0;

	i = js_ws(s, i);
	if (s[i] == '"')
		return js_string(s, i);
	if (s[i] != '{' && s[i] != '[') {
		while (s[i] != '\0' && strchr(",}] \t\r\n", s[i]) == NULL)
			i++;
		return i;
	}
	while (s[i] != '\0') {
		if (s[i] == '"') {
			i = js_string(s, i);
			continue;
		}
		if (s[i] == '{' || s[i] == '[')
			depth++;
		else if ((s[i] == '}' || s[i] == ']') && --depth == 0)
			return i + 1;
		i++;
	}
	return i;
}

/* An object's members, as offsets: the one named `name` (key: its opening
 * quote, val..vend: its value), the first key, the end of the last value,
 * the closing brace. */
struct js_obj {
	size_t	key, val, vend;		/* of the member found; key 0: none */
	size_t	first, last_end, close;
	int	count;
};

static void
js_object(const char *s, size_t open, const char *name, struct js_obj *o)
{
	size_t	i = js_ws(s, open + 1), k, kend, nlen = strlen(name);

	memset(o, 0, sizeof(*o));
	o->last_end = open + 1;
	while (s[i] == '"') {
		k = i;
		kend = js_string(s, i);
		if (o->count == 0)
			o->first = k;
		i = js_ws(s, kend);
		if (s[i] != ':')
			break;
		i = js_ws(s, i + 1);
		if (kend - k - 2 == nlen && memcmp(s + k + 1, name, nlen) == 0) {
			o->key = k;
			o->val = i;
			o->vend = js_value(s, i);
		}
		i = js_value(s, i);
		o->last_end = i;
		o->count++;
		i = js_ws(s, i);
		if (s[i] == ',')
			i = js_ws(s, i + 1);
	}
	o->close = i;
}

/* The whitespace that begins the line holding offset `at`. */
static void
line_indent(const char *s, size_t at, char *out, size_t cap)
{
	size_t	b = at, n = 0;

	while (b > 0 && s[b - 1] != '\n')
		b--;
	while ((s[b + n] == ' ' || s[b + n] == '\t') && n + 1 < cap) {
		out[n] = s[b + n];
		n++;
	}
	out[n] = '\0';
}

/* Is `spec` one this verb writes (any version)? */
static int
spec_is_ours(const char *spec)
{
	return strncmp(spec, "file:.sloptimize/npm/sloptimize-", 32) == 0 &&
	    strlen(spec) > 36 && strcmp(spec + strlen(spec) - 4, ".tgz") == 0;
}

/*
 * The new text proves itself: parsed by cJSON, with our entry taken out
 * (and devDependencies too, where we made it), it is the old document.
 */
static int
package_verify(const char *old, const char *new, const char *spec,
    int made_dev)
{
	cJSON	*a = cJSON_Parse(old), *b = cJSON_Parse(new), *dev;
	int	 ok = 0;

	if (a == NULL || b == NULL)
		goto out;
	dev = cJSON_GetObjectItemCaseSensitive(b, "devDependencies");
	if (!cJSON_IsObject(dev) || !cJSON_IsString(cJSON_GetObjectItem(dev,
	    "sloptimize")) || strcmp(cJSON_GetObjectItem(dev,
	    "sloptimize")->valuestring, spec) != 0)
		goto out;
	cJSON_DeleteItemFromObjectCaseSensitive(dev, "sloptimize");
	if ((dev = cJSON_GetObjectItemCaseSensitive(a, "devDependencies")) != NULL)
		cJSON_DeleteItemFromObjectCaseSensitive(dev, "sloptimize");
	if (made_dev)
		cJSON_DeleteItemFromObjectCaseSensitive(b, "devDependencies");
	ok = cJSON_Compare(a, b, 1);
out:
	cJSON_Delete(a);
	cJSON_Delete(b);
	return ok;
}

/* package.json: devDependencies.sloptimize = "file:" the copy. */
static void
plan_package(struct plan *p, const char *spec, int have_tarball)
{
	size_t	 len, at, cut, top_open;
	int	 missing, made_dev = 0;
	char	*old = slurp(p->path, &len, &missing), *ins = NULL;
	char	 ind[64], unit[64], buf[PATH_MAX + 256];
	const char *cur = NULL;
	cJSON	*doc = NULL, *dev, *deps;
	struct js_obj top, devo;

	snprintf(p->note, sizeof(p->note), "devDependencies: \"sloptimize\": "
	    "\"%s\"", spec);
	if (old == NULL) {
		p->action = A_CANNOT;
		snprintf(p->note, sizeof(p->note), missing ? "no package.json: "
		    "sloptimize init sets up a Vite game (npm create vite, then "
		    "run this there)" : "cannot read it: %s", strerror(errno));
		return;
	}
	doc = cJSON_Parse(old);
	dev = cJSON_GetObjectItemCaseSensitive(doc, "devDependencies");
	deps = cJSON_GetObjectItemCaseSensitive(doc, "dependencies");
	if (!cJSON_IsObject(doc) || (dev != NULL && !cJSON_IsObject(dev)) ||
	    (deps != NULL && !cJSON_IsObject(deps))) {
		p->action = A_CANNOT;
		snprintf(p->note, sizeof(p->note), "not a package.json this can "
		    "add to (not valid JSON, or devDependencies is not an "
		    "object); left alone — run: npm i -D ./.sloptimize/npm/"
		    "sloptimize-%s.tgz", SLOPTIMIZE_VERSION);
		goto out;
	}
	if (cJSON_IsString(cJSON_GetObjectItem(deps, "sloptimize")))
		cur = cJSON_GetObjectItem(deps, "sloptimize")->valuestring;
	if (cJSON_IsString(cJSON_GetObjectItem(dev, "sloptimize")))
		cur = cJSON_GetObjectItem(dev, "sloptimize")->valuestring;
	if (cur != NULL && strcmp(cur, spec) == 0) {
		p->action = A_UNCHANGED;
		goto out;
	}
	if ((cur != NULL && !spec_is_ours(cur)) ||
	    (cJSON_GetObjectItem(deps, "sloptimize") != NULL &&
	    cJSON_GetObjectItem(dev, "sloptimize") == NULL)) {
		p->action = A_CONFLICT;
		snprintf(p->note, sizeof(p->note), "sloptimize is already a "
		    "dependency of yours (%s); left as it is — this install's "
		    "is %s", cur ? cur : "not a string", spec);
		goto out;
	}
	if (!have_tarball) {
		p->action = A_CANNOT;
		snprintf(p->note, sizeof(p->note), "needs the tarball (above)");
		goto out;
	}

	/* where the bytes go */
	top_open = js_ws(old, 0);
	if (old[top_open] != '{')
		goto cannot;
	js_object(old, top_open, "devDependencies", &top);
	if (top.count > 0)
		line_indent(old, top.first, unit, sizeof(unit));
	else
		snprintf(unit, sizeof(unit), "  ");
	if (unit[0] == '\0')
		snprintf(unit, sizeof(unit), "  ");
	if (top.key != 0) {
		js_object(old, top.val, "sloptimize", &devo);
		if (devo.key != 0) {
			/* an older copy of ours: its value, replaced */
			at = devo.val;
			cut = devo.vend;
			snprintf(buf, sizeof(buf), "\"%s\"", spec);
		} else if (devo.count > 0) {
			at = devo.first;
			cut = at;
			line_indent(old, devo.first, ind, sizeof(ind));
			if (memchr(old + top.val, '\n', devo.first - top.val))
				snprintf(buf, sizeof(buf), "\"sloptimize\": \"%s\","
				    "\n%s", spec, ind);
			else
				snprintf(buf, sizeof(buf), "\"sloptimize\": \"%s\", ",
				    spec);
		} else {
			line_indent(old, top.key, ind, sizeof(ind));
			at = top.val + 1;
			cut = devo.close;
			snprintf(buf, sizeof(buf), "\n%s%s\"sloptimize\": \"%s\"\n%s",
			    ind, unit, spec, ind);
		}
	} else if (memchr(old + top_open, '\n', top.close - top_open) == NULL) {
		/* a package.json on one line stays on one line */
		made_dev = 1;
		at = top.last_end;
		cut = at;
		snprintf(buf, sizeof(buf), "%s\"devDependencies\":{\"sloptimize\":"
		    "\"%s\"}", top.count ? "," : "", spec);
	} else {
		made_dev = 1;
		at = top.last_end;
		cut = at;
		snprintf(buf, sizeof(buf), "%s\n%s\"devDependencies\": {\n%s%s"
		    "\"sloptimize\": \"%s\"\n%s}%s", top.count ? "," : "", unit,
		    unit, unit, spec, unit, top.count ? "" : "\n");
	}
	if ((ins = strdup(buf)) == NULL)
		goto cannot;
	if ((p->text = splice(old, len, at, cut, ins, &p->len)) == NULL ||
	    !package_verify(old, p->text, spec, made_dev)) {
		free(p->text);
		p->text = NULL;
		goto cannot;
	}
	p->action = A_UPDATE;
	if (cur != NULL)
		snprintf(p->note, sizeof(p->note), "devDependencies: \"sloptimize\""
		    ": \"%s\" (was %s)", spec, cur);
	goto out;
cannot:
	p->action = A_CANNOT;
	snprintf(p->note, sizeof(p->note), "cannot add to it without doubt; "
	    "run: npm i -D ./.sloptimize/npm/sloptimize-%s.tgz",
	    SLOPTIMIZE_VERSION);
out:
	free(ins);
	cJSON_Delete(doc);
	free(old);
}

/* --- vite.config.* ---------------------------------------------------------- */

/* Vite's own order (DEFAULT_CONFIG_FILES): the first that exists is used. */
static const char *const vite_configs[] = {
	"vite.config.js", "vite.config.mjs", "vite.config.ts", "vite.config.cjs",
	"vite.config.mts", "vite.config.cts"
};

/* How many times `word` stands in `s` as a word (not inside another). */
static int
count_word(const char *s, const char *word, const char **first)
{
	const char	*p = s;
	size_t		 n = strlen(word);
	int		 c = 0;

	*first = NULL;
	while ((p = strstr(p, word)) != NULL) {
		int	before = p > s && (p[-1] == '_' || p[-1] == '$' ||
			    (p[-1] >= 'a' && p[-1] <= 'z') ||
			    (p[-1] >= 'A' && p[-1] <= 'Z') ||
			    (p[-1] >= '0' && p[-1] <= '9'));
		char	a = p[n];
		int	after = a == '_' || a == '$' || (a >= 'a' && a <= 'z') ||
			    (a >= 'A' && a <= 'Z') || (a >= '0' && a <= '9');

		if (!before && !after) {
			if (c++ == 0)
				*first = p;
		}
		p += n;
	}
	return c;
}

/*
 * The code of a JS or TS file with every string's contents and every
 * comment blanked (same length, same offsets, newlines kept): the shape
 * checks below then never match a word inside './plugins' or a comment.
 * Regular-expression literals are not understood; a config with one that
 * holds a quote gets the lines to paste instead (its other checks fail).
 */
static char *
code_mask(const char *s, size_t len)
{
	char	*m = malloc(len + 1);
	size_t	 i = 0;

	if (m == NULL)
		return NULL;
	memcpy(m, s, len + 1);
	while (i < len) {
		if (s[i] == '/' && s[i + 1] == '/') {
			while (i < len && s[i] != '\n')
				m[i++] = ' ';
		} else if (s[i] == '/' && s[i + 1] == '*') {
			m[i++] = ' ';
			m[i++] = ' ';
			while (i < len && !(s[i] == '*' && s[i + 1] == '/')) {
				if (s[i] != '\n')
					m[i] = ' ';
				i++;
			}
			if (i < len) {
				m[i++] = ' ';
				m[i++] = ' ';
			}
		} else if (s[i] == '\'' || s[i] == '"' || s[i] == '`') {
			char	q = s[i++];

			while (i < len && s[i] != q) {
				if (s[i] == '\\' && i + 1 < len)
					m[i++] = ' ';
				if (s[i] != '\n')
					m[i] = ' ';
				i++;
			}
			i++;
		} else
			i++;
	}
	return m;
}

static const char *
skip_blank(const char *p)
{
	while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
		p++;
	return p;
}

/* Is the word just before p (blanks skipped) `word`, standing alone? */
static int
word_before(const char *s, const char *p, const char *word)
{
	size_t	n = strlen(word);
	char	c;

	while (p > s && (p[-1] == ' ' || p[-1] == '\t' || p[-1] == '\n' ||
	    p[-1] == '\r'))
		p--;
	if ((size_t)(p - s) < n || memcmp(p - n, word, n) != 0)
		return 0;
	if (p - n == s)
		return 1;
	c = p[-n - 1];
	return !(c == '_' || c == '$' || c == '.' || (c >= 'a' && c <= 'z') ||
	    (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'));
}

/* The offset just past the end of the line holding `end` ('\n' or NUL). */
static size_t
past(const char *s, const char *end)
{
	return (size_t)(*end ? end + 1 - s : end - s);
}

/*
 * Where our import goes: after the last import statement at the top of
 * the file (a statement ends on the line of its module string: the
 * string after `from`, or after `import` for a bare one), else after the
 * leading comments, so a `// @ts-check` stays first.  (size_t)-1 when the
 * top of the file is not something this reads without doubt.
 */
static size_t
import_at(const char *s)
{
	const char	*line = s, *end, *q, *p, *close = NULL;
	size_t		 at = 0;
	int		 seen = 0;

	while (*line != '\0') {
		if ((end = strchr(line, '\n')) == NULL)
			end = line + strlen(line);
		q = line;
		while (*q == ' ' || *q == '\t' || *q == '\r')
			q++;
		if (q == end) {				/* blank */
			line = s + past(s, end);
			continue;
		}
		if (strncmp(q, "//", 2) == 0) {
			if (!seen)
				at = past(s, end);
			line = s + past(s, end);
			continue;
		}
		if (strncmp(q, "/*", 2) == 0) {
			if ((close = strstr(q + 2, "*/")) == NULL)
				return (size_t)-1;
			if ((end = strchr(close, '\n')) == NULL)
				end = close + strlen(close);
			if (!seen)
				at = past(s, end);
			line = s + past(s, end);
			continue;
		}
		if (strncmp(q, "import", 6) != 0 || strchr(" \t{*'\"", q[6]) == NULL ||
		    q[6] == '\0')
			break;				/* the first code */
		for (p = q + 6; (p = strpbrk(p, "'\"")) != NULL; p = close + 1) {
			if ((close = strchr(p + 1, *p)) == NULL)
				return (size_t)-1;
			if (word_before(s, p, "from") || word_before(s, p, "import"))
				break;
		}
		if (p == NULL)
			return (size_t)-1;
		if ((end = strchr(close, '\n')) == NULL)
			end = close + strlen(close);
		at = past(s, end);
		seen = 1;
		line = s + at;
	}
	return at;
}

/*
 * The config, edited only in a shape this recognises without doubt:
 * ESM, `sloptimize` named nowhere yet, and either one `plugins: [` (our
 * call goes first in the list) or no plugins at all and one `export
 * default defineConfig({` / `export default {` (a plugins line goes
 * in).  Anything else — a function config, two `plugins`, CommonJS —
 * gets the exact lines to paste.
 */
static void
plan_vite(struct plan *p, const char *project, int typescript, int has_vite)
{
	size_t		 len, i, at;
	int		 missing, plugins_n;
	char		*old = NULL, *code = NULL, *tmp;
	const char	*name = NULL, *plugins, *obj = NULL, *q;
	char		 path[PATH_MAX + 64];

	for (i = 0; i < sizeof(vite_configs) / sizeof(vite_configs[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", project, vite_configs[i]);
		if (exists(path)) {
			name = vite_configs[i];
			break;
		}
	}
	if (name == NULL && !has_vite) {
		p->action = A_CANNOT;
		snprintf(p->path, sizeof(p->path), "%s/vite.config.js", project);
		snprintf(p->note, sizeof(p->note), "no vite in package.json and no "
		    "vite.config.*: the plugin is for a Vite game (npm i -D vite "
		    "first); a page without Vite imports the recorder from the "
		    "daemon (docs/recorder.md, \"Without Vite\")");
		return;
	}
	if (name == NULL) {
		/* no config: Vite runs without one; ours is the whole file */
		name = typescript ? "vite.config.ts" : "vite.config.js";
		snprintf(p->path, sizeof(p->path), "%s/%s", project, name);
		p->text = malloc(512);
		if (p->text == NULL) {
			p->action = A_CANNOT;
			snprintf(p->note, sizeof(p->note), "out of memory");
			return;
		}
		snprintf(p->text, 512, "// %s — written by `sloptimize init`: the "
		    "sloptimize plugin (dev only)\nimport { defineConfig } from "
		    "'vite';\n" IMPORT_LINE "\n\nexport default defineConfig({\n"
		    "  plugins: [" PLUGIN_CALL "],\n});\n", name);
		p->len = strlen(p->text);
		p->action = A_CREATE;
		snprintf(p->note, sizeof(p->note), "a config with the plugin: "
		    "plugins: [" PLUGIN_CALL "]");
		return;
	}
	snprintf(p->path, sizeof(p->path), "%s", path);
	if ((old = slurp(path, &len, &missing)) == NULL) {
		p->action = A_CANNOT;
		snprintf(p->note, sizeof(p->note), "cannot read it: %s",
		    strerror(errno));
		return;
	}
	if (strstr(old, "sloptimize/vite") != NULL &&
	    strstr(old, "sloptimize(") != NULL) {
		p->action = A_UNCHANGED;
		snprintf(p->note, sizeof(p->note), "already imports sloptimize/vite "
		    "and calls sloptimize()");
		goto out;
	}
	if ((code = code_mask(old, len)) == NULL)
		goto cannot;
	plugins_n = count_word(code, "plugins", &plugins);
	if (strstr(old, "sloptimize") != NULL || strstr(code, "module.exports") ||
	    strstr(code, "require(") || strcmp(name + strlen(name) - 3, "cjs") == 0 ||
	    strcmp(name + strlen(name) - 3, "cts") == 0 || plugins_n > 1)
		goto cannot;
	if (plugins_n == 1) {
		q = skip_blank(plugins + 7);
		if (*q != ':')
			goto cannot;
		q = skip_blank(q + 1);
		if (*q != '[')
			goto cannot;
		at = (size_t)(q + 1 - code);
		tmp = splice(old, len, at, at, *skip_blank(q + 1) == ']' ?
		    PLUGIN_CALL : PLUGIN_CALL ", ", &p->len);
	} else {
		const char *d = NULL;
		int nd = count_word(code, "defineConfig", &d);
		const char *e = NULL;
		int ne = 0;

		/* `export default {` (no defineConfig call) */
		for (q = code; (q = strstr(q, "export default")) != NULL; q += 14)
			if (ne++ == 0)
				e = q;
		if (ne != 1)
			goto cannot;
		q = skip_blank(e + 14);
		if (nd >= 1 && strncmp(q, "defineConfig", 12) == 0) {
			q = skip_blank(q + 12);
			if (*q != '(')
				goto cannot;
			q = skip_blank(q + 1);
		}
		if (*q != '{')
			goto cannot;
		obj = q;
		at = (size_t)(obj + 1 - code);
		tmp = splice(old, len, at, at, *skip_blank(obj + 1) == '}' ?
		    "\n  plugins: [" PLUGIN_CALL "],\n" :
		    "\n  plugins: [" PLUGIN_CALL "],", &p->len);
	}
	if (tmp == NULL)
		goto cannot;
	/* then the import, at the top (offsets before the plugins edit) */
	if ((at = import_at(tmp)) == (size_t)-1) {
		free(tmp);
		goto cannot;
	}
	p->text = splice(tmp, p->len, at, at, at > 0 && tmp[at - 1] != '\n' ?
	    "\n" IMPORT_LINE "\n" : IMPORT_LINE "\n", &p->len);
	free(tmp);
	if (p->text == NULL)
		goto cannot;
	p->action = A_UPDATE;
	snprintf(p->note, sizeof(p->note), "adds `" IMPORT_LINE "` and "
	    PLUGIN_CALL " to its plugins");
	goto out;
cannot:
	p->action = A_CANNOT;
	snprintf(p->note, sizeof(p->note), "not a shape this edits without "
	    "doubt; left alone. Add these two lines yourself:\n"
	    "               " IMPORT_LINE "\n"
	    "               and " PLUGIN_CALL " in its plugins: [" PLUGIN_CALL
	    ", …]");
out:
	free(code);
	free(old);
}

/* --- .gitignore ------------------------------------------------------------- */

/*
 * What sloptimize makes again on every run, so a commit never carries it,
 * and never the ledgers: the rule is project/gitignore.h's, shared with
 * init-agent.  The plan's text is written by statedir_write like the
 * other files, so a symlinked .gitignore is written through.
 */
static void
plan_gitignore(struct plan *p, const char *project)
{
	struct gitignore_plan	g;

	if (gitignore_plan(project, &g) != 0) {
		p->action = A_CANNOT;
		snprintf(p->note, sizeof(p->note), "%s", g.error);
		return;
	}
	if (g.text == NULL) {
		p->action = A_UNCHANGED;
		snprintf(p->note, sizeof(p->note), "already ignores what "
		    "sloptimize makes again");
	} else {
		p->action = g.exists ? A_UPDATE : A_CREATE;
		p->text = g.text;
		p->len = strlen(g.text);
		g.text = NULL;
		snprintf(p->note, sizeof(p->note), "adds %s", g.added);
	}
	if (g.warning[0] != '\0')
		snprintf(p->note + strlen(p->note), sizeof(p->note) -
		    strlen(p->note), "; NOTE: %s", g.warning);
	gitignore_plan_free(&g);
}

/* --- sloptimize.budgets.json ------------------------------------------------ */

/* A starter: a frame budget that matches the recorder's own (60 fps), and
 * generous counters to tighten once the game's own numbers are known.
 * Never replaces the file once it exists. */
static void
plan_budgets(struct plan *p)
{
	cJSON	*o, *b;
	char	*s;

	if (exists(p->path)) {
		p->action = A_UNCHANGED;
		snprintf(p->note, sizeof(p->note), "exists; yours to edit");
		return;
	}
	o = cJSON_CreateObject();
	b = cJSON_AddObjectToObject(o, "perf.budget.frame_ms_p95");
	cJSON_AddNumberToObject(b, "max", 16.7);
	cJSON_AddStringToObject(b, "level", "error");
	cJSON_AddNumberToObject(o, "perf.budget.draw_calls", 300);
	cJSON_AddNumberToObject(o, "perf.budget.triangles", 1000000);
	b = cJSON_AddObjectToObject(o, "perf.budget.programs");
	cJSON_AddNumberToObject(b, "max", 64);
	cJSON_AddStringToObject(b, "level", "warn");
	b = cJSON_AddObjectToObject(o, "perf.budget.gpu_ms_p95");
	cJSON_AddNumberToObject(b, "max", 12);
	cJSON_AddStringToObject(b, "level", "warn");
	s = cJSON_Print(o);
	cJSON_Delete(o);
	if (s == NULL || (p->text = malloc(2 * strlen(s) + 2)) == NULL) {
		free(s);
		p->action = A_CANNOT;
		snprintf(p->note, sizeof(p->note), "out of memory");
		return;
	}
	/* cJSON lays out with tabs; a file people edit gets two spaces a
	 * level and one after a colon (a raw tab in cJSON's output is only
	 * ever layout: strings escape theirs) */
	{
		size_t	 i, o = 0;
		int	 bol = 1;

		for (i = 0; s[i] != '\0'; i++) {
			if (s[i] == '\t' && bol) {
				p->text[o++] = ' ';
				p->text[o++] = ' ';
			} else if (s[i] == '\t')
				p->text[o++] = ' ';
			else {
				bol = s[i] == '\n';
				p->text[o++] = s[i];
			}
		}
		p->text[o++] = '\n';
		p->text[o] = '\0';
		p->len = o;
	}
	free(s);
	p->action = A_CREATE;
	snprintf(p->note, sizeof(p->note), "starter budgets: frame p95 16.7 ms "
	    "(error), 300 draw calls, 1M triangles, 64 programs, GPU p95 12 ms "
	    "(warn) — edit and commit");
}

/* --- the verb ---------------------------------------------------------------- */

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
	out[o++] = '\'';
	for (i = 0; s[i] != '\0' && o + 6 < cap; i++) {
		if (s[i] == '\'') {
			memcpy(out + o, "'\\''", 4);
			o += 4;
		} else
			out[o++] = s[i];
	}
	out[o++] = '\'';
	out[o] = '\0';
}

/* Is `name` among the game's packages? (TypeScript: a new config is
 * then .ts; vite: this is a Vite game) */
static int
uses_package(const char *project, const char *name)
{
	char	 path[PATH_MAX + 32], *text;
	size_t	 len;
	int	 missing, has;
	cJSON	*doc;

	snprintf(path, sizeof(path), "%s/package.json", project);
	if ((text = slurp(path, &len, &missing)) == NULL)
		return 0;
	doc = cJSON_Parse(text);
	has = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(
	    doc, "devDependencies"), name) != NULL ||
	    cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(
	    doc, "dependencies"), name) != NULL;
	cJSON_Delete(doc);
	free(text);
	return has;
}

#define NPLANS	5

static const char init_usage[] =
"usage: sloptimize init [--project DIR] [--yes] [--dry-run] [--json]\n"
"Set a Vite game up for sloptimize: a copy of the installed npm package in\n"
".sloptimize/npm/ and the devDependency on it in package.json, the plugin\n"
"line in vite.config.(js|ts|mjs), the .gitignore entries for what\n"
"sloptimize makes again on every run (never the ledgers), and starter\n"
"budgets in sloptimize.budgets.json; then how to start the daemon.\n"
"Shows the plan first; on a terminal it asks, otherwise it writes only\n"
"with --yes.  Your text is only added to, never changed; a config it\n"
"cannot edit without doubt gets the lines to paste; running it twice\n"
"changes nothing.  Exit 0 when the game is set up, 1 when something is\n"
"not (a plan not written, lines to paste by hand, no npm tarball).\n"
"  --yes      write without asking\n"
"  --dry-run  only show what would be written\n";

int
verb_init(int argc, char **argv)
{
	struct cli_common	 c;
	int			 yes = 0, dry = 0, rc, i, changes = 0, bad = 0;
	int			 have_tarball, write;
	struct cli_opt		 opts[] = {
		{ "yes", OPT_FLAG, &yes }, { "dry-run", OPT_FLAG, &dry },
		{ NULL, 0, NULL }
	};
	char			 project[PATH_MAX], tarball[PATH_MAX];
	char			 looked[4 * PATH_MAX + 512], spec[256];
	char			 project_q[PATH_MAX * 4 + 8];
	char			 next[4][PATH_MAX * 4 + 160];
	struct plan		 plans[NPLANS] = {
		{ .what = "npm package" }, { .what = "devDependency" },
		{ .what = "Vite plugin" }, { .what = ".gitignore" },
		{ .what = "budgets" }
	};

	if ((rc = cli_parse(argc, argv, opts, &c, init_usage, NULL,
	    NULL)) >= 0)
		return rc;
	if (yes && dry) {
		fprintf(stderr, "sloptimize init: --yes or --dry-run, not both\n");
		return EXIT_USAGE;
	}
	if (realpath(c.project, project) == NULL) {
		fprintf(stderr, "sloptimize init: --project %s: %s\n", c.project,
		    strerror(errno));
		return EXIT_USAGE;
	}
	snprintf(plans[1].path, sizeof(plans[1].path), "%s/package.json",
	    project);
	if (!exists(plans[1].path)) {
		fprintf(stderr, "sloptimize init: no package.json in %s: init sets "
		    "up a Vite game (npm create vite@latest makes one); a page "
		    "without Vite imports the recorder from the daemon "
		    "(docs/recorder.md, \"Without Vite\")\n", project);
		return EXIT_USAGE;
	}
	snprintf(spec, sizeof(spec), "file:.sloptimize/npm/sloptimize-%s.tgz",
	    SLOPTIMIZE_VERSION);
	snprintf(plans[0].path, sizeof(plans[0].path),
	    "%s/.sloptimize/npm/sloptimize-%s.tgz", project, SLOPTIMIZE_VERSION);
	snprintf(plans[3].path, sizeof(plans[3].path), "%s/.gitignore", project);
	snprintf(plans[4].path, sizeof(plans[4].path),
	    "%s/sloptimize.budgets.json", project);

	have_tarball = tarball_find(tarball, sizeof(tarball), looked,
	    sizeof(looked)) == 0;
	if (have_tarball)
		plan_tarball(&plans[0], tarball);
	else {
		plans[0].action = A_CANNOT;
		snprintf(plans[0].note, sizeof(plans[0].note), "this install has "
		    "no npm tarball (looked for %.4000s); in a source tree, `make "
		    "dist` makes it", looked);
	}
	plan_package(&plans[1], spec, have_tarball &&
	    plans[0].action != A_CANNOT);
	plan_vite(&plans[2], project, uses_package(project, "typescript"),
	    uses_package(project, "vite"));
	plan_gitignore(&plans[3], project);
	plan_budgets(&plans[4]);
	for (i = 0; i < NPLANS; i++) {
		changes += plans[i].action == A_CREATE ||
		    plans[i].action == A_UPDATE;
		bad += plans[i].action == A_CANNOT ||
		    plans[i].action == A_CONFLICT;
	}
	/* a differing copy of ours under .sloptimize/npm is not the user's
	 * problem if package.json already names something else of theirs */
	shell_quote(project, project_q, sizeof(project_q));
	snprintf(next[0], sizeof(next[0]), "npm install                  # "
	    "installs sloptimize from .sloptimize/npm/");
	snprintf(next[1], sizeof(next[1]), "sloptimized --project %s   # the "
	    "daemon, on http://127.0.0.1:7567", project_q);
	snprintf(next[2], sizeof(next[2]), "npm run dev                  # "
	    "the game with the recorder; Ctrl+F11 marks, Ctrl+F12 the panel");
	snprintf(next[3], sizeof(next[3]), "sloptimize watch --project %s   "
	    "# the wake lines (sloptimize init-agent sets up a coding agent)",
	    project_q);

	if (!c.json) {
		printf("sloptimize init for %s\n\n", project);
		for (i = 0; i < NPLANS; i++)
			printf("  %-10s %s\n             %s\n", action_names[
			    plans[i].action], plans[i].path, plans[i].note);
	}
	write = changes > 0 && !dry;
	if (write && !yes) {
		if (!isatty(STDIN_FILENO)) {
			write = 0;
			if (!c.json)
				printf("\nNothing written: stdin is not a terminal; "
				    "run with --yes to write.\n");
		} else {
			char	ans[16] = "";

			printf("\nWrite %d file%s? [y/N] ", changes,
			    changes == 1 ? "" : "s");
			fflush(stdout);
			if (fgets(ans, sizeof(ans), stdin) == NULL ||
			    (ans[0] != 'y' && ans[0] != 'Y')) {
				write = 0;
				printf("Nothing written.\n");
			}
		}
	}
	rc = bad || (changes > 0 && !write) ? EXIT_FINDINGS : EXIT_OK;
	for (i = 0; write && i < NPLANS; i++) {
		int	e;

		if (plans[i].text == NULL ||
		    (plans[i].action != A_CREATE && plans[i].action != A_UPDATE))
			continue;
		if ((e = write_file(&plans[i])) != 0) {
			fprintf(stderr, "sloptimize init: cannot write %s: %s\n",
			    plans[i].path, strerror(-e));
			rc = EXIT_FINDINGS;
		} else if (!c.json)
			printf("wrote %s\n", plans[i].path);
	}
	if (!c.json) {
		if (changes == 0 && !bad)
			printf("\nNothing to write: the game is set up.\n");
		if (bad)
			printf("\nSome of it is yours to do: see \"%s\" and \"%s\" "
			    "above.\n", action_names[A_CANNOT],
			    action_names[A_CONFLICT]);
		printf("\nThen, for this game:\n");
		for (i = 0; i < 4; i++)
			printf("  %s\n", next[i]);
	} else {
		cJSON	*o = cJSON_CreateObject(), *a;

		cJSON_AddStringToObject(o, "project", project);
		cJSON_AddBoolToObject(o, "written", write && rc == EXIT_OK);
		if (have_tarball)
			cJSON_AddStringToObject(o, "tarball", tarball);
		else
			cJSON_AddNullToObject(o, "tarball");
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
		a = cJSON_AddArrayToObject(o, "next");
		for (i = 0; i < 4; i++)
			cJSON_AddItemToArray(a, cJSON_CreateString(next[i]));
		print_json(o);
		cJSON_Delete(o);
	}
	for (i = 0; i < NPLANS; i++)
		free(plans[i].text);
	return rc;
}
