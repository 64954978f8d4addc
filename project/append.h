/*
 * append — the writers of a project's ledger files: fix records to
 * fixes.jsonl (`sloptimize fix`, POST /api/sloptimize/fixes) and batches
 * of records to perf.jsonl (POST /api/sloptimize/records, the in-game
 * recorder's ingest).
 *
 * Every write is one line, or one batch of lines, in one write(2) on an
 * O_APPEND descriptor, under an exclusive flock(2) of the file, fsynced
 * before it is acknowledged: two writers never interleave, a tailer never
 * sees half a record, and what was acknowledged survives a crash.
 *
 * What is written is what the fold will count: every line is checked with
 * the fold's own strict scanner (ledger/jscan.h) before it is written, so
 * a writer can never acknowledge a record the fold then skips.
 */
#ifndef PROJECT_APPEND_H
#define PROJECT_APPEND_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#define PROJECT_LOCK_WAIT_MS	10000	/* for the writers' lock, default */
#define PROJECT_WHY_MAX		160	/* room for a reason */

/* How a write may be called off. */
struct project_write {
	/* Set (by another thread) when whoever asked for the write is gone:
	 * checked before the file is opened and again once the lock is
	 * held, just before the write(2).  NULL: never. */
	const atomic_int	*gone;
	/* How long to wait for the writers' lock: 0 the default, < 0 not
	 * at all. */
	int			 lock_wait_ms;
};

/*
 * Is text[0..n) one JSON object the fold reads as it was written: strict
 * RFC 8259 (UTF-8, no raw control characters, nothing after the object;
 * whitespace around it is allowed), no "\u0000" escape (every C reader
 * cuts a string there), at most LEDGER_MAX_LINE - 1 bytes?  0, or -EINVAL
 * with why[cap] ("invalid UTF-8 at byte 12").
 */
int	project_json_check(const char *text, size_t n, char *why, size_t cap);

/* The offset of the first "\u0000" escape in valid JSON text, or -1:
 * what the checks above refuse (the MCP server too). */
long	project_nul_escape(const char *text, size_t n);

/*
 * The same, and a record (DESIGN §5): a non-empty string `type` and an
 * ISO-8601 `at` the fold can read.  0 or -EINVAL with why.
 */
int	project_record_check(const char *text, size_t n, char *why,
	    size_t cap);

/*
 * Validate a fix record and append it to <project>/.sloptimize/fixes.jsonl
 * as one line.  Fills in `type`, `id` (8 random hex digits) and `at` when
 * missing and normalises `status`.  Every id in `footprints` must be one
 * that a record of perf.jsonl carries (the project is folded to check):
 * a fix naming an unknown one is refused with the nearest known ids in
 * why, unless the record has `"force": true` (a boolean, taken out of the
 * record before it is written).  w may be NULL.  Returns 0, or a
 * negative errno with why[cap] set: -EINVAL for a record that is not a
 * valid fix or names an unknown footprint, -ECANCELED when w->gone was
 * set (nothing written),
 * -ETIMEDOUT when the lock stayed taken, -PROJECT_ENOTREG when
 * fixes.jsonl is not a regular file.
 */
int	project_fix_append(const char *project, cJSON *rec,
	    const struct project_write *w, char *why, size_t cap);

struct ledger;
/*
 * The catalogue ids nearest to `id` (edit distance: fewest first, then the
 * most frequent), at most three, as "a, b, c" in out ("" if the catalogue
 * is empty): what a refusal of an unknown footprint names.
 */
void	project_footprints_nearest(struct ledger *l, const char *id,
	    char *out, size_t cap);

/*
 * project_fix_append in three steps.  The pure one (what
 * tests/fuzz/fuzz_body.c runs): validate the fix, take its `force` out
 * (*force: 1 to skip the next step), fill in what is missing, and make
 * the line to append, '\n'-ended, checked with the fold's scanner.  0
 * with *line (free it) and *len, or -EINVAL / -ENOMEM with why.
 */
int	project_fix_line(cJSON *rec, int *force, char **line, size_t *len,
	    char *why, size_t cap);
