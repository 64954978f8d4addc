/*
 * test_tailer — the byte-cursor tailer against real files on a real loop
 * (watchers/tailer.h, DESIGN §8).
 *
 * Every callback is written into a one-line log ("R1 C:a Y L:b ..."), so
 * each test states its whole expected story in one string:
 *
 *   R<gen>        reset (new generation)   Y          ready
 *   S:/C:/L:<t>   a line, phase SEED / CATCHUP / LIVE
 *   G<off>+<len>  a long line
 *
 * Independently of the log, every line must start exactly where the one
 * before it ended (0 after a reset): that is "exactly once, in order".
 * Tests never sleep: they run the loop until a condition holds, under a
 * deadline that fails the test.  Scenarios run twice, with the kernel's
 * events and with forced polling.
 */
#define _GNU_SOURCE		/* unshare(2) */
#include <sys/stat.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <syslog.h>
#include <uv.h>

#include "watchers/cursor.h"
#include "watchers/tailer.h"

#define WAIT_MS		15000	/* a deadline, not a delay: fails the test */
#define TEST_POLL_MS	40
#define TEST_ROTATE_MS	150	/* rotate-wait, unless a test sets its own */

struct fx {
	char		 root[PATH_MAX];
	char		 proj[PATH_MAX + 16];
	char		 dir[PATH_MAX + 32];
	char		 path[PATH_MAX + 64];
	char		 cursor[PATH_MAX + 16];
	uv_loop_t	 loop;
	uv_timer_t	 deadline;
	int		 timed_out;
	int		 poll;		/* force_poll for this run */
	struct tailer	 t;
	int		 live, closed;

	char		*log;
	size_t		 loglen, logcap;
	int		 quiet;		/* count, don't log (big tests) */
	uint64_t	 lines, longs, resets, readies, gen;
	uint64_t	 phase_count[3];
	char		 why[512];
	uint64_t	 expect_off;	/* where the next line must start */
	char		 bad[256];	/* first contract violation */
	uint64_t	 seq;		/* quiet mode: next "n=" expected */
	uint64_t	 pause_at, close_at;
	struct tailer	*side;		/* a second tailer, closed at teardown */
	int		 side_closed;
	uint64_t	 side_lines;
	uint64_t	 rotate_wait;	/* 0: the default */
	char		 tlog[16384];	/* the tailer's log(): "W msg\n"… */
	size_t		 tloglen;
	int		 dropped;	/* running as nobody (root drops) */
};

/* --- the recorder ----------------------------------------------------- */

static void	on_closed(struct tailer *);

static void
logf_(struct fx *fx, const char *fmt, ...)
{
	va_list	ap;
	int	n;

	for (;;) {
		va_start(ap, fmt);
		n = vsnprintf(fx->log + fx->loglen, fx->logcap - fx->loglen,
		    fmt, ap);
		va_end(ap);
		if ((size_t)n < fx->logcap - fx->loglen)
			break;
		fx->logcap = fx->logcap * 2 + (size_t)n;
		fx->log = realloc(fx->log, fx->logcap);
	}
	fx->loglen += (size_t)n;
}

static void
violation(struct fx *fx, const char *what, uint64_t off)
{
	if (fx->bad[0] == '\0')
		snprintf(fx->bad, sizeof(fx->bad), "%s at offset %" PRIu64
		    " (expected %" PRIu64 ")", what, off, fx->expect_off);
}

static void
on_line(void *arg, const char *line, size_t len, uint64_t off,
    enum tail_phase ph)
{
	struct fx	*fx = arg;

	if (fx->closed || fx->t.closing)
		violation(fx, "line after close", off);
	if (off != fx->expect_off)
		violation(fx, "line out of place", off);
	if (memchr(line, '\n', len) != NULL)
		violation(fx, "newline inside a line", off);
	fx->expect_off = off + len + 1;
	fx->lines++;
	fx->phase_count[ph]++;
	if (fx->quiet) {
		char	want[32];
		int	n = snprintf(want, sizeof(want), "n=%06" PRIu64 " ",
			    fx->seq);

		if (len < (size_t)n || memcmp(line, want, (size_t)n) != 0)
			violation(fx, "line out of sequence", off);
		fx->seq++;
	} else
		logf_(fx, "%c:%.*s ", "SCL"[ph], (int)len, line);
	if (fx->pause_at != 0 && fx->lines == fx->pause_at)
		tailer_pause(&fx->t);
	if (fx->close_at != 0 && fx->lines == fx->close_at)
		tailer_close(&fx->t, on_closed);
}

static void
on_long(void *arg, uint64_t off, uint64_t len, enum tail_phase ph)
{
	struct fx	*fx = arg;

	(void)ph;
	if (off != fx->expect_off)
		violation(fx, "long line out of place", off);
	fx->expect_off = off + len + 1;
	fx->longs++;
	logf_(fx, "G%" PRIu64 "+%" PRIu64 " ", off, len);
}

