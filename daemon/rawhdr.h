/*
 * rawhdr — HTTP/1.x request header blocks as they came off a socket,
 * parsed strictly (RFC 9112 §2.2, §3, §5), so the guard can check that
 * libwebsockets understood the headers the client really sent.
 *
 * Why: libwebsockets 4.1.6's header parser loses or mis-files headers in
 * ways the daemon cannot see through its API (docs/api.md, "Headers
 * libwebsockets misreads"): a header whose name is a prefix of one it
 * knows swallows the next line, so `Acc: a` followed by `Origin: …` hides
 * the Origin; a space before the colon makes `Transfer-Encoding : chunked`
 * an unknown header; a NUL inside a value cuts what the guard reads short.
 * The daemon sees every byte lws reads (daemon/tap.h) and feeds them here:
 * each request's header block is checked against the grammar, and its
 * fields are kept for the guard to compare with what lws parsed.
 *
 * Framing follows the requests on a connection: after a header block, a
 * Content-Length body is skipped; a Transfer-Encoding, an Upgrade or a
 * malformed block end the HTTP framing (the daemon refuses chunked bodies
 * and closes, and an upgrade turns into WebSocket frames), and nothing
 * after is parsed.  Each block says where in the stream its request ends
 * (after its body), and the parser how many bytes it was fed: what was
 * read beyond a request's end is a next request already in
 * libwebsockets' buffers (daemon/api.c will not keep such a connection
 * alive after a request with a body).  Pure: no I/O, no state outside
 * the struct.
 */
#ifndef DAEMON_RAWHDR_H
#define DAEMON_RAWHDR_H

#include <stddef.h>
#include <stdint.h>

#define RAWHDR_BLOCK_MAX	(16u << 10)	/* a longer block is refused */
#define RAWHDR_FIELDS_MAX	96
#define RAWHDR_PENDING		4		/* blocks ahead of their reader */

/* One field: name (lowercased) and value (outer whitespace trimmed), as
 * offsets into the block; `lead` is the value with only its leading
 * whitespace trimmed (libwebsockets keeps trailing whitespace of headers
 * it does not know). */
struct rawhdr_field {
	uint16_t	 name, nlen;
	uint16_t	 value, vlen;
	uint16_t	 lead_len;
};

/* One request's header block. */
struct rawhdr_req {
	const char		*bad;	/* NULL: well-formed; else why not */
	/* not NULL: the bytes could not be seen (daemon/tap.h, macOS), why;
	 * there is no block and nothing for the guard to compare */
	const char		*unchecked;
	char			*block;	/* request line and fields, NUL-ended */
	size_t			 len;
	uint16_t		 method_len;
	struct rawhdr_field	 f[RAWHDR_FIELDS_MAX];
	size_t			 nf;
	/* the stream offset just past the request: its block and its
	 * Content-Length body (0 when the framing was lost at it) */
	uint64_t		 end;
	int			 has_body;	/* a Content-Length above 0 */
};

struct rawhdr {
	int			 state;
	char			*buf;	/* the block being gathered */
	size_t			 len, cap;
	uint64_t		 body_left;
	uint64_t		 pos;	/* bytes framed so far */
	uint64_t		 fed;	/* bytes fed in all */
	struct rawhdr_req	 q[RAWHDR_PENDING];
	size_t			 qhead, qlen;
	const char		*lost;	/* framing lost, or too many ahead */
};

void	rawhdr_init(struct rawhdr *h);
/* Frees what is held, pending blocks included. */
void	rawhdr_free(struct rawhdr *h);
/* Bytes read from the socket, in order.  Can't fail: out of memory, the
 * framing is marked lost, and later requests are refused. */
void	rawhdr_feed(struct rawhdr *h, const char *p, size_t n);
/*
 * The oldest complete header block not taken yet, into *out (free it with
 * rawhdr_req_free).  0; or -ENOENT when none is complete — then, if the
 * framing was lost, *out is a bad block saying why.
 */
int	rawhdr_take(struct rawhdr *h, struct rawhdr_req *out);
void	rawhdr_req_free(struct rawhdr_req *q);

/* The value of the first field named `name` (lowercase): its length, or
 * -1 when there is none; *v points into the block. */
int	rawhdr_get(const struct rawhdr_req *q, const char *name,
	    const char **v);

#endif
