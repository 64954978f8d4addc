/*
 * gitignore — sloptimize's lines in a game's .gitignore (gitignore.h).
 *
 * The user's text is never changed: our lines are appended after it, in
 * one block with a comment that says what they are and that the ledgers
 * are committed.  This is not a gitignore matcher; it recognises the
 * spellings a person writes for "this directory" or "this file", which
 * is what idempotency needs, and the few that would keep a ledger out
 * of git, which are said, not fixed.
 */
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "project/gitignore.h"
#include "project/statedir.h"

const char *const gitignore_patterns[] = {
	".sloptimize/bench/",
	".sloptimize/goldens/",
	".sloptimize/snapshots/",
	".sloptimize/profile.json",
	".sloptimize/census.json",
	".sloptimize/attribution.json",
	".sloptimize/dev.json",
	".sloptimize/*.tmp",
	NULL
};

static const char *const ledgers[] = {
	"perf.jsonl", "fixes.jsonl", "bench-history.jsonl", "goldens.jsonl",
	NULL
};

/* The package copy `sloptimize init` keeps, let back in past a *.tgz. */
#define NPM_BACK	"!.sloptimize/npm/*.tgz"

static const char header[] =
"# sloptimize: what this machine makes (bench runs, goldens, the live\n"
"# profile); the ledgers .sloptimize/*.jsonl are the audit trail and are\n"
"# committed (docs/budgets.md)\n";

/* A line's pattern in one spelling, into out: trailing blanks and CR
 * dropped, a leading slash dropped, a directory slash-star(-star) made
 * "/".  Returns 1 for a negation ("!…", its pattern in out). */
static int
canonical(const char *line, size_t n, char *out, size_t cap)
{
	int	neg = 0;
	size_t	len;

	while (n > 0 && (line[n - 1] == ' ' || line[n - 1] == '\t' ||
	    line[n - 1] == '\r'))
		n--;
	if (n > 0 && line[0] == '!') {
		neg = 1;
		line++;
		n--;
	}
	if (n > 0 && line[0] == '/') {
		line++;
		n--;
	}
	if (n + 2 > cap)
		n = cap - 2;
	memcpy(out, line, n);
	out[n] = '\0';
	len = n;
	if (len >= 3 && strcmp(out + len - 3, "/**") == 0)
		out[len - 2] = '\0';
	else if (len >= 2 && strcmp(out + len - 2, "/*") == 0 &&
	    strcmp(out, ".sloptimize/*") != 0)
		out[len - 1] = '\0';
	return neg;
}

/* Does a canonical line stand for pattern p ("dir/" or "file")? */
static int
same(const char *line, const char *p)
{
	size_t	lp = strlen(p);

	if (strcmp(line, p) == 0)
		return 1;
	/* "dir" written without its slash */
	return lp > 1 && p[lp - 1] == '/' && strlen(line) == lp - 1 &&
	    strncmp(line, p, lp - 1) == 0;
}

/* A line that keeps a ledger out of git: its text, or NULL. */
static const char *
hides_ledger(const char *c)
{
	size_t	i;
	char	name[64];

	if (strcmp(c, ".sloptimize") == 0 || strcmp(c, ".sloptimize/") == 0 ||
	    strcmp(c, ".sloptimize/*") == 0 || strcmp(c, "*.jsonl") == 0 ||
	    strcmp(c, ".sloptimize/*.jsonl") == 0)
		return c;
	for (i = 0; ledgers[i] != NULL; i++) {
		snprintf(name, sizeof(name), ".sloptimize/%s", ledgers[i]);
		if (strcmp(c, name) == 0 || strcmp(c, ledgers[i]) == 0)
			return c;
	}
	return NULL;
}

