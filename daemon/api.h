/*
 * api — the HTTP side of the server (DESIGN §10, docs/api.md): routes
 * under /api/sloptimize/, the panel's static files, one JSON serializer
 * per response shape (the CLI's, from ledger/), JSON errors
 * {"error":{"code","message"}}, and the request checks that keep a
 * browser visiting hostile pages out (Host, Origin, token, limits).
 *
 * Every response body is an immutable, reference-counted buffer written
 * in pieces from LWS_CALLBACK_HTTP_WRITEABLE, so a large body never
 * blocks the loop and one /ledger body serves every client at once.
 * Whatever touches the disk (the ledger tail, a filtered fold, a fix
 * append, settings, static files) runs on libuv's thread pool; the
 * request waits in its connection's state until the answer is ready.
 */
#ifndef DAEMON_API_H
#define DAEMON_API_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>

#define API_MAX_BODY		(1024 * 1024)		/* request bodies */
#define API_LEDGER_BYTES	(2u << 20)		/* /ledger default */
#define API_LEDGER_MAX		(8u << 20)		/* ?bytes= at most */
#define API_SNAPS		4	/* /ledger bodies kept (per ?bytes=) */

struct lws;
struct server;
struct daemon;
struct lws_context_creation_info;
struct api_job;

/* An immutable response body; data has LWS_PRE bytes of headroom. */
struct api_blob {
	unsigned	refs;
	size_t		len;
	unsigned char	data[];
};

/* Per connection: the request in hand and its response. */
struct api_request {
	int		 method;		/* enum in api.c */
	int		 route;
	char		 path[512];
	char		 origin[256];		/* "" if none */
	int		 origin_ok;		/* allowed: echo it in ACAO */
	char		 inm[256];		/* If-None-Match */
	char		 id[9];			/* /issues/<id> */
	char		*body;			/* request body being received */
	size_t		 body_len, body_cap;	/* cap: its Content-Length */
	int		 answered;		/* a response is queued */
	int		 in_body;		/* waiting for the body */
	struct api_job	*job;			/* thread-pool work in flight */
	/* waiting for a /ledger body */
	struct api_request *wnext, *wprev;
	int		 wsnap;			/* snap index + 1; 0: none */
	uint64_t	 wgen;
	struct lws	*wsi;
	uint64_t	 wbytes;
	/* the response */
	unsigned	 status;
	const char	*ctype;
	const char	*cache;
	const char	*allow;
	char		 etag[48];
	int		 page;			/* an HTML page: the panel's CSP */
	int		 close;			/* close the connection after */
	int		 head;			/* HEAD: headers only */
	int		 preflight;		/* OPTIONS: CORS headers */
	int		 pna;			/* Private Network Access asked */
	int		 headers_sent;
	struct api_blob	*out;
	size_t		 out_pos;
};

struct api_snap {
	uint64_t		 bytes;		/* the ?bytes= it is for */
	uint64_t		 gen;		/* api.gen its build began at */
	uint64_t		 used;		/* LRU tick */
	struct api_blob		*body;		/* NULL until built */
	char			 etag[48];
	int			 building;
	uint64_t		 build_gen;
	struct api_request	*waiters;
};

struct api {
	struct server	*s;
	struct daemon	*d;
	char		 token[65];		/* 64 hex digits */
	char		 token_path[PATH_MAX + 32];
	char		 settings_path[PATH_MAX + 32];
	char		 page_root[PATH_MAX];	/* realpath, "" if none */
	const char	*page_why;		/* how page_root was found */
	char		 loop[16];		/* settings.json's loop, "" none */
	uint64_t	 settings_seq, settings_applied;
	unsigned	 conns;			/* open connections */
	uint64_t	 requests, refused, busy;
	uint64_t	 gen;			/* perf/fixes changes seen */
	uint64_t	 tick;
	struct api_snap	 snaps[API_SNAPS];
	uint64_t	 snap_builds;
	struct api_job	*jobs;			/* in flight */
	struct lws	*sync_wsi;		/* in its LWS_CALLBACK_HTTP */
};

/* Set up the server-wide state: token (created at first start),
 * settings.json (applied to d->cfg), the panel's directory.  0 or
 * -errno, logged. */
int	api_init(struct api *a, struct server *s, struct daemon *d);
/* Orphan the jobs in flight (their results are dropped when they come
 * back) and free the cached bodies.  Accepts a zeroed struct. */
void	api_free(struct api *a);
/* Server-wide limits (header size, connections, timeouts). */
void	api_tune(struct api *a, struct lws_context_creation_info *info);
/* Refuse to run on anything but the configured address: libwebsockets
 * binds the wildcard when it cannot resolve the interface.  0 or
 * -EADDRNOTAVAIL, logged. */
int	api_check_bound(struct api *a, const char *host, int port);

/* perf.jsonl or fixes.jsonl changed (a line, a skip, a new generation):
 * the cached /ledger bodies are stale. */
void	api_ledger_changed(struct api *a);
/* After a SIGHUP reload: settings.json's loop level wins over the
 * config's. */
void	api_settings_apply(struct api *a);

/* Connection accounting (LWS_CALLBACK_WSI_CREATE / _DESTROY). */
void	api_conn_open(struct api *a);
void	api_conn_close(struct api *a);
/* A WebSocket upgrade: refuse (answering it) unless the path, Host and
 * Origin pass.  Returns what LWS_CALLBACK_HTTP_CONFIRM_UPGRADE returns. */
int	api_confirm_upgrade(struct api *a, struct lws *wsi, const char *up);
/* The same check, for the FILTER_PROTOCOL_CONNECTION belt: 1 allowed. */
int	api_ws_allowed(struct api *a, struct lws *wsi);

int	api_http(struct api *a, struct lws *wsi, struct api_request *r,
	    const char *uri);
int	api_http_body(struct api *a, struct lws *wsi, struct api_request *r,
	    const void *in, size_t len);
int	api_http_body_done(struct api *a, struct lws *wsi,
	    struct api_request *r);
int	api_http_writeable(struct api *a, struct lws *wsi,
	    struct api_request *r);
/* The connection closed: drop the response, orphan its job. */
void	api_request_free(struct api *a, struct api_request *r);

#endif
