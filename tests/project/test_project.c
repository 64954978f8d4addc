/*
 * test_project — project/project: finding a project's files, opening them
 * without ever blocking, and folding a project from disk.  A FIFO, a
 * directory or a socket where a ledger file should be is refused at once
 * (a blocking open of a FIFO would wait forever), and the fold says which
 * file it was.
 */
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "tests/unitfs.h"

#include "ledger/ledger.h"
#include "project/project.h"

struct fx {
	char	root[PATH_MAX];
	char	perf[PATH_MAX + 32], fixes[PATH_MAX + 32];
};

static int
setup(void **state)
{
	struct fx	*fx = calloc(1, sizeof(*fx));
	char		 dir[PATH_MAX + 32];

	assert_non_null(fx);
	strcpy(fx->root, "/tmp/sloptimize-project-XXXXXX");
	assert_non_null(mkdtemp(fx->root));
	snprintf(dir, sizeof(dir), "%s/.sloptimize", fx->root);
	assert_int_equal(mkdir(dir, 0755), 0);
	assert_int_equal(project_path(fx->root, "perf.jsonl", fx->perf,
	    sizeof(fx->perf)), 0);
	assert_int_equal(project_path(fx->root, "fixes.jsonl", fx->fixes,
	    sizeof(fx->fixes)), 0);
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

static void
project_paths(void **state)
{
	char	out[64];

	(void)state;
	assert_int_equal(project_path("/g/orbit", "perf.jsonl", out,
	    sizeof(out)), 0);
	assert_string_equal(out, "/g/orbit/.sloptimize/perf.jsonl");
	assert_int_equal(project_path("/g/orbit", "perf.jsonl", out, 10),
	    -ENAMETOOLONG);
}

static void
project_open_refuses_what_is_not_a_file(void **state)
{
	struct fx		*fx = *state;
	struct sockaddr_un	 sa;
	int			 fd, s;

	assert_int_equal(project_open(fx->perf, O_RDONLY, 0, &fd), -ENOENT);
	assert_int_equal(fd, -1);
	assert_int_equal(mkfifo(fx->perf, 0644), 0);
	/* no writer at the other end: a blocking open would never return */
	assert_int_equal(project_open(fx->perf, O_RDONLY, 0, &fd),
	    -PROJECT_ENOTREG);
	assert_int_equal(project_open(fx->perf, O_RDWR | O_APPEND | O_CREAT,
	    0644, &fd), -PROJECT_ENOTREG);
	assert_int_equal(unlink(fx->perf), 0);
	assert_int_equal(mkdir(fx->perf, 0755), 0);
	assert_int_equal(project_open(fx->perf, O_RDONLY, 0, &fd),
	    -PROJECT_ENOTREG);
	assert_int_equal(rmdir(fx->perf), 0);
	/* a socket: open(2) says ENXIO, which is the same refusal */
	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	assert_true(strlen(fx->perf) < sizeof(sa.sun_path));
	memcpy(sa.sun_path, fx->perf, strlen(fx->perf));
	s = socket(AF_UNIX, SOCK_STREAM, 0);
	assert_int_equal(bind(s, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(project_open(fx->perf, O_RDONLY, 0, &fd),
	    -PROJECT_ENOTREG);
	close(s);
	assert_int_equal(unlink(fx->perf), 0);
	unitfs_puts(fx->perf, "x\n");
	assert_int_equal(project_open(fx->perf, O_RDONLY, 0, &fd), 0);
	assert_true(fd >= 0);
	assert_int_equal(fcntl(fd, F_GETFL) & O_NONBLOCK, 0);
	close(fd);
	assert_non_null(strstr(project_strerror(-PROJECT_ENOTREG),
	    "not a regular file"));
}

static void
project_fold_says_which_file(void **state)
{
	struct fx			*fx = *state;
	struct ledger_opts		 o = { LEDGER_NO_TIME, LEDGER_NO_TIME, 0,
					    0, NULL };
	struct project_fold_info	 info;
	struct ledger			*l;
	struct ledger_counts		 c;

	assert_int_equal(project_fold(fx->root, &o, &l, &info), -ENOENT);
	assert_null(l);
	unitfs_puts(fx->perf, "{\"type\":\"hitch\",\"at\":\"2026-11-29T12:00:00Z\","
	    "\"frameMs\":150}\n{\"type\":\"hitch\",\"frameMs\":1");
	assert_int_equal(project_fold(fx->root, &o, &l, &info), 0);
	ledger_counts(l, &c);
	assert_int_equal(c.folded, 1);
	assert_int_equal(info.partial, 27);
	assert_false(info.have_fixes);
	ledger_destroy(l);
	assert_int_equal(mkfifo(fx->fixes, 0644), 0);
	assert_int_equal(project_fold(fx->root, &o, &l, &info),
	    -PROJECT_ENOTREG);
	assert_null(l);
	assert_string_equal(info.failed, info.fixes);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(project_paths),
		cmocka_unit_test_setup_teardown(
		    project_open_refuses_what_is_not_a_file, setup, teardown),
		cmocka_unit_test_setup_teardown(project_fold_says_which_file,
		    setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
