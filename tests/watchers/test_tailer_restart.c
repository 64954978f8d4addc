/*
 * test_tailer_restart — the tailer across restarts (watchers/tailer.h,
 * DESIGN §8): the cursor saved in the background, kill -9, files changed
 * while stopped, a torn cursor, idleness.  The fixture is
 * tests/watchers/tailer_fx.h; the live scenarios are test_tailer.c.
 */
#define _GNU_SOURCE		/* unshare(2), in the fixture */

#include "tests/watchers/tailer_fx.h"

/* --- restarts: the cursor --------------------------------------------- */

/* The background save reaches the disk with the delivered position. */
static int
saved_at(struct fx *fx, uint64_t offset)
{
	struct cursor	c;

	return cursor_load(fx->cursor, &c, NULL, 0) == 0 &&
	    c.offset == offset;
}

/*
 * Lines before the saved cursor come back as SEED, lines appended while
 * stopped as CATCHUP, then LIVE; no reset while the file is the same.
 */
static void
tailer_restart_phases(void **state)
{
	struct fx	*fx = *state;
	int		 fd;

	put(fx->path, "a\nb\n");
	tail_start(fx, 1);
	WAIT(fx, CAUGHT_UP(fx));
	fd = wopen(fx->path);
	wr(fd, "c\n");
	WAIT(fx, fx->lines == 3);
	/* Saved off the loop thread, without being asked. */
	WAIT(fx, saved_at(fx, 6) && !fx->t.saver.inflight);
	assert_true(status(fx).saves >= 1);
	assert_int_equal(status(fx).save_error, 0);
	tail_stop(fx);
	LOG_IS(fx, "R1 C:a C:b Y L:c ");

	/* Appended while stopped. */
	wr(fd, "d\ne\n");
	log_clear(fx);
	tail_start(fx, 1);
	WAIT(fx, fx->readies == 1);
	wr(fd, "f\n");
	WAIT(fx, fx->lines == 9);
	LOG_IS(fx, "S:a S:b S:c C:d C:e Y L:f ");
	assert_int_equal(status(fx).generation, 1);

	/* SIGTERM path: save now, synchronously. */
	assert_int_equal(tailer_save_sync(&fx->t), 0);
	assert_true(saved_at(fx, 12));
	tail_stop(fx);
	log_clear(fx);
	tail_start(fx, 1);
	WAIT(fx, fx->readies == 1);
	LOG_IS(fx, "S:a S:b S:c S:d S:e S:f Y ");
	close(fd);
}

/* Start with a consumer's own position (tailer_start_at), as the daemon
 * does with its checkpoint: lines start there. */
static void
tail_start_at(struct fx *fx, const struct cursor *at)
{
	struct tailer_cbs	cbs = cbs_template;

	cbs.arg = fx;
	fx->readies = 0;
	assert_int_equal(tailer_init(&fx->t, &fx->loop, fx->path, fx->cursor,
	    fx->poll, &cbs), 0);
	fx->t.data = fx;
	fx->t.poll_ms = TEST_POLL_MS;
	fx->t.save_interval_ms = 0;
	fx->t.rotate_wait_ms = TEST_ROTATE_MS;
	assert_int_equal(tailer_start_at(&fx->t, at), 0);
	fx->live = 1;
	fx->closed = 0;
	fx->expect_off = at->offset;
	assert_int_equal(tailer_start(&fx->t), 0);
}

/* The saved cursor put back to just after "a\nbb\nccc\n". */
static void
cursor_at_9(struct fx *fx)
{
	struct cursor	c;

	assert_int_equal(cursor_load(fx->cursor, &c, NULL, 0), 0);
	assert_true(c.offset >= 9);
	c.offset = 9;
	c.hash_len = 9;
	c.hash = cursor_hash("a\nbb\nccc\n", 9);
	c.prefix = crc32c_more(0, "a\nbb\nccc\n", 9);
	assert_int_equal(cursor_save(fx->cursor, &c), 0);
}