static void
on_reset(void *arg, uint64_t gen, const char *why)
{
	struct fx	*fx = arg;

	if (gen <= fx->gen && fx->resets > 0)
		violation(fx, "generation not increasing", gen);
	fx->gen = gen;
	fx->resets++;
	fx->expect_off = 0;
	fx->seq = 0;
	snprintf(fx->why, sizeof(fx->why), "%s", why);
	if (fx->quiet)
		return;
	/* Clock-based generations (torn cursor) are logged as "Rt". */
	if (gen > 1000000)
		logf_(fx, "Rt ");
	else
		logf_(fx, "R%" PRIu64 " ", gen);
}

static void
on_ready(void *arg)
{
	struct fx	*fx = arg;

	fx->readies++;
	if (!fx->quiet)
		logf_(fx, "Y ");
}

static void
on_log(void *arg, int prio, const char *msg)
{
	struct fx	*fx = arg;
	int		 n;

	n = snprintf(fx->tlog + fx->tloglen, sizeof(fx->tlog) - fx->tloglen,
	    "%c %s\n", prio <= LOG_WARNING ? 'W' : 'I', msg);
	if (n > 0 && (size_t)n < sizeof(fx->tlog) - fx->tloglen)
		fx->tloglen += (size_t)n;
}

/* How many of the tailer's log lines contain `what`. */
static int
logged(const struct fx *fx, const char *what)
{
	const char	*p = fx->tlog;
	int		 n = 0;

	while ((p = strstr(p, what)) != NULL) {
		n++;
		p = strchr(p, '\n');
		if (p == NULL)
			break;
	}
	return n;
}

static const struct tailer_cbs cbs_template = {
	on_line, on_long, on_reset, on_ready, NULL, on_log
};

/* --- fixture ---------------------------------------------------------- */

static void
on_deadline(uv_timer_t *h)
{
	((struct fx *)h->data)->timed_out = 1;
}

/* Run the loop until `cond` holds; fail the test at the deadline. */
#define WAIT(fx, cond) do {						\
	(fx)->timed_out = 0;						\
	uv_timer_start(&(fx)->deadline, on_deadline, WAIT_MS, 0);	\
	while (!(cond) && !(fx)->timed_out)				\
		uv_run(&(fx)->loop, UV_RUN_ONCE);			\
	uv_timer_stop(&(fx)->deadline);					\
	if (!(cond))							\
		fail_msg("timed out waiting for %s; log: %s; bad: %s",	\
		    #cond, (fx)->log, (fx)->bad);			\
} while (0)

#define LOG_IS(fx, want) do {						\
	assert_string_equal((fx)->bad, "");				\
	assert_string_equal((fx)->log, (want));				\
} while (0)

static struct tailer_status
status(struct fx *fx)
{
	struct tailer_status	st;

	tailer_status(&fx->t, &st);
	return st;
}

static int
setup(void **state)
{
	struct fx	*fx = calloc(1, sizeof(*fx));

	assert_non_null(fx);
	strcpy(fx->root, "/tmp/sloptimize-tailer-XXXXXX");
	assert_non_null(mkdtemp(fx->root));
	snprintf(fx->proj, sizeof(fx->proj), "%s/game", fx->root);
	snprintf(fx->dir, sizeof(fx->dir), "%s/.sloptimize", fx->proj);
	snprintf(fx->path, sizeof(fx->path), "%s/perf.jsonl", fx->dir);
	snprintf(fx->cursor, sizeof(fx->cursor), "%s/cursor", fx->root);
	assert_int_equal(mkdir(fx->proj, 0755), 0);
	assert_int_equal(mkdir(fx->dir, 0755), 0);
	assert_int_equal(uv_loop_init(&fx->loop), 0);
	uv_timer_init(&fx->loop, &fx->deadline);
	fx->deadline.data = fx;
	fx->logcap = 256;
	fx->log = calloc(1, fx->logcap);
	*state = fx;
	return 0;
}

static void
on_closed(struct tailer *t)
{
	struct fx	*fx = t->data;

	fx->closed = 1;
}

static void
tail_stop(struct fx *fx)
{
	if (!fx->live)
		return;
	fx->closed = 0;
	tailer_close(&fx->t, on_closed);
	WAIT(fx, fx->closed);
	fx->live = 0;
}

static void
on_side_closed(struct tailer *t)
{
	((struct fx *)t->data)->side_closed = 1;
}

