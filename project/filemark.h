/*
 * filemark — a byte offset bound to the file it is in: the file's dev and
 * inode, the hash of the up to FILEMARK_WINDOW bytes just before the
 * offset (DESIGN §8.4), and — when the reader kept them — the CRC-32C of
 * every byte before the offset and the file's size, mtime and ctime when
 * the mark was taken.  Inodes are reused and files are rewritten in
 * place; the bytes are what a position really stands on.  The tailer's
 * cursor (watchers/cursor.h) and the checkpoint's mark
 * (project/checkpoint.h) are both checked by this one rule.
 *
 * Why both the prefix and the times: the window alone missed a
 * same-length edit further back, and a file deleted and made again with
 * the same inode and the same last 4 KiB (issue 23).  Hashing the whole
 * prefix at every start would cost a restart O(file) — 1 GB is some
 * 200 ms of CRC and reading, twice the restart's budget — so the prefix
 * is read only when the file was written after the mark was taken: the
 * size, mtime and ctime (nanoseconds; ctime cannot be set back by a
 * writer) all as they were mean nothing wrote to it since.  An append
 * while stopped, a kill -9 before the last save, or a reader while the
 * writer runs (the CLI with a live game) pay the read: the prefix at
 * the CRC's speed, still far under a fold.  What no mark can see is an
 * edit of folded bytes made while the reader that folded them runs, then
 * a mark taken after it: the mark's times include the edit.  No reader
 * re-reads what it folded, so that catalogue was already the one the
 * edit missed (docs/checkpoints.md).
 */
#ifndef PROJECT_FILEMARK_H
#define PROJECT_FILEMARK_H

#include <stddef.h>
#include <stdint.h>

#define FILEMARK_WINDOW	4096

#define FILEMARK_PREFIX	1u	/* `prefix` is known */
#define FILEMARK_STAT	2u	/* `size`, `mtime_ns`, `ctime_ns` are */

struct filemark {
	uint64_t	offset;		/* 0 or just past a '\n' */
	uint64_t	dev, ino;
	uint32_t	hash_len;	/* min(offset, FILEMARK_WINDOW) */
	uint64_t	hash;		/* FNV-1a 64 of those bytes */
	unsigned	flags;		/* FILEMARK_*; 0: the window alone (a
					   mark from before issue 23) */
	uint32_t	prefix;		/* CRC-32C of [0, offset) */
	uint64_t	size;		/* st_size when the mark was taken */
	int64_t		mtime_ns, ctime_ns;
};

/*
 * The file's size and times now, into m; FILEMARK_STAT only when the
 * times are FILEMARK_SETTLED_NS old or more (filemark.c says why), else
 * cleared.  _at: with `now_ns` (CLOCK_REALTIME, ns) given, for tests.
 * 0 or -errno.
 */
#define FILEMARK_SETTLED_NS	(2 * 1000000000LL)
int	filemark_stat(int fd, struct filemark *m);
int	filemark_stat_at(int fd, struct filemark *m, int64_t now_ns);

/* The CRC-32C of fd's bytes [0, offset): 0, -ESTALE if the file is
 * shorter, or -errno. */
int	filemark_prefix(int fd, uint64_t offset, uint32_t *crc);

/* What the sentences call the file and the mark ("perf.jsonl", "the
 * checkpoint"). */
struct filemark_words {
	const char	*file;
	const char	*mark;
};

/*
 * Does the open `fd` still hold the bytes `m` was taken on?  Checks, in
 * order: the same dev and inode, at least `offset` bytes, a newline just
 * before it and the window's hash; then, with FILEMARK_PREFIX, either the
 * size and times of FILEMARK_STAT unchanged, or the CRC of every byte
 * before the offset (read now).  0 if so; -ESTALE with a sentence in
 * `why` if the file was replaced, truncated or rewritten; another -errno
 * if it could not be read.
 */
int	filemark_verify(const struct filemark *m, int fd,
	    const struct filemark_words *w, char *why, size_t cap);

/*
 * The same for `m` when `known` (of the same file, with its prefix) was
 * just checked against fd: m's prefix is checked by reading only the
 * bytes between the two offsets (filemark.c says why that suffices).
 */
int	filemark_verify_from(const struct filemark *m,
	    const struct filemark *known, int fd,
	    const struct filemark_words *w, char *why, size_t cap);

/* pread(2) exactly n bytes at off; -ESTALE if the file ends first. */
int	filemark_pread(int fd, void *buf, size_t n, uint64_t off);

#endif
