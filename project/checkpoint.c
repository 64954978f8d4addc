/*
 * checkpoint — the daemon's fold on disk with the file positions it
 * stands for (checkpoint.h).
 *
 * The header, native byte order (a cache on the machine that wrote it,
 * like the ledger's part):
 *
 *	"SLOPTDCK"  u32 version  u32 byte-order mark (0x01020304)
 *	u64 generation, offset, dev, inode   u32 hash length   u64 hash
 *	u64 fixes offset, fixes hash   i64 written (ms since the epoch)
 *	u32 flags, u32 prefix CRC-32C   u64 size   i64 mtime, ctime (ns)
 *	u64 length of the fold that follows
 *	u64 FNV-1a 64 of every header byte before it
 *
 * then the ledger's checkpoint, whose own trailer (length, CRC-32C)
 * covers it.  The file must be exactly header + that length long: a
 * write torn before the rename cannot be seen (statedir_write renames a
 * whole, fsynced file), but a file cut or joined by other means is
 * refused before anything is read.
 */
#include <sys/stat.h>

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/base.h"
#include "ledger/footprint.h"
#include "project/checkpoint.h"
#include "project/filemark.h"
#include "project/statedir.h"

#define MAGIC		"SLOPTDCK"
#define BYTE_ORDER_MARK	0x01020304u
#define HEAD_LEN	(8 + 4 + 4 + 4 * 8 + 4 + 8 + 3 * 8 + 4 + 4 + 3 * 8 + \
			 8 + 8)

/* --- the header -------------------------------------------------------- */

static unsigned char *
put(unsigned char *p, const void *v, size_t n)
{
	memcpy(p, v, n);
	return p + n;
}

static void
head_make(unsigned char h[HEAD_LEN], const struct checkpoint_mark *m,
    uint64_t fold_len)
{
	unsigned char	*p = h;
	uint32_t	 u32;
	uint64_t	 sum;

	p = put(p, MAGIC, 8);
	u32 = CHECKPOINT_VERSION;
	p = put(p, &u32, 4);
	u32 = BYTE_ORDER_MARK;
	p = put(p, &u32, 4);
	p = put(p, &m->generation, 8);
	p = put(p, &m->offset, 8);
	p = put(p, &m->dev, 8);
	p = put(p, &m->ino, 8);
	p = put(p, &m->hash_len, 4);
	p = put(p, &m->hash, 8);
	p = put(p, &m->fixes_offset, 8);
	p = put(p, &m->fixes_hash, 8);
	p = put(p, &m->written_ms, 8);
	p = put(p, &m->flags, 4);
	p = put(p, &m->prefix, 4);
	p = put(p, &m->st_size, 8);
	p = put(p, &m->mtime_ns, 8);
	p = put(p, &m->ctime_ns, 8);
	p = put(p, &fold_len, 8);
	sum = fnv1a64(h, (size_t)(p - h));
	memcpy(p, &sum, 8);
}

static const unsigned char *
get(const unsigned char *p, void *v, size_t n)
{
	memcpy(v, p, n);
	return p + n;
}