/*
 * A start from the consumer's position: nothing before it is read; what
 * lies between it and the cursor is SEED, what came after CATCHUP — and
 * a position past the cursor (a checkpoint saved after the cursor's last
 * save) skips the cursor's lines too.  The cursor is saved from there on.
 */
static void
tailer_start_at_resumes(void **state)
{
	struct fx	*fx = *state;
	struct cursor	 at_b, at_d;
	int		 fd;

	put(fx->path, "a\nbb\n");
	tail_start(fx, 1);
	WAIT(fx, CAUGHT_UP(fx));
	tailer_position(&fx->t, &at_b);		/* after bb */
	assert_int_equal(at_b.offset, 5);
	assert_int_equal(at_b.generation, 1);
	fd = wopen(fx->path);
	wr(fd, "ccc\n");
	WAIT(fx, fx->lines == 3);
	assert_int_equal(tailer_save_sync(&fx->t), 0);	/* cursor at 9 */
	wr(fd, "dddd\n");
	WAIT(fx, fx->lines == 4);
	tailer_position(&fx->t, &at_d);		/* after dddd: past it */
	assert_int_equal(at_d.offset, 14);
	WAIT(fx, !fx->t.saver.inflight);
	tail_stop(fx);
	cursor_at_9(fx);	/* as if killed after the save at 9 */
	wr(fd, "e\n");

	log_clear(fx);
	tail_start_at(fx, &at_b);
	WAIT(fx, fx->readies == 1);
	LOG_IS(fx, "S:ccc C:dddd C:e Y ");
	assert_int_equal(status(fx).generation, 1);
	assert_int_equal(status(fx).cursor, 16);
	wr(fd, "f\n");
	WAIT(fx, fx->lines == 8);
	LOG_IS(fx, "S:ccc C:dddd C:e Y L:f ");
	assert_int_equal(tailer_save_sync(&fx->t), 0);
	tail_stop(fx);

	/* past the cursor: the lines before it are the consumer's */
	at_d.generation = 1;
	log_clear(fx);
	cursor_at_9(fx);
	tail_start_at(fx, &at_d);
	WAIT(fx, fx->readies == 1);
	LOG_IS(fx, "C:e C:f Y ");
	assert_int_equal(status(fx).generation, 1);
	close(fd);
}

/*
 * A position the file does not hold — its bytes changed, another
 * generation's, no cursor to agree with — is never used: a new
 * generation from byte 0, which tells the consumer to drop what it has.
 */
static void
tailer_start_at_refused(void **state)
{
	struct fx	*fx = *state;
	struct cursor	 at, bad;

	put(fx->path, "a\nbb\nccc\n");
	tail_start(fx, 1);
	WAIT(fx, CAUGHT_UP(fx));
	tailer_position(&fx->t, &at);
	assert_int_equal(tailer_save_sync(&fx->t), 0);
	tail_stop(fx);

	/* bytes that are not the file's */
	bad = at;
	bad.hash ^= 1;
	log_clear(fx);
	tail_start_at(fx, &bad);
	fx->expect_off = 0;
	WAIT(fx, fx->readies == 1);
	LOG_IS(fx, "R2 C:a C:bb C:ccc Y ");
	assert_non_null(strstr(fx->why, "checkpoint does not match"));
	assert_int_equal(tailer_save_sync(&fx->t), 0);
	tail_stop(fx);

	/* another generation's */
	tailer_position(&fx->t, &at);
	bad = at;
	bad.generation = 1;
	log_clear(fx);
	tail_start_at(fx, &bad);
	fx->expect_off = 0;
	WAIT(fx, fx->readies == 1);
	LOG_IS(fx, "R3 C:a C:bb C:ccc Y ");
	assert_non_null(strstr(fx->why, "generation 1, the cursor of 2"));
	tail_stop(fx);

	/* no cursor: a first start, generation 1 again */
	assert_int_equal(unlink(fx->cursor), 0);
	fx->resets = fx->gen = 0;
	log_clear(fx);
	tail_start_at(fx, &at);
	fx->expect_off = 0;
	WAIT(fx, fx->readies == 1);
	LOG_IS(fx, "R1 C:a C:bb C:ccc Y ");

	/* not a position */
	tail_stop(fx);
	bad = at;
	bad.hash_len = 1;
	assert_int_equal(tailer_init(&fx->t, &fx->loop, fx->path, fx->cursor,
	    0, &cbs_template), 0);
	assert_int_equal(tailer_start_at(&fx->t, &bad), UV_EINVAL);
	fx->live = 1;
	fx->closed = 0;
	fx->t.data = fx;
}

