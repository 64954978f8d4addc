/*
 * sloptimized — watch a game's perf.jsonl, fold it, wake the agent.
 *
 * Options and config, the state directory and its lock, then the loop.
 * Everything else is in daemon.c.
 */
#include <signal.h>
#include <stdio.h>

#include <uv.h>

#include "daemon/daemon.h"
#include "daemon/log.h"

int
main(int argc, char **argv)
{
	struct daemon	d;
	uv_loop_t	loop;
	int		rc;

	signal(SIGPIPE, SIG_IGN);	/* a client gone mid-write is an EPIPE */
	signal(SIGXFSZ, SIG_IGN);	/* a file-size limit is an EFBIG, said */
	if ((rc = daemon_init(&d, &loop, argc, argv)) != 0)
		return rc > 0 ? 0 : 2;	/* --help, -n: 0; bad usage: 2 */
	if ((rc = uv_loop_init(&loop)) != 0)
		fatalx("uv_loop_init: %s", uv_strerror(rc));
	(void)daemon_start(&d);	/* a failure is stopped and said there */
	uv_run(&loop, UV_RUN_DEFAULT);
	rc = daemon_free(&d);
	if (uv_loop_close(&loop) != 0)
		log_warnx("handles left open at exit");
	log_info("stopped");
	return rc;
}
