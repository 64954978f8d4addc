/*
 * test_project_checkpoint — the daemon's checkpoint on disk
 * (project/checkpoint.h) and the fold that resumes from it
 * (project_fold_resume): for every fixture and a generated ledger, a
 * checkpoint saved part way and the rest appended answer byte for byte
 * as a fold from byte 0; and a checkpoint that does not stand on the
 * files any more — another project's, a ledger truncated, rewritten or
 * replaced, fixes.jsonl changed, a torn or damaged or foreign file, a
 * save killed at any point — is refused with its reason, and the answer
 * is still a fold from byte 0.  Never a wrong catalogue.
 */
#define _GNU_SOURCE	/* memmem */
#include <sys/stat.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "tests/unitfs.h"

#include "ledger/footprint.h"
#include "ledger/ledger.h"
#include "ledger/ledger_impl.h"
#include "project/checkpoint.h"
#include "project/filemark.h"
#include "project/project.h"

#define NOW	1790812800000LL		/* 2026-10-01T00:00:00Z */

static const struct ledger_opts daemon_opts = {
	LEDGER_NO_TIME, LEDGER_NO_TIME, 0, 1, NULL
};

struct fx {
	char	root[256];
	char	proj[300], perf[400], fixes[400];
	char	ckpt[400];
};

static char gen_dir[256];

static int
group_setup(void **state)
{
	char	cmd[512];

	(void)state;
	strcpy(gen_dir, "/tmp/sloptimize-ckgen-XXXXXX");
	if (mkdtemp(gen_dir) == NULL)
		return -1;
	snprintf(cmd, sizeof(cmd), "python3 tests/genledger.py %s --records "
	    "8000 --causes 60 --builds 6 --fixes 12 > /dev/null", gen_dir);
	return system(cmd) == 0 ? 0 : -1;
}

static int
group_teardown(void **state)
{
	(void)state;
	return unitfs_rmrf(gen_dir);
}

static int
setup(void **state)
{
	struct fx	*fx = calloc(1, sizeof(*fx));
	char		 dir[340];

	assert_non_null(fx);
	unitfs_tmpdir(fx->root, sizeof(fx->root), "ckpt");
	snprintf(fx->proj, sizeof(fx->proj), "%s/game", fx->root);
	snprintf(dir, sizeof(dir), "%s/.sloptimize", fx->proj);
	assert_int_equal(mkdir(fx->proj, 0755), 0);
	assert_int_equal(mkdir(dir, 0755), 0);
	snprintf(fx->perf, sizeof(fx->perf), "%s/perf.jsonl", dir);
	snprintf(fx->fixes, sizeof(fx->fixes), "%s/fixes.jsonl", dir);
	snprintf(fx->ckpt, sizeof(fx->ckpt), "%s/checkpoint", fx->root);
	*state = fx;
	return 0;
}

static int
teardown(void **state)
{
	struct fx	*fx = *state;

	if (unitfs_rmrf(fx->root) != 0)
		return -1;
	free(fx);
	return 0;
}

/* --- files ------------------------------------------------------------ */

struct bytes {
	char	*p;
	size_t	 n;
};

static struct bytes
slurp(const char *path)
{
	struct bytes	 b = { NULL, 0 };
	FILE		*f = fopen(path, "rb");
	long		 n;

	if (f == NULL)
		return b;
	assert_int_equal(fseek(f, 0, SEEK_END), 0);
	n = ftell(f);
	rewind(f);
	assert_non_null(b.p = malloc((size_t)n + 1));
	assert_int_equal(fread(b.p, 1, (size_t)n, f), (size_t)n);
	b.n = (size_t)n;
	fclose(f);
	return b;
}

static void
put_file(const char *path, const void *p, size_t n, int append)
{
	int	fd = open(path, O_WRONLY | O_CREAT | (append ? O_APPEND :
		    O_TRUNC), 0644);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, p, n), (ssize_t)n);
	close(fd);
}

/* --- what the daemon does: fold, then save with the mark -------------- */

