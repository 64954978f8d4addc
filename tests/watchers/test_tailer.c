/*
 * test_tailer — the byte-cursor tailer against real files on a real loop
 * (watchers/tailer.h, DESIGN §8): appends, rotation, truncation, faults of
 * the path, inotify running out.  Scenarios run twice, with the kernel's
 * events and with forced polling.  The fixture is tests/watchers/tailer_fx.h;
 * restarts and the cursor are test_tailer_restart.c.
 */
#define _GNU_SOURCE		/* unshare(2), in the fixture */

#include "tests/watchers/tailer_fx.h"

/* --- scenarios (each runs with events and with polling) --------------- */

static void
appends(struct fx *fx)
{
	int	fd;

	put(fx->path, "a\nb\n");
	tail_start(fx, 0);
	WAIT(fx, fx->readies == 1);
	fd = wopen(fx->path);
	wr(fd, "c\n");
	WAIT(fx, fx->lines == 3);
	wr(fd, "d\ne\n");
	wr(fd, "f\n");
	WAIT(fx, fx->lines == 6);
	close(fd);
	LOG_IS(fx, "R1 C:a C:b Y L:c L:d L:e L:f ");
	assert_int_equal(status(fx).cursor, 12);
	assert_int_equal(status(fx).lag, 0);
	assert_string_equal(status(fx).backend, fx->poll ? "poll" : "inotify");
	assert_non_null(strstr(status(fx).backend_why,
	    fx->poll ? "forced" : "local"));
}

/*
 * A line written one byte per write: the cursor stays put, nothing is
 * delivered until the newline, then the line comes once, whole.  After
 * each byte we wait until the tailer has read it, so every partial state
 * was really seen.
 */
static void
bytewise(struct fx *fx)
{
	const char	*line = "{\"type\":\"hitch\",\"frameMs\":141.2}\n";
	size_t		 i;
	int		 fd;

	put(fx->path, "x\n");
	tail_start(fx, 0);
	WAIT(fx, CAUGHT_UP(fx));
	fd = wopen(fx->path);
	for (i = 0; line[i] != '\0'; i++) {
		assert_int_equal(write(fd, line + i, 1), 1);
		WAIT(fx, status(fx).read == 3 + i);
		if (line[i + 1] != '\0') {
			assert_int_equal(fx->lines, 1);
			assert_int_equal(status(fx).cursor, 2);
			assert_int_equal(status(fx).lag, i + 1);
		}
	}
	WAIT(fx, fx->lines == 2);
	close(fd);
	LOG_IS(fx, "R1 C:x Y L:{\"type\":\"hitch\",\"frameMs\":141.2} ");
	assert_int_equal(status(fx).cursor, 2 + strlen(line));
}

static void
truncation(struct fx *fx)
{
	int	fd;

	put(fx->path, "a\nb\n");
	tail_start(fx, 0);
	WAIT(fx, CAUGHT_UP(fx));
	/* Shorter: seen as size < bytes read. */
	fd = open(fx->path, O_WRONLY | O_TRUNC);
	wr(fd, "x\n");
	close(fd);
	WAIT(fx, fx->lines == 3);
	/* Truncated and regrown past the old offset before we look: the
	 * same inode, a bigger size, only the bytes tell. */
	fd = open(fx->path, O_WRONLY | O_TRUNC);
	wr(fd, "long line one\nlong line two\n");
	close(fd);
	WAIT(fx, fx->lines == 5);
	LOG_IS(fx, "R1 C:a C:b Y R2 L:x R3 L:long line one L:long line two ");
	assert_non_null(strstr(fx->why, "changed") != NULL ? fx->why :
	    strstr(fx->why, "truncated"));
	assert_int_equal(status(fx).generation, 3);
}

/*
 * Rotation by rename, by a separate writer process: it keeps appending to
 * the renamed file through its open descriptor, even after the new file
 * exists; all of that is read before the new file's first line.
 */
static void
rotation(struct fx *fx)
{
	char	old[PATH_MAX + 80];
	pid_t	pid;
	int	st;

	snprintf(old, sizeof(old), "%s.1", fx->path);
	put(fx->path, "");
	tail_start(fx, 0);
	WAIT(fx, fx->readies == 1);
	if ((pid = fork()) == 0) {
		int	fd = open(fx->path, O_WRONLY | O_APPEND), nfd;

		if (fd < 0 || write(fd, "r1\nr2\n", 6) != 6 ||
		    rename(fx->path, old) != 0 || write(fd, "r3\n", 3) != 3 ||
		    (nfd = open(fx->path, O_WRONLY | O_CREAT | O_APPEND,
		    0644)) < 0 || write(fd, "r4\n", 3) != 3 ||
		    write(nfd, "s1\n", 3) != 3)
			_exit(1);
		_exit(0);
	}
	assert_true(pid > 0);
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_int_equal(st, 0);
	WAIT(fx, fx->lines == 5);
	LOG_IS(fx, "R1 Y L:r1 L:r2 L:r3 L:r4 R2 L:s1 ");
	assert_non_null(strstr(fx->why, "new file"));
	assert_int_equal(status(fx).draining, 0);
}