/* Stop; truncate and rewrite the file longer than before; start: the
 * cursor's hash does not match, so a new generation from byte 0. */
static void
tailer_regrow_while_stopped(void **state)
{
	struct fx	*fx = *state;

	put(fx->path, "aaaa\nbbbb\n");
	tail_start(fx, 1);
	WAIT(fx, CAUGHT_UP(fx));
	assert_int_equal(tailer_save_sync(&fx->t), 0);
	tail_stop(fx);
	{
		int	fd = open(fx->path, O_WRONLY | O_TRUNC);

		wr(fd, "cccc\ndddd\neeee\n");	/* same inode, longer */
		close(fd);
	}
	log_clear(fx);
	tail_start(fx, 1);
	WAIT(fx, fx->readies == 1);
	LOG_IS(fx, "R2 C:cccc C:dddd C:eeee Y ");
	assert_non_null(strstr(fx->why, "hash mismatch"));
	assert_non_null(strstr(fx->why, "new generation from byte 0"));
}

/* Stop; truncate shorter; start. */
static void
tailer_truncated_while_stopped(void **state)
{
	struct fx	*fx = *state;

	put(fx->path, "aaaa\nbbbb\n");
	tail_start(fx, 1);
	WAIT(fx, CAUGHT_UP(fx));
	assert_int_equal(tailer_save_sync(&fx->t), 0);
	tail_stop(fx);
	assert_int_equal(truncate(fx->path, 5), 0);
	log_clear(fx);
	tail_start(fx, 1);
	WAIT(fx, fx->readies == 1);
	LOG_IS(fx, "R2 C:aaaa Y ");
	assert_non_null(strstr(fx->why, "truncated while stopped"));
}

/* Stop; replace the file by rename with identical bytes; start. */
static void
tailer_replaced_while_stopped(void **state)
{
	struct fx	*fx = *state;
	char		 tmp[PATH_MAX + 80];

	put(fx->path, "aaaa\n");
	tail_start(fx, 1);
	WAIT(fx, CAUGHT_UP(fx));
	assert_int_equal(tailer_save_sync(&fx->t), 0);
	tail_stop(fx);
	snprintf(tmp, sizeof(tmp), "%s.tmp", fx->path);
	put(tmp, "aaaa\n");
	assert_int_equal(rename(tmp, fx->path), 0);
	log_clear(fx);
	tail_start(fx, 1);
	WAIT(fx, fx->readies == 1);
	LOG_IS(fx, "R2 C:aaaa Y ");
	assert_non_null(strstr(fx->why, "replaced"));
}