static void
mark_of(const struct fx *fx, struct checkpoint_mark *m, uint64_t gen)
{
	struct bytes	perf = slurp(fx->perf), fixes = slurp(fx->fixes);
	struct stat	st;

	memset(m, 0, sizeof(*m));
	assert_int_equal(stat(fx->perf, &st), 0);
	m->generation = gen;
	m->offset = perf.n;
	m->dev = (uint64_t)st.st_dev;
	m->ino = (uint64_t)st.st_ino;
	m->hash_len = perf.n < CHECKPOINT_WINDOW ? (uint32_t)perf.n :
	    CHECKPOINT_WINDOW;
	m->hash = fnv1a64(perf.p + perf.n - m->hash_len, m->hash_len);
	m->fixes_offset = fixes.n;
	m->fixes_hash = fnv1a64(fixes.p ? fixes.p : "", fixes.n);
	m->written_ms = NOW;
	/* the whole prefix, and the file as it is now (filemark.h) */
	m->flags = FILEMARK_PREFIX | FILEMARK_STAT;
	m->prefix = crc32c_more(0, perf.p ? perf.p : "", perf.n);
	m->st_size = (uint64_t)st.st_size;
	m->mtime_ns = (int64_t)st.st_mtim.tv_sec * 1000000000 +
	    st.st_mtim.tv_nsec;
	m->ctime_ns = (int64_t)st.st_ctim.tv_sec * 1000000000 +
	    st.st_ctim.tv_nsec;
	free(perf.p);
	free(fixes.p);
}

/* Fold the files as they are now (complete lines) and save the
 * checkpoint to `path`, as the daemon would. */
static void
save_now(const struct fx *fx, const char *path)
{
	struct ledger			*l;
	struct project_fold_info	 fi;
	struct ledger_snap		*snap;
	struct checkpoint_mark		 m;

	assert_int_equal(project_fold(fx->proj, &daemon_opts, &l, &fi), 0);
	assert_int_equal(fi.partial, 0);
	mark_of(fx, &m, 1);
	assert_int_equal(ledger_checkpoint_begin(l, &snap), 0);
	assert_int_equal(checkpoint_save(path, &m, snap), 0);
	ledger_snap_free(snap);
	ledger_destroy(l);
}

/* --- what a reader answers --------------------------------------------- */

static int
to_bytes(void *arg, const void *data, size_t len)
{
	struct bytes	*b = arg;

	assert_non_null(b->p = realloc(b->p, b->n + len + 1));
	memcpy(b->p + b->n, data, len);
	b->n += len;
	b->p[b->n] = '\0';
	return 0;
}

/*
 * The catalogue (issues' options) and the timeline (history's), folded
 * with the checkpoint at `ckpt` (NULL: from byte 0), as one string; *fi
 * of the catalogue's fold.
 */
static char *
answers(const struct fx *fx, const char *ckpt, struct project_fold_info *fi,
    struct project_fold_info *hfi)
{
	struct ledger_opts	 io = { LEDGER_NO_TIME, LEDGER_NO_TIME, 0, 0,
				    NULL };
	struct ledger		*l;
	struct bytes		 b = { NULL, 0 };
	char			 src[64];

	assert_int_equal(project_fold_resume(fx->proj, ckpt, &io,
	    PROJECT_RESUME_ANY_TIMELINE, &l, fi), 0);
	assert_int_equal(ledger_issues_write(l, NULL, NOW, NULL, to_bytes, &b),
	    0);
	ledger_destroy(l);
	assert_int_equal(project_fold_resume(fx->proj, ckpt, &daemon_opts, 0,
	    &l, hfi), 0);
	assert_int_equal(ledger_history_write(l, 24, NOW, NULL, to_bytes, &b),
	    0);
	assert_int_equal(ledger_history_write(l, 5, NOW, NULL, to_bytes, &b),
	    0);
	ledger_destroy(l);
	/* what the CLI prints as its source: the same either way */
	snprintf(src, sizeof(src), "\nbytes %llu partial %llu fixes %d",
	    (unsigned long long)fi->bytes, (unsigned long long)fi->partial,
	    fi->have_fixes);
	to_bytes(&b, src, strlen(src));
	return b.p;
}

/* Resumed from the checkpoint, with the answers of a fold from byte 0. */
static void
expect_resumed(const struct fx *fx, uint64_t at)
{
	struct project_fold_info	fi, hfi, ffi, fhfi;
	char				*got = answers(fx, fx->ckpt, &fi, &hfi);
	char				*fresh = answers(fx, NULL, &ffi, &fhfi);

	if (!fi.resumed || !hfi.resumed)
		fail_msg("not resumed: %s / %s", fi.resume_why,
		    hfi.resume_why);
	assert_int_equal(fi.resumed_at, at);
	assert_string_equal(got, fresh);
	assert_false(ffi.resumed);
	free(got);
	free(fresh);
}