/* The same, one step at a time, checking the state in between. */
static void
rotation_steps(struct fx *fx)
{
	char	old[PATH_MAX + 80];
	int	fd, nfd;

	snprintf(old, sizeof(old), "%s.1", fx->path);
	put(fx->path, "a\n");
	tail_start(fx, 0);
	WAIT(fx, CAUGHT_UP(fx));
	fd = wopen(fx->path);
	assert_int_equal(rename(fx->path, old), 0);
	WAIT(fx, status(fx).draining && !status(fx).file_exists);
	wr(fd, "b\n");			/* into the renamed file */
	WAIT(fx, fx->lines == 2);
	nfd = wopen(fx->path);		/* new, empty: no switch yet */
	WAIT(fx, status(fx).file_exists);
	wr(fd, "c\n");
	WAIT(fx, fx->lines == 3);
	assert_int_equal(fx->resets, 1);
	wr(nfd, "n\n");
	WAIT(fx, fx->lines == 4);
	close(fd);
	close(nfd);
	LOG_IS(fx, "R1 C:a Y L:b L:c R2 L:n ");
}

/*
 * Rotate-wait: a writer that has started the new file still appends to
 * the old one through its descriptor.  Those late lines come, in order,
 * before the new file's first line (its generation starts only when the
 * window ends), and status counts them.  The late writes follow at once
 * once the tailer holds the new file, well inside the 1 s window.
 */
static void
rotation_late(struct fx *fx)
{
	char	old[PATH_MAX + 80];
	int	fd, nfd;

	snprintf(old, sizeof(old), "%s.1", fx->path);
	put(fx->path, "a\n");
	fx->rotate_wait = 1000;
	tail_start(fx, 0);
	WAIT(fx, CAUGHT_UP(fx));
	fd = wopen(fx->path);
	assert_int_equal(rename(fx->path, old), 0);
	wr(fd, "b\n");			/* before the new file: drained */
	nfd = wopen(fx->path);
	wr(nfd, "n1\n");		/* the writer has started the new file */
	WAIT(fx, fx->lines == 2 && held(fx->path, nfd));
	wr(fd, "late1\n");		/* … and still writes the old one */
	wr(nfd, "n2\n");
	wr(fd, "late2\n");
	WAIT(fx, fx->lines == 6);
	close(fd);
	close(nfd);
	LOG_IS(fx, "R1 C:a Y L:b L:late1 L:late2 R2 L:n1 L:n2 ");
	assert_int_equal(status(fx).late_lines, 2);
	assert_int_equal(status(fx).draining, 0);
	assert_non_null(strstr(fx->why, "rotate-wait"));
}

/*
 * A second rotation inside the window cuts the first one short: the
 * middle file is read as soon as the path moves on to a third, and the
 * third waits for the middle one's own window (a minute here: nothing
 * else ends it, so its line cannot have come).
 */
static void
rotation_twice(struct fx *fx)
{
	char	old1[PATH_MAX + 80], old2[PATH_MAX + 80];
	int	fd, nfd;

	snprintf(old1, sizeof(old1), "%s.1", fx->path);
	snprintf(old2, sizeof(old2), "%s.2", fx->path);
	put(fx->path, "a\n");
	fx->rotate_wait = 60000;
	tail_start(fx, 0);
	WAIT(fx, CAUGHT_UP(fx));
	fd = wopen(fx->path);
	assert_int_equal(rename(fx->path, old1), 0);
	nfd = wopen(fx->path);
	wr(nfd, "m1\n");
	WAIT(fx, held(fx->path, nfd));
	wr(fd, "late\n");
	WAIT(fx, fx->lines == 2);
	close(fd);
	wr(nfd, "m2\n");
	close(nfd);
	assert_int_equal(rename(fx->path, old2), 0);
	put(fx->path, "z1\n");
	/* held() sees the pool thread's open; draining, the loop's verdict */
	WAIT(fx, fx->lines == 4 && held(fx->path, -1) && status(fx).draining);
	LOG_IS(fx, "R1 C:a Y L:late R2 L:m1 L:m2 ");
	assert_int_equal(status(fx).late_lines, 1);
}