int
gitignore_merge(const char *old, size_t len, char **out, char *added,
    size_t acap, char *warning, size_t wcap)
{
	int		 have[16] = { 0 };
	const char	*p = old, *end = old + len, *nl;
	char		 c[512];
	size_t		 i, n, ao = 0, wo = 0, need;
	int		 missing = 0, neg, unhidden = 0, tgz = 0, npm_back = 0;
	char		*t;

	*out = NULL;
	if (acap > 0)
		*added = '\0';
	if (wcap > 0)
		*warning = '\0';
	while (old != NULL && p < end) {
		nl = memchr(p, '\n', (size_t)(end - p));
		n = nl != NULL ? (size_t)(nl - p) : (size_t)(end - p);
		neg = canonical(p, n, c, sizeof(c));
		p += n + (nl != NULL);
		if (c[0] == '\0' || c[0] == '#')
			continue;
		for (i = 0; gitignore_patterns[i] != NULL; i++)
			if (same(c, gitignore_patterns[i]))
				have[i] = 1;	/* or negated: theirs */
		if (!neg && strcmp(c, "*.tgz") == 0)
			tgz = 1;
		if (neg && strcmp(c, &NPM_BACK[1]) == 0)
			npm_back = 1;
		/* a negated ledger pattern after one that hides it: they
		 * thought of it */
		if (neg && hides_ledger(c) != NULL)
			unhidden = 1;
		if (!neg && hides_ledger(c) != NULL && wo < wcap)
			wo += (size_t)snprintf(warning + wo, wcap - wo,
			    "%s\"%s\"", wo ? ", " : "your .gitignore has ", c);
	}
	if (unhidden && wcap > 0)
		*warning = '\0';
	else if (wo > 0 && wo < wcap)
		snprintf(warning + wo, wcap - wo, ": it keeps the ledgers "
		    "(.sloptimize/*.jsonl, the audit trail) out of git; left "
		    "as it is");
	need = len + 2 + sizeof(header);
	for (i = 0; gitignore_patterns[i] != NULL; i++)
		if (!have[i]) {
			missing++;
			need += strlen(gitignore_patterns[i]) + 1;
			if (ao < acap)
				ao += (size_t)snprintf(added + ao, acap - ao,
				    "%s%s", ao ? ", " : "",
				    gitignore_patterns[i]);
		}
	/* npm's own .gitignore templates ignore *.tgz (npm pack's output),
	 * which would leave out the package copy `sloptimize init` puts
	 * under .sloptimize/npm/ for a teammate's `npm ci`: let it back in */
	if (tgz && !npm_back) {
		missing++;
		need += sizeof(NPM_BACK);
		if (ao < acap)
			ao += (size_t)snprintf(added + ao, acap - ao, "%s%s",
			    ao ? ", " : "", NPM_BACK);
	}
	if (missing == 0)
		return 0;
	if ((t = malloc(need + 1)) == NULL)
		return -ENOMEM;
	n = 0;
	if (len > 0) {
		memcpy(t, old, len);
		n = len;
		if (old[len - 1] != '\n')
			t[n++] = '\n';
		t[n++] = '\n';		/* a blank line before our block */
	}
	memcpy(t + n, header, sizeof(header) - 1);
	n += sizeof(header) - 1;
	for (i = 0; gitignore_patterns[i] != NULL; i++)
		if (!have[i]) {
			size_t	l = strlen(gitignore_patterns[i]);

			memcpy(t + n, gitignore_patterns[i], l);
			n += l;
			t[n++] = '\n';
		}
	if (tgz && !npm_back) {
		memcpy(t + n, NPM_BACK, sizeof(NPM_BACK) - 1);
		n += sizeof(NPM_BACK) - 1;
		t[n++] = '\n';
	}
	t[n] = '\0';
	*out = t;
	return 1;
}

int
gitignore_plan(const char *project, struct gitignore_plan *p)
{
	struct stat	 st;
	char		*buf = NULL;
	size_t		 n = 0;
	ssize_t		 r;
	int		 fd, rc;

	memset(p, 0, sizeof(*p));
	if (snprintf(p->path, sizeof(p->path), "%s/.gitignore", project) >=
	    (int)sizeof(p->path)) {
		snprintf(p->error, sizeof(p->error), "the project path is too "
		    "long");
		return -ENAMETOOLONG;
	}
	/* follows a symlink (a shared .gitignore); never waits on a FIFO */
	if ((fd = open(p->path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)) == -1 &&
	    errno != ENOENT) {
		rc = -errno;
		snprintf(p->error, sizeof(p->error), "%s: %s", p->path,
		    strerror(errno));
		return rc;
	}
	if (fd != -1) {
		p->exists = 1;
		if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) ||
		    st.st_size > GITIGNORE_MAX_BYTES) {
			close(fd);
			snprintf(p->error, sizeof(p->error), "%s: %s", p->path,
			    S_ISREG(st.st_mode) ? "over 1 MiB, left alone" :
			    "not a regular file, left alone");
			return S_ISREG(st.st_mode) ? -EFBIG : -ESPIPE;
		}
		if ((buf = malloc(GITIGNORE_MAX_BYTES + 1)) == NULL) {
			close(fd);
			return -ENOMEM;
		}
		while (n <= GITIGNORE_MAX_BYTES) {
			r = read(fd, buf + n, GITIGNORE_MAX_BYTES + 1 - n);
			if (r < 0 && errno == EINTR)
				continue;
			if (r <= 0)
				break;
			n += (size_t)r;
		}
		close(fd);
		if (n > GITIGNORE_MAX_BYTES) {
			free(buf);
			snprintf(p->error, sizeof(p->error), "%s: over 1 MiB, "
			    "left alone", p->path);
			return -EFBIG;
		}
	}
	rc = gitignore_merge(buf, n, &p->text, p->added, sizeof(p->added),
	    p->warning, sizeof(p->warning));
	free(buf);
	if (rc < 0) {
		snprintf(p->error, sizeof(p->error), "out of memory");
		return rc;
	}
	return 0;
}

int
gitignore_write(const struct gitignore_plan *p)
{
	char		 target[PATH_MAX];
	struct stat	 st;
	mode_t		 mode = 0644;

	if (p->text == NULL)
		return 0;
	if (realpath(p->path, target) == NULL)
		snprintf(target, sizeof(target), "%s", p->path);
	else if (stat(target, &st) == 0)
		mode = st.st_mode & 07777;
	return statedir_write(target, p->text, strlen(p->text), mode);
}

void
gitignore_plan_free(struct gitignore_plan *p)
{
	free(p->text);
	p->text = NULL;
}
