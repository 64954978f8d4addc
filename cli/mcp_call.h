/*
 * mcp_call — what an MCP tool sees of the server: its entry in the table
 * (struct mcp_tool) and the call in hand (struct mcp_call), with the
 * helpers that read a call's arguments and fail it.
 *
 * Below both cli/mcp.c (the protocol server, which owns a table of tools
 * it is handed and runs each call) and cli/mcp_tools.c (the tools and
 * their table): a tool reaches the server only through what its call
 * carries, so the server never has to be included by the tools.
 */
#ifndef CLI_MCP_CALL_H
#define CLI_MCP_CALL_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "cli/watch.h"

struct mcp_call;

struct mcp_tool {
	const char	*name, *title, *description;
	const char	*input, *output;	/* JSON Schema text */
	int		 read_only;
	/* on the thread pool: fills the call's out or err */
	void		(*pool)(struct mcp_call *);
	/* or on the loop: 0 when the call is in hand and answered later,
	 * -1 to have it answered now (err set) */
	int		(*loop)(struct mcp_call *);
};

/* One tools/call in hand, as its tool sees it.  The server embeds it in
 * its own record of the call. */
struct mcp_call {
	const struct mcp_tool	*tool;
	cJSON			*args;		/* an object, owned */
	atomic_int		 cancelled;	/* set on the loop, read anywhere */
	int64_t			 now_ms;	/* when the call came */
	cJSON			*out;		/* the structured result */
	char			 err[2048];	/* a tool error, if *err */
	const char		*project;	/* the game project, real path */
	const char		*daemon_url;	/* --daemon, or NULL */
	/*
	 * The server's wait for the next wakes of the daemon (on the loop),
	 * for a loop tool: from `since` (or NULL: from now), at most `max`
	 * of them, for at most timeout_ms.  0: the call is in hand and is
	 * answered when the wait ends; -1: it failed (err set) and the
	 * tool returns -1.
	 */
	int			(*wait_for_wake)(struct mcp_call *,
				    const struct watch_id *since,
				    long timeout_ms, long max);
};

/* A tool's failure: the model reads `fmt` as the tool's answer. */
void	mcp_call_fail(struct mcp_call *c, const char *fmt, ...)
	    __attribute__((format(printf, 2, 3)));
/* Arguments: each says what is wrong through mcp_call_fail and returns
 * -1; 0 when the argument is fine (or absent and not required). */
int	mcp_args_known(struct mcp_call *c, const char *const *known);
const cJSON *mcp_arg(struct mcp_call *c, const char *name);
int	mcp_arg_str(struct mcp_call *c, const char *name, int required,
	    const char **out);
int	mcp_arg_bool(struct mcp_call *c, const char *name, int *out);
int	mcp_arg_int(struct mcp_call *c, const char *name, long lo, long hi,
	    long *out);
int	mcp_arg_time(struct mcp_call *c, const char *name, int64_t *ms);
int	mcp_arg_list(struct mcp_call *c, const char *name, int hex,
	    const cJSON **out);

#endif