/* Refused with a reason containing `why`, and the answers of a fold from
 * byte 0 all the same (`fresh`: those answers, if known already). */
static void
expect_refused_as(const struct fx *fx, const char *why, const char *fresh)
{
	struct project_fold_info	fi, hfi, ffi, fhfi;
	char				*got = answers(fx, fx->ckpt, &fi, &hfi);
	char				*mine = NULL;

	if (fresh == NULL)
		fresh = mine = answers(fx, NULL, &ffi, &fhfi);
	if (fi.resumed || hfi.resumed)
		fail_msg("resumed, but should be refused for '%s'", why);
	if (why != NULL && strstr(fi.resume_why, why) == NULL)
		fail_msg("refused for '%s', not '%s'", fi.resume_why, why);
	assert_string_equal(got, fresh);
	free(got);
	free(mine);
}

static void
expect_refused(const struct fx *fx, const char *why)
{
	expect_refused_as(fx, why, NULL);
}

/* --- the cases ---------------------------------------------------------- */

static const char *const fixtures[] = {
	"automated", "basic", "empty", "fix-status", "gaps", "heartbeats-only",
	"judged-fixed", "judged-pending", "judged-regressed", "malformed",
	"no-at", "strings-as-numbers", "unknown",
};

/* The byte just past the line that holds byte `at` (a line boundary). */
static size_t
boundary(const struct bytes *b, size_t at)
{
	const char	*nl;

	if (at >= b->n)
		return b->n;
	nl = memchr(b->p + at, '\n', b->n - at);
	return nl != NULL ? (size_t)(nl - b->p) + 1 : b->n;
}

/* Save at `cut` of the whole `perf`, append the rest: resumed, equal. */
static void
resume_at(struct fx *fx, const struct bytes *perf, const struct bytes *fixes,
    size_t cut)
{
	unlink(fx->perf);
	unlink(fx->fixes);
	unlink(fx->ckpt);
	put_file(fx->perf, perf->p, cut, 0);
	if (fixes->p != NULL)
		put_file(fx->fixes, fixes->p, fixes->n, 0);
	save_now(fx, fx->ckpt);
	put_file(fx->perf, perf->p + cut, perf->n - cut, 1);
	expect_resumed(fx, cut);
	/* an unfinished last line is left unfolded either way */
	put_file(fx->perf, "{\"type\":\"heartbeat\"", 19, 1);
	expect_resumed(fx, cut);
}

static void
resume_case(struct fx *fx, const char *perf_path, const char *fixes_path)
{
	struct bytes	perf = slurp(perf_path), fixes = slurp(fixes_path);
	size_t		cut, k;

	assert_non_null(perf.p);
	for (k = 0; k <= 4; k++) {
		/* the last line of a malformed fixture may lack its '\n' */
		cut = boundary(&perf, perf.n * k / 4);
		if (cut > 0 && perf.p[cut - 1] != '\n')
			continue;
		resume_at(fx, &perf, &fixes, cut);
	}
	free(perf.p);
	free(fixes.p);
}

static void
checkpoint_resume_equals_fresh(void **state)
{
	struct fx	*fx = *state;
	char		 p[PATH_MAX], f[PATH_MAX];
	size_t		 i;

	for (i = 0; i < sizeof(fixtures) / sizeof(fixtures[0]); i++) {
		snprintf(p, sizeof(p), "tests/fixtures/%s.jsonl", fixtures[i]);
		snprintf(f, sizeof(f), "tests/fixtures/%s.fixes.jsonl",
		    fixtures[i]);
		resume_case(fx, p, f);
	}
	snprintf(p, sizeof(p), "%s/.sloptimize/perf.jsonl", gen_dir);
	snprintf(f, sizeof(f), "%s/.sloptimize/fixes.jsonl", gen_dir);
	resume_case(fx, p, f);
}

/* A generated ledger, a checkpoint half way: the setting of the cases
 * below. */