/* A torn cursor file: refused, said so, new generation from byte 0. */
static void
tailer_torn_cursor(void **state)
{
	struct fx	*fx = *state;

	put(fx->path, "a\nb\n");
	tail_start(fx, 1);
	WAIT(fx, CAUGHT_UP(fx));
	assert_int_equal(tailer_save_sync(&fx->t), 0);
	tail_stop(fx);
	assert_int_equal(truncate(fx->cursor, fsize(fx->cursor) / 2), 0);
	log_clear(fx);
	tail_start(fx, 1);
	WAIT(fx, fx->readies == 1);
	LOG_IS(fx, "Rt C:a C:b Y ");
	assert_non_null(strstr(fx->why, "cursor file"));
	assert_non_null(strstr(fx->why, "new generation from byte 0"));
	tail_stop(fx);

	/*
	 * NUL-filled, as a crash can leave it.  The new generation is the
	 * clock in milliseconds, so it exceeds the last one only once the
	 * clock has passed it: no daemon restarts within one millisecond, but
	 * this test can.  Wait for that (at most 1 ms).
	 */
	for (;;) {
		uv_timeval64_t	now;

		assert_int_equal(uv_gettimeofday(&now), 0);
		if ((uint64_t)now.tv_sec * 1000 + (uint64_t)now.tv_usec / 1000 >
		    fx->gen)
			break;
	}
	{
		char	zeros[200] = { 0 };
		int	fd = open(fx->cursor, O_WRONLY | O_TRUNC);

		assert_int_equal(write(fd, zeros, sizeof(zeros)), 200);
		close(fd);
	}
	log_clear(fx);
	tail_start(fx, 1);
	WAIT(fx, fx->readies == 1);
	LOG_IS(fx, "Rt C:a C:b Y ");
	assert_non_null(strstr(fx->why, "NUL"));
}

/* The file is gone at start although a cursor exists: it is picked up
 * from byte 0 as a new generation when it comes back. */
static void
tailer_missing_at_start(void **state)
{
	struct fx	*fx = *state;

	put(fx->path, "a\n");
	tail_start(fx, 1);
	WAIT(fx, CAUGHT_UP(fx));
	assert_int_equal(tailer_save_sync(&fx->t), 0);
	tail_stop(fx);
	unlink(fx->path);
	log_clear(fx);
	tail_start(fx, 1);
	WAIT(fx, fx->readies == 1);
	put(fx->path, "b\n");
	WAIT(fx, fx->lines == 2);
	LOG_IS(fx, "Y R2 L:b ");
	assert_non_null(strstr(fx->why, "missing at start"));
}

/*
 * Inode reuse: the file deleted and a new one made while stopped.  On
 * most filesystems the new file gets the freed inode number, so dev/ino
 * match and only the bytes before the cursor tell; either way it is a
 * new generation.
 */
static void
tailer_inode_reuse_while_stopped(void **state)
{
	struct fx	*fx = *state;
	struct stat	 a, b;

	put(fx->path, "aaaa\nbbbb\n");
	assert_int_equal(stat(fx->path, &a), 0);
	tail_start(fx, 1);
	WAIT(fx, CAUGHT_UP(fx));
	assert_int_equal(tailer_save_sync(&fx->t), 0);
	tail_stop(fx);
	assert_int_equal(unlink(fx->path), 0);
	put(fx->path, "cccc\ndddd\neeee\n");
	assert_int_equal(stat(fx->path, &b), 0);
	log_clear(fx);
	tail_start(fx, 1);
	WAIT(fx, fx->readies == 1);
	LOG_IS(fx, "R2 C:cccc C:dddd C:eeee Y ");
	if (a.st_ino == b.st_ino)
		assert_non_null(strstr(fx->why, "hash mismatch"));
	else
		assert_non_null(strstr(fx->why, "replaced"));
}

/*
 * Issue 23: what the 4 KiB window missed.  A same-length edit further
 * back, and the file deleted and made again with the same last 4 KiB
 * (ext4 gives the new file the old inode at once: the reuse this
 * stands for; elsewhere the new inode says "replaced").  Either is a new
 * generation, not the old one's SEED.  Untouched since the save, the
 * restart resumes; appended since, the prefix is read again and it
 * resumes too.
 */