/* Deleted while a writer holds it: its last lines still come, then the
 * re-created file from byte 0. */
static void
delete_recreate(struct fx *fx)
{
	int	fd, nfd;

	put(fx->path, "a\n");
	tail_start(fx, 0);
	WAIT(fx, CAUGHT_UP(fx));
	fd = wopen(fx->path);
	assert_int_equal(unlink(fx->path), 0);
	WAIT(fx, !status(fx).file_exists);
	wr(fd, "b\n");
	WAIT(fx, fx->lines == 2);
	nfd = wopen(fx->path);
	wr(nfd, "x\ny\n");
	WAIT(fx, fx->lines == 4);
	close(fd);
	close(nfd);
	LOG_IS(fx, "R1 C:a Y L:b R2 L:x L:y ");
}

/* .sloptimize/ does not exist at start; later it comes, goes, comes. */
static void
dir_created_later(struct fx *fx)
{
	int	fd;

	assert_int_equal(rmdir(fx->dir), 0);
	tail_start(fx, 0);
	WAIT(fx, fx->readies == 1);
	assert_int_equal(status(fx).file_exists, 0);
	assert_int_equal(mkdir(fx->dir, 0755), 0);
	fd = wopen(fx->path);
	wr(fd, "a\n");
	close(fd);
	WAIT(fx, fx->lines == 1);

	/* The whole directory removed and made again. */
	assert_int_equal(unitfs_rmrf(fx->dir), 0);
	WAIT(fx, !status(fx).file_exists);
	assert_int_equal(mkdir(fx->dir, 0755), 0);
	fd = wopen(fx->path);
	wr(fd, "b\n");
	close(fd);
	WAIT(fx, fx->lines == 2);
	LOG_IS(fx, "Y R1 L:a R2 L:b ");
}

/* A 2 MiB line: one long_line with its offset and length; the stream
 * goes on; memory stays bounded (the long line is never held). */
static void
long_line(struct fx *fx)
{
	size_t	big = 2 * 1024 * 1024, i;
	char	*buf = malloc(64 * 1024);
	int	fd;

	memset(buf, 'x', 64 * 1024);
	put(fx->path, "a\n");
	tail_start(fx, 0);
	WAIT(fx, CAUGHT_UP(fx));
	fd = wopen(fx->path);
	for (i = 0; i < big; i += 64 * 1024)
		assert_int_equal(write(fd, buf, 64 * 1024), 64 * 1024);
	wr(fd, "\nb\n");
	close(fd);
	WAIT(fx, fx->lines == 2);
	assert_int_equal(fx->longs, 1);
	LOG_IS(fx, "R1 C:a Y G2+2097152 L:b ");
	assert_int_equal(status(fx).long_lines, 1);
	assert_int_equal(status(fx).cursor, 2 + big + 1 + 2);
	free(buf);
}

/*
 * Where the bytes are read: an append the kernel told us of is read on
 * the loop (a few bytes from the page cache), anything that fills the
 * loop's chunk goes on on the thread pool, and polling (a filesystem
 * whose events are not trusted) reads only on the pool.  Every line
 * comes once, in order, whichever side read it.
 */
static void
read_where(struct fx *fx)
{
	struct tailer_status	st0, st1;
	size_t			n = 9000, i, big;
	char			*buf, line[32];
	int			fd;

	put(fx->path, "a\n");
	tail_start(fx, 0);
	WAIT(fx, CAUGHT_UP(fx) && fx->readies == 1);
	st0 = status(fx);
	fd = wopen(fx->path);
	wr(fd, "b\n");
	WAIT(fx, fx->lines == 2);
	st1 = status(fx);
	if (fx->poll)
		assert_int_equal(st1.reads_loop, 0);
	else {
		assert_true(st1.reads_loop > st0.reads_loop);
		assert_int_equal(st1.reads_pool, st0.reads_pool);
	}
	/* one write of ~100 KiB: more than the loop reads at once */
	assert_non_null(buf = malloc(n * sizeof(line)));
	for (i = 0, big = 0; i < n; i++)
		big += (size_t)snprintf(buf + big, sizeof(line), "l%07zu\n", i);
	assert_true(big > TAILER_LOOP_READ);
	assert_int_equal(write(fd, buf, big), (ssize_t)big);
	close(fd);
	WAIT(fx, fx->lines == 2 + n);
	assert_true(status(fx).reads_pool > st1.reads_pool);
	assert_int_equal(status(fx).cursor, 4 + big);
	assert_int_equal(status(fx).lag, 0);
	free(buf);
}

