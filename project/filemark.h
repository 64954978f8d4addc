/*
 * filemark — a byte offset bound to the file it is in: the file's dev and
 * inode, and the hash of the up to FILEMARK_WINDOW bytes just before the
 * offset (DESIGN §8.4).  Inodes are reused and files are rewritten in
 * place; the bytes are what a position really stands on.  The tailer's
 * cursor (watchers/cursor.h) and the checkpoint's mark
 * (project/checkpoint.h) are both checked by this one rule.
 */
#ifndef PROJECT_FILEMARK_H
#define PROJECT_FILEMARK_H

#include <stddef.h>
#include <stdint.h>

#define FILEMARK_WINDOW	4096

struct filemark {
	uint64_t	offset;		/* 0 or just past a '\n' */
	uint64_t	dev, ino;
	uint32_t	hash_len;	/* min(offset, FILEMARK_WINDOW) */
	uint64_t	hash;		/* FNV-1a 64 of those bytes */
};

/* What the sentences call the file and the mark ("perf.jsonl", "the
 * checkpoint"). */
struct filemark_words {
	const char	*file;
	const char	*mark;
};

/*
 * Does the open `fd` still hold the bytes `m` was taken on?  0 if so;
 * -ESTALE with a sentence in `why` if the file was replaced, truncated or
 * rewritten; another -errno if it could not be read.
 */
int	filemark_verify(const struct filemark *m, int fd,
	    const struct filemark_words *w, char *why, size_t cap);

/* pread(2) exactly n bytes at off; -ESTALE if the file ends first. */
int	filemark_pread(int fd, void *buf, size_t n, uint64_t off);

#endif