static void
half_way(struct fx *fx, struct bytes *perf, struct bytes *fixes, size_t *cut)
{
	char	p[PATH_MAX], f[PATH_MAX];

	snprintf(p, sizeof(p), "%s/.sloptimize/perf.jsonl", gen_dir);
	snprintf(f, sizeof(f), "%s/.sloptimize/fixes.jsonl", gen_dir);
	*perf = slurp(p);
	*fixes = slurp(f);
	assert_true(fixes->n > 0);
	*cut = boundary(perf, perf->n / 2);
	unlink(fx->ckpt);
	put_file(fx->perf, perf->p, *cut, 0);
	put_file(fx->fixes, fixes->p, fixes->n, 0);
	save_now(fx, fx->ckpt);
	put_file(fx->perf, perf->p + *cut, perf->n - *cut, 1);
	expect_resumed(fx, *cut);
}

/* perf.jsonl no longer holds what the checkpoint stands on. */
static void
checkpoint_refused_when_perf_changed(void **state)
{
	struct fx	*fx = *state;
	struct bytes	 perf, fixes;
	size_t		 cut;
	char		 copy[450];

	/* truncated below the checkpoint */
	half_way(fx, &perf, &fixes, &cut);
	assert_int_equal(truncate(fx->perf, (off_t)cut - 10), 0);
	expect_refused(fx, "perf.jsonl was truncated while stopped");
	/* truncated and rewritten longer, same inode: other bytes */
	put_file(fx->perf, perf.p + 100, perf.n - 100, 0);
	expect_refused(fx, "perf.jsonl was");
	free(perf.p);
	free(fixes.p);
	/* the same bytes, but another file (replaced while stopped) */
	half_way(fx, &perf, &fixes, &cut);
	snprintf(copy, sizeof(copy), "%s.new", fx->perf);
	put_file(copy, perf.p, perf.n, 0);
	assert_int_equal(rename(copy, fx->perf), 0);
	expect_refused(fx, "perf.jsonl was replaced while stopped");
	free(perf.p);
	free(fixes.p);
}

/*
 * Issue 23: a same-length edit more than 4 KiB before the offset, with
 * the window and the inode as they were, is seen — by the CRC of the
 * whole prefix, read because the file's times moved.  Untouched since
 * the save (the times as they were) the prefix is not read: a mark whose
 * CRC is wrong still resumes then, which is what makes a restart O(new
 * bytes); one write later it is read and refused.
 */
static void
checkpoint_refused_when_prefix_changed(void **state)
{
	struct fx		*fx = *state;
	struct bytes		 perf, fixes, ck;
	struct checkpoint_file	 f;
	struct checkpoint_mark	 m;
	char			 why[CHECKPOINT_WHY_MAX];
	const char		*at;
	size_t			 cut;
	int			 fd;

	half_way(fx, &perf, &fixes, &cut);
	assert_true(cut > 3 * CHECKPOINT_WINDOW);
	at = memmem(perf.p, cut - 2 * CHECKPOINT_WINDOW, "\"p95Ms\":", 8);
	assert_non_null(at);
	assert_true((fd = open(fx->perf, O_WRONLY)) >= 0);
	assert_int_equal(pwrite(fd, "\"p95Mx\"", 7, at - perf.p), 7);
	close(fd);
	expect_refused(fx, "bytes before the checkpoint changed");

	/* untouched since the save: the prefix is not read */
	free(perf.p);
	free(fixes.p);
	unlink(fx->perf);
	unlink(fx->fixes);
	unlink(fx->ckpt);
	half_way(fx, &perf, &fixes, &cut);
	save_now(fx, fx->ckpt);		/* of the whole file, as it is */
	assert_int_equal(checkpoint_open(fx->ckpt, &f, &m, why, sizeof(why)),
	    0);
	checkpoint_close(&f);
	assert_true((fd = open(fx->perf, O_RDONLY)) >= 0);
	assert_int_equal(checkpoint_verify_perf(&m, fd, why, sizeof(why)), 0);
	m.prefix ^= 1;			/* a CRC the file does not have */
	assert_int_equal(checkpoint_verify_perf(&m, fd, why, sizeof(why)), 0);
	m.st_size++;			/* as if written since: read, refused */
	assert_int_equal(checkpoint_verify_perf(&m, fd, why, sizeof(why)),
	    -ESTALE);
	assert_non_null(strstr(why, "bytes before the checkpoint changed"));
	m.prefix ^= 1;
	assert_int_equal(checkpoint_verify_perf(&m, fd, why, sizeof(why)), 0);
	m.flags = 0;			/* no prefix: never used */
	assert_int_equal(checkpoint_verify_perf(&m, fd, why, sizeof(why)),
	    -ESTALE);
	close(fd);
	ck = slurp(fx->ckpt);
	assert_true(ck.n > 0);
	free(ck.p);
	free(perf.p);
	free(fixes.p);
}

