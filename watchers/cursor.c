/*
 * cursor — persisted reading position, with identity and checksum
 * (cursor.h).
 *
 * The format is text so a human can read it in a bug report, and fixed:
 * every key once, in order, one space, a decimal (or hex) value, '\n'.
 * Strictness is the point: anything a torn write or a full disk can
 * produce fails to parse or fails the checksum; there is no "best effort"
 * reading of a damaged cursor, because a wrong cursor silently drops or
 * doubles records, while a refused one only costs a new generation.
 */
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/base.h"
#include "ledger/footprint.h"
#include "project/filemark.h"
#include "project/statedir.h"
#include "watchers/cursor.h"

#define CURSOR_MAGIC	"sloptimize-cursor 2\n"
#define CURSOR_MAGIC_1	"sloptimize-cursor 1\n"	/* read, never written */
#define CURSOR_FILE_MAX	1024	/* a real cursor is ~150 bytes */

uint64_t
cursor_hash_more(uint64_t h, const void *data, size_t len)
{
	return fnv1a64_more(h, data, len);
}

uint64_t
cursor_hash(const void *data, size_t len)
{
	return fnv1a64(data, len);
}

static int
cursor_format(const struct cursor *c, char *buf, size_t cap)
{
	int	n, m;

	n = snprintf(buf, cap, CURSOR_MAGIC
	    "generation %" PRIu64 "\n"
	    "offset %" PRIu64 "\n"
	    "dev %" PRIu64 "\n"
	    "ino %" PRIu64 "\n"
	    "size %" PRIu64 "\n"
	    "hashlen %" PRIu32 "\n"
	    "hash %016" PRIx64 "\n"
	    "bound %u\n"
	    "prefix %08" PRIx32 "\n"
	    "stsize %" PRIu64 "\n"
	    "mtime %" PRIu64 "\n"
	    "ctime %" PRIu64 "\n",
	    c->generation, c->offset, c->dev, c->ino, c->size_seen,
	    c->hash_len, c->hash, c->flags, c->prefix, c->st_size,
	    (uint64_t)c->mtime_ns, (uint64_t)c->ctime_ns);
	if (n < 0 || (size_t)n >= cap)
		return -ENOSPC;
	m = snprintf(buf + n, cap - (size_t)n, "sum %08" PRIx32 "\n",
	    fnv1a32(buf, (size_t)n));
	if (m < 0 || (size_t)(n + m) >= cap)
		return -ENOSPC;
	return n + m;
}

int
cursor_save(const char *path, const struct cursor *c)
{
	char	buf[CURSOR_FILE_MAX];
	int	len;

	if ((len = cursor_format(c, buf, sizeof(buf))) < 0)
		return len;
	return statedir_write(path, buf, (size_t)len, 0600);
}

/*
 * Expect "<key> <value>\n" at *p; parse the value as an unsigned number in
 * `base` with no sign, no leading space and no overflow.
 */
static int
field(const char **p, const char *end, const char *key, int base,
    uint64_t *out)
{
	size_t		 klen = strlen(key);
	const char	*q = *p;
	uint64_t	 v = 0;
	int		 digits = 0;

	if ((size_t)(end - q) < klen + 1 || memcmp(q, key, klen) != 0 ||
	    q[klen] != ' ')
		return -1;
	for (q += klen + 1; q < end && *q != '\n'; q++, digits++) {
		unsigned	d;

		if (*q >= '0' && *q <= '9')
			d = (unsigned)(*q - '0');
		else if (base == 16 && *q >= 'a' && *q <= 'f')
			d = (unsigned)(*q - 'a' + 10);
		else
			return -1;
		if (v > (UINT64_MAX - d) / (uint64_t)base)
			return -1;
		v = v * (uint64_t)base + d;
	}
	if (digits == 0 || digits > 20 || q == end)
		return -1;
	*p = q + 1;
	*out = v;
	return 0;
}

