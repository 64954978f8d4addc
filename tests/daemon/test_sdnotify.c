/*
 * test_sdnotify — daemon/sdnotify against real AF_UNIX datagram sockets:
 * each test binds its own receiver (a path in a fresh temp dir, or a
 * Linux abstract name), points NOTIFY_SOCKET at it, sends, and reads back
 * exactly what arrived.  Receivers are non-blocking, so "nothing was
 * sent" is an EAGAIN on recv, never a sleep.
 */
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "daemon/sdnotify.h"

struct rx {
	int	fd;
	char	dir[64];	/* temp dir of a path socket, "" if abstract */
	char	path[100];
	char	env[160];	/* what NOTIFY_SOCKET is set to */
};

static void
rx_path(struct rx *rx)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };

	snprintf(rx->dir, sizeof(rx->dir), "/tmp/sdnotify.XXXXXX");
	assert_non_null(mkdtemp(rx->dir));
	snprintf(rx->path, sizeof(rx->path), "%s/notify", rx->dir);
	snprintf(sun.sun_path, sizeof(sun.sun_path), "%s", rx->path);
	rx->fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK, 0);
	assert_true(rx->fd >= 0);
	assert_int_equal(bind(rx->fd, (struct sockaddr *)&sun, sizeof(sun)),
	    0);
	snprintf(rx->env, sizeof(rx->env), "%s", rx->path);
	assert_int_equal(setenv("NOTIFY_SOCKET", rx->env, 1), 0);
}

#ifdef __linux__
static void
rx_abstract(struct rx *rx)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	socklen_t len;
	int n;

	rx->dir[0] = '\0';
	n = snprintf(rx->path, sizeof(rx->path), "sloptimize-test/%ld/%ld",
	    (long)getpid(), (long)time(NULL));
	memcpy(sun.sun_path + 1, rx->path, (size_t)n);
	len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + n);
	rx->fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK, 0);
	assert_true(rx->fd >= 0);
	assert_int_equal(bind(rx->fd, (struct sockaddr *)&sun, len), 0);
	snprintf(rx->env, sizeof(rx->env), "@%s", rx->path);
	assert_int_equal(setenv("NOTIFY_SOCKET", rx->env, 1), 0);
}
#endif

static void
rx_close(struct rx *rx)
{
	close(rx->fd);
	if (rx->dir[0] != '\0') {
		unlink(rx->path);
		rmdir(rx->dir);
	}
	unsetenv("NOTIFY_SOCKET");
}

/* The next datagram, NUL-terminated; fails the test if there is none. */
static void
rx_expect(struct rx *rx, const char *want)
{
	char buf[8192];
	ssize_t n;

	n = recv(rx->fd, buf, sizeof(buf) - 1, 0);
	if (n < 0)
		fail_msg("nothing received: %s", strerror(errno));
	buf[n] = '\0';
	assert_string_equal(buf, want);
}

static void
rx_expect_nothing(struct rx *rx)
{
	char buf[64];

	assert_int_equal(recv(rx->fd, buf, sizeof(buf), 0), -1);
	assert_true(errno == EAGAIN || errno == EWOULDBLOCK);
}

static void
sdnotify_path_socket(void **state)
{
	struct rx rx;

	(void)state;
	rx_path(&rx);
	assert_int_equal(sdnotify_send("READY=1"), 0);
	rx_expect(&rx, "READY=1");
	assert_int_equal(sdnotify_send("STATUS=tailing perf.jsonl\n"
	    "WATCHDOG=1"), 0);
	rx_expect(&rx, "STATUS=tailing perf.jsonl\nWATCHDOG=1");
	assert_int_equal(sdnotify_send("STOPPING=1"), 0);
	rx_expect(&rx, "STOPPING=1");
	rx_expect_nothing(&rx);
	rx_close(&rx);
}

static void
sdnotify_abstract_socket(void **state)
{
	(void)state;
#ifdef __linux__
	struct rx rx;

	rx_abstract(&rx);
	assert_int_equal(sdnotify_send("READY=1"), 0);
	rx_expect(&rx, "READY=1");
	rx_expect_nothing(&rx);
	rx_close(&rx);
#else
	skip();
#endif
}