/*
 * A writer in another process appends 3000 lines in random pieces, lines
 * split across writes at random points: every line exactly once, in
 * order (the quiet recorder checks the sequence numbers).
 */
static void
concurrent_writer(struct fx *fx)
{
	const uint64_t	n = 3000;
	pid_t		pid;
	int		st;

	put(fx->path, "");
	fx->quiet = 1;
	tail_start(fx, 0);
	WAIT(fx, fx->readies == 1);
	if ((pid = fork()) == 0) {
		int		fd = open(fx->path, O_WRONLY | O_APPEND);
		char		line[128];
		uint64_t	i;

		srand(12345);
		for (i = 0; i < n; i++) {
			int	len = snprintf(line, sizeof(line),
				    "n=%06" PRIu64 " {\"type\":\"heartbeat\","
				    "\"pad\":\"%.*s\"}\n", i, rand() % 40,
				    "........................................");
			int	off = 0;

			while (off < len) {
				int	k = 1 + rand() % (len - off);

				if (rand() % 4 == 0)
					k = 1;
				if (write(fd, line + off, (size_t)k) != k)
					_exit(1);
				off += k;
			}
		}
		_exit(0);
	}
	assert_true(pid > 0);
	WAIT(fx, fx->lines == n);
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_int_equal(st, 0);
	assert_string_equal(fx->bad, "");
	assert_int_equal(fx->resets, 1);
	assert_int_equal(status(fx).cursor, fsize(fx->path));
}

/* --- the directory deleted and made again, over and over -------------- */

static void
on_gap(uv_timer_t *h)
{
	*(int *)h->data = 1;
}

/*
 * A random gap between two steps of a cycle: none at all (the next step
 * follows at once, while a probe may be running in the thread pool), one
 * turn of the loop without blocking, or the loop run for 1..25 ms.
 */
static void
gap(struct fx *fx, unsigned *seed)
{
	uv_timer_t	t;
	int		done = 0, k = rand_r(seed) % 4;

	if (k == 0)
		return;
	if (k == 1) {
		uv_run(&fx->loop, UV_RUN_NOWAIT);
		return;
	}
	uv_timer_init(&fx->loop, &t);
	t.data = &done;
	uv_timer_start(&t, on_gap, 1 + (uint64_t)(rand_r(seed) % 25), 0);
	while (!done)
		uv_run(&fx->loop, UV_RUN_ONCE);
	uv_close((uv_handle_t *)&t, NULL);
	uv_run(&fx->loop, UV_RUN_NOWAIT);
}

/* A second tailer on the loop, on fixes.jsonl, as in the daemon: the two
 * share the directory's watch inside libuv.  It only counts. */
static void
side_line(void *arg, const char *line, size_t len, uint64_t off,
    enum tail_phase ph)
{
	(void)line, (void)len, (void)off, (void)ph;
	(*(uint64_t *)arg)++;
}

static void
side_reset(void *arg, uint64_t gen, const char *why)
{
	(void)arg, (void)gen, (void)why;
}

/*
 * `rm -rf .sloptimize; mkdir .sloptimize; append 2 lines; pause`, 60 times,
 * with random gaps between every step (issue 8: the daemon stopped reading
 * for good after a few).  ext4 gives a new directory the inode number of
 * one just freed, so a watch on a deleted directory can look alive by its
 * number.  A directory is freed only when nothing inside it is held open:
 * the one we start in, and those of cycles that write no file (one in
 * four) are.  Every line of every file must come once, in order, each
 * file its own generation; the second tailer must still see fixes.jsonl.
 *
 * Before the next cycle deletes a file the test waits until the tailer
 * holds it open: a file deleted before any reader could open it takes its
 * lines with it, for every tailer.  Once held, its lines must come even if
 * the directory goes at once (the drain of a deleted file).
 */
