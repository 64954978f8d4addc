/*
 * test_config — SIGHUP's rule, from the settings table (daemon/config.c):
 * every setting the config file may hold, changed alone, is either applied
 * to the running configuration or named as needing a restart, never both
 * and never neither, and nothing else moves.  The values are found, not
 * listed: each setting is tried with a few candidates until one loads and
 * changes that setting alone, so a setting added to the table is covered
 * without an edit here (a setting none of them fits fails the test, which
 * then needs a candidate).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "daemon/config.h"

static char	project[64], other[64];

static int
load(struct config *c, const char *name, const char *value)
{
	char	 flag[128], err[512];
	char	*argv[6];
	int	 argc = 0;

	argv[argc++] = "sloptimized";
	argv[argc++] = "--project";
	argv[argc++] = project;
	if (name != NULL) {
		snprintf(flag, sizeof(flag), "--%s=%s", name, value);
		argv[argc++] = flag;
	}
	argv[argc] = NULL;
	return config_load(c, argc, argv, err, sizeof(err));
}

/* Is `name` one of the comma-separated names in `list`? */
static int
named(const char *list, const char *name)
{
	size_t		 n = strlen(name);
	const char	*p = list;

	while ((p = strstr(p, name)) != NULL) {
		if ((p == list || p[-2] == ',') && (p[n] == '\0' ||
		    p[n] == ','))
			return 1;
		p += n;
	}
	return 0;
}

/* A value for setting `i` that loads and changes it alone; 0 if none. */
static int
changed(int i, const struct config *c0, struct config *c1,
    const char **value)
{
	static const char *cand[] = { "1", "0", "2", "7", "65", "1000",
	    "250000", "propose", "127.0.0.1:1", "http://box:1",
	    "http://127.0.0.1:1/?database=x", other };
	const char	*name = config_setting_name(i, NULL, NULL);
	size_t		 k;
	int		 j, n = config_setting_count();

	for (k = 0; k < sizeof(cand) / sizeof(cand[0]); k++) {
		if (load(c1, name, cand[k]) != 0 ||
		    config_setting_same(c0, c1, i))
			continue;
		for (j = 0; j < n; j++)
			if (j != i && !config_setting_same(c0, c1, j))
				break;
		if (j == n) {
			*value = cand[k];
			return 1;
		}
	}
	return 0;
}

static void
each_setting_applied_or_named(void **state)
{
	struct config	 c0, c1, cur;
	char		 restart[1024], applied[1024];
	const char	*name, *value;
	int		 i, j, file, needs, n = config_setting_count();
	int		 napplied = 0, nrestart = 0;

	(void)state;
	assert_int_equal(load(&c0, NULL, NULL), 0);
	for (i = 0; i < n; i++) {
		name = config_setting_name(i, &file, &needs);
		if (!file)
			continue;	/* the command line's own: never changes */
		if (!changed(i, &c0, &c1, &value))
			fail_msg("no candidate value changes '%s' alone", name);
		cur = c0;
		config_reload(&cur, &c1, restart, sizeof(restart), applied,
		    sizeof(applied));
		if (needs) {
			if (strcmp(restart, name) != 0 || applied[0] != '\0')
				fail_msg("%s=%s: restart '%s', applied '%s'",
				    name, value, restart, applied);
			assert_true(config_setting_same(&cur, &c0, i));
			nrestart++;
		} else {
			if (strcmp(applied, name) != 0 || restart[0] != '\0')
				fail_msg("%s=%s: applied '%s', restart '%s'",
				    name, value, applied, restart);
			assert_true(config_setting_same(&cur, &c1, i));
			napplied++;
		}
		for (j = 0; j < n; j++)
			if (j != i && !config_setting_same(&cur, &c0, j))
				fail_msg("%s=%s moved %s", name, value,
				    config_setting_name(j, NULL, NULL));
	}
	/* the ones the issue found changing silently are among them */
	assert_true(napplied >= 10);
	assert_true(nrestart >= 10);
}

static void
nothing_changed_nothing_said(void **state)
{
	struct config	c0, c1;
	char		restart[64], applied[64];

	(void)state;
	assert_int_equal(load(&c0, NULL, NULL), 0);
	assert_int_equal(load(&c1, NULL, NULL), 0);
	assert_int_equal(config_reload(&c0, &c1, restart, sizeof(restart),
	    applied, sizeof(applied)), 0);
	assert_string_equal(restart, "");
	assert_string_equal(applied, "");
}

/* Several at once: each in its list, and the lists are cut, not overrun,
 * when they do not fit. */
static void
several_at_once(void **state)
{
	struct config	 c0, c1;
	char		 restart[1024], applied[1024], small[8];
	char		*argv[] = { "sloptimized", "--project", project,
			    "--max-connections", "300", "--page-dir", "/x",
			    "--hitch-ms", "50", "--checkpoint-bytes", "4096",
			    "--max-subscribers", "300", NULL };
	char		 err[256];

	(void)state;
	assert_int_equal(load(&c0, NULL, NULL), 0);
	assert_int_equal(config_load(&c1, 13, argv, err, sizeof(err)), 0);
	assert_int_equal(config_reload(&c0, &c1, restart, sizeof(restart),
	    applied, sizeof(applied)), 3);
	assert_string_equal(restart, "max-connections, page-dir");
	assert_true(named(applied, "hitch-ms"));
	assert_true(named(applied, "checkpoint-bytes"));
	assert_true(named(applied, "max-subscribers"));
	assert_true(c0.wake.hitch_ms == 50);
	assert_int_equal(c0.ckpt_bytes, 4096);
	/* the cap never passes the connections' of the running daemon */
	assert_int_equal(c0.max_conns, CONFIG_MAX_CONNS);
	assert_int_equal(c0.max_subs, CONFIG_MAX_CONNS);

	assert_int_equal(load(&c0, NULL, NULL), 0);
	config_reload(&c0, &c1, small, sizeof(small), applied,
	    sizeof(applied));
	assert_true(strlen(small) < sizeof(small));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(each_setting_applied_or_named),
		cmocka_unit_test(nothing_changed_nothing_said),
		cmocka_unit_test(several_at_once),
	};
	int	rc;

	snprintf(project, sizeof(project), "/tmp/test_config.XXXXXX");
	snprintf(other, sizeof(other), "/tmp/test_config.XXXXXX");
	if (mkdtemp(project) == NULL || mkdtemp(other) == NULL)
		return 1;
	rc = cmocka_run_group_tests(tests, NULL, NULL);
	rmdir(project);
	rmdir(other);
	return rc;
}