/* Another project's checkpoint, put where this one's should be: the same
 * bytes, but not this file. */
static void
checkpoint_refused_from_another_file(void **state)
{
	struct fx	*fx = *state, other = *fx;
	struct bytes	 perf, fixes, ck;
	size_t		 cut;
	char		 dir[340];

	half_way(fx, &perf, &fixes, &cut);
	snprintf(other.proj, sizeof(other.proj), "%s/other", fx->root);
	snprintf(dir, sizeof(dir), "%s/.sloptimize", other.proj);
	assert_int_equal(mkdir(other.proj, 0755), 0);
	assert_int_equal(mkdir(dir, 0755), 0);
	snprintf(other.perf, sizeof(other.perf), "%s/perf.jsonl", dir);
	snprintf(other.fixes, sizeof(other.fixes), "%s/fixes.jsonl", dir);
	snprintf(other.ckpt, sizeof(other.ckpt), "%s/other-checkpoint",
	    fx->root);
	put_file(other.perf, perf.p, cut, 0);
	put_file(other.fixes, fixes.p, fixes.n, 0);
	save_now(&other, other.ckpt);
	ck = slurp(other.ckpt);
	put_file(fx->ckpt, ck.p, ck.n, 0);
	expect_refused(fx, "perf.jsonl was replaced while stopped");
	free(ck.p);
	free(perf.p);
	free(fixes.p);
}

/* fixes.jsonl: appended — resumed, the new fixes folded after; rewritten,
 * removed, or appended with a line the fold skips — refused. */
static void
checkpoint_fixes_changed(void **state)
{
	struct fx	*fx = *state;
	struct bytes	 perf, fixes;
	size_t		 cut;
	const char	*more = "{\"v\":1,\"type\":\"fix\",\"id\":\"0000beef\","
			    "\"at\":\"2026-09-30T10:00:00Z\",\"status\":"
			    "\"applied\",\"footprints\":[\"0000beef\"]}\n";

	half_way(fx, &perf, &fixes, &cut);
	put_file(fx->fixes, more, strlen(more), 1);
	expect_resumed(fx, cut);
	put_file(fx->fixes, "{not json\n", 10, 1);
	expect_refused(fx, "skipped");
	/* one byte of what the checkpoint holds, rewritten */
	fixes.p[fixes.n / 2] = fixes.p[fixes.n / 2] == 'x' ? 'y' : 'x';
	put_file(fx->fixes, fixes.p, fixes.n, 0);
	expect_refused(fx, "fixes.jsonl's first");
	assert_int_equal(unlink(fx->fixes), 0);
	expect_refused(fx, "fixes.jsonl is gone");
	free(perf.p);
	free(fixes.p);
}

/* A torn, damaged, foreign or other-version checkpoint file. */
static void
checkpoint_refused_when_torn(void **state)
{
	struct fx	*fx = *state;
	struct bytes	 perf, fixes, ck;
	size_t		 cut, i;
	uint64_t	 rs = 12345;

	struct project_fold_info	 ffi, fhfi;
	char				*fresh;

	half_way(fx, &perf, &fixes, &cut);
	fresh = answers(fx, NULL, &ffi, &fhfi);
	ck = slurp(fx->ckpt);
	assert_true(ck.n > 200);
	/* cut anywhere: in the header byte by byte, then sampled */
	for (i = 0; i < ck.n; i += i < 128 ? 1 : 1 + (size_t)((rs = rs *
	    6364136223846793005ull + 1442695040888963407ull) >> 33) %
	    (ck.n / 40)) {
		put_file(fx->ckpt, ck.p, i, 0);
		expect_refused_as(fx, i < 100 ? NULL : "torn", fresh);
	}
	/* one byte more */
	put_file(fx->ckpt, ck.p, ck.n, 0);
	put_file(fx->ckpt, "\n", 1, 1);
	expect_refused(fx, "torn");
	/* each header byte flipped, then sampled bytes of the fold */
	for (i = 0; i < ck.n; i += i < 100 ? 1 : ck.n / 97) {
		ck.p[i] ^= 0x10;
		put_file(fx->ckpt, ck.p, ck.n, 0);
		expect_refused_as(fx, NULL, fresh);
		ck.p[i] ^= 0x10;
	}
	/* another version, even with a header sum that matches */
	{
		uint32_t	v = CHECKPOINT_VERSION + 1;
		uint64_t	sum;

		memcpy(ck.p + 8, &v, 4);
		sum = fnv1a64(ck.p, 92);
		memcpy(ck.p + 92, &sum, 8);
		put_file(fx->ckpt, ck.p, ck.n, 0);
		expect_refused(fx, "another version");
	}
	/* not a checkpoint at all, and not a regular file */
	put_file(fx->ckpt, "cursor 1\n", 9, 0);
	expect_refused(fx, "torn");
	assert_int_equal(unlink(fx->ckpt), 0);
	assert_int_equal(mkfifo(fx->ckpt, 0600), 0);
	expect_refused(fx, "not a regular file");
	assert_int_equal(unlink(fx->ckpt), 0);
	expect_refused(fx, "No such file");
	free(fresh);
	free(ck.p);
	free(perf.p);
	free(fixes.p);
}