/* Every footprint a checked fix names is one the ledger has seen (a fold
 * of the project's files): 0, or -EINVAL with why naming the nearest
 * known ids, or the fold's error. */
int	project_fix_known(const char *project, const cJSON *rec, char *why,
	    size_t cap);
/* Append a line project_fix_line made (the same errors as
 * project_fix_append). */
int	project_fix_write(const char *project, const char *line, size_t len,
	    const struct project_write *w, char *why, size_t cap);

/*
 * Write buf[0..len) with one write(2) on fd, an O_APPEND descriptor: 0
 * when it all went, else a negative errno with nothing of it left in the
 * file.  A short write (a full disk takes what fits and says nothing)
 * learns its real cause (-ENOSPC, -EDQUOT, -EFBIG) by offering the rest
 * once more, and is then cut back off with ftruncate(2) — unless another
 * writer appended after it, which cannot be undone (-EIO; the torn tail
 * then stays a line of its own, skipped and counted by the fold).  For
 * writers that append without the lock too (`sloptimize replay`).
 */
int	project_write_once(int fd, const char *buf, size_t len);

/*
 * Append a golden's record to <project>/.sloptimize/goldens.jsonl
 * (docs/gate.md): `sloptimize gate --record` is its only writer.  rec is
 * an object with type "golden", a `scene` (1–64 of A–Z a–z 0–9 _ -), a
 * `sha256` (64 lowercase hex digits: the PNG file's bytes) and a string
 * `who`; `at` is filled in when missing.  One line, one write(2), under
 * the file's lock, like every ledger writer here.  0, or -EINVAL (not
 * such a record) or a write error as for project_fix_append, with why.
 */
int	project_goldens_append(const char *project, cJSON *rec, char *why,
	    size_t cap);

/*
 * Append one JSON object as a line to <project>/.sloptimize/<name> (a
 * plain file name: bench-history.jsonl) through the same writer as the
 * fixes: checked with project_json_check, one write(2) under the file's
 * lock, a newline first if the file ends inside a line, fsynced.  line is
 * the object's text without a newline (one is added).  0, or a negative
 * errno with why: -EINVAL for text that is not one valid JSON object on
 * one line, or the errors of project_fix_append.
 */
int	project_line_append(const char *project, const char *name,
	    const char *line, size_t len, const struct project_write *w,
	    char *why, size_t cap);

/* What project_records_append did with a batch. */
#define PROJECT_REFUSALS_KEPT	64	/* refusals listed; all counted */
struct project_refusal {
	size_t	index;			/* the record's place in the batch */
	char	why[PROJECT_WHY_MAX];
};
struct project_batch {
	size_t			 records;	/* in the body */
	size_t			 accepted;	/* appended, in order */
	size_t			 refused;
	size_t			 nlisted;	/* ≤ PROJECT_REFUSALS_KEPT */
	struct project_refusal	 list[PROJECT_REFUSALS_KEPT];
	uint64_t		 bytes;		/* appended */
};

/*
 * Append the records of body[0..len) to <project>/.sloptimize/perf.jsonl:
 * a JSON array of records, or NDJSON (one record a line).  Each record is
 * checked on its own (project_record_check); the accepted ones are
 * appended in order, compacted to one line each, in one write(2) under
 * the file's lock.  Returns 0 with *out saying what was accepted and what
 * refused (and why) — also when nothing was accepted — or -EINVAL with
 * why when the body is not a batch at all (an array that is not valid
 * JSON, an empty body), or an errno as for project_fix_append: then
 * nothing was written.
 */
int	project_records_append(const char *project, const char *body,
	    size_t len, const struct project_write *w,
	    struct project_batch *out, char *why, size_t cap);

/*
 * Its pure half: check the batch and make the lines to append (accepted
 * records, compacted, each '\n'-ended) into *lines (free it; NULL on
 * error) and *lines_len.  *out as above, bytes 0.  0, or -EINVAL /
 * -ENOMEM with why, and then *out says nothing was accepted.
 */
int	project_records_batch(const char *body, size_t len,
	    struct project_batch *out, char **lines, size_t *lines_len,
	    char *why, size_t cap);

#endif
