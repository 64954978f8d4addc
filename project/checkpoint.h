/*
 * checkpoint — the daemon's fold, saved in its state directory beside the
 * cursor, with the file positions it stands for, so that a restart of the
 * daemon, and `sloptimize issues` / `history`, fold only the bytes after
 * it (issue 12; docs/checkpoints.md).
 *
 * <state>/checkpoint is a header and the ledger's own checkpoint
 * (ledger/checkpoint.h, which is versioned and CRC-checked by itself).  The
 * header says which bytes of which files the fold holds:
 *
 *   perf.jsonl   generation, byte offset, dev and inode, and the hash of
 *                the up to 4096 bytes before the offset — the cursor's
 *                rule (watchers/cursor.h, DESIGN §8.4): inodes are
 *                reused, the bytes are what the fold really stands on;
 *   fixes.jsonl  byte offset and the hash of all its bytes before it: the
 *                file is small, and its content, not its inode, decides
 *                what its fold is.
 *
 * A checkpoint is only ever used whole and only when both files still
 * hold those bytes; anything else — no file, a torn one, another
 * version, other fold options, a file replaced, truncated or rewritten —
 * is refused with a sentence, and the reader folds from byte 0.  It is
 * written and read through the state directory's one writer and reader
 * (project/statedir.h): temp file, fsync, rename, fsync of the directory.
 *
 * Everything here blocks on the disk: the daemon calls it from the thread
 * pool (and at shutdown), the CLI directly.
 */
#ifndef PROJECT_CHECKPOINT_H
#define PROJECT_CHECKPOINT_H

#include <stddef.h>
#include <stdint.h>

#include "ledger/checkpoint.h"
#include "project/filemark.h"

#define CHECKPOINT_VERSION	2	/* 2: the prefix and the times */
#define CHECKPOINT_WINDOW	FILEMARK_WINDOW
#define CHECKPOINT_WHY_MAX	320	/* room for a reason */
/* fixes_offset when the fixes' bytes are not known (a line over
 * LEDGER_MAX_LINE was never seen whole): no reader can use it. */
#define CHECKPOINT_FIXES_UNKNOWN	UINT64_MAX

/* Which bytes the fold holds. */
struct checkpoint_mark {
	uint64_t	generation;	/* perf.jsonl's, as the cursor's */
	uint64_t	offset;		/* 0 or just past a '\n' */
	uint64_t	dev, ino;
	uint32_t	hash_len;	/* min(offset, CHECKPOINT_WINDOW) */
	uint64_t	hash;		/* FNV-1a 64 of those bytes */
	uint64_t	fixes_offset;	/* fixes.jsonl's bytes [0, this) */
	uint64_t	fixes_hash;	/* FNV-1a 64 of them */
	int64_t		written_ms;	/* when (for the log) */
	/* perf.jsonl beyond the window (project/filemark.h): the CRC-32C
	 * of [0, offset), and its size and times when the mark was taken */
	uint32_t	flags;		/* FILEMARK_PREFIX | FILEMARK_STAT */
	uint32_t	prefix;
	uint64_t	st_size;
	int64_t		mtime_ns, ctime_ns;
};

/*
 * Write the checkpoint `snap` (ledger_checkpoint_begin) with its mark to
 * `path`, atomically, streamed: the file's bytes are never held in
 * memory.  On error the old checkpoint, if any, stays.  0 or -errno.
 * Two saves of one path must not run at once (statedir_write's temp).
 */
int	checkpoint_save(const char *path, const struct checkpoint_mark *m,
	    const struct ledger_snap *snap);

/* An open checkpoint whose header has been read and checked. */
struct checkpoint_file {
	int		fd;
	uint64_t	size;		/* of the file */
	uint64_t	fold_len;	/* of the ledger's part */
};

/*
 * Open `path` and check its header: 0 with *m filled; -ENOENT (none);
 * -EBADMSG (not a checkpoint, torn, damaged) or -EPROTO (another
 * version or byte order), with `why`; or -errno.  Reads a hundred bytes:
 * a reader checks the mark against its files before it reads the fold.
 * On success checkpoint_close() must follow.
 */
int	checkpoint_open(const char *path, struct checkpoint_file *f,
	    struct checkpoint_mark *m, char *why, size_t cap);
/*
 * Read the fold, streamed from the file (ledger_checkpoint_read_stream):
 * 0 and *l, or ledger_checkpoint_read's refusals (-ESTALE: folded with
 * other options) with `why`.
 */
int	checkpoint_fold(struct checkpoint_file *f, const struct ledger_opts *o,
	    struct ledger **l, char *why, size_t cap);
void	checkpoint_close(struct checkpoint_file *f);

/*
 * Does perf.jsonl, open as `fd`, still hold what the mark stands on: the
 * same dev and inode, at least `offset` bytes, a '\n' just before it, the
 * same hash of the window, and the same prefix (unchanged size and times,
 * or its CRC read again: filemark_verify)?  0, -ESTALE with `why`, or
 * -errno.  A mark without the prefix is refused: a checkpoint is only
 * used whole on bytes it knows.
 */
int	checkpoint_verify_perf(const struct checkpoint_mark *m, int fd,
	    char *why, size_t cap);
/*
 * Does fixes.jsonl, open as `fd` (-1: there is none), begin with the
 * bytes the mark stands on?  0, -ESTALE with `why`, or -errno.
 */
int	checkpoint_verify_fixes(const struct checkpoint_mark *m, int fd,
	    char *why, size_t cap);

#endif
