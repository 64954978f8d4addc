/*
 * views: the view snapshots the daemon keeps for `sloptimize repro`
 * (daemon/views.h).  What is a snapshot and what is not — a ref that is
 * a path, a wrong version or fidelity, too many frames, too many bytes,
 * text the fold's scanner refuses; a snapshot written whole, written
 * again in place, and the directory held to VIEWS_KEEP files with the
 * oldest going first.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "tests/unitfs.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "daemon/views.h"

static int
check(const char *body, char *ref)
{
	char	why[256];

	return views_check(body, strlen(body), ref, why, sizeof(why));
}

static void
what_is_a_snapshot(void **state)
{
	char	ref[VIEWS_REF_MAX], big[VIEWS_BODY_MAX + 64], frames[8192];
	size_t	n = 0;
	int	i;

	(void)state;
	assert_int_equal(check("{\"v\":1,\"fidelity\":\"view\",\"ref\":"
	    "\"hitch-ab12-30\",\"frames\":[{\"frame\":0,\"t\":1}]}", ref), 0);
	assert_string_equal(ref, "hitch-ab12-30");
	/* a ref is a file name of one shape, never a path */
	assert_int_equal(check("{\"v\":1,\"fidelity\":\"view\",\"ref\":"
	    "\"hitch-../x-1\",\"frames\":[{}]}", ref), -EINVAL);
	assert_int_equal(check("{\"v\":1,\"fidelity\":\"view\",\"ref\":"
	    "\"hitch-AB-1\",\"frames\":[{}]}", ref), -EINVAL);
	assert_int_equal(check("{\"v\":1,\"fidelity\":\"view\",\"ref\":"
	    "\"hitch-ab-\",\"frames\":[{}]}", ref), -EINVAL);
	assert_int_equal(check("{\"v\":1,\"fidelity\":\"view\",\"ref\":"
	    "\"hitch-ab-1/\",\"frames\":[{}]}", ref), -EINVAL);
	assert_int_equal(check("{\"v\":1,\"fidelity\":\"view\",\"ref\":"
	    "\"hitch-ab-1234567890123\",\"frames\":[{}]}", ref), -EINVAL);
	/* what it is */
	assert_int_equal(check("{\"v\":2,\"fidelity\":\"view\",\"ref\":"
	    "\"hitch-ab-1\",\"frames\":[{}]}", ref), -EINVAL);
	assert_int_equal(check("{\"v\":1,\"fidelity\":\"workload\",\"ref\":"
	    "\"hitch-ab-1\",\"frames\":[{}]}", ref), -EINVAL);
	assert_int_equal(check("{\"v\":1,\"fidelity\":\"view\",\"ref\":"
	    "\"hitch-ab-1\",\"frames\":[]}", ref), -EINVAL);
	assert_int_equal(check("[1]", ref), -EINVAL);
	assert_int_equal(check("{\"v\":1", ref), -EINVAL);
	/* invalid UTF-8 is refused by the scanner, as the fold would */
	assert_int_equal(check("{\"v\":1,\"fidelity\":\"view\",\"ref\":"
	    "\"hitch-ab-1\",\"frames\":[{}],\"x\":\"\xff\"}", ref), -EINVAL);
	/* at most VIEWS_FRAMES frames */
	n = (size_t)snprintf(frames, sizeof(frames), "{\"v\":1,\"fidelity\":"
	    "\"view\",\"ref\":\"hitch-ab-1\",\"frames\":[");
	for (i = 0; i <= VIEWS_FRAMES; i++)
		n += (size_t)snprintf(frames + n, sizeof(frames) - n, "%s{}",
		    i ? "," : "");
	snprintf(frames + n, sizeof(frames) - n, "]}");
	assert_int_equal(check(frames, ref), -EINVAL);
	/* at most VIEWS_BODY_MAX bytes */
	n = (size_t)snprintf(big, sizeof(big), "{\"v\":1,\"fidelity\":\"view\","
	    "\"ref\":\"hitch-ab-1\",\"frames\":[{}],\"pad\":\"");
	memset(big + n, 'a', sizeof(big) - n - 3);
	memcpy(big + sizeof(big) - 3, "\"}", 3);
	assert_int_equal(check(big, ref), -EINVAL);
}

static unsigned
files_in(const char *dir)
{
	struct dirent	*e;
	unsigned	 n = 0;
	DIR		*d = opendir(dir);

	if (d == NULL)
		return 0;
	while ((e = readdir(d)) != NULL)
		if (e->d_name[0] != '.')
			n++;
	closedir(d);
	return n;
}

static void
written_whole_and_bounded(void **state)
{
	char		 root[] = "/tmp/test_views.XXXXXX", dir[256],
			 path[512], ref[64], why[256], body[256];
	struct stat	 st;
	struct timespec	 ts[2];
	unsigned	 pruned, total = 0;
	int		 i;

	(void)state;
	assert_non_null(mkdtemp(root));
	snprintf(dir, sizeof(dir), "%s/.sloptimize/" VIEWS_DIR, root);
	for (i = 0; i < VIEWS_KEEP + 5; i++) {
		snprintf(ref, sizeof(ref), "hitch-p-%d", i);
		snprintf(body, sizeof(body), "{\"ref\":\"%s\"}", ref);
		assert_int_equal(views_write(root, ref, body, strlen(body),
		    &pruned, why, sizeof(why)), 0);
		/* each older than the next, whatever the clock's grain */
		snprintf(path, sizeof(path), "%s/%s.json", dir, ref);
		ts[0].tv_sec = ts[1].tv_sec = 1000000 + i;
		ts[0].tv_nsec = ts[1].tv_nsec = 0;
		assert_int_equal(utimensat(AT_FDCWD, path, ts, 0), 0);
		total += pruned;
	}
	/* the pruning after a write sees it and the ones before */
	assert_true(files_in(dir) <= VIEWS_KEEP + 1);
	assert_true(total >= 4);
	snprintf(ref, sizeof(ref), "hitch-p-%d", VIEWS_KEEP + 5);
	assert_int_equal(views_write(root, ref, "{}", 2, &pruned, why,
	    sizeof(why)), 0);
	assert_int_equal(files_in(dir), VIEWS_KEEP);
	/* the oldest went first; the newest are there */
	snprintf(path, sizeof(path), "%s/hitch-p-0.json", dir);
	assert_int_not_equal(stat(path, &st), 0);
	snprintf(path, sizeof(path), "%s/hitch-p-%d.json", dir, VIEWS_KEEP + 4);
	assert_int_equal(stat(path, &st), 0);
	/* written again in place: the new bytes, no temp file left */
	assert_int_equal(views_write(root, "hitch-p-300", "{\"a\":1}", 7,
	    &pruned, why, sizeof(why)), 0);
	snprintf(path, sizeof(path), "%s/hitch-p-300.json", dir);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_size, 7);
	snprintf(path, sizeof(path), "%s/hitch-p-300.json.tmp", dir);
	assert_int_not_equal(stat(path, &st), 0);
	assert_int_equal(unitfs_rmrf(root), 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(what_is_a_snapshot),
		cmocka_unit_test(written_whole_and_bounded),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
