/*
 * test_cursor — the persisted cursor (watchers/cursor.h); the state
 * directory it lives in has its own test (test_statedir.c).
 *
 * The cursor must never be silently wrong: every damaged form of the file
 * (cut at every length, NUL-filled, every single byte flipped) is refused
 * with a reason, and a file that no longer matches the cursor is caught
 * by cursor_verify, whatever changed (inode, size, the bytes before it).
 */
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "tests/unitfs.h"

#include "ledger/footprint.h"
#include "watchers/cursor.h"

struct fx {
	char	root[PATH_MAX];
	char	cursor[PATH_MAX + 16];
	char	file[PATH_MAX + 16];
};

static int
setup(void **state)
{
	struct fx	*fx = calloc(1, sizeof(*fx));

	assert_non_null(fx);
	unitfs_tmpdir(fx->root, sizeof(fx->root), "cursor");
	snprintf(fx->cursor, sizeof(fx->cursor), "%s/cursor", fx->root);
	snprintf(fx->file, sizeof(fx->file), "%s/perf.jsonl", fx->root);
	*state = fx;
	return 0;
}

static int
teardown(void **state)
{
	struct fx	*fx = *state;

	if (unitfs_rmrf(fx->root) != 0)
		return -1;
	free(fx);
	return 0;
}

/* A cursor that points just past line `k` of the ledger in `path`. */
static void
cursor_for(const char *path, uint64_t offset, struct cursor *c)
{
	char		buf[CURSOR_WINDOW];
	struct stat	st;
	uint32_t	n;
	int		fd = open(path, O_RDONLY);

	assert_true(fd >= 0);
	assert_int_equal(fstat(fd, &st), 0);
	assert_int_equal(cursor_window_read(fd, offset, buf, &n), 0);
	close(fd);
	memset(c, 0, sizeof(*c));
	c->generation = 7;
	c->offset = offset;
	c->dev = (uint64_t)st.st_dev;
	c->ino = (uint64_t)st.st_ino;
	c->size_seen = (uint64_t)st.st_size;
	c->hash_len = n;
	c->hash = cursor_hash(buf, n);
}

static void
sample(struct cursor *c)
{
	memset(c, 0, sizeof(*c));
	c->generation = 3;
	c->offset = 1048576;
	c->dev = 2049;
	c->ino = 1234567;
	c->size_seen = 1048600;
	c->hash_len = CURSOR_WINDOW;
	c->hash = 0x0123456789abcdefULL;
	c->flags = FILEMARK_PREFIX | FILEMARK_STAT;
	c->prefix = 0xdeadbeef;
	c->st_size = 1048600;
	c->mtime_ns = -1234567890123LL;		/* before 1970: kept */
	c->ctime_ns = 1790812800123456789LL;
}

/*
 * cursor_for, bound to the whole prefix and the file as it is now — its
 * times taken as settled (`settled`: as if FILEMARK_SETTLED_NS had
 * passed since the last write) or as they are: just written, unsettled.
 */
static void
cursor_bound(const char *path, uint64_t offset, struct cursor *c,
    int settled)
{
	struct filemark	fm = { 0 };
	int		fd = open(path, O_RDONLY);

	cursor_for(path, offset, c);
	assert_true(fd >= 0);
	assert_int_equal(filemark_prefix(fd, offset, &c->prefix), 0);
	assert_int_equal(filemark_stat(fd, &fm), 0);
	assert_int_equal(fm.flags & FILEMARK_STAT, 0);	/* just written */
	if (settled)
		assert_int_equal(filemark_stat_at(fd, &fm, fm.ctime_ns +
		    FILEMARK_SETTLED_NS), 0);
	close(fd);
	c->flags = FILEMARK_PREFIX | fm.flags;
	c->st_size = fm.size;
	c->mtime_ns = fm.mtime_ns;
	c->ctime_ns = fm.ctime_ns;
}

/* --- format ----------------------------------------------------------- */