static int
head_read(const unsigned char h[HEAD_LEN], struct checkpoint_mark *m,
    uint64_t *fold_len, char *why, size_t cap)
{
	const unsigned char	*p = h + 8;
	uint32_t		 u32;
	uint64_t		 sum;

	if (memcmp(h, MAGIC, 8) != 0) {
		base_say(why, cap, 0, "not a checkpoint");
		return -EBADMSG;
	}
	p = get(p, &u32, 4);
	if (u32 != CHECKPOINT_VERSION) {
		base_say(why, cap, 0, "a checkpoint of another version (%" PRIu32
		    ", this is %d)", u32, CHECKPOINT_VERSION);
		return -EPROTO;
	}
	p = get(p, &u32, 4);
	if (u32 != BYTE_ORDER_MARK) {
		base_say(why, cap, 0, "a checkpoint from a machine of another byte "
		    "order");
		return -EPROTO;
	}
	memcpy(&sum, h + HEAD_LEN - 8, 8);
	if (fnv1a64(h, HEAD_LEN - 8) != sum) {
		base_say(why, cap, 0, "torn or damaged (header checksum mismatch)");
		return -EBADMSG;
	}
	p = get(p, &m->generation, 8);
	p = get(p, &m->offset, 8);
	p = get(p, &m->dev, 8);
	p = get(p, &m->ino, 8);
	p = get(p, &m->hash_len, 4);
	p = get(p, &m->hash, 8);
	p = get(p, &m->fixes_offset, 8);
	p = get(p, &m->fixes_hash, 8);
	p = get(p, &m->written_ms, 8);
	p = get(p, &m->flags, 4);
	p = get(p, &m->prefix, 4);
	p = get(p, &m->st_size, 8);
	p = get(p, &m->mtime_ns, 8);
	p = get(p, &m->ctime_ns, 8);
	p = get(p, fold_len, 8);
	if (m->hash_len != (m->offset < CHECKPOINT_WINDOW ?
	    (uint32_t)m->offset : CHECKPOINT_WINDOW) ||
	    m->flags > (FILEMARK_PREFIX | FILEMARK_STAT)) {
		base_say(why, cap, 0, "damaged (its window does not fit its offset)");
		return -EBADMSG;
	}
	return 0;
}

/* --- writing ----------------------------------------------------------- */

struct save {
	const struct checkpoint_mark	*m;
	const struct ledger_snap	*snap;
	statedir_put_fn			*put;
	void				*put_arg;
};

static int
save_piece(void *arg, const void *data, size_t len)
{
	struct save	*s = arg;

	return s->put(s->put_arg, data, len);
}

static int
save_fill(void *arg, statedir_put_fn *put, void *put_arg)
{
	struct save	*s = arg;
	unsigned char	 h[HEAD_LEN];
	int		 rc;

	head_make(h, s->m, ledger_snap_size(s->snap));
	if ((rc = put(put_arg, h, sizeof(h))) != 0)
		return rc;
	s->put = put;
	s->put_arg = put_arg;
	return ledger_snap_write(s->snap, save_piece, s);
}

int
checkpoint_save(const char *path, const struct checkpoint_mark *m,
    const struct ledger_snap *snap)
{
	struct save	s = { m, snap, NULL, NULL };

	return statedir_write_with(path, 0600, save_fill, &s);
}

/* --- reading ----------------------------------------------------------- */

/* read(2) exactly n bytes at the file's position; -EBADMSG if it ends. */
static int
read_exact(int fd, void *buf, size_t n)
{
	char	*p = buf;
	ssize_t	 r;

	while (n > 0) {
		if ((r = read(fd, p, n)) == -1) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (r == 0)
			return -EBADMSG;
		p += r;
		n -= (size_t)r;
	}
	return 0;
}

int
checkpoint_open(const char *path, struct checkpoint_file *f,
    struct checkpoint_mark *m, char *why, size_t cap)
{
	unsigned char	h[HEAD_LEN];
	int		rc;

	memset(m, 0, sizeof(*m));
	f->fd = -1;
	if ((rc = statedir_open(path, &f->fd, &f->size)) != 0) {
		if (rc == -ESPIPE)
			base_say(why, cap, 0, "not a regular file");
		else
			base_say(why, cap, 0, "%s", strerror(-rc));
		return rc;
	}
	if (f->size < HEAD_LEN) {
		base_say(why, cap, 0, "torn (%" PRIu64 " bytes, shorter than its "
		    "header)", f->size);
		rc = -EBADMSG;
	} else if ((rc = read_exact(f->fd, h, sizeof(h))) != 0)
		base_say(why, cap, 0, rc == -EBADMSG ? "torn (shrank while read)" :
		    "cannot read it: %s", strerror(-rc));
	else if ((rc = head_read(h, m, &f->fold_len, why, cap)) == 0 &&
	    f->size - HEAD_LEN != f->fold_len) {
		base_say(why, cap, 0, "torn (%" PRIu64 " bytes, written as %" PRIu64 ")",
		    f->size, HEAD_LEN + f->fold_len);
		rc = -EBADMSG;
	}
	if (rc != 0) {
		checkpoint_close(f);
		memset(m, 0, sizeof(*m));
	}
	return rc;
}

