/*
 * attribute — the census and the measured bisection of a named scene in a
 * launched browser (cli/attribute.c, docs/attribute.md), for the verb and
 * the MCP tools alike.
 */
#ifndef CLI_ATTRIBUTE_H
#define CLI_ATTRIBUTE_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#define ATTR_TOP	20	/* candidates from the census, by default */
#define ATTR_FRAMES	5	/* replays per entity and baseline */
#define ATTR_TIMEOUT_MS	300000	/* the whole call, by default */

struct attr_opts {
	const char		*project;
	const char		*scene;
	const char		*url;
	const char		*ids;		/* "a,b" (bisection), or NULL */
	int			 launch;
	int			 bisect;	/* 0: the census */
	int			 timeout_ms;
	int			 top, frames;	/* bisection */
	double			 dpr;
	int64_t			 now_ms;	/* the document's time */
	int			 signals;	/* SIGINT/SIGTERM end the wait */
	const atomic_int	*cancel;	/* or another thread */
};

/* Is s a --ids list: 1 to 200 ids, comma-separated, none empty, no blank,
 * quote or backslash? */
int	attr_ids_ok(const char *s);

/*
 * Take the census or the attribution o asks for and write it whole to
 * .sloptimize/census.json or attribution.json.  Returns the exit code — 0
 * written, 1 the world not restored (bisection), 2 usage, 4 no browser,
 * page, scene or entity, 128+signal interrupted — with *doc the document
 * written (the caller's) when 0 or 1, else why.  path gets the file.
 */
int	attribute_execute(const struct attr_opts *o, cJSON **doc, char *path,
	    size_t pcap, char *why, size_t cap);

#endif
