/*
 * linesplit — turn a byte stream into complete lines with their offsets.
 *
 * Shared by every reader of a ledger (the CLI's read loop, the daemon's
 * tailer), so "a line" means the same thing everywhere: bytes up to and
 * excluding '\n'.  A partial last line stays buffered until its newline
 * arrives.  A line longer than `max_line` is never buffered whole: it is
 * reported once, with its offset and full length, when its newline
 * arrives, so memory stays bounded by max_line whatever the input.
 */
#ifndef LEDGER_LINESPLIT_H
#define LEDGER_LINESPLIT_H

#include <stddef.h>
#include <stdint.h>

typedef void	(*linesplit_line_cb)(void *arg, const char *line, size_t len,
		    uint64_t offset);
typedef void	(*linesplit_long_cb)(void *arg, uint64_t offset, uint64_t len);

struct linesplit {
	char		*buf;		/* the partial line carried over */
	size_t		 len, cap;
	size_t		 max_line;
	uint64_t	 offset;	/* stream offset of buf[0] */
	int		 overlong;	/* discarding an over-long line */
	uint64_t	 overlong_len;
	linesplit_line_cb line_cb;
	linesplit_long_cb long_cb;
	void		*arg;
	/* The CRC-32C of every byte of the stream up to the end of the last
	 * line handed over, when a reader asks for it (linesplit_prefix_start):
	 * what a cursor or a checkpoint binds its offset to (filemark.h). */
	int		 crc_on;
	uint32_t	 crc;
	uint64_t	 crc_at;	/* the offset it reaches */
};

/* Stream offset 0; max_line of 0 means LEDGER_MAX_LINE. */
void	linesplit_init(struct linesplit *ls, size_t max_line,
	    linesplit_line_cb line_cb, linesplit_long_cb long_cb, void *arg);
/* Start over at `offset` (a new generation, or a resume point).  The
 * prefix CRC is not kept until linesplit_prefix_start says from where. */
void	linesplit_reset(struct linesplit *ls, uint64_t offset);
/*
 * Keep the CRC-32C of the stream from here on: `crc` is that of the bytes
 * [0, offset) before the reset point `offset` (0 for offset 0).  Every
 * byte is then hashed as it is consumed — lines, over-long lines and
 * their newlines — costing a CRC pass (the SSE4.2 instruction) over what
 * is fed.
 */
void	linesplit_prefix_start(struct linesplit *ls, uint64_t offset,
	    uint32_t crc);
/* 1 and the CRC of [0, *at) when kept, *at the end of the last line
 * handed over (already inside that line's callback); 0 when not kept. */
int	linesplit_prefix(const struct linesplit *ls, uint32_t *crc,
	    uint64_t *at);
void	linesplit_free(struct linesplit *ls);

/*
 * Feed the next `n` bytes of the stream.  Callbacks run synchronously for
 * every line the bytes complete.  Returns 0 or -ENOMEM (the bytes were
 * not consumed; feeding them again is safe).
 */
int	linesplit_feed(struct linesplit *ls, const char *data, size_t n);

/* Offset just past the last complete line: where a cursor may stand. */
uint64_t	linesplit_cursor(const struct linesplit *ls);
/* Bytes held back in an unterminated last line. */
uint64_t	linesplit_pending(const struct linesplit *ls);

#endif
