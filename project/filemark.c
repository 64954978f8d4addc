/*
 * filemark — the one rule for "is this offset still in the file it was
 * taken in" (filemark.h).
 */
#include <sys/stat.h>

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <unistd.h>

#include "ledger/footprint.h"
#include "project/filemark.h"

static void
say(char *why, size_t cap, const char *fmt, ...)
{
	va_list	ap;

	if (why == NULL || cap == 0)
		return;
	va_start(ap, fmt);
	vsnprintf(why, cap, fmt, ap);
	va_end(ap);
}

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

int
filemark_verify(const struct filemark *m, int fd,
    const struct filemark_words *w, char *why, size_t cap)
{
	char		buf[FILEMARK_WINDOW];
	struct stat	st;
	int		rc;

	if (fstat(fd, &st) == -1)
		return -errno;
	if ((uint64_t)st.st_dev != m->dev || (uint64_t)st.st_ino != m->ino) {
		say(why, cap, "%s was replaced while stopped (dev/inode %"
		    PRIu64 "/%" PRIu64 ", %s was for %" PRIu64 "/%" PRIu64 ")",
		    w->file, (uint64_t)st.st_dev, (uint64_t)st.st_ino, w->mark,
		    m->dev, m->ino);
		return -ESTALE;
	}
	if ((uint64_t)st.st_size < m->offset) {
		say(why, cap, "%s was truncated while stopped (size %" PRIu64
		    " < %s's offset %" PRIu64 ")", w->file,
		    (uint64_t)st.st_size, w->mark, m->offset);
		return -ESTALE;
	}
	if (m->offset == 0)
		return 0;
	if (m->hash_len != (m->offset < FILEMARK_WINDOW ? m->offset :
	    FILEMARK_WINDOW)) {
		say(why, cap, "%s's window (%" PRIu32 " bytes) does not fit "
		    "its offset (%" PRIu64 ")", w->mark, m->hash_len,
		    m->offset);
		return -ESTALE;
	}
	if ((rc = filemark_pread(fd, buf, m->hash_len, m->offset -
	    m->hash_len)) != 0) {
		if (rc == -ESTALE)
			say(why, cap, "%s shrank under %s", w->file, w->mark);
		return rc;
	}
	if (buf[m->hash_len - 1] != '\n') {
		say(why, cap, "the byte before %s (%" PRIu64 ") is not a "
		    "newline: %s was rewritten while stopped", w->mark,
		    m->offset, w->file);
		return -ESTALE;
	}
	if (fnv1a64(buf, m->hash_len) != m->hash) {
		say(why, cap, "the bytes before %s (%" PRIu64 ") changed (hash "
		    "mismatch): %s was truncated and rewritten, or its inode "
		    "reused, while stopped", w->mark, m->offset, w->file);
		return -ESTALE;
	}
	return 0;
}
