/*
 * gate — `sloptimize gate` (gate.h, docs/gate.md): compare a scene's
 * frame with its golden, or record a golden.
 *
 * The order of a comparison is the order of trust.  The golden first:
 * read, hashed, matched with its goldens.jsonl line — a golden nobody
 * recorded through `--record`, or one whose bytes are not the recorded
 * ones, is said loudly and nothing is judged against it (exit 3), before
 * a browser is started for nothing.  Then the frame (gate_capture, or
 * --frame), then the sizes, then SSIM.  Every outcome but a usage error
 * is one document (gate_json, schemas/gate-output.json) that --json
 * prints, the MCP tool returns and the text output is read from.
 *
 * Files: the golden and its ledger line are read by the project's rules
 * (project_open: never a FIFO, nothing but a regular file); the golden,
 * the frame and the difference picture are written whole or not at all
 * (a temporary name, then rename; the golden also fsynced, through
 * statedir_write); goldens.jsonl is appended
 * through project/append.c, the one writer of every ledger file.
 */
#include <sys/stat.h>

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "cli/cli.h"
#include "cli/gate.h"
#include "project/bench.h"
#include "image/pngio.h"
#include "ledger/sha256.h"
#include "ledger/ssim.h"
#include "project/append.h"
#include "project/project.h"
#include "project/statedir.h"

/*
 * A scene the gate takes: a bench scene (project_scene_ok) without a
 * dot, since its pictures are named S.actual.png and S.diff.png beside
 * S.png — a scene "crates.actual" would be another's frame.
 */
int
gate_scene_ok(const char *s)
{
	return s != NULL && project_scene_ok(s) && strchr(s, '.') == NULL;
}

#define FILE_MAX	((size_t)256 << 20)	/* a PNG, a goldens.jsonl */
#define WHY		(2 * PATH_MAX)

/* One comparison in hand: what is known so far, for the document. */
struct run {
	const struct gate_opts	*o;
	char			 golden[PATH_MAX], ledger[PATH_MAX];
	char			 actual[PATH_MAX], diff[PATH_MAX];
	const char		*verdict;
	int			 exit;
	char			 error[3 * PATH_MAX];
	/* the golden */
	int			 have_golden;
	char			 golden_sha[SHA256_HEX];
	struct pngio_image	 g;
	cJSON			*recorded;	/* its goldens.jsonl record */
	size_t			 unreadable;	/* lines of goldens.jsonl */
	/* the frame */
	const char		*source;	/* "capture", "file" */
	struct pngio_image	 f;
	void			*f_png;		/* its bytes, as captured */
	size_t			 f_len;
	char			 config_hash[80];
	int			 signal;	/* interrupted the capture */
	/* the comparison */
	int			 compared;
	struct ssim_result	 r;
	int			 wrote_actual, wrote_diff;
	cJSON			*warnings;
	double			 ms_capture, ms_compare, ms_write;
};

/* Fractional milliseconds (base_mono_ms() rounds down to whole ones):
 * a comparison of a small frame takes less than one. */
