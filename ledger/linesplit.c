/*
 * linesplit — complete lines out of a byte stream (see linesplit.h).
 *
 * Lines that lie whole inside one fed chunk are handed over in place, with
 * no copy: that is nearly every line when the CLI reads 1 MiB at a time.
 * Only the tail of a chunk is copied, into a buffer allocated once at its
 * full size so that no later step can fail half way through a chunk.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "footprint.h"
#include "ledger.h"
#include "linesplit.h"

void
linesplit_init(struct linesplit *ls, size_t max_line, linesplit_line_cb line_cb,
    linesplit_long_cb long_cb, void *arg)
{
	memset(ls, 0, sizeof(*ls));
	ls->max_line = max_line ? max_line : LEDGER_MAX_LINE;
	ls->line_cb = line_cb;
	ls->long_cb = long_cb;
	ls->arg = arg;
}

void
linesplit_reset(struct linesplit *ls, uint64_t offset)
{
	ls->len = 0;
	ls->offset = offset;
	ls->overlong = 0;
	ls->overlong_len = 0;
	ls->crc_on = 0;
}

void
linesplit_prefix_start(struct linesplit *ls, uint64_t offset, uint32_t crc)
{
	ls->crc_on = ls->offset == offset && ls->len == 0 && !ls->overlong;
	ls->crc = crc;
	ls->crc_at = offset;
}

int
linesplit_prefix(const struct linesplit *ls, uint32_t *crc, uint64_t *at)
{
	if (!ls->crc_on)
		return 0;
	*crc = ls->crc;
	*at = ls->crc_at;
	return 1;
}

static void
crc_add(struct linesplit *ls, const void *p, size_t n)
{
	if (ls->crc_on)
		ls->crc = crc32c_more(ls->crc, p, n);
}

void
linesplit_free(struct linesplit *ls)
{
	if (ls == NULL)
		return;
	free(ls->buf);
	ls->buf = NULL;
	ls->cap = 0;
}

/* A finished line of `len` bytes starting at ls->offset (its bytes
 * already hashed when `line` is NULL). */
static void
emit(struct linesplit *ls, const char *line, uint64_t len)
{
	if (line != NULL)
		crc_add(ls, line, (size_t)len);
	crc_add(ls, "\n", 1);
	ls->crc_at = ls->offset + len + 1;
	if (len > ls->max_line)
		ls->long_cb(ls->arg, ls->offset, len);
	else
		ls->line_cb(ls->arg, line, (size_t)len, ls->offset);
	ls->offset += len + 1;
}

int
linesplit_feed(struct linesplit *ls, const char *data, size_t n)
{
	const char	*p = data, *end = data + n, *nl;

	if (ls->buf == NULL && n > 0) {
		if ((ls->buf = malloc(ls->max_line + 1)) == NULL)
			return -ENOMEM;
		ls->cap = ls->max_line + 1;
	}
	while (p < end) {
		size_t	chunk;

		nl = memchr(p, '\n', (size_t)(end - p));
		chunk = (size_t)((nl ? nl : end) - p);
		if (ls->overlong) {
			ls->overlong_len += chunk;
			crc_add(ls, p, chunk);
			if (nl == NULL)
				return 0;
			crc_add(ls, "\n", 1);
			ls->crc_at = ls->offset + ls->overlong_len + 1;
			ls->long_cb(ls->arg, ls->offset, ls->overlong_len);
			ls->offset += ls->overlong_len + 1;
			ls->overlong = 0;
			ls->overlong_len = 0;
			p = nl + 1;
			continue;
		}
		if (nl == NULL) {
			if (ls->len + chunk > ls->max_line) {
				/* Drop what we hold and just count from now on. */
				crc_add(ls, ls->buf, ls->len);
				crc_add(ls, p, chunk);
				ls->overlong = 1;
				ls->overlong_len = ls->len + chunk;
				ls->len = 0;
				return 0;
			}
			memcpy(ls->buf + ls->len, p, chunk);
			ls->len += chunk;
			return 0;
		}
		if (ls->len == 0)
			emit(ls, p, chunk);
		else if (ls->len + chunk > ls->max_line) {
			crc_add(ls, ls->buf, ls->len);
			crc_add(ls, p, chunk);
			ls->len += chunk;
			emit(ls, NULL, ls->len);
			ls->len = 0;
		} else {
			memcpy(ls->buf + ls->len, p, chunk);
			ls->len += chunk;
			emit(ls, ls->buf, ls->len);
			ls->len = 0;
		}
		p = nl + 1;
	}
	return 0;
}

uint64_t
linesplit_cursor(const struct linesplit *ls)
{
	return ls->offset;
}

uint64_t
linesplit_pending(const struct linesplit *ls)
{
	return ls->overlong ? ls->overlong_len : ls->len;
}