static void
tailer_prefix_bound_while_stopped(void **state)
{
	struct fx	*fx = *state;
	char		 big[6000], line[64];
	struct stat	 a, b;
	size_t		 n = 0;
	int		 fd, i;

	for (i = 0; n + 64 < sizeof(big); i++)
		n += (size_t)snprintf(big + n, sizeof(big) - n,
		    "line %04d of the first file\n", i);
	put(fx->path, big);
	tail_start(fx, 1);
	WAIT(fx, CAUGHT_UP(fx));
	assert_int_equal(tailer_save_sync(&fx->t), 0);
	tail_stop(fx);
	/* untouched: the same generation, everything before is SEED */
	log_clear(fx);
	tail_start(fx, 1);
	WAIT(fx, fx->readies == 1);
	assert_null(strstr(fx->log, "R2"));
	assert_int_equal(tailer_save_sync(&fx->t), 0);
	tail_stop(fx);
	/* appended while stopped: the prefix is read again, and holds */
	fd = open(fx->path, O_WRONLY | O_APPEND);
	wr(fd, "appended\n");
	close(fd);
	log_clear(fx);
	tail_start(fx, 1);
	WAIT(fx, fx->readies == 1);
	assert_null(strstr(fx->log, "R2"));
	assert_non_null(strstr(fx->log, "S:line 0000 of the first file"));
	assert_non_null(strstr(fx->log, " C:appended Y "));
	assert_int_equal(tailer_save_sync(&fx->t), 0);
	tail_stop(fx);

	/* (a) one byte of the first line, 5 KiB before the cursor */
	fd = open(fx->path, O_WRONLY);
	assert_int_equal(pwrite(fd, "F", 1, 17), 1);	/* "first" -> "First" */
	close(fd);
	log_clear(fx);
	tail_start(fx, 1);
	WAIT(fx, fx->readies == 1);
	assert_non_null(strstr(fx->log, "R2 C:line 0000 of the First file"));
	assert_non_null(strstr(fx->why, "bytes before the cursor changed"));
	assert_int_equal(tailer_save_sync(&fx->t), 0);
	tail_stop(fx);

	/* (b) deleted, made again: another first line, the same tail */
	assert_int_equal(stat(fx->path, &a), 0);
	assert_int_equal(unlink(fx->path), 0);
	memcpy(big, "LINE", 4);
	fd = open(fx->path, O_WRONLY | O_CREAT | O_EXCL, 0644);
	assert_true(fd >= 0);
	wr(fd, big);
	wr(fd, "appended\n");
	close(fd);
	assert_int_equal(stat(fx->path, &b), 0);
	log_clear(fx);
	tail_start(fx, 1);
	WAIT(fx, fx->readies == 1);
	snprintf(line, sizeof(line), "R3 C:LINE 0000 of the first file");
	assert_non_null(strstr(fx->log, line));
	if (a.st_ino == b.st_ino)
		assert_non_null(strstr(fx->why, "bytes before the cursor "
		    "changed"));
	else
		assert_non_null(strstr(fx->why, "replaced"));
}

/*
 * Saves are coalesced (one in flight) but the last position always gets
 * written: after a burst read in many small chunks, the cursor on disk is
 * the end of the file, and there were fewer saves than reads.
 */
static void
tailer_saves_coalesced(void **state)
{
	struct fx	*fx = *state;
	char		 line[64];
	int		 fd, i;

	fd = wopen(fx->path);
	for (i = 0; i < 5000; i++) {
		snprintf(line, sizeof(line), "n=%06d {}\n", i);
		wr(fd, line);
	}
	close(fd);
	fx->quiet = 1;
	/* 1000-byte reads: 60 chunks, each moving the cursor. */
	{
		struct tailer_cbs	cbs = cbs_template;

		cbs.arg = fx;
		fx->expect_off = 0;
		assert_int_equal(tailer_init(&fx->t, &fx->loop, fx->path,
		    fx->cursor, 0, &cbs), 0);
		fx->t.data = fx;
		fx->t.chunk = 1000;
		fx->t.save_interval_ms = 0;
		fx->live = 1;
		assert_int_equal(tailer_start(&fx->t), 0);
	}
	WAIT(fx, fx->readies > 0 && saved_at(fx, 60000) &&
	    !fx->t.saver.inflight);
	assert_int_equal(fx->lines, 5000);
	assert_true(status(fx).saves >= 1);
	assert_true(status(fx).saves < 60);
	assert_string_equal(fx->bad, "");
}