/* Parse and check a whole cursor file image.  0 or -EBADMSG with why. */
static int
cursor_parse(const char *buf, size_t n, struct cursor *c, char *why,
    size_t cap)
{
	const char	*p, *end, *sumline;
	uint64_t	 sum, hl, fl = 0, pre = 0, mt = 0, ct = 0;
	int		 v1;

	if (n == 0) {
		base_say(why, cap, 0, "cursor file empty (torn write)");
		return -EBADMSG;
	}
	if (memchr(buf, '\0', n) != NULL) {
		base_say(why, cap, 0, "cursor file has NUL bytes (torn write)");
		return -EBADMSG;
	}
	if (buf[n - 1] != '\n') {
		base_say(why, cap, 0, "cursor file truncated (no final newline)");
		return -EBADMSG;
	}
	/* The checksum line is the last line. */
	for (sumline = buf + n - 1; sumline > buf && sumline[-1] != '\n';
	    sumline--)
		;
	p = sumline;
	if (field(&p, buf + n, "sum", 16, &sum) == -1 || p != buf + n ||
	    n - (size_t)(sumline - buf) != 13) {
		base_say(why, cap, 0, "cursor file truncated (no checksum line)");
		return -EBADMSG;
	}
	if (sum != fnv1a32(buf, (size_t)(sumline - buf))) {
		base_say(why, cap, 0, "cursor file torn (checksum mismatch)");
		return -EBADMSG;
	}

	/* The checksum holds, so what follows fails only on a bad writer. */
	p = buf;
	end = sumline;
	/* version 1 (the window alone) is still read: the first start
	 * after an upgrade keeps its generation */
	v1 = (size_t)(end - p) >= strlen(CURSOR_MAGIC_1) &&
	    memcmp(p, CURSOR_MAGIC_1, strlen(CURSOR_MAGIC_1)) == 0;
	if (!v1 && ((size_t)(end - p) < strlen(CURSOR_MAGIC) ||
	    memcmp(p, CURSOR_MAGIC, strlen(CURSOR_MAGIC)) != 0)) {
		base_say(why, cap, 0, "cursor file malformed (unknown header)");
		return -EBADMSG;
	}
	p += strlen(CURSOR_MAGIC);
	if (field(&p, end, "generation", 10, &c->generation) == -1 ||
	    field(&p, end, "offset", 10, &c->offset) == -1 ||
	    field(&p, end, "dev", 10, &c->dev) == -1 ||
	    field(&p, end, "ino", 10, &c->ino) == -1 ||
	    field(&p, end, "size", 10, &c->size_seen) == -1 ||
	    field(&p, end, "hashlen", 10, &hl) == -1 ||
	    field(&p, end, "hash", 16, &c->hash) == -1 || (!v1 &&
	    (field(&p, end, "bound", 10, &fl) == -1 ||
	    field(&p, end, "prefix", 16, &pre) == -1 ||
	    field(&p, end, "stsize", 10, &c->st_size) == -1 ||
	    field(&p, end, "mtime", 10, &mt) == -1 ||
	    field(&p, end, "ctime", 10, &ct) == -1)) || p != end ||
	    fl > (FILEMARK_PREFIX | FILEMARK_STAT) || pre > UINT32_MAX) {
		base_say(why, cap, 0, "cursor file malformed (bad field)");
		return -EBADMSG;
	}
	c->flags = (unsigned)fl;
	c->prefix = (uint32_t)pre;
	c->mtime_ns = (int64_t)mt;
	c->ctime_ns = (int64_t)ct;
	c->hash_len = (uint32_t)(hl > CURSOR_WINDOW ? CURSOR_WINDOW + 1 : hl);
	if (c->hash_len != (c->offset < CURSOR_WINDOW ? c->offset :
	    CURSOR_WINDOW) || c->offset > c->size_seen) {
		base_say(why, cap, 0, "cursor file malformed (inconsistent offset)");
		return -EBADMSG;
	}
	return 0;
}

int
cursor_load(const char *path, struct cursor *c, char *why, size_t cap)
{
	char	buf[CURSOR_FILE_MAX];
	size_t	n;
	int	rc;

	memset(c, 0, sizeof(*c));
	if ((rc = statedir_read(path, buf, sizeof(buf), &n)) != 0) {
		if (rc == -EFBIG) {
			base_say(why, cap, 0, "cursor file malformed (too long)");
			return -EBADMSG;
		}
		base_say(why, cap, 0, rc == -ENOENT ? "no cursor file (first start)" :
		    rc == -ESPIPE ? "cursor file unreadable (not a regular "
		    "file)" : "cursor file unreadable (%s)", strerror(-rc));
		return rc;
	}
	if ((rc = cursor_parse(buf, n, c, why, cap)) < 0)
		memset(c, 0, sizeof(*c));
	return rc;
}

int
cursor_window_read(int fd, uint64_t offset, char *buf, uint32_t *len)
{
	uint32_t	n = offset < CURSOR_WINDOW ? (uint32_t)offset :
			    CURSOR_WINDOW;

	*len = n;
	return filemark_pread(fd, buf, n, offset - n);
}

void
cursor_to_mark(const struct cursor *c, struct filemark *m)
{
	memset(m, 0, sizeof(*m));
	m->offset = c->offset;
	m->dev = c->dev;
	m->ino = c->ino;
	m->hash_len = c->hash_len;
	m->hash = c->hash;
	m->flags = c->flags;
	m->prefix = c->prefix;
	m->size = c->st_size;
	m->mtime_ns = c->mtime_ns;
	m->ctime_ns = c->ctime_ns;
}

int
cursor_verify(const struct cursor *c, int fd, char *why, size_t cap)
{
	static const struct filemark_words w = { "the file", "the cursor" };
	struct filemark	fm;

	cursor_to_mark(c, &fm);
	return filemark_verify(&fm, fd, &w, why, cap);
}

int
cursor_verify_from(const struct cursor *c, const struct cursor *known, int fd,
    char *why, size_t cap)
{
	static const struct filemark_words w = { "the file", "the cursor" };
	struct filemark	fm, km;

	cursor_to_mark(c, &fm);
	cursor_to_mark(known, &km);
	return filemark_verify_from(&fm, &km, fd, &w, why, cap);
}