/* One datagram per call, however large, and in order. */
static void
sdnotify_one_datagram_per_call(void **state)
{
	char big[3000];
	struct rx rx;

	(void)state;
	memset(big, 'x', sizeof(big) - 1);
	memcpy(big, "STATUS=", 7);
	big[sizeof(big) - 1] = '\0';
	rx_path(&rx);
	assert_int_equal(sdnotify_send(big), 0);
	assert_int_equal(sdnotify_send("WATCHDOG=1"), 0);
	rx_expect(&rx, big);
	rx_expect(&rx, "WATCHDOG=1");
	rx_close(&rx);
}

/* Not under systemd: success, and nothing goes anywhere. */
static void
sdnotify_unset_is_a_noop(void **state)
{
	struct rx rx;

	(void)state;
	rx_path(&rx);
	unsetenv("NOTIFY_SOCKET");
	assert_int_equal(sdnotify_send("READY=1"), 0);
	assert_int_equal(sdnotify_sendf("STATUS=%d issues", 3), 0);
	assert_int_equal(sdnotify_reloading(), 0);
	rx_expect_nothing(&rx);
	assert_int_equal(setenv("NOTIFY_SOCKET", "", 1), 0);
	assert_int_equal(sdnotify_send("READY=1"), 0);
	rx_expect_nothing(&rx);
	rx_close(&rx);
}

static void
sdnotify_bad_addresses(void **state)
{
	char long_path[200];

	(void)state;
	setenv("NOTIFY_SOCKET", "run/relative/notify", 1);
	assert_int_equal(sdnotify_send("READY=1"), -EAFNOSUPPORT);
	setenv("NOTIFY_SOCKET", "@", 1);
	assert_int_equal(sdnotify_send("READY=1"), -EAFNOSUPPORT);
	setenv("NOTIFY_SOCKET", "vsock:2:1234", 1);
	assert_int_equal(sdnotify_send("READY=1"), -EAFNOSUPPORT);

	memset(long_path, 'a', sizeof(long_path) - 1);
	long_path[0] = '/';
	long_path[sizeof(long_path) - 1] = '\0';
	setenv("NOTIFY_SOCKET", long_path, 1);
	assert_int_equal(sdnotify_send("READY=1"), -ENAMETOOLONG);
	long_path[0] = '@';
	setenv("NOTIFY_SOCKET", long_path, 1);
#ifdef __linux__
	assert_int_equal(sdnotify_send("READY=1"), -ENAMETOOLONG);
#endif

	/* A socket path nobody is bound to. */
	setenv("NOTIFY_SOCKET", "/nonexistent-sloptimize-dir/notify", 1);
	assert_int_equal(sdnotify_send("READY=1"), -ENOENT);

	/* An empty message is the caller's bug, said as such. */
	setenv("NOTIFY_SOCKET", "/nonexistent-sloptimize-dir/notify", 1);
	assert_int_equal(sdnotify_send(""), -EINVAL);
	assert_int_equal(sdnotify_send(NULL), -EINVAL);
	unsetenv("NOTIFY_SOCKET");
}

/* The receiver went away (the manager restarted): an error, no signal. */
static void
sdnotify_receiver_gone(void **state)
{
	struct rx rx;

	(void)state;
	rx_path(&rx);
	close(rx.fd);
	assert_int_equal(sdnotify_send("WATCHDOG=1"), -ECONNREFUSED);
	rx.fd = -1;
	rx_close(&rx);
}

static void
sdnotify_sendf_formats(void **state)
{
	char huge[5000];
	struct rx rx;

	(void)state;
	rx_path(&rx);
	assert_int_equal(sdnotify_sendf("STATUS=tailing %s, %u issues",
	    "/g/.sloptimize/perf.jsonl", 12u), 0);
	rx_expect(&rx, "STATUS=tailing /g/.sloptimize/perf.jsonl, 12 issues");
	memset(huge, 'y', sizeof(huge) - 1);
	huge[sizeof(huge) - 1] = '\0';
	assert_int_equal(sdnotify_sendf("STATUS=%s", huge), -EMSGSIZE);
	rx_expect_nothing(&rx);
	rx_close(&rx);
}

