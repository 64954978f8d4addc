/*
 * filemark — the one rule for "is this offset still in the file it was
 * taken in" (filemark.h).
 */
#include <sys/stat.h>

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "base/base.h"
#include "ledger/footprint.h"
#include "project/filemark.h"

#define FILEMARK_CHUNK	(1024 * 1024)	/* one pread of the prefix */

#ifdef __APPLE__
#define ST_MTIM(st)	((st)->st_mtimespec)
#define ST_CTIM(st)	((st)->st_ctimespec)
#else
#define ST_MTIM(st)	((st)->st_mtim)
#define ST_CTIM(st)	((st)->st_ctim)
#endif

int
filemark_pread(int fd, void *buf, size_t n, uint64_t off)
{
	char	*p = buf;
	ssize_t	 r;

	while (n > 0) {
		if ((r = pread(fd, p, n, (off_t)off)) == -1) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (r == 0)
			return -ESTALE;
		p += r;
		n -= (size_t)r;
		off += (uint64_t)r;
	}
	return 0;
}

static int64_t	stat_ns(struct timespec);

/* The CRC-32C of fd's bytes [from, to), continuing `crc`. */
static int
crc_range(int fd, uint64_t from, uint64_t to, uint32_t *crc)
{
	char		*buf;
	uint32_t	 c = *crc;
	size_t		 n;
	int		 rc = 0;

	if (from >= to)
		return 0;
	if ((buf = malloc(FILEMARK_CHUNK)) == NULL)
		return -ENOMEM;
	while (from < to) {
		n = to - from < FILEMARK_CHUNK ? (size_t)(to - from) :
		    FILEMARK_CHUNK;
		if ((rc = filemark_pread(fd, buf, n, from)) != 0)
			break;
		c = crc32c_more(c, buf, n);
		from += n;
	}
	free(buf);
	*crc = c;
	return rc;
}

int
filemark_prefix(int fd, uint64_t offset, uint32_t *crc)
{
	*crc = 0;
	return crc_range(fd, 0, offset, crc);
}

/*
 * The checks up to the prefix's: the file, its length, the window.  0
 * and *st when they hold, else -ESTALE with why, or -errno.  *done is set
 * when nothing more is to be checked (offset 0, or no prefix kept).
 */
static int
verify_window(const struct filemark *m, int fd, const struct filemark_words *w,
    char *why, size_t cap, struct stat *st, int *done)
{
	char		buf[FILEMARK_WINDOW];
	int		rc;

	*done = 1;
	if (fstat(fd, st) == -1)
		return -errno;
	if ((uint64_t)st->st_dev != m->dev || (uint64_t)st->st_ino != m->ino) {
		base_say(why, cap, 0, "%s was replaced while stopped (dev/inode %"
		    PRIu64 "/%" PRIu64 ", %s was for %" PRIu64 "/%" PRIu64 ")",
		    w->file, (uint64_t)st->st_dev, (uint64_t)st->st_ino,
		    w->mark, m->dev, m->ino);
		return -ESTALE;
	}
	if ((uint64_t)st->st_size < m->offset) {
		base_say(why, cap, 0, "%s was truncated while stopped (size %" PRIu64
		    " < %s's offset %" PRIu64 ")", w->file,
		    (uint64_t)st->st_size, w->mark, m->offset);
		return -ESTALE;
	}
	if (m->offset == 0)
		return 0;
	if (m->hash_len != (m->offset < FILEMARK_WINDOW ? m->offset :
	    FILEMARK_WINDOW)) {
		base_say(why, cap, 0, "%s's window (%" PRIu32 " bytes) does not fit "
		    "its offset (%" PRIu64 ")", w->mark, m->hash_len,
		    m->offset);
		return -ESTALE;
	}
	if ((rc = filemark_pread(fd, buf, m->hash_len, m->offset -
	    m->hash_len)) != 0) {
		if (rc == -ESTALE)
			base_say(why, cap, 0, "%s shrank under %s", w->file, w->mark);
		return rc;
	}
	if (buf[m->hash_len - 1] != '\n') {
		base_say(why, cap, 0, "the byte before %s (%" PRIu64 ") is not a "
		    "newline: %s was rewritten while stopped", w->mark,
		    m->offset, w->file);
		return -ESTALE;
	}
	if (fnv1a64(buf, m->hash_len) != m->hash) {
		base_say(why, cap, 0, "the bytes before %s (%" PRIu64 ") changed (hash "
		    "mismatch): %s was truncated and rewritten, or its inode "
		    "reused, while stopped", w->mark, m->offset, w->file);
		return -ESTALE;
	}
	*done = !(m->flags & FILEMARK_PREFIX);
	return 0;
}