/* ledger_checkpoint_write's sink: into a buffer of ours. */
static int
to_plain(void *arg, const void *data, size_t len)
{
	struct bytes	*b = arg;

	assert_non_null(b->p = realloc(b->p, b->n + len + 1));
	memcpy(b->p + b->n, data, len);
	b->n += len;
	return 0;
}

/*
 * A checkpoint file whose fold part passes its CRC but names a build the
 * fold does not have (a heartbeat sample's build index past the builds:
 * history once read l->builds[] out of bounds with it).  It is refused as
 * damaged, and the catalogue and timeline are those of a fold from byte
 * 0 — nothing crashes and nothing of the bad part is used.
 */
static void
checkpoint_refused_with_a_build_index_out_of_range(void **state)
{
	struct fx	*fx = *state;
	struct bytes	 perf, fixes, ck, part = { NULL, 0 };
	struct ledger	*l;
	const char	*why;
	char		*at;
	size_t		 cut, head;

	half_way(fx, &perf, &fixes, &cut);
	ck = slurp(fx->ckpt);
	assert_non_null(at = memmem(ck.p, ck.n, "SLOPTCKP", 8));
	head = (size_t)(at - ck.p);
	assert_int_equal(ledger_checkpoint_read(&daemon_opts, at, ck.n - head,
	    &l, &why), 0);
	assert_true(l->hb.np > 0);
	l->hb.pb[l->hb.np - 1] = (uint32_t)l->nbuilds + 7;
	assert_int_equal(ledger_checkpoint_write(l, to_plain, &part), 0);
	ledger_destroy(l);
	/* the same length: the header's fold length still holds */
	assert_int_equal(part.n, ck.n - head);
	put_file(fx->ckpt, ck.p, head, 0);
	put_file(fx->ckpt, part.p, part.n, 1);
	expect_refused(fx, "damaged");
	free(part.p);
	free(ck.p);
	free(perf.p);
	free(fixes.p);
}

/* Other fold options than the checkpoint's: a fold from byte 0. */
static void
checkpoint_refused_for_other_options(void **state)
{
	struct fx			*fx = *state;
	struct bytes			 perf, fixes;
	struct project_fold_info	 fi;
	struct ledger_opts		 o = daemon_opts;
	struct ledger			*l;
	size_t				 cut;

	half_way(fx, &perf, &fixes, &cut);
	o.include_automated = 1;
	assert_int_equal(project_fold_resume(fx->proj, fx->ckpt, &o, 0, &l,
	    &fi), 0);
	assert_false(fi.resumed);
	assert_non_null(strstr(fi.resume_why, "other options"));
	ledger_destroy(l);
	o = daemon_opts;
	o.want_timeline = 0;		/* without ANY_TIMELINE */
	assert_int_equal(project_fold_resume(fx->proj, fx->ckpt, &o, 0, &l,
	    &fi), 0);
	assert_false(fi.resumed);
	ledger_destroy(l);
	o.occurrences_of = "81e5eb9b";
	assert_int_equal(project_fold_resume(fx->proj, fx->ckpt, &o,
	    PROJECT_RESUME_ANY_TIMELINE, &l, &fi), 0);
	assert_false(fi.resumed);
	assert_non_null(strstr(fi.resume_why, "occurrences"));
	ledger_destroy(l);
	free(perf.p);
	free(fixes.p);
}