static void
dir_recreated_repeatedly(struct fx *fx)
{
	const int	 cycles = 60;
	unsigned	 seed = (unsigned)time(NULL) ^ (unsigned)getpid();
	char		*want = calloc(1, 64 * (size_t)cycles + 16), line[64];
	char		 fixes[PATH_MAX + 64];
	const char	*env = getenv("TAILER_SEED");	/* to replay a run */
	struct tailer_cbs scbs = { side_line, NULL, side_reset, NULL, NULL,
				    NULL };
	size_t		 wl = 0;
	int		 i, fd, files = 0;

	if (env != NULL)
		seed = (unsigned)strtoul(env, NULL, 10);
	print_message("seed %u (TAILER_SEED replays it)\n", seed);
	scbs.arg = &fx->side_lines;
	snprintf(fixes, sizeof(fixes), "%s/fixes.jsonl", fx->dir);
	fx->side = calloc(1, sizeof(*fx->side));
	assert_int_equal(tailer_init(fx->side, &fx->loop, fixes, NULL, fx->poll,
	    &scbs), 0);
	fx->side->data = fx;
	fx->side->poll_ms = TEST_POLL_MS;
	assert_int_equal(tailer_start(fx->side), 0);
	tail_start(fx, 1);
	WAIT(fx, fx->readies == 1);
	wl += (size_t)sprintf(want + wl, "Y ");
	for (i = 0; i < cycles; i++) {
		unlink(fx->path);
		rmdir(fx->dir);
		gap(fx, &seed);
		assert_int_equal(mkdir(fx->dir, 0755), 0);
		gap(fx, &seed);
		if (rand_r(&seed) % 4 == 0)
			continue;	/* an empty directory, freed next time */
		fd = wopen(fx->path);
		snprintf(line, sizeof(line), "c=%03d a\n", i);
		wr(fd, line);
		gap(fx, &seed);
		snprintf(line, sizeof(line), "c=%03d b\n", i);
		wr(fd, line);
		close(fd);
		wl += (size_t)sprintf(want + wl, "R%d L:c=%03d a L:c=%03d b ",
		    ++files, i, i);
		WAIT(fx, held(fx->path, -1));
		gap(fx, &seed);
	}
	WAIT(fx, fx->lines == 2 * (uint64_t)files);
	LOG_IS(fx, want);
	assert_int_equal(status(fx).generation, files);
	put(fixes, "f\n");
	WAIT(fx, fx->side_lines == 1);
	free(want);
}

/* --- faults of the path (issue 8 item 8) ----------------------------- */

/* Run the loop for `ms`: the poll tick and events get their turns.  Used
 * only before asserting that something was *not* said again. */
static void
run_for(struct fx *fx, uint64_t ms)
{
	uv_timer_t	t;
	int		done = 0;

	uv_timer_init(&fx->loop, &t);
	t.data = &done;
	uv_timer_start(&t, on_gap, ms, 0);
	while (!done)
		uv_run(&fx->loop, UV_RUN_ONCE);
	uv_close((uv_handle_t *)&t, NULL);
	uv_run(&fx->loop, UV_RUN_NOWAIT);
}

#define ERROR_HAS(fx, what)	(strstr(status(fx).error_why, (what)) != NULL)

/*
 * perf.jsonl replaced by a directory: said once by its cause, the file
 * held so far is read on (nothing delivered or still to come is lost),
 * and a regular file at the path later is read by itself.
 */
static void
fault_directory(struct fx *fx)
{
	char	old[PATH_MAX + 80], inner[PATH_MAX + 80];
	int	fd;

	snprintf(old, sizeof(old), "%s.1", fx->path);
	snprintf(inner, sizeof(inner), "%s/x", fx->path);
	put(fx->path, "a\n");
	tail_start(fx, 0);
	WAIT(fx, CAUGHT_UP(fx));
	fd = wopen(fx->path);
	assert_int_equal(rename(fx->path, old), 0);
	assert_int_equal(mkdir(fx->path, 0755), 0);
	WAIT(fx, ERROR_HAS(fx, "is a directory, not a regular file"));
	assert_int_equal(status(fx).error, -EISDIR);
	assert_int_equal(status(fx).file_exists, 0);
	wr(fd, "b\n");
	WAIT(fx, fx->lines == 2);
	put(inner, "x");		/* more events, more probes */
	run_for(fx, 5 * TEST_POLL_MS);
	assert_int_equal(logged(fx, "is a directory"), 1);
	assert_int_equal(unlink(inner), 0);
	assert_int_equal(rmdir(fx->path), 0);
	put(fx->path, "c\n");
	WAIT(fx, fx->lines == 3);
	close(fd);
	LOG_IS(fx, "R1 C:a Y L:b R2 L:c ");
	assert_int_equal(status(fx).error, 0);
	assert_string_equal(status(fx).error_why, "");
	assert_int_equal(logged(fx, "can be read again"), 1);
}

/*
 * A FIFO at the path, at start and in place of the file held: never
 * opened (a FIFO with no writer would hang a blocking open, and a pool
 * thread with it), said once each time, and what follows is read.
 */