/* Nothing wrote to the file since the mark was taken: its prefix is the
 * one hashed then. */
static int
untouched(const struct filemark *m, const struct stat *st)
{
	return (m->flags & FILEMARK_STAT) && (uint64_t)st->st_size ==
	    m->size && stat_ns(ST_MTIM(st)) == m->mtime_ns &&
	    stat_ns(ST_CTIM(st)) == m->ctime_ns;
}

static int
prefix_changed(const struct filemark *m, const struct filemark_words *w,
    char *why, size_t cap)
{
	base_say(why, cap, 0, "the %" PRIu64 " bytes before %s changed (CRC of the "
	    "whole prefix): %s was rewritten in place, or deleted and made "
	    "again, since", m->offset, w->mark, w->file);
	return -ESTALE;
}

int
filemark_verify(const struct filemark *m, int fd,
    const struct filemark_words *w, char *why, size_t cap)
{
	struct stat	st;
	uint32_t	crc;
	int		rc, done;

	if ((rc = verify_window(m, fd, w, why, cap, &st, &done)) != 0 ||
	    done || untouched(m, &st))
		return rc;
	if ((rc = filemark_prefix(fd, m->offset, &crc)) != 0) {
		if (rc == -ESTALE)
			base_say(why, cap, 0, "%s shrank under %s", w->file, w->mark);
		return rc;
	}
	return crc != m->prefix ? prefix_changed(m, w, why, cap) : 0;
}

/*
 * With `known` just checked against fd (by filemark_verify), m's prefix
 * needs only the bytes between the two offsets: CRC-32C over a fixed run
 * of bytes is a one-to-one map of the CRC, so whichever prefix is the
 * shorter, continued over the bytes between them, must give the longer
 * one's.  A restart checks the checkpoint's prefix, then the cursor's
 * from it: one read of the file, not two.
 */
int
filemark_verify_from(const struct filemark *m, const struct filemark *known,
    int fd, const struct filemark_words *w, char *why, size_t cap)
{
	struct stat	st;
	uint32_t	crc;
	int		rc, done;

	if (!(known->flags & FILEMARK_PREFIX) || known->dev != m->dev ||
	    known->ino != m->ino)
		return filemark_verify(m, fd, w, why, cap);
	if ((rc = verify_window(m, fd, w, why, cap, &st, &done)) != 0 ||
	    done || untouched(m, &st))
		return rc;
	crc = m->offset >= known->offset ? known->prefix : m->prefix;
	rc = m->offset >= known->offset ?
	    crc_range(fd, known->offset, m->offset, &crc) :
	    crc_range(fd, m->offset, known->offset, &crc);
	if (rc != 0) {
		if (rc == -ESTALE)
			base_say(why, cap, 0, "%s shrank under %s", w->file, w->mark);
		return rc;
	}
	return crc != (m->offset >= known->offset ? m->prefix :
	    known->prefix) ? prefix_changed(m, w, why, cap) : 0;
}

static int64_t
stat_ns(struct timespec t)
{
	return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

/*
 * File times come from a coarse clock (a jiffy, a few milliseconds; a
 * second or two on some file systems): a write in the same tick as the
 * one they show leaves them as they were.  So they witness "nothing
 * wrote since" only once they are older than any tick — then the next
 * write, whenever it comes, moves them.  A file written just now is
 * marked without them, and a reader re-reads the prefix.
 */
int
filemark_stat_at(int fd, struct filemark *m, int64_t now_ns)
{
	struct stat	st;
	int64_t		last;

	if (fstat(fd, &st) == -1)
		return -errno;
	m->size = (uint64_t)st.st_size;
	m->mtime_ns = stat_ns(ST_MTIM(&st));
	m->ctime_ns = stat_ns(ST_CTIM(&st));
	last = m->mtime_ns > m->ctime_ns ? m->mtime_ns : m->ctime_ns;
	if (now_ns - last >= FILEMARK_SETTLED_NS)
		m->flags |= FILEMARK_STAT;
	else
		m->flags &= ~FILEMARK_STAT;
	return 0;
}

int
filemark_stat(int fd, struct filemark *m)
{
	struct timespec	ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return filemark_stat_at(fd, m, stat_ns(ts));
}

