/*
 * linesplit: complete lines only, exact offsets, bounded memory for
 * over-long lines, however the stream is chunked.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "ledger/footprint.h"
#include "ledger/linesplit.h"

struct got {
	char		lines[16][64];
	uint64_t	offs[16];
	int		n;
	uint64_t	long_off[4], long_len[4];
	int		nlong;
};

static void
on_line(void *arg, const char *line, size_t len, uint64_t off)
{
	struct got	*g = arg;

	assert_true(g->n < 16 && len < 64);
	memcpy(g->lines[g->n], line, len);
	g->lines[g->n][len] = '\0';
	g->offs[g->n++] = off;
}

static void
on_long(void *arg, uint64_t off, uint64_t len)
{
	struct got	*g = arg;

	assert_true(g->nlong < 4);
	g->long_off[g->nlong] = off;
	g->long_len[g->nlong++] = len;
}

static void
linesplit_any_chunking(void **state)
{
	const char		*in = "a\nbb\n\nccc\ndd";
	size_t			 len = strlen(in), step;

	(void)state;
	/* every chunk size, down to one byte at a time */
	for (step = 1; step <= len; step++) {
		struct linesplit	ls;
		struct got		g = { 0 };
		size_t			i;

		linesplit_init(&ls, 16, on_line, on_long, &g);
		for (i = 0; i < len; i += step)
			assert_int_equal(linesplit_feed(&ls, in + i,
			    i + step > len ? len - i : step), 0);
		assert_int_equal(g.n, 4);
		assert_string_equal(g.lines[0], "a");
		assert_string_equal(g.lines[1], "bb");
		assert_string_equal(g.lines[2], "");
		assert_string_equal(g.lines[3], "ccc");
		assert_true(g.offs[1] == 2 && g.offs[2] == 5 && g.offs[3] == 6);
		/* the partial "dd" never moves the cursor */
		assert_true(linesplit_cursor(&ls) == 10);
		assert_true(linesplit_pending(&ls) == 2);
		assert_int_equal(linesplit_feed(&ls, "\n", 1), 0);
		assert_int_equal(g.n, 5);
		assert_string_equal(g.lines[4], "dd");
		assert_true(linesplit_cursor(&ls) == 13);
		linesplit_free(&ls);
	}
}

static void
linesplit_overlong_line_is_one_unit(void **state)
{
	struct linesplit	 ls;
	struct got		 g = { 0 };
	char			*big = malloc(100);
	size_t			 i;

	(void)state;
	memset(big, 'x', 100);
	linesplit_init(&ls, 16, on_line, on_long, &g);
	assert_int_equal(linesplit_feed(&ls, "ok\n", 3), 0);
	/* 100 bytes in pieces, then its newline and a good line */
	for (i = 0; i < 100; i += 7)
		assert_int_equal(linesplit_feed(&ls, big + i,
		    i + 7 > 100 ? 100 - i : 7), 0);
	assert_true(ls.cap <= 17);	/* memory bounded by max_line */
	assert_int_equal(linesplit_feed(&ls, "\nafter\n", 7), 0);
	assert_int_equal(g.nlong, 1);
	assert_true(g.long_off[0] == 3 && g.long_len[0] == 100);
	assert_int_equal(g.n, 2);
	assert_string_equal(g.lines[1], "after");
	assert_true(g.offs[1] == 104);
	/* exactly max_line is still a line; one more is not */
	memset(big, 'y', 17);
	big[16] = '\n';
	assert_int_equal(linesplit_feed(&ls, big, 17), 0);
	assert_int_equal(g.n, 3);
	big[16] = 'y';
	assert_int_equal(linesplit_feed(&ls, big, 17), 0);
	assert_int_equal(linesplit_feed(&ls, "\n", 1), 0);
	assert_int_equal(g.nlong, 2);
	assert_true(g.long_len[1] == 17);
	linesplit_free(&ls);
	free(big);
}

static void
linesplit_reset_starts_over(void **state)
{
	struct linesplit	ls;
	struct got		g = { 0 };

	(void)state;
	linesplit_init(&ls, 16, on_line, on_long, &g);
	assert_int_equal(linesplit_feed(&ls, "abc\npart", 8), 0);
	linesplit_reset(&ls, 0);
	assert_true(linesplit_pending(&ls) == 0);
	assert_int_equal(linesplit_feed(&ls, "new\n", 4), 0);
	assert_string_equal(g.lines[1], "new");
	assert_true(g.offs[1] == 0);
	linesplit_free(&ls);
}

/*
 * The prefix CRC (issue 23: what a cursor binds its offset to): inside
 * every line's callback, and after, it is the CRC-32C of the stream up
 * to the end of that line, over-long lines and their newlines included,
 * however the stream is chunked; from a resume point it goes on from the
 * CRC given; not asked for, it is not kept.
 */
struct pcheck {
	struct linesplit	*ls;
	const char		*in;
	int			 n;
};

static void
pc_check(struct pcheck *c, uint64_t end)
{
	uint32_t	crc;
	uint64_t	at;

	assert_int_equal(linesplit_prefix(c->ls, &crc, &at), 1);
	assert_int_equal(at, end);
	assert_int_equal(crc, crc32c_more(0, c->in, (size_t)end));
	c->n++;
}

static void
pc_line(void *arg, const char *line, size_t len, uint64_t off)
{
	(void)line;
	pc_check(arg, off + len + 1);
}

static void
pc_long(void *arg, uint64_t off, uint64_t len)
{
	pc_check(arg, off + len + 1);
}

static void
linesplit_prefix_crc(void **state)
{
	char			 in[200];
	struct linesplit	 ls;
	struct pcheck		 c;
	size_t			 len, step, i;
	uint32_t		 crc;
	uint64_t		 at;

	(void)state;
	snprintf(in, sizeof(in), "a\nbb\n\n%s\nccc\n%s\nd\nee",
	    "a line longer than sixteen bytes", "xxxxxxxxxxxxxxxxxxxxxxxxxx");
	len = strlen(in);
	for (step = 1; step <= len; step++) {
		linesplit_init(&ls, 16, pc_line, pc_long, &c);
		c.ls = &ls;
		c.in = in;
		c.n = 0;
		linesplit_prefix_start(&ls, 0, 0);
		for (i = 0; i < len; i += step)
			assert_int_equal(linesplit_feed(&ls, in + i,
			    len - i < step ? len - i : step), 0);
		assert_int_equal(c.n, 7);
		assert_int_equal(linesplit_prefix(&ls, &crc, &at), 1);
		assert_int_equal(at, len - 2);	/* "ee" is unfinished */
		linesplit_free(&ls);
	}
	/* from a resume point, with the CRC of what came before it */
	linesplit_init(&ls, 16, pc_line, pc_long, &c);
	c.ls = &ls;
	c.n = 0;
	linesplit_reset(&ls, 5);
	linesplit_prefix_start(&ls, 5, crc32c_more(0, in, 5));
	assert_int_equal(linesplit_feed(&ls, in + 5, len - 5), 0);
	assert_int_equal(c.n, 5);
	/* a reset forgets it until it is asked for again */
	linesplit_reset(&ls, 0);
	assert_int_equal(linesplit_prefix(&ls, &crc, &at), 0);
	linesplit_free(&ls);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(linesplit_any_chunking),
		cmocka_unit_test(linesplit_prefix_crc),
		cmocka_unit_test(linesplit_overlong_line_is_one_unit),
		cmocka_unit_test(linesplit_reset_starts_over),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
