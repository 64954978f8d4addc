/*
 * mcp — the MCP server of `sloptimize mcp` (cli/mcp.c): JSON-RPC 2.0 over
 * stdio, the protocol's lifecycle, the calls in hand and the wait for
 * wakes.  It runs the tools of the table mcp_open is handed (struct
 * mcp_tool, cli/mcp_call.h; the verb hands it cli/mcp_tools.c's) and
 * calls none of them by name.  The verb and the fuzz harness
 * (tests/fuzz/fuzz_mcp.c) include it; the tools do not.
 */
#ifndef CLI_MCP_H
#define CLI_MCP_H

#include <limits.h>
#include <stdatomic.h>
#include <stdint.h>

#include <cjson/cJSON.h>
#include <uv.h>

#include "cli/mcp_call.h"
#include "cli/watch.h"

#define MCP_LINE_MAX	(8 * 1024 * 1024)	/* one message */
#define MCP_LATEST	"2025-11-25"
#define MCP_STRUCTURED	"2025-06-18"	/* structuredContent from here on */
#define MCP_ANNOTATED	"2025-03-26"	/* tool annotations from here on */
#define GATHER_MS	50	/* wakes this close to the first come along */

enum {
	RPC_PARSE = -32700, RPC_INVALID = -32600, RPC_NO_METHOD = -32601,
	RPC_PARAMS = -32602, RPC_INTERNAL = -32603
};

struct call;

struct mcp {
	uv_loop_t		 loop;
	union {
		uv_handle_t	 h;
		uv_stream_t	 s;
		uv_pipe_t	 pipe;
		uv_tty_t	 tty;
	}			 in, out;
	int			 in_stream, out_stream;	/* else a file */
	uv_fs_t			 in_req;
	char			 in_buf[65536];
	int			 in_open, out_open, out_broken;

	char			*buf;		/* the line being read */
	size_t			 len, cap;
	int			 discarding;	/* a line over MCP_LINE_MAX */

	int			 initialized;
	char			 version[16];
	int			 structured, annotated;

	char			 project[PATH_MAX];
	const char		*daemon_url;
	const struct mcp_tool	*tools;		/* the table it was handed */
	size_t			 ntools;
	struct call		*calls;		/* in hand */
	int			 eof, done;

	struct watch_client	 watch;
	struct watch_state	 wst;
	int			 watch_open;
	struct call		*waiting;	/* the one wait_for_wake */
	uv_timer_t		 wait_timer, gather_timer;

	/* Where each outgoing line goes instead of stdout, when set (the
	 * fuzz harness, tests/fuzz/fuzz_mcp.c): the line without its '\n',
	 * valid during the call. */
	void			(*emit)(void *arg, const char *line, size_t n);
	void			*emit_arg;
};

/*
 * The server without stdin and stdout, for tests/fuzz/fuzz_mcp.c:
 * mcp_open sets up m's loop and timers for the project and the table of
 * tools it serves (0 or a libuv error), mcp_feed takes bytes as stdin
 * would give them (whole lines are answered; tools run once the loop
 * runs), mcp_close closes what mcp_open opened and runs the loop out.
 */
int	mcp_open(struct mcp *m, const char *project,
	    const struct mcp_tool *tools, size_t ntools);
void	mcp_feed(struct mcp *m, const char *p, size_t n);
void	mcp_close(struct mcp *m);

#endif