static void
fault_fifo(struct fx *fx)
{
	char	old[PATH_MAX + 80];
	int	fd;

	snprintf(old, sizeof(old), "%s.1", fx->path);
	assert_int_equal(mkfifo(fx->path, 0644), 0);
	tail_start(fx, 0);
	WAIT(fx, fx->readies == 1 && ERROR_HAS(fx, "is a FIFO (named pipe)"));
	run_for(fx, 5 * TEST_POLL_MS);
	assert_int_equal(logged(fx, "is a FIFO"), 1);
	assert_int_equal(unlink(fx->path), 0);
	put(fx->path, "a\n");
	WAIT(fx, fx->lines == 1);
	assert_int_equal(status(fx).error, 0);

	fd = wopen(fx->path);
	assert_int_equal(rename(fx->path, old), 0);
	assert_int_equal(mkfifo(fx->path, 0644), 0);
	WAIT(fx, ERROR_HAS(fx, "is a FIFO"));
	assert_non_null(strstr(status(fx).error_why, "is read on"));
	wr(fd, "b\n");
	WAIT(fx, fx->lines == 2);
	assert_int_equal(logged(fx, "is a FIFO"), 2);	/* a second time */
	assert_int_equal(unlink(fx->path), 0);
	put(fx->path, "c\n");
	WAIT(fx, fx->lines == 3);
	close(fd);
	LOG_IS(fx, "Y R1 L:a L:b R2 L:c ");
}

/*
 * A symlink is followed, wherever its target lives; a dangling one is
 * like a missing file (said, as info), and its target appearing in
 * another directory — where no watch of ours looks — is found by the
 * probe that runs while the path is a symlink.
 */
static void
fault_symlink(struct fx *fx)
{
	char	target[PATH_MAX + 32], later[PATH_MAX + 32];
	char	lnk[PATH_MAX + 80];
	int	fd;

	snprintf(target, sizeof(target), "%s/real.jsonl", fx->root);
	snprintf(later, sizeof(later), "%s/later.jsonl", fx->root);
	snprintf(lnk, sizeof(lnk), "%s.lnk", fx->path);
	put(target, "t1\n");
	put(fx->path, "a\n");
	tail_start(fx, 0);
	WAIT(fx, CAUGHT_UP(fx));
	assert_int_equal(symlink(target, lnk), 0);
	assert_int_equal(rename(lnk, fx->path), 0);
	WAIT(fx, fx->lines == 2);
	fd = wopen(target);
	wr(fd, "t2\n");
	WAIT(fx, fx->lines == 3);
	assert_int_equal(status(fx).error, 0);
	assert_int_equal(status(fx).file_exists, 1);

	assert_int_equal(symlink(later, lnk), 0);	/* dangling */
	assert_int_equal(rename(lnk, fx->path), 0);
	WAIT(fx, !status(fx).file_exists &&
	    ERROR_HAS(fx, "is a symbolic link to"));
	assert_non_null(strstr(status(fx).error_why, "later.jsonl"));
	wr(fd, "t3\n");			/* the file held is read on */
	WAIT(fx, fx->lines == 4);
	close(fd);
	put(later, "m1\n");
	WAIT(fx, fx->lines == 5);
	LOG_IS(fx, "R1 C:a Y R2 L:t1 L:t2 L:t3 R3 L:m1 ");
	assert_int_equal(logged(fx, "I "), 2);	/* dangling; readable again */
	assert_int_equal(logged(fx, "W "), 0);
}

/*
 * Run as nobody: root opens a file of mode 000 anyway.  The fixture is
 * given to nobody first, so the test still writes its files.
 */
static int
drop_root(struct fx *fx)
{
	char	cmd[PATH_MAX + 64];

	if (geteuid() != 0)
		return 0;
	snprintf(cmd, sizeof(cmd), "chown -R 65534:65534 '%s'", fx->root);
	if (system(cmd) != 0 || seteuid(65534) != 0)
		return -1;
	fx->dropped = 1;
	return 0;
}

/*
 * A file the tailer may not read (mode 000), at start and in place of the
 * file held: said once with the mode, the old file read on, and read
 * from byte 0 once its mode allows.
 */
