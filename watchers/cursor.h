/*
 * cursor — the persisted reading position in a ledger file (DESIGN §8.2–4).
 *
 * A cursor says "generation G of this file has been delivered up to byte
 * `offset`", and carries enough to tell, after a restart, whether the file
 * at the path is still that file: its dev and inode, and a hash of the up
 * to CURSOR_WINDOW bytes just before `offset`.  The inode alone is not
 * enough (inodes are reused, and a file truncated and rewritten past the
 * old offset keeps its inode); the bytes are what the cursor really
 * points into.
 *
 * Invariant: `offset` is 0 or just past a '\n'.  Loading checks the file
 * is well formed; cursor_verify() checks it against the open ledger.
 *
 * The file is a few "key value" lines ending in "sum <fnv1a32 hex>" over
 * every byte before that line (see docs/tailing.md).  A torn, empty,
 * truncated or NUL-filled file fails the checksum or the framing, and is
 * reported, never used.  Saving and loading go through the state
 * directory's one atomic pair (project/statedir.h: temp file, fsync,
 * rename, fsync of the directory).  Everything here blocks: the tailer
 * calls it from the thread pool, the daemon at shutdown.
 */
#ifndef WATCHERS_CURSOR_H
#define WATCHERS_CURSOR_H

#include <stddef.h>
#include <stdint.h>

#include "ledger/footprint.h"
#include "project/filemark.h"

#define CURSOR_WINDOW	FILEMARK_WINDOW	/* bytes hashed just before the offset */
#define CURSOR_WHY_MAX	256	/* room for a reason string */

struct cursor {
	uint64_t	generation;	/* bumped at every new generation */
	uint64_t	offset;		/* 0 or just past a '\n' */
	uint64_t	dev, ino;	/* the file the offset is in */
	uint64_t	size_seen;	/* its size when saved (for the log) */
	uint32_t	hash_len;	/* min(offset, CURSOR_WINDOW) */
	uint64_t	hash;		/* cursor_hash of those bytes */
	/*
	 * More than the window (project/filemark.h): the CRC-32C of every
	 * byte before the offset, and the file's size and times when the
	 * cursor was taken.  flags 0 (a cursor file of version 1, or a
	 * reader that keeps neither, like the sink): the window alone.
	 */
	unsigned	flags;		/* FILEMARK_PREFIX | FILEMARK_STAT */
	uint32_t	prefix;
	uint64_t	st_size;
	int64_t		mtime_ns, ctime_ns;
};

/* The cursor as the filemark it is checked by (and back). */
void	cursor_to_mark(const struct cursor *c, struct filemark *m);

/* FNV-1a 64 (ledger/footprint.h) of the window; _more continues a
 * running hash. */
#define CURSOR_HASH_INIT	FNV1A64_INIT
uint64_t	cursor_hash(const void *data, size_t len);
uint64_t	cursor_hash_more(uint64_t h, const void *data, size_t len);

/*
 * Write `c` to `path` atomically (statedir_write: temp in the same
 * directory, fsync, rename, fsync the directory).  The temp file is
 * `<path>.tmp`, so two saves of one path must not run at once (the
 * tailer serialises them).
 * On error the old file, if any, is untouched and no temp file is left.
 * 0 or -errno.
 */
int	cursor_save(const char *path, const struct cursor *c);

/*
 * Read the cursor at `path` into `c`.  Returns
 *   0        a well-formed cursor;
 *   -ENOENT  no cursor file (first start);
 *   -EBADMSG the file is torn, empty, truncated, NUL-filled, fails its
 *            checksum or is malformed: `why` says which, and `c` is
 *            zeroed — never use a partly parsed cursor;
 *   -errno   it could not be read.
 * `why` (may be NULL) gets a sentence for the log, e.g. "cursor file torn
 * (checksum mismatch)".
 */
int	cursor_load(const char *path, struct cursor *c, char *why, size_t cap);

/*
 * Does the open file `fd` still hold what `c` points into?  Checks, in
 * order: same dev and inode, size >= offset, the byte before offset is
 * '\n' (or offset is 0), the hash of the window before offset, and with
 * FILEMARK_PREFIX the whole prefix: unchanged size and times, or its CRC
 * read again (filemark_verify).  Returns 0 (it does), -ESTALE with `why`
 * set (it does not: start a new generation from byte 0), or -errno if
 * the file could not be read.
 */
int	cursor_verify(const struct cursor *c, int fd, char *why, size_t cap);

/*
 * The same, when `known` (a position in the same file, with its prefix)
 * was just checked by cursor_verify: only the bytes between the two
 * offsets are read for the prefix (filemark_verify_from).
 */
int	cursor_verify_from(const struct cursor *c, const struct cursor *known,
	    int fd, char *why, size_t cap);

/*
 * Read the window before `offset` (min(offset, CURSOR_WINDOW) bytes) from
 * `fd` into `buf`; *len gets its length.  0, -errno, or -ESTALE if the
 * file is shorter than `offset`.
 */
int	cursor_window_read(int fd, uint64_t offset, char *buf, uint32_t *len);

#endif