static void
cursor_round_trip(void **state)
{
	struct fx	*fx = *state;
	struct cursor	 c, d;
	struct stat	 st;
	char		 why[CURSOR_WHY_MAX], tmp[PATH_MAX + 32];

	sample(&c);
	assert_int_equal(cursor_save(fx->cursor, &c), 0);
	assert_int_equal(cursor_load(fx->cursor, &d, why, sizeof(why)), 0);
	assert_memory_equal(&c, &d, sizeof(c));
	assert_int_equal(stat(fx->cursor, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
	snprintf(tmp, sizeof(tmp), "%s.tmp", fx->cursor);
	assert_int_equal(access(tmp, F_OK), -1);	/* no temp left */

	/* A second save replaces the first whole. */
	c.offset = 10;
	c.size_seen = 10;
	c.hash_len = 10;
	c.generation = UINT64_MAX;
	assert_int_equal(cursor_save(fx->cursor, &c), 0);
	assert_int_equal(cursor_load(fx->cursor, &d, why, sizeof(why)), 0);
	assert_memory_equal(&c, &d, sizeof(c));
}

static void
cursor_missing_is_enoent(void **state)
{
	struct fx	*fx = *state;
	struct cursor	 c;
	char		 why[CURSOR_WHY_MAX];

	assert_int_equal(cursor_load(fx->cursor, &c, why, sizeof(why)),
	    -ENOENT);
	assert_non_null(strstr(why, "first start"));
}

/* Cut the file at every length short of whole: each is refused. */
static void
cursor_torn_every_length(void **state)
{
	struct fx	*fx = *state;
	struct cursor	 c, d;
	char		 img[1024], why[CURSOR_WHY_MAX];
	size_t		 n, len;

	sample(&c);
	assert_int_equal(cursor_save(fx->cursor, &c), 0);
	n = unitfs_get(fx->cursor, img, sizeof(img));
	assert_true(n > 100);
	for (len = 0; len < n; len++) {
		unitfs_put(fx->cursor, img, len);
		why[0] = '\0';
		assert_int_equal(cursor_load(fx->cursor, &d, why,
		    sizeof(why)), -EBADMSG);
		assert_true(why[0] != '\0');
		assert_int_equal(d.offset, 0);	/* nothing half-parsed */
		if (len == 0)
			assert_non_null(strstr(why, "empty"));
	}
	/* And grown with junk after the checksum line. */
	memcpy(img + n, "x\n", 2);
	unitfs_put(fx->cursor, img, n + 2);
	assert_int_equal(cursor_load(fx->cursor, &d, why, sizeof(why)),
	    -EBADMSG);
}

static void
cursor_nul_filled(void **state)
{
	struct fx	*fx = *state;
	struct cursor	 c, d;
	char		 img[1024], why[CURSOR_WHY_MAX];
	size_t		 n;

	/* What a crash after the size was updated but not the data leaves. */
	memset(img, 0, sizeof(img));
	unitfs_put(fx->cursor, img, 180);
	assert_int_equal(cursor_load(fx->cursor, &d, why, sizeof(why)),
	    -EBADMSG);
	assert_non_null(strstr(why, "NUL"));

	/* NULs over the middle of a real one. */
	sample(&c);
	assert_int_equal(cursor_save(fx->cursor, &c), 0);
	n = unitfs_get(fx->cursor, img, sizeof(img));
	memset(img + 30, 0, 40);
	unitfs_put(fx->cursor, img, n);
	assert_int_equal(cursor_load(fx->cursor, &d, why, sizeof(why)),
	    -EBADMSG);
	assert_non_null(strstr(why, "NUL"));
}

/* Every single-byte change anywhere in the file is detected. */
static void
cursor_every_byte_flip(void **state)
{
	struct fx	*fx = *state;
	struct cursor	 c, d;
	char		 img[1024], bad[1024], why[CURSOR_WHY_MAX];
	size_t		 n, i;
	int		 bit;

	sample(&c);
	assert_int_equal(cursor_save(fx->cursor, &c), 0);
	n = unitfs_get(fx->cursor, img, sizeof(img));
	for (i = 0; i < n; i++)
		for (bit = 0; bit < 8; bit++) {
			memcpy(bad, img, n);
			bad[i] ^= (char)(1 << bit);
			unitfs_put(fx->cursor, bad, n);
			assert_int_equal(cursor_load(fx->cursor, &d, why,
			    sizeof(why)), -EBADMSG);
		}
}

static void
cursor_bad_checksum(void **state)
{
	struct fx	*fx = *state;
	struct cursor	 c, d;
	char		 img[1024], why[CURSOR_WHY_MAX], *p;
	size_t		 n;

	sample(&c);
	assert_int_equal(cursor_save(fx->cursor, &c), 0);
	n = unitfs_get(fx->cursor, img, sizeof(img));
	img[n] = '\0';
	assert_non_null(p = strstr(img, "offset 1048576"));
	p[7] = '2';		/* a different, well-formed offset */
	unitfs_put(fx->cursor, img, n);
	assert_int_equal(cursor_load(fx->cursor, &d, why, sizeof(why)),
	    -EBADMSG);
	assert_string_equal(why, "cursor file torn (checksum mismatch)");
}

/* A checksum that holds over nonsense (a bad writer) is still refused. */
static void
cursor_inconsistent_refused(void **state)
{
	static const char *bodies[] = {
		/* offset past the size seen */
		"sloptimize-cursor 1\ngeneration 1\noffset 100\ndev 1\n"
		"ino 2\nsize 50\nhashlen 100\nhash 0000000000000000\n",
		/* hashlen not min(offset, window) */
		"sloptimize-cursor 1\ngeneration 1\noffset 10000\ndev 1\n"
		"ino 2\nsize 20000\nhashlen 10\nhash 0000000000000000\n",
		/* unknown version */
		"sloptimize-cursor 9\ngeneration 1\noffset 0\ndev 1\n"
		"ino 2\nsize 0\nhashlen 0\nhash 0000000000000000\n",
		/* version 2 without its binding */
		"sloptimize-cursor 2\ngeneration 1\noffset 0\ndev 1\n"
		"ino 2\nsize 0\nhashlen 0\nhash 0000000000000000\n",
		/* unknown binding flags, a prefix past 32 bits */
		"sloptimize-cursor 2\ngeneration 1\noffset 0\ndev 1\n"
		"ino 2\nsize 0\nhashlen 0\nhash 0000000000000000\nbound 4\n"
		"prefix 00000000\nstsize 0\nmtime 0\nctime 0\n",
		"sloptimize-cursor 2\ngeneration 1\noffset 0\ndev 1\n"
		"ino 2\nsize 0\nhashlen 0\nhash 0000000000000000\nbound 1\n"
		"prefix 100000000\nstsize 0\nmtime 0\nctime 0\n",
		/* a sign */
		"sloptimize-cursor 1\ngeneration -1\noffset 0\ndev 1\n"
		"ino 2\nsize 0\nhashlen 0\nhash 0000000000000000\n",
		/* overflow */
		"sloptimize-cursor 1\ngeneration 99999999999999999999\n"
		"offset 0\ndev 1\nino 2\nsize 0\nhashlen 0\n"
		"hash 0000000000000000\n",
	};
	struct fx	*fx = *state;
	struct cursor	 d;
	char		 img[1024], why[CURSOR_WHY_MAX];
	size_t		 i;
	int		 n;

	for (i = 0; i < sizeof(bodies) / sizeof(bodies[0]); i++) {
		n = snprintf(img, sizeof(img), "%ssum %08x\n", bodies[i],
		    fnv1a32(bodies[i], strlen(bodies[i])));
		unitfs_put(fx->cursor, img, (size_t)n);
		assert_int_equal(cursor_load(fx->cursor, &d, why,
		    sizeof(why)), -EBADMSG);
		assert_non_null(strstr(why, "malformed"));
	}
}

/* --- verify ----------------------------------------------------------- */

#define LEDGER	"{\"type\":\"a\"}\n{\"type\":\"b\"}\n{\"type\":\"c\"}\n"

static void
cursor_verify_matches(void **state)
{
	struct fx	*fx = *state;
	struct cursor	 c;
	char		 why[CURSOR_WHY_MAX];
	int		 fd;

	unitfs_put(fx->file, LEDGER, strlen(LEDGER));
	fd = open(fx->file, O_RDONLY);
	cursor_for(fx->file, 26, &c);		/* after two lines */
	assert_int_equal(cursor_verify(&c, fd, why, sizeof(why)), 0);
	cursor_for(fx->file, 0, &c);
	assert_int_equal(cursor_verify(&c, fd, why, sizeof(why)), 0);
	close(fd);
	/* Appending does not disturb it. */
	fd = open(fx->file, O_WRONLY | O_APPEND);
	assert_int_equal(write(fd, "{}\n", 3), 3);
	close(fd);
	fd = open(fx->file, O_RDONLY);
	cursor_for(fx->file, 26, &c);
	assert_int_equal(cursor_verify(&c, fd, why, sizeof(why)), 0);
	close(fd);
}

/* Replaced by rename with the very same bytes: still another file. */
static void
cursor_verify_inode_change(void **state)
{
	struct fx	*fx = *state;
	struct cursor	 c;
	char		 why[CURSOR_WHY_MAX], other[PATH_MAX + 32];
	int		 fd;

	unitfs_put(fx->file, LEDGER, strlen(LEDGER));
	cursor_for(fx->file, 26, &c);
	snprintf(other, sizeof(other), "%s.new", fx->file);
	unitfs_put(other, LEDGER, strlen(LEDGER));
	assert_int_equal(rename(other, fx->file), 0);
	fd = open(fx->file, O_RDONLY);
	assert_int_equal(cursor_verify(&c, fd, why, sizeof(why)), -ESTALE);
	assert_non_null(strstr(why, "replaced"));
	close(fd);
}

static void
cursor_verify_truncated(void **state)
{
	struct fx	*fx = *state;
	struct cursor	 c;
	char		 why[CURSOR_WHY_MAX];
	int		 fd;

	unitfs_put(fx->file, LEDGER, strlen(LEDGER));
	cursor_for(fx->file, 39, &c);
	assert_int_equal(truncate(fx->file, 13), 0);
	fd = open(fx->file, O_RDONLY);
	assert_int_equal(cursor_verify(&c, fd, why, sizeof(why)), -ESTALE);
	assert_non_null(strstr(why, "truncated"));
	close(fd);
}

/* Truncated and rewritten past the old offset: same inode, same size
 * class, a newline where the cursor expects one — only the bytes tell. */
static void
cursor_verify_regrown(void **state)
{
	static const char other[] =
	    "{\"type\":\"x\"}\n{\"type\":\"y\"}\n{\"type\":\"z\"}\n{}\n";
	struct fx	*fx = *state;
	struct cursor	 c;
	char		 why[CURSOR_WHY_MAX];
	int		 fd;

	unitfs_put(fx->file, LEDGER, strlen(LEDGER));
	cursor_for(fx->file, 26, &c);
	fd = open(fx->file, O_WRONLY | O_TRUNC);	/* same inode */
	assert_int_equal(write(fd, other, strlen(other)),
	    (ssize_t)strlen(other));
	close(fd);
	fd = open(fx->file, O_RDONLY);
	assert_int_equal(cursor_verify(&c, fd, why, sizeof(why)), -ESTALE);
	assert_non_null(strstr(why, "hash mismatch"));
	close(fd);

	/* Regrown with lines of other lengths: no newline before it. */
	fd = open(fx->file, O_WRONLY | O_TRUNC);
	assert_int_equal(write(fd, "{\"type\":\"long one\"}\n{}\n", 23), 23);
	close(fd);
	cursor_for(fx->file, 0, &c);	/* refresh dev/ino only */
	c.offset = 13;
	c.hash_len = 13;
	fd = open(fx->file, O_RDONLY);
	assert_int_equal(cursor_verify(&c, fd, why, sizeof(why)), -ESTALE);
	assert_non_null(strstr(why, "not a newline"));
	close(fd);
}

/* A cursor in the middle of a line is refused even if its hash holds. */
static void
cursor_verify_mid_line(void **state)
{
	struct fx	*fx = *state;
	struct cursor	 c;
	char		 why[CURSOR_WHY_MAX];
	int		 fd;

	unitfs_put(fx->file, LEDGER, strlen(LEDGER));
	cursor_for(fx->file, 20, &c);
	fd = open(fx->file, O_RDONLY);
	assert_int_equal(cursor_verify(&c, fd, why, sizeof(why)), -ESTALE);
	assert_non_null(strstr(why, "not a newline"));
	close(fd);
}

/* A window longer than CURSOR_WINDOW: only the last 4096 bytes count. */
static void
cursor_verify_big_window(void **state)
{
	struct fx	*fx = *state;
	struct cursor	 c;
	char		 why[CURSOR_WHY_MAX], *big;
	int		 fd;

	big = malloc(20000);
	memset(big, 'a', 20000);
	big[9999] = '\n';
	big[19999] = '\n';
	unitfs_put(fx->file, big, 20000);
	cursor_for(fx->file, 20000, &c);
	assert_int_equal(c.hash_len, CURSOR_WINDOW);
	fd = open(fx->file, O_RDWR);
	assert_int_equal(cursor_verify(&c, fd, why, sizeof(why)), 0);
	/* A change just inside the window is seen ... */
	assert_int_equal(pwrite(fd, "b", 1, 20000 - CURSOR_WINDOW), 1);
	assert_int_equal(cursor_verify(&c, fd, why, sizeof(why)), -ESTALE);
	/* ... one just outside it is not looked at. */
	assert_int_equal(pwrite(fd, "a", 1, 20000 - CURSOR_WINDOW), 1);
	assert_int_equal(pwrite(fd, "b", 1, 20000 - CURSOR_WINDOW - 1), 1);
	assert_int_equal(cursor_verify(&c, fd, why, sizeof(why)), 0);
	close(fd);
	free(big);
}

/* A cursor file of version 1 (before issue 23) is still read: the
 * window alone binds it, as it did. */
static void
cursor_version_1_read(void **state)
{
	struct fx	*fx = *state;
	static const char body[] = "sloptimize-cursor 1\ngeneration 4\n"
	    "offset 10\ndev 1\nino 2\nsize 20\nhashlen 10\n"
	    "hash 00000000deadbeef\n";
	struct cursor	 d;
	char		 img[512], why[CURSOR_WHY_MAX];
	int		 n;

	n = snprintf(img, sizeof(img), "%ssum %08x\n", body,
	    fnv1a32(body, strlen(body)));
	unitfs_put(fx->cursor, img, (size_t)n);
	assert_int_equal(cursor_load(fx->cursor, &d, why, sizeof(why)), 0);
	assert_int_equal(d.generation, 4);
	assert_int_equal(d.offset, 10);
	assert_int_equal(d.flags, 0);
}

/*
 * Issue 23: what the window alone missed, seen by the whole prefix.
 * (a) A same-length edit 10 KB before the cursor.  (b) The file deleted
 * and made again with the same last 4 KiB, its inode reused (ext4 does
 * it at once; here the cursor is given the new file's inode, as if).
 * And the price: untouched since, nothing is read — a cursor whose CRC
 * is wrong passes while the size and times are those it was taken with.
 */
static void
cursor_verify_whole_prefix(void **state)
{
	struct fx	*fx = *state;
	struct cursor	 c;
	struct stat	 st;
	char		 why[CURSOR_WHY_MAX], *big, other[PATH_MAX + 32];
	int		 fd;

	big = malloc(20000);
	memset(big, 'a', 20000);
	big[9999] = '\n';
	big[19999] = '\n';
	unitfs_put(fx->file, big, 20000);
	cursor_bound(fx->file, 20000, &c, 1);
	fd = open(fx->file, O_RDWR);
	assert_int_equal(cursor_verify(&c, fd, why, sizeof(why)), 0);
	/* (a) */
	assert_int_equal(pwrite(fd, "b", 1, 100), 1);
	assert_int_equal(cursor_verify(&c, fd, why, sizeof(why)), -ESTALE);
	assert_non_null(strstr(why, "the 20000 bytes before the cursor "
	    "changed"));
	/* put back, the times moved: read again, and it holds */
	assert_int_equal(pwrite(fd, "a", 1, 100), 1);
	assert_int_equal(cursor_verify(&c, fd, why, sizeof(why)), 0);
	close(fd);

	/* untouched: the prefix is not read */
	cursor_bound(fx->file, 20000, &c, 1);
	c.prefix ^= 1;
	fd = open(fx->file, O_RDONLY);
	assert_int_equal(cursor_verify(&c, fd, why, sizeof(why)), 0);
	c.ctime_ns++;			/* as if written since */
	assert_int_equal(cursor_verify(&c, fd, why, sizeof(why)), -ESTALE);
	close(fd);
	/* unsettled times witness nothing: read, refused */
	cursor_bound(fx->file, 20000, &c, 0);
	assert_int_equal(c.flags & FILEMARK_STAT, 0);
	c.prefix ^= 1;
	fd = open(fx->file, O_RDONLY);
	assert_int_equal(cursor_verify(&c, fd, why, sizeof(why)), -ESTALE);
	close(fd);

	/*
	 * (b): a settled mark of the old file — its last write 3 s before
	 * the new file was made, as a settled mark must be — and the file
	 * made again, with the old inode and the same size and last 4 KiB.
	 */
	cursor_bound(fx->file, 20000, &c, 1);
	snprintf(other, sizeof(other), "%s.again", fx->file);
	big[0] = 'z';
	unitfs_put(other, big, 20000);
	assert_int_equal(stat(other, &st), 0);
	c.dev = (uint64_t)st.st_dev;
	c.ino = (uint64_t)st.st_ino;
	c.mtime_ns = c.ctime_ns = (int64_t)st.st_ctim.tv_sec * 1000000000 +
	    st.st_ctim.tv_nsec - 3 * 1000000000LL;
	fd = open(other, O_RDONLY);
	assert_int_equal(cursor_verify(&c, fd, why, sizeof(why)), -ESTALE);
	assert_non_null(strstr(why, "deleted and made again"));
	/* without the prefix (a version 1 cursor) it was taken as the same */
	c.flags = 0;
	assert_int_equal(cursor_verify(&c, fd, why, sizeof(why)), 0);
	close(fd);
	free(big);
}

/*
 * kill -9 at any point of a save leaves either the old cursor or the new
 * one, never a torn file.  A child saves in a loop and reports each save
 * on a pipe; we kill it after a varying number of saves.
 */
static void
cursor_save_survives_kill9(void **state)
{
	struct fx	*fx = *state;
	struct cursor	 c;
	char		 why[CURSOR_WHY_MAX];
	int		 round;

	for (round = 0; round < 20; round++) {
		int	p[2], status;
		pid_t	pid;
		char	b;
		int	k;

		unlink(fx->cursor);
		assert_int_equal(pipe(p), 0);
		if ((pid = fork()) == 0) {
			struct cursor	w;
			uint64_t	i;

			close(p[0]);
			sample(&w);
			for (i = 1; ; i++) {
				w.generation = i;
				if (cursor_save(fx->cursor, &w) != 0)
					_exit(1);
				if (write(p[1], "x", 1) != 1)
					_exit(1);
			}
		}
		assert_true(pid > 0);
		close(p[1]);
		for (k = 0; k < 1 + round * 3; k++)
			assert_int_equal(read(p[0], &b, 1), 1);
		kill(pid, SIGKILL);
		assert_int_equal(waitpid(pid, &status, 0), pid);
		close(p[0]);
		assert_int_equal(cursor_load(fx->cursor, &c, why, sizeof(why)),
		    0);
		/* At least the save it reported last. */
		assert_true(c.generation >= (uint64_t)k);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(cursor_round_trip, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(cursor_missing_is_enoent,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(cursor_torn_every_length,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(cursor_nul_filled, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(cursor_every_byte_flip, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(cursor_bad_checksum, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(cursor_inconsistent_refused,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(cursor_verify_matches, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(cursor_verify_inode_change,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(cursor_verify_truncated,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(cursor_verify_regrown, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(cursor_verify_mid_line, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(cursor_version_1_read, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(cursor_verify_whole_prefix,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(cursor_verify_big_window,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(cursor_save_survives_kill9,
		    setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
