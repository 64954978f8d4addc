/*
 * fuzz_config — the daemon's JSON config file on any bytes.  It is read
 * at start-up and on SIGHUP: whatever it holds, loading either gives a
 * configuration or an error message, never a crash; and a configuration
 * it accepts keeps the bounds config.h's users rely on.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon/config.h"

int	LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);

static char	path[512];

int
LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
	static struct config	 c;
	char			 err[512];
	char			*argv[] = { "sloptimized", "--config", path,
				   "--project", "/tmp", NULL };
	int			 fd, rc;

	if (path[0] == '\0')
		snprintf(path, sizeof(path), "%s/fuzz-config.%ld.json",
		    getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp",
		    (long)getpid());
	if ((fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600)) < 0)
		abort();
	if (write(fd, data, size) != (ssize_t)size)
		abort();
	close(fd);
	err[0] = '\0';
	rc = config_load(&c, 5, argv, err, sizeof(err));
	if (rc == -1) {
		if (err[0] == '\0')
			abort();	/* an error always says what */
	} else if (rc == 0) {
		if (c.listen_port < 0 || c.listen_port > 65535 ||
		    c.max_conns < 8 || c.max_conns > 4096 ||
		    c.allow_hosts.n > CONFIG_LIST_MAX ||
		    c.allow_origins.n > CONFIG_LIST_MAX ||
		    memchr(c.project, '\0', sizeof(c.project)) == NULL)
			abort();
	} else {
		abort();	/* 1 is for --help and --version only */
	}
	return 0;
}
