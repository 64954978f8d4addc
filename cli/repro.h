/*
 * repro — a hitch replayed from its view snapshot (cli/repro.c,
 * docs/attribute.md "A hitch replayed"), for the verb and the MCP tool
 * repro_hitch alike.
 */
#ifndef CLI_REPRO_H
#define CLI_REPRO_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#define REPRO_FRAMES		35	/* frames stepped, by default */
#define REPRO_TIMEOUT_MS	120000	/* the whole call, by default */

struct repro_opts {
	const char		*project;
	const char		*hitch;		/* hitch-<page>-<frame>, or an
						   offset into perf.jsonl */
	const char		*scene;		/* with launch */
	const char		*url;
	int			 launch;
	int			 frames;
	int			 timeout_ms;
	int			 signals;	/* SIGINT/SIGTERM end the wait */
	const atomic_int	*cancel;	/* or another thread */
};

/* Is s a hitch as repro takes it: a snapshot's ref or a byte offset? */
int	repro_hitch_ok(const char *s);

/*
 * Find the hitch's view snapshot, restore it in the page o says and step
 * o->frames frames.  Returns the exit code — 0 replayed (the document
 * says whether the hitch's counters moved as recorded), 2 usage, 4 no
 * snapshot, daemon, browser, page or scene, 128+signal interrupted —
 * with *doc the page's answer (the caller's) when 0, else why.
 */
int	repro_execute(const struct repro_opts *o, cJSON **doc, char *why,
	    size_t cap);

#endif