static void
fault_unreadable(struct fx *fx)
{
	char	old[PATH_MAX + 80], tmp[PATH_MAX + 80];
	int	fd;

	if (drop_root(fx) != 0)
		skip();
	snprintf(old, sizeof(old), "%s.1", fx->path);
	snprintf(tmp, sizeof(tmp), "%s.tmp", fx->path);
	put(fx->path, "a\n");
	assert_int_equal(chmod(fx->path, 0), 0);
	tail_start(fx, 0);
	WAIT(fx, fx->readies == 1 && ERROR_HAS(fx, "Permission denied"));
	assert_int_equal(status(fx).error, -EACCES);
	assert_non_null(strstr(status(fx).error_why, "(mode 000)"));
	assert_int_equal(chmod(fx->path, 0), 0);	/* an event */
	run_for(fx, 5 * TEST_POLL_MS);
	assert_int_equal(logged(fx, "Permission denied"), 1);
	assert_int_equal(chmod(fx->path, 0644), 0);
	WAIT(fx, fx->lines == 1);

	fd = wopen(fx->path);
	put(tmp, "n\n");
	assert_int_equal(chmod(tmp, 0), 0);
	assert_int_equal(rename(fx->path, old), 0);
	assert_int_equal(rename(tmp, fx->path), 0);
	WAIT(fx, ERROR_HAS(fx, "Permission denied"));
	wr(fd, "b\n");
	WAIT(fx, fx->lines == 2);
	close(fd);
	assert_int_equal(chmod(fx->path, 0644), 0);
	WAIT(fx, fx->lines == 3);
	LOG_IS(fx, "Y R1 L:a L:b R2 L:n ");
	assert_int_equal(logged(fx, "Permission denied"), 2);
	assert_int_equal(logged(fx, "can be read again"), 2);
}

/* --- inotify exhausted --------------------------------------------------- */

#if defined(__linux__)
struct exhaust {
	const char	*sysctl;	/* in /proc/sys/user/ */
	int		 limit;
	const char	*want;		/* in backend_why and the log */
};

/* In the child: run its loop until `cond` or the deadline. */
#define CHILD_WAIT(c, cond) do {					\
	(c)->timed_out = 0;						\
	uv_timer_start(&(c)->deadline, on_deadline, WAIT_MS, 0);	\
	while (!(cond) && !(c)->timed_out)				\
		uv_run(&(c)->loop, UV_RUN_ONCE);			\
	uv_timer_stop(&(c)->deadline);					\
} while (0)

static void
child_put(const char *path, const char *s, int flags)
{
	int	fd = open(path, O_WRONLY | O_CREAT | flags, 0644);

	if (fd < 0 || write(fd, s, strlen(s)) != (ssize_t)strlen(s))
		_exit(3);
	close(fd);
}

/*
 * In a forked child (single-threaded, as unshare(2) wants), in a user
 * namespace of its own with an inotify limit lowered for it alone — the
 * real limit, as a container sets it; nothing outside the namespace
 * feels it, so there is nothing to restore — tail perf.jsonl through an
 * append and a re-creation, then write what happened to `out`.
 */
static void
exhaust_child(const struct fx *parent, const struct exhaust *e, int out)
{
	struct tailer_cbs	 cbs = cbs_template;
	struct tailer_status	 st;
	struct fx		*c = calloc(1, sizeof(*c));
	char			 sys[128];
	int			 fd;

	if (unshare(CLONE_NEWUSER) != 0) {
		dprintf(out, "SKIP unshare(CLONE_NEWUSER): %s", strerror(errno));
		_exit(0);
	}
	snprintf(sys, sizeof(sys), "/proc/sys/user/%s", e->sysctl);
	if ((fd = open(sys, O_WRONLY)) < 0 || dprintf(fd, "%d\n", e->limit) < 0 ||
	    close(fd) != 0) {
		dprintf(out, "SKIP %s: %s", sys, strerror(errno));
		_exit(0);
	}
	memcpy(c->path, parent->path, sizeof(c->path));
	c->logcap = 256;
	c->log = calloc(1, c->logcap);
	uv_loop_init(&c->loop);
	uv_timer_init(&c->loop, &c->deadline);
	c->deadline.data = c;
	cbs.arg = c;
	if (tailer_init(&c->t, &c->loop, c->path, NULL, 0, &cbs) != 0)
		_exit(2);
	c->t.poll_ms = TEST_POLL_MS;
	c->t.rotate_wait_ms = TEST_ROTATE_MS;
	if (tailer_start(&c->t) != 0)
		_exit(2);
	CHILD_WAIT(c, c->lines == 1 && c->readies == 1);
	child_put(c->path, "b\n", O_APPEND);
	CHILD_WAIT(c, c->lines == 2);
	unlink(c->path);
	child_put(c->path, "c\n", O_TRUNC);
	CHILD_WAIT(c, c->lines == 3);
	tailer_status(&c->t, &st);
	dprintf(out, "log=%s|bad=%s|backend=%s|why=%s|tlog=%s", c->log, c->bad,
	    st.backend, st.backend_why, c->tlog);
	_exit(0);
}