/*
 * kill -9 of a tailing process at an arbitrary point: the cursor it left
 * is whole and on a line boundary, and a restart delivers every line
 * exactly once (SEED up to the cursor, CATCHUP after), no reset.
 */
static void
tailer_kill9_restart(void **state)
{
	struct fx	*fx = *state;
	uint64_t	 n = 20000, more = 5000;
	struct cursor	 c;
	char		 line[64], b;
	uint64_t	 i;
	pid_t		 pid;
	int		 fd, p[2], st;

	fd = wopen(fx->path);
	for (i = 0; i < n; i++) {
		snprintf(line, sizeof(line), "n=%06" PRIu64 " {}\n", i);
		wr(fd, line);
	}
	close(fd);
	assert_int_equal(pipe(p), 0);
	if ((pid = fork()) == 0) {
		/* A fresh loop: the parent's must not be touched here. */
		static struct fx	child;
		struct tailer_cbs	cbs = cbs_template;

		close(p[0]);
		memcpy(child.path, fx->path, sizeof(child.path));
		memcpy(child.cursor, fx->cursor, sizeof(child.cursor));
		child.quiet = 1;
		child.logcap = 64;
		child.log = calloc(1, 64);
		uv_loop_init(&child.loop);
		cbs.arg = &child;
		tailer_init(&child.t, &child.loop, child.path, child.cursor, 0,
		    &cbs);
		child.t.chunk = 4000;	/* many reads, many saves */
		child.t.save_interval_ms = 0;
		tailer_start(&child.t);
		/* Reads outrun fsyncs, so saves are few: the first will do,
		 * the kill then lands wherever the child happens to be. */
		while (status(&child).saves < 1)
			uv_run(&child.loop, UV_RUN_ONCE);
		if (write(p[1], "x", 1) != 1)
			_exit(1);
		uv_run(&child.loop, UV_RUN_DEFAULT);
		_exit(0);
	}
	assert_true(pid > 0);
	close(p[1]);
	assert_int_equal(read(p[0], &b, 1), 1);
	/* More lines while it tails live, then kill it mid-way. */
	fd = wopen(fx->path);
	for (i = n; i < n + more; i++) {
		snprintf(line, sizeof(line), "n=%06" PRIu64 " {}\n", i);
		wr(fd, line);
	}
	close(fd);
	kill(pid, SIGKILL);
	assert_int_equal(waitpid(pid, &st, 0), pid);
	close(p[0]);

	assert_int_equal(cursor_load(fx->cursor, &c, NULL, 0), 0);
	assert_int_equal(c.offset % 12, 0);	/* lines are 12 bytes */
	n += more;

	fx->quiet = 1;
	tail_start(fx, 1);
	WAIT(fx, fx->readies == 1);
	assert_string_equal(fx->bad, "");
	assert_int_equal(fx->resets, 0);
	assert_int_equal(fx->lines, n);
	assert_int_equal(fx->phase_count[TAIL_SEED], c.offset / 12);
	assert_int_equal(fx->phase_count[TAIL_CATCHUP], n - c.offset / 12);
}

/* --- the loop ---------------------------------------------------------- */

/*
 * Idle costs nothing: once caught up (and the cursor saved), the loop
 * has no timer to run — it would block forever in epoll_wait.
 */
static void
tailer_idle_no_wakeups(void **state)
{
	struct fx	*fx = *state;
	int		 fd;

	put(fx->path, "a\n");
	tail_start(fx, 1);
	WAIT(fx, CAUGHT_UP(fx));
	fd = wopen(fx->path);
	wr(fd, "b\n");
	close(fd);
	WAIT(fx, fx->lines == 2 && saved_at(fx, 4) && !fx->t.saver.inflight);
	uv_run(&fx->loop, UV_RUN_NOWAIT);
	assert_int_equal(uv_backend_timeout(&fx->loop), -1);
}