static int
teardown(void **state)
{
	struct fx	*fx = *state;
	char		 cmd[PATH_MAX + 16];

	tail_stop(fx);
	if (fx->dropped && seteuid(0) != 0)
		return -1;
	if (fx->side != NULL) {
		tailer_close(fx->side, on_side_closed);
		WAIT(fx, fx->side_closed);
		free(fx->side);
	}
	uv_close((uv_handle_t *)&fx->deadline, NULL);
	uv_run(&fx->loop, UV_RUN_DEFAULT);
	/* Every handle the tailer had is closed: the loop closes cleanly. */
	if (uv_loop_close(&fx->loop) != 0)
		return -1;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", fx->root);
	if (system(cmd) != 0)
		return -1;
	free(fx->log);
	free(fx);
	return 0;
}

static void
log_clear(struct fx *fx)
{
	fx->log[0] = '\0';
	fx->loglen = 0;
}

/* Start a tailer on fx->path; `cursor`: keep one in fx->cursor. */
static void
tail_start(struct fx *fx, int cursor)
{
	struct tailer_cbs	cbs = cbs_template;

	cbs.arg = fx;
	fx->expect_off = 0;
	fx->readies = 0;
	assert_int_equal(tailer_init(&fx->t, &fx->loop, fx->path,
	    cursor ? fx->cursor : NULL, fx->poll, &cbs), 0);
	fx->t.data = fx;
	fx->t.poll_ms = TEST_POLL_MS;
	fx->t.save_interval_ms = 0;
	assert_int_equal(fx->t.rotate_wait_ms, TAILER_ROTATE_WAIT_MS);
	fx->t.rotate_wait_ms = fx->rotate_wait != 0 ? fx->rotate_wait :
	    TEST_ROTATE_MS;
	fx->live = 1;
	fx->closed = 0;
	assert_int_equal(tailer_start(&fx->t), 0);
}

static int
wopen(const char *path)
{
	int	fd = open(path, O_WRONLY | O_CREAT | O_APPEND, 0644);

	assert_true(fd >= 0);
	return fd;
}

static void
wr(int fd, const char *s)
{
	size_t	n = strlen(s);

	assert_int_equal(write(fd, s, n), (ssize_t)n);
}

static void
put(const char *path, const char *s)
{
	int	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);

	assert_true(fd >= 0);
	wr(fd, s);
	close(fd);
}

static uint64_t
fsize(const char *path)
{
	struct stat	st;

	return stat(path, &st) == 0 ? (uint64_t)st.st_size : 0;
}

/* The tailer holds the file at `path` open: a descriptor of this process
 * (the tailer runs here) on its inode, other than the test's own writer
 * `mine` (-1: none). */
static int
held(const char *path, int mine)
{
	struct stat	a, b;
	int		fd;

	if (stat(path, &a) != 0)
		return 0;
	for (fd = 3; fd < 1024; fd++)
		if (fd != mine && fstat(fd, &b) == 0 && b.st_dev == a.st_dev &&
		    b.st_ino == a.st_ino)
			return 1;
	return 0;
}

/* Everything in the file has been read and delivered. */
#define CAUGHT_UP(fx)	(status(fx).read == fsize((fx)->path) &&	\
			 status(fx).cursor == status(fx).read &&	\
			 (fx)->readies > 0)

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
	char	cmd[PATH_MAX + 80];
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
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", fx->dir);
	assert_int_equal(system(cmd), 0);
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
BOTH(concurrent_writer)
BOTH(fault_directory)
BOTH(fault_fifo)
BOTH(fault_symlink)
BOTH(fault_unreadable)

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
	WAIT(fx, saved_at(fx, 6) && !fx->t.save_inflight);
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
	WAIT(fx, !fx->t.save_inflight);
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
	    !fx->t.save_inflight);
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
	WAIT(fx, fx->lines == 2 && saved_at(fx, 4) && !fx->t.save_inflight);
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
		T(concurrent_writer_events), T(concurrent_writer_poll),
		T(fault_directory_events), T(fault_directory_poll),
		T(fault_fifo_events), T(fault_fifo_poll),
		T(fault_symlink_events), T(fault_symlink_poll),
		T(fault_unreadable_events), T(fault_unreadable_poll),
		T(tailer_restart_phases),
		T(tailer_start_at_resumes),
		T(tailer_start_at_refused),
		T(tailer_regrow_while_stopped),
		T(tailer_truncated_while_stopped),
		T(tailer_replaced_while_stopped),
		T(tailer_torn_cursor),
		T(tailer_missing_at_start),
		T(tailer_inode_reuse_while_stopped),
		T(tailer_kill9_restart),
		T(tailer_saves_coalesced),
		T(tailer_idle_no_wakeups),
		T(tailer_poll_status),
#if defined(__linux__)
		T(tailer_inotify_no_watches),
		T(tailer_inotify_watches_run_out),
		T(tailer_inotify_no_instances),
#endif
		T(tailer_pause_resume),
		T(tailer_close_in_callback),
		T(tailer_no_cursor),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
