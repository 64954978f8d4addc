/*
 * api — the HTTP side of the server: routes under /api/sloptimize/, one
 * JSON serializer per response shape (the CLI's, from ledger/), JSON
 * errors {"error":{"code","message"}}, and the request checks that keep a
 * browser visiting hostile pages out.
 *
 * Responses are rendered whole into memory, then written in pieces from
 * LWS_CALLBACK_HTTP_WRITEABLE, so a large body never blocks the loop.
 */
#ifndef DAEMON_API_H
#define DAEMON_API_H

#include <stddef.h>

#define API_MAX_BODY	(1024 * 1024)

struct lws;
struct server;
struct lws_context_creation_info;

struct api_request {
	char	 method[8];
	char	 uri[512];
	char	*body;		/* request body being received */
	size_t	 body_len;
	int	 body_too_big;
	char	*out;		/* response body being sent */
	size_t	 out_len, out_pos;
	int	 headers_sent;
};

/* Server-wide limits (header size, connections, timeouts). */
void	api_tune(struct lws_context_creation_info *info);
/* May this connection open the events socket? (Origin, Host) */
int	api_ws_allowed(struct server *s, struct lws *wsi);

int	api_http(struct server *s, struct lws *wsi, struct api_request *r,
	    const char *uri);
int	api_http_body(struct server *s, struct lws *wsi, struct api_request *r,
	    const void *in, size_t len);
int	api_http_body_done(struct server *s, struct lws *wsi,
	    struct api_request *r);
int	api_http_writeable(struct server *s, struct lws *wsi,
	    struct api_request *r);
void	api_request_free(struct api_request *r);

#endif
