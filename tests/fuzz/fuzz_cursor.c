/*
 * fuzz_cursor — the cursor file reader on any bytes.  The checksum line
 * would stop a fuzzer at the first byte, so when the input's first byte
 * is odd the harness appends a correct "sum" line to the rest, and the
 * field parser behind the checksum gets fuzzed too.  What must hold: a
 * load either fails with -EBADMSG and a reason and a zeroed cursor, or
 * succeeds with a cursor that keeps the invariants cursor.h states.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ledger/footprint.h"
#include "watchers/cursor.h"

int	LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);

static char	path[512];

static void
put(const void *p, size_t n, const char *tail)
{
	int	fd;

	if ((fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600)) < 0)
		abort();
	if (write(fd, p, n) != (ssize_t)n)
		abort();
	if (tail != NULL && write(fd, tail, strlen(tail)) !=
	    (ssize_t)strlen(tail))
		abort();
	close(fd);
}

int
LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
	struct cursor	c;
	char		why[CURSOR_WHY_MAX], sum[32];
	const unsigned char *zero;
	size_t		i;
	int		rc;

	if (path[0] == '\0')
		snprintf(path, sizeof(path), "%s/fuzz-cursor.%ld",
		    getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp",
		    (long)getpid());
	if (size == 0) {
		put("", 0, NULL);
	} else if (data[0] & 1) {
		snprintf(sum, sizeof(sum), "sum %08" PRIx32 "\n",
		    fnv1a32(data + 1, size - 1));
		put(data + 1, size - 1, sum);
	} else {
		put(data + 1, size - 1, NULL);
	}
	why[0] = '\0';
	rc = cursor_load(path, &c, why, sizeof(why));
	if (rc == -EBADMSG) {
		if (why[0] == '\0')
			abort();	/* a refusal says why */
		zero = (const unsigned char *)&c;
		for (i = 0; i < sizeof(c); i++)
			if (zero[i] != 0)
				abort();	/* never a partly parsed cursor */
	} else if (rc == 0) {
		if (c.offset > c.size_seen)
			abort();
		if (c.hash_len != (c.offset < CURSOR_WINDOW ? c.offset :
		    CURSOR_WINDOW))
			abort();
	} else {
		abort();	/* the file is there and readable */
	}
	return 0;
}
