/*
 * gate_capture — where the correctness gate gets its frame (gate.h).
 *
 * This build has no browser driver: the capture is the browser room's
 * (Chromium over --remote-debugging-pipe, the virtual clock, the named
 * scene), and this file is what it replaces.  Until then every capture
 * is an environment error, exit 4, and says so; nothing is ever passed
 * for want of a frame.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cli/gate.h"

int
gate_capture(const struct gate_capture_req *req, struct gate_frame *out,
    char *why, size_t cap)
{
	memset(out, 0, sizeof(*out));
	snprintf(why, cap, "no browser driver in this build: cannot capture "
	    "scene '%s'%s", req->scene, req->launch ? " with --launch" : "");
	return -ENOSYS;
}