/* RELOADING=1 carries CLOCK_MONOTONIC in microseconds, as systemd reads. */
static void
sdnotify_reloading_stamps_monotonic(void **state)
{
	unsigned long long before, after, got;
	struct timespec ts;
	char buf[256];
	struct rx rx;
	ssize_t n;

	(void)state;
	rx_path(&rx);
	clock_gettime(CLOCK_MONOTONIC, &ts);
	before = (unsigned long long)ts.tv_sec * 1000000ULL +
	    (unsigned long long)ts.tv_nsec / 1000ULL;
	assert_int_equal(sdnotify_reloading(), 0);
	clock_gettime(CLOCK_MONOTONIC, &ts);
	after = (unsigned long long)ts.tv_sec * 1000000ULL +
	    (unsigned long long)ts.tv_nsec / 1000ULL;
	n = recv(rx.fd, buf, sizeof(buf) - 1, 0);
	assert_true(n > 0);
	buf[n] = '\0';
	assert_int_equal(sscanf(buf, "RELOADING=1\nMONOTONIC_USEC=%llu", &got),
	    1);
	assert_true(got >= before && got <= after);
	rx_close(&rx);
}

static void
sdnotify_watchdog_parsing(void **state)
{
	uint64_t usec;

	(void)state;
	unsetenv("WATCHDOG_PID");

	unsetenv("WATCHDOG_USEC");
	usec = 7;
	assert_int_equal(sdnotify_watchdog_usec(&usec), 0);
	assert_int_equal(usec, 7);		/* untouched when off */
	setenv("WATCHDOG_USEC", "", 1);
	assert_int_equal(sdnotify_watchdog_usec(&usec), 0);

	setenv("WATCHDOG_USEC", "30000000", 1);
	assert_int_equal(sdnotify_watchdog_usec(&usec), 1);
	assert_int_equal(usec, 30000000);
	assert_int_equal(sdnotify_watchdog_usec(NULL), 1);

	setenv("WATCHDOG_USEC", "18446744073709551615", 1);	/* UINT64_MAX */
	assert_int_equal(sdnotify_watchdog_usec(&usec), 1);
	assert_true(usec == UINT64_MAX);

	const char *bad[] = { "0", "-1", "+5", " 5", "5 ", "5s", "0x10",
	    "30e6", "18446744073709551616", "99999999999999999999" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		setenv("WATCHDOG_USEC", bad[i], 1);
		usec = 7;
		if (sdnotify_watchdog_usec(&usec) != -EINVAL)
			fail_msg("WATCHDOG_USEC=\"%s\" not refused", bad[i]);
		assert_int_equal(usec, 7);
	}
	unsetenv("WATCHDOG_USEC");
}

static void
sdnotify_watchdog_pid(void **state)
{
	char pid[32];
	uint64_t usec = 0;

	(void)state;
	setenv("WATCHDOG_USEC", "20000000", 1);

	snprintf(pid, sizeof(pid), "%ld", (long)getpid());
	setenv("WATCHDOG_PID", pid, 1);
	assert_int_equal(sdnotify_watchdog_usec(&usec), 1);
	assert_int_equal(usec, 20000000);

	/* Meant for another process (we are a child that inherited it). */
	snprintf(pid, sizeof(pid), "%ld", (long)getpid() + 1);
	setenv("WATCHDOG_PID", pid, 1);
	usec = 7;
	assert_int_equal(sdnotify_watchdog_usec(&usec), 0);
	assert_int_equal(usec, 7);

	setenv("WATCHDOG_PID", "", 1);		/* empty: as if unset */
	assert_int_equal(sdnotify_watchdog_usec(&usec), 1);
	setenv("WATCHDOG_PID", "0", 1);
	assert_int_equal(sdnotify_watchdog_usec(&usec), -EINVAL);
	setenv("WATCHDOG_PID", "12ab", 1);
	assert_int_equal(sdnotify_watchdog_usec(&usec), -EINVAL);

	unsetenv("WATCHDOG_PID");
	unsetenv("WATCHDOG_USEC");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(sdnotify_path_socket),
		cmocka_unit_test(sdnotify_abstract_socket),
		cmocka_unit_test(sdnotify_one_datagram_per_call),
		cmocka_unit_test(sdnotify_unset_is_a_noop),
		cmocka_unit_test(sdnotify_bad_addresses),
		cmocka_unit_test(sdnotify_receiver_gone),
		cmocka_unit_test(sdnotify_sendf_formats),
		cmocka_unit_test(sdnotify_reloading_stamps_monotonic),
		cmocka_unit_test(sdnotify_watchdog_parsing),
		cmocka_unit_test(sdnotify_watchdog_pid),
	};

	unsetenv("NOTIFY_SOCKET");
	return cmocka_run_group_tests(tests, NULL, NULL);
}