/*
 * Watches or instances run out: the stat poll delivers every line, and
 * the fall-back is said once, by its cause, in the log and the status.
 */
static void
exhausted(struct fx *fx, const struct exhaust *e)
{
	char	buf[16384];
	size_t	n = 0;
	ssize_t	k;
	pid_t	pid;
	int	p[2], st;

	put(fx->path, "a\n");
	assert_int_equal(pipe(p), 0);
	if ((pid = fork()) == 0) {
		close(p[0]);
		exhaust_child(fx, e, p[1]);
	}
	assert_true(pid > 0);
	close(p[1]);
	/* The child's every wait has a deadline: this read ends. */
	while (n < sizeof(buf) - 1 &&
	    (k = read(p[0], buf + n, sizeof(buf) - 1 - n)) > 0)
		n += (size_t)k;
	buf[n] = '\0';
	close(p[0]);
	assert_int_equal(waitpid(pid, &st, 0), pid);
	if (strncmp(buf, "SKIP", 4) == 0) {
		print_message("%s\n", buf);
		skip();
	}
	assert_int_equal(st, 0);
	print_message("%s\n", buf);
	assert_non_null(strstr(buf, "log=R1 C:a Y L:b R2 L:c |bad=|"));
	assert_non_null(strstr(buf, "|backend=poll|"));
	assert_non_null(strstr(strstr(buf, "|why="), e->want));
	assert_non_null(strstr(strstr(buf, "|tlog="), e->want));
	assert_null(strstr(strstr(strstr(buf, "|tlog="), "polling every") + 1,
	    "polling every"));		/* said once */
}

/* None at all: the very first watch (the project folder) fails. */
static void
tailer_inotify_no_watches(void **state)
{
	static const struct exhaust e = { "max_inotify_watches", 0,
	    "inotify watches exhausted (max_user_watches=0)" };

	exhausted(*state, &e);
}

/* Two: the folders are watched, the file's watch fails once it is open. */
static void
tailer_inotify_watches_run_out(void **state)
{
	static const struct exhaust e = { "max_inotify_watches", 2,
	    "inotify watches exhausted (max_user_watches=2), adding one for " };

	exhausted(*state, &e);
}

static void
tailer_inotify_no_instances(void **state)
{
	static const struct exhaust e = { "max_inotify_instances", 0,
	    "inotify instances exhausted (max_user_instances=0)" };

	exhausted(*state, &e);
}
#endif

#define BOTH(name)							\
static void name##_events(void **s) { name(*s); }			\
static void name##_poll(void **s)					\
{ ((struct fx *)*s)->poll = 1; name(*s); }

BOTH(appends)
BOTH(bytewise)
BOTH(truncation)
BOTH(rotation)
BOTH(rotation_steps)
BOTH(rotation_late)
BOTH(rotation_twice)
BOTH(delete_recreate)
BOTH(dir_created_later)
BOTH(dir_recreated_repeatedly)
BOTH(long_line)
BOTH(read_where)
BOTH(concurrent_writer)
BOTH(fault_directory)
BOTH(fault_fifo)
BOTH(fault_symlink)
BOTH(fault_unreadable)


#define T(name)	cmocka_unit_test_setup_teardown(name, setup, teardown)

int
main(void)
{
	const struct CMUnitTest tests[] = {
		T(appends_events), T(appends_poll),
		T(bytewise_events), T(bytewise_poll),
		T(truncation_events), T(truncation_poll),
		T(rotation_events), T(rotation_poll),
		T(rotation_steps_events), T(rotation_steps_poll),
		T(rotation_late_events), T(rotation_late_poll),
		T(rotation_twice_events), T(rotation_twice_poll),
		T(delete_recreate_events), T(delete_recreate_poll),
		T(dir_created_later_events), T(dir_created_later_poll),
		T(dir_recreated_repeatedly_events),
		T(dir_recreated_repeatedly_poll),
		T(long_line_events), T(long_line_poll),
		T(read_where_events), T(read_where_poll),
		T(concurrent_writer_events), T(concurrent_writer_poll),
		T(fault_directory_events), T(fault_directory_poll),
		T(fault_fifo_events), T(fault_fifo_poll),
		T(fault_symlink_events), T(fault_symlink_poll),
		T(fault_unreadable_events), T(fault_unreadable_poll),
#if defined(__linux__)
		T(tailer_inotify_no_watches),
		T(tailer_inotify_watches_run_out),
		T(tailer_inotify_no_instances),
#endif
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
