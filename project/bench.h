/*
 * bench — a project's bench files (DESIGN §4, §16; docs/bench.md):
 *
 *   .sloptimize/bench/<scene>-<stamp>.json  one bench, written whole
 *                                           (temp file, fsync, rename)
 *   .sloptimize/bench-history.jsonl         one line per comparison,
 *                                           append-only (project/append.c)
 *   .sloptimize/dev.json                    the Vite dev server's URL
 *                                           (page-runtime/vite.js writes it)
 *
 * <stamp> is the bench's time as 20261129T120500.123Z: names sort by
 * time, and a scene name (which may hold '-') is what is left before it.
 *
 * A bench file is outside input here (a person may edit one, a disk may
 * tear one): the reader checks every field a comparison uses and names
 * the first that is wrong.  Blocks on the disk.
 */
#ifndef PROJECT_BENCH_H
#define PROJECT_BENCH_H

#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "ledger/verdict.h"
#include "project/scene.h"	/* a bench's scene: project_scene_ok */

#define PROJECT_BENCH_DIR	"bench"
#define PROJECT_BENCH_HISTORY	"bench-history.jsonl"
#define PROJECT_DEV_JSON	"dev.json"
#define PROJECT_BENCH_MAX	(16 << 20)	/* a bench file, at most */
/* at_ms as a file-name stamp, 20261129T120500.123Z. */
void	project_bench_stamp(int64_t at_ms, char out[32]);

/*
 * Write doc as <project>/.sloptimize/bench/<scene>-<stamp of at_ms>.json
 * (the directory made if need be), never over another bench: a name
 * taken moves the stamp a millisecond on.  The file appears whole or not
 * at all.  path[cap] gets its path.  0, or a negative errno with why.
 */
int	project_bench_write(const char *project, const char *scene,
	    int64_t at_ms, const cJSON *doc, char *path, size_t cap,
	    char *why, size_t wcap);

/*
 * Check a bench document's text and take from it what a comparison needs
 * (vb; may be NULL).  *doc (may be NULL) gets the parsed document, the
 * caller's to free.  0, or -EINVAL with why naming what is wrong ("not
 * whole JSON: it ends at byte 1812 (a torn write?)", "perRun[1].frame
 * .medianMs is not a number").
 */
int	project_bench_parse(const char *text, size_t n, cJSON **doc,
	    struct verdict_bench *vb, char *why, size_t cap);

/* Read and check a bench file (project_bench_parse).  -ENOENT, -EFBIG
 * (over PROJECT_BENCH_MAX), -PROJECT_ENOTREG, -EINVAL, or -errno; why
 * names the file. */
int	project_bench_read(const char *path, cJSON **doc,
	    struct verdict_bench *vb, char *why, size_t cap);

/*
 * Find a bench: ref is a path to a file, or a name in .sloptimize/bench/
 * (with or without .json), or "last": the newest bench of `scene` (NULL:
 * of the newest bench's scene), skipping the `skip` newest (1: the one
 * before the last).  path[cap] gets the file.  0, -ENOENT with why saying
 * what there is, or another negative errno.  *scene_out (may be NULL)
 * gets the scene of a "last" found with scene NULL (PROJECT_SCENE_MAX+1).
 */
int	project_bench_find(const char *project, const char *ref,
	    const char *scene, int skip, char *path, size_t cap,
	    char *scene_out, char *why, size_t wcap);

/* Append one comparison to bench-history.jsonl (one line, through
 * project_line_append).  0 or a negative errno with why. */
int	project_bench_history_append(const char *project, const cJSON *line,
	    char *why, size_t cap);

/*
 * The last `last` lines of bench-history.jsonl (0: all) that parse, as an
 * array in *lines, and each line that does not — torn, not an object —
 * in *skipped as {line, offset, why}: said, never dropped in silence.  A
 * missing file is an empty ledger.  0 or a negative errno with why.
 */
int	project_bench_history_read(const char *project, size_t last,
	    cJSON **lines, cJSON **skipped, char *why, size_t cap);

/*
 * dev.json: the dev server's url and pid.  0; -ENOENT when there is
 * none; -EINVAL when it is not {url: "http(s)://…", pid}; -ESRCH when its
 * pid is not running (the server is gone).  why says which.
 */
int	project_dev_read(const char *project, char *url, size_t cap,
	    long *pid, char *why, size_t wcap);

#endif