static int
pull_fd(void *arg, void *buf, size_t n)
{
	struct checkpoint_file	*f = arg;

	return read_exact(f->fd, buf, n);
}

int
checkpoint_fold(struct checkpoint_file *f, const struct ledger_opts *o,
    struct ledger **l, char *why, size_t cap)
{
	const char	*w = NULL;
	int		 rc;

	rc = ledger_checkpoint_read_stream(o, f->fold_len, pull_fd, f, l, &w);
	if (rc == -EBADMSG || rc == -EPROTO || rc == -ESTALE || rc == -ENOMEM)
		base_say(why, cap, 0, "%s", w);
	else if (rc != 0)
		base_say(why, cap, 0, "cannot read it: %s", strerror(-rc));
	return rc;
}

void
checkpoint_close(struct checkpoint_file *f)
{
	if (f->fd >= 0)
		close(f->fd);
	f->fd = -1;
}

/* --- the files it stands on --------------------------------------------- */

int
checkpoint_verify_perf(const struct checkpoint_mark *m, int fd, char *why,
    size_t cap)
{
	static const struct filemark_words w = { "perf.jsonl",
	    "the checkpoint" };
	struct filemark	fm = { .offset = m->offset, .dev = m->dev,
			    .ino = m->ino, .hash_len = m->hash_len,
			    .hash = m->hash, .flags = m->flags,
			    .prefix = m->prefix, .size = m->st_size,
			    .mtime_ns = m->mtime_ns, .ctime_ns = m->ctime_ns };

	if (m->offset > 0 && !(m->flags & FILEMARK_PREFIX)) {
		base_say(why, cap, 0, "it does not know the bytes before its offset "
		    "(the reader that saved it kept no prefix)");
		return -ESTALE;
	}
	return filemark_verify(&fm, fd, &w, why, cap);
}

int
checkpoint_verify_fixes(const struct checkpoint_mark *m, int fd, char *why,
    size_t cap)
{
	char		 buf[64 * 1024];
	struct stat	 st;
	uint64_t	 h = FNV1A64_INIT, at = 0;
	int		 rc;

	if (m->fixes_offset == CHECKPOINT_FIXES_UNKNOWN) {
		base_say(why, cap, 0, "fixes.jsonl had a line too long to be known");
		return -ESTALE;
	}
	if (fd < 0) {
		if (m->fixes_offset == 0)
			return 0;
		base_say(why, cap, 0, "fixes.jsonl is gone");
		return -ESTALE;
	}
	if (fstat(fd, &st) == -1)
		return -errno;
	if ((uint64_t)st.st_size < m->fixes_offset) {
		base_say(why, cap, 0, "fixes.jsonl is shorter than the checkpoint "
		    "(size %" PRIu64 " < %" PRIu64 ")", (uint64_t)st.st_size,
		    m->fixes_offset);
		return -ESTALE;
	}
	while (at < m->fixes_offset) {
		size_t	n = m->fixes_offset - at < sizeof(buf) ?
			    (size_t)(m->fixes_offset - at) : sizeof(buf);

		if ((rc = filemark_pread(fd, buf, n, at)) != 0) {
			if (rc == -ESTALE)
				base_say(why, cap, 0, "fixes.jsonl shrank under the "
				    "checkpoint");
			return rc;
		}
		h = fnv1a64_more(h, buf, n);
		at += n;
	}
	if (h != m->fixes_hash) {
		base_say(why, cap, 0, "fixes.jsonl's first %" PRIu64 " bytes changed",
		    m->fixes_offset);
		return -ESTALE;
	}
	return 0;
}