/*
 * kill -9 at random points of checkpoint saves: a child saves, over and
 * over, the checkpoints of two positions in the file; whenever it dies,
 * what is at the path is a whole checkpoint of one of them (or none yet)
 * — resumed from there, answering as a fold from byte 0.
 */
static void
checkpoint_save_survives_kill9(void **state)
{
	struct fx	*fx = *state;
	struct bytes	 perf, fixes;
	size_t		 cut, cut2;
	int		 round, resumed = 0, mid_write = 0;
	char		 tmp[450];
	uint64_t	 rs = (uint64_t)time(NULL);

	struct ledger			*l[2];
	struct ledger_snap		*snap[2];
	struct checkpoint_mark		 m[2];
	struct project_fold_info	 pfi;

	half_way(fx, &perf, &fixes, &cut);
	cut2 = boundary(&perf, perf.n * 3 / 4);
	/* the folds of two positions of the file, with their marks */
	put_file(fx->perf, perf.p, cut, 0);
	assert_int_equal(project_fold(fx->proj, &daemon_opts, &l[0], &pfi), 0);
	mark_of(fx, &m[0], 1);
	put_file(fx->perf, perf.p + cut, cut2 - cut, 1);
	assert_int_equal(project_fold(fx->proj, &daemon_opts, &l[1], &pfi), 0);
	mark_of(fx, &m[1], 1);
	put_file(fx->perf, perf.p + cut2, perf.n - cut2, 1);
	assert_int_equal(ledger_checkpoint_begin(l[0], &snap[0]), 0);
	assert_int_equal(ledger_checkpoint_begin(l[1], &snap[1]), 0);
	snprintf(tmp, sizeof(tmp), "%s.tmp", fx->ckpt);
	for (round = 0; round < 40; round++) {
		struct project_fold_info	fi, hfi, ffi, fhfi;
		char				*got, *fresh;
		pid_t				 pid;
		int				 st, i;

		unlink(fx->ckpt);
		if ((pid = fork()) == 0) {
			for (i = 0;; i++)
				if (checkpoint_save(fx->ckpt, &m[i % 2],
				    snap[i % 2]) != 0)
					_exit(2);
		}
		assert_true(pid > 0);
		/* wait for it to be writing, then a random moment later */
		while (access(tmp, F_OK) != 0 && access(fx->ckpt, F_OK) != 0)
			usleep(200);
		usleep((useconds_t)((rs = rs * 6364136223846793005ull +
		    1442695040888963407ull) >> 33) % 30000);
		mid_write += access(tmp, F_OK) == 0;
		kill(pid, SIGKILL);
		assert_int_equal(waitpid(pid, &st, 0), pid);
		assert_true(WIFSIGNALED(st));
		got = answers(fx, fx->ckpt, &fi, &hfi);
		fresh = answers(fx, NULL, &ffi, &fhfi);
		assert_string_equal(got, fresh);
		if (fi.resumed) {
			resumed++;
			assert_true(fi.resumed_at == cut ||
			    fi.resumed_at == cut2);
		} else
			assert_non_null(strstr(fi.resume_why,
			    "No such file"));
		free(got);
		free(fresh);
	}
	for (round = 0; round < 2; round++) {
		ledger_snap_free(snap[round]);
		ledger_destroy(l[round]);
	}
	print_message("kill -9 during saves: %d of 40 resumed, %d with a "
	    "temp file being written\n", resumed, mid_write);
	assert_true(resumed > 0);
	assert_true(mid_write > 0);
	free(perf.p);
	free(fixes.p);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(checkpoint_resume_equals_fresh,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(
		    checkpoint_refused_when_perf_changed, setup, teardown),
		cmocka_unit_test_setup_teardown(
		    checkpoint_refused_when_prefix_changed, setup, teardown),
		cmocka_unit_test_setup_teardown(
		    checkpoint_refused_from_another_file, setup, teardown),
		cmocka_unit_test_setup_teardown(checkpoint_fixes_changed,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(checkpoint_refused_when_torn,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(
		    checkpoint_refused_for_other_options, setup, teardown),
		cmocka_unit_test_setup_teardown(
		    checkpoint_refused_with_a_build_index_out_of_range, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(
		    checkpoint_save_survives_kill9, setup, teardown),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
