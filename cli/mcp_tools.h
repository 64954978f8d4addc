/*
 * mcp_tools — the tools of `sloptimize mcp`, as the table the server is
 * handed (mcp_open): names, descriptions, JSON Schemas, and the functions
 * that run them.  The table is constant; tools/list answers in its order.
 */
#ifndef CLI_MCP_TOOLS_H
#define CLI_MCP_TOOLS_H

#include <stddef.h>

#include "cli/mcp_call.h"

extern const struct mcp_tool	 mcp_tools[];
extern const size_t		 mcp_ntools;

#endif