/* Polling is the opposite, and says why. */
static void
tailer_poll_status(void **state)
{
	struct fx	*fx = *state;

	fx->poll = 1;
	tail_start(fx, 0);
	WAIT(fx, fx->readies == 1);
	assert_string_equal(status(fx).backend, "poll");
	assert_string_equal(status(fx).backend_why, "forced (--poll)");
}

/*
 * Backpressure: a consumer that pauses gets no more lines and no more
 * reads happen; resume delivers the rest in order.
 */
static void
tailer_pause_resume(void **state)
{
	struct fx	*fx = *state;
	uint64_t	 read_at_pause;
	int		 fd, i;

	fd = wopen(fx->path);
	for (i = 0; i < 10; i++)
		wr(fd, "l\n");
	fx->pause_at = 3;
	tail_start(fx, 0);
	WAIT(fx, fx->lines == 3 && status(fx).paused);
	read_at_pause = status(fx).read;
	for (i = 0; i < 10; i++)
		wr(fd, "m\n");
	/* The tailer has heard of the new lines, and holds them back. */
	WAIT(fx, fx->t.dirty);
	assert_int_equal(fx->lines, 3);
	assert_int_equal(status(fx).read, read_at_pause);
	assert_int_equal(fx->readies, 0);
	assert_true(status(fx).lag >= 14);
	tailer_resume(&fx->t);
	assert_int_equal(fx->lines, 3);	/* never from inside resume */
	WAIT(fx, fx->lines == 20 && fx->readies == 1);
	close(fd);
	assert_string_equal(fx->bad, "");
}

/* Closing from inside a line callback: no callback after it, done runs
 * once everything has come back. */
static void
tailer_close_in_callback(void **state)
{
	struct fx	*fx = *state;
	int		 fd, i;

	fd = wopen(fx->path);
	for (i = 0; i < 10; i++)
		wr(fd, "l\n");
	close(fd);
	tail_start(fx, 1);
	fx->close_at = 4;
	WAIT(fx, fx->closed);
	fx->live = 0;
	assert_int_equal(fx->lines, 4);
	assert_string_equal(fx->bad, "");
}

/* fixes.jsonl style: no cursor, always from byte 0, CATCHUP then LIVE. */
static void
tailer_no_cursor(void **state)
{
	struct fx	*fx = *state;

	put(fx->path, "a\n");
	tail_start(fx, 0);
	WAIT(fx, fx->readies == 1);
	assert_int_equal(tailer_save_sync(&fx->t), 0);
	tail_stop(fx);
	assert_int_equal(access(fx->cursor, F_OK), -1);
	/* Nothing persisted, so the count starts over. */
	fx->resets = fx->gen = 0;
	log_clear(fx);
	tail_start(fx, 0);
	WAIT(fx, fx->readies == 1);
	LOG_IS(fx, "R1 C:a Y ");
	assert_non_null(strstr(fx->why, "no cursor"));
}

#define T(name)	cmocka_unit_test_setup_teardown(name, setup, teardown)

int
main(void)
{
	const struct CMUnitTest tests[] = {
		T(tailer_restart_phases),
		T(tailer_start_at_resumes),
		T(tailer_start_at_refused),
		T(tailer_regrow_while_stopped),
		T(tailer_truncated_while_stopped),
		T(tailer_replaced_while_stopped),
		T(tailer_torn_cursor),
		T(tailer_missing_at_start),
		T(tailer_inode_reuse_while_stopped),
		T(tailer_prefix_bound_while_stopped),
		T(tailer_kill9_restart),
		T(tailer_saves_coalesced),
		T(tailer_idle_no_wakeups),
		T(tailer_poll_status),
		T(tailer_pause_resume),
		T(tailer_close_in_callback),
		T(tailer_no_cursor),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
