/*
 * tailer_fx — the fixture the tailer's tests share (test_tailer.c: the
 * scenarios, each run with events and with polling; test_tailer_restart.c:
 * restarts and the cursor): a tailer on a real loop whose every callback
 * is written into a one-line log ("R1 C:a Y L:b ..."), so each test
 * states its whole expected story in one string:
 *
 *   R<gen>        reset (new generation)   Y          ready
 *   S:/C:/L:<t>   a line, phase SEED / CATCHUP / LIVE
 *   G<off>+<len>  a long line
 *
 * Independently of the log, every line must start exactly where the one
 * before it ended (0 after a reset): that is "exactly once, in order".
 * Tests never sleep: they run the loop until a condition holds, under a
 * deadline that fails the test.  Included once, by one test program; the
 * helpers are static and marked unused, since each program uses some.
 */
#ifndef TESTS_TAILER_FX_H
#define TESTS_TAILER_FX_H

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

#include "tests/unitfs.h"
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

static __attribute__((unused)) void
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

static __attribute__((unused)) void
violation(struct fx *fx, const char *what, uint64_t off)
{
	if (fx->bad[0] == '\0')
		snprintf(fx->bad, sizeof(fx->bad), "%s at offset %" PRIu64
		    " (expected %" PRIu64 ")", what, off, fx->expect_off);
}

static __attribute__((unused)) void
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

static __attribute__((unused)) void
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

static __attribute__((unused)) void
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

static __attribute__((unused)) void
on_ready(void *arg)
{
	struct fx	*fx = arg;

	fx->readies++;
	if (!fx->quiet)
		logf_(fx, "Y ");
}

static __attribute__((unused)) void
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
static __attribute__((unused)) int
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

static __attribute__((unused)) void
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

static __attribute__((unused)) struct tailer_status
status(struct fx *fx)
{
	struct tailer_status	st;

	tailer_status(&fx->t, &st);
	return st;
}

static __attribute__((unused)) int
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

static __attribute__((unused)) void
on_closed(struct tailer *t)
{
	struct fx	*fx = t->data;

	fx->closed = 1;
}

static __attribute__((unused)) void
tail_stop(struct fx *fx)
{
	if (!fx->live)
		return;
	fx->closed = 0;
	tailer_close(&fx->t, on_closed);
	WAIT(fx, fx->closed);
	fx->live = 0;
}

static __attribute__((unused)) void
on_side_closed(struct tailer *t)
{
	((struct fx *)t->data)->side_closed = 1;
}

static __attribute__((unused)) int
teardown(void **state)
{
	struct fx	*fx = *state;

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
	if (unitfs_rmrf(fx->root) != 0)
		return -1;
	free(fx->log);
	free(fx);
	return 0;
}

static __attribute__((unused)) void
log_clear(struct fx *fx)
{
	fx->log[0] = '\0';
	fx->loglen = 0;
}

/* Start a tailer on fx->path; `cursor`: keep one in fx->cursor. */
static __attribute__((unused)) void
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

static __attribute__((unused)) int
wopen(const char *path)
{
	int	fd = open(path, O_WRONLY | O_CREAT | O_APPEND, 0644);

	assert_true(fd >= 0);
	return fd;
}

static __attribute__((unused)) void
wr(int fd, const char *s)
{
	size_t	n = strlen(s);

	assert_int_equal(write(fd, s, n), (ssize_t)n);
}

static __attribute__((unused)) void
put(const char *path, const char *s)
{
	int	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);

	assert_true(fd >= 0);
	wr(fd, s);
	close(fd);
}

static __attribute__((unused)) uint64_t
fsize(const char *path)
{
	struct stat	st;

	return stat(path, &st) == 0 ? (uint64_t)st.st_size : 0;
}

/* The tailer holds the file at `path` open: a descriptor of this process
 * (the tailer runs here) on its inode, other than the test's own writer
 * `mine` (-1: none). */
static __attribute__((unused)) int
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


#endif