static double
now_ms(void)
{
	struct timespec	ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* The whole of a file, by the project's rules.  0, or -errno with why. */
static int
slurp(const char *path, void **data, size_t *len, char *why, size_t cap)
{
	struct stat	 st;
	char		*buf;
	size_t		 n = 0;
	ssize_t		 r;
	int		 fd, rc;

	*data = NULL;
	*len = 0;
	if ((rc = project_open(path, O_RDONLY, 0, &fd)) != 0) {
		snprintf(why, cap, "%s: %s", path, project_strerror(rc));
		return rc;
	}
	if (fstat(fd, &st) != 0)
		rc = -errno;
	else if ((size_t)st.st_size > FILE_MAX)
		rc = -EFBIG;
	if (rc != 0) {
		snprintf(why, cap, "%s: %s", path, rc == -EFBIG ?
		    "larger than 256 MB" : strerror(-rc));
		close(fd);
		return rc;
	}
	if ((buf = malloc((size_t)st.st_size + 1)) == NULL) {
		close(fd);
		snprintf(why, cap, "%s: out of memory", path);
		return -ENOMEM;
	}
	while (n < (size_t)st.st_size) {
		r = read(fd, buf + n, (size_t)st.st_size - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			rc = -errno;
			snprintf(why, cap, "%s: %s", path, strerror(errno));
			free(buf);
			close(fd);
			return rc;
		}
		if (r == 0)
			break;		/* shrank while read: what is there */
		n += (size_t)r;
	}
	close(fd);
	buf[n] = '\0';
	*data = buf;
	*len = n;
	return 0;
}

static void
hash_hex(const void *p, size_t n, char out[SHA256_HEX])
{
	uint8_t	d[SHA256_LEN];

	sha256(p, n, d);
	sha256_hex(d, out);
}

/*
 * The last goldens.jsonl record for the scene (a person may record a
 * scene again: the latest line is the golden), or NULL.  A line that is
 * not a JSON object with type "golden" is counted in *unreadable and
 * skipped: a torn or hand-made line must not make a golden trusted.
 */
static cJSON *
recorded_find(const char *path, const char *scene, size_t *unreadable)
{
	void		*data;
	char		*p, *end, *nl, why[WHY];
	size_t		 len;
	cJSON		*found = NULL, *rec;

	*unreadable = 0;
	if (slurp(path, &data, &len, why, sizeof(why)) != 0)
		return NULL;
	for (p = data, end = p + len; p < end; p = nl + 1) {
		const cJSON	*t, *s, *h;

		if ((nl = memchr(p, '\n', (size_t)(end - p))) == NULL)
			nl = end;
		if (nl == p || (nl - p == 1 && *p == '\r'))
			continue;
		rec = cJSON_ParseWithLength(p, (size_t)(nl - p));
		t = cJSON_GetObjectItemCaseSensitive(rec, "type");
		s = cJSON_GetObjectItemCaseSensitive(rec, "scene");
		h = cJSON_GetObjectItemCaseSensitive(rec, "sha256");
		if (!cJSON_IsString(t) || strcmp(t->valuestring, "golden") != 0 ||
		    !cJSON_IsString(s) || !cJSON_IsString(h)) {
			(*unreadable)++;
			cJSON_Delete(rec);
			continue;
		}
		if (strcmp(s->valuestring, scene) != 0) {
			cJSON_Delete(rec);
			continue;
		}
		cJSON_Delete(found);
		found = rec;
	}
	free(data);
	return found;
}

static const char *
str_of(const cJSON *o, const char *k)
{
	const char	*s = cJSON_GetStringValue(
			    cJSON_GetObjectItemCaseSensitive(o, k));

	return s ? s : "?";
}

static const char *const channel_name[3] = { "red", "green", "blue" };

static int
weakest(const struct ssim_result *r)
{
	int	c, w = 0;

	for (c = 1; c < 3; c++)
		if (r->channel[c] < r->channel[w])
			w = c;
	return w;
}

static int
paths(struct run *u, const char *project, const char *scene)
{
	char	name[96];

	snprintf(name, sizeof(name), "goldens/%s.png", scene);
	if (project_path(project, name, u->golden, sizeof(u->golden)) ||
	    project_path(project, "goldens.jsonl", u->ledger,
	    sizeof(u->ledger)))
		return -ENAMETOOLONG;
	snprintf(name, sizeof(name), "gate/%s.actual.png", scene);
	if (project_path(project, name, u->actual, sizeof(u->actual)))
		return -ENAMETOOLONG;
	snprintf(name, sizeof(name), "gate/%s.diff.png", scene);
	if (project_path(project, name, u->diff, sizeof(u->diff)))
		return -ENAMETOOLONG;
	return 0;
}

/* <project>/.sloptimize/<sub>, made when missing (0755: the project's
 * files, readable like the ledger); gate/ also gets a .gitignore of its
 * own, so its pictures stay out of git whatever the project ignores. */
static int
dir_make(const char *project, const char *sub, char *why, size_t cap)
{
	static const char	ignore[] = "# sloptimize gate's pictures: "
				    "made again by every run\n*\n";
	char			top[PATH_MAX], dir[PATH_MAX], ign[PATH_MAX];

	if ((size_t)snprintf(top, sizeof(top), "%s/" PROJECT_DIR, project) >=
	    sizeof(top) || project_path(project, sub, dir, sizeof(dir)) ||
	    (size_t)snprintf(ign, sizeof(ign), "%s/.gitignore", dir) >=
	    sizeof(ign)) {
		snprintf(why, cap, "the project path is too long");
		return -ENAMETOOLONG;
	}
	if ((mkdir(top, 0755) != 0 && errno != EEXIST) ||
	    (mkdir(dir, 0755) != 0 && errno != EEXIST)) {
		snprintf(why, cap, "cannot create %s: %s", dir, strerror(errno));
		return -errno;
	}
	if (strcmp(sub, "gate") == 0 && access(ign, F_OK) != 0)
		(void)statedir_write(ign, ignore, sizeof(ignore) - 1, 0644);
	return 0;
}

/*
 * A picture made again by every run (the frame, the difference): written
 * to a temporary name of this process's and renamed, so a viewer never
 * reads half of one and two runs at once never write into each other's,
 * but not fsynced: after a crash the next run makes it again.
 */
static int
scratch_write(const char *path, const void *data, size_t len, char *why,
    size_t cap)
{
	char	tmp[PATH_MAX + 32];
	FILE	*f;
	int	 rc = 0;

	if ((size_t)snprintf(tmp, sizeof(tmp), "%s.%ld.tmp", path,
	    (long)getpid()) >= sizeof(tmp))
		rc = -ENAMETOOLONG;
	else if ((f = fopen(tmp, "wb")) == NULL)
		rc = -errno;
	else {
		if (fwrite(data, 1, len, f) != len)
			rc = -errno;
		if (fclose(f) != 0 && rc == 0)
			rc = -errno;
		if (rc == 0 && rename(tmp, path) != 0)
			rc = -errno;
		if (rc != 0)
			unlink(tmp);
	}
	if (rc != 0)
		snprintf(why, cap, "cannot write %s: %s", path, strerror(-rc));
	return rc;
}

/* A picture, encoded and written whole: a golden durably (statedir_write:
 * fsynced), anything else as scratch.  0 or -errno with why. */
static int
picture_write(const char *path, const struct pngio_image *im, int golden,
    char sha[SHA256_HEX], char *why, size_t cap)
{
	void	*png;
	size_t	 len;
	int	 rc;

	if ((rc = pngio_encode(im, !golden, &png, &len, why, cap)) != 0)
		return rc;
	if (sha != NULL)
		hash_hex(png, len, sha);
	if (!golden)
		rc = scratch_write(path, png, len, why, cap);
	else if ((rc = statedir_write(path, png, len, 0644)) != 0)
		snprintf(why, cap, "cannot write %s: %s", path, strerror(-rc));
	free(png);
	return rc;
}

/* The frame: from --frame, or captured.  0, or an environment error. */
static int
frame_get(struct run *u, const struct gate_opts *o, char *why, size_t cap)
{
	struct gate_capture_req	 req = { o->project, o->scene, o->launch,
				    o->url, o->timeout_ms, o->signals,
				    o->cancel };
	struct gate_frame	 fr;
	char			 pwhy[PNGIO_WHY_MAX];
	double			 t0 = now_ms();
	int			 rc;

	memset(&fr, 0, sizeof(fr));
	if (o->frame_file != NULL) {
		u->source = "file";
		rc = slurp(o->frame_file, &fr.png, &fr.len, why, cap);
		if (rc != 0)
			return rc;
	} else {
		u->source = "capture";
		if ((rc = gate_capture(&req, &fr, why, cap)) != 0) {
			u->signal = fr.signal;
			free(fr.png);
			return rc;
		}
		snprintf(u->config_hash, sizeof(u->config_hash), "%s",
		    fr.config_hash);
	}
	rc = pngio_decode(fr.png, fr.len, 0, &u->f, pwhy, sizeof(pwhy));
	u->f_png = fr.png;	/* written as it came: no second encode */
	u->f_len = fr.len;
	u->ms_capture = now_ms() - t0;
	if (rc != 0)
		snprintf(why, cap, "the frame%s%s is not a picture the gate can "
		    "read: %s", o->frame_file ? " " : "", o->frame_file ?
		    o->frame_file : "", pwhy);
	return rc;
}

static void
warn(struct run *u, const char *text)
{
	cJSON_AddItemToArray(u->warnings, cJSON_CreateString(text));
}

/* --- the document ------------------------------------------------------- */

static double
round6(double v)
{
	return (double)(long long)(v * 1e6 + (v < 0 ? -0.5 : 0.5)) / 1e6;
}

static cJSON *
gate_json(const struct run *u)
{
	const struct gate_opts	*o = u->o;
	cJSON			*d = cJSON_CreateObject(), *x;

	cJSON_AddNumberToObject(d, "v", 1);
	cJSON_AddStringToObject(d, "scene", o->scene);
	cJSON_AddStringToObject(d, "verdict", u->verdict);
	cJSON_AddNumberToObject(d, "exit", u->exit);
	cJSON_AddNumberToObject(d, "threshold", o->threshold);
	if (*u->error)
		cJSON_AddStringToObject(d, "error", u->error);
	if (u->compared) {
		x = cJSON_AddObjectToObject(d, "ssim");
		cJSON_AddNumberToObject(x, "r", u->r.channel[0]);
		cJSON_AddNumberToObject(x, "g", u->r.channel[1]);
		cJSON_AddNumberToObject(x, "b", u->r.channel[2]);
		cJSON_AddNumberToObject(x, "min", u->r.min);
		cJSON_AddStringToObject(x, "weakest",
		    channel_name[weakest(&u->r)]);
		x = cJSON_AddObjectToObject(d, "changed");
		cJSON_AddNumberToObject(x, "pixels", (double)u->r.changed);
		cJSON_AddNumberToObject(x, "of", (double)u->r.pixels);
		cJSON_AddNumberToObject(x, "share", u->r.changed_share);
		cJSON_AddNumberToObject(x, "maxDelta", u->r.max_delta);
	}
	x = cJSON_AddObjectToObject(d, "golden");
	cJSON_AddStringToObject(x, "path", u->golden);
	if (u->have_golden) {
		cJSON_AddStringToObject(x, "sha256", u->golden_sha);
		if (u->g.px != NULL) {
			cJSON_AddNumberToObject(x, "width", u->g.width);
			cJSON_AddNumberToObject(x, "height", u->g.height);
		}
	}
	cJSON_AddItemToObject(x, "recorded", u->recorded ?
	    cJSON_Duplicate(u->recorded, 1) : cJSON_CreateNull());
	if (u->source != NULL) {
		x = cJSON_AddObjectToObject(d, "frame");
		cJSON_AddStringToObject(x, "source", u->source);
		if (o->frame_file != NULL)
			cJSON_AddStringToObject(x, "path", o->frame_file);
		if (u->f.px != NULL) {
			cJSON_AddNumberToObject(x, "width", u->f.width);
			cJSON_AddNumberToObject(x, "height", u->f.height);
		}
		if (*u->config_hash)
			cJSON_AddStringToObject(x, "configHash",
			    u->config_hash);
	}
	if (u->wrote_actual || u->wrote_diff) {
		x = cJSON_AddObjectToObject(d, "files");
		if (u->wrote_actual)
			cJSON_AddStringToObject(x, "actual", u->actual);
		if (u->wrote_diff)
			cJSON_AddStringToObject(x, "diff", u->diff);
	}
	if (u->compared) {
		x = cJSON_AddObjectToObject(d, "elapsedMs");
		cJSON_AddNumberToObject(x, "frame", round6(u->ms_capture));
		cJSON_AddNumberToObject(x, "compare", round6(u->ms_compare));
		cJSON_AddNumberToObject(x, "write", round6(u->ms_write));
	}
	cJSON_AddItemToObject(d, "warnings", cJSON_Duplicate(u->warnings, 1));
	return d;
}

/* --- compare ------------------------------------------------------------ */

static int
outcome(struct run *u, const char *verdict, int exit, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static int
outcome(struct run *u, const char *verdict, int exit, const char *fmt, ...)
{
	va_list	ap;

	u->verdict = verdict;
	u->exit = exit;
	if (fmt != NULL) {
		va_start(ap, fmt);
		vsnprintf(u->error, sizeof(u->error), fmt, ap);
		va_end(ap);
	}
	return exit;
}

static int
compare(struct run *u, const struct gate_opts *o)
{
	void		*data;
	size_t		 len;
	char		 why[WHY], pwhy[PNGIO_WHY_MAX], w[WHY + 64];
	const char	*rsha;
	int		 rc, golden_rc;
	double		 t0;

	u->recorded = recorded_find(u->ledger, o->scene, &u->unreadable);
	if (u->unreadable > 0) {
		snprintf(w, sizeof(w), "%zu line(s) of %s are not golden "
		    "records and were skipped", u->unreadable, u->ledger);
		warn(u, w);
	}
	/* 1. the golden, and whether it is the one recorded */
	if ((rc = slurp(u->golden, &data, &len, why, sizeof(why))) == -ENOENT) {
		if (u->recorded != NULL)
			return outcome(u, "no-golden", GATE_ENVIRONMENT,
			    "no golden for scene '%s': %s is missing, though "
			    "goldens.jsonl records one (at %s by %s, sha256 "
			    "%.12s…); goldens/ is not in git — ask the person "
			    "who recorded it", o->scene, u->golden,
			    str_of(u->recorded, "at"), str_of(u->recorded, "who"),
			    str_of(u->recorded, "sha256"));
		return outcome(u, "no-golden", GATE_ENVIRONMENT, "no golden "
		    "for scene '%s' (%s): a person records one, after looking "
		    "at the frame, with `sloptimize gate --record --scene %s`",
		    o->scene, u->golden, o->scene);
	}
	if (rc != 0)
		return outcome(u, "incomparable", GATE_INCOMPARABLE, "cannot "
		    "read the golden: %s", why);
	u->have_golden = 1;
	hash_hex(data, len, u->golden_sha);
	golden_rc = pngio_decode(data, len, 0, &u->g, pwhy, sizeof(pwhy));
	free(data);
	rsha = u->recorded ? str_of(u->recorded, "sha256") : NULL;
	if (rsha == NULL)
		return outcome(u, "golden-changed", GATE_INCOMPARABLE,
		    "the golden for scene '%s' was not recorded by `gate "
		    "--record`: %s has no line for it in %s%s%s. Nothing is "
		    "judged against it; a person who trusts this picture "
		    "records it with `sloptimize gate --record --scene %s`",
		    o->scene, u->golden, u->ledger, golden_rc ? "; and it is "
		    "not a readable PNG: " : "", golden_rc ? pwhy : "", o->scene);
	if (strcmp(rsha, u->golden_sha) != 0)
		return outcome(u, "golden-changed", GATE_INCOMPARABLE,
		    "THE GOLDEN FOR SCENE '%s' WAS CHANGED OUTSIDE `gate "
		    "--record`: %s has sha256 %s, but goldens.jsonl records "
		    "%s (at %s by %s)%s%s. Nothing is judged against it; if a "
		    "person changed it on purpose, that person records it "
		    "again with `sloptimize gate --record --scene %s`",
		    o->scene, u->golden, u->golden_sha, rsha,
		    str_of(u->recorded, "at"), str_of(u->recorded, "who"),
		    golden_rc ? "; and it is not a readable PNG: " : "",
		    golden_rc ? pwhy : "", o->scene);
	if (golden_rc != 0)
		return outcome(u, "incomparable", GATE_INCOMPARABLE, "the "
		    "golden %s is not a readable PNG: %s", u->golden, pwhy);

	/* 2. the frame */
	if ((rc = frame_get(u, o, why, sizeof(why))) != 0)
		return outcome(u, "environment", u->signal ? 128 + u->signal :
		    GATE_ENVIRONMENT, "%s", why);
	if (o->frame_file != NULL) {
		snprintf(w, sizeof(w), "the frame is the file %s (--frame), "
		    "not a capture of the game: this says nothing about the "
		    "game's code", o->frame_file);
		warn(u, w);
	}

	/* 3. comparable? */
	if (u->f.width != u->g.width || u->f.height != u->g.height)
		return outcome(u, "incomparable", GATE_INCOMPARABLE, "the frame "
		    "is %" PRIu32 "×%" PRIu32 " and the golden %" PRIu32 "×%"
		    PRIu32 ": not comparable (another viewport or pixel "
		    "ratio?)", u->f.width, u->f.height, u->g.width,
		    u->g.height);
	{
		struct ssim_image	fa = { u->f.px, u->f.width, u->f.height,
					    (size_t)u->f.width * 4, 4 };
		struct ssim_image	ga = { u->g.px, u->g.width, u->g.height,
					    (size_t)u->g.width * 4, 4 };
		struct pngio_image	dimg = { NULL, u->f.width, u->f.height,
					    1 };

		t0 = now_ms();
		rc = ssim_compare(&fa, &ga, &u->r, NULL);
		u->ms_compare = now_ms() - t0;
		if (rc == -ERANGE)
			return outcome(u, "incomparable", GATE_INCOMPARABLE,
			    "the pictures are %" PRIu32 "×%" PRIu32 ": smaller "
			    "than SSIM's 11×11 window", u->f.width,
			    u->f.height);
		if (rc != 0)
			return outcome(u, "environment", GATE_ENVIRONMENT,
			    "cannot compare: %s", strerror(-rc));
		u->compared = 1;

		/* 4. the pictures a person looks at (their failure is said,
		 * and changes no verdict) */
		t0 = now_ms();
		if (dir_make(o->project, "gate", why, sizeof(why)) == 0) {
			if (scratch_write(u->actual, u->f_png, u->f_len, why,
			    sizeof(why)) == 0)
				u->wrote_actual = 1;
			else
				warn(u, why);
			if ((dimg.px = malloc((size_t)u->f.width * u->f.height *
			    4)) == NULL)
				warn(u, "no difference picture: out of memory");
			else if (ssim_diff_image(&fa, &ga, dimg.px) == 0 &&
			    picture_write(u->diff, &dimg, 0, NULL, why,
			    sizeof(why)) == 0)
				u->wrote_diff = 1;
			else
				warn(u, why);
			free(dimg.px);
		} else
			warn(u, why);
		u->ms_write = now_ms() - t0;
	}
	if (u->r.min >= o->threshold)
		return outcome(u, "pass", GATE_PASS, NULL);
	return outcome(u, "fail", GATE_FAIL, NULL);
}

int
gate_compare(const struct gate_opts *o, cJSON **doc, char *why, size_t cap)
{
	struct run	u;
	int		rc;

	*doc = NULL;
	if (!gate_scene_ok(o->scene)) {
		snprintf(why, cap, "%s (not '%s')", GATE_SCENE_RULE,
		    o->scene ? o->scene : "");
		return GATE_USAGE;
	}
	if (!(o->threshold > 0 && o->threshold <= 1)) {
		snprintf(why, cap, "the threshold is an SSIM above 0, at most 1");
		return GATE_USAGE;
	}
	memset(&u, 0, sizeof(u));
	u.o = o;
	u.warnings = cJSON_CreateArray();
	if (paths(&u, o->project, o->scene) != 0) {
		snprintf(why, cap, "the project path is too long");
		cJSON_Delete(u.warnings);
		return GATE_USAGE;
	}
	rc = compare(&u, o);
	*doc = gate_json(&u);
	snprintf(why, cap, "%s", u.error);
	pngio_image_free(&u.g);
	pngio_image_free(&u.f);
	free(u.f_png);
	cJSON_Delete(u.recorded);
	cJSON_Delete(u.warnings);
	return rc;
}

/* --- record ------------------------------------------------------------- */

static const char *
user_name(char *buf, size_t cap)
{
	const char	*u = getenv("USER");
	struct passwd	*pw;

	if (u != NULL && *u != '\0')
		return u;
	if ((pw = getpwuid(getuid())) != NULL && pw->pw_name != NULL)
		return pw->pw_name;
	snprintf(buf, cap, "uid %ld", (long)getuid());
	return buf;
}

/* Ask on the terminal: 1 for "y" or "yes" (any case), 0 for anything
 * else, EOF included. */
static int
ask(const char *question)
{
	char	line[64], *p, *e;

	fputs(question, stderr);
	fflush(stderr);
	if (fgets(line, sizeof(line), stdin) == NULL)
		return 0;
	for (p = line; isspace((unsigned char)*p); p++)
		;
	for (e = p + strlen(p); e > p && isspace((unsigned char)e[-1]); e--)
		;
	*e = '\0';
	return strcasecmp(p, "y") == 0 || strcasecmp(p, "yes") == 0;
}

static int
record(const struct gate_opts *o, int yes)
{
	struct run	 u;
	void		*data;
	size_t		 len;
	char		 why[WHY], sha[SHA256_HEX], ubuf[32], q[3 * PATH_MAX];
	char		 prev[256] = "";
	cJSON		*rec;
	int		 rc, n;

	memset(&u, 0, sizeof(u));
	u.o = o;
	u.warnings = cJSON_CreateArray();
	if (paths(&u, o->project, o->scene) != 0) {
		fprintf(stderr, "sloptimize gate: the project path is too "
		    "long\n");
		rc = GATE_USAGE;
		goto out;
	}
	if ((rc = frame_get(&u, o, why, sizeof(why))) != 0) {
		fprintf(stderr, "sloptimize gate --record: %s\n", why);
		rc = u.signal ? 128 + u.signal : GATE_ENVIRONMENT;
		goto out;
	}
	/* what it replaces, and how far the new frame is from it */
	u.recorded = recorded_find(u.ledger, o->scene, &u.unreadable);
	if (slurp(u.golden, &data, &len, why, sizeof(why)) == 0) {
		char	gsha[SHA256_HEX];

		hash_hex(data, len, gsha);
		n = snprintf(prev, sizeof(prev), "it replaces the golden %s",
		    u.recorded && strcmp(str_of(u.recorded, "sha256"),
		    gsha) == 0 ? "recorded" : "NOT recorded (changed outside "
		    "--record)");
		if (u.recorded != NULL && n > 0 && (size_t)n < sizeof(prev))
			snprintf(prev + n, sizeof(prev) - (size_t)n,
			    " at %s by %s", str_of(u.recorded, "at"),
			    str_of(u.recorded, "who"));
		if (pngio_decode(data, len, 0, &u.g, why, sizeof(why)) == 0 &&
		    u.g.width == u.f.width && u.g.height == u.f.height) {
			struct ssim_image fa = { u.f.px, u.f.width, u.f.height,
			    (size_t)u.f.width * 4, 4 };
			struct ssim_image ga = { u.g.px, u.g.width, u.g.height,
			    (size_t)u.g.width * 4, 4 };

			if (ssim_compare(&fa, &ga, &u.r, NULL) == 0)
				u.compared = 1;
		}
		free(data);
	}
	if (!yes) {
		/* the person looks at the frame before saying yes */
		if (dir_make(o->project, "gate", why, sizeof(why)) == 0 &&
		    scratch_write(u.actual, u.f_png, u.f_len, why,
		    sizeof(why)) == 0)
			fprintf(stderr, "the frame of scene '%s' (%" PRIu32 "×%"
			    PRIu32 ", %s%s) is at %s: look at it.\n", o->scene,
			    u.f.width, u.f.height, o->frame_file ? "the file " :
			    "captured", o->frame_file ? o->frame_file : "",
			    u.actual);
		if (*prev)
			fprintf(stderr, "%s%s", prev, u.compared ? "" : ".\n");
		if (*prev && u.compared)
			fprintf(stderr, "; against it the frame has SSIM %.4f "
			    "(%s), %.1f%% of pixels changed.\n", u.r.min,
			    channel_name[weakest(&u.r)],
			    100 * u.r.changed_share);
		snprintf(q, sizeof(q), "Record it as the golden every later "
		    "frame of '%s' is judged by? [y/N] ", o->scene);
		if (!ask(q)) {
			fprintf(stderr, "not recorded.\n");
			rc = GATE_FAIL;
			goto out;
		}
	}
	if ((rc = dir_make(o->project, "goldens", why, sizeof(why))) != 0 ||
	    (rc = picture_write(u.golden, &u.f, 1, sha, why,
	    sizeof(why))) != 0) {
		fprintf(stderr, "sloptimize gate --record: %s\n", why);
		rc = GATE_ENVIRONMENT;
		goto out;
	}
	rec = cJSON_CreateObject();
	cJSON_AddStringToObject(rec, "type", "golden");
	cJSON_AddStringToObject(rec, "scene", o->scene);
	cJSON_AddStringToObject(rec, "who", user_name(ubuf, sizeof(ubuf)));
	cJSON_AddStringToObject(rec, "sha256", sha);
	cJSON_AddNumberToObject(rec, "width", u.f.width);
	cJSON_AddNumberToObject(rec, "height", u.f.height);
	cJSON_AddStringToObject(rec, "source", u.source);
	if (*u.config_hash)
		cJSON_AddStringToObject(rec, "configHash", u.config_hash);
	cJSON_AddStringToObject(rec, "confirmed", yes ? "--yes" : "terminal");
	if (u.recorded != NULL)
		cJSON_AddStringToObject(rec, "replaces",
		    str_of(u.recorded, "sha256"));
	rc = project_goldens_append(o->project, rec, why, sizeof(why));
	cJSON_Delete(rec);
	if (rc != 0) {
		fprintf(stderr, "sloptimize gate --record: %s was written but "
		    "not recorded in goldens.jsonl (%s): the next gate will "
		    "call it changed outside --record; record it again\n",
		    u.golden, why);
		rc = GATE_ENVIRONMENT;
		goto out;
	}
	printf("recorded the golden of scene '%s': %s (%" PRIu32 "×%" PRIu32
	    ", sha256 %s), a line in %s\n", o->scene, u.golden, u.f.width,
	    u.f.height, sha, u.ledger);
	if (o->frame_file != NULL)
		printf("  from the file %s, not a capture of the game\n",
		    o->frame_file);
	rc = GATE_PASS;
out:
	pngio_image_free(&u.g);
	pngio_image_free(&u.f);
	free(u.f_png);
	cJSON_Delete(u.recorded);
	cJSON_Delete(u.warnings);
	return rc;
}

/* --- the verb ------------------------------------------------------------ */

static void
print_text(const cJSON *d)
{
	const char	*verdict = str_of(d, "verdict"), *scene = str_of(d,
			    "scene");
	const cJSON	*s = cJSON_GetObjectItemCaseSensitive(d, "ssim");
	const cJSON	*ch = cJSON_GetObjectItemCaseSensitive(d, "changed");
	const cJSON	*g = cJSON_GetObjectItemCaseSensitive(d, "golden");
	const cJSON	*f = cJSON_GetObjectItemCaseSensitive(d, "frame");
	const cJSON	*fl = cJSON_GetObjectItemCaseSensitive(d, "files");
	const cJSON	*rec = cJSON_GetObjectItemCaseSensitive(g, "recorded");
	const cJSON	*w;
	double		 th = cJSON_GetNumberValue(cJSON_GetObjectItem(d,
			    "threshold"));

	if (s == NULL) {
		fprintf(stderr, "sloptimize gate: %s\n", str_of(d, "error"));
	} else {
		double min = cJSON_GetNumberValue(cJSON_GetObjectItem(s, "min"));
		double share = cJSON_GetNumberValue(cJSON_GetObjectItem(ch,
		    "share"));

		printf("gate %s: %s — SSIM %.4f (%s) %s %.2f\n", scene,
		    strcmp(verdict, "pass") == 0 ? "pass" : "FAIL", min,
		    str_of(s, "weakest"), min >= th ? "≥" : "<", th);
		printf("  SSIM     R %.4f  G %.4f  B %.4f   the gate judges "
		    "the smallest\n",
		    cJSON_GetNumberValue(cJSON_GetObjectItem(s, "r")),
		    cJSON_GetNumberValue(cJSON_GetObjectItem(s, "g")),
		    cJSON_GetNumberValue(cJSON_GetObjectItem(s, "b")));
		printf("  changed  %.2f%% of pixels (%.0f of %.0f), largest "
		    "difference %.0f of 255%s\n", 100 * share,
		    cJSON_GetNumberValue(cJSON_GetObjectItem(ch, "pixels")),
		    cJSON_GetNumberValue(cJSON_GetObjectItem(ch, "of")),
		    cJSON_GetNumberValue(cJSON_GetObjectItem(ch, "maxDelta")),
		    share == 0 ? ": identical to the golden" : "");
		if (strcmp(str_of(f, "source"), "file") == 0)
			printf("  frame    %s — a file (--frame), not a capture "
			    "of the game\n", str_of(f, "path"));
		else
			printf("  frame    captured%s%s\n",
			    cJSON_GetObjectItem(f, "configHash") ?
			    ", configHash " : "", cJSON_GetObjectItem(f,
			    "configHash") ? str_of(f, "configHash") : "");
		printf("  golden   %s, recorded %s by %s\n", str_of(g, "path"),
		    str_of(rec, "at"), str_of(rec, "who"));
		if (cJSON_GetObjectItem(fl, "actual"))
			printf("  actual   %s\n", str_of(fl, "actual"));
		if (cJSON_GetObjectItem(fl, "diff"))
			printf("  diff     %s\n", str_of(fl, "diff"));
	}
	cJSON_ArrayForEach(w, cJSON_GetObjectItem(d, "warnings"))
		if (strstr(w->valuestring, "(--frame)") == NULL || s == NULL)
			fprintf(stderr, "sloptimize gate: warning: %s\n",
			    w->valuestring);
}

static const char usage[] =
"usage: sloptimize gate --scene S [--threshold 0.98] [--launch] [--url URL]\n"
"                       [--timeout SECONDS] [--json]\n"
"       sloptimize gate --record --scene S [--yes] [--launch] [--url URL]\n"
"                       [--timeout SECONDS]\n"
"\n"
"The correctness gate: the scene's frame (at its fixed step, under the\n"
"virtual clock) against its golden, .sloptimize/goldens/S.png, by SSIM on\n"
"each of R, G and B; it passes when the smallest reaches the threshold.\n"
"The frame and a difference picture go to .sloptimize/gate/.\n"
"\n"
"  --scene S        a named scene (docs/bench.md)\n"
"  --threshold T    the smallest SSIM that passes (default 0.98)\n"
"  --launch         spawn a headless Chromium rather than use the open tab\n"
"  --url URL        the game's URL (default: .sloptimize/dev.json's)\n"
"  --timeout S      the capture's whole deadline (default 300 s)\n"
"  --record         write the frame as the scene's golden: a person's act,\n"
"                   on a terminal (it asks first) or with --yes; never with\n"
"                   --json, never over MCP\n"
"  --yes            record without asking, when a person approved the frame\n"
"  --frame FILE     compare (or record) a PNG file instead of a capture: for\n"
"                   tests and tools; every output says so\n"
"\n"
"exit: 0 pass (or recorded), 1 fail (or not recorded), 2 usage (or --record\n"
"refused), 3 not comparable (sizes differ; the golden is not a PNG, or not\n"
"the one goldens.jsonl records), 4 no golden, no browser, no frame;\n"
"130/143 interrupted by SIGINT/SIGTERM (the browser taken down).\n"
"docs/gate.md.\n";

int
verb_gate(int argc, char **argv)
{
	struct cli_common	 c;
	struct gate_opts	 o = { 0 };
	const char		*threshold = NULL, *timeout = NULL;
	int			 rec = 0, yes = 0, rc;
	char			 why[3 * PATH_MAX], *end;
	cJSON			*doc;
	const struct cli_opt	 opts[] = {
		{ "scene", OPT_ARG, &o.scene },
		{ "threshold", OPT_ARG, &threshold },
		{ "launch", OPT_FLAG, &o.launch },
		{ "url", OPT_ARG, &o.url },
		{ "record", OPT_FLAG, &rec },
		{ "yes", OPT_FLAG, &yes },
		{ "frame", OPT_ARG, &o.frame_file },
		{ "timeout", OPT_ARG, &timeout },
		{ NULL, 0, NULL }
	};

	if ((rc = cli_parse(argc, argv, opts, &c, usage, NULL, NULL)) >= 0)
		return rc;
	o.project = c.project;
	o.threshold = GATE_THRESHOLD;
	o.signals = 1;
	if (timeout != NULL) {
		long	s;

		if (cli_whole("gate", "timeout", timeout, 1, 3600, &s) != 0)
			return GATE_USAGE;
		o.timeout_ms = (int)s * 1000;
	}
	if (o.scene == NULL) {
		fprintf(stderr, "sloptimize gate: --scene S is required\n%s",
		    usage);
		return GATE_USAGE;
	}
	if (!gate_scene_ok(o.scene)) {
		fprintf(stderr, "sloptimize gate: %s (not '%s')\n",
		    GATE_SCENE_RULE, o.scene);
		return GATE_USAGE;
	}
	if (threshold != NULL) {
		errno = 0;
		o.threshold = strtod(threshold, &end);
		if (errno || end == threshold || *end != '\0' ||
		    !(o.threshold > 0 && o.threshold <= 1)) {
			fprintf(stderr, "sloptimize gate: --threshold is an SSIM "
			    "above 0 and at most 1, not '%s'\n", threshold);
			return GATE_USAGE;
		}
	}
	if (rec) {
		if (c.json) {
			fprintf(stderr, "sloptimize gate: --record is refused "
			    "with --json: recording a golden is a person's "
			    "act, not a program's\n");
			return GATE_USAGE;
		}
		if (threshold != NULL) {
			fprintf(stderr, "sloptimize gate: --record takes no "
			    "--threshold\n");
			return GATE_USAGE;
		}
		if (!yes && !isatty(STDIN_FILENO)) {
			fprintf(stderr, "sloptimize gate: --record is refused: "
			    "not on a terminal. Goldens are the human's: a "
			    "person runs it in a terminal (it shows the frame "
			    "and asks), or passes --yes having approved the "
			    "frame. An agent never re-records a golden.\n");
			return GATE_USAGE;
		}
		return record(&o, yes);
	}
	if (yes) {
		fprintf(stderr, "sloptimize gate: --yes goes with --record\n");
		return GATE_USAGE;
	}
	rc = gate_compare(&o, &doc, why, sizeof(why));
	if (doc == NULL) {
		fprintf(stderr, "sloptimize gate: %s\n", why);
		return rc;
	}
	if (c.json) {
		print_json(doc);
		if (*why)
			fprintf(stderr, "sloptimize gate: %s\n", why);
	} else
		print_text(doc);
	cJSON_Delete(doc);
	return rc;
}
