/*
 * mcp_impl — what cli/mcp.c (the protocol, the loop, wait_for_wake) and
 * cli/mcp_tools.c (the tools that run on the thread pool, their table)
 * share.  Only those two include it.
 */
#ifndef CLI_MCP_IMPL_H
#define CLI_MCP_IMPL_H

#include <limits.h>
#include <stdatomic.h>
#include <stdint.h>

#include <cjson/cJSON.h>
#include <uv.h>

#include "cli/watch.h"

#define MCP_LINE_MAX	(8 * 1024 * 1024)	/* one message */
#define MCP_LATEST	"2025-11-25"
#define MCP_STRUCTURED	"2025-06-18"	/* structuredContent from here on */
#define MCP_ANNOTATED	"2025-03-26"	/* tool annotations from here on */
#define GATHER_MS	50	/* wakes this close to the first come along */
#define STATUS_TIMEOUT_MS 3000

enum {
	RPC_PARSE = -32700, RPC_INVALID = -32600, RPC_NO_METHOD = -32601,
	RPC_PARAMS = -32602, RPC_INTERNAL = -32603
};

struct mcp;
struct call;

struct tool {
	const char	*name, *title, *description;
	const char	*input, *output;	/* JSON Schema text */
	int		 read_only;
	void		(*pool)(struct call *);	/* on the thread pool */
	void		(*loop)(struct call *);	/* or on the loop */
};

/* One tools/call in hand. */
struct call {
	struct mcp		*m;
	cJSON			*id;		/* the request's */
	const struct tool	*tool;
	cJSON			*args;		/* an object, owned */
	uv_work_t		 work;
	atomic_int		 cancelled;
	int64_t			 now_ms;
	cJSON			*out;		/* the structured result */
	char			 err[2048];	/* a tool error, if *err */
	/* wait_for_wake */
	cJSON			*wakes;
	long			 max;
	struct watch_id		 since;
	int			 have_since;
	int			 connected;
	struct call		*next;
};

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
 * mcp_open sets up m's loop and timers for the project (0 or a libuv
 * error), mcp_feed takes bytes as stdin would give them (whole lines are
 * answered; tools run once the loop runs), mcp_close closes what
 * mcp_open opened and runs the loop out.
 */
int	mcp_open(struct mcp *m, const char *project);
void	mcp_feed(struct mcp *m, const char *p, size_t n);
void	mcp_close(struct mcp *m);


extern const struct tool	 mcp_tools[];
extern const size_t		 mcp_ntools;

/* A tool's failure: the model reads `fmt` as the tool's answer. */
void	mcp_call_fail(struct call *c, const char *fmt, ...)
	    __attribute__((format(printf, 2, 3)));
/* Arguments: each says what is wrong through mcp_call_fail and returns
 * -1; 0 when the argument is fine (or absent and not required). */
int	mcp_args_known(struct call *c, const char *const *known);
const cJSON *mcp_arg(struct call *c, const char *name);
int	mcp_arg_str(struct call *c, const char *name, int required,
	    const char **out);
int	mcp_arg_bool(struct call *c, const char *name, int *out);
int	mcp_arg_int(struct call *c, const char *name, long lo, long hi,
	    long *out);
int	mcp_arg_time(struct call *c, const char *name, int64_t *ms);
int	mcp_arg_list(struct call *c, const char *name, int hex,
	    const cJSON **out);
cJSON	*mcp_tools_list(const struct mcp *m);
void	mcp_tool_wait_for_wake(struct call *c);

#endif
